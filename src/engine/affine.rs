//! Exact expectations of random affine rounds, by moment propagation.
//!
//! A round of an algorithm on a quadratic with additive Gaussian noise is, for each choice `s` of
//! active components (sampled clients, a minibatch, ...), an affine map of the state and the noise.
//! Every such round here is also a sum of per-component terms:
//!
//! ```text
//! z' = A0 z + c0 + sum_i delta_i (A_i z + b_i + W_i xi_i),   delta_i = 1{i in s},  xi_i ~ N(0, I)
//! ```
//!
//! with `s` drawn from a [`Design`](super::Design). The maps are recovered by probing the round's
//! own code with basis vectors and unit noise ([`RoundMaps::probe`]), never written a second time.
//! With `p = E delta_i`, `q = E delta_i delta_j (i != j)` and `p2 = E delta_i^2` (an exchangeable
//! design), the mean `mu = E z` and the centred covariance `C = E (z - mu)(z - mu)^T`
//! ([`Moments`]) propagate exactly:
//!
//! ```text
//! mu' = A0 mu + c0 + p Y,                      y_i = A_i mu + b_i, Y = sum_i y_i, Abar = sum_i A_i
//! C'  = A0 C A0^T + p (A0 C Abar^T + Abar C A0^T) + q Abar C Abar^T
//!       + (p2 - q) sum_i (A_i C A_i^T + y_i y_i^T) + (q - p^2) Y Y^T + p2 sum_i W_i W_i^T
//! ```
//!
//! (write `z = mu + x`: the state's spread `x` passes through the random linear map
//! `A0 + sum_i delta_i A_i`, the sample's spread is `sum_i (delta_i - p) y_i`, the noise adds
//! its own; the three are uncorrelated). [`RoundMaps::propagate`] is this structured path. For any
//! finite design the same moments are a mixture over its outcomes
//! ([`RoundMaps::propagate_enumerated`]):
//!
//! ```text
//! mu' = sum_s P(s) m_s,   C' = sum_s P(s) (A_s C A_s^T + sum_{i in s} W_i W_i^T + (m_s - mu')(m_s - mu')^T)
//! ```
//!
//! with `A_s = A0 + sum_{i in s} A_i`, `c_s = c0 + sum_{i in s} b_i` and `m_s = A_s mu + c_s`. A
//! component's term is stored on the rows and columns it touches only, so a client that reads `u`
//! and its own block costs its block's size, not the state's. An observable
//! `E||M z + o||^2 = tr(M C M^T) + ||M mu + o||^2` of an affine map is then exact, a sum of two
//! non-negative terms ([`Observable`](super::Observable)).

use nalgebra::{DMatrix, DVector, Dyn, Schur, SymmetricEigen, QR, SVD};

use super::design::{InclusionMoments, Outcome};
use super::lift::{coordinate_lift, lift_column, linear_column};
use super::moments::{Moments, OwnTerm, OwnTerms, RankOne};
use super::rows::{ChangedRows, Extent, Term};
use super::structured::{Probed, Structure};
use crate::error::Result;
use crate::prec;

/// A round whose outcome, for each set of active components and their noise, is affine in the
/// state and the noise, and a sum of per-component terms.
///
/// # Contract
/// For every set `S` of components (any size), `apply(z, S, xi) = apply(z, {}, .) + sum_{i in S}
/// [apply(z, {i}, xi_i) - apply(z, {}, .)]`, each term affine in `(z, xi_i)`. The exact engine
/// recovers the maps by probing [`apply`](Self::apply) and would be wrong for a round that breaks
/// the contract; families test the identity on their rounds. Probing calls `apply` from several
/// threads at once (one component each), hence `Sync`.
pub trait RandomAffineRound: Sync {
    /// Length of the state `z`.
    fn state_dim(&self) -> usize;
    /// Number of components the design chooses among (clients, samples).
    fn components(&self) -> usize;
    /// Standard normal values one active component consumes per round.
    fn noise_per_component(&self) -> usize;
    /// The round from `state` with the components `active` (ascending) and their noise: the
    /// `j`-th active component's values at offset `j * noise_per_component()`.
    fn apply(&self, state: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64>;
    /// The state coordinates component `i` may read, when the round knows them; a superset is
    /// enough (a coordinate the component does not read is probed and dropped). Probing checks
    /// the declaration with one call on every other coordinate and, where it is contradicted or
    /// absent (`None`, the default), finds the columns by bisection. Read with a diagonal base
    /// map only.
    fn reads(&self, _component: usize) -> Option<Vec<usize>> {
        None
    }
    /// Component `i`'s term in closed form, when the round has it: what the round with `i`
    /// active adds to the round with none, `A_i z + b_i + W_i xi_i`, on the rows it writes and the
    /// columns it reads. [`RoundMaps::probe`] then takes it instead of probing the component (a
    /// closed form carries no rounding of the probe's differences); `None` (the default) probes.
    /// Read with a diagonal base map and the origin at 0 only.
    fn component_term(&self, _component: usize) -> Option<ComponentTerm> {
        None
    }
    /// Component `i`'s linear part as `A_i = u v^T` over the whole state (`(u, v)`, each of
    /// length [`RandomAffineRound::state_dim`]), when it has rank one: a minibatch sample's
    /// gradient step `-(eta/B) x (x^T w - y)` has `A_i = -(eta/B) x x^T`. The own term
    /// `A_i C A_i^T` of the moments is then `(v^T C v) u u^T`, `O(|K|^2 + |R|^2)` instead of
    /// `O(|R| |K|^2 + |R|^2 |K|)`, and exact in the factors where the probed `A_i` carries the
    /// rounding of the probe's differences. Taken where `u v^T` is zero outside the term's rows
    /// and columns (as the probe or the closed form finds them), with any base map and origin;
    /// `None` (the default) reads `A_i` itself.
    fn component_rank_one(&self, _component: usize) -> Option<(DVector<f64>, DVector<f64>)> {
        None
    }
}

/// One component's affine term of a round, restricted to the coordinates it touches: probed, or
/// given in closed form ([`RandomAffineRound::component_term`]).
#[derive(Debug, Clone)]
pub struct ComponentTerm {
    /// The state rows the term writes, ascending.
    pub rows: Vec<usize>,
    /// The state columns the term reads, ascending.
    pub cols: Vec<usize>,
    /// `A_i[rows, cols]`.
    pub a: DMatrix<f64>,
    /// `b_i[rows]`.
    pub b: DVector<f64>,
    /// `W_i[rows, :]`, one column per standard normal the component draws.
    pub w: DMatrix<f64>,
    /// `A_i[rows, :] = u v^T` in factors (`v` on the state columns where it is not zero, a subset
    /// of `cols`), when the round gives them ([`RandomAffineRound::component_rank_one`]); the own
    /// term `A_i C A_i^T + y_i y_i^T` then reads them instead of `a` (the sums `Abar` still read `a`).
    pub rank_one: Option<RankOne>,
}

impl ComponentTerm {
    /// A closed form checked for its shapes, with `b_i` over the whole state of length `dim`.
    ///
    /// # Panics
    /// When the shapes disagree (a round's closed form that contradicts itself is a defect of
    /// that round, not an input).
    fn checked(self, dim: usize, noise_len: usize) -> (Self, DVector<f64>) {
        let ascending = |v: &[usize]| v.windows(2).all(|w| w[0] < w[1]) && v.last().is_none_or(|&x| x < dim);
        assert!(
            ascending(&self.rows)
                && ascending(&self.cols)
                && self.a.shape() == (self.rows.len(), self.cols.len())
                && self.b.len() == self.rows.len()
                && self.w.shape() == (self.rows.len(), noise_len)
                && self.rank_one.as_ref().is_none_or(|f| f.left.len() == self.rows.len() && f.right.len() == f.cols.len() && ascending(&f.cols)),
            "a component's closed-form term has inconsistent shapes"
        );
        let mut b = DVector::zeros(dim);
        for (k, &r) in self.rows.iter().enumerate() {
            b[r] = self.b[k];
        }
        (self, b)
    }
}

/// `scale e_l` as a noise vector of length `len`.
fn unit_noise(len: usize, l: usize, scale: f64) -> Vec<f64> {
    let mut noise = vec![0.0; len];
    noise[l] = scale;
    noise
}

/// The magnitude each coordinate is probed at ([`coordinate_lift`]): from the largest of its
/// entries in `sizes` (the round's constants, the origin of the probe).
fn coordinate_lifts(sizes: &[&DVector<f64>]) -> Vec<f64> {
    let dim = sizes.first().map_or(0, |v| v.len());
    (0..dim).map(|j| coordinate_lift(sizes.iter().map(|v| v[j].abs()).fold(0.0, f64::max))).collect()
}

/// A test value for state coordinate `j` of [`read_columns`]: in `[1, 2)`, different for every
/// coordinate (the fractional parts of `j` times the golden ratio), so that the columns a
/// component reads do not cancel in a sum.
fn test_value(j: usize) -> f64 {
    1.0 + (j as f64 * 0.618_033_988_749_894_9).fract()
}

/// The columns component `i` of `round` may read, found by bisection: a range of coordinates is
/// read when the round with `i` alone, from a state holding [`test_value`]s on the range and 0
/// elsewhere, differs from the round without it by more than its constant `b_zero`. A range that
/// is read is split in two until single columns remain; one that is not is dropped whole. A
/// component that reads `c` of `D` columns costs about `2 c log2(D / c)` calls instead of `D`.
/// Exact for a round with a diagonal base map, whose probes of coordinates a component does not
/// touch cancel exactly; a column kept by rounding is probed and kept as the dense probe keeps it.
fn read_columns(round: &dyn RandomAffineRound, i: usize, b_zero: &DVector<f64>, lifts: &[f64]) -> Vec<usize> {
    let dim = round.state_dim();
    let mut out = Vec::new();
    let mut ranges = vec![(0, dim)];
    while let Some((lo, hi)) = ranges.pop() {
        if hi <= lo || !reads_where(round, i, b_zero, lifts, &|j| (lo..hi).contains(&j)) {
            continue;
        }
        if hi - lo == 1 {
            out.push(lo);
        } else {
            let mid = lo + (hi - lo) / 2;
            ranges.push((mid, hi));
            ranges.push((lo, mid));
        }
    }
    out.sort_unstable();
    out
}

/// Whether component `i` reads any of the coordinates `on` selects: the round with `i` alone,
/// from a state holding [`test_value`]s there, each times its coordinate's magnitude `lifts[j]`
/// ([`coordinate_lift`]: a read of a unit value of a coordinate in units of `1e16` may change no
/// bit of the output), and 0 elsewhere, differs from the round without it by more than its
/// constant `b_zero`.
fn reads_where(round: &dyn RandomAffineRound, i: usize, b_zero: &DVector<f64>, lifts: &[f64], on: &dyn Fn(usize) -> bool) -> bool {
    let quiet = vec![0.0; round.noise_per_component()];
    let z = DVector::from_fn(round.state_dim(), |j, _| if on(j) { test_value(j) * lifts[j] } else { 0.0 });
    let diff = round.apply(&z, &[i], &quiet) - round.apply(&z, &[], &[]) - b_zero;
    diff.iter().any(|x| *x != 0.0)
}

/// The columns component `i` may read: the round's declaration ([`RandomAffineRound::reads`])
/// when one probe of every other coordinate finds none of them read, else by bisection
/// ([`read_columns`]).
fn candidate_columns(round: &dyn RandomAffineRound, i: usize, b_zero: &DVector<f64>, lifts: &[f64]) -> Vec<usize> {
    if let Some(mut declared) = round.reads(i) {
        declared.sort_unstable();
        declared.dedup();
        if !reads_where(round, i, b_zero, lifts, &|j| declared.binary_search(&j).is_err()) {
            return declared;
        }
    }
    read_columns(round, i, b_zero, lifts)
}

impl ComponentTerm {
    /// Probes component `i` of `round` (`base_zero = round(0, {})`): its linear parts at 0 and
    /// its constant `b_i`, at 0 or, given `(z_ref, round(z_ref, {}))`, at `z_ref`. Returns the
    /// map on the rows it touches and `b_i` over the whole state.
    fn probe(
        round: &dyn RandomAffineRound,
        i: usize,
        base_zero: &DVector<f64>,
        constant: Option<(&DVector<f64>, &DVector<f64>)>,
        diagonal_base: bool,
    ) -> (Self, DVector<f64>) {
        let (dim, noise_len) = (round.state_dim(), round.noise_per_component());
        let zero = DVector::zeros(dim);
        let quiet = vec![0.0; noise_len];
        let b_zero = round.apply(&zero, &[i], &quiet) - base_zero;
        let point = constant.map_or(&zero, |(origin, _)| origin);
        let lifts = coordinate_lifts(&[base_zero, &b_zero, point]);
        let candidates = if diagonal_base { candidate_columns(round, i, &b_zero, &lifts) } else { (0..dim).collect() };
        let a_cols: Vec<(usize, DVector<f64>)> = candidates
            .into_iter()
            .map(|j| {
                // `round(z, {i}) - round(z, {}) - b_i`, lifted where `b_i` or the base swamps it.
                let difference = |z: &DVector<f64>| {
                    let (with, without) = (round.apply(z, &[i], &quiet), round.apply(z, &[], &[]));
                    let scale = with.amax().max(without.amax());
                    (with - without - &b_zero, scale)
                };
                (j, linear_column(dim, j, lifts[j], &difference))
            })
            .collect();
        let quiet_at = round.apply(point, &[i], &quiet);
        let scale = quiet_at.amax().max(point.amax()).max(1.0);
        let w_cols: Vec<DVector<f64>> = (0..noise_len)
            .map(|l| {
                let col = round.apply(&zero, &[i], &unit_noise(noise_len, l, 1.0)) - base_zero - &b_zero;
                lift_column(col, scale, &|lift| (round.apply(point, &[i], &unit_noise(noise_len, l, lift)) - &quiet_at) / lift)
            })
            .collect();
        let b = match constant {
            Some((origin, base_origin)) => round.apply(origin, &[i], &quiet) - base_origin,
            None => b_zero.clone(),
        };
        let a_cols: Vec<(usize, DVector<f64>)> = a_cols.into_iter().filter(|(_, v)| v.iter().any(|x| *x != 0.0)).collect();
        let cols: Vec<usize> = a_cols.iter().map(|(j, _)| *j).collect();
        let mut touched = vec![false; dim];
        for v in a_cols.iter().map(|(_, v)| v).chain(&w_cols).chain([&b_zero, &b]) {
            for r in support(v) {
                touched[r] = true;
            }
        }
        let rows: Vec<usize> = (0..dim).filter(|r| touched[*r]).collect();
        let a = DMatrix::from_fn(rows.len(), cols.len(), |r, c| a_cols[c].1[rows[r]]);
        let w = DMatrix::from_fn(rows.len(), noise_len, |r, l| w_cols[l][rows[r]]);
        let b_r = DVector::from_fn(rows.len(), |r, _| b[rows[r]]);
        (Self { rows, cols, a, b: b_r, w, rank_one: None }, b)
    }

    /// The term with the round's rank-one factors `(u, v)` of `A_i` restricted to its rows and
    /// columns, when `u v^T` is zero outside them; otherwise (a factor the term's support does not
    /// hold, say where the probe's difference rounded to zero) the term as it is.
    ///
    /// # Panics
    /// When a factor's length is not the state's `dim` (a defect of the round).
    fn with_rank_one(mut self, dim: usize, factors: Option<(DVector<f64>, DVector<f64>)>) -> Self {
        let Some((u, v)) = factors else { return self };
        assert!(u.len() == dim && v.len() == dim, "a component's rank-one factors are not of the state's length");
        let (mut in_rows, mut in_cols) = (vec![false; dim], vec![false; dim]);
        self.rows.iter().for_each(|&r| in_rows[r] = true);
        self.cols.iter().for_each(|&c| in_cols[c] = true);
        let outside = |x: &DVector<f64>, inside: &[bool]| x.iter().zip(inside).any(|(x, &ok)| *x != 0.0 && !ok);
        let (u_zero, v_zero) = (u.iter().all(|x| *x == 0.0), v.iter().all(|x| *x == 0.0));
        if (!v_zero && outside(&u, &in_rows)) || (!u_zero && outside(&v, &in_cols)) {
            return self;
        }
        let cols: Vec<usize> = (0..dim).filter(|&c| v[c] != 0.0).collect();
        let right = DVector::from_fn(cols.len(), |k, _| v[cols[k]]);
        self.rank_one = Some(RankOne { left: DVector::from_fn(self.rows.len(), |k, _| u[self.rows[k]]), cols, right });
        self
    }
}

/// The components' terms as [`super::rows`] reads them.
fn terms(clients: &[ComponentTerm]) -> Vec<Term<'_>> {
    clients.iter().map(|c| Term { rows: &c.rows, cols: &c.cols, a: &c.a, b: &c.b, rank_one: c.rank_one.as_ref() }).collect()
}

/// The linear part of the empty-sample round (diagonal for every algorithm here, dense in general).
#[derive(Debug, Clone)]
enum BaseLinear {
    Diagonal(DVector<f64>),
    Dense(DMatrix<f64>),
}

impl BaseLinear {
    /// The entry `A0[r, c]`.
    fn entry(&self, r: usize, c: usize) -> f64 {
        match self {
            BaseLinear::Diagonal(d) => {
                if r == c {
                    d[r]
                } else {
                    0.0
                }
            }
            BaseLinear::Dense(a) => a[(r, c)],
        }
    }
}

/// The affine maps of one round, recovered by probing.
#[derive(Debug, Clone)]
pub struct RoundMaps {
    dim: usize,
    base: BaseLinear,
    c0: DVector<f64>,
    a_sum: DMatrix<f64>,
    b_sum: DVector<f64>,
    /// `sum_i W_i W_i^T`.
    noise_cov: DMatrix<f64>,
    clients: Vec<ComponentTerm>,
    /// How `propagate` multiplies by `Abar`.
    products: Products,
    /// The maps split into the shared block and each component's own (a diagonal `A0` only).
    structure: Option<Structure>,
    /// The rows the round changes and its maps there (a dense `A0`, or a diagonal one where they
    /// cost fewer flops than the structured path).
    changed_rows: Option<ChangedRows>,
}

/// How [`RoundMaps::propagate`] multiplies by `Abar = sum_i A_i`: the same quantity either way,
/// up to rounding (tests hold the two within 1e-12 relative).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Products {
    /// `Abar` as one dense `D x D` matrix: `P Abar^T` and `Abar (P Abar^T)` cost `2 D^3`.
    Dense,
    /// `Abar` as its components' blocks: `P Abar^T = sum_i P[:, C_i] A_i^T` scattered to the
    /// columns `R_i`, and `Abar X = sum_i A_i X[C_i, :]` scattered to the rows `R_i`, which cost
    /// `2 D sum_i |R_i| |C_i|`: linear in the number of components when each touches a shared
    /// block and its own (a client reads `u` and `v_i` only).
    Blocks,
    /// The state split into the block several components touch and each component's own
    /// block, the covariance propagated block by block (`super::structured`): about
    /// `(3 s + 2 b + 7) D^2` per round for a shared block of size `s` and own blocks of size at
    /// most `b`. Needs a diagonal `A0`.
    Structured,
    /// Only the rows `R` the round changes propagated (`super::rows`): about `4 |R| |K| D + D^2`
    /// per round for rows that read `|K|` columns, for an `A0` that is the identity outside `R` (a client's step that rewrites
    /// its own block and reads the server's).
    Rows,
}

/// The structured path is used when it saves at least this factor of the dense path's flops.
const STRUCTURED_MIN_SAVING: f64 = 2.0;

/// Dense products below this many flops per round are fast enough that blocks do not pay.
const BLOCK_PRODUCTS_MIN_FLOPS: f64 = 1e7;

/// Blocks are used when they save at least this factor of the dense flops (dense products run
/// at a higher rate per flop than many small ones).
const BLOCK_PRODUCTS_MIN_SAVING: f64 = 4.0;

impl Products {
    /// The faster way for a state of dimension `dim` whose components touch `blocks`
    /// (`(|R_i|, |C_i|)` each): the cheaper of the structured path and the changed rows (their
    /// flops per round, where available) when it saves [`STRUCTURED_MIN_SAVING`] times the flops, else dense below [`BLOCK_PRODUCTS_MIN_FLOPS`],
    /// blocks when they save [`BLOCK_PRODUCTS_MIN_SAVING`] times the flops.
    fn choose(dim: usize, blocks: impl Iterator<Item = (usize, usize)>, structured_flops: Option<f64>, rows_flops: Option<f64>) -> Self {
        let d = dim as f64;
        let dense = 2.0 * d * d * d;
        let cheapest = [(Products::Structured, structured_flops), (Products::Rows, rows_flops)]
            .into_iter()
            .filter_map(|(p, f)| Some((p, f?)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((products, _)) = cheapest.filter(|(_, f)| STRUCTURED_MIN_SAVING * f <= 2.0 * dense) {
            return products;
        }
        let block: f64 = blocks.map(|(r, c)| 2.0 * d * r as f64 * c as f64).sum();
        if dense >= BLOCK_PRODUCTS_MIN_FLOPS && BLOCK_PRODUCTS_MIN_SAVING * block <= dense {
            Products::Blocks
        } else {
            Products::Dense
        }
    }
}

fn support(v: &DVector<f64>) -> impl Iterator<Item = usize> + '_ {
    v.iter().enumerate().filter(|(_, x)| **x != 0.0).map(|(k, _)| k)
}

/// The linear part `A0` of the round with no component active, probed column by column and
/// kept as its diagonal while no column has an entry off it.
fn probe_base(round: &dyn RandomAffineRound, base_zero: &DVector<f64>, origin: &DVector<f64>) -> BaseLinear {
    let dim = round.state_dim();
    let lifts = coordinate_lifts(&[base_zero, origin]);
    let mut diagonal = DVector::zeros(dim);
    // `round(z, {}) - round(0, {})`, lifted where the round's constant swamps it.
    let difference = |z: &DVector<f64>| {
        let v = round.apply(z, &[], &[]);
        let scale = v.amax().max(base_zero.amax());
        (v - base_zero, scale)
    };
    for j in 0..dim {
        let col = linear_column(dim, j, lifts[j], &difference);
        if support(&col).any(|r| r != j) {
            let cols: Vec<DVector<f64>> = (0..dim).map(|k| linear_column(dim, k, lifts[k], &difference)).collect();
            return BaseLinear::Dense(DMatrix::from_columns(&cols));
        }
        diagonal[j] = col[j];
    }
    BaseLinear::Diagonal(diagonal)
}

impl RoundMaps {
    /// Probes `round` around the origin: `1 + dim` calls with no component active, and for each
    /// component `1 + dim + noise_per_component` calls with that component alone, or none where
    /// the round gives the component's term in closed form
    /// ([`RandomAffineRound::component_term`]). A coordinate is probed at its own magnitude, and
    /// a column that the round's constants swamp is probed again at a power-of-two multiple (a
    /// few calls more; see the engine's `lift` module).
    pub fn probe(round: &dyn RandomAffineRound) -> Self {
        Self::probe_at(round, &DVector::zeros(round.state_dim()))
    }

    /// Probes `round` for its maps in the coordinates `e = z - z_ref` of the state measured from
    /// `origin = z_ref`: the linear parts `A0`, `A_i`, `W_i` are the round's own (probed at 0),
    /// the constants are read at `z_ref`, `c0 = round(z_ref, {}) - z_ref` and
    /// `b_i = round(z_ref, {i}) - round(z_ref, {})`, so that
    ///
    /// ```text
    /// e' = A0 e + c0 + sum_i delta_i (A_i e + b_i + W_i xi_i)
    /// ```
    ///
    /// When the round's arithmetic keeps `z_ref` fixed exactly (gradients written as
    /// `H (z - z*)` and `z_ref = z*`), the constants vanish exactly and the moments of the error
    /// carry their own scale however small (see [`super::moments`]). With `origin = 0` this is
    /// [`RoundMaps::probe`]; `1 + n` calls more otherwise.
    pub fn probe_at(round: &dyn RandomAffineRound, origin: &DVector<f64>) -> Self {
        let (n, dim) = (round.components(), round.state_dim());
        let zero = DVector::zeros(dim);
        let at_zero = origin.iter().all(|x| *x == 0.0);
        let base_zero = round.apply(&zero, &[], &[]);
        let base_origin = if at_zero { base_zero.clone() } else { round.apply(origin, &[], &[]) };
        let c0 = &base_origin - origin;
        let base = probe_base(round, &base_zero, origin);
        let diagonal = matches!(base, BaseLinear::Diagonal(_));

        let mut a_sum = DMatrix::zeros(dim, dim);
        let mut b_sum = DVector::zeros(dim);
        let mut noise_cov = DMatrix::zeros(dim, dim);
        let mut clients = Vec::with_capacity(n);
        // Each component's probe calls the round on its own; they run in parallel and are summed
        // below in component order, so the sums do not depend on the threads.
        let constant = (!at_zero).then_some((origin, &base_origin));
        let noise_len = round.noise_per_component();
        let probed = super::monte_carlo::in_order((0..n).collect(), |i| {
            let (term, b) = match (at_zero && diagonal).then(|| round.component_term(i)).flatten() {
                Some(term) => term.checked(dim, noise_len),
                None => ComponentTerm::probe(round, i, &base_zero, constant, diagonal),
            };
            let term = if term.rank_one.is_some() { term } else { term.with_rank_one(dim, round.component_rank_one(i)) };
            (term, b)
        });
        for (client, b) in probed {
            for (ci, &c) in client.cols.iter().enumerate() {
                for (ri, &r) in client.rows.iter().enumerate() {
                    a_sum[(r, c)] += client.a[(ri, ci)];
                }
            }
            b_sum += &b;
            let ww = &client.w * client.w.transpose();
            for (ri, &r) in client.rows.iter().enumerate() {
                for (rj, &s) in client.rows.iter().enumerate() {
                    noise_cov[(r, s)] += ww[(ri, rj)];
                }
            }
            clients.push(client);
        }
        let structure = match &base {
            BaseLinear::Diagonal(lambda) => {
                let probed: Vec<Probed> =
                    clients.iter().map(|c| Probed { rows: &c.rows, cols: &c.cols, a: &c.a, b: &c.b, rank_one: c.rank_one.as_ref(), w: &c.w }).collect();
                Some(Structure::new(lambda, &c0, &probed))
            }
            BaseLinear::Dense(_) => None,
        };
        let changed_rows = {
            let a0 = |r: usize, c: usize| base.entry(r, c);
            let terms = terms(&clients);
            let extent = Extent::of(&a0, &c0, &a_sum, &terms);
            // With a diagonal `A0` the rows are kept only where they beat the structured path
            // (a client's local step in coordinates relative to the server's model).
            let flops = extent.flops(dim);
            let wanted = structure.as_ref().is_none_or(|s| flops < s.flops());
            wanted.then(|| (ChangedRows::new(extent, &a0, &c0, &a_sum, &b_sum, &noise_cov, &terms), flops))
        };
        let products = Products::choose(
            dim,
            clients.iter().map(|c| (c.rows.len(), c.cols.len())),
            structure.as_ref().map(Structure::flops),
            changed_rows.as_ref().map(|(_, flops)| *flops),
        );
        let changed_rows = changed_rows.map(|(rows, _)| rows);
        Self { dim, base, c0, a_sum, b_sum, noise_cov, clients, products, structure, changed_rows }
    }

    /// How `propagate` multiplies by `Abar` (chosen by size when probed).
    pub fn products(&self) -> Products {
        self.products
    }

    /// The same maps, multiplying by `Abar` the given way.
    /// `Structured` needs a diagonal `A0`, and `Rows` a dense one or a diagonal one where the
    /// rows cost fewer flops than the structured path (only then are they built); without them
    /// the maps keep their blocks.
    pub fn with_products(mut self, products: Products) -> Self {
        let unavailable = match products {
            Products::Structured => self.structure.is_none(),
            Products::Rows => self.changed_rows.is_none(),
            Products::Dense | Products::Blocks => false,
        };
        self.products = if unavailable { Products::Blocks } else { products };
        self
    }

    /// `Abar v`.
    fn abar_vec(&self, v: &DVector<f64>) -> DVector<f64> {
        match self.products {
            Products::Dense => &self.a_sum * v,
            Products::Blocks | Products::Structured | Products::Rows => {
                let mut out = DVector::zeros(self.dim);
                for c in &self.clients {
                    let vc = DVector::from_fn(c.cols.len(), |k, _| v[c.cols[k]]);
                    let t = &c.a * vc;
                    for (ri, &r) in c.rows.iter().enumerate() {
                        out[r] += t[ri];
                    }
                }
                out
            }
        }
    }

    /// `P Abar^T`.
    fn times_abar_t(&self, p: &DMatrix<f64>) -> DMatrix<f64> {
        match self.products {
            Products::Dense => p * self.a_sum.transpose(),
            Products::Blocks | Products::Structured | Products::Rows => {
                let mut out = DMatrix::zeros(p.nrows(), self.dim);
                for c in &self.clients {
                    let pc = DMatrix::from_fn(p.nrows(), c.cols.len(), |r, k| p[(r, c.cols[k])]);
                    let t = pc * c.a.transpose();
                    for (ri, &r) in c.rows.iter().enumerate() {
                        let mut col = out.column_mut(r);
                        col += t.column(ri);
                    }
                }
                out
            }
        }
    }

    /// `Abar X`.
    fn abar_times(&self, x: &DMatrix<f64>) -> DMatrix<f64> {
        match self.products {
            Products::Dense => &self.a_sum * x,
            Products::Blocks | Products::Structured | Products::Rows => {
                let mut out = DMatrix::zeros(self.dim, x.ncols());
                for c in &self.clients {
                    let xc = DMatrix::from_fn(c.cols.len(), x.ncols(), |k, s| x[(c.cols[k], s)]);
                    let t = &c.a * xc;
                    for (ri, &r) in c.rows.iter().enumerate() {
                        let mut row = out.row_mut(r);
                        row += t.row(ri);
                    }
                }
                out
            }
        }
    }

    fn base_apply_vec(&self, v: &DVector<f64>) -> DVector<f64> {
        match &self.base {
            BaseLinear::Diagonal(d) => d.component_mul(v),
            BaseLinear::Dense(a) => a * v,
        }
    }

    /// `A0 M` for a matrix `M`.
    fn base_left(&self, m: &DMatrix<f64>) -> DMatrix<f64> {
        match &self.base {
            BaseLinear::Diagonal(d) => {
                let mut out = m.clone();
                for (r, mut row) in out.row_iter_mut().enumerate() {
                    row *= d[r];
                }
                out
            }
            BaseLinear::Dense(a) => a * m,
        }
    }

    /// One round of moment propagation: `(mu, C) -> (mu', C')` (see the module's formula).
    ///
    /// The covariance is a sum of terms that are each non-negative (positive semidefinite)
    /// except the sampling term `(q - p^2) Y Y^T` of a design without replacement (`q < p^2`),
    /// which with `(p2 - q) sum_i y_i y_i^T` forms the covariance of the sampled sum; full
    /// participation and Bernoulli designs have `q = p^2` and no such term.
    pub fn propagate(&self, m: &Moments, inc: &InclusionMoments) -> Moments {
        let mut out = Moments { mean: DVector::zeros(0), cov: DMatrix::zeros(0, 0) };
        self.propagate_into(m, inc, &mut out);
        out
    }

    /// [`RoundMaps::propagate`] into `out`, reusing its storage when it has the state's size (a
    /// series alternates two of them instead of allocating a covariance per round).
    pub fn propagate_into(&self, m: &Moments, inc: &InclusionMoments, out: &mut Moments) {
        match (&self.structure, self.products) {
            (Some(structure), Products::Structured) => {
                if out.cov.shape() != (self.dim, self.dim) {
                    out.cov = DMatrix::zeros(self.dim, self.dim);
                }
                if structure.identity {
                    out.mean = structure.propagate(&m.mean, &m.cov, inc, &mut out.cov);
                } else {
                    let mut next = DMatrix::zeros(self.dim, self.dim);
                    let mean = structure.propagate(&structure.gather_vec(&m.mean), &structure.gather(&m.cov), inc, &mut next);
                    out.mean = structure.scatter_vec(&mean);
                    structure.scatter_into(&next, &mut out.cov);
                }
            }
            _ => match (&self.changed_rows, self.products) {
                (Some(rows), Products::Rows) => {
                    out.clone_from(m);
                    rows.propagate_in_place(out, inc);
                }
                _ => *out = self.propagate_products(m, inc),
            },
        }
    }

    /// [`RoundMaps::propagate`] in place: with [`Products::Rows`] only the rows and columns the
    /// round changes are written (no copy of the covariance), otherwise as `propagate`.
    pub fn propagate_in_place(&self, m: &mut Moments, inc: &InclusionMoments) {
        match (&self.changed_rows, self.products) {
            (Some(rows), Products::Rows) => rows.propagate_in_place(m, inc),
            _ => *m = self.propagate(m, inc),
        }
    }

    /// One round with `Abar` as a dense matrix or as its components' blocks.
    fn propagate_products(&self, m: &Moments, inc: &InclusionMoments) -> Moments {
        let (mu, c) = (&m.mean, &m.cov);
        let w_mean = self.base_apply_vec(mu) + &self.c0;
        let y_sum = self.abar_vec(mu) + &self.b_sum;
        let mean = &w_mean + &y_sum * inc.p;

        // Cov((A0 + sum_i delta_i A_i) x) = A0 C A0^T + p (A0 C Abar^T + Abar C A0^T) + q Abar C Abar^T + ...
        let a0_c = self.base_left(c);
        let mut next = self.base_left(&a0_c.transpose());
        let c_abar_t = self.times_abar_t(c);
        let cross = self.base_left(&c_abar_t);
        next += (&cross + cross.transpose()) * inc.p;
        next += self.abar_times(&c_abar_t) * inc.q;
        // ... + (p2 - q) sum_i (A_i C A_i^T + y_i y_i^T), each on its own rows and columns
        let own = inc.p2 - inc.q;
        if own != 0.0 {
            let mut terms = OwnTerms::new(mu, c);
            for cl in &self.clients {
                terms.add(OwnTerm { a: &cl.a, b: &cl.b, cols: &cl.cols, rank_one: cl.rank_one.as_ref() }, (own, &cl.rows), &mut next);
            }
        }
        let pairs = inc.q - inc.p * inc.p;
        if pairs != 0.0 {
            next += &y_sum * y_sum.transpose() * pairs;
        }
        next += &self.noise_cov * inc.p2;
        let cov = (&next + next.transpose()) * 0.5;
        Moments { mean, cov }
    }

    /// The coordinates of each component's block and the shared ones (`S + o_i`, see
    /// [`Products::Structured`]); `None` without a block structure (a dense `A0`).
    pub fn component_blocks(&self) -> Option<Vec<Vec<usize>>> {
        Some(self.structure.as_ref()?.component_blocks().filter(|idx| !idx.is_empty()).collect())
    }

    /// State dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of clients probed and the noise columns of client `i` (for tests).
    pub fn client_noise_columns(&self, i: usize) -> usize {
        self.clients[i].w.ncols()
    }

    /// The rows of the state component `i`'s term writes (its block).
    pub fn client_rows(&self, i: usize) -> Vec<usize> {
        self.clients[i].rows.clone()
    }

    /// Number of components probed.
    pub fn components(&self) -> usize {
        self.clients.len()
    }

    /// The dense linear part `A0` of the round with no component active.
    pub fn base_matrix(&self) -> DMatrix<f64> {
        match &self.base {
            BaseLinear::Diagonal(v) => DMatrix::from_diagonal(v),
            BaseLinear::Dense(a) => a.clone(),
        }
    }

    /// The dense affine map of one outcome: `(A_s, c_s, sum_{i in s} W_i W_i^T)`.
    fn outcome_map(&self, active: &[usize]) -> (DMatrix<f64>, DVector<f64>, DMatrix<f64>) {
        let mut a = self.base_matrix();
        let mut c = self.c0.clone();
        let mut noise = DMatrix::zeros(self.dim, self.dim);
        for &i in active {
            let m = &self.clients[i];
            for (ci, &col) in m.cols.iter().enumerate() {
                for (ri, &row) in m.rows.iter().enumerate() {
                    a[(row, col)] += m.a[(ri, ci)];
                }
            }
            let ww = &m.w * m.w.transpose();
            for (ri, &row) in m.rows.iter().enumerate() {
                c[row] += m.b[ri];
                for (rj, &col) in m.rows.iter().enumerate() {
                    noise[(row, col)] += ww[(ri, rj)];
                }
            }
        }
        (a, c, noise)
    }

    /// One round of moment propagation over an enumerated design: the mixture, over the
    /// outcomes `s` with probability `P(s)`, of the moments after the affine map of `s` (see the
    /// module's formula), accumulated in one pass with weighted running means so that every term
    /// is positive semidefinite. Exact for any finite design, exchangeable or not; its cost grows
    /// with the number of outcomes, so it serves small designs and cross-checks of the structured
    /// path.
    pub fn propagate_enumerated(&self, m: &Moments, outcomes: &[Outcome]) -> Moments {
        let mut mean = DVector::zeros(self.dim);
        let mut within = DMatrix::zeros(self.dim, self.dim);
        let mut between = DMatrix::zeros(self.dim, self.dim);
        let mut total = 0.0;
        for outcome in outcomes {
            let weight = outcome.probability;
            if weight == 0.0 {
                continue;
            }
            let (a, c, noise) = self.outcome_map(&outcome.active);
            let m_s = &a * &m.mean + c;
            within += (&a * &m.cov * a.transpose() + noise) * weight;
            // West's weighted update: between += w (1 - w / W) d d^T, d = m_s - mean before.
            total += weight;
            let delta = &m_s - &mean;
            mean += &delta * (weight / total);
            between += &delta * delta.transpose() * (weight * (1.0 - weight / total));
        }
        let next = (within + between) / total;
        Moments { mean, cov: (&next + next.transpose()) * 0.5 }
    }
}

/// Refinement passes of the stationary second moment (each one solve with the stored factors).
const REFINEMENT_STEPS: usize = 20;

/// Iteration cap of the SVD and Schur decompositions (nalgebra's default, 0, never gives up).
const MAX_ITERATIONS: usize = 100_000;

/// Directions `l` with `l^T z` conserved exactly by every round, whatever the sample and the
/// noise (`l^T A0 = l^T`, `l^T A_i = 0`, `l^T b_i = 0`, `l^T W_i = 0`, `l^T c0 = 0`). Control-variate
/// methods have them (the server variate minus the mean of the clients' never changes). They make the fixed-point equations singular; the
/// conserved values pin the solution down.
fn conserved_directions(maps: &RoundMaps, a0: &DMatrix<f64>, a_eff: &DMatrix<f64>) -> Vec<DVector<f64>> {
    let d = maps.dim;
    // l^T (I - A_eff) = 0: l spans the null space of (I - A_eff)^T, its right singular vectors.
    let Some(svd) = SVD::try_new((DMatrix::identity(d, d) - a_eff).transpose(), false, true, prec::engine::SVD_CONVERGENCE, MAX_ITERATIONS) else {
        return Vec::new();
    };
    let Some(v_t) = svd.v_t else { return Vec::new() };
    // The linear maps are dimensionless: `I - A_eff` has the identity's scale 1 at least.
    let tol = prec::engine::CONSERVED_DIRECTION * a_eff.amax().max(1.0);
    // The offsets `c0`, `b_i` and the noise `W_i` carry the state's units: every product `l^T x`
    // is judged against `x`'s own scale, `||x||_max sum_r |l_r|`, however small (a drift or
    // noise of 1e-12 on a kept coordinate had passed a tolerance at the maps' scale, or at the
    // largest offset of another vector, and a random walk was given a steady state). Within one
    // vector a tiny entry beside a large one is not told from the probe's rounding there. A
    // computed null vector leans towards the slowest other modes by about `||I - A_eff|| / gap`
    // times the rounding ([`prec::engine::CONSERVED_OFFSET_MAX`] caps it).
    let s = &svd.singular_values;
    let gap = s.iter().copied().filter(|&x| x > tol).fold(f64::INFINITY, f64::min);
    let lean = (s.max() / gap).max(1.0);
    let relative = (prec::engine::CONSERVED_DIRECTION * lean).min(prec::engine::CONSERVED_OFFSET_MAX);
    let vanishes = |l: &[f64], x: &[f64]| {
        let (dot, weight, size) = l.iter().zip(x).fold((0.0, 0.0, 0.0_f64), |(d, w, m), (a, b)| (d + a * b, w + a.abs(), m.max(b.abs())));
        dot.abs() <= relative * weight * size
    };
    let on_rows = |c: &ComponentTerm, l: &DVector<f64>| -> Vec<f64> { c.rows.iter().map(|&r| l[r]).collect() };
    // ||l^T A_i|| on the client's rows (dimensionless); l^T b_i and l^T W_i column by column.
    let linear = |c: &ComponentTerm, l: &DVector<f64>| (c.a.transpose() * DVector::from_vec(on_rows(c, l))).amax();
    let offsets = |c: &ComponentTerm, l: &DVector<f64>| {
        let lr = on_rows(c, l);
        vanishes(&lr, c.b.as_slice()) && c.w.column_iter().all(|w| vanishes(&lr, &w.iter().copied().collect::<Vec<f64>>()))
    };
    (0..d)
        .filter(|&j| svd.singular_values[j] <= tol)
        .map(|j| v_t.row(j).transpose())
        .filter(|l| {
            (a0.transpose() * l - l).amax() <= tol
                && vanishes(l.as_slice(), maps.c0.as_slice())
                && maps.clients.iter().all(|c| linear(c, l) <= tol && offsets(c, l))
        })
        .collect()
}

/// The stationary moments `(mu*, C*)`, the fixed point of [`RoundMaps::propagate`] reached from
/// the initial moments `m0`: where the expected metrics of a run with a constant step settle
/// ("steady state").
///
/// The propagation is affine in `C` for fixed `mu`, so the fixed point is solved for, not run to:
/// `(I - A0 - p Abar) mu* = c0 + p bbar` (`stationary_mean`), then `C* = Lmap(C*) + S(mu*)`, a
/// linear system over the `D(D+1)/2` entries of a symmetric matrix whose operator is read off
/// `propagate` itself (`CovarianceEquations`). Exactly conserved directions `l` (see
/// `conserved_directions`) add the equations `l^T mu* = l^T mu0` and `C* l = 0`; the stacked
/// systems are solved by least squares and refined against `propagate`
/// (`stationary_covariance`). `None` when some other mode of the mean does not contract, a
/// conserved value is random (`conserved_values`), the answer leaves a residual (the equations
/// were not consistent), is not finite, or its covariance is not PSD (`is_steady_state`). A fixed
/// point of an expanding second-moment recursion would pass these checks; callers that run the
/// recursion compare its end with the fixed point (the experiments' tests do).
///
/// # Errors
/// [`crate::error::Error::InvalidField`] naming the state dimension when the covariance system (its
/// `D(D+1)/2` unknowns squared, held three times over: [`stationary_system_bytes`]) needs more
/// than [`crate::error::memory_limit`], or its factorization more multiply-adds than
/// [`crate::budget::WORK_BUDGET`] ([`stationary_system_work`]): refused before it is allocated,
/// first without the conserved directions' equations (before any work of order `D^3`), then with
/// them.
pub fn stationary_moments(maps: &RoundMaps, inc: &InclusionMoments, m0: &Moments) -> Result<Option<Moments>> {
    let fits = |conserved: usize| {
        let what = format!("the steady state's covariance system at D = {} with {conserved} conserved directions", maps.dim);
        crate::error::require_memory("the state dimension D", stationary_system_bytes(maps.dim, conserved), &what)?;
        let work = stationary_system_work(maps.dim, conserved);
        if work <= crate::budget::WORK_BUDGET {
            return Ok(());
        }
        Err(crate::error::Error::field(
            "the state dimension D",
            format!("the steady state's covariance system at D = {} needs about {work:.3e} multiply-adds to factor", maps.dim),
            format!("a state whose system needs at most {:.0e} (2 u^2 (u + k D), u = D(D+1)/2 unknowns, k conserved directions)", crate::budget::WORK_BUDGET),
        ))
    };
    fits(0)?;
    let a0 = maps.base_matrix();
    let a_eff = &a0 + &maps.a_sum * inc.p;
    let conserved = conserved_directions(maps, &a0, &a_eff);
    fits(conserved.len())?;
    Ok(stationary_moments_with(maps, inc, m0, &a_eff, &conserved))
}

/// The bytes [`stationary_moments`] holds at once at state dimension `d` with `conserved`
/// conserved directions: three copies (the system, its factors, a fallback SVD's) of its
/// covariance system, `(u + conserved d) x u` numbers with `u = d(d+1)/2` unknowns; in `f64`, so
/// that no size overflows.
pub fn stationary_system_bytes(d: usize, conserved: usize) -> f64 {
    let (d, k) = (d as f64, conserved as f64);
    let unknowns = d * (d + 1.0) / 2.0;
    3.0 * 8.0 * (unknowns + k * d) * unknowns
}

/// The multiply-adds of the Householder QR [`stationary_moments`] factors its covariance system
/// with at state dimension `d` with `conserved` conserved directions: about `2 u^2 (u + conserved
/// d)`, `u = d(d+1)/2`, in `f64`.
pub fn stationary_system_work(d: usize, conserved: usize) -> f64 {
    let (d, k) = (d as f64, conserved as f64);
    let unknowns = d * (d + 1.0) / 2.0;
    2.0 * unknowns * unknowns * (unknowns + k * d)
}

/// [`stationary_moments`] once its memory and work are known to fit, from `A_eff = A0 + p Abar` and the
/// conserved directions.
fn stationary_moments_with(maps: &RoundMaps, inc: &InclusionMoments, m0: &Moments, a_eff: &DMatrix<f64>, conserved: &[DVector<f64>]) -> Option<Moments> {
    if non_contracting_modes(a_eff)? > conserved.len() {
        return None;
    }
    let values = conserved_values(conserved, m0)?;
    let mu = stationary_mean(maps, inc, a_eff, conserved, &values)?;
    let equations = CovarianceEquations::new(maps, inc, &mu, conserved);
    let cov = stationary_covariance(&equations)?;
    Some(Moments { mean: mu, cov })
}

/// The number of modes of the mean recursion that do not contract: eigenvalues `z` of
/// `A_eff = A0 + p Abar` with `|z| >= 1 - UNIT_MODULUS` ([`prec::engine::UNIT_MODULUS`], from its
/// real Schur form). `None` when the Schur decomposition fails or `A_eff` is not finite.
fn non_contracting_modes(a_eff: &DMatrix<f64>) -> Option<usize> {
    if !a_eff.iter().all(|x| x.is_finite()) {
        return None;
    }
    let schur = Schur::try_new(a_eff.clone(), prec::engine::SCHUR_CONVERGENCE, MAX_ITERATIONS)?;
    Some(schur.complex_eigenvalues().iter().filter(|z| z.norm() >= 1.0 - prec::engine::UNIT_MODULUS).count())
}

/// The conserved values `v = l^T mu0`, one per conserved direction `l`. `None` when one of them is
/// random: `Var(l^T z0) = l^T C0 l > CONSERVED_VALUE (1 + v^2)` ([`prec::engine::CONSERVED_VALUE`])
/// or not a number, so no single fixed point describes the run.
fn conserved_values(conserved: &[DVector<f64>], m0: &Moments) -> Option<Vec<f64>> {
    let values: Vec<f64> = conserved.iter().map(|l| l.dot(&m0.mean)).collect();
    for (l, v) in conserved.iter().zip(&values) {
        let variance = (l.transpose() * &m0.cov * l)[0];
        let deterministic = variance.abs() <= prec::engine::CONSERVED_VALUE * (1.0 + v * v);
        if !deterministic {
            return None;
        }
    }
    Some(values)
}

/// The stationary mean `mu*`: the least-squares solution (SVD, cutoff
/// [`prec::engine::PSEUDO_INVERSE_CUTOFF`]) of the stacked
/// system `[I - A_eff; l_j^T] mu = [c0 + p bbar; v_j]`, the fixed point of
/// `mu' = A_eff mu + c0 + p bbar` pinned down by the conserved values `l_j^T mu = v_j`.
fn stationary_mean(maps: &RoundMaps, inc: &InclusionMoments, a_eff: &DMatrix<f64>, conserved: &[DVector<f64>], values: &[f64]) -> Option<DVector<f64>> {
    let d = maps.dim;
    let k = conserved.len();
    let mut a_mu = DMatrix::zeros(d + k, d);
    a_mu.view_mut((0, 0), (d, d)).copy_from(&(DMatrix::identity(d, d) - a_eff));
    let mut b_mu = DVector::zeros(d + k);
    b_mu.rows_mut(0, d).copy_from(&(&maps.c0 + &maps.b_sum * inc.p));
    for (j, (l, v)) in conserved.iter().zip(values).enumerate() {
        a_mu.row_mut(d + j).copy_from(&l.transpose());
        b_mu[d + j] = *v;
    }
    SVD::try_new(a_mu, true, true, prec::engine::SVD_CONVERGENCE, MAX_ITERATIONS)?.solve(&b_mu, prec::engine::PSEUDO_INVERSE_CUTOFF).ok()
}

/// The fixed-point equations of the covariance at a fixed mean `mu*`, over the upper triangle
/// `(r, c), r <= c` of a symmetric `C` (`D(D+1)/2` unknowns):
///
/// ```text
/// C[r, c] = propagate(mu*, C)[r, c]        every pair r <= c
/// C l_j   = 0                              every conserved direction l_j
/// ```
struct CovarianceEquations<'a> {
    maps: &'a RoundMaps,
    inc: &'a InclusionMoments,
    mu: &'a DVector<f64>,
    conserved: &'a [DVector<f64>],
    /// The upper-triangle pairs `(r, c)`, `r <= c`, in row-major order: the unknowns.
    pairs: Vec<(usize, usize)>,
}

impl<'a> CovarianceEquations<'a> {
    fn new(maps: &'a RoundMaps, inc: &'a InclusionMoments, mu: &'a DVector<f64>, conserved: &'a [DVector<f64>]) -> Self {
        let d = maps.dim;
        let pairs: Vec<(usize, usize)> = (0..d).flat_map(|r| (r..d).map(move |c| (r, c))).collect();
        Self { maps, inc, mu, conserved, pairs }
    }

    /// The number of unknowns, `D(D+1)/2`.
    fn unknowns(&self) -> usize {
        self.pairs.len()
    }

    /// The number of equations: one per unknown and `D` per conserved direction.
    fn rows(&self) -> usize {
        self.unknowns() + self.conserved.len() * self.maps.dim
    }

    /// The unknown that holds `C[r, c]` (and `C[c, r]`).
    fn index(&self, r: usize, c: usize) -> usize {
        let key = if r <= c { (r, c) } else { (c, r) };
        self.pairs.binary_search(&key).expect("upper triangle")
    }

    /// The symmetric matrix whose upper triangle is `x`.
    fn to_matrix(&self, x: &DVector<f64>) -> DMatrix<f64> {
        let d = self.maps.dim;
        DMatrix::from_fn(d, d, |r, c| x[self.index(r, c)])
    }

    /// The covariance after one round from `(mu*, C)`.
    fn image(&self, cov: &DMatrix<f64>) -> DMatrix<f64> {
        self.maps.propagate(&Moments { mean: self.mu.clone(), cov: cov.clone() }, self.inc).cov
    }

    /// The scale of the tolerances at `C`: `||C + mu* mu*^T||_max`, the raw second moment's
    /// largest entry (no floor of 1: moments of scale `1e-12` are judged at their own scale,
    /// where a residual of `1e-10` is no fixed point; all-zero moments must solve exactly).
    fn scale(&self, cov: &DMatrix<f64>) -> f64 {
        (cov + self.mu * self.mu.transpose()).amax()
    }

    /// The operator of the stacked system: `I - Lmap` on the upper triangle, where column `(r, c)`
    /// of `Lmap` is `image(E_rc) - image(0)` with `E_rc = e_r e_c^T + e_c e_r^T` (probing
    /// `propagate` itself), then the rows of `C l_j`.
    fn operator(&self) -> DMatrix<f64> {
        let d = self.maps.dim;
        let dim = self.unknowns();
        let constant = self.image(&DMatrix::zeros(d, d));
        let mut system = DMatrix::zeros(self.rows(), dim);
        system.view_mut((0, 0), (dim, dim)).fill_with_identity();
        for (col, &(r, c)) in self.pairs.iter().enumerate() {
            let mut basis = DMatrix::zeros(d, d);
            basis[(r, c)] = 1.0;
            basis[(c, r)] = 1.0;
            let image = self.image(&basis) - &constant;
            for (row, &(a, b)) in self.pairs.iter().enumerate() {
                system[(row, col)] -= image[(a, b)];
            }
        }
        // Conserved directions: C l = 0.
        for (j, l) in self.conserved.iter().enumerate() {
            for a in 0..d {
                for (b, lb) in l.iter().enumerate() {
                    system[(dim + j * d + a, self.index(a, b))] += lb;
                }
            }
        }
        system
    }

    /// The residual of the stacked system at a symmetric `C`: `image(C)[r, c] - C[r, c]` per
    /// pair, then `-C l_j`. At `C = 0` it is the right-hand side.
    fn residual(&self, cov: &DMatrix<f64>) -> DVector<f64> {
        let d = self.maps.dim;
        let dim = self.unknowns();
        let image = self.image(cov);
        let mut r = DVector::zeros(self.rows());
        for (row, &(a, b)) in self.pairs.iter().enumerate() {
            r[row] = image[(a, b)] - cov[(a, b)];
        }
        for (j, l) in self.conserved.iter().enumerate() {
            let cl = cov * l;
            for a in 0..d {
                r[dim + j * d + a] = -cl[a];
            }
        }
        r
    }
}

/// The stacked system of [`CovarianceEquations`], factored once for its least-squares solves.
enum Factored {
    /// Householder QR, `A = Q R`: `x = R^-1 (Q^T b)[..u]`, for a system whose `R` is well ranked
    /// ([`prec::engine::QR_RANK_RATIO`]); about a fifteenth of the SVD's work. `R` is formed once
    /// for every solve.
    Qr(QR<f64, Dyn, Dyn>, DMatrix<f64>),
    /// The SVD, cutoff [`prec::engine::PSEUDO_INVERSE_CUTOFF`]: a minimum-norm answer where the
    /// system is (close to) singular.
    Svd(SVD<f64, Dyn, Dyn>),
}

impl Factored {
    /// The QR factors of `a`, or `None` when some `|R_ii|` is below `QR_RANK_RATIO` times the
    /// largest or is not a number.
    fn qr(a: DMatrix<f64>) -> Option<Self> {
        let qr = QR::new(a);
        let r = qr.r();
        let diagonal: Vec<f64> = r.diagonal().iter().map(|x| x.abs()).collect();
        let largest = diagonal.iter().fold(0.0f64, |a, x| a.max(*x));
        let ranked = largest > 0.0 && diagonal.iter().all(|x| *x >= prec::engine::QR_RANK_RATIO * largest);
        ranked.then_some(Self::Qr(qr, r))
    }

    /// The SVD of `a` (`None` when it does not converge).
    fn svd(a: DMatrix<f64>) -> Option<Self> {
        SVD::try_new(a, true, true, prec::engine::SVD_CONVERGENCE, MAX_ITERATIONS).map(Self::Svd)
    }

    /// The least-squares solution of `A x = b`.
    fn solve(&self, b: &DVector<f64>) -> Option<DVector<f64>> {
        match self {
            Self::Qr(qr, r) => {
                let mut qt_b = b.clone();
                qr.q_tr_mul(&mut qt_b);
                r.solve_upper_triangular(&qt_b.rows(0, r.nrows()).into_owned())
            }
            Self::Svd(svd) => svd.solve(b, prec::engine::PSEUDO_INVERSE_CUTOFF).ok(),
        }
    }
}

/// The stationary covariance `C*`: the least-squares solution of `operator x = residual(0)`
/// ([`Factored`]: by QR where the system is well ranked and the answer is a steady state, else by
/// the SVD), then up to [`REFINEMENT_STEPS`] passes of iterative refinement
/// `C += solve(residual(C))` against `propagate` itself, in case the probed operator carries
/// rounding; the refinement stops once `|residual(C)|_max <= REFINEMENT_STOP scale(C)`
/// ([`prec::engine::REFINEMENT_STOP`]). `None` when neither answer is a steady state
/// ([`is_steady_state`]).
fn stationary_covariance(equations: &CovarianceEquations) -> Option<DMatrix<f64>> {
    let operator = equations.operator();
    if let Some(cov) = Factored::qr(operator.clone()).and_then(|qr| refined(equations, &qr)).filter(|cov| is_steady_state(equations, cov)) {
        return Some(cov);
    }
    refined(equations, &Factored::svd(operator)?).filter(|cov| is_steady_state(equations, cov))
}

/// The solution of the stacked system by `solver`, refined (see [`stationary_covariance`]).
fn refined(equations: &CovarianceEquations, solver: &Factored) -> Option<DMatrix<f64>> {
    let d = equations.maps.dim;
    let mut cov = equations.to_matrix(&solver.solve(&equations.residual(&DMatrix::zeros(d, d)))?);
    for _ in 0..REFINEMENT_STEPS {
        let residual = equations.residual(&cov);
        if residual.amax() <= prec::engine::REFINEMENT_STOP * equations.scale(&cov) {
            break;
        }
        cov += equations.to_matrix(&solver.solve(&residual)?);
    }
    Some(cov)
}

/// Whether `(mu*, C)` is a steady state: a least-squares answer is a fixed point only if it
/// solves the equations (rejected when `|residual(C)|_max > FIXED_POINT_RESIDUAL s`,
/// `s = scale(C)`), and a covariance only if it is PSD (rejected when
/// `lambda_min((C + C^T)/2) < -COVARIANCE_PSD_FLOOR s`); both tolerances in [`prec::engine`]. A
/// mean, covariance, residual or eigenvalue that is not a number is no steady state (never
/// compared as a number).
fn is_steady_state(equations: &CovarianceEquations, cov: &DMatrix<f64>) -> bool {
    if cov.iter().chain(equations.mu.iter()).any(|x| !x.is_finite()) {
        return false;
    }
    let scale = equations.scale(cov);
    let residual = equations.residual(cov).amax();
    let solved = residual <= prec::engine::FIXED_POINT_RESIDUAL * scale;
    if !solved {
        return false;
    }
    let smallest = SymmetricEigen::new((cov + cov.transpose()) * 0.5).eigenvalues.min();
    smallest >= -prec::engine::COVARIANCE_PSD_FLOOR * scale
}

/// For tests of a round's [`RandomAffineRound::reads`]: its maps probed with and without the
/// declaration, each as its `Debug` text (every `f64` in its shortest round-trip form, `-0` as
/// such: equal text, equal bits), with the number of component terms the round ran.
#[cfg(test)]
pub(crate) fn probed_with_and_without_reads(round: &dyn RandomAffineRound) -> [(String, usize); 2] {
    use std::sync::atomic::{AtomicUsize, Ordering};
    struct Counting<'a> {
        round: &'a dyn RandomAffineRound,
        declared: bool,
        runs: AtomicUsize,
    }
    impl RandomAffineRound for Counting<'_> {
        fn state_dim(&self) -> usize {
            self.round.state_dim()
        }
        fn components(&self) -> usize {
            self.round.components()
        }
        fn noise_per_component(&self) -> usize {
            self.round.noise_per_component()
        }
        fn reads(&self, i: usize) -> Option<Vec<usize>> {
            self.declared.then(|| self.round.reads(i)).flatten()
        }
        fn component_rank_one(&self, i: usize) -> Option<(DVector<f64>, DVector<f64>)> {
            self.round.component_rank_one(i)
        }
        fn apply(&self, state: &DVector<f64>, active: &[usize], noise: &[f64]) -> DVector<f64> {
            self.runs.fetch_add(active.len(), Ordering::Relaxed);
            self.round.apply(state, active, noise)
        }
    }
    [true, false].map(|declared| {
        let counting = Counting { round, declared, runs: AtomicUsize::new(0) };
        let maps = RoundMaps::probe(&counting);
        (format!("{maps:?}"), counting.runs.into_inner())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tall system `A x = b` with a known solution, `A` of full column rank.
    fn tall(rows: usize, cols: usize) -> (DMatrix<f64>, DVector<f64>, DVector<f64>) {
        let a = DMatrix::from_fn(rows, cols, |r, c| ((r * 7 + c * 3) as f64 * 0.37).sin() + if r == c { 2.0 } else { 0.0 });
        let x = DVector::from_fn(cols, |c, _| (c as f64 * 0.9).cos() * 1e-4);
        let b = &a * &x;
        (a, b, x)
    }

    #[test]
    fn qr_and_svd_solve_a_well_ranked_system_alike_and_qr_refuses_a_singular_one() {
        let (a, b, x) = tall(40, 30);
        let (qr, svd) = (Factored::qr(a.clone()).expect("well ranked"), Factored::svd(a.clone()).expect("converges"));
        for solver in [&qr, &svd] {
            let got = solver.solve(&b).expect("solved");
            assert!((&got - &x).amax() <= 1e-12 * x.amax(), "{got} vs {x}");
        }
        // Negative control: a repeated column makes the system singular; QR refuses it, the SVD
        // still gives the minimum-norm answer, which solves the equations.
        let mut singular = a;
        let first = singular.column(0).into_owned();
        singular.set_column(29, &first);
        assert!(Factored::qr(singular.clone()).is_none(), "a singular system must not take QR");
        let rhs = &singular * &x;
        let min_norm = Factored::svd(singular.clone()).expect("converges").solve(&rhs).expect("solved");
        assert!((&singular * &min_norm - &rhs).amax() <= 1e-12 * rhs.amax());
    }
}
