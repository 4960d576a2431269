//! FedPLT (static partial training) as a pure round: the state `W^t`, the round's noise draws in,
//! `W^{t+1}` out.
//!
//! ```text
//! W_k^{t,0} = W^t,  W_k^{t,s+1} = W_k^{t,s} - eta_k (m_k .* grad l(W_k^{t,s}; xi_k^s)),  s < tau   (001:L57, eq. 4)
//! W^{t+1}   = W^t + psi .* sum_k c_k (m_k .* (W_k^{t,tau} - W^t))                             (001:L88-96)
//! ```
//!
//! with `grad l(W; xi) = H_k (W - a_k) + (sigma / sqrt(d)) xi` and the client's step
//! `eta_k = s_k eta^t` ([`Instance::client_step`]; `eta^t` itself without per-client factors); the
//! full-gradient variant (eq. 5, 001:L63) draws no noise. Every client takes part in every round, so the round is affine in
//! `(W^t, xi)` and a sum of per-client terms: the shared engine gives its exact moments.

use nalgebra::DVector;
use rand::Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use crate::engine::RandomAffineRound;
use crate::rng::StreamKey;

use super::problem::Instance;

/// Which local gradient a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LocalGradient {
    /// Minibatch SGD (eq. 4): the gradient plus noise of variance `sigma^2`.
    #[default]
    Sgd,
    /// Full local gradient (eq. 5): no noise.
    Full,
}

/// One FedPLT round at step `eta`.
#[derive(Debug, Clone, Copy)]
pub struct FedPltRound<'a> {
    /// The instance.
    pub instance: &'a Instance,
    /// The compensation vector `psi`.
    pub psi: &'a [f64],
    /// The step `eta^t` of this round; client `k` takes `eta_k = s_k eta^t` with the instance's
    /// step factors ([`Instance::client_step`]).
    pub eta: f64,
    /// Local steps `tau`.
    pub tau: usize,
    /// SGD or full gradient.
    pub gradient: LocalGradient,
}

impl FedPltRound<'_> {
    fn noisy(&self) -> bool {
        self.gradient == LocalGradient::Sgd && self.instance.sigma > 0.0
    }

    /// Client `k`'s local iterates `W_k^{t,0..=tau}` from `w` with its `tau d` noise values
    /// (ignored, and may be empty, for the full-gradient variant or `sigma = 0`).
    pub fn local_iterates(&self, k: usize, w: &DVector<f64>, noise: &[f64]) -> Vec<DVector<f64>> {
        let d = w.len();
        let scale = self.instance.sigma / (d as f64).sqrt();
        let mask = &self.instance.masks[k];
        let mut out = Vec::with_capacity(self.tau + 1);
        let mut x = w.clone();
        out.push(x.clone());
        for s in 0..self.tau {
            let mut g = self.instance.gradient(k, &x);
            match (&self.instance.noise, self.noisy()) {
                (_, false) => {}
                (None, true) => g.iter_mut().zip(&noise[s * d..(s + 1) * d]).for_each(|(gi, xi)| *gi += scale * xi),
                (Some(n), true) => g += &n[k].root * DVector::from_column_slice(&noise[s * d..(s + 1) * d]),
            }
            x -= g.component_mul(mask) * self.instance.client_step(k, self.eta);
            out.push(x.clone());
        }
        out
    }

    /// Draws the round's noise for client `k`: `tau d` standard normals from the stream
    /// `(seed, replicate, round, k)`.
    pub fn draw_noise(&self, k: usize, seed: u64, replicate: u64, round: u64) -> Vec<f64> {
        if !self.noisy() {
            return Vec::new();
        }
        let mut rng = StreamKey { seed, replicate, round, client: k as u64 }.rng(0);
        (0..self.tau * self.instance.dim()).map(|_| rng.sample(StandardNormal)).collect()
    }
}

impl RandomAffineRound for FedPltRound<'_> {
    fn state_dim(&self) -> usize {
        self.instance.dim()
    }
    fn components(&self) -> usize {
        self.instance.clients()
    }
    fn noise_per_component(&self) -> usize {
        if self.noisy() {
            self.tau * self.instance.dim()
        } else {
            0
        }
    }
    fn apply(&self, w: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64> {
        let len = self.noise_per_component();
        let mut update = DVector::zeros(w.len());
        for (j, &k) in active.iter().enumerate() {
            let last = self.local_iterates(k, w, &noise[j * len..(j + 1) * len]).pop().unwrap_or_else(|| w.clone());
            update += (last - w).component_mul(&self.instance.masks[k]) * self.instance.weights[k];
        }
        w + update.component_mul(&DVector::from_column_slice(self.psi))
    }
}
