//! The building blocks of a DFedPGP round (Algorithm 1, 004:L100): the steps, the flat state's
//! layout, a client's local phase, and vectors affine in a round's state and noise with their
//! exact second moments.

use nalgebra::{DMatrix, DVector};

use crate::engine::column_order::row_times;
use crate::engine::{Moments, Observable};

use super::problem::{Covariance, Instance};

/// Step sizes and local steps of Algorithm 1.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Params {
    /// `eta_u`.
    pub eta_u: f64,
    /// `eta_v`.
    pub eta_v: f64,
    /// `K_u`.
    pub k_u: usize,
    /// `K_v`.
    pub k_v: usize,
    /// How often a client draws its gradient noise (written only when not the default).
    #[serde(skip_serializing_if = "NoiseDraws::is_per_step")]
    pub noise_draws: NoiseDraws,
}

/// When a client draws the noise of its stochastic gradients within a round.
///
/// Algorithm 1 samples a batch `xi_i` once per round, before both phases (line 3, 004:L100), and
/// takes every local gradient with it; the proofs treat each local step's noise as fresh
/// (Lemmas 1 and 2 sum independent variances over the steps, 004:L478-518; CLAIMS.md DPGP-ALG).
/// With additive noise `S^{1/2} xi`, the per-round reading adds the same draw at every step: the
/// noise of a phase of `K` steps `x <- x - eta (H x + g + n_k)` is `-eta sum_k M^{K-1-k} n_k`,
/// `M = I - eta H`, of covariance `eta^2 sum_k M^{K-1-k} S M^{K-1-k}^T` with fresh draws and
/// `eta^2 (sum_k M^k) S (sum_k M^k)^T` with one draw; for `H = h` scalar and weights
/// `w_k = eta (1 - eta h)^k`, variances `(sum_k w_k^2) sigma^2` against `(sum_k w_k)^2 sigma^2`
/// (`K eta^2 sigma^2` against `K^2 eta^2 sigma^2` at `h = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NoiseDraws {
    /// Fresh noise at every local step, as the proofs read it (the default).
    #[default]
    PerStep,
    /// One draw per round for each phase (`dv` normals for the v-phase, `du` for the u-phase),
    /// reused at every local step: the listing's "sample a batch of local data xi_i" (line 3).
    PerRound,
}

impl NoiseDraws {
    /// Whether this is the default reading.
    pub fn is_per_step(&self) -> bool {
        *self == NoiseDraws::PerStep
    }

    /// The name in reports: `per-step` or `per-round`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoiseDraws::PerStep => "per-step",
            NoiseDraws::PerRound => "per-round",
        }
    }

    /// Local steps that draw their own noise out of `k`: `k`, or 1 when drawn once per round.
    pub(super) fn draws(self, k: usize) -> usize {
        match self {
            NoiseDraws::PerStep => k,
            NoiseDraws::PerRound => k.min(1),
        }
    }

    /// The draw local step `k` uses: `k`, or 0 when drawn once per round.
    pub(super) fn draw(self, k: usize) -> usize {
        match self {
            NoiseDraws::PerStep => k,
            NoiseDraws::PerRound => 0,
        }
    }
}

/// Offsets of the flat state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// Clients.
    pub m: usize,
    /// Shared dimension.
    pub du: usize,
    /// Personal dimension.
    pub dv: usize,
}

impl Layout {
    /// Of an instance.
    pub fn of(inst: &Instance) -> Self {
        Self { m: inst.m(), du: inst.du, dv: inst.dv }
    }
    /// Length of the state.
    pub fn dim(&self) -> usize {
        self.m * (self.du + self.dv) + self.du
    }
    /// Offset of `u_i`.
    pub fn u(&self, i: usize) -> usize {
        i * self.du
    }
    /// Offset of `v_i`.
    pub fn v(&self, i: usize) -> usize {
        self.m * self.du + i * self.dv
    }
    /// Offset of `ubar_prev`.
    pub fn ubar_prev(&self) -> usize {
        self.m * (self.du + self.dv)
    }
    /// Standard normals one client draws per round: `K_v dv` for the v-phase, then `K_u du`
    /// (`dv`, then `du`, when drawn once per round, [`NoiseDraws::PerRound`]).
    pub fn noise_len(&self, p: &Params) -> usize {
        p.noise_draws.draws(p.k_v) * self.dv + p.noise_draws.draws(p.k_u) * self.du
    }
    /// The initial state: `u_i^0` (zero as the proofs assume, 004:L554, unless an explicit
    /// instance gives it) and `v_i^0` of the instance, `ubar_prev = 0`.
    pub fn initial(&self, inst: &Instance) -> DVector<f64> {
        let mut z = DVector::zeros(self.dim());
        for (i, (u, v)) in inst.u0.iter().zip(&inst.v0).enumerate() {
            z.rows_mut(self.u(i), self.du).copy_from(u);
            z.rows_mut(self.v(i), self.dv).copy_from(v);
        }
        z
    }
}

/// Client `i`'s local phase of one round (Algorithm 1 lines 3-12, 004:L100) from `u_i^t = u0`,
/// `v_i^t = v0` with push-sum weight `mu = mu_i^t` and its standard normals `xi` (`K_v dv` for
/// the v-phase, then `K_u du`; one draw per phase under [`NoiseDraws::PerRound`]): with `z_i^t = u0 / mu`, `v <- v - eta_v (grad_v F_i(z_i^t, v) +
/// noise)` `K_v` times, then `u <- u - eta_u (grad_u F_i(u / mu, v_i^{t+1}) + noise)` `K_u` times.
/// Returns `v_i^{t+1}` and the u-iterates `u_i^{t,k}`, `k = 0..=K_u` (the last is the pushed
/// `u_i^{t+1/2}`).
pub fn local_phase(inst: &Instance, p: &Params, i: usize, mu: f64, u0: &DVector<f64>, v0: &DVector<f64>, xi: &[f64]) -> (DVector<f64>, Vec<DVector<f64>>) {
    let LocalIterates { mut v, u, .. } = local_iterates(inst, p, i, mu, u0, v0, xi);
    (v.pop().unwrap_or_else(|| v0.clone()), u)
}

/// Every iterate of client `i`'s local phase ([`local_phase`]).
pub struct LocalIterates {
    /// `v_i^{t,k}`, `k = 0..=K_v` (the last is `v_i^{t+1}`).
    pub v: Vec<DVector<f64>>,
    /// `u_i^{t,k}`, `k = 0..=K_u` (the last is `u_i^{t+1/2}`).
    pub u: Vec<DVector<f64>>,
    /// `sum_{k < K_u} (grad_u F_i(z_i^{t,k}, v_i^{t+1}) + noise)`: the stochastic gradients the
    /// u-phase applied, summed.
    pub u_gradient_sum: DVector<f64>,
}

/// The iterates of client `i`'s local phase, as [`local_phase`] computes them.
///
/// Each step is written entry by entry with the arithmetic of its vector form
/// `v - eta_v (B_i^T z + D_i v - b_i + noise)` and `u - eta_u (A_i u / mu + B_i v - a_i + noise)`:
/// the gradients from [`super::problem::Client::grad_v_into`] and
/// [`super::problem::Client::grad_u_into`] into one scratch, the noise row by row in nalgebra's
/// order ([`crate::engine::column_order`]), so no temporary vector is made and the bits are
/// those of the vector form with [`super::problem::noise`].
pub fn local_iterates(inst: &Instance, p: &Params, i: usize, mu: f64, u0: &DVector<f64>, v0: &DVector<f64>, xi: &[f64]) -> LocalIterates {
    let (du, dv) = (inst.du, inst.dv);
    let (su, sv) = (inst.sigma_u / (du as f64).sqrt(), inst.sigma_v / (dv as f64).sqrt());
    let c = &inst.clients[i];
    let z0: Vec<f64> = u0.iter().map(|u| u / mu).collect();
    let noise_entry = |covariance: Option<&Covariance>, xi: &[f64], scale: f64, row: usize| match covariance {
        Some(cov) => row_times(&cov.root, row, |c| xi[c]),
        None => xi[row] * scale,
    };
    let mut grad = vec![0.0; du.max(dv)];
    let mut vs = Vec::with_capacity(p.k_v + 1);
    vs.push(v0.clone());
    for k in 0..p.k_v {
        let r = p.noise_draws.draw(k);
        let xi_k = &xi[r * dv..(r + 1) * dv];
        let v = &vs[k];
        c.grad_v_into(&z0, v.as_slice(), &mut grad[..dv]);
        let next = DVector::from_fn(dv, |row, _| v[row] - (grad[row] + noise_entry(c.noise_v.as_ref(), xi_k, sv, row)) * p.eta_v);
        vs.push(next);
    }
    let v = &vs[p.k_v];
    let base = p.noise_draws.draws(p.k_v) * dv;
    let mut iterates: Vec<DVector<f64>> = Vec::with_capacity(p.k_u + 1);
    iterates.push(u0.clone());
    let mut u_gradient_sum = DVector::zeros(du);
    let mut point = vec![0.0; du];
    for k in 0..p.k_u {
        let r = p.noise_draws.draw(k);
        let xi_k = &xi[base + r * du..base + (r + 1) * du];
        let u = &iterates[k];
        point.iter_mut().zip(u.iter()).for_each(|(x, u)| *x = u / mu);
        c.grad_u_into(&point, v.as_slice(), &mut grad[..du]);
        let next = DVector::from_fn(du, |row, _| {
            let g = grad[row] + noise_entry(c.noise_u.as_ref(), xi_k, su, row);
            u_gradient_sum[row] += g;
            u[row] - g * p.eta_u
        });
        iterates.push(next);
    }
    LocalIterates { v: vs, u: iterates, u_gradient_sum }
}

/// A vector that is an affine function of a round's state and linear in its standard normals,
/// `z, xi -> M z + o + N xi`, with exact second moments of its blocks.
pub struct RoundAffine {
    /// `z -> M z + o` (the noise at 0).
    pub state: Observable,
    /// The noise's map `N`.
    pub noise: DMatrix<f64>,
}

impl RoundAffine {
    /// `E||x_r..x_{r+len}||^2` of the rows `r..r+len` under the state moments `m` and independent
    /// standard normals: `E||M_b z + o_b||^2 + ||N_b||_F^2`.
    pub fn block_square(&self, m: &Moments, r: usize, len: usize) -> f64 {
        self.state.rows_expected_square(r, len, m) + self.noise.rows(r, len).norm_squared()
    }
}
