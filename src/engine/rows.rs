//! The propagation of [`RoundMaps::propagate`](super::RoundMaps::propagate) for a round that
//! changes a few rows of the state only: a client's local step that rewrites its own block and
//! reads the server's, with a dense base map (the step pulls the block towards the server's
//! model even when no sample is drawn) or a diagonal one (the same step on the block's offset from
//! the server's model), while every other coordinate passes through unchanged.
//!
//! Let `R` be the rows where the round differs from the identity: a row of `A0` other than `e_r`,
//! a non-zero `c0[r]`, or a row a component writes. Outside `R` the round copies the state, so
//! with `M_R = A0[R, :] + p Abar[R, :]` the module formula of [`super::affine`] reads
//!
//! ```text
//! mu'[R]   = A0[R, :] mu + c0[R] + p (Abar[R, :] mu + b_sum[R])        mu'[R^c] = mu[R^c]
//! C'[R, :] = M_R C  (and its transpose C'[:, R])                       C'[R^c, R^c] = C[R^c, R^c]
//! C'[R, R] = A0_R C A0_R^T + p (A0_R C Abar_R^T + Abar_R C A0_R^T) + q Abar_R C Abar_R^T
//!            + (p2 - q) sum_i (A_i C A_i^T + y_i y_i^T) + (q - p^2) Y_R Y_R^T + p2 sum_i W_i W_i^T [R, R]
//! ```
//!
//! (`A0_R = A0[R, :]`, `Abar_R = Abar[R, :]`; the cross rows follow because the sample
//! indicators are independent of the state, so `Cov(z[R^c], z'[R]) = C[R^c, :] M_R^T`). Both
//! read only the columns `K` where they are not zero (the server's block and the client's own),
//! so `A0_R C = A0[R, K] C[K, :]`: two products of `|R| x |K|` by `|K| x D` and a copy of `C`
//! cost `4 |R| |K| D + D^2` per round, against about `8 D^3` for the dense evaluation with a
//! dense base. The terms are those of the dense evaluation, summed in another
//! order: the two agree to rounding (tests hold them within 1e-12 relative).

use std::cell::RefCell;

use nalgebra::{DMatrix, DVector};

use super::column_order::product_into;
use super::design::InclusionMoments;
use super::moments::{Moments, OwnTerm, OwnTerms, RankOne, RankOneRun, RunScratch};

/// A component's term on the rows it writes, as probed.
pub(super) struct Term<'a> {
    pub rows: &'a [usize],
    pub cols: &'a [usize],
    pub a: &'a DMatrix<f64>,
    pub b: &'a DVector<f64>,
    pub rank_one: Option<&'a RankOne>,
}

/// The rows a round changes and its maps restricted to them (see the module's formula).
#[derive(Debug, Clone)]
pub(super) struct ChangedRows {
    /// `R`, ascending.
    rows: Vec<usize>,
    /// `K`: the columns `A0[R, :]` or `Abar[R, :]` read (the others are 0 there), ascending.
    cols: Vec<usize>,
    /// `A0[R, K]` and `Abar[R, K]`.
    a0: DMatrix<f64>,
    abar: DMatrix<f64>,
    /// `A0[R, K]^T` and `Abar[R, K]^T`, the right factors of the `R x R` block.
    a0_t: DMatrix<f64>,
    abar_t: DMatrix<f64>,
    /// `c0[R]`, `b_sum[R]` and `sum_i W_i W_i^T [R, R]`.
    c0: DVector<f64>,
    b_sum: DVector<f64>,
    noise_cov: DMatrix<f64>,
    /// The components' terms, their rows as positions in `R`, in order; consecutive rank-one
    /// terms on the same rows and columns packed into one run.
    terms: Vec<OwnGroup>,
}

/// One or more consecutive components' own terms.
#[derive(Debug, Clone)]
enum OwnGroup {
    /// A term without rank-one factors.
    Term(RowTerm),
    /// Consecutive rank-one terms on the same rows and columns (a batch's samples).
    RankOnes(RankOneRun),
}

/// A component's term with its rows as positions in `R`.
#[derive(Debug, Clone)]
struct RowTerm {
    at: Vec<usize>,
    cols: Vec<usize>,
    a: DMatrix<f64>,
    b: DVector<f64>,
}

/// The products of one round, in buffers kept from round to round (the module's formula):
/// `mu[K]`, `C[K, :]`, `A0[R, :] mu + c0[R]`, `A0[R, :] C`, `Abar[R, :] C` (`|R| x D`), the same on
/// the columns `K` (`|R| x |K|`), `Abar[R, :] mu + b_sum[R]`, `C'[R, R]` with its two
/// temporaries, and the rank-one runs' buffers. Each product has the bits of nalgebra's `*`
/// ([`product_into`]).
#[derive(Debug, Default)]
struct RoundBuffers {
    mu_k: DVector<f64>,
    c_k: DMatrix<f64>,
    w_mean: DVector<f64>,
    a0_c: DMatrix<f64>,
    abar_c: DMatrix<f64>,
    a0_c_k: DMatrix<f64>,
    abar_c_k: DMatrix<f64>,
    y_sum: DVector<f64>,
    next: DMatrix<f64>,
    left: DMatrix<f64>,
    right: DMatrix<f64>,
    runs: RunScratch,
}

thread_local! {
    /// One set of buffers per thread: a round runs on one thread, start to end.
    static BUFFERS: RefCell<RoundBuffers> = RefCell::default();
}

/// `x` with `rows x cols` entries (its values are overwritten by the caller).
fn shaped(x: &mut DMatrix<f64>, rows: usize, cols: usize) {
    if x.shape() != (rows, cols) {
        *x = DMatrix::zeros(rows, cols);
    }
}

/// `x` with `len` entries (its values are overwritten by the caller).
fn sized(x: &mut DVector<f64>, len: usize) {
    if x.len() != len {
        *x = DVector::zeros(len);
    }
}

/// `out = a b + c`, entry by entry after the product (nalgebra's `a * b + c`).
fn times_plus(a: &DMatrix<f64>, b: &DVector<f64>, c: &DVector<f64>, out: &mut DVector<f64>) {
    sized(out, a.nrows());
    product_into(a, b.as_slice(), 1, out.as_mut_slice());
    *out += c;
}

/// `out = a b` with the bits of nalgebra's `a * b` ([`product_into`]).
fn product(a: &DMatrix<f64>, b: &DMatrix<f64>, out: &mut DMatrix<f64>) {
    shaped(out, a.nrows(), b.ncols());
    product_into(a, b.as_slice(), b.ncols(), out.as_mut_slice());
}

/// `R` and `K` of a round (see [`ChangedRows`]), before its maps are gathered.
#[derive(Debug, Clone)]
pub(super) struct Extent {
    rows: Vec<usize>,
    cols: Vec<usize>,
}

impl Extent {
    /// The rows where the round `z' = A0 z + c0 + sum_i delta_i (A_i z + b_i + W_i xi_i)` is not
    /// the identity (`a0(r, c)` is the entry of `A0`), and the columns they read.
    pub fn of(a0: &dyn Fn(usize, usize) -> f64, c0: &DVector<f64>, a_sum: &DMatrix<f64>, terms: &[Term]) -> Self {
        let dim = c0.len();
        let mut changed: Vec<bool> = (0..dim).map(|r| c0[r] != 0.0 || (0..dim).any(|k| a0(r, k) != if k == r { 1.0 } else { 0.0 })).collect();
        for t in terms {
            for &r in t.rows {
                changed[r] = true;
            }
        }
        let rows: Vec<usize> = (0..dim).filter(|r| changed[*r]).collect();
        let cols: Vec<usize> = (0..dim).filter(|&c| rows.iter().any(|&r| a0(r, c) != 0.0 || a_sum[(r, c)] != 0.0)).collect();
        Self { rows, cols }
    }

    /// Flops of one round on these rows and columns: the two `|R| x |K|` by `|K| x D` products
    /// and the copy of `C` (in place, [`ChangedRows::propagate_in_place`], there is no copy).
    pub fn flops(&self, dim: usize) -> f64 {
        let (r, k, d) = (self.rows.len() as f64, self.cols.len() as f64, dim as f64);
        4.0 * r * k * d + d * d
    }
}

impl ChangedRows {
    /// The round's maps on the rows and columns of `extent` ([`Extent::of`] the same maps);
    /// `terms` are the components' terms on their rows.
    pub fn new(
        extent: Extent,
        a0: &dyn Fn(usize, usize) -> f64,
        c0: &DVector<f64>,
        a_sum: &DMatrix<f64>,
        b_sum: &DVector<f64>,
        noise_cov: &DMatrix<f64>,
        terms: &[Term],
    ) -> Self {
        let Extent { rows, cols } = extent;
        let mut at = vec![0; c0.len()];
        for (k, &r) in rows.iter().enumerate() {
            at[r] = k;
        }
        let mut groups: Vec<OwnGroup> = Vec::new();
        for t in terms {
            let at: Vec<usize> = t.rows.iter().map(|&r| at[r]).collect();
            match (t.rank_one, groups.last_mut()) {
                (Some(f), Some(OwnGroup::RankOnes(run))) if run.accepts(&at, f) => run.push(f, t.b),
                (Some(f), _) => groups.push(OwnGroup::RankOnes(RankOneRun::of(&at, f, t.b))),
                (None, _) => groups.push(OwnGroup::Term(RowTerm { at, cols: t.cols.to_vec(), a: t.a.clone(), b: t.b.clone() })),
            }
        }
        let (a0_r, abar_r) =
            (DMatrix::from_fn(rows.len(), cols.len(), |k, l| a0(rows[k], cols[l])), DMatrix::from_fn(rows.len(), cols.len(), |k, l| a_sum[(rows[k], cols[l])]));
        Self {
            a0_t: a0_r.transpose(),
            abar_t: abar_r.transpose(),
            a0: a0_r,
            abar: abar_r,
            c0: DVector::from_fn(rows.len(), |k, _| c0[rows[k]]),
            b_sum: DVector::from_fn(rows.len(), |k, _| b_sum[rows[k]]),
            noise_cov: DMatrix::from_fn(rows.len(), rows.len(), |k, l| noise_cov[(rows[k], rows[l])]),
            rows,
            cols,
            terms: groups,
        }
    }

    /// One round (the module's formula) in place: every product reads the moments before the
    /// round, then the rows and columns `R` are overwritten (the others do not change).
    pub fn propagate_in_place(&self, m: &mut Moments, inc: &InclusionMoments) {
        BUFFERS.with(|b| self.propagate_with(m, inc, &mut b.borrow_mut()));
    }

    /// [`ChangedRows::propagate_in_place`] with the products in `b`.
    fn propagate_with(&self, m: &mut Moments, inc: &InclusionMoments, b: &mut RoundBuffers) {
        let (k_len, dim) = (self.cols.len(), m.cov.ncols());
        sized(&mut b.mu_k, k_len);
        shaped(&mut b.c_k, k_len, dim);
        for (l, &col) in self.cols.iter().enumerate() {
            b.mu_k[l] = m.mean[col];
        }
        for (c_k, cov) in b.c_k.as_mut_slice().chunks_exact_mut(k_len.max(1)).zip(m.cov.as_slice().chunks_exact(dim)) {
            for (x, &col) in c_k.iter_mut().zip(&self.cols) {
                *x = cov[col];
            }
        }
        times_plus(&self.a0, &b.mu_k, &self.c0, &mut b.w_mean);
        let rows = self.rows.len();
        product(&self.a0, &b.c_k, &mut b.a0_c);
        product(&self.abar, &b.c_k, &mut b.abar_c);
        for (on_k, x) in [(&mut b.a0_c_k, &b.a0_c), (&mut b.abar_c_k, &b.abar_c)] {
            shaped(on_k, rows, k_len);
            for (l, &col) in self.cols.iter().enumerate() {
                on_k.column_mut(l).copy_from(&x.column(col));
            }
        }
        times_plus(&self.abar, &b.mu_k, &self.b_sum, &mut b.y_sum);
        self.own_block(m, b, inc);
        for (k, &r) in self.rows.iter().enumerate() {
            m.mean[r] = b.w_mean[k] + b.y_sum[k] * inc.p;
        }
        // Row r of C' (entries r + s dim of the column-major storage), then its column r, the
        // row's mirror.
        let cov = m.cov.as_mut_slice();
        let (a0_c, abar_c) = (b.a0_c.as_slice(), b.abar_c.as_slice());
        for (k, &r) in self.rows.iter().enumerate() {
            for s in 0..dim {
                cov[r + s * dim] = a0_c[k + s * rows] + abar_c[k + s * rows] * inc.p;
            }
            for s in 0..dim {
                cov[s + r * dim] = cov[r + s * dim];
            }
        }
        for (k, &r) in self.rows.iter().enumerate() {
            for (l, &s) in self.rows.iter().enumerate() {
                m.cov[(r, s)] = 0.5 * (b.next[(k, l)] + b.next[(l, k)]);
            }
        }
    }

    /// `C'[R, R]` before symmetrising (the module's formula), into `b.next`, each term formed as
    /// nalgebra forms `X Y`, `(X Y + Z W) p`, `X Y q`, `y y^T s` and added in that order.
    fn own_block(&self, m: &Moments, b: &mut RoundBuffers, inc: &InclusionMoments) {
        let rows = self.rows.len();
        let RoundBuffers { a0_c_k, abar_c_k, y_sum, next, left, right, runs, .. } = b;
        for x in [&mut *next, &mut *left, &mut *right] {
            shaped(x, rows, rows);
        }
        product(a0_c_k, &self.a0_t, next);
        product(a0_c_k, &self.abar_t, left);
        product(abar_c_k, &self.a0_t, right);
        next.zip_zip_apply(left, right, |n, l, r| *n += (l + r) * inc.p);
        product(abar_c_k, &self.abar_t, left);
        next.zip_apply(left, |n, l| *n += l * inc.q);
        let own = inc.p2 - inc.q;
        if own != 0.0 {
            let mut terms = OwnTerms::new(&m.mean, &m.cov);
            for group in &self.terms {
                match group {
                    OwnGroup::Term(t) => terms.add(OwnTerm { a: &t.a, b: &t.b, cols: &t.cols, rank_one: None }, (own, &t.at), next),
                    OwnGroup::RankOnes(run) => run.add((&m.mean, &m.cov), own, next, runs),
                }
            }
        }
        let pairs = inc.q - inc.p * inc.p;
        if pairs != 0.0 {
            y_sum.mul_to(&y_sum.transpose(), left);
            next.zip_apply(left, |n, l| *n += l * pairs);
        }
        next.zip_apply(&self.noise_cov, |n, w| *n += w * inc.p2);
    }
}
