//! Tolerances of the FedCLUP family: the comparisons this family decides, named as in
//! [`crate::prec`] (which holds the defaults they refer to).

/// An empirical loss is strongly convex when its smallest Hessian eigenvalue exceeds
/// `STRONG_CONVEXITY * L` (bad instance otherwise): below, the eigenvalue is rounding of a
/// singular matrix.
pub const STRONG_CONVEXITY: f64 = crate::prec::ABSOLUTE_ZERO;

/// Squared errors below `ROUNDING_FLOOR` times their starting scale are at the rounding floor
/// of `f64` (distances of order 1 carry errors near 1e-16, squared 1e-32): such rounds are not
/// compared.
pub const ROUNDING_FLOOR: f64 = 1e-20;

/// A point of the lambda curve is a table row of the report when its lambda equals a listed
/// value up to this (relative to `max(lambda, 1)`): the grid's values are computed, the
/// listed ones typed.
pub const GRID_MATCH: f64 = crate::prec::RELATIVE_IDENTITY;

/// Theorem 1 is probed just inside its first branch's guard `g(lambda) <= 1/(8 L^2)` (I-CLUP6) at
/// `lambda_guard (1 + GUARD_OFFSET)`, not at `lambda_guard` itself: there `g = 1/(8 L^2)` holds
/// only up to rounding, and the branch flips between finite and `+inf` with the last bit of
/// `lambda_guard`. The offset moves `g` by about `GUARD_OFFSET` relatively, six orders above the
/// rounding of `g` and of the root that gives `lambda_guard`.
pub const GUARD_OFFSET: f64 = 1e-9;

/// A feature covariance is symmetric when `max |S - S^T| <= SYMMETRY max |S|` (then `(S +
/// S^T)/2` is used).
pub const SYMMETRY: f64 = crate::prec::RELATIVE_IDENTITY;

/// A stated Assumption 3 constant `rho2` of an explicit model is valid when it is at least the
/// value computed from the data less `ASSUMED_CONSTANT` times that value: a `s^2 L` written as
/// the seeded recipe states it differs from the data's by rounding. (A stated `r` of P(R) is
/// refused below the data's `R` beyond rounding, and the bounds read `max(r, R)`: an allowance
/// of `1e-9` of the ground truths' norm had let a stated `r` 2% below `R` into the bounds for
/// ground truths of norm `1e9`.)
pub const ASSUMED_CONSTANT: f64 = crate::prec::RELATIVE_IDENTITY;

/// Squared distances of Algorithm 1 below `LEMMA_FLOOR` times the squared scale of the models
/// (`model_scale` of the check) are not compared in Lemmas 5 and 6 (decides which rounds those
/// lemmas compare): they are differences of vectors of that scale, so one of `1e-16` carries
/// relative rounding near `1e-8` and one near `1e-32` is rounding alone.
pub const LEMMA_FLOOR: f64 = 1e-16;

crate::prec::policy_test!(
    include_str!("prec.rs"),
    STRONG_CONVEXITY = 1e-12,
    ROUNDING_FLOOR = 1e-20,
    GRID_MATCH = 1e-9,
    GUARD_OFFSET = 1e-9,
    SYMMETRY = 1e-9,
    ASSUMED_CONSTANT = 1e-9,
    LEMMA_FLOOR = 1e-16,
);
