//! Summaries a person reads at a glance: one line per claim (and per constants source) with its
//! verdicts over the scenarios in its setting, the tightest slack and where, the reasons it was
//! not applicable, and the disagreements with the cards first, each with the command that replays
//! it. Shared by every family: built from [`VerdictRow`]s only.
//!
//! A row whose only failing conditions are of kind `scope` is about another setting (a
//! full-participation claim on a partial-participation scenario): it is counted, not shown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::claim::{fmt_num, ConditionKind};
use crate::family::{ClaimSummary, VerdictRow};
use crate::report::{describe, opt_num, reproduce_command};
use crate::verdict::{ConstantsSource, VerdictKind};

impl VerdictRow {
    /// Whether the row is about another setting than the claim's (a scope condition fails):
    /// whatever else fails there, the claim says nothing about that scenario.
    pub fn out_of_scope(&self) -> bool {
        let e = &self.evaluation;
        e.verdict == VerdictKind::NotApplicable && e.checks.iter().any(|c| c.kind == ConditionKind::Scope && !c.holds)
    }
}

/// The short name of a failed check: its text before the first `": "` (e.g. `gamma <= 1/(32 L K)`),
/// so source citations like `001:L143` stay whole.
fn short_reason(failed: &str) -> String {
    let head = failed.split(": ").next().unwrap_or(failed).trim();
    head.trim_end_matches(" fails").to_string()
}

/// One claim's verdicts over its scenarios, for one constants source.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimLine {
    /// The family.
    pub family: &'static str,
    /// Claim id.
    pub claim: &'static str,
    /// Which constants the verdicts used (only `exact` is the claim as stated).
    pub constants: ConstantsSource,
    /// Verdict counts over the scenarios in the claim's setting.
    pub verdicts: BTreeMap<String, usize>,
    /// Scenarios in the claim's setting.
    pub in_scope: usize,
    /// Scenarios about another setting (counted, not evaluated here).
    pub out_of_scope: usize,
    /// The smallest slack among the holding scenarios, and where.
    pub tightest: Option<(f64, String)>,
    /// Why it was not applicable, with how often.
    pub not_applicable: Vec<(String, usize)>,
}

impl ClaimLine {
    /// `holds 5/5`, or every verdict with its count.
    pub fn verdict_text(&self) -> String {
        if self.in_scope == 0 {
            return "no scenario in its setting".into();
        }
        let order = ["violated", "inconclusive", "holds", "not-applicable"];
        order.iter().filter_map(|v| self.verdicts.get(*v).map(|n| format!("{v} {n}/{}", self.in_scope))).collect::<Vec<_>>().join(", ")
    }

    /// `n/a 3: b^2 infinite x2, gamma > ... x1`, or empty.
    pub fn not_applicable_text(&self) -> String {
        if self.not_applicable.is_empty() {
            return String::new();
        }
        let total: usize = self.verdicts.get("not-applicable").copied().unwrap_or(0);
        let reasons: Vec<String> = self.not_applicable.iter().map(|(r, n)| format!("{r} x{n}")).collect();
        format!("n/a {total}: {}", reasons.join(", "))
    }
}

/// The claim lines of `rows`, in first-seen order of (claim, constants).
pub fn claim_lines(rows: &[&VerdictRow]) -> Vec<ClaimLine> {
    let mut lines: Vec<ClaimLine> = Vec::new();
    for r in rows {
        let idx = match lines.iter().position(|l| l.claim == r.claim && l.constants == r.constants) {
            Some(i) => i,
            None => {
                lines.push(ClaimLine {
                    family: r.family,
                    claim: r.claim,
                    constants: r.constants,
                    verdicts: BTreeMap::new(),
                    in_scope: 0,
                    out_of_scope: 0,
                    tightest: None,
                    not_applicable: Vec::new(),
                });
                lines.len() - 1
            }
        };
        let line = &mut lines[idx];
        if r.out_of_scope() {
            line.out_of_scope += 1;
            continue;
        }
        line.in_scope += 1;
        *line.verdicts.entry(r.evaluation.verdict.to_string()).or_default() += 1;
        match r.evaluation.verdict {
            VerdictKind::Holds => {
                if let Some(s) = r.evaluation.slack.filter(|s| s.is_finite()) {
                    if line.tightest.as_ref().is_none_or(|(t, _)| s < *t) {
                        line.tightest = Some((s, r.scenario.clone()));
                    }
                }
            }
            VerdictKind::NotApplicable => {
                let mut seen = Vec::new();
                for f in &r.evaluation.failed {
                    let reason = short_reason(f);
                    if seen.contains(&reason) {
                        continue;
                    }
                    seen.push(reason.clone());
                    match line.not_applicable.iter_mut().find(|(k, _)| *k == reason) {
                        Some((_, n)) => *n += 1,
                        None => line.not_applicable.push((reason, 1)),
                    }
                }
            }
            _ => {}
        }
    }
    lines
}

/// Rows whose verdict differs from the card, first, then the counterexamples (violated rows).
fn findings(rows: &[&VerdictRow]) -> (Vec<String>, Vec<String>) {
    let label = |r: &VerdictRow| if r.constants.is_exact() { String::new() } else { format!(" ({})", r.label.as_deref().unwrap_or(r.constants.as_str())) };
    let mismatches = rows
        .iter()
        .filter(|r| !r.matches_expected())
        .map(|r| {
            format!(
                "{}{} on {}: {} but the card expects {}; replay: {}",
                r.claim,
                label(r),
                r.scenario,
                r.evaluation.verdict,
                r.expected.map(|v| v.to_string()).unwrap_or_default(),
                reproduce_command(r.claim, &r.scenario)
            )
        })
        .collect();
    // Counterexamples grouped by claim and constants: one line each, with its scenarios and the
    // command that replays the first (the disagreements above carry the full detail).
    let mut groups: Vec<(&str, ConstantsSource, Vec<&str>, bool)> = Vec::new();
    for r in rows.iter().filter(|r| r.evaluation.verdict == VerdictKind::Violated) {
        let expected = r.expected == Some(VerdictKind::Violated);
        match groups.iter_mut().find(|g| g.0 == r.claim && g.1 == r.constants) {
            Some(g) => {
                g.2.push(&r.scenario);
                g.3 &= expected;
            }
            None => groups.push((r.claim, r.constants, vec![&r.scenario], expected)),
        }
    }
    let violations = groups
        .iter()
        .map(|(claim, constants, scenarios, expected)| {
            let which = if constants.is_exact() { String::new() } else { format!(" ({constants})") };
            let note = if *expected { ", as the card expects" } else { "" };
            format!("{claim}{which}: violated on {}{note}; replay: {}", scenarios.join(", "), reproduce_command(claim, scenarios[0]))
        })
        .collect();
    (mismatches, violations)
}

/// Totals over rows: (evaluated, per verdict, out of scope).
fn totals(rows: &[&VerdictRow]) -> (usize, BTreeMap<String, usize>, usize) {
    let mut per = BTreeMap::new();
    let mut out = 0;
    for r in rows {
        if r.out_of_scope() {
            out += 1;
        } else {
            *per.entry(r.evaluation.verdict.to_string()).or_insert(0) += 1;
        }
    }
    (rows.len() - out, per, out)
}

fn totals_text(rows: &[&VerdictRow]) -> String {
    let (evaluated, per, out) = totals(rows);
    let parts: Vec<String> = ["holds", "violated", "inconclusive", "not-applicable"].iter().filter_map(|v| per.get(*v).map(|n| format!("{n} {v}"))).collect();
    format!("{evaluated} claim-scenario pairs evaluated ({}); {out} about another setting, not shown", parts.join(", "))
}

/// The terminal summary: disagreements with the cards and counterexamples first, then one line
/// per claim for each family, then the families' extra tables, then the totals.
pub fn terminal(families: &[(&str, &str, &[VerdictRow], &str)], other_mismatches: &[String]) -> String {
    let all: Vec<&VerdictRow> = families.iter().flat_map(|f| f.2.iter()).collect();
    let (mismatches, violations) = findings(&all);
    let mut s = String::new();
    if !mismatches.is_empty() || !other_mismatches.is_empty() {
        let _ = writeln!(s, "DIFFERS FROM THE CARDS ({})", mismatches.len() + other_mismatches.len());
        for m in mismatches.iter().chain(other_mismatches) {
            let _ = writeln!(s, "  {m}");
        }
        let _ = writeln!(s);
    }
    if !violations.is_empty() {
        let _ = writeln!(s, "COUNTEREXAMPLES ({})", violations.len());
        for v in &violations {
            let _ = writeln!(s, "  {v}");
        }
        let _ = writeln!(s);
    }
    for (id, title, rows, extra) in families {
        let refs: Vec<&VerdictRow> = rows.iter().collect();
        let _ = writeln!(s, "{title} ({id})");
        let _ = writeln!(s, "  {:<38} {:<34} {:<36} not applicable", "claim", "verdicts (scenarios in its setting)", "tightest slack");
        for line in claim_lines(&refs).iter().filter(|l| l.in_scope > 0) {
            let name = if line.constants.is_exact() { line.claim.to_string() } else { format!("  {} ({})", line.claim, line.constants) };
            let tight = line.tightest.as_ref().map(|(v, sc)| format!("{} {sc}", fmt_num(*v))).unwrap_or_else(|| "-".into());
            let _ = writeln!(s, "  {:<38} {:<34} {:<36} {}", name, line.verdict_text(), tight, line.not_applicable_text());
        }
        s.push_str(extra);
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "{}", totals_text(&all));
    s
}

/// `SUMMARY.md`'s per-claim part for one family: for each claim, its statement, source and reading,
/// the verdict line, its figure inline and a link to its page of per-scenario detail.
pub fn markdown_claims(claims: &[ClaimSummary], rows: &[VerdictRow], figures: &[String]) -> String {
    let refs: Vec<&VerdictRow> = rows.iter().collect();
    let lines = claim_lines(&refs);
    let mut s = String::new();
    for c in claims {
        let of_claim: Vec<&ClaimLine> = lines.iter().filter(|l| l.claim == c.id).collect();
        if of_claim.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### {} — {}\n", c.id, c.title);
        if !c.statement.is_empty() {
            let _ = writeln!(s, "Source {}:\n\n```text\n{}\n```\n", c.source, c.statement.trim_end());
        } else {
            let _ = writeln!(s, "Source {}; metric: {}\n", c.source, c.metric);
        }
        if c.reading.is_variant {
            let _ = writeln!(s, "Flagged reading `{}`: {}\n", c.reading.name, c.reading.description);
        }
        for l in of_claim {
            let which = match l.constants {
                ConstantsSource::Exact => "as stated".to_string(),
                other => format!("with {other} constants"),
            };
            let tight = l.tightest.as_ref().map(|(v, sc)| format!("; tightest slack {} on `{sc}`", fmt_num(*v))).unwrap_or_default();
            let na = if l.not_applicable.is_empty() { String::new() } else { format!("; {}", l.not_applicable_text()) };
            let out = if l.out_of_scope > 0 { format!("; {} scenarios about another setting", l.out_of_scope) } else { String::new() };
            let _ = writeln!(s, "- {which}: **{}**{tight}{na}{out}", l.verdict_text());
        }
        let figure = format!("figures/{}.png", c.id);
        if figures.contains(&figure) {
            let _ = writeln!(s, "\n![{}]({figure})", c.id);
        }
        let _ = writeln!(s, "\nPer scenario: [claims/{}.md](claims/{}.md)\n", c.id, c.id);
    }
    s
}

/// A claim's page: every scenario in its setting with verdict, expectation, slack and detail.
pub fn claim_page(c: &ClaimSummary, rows: &[&VerdictRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {} — {}\n", c.id, c.title);
    let _ = writeln!(s, "Source {}. Reading `{}`: {}. Metric: {}.\n", c.source, c.reading.name, c.reading.description, c.metric);
    let _ = writeln!(s, "| scenario | constants | verdict | expected | slack | detail | replay |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    let mut out = 0;
    for r in rows {
        if r.out_of_scope() {
            out += 1;
            continue;
        }
        let mark = if r.matches_expected() { "" } else { " **MISMATCH**" };
        let _ = writeln!(
            s,
            "| {} | {} | {}{mark} | {} | {} | {} | `{}` |",
            r.scenario,
            r.label.as_deref().unwrap_or(r.constants.as_str()),
            r.evaluation.verdict,
            r.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
            opt_num(r.evaluation.slack),
            describe(&r.evaluation).replace('|', "\\|"),
            reproduce_command(r.claim, &r.scenario)
        );
    }
    if out > 0 {
        let _ = writeln!(s, "\n{out} scenarios are about another setting (not evaluated here).");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{ConditionCheck, Relation};
    use crate::engine::Estimator;
    use crate::verdict::Evaluation;

    fn row(scenario: &str, verdict: VerdictKind, checks: Vec<ConditionCheck>, slack: Option<f64>, expected: Option<VerdictKind>) -> VerdictRow {
        let failed = checks.iter().filter(|c| !c.holds && c.is_binding()).map(|c| c.to_string()).collect();
        VerdictRow {
            family: "test",
            claim: "T-1",
            reading: "primary",
            scenario: scenario.into(),
            constants: ConstantsSource::Exact,
            label: None,
            evaluation: Evaluation { verdict, slack, decisive: None, checks, failed, notes: Vec::new(), estimator: Estimator::Exact, series: Vec::new() },
            expected,
        }
    }

    #[test]
    fn a_claim_line_counts_its_setting_and_names_the_reasons() {
        let scope = ConditionCheck::compare("m = n", ConditionKind::Scope, 5.0, Relation::Equal, 10.0);
        let step = ConditionCheck::compare("gamma <= 1/L", ConditionKind::StepSize, 2.0, Relation::AtMost, 1.0);
        let rows = vec![
            row("a", VerdictKind::Holds, Vec::new(), Some(3.0), Some(VerdictKind::Holds)),
            row("b", VerdictKind::Holds, Vec::new(), Some(1.5), None),
            row("c", VerdictKind::NotApplicable, vec![scope.clone(), step.clone()], None, None),
            row("d", VerdictKind::NotApplicable, vec![step.clone()], None, Some(VerdictKind::Holds)),
        ];
        let refs: Vec<&VerdictRow> = rows.iter().collect();
        let lines = claim_lines(&refs);
        assert_eq!(lines.len(), 1);
        let l = &lines[0];
        assert_eq!((l.in_scope, l.out_of_scope), (3, 1), "the scope failure is counted, not evaluated");
        assert_eq!(l.verdict_text(), "holds 2/3, not-applicable 1/3");
        assert_eq!(l.tightest, Some((1.5, "b".to_string())));
        assert_eq!(l.not_applicable_text(), "n/a 1: gamma <= 1/L x1");
        // The mismatch (d) comes first, with its replay command, and the totals last.
        let text = terminal(&[("test", "A test family", &rows, "")], &[]);
        assert!(text.starts_with("DIFFERS FROM THE CARDS (1)\n  T-1 on d: not-applicable but the card expects holds; replay: cargo run --release -- check --claim 'T-1' --scenario 'd'"), "{text}");
        assert!(text.trim_end().ends_with("3 claim-scenario pairs evaluated (2 holds, 1 not-applicable); 1 about another setting, not shown"), "{text}");
    }

    #[test]
    fn reasons_are_the_check_names() {
        assert_eq!(short_reason("gamma <= 1/(32 L K): given 0.0025 > required 0.00125"), "gamma <= 1/(32 L K)");
        assert_eq!(short_reason("A2.3 bounded gradient dissimilarity fails: b^2 is infinite"), "A2.3 bounded gradient dissimilarity");
        assert_eq!(short_reason("A5 bounded global gradient (001:L143-149) fails: unbounded"), "A5 bounded global gradient (001:L143-149)");
    }
}
