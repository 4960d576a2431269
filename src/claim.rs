//! What every claim shares: its identity, the checks of its assumptions and conditions, and its
//! bound as a function of the family's inputs.
//!
//! A claim never sees a run. It maps its family's inputs (exact constants of the instance, the
//! algorithm's parameters, the horizon `T`) to a bound and to a list of checks, each of which
//! carries the required and the given value, so a verdict of "not applicable" says by how much.

use serde::Serialize;
use std::fmt;

use crate::prec;

/// How a condition compares the given value with the required one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// given <= required (a tie up to [`prec::CONDITION_TIE`] holds)
    AtMost,
    /// given >= required (a tie up to [`prec::CONDITION_TIE`] holds)
    AtLeast,
    /// given = required (up to [`prec::RELATIVE_IDENTITY`])
    Equal,
    /// given < required, strictly (a tie up to [`prec::CONDITION_TIE`] fails)
    Below,
    /// given > required, strictly (a tie up to [`prec::CONDITION_TIE`] fails)
    Above,
}

/// One checked assumption, scope restriction or step-size condition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionCheck {
    /// What is compared, in the paper's words, e.g. `gamma <= 1/(32 L K)`.
    pub name: String,
    /// Kind: assumption, scope, step-size, or implicit (a condition the proof uses but the
    /// statement omits; reported, never a reason for "not applicable").
    pub kind: ConditionKind,
    /// The quantity's given value.
    pub given: f64,
    /// The bound it must respect.
    pub required: f64,
    /// The comparison.
    pub relation: Relation,
    /// Whether it holds.
    pub holds: bool,
    /// Free-text detail (e.g. why an assumption fails).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Whether floating point cannot decide the comparison: the rounding of its sides (a
    /// constant computed with a known error bound, [`ConditionCheck::compare_bracketed`]) admits
    /// either outcome. `holds` is then false, and a claim whose only failing binding checks are
    /// undecided is inconclusive, not "not applicable" ([`crate::verdict::inapplicable`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub undecided: bool,
}

/// What a [`ConditionCheck`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConditionKind {
    /// An assumption of the theorem on the instance (e.g. bounded dissimilarity).
    Assumption,
    /// The setting the claim is about (e.g. `m = n`, no personal variable).
    Scope,
    /// A step-size or parameter condition stated by the theorem.
    StepSize,
    /// A condition the proof needs but the statement does not print.
    Implicit,
}

impl ConditionCheck {
    /// A numeric comparison.
    pub fn compare(name: impl Into<String>, kind: ConditionKind, given: f64, relation: Relation, required: f64) -> Self {
        let holds = match relation {
            Relation::AtMost => prec::le_tol(given, required),
            Relation::AtLeast => prec::ge_tol(given, required),
            Relation::Below => prec::lt_strict(given, required),
            Relation::Above => prec::gt_strict(given, required),
            // An equality with an exact zero is often on a constant zero in real arithmetic
            // (`Lambda = 0`) computed with rounding at its inputs' scale: see `approx_eq_floored`.
            // Any other equality (`gamma_u eta_u = gamma_v eta_v`, a prescribed step) is relative.
            Relation::Equal if given == 0.0 || required == 0.0 => prec::approx_eq_floored(given, required, prec::RELATIVE_IDENTITY),
            Relation::Equal => prec::approx_eq(given, required, prec::RELATIVE_IDENTITY),
        };
        Self { name: name.into(), kind, given, required, relation, holds, detail: String::new(), undecided: false }
    }

    /// A comparison whose sides are known only to within their rounding: `given` lies in
    /// `given_range` and `required` in `required_range` (each range holds its point value).
    /// Decided as [`Self::compare`] at the corner least favourable to the condition (then it
    /// holds whatever the exact values are) and at the most favourable one (then it fails
    /// whatever they are); where the two corners disagree the check is undecided: `holds` is
    /// false, [`Self::undecided`] true, and its detail gives both ranges. An equality is compared
    /// at its point values only.
    ///
    /// # Formula
    /// For `<=` and `<`: holds if `hi(given) R lo(required)`, fails unless `lo(given) R
    /// hi(required)`; for `>=` and `>` the same with the ends exchanged.
    pub fn compare_bracketed(
        name: impl Into<String>,
        kind: ConditionKind,
        (given, given_range): (f64, (f64, f64)),
        relation: Relation,
        (required, required_range): (f64, (f64, f64)),
    ) -> Self {
        let name = name.into();
        let at = |g: f64, r: f64| Self::compare("", kind, g, relation, r).holds;
        let ((g_lo, g_hi), (r_lo, r_hi)) = (given_range, required_range);
        let (worst, best) = match relation {
            Relation::AtMost | Relation::Below => ((g_hi, r_lo), (g_lo, r_hi)),
            Relation::AtLeast | Relation::Above => ((g_lo, r_hi), (g_hi, r_lo)),
            Relation::Equal => ((given, required), (given, required)),
        };
        let point = Self::compare(name, kind, given, relation, required);
        if at(worst.0, worst.1) || !at(best.0, best.1) {
            // Decided: both corners agree (a NaN corner never holds, so NaN is never "holds").
            return Self { holds: at(worst.0, worst.1), ..point };
        }
        let (num, pair) = (fmt_num, |lo: f64, hi: f64| format!("[{}, {}]", fmt_num(lo), fmt_num(hi)));
        let detail = format!(
            "not decided in floating point: the rounding of its sides leaves given in {} (computed {}) and required in {} (computed {}), which admits either outcome",
            pair(g_lo, g_hi),
            num(given),
            pair(r_lo, r_hi),
            num(required)
        );
        Self { holds: false, undecided: true, detail, ..point }
    }

    /// A condition that cannot be evaluated here (`why`): it fails, with both sides NaN.
    pub fn unevaluated(name: impl Into<String>, kind: ConditionKind, relation: Relation, why: impl Into<String>) -> Self {
        Self { name: name.into(), kind, given: f64::NAN, required: f64::NAN, relation, holds: false, detail: why.into(), undecided: false }
    }

    /// Whether this check could not be evaluated ([`Self::unevaluated`]).
    pub fn is_unevaluated(&self) -> bool {
        self.kind != ConditionKind::Assumption && !self.holds && self.given.is_nan() && self.required.is_nan() && !self.detail.is_empty()
    }

    /// An assumption that holds or fails as a whole (given/required are 1/0 flags).
    pub fn assumption(name: impl Into<String>, holds: bool, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind: ConditionKind::Assumption,
            given: if holds { 1.0 } else { 0.0 },
            required: 1.0,
            relation: Relation::Equal,
            holds,
            detail: detail.into(),
            undecided: false,
        }
    }

    /// Whether a failure of this check makes the claim not applicable.
    pub fn is_binding(&self) -> bool {
        self.kind != ConditionKind::Implicit
    }
}

impl fmt::Display for ConditionCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == ConditionKind::Assumption {
            let state = if self.holds { "holds" } else { "fails" };
            return if self.detail.is_empty() { write!(f, "{} {state}", self.name) } else { write!(f, "{} {state}: {}", self.name, self.detail) };
        }
        if self.is_unevaluated() {
            return write!(f, "{}: cannot be evaluated ({})", self.name, self.detail);
        }
        if self.undecided {
            return write!(f, "{}: {}", self.name, self.detail);
        }
        let op = match (self.relation, self.holds) {
            (Relation::AtMost, true) => "<=",
            (Relation::AtMost, false) => ">",
            (Relation::AtLeast, true) => ">=",
            (Relation::AtLeast, false) => "<",
            (Relation::Equal, true) => "=",
            (Relation::Equal, false) => "!=",
            (Relation::Below, true) => "<",
            (Relation::Below, false) => ">=",
            (Relation::Above, true) => ">",
            (Relation::Above, false) => "<=",
        };
        let (given, required) = fmt_pair(self.given, self.required);
        write!(f, "{}: given {given} {op} required {required}", self.name)
    }
}

/// Two numbers compared in one message: as [`fmt_num`], or, where that prints two different
/// numbers alike (`given 0.003125 > required 0.003125`), each in full, the shortest digits that
/// read back as it (`3.12500000625e-3` against `3.125e-3`).
pub fn fmt_pair(a: f64, b: f64) -> (String, String) {
    let (x, y) = (fmt_num(a), fmt_num(b));
    if x == y && a.to_bits() != b.to_bits() {
        (format!("{a:e}"), format!("{b:e}"))
    } else {
        (x, y)
    }
}

/// Compact number formatting for messages.
pub fn fmt_num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e5).contains(&x.abs()) {
        let s = format!("{x:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{x:.4e}")
    }
}

/// The reading of a statement a claim encodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    /// `primary` for the reading the proof supports, else the variant's name.
    pub name: &'static str,
    /// Whether this is a flagged variant (an alternative reading of an inconsistent statement).
    pub is_variant: bool,
    /// What the reading is and why.
    pub description: &'static str,
}

impl Reading {
    /// The reading the proof supports.
    pub const fn primary(description: &'static str) -> Self {
        Self { name: "primary", is_variant: false, description }
    }

    /// A flagged variant `name`.
    pub const fn variant(name: &'static str, description: &'static str) -> Self {
        Self { name, is_variant: true, description }
    }
}

/// A claim's identity as one value: a family declares each claim once (one table row) and its
/// [`BoundClaim`] identity methods and its [`crate::family::ClaimSummary`] read that row.
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    /// ID as in CLAIMS.md; variants append `~name`.
    pub id: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// Source lines in the paper text.
    pub source: &'static str,
    /// Which reading this is.
    pub reading: Reading,
    /// The metric bounded, or the inequality, in ASCII math.
    pub metric: &'static str,
}

/// Inputs of a claim at a horizon `T`: the same inputs can be re-evaluated at every prefix.
pub trait Horizon: Copy {
    /// `T`.
    fn horizon(&self) -> usize;
    /// The same inputs at horizon `t`.
    fn at_horizon(&self, t: usize) -> Self;
}

/// How a claim's bound is compared with the metric of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// The running average `(1/T') sum_{t<T'} E metric_t` against the bound at `T'`.
    #[default]
    RunningAverage,
    /// The value `E metric_{T'}` itself against the bound at `T'` (per-round statements).
    PerRound,
}

/// An executable bound: identity, checks and bound over a family's inputs.
pub trait BoundClaim: Sync + Send {
    /// What the bound and checks read (constants, parameters, horizon).
    type Inputs: Horizon;
    /// ID as in CLAIMS.md; variants append `~name`.
    fn id(&self) -> &'static str;
    /// One-line title.
    fn title(&self) -> &'static str;
    /// Source lines in the paper text.
    fn source(&self) -> &'static str;
    /// Which reading this is.
    fn reading(&self) -> Reading;
    /// How the bound is compared with a run.
    fn comparison(&self) -> Comparison {
        Comparison::RunningAverage
    }
    /// Whether the bound holds for every prefix `T' <= T` of a run (conditions re-checked at
    /// each `T'`), or only at the horizon `T` itself (e.g. when a step is a function of `T`).
    fn every_prefix(&self) -> bool;
    /// All checks (assumptions, scope, step sizes) at these inputs.
    fn checks(&self, x: &Self::Inputs) -> Vec<ConditionCheck>;
    /// The bound at `T = x.horizon()`.
    fn bound(&self, x: &Self::Inputs) -> f64;
}

/// A claim that is another claim with something beside it (a family's tag, the family's
/// assumption checks): every [`BoundClaim`] method is the inner claim's, except that
/// [`Forwards::first_checks`] come before the inner claim's checks. One forwarding, written here,
/// for every family that wraps a compiled claim.
pub trait Forwards: Sync + Send {
    /// The claim forwarded to.
    type To: BoundClaim + ?Sized;
    /// The claim forwarded to.
    fn to(&self) -> &Self::To;
    /// Checks that come before the inner claim's own (none by default).
    fn first_checks(&self, _x: &<Self::To as BoundClaim>::Inputs) -> Vec<ConditionCheck> {
        Vec::new()
    }
}

impl<F: Forwards> BoundClaim for F {
    type Inputs = <F::To as BoundClaim>::Inputs;
    fn id(&self) -> &'static str {
        self.to().id()
    }
    fn title(&self) -> &'static str {
        self.to().title()
    }
    fn source(&self) -> &'static str {
        self.to().source()
    }
    fn reading(&self) -> Reading {
        self.to().reading()
    }
    fn comparison(&self) -> Comparison {
        self.to().comparison()
    }
    fn every_prefix(&self) -> bool {
        self.to().every_prefix()
    }
    fn checks(&self, x: &Self::Inputs) -> Vec<ConditionCheck> {
        let mut out = self.first_checks(x);
        out.extend(self.to().checks(x));
        out
    }
    fn bound(&self, x: &Self::Inputs) -> f64 {
        self.to().bound(x)
    }
}

/// Claims for the core's unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    /// A horizon and nothing else.
    #[derive(Clone, Copy)]
    pub(crate) struct AtT(pub(crate) usize);
    impl Horizon for AtT {
        fn horizon(&self) -> usize {
            self.0
        }
        fn at_horizon(&self, t: usize) -> Self {
            AtT(t)
        }
    }

    /// `bound = 1/T`, one step condition `T >= 2`.
    pub(crate) struct InverseT;
    impl BoundClaim for InverseT {
        type Inputs = AtT;
        fn id(&self) -> &'static str {
            "INV-T"
        }
        fn title(&self) -> &'static str {
            "1/T"
        }
        fn source(&self) -> &'static str {
            "L1"
        }
        fn reading(&self) -> Reading {
            Reading::primary("as printed")
        }
        fn every_prefix(&self) -> bool {
            true
        }
        fn checks(&self, x: &AtT) -> Vec<ConditionCheck> {
            vec![ConditionCheck::compare("T >= 2", ConditionKind::Scope, x.0 as f64, Relation::AtLeast, 2.0)]
        }
        fn bound(&self, x: &AtT) -> f64 {
            1.0 / x.0 as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{AtT, InverseT};
    use super::*;

    struct Tagged<'a>(&'a InverseT, bool);
    impl Forwards for Tagged<'_> {
        type To = InverseT;
        fn to(&self) -> &InverseT {
            self.0
        }
        fn first_checks(&self, _x: &AtT) -> Vec<ConditionCheck> {
            vec![ConditionCheck::assumption("family assumption", self.1, "")]
        }
    }

    #[test]
    fn an_equality_is_relative_except_against_an_exact_zero() {
        let eq = |given: f64, required: f64| ConditionCheck::compare("c", ConditionKind::StepSize, given, Relation::Equal, required).holds;
        // A prescribed step of 3e-10 is not met by 1.3e-9, nor gamma_u eta_u = 1e-10 by 5e-10:
        // the floor max(|a|, |b|, 1) had called both equal.
        assert!(!eq(1.3e-9, 3e-10) && !eq(1e-10, 5e-10));
        // Controls: equal to rounding at any scale; a constant zero in real arithmetic computed
        // as 1.6e-31 meets `= 0` (the floor, only against an exact zero).
        assert!(eq(3e-10 * (1.0 + 1e-12), 3e-10) && eq(1e12, 1e12 + 1.0) && eq(1.6e-31, 0.0));
        assert!(!eq(1e-3, 0.0) && !eq(f64::NAN, 0.0));
    }

    #[test]
    fn a_strict_inequality_fails_at_its_boundary() {
        let check = |given: f64, relation: Relation, required: f64| ConditionCheck::compare("c", ConditionKind::StepSize, given, relation, required);
        // A step set at 1/L_g by a formula (equal in real arithmetic, off by rounding) is outside
        // `gamma < 1/L_g`; read as `<=` it had passed, and at the boundary the claim was compared.
        let boundary = 1.0 / 3.0;
        assert!(!check(boundary, Relation::Below, boundary).holds && !check(boundary * (1.0 - 1e-15), Relation::Below, boundary).holds);
        assert!(!check(2.0, Relation::Above, 2.0).holds && !check(2.0 * (1.0 + 1e-13), Relation::Above, 2.0).holds);
        assert!(!check(f64::NAN, Relation::Below, 1.0).holds && !check(1.0, Relation::Above, f64::NAN).holds);
        // Controls: the non-strict relations admit the same boundary; values inside hold.
        assert!(check(boundary * (1.0 - 1e-15), Relation::AtMost, boundary).holds && check(2.0, Relation::AtLeast, 2.0).holds);
        assert!(check(0.3, Relation::Below, boundary).holds && check(2.1, Relation::Above, 2.0).holds && check(-1e-300, Relation::Below, 0.0).holds);
        assert_eq!(check(boundary, Relation::Below, boundary).to_string(), "c: given 0.333333 >= required 0.333333");
        // A value just inside a strict bound passes it.
        for (v, below) in [(boundary, true), (2.0, false), (0.0, true), (-5.0, false), (1e-320, true), (-1e-320, false)] {
            let inside = crate::prec::strictly_inside(v, below);
            assert!(check(inside, if below { Relation::Below } else { Relation::Above }, v).holds, "{v} {below}");
        }
        assert_eq!(crate::prec::strictly_inside(f64::INFINITY, true), f64::INFINITY, "no NaN from inf - inf");
    }

    #[test]
    fn a_forwarding_claim_is_its_inner_claim_with_its_own_checks_first() {
        let inner = InverseT;
        let tagged = Tagged(&inner, false);
        assert_eq!((tagged.id(), tagged.title(), tagged.source()), ("INV-T", "1/T", "L1"));
        assert_eq!(tagged.bound(&AtT(4)), 0.25);
        let names: Vec<String> = tagged.checks(&AtT(1)).into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["family assumption", "T >= 2"]);
        // Control: the wrapper's failing assumption is what tells it apart from the inner claim.
        assert!(inner.checks(&AtT(4)).iter().all(|c| c.holds));
        assert!(!tagged.checks(&AtT(4))[0].holds);
    }
}

#[cfg(test)]
mod number_tests {
    use super::*;

    #[test]
    fn two_numbers_that_print_alike_are_shown_in_full() {
        let c = ConditionCheck::compare("gamma <= 1/(32 L K)", ConditionKind::StepSize, 0.00312500000625, Relation::AtMost, 0.003125);
        assert_eq!(c.to_string(), "gamma <= 1/(32 L K): given 3.12500000625e-3 > required 3.125e-3");
        // Controls: numbers that print apart, and equal numbers, keep the compact form.
        assert_eq!(fmt_pair(0.0032, 0.003125), ("0.0032".to_string(), "0.003125".to_string()));
        assert_eq!(fmt_pair(1.0, 1.0), ("1".to_string(), "1".to_string()));
    }
}

#[cfg(test)]
mod bracket_tests {
    use super::*;

    fn bracketed(given: (f64, f64), relation: Relation, required: f64) -> ConditionCheck {
        let mid = (given.0 + given.1) / 2.0;
        ConditionCheck::compare_bracketed("x <= y", ConditionKind::StepSize, (mid, given), relation, (required, (required, required)))
    }

    /// A comparison is decided where its whole range agrees, undecided where the range straddles
    /// the boundary; NaN never holds (the verdict it gives: `verdict::tests`).
    #[test]
    fn a_range_that_straddles_the_boundary_is_undecided() {
        let straddles = bracketed((0.9, 1.1), Relation::AtMost, 1.0);
        assert!(!straddles.holds && straddles.undecided, "{straddles:?}");
        assert!(straddles.to_string().contains("not decided in floating point"), "{straddles}");
        // Controls: a range wholly inside holds, wholly outside fails, both decided.
        let inside = bracketed((0.8, 0.95), Relation::AtMost, 1.0);
        assert!(inside.holds && !inside.undecided);
        let outside = bracketed((1.05, 1.2), Relation::AtMost, 1.0);
        assert!(!outside.holds && !outside.undecided);
        // The other direction exchanges the ends.
        assert!(bracketed((1.05, 1.2), Relation::AtLeast, 1.0).holds);
        assert!(bracketed((0.9, 1.1), Relation::Above, 1.0).undecided);
        // NaN is never "holds", and is decided as a failure (never a tie).
        let nan = bracketed((f64::NAN, f64::NAN), Relation::AtMost, 1.0);
        assert!(!nan.holds && !nan.undecided);
    }
}
