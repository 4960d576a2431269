//! Exact moment trajectories: propagate `(mu, C)` round by round and observe each round.

use nalgebra::{DMatrix, DVector};

use super::affine::RoundMaps;
use super::design::InclusionMoments;
use super::moments::Moments;

/// What a propagation observed, with a positive-semidefiniteness diagnostic.
#[derive(Debug, Clone)]
pub struct MomentSeries<R> {
    /// The observation at the start of each round `t = 0..T-1`.
    pub values: Vec<R>,
    /// Smallest eigenvalue of the covariance `C` over the rounds inspected (every 25th and the
    /// last); a value below `-1e-9 * ||P||` means rounding broke its PSD-ness. NaN when a
    /// covariance inspected was not finite (the run overflowed).
    pub min_covariance_eigenvalue: f64,
    /// `||P||_max = ||C + mu mu^T||_max` at the end, the scale for the diagnostic.
    pub second_moment_scale: f64,
}

/// Rounds between two PSD inspections of the covariance (an eigen-decomposition each).
pub const PSD_INSPECTION_PERIOD: usize = 25;

/// The smaller of two values, NaN when either is NaN (`f64::min` returns the other one, so a
/// fold with it would hide a value that is not a number behind a later finite one).
pub fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// The larger of two values, NaN when either is NaN (see [`nan_min`]): a supremum over
/// observed values that one NaN makes NaN.
pub fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// Propagates the moments `m0` through `rounds` rounds of `maps` under an exchangeable design,
/// calling `observe(m)` at the start of each round.
pub fn propagate_series<R>(maps: &RoundMaps, inc: &InclusionMoments, m0: Moments, rounds: usize, mut observe: impl FnMut(&Moments) -> R) -> MomentSeries<R> {
    let mut m = m0;
    let mut values = Vec::with_capacity(rounds);
    let mut min_eig = f64::INFINITY;
    for t in 0..rounds {
        values.push(observe(&m));
        if t % PSD_INSPECTION_PERIOD == 0 || t + 1 == rounds {
            min_eig = nan_min(min_eig, m.min_covariance_eigenvalue());
        }
        m = maps.propagate(&m, inc);
    }
    MomentSeries { values, min_covariance_eigenvalue: min_eig, second_moment_scale: m.second_moment_scale() }
}

/// The moments of `s0 + N xi`, `xi ~ N(0, I)`, for a function `f(xi)` affine in `len` standard
/// normal values: `mu = f(0)`, `C = sum_l (f(e_l) - mu)(f(e_l) - mu)^T`.
pub fn affine_gaussian_moments(len: usize, f: &dyn Fn(&[f64]) -> DVector<f64>) -> Moments {
    let s0 = f(&vec![0.0; len]);
    let d = s0.len();
    let mut cov = DMatrix::zeros(d, d);
    for l in 0..len {
        let mut noise = vec![0.0; len];
        noise[l] = 1.0;
        let col = f(&noise) - &s0;
        cov += &col * col.transpose();
    }
    Moments::new(s0, cov)
}
