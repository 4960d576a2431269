//! Tolerances of the FedPLT family (the general defaults are in [`crate::prec`]).

use crate::prec::{ABSOLUTE_ZERO, RELATIVE_IDENTITY};

/// The alignment ratio `<m .* grad, W - W*> / <grad, W - W*>` is undefined when its
/// denominator is at most `ALIGNMENT_DENOMINATOR * ||grad|| ||W - W*||` (rounding of an
/// orthogonal pair).
pub const ALIGNMENT_DENOMINATOR: f64 = ABSOLUTE_ZERO;

/// An iterate is at the optimum (where an undefined alignment ratio is no failure of A6) when
/// `||W - W*|| <= AT_OPTIMUM * (1 + ||W*||)`: equal in real arithmetic.
pub const AT_OPTIMUM: f64 = RELATIVE_IDENTITY;

/// The decaying schedule's `z` is consistent with the alignment it measures when the measured
/// ratio and the assumed one agree to this (relative), which ends the fixed-point iteration.
pub const Z_CONSISTENCY: f64 = RELATIVE_IDENTITY;

/// A Gaussian draw shorter than this is drawn again before it is normalised to a unit vector
/// (its direction would be rounding).
pub const UNIT_VECTOR_MIN_NORM: f64 = ABSOLUTE_ZERO;

/// The clients share one optimum when every `||w_k* - W*|| <= SHARED_OPTIMUM * (1 + ||W*||)`
/// (decides the shared-optimum reading of the constants).
pub const SHARED_OPTIMUM: f64 = ABSOLUTE_ZERO;

/// A coordinate of an iterate is within rounding of `W*` when `|w_i - w*_i| <= WITHIN_ROUNDING *
/// (|w_i| + |w*_i|)` (a few ulps): where every coordinate a client's mask sees is, the alignment
/// ratio's numerator is rounding, and the ratio is not decided there (it is counted instead).
pub const WITHIN_ROUNDING: f64 = 8.0 * f64::EPSILON;

crate::prec::policy_test!(
    include_str!("prec.rs"),
    ALIGNMENT_DENOMINATOR = 1e-12,
    AT_OPTIMUM = 1e-9,
    Z_CONSISTENCY = 1e-9,
    UNIT_VECTOR_MIN_NORM = 1e-12,
    SHARED_OPTIMUM = 1e-12,
    WITHIN_ROUNDING = 8.0 * f64::EPSILON,
);
