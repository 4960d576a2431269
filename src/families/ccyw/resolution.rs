//! The resolution of a run's gradient metric in double precision, and the comparisons it cannot
//! decide.
//!
//! The engine propagates the state `z` itself, not its distance to the minimizer `z*`. Each
//! coordinate is held to about `eps |z|`, and a local step `z - gamma (H z - g)` rounds at the
//! scale of `|z|` and `|g|`, however close `z` is to `z*`. So a gradient coordinate `H z - g` of a
//! run is known to about
//!
//! ```text
//! delta = eps (T K L s_z + L s_z + s_g),   s_z = max(|z*|_inf, |z^0|_inf),   s_g = max_i |g_i|_inf
//! ```
//!
//! (`T K` local steps, each adding at most `eps s_z` to the state error, the gradient's own
//! rounding, worst case), and a metric that sums `D` squared coordinates (`G_u + hat G_v`, `D` the
//! state's dimension) is known to `floor = D delta^2` near zero. A checkpoint whose bound and
//! observed value differ by no more than `floor` is not decided by the run: started `1e-14` from
//! `z*`, `G_u` is about `1e-28`, below the floor of an instance of scale 1 (about `1e-25` at
//! `T = 50`, `K = 5`), and its bound had been "violated" by rounding noise where the theorem holds
//! with slack 3.9. The floor is quadratic in `eps`: at a metric of ordinary size it is far below
//! any margin, and the relative ties of [`crate::prec::RELATIVE_TIE`] decide as before.

use crate::families::ccyw::problem::{ProblemConstants, QuadraticInstance};
use crate::verdict::{Evaluation, VerdictKind};

/// `floor = D delta^2` of the module's formula, for `rounds` rounds of `k` local steps.
pub fn metric_floor(inst: &QuadraticInstance, constants: &ProblemConstants, k: usize, rounds: usize) -> f64 {
    let s_z = constants.minimizer.amax().max(inst.initial_state().amax());
    let s_g = inst.clients().iter().map(|c| c.linear.amax()).fold(0.0, f64::max);
    let steps = rounds as f64 * k as f64;
    let delta = f64::EPSILON * (steps * constants.l * s_z + constants.l * s_z + s_g);
    inst.layout().state_dim() as f64 * delta * delta
}

/// `evaluation` with a "holds" that a checkpoint within `floor` of its bound decides, or a
/// "violated" that no checkpoint above its bound by more than `floor` decides, made inconclusive,
/// with a note saying so. A checkpoint whose values are so large that their relative tie
/// ([`crate::prec::RELATIVE_TIE`]) is wider than `floor` is decided as before.
pub fn undecide_below_resolution(evaluation: &mut Evaluation, floor: f64) {
    let compared = || evaluation.series.iter().filter_map(|c| c.bound.map(|b| (c.estimate.mean, b)));
    // Where the relative tie of a comparison is wider than the floor, the values are far above it
    // and the tie decides; below, the floor does.
    // (Written so that a NaN is floor-limited and its margin not clear: never decided here.)
    let floor_limited =
        |observed: f64, bound: f64| (crate::prec::RELATIVE_TIE * observed.abs().max(bound.abs())).partial_cmp(&floor) != Some(std::cmp::Ordering::Greater);
    let undecided = match evaluation.verdict {
        VerdictKind::Holds => {
            compared().any(|(observed, bound)| floor_limited(observed, bound) && (bound - observed).partial_cmp(&floor) != Some(std::cmp::Ordering::Greater))
        }
        VerdictKind::Violated => !compared().any(|(observed, bound)| observed - bound > floor),
        _ => false,
    };
    if undecided {
        let decisive = evaluation.decisive.as_ref().map(|c| (c.estimate.mean, c.bound.unwrap_or(f64::NAN)));
        let (observed, bound) = decisive.unwrap_or((f64::NAN, f64::NAN));
        evaluation.verdict = VerdictKind::Inconclusive;
        evaluation.notes.push(format!(
            "below the resolution of double precision: observed {} against bound {} differ by no more than the metric's rounding floor {} at this instance's scale (the state is propagated, not its distance to z*)",
            crate::claim::fmt_num(observed),
            crate::claim::fmt_num(bound),
            crate::claim::fmt_num(floor)
        ));
    }
}
