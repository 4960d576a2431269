//! This family's formula table: the names a card's formulas may use, where their values come
//! from, and which built-in function each formula of a built-in claim twins.
//!
//! A claim's formulas read the constants of the instance, the algorithm's parameters and the
//! horizon (`ClaimInputs`); a lemma's also read the per-round quantities of a run at `t` and `t-1`.

use crate::claim::BoundClaim;
use crate::formula::twin::{ConditionTwin, Twin, TwinTable};
use crate::formula::{Interval, Symbol};

use super::claims::fedavg_p::{self, CcywClaim};
use super::claims::lemmas::{CcywLemma, LemmaClaim};
use super::claims::scaffold_p::{self, ScaffoldClaim};
use super::claims::{ClaimInputs, Metric};
use super::lemma_estimates::LemmaQuantities;

const fn sym(name: &'static str, meaning: &'static str, range: Interval) -> Symbol {
    Symbol { name, meaning, range, assumption: None }
}

const COUNT: Interval = Interval::at_least(1.0);
const SIZE: Interval = Interval::at_least(0.0);
const POSITIVE: Interval = Interval::above(0.0);
const NON_NEGATIVE: Interval = Interval::at_least(0.0);

/// Index of the first per-round quantity (lemmas only): card-defined bounds may not read them.
pub const FIRST_RUN_QUANTITY: usize = 18;

/// The names a formula of this family may use, in slot order.
pub static SYMBOLS: [Symbol; 27] = [
    sym("n", "clients n", COUNT),
    sym("m", "sampled clients per round m (1 <= m <= n)", COUNT),
    sym("K", "local steps K", COUNT),
    sym("T", "horizon T (rounds averaged)", COUNT),
    sym("du", "dimension of u (0: no shared variable)", SIZE),
    sym("dv", "dimension of v_i (0: no personal variable)", SIZE),
    sym("L", "smoothness L (A2.1)", POSITIVE),
    sym("F0", "initial gap F0 = f(u^0, v^0) - inf f (every bound of the paper divides by it)", POSITIVE),
    Symbol {
        name: "b2",
        meaning: "BGD constant b^2 (A2.3), infinite on some instances",
        range: NON_NEGATIVE,
        assumption: Some("A2.3 bounded gradient dissimilarity"),
    },
    sym("sigma_u2", "gradient noise sigma_u^2 (A2.2)", NON_NEGATIVE),
    sym("sigma_v2", "gradient noise sigma_v^2 (A2.2)", NON_NEGATIVE),
    sym("B0", "B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2", NON_NEGATIVE),
    sym("B0_literal", "B^0 as printed at 000:L433, n ||grad_u f(u^0, v^0)||^2", NON_NEGATIVE),
    sym("gamma_u", "inner step gamma_u", POSITIVE),
    sym("gamma_v", "inner step gamma_v", POSITIVE),
    sym("eta_u", "outer step eta_u", POSITIVE),
    sym("eta_v", "outer step eta_v", POSITIVE),
    sym("gamma", "effective step gamma = gamma_u eta_u (gamma_v eta_v without u)", POSITIVE),
    sym("E_t", "lemmas: client drift E^t at round t", NON_NEGATIVE),
    sym("B_t", "lemmas: B^t = sum_i ||grad_u f_i(u^t, v_i^t)||^2", NON_NEGATIVE),
    sym("G_u_t", "lemmas: G_u^t = ||grad_u f(u^t, v^t)||^2", NON_NEGATIVE),
    sym("G_v_t", "lemmas: G_v^t = (1/n) sum_i ||grad_v f_i||^2", NON_NEGATIVE),
    sym("C_t", "lemmas: Scaffold-P memory drift C^t", NON_NEGATIVE),
    sym("B_prev", "lemmas: B^{t-1}", NON_NEGATIVE),
    sym("G_u_prev", "lemmas: G_u^{t-1}", NON_NEGATIVE),
    sym("G_v_prev", "lemmas: G_v^{t-1}", NON_NEGATIVE),
    sym("C_prev", "lemmas: C^{t-1}", NON_NEGATIVE),
];

/// The metrics a card-defined claim may bound, by name.
pub const METRICS: [(&str, Metric); 2] =
    [("shared_plus_weighted_personal", Metric::SharedPlusWeightedPersonal), ("shared_plus_personal", Metric::SharedPlusPersonal)];

/// The values of the claim symbols (per-round quantities NaN: a bound does not read them).
pub fn values(x: &ClaimInputs) -> Vec<f64> {
    let mut v = vec![
        x.n as f64,
        x.m as f64,
        x.k as f64,
        x.t as f64,
        x.du as f64,
        x.dv as f64,
        x.l,
        x.f0,
        x.b2.unwrap_or(f64::NAN),
        x.sigma_u2,
        x.sigma_v2,
        x.b0,
        x.b0_literal,
        x.gamma_u,
        x.gamma_v,
        x.eta_u,
        x.eta_v,
        x.gamma(),
    ];
    v.resize(SYMBOLS.len(), f64::NAN);
    v
}

/// A lemma's inputs: the claim inputs and a run's quantities at `t` and `t - 1`.
#[derive(Debug, Clone, Copy)]
pub struct LemmaInputs {
    /// Constants and parameters.
    pub x: ClaimInputs,
    /// Quantities at `t`.
    pub now: LemmaQuantities,
    /// Quantities at `t - 1`.
    pub before: LemmaQuantities,
}

/// Every symbol's value, per-round quantities included.
pub fn lemma_values(i: &LemmaInputs) -> Vec<f64> {
    let mut v = values(&i.x);
    v.truncate(FIRST_RUN_QUANTITY);
    let (s, p) = (&i.now.summary, &i.before.summary);
    v.extend([i.now.drift, s.b_sum, s.g_u, s.g_v, i.now.memory_drift, p.b_sum, p.g_u, p.g_v, i.before.memory_drift]);
    v
}

fn b2(x: &ClaimInputs) -> f64 {
    x.b2.unwrap_or(f64::INFINITY)
}

fn side(l: CcywLemma, i: &LemmaInputs, right: bool) -> f64 {
    l.sides(&i.x, &i.now, Some(&i.before)).map_or(f64::NAN, |(a, b)| if right { b } else { a })
}

macro_rules! lemma_sides {
    ($claim:expr, $lemma:expr) => {
        [
            Twin { claim: $claim, field: "lhs", builtin: |i: &LemmaInputs| side($lemma, i, false) },
            Twin { claim: $claim, field: "rhs", builtin: |i: &LemmaInputs| side($lemma, i, true) },
        ]
    };
}

/// Every built-in bound and condition of the family's bound claims beside the name of its formula.
pub fn claim_twins() -> TwinTable<ClaimInputs> {
    let fields = vec![
        Twin { claim: "CCYW-T3.7", field: "bound", builtin: |x| fedavg_p::theorem_3_7_bound(x, b2(x)) },
        Twin { claim: "CCYW-T3.7", field: "let.X", builtin: |x| fedavg_p::partial_participation_factor(x, b2(x)) },
        Twin { claim: "CCYW-C3.8", field: "bound", builtin: |x| fedavg_p::corollary_3_8_bound(x, b2(x)) },
        Twin { claim: "CCYW-C3.8", field: "let.gamma_star", builtin: |x| fedavg_p::corollary_3_8_gamma(x, b2(x)) },
        Twin { claim: "CCYW-T3.11", field: "bound", builtin: fedavg_p::theorem_3_11_bound },
        Twin { claim: "CCYW-T3.11", field: "let.eta_u_min", builtin: |x| fedavg_p::theorem_3_11_eta_u_min(x, x.b0) },
        Twin { claim: "CCYW-T3.11~b0-literal", field: "bound", builtin: fedavg_p::theorem_3_11_bound },
        Twin { claim: "CCYW-T3.11~b0-literal", field: "let.eta_u_min", builtin: |x| fedavg_p::theorem_3_11_eta_u_min(x, x.b0_literal) },
        Twin { claim: "CCYW-T3.11-RATE", field: "bound", builtin: fedavg_p::theorem_3_11_rate_bound },
        Twin { claim: "CCYW-T3.11-RATE", field: "let.gamma_star", builtin: fedavg_p::theorem_3_11_rate_gamma },
        Twin { claim: "CCYW-SC-FEDAVG-PART", field: "bound", builtin: |x| fedavg_p::corollary_3_8_bound(x, b2(x)) },
        Twin { claim: "CCYW-SC-PSGD", field: "bound", builtin: |x| fedavg_p::corollary_3_8_bound(x, b2(x)) },
        Twin { claim: "CCYW-SC-FEDAVG-FULL", field: "bound", builtin: fedavg_p::theorem_3_11_rate_bound },
        Twin { claim: "CCYW-T4.5", field: "bound", builtin: scaffold_p::theorem_4_5_bound },
        Twin { claim: "CCYW-T4.5", field: "let.gamma_max", builtin: scaffold_p::theorem_4_5_gamma_max },
        Twin { claim: "CCYW-C4.6", field: "bound", builtin: scaffold_p::corollary_4_6_bound },
        Twin { claim: "CCYW-C4.6", field: "let.gamma_star", builtin: scaffold_p::corollary_4_6_gamma },
        Twin { claim: "CCYW-SC-SCAFFOLD", field: "bound", builtin: scaffold_p::corollary_4_6_bound },
    ];
    let mut conditions: Vec<ConditionTwin<ClaimInputs>> = Vec::new();
    for c in fedavg_p::FEDAVG_P_CLAIMS {
        conditions.push(ConditionTwin { claim: c.id(), builtin: fedavg_conditions(c) });
    }
    for c in scaffold_p::SCAFFOLD_P_CLAIMS {
        conditions.push(ConditionTwin { claim: c.id(), builtin: scaffold_conditions(c) });
    }
    TwinTable { symbols: &SYMBOLS, values, fields, conditions }
}

fn fedavg_conditions(c: CcywClaim) -> fn(&ClaimInputs) -> Vec<crate::claim::ConditionCheck> {
    match c {
        CcywClaim::Theorem37 => |x| CcywClaim::Theorem37.checks(x),
        CcywClaim::Corollary38 => |x| CcywClaim::Corollary38.checks(x),
        CcywClaim::Theorem311 { literal_b0: false } => |x| CcywClaim::Theorem311 { literal_b0: false }.checks(x),
        CcywClaim::Theorem311 { literal_b0: true } => |x| CcywClaim::Theorem311 { literal_b0: true }.checks(x),
        CcywClaim::Theorem311Rate => |x| CcywClaim::Theorem311Rate.checks(x),
        CcywClaim::SpecialFedAvgPartial => |x| CcywClaim::SpecialFedAvgPartial.checks(x),
        CcywClaim::SpecialParallelSgd => |x| CcywClaim::SpecialParallelSgd.checks(x),
        CcywClaim::SpecialFedAvgFull => |x| CcywClaim::SpecialFedAvgFull.checks(x),
    }
}

fn scaffold_conditions(c: ScaffoldClaim) -> fn(&ClaimInputs) -> Vec<crate::claim::ConditionCheck> {
    match c {
        ScaffoldClaim::Theorem45 => |x| ScaffoldClaim::Theorem45.checks(x),
        ScaffoldClaim::Corollary46 => |x| ScaffoldClaim::Corollary46.checks(x),
        ScaffoldClaim::SpecialScaffold => |x| ScaffoldClaim::SpecialScaffold.checks(x),
    }
}

/// Every built-in side and condition of the family's lemmas beside the name of its formula.
pub fn lemma_twins() -> TwinTable<LemmaInputs> {
    let mut fields: Vec<Twin<LemmaInputs>> = Vec::new();
    fields.extend(lemma_sides!("CCYW-L3.5", CcywLemma::DriftFedAvgP { tight_v: false }));
    fields.extend(lemma_sides!("CCYW-L3.5~tight-v", CcywLemma::DriftFedAvgP { tight_v: true }));
    fields.extend(lemma_sides!("CCYW-L3.6-BGD", CcywLemma::GradientSumBgd));
    fields.extend(lemma_sides!("CCYW-L3.6-FULL", CcywLemma::GradientSumFull));
    fields.extend(lemma_sides!("CCYW-L4.3", CcywLemma::DriftScaffoldP));
    fields.extend(lemma_sides!("CCYW-L4.4", CcywLemma::MemoryRecursion));
    let conditions = vec![
        ConditionTwin { claim: "CCYW-L3.5", builtin: |i: &LemmaInputs| CcywLemma::DriftFedAvgP { tight_v: false }.checks(&i.x) },
        ConditionTwin { claim: "CCYW-L3.5~tight-v", builtin: |i: &LemmaInputs| CcywLemma::DriftFedAvgP { tight_v: true }.checks(&i.x) },
        ConditionTwin { claim: "CCYW-L3.6-BGD", builtin: |i: &LemmaInputs| CcywLemma::GradientSumBgd.checks(&i.x) },
        ConditionTwin { claim: "CCYW-L3.6-FULL", builtin: |i: &LemmaInputs| CcywLemma::GradientSumFull.checks(&i.x) },
        ConditionTwin { claim: "CCYW-L4.3", builtin: |i: &LemmaInputs| CcywLemma::DriftScaffoldP.checks(&i.x) },
        ConditionTwin { claim: "CCYW-L4.4", builtin: |i: &LemmaInputs| CcywLemma::MemoryRecursion.checks(&i.x) },
    ];
    TwinTable { symbols: &SYMBOLS, values: lemma_values, fields, conditions }
}
