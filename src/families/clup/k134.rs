//! Corollary 2's choice of the local steps (134) as a checked proof step (003:L1141-1164): at
//! `eta = 1/(lambda + L)` and `gamma = 1/(2 L_g)` (Corollary 2, 003:L185), (14) reads (131)
//! `(2 + 64 lambda^2/mu^2) x^K <= 1/16` with `x = (L - mu)/(lambda + L)`; (133) bounds its left
//! side by (132)'s `66 kappa^2 x^(K-2)`, and `ln(1/x) >= 1 - x = (lambda + mu)/(lambda + L)` turns
//! (132) into (134) `K >= 2 + ((lambda + L)/(lambda + mu)) ln(1056 kappa^2)`.
//!
//! [`chain`] evaluates every link at a given `K` exactly (in `f64`, from the constants): (132),
//! (133) ((131)'s left side below (132)'s) and (14) at Corollary 2's steps with both sides as the
//! family computes them ([`bounds::condition_14`]), and the smallest `K` meeting (14)
//! ([`k_min_14`], found without a cap). The claim `CLUP-C2-K134` reads them as one implication:
//! where `K` meets (134) (a condition: below it the implication says nothing), every link must
//! hold; its slack is `K / K_14`, how many times the local steps (14) needs (134) asks for.

use crate::claim::{ConditionCheck, ConditionKind, Relation};

use super::bounds::{self, Opt};

/// The right side of (131) and (132): `(1 - gamma L_g)^4` at `gamma = 1/(2 L_g)` (003:L1149).
pub const SIXTEENTH: f64 = 1.0 / 16.0;

/// The links of the chain (134) => (132) => (131) = (14) at one `(mu, L, lambda, K)`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Chain {
    /// `lambda`.
    pub lambda: f64,
    /// `kappa = L/mu`.
    pub kappa: f64,
    /// The local steps checked.
    pub k: usize,
    /// (134)'s threshold `2 + ((lambda + L)/(lambda + mu)) ln(1056 kappa^2)` (not rounded).
    pub k_134_threshold: f64,
    /// (132)'s left side `66 kappa^2 x^(K-2)`.
    pub lhs_132: f64,
    /// (131)'s left side `(2 + 64 lambda^2/mu^2) x^K`.
    pub lhs_131: f64,
    /// (14)'s two sides at Corollary 2's steps ([`bounds::condition_14`]).
    pub sides_14: (f64, f64),
    /// The smallest `K >= 1` meeting (14) at Corollary 2's steps.
    pub k_14: usize,
}

/// Corollary 2's optimization constants at `(mu, L, lambda)` with `K` local steps.
pub fn corollary2_opt(mu: f64, l: f64, lambda: f64, k: usize) -> Opt {
    let (eta, gamma) = bounds::corollary2_steps(l, lambda);
    Opt { mu, l, lambda, gamma, eta, k: k as f64, m: 1.0, mu_error: 0.0 }
}

/// The smallest `K >= 1` with (14) at `o`'s steps, from `K ~ ln(lhs(0)/rhs)/ln(1/(1 - eta
/// mu_l))` adjusted by direct evaluation, so no cap: `None` only when no `K` can (the right
/// side is not positive, or the contraction factor `1 - eta mu_l` is not in `[0, 1)`, or a side
/// is NaN).
pub fn k_min_14(o: &Opt) -> Option<usize> {
    let meets = |k: usize| {
        let (lhs, rhs) = bounds::condition_14(&Opt { k: k as f64, ..*o }, 4);
        lhs <= rhs
    };
    let (lhs0, rhs) = bounds::condition_14(&Opt { k: 0.0, ..*o }, 4);
    let x = 1.0 - o.eta * o.lemma1().mu_l;
    if !(rhs > 0.0 && (0.0..1.0).contains(&x) && lhs0.is_finite()) {
        return None;
    }
    let guess = if x == 0.0 { 1.0 } else { ((lhs0 / rhs).ln() / (1.0 / x).ln()).ceil().max(1.0) };
    if !guess.is_finite() || guess > 1e15 {
        return None;
    }
    let mut k = guess as usize;
    while k > 1 && meets(k - 1) {
        k -= 1;
    }
    while !meets(k) {
        k += 1;
    }
    Some(k)
}

/// The chain at `K` local steps (003:L1143-1164), every side from the constants.
pub fn chain(mu: f64, l: f64, lambda: f64, k: usize) -> Chain {
    let kappa = l / mu;
    let x = (l - mu) / (lambda + l);
    let kf = k as f64;
    let o = corollary2_opt(mu, l, lambda, k);
    Chain {
        lambda,
        kappa,
        k,
        k_134_threshold: 2.0 + (lambda + l) / (lambda + mu) * (1056.0 * kappa * kappa).ln(),
        lhs_132: 66.0 * kappa * kappa * x.powf(kf - 2.0),
        lhs_131: (2.0 + 64.0 * lambda * lambda / (mu * mu)) * x.powf(kf),
        sides_14: bounds::condition_14(&o, 4),
        k_14: k_min_14(&o).unwrap_or(usize::MAX),
    }
}

impl Chain {
    /// Every link as `(what, lhs, rhs)`, `lhs <= rhs` when it holds: the smallest `K` of (14)
    /// against the `K` checked (its ratio is the claim's slack), (132), (133) and (14).
    pub fn links(&self) -> [(&'static str, f64, f64); 4] {
        [
            ("K_14 <= K", self.k_14 as f64, self.k as f64),
            ("(132) 66 kappa^2 x^(K-2) <= 1/16", self.lhs_132, SIXTEENTH),
            ("(133) (2 + 64 lambda^2/mu^2) x^K <= 66 kappa^2 x^(K-2)", self.lhs_131, self.lhs_132),
            ("(14) = (131) at Corollary 2's steps", self.sides_14.0, self.sides_14.1),
        ]
    }

    /// The sides the claim compares: `K_14 <= K`, then each other link that fails (`lhs > rhs`,
    /// or a NaN side), so a failing step decides the verdict and a holding chain reports the
    /// slack `K / K_14`.
    pub fn compared(&self) -> Vec<(f64, f64)> {
        let links = self.links();
        let fails = |(_, l, r): &(&str, f64, f64)| !matches!(l.partial_cmp(r), Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal));
        std::iter::once((links[0].1, links[0].2)).chain(links[1..].iter().filter(|x| fails(x)).map(|(_, l, r)| (*l, *r))).collect()
    }

    /// One line of the claim's points.
    pub fn describe(&self) -> String {
        let links: Vec<String> = self.links().iter().map(|(what, l, r)| format!("{what}: {l:.6e} vs {r:.6e}")).collect();
        format!("lambda {:.4e}, kappa {:.4e}, K {} (K/K_14 = {:.4}): {}", self.lambda, self.kappa, self.k, self.k as f64 / self.k_14 as f64, links.join("; "))
    }
}

/// (134) as the condition of the implication: `K >= 2 + ((lambda + L)/(lambda + mu)) ln(1056
/// kappa^2)` at the scenario's `K` (Corollary 2's, divided by a search's multiple when given).
pub fn condition_134(c: &Chain) -> ConditionCheck {
    ConditionCheck::compare("(134) K >= 2 + (lambda+L)/(lambda+mu) ln(1056 kappa^2)", ConditionKind::StepSize, c.k as f64, Relation::AtLeast, c.k_134_threshold)
}

/// The chains a scenario checks: at its `lambda` with its `K` (Corollary 2's, divided by a
/// search's multiple when given), then at each lambda of its sweep with `K` of (134).
pub fn chains(mu: f64, l: f64, lambda: f64, k: usize, sweep: &[f64]) -> Vec<Chain> {
    std::iter::once(chain(mu, l, lambda, k)).chain(sweep.iter().map(|&x| chain(mu, l, x, bounds::k_134(mu, l, x)))).collect()
}
