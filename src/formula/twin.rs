//! Every built-in bound and condition is written twice, as Rust and as a formula in its card; this
//! compares the two encodings on given inputs and says which claim, which field and which term
//! disagree.
//!
//! A family gives a [`TwinTable`]: its symbols, how to read their values from its inputs, and for
//! each claim the built-in functions of each field (`bound`, `lhs`, `rhs`, `let.NAME`) and of its
//! condition list. [`compare`] then needs only the card entries and sample inputs.

use crate::card::ClaimCard;
use crate::claim::{ConditionCheck, ConditionKind};

use super::claim::ClaimFormulas;
use super::compile::Symbol;

/// Relative agreement required of the two encodings.
pub use crate::prec::formula::TWIN_AGREEMENT as RELATIVE_AGREEMENT;

/// One field of a claim computed by built-in code.
pub struct Twin<I> {
    /// Claim id.
    pub claim: &'static str,
    /// `bound`, `lhs`, `rhs` or `let.NAME`.
    pub field: &'static str,
    /// The built-in value.
    pub builtin: fn(&I) -> f64,
}

/// A claim's built-in condition list (its assumption-kind checks are left out of the comparison:
/// they come from the instance, not from a formula).
pub struct ConditionTwin<I> {
    /// Claim id.
    pub claim: &'static str,
    /// The built-in checks.
    pub builtin: fn(&I) -> Vec<ConditionCheck>,
}

/// What a family declares so its claims' formulas can be checked against its Rust.
pub struct TwinTable<I: 'static> {
    /// The family's symbols.
    pub symbols: &'static [Symbol],
    /// Their values at given inputs (NaN where a constant has no finite value).
    pub values: fn(&I) -> Vec<f64>,
    /// Built-in fields.
    pub fields: Vec<Twin<I>>,
    /// Built-in condition lists.
    pub conditions: Vec<ConditionTwin<I>>,
}

/// Whether `a` and `b` agree to [`RELATIVE_AGREEMENT`] relative to `scale` (the largest of the
/// two and of the sum of the magnitudes of the formula's terms, so that a sum with cancellation
/// is judged by its parts); equal infinities and two NaNs agree.
pub fn agree(a: f64, b: f64, scale: f64) -> bool {
    if a == b || (a.is_nan() && b.is_nan()) {
        return true;
    }
    let s = a.abs().max(b.abs()).max(scale);
    (a - b).abs() <= RELATIVE_AGREEMENT * s
}

/// Compiles the formula of every card entry that has one.
///
/// # Errors
/// A formula that does not compile (naming claim, field and position).
pub fn compile_cards(cards: &[ClaimCard], symbols: &'static [Symbol]) -> crate::Result<Vec<ClaimFormulas>> {
    cards.iter().filter_map(|c| c.formula.as_ref().map(|f| ClaimFormulas::compile(&c.id, f, symbols))).collect()
}

/// The disagreement of a field, diagnosed: the term of the formula whose value the difference is
/// a constant multiple of across the samples (a changed coefficient or sign), or the one it
/// tracks best (a changed power).
fn diagnose(f: &ClaimFormulas, field: &str, bad: &[(Vec<f64>, f64, f64)]) -> String {
    let Some((values, _, _)) = bad.first() else { return String::new() };
    let terms0 = f.terms(field, values);
    if terms0.len() < 2 {
        return String::new();
    }
    let mut best: Option<(f64, usize, f64)> = None;
    for (k, _) in terms0.iter().enumerate() {
        let ratios: Vec<f64> = bad
            .iter()
            .filter_map(|(v, builtin, formula)| {
                let terms = f.terms(field, v);
                let scale: f64 = terms.iter().map(|t| t.1.abs()).sum();
                let t = terms.get(k)?.1;
                // Where the term is negligible, the difference is rounding, not the term.
                (t.is_finite() && t.abs() > crate::prec::formula::NEGLIGIBLE_TERM * scale).then(|| (builtin - formula) / t)
            })
            .collect();
        if ratios.is_empty() {
            continue;
        }
        let mut sorted = ratios.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let spread = ratios.iter().map(|r| (r - median).abs()).fold(0.0, f64::max) / median.abs().max(f64::MIN_POSITIVE);
        if best.is_none_or(|b| spread < b.0) {
            best = Some((spread, k, median));
        }
    }
    match best {
        Some((spread, k, ratio)) if spread < crate::prec::formula::CONSTANT_RATIO_SPREAD => format!(
            "; the difference is {} times term {} `{}` on every sample: the term's coefficient or sign differs between the encodings",
            crate::claim::fmt_num(ratio),
            k + 1,
            terms0[k].0
        ),
        Some((_, k, _)) => format!("; the difference tracks term {} `{}` best (a power or a factor inside it?)", k + 1, terms0[k].0),
        None => String::new(),
    }
}

/// Compares every twin of `table` on `samples`; returns one message per disagreement (empty when
/// the encodings agree), and also reports a claim of the table without a formula, or a field the
/// formula lacks.
pub fn compare<I>(table: &TwinTable<I>, formulas: &[ClaimFormulas], samples: &[I]) -> Vec<String> {
    let mut out = Vec::new();
    let find = |id: &str| formulas.iter().find(|f| f.claim == id);
    for twin in &table.fields {
        let Some(f) = find(twin.claim) else {
            out.push(format!("{}: no formula in its card (field `{}` is built in)", twin.claim, twin.field));
            continue;
        };
        if f.compiled(twin.field).is_none() {
            out.push(format!("{}: the card's formula has no `{}`", twin.claim, twin.field));
            continue;
        }
        let mut bad = Vec::new();
        let code = &f.compiled(twin.field).map(|c| c.code.clone());
        for x in samples {
            let values = (table.values)(x);
            // A field that reads a constant without a finite value is not compared (its claim is
            // not applicable there; the condition lists below are compared on every sample).
            let missing = f.unavailable(&values);
            if code.as_ref().is_some_and(|c| missing.iter().enumerate().any(|(i, m)| *m && c.reads(i))) {
                continue;
            }
            let builtin = (twin.builtin)(x);
            let formula = f.field(twin.field, &values).unwrap_or(f64::NAN);
            let scale: f64 = f.terms(twin.field, &values).iter().map(|t| t.1.abs()).sum();
            if !agree(builtin, formula, scale) {
                bad.push((values, builtin, formula));
            }
        }
        if let Some((_, b, v)) = bad.first() {
            out.push(format!(
                "{} `{}`: built-in {} vs formula {} on {} of {} samples (formula `{}`){}",
                twin.claim,
                twin.field,
                b,
                v,
                bad.len(),
                samples.len(),
                f.compiled(twin.field).map_or("", |c| c.text.as_str()),
                diagnose(f, twin.field, &bad)
            ));
        }
    }
    for twin in &table.conditions {
        let Some(f) = find(twin.claim) else {
            out.push(format!("{}: no formula in its card (its conditions are built in)", twin.claim));
            continue;
        };
        for x in samples {
            let values = (table.values)(x);
            let builtin: Vec<ConditionCheck> = (twin.builtin)(x).into_iter().filter(|c| c.kind != ConditionKind::Assumption).collect();
            let formula = f.checks(&values);
            if let Some(msg) = compare_checks(&builtin, &formula) {
                out.push(format!("{} conditions: {msg}", twin.claim));
                break;
            }
        }
    }
    out
}

fn compare_checks(builtin: &[ConditionCheck], formula: &[ConditionCheck]) -> Option<String> {
    if builtin.len() != formula.len() {
        let names = |v: &[ConditionCheck]| v.iter().map(|c| c.name.clone()).collect::<Vec<_>>().join("; ");
        return Some(format!("{} built-in checks [{}] vs {} formula checks [{}]", builtin.len(), names(builtin), formula.len(), names(formula)));
    }
    for (i, (b, f)) in builtin.iter().zip(formula).enumerate() {
        let what = if b.kind != f.kind {
            Some(format!("kind {:?} vs {:?}", b.kind, f.kind))
        } else if b.relation != f.relation {
            Some(format!("relation {:?} vs {:?}", b.relation, f.relation))
        } else if !agree(b.given, f.given, 0.0) {
            Some(format!("given {} vs {}", b.given, f.given))
        } else if !agree(b.required, f.required, 0.0) {
            Some(format!("required {} vs {}", b.required, f.required))
        } else if b.holds != f.holds {
            Some(format!("holds {} vs {}", b.holds, f.holds))
        } else {
            None
        };
        if let Some(w) = what {
            return Some(format!("check {} (built-in `{}`, formula `{}`): {w}", i + 1, b.name, f.name));
        }
    }
    None
}
