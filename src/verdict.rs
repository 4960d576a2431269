//! Verdicts: a claim's bound compared with the estimated metric, checkpoint by checkpoint. Shared
//! by every family: a family supplies the claim, its inputs and the per-round metric of each
//! replicate (one series for exact expectations).

use serde::Serialize;

use crate::claim::{BoundClaim, Comparison, ConditionCheck, ConditionKind, Horizon};
use crate::engine::{running_average, student_t_interval, Estimator, Interval};
use crate::prec;

/// The four verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    /// The upper confidence limit is below the bound at every checkpoint.
    Holds,
    /// The lower confidence limit exceeds the bound at some checkpoint.
    Violated,
    /// Neither: the interval straddles the bound somewhere.
    Inconclusive,
    /// An assumption, scope restriction or step-size condition fails.
    NotApplicable,
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VerdictKind::Holds => "holds",
            VerdictKind::Violated => "violated",
            VerdictKind::Inconclusive => "inconclusive",
            VerdictKind::NotApplicable => "not-applicable",
        })
    }
}

/// Which constants an evaluation used. Only [`ConstantsSource::Exact`] rows are verdicts on the
/// claim as stated; the others check the claim's shape with a constant taken from the run.
///
/// Serialized (reports, sweep records) and displayed as `exact`, `empirical`, `estimated`,
/// `calibrated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConstantsSource {
    /// The claim as stated, with its constants computed exactly from the instance.
    Exact,
    /// An infinite constant replaced by its supremum over the visited iterates (e.g. `b^2`).
    Empirical,
    /// A constant fitted from the run (e.g. a graph sequence's contraction `C` and `q`).
    Estimated,
    /// A constant hidden in `O(.)` fitted to the run.
    Calibrated,
}

impl ConstantsSource {
    /// The name in reports: `exact`, `empirical`, `estimated` or `calibrated`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConstantsSource::Exact => "exact",
            ConstantsSource::Empirical => "empirical",
            ConstantsSource::Estimated => "estimated",
            ConstantsSource::Calibrated => "calibrated",
        }
    }

    /// Whether the row is a verdict on the claim as stated.
    pub fn is_exact(self) -> bool {
        self == ConstantsSource::Exact
    }
}

impl std::fmt::Display for ConstantsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The bound and the estimated running average after `rounds` rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Checkpoint {
    /// `T'`.
    pub rounds: usize,
    /// Confidence interval of `E (1/T') sum_{t<T'} metric_t`.
    pub estimate: Interval,
    /// The claim's bound at `T'`, or `None` where the claim says nothing at `T'`.
    pub bound: Option<f64>,
}

/// The outcome of one claim on one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluation {
    /// The verdict.
    pub verdict: VerdictKind,
    /// `min bound / estimate` over checkpoints (> 1 means room to spare); `None` when not applicable.
    pub slack: Option<f64>,
    /// The checkpoint that decided the verdict: the smallest slack when it holds, the largest
    /// excess when violated, the first straddling one when inconclusive.
    pub decisive: Option<Checkpoint>,
    /// Every check at the horizon `T`.
    pub checks: Vec<ConditionCheck>,
    /// The binding checks that fail (why the claim is not applicable).
    pub failed: Vec<String>,
    /// Implicit conditions that fail (reported, not binding).
    pub notes: Vec<String>,
    /// The estimator.
    pub estimator: Estimator,
    /// Checkpoints kept for reports and figures (a log-spaced subset of all that were compared).
    pub series: Vec<Checkpoint>,
    /// When the claim is not applicable only because step-size conditions fail: the verdict and
    /// slack of the same comparison made anyway (how far a step can exceed its condition before
    /// the bound breaks, read by the adversarial search's step room); `None` otherwise. Not a
    /// verdict on the claim, and not written into reports.
    #[serde(skip)]
    pub beyond_steps: Option<(VerdictKind, Option<f64>)>,
}

/// The binding checks that fail (each as text) and the implicit ones that fail (as notes).
pub fn failed_and_notes(checks: &[ConditionCheck]) -> (Vec<String>, Vec<String>) {
    let failed = checks.iter().filter(|c| !c.holds && c.is_binding()).map(|c| c.to_string()).collect();
    let notes = checks.iter().filter(|c| !c.holds && !c.is_binding()).map(|c| format!("implicit condition fails: {c}")).collect();
    (failed, notes)
}

/// The verdict of a claim whose binding checks fail: not applicable, unless every failing
/// binding check is undecided in floating point ([`ConditionCheck::undecided`]): then
/// inconclusive, since the instance may meet the condition or not, and no comparison is made.
/// With no failing binding check it is not applicable (the caller has another reason).
pub fn inapplicable(checks: &[ConditionCheck]) -> VerdictKind {
    let mut failing = checks.iter().filter(|c| !c.holds && c.is_binding()).peekable();
    if failing.peek().is_some() && failing.all(|c| c.undecided) {
        VerdictKind::Inconclusive
    } else {
        VerdictKind::NotApplicable
    }
}

/// The evaluation of a claim whose binding checks fail: no comparison, no series.
fn not_applicable(
    checks: Vec<ConditionCheck>,
    failed: Vec<String>,
    notes: Vec<String>,
    estimator: Estimator,
    beyond_steps: Option<(VerdictKind, Option<f64>)>,
) -> Evaluation {
    Evaluation { verdict: inapplicable(&checks), slack: None, decisive: None, checks, failed, notes, estimator, series: Vec::new(), beyond_steps }
}

/// Whether the binding checks that fail are all step-size conditions (at least one fails).
fn only_steps_fail(checks: &[ConditionCheck]) -> bool {
    let mut failing = checks.iter().filter(|c| !c.holds && c.is_binding()).peekable();
    failing.peek().is_some() && failing.all(|c| c.kind == ConditionKind::StepSize)
}

/// Compares one estimate with one bound.
///
/// Exact estimates (zero-width intervals) are holds when at most the bound or within
/// [`prec::RELATIVE_TIE`] of it (the rounding an exact run accumulates; an interval of pure
/// rounding around the bound ties the same way), violated above.
pub fn decide(estimate: &Interval, bound: f64) -> VerdictKind {
    if bound.is_nan() || estimate.lower.is_nan() || estimate.upper.is_nan() {
        return VerdictKind::Inconclusive;
    }
    // An infinite metric (a diverged run) is compared as it is: the tolerance of a tie would
    // otherwise call infinity equal to anything.
    if estimate.lower.is_infinite() || estimate.upper.is_infinite() || bound.is_infinite() {
        return if estimate.upper < bound {
            VerdictKind::Holds
        } else if estimate.lower > bound {
            VerdictKind::Violated
        } else {
            VerdictKind::Inconclusive
        };
    }
    let tie = prec::approx_eq(estimate.upper, bound, prec::RELATIVE_TIE);
    // An identity that holds with equality (e.g. B^t = n G_u^t + n b^2 on decoupled instances)
    // gives an interval of pure rounding around the bound, an exact estimate included: a tie,
    // which holds. An exact value is computed accurate relative to itself (no cancellation
    // against larger terms: an identity whose side is a difference of near-equal vectors comes
    // out 2.3e-10 above its bound, 1.8e-15 evaluated without the subtraction), so the tie is
    // the rounding of a few operations, not a tolerance that would hide a term of 1e-10.
    let rounding = prec::RELATIVE_TIE * bound.abs().max(f64::MIN_POSITIVE);
    let rounding_tie = estimate.upper <= bound + rounding && estimate.lower >= bound - rounding;
    if estimate.upper < bound || (tie && estimate.lower == estimate.upper) || rounding_tie {
        VerdictKind::Holds
    } else if estimate.lower > bound {
        VerdictKind::Violated
    } else {
        VerdictKind::Inconclusive
    }
}

/// Indices `T'` (1-based) kept for reports: all up to 30, then about 120 log-spaced, and `T`.
pub fn report_checkpoints(rounds: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=rounds.min(30)).collect();
    if rounds > 30 {
        let steps = 120;
        let (a, b) = ((30f64).ln(), (rounds as f64).ln());
        for s in 1..=steps {
            let t = (a + (b - a) * s as f64 / steps as f64).exp().round() as usize;
            if t > *v.last().unwrap_or(&0) && t <= rounds {
                v.push(t);
            }
        }
        if *v.last().unwrap_or(&0) != rounds {
            v.push(rounds);
        }
    }
    v
}

/// Evaluates `claim` given each replicate's per-round metric values (`metric[r][t]`, `t < T`):
/// the metric's running average `(1/T') sum_{t<T'} metric_t` (or, for a per-round claim,
/// `metric_{T'-1}`) against the bound at `T'`, at every `T'` the claim speaks of.
///
/// `bound_scale` multiplies the bound (1 for the claim as printed; below 1 only in negative
/// controls, which must then come out violated).
pub fn evaluate<C: BoundClaim + ?Sized>(
    claim: &C,
    inputs: &C::Inputs,
    metric: &[Vec<f64>],
    estimator: Estimator,
    confidence: f64,
    bound_scale: f64,
) -> Evaluation {
    let checks = claim.checks(inputs);
    let (failed, notes) = failed_and_notes(&checks);
    let compare = |waive_steps: bool| compare_bound(claim, inputs, metric, confidence, bound_scale, waive_steps);
    if !failed.is_empty() {
        let beyond_steps = only_steps_fail(&checks).then(|| compare(true)).map(|(verdict, slack, ..)| (verdict, slack));
        return not_applicable(checks, failed, notes, estimator, beyond_steps);
    }
    let (verdict, slack, decisive, series, unusable) = compare(false);
    if let Some(reason) = unusable {
        return Evaluation {
            verdict: VerdictKind::NotApplicable,
            slack: None,
            decisive: None,
            checks,
            failed: vec![reason],
            notes,
            estimator,
            series,
            beyond_steps: None,
        };
    }
    compared(verdict, slack, decisive, checks, notes, estimator, series)
}

/// The evaluation of a comparison that ran (every condition held): its notes gain the numerical
/// note of the deciding checkpoint, and [`NOTHING_COMPARED`] when there was none.
fn compared(
    verdict: VerdictKind,
    slack: Option<f64>,
    decisive: Option<Checkpoint>,
    checks: Vec<ConditionCheck>,
    mut notes: Vec<String>,
    estimator: Estimator,
    series: Vec<Checkpoint>,
) -> Evaluation {
    notes.extend(numerical_note(decisive.as_ref()));
    if decisive.is_none() && verdict == VerdictKind::Inconclusive {
        notes.push(NOTHING_COMPARED.to_string());
    }
    Evaluation { verdict, slack, decisive, checks, failed: Vec::new(), notes, estimator, series, beyond_steps: None }
}

/// What [`evaluate`]'s comparison gives: verdict, slack, decisive checkpoint, the checkpoints kept
/// for reports, and why the bound cannot decide (then the verdict is not applicable).
type Compared = (VerdictKind, Option<f64>, Option<Checkpoint>, Vec<Checkpoint>, Option<String>);

/// The comparison of [`evaluate`] at every `T'` the claim speaks of; with `waive_steps`, a
/// prefix `T'` whose only failing binding checks are step-size conditions counts as applicable.
fn compare_bound<C: BoundClaim + ?Sized>(claim: &C, inputs: &C::Inputs, metric: &[Vec<f64>], confidence: f64, bound_scale: f64, waive_steps: bool) -> Compared {
    let rounds = inputs.horizon();
    let averages: Vec<Vec<f64>> = match claim.comparison() {
        Comparison::RunningAverage => metric.iter().map(|m| running_average(&m[..rounds])).collect(),
        Comparison::PerRound => metric.iter().map(|m| m[..rounds].to_vec()).collect(),
    };
    let interval_at = |tp: usize| {
        let samples: Vec<f64> = averages.iter().map(|a| a[tp - 1]).collect();
        student_t_interval(&samples, confidence)
    };
    let admitted = |c: &ConditionCheck| c.holds || !c.is_binding() || (waive_steps && c.kind == ConditionKind::StepSize);
    let applicable_at = |tp: usize| -> Option<f64> {
        let x = inputs.at_horizon(tp);
        if tp == rounds || (claim.every_prefix() && claim.checks(&x).iter().all(admitted)) {
            Some(claim.bound(&x) * bound_scale)
        } else {
            None
        }
    };
    let series: Vec<Checkpoint> =
        report_checkpoints(rounds).into_iter().map(|tp| Checkpoint { rounds: tp, estimate: interval_at(tp), bound: applicable_at(tp) }).collect();
    let bounds: Vec<(usize, f64)> = compared_horizons(claim, rounds).into_iter().filter_map(|tp| applicable_at(tp).map(|b| (tp, b))).collect();
    if let Some(reason) = unusable_bound(&bounds) {
        return (VerdictKind::NotApplicable, None, None, series, Some(reason));
    }
    let points = bounds.into_iter().map(|(tp, bound)| Checkpoint { rounds: tp, estimate: interval_at(tp), bound: Some(bound) });
    let (verdict, slack, decisive) = aggregate(points);
    (verdict, slack, decisive, series, None)
}

/// Prefix of the reason a bound cannot be compared with a run (it is negative or infinite).
pub const UNUSABLE_BOUND: &str = "the bound cannot decide";

/// Why the bounds `(T', bound)` of a claim (upper bounds on a non-negative quantity) cannot be
/// compared with a run, or `None` when they can: a bound below 0 (its constants are outside their
/// ranges: no run can meet it, a verdict would judge the inputs, not the claim), or `+inf` at every
/// `T'` compared (a claim that cannot fail is not a check). A NaN bound is left to the
/// comparison, which reports it as a numerical failure at its checkpoint; a bound that is `+inf`
/// at some `T'` only says nothing there and the finite ones decide.
pub fn unusable_bound(bounds: &[(usize, f64)]) -> Option<String> {
    if let Some((tp, b)) = bounds.iter().find(|(_, b)| *b < 0.0) {
        return Some(format!("{UNUSABLE_BOUND}: it is {b} < 0 at T'={tp} (a bound on a non-negative quantity; its constants are outside their ranges)"));
    }
    let infinite = |b: f64| b == f64::INFINITY;
    match bounds.first() {
        Some((tp, b)) if bounds.iter().all(|(_, b)| infinite(*b)) => {
            Some(format!("{UNUSABLE_BOUND}: it is {b} at every T' compared (from T'={tp}), so no run can exceed it; a claim that cannot fail is not a check"))
        }
        _ => None,
    }
}

/// The horizons `T'` at which a claim's bound is compared with a run of `rounds` rounds: every
/// prefix when the claim holds for each (conditions independent of `T`), else `T` alone.
pub fn compared_horizons<C: BoundClaim + ?Sized>(claim: &C, rounds: usize) -> Vec<usize> {
    if claim.every_prefix() {
        (1..=rounds).collect()
    } else {
        vec![rounds]
    }
}

/// Prefix of the notes that report a numerical failure (a metric or bound that is not finite).
pub const NUMERICAL_NOTE: &str = "numerical failure";

/// The note for a deciding checkpoint whose numbers are not finite: where the run diverged
/// (an infinite metric) or stopped being comparable (a NaN).
pub fn numerical_note(decisive: Option<&Checkpoint>) -> Option<String> {
    let p = decisive?;
    let e = p.estimate;
    let values = [("the estimate", e.mean), ("its lower limit", e.lower), ("its upper limit", e.upper), ("the bound", p.bound.unwrap_or(0.0))];
    let bad: Vec<String> = values.iter().filter(|(_, x)| !x.is_finite()).map(|(what, x)| format!("{what} is {x}")).collect();
    if bad.is_empty() {
        return None;
    }
    let why = if e.mean.is_nan() || e.lower.is_nan() || e.upper.is_nan() {
        "the metric overflowed: the run diverged"
    } else if e.mean.is_infinite() {
        "the run diverged"
    } else if p.bound.is_some_and(|b| !b.is_finite()) {
        "the bound cannot be evaluated"
    } else {
        // A finite mean and bound with an infinite limit: the replicates' spread overflowed.
        "the estimate's interval overflowed: the replicates spread beyond double precision"
    };
    Some(format!("{NUMERICAL_NOTE} at T'={}: {} ({why})", p.rounds, bad.join(", ")))
}

/// Combines checkpoint decisions: violated if any is (reporting the largest excess), else
/// inconclusive if any straddles (reporting the first), else holds (reporting the smallest slack).
/// No checkpoint at all is inconclusive: a comparison of nothing shows nothing, and never holds.
fn aggregate(points: impl Iterator<Item = Checkpoint>) -> (VerdictKind, Option<f64>, Option<Checkpoint>) {
    let mut min_slack = f64::INFINITY;
    let mut holds_point = None;
    let mut worst_violation: Option<(f64, Checkpoint)> = None;
    let mut first_straddle = None;
    let mut first_nan = None;
    let mut compared = 0usize;
    for point in points {
        compared += 1;
        let bound = point.bound.unwrap_or(f64::NAN);
        let estimate = point.estimate;
        // A NaN (an overflow of a diverging run, 0/0 in a bound) decides nothing: the run stops
        // being comparable there, and the verdict says so at that checkpoint.
        if [estimate.mean, estimate.lower, estimate.upper, bound].iter().any(|x| x.is_nan()) {
            if first_nan.is_none() {
                first_nan = Some(point);
            }
            continue;
        }
        match decide(&estimate, bound) {
            VerdictKind::Violated => {
                let excess = estimate.lower / bound;
                if worst_violation.as_ref().is_none_or(|(e, _)| excess > *e) {
                    worst_violation = Some((excess, point));
                }
            }
            VerdictKind::Inconclusive if first_straddle.is_none() => first_straddle = Some(point),
            _ => {}
        }
        let slack = bound / estimate.mean;
        if slack < min_slack {
            min_slack = slack;
            holds_point = Some(point);
        }
    }
    let slack = Some(min_slack).filter(|s| s.is_finite());
    if let Some((_, p)) = worst_violation {
        (VerdictKind::Violated, slack, Some(p))
    } else if let Some(p) = first_nan {
        (VerdictKind::Inconclusive, None, Some(p))
    } else if let Some(p) = first_straddle {
        (VerdictKind::Inconclusive, slack, Some(p))
    } else if compared == 0 {
        (VerdictKind::Inconclusive, None, None)
    } else {
        (VerdictKind::Holds, slack, holds_point)
    }
}

/// The note of a comparison that compared nothing (no checkpoint: the verdict is inconclusive).
pub const NOTHING_COMPARED: &str = "nothing compared: no round or horizon of the run gives both sides of the claim, so it is not decided";

/// Evaluates a per-round inequality `E lhs_t <= E rhs_t` (a lemma of a proof) from each
/// replicate's sides: `sides_at(t)` gives `(lhs, rhs)` per replicate at round `t < rounds`, or
/// `None` where the inequality says nothing (a recursion at `t = 0`).
///
/// At each round the interval is that of `lhs - rhs` (Bonferroni-corrected over the rounds
/// compared), placed around the mean of `lhs` with its own half-widths, `[lhs + (d_lower -
/// d_mean), lhs + (d_upper - d_mean)]`: the checkpoint's estimate lies inside its interval (an
/// exact one, of width 0, is the estimate itself) and is below its bound when the difference is
/// below zero, up to the rounding of the two means (a tie, see [`decide`]). Where the
/// difference's interval is not finite (a side overflowed) it is shifted by the mean of `rhs`
/// instead, `[rhs + d_lower, rhs + d_upper]`: an infinite `lhs` is violated, an infinite `rhs`
/// undecided. `bound_scale` multiplies `rhs` (negative controls).
pub fn evaluate_inequality(
    checks: Vec<ConditionCheck>,
    rounds: usize,
    sides_at: &dyn Fn(usize) -> Option<Vec<(f64, f64)>>,
    estimator: Estimator,
    confidence: f64,
    bound_scale: f64,
) -> Evaluation {
    let (failed, notes) = failed_and_notes(&checks);
    if !failed.is_empty() {
        let beyond_steps =
            only_steps_fail(&checks).then(|| compare_sides(rounds, sides_at, confidence, bound_scale)).map(|(verdict, slack, ..)| (verdict, slack));
        return not_applicable(checks, failed, notes, estimator, beyond_steps);
    }
    let (verdict, slack, decisive, series) = compare_sides(rounds, sides_at, confidence, bound_scale);
    compared(verdict, slack, decisive, checks, notes, estimator, series)
}

/// The comparison of [`evaluate_inequality`]: verdict, slack, decisive checkpoint, checkpoints kept.
fn compare_sides(
    rounds: usize,
    sides_at: &dyn Fn(usize) -> Option<Vec<(f64, f64)>>,
    confidence: f64,
    bound_scale: f64,
) -> (VerdictKind, Option<f64>, Option<Checkpoint>, Vec<Checkpoint>) {
    let compared: Vec<usize> = (0..rounds).filter(|t| sides_at(*t).is_some()).collect();
    let per_round_confidence = 1.0 - (1.0 - confidence) / compared.len().max(1) as f64;
    let point_at = |t: usize| -> Option<Checkpoint> {
        let sides = sides_at(t)?;
        let r = sides.len() as f64;
        let lhs = sides.iter().map(|s| s.0).sum::<f64>() / r;
        let rhs = bound_scale * sides.iter().map(|s| s.1).sum::<f64>() / r;
        let diffs: Vec<f64> = sides.iter().map(|(a, b)| a - bound_scale * b).collect();
        let d = student_t_interval(&diffs, per_round_confidence);
        // A side that overflowed keeps the shifted form, whose arithmetic with infinities is the
        // rule of a diverged run: `lhs = inf` against a finite `rhs` is violated, `rhs = inf`
        // gives NaN (undecided, never a "holds" against an infinite bound).
        let finite = [d.lower, d.mean, d.upper].iter().all(|x| x.is_finite());
        let estimate = if finite {
            Interval { mean: lhs, lower: lhs + (d.lower - d.mean), upper: lhs + (d.upper - d.mean) }
        } else {
            Interval { mean: lhs, lower: rhs + d.lower, upper: rhs + d.upper }
        };
        Some(Checkpoint { rounds: t, estimate, bound: Some(rhs) })
    };
    let series = report_checkpoints(rounds).into_iter().filter_map(|t| point_at(t - 1)).collect();
    let (verdict, slack, decisive) = aggregate(compared.into_iter().filter_map(point_at));
    (verdict, slack, decisive, series)
}

#[cfg(test)]
mod tests {
    /// A claim whose only failing check is undecided in floating point is inconclusive; beside a
    /// decided failure it is not applicable; with nothing failing the caller's reason stands.
    #[test]
    fn an_undecided_condition_alone_makes_a_claim_inconclusive() {
        use crate::claim::{ConditionCheck, ConditionKind, Relation};
        let check = |lo: f64, hi: f64| {
            ConditionCheck::compare_bracketed("x <= 1", ConditionKind::StepSize, ((lo + hi) / 2.0, (lo, hi)), Relation::AtMost, (1.0, (1.0, 1.0)))
        };
        let (undecided, inside, outside) = (check(0.9, 1.1), check(0.8, 0.9), check(1.1, 1.2));
        assert_eq!(inapplicable(&[inside.clone(), undecided.clone()]), VerdictKind::Inconclusive);
        assert_eq!(inapplicable(&[undecided, outside]), VerdictKind::NotApplicable);
        assert_eq!(inapplicable(&[inside]), VerdictKind::NotApplicable);
    }

    use super::*;

    fn iv(lower: f64, upper: f64) -> Interval {
        Interval { mean: 0.5 * (lower + upper), lower, upper }
    }

    #[test]
    fn decide_covers_all_three_outcomes() {
        assert_eq!(decide(&iv(1.0, 2.0), 3.0), VerdictKind::Holds);
        assert_eq!(decide(&iv(1.0, 2.0), 0.5), VerdictKind::Violated);
        assert_eq!(decide(&iv(1.0, 2.0), 1.5), VerdictKind::Inconclusive);
        assert_eq!(decide(&iv(2.0, 2.0), 2.0), VerdictKind::Holds, "exact tie holds");
        assert_eq!(decide(&iv(2.0, 2.0), 1.999), VerdictKind::Violated);
        assert_eq!(decide(&iv(2.0 - 1e-13, 2.0 + 1e-13), 2.0), VerdictKind::Holds, "rounding around an equality");
        assert_eq!(decide(&iv(1.9, 2.1), 2.0), VerdictKind::Inconclusive, "a real straddle stays inconclusive");
        assert_eq!(decide(&iv(f64::INFINITY, f64::INFINITY), 2.0), VerdictKind::Violated, "a diverged metric is above any finite bound");
        assert_eq!(decide(&iv(1.0, 1.0), f64::INFINITY), VerdictKind::Holds, "an infinite bound holds");
        assert_eq!(decide(&iv(f64::INFINITY, f64::INFINITY), f64::INFINITY), VerdictKind::Inconclusive);
        assert_eq!(decide(&iv(f64::NAN, f64::NAN), 2.0), VerdictKind::Inconclusive);
    }

    fn point(rounds: usize, estimate: f64, bound: f64) -> Checkpoint {
        Checkpoint { rounds, estimate: Interval { mean: estimate, lower: estimate, upper: estimate }, bound: Some(bound) }
    }

    #[test]
    fn a_diverging_metric_is_violated_where_it_diverges_and_says_so() {
        let points = vec![point(1, 0.5, 1.0), point(2, f64::INFINITY, 1.0), point(3, f64::NAN, 1.0)];
        let (verdict, _, decisive) = aggregate(points.into_iter());
        assert_eq!(verdict, VerdictKind::Violated);
        assert_eq!(decisive.map(|p| p.rounds), Some(2));
        let note = numerical_note(decisive.as_ref()).expect("a note");
        assert!(note.starts_with(NUMERICAL_NOTE) && note.contains("T'=2") && note.contains("diverged"), "{note}");
    }

    #[test]
    fn a_bound_that_is_negative_or_infinite_everywhere_cannot_decide() {
        let inf = f64::INFINITY;
        assert!(unusable_bound(&[(1, inf), (2, inf)]).is_some_and(|r| r.starts_with(UNUSABLE_BOUND) && r.contains("inf at every T'")));
        assert!(unusable_bound(&[(1, 1.0), (2, -2.5)]).is_some_and(|r| r.contains("-2.5 < 0 at T'=2")));
        assert!(unusable_bound(&[(1, -inf)]).is_some());
        // Negative controls: finite non-negative bounds, a bound infinite at some T' only (the
        // finite ones decide), and a NaN (a numerical failure of the comparison) pass through.
        assert_eq!(unusable_bound(&[(1, 0.0), (2, 3.0)]), None);
        assert_eq!(unusable_bound(&[(1, inf), (2, 3.0)]), None);
        assert_eq!(unusable_bound(&[(1, f64::NAN)]), None);
    }

    #[test]
    fn a_nan_metric_is_inconclusive_at_its_first_checkpoint_never_holds() {
        let points = vec![point(1, 0.5, 1.0), point(2, f64::NAN, 1.0), point(3, 0.1, 1.0)];
        let (verdict, slack, decisive) = aggregate(points.into_iter());
        assert_eq!(verdict, VerdictKind::Inconclusive);
        assert_eq!(slack, None);
        assert_eq!(decisive.map(|p| p.rounds), Some(2));
        assert!(numerical_note(decisive.as_ref()).is_some_and(|n| n.contains("NaN")));
        // Negative control: finite numbers give no note and the usual verdict.
        let (verdict, _, decisive) = aggregate(vec![point(1, 0.5, 1.0)].into_iter());
        assert_eq!(verdict, VerdictKind::Holds);
        assert_eq!(numerical_note(decisive.as_ref()), None);
    }

    #[test]
    fn the_numerical_note_blames_what_is_not_finite() {
        let inf = f64::INFINITY;
        let at = |mean: f64, lower: f64, upper: f64, bound: f64| Checkpoint { rounds: 7, estimate: Interval { mean, lower, upper }, bound: Some(bound) };
        let note = |p: Checkpoint| numerical_note(Some(&p)).expect("a note");
        // An interval that overflowed around a finite mean is not the bound's fault (it had read
        // "the bound cannot be evaluated" beside a bound of 1.5e298).
        assert!(note(at(0.5, -inf, inf, 1.5e298)).contains("the estimate's interval overflowed"));
        // Controls: an infinite bound, an infinite mean.
        assert!(note(at(0.5, 0.4, 0.6, inf)).contains("the bound cannot be evaluated"));
        assert!(note(at(inf, inf, inf, 1.0)).contains("(the run diverged)"));
    }

    #[test]
    fn nothing_compared_is_inconclusive_never_holds() {
        let (verdict, slack, decisive) = aggregate(std::iter::empty());
        assert_eq!((verdict, slack, decisive.is_none()), (VerdictKind::Inconclusive, None, true));
        let nothing = |_: usize| -> Option<Vec<(f64, f64)>> { None };
        let e = evaluate_inequality(Vec::new(), 5, &nothing, Estimator::Exact, 0.99, 1.0);
        assert_eq!(e.verdict, VerdictKind::Inconclusive);
        assert!(e.notes.iter().any(|n| n.starts_with("nothing compared")), "{:?}", e.notes);
        // Negative control: one round compared decides.
        let one = |t: usize| (t == 2).then(|| vec![(0.5, 1.0)]);
        let e = evaluate_inequality(Vec::new(), 5, &one, Estimator::Exact, 0.99, 1.0);
        assert_eq!(e.verdict, VerdictKind::Holds);
        assert!(e.notes.is_empty(), "{:?}", e.notes);
    }

    /// A lemma's estimate lies inside its own interval: exact (one replicate) the interval is
    /// the estimate itself, with replicates it spans it. It had been `rhs + (lhs - rhs)`, which
    /// rounds away from `lhs` (2.542301210811698 + (0.13436424411240122 - 2.542301210811698) is
    /// 0.1343642441124011): 437 rows of the main
    /// job's report showed an estimate outside its interval.
    #[test]
    fn an_inequality_estimate_lies_inside_its_interval() {
        let (lhs, rhs) = (0.13436424411240122, 2.542301210811698);
        assert_ne!(rhs + (lhs - rhs), lhs, "the rounding the test relies on");
        let exact = |_: usize| Some(vec![(lhs, rhs)]);
        let e = evaluate_inequality(Vec::new(), 3, &exact, Estimator::Exact, 0.99, 1.0);
        let d = e.decisive.expect("a decisive checkpoint").estimate;
        assert_eq!((e.verdict, d.lower, d.mean, d.upper), (VerdictKind::Holds, lhs, lhs, lhs));
        let replicates = |_: usize| Some(vec![(0.1, 0.3), (0.7, 0.3), (0.4, 0.9)]);
        let e = evaluate_inequality(Vec::new(), 3, &replicates, Estimator::Exact, 0.99, 1.0);
        let d = e.decisive.expect("a decisive checkpoint").estimate;
        assert!(d.lower < d.mean && d.mean < d.upper, "{d:?}");
        // A side that overflowed: an infinite lhs against a finite bound is violated (a diverged
        // run), an infinite rhs decides nothing (it is never a "holds").
        let diverged = |_: usize| Some(vec![(f64::INFINITY, 1.0)]);
        assert_eq!(evaluate_inequality(Vec::new(), 3, &diverged, Estimator::Exact, 0.99, 1.0).verdict, VerdictKind::Violated);
        let overflowed_bound = |_: usize| Some(vec![(1.0, f64::INFINITY)]);
        assert_eq!(evaluate_inequality(Vec::new(), 3, &overflowed_bound, Estimator::Exact, 0.99, 1.0).verdict, VerdictKind::Inconclusive);
        // Control: a difference above zero at every replicate is violated.
        let above = |_: usize| Some(vec![(1.1, 0.3), (1.11, 0.3), (1.12, 0.3)]);
        assert_eq!(evaluate_inequality(Vec::new(), 3, &above, Estimator::Exact, 0.99, 1.0).verdict, VerdictKind::Violated);
    }

    /// An exact estimate is tied with its bound relative to the two values, at every scale: near
    /// zero an observed 1e-13 against a bound of 1e-20 is violated, not a tie.
    #[test]
    fn exact_ties_are_relative_near_zero() {
        assert_eq!(decide(&iv(1e-13, 1e-13), 1e-20), VerdictKind::Violated);
        assert_eq!(decide(&iv(1e-13, 1e-13), 0.0), VerdictKind::Violated);
        assert_eq!(decide(&iv(1e-20 * (1.0 + 1e-14), 1e-20 * (1.0 + 1e-14)), 1e-20), VerdictKind::Holds);
        assert_eq!(decide(&iv(0.0, 0.0), 0.0), VerdictKind::Holds);
        // Negative control: at unit scale the tie is as before.
        assert_eq!(decide(&iv(1.0 + 1e-13, 1.0 + 1e-13), 1.0), VerdictKind::Holds);
        assert_eq!(decide(&iv(1.0 + 1e-8, 1.0 + 1e-8), 1.0), VerdictKind::Violated);
        // The tie is RELATIVE_TIE: an excess of 1e-10 (a term that small, or cancellation) is
        // violated, as the search decides it too.
        assert_eq!(decide(&iv(1.0 + 1e-10, 1.0 + 1e-10), 1.0), VerdictKind::Violated);
        assert_eq!(decide(&iv(1.0 - 1e-10, 1.0 + 1e-10), 1.0), VerdictKind::Inconclusive);
    }

    #[test]
    fn constants_sources_serialize_and_display_as_their_report_names() {
        let all = [ConstantsSource::Exact, ConstantsSource::Empirical, ConstantsSource::Estimated, ConstantsSource::Calibrated];
        for (c, name) in all.iter().zip(["exact", "empirical", "estimated", "calibrated"]) {
            assert_eq!(c.to_string(), name);
            assert_eq!(serde_json::to_string(c).unwrap(), format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<ConstantsSource>(&format!("\"{name}\"")).unwrap(), *c);
        }
        assert!(ConstantsSource::Exact.is_exact() && !ConstantsSource::Empirical.is_exact());
        // Negative control: a name that is not a source is refused, never read as another one.
        assert!(serde_json::from_str::<ConstantsSource>("\"Exact\"").is_err());
        assert!(serde_json::from_str::<ConstantsSource>("\"fitted\"").is_err());
    }

    #[test]
    fn report_checkpoints_are_increasing_and_end_at_t() {
        for t in [1, 5, 30, 31, 400, 1000] {
            let v = report_checkpoints(t);
            assert_eq!(*v.last().unwrap(), t);
            assert!(v.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
