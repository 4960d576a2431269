//! Lemma-level claims: per-round inequalities between expectations that the proofs of the
//! theorems chain together. A theorem and the lemma its proof rests on can fail separately; these
//! checks tell which step of a proof fails when a theorem does.
//!
//! Each lemma maps the [`LemmaQuantities`] of a run at round `t` (and `t-1` for recursions) to
//! `(lhs, rhs)`; the verdict compares `E lhs` with `E rhs` round by round.

use crate::engine::Estimator;
use crate::families::ccyw::algorithm::AlgorithmKind;
use crate::families::ccyw::lemma_estimates::LemmaQuantities;
use crate::verdict::{evaluate_inequality, Evaluation};

use super::{standing, step, AdmissibleSteps, ClaimInputs, ConditionCheck, ConditionKind, GammaRule, Reading, Relation};

/// A per-round inequality `E lhs_t <= E rhs_t` of a proof.
pub trait LemmaClaim: Sync + Send {
    /// ID as in CLAIMS.md, e.g. `CCYW-L3.5`; variants append `~name`.
    fn id(&self) -> &'static str;
    /// The algorithm the lemma is about.
    fn algorithm(&self) -> AlgorithmKind;
    /// One-line title.
    fn title(&self) -> &'static str;
    /// Source lines.
    fn source(&self) -> &'static str;
    /// The inequality in words.
    fn inequality(&self) -> &'static str;
    /// Which reading this is.
    fn reading(&self) -> Reading;
    /// Assumptions and conditions at these inputs.
    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck>;
    /// `(lhs, rhs)` of one run at round `t`, given the quantities at `t` and at `t-1` (`None` at
    /// `t = 0`); `None` where the lemma says nothing (a recursion at `t = 0`).
    fn sides(&self, x: &ClaimInputs, now: &LemmaQuantities, before: Option<&LemmaQuantities>) -> Option<(f64, f64)>;
    /// The steps the lemma's conditions admit at `x`, whose `eta_u`, `eta_v` are given (the
    /// drift lemmas bound `gamma_u = gamma / eta_u` and `gamma_v = gamma / eta_v`); its `gamma_*`
    /// are ignored. Where the lemma bounds no step, `gamma` is taken up to
    /// [`unconditioned_gamma`] and the outer steps from 1: the range the adversarial search
    /// explores, not a condition.
    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps;
}

/// The largest `gamma` the adversarial search tries for a lemma that bounds no step (Lemma 3.6's
/// first part, and the drift lemmas at `K = 1`, where `K (K - 1) = 0`).
///
/// # Formula
/// `1/(L K)`: local steps `gamma_u, gamma_v <= 1/(L K)` at `eta = 1`, the largest steps of the
/// theorems' scale (their conditions are `gamma <= 1/(c L K)` with `c >= 8`).
pub fn unconditioned_gamma(x: &ClaimInputs) -> f64 {
    1.0 / (x.l * x.k as f64)
}

/// The largest `gamma` with `c L^2 K (K-1) (gamma_u^2 + gamma_v^2) <= 1` at `gamma_u = gamma/eta_u`,
/// `gamma_v = gamma/eta_v` (Lemma 3.5: `c = 4`, 000:L241; Lemma 4.3: `c = 12`, 000:L571), or
/// [`unconditioned_gamma`] at `K = 1`, where the condition bounds nothing.
///
/// # Formula
/// `gamma <= 1 / (L sqrt(c K (K-1) (1/eta_u^2 + 1/eta_v^2)))`.
fn drift_gamma(x: &ClaimInputs, c: f64) -> f64 {
    let k = x.k as f64;
    let spread = c * k * (k - 1.0) * (1.0 / (x.eta_u * x.eta_u) + 1.0 / (x.eta_v * x.eta_v));
    if spread > 0.0 {
        1.0 / (x.l * spread.sqrt())
    } else {
        unconditioned_gamma(x)
    }
}

/// The lemmas checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcywLemma {
    /// Lemma 3.5, FedAvg-P client drift; `tight_v` uses the proof's last line (I-CCYW4).
    DriftFedAvgP {
        /// `8 n K^2 (K-1) gamma_v^2 G_v` (000:L291) instead of the statement's `8 n K^3`.
        tight_v: bool,
    },
    /// Lemma 3.6, first part: `B^t <= n G_u^t + n b^2` under BGD.
    GradientSumBgd,
    /// Lemma 3.6, second part: the full-participation recursion for `B^t`.
    GradientSumFull,
    /// Lemma 4.3, Scaffold-P client drift.
    DriftScaffoldP,
    /// Lemma 4.4, the `C^t` recursion (its proof is suspect: I-CCYW10).
    MemoryRecursion,
}

/// Every lemma in report order.
pub const CCYW_LEMMAS: [CcywLemma; 6] = [
    CcywLemma::DriftFedAvgP { tight_v: false },
    CcywLemma::DriftFedAvgP { tight_v: true },
    CcywLemma::GradientSumBgd,
    CcywLemma::GradientSumFull,
    CcywLemma::DriftScaffoldP,
    CcywLemma::MemoryRecursion,
];

fn base_assumptions() -> Vec<ConditionCheck> {
    vec![
        ConditionCheck::assumption("A2.1 smoothness", true, "quadratic: L = max block norm is finite"),
        ConditionCheck::assumption("A2.2 stochastic gradient", true, "additive Gaussian noise, unbiased, variance tr S"),
    ]
}

/// `sigma_u^2 gamma_u^2 + sigma_v^2 gamma_v^2`.
fn noise_steps(x: &ClaimInputs) -> f64 {
    x.sigma_u2 * x.gamma_u * x.gamma_u + x.sigma_v2 * x.gamma_v * x.gamma_v
}

/// Lemma 3.5 (000:L241-245):
///
/// # Formula
/// `E^t <= 8 K^2 (K-1) gamma_u^2 B^t + 8 n K^3 gamma_v^2 G_v^t + 4 n K^2 (sigma_u^2 gamma_u^2 + sigma_v^2 gamma_v^2)`,
/// with `8 n K^2 (K-1)` in place of `8 n K^3` in the `tight_v` reading (000:L291).
pub fn lemma_3_5_rhs(x: &ClaimInputs, b_sum: f64, g_v: f64, tight_v: bool) -> f64 {
    let (n, k) = (x.n as f64, x.k as f64);
    let v_factor = if tight_v { k * k * (k - 1.0) } else { k * k * k };
    8.0 * k * k * (k - 1.0) * x.gamma_u * x.gamma_u * b_sum + 8.0 * n * v_factor * x.gamma_v * x.gamma_v * g_v + 4.0 * n * k * k * noise_steps(x)
}

/// Lemma 3.6, second part (000:L296-302):
///
/// # Formula
/// `B^t <= (1 + 2/(T-1)) B^{t-1} + 2 n T (G_u^{t-1} + G_v^{t-1}) + (2 n T / K)(sigma_u^2/n + sigma_v^2)`.
pub fn lemma_3_6_rhs(x: &ClaimInputs, before: &LemmaQuantities) -> f64 {
    let (n, t, k) = (x.n as f64, x.t as f64, x.k as f64);
    let s = &before.summary;
    (1.0 + 2.0 / (t - 1.0)) * s.b_sum + 2.0 * n * t * (s.g_u + s.g_v) + 2.0 * n * t / k * (x.sigma_u2 / n + x.sigma_v2)
}

/// Lemma 4.3 (000:L571-575):
///
/// # Formula
/// `E^t <= 96 L^2 K^2 gamma_u^2 C^t + 24 n K^3 gamma_u^2 G_u^t + 8 n K^3 gamma_v^2 G_v^t
///   + 52 n K^2 (sigma_u^2 gamma_u^2 + sigma_v^2 gamma_v^2)`.
pub fn lemma_4_3_rhs(x: &ClaimInputs, now: &LemmaQuantities) -> f64 {
    let (n, k, l) = (x.n as f64, x.k as f64, x.l);
    let s = &now.summary;
    96.0 * l * l * k * k * x.gamma_u * x.gamma_u * now.memory_drift
        + 24.0 * n * k.powi(3) * x.gamma_u * x.gamma_u * s.g_u
        + 8.0 * n * k.powi(3) * x.gamma_v * x.gamma_v * s.g_v
        + 52.0 * n * k * k * noise_steps(x)
}

/// Lemma 4.4 (000:L579-583, "ct" read as C^t):
///
/// # Formula
/// `C^t <= (1 - m/(4n)) C^{t-1} + (m n^{2/3} K/(36 L^2)) (G_u^{t-1} + hat G_v^{t-1})
///   + (m^2/(18 L^2)) (sigma_u^2/m + m sigma_v^2/n)`.
pub fn lemma_4_4_rhs(x: &ClaimInputs, before: &LemmaQuantities) -> f64 {
    let (n, m, k, l) = (x.n as f64, x.m as f64, x.k as f64, x.l);
    let s = &before.summary;
    (1.0 - m / (4.0 * n)) * before.memory_drift
        + m * n.powf(2.0 / 3.0) * k / (36.0 * l * l) * (s.g_u + m / n * s.g_v)
        + m * m / (18.0 * l * l) * (x.sigma_u2 / m + m * x.sigma_v2 / n)
}

impl LemmaClaim for CcywLemma {
    fn id(&self) -> &'static str {
        match self {
            CcywLemma::DriftFedAvgP { tight_v: false } => "CCYW-L3.5",
            CcywLemma::DriftFedAvgP { tight_v: true } => "CCYW-L3.5~tight-v",
            CcywLemma::GradientSumBgd => "CCYW-L3.6-BGD",
            CcywLemma::GradientSumFull => "CCYW-L3.6-FULL",
            CcywLemma::DriftScaffoldP => "CCYW-L4.3",
            CcywLemma::MemoryRecursion => "CCYW-L4.4",
        }
    }
    fn algorithm(&self) -> AlgorithmKind {
        match self {
            CcywLemma::DriftScaffoldP | CcywLemma::MemoryRecursion => AlgorithmKind::ScaffoldP,
            _ => AlgorithmKind::FedavgP,
        }
    }
    fn title(&self) -> &'static str {
        match self {
            CcywLemma::DriftFedAvgP { .. } => "FedAvg-P client drift E^t (Lemma 3.5)",
            CcywLemma::GradientSumBgd => "B^t under BGD (Lemma 3.6, part 1)",
            CcywLemma::GradientSumFull => "B^t recursion with full participation (Lemma 3.6, part 2)",
            CcywLemma::DriftScaffoldP => "Scaffold-P client drift E^t (Lemma 4.3)",
            CcywLemma::MemoryRecursion => "Scaffold-P memory drift C^t recursion (Lemma 4.4)",
        }
    }
    fn source(&self) -> &'static str {
        match self {
            CcywLemma::DriftFedAvgP { tight_v: false } => "000:L241-245; 002:L237-241",
            CcywLemma::DriftFedAvgP { tight_v: true } => "000:L291",
            CcywLemma::GradientSumBgd => "000:L296",
            CcywLemma::GradientSumFull => "000:L296-302; 002:L277-283",
            CcywLemma::DriftScaffoldP => "000:L571-575; 002:L524-530",
            CcywLemma::MemoryRecursion => "000:L579-583; 002:L532-540",
        }
    }
    fn inequality(&self) -> &'static str {
        match self {
            CcywLemma::DriftFedAvgP { .. } => "E^t <= 8K^2(K-1) gamma_u^2 B^t + 8nK^3 gamma_v^2 G_v^t + 4nK^2(sigma_u^2 gamma_u^2 + sigma_v^2 gamma_v^2)",
            CcywLemma::GradientSumBgd => "B^t <= n G_u^t + n b^2",
            CcywLemma::GradientSumFull => "B^t <= (1 + 2/(T-1)) B^{t-1} + 2nT (G_u^{t-1} + G_v^{t-1}) + (2nT/K)(sigma_u^2/n + sigma_v^2)",
            CcywLemma::DriftScaffoldP => {
                "E^t <= 96L^2K^2 gamma_u^2 C^t + 24nK^3 gamma_u^2 G_u^t + 8nK^3 gamma_v^2 G_v^t + 52nK^2(sigma_u^2 gamma_u^2 + sigma_v^2 gamma_v^2)"
            }
            CcywLemma::MemoryRecursion => {
                "C^t <= (1 - m/(4n)) C^{t-1} + (m n^{2/3} K/(36L^2))(G_u^{t-1} + hat G_v^{t-1}) + (m^2/(18L^2))(sigma_u^2/m + m sigma_v^2/n)"
            }
        }
    }
    fn reading(&self) -> Reading {
        match self {
            CcywLemma::DriftFedAvgP { tight_v: true } => Reading {
                name: "tight-v",
                is_variant: true,
                description: "I-CCYW4: the proof's last line, 8nK^2(K-1) gamma_v^2 G_v (tighter than the statement's 8nK^3)",
            },
            CcywLemma::MemoryRecursion => Reading {
                name: "primary",
                is_variant: false,
                description: "as printed, with the garbled 'ct ... c^{t-1}' of 000:L582 read as C^t, C^{t-1}; its proof's first step is suspect (I-CCYW10)",
            },
            _ => Reading { name: "primary", is_variant: false, description: "as printed" },
        }
    }
    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck> {
        let (n, m, k, l) = (x.n as f64, x.m as f64, x.k as f64, x.l);
        let mut out = base_assumptions();
        // The paper's standing `gamma_u eta_u = gamma_v eta_v` (000:L50) binds every lemma whose
        // statement has a step size (after its scope); part 1 of Lemma 3.6 is Assumption 2.3 at a
        // state.
        if !matches!(self, CcywLemma::GradientSumBgd | CcywLemma::GradientSumFull) {
            standing(x, &mut out);
        }
        let squares = x.gamma_u * x.gamma_u + x.gamma_v * x.gamma_v;
        match self {
            CcywLemma::DriftFedAvgP { .. } => {
                out.push(step("4 L^2 K (K-1) (gamma_u^2 + gamma_v^2) <= 1", 4.0 * l * l * k * (k - 1.0) * squares, Relation::AtMost, 1.0))
            }
            CcywLemma::GradientSumBgd => out.push(match x.b2 {
                Some(b2) => ConditionCheck::assumption("A2.3 bounded gradient dissimilarity", true, format!("b^2 = {b2:.6e}")),
                None => ConditionCheck::assumption("A2.3 bounded gradient dissimilarity", false, "the supremum b^2 is infinite"),
            }),
            CcywLemma::GradientSumFull => {
                out.push(ConditionCheck::compare("m = n (full participation)", ConditionKind::Scope, m, Relation::Equal, n));
                standing(x, &mut out);
                if x.du > 0 {
                    out.push(step("eta_u >= max(T, sqrt(n))", x.eta_u, Relation::AtLeast, (x.t as f64).max(n.sqrt())));
                }
                if x.dv > 0 {
                    out.push(step("eta_v >= 1", x.eta_v, Relation::AtLeast, 1.0));
                }
                out.push(step("gamma <= 1/(8 L K)", x.gamma(), Relation::AtMost, 1.0 / (8.0 * l * k)));
                out.push(ConditionCheck::compare("T >= 2 (the recursion divides by T - 1)", ConditionKind::Implicit, x.t as f64, Relation::AtLeast, 2.0));
            }
            CcywLemma::DriftScaffoldP => {
                out.push(step("12 L^2 K (K-1) (gamma_u^2 + gamma_v^2) <= 1", 12.0 * l * l * k * (k - 1.0) * squares, Relation::AtMost, 1.0))
            }
            CcywLemma::MemoryRecursion => {
                if x.du > 0 {
                    out.push(step("eta_u >= sqrt(m)", x.eta_u, Relation::AtLeast, m.sqrt()));
                }
                if x.dv > 0 {
                    out.push(step("eta_v >= sqrt(n/m)", x.eta_v, Relation::AtLeast, (n / m).sqrt()));
                }
                let gmax = (m / n.powf(2.0 / 3.0)).min(1.0) / (72.0 * l * k);
                out.push(step("gamma <= min(m/n^(2/3), 1)/(72 L K)", x.gamma(), Relation::AtMost, gmax));
            }
        }
        out
    }
    fn sides(&self, x: &ClaimInputs, now: &LemmaQuantities, before: Option<&LemmaQuantities>) -> Option<(f64, f64)> {
        let s = &now.summary;
        match self {
            CcywLemma::DriftFedAvgP { tight_v } => Some((now.drift, lemma_3_5_rhs(x, s.b_sum, s.g_v, *tight_v))),
            CcywLemma::GradientSumBgd => Some((s.b_sum, x.n as f64 * (s.g_u + x.b2.unwrap_or(f64::INFINITY)))),
            CcywLemma::GradientSumFull => before.map(|b| (s.b_sum, lemma_3_6_rhs(x, b))),
            CcywLemma::DriftScaffoldP => Some((now.drift, lemma_4_3_rhs(x, now))),
            CcywLemma::MemoryRecursion => before.map(|b| (now.memory_drift, lemma_4_4_rhs(x, b))),
        }
    }
    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps {
        let (n, m, k, l) = (x.n as f64, x.m as f64, x.k as f64, x.l);
        let free = |gamma: f64| AdmissibleSteps::at_least(GammaRule::AtMost(gamma), 1.0, 1.0);
        match self {
            CcywLemma::DriftFedAvgP { .. } => free(drift_gamma(x, 4.0)),
            CcywLemma::DriftScaffoldP => free(drift_gamma(x, 12.0)),
            CcywLemma::GradientSumBgd => free(unconditioned_gamma(x)),
            CcywLemma::GradientSumFull => AdmissibleSteps::at_least(GammaRule::AtMost(1.0 / (8.0 * l * k)), (x.t as f64).max(n.sqrt()), 1.0),
            CcywLemma::MemoryRecursion => {
                AdmissibleSteps::at_least(GammaRule::AtMost((m / n.powf(2.0 / 3.0)).min(1.0) / (72.0 * l * k)), m.sqrt(), (n / m).sqrt())
            }
        }
    }
}

/// Evaluates `lemma` on each replicate's per-round quantities (see
/// [`evaluate_inequality`]); `bound_scale` multiplies the right-hand side (negative controls).
pub fn evaluate_lemma(
    lemma: &dyn LemmaClaim,
    inputs: &ClaimInputs,
    quantities: &[Vec<LemmaQuantities>],
    estimator: Estimator,
    confidence: f64,
    bound_scale: f64,
) -> Evaluation {
    let rounds = quantities.first().map_or(0, Vec::len);
    let sides_at = |t: usize| replicate_sides(lemma, inputs, quantities, t);
    evaluate_inequality(lemma.checks(inputs), rounds, &sides_at, estimator, confidence, bound_scale)
}

/// Each replicate's `(lhs, rhs)` of `lemma` at round `t`, or `None` where the lemma says nothing.
fn replicate_sides(lemma: &dyn LemmaClaim, inputs: &ClaimInputs, quantities: &[Vec<LemmaQuantities>], t: usize) -> Option<Vec<(f64, f64)>> {
    quantities.iter().map(|q| lemma.sides(inputs, &q[t], t.checked_sub(1).map(|b| &q[b]))).collect()
}

/// The estimated `observed / bound` of `lemma` over the replicates' rounds (the adversarial
/// search's objective, whatever its conditions say):
///
/// # Formula
/// `max_t mean_r lhs_{r,t} / (bound_scale mean_r rhs_{r,t})` over the rounds the lemma compares.
/// A round where both means are 0 holds with equality and compares nothing (0 when no round
/// compares); a NaN (a diverged run, `0/0` in a side) counts as infinity, never as a number.
pub fn sides_ratio(lemma: &dyn LemmaClaim, inputs: &ClaimInputs, quantities: &[Vec<LemmaQuantities>], bound_scale: f64) -> f64 {
    let rounds = quantities.first().map_or(0, Vec::len);
    (0..rounds)
        .filter_map(|t| replicate_sides(lemma, inputs, quantities, t))
        .filter_map(|sides| {
            let r = sides.len() as f64;
            let lhs = sides.iter().map(|s| s.0).sum::<f64>() / r;
            let rhs = bound_scale * sides.iter().map(|s| s.1).sum::<f64>() / r;
            (lhs != 0.0 || rhs != 0.0).then(|| lhs / rhs)
        })
        .fold(0.0f64, |a, r| if r.is_nan() { f64::INFINITY } else { a.max(r) })
}
