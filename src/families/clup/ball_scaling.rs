//! Theorem 3's noise ball against the number of clients `m` and the batch size `B` as rate
//! exponents (003:L194, L1251, L1320): the ball
//! `8/min(gamma mu_g/2, mu_l eta) lambda^2 eta^2 sigma^2/(mu_g^2 B m)` depends on `m` and `B`
//! only through the factor `1/(B m)` (`mu_g`, `mu_l`, `sigma^2` of Assumption 4 and the steps
//! are per client and the same for every `m` and `B`), and the text reads it as "the error due to
//! the stochastic noise scales inversely with the number of participating clients" (L194) and
//! "the noise remains of the same order, O(1/(B m))" (L1320).
//!
//! Each sweep measures Algorithm 2's noise floor exactly: the run starts at the solution
//! `(w~^(g), w~^(i))` of Problem (2), so `E||w_T^(g) - w~^(g)||^2` (exact moments over fresh
//! batches per local step, I-CLUP19) is the floor alone. The claim is the least-squares slope of
//! `ln floor` against `ln m` (or `ln B`) with its Student-t interval ([`crate::kinds::rate`]) at
//! most `-1`: the floor falls at least like `1/m` (`1/B`).
//!
//! - Over `m` ([`clients_sweep`]): the scenario's clients each repeated `j` times,
//!   `j in` [`REPLICAS`], on scenarios with at most [`MAX_SWEEP_CLIENTS`]` / 8` clients. Repetition keeps every constant of the ball fixed (`mu`, `L`, the
//!   per-sample variance `sigma^2`, `mu_g`, `mu_l`, the solution `w~^(g)` and the steps), so only
//!   the `1/m` of the ball moves, as the statement has it; each copy draws its own batches.
//! - Over `B` ([`batch_sweep`]): `B in` [`BATCHES`] below `n` at the scenario's clients and steps.

use nalgebra::DVector;
use serde::Serialize;

use crate::claim::ConditionCheck;
use crate::kinds::rate::{evaluate_rate, fit_slope, sweep_series, SlopeFit};
use crate::verdict::Evaluation;

use super::algorithm::{initial_state, run_alg2, Batches, Params};
use super::model::Instance;

/// How many times each client is repeated in the sweep over `m`: eight points, so the interval
/// of the slope (6 degrees of freedom) is decided by the fit rather than by its misfit's width.
pub const REPLICAS: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
/// The most clients a sweep over `m` runs (`8 m <= 16`, so scenarios with `m = 2`): the exact
/// moments of a state of `(m + 1) d` numbers cost about `(m d)^3` per local step and client.
pub const MAX_SWEEP_CLIENTS: usize = 16;
/// The batch sizes of the sweep over `B` (those below `n`: at `B = n` there is no noise).
pub const BATCHES: [usize; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
/// The claimed exponent: the ball is proportional to `1/(B m)`.
pub const EXPONENT: f64 = -1.0;
/// Confidence of the slope's interval.
pub const CONFIDENCE: f64 = 0.99;

/// Which factor of `1/(B m)` a sweep moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BallAxis {
    /// The number of clients `m` (each client repeated).
    Clients,
    /// The batch size `B`.
    Batch,
}

/// One sweep: the values of `m` or `B`, the noise floor at each, and the fitted slope.
#[derive(Debug, Clone, Serialize)]
pub struct BallSweep {
    /// What moves.
    pub axis: BallAxis,
    /// `m` or `B` at each point.
    pub xs: Vec<usize>,
    /// Algorithm 2's exact `E||w_T^(g) - w~^(g)||^2` from the solution at each point.
    pub floors: Vec<f64>,
    /// The least-squares line through `(ln x, ln floor)` with its interval at [`CONFIDENCE`].
    pub fit: Option<SlopeFit>,
}

/// `inst` with every client repeated `j` times (clients `i`, `i + m`, ... are copies of `i`).
pub fn replicated(inst: &Instance, j: usize) -> Instance {
    let mut out = inst.clone();
    out.clients = (0..j).flat_map(|_| inst.clients.iter().cloned()).collect();
    out
}

/// Algorithm 2's noise floor on `inst`: `E||w_T^(g) - w~^(g)||^2` after `rounds` rounds with
/// fresh batches of `batch` per local step, started at the solution of Problem (2) at `p.lambda`.
pub fn noise_floor(inst: &Instance, p: &Params, batch: usize, rounds: usize) -> f64 {
    let sol = inst.solve(p.lambda);
    let start: DVector<f64> = initial_state(&sol.global, &sol.locals);
    run_alg2(inst, p, batch, Batches::PerStep, &start, &sol.global, rounds).global_error.last().copied().unwrap_or(f64::NAN)
}

fn sweep(axis: BallAxis, xs: Vec<usize>, floors: Vec<f64>) -> BallSweep {
    let fit = fit_slope(&xs, &floors, CONFIDENCE);
    BallSweep { axis, xs, floors, fit }
}

/// The floor over `m = j m_0`, `j in` [`REPLICAS`], at batch `batch` ([`replicated`] clients);
/// `None` when the largest `m` is over [`MAX_SWEEP_CLIENTS`].
pub fn clients_sweep(inst: &Instance, p: &Params, batch: usize, rounds: usize) -> Option<BallSweep> {
    if REPLICAS[REPLICAS.len() - 1] * inst.m() > MAX_SWEEP_CLIENTS {
        return None;
    }
    let xs: Vec<usize> = REPLICAS.iter().map(|j| j * inst.m()).collect();
    let floors = REPLICAS.iter().map(|&j| noise_floor(&replicated(inst, j), p, batch, rounds)).collect();
    Some(sweep(BallAxis::Clients, xs, floors))
}

/// The floor over `B in` [`BATCHES`] below `n`.
pub fn batch_sweep(inst: &Instance, p: &Params, rounds: usize) -> BallSweep {
    let xs: Vec<usize> = BATCHES.iter().copied().filter(|b| *b < inst.n).collect();
    let floors = xs.iter().map(|&b| noise_floor(inst, p, b, rounds)).collect();
    sweep(BallAxis::Batch, xs, floors)
}

/// The sweep along `axis` at the scenario's steps `p`, batch `batch` and horizon `rounds`;
/// `None` where [`clients_sweep`] does not run.
pub fn sweep_along(axis: BallAxis, inst: &Instance, p: &Params, batch: usize, rounds: usize) -> Option<BallSweep> {
    match axis {
        BallAxis::Clients => clients_sweep(inst, p, batch, rounds),
        BallAxis::Batch => Some(batch_sweep(inst, p, rounds)),
    }
}

/// The batch size the claim's scope check `B <= n` reads: the scenario's for the sweep over
/// `m`, the largest of the sweep over `B`.
pub fn checked_batch(sw: &BallSweep, batch: usize) -> usize {
    match sw.axis {
        BallAxis::Clients => batch,
        BallAxis::Batch => sw.xs.last().copied().unwrap_or(batch),
    }
}

/// The rate claim on a sweep: slope at most `exponent` ([`EXPONENT`] for the theorem; a steeper
/// one is the negative control), decided by [`evaluate_rate`] at the sweep's largest value, with
/// what each point and the fit are.
pub fn evaluate(sw: &BallSweep, exponent: f64, checks: Vec<ConditionCheck>, bound_scale: f64) -> (Evaluation, Vec<String>) {
    let name = match sw.axis {
        BallAxis::Clients => "m",
        BallAxis::Batch => "B",
    };
    let horizon = sw.xs.last().copied().unwrap_or(0);
    let evaluation = evaluate_rate(sw.fit, exponent, horizon, sweep_series(&sw.xs, &sw.floors), checks, bound_scale);
    let mut points: Vec<String> = sw.xs.iter().zip(&sw.floors).map(|(x, f)| format!("{name} = {x}: floor {f:.6e}")).collect();
    points.push(match sw.fit {
        Some(f) => format!(
            "slope of ln floor against ln {name}: {:.6} (stderr {:.3e}, {:.0}% interval [{:.6}, {:.6}]) vs claimed {exponent}",
            f.slope,
            f.stderr,
            CONFIDENCE * 100.0,
            f.lower,
            f.upper
        ),
        None => format!("no slope: fewer than three positive finite floors over {name}"),
    });
    (evaluation, points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweeps_are_what_the_docs_say() {
        assert_eq!(REPLICAS[0], 1, "the sweep over m starts at the scenario's own clients");
        assert!(REPLICAS.windows(2).all(|w| w[0] < w[1]) && BATCHES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(EXPONENT, -1.0);
    }
}
