//! Adversarial search: the admissible instance that comes closest to a claim's bound, and how much
//! room the claim's step-size condition leaves.
//!
//! A candidate is a point of the unit cube (plus an instance seed) decoded into a scenario: an
//! instance recipe (`mu/L`, `sigma_u`, `sigma_v`, `b`, `||z^0 - z*||`, coupling, `n`), the
//! algorithm's `K`, `m`, `T`, and steps set *inside* the claim's conditions: `gamma` a fraction
//! of the largest admissible one (or exactly the prescribed one), `eta_u`, `eta_v` multiples of the
//! smallest admissible ones. The claim's structure (its `du`, `dv`, and `K = 1` or `m = n` where
//! its scope says so) comes from its default scenario. Every constant the bound uses is computed
//! from the instance, so any decoded candidate satisfies the assumptions or is reported not
//! applicable, never silently out of range.
//!
//! The objective is `observed / bound` with exact expectations (noise-free), maximized over the
//! checkpoints the claim compares. The search is seeded random restarts followed by coordinate
//! refinement with halving steps. A ratio above 1 is a counterexample.
//!
//! Conservativeness: on the worst instance found, `gamma` is multiplied by `c >= 1` (outer steps
//! fixed) and the printed bound is compared with the run even though the condition no longer
//! holds; the report gives the largest `c` for which the bound still holds and the smallest `c` at
//! which the expected metric diverges.
//!
//! Lemmas of the proofs (a per-round inequality `E lhs_t <= E rhs_t`, [`LemmaClaim`]) are searched
//! over the same instances, with steps inside the lemma's own conditions
//! ([`LemmaClaim::admissible`]). Their sides are not exact: `C^t` remembers each client's iterates
//! from the last round it was sampled, so it is no function of the state the exact engine
//! propagates, and the sides are estimated as the lemma check estimates them, from
//! [`LEMMA_SEARCH_REPLICATES`] seeded replicates (one when the run is deterministic) over the
//! every round (`T <= 100` here). The objective is
//! `mean lhs_t / mean rhs_t`, largest over rounds: an *estimate*, deterministic for the seed and
//! identical across thread counts. The verdict is the lemma check's on the instance with the
//! largest estimate (Bonferroni intervals of `lhs_t - rhs_t`): an estimate above 1 counts as a
//! counterexample only where that check calls the lemma violated, else it is inconclusive; the
//! decisive round's interval is reported beside the ratio ([`SearchResult::worst_estimate`]).
//! A lemma's step room is measured on the knobs its conditions bound (`gamma`: a bound on
//! `gamma` or on `gamma_u, gamma_v`; `eta`: a lower bound on `eta_u` or `eta_v`), none where it
//! has no step condition (Lemma 3.6's first part).

use serde::Serialize;

/// The built-in claims the search does not cover, each with its reason: none (every bound claim
/// and every lemma of the proofs is searched).
pub fn not_searched() -> Vec<(&'static str, &'static str)> {
    Vec::new()
}

use crate::claim::Horizon;
use crate::engine::{running_average, InclusionMoments};
use crate::error::{Error, Result};
use crate::families::ccyw::algorithm::{AlgorithmKind, RoundParams};
use crate::families::ccyw::card::{AlgorithmSpec, EstimatorChoice, InstanceSource, Scenario, StepSpec};
use crate::families::ccyw::check::{self, CheckOptions, Prepared, Selection};
use crate::families::ccyw::claims::lemmas::{evaluate_lemma, sides_ratio};
pub use crate::families::ccyw::claims::LemmaClaim;
use crate::families::ccyw::claims::{AdmissibleSteps, Claim, ClaimInputs, ConditionCheck, ConditionKind, EtaRule, GammaRule, Metric};
use crate::families::ccyw::exact::exact_metric_series;
use crate::families::ccyw::lemma_estimates::check_quantities;
use crate::families::ccyw::problem::{Coupling, InstanceSpec, ProblemConstants, QuadraticInstance};
use crate::search::{maximize, Maximum};
pub use crate::search::{search_verdict, Candidate, Evaluated};
use crate::verdict::{Checkpoint, Evaluation, VerdictKind};

/// What the search maximizes over: a bound on a run's metric, or a lemma of a proof.
#[derive(Clone, Copy)]
pub enum Target {
    /// A bound claim (`observed / bound` from exact expectations).
    Bound(&'static dyn Claim),
    /// A per-round inequality of a proof (`mean lhs / mean rhs` from seeded replicates).
    Lemma(&'static dyn LemmaClaim),
}

impl Target {
    /// The claim's id.
    pub fn id(&self) -> &'static str {
        match self {
            Target::Bound(c) => c.id(),
            Target::Lemma(l) => l.id(),
        }
    }
    /// The algorithm it is about.
    pub fn algorithm(&self) -> AlgorithmKind {
        match self {
            Target::Bound(c) => c.algorithm(),
            Target::Lemma(l) => l.algorithm(),
        }
    }
    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck> {
        match self {
            Target::Bound(c) => c.checks(x),
            Target::Lemma(l) => l.checks(x),
        }
    }
    /// The steps it admits (a lemma's `gamma` rule reads `x`'s `eta_u`, `eta_v`).
    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps {
        match self {
            Target::Bound(c) => c.admissible(x),
            Target::Lemma(l) => l.admissible(x),
        }
    }
    /// Whether its conditions bound the knob's steps at `x` (a bound claim's are always
    /// measured; a lemma's only where it states such a condition).
    fn bounds_steps(&self, x: &ClaimInputs, knob: Knob) -> bool {
        let Target::Lemma(l) = self else { return true };
        l.checks(x).iter().any(|c| {
            c.kind == ConditionKind::StepSize
                && match knob {
                    Knob::Gamma => c.name.contains("gamma"),
                    Knob::Eta => c.name.starts_with("eta"),
                }
        })
    }
}

/// Every built-in claim and lemma, in report order: the bound claims, then the lemmas.
pub fn all_targets() -> Vec<Target> {
    let bounds = crate::families::ccyw::claims::all_claims().into_iter().map(Target::Bound);
    bounds.chain(crate::families::ccyw::claims::all_lemmas().into_iter().map(Target::Lemma)).collect()
}

/// Seeded replicates per evaluation of a lemma (the decoded scenario's `replicates`, so its
/// check replays the same estimate).
pub const LEMMA_SEARCH_REPLICATES: usize = 8;

/// Number of coordinates of a candidate.
pub const DIMENSIONS: usize = 13;

/// Names of the coordinates, in order (for reports).
pub const COORDINATES: [&str; DIMENSIONS] = [
    "log10(mu/L) in [-3, 0]",
    "sigma_u in [0, 2]",
    "sigma_v in [0, 2]",
    "b in [0, 4]",
    "log10 ||z0 - z*|| in [-1, 1.5]",
    "coupling (< 0.5 decoupled)",
    "K in {1, 2, 3, 5, 10, 20}",
    "m/n in (0, 1]",
    "n in {1, 2, 3, 5, 10}",
    "T in {1, 2, 5, 10, 30, 100}",
    "log10(gamma / gamma_max) in [-3, 0]",
    "log10(eta_u / eta_u_min) in [0, 1]",
    "log10(eta_v / eta_v_min) in [0, 1]",
];

const K_CHOICES: [usize; 6] = [1, 2, 3, 5, 10, 20];
const N_CHOICES: [usize; 5] = [1, 2, 3, 5, 10];
const T_CHOICES: [usize; 6] = [1, 2, 5, 10, 30, 100];

/// Rounds over which a step multiple must keep the expected metric bounded.
pub const DIVERGENCE_ROUNDS: usize = 400;

pub use super::prec::DIVERGENCE_GROWTH;

pub use crate::search::DEFAULT_BUDGET;

/// Search settings.
#[derive(Debug, Clone, Serialize)]
pub struct SearchOptions {
    /// Objective evaluations (each one exact run of the claim's algorithm).
    pub budget: usize,
    /// Seed of the search.
    pub seed: u64,
    /// Multiply the bound by this factor (negative controls).
    pub bound_scale: f64,
    /// Run every candidate with `gamma` times this multiple (1: inside the condition). Above 1 the
    /// candidate must still satisfy every condition at multiple 1, and the printed bound is
    /// compared although the step condition fails: this measures the condition's room.
    pub gamma_multiple: f64,
    /// Run every candidate with `eta_u`, `eta_v` divided by this factor and `gamma` unchanged (so
    /// the inner steps grow by it): the room of the outer-step conditions, as `gamma_multiple`.
    pub eta_divisor: f64,
    /// Scenarios of a card given on the command line, beside the embedded ones: a claim the card
    /// defines starts its search from one of them.
    #[serde(skip)]
    pub scenarios: Vec<Scenario>,
    /// Evaluations per search of a step condition's room over any instance ([`search_all`]);
    /// 0: the room on the worst instance only. Each room records its own budget.
    #[serde(skip)]
    pub room_budget: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self { budget: DEFAULT_BUDGET, seed: 1, bound_scale: 1.0, gamma_multiple: 1.0, eta_divisor: 1.0, scenarios: Vec::new(), room_budget: ROOM_BUDGET }
    }
}

/// The structure a claim fixes (from its default scenario and scope conditions).
#[derive(Debug, Clone, Serialize)]
pub struct Structure {
    /// The claim.
    pub claim: &'static str,
    /// Its algorithm.
    pub algorithm: AlgorithmKind,
    /// Shared and personal dimensions.
    pub du: usize,
    /// Personal dimension.
    pub dv: usize,
    /// `K = 1` by scope.
    pub single_step: bool,
    /// `m = n` by scope.
    pub full_participation: bool,
    /// The step is prescribed (a corollary), not bounded.
    pub prescribed_gamma: bool,
    /// The default scenario the structure comes from.
    pub base_scenario: String,
    /// Its conditions bound `gamma` (every bound claim; a lemma with a step condition on `gamma`
    /// or on `gamma_u, gamma_v`): its room is measured.
    #[serde(skip)]
    pub bounds_gamma: bool,
    /// Its conditions bound `eta_u` or `eta_v` from below (every bound claim; a lemma that says
    /// so): their room is measured.
    #[serde(skip)]
    pub bounds_eta: bool,
}

impl Structure {
    /// The structure of `claim`, from its first default scenario that expects it to hold.
    ///
    /// # Errors
    /// [`Error::InvalidField`] when no embedded scenario checks the claim.
    pub fn of(claim: &'static dyn Claim, from_cards: &[Scenario]) -> Result<Self> {
        Self::of_target(Target::Bound(claim), from_cards)
    }

    /// [`Structure::of`] a bound claim or a lemma.
    ///
    /// # Errors
    /// As [`Structure::of`].
    pub fn of_target(claim: Target, from_cards: &[Scenario]) -> Result<Self> {
        let cards = crate::families::ccyw::card::embedded_cards()?;
        let base = cards
            .iter()
            .flat_map(|c| c.scenarios.iter())
            .chain(from_cards.iter())
            .find(|s| s.algorithm.kind == claim.algorithm() && s.expected.get(claim.id()) == Some(&VerdictKind::Holds))
            .ok_or_else(|| Error::field("claim", format!("no default scenario where `{}` holds", claim.id()), "a claim with a default scenario"))?;
        let prepared = check::prepare(base)?;
        let x = check::claim_inputs(&prepared.instance, &prepared.constants, &prepared.params, base.rounds);
        let scope: Vec<String> = claim.checks(&x).into_iter().filter(|c| c.kind == ConditionKind::Scope).map(|c| c.name).collect();
        let layout = prepared.instance.layout();
        Ok(Self {
            claim: claim.id(),
            algorithm: claim.algorithm(),
            du: layout.du,
            dv: layout.dv,
            single_step: scope.iter().any(|s| s.starts_with("K = 1")),
            full_participation: scope.iter().any(|s| s.starts_with("m = n")),
            prescribed_gamma: matches!(claim.admissible(&x).gamma, GammaRule::Exactly(_)),
            base_scenario: base.name.clone(),
            bounds_gamma: claim.bounds_steps(&x, Knob::Gamma),
            bounds_eta: claim.bounds_steps(&x, Knob::Eta),
        })
    }
}

impl Structure {
    /// Coordinates that can change the decoded scenario (refinement skips the others).
    pub fn live_coordinates(&self) -> Vec<usize> {
        (0..DIMENSIONS)
            .filter(|j| match j {
                1 | 11 => self.du > 0,
                2 | 12 => self.dv > 0,
                3 => self.du > 0,
                6 => !self.single_step,
                7 => !self.full_participation,
                10 => !self.prescribed_gamma,
                _ => true,
            })
            .collect()
    }
}

fn pick<T: Copy>(choices: &[T], u: f64) -> T {
    choices[((u * choices.len() as f64) as usize).min(choices.len() - 1)]
}

fn lerp(lo: f64, hi: f64, u: f64) -> f64 {
    lo + (hi - lo) * u
}

/// Decodes a candidate into a scenario whose steps are numbers inside the claim's conditions, so
/// the saved file replays exactly.
///
/// # Errors
/// When the instance cannot be built or the claim admits no positive step at it.
pub fn decode(claim: &'static dyn Claim, st: &Structure, c: &Candidate, name: &str) -> Result<Scenario> {
    decode_target(Target::Bound(claim), st, c, name)
}

/// [`decode`] for a bound claim or a lemma: the outer steps first, then `gamma` inside the
/// conditions at those steps; a lemma's scenario runs [`LEMMA_SEARCH_REPLICATES`] replicates.
///
/// # Errors
/// As [`decode`].
pub fn decode_target(claim: Target, st: &Structure, c: &Candidate, name: &str) -> Result<Scenario> {
    decode_built(claim, st, c, name).map(|(s, _)| s)
}

/// [`decode_target`] with the instance and constants it builds to find the admissible steps: the
/// ones the scenario's run reads ([`check::prepare_built`]), so they are not built twice.
///
/// # Errors
/// As [`decode`].
fn decode_built(claim: Target, st: &Structure, c: &Candidate, name: &str) -> Result<(Scenario, (QuadraticInstance, ProblemConstants))> {
    let x = &c.x;
    let n = pick(&N_CHOICES, x[8]);
    let k = if st.single_step { 1 } else { pick(&K_CHOICES, x[6]) };
    let m = if st.full_participation { n } else { ((x[7] * n as f64).ceil() as usize).clamp(1, n) };
    let rounds = pick(&T_CHOICES, x[9]);
    let spec = InstanceSpec {
        n,
        du: st.du,
        dv: st.dv,
        l: 1.0,
        mu: 10f64.powf(lerp(-3.0, 0.0, x[0])),
        sigma_u: if st.du > 0 { lerp(0.0, 2.0, x[1]) } else { 0.0 },
        sigma_v: if st.dv > 0 { lerp(0.0, 2.0, x[2]) } else { 0.0 },
        // Heterogeneity needs a shared block and two clients (the recipe rejects it otherwise).
        b: if st.du > 0 && n >= 2 { lerp(0.0, 4.0, x[3]) } else { 0.0 },
        coupling: if x[5] < 0.5 { Coupling::Decoupled } else { Coupling::Coupled },
        init_distance: 10f64.powf(lerp(-1.0, 1.5, x[4])),
        seed: c.instance_seed,
    };
    let instance = spec.build()?;
    let constants = ProblemConstants::compute(&instance)?;
    let inputs = check::base_inputs(&instance, &constants, k, m, rounds);
    let admissible = claim.admissible(&inputs);
    let eta = |rule: EtaRule, knob: f64| rule.value() * if rule.is_exact() { 1.0 } else { 10f64.powf(knob) };
    let (eta_u, eta_v) = (eta(admissible.eta_u, x[11]), eta(admissible.eta_v, x[12]));
    let gamma = match claim.admissible(&ClaimInputs { eta_u, eta_v, ..inputs }).gamma {
        GammaRule::Exactly(g) => g,
        rule @ (GammaRule::AtMost(_) | GammaRule::Below(_)) => rule.value() * 10f64.powf(lerp(-3.0, 0.0, x[10])),
    };
    for (field, v) in [("gamma", gamma), ("eta_u", eta_u), ("eta_v", eta_v)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(Error::field(format!("algorithm.{field}"), format!("the claim admits {v} at this instance"), "a finite number > 0"));
        }
    }
    let scenario = Scenario {
        family: None,
        catalog: Default::default(),
        name: name.to_string(),
        description: format!("adversarial search for {}: worst admissible instance found", claim.id()),
        rounds,
        replicates: if matches!(claim, Target::Lemma(_)) { LEMMA_SEARCH_REPLICATES } else { 2 },
        seed: 1,
        confidence: 0.99,
        estimator: EstimatorChoice::Exact,
        instance: InstanceSource::Generated(spec),
        algorithm: AlgorithmSpec {
            kind: st.algorithm,
            k,
            m,
            gamma: Some(StepSpec::Value(gamma)),
            gamma_u: None,
            gamma_v: None,
            eta_u: StepSpec::Value(eta_u),
            eta_v: StepSpec::Value(eta_v),
        },
        expected: Default::default(),
        expected_empirical: Default::default(),
    };
    Ok((scenario, (instance, constants)))
}

/// `observed / bound` of `claim` on a scenario: `Ok(None)` when a condition fails.
///
/// # Errors
/// When the scenario cannot be prepared.
pub fn ratio(claim: &'static dyn Claim, s: &Scenario, bound_scale: f64) -> Result<(Option<f64>, Option<String>)> {
    ratio_prepared(claim, s, check::prepare(s)?, bound_scale)
}

/// [`ratio`] on a prepared scenario.
fn ratio_prepared(claim: &'static dyn Claim, s: &Scenario, prepared: Prepared, bound_scale: f64) -> Result<(Option<f64>, Option<String>)> {
    if let Some(why) = failed_in(Target::Bound(claim), s, &prepared) {
        // Decided without running (and without the Monte Carlo runs an infinite b^2 would trigger
        // for its empirical verdict, which the search does not use).
        return Ok((None, Some(why)));
    }
    let opts = CheckOptions { threads: None, bound_scale: Some(bound_scale), estimator: Some(EstimatorChoice::Exact) };
    let run = check::run_prepared(s, prepared, &Selection { claims: vec![claim], lemmas: Vec::new() }, &opts)?;
    let e = &run
        .results
        .first()
        .ok_or_else(|| Error::field("algorithm.kind", format!("`{}` is about another algorithm", claim.id()), claim.algorithm().name()))?
        .evaluation;
    Ok(match e.verdict {
        VerdictKind::NotApplicable => (None, Some(e.failed.join("; "))),
        verdict => (Some(slack_ratio(verdict, e.slack)), None),
    })
}

/// `1 / slack`; no slack means no finite bound/mean was compared (infinite bounds, zero metric):
/// the verdict decides (0 where it holds, infinity otherwise).
fn slack_ratio(verdict: VerdictKind, slack: Option<f64>) -> f64 {
    match (verdict, slack) {
        (_, Some(slack)) => 1.0 / slack,
        (VerdictKind::Holds, None) => 0.0,
        (_, None) => f64::INFINITY,
    }
}

/// The lemma check of `lemma` on `s` (its replicates, seed, confidence and first
/// every round, as `check` runs it) with the steps `p`, and its estimated
/// `observed / bound` ([`sides_ratio`]) from the same replicates.
fn lemma_check(lemma: &dyn LemmaClaim, s: &Scenario, prepared: &Prepared, p: RoundParams, bound_scale: f64) -> (Evaluation, f64) {
    let alg = s.algorithm.kind.build(p);
    let (q, estimator) = check_quantities(&prepared.instance, alg.as_ref(), s.rounds, s.seed, s.replicates);
    let x = check::claim_inputs(&prepared.instance, &prepared.constants, &p, s.rounds);
    (evaluate_lemma(lemma, &x, &q, estimator, s.confidence, bound_scale), sides_ratio(lemma, &x, &q, bound_scale))
}

/// A lemma check's verdict: its own, or past a step condition that of the comparison beyond it
/// (`NotApplicable` when a condition other than a step fails).
fn lemma_verdict_of(e: &Evaluation) -> VerdictKind {
    match (e.verdict, e.beyond_steps) {
        (VerdictKind::NotApplicable, Some((verdict, _))) => verdict,
        (verdict, _) => verdict,
    }
}

/// The lemma check of `lemma` on `s` (an estimate from the scenario's seeded replicates), or the
/// binding conditions that fail (decided without running).
///
/// # Errors
/// When the scenario cannot be prepared.
pub fn lemma_evaluation(lemma: &'static dyn LemmaClaim, s: &Scenario, bound_scale: f64) -> Result<std::result::Result<(Evaluation, f64), String>> {
    Ok(lemma_evaluation_prepared(lemma, s, &check::prepare(s)?, bound_scale))
}

/// [`lemma_evaluation`] on a prepared scenario.
fn lemma_evaluation_prepared(
    lemma: &'static dyn LemmaClaim,
    s: &Scenario,
    prepared: &Prepared,
    bound_scale: f64,
) -> std::result::Result<(Evaluation, f64), String> {
    if let Some(why) = failed_in(Target::Lemma(lemma), s, prepared) {
        return Err(why);
    }
    Ok(lemma_check(lemma, s, prepared, prepared.params, bound_scale))
}

/// The estimated `max_t mean lhs_t / mean rhs_t` of `lemma` on a scenario (see
/// [`lemma_evaluation`]): `Ok(None)` with the reason when a condition fails.
///
/// # Errors
/// When the scenario cannot be prepared.
pub fn lemma_ratio(lemma: &'static dyn LemmaClaim, s: &Scenario, bound_scale: f64) -> Result<(Option<f64>, Option<String>)> {
    Ok(lemma_ratio_of(lemma_evaluation(lemma, s, bound_scale)?))
}

/// A lemma evaluation's estimated ratio, or the conditions that failed.
fn lemma_ratio_of(evaluation: std::result::Result<(Evaluation, f64), String>) -> (Option<f64>, Option<String>) {
    match evaluation {
        Err(why) => (None, Some(why)),
        Ok((_, ratio)) => (Some(ratio), None),
    }
}

/// The claim's binding conditions that fail on the prepared `s` (joined), or `None` when all hold.
fn failed_in(claim: Target, s: &Scenario, prepared: &Prepared) -> Option<String> {
    let x = check::claim_inputs(&prepared.instance, &prepared.constants, &prepared.params, s.rounds);
    let mut failed: Vec<String> = claim.checks(&x).iter().filter(|k| !k.holds && k.is_binding()).map(|k| k.to_string()).collect();
    check::explain_infinite_bgd(&mut failed, &prepared.constants);
    (!failed.is_empty()).then(|| failed.join("; "))
}

fn evaluate(claim: Target, st: &Structure, c: &Candidate, opts: &SearchOptions) -> (Option<f64>, Option<String>) {
    let at = |(s, built): (Scenario, (QuadraticInstance, ProblemConstants))| -> Result<(Option<f64>, Option<String>)> {
        let prepared = check::prepare_built(&s, built)?;
        if opts.gamma_multiple == 1.0 && opts.eta_divisor == 1.0 {
            return match claim {
                Target::Bound(b) => ratio_prepared(b, &s, prepared, opts.bound_scale),
                Target::Lemma(l) => Ok(lemma_ratio_of(lemma_evaluation_prepared(l, &s, &prepared, opts.bound_scale))),
            };
        }
        // Past the condition: the candidate must satisfy every condition at multiple 1.
        if let Some(why) = failed_in(claim, &s, &prepared) {
            return Ok((None, Some(why)));
        }
        let relax = Relaxation { gamma: opts.gamma_multiple, eta: opts.eta_divisor };
        Ok((Some(trial(claim, &s, &prepared, relax, opts.bound_scale, false).ratio), None))
    };
    match decode_built(claim, st, c, "candidate").and_then(at) {
        Ok(r) => r,
        Err(e) => (None, Some(e.to_string())),
    }
}

/// `gamma` multiples on the worst instance.
#[derive(Debug, Clone, Serialize)]
pub struct Conservativeness {
    /// Largest multiple `c` of the (admissible or prescribed) `gamma` at which the printed bound
    /// still holds on this instance; `None` if it holds up to the largest multiple tried.
    pub bound_holds_up_to: Option<f64>,
    /// Smallest multiple tried at which the expected metric diverges within
    /// [`DIVERGENCE_ROUNDS`]; `None` if none did.
    pub diverges_from: Option<f64>,
    /// `(c, observed/bound, diverged)` for each multiple tried.
    pub trials: Vec<(f64, f64, bool)>,
}

/// Largest multiple of `gamma` tried.
pub const MAX_GAMMA_MULTIPLE: f64 = 1024.0;

/// One run at relaxed steps.
struct Trial {
    /// Observed / bound (a lemma's: estimated).
    ratio: f64,
    /// A lemma check's verdict and decisive round (`None` for a bound claim, decided by `ratio`).
    lemma: Option<(VerdictKind, Option<Checkpoint>)>,
    /// Whether the expected metric diverged.
    diverged: bool,
}

impl Trial {
    /// Whether the claim holds here: a bound claim's ratio at most `1 + tie`, a lemma check that
    /// holds (an inconclusive one, an interval straddling the bound or a diverged run, does not).
    fn holds(&self, tie: f64) -> bool {
        match self.lemma {
            Some((verdict, _)) => verdict == VerdictKind::Holds,
            None => self.ratio <= 1.0 + tie,
        }
    }
}

/// The steps of `p` relaxed: `gamma = gamma_u eta_u = gamma_v eta_v` grows by `relax.gamma`, the
/// outer steps shrink by `relax.eta`.
fn relaxed(mut p: RoundParams, relax: Relaxation) -> RoundParams {
    p.eta_u /= relax.eta;
    p.eta_v /= relax.eta;
    p.gamma_u *= relax.gamma * relax.eta;
    p.gamma_v *= relax.gamma * relax.eta;
    p
}

/// The exact expected `metric` per round of `s` run with steps `p` for `rounds` rounds.
fn metric_values(s: &Scenario, prepared: &Prepared, p: RoundParams, metric: Metric, rounds: usize) -> Vec<f64> {
    let alg = s.algorithm.kind.build(p);
    exact_metric_series(&prepared.instance, alg.as_ref(), rounds, &InclusionMoments::without_replacement(p.n, p.m), metric)
}

/// Whether `values` diverge: the last is not finite or above [`DIVERGENCE_GROWTH`] times the
/// largest of the first five.
fn diverges(values: &[f64]) -> bool {
    let start = values.iter().take(5).fold(f64::MIN_POSITIVE, |a, v| a.max(*v));
    let last = *values.last().unwrap_or(&0.0);
    !last.is_finite() || last > DIVERGENCE_GROWTH * start
}

/// The largest `running average / bound` of `claim` over the checkpoints it compares; an
/// infinite bound counts as holding (ratio 0), a bound that is not positive as failing (ratio
/// infinity).
fn bound_ratio(claim: &'static dyn Claim, x: &ClaimInputs, values: &[f64], rounds: usize, bound_scale: f64) -> f64 {
    let avg = running_average(&values[..rounds]);
    crate::verdict::compared_horizons(claim, rounds)
        .into_iter()
        .map(|t| {
            let bound = claim.bound(&x.at_horizon(t)) * bound_scale;
            if bound == f64::INFINITY {
                0.0
            } else if bound > 0.0 {
                avg[t - 1] / bound
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0f64, |a, r| if r.is_nan() { f64::INFINITY } else { a.max(r) })
}

/// Observed/bound at `gamma` times `c` (outer steps fixed, conditions ignored) and, with
/// `divergence`, whether the expected metric diverges within [`DIVERGENCE_ROUNDS`] (a lemma's:
/// `G_u + G_v`, as it states no metric).
fn at_multiple(claim: Target, s: &Scenario, relax: Relaxation, bound_scale: f64, divergence: bool) -> Result<Trial> {
    Ok(trial(claim, s, &check::prepare(s)?, relax, bound_scale, divergence))
}

/// [`at_multiple`] on a prepared scenario.
fn trial(claim: Target, s: &Scenario, prepared: &Prepared, relax: Relaxation, bound_scale: f64, divergence: bool) -> Trial {
    let p = relaxed(prepared.params, relax);
    let rounds = if divergence { DIVERGENCE_ROUNDS.max(s.rounds) } else { s.rounds };
    match claim {
        Target::Bound(c) => {
            let values = metric_values(s, prepared, p, c.metric(), rounds);
            let x = check::claim_inputs(&prepared.instance, &prepared.constants, &p, s.rounds);
            Trial { ratio: bound_ratio(c, &x, &values, s.rounds, bound_scale), lemma: None, diverged: divergence && diverges(&values) }
        }
        Target::Lemma(l) => {
            let diverged = divergence && diverges(&metric_values(s, prepared, p, Metric::SharedPlusPersonal, rounds));
            let (e, ratio) = lemma_check(l, s, prepared, p, bound_scale);
            Trial { ratio, lemma: Some((lemma_verdict_of(&e), e.decisive)), diverged }
        }
    }
}

/// Steps past a claim's conditions: `gamma` times `gamma`, the outer steps divided by `eta`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Relaxation {
    /// Multiple of the effective step `gamma`.
    pub gamma: f64,
    /// Divisor of `eta_u` and `eta_v` (at fixed `gamma`).
    pub eta: f64,
}

/// Observed / bound of `s` run with relaxed steps (conditions ignored; the room's counterexamples
/// replay through this).
///
/// # Errors
/// When the scenario cannot be prepared.
pub fn at_multiple_ratio(claim: &'static dyn Claim, s: &Scenario, relax: Relaxation, bound_scale: f64) -> Result<f64> {
    Ok(at_multiple(Target::Bound(claim), s, relax, bound_scale, false)?.ratio)
}

/// [`at_multiple_ratio`] of a lemma: its estimated ratio and the check's verdict there.
///
/// # Errors
/// When the scenario cannot be prepared.
pub fn lemma_at_multiple(lemma: &'static dyn LemmaClaim, s: &Scenario, relax: Relaxation, bound_scale: f64) -> Result<(f64, VerdictKind)> {
    let trial = at_multiple(Target::Lemma(lemma), s, relax, bound_scale, false)?;
    Ok((trial.ratio, trial.lemma.map_or(VerdictKind::NotApplicable, |l| l.0)))
}

/// Multiplies `gamma` by `sqrt(2)` steps from 1 to [`MAX_GAMMA_MULTIPLE`], then bisects the first
/// failure of the bound six times (a lemma fails where its check is violated).
///
/// # Errors
/// When the scenario cannot be prepared.
pub fn conservativeness(claim: Target, s: &Scenario, bound_scale: f64) -> Result<Conservativeness> {
    let mut trials = Vec::new();
    let mut last_ok: Option<f64> = None;
    let mut first_bad: Option<f64> = None;
    let mut diverges_from = None;
    let mut c = 1.0f64;
    while c <= MAX_GAMMA_MULTIPLE * (1.0 + super::prec::GRID_END) {
        let trial = at_multiple(claim, s, Relaxation { gamma: c, eta: 1.0 }, bound_scale, true)?;
        trials.push((c, trial.ratio, trial.diverged));
        if trial.diverged && diverges_from.is_none() {
            diverges_from = Some(c);
        }
        if trial.holds(0.0) && first_bad.is_none() {
            last_ok = Some(c);
        } else if first_bad.is_none() {
            first_bad = Some(c);
        }
        if first_bad.is_some() && diverges_from.is_some() {
            break;
        }
        c *= std::f64::consts::SQRT_2;
    }
    if let (Some(mut lo), Some(mut hi)) = (last_ok, first_bad) {
        for _ in 0..6 {
            let mid = (lo * hi).sqrt();
            let trial = at_multiple(claim, s, Relaxation { gamma: mid, eta: 1.0 }, bound_scale, true)?;
            trials.push((mid, trial.ratio, trial.diverged));
            if trial.holds(crate::prec::RELATIVE_TIE) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        last_ok = Some(lo);
    }
    trials.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bound_holds_up_to = match (last_ok, first_bad) {
        (_, None) => None,
        (ok, Some(_)) => Some(ok.unwrap_or(0.0)),
    };
    Ok(Conservativeness { bound_holds_up_to, diverges_from, trials })
}

/// The outcome of a search for one claim.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    /// Claim id.
    pub claim: &'static str,
    /// The structure searched over.
    pub structure: Structure,
    /// Settings.
    pub options: SearchOptions,
    /// Largest `observed / bound` found (0 if no candidate was applicable); a lemma's is an
    /// estimate (see [`SearchResult::worst_estimate`]).
    pub worst_ratio: f64,
    /// `violated` (a ratio above 1: a counterexample), `holds` on every candidate tried, or
    /// `not-applicable` when no candidate was. A lemma's is its check's verdict on the worst
    /// instance: violated only where the interval of `lhs - rhs` lies above 0, inconclusive where
    /// it straddles 0.
    pub verdict: VerdictKind,
    /// A lemma's decisive round on the worst instance: `mean lhs` (`estimate.mean`), the interval
    /// of `E lhs` that decides (the half-widths of the Bonferroni interval of `lhs - rhs` around
    /// `mean lhs`, see [`crate::verdict::evaluate_inequality`]), and
    /// `mean rhs` (`bound`); absent for a bound claim (exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_estimate: Option<Checkpoint>,
    /// The candidate attaining it.
    pub worst: Option<Candidate>,
    /// Its scenario (saved as a file that `fedbounds run` replays).
    pub scenario: Option<Scenario>,
    /// `gamma` multiples on the worst instance (none for a lemma without a step condition).
    pub conservativeness: Option<Conservativeness>,
    /// Every evaluation, in order.
    pub trace: Vec<Evaluated>,
    /// Candidates not applicable (a condition or the instance recipe failed).
    pub not_applicable: usize,
    /// The room of the `gamma` condition across instances (filled by [`search_all`]).
    pub room: Option<ConditionRoom>,
    /// The room of the `eta` conditions across instances (filled by [`search_all`]).
    pub eta_room: Option<ConditionRoom>,
}

/// Searches for the admissible instance with the largest `observed / bound` for `claim`.
///
/// The shared driver ([`crate::search::maximize`]) over this family's [`COORDINATES`].
///
/// # Errors
/// When the claim has no default scenario to take its structure from.
pub fn search(claim: &'static dyn Claim, opts: &SearchOptions) -> Result<SearchResult> {
    search_target(Target::Bound(claim), opts)
}

/// [`search`] for a lemma: the largest estimated `mean lhs / mean rhs` over rounds.
///
/// # Errors
/// As [`search`].
pub fn search_lemma(lemma: &'static dyn LemmaClaim, opts: &SearchOptions) -> Result<SearchResult> {
    search_target(Target::Lemma(lemma), opts)
}

/// A lemma's verdict and decisive round on its worst instance, inside its conditions or at the
/// search's relaxed steps.
fn lemma_verdict(lemma: &'static dyn LemmaClaim, s: &Scenario, opts: &SearchOptions) -> Result<(VerdictKind, Option<Checkpoint>)> {
    let relax = Relaxation { gamma: opts.gamma_multiple, eta: opts.eta_divisor };
    if relax.gamma == 1.0 && relax.eta == 1.0 {
        return Ok(match lemma_evaluation(lemma, s, opts.bound_scale)? {
            Ok((e, _)) => (e.verdict, e.decisive),
            Err(_) => (VerdictKind::NotApplicable, None),
        });
    }
    Ok(at_multiple(Target::Lemma(lemma), s, relax, opts.bound_scale, false)?.lemma.unwrap_or((VerdictKind::NotApplicable, None)))
}

/// [`search`] for a bound claim or a lemma.
///
/// # Errors
/// As [`search`].
pub fn search_target(claim: Target, opts: &SearchOptions) -> Result<SearchResult> {
    let st = Structure::of_target(claim, &opts.scenarios)?;
    let Maximum { trace, best } = maximize(DIMENSIONS, &st.live_coordinates(), opts.budget, opts.seed, &|c| evaluate(claim, &st, c, opts));
    let (worst_ratio, worst) = match best {
        Some((r, c)) => (r, Some(c)),
        None => (0.0, None),
    };
    let scenario = worst.as_ref().map(|c| decode_target(claim, &st, c, &format!("search-worst-{}", claim.id()))).transpose()?;
    let conservativeness = match &scenario {
        Some(s) if opts.gamma_multiple == 1.0 && opts.eta_divisor == 1.0 && st.bounds_gamma => Some(conservativeness(claim, s, opts.bound_scale)?),
        _ => None,
    };
    let (verdict, worst_estimate) = match (claim, &scenario) {
        (Target::Lemma(l), Some(s)) => lemma_verdict(l, s, opts)?,
        _ => (search_verdict(worst.is_some(), worst_ratio), None),
    };
    let not_applicable = trace.iter().filter(|e| e.ratio.is_none()).count();
    Ok(SearchResult {
        claim: claim.id(),
        structure: st,
        options: opts.clone(),
        worst_ratio,
        verdict,
        worst_estimate,
        worst,
        scenario,
        conservativeness,
        trace,
        not_applicable,
        room: None,
        eta_room: None,
    })
}

/// Searches every claim in `claims` (in order) and measures each step condition's room over any
/// instance with `opts.room_budget` evaluations per multiple ([`ROOM_BUDGET`] by default; none at
/// 0; a lemma's only on the knobs its conditions bound), calling `progress` after each claim.
///
/// # Errors
/// As [`search`].
pub fn search_all(claims: &[Target], opts: &SearchOptions, progress: &(dyn Fn() + Sync)) -> Result<Vec<SearchResult>> {
    // The claims' searches are independent (each seeded by `opts`) and run side by side, so one
    // search's sequential part (the bisection of a condition's room) does not leave a core
    // idle; collected in the claims' order, the first failure in that order reported.
    crate::engine::monte_carlo::in_order(claims.to_vec(), |c| -> Result<SearchResult> {
        let mut r = search_target(c, opts)?;
        let room_opts = SearchOptions { budget: opts.room_budget, ..opts.clone() };
        let violated = r.verdict == VerdictKind::Violated;
        // The two rooms are independent: measured side by side (each bisection is sequential).
        let room = |bounds: bool, knob: Knob| (bounds && opts.room_budget > 0).then(|| condition_room_target(c, &room_opts, knob, violated)).transpose();
        let (gamma, eta) = rayon::join(|| room(r.structure.bounds_gamma, Knob::Gamma), || room(r.structure.bounds_eta, Knob::Eta));
        (r.room, r.eta_room) = (gamma?, eta?);
        progress();
        Ok(r)
    })
    .into_iter()
    .collect()
}

/// How far a claim's step conditions can be relaxed before *some* admissible instance breaks the
/// printed bound: searches at `gamma` times `2^e` (or `eta` divided by `2^e`), bisecting on `e` in
/// `0..=10`.
#[derive(Debug, Clone, Serialize)]
pub struct ConditionRoom {
    /// Largest multiple tried at which no counterexample was found (0 when the claim is violated
    /// inside its condition; multiple 1 is the main search, with its own budget).
    pub holds_up_to: f64,
    /// Smallest multiple tried at which one was (`None`: none up to [`MAX_GAMMA_MULTIPLE`]).
    pub broken_at: Option<f64>,
    /// The counterexample there: its scenario at multiple 1 (steps inside the conditions; run it
    /// relaxed by `broken_at` to reproduce) and its observed / bound.
    pub counterexample: Option<(Scenario, f64)>,
    /// `(multiple, worst observed / bound found)` per search, in the order run.
    pub searches: Vec<(f64, f64)>,
    /// Evaluations per search.
    pub budget: usize,
}

/// Evaluations per search of [`condition_room`] in the main command.
pub const ROOM_BUDGET: usize = 60;

/// Which step a room measurement relaxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Knob {
    /// `gamma` times the multiple.
    Gamma,
    /// `eta_u`, `eta_v` divided by the multiple, `gamma` fixed.
    Eta,
}

/// Measures the room of `claim`'s step conditions on `knob` (see [`ConditionRoom`]); `at_one` is
/// the worst ratio the search inside the conditions found.
///
/// # Errors
/// As [`search`].
pub fn condition_room(claim: &'static dyn Claim, opts: &SearchOptions, knob: Knob, at_one: f64) -> Result<ConditionRoom> {
    condition_room_target(Target::Bound(claim), opts, knob, search_verdict(true, at_one) == VerdictKind::Violated)
}

/// [`condition_room`] of a bound claim or a lemma; `violated_inside`: the search inside the
/// conditions found a counterexample (then there is no room). A multiple breaks the claim where
/// its search's verdict is violated.
///
/// # Errors
/// As [`search`].
pub fn condition_room_target(claim: Target, opts: &SearchOptions, knob: Knob, violated_inside: bool) -> Result<ConditionRoom> {
    let mut searches = Vec::new();
    let mut run = |e: u32| -> Result<SearchResult> {
        let m = 2f64.powi(e as i32);
        let relaxed = match knob {
            Knob::Gamma => SearchOptions { gamma_multiple: m, ..opts.clone() },
            Knob::Eta => SearchOptions { eta_divisor: m, ..opts.clone() },
        };
        let r = search_target(claim, &relaxed)?;
        searches.push((2f64.powi(e as i32), r.worst_ratio));
        Ok(r)
    };
    if violated_inside {
        return Ok(ConditionRoom { holds_up_to: 0.0, broken_at: Some(1.0), counterexample: None, searches, budget: opts.budget });
    }
    let top = MAX_GAMMA_MULTIPLE.log2() as u32;
    let (mut lo, mut hi) = (0u32, top);
    let mut broken = run(hi)?;
    if broken.verdict != VerdictKind::Violated {
        return Ok(ConditionRoom { holds_up_to: MAX_GAMMA_MULTIPLE, broken_at: None, counterexample: None, searches, budget: opts.budget });
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let r = run(mid)?;
        if r.verdict == VerdictKind::Violated {
            hi = mid;
            broken = r;
        } else {
            lo = mid;
        }
    }
    Ok(ConditionRoom {
        holds_up_to: 2f64.powi(lo as i32),
        broken_at: Some(2f64.powi(hi as i32)),
        counterexample: broken.scenario.map(|s| (s, broken.worst_ratio)),
        searches,
        budget: opts.budget,
    })
}
