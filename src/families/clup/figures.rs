//! The paper's Figure 2 statement on quadratics (003:L264, L272, L1399): "more local updates
//! significantly accelerate convergence, reducing the reliance on frequent communication" in the
//! low-personalization setting, with "a limited effect" in the high-personalization one. Read as
//! an ordering over a sweep of the local steps `K`: at every lambda of the scenario's sweep, at
//! Corollary 2's `gamma = 1/(2 L_g)` and `eta = 1/(lambda + L)`, the rounds Algorithm 1 takes to
//! an `eps`-solution do not increase as `K` grows ([`crate::kinds::ordering`]). A limited effect
//! is a tie, which the ordering allows; an increase is a violation.

use crate::claim::ConditionCheck;
use crate::kinds::ordering::{evaluate_ordering, pair_ratio};
use crate::verdict::Evaluation;

/// The local steps of the sweep.
pub const LOCAL_STEPS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Rounds to an `eps`-solution at one lambda and `K`.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct KPoint {
    /// `lambda`.
    pub lambda: f64,
    /// Local steps `K`.
    pub k: usize,
    /// First `t` with `||w_t^(g) - w~^(g)||^2 <= eps` and `max_i ||w_{t,0}^(i) - w~^(i)||^2 <= eps`
    /// (`inf` past the round cap).
    pub rounds: f64,
}

/// The rounds at every lambda of `lambdas` and `K in` [`LOCAL_STEPS`], `rounds(lambda, K)` the
/// family's count at Corollary 2's `gamma` and `eta` from the scenario's start.
pub fn k_sweep(lambdas: &[f64], rounds: impl Fn(f64, usize) -> f64) -> Vec<KPoint> {
    lambdas
        .iter()
        .flat_map(|&lambda| LOCAL_STEPS.iter().map(move |&k| (lambda, k)))
        .map(|(lambda, k)| KPoint { lambda, k, rounds: rounds(lambda, k) })
        .collect()
}

/// The ordering: at each lambda, every consecutive pair `K_j < K_{j+1}` as
/// `rounds(K_{j+1}) / rounds(K_j) <= 1`, with what each pair is.
pub fn evaluate_local_steps(points: &[KPoint], checks: Vec<ConditionCheck>, bound_scale: f64) -> (Evaluation, Vec<String>) {
    let pairs: Vec<(&KPoint, &KPoint)> = points.windows(2).filter(|w| w[0].lambda == w[1].lambda).map(|w| (&w[0], &w[1])).collect();
    let ratios: Vec<f64> = pairs.iter().map(|(a, b)| pair_ratio(b.rounds, a.rounds)).collect();
    let horizon = points.iter().map(|p| p.rounds).filter(|r| r.is_finite()).fold(0.0, f64::max) as usize;
    let evaluation = evaluate_ordering(&ratios, horizon, checks, bound_scale, "no lambda sweep: no K to compare");
    let described = pairs.iter().map(|(a, b)| format!("lambda {:.4e}: K {} -> {}: {} rounds vs {}", a.lambda, a.k, b.k, a.rounds, b.rounds)).collect();
    (evaluation, described)
}
