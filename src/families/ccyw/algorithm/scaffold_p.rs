//! Scaffold-P, Algorithm 2 of Chen, Cao, Yuan, Wen (listing 002:L456-474; garbled in 000:L514-517,
//! see I-CCYW11).
//!
//! State `[u; v_1..v_n; c_1..c_n; c]` with control variates `c_i, c` in `R^{du}`. For each sampled
//! client, `K` local steps from `(u^t, v_i^t)` (lines 6-7):
//!
//! ```text
//! u_{i,k+1} = u_{i,k} - gamma_u (grad_u F(u_{i,k}, v_{i,k}; xi) - c_i^t + c^t)
//! v_{i,k+1} = v_{i,k} - gamma_v grad_v F(u_{i,k}, v_{i,k}; xi)
//! ```
//!
//! then `v_i^{t+1} = (1-eta_v) v_i^t + eta_v v_{i,K}` (line 9),
//! `c_i^{t+1} = c_i^t - c^t + (u^t - u_{i,K}) / (K gamma_u)` (line 10),
//! `u^{t+1} = (1-eta_u) u^t + (eta_u/m) sum_{i in S} u_{i,K}` (line 12) and
//! `c^{t+1} = c^t + (1/n) sum_{i in S} (c_i^{t+1} - c_i^t)` (line 13). Initialization (Input line):
//! `c_i^0 = (1/K) sum_k grad_u F(u^0, v_i^0; xi_{i,k}^{-1})`, `c^0 = (1/n) sum_i c_i^0`.
//! `dv = 0` gives Scaffold; `du = 0` with `K = 1`, `m = n` gives parallel SGD.

use nalgebra::DVector;

use super::{local_sgd, noisy_gradient, Algorithm, RoundDraws, RoundParams};
use crate::families::ccyw::problem::QuadraticInstance;

/// Scaffold-P with validated parameters (the same step sizes as FedAvg-P).
#[derive(Debug, Clone, Copy)]
pub struct ScaffoldP {
    /// The parameters.
    pub params: RoundParams,
}

impl ScaffoldP {
    fn c_offset(inst: &QuadraticInstance, i: usize) -> usize {
        let l = inst.layout();
        l.state_dim() + i * l.du
    }

    fn c_global_offset(inst: &QuadraticInstance) -> usize {
        let l = inst.layout();
        l.state_dim() + l.n * l.du
    }

    /// `c^t - c_i^t`, the correction of client `i`'s u-gradient (line 6).
    fn correction(inst: &QuadraticInstance, state: &DVector<f64>, i: usize) -> DVector<f64> {
        let du = inst.layout().du;
        state.rows(Self::c_global_offset(inst), du) - state.rows(Self::c_offset(inst, i), du)
    }
}

impl Algorithm for ScaffoldP {
    fn name(&self) -> &'static str {
        "Scaffold-P"
    }
    fn sampled_per_round(&self) -> usize {
        self.params.m
    }
    fn local_steps(&self) -> usize {
        self.params.k
    }
    fn kernel(&self, inst: &QuadraticInstance) -> Option<super::kernel::RoundKernel> {
        Some(super::kernel::RoundKernel::new(inst, super::kernel::KernelAlgorithm::ScaffoldP, self.params))
    }
    fn state_dim(&self, inst: &QuadraticInstance) -> usize {
        let l = inst.layout();
        l.state_dim() + (l.n + 1) * l.du
    }
    /// `u`, `v_i`, and the control variates of the correction `c^t - c_i^t` (line 6).
    fn client_reads(&self, inst: &QuadraticInstance, i: usize) -> Vec<usize> {
        let l = inst.layout();
        let own = (Self::c_offset(inst, i)..Self::c_offset(inst, i) + l.du).chain(Self::c_global_offset(inst)..Self::c_global_offset(inst) + l.du);
        l.local_coordinates(i).chain(own).collect()
    }
    fn random_initialization(&self) -> bool {
        true
    }
    fn initial_state(&self, inst: &QuadraticInstance, init: &RoundDraws) -> DVector<f64> {
        let l = inst.layout();
        let mut state = DVector::zeros(self.state_dim(inst));
        state.rows_mut(0, l.state_dim()).copy_from(inst.initial_state());
        let mut c_sum = DVector::zeros(l.du);
        for (j, &i) in init.sampled.iter().enumerate() {
            let x = inst.local_point(&state, i);
            let mut c_i = DVector::zeros(l.du);
            // A step whose normal vector is all zeros has the noiseless gradient: computed once
            // and added again (the same bits as computing it at every such step, since the
            // gradient skips zero normals), so the exact engine's unit-noise probes of the
            // initialization cost one gradient per client instead of `K`.
            let mut noiseless: Option<DVector<f64>> = None;
            for k in 0..self.params.k {
                let z = init.step_noise(j, k);
                if z.iter().all(|v| *v == 0.0) {
                    c_i += noiseless.get_or_insert_with(|| noisy_gradient(inst, i, &x, z)).rows(0, l.du);
                } else {
                    c_i += noisy_gradient(inst, i, &x, z).rows(0, l.du);
                }
            }
            c_i /= self.params.k as f64;
            c_sum += &c_i;
            state.rows_mut(Self::c_offset(inst, i), l.du).copy_from(&c_i);
        }
        state.rows_mut(Self::c_global_offset(inst), l.du).copy_from(&(c_sum / l.n as f64));
        state
    }
    fn visit_virtual_iterates(&self, inst: &QuadraticInstance, state: &DVector<f64>, i: usize, noise: &[f64], visit: &mut dyn FnMut(&DVector<f64>)) {
        let correction = Self::correction(inst, state, i);
        local_sgd(inst, &self.params, i, inst.local_point(state, i), Some(&correction), noise, visit);
    }
    fn round_visiting(&self, inst: &QuadraticInstance, state: &DVector<f64>, draws: &RoundDraws, visit: &mut dyn FnMut(usize, &DVector<f64>)) -> DVector<f64> {
        let l = inst.layout();
        let (du, dv, n) = (l.du, l.dv, l.n as f64);
        let p = &self.params;
        let c = state.rows(Self::c_global_offset(inst), du).into_owned();
        let mut next = state.clone();
        let mut u_sum = DVector::zeros(du);
        let mut c_delta = DVector::zeros(du);
        for (j, &i) in draws.sampled.iter().enumerate() {
            let c_i = state.rows(Self::c_offset(inst, i), du).into_owned();
            let correction = Self::correction(inst, state, i);
            let x = local_sgd(inst, p, i, inst.local_point(state, i), Some(&correction), draws.client_noise(j), |x| visit(j, x));
            let u_k = x.rows(0, du);
            u_sum += u_k - state.rows(0, du);
            let off = l.v_offset(i);
            // `v + eta_v (v_K - v)`, equal to line 9's `(1 - eta_v) v + eta_v v_K`, kept as a small
            // displacement so that a large eta_v does not cancel digits.
            let v_new = state.rows(off, dv) + (x.rows(du, dv) - state.rows(off, dv)) * p.eta_v;
            next.rows_mut(off, dv).copy_from(&v_new);
            let c_i_new = &c_i - &c + (state.rows(0, du) - u_k) / (p.k as f64 * p.gamma_u);
            c_delta += &c_i_new - &c_i;
            next.rows_mut(Self::c_offset(inst, i), du).copy_from(&c_i_new);
        }
        // Divide by m and n, never by |S|: the round stays a sum of per-client terms (Algorithm contract).
        // `u + (eta_u/m) sum_S (u_K - u)`: the listing's `(1 - eta_u) u + (eta_u/m) sum_S u_K` when
        // |S| = m, written with displacements because eta_u can be as large as T (Theorem 3.11),
        // where the listing's form cancels about log10(eta_u) digits.
        let u_new = state.rows(0, du) + u_sum * (p.eta_u / p.m as f64);
        next.rows_mut(0, du).copy_from(&u_new);
        next.rows_mut(Self::c_global_offset(inst), du).copy_from(&(c + c_delta / n));
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::ccyw::problem::{Coupling, InstanceSpec};

    /// The initialization as listed, one gradient per client and step.
    fn every_gradient(alg: &ScaffoldP, inst: &QuadraticInstance, init: &RoundDraws) -> DVector<f64> {
        let l = inst.layout();
        let mut state = DVector::zeros(alg.state_dim(inst));
        state.rows_mut(0, l.state_dim()).copy_from(inst.initial_state());
        let mut c_sum = DVector::zeros(l.du);
        for (j, &i) in init.sampled.iter().enumerate() {
            let x = inst.local_point(&state, i);
            let mut c_i = DVector::zeros(l.du);
            for k in 0..alg.params.k {
                c_i += noisy_gradient(inst, i, &x, init.step_noise(j, k)).rows(0, l.du);
            }
            c_i /= alg.params.k as f64;
            c_sum += &c_i;
            state.rows_mut(ScaffoldP::c_offset(inst, i), l.du).copy_from(&c_i);
        }
        state.rows_mut(ScaffoldP::c_global_offset(inst), l.du).copy_from(&(c_sum / l.n as f64));
        state
    }

    #[test]
    fn the_initialization_reuses_the_noiseless_gradient_with_the_same_bits() {
        let inst =
            InstanceSpec { n: 4, du: 3, dv: 2, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.4, b: 1.0, coupling: Coupling::Coupled, init_distance: 3.0, seed: 8 }
                .build()
                .unwrap();
        let params = RoundParams { n: 4, k: 5, m: 3, gamma_u: 0.05, gamma_v: 0.08, eta_u: 1.5, eta_v: 0.9 };
        let alg = ScaffoldP { params };
        let bits = |v: &DVector<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let drawn = RoundDraws::initialization(&inst, params.k, 2, 0);
        let len = drawn.noise.len();
        // Every draw, none, one unit normal (the exact engine's probes), and draws with the steps
        // of every other client and step set to zero (and one to -0).
        let mut cases = vec![drawn.noise.clone(), vec![0.0; len]];
        for l in [0, 7, len - 1] {
            let mut unit = vec![0.0; len];
            unit[l] = 1.0;
            cases.push(unit);
        }
        let mut holes = drawn.noise.clone();
        for (s, step) in holes.chunks_mut(inst.layout().local_dim()).enumerate().filter(|(s, _)| s % 2 == 0) {
            step.fill(if s == 4 { -0.0 } else { 0.0 });
        }
        cases.push(holes);
        for noise in cases {
            let init = RoundDraws { noise, ..drawn.clone() };
            let got = alg.initial_state(&inst, &init);
            assert_eq!(bits(&got), bits(&every_gradient(&alg, &inst, &init)));
            // Negative control: the listing's order with the steps' gradients summed backwards
            // gives other bits on the drawn noise (the comparison sees the order).
            if init.noise == drawn.noise {
                let mut backwards = init.clone();
                for j in 0..backwards.sampled.len() {
                    let len = params.k * inst.layout().local_dim();
                    let client = &mut backwards.noise[j * len..(j + 1) * len];
                    let steps: Vec<f64> = client.chunks(inst.layout().local_dim()).rev().flatten().copied().collect();
                    client.copy_from_slice(&steps);
                }
                assert_ne!(bits(&got), bits(&every_gradient(&alg, &inst, &backwards)));
            }
        }
    }
}
