//! A client's local phase (Algorithm 1 lines 3-12, 004:L100) as exact affine maps of its inputs.
//!
//! Client `i`'s phase reads its own `u_i^t`, `v_i^t` and standard normals `xi_i` only, and every
//! step is affine, so each iterate is `x = M [u_i^t; v_i^t; xi_i] + o` with the columns of `M`
//! ordered as [`PhaseMap::u0`], [`PhaseMap::v0`], [`PhaseMap::noise`]. With `z = u^t / mu`,
//! `S_v`, `S_u` the noise roots (the covariance's square root, or `sigma / sqrt(d)` times the
//! identity) and `xi_k` the normals local step `k` draws ([`super::phase::NoiseDraws`]):
//!
//! ```text
//! v^{k+1} = v^k - eta_v (B^T z + D v^k - b + S_v xi_k)          k < K_v
//!   M^v_{k+1} = (I - eta_v D) M^v_k - eta_v (B^T / mu) E_u - eta_v S_v E_{xi_k},   o^v_{k+1} = (I - eta_v D) o^v_k + eta_v b
//! u^{k+1} = u^k - eta_u (A u^k / mu + B v^{K_v} - a + S_u xi_k)  k < K_u
//!   M^u_{k+1} = (I - eta_u A / mu) M^u_k - eta_u B M^v_{K_v} - eta_u S_u E_{xi_k},   o^u_{k+1} = (I - eta_u A / mu) o^u_k - eta_u (B o^v_{K_v} - a)
//! ```
//!
//! with `E_u`, `E_{xi_k}` the selections of the input's `u^t` and `xi_k` entries. The maps are
//! formed from the instance's matrices, not by differencing runs at unit inputs, so a
//! coefficient carries no rounding of the run's other terms.

use nalgebra::{DMatrix, DVector};

use super::phase::{Layout, Params};
use super::problem::Instance;

/// `x = map [u0; v0; xi] + offset`.
#[derive(Debug, Clone)]
pub struct Affine {
    /// The linear part, one column per input.
    pub map: DMatrix<f64>,
    /// The value at zero input.
    pub offset: DVector<f64>,
}

impl Affine {
    /// The value at the inputs `input = [u0; v0; xi]`.
    pub fn at(&self, input: &DVector<f64>) -> DVector<f64> {
        &self.map * input + &self.offset
    }
}

/// Client `i`'s local phase as affine maps of `[u_i^t; v_i^t; xi_i]`.
#[derive(Debug, Clone)]
pub struct PhaseMap {
    /// `v^{t,k}`, `k = 0..=K_v` (the last is `v_i^{t+1}`).
    pub v: Vec<Affine>,
    /// `u^{t,k}`, `k = 0..=K_u` (the last is the pushed `u_i^{t+1/2}`).
    pub u: Vec<Affine>,
    /// `du`.
    du: usize,
    /// `dv`.
    dv: usize,
}

impl PhaseMap {
    /// The maps of client `i`'s phase with push-sum weight `mu` and steps `p` (the module's
    /// recursions).
    pub fn of(inst: &Instance, p: &Params, i: usize, mu: f64) -> Self {
        let lay = Layout::of(inst);
        let (du, dv, per) = (lay.du, lay.dv, lay.noise_len(p));
        let cols = du + dv + per;
        let c = &inst.clients[i];
        let root = |cov: Option<&crate::explicit::Covariance>, d: usize, sigma: f64| match cov {
            Some(cov) => cov.root.clone(),
            None => DMatrix::identity(d, d) * (sigma / (d as f64).sqrt()),
        };
        let (s_v, s_u) = (root(c.noise_v.as_ref(), dv, inst.sigma_v), root(c.noise_u.as_ref(), du, inst.sigma_u));
        let b_t_over_mu = c.b.transpose() / mu;
        let step_v = DMatrix::identity(dv, dv) - &c.d * p.eta_v;
        let mut v0 = Affine { map: DMatrix::zeros(dv, cols), offset: DVector::zeros(dv) };
        v0.map.view_mut((0, du), (dv, dv)).fill_with_identity();
        let mut vs = Vec::with_capacity(p.k_v + 1);
        vs.push(v0);
        for k in 0..p.k_v {
            let v = &vs[k];
            let mut map = &step_v * &v.map;
            let mut from_u = map.columns_mut(0, du);
            from_u -= &b_t_over_mu * p.eta_v;
            let at = du + dv + p.noise_draws.draw(k) * dv;
            let mut from_xi = map.columns_mut(at, dv);
            from_xi -= &s_v * p.eta_v;
            let offset = &step_v * &v.offset + &c.lin_v * p.eta_v;
            vs.push(Affine { map, offset });
        }
        let v = &vs[p.k_v];
        let step_u = DMatrix::identity(du, du) - &c.a * (p.eta_u / mu);
        let base = p.noise_draws.draws(p.k_v) * dv;
        let from_v = Affine { map: &c.b * &v.map * p.eta_u, offset: (&c.b * &v.offset - &c.lin_u) * p.eta_u };
        let mut u0 = Affine { map: DMatrix::zeros(du, cols), offset: DVector::zeros(du) };
        u0.map.view_mut((0, 0), (du, du)).fill_with_identity();
        let mut u = Vec::with_capacity(p.k_u + 1);
        u.push(u0);
        for k in 0..p.k_u {
            let last = &u[k];
            let mut map = &step_u * &last.map - &from_v.map;
            let at = du + dv + base + p.noise_draws.draw(k) * du;
            let mut from_xi = map.columns_mut(at, du);
            from_xi -= &s_u * p.eta_u;
            let offset = &step_u * &last.offset - &from_v.offset;
            u.push(Affine { map, offset });
        }
        Self { v: vs, u, du, dv }
    }

    /// `v_i^{t+1}`.
    pub fn v_next(&self) -> &Affine {
        &self.v[self.v.len() - 1]
    }

    /// The columns of `u_i^t` in the input.
    pub fn u0(&self) -> std::ops::Range<usize> {
        0..self.du
    }

    /// The columns of `v_i^t` in the input.
    pub fn v0(&self) -> std::ops::Range<usize> {
        self.du..self.du + self.dv
    }

    /// The columns of `xi_i` in the input.
    pub fn noise(&self) -> std::ops::Range<usize> {
        self.du + self.dv..self.v[0].map.ncols()
    }
}

/// Every client's phase maps for the round's push-sum weights `weights` ([`PhaseMap::of`]).
pub fn phase_maps(inst: &Instance, p: &Params, weights: &DVector<f64>) -> Vec<PhaseMap> {
    (0..inst.m()).map(|i| PhaseMap::of(inst, p, i, weights[i])).collect()
}

/// Adds `block` (one column per input of client `j`'s phase, [`PhaseMap::u0`], [`PhaseMap::v0`],
/// [`PhaseMap::noise`]) at row `r` of a round's state map `state` (columns as [`Layout`]) and noise
/// map `noise` (client `j`'s normals at `j * noise_len`).
pub fn add_client_block(lay: &Layout, noise_len: usize, j: usize, r: usize, block: &DMatrix<f64>, state: &mut DMatrix<f64>, noise: &mut DMatrix<f64>) {
    let (du, dv, rows) = (lay.du, lay.dv, block.nrows());
    let mut s = state.view_mut((r, lay.u(j)), (rows, du));
    s += block.columns(0, du);
    let mut s = state.view_mut((r, lay.v(j)), (rows, dv));
    s += block.columns(du, dv);
    let mut s = noise.view_mut((r, j * noise_len), (rows, noise_len));
    s += block.columns(du + dv, noise_len);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::explicit::Covariance;
    use crate::families::dpgp::phase::{local_iterates, NoiseDraws};
    use crate::families::dpgp::problem::InstanceSpec;

    /// A coupled instance with client-specific curvature; client 1's noise anisotropic.
    pub(crate) fn instance() -> Instance {
        let spec = InstanceSpec {
            m: 4,
            du: 3,
            dv: 2,
            l_u: 2.0,
            mu_u: 0.5,
            l_v: 1.5,
            mu_v: 0.4,
            coupling: 0.7,
            client_curvature: 0.5,
            heterogeneity: 2.0,
            sigma_u: 0.5,
            sigma_v: 0.3,
            v0_norm: 1.0,
            seed: 5,
        };
        let mut inst = spec.build("instance").unwrap();
        inst.clients[1].noise_u = Some(Covariance::new(DMatrix::from_fn(3, 3, |r, c| if r == c { 0.3 + r as f64 * 0.1 } else { 0.05 })));
        inst.clients[1].noise_v = Some(Covariance::new(DMatrix::from_fn(2, 2, |r, c| if r == c { 0.2 } else { -0.04 })));
        inst
    }

    #[test]
    fn the_maps_give_the_iterates_of_the_phase() {
        let inst = instance();
        let lay = Layout::of(&inst);
        for draws in [NoiseDraws::PerStep, NoiseDraws::PerRound] {
            let p = Params { eta_u: 0.07, eta_v: 0.11, k_u: 3, k_v: 2, noise_draws: draws };
            let per = lay.noise_len(&p);
            for i in 0..lay.m {
                let mu = 0.6 + 0.3 * i as f64;
                let maps = PhaseMap::of(&inst, &p, i, mu);
                let input = DVector::from_fn(lay.du + lay.dv + per, |r, _| ((r * 7 + i * 3) % 11) as f64 / 5.0 - 1.0);
                let u0 = input.rows(0, lay.du).into_owned();
                let v0 = input.rows(lay.du, lay.dv).into_owned();
                let it = local_iterates(&inst, &p, i, mu, &u0, &v0, &input.as_slice()[lay.du + lay.dv..]);
                let close = |a: &DVector<f64>, b: &DVector<f64>| (a - b).norm() <= 1e-13 * b.norm();
                for k in 0..=p.k_v {
                    assert!(close(&maps.v[k].at(&input), &it.v[k]), "v^{k} of client {i}, {draws:?}");
                }
                for k in 0..=p.k_u {
                    assert!(close(&maps.u[k].at(&input), &it.u[k]), "u^{k} of client {i}, {draws:?}");
                }
                // Negative control: the map of another weight gives other iterates.
                let other = PhaseMap::of(&inst, &p, i, mu * 1.001);
                assert!(!close(&other.u[p.k_u].at(&input), &it.u[p.k_u]));
            }
        }
    }
}
