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

use super::column_order::{row_times, NALGEBRA_SMALL_DIM};

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

    /// `||P||_max` with `P = C + mu mu^T`: the scale of the raw second moment, for tolerances that
    /// are relative to it.
    pub fn second_moment_scale(&self) -> f64 {
        self.second_moment().amax()
    }

    /// Whether `C` is positive semidefinite up to rounding: the smallest eigenvalue of `(C +
    /// C^T)/2` is at least `-COVARIANCE_PSD_FLOOR ||P||_max` ([`crate::prec::engine`], relative
    /// to the raw second moment's scale). False when an entry is not finite. Moments that fail it
    /// have lost their accuracy: a variance read from them may be any number, of either sign.
    pub fn covariance_is_psd(&self) -> bool {
        let smallest = self.min_covariance_eigenvalue();
        smallest >= -crate::prec::engine::COVARIANCE_PSD_FLOOR * self.second_moment_scale()
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

/// A component's linear part of rank one: `A_i[R, :] = u v^T`, with `v` non-zero on the columns
/// `cols` only (a minibatch sample's `-(eta/B) x x^T`). Given by the round
/// ([`RandomAffineRound::component_rank_one`](super::RandomAffineRound::component_rank_one)),
/// it lets the own term cost `O(|cols|^2 + |R|^2)` instead of `O(|R| |K|^2 + |R|^2 |K|)`, and
/// read the moments in place instead of gathering `C[K, K]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RankOne {
    /// `u`, on the term's rows `R`.
    pub left: DVector<f64>,
    /// The columns where `v` is not zero, in the coordinates of the moments it is applied to.
    pub cols: Vec<usize>,
    /// `v` on `cols`.
    pub right: DVector<f64>,
}

impl RankOne {
    /// `(v^T C v, v^T mu)` from the moments `(mu, C)`, read at `cols` in place.
    fn forms(&self, mu: &DVector<f64>, cov: &DMatrix<f64>) -> (f64, f64) {
        let cols = &self.cols;
        forms_with(self.right.as_slice(), |b, a| cov[(cols[b], cols[a])], |a| mu[cols[a]])
    }

    /// The same factors on renamed columns: column `c` becomes `pos[c]`.
    pub(super) fn on_columns(&self, pos: &[usize]) -> Self {
        Self { left: self.left.clone(), cols: self.cols.iter().map(|&c| pos[c]).collect(), right: self.right.clone() }
    }
}

/// `(v^T C v, v^T mu) = (sum_a v_a sum_b C[b, a] v_b, sum_a v_a mu[a])`, summed in that order,
/// with `C[b, a]` read by `c(b, a)` and `mu[a]` by `m(a)` (`a`, `b` positions in `v`).
fn forms_with(v: &[f64], c: impl Fn(usize, usize) -> f64, m: impl Fn(usize) -> f64) -> (f64, f64) {
    let q = v.iter().enumerate().map(|(a, va)| va * v.iter().enumerate().map(|(b, vb)| c(b, a) * vb).sum::<f64>()).sum::<f64>();
    let t = v.iter().enumerate().map(|(a, va)| va * m(a)).sum::<f64>();
    (q, t)
}

/// Consecutive rank-one terms on the same rows `at` and columns `cols` (a client's batch of
/// samples), packed side by side so that their own terms are added in one pass per entry of the
/// block, from `C[cols, cols]` gathered once.
///
/// Each entry receives the terms' contributions in the terms' order, each formed as
/// [`add_rank_one_second_moment`] forms it (`scale ((v^T C v) u_r u_s + y_r y_s)`,
/// `y = u (v^T mu) + b`): the same bits as adding the terms one by one.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RankOneRun {
    at: Vec<usize>,
    cols: Vec<usize>,
    /// `u_j` of each term, `|at|` entries each, term after term.
    left: Vec<f64>,
    /// `b_j`, as `left`.
    offset: Vec<f64>,
    /// `v_j`, `|cols|` entries each.
    right: Vec<f64>,
    /// The number of terms.
    terms: usize,
}

/// Buffers of [`RankOneRun::add`], reused from round to round.
#[derive(Debug, Default)]
pub(super) struct RunScratch {
    gathered: Vec<f64>,
    mu: Vec<f64>,
    q: Vec<f64>,
    y: Vec<f64>,
    block: Vec<f64>,
}

impl RankOneRun {
    /// A run of one term: the rank-one factors `f` and offset `b` on the rows `at`.
    pub fn of(at: &[usize], f: &RankOne, b: &DVector<f64>) -> Self {
        let mut run = Self { at: at.to_vec(), cols: f.cols.clone(), left: Vec::new(), offset: Vec::new(), right: Vec::new(), terms: 0 };
        run.push(f, b);
        run
    }

    /// Whether a term on the rows `at` with factors `f` can join the run.
    pub fn accepts(&self, at: &[usize], f: &RankOne) -> bool {
        self.at == at && self.cols == f.cols
    }

    /// Appends a term (see [`RankOneRun::accepts`]).
    pub fn push(&mut self, f: &RankOne, b: &DVector<f64>) {
        self.left.extend(f.left.iter());
        self.offset.extend(b.iter());
        self.right.extend(f.right.iter());
        self.terms += 1;
    }

    /// `out[(at[r], at[s])] += scale * ((v_j^T C v_j) u_j u_j^T + y_j y_j^T)[r, s]` for every term
    /// `j` in order, from the moments `(mu, cov)`.
    pub fn add(&self, (mu, cov): (&DVector<f64>, &DMatrix<f64>), scale: f64, out: &mut DMatrix<f64>, scratch: &mut RunScratch) {
        let (rows, k) = (self.at.len(), self.cols.len());
        if rows == 0 {
            return;
        }
        match (rows, k) {
            (1, 1) => return self.add_fixed::<1, 1>((mu, cov), scale, out),
            (2, 2) => return self.add_fixed::<2, 2>((mu, cov), scale, out),
            (3, 3) => return self.add_fixed::<3, 3>((mu, cov), scale, out),
            (4, 4) => return self.add_fixed::<4, 4>((mu, cov), scale, out),
            // A step that reads the server's block besides the client's own (a client's offset
            // from the server's model).
            (1, 2) => return self.add_fixed::<1, 2>((mu, cov), scale, out),
            (2, 4) => return self.add_fixed::<2, 4>((mu, cov), scale, out),
            (3, 6) => return self.add_fixed::<3, 6>((mu, cov), scale, out),
            (4, 8) => return self.add_fixed::<4, 8>((mu, cov), scale, out),
            _ => {}
        }
        let RunScratch { gathered, mu: mu_c, q, y, block } = scratch;
        gathered.clear();
        gathered.extend(self.cols.iter().flat_map(|&a| self.cols.iter().map(move |&b| cov[(b, a)])));
        mu_c.clear();
        mu_c.extend(self.cols.iter().map(|&a| mu[a]));
        q.clear();
        y.clear();
        for j in 0..self.terms {
            let (qj, tj) = forms_with(&self.right[j * k..(j + 1) * k], |b, a| gathered[a * k + b], |a| mu_c[a]);
            q.push(qj);
            let (u, b) = (&self.left[j * rows..(j + 1) * rows], &self.offset[j * rows..(j + 1) * rows]);
            y.extend(u.iter().zip(b).map(|(u, b)| u * tj + b));
        }
        // The block's entries side by side, term after term: independent sums, each in term order.
        block.clear();
        for &r in &self.at {
            block.extend(self.at.iter().map(|&s| out[(r, s)]));
        }
        for ((qj, u), yj) in q.iter().zip(self.left.chunks_exact(rows)).zip(y.chunks_exact(rows)) {
            for ((entries, u_r), y_r) in block.chunks_exact_mut(rows).zip(u).zip(yj.iter()) {
                let qu = qj * u_r;
                for ((e, u_s), y_s) in entries.iter_mut().zip(u).zip(yj.iter()) {
                    *e += scale * (qu * u_s + y_r * y_s);
                }
            }
        }
        for ((&r, &s), e) in self.at.iter().flat_map(|r| self.at.iter().map(move |s| (r, s))).zip(block.iter()) {
            out[(r, s)] = *e;
        }
    }

    /// [`RankOneRun::add`] for `R` rows and `K` columns (a client's block of a small model), its
    /// operations in the same order on arrays the compiler keeps in registers: the same bits.
    fn add_fixed<const R: usize, const K: usize>(&self, (mu, cov): (&DVector<f64>, &DMatrix<f64>), scale: f64, out: &mut DMatrix<f64>) {
        let at: [usize; R] = std::array::from_fn(|i| self.at[i]);
        let cols: [usize; K] = std::array::from_fn(|i| self.cols[i]);
        // gathered[a][b] = C[cols[b], cols[a]], as `forms_with` reads `c(b, a)`.
        let gathered: [[f64; K]; K] = std::array::from_fn(|a| std::array::from_fn(|b| cov[(cols[b], cols[a])]));
        let mu_c: [f64; K] = std::array::from_fn(|a| mu[cols[a]]);
        let mut block: [[f64; R]; R] = std::array::from_fn(|r| std::array::from_fn(|s| out[(at[r], at[s])]));
        for ((v, u), b) in self.right.chunks_exact(K).zip(self.left.chunks_exact(R)).zip(self.offset.chunks_exact(R)) {
            let (q, t) = forms_with(v, |b, a| gathered[a][b], |a| mu_c[a]);
            let y: [f64; R] = std::array::from_fn(|r| u[r] * t + b[r]);
            for (r, entries) in block.iter_mut().enumerate() {
                let qu = q * u[r];
                for (s, e) in entries.iter_mut().enumerate() {
                    *e += scale * (qu * u[s] + y[r] * y[s]);
                }
            }
        }
        for (r, entries) in block.iter().enumerate() {
            for (s, e) in entries.iter().enumerate() {
                out[(at[r], at[s])] = *e;
            }
        }
    }
}

/// The own term of a rank-one map `A = u v^T`:
///
/// ```text
/// A C A^T + y y^T = (v^T C v) u u^T + y y^T,    y = u (v^T mu) + b
/// ```
///
/// `v^T C v` is a quadratic form of a positive semidefinite matrix (non-negative up to rounding),
/// so the term is a sum of two positive semidefinite rank-one matrices, with no cancellation.
pub(super) fn rank_one_second_moment(f: &RankOne, b: &DVector<f64>, mu: &DVector<f64>, cov: &DMatrix<f64>) -> DMatrix<f64> {
    let (q, t) = f.forms(mu, cov);
    let y = &f.left * t + b;
    DMatrix::from_fn(f.left.len(), f.left.len(), |r, s| q * f.left[r] * f.left[s] + y[r] * y[s])
}

/// `out[(at[r], at[s])] += scale * M[r, s]` with `M` [`rank_one_second_moment`]'s term, each entry
/// summed where it is added; `y` is a buffer.
fn add_rank_one_second_moment(
    (f, b): (&RankOne, &DVector<f64>),
    (mu, cov): (&DVector<f64>, &DMatrix<f64>),
    (scale, at): (f64, &[usize]),
    out: &mut DMatrix<f64>,
    y: &mut Vec<f64>,
) {
    let (q, t) = f.forms(mu, cov);
    let u = &f.left;
    y.clear();
    y.extend(u.iter().zip(b.iter()).map(|(u, b)| u * t + b));
    for (ri, &r) in at.iter().enumerate() {
        for (rj, &s) in at.iter().enumerate() {
            out[(r, s)] += scale * (q * u[ri] * u[rj] + y[ri] * y[rj]);
        }
    }
}

/// A component's own term `A C[K, K] A^T + y y^T` with `y = A mu[K] + b`, for the map `a` that
/// reads the coordinates `K` (the `(p2 - q)` term of [`super::affine`]'s formula), from the
/// gathered `c_kk = C[K, K]` and `mu_k = mu[K]`.
///
/// # Cost
/// When `a` has at most five rows or columns (a client's step on a few coordinates), nalgebra
/// forms each product of this formula column by column, and it is summed here in that order
/// ([`super::column_order`]) with one temporary instead of five: the same bits. Larger maps use
/// the nalgebra expression itself.
pub(super) fn own_second_moment(a: &DMatrix<f64>, b: &DVector<f64>, c_kk: &DMatrix<f64>, mu_k: &DVector<f64>) -> DMatrix<f64> {
    let (rows, k) = a.shape();
    if rows > NALGEBRA_SMALL_DIM && k > NALGEBRA_SMALL_DIM {
        let y = a * mu_k + b;
        return a * c_kk * a.transpose() + &y * y.transpose();
    }
    let y: Vec<f64> = (0..rows).map(|r| row_times(a, r, |c| mu_k[c]) + b[r]).collect();
    let a_c = DMatrix::from_fn(rows, k, |r, j| row_times(a, r, |c| c_kk[(c, j)]));
    DMatrix::from_fn(rows, rows, |r, s| row_times(&a_c, r, |c| a[(s, c)]) + y[r] * y[s])
}

/// Buffers of [`add_own_second_moment`], reused from term to term.
#[derive(Debug, Default)]
pub(super) struct OwnTermScratch {
    y: Vec<f64>,
    a_c: Vec<f64>,
}

/// A component's term as its own term reads it: `A_i` on its columns `K`, `b_i`, and the
/// rank-one factors of `A_i` when the round gives them.
#[derive(Debug, Clone, Copy)]
pub(super) struct OwnTerm<'a> {
    pub a: &'a DMatrix<f64>,
    pub b: &'a DVector<f64>,
    pub cols: &'a [usize],
    pub rank_one: Option<&'a RankOne>,
}

/// The `(p2 - q) sum_i (A_i C A_i^T + y_i y_i^T)` terms of one round, added from the moments
/// `(mu, C)` before it: [`add_rank_one_second_moment`] for a term with factors, else
/// [`add_own_second_moment`] on `C[K, K]`, gathered once for consecutive terms that read the same
/// columns (a batch's samples). It borrows the moments, so a gather never outlives them.
pub(super) struct OwnTerms<'m> {
    mu: &'m DVector<f64>,
    cov: &'m DMatrix<f64>,
    gathered: Option<(Vec<usize>, DMatrix<f64>, DVector<f64>)>,
    scratch: OwnTermScratch,
}

impl<'m> OwnTerms<'m> {
    /// The own terms read from the moments `(mu, cov)`.
    pub fn new(mu: &'m DVector<f64>, cov: &'m DMatrix<f64>) -> Self {
        Self { mu, cov, gathered: None, scratch: OwnTermScratch::default() }
    }

    /// `out[(at[r], at[s])] += scale * (A C A^T + y y^T)[r, s]` of the term `t`.
    pub fn add(&mut self, t: OwnTerm, (scale, at): (f64, &[usize]), out: &mut DMatrix<f64>) {
        if let Some(f) = t.rank_one {
            add_rank_one_second_moment((f, t.b), (self.mu, self.cov), (scale, at), out, &mut self.scratch.y);
            return;
        }
        if self.gathered.as_ref().is_none_or(|(cols, _, _)| cols.as_slice() != t.cols) {
            let (c_kk, mu_k) = gather_on(self.mu, self.cov, t.cols);
            self.gathered = Some((t.cols.to_vec(), c_kk, mu_k));
        }
        let (_, c_kk, mu_k) = self.gathered.as_ref().expect("gathered above");
        add_own_second_moment((t.a, t.b), (c_kk, mu_k), (scale, at), out, &mut self.scratch);
    }
}

/// `out[(at[r], at[s])] += scale * M[r, s]` for every `r, s`, with `M` the own term of
/// [`own_second_moment`], whose entries it sums in the same order (the same bits) without
/// forming `M`: for a map with at most five rows or columns `A C[K, K]` and `y` go to `scratch`
/// and each entry of `M` is summed where it is added.
pub(super) fn add_own_second_moment(
    (a, b): (&DMatrix<f64>, &DVector<f64>),
    (c_kk, mu_k): (&DMatrix<f64>, &DVector<f64>),
    (scale, at): (f64, &[usize]),
    out: &mut DMatrix<f64>,
    scratch: &mut OwnTermScratch,
) {
    let (rows, k) = a.shape();
    if rows > NALGEBRA_SMALL_DIM && k > NALGEBRA_SMALL_DIM {
        let block = own_second_moment(a, b, c_kk, mu_k);
        for (ri, &r) in at.iter().enumerate() {
            for (rj, &s) in at.iter().enumerate() {
                out[(r, s)] += scale * block[(ri, rj)];
            }
        }
        return;
    }
    let OwnTermScratch { y, a_c } = scratch;
    let (a_s, c_s) = (a.as_slice(), c_kk.as_slice());
    y.clear();
    y.extend((0..rows).map(|r| row_times(a, r, |c| mu_k[c]) + b[r]));
    // Column j of A C[K, K] as gemv forms it: A[:, 0] C[0, j], then + A[:, c] C[c, j].
    a_c.clear();
    a_c.resize(rows * k, 0.0);
    for (j, col) in a_c.chunks_exact_mut(rows.max(1)).enumerate().take(k) {
        let c_j = &c_s[j * k..(j + 1) * k];
        for (o, a0) in col.iter_mut().zip(&a_s[..rows]) {
            *o = a0 * c_j[0];
        }
        for c in 1..k {
            for (o, ac) in col.iter_mut().zip(&a_s[c * rows..(c + 1) * rows]) {
                *o += ac * c_j[c];
            }
        }
    }
    for (ri, &r) in at.iter().enumerate() {
        for (rj, &s) in at.iter().enumerate() {
            let a_c_a = if k == 0 { 0.0 } else { (1..k).fold(a_c[ri] * a_s[rj], |acc, c| acc + a_c[c * rows + ri] * a_s[c * rows + rj]) };
            out[(r, s)] += scale * (a_c_a + y[ri] * y[rj]);
        }
    }
}

/// `(C[K, K], mu[K])` of the moments `(mu, C)` on the coordinates `cols`.
pub(super) fn gather_on(mu: &DVector<f64>, cov: &DMatrix<f64>, cols: &[usize]) -> (DMatrix<f64>, DVector<f64>) {
    (DMatrix::from_fn(cols.len(), cols.len(), |r, s| cov[(cols[r], cols[s])]), DVector::from_fn(cols.len(), |r, _| mu[cols[r]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nalgebra expression [`own_second_moment`] stands for.
    fn by_nalgebra(a: &DMatrix<f64>, b: &DVector<f64>, c_kk: &DMatrix<f64>, mu_k: &DVector<f64>) -> DMatrix<f64> {
        let y = a * mu_k + b;
        a * c_kk * a.transpose() + &y * y.transpose()
    }

    #[test]
    fn the_own_term_has_the_bits_of_the_nalgebra_expression() {
        for (rows, k) in [(1, 1), (2, 4), (4, 2), (5, 9), (9, 5), (3, 0), (6, 6), (8, 7)] {
            let a = DMatrix::from_fn(rows, k, |i, j| ((i * 13 + j * 7) as f64 * 0.29).sin() * 10f64.powi((i + j) as i32 % 3 - 1));
            let b = DVector::from_fn(rows, |i, _| (i as f64 * 0.9).cos() / 7.0);
            let root = DMatrix::from_fn(k, k, |i, j| ((i + 3 * j) as f64 * 0.41).cos() / 3.0);
            let c_kk = &root * root.transpose();
            let mu_k = DVector::from_fn(k, |j, _| (j as f64).sqrt() - 0.7);
            let (got, want) = (own_second_moment(&a, &b, &c_kk, &mu_k), by_nalgebra(&a, &b, &c_kk, &mu_k));
            assert_eq!(got.shape(), want.shape());
            assert!(got.iter().zip(want.iter()).all(|(x, y)| x.to_bits() == y.to_bits()), "{rows} x {k}: {got} vs {want}");
        }
        // Negative control: the product associated the other way, `A (C A^T)`, differs in bits.
        let a = DMatrix::from_fn(3, 4, |i, j| ((i * 5 + j) as f64 * 0.77).sin() * 3.0);
        let c_kk = DMatrix::from_fn(4, 4, |i, j| if i == j { 1.3 + i as f64 / 9.0 } else { 0.1 / (1 + i + j) as f64 });
        let other = &a * (&c_kk * a.transpose());
        let ours = own_second_moment(&a, &DVector::zeros(3), &c_kk, &DVector::zeros(4));
        assert!(ours.iter().zip(other.iter()).any(|(x, y)| x.to_bits() != y.to_bits()), "another association gives other bits");
    }

    #[test]
    fn the_own_term_added_in_place_has_the_bits_of_the_formed_block_added() {
        for (rows, k) in [(1, 1), (2, 4), (4, 2), (5, 9), (9, 5), (3, 0), (6, 6), (8, 7)] {
            let a = DMatrix::from_fn(rows, k, |i, j| ((i * 11 + j * 5) as f64 * 0.31).sin() * 10f64.powi((i + 2 * j) as i32 % 3 - 1));
            let b = DVector::from_fn(rows, |i, _| (i as f64 * 1.1).cos() / 5.0);
            let root = DMatrix::from_fn(k, k, |i, j| ((2 * i + j) as f64 * 0.37).cos() / 3.0);
            let (c_kk, mu_k) = (&root * root.transpose(), DVector::from_fn(k, |j, _| (j as f64).sqrt() - 0.4));
            let at: Vec<usize> = (0..rows).map(|r| (3 * r + 1) % (rows + 2)).collect();
            let start = DMatrix::from_fn(rows + 2, rows + 2, |i, j| ((i + j) as f64 * 0.13).sin());
            let (scale, block) = (-0.37, own_second_moment(&a, &b, &c_kk, &mu_k));
            let mut want = start.clone();
            for (ri, &r) in at.iter().enumerate() {
                for (rj, &s) in at.iter().enumerate() {
                    want[(r, s)] += scale * block[(ri, rj)];
                }
            }
            let mut got = start.clone();
            let mut scratch = OwnTermScratch::default();
            add_own_second_moment((&a, &b), (&c_kk, &mu_k), (scale, &at), &mut got, &mut scratch);
            assert!(got.iter().zip(want.iter()).all(|(x, y)| x.to_bits() == y.to_bits()), "{rows} x {k}");
            // Negative control: the scale distributed over the two parts gives other bits somewhere.
            if k > 0 {
                let y = &a * &mu_k + &b;
                let (quad, outer) = (&a * &c_kk * a.transpose(), &y * y.transpose());
                let mut other = start.clone();
                for (ri, &r) in at.iter().enumerate() {
                    for (rj, &s) in at.iter().enumerate() {
                        other[(r, s)] += scale * quad[(ri, rj)] + scale * outer[(ri, rj)];
                    }
                }
                assert!(rows < 2 || other.iter().zip(want.iter()).any(|(x, y)| x.to_bits() != y.to_bits()), "{rows} x {k}: the control");
            }
        }
    }

    #[test]
    fn the_rank_one_own_term_is_the_own_term_of_its_product() {
        for (rows, k) in [(1, 1), (2, 4), (4, 2), (7, 7), (9, 3)] {
            // `v` is zero on the state's first and last columns: `cols` are the others.
            let dim = k + 2;
            let cols: Vec<usize> = (1..=k).collect();
            let u = DVector::from_fn(rows, |i, _| ((i * 7) as f64 * 0.43).sin() * 3.0 + 0.5);
            let v = DVector::from_fn(k, |j, _| ((j * 5 + 1) as f64 * 0.29).cos());
            let b = DVector::from_fn(rows, |i, _| (i as f64 * 0.7).cos() / 3.0);
            let root = DMatrix::from_fn(dim, dim, |i, j| ((2 * i + 3 * j) as f64 * 0.31).sin() / 2.0);
            let (cov, mu) = (&root * root.transpose(), DVector::from_fn(dim, |j, _| j as f64 - 0.6));
            let f = RankOne { left: u.clone(), cols: cols.clone(), right: v.clone() };
            let a = &u * v.transpose();
            let (c_kk, mu_k) = gather_on(&mu, &cov, &cols);
            let (got, want) = (rank_one_second_moment(&f, &b, &mu, &cov), own_second_moment(&a, &b, &c_kk, &mu_k));
            assert!((&got - &want).amax() <= 1e-13 * want.amax(), "{rows} x {k}");
            // Added in place: the same entries where they are added.
            let at: Vec<usize> = (0..rows).rev().collect();
            let mut added = DMatrix::zeros(rows, rows);
            add_rank_one_second_moment((&f, &b), (&mu, &cov), (2.0, &at), &mut added, &mut Vec::new());
            assert!((0..rows).all(|r| (0..rows).all(|s| added[(at[r], at[s])] == 2.0 * got[(r, s)])), "{rows} x {k}: in place");
            // Negative controls: other factors, or the same factors on other columns, give other terms.
            let scaled = RankOne { left: &u * 1.001, ..f.clone() };
            let shifted = RankOne { cols: (0..k).collect(), ..f.clone() };
            for other in [scaled, shifted] {
                let moved = rank_one_second_moment(&other, &b, &mu, &cov);
                assert!((&moved - &want).amax() > 1e-6 * want.amax(), "{rows} x {k}: the control");
            }
        }
    }

    /// `count` rank-one terms on the rows `at` of a 6 x 6 block, reading the columns `cols` of
    /// 7 x 7 moments, with factors of mixed magnitudes.
    fn rank_one_terms(count: usize, at: &[usize], cols: &[usize]) -> Vec<(RankOne, DVector<f64>)> {
        (0..count)
            .map(|j| {
                let left = DVector::from_fn(at.len(), |r, _| ((j * 5 + r * 3) as f64 * 0.71).sin() * 10f64.powi((j + r) as i32 % 4 - 2));
                let right = DVector::from_fn(cols.len(), |c, _| ((j * 7 + c) as f64 * 0.43).cos() * 10f64.powi((j * c) as i32 % 3 - 1));
                let b = DVector::from_fn(at.len(), |r, _| ((j + 2 * r) as f64 * 1.3).sin() / 3.0);
                (RankOne { left, cols: cols.to_vec(), right }, b)
            })
            .collect()
    }

    #[test]
    fn a_run_of_rank_one_terms_adds_the_bits_of_the_terms_added_one_by_one() {
        let root = DMatrix::from_fn(7, 7, |i, j| ((3 * i + j) as f64 * 0.29).cos() / (1 + i) as f64);
        let (cov, mu) = (&root * root.transpose(), DVector::from_fn(7, |i, _| (i as f64).sqrt() - 1.1));
        let start = DMatrix::from_fn(6, 6, |i, j| ((i * j) as f64 * 0.17).sin());
        // Runs of one to four rows on as many or twice as many columns (the fixed-size path) and
        // others (the general one).
        let runs = [
            (6, vec![2usize, 5], vec![0usize, 1, 3, 6]),
            (4, vec![5], vec![1, 6]),
            (8, vec![0, 3, 5], vec![0, 1, 2, 4, 5, 6]),
            (1, vec![0, 1], vec![2, 3]),
            (12, vec![4, 1, 2], vec![0, 3, 5, 6]),
            (9, vec![3], vec![6]),
            (7, vec![5, 0, 2], vec![1, 4, 6]),
            (12, vec![0, 1, 2, 3], vec![3, 4, 5, 6]),
            (5, vec![1, 2, 3, 4, 5], vec![0, 1, 2, 3, 4]),
            (3, vec![2, 0], vec![5]),
            (10, vec![1, 5], vec![0, 2]),
        ];
        for (count, at, cols) in runs {
            let terms = rank_one_terms(count, &at, &cols);
            let mut one_by_one = start.clone();
            let mut y = Vec::new();
            for (f, b) in &terms {
                add_rank_one_second_moment((f, b), (&mu, &cov), (-0.37, &at), &mut one_by_one, &mut y);
            }
            let mut run = RankOneRun::of(&at, &terms[0].0, &terms[0].1);
            for (f, b) in &terms[1..] {
                assert!(run.accepts(&at, f));
                run.push(f, b);
            }
            let mut packed = start.clone();
            run.add((&mu, &cov), -0.37, &mut packed, &mut RunScratch::default());
            assert!(packed.iter().zip(one_by_one.iter()).all(|(x, y)| x.to_bits() == y.to_bits()), "{count} terms: {packed} vs {one_by_one}");
            // Negative control: the same terms added in the reverse order give other bits.
            if count > 1 {
                let mut reversed = start.clone();
                for (f, b) in terms.iter().rev() {
                    add_rank_one_second_moment((f, b), (&mu, &cov), (-0.37, &at), &mut reversed, &mut y);
                }
                assert!(reversed.iter().zip(one_by_one.iter()).any(|(x, y)| x.to_bits() != y.to_bits()), "{count} terms: the order shows in the bits");
            }
        }
        // A term on other rows or columns does not join the run.
        let terms = rank_one_terms(2, &[0, 1], &[2, 3]);
        let run = RankOneRun::of(&[0, 1], &terms[0].0, &terms[0].1);
        assert!(!run.accepts(&[1, 0], &terms[1].0));
        assert!(!run.accepts(&[0, 1], &RankOne { cols: vec![2, 4], ..terms[1].0.clone() }));
    }
}
