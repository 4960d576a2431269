//! Tolerances of the CCYW family: the comparisons this family decides, named as in
//! [`crate::prec`] (which holds the defaults they refer to).

/// The conservativeness search steps `gamma` by factors of `sqrt(2)` up to
/// `MAX_GAMMA_MULTIPLE`; a multiple within this relative tolerance of the cap still counts
/// (the repeated products carry rounding), so the grid ends at the cap.
pub const GRID_END: f64 = crate::prec::RELATIVE_TIE;

/// Relative spread (max/min - 1) of steady states below which they count as "not depending" on a
/// parameter (decides the experiments' independence statements, e.g. Figure 2c's). The paper
/// gives no number; this one is named so the report says what was used.
pub const INDEPENDENCE_TOLERANCE: f64 = 0.10;

/// A curve has reached its steady state from the round after which every value is within
/// `STEADY_STATE_BAND` of it, relative (decides the descent time and whether a rate statement can
/// be decided); a value that is not a number is never within it.
pub const STEADY_STATE_BAND: f64 = 0.10;

/// Growth of the expected metric (last round over the largest of the first rounds) that counts as
/// divergence in the step-room search.
pub const DIVERGENCE_GROWTH: f64 = 1e6;

/// Smallest `mu / L` a generated instance may have: its Hessians are rotated, and a rotation of
/// `diag(L, ..., mu)` is exact only to about `eps L` per entry, so a smaller `mu` would be lost to
/// rounding (`mu = 1e-100 L` came out as a smallest eigenvalue of 0). At `1e-12` the rounding is
/// a thousandth of `mu`.
pub const MIN_CURVATURE_RATIO: f64 = 1e-12;

crate::prec::policy_test!(
    include_str!("prec.rs"),
    GRID_END = 1e-12,
    INDEPENDENCE_TOLERANCE = 0.10,
    STEADY_STATE_BAND = 0.10,
    DIVERGENCE_GROWTH = 1e6,
    MIN_CURVATURE_RATIO = 1e-12,
);
