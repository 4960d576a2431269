//! FedAvg-P claims of Chen, Cao, Yuan, Wen (file 000 numbering; see CLAIMS.md section 1.3).
//!
//! Bound functions are free functions of [`ClaimInputs`] so that property tests (and a later
//! formula evaluator) can call them directly; the [`CcywClaim`] values wire each one to its
//! metric, assumptions and conditions.

use crate::families::ccyw::algorithm::AlgorithmKind;

use super::{standing, step, AdmissibleSteps, BoundClaim, Claim, ClaimInputs, ConditionCheck, ConditionKind, GammaRule, Metric, Reading, Relation};

/// `X = 4 (n-m) K b^2 / (m n) + sigma_u^2 / m + m sigma_v^2 / n`, the heterogeneity-and-noise
/// factor of Theorem 3.7 and Corollary 3.8 (000:L309, L369-372).
pub fn partial_participation_factor(x: &ClaimInputs, b2: f64) -> f64 {
    let (n, m, k) = (x.n as f64, x.m as f64, x.k as f64);
    4.0 * (n - m) * k * b2 / (m * n) + x.sigma_u2 / m + m * x.sigma_v2 / n
}

/// Theorem 3.7 (000:L306-312; 002:L289-295), partial participation under BGD:
///
/// # Formula
/// `(1/T) sum_{t<T} (G_u^t + hat G_v^t) <= 4 F0 / (T K gamma) + 12 L X gamma
///   + 128 L^2 K (K-1) b^2 gamma^2 / eta_u^2`, with `X` from [`partial_participation_factor`].
pub fn theorem_3_7_bound(x: &ClaimInputs, b2: f64) -> f64 {
    let (k, t, g) = (x.k as f64, x.t as f64, x.gamma());
    4.0 * x.f0 / (t * k * g) + 12.0 * x.l * partial_participation_factor(x, b2) * g + 128.0 * x.l * x.l * k * (k - 1.0) * b2 * g * g / (x.eta_u * x.eta_u)
}

/// The step of Corollary 3.8 (000:L369-371): `gamma = (32 L K + sqrt((3 L K T / F0) X))^{-1}`.
pub fn corollary_3_8_gamma(x: &ClaimInputs, b2: f64) -> f64 {
    let (k, t) = (x.k as f64, x.t as f64);
    1.0 / (32.0 * x.l * k + (3.0 * x.l * k * t / x.f0 * partial_participation_factor(x, b2)).sqrt())
}

/// Corollary 3.8 (000:L369-373; 002:L327-331):
///
/// # Formula
/// `(1/T) sum_{t<T} (G_u^t + hat G_v^t) <= 8 sqrt(3 X L F0 / (K T)) + 129 L F0 / T`.
///
/// With `dv = 0` this is the FedAvg rate of section 3.2.3 (000:L386-392); with `du = 0`,
/// `K = 1`, `m = n` the parallel-SGD rate `8 sqrt(3 sigma_v^2 L F0 / T) + 129 L F0 / T` (000:L409-415).
pub fn corollary_3_8_bound(x: &ClaimInputs, b2: f64) -> f64 {
    let (k, t) = (x.k as f64, x.t as f64);
    8.0 * (3.0 * partial_participation_factor(x, b2) * x.l * x.f0 / (k * t)).sqrt() + 129.0 * x.l * x.f0 / t
}

/// `sigma_u^2 / n + sigma_v^2`, the noise factor of Theorem 3.11 (000:L421-433).
pub fn full_participation_noise(x: &ClaimInputs) -> f64 {
    x.sigma_u2 / x.n as f64 + x.sigma_v2
}

/// Theorem 3.11, first part (000:L421-427; 002:L386-392), full participation without BGD:
///
/// # Formula
/// `(1/T) sum_{t<T} (G_u^t + G_v^t) <= 4 F0 / (T K gamma) + 44 L (sigma_u^2/n + sigma_v^2) gamma + L F0 / T`.
pub fn theorem_3_11_bound(x: &ClaimInputs) -> f64 {
    let (k, t, g) = (x.k as f64, x.t as f64, x.gamma());
    4.0 * x.f0 / (t * k * g) + 44.0 * x.l * full_participation_noise(x) * g + x.l * x.f0 / t
}

/// The step of Theorem 3.11's second part (000:L429):
/// `gamma = (84 L K + sqrt((11 L K T / F0)(sigma_u^2/n + sigma_v^2)))^{-1}`.
pub fn theorem_3_11_rate_gamma(x: &ClaimInputs) -> f64 {
    let (k, t) = (x.k as f64, x.t as f64);
    1.0 / (84.0 * x.l * k + (11.0 * x.l * k * t / x.f0 * full_participation_noise(x)).sqrt())
}

/// Theorem 3.11, second part (000:L429-431; 002:L392-394):
///
/// # Formula
/// `(1/T) sum_{t<T} (G_u^t + G_v^t) <= 8 sqrt((11 L F0 / (K T))(sigma_u^2/n + sigma_v^2)) + 337 L F0 / T`.
///
/// With `dv = 0` this is the full-participation FedAvg rate of section 3.3.2 (000:L486-492).
pub fn theorem_3_11_rate_bound(x: &ClaimInputs) -> f64 {
    let (k, t) = (x.k as f64, x.t as f64);
    8.0 * (11.0 * x.l * x.f0 / (k * t) * full_participation_noise(x)).sqrt() + 337.0 * x.l * x.f0 / t
}

/// The smallest `eta_u` of Theorem 3.11 (000:L421): `max(T, sqrt(B^0 T / (n L F0)), sqrt(n))`,
/// with `B^0` in the chosen reading.
pub fn theorem_3_11_eta_u_min(x: &ClaimInputs, b0: f64) -> f64 {
    let t = x.t as f64;
    t.max((b0 * t / (x.n as f64 * x.l * x.f0)).sqrt()).max((x.n as f64).sqrt())
}

/// The FedAvg-P claims, one value per claim or flagged variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcywClaim {
    /// Theorem 3.7.
    Theorem37,
    /// Corollary 3.8.
    Corollary38,
    /// Theorem 3.11, first part; `literal_b0` selects the printed `B^0` (I-CCYW5 variant).
    Theorem311 {
        /// Use `n ||grad_u f(u^0, v^0)||^2` as printed at 000:L433.
        literal_b0: bool,
    },
    /// Theorem 3.11, second part (its `gamma` choice).
    Theorem311Rate,
    /// Section 3.2.3: FedAvg (no v) with partial participation.
    SpecialFedAvgPartial,
    /// Section 3.2.3: parallel SGD (no u, K = 1, m = n).
    SpecialParallelSgd,
    /// Section 3.3.2: FedAvg (no v) with full participation, no BGD.
    SpecialFedAvgFull,
}

/// Every FedAvg-P claim in report order.
pub const FEDAVG_P_CLAIMS: [CcywClaim; 8] = [
    CcywClaim::Theorem37,
    CcywClaim::Corollary38,
    CcywClaim::Theorem311 { literal_b0: false },
    CcywClaim::Theorem311 { literal_b0: true },
    CcywClaim::Theorem311Rate,
    CcywClaim::SpecialFedAvgPartial,
    CcywClaim::SpecialParallelSgd,
    CcywClaim::SpecialFedAvgFull,
];

fn sqrt(x: f64) -> f64 {
    x.sqrt()
}

fn smoothness_and_noise() -> [ConditionCheck; 2] {
    [
        ConditionCheck::assumption("A2.1 smoothness", true, "quadratic: L = max block norm is finite"),
        ConditionCheck::assumption("A2.2 stochastic gradient", true, "additive Gaussian noise, unbiased, variance tr S"),
    ]
}

fn bgd(x: &ClaimInputs) -> ConditionCheck {
    match x.b2 {
        Some(b2) => ConditionCheck::assumption("A2.3 bounded gradient dissimilarity", true, format!("b^2 = {b2:.6e}")),
        None => ConditionCheck::assumption("A2.3 bounded gradient dissimilarity", false, "the supremum b^2 is infinite"),
    }
}

fn scope(name: &str, given: f64, required: f64) -> ConditionCheck {
    ConditionCheck::compare(name, ConditionKind::Scope, given, Relation::Equal, required)
}

impl CcywClaim {
    fn b2_or_infinite(x: &ClaimInputs) -> f64 {
        x.b2.unwrap_or(f64::INFINITY)
    }

    fn partial_checks(&self, x: &ClaimInputs, out: &mut Vec<ConditionCheck>) {
        let (n, m) = (x.n as f64, x.m as f64);
        out.extend(smoothness_and_noise());
        out.push(bgd(x));
        standing(x, out);
        let b2 = Self::b2_or_infinite(x);
        match self {
            CcywClaim::Theorem37 => {
                if x.du > 0 {
                    out.push(step("eta_u >= sqrt(m)", x.eta_u, Relation::AtLeast, sqrt(m)));
                }
                if x.dv > 0 {
                    out.push(step("eta_v >= sqrt(n/m)", x.eta_v, Relation::AtLeast, sqrt(n / m)));
                }
                out.push(step("gamma <= 1/(32 L K)", x.gamma(), Relation::AtMost, 1.0 / (32.0 * x.l * x.k as f64)));
            }
            _ => {
                // Both conditions involve b^2; with b^2 infinite they cannot be evaluated, and the
                // failed A2.3 above already makes the claim not applicable.
                if x.du > 0 && x.b2.is_some() {
                    let need = sqrt(m).max(sqrt(b2 * x.t as f64 / (x.l * x.f0)));
                    out.push(step("eta_u >= max(sqrt(m), sqrt(b^2 T/(L F0)))", x.eta_u, Relation::AtLeast, need));
                }
                if x.dv > 0 {
                    out.push(step("eta_v >= sqrt(n/m)", x.eta_v, Relation::AtLeast, sqrt(n / m)));
                }
                if x.b2.is_some() {
                    out.push(step("gamma = (32 L K + sqrt((3 L K T/F0) X))^-1", x.gamma(), Relation::Equal, corollary_3_8_gamma(x, b2)));
                }
            }
        }
    }

    fn full_checks(&self, x: &ClaimInputs, out: &mut Vec<ConditionCheck>) {
        out.extend(smoothness_and_noise());
        out.push(scope("m = n (full participation)", x.m as f64, x.n as f64));
        standing(x, out);
        let b0 = match self {
            CcywClaim::Theorem311 { literal_b0: true } => x.b0_literal,
            _ => x.b0,
        };
        if x.du > 0 {
            out.push(step("eta_u >= max(T, sqrt(B^0 T/(n L F0)), sqrt(n))", x.eta_u, Relation::AtLeast, theorem_3_11_eta_u_min(x, b0)));
        }
        if x.dv > 0 {
            out.push(step("eta_v >= 1", x.eta_v, Relation::AtLeast, 1.0));
        }
        match self {
            CcywClaim::Theorem311 { .. } => out.push(step("gamma <= 1/(84 L K)", x.gamma(), Relation::AtMost, 1.0 / (84.0 * x.l * x.k as f64))),
            _ => out.push(step("gamma = (84 L K + sqrt((11 L K T/F0)(sigma_u^2/n + sigma_v^2)))^-1", x.gamma(), Relation::Equal, theorem_3_11_rate_gamma(x))),
        }
        // Lemma 3.6, which the proof unrolls, divides by T - 1 (000:L296-302); the theorem omits it.
        out.push(ConditionCheck::compare("T >= 2 (Lemma 3.6 recursion)", ConditionKind::Implicit, x.t as f64, Relation::AtLeast, 2.0));
    }
}

impl BoundClaim for CcywClaim {
    type Inputs = ClaimInputs;

    fn id(&self) -> &'static str {
        match self {
            CcywClaim::Theorem37 => "CCYW-T3.7",
            CcywClaim::Corollary38 => "CCYW-C3.8",
            CcywClaim::Theorem311 { literal_b0: false } => "CCYW-T3.11",
            CcywClaim::Theorem311 { literal_b0: true } => "CCYW-T3.11~b0-literal",
            CcywClaim::Theorem311Rate => "CCYW-T3.11-RATE",
            CcywClaim::SpecialFedAvgPartial => "CCYW-SC-FEDAVG-PART",
            CcywClaim::SpecialParallelSgd => "CCYW-SC-PSGD",
            CcywClaim::SpecialFedAvgFull => "CCYW-SC-FEDAVG-FULL",
        }
    }

    fn title(&self) -> &'static str {
        match self {
            CcywClaim::Theorem37 => "FedAvg-P, partial participation, under BGD (Theorem 3.7)",
            CcywClaim::Corollary38 => "FedAvg-P rate at the corollary's step (Corollary 3.8)",
            CcywClaim::Theorem311 { .. } => "FedAvg-P, full participation, no BGD (Theorem 3.11)",
            CcywClaim::Theorem311Rate => "FedAvg-P full-participation rate at the theorem's step (Theorem 3.11, part 2)",
            CcywClaim::SpecialFedAvgPartial => "FedAvg (no v), partial participation rate (section 3.2.3)",
            CcywClaim::SpecialParallelSgd => "Parallel SGD (no u, K = 1, m = n) rate (section 3.2.3)",
            CcywClaim::SpecialFedAvgFull => "FedAvg (no v), full participation, no BGD (section 3.3.2)",
        }
    }

    fn source(&self) -> &'static str {
        match self {
            CcywClaim::Theorem37 => "000:L306-312; 002:L289-295",
            CcywClaim::Corollary38 => "000:L369-373; 002:L327-331",
            CcywClaim::Theorem311 { .. } => "000:L421-427, L433; 002:L386-396",
            CcywClaim::Theorem311Rate => "000:L429-433; 002:L392-396",
            CcywClaim::SpecialFedAvgPartial => "000:L386-392; 002:L349-351",
            CcywClaim::SpecialParallelSgd => "000:L409-415",
            CcywClaim::SpecialFedAvgFull => "000:L486-492",
        }
    }

    fn reading(&self) -> Reading {
        match self {
            CcywClaim::Theorem311 { literal_b0: true } => Reading {
                name: "b0-literal",
                is_variant: true,
                description: "I-CCYW5: B^0 as printed at 000:L433, sum_i ||grad_u f(u^0, v^0)||^2 = n G_u^0 \
                              (the proof unrolls B^t of 000:L239, which uses f_i)",
            },
            CcywClaim::Theorem311 { literal_b0: false } | CcywClaim::Theorem311Rate | CcywClaim::SpecialFedAvgFull => Reading {
                name: "primary",
                is_variant: false,
                description: "I-CCYW5: B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2, the B^t of 000:L239 that the proof unrolls",
            },
            _ => Reading { name: "primary", is_variant: false, description: "as printed (constants re-derived, I-CCYW3)" },
        }
    }

    fn every_prefix(&self) -> bool {
        matches!(self, CcywClaim::Theorem37 | CcywClaim::Theorem311 { .. })
    }

    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck> {
        let mut out = Vec::new();
        match self {
            CcywClaim::SpecialFedAvgPartial => out.push(scope("dv = 0 (no personal variables)", x.dv as f64, 0.0)),
            CcywClaim::SpecialFedAvgFull => out.push(scope("dv = 0 (no personal variables)", x.dv as f64, 0.0)),
            CcywClaim::SpecialParallelSgd => {
                out.push(scope("du = 0 (no shared variable)", x.du as f64, 0.0));
                out.push(scope("K = 1", x.k as f64, 1.0));
                out.push(scope("m = n", x.m as f64, x.n as f64));
            }
            _ => {}
        }
        match self {
            CcywClaim::Theorem37 | CcywClaim::Corollary38 | CcywClaim::SpecialFedAvgPartial | CcywClaim::SpecialParallelSgd => self.partial_checks(x, &mut out),
            _ => self.full_checks(x, &mut out),
        }
        out
    }

    fn bound(&self, x: &ClaimInputs) -> f64 {
        let b2 = Self::b2_or_infinite(x);
        match self {
            CcywClaim::Theorem37 => theorem_3_7_bound(x, b2),
            CcywClaim::Corollary38 | CcywClaim::SpecialFedAvgPartial | CcywClaim::SpecialParallelSgd => corollary_3_8_bound(x, b2),
            CcywClaim::Theorem311 { .. } => theorem_3_11_bound(x),
            CcywClaim::Theorem311Rate | CcywClaim::SpecialFedAvgFull => theorem_3_11_rate_bound(x),
        }
    }
}

impl Claim for CcywClaim {
    fn algorithm(&self) -> AlgorithmKind {
        AlgorithmKind::FedavgP
    }

    fn metric(&self) -> Metric {
        match self {
            CcywClaim::Theorem37 | CcywClaim::Corollary38 | CcywClaim::SpecialFedAvgPartial => Metric::SharedPlusWeightedPersonal,
            _ => Metric::SharedPlusPersonal,
        }
    }

    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps {
        let (n, m) = (x.n as f64, x.m as f64);
        let b2 = Self::b2_or_infinite(x);
        let k = x.k as f64;
        match self {
            CcywClaim::Theorem37 => AdmissibleSteps::at_least(GammaRule::AtMost(1.0 / (32.0 * x.l * k)), sqrt(m), sqrt(n / m)),
            CcywClaim::Corollary38 | CcywClaim::SpecialFedAvgPartial | CcywClaim::SpecialParallelSgd => {
                AdmissibleSteps::at_least(GammaRule::Exactly(corollary_3_8_gamma(x, b2)), sqrt(m).max(sqrt(b2 * x.t as f64 / (x.l * x.f0))), sqrt(n / m))
            }
            CcywClaim::Theorem311 { literal_b0 } => AdmissibleSteps::at_least(
                GammaRule::AtMost(1.0 / (84.0 * x.l * k)),
                theorem_3_11_eta_u_min(x, if *literal_b0 { x.b0_literal } else { x.b0 }),
                1.0,
            ),
            CcywClaim::Theorem311Rate | CcywClaim::SpecialFedAvgFull => {
                AdmissibleSteps::at_least(GammaRule::Exactly(theorem_3_11_rate_gamma(x)), theorem_3_11_eta_u_min(x, x.b0), 1.0)
            }
        }
    }
}

/// Looks up a FedAvg-P claim by id.
pub fn by_id(id: &str) -> Option<CcywClaim> {
    FEDAVG_P_CLAIMS.iter().copied().find(|c| c.id() == id)
}
