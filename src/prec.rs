//! The one tolerance policy of the crate.
//!
//! Every floating-point comparison that decides something (a symmetric matrix, a condition at its
//! boundary, an exact verdict at a tie) goes through this module, so the policy can be read and
//! changed in one place.

/// Relative tolerance for identities that hold exactly in real arithmetic (symmetry of an input
/// matrix, a step size set by a formula).
pub const RELATIVE_IDENTITY: f64 = 1e-9;

/// Relative tolerance under which a bound and an observed value count as tied.
pub const RELATIVE_TIE: f64 = 1e-12;

/// Absolute floor under which a matrix norm counts as zero (used to decide whether a supremum is
/// finite: the linear part of an affine map must vanish exactly, up to rounding of its inputs).
pub const ABSOLUTE_ZERO: f64 = 1e-12;

/// `a` and `b` agree to relative tolerance `rel` (with an absolute floor of `rel` near zero).
pub fn approx_eq(a: f64, b: f64, rel: f64) -> bool {
    let scale = a.abs().max(b.abs()).max(1.0);
    (a - b).abs() <= rel * scale
}

/// `given <= required` up to the identity tolerance (a parameter set exactly at its boundary by a
/// formula must count as admissible).
pub fn le_tol(given: f64, required: f64) -> bool {
    given <= required || approx_eq(given, required, RELATIVE_IDENTITY)
}

/// `given >= required` up to the identity tolerance.
pub fn ge_tol(given: f64, required: f64) -> bool {
    given >= required || approx_eq(given, required, RELATIVE_IDENTITY)
}

// Claims with a hidden constant (`O(.)` statements, [`crate::kinds::big_o`]): when the ratio
// metric/shape over a sweep of horizons counts as bounded.

/// Local log-log slope of `metric/shape` between the two largest horizons at or below which the
/// ratio counts as not growing: a sweep does not resolve growth slower than `T^0.05` (a factor
/// `2^0.05 = 1.035` per doubling of `T`) from the slow approach of a limit.
pub const BIG_O_SLOPE_RESOLUTION: f64 = 0.05;

/// Smallest rate `lambda` at which the positive local slopes of `metric/shape` must fall, per unit
/// of `ln T` (slopes `~ T^-lambda`), for their remaining growth to be extrapolated as finite:
/// slopes that fall slower than `T^-0.1` (a factor `0.93` per doubling) cannot be told from
/// constant ones.
pub const BIG_O_MIN_SLOPE_DECAY: f64 = 0.1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approx_eq_accepts_rounding_and_rejects_real_gaps() {
        assert!(approx_eq(1.0, 1.0 + 1e-12, RELATIVE_IDENTITY));
        assert!(!approx_eq(1.0, 1.001, RELATIVE_IDENTITY));
        assert!(le_tol(1.0 + 1e-12, 1.0));
        assert!(!le_tol(1.01, 1.0));
        assert!(ge_tol(1.0 - 1e-12, 1.0));
        assert!(!ge_tol(0.99, 1.0));
    }
}
