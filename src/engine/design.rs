//! Designs: the law of the set of components active in a round (sampled clients, a minibatch).
//!
//! The exact engine needs either the inclusion moments of an exchangeable design (first and
//! second order, [`InclusionMoments`]) or the list of its outcomes with their probabilities
//! ([`Design::outcomes`]); the two give the same moments where both exist, which the engine's
//! tests check to 1e-12.

use serde::Serialize;

use crate::error::{Error, Result};

/// The first and second moments of the inclusion indicators `delta_i` of an exchangeable design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InclusionMoments {
    /// `E delta_i`.
    pub p: f64,
    /// `E delta_i delta_j`, `i != j`.
    pub q: f64,
    /// `E delta_i^2`.
    pub p2: f64,
}

impl InclusionMoments {
    /// Uniform sampling of `m` of `n` components without replacement:
    /// `P(i in S) = m/n`, `P(i, j in S) = m (m-1) / (n (n-1))`.
    pub fn without_replacement(n: usize, m: usize) -> Self {
        let (n, m) = (n as f64, m as f64);
        let q = if n > 1.0 { m * (m - 1.0) / (n * (n - 1.0)) } else { m };
        Self { p: m / n, q, p2: m / n }
    }

    /// `m` draws with replacement, `delta_i` the number of times component `i` is drawn
    /// (multinomial): `E delta_i = m/n`, `E delta_i delta_j = m (m-1)/n^2`, `E delta_i^2 = m/n +
    /// m (m-1)/n^2`. Kept as a named wrong model that cross-validation tests must detect when the
    /// algorithm samples without replacement.
    pub fn with_replacement(n: usize, m: usize) -> Self {
        let (n, m) = (n as f64, m as f64);
        Self { p: m / n, q: m * (m - 1.0) / (n * n), p2: m / n + m * (m - 1.0) / (n * n) }
    }

    /// Each component independently with probability `p`: `E delta_i = E delta_i^2 = p`,
    /// `E delta_i delta_j = p^2`.
    pub fn bernoulli(p: f64) -> Self {
        Self { p, q: p * p, p2: p }
    }
}

/// One outcome of a design: the active components (ascending) and their probability.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// `P(s)`.
    pub probability: f64,
    /// The active components, ascending, without repetition.
    pub active: Vec<usize>,
}

/// The law of the active set of a round.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Design {
    /// Every component, every round (full participation, full batch).
    Full {
        /// Components `n`.
        n: usize,
    },
    /// `m` of `n` uniformly without replacement.
    UniformWithoutReplacement {
        /// Components `n`.
        n: usize,
        /// Active per round, `1 <= m <= n`.
        m: usize,
    },
    /// Each component independently with probability `p`.
    Bernoulli {
        /// Components `n`.
        n: usize,
        /// Inclusion probability, `0 <= p <= 1`.
        p: f64,
    },
    /// A finite list of outcomes (need not be exchangeable).
    Finite {
        /// Components `n`.
        n: usize,
        /// Outcomes; probabilities sum to 1.
        outcomes: Vec<Outcome>,
    },
}

/// Largest number of outcomes [`Design::outcomes`] lists.
pub const MAX_ENUMERATED_OUTCOMES: usize = 1 << 16;

fn binomial(n: usize, k: usize) -> Option<usize> {
    let k = k.min(n - k);
    let mut acc: u128 = 1;
    for i in 0..k {
        acc = acc * (n - i) as u128 / (i + 1) as u128;
        if acc > usize::MAX as u128 {
            return None;
        }
    }
    Some(acc as usize)
}

impl Design {
    /// `m` of `n` uniformly without replacement.
    ///
    /// # Errors
    /// [`Error::InvalidField`] unless `1 <= m <= n`.
    pub fn uniform(n: usize, m: usize) -> Result<Self> {
        if m == 0 || m > n {
            return Err(Error::field("design.m", format!("got m = {m} with n = {n}"), "an integer with 1 <= m <= n"));
        }
        Ok(if m == n { Design::Full { n } } else { Design::UniformWithoutReplacement { n, m } })
    }

    /// A finite design.
    ///
    /// # Errors
    /// [`Error::InvalidField`] when a probability is negative or not finite, they do not sum to
    /// 1 (within [`crate::prec::engine::DESIGN_PROBABILITY_SUM`]), or an outcome names a component `>= n`, repeats one or is not ascending.
    pub fn finite(n: usize, outcomes: Vec<Outcome>) -> Result<Self> {
        let mut total = 0.0;
        for (k, o) in outcomes.iter().enumerate() {
            if !(o.probability.is_finite() && o.probability >= 0.0) {
                return Err(Error::field(format!("design.outcomes[{k}].probability"), format!("got {}", o.probability), "a finite number >= 0"));
            }
            if o.active.windows(2).any(|w| w[0] >= w[1]) || o.active.last().is_some_and(|&i| i >= n) {
                return Err(Error::field(
                    format!("design.outcomes[{k}].active"),
                    format!("got {:?}", o.active),
                    format!("ascending distinct components below n = {n}"),
                ));
            }
            total += o.probability;
        }
        if (total - 1.0).abs() > crate::prec::engine::DESIGN_PROBABILITY_SUM {
            return Err(Error::field("design.outcomes", format!("probabilities sum to {total}"), "a sum of 1"));
        }
        Ok(Design::Finite { n, outcomes })
    }

    /// Number of components.
    pub fn components(&self) -> usize {
        match self {
            Design::Full { n } | Design::UniformWithoutReplacement { n, .. } | Design::Bernoulli { n, .. } | Design::Finite { n, .. } => *n,
        }
    }

    /// Inclusion moments of an exchangeable design (the structured path); `None` for a finite
    /// design, which is propagated by enumeration.
    pub fn inclusion_moments(&self) -> Option<InclusionMoments> {
        match self {
            Design::Full { n } => Some(InclusionMoments::without_replacement(*n, *n)),
            Design::UniformWithoutReplacement { n, m } => Some(InclusionMoments::without_replacement(*n, *m)),
            Design::Bernoulli { p, .. } => Some(InclusionMoments::bernoulli(*p)),
            Design::Finite { .. } => None,
        }
    }

    /// Every outcome with its probability, or `None` when there are more than `limit`.
    pub fn outcomes(&self, limit: usize) -> Option<Vec<Outcome>> {
        match self {
            Design::Full { n } => Some(vec![Outcome { probability: 1.0, active: (0..*n).collect() }]),
            Design::UniformWithoutReplacement { n, m } => {
                let count = binomial(*n, *m)?;
                if count > limit {
                    return None;
                }
                let probability = 1.0 / count as f64;
                let mut out = Vec::with_capacity(count);
                let mut subset: Vec<usize> = (0..*m).collect();
                loop {
                    out.push(Outcome { probability, active: subset.clone() });
                    // Next m-subset in lexicographic order.
                    let Some(pos) = (0..*m).rev().find(|&j| subset[j] < n - m + j) else { break };
                    subset[pos] += 1;
                    for j in pos + 1..*m {
                        subset[j] = subset[j - 1] + 1;
                    }
                }
                Some(out)
            }
            Design::Bernoulli { n, p } => {
                if *n >= usize::BITS as usize - 1 || (1usize << n) > limit {
                    return None;
                }
                Some(
                    (0..1usize << n)
                        .map(|mask| {
                            let active: Vec<usize> = (0..*n).filter(|i| mask >> i & 1 == 1).collect();
                            let k = active.len() as i32;
                            Outcome { probability: p.powi(k) * (1.0 - p).powi(*n as i32 - k), active }
                        })
                        .collect(),
                )
            }
            Design::Finite { outcomes, .. } => (outcomes.len() <= limit).then(|| outcomes.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerated_outcomes_reproduce_the_inclusion_moments() {
        for design in [Design::uniform(5, 2).unwrap(), Design::uniform(4, 4).unwrap(), Design::Bernoulli { n: 4, p: 0.3 }] {
            let inc = design.inclusion_moments().unwrap();
            let outcomes = design.outcomes(MAX_ENUMERATED_OUTCOMES).unwrap();
            let total: f64 = outcomes.iter().map(|o| o.probability).sum();
            let p0: f64 = outcomes.iter().filter(|o| o.active.contains(&0)).map(|o| o.probability).sum();
            let q01: f64 = outcomes.iter().filter(|o| o.active.contains(&0) && o.active.contains(&1)).map(|o| o.probability).sum();
            assert!((total - 1.0).abs() < 1e-12, "{design:?}");
            assert!((p0 - inc.p).abs() < 1e-12 && (q01 - inc.q).abs() < 1e-12, "{design:?}: {p0} {q01} vs {inc:?}");
        }
        // The wrong (with-replacement) model differs in q, so the same test would catch it.
        let wrong = InclusionMoments::with_replacement(5, 2);
        assert!((wrong.q - InclusionMoments::without_replacement(5, 2).q).abs() > 1e-3);
    }

    #[test]
    fn finite_designs_are_validated() {
        assert!(Design::finite(3, vec![Outcome { probability: 0.5, active: vec![0] }]).is_err(), "sum 0.5");
        assert!(Design::finite(3, vec![Outcome { probability: 1.0, active: vec![1, 0] }]).is_err(), "not ascending");
        assert!(Design::finite(3, vec![Outcome { probability: 1.0, active: vec![3] }]).is_err(), "component >= n");
        assert!(Design::uniform(3, 4).is_err());
        let design = Design::uniform(10, 3).unwrap();
        assert!(design.outcomes(100).is_none(), "C(10, 3) = 120 outcomes exceed the limit");
        assert_eq!(design.outcomes(1000).unwrap().len(), 120);
    }
}
