//! This family's formula table: the names a card's formulas may use, where their values come
//! from, and which built-in function each formula of a built-in claim twins.
//!
//! `C` and `q` are estimated from the realised mixing products; a formula reads the estimates.
//! The orderings of runs (Remarks 1-3, Figure 3a) have no formula.

use crate::formula::twin::{ConditionTwin, Twin, TwinTable};
use crate::formula::{Interval, SymbolDef, SymbolTable, COUNT, NON_NEGATIVE, POSITIVE};

use super::claims::{self, Lemma2Reading, Rec32, Rec32Reading};
use super::problem::Constants;
use super::round::Params;
use super::topology::Connectivity;

type Def = SymbolDef<Inputs, ()>;

/// The names a formula of this family may use, in slot order, and where their values come from
/// (per-round quantities are NaN: they are the card's, built-in claims compare them in Rust).
pub static SYMBOLS: SymbolTable<Inputs, (), 26> = SymbolTable::new([
    Def::new("K_u", "local steps on u, K_u", COUNT, |x| x.params.k_u as f64),
    Def::new("K_v", "local steps on v, K_v", COUNT, |x| x.params.k_v as f64),
    Def::new("eta_u", "step eta_u", POSITIVE, |x| x.params.eta_u),
    Def::new("eta_v", "step eta_v", POSITIVE, |x| x.params.eta_v),
    Def::new("C", "Lemma 3's C, estimated from the mixing products", POSITIVE, |x| x.connectivity.c),
    Def::new("q", "Lemma 3's q, estimated (0 <= q < 1)", Interval::closed_open(0.0, 1.0), |x| x.connectivity.q),
    Def::new("delta", "delta = min_{i,t} mu_i^t (the family checks delta > 0 as an assumption of every claim)", Interval::open_closed(0.0, 1.0), |x| {
        x.connectivity.delta
    }),
    Def::new("L_u", "L_u = max_i ||A_i||", POSITIVE, |x| x.constants.l_u),
    Def::new("L_v", "L_v = max_i ||D_i||", POSITIVE, |x| x.constants.l_v),
    Def::new("L_vu", "L_vu = max_i ||B_i^T||", NON_NEGATIVE, |x| x.constants.l_vu),
    Def::new("sigma_u", "gradient noise sigma_u", NON_NEGATIVE, |x| x.constants.sigma_u),
    Def::new("sigma_v", "gradient noise sigma_v", NON_NEGATIVE, |x| x.constants.sigma_v),
    Def::new("sigma_g2", "gradient diversity sigma_g^2 (Assumption 4)", NON_NEGATIVE, |x| x.constants.sigma_g2.value.unwrap_or(f64::NAN))
        .assuming("Assumption 4 (sigma_g^2 finite)"),
    Def::new("F0", "F(ubar^0, V^0)", Interval::everything(), |x| x.f0),
    Def::new("F_star", "F* = min F", Interval::everything(), |x| x.constants.f_star),
    Def::new("T", "horizon T", COUNT, |x| x.t as f64),
    Def::per_round("consensus_t", "per-round: (1/m) sum_i E||ubar^t - z_i^t||^2", NON_NEGATIVE),
    Def::per_round("Delta_ubar_t", "per-round: E Delta_ubar^t", NON_NEGATIVE),
    Def::per_round("Delta_v_t", "per-round: E Delta_v^t", NON_NEGATIVE),
    Def::per_round("F_t", "per-round: E F(ubar^t, V^t)", Interval::everything()),
    Def::per_round("F_next", "per-round: E F(ubar^{t+1}, V^{t+1})", Interval::everything()),
    Def::per_round("v_drift_t", "per-round: E||v_i^{t,k} - v_i^t||^2 of a client and local step (Lemma 1)", NON_NEGATIVE),
    Def::per_round("v_grad_t", "per-round: E||grad_v F_i(z_i^t, v_i^t)||^2 of the same client (Lemma 1)", NON_NEGATIVE),
    Def::per_round("u_drift_t", "per-round: (1/m) sum_i E||u_i^{t,k} - u_i^t||^2 at a local step (Lemma 2)", NON_NEGATIVE),
    Def::per_round("u_grad_t", "per-round: (1/m) sum_i E||grad_u F(z_i^t, V^{t+1})||^2 (Lemma 2)", NON_NEGATIVE),
    Def::per_round("F_mid", "per-round: E F(ubar^t, V^{t+1}), between the round's v-step and its u-step ((26), (31))", Interval::everything()),
]);

/// Index of the first per-round quantity: the constants are the slots before it.
pub const FIRST_RUN_QUANTITY: usize = SYMBOLS.first_run_quantity();

/// Everything the family's bound functions read.
#[derive(Debug, Clone, PartialEq)]
pub struct Inputs {
    /// Exact constants.
    pub constants: Constants,
    /// Connectivity (delta, estimated C and q).
    pub connectivity: Connectivity,
    /// Steps and local steps.
    pub params: Params,
    /// `F(ubar^0, V^0)`.
    pub f0: f64,
    /// Horizon.
    pub t: usize,
}

fn rec32(x: &Inputs, r: Rec32Reading) -> Rec32 {
    Rec32::new(&x.constants, &x.connectivity, &x.params, r)
}

fn lemma2_steps(x: &Inputs) -> Vec<crate::claim::ConditionCheck> {
    vec![claims::lemma2_step(x.constants.l_u, x.connectivity.delta, &x.params)]
}

fn proof_steps(x: &Inputs) -> Vec<crate::claim::ConditionCheck> {
    claims::step_checks(&x.constants, &x.connectivity, &x.params, false)
}

/// The step conditions of Lemma 3 and the u-step (26): no `eta_v` ([`claims::lemma3_steps`]).
fn lemma3_steps(x: &Inputs, reading: claims::AaReading) -> Vec<crate::claim::ConditionCheck> {
    claims::lemma3_steps(&x.constants, &x.connectivity, &x.params, reading)
}

/// Every built-in bound and condition of the family beside the name of its formula.
pub fn claim_twins() -> TwinTable<Inputs> {
    let fields: Vec<Twin<Inputs>> = vec![
        Twin { claim: "DPGP-L1", field: "let.A", builtin: |x| claims::lemma1_bound(&x.params, 0.0, 1.0) },
        Twin { claim: "DPGP-L1", field: "let.B", builtin: |x| claims::lemma1_bound(&x.params, x.constants.sigma_v, 0.0) },
        Twin { claim: "DPGP-L2", field: "let.f", builtin: |x| claims::lemma2_factor(&x.params, Lemma2Reading::Proof) },
        Twin { claim: "DPGP-L2~printed", field: "let.f", builtin: |x| claims::lemma2_factor(&x.params, Lemma2Reading::Printed) },
        Twin { claim: "DPGP-L3", field: "let.AA", builtin: |x| claims::aa(&x.params, &x.connectivity, x.constants.l_u, claims::AaReading::Proof) },
        Twin { claim: "DPGP-L3~printed", field: "let.AA", builtin: |x| claims::aa(&x.params, &x.connectivity, x.constants.l_u, claims::AaReading::Printed) },
        Twin { claim: "DPGP-REC32", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::Primary).cu },
        Twin { claim: "DPGP-REC32", field: "let.Cv", builtin: |x| rec32(x, Rec32Reading::Primary).cv },
        Twin { claim: "DPGP-REC32", field: "let.Sv", builtin: |x| rec32(x, Rec32Reading::Primary).sv },
        Twin { claim: "DPGP-REC32", field: "let.Su", builtin: |x| rec32(x, Rec32Reading::Primary).su },
        Twin { claim: "DPGP-REC32~printed-sv", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::PrintedSv).cu },
        Twin { claim: "DPGP-REC32~printed-sv", field: "let.Sv", builtin: |x| rec32(x, Rec32Reading::PrintedSv).sv },
        Twin { claim: "DPGP-REC32~bracket-aa", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::BracketAa).cu },
        Twin { claim: "DPGP-REC32~bracket-aa", field: "let.Su", builtin: |x| rec32(x, Rec32Reading::BracketAa).su },
        Twin { claim: "DPGP-EQ26", field: "let.Su", builtin: |x| rec32(x, Rec32Reading::Primary).su26 },
        Twin { claim: "DPGP-EQ26", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::Primary).cu26 },
        Twin { claim: "DPGP-EQ26~bracket-aa", field: "let.Su", builtin: |x| rec32(x, Rec32Reading::BracketAa).su26 },
        Twin { claim: "DPGP-EQ26~bracket-aa", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::BracketAa).cu26 },
        Twin { claim: "DPGP-EQ31", field: "let.Cv", builtin: |x| rec32(x, Rec32Reading::Primary).cv },
        Twin { claim: "DPGP-EQ31", field: "let.Sv", builtin: |x| rec32(x, Rec32Reading::Primary).sv },
        Twin { claim: "DPGP-EQ31", field: "let.Vu", builtin: |x| rec32(x, Rec32Reading::Primary).vu },
        Twin { claim: "DPGP-EQ31~printed-sv", field: "let.Sv", builtin: |x| rec32(x, Rec32Reading::PrintedSv).sv },
        Twin { claim: "DPGP-EQ31~printed-sv", field: "let.Vu", builtin: |x| rec32(x, Rec32Reading::PrintedSv).vu },
        Twin { claim: "DPGP-T1", field: "bound", builtin: |x| claims::theorem1_shape(&x.constants, &x.connectivity, x.params.k_u, x.f0, x.t) },
        Twin { claim: "DPGP-T1~printed-step", field: "bound", builtin: |x| claims::theorem1_shape(&x.constants, &x.connectivity, x.params.k_u, x.f0, x.t) },
        Twin { claim: "DPGP-C1", field: "bound", builtin: |_| claims::C1_EXPONENT },
        Twin { claim: "DPGP-C1~debiased-z", field: "bound", builtin: |_| claims::C1_EXPONENT },
        Twin { claim: "DPGP-C1~rate-inv-T", field: "bound", builtin: |_| claims::INV_T_EXPONENT },
        // The restricted readings of Assumption 4: the same functions, sigma_g2 bound to the
        // supremum over the proof's points.
        Twin { claim: "DPGP-L3~visited-sg", field: "let.AA", builtin: |x| claims::aa(&x.params, &x.connectivity, x.constants.l_u, claims::AaReading::Proof) },
        Twin { claim: "DPGP-REC32~visited-sg", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::Primary).cu },
        Twin { claim: "DPGP-REC32~visited-sg", field: "let.Su", builtin: |x| rec32(x, Rec32Reading::Primary).su },
        Twin { claim: "DPGP-T1~visited-sg", field: "bound", builtin: |x| claims::theorem1_shape(&x.constants, &x.connectivity, x.params.k_u, x.f0, x.t) },
        Twin { claim: "DPGP-C1~visited-sg", field: "bound", builtin: |_| claims::C1_EXPONENT },
        Twin { claim: "DPGP-C1~debiased-z-visited-sg", field: "bound", builtin: |_| claims::C1_EXPONENT },
    ];
    let conditions = vec![
        ConditionTwin { claim: "DPGP-L1", builtin: |x: &Inputs| vec![claims::lemma1_step(x.constants.l_v, &x.params)] },
        ConditionTwin { claim: "DPGP-L2", builtin: lemma2_steps },
        ConditionTwin { claim: "DPGP-L2~printed", builtin: lemma2_steps },
        ConditionTwin { claim: "DPGP-L3", builtin: |x| lemma3_steps(x, claims::AaReading::Proof) },
        ConditionTwin { claim: "DPGP-L3~printed", builtin: |x| lemma3_steps(x, claims::AaReading::Printed) },
        ConditionTwin { claim: "DPGP-REC32", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-REC32~printed-sv", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-REC32~bracket-aa", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-EQ26", builtin: |x| lemma3_steps(x, claims::AaReading::Proof) },
        ConditionTwin { claim: "DPGP-EQ26~bracket-aa", builtin: |x| lemma3_steps(x, claims::AaReading::Proof) },
        ConditionTwin { claim: "DPGP-EQ31", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-EQ31~printed-sv", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-T1", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-T1~printed-step", builtin: |x| claims::step_checks(&x.constants, &x.connectivity, &x.params, true) },
        ConditionTwin { claim: "DPGP-C1", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-C1~debiased-z", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-C1~rate-inv-T", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-L3~visited-sg", builtin: |x| lemma3_steps(x, claims::AaReading::Proof) },
        ConditionTwin { claim: "DPGP-REC32~visited-sg", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-T1~visited-sg", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-C1~visited-sg", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-C1~debiased-z-visited-sg", builtin: proof_steps },
    ];
    TwinTable { symbols: SYMBOLS.symbols(), values: |x| SYMBOLS.values(x), fields, conditions }
}

/// Claims without a formula, and why.
pub const WITHOUT_FORMULA: [(&str, &str); 9] = [
    (
        "DPGP-EQ15",
        "its right side at round t sums node i's own gradients of every earlier round weighted by q^(t-r): a recursion over the run's history, not a formula of one round's quantities",
    ),
    ("DPGP-R2", "orders two runs by their connectivity: a comparison of runs, not a bound"),
    ("DPGP-R2~stationarity", "as DPGP-R2"),
    ("DPGP-R2~factor", "as DPGP-R2"),
    ("DPGP-R1", "orders runs by K_u: a comparison of runs, not a bound"),
    ("DPGP-R1~variance", "orders runs by their noise levels: a comparison of runs, not a bound"),
    ("DPGP-R3", "orders runs by L_u, comparing a share of Corollary 1's bound (claims::corollary1_split) between runs, not a bound on one run"),
    ("DPGP-F3A", "orders runs by the out-degree of their graphs: a comparison of runs, not a bound"),
    ("DPGP-F3A~consensus", "as DPGP-F3A"),
];
