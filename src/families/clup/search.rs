//! FedCLUP's adversarial search space ([`crate::search::space`]): a unit-cube candidate decoded
//! into a scenario of the family's instance class (clients, dimension, samples per client,
//! heterogeneity radius `R`, label noise, feature norm `L`, centre, `lambda`, initialization, the
//! design drawn from the candidate's seed) with its steps inside the claim's conditions.
//!
//! Claims searched, each as its own check computes it ([`super::check`]):
//! - Lemma 1 (`CLUP-L1`), Theorem 1 and its readings (`CLUP-T1*`) and Corollary 1 (`CLUP-C1*`):
//!   the statistical claims, over one design draw per candidate and the lambdas the check
//!   compares (Theorem 1's grid and probes, Lemma 1's grid, Corollary 1's admitted lambdas), no
//!   steps; so are Lemma 3 (`CLUP-L3`), Lemma 4 (`CLUP-L4`), (35) (`CLUP-G35*`), (52)
//!   (`CLUP-G52*`) and (79) (`CLUP-G79`) over their own lambdas. Lemma 1's constants are attained (`mu_g`, `mu_l`, `L_w` by the client whose Hessian
//!   has the smallest eigenvalue), so its worst ratio is 1.
//! - Theorem 2 (`CLUP-T2`, `~mean-of-locals`, `CLUP-T2-LOCAL`, `CLUP-T2-LYAPUNOV`) and Theorem 3
//!   (`CLUP-T3*`): the steps `gamma = f_g / L_g`, `eta = f_e / L_l` and `K` a multiple in `[1, 2]`
//!   of the smallest `K` that (14)/(143) admits at them (003:L176-181, L1245-1251; the
//!   mean-of-locals reading fixes `gamma = 1/lambda`, 003:L258). Step room: `gamma` and `eta`
//!   multiplied by `c` past `gamma < 1/L_g` and `eta <= 1/L_l`, and `K` divided by `c` (rounded
//!   up, at least 1) past (14).
//! - Corollary 2 (`CLUP-C2`) and Corollary 3 (`CLUP-C3`, `~c4`), at the corollary's parameters
//!   `eta = 1/(lambda + L)`, `gamma = 1/(2 L_g)`, `K` of (134) (003:L185, L1164). Step room: each
//!   prescribed parameter moved by `c` ([`super::check::Corollary2Multiples`]): `gamma` and `eta`
//!   multiplied (the corollary sets `eta` at Theorem 2's limit `1/L_l`), `K` divided past (134).
//! - Lemma 5 (`CLUP-L5`) and Lemma 6 (`CLUP-L6`) on Algorithm 1 at Theorem 2's steps, each with
//!   the one condition it states: `eta <= 1/L_l` (003:L955) and `gamma <= 1/L_g` (003:L964,
//!   printed `gamma <= L_g`, I-CLUP13), its step multiplied by `c`.
//! - The remark after Theorem 3 (`CLUP-T3-REMARK`, `~ball-at-steps`) on Algorithm 2 at the
//!   remark's own steps (003:L1318): `lambda` and the batch; no step to scale.
//! - Corollary 2 (ii) and its rounds (`CLUP-C2-COMPUTE`, `CLUP-C2-ROUNDS`): over the sweep
//!   `{lambda/10, lambda, 10 lambda}`, each lambda at Corollary 2's parameters; no step to scale
//!   (the sweep's steps are the corollary's at every lambda).
//!
//! Not searched, with the reason ([`NOT_SEARCHED`]): `CLUP-T2~expgamma` (no admissible instance:
//! at `gamma = 1/L_g` the strict `gamma < 1/L_g` fails on every instance, I-CLUP11),
//! `CLUP-L2` (an identity checked as two inequalities: ratio 1 up to rounding everywhere),
//! `CLUP-C2-MONOTONE` and `CLUP-Q-MONOTONE` (monotonicity over a sweep: orderings of one
//! instance's points, with no bound to be tight against), `CLUP-T3-BALL-B` (the floor at `B`
//! against the floor at `B = 1` over `B`: a scaling between runs of one instance, not a bound
//! with a slack over the instance class), and claims added to the family without an entry here.

use std::collections::BTreeMap;

use super::bounds::{self, Opt};
use super::check::{Corollary2Multiples, Init, Scenario, StepsSpec};
use super::claims::{ClupClaim, GammaRule, Statement};
use super::model::{Features, ModelSpec};
use super::{Card, CARD};
use crate::error::{Error, Result};
use crate::search::space::card_with_scenario;
use crate::search::{Candidate, SearchSpace};
use crate::verdict::{ConstantsSource, VerdictKind};

/// Rounds of a candidate's run of Algorithm 1 (the statistical claims need no rounds: 2).
const ROUNDS: usize = 40;
/// Rounds of a candidate's run of Algorithm 2, whose exact moments cost `K` propagations a round.
const ROUNDS_ALG2: usize = 20;
const CLIENTS: [usize; 4] = [2, 3, 4, 6];
const DIMS: [usize; 3] = [2, 3, 4];
/// Samples per client, in multiples of the dimension (at least 2: a design with `n = d` is
/// nearly singular, `kappa` without bound).
const SAMPLES_PER_DIM: [usize; 4] = [2, 3, 4, 6];
const BATCHES: [usize; 3] = [1, 2, 3];
/// Largest `K` a candidate's (14) may ask for, for Algorithm 1 and Algorithm 2 (beyond: the
/// candidate is not applicable; Algorithm 2's exact moments cost `K` propagations a round).
const K_CAP: (usize, usize) = (400, 60);
/// Range of `gamma L_g` (log scale): inside `gamma < 1/L_g`, short of the boundary where (14)'s
/// right side `(1 - gamma L_g)^4` vanishes and no `K` satisfies it.
const GAMMA_RANGE: (f64, f64) = (0.05, 0.95);
/// Range of `eta L_l` (log scale), up to the boundary `eta = 1/L_l` (admitted: `<=`).
const ETA_RANGE: (f64, f64) = (0.1, 1.0);

/// The coordinates, in order.
const COORDINATES: [&str; 13] = [
    "clients m in {2, 3, 4, 6}",
    "dimension d in {2, 3, 4}",
    "samples per client n / d in {2, 3, 4, 6}",
    "log10 R in [-2, 0.5]",
    "log10 label noise s in [-1.5, 0.5] (rho^2 = s^2 L)",
    "log10 L (squared feature norm) in [-1, 1]",
    "||w*_g|| in [0, 2]",
    "log10 lambda in [-2, 2]",
    "gamma L_g in [0.05, 0.95], log scale (Theorems 2-3)",
    "eta L_l in [0.1, 1], log scale (Theorems 2-3)",
    "K / (smallest K of (14)) in [1, 2] (Theorems 2-3; that K at most 400, 60 for Theorem 3)",
    "batch B in {1, 2, 3} (Theorem 3)",
    "start: zero (< 1/2) or the local models at their solution",
];

/// The claims the search leaves out and why (the rest of the family's claims are searched).
pub const NOT_SEARCHED: [(&str, &str); 13] = [
    ("CLUP-T2~expgamma", "no admissible instance: at gamma = 1/L_g the strict gamma < 1/L_g fails on every instance (I-CLUP11)"),
    ("CLUP-C2-MONOTONE", "a monotonicity of the rounds over a lambda sweep: an ordering of one instance's points, no bound to be tight against"),
    ("CLUP-Q-MONOTONE", "a monotonicity of q1 and q2 in lambda: an ordering of one instance's points, no bound to be tight against"),
    ("CLUP-Q-MONOTONE~unguarded", "a monotonicity of q1 and q2 in lambda: an ordering of one instance's points, no bound to be tight against"),
    (
        "CLUP-L2",
        "an identity (Lemma 2's two gradients are equal) checked as two inequalities whose ratio is 1 up to rounding on every instance: no slack to search",
    ),
    ("CLUP-T3-BALL-B", "a scaling of the noise floor between runs at B and B = 1 of one instance, not a bound with a slack"),
    ("CLUP-T3-BALL-M-SLOPE", "a rate exponent fitted over runs of one instance with its clients repeated, not a bound with a slack over the instance class"),
    ("CLUP-T3-BALL-B-SLOPE", "a rate exponent fitted over runs of one instance at several batch sizes, not a bound with a slack over the instance class"),
    ("CLUP-FIG2-K", "a monotonicity of the rounds over a K sweep: an ordering of one instance's points, no bound to be tight against"),
    (
        "CLUP-FIG2-K~every-eps",
        "a monotonicity of the rounds over a K sweep at every error level: an ordering of one instance's points, no bound to be tight against",
    ),
    ("CLUP-FIG3-LAMBDA", "an ordering of the rounds of the methods over targets of one instance, no bound to be tight against"),
    ("CLUP-FIG3-LAMBDA~every-eps", "an ordering of the rounds of the methods over targets of one instance, no bound to be tight against"),
    ("CLUP-C2-K134", "a function of (mu, L, lambda) alone, swept densely over lambda and kappa in tests/clup_k134.rs rather than over instances"),
];

fn pick<T: Copy>(choices: &[T], u: f64) -> T {
    choices[((u * choices.len() as f64) as usize).min(choices.len() - 1)]
}

/// `lo (hi/lo)^u`: a log-scale coordinate.
fn log_range((lo, hi): (f64, f64), u: f64) -> f64 {
    lo * (hi / lo).powf(u)
}

/// What the search does with a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Lemma 1, Theorem 1, Corollary 1: the design and the lambdas the check compares.
    Statistical,
    /// Theorem 2 (and its local models and Lyapunov recursion) at the scenario's steps, with
    /// `gamma` chosen (`true`) or fixed at `1/lambda` (the mean of the locals).
    Theorem2 { own_gamma: bool },
    /// Corollaries 2 and 3 at Corollary 2's parameters.
    Corollary2,
    /// Corollary 2's lambda sweep.
    Sweep,
    /// Theorem 3 on Algorithm 2.
    Theorem3,
    /// Lemma 5 (`false`) or Lemma 6 (`true`) on Algorithm 1 at the scenario's steps, each with
    /// its one step condition.
    Lemma { six: bool },
    /// The remark after Theorem 3 on Algorithm 2 at the remark's own steps.
    Remark,
}

fn kind(claim: &ClupClaim) -> Option<Kind> {
    match claim.statement {
        Statement::Lemma1
        | Statement::Theorem1 { .. }
        | Statement::Corollary1 { .. }
        | Statement::Lemma3
        | Statement::Lemma4
        | Statement::Global35 { .. }
        | Statement::Global52 { .. }
        | Statement::Global79 => Some(Kind::Statistical),
        Statement::Theorem2Global(GammaRule::Scenario) | Statement::Theorem2Local | Statement::Theorem2Lyapunov => Some(Kind::Theorem2 { own_gamma: true }),
        Statement::Theorem2Global(GammaRule::MeanOfLocals) => Some(Kind::Theorem2 { own_gamma: false }),
        Statement::Corollary2 | Statement::Corollary3 { .. } => Some(Kind::Corollary2),
        Statement::Corollary2Rounds | Statement::Corollary2Computation => Some(Kind::Sweep),
        Statement::Theorem3 { .. } => Some(Kind::Theorem3),
        Statement::Lemma5 => Some(Kind::Lemma { six: false }),
        Statement::Lemma6 => Some(Kind::Lemma { six: true }),
        Statement::Theorem3Remark { .. } => Some(Kind::Remark),
        _ => None,
    }
}

/// The step-size conditions of each kind, as the paper states them.
fn conditions(kind: Kind) -> Vec<&'static str> {
    const GAMMA: &str = "gamma < 1/L_g (003:L176, L1245)";
    const ETA: &str = "eta <= 1/L_l (003:L176, L1245)";
    const K14: &str = "(14)/(143) on K: K divided by c (003:L178, L1247)";
    match kind {
        Kind::Theorem2 { own_gamma: true } | Kind::Theorem3 => vec![GAMMA, ETA, K14],
        Kind::Theorem2 { own_gamma: false } => vec![ETA, K14],
        Kind::Corollary2 => vec![
            "gamma = 1/(2 L_g) (003:L185; Theorem 2: gamma < 1/L_g)",
            "eta = 1/(lambda + L) = 1/L_l (003:L185; Theorem 2: eta <= 1/L_l)",
            "(134) K >= 2 + (lambda+L)/(lambda+mu) ln(1056 kappa^2): K divided by c (003:L1164)",
        ],
        Kind::Lemma { six: false } => vec!["eta <= 1/L_l (003:L955)"],
        Kind::Lemma { six: true } => vec!["gamma <= 1/L_g (003:L964 prints gamma <= L_g, I-CLUP13)"],
        Kind::Statistical | Kind::Sweep | Kind::Remark => Vec::new(),
    }
}

/// The search space of FedCLUP's claims.
pub struct Space;

impl Space {
    /// The scenario of `c` before its steps: the model, `lambda`, the start, what runs.
    fn base(kind: Kind, c: &Candidate) -> Scenario {
        let x = &c.x;
        let d = pick(&DIMS, x[1]);
        let model = ModelSpec {
            m: pick(&CLIENTS, x[0]),
            n: d * pick(&SAMPLES_PER_DIM, x[2]),
            d,
            r: 10f64.powf(-2.0 + 2.5 * x[3]),
            l: 10f64.powf(2.0 * x[5] - 1.0),
            noise: 10f64.powf(-1.5 + 2.0 * x[4]),
            center: 2.0 * x[6],
            seed: c.instance_seed,
            features: Features::Sphere,
        };
        let lambda = 10f64.powf(4.0 * x[7] - 2.0);
        let statistical = kind == Kind::Statistical;
        Scenario {
            family: None,
            name: "search-worst".into(),
            description: "the worst case found by `fedbounds search`".into(),
            model: model.into(),
            designs: Some(1),
            statistics: statistical,
            lambda,
            rounds: match kind {
                Kind::Statistical => 2,
                Kind::Theorem3 | Kind::Remark => ROUNDS_ALG2,
                _ => ROUNDS,
            },
            steps: StepsSpec::default(),
            batch: matches!(kind, Kind::Theorem3 | Kind::Remark).then(|| pick(&BATCHES, x[11])),
            init: if x[12] < 0.5 { Init::Zero } else { Init::LocalsAtSolution },
            lambda_sweep: if kind == Kind::Sweep { vec![lambda / 10.0, lambda, 10.0 * lambda] } else { Vec::new() },
            epsilon: 1e-8,
            corollary2_multiples: None,
            lambda_grid: None,
            expected: BTreeMap::new(),
        }
    }

    /// Theorems 2-3's steps on `s`'s design draw 0 (the one the runs use): `gamma`, `eta` as
    /// fractions of their limits (`gamma = 1/lambda` for the mean of the locals) and `K` a
    /// multiple of the smallest that (14) admits, with the step of condition `j` moved by `c`.
    fn theorem_steps(s: &mut Scenario, claim: &ClupClaim, own_gamma: bool, x: &[f64], step: Option<(usize, f64)>) -> Result<()> {
        let c0 = s.model.instance(0)?.constants;
        let l = if claim.uses_empirical_l() { c0.l_empirical } else { c0.l_sample };
        let k1 = bounds::lemma1(c0.mu, l, s.lambda);
        let gamma = if own_gamma { log_range(GAMMA_RANGE, x[8]) / k1.l_g } else { 1.0 / s.lambda };
        let eta = log_range(ETA_RANGE, x[9]) / k1.l_l;
        let o = Opt { mu: c0.mu, l, lambda: s.lambda, gamma, eta, k: 1.0, m: s.model.m() as f64, mu_error: c0.mu_error };
        let cap = if s.batch.is_some() { K_CAP.1 } else { K_CAP.0 };
        let k14 = bounds::k_min_14(&o, cap).ok_or_else(|| {
            Error::field(
                "search.steps.k",
                format!("no K <= {cap} satisfies (14) at gamma L_g = {:.3}, eta L_l = {:.3}", gamma * k1.l_g, eta * k1.l_l),
                "a candidate with a smaller K of (14)",
            )
        })?;
        let k = (k14 as f64 * (1.0 + x[10])).ceil() as usize;
        // The conditions in order: gamma (own gamma only), eta, (14).
        let which = step.map(|(j, c)| (if own_gamma { j } else { j + 1 }, c));
        let (mut gamma, mut eta, mut k) = (gamma, eta, k);
        match which {
            Some((0, c)) => gamma *= c,
            Some((1, c)) => eta *= c,
            Some((_, c)) => k = divided(k, c),
            None => {}
        }
        if !own_gamma {
            gamma = 1.0 / s.lambda;
        }
        s.steps = StepsSpec { gamma: Some(gamma), eta: Some(eta), k: Some(k) };
        Ok(())
    }
}

/// `ceil(k / c)`, at least 1.
fn divided(k: usize, c: f64) -> usize {
    ((k as f64 / c).ceil() as usize).max(1)
}

impl SearchSpace<Card, ClupClaim, Scenario> for Space {
    fn coordinates(&self, _claim: &ClupClaim) -> Vec<String> {
        COORDINATES.map(String::from).to_vec()
    }

    /// The coordinates a claim's run reads: the statistical claims neither `lambda` (they compare
    /// over lambdas of their own) nor the steps, batch or start; the corollaries not the steps.
    fn live(&self, claim: &ClupClaim) -> Vec<usize> {
        let model = 0..7;
        match kind(claim) {
            Some(Kind::Statistical) => model.collect(),
            Some(Kind::Theorem2 { own_gamma }) => model.chain([7, 9, 10, 12]).chain(own_gamma.then_some(8)).collect(),
            Some(Kind::Lemma { .. }) => model.chain([7, 8, 9, 10, 12]).collect(),
            Some(Kind::Remark) => model.chain([7, 11]).collect(),
            Some(Kind::Theorem3) => model.chain(7..13).collect(),
            Some(Kind::Corollary2) => model.chain([7, 12]).collect(),
            Some(Kind::Sweep) | None => model.chain([7]).collect(),
        }
    }

    fn covers(&self, claim: &ClupClaim) -> bool {
        kind(claim).is_some()
    }

    fn not_searched(&self, claim: &ClupClaim) -> Option<&'static str> {
        why_not_searched(claim)
    }

    /// Few evaluations in the main job, no "any instance" room; `fedbounds search` takes larger
    /// budgets.
    fn main_job_budget(&self) -> (usize, usize) {
        (24, 0)
    }

    fn expected(&self, card: &Card, claim: &ClupClaim, source: ConstantsSource) -> Option<VerdictKind> {
        card.search.expected(claim.id, source)
    }

    fn step_conditions(&self, claim: &ClupClaim) -> Vec<String> {
        kind(claim).map(conditions).unwrap_or_default().into_iter().map(String::from).collect()
    }

    fn decode(&self, _card: &Card, claim: &ClupClaim, c: &Candidate, step: Option<(usize, f64)>) -> Result<Scenario> {
        let Some(kind) = kind(claim) else {
            return Err(Error::field("search.claim", format!("{} is not searched", claim.id), "a claim the search covers"));
        };
        let mut s = Space::base(kind, c);
        match kind {
            Kind::Theorem2 { own_gamma } => Space::theorem_steps(&mut s, claim, own_gamma, &c.x, step)?,
            Kind::Theorem3 => Space::theorem_steps(&mut s, claim, true, &c.x, step)?,
            // The one condition each lemma states: Lemma 5's eta (index 1), Lemma 6's gamma (0).
            Kind::Lemma { six } => Space::theorem_steps(&mut s, claim, true, &c.x, step.map(|(_, c)| (usize::from(!six), c)))?,
            Kind::Corollary2 => {
                s.corollary2_multiples = step.map(|(j, c)| match j {
                    0 => Corollary2Multiples { gamma: c, ..Default::default() },
                    1 => Corollary2Multiples { eta: c, ..Default::default() },
                    _ => Corollary2Multiples { k_divisor: c, ..Default::default() },
                });
            }
            Kind::Statistical | Kind::Sweep | Kind::Remark => {}
        }
        s.check("search")?;
        Ok(s)
    }

    fn replay_card(&self, claim: &ClupClaim, scenario: &Scenario, _source: ConstantsSource, expected: VerdictKind) -> Result<String> {
        let mut s = scenario.clone();
        s.expected = BTreeMap::from([(claim.id.to_string(), expected)]);
        let mut text = card_with_scenario(CARD.1, &s)?;
        text.insert_str(0, "# A scenario found by `fedbounds search`; `fedbounds check --card` on this file replays it.\n");
        Ok(text)
    }
}

/// Why the search does not cover `claim` (`None`: it does): the reason [`NOT_SEARCHED`] gives,
/// or, for a claim without an entry there, that it is not in the search space.
pub fn why_not_searched(claim: &ClupClaim) -> Option<&'static str> {
    if Space.covers(claim) {
        return None;
    }
    if matches!(claim.statement, Statement::Card(_)) {
        return Some("defined by a card: the search decodes scenarios for the built-in claims' own steps and conditions, not a card's formula");
    }
    Some(NOT_SEARCHED.iter().find(|(id, _)| *id == claim.id).map_or(crate::search::space::NO_REASON, |(_, why)| why))
}
