//! Observables: expected squared norms of affine maps of the state, exact from its moments.

use nalgebra::{DMatrix, DVector};

/// An affine map `z -> M z + o` of the state whose expected squared norm is observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Observable {
    /// `M`.
    pub map: DMatrix<f64>,
    /// `o`.
    pub offset: DVector<f64>,
}

impl Observable {
    /// The map `z -> M z + o`.
    pub fn new(map: DMatrix<f64>, offset: DVector<f64>) -> Self {
        Self { map, offset }
    }

    /// Probes an affine function `f` of the state (of length `dim`) for its map: `o = f(0)`,
    /// column `j` of `M` is `f(e_j) - f(0)`. `rows` is the length of `f`'s value.
    pub fn probe(dim: usize, rows: usize, f: &dyn Fn(&DVector<f64>) -> DVector<f64>) -> Self {
        let offset = f(&DVector::zeros(dim));
        let cols: Vec<DVector<f64>> = (0..dim)
            .map(|j| {
                let mut e = DVector::zeros(dim);
                e[j] = 1.0;
                f(&e) - &offset
            })
            .collect();
        let map = if cols.is_empty() { DMatrix::zeros(rows, 0) } else { DMatrix::from_columns(&cols) };
        Self { map, offset }
    }

    /// `E||M z + o||^2` from `mu = E z` and `P = E z z^T`.
    ///
    /// # Formula
    /// `tr(M P M^T) + 2 o^T M mu + ||o||^2`, clamped at 0 against rounding.
    ///
    /// # Accuracy
    /// Exact up to the rounding of its three terms: the absolute error is a few ulps of
    /// `tr(M P M^T) + ||o||^2`, so a value far below that scale (an iterate close to a distant
    /// optimum) has a relative error of that ratio times 1e-16.
    pub fn expected_square(&self, mu: &DVector<f64>, p: &DMatrix<f64>) -> f64 {
        let m = &self.map;
        if m.nrows() == 0 {
            return 0.0;
        }
        let tr = (m * p).component_mul(m).sum();
        (tr + 2.0 * self.offset.dot(&(m * mu)) + self.offset.norm_squared()).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_square_of_a_point_mass_is_the_squared_image() {
        let obs = Observable::new(DMatrix::from_row_slice(1, 2, &[1.0, 2.0]), DVector::from_vec(vec![-1.0]));
        let z = DVector::from_vec(vec![3.0, 0.5]);
        let p = &z * z.transpose();
        // M z + o = 3 + 1 - 1 = 3.
        assert!((obs.expected_square(&z, &p) - 9.0).abs() < 1e-12);
        // Adding variance 0.25 on the first coordinate adds 0.25.
        let mut p2 = p.clone();
        p2[(0, 0)] += 0.25;
        assert!((obs.expected_square(&z, &p2) - 9.25).abs() < 1e-12);
    }
}
