//! The pipeline of one scenario: instance and constants -> step sizes -> runs -> verdicts.

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::checker::ClaimResult;
use crate::checker::RunOutcome;
use crate::claim::fmt_num;

pub use crate::engine::monte_carlo::in_pool;
use crate::engine::{Estimator, InclusionMoments};
use crate::error::{Error, Result};
use crate::families::ccyw::algorithm::{RoundConfig, RoundParams};
use crate::families::ccyw::card::{EstimatorChoice, Scenario, StepSpec};
use crate::families::ccyw::card_claims::Catalog;
use crate::families::ccyw::claims::lemmas::evaluate_lemma;
use crate::families::ccyw::claims::{AdmissibleSteps, Claim, ClaimInputs, LemmaClaim};
use crate::families::ccyw::exact::exact_series;
use crate::families::ccyw::lemma_estimates::check_quantities;
use crate::families::ccyw::monte_carlo::{simulate, Trajectory};
use crate::families::ccyw::problem::{GradientSummary, Layout, ProblemConstants, QuadraticInstance};
use crate::verdict::{evaluate, ConstantsSource, VerdictKind};

/// Options of a check that are not part of the scenario.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Worker threads (None: rayon's default). Results do not depend on it.
    pub threads: Option<usize>,
    /// Multiplies every bound (1 normally; below 1 only for negative controls).
    pub bound_scale: Option<f64>,
    /// Overrides every scenario's estimator.
    pub estimator: Option<EstimatorChoice>,
}

/// Everything computed for one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioRun {
    /// Scenario name.
    pub scenario: String,
    /// Its description.
    pub description: String,
    /// The algorithm run.
    pub algorithm: crate::families::ccyw::algorithm::AlgorithmKind,
    /// Hash of the scenario's canonical form.
    pub scenario_hash: String,
    /// Seed.
    pub seed: u64,
    /// Replicates actually run.
    pub replicates: usize,
    /// Horizon.
    pub rounds: usize,
    /// Confidence level.
    pub confidence: f64,
    /// Estimator used.
    pub estimator: Estimator,
    /// Exact constants.
    pub constants: ProblemConstants,
    /// Sizes.
    pub layout: crate::families::ccyw::problem::Layout,
    /// Resolved parameters.
    pub params: RoundParams,
    /// Supremum of the BGD quantity over visited iterates (the empirical `b^2`; NaN when not computed).
    pub empirical_b2: f64,
    /// Exact engine only: smallest eigenvalue of the state covariance seen (negative beyond
    /// rounding would flag a loss of positive semidefiniteness).
    pub min_covariance_eigenvalue: Option<f64>,
    /// Claim outcomes: per claim the claim as stated, then (when BGD fails for the instance) the
    /// evaluation with `b^2` replaced by the supremum of the dissimilarity over the iterates the
    /// runs visit, labelled `empirical` (not a verdict on the claim as stated).
    pub results: Vec<ClaimResult>,
    /// The empirical verdicts the card expects, by claim id (also where none could be computed).
    #[serde(skip)]
    pub expected_empirical: BTreeMap<String, VerdictKind>,
}

impl RunOutcome for ScenarioRun {
    fn scenario_name(&self) -> &str {
        &self.scenario
    }
    fn results(&self) -> &[ClaimResult] {
        &self.results
    }
}

impl ScenarioRun {
    /// Whether claim `id`'s verdicts agree with the card: the exact one, and the empirical one
    /// where the card expects one (an expected empirical verdict that was not computed differs).
    pub fn matches_expected(&self, id: &str) -> bool {
        let exact = self.result(id, ConstantsSource::Exact).is_none_or(|r| r.matches_expected());
        let empirical = match (self.expected_empirical.get(id), self.result(id, ConstantsSource::Empirical)) {
            (Some(e), Some(r)) => *e == r.evaluation.verdict,
            (Some(_), None) => false,
            (None, _) => true,
        };
        exact && empirical
    }
}

/// Claim inputs of an instance before steps are chosen (steps NaN).
pub fn base_inputs(inst: &QuadraticInstance, c: &ProblemConstants, k: usize, m: usize, t: usize) -> ClaimInputs {
    inputs_for(inst.layout(), c, k, m, t)
}

/// Claim inputs of a layout and its constants before steps are chosen (steps NaN).
fn inputs_for(layout: Layout, c: &ProblemConstants, k: usize, m: usize, t: usize) -> ClaimInputs {
    ClaimInputs {
        n: layout.n,
        m,
        k,
        t,
        du: layout.du,
        dv: layout.dv,
        l: c.l,
        f0: c.f0,
        b2: c.bgd.finite(),
        sigma_u2: c.sigma_u2,
        sigma_v2: c.sigma_v2,
        b0: c.b0,
        b0_literal: c.b0_literal,
        gamma_u: f64::NAN,
        gamma_v: f64::NAN,
        eta_u: f64::NAN,
        eta_v: f64::NAN,
    }
}

/// Resolves the scenario's step rules into validated parameters.
///
/// # Errors
/// [`Error::InvalidField`] when a rule yields a non-finite step (e.g. it needs a finite `b^2`) or a
/// parameter is out of range.
pub fn resolve_params(s: &Scenario, inst: &QuadraticInstance, c: &ProblemConstants) -> Result<RoundParams> {
    let n = inst.layout().n;
    let a = &s.algorithm;
    if a.m == 0 || a.m > n {
        return Err(Error::field("algorithm.m", format!("got {}", a.m), format!("an integer with 1 <= m <= n = {n}")));
    }
    if a.k == 0 {
        return Err(Error::field("algorithm.k", "got 0", "an integer >= 1"));
    }
    let x = base_inputs(inst, c, a.k, a.m, s.rounds);
    // The admissible steps of a bound claim or of a lemma (every id `ids()` lists).
    let admissible_of = |id: &str| s.catalog.by_id(id).map(|c| c.admissible(&x)).or_else(|| super::claims::lemma_by_id(id).map(|l| l.admissible(&x)));
    let resolve = |field: &str, spec: &StepSpec, pick: &dyn Fn(&AdmissibleSteps) -> f64| -> Result<f64> {
        let v = match spec {
            StepSpec::Value(v) => *v,
            StepSpec::Admissible { admissible, factor } => {
                let steps = admissible_of(admissible).ok_or_else(|| {
                    Error::field(format!("algorithm.{field}.admissible"), format!("unknown claim `{admissible}`"), s.catalog.ids().join(", "))
                })?;
                pick(&steps) * factor
            }
        };
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(Error::field(format!("algorithm.{field}"), format!("resolves to {v} (a rule that needs a finite b^2 or F0 > 0?)"), "a finite number > 0"))
        }
    };
    let admissible_gamma = |steps: &AdmissibleSteps| steps.gamma.value();
    let eta_u = resolve("eta_u", &a.eta_u, &|steps| steps.eta_u.value())?;
    let eta_v = resolve("eta_v", &a.eta_v, &|steps| steps.eta_v.value())?;
    let (gamma_u, gamma_v) = match (&a.gamma, &a.gamma_u, &a.gamma_v) {
        (Some(gamma), _, _) => {
            let gamma = resolve("gamma", gamma, &admissible_gamma)?;
            (gamma / eta_u, gamma / eta_v)
        }
        (None, Some(gu), Some(gv)) => {
            (resolve("gamma_u", gu, &|steps| admissible_gamma(steps) / eta_u)?, resolve("gamma_v", gv, &|steps| admissible_gamma(steps) / eta_v)?)
        }
        _ => return Err(Error::field("algorithm.gamma", "give either gamma, or both gamma_u and gamma_v", "gamma, or gamma_u and gamma_v")),
    };
    RoundConfig { k: a.k, m: a.m, gamma_u, gamma_v, eta_u, eta_v }.check(n)
}

/// Claim inputs of a run with resolved parameters.
pub fn claim_inputs(inst: &QuadraticInstance, c: &ProblemConstants, p: &RoundParams, rounds: usize) -> ClaimInputs {
    ClaimInputs { gamma_u: p.gamma_u, gamma_v: p.gamma_v, eta_u: p.eta_u, eta_v: p.eta_v, ..base_inputs(inst, c, p.k, p.m, rounds) }
}

/// The runs of a scenario: per-round gradient summaries and which estimator they serve.
pub struct Runs {
    /// One series per replicate (Monte Carlo), or the single series of exact expectations.
    pub summaries: Vec<Vec<GradientSummary>>,
    /// The estimator.
    pub estimator: Estimator,
    /// Supremum of the BGD quantity over the iterates visited by seeded runs (the empirical
    /// `b^2`); computed only when the exact `b^2` is infinite or Monte Carlo runs exist anyway.
    pub empirical_b2: Option<f64>,
    /// Exact-engine diagnostic: smallest covariance eigenvalue seen (PSD check).
    pub min_covariance_eigenvalue: Option<f64>,
}

fn sup_dissimilarity(trajectories: &[Trajectory]) -> f64 {
    trajectories.iter().flat_map(|tr| tr.summaries.iter().map(|g| g.dissimilarity)).fold(0.0, crate::engine::nan_max)
}

/// Runs the scenario with its estimator: exact moment propagation (default), or Monte Carlo
/// (a single run when the run is deterministic).
pub fn simulate_scenario(s: &Scenario, inst: &QuadraticInstance, p: &RoundParams, opts: &CheckOptions) -> Result<Runs> {
    let alg_box = s.algorithm.kind.build(*p);
    let alg: &dyn crate::families::ccyw::algorithm::Algorithm = alg_box.as_ref();
    let choice = opts.estimator.unwrap_or(s.estimator);
    let bgd_infinite = ProblemConstants::compute(inst)?.bgd.finite().is_none();
    match choice {
        EstimatorChoice::Exact => {
            // `--estimator exact` may ask for it on a Monte Carlo scenario, sized for less.
            crate::error::require_memory("estimator (exact) with instance.n, instance.du, instance.dv", matrix_bytes(s, true), "the exact engine's matrices")?;
            let series = exact_series(inst, alg, s.rounds, &InclusionMoments::without_replacement(p.n, p.m));
            // The empirical b^2 is a supremum over visited iterates, which only sampled runs have.
            let empirical_b2 = if bgd_infinite {
                let trajectories = in_pool(opts.threads, || simulate(inst, alg, s.rounds, s.seed, s.replicates))?;
                Some(sup_dissimilarity(&trajectories))
            } else {
                None
            };
            Ok(Runs {
                summaries: vec![series.summaries],
                estimator: Estimator::Exact,
                empirical_b2,
                min_covariance_eigenvalue: Some(series.min_covariance_eigenvalue),
            })
        }
        EstimatorChoice::MonteCarlo => {
            // Noiseless also makes a random initialization deterministic (it only draws gradient noise).
            let deterministic = inst.is_noiseless() && p.m == p.n;
            let (estimator, replicates) = if deterministic { (Estimator::Deterministic, 1) } else { (Estimator::MonteCarlo, s.replicates) };
            let trajectories = in_pool(opts.threads, || simulate(inst, alg, s.rounds, s.seed, replicates))?;
            Ok(Runs {
                empirical_b2: Some(sup_dissimilarity(&trajectories)),
                summaries: trajectories.into_iter().map(|t| t.summaries).collect(),
                estimator,
                min_covariance_eigenvalue: None,
            })
        }
    }
}

/// The claims and lemmas a check evaluates.
#[derive(Clone)]
pub struct Selection {
    /// Bound claims (theorems, corollaries, special cases).
    pub claims: Vec<&'static dyn Claim>,
    /// Lemma-level claims.
    pub lemmas: Vec<&'static dyn LemmaClaim>,
}

impl Selection {
    /// Every built-in claim and lemma.
    pub fn all() -> Self {
        Self::all_in(&Catalog::default())
    }

    /// Every claim of `catalog` and every lemma.
    pub fn all_in(catalog: &Catalog) -> Self {
        Self { claims: catalog.claims(), lemmas: crate::families::ccyw::claims::all_lemmas() }
    }

    /// The claims and lemmas of `catalog` with these ids (all when `ids` is empty).
    ///
    /// # Errors
    /// [`Error::Unknown`] naming an id that is neither.
    pub fn by_ids(ids: &[String], catalog: &Catalog) -> Result<Self> {
        if ids.is_empty() {
            return Ok(Self::all_in(catalog));
        }
        let mut sel = Self { claims: Vec::new(), lemmas: Vec::new() };
        for id in ids {
            if let Some(c) = catalog.by_id(id) {
                sel.claims.push(c);
            } else if let Some(l) = crate::families::ccyw::claims::lemma_by_id(id) {
                sel.lemmas.push(l);
            } else {
                return Err(Error::Unknown { kind: "claim", name: id.clone(), known: catalog.ids().join(", ") });
            }
        }
        Ok(sel)
    }

    /// Whether anything selected concerns `kind`.
    pub fn concerns(&self, kind: crate::families::ccyw::algorithm::AlgorithmKind) -> bool {
        self.claims.iter().any(|c| c.algorithm() == kind) || self.lemmas.iter().any(|l| l.algorithm() == kind)
    }
}

/// Runs a scenario and evaluates the selection on it.
///
/// # Errors
/// Any error of building the instance, computing its constants or resolving its steps.
pub fn run_scenario(s: &Scenario, selection: &Selection, opts: &CheckOptions) -> Result<ScenarioRun> {
    run_prepared(s, prepare(s)?, selection, opts)
}

/// [`run_scenario`] on a prepared scenario.
///
/// # Errors
/// A run that fails numerically; a worker pool that cannot start.
pub fn run_prepared(s: &Scenario, prepared: Prepared, selection: &Selection, opts: &CheckOptions) -> Result<ScenarioRun> {
    let runs = simulate_scenario(s, &prepared.instance, &prepared.params, opts)?;
    let lemmas = lemma_results(s, &prepared, &selection.lemmas, opts)?;
    let mut run = evaluate_runs(s, prepared, &runs, &selection.claims, opts);
    run.results.extend(lemmas);
    Ok(run)
}

/// The results of the `lemmas` about the scenario's algorithm: each lemma's sides from the
/// scenario's seeded replicates over every one of its `T` rounds (one replicate when the run is
/// deterministic), compared round by round with intervals: a lemma speaks of every round, and
/// a lemma with a memory term (`C^t`, Lemma 4.4) is tightest only after many rounds when few of
/// many clients are sampled (on `scaffold-many-clients-one-sampled` its slack still fell at round
/// 300, where an earlier cut had stopped).
///
/// # Errors
/// A worker pool that cannot start.
pub fn lemma_results(s: &Scenario, prepared: &Prepared, lemmas: &[&'static dyn LemmaClaim], opts: &CheckOptions) -> Result<Vec<ClaimResult>> {
    let mine: Vec<&'static dyn LemmaClaim> = lemmas.iter().copied().filter(|l| l.algorithm() == s.algorithm.kind).collect();
    if mine.is_empty() {
        return Ok(Vec::new());
    }
    let alg = s.algorithm.kind.build(prepared.params);
    let (q, estimator) = in_pool(opts.threads, || check_quantities(&prepared.instance, alg.as_ref(), s.rounds, s.seed, s.replicates))?;
    let inputs = claim_inputs(&prepared.instance, &prepared.constants, &prepared.params, s.rounds);
    let scale = opts.bound_scale.unwrap_or(1.0);
    Ok(mine
        .into_iter()
        .map(|lemma| ClaimResult {
            claim: lemma.id(),
            reading: lemma.reading().name,
            constants: ConstantsSource::Exact,
            label: None,
            evaluation: evaluate_lemma(lemma, &inputs, &q, estimator, s.confidence, scale),
            expected: s.expected.get(lemma.id()).copied(),
        })
        .collect())
}

/// A scenario's instance, constants and resolved parameters (everything before the runs).
pub struct Prepared {
    /// The instance.
    pub instance: QuadraticInstance,
    /// Its exact constants.
    pub constants: ProblemConstants,
    /// Resolved parameters.
    pub params: RoundParams,
}

/// Builds the instance, computes its constants and resolves the step rules.
///
/// # Errors
/// Any error of those three steps, naming the field at fault.
pub fn prepare(s: &Scenario) -> Result<Prepared> {
    let instance = s.instance.build()?;
    require_run_memory(s, &instance)?;
    let constants = ProblemConstants::compute(&instance)?;
    prepare_built(s, (instance, constants))
}

/// [`prepare`] given `s`'s instance and its constants, built already (the search builds them to
/// decode a candidate's steps): the same result, without building them again.
///
/// # Errors
/// As [`prepare`].
pub fn prepare_built(s: &Scenario, (instance, constants): (QuadraticInstance, ProblemConstants)) -> Result<Prepared> {
    require_run_memory(s, &instance)?;
    let params = resolve_params(s, &instance, &constants)?;
    Ok(Prepared { instance, constants, params })
}

/// The state's dimension `D` and the sizes of the exact engine's blocks: the shared block `s`
/// (`u`, and Scaffold-P's server variate) and each client's own block `b` (`v_i`, and its
/// control variate), from the scenario's sizes.
fn state_blocks(s: &Scenario) -> (f64, f64, f64) {
    let (n, du, dv) = client_sizes(s);
    let [n, du, dv] = [n, du, dv].map(|x| x as f64);
    if s.algorithm.kind == crate::families::ccyw::algorithm::AlgorithmKind::ScaffoldP {
        (du + n * dv + (n + 1.0) * du, 2.0 * du, dv + du)
    } else {
        (du + n * dv, du, dv)
    }
}

/// The clients `n` and a client's blocks `du`, `dv`, as the scenario writes them.
fn client_sizes(s: &Scenario) -> (usize, usize, usize) {
    match &s.instance {
        crate::families::ccyw::card::InstanceSource::Generated(g) => (g.n, g.du, g.dv),
        crate::families::ccyw::card::InstanceSource::Explicit(e) => (e.clients.len(), e.du, e.dv),
    }
}

/// The estimated work of a scenario (see [`crate::budget`]), from its sizes alone.
///
/// # Formula
/// With `p = du + dv` (a client's variables), `D` the state's dimension (`du + n dv`, and
/// `(n + 1) du` more for Scaffold-P's control variates), `s` and `b` the shared and own blocks
/// of the exact engine (`du` and `dv`; `2 du` and `dv + du` for Scaffold-P), `K` local steps, `m`
/// sampled clients, `T` rounds and `R` replicates: probing a round's affine maps,
/// `n (2 p log2 D + K p) (D + K p^2)` (each probe runs a client's `K` steps and copies the
/// state; the columns a client reads are found by bisection); the exact propagation and metrics,
/// `T D^2 (2 s + b + 3) / 4` (four-wide fused multiply-adds: the structured rounds' loops and
/// products are contiguous); the Monte Carlo replicates (run for an empirical `b^2` and the
/// lemmas too), `R T m K p^2`; each round's bookkeeping in the exact run and every replicate
/// (its summary, checkpoints and keyed draws), `600 (R + 1) T` (measured: 1e6 rounds of 2
/// replicates on a 6-dimensional state take 5.3 s, almost all of it this term). The memory it
/// holds is [`peak_bytes`].
pub fn work(s: &Scenario) -> crate::budget::Work {
    /// Multiply-add equivalents of one round's bookkeeping in one run (see the formula above).
    const ROUND_BOOKKEEPING: f64 = 600.0;
    let (d, shared, own) = state_blocks(s);
    let (n, du, dv) = client_sizes(s);
    let [n, du, dv, k, m, t, r] = [n, du, dv, s.algorithm.k, s.algorithm.m, s.rounds, s.replicates].map(|x| x as f64);
    let p = du + dv;
    let probe = n * (2.0 * p * d.max(2.0).log2() + k * p) * (d + k * p * p);
    let total = probe + t * d * d * (2.0 * shared + own + 3.0) / 4.0 + r * t * m * k * p * p + ROUND_BOOKKEEPING * (r + 1.0) * t;
    let formula = "n (2 p log2 D + K p) (D + K p^2) + T D^2 (2 s + b + 3) / 4 + R T m K p^2 + 600 (R + 1) T (p = du + dv, D = state dimension, s and b its shared and own blocks)";
    crate::budget::Work::new("rounds, replicates, algorithm.k, algorithm.m, instance.n, instance.du, instance.dv", formula, total)
        .holding(matrix_bytes(s, s.estimator == EstimatorChoice::Exact))
}

/// The matrices a run of `s` holds (bytes): the exact engine's [`peak_bytes`] when `exact`,
/// else four `D x D` matrices, `32 D^2` (Monte Carlo holds no `D x D` moments; the allowance is
/// the one every run had before the exact engine's was measured).
fn matrix_bytes(s: &Scenario, exact: bool) -> f64 {
    let (d, _, _) = state_blocks(s);
    let (n, du, dv) = client_sizes(s);
    match exact {
        true => peak_bytes(d, n as f64, s.algorithm.k as f64, (du + dv) as f64),
        false => 32.0 * d * d,
    }
}

/// The most memory the exact engine and the probe of a round's maps hold at once (bytes), for a
/// state of dimension `D`, `n` clients of `p` variables and `K` local steps.
///
/// # Formula
/// `112 D^2 + 32 n K p^2`: fourteen `D x D` matrices (the moments and the next ones, their copies
/// in the engine's order, the round's maps and the stationary solve's blocks) and four `p x p`
/// per client and local step of the probe.
///
/// Peak resident memory measured on checks of one round, less the program's 28 MB, in units of
/// `D^2` bytes: Scaffold-P (`n = 10, dv = 0`) 94, 88 and 87 at `du = 128, 256, 360` with `K = 1`,
/// 135 at `du = 128, K = 25`; FedAvg-P 53 at `dv = 440, K = 1`. This bound gives 112 and, at
/// `du = 128, K = 25`, 167. (Four `D x D` matrices, the estimate before, were a third to a half of
/// what the runs hold.)
pub fn peak_bytes(d: f64, n: f64, k: f64, p: f64) -> f64 {
    112.0 * d * d + 32.0 * n * k * p * p
}

/// Refuses a scenario whose runs would not fit in memory, before they start.
///
/// # Formula
/// Bytes planned: the per-round summaries of every replicate, `40 R T` (the exact estimator keeps
/// one series but may run the replicates for an empirical `b^2`), the lemma quantities of every
/// round, `64 R T`, and the matrices ([`matrix_bytes`]: the exact engine's [`peak_bytes`]).
///
/// # Errors
/// [`Error::InvalidField`] naming `rounds` and `replicates` with the size needed.
fn require_run_memory(s: &Scenario, _inst: &QuadraticInstance) -> Result<()> {
    let (r, t) = (s.replicates as f64, s.rounds as f64);
    let bytes = 40.0 * r * t + 64.0 * r * t + matrix_bytes(s, s.estimator == EstimatorChoice::Exact);
    crate::error::require_memory("rounds, replicates (and the instance's size)", bytes, "the runs' per-round summaries and moments")
}

/// Replaces a failed A2.3 line by one that says why this instance's `b^2` is infinite.
pub fn explain_infinite_bgd(failed: &mut [String], constants: &ProblemConstants) {
    if let crate::families::ccyw::problem::BgdConstant::Infinite { reason } = &constants.bgd {
        for f in failed.iter_mut().filter(|f| f.starts_with("A2.3")) {
            *f = format!("A2.3 bounded gradient dissimilarity fails: b^2 is infinite because {reason}");
        }
    }
}

/// Evaluates `claims` on finished runs.
pub fn evaluate_runs(s: &Scenario, prepared: Prepared, runs: &Runs, claims: &[&'static dyn Claim], opts: &CheckOptions) -> ScenarioRun {
    let Prepared { instance: inst, constants, params } = prepared;
    let inputs = claim_inputs(&inst, &constants, &params, s.rounds);
    let empirical_b2 = runs.empirical_b2.unwrap_or(f64::NAN);
    let scale = opts.bound_scale.unwrap_or(1.0);
    let label = format!("empirical b^2 = {}", fmt_num(empirical_b2));
    let floor = super::resolution::metric_floor(&inst, &constants, params.k, s.rounds);
    let results = claims
        .iter()
        .filter(|claim| claim.algorithm() == s.algorithm.kind)
        .flat_map(|claim| {
            let metric: Vec<Vec<f64>> =
                runs.summaries.iter().map(|series| series.iter().map(|g| claim.metric().value(g, params.m, params.n)).collect()).collect();
            // Every evaluation, as stated or with the empirical b^2, undecided below the resolution.
            let resolved = |inputs: &ClaimInputs| {
                let mut e = evaluate(*claim, inputs, &metric, runs.estimator, s.confidence, scale);
                super::resolution::undecide_below_resolution(&mut e, floor);
                e
            };
            let mut evaluation = resolved(&inputs);
            let bgd_fails = inputs.b2.is_none() && evaluation.checks.iter().any(|c| c.name.starts_with("A2.3") && !c.holds);
            let empirical = if bgd_fails {
                explain_infinite_bgd(&mut evaluation.failed, &constants);
                let emp_inputs = ClaimInputs { b2: Some(empirical_b2), ..inputs };
                Some(resolved(&emp_inputs))
            } else {
                None
            };
            let result = |constants, label, evaluation, expected| ClaimResult {
                claim: claim.id(),
                reading: claim.reading().name,
                constants,
                label,
                evaluation,
                expected,
            };
            let exact = result(ConstantsSource::Exact, None, evaluation, s.expected.get(claim.id()).copied());
            let empirical = empirical.map(|e| result(ConstantsSource::Empirical, Some(label.clone()), e, s.expected_empirical.get(claim.id()).copied()));
            std::iter::once(exact).chain(empirical)
        })
        .collect();
    ScenarioRun {
        scenario: s.name.clone(),
        description: s.description.clone(),
        algorithm: s.algorithm.kind,
        scenario_hash: s.hash(),
        seed: s.seed,
        replicates: runs.summaries.len(),
        rounds: s.rounds,
        confidence: s.confidence,
        estimator: runs.estimator,
        constants,
        layout: inst.layout(),
        params,
        empirical_b2,
        min_covariance_eigenvalue: runs.min_covariance_eigenvalue,
        results,
        expected_empirical: s.expected_empirical.clone(),
    }
}
