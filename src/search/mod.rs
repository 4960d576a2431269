//! The adversarial search driver every family shares: maximize an objective (a claim's
//! `observed / bound`) over the unit cube of a family's instance coordinates.
//!
//! Half the budget goes to seeded random candidates (evaluated in parallel and reduced in order,
//! so the result does not depend on the thread count); the rest to coordinate refinement from the
//! best ones, with steps 1/4, 1/8, ..., 1/64 of each coordinate's range; a finished refinement
//! restarts from the next-best random candidate. A family decodes a candidate into one of its
//! scenarios and says which coordinates can matter ("live").

pub mod line;
pub mod report;
pub mod run;
pub mod space;

pub use space::{CardSearch, ClaimSearch, Room, SearchSettings, SearchSpace, StepRoom, Target};

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use crate::verdict::VerdictKind;

/// A candidate: unit-cube coordinates and a seed for whatever the family draws at random
/// (rotations, spectra, data).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// Coordinates in `[0, 1]`.
    pub x: Vec<f64>,
    /// Seed of the family's instance recipe.
    pub instance_seed: u64,
}

/// One objective evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct Evaluated {
    /// Index in the search.
    pub eval: usize,
    /// `random` or `refine`.
    pub phase: &'static str,
    /// The objective (`observed / bound`, largest over compared checkpoints); `None` when the
    /// candidate is not applicable.
    pub ratio: Option<f64>,
    /// Why the candidate was not applicable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a search found.
#[derive(Debug, Clone)]
pub struct Maximum {
    /// Every evaluation, in order.
    pub trace: Vec<Evaluated>,
    /// The best applicable candidate and its objective.
    pub best: Option<(f64, Candidate)>,
}

/// An objective: `(value, None)` for an applicable candidate, `(None, Some(reason))` otherwise.
pub type Objective<'a> = dyn Fn(&Candidate) -> (Option<f64>, Option<String>) + Sync + 'a;

fn random_candidate(rng: &mut ChaCha8Rng, dimensions: usize) -> Candidate {
    let x = (0..dimensions).map(|_| rng.gen::<f64>()).collect();
    Candidate { x, instance_seed: rng.gen::<u32>() as u64 }
}

/// Objective evaluations per claim of a search when the command line gives none (`--budget`).
pub const DEFAULT_BUDGET: usize = 200;

/// A candidate's exact bits: its coordinates and its instance seed.
fn key(c: &Candidate) -> Vec<u64> {
    c.x.iter().map(|x| x.to_bits()).chain([c.instance_seed]).collect()
}

/// Maximizes `objective` over `[0, 1]^dimensions` with `budget` evaluations from `seed`,
/// refining only the `live` coordinates. `objective` must be a function of the candidate (a
/// seeded run): a candidate evaluated before is traced again with its first value, not rerun.
pub fn maximize(dimensions: usize, live: &[usize], budget: usize, seed: u64, objective: &Objective<'_>) -> Maximum {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let budget = budget.max(1);
    let randoms: Vec<Candidate> = (0..budget.div_ceil(2)).map(|_| random_candidate(&mut rng, dimensions)).collect();
    let scored: Vec<(Option<f64>, Option<String>)> = randoms.par_iter().map(objective).collect();
    // The objective is a function of the candidate: a point the refinement comes back to (a step
    // back to where it came from, a point another restart passed) is read from here.
    let mut seen: HashMap<Vec<u64>, (Option<f64>, Option<String>)> = randoms.iter().map(key).zip(scored.iter().cloned()).collect();
    let mut trace: Vec<Evaluated> =
        scored.iter().enumerate().map(|(i, (r, why))| Evaluated { eval: i, phase: "random", ratio: *r, reason: why.clone() }).collect();
    let mut order: Vec<usize> = (0..randoms.len()).filter(|i| scored[*i].0.is_some()).collect();
    order.sort_by(|a, b| scored[*b].0.unwrap_or(0.0).total_cmp(&scored[*a].0.unwrap_or(0.0)).then(a.cmp(b)));
    let mut best: Option<(f64, Candidate)> = order.first().map(|&i| (scored[i].0.unwrap_or(0.0), randoms[i].clone()));
    let mut starts = order.into_iter();
    'restarts: while trace.len() < budget {
        let Some(start) = starts.next() else { break };
        let mut here = (scored[start].0.unwrap_or(0.0), randoms[start].clone());
        let mut step = 0.25;
        while step >= 1.0 / 64.0 {
            let mut improved = false;
            for j in live.iter().copied() {
                for dir in [1.0, -1.0] {
                    if trace.len() >= budget {
                        break 'restarts;
                    }
                    let mut c = here.1.clone();
                    c.x[j] = (c.x[j] + dir * step).clamp(0.0, 1.0);
                    if c.x[j] == here.1.x[j] {
                        continue;
                    }
                    let (r, why) = seen.entry(key(&c)).or_insert_with(|| objective(&c)).clone();
                    trace.push(Evaluated { eval: trace.len(), phase: "refine", ratio: r, reason: why });
                    if let Some(r) = r {
                        if r > here.0 {
                            if best.as_ref().is_none_or(|b| r > b.0) {
                                best = Some((r, c.clone()));
                            }
                            here = (r, c);
                            improved = true;
                        }
                    }
                }
            }
            if !improved {
                step /= 2.0;
            }
        }
    }
    Maximum { trace, best }
}

/// The verdict of a search: violated when a ratio exceeds 1 beyond the rounding tie exact
/// verdicts allow ([`crate::prec::RELATIVE_TIE`], as [`crate::verdict::decide`]), so a
/// replay decides the same; not applicable when no candidate was; inconclusive when the worst
/// ratio is NaN (undefined is never holds).
pub fn search_verdict(any_applicable: bool, worst_ratio: f64) -> VerdictKind {
    if !any_applicable {
        VerdictKind::NotApplicable
    } else if worst_ratio.is_nan() {
        VerdictKind::Inconclusive
    } else if worst_ratio > 1.0 + crate::prec::RELATIVE_TIE {
        VerdictKind::Violated
    } else {
        VerdictKind::Holds
    }
}

/// A search's verdict as its tables print it: a search that found no counterexample among its
/// candidates has not shown the claim holds, so `holds` reads `none found`; `violated` reads
/// `found` (the counterexample is the worst instance); `not applicable` and `inconclusive` (no
/// candidate met the claim's conditions, or the worst one's check did not decide) keep their
/// words. The JSON and the CSV keep the verdict itself.
pub fn counterexample_text(verdict: VerdictKind) -> &'static str {
    match verdict {
        VerdictKind::Holds => "none found",
        VerdictKind::Violated => "found",
        VerdictKind::NotApplicable => "not applicable",
        VerdictKind::Inconclusive => "undecided",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search that found no counterexample is printed as such, never as `holds`; each verdict
    /// has its own text.
    #[test]
    fn a_search_without_a_counterexample_is_printed_none_found() {
        use VerdictKind::*;
        let texts: Vec<&str> = [Holds, Violated, NotApplicable, Inconclusive].into_iter().map(counterexample_text).collect();
        assert_eq!(texts[0], "none found");
        assert!(texts.iter().all(|t| !t.contains("holds")), "{texts:?}");
        let distinct: std::collections::BTreeSet<&&str> = texts.iter().collect();
        assert_eq!(distinct.len(), texts.len(), "{texts:?}");
    }

    #[test]
    fn a_search_verdict_is_violated_past_the_tie_and_undecided_on_nan() {
        assert_eq!(search_verdict(true, 1.0 + 1e-6), VerdictKind::Violated);
        assert_eq!(search_verdict(true, f64::NAN), VerdictKind::Inconclusive);
        assert_eq!(search_verdict(true, f64::INFINITY), VerdictKind::Violated);
        // Controls: within the exact tie of `decide`, and nothing applicable.
        assert_eq!(search_verdict(true, 1.0 + 1e-13), VerdictKind::Holds);
        assert_eq!(search_verdict(false, f64::NAN), VerdictKind::NotApplicable);
    }

    #[test]
    fn finds_the_peak_of_a_smooth_objective_and_skips_inapplicable_points() {
        // Peak 1 at (0.7, 0.2); the half x0 < 0.1 is not applicable.
        let f = |c: &Candidate| {
            if c.x[0] < 0.1 {
                return (None, Some("x0 < 0.1".to_string()));
            }
            (Some(1.0 - (c.x[0] - 0.7).powi(2) - (c.x[1] - 0.2).powi(2)), None)
        };
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let counted = |c: &Candidate| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            f(c)
        };
        let m = maximize(3, &[0, 1], 200, 4, &counted);
        // A point the refinement comes back to is read back, not evaluated again; the trace still
        // counts every evaluation of the budget.
        let evaluated = calls.into_inner();
        assert!(evaluated < m.trace.len() && evaluated > m.trace.len() / 2, "{evaluated} of {}", m.trace.len());
        let (value, best) = m.best.unwrap();
        assert!(value > 0.999, "{value}");
        assert!((best.x[0] - 0.7).abs() < 0.05 && (best.x[1] - 0.2).abs() < 0.05, "{best:?}");
        assert_eq!(m.trace.len(), 200);
        assert!(m.trace.iter().any(|e| e.ratio.is_none()), "inapplicable candidates are traced");
        // Same seed, same trace; another seed, another one.
        let again = maximize(3, &[0, 1], 200, 4, &f);
        assert_eq!(again.best.unwrap().1, best);
        assert_ne!(maximize(3, &[0, 1], 200, 5, &f).best.unwrap().1, best);
    }

    #[test]
    fn search_verdicts() {
        assert_eq!(search_verdict(false, 0.0), VerdictKind::NotApplicable);
        assert_eq!(search_verdict(true, 1.0 + 1e-14), VerdictKind::Holds, "a rounding tie holds");
        assert_eq!(search_verdict(true, 1.01), VerdictKind::Violated);
        assert_eq!(search_verdict(true, 1.0 + 1e-10), VerdictKind::Violated, "1e-10 is beyond rounding, as in decide");
    }
}
