//! This family's formula table: the names a card's formulas may use, where their values come
//! from, and which built-in function each formula of a built-in claim twins.
//!
//! A claim's formulas read the constants of the instance, the algorithm's parameters and the
//! horizon (`ClaimInputs`); a lemma's also read the per-round quantities of a run at `t` and `t-1`.

use crate::claim::BoundClaim;
use crate::formula::twin::{ConditionTwin, Twin, TwinTable};
use crate::formula::{RoundInputs, SymbolDef, SymbolTable, COUNT, NON_NEGATIVE, POSITIVE};

use super::claims::fedavg_p::{self, CcywClaim};
use super::claims::lemmas::{CcywLemma, LemmaClaim};
use super::claims::scaffold_p::{self, ScaffoldClaim};
use super::claims::{ClaimInputs, Metric};
use super::lemma_estimates::LemmaQuantities;

type Def = SymbolDef<ClaimInputs, LemmaRound>;

/// The names a formula of this family may use, in slot order, and where their values come from.
pub static SYMBOLS: SymbolTable<ClaimInputs, LemmaRound, 27> = SymbolTable::new([
    Def::new("n", "clients n", COUNT, |x| x.n as f64),
    Def::new("m", "sampled clients per round m (1 <= m <= n)", COUNT, |x| x.m as f64),
    Def::new("K", "local steps K", COUNT, |x| x.k as f64),
    Def::new("T", "horizon T (rounds averaged)", COUNT, |x| x.t as f64),
    Def::new("du", "dimension of u (0: no shared variable)", NON_NEGATIVE, |x| x.du as f64),
    Def::new("dv", "dimension of v_i (0: no personal variable)", NON_NEGATIVE, |x| x.dv as f64),
    Def::new("L", "smoothness L (A2.1)", POSITIVE, |x| x.l),
    Def::new("F0", "initial gap F0 = f(u^0, v^0) - inf f (every bound of the paper divides by it)", POSITIVE, |x| x.f0),
    Def::new("b2", "BGD constant b^2 (A2.3), infinite on some instances", NON_NEGATIVE, |x| x.b2.unwrap_or(f64::NAN))
        .assuming("A2.3 bounded gradient dissimilarity"),
    Def::new("sigma_u2", "gradient noise sigma_u^2 (A2.2)", NON_NEGATIVE, |x| x.sigma_u2),
    Def::new("sigma_v2", "gradient noise sigma_v^2 (A2.2)", NON_NEGATIVE, |x| x.sigma_v2),
    Def::new("B0", "B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2", NON_NEGATIVE, |x| x.b0),
    Def::new("B0_literal", "B^0 as printed at 000:L433, n ||grad_u f(u^0, v^0)||^2", NON_NEGATIVE, |x| x.b0_literal),
    Def::new("gamma_u", "inner step gamma_u", POSITIVE, |x| x.gamma_u),
    Def::new("gamma_v", "inner step gamma_v", POSITIVE, |x| x.gamma_v),
    Def::new("eta_u", "outer step eta_u", POSITIVE, |x| x.eta_u),
    Def::new("eta_v", "outer step eta_v", POSITIVE, |x| x.eta_v),
    Def::new("gamma", "effective step gamma = gamma_u eta_u (gamma_v eta_v without u)", POSITIVE, ClaimInputs::gamma),
    Def::per_round("E_t", "lemmas: client drift E^t at round t", NON_NEGATIVE).at_round(|i| i.round.now.drift),
    Def::per_round("B_t", "lemmas: B^t = sum_i ||grad_u f_i(u^t, v_i^t)||^2", NON_NEGATIVE).at_round(|i| i.round.now.summary.b_sum),
    Def::per_round("G_u_t", "lemmas: G_u^t = ||grad_u f(u^t, v^t)||^2", NON_NEGATIVE).at_round(|i| i.round.now.summary.g_u),
    Def::per_round("G_v_t", "lemmas: G_v^t = (1/n) sum_i ||grad_v f_i||^2", NON_NEGATIVE).at_round(|i| i.round.now.summary.g_v),
    Def::per_round("C_t", "lemmas: Scaffold-P memory drift C^t", NON_NEGATIVE).at_round(|i| i.round.now.memory_drift),
    Def::per_round("B_prev", "lemmas: B^{t-1}", NON_NEGATIVE).at_round(|i| i.round.before.summary.b_sum),
    Def::per_round("G_u_prev", "lemmas: G_u^{t-1}", NON_NEGATIVE).at_round(|i| i.round.before.summary.g_u),
    Def::per_round("G_v_prev", "lemmas: G_v^{t-1}", NON_NEGATIVE).at_round(|i| i.round.before.summary.g_v),
    Def::per_round("C_prev", "lemmas: C^{t-1}", NON_NEGATIVE).at_round(|i| i.round.before.memory_drift),
]);

/// The metrics a card-defined claim may bound, by name.
pub const METRICS: [(&str, Metric); 2] =
    [("shared_plus_weighted_personal", Metric::SharedPlusWeightedPersonal), ("shared_plus_personal", Metric::SharedPlusPersonal)];

/// A lemma's round: a run's quantities at `t` and `t - 1`.
#[derive(Debug, Clone, Copy)]
pub struct LemmaRound {
    /// Quantities at `t`.
    pub now: LemmaQuantities,
    /// Quantities at `t - 1`.
    pub before: LemmaQuantities,
}

/// A lemma's inputs: the claim inputs and a run's quantities at `t` and `t - 1`.
pub type LemmaInputs = RoundInputs<ClaimInputs, LemmaRound>;

fn b2(x: &ClaimInputs) -> f64 {
    x.b2.unwrap_or(f64::INFINITY)
}

fn side(l: CcywLemma, i: &LemmaInputs, right: bool) -> f64 {
    l.sides(&i.x, &i.round.now, Some(&i.round.before)).map_or(f64::NAN, |(a, b)| if right { b } else { a })
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
    TwinTable { symbols: SYMBOLS.symbols(), values: |x| SYMBOLS.values(x), fields, conditions }
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
    TwinTable { symbols: SYMBOLS.symbols(), values: |i| SYMBOLS.round_values(i), fields, conditions }
}
