//! FedAvg-P and Scaffold-P rounds for Monte Carlo replicates, without allocation in the loop.
//!
//! [`super::Algorithm::round`] of [`super::FedAvgP`] and [`super::ScaffoldP`] is the reference:
//! the exact engine probes them, and they build a vector per gradient. A replicate runs millions
//! of local steps, so this module runs the same arithmetic on flat buffers prepared once per
//! replicate, and draws each step's noise straight from its stream into a reused buffer. Every
//! operation is the reference's, in the reference's order (nalgebra's gemv adds column by column),
//! so a replicate is bit-for-bit the reference's (tests compare them).

use super::lanes::{self, LaneBuffers, LaneSteps, LANES};
use super::normals::NormalStream;
use super::RoundParams;
use crate::families::ccyw::problem::QuadraticInstance;
use crate::rng::{StreamKey, SAMPLING_SLOT};

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
}

/// Local dimensions whose steps are compiled for their exact size.
pub const MAX_FIXED_DIM: usize = 16;

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
    lanes: LaneBuffers,
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
        Self { algorithm, params, n: layout.n, du: layout.du, dv: layout.dv, hessians, linear, noise }
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
            lanes: LaneBuffers::new(d, self.du, self.params.k),
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
    /// ([`super::lanes`]), from the state: lane `l` ends at client `group[l]`'s `x_K`. The noise
    /// of client `i`'s step `k` is the next `du + dv` normals of its client-round stream
    /// `(seed, replicate, round, i)`, as [`super::RoundDraws::draw`] draws it; unused lanes
    /// compute zeros.
    fn lane_group<const D: usize>(&self, group: &[usize], state: &[f64], (lanes, normals): (&mut LaneBuffers, &mut NormalStream), seed: u64, replicate: u64, round: u64) {
        let (du, n) = (self.du, self.n);
        let c_global_off = du + n * self.dv + n * du;
        for l in 0..LANES {
            let Some(&i) = group.get(l) else {
                lanes.clear_lane(l);
                continue;
            };
            lanes.use_lane(l);
            for (a, &v) in lanes.h.iter_mut().zip(&self.hessians[i * D * D..(i + 1) * D * D]) {
                a[l] = v;
            }
            for (a, &v) in lanes.g.iter_mut().zip(&self.linear[i * D..(i + 1) * D]) {
                a[l] = v;
            }
            let v_off = du + i * self.dv;
            for (a, &v) in lanes.x.iter_mut().zip(state[..du].iter().chain(&state[v_off..v_off + self.dv])) {
                a[l] = v;
            }
            if self.algorithm == KernelAlgorithm::ScaffoldP {
                let c_off = du + n * self.dv + i * du;
                for (a, corr) in lanes.correction.iter_mut().enumerate() {
                    corr[l] = state[c_global_off + a] - state[c_off + a];
                }
            }
            if self.noise.is_some() {
                normals.restart(StreamKey { seed, replicate, round, client: i as u64 });
                for z in lanes.z.iter_mut() {
                    z[l] = normals.normal();
                }
            }
        }
        let steps = LaneSteps {
            k: self.params.k,
            du,
            gamma_u: self.params.gamma_u,
            gamma_v: self.params.gamma_v,
            noise: self.noise.as_deref(),
            corrected: self.algorithm == KernelAlgorithm::ScaffoldP,
        };
        lanes::run::<D>(&steps, lanes);
    }

    /// The sampled clients' local steps, [`LANES`] at a time for local dimensions up to
    /// [`MAX_FIXED_DIM`] (compiled for their size), one at a time on slices above; `finish(buf, i)`
    /// sees client `i`'s `x_K` in `buf.x`, in the order of `sampled`.
    fn all_local_steps(
        &self,
        sampled: &[usize],
        state: &[f64],
        buf: &mut RoundBuffers,
        seeds: (u64, u64, u64),
        mut finish: impl FnMut(&mut RoundBuffers, usize),
    ) {
        macro_rules! fixed {
            ($($d:literal)*) => {
                match self.local_dim() {
                    $($d => {
                        for group in sampled.chunks(LANES) {
                            self.lane_group::<$d>(group, state, (&mut buf.lanes, &mut buf.normals), seeds.0, seeds.1, seeds.2);
                            for (l, &i) in group.iter().enumerate() {
                                for (x, lane) in buf.x.iter_mut().zip(&buf.lanes.x) {
                                    *x = lane[l];
                                }
                                finish(buf, i);
                            }
                        }
                    })*
                    _ => {
                        for &i in sampled {
                            self.one_client(i, state, buf, seeds);
                            finish(buf, i);
                        }
                    }
                }
            };
        }
        fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
    }

    /// Client `i`'s local steps on slices, `x_K` left in `buf.x`.
    fn one_client(&self, i: usize, state: &[f64], buf: &mut RoundBuffers, (seed, replicate, round): (u64, u64, u64)) {
        let (du, dv, n) = (self.du, self.dv, self.n);
        let v_off = du + i * dv;
        buf.x[..du].copy_from_slice(&state[..du]);
        buf.x[du..].copy_from_slice(&state[v_off..v_off + dv]);
        let key = StreamKey { seed, replicate, round, client: i as u64 };
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
        self.local_steps_dyn(i, key, &mut buf.x, &mut buf.step, correction);
    }

    fn local_steps_dyn(&self, i: usize, key: StreamKey, x: &mut [f64], buf: &mut StepBuffers, correction: &[f64]) {
        let d = self.local_dim();
        let du = self.du;
        let h = &self.hessians[i * d * d..(i + 1) * d * d];
        let g = &self.linear[i * d..(i + 1) * d];
        let mut rng = self.noise.as_ref().map(|_| NormalStream::client_round(key));
        let (gamma_u, gamma_v) = (self.params.gamma_u, self.params.gamma_v);
        let StepBuffers { grad, z } = buf;
        for _ in 0..self.params.k {
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
    // Indices run over blocks at offsets in several buffers at once; iterators would hide that.
    #[allow(clippy::needless_range_loop)]
    pub fn round(&self, state: &mut [f64], buf: &mut RoundBuffers, seed: u64, replicate: u64, round: u64) {
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
        self.all_local_steps(&sampled, state, buf, (seed, replicate, round), |buf, i| {
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
