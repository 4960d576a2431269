//! A rate claim: `metric = O(T^p)` over a sweep of horizons `T`, read as the least-squares slope
//! of `ln metric` against `ln T` (with a Student-t interval from the misfit of a straight line) at
//! most `p`. The slope is compared as the decay factor per doubling of `T`, `2^slope` against
//! `2^p`, so that slack is a ratio like every other bound's.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::claim::ConditionCheck;
use crate::engine::{Estimator, Interval};
use crate::verdict::{decide, Checkpoint, Evaluation, VerdictKind, NUMERICAL_NOTE};

use super::{exact, failed_and_notes, undecided};

/// A least-squares line through `(ln T, ln metric)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SlopeFit {
    /// Fitted slope.
    pub slope: f64,
    /// Standard error from the residuals (the misfit of a straight line; the metric itself is exact).
    pub stderr: f64,
    /// Lower limit of the interval.
    pub lower: f64,
    /// Upper limit.
    pub upper: f64,
    /// Intercept `ln c` of `metric ~ c T^slope`.
    pub intercept: f64,
}

/// Fits `ln y = a + s ln T` and a Student-t interval of `s` at `confidence` (`n - 2` degrees of
/// freedom): `s = S_xy / S_xx`, `se = sqrt(SSR / ((n - 2) S_xx))`, `s +- t_{(1+c)/2, n-2} se`.
/// Points with `y = 0` are left out (no logarithm); `None` with fewer than three positive points
/// or when any `y` is NaN, infinite or negative (a diverged or broken run has no rate).
pub fn fit_slope(ts: &[usize], ys: &[f64], confidence: f64) -> Option<SlopeFit> {
    if ys.iter().any(|y| !y.is_finite() || *y < 0.0) {
        return None;
    }
    let pts: Vec<(f64, f64)> = ts.iter().zip(ys).filter(|(_, y)| **y > 0.0).map(|(t, y)| ((*t as f64).ln(), y.ln())).collect();
    let n = pts.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / nf, pts.iter().map(|p| p.1).sum::<f64>() / nf);
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ssr: f64 = pts.iter().map(|p| (p.1 - intercept - slope * p.0).powi(2)).sum();
    let stderr = (ssr / (nf - 2.0) / sxx).sqrt();
    let t = StudentsT::new(0.0, 1.0, nf - 2.0).map(|d| d.inverse_cdf(0.5 + confidence / 2.0)).unwrap_or(f64::INFINITY);
    Some(SlopeFit { slope, stderr, lower: slope - t * stderr, upper: slope + t * stderr, intercept })
}

/// The metric at each horizon as exact checkpoints without a bound (the rate claim bounds the
/// slope, not the metric).
pub fn sweep_series(ts: &[usize], ys: &[f64]) -> Vec<Checkpoint> {
    ts.iter().zip(ys).map(|(&rounds, &y)| Checkpoint { rounds, estimate: exact(y), bound: None }).collect()
}

/// A rate claim: the fitted slope, read as the decay factor per doubling of `T`, `2^slope` (its
/// interval `[2^lower, 2^upper]`), against `2^exponent` (times `bound_scale`), decided at
/// `horizon` (the sweep's largest). Holds when the interval's upper limit is at most the bound,
/// violated when its lower limit exceeds it, inconclusive when it straddles it or there is no fit.
pub fn evaluate_rate(
    fit: Option<SlopeFit>,
    exponent: f64,
    horizon: usize,
    series: Vec<Checkpoint>,
    checks: Vec<ConditionCheck>,
    bound_scale: f64,
) -> Evaluation {
    let (failed, notes) = failed_and_notes(&checks);
    if !failed.is_empty() {
        return undecided(VerdictKind::NotApplicable, checks, failed, notes, series);
    }
    let Some(fit) = fit else {
        let mut notes = notes;
        let failed = match series.iter().find(|p| !p.estimate.mean.is_finite() || p.estimate.mean < 0.0) {
            Some(p) => {
                notes.push(format!("{NUMERICAL_NOTE} at T'={}: the metric is {} (the run diverged or broke)", p.rounds, p.estimate.mean));
                vec![format!("the metric at T = {} is {}: no slope to fit", p.rounds, p.estimate.mean)]
            }
            None => vec!["fewer than three horizons with a positive metric: no slope to fit".to_string()],
        };
        return undecided(VerdictKind::Inconclusive, checks, failed, notes, series);
    };
    let estimate = Interval { mean: 2f64.powf(fit.slope), lower: 2f64.powf(fit.lower), upper: 2f64.powf(fit.upper) };
    let bound = 2f64.powf(exponent) * bound_scale;
    let point = Checkpoint { rounds: horizon, estimate, bound: Some(bound) };
    Evaluation {
        verdict: decide(&estimate, bound),
        slack: Some(bound / estimate.mean),
        decisive: Some(point),
        checks,
        failed,
        notes,
        estimator: Estimator::Exact,
        series,
        beyond_steps: None,
    }
}
