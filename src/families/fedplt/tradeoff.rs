//! FEDPLT-TRADEOFF: the speed-error trade-off of Case 1 (001:L651-653) as a verdict over the
//! card's sweep of constant steps. With `eta in (0, 1/z)` the bound is
//! `D^t <= rho^t D^0 + eta B / z`, `rho = 1 - z eta` (001:L643-649), and L653 reads it as "a
//! smaller learning rate implies lower asymptotic error but slower descent". Two parts:
//!
//! - the ball: per step, the exact steady state `D^inf = lim_t D^t` is at most `eta B / z`
//!   (`G^2` and `rho_` measured on the run at that step), slack `(eta B / z) / D^inf`;
//! - the ordering ([`crate::kinds::ordering`]): for every pair `eta_a > eta_b` of the sweep, the
//!   larger step contracts faster, `t_half(eta_a) / t_half(eta_b) <= 1` ([`super::runs::half_life`]),
//!   and settles farther, `D^inf(eta_b) / D^inf(eta_a) <= 1`.
//!
//! The claim holds when every part holds; it is violated when any part is, and otherwise names
//! the first part that is not applicable or inconclusive.

use crate::claim::fmt_num;
use crate::kinds::exact;
use crate::kinds::ordering::{evaluate_ordering, pair_ratio};
use crate::report::markdown_table;
use crate::verdict::{decide, Evaluation, VerdictKind};

use super::runs::ResidualPoint;

/// The claim's id.
pub const ID: &str = "FEDPLT-TRADEOFF";
/// Where the paper states it.
pub const SOURCE: &str = "001:L653";

/// The ball part at one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Ball {
    /// The step.
    pub eta: f64,
    /// Its verdict.
    pub verdict: VerdictKind,
    /// `(scale eta B / z) / D^inf`, when decided.
    pub slack: Option<f64>,
    /// Why it is not decided, when it is not.
    pub why: Option<String>,
}

/// The verdict of FEDPLT-TRADEOFF on one sweep.
#[derive(Debug, Clone)]
pub struct Tradeoff {
    /// The ball at each step, in the sweep's order.
    pub balls: Vec<Ball>,
    /// A larger step halves the excess `D^t - D^inf` in no more rounds.
    pub faster: Evaluation,
    /// A larger step settles no nearer: `D^inf` does not decrease with `eta`.
    pub larger: Evaluation,
    /// The claim's verdict.
    pub verdict: VerdictKind,
    /// The part that decides a verdict other than "holds".
    pub why: Option<String>,
}

/// The ball part at one step, with the ball scaled by `scale` (1 as stated): not applicable
/// when Assumption 6 fails along the run, `z eta` is outside `(0, 1)` (Case 1's step
/// condition, 001:L639), the moment recursion has no steady state, or the ball `eta B / z` is
/// not finite (it says nothing); otherwise `D^inf <= scale eta B / z` decided exactly.
pub fn ball(p: &ResidualPoint, scale: f64) -> Ball {
    let undecided = |why: String| Ball { eta: p.eta, verdict: VerdictKind::NotApplicable, slack: None, why: Some(why) };
    if let Some((t, k, r, rho)) = p.alignment_failure {
        return undecided(format!("eta = {}: A6 fails along the run (rho_k = {} at round {t}, client {k}, sample path {r})", fmt_num(p.eta), fmt_num(rho)));
    }
    if !(p.z_eta > 0.0 && p.z_eta < 1.0) {
        return undecided(format!("eta = {}: eta in (0, 1/z) (001:L639) fails, z eta = {}", fmt_num(p.eta), fmt_num(p.z_eta)));
    }
    let Some(steady) = p.steady_distance else {
        return undecided(format!("eta = {}: the moment recursion has no steady state", fmt_num(p.eta)));
    };
    let bound = scale * p.residual_bound;
    if !bound.is_finite() {
        return undecided(format!("eta = {}: the ball eta B / z = {} is not finite", fmt_num(p.eta), fmt_num(bound)));
    }
    let verdict = decide(&exact(steady), bound);
    let slack = (steady > 0.0).then(|| bound / steady);
    let why = (verdict != VerdictKind::Holds).then(|| format!("eta = {}: D^inf = {} against eta B / z = {}", fmt_num(p.eta), fmt_num(steady), fmt_num(bound)));
    Ball { eta: p.eta, verdict, slack, why }
}

/// The ratios of the two orderings over every pair `eta_a > eta_b` of `points` (swapped when
/// `reversed`, the negative control): `(t_half(a) / t_half(b), D^inf(b) / D^inf(a))`. A missing
/// half-life or steady state is NaN (never a holding ratio).
pub fn ordering_ratios(points: &[ResidualPoint], reversed: bool) -> (Vec<f64>, Vec<f64>) {
    let half = |p: &ResidualPoint| p.half_life.map_or(f64::NAN, |t| t as f64);
    let steady = |p: &ResidualPoint| p.steady_distance.unwrap_or(f64::NAN);
    let mut pairs = Vec::new();
    for a in points {
        for b in points.iter().filter(|b| a.eta > b.eta) {
            pairs.push(if reversed { (b, a) } else { (a, b) });
        }
    }
    pairs.iter().map(|(a, b)| (pair_ratio(half(a), half(b)), pair_ratio(steady(b), steady(a)))).unzip()
}

/// FEDPLT-TRADEOFF on a sweep, the ball scaled by `scale` and the pairs swapped when `reversed`
/// (1 and `false` as stated; the others are negative controls).
pub fn evaluate(points: &[ResidualPoint], scale: f64, reversed: bool) -> Tradeoff {
    let balls: Vec<Ball> = points.iter().map(|p| ball(p, scale)).collect();
    let (faster, larger) = ordering_ratios(points, reversed);
    let horizon = points.iter().filter_map(|p| p.half_life).max().unwrap_or(0);
    let no_pairs = "the sweep has fewer than two steps";
    let faster = evaluate_ordering(&faster, horizon, Vec::new(), 1.0, no_pairs);
    let larger = evaluate_ordering(&larger, horizon, Vec::new(), 1.0, no_pairs);
    let named = |part: &str, e: &Evaluation| (e.verdict, Some(format!("{part}: worst ratio {}", e.decisive.map_or("-".into(), |c| fmt_num(c.estimate.mean)))));
    let mut parts: Vec<(VerdictKind, Option<String>)> = balls.iter().map(|b| (b.verdict, b.why.clone())).collect();
    parts.push(named("a larger eta contracts faster (t_half)", &faster));
    parts.push(named("a larger eta settles farther (D^inf)", &larger));
    let rank = |v: VerdictKind| match v {
        VerdictKind::Violated => 0,
        VerdictKind::Inconclusive => 1,
        VerdictKind::NotApplicable => 2,
        VerdictKind::Holds => 3,
    };
    let decisive = match points.iter().find_map(|p| p.client_steps) {
        // Case 1 takes one step eta for every client (001:L639; the analysis's U_k^t = -eta^t grad, 001:L108-110).
        Some((lo, hi)) => (
            VerdictKind::NotApplicable,
            Some(format!(
                "Case 1 takes one step eta for every client (001:L639, L108-110); client steps differ: min eta_k = {}, max eta_k = {} at the first step",
                fmt_num(lo),
                fmt_num(hi)
            )),
        ),
        None => parts.iter().min_by_key(|p| rank(p.0)).cloned().unwrap_or((VerdictKind::NotApplicable, Some(no_pairs.into()))),
    };
    let why = if decisive.0 == VerdictKind::Holds { None } else { decisive.1 };
    Tradeoff { balls, faster, larger, verdict: decisive.0, why }
}

/// The summary's section: the ball per step with its contraction time, the two orderings and
/// the verdict against the card's `expected`.
pub fn section(name: &str, points: &[ResidualPoint], expected: Option<&str>) -> String {
    let t = evaluate(points, 1.0, false);
    let opt = |x: Option<f64>| x.map_or("-".into(), fmt_num);
    let rows = points.iter().zip(&t.balls).map(|(p, b)| {
        let half = p.half_life.map_or("-".into(), |h| h.to_string());
        [fmt_num(p.eta), fmt_num(p.z_eta), half, opt(p.steady_distance), fmt_num(p.residual_bound), opt(b.slack), b.verdict.to_string()]
    });
    let balls = markdown_table("eta | z eta | t_half (rounds) | exact D^inf | ball eta B / z | slack | verdict", rows);
    let ordering = |part: &str, e: &Evaluation| [part.to_string(), opt(e.decisive.map(|c| c.estimate.mean)), opt(e.slack), e.verdict.to_string()];
    let orderings = markdown_table(
        "ordering over every pair eta_a > eta_b | worst ratio | slack | verdict",
        [ordering("t_half(eta_a) / t_half(eta_b) <= 1", &t.faster), ordering("D^inf(eta_b) / D^inf(eta_a) <= 1", &t.larger)],
    );
    let expected = match expected {
        Some(e) if e == t.verdict.to_string() => format!(" (expected {e})"),
        Some(e) => format!(" (UNEXPECTED: the card expects {e})"),
        None => String::new(),
    };
    let why = t.why.map_or(String::new(), |w| format!(": {w}"));
    format!("\n### {ID} ({SOURCE}) on `{name}`: {}{expected}{why}\n\n{balls}\n{orderings}", t.verdict)
}
