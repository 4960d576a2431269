//! This family's reports: JSON per claim, a Markdown and CSV summary, one PNG per claim, and the
//! sections of the mirrored figures and the search. Written through the shared
//! [`crate::report`] primitives (atomic writes, byte-identical output).

mod experiments;
mod plot;
mod run;
mod search;

pub use experiments::{experiments_files, experiments_markdown};
pub use plot::{claim_figure, search_figure, sweep_figure};
pub use run::run_report;
pub use search::{scenario_file, search_files, search_markdown, step_multiple_cells, step_multiples};

use std::fmt::Write as _;

use serde::Serialize;

pub use crate::report::{describe, opt_num, reproduce_command, to_json, write_atomic, ReportMeta};

use crate::checker::RunOutcome;
use crate::claim::fmt_num;
use crate::error::{Error, Result};
use crate::families::ccyw::card_claims::Catalog;
use crate::families::ccyw::check::{ClaimResult, ScenarioRun};
use crate::families::ccyw::claims::{lemma_by_id, Reading};
use crate::family::ReportFile;
use crate::outcome::ClaimJson;
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

/// The claim as stated on each run that evaluated it.
pub fn results_of<'a>(runs: &'a [ScenarioRun], id: &str) -> Vec<(&'a ScenarioRun, &'a ClaimResult)> {
    runs.iter().filter_map(|r| r.result(id, ConstantsSource::Exact).map(|c| (r, c))).collect()
}

/// A claim's title, source, reading and metric, from `catalog` (bounds) or the lemmas.
fn describe_claim(id: &str, catalog: &Catalog) -> Option<(&'static str, &'static str, Reading, &'static str)> {
    match catalog.by_id(id) {
        Some(c) => Some((c.title(), c.source(), c.reading(), c.metric().formula())),
        None => lemma_by_id(id).map(|l| (l.title(), l.source(), l.reading(), l.inequality())),
    }
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
pub fn report_files(runs: &[ScenarioRun], catalog: &Catalog, extras: Extras<'_>, meta: &ReportMeta, plots: bool) -> Result<(Vec<ReportFile>, String)> {
    let mut files = Vec::new();
    for id in claim_ids(runs) {
        let rows = results_of(runs, id);
        let (title, source, reading, metric) =
            describe_claim(id, catalog).ok_or_else(|| Error::Internal(format!("claim {id} was run but is not in the catalog")))?;
        let report = ClaimJson {
            meta,
            claim: id,
            title,
            source,
            reading: &reading,
            metric,
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
                    expected_empirical: run.expected_empirical.get(id).copied(),
                    matches_expected: run.matches_expected(id),
                    evaluation: &c.evaluation,
                    empirical: run.result(id, ConstantsSource::Empirical).map(|e| &e.evaluation),
                })
                .collect(),
        };
        files.push(report.file()?);
        if plots {
            files.push(claim_figure(id, title, &rows).file(id)?);
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
