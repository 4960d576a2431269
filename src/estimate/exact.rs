//! Exact expectations by moment propagation.
//!
//! On a quadratic with additive Gaussian noise a round is affine in the state and the noise for
//! each sampled set, and (by the [`Algorithm`] contract) a sum of per-client terms:
//!
//! ```text
//! z' = A0 z + c0 + sum_i delta_i (A_i z + b_i + W_i xi_i),   delta_i = 1{i in S},  xi_i ~ N(0, I)
//! ```
//!
//! The maps are recovered by probing the algorithm's own `round` with basis vectors and unit
//! noise ([`RoundMaps::probe`]), never written a second time. With `p = E delta_i`,
//! `q = E delta_i delta_j (i != j)` and `p2 = E delta_i^2`, the first and second moments
//! `mu = E z`, `P = E z z^T` propagate exactly:
//!
//! ```text
//! mu' = A0 mu + c0 + p (Abar mu + bbar),               Abar = sum_i A_i, bbar = sum_i b_i
//! P'  = E[w w^T] + p (E[w Y^T] + E[Y w^T]) + q E[Y Y^T] + (p2 - q) sum_i E[y_i y_i^T]
//!       + p2 sum_i W_i W_i^T,                          w = A0 z + c0, y_i = A_i z + b_i, Y = sum_i y_i
//! ```
//!
//! For uniform sampling of m of n without replacement `p = p2 = m/n` and
//! `q = m (m-1) / (n (n-1))`. Every metric of Table 1 is `E||M z - c||^2 = tr(M P M^T) - 2 c^T M mu
//! + ||c||^2` for an affine gradient map, so expected metrics are exact.

use nalgebra::{DMatrix, DVector, Schur, SymmetricEigen, SVD};
use serde::Serialize;

use crate::algorithm::{Algorithm, RoundDraws};
use crate::problem::{joint_quadratic, GradientSummary, QuadraticInstance};

/// The first and second moments of the client inclusion indicators `delta_i`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InclusionMoments {
    /// `E delta_i`.
    pub p: f64,
    /// `E delta_i delta_j`, `i != j`.
    pub q: f64,
    /// `E delta_i^2`.
    pub p2: f64,
}

impl InclusionMoments {
    /// Uniform sampling of `m` of `n` clients without replacement (Algorithm 1, line 2):
    /// `P(i in S) = m/n`, `P(i, j in S) = m (m-1) / (n (n-1))`.
    pub fn without_replacement(n: usize, m: usize) -> Self {
        let (n, m) = (n as f64, m as f64);
        let q = if n > 1.0 { m * (m - 1.0) / (n * (n - 1.0)) } else { m };
        Self { p: m / n, q, p2: m / n }
    }

    /// `m` draws with replacement, `delta_i` the number of times client `i` is drawn (multinomial):
    /// `E delta_i = m/n`, `E delta_i delta_j = m (m-1)/n^2`, `E delta_i^2 = m/n + m (m-1)/n^2`.
    /// Not the paper's sampling: kept as the named wrong model that the cross-validation test
    /// must detect.
    pub fn with_replacement(n: usize, m: usize) -> Self {
        let (n, m) = (n as f64, m as f64);
        Self { p: m / n, q: m * (m - 1.0) / (n * n), p2: m / n + m * (m - 1.0) / (n * n) }
    }
}

/// One client's affine term of a round, restricted to the coordinates it touches.
#[derive(Debug, Clone)]
struct ClientMap {
    /// Rows of the state the term writes.
    rows: Vec<usize>,
    /// Columns of the state the term reads.
    cols: Vec<usize>,
    /// `A_i[rows, cols]`.
    a: DMatrix<f64>,
    /// `b_i[rows]`.
    b: DVector<f64>,
    /// `W_i[rows, :]`.
    w: DMatrix<f64>,
}

/// The linear part of the empty-sample round (diagonal for every algorithm here, dense in general).
#[derive(Debug, Clone)]
enum BaseLinear {
    Diagonal(DVector<f64>),
    Dense(DMatrix<f64>),
}

/// The affine maps of one round, recovered by probing.
#[derive(Debug, Clone)]
pub struct RoundMaps {
    dim: usize,
    base: BaseLinear,
    c0: DVector<f64>,
    a_sum: DMatrix<f64>,
    b_sum: DVector<f64>,
    /// `sum_i W_i W_i^T`.
    noise_cov: DMatrix<f64>,
    clients: Vec<ClientMap>,
}

fn support(v: &DVector<f64>) -> impl Iterator<Item = usize> + '_ {
    v.iter().enumerate().filter(|(_, x)| **x != 0.0).map(|(k, _)| k)
}

impl RoundMaps {
    /// Probes `alg.round` on `inst`: `1 + dim` calls with no client sampled, and for each client
    /// `1 + dim + K (du + dv)` calls with that client alone.
    pub fn probe(inst: &QuadraticInstance, alg: &dyn Algorithm) -> Self {
        let layout = inst.layout();
        let (n, dim, d, k) = (layout.n, alg.state_dim(inst), layout.local_dim(), alg.local_steps());
        let draws = |sampled: Vec<usize>, noise: Vec<f64>| RoundDraws { sampled, local_dim: d, steps: k, noise };
        let basis = |j: usize| {
            let mut e = DVector::zeros(dim);
            e[j] = 1.0;
            e
        };
        let zero = DVector::zeros(dim);
        let empty = draws(Vec::new(), Vec::new());
        let c0 = alg.round(inst, &zero, &empty);
        let base_cols: Vec<DVector<f64>> = (0..dim).map(|j| alg.round(inst, &basis(j), &empty) - &c0).collect();
        let base_dense = DMatrix::from_columns(&base_cols);
        let is_diagonal = (0..dim).all(|c| (0..dim).all(|r| r == c || base_dense[(r, c)] == 0.0));
        let base = if is_diagonal { BaseLinear::Diagonal(base_dense.diagonal()) } else { BaseLinear::Dense(base_dense) };

        let noise_len = k * d;
        let mut a_sum = DMatrix::zeros(dim, dim);
        let mut b_sum = DVector::zeros(dim);
        let mut noise_cov = DMatrix::zeros(dim, dim);
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let quiet = draws(vec![i], vec![0.0; noise_len]);
            let b = alg.round(inst, &zero, &quiet) - &c0;
            let a_cols: Vec<DVector<f64>> = (0..dim)
                .map(|j| {
                    let e = basis(j);
                    alg.round(inst, &e, &quiet) - alg.round(inst, &e, &empty) - &b
                })
                .collect();
            let w_cols: Vec<DVector<f64>> = (0..noise_len)
                .map(|l| {
                    let mut noise = vec![0.0; noise_len];
                    noise[l] = 1.0;
                    alg.round(inst, &zero, &draws(vec![i], noise)) - &c0 - &b
                })
                .collect();
            let cols: Vec<usize> = (0..dim).filter(|j| a_cols[*j].iter().any(|x| *x != 0.0)).collect();
            let mut touched = vec![false; dim];
            for v in a_cols.iter().chain(&w_cols).chain(std::iter::once(&b)) {
                for r in support(v) {
                    touched[r] = true;
                }
            }
            let rows: Vec<usize> = (0..dim).filter(|r| touched[*r]).collect();
            let a = DMatrix::from_fn(rows.len(), cols.len(), |r, c| a_cols[cols[c]][rows[r]]);
            let w = DMatrix::from_fn(rows.len(), noise_len, |r, l| w_cols[l][rows[r]]);
            let b_r = DVector::from_fn(rows.len(), |r, _| b[rows[r]]);
            for (ci, &c) in cols.iter().enumerate() {
                for (ri, &r) in rows.iter().enumerate() {
                    a_sum[(r, c)] += a[(ri, ci)];
                }
            }
            b_sum += &b;
            let ww = &w * w.transpose();
            for (ri, &r) in rows.iter().enumerate() {
                for (rj, &s) in rows.iter().enumerate() {
                    noise_cov[(r, s)] += ww[(ri, rj)];
                }
            }
            clients.push(ClientMap { rows, cols, a, b: b_r, w });
        }
        Self { dim, base, c0, a_sum, b_sum, noise_cov, clients }
    }

    fn base_apply_vec(&self, v: &DVector<f64>) -> DVector<f64> {
        match &self.base {
            BaseLinear::Diagonal(d) => d.component_mul(v),
            BaseLinear::Dense(a) => a * v,
        }
    }

    /// `A0 M` for a matrix `M`.
    fn base_left(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        match &self.base {
            BaseLinear::Diagonal(d) => {
                let mut out = m.clone();
                for (r, mut row) in out.row_iter_mut().enumerate() {
                    row *= d[r];
                }
                out
            }
            BaseLinear::Dense(a) => a * m,
        }
    }

    /// One round of moment propagation: `(mu, P) -> (mu', P')`.
    pub fn propagate(&self, mu: &DVector<f64>, p: &DMatrix<f64>, inc: &InclusionMoments) -> (DVector<f64>, DMatrix<f64>) {
        let a0_mu = self.base_apply_vec(mu);
        let w_mean = &a0_mu + &self.c0;
        let y_mean = &self.a_sum * mu + &self.b_sum;
        let mu_next = &w_mean + &y_mean * inc.p;

        // E[w w^T] = A0 P A0^T + A0 mu c0^T + c0 mu^T A0^T + c0 c0^T
        let a0_p = self.base_left(p);
        let a0_p_a0t = self.base_left(&a0_p.transpose());
        let mut next = a0_p_a0t + &a0_mu * self.c0.transpose() + &self.c0 * a0_mu.transpose() + &self.c0 * self.c0.transpose();
        // E[w Y^T] = A0 P Abar^T + A0 mu bbar^T + c0 mu^T Abar^T + c0 bbar^T
        let p_abar_t = p * self.a_sum.transpose();
        let abar_mu = &self.a_sum * mu;
        let w_y = self.base_left(&p_abar_t) + &a0_mu * self.b_sum.transpose() + &self.c0 * abar_mu.transpose() + &self.c0 * self.b_sum.transpose();
        next += (&w_y + w_y.transpose()) * inc.p;
        // E[Y Y^T] = Abar P Abar^T + Abar mu bbar^T + bbar mu^T Abar^T + bbar bbar^T
        let y_y = &self.a_sum * &p_abar_t + &abar_mu * self.b_sum.transpose() + &self.b_sum * abar_mu.transpose() + &self.b_sum * self.b_sum.transpose();
        next += y_y * inc.q;
        // sum_i E[y_i y_i^T], each on its own rows and columns
        let own = inc.p2 - inc.q;
        for c in &self.clients {
            let p_cc = DMatrix::from_fn(c.cols.len(), c.cols.len(), |r, s| p[(c.cols[r], c.cols[s])]);
            let mu_c = DVector::from_fn(c.cols.len(), |r, _| mu[c.cols[r]]);
            let a_mu = &c.a * mu_c;
            let yy = &c.a * p_cc * c.a.transpose() + &a_mu * c.b.transpose() + &c.b * a_mu.transpose() + &c.b * c.b.transpose();
            for (ri, &r) in c.rows.iter().enumerate() {
                for (rj, &s) in c.rows.iter().enumerate() {
                    next[(r, s)] += own * yy[(ri, rj)];
                }
            }
        }
        next += &self.noise_cov * inc.p2;
        let sym = (&next + next.transpose()) * 0.5;
        (mu_next, sym)
    }

    /// State dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of clients probed and the noise columns of client `i` (for tests).
    pub fn client_noise_columns(&self, i: usize) -> usize {
        self.clients[i].w.ncols()
    }
}

/// The affine gradient maps of Table 1, each stored as `(M, o)` with gradient `M z + o`.
struct MetricMaps {
    /// `grad_u f = (1/n) sum_i grad_u f_i`.
    u_mean: (DMatrix<f64>, DVector<f64>),
    /// All `grad_{v_i} f_i` stacked.
    v_all: (DMatrix<f64>, DVector<f64>),
    /// All `grad_u f_i` stacked.
    u_all: (DMatrix<f64>, DVector<f64>),
    /// All `grad_u f_i - grad_u f` stacked.
    u_dev: (DMatrix<f64>, DVector<f64>),
    /// `f(z) = 1/2 z^T Hf z - gf^T z`.
    objective: (DMatrix<f64>, DVector<f64>),
    n: usize,
}

impl MetricMaps {
    /// Probes `inst.local_gradient` (the same code the Monte Carlo path evaluates).
    fn new(inst: &QuadraticInstance) -> Self {
        let layout = inst.layout();
        let (n, du, dv, dim) = (layout.n, layout.du, layout.dv, layout.state_dim());
        let grads = |z: &DVector<f64>| -> Vec<DVector<f64>> { (0..n).map(|i| inst.local_gradient(i, &inst.local_point(z, i))).collect() };
        let zero = DVector::zeros(dim);
        let g0 = grads(&zero);
        let cols: Vec<Vec<DVector<f64>>> = (0..dim)
            .map(|j| {
                let mut e = DVector::zeros(dim);
                e[j] = 1.0;
                grads(&e).into_iter().zip(&g0).map(|(g, g0)| g - g0).collect()
            })
            .collect();
        let build = |rows: usize, pick: &dyn Fn(&[DVector<f64>]) -> DVector<f64>| {
            let m = DMatrix::from_columns(&cols.iter().map(|c| pick(c)).collect::<Vec<_>>());
            let m = if m.ncols() == 0 { DMatrix::zeros(rows, 0) } else { m };
            (m, pick(&g0))
        };
        let u_mean = build(du, &|g| g.iter().fold(DVector::zeros(du), |a, gi| a + gi.rows(0, du)) / n as f64);
        let v_all = build(n * dv, &|g| {
            let mut v = DVector::zeros(n * dv);
            for (i, gi) in g.iter().enumerate() {
                v.rows_mut(i * dv, dv).copy_from(&gi.rows(du, dv));
            }
            v
        });
        let u_all = build(n * du, &|g| {
            let mut v = DVector::zeros(n * du);
            for (i, gi) in g.iter().enumerate() {
                v.rows_mut(i * du, du).copy_from(&gi.rows(0, du));
            }
            v
        });
        // Deviations grad_u f_i - grad_u f, stacked: the dissimilarity without subtracting squares.
        let u_dev = build(n * du, &|g| {
            let mean = g.iter().fold(DVector::zeros(du), |a, gi| a + gi.rows(0, du)) / n as f64;
            let mut v = DVector::zeros(n * du);
            for (i, gi) in g.iter().enumerate() {
                v.rows_mut(i * du, du).copy_from(&(gi.rows(0, du) - &mean));
            }
            v
        });
        let (h, g) = joint_quadratic(inst);
        let objective = (h / n as f64, g / n as f64);
        Self { u_mean, v_all, u_all, u_dev, objective, n }
    }

    /// `E||M z + o||^2 = tr(M P M^T) + 2 o^T M mu + ||o||^2` for a map stored as `(M, o)`.
    fn expected_sq(map: &(DMatrix<f64>, DVector<f64>), mu: &DVector<f64>, p: &DMatrix<f64>) -> f64 {
        let (m, offset) = map;
        if m.nrows() == 0 {
            return 0.0;
        }
        let tr = (m * p).component_mul(m).sum();
        (tr + 2.0 * offset.dot(&(m * mu)) + offset.norm_squared()).max(0.0)
    }

    fn summary(&self, mu: &DVector<f64>, p: &DMatrix<f64>) -> GradientSummary {
        let n = self.n as f64;
        let g_u = Self::expected_sq(&self.u_mean, mu, p);
        let b_sum = Self::expected_sq(&self.u_all, mu, p);
        let (h, g) = &self.objective;
        GradientSummary {
            g_u,
            g_v: Self::expected_sq(&self.v_all, mu, p) / n,
            dissimilarity: Self::expected_sq(&self.u_dev, mu, p) / n,
            b_sum,
            objective: 0.5 * h.component_mul(p).sum() - g.dot(mu),
        }
    }
}

/// Exact expected gradient summaries of rounds `0..rounds`, with a PSD diagnostic.
#[derive(Debug, Clone, Serialize)]
pub struct ExactSeries {
    /// `E` of each [`GradientSummary`] field at the start of each round.
    #[serde(skip)]
    pub summaries: Vec<GradientSummary>,
    /// Smallest eigenvalue of the covariance `P - mu mu^T` over the rounds inspected (every 25th
    /// and the last); a value below `-1e-9 * ||P||` means rounding has broken positive
    /// semidefiniteness.
    pub min_covariance_eigenvalue: f64,
    /// `||P||_max` at the last round, the scale for the diagnostic.
    pub second_moment_scale: f64,
}

/// The first and second moments of the initial state: `z^0` itself, or, for an algorithm whose
/// initialization draws noise, `s0 + N xi` probed like a round (`mu = s0`, `P = s0 s0^T + N N^T`).
pub fn initial_moments(inst: &QuadraticInstance, alg: &dyn Algorithm) -> (DVector<f64>, DMatrix<f64>) {
    let layout = inst.layout();
    let (n, d, k) = (layout.n, layout.local_dim(), alg.local_steps());
    let draws = |noise: Vec<f64>| RoundDraws { sampled: (0..n).collect(), local_dim: d, steps: k, noise };
    let len = n * k * d;
    let s0 = alg.initial_state(inst, &draws(vec![0.0; len]));
    let mut p = &s0 * s0.transpose();
    if alg.random_initialization() && !inst.is_noiseless() {
        for l in 0..len {
            let mut noise = vec![0.0; len];
            noise[l] = 1.0;
            let col = alg.initial_state(inst, &draws(noise)) - &s0;
            p += &col * col.transpose();
        }
    }
    (s0, p)
}

/// Propagates the moments of `alg` on `inst` for `rounds` rounds.
pub fn exact_series(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, inc: &InclusionMoments) -> ExactSeries {
    let maps = RoundMaps::probe(inst, alg);
    let metrics = MetricMaps::new(inst);
    let base = inst.layout().state_dim();
    let (mut mu, mut p) = initial_moments(inst, alg);
    let mut summaries = Vec::with_capacity(rounds);
    let mut min_eig = f64::INFINITY;
    for t in 0..rounds {
        // Metrics read the [u; v] prefix of the state (the Algorithm contract).
        summaries.push(metrics.summary(&mu.rows(0, base).into_owned(), &p.view((0, 0), (base, base)).into_owned()));
        if t % 25 == 0 || t + 1 == rounds {
            let cov = &p - &mu * mu.transpose();
            let e = SymmetricEigen::new((&cov + cov.transpose()) * 0.5).eigenvalues.min();
            min_eig = min_eig.min(e);
        }
        let (m2, p2) = maps.propagate(&mu, &p, inc);
        mu = m2;
        p = p2;
    }
    ExactSeries { summaries, min_covariance_eigenvalue: min_eig, second_moment_scale: p.amax() }
}

/// Refinement passes of the stationary second moment (each one solve with a stored SVD).
const REFINEMENT_STEPS: usize = 20;

/// Iteration cap of the SVD and Schur decompositions (nalgebra's default, 0, never gives up).
const MAX_ITERATIONS: usize = 100_000;

/// Directions `l` with `l^T z` conserved exactly by every round, whatever the sample and the
/// noise (`l^T A0 = l^T`, `l^T A_i = 0`, `l^T b_i = 0`, `l^T W_i = 0`, `l^T c0 = 0`). Scaffold-P
/// has them: `c - mean_i c_i` never changes. They make the fixed-point equations singular; the
/// conserved values pin the solution down.
fn conserved_directions(maps: &RoundMaps, a0: &DMatrix<f64>, a_eff: &DMatrix<f64>) -> Vec<DVector<f64>> {
    let d = maps.dim;
    // l^T (I - A_eff) = 0: l spans the null space of (I - A_eff)^T, its right singular vectors.
    let Some(svd) = SVD::try_new((DMatrix::identity(d, d) - a_eff).transpose(), false, true, f64::EPSILON, MAX_ITERATIONS) else { return Vec::new() };
    let Some(v_t) = svd.v_t else { return Vec::new() };
    let scale = a_eff.amax().max(1.0);
    let tol = 1e-10 * scale;
    let lift = |c: &ClientMap, l: &DVector<f64>| -> f64 {
        // ||l^T A_i|| + |l^T b_i| + ||l^T W_i|| on the client's rows.
        let lr = DVector::from_fn(c.rows.len(), |r, _| l[c.rows[r]]);
        (c.a.transpose() * &lr).amax() + c.b.dot(&lr).abs() + (c.w.transpose() * &lr).amax()
    };
    (0..d)
        .filter(|&j| svd.singular_values[j] <= tol)
        .map(|j| v_t.row(j).transpose())
        .filter(|l| (a0.transpose() * l - l).amax() <= tol && l.dot(&maps.c0).abs() <= tol && maps.clients.iter().all(|c| lift(c, l) <= tol))
        .collect()
}

/// The stationary moments `(mu*, P*)`, the fixed point of [`RoundMaps::propagate`] reached from
/// the initial moments `(mu0, P0)`: where the expected metrics of a run with a constant step
/// settle ("steady state").
///
/// The propagation is affine in `P` for fixed `mu`, so the fixed point is solved for, not run to:
/// `(I - A0 - p Abar) mu* = c0 + p bbar`, then `P* = Lmap(P*) + C(mu*)`, a linear system over the
/// `D(D+1)/2` entries of a symmetric matrix whose operator is read off `propagate` itself (probing
/// with symmetric basis matrices). Exactly conserved directions `l` (see `conserved_directions`)
/// add the equations `l^T mu* = l^T mu0` and `P* l = (l^T mu0) mu*`; the stacked systems are solved
/// by least squares and refined against `propagate`. `None` when some other mode of the mean does
/// not contract, a conserved value is random, the answer leaves a residual (the equations were not
/// consistent) or its covariance `P* - mu* mu*^T` is not PSD. A fixed point of an expanding
/// second-moment recursion would pass these checks; callers that run the recursion compare its end
/// with the fixed point (the experiments' tests do).
pub fn stationary_moments(maps: &RoundMaps, inc: &InclusionMoments, mu0: &DVector<f64>, p0: &DMatrix<f64>) -> Option<(DVector<f64>, DMatrix<f64>)> {
    let d = maps.dim;
    let a0 = match &maps.base {
        BaseLinear::Diagonal(v) => DMatrix::from_diagonal(v),
        BaseLinear::Dense(a) => a.clone(),
    };
    let a_eff = &a0 + &maps.a_sum * inc.p;
    let conserved = conserved_directions(maps, &a0, &a_eff);
    let schur = Schur::try_new(a_eff.clone(), 1e-12, MAX_ITERATIONS)?;
    let unit_modes = schur.complex_eigenvalues().iter().filter(|z| z.norm() >= 1.0 - 1e-9).count();
    if unit_modes > conserved.len() {
        return None;
    }
    let values: Vec<f64> = conserved.iter().map(|l| l.dot(mu0)).collect();
    for (l, v) in conserved.iter().zip(&values) {
        if ((l.transpose() * p0 * l)[0] - v * v).abs() > 1e-9 * (1.0 + v * v) {
            return None;
        }
    }
    let solve = |a: DMatrix<f64>, b: DVector<f64>| -> Option<DVector<f64>> { SVD::try_new(a, true, true, f64::EPSILON, MAX_ITERATIONS)?.solve(&b, 1e-12).ok() };
    let k = conserved.len();
    let mut a_mu = DMatrix::zeros(d + k, d);
    a_mu.view_mut((0, 0), (d, d)).copy_from(&(DMatrix::identity(d, d) - &a_eff));
    let mut b_mu = DVector::zeros(d + k);
    b_mu.rows_mut(0, d).copy_from(&(&maps.c0 + &maps.b_sum * inc.p));
    for (j, (l, v)) in conserved.iter().zip(&values).enumerate() {
        a_mu.row_mut(d + j).copy_from(&l.transpose());
        b_mu[d + j] = *v;
    }
    let mu = solve(a_mu, b_mu)?;

    let zero = DMatrix::zeros(d, d);
    let constant = maps.propagate(&mu, &zero, inc).1;
    let pairs: Vec<(usize, usize)> = (0..d).flat_map(|r| (r..d).map(move |c| (r, c))).collect();
    let index = |r: usize, c: usize| -> usize {
        let key = if r <= c { (r, c) } else { (c, r) };
        pairs.binary_search(&key).expect("upper triangle")
    };
    let dim = pairs.len();
    let mut system = DMatrix::zeros(dim + k * d, dim);
    system.view_mut((0, 0), (dim, dim)).fill_with_identity();
    for (col, &(r, c)) in pairs.iter().enumerate() {
        let mut basis = DMatrix::zeros(d, d);
        basis[(r, c)] = 1.0;
        basis[(c, r)] = 1.0;
        let image = maps.propagate(&mu, &basis, inc).1 - &constant;
        for (row, &(a, b)) in pairs.iter().enumerate() {
            system[(row, col)] -= image[(a, b)];
        }
    }
    // Conserved directions: P l = (l^T mu0) mu.
    for (j, l) in conserved.iter().enumerate() {
        for a in 0..d {
            for (b, lb) in l.iter().enumerate() {
                system[(dim + j * d + a, index(a, b))] += lb;
            }
        }
    }
    // Right-hand side and residual of the stacked system at a symmetric `P`.
    let equations = |p: &DMatrix<f64>| -> DVector<f64> {
        let image = maps.propagate(&mu, p, inc).1;
        let mut r = DVector::zeros(dim + k * d);
        for (row, &(a, b)) in pairs.iter().enumerate() {
            r[row] = image[(a, b)] - p[(a, b)];
        }
        for (j, (l, v)) in conserved.iter().zip(&values).enumerate() {
            let pl = p * l;
            for a in 0..d {
                r[dim + j * d + a] = v * mu[a] - pl[a];
            }
        }
        r
    };
    let svd = SVD::try_new(system, true, true, f64::EPSILON, MAX_ITERATIONS)?;
    let to_matrix = |x: &DVector<f64>| DMatrix::from_fn(d, d, |r, c| x[index(r, c)]);
    let mut p = to_matrix(&svd.solve(&equations(&zero), 1e-12).ok()?);
    // Iterative refinement against `propagate` itself, in case the probed operator carries rounding.
    for _ in 0..REFINEMENT_STEPS {
        let residual = equations(&p);
        if residual.amax() <= 1e-15 * p.amax().max(1.0) {
            break;
        }
        p += to_matrix(&svd.solve(&residual, 1e-12).ok()?);
    }
    // A least-squares answer is a fixed point only if it solves the equations, and a second moment
    // only if its covariance is PSD; otherwise there is no steady state to report.
    let scale = p.amax().max(1.0);
    if equations(&p).amax() > 1e-9 * scale {
        return None;
    }
    let cov = &p - &mu * mu.transpose();
    if SymmetricEigen::new((&cov + cov.transpose()) * 0.5).eigenvalues.min() < -1e-9 * scale {
        return None;
    }
    Some((mu, p))
}

/// Expected gradient summary at the steady state of `alg` on `inst` (see [`stationary_moments`]).
pub fn stationary_summary(inst: &QuadraticInstance, alg: &dyn Algorithm, inc: &InclusionMoments) -> Option<GradientSummary> {
    let maps = RoundMaps::probe(inst, alg);
    let (mu0, p0) = initial_moments(inst, alg);
    let (mu, p) = stationary_moments(&maps, inc, &mu0, &p0)?;
    let base = inst.layout().state_dim();
    Some(MetricMaps::new(inst).summary(&mu.rows(0, base).into_owned(), &p.view((0, 0), (base, base)).into_owned()))
}
