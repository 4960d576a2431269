//! FedAvg-P and Scaffold-P rounds for Monte Carlo replicates, without allocation in the loop.
//!
//! [`super::Algorithm::round`] of [`super::FedAvgP`] and [`super::ScaffoldP`] is the reference:
//! the exact engine probes them, and they build a vector per gradient. A replicate runs millions
//! of local steps, so this module runs the same arithmetic on flat buffers prepared once per
//! replicate, and draws each step's noise straight from its stream into a reused buffer. Every
//! operation is the reference's, in the reference's order (nalgebra's gemv adds column by column),
//! except the products with the zero blocks of a decoupled instance, which add only `+-0`
//! (the private `Block`), so a replicate is bit-for-bit the reference's (tests compare them).

use super::lanes::{self, Lane, LaneBuffers, LaneSteps, LANES, MAX_FIXED_DIM};
use super::normals::NormalStream;
use super::RoundParams;
use crate::families::ccyw::problem::QuadraticInstance;
use crate::rng::{StreamKey, SAMPLING_SLOT};

/// The keys of a round's noise: `(seed, replicate, round)`.
pub type Seeds = (u64, u64, u64);

/// Sees a client's local points: `visit(i, x)` with client `i`'s `x = [u; v_i]`.
pub type Visit<'a> = &'a mut dyn FnMut(usize, &[f64]);

/// Which update the kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelAlgorithm {
    /// Algorithm 1: local SGD, then the outer steps on `u` and `v_i`.
    FedAvgP,
    /// Algorithm 2: local SGD corrected by `c - c_i`, then the outer steps and the control
    /// variates' update.
    ScaffoldP,
}

/// One instance's clients and one algorithm's steps, laid out for the local-step loop.
#[derive(Debug, Clone)]
pub struct RoundKernel {
    algorithm: KernelAlgorithm,
    params: RoundParams,
    n: usize,
    du: usize,
    dv: usize,
    /// Client `i`'s Hessian, column-major, at `i * d * d`.
    hessians: Vec<f64>,
    /// Client `i`'s linear term at `i * d`.
    linear: Vec<f64>,
    /// The noise factor `R`, column-major; `None` when the instance is noiseless.
    noise: Option<Vec<f64>>,
    /// The blocks of `[u; v_i]` the lanes step ([`Block`]); empty when a block is larger than
    /// [`MAX_FIXED_DIM`] (the slice path runs then).
    blocks: Vec<Block>,
}

/// A block of a client's local point `[u; v_i]` that a local step updates by itself: the whole
/// point, or, when every client's Hessian and the noise factor are block-diagonal (a decoupled
/// instance), `u` and `v_i` apart. A product with an entry of an off-diagonal block adds `+-0`,
/// which changes no value (a zero's sign at most, which no later operation turns into a
/// value), so stepping the blocks apart gives the whole step's numbers with half its arithmetic.
#[derive(Debug, Clone)]
struct Block {
    /// First coordinate of the block in `[u; v_i]`.
    start: usize,
    /// Its length.
    len: usize,
    /// How many of its coordinates are `u`'s (they step with `gamma_u`, and Scaffold-P's
    /// correction).
    shared: usize,
    /// Client `i`'s Hessian block, column-major, at `i * len * len`.
    hessians: Vec<f64>,
    /// The noise factor's block, column-major; `None` when the instance is noiseless.
    noise: Option<Vec<f64>>,
}

impl Block {
    /// Rows and columns `start .. start + len` of the column-major `d x d` matrices in `full`
    /// (one after another).
    fn cut(full: &[f64], d: usize, start: usize, len: usize) -> Vec<f64> {
        full.chunks_exact(d * d).flat_map(|m| (start..start + len).flat_map(move |c| m[c * d + start..c * d + start + len].iter().copied())).collect()
    }

    /// The blocks of `[u; v_i]` for the lanes: `u` and `v_i` apart when every matrix is zero off
    /// their diagonal blocks, else the whole point; none above [`MAX_FIXED_DIM`].
    fn of(hessians: &[f64], noise: Option<&[f64]>, du: usize, dv: usize) -> Vec<Block> {
        let d = du + dv;
        let cross = |m: &[f64]| m.chunks_exact(d * d).all(|m| (0..d * d).all(|q| (q % d < du) == (q / d < du) || m[q] == 0.0));
        let split = du > 0 && dv > 0 && cross(hessians) && noise.is_none_or(cross);
        let spans = if split { vec![(0, du), (du, dv)] } else { vec![(0, d)] };
        if spans.iter().any(|&(_, len)| len > MAX_FIXED_DIM) {
            return Vec::new();
        }
        spans
            .into_iter()
            .map(|(start, len)| Block {
                start,
                len,
                shared: du.saturating_sub(start).min(len),
                hessians: Self::cut(hessians, d, start, len),
                noise: noise.map(|r| Self::cut(r, d, start, len)),
            })
            .collect()
    }
}

/// The gradient and noise of one local step (larger local dimensions only).
#[derive(Debug, Clone)]
struct StepBuffers {
    grad: Vec<f64>,
    z: Vec<f64>,
}

/// Buffers one round reuses.
#[derive(Debug, Clone)]
pub struct RoundBuffers {
    next: Vec<f64>,
    x: Vec<f64>,
    step: StepBuffers,
    u_sum: Vec<f64>,
    c_delta: Vec<f64>,
    correction: Vec<f64>,
    c_global: Vec<f64>,
    sampled: Vec<usize>,
    /// One per block of [`RoundKernel::blocks`].
    lanes: Vec<LaneBuffers>,
    /// The noise stream, restarted for each client and round.
    normals: NormalStream,
}

impl RoundKernel {
    /// Lays out `inst`'s clients for `algorithm` with `params`.
    pub fn new(inst: &QuadraticInstance, algorithm: KernelAlgorithm, params: RoundParams) -> Self {
        let layout = inst.layout();
        let d = layout.local_dim();
        let mut hessians = Vec::with_capacity(layout.n * d * d);
        let mut linear = Vec::with_capacity(layout.n * d);
        for c in inst.clients() {
            hessians.extend_from_slice(c.hessian.as_slice());
            linear.extend_from_slice(c.linear.as_slice());
        }
        let noise = (!inst.is_noiseless()).then(|| inst.noise_factor().as_slice().to_vec());
        let blocks = Block::of(&hessians, noise.as_deref(), layout.du, layout.dv);
        Self { algorithm, params, n: layout.n, du: layout.du, dv: layout.dv, hessians, linear, noise, blocks }
    }

    fn local_dim(&self) -> usize {
        self.du + self.dv
    }

    /// Length of the algorithm's state.
    pub fn state_dim(&self) -> usize {
        let base = self.du + self.n * self.dv;
        match self.algorithm {
            KernelAlgorithm::FedAvgP => base,
            KernelAlgorithm::ScaffoldP => base + (self.n + 1) * self.du,
        }
    }

    /// Fresh buffers for [`RoundKernel::round`].
    pub fn buffers(&self) -> RoundBuffers {
        let d = self.local_dim();
        RoundBuffers {
            next: vec![0.0; self.state_dim()],
            x: vec![0.0; d],
            step: StepBuffers { grad: vec![0.0; d], z: vec![0.0; d] },
            u_sum: vec![0.0; self.du],
            c_delta: vec![0.0; self.du],
            correction: vec![0.0; self.du],
            c_global: vec![0.0; self.du],
            sampled: Vec::with_capacity(self.n),
            lanes: self.blocks.iter().map(|b| LaneBuffers::new(b.len, b.shared, self.params.k)).collect(),
            normals: NormalStream::client_round(StreamKey { seed: 0, replicate: 0, round: 0, client: 0 }),
        }
    }

    /// The clients of round `t`: as [`super::RoundDraws::draw`] samples them.
    fn sample(&self, seed: u64, replicate: u64, round: u64, out: &mut Vec<usize>) {
        out.clear();
        if self.params.m == self.n {
            out.extend(0..self.n);
        } else {
            let mut rng = StreamKey { seed, replicate, round, client: SAMPLING_SLOT }.rng(0);
            out.extend(rand::seq::index::sample(&mut rng, self.n, self.params.m));
            out.sort_unstable();
        }
    }

    /// The local steps of the sampled clients `group` (at most [`LANES`]), side by side
    /// ([`super::lanes`]), block by block ([`Block`]), from the state: lane `l` of block `b` ends
    /// at that block of client `group[l]`'s `x_K`. The noise of client `i`'s step `k` is the next
    /// `du + dv` normals of its client-round stream `(seed, replicate, round, i)`, as
    /// [`super::RoundDraws::draw`] draws it (none without `seeds`: the noiseless steps); unused
    /// lanes compute zeros. With `record`, each block keeps the points before each step.
    fn lane_group(&self, group: &[usize], state: &[f64], (lanes, normals): (&mut [LaneBuffers], &mut NormalStream), seeds: Option<Seeds>, record: bool) {
        let (du, n, d) = (self.du, self.n, self.local_dim());
        let scaffold = self.algorithm == KernelAlgorithm::ScaffoldP;
        let c_global_off = du + n * self.dv + n * du;
        for l in 0..LANES {
            let Some(&i) = group.get(l) else {
                lanes.iter_mut().for_each(|b| b.clear_lane(l));
                continue;
            };
            let v_off = du + i * self.dv;
            let point = |j: usize| if j < du { state[j] } else { state[v_off + j - du] };
            for (block, buf) in self.blocks.iter().zip(lanes.iter_mut()) {
                let (start, len) = (block.start, block.len);
                buf.use_lane(l);
                for (a, &v) in buf.h.iter_mut().zip(&block.hessians[i * len * len..(i + 1) * len * len]) {
                    a[l] = v;
                }
                for (q, (g, x)) in buf.g.iter_mut().zip(buf.x.iter_mut()).enumerate() {
                    g[l] = self.linear[i * d + start + q];
                    x[l] = point(start + q);
                }
                if scaffold {
                    let c_off = du + n * self.dv + i * du;
                    for (a, corr) in buf.correction.iter_mut().enumerate() {
                        corr[l] = state[c_global_off + start + a] - state[c_off + start + a];
                    }
                }
            }
            if let (Some(_), Some((seed, replicate, round))) = (&self.noise, seeds) {
                normals.restart(StreamKey { seed, replicate, round, client: i as u64 });
                // Step `k` reads its `d` normals in order: the blocks' coordinates in turn.
                for k in 0..self.params.k {
                    for buf in lanes.iter_mut() {
                        let len = buf.x.len();
                        for z in &mut buf.z[k * len..(k + 1) * len] {
                            z[l] = normals.normal();
                        }
                    }
                }
            }
        }
        for (block, buf) in self.blocks.iter().zip(lanes.iter_mut()) {
            let steps = LaneSteps {
                k: self.params.k,
                du: block.shared,
                gamma_u: self.params.gamma_u,
                gamma_v: self.params.gamma_v,
                noise: block.noise.as_deref().filter(|_| seeds.is_some()),
                corrected: scaffold,
                record,
            };
            lanes::run_any(block.len, &steps, buf);
        }
    }

    /// The local steps of the clients `clients`, [`LANES`] at a time for blocks up to
    /// [`MAX_FIXED_DIM`] (compiled for their size), one at a time on slices above, with the noise
    /// of `seeds` (none without); `visit` sees each client's points before its steps, then
    /// `finish(buf, i)` client `i`'s `x_K` in `buf.x`, in the order of `clients`.
    fn all_local_steps(
        &self,
        clients: &[usize],
        state: &[f64],
        buf: &mut RoundBuffers,
        seeds: Option<Seeds>,
        mut visit: Option<Visit<'_>>,
        mut finish: impl FnMut(&mut RoundBuffers, usize),
    ) {
        if self.blocks.is_empty() {
            for &i in clients {
                self.one_client(i, state, buf, seeds, visit.as_mut().map(|v| &mut **v as Visit<'_>));
                finish(buf, i);
            }
            return;
        }
        for group in clients.chunks(LANES) {
            self.lane_group(group, state, (&mut buf.lanes, &mut buf.normals), seeds, visit.is_some());
            for (l, &i) in group.iter().enumerate() {
                if let Some(visit) = visit.as_deref_mut() {
                    for k in 0..self.params.k {
                        self.gather(&buf.lanes, l, &mut buf.x, |b, len| &b.visited[k * len..(k + 1) * len]);
                        visit(i, &buf.x);
                    }
                }
                self.gather(&buf.lanes, l, &mut buf.x, |b, _| &b.x);
                finish(buf, i);
            }
        }
    }

    /// Lane `l` of each block's `rows(buffers, len)` into that block of `x = [u; v_i]`.
    fn gather<'b>(&self, lanes: &'b [LaneBuffers], l: usize, x: &mut [f64], rows: impl Fn(&'b LaneBuffers, usize) -> &'b [Lane]) {
        for (block, buffers) in self.blocks.iter().zip(lanes) {
            for (x, lane) in x[block.start..block.start + block.len].iter_mut().zip(rows(buffers, block.len)) {
                *x = lane[l];
            }
        }
    }

    /// Client `i`'s local steps on slices, `x_K` left in `buf.x`.
    fn one_client(&self, i: usize, state: &[f64], buf: &mut RoundBuffers, seeds: Option<Seeds>, visit: Option<Visit<'_>>) {
        let (du, dv, n) = (self.du, self.dv, self.n);
        let v_off = du + i * dv;
        buf.x[..du].copy_from_slice(&state[..du]);
        buf.x[du..].copy_from_slice(&state[v_off..v_off + dv]);
        let key = seeds.map(|(seed, replicate, round)| StreamKey { seed, replicate, round, client: i as u64 });
        let c_global_off = du + n * dv + n * du;
        let c_off = du + n * dv + i * du;
        let correction: &[f64] = match self.algorithm {
            KernelAlgorithm::FedAvgP => &[],
            KernelAlgorithm::ScaffoldP => {
                for a in 0..du {
                    buf.correction[a] = state[c_global_off + a] - state[c_off + a];
                }
                &buf.correction
            }
        };
        self.local_steps_dyn(i, key, &mut buf.x, &mut buf.step, correction, visit);
    }

    fn local_steps_dyn(&self, i: usize, key: Option<StreamKey>, x: &mut [f64], buf: &mut StepBuffers, correction: &[f64], mut visit: Option<Visit<'_>>) {
        let d = self.local_dim();
        let du = self.du;
        let h = &self.hessians[i * d * d..(i + 1) * d * d];
        let g = &self.linear[i * d..(i + 1) * d];
        let mut rng = self.noise.as_ref().and(key).map(NormalStream::client_round);
        let (gamma_u, gamma_v) = (self.params.gamma_u, self.params.gamma_v);
        let StepBuffers { grad, z } = buf;
        for _ in 0..self.params.k {
            if let Some(visit) = visit.as_deref_mut() {
                visit(i, x);
            }
            // grad = H x - g, added column by column as nalgebra's gemv does.
            let x0 = x[0];
            for (r, gr) in grad.iter_mut().enumerate() {
                *gr = h[r] * x0;
            }
            for (j, &xj) in x.iter().enumerate().skip(1) {
                let col = &h[j * d..(j + 1) * d];
                for (gr, &hr) in grad.iter_mut().zip(col) {
                    *gr += hr * xj;
                }
            }
            for (gr, &lr) in grad.iter_mut().zip(g) {
                *gr -= lr;
            }
            if let (Some(noise), Some(rng)) = (&self.noise, rng.as_mut()) {
                rng.fill(&mut z[..]);
                // grad += R z, column by column (gemv with alpha = beta = 1).
                for (j, &zj) in z.iter().enumerate() {
                    let col = &noise[j * d..(j + 1) * d];
                    for (gr, &rr) in grad.iter_mut().zip(col) {
                        *gr += rr * zj;
                    }
                }
            }
            let (xu, xv) = x.split_at_mut(du);
            let (gu, gv) = grad.split_at(du);
            if correction.is_empty() {
                for (a, gr) in xu.iter_mut().zip(gu) {
                    *a -= gamma_u * gr;
                }
            } else {
                for ((a, gr), corr) in xu.iter_mut().zip(gu).zip(correction) {
                    *a -= gamma_u * (gr + corr);
                }
            }
            for (a, gr) in xv.iter_mut().zip(gv) {
                *a -= gamma_v * gr;
            }
        }
    }

    /// One round of replicate `replicate` at round `round`: `state` becomes `z^{t+1}`.
    pub fn round(&self, state: &mut [f64], buf: &mut RoundBuffers, seed: u64, replicate: u64, round: u64) {
        self.round_with(state, buf, (seed, replicate, round), None);
    }

    /// [`RoundKernel::round`] with `visit(i, x_k)` seeing each sampled client `i`'s local point
    /// before its step `k`, `k = 0 .. K - 1` in order: what
    /// [`super::Algorithm::round_visiting`] shows.
    pub fn round_visiting(&self, state: &mut [f64], buf: &mut RoundBuffers, seeds: Seeds, visit: Visit<'_>) {
        self.round_with(state, buf, seeds, Some(visit));
    }

    /// The noiseless local steps of every client from `state` (the virtual sequences of the
    /// proofs, 000:L100-106): `visit(i, x_k)` for client `i`'s point before its step `k`, clients
    /// in order: what [`super::Algorithm::visit_virtual_iterates`] shows with zero noise.
    pub fn virtual_paths(&self, state: &[f64], buf: &mut RoundBuffers, visit: Visit<'_>) {
        let mut clients = std::mem::take(&mut buf.sampled);
        clients.clear();
        clients.extend(0..self.n);
        self.all_local_steps(&clients, state, buf, None, Some(visit), |_, _| {});
        buf.sampled = clients;
    }

    // Indices run over blocks at offsets in several buffers at once; iterators would hide that.
    #[allow(clippy::needless_range_loop)]
    fn round_with(&self, state: &mut [f64], buf: &mut RoundBuffers, (seed, replicate, round): Seeds, visit: Option<Visit<'_>>) {
        let (du, dv, n) = (self.du, self.dv, self.n);
        let p = &self.params;
        let mut sampled = std::mem::take(&mut buf.sampled);
        self.sample(seed, replicate, round, &mut sampled);
        buf.next.copy_from_slice(state);
        buf.u_sum.fill(0.0);
        buf.c_delta.fill(0.0);
        let c_global_off = du + n * dv + n * du;
        if self.algorithm == KernelAlgorithm::ScaffoldP {
            buf.c_global.copy_from_slice(&state[c_global_off..c_global_off + du]);
        }
        let scaffold = self.algorithm == KernelAlgorithm::ScaffoldP;
        self.all_local_steps(&sampled, state, buf, Some((seed, replicate, round)), visit, |buf, i| {
            for a in 0..du {
                buf.u_sum[a] += buf.x[a] - state[a];
            }
            // `v + eta_v (v_K - v)`, as the reference writes line 9.
            let v_off = du + i * dv;
            for b in 0..dv {
                buf.next[v_off + b] = state[v_off + b] + (buf.x[du + b] - state[v_off + b]) * p.eta_v;
            }
            if scaffold {
                let c_off = du + n * dv + i * du;
                let step = p.k as f64 * p.gamma_u;
                for a in 0..du {
                    let c_i = state[c_off + a];
                    let c_i_new = c_i - buf.c_global[a] + (state[a] - buf.x[a]) / step;
                    buf.c_delta[a] += c_i_new - c_i;
                    buf.next[c_off + a] = c_i_new;
                }
            }
        });
        let scale = p.eta_u / p.m as f64;
        for a in 0..du {
            buf.next[a] = state[a] + buf.u_sum[a] * scale;
        }
        if self.algorithm == KernelAlgorithm::ScaffoldP {
            for a in 0..du {
                buf.next[c_global_off + a] = buf.c_global[a] + buf.c_delta[a] / n as f64;
            }
        }
        state.copy_from_slice(&buf.next);
        buf.sampled = sampled;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two clients' `d x d` matrices, column-major, with `cross` in one off-diagonal-block entry.
    fn matrices(du: usize, dv: usize, cross: f64) -> Vec<f64> {
        let d = du + dv;
        let mut m: Vec<f64> = (0..2 * d * d).map(|q| if ((q % (d * d)) % d < du) == ((q % (d * d)) / d < du) { 1.0 + q as f64 } else { 0.0 }).collect();
        m[d * d + du] = cross; // the second client's entry (du, 0): a v row, a u column
        m
    }

    #[test]
    fn block_diagonal_matrices_step_u_and_v_apart() {
        let (du, dv) = (3, 2);
        let blocks = Block::of(&matrices(du, dv, 0.0), Some(&matrices(du, dv, 0.0)[..25]), du, dv);
        assert_eq!(blocks.iter().map(|b| (b.start, b.len, b.shared)).collect::<Vec<_>>(), vec![(0, 3, 3), (3, 2, 0)]);
        // The second client's v block: rows and columns 3..5 of its matrix.
        let full = matrices(du, dv, 0.0);
        assert_eq!(blocks[1].hessians[4..], [full[25 + 18], full[25 + 19], full[25 + 23], full[25 + 24]]);
        // Negative controls: one nonzero entry across the blocks, in one client's Hessian or in
        // the noise factor, keeps the point whole; so do `du = 0` and a block above 16.
        let whole = Block::of(&matrices(du, dv, 0.5), None, du, dv);
        assert_eq!(whole.iter().map(|b| (b.start, b.len, b.shared)).collect::<Vec<_>>(), vec![(0, 5, 3)]);
        assert_eq!(Block::of(&matrices(du, dv, 0.0), Some(&matrices(du, dv, 0.5)[25..]), du, dv).len(), 1);
        assert_eq!(Block::of(&matrices(0, 4, 0.0), None, 0, 4).len(), 1);
        assert!(Block::of(&matrices(12, 6, 0.5), None, 12, 6).is_empty());
        assert_eq!(Block::of(&matrices(12, 6, 0.0), None, 12, 6).len(), 2);
    }
}
