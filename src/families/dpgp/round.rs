//! DFedPGP (Algorithm 1, 004:L100) as a pure round on a flat state, and its exact moments.
//!
//! State `z = [u_1; ...; u_m; v_1; ...; v_m; ubar_prev]` with `ubar_prev = ubar^{t-1}` (the
//! average of the push-sum numerators one round earlier), kept so that Theorem 1's
//! `Delta_ubar^t = ||grad_u F(ubar^t, V^{t+1})||^2`, which mixes round `t`'s average with the
//! personal parts after round `t`'s v-phase (004:L133), is an affine function of one state.
//!
//! For a fixed graph sequence the push-sum weights `mu^t` are deterministic, so each round is
//! affine in the state and the noise and a sum of per-client terms: client `i` writes `v_i^{t+1}`,
//! its pushed shares `p_ji u_i^{t+1/2}` into every `u_j` and `u_i^t / m` into `ubar_prev`. It
//! implements [`RandomAffineRound`] with every client active (`Design::Full`); its maps change
//! with `P^t` and `mu^t`, so they are formed per round, in closed form from the clients' phase maps
//! ([`super::phase_map`]; [`RandomAffineRound::component_term`]).

use nalgebra::{DMatrix, DVector};
use rand_distr::{Distribution, StandardNormal};

use crate::engine::series::PSD_INSPECTION_PERIOD;
use crate::engine::{nan_max, nan_min, ComponentTerm, Design, Moments, Observable, RandomAffineRound, RecentByBits, RoundMaps};
use crate::error::Result;
use crate::rng::StreamKey;

use super::local::{path_round, realised, LocalMaps, LocalRound, PathRound};
pub use super::phase::{local_iterates, local_phase, Layout, LocalIterates, NoiseDraws, Params, RoundAffine};
use super::phase_map::{add_client_block, phase_maps, Affine, PhaseMap};
use super::problem::Instance;
use super::topology::GraphSequence;

/// Round `t` of DFedPGP: the instance, the steps, `P^t` and `mu^t`.
pub struct DpgpRound<'a> {
    /// The instance.
    pub inst: &'a Instance,
    /// The steps.
    pub params: Params,
    /// `P^t`, column-stochastic.
    pub mixing: &'a DMatrix<f64>,
    /// `mu^t`.
    pub weights: &'a DVector<f64>,
}

impl RandomAffineRound for DpgpRound<'_> {
    fn state_dim(&self) -> usize {
        Layout::of(self.inst).dim()
    }
    fn components(&self) -> usize {
        self.inst.m()
    }
    fn noise_per_component(&self) -> usize {
        Layout::of(self.inst).noise_len(&self.params)
    }
    /// Algorithm 1 lines 3-15 for the active clients (004:L100): with `z_i^t = u_i^t / mu_i^t`,
    /// `v <- v - eta_v (grad_v F_i(z_i^t, v) + noise)` `K_v` times, then
    /// `u <- u - eta_u (grad_u F_i(u / mu_i^t, v_i^{t+1}) + noise)` `K_u` times, and the push
    /// `u_j^{t+1} += p_ji u_i^{t+1/2}`. Fresh noise at every local step by default; the
    /// listing's one sample `xi_i` per round (line 3) reuses one draw per phase
    /// ([`NoiseDraws::PerRound`]).
    fn apply(&self, state: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64> {
        let lay = Layout::of(self.inst);
        let p = &self.params;
        let per = lay.noise_len(p);
        let mut out = DVector::zeros(lay.dim());
        for (slot, &i) in active.iter().enumerate() {
            let xi = &noise[slot * per..(slot + 1) * per];
            let u0 = state.rows(lay.u(i), lay.du).into_owned();
            let (v, iterates) = local_phase(self.inst, p, i, self.weights[i], &u0, &state.rows(lay.v(i), lay.dv).into_owned(), xi);
            let u = &iterates[p.k_u];
            for j in 0..lay.m {
                let w = self.mixing[(j, i)];
                if w != 0.0 {
                    let mut r = out.rows_mut(lay.u(j), lay.du);
                    r += u * w;
                }
            }
            out.rows_mut(lay.v(i), lay.dv).copy_from(&v);
            let mut r = out.rows_mut(lay.ubar_prev(), lay.du);
            r += &u0 / lay.m as f64;
        }
        out
    }
    /// Client `i` reads its own `u_i` and `v_i` (004:L100).
    fn reads(&self, i: usize) -> Option<Vec<usize>> {
        let lay = Layout::of(self.inst);
        Some((lay.u(i)..lay.u(i) + lay.du).chain(lay.v(i)..lay.v(i) + lay.dv).collect())
    }
    /// Client `i`'s term from its phase maps ([`PhaseMap`]): `p_ji u_i^{t+1/2}` into every `u_j`
    /// with `p_ji != 0`, `v_i^{t+1}` into `v_i` and `u_i^t / m` into `ubar_prev`, each an affine
    /// map of `[u_i^t; v_i^t; xi_i]`.
    fn component_term(&self, i: usize) -> Option<ComponentTerm> {
        Some(self.term_of(i, &PhaseMap::of(self.inst, &self.params, i, self.weights[i])))
    }
}

impl DpgpRound<'_> {
    /// Client `i`'s term ([`RandomAffineRound::component_term`]) from its phase map `phase`
    /// (that of `self.params` and `self.weights[i]`).
    fn term_of(&self, i: usize, phase: &PhaseMap) -> ComponentTerm {
        let lay = Layout::of(self.inst);
        let (du, dv, per) = (lay.du, lay.dv, lay.noise_len(&self.params));
        let targets: Vec<(usize, f64)> = (0..lay.m).map(|j| (j, self.mixing[(j, i)])).filter(|(_, w)| *w != 0.0).collect();
        let mut rows: Vec<usize> = targets.iter().flat_map(|&(j, _)| lay.u(j)..lay.u(j) + du).collect();
        rows.extend(lay.v(i)..lay.v(i) + dv);
        rows.extend(lay.ubar_prev()..lay.ubar_prev() + du);
        let cols: Vec<usize> = (lay.u(i)..lay.u(i) + du).chain(lay.v(i)..lay.v(i) + dv).collect();
        let (mut a, mut b, mut w) = (DMatrix::zeros(rows.len(), du + dv), DVector::zeros(rows.len()), DMatrix::zeros(rows.len(), per));
        let mut put = |r: usize, x: &Affine, scale: f64| {
            a.view_mut((r, 0), (x.offset.len(), du + dv)).copy_from(&(x.map.columns(0, du + dv) * scale));
            b.rows_mut(r, x.offset.len()).copy_from(&(&x.offset * scale));
            w.view_mut((r, 0), (x.offset.len(), per)).copy_from(&(x.map.columns_range(phase.noise()) * scale));
        };
        let pushed = &phase.u[self.params.k_u];
        for (slot, &(_, weight)) in targets.iter().enumerate() {
            put(slot * du, pushed, weight);
        }
        put(targets.len() * du, phase.v_next(), 1.0);
        let own = targets.len() * du + dv;
        for q in 0..du {
            a[(own + q, q)] = 1.0 / lay.m as f64;
        }
        ComponentTerm { rows, cols, a, b, w, rank_one: None }
    }
}

/// A round whose clients' phase maps are formed already (those [`exact_trajectory_with`] forms
/// for the round's other quantities): the same maps as the round's own, without forming them again.
struct WithPhases<'a> {
    round: DpgpRound<'a>,
    /// Client `i`'s phase map at `i`, of the round's steps and weights.
    phases: &'a [PhaseMap],
}

impl RandomAffineRound for WithPhases<'_> {
    fn state_dim(&self) -> usize {
        self.round.state_dim()
    }
    fn components(&self) -> usize {
        self.round.components()
    }
    fn noise_per_component(&self) -> usize {
        self.round.noise_per_component()
    }
    fn apply(&self, state: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64> {
        self.round.apply(state, active, noise)
    }
    fn reads(&self, i: usize) -> Option<Vec<usize>> {
        self.round.reads(i)
    }
    fn component_term(&self, i: usize) -> Option<ComponentTerm> {
        Some(self.round.term_of(i, &self.phases[i]))
    }
}

/// The affine observables of a round's state that the claims read: those that do not depend on
/// the push-sum weights, made once per run, and those that do ([`WeightedObservables`]).
pub struct Observables {
    /// `z -> sqrt(1/m) [grad_v F_i(u_i, v_i)]_i`: `E||.||^2 = E Delta_v^t` as Theorem 1 prints
    /// it, at the *biased* numerator `u_i^t` (004:L133).
    pub delta_v: Observable,
    /// `z -> grad_u F(ubar_prev, V)`: at state `t+1`, `E||.||^2 = E Delta_ubar^t` (004:L133).
    pub delta_ubar_prev: Observable,
    /// `z -> sqrt(1/m) [ubar - u_i]_i`: the consensus error of the raw numerators (no
    /// de-biasing).
    pub consensus_raw: Observable,
}

/// The observables of a round's state that read the push-sum weights `mu^t`.
pub struct WeightedObservables {
    /// `z -> sqrt(1/m) [grad_v F_i(u_i / mu_i, v_i)]_i`: [`Observables::delta_v`] at the
    /// de-biased `z_i^t = u_i^t / mu_i^t`, the point where Algorithm 1's v-phase takes its
    /// gradients (004:L100).
    pub delta_v_debiased: Observable,
    /// `z -> sqrt(1/m) [ubar - u_i / mu_i]_i`: `E||.||^2 = (1/m) sum_i E||ubar^t - z_i^t||^2`,
    /// Lemma 3's left side (004:L522), for the weights `mu^t`.
    pub consensus: Observable,
}

/// `z -> sqrt(1/m) [grad_v F_i(u_i / w_i, v_i)]_i`, with `w_i = 1` when `weights` is `None`:
/// block `i` is `sqrt(1/m) (B_i^T u_i / w_i + D_i v_i - b_i)`.
fn delta_v_at(inst: &Instance, weights: Option<&DVector<f64>>) -> Observable {
    let lay = Layout::of(inst);
    let (m, du, dv) = (lay.m, lay.du, lay.dv);
    let scale = (1.0 / m as f64).sqrt();
    let mut map = DMatrix::zeros(m * dv, lay.dim());
    let mut offset = DVector::zeros(m * dv);
    for (i, c) in inst.clients.iter().enumerate() {
        let w = weights.map_or(1.0, |w| w[i]);
        map.view_mut((i * dv, lay.u(i)), (dv, du)).copy_from(&(c.b.transpose() * (scale / w)));
        map.view_mut((i * dv, lay.v(i)), (dv, dv)).copy_from(&(&c.d * scale));
        offset.rows_mut(i * dv, dv).copy_from(&(&c.lin_v * -scale));
    }
    Observable::new(map, offset)
}

/// `z -> sqrt(1/m) [ubar - u_i / w_i]_i`, with `w_i = 1` when `weights` is `None` and
/// `ubar = (1/m) sum_j u_j`.
fn deviation_at(inst: &Instance, weights: Option<&DVector<f64>>) -> Observable {
    let lay = Layout::of(inst);
    let (m, du) = (lay.m, lay.du);
    let scale = (1.0 / m as f64).sqrt();
    let mut map = DMatrix::zeros(m * du, lay.dim());
    for i in 0..m {
        let w = weights.map_or(1.0, |w| w[i]);
        for j in 0..m {
            let own = if i == j { 1.0 / m as f64 - 1.0 / w } else { 1.0 / m as f64 };
            for q in 0..du {
                map[(i * du + q, lay.u(j) + q)] = own * scale;
            }
        }
    }
    Observable::new(map, DVector::zeros(m * du))
}

impl Observables {
    /// Of the instance (the same for every round).
    pub fn new(inst: &Instance) -> Self {
        let lay = Layout::of(inst);
        let m = lay.m;
        let delta_ubar_prev = Observable::probe(lay.dim(), lay.du, &|z| {
            let ub = z.rows(lay.ubar_prev(), lay.du).into_owned();
            inst.clients.iter().enumerate().fold(DVector::zeros(lay.du), |acc, (i, c)| acc + c.grad_u(&ub, &z.rows(lay.v(i), lay.dv).into_owned())) / m as f64
        });
        Self { delta_v: delta_v_at(inst, None), delta_ubar_prev, consensus_raw: deviation_at(inst, None) }
    }
}

impl WeightedObservables {
    /// For weights `mu`.
    pub fn new(inst: &Instance, weights: &DVector<f64>) -> Self {
        Self { delta_v_debiased: delta_v_at(inst, Some(weights)), consensus: deviation_at(inst, Some(weights)) }
    }
}

/// `F(ubar, V)` of a state through its distance to the minimizer: with `x = S z = [ubar; v_1;
/// ...; v_m]` (`ubar = (1/m) sum_i u_i`), `F(x) - F* = (x - x*)^T H (x - x*) / 2` exactly
/// (`grad F(x*) = 0`, `H`, `g` of [`Instance::joint`], `x* = H^{-1} g`, `F* = -g^T x* / 2`).
///
/// # Formula
/// `E F - F* = tr(Q C) / 2 + (S mu - x*)^T H (S mu - x*) / 2` with `Q = S^T H S`: both terms
/// are not negative and neither is formed against `F*`, so the suboptimality is accurate
/// relative to itself near the optimum, where `tr(Q P)/2 + l^T mu` (the raw second moment) minus
/// `F*` would keep only `eps |F*|` of it. `E F` itself is `F* +` that. NaN throughout when `H`
/// is not positive definite (no instance whose constants exist).
pub struct Objective {
    q: DMatrix<f64>,
    s: DMatrix<f64>,
    h: DMatrix<f64>,
    x_star: DVector<f64>,
    f_star: f64,
}

impl Objective {
    /// For the state's `ubar = (1/m) sum_i u_i`.
    pub fn new(inst: &Instance) -> Self {
        let lay = Layout::of(inst);
        let (h, _) = inst.joint();
        let n = h.nrows();
        let mut s = DMatrix::zeros(n, lay.dim());
        for r in 0..lay.du {
            for i in 0..lay.m {
                s[(r, lay.u(i) + r)] = 1.0 / lay.m as f64;
            }
        }
        for i in 0..lay.m {
            for r in 0..lay.dv {
                s[(lay.du + i * lay.dv + r, lay.v(i) + r)] = 1.0;
            }
        }
        let (x_star, f_star) = inst.minimizer().unwrap_or_else(|| (DVector::from_element(n, f64::NAN), f64::NAN));
        Self { q: s.transpose() * &h * &s, s, h, x_star, f_star }
    }

    /// `(x - x*)^T H (x - x*) / 2` at `x = S mu`.
    fn mean_part(&self, mu: &DVector<f64>) -> f64 {
        let d = &self.s * mu - &self.x_star;
        0.5 * d.dot(&(&self.h * &d))
    }

    /// `E F - F*` from the moments (see the type's formula).
    pub fn expected_gap(&self, m: &Moments) -> f64 {
        0.5 * self.q.component_mul(&m.cov).sum() + self.mean_part(&m.mean)
    }

    /// `F - F*` at a state.
    pub fn gap_at(&self, z: &DVector<f64>) -> f64 {
        self.mean_part(z)
    }

    /// `F*`.
    pub fn f_star(&self) -> f64 {
        self.f_star
    }
}

/// Exact per-round expectations of one run (index `t` = start of round `t`, `t <= T`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Trajectory {
    /// `E Delta_v^t`, `t <= T`, at the biased `u_i^t` as printed (004:L133).
    pub delta_v: Vec<f64>,
    /// `(1/m) sum_i E||grad_v F_i(z_i^t, v_i^t)||^2`, `t <= T`, at the de-biased `z_i^t`.
    pub delta_v_debiased: Vec<f64>,
    /// `E Delta_ubar^t`, `t < T` (read at state `t+1`).
    pub delta_ubar: Vec<f64>,
    /// `(1/m) sum_i E||ubar^t - z_i^t||^2`, `t <= T`.
    pub consensus: Vec<f64>,
    /// `(1/m) sum_i E||ubar^t - u_i^t||^2`, `t <= T` (raw numerators).
    pub consensus_raw: Vec<f64>,
    /// `E F(ubar^t, V^t)`, `t <= T`.
    pub objective: Vec<f64>,
    /// `E F(ubar^t, V^t) - F*`, `t <= T`, from the distance to the minimizer ([`Objective`]):
    /// accurate relative to itself near the optimum. `objective` is `F*` plus it.
    pub suboptimality: Vec<f64>,
    /// `max_{i, k < K_u} E||grad_u F_i(z_i^{t,k}, v_i^{t+1}) - grad_u F(z_i^{t,k}, V^{t+1})||^2`,
    /// `t < T`: Assumption 4's difference at the points where Lemmas 2 and 3 use it (004:L503,
    /// L532), [`round_supremum`]; empty for sampled runs.
    #[serde(skip)]
    pub diversity: Vec<f64>,
    /// Lemmas 1 and 2's sides per round `t < T` ([`super::local`]); empty unless asked
    /// ([`exact_trajectory_with`]) or sampled.
    #[serde(skip)]
    pub local: Vec<LocalRound>,
    /// (15)'s quantities per round `t < T` on the noiseless path (the mean of an exact run) or on
    /// the sampled path; empty unless asked or sampled.
    #[serde(skip)]
    pub path: Vec<PathRound>,
    /// Smallest eigenvalue of the covariance seen (a PSD diagnostic).
    pub min_covariance_eigenvalue: f64,
}

impl Trajectory {
    /// Theorem 1's metric per round, `E Delta_ubar^t / L_u + E Delta_v^t / L_v`, `t < T`
    /// (004:L131-138, the paper's sum over `t = 1..T` read as Algorithm 1's rounds `0..T-1`).
    pub fn stationarity(&self, l_u: f64, l_v: f64) -> Vec<f64> {
        self.delta_ubar.iter().zip(&self.delta_v).map(|(a, b)| a / l_u + b / l_v).collect()
    }

    /// The same with `Delta_v^t` read at the de-biased `z_i^t = u_i^t / mu_i^t` in place of the
    /// printed `u_i^t` (004:L133): `E Delta_ubar^t / L_u + (1/m) sum_i E||grad_v F_i(z_i^t,
    /// v_i^t)||^2 / L_v`, `t < T`. Equal to [`Self::stationarity`] when every `mu_i^t = 1`.
    pub fn stationarity_debiased(&self, l_u: f64, l_v: f64) -> Vec<f64> {
        self.delta_ubar.iter().zip(&self.delta_v_debiased).map(|(a, b)| a / l_u + b / l_v).collect()
    }
}

/// How many recent rounds' maps [`exact_trajectory`] keeps for reuse: a periodic sequence of
/// graphs within this period (exponential graphs: `ceil(log2 m)`) has its maps formed once.
pub(crate) const GRAPHS_KEPT: usize = 8;

/// Exact moments of `rounds` rounds of DFedPGP on the graph sequence `seq` (at least `rounds`
/// graphs), from the deterministic initial state.
///
/// # Errors
/// [`crate::Error::Internal`] when the rounds' inclusion moments cannot be formed.
pub fn exact_trajectory(inst: &Instance, params: &Params, seq: &GraphSequence, rounds: usize) -> Result<Trajectory> {
    exact_trajectory_with(inst, params, seq, rounds, false)
}

/// [`exact_trajectory`], with `local` also Lemmas 1 and 2's exact sides and (15)'s quantities on
/// the noiseless path ([`Trajectory::local`], [`Trajectory::path`]) at every round.
///
/// # Errors
/// As [`exact_trajectory`].
pub fn exact_trajectory_with(inst: &Instance, params: &Params, seq: &GraphSequence, rounds: usize, local: bool) -> Result<Trajectory> {
    let lay = Layout::of(inst);
    let inc = Design::Full { n: lay.m }.inclusion_moments().ok_or_else(|| crate::Error::Internal("full participation has no inclusion moments".into()))?;
    let z0 = lay.initial(inst);
    let mut m = Moments::point(z0);
    let objective = Objective::new(inst);
    let mut out = Trajectory { min_covariance_eigenvalue: f64::INFINITY, ..Default::default() };
    // A static or periodic graph repeats `P^t` and `mu^t` bit for bit: its maps are formed once.
    let fixed = Observables::new(inst);
    let mut weighted = RecentByBits::new(GRAPHS_KEPT);
    let mut graph_maps = RecentByBits::new(GRAPHS_KEPT);
    let mut local_maps = RecentByBits::new(GRAPHS_KEPT);
    let quiet = vec![0.0; lay.m * lay.noise_len(params)];
    for t in 0..=rounds {
        let weights = &seq.weights[t];
        let obs = weighted.get(&[weights.as_slice()], || WeightedObservables::new(inst, weights));
        out.delta_v.push(fixed.delta_v.expected_square(&m));
        out.delta_v_debiased.push(obs.delta_v_debiased.expected_square(&m));
        out.consensus.push(obs.consensus.expected_square(&m));
        out.consensus_raw.push(fixed.consensus_raw.expected_square(&m));
        let gap = objective.expected_gap(&m);
        out.suboptimality.push(gap);
        out.objective.push(objective.f_star() + gap);
        if t > 0 {
            out.delta_ubar.push(fixed.delta_ubar_prev.expected_square(&m));
        }
        if t == rounds {
            break;
        }
        // The clients' phase maps, formed at most once a round and only where a map is new.
        let phases = std::cell::OnceCell::new();
        let phases = || phases.get_or_init(|| phase_maps(inst, params, weights));
        let (diversity, maps) = graph_maps.get(&[seq.mixing[t].as_slice(), weights.as_slice()], || {
            let round = WithPhases { round: DpgpRound { inst, params: *params, mixing: &seq.mixing[t], weights }, phases: phases() };
            (Differences::of(inst, params, weights, phases()), RoundMaps::probe(&round))
        });
        out.diversity.push(diversity.supremum(&m));
        if local {
            out.local.push(local_maps.get(&[weights.as_slice()], || LocalMaps::of(inst, params, weights, phases())).expected(&m));
            out.path.push(path_round(inst, params, weights, &m.mean, &quiet));
        }
        if t % PSD_INSPECTION_PERIOD == 0 || t + 1 == rounds {
            out.min_covariance_eigenvalue = nan_min(out.min_covariance_eigenvalue, m.min_covariance_eigenvalue());
        }
        m = maps.propagate(&m, &inc);
    }
    Ok(out)
}

/// One seeded replicate of the same rounds, drawing client `i`'s round-`t` noise from the keyed
/// stream `(seed, replicate, t, i)`: the per-round values of the same quantities as
/// [`exact_trajectory`] (realised, not expected).
pub fn sampled_trajectory(inst: &Instance, params: &Params, seq: &GraphSequence, rounds: usize, seed: u64, replicate: u64) -> Trajectory {
    let lay = Layout::of(inst);
    let per = lay.noise_len(params);
    let active: Vec<usize> = (0..lay.m).collect();
    let objective = Objective::new(inst);
    let mut z = lay.initial(inst);
    let mut out = Trajectory { min_covariance_eigenvalue: 0.0, ..Default::default() };
    let sq = |o: &Observable, z: &DVector<f64>| (o.map() * z + o.offset()).norm_squared();
    let fixed = Observables::new(inst);
    for t in 0..=rounds {
        let obs = WeightedObservables::new(inst, &seq.weights[t]);
        out.delta_v.push(sq(&fixed.delta_v, &z));
        out.delta_v_debiased.push(sq(&obs.delta_v_debiased, &z));
        out.consensus.push(sq(&obs.consensus, &z));
        out.consensus_raw.push(sq(&fixed.consensus_raw, &z));
        let gap = objective.gap_at(&z);
        out.suboptimality.push(gap);
        out.objective.push(objective.f_star() + gap);
        if t > 0 {
            out.delta_ubar.push(sq(&fixed.delta_ubar_prev, &z));
        }
        if t == rounds {
            break;
        }
        let mut noise = Vec::with_capacity(per * lay.m);
        for i in 0..lay.m {
            let mut rng = StreamKey { seed, replicate, round: t as u64, client: i as u64 }.rng(0);
            noise.extend((0..per).map(|_| -> f64 { StandardNormal.sample(&mut rng) }));
        }
        out.local.push(realised(inst, params, &seq.weights[t], &z, &noise));
        out.path.push(path_round(inst, params, &seq.weights[t], &z, &noise));
        let round = DpgpRound { inst, params: *params, mixing: &seq.mixing[t], weights: &seq.weights[t] };
        z = round.apply(&z, &active, &noise);
    }
    out
}

// Assumption 4's constant restricted to the points where the proofs use it.
//
// Assumption 4 (004:L121-123) asks `||grad_u F_i(u, v_i) - grad_u F(u, V)||^2 <= sigma_g^2` for
// every `u` and `V`; with client-specific `A_i` or any coupling `B_i != 0` that supremum is
// infinite ([`super::problem::Instance::gradient_diversity`]). The proofs use it only inside
// expectations at the local iterates of a round: Lemma 2's (11) (004:L503) and Lemma 3's (16)
// (004:L532-540) bound `E||grad_u F_i(z_i^{t,k}, v_i^{t+1}) - grad_u F(z_i^{t,k}, V^{t+1})||^2`
// by `sigma_g^2` for every client `i`, round `t` and local step `k < K_u`, with
// `z_i^{t,k} = u_i^{t,k} / mu_i^t`. The restricted constant is the largest of these
// expectations over a run, computed exactly: the difference is affine in the round's state and
// its Gaussian noise, so its second moment is `||M m + c||^2 + tr(M S M^T) + ||N||_F^2` for the
// state's mean `m` and covariance `S` and the noise map `N`.

/// `max_{i, k < K_u} E||d_i^{t,k}||^2` for one round with state moments `m`, mixing weights
/// `weights = mu^t` and steps `p` (NaN kept by [`nan_max`]).
pub fn round_supremum(inst: &Instance, p: &Params, weights: &DVector<f64>, m: &Moments) -> f64 {
    Differences::of(inst, p, weights, &phase_maps(inst, p, weights)).supremum(m)
}

/// The differences `d_i^{t,k} = grad_u F_i(z_i^{t,k}, v_i^{t+1}) - grad_u F(z_i^{t,k}, V^{t+1})`,
/// `z_i^{t,k} = u_i^{t,k} / mu_i^t`, of a round, client-major (`du` rows per client `i` and
/// local step `k < K_u`), as an affine map of the state and a linear map of the round's standard
/// normals.
struct Differences {
    /// The maps.
    maps: RoundAffine,
    /// Length of one difference, `du`.
    du: usize,
}

impl Differences {
    /// The maps from the clients' phase maps ([`PhaseMap`]): with `grad_u F_j(x, v) = A_j x +
    /// B_j v - a_j`, `Abar`, `abar` the clients' means and `x = u_i^{t,k} / mu_i`,
    ///
    /// ```text
    /// d_i^{t,k} = (A_i - Abar) x + B_i v_i^{t+1} - (1/m) sum_j B_j v_j^{t+1} - (a_i - abar)
    /// ```
    ///
    /// where `x` and `v_i^{t+1}` read client `i`'s inputs and `v_j^{t+1}` client `j`'s;
    /// `phases` are the clients' phase maps at the weights `weights` ([`phase_maps`]).
    fn of(inst: &Instance, p: &Params, weights: &DVector<f64>, phases: &[PhaseMap]) -> Self {
        let lay = Layout::of(inst);
        let (m, du, per) = (lay.m, lay.du, lay.noise_len(p));
        let (a_bar, lin_bar) = inst.mean_u_terms();
        // `B_j v_j^{t+1}` as a map of client `j`'s inputs, and its mean's constant.
        let coupled: Vec<Affine> =
            phases.iter().zip(&inst.clients).map(|(ph, c)| Affine { map: &c.b * &ph.v_next().map, offset: &c.b * &ph.v_next().offset }).collect();
        let coupled_mean = coupled[1..].iter().fold(coupled[0].offset.clone(), |acc, c| acc + &c.offset) / m as f64;
        // `-(1/m) B_j v_j^{t+1}`'s map, the same in every client's rows.
        let shared: Vec<DMatrix<f64>> = coupled.iter().map(|cj| &cj.map / -(m as f64)).collect();
        let rows = m * p.k_u * du;
        let mut state = DMatrix::zeros(rows, lay.dim());
        let mut noise = DMatrix::zeros(rows, m * per);
        let mut offset = DVector::zeros(rows);
        let mut place = |r: usize, j: usize, block: &DMatrix<f64>| add_client_block(&lay, per, j, r, block, &mut state, &mut noise);
        for (i, c) in inst.clients.iter().enumerate() {
            let spread = &c.a - &a_bar;
            for k in 0..p.k_u {
                let r = (i * p.k_u + k) * du;
                let x = &phases[i].u[k];
                place(r, i, &(&spread * &x.map / weights[i] + &coupled[i].map));
                for (j, block) in shared.iter().enumerate() {
                    place(r, j, block);
                }
                let constant = &spread * &x.offset / weights[i] + &coupled[i].offset - &coupled_mean - (&c.lin_u - &lin_bar);
                offset.rows_mut(r, du).copy_from(&constant);
            }
        }
        Self { maps: RoundAffine { state: Observable::new(state, offset), noise }, du }
    }

    /// `max_{i, k} E||d_i^{t,k}||^2` under the state moments `m` (NaN kept by [`nan_max`]).
    fn supremum(&self, m: &Moments) -> f64 {
        let du = self.du;
        (0..self.maps.noise.nrows() / du).fold(f64::NEG_INFINITY, |acc, b| nan_max(acc, self.maps.block_square(m, b * du, du)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::dpgp::phase::NoiseDraws;
    use crate::families::dpgp::phase_map::tests::instance;

    /// `[d_i^{t,k}]` at state `z` and normals `xi`, from the phases run there (the definition).
    fn differences_at(inst: &Instance, p: &Params, weights: &DVector<f64>, z: &DVector<f64>, xi: &[f64]) -> DVector<f64> {
        let lay = Layout::of(inst);
        let per = lay.noise_len(p);
        let phases: Vec<_> = (0..lay.m)
            .map(|i| {
                let (u0, v0) = (z.rows(lay.u(i), lay.du).into_owned(), z.rows(lay.v(i), lay.dv).into_owned());
                local_phase(inst, p, i, weights[i], &u0, &v0, &xi[i * per..(i + 1) * per])
            })
            .collect();
        let mut out = DVector::zeros(lay.m * p.k_u * lay.du);
        for i in 0..lay.m {
            for k in 0..p.k_u {
                let x = &phases[i].1[k] / weights[i];
                let all = (0..lay.m).fold(DVector::zeros(lay.du), |acc, j| acc + inst.clients[j].grad_u(&x, &phases[j].0)) / lay.m as f64;
                let d = inst.clients[i].grad_u(&x, &phases[i].0) - all;
                out.rows_mut((i * p.k_u + k) * lay.du, lay.du).copy_from(&d);
            }
        }
        out
    }

    /// A DFedPGP round whose components are probed (no closed form).
    struct Probed<'a>(DpgpRound<'a>);

    impl RandomAffineRound for Probed<'_> {
        fn state_dim(&self) -> usize {
            self.0.state_dim()
        }
        fn components(&self) -> usize {
            self.0.components()
        }
        fn noise_per_component(&self) -> usize {
            self.0.noise_per_component()
        }
        fn apply(&self, state: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64> {
            self.0.apply(state, active, noise)
        }
        fn reads(&self, i: usize) -> Option<Vec<usize>> {
            self.0.reads(i)
        }
    }

    #[test]
    fn the_closed_form_round_has_the_moments_of_the_probed_one() {
        let inst = instance();
        let lay = Layout::of(&inst);
        // Column-stochastic with zeros (client 0 pushes to 0 and 1 only) and weights away from 1.
        let mixing = DMatrix::from_row_slice(4, 4, &[0.5, 0.2, 0.0, 0.3, 0.5, 0.3, 0.25, 0.0, 0.0, 0.5, 0.25, 0.3, 0.0, 0.0, 0.5, 0.4]);
        let weights = DVector::from_row_slice(&[0.7, 1.3, 0.9, 1.1]);
        let inc = Design::Full { n: lay.m }.inclusion_moments().unwrap();
        for draws in [NoiseDraws::PerStep, NoiseDraws::PerRound] {
            let p = Params { eta_u: 0.05, eta_v: 0.09, k_u: 3, k_v: 2, noise_draws: draws };
            let round = DpgpRound { inst: &inst, params: p, mixing: &mixing, weights: &weights };
            let (closed, probed) =
                (RoundMaps::probe(&round), RoundMaps::probe(&Probed(DpgpRound { inst: &inst, params: p, mixing: &mixing, weights: &weights })));
            let (mut a, mut b) = (Moments::point(lay.initial(&inst)), Moments::point(lay.initial(&inst)));
            for _ in 0..4 {
                a = closed.propagate(&a, &inc);
                b = probed.propagate(&b, &inc);
            }
            let mean_gap = (&a.mean - &b.mean).norm() / b.mean.norm();
            let cov_gap = (&a.cov - &b.cov).norm() / b.cov.norm();
            assert!(mean_gap < 1e-12 && cov_gap < 1e-12, "{draws:?}: mean {mean_gap:e}, covariance {cov_gap:e}");
            // Negative control: another mixing moves the moments.
            let other = DMatrix::from_fn(4, 4, |r, c| if r == c || r == (c + 1) % 4 { 0.5 } else { 0.0 });
            let moved = RoundMaps::probe(&DpgpRound { inst: &inst, params: p, mixing: &other, weights: &weights });
            let mut c = Moments::point(lay.initial(&inst));
            for _ in 0..4 {
                c = moved.propagate(&c, &inc);
            }
            assert!((&c.cov - &b.cov).norm() > 1e-6 * b.cov.norm());
        }
    }

    #[test]
    fn the_observables_give_the_gradients_and_deviations_they_name() {
        let inst = instance();
        let lay = Layout::of(&inst);
        let m = lay.m as f64;
        let weights = DVector::from_fn(lay.m, |i, _| 0.6 + 0.3 * i as f64);
        let z = DVector::from_fn(lay.dim(), |r, _| ((r * 5 + 2) % 13) as f64 / 6.0 - 1.0);
        for w in [None, Some(&weights)] {
            let at = |i: usize| w.map_or(1.0, |w| w[i]);
            let (u, v) = (|i: usize| z.rows(lay.u(i), lay.du).into_owned(), |i: usize| z.rows(lay.v(i), lay.dv).into_owned());
            let ubar = (0..lay.m).fold(DVector::zeros(lay.du), |acc, i| acc + u(i)) / m;
            let gradients: f64 = inst.clients.iter().enumerate().map(|(i, c)| c.grad_v(&(u(i) / at(i)), &v(i)).norm_squared()).sum::<f64>() / m;
            let deviations: f64 = (0..lay.m).map(|i| (&ubar - u(i) / at(i)).norm_squared()).sum::<f64>() / m;
            let square = |o: &Observable| (o.map() * &z + o.offset()).norm_squared();
            let (g, d) = (square(&delta_v_at(&inst, w)), square(&deviation_at(&inst, w)));
            assert!((g - gradients).abs() <= 1e-13 * gradients && (d - deviations).abs() <= 1e-13 * deviations, "{g} {gradients} {d} {deviations}");
            // Negative control: other weights move both.
            let other = &weights * 1.1;
            assert!((square(&delta_v_at(&inst, Some(&other))) - gradients).abs() > 1e-6 * gradients);
            assert!((square(&deviation_at(&inst, Some(&other))) - deviations).abs() > 1e-6 * deviations);
        }
    }

    #[test]
    fn the_difference_maps_give_the_differences_of_the_phases() {
        let inst = instance();
        let lay = Layout::of(&inst);
        let weights = DVector::from_fn(lay.m, |i, _| 0.5 + 0.4 * i as f64);
        for draws in [NoiseDraws::PerStep, NoiseDraws::PerRound] {
            let p = Params { eta_u: 0.05, eta_v: 0.09, k_u: 3, k_v: 2, noise_draws: draws };
            let noise_len = lay.m * lay.noise_len(&p);
            let maps = Differences::of(&inst, &p, &weights, &phase_maps(&inst, &p, &weights));
            for seed in 0..3 {
                let z = DVector::from_fn(lay.dim(), |r, _| ((r * 5 + seed * 3) % 13) as f64 / 6.0 - 1.0);
                let xi: Vec<f64> = (0..noise_len).map(|l| ((l * 7 + seed) % 9) as f64 / 4.0 - 1.0).collect();
                let direct = differences_at(&inst, &p, &weights, &z, &xi);
                let mapped = maps.maps.state.map() * &z + maps.maps.state.offset() + &maps.maps.noise * DVector::from_column_slice(&xi);
                assert!((&mapped - &direct).norm() <= 1e-12 * direct.norm(), "{draws:?}, seed {seed}: {}", (&mapped - &direct).norm() / direct.norm());
                // Negative control: the maps of other weights give other differences.
                let moved = &weights * 1.01;
                let other = Differences::of(&inst, &p, &moved, &phase_maps(&inst, &p, &moved));
                let moved = other.maps.state.map() * &z + other.maps.state.offset() + &other.maps.noise * DVector::from_column_slice(&xi);
                assert!((&moved - &direct).norm() > 1e-6 * direct.norm());
            }
        }
    }
}
