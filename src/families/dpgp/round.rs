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
//! with `P^t` and `mu^t`, so they are probed per round.

use nalgebra::{DMatrix, DVector};
use rand_distr::{Distribution, StandardNormal};

use crate::engine::series::PSD_INSPECTION_PERIOD;
use crate::engine::{nan_max, nan_min, Design, Moments, Observable, RandomAffineRound, RecentByBits, RoundMaps};
use crate::error::Result;
use crate::rng::StreamKey;

use super::local::{path_round, realised, LocalProbe, LocalRound, PathRound};
pub use super::phase::{local_iterates, local_phase, Layout, LocalIterates, NoiseDraws, Params, RoundAffine, RoundFunction};
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

/// `z -> sqrt(1/m) [grad_v F_i(u_i / w_i, v_i)]_i`, with `w_i = 1` when `weights` is `None`.
fn delta_v_at(inst: &Instance, weights: Option<&DVector<f64>>) -> Observable {
    let lay = Layout::of(inst);
    let m = lay.m;
    let scale = (1.0 / m as f64).sqrt();
    Observable::probe(lay.dim(), m * lay.dv, &|z| {
        let mut out = DVector::zeros(m * lay.dv);
        for (i, c) in inst.clients.iter().enumerate() {
            let w = weights.map_or(1.0, |w| w[i]);
            let g = c.grad_v(&(z.rows(lay.u(i), lay.du) / w), &z.rows(lay.v(i), lay.dv).into_owned()) * scale;
            out.rows_mut(i * lay.dv, lay.dv).copy_from(&g);
        }
        out
    })
}

/// `z -> sqrt(1/m) [ubar - u_i / w_i]_i`, with `w_i = 1` when `weights` is `None`.
fn deviation_at(inst: &Instance, weights: Option<&DVector<f64>>) -> Observable {
    let lay = Layout::of(inst);
    let m = lay.m;
    let scale = (1.0 / m as f64).sqrt();
    let ubar = |z: &DVector<f64>| (0..m).fold(DVector::zeros(lay.du), |acc, i| acc + z.rows(lay.u(i), lay.du)) / m as f64;
    Observable::probe(lay.dim(), m * lay.du, &|z| {
        let ub = ubar(z);
        let mut out = DVector::zeros(m * lay.du);
        for i in 0..m {
            let w = weights.map_or(1.0, |w| w[i]);
            let d = (&ub - z.rows(lay.u(i), lay.du) / w) * scale;
            out.rows_mut(i * lay.du, lay.du).copy_from(&d);
        }
        out
    })
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

/// `F(ubar, V)` of a state as `1/2 z^T Q z + l^T z + c`, for exact expectations
/// `E F = 1/2 tr(Q P) + l^T mu + c`.
pub struct Objective {
    q: DMatrix<f64>,
    l: DVector<f64>,
}

impl Objective {
    /// `F(ubar, V)` with `ubar = (1/m) sum_i u_i` of the state (or `ubar_prev` when `previous`).
    pub fn new(inst: &Instance, previous: bool) -> Self {
        let lay = Layout::of(inst);
        let (h, g) = inst.joint();
        // x = S z with x = [ubar; v_1; ...; v_m].
        let n = h.nrows();
        let mut s = DMatrix::zeros(n, lay.dim());
        for r in 0..lay.du {
            if previous {
                s[(r, lay.ubar_prev() + r)] = 1.0;
            } else {
                for i in 0..lay.m {
                    s[(r, lay.u(i) + r)] = 1.0 / lay.m as f64;
                }
            }
        }
        for i in 0..lay.m {
            for r in 0..lay.dv {
                s[(lay.du + i * lay.dv + r, lay.v(i) + r)] = 1.0;
            }
        }
        Self { q: s.transpose() * h * &s, l: -(s.transpose() * g) }
    }

    /// `E F = tr(Q C)/2 + mu^T Q mu / 2 + l^T mu` from the moments.
    pub fn expected(&self, m: &Moments) -> f64 {
        m.expected_quadratic(&self.q, &self.l)
    }

    /// `F` at a state.
    pub fn at(&self, z: &DVector<f64>) -> f64 {
        0.5 * z.dot(&(&self.q * z)) + self.l.dot(z)
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

/// How many recent rounds' probed maps [`exact_trajectory`] keeps for reuse: a periodic
/// sequence of graphs within this period (exponential graphs: `ceil(log2 m)`) is probed once.
const GRAPHS_KEPT: usize = 8;

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
    let objective = Objective::new(inst, false);
    let mut out = Trajectory { min_covariance_eigenvalue: f64::INFINITY, ..Default::default() };
    // A static or periodic graph repeats `P^t` and `mu^t` bit for bit: its maps are probed once.
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
        out.objective.push(objective.expected(&m));
        if t > 0 {
            out.delta_ubar.push(fixed.delta_ubar_prev.expected_square(&m));
        }
        if t == rounds {
            break;
        }
        let (diversity, maps) = graph_maps.get(&[seq.mixing[t].as_slice(), weights.as_slice()], || {
            let round = DpgpRound { inst, params: *params, mixing: &seq.mixing[t], weights };
            (Differences::probe(inst, params, weights), RoundMaps::probe(&round))
        });
        out.diversity.push(diversity.supremum(&m));
        if local {
            out.local.push(local_maps.get(&[weights.as_slice()], || LocalProbe::probe(inst, params, weights)).expected(&m));
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
    let objective = Objective::new(inst, false);
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
        out.objective.push(objective.at(&z));
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

/// The local phases of a round ([`local_phase`]) at one state and noise, and the gradients
/// `g_{ikj} = grad_u F_j(z_i^{t,k}, v_j^{t+1})` its differences read ([`Phases::differences`]).
///
/// Client `i`'s phase reads only `u_i`, `v_i` and its own noise, so a state or noise that differs
/// from this one in client `c`'s inputs alone changes only `c`'s phase and the gradients
/// `g_{ckj}` and `g_{ikc}`: [`Phases::differences_with`] computes those and reads the others here
/// (the same operations on the same values, so the same bits as computing every one again).
struct Phases {
    /// `(v_i^{t+1}, [u_i^{t,k}]_{k <= K_u})` per client.
    phases: Vec<ClientPhase>,
    /// `g_{ikj}` at `idx du..(idx + 1) du`, `idx = (i K_u + k) m + j`.
    grads: Vec<f64>,
}

impl Phases {
    /// Every client's phase at state `z` with the round's standard normals `noise`.
    fn at(inst: &Instance, p: &Params, weights: &DVector<f64>, z: &DVector<f64>, noise: &[f64]) -> Self {
        let phases: Vec<_> = (0..inst.m()).map(|i| client_phase(inst, p, weights, z, noise, i)).collect();
        let mut grads = vec![0.0; inst.m() * p.k_u * inst.m() * inst.du];
        fill_gradients(inst, p, weights, &|i| &phases[i], |_, _| true, &mut grads);
        Self { phases, grads }
    }

    /// `[d_i^{t,k}]` for every client `i` and local step `k < K_u`, client-major, each `du`
    /// long: `d_i^{t,k} = grad_u F_i(z_i^{t,k}, v_i^{t+1}) - (1/m) sum_j grad_u F_j(z_i^{t,k},
    /// v_j^{t+1})` at these phases' state and noise, written into `out`.
    fn differences_into(&self, inst: &Instance, p: &Params, out: &mut [f64]) {
        assemble_into(inst, p, |_, _| false, &[], &self.grads, out);
    }

    /// `[d_i^{t,k}]` at state `z` and noise `noise` that differ from these phases' in client
    /// `c`'s inputs only, written into `out`: the gradients that read client `c`'s phase, `g_{ckj}`
    /// and `g_{ikc}`, are computed into `fresh` (a scratch as long as the gradients), the others
    /// read here.
    #[allow(clippy::too_many_arguments)]
    fn differences_with_into(
        &self,
        inst: &Instance,
        p: &Params,
        weights: &DVector<f64>,
        z: &DVector<f64>,
        noise: &[f64],
        c: usize,
        fresh: &mut [f64],
        out: &mut [f64],
    ) {
        let changed = client_phase(inst, p, weights, z, noise, c);
        let phase = |i: usize| if i == c { &changed } else { &self.phases[i] };
        let reads_c = |i: usize, j: usize| i == c || j == c;
        fill_gradients(inst, p, weights, &phase, reads_c, fresh);
        assemble_into(inst, p, reads_c, fresh, &self.grads, out);
    }
}

/// `g_{ikj}` of the clients' phases `phase(i)` for the pairs where `which(i, j)`, into `grads`
/// (laid out as [`Phases::grads`]; the other entries are left as they are).
fn fill_gradients<'a>(
    inst: &Instance,
    p: &Params,
    weights: &DVector<f64>,
    phase: &dyn Fn(usize) -> &'a ClientPhase,
    which: impl Fn(usize, usize) -> bool,
    grads: &mut [f64],
) {
    let (m, du) = (inst.m(), inst.du);
    let mut point = vec![0.0; du];
    for i in 0..m {
        for k in 0..p.k_u {
            let row = (i * p.k_u + k) * m;
            for j in (0..m).filter(|&j| which(i, j)) {
                gradient_into(inst, weights, phase(i), i, k, phase(j), j, &mut point, &mut grads[(row + j) * du..(row + j + 1) * du]);
            }
        }
    }
}

/// `d_i^{t,k} = g_{iki} - (1/m) sum_j g_{ikj}` for every `i` and `k < K_u`, client-major, into
/// `out` (length `m K_u du`); the sum over `j` is taken in client order. `g_{ikj}` is read from
/// `fresh` where `from_fresh(i, j)`, else from `grads` (both laid out as [`Phases::grads`]).
fn assemble_into(inst: &Instance, p: &Params, from_fresh: impl Fn(usize, usize) -> bool, fresh: &[f64], grads: &[f64], out: &mut [f64]) {
    let (m, du) = (inst.m(), inst.du);
    let mut all = vec![0.0; du];
    let grad = |i: usize, idx: usize, j: usize| {
        let source = if from_fresh(i, j) { fresh } else { grads };
        &source[idx * du..(idx + 1) * du]
    };
    for i in 0..m {
        for k in 0..p.k_u {
            let row = (i * p.k_u + k) * m;
            all.fill(0.0);
            for j in 0..m {
                all.iter_mut().zip(grad(i, row + j, j)).for_each(|(a, g)| *a += g);
            }
            let own = grad(i, row + i, i);
            let block = &mut out[(i * p.k_u + k) * du..(i * p.k_u + k + 1) * du];
            for r in 0..du {
                block[r] = own[r] - all[r] / m as f64;
            }
        }
    }
}

/// Client `i`'s local phase at state `z` with the round's standard normals `noise`.
fn client_phase(inst: &Instance, p: &Params, weights: &DVector<f64>, z: &DVector<f64>, noise: &[f64], i: usize) -> ClientPhase {
    let lay = Layout::of(inst);
    let per = lay.noise_len(p);
    let u0 = z.rows(lay.u(i), lay.du).into_owned();
    local_phase(inst, p, i, weights[i], &u0, &z.rows(lay.v(i), lay.dv).into_owned(), &noise[i * per..(i + 1) * per])
}

/// A client's `(v_i^{t+1}, [u_i^{t,k}]_{k <= K_u})` ([`local_phase`]).
type ClientPhase = (DVector<f64>, Vec<DVector<f64>>);

/// `g_{ikj} = grad_u F_j(u_i^{t,k} / mu_i, v_j^{t+1})` from client `i`'s phase `phase_i` and
/// client `j`'s `phase_j`, written into `out`; `point` is a scratch of length `du`.
#[allow(clippy::too_many_arguments)]
fn gradient_into(
    inst: &Instance,
    weights: &DVector<f64>,
    phase_i: &ClientPhase,
    i: usize,
    k: usize,
    phase_j: &ClientPhase,
    j: usize,
    point: &mut [f64],
    out: &mut [f64],
) {
    let w = weights[i];
    point.iter_mut().zip(phase_i.1[k].iter()).for_each(|(x, u)| *x = u / w);
    inst.clients[j].grad_u_into(point, phase_j.0.as_slice(), out);
}

/// `max_{i, k < K_u} E||d_i^{t,k}||^2` for one round with state moments `m`, mixing weights
/// `weights = mu^t` and steps `p` (NaN kept by [`nan_max`]).
pub fn round_supremum(inst: &Instance, p: &Params, weights: &DVector<f64>, m: &Moments) -> f64 {
    Differences::probe(inst, p, weights).supremum(m)
}

/// The differences `[d_i^{t,k}]` of a round ([`Phases::differences`]) as an affine map of the state and a
/// linear map of the round's standard normals, probed once for the round's weights and steps.
struct Differences {
    /// The maps.
    maps: RoundAffine,
    /// Length of one difference, `du`.
    du: usize,
}

impl Differences {
    /// Column `j` of each map is the differences at the unit state `e_j` (or unit noise `e_l`)
    /// less those at 0 ([`Observable::probe`]); a unit input touches one client's inputs (or
    /// none: `ubar_prev`), so [`Phases::differences_with`] recomputes that client's part only.
    fn probe(inst: &Instance, p: &Params, weights: &DVector<f64>) -> Self {
        let lay = Layout::of(inst);
        let (dim, per) = (lay.dim(), lay.noise_len(p));
        let quiet = vec![0.0; lay.m * per];
        let origin = DVector::zeros(dim);
        let base = Phases::at(inst, p, weights, &origin, &quiet);
        let rows = lay.m * p.k_u * lay.du;
        let mut offset = DVector::zeros(rows);
        base.differences_into(inst, p, offset.as_mut_slice());
        let client_of = |j: usize| match j {
            j if j < lay.v(0) => Some(j / lay.du),
            j if j < lay.ubar_prev() => Some((j - lay.v(0)) / lay.dv),
            _ => None,
        };
        let mut at = vec![0.0; rows];
        let mut fresh = vec![0.0; base.grads.len()];
        // Column `j` is `at - offset` with `at` the differences at the unit input.
        let column =
            |map: &mut DMatrix<f64>, j: usize, at: &[f64]| map.column_mut(j).iter_mut().zip(at.iter().zip(offset.iter())).for_each(|(x, (a, o))| *x = a - o);
        let mut map = DMatrix::zeros(rows, dim);
        let mut e = DVector::zeros(dim);
        for j in 0..dim {
            e[j] = 1.0;
            match client_of(j) {
                Some(c) => base.differences_with_into(inst, p, weights, &e, &quiet, c, &mut fresh, &mut at),
                None => base.differences_into(inst, p, &mut at),
            }
            e[j] = 0.0;
            column(&mut map, j, &at);
        }
        let mut noise = DMatrix::zeros(rows, quiet.len());
        let mut unit = quiet.clone();
        for l in 0..quiet.len() {
            unit[l] = 1.0;
            base.differences_with_into(inst, p, weights, &origin, &unit, l / per, &mut fresh, &mut at);
            unit[l] = 0.0;
            column(&mut noise, l, &at);
        }
        Self { maps: RoundAffine { state: Observable::new(map, offset), noise }, du: lay.du }
    }

    /// `max_{i, k} E||d_i^{t,k}||^2` under the state moments `m` (NaN kept by [`nan_max`]).
    fn supremum(&self, m: &Moments) -> f64 {
        let du = self.du;
        (0..self.maps.noise.nrows() / du).fold(f64::NEG_INFINITY, |acc, b| nan_max(acc, self.maps.block_square(m, b * du, du)))
    }
}
