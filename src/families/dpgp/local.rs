//! What Lemmas 1 and 2 and the push-sum bound (15) read in a round of DFedPGP.
//!
//! - Lemma 1 (004:L478-495): client `i`'s v-drift `E||v_i^{t,k} - v_i^t||^2`, `k = 1..=K_v`, and
//!   its v-gradient at the start of the phase, `E||grad_v F_i(z_i^t, v_i^t)||^2`.
//! - Lemma 2 (004:L498-518): the u-drift averaged over clients, `(1/m) sum_i E||u_i^{t,k} -
//!   u_i^t||^2`, `k = 1..=K_u`, and `(1/m) sum_i E||grad_u F(z_i^t, V^{t+1})||^2`.
//! - (15) (004:L532): on one path, `||ubar^t - z_i^t||` and node `i`'s summed stochastic
//!   u-gradients of the round, `||sum_k grad_u F_i(z_i^{t,k}, v_i^{t+1}; xi_i)||`.
//! - (26) and (31) (004:L597-602, L632): the objective between the round's v-step and its
//!   u-step, `E F(ubar^t, V^{t+1})`, where (20) splits the round's change (004:L563).
//!
//! Every quantity is affine in the round's state and its Gaussian noise, so the expectations are
//! exact from the state's moments ([`LocalMaps`]); a sampled path gives the realised values
//! ([`realised`]).

use nalgebra::{DMatrix, DVector};

use crate::engine::{Moments, Observable};

use super::phase::{local_iterates, Layout, LocalIterates, Params, RoundAffine};
#[cfg(test)]
use super::phase_map::phase_maps;
use super::phase_map::{add_client_block, PhaseMap};
use super::problem::Instance;

/// Lemma 1's and Lemma 2's sides at one round (exact expectations, or the values of one path).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalRound {
    /// `E||v_i^{t,k} - v_i^t||^2` at index `i K_v + k - 1`, `k = 1..=K_v`.
    pub v_drift: Vec<f64>,
    /// `E||grad_v F_i(z_i^t, v_i^t)||^2` per client `i`.
    pub v_grad: Vec<f64>,
    /// `(1/m) sum_i E||u_i^{t,k} - u_i^t||^2` at index `k - 1`, `k = 1..=K_u`.
    pub u_drift: Vec<f64>,
    /// `(1/m) sum_i E||grad_u F(z_i^t, V^{t+1})||^2`.
    pub u_grad: f64,
    /// `E F(ubar^t, V^{t+1})`, `ubar^t = (1/m) sum_i u_i^t`: the objective after the round's
    /// v-step and before its u-step (004:L563), in the convention of the trajectory's
    /// `E F(ubar^t, V^t)` (`F(x) = x^T H x / 2 - g^T x`, [`Instance::joint`]).
    pub objective_mid: f64,
    /// `E F(ubar^t, V^{t+1}) - F*`, the expected square of `R (x - x*)` itself: accurate relative to
    /// itself near the optimum (`objective_mid` is `F*` plus it).
    pub suboptimality_mid: f64,
}

/// `F(x) = ||R (x - x*)||^2 + F*` over `x = [u; v_1; ...; v_m]` with `R = L^T / sqrt(2)`, `H = L
/// L^T` the joint Hessian's Cholesky factor and `x* = H^{-1} g` (`F* = -g^T x* / 2`): the form
/// that makes `E F(ubar^t, V^{t+1})` the expected square of a vector affine in the round's state
/// and noise. NaN throughout when `H` is not positive definite (no instance whose constants exist).
struct SquareRoot {
    root: DMatrix<f64>,
    x_star: DVector<f64>,
    f_star: f64,
}

impl SquareRoot {
    fn of(inst: &Instance) -> Self {
        match inst.minimizer_with_factor() {
            Some((x_star, f_star, l)) => Self { root: l.transpose() * std::f64::consts::FRAC_1_SQRT_2, f_star, x_star },
            None => {
                let n = inst.du + inst.m() * inst.dv;
                Self { root: DMatrix::from_element(n, n, f64::NAN), x_star: DVector::from_element(n, f64::NAN), f_star: f64::NAN }
            }
        }
    }
}

/// (15)'s quantities at one round of one path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathRound {
    /// `||ubar^t - z_i^t||` per node, `ubar^t = (1/m) sum_j u_j^t`, `z_i^t = u_i^t / mu_i^t`.
    pub deviation: Vec<f64>,
    /// `||sum_{k < K_u} grad_u F_i(z_i^{t,k}, v_i^{t+1}; xi_i)||` per node: its own stochastic
    /// gradients of the round.
    pub gradient_sum: Vec<f64>,
}

/// Offsets of the blocks of [`local_vector`].
#[derive(Clone, Copy)]
struct Blocks {
    m: usize,
    du: usize,
    dv: usize,
    k_u: usize,
    k_v: usize,
    /// `F*` of [`SquareRoot`].
    f_star: f64,
}

impl Blocks {
    fn new(inst: &Instance, p: &Params, f_star: f64) -> Self {
        Self { m: inst.m(), du: inst.du, dv: inst.dv, k_u: p.k_u, k_v: p.k_v, f_star }
    }
    /// `v_i^{t,k} - v_i^t`, `k >= 1`.
    fn v_drift(&self, i: usize, k: usize) -> usize {
        (i * self.k_v + k - 1) * self.dv
    }
    /// `grad_v F_i(z_i^t, v_i^t)`.
    fn v_grad(&self, i: usize) -> usize {
        (self.m * self.k_v + i) * self.dv
    }
    /// `u_i^{t,k} - u_i^t`, `k >= 1`.
    fn u_drift(&self, i: usize, k: usize) -> usize {
        self.m * (self.k_v + 1) * self.dv + (i * self.k_u + k - 1) * self.du
    }
    /// `(1/m) sum_j grad_u F_j(z_i^t, v_j^{t+1})`.
    fn u_grad(&self, i: usize) -> usize {
        self.m * (self.k_v + 1) * self.dv + (self.m * self.k_u + i) * self.du
    }
    /// `R ([ubar^t; V^{t+1}] - x*)` of [`SquareRoot`].
    fn mid(&self) -> usize {
        self.m * (self.k_v + 1) * self.dv + self.m * (self.k_u + 1) * self.du
    }
    /// Length of [`Blocks::mid`]'s block.
    fn joint(&self) -> usize {
        self.du + self.m * self.dv
    }
    fn len(&self) -> usize {
        self.mid() + self.joint()
    }

    /// The sides from the squared norms of the blocks, `sq(offset, length)`.
    fn assemble(&self, sq: &dyn Fn(usize, usize) -> f64) -> LocalRound {
        let (m, du, dv) = (self.m, self.du, self.dv);
        let mean = |x: f64| x / m as f64;
        LocalRound {
            v_drift: (0..m).flat_map(|i| (1..=self.k_v).map(move |k| (i, k))).map(|(i, k)| sq(self.v_drift(i, k), dv)).collect(),
            v_grad: (0..m).map(|i| sq(self.v_grad(i), dv)).collect(),
            u_drift: (1..=self.k_u).map(|k| mean((0..m).map(|i| sq(self.u_drift(i, k), du)).sum())).collect(),
            u_grad: mean((0..m).map(|i| sq(self.u_grad(i), du)).sum()),
            objective_mid: sq(self.mid(), self.joint()) + self.f_star,
            suboptimality_mid: sq(self.mid(), self.joint()),
        }
    }
}

/// Every client's local phase at state `z` with the round's standard normals `noise`.
fn phases(inst: &Instance, p: &Params, weights: &DVector<f64>, z: &DVector<f64>, noise: &[f64]) -> Vec<LocalIterates> {
    let lay = Layout::of(inst);
    let per = lay.noise_len(p);
    (0..lay.m)
        .map(|i| {
            let u0 = z.rows(lay.u(i), lay.du).into_owned();
            local_iterates(inst, p, i, weights[i], &u0, &z.rows(lay.v(i), lay.dv).into_owned(), &noise[i * per..(i + 1) * per])
        })
        .collect()
}

/// The blocks of [`Blocks`] at state `z` and noise `noise`: the drifts, `grad_v F_i(z_i^t,
/// v_i^t)`, `grad_u F(z_i^t, V^{t+1})` and `R ([ubar^t; V^{t+1}] - x*)`.
fn local_vector(inst: &Instance, p: &Params, root: &SquareRoot, weights: &DVector<f64>, z: &DVector<f64>, noise: &[f64]) -> DVector<f64> {
    let b = Blocks::new(inst, p, root.f_star);
    let ph = phases(inst, p, weights, z, noise);
    let mut out = DVector::zeros(b.len());
    let mut x = DVector::zeros(b.joint());
    for (i, it) in ph.iter().enumerate() {
        let mut u = x.rows_mut(0, b.du);
        u += &it.u[0] / b.m as f64;
        x.rows_mut(b.du + i * b.dv, b.dv).copy_from(&it.v[b.k_v]);
    }
    out.rows_mut(b.mid(), b.joint()).copy_from(&(&root.root * (x - &root.x_star)));
    let mut grad = vec![0.0; b.du];
    for (i, (c, it)) in inst.clients.iter().zip(&ph).enumerate() {
        let z_i = &it.u[0] / weights[i];
        for k in 1..=b.k_v {
            out.rows_mut(b.v_drift(i, k), b.dv).copy_from(&(&it.v[k] - &it.v[0]));
        }
        out.rows_mut(b.v_grad(i), b.dv).copy_from(&c.grad_v(&z_i, &it.v[0]));
        for k in 1..=b.k_u {
            out.rows_mut(b.u_drift(i, k), b.du).copy_from(&(&it.u[k] - &it.u[0]));
        }
        // (1/m) sum_j grad_u F_j(z_i, v_j^K), summed in client order ([`Client::grad_u_into`]: the bits of `grad_u`).
        let mut global = out.rows_mut(b.u_grad(i), b.du);
        global.fill(0.0);
        for (cj, jt) in inst.clients.iter().zip(&ph) {
            cj.grad_u_into(z_i.as_slice(), jt.v[b.k_v].as_slice(), &mut grad);
            global.iter_mut().zip(&grad).for_each(|(a, g)| *a += g);
        }
        global /= b.m as f64;
    }
    out
}

/// `local_vector` as an affine map of the state and the noise, formed once for a round's
/// weights `mu^t` and steps from the clients' phase maps ([`PhaseMap`]).
pub struct LocalMaps {
    maps: RoundAffine,
    blocks: Blocks,
}

impl LocalMaps {
    /// The maps for weights `weights`, from the clients' phase maps `phases` at those weights
    /// ([`super::phase_map::phase_maps`]): with `z_i = u_i^t / mu_i`, `Abar`, `abar` the clients'
    /// means and the iterates' maps from [`PhaseMap`],
    ///
    /// ```text
    /// v-drift  v_i^{t,k} - v_i^t                   u-drift  u_i^{t,k} - u_i^t
    /// v-grad   B_i^T z_i + D_i v_i^t - b_i         u-grad   Abar z_i + (1/m) sum_j B_j v_j^{t+1} - abar
    /// mid      root (x - x*),  x = [(1/m) sum_j u_j^t; v_1^{t+1}; ...; v_m^{t+1}]
    /// ```
    pub fn of(inst: &Instance, p: &Params, weights: &DVector<f64>, phases: &[PhaseMap]) -> Self {
        let lay = Layout::of(inst);
        let (m, du, dv, per) = (lay.m, lay.du, lay.dv, lay.noise_len(p));
        let root = SquareRoot::of(inst);
        let b = Blocks::new(inst, p, root.f_star);
        let cols = du + dv + per;
        let (mut state, mut noise, mut offset) = (DMatrix::zeros(b.len(), lay.dim()), DMatrix::zeros(b.len(), m * per), DVector::zeros(b.len()));
        let (a_bar, lin_bar) = inst.mean_u_terms();
        // `(1/m) sum_j B_j v_j^{t+1}`: one block per client, and the constant.
        let coupled: Vec<DMatrix<f64>> = phases.iter().zip(&inst.clients).map(|(ph, c)| &c.b * &ph.v_next().map / m as f64).collect();
        let mean = |f: &dyn Fn(usize) -> DMatrix<f64>| (1..m).fold(f(0), |acc, j| acc + f(j)) / m as f64;
        let coupled_offset = mean(&|j| &inst.clients[j].b * DMatrix::from_column_slice(dv, 1, phases[j].v_next().offset.as_slice()));
        // `x` as [`Blocks::joint`] rows over every client's inputs.
        let mut x = DMatrix::zeros(b.joint(), m * cols);
        let mut x_offset = DVector::zeros(b.joint());
        for (i, (c, ph)) in inst.clients.iter().zip(phases).enumerate() {
            let mu = weights[i];
            let mut put = |r: usize, block: &DMatrix<f64>, constant: &DVector<f64>| {
                add_client_block(&lay, per, i, r, block, &mut state, &mut noise);
                offset.rows_mut(r, constant.len()).copy_from(constant);
            };
            for k in 1..=p.k_v {
                put(b.v_drift(i, k), &(&ph.v[k].map - &ph.v[0].map), &(&ph.v[k].offset - &ph.v[0].offset));
            }
            let mut grad_v = DMatrix::zeros(dv, cols);
            grad_v.columns_mut(0, du).copy_from(&(c.b.transpose() / mu));
            grad_v.columns_mut(du, dv).copy_from(&c.d);
            put(b.v_grad(i), &grad_v, &-&c.lin_v);
            for k in 1..=p.k_u {
                put(b.u_drift(i, k), &(&ph.u[k].map - &ph.u[0].map), &(&ph.u[k].offset - &ph.u[0].offset));
            }
            let mut own = DMatrix::zeros(du, cols);
            own.columns_mut(0, du).copy_from(&(&a_bar / mu));
            put(b.u_grad(i), &own, &(coupled_offset.column(0) - &lin_bar));
            for (j, block) in coupled.iter().enumerate() {
                add_client_block(&lay, per, j, b.u_grad(i), block, &mut state, &mut noise);
            }
            for q in 0..du {
                x[(q, i * cols + q)] = 1.0 / m as f64;
            }
            x.view_mut((du + i * dv, i * cols), (dv, cols)).copy_from(&ph.v_next().map);
            x_offset.rows_mut(du + i * dv, dv).copy_from(&ph.v_next().offset);
        }
        let mid = &root.root * x;
        for j in 0..m {
            add_client_block(&lay, per, j, b.mid(), &mid.columns(j * cols, cols).into_owned(), &mut state, &mut noise);
        }
        offset.rows_mut(b.mid(), b.joint()).copy_from(&(&root.root * (x_offset - &root.x_star)));
        Self { maps: RoundAffine { state: Observable::new(state, offset), noise }, blocks: b }
    }

    /// The exact expectations under the state moments `m`.
    pub fn expected(&self, m: &Moments) -> LocalRound {
        self.blocks.assemble(&|r, len| self.maps.block_square(m, r, len))
    }
}

/// The values of one path at state `z` with the round's standard normals `noise`.
pub fn realised(inst: &Instance, p: &Params, weights: &DVector<f64>, z: &DVector<f64>, noise: &[f64]) -> LocalRound {
    let root = SquareRoot::of(inst);
    let x = local_vector(inst, p, &root, weights, z, noise);
    Blocks::new(inst, p, root.f_star).assemble(&|r, len| x.rows(r, len).norm_squared())
}

/// (15)'s quantities at state `z` with the round's standard normals `noise` (zeros on the
/// noiseless path, which is the mean of the exact run).
pub fn path_round(inst: &Instance, p: &Params, weights: &DVector<f64>, z: &DVector<f64>, noise: &[f64]) -> PathRound {
    let lay = Layout::of(inst);
    let ubar = (0..lay.m).fold(DVector::zeros(lay.du), |acc, i| acc + z.rows(lay.u(i), lay.du)) / lay.m as f64;
    let ph = phases(inst, p, weights, z, noise);
    PathRound {
        deviation: (0..lay.m).map(|i| (&ubar - z.rows(lay.u(i), lay.du) / weights[i]).norm()).collect(),
        gradient_sum: ph.iter().map(|it| it.u_gradient_sum.norm()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::dpgp::phase::NoiseDraws;
    use crate::families::dpgp::phase_map::tests::instance;

    #[test]
    fn the_local_maps_give_the_local_vector_of_the_phases() {
        let inst = instance();
        let lay = Layout::of(&inst);
        let root = SquareRoot::of(&inst);
        let weights = DVector::from_fn(lay.m, |i, _| 0.5 + 0.35 * i as f64);
        for draws in [NoiseDraws::PerStep, NoiseDraws::PerRound] {
            let p = Params { eta_u: 0.05, eta_v: 0.09, k_u: 3, k_v: 2, noise_draws: draws };
            let noise_len = lay.m * lay.noise_len(&p);
            let at = |probe: &LocalMaps, z: &DVector<f64>, xi: &[f64]| {
                probe.maps.state.map() * z + probe.maps.state.offset() + &probe.maps.noise * DVector::from_column_slice(xi)
            };
            let maps = LocalMaps::of(&inst, &p, &weights, &phase_maps(&inst, &p, &weights));
            for seed in 0..3 {
                let z = DVector::from_fn(lay.dim(), |r, _| ((r * 5 + seed * 3) % 13) as f64 / 6.0 - 1.0);
                let xi: Vec<f64> = (0..noise_len).map(|l| ((l * 7 + seed) % 9) as f64 / 4.0 - 1.0).collect();
                let direct = local_vector(&inst, &p, &root, &weights, &z, &xi);
                let mapped = at(&maps, &z, &xi);
                let b = maps.blocks;
                let mut blocks = vec![(b.mid(), b.joint())];
                for i in 0..lay.m {
                    blocks.extend((1..=p.k_v).map(|k| (b.v_drift(i, k), lay.dv)));
                    blocks.extend((1..=p.k_u).map(|k| (b.u_drift(i, k), lay.du)));
                    blocks.extend([(b.v_grad(i), lay.dv), (b.u_grad(i), lay.du)]);
                }
                for (r, len) in blocks {
                    let gap = (mapped.rows(r, len) - direct.rows(r, len)).norm() / direct.rows(r, len).norm();
                    assert!(gap <= 1e-12, "{draws:?}, seed {seed}, rows {r}..{}: {gap:e}", r + len);
                }
                // Negative control: the maps of other weights give another vector.
                let moved = &weights * 1.01;
                let other = LocalMaps::of(&inst, &p, &moved, &phase_maps(&inst, &p, &moved));
                assert!((at(&other, &z, &xi) - &direct).norm() > 1e-6 * direct.norm());
            }
        }
    }
}
