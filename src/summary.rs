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
use crate::search::line::{SearchCell, SearchLine};
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
/// so source citations like `001:L143` stay whole. A check made at one horizon of a sweep
/// (`T = 100: eta_u < ...: given ...`) is named by its condition, so the horizons of one scenario
/// count once.
fn short_reason(failed: &str) -> String {
    let rest = failed.strip_prefix("T = ").and_then(|r| r.split_once(": ")).filter(|(t, _)| t.parse::<u64>().is_ok()).map_or(failed, |(_, r)| r);
    let head = rest.split(": ").next().unwrap_or(rest).trim();
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

    /// `holds 6, n/a 6 of 12`, or `holds 12/12` when one verdict covers all.
    pub fn short_verdicts(&self) -> String {
        if self.in_scope == 0 {
            return "no scenario in its setting".into();
        }
        let order = [("violated", "violated"), ("inconclusive", "inconclusive"), ("holds", "holds"), ("not-applicable", "n/a")];
        let parts: Vec<(&str, usize)> = order.iter().filter_map(|(v, short)| self.verdicts.get(*v).map(|n| (*short, *n))).collect();
        match parts.as_slice() {
            [(v, n)] => format!("{v} {n}/{}", self.in_scope),
            _ => format!("{} of {}", parts.iter().map(|(v, n)| format!("{v} {n}")).collect::<Vec<_>>().join(", "), self.in_scope),
        }
    }

    /// The reasons it was not applicable, each with the number of scenarios in words:
    /// `gamma <= 1/(32 L K) on 1 scenario; A2.3 bounded gradient dissimilarity on 4 scenarios`.
    pub fn reasons_in_words(&self) -> String {
        let mut parts = Vec::new();
        for (reason, n) in &self.not_applicable {
            parts.push(format!("{reason} on {n} scenario{}", if *n == 1 { "" } else { "s" }));
        }
        parts.join("; ")
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

/// One family's part of the summaries: its id and title, its verdict rows, its search's lines
/// (empty without a search) and its further terminal tables.
#[derive(Debug, Clone, Copy)]
pub struct FamilySummary<'a> {
    /// Family id.
    pub id: &'a str,
    /// Title.
    pub title: &'a str,
    /// Verdict rows.
    pub rows: &'a [VerdictRow],
    /// Lines of `search.csv`.
    pub searches: &'a [SearchLine],
    /// Further terminal tables.
    pub extra: &'a str,
}

impl<'a> FamilySummary<'a> {
    /// A family with rows only (no search, no further tables).
    pub fn rows(id: &'a str, title: &'a str, rows: &'a [VerdictRow]) -> Self {
        Self { id, title, rows, searches: &[], extra: "" }
    }
}

/// Width the terminal summary keeps to: reasons and lists wrap, wider tables are left to `--full`.
pub const TERMINAL_WIDTH: usize = 100;

/// `text` wrapped at [`TERMINAL_WIDTH`] on spaces: the first line indented by `first`, the rest by
/// `rest` spaces (a word longer than a line stays whole).
pub fn wrap(text: &str, first: usize, rest: usize) -> String {
    let mut out = String::new();
    let mut line = " ".repeat(first);
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !empty && line.chars().count() + 1 + word.chars().count() > TERMINAL_WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = " ".repeat(rest);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// `s` cut to `n` characters, the cut marked with `~`.
fn fit(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}~", s.chars().take(n.saturating_sub(1)).collect::<String>())
    }
}

/// The command that replays one claim on one scenario, as the tool was invoked (`replay` is the
/// command up to its filters: the program, `check` and the options that change verdicts, e.g.
/// `fedbounds check --bound-scale 0.1`).
fn replay_command(replay: &str, claim: &str, scenario: &str) -> String {
    format!("{replay} --claim '{claim}' --scenario '{scenario}'")
}

/// A row's claim with its constants source when that is not the exact one: `X-T1 (empirical)`.
fn claim_label(r: &VerdictRow) -> String {
    if r.constants.is_exact() {
        r.claim.to_string()
    } else {
        format!("{} ({})", r.claim, r.label.as_deref().unwrap_or(r.constants.as_str()))
    }
}

/// Counterexamples grouped by claim and constants source, in first-seen order: (label, scenarios,
/// whether the card expects every one of them).
fn counterexamples<'a>(rows: &[&'a VerdictRow]) -> Vec<(String, Vec<&'a str>, bool)> {
    let mut groups: Vec<(String, Vec<&str>, bool)> = Vec::new();
    for r in rows.iter().filter(|r| r.evaluation.verdict == VerdictKind::Violated) {
        let label = if r.constants.is_exact() { r.claim.to_string() } else { format!("{} ({})", r.claim, r.constants) };
        let expected = r.expected == Some(VerdictKind::Violated);
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => {
                g.1.push(&r.scenario);
                g.2 &= expected;
            }
            None => groups.push((label, vec![&r.scenario], expected)),
        }
    }
    groups
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
    let verdicts = if parts.is_empty() { String::new() } else { format!(" ({})", parts.join(", ")) };
    format!("{evaluated} claim-scenario pairs evaluated{verdicts}; {out} about another setting, not shown")
}

/// What decides the exit code, first: the disagreements with the cards, each with the command that
/// replays it, or the statement that every verdict is the expected one.
fn write_exit_reason(s: &mut String, rows: &[&VerdictRow], other_mismatches: &[String], replay: &str) {
    let differing: Vec<&&VerdictRow> = rows.iter().filter(|r| !r.matches_expected()).collect();
    let n = differing.len() + other_mismatches.len();
    if n == 0 {
        let (evaluated, per, _) = totals(rows);
        let violated = per.get("violated").copied().unwrap_or(0);
        let _ = writeln!(s, "Every verdict is the one its card expects: {evaluated} claim-scenario pairs, {violated} violated as expected.\n");
        return;
    }
    let _ = writeln!(s, "DIFFERS FROM THE CARDS ({n}): these decide the exit code (1)");
    for r in differing {
        let expected = r.expected.map(|v| v.to_string()).unwrap_or_default();
        s.push_str(&wrap(&format!("{} on {}: {}, but the card expects {expected}", claim_label(r), r.scenario, r.evaluation.verdict), 2, 6));
        s.push_str(&wrap(&format!("replay: {}", replay_command(replay, r.claim, &r.scenario)), 4, 6));
    }
    for m in other_mismatches {
        s.push_str(&wrap(m, 2, 6));
    }
    let _ = writeln!(s);
}

/// The counterexamples (violated rows), grouped per claim; those the cards expect said once.
fn write_counterexamples(s: &mut String, rows: &[&VerdictRow], replay: &str) {
    let groups = counterexamples(rows);
    for (expected, heading) in [(true, "Counterexamples the cards expect"), (false, "Counterexamples no card expects")] {
        let of: Vec<&(String, Vec<&str>, bool)> = groups.iter().filter(|g| g.2 == expected).collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(s, "{heading} ({}); replay one with", of.len());
        s.push_str(&wrap(&replay_command(replay, "ID", "SCENARIO"), 4, 6));
        for (label, scenarios, _) in of {
            s.push_str(&wrap(&format!("{label}: violated on {}", scenarios.join(", ")), 2, 6));
        }
        let _ = writeln!(s);
    }
}

/// One family's claim lines: claim, verdicts over the scenarios in its setting, the tightest
/// slack and where, then on wrapped lines below the search's worst ratio and step room (when the
/// claim was searched, [`SearchCell`]) and the reasons it was not applicable.
fn write_family(s: &mut String, rows: &[VerdictRow], searches: &[SearchLine]) {
    let refs: Vec<&VerdictRow> = rows.iter().collect();
    let _ = writeln!(s, "  {:<34} {:<26} {:>10}  tightest on", "claim", "verdicts (in its setting)", "slack");
    let mut shown_exact: Option<&str> = None;
    for line in claim_lines(&refs).iter().filter(|l| l.in_scope > 0) {
        let name = if line.constants.is_exact() {
            shown_exact = Some(line.claim);
            line.claim.to_string()
        } else if shown_exact == Some(line.claim) {
            format!("  {}", line.constants)
        } else {
            format!("{} ({})", line.claim, line.constants)
        };
        let (slack, at) = line.tightest.as_ref().map_or(("-".to_string(), String::new()), |(v, sc)| (fmt_num(*v), sc.clone()));
        let head = format!("  {:<34} {:<26} {:>10}  ", fit(&name, 34), line.short_verdicts(), slack);
        let room = TERMINAL_WIDTH.saturating_sub(head.chars().count());
        let _ = writeln!(s, "{}", format!("{head}{}", fit(&at, room)).trim_end());
        if let Some(cell) = SearchCell::of(searches, line.claim, line.constants) {
            s.push_str(&wrap(&format!("search: {}", cell.text()), 6, 8));
        }
        if !line.not_applicable.is_empty() {
            s.push_str(&wrap(&format!("not applicable: {}", line.reasons_in_words()), 6, 8));
        }
    }
}

/// The terminal summary, at most [`TERMINAL_WIDTH`] columns: what decides the exit code first
/// (the disagreements with the cards, or that there are none), the counterexamples, then one line
/// per claim for each family (with its search's lines, if any), each family's extra tables when
/// they fit, and the totals. `replay` is how the tool was invoked up to its filters (`fedbounds
/// check`, `cargo run --release -- check --bound-scale 0.1`), for the replay commands.
pub fn terminal(families: &[FamilySummary<'_>], other_mismatches: &[String], replay: &str) -> String {
    let all: Vec<&VerdictRow> = families.iter().flat_map(|f| f.rows.iter()).collect();
    let mut s = String::new();
    write_exit_reason(&mut s, &all, other_mismatches, replay);
    write_counterexamples(&mut s, &all, replay);
    for FamilySummary { id, title, rows, searches, extra } in families {
        let _ = writeln!(s, "{}", fit(&format!("{title} ({id})"), TERMINAL_WIDTH));
        write_family(&mut s, rows, searches);
        let fits = extra.lines().all(|l| l.chars().count() <= TERMINAL_WIDTH);
        if fits {
            s.push_str(extra);
        } else {
            let _ =
                writeln!(s, "  ({} lines of further {id} tables: `--full` prints them, SUMMARY.md has them)", extra.lines().filter(|l| !l.is_empty()).count());
        }
        let _ = writeln!(s);
    }
    s.push_str(&wrap(&totals_text(&all), 0, 2));
    s
}

/// `SUMMARY.md`'s per-claim part for one family: for each claim, its statement, source and reading,
/// the verdict line (with the search's worst ratio and step room when it was searched), its
/// figure inline and a link to its page of per-scenario detail.
pub fn markdown_claims(claims: &[ClaimSummary], rows: &[VerdictRow], searches: &[SearchLine], figures: &[String]) -> String {
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
            let search = SearchCell::of(searches, l.claim, l.constants).map_or(String::new(), |c| format!("; search: {}", c.text()));
            let _ = writeln!(s, "- {which}: **{}**{tight}{search}{na}{out}", l.verdict_text());
        }
        let figure = format!("figures/{}.png", c.id);
        if figures.contains(&figure) {
            let _ = writeln!(s, "\n![{}]({figure})", c.id);
        }
        let _ = writeln!(s, "\nPer scenario: [claims/{}.md](claims/{}.md)\n", c.id, c.id);
    }
    s
}

/// `SUMMARY.md`'s opening: a table of contents (the overview, then each family's section, by the
/// anchor `family-<id>` its header carries) and the overview table, one row per claim and
/// constants source: verdicts over the scenarios in its setting, the tightest slack and where,
/// the search's worst `observed / bound` and step room (worst / any instance, [`SearchCell`]; `-`
/// where the claim was not searched), the first counterexample, and the claim's page.
pub fn markdown_overview(families: &[FamilySummary<'_>]) -> String {
    let mut s = String::from("## Contents\n\n- [Overview](#overview): every claim in one table\n");
    for FamilySummary { id, title, rows, .. } in families {
        let claims = rows.iter().map(|r| r.claim).collect::<std::collections::BTreeSet<_>>().len();
        let _ = writeln!(s, "- [{title}](#family-{id}): {claims} claims, {} claim-scenario rows", rows.len());
    }
    let _ = writeln!(s, "\n<a id=\"overview\"></a>\n\n## Overview\n");
    let _ = writeln!(s, "| family | claim | verdicts (in its setting) | tightest slack | search: worst observed/bound | step room (worst/any instance) | counterexample | detail |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|");
    for FamilySummary { id, rows, searches, .. } in families {
        let refs: Vec<&VerdictRow> = rows.iter().collect();
        for line in claim_lines(&refs) {
            let claim = if line.constants.is_exact() { line.claim.to_string() } else { format!("{} ({})", line.claim, line.constants) };
            let tight = line.tightest.as_ref().map_or("-".to_string(), |(v, sc)| format!("{} (`{sc}`)", fmt_num(*v)));
            let violated: Vec<&str> = refs
                .iter()
                .filter(|r| r.claim == line.claim && r.constants == line.constants && r.evaluation.verdict == VerdictKind::Violated)
                .map(|r| r.scenario.as_str())
                .collect();
            let counterexample = match violated.as_slice() {
                [] => "-".to_string(),
                [one] => format!("`{one}`"),
                [first, rest @ ..] => format!("`{first}` (+{} more)", rest.len()),
            };
            let cell = SearchCell::of(searches, line.claim, line.constants);
            let (worst, room) = cell.map_or(("-".to_string(), "-".to_string()), |c| (c.worst, if c.room.is_empty() { "-".into() } else { c.room }));
            let _ = writeln!(
                s,
                "| {id} | {claim} | {} | {tight} | {worst} | {room} | {counterexample} | [claims/{}.md](claims/{}.md) |",
                line.short_verdicts(),
                line.claim,
                line.claim
            );
        }
    }
    s.push('\n');
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
            evaluation: Evaluation {
                verdict,
                slack,
                decisive: None,
                checks,
                failed,
                notes: Vec::new(),
                estimator: Estimator::Exact,
                series: Vec::new(),
                beyond_steps: None,
            },
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
        assert_eq!(l.short_verdicts(), "holds 2, n/a 1 of 3");
        assert_eq!(l.reasons_in_words(), "gamma <= 1/L on 1 scenario");
        // The mismatch (d) comes first, with its replay command as invoked, and the totals last.
        let text = terminal(&[FamilySummary::rows("test", "A test family", &rows)], &[], "fedbounds check");
        assert!(
            text.starts_with("DIFFERS FROM THE CARDS (1): these decide the exit code (1)\n  T-1 on d: not-applicable, but the card expects holds\n    replay: fedbounds check --claim 'T-1' --scenario 'd'\n"),
            "{text}"
        );
        assert!(text.trim_end().ends_with("3 claim-scenario pairs evaluated (2 holds, 1 not-applicable); 1 about another setting, not shown"), "{text}");
        // Only pairs about another setting: no empty list of verdicts.
        let outside: Vec<&VerdictRow> = rows.iter().filter(|r| r.out_of_scope()).collect();
        assert_eq!(totals_text(&outside), "0 claim-scenario pairs evaluated; 1 about another setting, not shown");
        assert!(text.lines().all(|l| l.chars().count() <= TERMINAL_WIDTH), "{text}");
        // Negative control: with the expectation met, the first line says so and nothing differs.
        let agreeing: Vec<VerdictRow> = rows
            .iter()
            .cloned()
            .map(|mut r| {
                r.expected = Some(r.evaluation.verdict);
                r
            })
            .collect();
        let text = terminal(&[FamilySummary::rows("test", "A test family", &agreeing)], &[], "fedbounds check");
        assert!(text.starts_with("Every verdict is the one its card expects: 3 claim-scenario pairs, 0 violated as expected."), "{text}");
    }

    #[test]
    fn long_lines_wrap_and_wide_tables_are_left_to_full() {
        let wrapped = wrap(&"word ".repeat(60), 2, 6);
        assert!(wrapped.lines().count() > 2 && wrapped.lines().all(|l| l.chars().count() <= TERMINAL_WIDTH), "{wrapped}");
        assert!(wrapped.lines().skip(1).all(|l| l.starts_with("      word")), "{wrapped}");
        assert_eq!(fit("abcdef", 4), "abc~");
        assert_eq!(fit("abc", 4), "abc");
        let rows = vec![row("a", VerdictKind::Holds, Vec::new(), Some(3.0), Some(VerdictKind::Holds))];
        let wide = format!("{}\n", "x".repeat(TERMINAL_WIDTH + 1));
        let text = terminal(&[FamilySummary { extra: &wide, ..FamilySummary::rows("test", "A test family", &rows) }], &[], "fedbounds check");
        assert!(text.contains("(1 lines of further test tables: `--full` prints them") && !text.contains(&wide), "{text}");
        let narrow = "narrow table\n";
        assert!(terminal(&[FamilySummary { extra: narrow, ..FamilySummary::rows("test", "A test family", &rows) }], &[], "fedbounds check").contains(narrow));
    }

    #[test]
    fn the_overview_has_a_row_per_claim_with_its_counterexample() {
        let rows = vec![
            row("a", VerdictKind::Holds, Vec::new(), Some(3.0), None),
            row("b", VerdictKind::Violated, Vec::new(), Some(0.5), Some(VerdictKind::Violated)),
            row("c", VerdictKind::Violated, Vec::new(), Some(0.7), None),
        ];
        let md = markdown_overview(&[FamilySummary::rows("test", "A test family", &rows)]);
        assert!(md.contains("- [A test family](#family-test): 1 claims, 3 claim-scenario rows"), "{md}");
        assert!(md.contains("| test | T-1 | violated 2, holds 1 of 3 | 3 (`a`) | - | - | `b` (+1 more) | [claims/T-1.md](claims/T-1.md) |"), "{md}");
        // Negative control: without violated rows there is no counterexample.
        let holding = vec![row("a", VerdictKind::Holds, Vec::new(), Some(3.0), None)];
        assert!(markdown_overview(&[FamilySummary::rows("test", "A test family", &holding)]).contains("| holds 1/1 | 3 (`a`) | - | - | - |"));
    }

    #[test]
    fn reasons_are_the_check_names() {
        assert_eq!(short_reason("T = 100: eta_u < (1-q)/(L_u C): given 0.01 > required 0"), "eta_u < (1-q)/(L_u C)");
        assert_eq!(short_reason("T = x: y: z"), "T = x", "only a whole horizon is a horizon prefix");
        assert_eq!(short_reason("gamma <= 1/(32 L K): given 0.0025 > required 0.00125"), "gamma <= 1/(32 L K)");
        assert_eq!(short_reason("A2.3 bounded gradient dissimilarity fails: b^2 is infinite"), "A2.3 bounded gradient dissimilarity");
        assert_eq!(short_reason("A5 bounded global gradient (001:L143-149) fails: unbounded"), "A5 bounded global gradient (001:L143-149)");
    }
}
