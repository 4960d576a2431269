//! The moments the exact engine propagates: the mean and the centred covariance of the state.
//!
//! The engine never forms the raw second moment `P = E z z^T` to evaluate anything: with
//! `C = P - mu mu^T` every expected squared norm is a sum of non-negative terms,
//! `E||M z + o||^2 = tr(M C M^T) + ||M mu + o||^2`, whose relative accuracy does not depend on how
//! far the state is from the origin. The raw form `tr(M P M^T) + 2 o^T M mu + ||o||^2` cancels:
//! its absolute error is a few ulps of `||M mu||^2 + ||o||^2`, so a value far below that scale (an
//! iterate close to a distant optimum) is lost.
//!
//! A family that knows a point the rounds keep fixed (an optimum) may measure the state from it
//! ([`RoundMaps::probe_at`](super::RoundMaps::probe_at), [`Observable::probe_at`](super::Observable::probe_at)):
//! the mean is then the mean error `E z - z_ref`, and values near the optimum carry their own
//! scale down to the smallest normal numbers.

use nalgebra::{DMatrix, DVector};

/// The mean `mu = E z` and the centred covariance `C = E (z - mu)(z - mu)^T` of a random state
/// (measured from the origin of the maps that propagate it).
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    /// `mu`.
    pub mean: DVector<f64>,
    /// `C`, symmetric positive semidefinite up to rounding.
    pub cov: DMatrix<f64>,
}

impl Moments {
    /// The moments `(mu, C)`.
    pub fn new(mean: DVector<f64>, cov: DMatrix<f64>) -> Self {
        Self { mean, cov }
    }

    /// A point mass at `z`: `mu = z`, `C = 0`.
    pub fn point(z: DVector<f64>) -> Self {
        let d = z.len();
        Self { mean: z, cov: DMatrix::zeros(d, d) }
    }

    /// The length of the state.
    pub fn dim(&self) -> usize {
        self.mean.len()
    }

    /// The moments of the coordinates `start..start + len` (a prefix of the state, a block).
    pub fn block(&self, start: usize, len: usize) -> Self {
        Self { mean: self.mean.rows(start, len).into_owned(), cov: self.cov.view((start, start), (len, len)).into_owned() }
    }

    /// The raw second moment `P = C + mu mu^T` (for a quadratic form that is not a squared norm;
    /// never for a quantity that tends to zero, see the module's note).
    pub fn second_moment(&self) -> DMatrix<f64> {
        &self.cov + &self.mean * self.mean.transpose()
    }

    /// `E[z^T Q z / 2 + l^T z] = tr(Q C)/2 + mu^T Q mu / 2 + l^T mu` for a symmetric `Q`.
    pub fn expected_quadratic(&self, q: &DMatrix<f64>, l: &DVector<f64>) -> f64 {
        0.5 * q.component_mul(&self.cov).sum() + 0.5 * self.mean.dot(&(q * &self.mean)) + l.dot(&self.mean)
    }

    /// `||P||_max` with `P = C + mu mu^T`: the scale of the raw second moment, for tolerances that
    /// are relative to it.
    pub fn second_moment_scale(&self) -> f64 {
        self.second_moment().amax()
    }

    /// The smallest eigenvalue of `(C + C^T)/2` (a PSD diagnostic; NaN when an entry of `C` is
    /// not finite, never decomposed).
    pub fn min_covariance_eigenvalue(&self) -> f64 {
        if !self.cov.iter().all(|x| x.is_finite()) {
            return f64::NAN;
        }
        ((&self.cov + self.cov.transpose()) * 0.5).symmetric_eigenvalues().min()
    }

    /// Whether every entry of `mu` and `C` is finite.
    pub fn is_finite(&self) -> bool {
        self.mean.iter().chain(self.cov.iter()).all(|x| x.is_finite())
    }
}

/// A component's own term `A C[K, K] A^T + y y^T` with `y = A mu[K] + b`, for the map `a` that
/// reads the coordinates `K` (the `(p2 - q)` term of [`super::affine`]'s formula), from the
/// gathered `c_kk = C[K, K]` and `mu_k = mu[K]`.
pub(super) fn own_second_moment(a: &DMatrix<f64>, b: &DVector<f64>, c_kk: &DMatrix<f64>, mu_k: &DVector<f64>) -> DMatrix<f64> {
    let y = a * mu_k + b;
    a * c_kk * a.transpose() + &y * y.transpose()
}

/// `(C[K, K], mu[K])` of the moments `(mu, C)` on the coordinates `cols`.
pub(super) fn gather_on(mu: &DVector<f64>, cov: &DMatrix<f64>, cols: &[usize]) -> (DMatrix<f64>, DVector<f64>) {
    (DMatrix::from_fn(cols.len(), cols.len(), |r, s| cov[(cols[r], cols[s])]), DVector::from_fn(cols.len(), |r, _| mu[cols[r]]))
}
