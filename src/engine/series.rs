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
    /// covariance inspected was not finite (the run overflowed). A state larger than
    /// [`FULL_INSPECTION_MAX_DIM`] whose maps have a block structure inspects each component's
    /// principal block instead ([`min_block_eigenvalue`]).
    pub min_covariance_eigenvalue: f64,
    /// `||P||_max = ||C + mu mu^T||_max` at the end, the scale for the diagnostic.
    pub second_moment_scale: f64,
}

/// Rounds between two PSD inspections of the covariance (an eigen-decomposition each).
pub const PSD_INSPECTION_PERIOD: usize = 25;

/// The largest state whose whole covariance is decomposed at an inspection (`~4 D^3 / 3`
/// flops, about the work of `D / 15` structured rounds); larger ones read principal blocks.
pub const FULL_INSPECTION_MAX_DIM: usize = 400;

/// The PSD diagnostic of `m` (see [`MomentSeries::min_covariance_eigenvalue`]).
fn inspect(maps: &RoundMaps, m: &Moments) -> f64 {
    if m.dim() > FULL_INSPECTION_MAX_DIM {
        if let Some(blocks) = maps.component_blocks() {
            return min_block_eigenvalue(&blocks, m);
        }
    }
    m.min_covariance_eigenvalue()
}

/// The smallest eigenvalue of the principal blocks `blocks` of `(C + C^T)/2`, an upper bound on
/// that of `C` (Cauchy's interlacing): a negative value shows that rounding broke positive
/// semidefiniteness, at `n (s + b)^3` flops instead of `D^3` for blocks of the shared and own
/// sizes `s` and `b`. NaN when an entry of `C` is not finite (never decomposed).
pub fn min_block_eigenvalue(blocks: &[Vec<usize>], m: &Moments) -> f64 {
    if !m.is_finite() {
        return f64::NAN;
    }
    let c = &m.cov;
    blocks
        .iter()
        .map(|idx| DMatrix::from_fn(idx.len(), idx.len(), |r, k| 0.5 * (c[(idx[r], idx[k])] + c[(idx[k], idx[r])])).symmetric_eigenvalues().min())
        .fold(f64::INFINITY, nan_min)
}

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
/// calling `observe(m)` at the start of each round; only the observations are kept.
///
/// # Threads
/// A round's observation (and PSD inspection) only reads the round's moments. On a pool of more
/// than one thread the rounds go in batches of [`overlap_batch`] moments: while one thread
/// propagates the next batch, another observes the last one ([`rayon::join`] once a batch, so
/// handing work over costs little against the batch). Each observation and each propagation is
/// computed as it would be alone, so the results are the same bits on any number of threads; the
/// observations are kept in round order.
pub fn propagate_series<R: Send>(
    maps: &RoundMaps,
    inc: &InclusionMoments,
    m0: Moments,
    rounds: usize,
    observe: impl Fn(&Moments) -> R + Sync,
) -> MomentSeries<R> {
    let look = |t: usize, m: &Moments| {
        let inspected = t.is_multiple_of(PSD_INSPECTION_PERIOD) || t + 1 == rounds;
        (observe(m), inspected.then(|| inspect(maps, m)))
    };
    let mut seen = Vec::with_capacity(rounds);
    let batch = if rayon::current_num_threads() > 1 { overlap_batch(m0.dim()) } else { 0 };
    let last = if batch == 0 {
        let (mut m, mut next) = (m0, empty_moments());
        for t in 0..rounds {
            seen.push(look(t, &m));
            maps.propagate_into(&m, inc, &mut next);
            std::mem::swap(&mut m, &mut next);
        }
        m
    } else {
        // `done` holds the moments of rounds `first..first + done.len()`; the next batch
        // continues from its last one.
        let (mut done, mut next, mut first) = (vec![m0], Vec::new(), 0);
        while first < rounds {
            let start = first + done.len();
            let count = batch.min((rounds + 1).saturating_sub(start));
            next.resize_with(count, empty_moments);
            let from = done.last().expect("a batch is never empty");
            let observed = (first..rounds.min(start)).zip(&done);
            let ((), looked) = rayon::join(|| propagate_batch(maps, inc, from, &mut next), || observed.map(|(t, m)| look(t, m)).collect::<Vec<_>>());
            seen.extend(looked);
            if count == 0 {
                break;
            }
            std::mem::swap(&mut done, &mut next);
            first = start;
        }
        done.pop().expect("a batch is never empty")
    };
    let mut values = Vec::with_capacity(rounds);
    let mut min_eig = f64::INFINITY;
    for (value, eig) in seen {
        values.push(value);
        if let Some(e) = eig {
            min_eig = nan_min(min_eig, e);
        }
    }
    MomentSeries { values, min_covariance_eigenvalue: min_eig, second_moment_scale: last.second_moment_scale() }
}

/// Moments without coordinates, to be overwritten by [`RoundMaps::propagate_into`].
fn empty_moments() -> Moments {
    Moments::new(DVector::zeros(0), DMatrix::zeros(0, 0))
}

/// `out[j]` = the moments `j + 1` rounds after `from`.
fn propagate_batch(maps: &RoundMaps, inc: &InclusionMoments, from: &Moments, out: &mut [Moments]) {
    for j in 0..out.len() {
        let (head, tail) = out.split_at_mut(j);
        maps.propagate_into(head.last().unwrap_or(from), inc, &mut tail[0]);
    }
}

/// Moments held by one batch of [`propagate_series`] on more than one thread: up to
/// [`OVERLAP_MAX_BATCH`], with two batches of covariances within [`OVERLAP_MAX_BYTES`]; 0 (no
/// overlap, one round at a time) for a state of fewer than [`OVERLAP_MIN_DIM`] coordinates, whose
/// rounds take microseconds, or one too large for two batches of two moments.
pub fn overlap_batch(dim: usize) -> usize {
    let per_moments = (dim * dim + dim) * std::mem::size_of::<f64>();
    let batch = (OVERLAP_MAX_BYTES / (2 * per_moments.max(1))).min(OVERLAP_MAX_BATCH);
    if dim < OVERLAP_MIN_DIM || batch < 2 {
        0
    } else {
        batch
    }
}

/// The smallest state whose observations run beside its propagation ([`overlap_batch`]).
pub const OVERLAP_MIN_DIM: usize = 16;

/// The most moments in one batch ([`overlap_batch`]).
pub const OVERLAP_MAX_BATCH: usize = 16;

/// The memory two batches of moments may take ([`overlap_batch`]): 16 MiB.
pub const OVERLAP_MAX_BYTES: usize = 16 << 20;

/// The moments of `s0 + N xi`, `xi ~ N(0, I)`, for a function `f(xi)` affine in `len` standard
/// normal values: `mu = f(0)`, `C = sum_l (f(e_l) - mu)(f(e_l) - mu)^T`.
pub fn affine_gaussian_moments(len: usize, f: &dyn Fn(&[f64]) -> DVector<f64>) -> Moments {
    let s0 = f(&vec![0.0; len]);
    let d = s0.len();
    let mut cov = DMatrix::zeros(d, d);
    let mut noise = vec![0.0; len];
    for l in 0..len {
        noise[l] = 1.0;
        let col = f(&noise) - &s0;
        noise[l] = 0.0;
        add_outer_product(&mut cov, &col);
    }
    Moments::new(s0, cov)
}

/// `cov += col col^T`, entry by entry `cov[r, c] + col[r] col[c]` as the dense product and sum
/// compute it. A column that is finite updates only the entries on its support: elsewhere the
/// dense sum adds `+-0` to an entry that is never `-0` (it starts at `+0` and a sum of
/// products that cancels rounds to `+0`), which changes no bit. A column that is not finite
/// goes through every entry, so that `0 x inf` still makes the NaN it makes densely.
fn add_outer_product(cov: &mut DMatrix<f64>, col: &DVector<f64>) {
    if !col.iter().all(|x| x.is_finite()) {
        *cov += col * col.transpose();
        return;
    }
    let support: Vec<usize> = (0..col.len()).filter(|&r| col[r] != 0.0).collect();
    for &c in &support {
        for &r in &support {
            cov[(r, c)] += col[r] * col[c];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_eigenvalues_bound_the_smallest_from_above_and_see_a_negative_block() {
        let g = DMatrix::from_fn(5, 5, |r, c| ((r * 3 + c * 7) % 5) as f64 - 2.0 + if r == c { 0.5 } else { 0.0 });
        let m = Moments::new(DVector::zeros(5), &g * g.transpose());
        let blocks = vec![vec![0, 1, 2], vec![0, 3, 4]];
        let full = m.min_covariance_eigenvalue();
        assert!(min_block_eigenvalue(&blocks, &m) >= full - 1e-12, "interlacing");
        // Negative control: a covariance with a negative direction inside a block is seen.
        let mut bad = m.clone();
        bad.cov[(3, 3)] = -1.0;
        assert!(min_block_eigenvalue(&blocks, &bad) < 0.0);
        bad.cov[(4, 4)] = f64::NAN;
        assert!(min_block_eigenvalue(&blocks, &bad).is_nan());
    }

    #[test]
    fn the_outer_product_on_its_support_has_the_bits_of_the_dense_sum() {
        let bits = |m: &DMatrix<f64>| m.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        // Sparse columns (with a -0 among the zeros), columns that cancel earlier entries to 0, and
        // a dense one, added in turn; then columns that are not finite.
        let d = 9;
        let column = |l: usize| {
            DVector::from_fn(d, |r, _| {
                if (r + l).is_multiple_of(3) {
                    ((r * 5 + l * 3) as f64 * 0.37).sin()
                } else if r == 4 {
                    -0.0
                } else {
                    0.0
                }
            })
        };
        let mut columns: Vec<DVector<f64>> = (0..6).map(column).collect();
        columns.push(-columns[0].clone());
        columns.push(DVector::from_fn(d, |r, _| 1.0 + r as f64 / 7.0));
        for bad in [f64::INFINITY, f64::NAN] {
            let mut col = column(1);
            col[2] = bad;
            columns.push(col);
        }
        let (mut sparse, mut dense) = (DMatrix::zeros(d, d), DMatrix::zeros(d, d));
        for (l, col) in columns.iter().enumerate() {
            add_outer_product(&mut sparse, col);
            dense += col * col.transpose();
            assert_eq!(bits(&sparse), bits(&dense), "after column {l}");
        }
        assert!(dense.iter().any(|x| x.is_nan()), "the columns that are not finite reach the sum");
        // Negative control: the support alone on a column that is not finite misses the NaNs
        // that `0 x inf` makes densely.
        let mut support_only = DMatrix::zeros(d, d);
        let col = &columns[8];
        let support: Vec<usize> = (0..d).filter(|&r| col[r] != 0.0).collect();
        for &c in &support {
            for &r in &support {
                support_only[(r, c)] += col[r] * col[c];
            }
        }
        assert_ne!(bits(&support_only), bits(&(col * col.transpose())));
    }
}
