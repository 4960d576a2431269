//! Scaffold-P claims of Chen, Cao, Yuan, Wen, section 4 (000 numbering; CLAIMS.md section 1.3).

use crate::families::ccyw::algorithm::AlgorithmKind;

use super::{standing, step, AdmissibleSteps, BoundClaim, Claim, ClaimInputs, ConditionCheck, ConditionKind, GammaRule, Metric, Reading, Relation};

/// `sigma_u^2/m + m sigma_v^2/n`, the noise factor of Theorem 4.5 and Corollary 4.6.
pub fn sampled_noise(x: &ClaimInputs) -> f64 {
    x.sigma_u2 / x.m as f64 + x.m as f64 * x.sigma_v2 / x.n as f64
}

/// `max(n^{2/3}/m, 1)`, the participation factor of Lemma 4.4 and Theorem 4.5 (000:L579, L587).
pub fn participation_factor(n: usize, m: usize) -> f64 {
    ((n as f64).powf(2.0 / 3.0) / m as f64).max(1.0)
}

/// The step condition of Lemma 4.4 and Theorem 4.5 (000:L579, L587):
/// `gamma <= (1/(72 L K)) min(m/n^{2/3}, 1)`.
pub fn theorem_4_5_gamma_max(x: &ClaimInputs) -> f64 {
    1.0 / (72.0 * x.l * x.k as f64 * participation_factor(x.n, x.m))
}

/// Theorem 4.5 (000:L587-591; 002:L542-546), Scaffold-P with partial participation, no BGD:
///
/// # Formula
/// `(1/T) sum_{t<T} (G_u^t + hat G_v^t) <= 4 F0/(T K gamma) + 148 (sigma_u^2/m + sigma_v^2 m/n) L gamma`.
pub fn theorem_4_5_bound(x: &ClaimInputs) -> f64 {
    let (k, t, g) = (x.k as f64, x.t as f64, x.gamma());
    4.0 * x.f0 / (t * k * g) + 148.0 * sampled_noise(x) * x.l * g
}

/// The step of Corollary 4.6 (000:L643):
/// `gamma = (72 L K max(n^{2/3}/m, 1) + sqrt((37 L K T/F0)(sigma_u^2/m + m sigma_v^2/n)))^{-1}`.
pub fn corollary_4_6_gamma(x: &ClaimInputs) -> f64 {
    let (k, t) = (x.k as f64, x.t as f64);
    1.0 / (72.0 * x.l * k * participation_factor(x.n, x.m) + (37.0 * x.l * k * t / x.f0 * sampled_noise(x)).sqrt())
}

/// Corollary 4.6 (000:L643-647; 002:L590-594):
///
/// # Formula
/// `(1/T) sum_{t<T} (G_u^t + hat G_v^t) <= 8 sqrt((37 L F0/(K T))(sigma_u^2/m + sigma_v^2 m/n))
///   + (288 L F0/T) max(1, n^{2/3}/m)`.
///
/// With `dv = 0` it is the explicit form of the Scaffold rate (4.6) (000:L651-655).
pub fn corollary_4_6_bound(x: &ClaimInputs) -> f64 {
    let (k, t) = (x.k as f64, x.t as f64);
    8.0 * (37.0 * x.l * x.f0 / (k * t) * sampled_noise(x)).sqrt() + 288.0 * x.l * x.f0 / t * participation_factor(x.n, x.m)
}

/// The `1/T` factor of the Scaffold rate (4.6), `max(1, n^{2/3}/m)` (000:L653), against the
/// earlier best known (4.7), `(n/m)^{2/3}` (000:L659). The paper's improvement claim is
/// `rate_4_6_factor(n, m) <= rate_4_7_factor(n, m)` for `1 <= m <= n`.
pub fn rate_4_6_factor(n: usize, m: usize) -> f64 {
    participation_factor(n, m)
}

/// See [`rate_4_6_factor`].
pub fn rate_4_7_factor(n: usize, m: usize) -> f64 {
    (n as f64 / m as f64).powf(2.0 / 3.0)
}

/// The Scaffold-P claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaffoldClaim {
    /// Theorem 4.5.
    Theorem45,
    /// Corollary 4.6.
    Corollary46,
    /// Section 4.3.1: Scaffold (no v), explicit form of (4.6).
    SpecialScaffold,
}

/// Every Scaffold-P claim in report order.
pub const SCAFFOLD_P_CLAIMS: [ScaffoldClaim; 3] = [ScaffoldClaim::Theorem45, ScaffoldClaim::Corollary46, ScaffoldClaim::SpecialScaffold];

impl BoundClaim for ScaffoldClaim {
    type Inputs = ClaimInputs;

    fn id(&self) -> &'static str {
        match self {
            ScaffoldClaim::Theorem45 => "CCYW-T4.5",
            ScaffoldClaim::Corollary46 => "CCYW-C4.6",
            ScaffoldClaim::SpecialScaffold => "CCYW-SC-SCAFFOLD",
        }
    }
    fn title(&self) -> &'static str {
        match self {
            ScaffoldClaim::Theorem45 => "Scaffold-P, partial participation, no BGD (Theorem 4.5)",
            ScaffoldClaim::Corollary46 => "Scaffold-P rate at the corollary's step (Corollary 4.6)",
            ScaffoldClaim::SpecialScaffold => "Scaffold (no v), partial participation rate (4.6), explicit constants",
        }
    }
    fn source(&self) -> &'static str {
        match self {
            ScaffoldClaim::Theorem45 => "000:L587-591; 002:L542-546",
            ScaffoldClaim::Corollary46 => "000:L643-647; 002:L590-594",
            ScaffoldClaim::SpecialScaffold => "000:L651-655 with Corollary 4.6 at sigma_v = 0",
        }
    }
    fn reading(&self) -> Reading {
        Reading {
            name: "primary",
            is_variant: false,
            description: "as printed; 148 = 4 x 37 and 37 = 21 + 72 x 4/18 re-derived with the 21 of 000:L618 \
                          (I-CCYW2: 000:L624 prints 2, a garble of an intermediate display)",
        }
    }
    fn every_prefix(&self) -> bool {
        matches!(self, ScaffoldClaim::Theorem45)
    }
    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck> {
        let (n, m) = (x.n as f64, x.m as f64);
        let mut out = Vec::new();
        if *self == ScaffoldClaim::SpecialScaffold {
            out.push(ConditionCheck::compare("dv = 0 (no personal variables)", ConditionKind::Scope, x.dv as f64, Relation::Equal, 0.0));
        }
        out.push(ConditionCheck::assumption("A2.1 smoothness", true, "quadratic: L = max block norm is finite"));
        out.push(ConditionCheck::assumption("A2.2 stochastic gradient", true, "additive Gaussian noise, unbiased, variance tr S"));
        standing(x, &mut out);
        if x.du > 0 {
            out.push(step("eta_u >= sqrt(m)", x.eta_u, Relation::AtLeast, m.sqrt()));
        }
        if x.dv > 0 {
            out.push(step("eta_v >= sqrt(n/m)", x.eta_v, Relation::AtLeast, (n / m).sqrt()));
        }
        match self {
            ScaffoldClaim::Theorem45 => out.push(step("gamma <= min(m/n^(2/3), 1)/(72 L K)", x.gamma(), Relation::AtMost, theorem_4_5_gamma_max(x))),
            _ => out.push(step(
                "gamma = (72 L K max(n^(2/3)/m, 1) + sqrt((37 L K T/F0)(sigma_u^2/m + m sigma_v^2/n)))^-1",
                x.gamma(),
                Relation::Equal,
                corollary_4_6_gamma(x),
            )),
        }
        out
    }
    fn bound(&self, x: &ClaimInputs) -> f64 {
        match self {
            ScaffoldClaim::Theorem45 => theorem_4_5_bound(x),
            _ => corollary_4_6_bound(x),
        }
    }
}

impl Claim for ScaffoldClaim {
    fn algorithm(&self) -> AlgorithmKind {
        AlgorithmKind::ScaffoldP
    }
    fn metric(&self) -> Metric {
        Metric::SharedPlusWeightedPersonal
    }
    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps {
        let (n, m) = (x.n as f64, x.m as f64);
        let gamma = match self {
            ScaffoldClaim::Theorem45 => GammaRule::AtMost(theorem_4_5_gamma_max(x)),
            _ => GammaRule::Exactly(corollary_4_6_gamma(x)),
        };
        AdmissibleSteps::at_least(gamma, m.sqrt(), (n / m).sqrt())
    }
}
