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
