//! The pipeline of one FedPLT scenario: instance and constants -> schedule -> sample paths
//! (alignment) and exact moments -> claim inputs -> verdicts.

use std::collections::BTreeMap;

use nalgebra::DVector;
use serde::{Deserialize, Serialize};

use crate::checker::ClaimResult;
use crate::claim::{fmt_num, BoundClaim};
use crate::engine::Estimator;
use crate::error::{require_count, require_memory, require_step, Error, Result};
use crate::verdict::{evaluate, evaluate_inequality, ConstantsSource, Evaluation, VerdictKind};

use super::a6::{A6ForAllW, LimitAlignment};
use super::algorithm::LocalGradient;
use super::claims::{
    decaying_constant, divergence_bound, equality_solution, induction_at, recursion_rhs, variance_bound, Alpha, FedPltClaim, Inputs, RECURSION_HORIZON,
};
use super::explicit::InstanceInput;
use super::formulas::{needs_g2, Claim};
use super::problem::{Constants, Instance};
use super::runs::{exact_run, half_life, sample_paths, small_step_limit, steady_distance, Alignment, AlignmentFailure, ResidualPoint, RunSetup, Schedule};

/// How a scenario sets the step: a table with exactly one of `constant`, `constant_over_l` and
/// `decaying` ([`crate::strict::one_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
pub enum StepSpec {
    /// `eta^t = value`.
    Constant(f64),
    /// `eta^t = factor / L`.
    ConstantOverL(f64),
    /// `eta^t = beta / (z (t + offset))` with this run's `z`; the paper's schedule is
    /// `beta = 1, offset = 1` (001:L659).
    Decaying {
        /// `beta > 0`.
        beta: f64,
        /// `offset > 0`.
        offset: f64,
    },
}

impl<'de> Deserialize<'de> for StepSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        crate::strict::one_of(deserializer, &["constant", "constant_over_l", "decaying"], StepSpec::deserialize)
    }
}

impl Serialize for StepSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        StepSpec::serialize(self, serializer)
    }
}

/// One scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The family (`"fedplt"`); not part of the hash.
    #[serde(default, skip_serializing)]
    pub family: Option<String>,
    /// Unique name.
    pub name: String,
    /// What it probes.
    #[serde(default)]
    pub description: String,
    /// Horizon `T`.
    pub rounds: usize,
    /// Sample paths for the alignment ratios (one when the run is deterministic).
    pub replicates: usize,
    /// Seed of the sample paths.
    pub seed: u64,
    /// Local steps `tau >= 1`.
    pub tau: usize,
    /// `sgd` (eq. 4) or `full` (eq. 5).
    #[serde(default)]
    pub gradient: LocalGradient,
    /// The step.
    pub step: StepSpec,
    /// The instance: a seeded recipe or explicit numbers ([`InstanceInput`]).
    pub instance: InstanceInput,
    /// Expected verdict per claim id (the claim as stated).
    #[serde(default)]
    pub expected: BTreeMap<String, VerdictKind>,
    /// Expected verdict of the empirical evaluation (`G^2` measured on the run).
    #[serde(default)]
    pub expected_empirical: BTreeMap<String, VerdictKind>,
}

impl crate::checker::CardScenario for Scenario {
    fn name(&self) -> &str {
        &self.name
    }
    fn expected_claims(&self) -> Vec<&str> {
        self.expected.keys().chain(self.expected_empirical.keys()).map(String::as_str).collect()
    }
}

/// The most memory a check of `k` clients in dimension `d` holds at once in its `d x d` matrices
/// (bytes): `8 d^2 (20 + 14 k)`, twenty matrices for the instance, its exact moments and the
/// psi-step forms, and fourteen per client.
///
/// Peak resident memory of whole checks (2 rounds, 2 replicates), less the 28 MB of a `d = 6`
/// check, in units of `d^2` bytes: 242, 276 and 252 at `k = 2` and `d = 500, 1000, 2000`; 429 at
/// `k = 4, d = 1000`; 468 at `k = 4, d = 512`; 733 at `k = 8, d = 500`; 3,330 at `k = 32, d =
/// 256` (the per-client part grows to about 100 `d^2` at small `d`). This bound gives 440, 608,
/// 608, 1,056 and 3,744.
pub fn peak_matrix_bytes(k: f64, d: f64) -> f64 {
    8.0 * d * d * (20.0 + 14.0 * k)
}

/// Largest horizon a scenario may ask for.
pub const MAX_ROUNDS: usize = 10_000_000;

impl Scenario {
    /// Checks the run parameters and the expected-verdict keys (each one of `known`, the claim
    /// ids of the card the scenario is read from).
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the field.
    pub fn check(&self, field: &str, known: &[&str]) -> Result<()> {
        self.check_run(field)?;
        crate::card::require_known_claims(field, self.expected.keys().chain(self.expected_empirical.keys()), known)
    }

    /// Checks the run parameters: family, horizon, replicates, local steps, step, memory.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the field.
    pub fn check_run(&self, field: &str) -> Result<()> {
        crate::card::require_family(field, self.family.as_deref(), super::FAMILY_ID)?;
        require_count(&format!("{field}.rounds"), self.rounds, 1, MAX_ROUNDS)?;
        require_count(&format!("{field}.replicates"), self.replicates, 1, usize::MAX)?;
        require_count(&format!("{field}.tau"), self.tau, 1, 10_000)?;
        let steps = match self.step {
            StepSpec::Constant(v) => vec![("constant", v)],
            StepSpec::ConstantOverL(v) => vec![("constant_over_l", v)],
            StepSpec::Decaying { beta, offset } => vec![("decaying.beta", beta), ("decaying.offset", offset)],
        };
        for (name, v) in steps {
            require_step(&format!("{field}.step.{name}"), v)?;
        }
        let (k, d) = (self.instance.clients() as f64, self.instance.dim() as f64);
        require_memory(&format!("{field}.instance.clients, {field}.instance.dim"), peak_matrix_bytes(k, d), "the run's dim x dim matrices")?;
        let bytes = 8.0 * self.replicates as f64 * (self.rounds as f64 + 1.0) * 2.0 + 8.0 * self.rounds as f64 * 4.0;
        require_memory(&format!("{field}.rounds, {field}.replicates"), bytes, "the runs' per-round series")
    }

    /// The estimated work (see [`crate::budget`]): with `K` clients, `d` the dimension, `tau`
    /// local steps, `T` rounds, `R` replicates and `Z` passes of the step schedule (8 for a
    /// decaying step, else 1), the sampled paths `Z R T K (tau d^2 + 250)`, the exact moments and
    /// the per-round checks `Z T (K d^3 + 10^4)`, and the probe of a round's maps
    /// `K (d + tau d) tau (d^2 + tau d)` (each of its `d + tau d` probes runs `tau` steps that
    /// each read a noise vector of `tau d` entries), holding `8 K (d + tau d) d` bytes. The constant terms are each
    /// round's fixed cost, measured (`1e5` rounds of 4 clients in dimension 6 take about 4 s).
    pub fn work(&self) -> crate::budget::Work {
        let [k, d, tau, t, r] = [self.instance.clients(), self.instance.dim(), self.tau, self.rounds, self.replicates].map(|x| x as f64);
        let z = if matches!(self.step, StepSpec::Decaying { .. }) { Z_ITERATIONS as f64 } else { 1.0 };
        let total = z * r * t * k * (tau * d * d + 250.0) + z * t * (k * d * d * d + 1e4) + k * (d + tau * d) * tau * (d * d + tau * d);
        let formula = "Z R T K (tau d^2 + 250) + Z T (K d^3 + 1e4) + K (d + tau d) tau (d^2 + tau d) (K clients, d = dim, Z = 8 for a decaying step)";
        crate::budget::Work::new("rounds, replicates, tau, instance.clients, instance.dim", formula, total).holding(8.0 * k * (d + tau * d) * d)
    }
}

/// Everything computed for one scenario: the scenario (its name, description, horizon, local
/// steps and gradient) and its hash, the schedule run, the exact constants, the measured
/// alignment, the numbers measured on the run, the exact `D^t` (`t = 0..=T`), `||E W^T - W*||`,
/// the small-step limit of the masked dynamics, and the results: per claim the claim as stated,
/// then (for a claim that reads `G^2`) the labelled empirical evaluation.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    pub scenario: Scenario,
    pub scenario_hash: String,
    pub schedule: Schedule,
    pub constants: Constants,
    pub alignment: Alignment,
    pub measured: Measured,
    pub distance: Vec<f64>,
    pub final_mean_gap: f64,
    pub limit_point: Vec<f64>,
    /// The clients' masks `m_k` as realised on the instance (`[k][i]`, 0 or 1).
    pub masks: Vec<Vec<f64>>,
    /// The clients' step factors `s_k` (`eta_k = s_k eta^t`) when they differ; `None` when every
    /// client takes the schedule's step (equal factors are folded into the schedule,
    /// [`common_step_run`]).
    pub step_scales: Option<Vec<f64>>,
    /// Assumption 6 for all `W`, decided exactly ([`super::a6`]).
    pub a6_for_all_w: A6ForAllW,
    /// The round's quantities of Steps 3 and 4.6 ([`RoundSteps`]).
    pub steps: RoundSteps,
    pub results: Vec<ClaimResult>,
}

/// What a run gives the proof's per-round steps FEDPLT-VAR-L276 and FEDPLT-DIV-L592.
#[derive(Debug, Clone)]
pub struct RoundSteps {
    /// `E||Delta^t - bar Delta^t||^2 / (eta^t)^2 = (sigma^2 / d) sum_i psi_i^2 sum_k c_k^2 (m_k)_i`
    /// in the one-gradient model (001:L250-276): the noise `(sigma / sqrt(d)) xi_k` of the clients
    /// is independent and zero-mean, so the cross terms vanish; 0 for full gradients (eq. 5).
    /// With covariances `S_k`: `sum_i psi_i^2 sum_k c_k^2 (m_k)_i (S_k)_ii`. With per-client steps
    /// `eta_k = s_k eta^t`, each client's term carries `s_k^2` (Step 3 client by client:
    /// `E||delta_k^t||^2 <= eta_k^2 sigma^2`, 001:L272).
    pub update_noise: f64,
    /// `sum_k c_k^2 s_k^2 alpha_{r_k}^2`, alpha as printed (001:L276), with the clients' step
    /// factors `s_k` (`eta_k = s_k eta^t`; 1 without them).
    pub c2_alpha2: f64,
    /// `sum_k c_k s_k^2 alpha_{r_k}^2`: `Gamma` of 001:L588 with each client's step factor, so that
    /// `(eta^t)^2 tau^2 (G^2 + sigma^2)` times it is the bound of 001:L592 taken client by client
    /// (`||W_k^{t,tau} - W^t||^2 <= eta_k^2 tau^2 alpha_{r_k}^2 (G^2 + sigma^2)`); `Gamma` itself
    /// without per-client factors.
    pub gamma_steps: f64,
    /// `E sum_k c_k ||W_k^{t,tau} - W^t||^2`, `t = 0..T` (001:L554), exact.
    pub divergence: Vec<f64>,
    /// `sup E||grad F(W_k^{t,s})||^2` over the run: `G^2` of Assumption 5 as printed, along it.
    pub global_gradient_sup: f64,
}

impl RoundSteps {
    /// The steps' quantities of scenario `s` on instance `inst` from its exact run.
    fn new(s: &Scenario, inst: &Instance, c: &Constants, exact: &super::runs::ExactRun) -> Self {
        let noisy = s.gradient == LocalGradient::Sgd;
        let d = inst.dim();
        // s_k^2 (exactly 1 without per-client factors, so every product below is unchanged).
        let s2: Vec<f64> = (0..inst.clients()).map(|k| inst.client_step(k, 1.0).powi(2)).collect();
        let update_noise = match &inst.noise {
            _ if !noisy => 0.0,
            None => {
                let coverage2 = |i: usize| inst.masks.iter().zip(&c.weights).zip(&s2).map(|((m, w), f)| w * w * m[i] * f).sum::<f64>();
                c.sigma2 / d as f64 * (0..d).map(|i| c.compensation.psi[i].powi(2) * coverage2(i)).sum::<f64>()
            }
            Some(_) => {
                let diagonals: Vec<DVector<f64>> = (0..inst.clients()).map(|k| inst.noise_diagonal(k) * s2[k]).collect();
                let coverage2 = |i: usize| inst.masks.iter().zip(&c.weights).zip(&diagonals).map(|((m, w), s)| w * w * m[i] * s[i]).sum::<f64>();
                (0..d).map(|i| c.compensation.psi[i].powi(2) * coverage2(i)).sum()
            }
        };
        Self {
            update_noise,
            c2_alpha2: c.weights.iter().zip(&c.alpha).zip(&s2).map(|((w, a), f)| w * w * a * a * f).sum(),
            gamma_steps: c.weights.iter().zip(&c.alpha).zip(&s2).map(|((w, a), f)| w * a * a * f).sum(),
            divergence: exact.divergence.clone(),
            global_gradient_sup: exact.global_gradient_sup,
        }
    }
}

/// The numbers of a run beside each claim's evaluation (`claims/<ID>.json`): `z = mu psi_ rho_`,
/// `G^2` and `B` measured on the run (printed alpha), `rho_` and where A6 failed, and
/// `||W_lim - W*||` of the small-step limit.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Measured {
    pub z: f64,
    pub g2_empirical: f64,
    pub b_empirical: f64,
    pub rho_min: f64,
    pub alignment_failure: Option<AlignmentFailure>,
    pub limit_gap: f64,
    /// The rounding of `||W_lim - W*||`: [`LIMIT_SOLVE_ROUNDING`](super::prec::LIMIT_SOLVE_ROUNDING)
    /// `d eps (kappa_lim + kappa_*) max(||W_lim||, ||W*||)` (both come from linear solves).
    pub limit_rounding: f64,
    /// Assumption 6 at the small-step limit where `W_lim != W*` beyond `limit_rounding`
    /// ([`super::a6::at_limit`]); `None` where the limit is `W*`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_alignment: Option<LimitAlignment>,
    /// [`SmallStepLimit::stability`](super::runs::SmallStepLimit::stability): the dynamics
    /// settle at `W_lim` only where it is above [`LIMIT_STABILITY`](super::prec::LIMIT_STABILITY).
    pub limit_stability: f64,
}

impl crate::checker::RunOutcome for ScenarioRun {
    fn scenario_name(&self) -> &str {
        &self.scenario.name
    }
    fn results(&self) -> &[ClaimResult] {
        &self.results
    }
}

/// The inputs of the run; `g2` as given.
fn inputs(c: &Constants, run: &ScenarioRun, g2: Option<f64>, z_consistent: bool) -> Inputs {
    let sqrt_r: Vec<f64> = c.fractions.iter().map(|r| r.sqrt()).collect();
    let (max, min) = (|v: &[f64]| v.iter().copied().fold(0.0, f64::max), |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min));
    Inputs {
        t: run.scenario.rounds,
        l: c.l,
        mu: c.mu,
        sigma2: c.sigma2,
        tau: run.scenario.tau,
        psi_min: c.compensation.psi_min,
        psi_max: c.compensation.psi_max,
        lambda: c.lambda,
        d0: c.d0,
        gamma_mask: c.gamma_mask,
        gamma_mask_sqrt_r: c.gamma_mask_sqrt_r,
        alpha_max: max(&c.alpha),
        alpha_min: min(&c.alpha),
        sqrt_r_max: max(&sqrt_r),
        sqrt_r_min: min(&sqrt_r),
        g2,
        rho_min: run.alignment.min,
        alignment_failure: run.alignment.first_failure,
        alignment_within_rounding: run.alignment.within_rounding,
        alignment_overflow: run.alignment.first_overflow,
        schedule: run.schedule,
        schedule_z_consistent: z_consistent,
        limit_gap: run.measured.limit_gap * run.measured.limit_gap,
        limit_alignment: run.measured.limit_alignment,
        client_steps: run.step_scales.as_ref().map(|f| {
            let eta = run.schedule.eta(0);
            f.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v * eta), hi.max(v * eta)))
        }),
    }
}

/// Evaluates one claim at inputs `x` on the run.
pub fn evaluate_claim(claim: FedPltClaim, x: &Inputs, run: &ScenarioRun, bound_scale: f64) -> Evaluation {
    let inequality =
        |horizon, sides: &dyn Fn(usize) -> Option<Vec<(f64, f64)>>| evaluate_inequality(claim.checks(x), horizon, sides, Estimator::Exact, 0.99, bound_scale);
    let bound = |x: &Inputs, metric: Vec<f64>| evaluate(&claim, x, &[metric], Estimator::Exact, 0.99, bound_scale);
    let (d, rounds) = (&run.distance, run.scenario.rounds);
    match claim {
        FedPltClaim::Recursion { sqrt_r, .. } => {
            let a = if sqrt_r { Alpha::SqrtR } else { Alpha::Printed };
            inequality(rounds, &|t| Some(vec![(d[t + 1], recursion_rhs(x, a, x.schedule.eta(t), d[t]))]))
        }
        FedPltClaim::ConstantStep | FedPltClaim::DecayingStep { .. } | FedPltClaim::DecayingCorrected => bound(x, d[..rounds].to_vec()),
        FedPltClaim::DecayInduction => inequality(rounds, &|t| Some(vec![induction_at(x, t)])),
        FedPltClaim::DecayRecursion => {
            let (c, b_over_z2) = (decaying_constant(x, true), decaying_constant(x, false));
            let horizon = RECURSION_HORIZON.max(rounds);
            let eq = if b_over_z2.is_finite() { equality_solution(b_over_z2, horizon) } else { Vec::new() };
            // Entry i is D^{i+1} against C/(i+2).
            inequality(horizon, &|i| eq.get(i).map(|v| vec![(*v, c / (i as f64 + 2.0))]))
        }
        // The bound is 0 (convergence to W* exactly), met up to the rounding of the two solves
        // that give W_lim and W*: ||W_lim - W*||^2 against 0 + limit_rounding^2 (a few d eps kappa
        // of max(||W_lim||, ||W*||)). A ratio bound/observed says nothing.
        FedPltClaim::Limit { unconditional } => {
            let rhs = claim.bound(&Inputs { t: 1, ..*x }) + run.measured.limit_rounding.powi(2);
            let evaluation = Evaluation { slack: None, ..inequality(1, &|_| Some(vec![(x.limit_gap, rhs)])) };
            unsettled_limit(evaluation, unconditional, run.measured.limit_stability)
        }
        FedPltClaim::AssumptionSix => a6_evaluation(&run.a6_for_all_w),
        FedPltClaim::PsiStep { updated_only } => super::psi_step::evaluation(&run.alignment.psi_step, usize::from(updated_only), bound_scale),
        FedPltClaim::UpdateVariance => {
            let v = &run.steps;
            inequality(rounds, &|t| {
                let eta = x.schedule.eta(t);
                Some(vec![(eta * eta * v.update_noise, variance_bound(x, eta, v.c2_alpha2))])
            })
        }
        FedPltClaim::LocalDivergence { .. } => {
            let gamma = run.steps.gamma_steps;
            inequality(rounds, &|t| Some(vec![(run.steps.divergence[t], divergence_bound(x, x.schedule.eta(t), gamma))]))
        }
    }
}

/// FEDPLT-LIMIT where the small-step field `diag(psi) sum_k c_k s_k M_k H_k` is unstable at
/// `W_lim` (an eigenvalue with real part `<= 0`, `stability` its smallest over the largest
/// modulus): the dynamics leave it, so they do not converge to `W*` even where `W_lim = W*`. As
/// stated with no assumption that is a violation; under Case 2's A6 (over every `t in N`) it is
/// one only if A6 holds along the whole diverging run, which no finite run decides: inconclusive,
/// unless A6 already failed on the run (not applicable). A stable field leaves `evaluation` as is.
fn unsettled_limit(mut evaluation: Evaluation, unconditional: bool, stability: f64) -> Evaluation {
    if stability > super::prec::LIMIT_STABILITY {
        return evaluation;
    }
    let note = format!(
        "the small-step field diag(psi) sum_k c_k s_k M_k H_k is unstable at W_lim (smallest real part of its eigenvalues / largest modulus = {}): the dynamics do not settle there, nor at W*",
        fmt_num(stability)
    );
    evaluation.verdict = match (unconditional, evaluation.verdict) {
        (true, _) => VerdictKind::Violated,
        (false, VerdictKind::NotApplicable) => VerdictKind::NotApplicable,
        (false, _) => VerdictKind::Inconclusive,
    };
    evaluation.notes.push(note);
    evaluation
}

/// FEDPLT-A6 from the exact decision of Assumption 6 for all `W` (001:L151-155,
/// [`super::a6::decide`]): holds iff `rho_k(W) > 0` for every client wherever it is defined, else
/// violated with the counterexample `W = W* + x` and `rho_k` there in the notes. A strict
/// inequality decided in closed form: no bound, so no slack and no checkpoint.
pub fn a6_evaluation(decision: &A6ForAllW) -> Evaluation {
    let mut notes = vec![decision.describe()];
    let verdict = match decision {
        A6ForAllW::Holds { .. } => VerdictKind::Holds,
        A6ForAllW::Fails { client, x, rho, .. } => {
            let x: Vec<String> = x.iter().map(|v| fmt_num(*v)).collect();
            notes.push(format!("counterexample: client {client}, W = W* + x, x = [{}], rho_k(W) = {}", x.join(", "), fmt_num(*rho)));
            VerdictKind::Violated
        }
    };
    Evaluation {
        verdict,
        slack: None,
        decisive: None,
        checks: Vec::new(),
        failed: Vec::new(),
        notes,
        estimator: Estimator::Exact,
        series: Vec::new(),
        beyond_steps: None,
    }
}

/// Rounds of the fixed-point iteration that makes a decaying schedule's `z` the run's own.
const Z_ITERATIONS: usize = 8;

/// Runs a scenario and evaluates `claims` on it: per claim the claim as stated, then, for one
/// that reads `G^2`, a labelled evaluation with `G^2` measured on the run.
///
/// # Errors
/// Bad input naming the field; a singular instance.
pub fn run_scenario(s: &Scenario, claims: &[Claim], bound_scale: f64) -> Result<ScenarioRun> {
    run_prepared(s, prepare(s)?, claims, bound_scale)
}

/// A scenario's run parameters checked, its instance built and its exact constants computed.
///
/// # Errors
/// Bad input naming the field; a singular instance.
pub fn prepare(s: &Scenario) -> Result<(Instance, Constants)> {
    s.check_run("scenario")?;
    let inst = s.instance.build()?;
    let c = inst.constants()?;
    Ok((inst, c))
}

/// The schedule of `s` and the alignment measured on its sample paths (`paths`), and whether a
/// decaying schedule's `z` is the run's own. The decaying schedule needs `z = mu psi_ rho_`, and
/// `rho_` is measured on the run it drives: iterate until the schedule's `rho_` is the run's
/// (full masks: `rho = 1` at once).
///
/// `scale` multiplies every step: the clients' common step factor ([`common_step_run`]), 1
/// without one.
fn schedule(s: &Scenario, c: &Constants, scale: f64, paths: impl Fn(Schedule) -> Alignment) -> Result<(Schedule, Alignment, bool)> {
    let (beta, offset) = match s.step {
        StepSpec::Constant(eta) => return Ok((Schedule::Constant(scale * eta), paths(Schedule::Constant(scale * eta)), true)),
        StepSpec::ConstantOverL(f) => return Ok((Schedule::Constant(scale * (f / c.l)), paths(Schedule::Constant(scale * (f / c.l))), true)),
        StepSpec::Decaying { beta, offset } => (scale * beta, offset),
    };
    let (base, mut rho, mut found) = (c.mu * c.compensation.psi_min, 1.0, None);
    for _ in 0..Z_ITERATIONS {
        let schedule = Schedule::Decaying { z: base * rho, beta, offset };
        let a = paths(schedule);
        let measured = a.min;
        // A ratio that is not positive (or NaN) ends the iteration: A6 fails on this run.
        let stop = a.first_failure.is_some() || measured.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater);
        let consistent = !stop && (measured - rho).abs() <= super::prec::Z_CONSISTENCY * rho;
        found = Some((schedule, a, consistent));
        if stop || consistent {
            break;
        }
        rho = measured;
    }
    found.ok_or_else(|| Error::Internal("no decaying schedule was run".into()))
}

/// The instance a run uses and the factor its schedule's steps take: when every client's step
/// factor is the same `s` (`eta_k = s eta^t` for all `k`, 1 without factors), the instance without
/// factors and `s`, so the run is the common-step run at `s eta^t`, bit for bit; when they differ,
/// the instance as given and 1.
pub fn common_step_run(inst: Instance) -> (Instance, f64) {
    match inst.common_step_scale() {
        Some(scale) => (Instance { step_scales: None, ..inst }, scale),
        None => (inst, 1.0),
    }
}

/// [`run_scenario`] on a prepared scenario.
///
/// # Errors
/// A singular instance.
pub fn run_prepared(s: &Scenario, (inst, c): (Instance, Constants), claims: &[Claim], bound_scale: f64) -> Result<ScenarioRun> {
    let (inst, scale) = common_step_run(inst);
    let w_star = DVector::from_column_slice(&c.w_star);
    let psi = c.compensation.psi.clone();
    let setup = RunSetup { inst: &inst, psi: &psi, tau: s.tau, gradient: s.gradient, w_star: &w_star };
    let paths = |schedule: Schedule| sample_paths(&setup, schedule, s.rounds, s.seed, s.replicates);
    let (schedule, alignment, z_consistent) = self::schedule(s, &c, scale, paths)?;
    let exact = exact_run(&setup, schedule, s.rounds)?;
    let steps = RoundSteps::new(s, &inst, &c, &exact);
    let small_step = small_step_limit(&inst, &c.compensation.covered, &psi)?;
    let limit = &small_step.point;
    let final_mean = DVector::from_column_slice(&exact.final_mean);
    let z = c.mu * c.compensation.psi_min * alignment.min;
    let (rho_min, alignment_failure, limit_gap) = (alignment.min, alignment.first_failure, (limit - &w_star).norm());
    // Each solve is accurate to about `d eps kappa` of its solution's size.
    let conditions = small_step.condition + inst.minimizer_condition();
    let terms = inst.optima.iter().map(|a| a.norm()).fold(limit.norm().max(w_star.norm()).max(inst.initial.norm()), f64::max);
    let limit_rounding = super::prec::LIMIT_SOLVE_ROUNDING * inst.dim() as f64 * f64::EPSILON * conditions * terms;
    // Where the field is unstable the dynamics do not settle at W_lim, and its ratios say nothing.
    let limit_alignment = (limit_gap > limit_rounding && small_step.is_stable()).then(|| super::a6::at_limit(&inst, limit, &w_star, limit_rounding));
    let mut run = ScenarioRun {
        scenario: s.clone(),
        scenario_hash: crate::card::canonical_hash(s),
        schedule,
        measured: Measured {
            z,
            g2_empirical: exact.local_gradient_sup,
            b_empirical: f64::NAN,
            rho_min,
            alignment_failure,
            limit_gap,
            limit_rounding,
            limit_alignment,
            limit_stability: small_step.stability,
        },
        distance: exact.distance,
        final_mean_gap: (&final_mean - &w_star).norm(),
        limit_point: limit.iter().copied().collect(),
        masks: inst.masks.iter().map(|m| m.iter().copied().collect()).collect(),
        step_scales: inst.step_scales.clone(),
        a6_for_all_w: super::a6::decide(&inst, &w_star),
        steps,
        alignment,
        constants: c.clone(),
        results: Vec::new(),
    };
    let stated = inputs(&c, &run, None, z_consistent);
    let measured = inputs(&c, &run, Some(run.measured.g2_empirical), z_consistent);
    run.measured.b_empirical = measured.b(Alpha::Printed);
    let global = inputs(&c, &run, Some(run.steps.global_gradient_sup), z_consistent);
    let mut results = Vec::new();
    for claim in claims {
        let global_g2 = matches!(claim, Claim::Builtin(FedPltClaim::LocalDivergence { global_gradient: true }));
        let (measured, g2) = if global_g2 { (&global, run.steps.global_gradient_sup) } else { (&measured, run.measured.g2_empirical) };
        let label = format!("empirical G^2 = {}", fmt_num(g2));
        let (id, reading) = (claim.id(), claim.bound().reading().name);
        let at = |x: &Inputs| match claim {
            Claim::Builtin(c) => evaluate_claim(*c, x, &run, bound_scale),
            Claim::Card(c) => evaluate(c.as_ref(), x, &[run.distance[..s.rounds].to_vec()], Estimator::Exact, 0.99, bound_scale),
        };
        let result = |constants, label, evaluation, expected| ClaimResult { claim: id, reading, constants, label, evaluation, expected };
        results.push(result(ConstantsSource::Exact, None, at(&stated), s.expected.get(id).copied()));
        if needs_g2(claim) {
            results.push(result(ConstantsSource::Empirical, Some(label), at(measured), s.expected_empirical.get(id).copied()));
        }
    }
    run.results = results;
    note_vacuous(&mut run);
    undecide_on_divergence(&mut run);
    Ok(run)
}

/// Whether the run's `D^t = E||W^t - W*||^2` diverges: a value that is not finite, or, over 4
/// rounds or more, a last value above [`crate::prec::RUN_DIVERGENCE_GROWTH`] times the largest of
/// the first half of the run (a run that starts at `W*` and fills with noise levels off, one that
/// blows up keeps growing).
pub fn diverges(distance: &[f64]) -> bool {
    // With fewer than 4 rounds the first half is the start alone, which a noisy run may
    // outgrow many times while it contracts.
    if distance.iter().any(|d| !d.is_finite()) {
        return true;
    }
    if distance.len() < 5 {
        return false;
    }
    let (Some(last), first_half) = (distance.last(), &distance[..distance.len().div_ceil(2)]) else { return false };
    let early = first_half.iter().copied().fold(0.0, f64::max);
    distance.iter().any(|d| !d.is_finite()) || (early > 0.0 && *last > crate::prec::RUN_DIVERGENCE_GROWTH * early)
}

/// On a diverging run an empirical constant (`G^2` measured on the run) grows with the horizon,
/// so a bound built from it keeps up with the run and "holds" says nothing: such a "holds" is
/// inconclusive, with a note (a diverged run is violated or inconclusive, never holds).
fn undecide_on_divergence(run: &mut ScenarioRun) {
    let distance = run.distance.as_slice();
    if !diverges(distance) {
        return;
    }
    let note = format!(
        "the run diverges (D^t = E||W^t - W*||^2 from {} to {} over {} rounds): the empirical constant measured on it grows with the horizon, so \"holds\" says nothing",
        fmt_num(distance[0]),
        fmt_num(distance[distance.len() - 1]),
        run.scenario.rounds
    );
    for r in run.results.iter_mut().filter(|r| r.constants == ConstantsSource::Empirical && r.evaluation.verdict == VerdictKind::Holds) {
        r.evaluation.verdict = VerdictKind::Inconclusive;
        r.evaluation.notes.push(note.clone());
    }
}

/// Whether a "holds" is vacuous: slack above [`super::prec::VACUOUS_SLACK`] while `rho_` is
/// positive but below [`super::prec::RHO_NEAR_ZERO`], so the bound (through `1/z`, `z = mu psi_
/// rho_`, 001:L626) is large only because the run's smallest alignment is near 0.
pub fn is_vacuous(evaluation: &Evaluation, rho_min: f64) -> bool {
    let near_zero = rho_min > 0.0 && rho_min < super::prec::RHO_NEAR_ZERO;
    near_zero && evaluation.verdict == VerdictKind::Holds && evaluation.slack.is_some_and(|s| s > super::prec::VACUOUS_SLACK)
}

/// `rho_` by horizon as `T'=h: rho_(h)` pairs ([`Alignment::rho_by_horizon`]).
pub fn fmt_rho_by_horizon(alignment: &Alignment) -> String {
    alignment.rho_by_horizon().iter().map(|(h, v)| format!("T'={h}: {}", fmt_num(*v))).collect::<Vec<_>>().join(", ")
}

/// Adds a note to every vacuous "holds" ([`is_vacuous`]) naming its slack, `rho_`, `z` and
/// `rho_` against the horizon.
fn note_vacuous(run: &mut ScenarioRun) {
    let rho = run.alignment.min;
    let note = |slack: f64| {
        format!(
            "vacuous: slack {} > {} only because rho_ = {} is near 0 (z = {}); rho_ by horizon: {}",
            fmt_num(slack),
            fmt_num(super::prec::VACUOUS_SLACK),
            fmt_num(rho),
            fmt_num(run.measured.z),
            fmt_rho_by_horizon(&run.alignment)
        )
    };
    let notes: Vec<Option<String>> = run.results.iter().map(|r| is_vacuous(&r.evaluation, rho).then(|| note(r.evaluation.slack.unwrap_or(f64::NAN)))).collect();
    for (r, n) in run.results.iter_mut().zip(notes) {
        r.evaluation.notes.extend(n);
    }
}

/// A sweep of constant steps on one scenario: the speed-error trade-off of Case 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResidualSweep {
    /// The scenario swept (its step is replaced).
    pub scenario: String,
    /// The steps, as multiples of `1/L`.
    pub factors: Vec<f64>,
    /// The verdict expected of FEDPLT-TRADEOFF on the sweep ([`super::tradeoff`]).
    #[serde(default)]
    pub expected: Option<String>,
}

/// The exact steady state of `D^t` against the bound's residual `eta B / z` for each step of the
/// sweep (`G^2` and `rho_` measured on the run at that step).
///
/// # Errors
/// Bad input naming the field.
pub fn residual_sweep(s: &Scenario, factors: &[f64]) -> Result<Vec<ResidualPoint>> {
    let point = |f: f64| {
        let at = Scenario { step: StepSpec::ConstantOverL(f), ..s.clone() };
        let run = run_scenario(&at, &[], 1.0)?;
        let ((inst, scale), c, m) = (common_step_run(at.instance.build()?), &run.constants, &run.measured);
        let eta = scale * (f / c.l);
        let (psi, w_star) = (&c.compensation.psi, DVector::from_column_slice(&c.w_star));
        let setup = RunSetup { inst: &inst, psi, tau: at.tau, gradient: at.gradient, w_star: &w_star };
        let steady = steady_distance(&setup, eta)?;
        let half_life = steady.and_then(|d| half_life(&setup, eta, d));
        let client_steps = inputs(c, &run, None, true).client_steps;
        let alignment_failure = run.alignment.first_failure;
        Ok(ResidualPoint {
            eta,
            steady_distance: steady,
            residual_bound: eta * m.b_empirical / m.z,
            z_eta: m.z * eta,
            half_life,
            client_steps,
            alignment_failure,
        })
    };
    factors.iter().map(|&f| point(f)).collect()
}
