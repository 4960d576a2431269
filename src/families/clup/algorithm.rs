//! Algorithm 1 (003:L904-914) and Algorithm 2, FedCLUP (003:L1170-1176), as pure steps on the
//! state `z = (w^(g), w^(1), ..., w^(m))`. Every step is affine in the state, so the exact engine
//! ([`crate::engine`]) propagates means and covariances: a round of Algorithm 1 is one
//! [`RandomAffineRound`] over the clients (all active), a local step of Algorithm 2 is one over a
//! client's samples with the batch drawn `B` of `n` without replacement.
//!
//! Algorithm 2's moments are propagated in the relative coordinates `(w^(g), w^(i) - w^(g))`
//! ([`to_relative`]): with `lambda` large against `L` the local models stay within
//! `O(L/lambda)` of the global one, and the server step multiplies their differences by
//! `gamma lambda`. In the coordinates `(w^(g), w^(i))` those differences are cancellations of the
//! models themselves, and the covariance `M C M^T` of a server step cancels terms of size
//! `(gamma lambda)^2 ||C||` down to `||C||` (at `lambda/L = 5e8` the propagated `E||w^(g) -
//! w~^(g)||^2` went negative within four rounds). In the relative coordinates every step writes
//! each difference from terms of its own size.

use nalgebra::{DMatrix, DVector, Schur};

use crate::engine::series::PSD_INSPECTION_PERIOD;
use crate::engine::{nan_max, InclusionMoments, Moments, Observable, RandomAffineRound, RoundMaps};

use super::model::Instance;

/// `InclusionMoments` of full participation: every client in every round.
pub const FULL: InclusionMoments = InclusionMoments { p: 1.0, q: 1.0, p2: 1.0 };

/// The step sizes and counts of a run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Params {
    /// `lambda > 0`.
    pub lambda: f64,
    /// Global step `gamma`.
    pub gamma: f64,
    /// Local step `eta`.
    pub eta: f64,
    /// Local steps `K >= 1`.
    pub k: usize,
}

impl Params {
    /// `1 - eta lambda`, the factor a local step keeps of `w - w_g`, in one rounding (a fused
    /// multiply-add): with `eta lambda` near 1 a rounded product would leave it accurate only to
    /// `eps/(1 - eta lambda)`.
    pub fn keep(&self) -> f64 {
        (-self.eta).mul_add(self.lambda, 1.0)
    }
}

/// Block `b` of the state (`0` is the global model, `i + 1` client `i`).
pub fn block(z: &DVector<f64>, b: usize, d: usize) -> DVector<f64> {
    z.rows(b * d, d).into_owned()
}

/// One local step of (13) on the full local loss:
/// `w - eta [A_i w - b_i + lambda (w - w_g)]` (003:L172, L914).
pub fn local_step(inst: &Instance, i: usize, p: &Params, w: &DVector<f64>, w_g: &DVector<f64>) -> DVector<f64> {
    let c = &inst.clients[i];
    w - (&c.a * w - &c.b + (w - w_g) * p.lambda) * p.eta
}

/// `K` local steps from the warm start `w` (003:L914).
pub fn local_steps(inst: &Instance, i: usize, p: &Params, w: &DVector<f64>, w_g: &DVector<f64>) -> DVector<f64> {
    (0..p.k).fold(w.clone(), |w, _| local_step(inst, i, p, &w, w_g))
}

/// One round of Algorithm 1: each active client runs `K` local steps from its warm start and
/// uploads `lambda (w_g - w_{t,K}^(i))`; the server steps `w_g - (gamma/m) sum_i lambda (w_g -
/// w_{t,K}^(i))` (003:L914). With `gamma = 1/lambda` the server step is the plain mean of the
/// local models (the authors' public code, whose global step never runs).
pub struct Alg1Round<'a> {
    /// The data.
    pub inst: &'a Instance,
    /// Steps.
    pub params: Params,
}

impl RandomAffineRound for Alg1Round<'_> {
    fn state_dim(&self) -> usize {
        (self.inst.m() + 1) * self.inst.d
    }
    fn components(&self) -> usize {
        self.inst.m()
    }
    fn noise_per_component(&self) -> usize {
        0
    }
    /// Client `i`'s local steps start from `w_g` and its own `w_i` (line 5 of Algorithm 1).
    fn reads(&self, i: usize) -> Option<Vec<usize>> {
        Some(global_and_own(self.inst.d, i))
    }
    fn apply(&self, z: &DVector<f64>, active: &[usize], _noise: &[f64]) -> DVector<f64> {
        let (d, m) = (self.inst.d, self.inst.m() as f64);
        let p = &self.params;
        let w_g = block(z, 0, d);
        let mut out = z.clone();
        for &i in active {
            let wk = local_steps(self.inst, i, p, &block(z, i + 1, d), &w_g);
            let upload = (&w_g - &wk) * p.lambda;
            let mut g = out.rows_mut(0, d);
            g -= upload * (p.gamma / m);
            out.rows_mut((i + 1) * d, d).copy_from(&wk);
        }
        out
    }
}

/// One local step of Algorithm 2 at client `i` with a minibatch: `w - (eta/B) sum_{j in batch}
/// {grad l(w, z_ij) + lambda (w - w_g)}` (003:L1176); the batch is the active components. On the
/// relative state ([`to_relative`]): with `delta = w - w_g`,
/// `delta' = (1 - eta lambda) delta - (eta/B) sum_{j in batch} x_j (x_j^T (w_g + delta) - y_j)`.
pub struct BatchStep<'a> {
    /// The data.
    pub inst: &'a Instance,
    /// The client.
    pub client: usize,
    /// Steps.
    pub params: Params,
    /// Batch size `B`.
    pub batch: usize,
}

impl RandomAffineRound for BatchStep<'_> {
    fn state_dim(&self) -> usize {
        (self.inst.m() + 1) * self.inst.d
    }
    fn components(&self) -> usize {
        self.inst.n
    }
    fn noise_per_component(&self) -> usize {
        0
    }
    fn apply(&self, z: &DVector<f64>, active: &[usize], _noise: &[f64]) -> DVector<f64> {
        let d = self.inst.d;
        let p = &self.params;
        let c = &self.inst.clients[self.client];
        let w_g = block(z, 0, d);
        let delta = block(z, self.client + 1, d);
        let w = &w_g + &delta;
        // The regularizer's gradient is the same for every sample of the batch: its mean is itself.
        // `1 - eta lambda` in one rounding (a fused multiply-add): with `eta lambda` near 1 it is
        // the small factor `delta` keeps, which a rounded product would leave accurate only to
        // `eps/(1 - eta lambda)`.
        let mut next = &delta * p.keep();
        for &j in active {
            let x = c.x.row(j).transpose();
            next -= &x * (x.dot(&w) - c.y[j]) * (p.eta / self.batch as f64);
        }
        let mut out = z.clone();
        out.rows_mut((self.client + 1) * d, d).copy_from(&next);
        out
    }
    /// Sample `j`'s step `-(eta/B) x_j (x_j^T (w_g + delta) - y_j)` writes the client's block
    /// and reads it and the global one: `u = -(eta/B) x_j` on the client's block, `v = x_j` on
    /// both.
    fn component_rank_one(&self, j: usize) -> Option<(DVector<f64>, DVector<f64>)> {
        let d = self.inst.d;
        let x = self.inst.clients[self.client].x.row(j).transpose();
        let (mut u, mut v) = (DVector::zeros(self.state_dim()), DVector::zeros(self.state_dim()));
        u.rows_mut((self.client + 1) * d, d).copy_from(&(&x * (-self.params.eta / self.batch as f64)));
        v.rows_mut(0, d).copy_from(&x);
        v.rows_mut((self.client + 1) * d, d).copy_from(&x);
        Some((u, v))
    }
}

/// The server step of Algorithm 2 after the local steps: `w_g - (gamma/m) sum_i lambda (w_g -
/// w^(i))`. On the relative state ([`to_relative`]) client `i`'s upload `-lambda delta_i` moves
/// the global model by `s_i = (gamma lambda/m) delta_i` and every difference by `-s_i`.
pub struct ServerStep<'a> {
    /// The data (sizes).
    pub inst: &'a Instance,
    /// Steps.
    pub params: Params,
}

impl RandomAffineRound for ServerStep<'_> {
    fn state_dim(&self) -> usize {
        (self.inst.m() + 1) * self.inst.d
    }
    fn components(&self) -> usize {
        self.inst.m()
    }
    fn noise_per_component(&self) -> usize {
        0
    }
    /// Client `i`'s upload reads its difference `delta_i` only.
    fn reads(&self, i: usize) -> Option<Vec<usize>> {
        let d = self.inst.d;
        Some(((i + 1) * d..(i + 2) * d).collect())
    }
    fn apply(&self, z: &DVector<f64>, active: &[usize], _noise: &[f64]) -> DVector<f64> {
        let (d, m) = (self.inst.d, self.inst.m());
        let mut shift = DVector::zeros(d);
        for &i in active {
            shift += block(z, i + 1, d) * (self.params.lambda * (self.params.gamma / m as f64));
        }
        let mut out = z.clone();
        for b in 0..=m {
            let mut rows = out.rows_mut(b * d, d);
            if b == 0 {
                rows += &shift;
            } else {
                rows -= &shift;
            }
        }
        out
    }
}

/// The coordinates of `w_g` (block 0) and of client `i`'s `w_i` (block `i + 1`), each of `d`.
fn global_and_own(d: usize, i: usize) -> Vec<usize> {
    (0..d).chain((i + 1) * d..(i + 2) * d).collect()
}

/// The state `(w^(g), w^(i))` in the relative coordinates `(w^(g), w^(i) - w^(g))` of Algorithm
/// 2's moments.
pub fn to_relative(z: &DVector<f64>, d: usize) -> DVector<f64> {
    let w_g = block(z, 0, d);
    let mut r = z.clone();
    for b in 1..z.len() / d {
        let mut rows = r.rows_mut(b * d, d);
        rows -= &w_g;
    }
    r
}

/// The state `(w^(g), w^(i))` of the relative state `(w^(g), w^(i) - w^(g))` ([`to_relative`]).
pub fn from_relative(y: &DVector<f64>, d: usize) -> DVector<f64> {
    let w_g = block(y, 0, d);
    let mut z = y.clone();
    for b in 1..y.len() / d {
        let mut rows = z.rows_mut(b * d, d);
        rows += &w_g;
    }
    z
}

/// The initial state `(w_1^(g), w_{0,K}^(i))`.
pub fn initial_state(global: &DVector<f64>, locals: &[DVector<f64>]) -> DVector<f64> {
    let d = global.len();
    let mut z = DVector::zeros((locals.len() + 1) * d);
    z.rows_mut(0, d).copy_from(global);
    for (i, w) in locals.iter().enumerate() {
        z.rows_mut((i + 1) * d, d).copy_from(w);
    }
    z
}

/// The exact trajectory of Algorithm 1: states `s_1, ..., s_{T+1}`, `s_t = (w_t^(g), w_{t-1,K}^(i))`,
/// each round computed on the relative state ([`alg1_relative_round`]) and written back in the
/// coordinates `(w^(g), w^(i))`.
pub fn run_alg1(inst: &Instance, p: &Params, z0: &DVector<f64>, rounds: usize) -> Vec<DVector<f64>> {
    let d = inst.d;
    let mut y = to_relative(z0, d);
    let mut states = Vec::with_capacity(rounds + 1);
    states.push(z0.clone());
    for _ in 0..rounds {
        y = alg1_relative_round(inst, p, &y).next;
        states.push(from_relative(&y, d));
    }
    states
}

/// One round of Algorithm 1 (003:L914) on the relative state `y = (w^(g), delta^(i))`,
/// `delta^(i) = w^(i) - w^(g)` ([`to_relative`]); returns the next state and the clients'
/// `delta_{t,K}^(i) = w_{t,K}^(i) - w_t^(g)` and the server's step ([`Alg1Step`]).
///
/// # Formula
///
/// A local step on `w = w_g + delta` is
/// `delta' = (1 - eta lambda) delta - eta (A_i (w_g + delta) - b_i)`, with `1 - eta lambda` in one
/// rounding; the server step moves `w_g` by `s = (gamma lambda/m) sum_i delta_{t,K}^(i)` (the
/// uploads are `-lambda delta_{t,K}^(i)`) and every difference by `-s`.
///
/// With `lambda` large beside `L` the local models stay within `O(L/lambda)` of the global one and
/// the server multiplies their differences by `gamma lambda`: formed as `w_g - w_{t,K}^(i)` from
/// the models themselves ([`Alg1Round`]) they keep only `eps lambda/L` of their relative accuracy
/// (at `lambda = 1e16` none: Theorem 2's error stalled 600 times above its bound). Here every
/// difference is written from terms of its own size.
pub fn alg1_relative_round(inst: &Instance, p: &Params, y: &DVector<f64>) -> Alg1Step {
    let (d, m) = (inst.d, inst.m());
    let w_g = block(y, 0, d);
    let keep = p.keep();
    let deltas: Vec<DVector<f64>> = (0..m)
        .map(|i| {
            let c = &inst.clients[i];
            (0..p.k).fold(block(y, i + 1, d), |delta, _| &delta * keep - (&c.a * (&w_g + &delta) - &c.b) * p.eta)
        })
        .collect();
    let shift = deltas.iter().fold(DVector::zeros(d), |acc, delta| acc + delta * (p.lambda * (p.gamma / m as f64)));
    let mut next = y.clone();
    next.rows_mut(0, d).copy_from(&(w_g + &shift));
    for (i, delta) in deltas.iter().enumerate() {
        next.rows_mut((i + 1) * d, d).copy_from(&(delta - &shift));
    }
    Alg1Step { next, deltas, shift }
}

/// One round of [`alg1_relative_round`].
pub struct Alg1Step {
    /// The next relative state.
    pub next: DVector<f64>,
    /// `delta_{t,K}^(i) = w_{t,K}^(i) - w_t^(g)`, per client.
    pub deltas: Vec<DVector<f64>>,
    /// The server's step `w_{t+1}^(g) - w_t^(g) = (gamma lambda/m) sum_i delta_{t,K}^(i)`.
    pub shift: DVector<f64>,
}

/// The instance with every `b_i = 0`: its round of Algorithm 1 is the linear part `M` of the
/// affine round, and its `prox` the linear part `lambda (A_i + lambda I)^{-1}` of `w*^(i)(.)`.
fn homogeneous(inst: &Instance) -> Instance {
    let mut h = inst.clone();
    for c in &mut h.clients {
        c.b.fill(0.0);
    }
    h
}

/// Round `t` of Algorithm 1 measured from the round's fixed point `z~ = (w~^(g), w~^(i))`
/// ([`alg1_deviations`]).
#[derive(Debug, Clone)]
pub struct Alg1Deviation {
    /// `w_t^(g) - w~^(g)`.
    pub global: DVector<f64>,
    /// `w_{t,K}^(i) - w~^(i)`, per client.
    pub locals: Vec<DVector<f64>>,
    /// The local steps' residual `w_{t,K}^(i) - w*^(i)(w_t^(g))`, per client: with `w_t^(g)`
    /// fixed a local step contracts the distance to `w*^(i)(w_t^(g))` by `I - eta (A_i + lambda
    /// I)`, so it is `(I - eta (A_i + lambda I))^K` applied to the start's residual `[e_t]_i -
    /// lambda (A_i + lambda I)^{-1} [e_t]_g` (`w~^(i) = w*^(i)(w~^(g))` at the fixed point, and
    /// `w*^(i)(.)` is affine with that linear part). No subtraction of the converged local model
    /// and its target.
    pub residuals: Vec<DVector<f64>>,
    /// Lemma 2's envelope gradient at `w_t^(g)`, `G_t = (lambda/m) sum_i (w_t^(g) - w*^(i)(w_t^(g)))
    /// = (lambda/m) sum_i (A_i + lambda I)^{-1} A_i [e_t]_g` (it vanishes at `w~^(g)` and is
    /// linear): each term from `[e_t]_g`, not from the models.
    pub gradient: DVector<f64>,
    /// The server's step `w_{t+1}^(g) - w_t^(g) = (gamma lambda/m) sum_i delta_{t,K}^(i)`, as the
    /// round adds it (not the difference of two global models).
    pub step: DVector<f64>,
}

/// Algorithm 1's rounds `t = 1..=rounds` as deviations from its fixed point: `e_t = z_t - z~`
/// propagated by the round's linear part (the round of the instance with every `b_i = 0`), in the
/// relative coordinates of [`alg1_relative_round`]. No step subtracts two nearly equal iterates,
/// so each distance keeps its relative accuracy also where `z_t` agrees with `z~` to ten digits
/// (the difference `z_t - z~` of the iterates themselves keeps only `eps ||z~|| / ||z_t - z~||` of
/// it), and where `lambda` is large beside `L` (the local models' differences from the global one
/// are propagated, never formed from the models).
pub fn alg1_deviations(inst: &Instance, p: &Params, z0: &DVector<f64>, rounds: usize) -> Vec<Alg1Deviation> {
    let (d, m) = (inst.d, inst.m());
    let sol = inst.solve(p.lambda);
    let lin = homogeneous(inst);
    let contractions: Vec<DMatrix<f64>> = (0..m).map(|i| local_contraction(inst, i, p)).collect();
    let mut dev = to_relative(&(z0 - initial_state(&sol.global, &sol.locals)), d);
    let mut out = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let global = block(&dev, 0, d);
        let Alg1Step { next, deltas, shift } = alg1_relative_round(&lin, p, &dev);
        let locals = deltas.iter().map(|delta| &global + delta).collect();
        // `w_t^(g) - w*^(i)(w_t^(g))` of the deviations, `(A_i + lambda I)^{-1} A_i [e_t]_g`.
        let displacements: Vec<DVector<f64>> = (0..m).map(|i| lin.prox_displacement(i, p.lambda, &global)).collect();
        // The start's residual `[e_t]_i - lambda (A_i + lambda I)^{-1} [e_t]_g` is
        // `delta_i + (A_i + lambda I)^{-1} A_i [e_t]_g`: no two near-equal vectors subtracted.
        let residuals = (0..m).map(|i| &contractions[i] * (block(&dev, i + 1, d) + &displacements[i])).collect();
        let gradient = displacements.iter().fold(DVector::zeros(d), |acc, x| acc + x) * (p.lambda / m as f64);
        out.push(Alg1Deviation { global, locals, residuals, gradient, step: shift });
        dev = next;
    }
    out
}

/// `(I - eta (A_i + lambda I))^K`, the step formed as `(1 - eta lambda) I - eta A_i` with `1 - eta
/// lambda` in one rounding (`A_i + lambda I` would round `A_i` away where `lambda` is large):
/// client `i`'s `K` local steps on the distance to their target `w*^(i)(w_g)` at a fixed `w_g`.
fn local_contraction(inst: &Instance, i: usize, p: &Params) -> DMatrix<f64> {
    let d = inst.d;
    let step = DMatrix::identity(d, d) * p.keep() - &inst.clients[i].a * p.eta;
    (0..p.k).fold(DMatrix::identity(d, d), |acc, _| &step * acc)
}

/// Theorem 2's `V_t = ||w_t^(g) - w~^(g)||^2 + c1 (1/m) sum_i ||w_{t,K}^(i) - w*^(i)(w_t^(g))||^2`
/// (the proof's (114), 003:L1049-1071), `t = 1..=rounds`, from [`alg1_deviations`].
pub fn alg1_lyapunov(inst: &Instance, p: &Params, z0: &DVector<f64>, rounds: usize, c1: f64) -> Vec<f64> {
    let m = inst.m() as f64;
    alg1_deviations(inst, p, z0, rounds)
        .iter()
        .map(|r| r.global.norm_squared() + c1 * (r.residuals.iter().map(|e| e.norm_squared()).sum::<f64>() / m))
        .collect()
}

/// Iterations the real Schur decomposition of a round's linear part may take before it is
/// given up (its QR sweeps converge in a few per eigenvalue; an input of extreme scale, such as
/// `lambda = 1e20`, may never meet the tolerance).
pub const SCHUR_MAX_ITERATIONS: usize = 100_000;

/// The linear part of one round of Algorithm 1 and its spectral radius: the exact asymptotic
/// contraction of `||z_t - z~||` per round; `None` when the decomposition does not converge in
/// [`SCHUR_MAX_ITERATIONS`] or the radius is not finite.
pub fn alg1_spectral_radius(inst: &Instance, p: &Params) -> Option<f64> {
    let schur = Schur::try_new(alg1_linear_part(inst, p), f64::EPSILON, SCHUR_MAX_ITERATIONS)?;
    Some(schur.complex_eigenvalues().iter().map(|e| e.norm()).fold(0.0, crate::engine::nan_max)).filter(|r| r.is_finite())
}

/// The linear part `M` of one round of Algorithm 1 on the relative state `(w^(g), w^(i) -
/// w^(g))` of [`alg1_relative_round`]: its columns are the round of the instance with every `b_i =
/// 0` applied to unit vectors. It is similar to the linear part on `(w^(g), w^(i))` (same
/// eigenvalues), whose entries of size `gamma lambda` cancel to the round's contraction.
pub fn alg1_linear_part(inst: &Instance, p: &Params) -> DMatrix<f64> {
    let lin = homogeneous(inst);
    let dim = (inst.m() + 1) * inst.d;
    let cols: Vec<DVector<f64>> = (0..dim)
        .map(|j| {
            let mut e = DVector::zeros(dim);
            e[j] = 1.0;
            alg1_relative_round(&lin, p, &e).next
        })
        .collect();
    DMatrix::from_columns(&cols)
}

/// How Algorithm 2 draws its batches (I-CLUP19).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Batches {
    /// A fresh batch at every local step (003:L1178 and the proof's (137)-(138)).
    #[default]
    PerStep,
    /// One batch per round, reused for the `K` local steps (the listing, 003:L1176).
    PerRound,
}

/// What an exact run of Algorithm 2 observes.
#[derive(Debug, Clone)]
pub struct Alg2Run {
    /// `E||w_t^(g) - w~^(g)||^2`, `t = 1..=T`.
    pub global_error: Vec<f64>,
    /// The largest per-sample gradient variance `E V_i(w_{t,k}^(i))` at any visited iterate
    /// (Assumption 4 where it is stated: at the iterates).
    pub sigma2: f64,
    /// `g_1 = E||(1/m) sum_i (w_{1,K}^(i) - w_*^(i)(w_1^(g)))||^2`: Theorem 3's `g_t` (003:L1189,
    /// eq. 136) after the first round's `K` local steps, as `e_t` of (100)/(108) (003:L957,
    /// L1010) pairs `w_{t,K}^(i)` with `w_t^(g)`; exact over the first round's batches.
    pub g1: f64,
}

/// Largest number of batches enumerated per client for the one-batch-per-round reading.
pub const MAX_BATCH_OUTCOMES: usize = 5000;

fn binomial(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, j| acc * (n - j) as f64 / (j + 1) as f64)
}

/// Whether the per-round batch enumeration is small enough.
pub fn per_round_outcomes(n: usize, b: usize) -> f64 {
    binomial(n, b)
}

fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur: Vec<usize> = (0..k).collect();
    loop {
        out.push(cur.clone());
        let mut i = k;
        loop {
            if i == 0 {
                return out;
            }
            i -= 1;
            if cur[i] < n - k + i {
                cur[i] += 1;
                for j in i + 1..k {
                    cur[j] = cur[j - 1] + 1;
                }
                break;
            }
        }
    }
}

/// The largest client sampling variance at the relative moments `m` ([`to_relative`]): client
/// `i`'s [`Instance::sample_variance_at`] (curvature `curvatures[i]`) at the moments of `w_i =
/// w_g + delta_i` ([`local_model`]); NaN when one is.
fn sigma2_at(inst: &Instance, curvatures: &[DMatrix<f64>], m: &Moments) -> f64 {
    curvatures
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let w = local_model(m, i, inst.d);
            non_negative(inst.sample_variance_at(i, q, &w.mean, &w.cov))
        })
        .fold(0.0, nan_max)
}

/// An expected square or a variance as computed, or NaN where it is negative: the moments it was
/// read from are no longer positive semidefinite, so they have lost their accuracy (a numerical
/// failure, reported undecided; never clamped to zero, and never a bound or an error below every
/// true value).
fn non_negative(x: f64) -> f64 {
    if x < 0.0 {
        f64::NAN
    } else {
        x
    }
}

/// The moments of client `i`'s model `w_i = w_g + delta_i` from the relative moments `m`:
/// mean `mu_g + mu_i`, covariance `C_gg + C_gi + C_ig + C_ii`.
fn local_model(m: &Moments, i: usize, d: usize) -> Moments {
    let r = (i + 1) * d;
    let mean = m.mean.rows(0, d) + m.mean.rows(r, d);
    let cov = m.cov.view((0, 0), (d, d)) + m.cov.view((0, r), (d, d)) + m.cov.view((r, 0), (d, d)) + m.cov.view((r, r), (d, d));
    Moments::new(mean, cov)
}

/// One client's step as a mixture of affine maps on its block, each batch with equal probability:
/// `delta_i' = F_s u + c_s` with `u = (w_g, delta_i)` (the relative state, [`to_relative`]). With `m_s = F_s mu_u + c_s` and `Fbar`, `mbar` the
/// means over batches, the block's mean becomes `mbar`, its covariance with the rest of the state
/// `Fbar C[u, :]`, and its own covariance `mean_s (F_s C_uu F_s^T + (m_s - mbar)(m_s - mbar)^T)`.
fn mixture_step(m: &mut Moments, maps: &[(DMatrix<f64>, DVector<f64>)], i: usize, d: usize) {
    let dim = m.dim();
    let idx: Vec<usize> = (0..d).chain((i + 1) * d..(i + 2) * d).collect();
    let mu_u = DVector::from_fn(2 * d, |r, _| m.mean[idx[r]]);
    let c_uu = DMatrix::from_fn(2 * d, 2 * d, |r, c| m.cov[(idx[r], idx[c])]);
    let c_u = DMatrix::from_fn(2 * d, dim, |r, c| m.cov[(idx[r], c)]);
    let w = 1.0 / maps.len() as f64;
    let mut f_bar = DMatrix::zeros(d, 2 * d);
    let mut mean_i = DVector::zeros(d);
    for (f, c) in maps {
        f_bar += f * w;
        mean_i += (f * &mu_u + c) * w;
    }
    let mut own = DMatrix::zeros(d, d);
    for (f, c) in maps {
        let spread = f * &mu_u + c - &mean_i;
        own += (f * &c_uu * f.transpose() + &spread * spread.transpose()) * w;
    }
    let rows = &f_bar * c_u;
    let r0 = (i + 1) * d;
    for a in 0..d {
        for c in 0..dim {
            m.cov[(r0 + a, c)] = rows[(a, c)];
            m.cov[(c, r0 + a)] = rows[(a, c)];
        }
    }
    for a in 0..d {
        for b in 0..d {
            m.cov[(r0 + a, r0 + b)] = 0.5 * (own[(a, b)] + own[(b, a)]);
        }
    }
    m.mean.rows_mut(r0, d).copy_from(&mean_i);
}

/// The exact moments of Algorithm 2 from the point mass `z0` (the state `(w^(g), w^(i))`) over
/// `rounds` rounds, and what they observe; propagated in the relative coordinates of
/// [`to_relative`]. Every [`PSD_INSPECTION_PERIOD`] rounds and at the end the covariance must be
/// positive semidefinite up to rounding ([`Moments::covariance_is_psd`]); where it is not, the
/// moments have lost their accuracy and every value of the run is NaN (undecided): a variance
/// read from such moments may be positive and still meaningless. Per-step batches go through the engine (B of n without replacement); one
/// batch per round is a mixture over every batch of the `K`-step map.
pub fn run_alg2(inst: &Instance, p: &Params, batch: usize, batches: Batches, z0: &DVector<f64>, target: &DVector<f64>, rounds: usize) -> Alg2Run {
    let (d, m) = (inst.d, inst.m());
    let dim = (m + 1) * d;
    let curvatures: Vec<_> = (0..m).map(|i| inst.sample_variance_curvature(i)).collect();
    let observe = Observable::probe(dim, d, &|z: &DVector<f64>| block(z, 0, d) - target);
    let server = RoundMaps::probe(&ServerStep { inst, params: *p });
    let steps: Vec<RoundMaps> = (0..m).map(|i| RoundMaps::probe(&BatchStep { inst, client: i, params: *p, batch })).collect();
    let inc = InclusionMoments::without_replacement(inst.n, batch);
    // For one batch per round: client i's K-step map for every batch, on the rows of its block:
    // delta_i' = F_s (w_g, delta_i) + c_s, probed from the step's own code.
    let per_round: Vec<Vec<(DMatrix<f64>, DVector<f64>)>> = match batches {
        Batches::PerStep => Vec::new(),
        Batches::PerRound => (0..m)
            .map(|i| {
                let step = BatchStep { inst, client: i, params: *p, batch };
                subsets(inst.n, batch)
                    .into_iter()
                    .map(|s| {
                        let f = |u: &DVector<f64>| {
                            let mut z = DVector::zeros(dim);
                            z.rows_mut(0, d).copy_from(&u.rows(0, d));
                            z.rows_mut((i + 1) * d, d).copy_from(&u.rows(d, d));
                            let z = (0..p.k).fold(z, |z, _| step.apply(&z, &s, &[]));
                            block(&z, i + 1, d)
                        };
                        // The K-step map probed as an observable (its columns lifted where the
                        // labels' constant swamps them).
                        let map = Observable::probe(2 * d, d, &f);
                        (map.map().clone(), map.offset().clone())
                    })
                    .collect()
            })
            .collect(),
    };
    let mut m = Moments::point(to_relative(z0, d));
    let lost = Alg2Run { global_error: vec![f64::NAN; rounds], sigma2: f64::NAN, g1: f64::NAN };
    let mut global_error = Vec::with_capacity(rounds);
    let mut sigma2: f64 = 0.0;
    let g1_observable = mean_local_error(inst, p.lambda, z0);
    let mut g1 = f64::NAN;
    for t in 0..rounds {
        if t % PSD_INSPECTION_PERIOD == 0 && !m.covariance_is_psd() {
            return lost;
        }
        global_error.push(non_negative(observe.expected_square(&m)));
        match batches {
            Batches::PerStep => {
                for _ in 0..p.k {
                    sigma2 = nan_max(sigma2, sigma2_at(inst, &curvatures, &m));
                    for s in &steps {
                        s.propagate_in_place(&mut m, &inc);
                    }
                }
            }
            Batches::PerRound => {
                sigma2 = nan_max(sigma2, sigma2_at(inst, &curvatures, &m));
                for (i, maps) in per_round.iter().enumerate() {
                    mixture_step(&mut m, maps, i, d);
                }
            }
        }
        if t == 0 {
            g1 = non_negative(g1_observable.expected_square(&m));
        }
        m = server.propagate(&m, &FULL);
    }
    if !m.covariance_is_psd() {
        return lost;
    }
    Alg2Run { global_error, sigma2, g1 }
}

/// `z -> (1/m) sum_i (w^(i) - w_*^(i)(w_g))` on the relative state ([`to_relative`]), with `w_g`
/// the global block of `z0` (the global model of the first round): the error whose expected
/// square is `g_1` of (136).
fn mean_local_error(inst: &Instance, lambda: f64, z0: &DVector<f64>) -> Observable {
    let (d, m) = (inst.d, inst.m());
    let wg = block(z0, 0, d);
    let target = (0..m).fold(DVector::zeros(d), |a, i| a + inst.prox(i, lambda, &wg)) / m as f64;
    Observable::probe((m + 1) * d, d, &|z: &DVector<f64>| (0..m).fold(DVector::zeros(d), |a, i| a + block(z, 0, d) + block(z, i + 1, d)) / m as f64 - &target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::affine::probed_with_and_without_reads;
    use crate::families::clup::model::ModelSpec;

    /// Algorithm 2 where `lambda` is `5e8 L` (the card's `low-r` with features of squared norm
    /// `L = 1e-9` at `lambda = 0.5` and Corollary 2's steps; batches of 3, from 0):
    /// `E||w_t^(g) - w~^(g)||^2` of both readings, fresh batches per step and one batch per
    /// round, each against the same recursion in the coordinates `(w^(g), w^(i))` in 60-digit
    /// decimal arithmetic (independent programs enumerating every batch; round 1 is
    /// `||w~^(g)||^2`). In those coordinates in `f64` the third round had been 1.45e7 and the
    /// fourth -1.7e8; with `I - (lambda/m) sum (A_i + lambda I)^{-1}` formed by subtraction,
    /// round 1 was off by 9e-8. Control: the two readings differ by far more than the tolerance
    /// from round 2 on, so neither can pass as the other.
    #[test]
    fn algorithm_2_moments_keep_their_accuracy_at_lambda_5e8_l() {
        let inst = ModelSpec { m: 6, n: 12, d: 2, r: 0.05, l: 1e-9, noise: 0.5, center: 1.0, seed: 1, features: Default::default() }.instance(0).unwrap();
        let params = Params { lambda: 0.5, gamma: 500000000.99999976, eta: 1.9999999960000001, k: 12 };
        let z0 = DVector::zeros(7 * 2);
        let target = inst.solve(params.lambda).global;
        let fresh = [14620877.745964554, 9951614.467657868, 7413750.31849334, 6031975.402214264, 5278259.410871114, 4866325.785339738];
        let one = [14620877.745964554, 9951614.472172253, 7413750.325097073, 6031975.409763925, 5278259.418837016, 4866325.793482156];
        for (batches, reference) in [(Batches::PerStep, fresh), (Batches::PerRound, one)] {
            let run = run_alg2(&inst, &params, 3, batches, &z0, &target, 6);
            for (t, (got, want)) in run.global_error.iter().zip(reference).enumerate() {
                assert!((got / want - 1.0).abs() < 1e-12, "{batches:?}, round {}: {got} against {want}", t + 1);
            }
        }
        assert!(fresh.iter().zip(one).skip(1).all(|(a, b)| (a / b - 1.0).abs() > 1e-10), "control: the readings differ");
    }

    /// A covariance that is not positive semidefinite beyond rounding makes the whole run NaN.
    #[test]
    fn moments_that_lost_their_accuracy_give_no_values() {
        let mut m = Moments::point(DVector::from_vec(vec![1.0, 2.0]));
        assert!(m.covariance_is_psd(), "a point mass");
        m.cov = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
        assert!(!m.covariance_is_psd(), "eigenvalue -1");
        m.cov = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -1e-12]);
        assert!(m.covariance_is_psd(), "control: rounding below the second moment's scale");
        m.cov[(0, 0)] = f64::NAN;
        assert!(!m.covariance_is_psd(), "NaN");
    }

    /// A negative expected square is the moments' loss of accuracy, never a number.
    #[test]
    fn a_negative_expected_square_is_nan() {
        assert!(non_negative(-1e-300).is_nan() && non_negative(f64::NAN).is_nan());
        assert_eq!(non_negative(0.0), 0.0);
        assert_eq!(non_negative(2.5), 2.5);
    }

    #[test]
    fn declared_reads_give_the_maps_of_the_bisection_with_fewer_runs() {
        let inst = ModelSpec { m: 4, n: 6, d: 3, r: 0.3, l: 1.0, noise: 0.5, center: 1.0, seed: 2, features: Default::default() }.instance(0).unwrap();
        let params = Params { lambda: 0.8, gamma: 0.9, eta: 0.2, k: 3 };
        let rounds: [(&str, &dyn RandomAffineRound); 2] =
            [("Algorithm 1", &Alg1Round { inst: &inst, params }), ("the server step", &ServerStep { inst: &inst, params })];
        for (name, round) in rounds {
            let [(declared, fewer), (bisected, more)] = probed_with_and_without_reads(round);
            assert_eq!(declared, bisected, "{name}");
            assert!(fewer < more, "{name}: the declaration is taken ({fewer} runs against {more})");
        }
    }
}
