//! Whether a sweep of horizons reaches the regime a rate or an `O(.)` statement is about.
//!
//! # Meaning
//! A rate (`metric = O(T^p)`, [`super::rate`]) or an `O(.)` bound with a hidden constant
//! ([`super::big_o`]) speaks of `T -> inf`; a sweep sees finitely many horizons. Where the
//! dynamics' slowest mode has barely moved by a horizon, a running average of a squared quantity
//! is still near its starting value: it decays slower than its rate, and its ratio to a falling
//! shape grows, although the same runs continued show the rate (a mode of curvature `1e-4` at
//! steps `~ 1/sqrt(T)` settles only near `T = 1e8`). So a sweep's slope can read slower than the
//! asymptote by a transient bias, and a violation is a verdict only where its margin exceeds
//! that bias.
//!
//! # Formula
//! A mode contracted by `e^(-kappa)` over `T` rounds (its square by `e^(-x)`, `x = 2 kappa`)
//! contributes `(1 - e^(-x))/x` of its start to the running average, whose log-log slope in `T`
//! is `g (x e^(-x)/(1 - e^(-x)) - 1)`, `g = d ln kappa / d ln T`. Its asymptote is `-g`, so the
//! transient makes the slope slower by at most
//! `bias = g x e^(-x) / (1 - e^(-x))` (`g` at `x -> 0`, under `1e-3 g` from `x = 10`),
//! largest for the slowest mode (`bias` falls in `x`). A rate fitted over the sweep is read
//! from its smallest horizon, an `O(.)` trend from the first of its three largest.
//! - A rate violation (the slope's lower limit above the claimed exponent) stands only where it
//!   is above the exponent by more than `bias`.
//! - An `O(.)` violation (the ratio's last local slope above the resolution and not slowing)
//!   stands only where that slope less `bias` is still above the resolution.
//!
//! Otherwise "violated" becomes inconclusive, with a note giving `kappa`, the bias and the
//! horizon. A "holds" is left as read: the transient biases a sweep toward slower decay and
//! larger ratios, never the other way. A diverged run (an infinite metric) stays violated.

use serde::Serialize;

use super::big_o::{ratio_trend, Trend};
use crate::prec::BIG_O_SLOPE_RESOLUTION;
use crate::verdict::{Evaluation, VerdictKind};

/// How far the runs of a sweep have contracted their slowest mode at the horizon that begins the
/// part of the sweep a verdict reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settling {
    /// The horizon `T` at which `kappa` is read.
    pub horizon: usize,
    /// `kappa(T) = sum_{t < T} -ln rho_t`, `rho_t` the per-round contraction factor of the slowest
    /// mode at the steps of horizon `T`: the mode's size has fallen by `e^(-kappa)`.
    pub kappa: f64,
    /// `g = d ln kappa / d ln T` over the sweep (`1/2` for steps `~ T^(-1/2)`); the largest
    /// between neighbouring horizons.
    pub growth: f64,
}

impl Settling {
    /// The settling at horizon `at` of a sweep of `(T, kappa)` in increasing `T`, with `growth` the
    /// largest log-log slope of `kappa` between neighbouring horizons (`1` with fewer than two, or
    /// where it is not a finite positive number: the largest a step schedule `~ T^0` gives).
    pub fn of_sweep(sweep: &[(usize, f64)], at: usize) -> Self {
        let slopes = sweep.windows(2).map(|w| ((w[1].1).ln() - (w[0].1).ln()) / ((w[1].0 as f64).ln() - (w[0].0 as f64).ln()));
        let growth = slopes.fold(f64::NAN, f64::max);
        let growth = if growth.is_finite() && growth > 0.0 { growth } else { 1.0 };
        let (horizon, kappa) = sweep.get(at).copied().unwrap_or((0, f64::NAN));
        Self { horizon, kappa, growth }
    }

    /// The largest slowdown of a log-log slope the unsettled mode can cause (see the module's
    /// formula); `growth` itself where `kappa` is NaN or not positive.
    pub fn slope_bias(&self) -> f64 {
        let x = 2.0 * self.kappa;
        if x.is_nan() || x <= 0.0 {
            return self.growth;
        }
        if x.is_infinite() {
            return 0.0;
        }
        self.growth * x * (-x).exp() / -(-x).exp_m1()
    }

    fn note(&self, what: &str) -> String {
        format!(
            "the sweep has not settled enough to read this as a violation: at T = {} the slowest mode has contracted by e^(-kappa), kappa = {}, so the transient can slow the log-log slope by up to {}, and {what}",
            self.horizon,
            crate::claim::fmt_num(self.kappa),
            crate::claim::fmt_num(self.slope_bias())
        )
    }
}

/// A rate's `evaluation` ([`super::rate::evaluate_rate`], decided on the decay factor per doubling
/// `2^slope` against `2^exponent`) with a violation whose margin the transient could explain made
/// inconclusive.
pub fn rate_violation_if_settled(mut evaluation: Evaluation, settling: Settling) -> Evaluation {
    let Some(point) = evaluation.decisive.as_ref() else { return evaluation };
    let (Some(bound), lower) = (point.bound, point.estimate.lower) else { return evaluation };
    if evaluation.verdict == VerdictKind::Violated && lower * (-settling.slope_bias()).exp2() <= bound {
        evaluation.verdict = VerdictKind::Inconclusive;
        let margin = lower.log2() - bound.log2();
        evaluation.notes.push(settling.note(&format!("the slope exceeds the claimed exponent by only {}", crate::claim::fmt_num(margin))));
    }
    evaluation
}

/// An `O(.)` `evaluation` ([`super::big_o::evaluate_big_o`] over `points`) with a violation whose
/// growth the transient could explain made inconclusive.
pub fn big_o_violation_if_settled(mut evaluation: Evaluation, points: &[(usize, f64, f64)], settling: Settling) -> Evaluation {
    if evaluation.verdict != VerdictKind::Violated {
        return evaluation;
    }
    let Ok(trend) = ratio_trend(points) else { return evaluation };
    let last = trend.slopes[1];
    if trend.trend == Trend::Growing && last - settling.slope_bias() <= BIG_O_SLOPE_RESOLUTION {
        evaluation.verdict = VerdictKind::Inconclusive;
        evaluation.notes.push(settling.note(&format!("metric/shape grows at a local slope of only {}", crate::claim::fmt_num(last))));
    }
    evaluation
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::big_o::evaluate_big_o;
    use crate::kinds::rate::{evaluate_rate, fit_slope, sweep_series};

    const TS: [usize; 4] = [100, 200, 400, 800];

    fn settling(kappa: f64) -> Settling {
        Settling { horizon: 100, kappa, growth: 0.5 }
    }

    /// The bias falls from `growth` (nothing moved) to 0 (settled), and is 0.037 at `x = 4`.
    #[test]
    fn the_slope_bias_falls_from_the_growth_to_zero() {
        assert_eq!(settling(0.0).slope_bias(), 0.5);
        assert!((settling(1e-9).slope_bias() - 0.5).abs() < 1e-8);
        assert!((settling(2.0).slope_bias() - 0.5 * 4.0 * (-4f64).exp() / (1.0 - (-4f64).exp())).abs() < 1e-15);
        assert!(settling(10.0).slope_bias() < 1e-7 && settling(f64::INFINITY).slope_bias() == 0.0);
        assert_eq!(settling(f64::NAN).slope_bias(), 0.5);
        let s = Settling::of_sweep(&[(100, 2.0), (400, 4.0)], 0);
        assert!((s.growth - 0.5).abs() < 1e-12 && s.kappa == 2.0 && s.horizon == 100);
    }

    /// A metric flat over the sweep against a shape `T^-1/2` (the ratio grows as `T^1/2`), and one
    /// unsettled mode's running average against the rate `T^-1/2`: both violated as read.
    /// Unsettled (kappa 0.01: bias 0.495) both are inconclusive; settled (kappa 10) both stay violated. A "holds" is never
    /// changed, and a violation far beyond the bias stands unsettled too.
    #[test]
    fn a_violation_stands_only_beyond_the_transient_bias() {
        let flat: Vec<(usize, f64, f64)> = TS.iter().map(|&t| (t, 1.0, (t as f64).powf(-0.5))).collect();
        assert_eq!(evaluate_big_o(&flat, Vec::new()).verdict, VerdictKind::Violated);
        let unsettled = big_o_violation_if_settled(evaluate_big_o(&flat, Vec::new()), &flat, settling(0.01));
        assert_eq!(unsettled.verdict, VerdictKind::Inconclusive);
        assert!(unsettled.notes.iter().any(|n| n.contains("not settled")), "{:?}", unsettled.notes);
        assert_eq!(big_o_violation_if_settled(evaluate_big_o(&flat, Vec::new()), &flat, settling(10.0)).verdict, VerdictKind::Violated);
        // A rate: one mode's running average (1 - e^(-x))/x, x = 2 kappa, kappa = 0.01 sqrt(T/100),
        // against T^-1/2: it decays as T^-0.005, violated as read.
        let ts: Vec<usize> = TS.to_vec();
        let ys: Vec<f64> = ts.iter().map(|&t| 0.02 * (t as f64 / 100.0).sqrt()).map(|x: f64| -(-x).exp_m1() / x).collect();
        let rate = || evaluate_rate(fit_slope(&ts, &ys, 0.99), -0.5, 800, sweep_series(&ts, &ys), Vec::new(), 1.0);
        assert_eq!(rate().verdict, VerdictKind::Violated);
        assert_eq!(rate_violation_if_settled(rate(), settling(0.01)).verdict, VerdictKind::Inconclusive);
        assert_eq!(rate_violation_if_settled(rate(), settling(10.0)).verdict, VerdictKind::Violated);
        // A true T^-1/2 claimed as T^-1: beyond any bias of growth 1/2, violated even unsettled.
        let half: Vec<f64> = ts.iter().map(|&t| (t as f64).powf(-0.5)).collect();
        let inv_t = evaluate_rate(fit_slope(&ts, &half, 0.99), -1.0, 800, sweep_series(&ts, &half), Vec::new(), 1.0);
        assert_eq!(rate_violation_if_settled(inv_t, settling(2.0)).verdict, VerdictKind::Violated);
        // "holds" is left alone.
        let falling: Vec<(usize, f64, f64)> = TS.iter().map(|&t| (t, (t as f64).powf(-0.5), (t as f64).powf(-0.5))).collect();
        assert_eq!(big_o_violation_if_settled(evaluate_big_o(&falling, Vec::new()), &falling, settling(0.01)).verdict, VerdictKind::Holds);
    }
}
