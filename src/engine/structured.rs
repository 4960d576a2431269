//! The structured propagation of [`RoundMaps::propagate`](super::RoundMaps::propagate): the
//! state split into the coordinates several components touch (the shared block `S`, e.g. the
//! server's `u`) and each component's own coordinates (`o_i`, e.g. its `v_i`), so that a round's
//! cost grows with the number of small blocks, not with dense products of the whole state.
//!
//! In the order `[S, o_1, ..., o_n, free]` (free: coordinates no component touches, one block of
//! size 1 each) and with a diagonal base map `A0 = diag(lambda)`, the summed component map is
//!
//! ```text
//! Abar = [ A  G ]      A = Abar[S, S] (s x s), G = Abar[S, o] (s x o),
//!        [ H  J ]      H = Abar[o, S] (o x s), J = diag(J_1, ..., J_n) (block diagonal)
//! ```
//!
//! and the module formula of [`super::affine`], `C' = A0 C A0^T + p (A0 C Abar^T + Abar C A0^T)
//! + q Abar C Abar^T + (q - p^2) ybar ybar^T + sum_i (own_i + noise_i)`, splits into blocks with
//! `Y = C Abar^T` and `Z = Abar Y` read only where they are thin:
//!
//! ```text
//! Y_SS = C_SS A^T + C_oS^T G^T      Y_oS = C_oS A^T + C_oo G^T      Y_So^T = H C_SS + J C_oS
//! Z_SS = A Y_SS + G Y_oS            Z_oS = H Y_SS + J Y_oS
//! C'_SS = l_S C_SS l_S + p (l_S Y_SS + Y_SS^T l_S) + q Z_SS + (q - p^2) ybar_S ybar_S^T
//! C'_oS = l_o C_oS l_S + p (l_o Y_oS + Y_So^T l_S) + q Z_oS + (q - p^2) ybar_o ybar_S^T
//! C'_oo = l_o C_oo l_o + p (l_o C_oo J^T + J C_oo l_o) + q J C_oo J^T  +  L R^T
//! L = [W, (q - p^2)/2 ybar_o, H, ybar_o],  R = [H, ybar_o, W, (q - p^2)/2 ybar_o],
//! W = p l_o C_oS + q J C_oS + (q/2) H C_SS
//! ```
//!
//! (`L R^T = W H^T + H W^T + (q - p^2) ybar_o ybar_o^T` collects every term of `C'_oo` that passes
//! through `S`). The first part of `C'_oo` acts on each column through its own block only. Per
//! round: `s D^2` for `C_oo G^T`, `2 (s + 1) D^2` for `L R^T` (both as matrix products),
//! `(2 b + 5) D^2` for the block-diagonal part (`b` the largest own block), plus `O(D s^2)`: for
//! FedAvg-P with `n` clients, `D = du + n dv`, against `4 D^3` for dense products. The terms are
//! those of the dense evaluation, summed in another order: the two agree to rounding (tests hold
//! them within 1e-12 relative).

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

use super::design::InclusionMoments;
use super::moments::{gather_on, own_second_moment, rank_one_second_moment, RankOne};

/// One component's term in the structured order: the positions it writes and reads, its map,
/// constant and noise covariance there.
#[derive(Debug, Clone)]
pub(super) struct LocalTerm {
    pub rows: Vec<usize>,
    pub cols: Vec<usize>,
    pub a: DMatrix<f64>,
    pub b: DVector<f64>,
    /// `A_i = u v^T` in factors, when the round gives them (its columns in the structured order).
    pub rank_one: Option<RankOne>,
    /// `W_i W_i^T` on `rows`.
    pub ww: DMatrix<f64>,
}

/// A component's term as probed, in the state's own coordinates.
pub(super) struct Probed<'a> {
    pub rows: &'a [usize],
    pub cols: &'a [usize],
    pub a: &'a DMatrix<f64>,
    pub b: &'a DVector<f64>,
    pub rank_one: Option<&'a RankOne>,
    pub w: &'a DMatrix<f64>,
}

/// The round's maps in the structured order (see the module's formula).
#[derive(Debug, Clone)]
pub(super) struct Structure {
    /// Position `k` of the structured order holds state coordinate `perm[k]`.
    pub perm: Vec<usize>,
    /// Whether `perm` is the identity (no gather or scatter needed).
    pub identity: bool,
    /// `|S|`.
    s: usize,
    /// The own blocks `(offset, len)` in the coordinates of `o` (offsets from `s`), covering `o`.
    blocks: Vec<(usize, usize)>,
    /// `J_b`, row-major, block after block.
    j_data: Vec<f64>,
    /// Where block `b`'s entries start in `j_data`.
    j_start: Vec<usize>,
    /// `J` by diagonals: `(delta, J[r, r + delta])` over the rows `r` of `o`, 0 across blocks.
    bands: Vec<(isize, Vec<f64>)>,
    /// `lambda`, `c0` and `sum_i b_i` in the structured order.
    lambda: DVector<f64>,
    c0: DVector<f64>,
    b_sum: DVector<f64>,
    a_ss: DMatrix<f64>,
    g: DMatrix<f64>,
    /// `G^T`, padded with zero columns to at least [`GEMM_MIN`].
    g_t: DMatrix<f64>,
    h: DMatrix<f64>,
    terms: Vec<LocalTerm>,
}

/// The smallest dimension nalgebra hands to its blocked matrix product (smaller ones run as
/// matrix-vector products, one pass over the large operand per column).
const GEMM_MIN: usize = 6;

/// `base` with zero columns appended up to [`GEMM_MIN`].
fn padded(base: DMatrix<f64>) -> DMatrix<f64> {
    let cols = base.ncols().max(GEMM_MIN);
    base.resize_horizontally(cols, 0.0)
}

impl Structure {
    /// The structure of components that touch `rows_i` and `cols_i`, with base diagonal `lambda`
    /// and constant `c0` (state order): `S` is every coordinate two or more components touch.
    pub fn new(lambda: &DVector<f64>, c0: &DVector<f64>, clients: &[Probed]) -> Self {
        let dim = lambda.len();
        let mut count = vec![0usize; dim];
        for c in clients {
            let mut touched: Vec<usize> = c.rows.iter().chain(c.cols).copied().collect();
            touched.sort_unstable();
            touched.dedup();
            for k in touched {
                count[k] += 1;
            }
        }
        let mut perm: Vec<usize> = (0..dim).filter(|&k| count[k] >= 2).collect();
        let s = perm.len();
        let mut blocks = Vec::new();
        for c in clients {
            let mut own: Vec<usize> = c.rows.iter().chain(c.cols).copied().filter(|&k| count[k] == 1).collect();
            own.sort_unstable();
            own.dedup();
            blocks.push((perm.len() - s, own.len()));
            perm.extend(own);
        }
        for k in (0..dim).filter(|&k| count[k] == 0) {
            blocks.push((perm.len() - s, 1));
            perm.push(k);
        }
        let mut pos = vec![0usize; dim];
        for (p, &k) in perm.iter().enumerate() {
            pos[k] = p;
        }
        let mut out = Self::empty(perm, s, blocks, lambda, c0);
        for c in clients {
            out.add_client(c, &pos);
        }
        out.g_t = padded(out.g.transpose());
        out.bands = out.diagonals();
        out
    }

    /// `J` by its nonzero diagonals (see `bands`).
    fn diagonals(&self) -> Vec<(isize, Vec<f64>)> {
        let o = self.perm.len() - self.s;
        let width = self.blocks.iter().map(|&(_, l)| l).max().unwrap_or(0) as isize;
        let mut bands = Vec::new();
        for delta in 1 - width..width {
            let mut coef = vec![0.0; o];
            for (b, &(off, len)) in self.blocks.iter().enumerate() {
                for r in 0..len {
                    let c = r as isize + delta;
                    if (0..len as isize).contains(&c) {
                        coef[off + r] = self.j_data[self.j_start[b] + r * len + c as usize];
                    }
                }
            }
            if coef.iter().any(|x| *x != 0.0) {
                bands.push((delta, coef));
            }
        }
        bands
    }

    /// The structure with no component maps yet.
    fn empty(perm: Vec<usize>, s: usize, blocks: Vec<(usize, usize)>, lambda: &DVector<f64>, c0: &DVector<f64>) -> Self {
        let dim = perm.len();
        let o = dim - s;
        let mut j_start = Vec::with_capacity(blocks.len());
        let mut total = 0;
        for &(_, len) in &blocks {
            j_start.push(total);
            total += len * len;
        }
        let identity = perm.iter().enumerate().all(|(p, &k)| p == k);
        let lambda = DVector::from_fn(dim, |p, _| lambda[perm[p]]);
        let c0 = DVector::from_fn(dim, |p, _| c0[perm[p]]);
        Self {
            identity,
            s,
            blocks,
            j_data: vec![0.0; total],
            j_start,
            bands: Vec::new(),
            lambda,
            c0,
            b_sum: DVector::zeros(dim),
            a_ss: DMatrix::zeros(s, s),
            g: DMatrix::zeros(s, o),
            g_t: DMatrix::zeros(o, GEMM_MIN),
            h: DMatrix::zeros(o, s),
            terms: Vec::new(),
            perm,
        }
    }

    /// Adds one component's map to `A`, `G`, `H`, `J` and `b_sum`, and keeps its local term.
    fn add_client(&mut self, c: &Probed, pos: &[usize]) {
        let s = self.s;
        let rows: Vec<usize> = c.rows.iter().map(|&r| pos[r]).collect();
        let cols: Vec<usize> = c.cols.iter().map(|&k| pos[k]).collect();
        for (ci, &pc) in cols.iter().enumerate() {
            for (ri, &pr) in rows.iter().enumerate() {
                let v = c.a[(ri, ci)];
                match (pr < s, pc < s) {
                    (true, true) => self.a_ss[(pr, pc)] += v,
                    (true, false) => self.g[(pr, pc - s)] += v,
                    (false, true) => self.h[(pr - s, pc)] += v,
                    (false, false) => {
                        let (block, off) = self.block_of(pr - s);
                        let len = self.blocks[block].1;
                        self.j_data[self.j_start[block] + (pr - s - off) * len + (pc - s - off)] += v;
                    }
                }
            }
        }
        for (ri, &pr) in rows.iter().enumerate() {
            self.b_sum[pr] += c.b[ri];
        }
        let ww = c.w * c.w.transpose();
        self.terms.push(LocalTerm { rows, cols, a: c.a.clone(), b: c.b.clone(), rank_one: c.rank_one.map(|f| f.on_columns(pos)), ww });
    }

    /// The block holding `o`-coordinate `x`, and its offset.
    fn block_of(&self, x: usize) -> (usize, usize) {
        let b = self.blocks.partition_point(|&(off, _)| off <= x) - 1;
        (b, self.blocks[b].0)
    }

    /// The flops of one round (see the module's cost).
    pub fn flops(&self) -> f64 {
        let d = self.perm.len() as f64;
        let b = self.blocks.iter().map(|&(_, l)| l).max().unwrap_or(0) as f64;
        d * d * (3.0 * self.s as f64 + 2.0 * b + 7.0)
    }

    /// `J X` for a matrix `X` with `o` rows.
    fn j_times(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        let mut out = DMatrix::zeros(x.nrows(), x.ncols());
        for col in 0..x.ncols() {
            self.j_apply(x.column(col).as_slice(), out.column_mut(col).as_mut_slice());
        }
        out
    }

    /// `out += J v` for vectors over `o`.
    fn j_apply(&self, v: &[f64], out: &mut [f64]) {
        // A component with no coordinate of its own (every one it touches is shared) has an
        // empty block.
        for (b, &(off, len)) in self.blocks.iter().enumerate().filter(|(_, &(_, len))| len > 0) {
            let jb = &self.j_data[self.j_start[b]..self.j_start[b] + len * len];
            let vb = &v[off..off + len];
            for (r, row) in jb.chunks_exact(len).enumerate() {
                out[off + r] += row.iter().zip(vb).map(|(j, x)| j * x).sum::<f64>();
            }
        }
    }

    /// The mean after the round and `ybar = Abar mu + sum_i b_i` (structured order).
    fn mean(&self, mu: &DVector<f64>, inc: &InclusionMoments) -> (DVector<f64>, DVector<f64>) {
        let (s, o) = (self.s, self.perm.len() - self.s);
        let (mu_s, mu_o) = (mu.rows(0, s), mu.rows(s, o));
        let mut ybar = DVector::zeros(s + o);
        ybar.rows_mut(0, s).copy_from(&(&self.a_ss * mu_s + &self.g * mu_o));
        let mut y_o = &self.h * mu_s;
        self.j_apply(mu_o.as_slice(), y_o.as_mut_slice());
        ybar.rows_mut(s, o).copy_from(&y_o);
        ybar += &self.b_sum;
        let mean = self.lambda.component_mul(mu) + &self.c0 + &ybar * inc.p;
        (mean, ybar)
    }

    /// One round in the structured order: the moments `(mu, C)` to `(mu', C')` written into
    /// `out` (the covariance; `D x D`), returning `mu'`. `C'_oo` is computed on and below each
    /// column's own block and mirrored, so the result is exactly symmetric.
    pub fn propagate(&self, mu: &DVector<f64>, cov: &DMatrix<f64>, inc: &InclusionMoments, out: &mut DMatrix<f64>) -> DVector<f64> {
        let (mean, ybar) = self.mean(mu, inc);
        let (left, right) = self.low_rank_factors(cov, &ybar, inc);
        let c_oo_g_t = self.lower_pass(cov, inc, &left, &right, out);
        self.mirror_own(out);
        self.shared_rows(cov, &ybar, inc, &c_oo_g_t, out);
        self.local_terms(mu, cov, inc, out);
        let s = self.s;
        let ss = out.view((0, 0), (s, s)).into_owned();
        out.view_mut((0, 0), (s, s)).copy_from(&((&ss + ss.transpose()) * 0.5));
        mean
    }

    /// `C'_SS` and `C'_oS` (and `C'_So` as its transpose) into `out`, given `C_oo G^T`.
    fn shared_rows(&self, cov: &DMatrix<f64>, ybar: &DVector<f64>, inc: &InclusionMoments, c_oo_g_t: &DMatrix<f64>, out: &mut DMatrix<f64>) {
        let (s, o) = (self.s, self.perm.len() - self.s);
        let (p, q, pairs) = (inc.p, inc.q, inc.q - inc.p * inc.p);
        let c_ss = cov.view((0, 0), (s, s));
        let c_os = cov.view((s, 0), (o, s));
        let y_ss = c_ss * self.a_ss.transpose() + c_os.tr_mul(&self.g.transpose());
        let y_os = c_oo_g_t + c_os * self.a_ss.transpose();
        let y_so_t = &self.h * c_ss + self.j_times(&c_os.clone_owned());
        let z_ss = &self.a_ss * &y_ss + &self.g * &y_os;
        let z_os = &self.h * &y_ss + self.j_times(&y_os);
        let (l_s, l_o) = (self.lambda.rows(0, s), self.lambda.rows(s, o));
        let (y_s, y_o) = (ybar.rows(0, s), ybar.rows(s, o));
        let next_ss = DMatrix::from_fn(s, s, |r, c| {
            l_s[r] * c_ss[(r, c)] * l_s[c] + p * (l_s[r] * y_ss[(r, c)] + y_ss[(c, r)] * l_s[c]) + q * z_ss[(r, c)] + pairs * y_s[r] * y_s[c]
        });
        let next_os = DMatrix::from_fn(o, s, |r, c| {
            l_o[r] * c_os[(r, c)] * l_s[c] + p * (l_o[r] * y_os[(r, c)] + y_so_t[(r, c)] * l_s[c]) + q * z_os[(r, c)] + pairs * y_o[r] * y_s[c]
        });
        out.view_mut((0, 0), (s, s)).copy_from(&next_ss);
        out.view_mut((s, 0), (o, s)).copy_from(&next_os);
        out.view_mut((0, s), (s, o)).copy_from(&next_os.transpose());
    }

    /// `L` and `R` of `C'_oo`'s term `L R^T` (`o x 2(s + 1)` each, see the module's formula),
    /// with `W = p l_o C_oS + q J C_oS + (q/2) H C_SS`.
    fn low_rank_factors(&self, cov: &DMatrix<f64>, ybar: &DVector<f64>, inc: &InclusionMoments) -> (DMatrix<f64>, DMatrix<f64>) {
        let (s, o) = (self.s, self.perm.len() - self.s);
        let (p, q) = (inc.p, inc.q);
        let c_os = cov.view((s, 0), (o, s));
        let j_c_os = self.j_times(&c_os.clone_owned());
        let h_c_ss = &self.h * cov.view((0, 0), (s, s));
        let l_o = self.lambda.rows(s, o);
        let w = DMatrix::from_fn(o, s, |r, c| p * l_o[r] * c_os[(r, c)] + q * j_c_os[(r, c)] + 0.5 * q * h_c_ss[(r, c)]);
        let half_pairs = 0.5 * (inc.q - inc.p * inc.p);
        let y_o = ybar.rows(s, o);
        let mut left = DMatrix::zeros(o, 2 * s + 2);
        let mut right = DMatrix::zeros(o, 2 * s + 2);
        left.columns_mut(0, s).copy_from(&w);
        left.column_mut(s).copy_from(&(y_o * half_pairs));
        left.columns_mut(s + 1, s).copy_from(&self.h);
        left.column_mut(2 * s + 1).copy_from(&y_o);
        right.columns_mut(0, s).copy_from(&self.h);
        right.column_mut(s).copy_from(&y_o);
        right.columns_mut(s + 1, s).copy_from(&w);
        right.column_mut(2 * s + 1).copy_from(&(y_o * half_pairs));
        (left, right)
    }

    /// One pass over the columns of `C_oo`, into `out` on and below the block of each column:
    /// `C'_oo = l_o C_oo l_o + p (l_o C_oo J^T + J C_oo l_o) + q J C_oo J^T + L R^T`; and
    /// `C_oo G^T` (`o x s`, returned), its row `k` from column `k` on
    /// ([`Self::shared_row_from`]) and before it ([`Self::shared_rows_before`]). For column `k`
    /// of block `b` with `x = C_oo[:, k]` and `y = C_oo[:, b] J_b^T[:, k]`:
    /// `C'_oo[:, k] = l_o (l_k x + p y) + J (p l_k x + q y) + L R[k, :]^T`.
    ///
    /// The columns go [`GROUP`] at a time, so that `L R^T` reads each column of `L` once for
    /// the group ([`Self::add_low_rank`]). Each column of `C'_oo` and each row of `C_oo G^T`
    /// depends on its own column of the input only, so from [`PARALLEL_MIN_COLUMNS`] own
    /// coordinates the groups are computed in parallel, each by the same operations as alone:
    /// the result has the same bits on any number of threads.
    fn lower_pass(&self, cov: &DMatrix<f64>, inc: &InclusionMoments, left: &DMatrix<f64>, right: &DMatrix<f64>, out: &mut DMatrix<f64>) -> DMatrix<f64> {
        let (s, d) = (self.s, self.perm.len());
        let o = d - s;
        let src = cov.as_slice();
        // Row `k` of `C_oo G^T`'s terms from `k` on at `k * width` (`width >= 1`: chunks are
        // never empty).
        let width = s.max(1);
        let mut c_g_rows = vec![0.0; o * width];
        let own_columns = &mut out.as_mut_slice()[s * d..];
        let (inc_p_q, low_rank) = ((inc.p, inc.q), (left, right));
        let group = |g: usize, out_columns: &mut [f64], c_g_rows: &mut [f64], scratch: &mut (Vec<f64>, Vec<f64>)| {
            let k0 = g * GROUP;
            let mut targets: [&mut [f64]; GROUP] = Default::default();
            let mut count = 0;
            for ((j, out_column), c_g_row) in out_columns.chunks_mut(d).enumerate().zip(c_g_rows.chunks_mut(width)) {
                let k = k0 + j;
                let target = &mut out_column[s + self.block_of(k).1..];
                self.own_column(src, inc_p_q, k, target, scratch);
                self.shared_row_from(&src[(s + k) * d + s + k..(s + k + 1) * d], k, &mut c_g_row[..s]);
                targets[j] = target;
                count = j + 1;
            }
            self.add_low_rank(low_rank, k0, &mut targets[..count]);
        };
        if o >= PARALLEL_MIN_COLUMNS {
            own_columns
                .par_chunks_mut(GROUP * d)
                .zip(c_g_rows.par_chunks_mut(GROUP * width))
                .enumerate()
                .for_each_init(|| (vec![0.0; o], vec![0.0; o]), |scratch, (g, (out_columns, c_g_rows))| group(g, out_columns, c_g_rows, scratch));
        } else {
            let mut scratch = (vec![0.0; o], vec![0.0; o]);
            for (g, (out_columns, c_g_rows)) in own_columns.chunks_mut(GROUP * d).zip(c_g_rows.chunks_mut(GROUP * width)).enumerate() {
                group(g, out_columns, c_g_rows, &mut scratch);
            }
        }
        let before = self.shared_rows_before(src);
        DMatrix::from_fn(o, s, |k, c| before[c * o + k] + c_g_rows[k * width + c])
    }

    /// `+ L R[k, :]^T` on each of the columns `k0, k0 + 1, ...` (`targets`, each from its block's
    /// first row down): every entry gets `R[k, c] L[r, c]` for `c` increasing, skipping zero
    /// weights, as one column alone would. The rows are taken [`LOW_RANK_ROWS`] at a time, so a
    /// piece of a column of `L` serves the whole group from the first level of cache.
    fn add_low_rank(&self, (left, right): (&DMatrix<f64>, &DMatrix<f64>), k0: usize, targets: &mut [&mut [f64]]) {
        let o = self.perm.len() - self.s;
        let l = left.as_slice();
        // Target `j` holds rows `o - len_j ..`.
        let top = targets.iter().map(|t| o - t.len()).min().unwrap_or(o);
        for r0 in (top..o).step_by(LOW_RANK_ROWS) {
            let r1 = (r0 + LOW_RANK_ROWS).min(o);
            for c in 0..left.ncols() {
                for (j, target) in targets.iter_mut().enumerate() {
                    let (w, first) = (right[(k0 + j, c)], o - target.len());
                    let from = r0.max(first);
                    if w != 0.0 && from < r1 {
                        target[from - first..r1 - first].iter_mut().zip(&l[c * o + from..c * o + r1]).for_each(|(t, l)| *t += w * l);
                    }
                }
            }
        }
    }

    /// Column `k` of `C'_oo` on and below its block's first row (see [`Self::lower_pass`])
    /// before `L R^T`, into `target` (the column's own rows from its block's first row), with
    /// `scratch` two buffers of length `o`.
    fn own_column(&self, src: &[f64], (p, q): (f64, f64), k: usize, target: &mut [f64], scratch: &mut (Vec<f64>, Vec<f64>)) {
        let (s, d) = (self.s, self.perm.len());
        let o = d - s;
        let l_o = &self.lambda.as_slice()[s..];
        let (blk, off) = self.block_of(k);
        let len = self.blocks[blk].1;
        let jb = &self.j_data[self.j_start[blk]..self.j_start[blk] + len * len];
        let col = s + k;
        let x = &src[col * d + s + off..col * d + d];
        let y = &mut scratch.0[..o - off];
        y.fill(0.0);
        for (l, &jkl) in jb[(k - off) * len..(k - off + 1) * len].iter().enumerate() {
            if jkl != 0.0 {
                let xl = &src[(s + off + l) * d + s + off..(s + off + l) * d + d];
                y.iter_mut().zip(xl).for_each(|(yr, xr)| *yr += jkl * xr);
            }
        }
        let lk = self.lambda[col];
        let b = &mut scratch.1[..o - off];
        for r in 0..o - off {
            b[r] = p * lk * x[r] + q * y[r];
            target[r] = l_o[off + r] * (lk * x[r] + p * y[r]);
        }
        self.band_apply(off, b, target);
    }

    /// Row `k` of `C_oo G^T`'s terms from the diagonal down, from column `k` of the symmetric
    /// `C_oo` from row `k` (`x`): entry `c` of `out` is `sum_{r > k} C[r, k] G[c, r] + C[k, k]
    /// G[c, k]`, the sum over `r` increasing; every row of `G` at once (up to eight sums in
    /// flight, each in its own order, so the bits are those of one row at a time).
    fn shared_row_from(&self, x: &[f64], k: usize, out: &mut [f64]) {
        let o = self.perm.len() - self.s;
        let g_t = self.g_t.as_slice();
        for c0 in (0..self.s).step_by(8) {
            let rows = (self.s - c0).min(8);
            let g = |j: usize| &g_t[(c0 + j) * o + k..(c0 + j + 1) * o];
            let out = &mut out[c0..c0 + rows];
            match rows {
                1 => diagonal_and_below::<1>(x, std::array::from_fn(g), out),
                2 => diagonal_and_below::<2>(x, std::array::from_fn(g), out),
                3 => diagonal_and_below::<3>(x, std::array::from_fn(g), out),
                4 => diagonal_and_below::<4>(x, std::array::from_fn(g), out),
                5 => diagonal_and_below::<5>(x, std::array::from_fn(g), out),
                6 => diagonal_and_below::<6>(x, std::array::from_fn(g), out),
                7 => diagonal_and_below::<7>(x, std::array::from_fn(g), out),
                _ => diagonal_and_below::<8>(x, std::array::from_fn(g), out),
            }
        }
    }

    /// `sum_{r < k} C[k, r] G[c, r]` of every own row `k` and shared `c` (at `c * o + k`), summed
    /// over `r` increasing from column `r` below its diagonal: the rows in bands of [`TILE`], each
    /// band reading every column before it along the band (contiguous, so the products of a band
    /// and a row of `G` vectorize), in parallel from [`PARALLEL_MIN_COLUMNS`] own coordinates
    /// (every entry summed in the same order: the same bits on any number of threads).
    fn shared_rows_before(&self, src: &[f64]) -> Vec<f64> {
        let (s, d) = (self.s, self.perm.len());
        let o = d - s;
        let band = |k0: usize| -> Vec<f64> {
            let k1 = (k0 + TILE).min(o);
            let len = k1 - k0;
            let mut sums = vec![0.0; s * len];
            for r in 0..k1 - 1 {
                let from = (r + 1).max(k0);
                let column = &src[(s + r) * d + s + from..(s + r) * d + s + k1];
                for c in 0..s {
                    let g = self.g_t[(r, c)];
                    for (sum, &x) in sums[c * len + from - k0..(c + 1) * len].iter_mut().zip(column) {
                        *sum += x * g;
                    }
                }
            }
            sums
        };
        let bands: Vec<Vec<f64>> = if o >= PARALLEL_MIN_COLUMNS {
            (0..o).step_by(TILE).collect::<Vec<_>>().into_par_iter().map(band).collect()
        } else {
            (0..o).step_by(TILE).map(band).collect()
        };
        let mut out = vec![0.0; s * o];
        for (b, sums) in bands.iter().enumerate() {
            let (k0, len) = (b * TILE, sums.len() / s.max(1));
            for c in 0..s {
                out[c * o + k0..c * o + k0 + len].copy_from_slice(&sums[c * len..(c + 1) * len]);
            }
        }
        out
    }

    /// `out += J v` on the rows from `lo` (the first row of a block) on, by diagonals of the
    /// band of `J` (contiguous, so the loops vectorize); `v` and `out` start at row `lo`.
    fn band_apply(&self, lo: usize, v: &[f64], out: &mut [f64]) {
        let len = v.len();
        for (delta, coef) in &self.bands {
            let coef = &coef[lo..];
            if *delta >= 0 {
                let dl = *delta as usize;
                if dl >= len {
                    continue;
                }
                for r in 0..len - dl {
                    out[r] += coef[r] * v[r + dl];
                }
            } else {
                let dl = delta.unsigned_abs();
                for r in dl.min(len)..len {
                    out[r] += coef[r] * v[r - dl];
                }
            }
        }
    }

    /// Copies `C'_oo` from below each block to above it (`out[r, k] = out[k, r]` for `r` before
    /// the block of `k`), tile by tile, in strips of [`TILE`] columns.
    ///
    /// A strip writes only above its columns' blocks, at rows before its end, and reads columns
    /// of earlier strips at its own rows (below their strips) and its own columns below their
    /// blocks: each own column is split at its strip's end into the part its strip writes and
    /// the part later strips read, so from [`PARALLEL_MIN_COLUMNS`] own coordinates the strips
    /// are copied in parallel (a copy: the same bits on any number of threads).
    fn mirror_own(&self, out: &mut DMatrix<f64>) {
        let (s, d) = (self.s, self.perm.len());
        let o = d - s;
        let starts: Vec<usize> = self.blocks.iter().flat_map(|&(off, len)| std::iter::repeat_n(off, len)).collect();
        let strip_end = |k: usize| (k / TILE * TILE + TILE).min(o);
        let (mut upper, mut lower): (Vec<&mut [f64]>, Vec<&[f64]>) = (Vec::with_capacity(o), Vec::with_capacity(o));
        for (k, column) in out.as_mut_slice()[s * d..].chunks_mut(d).enumerate() {
            let (up, low) = column[s..].split_at_mut(strip_end(k));
            upper.push(up);
            lower.push(low);
        }
        let mirror_strip = |tk: usize, strip: &mut [&mut [f64]]| {
            // Tiles of earlier strips: row `r`'s source is column `r` below its strip, read along
            // the strip's columns, eight rows and eight columns at a time (`starts` does not
            // decrease, so a group of columns is whole above row `r0 + 8` where its first is).
            let (width, whole) = (strip.len(), strip.len() / 8 * 8);
            let copy = |strip: &mut [&mut [f64]], r: usize, source: &[f64], columns: std::ops::Range<usize>| {
                for j in columns.filter(|&j| r < starts[tk + j]) {
                    strip[j][r] = source[j];
                }
            };
            for r0 in (0..tk).step_by(8) {
                let sources: [&[f64]; 8] = std::array::from_fn(|i| &lower[r0 + i][tk - strip_end(r0 + i)..][..width]);
                for k0 in (0..whole).step_by(8) {
                    if starts[tk + k0] >= r0 + 8 {
                        let block: [[f64; 8]; 8] = std::array::from_fn(|i| std::array::from_fn(|j| sources[i][k0 + j]));
                        for (j, column) in strip[k0..k0 + 8].iter_mut().enumerate() {
                            column[r0..r0 + 8].copy_from_slice(&std::array::from_fn::<f64, 8, _>(|i| block[i][j]));
                        }
                    } else {
                        for (i, source) in sources.iter().enumerate() {
                            copy(strip, r0 + i, source, k0..k0 + 8);
                        }
                    }
                }
                for (i, source) in sources.iter().enumerate() {
                    copy(strip, r0 + i, source, whole..width);
                }
            }
            // The strip's own tile: the source columns are the strip's own, below their blocks.
            for k in tk..tk + strip.len() {
                for r in tk..starts[k] {
                    let v = strip[r - tk][k];
                    strip[k - tk][r] = v;
                }
            }
        };
        if o >= PARALLEL_MIN_COLUMNS {
            upper.par_chunks_mut(TILE).enumerate().for_each(|(j, strip)| mirror_strip(j * TILE, strip));
        } else {
            upper.chunks_mut(TILE).enumerate().for_each(|(j, strip)| mirror_strip(j * TILE, strip));
        }
    }

    /// `+ (p2 - q) (A_i C A_i^T + y_i y_i^T) + p2 W_i W_i^T` of every component, on its rows.
    fn local_terms(&self, mu: &DVector<f64>, cov: &DMatrix<f64>, inc: &InclusionMoments, out: &mut DMatrix<f64>) {
        let own = inc.p2 - inc.q;
        for t in &self.terms {
            let mut block = &t.ww * inc.p2;
            if own != 0.0 {
                block += match &t.rank_one {
                    Some(f) => rank_one_second_moment(f, &t.b, mu, cov),
                    None => {
                        let (c_cc, mu_c) = gather_on(mu, cov, &t.cols);
                        own_second_moment(&t.a, &t.b, &c_cc, &mu_c)
                    }
                } * own;
            }
            for (ri, &r) in t.rows.iter().enumerate() {
                for (rj, &c) in t.rows.iter().enumerate() {
                    out[(r, c)] += 0.5 * (block[(ri, rj)] + block[(rj, ri)]);
                }
            }
        }
    }

    /// `v` in the structured order.
    pub fn gather_vec(&self, v: &DVector<f64>) -> DVector<f64> {
        DVector::from_fn(v.len(), |p, _| v[self.perm[p]])
    }

    /// `v` (structured order) in the state's order.
    pub fn scatter_vec(&self, v: &DVector<f64>) -> DVector<f64> {
        let mut out = DVector::zeros(v.len());
        for (p, &k) in self.perm.iter().enumerate() {
            out[k] = v[p];
        }
        out
    }

    /// `M` in the structured order (rows and columns).
    pub fn gather(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        DMatrix::from_fn(m.nrows(), m.ncols(), |r, c| m[(self.perm[r], self.perm[c])])
    }

    /// `M` (structured order) in the state's order, written into `out`.
    pub fn scatter_into(&self, m: &DMatrix<f64>, out: &mut DMatrix<f64>) {
        for (pc, &c) in self.perm.iter().enumerate() {
            for (pr, &r) in self.perm.iter().enumerate() {
                out[(r, c)] = m[(pr, pc)];
            }
        }
    }

    /// The positions of each component's block `S + o_i` (state order), for checks that read
    /// principal blocks.
    pub fn component_blocks(&self) -> impl Iterator<Item = Vec<usize>> + '_ {
        let shared: Vec<usize> = self.perm[..self.s].to_vec();
        self.blocks.iter().map(move |&(off, len)| shared.iter().copied().chain(self.perm[self.s + off..self.s + off + len].iter().copied()).collect())
    }
}

/// `out[j] = sum_{r >= 1} x[r] g_j[r] + x[0] g_j[0]` for `W` rows `g_j` at once, each sum over
/// `r` increasing ([`Structure::shared_row_from`]).
fn diagonal_and_below<const W: usize>(x: &[f64], g: [&[f64]; W], out: &mut [f64]) {
    let mut below = [0.0; W];
    for r in 1..x.len() {
        let xr = x[r];
        for (sum, g) in below.iter_mut().zip(&g) {
            *sum += xr * g[r];
        }
    }
    for ((o, sum), g) in out.iter_mut().zip(below).zip(&g) {
        *o = sum + x[0] * g[0];
    }
}

/// Columns of `C'_oo` computed together in [`Structure::lower_pass`].
const GROUP: usize = 4;

/// Rows of a group's columns that [`Structure::add_low_rank`] updates at a time: with the group's
/// pieces and a piece of a column of `L`, 5 x 2 KiB, well inside the first level of cache.
const LOW_RANK_ROWS: usize = 256;

/// Tile edge of the mirror copy.
const TILE: usize = 64;

/// Own coordinates from which [`Structure::lower_pass`] computes its columns, and
/// [`Structure::mirror_own`] and [`Structure::shared_rows_before`] their strips and bands, in
/// parallel (below it a round takes well under a millisecond and the pool's overhead would not
/// pay).
const PARALLEL_MIN_COLUMNS: usize = 128;
