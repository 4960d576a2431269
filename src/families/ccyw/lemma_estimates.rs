//! Per-round quantities of the proofs' lemmas, from seeded runs.
//!
//! - `E^t = sum_{i,k} E(||hat u_{i,k} - u^t||^2 + ||hat v_{i,k} - v_i^t||^2)` over the virtual
//!   sequences of all `n` clients (000:L144): given the state it is computed exactly, as the
//!   squared distance of the noiseless virtual path plus the (state-independent) noise energy of
//!   the affine local map.
//! - `C^t = sum_{i,k} E(||alpha_{i,k}^{t-1} - u^t||^2 + ||beta_{i,k}^{t-1} - v_i^t||^2)` (000:L547),
//!   where `alpha, beta` remember each client's local iterates from the last round it was sampled
//!   (`alpha^{-1} = u^0`, `beta^{-1} = v_i^0`): realized along each run.
//! - `B^t`, `G_u^t`, `G_v^t` at the state, from [`GradientSummary`].
//!
//! Expectations over runs are then taken by the lemma checks (Monte Carlo with intervals).

use nalgebra::DVector;
use rayon::prelude::*;

use crate::engine::column_order::squared_distance;
use crate::engine::Estimator;
use crate::families::ccyw::algorithm::kernel::{RoundBuffers, RoundKernel, Seeds, Visit};
use crate::families::ccyw::algorithm::{Algorithm, RoundDraws};
use crate::families::ccyw::problem::{GradientSummary, QuadraticInstance};

/// The lemma quantities of one run at the start of one round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LemmaQuantities {
    /// `E^t` conditional on the state (exact given the state).
    pub drift: f64,
    /// `C^t` as realized along the run.
    pub memory_drift: f64,
    /// Gradient quantities at the state (`b_sum` is `B^t`).
    pub summary: GradientSummary,
}

/// `sum_{k<K} E||x_{i,k} - x_i||^2` contributed by the noise alone, for each client: the squared
/// Frobenius norm of the noise-to-iterate map (the same for every state, as the map is affine).
fn noise_energy(inst: &QuadraticInstance, alg: &dyn Algorithm, state: &DVector<f64>) -> Vec<f64> {
    let l = inst.layout();
    let len = alg.local_steps() * l.local_dim();
    (0..l.n)
        .map(|i| {
            let quiet = alg.virtual_iterates(inst, state, i, &vec![0.0; len]);
            (0..len)
                .map(|j| {
                    let mut noise = vec![0.0; len];
                    noise[j] = 1.0;
                    let loud = alg.virtual_iterates(inst, state, i, &noise);
                    loud.iter().zip(&quiet).map(|(a, b)| (a - b).norm_squared()).sum::<f64>()
                })
                .sum()
        })
        .collect()
}

/// How a replicate's local steps run: the allocation-free kernel, or the reference rounds it is
/// tested against ([`Algorithm::visit_virtual_iterates`], [`Algorithm::round_visiting`]). Both
/// show the same points, bit for bit.
enum Steps<'a> {
    Kernel(Box<(RoundKernel, RoundBuffers)>),
    /// The algorithm, and the zero noise of a client's virtual sequence (`K (du + dv)` zeros).
    Reference(&'a dyn Algorithm, Vec<f64>),
}

impl<'a> Steps<'a> {
    /// The reference rounds of `alg`.
    fn reference(inst: &QuadraticInstance, alg: &'a dyn Algorithm) -> Self {
        Steps::Reference(alg, vec![0.0; alg.local_steps() * inst.layout().local_dim()])
    }

    /// `visit(i, x_k)` along every client's noiseless virtual sequence from `state`.
    fn virtual_paths(&mut self, inst: &QuadraticInstance, state: &DVector<f64>, visit: Visit<'_>) {
        match self {
            Steps::Kernel(k) => {
                let (kernel, buf) = &mut **k;
                kernel.virtual_paths(state.as_slice(), buf, visit);
            }
            Steps::Reference(alg, quiet) => {
                for i in 0..inst.layout().n {
                    alg.visit_virtual_iterates(inst, state, i, quiet, &mut |p| visit(i, p.as_slice()));
                }
            }
        }
    }

    /// Round `t` of the replicate, `visit(i, x_k)` along each sampled client's local steps.
    fn round(&mut self, inst: &QuadraticInstance, state: &mut DVector<f64>, seeds: Seeds, visit: Visit<'_>) {
        match self {
            Steps::Kernel(k) => {
                let (kernel, buf) = &mut **k;
                kernel.round_visiting(state.as_mut_slice(), buf, seeds, visit);
            }
            Steps::Reference(alg, _) => {
                let (seed, replicate, t) = seeds;
                let draws = RoundDraws::draw(inst, alg.sampled_per_round(), alg.local_steps(), seed, replicate, t);
                *state = alg.round_visiting(inst, state, &draws, &mut |j, p| visit(draws.sampled[j], p.as_slice()));
            }
        }
    }
}

/// Lemma quantities of one replicate for `rounds` rounds, through the algorithm's kernel when it
/// has one.
pub fn lemma_replicate(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, seed: u64, replicate: u64, noise_energy: &[f64]) -> Vec<LemmaQuantities> {
    let steps = match alg.kernel(inst) {
        Some(kernel) => {
            let buffers = kernel.buffers();
            Steps::Kernel(Box::new((kernel, buffers)))
        }
        None => Steps::reference(inst, alg),
    };
    replicate_with(inst, alg, steps, (rounds, seed, replicate), noise_energy)
}

/// [`lemma_replicate`] through the reference rounds only (what the kernel is tested against).
pub fn lemma_replicate_reference(
    inst: &QuadraticInstance,
    alg: &dyn Algorithm,
    rounds: usize,
    seed: u64,
    replicate: u64,
    noise_energy: &[f64],
) -> Vec<LemmaQuantities> {
    replicate_with(inst, alg, Steps::reference(inst, alg), (rounds, seed, replicate), noise_energy)
}

fn replicate_with(
    inst: &QuadraticInstance,
    alg: &dyn Algorithm,
    mut steps: Steps<'_>,
    (rounds, seed, replicate): (usize, u64, u64),
    noise_energy: &[f64],
) -> Vec<LemmaQuantities> {
    let l = inst.layout();
    let (n, d, k) = (l.n, l.local_dim(), alg.local_steps());
    let init = if alg.random_initialization() {
        RoundDraws::initialization(inst, k, seed, replicate)
    } else {
        RoundDraws { sampled: Vec::new(), local_dim: d, steps: 0, noise: Vec::new() }
    };
    let mut state = alg.initial_state(inst, &init);
    // alpha^{-1}, beta^{-1}: every remembered iterate starts at the initial point.
    let mut memory: Vec<Vec<DVector<f64>>> = (0..n).map(|i| vec![inst.local_point(&state, i); k]).collect();
    let mut out = Vec::with_capacity(rounds);
    let mut diff = vec![0.0; d];
    // Client `i`'s `||x_k - x_i||^2` along its virtual sequence, in step order.
    let mut paths: Vec<Vec<f64>> = vec![Vec::with_capacity(k); n];
    for t in 0..rounds {
        let points: Vec<DVector<f64>> = (0..n).map(|i| inst.local_point(&state, i)).collect();
        paths.iter_mut().for_each(Vec::clear);
        steps.virtual_paths(inst, &state, &mut |i, p| paths[i].push(squared_distance(p, points[i].as_slice(), &mut diff)));
        let mut drift = 0.0;
        let mut memory_drift = 0.0;
        for (i, (x, path)) in points.iter().zip(&paths).enumerate() {
            drift += path.iter().sum::<f64>() + noise_energy[i];
            memory_drift += memory[i].iter().map(|a| squared_distance(a.as_slice(), x.as_slice(), &mut diff)).sum::<f64>();
        }
        out.push(LemmaQuantities { drift, memory_drift, summary: GradientSummary::at(inst, &state) });
        // The sampled clients' iterates are remembered as the round runs them.
        let mut filled = vec![0; n];
        steps.round(inst, &mut state, (seed, replicate, t as u64), &mut |i, p| {
            if let Some(slot) = memory[i].get_mut(filled[i]) {
                slot.copy_from_slice(p);
                filled[i] += 1;
            }
        });
    }
    out
}

/// Lemma quantities of `replicates` seeded replicates, in replicate order.
pub fn simulate_lemma_quantities(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, seed: u64, replicates: usize) -> Vec<Vec<LemmaQuantities>> {
    let l = inst.layout();
    let (k, d) = (alg.local_steps(), l.local_dim());
    // Any state serves (the noise map does not depend on it); take the noiseless initial one.
    let zero_init = RoundDraws { sampled: (0..l.n).collect(), local_dim: d, steps: k, noise: vec![0.0; l.n * k * d] };
    let energy = noise_energy(inst, alg, &alg.initial_state(inst, &zero_init));
    (0..replicates as u64).into_par_iter().map(|r| lemma_replicate(inst, alg, rounds, seed, r, &energy)).collect()
}

/// The lemma quantities a check evaluates on a scenario, with their estimator: one replicate when
/// the run is deterministic (a noiseless instance with every client sampled), else `replicates`
/// seeded ones (Monte Carlo), over `rounds` rounds.
pub fn check_quantities(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, seed: u64, replicates: usize) -> (Vec<Vec<LemmaQuantities>>, Estimator) {
    let deterministic = inst.is_noiseless() && alg.sampled_per_round() == inst.layout().n;
    let replicates = if deterministic { 1 } else { replicates };
    let estimator = if deterministic { Estimator::Deterministic } else { Estimator::MonteCarlo };
    (simulate_lemma_quantities(inst, alg, rounds, seed, replicates), estimator)
}
