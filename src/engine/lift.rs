//! Columns of an affine map's linear part, probed so that the map's constant does not swamp them.
//!
//! A column of the linear part of an affine `f` is probed as `f(e_j) - f(0)`. Both values carry
//! the rounding of their largest entries, `eps max(|f(e_j)|, |f(0)|)`, so where the constant
//! `f(0)` is far larger than the column (labels of `2^40` beside features of 1, a control variate
//! in gradient units of `1e16` beside a model of 1) the difference keeps few or none of the
//! column's digits. Such a column is probed again at `s e_j` with a power of two `s` that puts it
//! [`LIFT_BITS`] above the constant, and scaled back by `s` (exact: a power of two, and `f` is
//! affine): `(f(s e_j) - f(0)) / s`, whose rounding is then about `eps` of the column itself.
//! Noise columns (the round is linear in its noise) are lifted the same way against the state's
//! magnitude.

use nalgebra::DVector;

/// A column smaller than this times the magnitude of the values it is computed from is probed
/// again, lifted (its unit probe would carry a relative rounding error above ~1e-10).
const LIFT_RESOLUTION: f64 = 1.0 / (1u64 << 20) as f64;

/// How many bits above the magnitude of the values it is computed from a lifted probe reaches.
const LIFT_BITS: i32 = 20;

/// A column probed at `lift = 1`, or, when it is below the resolution of values of magnitude
/// `scale` (its rounding error would exceed ~1e-10 of itself, or it vanished), probed again by
/// `probe(lift)` at a power of two `lift` that puts the column [`LIFT_BITS`] above `scale`, and
/// scaled back. Up to three lifts; a column that stays 0 is 0, and a lifted probe that is not
/// finite (the lift overflowed the map) is not taken: the last finite column is.
pub(crate) fn lift_column(col: DVector<f64>, scale: f64, probe: &dyn Fn(f64) -> DVector<f64>) -> DVector<f64> {
    let (mut col, mut lift) = (col, 1.0f64);
    for _ in 0..3 {
        let size = col.amax();
        if size * lift >= LIFT_RESOLUTION * scale {
            break;
        }
        let bits = if size > 0.0 { (scale / size).log2().ceil() as i32 + LIFT_BITS } else { lift.log2() as i32 + 64 };
        let next = 2f64.powi(bits.clamp(1, f64::MAX_EXP - 2));
        let lifted = probe(next);
        if !lifted.iter().all(|x| x.is_finite()) {
            break;
        }
        (col, lift) = (lifted, next);
    }
    col
}

/// The magnitude at which coordinate `j` is probed, from the magnitude `size` of the values the
/// round writes or starts with there (its constants, the origin): `2^floor(log2 size)` when
/// `size` is at least [`COORDINATE_LIFT_FROM`], else 1. A coordinate in units far above the
/// others (a control variate in gradient units of `1e16` beside a model of 1) is read by the
/// others with coefficients as far below theirs (a step of `1e-19`): at a unit value its reads
/// sink below the rounding of the constants they are added to; at its own magnitude they do not.
pub(crate) fn coordinate_lift(size: f64) -> f64 {
    if size.is_finite() && size >= COORDINATE_LIFT_FROM {
        2f64.powi((size.log2().floor() as i32).min(f64::MAX_EXP - 2))
    } else {
        1.0
    }
}

/// Coordinates whose values are below this are probed at unit values ([`coordinate_lift`]).
const COORDINATE_LIFT_FROM: f64 = (1u64 << 20) as f64;

/// An affine map's value at `z` less its value at 0, and the largest entry of the two values.
pub(crate) type Difference<'a> = dyn Fn(&DVector<f64>) -> (DVector<f64>, f64) + 'a;

/// Column `j` of the linear part of an affine map of the state (of length `dim`), from
/// `difference(z) = (f(z) - f(0), magnitude)`, `magnitude` the largest entry of the values
/// subtracted: at `z = s e_j` with `s = first` (the coordinate's own magnitude,
/// [`coordinate_lift`]), and where the column is below their resolution at a larger multiple
/// ([`lift_column`]), divided by the multiple. A column that is exactly 0 at the first probe is 0
/// where the values subtracted are 0 too, and is probed once more above them otherwise.
pub(crate) fn linear_column(dim: usize, j: usize, first: f64, difference: &Difference<'_>) -> DVector<f64> {
    let at = |s: f64| {
        let mut e = DVector::zeros(dim);
        e[j] = s;
        let (col, scale) = difference(&e);
        (col / s, scale / s)
    };
    let (col, scale) = at(first);
    if col.iter().all(|x| *x == 0.0) {
        // Exactly 0 beside values that are 0 reads nothing; beside values of magnitude `scale`
        // it may be a column they swamped (a gradient `H e_j` of 1 beside `H W*` of 1e16 rounds
        // away): probed once more, [`LIFT_BITS`] above them.
        if !(scale > 0.0 && scale.is_finite()) {
            return col;
        }
        // A probe that overflowed is not a column; the re-probe may also carry rounding of the
        // constants, about `eps 2^-20` of a unit column, which no verdict sees.
        let bits = (scale.log2().ceil() as i32 + LIFT_BITS).clamp(1, f64::MAX_EXP - 2);
        let lifted = at(first * 2f64.powi(bits)).0;
        return if lifted.iter().all(|x| x.is_finite()) { lifted } else { col };
    }
    lift_column(col, scale, &|lift| at(first * lift).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f(z) = z - W*` with `W* = 2^54`: the unit probe's column rounds to exactly 0 (the spacing
    /// of `f64` at `2^54` is 4), and is probed again to 1.
    #[test]
    fn a_column_rounded_to_zero_beside_a_large_constant_is_probed_again() {
        let w_star = 2f64.powi(54);
        let f = |z: &DVector<f64>| DVector::from_element(1, z[0] - w_star);
        let offset = f(&DVector::zeros(1));
        let difference = |z: &DVector<f64>| {
            let v = f(z);
            let scale = v.amax().max(offset.amax());
            (v - &offset, scale)
        };
        assert_eq!(difference(&DVector::from_element(1, 1.0)).0[0], 0.0, "control: the unit probe rounds the column away");
        assert_eq!(linear_column(1, 0, 1.0, &difference)[0], 1.0);
    }

    /// `f(z) = A z + c` with a constant `2^40` times the column: the unit probe keeps about 12 of
    /// the column's 53 bits, the lifted one all but the last.
    #[test]
    fn a_column_beside_a_large_constant_keeps_its_digits() {
        let a = [0.123_456_789_012_345_6, -0.987_654_321_098_765_4];
        let c = [1.1e12, -0.7e12];
        let f = |z: &DVector<f64>| DVector::from_fn(2, |r, _| a[r] * z[0] + c[r]);
        let offset = f(&DVector::zeros(1));
        let difference = |z: &DVector<f64>| {
            let v = f(z);
            let scale = v.amax().max(offset.amax());
            (v - &offset, scale)
        };
        let unit = difference(&DVector::from_element(1, 1.0)).0;
        let lifted = linear_column(1, 0, 1.0, &difference);
        let error = |col: &DVector<f64>| (0..2).map(|r| ((col[r] - a[r]) / a[r]).abs()).fold(0.0, f64::max);
        assert!(error(&unit) > 1e-6, "control: the unit probe loses digits ({:e})", error(&unit));
        assert!(error(&lifted) < 1e-15, "lifted: {:e}", error(&lifted));
    }

    /// A column of ordinary size beside its constant is the unit probe, bit for bit, and a column
    /// that is exactly 0 beside values that are 0 is not probed again.
    #[test]
    fn an_ordinary_column_is_probed_once() {
        let calls = std::cell::Cell::new(0);
        let difference = |z: &DVector<f64>| {
            calls.set(calls.get() + 1);
            (z * 0.3, 1.0)
        };
        assert_eq!(linear_column(1, 0, 1.0, &difference)[0], 0.3);
        assert_eq!(calls.get(), 1);
        let zero = |_: &DVector<f64>| {
            calls.set(calls.get() + 1);
            (DVector::zeros(1), 0.0)
        };
        assert_eq!(linear_column(1, 0, 1.0, &zero)[0], 0.0);
        assert_eq!(calls.get(), 2);
        // Beside values of 5 the zero column is probed once more, and stays 0.
        let beside = |_: &DVector<f64>| {
            calls.set(calls.get() + 1);
            (DVector::zeros(1), 5.0)
        };
        assert_eq!(linear_column(1, 0, 1.0, &beside)[0], 0.0);
        assert_eq!(calls.get(), 4);
    }
}
