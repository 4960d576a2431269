//! Exact expectations of FedAvg-P and Scaffold-P: their rounds as random affine maps for the
//! shared engine ([`crate::engine`]), and the gradient metrics of Table 1 as observables.

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use crate::engine::{affine_gaussian_moments, propagate_series, stationary_moments, InclusionMoments, Moments, Observable, RandomAffineRound, RoundMaps};

use super::algorithm::{Algorithm, RoundDraws};
use super::problem::{joint_quadratic, GradientSummary, QuadraticInstance};

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

/// The affine gradient maps of Table 1, each an observable `M z + o`.
struct MetricMaps {
    /// `grad_u f = (1/n) sum_i grad_u f_i`.
    u_mean: Observable,
    /// All `grad_{v_i} f_i` stacked.
    v_all: Observable,
    /// All `grad_u f_i` stacked.
    u_all: Observable,
    /// All `grad_u f_i - grad_u f` stacked.
    u_dev: Observable,
    /// `f(z) = 1/2 z^T Hf z - gf^T z`, stored as `(Hf, gf)`.
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
            Observable::new(m, pick(&g0))
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

    fn summary(&self, m: &Moments) -> GradientSummary {
        let n = self.n as f64;
        let g_u = self.u_mean.expected_square(m);
        let b_sum = self.u_all.expected_square(m);
        let (h, g) = &self.objective;
        GradientSummary {
            g_u,
            g_v: self.v_all.expected_square(m) / n,
            dissimilarity: self.u_dev.expected_square(m) / n,
            b_sum,
            objective: m.expected_quadratic(h, &-g),
        }
    }
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
    let base = inst.layout().state_dim();
    // Metrics read the [u; v] prefix of the state (the Algorithm contract).
    let series = propagate_series(&maps, inc, initial_moments(inst, alg), rounds, |m| metrics.summary(&m.block(0, base)));
    ExactSeries { summaries: series.values, min_covariance_eigenvalue: series.min_covariance_eigenvalue, second_moment_scale: series.second_moment_scale }
}

/// Expected gradient summary at the steady state of `alg` on `inst` (see [`stationary_moments`]).
pub fn stationary_summary(inst: &QuadraticInstance, alg: &dyn Algorithm, inc: &InclusionMoments) -> Option<GradientSummary> {
    let maps = probe_round(inst, alg);
    let steady = stationary_moments(&maps, inc, &initial_moments(inst, alg))?;
    let base = inst.layout().state_dim();
    Some(MetricMaps::new(inst).summary(&steady.block(0, base)))
}
