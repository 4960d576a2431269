//! The local steps of [`LANES`] sampled clients side by side, lane `l` of every array one client.
//!
//! A client's step is `x <- x - gamma (H x - g + R z)` (see [`super::local_sgd`]); its arithmetic
//! is a chain: `H x` is added column by column, as nalgebra's gemv does, then `-g`, then `R z`
//! column by column, and the next step needs the whole result. One client alone waits on that
//! chain; clients of a round are independent, so here each number of a step is a vector of
//! [`LANES`] clients' numbers and every client's operations are its own, in its own order. A
//! lane's results are therefore the single client's, bit for bit, whatever the vector width the
//! processor runs them at (no fused multiply-add is used: the products and sums are rounded
//! one at a time, as in the reference).

/// Clients run side by side.
pub const LANES: usize = 4;

/// One number of each lane's client.
pub type Lane = [f64; LANES];

/// The data of one group of clients, lane by lane, reused from round to round.
#[derive(Debug, Clone)]
pub struct LaneBuffers {
    /// Hessians, column-major: entry `(r, j)` at `j d + r`.
    pub h: Vec<Lane>,
    /// Linear terms `g`.
    pub g: Vec<Lane>,
    /// Local points `[u; v_i]`, updated in place.
    pub x: Vec<Lane>,
    /// `c - c_i` (Scaffold-P).
    pub correction: Vec<Lane>,
    /// Standard normals: step `k`, component `j` at `k d + j`.
    pub z: Vec<Lane>,
    /// With [`LaneSteps::record`], the points before each step: `x_k`'s component `j` at `k d + j`.
    pub visited: Vec<Lane>,
    /// Which lanes hold zeros only ([`LaneBuffers::clear_lane`]).
    cleared: [bool; LANES],
}

impl LaneBuffers {
    /// Buffers for local dimension `d`, shared dimension `du`, `k` local steps.
    pub fn new(d: usize, du: usize, k: usize) -> Self {
        let zero = [0.0; LANES];
        Self {
            h: vec![zero; d * d],
            g: vec![zero; d],
            x: vec![zero; d],
            correction: vec![zero; du],
            z: vec![zero; k * d],
            visited: vec![zero; k * d],
            cleared: [false; LANES],
        }
    }

    /// Sets lane `l` to zeros everywhere, so that an unused lane computes zeros.
    pub fn clear_lane(&mut self, l: usize) {
        if std::mem::replace(&mut self.cleared[l], true) {
            return;
        }
        for v in [&mut self.h, &mut self.g, &mut self.x, &mut self.correction, &mut self.z] {
            v.iter_mut().for_each(|a| a[l] = 0.0);
        }
    }
}

impl LaneBuffers {
    /// Marks lane `l` as holding a client (to be cleared again when unused).
    pub fn use_lane(&mut self, l: usize) {
        self.cleared[l] = false;
    }
}

/// What every lane's steps share.
#[derive(Debug, Clone, Copy)]
pub struct LaneSteps<'a> {
    /// Local steps `K`.
    pub k: usize,
    /// Shared dimension `du`.
    pub du: usize,
    /// Step size of `u`.
    pub gamma_u: f64,
    /// Step size of `v`.
    pub gamma_v: f64,
    /// The noise factor `R`, column-major; `None` when noiseless.
    pub noise: Option<&'a [f64]>,
    /// Whether `u`'s gradient is corrected by `c - c_i` (Scaffold-P).
    pub corrected: bool,
    /// Whether each step's starting point is kept in [`LaneBuffers::visited`].
    pub record: bool,
}

/// `K` steps of every lane, with local dimension `D`, at the widest vectors the processor has.
pub fn run<const D: usize>(s: &LaneSteps, b: &mut LaneBuffers) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl") {
            // SAFETY: the processor has the features `avx::steps_avx512` is compiled for.
            return unsafe { avx::steps_avx512::<D>(s, b) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has the features `avx::steps_avx2` is compiled for.
            return unsafe { avx::steps_avx2::<D>(s, b) };
        }
    }
    steps::<D>(s, b)
}

/// Local dimensions whose steps are compiled for their exact size ([`run_any`]).
pub const MAX_FIXED_DIM: usize = 16;

/// [`run`] for a local dimension `d` known at run time, `1 <= d <=` [`MAX_FIXED_DIM`] (each
/// size compiled for).
pub fn run_any(d: usize, s: &LaneSteps, b: &mut LaneBuffers) {
    macro_rules! sizes {
        ($($d:literal)*) => {
            match d {
                $($d => run::<$d>(s, b),)*
                _ => unreachable!("a block of {d} coordinates is stepped on slices"),
            }
        };
    }
    const _: () = assert!(MAX_FIXED_DIM == 16, "one arm per size compiled for");
    sizes!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// [`steps`] on 256-bit vectors, one lane a client: the same operations on each lane in the
/// same order (`_mm256_mul_pd`, `_mm256_add_pd`, `_mm256_sub_pd` round each lane as the scalar
/// operation does).
#[cfg(target_arch = "x86_64")]
mod avx {
    use super::{Lane, LaneBuffers, LaneSteps, LANES};
    use std::arch::x86_64::{__m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_set1_pd, _mm256_storeu_pd, _mm256_sub_pd};

    const _: () = assert!(LANES == 4, "a lane group is one 256-bit vector");

    macro_rules! steps_with {
        ($name:ident, $features:literal, $doc:literal) => {
            #[doc = $doc]
            #[target_feature(enable = $features)]
            pub(super) fn $name<const D: usize>(s: &LaneSteps, b: &mut LaneBuffers) {
                #[inline(always)]
                fn load(a: &Lane) -> __m256d {
                    // SAFETY: `a` is 4 readable f64s; the load is unaligned.
                    unsafe { _mm256_loadu_pd(a.as_ptr()) }
                }
                let LaneBuffers { h, g, x: start, correction, z, visited, .. } = b;
                let (h, g) = (&h[..D * D], &g[..D]);
                let noise = s.noise.map(|r| &r[..D * D]);
                let mut x: [__m256d; D] = std::array::from_fn(|j| load(&start[j]));
                let correction: [__m256d; D] = std::array::from_fn(|a| if a < s.du && s.corrected { load(&correction[a]) } else { _mm256_set1_pd(0.0) });
                let gamma: [__m256d; D] = std::array::from_fn(|r| _mm256_set1_pd(if r < s.du { s.gamma_u } else { s.gamma_v }));
                for k in 0..s.k {
                    if s.record {
                        for (out, v) in visited[k * D..(k + 1) * D].iter_mut().zip(x) {
                            // SAFETY: `out` is 4 writable f64s; the store is unaligned.
                            unsafe { _mm256_storeu_pd(out.as_mut_ptr(), v) }
                        }
                    }
                    let mut grad: [__m256d; D] = std::array::from_fn(|r| _mm256_mul_pd(load(&h[r]), x[0]));
                    for j in 1..D {
                        for r in 0..D {
                            grad[r] = _mm256_add_pd(grad[r], _mm256_mul_pd(load(&h[j * D + r]), x[j]));
                        }
                    }
                    for r in 0..D {
                        grad[r] = _mm256_sub_pd(grad[r], load(&g[r]));
                    }
                    if let Some(noise) = noise {
                        let z = &z[k * D..(k + 1) * D];
                        for j in 0..D {
                            let zj = load(&z[j]);
                            for r in 0..D {
                                grad[r] = _mm256_add_pd(grad[r], _mm256_mul_pd(_mm256_set1_pd(noise[j * D + r]), zj));
                            }
                        }
                    }
                    for r in 0..D {
                        // `grad + (c - c_i)` only where the reference adds it (u, Scaffold-P).
                        let step = if r < s.du && s.corrected { _mm256_add_pd(grad[r], correction[r]) } else { grad[r] };
                        x[r] = _mm256_sub_pd(x[r], _mm256_mul_pd(gamma[r], step));
                    }
                }
                for (out, v) in start.iter_mut().zip(x) {
                    // SAFETY: `out` is 4 writable f64s; the store is unaligned.
                    unsafe { _mm256_storeu_pd(out.as_mut_ptr(), v) }
                }
            }
        };
    }

    steps_with!(steps_avx512, "avx2,avx512f,avx512vl", "[`super::steps`] with AVX-512's 32 vector registers.");
    steps_with!(steps_avx2, "avx2", "[`super::steps`] with AVX2.");
}

#[inline(always)]
fn mul_add(acc: &mut Lane, a: &Lane, b: &Lane) {
    for l in 0..LANES {
        acc[l] += a[l] * b[l];
    }
}

/// `K` steps of every lane: `grad = H x - g + R z` in the reference's order, then
/// `u -= gamma_u (grad_u [+ c - c_i])`, `v -= gamma_v grad_v`.
// Lanes and rows index several arrays at once; iterators would hide the layout.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn steps<const D: usize>(s: &LaneSteps, b: &mut LaneBuffers) {
    let LaneBuffers { h, g, x, correction, z, visited, .. } = b;
    let (h, g) = (&h[..D * D], &g[..D]);
    let x: &mut [Lane; D] = (&mut x[..D]).try_into().expect("local dimension");
    let correction = &correction[..s.du];
    let noise = s.noise.map(|r| &r[..D * D]);
    for k in 0..s.k {
        if s.record {
            visited[k * D..(k + 1) * D].copy_from_slice(&x[..]);
        }
        let mut grad = [[0.0; LANES]; D];
        for r in 0..D {
            for l in 0..LANES {
                grad[r][l] = h[r][l] * x[0][l];
            }
        }
        for j in 1..D {
            for r in 0..D {
                mul_add(&mut grad[r], &h[j * D + r], &x[j]);
            }
        }
        for r in 0..D {
            for l in 0..LANES {
                grad[r][l] -= g[r][l];
            }
        }
        if let Some(noise) = noise {
            let z = &z[k * D..(k + 1) * D];
            for j in 0..D {
                for r in 0..D {
                    mul_add(&mut grad[r], &[noise[j * D + r]; LANES], &z[j]);
                }
            }
        }
        for r in 0..D {
            let gamma = if r < s.du { s.gamma_u } else { s.gamma_v };
            for l in 0..LANES {
                let step = if s.corrected && r < s.du { grad[r][l] + correction[r][l] } else { grad[r][l] };
                x[r][l] -= gamma * step;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: usize = 5;
    const DU: usize = 2;

    /// A deterministic spread of numbers in [-1, 1].
    fn entry(seed: usize) -> f64 {
        ((seed as f64) * 0.754_877_666).fract() * 2.0 - 1.0
    }

    /// One step of lane `l` by the plain formula `x - gamma (H x - g + R z [+ c])`, each entry a
    /// row sum, `sign_g` the sign `g` enters with (-1 in the formula; +1 is the negative control).
    fn plain_step(b: &LaneBuffers, noise: &[f64], corrected: bool, l: usize, (gamma_u, gamma_v): (f64, f64), sign_g: f64) -> Vec<f64> {
        (0..D)
            .map(|r| {
                let hx: f64 = (0..D).map(|j| b.h[j * D + r][l] * b.x[j][l]).sum();
                let rz: f64 = (0..D).map(|j| noise[j * D + r] * b.z[j][l]).sum();
                let corr = if corrected && r < DU { b.correction[r][l] } else { 0.0 };
                let gamma = if r < DU { gamma_u } else { gamma_v };
                b.x[r][l] - gamma * (hx + sign_g * b.g[r][l] + rz + corr)
            })
            .collect()
    }

    fn filled() -> (LaneBuffers, Vec<f64>) {
        let mut b = LaneBuffers::new(D, DU, 4);
        for (q, lane) in b.h.iter_mut().chain(&mut b.g).chain(&mut b.x).chain(&mut b.correction).chain(&mut b.z).enumerate() {
            *lane = std::array::from_fn(|l| entry(q * LANES + l + 1));
        }
        let noise = (0..D * D).map(|q| 0.3 * entry(1000 + q)).collect();
        (b, noise)
    }

    #[test]
    fn one_step_is_the_plain_formula() {
        let gammas = (0.05, 0.02);
        for corrected in [false, true] {
            let (mut b, noise) = filled();
            let before = b.clone();
            let s = LaneSteps { k: 1, du: DU, gamma_u: gammas.0, gamma_v: gammas.1, noise: Some(&noise), corrected, record: false };
            run::<D>(&s, &mut b);
            for l in 0..LANES {
                let plain = plain_step(&before, &noise, corrected, l, gammas, -1.0);
                let wrong = plain_step(&before, &noise, corrected, l, gammas, 1.0);
                let gap = |want: &[f64]| (0..D).map(|r| (b.x[r][l] - want[r]).abs()).fold(0.0, f64::max);
                assert!(gap(&plain) <= 1e-14, "lane {l}, corrected {corrected}: {}", gap(&plain));
                // Negative control: `+g` for `-g` is far off.
                assert!(gap(&wrong) > 1e-3, "lane {l}, corrected {corrected}: the control is caught");
            }
        }
    }

    #[test]
    fn every_vector_width_gives_the_same_bits() {
        let (b, noise) = filled();
        let s = LaneSteps { k: 3, du: DU, gamma_u: 0.05, gamma_v: 0.02, noise: Some(&noise), corrected: true, record: false };
        let mut plain = b.clone();
        steps::<D>(&s, &mut plain);
        let mut widest = b.clone();
        run::<D>(&s, &mut widest);
        assert_eq!(plain.x, widest.x);
        // Negative control: one more step moves the points.
        let mut longer = b;
        run::<D>(&LaneSteps { k: 4, ..s }, &mut longer);
        assert_ne!(plain.x, longer.x);
    }

    #[test]
    fn a_recording_run_keeps_each_step_s_starting_point() {
        let (b, noise) = filled();
        let s = LaneSteps { k: 3, du: DU, gamma_u: 0.05, gamma_v: 0.02, noise: Some(&noise), corrected: true, record: true };
        let (mut widest, mut plain) = (b.clone(), b.clone());
        run::<D>(&s, &mut widest);
        steps::<D>(&s, &mut plain);
        assert_eq!(widest.visited, plain.visited, "every width records the same points");
        assert_eq!(widest.visited[..D], b.x[..], "x_0 is the start");
        // x_1 is where one step from the start ends (step 0 reads the first normals).
        let mut one = b.clone();
        run::<D>(&LaneSteps { k: 1, record: false, ..s }, &mut one);
        assert_eq!(widest.visited[D..2 * D], one.x[..]);
        // The run itself is the unrecorded one; negative control: without recording nothing is kept.
        let mut quiet = b.clone();
        run::<D>(&LaneSteps { record: false, ..s }, &mut quiet);
        assert_eq!(quiet.x, widest.x);
        assert!(quiet.visited.iter().all(|lane| *lane == [0.0; LANES]));
    }
}
