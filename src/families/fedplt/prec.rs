//! Tolerances of the FedPLT family (the general defaults are in [`crate::prec`]).

use crate::prec::{ABSOLUTE_ZERO, RELATIVE_IDENTITY};

/// The alignment ratio `<m .* grad, W - W*> / <grad, W - W*>` is undefined when its
/// denominator is at most `ALIGNMENT_DENOMINATOR * ||grad|| ||W - W*||` (rounding of an
/// orthogonal pair).
pub const ALIGNMENT_DENOMINATOR: f64 = ABSOLUTE_ZERO;

/// An iterate is at the optimum (where an undefined alignment ratio is no failure of A6) when
/// `||W - W*|| <= AT_OPTIMUM * max(||W||, ||W*||)`: equal to rounding, relative to the vectors
/// (an absolute floor would call every iterate of a small-scale instance "at the optimum" and
/// excuse its undefined ratios).
pub const AT_OPTIMUM: f64 = RELATIVE_IDENTITY;

/// The decaying schedule's `z` is consistent with the alignment it measures when the measured
/// ratio and the assumed one agree to this (relative), which ends the fixed-point iteration.
pub const Z_CONSISTENCY: f64 = RELATIVE_IDENTITY;

/// A Gaussian draw shorter than this is drawn again before it is normalised to a unit vector
/// (its direction would be rounding).
pub const UNIT_VECTOR_MIN_NORM: f64 = ABSOLUTE_ZERO;

/// The small-step limit `W_lim` is `W*` (FEDPLT-LIMIT's bound of 0 is met) when `||W_lim - W*|| <=
/// LIMIT_SOLVE_ROUNDING d eps (kappa_lim + kappa_*) s`, `s` the largest of `||W_lim||`, `||W*||`,
/// `||W^0||` and every `||a_k||`: both are solutions of linear systems of dimension at most `d`,
/// equal in real arithmetic where the claim holds, and differ by the rounding of the solves, a few
/// `d eps kappa` of the terms their right sides are summed from (relative, so at every scale;
/// optima of 1 and -0.999 give a `W*` of 5e-4 with the rounding of optima of 1). A fixed
/// allowance of 1e-9 had let a limit 6e-10 away from `W*` (relative), a real difference, count as
/// `W*`.
pub const LIMIT_SOLVE_ROUNDING: f64 = 16.0;

/// The small-step field `diag(psi) sum_k c_k s_k M_k H_k` (on covered coordinates) is stable at
/// `W_lim`, so that the small-step dynamics settle there, when the real parts of its eigenvalues
/// are above `LIMIT_STABILITY` times its largest modulus.
pub const LIMIT_STABILITY: f64 = ABSOLUTE_ZERO;

/// The clients share one optimum when every `||w_k* - W*|| <= SHARED_OPTIMUM max(||w_k*||, ||W*||)`
/// (decides the shared-optimum reading of the constants).
pub const SHARED_OPTIMUM: f64 = ABSOLUTE_ZERO;

/// A coordinate of an iterate is within rounding of `W*` when `|w_i - w*_i| <= WITHIN_ROUNDING *
/// (|w_i| + |w*_i|)` (a few ulps): where every coordinate a client's mask sees is, the alignment
/// ratio's numerator is rounding, and the ratio is not decided there (it is counted instead).
pub const WITHIN_ROUNDING: f64 = 8.0 * f64::EPSILON;

/// A "holds" is vacuous when its slack exceeds `VACUOUS_SLACK` while `rho_ < RHO_NEAR_ZERO`: the
/// bound is then large only because `z = mu psi_ rho_` is near 0 (it carries `1/z` or `1/z^2`),
/// and `rho_`, a minimum over the rounds run, keeps falling with the horizon (001:L396).
pub const VACUOUS_SLACK: f64 = 1e3;

/// See [`VACUOUS_SLACK`]: a full mask has `rho_ = 1`.
pub const RHO_NEAR_ZERO: f64 = 1e-2;

/// `lambda_min` of the symmetric part of `diag(m_k) H_k` counts as not positive (A6 fails for
/// all `W`) when at most `A6_EIGEN_ZERO ||H_k||`: a diagonal `H_k` with a proper mask has an
/// exact 0 there, which rounding may show as a tiny value of either sign.
pub const A6_EIGEN_ZERO: f64 = ABSOLUTE_ZERO;

/// An explicit `H_k` is symmetric when `max |H - H^T| <= SYMMETRY max |H|` (then `(H + H^T)/2`
/// is used, bit for bit `H` when it is symmetric).
pub const SYMMETRY: f64 = RELATIVE_IDENTITY;

/// An explicit noise covariance is positive semidefinite when its smallest eigenvalue is at
/// least `-PSD_FLOOR` times its largest magnitude (rounding of a singular one).
pub const PSD_FLOOR: f64 = ABSOLUTE_ZERO;

/// An explicit instance's weights `c_k` sum to 1 when `|sum_k c_k - 1| <= WEIGHT_SUM`: the
/// recipe's `n_k / n` sum to 1 up to rounding.
pub const WEIGHT_SUM: f64 = RELATIVE_IDENTITY;

/// The excess `D^t - D^inf` a half-life is read from is resolved when its half at `t = 0` exceeds
/// `HALF_LIFE_RESOLUTION max(D^0, D^inf)`: `D^t` (propagated) and `D^inf` (solved) each carry
/// rounding relative to themselves, so a smaller excess is their difference's rounding.
pub const HALF_LIFE_RESOLUTION: f64 = RELATIVE_IDENTITY;

/// A client's psi-step form `x^T S x + b^T x` is `>= 0` at every state when `lambda_min(S)` and
/// every `b_i` are within `PSI_FORM_ROUNDING d` (`d^2` for the eigenvalue) of 0 relative to the
/// terms they are computed from: as strict as the points' own allowance ([`WITHIN_ROUNDING`]), so a
/// form certified is one no point test could fail. `S` of a diagonal `H_k` or of `psi` constant
/// on the mask is PSD or 0 exactly, up to this rounding.
pub const PSI_FORM_ROUNDING: f64 = 8.0 * f64::EPSILON;

crate::prec::policy_test!(
    include_str!("prec.rs"),
    ALIGNMENT_DENOMINATOR = 1e-12,
    AT_OPTIMUM = 1e-9,
    Z_CONSISTENCY = 1e-9,
    UNIT_VECTOR_MIN_NORM = 1e-12,
    LIMIT_SOLVE_ROUNDING = 16.0,
    LIMIT_STABILITY = 1e-12,
    SHARED_OPTIMUM = 1e-12,
    WITHIN_ROUNDING = 8.0 * f64::EPSILON,
    VACUOUS_SLACK = 1e3,
    RHO_NEAR_ZERO = 1e-2,
    A6_EIGEN_ZERO = 1e-12,
    SYMMETRY = 1e-9,
    PSD_FLOOR = 1e-12,
    WEIGHT_SUM = 1e-9,
    HALF_LIFE_RESOLUTION = 1e-9,
    PSI_FORM_ROUNDING = 8.0 * f64::EPSILON,
);
