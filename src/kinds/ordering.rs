//! An ordering claim: runs ordered by a key (a better-connected graph, a smaller step) have
//! metrics in the same order, `key(a) < key(b) => metric(a) <= metric(b)`, read as every ratio
//! `metric(a) / metric(b)` over the ordered pairs at most one.

use crate::claim::ConditionCheck;
use crate::verdict::{decide, Checkpoint, Evaluation, VerdictKind};

use super::{exact, failed_and_notes, undecided};
use crate::engine::Estimator;

/// The ratio `metric(a) / metric(b)` of an ordered pair: `+inf` when only `b`'s metric is zero,
/// `0` when both are (a tie), NaN when either metric is (never a holding ratio).
pub fn pair_ratio(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if b > 0.0 {
        a / b
    } else if a > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// An ordering claim over the ratios of its ordered pairs: holds when the worst ratio is at most
/// `bound_scale` (exact metrics, so ties within rounding hold), decided at `horizon`. `no_pairs`
/// says why there is nothing to compare when `ratios` is empty (the claim is then not
/// applicable). A NaN ratio makes the verdict inconclusive, never holds.
pub fn evaluate_ordering(ratios: &[f64], horizon: usize, checks: Vec<ConditionCheck>, bound_scale: f64, no_pairs: &str) -> Evaluation {
    let (failed, notes) = failed_and_notes(&checks);
    if ratios.is_empty() {
        return undecided(VerdictKind::NotApplicable, checks, vec![no_pairs.to_string()], notes, Vec::new());
    }
    if !failed.is_empty() {
        return undecided(VerdictKind::NotApplicable, checks, failed, notes, Vec::new());
    }
    let worst = ratios.iter().copied().fold(f64::NEG_INFINITY, crate::engine::nan_max);
    let estimate = exact(worst);
    let point = Checkpoint { rounds: horizon, estimate, bound: Some(bound_scale) };
    let slack = if worst > 0.0 { Some(bound_scale / worst) } else { None };
    Evaluation {
        verdict: decide(&estimate, bound_scale),
        slack,
        decisive: Some(point),
        checks,
        failed,
        notes,
        estimator: Estimator::Exact,
        series: vec![point],
        beyond_steps: None,
    }
}
