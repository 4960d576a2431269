//! The one tolerance policy of the crate.
//!
//! Every floating-point comparison that decides something (a symmetric matrix, a condition at its
//! boundary, an exact verdict at a tie) goes through this module, so the policy can be read and
//! changed in one place.
//!
//! As in statrs' `prec`: global defaults first ([`RELATIVE_IDENTITY`], [`RELATIVE_TIE`],
//! [`ABSOLUTE_ZERO`], the input magnitude limits), then one module per part of the core
//! ([`engine`], [`formula`]) naming each comparison it decides. A family's own comparisons are
//! named the same way in its folder (`families/<family>/prec.rs`), so adding a family touches no
//! core file. A named tolerance that means a global default is defined as that default (changing
//! the default changes it); one that needs another value states it and why. Each file's test lists
//! every constant with its value (`assert_policy`).

/// Relative tolerance for identities that hold exactly in real arithmetic (symmetry of an input
/// matrix, a step size set by a formula).
pub const RELATIVE_IDENTITY: f64 = 1e-9;

/// Relative tolerance under which a bound and an observed value count as tied.
pub const RELATIVE_TIE: f64 = 1e-12;

/// Relative tolerance of a step-size or parameter condition at its boundary (`given <= required`
/// counts as met when `given` exceeds `required` by at most this relative amount; a strict `<`
/// fails there): a step set at the boundary by a formula differs from the condition's own
/// evaluation by a few roundings (`1e-16` each), and the constants it is compared with (extreme
/// eigenvalues of a well-scaled matrix) are accurate to about `1e-15`. Wider, it would admit
/// steps outside a condition: at `1e-9`, a local step `3.5e-10` above `1/L_l` was admitted and
/// the claim called "holds". Constants computed with a larger error (a small eigenvalue of an
/// ill-conditioned matrix) carry their own error bound into the comparison
/// ([`crate::claim::ConditionCheck::compare_bracketed`]).
pub const CONDITION_TIE: f64 = 1e-12;

/// Absolute floor under which a matrix norm counts as zero (used to decide whether a supremum is
/// finite: the linear part of an affine map must vanish exactly, up to rounding of its inputs).
pub const ABSOLUTE_ZERO: f64 = 1e-12;

/// Smallest magnitude a positive curvature of an instance may have (`mu`, `L`); smaller is bad
/// input. With [`INPUT_MAGNITUDE_MAX`] it keeps products, squares and their sums of the inputs
/// finite and normal (`(1e-100)^2` is still normal, `(1e100)^2` still finite).
pub const INPUT_MAGNITUDE_MIN: f64 = 1e-100;

/// Largest magnitude an instance's scalar inputs may have (curvatures, noise levels, distances);
/// larger is bad input (see [`INPUT_MAGNITUDE_MIN`]).
pub const INPUT_MAGNITUDE_MAX: f64 = 1e100;

/// Growth of a run's expected error (its last value over the largest of its first half) from
/// which the run counts as diverging: a "holds" read with a constant measured on such a run is
/// not decided (the constant grows with the run). An error that fills with noise from the
/// optimum is concave in the rounds and at most doubles over the second half; an unstable step
/// grows it geometrically, by `q^(T/2)` (at `eta = 2.01 / L` over 800 rounds, 2.8e3, which a
/// threshold of 1e6 had let "hold").
pub const RUN_DIVERGENCE_GROWTH: f64 = 8.0;

/// Tolerances of the exact engine (`engine::affine`, `engine::design`): decompositions, the
/// stationary moments and the input checks of a design.
pub mod engine {
    /// Convergence threshold passed to nalgebra's SVD (its stopping test on the off-diagonal):
    /// machine epsilon, the tightest it can meet, so a singular value is as accurate as `f64`
    /// allows before the cutoffs below judge it.
    pub const SVD_CONVERGENCE: f64 = f64::EPSILON;

    /// Convergence threshold passed to nalgebra's real Schur decomposition of the mean map
    /// `A_eff` (its stopping test on the subdiagonal): the eigenvalue moduli it yields are then
    /// accurate far below [`UNIT_MODULUS`], the gap that decides whether a mode contracts.
    pub const SCHUR_CONVERGENCE: f64 = 1e-12;

    /// A mode of the mean map with modulus `>= 1 - UNIT_MODULUS` does not contract (decides
    /// whether a steady state exists beyond the exactly conserved directions). The identity
    /// tolerance: a modulus of exactly 1 in real arithmetic comes out within rounding of 1.
    pub const UNIT_MODULUS: f64 = super::RELATIVE_IDENTITY;

    /// A direction `l` is exactly conserved by every round when the singular value of
    /// `(I - A_eff)^T` it belongs to and its linear lifts `|l^T A0 - l^T|`, `|l^T A_i|` are at
    /// most `CONSERVED_DIRECTION * max(||A_eff||_max, 1)` (dimensionless maps), and each of its
    /// offsets `l^T c0`, `l^T b_i`, `l^T w` (every column `w` of `W_i`) at most
    /// `CONSERVED_DIRECTION * lean` times its own scale `||x||_max sum_r |l_r|` (the state's
    /// units, however small), `lean = max(1, ||I - A_eff|| / gap)` for the smallest singular value `gap`
    /// above the null ones (how far a computed null vector leans towards the slow modes), at
    /// most [`CONSERVED_OFFSET_MAX`].
    /// A few orders above the rounding of an SVD at that scale (`~ d * f64::EPSILON`), so that a
    /// conservation law of the method (a control variate's sum) is found; a direction that leaks
    /// more than this is treated as an ordinary mode.
    pub const CONSERVED_DIRECTION: f64 = 1e-10;

    /// The largest relative leak `|l^T x| / (||x||_max sum_r |l_r|)` of an offset along a conserved
    /// direction, however ill-conditioned the maps ([`CONSERVED_DIRECTION`]): a drift or noise
    /// that is not rounding is never read as conserved.
    pub const CONSERVED_OFFSET_MAX: f64 = 1e-4;

    /// A conserved value `v = l^T mu0` is deterministic when
    /// `|l^T P0 l - v^2| <= CONSERVED_VALUE (1 + v^2)` (decides whether the fixed point is pinned
    /// down; a random conserved value has no steady state). The identity tolerance: the two sides
    /// are equal in real arithmetic.
    pub const CONSERVED_VALUE: f64 = super::RELATIVE_IDENTITY;

    /// Singular values below this (absolute) are treated as zero by the least-squares solves of
    /// the stationary moments (nalgebra's `SVD::solve` cutoff): the conserved directions make the
    /// systems exactly singular, and their extra equations carry the missing rank.
    pub const PSEUDO_INVERSE_CUTOFF: f64 = 1e-12;

    /// The stationary covariance's stacked system is solved by Householder QR when it is well
    /// ranked: every `|R_ii|` at least `QR_RANK_RATIO` times the largest (else by the SVD, whose
    /// cutoff handles a rank-deficient system). Far above the rounding of a singular system's
    /// `R` (`~ u f64::EPSILON` relative, `u` the unknowns), so a singular system never takes QR.
    pub const QR_RANK_RATIO: f64 = 1e-8;

    /// Iterative refinement of the stationary second moment stops once the residual is at most
    /// `REFINEMENT_STOP * ||P||_max` (the raw second moment's own scale, no floor): a few ulps,
    /// where another pass changes nothing.
    pub const REFINEMENT_STOP: f64 = 1e-15;

    /// A least-squares answer is a fixed point of the moment recursion only when its residual is
    /// at most `FIXED_POINT_RESIDUAL * ||P||_max` (else there is no steady state). The
    /// identity tolerance: the equations hold exactly in real arithmetic at a true fixed point.
    pub const FIXED_POINT_RESIDUAL: f64 = super::RELATIVE_IDENTITY;

    /// A stationary covariance `P* - mu* mu*^T` is positive semidefinite when its smallest
    /// eigenvalue is at least `-COVARIANCE_PSD_FLOOR * ||P||_max` (else there is no steady
    /// state). The identity tolerance, as for the PSD check of an instance's matrices.
    pub const COVARIANCE_PSD_FLOOR: f64 = super::RELATIVE_IDENTITY;

    /// The probabilities of a finite design must sum to 1 within this (absolute; bad input
    /// otherwise). The rounding of a sum of `N` probabilities is at most `N f64::EPSILON`, below
    /// this for up to about 4,000 outcomes; a mistyped probability is not.
    pub const DESIGN_PROBABILITY_SUM: f64 = super::ABSOLUTE_ZERO;
}

/// Tolerances of the formula engine's comparison of built-in bounds with their card formulas.
pub mod formula {
    /// Relative agreement required of a built-in bound and its formula on a sample input (decides
    /// whether the two encodings disagree). Both evaluate the same expression in a different
    /// order: they differ by a few ulps times the number of terms, far below this.
    pub const TWIN_AGREEMENT: f64 = 1e-12;

    /// A term of a disagreeing formula counts in the diagnosis only when
    /// `|term| > NEGLIGIBLE_TERM sum |terms|`: below, the difference of the encodings is rounding,
    /// not the term.
    pub const NEGLIGIBLE_TERM: f64 = 1e-6;

    /// The difference of the encodings is "a constant times term k" when the ratios over the
    /// samples spread by less than this (relative to their median): the message then names the
    /// term's coefficient or sign, else the term the difference tracks best.
    pub const CONSTANT_RATIO_SPREAD: f64 = 1e-6;
}

/// `a` and `b` agree to relative tolerance `rel`: `|a - b| <= rel max(|a|, |b|)`.
///
/// Relative at every scale, with no absolute floor: values near zero are compared relative to
/// themselves, so `1e-13` and `1e-20` do not agree (a floor of `rel` would call any two values
/// below `rel` equal, a bound of `1e-20` tied with an observed `1e-13`). Equal values agree,
/// zeros included; NaN agrees with nothing, and an infinity only with itself (`|inf - x|` is
/// within any multiple of `inf`, so infinities are not compared by the formula).
pub fn approx_eq(a: f64, b: f64, rel: f64) -> bool {
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= rel * a.abs().max(b.abs()))
}

/// `a` and `b` agree to `rel` relative to `max(|a|, |b|, 1)`: [`approx_eq`] with an absolute floor
/// of `rel`. Only for an equality condition on a computed constant that is exactly zero in real
/// arithmetic (FedPLT's `Lambda = 0` on a shared optimum comes out near `1e-31`): the rounding it
/// carries is that of the inputs it is computed from, whose scale the condition does not see.
/// Never for a verdict's tie or an inequality, which are relative ([`approx_eq`]).
pub fn approx_eq_floored(a: f64, b: f64, rel: f64) -> bool {
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0))
}

/// `given <= required` up to [`CONDITION_TIE`] (a parameter set exactly at its boundary by a
/// formula must count as admissible).
pub fn le_tol(given: f64, required: f64) -> bool {
    given <= required || approx_eq(given, required, CONDITION_TIE)
}

/// `given >= required` up to [`CONDITION_TIE`].
pub fn ge_tol(given: f64, required: f64) -> bool {
    given >= required || approx_eq(given, required, CONDITION_TIE)
}

/// `given < required`, strictly: the complement of [`ge_tol`], so a value at the boundary up to
/// [`CONDITION_TIE`] (set there by a formula, equal in real arithmetic) is outside, as the
/// paper's `<` says. NaN on either side never holds.
pub fn lt_strict(given: f64, required: f64) -> bool {
    given < required && !ge_tol(given, required)
}

/// `given > required`, strictly: the complement of [`le_tol`] (see [`lt_strict`]).
pub fn gt_strict(given: f64, required: f64) -> bool {
    given > required && !le_tol(given, required)
}

/// A value strictly inside the open side of a strict bound `v` (`below`: of `x < v`, else of
/// `x > v`): `v` moved inward by `10 RELATIVE_IDENTITY` relative to itself (at least the least
/// normal number), so that a step set there passes [`lt_strict`] or [`gt_strict`]. A bound that
/// is not finite is returned as it is (no finite value is "just inside" infinity).
pub fn strictly_inside(v: f64, below: bool) -> f64 {
    if !v.is_finite() {
        return v;
    }
    let shift = (10.0 * RELATIVE_IDENTITY * v.abs()).max(f64::MIN_POSITIVE);
    if below {
        v - shift
    } else {
        v + shift
    }
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

/// The test of a family's tolerance file (`families/<family>/prec.rs`): every constant listed with
/// the value the policy sets, in order, through [`assert_policy`]. Written in the file as
/// `crate::prec::policy_test!(include_str!("prec.rs"), NAME = value, ...);`.
macro_rules! policy_test {
    ($source:expr, $($name:ident = $value:expr),+ $(,)?) => {
        #[cfg(test)]
        mod policy {
            #[test]
            fn every_tolerance_is_listed_with_its_value() {
                crate::prec::assert_policy($source, &[$((stringify!($name), super::$name, $value)),+]);
            }
        }
    };
}
pub(crate) use policy_test;

/// A tolerance table for [`assert_policy`]: each constant's path, its value, and the value the
/// policy sets.
#[cfg(test)]
pub(crate) type Policy = [(&'static str, f64, f64)];

/// Asserts that `table` lists every `f64` constant declared in `source` (a tolerance file's own
/// text, by `include_str!`), in order, each with the value the policy sets (bit for bit): a
/// changed or an unlisted tolerance fails the file's test.
#[cfg(test)]
pub(crate) fn assert_policy(source: &str, table: &Policy) {
    assert_eq!(changed(table), Vec::<&str>::new(), "a tolerance differs from the policy listed in its test");
    let listed: Vec<String> = table.iter().map(|(name, _, _)| name.to_string()).collect();
    assert_eq!(declared(source), listed, "every tolerance constant of the file is listed, in order, in its test");
}

/// The `f64` constants declared in `source` (a tolerance file's text), by path within the file.
#[cfg(test)]
pub(crate) fn declared(source: &str) -> Vec<String> {
    let mut module: Option<&str> = None;
    let mut names = Vec::new();
    for line in source.lines() {
        if let Some(m) = line.strip_prefix("pub mod ").and_then(|r| r.strip_suffix(" {")) {
            module = Some(m);
        } else if line == "}" {
            module = None;
        } else if let Some((name, _)) = line.trim_start().strip_prefix("pub const ").and_then(|r| r.split_once(": f64 = ")) {
            names.push(module.map_or_else(|| name.to_string(), |m| format!("{m}::{name}")));
        }
    }
    names
}

/// Entries of `table` whose value is not the one the policy sets (bit for bit).
#[cfg(test)]
pub(crate) fn changed(table: &Policy) -> Vec<&'static str> {
    table.iter().filter(|(_, value, policy)| value.to_bits() != policy.to_bits()).map(|(name, _, _)| *name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approx_eq_accepts_rounding_and_rejects_real_gaps() {
        assert!(approx_eq(1.0, 1.0 + 1e-12, RELATIVE_IDENTITY));
        assert!(!approx_eq(1.0, 1.001, RELATIVE_IDENTITY));
        assert!(le_tol(1.0 + 1e-13, 1.0));
        assert!(!le_tol(1.01, 1.0));
        // A step 3.5e-10 above its bound is outside it (CONDITION_TIE, not RELATIVE_IDENTITY).
        assert!(!le_tol(0.512820513, 1.0 / 1.95));
        assert!(ge_tol(1.0 - 1e-13, 1.0));
        assert!(!ge_tol(0.99, 1.0));
    }

    /// Near zero the comparisons are relative to the values themselves: an absolute floor would
    /// tie a bound of 1e-20 with an observed 1e-13, or admit a step three times its limit of
    /// 3e-10. Rounding at that scale still agrees; exact zeros agree; NaN agrees with nothing.
    #[test]
    fn comparisons_are_relative_near_zero() {
        assert!(!approx_eq(1e-13, 1e-20, RELATIVE_TIE));
        assert!(approx_eq(3e-10, 3e-10 * (1.0 + 1e-13), RELATIVE_TIE));
        assert!(!le_tol(1e-9, 3.1e-10));
        assert!(le_tol(3.1e-10 * (1.0 + 1e-13), 3.1e-10));
        assert!(!ge_tol(1e-12, 3e-12));
        assert!(approx_eq(0.0, 0.0, RELATIVE_TIE) && approx_eq(0.0, -0.0, RELATIVE_TIE));
        assert!(!approx_eq(0.0, 1e-300, RELATIVE_TIE));
        assert!(!approx_eq(f64::NAN, f64::NAN, RELATIVE_TIE) && !approx_eq(1.0, f64::NAN, RELATIVE_TIE));
        assert!(approx_eq(f64::INFINITY, f64::INFINITY, RELATIVE_TIE) && !approx_eq(f64::INFINITY, 1e308, RELATIVE_TIE));
        assert!(!le_tol(f64::INFINITY, 1e308) && !ge_tol(-1e308, f64::INFINITY));
        // The floored form, for equality conditions on constants zero in real arithmetic only.
        assert!(approx_eq_floored(1.6e-31, 0.0, RELATIVE_IDENTITY) && !approx_eq_floored(1e-8, 0.0, RELATIVE_IDENTITY));
        assert!(!approx_eq_floored(f64::INFINITY, 1e308, RELATIVE_IDENTITY));
    }

    #[test]
    fn input_limits_print_as_the_messages_state_them() {
        assert_eq!(format!("[{INPUT_MAGNITUDE_MIN:e}, {INPUT_MAGNITUDE_MAX:e}]"), "[1e-100, 1e100]");
        // Negative control: the plain format would print every digit.
        assert_ne!(format!("{INPUT_MAGNITUDE_MAX}"), "1e100");
    }

    /// Every tolerance of the policy: its path under `prec`, its value, and the value the policy
    /// sets. A change of policy shows here, in one place.
    fn policy() -> Vec<(&'static str, f64, f64)> {
        vec![
            ("RELATIVE_IDENTITY", RELATIVE_IDENTITY, 1e-9),
            ("RELATIVE_TIE", RELATIVE_TIE, 1e-12),
            ("CONDITION_TIE", CONDITION_TIE, 1e-12),
            ("ABSOLUTE_ZERO", ABSOLUTE_ZERO, 1e-12),
            ("INPUT_MAGNITUDE_MIN", INPUT_MAGNITUDE_MIN, 1e-100),
            ("INPUT_MAGNITUDE_MAX", INPUT_MAGNITUDE_MAX, 1e100),
            ("RUN_DIVERGENCE_GROWTH", RUN_DIVERGENCE_GROWTH, 8.0),
            ("engine::SVD_CONVERGENCE", engine::SVD_CONVERGENCE, f64::EPSILON),
            ("engine::SCHUR_CONVERGENCE", engine::SCHUR_CONVERGENCE, 1e-12),
            ("engine::UNIT_MODULUS", engine::UNIT_MODULUS, 1e-9),
            ("engine::CONSERVED_DIRECTION", engine::CONSERVED_DIRECTION, 1e-10),
            ("engine::CONSERVED_OFFSET_MAX", engine::CONSERVED_OFFSET_MAX, 1e-4),
            ("engine::CONSERVED_VALUE", engine::CONSERVED_VALUE, 1e-9),
            ("engine::PSEUDO_INVERSE_CUTOFF", engine::PSEUDO_INVERSE_CUTOFF, 1e-12),
            ("engine::QR_RANK_RATIO", engine::QR_RANK_RATIO, 1e-8),
            ("engine::REFINEMENT_STOP", engine::REFINEMENT_STOP, 1e-15),
            ("engine::FIXED_POINT_RESIDUAL", engine::FIXED_POINT_RESIDUAL, 1e-9),
            ("engine::COVARIANCE_PSD_FLOOR", engine::COVARIANCE_PSD_FLOOR, 1e-9),
            ("engine::DESIGN_PROBABILITY_SUM", engine::DESIGN_PROBABILITY_SUM, 1e-12),
            ("formula::TWIN_AGREEMENT", formula::TWIN_AGREEMENT, 1e-12),
            ("formula::NEGLIGIBLE_TERM", formula::NEGLIGIBLE_TERM, 1e-6),
            ("formula::CONSTANT_RATIO_SPREAD", formula::CONSTANT_RATIO_SPREAD, 1e-6),
            ("BIG_O_SLOPE_RESOLUTION", BIG_O_SLOPE_RESOLUTION, 0.05),
            ("BIG_O_MIN_SLOPE_DECAY", BIG_O_MIN_SLOPE_DECAY, 0.1),
        ]
    }

    #[test]
    fn every_tolerance_is_listed_with_its_value() {
        let table = policy();
        assert_policy(include_str!("prec.rs"), &table);
        let listed: Vec<String> = table.iter().map(|(name, _, _)| name.to_string()).collect();
        // Negative controls: a changed value and an unlisted constant are both caught.
        let mut doctored = table.clone();
        if let Some(entry) = doctored.iter_mut().find(|e| e.0 == "engine::UNIT_MODULUS") {
            entry.1 = 1.000_000_1e-9;
        }
        assert_eq!(changed(&doctored), vec!["engine::UNIT_MODULUS"]);
        let extended = format!("{}\npub mod x {{\n    pub const NEW: f64 = 0.5;\n}}\n", include_str!("prec.rs"));
        assert_eq!(declared(&extended).last().map(String::as_str), Some("x::NEW"));
        assert_ne!(declared(&extended), listed);
    }
}
