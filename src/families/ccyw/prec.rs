//! Tolerances of the CCYW family: the comparisons this family decides, named as in
//! [`crate::prec`] (which holds the defaults they refer to).

/// The conservativeness search steps `gamma` by factors of `sqrt(2)` up to
/// `MAX_GAMMA_MULTIPLE`; a multiple within this relative tolerance of the cap still counts
/// (the repeated products carry rounding), so the grid ends at the cap.
pub const GRID_END: f64 = crate::prec::RELATIVE_TIE;

crate::prec::policy_test!(include_str!("prec.rs"), GRID_END = 1e-12,);
