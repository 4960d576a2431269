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

/// Row `r` of `A x`, `sum_c A[r, c] x(c)`, summed as nalgebra sums it: `A[r, 0] x(0)`, then
/// `A[r, c] x(c) + y` for `c = 1, 2, ...` over `A`'s columns; 0 for a matrix without columns.
#[inline]
pub fn row_times(a: &DMatrix<f64>, r: usize, x: impl Fn(usize) -> f64) -> f64 {
    row_times_of(a.as_slice(), a.nrows(), r, x)
}

/// [`row_times`] of `A` given column-major in `a` with `rows` rows.
#[inline]
fn row_times_of(a: &[f64], rows: usize, r: usize, x: impl Fn(usize) -> f64) -> f64 {
    let cols = a.len().checked_div(rows).unwrap_or(0);
    if cols == 0 {
        return 0.0;
    }
    let mut y = a[r] * x(0);
    for c in 1..cols {
        y += a[c * rows + r] * x(c);
    }
    y
}

/// `out = A B` with the bits of nalgebra's `A * B` (`B` given column-major, `k x cols`, in
/// `b`; `out` `A.nrows() x cols`). Where nalgebra takes its small path (not all of `out`'s and
/// `A`'s dimensions above [`NALGEBRA_SMALL_DIM`]) each column is summed here in its order,
/// `A[:, 0] b_0`, then `+ A[:, c] b_c` ([`row_times`] per entry), without nalgebra's per-column
/// dispatch; otherwise `mul_to` (`matrixmultiply`) forms it.
pub fn product_into(a: &DMatrix<f64>, b: &[f64], cols: usize, out: &mut [f64]) {
    product_of_slices(a.as_slice(), a.shape(), b, cols, out);
}

/// [`product_into`] with the `rows x k` matrix `A` given column-major in `a` (a block of columns
/// of a larger matrix, say): the same bits as nalgebra's product of that matrix or view.
pub fn product_of_slices(a: &[f64], (rows, k): (usize, usize), b: &[f64], cols: usize, out: &mut [f64]) {
    assert!(a.len() == rows * k && b.len() == k * cols && out.len() == rows * cols, "product of {rows} x {k} by {} entries into {}", b.len(), out.len());
    let small = rows <= NALGEBRA_SMALL_DIM || cols <= NALGEBRA_SMALL_DIM || k <= NALGEBRA_SMALL_DIM;
    if !small {
        let a = nalgebra::DMatrixView::from_slice(a, rows, k);
        let b = nalgebra::DMatrixView::from_slice(b, k, cols);
        let mut y = nalgebra::DMatrixViewMut::from_slice(out, rows, cols);
        a.mul_to(&b, &mut y);
        return;
    }
    if k == 0 {
        out.fill(0.0);
        return;
    }
    match rows {
        1 => few_rows_product::<1>(a, b, k, out),
        2 => few_rows_product::<2>(a, b, k, out),
        3 => few_rows_product::<3>(a, b, k, out),
        4 => few_rows_product::<4>(a, b, k, out),
        _ => {
            // Each entry summed in a register (independent sums, which the processor overlaps).
            for (y, b_j) in out.chunks_exact_mut(rows.max(1)).zip(b.chunks_exact(k)) {
                for (r, y) in y.iter_mut().enumerate() {
                    *y = row_times_of(a, rows, r, |c| b_j[c]);
                }
            }
        }
    }
}

/// [`product_into`]'s small path for an `A` of `R` rows (`a` column-major, `k >= 1` columns): a
/// column of the product as `R` sums side by side in an array, each `A[r, 0] b_0`, then
/// `+ A[r, c] b_c`.
fn few_rows_product<const R: usize>(a: &[f64], b: &[f64], k: usize, out: &mut [f64]) {
    for (y, b_j) in out.chunks_exact_mut(R).zip(b.chunks_exact(k)) {
        let mut acc: [f64; R] = std::array::from_fn(|r| a[r] * b_j[0]);
        for (a_c, b_cj) in a.chunks_exact(R).zip(b_j).skip(1) {
            for (acc, a_rc) in acc.iter_mut().zip(a_c) {
                *acc += a_rc * b_cj;
            }
        }
        y.copy_from_slice(&acc);
    }
}

/// `sum_i a_i b_i` summed as nalgebra's `dot` sums a dynamic vector (and so as `A^T x`, whose
/// entries are such dots, `tr_mul`): eight running sums over the blocks of eight, combined as
/// `(s0 + s4) + (s1 + s5) + (s2 + s6) + (s3 + s7)` from 0, then the remaining terms one by one.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "dot of vectors of different lengths");
    let n = a.len();
    let mut acc = [0.0f64; 8];
    let mut i = 0;
    while n - i >= 8 {
        for (q, s) in acc.iter_mut().enumerate() {
            *s += a[i + q] * b[i + q];
        }
        i += 8;
    }
    let mut res = 0.0;
    res += acc[0] + acc[4];
    res += acc[1] + acc[5];
    res += acc[2] + acc[6];
    res += acc[3] + acc[7];
    for k in i..n {
        res += a[k] * b[k];
    }
    res
}

/// `sum_i a_i b_i` summed from 0 one term at a time in storage order, as nalgebra sums
/// `A.component_mul(&B).sum()` for two matrices of one shape (`tr(A^T B)`; not [`dot`]'s order).
pub fn entrywise_dot(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "entrywise product of matrices of different sizes");
    a.iter().zip(b).fold(0.0, |s, (x, y)| s + x * y)
}

/// `||v||^2` as nalgebra's `norm_squared` sums a vector: `0 + dot(v, v)` ([`dot`]).
pub fn norm_squared(v: &[f64]) -> f64 {
    0.0 + dot(v, v)
}

/// `||a - b||^2` as nalgebra's `(a - b).norm_squared()` sums it, with `diff` (of the same length)
/// holding the difference.
pub fn squared_distance(a: &[f64], b: &[f64], diff: &mut [f64]) -> f64 {
    for ((d, x), y) in diff.iter_mut().zip(a).zip(b) {
        *d = x - y;
    }
    norm_squared(diff)
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
            assert_eq!(row_times(&a, r, |c| x[c]).to_bits(), whole[r].to_bits());
        }
        // Negative control: summing the other way round differs somewhere.
        let reversed: Vec<f64> = (0..3).map(|r| (0..7).rev().fold(0.0, |y, c| a[(r, c)] * x[c] + y)).collect();
        assert!((0..3).any(|r| reversed[r].to_bits() != whole[r].to_bits()));
        assert_eq!(row_times(&DMatrix::zeros(2, 0), 1, |_| f64::NAN), 0.0);
    }

    #[test]
    fn a_product_has_the_bits_of_nalgebras_product() {
        // Small paths (a dimension of at most five) and the matrixmultiply one (all above five).
        let shapes = [(2, 4, 14), (2, 2, 2), (5, 9, 7), (9, 3, 9), (7, 8, 1), (3, 0, 4), (6, 7, 8), (1, 1, 1), (4, 5, 3), (3, 7, 2), (1, 6, 9), (4, 1, 6)];
        for (rows, k, cols) in shapes {
            let a = DMatrix::from_fn(rows, k, |i, j| ((i * 7 + j) as f64 * 0.37).sin() * 10f64.powi((j % 3) as i32 - 1));
            let b = DMatrix::from_fn(k, cols, |i, j| ((i + 3 * j) as f64 * 0.91).cos() / 3.0);
            let mut out = vec![f64::NAN; rows * cols];
            product_into(&a, b.as_slice(), cols, &mut out);
            let whole = &a * &b;
            assert!(out.iter().zip(whole.iter()).all(|(x, y)| x.to_bits() == y.to_bits()), "{rows} x {k} x {cols}");
        }
        // Negative control: each column summed from its last term differs somewhere.
        let a = DMatrix::from_fn(3, 7, |i, j| ((i * 7 + j) as f64 * 0.37).sin() * 10f64.powi((j % 3) as i32 - 1));
        let b = DMatrix::from_fn(7, 2, |i, j| ((i + j) as f64 * 1.3).cos() / 3.0);
        let whole = &a * &b;
        let reversed = DMatrix::from_fn(3, 2, |r, j| (0..7).rev().fold(0.0, |y, c| a[(r, c)] * b[(c, j)] + y));
        assert!(reversed.iter().zip(whole.iter()).any(|(x, y)| x.to_bits() != y.to_bits()));
    }

    #[test]
    fn a_squared_distance_has_the_bits_of_nalgebras_norm_of_the_difference() {
        for n in [0, 1, 5, 8, 13] {
            let a = DVector::from_fn(n, |i, _| ((i * 3) as f64 * 0.71).sin() * 10f64.powi(i as i32 % 4 - 2));
            let b = DVector::from_fn(n, |i, _| (i as f64 * 1.7).cos() / 3.0);
            let mut diff = vec![f64::NAN; n];
            assert_eq!(squared_distance(a.as_slice(), b.as_slice(), &mut diff).to_bits(), (&a - &b).norm_squared().to_bits(), "n = {n}");
            assert_eq!(norm_squared(a.as_slice()).to_bits(), a.norm_squared().to_bits(), "n = {n}");
        }
        // Negative control: the expanded form ||a||^2 - 2 a.b + ||b||^2 gives other bits.
        let (a, b) = (DVector::from_fn(13, |i, _| 1.0 + i as f64 * 0.1), DVector::from_fn(13, |i, _| 1.0 + i as f64 * 0.1001));
        let expanded = a.norm_squared() - 2.0 * a.dot(&b) + b.norm_squared();
        assert_ne!(expanded.to_bits(), (&a - &b).norm_squared().to_bits());
    }

    #[test]
    fn an_entrywise_dot_has_the_bits_of_nalgebras_component_mul_sum() {
        for (r, c) in [(0, 3), (1, 1), (3, 4), (7, 9)] {
            let a = DMatrix::from_fn(r, c, |i, j| ((i * 5 + j) as f64 * 0.73).sin() * 10f64.powi((i + j) as i32 % 4 - 2));
            let b = DMatrix::from_fn(r, c, |i, j| ((i + 2 * j) as f64 * 1.1).cos() / 3.0);
            assert_eq!(entrywise_dot(a.as_slice(), b.as_slice()).to_bits(), a.component_mul(&b).sum().to_bits(), "{r} x {c}");
        }
        // Negative control: 8-way sums ([`dot`]) give other bits somewhere.
        let differs = (1..40).any(|s| {
            let a: Vec<f64> = (0..21).map(|i| ((i * s) as f64 * 0.37).sin() * 10f64.powi(i % 5 - 2)).collect();
            let b: Vec<f64> = (0..21).map(|i| (i as f64 * 0.53 + s as f64).cos()).collect();
            entrywise_dot(&a, &b).to_bits() != dot(&a, &b).to_bits()
        });
        assert!(differs);
    }

    #[test]
    fn a_dot_has_the_bits_of_nalgebras_dot_and_tr_mul() {
        for n in [0, 1, 2, 7, 8, 9, 16, 21] {
            let a = DVector::from_fn(n, |i, _| ((i * 3) as f64 * 0.71).sin() * 10f64.powi(i as i32 % 4 - 2));
            let b = DVector::from_fn(n, |i, _| (i as f64 * 1.7).cos() / 3.0);
            assert_eq!(dot(a.as_slice(), b.as_slice()).to_bits(), a.dot(&b).to_bits(), "n = {n}");
            let m = DMatrix::from_fn(n, 3, |i, j| a[i] * (j as f64 + 0.5));
            let t = m.tr_mul(&b);
            for j in 0..3 {
                assert_eq!(dot(m.column(j).as_slice(), b.as_slice()).to_bits(), t[j].to_bits());
            }
        }
        // Negative control: summed one term at a time, 21 terms give other bits somewhere.
        let differs = (1..40).any(|s| {
            let a: Vec<f64> = (0..21).map(|i| ((i * s) as f64 * 0.37).sin() * 10f64.powi(i % 5 - 2)).collect();
            let b: Vec<f64> = (0..21).map(|i| (i as f64 * 0.53 + s as f64).cos()).collect();
            dot(&a, &b).to_bits() != a.iter().zip(&b).fold(0.0, |r, (x, y)| r + x * y).to_bits()
        });
        assert!(differs);
    }
}
