//! The paper's Figure 2 statement on quadratics (003:L264, L272, L1399): "more local updates
//! significantly accelerate convergence, reducing the reliance on frequent communication" in the
//! low-personalization setting, with "a limited effect" in the high-personalization one. Read as
//! an ordering over a sweep of the local steps `K`: at every lambda of the scenario's sweep, at
//! Corollary 2's `gamma = 1/(2 L_g)` and `eta = 1/(lambda + L)`, the rounds Algorithm 1 takes to
//! an `eps`-solution do not increase as `K` grows ([`crate::kinds::ordering`]). A limited effect
//! is a tie, which the ordering allows; an increase is a violation.

//!
//! `~every-eps` reads "accelerate convergence" as the whole error curve: the ordering at every
//! error level from the start down to the scenario's `eps`, decided exactly as Figure 3's
//! ([`super::figure3`]): a curve's rounds to a level change only at the values of its running
//! minimum, so those values of a pair's two curves decide every level (one `eps` alone can hold
//! where a larger level fails).

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

/// The `~every-eps` reading's metric.
pub const EVERY_EPS_METRIC: &str = "rounds of Algorithm 1 to every error level between the start and the scenario's eps (max of the global and every local squared error), at Corollary 2's gamma and eta, K in {1, 2, 4, 8, 16, 32}, every lambda of the scenario's sweep: rounds(K_{j+1}) <= rounds(K_j) at every level (each curve's rounds change only at the values of its running minimum: those values are the levels compared)";

/// Why the `~every-eps` reading.
pub const EVERY_EPS: &str = "'more local updates significantly accelerate convergence' read as the whole error curve, not the rounds to one eps: a faster convergence reaches every error level in no more rounds; flagged, since the primary reading compares at the scenario's eps only";

/// One lambda and `K`'s error at rounds `1, 2, ...` down to the scenario's `eps`.
#[derive(Debug, Clone)]
pub struct KCurve {
    /// `lambda`.
    pub lambda: f64,
    /// Local steps `K`.
    pub k: usize,
    /// The error at rounds `1, 2, ...`, up to the first at most `eps` (or the round cap).
    pub curve: Vec<f64>,
}

/// Rounds to `eps` of an error curve that stops at the first entry at most `eps` (rounds count
/// from 1): its length when it got there, NaN when it ends in NaN, `inf` when it stopped short (the
/// round cap).
pub fn rounds_of_curve(curve: &[f64], eps: f64) -> f64 {
    match curve.last() {
        Some(e) if e.is_nan() => f64::NAN,
        Some(e) if *e <= eps => curve.len() as f64,
        _ => f64::INFINITY,
    }
}

/// The primary reading's points, each curve's rounds to `eps` ([`rounds_of_curve`]).
pub fn k_points(curves: &[KCurve], eps: f64) -> Vec<KPoint> {
    curves.iter().map(|c| KPoint { lambda: c.lambda, k: c.k, rounds: rounds_of_curve(&c.curve, eps) }).collect()
}

/// The curves at every lambda of `lambdas` and `K in` [`LOCAL_STEPS`].
pub fn k_curves(lambdas: &[f64], curve: impl Fn(f64, usize) -> Vec<f64>) -> Vec<KCurve> {
    lambdas.iter().flat_map(|&lambda| LOCAL_STEPS.iter().map(move |&k| (lambda, k))).map(|(lambda, k)| KCurve { lambda, k, curve: curve(lambda, k) }).collect()
}

/// Rounds to the level `eps` (rounds count from 1): one more than Figure 3's index of the first
/// round at most `eps` ([`super::figure3::rounds_to`]), `inf` past the curve.
fn rounds_at(least: &[f64], eps: f64) -> f64 {
    super::figure3::rounds_to(least, eps) + 1.0
}

/// The worst ratio `rounds(K_{j+1}) / rounds(K_j)` of one pair over every level in `[eps,
/// start)` (NaN where a curve has a NaN), with its level: the highest where several tie. The
/// levels are Figure 3's targets ([`super::figure3::targets`]) of the pair above `eps`.
fn worst_level(a: &[f64], b: &[f64], eps: f64) -> (f64, f64) {
    if a.iter().chain(b).any(|e| e.is_nan()) {
        return (f64::NAN, f64::NAN);
    }
    let least = [super::figure3::running_minimum(a), super::figure3::running_minimum(b)];
    let start = a.first().copied().unwrap_or(f64::NAN).max(b.first().copied().unwrap_or(f64::NAN));
    let levels = super::figure3::targets(&least, eps, start);
    levels.into_iter().map(|level| (pair_ratio(rounds_at(&least[1], level), rounds_at(&least[0], level)), level)).fold((f64::NEG_INFINITY, f64::NAN), |w, c| {
        if c.0 > w.0 {
            c
        } else {
            w
        }
    })
}

/// The `~every-eps` ordering: at each lambda, every consecutive pair `K_j < K_{j+1}` at its worst
/// error level between the start and `eps`, with what each pair is.
pub fn evaluate_every_eps(curves: &[KCurve], eps: f64, checks: Vec<ConditionCheck>, bound_scale: f64) -> (Evaluation, Vec<String>) {
    let pairs: Vec<(&KCurve, &KCurve)> = curves.windows(2).filter(|w| w[0].lambda == w[1].lambda).map(|w| (&w[0], &w[1])).collect();
    let worst: Vec<(f64, f64)> = pairs.iter().map(|(a, b)| worst_level(&a.curve, &b.curve, eps)).collect();
    let ratios: Vec<f64> = worst.iter().map(|w| w.0).collect();
    let horizon = curves.iter().map(|c| c.curve.len()).max().unwrap_or(0);
    let evaluation = evaluate_ordering(&ratios, horizon, checks, bound_scale, "no lambda sweep: no K to compare");
    let described = pairs
        .iter()
        .zip(&worst)
        .map(|((a, b), (r, level))| format!("lambda {:.4e}: K {} -> {}: worst at error {level:.4e} (ratio {r:.4})", a.lambda, a.k, b.k))
        .collect();
    (evaluation, described)
}
