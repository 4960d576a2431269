//! The `run` command's JSON: constants, parameters, per-round metrics and verdicts of one scenario.

use serde::Serialize;

use crate::checker::RunOutcome;
use crate::engine::{student_t_interval, Estimator, Interval};
use crate::error::Result;
use crate::families::ccyw::card::{EstimatorChoice, Scenario};
use crate::families::ccyw::check::{self, CheckOptions};
use crate::verdict::ConstantsSource;

#[derive(Serialize)]
struct RoundRow {
    t: usize,
    g_u: Interval,
    g_v: Interval,
    hat_g_v: Interval,
    f_gap: Interval,
    dissimilarity: Interval,
}

#[derive(Serialize)]
struct RunReport<'a> {
    meta: super::ReportMeta,
    scenario: &'a str,
    scenario_hash: String,
    seed: u64,
    replicates: usize,
    estimator: Estimator,
    constants: &'a crate::families::ccyw::problem::ProblemConstants,
    params: crate::families::ccyw::algorithm::RoundParams,
    rounds: Vec<RoundRow>,
    verdicts: Vec<serde_json::Value>,
}

/// Runs `scenario` (with `estimator` instead of its own when given) and returns the `run`
/// command's JSON.
///
/// # Errors
/// Any error of preparing the scenario.
pub fn run_report(scenario: &Scenario, threads: Option<usize>, estimator: Option<EstimatorChoice>) -> Result<String> {
    let prepared = check::prepare(scenario)?;
    let opts = CheckOptions { threads, estimator, ..Default::default() };
    let runs = check::simulate_scenario(scenario, &prepared.instance, &prepared.params, &opts)?;
    let (m, n) = (prepared.params.m as f64, prepared.params.n as f64);
    let f_star = prepared.constants.f_star;
    let stat = |t: usize, f: &dyn Fn(&crate::families::ccyw::problem::GradientSummary) -> f64| {
        let xs: Vec<f64> = runs.summaries.iter().map(|series| f(&series[t])).collect();
        student_t_interval(&xs, scenario.confidence)
    };
    let rounds = (0..scenario.rounds)
        .map(|t| RoundRow {
            t,
            g_u: stat(t, &|g| g.g_u),
            g_v: stat(t, &|g| g.g_v),
            hat_g_v: stat(t, &|g| m / n * g.g_v),
            f_gap: stat(t, &|g| g.objective - f_star),
            dissimilarity: stat(t, &|g| g.dissimilarity),
        })
        .collect();
    let mut run = check::evaluate_runs(
        scenario,
        check::Prepared { instance: prepared.instance.clone(), constants: prepared.constants.clone(), params: prepared.params },
        &runs,
        &crate::families::ccyw::claims::all_claims(),
        &opts,
    );
    // The lemmas too, as `check` evaluates them (a lemma's search replays here).
    run.results.extend(check::lemma_results(scenario, &prepared, &crate::families::ccyw::claims::all_lemmas(), &opts)?);
    let verdicts = run
        .results
        .iter()
        .filter(|c| c.constants == ConstantsSource::Exact)
        .map(|c| {
            serde_json::json!({
                "claim": c.claim,
                "reading": c.reading,
                "verdict": c.evaluation.verdict,
                "slack": c.evaluation.slack,
                "failed": c.evaluation.failed,
                "notes": c.evaluation.notes,
                "decisive": c.evaluation.decisive,
                "empirical_verdict": run.result(c.claim, ConstantsSource::Empirical).map(|e| e.evaluation.verdict),
            })
        })
        .collect();
    let report = RunReport {
        meta: super::ReportMeta::new(format!("cargo run --release -- run <file> (scenario `{}`)", scenario.name)),
        scenario: &scenario.name,
        scenario_hash: scenario.hash(),
        seed: scenario.seed,
        replicates: runs.summaries.len(),
        estimator: runs.estimator,
        constants: &prepared.constants,
        params: prepared.params,
        rounds,
        verdicts,
    };
    super::to_json(&report)
}
