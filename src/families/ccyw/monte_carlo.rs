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

/// Runs one replicate for `rounds` rounds.
pub fn run_replicate(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, seed: u64, replicate: u64) -> Trajectory {
    let init = if alg.random_initialization() {
        RoundDraws::initialization(inst, alg.local_steps(), seed, replicate)
    } else {
        RoundDraws { sampled: Vec::new(), local_dim: inst.layout().local_dim(), steps: 0, noise: Vec::new() }
    };
    let mut state = alg.initial_state(inst, &init);
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
