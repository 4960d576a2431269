//! An `O(.)` claim with a hidden constant: `metric(T) <= c shape(T)` for some constant `c` and
//! every horizon `T`, where `shape` is the statement's bracket without its constant.
//!
//! # Meaning
//! The claim says the ratio `r(T) = metric(T) / shape(T)` is bounded in `T`. A finite sweep
//! `T_1 < ... < T_n` can only show how `r` moves at its largest horizons, so the verdict reads
//! the local log-log slopes of the ratio between consecutive horizons,
//! `s_j = ln(r_{j+1} / r_j) / ln(T_{j+1} / T_j)`, over the three largest horizons (`s_a` between
//! `T_{n-2}` and `T_{n-1}`, `s_b` between `T_{n-1}` and `T_n`):
//!
//! - **holds, flat**: `s_b <= `[`BIG_O_SLOPE_RESOLUTION`] — the ratio does not grow at the end of
//!   the sweep by more than the resolution (growth slower than `T^resolution` is not resolved);
//! - **holds, slowing**: `0 < s_b < s_a` and the slopes fall geometrically in `ln T`, at a rate
//!   `lambda = ln(s_a / s_b) / (x_b - x_a) >= `[`BIG_O_MIN_SLOPE_DECAY`] (`x` the midpoints of the
//!   two intervals in `ln T`): the model `s(x) = s_b e^(-lambda (x - x_b))` leaves a finite growth
//!   `int_{ln T_n}^inf s(x) dx = s(ln T_n) / lambda` of `ln r`, so the ratio is bounded, with
//!   extrapolated supremum `max(max_j r_j, r_n e^(s(ln T_n) / lambda))`;
//! - **violated**: `s_b > resolution` and `s_b >= s_a` (to rounding): the ratio grows at the end of
//!   the sweep and its growth does not slow, as `T^p / T^q` does for any `p > q`;
//! - **inconclusive**: `s_b > resolution` with slopes that fall too slowly to extrapolate, fewer
//!   than three horizons, or a ratio that cannot be formed (a NaN metric or shape, a shape that
//!   is not positive and finite, a negative metric, a positive ratio that over- or underflows
//!   f64, whose slopes could not be read).
//!
//! A metric that is `+inf` (a diverged run) against a finite positive shape is an unbounded ratio:
//! violated. Nothing that is not finite ever gives holds.
//!
//! The verdict does not depend on where a constant would be fitted: no constant is fitted. The
//! smallest constant that covers every horizon of the sweep, `c* = max_j r_j`, is reported as a
//! number (the deciding checkpoint's bound, and a note), never as the verdict. Multiplying the
//! bracket by a factor changes `r` by that factor and no slope, so the verdict does not depend on
//! a bound scale either: the hidden constant absorbs it.
//!
//! Why not a constant calibrated at the first horizon: a bracket whose lower-order terms
//! (`T^(-1)`, `T^(-3/2)` against a `T^(-1/2)` metric) fall faster than the metric early in the
//! sweep makes `r` rise toward its limit, so a constant fitted at `T_1` is exceeded at every later
//! horizon although `r` converges; the reading here calls that bounded.

use serde::Serialize;

use crate::claim::ConditionCheck;
use crate::engine::Estimator;
use crate::prec::{self, BIG_O_MIN_SLOPE_DECAY, BIG_O_SLOPE_RESOLUTION};
use crate::verdict::{Checkpoint, Evaluation, VerdictKind, NUMERICAL_NOTE};

use super::{exact, failed_and_notes, undecided};

/// How the ratio `metric/shape` moves over the three largest horizons.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trend {
    /// The last local slope is at most the resolution: no growth resolved at the end.
    Flat,
    /// The ratio still grows but its local slopes fall geometrically: bounded by extrapolation.
    Slowing,
    /// The ratio grows beyond the resolution and its growth does not slow: unbounded.
    Growing,
    /// The ratio grows and its slopes fall, too slowly to extrapolate a bound.
    Unresolved,
}

/// The ratio `metric/shape` over a sweep and what its trend says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RatioTrend {
    /// `(T_j, metric_j / shape_j)` for every horizon.
    pub ratios: Vec<(usize, f64)>,
    /// The smallest constant covering every horizon, `c* = max_j r_j`.
    pub cover: f64,
    /// The horizon where `r_j = c*`.
    pub cover_at: usize,
    /// The local log-log slopes `s_a`, `s_b` of the ratio over the three largest horizons.
    pub slopes: [f64; 2],
    /// The rate `lambda` at which the slopes fall per unit of `ln T`, when both are positive.
    pub decay: Option<f64>,
    /// The extrapolated supremum of the ratio, when the trend supports one (flat with the ratio
    /// falling at the end, or slowing).
    pub supremum: Option<f64>,
    /// The trend.
    pub trend: Trend,
}

/// Why no ratio trend could be read from a sweep.
#[derive(Debug, Clone, PartialEq)]
pub enum Unreadable {
    /// Fewer than three horizons, or horizons that do not increase.
    Horizons(String),
    /// A metric that is `+inf` against a finite positive shape at this horizon: the ratio is
    /// unbounded (the run diverged).
    Diverged(usize),
    /// A NaN metric or shape, a shape that is not positive and finite, or a negative metric.
    NotComparable(usize, String),
}

/// Checks that each point `(T, metric, shape)` gives a ratio that can be read.
fn check_points(points: &[(usize, f64, f64)]) -> Result<(), Unreadable> {
    if points.len() < 3 {
        return Err(Unreadable::Horizons(format!("{} horizons; the trend of metric/shape needs at least three", points.len())));
    }
    if points.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err(Unreadable::Horizons("horizons that do not increase".into()));
    }
    for &(t, m, s) in points {
        if m.is_nan() || s.is_nan() {
            return Err(Unreadable::NotComparable(t, format!("the metric is {m} and the shape {s}")));
        }
        if !(s.is_finite() && s > 0.0) {
            return Err(Unreadable::NotComparable(t, format!("the shape is {s}, not positive and finite")));
        }
        if m < 0.0 {
            return Err(Unreadable::NotComparable(t, format!("the metric is {m} < 0")));
        }
        if m.is_infinite() {
            return Err(Unreadable::Diverged(t));
        }
        if m > 0.0 && !(m / s).is_normal() {
            return Err(Unreadable::NotComparable(t, format!("metric/shape = {m}/{s} is outside the range of f64 (over- or underflows)")));
        }
    }
    Ok(())
}

/// The local log-log slope of a nonnegative finite ratio from `(t0, r0)` to `(t1, r1)`: `-inf`
/// when it falls to zero, `+inf` when it rises from zero, `0` between two zeros. The logarithms
/// are differenced (`ln r1 - ln r0`), so a quotient `r1/r0` beyond the range of f64 does not
/// turn a finite slope infinite.
fn local_slope((t0, r0): (usize, f64), (t1, r1): (usize, f64)) -> f64 {
    match (r0 > 0.0, r1 > 0.0) {
        (true, true) => (r1.ln() - r0.ln()) / ((t1 as f64).ln() - (t0 as f64).ln()),
        (true, false) => f64::NEG_INFINITY,
        (false, true) => f64::INFINITY,
        (false, false) => 0.0,
    }
}

/// Reads the trend of `metric/shape` over `points` = `(T, metric, shape)` in increasing `T`.
///
/// # Errors
/// [`Unreadable`] when the sweep is too short or a ratio cannot be formed.
pub fn ratio_trend(points: &[(usize, f64, f64)]) -> Result<RatioTrend, Unreadable> {
    check_points(points)?;
    let ratios: Vec<(usize, f64)> = points.iter().map(|&(t, m, s)| (t, m / s)).collect();
    let (cover_at, cover) = ratios.iter().copied().fold((0, f64::NEG_INFINITY), |best, p| if p.1 > best.1 { p } else { best });
    let n = ratios.len();
    let (p0, p1, p2) = (ratios[n - 3], ratios[n - 2], ratios[n - 1]);
    let (sa, sb) = (local_slope(p0, p1), local_slope(p1, p2));
    let x = |t: usize| (t as f64).ln();
    let (xa, xb, xn) = ((x(p0.0) + x(p1.0)) / 2.0, (x(p1.0) + x(p2.0)) / 2.0, x(p2.0));
    let decay = (sa.is_finite() && sb.is_finite() && sb > 0.0 && sa > sb).then(|| (sa / sb).ln() / (xb - xa));
    let trend = if sb <= BIG_O_SLOPE_RESOLUTION {
        Trend::Flat
    } else if decay.is_some_and(|l| l >= BIG_O_MIN_SLOPE_DECAY) {
        Trend::Slowing
    } else if prec::ge_tol(sb, sa) {
        Trend::Growing
    } else {
        Trend::Unresolved
    };
    let supremum = match (trend, decay) {
        (Trend::Flat, _) if sb <= 0.0 => Some(cover),
        (Trend::Flat | Trend::Slowing, Some(l)) => {
            let remaining = sb * (-l * (xn - xb)).exp() / l;
            Some(cover.max(p2.1 * remaining.exp()))
        }
        _ => None,
    };
    Ok(RatioTrend { ratios, cover, cover_at, slopes: [sa, sb], decay, supremum, trend })
}

/// The notes that say what the trend is, with the covering constant and the slopes.
fn trend_notes(r: &RatioTrend) -> Vec<String> {
    let num = crate::claim::fmt_num;
    let [sa, sb] = r.slopes;
    let mut notes = vec![
        format!("smallest constant covering every horizon: max_T metric/shape = {} at T = {}", num(r.cover), r.cover_at),
        format!("local log-log slopes of metric/shape over the three largest horizons: {}, {} (resolution {})", num(sa), num(sb), num(BIG_O_SLOPE_RESOLUTION)),
    ];
    let what = match r.trend {
        Trend::Flat => "bounded: no growth of metric/shape beyond the resolution at the largest horizons".to_string(),
        Trend::Slowing => format!(
            "bounded: the growth of metric/shape slows geometrically (slopes fall as T^-{} >= T^-{})",
            num(r.decay.unwrap_or(f64::NAN)),
            num(BIG_O_MIN_SLOPE_DECAY)
        ),
        Trend::Growing => "unbounded: metric/shape grows beyond the resolution and its growth does not slow".to_string(),
        Trend::Unresolved => format!("undecided: metric/shape grows and its slopes fall slower than T^-{}", num(BIG_O_MIN_SLOPE_DECAY)),
    };
    notes.push(what);
    if let Some(s) = r.supremum {
        notes.push(format!("extrapolated supremum of metric/shape: {}", num(s)));
    }
    notes
}

/// Evaluates `metric(T) <= c shape(T)` for a hidden constant `c` over `points` =
/// `(T, metric, shape)` in increasing `T` (see the module's meaning). The deciding checkpoint is
/// at the largest horizon, with `metric/shape` there as its estimate and the covering constant
/// `c*` as its bound; `slack` is `None` (a hidden constant leaves no room to measure). The series
/// holds the metric against `c* shape` at every horizon.
pub fn evaluate_big_o(points: &[(usize, f64, f64)], checks: Vec<ConditionCheck>) -> Evaluation {
    let (failed, mut notes) = failed_and_notes(&checks);
    if !failed.is_empty() {
        return undecided(VerdictKind::NotApplicable, checks, failed, notes, Vec::new());
    }
    let r = match ratio_trend(points) {
        Ok(r) => r,
        Err(e) => {
            let e_at = match &e {
                Unreadable::Horizons(_) => None,
                Unreadable::Diverged(t) | Unreadable::NotComparable(t, _) => Some(*t),
            };
            let (verdict, why) = match e {
                Unreadable::Horizons(why) => (VerdictKind::Inconclusive, why),
                Unreadable::Diverged(t) => {
                    notes.push(format!("{NUMERICAL_NOTE} at T'={t}: the metric is inf (the run diverged)"));
                    (VerdictKind::Violated, format!("the metric is infinite at T = {t}: metric/shape is unbounded"))
                }
                Unreadable::NotComparable(t, why) => {
                    notes.push(format!("{NUMERICAL_NOTE} at T'={t}: {why}"));
                    (VerdictKind::Inconclusive, format!("metric/shape cannot be formed at T = {t}: {why}"))
                }
            };
            let series: Vec<Checkpoint> = points.iter().map(|&(t, m, _)| Checkpoint { rounds: t, estimate: exact(m), bound: None }).collect();
            let at = match e_at {
                Some(t) => series.iter().find(|p| p.rounds == t).copied(),
                None => None,
            };
            return Evaluation { decisive: at, ..undecided(verdict, checks, vec![why], notes, series) };
        }
    };
    let verdict = match r.trend {
        Trend::Flat | Trend::Slowing => VerdictKind::Holds,
        Trend::Growing => VerdictKind::Violated,
        Trend::Unresolved => VerdictKind::Inconclusive,
    };
    notes.extend(trend_notes(&r));
    let series = points.iter().map(|&(t, m, s)| Checkpoint { rounds: t, estimate: exact(m), bound: Some(r.cover * s) }).collect();
    let (last_t, last_r) = r.ratios[r.ratios.len() - 1];
    let decisive = Checkpoint { rounds: last_t, estimate: exact(last_r), bound: Some(r.cover) };
    Evaluation { verdict, slack: None, decisive: Some(decisive), checks, failed, notes, estimator: Estimator::Exact, series, beyond_steps: None }
}
