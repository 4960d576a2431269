//! Claim kinds: what a verdict means for each kind of claim a paper makes, written once for every
//! family.
//!
//! - [`rate`]: a rate exponent over a sweep of horizons, `metric = O(T^p)` read as the fitted
//!   log-log slope of the metric against `T`, with its Student-t interval, at most `p`.
//! - [`ordering`]: an ordering between runs, `metric(a) <= metric(b)` for every ordered pair.
//! - [`big_o`]: an `O(.)` statement with a hidden constant, `metric(T) <= c shape(T)` for some
//!   constant `c` and every `T`, read as `metric/shape` staying bounded over the sweep.
//!
//! Each kind takes the numbers a family computed (exact, or already estimated) and the claim's
//! condition checks, and returns an [`Evaluation`]: a failing binding check makes the claim not
//! applicable, a non-binding one is a note.

pub mod big_o;
pub mod ordering;
pub mod rate;
pub mod settling;

use crate::claim::ConditionCheck;
use crate::engine::{Estimator, Interval};
use crate::verdict::{Checkpoint, Evaluation, VerdictKind};

pub use crate::verdict::failed_and_notes;

/// An exact value as a zero-width interval.
pub fn exact(x: f64) -> Interval {
    Interval { mean: x, lower: x, upper: x }
}

/// An evaluation without a deciding checkpoint (not applicable, or inconclusive for want of data).
/// A "not applicable" whose only failing checks are undecided in floating point is inconclusive
/// ([`crate::verdict::inapplicable`]).
fn undecided(verdict: VerdictKind, checks: Vec<ConditionCheck>, failed: Vec<String>, notes: Vec<String>, series: Vec<Checkpoint>) -> Evaluation {
    let verdict = if verdict == VerdictKind::NotApplicable { crate::verdict::inapplicable(&checks) } else { verdict };
    Evaluation { verdict, slack: None, decisive: None, checks, failed, notes, estimator: Estimator::Exact, series, beyond_steps: None }
}
