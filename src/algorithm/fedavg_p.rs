//! FedAvg-P, Algorithm 1 of Chen, Cao, Yuan, Wen (listing 002:L122-138, prose 000:L92-96).
//!
//! For each sampled client `i in S^t`, starting from `(u^t, v_i^t)`, `K` local steps with the same
//! stochastic gradient for both blocks (lines 6-7):
//!
//! ```text
//! u_{i,k+1} = u_{i,k} - gamma_u grad_u F(u_{i,k}, v_{i,k}; xi_{i,k})
//! v_{i,k+1} = v_{i,k} - gamma_v grad_v F(u_{i,k}, v_{i,k}; xi_{i,k})
//! ```
//!
//! then (lines 9 and 11) `v_i^{t+1} = (1 - eta_v) v_i^t + eta_v v_{i,K}` and
//! `u^{t+1} = (1 - eta_u) u^t + (eta_u / m) sum_{i in S^t} u_{i,K}`; clients outside `S^t` keep `v_i`.
//! Reductions through the same code: `dv = 0` is FedAvg, `du = 0` with `K = 1`, `m = n` is
//! parallel SGD, `eta_u = eta_v = 1` is FedSim.

use nalgebra::DVector;

use super::{Algorithm, RoundDraws, RoundParams};
use crate::problem::QuadraticInstance;

/// FedAvg-P with validated parameters.
#[derive(Debug, Clone, Copy)]
pub struct FedAvgP {
    /// The parameters.
    pub params: RoundParams,
}

impl FedAvgP {
    /// Client `i`'s `K` local steps from `x = [u^t; v_i^t]`, with the `j`-th sampled client's
    /// noise of `draws` (lines 5-8). Returns `[u_{i,K}; v_{i,K}]`.
    pub fn local_run(&self, inst: &QuadraticInstance, i: usize, mut x: DVector<f64>, draws: &RoundDraws, j: usize) -> DVector<f64> {
        let du = inst.layout().du;
        let client = &inst.clients()[i];
        let factor = inst.noise_factor();
        let noiseless = inst.is_noiseless();
        let mut grad = DVector::zeros(x.len());
        for k in 0..self.params.k {
            grad.gemv(1.0, &client.hessian, &x, 0.0);
            grad -= &client.linear;
            if !noiseless {
                let z = nalgebra::DVectorView::from_slice(draws.step_noise(j, k), x.len());
                grad.gemv(1.0, factor, &z, 1.0);
            }
            let (gu, gv) = grad.as_slice().split_at(du);
            let (xu, xv) = x.as_mut_slice().split_at_mut(du);
            for (a, g) in xu.iter_mut().zip(gu) {
                *a -= self.params.gamma_u * g;
            }
            for (a, g) in xv.iter_mut().zip(gv) {
                *a -= self.params.gamma_v * g;
            }
        }
        x
    }
}

impl Algorithm for FedAvgP {
    fn name(&self) -> &'static str {
        "FedAvg-P"
    }
    fn sampled_per_round(&self) -> usize {
        self.params.m
    }
    fn local_steps(&self) -> usize {
        self.params.k
    }
    fn round(&self, inst: &QuadraticInstance, state: &DVector<f64>, draws: &RoundDraws) -> DVector<f64> {
        let layout = inst.layout();
        let (du, dv) = (layout.du, layout.dv);
        let p = &self.params;
        let mut next = state.clone();
        let mut u_sum = DVector::zeros(du);
        for (j, &i) in draws.sampled.iter().enumerate() {
            let x = self.local_run(inst, i, inst.local_point(state, i), draws, j);
            u_sum += x.rows(0, du);
            let off = layout.v_offset(i);
            let v_new = state.rows(off, dv) * (1.0 - p.eta_v) + x.rows(du, dv) * p.eta_v;
            next.rows_mut(off, dv).copy_from(&v_new);
        }
        // Divide by m, not |S|: equal in every real round, and it keeps the round a sum of per-client
        // terms for any subset, which the exact engine relies on (see `Algorithm`).
        let u_new = state.rows(0, du) * (1.0 - p.eta_u) + u_sum * (p.eta_u / p.m as f64);
        next.rows_mut(0, du).copy_from(&u_new);
        next
    }
}
