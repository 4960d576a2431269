//! Exact expectations of FedAvg-P and Scaffold-P: their rounds as random affine maps for the
//! shared engine ([`crate::engine`]), and the gradient metrics of Table 1 as observables.

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use crate::engine::column_order::{dot, entrywise_dot, norm_squared, product_of_slices, row_times, squared_distance};
use crate::engine::{affine_gaussian_moments, propagate_series, stationary_moments, InclusionMoments, Moments, RandomAffineRound, RoundMaps};
use crate::error::Result;

use super::algorithm::{Algorithm, RoundDraws};
use super::claims::Metric;
use super::problem::{GradientSummary, QuadraticInstance};

/// One round of `alg` on `inst` seen by the engine: the components are the clients, each active
/// client consumes `K (du + dv)` standard normal values, and the round is the algorithm's own
/// `round` (its contract is the engine's, [`Algorithm`]).
pub struct AlgorithmRound<'a> {
    /// The instance.
    pub instance: &'a QuadraticInstance,
    /// The algorithm.
    pub algorithm: &'a dyn Algorithm,
}

impl RandomAffineRound for AlgorithmRound<'_> {
    fn state_dim(&self) -> usize {
        self.algorithm.state_dim(self.instance)
    }
    fn components(&self) -> usize {
        self.instance.layout().n
    }
    fn noise_per_component(&self) -> usize {
        self.algorithm.local_steps() * self.instance.layout().local_dim()
    }
    fn reads(&self, i: usize) -> Option<Vec<usize>> {
        Some(self.algorithm.client_reads(self.instance, i))
    }
    fn apply(&self, state: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64> {
        let draws =
            RoundDraws { sampled: active.to_vec(), local_dim: self.instance.layout().local_dim(), steps: self.algorithm.local_steps(), noise: noise.to_vec() };
        self.algorithm.round(self.instance, state, &draws)
    }
}

/// Probes one round of `alg` on `inst` (see [`RoundMaps::probe`]).
pub fn probe_round(inst: &QuadraticInstance, alg: &dyn Algorithm) -> RoundMaps {
    RoundMaps::probe(&AlgorithmRound { instance: inst, algorithm: alg })
}

/// One client's gradient at its local point `x = [u; v_i]`: `grad f_i(x) = Q x + r`, probed
/// from `inst.local_gradient` (the same code the Monte Carlo path evaluates), with its
/// quadratic `f_i(x) = x^T H x / 2 - g^T x` for the objective.
struct ClientGradient {
    /// The state coordinates of `x`: `u`, then `v_i`.
    idx: Vec<usize>,
    q: DMatrix<f64>,
    r: DVector<f64>,
    hessian: DMatrix<f64>,
    linear: DVector<f64>,
}

/// The smallest dimension nalgebra multiplies as a blocked matrix product.
const GEMM_MIN: usize = 6;

/// The gradient maps of Table 1 by client, evaluated on the moments block by block.
///
/// With `M_i = [Q_i^uu, Q_i^uv]` client `i`'s `u`-gradient map on `(u, v_i)` and
/// `Mbar = [Mbar_S, B]` their mean (`Mbar_S = (1/n) sum_i Q_i^uu`, `B`'s block `i` is
/// `B_i = Q_i^uv / n`), every quantity but two reads one client's block `C_i` of the covariance:
/// `E||Q x_i + r||^2 = tr(Q C_i Q^T) + ||Q mu_i + r||^2`. The two that read every client,
/// `G_u = E||Mbar z + obar||^2` and the dissimilarity, go through one product
/// `V_o = C[:, v] B^T` (`D x du`, `du D^2` flops a round). The dissimilarity's map
/// `Mbar - M_i = -(a_i - b_i)` is split into `a_i` on `(u, v_i)` (`Q_i^uu - Mbar_S`, `Q_i^uv - B_i`)
/// and `b_i = B` without block `i`, on the other clients' `v_j`: disjoint supports, so
/// `tr(a_i C a_i^T) - 2 tr(a_i C b_i^T) + tr(b_i C b_i^T)` carries the rounding of the direct
/// sum of the products of `|a_i - b_i|` (no cancellation of large squares), with
/// `C b_i^T = V_o - C[:, v_i] B_i^T` and `tr(b_i C b_i^T) = tr(B V_o[v]) - 2 tr(B_i V_o[v_i]) +
/// tr(B_i C[v_i, v_i] B_i^T)`.
struct MetricMaps {
    clients: Vec<ClientGradient>,
    du: usize,
    /// `[u; v]`'s length: the metrics read this prefix of the state.
    base: usize,
    /// `Mbar_S` and `obar = (1/n) sum_i r_i^u`.
    mean_s: DMatrix<f64>,
    mean_r: DVector<f64>,
    /// `B^T` (`n dv x du`), with zero columns up to [`GEMM_MIN`].
    b_t: DMatrix<f64>,
    /// Each client's maps that do not change with the moments.
    fixed: Vec<FixedParts>,
}

/// Client `i`'s rows `Q_i^u = Q[:du, :]` and `Q_i^v = Q[du:, :]`, the dissimilarity's
/// `a_i = [Q_i^uu - Mbar_S, Q_i^uv - B_i]` and `B_i` (`du x dv`), formed once.
struct FixedParts {
    q_u: DMatrix<f64>,
    q_v: DMatrix<f64>,
    a: DMatrix<f64>,
    b_i: DMatrix<f64>,
}

impl MetricMaps {
    /// Probes `inst.local_gradient` at each client's local point.
    fn new(inst: &QuadraticInstance) -> Self {
        let layout = inst.layout();
        let (n, du, dv, p) = (layout.n, layout.du, layout.dv, layout.local_dim());
        let clients: Vec<ClientGradient> = (0..n)
            .map(|i| {
                let r = inst.local_gradient(i, &DVector::zeros(p));
                let cols: Vec<DVector<f64>> = (0..p)
                    .map(|j| {
                        let mut e = DVector::zeros(p);
                        e[j] = 1.0;
                        inst.local_gradient(i, &e) - &r
                    })
                    .collect();
                let q = if p == 0 { DMatrix::zeros(0, 0) } else { DMatrix::from_columns(&cols) };
                let idx = layout.local_coordinates(i).collect();
                let client = &inst.clients()[i];
                ClientGradient { idx, q, r, hessian: client.hessian.clone(), linear: client.linear.clone() }
            })
            .collect();
        let nf = n as f64;
        let mean_s = clients.iter().fold(DMatrix::zeros(du, du), |acc, c| acc + c.q.view((0, 0), (du, du))) / nf;
        let mean_r = clients.iter().fold(DVector::zeros(du), |acc, c| acc + c.r.rows(0, du)) / nf;
        let mut b_t = DMatrix::zeros(n * dv, du.max(GEMM_MIN));
        for (i, c) in clients.iter().enumerate() {
            b_t.view_mut((i * dv, 0), (dv, du)).copy_from(&(c.q.view((0, du), (du, dv)).transpose() / nf));
        }
        let fixed = clients
            .iter()
            .enumerate()
            .map(|(i, cl)| {
                let (q_u, q_v) = (cl.q.rows(0, du).into_owned(), cl.q.rows(du, dv).into_owned());
                let b_i_t = b_t.view((i * dv, 0), (dv, du));
                let mut a = q_u.clone();
                a.columns_mut(0, du).copy_from(&(q_u.columns(0, du) - &mean_s));
                a.columns_mut(du, dv).copy_from(&(q_u.columns(du, dv) - b_i_t.transpose()));
                FixedParts { q_u, q_v, a, b_i: b_i_t.transpose() }
            })
            .collect();
        Self { clients, du, base: layout.state_dim(), mean_s, mean_r, b_t, fixed }
    }

    fn summary(&self, m: &Moments) -> GradientSummary {
        let (du, base, n) = (self.du, self.base, self.clients.len() as f64);
        let o = base - du;
        let Shared { v_o, g_u, mean_g } = self.shared(m);
        let b = self.b_t.columns(0, du);
        let b_v_b = (0..du).map(|r| (0..o).map(|k| b[(k, r)] * v_o[(du + k, r)]).sum::<f64>()).sum::<f64>();
        let mut totals = [0.0; 4];
        let mut scratch = self.scratch();
        for (i, cl) in self.clients.iter().enumerate() {
            let parts = self.client_parts(i, cl, m, (&v_o, &mean_g, b_v_b), &mut scratch);
            for (t, x) in totals.iter_mut().zip(parts) {
                *t += x;
            }
        }
        let [b_sum, g_v, dissimilarity, objective] = totals;
        GradientSummary { g_u, g_v: g_v / n, dissimilarity: dissimilarity / n, b_sum, objective: objective / n }
    }

    /// `(G_u, G_v)` alone, what the claims' metrics read ([`Metric`]):
    /// the bits of [`Self::summary`]'s, without the dissimilarity, `b_sum` and the objective.
    fn shared_and_personal(&self, m: &Moments) -> (f64, f64) {
        let mut scratch = self.scratch();
        let g_v = self.clients.iter().enumerate().fold(0.0, |total, (i, cl)| total + self.client_g_v(i, cl, m, &mut scratch));
        (self.shared(m).g_u, g_v / self.clients.len() as f64)
    }

    /// The round's parts every metric reads: `V_o = C[:, v] B^T`, `G_u = tr(Mbar C Mbar^T) +
    /// ||E grad_u f||^2` (with `C Mbar^T = C[:, u] Mbar_S^T + V_o`) and `E grad_u f`.
    fn shared(&self, m: &Moments) -> Shared {
        let (du, base) = (self.du, self.base);
        let (c, mu) = (&m.cov, &m.mean);
        let o = base - du;
        let mut v_o = DMatrix::zeros(base, self.b_t.ncols());
        v_o.gemm(1.0, &c.view((0, du), (base, o)), &self.b_t, 0.0);
        let b = self.b_t.columns(0, du);
        let v = c.view((0, 0), (base, du)) * self.mean_s.transpose() + v_o.columns(0, du);
        let spread_u = (0..du)
            .map(|r| (0..du).map(|k| self.mean_s[(r, k)] * v[(k, r)]).sum::<f64>() + (0..o).map(|k| b[(k, r)] * v[(du + k, r)]).sum::<f64>())
            .sum::<f64>();
        let mean_g = &self.mean_s * mu.rows(0, du) + b.tr_mul(&mu.rows(du, o)) + &self.mean_r;
        Shared { g_u: spread_u + mean_g.norm_squared(), v_o, mean_g }
    }

    /// Buffers for the clients' parts, sized for the largest client.
    fn scratch(&self) -> ClientScratch {
        ClientScratch::new(self.du, self.clients.iter().map(|c| c.idx.len() - self.du).max().unwrap_or(0))
    }

    /// Client `i`'s block `C_i` and mean `x` of the moments into the scratch buffers.
    fn gather_client(cl: &ClientGradient, m: &Moments, c_i: &mut [f64], x: &mut [f64]) {
        let p = cl.idx.len();
        for (k, &col) in cl.idx.iter().enumerate() {
            for (r, &row) in cl.idx.iter().enumerate() {
                c_i[k * p + r] = m.cov[(row, col)];
            }
            x[k] = m.mean[col];
        }
    }

    /// Client `i`'s `E||grad_v f_i||^2 = tr(Q_v C_i Q_v^T) + ||Q_v x + r_v||^2`, as
    /// [`Self::client_parts`] computes it.
    fn client_g_v(&self, i: usize, cl: &ClientGradient, m: &Moments, w: &mut ClientScratch) -> f64 {
        let (du, p) = (self.du, cl.idx.len());
        let ClientScratch { c_i, x, g, prod, .. } = w;
        Self::gather_client(cl, m, c_i, x);
        for (r, g_r) in g.iter_mut().enumerate().take(p).skip(du) {
            *g_r = row_times(&cl.q, r, |c| x[c]) + cl.r[r];
        }
        spread(&self.fixed[i].q_v, &c_i[..p * p], prod) + norm_squared(&g[du..p])
    }

    /// Client `i`'s `||grad_u f_i||^2`, `||grad_v f_i||^2`, `||grad_u f_i - grad_u f||^2` and
    /// `f_i`, in expectation (see the type's note), with `(V_o, E grad_u f, tr(B V_o[v]))` of the
    /// round. Every product is summed in nalgebra's order ([`product_of_slices`], [`dot`]), in
    /// buffers kept across the clients: the bits of the matrix expressions
    /// `tr(Q C_i Q^T) = sum((Q C_i) .* Q)`, `tr(a_i C b_i^T)`, ... written with nalgebra (a test
    /// holds them to it).
    fn client_parts(
        &self,
        i: usize,
        cl: &ClientGradient,
        m: &Moments,
        (v_o, mean_g, b_v_b): (&DMatrix<f64>, &DVector<f64>, f64),
        w: &mut ClientScratch,
    ) -> [f64; 4] {
        let (du, p) = (self.du, cl.idx.len());
        let dv = p - du;
        let ClientScratch { c_i, x, g, hx, prod, b_i_t, c_b, small, v_own, c_own, dev } = w;
        Self::gather_client(cl, m, c_i, x);
        for r in 0..p {
            g[r] = row_times(&cl.q, r, |c| x[c]) + cl.r[r];
            hx[r] = row_times(&cl.hessian, r, |c| x[c]);
        }
        let mut spread = |q: &DMatrix<f64>| spread(q, &c_i[..p * p], prod);
        let FixedParts { q_u, q_v, a, b_i } = &self.fixed[i];
        let b_sum = spread(q_u) + norm_squared(&g[..du]);
        let g_v = spread(q_v) + norm_squared(&g[du..p]);
        let a_a = spread(a);
        let weighted = entrywise_dot(cl.hessian.as_slice(), &c_i[..p * p]);
        let objective = 0.5 * weighted + 0.5 * dot(&x[..p], &hx[..p]) - dot(cl.linear.as_slice(), &x[..p]);
        // a_i on (u, v_i); B_i^T; (C b_i^T)[idx] = V_o[idx] - C[idx, v_i] B_i^T.
        for r in 0..du {
            for k in 0..dv {
                b_i_t[r * dv + k] = self.b_t[(i * dv + k, r)];
            }
        }
        let c_b = &mut c_b[..p * du];
        product_of_slices(&c_i[du * p..p * p], (p, dv), &b_i_t[..dv * du], du, c_b);
        for (r, c_b) in c_b.chunks_exact_mut(p.max(1)).enumerate().take(du) {
            for (y, &row) in c_b.iter_mut().zip(&cl.idx) {
                *y = v_o[(row, r)] - *y;
            }
        }
        let trace = |t: &[f64]| (0..du).fold(0.0, |s, r| s + t[r * du + r]);
        product_of_slices(a.as_slice(), a.shape(), c_b, du, &mut small[..du * du]);
        let a_b = trace(small);
        for r in 0..du {
            for k in 0..dv {
                v_own[r * dv + k] = v_o[(cl.idx[du + k], r)];
            }
        }
        product_of_slices(b_i.as_slice(), b_i.shape(), &v_own[..dv * du], du, &mut small[..du * du]);
        let b_v_own = trace(small);
        for c in 0..dv {
            c_own[c * dv..(c + 1) * dv].copy_from_slice(&c_i[(du + c) * p + du..(du + c + 1) * p]);
        }
        product_of_slices(b_i.as_slice(), b_i.shape(), &c_own[..dv * dv], dv, &mut small[..du * dv]);
        let b_c_b = entrywise_dot(&small[..du * dv], b_i.as_slice());
        let b_b = b_v_b - 2.0 * b_v_own + b_c_b;
        let dev2 = squared_distance(&g[..du], mean_g.as_slice(), &mut dev[..du]);
        [b_sum, g_v, a_a - 2.0 * a_b + b_b + dev2, objective]
    }
}

/// The buffers of [`MetricMaps::client_parts`] for clients of `du + dv` local coordinates,
/// made once per round and reused by every client.
struct ClientScratch {
    c_i: Vec<f64>,
    x: Vec<f64>,
    g: Vec<f64>,
    hx: Vec<f64>,
    prod: Vec<f64>,
    b_i_t: Vec<f64>,
    c_b: Vec<f64>,
    small: Vec<f64>,
    v_own: Vec<f64>,
    c_own: Vec<f64>,
    dev: Vec<f64>,
}

impl ClientScratch {
    fn new(du: usize, dv: usize) -> Self {
        let p = du + dv;
        let zeros = |len: usize| vec![0.0; len];
        Self {
            c_i: zeros(p * p),
            x: zeros(p),
            g: zeros(p),
            hx: zeros(p),
            prod: zeros(p * p),
            b_i_t: zeros(dv * du),
            c_b: zeros(p * du),
            small: zeros(du * du.max(dv)),
            v_own: zeros(dv * du),
            c_own: zeros(dv * dv),
            dev: zeros(du),
        }
    }
}

/// `tr(Q C_i Q^T) = sum((Q C_i) .* Q)` for a client's `p x p` block `c_i` (column-major), with
/// `Q C_i` formed in `prod` in nalgebra's order.
fn spread(q: &DMatrix<f64>, c_i: &[f64], prod: &mut [f64]) -> f64 {
    let p = q.ncols();
    let out = &mut prod[..q.nrows() * p];
    product_of_slices(q.as_slice(), q.shape(), c_i, p, out);
    entrywise_dot(out, q.as_slice())
}

/// What every metric of a round reads ([`MetricMaps::shared`]).
struct Shared {
    v_o: DMatrix<f64>,
    g_u: f64,
    mean_g: DVector<f64>,
}

/// Exact expected gradient summaries of rounds `0..rounds`, with a PSD diagnostic.
#[derive(Debug, Clone, Serialize)]
pub struct ExactSeries {
    /// `E` of each [`GradientSummary`] field at the start of each round.
    #[serde(skip)]
    pub summaries: Vec<GradientSummary>,
    /// Smallest eigenvalue of the covariance `C` over the rounds inspected (every 25th
    /// and the last); a value below `-1e-9 * ||P||` means rounding has broken positive
    /// semidefiniteness.
    pub min_covariance_eigenvalue: f64,
    /// `||P||_max` at the last round, the scale for the diagnostic.
    pub second_moment_scale: f64,
}

/// The moments of the initial state: `z^0` itself, or, for an algorithm whose initialization
/// draws noise, `s0 + N xi` probed like a round (`mu = s0`, `C = N N^T`).
pub fn initial_moments(inst: &QuadraticInstance, alg: &dyn Algorithm) -> Moments {
    let layout = inst.layout();
    let (n, d, k) = (layout.n, layout.local_dim(), alg.local_steps());
    let draws = |noise: Vec<f64>| RoundDraws { sampled: (0..n).collect(), local_dim: d, steps: k, noise };
    let len = n * k * d;
    if alg.random_initialization() && !inst.is_noiseless() {
        affine_gaussian_moments(len, &|noise| alg.initial_state(inst, &draws(noise.to_vec())))
    } else {
        Moments::point(alg.initial_state(inst, &draws(vec![0.0; len])))
    }
}

/// Propagates the moments of `alg` on `inst` for `rounds` rounds.
pub fn exact_series(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, inc: &InclusionMoments) -> ExactSeries {
    let maps = probe_round(inst, alg);
    let metrics = MetricMaps::new(inst);
    // Metrics read the [u; v] prefix of the state (the Algorithm contract).
    let series = propagate_series(&maps, inc, initial_moments(inst, alg), rounds, |m| metrics.summary(m));
    ExactSeries { summaries: series.values, min_covariance_eigenvalue: series.min_covariance_eigenvalue, second_moment_scale: series.second_moment_scale }
}

/// The exact expected `metric` of rounds `0..rounds` (with `alg`'s `m` of the instance's `n`),
/// from `(G_u, G_v)`, all a metric reads: the bits of [`exact_series`]'s summaries, without the
/// rest of them (for runs that read a metric only: the search's candidates, the experiments'
/// curves).
pub fn exact_metric_series(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, inc: &InclusionMoments, metric: Metric) -> Vec<f64> {
    let maps = MetricMaps::new(inst);
    let (m, n) = (alg.sampled_per_round(), inst.layout().n);
    let observe = |moments: &Moments| {
        let (g_u, g_v) = maps.shared_and_personal(moments);
        metric.of(g_u, g_v, m, n)
    };
    propagate_series(&probe_round(inst, alg), inc, initial_moments(inst, alg), rounds, observe).values
}

/// Expected gradient summary at the steady state of `alg` on `inst` (see [`stationary_moments`]).
///
/// # Errors
/// As [`stationary_moments`]: a state too large for the steady state's system.
pub fn stationary_summary(inst: &QuadraticInstance, alg: &dyn Algorithm, inc: &InclusionMoments) -> Result<Option<GradientSummary>> {
    let maps = probe_round(inst, alg);
    let steady = stationary_moments(&maps, inc, &initial_moments(inst, alg))?;
    Ok(steady.map(|m| MetricMaps::new(inst).summary(&m)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::ccyw::problem::{Coupling, InstanceSpec};

    /// The metrics of a uniform mixture of `states`, averaged directly: every metric is a
    /// quadratic of the state, so the average is the metric of their moments.
    fn mixture(inst: &QuadraticInstance, states: &[DVector<f64>]) -> (Moments, [f64; 5]) {
        let k = states.len() as f64;
        let mean = states.iter().fold(DVector::zeros(states[0].len()), |a, z| a + z) / k;
        let cov = states.iter().fold(DMatrix::zeros(mean.len(), mean.len()), |a, z| a + (z - &mean) * (z - &mean).transpose()) / k;
        let mut avg = [0.0; 5];
        for z in states {
            let g = GradientSummary::at(inst, z);
            for (a, v) in avg.iter_mut().zip([g.g_u, g.g_v, g.dissimilarity, g.b_sum, g.objective]) {
                *a += v / k;
            }
        }
        (Moments::new(mean, cov), avg)
    }

    /// A generated instance of `n` clients (`b = 0` without shared coordinates).
    fn instance(n: usize, du: usize, dv: usize, coupling: Coupling, seed: u64) -> QuadraticInstance {
        let b = if du == 0 { 0.0 } else { 1.0 };
        InstanceSpec { n, du, dv, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b, coupling, init_distance: 3.0, seed }.build().unwrap()
    }

    /// `count` distinct states of length `dim`.
    fn states(dim: usize, count: usize) -> Vec<DVector<f64>> {
        (0..count).map(|s| DVector::from_fn(dim, |j, _| ((j * 7 + s * 13) % 11) as f64 / 5.0 - 1.0 + s as f64 * 0.1)).collect()
    }

    #[test]
    fn block_metrics_equal_the_average_over_a_mixture_of_states() {
        for (n, du, dv, coupling) in
            [(7, 3, 2, Coupling::Decoupled), (5, 2, 3, Coupling::Coupled), (4, 0, 2, Coupling::Decoupled), (6, 3, 0, Coupling::Decoupled)]
        {
            let inst = instance(n, du, dv, coupling, 5);
            let dim = inst.layout().state_dim();
            let states = states(dim, 9);
            let (m, truth) = mixture(&inst, &states);
            let maps = MetricMaps::new(&inst);
            let got = maps.summary(&m);
            let got = [got.g_u, got.g_v, got.dissimilarity, got.b_sum, got.objective];
            for (name, (g, t)) in ["g_u", "g_v", "dissimilarity", "b_sum", "objective"].iter().zip(got.iter().zip(truth)) {
                assert!((g - t).abs() <= 1e-12 * t.abs().max(1e-300), "n = {n}, du = {du}, dv = {dv}: {name} {g:e} vs {t:e}");
            }
            // Negative control: the moments of another mixture give other values.
            let (other, _) = mixture(&inst, &states[1..]);
            let moved = maps.summary(&other);
            assert!((moved.g_u - truth[0]).abs() > 1e-9 * truth[0] || du == 0, "n = {n}: g_u did not move");
            assert!((moved.objective - truth[4]).abs() > 1e-9 * truth[4].abs(), "n = {n}: the objective did not move");
        }
    }

    /// A client's parts as nalgebra's matrix expressions give them, the formulas of the type's
    /// note written directly.
    fn parts_by_nalgebra(maps: &MetricMaps, i: usize, m: &Moments, v_o: &DMatrix<f64>, mean_g: &DVector<f64>, b_v_b: f64) -> [f64; 4] {
        let (cl, du) = (&maps.clients[i], maps.du);
        let (p, dv) = (cl.idx.len(), cl.idx.len() - du);
        let c_i = DMatrix::from_fn(p, p, |r, k| m.cov[(cl.idx[r], cl.idx[k])]);
        let x = DVector::from_fn(p, |r, _| m.mean[cl.idx[r]]);
        let g = &cl.q * &x + &cl.r;
        let spread = |q: &DMatrix<f64>| (q * &c_i).component_mul(q).sum();
        let FixedParts { q_u, q_v, a, b_i } = &maps.fixed[i];
        let objective = 0.5 * cl.hessian.component_mul(&c_i).sum() + 0.5 * x.dot(&(&cl.hessian * &x)) - cl.linear.dot(&x);
        let b_i_t = maps.b_t.view((i * dv, 0), (dv, du));
        let c_b = DMatrix::from_fn(p, du, |r, k| v_o[(cl.idx[r], k)]) - c_i.columns(du, dv) * b_i_t;
        let v_own = DMatrix::from_fn(dv, du, |k, r| v_o[(cl.idx[du + k], r)]);
        let b_b = b_v_b - 2.0 * (b_i * v_own).trace() + (b_i * c_i.view((du, du), (dv, dv))).component_mul(b_i).sum();
        let dev = g.rows(0, du) - mean_g;
        [
            spread(q_u) + g.rows(0, du).norm_squared(),
            spread(q_v) + g.rows(du, dv).norm_squared(),
            spread(a) - 2.0 * (a * &c_b).trace() + b_b + dev.norm_squared(),
            objective,
        ]
    }

    #[test]
    fn client_parts_have_the_bits_of_the_matrix_expressions() {
        // Local dimensions of at most five (nalgebra's small products) and above (matrixmultiply).
        for (n, du, dv) in [(4, 2, 3), (3, 6, 7), (5, 3, 0), (4, 0, 3), (3, 7, 2)] {
            let inst = instance(n, du, dv, Coupling::Coupled, 9);
            let dim = inst.layout().state_dim();
            let states = states(dim, dim + 2);
            let (m, _) = mixture(&inst, &states);
            let maps = MetricMaps::new(&inst);
            let (base, o) = (maps.base, maps.base - du);
            let mut v_o = DMatrix::zeros(base, maps.b_t.ncols());
            v_o.gemm(1.0, &m.cov.view((0, du), (base, o)), &maps.b_t, 0.0);
            let mean_g = DVector::from_fn(du, |r, _| 0.3 * r as f64 - 0.1);
            let mut scratch = ClientScratch::new(du, dv);
            for (i, cl) in maps.clients.iter().enumerate() {
                let got = maps.client_parts(i, cl, &m, (&v_o, &mean_g, 0.7), &mut scratch);
                let want = parts_by_nalgebra(&maps, i, &m, &v_o, &mean_g, 0.7);
                assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "n = {n}, du = {du}, dv = {dv}, client {i}: {got:?} vs {want:?}");
            }
            // Negative control: a variance moved by 1e-12 relative moves some bits.
            let mut moved = m.clone();
            let j = maps.clients[0].idx[0];
            moved.cov[(j, j)] *= 1.0 + 1e-12;
            let cl = &maps.clients[0];
            let got = maps.client_parts(0, cl, &moved, (&v_o, &mean_g, 0.7), &mut scratch);
            assert_ne!(got.map(f64::to_bits), parts_by_nalgebra(&maps, 0, &m, &v_o, &mean_g, 0.7).map(f64::to_bits), "n = {n}, du = {du}, dv = {dv}");
        }
    }

    #[test]
    fn declared_reads_give_the_maps_of_the_bisection_with_fewer_runs() {
        use crate::engine::affine::probed_with_and_without_reads;
        use crate::families::ccyw::algorithm::{FedAvgP, RoundParams, ScaffoldP};
        let params = RoundParams { n: 5, k: 3, m: 3, gamma_u: 0.05, gamma_v: 0.08, eta_u: 1.5, eta_v: 0.9 };
        for (du, dv) in [(3, 2), (0, 3), (2, 0)] {
            let inst = instance(5, du, dv, Coupling::Coupled, 3);
            let algorithms: [&dyn Algorithm; 2] = [&FedAvgP { params }, &ScaffoldP { params }];
            for alg in algorithms {
                let [(declared, fewer), (bisected, more)] = probed_with_and_without_reads(&AlgorithmRound { instance: &inst, algorithm: alg });
                assert_eq!(declared, bisected, "{} du {du} dv {dv}", alg.name());
                assert!(fewer < more, "{} du {du} dv {dv}: the declaration is taken ({fewer} runs against {more})", alg.name());
            }
        }
    }

    #[test]
    fn the_metric_series_has_the_bits_of_the_summaries() {
        use crate::families::ccyw::algorithm::{FedAvgP, RoundParams, ScaffoldP};
        let bits = |pairs: &[(f64, f64)]| pairs.iter().flat_map(|(u, v)| [u.to_bits(), v.to_bits()]).collect::<Vec<_>>();
        for (n, du, dv) in [(5, 3, 2), (4, 6, 7), (4, 0, 3), (3, 2, 0)] {
            let inst = instance(n, du, dv, Coupling::Coupled, 4);
            let params = RoundParams { n, k: 3, m: n - 1, gamma_u: 0.05, gamma_v: 0.08, eta_u: 1.5, eta_v: 0.9 };
            let algorithms: [&dyn Algorithm; 2] = [&FedAvgP { params }, &ScaffoldP { params }];
            for alg in algorithms {
                let inc = InclusionMoments::without_replacement(n, n - 1);
                let summaries = exact_series(&inst, alg, 12, &inc).summaries;
                for metric in [Metric::SharedPlusPersonal, Metric::SharedPlusWeightedPersonal] {
                    let want: Vec<u64> = summaries.iter().map(|g| metric.value(g, n - 1, n).to_bits()).collect();
                    let got: Vec<u64> = exact_metric_series(&inst, alg, 12, &inc, metric).iter().map(|x| x.to_bits()).collect();
                    assert_eq!(got, want, "{} n {n} du {du} dv {dv}", alg.name());
                }
            }
            // Negative control: moments moved by 1e-12 relative move the bits of both parts.
            let maps = MetricMaps::new(&inst);
            let (m, _) = mixture(&inst, &states(inst.layout().state_dim(), 6));
            let mut moved = m.clone();
            moved.cov *= 1.0 + 1e-12;
            let (at, near) = (maps.shared_and_personal(&m), maps.shared_and_personal(&moved));
            let full = maps.summary(&m);
            assert_eq!(bits(&[at]), bits(&[(full.g_u, full.g_v)]));
            assert!(at.0.to_bits() != near.0.to_bits() || du == 0, "G_u, n {n} du {du} dv {dv}");
            assert!(at.1.to_bits() != near.1.to_bits() || dv == 0, "G_v, n {n} du {du} dv {dv}");
        }
    }
}
