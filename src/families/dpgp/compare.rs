//! Comparisons of runs: the paper's statements that order scenarios rather than bound one run,
//! each an ordering claim ([`crate::kinds::ordering`]) over the scenarios of a card's
//! `[[comparisons]]` entry, which differ along one axis only ([`super::axis`], which also says
//! which claims each axis checks).
//!
//! Every pair `(a, b)` that the claim orders (`a` before `b`) must have `metric(a) <= metric(b)`:
//! the worst ratio `metric(a)/metric(b)` is compared with 1.

use crate::claim::{ConditionCheck, ConditionKind, Relation};
use crate::kinds::ordering::{evaluate_ordering, pair_ratio};
use crate::verdict::ConstantsSource;

use super::card::Comparison;
use super::check::{mean, ClaimResult, ScenarioRun};
use super::claims::{assumption_checks, corollary1_split};
use super::topology::Connectivity;

/// Theorem 1's metric averaged over the run's per-round horizon, `(1/T) sum_{t<T} (E
/// Delta_ubar^t / L_u + E Delta_v^t / L_v)`.
fn stationarity(r: &ScenarioRun) -> f64 {
    mean(&r.trajectory.stationarity(r.constants.l_u, r.constants.l_v))
}

/// The consensus error averaged over the rounds, `(1/T) sum_{t<T} (1/m) sum_i E||ubar^t -
/// z_i^t||^2`.
fn consensus(r: &ScenarioRun) -> f64 {
    let t = &r.trajectory;
    mean(&t.consensus[..t.consensus.len() - 1])
}

/// The share of Corollary 1's bound (004:L142-155, hidden constant 1) that its `1/T` and
/// `T^(-3/2)` terms make at the run's per-round horizon `T`: `(sigma_2^2/T + sigma_3^2/T^(3/2)) /
/// ((F0 - F* + sigma_1^2)/sqrt(T) + sigma_2^2/T + sigma_3^2/T^(3/2))` (Remark 3, 004:L177).
pub fn fast_share(r: &ScenarioRun) -> f64 {
    let t = r.trajectory.delta_ubar.len();
    let [slow, fast] = corollary1_split(&r.constants, &r.connectivity, r.params.k_u, r.trajectory.objective[0], t);
    fast / (slow + fast)
}

/// One ordering claim: its id, reading, whether run `a` comes before run `b`, each run's metric,
/// what the key is (for the implicit check's name), each run's key as printed, and whether it
/// reads the estimated `C`, `q` (`estimated` rows) or not (`exact`).
struct Ordering {
    id: &'static str,
    reading: &'static str,
    before: fn(&ScenarioRun, &ScenarioRun) -> bool,
    metric: fn(&ScenarioRun) -> f64,
    key: &'static str,
    shown: fn(&ScenarioRun) -> String,
    constants: ConstantsSource,
}

impl Ordering {
    fn evaluate(&self, c: &Comparison, runs: &[&ScenarioRun], rounds: usize, checks: &[ConditionCheck], bound_scale: f64) -> ClaimResult {
        let mut ratios = Vec::new();
        for a in runs {
            for b in runs {
                if (self.before)(a, b) {
                    ratios.push(pair_ratio((self.metric)(a), (self.metric)(b)));
                }
            }
        }
        let none = format!("no pair of scenarios with different keys ({})", self.key);
        let mut evaluation = evaluate_ordering(&ratios, rounds, checks.to_vec(), bound_scale, &none);
        evaluation.checks.push(ConditionCheck {
            name: format!("{}: {}", c.name, self.key),
            kind: ConditionKind::Implicit,
            given: ratios.len() as f64,
            required: 1.0,
            relation: Relation::AtLeast,
            holds: true,
            detail: runs.iter().map(|r| format!("{} {}", r.scenario, (self.shown)(r))).collect::<Vec<_>>().join(", "),
            undecided: false,
        });
        ClaimResult { claim: self.id, reading: self.reading, constants: self.constants, evaluation, label: None, expected: None }
    }
}

/// `a` strictly before `b` by a key, with keys equal up to rounding relative to themselves not
/// ordered ([`super::prec::ORDER_MARGIN`]); NaN orders nothing.
fn smaller(ka: f64, kb: f64) -> bool {
    ka < kb - super::prec::ORDER_MARGIN * ka.abs().max(kb.abs())
}

/// `C/(1-q)`, the topology's factor in Lemma 3's `AA` (infinite when `q = 1`).
pub fn tightness(c: &Connectivity) -> f64 {
    if c.q < 1.0 {
        c.c / (1.0 - c.q)
    } else {
        f64::INFINITY
    }
}

/// The noise levels `(sigma_u, sigma_v, sigma_g^2)` of a run (`sigma_g^2` infinite where
/// Assumption 4 fails).
fn noise(r: &ScenarioRun) -> [f64; 3] {
    [r.constants.sigma_u, r.constants.sigma_v, r.constants.sigma_g2.value.unwrap_or(f64::INFINITY)]
}

fn by_q(a: &ScenarioRun, b: &ScenarioRun) -> bool {
    smaller(a.connectivity.q, b.connectivity.q)
}
fn by_factor(a: &ScenarioRun, b: &ScenarioRun) -> bool {
    smaller(tightness(&a.connectivity), tightness(&b.connectivity))
}
fn degree(r: &ScenarioRun) -> f64 {
    r.neighbours.map_or(f64::NAN, |k| k as f64)
}
fn more_neighbours(a: &ScenarioRun, b: &ScenarioRun) -> bool {
    degree(a) > degree(b)
}
fn more_steps(a: &ScenarioRun, b: &ScenarioRun) -> bool {
    a.params.k_u > b.params.k_u
}
/// Componentwise no larger noise levels, and not the same.
fn less_noise(a: &ScenarioRun, b: &ScenarioRun) -> bool {
    let (x, y) = (noise(a), noise(b));
    x.iter().zip(&y).all(|(p, q)| p <= q) && x != y
}
fn larger_l_u(a: &ScenarioRun, b: &ScenarioRun) -> bool {
    a.constants.l_u > b.constants.l_u
}
fn shown_graph(r: &ScenarioRun) -> String {
    format!("q = {:.4}, C/(1-q) = {:.4}", r.connectivity.q, tightness(&r.connectivity))
}
fn shown_degree(r: &ScenarioRun) -> String {
    format!("k = {}", degree(r))
}
fn shown_steps(r: &ScenarioRun) -> String {
    format!("K_u = {}", r.params.k_u)
}
fn shown_noise(r: &ScenarioRun) -> String {
    let [u, v, g] = noise(r);
    format!("sigma_u = {u}, sigma_v = {v}, sigma_g^2 = {}", crate::claim::fmt_num(g))
}
fn shown_share(r: &ScenarioRun) -> String {
    format!("L_u = {}, share = {}", crate::claim::fmt_num(r.constants.l_u), crate::claim::fmt_num(fast_share(r)))
}

const fn ordering(
    (id, reading, key): (&'static str, &'static str, &'static str),
    before: fn(&ScenarioRun, &ScenarioRun) -> bool,
    metric: fn(&ScenarioRun) -> f64,
    shown: fn(&ScenarioRun) -> String,
    constants: ConstantsSource,
) -> Ordering {
    Ordering { id, reading, before, metric, key, shown, constants }
}

/// The orderings, in report order: Remark 2's by estimated `q` or `C/(1-q)` ("the bound will be
/// tighter as q decreases", 004:L159), Figure 3a's by the out-degree (004:L240), Remark 1's by
/// `K_u` and by the noise levels (004:L157), Remark 3's by `L_u` (004:L177).
const ORDERINGS: [Ordering; 8] = {
    use ConstantsSource::{Estimated, Exact};
    [
        ordering(("DPGP-R2", "primary", "topologies by estimated q"), by_q, consensus, shown_graph, Estimated),
        ordering(("DPGP-R2~stationarity", "stationarity", "topologies by estimated q"), by_q, stationarity, shown_graph, Estimated),
        ordering(("DPGP-R2~factor", "factor", "topologies by estimated C/(1-q)"), by_factor, consensus, shown_graph, Estimated),
        ordering(("DPGP-F3A", "primary", "more out-neighbours k first"), more_neighbours, stationarity, shown_degree, Exact),
        ordering(("DPGP-F3A~consensus", "consensus", "more out-neighbours k first"), more_neighbours, consensus, shown_degree, Exact),
        ordering(("DPGP-R1", "primary", "more local steps K_u first"), more_steps, stationarity, shown_steps, Exact),
        ordering(("DPGP-R1~variance", "variance", "smaller noise levels first"), less_noise, stationarity, shown_noise, Exact),
        ordering(("DPGP-R3", "primary", "larger L_u first"), larger_l_u, fast_share, shown_share, Estimated),
    ]
};

/// The comparison's claims ([`super::axis::Axis::claims`]) on its runs, which differ only along
/// the comparison's axis. Every claim checks Assumption 1 on every run (named with the run's
/// scenario); Remark 3's also Assumption 4, since `sigma_g^2` enters every term it compares.
pub fn run_comparison(c: &Comparison, runs: &[&ScenarioRun], bound_scale: f64) -> Vec<ClaimResult> {
    let rounds = runs.iter().map(|r| r.trajectory.consensus.len().saturating_sub(1)).max().unwrap_or(0);
    let assumption = |index: usize| -> Vec<ConditionCheck> {
        runs.iter()
            .map(|r| {
                let mut check = assumption_checks(&r.constants, &r.connectivity, rounds, r.u0).remove(index);
                check.name = format!("{}: {}", r.scenario, check.name);
                check
            })
            .collect()
    };
    let a1 = assumption(0);
    let mut a1_a4 = a1.clone();
    a1_a4.extend(assumption(1));
    let claims = c.axis.claims();
    ORDERINGS
        .iter()
        .filter(|o| claims.contains(&o.id))
        .map(|o| o.evaluate(c, runs, rounds, if o.id == "DPGP-R3" { &a1_a4 } else { &a1 }, bound_scale))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::smaller;

    #[test]
    fn keys_are_ordered_relative_to_themselves() {
        assert!(smaller(1e-12, 2e-12), "small keys that differ are ordered");
        assert!(smaller(0.0, 1e-300) && smaller(0.5, 0.9));
        // Negative controls: equal keys up to rounding, reversed keys and NaN are not ordered.
        assert!(!smaller(1e-12, 1e-12 * (1.0 + 1e-12)) && !smaller(0.9, 0.5) && !smaller(f64::NAN, 1.0) && !smaller(0.0, f64::NAN));
    }
}
