//! Claims: bound functions, the metric each bounds, and its assumptions and conditions.
//!
//! A claim never sees a run. It maps [`ClaimInputs`] (exact constants of the instance, the
//! algorithm's parameters and the horizon `T`) to a bound and to a list of checks, each of which
//! carries the required and the given value, so a verdict of "not applicable" says by how much.

pub mod fedavg_p;
pub mod lemmas;
pub mod scaffold_p;

pub use lemmas::LemmaClaim;

use serde::Serialize;

pub use crate::claim::{fmt_num, BoundClaim, ConditionCheck, ConditionKind, Horizon, Reading, Relation};

use super::algorithm::AlgorithmKind;
use super::problem::GradientSummary;

/// Everything a claim's bound and conditions may depend on.
///
/// `b2 = None` means Assumption 2.3 cannot hold for the instance (the supremum is infinite).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClaimInputs {
    /// Clients `n`.
    pub n: usize,
    /// Sampled clients per round `m`.
    pub m: usize,
    /// Local steps `K`.
    pub k: usize,
    /// Horizon `T` (number of outer rounds averaged).
    pub t: usize,
    /// Dimension of `u` (0: no shared variable).
    pub du: usize,
    /// Dimension of `v_i` (0: no personal variables).
    pub dv: usize,
    /// `L`.
    pub l: f64,
    /// `F_0`.
    pub f0: f64,
    /// `b^2`, or `None` when infinite.
    pub b2: Option<f64>,
    /// `sigma_u^2`.
    pub sigma_u2: f64,
    /// `sigma_v^2`.
    pub sigma_v2: f64,
    /// `B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2`.
    pub b0: f64,
    /// Literal reading of `B^0` (I-CCYW5): `n ||grad_u f(u^0, v^0)||^2`.
    pub b0_literal: f64,
    /// `gamma_u`.
    pub gamma_u: f64,
    /// `gamma_v`.
    pub gamma_v: f64,
    /// `eta_u`.
    pub eta_u: f64,
    /// `eta_v`.
    pub eta_v: f64,
}

impl ClaimInputs {
    /// `gamma = gamma_u eta_u` (000:L50).
    pub fn gamma(&self) -> f64 {
        if self.du > 0 {
            self.gamma_u * self.eta_u
        } else {
            self.gamma_v * self.eta_v
        }
    }
}

impl Horizon for ClaimInputs {
    fn horizon(&self) -> usize {
        self.t
    }
    /// The same inputs at another horizon (conditions and bounds are evaluated per checkpoint).
    fn at_horizon(&self, t: usize) -> Self {
        Self { t, ..*self }
    }
}

/// Which metric of Table 1 (002:L66-77) a claim bounds, per round `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// `G_u^t + hat G_v^t`, with `hat G_v = (m/n) G_v` (partial participation).
    SharedPlusWeightedPersonal,
    /// `G_u^t + G_v^t` (full participation).
    SharedPlusPersonal,
}

impl Metric {
    /// The metric's value at one state, from its gradient summary.
    pub fn value(&self, s: &GradientSummary, m: usize, n: usize) -> f64 {
        self.of(s.g_u, s.g_v, m, n)
    }
    /// The metric's value from `G_u` and `G_v`, all it reads.
    pub fn of(&self, g_u: f64, g_v: f64, m: usize, n: usize) -> f64 {
        match self {
            Metric::SharedPlusWeightedPersonal => g_u + (m as f64 / n as f64) * g_v,
            Metric::SharedPlusPersonal => g_u + g_v,
        }
    }
    /// Formula for reports.
    pub fn formula(&self) -> &'static str {
        match self {
            Metric::SharedPlusWeightedPersonal => "(1/T) sum_t (G_u^t + hat G_v^t)",
            Metric::SharedPlusPersonal => "(1/T) sum_t (G_u^t + G_v^t)",
        }
    }
}

/// Largest admissible effective step of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum GammaRule {
    /// Any `gamma <= value`.
    AtMost(f64),
    /// Any `gamma < value` (a card's strict condition).
    Below(f64),
    /// `gamma` must equal this value (a corollary's choice).
    Exactly(f64),
}

impl GammaRule {
    /// The largest admissible `gamma`: the value, or just inside a strict limit
    /// ([`crate::prec::strictly_inside`]).
    pub fn value(&self) -> f64 {
        match self {
            GammaRule::AtMost(x) | GammaRule::Exactly(x) => *x,
            GammaRule::Below(x) => crate::prec::strictly_inside(*x, true),
        }
    }

    /// The rule as a condition on `gamma`, e.g. `gamma < 0.01`.
    pub fn describe(&self) -> String {
        let (relation, x) = match self {
            GammaRule::AtMost(x) => ("<=", x),
            GammaRule::Below(x) => ("<", x),
            GammaRule::Exactly(x) => ("=", x),
        };
        format!("gamma {relation} {}", crate::claim::fmt_num(*x))
    }
}

/// Smallest admissible outer step (`eta_u` or `eta_v`) of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum EtaRule {
    /// Any `eta >= value`.
    AtLeast(f64),
    /// Any `eta > value` (a card's strict condition).
    Above(f64),
    /// `eta` must equal this value (a card's `eta = ...`).
    Exactly(f64),
}

impl EtaRule {
    /// The smallest admissible `eta`: the value, or just inside a strict limit
    /// ([`crate::prec::strictly_inside`]).
    pub fn value(&self) -> f64 {
        match self {
            EtaRule::AtLeast(x) | EtaRule::Exactly(x) => *x,
            EtaRule::Above(x) => crate::prec::strictly_inside(*x, false),
        }
    }

    /// Whether the step is prescribed rather than bounded below.
    pub fn is_exact(&self) -> bool {
        matches!(self, EtaRule::Exactly(_))
    }

    /// The rule as a condition on the step `name`, e.g. `eta_u > 3`.
    pub fn describe(&self, name: &str) -> String {
        let (relation, x) = match self {
            EtaRule::AtLeast(x) => (">=", x),
            EtaRule::Above(x) => (">", x),
            EtaRule::Exactly(x) => ("=", x),
        };
        format!("{name} {relation} {}", crate::claim::fmt_num(*x))
    }
}

/// Step sizes a claim admits, given the instance and `(n, m, K, T)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AdmissibleSteps {
    /// Largest (or prescribed) `gamma`.
    pub gamma: GammaRule,
    /// Smallest (or prescribed) `eta_u`.
    pub eta_u: EtaRule,
    /// Smallest (or prescribed) `eta_v`.
    pub eta_v: EtaRule,
}

impl AdmissibleSteps {
    /// Steps bounded by `gamma`, with `eta_u >= eta_u_min` and `eta_v >= eta_v_min`.
    pub fn at_least(gamma: GammaRule, eta_u_min: f64, eta_v_min: f64) -> Self {
        Self { gamma, eta_u: EtaRule::AtLeast(eta_u_min), eta_v: EtaRule::AtLeast(eta_v_min) }
    }
}

/// An executable claim of this family: a bound on a metric of Table 1 for one algorithm, with
/// the step sizes it admits.
pub trait Claim: BoundClaim<Inputs = ClaimInputs> {
    /// The algorithm the claim is about.
    fn algorithm(&self) -> AlgorithmKind;
    /// The bounded metric.
    fn metric(&self) -> Metric;
    /// Admissible step sizes at these inputs (`gamma_*`, `eta_*` of `x` are ignored).
    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps;
}

/// Every built-in claim, in report order (a card's own claims: `card_claims::Catalog`).
pub fn all_claims() -> Vec<&'static dyn Claim> {
    let fedavg = fedavg_p::FEDAVG_P_CLAIMS.iter().map(|c| c as &dyn Claim);
    let scaffold = scaffold_p::SCAFFOLD_P_CLAIMS.iter().map(|c| c as &dyn Claim);
    fedavg.chain(scaffold).collect()
}

/// The ids of the built-in claims and lemmas.
pub fn builtin_ids() -> Vec<&'static str> {
    let fedavg = fedavg_p::FEDAVG_P_CLAIMS.iter().map(|c| c.id());
    let scaffold = scaffold_p::SCAFFOLD_P_CLAIMS.iter().map(|c| c.id());
    fedavg.chain(scaffold).chain(all_lemmas().iter().map(|c| c.id())).collect()
}

/// Every registered lemma, in report order.
pub fn all_lemmas() -> Vec<&'static dyn LemmaClaim> {
    lemmas::CCYW_LEMMAS.iter().map(|c| c as &dyn LemmaClaim).collect()
}

/// Every built-in claim and lemma id.
pub fn all_ids() -> Vec<&'static str> {
    all_claims().iter().map(|c| c.id()).chain(all_lemmas().iter().map(|c| c.id())).collect()
}

/// Looks a lemma up by id.
pub fn lemma_by_id(id: &str) -> Option<&'static dyn LemmaClaim> {
    all_lemmas().into_iter().find(|c| c.id() == id)
}

/// Looks a claim up by id.
pub fn by_id(id: &str) -> Option<&'static dyn Claim> {
    all_claims().into_iter().find(|c| c.id() == id)
}

/// A step-size condition. A prescribed step (`=`) is positive in real arithmetic: where it
/// computes to 0, a subnormal or no finite number (its terms overflow or underflow at these
/// inputs' scales), it cannot be compared, and the condition is unevaluated (it fails) rather
/// than matched against a rounded-away zero.
pub(super) fn step(name: &str, given: f64, relation: Relation, required: f64) -> ConditionCheck {
    if relation == Relation::Equal && !(required.is_normal() && required > 0.0) {
        let why = format!("the prescribed step computes to {} at these inputs' scales (overflow or underflow)", crate::claim::fmt_num(required));
        return ConditionCheck::unevaluated(name, ConditionKind::StepSize, relation, why);
    }
    ConditionCheck::compare(name, ConditionKind::StepSize, given, relation, required)
}

/// The standing condition `gamma_u eta_u = gamma_v eta_v` of every convergence analysis of the
/// paper (000:L50), which defines their `gamma`; checked when both blocks exist.
pub(super) fn standing(x: &ClaimInputs, out: &mut Vec<ConditionCheck>) {
    if x.du > 0 && x.dv > 0 {
        out.push(step("gamma_v eta_v = gamma_u eta_u", x.gamma_v * x.eta_v, Relation::Equal, x.gamma_u * x.eta_u));
    }
}
