//! Observables: expected squared norms of affine maps of the state, exact from its moments.

use nalgebra::{DMatrix, DVector};

use super::column_order::{row_times, NALGEBRA_SMALL_DIM};
use super::moments::Moments;

/// Dense traces below this many flops are cheap enough as they are.
const SPARSE_ROWS_MIN_FLOPS: f64 = 1e6;

/// Rows are summed over their supports when that saves at least this factor of the flops.
const SPARSE_ROWS_MIN_SAVING: f64 = 4.0;

/// An affine map `z -> M z + o` of the state whose expected squared norm is observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Observable {
    /// `M`.
    map: DMatrix<f64>,
    /// `o`.
    offset: DVector<f64>,
    /// The columns where each row of `M` is nonzero, when `tr(M C M^T)` is summed over them
    /// (see [`Observable::expected_square`]).
    supports: Option<Vec<Vec<usize>>>,
}

impl Observable {
    /// The map `z -> M z + o`.
    pub fn new(map: DMatrix<f64>, offset: DVector<f64>) -> Self {
        let dense = map.nrows() as f64 * (map.ncols() as f64).powi(2);
        let supports = (dense >= SPARSE_ROWS_MIN_FLOPS)
            .then(|| row_supports(&map))
            .filter(|s| SPARSE_ROWS_MIN_SAVING * s.iter().map(|r| (r.len() as f64).powi(2)).sum::<f64>() <= dense);
        Self { map, offset, supports }
    }

    /// `M`.
    pub fn map(&self) -> &DMatrix<f64> {
        &self.map
    }

    /// `o`.
    pub fn offset(&self) -> &DVector<f64> {
        &self.offset
    }

    /// Whether `tr(M C M^T)` is summed over the rows' supports (large and sparse `M`).
    pub fn sums_by_rows(&self) -> bool {
        self.supports.is_some()
    }

    /// Probes an affine function `f` of the state (of length `dim`) for its map: `o = f(0)`,
    /// column `j` of `M` is `f(e_j) - f(0)`, probed again at a multiple of `e_j` where `f(0)` is
    /// so large that the difference would lose the column's digits (lifted: the engine's `lift` module). `rows` is
    /// the length of `f`'s value.
    pub fn probe(dim: usize, rows: usize, f: &dyn Fn(&DVector<f64>) -> DVector<f64>) -> Self {
        let offset = f(&DVector::zeros(dim));
        let difference = |z: &DVector<f64>| {
            let v = f(z);
            let scale = v.amax().max(offset.amax());
            (v - &offset, scale)
        };
        let cols: Vec<DVector<f64>> = (0..dim).map(|j| super::lift::linear_column(dim, j, 1.0, &difference)).collect();
        let map = if cols.is_empty() { DMatrix::zeros(rows, 0) } else { DMatrix::from_columns(&cols) };
        Self::new(map, offset)
    }

    /// Probes an affine function `f` of the state measured from `origin = z_ref` (the
    /// coordinates of [`RoundMaps::probe_at`](super::RoundMaps::probe_at)): the observable of
    /// `e -> f(z_ref + e)`, with `o = f(z_ref)` evaluated at `z_ref` itself (exactly 0 when `f` is
    /// an error or a gradient written as `H (z - z*)` and `z_ref = z*`) and column `j` of `M` the
    /// linear part `f(e_j) - f(0)`.
    pub fn probe_at(dim: usize, rows: usize, origin: &DVector<f64>, f: &dyn Fn(&DVector<f64>) -> DVector<f64>) -> Self {
        let at_origin = f(origin);
        let linear = Self::probe(dim, rows, f);
        Self::new(linear.map, at_origin)
    }

    /// `E||M z + o||^2` from the moments `mu = E z`, `C = Cov z`.
    ///
    /// # Formula
    /// `tr(M C M^T) + ||M mu + o||^2`: two non-negative terms, no cancellation, no clamp. A
    /// moment that is not finite gives a value that is not finite (NaN or `+inf`), which the
    /// verdicts never read as a number.
    ///
    /// # Accuracy
    /// Each term is accurate to a few ulps of itself, except that `M mu + o` carries the
    /// rounding of `mu` (`~ eps ||mu||` absolute): near a distant optimum `z*`, measure the state
    /// from it ([`Observable::probe_at`]) so that the mean is the error itself.
    ///
    /// # Cost
    /// `tr(M C M^T)` as `(M C) .* M` costs `rows D^2`. When that is large and the rows of `M`
    /// are sparse (a client's gradient reads `u` and its own `v_i`), it is summed row by row over
    /// each row's support `S_r` instead, `sum_r m_r[S_r]^T C[S_r, S_r] m_r[S_r]`, at
    /// `sum_r |S_r|^2` (the same value up to rounding; tests hold the two within 1e-12 relative).
    pub fn expected_square(&self, m: &Moments) -> f64 {
        let map = &self.map;
        if map.nrows() == 0 {
            return 0.0;
        }
        let spread = match &self.supports {
            Some(supports) => trace_by_rows(map, &m.cov, supports),
            None => self.trace_dense(&m.cov),
        };
        spread + (map * &m.mean + &self.offset).norm_squared()
    }

    /// `E||M[r..r+len, :] z + o[r..r+len]||^2`: [`Observable::expected_square`] of the
    /// observable made of these rows alone, with its bits.
    ///
    /// # Cost
    /// Where that observable is small and dense (fewer than six rows or columns, below the sparse
    /// threshold) no row is copied: `tr(M_b C M_b^T) = sum_j sum_r (M_b C)[r, j] M_b[r, j]` is
    /// summed in the order nalgebra sums `(M_b C) .* M_b` ([`super::column_order`]), and the mean
    /// part is the block's own rows of `M mu + o`. Otherwise the rows are copied.
    pub fn rows_expected_square(&self, r: usize, len: usize, m: &Moments) -> f64 {
        let d = self.map.ncols();
        let small = len <= NALGEBRA_SMALL_DIM || d <= NALGEBRA_SMALL_DIM;
        if len == 0 || d == 0 || !small || len as f64 * (d as f64).powi(2) >= SPARSE_ROWS_MIN_FLOPS {
            return Observable::new(self.map.rows(r, len).into_owned(), self.offset.rows(r, len).into_owned()).expected_square(m);
        }
        let spread = block_trace(&self.map, r, len, &m.cov);
        let mean = DVector::from_iterator(len, (r..r + len).map(|row| row_times(&self.map, row, |c| m.mean[c]) + self.offset[row]));
        spread + mean.norm_squared()
    }

    /// `tr(M C M^T)` as `(M C) .* M` summed: the dense evaluation.
    pub fn trace_dense(&self, p: &DMatrix<f64>) -> f64 {
        (&self.map * p).component_mul(&self.map).sum()
    }

    /// `tr(M C M^T)` summed row by row over each row's nonzero columns: the sparse evaluation.
    pub fn trace_sparse(&self, p: &DMatrix<f64>) -> f64 {
        match &self.supports {
            Some(s) => trace_by_rows(&self.map, p, s),
            None => trace_by_rows(&self.map, p, &row_supports(&self.map)),
        }
    }
}

/// Columns of `M_b C` formed side by side in [`block_trace`].
const SIDE_BY_SIDE: usize = 4;

/// `sum_j sum_r (M_b C)[r, j] M_b[r, j]` for the rows `r..r+len` of `map` (`M_b`), in that order,
/// each `(M_b C)[r, j]` summed as [`row_times`] sums it. The entries of [`SIDE_BY_SIDE`]
/// consecutive columns `j` are formed together: their sums are independent, each in its own
/// order, so the processor overlaps them and every bit is the one-at-a-time sum's.
fn block_trace(map: &DMatrix<f64>, r: usize, len: usize, cov: &DMatrix<f64>) -> f64 {
    let (rows, d) = map.shape();
    let (s, cs) = (map.as_slice(), cov.as_slice());
    let mut entries = vec![0.0; SIDE_BY_SIDE * len];
    let mut spread = 0.0;
    let mut j0 = 0;
    while j0 < d {
        let width = SIDE_BY_SIDE.min(d - j0);
        let mut i = 0;
        while i < len {
            let row = r + i;
            if width == SIDE_BY_SIDE && i + 1 < len {
                // Two rows at once: eight sums side by side, sharing the loads of the columns.
                let col = |q: usize| &cs[(j0 + q) * d..(j0 + q + 1) * d];
                let (c0, c1, c2, c3) = (col(0), col(1), col(2), col(3));
                let (a, b) = (s[row], s[row + 1]);
                let mut acc = [a * c0[0], a * c1[0], a * c2[0], a * c3[0]];
                let mut bcc = [b * c0[0], b * c1[0], b * c2[0], b * c3[0]];
                for c in 1..d {
                    let (a, b) = (s[c * rows + row], s[c * rows + row + 1]);
                    acc[0] += a * c0[c];
                    acc[1] += a * c1[c];
                    acc[2] += a * c2[c];
                    acc[3] += a * c3[c];
                    bcc[0] += b * c0[c];
                    bcc[1] += b * c1[c];
                    bcc[2] += b * c2[c];
                    bcc[3] += b * c3[c];
                }
                for (q, (x, y)) in acc.into_iter().zip(bcc).enumerate() {
                    entries[q * len + i] = x;
                    entries[q * len + i + 1] = y;
                }
                i += 2;
                continue;
            }
            if width == SIDE_BY_SIDE {
                let col = |q: usize| &cs[(j0 + q) * d..(j0 + q + 1) * d];
                let (c0, c1, c2, c3) = (col(0), col(1), col(2), col(3));
                let a = s[row];
                let mut acc = [a * c0[0], a * c1[0], a * c2[0], a * c3[0]];
                for c in 1..d {
                    let a = s[c * rows + row];
                    acc[0] += a * c0[c];
                    acc[1] += a * c1[c];
                    acc[2] += a * c2[c];
                    acc[3] += a * c3[c];
                }
                for (q, x) in acc.into_iter().enumerate() {
                    entries[q * len + i] = x;
                }
            } else {
                for q in 0..width {
                    entries[q * len + i] = row_times(map, row, |c| cs[(j0 + q) * d + c]);
                }
            }
            i += 1;
        }
        for q in 0..width {
            for i in 0..len {
                spread += entries[q * len + i] * s[(j0 + q) * rows + r + i];
            }
        }
        j0 += width;
    }
    spread
}

/// The columns where each row of `m` is nonzero.
fn row_supports(m: &DMatrix<f64>) -> Vec<Vec<usize>> {
    (0..m.nrows()).map(|r| (0..m.ncols()).filter(|&c| m[(r, c)] != 0.0).collect()).collect()
}

/// `tr(M P M^T) = sum_r sum_{a, b in S_r} m_ra P_ab m_rb` over the rows' supports `S_r`.
fn trace_by_rows(m: &DMatrix<f64>, p: &DMatrix<f64>, supports: &[Vec<usize>]) -> f64 {
    supports.iter().enumerate().map(|(r, s)| s.iter().map(|&a| m[(r, a)] * s.iter().map(|&b| p[(a, b)] * m[(r, b)]).sum::<f64>()).sum::<f64>()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_square_of_a_point_mass_is_the_squared_image() {
        let obs = Observable::new(DMatrix::from_row_slice(1, 2, &[1.0, 2.0]), DVector::from_vec(vec![-1.0]));
        let point = Moments::point(DVector::from_vec(vec![3.0, 0.5]));
        // M z + o = 3 + 1 - 1 = 3.
        assert!((obs.expected_square(&point) - 9.0).abs() < 1e-12);
        // Adding variance 0.25 on the first coordinate adds 0.25.
        let mut spread = point.clone();
        spread.cov[(0, 0)] += 0.25;
        assert!((obs.expected_square(&spread) - 9.25).abs() < 1e-12);
    }

    #[test]
    fn a_row_block_has_the_bits_of_the_observable_of_its_rows() {
        let (rows, d) = (7, 9);
        let map = DMatrix::from_fn(rows, d, |i, j| ((i * d + j) as f64 * 0.61).sin() * if (i + j) % 4 == 0 { 0.0 } else { 3.0 });
        let offset = DVector::from_fn(rows, |i, _| (i as f64 * 0.7).cos() / 7.0);
        let root = DMatrix::from_fn(d, d, |i, j| ((i + 2 * j) as f64 * 0.43).cos() / 3.0);
        let m = Moments { mean: DVector::from_fn(d, |j, _| (j as f64).sqrt() - 1.1), cov: &root * root.transpose() };
        let obs = Observable::new(map.clone(), offset.clone());
        for (r, len) in [(0, 2), (3, 2), (5, 2), (0, 5), (1, 6), (0, 7), (4, 0)] {
            let alone = Observable::new(map.rows(r, len).into_owned(), offset.rows(r, len).into_owned());
            assert_eq!(obs.rows_expected_square(r, len, &m).to_bits(), alone.expected_square(&m).to_bits(), "rows {r}..{}", r + len);
        }
        // Negative control: another block's value differs.
        assert_ne!(obs.rows_expected_square(0, 2, &m), obs.rows_expected_square(3, 2, &m));
    }

    #[test]
    fn a_moment_that_is_not_finite_is_never_clamped() {
        let obs = Observable::new(DMatrix::identity(2, 2), DVector::zeros(2));
        let mut m = Moments::point(DVector::from_vec(vec![1.0, 2.0]));
        m.cov[(0, 0)] = f64::NAN;
        assert!(obs.expected_square(&m).is_nan());
        m.cov[(0, 0)] = f64::INFINITY;
        assert!(!obs.expected_square(&m).is_finite(), "inf or NaN (0 inf in the product), never a number");
        // Negative control: the same observable of finite moments is the finite 5.
        m.cov[(0, 0)] = 0.0;
        assert_eq!(obs.expected_square(&m), 5.0);
    }
}
