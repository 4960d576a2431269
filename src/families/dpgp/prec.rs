//! Tolerances of the DFedPGP family: the comparisons this family decides, named as in
//! [`crate::prec`] (which holds the defaults they refer to).

/// The clients' u-curvatures `A_i` are equal (so `sigma_g^2` is finite) when every
/// `||A_i - Abar||_max <= EQUAL_CURVATURE * max_j ||A_j||_max` (no absolute floor: curvatures of
/// scale 1e-12 are compared at their own scale). Tighter than the other
/// zeros: equal `A_i` differ from their computed mean by a few ulps only, and any real
/// difference makes the constant infinite.
pub const EQUAL_CURVATURE: f64 = 1e-14;

/// `F` is strongly convex (`F*` attained) when the smallest joint Hessian eigenvalue exceeds
/// `STRONG_CONVEXITY * lambda_max` (relative, no floor); below, it is rounding of a singular matrix (bad
/// instance).
pub const STRONG_CONVEXITY: f64 = crate::prec::ABSOLUTE_ZERO;

/// Remark 2 compares topologies ordered strictly by `q` (or `C/(1-q)`): `a` is better
/// connected than `b` when `key(a) < key(b) - ORDER_MARGIN * max(|key(a)|, |key(b)|)`, so that
/// keys equal up to rounding are not ordered, at any scale of the keys.
pub const ORDER_MARGIN: f64 = crate::prec::RELATIVE_IDENTITY;

/// Every realised mixing matrix is column stochastic (as push-sum needs) when each column sums
/// to 1 within this (absolute).
pub const COLUMN_SUM: f64 = crate::prec::ABSOLUTE_ZERO;

/// Below this a deviation coefficient `E(l)` of the mixing products is rounding, not mixing:
/// such lags do not enter the estimate of Lemma 3's `C` and `q`.
pub const DEVIATION_FLOOR: f64 = crate::prec::ABSOLUTE_ZERO;

/// A matrix of an explicit instance (`A_i`, `D_i`, a noise covariance) is symmetric when
/// `max |M - M^T| <= SYMMETRY * max |M|` (then `(M + M^T)/2` is used): the default for the
/// symmetry of an input matrix.
pub const SYMMETRY: f64 = crate::prec::RELATIVE_IDENTITY;

/// A symmetric matrix of an explicit instance (a client's Hessian, a noise covariance) is
/// positive semidefinite when its smallest eigenvalue is at least `-PSD_FLOOR` times its largest
/// magnitude: rounding of a semidefinite input, as for the engine's covariances.
pub const PSD_FLOOR: f64 = crate::prec::RELATIVE_IDENTITY;

/// A push-sum weight `mu_i` is 1 when `|mu_i - 1| <= UNIT_WEIGHT` (absolute): rounding of an
/// exactly averaging graph's weights, so the printed `Delta_v^t` (at `u_i = mu_i z_i`) has no floor
/// from that client.
pub const UNIT_WEIGHT: f64 = crate::prec::ABSOLUTE_ZERO;

crate::prec::policy_test!(
    include_str!("prec.rs"),
    EQUAL_CURVATURE = 1e-14,
    STRONG_CONVEXITY = 1e-12,
    ORDER_MARGIN = 1e-9,
    COLUMN_SUM = 1e-12,
    DEVIATION_FLOOR = 1e-12,
    SYMMETRY = 1e-9,
    PSD_FLOOR = 1e-9,
    UNIT_WEIGHT = 1e-12,
);
