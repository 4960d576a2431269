//! The pipeline of one FedCLUP scenario: model and design draws -> exact constants -> exact
//! solutions and statistical errors over a lambda grid -> exact runs of Algorithms 1 and 2 ->
//! claim inputs -> verdicts.

use std::collections::BTreeMap;

use nalgebra::DVector;
use serde::{Deserialize, Serialize};

use crate::claim::Horizon;
use crate::claim::{BoundClaim, ConditionCheck, ConditionKind, Relation};
use crate::engine::Estimator;
use crate::error::{require_step, Error, Result};
use crate::verdict::{evaluate_inequality, ConstantsSource, Evaluation, VerdictKind};

use super::algorithm::{
    alg1_deviations, alg1_linear_part, alg1_lyapunov, alg1_spectral_radius, block, initial_state, per_round_outcomes, run_alg1, run_alg2, to_relative, Alg2Run,
    Batches, Params, MAX_BATCH_OUTCOMES,
};
use super::ball_scaling;
use super::bounds::{self, Opt, Stat};
use super::claims::{ClupClaim, GammaRule, Inputs, Statement};
use super::explicit::ModelInput;
use super::lemmas;
use super::model::{Constants, Instance, Solution};

pub use super::init::{GivenInit, Init};

/// The steps of Algorithms 1 and 2; an omitted value is Corollary 2's choice
/// (`gamma = 1/(2 L_g)`, `eta = 1/(lambda + L)`, `K` of (134)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct StepsSpec {
    /// Global step `gamma > 0`.
    #[serde(default)]
    pub gamma: Option<f64>,
    /// Local step `eta > 0`.
    #[serde(default)]
    pub eta: Option<f64>,
    /// Local steps `K >= 1`.
    #[serde(default)]
    pub k: Option<usize>,
}

/// Multiples of Corollary 2's prescribed parameters (`eta = 1/(lambda + L)`, `gamma = 1/(2 L_g)`,
/// `K` of (134), 003:L185, L1164) for the step room of its conditions: `gamma` and `eta`
/// multiplied, `K` divided (rounded up, at least 1). Only the search sets them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Corollary2Multiples {
    /// Multiple of `gamma`.
    pub gamma: f64,
    /// Multiple of `eta`.
    pub eta: f64,
    /// Divisor of `K`.
    pub k_divisor: f64,
}

impl Default for Corollary2Multiples {
    fn default() -> Self {
        Self { gamma: 1.0, eta: 1.0, k_divisor: 1.0 }
    }
}

impl Corollary2Multiples {
    /// `p` with these multiples applied.
    pub fn apply(&self, p: Params) -> Params {
        let k = ((p.k as f64 / self.k_divisor).ceil() as usize).max(1);
        Params { gamma: p.gamma * self.gamma, eta: p.eta * self.eta, k, ..p }
    }
}

/// Design draws of a recipe that does not say.
const DEFAULT_DESIGNS: usize = 2;
fn default_true() -> bool {
    true
}
fn default_epsilon() -> f64 {
    1e-8
}

/// One scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The family (`"clup"`); not part of the hash.
    #[serde(default, skip_serializing)]
    pub family: Option<String>,
    /// Unique name.
    pub name: String,
    /// What it probes.
    #[serde(default)]
    pub description: String,
    /// The data: a seeded recipe or explicit numbers ([`ModelInput`]).
    pub model: ModelInput,
    /// Design draws the statistical claims are checked on (2 when omitted with a recipe; the
    /// draws given with explicit data, which it must equal when given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub designs: Option<usize>,
    /// Whether the statistical claims (Lemma 1, Theorem 1, Corollary 1) run on this scenario.
    #[serde(default = "default_true")]
    pub statistics: bool,
    /// `lambda > 0` of the algorithms.
    pub lambda: f64,
    /// Horizon `T`.
    pub rounds: usize,
    /// Steps of the algorithms.
    #[serde(default)]
    pub steps: StepsSpec,
    /// Algorithm 2's batch size `B` (Theorem 3 runs only when given).
    #[serde(default)]
    pub batch: Option<usize>,
    /// Initialization.
    #[serde(default)]
    pub init: Init,
    /// The lambdas of Corollary 2's communication sweep (none: no sweep).
    #[serde(default)]
    pub lambda_sweep: Vec<f64>,
    /// Target `eps` of the sweep.
    #[serde(default = "default_epsilon")]
    pub epsilon: f64,
    /// The lambdas Theorem 1 and the other statistical claims that walk a grid (Lemmas 1-3,
    /// (35), (52), the monotonicity of q) are compared at: increasing, `>= 0` (`0` is
    /// LocalTrain); omitted: [`lambda_grid`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda_grid: Option<Vec<f64>>,
    /// Corollary 2's parameters moved past their conditions (the search's step room; omitted:
    /// the corollary's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corollary2_multiples: Option<Corollary2Multiples>,
    /// Expected verdict per claim id.
    #[serde(default)]
    pub expected: BTreeMap<String, VerdictKind>,
}

impl crate::checker::CardScenario for Scenario {
    fn name(&self) -> &str {
        &self.name
    }
    fn expected_claims(&self) -> Vec<&str> {
        self.expected.keys().map(String::as_str).collect()
    }
}

/// Largest horizon.
pub const MAX_ROUNDS: usize = 100_000;
/// Largest `K`.
pub const MAX_K: usize = 100_000;
/// Largest number of design draws.
pub const MAX_DESIGNS: usize = super::explicit::MAX_DRAWS;
/// Largest number of lambdas of a scenario's `lambda_grid`.
pub const MAX_GRID: usize = 1000;
/// Round cap of the communication sweep.
pub const SWEEP_ROUND_CAP: usize = 200_000;

impl Scenario {
    /// SHA-256 of the canonical JSON form (first 16 hex digits); a recipe's omitted `designs`
    /// hashed as its value, 2.
    pub fn hash(&self) -> String {
        match (&self.model, self.designs) {
            (ModelInput::Seeded(_), None) => crate::card::canonical_hash(&Self { designs: Some(DEFAULT_DESIGNS), ..self.clone() }),
            _ => crate::card::canonical_hash(self),
        }
    }

    /// The number of design draws: as given, the explicit draws, or 2.
    pub fn designs(&self) -> usize {
        self.designs.or(self.model.draws()).unwrap_or(DEFAULT_DESIGNS)
    }

    /// The lambdas of the statistical claims: the scenario's `lambda_grid` or [`lambda_grid`].
    pub fn grid(&self) -> Vec<f64> {
        self.lambda_grid.clone().unwrap_or_else(lambda_grid)
    }

    /// Whether Algorithm 2's one-batch-per-round reading runs: its batches `C(n, B)` are
    /// enumerated, at most [`MAX_BATCH_OUTCOMES`] of them.
    pub fn one_batch_runs(&self) -> bool {
        self.batch.is_some_and(|b| per_round_outcomes(self.model.n(), b) <= MAX_BATCH_OUTCOMES as f64)
    }

    /// Checks every field, naming the one at fault.
    ///
    /// # Errors
    /// [`Error::InvalidField`].
    pub fn check(&self, field: &str) -> Result<()> {
        crate::card::require_family(field, self.family.as_deref(), super::FAMILY_ID)?;
        self.model.check(&format!("{field}.model"))?;
        if crate::error::require_step(&format!("{field}.lambda"), self.lambda).is_err() {
            return Err(Error::field(
                format!("{field}.lambda"),
                format!("got {}", self.lambda),
                "a finite number > 0 in [1e-100, 1e100] (lambda = 0 is LocalTrain, which Theorem 1's sweep covers)",
            ));
        }
        if self.rounds == 0 || self.rounds > MAX_ROUNDS {
            return Err(Error::field(format!("{field}.rounds"), format!("got {}", self.rounds), format!("1 <= rounds <= {MAX_ROUNDS}")));
        }
        match (self.designs, self.model.draws()) {
            (Some(k), Some(given)) if k != given => {
                return Err(Error::field(
                    format!("{field}.designs"),
                    format!("got {k} with {given} draws given"),
                    format!("{given} (the draws of model.draws), or omitted"),
                ));
            }
            (Some(k), _) if k == 0 || k > MAX_DESIGNS => {
                return Err(Error::field(format!("{field}.designs"), format!("got {k}"), format!("1 <= designs <= {MAX_DESIGNS}")));
            }
            _ => {}
        }
        if let Some(g) = self.steps.gamma {
            require_step(&format!("{field}.steps.gamma"), g)?;
        }
        if let Some(e) = self.steps.eta {
            require_step(&format!("{field}.steps.eta"), e)?;
        }
        if let Some(k) = self.steps.k {
            if k == 0 || k > MAX_K {
                return Err(Error::field(format!("{field}.steps.k"), format!("got {k}"), format!("1 <= k <= {MAX_K}")));
            }
        }
        if let Some(b) = self.batch {
            if b == 0 || b > self.model.n() {
                return Err(Error::field(
                    format!("{field}.batch"),
                    format!("got {b} with n = {}", self.model.n()),
                    "1 <= B <= n (batches are drawn without replacement)",
                ));
            }
        }
        self.check_one_batch(field)?;
        self.init.check(&format!("{field}.init"), self.model.m(), self.model.d())?;
        self.check_grid(field)?;
        if let Some(c) = &self.corollary2_multiples {
            for (name, v) in [("gamma", c.gamma), ("eta", c.eta), ("k_divisor", c.k_divisor)] {
                require_step(&format!("{field}.corollary2_multiples.{name}"), v)?;
            }
        }
        for (j, l) in self.lambda_sweep.iter().enumerate() {
            crate::error::require_step(&format!("{field}.lambda_sweep[{j}]"), *l)?;
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(Error::field(format!("{field}.epsilon"), format!("got {}", self.epsilon), "a finite number > 0"));
        }
        let d = (self.model.m() + 1) * self.model.d();
        let bytes = 8.0 * (self.rounds as f64 + 1.0) * d as f64 * 2.0
            + 8.0 * (d * d) as f64 * (self.model.m() * MAX_BATCH_OUTCOMES.min(1 + self.model.n() * self.model.n())) as f64;
        let fields = format!("{field}.rounds, {field}.model.m, {field}.model.n, {field}.model.d");
        crate::error::require_memory(&fields, bytes, "the trajectories (rounds x (m + 1) d) and batch maps (m min(5000, 1 + n^2) x ((m + 1) d)^2)")?;
        Ok(())
    }

    /// An expected verdict of a one-batch-per-round reading of Theorem 3 needs its batches
    /// enumerated ([`Self::one_batch_runs`]); the fresh-batch readings run at any `C(n, B)`.
    fn check_one_batch(&self, field: &str) -> Result<()> {
        let Some(b) = self.batch.filter(|_| !self.one_batch_runs()) else { return Ok(()) };
        let one_batch = super::claims::ALL.iter().filter(|c| matches!(c.statement, Statement::Theorem3 { one_batch: true, .. })).map(|c| c.id);
        match one_batch.into_iter().find(|id| self.expected.contains_key(*id)) {
            Some(id) => Err(Error::field(
                format!("{field}.expected.{id}"),
                format!("C(n, B) = {:.3e} batches of B = {b} of n = {}", per_round_outcomes(self.model.n(), b), self.model.n()),
                format!("C(n, B) <= {MAX_BATCH_OUTCOMES} for the one-batch reading, which enumerates them (the fresh-batch readings run at any C(n, B))"),
            )),
            None => Ok(()),
        }
    }

    /// A given `lambda_grid`: 1 to [`MAX_GRID`] finite lambdas `>= 0`, strictly increasing.
    fn check_grid(&self, field: &str) -> Result<()> {
        let Some(grid) = &self.lambda_grid else { return Ok(()) };
        let f = format!("{field}.lambda_grid");
        crate::error::require_len(&f, grid.len(), 1, MAX_GRID)?;
        crate::explicit::finite(&f, grid)?;
        if let Some(j) = grid.iter().position(|l| *l < 0.0) {
            return Err(Error::field(format!("{f}[{j}]"), format!("got {}", grid[j]), "lambda >= 0 (0 is LocalTrain)"));
        }
        match grid.windows(2).position(|w| w[1] <= w[0]) {
            Some(j) => Err(Error::field(format!("{f}[{}]", j + 1), format!("{} after {}", grid[j + 1], grid[j]), "strictly increasing lambdas")),
            None => Ok(()),
        }
    }

    /// Checks that every claim `expected` names is one of `ids` (the built-in claims and those
    /// the card defines).
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `FIELD.expected.ID`.
    pub fn check_expected(&self, field: &str, ids: &[&str]) -> Result<()> {
        match self.expected.keys().find(|k| !ids.contains(&k.as_str())) {
            Some(key) => Err(Error::field(format!("{field}.expected.{key}"), "unknown claim id", ids.join(", "))),
            None => Ok(()),
        }
    }

    /// The estimated work (see [`crate::budget`]) from the sizes alone, with `K` the local steps
    /// when given and 1 otherwise ([`Self::work_with_k`] with the `K` of (134) once the designs are
    /// drawn).
    pub fn work(&self) -> crate::budget::Work {
        self.work_with_k(self.steps.k.unwrap_or(1))
    }

    /// The estimated work with `k` local steps per round: with `m` clients, `n` samples each, `d`
    /// the dimension, `D = (m + 1) d` the state, `T` rounds, `S` lambdas swept, `C` the batches
    /// enumerated (`C(n, B)` when the one-batch reading runs, 0 otherwise) and `G` a given
    /// `lambda_grid`'s length (0 without one): the runs of every design `designs (1 + S) T (D^2 +
    /// K m d^2)`, the data `designs m n d^2`, Algorithm 2's batch maps `designs T C m D^2`
    /// (measured: 5000 rounds of the card's `low-r` take about 13 s), the statistical errors over a
    /// given grid `designs G m^2 d^4`, per swept lambda the rounds to eps of Figure 2's six `K` and
    /// of Corollary 2's `K`, each up to [`SWEEP_ROUND_CAP`] rounds of a `D x D` map built from `K`
    /// local steps, `S (7 CAP D^2 + (63 + K) D m d^2)`, Figure 3's study of `S + 2` methods over
    /// its 1000 rounds with their covariance `(S + 2) 1000 D^2 m d`, the search of the least `K`
    /// that attains each rate (a round's map and its Schur form at every `K` up to (134)'s: `2 K
    /// (D^3 + K D m d^2)`), and, with a batch, Algorithm 2's runs (the theorem's two, the remark's
    /// and up to 16 of the ball sweeps), each local step propagating the moments of every client:
    /// `20 designs T K m d D^2`.
    pub fn work_with_k(&self, k: usize) -> crate::budget::Work {
        let (model, grid) = (&self.model, self.lambda_grid.as_ref().map_or(0, Vec::len));
        let [m, n, d, t, designs, s, g, k] = [model.m(), model.n(), model.d(), self.rounds, self.designs(), self.lambda_sweep.len(), grid, k].map(|x| x as f64);
        let state = (m + 1.0) * d;
        let batches = self.batch.filter(|_| self.one_batch_runs()).map_or(0.0, |b| per_round_outcomes(model.n(), b));
        let cap = SWEEP_ROUND_CAP as f64;
        let total = designs * (1.0 + s) * t * (state * state + k * m * d * d)
            + designs * m * n * d * d
            + designs * t * batches * m * state * state
            + designs * g * m * m * d * d * d * d
            + s * (7.0 * cap * state * state + (63.0 + k) * state * m * d * d)
            + if s > 0.0 { (s + 2.0) * super::figure3::HORIZON as f64 * state * state * m * d } else { 0.0 }
            + 2.0 * k * (state * state * state + k * state * m * d * d)
            + if self.batch.is_some() { 20.0 * designs * t * k * m * d * state * state } else { 0.0 };
        let formula = "designs (1 + S) T (D^2 + K m d^2) + designs m n d^2 + designs T C(n, B) m D^2 + designs G m^2 d^4 + S (7 CAP D^2 + (63 + K) D m d^2) + (S + 2) 1000 D^2 m d + 2 K (D^3 + K D m d^2) + [batch] 20 designs T K m d D^2 (D = (m + 1) d, S lambdas swept, G lambdas of a given grid, CAP = 200000 rounds to eps at most, K the local steps: steps.k or (134)'s)";
        crate::budget::Work::new("rounds, designs, lambda_sweep, steps.k (or lambda: K of (134)), batch and model.m, model.n, model.d", formula, total)
    }

    /// The work once the designs are drawn: [`Self::work_with_k`] at the largest `K` a run takes:
    /// `steps.k`, and Corollary 2's `K` of (134) (its claims run at it whatever `steps.k` says) at
    /// `lambda`, at every swept lambda and, with a sweep, at Figure 3's LocalTrain (lambda = 0), on
    /// every design. Corollary 2's `K` grows like `kappa ln kappa` as lambda falls (1e12 local
    /// steps at `kappa = 2e10`), which the sizes alone do not show.
    pub fn prepared_work(&self, draws: &[Instance]) -> crate::budget::Work {
        let local_train = (!self.lambda_sweep.is_empty()).then_some(0.0);
        let lambdas: Vec<f64> = std::iter::once(self.lambda).chain(self.lambda_sweep.iter().copied()).chain(local_train).collect();
        let k_134 = |inst: &Instance, l: f64| bounds::k_134(inst.constants.mu, inst.constants.l_sample, l);
        let largest = draws.iter().flat_map(|inst| lambdas.iter().map(move |&l| k_134(inst, l))).max();
        // Corollary 2's claims at its multiples run K of (134) / k_divisor local steps.
        let multiples = self.corollary2_multiples.unwrap_or_default();
        let divided = draws.iter().map(|inst| multiples.apply(c2_params(&inst.constants, self.lambda)).k).max();
        let k = self.steps.k.unwrap_or(1).max(largest.unwrap_or(1)).max(divided.unwrap_or(1));
        self.work_with_k(k.max(super::figures::LOCAL_STEPS[super::figures::LOCAL_STEPS.len() - 1]))
    }

    /// The steps at `lambda` with the per-sample `L` and this draw's `mu`.
    pub fn params(&self, c: &Constants, lambda: f64) -> Params {
        let (eta, gamma) = bounds::corollary2_steps(c.l_sample, lambda);
        Params {
            lambda,
            gamma: self.steps.gamma.unwrap_or(gamma),
            eta: self.steps.eta.unwrap_or(eta),
            k: self.steps.k.unwrap_or_else(|| bounds::k_134(c.mu, c.l_sample, lambda)),
        }
    }
}

pub use crate::checker::ClaimResult;

/// One point of a statistical curve.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StatPoint {
    /// `lambda`.
    pub lambda: f64,
    /// `max_i E||w~^(i) - w*^(i)||^2`.
    pub error: f64,
    /// Theorem 1's first branch (primary reading).
    pub first: f64,
    /// Its second branch.
    pub second: f64,
}

/// One lambda of Corollary 2's sweep.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SweepPoint {
    /// `lambda`.
    pub lambda: f64,
    /// `K` of (134).
    pub k: usize,
    /// Rounds to an eps-solution, measured.
    pub rounds: f64,
    /// Rounds the printed rate implies with Theorem 2's constants.
    pub predicted: f64,
    /// The constant `C` of those rounds: `C rate^(t-1) <= eps`, `C = max(V_1, (2m/c1 + 2 L_w^2)
    /// V_1/rate)`.
    pub constant: f64,
    /// `kappa (lambda + mu)/(lambda + L) log(1/eps)`.
    pub shape: f64,
    /// Gradient evaluations per client, `K x rounds`.
    pub gradients: f64,
}

/// The K study at the scenario's lambda (Corollary 2's steps).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct KStudy {
    /// `K` of (134).
    pub k_134: usize,
    /// The smallest `K` satisfying (14).
    pub k_14: Option<usize>,
    /// The smallest `K` whose exact asymptotic rate (squared spectral radius of a round) is at
    /// most Corollary 2's printed rate.
    pub k_attains_c2_rate: Option<usize>,
    /// The smallest `K` whose exact asymptotic rate is at most Theorem 2's `r`.
    pub k_attains_t2_rate: Option<usize>,
    /// The squared spectral radius at `K` of (134).
    pub rate_at_k134: Option<f64>,
    /// Theorem 2's `r` at Corollary 2's steps.
    pub t2_rate: f64,
    /// Corollary 2's printed rate.
    pub c2_rate: f64,
}

/// Everything computed for one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioRun {
    /// Name.
    pub scenario: String,
    /// Description.
    pub description: String,
    /// Hash.
    pub scenario_hash: String,
    /// Clients.
    pub m: usize,
    /// Samples per client.
    pub n: usize,
    /// The constants of every design draw.
    pub constants: Vec<Constants>,
    /// The steps of Algorithm 1 at the scenario's lambda.
    pub params: Params,
    /// Theorem 1's curve on draw 0 (primary reading).
    pub stat_curve: Vec<StatPoint>,
    /// Theorem 1's curve on every draw (draw 0's is [`Self::stat_curve`]).
    pub stat_curves: Vec<Vec<StatPoint>>,
    /// LocalTrain's and GlobalTrain's `max_i E||w - w*^(i)||^2` on draw 0.
    pub local_train: f64,
    /// GlobalTrain's level.
    pub global_train: f64,
    /// `||w_t^(g) - w~^(g)||^2` of Algorithm 1, `t = 1..=T`.
    pub global_error: Vec<f64>,
    /// The mean-of-locals server (gamma = 1/lambda): its global error.
    pub mean_of_locals_error: Vec<f64>,
    /// `max_t ||w_t^(g)[Algorithm 1] - w_t^(g)[mean of locals]||`.
    pub mean_of_locals_gap: f64,
    /// Algorithm 2's `E||w_t^(g) - w~^(g)||^2` (fresh batches), when it runs.
    pub alg2_error: Vec<f64>,
    /// The same with one batch per round reused for the `K` local steps (the listing, 003:L1176),
    /// when it runs ([`Scenario::one_batch_runs`]).
    pub alg2_one_batch_error: Vec<f64>,
    /// Its ball (printed) and `sigma^2`.
    pub alg2_ball: f64,
    /// `sigma^2` at the visited iterates.
    pub sigma2: f64,
    /// Corollary 2's sweep.
    pub sweep: Vec<SweepPoint>,
    /// Total error `max_i ||w_{t,K}^(i) - w*^(i)||^2` on draw 0's labels at Corollary 2's steps,
    /// per lambda of the sweep (the paper's Figure 3 mirrored).
    pub total_error: Vec<(f64, Vec<f64>)>,
    /// Figure 3's study (every method's total error and rounds to each target), when one of its
    /// claims was evaluated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure3: Option<super::figure3::Study>,
    /// Figure 2's rounds per lambda and `K`, when its claim was evaluated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub k_sweep: Vec<super::figures::KPoint>,
    /// Theorem 3's noise floors over `m` and over `B` with their fitted slopes, when the slope
    /// claims were evaluated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ball_sweeps: Vec<ball_scaling::BallSweep>,
    /// LocalTrain's and GlobalTrain's total error on draw 0's labels.
    pub train_levels: (f64, f64),
    /// `V_1` of Theorem 2 at the scenario's steps (`e_1` after round 1's `K` local steps, as (100)
    /// defines it, 003:L957): the constant of CLUP-T2's bound `r^(t-1) V_1`.
    pub t2_v1: f64,
    /// `V_1` of Theorem 3 (fresh batches; `g_1` after round 1's local steps), NaN without a run.
    pub t3_v1: f64,
    /// The K study.
    pub k_study: Option<KStudy>,
    /// Outcomes (the claims as stated: every constant is exact).
    pub results: Vec<ClaimResult>,
    /// What each compared point of a claim's evaluation is (`lambda`, draw, ...), by claim.
    pub points: Vec<(&'static str, Vec<String>)>,
}

impl crate::checker::RunOutcome for ScenarioRun {
    fn scenario_name(&self) -> &str {
        &self.scenario
    }
    fn results(&self) -> &[crate::checker::ClaimResult] {
        &self.results
    }
}

/// `{0} U logspace(1e-3, 1e5, 33)`: Theorem 1 for every lambda >= 0.
pub fn lambda_grid() -> Vec<f64> {
    std::iter::once(0.0).chain((0..33).map(|j| 10f64.powf(-3.0 + 8.0 * j as f64 / 32.0))).collect()
}

fn stat_of(c: &Constants, s: &ModelInput, empirical_l: bool) -> Stat {
    Stat { mu: c.mu, l: if empirical_l { c.l_empirical } else { c.l_sample }, rho2: c.rho2, r: s.radius(c), n: s.n() as f64, m: s.m() as f64 }
}

fn opt_of(c: &Constants, m: usize, p: &Params, empirical_l: bool) -> Opt {
    Opt {
        mu: c.mu,
        l: if empirical_l { c.l_empirical } else { c.l_sample },
        lambda: p.lambda,
        gamma: p.gamma,
        eta: p.eta,
        k: p.k as f64,
        m: m as f64,
        mu_error: c.mu_error,
    }
}

fn base_inputs(stat: Stat, opt: Opt) -> Inputs {
    Inputs { t: 1, stat, lambda: opt.lambda, opt, v1: f64::NAN, init_local: f64::NAN, sigma2: f64::NAN, batch: f64::NAN, strongly_convex: stat.mu > 0.0 }
}

/// The largest value, NaN when any is (a supremum one NaN makes NaN, never a smaller number).
fn max_of(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, crate::engine::nan_max)
}

/// Squared errors below this times their starting scale are at the rounding floor of `f64`: such
/// rounds are not compared.
pub use super::prec::ROUNDING_FLOOR;

/// Per-point comparison of `lhs <= rhs`, compared as the ratio `lhs/rhs <= 1` ([`side_ratio`]) so
/// that the tie tolerance is relative at every scale. The slack is `rhs/lhs` at the tightest
/// point; no point compared is inconclusive.
pub(super) fn per_point(checks: Vec<ConditionCheck>, points: &[(f64, f64)], scale: f64) -> Evaluation {
    // A bound that is +inf at every point compared says nothing (a claim that cannot fail is not
    // a check), as the core rules for bounds at checkpoints.
    if points.iter().all(|p| p.1 == f64::INFINITY) {
        let bounds: Vec<(usize, f64)> = points.iter().enumerate().map(|(t, p)| (t + 1, p.1)).collect();
        if let Some(why) = crate::verdict::unusable_bound(&bounds) {
            let (mut failed, notes) = crate::verdict::failed_and_notes(&checks);
            failed.push(why);
            return Evaluation {
                verdict: VerdictKind::NotApplicable,
                slack: None,
                decisive: None,
                checks,
                failed,
                notes,
                estimator: Estimator::Exact,
                series: Vec::new(),
                beyond_steps: None,
            };
        }
    }
    let ratios: Vec<(f64, f64)> = points.iter().map(|p| (side_ratio(*p), 1.0)).collect();
    let sides = |t: usize| ratios.get(t).map(|p| vec![*p]);
    evaluate_inequality(checks, ratios.len(), &sides, Estimator::Exact, 0.99, scale)
}

/// Whether a round with error `x` is compared, against errors that start at `reference`: unless
/// it is a number below [`ROUNDING_FLOOR`] times the reference. A NaN (of the round or the
/// reference) is compared, and so reported undecided, never dropped with the rounds after it.
fn compared_at_floor(x: f64, reference: f64) -> bool {
    x.is_nan() || reference.is_nan() || x >= ROUNDING_FLOOR * reference
}

/// `lhs/rhs` of one point of [`per_point`], a ratio at most 1 exactly when `lhs <= rhs`:
/// - `rhs < 0` is the largest finite ratio, `f64::MAX` (violated: the sides are non-negative
///   quantities, which no negative bound covers, whatever the left side's value);
/// - NaN on either side, or both infinite, is NaN (not decided: inconclusive, never holds);
/// - `rhs = +inf` against a finite `lhs` is 0 (the point holds);
/// - `lhs = +inf` (a diverged run) against a finite `rhs`, or `rhs = 0 < lhs`, is `f64::MAX`
///   (violated: as in the core's [`crate::verdict::decide`], a diverged run exceeds every finite
///   bound);
/// - `rhs = 0`, `lhs <= 0` is 0 (equality).
fn side_ratio((l, r): (f64, f64)) -> f64 {
    if r < 0.0 {
        f64::MAX
    } else if l.is_nan() || r.is_nan() || (l.is_infinite() && r.is_infinite()) {
        f64::NAN
    } else if r == f64::INFINITY {
        0.0
    } else if l == f64::INFINITY {
        f64::MAX
    } else if r > 0.0 {
        l / r
    } else if l > 0.0 {
        f64::MAX
    } else {
        0.0
    }
}

/// The first round a per-round bound `r^(t-1) V_1` is compared at.
#[derive(Debug, Clone, Copy)]
enum Round {
    /// Round 1: the metric is not a part of `V_1` (the local models of Theorem 2 via (130)).
    One = 1,
    /// Round 2: at round 1 the bound is `V_1 = X_1 + c1 e_1 >= X_1`, true of every run by
    /// definition, so comparing it would only report a slack of 1.
    Two = 2,
}

/// Rounds `first..=T` of a per-round bound (entry `j` of `series` is round `j + 1`), above the
/// rounding floor.
fn per_round(claim: &ClupClaim, x: &Inputs, (series, first): (&[f64], Round), reference: f64, scale: f64) -> (Evaluation, Vec<String>) {
    let mut sides = Vec::new();
    let mut points = Vec::new();
    for (j, v) in series.iter().enumerate().skip(first as usize - 1) {
        if *v < ROUNDING_FLOOR * reference {
            break;
        }
        let b = claim.bound(&x.at_horizon(j + 1));
        sides.push((*v, b));
        points.push(format!("round {}: {v:.6e} vs {b:.6e}", j + 1));
    }
    (per_point(claim.checks(x), &sides, scale), points)
}

/// The lambdas where Theorem 1's first branch changes: `4 L^2 g = 1` (its pole) and
/// `8 L^2 g = 1` (the guard of I-CLUP6), each from `a^2 - (c L^2/mu) a - c L^3/mu = 0`,
/// `a = mu + lambda`, with `c = 16` and `32` ([`bounds::lambda_at_4l2g`]).
pub fn first_branch_thresholds(st: &Stat) -> (f64, f64) {
    (bounds::lambda_at_4l2g(st, 1.0), bounds::lambda_at_4l2g(st, 0.5))
}

/// The lambdas Theorem 1 is compared at on a draw besides the grid, in order: just below and
/// above the pole (`lambda_pole (1 -+ 1e-3)`) and just inside the guard (`lambda_guard (1 +`
/// [`super::prec::GUARD_OFFSET`]`)`, off the last bit where the branch flips by rounding).
pub fn theorem1_probes(st: &Stat) -> [f64; 3] {
    let (pole, guard) = first_branch_thresholds(st);
    [pole * (1.0 - 1e-3), pole * (1.0 + 1e-3), guard * (1.0 + super::prec::GUARD_OFFSET)]
}

/// The lambda inside the band below the pole where the unguarded first branch is negative
/// ([`bounds::unguarded_negative_probe`]); whatever `kappa`, unlike `lambda_pole (1 - 1e-3)`,
/// which the band (relative width about `1/(16 kappa^2)`) misses for `kappa` above about 8.
/// `None` without a band.
pub fn theorem1_band_probe(st: &Stat) -> Option<f64> {
    bounds::unguarded_negative_probe(st, false).map(|(l, _)| l)
}

/// Algorithm 1's trajectory quantities.
struct Trajectory {
    /// `||w_t^(g) - w~^(g)||^2`, t = 1..=T.
    global: Vec<f64>,
    /// `max_i ||w_{t,K}^(i) - w~^(i)||^2`.
    local: Vec<f64>,
    /// `e_t`.
    e: Vec<f64>,
    /// per client `||w_{t,K}^(i) - w~^(i)||^2`.
    per_client: Vec<Vec<f64>>,
    /// `max_i ||w_{t,K}^(i) - w*^(i)||^2` (total error).
    total: Vec<f64>,
    /// The global models.
    globals: Vec<DVector<f64>>,
}

/// Algorithm 1's trajectory quantities, each distance from [`alg1_deviations`] (accurate relative
/// to itself near the fixed point); the global models themselves from [`run_alg1`].
fn trajectory(inst: &Instance, p: &Params, z0: &DVector<f64>, rounds: usize) -> Trajectory {
    let d = inst.d;
    let sol = inst.solve(p.lambda);
    let states = run_alg1(inst, p, z0, rounds);
    // `w~^(i) - w*^(i)`: the total error of round t is `||(w~^(i) - w*^(i)) + (w_{t,K}^(i) - w~^(i))||`.
    let offsets: Vec<DVector<f64>> = sol.locals.iter().zip(&inst.clients).map(|(s, c)| s - &c.w_star).collect();
    let mut t = Trajectory { global: vec![], local: vec![], e: vec![], per_client: vec![], total: vec![], globals: vec![] };
    for (r, dev) in alg1_deviations(inst, p, z0, rounds).iter().enumerate() {
        t.global.push(dev.global.norm_squared());
        let pc: Vec<f64> = dev.locals.iter().map(|e| e.norm_squared()).collect();
        t.local.push(max_of(&pc));
        t.per_client.push(pc);
        t.e.push(dev.residuals.iter().map(|e| e.norm_squared()).sum::<f64>() / inst.m() as f64);
        t.total.push(dev.locals.iter().zip(&offsets).map(|(e, o)| (o + e).norm_squared()).fold(0.0, f64::max));
        t.globals.push(block(&states[r], 0, d));
    }
    t
}

fn init_state(inst: &Instance, init: &Init, lambda: f64) -> DVector<f64> {
    let d = inst.d;
    match init {
        Init::Zero => DVector::zeros((inst.m() + 1) * d),
        Init::LocalsAtSolution => initial_state(&DVector::zeros(d), &inst.solve(lambda).locals),
        Init::Given(g) => g.state(inst.m(), d),
    }
}

/// Rounds until `||w_t^(g) - w~^(g)||^2 <= eps` and `max_i ||w_{t,0}^(i) - w~^(i)||^2 <= eps`, by
/// iterating the round's linear part (probed from the same round code) on the deviation `z_t -
/// z~`: the deviation is never the difference of an iterate and the fixed point, which keeps only
/// `eps ||z~||` of absolute accuracy (with `||z~||^2 = 1e7` an `eps = 1e-8` is below it).
fn rounds_to_eps(inst: &Instance, p: &Params, z0: &DVector<f64>, eps: f64) -> f64 {
    super::figures::rounds_of_curve(&error_curve(inst, p, z0, eps), eps)
}

/// The error `max(||w_t^(g) - w~^(g)||^2, max_i ||w_{t,0}^(i) - w~^(i)||^2)` at rounds `t = 1, 2,
/// ...` (entry `t - 1`) as the rounds to an eps-solution iterate it, up to and including the first at most
/// `eps`, a NaN, or [`SWEEP_ROUND_CAP`] rounds.
pub fn error_curve(inst: &Instance, p: &Params, z0: &DVector<f64>, eps: f64) -> Vec<f64> {
    let a = alg1_linear_part(inst, p);
    let sol = inst.solve(p.lambda);
    let target = initial_state(&sol.global, &sol.locals);
    let d = inst.d;
    // The deviation in the relative coordinates of `a`: a local model's is `[dy]_g + [dy]_i`.
    let mut dy = to_relative(&(z0 - target), d);
    let mut curve = Vec::new();
    for _ in 1..=SWEEP_ROUND_CAP {
        let g = dy.rows(0, d).norm_squared();
        let l = (0..inst.m()).map(|i| (dy.rows(0, d) + dy.rows((i + 1) * d, d)).norm_squared()).fold(0.0, f64::max);
        let e = if g.is_nan() || l.is_nan() { f64::NAN } else { g.max(l) };
        curve.push(e);
        if e.is_nan() || e <= eps {
            break;
        }
        dy = &a * &dy;
    }
    curve
}

/// `V_1` of Theorem 2 from the first round of a trajectory.
fn v1_t2(o: &Opt, tr: &Trajectory) -> f64 {
    tr.global[0] + bounds::lyapunov_c1(o, false) * tr.e[0]
}

/// What a scenario computes once for its claims: the design draws, the steps, and the runs of
/// Algorithms 1 and 2 the selected claims compare with.
struct Prepared<'a> {
    s: &'a Scenario,
    draws: Vec<Instance>,
    /// Draw 0's constants.
    c0: Constants,
    /// The scenario's steps and their optimization constants.
    p: Params,
    o: Opt,
    z0: DVector<f64>,
    /// `lambda_grid()` and, when statistical claims are selected, each draw's curve over it.
    grid: Vec<f64>,
    curves: Vec<Vec<f64>>,
    stat0: Stat,
    /// Algorithm 1 at the scenario's steps, and as the mean of locals (`gamma = 1/lambda`).
    tr: Trajectory,
    p_mean: Params,
    tr_mean: Trajectory,
    /// Corollary 2's steps and Algorithm 1 at them.
    p_c2: Params,
    o_c2: Opt,
    tr_c2: Trajectory,
    sol: Solution,
    /// Algorithm 2 with fresh batches per step, and with one batch per round, when selected.
    run2: Option<Alg2Run>,
    run2_one: Option<Alg2Run>,
    /// Algorithm 2 at the remark's steps (003:L1318) started at the solution, run once for both
    /// of the remark's rows when one is selected.
    remark: std::sync::OnceLock<(Params, Alg2Run)>,
    /// Figure 3's study over the sweep, computed once for both of its rows when one is selected.
    figure3: std::sync::OnceLock<super::figure3::Study>,
    /// Figure 2's error curves per lambda and `K`, computed once for both of its readings.
    k_curves: std::sync::OnceLock<Vec<super::figures::KCurve>>,
    /// Figure 2's rounds per lambda and `K` (from [`Prepared::k_curves`]), when its primary
    /// reading is selected.
    k_sweep: std::sync::OnceLock<Vec<super::figures::KPoint>>,
    /// Theorem 3's ball sweeps over `m` and over `B` (in that order), each computed once.
    ball_sweeps: [std::sync::OnceLock<Option<ball_scaling::BallSweep>>; 2],
    sweep: Vec<SweepPoint>,
    total_error: Vec<(f64, Vec<f64>)>,
}

/// Corollary 2's steps at `lambda`: `gamma`, `eta` of the corollary and `K` of (134).
fn c2_params(c0: &Constants, lambda: f64) -> Params {
    let (eta, gamma) = bounds::corollary2_steps(c0.l_sample, lambda);
    Params { lambda, gamma, eta, k: bounds::k_134(c0.mu, c0.l_sample, lambda) }
}

impl<'a> Prepared<'a> {
    /// Runs what the selected claims read on the scenario's design draws.
    fn new(s: &'a Scenario, draws: Vec<Instance>, claims: &[ClupClaim]) -> Result<Self> {
        let inst = &draws[0];
        let c0 = inst.constants;
        let m = s.model.m();
        let p = s.params(&c0, s.lambda);
        let z0 = init_state(inst, &s.init, s.lambda);
        let wants = |f: &dyn Fn(&Statement) -> bool| claims.iter().any(|c| f(&c.observed()));
        // Statistical curves over the grid, per draw: max_i E||w~^(i) - w*^(i)||^2.
        let grid = s.grid();
        let curves: Vec<Vec<f64>> = if wants_statistics(s, claims) {
            draws.iter().map(|d| grid.iter().map(|&l| max_of(&d.statistical_errors(l))).collect()).collect()
        } else {
            Vec::new()
        };
        let tr = trajectory(inst, &p, &z0, s.rounds);
        let p_mean = Params { gamma: 1.0 / s.lambda, ..p };
        let tr_mean = trajectory(inst, &p_mean, &z0, s.rounds);
        let p_c2 = s.corollary2_multiples.unwrap_or_default().apply(c2_params(&c0, s.lambda));
        let tr_c2 = trajectory(inst, &p_c2, &z0, s.rounds);
        let sol = inst.solve(s.lambda);
        let alg2 = |batches: Batches| s.batch.map(|b| run_alg2(inst, &p, b, batches, &z0, &sol.global, s.rounds));
        let run2 = if wants(&|st| matches!(st, Statement::Theorem3 { one_batch: false, .. })) { alg2(Batches::PerStep) } else { None };
        let one_batch = s.one_batch_runs() && wants(&|st| matches!(st, Statement::Theorem3 { one_batch: true, .. }));
        let run2_one = if one_batch { alg2(Batches::PerRound) } else { None };
        let (sweep, total_error) = if wants(&|st| matches!(st, Statement::Corollary2Rounds | Statement::Corollary2Computation | Statement::Corollary2Monotone))
        {
            c2_sweep(s, inst)
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Self {
            s,
            c0,
            p,
            o: opt_of(&c0, m, &p, false),
            z0,
            grid,
            curves,
            stat0: stat_of(&c0, &s.model, false),
            tr,
            p_mean,
            tr_mean,
            p_c2,
            o_c2: opt_of(&c0, m, &p_c2, false),
            tr_c2,
            sol,
            run2,
            run2_one,
            remark: std::sync::OnceLock::new(),
            figure3: std::sync::OnceLock::new(),
            k_curves: std::sync::OnceLock::new(),
            k_sweep: std::sync::OnceLock::new(),
            ball_sweeps: [std::sync::OnceLock::new(), std::sync::OnceLock::new()],
            sweep,
            total_error,
            draws,
        })
    }

    /// Draw 0.
    fn inst(&self) -> &Instance {
        &self.draws[0]
    }
}

/// Whether statistical curves are computed: the scenario asks for them and a statistical claim
/// (Lemma 1, Theorem 1, Corollary 1) is selected.
fn wants_statistics(s: &Scenario, claims: &[ClupClaim]) -> bool {
    s.statistics && claims.iter().any(|c| matches!(c.observed(), Statement::Lemma1 | Statement::Theorem1 { .. } | Statement::Corollary1 { .. }))
}

/// Corollary 2's sweep over `s.lambda_sweep`, and the total error per lambda.
fn c2_sweep(s: &Scenario, inst: &Instance) -> (Vec<SweepPoint>, Vec<(f64, Vec<f64>)>) {
    let c0 = inst.constants;
    let mut sweep = Vec::new();
    let mut total_error = Vec::new();
    for &l in &s.lambda_sweep {
        let pl = c2_params(&c0, l);
        let ol = opt_of(&c0, s.model.m(), &pl, false);
        let zl = init_state(inst, &s.init, l);
        let trl = trajectory(inst, &pl, &zl, s.rounds);
        let v1 = v1_t2(&ol, &trl);
        let r = bounds::c2_rate(c0.mu, c0.l_sample, l);
        let c_pred = v1.max(bounds::local_factor(&ol) * v1 / r);
        let rounds = rounds_to_eps(inst, &pl, &zl, s.epsilon);
        sweep.push(SweepPoint {
            lambda: l,
            k: pl.k,
            rounds,
            predicted: bounds::rounds_from_rate(c_pred, r, s.epsilon),
            constant: c_pred,
            shape: bounds::c2_rounds_shape(c0.mu, c0.l_sample, l, s.epsilon),
            gradients: pl.k as f64 * rounds,
        });
        total_error.push((l, trl.total));
    }
    (sweep, total_error)
}

/// Theorem 1's curve on every draw (primary reading, each draw with its own constants) beside
/// the measured errors `max_i E||w~^(i) - w*^(i)||^2`; none without statistical claims.
fn stat_curves(c: &Prepared) -> Vec<Vec<StatPoint>> {
    c.draws
        .iter()
        .zip(&c.curves)
        .map(|(d, curve)| {
            let st = stat_of(&d.constants, &c.s.model, false);
            c.grid
                .iter()
                .zip(curve)
                .map(|(&l, &e)| StatPoint { lambda: l, error: e, first: bounds::t1_first(&st, l, bounds::T1_PROOF), second: bounds::t1_second(&st, l, false) })
                .collect()
        })
        .collect()
}

/// LocalTrain's and GlobalTrain's total error on draw 0's labels.
fn train_levels(inst: &Instance) -> (f64, f64) {
    let b_draw: Vec<DVector<f64>> = inst.clients.iter().map(|c| c.b.clone()).collect();
    let lt = inst.local_train_with(&b_draw);
    let gt = inst.global_train_with(&b_draw);
    (
        lt.iter().zip(&inst.clients).map(|(w, c)| (w - &c.w_star).norm_squared()).fold(0.0, f64::max),
        inst.clients.iter().map(|c| (&gt - &c.w_star).norm_squared()).fold(0.0, f64::max),
    )
}

/// The K study at the scenario's lambda (Corollary 2's steps).
fn k_study(c: &Prepared) -> KStudy {
    let k134 = c.p_c2.k;
    let rate = |k: usize| alg1_spectral_radius(c.inst(), &Params { k, ..c.p_c2 }).map(|r| r.powi(2));
    let r2 = bounds::t2_rate(&c.o_c2);
    let rc2 = bounds::c2_rate(c.c0.mu, c.c0.l_sample, c.s.lambda);
    KStudy {
        k_134: k134,
        k_14: bounds::k_min_14(&c.o_c2, MAX_K),
        k_attains_c2_rate: (1..=k134).find(|&k| rate(k).is_some_and(|r| r <= rc2)),
        k_attains_t2_rate: (1..=k134).find(|&k| rate(k).is_some_and(|r| r <= r2)),
        rate_at_k134: rate(k134),
        t2_rate: r2,
        c2_rate: rc2,
    }
}

/// A claim's evaluation and what each compared point is.
type Outcome = (Evaluation, Vec<String>);

/// Evaluates one claim on the prepared runs; `None` where the scenario has nothing it compares.
fn evaluate_claim(c: &Prepared, claim: &ClupClaim, scale: f64) -> Option<Outcome> {
    let s = c.s;
    // A card-defined claim is compared with the series of the statement its metric reads.
    match claim.observed() {
        Statement::Lemma1 if s.statistics => Some(lemma1(c, claim, scale)),
        Statement::Theorem1 { empirical_l, .. } if s.statistics => Some(theorem1(c, claim, empirical_l, scale)),
        Statement::Corollary1 { a2_printed } if s.statistics => Some(corollary1(c, claim, a2_printed, scale)),
        Statement::Theorem2Global(rule) => Some(theorem2_global(c, claim, rule, scale)),
        Statement::Theorem2Local => {
            let x = Inputs { t: s.rounds, v1: v1_t2(&c.o, &c.tr), ..base_inputs(c.stat0, c.o) };
            Some(per_round(claim, &x, (&c.tr.local, Round::One), x.v1, scale))
        }
        Statement::Theorem2Lyapunov => Some(theorem2_lyapunov(c, claim, scale)),
        Statement::Corollary2 => {
            let x = Inputs { t: s.rounds, v1: v1_t2(&c.o_c2, &c.tr_c2), ..base_inputs(c.stat0, c.o_c2) };
            Some(per_round(claim, &x, (&c.tr_c2.global, Round::Two), x.v1, scale))
        }
        Statement::Corollary2Rounds if !c.sweep.is_empty() => {
            let x = base_inputs(c.stat0, c.o_c2);
            let sides: Vec<(f64, f64)> = c.sweep.iter().map(|q| (q.rounds, q.predicted)).collect();
            let points =
                c.sweep.iter().map(|q| format!("lambda {:.4e}: {} rounds measured, {} implied, K = {}", q.lambda, q.rounds, q.predicted, q.k)).collect();
            Some((per_point(claim.checks(&x), &sides, scale), points))
        }
        Statement::Corollary2Computation if !c.sweep.is_empty() => Some(corollary2_computation(c, claim, scale)),
        Statement::Corollary2Monotone if c.sweep.len() >= 2 => Some(corollary2_monotone(c, claim, scale)),
        Statement::QMonotone { guard } if s.statistics => Some(q_monotone(c, claim, guard, scale)),
        Statement::Theorem3BallScaling => s.batch.map(|_| t3_ball_scaling(c, claim, scale)),
        Statement::Theorem3BallSlope(axis) => s.batch.and_then(|b| {
            let slot = &c.ball_sweeps[usize::from(axis == ball_scaling::BallAxis::Batch)];
            let sw = slot.get_or_init(|| ball_scaling::sweep_along(axis, c.inst(), &c.p, b, s.rounds)).as_ref()?;
            let x = Inputs { batch: ball_scaling::checked_batch(sw, b) as f64, ..base_inputs(c.stat0, c.o) };
            Some(ball_scaling::evaluate(sw, ball_scaling::EXPONENT, claim.checks(&x), scale))
        }),
        Statement::Figure2LocalSteps { every_eps } if !s.lambda_sweep.is_empty() => {
            let curve = |l: f64, k: usize| error_curve(c.inst(), &Params { k, ..c2_params(&c.c0, l) }, &init_state(c.inst(), &s.init, l), s.epsilon);
            let curves = c.k_curves.get_or_init(|| super::figures::k_curves(&s.lambda_sweep, curve));
            let checks = claim.checks(&base_inputs(c.stat0, c.o_c2));
            Some(if every_eps {
                super::figures::evaluate_every_eps(curves, s.epsilon, checks, scale)
            } else {
                let points = c.k_sweep.get_or_init(|| super::figures::k_points(curves, s.epsilon));
                super::figures::evaluate_local_steps(points, checks, scale)
            })
        }
        Statement::Figure3Lambda { every_eps } if !s.lambda_sweep.is_empty() => {
            let study = c.figure3.get_or_init(|| super::figure3::study(c.inst(), &s.lambda_sweep, &|l| init_state(c.inst(), &s.init, l)));
            Some(study.evaluate(every_eps, claim.checks(&base_inputs(c.stat0, c.o_c2)), scale))
        }
        Statement::Corollary2K134 => {
            let chains = super::k134::chains(c.c0.mu, c.c0.l_sample, s.lambda, c.p_c2.k, &s.lambda_sweep);
            let sides: Vec<(f64, f64)> = chains.iter().flat_map(super::k134::Chain::compared).collect();
            Some((per_point(claim.checks(&base_inputs(c.stat0, c.o_c2)), &sides, scale), chains.iter().map(super::k134::Chain::describe).collect()))
        }
        Statement::Corollary3 { .. } => Some(corollary3(c, claim, scale)),
        Statement::Theorem3 { empirical_l, one_batch, v1_initial, .. } => theorem3(c, claim, (empirical_l, one_batch, v1_initial), scale),
        Statement::Lemma2 if s.statistics => Some(lemma2(c, claim, scale)),
        Statement::Lemma3 if s.statistics => Some(lemma3(c, claim, scale)),
        Statement::Lemma4 if s.statistics => Some(lemma4(c, claim, scale)),
        Statement::Global35 { local_average } if s.statistics => Some(global_bound(c, claim, local_average, scale)),
        Statement::Global52 { .. } | Statement::Global79 if s.statistics => Some(global_bound(c, claim, false, scale)),
        Statement::Lemma5 => Some(lemma5(c, claim, scale)),
        Statement::Lemma6 => Some(lemma6(c, claim, scale)),
        Statement::Theorem3Remark { .. } => s.batch.map(|b| t3_remark(c, claim, b, scale)),
        _ => None,
    }
}

/// Corollary 2 (ii): `K x rounds` measured at every lambda of the sweep against
/// [`bounds::c2_gradient_bound`] with the sweep's largest constant `C` (free of lambda).
fn corollary2_computation(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let c_max = c.sweep.iter().map(|q| q.constant).fold(0.0, crate::engine::nan_max);
    let bound = bounds::c2_gradient_bound(c.c0.mu, c.c0.l_sample, c_max, c.s.epsilon);
    let sides: Vec<(f64, f64)> = c.sweep.iter().map(|q| (q.gradients, bound)).collect();
    let points = c.sweep.iter().map(|q| format!("lambda {:.4e}: K {} x {} rounds = {} vs {bound:.6e}", q.lambda, q.k, q.rounds, q.gradients)).collect();
    (per_point(claim.checks(&base_inputs(c.stat0, c.o_c2)), &sides, scale), points)
}

/// The rounds measured over the sweep, in increasing lambda, never decrease (003:L192): each
/// consecutive pair as `rounds(lambda_j) <= rounds(lambda_{j+1})`.
fn corollary2_monotone(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let mut sweep: Vec<&SweepPoint> = c.sweep.iter().collect();
    sweep.sort_by(|a, b| a.lambda.total_cmp(&b.lambda));
    let sides: Vec<(f64, f64)> = sweep.windows(2).map(|w| (w[0].rounds, w[1].rounds)).collect();
    let points = sweep.windows(2).map(|w| format!("lambda {:.4e} -> {:.4e}: {} rounds vs {}", w[0].lambda, w[1].lambda, w[0].rounds, w[1].rounds)).collect();
    (per_point(claim.checks(&base_inputs(c.stat0, c.o_c2)), &sides, scale), points)
}

/// `q1` and `q2` at consecutive positive lambdas of the grid on every draw, each pair as
/// `q(lambda_j) <= q(lambda_{j+1})` ([`increasing_pair`]) (003:L114, L207); `q1 = 1/(1/q1)` of
/// (70) only where `guard` holds at both lambdas (I-CLUP6; every pair when unguarded).
fn q_monotone(c: &Prepared, claim: &ClupClaim, guard: bounds::FirstBranchGuard, scale: f64) -> Outcome {
    let (mut sides, mut points) = (Vec::new(), Vec::new());
    let positive: Vec<f64> = c.grid.iter().copied().filter(|l| *l > 0.0).collect();
    let mut per_draw = Vec::new();
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat_of(&d.constants, &c.s.model, false);
        per_draw.push(claim.checks(&base_inputs(st, c.o)));
        let guarded = |l: f64| bounds::first_branch_valid(&st, l, guard);
        for w in positive.windows(2) {
            let (q2a, q2b) = (bounds::q2(&st, w[0]), bounds::q2(&st, w[1]));
            sides.push(increasing_pair(q2a, q2b));
            points.push(format!("draw {di}, q2 at lambda {:.4e} -> {:.4e}: {q2a:.6e} vs {q2b:.6e}", w[0], w[1]));
            if guarded(w[0]) && guarded(w[1]) {
                let (q1a, q1b) = (1.0 / bounds::q1_inv(&st, w[0], false), 1.0 / bounds::q1_inv(&st, w[1], false));
                sides.push(increasing_pair(q1a, q1b));
                points.push(format!("draw {di}, q1 at lambda {:.4e} -> {:.4e}: {q1a:.6e} vs {q1b:.6e}", w[0], w[1]));
            }
        }
    }
    (per_point(every_draw(per_draw), &sides, scale), points)
}

/// `a <= b` as sides `(l, r)` of [`per_point`], whose ratio `l/r` is at most 1 exactly when
/// `a <= b`, for `a` and `b` of any sign: `(a, b)` when `a >= 0` (`b < 0` is the largest ratio),
/// `(-b, -a)` when both are negative (`a <= b` is `|b| <= |a|`), and `(0, 1)` for `a < 0 <= b`,
/// which holds with room to spare. NaN stays NaN (undecided).
fn increasing_pair(a: f64, b: f64) -> (f64, f64) {
    match (a < 0.0, b < 0.0) {
        (true, true) => (-b, -a),
        (true, false) if !b.is_nan() => (0.0, 1.0),
        _ => (a, b),
    }
}

/// The batch sizes of Theorem 3's ball sweep: `{1, 2, 4, 8}` below `n` (at `B = n` there is no
/// noise).
pub fn ball_batches(n: usize) -> Vec<usize> {
    [1, 2, 4, 8].into_iter().filter(|b| *b < n).collect()
}

/// Theorem 3's ball against `B` (003:L194, L1251, L1320): Algorithm 2 (fresh batches) started at
/// the solution `(w~^(g), w~^(i))`, so its error at the horizon is the noise floor alone, at each
/// `B` of [`ball_batches`]; each `B > 1` compared as `floor(B) <= floor(1)/B`.
fn t3_ball_scaling(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (inst, s) = (c.inst(), c.s);
    let start = initial_state(&c.sol.global, &c.sol.locals);
    let bs = ball_batches(inst.n);
    let floor = |b: usize| run_alg2(inst, &c.p, b, Batches::PerStep, &start, &c.sol.global, s.rounds).global_error.last().copied().unwrap_or(f64::NAN);
    let floors: Vec<f64> = bs.iter().map(|&b| floor(b)).collect();
    let sides: Vec<(f64, f64)> = bs.iter().zip(&floors).skip(1).map(|(&b, &f)| (f, floors[0] / b as f64)).collect();
    let points = bs.iter().skip(1).zip(&sides).map(|(b, (f, r))| format!("B = {b}: floor {f:.6e} vs floor(1)/B = {r:.6e}")).collect();
    let x = Inputs { batch: bs.last().copied().unwrap_or(1) as f64, ..base_inputs(c.stat0, c.o) };
    (per_point(claim.checks(&x), &sides, scale), points)
}

/// Lemma 1's seven spectral inequalities at `lambda` on draw `d`, as `(what, lhs, rhs)`.
fn lemma1_sides(d: &Instance, st: &Stat, l: f64) -> [(&'static str, f64, f64); 7] {
    let k = bounds::lemma1(st.mu, st.l, l);
    let mut avg = nalgebra::DMatrix::zeros(d.d, d.d);
    let (mut lo_f, mut hi_f, mut hi_j, mut lo_h, mut hi_h) = (f64::INFINITY, 0.0f64, 0.0f64, f64::INFINITY, 0.0f64);
    for i in 0..d.m() {
        let (hf, jac) = d.envelope_hessian(i, l);
        let (a, b) = super::model::spectrum(&hf);
        lo_f = lo_f.min(a);
        hi_f = hi_f.max(b);
        hi_j = hi_j.max(super::model::spectrum(&jac).1);
        let (a, b) = super::model::spectrum(&(&d.clients[i].a + nalgebra::DMatrix::identity(d.d, d.d) * l));
        lo_h = lo_h.min(a);
        hi_h = hi_h.max(b);
        avg += hf / d.m() as f64;
    }
    let (lo_avg, hi_avg) = super::model::spectrum(&avg);
    [
        ("mu_g <= lambda_min(hess F_i)", k.mu_g, lo_f),
        ("lambda_max(hess F_i) <= L_g", hi_f, k.l_g),
        ("mu_g <= lambda_min(hess F)", k.mu_g, lo_avg),
        ("lambda_max(hess F) <= L_g", hi_avg, k.l_g),
        ("mu_l <= lambda_min(A_i + lambda I)", k.mu_l, lo_h),
        ("lambda_max(A_i + lambda I) <= L_l", hi_h, k.l_l),
        ("||d prox/d w_g|| <= L_w", hi_j, k.l_w),
    ]
}

/// The checks of a claim compared on every draw: the first draw's, then each failing check of a
/// later draw that the first does not fail, named with its draw. A condition that fails on any
/// draw makes the claim not applicable: its points on that draw are outside the claim.
fn every_draw(per_draw: Vec<Vec<ConditionCheck>>) -> Vec<ConditionCheck> {
    let mut draws = per_draw.into_iter().enumerate();
    let mut out = draws.next().map(|(_, c)| c).unwrap_or_default();
    for (di, checks) in draws {
        for mut k in checks.into_iter().filter(|k| !k.holds) {
            if !out.iter().any(|o| o.name == k.name && !o.holds) {
                k.name = format!("{} (draw {di})", k.name);
                out.push(k);
            }
        }
    }
    out
}

/// Lemma 1 on every draw at every positive lambda of the grid.
fn lemma1(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (mut sides, mut points, mut per_draw) = (Vec::new(), Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat_of(&d.constants, &c.s.model, false);
        per_draw.push(claim.checks(&base_inputs(st, c.o)));
        for &l in c.grid.iter().filter(|l| **l > 0.0) {
            for (what, lhs, rhs) in lemma1_sides(d, &st, l) {
                sides.push((lhs, rhs));
                points.push(format!("draw {di}, lambda {l:.4e}: {what}: {lhs:.6e} vs {rhs:.6e}"));
            }
        }
    }
    (per_point(every_draw(per_draw), &sides, scale), points)
}

/// Theorem 1 on every draw over the grid and beside its first branch's pole and guard
/// ([`theorem1_probes`]), then on every draw inside the band below the pole
/// ([`theorem1_band_probe`]; after every draw's other points, which keep their positions).
fn theorem1(c: &Prepared, claim: &ClupClaim, empirical_l: bool, scale: f64) -> Outcome {
    let (mut sides, mut points, mut per_draw) = (Vec::new(), Vec::new(), Vec::new());
    let stat = |d: &Instance| stat_of(&d.constants, &c.s.model, empirical_l);
    let mut push = |di: usize, st: &Stat, l: f64, e: f64, what: &str| {
        let b = claim.bound(&Inputs { lambda: l, ..base_inputs(*st, c.o) });
        sides.push((e, b));
        points.push(format!("draw {di} (mu {:.4}), lambda {l:.4e}{what}: {e:.6e} vs {b:.6e}", st.mu));
    };
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat(d);
        per_draw.push(claim.checks(&base_inputs(st, c.o)));
        for (j, &l) in c.grid.iter().chain(theorem1_probes(&st).iter()).enumerate() {
            let e = if j < c.grid.len() { c.curves[di][j] } else { max_of(&d.statistical_errors(l)) };
            push(di, &st, l, e, "");
        }
    }
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat(d);
        if let Some(l) = theorem1_band_probe(&st) {
            push(di, &st, l, max_of(&d.statistical_errors(l)), " (inside the band below the pole)");
        }
    }
    (per_point(every_draw(per_draw), &sides, scale), points)
}

/// The lambdas Corollary 1 is compared at on a draw, with the scope check of the printed `a2`.
fn corollary1_lambdas(st: &Stat, a2_printed: bool, checks: &mut Vec<ConditionCheck>) -> Vec<f64> {
    if a2_printed {
        checks.push(ConditionCheck::compare("R < 1/sqrt(n) (the case of (92) with a2)", ConditionKind::Scope, st.r, Relation::Below, 1.0 / st.n.sqrt()));
        vec![bounds::a1(st).max(bounds::a2_printed(st)).max(0.0)]
    } else if bounds::c1_small_r(st) {
        let l = bounds::lambda_93(st);
        vec![l, 10.0 * l, 1000.0 * l]
    } else {
        let l = bounds::lambda_72(st);
        vec![0.0, l / 10.0, l]
    }
}

/// Corollary 1 on every draw at its lambdas.
fn corollary1(c: &Prepared, claim: &ClupClaim, a2_printed: bool, scale: f64) -> Outcome {
    let (mut sides, mut points, mut per_draw) = (Vec::new(), Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat_of(&d.constants, &c.s.model, false);
        let mut checks = claim.checks(&base_inputs(st, c.o));
        let lambdas = corollary1_lambdas(&st, a2_printed, &mut checks);
        per_draw.push(checks);
        for l in lambdas {
            let x = Inputs { lambda: l, ..base_inputs(st, c.o) };
            let (e, b) = (max_of(&d.statistical_errors(l)), claim.bound(&x));
            sides.push((e, b));
            points.push(format!("draw {di} (mu {:.4}), lambda {l:.4e}: {e:.6e} vs {b:.6e}", st.mu));
        }
    }
    (per_point(every_draw(per_draw), &sides, scale), points)
}

/// Theorem 2's global error at the steps `rule` picks.
fn theorem2_global(c: &Prepared, claim: &ClupClaim, rule: GammaRule, scale: f64) -> Outcome {
    let s = c.s;
    let (pp, series) = match rule {
        GammaRule::Scenario => (c.p, c.tr.global.clone()),
        GammaRule::MeanOfLocals => (c.p_mean, c.tr_mean.global.clone()),
        GammaRule::Experiments => {
            let pe = Params { gamma: 1.0 / bounds::lemma1(c.c0.mu, c.c0.l_sample, s.lambda).l_g, ..c.p };
            (pe, trajectory(c.inst(), &pe, &c.z0, s.rounds).global)
        }
    };
    let oo = opt_of(&c.c0, s.model.m(), &pp, false);
    let v1 = match rule {
        GammaRule::Scenario => v1_t2(&oo, &c.tr),
        _ => v1_t2(&oo, &trajectory(c.inst(), &pp, &c.z0, 1)),
    };
    let x = Inputs { t: s.rounds, v1, ..base_inputs(c.stat0, oo) };
    per_round(claim, &x, (&series, Round::Two), v1, scale)
}

/// Theorem 2's Lyapunov recursion `V_{t+1} <= r V_t`, round by round, with `V_t` from the
/// propagated deviations ([`alg1_lyapunov`]) and `r` the claim's bound (Theorem 2's rate, or a
/// card's bound on `lyapunov-ratio`); the last point gives the limit `r / rho(M)^2`.
fn theorem2_lyapunov(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let c1 = bounds::lyapunov_c1(&c.o, false);
    let v = alg1_lyapunov(c.inst(), &c.p, &c.z0, c.s.rounds, c1);
    let x = base_inputs(c.stat0, c.o);
    let r = claim.bound(&x);
    let v0 = v.first().copied().unwrap_or(0.0);
    let sides: Vec<(f64, f64)> = v.windows(2).take_while(|w| compared_at_floor(w[1], v0)).map(|w| (w[1], r * w[0])).collect();
    let mut points: Vec<String> = sides.iter().enumerate().map(|(t, (a, b))| format!("V_{} = {a:.6e} vs r V_{} = {b:.6e}", t + 2, t + 1)).collect();
    let limit = alg1_spectral_radius(c.inst(), &c.p).map_or(f64::NAN, |rho| r / (rho * rho));
    points.push(format!("asymptotic slack r / rho(M)^2 = {limit:.6e} (the limit of r V_t / V_(t+1), rho(M) the spectral radius of the round)"));
    (per_point(claim.checks(&x), &sides, scale), points)
}

/// The ratio a worst client is picked by: its [`side_ratio`], `inf` where that is undefined (an
/// undefined client is the worst: a round is never judged on the others).
fn worst_client_key(p: (f64, f64)) -> f64 {
    let r = side_ratio(p);
    if r.is_nan() {
        f64::INFINITY
    } else {
        r
    }
}

/// Corollary 3 per client at Corollary 2's steps; each round compares its worst client.
fn corollary3(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (m, inst) = (c.s.model.m(), c.inst());
    let inits: Vec<f64> = (0..m).map(|i| (block(&c.z0, i + 1, inst.d) - &c.sol.locals[i]).norm_squared()).collect();
    let x = base_inputs(c.stat0, c.o_c2);
    let reference = crate::engine::nan_max(max_of(&inits), max_of(&c.tr_c2.per_client[0]));
    let sides: Vec<(f64, f64)> = (0..c.s.rounds)
        .take_while(|t| compared_at_floor(c.tr_c2.local[*t], reference))
        .map(|t| {
            let pick = |i: usize| (c.tr_c2.per_client[t][i], claim.bound(&Inputs { t: t + 1, init_local: inits[i], ..x }));
            (0..m).map(pick).fold((0.0, 1.0), |best, cand| if worst_client_key(cand) > worst_client_key(best) { cand } else { best })
        })
        .collect();
    let points = sides.iter().enumerate().map(|(t, (a, b))| format!("T = {}: {a:.6e} vs {b:.6e} (worst client)", t + 1)).collect();
    (per_point(claim.checks(&x), &sides, scale), points)
}

/// `g` of (136) at the initial state: `||(1/m) sum_i (w_{0,K}^(i) - w_*^(i)(w_1^(g)))||^2` (the
/// recursion's start `g_0` at 003:L1316; the `~v1-initial` reading of Theorem 3).
fn g_initial(c: &Prepared) -> f64 {
    let (inst, m) = (c.inst(), c.s.model.m());
    let wg = block(&c.z0, 0, inst.d);
    ((0..m).map(|i| block(&c.z0, i + 1, inst.d) - inst.prox(i, c.s.lambda, &wg)).fold(DVector::zeros(inst.d), |a, v| a + v) / m as f64).norm_squared()
}

/// Theorem 3 on Algorithm 2's run (fresh batches per step or one per round) with `V_1 = E||w_1^(g)
/// - w~^(g)||^2 + c1 g_1`, `g_1` after the first round's `K` local steps (as `e_t` of (100),
/// 003:L957) or, with `v1_initial`, from the initial local models (L1316); `None` without a run.
/// `readings` is `(empirical_l, one_batch, v1_initial)`.
fn theorem3(c: &Prepared, claim: &ClupClaim, readings: (bool, bool, bool), scale: f64) -> Option<Outcome> {
    let (empirical_l, one_batch, v1_initial) = readings;
    let s = c.s;
    let run = if one_batch { c.run2_one.as_ref() } else { c.run2.as_ref() };
    run.map(|r| {
        let oo = opt_of(&c.c0, s.model.m(), &c.p, empirical_l);
        let v1 = t3_v1(&oo, r, if v1_initial { g_initial(c) } else { r.g1 });
        let x = Inputs { t: s.rounds, v1, sigma2: r.sigma2, batch: s.batch.unwrap_or(1) as f64, ..base_inputs(c.stat0, oo) };
        per_round(claim, &x, (&r.global_error, Round::Two), v1, scale)
    })
}

/// Theorem 3's `V_1 = E||w_1^(g) - w~^(g)||^2 + c1 g` with `c1` of (146) (003:L1264).
fn t3_v1(o: &Opt, r: &Alg2Run, g: f64) -> f64 {
    r.global_error[0] + bounds::lyapunov_c1(o, true) * g
}

/// The squared scale of the models a run compares: `max(||w~^(g)||^2, max_i ||w~^(i)||^2,
/// ||z_0||^2)`.
fn model_scale(c: &Prepared) -> f64 {
    c.sol.locals.iter().map(|w| w.norm_squared()).fold(c.sol.global.norm_squared(), f64::max).max(c.z0.norm_squared())
}

/// Lemma 2 on every draw, client and positive lambda of the grid, at `w_g = 0` and `w_g = w*_g`,
/// with its conditions checked on every draw ([`every_draw`]). A side above the other beyond the
/// core's tie but by no more than the sides' rounding ([`lemmas::lemma2_rounding`]) is not
/// compared: exact arithmetic may give either order there (a note counts them). At `w_g = w*_g`
/// moved `2^20` from the origin the sides had missed by `1.3e-9` of themselves, and the identity
/// had been called violated.
fn lemma2(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (mut sides, mut points, mut per_draw, mut within) = (Vec::new(), Vec::new(), Vec::new(), 0usize);
    for (di, d) in c.draws.iter().enumerate() {
        per_draw.push(claim.checks(&base_inputs(stat_of(&d.constants, &c.s.model, false), c.o)));
        let client_scales: Vec<_> = (0..d.m()).map(|i| lemmas::lemma2_client_scale(d, i)).collect();
        for (wi, w) in [DVector::zeros(d.d), lemmas::center(d)].iter().enumerate() {
            for &l in c.grid.iter().filter(|l| **l > 0.0) {
                for (i, &scale_i) in client_scales.iter().enumerate() {
                    let both = lemmas::lemma2_sides(d, i, l, w);
                    let rounding = lemmas::lemma2_rounding(d.d, scale_i, l, w, &both);
                    for (what, (lhs, rhs)) in ["||a||^2 <= <a, b>", "||b||^2 <= <a, b>"].iter().zip(both) {
                        let tie = crate::prec::approx_eq(lhs, rhs, crate::prec::RELATIVE_TIE);
                        if lhs > rhs && !tie && lhs - rhs <= rounding {
                            within += 1;
                            continue;
                        }
                        sides.push((lhs, rhs));
                        points.push(format!("draw {di}, w_g {}, lambda {l:.4e}, client {i}: {what}: {lhs:.6e} vs {rhs:.6e}", ["0", "w*_g"][wi]));
                    }
                }
            }
        }
    }
    let mut evaluation = per_point(every_draw(per_draw), &sides, scale);
    if within > 0 {
        evaluation.notes.push(format!("{within} comparisons where a side exceeds the other by no more than their rounding are not compared"));
    }
    (evaluation, points)
}

/// Lemma 3 on every draw, client and positive lambda of the grid, with its conditions checked on
/// every draw ([`every_draw`]).
fn lemma3(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (mut sides, mut points, mut per_draw) = (Vec::new(), Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        per_draw.push(claim.checks(&base_inputs(stat_of(&d.constants, &c.s.model, false), c.o)));
        for &l in c.grid.iter().filter(|l| **l > 0.0) {
            for (i, (lhs, rhs)) in lemmas::lemma3_sides(d, d.constants.mu, l).into_iter().enumerate() {
                sides.push((lhs, rhs));
                points.push(format!("draw {di}, lambda {l:.4e}, client {i}: {lhs:.6e} vs {rhs:.6e}"));
            }
        }
    }
    (per_point(every_draw(per_draw), &sides, scale), points)
}

/// The statistical metric a global-model claim reads at `lambda` on draw `d`: `E||w~^(g) -
/// w*_g||^2`, or with `local_average` the clients' `(1/m) sum_i E||w~^(i) - w*^(i)||^2`.
fn global_metric(d: &Instance, lambda: f64, local_average: bool) -> f64 {
    if local_average {
        d.statistical_errors(lambda).iter().sum::<f64>() / d.m() as f64
    } else {
        d.global_statistical_error(lambda)
    }
}

/// The lambdas a global-model bound is compared at on a draw with constants `st`.
fn global_lambdas(c: &Prepared, st: &Stat, statement: super::claims::Statement) -> Vec<f64> {
    use super::claims::Statement;
    match statement {
        Statement::Global52 { .. } => {
            let edge = bounds::lambda_at_4l2g(st, 1.0 / 16.0) * (1.0 + super::prec::GUARD_OFFSET);
            c.grid.iter().copied().filter(|&l| bounds::guard_52(st, l) == 0.0).chain(std::iter::once(edge)).collect()
        }
        Statement::Global79 if bounds::c1_small_r(st) => {
            let l = bounds::lambda_77(st);
            vec![l, 10.0 * l, 1000.0 * l]
        }
        Statement::Global79 => {
            let l = bounds::lambda_72(st);
            vec![0.0, l / 10.0, l]
        }
        _ => c.grid.clone(),
    }
}

/// (35), (52) or (79) on every draw at their lambdas ([`global_lambdas`]): (35) over the grid,
/// (52) where its condition `g(lambda) < 1/(8L)^2` holds (and just inside it), (79) at the
/// lambdas (77) or (72) admits.
fn global_bound(c: &Prepared, claim: &ClupClaim, local_average: bool, scale: f64) -> Outcome {
    let (mut sides, mut points, mut per_draw) = (Vec::new(), Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat_of(&d.constants, &c.s.model, false);
        per_draw.push(claim.checks(&base_inputs(st, c.o)));
        for l in global_lambdas(c, &st, claim.observed()) {
            let (e, b) = (global_metric(d, l, local_average), claim.bound(&Inputs { lambda: l, ..base_inputs(st, c.o) }));
            sides.push((e, b));
            points.push(format!("draw {di} (mu {:.4}), lambda {l:.4e}: {e:.6e} vs {b:.6e}", st.mu));
        }
    }
    (per_point(every_draw(per_draw), &sides, scale), points)
}

/// Lemma 4 on every draw: the root mean square `(E||w~_GT - w*_g||^2)^(1/2)`, which bounds
/// `E||w~_GT - w*_g||`, against the lemma's bound.
fn lemma4(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (mut sides, mut points, mut per_draw) = (Vec::new(), Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat_of(&d.constants, &c.s.model, false);
        let x = base_inputs(st, c.o);
        per_draw.push(claim.checks(&x));
        let (e, b) = (d.global_train_error_to_center().sqrt(), claim.bound(&x));
        sides.push((e, b));
        points.push(format!("draw {di} (mu {:.4}): {e:.6e} vs {b:.6e}", st.mu));
    }
    (per_point(every_draw(per_draw), &sides, scale), points)
}

/// Lemma 5 on Algorithm 1 at the scenario's steps, every client and round where `e_{t+1}^(i)` is
/// above [`lemmas::LEMMA_FLOOR`] times the models' squared scale. Where no round is (the `K`
/// local steps bring every `e_t^(i)` to the rounding floor) nothing is compared: inconclusive,
/// with the floor as its reason, never a claim left out of the report.
fn lemma5(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (inst, s) = (c.inst(), c.s);
    let devs = alg1_deviations(inst, &c.p, &c.z0, s.rounds);
    let q = lemmas::lemma5_factor(&c.p, c.c0.mu);
    let (mut sides, mut points) = (Vec::new(), Vec::new());
    let floor = lemmas::LEMMA_FLOOR * model_scale(c);
    for t in 1..s.rounds {
        for i in 0..inst.m() {
            let (lhs, rhs) = lemmas::lemma5_sides(inst, c.p.lambda, q, &devs[t - 1], &devs[t], i);
            if lhs < floor {
                continue;
            }
            sides.push((lhs, rhs));
            points.push(format!("t = {t}, client {i}: e_(t+1) = {lhs:.6e} vs {rhs:.6e}"));
        }
    }
    if sides.is_empty() {
        points.push(format!("every e_(t+1) of rounds 1..{} is below {floor:.6e} (the rounding of the models' scale): no round compared", s.rounds));
    }
    (per_point(claim.checks(&base_inputs(c.stat0, c.o)), &sides, scale), points)
}

/// Lemma 6 on Algorithm 1 at the scenario's steps, every round while `||w_{t+1}^(g) -
/// w~^(g)||^2` stays above [`lemmas::LEMMA_FLOOR`] times the models' squared scale.
fn lemma6(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (inst, s) = (c.inst(), c.s);
    let devs = alg1_deviations(inst, &c.p, &c.z0, s.rounds);
    let (mut sides, mut points) = (Vec::new(), Vec::new());
    let floor = lemmas::LEMMA_FLOOR * model_scale(c);
    for t in 1..s.rounds {
        let (lhs, rhs) = lemmas::lemma6_sides(&c.o, &devs[t - 1], &devs[t]);
        if lhs < floor {
            break;
        }
        sides.push((lhs, rhs));
        points.push(format!("t = {t}: ||w_(t+1) - w~||^2 = {lhs:.6e} vs {rhs:.6e}"));
    }
    (per_point(claim.checks(&base_inputs(c.stat0, c.o)), &sides, scale), points)
}

/// The remark after Theorem 3 (003:L1318): Algorithm 2 at its steps (fresh batches of `batch`)
/// started at the solution, so its error is the noise floor alone, against the ball at every
/// round after the first (whose error is 0).
fn t3_remark(c: &Prepared, claim: &ClupClaim, batch: usize, scale: f64) -> Outcome {
    let (inst, s) = (c.inst(), c.s);
    let (p, run) = c.remark.get_or_init(|| {
        let p = lemmas::t3_remark_params(inst, s.lambda, c.p.k, MAX_K);
        let start = initial_state(&c.sol.global, &c.sol.locals);
        let run = run_alg2(inst, &p, batch, Batches::PerStep, &start, &c.sol.global, s.rounds);
        (p, run)
    });
    let x = Inputs { sigma2: run.sigma2, batch: batch as f64, ..base_inputs(c.stat0, opt_of(&c.c0, s.model.m(), p, false)) };
    let b = claim.bound(&x);
    let sides: Vec<(f64, f64)> = run.global_error.iter().skip(1).map(|e| (*e, b)).collect();
    let points = sides.iter().enumerate().map(|(t, (e, b))| format!("round {} (eta {:.4e}, K {}): {e:.6e} vs {b:.6e}", t + 2, p.eta, p.k)).collect();
    (per_point(claim.checks(&x), &sides, scale), points)
}
/// The scenario checked and its design draws `0..designs` (draw 0 is the instance the
/// optimization claims run on): what a check prepares once per scenario.
///
/// # Errors
/// Bad input naming the field; an instance that is not strongly convex.
pub fn draw_designs(s: &Scenario) -> Result<Vec<Instance>> {
    s.check("scenario")?;
    (0..s.designs() as u64).map(|d| s.model.instance(d)).collect()
}

/// Evaluates every selected claim on a scenario.
///
/// # Errors
/// Bad input naming the field; an instance that is not strongly convex.
pub fn run_scenario(s: &Scenario, claims: &[ClupClaim], scale: f64) -> Result<ScenarioRun> {
    run_drawn(s, draw_designs(s)?, claims, scale)
}

/// [`run_scenario`] on the design draws [`draw_designs`] made.
///
/// # Errors
/// Numerical failures.
pub fn run_drawn(s: &Scenario, draws: Vec<Instance>, claims: &[ClupClaim], scale: f64) -> Result<ScenarioRun> {
    let c = Prepared::new(s, draws, claims)?;
    let inst = c.inst();
    let (local_train, global_train) =
        if wants_statistics(s, claims) { (max_of(&inst.local_train_errors()), max_of(&inst.global_train_errors())) } else { (f64::NAN, f64::NAN) };
    let (mut results, mut points) = (Vec::new(), Vec::new());
    for claim in claims {
        if let Some((evaluation, at)) = evaluate_claim(&c, claim, scale) {
            let expected = s.expected.get(claim.id).copied();
            results.push(ClaimResult { claim: claim.id, reading: claim.reading, constants: ConstantsSource::Exact, label: None, evaluation, expected });
            points.push((claim.id, at));
        }
    }
    let mean_of_locals_gap = c.tr.globals.iter().zip(&c.tr_mean.globals).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
    let (alg2_error, sigma2) = c.run2.as_ref().map(|r| (r.global_error.clone(), r.sigma2)).unwrap_or_default();
    let curves = stat_curves(&c);
    let figure3 = c.figure3.get().cloned();
    let k_sweep = c.k_sweep.get().cloned().unwrap_or_default();
    let ball_sweeps = c.ball_sweeps.iter().filter_map(|sw| sw.get().cloned().flatten()).collect();
    Ok(ScenarioRun {
        scenario: s.name.clone(),
        description: s.description.clone(),
        scenario_hash: s.hash(),
        m: s.model.m(),
        n: s.model.n(),
        constants: c.draws.iter().map(|d| d.constants).collect(),
        params: c.p,
        stat_curve: curves.first().cloned().unwrap_or_default(),
        stat_curves: curves,
        alg2_one_batch_error: c.run2_one.as_ref().map(|r| r.global_error.clone()).unwrap_or_default(),
        local_train,
        global_train,
        mean_of_locals_gap,
        alg2_ball: s.batch.map(|b| bounds::t3_ball(&c.o, sigma2, b as f64)).unwrap_or(f64::NAN),
        alg2_error,
        sigma2,
        train_levels: train_levels(inst),
        k_study: Some(k_study(&c)),
        t2_v1: v1_t2(&c.o, &c.tr),
        t3_v1: c.run2.as_ref().map_or(f64::NAN, |r| t3_v1(&c.o, r, r.g1)),
        results,
        points,
        global_error: c.tr.global,
        mean_of_locals_error: c.tr_mean.global,
        sweep: c.sweep,
        total_error: c.total_error,
        figure3,
        k_sweep,
        ball_sweeps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::VerdictKind;

    /// `a <= b` for values of any sign: the ratio of [`increasing_pair`] is at most 1 exactly
    /// then; NaN is undecided.
    #[test]
    fn an_increasing_pair_is_decided_for_values_of_any_sign() {
        let holds = |a: f64, b: f64| per_point(Vec::new(), &[increasing_pair(a, b)], 1.0).verdict;
        for (a, b, expected) in [
            (1.0, 2.0, VerdictKind::Holds),
            (2.0, 1.0, VerdictKind::Violated),
            (-3.0, -1.0, VerdictKind::Holds),
            (-1.0, -3.0, VerdictKind::Violated),
            (-1.0, 2.0, VerdictKind::Holds),
            (-1.0, 0.0, VerdictKind::Holds),
            (2.0, -1.0, VerdictKind::Violated),
            (0.0, -1.0, VerdictKind::Violated),
            (1.0, f64::NAN, VerdictKind::Inconclusive),
            (-1.0, f64::NAN, VerdictKind::Inconclusive),
            (f64::NAN, 1.0, VerdictKind::Inconclusive),
        ] {
            assert_eq!(holds(a, b), expected, "{a} <= {b}");
        }
    }

    /// A diverged or undefined side never holds; the finite cases read as the inequality does.
    #[test]
    fn side_ratios_never_hold_on_nan_or_a_diverged_side() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        for p in [(nan, 1.0), (1.0, nan), (inf, inf), (nan, inf), (-inf, inf)] {
            let e = per_point(Vec::new(), &[(0.5, 1.0), p], 1.0);
            assert_eq!(e.verdict, VerdictKind::Inconclusive, "{p:?}");
        }
        // Conditions are checked on every draw: one failing on a later draw only binds too,
        // named with its draw; a failure the first draw shares is listed once.
        let check =
            |holds: bool| ConditionCheck::compare("mu >= 0.5", ConditionKind::StepSize, if holds { 1.0 } else { 0.1 }, crate::claim::Relation::AtLeast, 0.5);
        let merged = every_draw(vec![vec![check(true)], vec![check(true)], vec![check(false)]]);
        assert_eq!(merged.iter().filter(|k| !k.holds).map(|k| k.name.as_str()).collect::<Vec<_>>(), ["mu >= 0.5 (draw 2)"]);
        assert_eq!(per_point(merged, &[(0.5, 1.0)], 1.0).verdict, VerdictKind::NotApplicable);
        assert_eq!(every_draw(vec![vec![check(false)], vec![check(false)]]).len(), 1);
        // Control: holding on every draw, the points decide.
        assert_eq!(per_point(every_draw(vec![vec![check(true)], vec![check(true)]]), &[(0.5, 1.0)], 1.0).verdict, VerdictKind::Holds);
        // A bound +inf at every point says nothing: not applicable (it had held); beside a finite
        // one, the infinite point holds and the finite one decides.
        let vacuous = per_point(Vec::new(), &[(1.0, inf), (nan, inf)], 1.0);
        assert!(vacuous.verdict == VerdictKind::NotApplicable && vacuous.failed.iter().any(|f| f.contains("no run can exceed it")), "{vacuous:?}");
        assert_eq!(per_point(Vec::new(), &[(0.5, 1.0), (1.0, inf)], 1.0).verdict, VerdictKind::Holds);
        // A client with an undefined side is the worst of its round, never passed over.
        assert!(worst_client_key((nan, 1.0)) == inf && worst_client_key((1.0, nan)) == inf && worst_client_key((inf, inf)) == inf);
        assert_eq!(worst_client_key((1.0, 2.0)), 0.5);
        for (p, verdict) in [
            ((0.0, 0.0), VerdictKind::Holds),
            ((1e-300, 0.0), VerdictKind::Violated),
            ((0.0, -1.0), VerdictKind::Violated),
            ((2.0, 1.0), VerdictKind::Violated),
            ((inf, 2.0), VerdictKind::Violated),
            ((inf, -1.0), VerdictKind::Violated),
            ((nan, -1.0), VerdictKind::Violated),
        ] {
            assert_eq!(per_point(Vec::new(), &[p], 1.0).verdict, verdict, "{p:?}");
        }
        assert_eq!(per_point(Vec::new(), &[], 1.0).verdict, VerdictKind::Inconclusive, "nothing compared");
        assert!(compared_at_floor(nan, 1.0) && compared_at_floor(1.0, nan) && !compared_at_floor(1e-40, 1.0));
    }
}
