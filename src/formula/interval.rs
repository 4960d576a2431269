//! Ranges of values, for one question: can a divisor be zero? Interval arithmetic with open or
//! closed ends, conservative (a range may be wider than the true one, never narrower).

use std::fmt;

/// `(0, inf)`: a positive constant.
pub const POSITIVE: Interval = Interval::above(0.0);
/// `[0, inf)`: a non-negative constant.
pub const NON_NEGATIVE: Interval = Interval::at_least(0.0);
/// `[1, inf)`: a count (clients, local steps, a horizon).
pub const COUNT: Interval = Interval::at_least(1.0);
/// `[0, 1]`: a flag, 1 or 0.
pub const FLAG: Interval = Interval::closed(0.0, 1.0);

/// The values `lo .. hi`, each end open or closed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end (may be `-inf`).
    pub lo: f64,
    /// Upper end (may be `+inf`).
    pub hi: f64,
    /// Whether `lo` itself is excluded.
    pub lo_open: bool,
    /// Whether `hi` itself is excluded.
    pub hi_open: bool,
}

impl Interval {
    /// `[lo, hi]`.
    pub const fn closed(lo: f64, hi: f64) -> Self {
        Self { lo, hi, lo_open: false, hi_open: false }
    }

    /// `{v}`.
    pub const fn point(v: f64) -> Self {
        Self::closed(v, v)
    }

    /// `(-inf, inf)`.
    pub const fn everything() -> Self {
        Self { lo: f64::NEG_INFINITY, hi: f64::INFINITY, lo_open: true, hi_open: true }
    }

    /// `[lo, inf)`.
    pub const fn at_least(lo: f64) -> Self {
        Self { lo, hi: f64::INFINITY, lo_open: false, hi_open: true }
    }

    /// `(lo, inf)`.
    pub const fn above(lo: f64) -> Self {
        Self { lo, hi: f64::INFINITY, lo_open: true, hi_open: true }
    }

    /// `[lo, hi)`.
    pub const fn closed_open(lo: f64, hi: f64) -> Self {
        Self { lo, hi, lo_open: false, hi_open: true }
    }

    /// `(lo, hi]`.
    pub const fn open_closed(lo: f64, hi: f64) -> Self {
        Self { lo, hi, lo_open: true, hi_open: false }
    }

    /// Whether 0 is in the range.
    /// Whether `v` lies in the interval (NaN never does).
    pub fn contains(&self, v: f64) -> bool {
        let above_lo = v > self.lo || (v == self.lo && !self.lo_open);
        let below_hi = v < self.hi || (v == self.hi && !self.hi_open);
        above_lo && below_hi
    }

    pub fn contains_zero(&self) -> bool {
        let above_lo = self.lo < 0.0 || (self.lo == 0.0 && !self.lo_open);
        let below_hi = self.hi > 0.0 || (self.hi == 0.0 && !self.hi_open);
        above_lo && below_hi
    }

    /// `-x`.
    pub fn neg(&self) -> Self {
        Self { lo: -self.hi, hi: -self.lo, lo_open: self.hi_open, hi_open: self.lo_open }
    }

    /// `x + y`.
    pub fn add(&self, o: &Self) -> Self {
        Self { lo: self.lo + o.lo, hi: self.hi + o.hi, lo_open: self.lo_open || o.lo_open, hi_open: self.hi_open || o.hi_open }
    }

    /// `x * y` (an end is open when either factor's end is; `0 * inf` counts as 0, closed).
    pub fn mul(&self, o: &Self) -> Self {
        let prod = |a: f64, b: f64| if a == 0.0 || b == 0.0 { 0.0 } else { a * b };
        let cands = [
            (prod(self.lo, o.lo), self.lo_open || o.lo_open),
            (prod(self.lo, o.hi), self.lo_open || o.hi_open),
            (prod(self.hi, o.lo), self.hi_open || o.lo_open),
            (prod(self.hi, o.hi), self.hi_open || o.hi_open),
        ];
        let mut lo = cands[0];
        let mut hi = cands[0];
        for c in &cands[1..] {
            if c.0 < lo.0 || (c.0 == lo.0 && !c.1) {
                lo = *c;
            }
            if c.0 > hi.0 || (c.0 == hi.0 && !c.1) {
                hi = *c;
            }
        }
        // A factor that can be exactly zero makes the product exactly zero.
        let zero = (self.contains_zero() && self.lo <= 0.0 && self.hi >= 0.0) || (o.contains_zero() && o.lo <= 0.0 && o.hi >= 0.0);
        let mut r = Self { lo: lo.0, hi: hi.0, lo_open: lo.1, hi_open: hi.1 };
        if zero {
            if r.lo == 0.0 {
                r.lo_open = false;
            }
            if r.hi == 0.0 {
                r.hi_open = false;
            }
        }
        r
    }

    /// `1 / x` for a range without 0.
    pub fn recip(&self) -> Self {
        let inv = |v: f64| if v.is_infinite() { 0.0 } else { 1.0 / v };
        Self { lo: inv(self.hi), hi: inv(self.lo), lo_open: self.hi_open || self.hi.is_infinite(), hi_open: self.lo_open || self.lo.is_infinite() }
    }

    /// `x ^ p` for a constant `p`.
    pub fn pow(&self, p: f64) -> Self {
        if self.lo >= 0.0 && p > 0.0 {
            return self.monotone(|v| v.powf(p));
        }
        if p.fract() == 0.0 && p > 0.0 && (p as i64) % 2 == 0 {
            let a = self.abs();
            return a.monotone(|v| v.powf(p));
        }
        if self.lo > 0.0 || (self.lo == 0.0 && self.lo_open) {
            // Decreasing for p < 0 on positive values.
            let r = self.monotone(|v| if v == 0.0 { f64::INFINITY } else { v.powf(p) });
            return Self { lo: r.hi.min(r.lo), hi: r.hi.max(r.lo), lo_open: r.hi_open, hi_open: r.lo_open };
        }
        Self::everything()
    }

    /// `sqrt(x)` (negative parts clipped: a square root of a negative number is NaN, not 0, but
    /// NaN is never a divisor's problem).
    pub fn sqrt(&self) -> Self {
        if self.hi < 0.0 {
            return Self::everything();
        }
        let lo = if self.lo < 0.0 { Self::at_least(0.0) } else { *self };
        lo.monotone(f64::sqrt)
    }

    /// `f(x)` for an increasing `f`.
    pub fn monotone(&self, f: impl Fn(f64) -> f64) -> Self {
        let (lo, hi) = (f(self.lo), f(self.hi));
        if lo.is_nan() || hi.is_nan() {
            return Self::everything();
        }
        Self { lo, hi, lo_open: self.lo_open, hi_open: self.hi_open }
    }

    /// `|x|`.
    pub fn abs(&self) -> Self {
        if self.lo >= 0.0 {
            *self
        } else if self.hi <= 0.0 {
            self.neg()
        } else {
            let hi = if -self.lo > self.hi { (-self.lo, self.lo_open) } else { (self.hi, self.hi_open) };
            Self { lo: 0.0, hi: hi.0, lo_open: false, hi_open: hi.1 }
        }
    }

    /// Range of `min(x, y)`.
    pub fn min(&self, o: &Self) -> Self {
        let lo = if self.lo < o.lo || (self.lo == o.lo && !self.lo_open) { (self.lo, self.lo_open) } else { (o.lo, o.lo_open) };
        let hi = if self.hi < o.hi || (self.hi == o.hi && self.hi_open) { (self.hi, self.hi_open) } else { (o.hi, o.hi_open) };
        Self { lo: lo.0, hi: hi.0, lo_open: lo.1, hi_open: hi.1 }
    }

    /// Range of `max(x, y)`.
    pub fn max(&self, o: &Self) -> Self {
        self.neg().min(&o.neg()).neg()
    }

    /// Values in both.
    pub fn intersect(&self, o: &Self) -> Self {
        let lo = if self.lo > o.lo || (self.lo == o.lo && self.lo_open) { (self.lo, self.lo_open) } else { (o.lo, o.lo_open) };
        let hi = if self.hi < o.hi || (self.hi == o.hi && self.hi_open) { (self.hi, self.hi_open) } else { (o.hi, o.hi_open) };
        Self { lo: lo.0, hi: hi.0, lo_open: lo.1, hi_open: hi.1 }
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let num = |v: f64| {
            if v.is_infinite() {
                if v > 0.0 {
                    "inf".to_string()
                } else {
                    "-inf".to_string()
                }
            } else {
                crate::claim::fmt_num(v)
            }
        };
        write!(f, "{}{}, {}{}", if self.lo_open { "(" } else { "[" }, num(self.lo), num(self.hi), if self.hi_open { ")" } else { "]" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_minus_a_fraction_below_one_is_positive() {
        let q = Interval::closed_open(0.0, 1.0);
        assert!(!Interval::point(1.0).add(&q.neg()).contains_zero());
        let k = Interval::at_least(1.0);
        assert!(k.add(&Interval::point(-1.0)).contains_zero(), "K - 1 is 0 at K = 1");
        let l = Interval::above(0.0);
        assert!(!l.mul(&k).mul(&l).contains_zero());
        assert!(!l.pow(2.0).contains_zero());
        assert!(Interval::everything().pow(2.0).contains_zero());
        assert!(!l.sqrt().contains_zero());
        assert!(!Interval::point(32.0).mul(&l).add(&Interval::at_least(0.0).sqrt()).contains_zero());
    }
}
