//! `fedbounds explain CLAIM`: one claim as a reader of its paper needs it, from its card alone —
//! the statement and source lines, the assumptions and conditions as printed, the reading encoded
//! (flagged when it is a variant), the formula as encoded (bound, scope, conditions, conditions the
//! proof uses but the statement omits), and the card's readings of the paper's inconsistencies
//! that concern the claim.

use std::fmt::Write as _;

use crate::card::{ClaimCard, InconsistencyCard};
use crate::family::ClaimSummary;

/// The id a variant belongs to: `X-T1` for `X-T1~other-reading`.
fn base_id(id: &str) -> &str {
    id.split('~').next().unwrap_or(id)
}

/// Whether an inconsistency concerns the claim: its variant is one of the claim's readings, or its
/// text names the claim (or the claim it is a reading of).
fn concerns(i: &InconsistencyCard, id: &str) -> bool {
    let base = base_id(id);
    i.variant.as_deref().is_some_and(|v| base_id(v) == base) || [&i.summary, &i.encoded].iter().any(|t| t.contains(base))
}

/// The text `explain` prints for `summary` (the claim as the family registers it), `card` (its
/// card entry, when the card has one) and the card's inconsistencies, of which those that concern
/// the claim are shown.
pub fn explain(family: &str, summary: &ClaimSummary, card: Option<&ClaimCard>, inconsistencies: &[&InconsistencyCard]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} ({family}): {}", summary.id, summary.title);
    let _ = writeln!(s, "source: {}", summary.source);
    if !summary.statement.is_empty() {
        let _ = writeln!(s, "\nstatement:\n{}", indent(summary.statement.trim_end()));
    }
    let _ = writeln!(s, "\nmetric: {}", summary.metric);
    let flag = if summary.reading.is_variant { " (a flagged variant, not the reading the proof supports)" } else { "" };
    let _ = writeln!(s, "reading `{}`{flag}: {}", summary.reading.name, summary.reading.description);
    if let Some(c) = card {
        list(&mut s, "assumptions", &c.assumptions);
        list(&mut s, "conditions, as printed", &c.conditions);
        if let Some(f) = &c.formula {
            let _ = writeln!(s, "\nas encoded (formula):");
            for l in &f.lets {
                let _ = writeln!(s, "  let {l}");
            }
            for (what, text) in [("bound", &f.bound), ("lhs", &f.lhs), ("rhs", &f.rhs)] {
                if let Some(t) = text {
                    let _ = writeln!(s, "  {what} = {t}");
                }
            }
            list(&mut s, "  scope (not applicable outside)", &f.scope);
            list(&mut s, "  conditions (not applicable when one fails)", &f.conditions);
            list(&mut s, "  implicit (used by the proof, not stated; reported, never binding)", &f.implicit);
        }
        if let Some(t) = &c.tightness {
            let _ = writeln!(s, "\nno scenario with slack below 2: {t}");
        }
    }
    let related: Vec<&InconsistencyCard> = inconsistencies.iter().copied().filter(|i| concerns(i, summary.id)).collect();
    if related.is_empty() {
        let _ = writeln!(s, "\nno inconsistency of the card concerns this claim ({} listed for the paper)", inconsistencies.len());
    }
    for i in related {
        let _ = writeln!(s, "\ninconsistency {}: {}", i.id, i.summary);
        let _ = writeln!(s, "  encoded: {}", i.encoded);
        if let Some(v) = &i.variant {
            let _ = writeln!(s, "  other reading: {v}");
        }
        if !i.checkable {
            let _ = writeln!(s, "  not checkable: {}", i.reason.as_deref().unwrap_or("no reason given"));
        }
    }
    s
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}

fn list(s: &mut String, heading: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(s, "{}{heading}:", if heading.starts_with(' ') { "" } else { "\n" });
    for item in items {
        let _ = writeln!(s, "  - {item}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inconsistency(variant: Option<&str>, summary: &str) -> InconsistencyCard {
        InconsistencyCard {
            id: "I-1".into(),
            summary: summary.into(),
            encoded: "as printed".into(),
            variant: variant.map(Into::into),
            checkable: true,
            reason: None,
        }
    }

    #[test]
    fn an_inconsistency_concerns_the_claims_it_names_or_reads() {
        assert!(concerns(&inconsistency(Some("X-T1~other"), "a typo"), "X-T1"));
        assert!(concerns(&inconsistency(None, "X-T1 divides by zero"), "X-T1~variant"));
        // Negative control: another claim's inconsistency is not shown.
        assert!(!concerns(&inconsistency(Some("X-T2~other"), "about X-T2"), "X-T1"));
    }
}
