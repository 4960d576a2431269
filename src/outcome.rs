//! What a check of several families produced, and its exporters: the terminal lines,
//! `SUMMARY.md`, one Markdown page per claim, `summary.csv`, and the atomic writing of files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::checker::ClaimResult;
use crate::claim::{fmt_num, Reading};
use crate::error::Result;
use crate::family::{ClaimSummary, FamilyReport, ReportFile, VerdictRow};
use crate::report::{describe, reproduce_command, to_json, write_atomic, ReportMeta};
use crate::verdict::{ConstantsSource, Evaluation, VerdictKind};

/// One claim's JSON file (`claims/<ID>.json`): the claim's identity, then one entry per scenario
/// in the family's own entry type `E` (its run's numbers beside the evaluation).
#[derive(Serialize)]
pub struct ClaimJson<'a, E: Serialize> {
    /// Provenance.
    pub meta: &'a ReportMeta,
    /// Claim id.
    pub claim: &'a str,
    /// One-line title.
    pub title: &'a str,
    /// Source lines.
    pub source: &'a str,
    /// The reading checked.
    pub reading: &'a Reading,
    /// The metric bounded, or the inequality.
    pub metric: &'a str,
    /// One entry per scenario.
    pub scenarios: Vec<E>,
}

impl<E: Serialize> ClaimJson<'_, E> {
    /// The file.
    ///
    /// # Errors
    /// When the JSON cannot be written.
    pub fn file(&self) -> Result<ReportFile> {
        Ok(ReportFile { path: PathBuf::from("claims").join(format!("{}.json", self.claim)), bytes: to_json(self)?.into_bytes() })
    }
}

/// What one family's check produced, with what the summary needs to know of the family.
#[derive(Debug, Clone)]
pub struct FamilyOutcome {
    /// The family's id.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its claims, in report order.
    pub claims: Vec<ClaimSummary>,
    /// What its check produced.
    pub report: FamilyReport,
}

/// What a check of several families produced.
#[derive(Debug, Clone, Default)]
pub struct CheckOutcome {
    /// Every family's outcome, in registry order.
    pub families: Vec<FamilyOutcome>,
}

impl CheckOutcome {
    /// Every verdict row.
    pub fn rows(&self) -> impl Iterator<Item = &VerdictRow> {
        self.families.iter().flat_map(|f| f.report.rows.iter())
    }

    /// Everything that differs from the cards: rows whose verdict is not the expected one, then
    /// the families' other findings.
    pub fn mismatches(&self) -> Vec<String> {
        let rows = self.rows().filter(|r| !r.matches_expected()).map(|r| {
            let what = if r.constants.is_exact() { String::new() } else { format!(" ({})", r.constants) };
            format!("{}{what} on {}", r.claim, r.scenario)
        });
        let other = self.families.iter().flat_map(|f| f.report.mismatches.iter().cloned());
        let mut seen = Vec::new();
        for m in rows.chain(other) {
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        seen
    }

    /// Every report file: the families' files, a Markdown page per claim, then `SUMMARY.md` and
    /// `summary.csv`.
    pub fn files(&self, meta: &ReportMeta) -> Vec<ReportFile> {
        let mut files: Vec<ReportFile> = self.families.iter().flat_map(|f| f.report.files.iter().cloned()).collect();
        for f in &self.families {
            for c in &f.claims {
                let rows: Vec<&VerdictRow> = f.report.rows.iter().filter(|r| r.claim == c.id).collect();
                if !rows.is_empty() {
                    files.push(ReportFile {
                        path: PathBuf::from("claims").join(format!("{}.md", c.id)),
                        bytes: crate::summary::claim_page(c, &rows).into_bytes(),
                    });
                }
            }
        }
        if self.families.iter().any(|f| !f.report.rows.is_empty() || !f.report.summary_markdown.is_empty()) {
            let figures: Vec<String> = files.iter().map(|f| f.path.display().to_string()).filter(|p| p.starts_with("figures/")).collect();
            files.push(ReportFile { path: "SUMMARY.md".into(), bytes: self.summary_markdown(meta, &figures).into_bytes() });
            files.push(ReportFile { path: "summary.csv".into(), bytes: self.summary_csv().into_bytes() });
        }
        files
    }

    /// `SUMMARY.md`: a title with the command that reproduces it and the totals, a table of
    /// contents and the overview table ([`crate::summary::markdown_overview`]); per family, one
    /// entry per claim (statement, verdict line, figure, link to its page), then the family's own
    /// section (how it computes, its scenarios' constants, its extra work).
    pub fn summary_markdown(&self, meta: &ReportMeta, figures: &[String]) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# fedbounds verdicts\n");
        let _ = writeln!(s, "fedbounds {} — reproduce with `{}`\n", meta.crate_version, meta.command);
        let all: Vec<&VerdictRow> = self.rows().collect();
        let bad = all.iter().filter(|r| !r.matches_expected()).count();
        let _ = writeln!(
            s,
            "{} verdicts differ from the cards. Every claim below lists its verdicts over the scenarios in its setting; `claims/<ID>.md` has every scenario, `summary.csv` every number.\n",
            if bad == 0 { "No".to_string() } else { bad.to_string() }
        );
        let overview: Vec<(&str, &str, &[VerdictRow])> = self.families.iter().map(|f| (f.id, f.title, f.report.rows.as_slice())).collect();
        s.push_str(&crate::summary::markdown_overview(&overview));
        for f in &self.families {
            let _ = writeln!(s, "<a id=\"family-{}\"></a>\n\n## {} (`{}`)\n", f.id, f.title, f.id);
            s.push_str(&crate::summary::markdown_claims(&f.claims, &f.report.rows, figures));
            s.push_str(&f.report.summary_markdown);
            if !f.report.summary_markdown.ends_with('\n') {
                s.push('\n');
            }
        }
        s
    }

    /// The terminal summary (see [`crate::summary::terminal`]); `replay` is how the tool was
    /// invoked, for the replay commands.
    pub fn terminal_summary(&self, replay: &str) -> String {
        let families: Vec<(&str, &str, &[VerdictRow], &str)> =
            self.families.iter().map(|f| (f.id, f.title, f.report.rows.as_slice(), f.report.terminal.as_str())).collect();
        let other: Vec<String> = self.families.iter().flat_map(|f| f.report.mismatches.iter().cloned()).collect();
        crate::summary::terminal(&families, &other, replay)
    }

    /// `summary.csv`: one row per claim, scenario and constants source, for every family.
    pub fn summary_csv(&self) -> String {
        let mut s = String::from("claim,reading,scenario,constants,verdict,expected,slack,checkpoint,estimate,lower,upper,bound\n");
        for r in self.rows() {
            let e = &r.evaluation;
            let p = e.decisive.as_ref();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                r.claim,
                r.reading,
                r.scenario,
                r.constants,
                e.verdict,
                r.expected.map(|v| v.to_string()).unwrap_or_default(),
                e.slack.map(|x| x.to_string()).unwrap_or_default(),
                p.map(|p| p.rounds.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.mean.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.lower.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.upper.to_string()).unwrap_or_default(),
                p.and_then(|p| p.bound).map(|b| b.to_string()).unwrap_or_default(),
            );
        }
        s
    }

    /// The verdict table for a terminal, then the families' extra sections.
    pub fn terminal_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:<24} {:<30} {:<15} {:<15} {:>10}  detail", "claim", "scenario", "verdict", "expected", "slack");
        for r in self.rows() {
            let mark = if r.matches_expected() { "" } else { " !" };
            let claim = match &r.label {
                Some(label) => format!("  ({label})"),
                None => r.claim.to_string(),
            };
            let _ = writeln!(
                s,
                "{:<24} {:<30} {:<15} {:<15} {:>10}  {}",
                claim,
                r.scenario,
                format!("{}{mark}", r.evaluation.verdict),
                r.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                r.evaluation.slack.map(fmt_num).unwrap_or_else(|| "-".into()),
                describe(&r.evaluation)
            );
        }
        for f in &self.families {
            s.push_str(&f.report.terminal);
        }
        s
    }
}

/// Writes every file under `out`, each atomically (temporary name, then rename); returns the
/// paths written.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_files(out: &Path, files: &[ReportFile]) -> Result<Vec<PathBuf>> {
    files
        .iter()
        .map(|f| {
            let path = out.join(&f.path);
            write_atomic(&path, &f.bytes)?;
            Ok(path)
        })
        .collect()
}

/// One scenario's entry in a claim's JSON (`claims/<ID>.json`): the scenario, the command that
/// reproduces it, the family's numbers of the run (`extras`, flattened in their field order),
/// then the claim's evaluation as stated and, where there is one, with empirical constants.
#[derive(Serialize)]
pub struct ScenarioEntry<'a, X: Serialize> {
    /// Scenario name.
    pub scenario: &'a str,
    /// What it probes.
    pub description: &'a str,
    /// Its hash.
    pub scenario_hash: &'a str,
    /// The command that reproduces this claim on it.
    pub reproduce: String,
    /// The family's numbers of the run.
    #[serde(flatten)]
    pub extras: X,
    /// The verdict the card expects of the claim as stated.
    pub expected: Option<VerdictKind>,
    /// The verdict the card expects of the empirical evaluation.
    pub expected_empirical: Option<VerdictKind>,
    /// The claim as stated.
    pub evaluation: &'a Evaluation,
    /// The claim with empirical constants, if evaluated.
    pub empirical: Option<&'a Evaluation>,
}

impl<'a, X: Serialize> ScenarioEntry<'a, X> {
    /// The entry of claim `id` on a run `(name, description, hash)` with these `results`; `None`
    /// when the run has no exact-constants result of the claim.
    pub fn of(id: &str, (scenario, description, scenario_hash): (&'a str, &'a str, &'a str), results: &'a [ClaimResult], extras: X) -> Option<Self> {
        let of = |c| results.iter().find(|r| r.claim == id && r.constants == c);
        let (exact, empirical) = (of(ConstantsSource::Exact)?, of(ConstantsSource::Empirical));
        Some(Self {
            scenario,
            description,
            scenario_hash,
            reproduce: reproduce_command(id, scenario),
            extras,
            expected: exact.expected,
            expected_empirical: empirical.and_then(|e| e.expected),
            evaluation: &exact.evaluation,
            empirical: empirical.map(|e| &e.evaluation),
        })
    }
}
