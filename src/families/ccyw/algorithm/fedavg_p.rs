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

use super::{local_sgd, Algorithm, RoundDraws, RoundParams};
use crate::families::ccyw::problem::QuadraticInstance;

/// FedAvg-P with validated parameters.
#[derive(Debug, Clone, Copy)]
pub struct FedAvgP {
    /// The parameters.
    pub params: RoundParams,
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
    fn kernel(&self, inst: &QuadraticInstance) -> Option<super::kernel::RoundKernel> {
        Some(super::kernel::RoundKernel::new(inst, super::kernel::KernelAlgorithm::FedAvgP, self.params))
    }
    fn visit_virtual_iterates(&self, inst: &QuadraticInstance, state: &DVector<f64>, i: usize, noise: &[f64], visit: &mut dyn FnMut(&DVector<f64>)) {
        local_sgd(inst, &self.params, i, inst.local_point(state, i), None, noise, visit);
    }
    fn round_visiting(&self, inst: &QuadraticInstance, state: &DVector<f64>, draws: &RoundDraws, visit: &mut dyn FnMut(usize, &DVector<f64>)) -> DVector<f64> {
        let layout = inst.layout();
        let (du, dv) = (layout.du, layout.dv);
        let p = &self.params;
        let mut next = state.clone();
        let mut u_sum = DVector::zeros(du);
        for (j, &i) in draws.sampled.iter().enumerate() {
            let x = local_sgd(inst, p, i, inst.local_point(state, i), None, draws.client_noise(j), |x| visit(j, x));
            u_sum += x.rows(0, du) - state.rows(0, du);
            let off = layout.v_offset(i);
            // `v + eta_v (v_K - v)`, equal to line 9's `(1 - eta_v) v + eta_v v_K`, kept as a small
            // displacement so that a large eta_v does not cancel digits.
            let v_new = state.rows(off, dv) + (x.rows(du, dv) - state.rows(off, dv)) * p.eta_v;
            next.rows_mut(off, dv).copy_from(&v_new);
        }
        // Divide by m, not |S|: equal in every real round, and it keeps the round a sum of per-client
        // terms for any subset, which the exact engine relies on (see `Algorithm`).
        // `u + (eta_u/m) sum_S (u_K - u)`: the listing's `(1 - eta_u) u + (eta_u/m) sum_S u_K` when
        // |S| = m, written with displacements because eta_u can be as large as T (Theorem 3.11),
        // where the listing's form cancels about log10(eta_u) digits.
        let u_new = state.rows(0, du) + u_sum * (p.eta_u / p.m as f64);
        next.rows_mut(0, du).copy_from(&u_new);
        next
    }
}
