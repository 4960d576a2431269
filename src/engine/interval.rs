//! Estimates of expectations: Student-t confidence intervals of seeded replicates, and which
//! estimator produced a value.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Which estimator produced a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Estimator {
    /// Exact expectations by moment propagation ([`super::affine`]): no sampling error.
    Exact,
    /// Noiseless gradients and full participation: the run is deterministic, one replicate is
    /// the expectation exactly.
    Deterministic,
    /// Mean of seeded replicates with a Student-t confidence interval.
    MonteCarlo,
}

/// A two-sided confidence interval for an expectation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Point estimate.
    pub mean: f64,
    /// Lower limit.
    pub lower: f64,
    /// Upper limit.
    pub upper: f64,
}

/// Student-t interval of the mean of `samples` at `confidence` (e.g. 0.99).
///
/// # Formula
/// `mean +- t_{(1+c)/2, R-1} s / sqrt(R)` with `s` the sample standard deviation. With a single
/// sample the interval collapses to it. When every sample has the same value `x` the interval is
/// `[x, x]` exactly: the rounded sum `(x + ... + x) / R` can miss `x` by an ulp, and an interval
/// of rounding width around it would exclude the one value every replicate saw.
pub fn student_t_interval(samples: &[f64], confidence: f64) -> Interval {
    let r = samples.len();
    if let Some(&first) = samples.first() {
        if samples.iter().all(|&x| x == first) {
            return Interval { mean: first, lower: first, upper: first };
        }
    }
    let mean = samples.iter().sum::<f64>() / r as f64;
    if r < 2 {
        return Interval { mean, lower: mean, upper: mean };
    }
    let var = samples.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (r - 1) as f64;
    if var == 0.0 {
        return Interval { mean, lower: mean, upper: mean };
    }
    let t = StudentsT::new(0.0, 1.0, (r - 1) as f64).map(|d| d.inverse_cdf(0.5 + confidence / 2.0)).unwrap_or(f64::INFINITY);
    let half = t * (var / r as f64).sqrt();
    Interval { mean, lower: mean - half, upper: mean + half }
}

/// Running averages `(1/T') sum_{t<T'} x_t` for `T' = 1..=len`.
pub fn running_average(series: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    series
        .iter()
        .enumerate()
        .map(|(t, x)| {
            acc += x;
            acc / (t + 1) as f64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_matches_textbook_value() {
        // t_{0.995, 3} = 5.8409; mean 2.5, s = 1.2910, half = 5.8409 * 1.2910 / 2 = 3.7704
        let iv = student_t_interval(&[1.0, 2.0, 3.0, 4.0], 0.99);
        assert!((iv.mean - 2.5).abs() < 1e-12);
        assert!((iv.upper - iv.mean - 3.7704).abs() < 1e-3, "{iv:?}");
    }

    #[test]
    fn identical_replicates_give_their_value_exactly() {
        // 0.1 three times sums to 0.30000000000000004, whose third is not 0.1.
        let x = 0.1;
        assert_ne!((x + x + x) / 3.0, x, "the rounding this test is about");
        let iv = student_t_interval(&[x, x, x], 0.99);
        assert_eq!((iv.mean, iv.lower, iv.upper), (x, x, x));
        // Negative control: a real spread still gives a real interval.
        let iv = student_t_interval(&[x, x, 0.2], 0.99);
        assert!(iv.lower < x && iv.upper > 0.2);
    }

    #[test]
    fn running_average_of_constant_is_constant() {
        assert_eq!(running_average(&[2.0, 2.0, 2.0]), vec![2.0, 2.0, 2.0]);
        assert_eq!(running_average(&[1.0, 3.0]), vec![1.0, 2.0]);
    }
}
