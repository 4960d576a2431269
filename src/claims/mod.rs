//! Claims: bound functions, the metric each bounds, and its assumptions and conditions.
//!
//! A claim never sees a run. It maps [`ClaimInputs`] (exact constants of the instance, the
//! algorithm's parameters and the horizon `T`) to a bound and to a list of checks, each of which
//! carries the required and the given value, so a verdict of "not applicable" says by how much.

pub mod ccyw;
pub mod ccyw_scaffold;
pub mod lemmas;

pub use lemmas::LemmaClaim;

use serde::Serialize;
use std::fmt;

use crate::algorithm::AlgorithmKind;
use crate::prec;
use crate::problem::GradientSummary;

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
    /// The same inputs at another horizon (conditions and bounds are evaluated per checkpoint).
    pub fn at_horizon(&self, t: usize) -> Self {
        Self { t, ..*self }
    }
}

/// How a condition compares the given value with the required one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// given <= required
    AtMost,
    /// given >= required
    AtLeast,
    /// given = required (up to [`prec::RELATIVE_IDENTITY`])
    Equal,
}

/// One checked assumption, scope restriction or step-size condition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionCheck {
    /// What is compared, in the paper's words, e.g. `gamma <= 1/(32 L K)`.
    pub name: String,
    /// Kind: assumption, scope, step-size, or implicit (a condition the proof uses but the
    /// statement omits; reported, never a reason for "not applicable").
    pub kind: ConditionKind,
    /// The quantity's given value.
    pub given: f64,
    /// The bound it must respect.
    pub required: f64,
    /// The comparison.
    pub relation: Relation,
    /// Whether it holds.
    pub holds: bool,
    /// Free-text detail (e.g. why an assumption fails).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// What a [`ConditionCheck`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConditionKind {
    /// An assumption of the theorem on the instance (e.g. BGD).
    Assumption,
    /// The setting the claim is about (e.g. `m = n`, no personal variable).
    Scope,
    /// A step-size or parameter condition stated by the theorem.
    StepSize,
    /// A condition the proof needs but the statement does not print.
    Implicit,
}

impl ConditionCheck {
    /// A numeric comparison.
    pub fn compare(name: impl Into<String>, kind: ConditionKind, given: f64, relation: Relation, required: f64) -> Self {
        let holds = match relation {
            Relation::AtMost => prec::le_tol(given, required),
            Relation::AtLeast => prec::ge_tol(given, required),
            Relation::Equal => prec::approx_eq(given, required, prec::RELATIVE_IDENTITY),
        };
        Self { name: name.into(), kind, given, required, relation, holds, detail: String::new() }
    }

    /// An assumption that holds or fails as a whole (given/required are 1/0 flags).
    pub fn assumption(name: impl Into<String>, holds: bool, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind: ConditionKind::Assumption,
            given: if holds { 1.0 } else { 0.0 },
            required: 1.0,
            relation: Relation::Equal,
            holds,
            detail: detail.into(),
        }
    }

    /// Whether a failure of this check makes the claim not applicable.
    pub fn is_binding(&self) -> bool {
        self.kind != ConditionKind::Implicit
    }
}

impl fmt::Display for ConditionCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == ConditionKind::Assumption {
            let state = if self.holds { "holds" } else { "fails" };
            return if self.detail.is_empty() {
                write!(f, "{} {state}", self.name)
            } else {
                write!(f, "{} {state}: {}", self.name, self.detail)
            };
        }
        let op = match (self.relation, self.holds) {
            (Relation::AtMost, true) => "<=",
            (Relation::AtMost, false) => ">",
            (Relation::AtLeast, true) => ">=",
            (Relation::AtLeast, false) => "<",
            (Relation::Equal, true) => "=",
            (Relation::Equal, false) => "!=",
        };
        write!(f, "{}: given {} {op} required {}", self.name, fmt_num(self.given), fmt_num(self.required))
    }
}

/// Compact number formatting for messages.
pub fn fmt_num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e5).contains(&x.abs()) {
        let s = format!("{x:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{x:.4e}")
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
        match self {
            Metric::SharedPlusWeightedPersonal => s.g_u + (m as f64 / n as f64) * s.g_v,
            Metric::SharedPlusPersonal => s.g_u + s.g_v,
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
    /// `gamma` must equal this value (a corollary's choice).
    Exactly(f64),
}

impl GammaRule {
    /// The numeric value.
    pub fn value(&self) -> f64 {
        match self {
            GammaRule::AtMost(x) | GammaRule::Exactly(x) => *x,
        }
    }
}

/// Step sizes a claim admits, given the instance and `(n, m, K, T)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AdmissibleSteps {
    /// Largest (or prescribed) `gamma`.
    pub gamma: GammaRule,
    /// Smallest `eta_u`.
    pub eta_u_min: f64,
    /// Smallest `eta_v`.
    pub eta_v_min: f64,
}

/// The reading of a statement a claim encodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    /// `primary` for the reading the proof supports, else the variant's name.
    pub name: &'static str,
    /// Whether this is a flagged variant (an alternative reading of an inconsistent statement).
    pub is_variant: bool,
    /// What the reading is and why.
    pub description: &'static str,
}

/// An executable claim.
pub trait Claim: Sync + Send {
    /// ID as in CLAIMS.md, e.g. `CCYW-T3.7`; variants append `~name`.
    fn id(&self) -> &'static str;
    /// The algorithm the claim is about.
    fn algorithm(&self) -> AlgorithmKind;
    /// One-line title.
    fn title(&self) -> &'static str;
    /// Source lines in the paper text.
    fn source(&self) -> &'static str;
    /// Which reading this is.
    fn reading(&self) -> Reading;
    /// The bounded metric.
    fn metric(&self) -> Metric;
    /// Whether the bound holds for every prefix `T' <= T` of a run (conditions re-checked at
    /// each `T'`), or only at the horizon `T` itself (e.g. when `gamma` is a function of `T`).
    fn every_prefix(&self) -> bool;
    /// All checks (assumptions, scope, step sizes) at these inputs.
    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck>;
    /// The bound on the metric's running average over `T = x.t` rounds.
    fn bound(&self, x: &ClaimInputs) -> f64;
    /// Admissible step sizes at these inputs (`gamma_*`, `eta_*` of `x` are ignored).
    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps;
}

/// Every registered claim, in report order.
pub fn all_claims() -> Vec<&'static dyn Claim> {
    let fedavg = ccyw::FEDAVG_P_CLAIMS.iter().map(|c| c as &dyn Claim);
    let scaffold = ccyw_scaffold::SCAFFOLD_P_CLAIMS.iter().map(|c| c as &dyn Claim);
    fedavg.chain(scaffold).collect()
}

/// Every registered lemma, in report order.
pub fn all_lemmas() -> Vec<&'static dyn LemmaClaim> {
    lemmas::CCYW_LEMMAS.iter().map(|c| c as &dyn LemmaClaim).collect()
}

/// Every registered claim and lemma id.
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
