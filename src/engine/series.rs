//! Exact moment trajectories: propagate `(mu, P)` round by round and observe each round.

use nalgebra::{DMatrix, DVector, SymmetricEigen};

use super::affine::RoundMaps;
use super::design::InclusionMoments;

/// What a propagation observed, with a positive-semidefiniteness diagnostic.
#[derive(Debug, Clone)]
pub struct MomentSeries<R> {
    /// The observation at the start of each round `t = 0..T-1`.
    pub values: Vec<R>,
    /// Smallest eigenvalue of the covariance `P - mu mu^T` over the rounds inspected (every
    /// 25th and the last); a value below `-1e-9 * ||P||` means rounding broke its PSD-ness.
    pub min_covariance_eigenvalue: f64,
    /// `||P||_max` at the end, the scale for the diagnostic.
    pub second_moment_scale: f64,
}

/// Rounds between two PSD inspections of the covariance (an eigen-decomposition each).
pub const PSD_INSPECTION_PERIOD: usize = 25;

/// Propagates the moments `(mu0, P0)` through `rounds` rounds of `maps` under an exchangeable
/// design, calling `observe(mu, P)` at the start of each round.
pub fn propagate_series<R>(
    maps: &RoundMaps,
    inc: &InclusionMoments,
    mu0: DVector<f64>,
    p0: DMatrix<f64>,
    rounds: usize,
    mut observe: impl FnMut(&DVector<f64>, &DMatrix<f64>) -> R,
) -> MomentSeries<R> {
    let (mut mu, mut p) = (mu0, p0);
    let mut values = Vec::with_capacity(rounds);
    let mut min_eig = f64::INFINITY;
    for t in 0..rounds {
        values.push(observe(&mu, &p));
        if t % PSD_INSPECTION_PERIOD == 0 || t + 1 == rounds {
            let cov = &p - &mu * mu.transpose();
            let e = SymmetricEigen::new((&cov + cov.transpose()) * 0.5).eigenvalues.min();
            min_eig = min_eig.min(e);
        }
        let (m2, p2) = maps.propagate(&mu, &p, inc);
        mu = m2;
        p = p2;
    }
    MomentSeries { values, min_covariance_eigenvalue: min_eig, second_moment_scale: p.amax() }
}

/// The first and second moments of `s0 + N xi`, `xi ~ N(0, I)`, for a function `f(xi)` affine
/// in `len` standard normal values: `mu = f(0)`, `P = mu mu^T + sum_l (f(e_l) - mu)(f(e_l) - mu)^T`.
pub fn affine_gaussian_moments(len: usize, f: &dyn Fn(&[f64]) -> DVector<f64>) -> (DVector<f64>, DMatrix<f64>) {
    let s0 = f(&vec![0.0; len]);
    let mut p = &s0 * s0.transpose();
    for l in 0..len {
        let mut noise = vec![0.0; len];
        noise[l] = 1.0;
        let col = f(&noise) - &s0;
        p += &col * col.transpose();
    }
    (s0, p)
}
