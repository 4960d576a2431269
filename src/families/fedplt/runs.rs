//! Runs of FedPLT: exact expectations from the shared engine, and seeded sample paths for the
//! quantities that are properties of the trajectory (the alignment ratios of Assumption 6).

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use crate::engine::{nan_max, Design, InclusionMoments, Moments, Observable, RandomAffineRound, RoundMaps};
use crate::error::Result;

use super::algorithm::{FedPltRound, LocalGradient};
use super::problem::Instance;
use super::psi_step::{psi_floors, PsiStepTally};

/// The step of each round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Schedule {
    /// `eta^t = eta`.
    Constant(f64),
    /// `eta^t = beta / (z (t + offset))`: the paper's decaying step is `beta = 1`, `offset = 1`
    /// (001:L659).
    Decaying {
        /// `z` the schedule uses.
        z: f64,
        /// `beta`.
        beta: f64,
        /// `offset`.
        offset: f64,
    },
}

impl Schedule {
    /// `eta^t`.
    pub fn eta(&self, t: usize) -> f64 {
        match *self {
            Schedule::Constant(eta) => eta,
            Schedule::Decaying { z, beta, offset } => beta / (z * (t as f64 + offset)),
        }
    }
}

/// What the exact engine gives for one run.
#[derive(Debug, Clone, Serialize)]
pub struct ExactRun {
    /// `D^t = E||W^t - W*||^2`, `t = 0..=T`.
    pub distance: Vec<f64>,
    /// `E W^T`.
    pub final_mean: Vec<f64>,
    /// `sup_{t < T, s < tau, k} E||grad F_k(W_k^{t,s})||^2`: the smallest `G^2` for which the
    /// proof's step `E||grad l(W_k^{t,s})||^2 <= G^2 + sigma^2` (001:L576) holds on this run.
    pub local_gradient_sup: f64,
    /// `sup_{t < T, s < tau, k} E||grad F(W_k^{t,s})||^2`: the global gradient of Assumption 5
    /// (001:L143-149) at the points the run visits.
    pub global_gradient_sup: f64,
    /// `E sum_k c_k ||W_k^{t,tau} - W^t||^2` for `t = 0..T`: the local divergence of Step 4.6
    /// (001:L554-592).
    pub divergence: Vec<f64>,
}

/// A quantity affine in the error `e = W - W*` and the round's noise `xi`, `M e + o + N xi`,
/// probed once: `E||M e + o + N xi||^2 = E||M e + o||^2 + ||N||_F^2` for standard normal `xi`
/// independent of `e`, without cancellation against `||W*||` (`o` is the value at `W*`).
struct Affine {
    obs: Observable,
    noise_energy: f64,
}

/// A quantity of a round as a function of the state `W` and the round's noise.
type OfRound<'a> = &'a dyn Fn(&DVector<f64>, &[f64]) -> DVector<f64>;

impl Affine {
    /// Probes `f(W, noise)` at `w_star`, with noise vectors of length `len`.
    fn probe(d: usize, len: usize, w_star: &DVector<f64>, f: OfRound<'_>) -> Self {
        let quiet = vec![0.0; len];
        let obs = Observable::probe_at(d, d, w_star, &|w| f(w, &quiet));
        let offset = f(w_star, &quiet);
        let noise_energy: f64 = (0..len)
            .map(|l| {
                let mut e = vec![0.0; len];
                e[l] = 1.0;
                (f(w_star, &e) - &offset).norm_squared()
            })
            .sum();
        Self { obs, noise_energy }
    }

    /// `E||.||^2` at the error's moments `m`; NaN when one is.
    fn expected_square(&self, m: &Moments) -> f64 {
        self.obs.expected_square(m) + self.noise_energy
    }
}

/// One round's quantities at one step, probed once per step: per client and local step
/// `s < tau`, the local gradient `grad F_k(W_k^{t,s})` and the global gradient
/// `grad F(W_k^{t,s}) = sum_j c_j grad F_j(W_k^{t,s})`; per client, its weight `c_k` and its
/// local divergence `W_k^{t,tau} - W^t`.
struct RoundQuantities {
    local: Vec<Affine>,
    global: Vec<Affine>,
    divergence: Vec<(f64, Affine)>,
}

impl RoundQuantities {
    fn probe(round: &FedPltRound<'_>, w_star: &DVector<f64>) -> Self {
        let (d, len, inst) = (round.state_dim(), round.noise_per_component(), round.instance);
        let (mut local, mut global, mut divergence) = (Vec::new(), Vec::new(), Vec::new());
        for k in 0..round.components() {
            for s in 0..round.tau {
                local.push(Affine::probe(d, len, w_star, &|w, noise| inst.gradient(k, &round.local_iterates(k, w, noise)[s])));
                global.push(Affine::probe(d, len, w_star, &|w, noise| {
                    let x = &round.local_iterates(k, w, noise)[s];
                    (0..inst.clients()).fold(DVector::zeros(d), |g, j| g + inst.gradient(j, x) * inst.weights[j])
                }));
            }
            divergence.push((inst.weights[k], Affine::probe(d, len, w_star, &|w, noise| &round.local_iterates(k, w, noise)[round.tau] - w)));
        }
        Self { local, global, divergence }
    }

    /// `(max E||grad F_k||^2, max E||grad F||^2, E sum_k c_k ||W_k^{t,tau} - W^t||^2)` at the
    /// error's moments `m`.
    fn at(&self, m: &Moments) -> (f64, f64, f64) {
        let worst = |v: &[Affine]| v.iter().fold(0.0, |w, a| nan_max(w, a.expected_square(m)));
        (worst(&self.local), worst(&self.global), self.divergence.iter().map(|(c, a)| c * a.expected_square(m)).sum())
    }
}

/// What every run on one instance shares: the instance, the compensation `psi`, the local steps
/// `tau`, the gradient model (eq. 4 or 5) and the minimizer `W*`; a run adds its step schedule.
#[derive(Debug, Clone, Copy)]
pub struct RunSetup<'a> {
    pub inst: &'a Instance,
    pub psi: &'a [f64],
    pub tau: usize,
    pub gradient: LocalGradient,
    pub w_star: &'a DVector<f64>,
}

impl<'a> RunSetup<'a> {
    /// The round at step `eta`.
    fn round(&self, eta: f64) -> FedPltRound<'a> {
        FedPltRound { instance: self.inst, psi: self.psi, eta, tau: self.tau, gradient: self.gradient }
    }
}

/// Exact expectations of `rounds` rounds from the instance's `W^0`.
///
/// The moments propagated are those of the error `e^t = W^t - W*` (the maps probed at `W*`,
/// [`RoundMaps::probe_at`]), so `D^t = E||e^t||^2` keeps its own relative accuracy as the run
/// approaches `W*`, however far `W*` is from the origin.
///
/// # Errors
/// Only from building the design (never for a valid instance).
pub fn exact_run(setup: &RunSetup, schedule: Schedule, rounds: usize) -> Result<ExactRun> {
    let RunSetup { inst, w_star, .. } = *setup;
    let d = inst.dim();
    let inc = Design::Full { n: inst.clients() }.inclusion_moments().expect("a full design is exchangeable");
    let distance_obs = Observable::new(DMatrix::identity(d, d), DVector::zeros(d));
    let mut m = Moments::point(&inst.initial - w_star);
    let mut distance = Vec::with_capacity(rounds + 1);
    let mut divergence = Vec::with_capacity(rounds);
    let (mut local_sup, mut global_sup): (f64, f64) = (0.0, 0.0);
    let mut cached: Option<(f64, RoundMaps, RoundQuantities)> = None;
    for t in 0..rounds {
        distance.push(distance_obs.expected_square(&m));
        let eta = schedule.eta(t);
        let round = setup.round(eta);
        if cached.as_ref().is_none_or(|(e, ..)| *e != eta) {
            cached = Some((eta, RoundMaps::probe_at(&round, w_star), RoundQuantities::probe(&round, w_star)));
        }
        let (_, maps, quantities) = cached.as_ref().expect("probed above");
        let (local, global, div) = quantities.at(&m);
        (local_sup, global_sup) = (nan_max(local_sup, local), nan_max(global_sup, global));
        divergence.push(div);
        m = maps.propagate(&m, &inc);
    }
    distance.push(distance_obs.expected_square(&m));
    let final_mean = (&m.mean + w_star).iter().copied().collect();
    Ok(ExactRun { distance, final_mean, local_gradient_sup: local_sup, global_gradient_sup: global_sup, divergence })
}

/// Where Assumption 6 failed: round, client, sample path and the ratio (NaN when undefined).
pub type AlignmentFailure = (usize, usize, u64, f64);

/// The alignment ratios of Assumption 6 along sample paths (001:L151-156).
#[derive(Debug, Clone, Serialize)]
pub struct Alignment {
    /// `min rho_k` over clients, replicates and every point where a gradient is taken, per round.
    pub per_round_min: Vec<f64>,
    /// `min rho_k` over replicates and the client's local iterates, per round and client
    /// (`[t][k]`; infinite where no ratio was decided). Its minimum over `k` is [`Self::per_round_min`].
    #[serde(skip)]
    pub per_round_client_min: Vec<Vec<f64>>,
    /// The smallest value seen (`rho_`, 001:L392-396).
    pub min: f64,
    /// Where a ratio was not positive or undefined (its denominator 0), if anywhere: round,
    /// client, replicate and value.
    pub first_failure: Option<AlignmentFailure>,
    /// Where a sample path first overflowed (its iterates or gradients not finite), if one did:
    /// A6 is measured on the points before it only.
    #[serde(skip)]
    pub first_overflow: Option<Overflow>,
    /// Points where every coordinate the client's mask sees was within rounding of `W*`: the
    /// ratio was not decided there ([`masked_within_rounding`]).
    #[serde(skip)]
    pub within_rounding: usize,
    /// Sample paths run.
    pub replicates: usize,
    /// Monte Carlo `||W^t - W*||^2` per replicate (for cross-checks), `t = 0..=T`.
    #[serde(skip)]
    pub distance_paths: Vec<Vec<f64>>,
    /// The psi step of Part 2 (001:L404-408) at the same points ([`super::psi_step`]).
    #[serde(skip)]
    pub psi_step: PsiStepTally,
}

/// Whether every coordinate client `k`'s mask sees is within rounding of `W*`
/// ([`super::prec::WITHIN_ROUNDING`]): there the numerator of `rho_k` is rounding (exact
/// arithmetic may give a tiny positive ratio where floating point gives 0), so it decides nothing.
/// The sample paths call it in the error coordinates (`w = e`, `w_star = 0`), where it holds only
/// for an error exactly 0 on those coordinates: the paths' own rounding does not enter there.
pub fn masked_within_rounding(inst: &Instance, k: usize, w: &DVector<f64>, w_star: &DVector<f64>) -> bool {
    let close = |i: usize| (w[i] - w_star[i]).abs() <= super::prec::WITHIN_ROUNDING * (w[i].abs() + w_star[i].abs());
    (0..w.len()).filter(|&i| inst.masks[k][i] != 0.0).all(close)
}

/// Whether `w` is `W*` to rounding ([`super::prec::AT_OPTIMUM`], relative to the vectors); an
/// iterate that overflowed (an infinite or NaN distance) is never at the optimum.
pub fn at_optimum(w: &DVector<f64>, w_star: &DVector<f64>) -> bool {
    let distance = (w - w_star).norm();
    distance.is_finite() && distance <= super::prec::AT_OPTIMUM * w.norm().max(w_star.norm())
}

/// `rho_k(W)` at one point ([`alignment_ratio`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ratio {
    /// The ratio.
    Value(f64),
    /// The denominator vanishes (relative to `||grad|| ||W - W*||`): the ratio is undefined.
    Undefined,
    /// The point, its gradient or their product is not finite (the run overflowed): nothing is
    /// measured there.
    Overflow,
}

impl Ratio {
    /// The ratio where it is one.
    pub fn value(self) -> Option<f64> {
        match self {
            Ratio::Value(v) => Some(v),
            Ratio::Undefined | Ratio::Overflow => None,
        }
    }
}

/// `rho_k(W) = <m_k .* grad F_k(W), W - W*> / <grad F_k(W), W - W*>` (001:L151-155).
pub fn alignment_ratio(inst: &Instance, k: usize, w: &DVector<f64>, w_star: &DVector<f64>) -> Ratio {
    let g = inst.gradient(k, w);
    let x = w - w_star;
    let den = g.dot(&x);
    let num = g.component_mul(&inst.masks[k]).dot(&x);
    if !den.is_finite() || !num.is_finite() || !(g.norm() * x.norm()).is_finite() {
        Ratio::Overflow
    } else if den.abs() <= super::prec::ALIGNMENT_DENOMINATOR * g.norm() * x.norm() {
        Ratio::Undefined
    } else {
        Ratio::Value(num / den)
    }
}

impl Alignment {
    /// `rho_` as a function of the horizon: for each `T'` of [`report_horizons`], the smallest
    /// ratio over rounds `t < T'` (`rho_ = min_{k, t} rho_k^t`, 001:L396, is over all `t`; a run
    /// of `T` rounds sees `t < T` only, so a falling sequence says where it tends). Infinite
    /// where no ratio was decided before `T'`.
    pub fn rho_by_horizon(&self) -> Vec<(usize, f64)> {
        let mut low = f64::INFINITY;
        let mut prefix = Vec::with_capacity(self.per_round_min.len());
        for v in &self.per_round_min {
            low = low.min(*v);
            prefix.push(low);
        }
        report_horizons(prefix.len()).into_iter().map(|h| (h, prefix[h - 1])).collect()
    }
}

/// The horizons `rho_` is reported at: `1, 3, 10, 30, ...` below `T`, then `T`.
pub fn report_horizons(rounds: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..8u32).flat_map(|e| [10usize.pow(e), 3 * 10usize.pow(e)]).take_while(|h| *h < rounds).collect();
    if rounds > 0 {
        out.push(rounds);
    }
    out
}

/// One sample path's record: per-round smallest ratio per client, `||W^t - W*||^2`, the first
/// failure of A6, the points not decided (within rounding of `W*`), and the first point that
/// overflowed.
type PathRecord = (Vec<Vec<f64>>, Vec<f64>, Option<AlignmentFailure>, usize, PsiStepTally, Option<Overflow>);

/// Where a sample path first overflowed: round, client and replicate.
pub type Overflow = (usize, usize, u64);

/// Sample path `r` of a run in the error coordinates (`setup.w_star = 0`, [`sample_paths`]): per
/// round the smallest ratio per client, the distances, the first failure of A6, the points within
/// rounding, the psi step's tally and the first overflow.
fn one_path(setup: &RunSetup, schedule: Schedule, rounds: usize, seed: u64, r: u64) -> PathRecord {
    let RunSetup { inst, psi, tau, w_star, .. } = *setup;
    let mut w = inst.initial.clone();
    let mut per_round = Vec::with_capacity(rounds);
    let mut distance = Vec::with_capacity(rounds + 1);
    let (mut failure, mut rounding, mut overflow) = (None, 0, None);
    let mut step = PsiStepTally::new(psi_floors(inst, psi));
    for t in 0..rounds {
        distance.push((&w - w_star).norm_squared());
        let round = setup.round(schedule.eta(t));
        let noise: Vec<Vec<f64>> = (0..inst.clients()).map(|k| round.draw_noise(k, seed, r, t as u64)).collect();
        let mut low = vec![f64::INFINITY; inst.clients()];
        for (k, nk) in noise.iter().enumerate() {
            for x in &round.local_iterates(k, &w, nk)[..tau] {
                if !x.iter().all(|v| v.is_finite()) {
                    overflow.get_or_insert((t, k, r));
                    continue;
                }
                if masked_within_rounding(inst, k, x, w_star) {
                    rounding += 1;
                    continue;
                }
                let ratio = alignment_ratio(inst, k, x, w_star);
                if ratio == Ratio::Overflow {
                    overflow.get_or_insert((t, k, r));
                    continue;
                }
                step.record(inst, psi, k, x, w_star, (t, r));
                let value = match ratio {
                    Ratio::Overflow => continue,
                    // Undefined away from W* (its denominator vanishes): A6 cannot hold there.
                    Ratio::Undefined if at_optimum(x, w_star) => continue,
                    Ratio::Undefined => f64::NAN,
                    Ratio::Value(v) => {
                        low[k] = low[k].min(v);
                        v
                    }
                };
                if failure.is_none() && (value.is_nan() || value <= 0.0) {
                    failure = Some((t, k, r, value));
                }
            }
        }
        per_round.push(low);
        let flat: Vec<f64> = noise.concat();
        let active: Vec<usize> = (0..inst.clients()).collect();
        w = round.apply(&w, &active, &flat);
    }
    distance.push((&w - w_star).norm_squared());
    (per_round, distance, failure, rounding, step, overflow)
}

/// Runs `replicates` seeded sample paths (one when the run is deterministic) and measures the
/// alignment ratios and the psi step of Part 2 ([`super::psi_step`]) at every point a gradient is
/// taken (`W_k^{t,s}`, `s < tau`).
pub fn sample_paths(setup: &RunSetup, schedule: Schedule, rounds: usize, seed: u64, replicates: usize) -> Alignment {
    // The paths run in the error coordinates `e = W - W*`: the instance with every optimum and
    // `W^0` moved by `-W*` (its gradients `H_k (e - (a_k - W*))` are those of `W`), so a path
    // within `1e-15` of a `W*` of size 1 keeps the digits of its distance, which `W` itself holds
    // to `eps ||W*||` only (with noise of `1e-15` every point had been "within rounding" and
    // `rho_` undefined).
    let (original, original_star) = (setup.inst, setup.w_star);
    let shifted = setup.inst.shifted(setup.w_star);
    let origin = DVector::zeros(setup.w_star.len());
    let setup = &RunSetup { inst: &shifted, w_star: &origin, ..*setup };
    let RunSetup { inst, psi, gradient, .. } = *setup;
    let deterministic = gradient == LocalGradient::Full || inst.sigma == 0.0;
    let replicates = if deterministic { 1 } else { replicates };
    let paths: Vec<PathRecord> = crate::engine::monte_carlo::replicates(replicates, |r| one_path(setup, schedule, rounds, seed, r));
    let per_round_client_min: Vec<Vec<f64>> =
        (0..rounds).map(|t| (0..inst.clients()).map(|k| paths.iter().map(|p| p.0[t][k]).fold(f64::INFINITY, f64::min)).collect()).collect();
    let per_round_min: Vec<f64> = per_round_client_min.iter().map(|r| r.iter().copied().fold(f64::INFINITY, f64::min)).collect();
    let min = per_round_min.iter().copied().fold(f64::INFINITY, f64::min);
    let first_failure = paths.iter().filter_map(|p| p.2).min_by_key(|f| (f.0, f.2, f.1));
    let within_rounding = paths.iter().map(|p| p.3).sum();
    let first_overflow = paths.iter().filter_map(|p| p.5).min_by_key(|f| (f.0, f.2, f.1));
    let mut psi_step = PsiStepTally::new(psi_floors(inst, psi));
    paths.iter().for_each(|p| psi_step.merge(&p.4));
    if !deterministic {
        // The step's quadratic forms in closed form, from the instance as given.
        psi_step = psi_step.from_paths(replicates, original, psi, original_star);
    }
    Alignment {
        per_round_min,
        per_round_client_min,
        min,
        first_failure,
        first_overflow,
        within_rounding,
        replicates,
        distance_paths: paths.into_iter().map(|p| p.1).collect(),
        psi_step,
    }
}

/// The point the masked dynamics settle at as the step goes to zero: the zero of the masked mean
/// field `psi .* sum_k c_k m_k .* grad F_k(W)` on covered coordinates, with uncovered coordinates
/// kept at `W^0` (nobody moves them). It equals `W*` for full masks or a shared optimum, and
/// generally not otherwise. With per-client steps `eta_k = s_k eta^t` the field is
/// `psi .* sum_k c_k s_k m_k .* grad F_k(W)` (each client moves at its own rate), whose zero is
/// not `W*` even for full masks when the optima differ.
///
/// The dynamics settle there only where the field is stable: `W' = W - eta diag(psi) (A W - b)`
/// contracts for small `eta` iff every eigenvalue of `diag(psi) A` (covered coordinates) has a
/// positive real part; [`SmallStepLimit::stability`] is the smallest real part over the largest
/// modulus.
///
/// # Errors
/// [`crate::Error::Instance`] when the masked field is singular on the covered coordinates.
pub fn small_step_limit(inst: &Instance, covered: &[bool], psi: &[f64]) -> Result<SmallStepLimit> {
    let d = inst.dim();
    let idx: Vec<usize> = (0..d).filter(|i| covered[*i]).collect();
    // sum_k c_k diag(m_k) H_k (W - a_k) = 0 restricted to covered rows (psi > 0 drops out).
    let mut a = DMatrix::zeros(d, d);
    let mut b = DVector::zeros(d);
    for k in 0..inst.clients() {
        let mh = DMatrix::from_diagonal(&inst.masks[k]) * &inst.hessians[k] * inst.client_step(k, inst.weights[k]);
        b += &mh * &inst.optima[k];
        a += mh;
    }
    let fixed: Vec<usize> = (0..d).filter(|i| !covered[*i]).collect();
    let mut rhs = DVector::from_fn(idx.len(), |r, _| b[idx[r]]);
    for (r, &i) in idx.iter().enumerate() {
        for &j in &fixed {
            rhs[r] -= a[(i, j)] * inst.initial[j];
        }
    }
    let sub = DMatrix::from_fn(idx.len(), idx.len(), |r, c| a[(idx[r], idx[c])]);
    let singular = sub.singular_values();
    let condition = if singular.is_empty() { 1.0 } else { singular.max() / singular.min() };
    let field = DMatrix::from_fn(idx.len(), idx.len(), |r, c| psi[idx[r]] * sub[(r, c)]);
    let eigenvalues = nalgebra::linalg::Schur::try_new(field, f64::EPSILON, SCHUR_ITERATIONS)
        .ok_or_else(|| crate::Error::Instance("the eigenvalues of the masked mean field did not converge".into()))?
        .complex_eigenvalues();
    let largest = eigenvalues.iter().map(|e| e.norm()).fold(0.0, f64::max);
    let stability = if largest > 0.0 { eigenvalues.iter().map(|e| e.re).fold(f64::INFINITY, f64::min) / largest } else { 1.0 };
    let sol = sub.lu().solve(&rhs).ok_or_else(|| crate::Error::Instance("the masked mean field is singular on the covered coordinates".into()))?;
    let mut w = inst.initial.clone();
    for (r, &i) in idx.iter().enumerate() {
        w[i] = sol[r];
    }
    Ok(SmallStepLimit { point: w, condition, stability })
}

/// Iterations the Schur decomposition of the masked field may take.
const SCHUR_ITERATIONS: usize = 10_000;

/// The small-step limit ([`small_step_limit`]) and the condition number of the system it solves
/// (the masked field on the covered coordinates; 1 when none is covered), which bounds the
/// solve's relative rounding.
#[derive(Debug, Clone)]
pub struct SmallStepLimit {
    /// `W_lim`.
    pub point: DVector<f64>,
    /// `sigma_max / sigma_min` of the masked field on the covered coordinates.
    pub condition: f64,
    /// `min Re(lambda) / max |lambda|` over the eigenvalues of `diag(psi) A` on the covered
    /// coordinates (1 when none is covered): the dynamics settle at `W_lim` only where it is `> 0`
    /// ([`LIMIT_STABILITY`](super::prec::LIMIT_STABILITY)).
    pub stability: f64,
}

impl SmallStepLimit {
    /// Whether the small-step dynamics settle at the point (the field is stable there).
    pub fn is_stable(&self) -> bool {
        self.stability > super::prec::LIMIT_STABILITY
    }
}

/// One point of the speed-error trade-off of Case 1 (001:L651-653).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ResidualPoint {
    /// The constant step.
    pub eta: f64,
    /// The exact steady state `lim_t D^t` of the run at this step (fixed point of the moment
    /// recursion), `None` when the recursion does not settle.
    pub steady_distance: Option<f64>,
    /// The residual radius `eta B / z` of the bound, with `G^2` and `rho_` measured on the run.
    pub residual_bound: f64,
    /// `z eta` with `z = mu psi_ rho_` measured on the run: Case 1 needs it in `(0, 1)` (001:L639).
    #[serde(skip)]
    pub z_eta: f64,
    /// The exact contraction time ([`half_life`]), `None` when the excess does not halve.
    #[serde(skip)]
    pub half_life: Option<usize>,
    /// `(min_k eta_k, max_k eta_k)` when the clients' steps differ (Case 1 takes one step for
    /// every client, so the trade-off is not applicable there); `None` otherwise.
    #[serde(skip)]
    pub client_steps: Option<(f64, f64)>,
    /// Where Assumption 6 failed along the run at this step (a ratio not positive or undefined),
    /// if anywhere: Case 1 assumes it.
    #[serde(skip)]
    pub alignment_failure: Option<AlignmentFailure>,
}

/// The exact moments of the error `W - W*` at a constant step: the round's maps, the full
/// design's inclusion moments and the point `W^0 - W*`.
fn error_moments(setup: &RunSetup, eta: f64) -> Option<(RoundMaps, InclusionMoments, Moments)> {
    let maps = RoundMaps::probe_at(&setup.round(eta), setup.w_star);
    let inc = Design::Full { n: setup.inst.clients() }.inclusion_moments()?;
    Some((maps, inc, Moments::point(&setup.inst.initial - setup.w_star)))
}

/// `E||W - W*||^2` of the error moments.
fn squared_distance(m: &Moments) -> f64 {
    let d = m.dim();
    Observable::new(DMatrix::identity(d, d), DVector::zeros(d)).expected_square(m)
}

/// The exact steady state of `E||W - W*||^2` at a constant step (see
/// [`crate::engine::stationary_moments`]), solved for the error `W - W*` ([`exact_run`]); `None`
/// where there is none.
///
/// # Errors
/// As [`crate::engine::stationary_moments`]: a state too large for the steady state's system.
pub fn steady_distance(setup: &RunSetup, eta: f64) -> crate::error::Result<Option<f64>> {
    let Some((maps, inc, m0)) = error_moments(setup, eta) else { return Ok(None) };
    Ok(crate::engine::stationary_moments(&maps, &inc, &m0)?.map(|m| squared_distance(&m)))
}

/// The most rounds [`half_life`] propagates before it gives up.
pub const HALF_LIFE_CAP: usize = 1_000_000;

/// The contraction time of a constant step: the first round `t` with `D^t - D^inf <= (D^0 -
/// D^inf) / 2`, on the exact moments; the measured counterpart of `rho = 1 - z eta` of Case 1
/// (001:L643): a faster contraction halves the excess in fewer rounds. `None` when the excess
/// is not positive at `t = 0`, is NaN, is not resolved against the rounding of `D^0` and
/// `D^inf` ([`super::prec::HALF_LIFE_RESOLUTION`]: the rounds would count rounding), or does not
/// halve within [`HALF_LIFE_CAP`] rounds.
pub fn half_life(setup: &RunSetup, eta: f64, steady: f64) -> Option<usize> {
    let (maps, inc, mut m) = error_moments(setup, eta)?;
    let start = squared_distance(&m);
    let half = (start - steady) / 2.0;
    if !(half > super::prec::HALF_LIFE_RESOLUTION * start.max(steady) && half.is_finite()) {
        return None;
    }
    let mut next = m.clone();
    for t in 1..=HALF_LIFE_CAP {
        maps.propagate_into(&m, &inc, &mut next);
        std::mem::swap(&mut m, &mut next);
        let excess = squared_distance(&m) - steady;
        if excess.is_nan() {
            return None;
        }
        if excess <= half {
            return Some(t);
        }
    }
    None
}
