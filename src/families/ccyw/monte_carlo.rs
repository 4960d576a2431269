//! Seeded Monte Carlo runs of FedAvg-P and Scaffold-P: per-round gradient summaries of each
//! replicate.

use nalgebra::DVector;

use crate::families::ccyw::algorithm::{Algorithm, RoundDraws};
use crate::families::ccyw::problem::{GradientSummary, QuadraticInstance};

/// The gradient summaries of one replicate at the start of rounds `t = 0..T-1`, plus the final
/// state.
#[derive(Debug, Clone)]
pub struct Trajectory {
    /// Summary at the start of each round.
    pub summaries: Vec<GradientSummary>,
    /// `z^T`.
    pub final_state: DVector<f64>,
}

/// `z^0` of replicate `replicate`, with its initialization draws when the algorithm has them.
fn initial_state(inst: &QuadraticInstance, alg: &dyn Algorithm, seed: u64, replicate: u64) -> DVector<f64> {
    let init = if alg.random_initialization() {
        RoundDraws::initialization(inst, alg.local_steps(), seed, replicate)
    } else {
        RoundDraws { sampled: Vec::new(), local_dim: inst.layout().local_dim(), steps: 0, noise: Vec::new() }
    };
    alg.initial_state(inst, &init)
}

/// Runs one replicate for `rounds` rounds, with the algorithm's allocation-free kernel when it
/// has one (the same numbers bit for bit as [`run_replicate_reference`]).
pub fn run_replicate(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, seed: u64, replicate: u64) -> Trajectory {
    if let Some(kernel) = alg.kernel(inst) {
        let mut state = initial_state(inst, alg, seed, replicate);
        let mut summaries = Vec::with_capacity(rounds);
        let mut buffers = kernel.buffers();
        for t in 0..rounds {
            summaries.push(GradientSummary::at(inst, &state));
            kernel.round(state.as_mut_slice(), &mut buffers, seed, replicate, t as u64);
        }
        return Trajectory { summaries, final_state: state };
    }
    run_replicate_reference(inst, alg, rounds, seed, replicate)
}

/// [`run_replicate`] through [`Algorithm::round`] and [`RoundDraws::draw`] only: the reference
/// the kernel is tested against.
pub fn run_replicate_reference(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, seed: u64, replicate: u64) -> Trajectory {
    let mut state = initial_state(inst, alg, seed, replicate);
    let mut summaries = Vec::with_capacity(rounds);
    for t in 0..rounds {
        summaries.push(GradientSummary::at(inst, &state));
        let draws = RoundDraws::draw(inst, alg.sampled_per_round(), alg.local_steps(), seed, replicate, t as u64);
        state = alg.round(inst, &state, &draws);
    }
    Trajectory { summaries, final_state: state }
}

/// Runs `replicates` replicates in parallel; the result is in replicate order, so every reduction
/// over it is independent of the thread count.
pub fn simulate(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, seed: u64, replicates: usize) -> Vec<Trajectory> {
    crate::engine::monte_carlo::replicates(replicates, |r| run_replicate(inst, alg, rounds, seed, r))
}
