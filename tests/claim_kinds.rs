//! The claim kinds of the core (`fedbounds::kinds`) on synthetic exact series: each kind finds
//! what it should (positive controls) and can fail (negative controls), and nothing that is not
//! finite ever holds.

use fedbounds::claim::ConditionCheck;
use fedbounds::kinds::big_o::{evaluate_big_o, ratio_trend, Trend};
use fedbounds::kinds::ordering::{evaluate_ordering, pair_ratio};
use fedbounds::kinds::rate::{evaluate_rate, fit_slope, sweep_series};
use fedbounds::prec::BIG_O_SLOPE_RESOLUTION;
use fedbounds::verdict::{VerdictKind, NUMERICAL_NOTE};

/// `n` horizons doubling from `t0`.
fn doubling(t0: usize, n: usize) -> Vec<usize> {
    (0..n).map(|k| t0 << k).collect()
}

/// `(T, metric(T), shape(T))` over `ts`.
fn sweep(ts: &[usize], metric: impl Fn(f64) -> f64, shape: impl Fn(f64) -> f64) -> Vec<(usize, f64, f64)> {
    ts.iter().map(|&t| (t, metric(t as f64), shape(t as f64))).collect()
}

fn failing_assumption() -> Vec<ConditionCheck> {
    vec![ConditionCheck::assumption("Assumption 1", false, "no window")]
}

// ---------------------------------------------------------------------------------------------
// Rate

#[test]
fn the_slope_of_an_exact_power_is_found_and_a_wrong_exponent_fails() {
    let ts = [10, 20, 40, 80];
    let ys: Vec<f64> = ts.iter().map(|t| 3.0 * (*t as f64).powf(-0.5)).collect();
    let f = fit_slope(&ts, &ys, 0.99).unwrap();
    assert!((f.slope + 0.5).abs() < 1e-12 && f.stderr < 1e-10, "{f:?}");
    assert!((f.intercept - 3f64.ln()).abs() < 1e-10, "{f:?}");
    let rate = |exponent: f64| evaluate_rate(Some(f), exponent, 80, sweep_series(&ts, &ys), Vec::new(), 1.0);
    assert_eq!(rate(-0.5).verdict, VerdictKind::Holds, "an exact -1/2 ties and holds");
    assert_eq!(rate(-0.25).verdict, VerdictKind::Holds, "a slower claimed rate is implied");
    // Negative control: a faster rate than the series has.
    let wrong = rate(-1.0);
    assert_eq!(wrong.verdict, VerdictKind::Violated);
    assert!(wrong.slack.unwrap() < 1.0, "{:?}", wrong.slack);
    // Curvature widens the interval: a bend from slope 0 to -1 straddles -1/2.
    let bent: Vec<f64> = ts.iter().map(|t| 1.0 / (1.0 + *t as f64 / 30.0)).collect();
    let f = fit_slope(&ts, &bent, 0.99).unwrap();
    assert!(f.upper - f.lower > 0.1, "{f:?}");
    assert_eq!(evaluate_rate(Some(f), -0.5, 80, Vec::new(), Vec::new(), 1.0).verdict, VerdictKind::Inconclusive);
    assert!(fit_slope(&ts[..2], &ys[..2], 0.99).is_none());
}

#[test]
fn a_rate_without_a_finite_metric_or_its_conditions_never_holds() {
    let ts = [10, 20, 40, 80];
    for bad in [f64::NAN, f64::INFINITY] {
        let ys = [1.0, 0.7, bad, 0.35];
        assert!(fit_slope(&ts, &ys, 0.99).is_none(), "{bad}");
        let e = evaluate_rate(fit_slope(&ts, &ys, 0.99), -0.5, 80, sweep_series(&ts, &ys), Vec::new(), 1.0);
        assert_eq!(e.verdict, VerdictKind::Inconclusive, "{bad}");
        assert!(e.notes.iter().any(|n| n.starts_with(NUMERICAL_NOTE)), "{:?}", e.notes);
    }
    let ys: Vec<f64> = ts.iter().map(|t| (*t as f64).powf(-0.5)).collect();
    let e = evaluate_rate(fit_slope(&ts, &ys, 0.99), -0.5, 80, Vec::new(), failing_assumption(), 1.0);
    assert_eq!(e.verdict, VerdictKind::NotApplicable);
    assert!(e.failed.iter().any(|f| f.contains("Assumption 1")), "{:?}", e.failed);
}

// ---------------------------------------------------------------------------------------------
// Ordering

#[test]
fn an_ordering_holds_when_every_ratio_is_at_most_one_and_a_violated_one_is_violated() {
    let held = evaluate_ordering(&[0.5, 0.9, 1.0], 100, Vec::new(), 1.0, "no pairs");
    assert_eq!(held.verdict, VerdictKind::Holds);
    assert!((held.slack.unwrap() - 1.0).abs() < 1e-15);
    // Negative control: one pair out of order.
    let broken = evaluate_ordering(&[0.5, 1.2, 0.9], 100, Vec::new(), 1.0, "no pairs");
    assert_eq!(broken.verdict, VerdictKind::Violated);
    assert_eq!(broken.decisive.unwrap().estimate.mean, 1.2);
    assert_eq!(evaluate_ordering(&[pair_ratio(1.0, 0.0)], 100, Vec::new(), 1.0, "no pairs").verdict, VerdictKind::Violated);
    // A tighter bound scale catches a holding ordering.
    assert_eq!(evaluate_ordering(&[0.5, 0.9], 100, Vec::new(), 0.8, "no pairs").verdict, VerdictKind::Violated);
}

#[test]
fn an_ordering_without_pairs_conditions_or_finite_ratios_never_holds() {
    let empty = evaluate_ordering(&[], 100, Vec::new(), 1.0, "no pair of runs with different keys");
    assert_eq!(empty.verdict, VerdictKind::NotApplicable);
    assert_eq!(empty.failed, vec!["no pair of runs with different keys".to_string()]);
    assert_eq!(evaluate_ordering(&[0.5], 100, failing_assumption(), 1.0, "-").verdict, VerdictKind::NotApplicable);
    assert_eq!(pair_ratio(2.0, 4.0), 0.5);
    assert_eq!(pair_ratio(0.0, 0.0), 0.0, "two zero metrics tie");
    assert!(pair_ratio(f64::NAN, 1.0).is_nan() && pair_ratio(1.0, f64::NAN).is_nan());
    let nan = evaluate_ordering(&[0.5, pair_ratio(f64::NAN, 1.0)], 100, Vec::new(), 1.0, "-");
    assert_eq!(nan.verdict, VerdictKind::Inconclusive);
}

// ---------------------------------------------------------------------------------------------
// O(.) with a hidden constant

/// The bracket of a `T^(-1/2)` rate written with faster-decaying terms.
fn bracket(t: f64) -> f64 {
    t.powf(-0.5) + 10.0 / t + 5.0 * t.powf(-1.5)
}

#[test]
fn a_true_rate_claimed_faster_is_violated() {
    // Negative control: a T^(-1/2) metric claimed O(1/T); metric/shape = 2 sqrt(T) grows.
    for t0 in [1, 10, 100, 1000] {
        let points = sweep(&doubling(t0, 5), |t| 2.0 * t.powf(-0.5), |t| 1.0 / t);
        let e = evaluate_big_o(&points, Vec::new());
        assert_eq!(e.verdict, VerdictKind::Violated, "first horizon {t0}: {:?}", e.notes);
        assert_eq!(ratio_trend(&points).unwrap().trend, Trend::Growing);
    }
    // A growth just beyond the resolution is resolved.
    let points = sweep(&doubling(100, 5), |t| t.powf(-0.5 + 2.0 * BIG_O_SLOPE_RESOLUTION), |t| t.powf(-0.5));
    assert_eq!(evaluate_big_o(&points, Vec::new()).verdict, VerdictKind::Violated);
}

#[test]
fn the_true_rate_with_faster_decaying_bracket_terms_holds_whatever_the_first_horizon() {
    for t0 in [1, 2, 10, 100, 1000, 10_000, 100_000] {
        let points = sweep(&doubling(t0, 5), |t| t.powf(-0.5), bracket);
        let e = evaluate_big_o(&points, Vec::new());
        assert_eq!(e.verdict, VerdictKind::Holds, "first horizon {t0}: {:?}", e.notes);
        let r = ratio_trend(&points).unwrap();
        // metric/shape rises toward 1 over the whole sweep: a constant fitted at the first horizon
        // would be exceeded at every later one.
        assert!(r.ratios.windows(2).all(|w| w[1].1 > w[0].1), "{r:?}");
        let first = r.ratios[0].1;
        assert_eq!(r.cover_at, t0 << 4);
        assert!(r.cover > first && r.cover < 1.0, "{r:?}");
        // The smallest covering constant is reported as a number, not as the verdict.
        assert_eq!(e.decisive.unwrap().bound, Some(r.cover));
        assert!(e.notes.iter().any(|n| n.contains("smallest constant covering every horizon")), "{:?}", e.notes);
        // The extrapolated supremum does not fall below the true one, 1.
        let sup = r.supremum.expect("a bounded trend has an extrapolated supremum");
        assert!(sup >= 1.0 - 1e-9 || r.trend == Trend::Flat, "first horizon {t0}: {r:?}");
        assert!(sup.is_finite() && sup >= r.cover, "{r:?}");
    }
}

#[test]
fn a_bound_with_an_exact_constant_holds_and_the_verdict_ignores_the_scale() {
    let ts = doubling(100, 5);
    let points = sweep(&ts, |t| 3.0 * bracket(t), bracket);
    let e = evaluate_big_o(&points, Vec::new());
    assert_eq!(e.verdict, VerdictKind::Holds);
    let r = ratio_trend(&points).unwrap();
    assert_eq!(r.trend, Trend::Flat);
    assert!((r.cover - 3.0).abs() < 1e-12, "{r:?}");
    // A shape scaled by any factor gives the same verdict and scales the covering constant.
    for scale in [1e-3, 0.5, 7.0] {
        let scaled: Vec<(usize, f64, f64)> = points.iter().map(|&(t, m, s)| (t, m, s * scale)).collect();
        let r = ratio_trend(&scaled).unwrap();
        assert_eq!(evaluate_big_o(&scaled, Vec::new()).verdict, VerdictKind::Holds);
        assert!((r.cover - 3.0 / scale).abs() < 1e-9 * r.cover, "{r:?}");
    }
    // The ratio falling at the end of the sweep is bounded too.
    let falling = sweep(&ts, |t| 1.0 / t, |t| t.powf(-0.5));
    assert_eq!(evaluate_big_o(&falling, Vec::new()).verdict, VerdictKind::Holds);
}

#[test]
fn a_diverging_or_nan_series_never_holds() {
    let ts = doubling(100, 5);
    // A metric that grows without bound against a decaying shape.
    let growing = sweep(&ts, |t| t.powf(0.3), |t| t.powf(-0.5));
    assert_eq!(evaluate_big_o(&growing, Vec::new()).verdict, VerdictKind::Violated);
    // Against the bracket the ratio's slopes still fall (toward 0.8) over the sweep, too slowly to
    // tell a positive limit from zero: undecided, never holds.
    let growing = sweep(&ts, |t| t.powf(0.3), bracket);
    assert_eq!(evaluate_big_o(&growing, Vec::new()).verdict, VerdictKind::Inconclusive);
    // Exponential growth: the slopes of the ratio increase.
    let exploding = sweep(&ts, |t| (t / 100.0).exp(), bracket);
    assert_eq!(evaluate_big_o(&exploding, Vec::new()).verdict, VerdictKind::Violated);
    // A run that diverged to infinity is an unbounded ratio.
    let mut inf = sweep(&ts, |t| t.powf(-0.5), bracket);
    inf[4].1 = f64::INFINITY;
    let e = evaluate_big_o(&inf, Vec::new());
    assert_eq!(e.verdict, VerdictKind::Violated);
    assert!(e.notes.iter().any(|n| n.starts_with(NUMERICAL_NOTE)), "{:?}", e.notes);
    // NaN in the metric or the shape, an infinite or zero shape, a negative metric: inconclusive.
    for (k, metric, shape) in [(2, f64::NAN, 1.0), (0, 1.0, f64::NAN), (3, 1.0, f64::INFINITY), (1, 1.0, 0.0), (4, -1.0, 1.0)] {
        let mut bad = sweep(&ts, |t| t.powf(-0.5), bracket);
        bad[k].1 = metric;
        bad[k].2 = shape;
        let e = evaluate_big_o(&bad, Vec::new());
        assert_eq!(e.verdict, VerdictKind::Inconclusive, "metric {metric}, shape {shape}");
        assert!(e.notes.iter().any(|n| n.starts_with(NUMERICAL_NOTE)), "{:?}", e.notes);
    }
}

#[test]
fn a_ratio_beyond_the_range_of_f64_is_undecided_and_slopes_are_read_in_logs() {
    let ts = [10, 100, 1000];
    // metric/shape = 1e300, 1e308, 1e309: the last ratio overflows to inf, which read as a number
    // would be an infinite slope (violated) where the slopes are 8 and 1 (falling).
    let overflow: Vec<(usize, f64, f64)> = ts.iter().zip([1.0, 1e-8, 1e-9]).map(|(&t, s)| (t, 1e300, s)).collect();
    let e = evaluate_big_o(&overflow, Vec::new());
    assert_eq!(e.verdict, VerdictKind::Inconclusive, "{:?}", e.notes);
    assert!(e.failed.iter().any(|f| f.contains("outside the range of f64")), "{:?}", e.failed);
    // An underflowing ratio (1e-200/1e200) is not read as zero either.
    let underflow = [(10, 1e-200, 1e150), (100, 1e-200, 1e180), (1000, 1e-200, 1e200)];
    assert_eq!(evaluate_big_o(&underflow, Vec::new()).verdict, VerdictKind::Inconclusive);
    // Ratios 1e-300, 1 and 1e300 are in range, the quotient of the last by the first is not; each
    // slope is read in logs: 300 per decade. Control: the verdict (growing) the slopes say.
    let wide = [(10, 1e-300, 1.0), (100, 1.0, 1.0), (1000, 1e300, 1.0)];
    let r = ratio_trend(&wide).unwrap();
    assert!((r.slopes[0] - 300.0).abs() < 1e-9 && (r.slopes[1] - 300.0).abs() < 1e-9, "{r:?}");
    assert_eq!(r.trend, Trend::Growing);
}

#[test]
fn a_big_o_claim_needs_three_increasing_horizons_and_its_conditions() {
    let points = sweep(&doubling(100, 5), |t| t.powf(-0.5), bracket);
    assert_eq!(evaluate_big_o(&points[..2], Vec::new()).verdict, VerdictKind::Inconclusive);
    let mut unordered = points.clone();
    unordered.swap(1, 2);
    assert_eq!(evaluate_big_o(&unordered, Vec::new()).verdict, VerdictKind::Inconclusive);
    let e = evaluate_big_o(&points, failing_assumption());
    assert_eq!(e.verdict, VerdictKind::NotApplicable);
    assert!(e.failed.iter().any(|f| f.contains("Assumption 1")), "{:?}", e.failed);
    // Growth that slows too slowly to extrapolate is left undecided: metric/shape = sqrt(T)
    // until T ~ 1e8, then constant (the bracket's 1/T term dominates at the sweep's horizons).
    let slow = sweep(&doubling(1000, 5), |t| t.powf(-0.5), |t| t.powf(-0.5) + 1e4 / t);
    assert_eq!(evaluate_big_o(&slow, Vec::new()).verdict, VerdictKind::Inconclusive);
}
