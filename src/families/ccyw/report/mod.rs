//! This family's reports: JSON per claim, a Markdown and CSV summary, one PNG per claim, and the
//! sections of the mirrored figures and the search. Written through the shared
//! [`crate::report`] primitives (atomic writes, byte-identical output).

mod experiments;
mod plot;
mod run;
mod search;

pub use experiments::{experiments_files, experiments_markdown};
pub use plot::{plot_claim, plot_search, plot_sweep};
pub use run::run_report;
pub use search::{scenario_file, search_files, search_markdown, step_multiple_cells, step_multiples};

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

pub use crate::report::{describe, opt_num, reproduce_command, to_json, write_atomic, ReportMeta};

use crate::claim::fmt_num;
use crate::error::Result;
use crate::families::ccyw::check::{ClaimResult, ScenarioRun};
use crate::family::{ReportFile, VerdictRow};
use crate::verdict::{ConstantsSource, Evaluation, VerdictKind};

#[derive(Serialize)]
struct ClaimScenarioEntry<'a> {
    scenario: &'a str,
    description: &'a str,
    scenario_hash: &'a str,
    seed: u64,
    replicates: usize,
    rounds: usize,
    confidence: f64,
    reproduce: String,
    layout: crate::families::ccyw::problem::Layout,
    constants: &'a crate::families::ccyw::problem::ProblemConstants,
    empirical_b2: f64,
    min_covariance_eigenvalue: Option<f64>,
    params: crate::families::ccyw::algorithm::RoundParams,
    expected: Option<VerdictKind>,
    expected_empirical: Option<VerdictKind>,
    matches_expected: bool,
    evaluation: &'a Evaluation,
    empirical: Option<&'a Evaluation>,
}

#[derive(Serialize)]
struct ClaimReport<'a> {
    meta: &'a ReportMeta,
    claim: &'a str,
    title: &'a str,
    source: &'a str,
    reading: &'a crate::families::ccyw::claims::Reading,
    metric: &'a str,
    scenarios: Vec<ClaimScenarioEntry<'a>>,
}

/// Claim ids in first-seen order across runs.
fn claim_ids(runs: &[ScenarioRun]) -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = Vec::new();
    for r in runs {
        for c in &r.results {
            if !ids.contains(&c.claim) {
                ids.push(c.claim);
            }
        }
    }
    ids
}

/// Results of one claim across runs.
pub fn results_of<'a>(runs: &'a [ScenarioRun], id: &str) -> Vec<(&'a ScenarioRun, &'a ClaimResult)> {
    runs.iter().flat_map(|r| r.results.iter().filter(|c| c.claim == id).map(move |c| (r, c))).collect()
}

/// What a full report carries besides the claim verdicts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// The mirrored figures (`experiments/` and their section of `SUMMARY.md`).
    pub experiments: Option<&'a crate::families::ccyw::experiments::Experiments>,
    /// Adversarial search results (`search/` and their section of `SUMMARY.md`).
    pub searches: &'a [crate::families::ccyw::search::SearchResult],
}

/// This family's report files (per-claim JSON and figures, the extras' folders) and its section
/// of `SUMMARY.md`.
///
/// # Errors
/// [`crate::Error::Serialization`] or [`crate::Error::Figure`] when a file cannot be rendered.
pub fn report_files(runs: &[ScenarioRun], extras: Extras<'_>, meta: &ReportMeta, plots: bool) -> Result<(Vec<ReportFile>, String)> {
    let mut files = Vec::new();
    for id in claim_ids(runs) {
        let rows = results_of(runs, id);
        let (_, first) = rows[0];
        let report = ClaimReport {
            meta,
            claim: id,
            title: first.title,
            source: first.source,
            reading: &first.reading,
            metric: first.metric,
            scenarios: rows
                .iter()
                .map(|(run, c)| ClaimScenarioEntry {
                    scenario: &run.scenario,
                    description: &run.description,
                    scenario_hash: &run.scenario_hash,
                    seed: run.seed,
                    replicates: run.replicates,
                    rounds: run.rounds,
                    confidence: run.confidence,
                    reproduce: reproduce_command(id, &run.scenario),
                    layout: run.layout,
                    constants: &run.constants,
                    empirical_b2: run.empirical_b2,
                    min_covariance_eigenvalue: run.min_covariance_eigenvalue,
                    params: run.params,
                    expected: c.expected,
                    expected_empirical: c.expected_empirical,
                    matches_expected: c.matches_expected(),
                    evaluation: &c.evaluation,
                    empirical: c.empirical.as_ref(),
                })
                .collect(),
        };
        files.push(ReportFile { path: PathBuf::from("claims").join(format!("{id}.json")), bytes: to_json(&report)?.into_bytes() });
        if plots {
            files.push(ReportFile { path: PathBuf::from("figures").join(format!("{id}.png")), bytes: plot_claim(id, first.title, &rows)? });
        }
    }
    let mut summary = summary_markdown(runs);
    if let Some(e) = extras.experiments {
        files.extend(experiments_files(e, meta, plots)?);
        summary.push_str(&experiments_markdown(e));
    }
    if !extras.searches.is_empty() {
        files.extend(search_files(extras.searches, meta, plots)?);
        summary.push_str(&search_markdown(extras.searches));
    }
    Ok((files, summary))
}

/// Verdict rows of finished runs, for the shared summary table and CSV.
pub fn verdict_rows(runs: &[ScenarioRun]) -> Vec<VerdictRow> {
    let mut rows = Vec::new();
    for id in claim_ids(runs) {
        for (run, c) in results_of(runs, id) {
            rows.push(VerdictRow {
                family: super::FAMILY_ID,
                claim: id,
                reading: c.reading.name,
                scenario: run.scenario.clone(),
                constants: ConstantsSource::Exact,
                label: None,
                evaluation: c.evaluation.clone(),
                expected: c.expected,
            });
            if let Some(emp) = &c.empirical {
                rows.push(VerdictRow {
                    family: super::FAMILY_ID,
                    claim: id,
                    reading: c.reading.name,
                    scenario: run.scenario.clone(),
                    constants: ConstantsSource::Empirical,
                    label: Some(format!("empirical b^2 = {}", fmt_num(run.empirical_b2))),
                    evaluation: emp.clone(),
                    expected: c.expected_empirical,
                });
            }
        }
    }
    rows
}

/// This family's section of `SUMMARY.md`: how verdicts are computed, the verdict table and the
/// scenarios' constants.
pub fn summary_markdown(runs: &[ScenarioRun]) -> String {
    let mut s = String::from("### How these verdicts are computed\n\n");
    let _ = writeln!(
        s,
        "Verdicts compare the bound with the expected metric: computed exactly by moment propagation \
         (estimator `exact`, no sampling error), or estimated by seeded replicates with a {}-level \
         Student-t interval (`monte-carlo`; `deterministic` when one run is exact). Slack = bound / \
         estimate, the smallest over all checkpoints compared. `empirical` rows replace an infinite \
         BGD constant b^2 by its supremum over the iterates that seeded runs visit: they are not \
         verdicts on the claim as stated.\n",
        runs.first().map(|r| r.confidence).unwrap_or(0.99)
    );
    let _ = writeln!(s, "### Chen, Cao, Yuan, Wen: scenarios\n");
    let _ = writeln!(s, "| scenario | hash | seed | replicates | T | n | m | K | du | dv | L | F0 | b^2 | sigma_u^2 | sigma_v^2 | gamma | eta_u | eta_v |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in runs {
        let p = &r.params;
        let b2 = r.constants.bgd.finite().map(fmt_num).unwrap_or_else(|| "inf".into());
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.scenario_hash,
            r.seed,
            r.replicates,
            r.rounds,
            r.layout.n,
            p.m,
            p.k,
            r.layout.du,
            r.layout.dv,
            fmt_num(r.constants.l),
            fmt_num(r.constants.f0),
            b2,
            fmt_num(r.constants.sigma_u2),
            fmt_num(r.constants.sigma_v2),
            fmt_num(p.gamma()),
            fmt_num(p.eta_u),
            fmt_num(p.eta_v),
        );
    }
    s
}
