//! nalgebra's small products summed in nalgebra's own order, without allocating.
//!
//! A product `A B` with `A` of at most 5 rows or columns (nalgebra's `SMALL_DIM`), and every
//! matrix-vector product, is formed by nalgebra one column of `B` at a time: `y = A[:, 0] b_0`,
//! then `y = A[:, c] b_c + y` for `c = 1, 2, ...` (`gemv`). Rows are independent, so one row of
//! it summed here in that order has the same bits as the product computed whole. The callers use
//! this where a hot loop would otherwise allocate a small matrix per call; tests hold each one to
//! the nalgebra expression it replaces, bit for bit.

use nalgebra::DMatrix;

/// nalgebra forms `A B` column by column (the order above) when `A` has at most this many rows
/// or columns, or `B` at most this many columns; larger products go to `matrixmultiply`.
pub const NALGEBRA_SMALL_DIM: usize = 5;

/// Row `r` of `A x`, `sum_c A[r, c] x_c`, summed as nalgebra sums it: `A[r, 0] x_0`, then
/// `A[r, c] x_c + y` for `c = 1, 2, ...`; 0 for a matrix without columns.
pub fn row_times(a: &DMatrix<f64>, r: usize, x: impl IntoIterator<Item = f64>) -> f64 {
    let mut x = x.into_iter();
    let Some(x0) = x.next() else { return 0.0 };
    let mut y = a[(r, 0)] * x0;
    for (c, xc) in x.enumerate() {
        y += a[(r, c + 1)] * xc;
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DVector;

    #[test]
    fn a_row_has_the_bits_of_nalgebras_matrix_vector_product() {
        // Entries with rounding in every product and sum; a different order changes bits.
        let a = DMatrix::from_fn(3, 7, |i, j| ((i * 7 + j) as f64 * 0.37).sin() * 10f64.powi((j % 3) as i32 - 1));
        let x = DVector::from_fn(7, |j, _| (j as f64 * 1.3).cos() / 3.0);
        let whole = &a * &x;
        for r in 0..3 {
            assert_eq!(row_times(&a, r, x.iter().copied()).to_bits(), whole[r].to_bits());
        }
        // Negative control: summing the other way round differs somewhere.
        let reversed: Vec<f64> = (0..3).map(|r| (0..7).rev().fold(0.0, |y, c| a[(r, c)] * x[c] + y)).collect();
        assert!((0..3).any(|r| reversed[r].to_bits() != whole[r].to_bits()));
        assert_eq!(row_times(&DMatrix::zeros(2, 0), 1, std::iter::empty()), 0.0);
    }
}
