//! This family's formula table: the names a card's formulas may use, where their values come
//! from, and which built-in function each formula of a built-in claim twins.
//!
//! `C` and `q` are estimated from the realised mixing products; a formula reads the estimates.
//! Remark 2's claims order two runs and have no formula.

use crate::formula::twin::{ConditionTwin, Twin, TwinTable};
use crate::formula::{Interval, Symbol};

use super::claims::{self, Rec32, Rec32Reading};
use super::problem::Constants;
use super::round::Params;
use super::topology::Connectivity;

const fn sym(name: &'static str, meaning: &'static str, range: Interval) -> Symbol {
    Symbol { name, meaning, range, assumption: None }
}

const POSITIVE: Interval = Interval::above(0.0);
const NON_NEGATIVE: Interval = Interval::at_least(0.0);

/// Index of the first per-round quantity.
pub const FIRST_RUN_QUANTITY: usize = 16;

/// The names a formula of this family may use, in slot order.
pub static SYMBOLS: [Symbol; 21] = [
    sym("K_u", "local steps on u, K_u", Interval::at_least(1.0)),
    sym("K_v", "local steps on v, K_v", Interval::at_least(1.0)),
    sym("eta_u", "step eta_u", POSITIVE),
    sym("eta_v", "step eta_v", POSITIVE),
    sym("C", "Lemma 3's C, estimated from the mixing products", POSITIVE),
    sym("q", "Lemma 3's q, estimated (0 <= q < 1)", Interval::closed_open(0.0, 1.0)),
    sym("delta", "delta = min_{i,t} mu_i^t (the family checks delta > 0 as an assumption of every claim)", Interval::open_closed(0.0, 1.0)),
    sym("L_u", "L_u = max_i ||A_i||", POSITIVE),
    sym("L_v", "L_v = max_i ||D_i||", POSITIVE),
    sym("L_vu", "L_vu = max_i ||B_i^T||", NON_NEGATIVE),
    sym("sigma_u", "gradient noise sigma_u", NON_NEGATIVE),
    sym("sigma_v", "gradient noise sigma_v", NON_NEGATIVE),
    Symbol {
        name: "sigma_g2",
        meaning: "gradient diversity sigma_g^2 (Assumption 4)",
        range: NON_NEGATIVE,
        assumption: Some("Assumption 4 (sigma_g^2 finite)"),
    },
    sym("F0", "F(ubar^0, V^0)", Interval::everything()),
    sym("F_star", "F* = min F", Interval::everything()),
    sym("T", "horizon T", Interval::at_least(1.0)),
    sym("consensus_t", "per-round: (1/m) sum_i E||ubar^t - z_i^t||^2", NON_NEGATIVE),
    sym("Delta_ubar_t", "per-round: E Delta_ubar^t", NON_NEGATIVE),
    sym("Delta_v_t", "per-round: E Delta_v^t", NON_NEGATIVE),
    sym("F_t", "per-round: E F(ubar^t, V^t)", Interval::everything()),
    sym("F_next", "per-round: E F(ubar^{t+1}, V^{t+1})", Interval::everything()),
];

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

/// The values of the symbols (per-round quantities NaN).
pub fn values(x: &Inputs) -> Vec<f64> {
    let (k, c, p) = (&x.constants, &x.connectivity, &x.params);
    let mut v = vec![
        p.k_u as f64,
        p.k_v as f64,
        p.eta_u,
        p.eta_v,
        c.c,
        c.q,
        c.delta,
        k.l_u,
        k.l_v,
        k.l_vu,
        k.sigma_u,
        k.sigma_v,
        k.sigma_g2.value.unwrap_or(f64::NAN),
        x.f0,
        k.f_star,
        x.t as f64,
    ];
    v.resize(SYMBOLS.len(), f64::NAN);
    v
}

fn rec32(x: &Inputs, r: Rec32Reading) -> Rec32 {
    Rec32::new(&x.constants, &x.connectivity, &x.params, r)
}

fn proof_steps(x: &Inputs) -> Vec<crate::claim::ConditionCheck> {
    claims::step_checks(&x.constants, &x.connectivity, &x.params, false)
}

/// Every built-in bound and condition of the family beside the name of its formula.
pub fn claim_twins() -> TwinTable<Inputs> {
    let fields: Vec<Twin<Inputs>> = vec![
        Twin { claim: "DPGP-L3", field: "let.AA", builtin: |x| claims::aa(&x.params, &x.connectivity, x.constants.l_u, true) },
        Twin { claim: "DPGP-L3~printed", field: "let.AA", builtin: |x| claims::aa(&x.params, &x.connectivity, x.constants.l_u, false) },
        Twin { claim: "DPGP-REC32", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::Primary).cu },
        Twin { claim: "DPGP-REC32", field: "let.Cv", builtin: |x| rec32(x, Rec32Reading::Primary).cv },
        Twin { claim: "DPGP-REC32", field: "let.Sv", builtin: |x| rec32(x, Rec32Reading::Primary).sv },
        Twin { claim: "DPGP-REC32", field: "let.Su", builtin: |x| rec32(x, Rec32Reading::Primary).su },
        Twin { claim: "DPGP-REC32~printed-sv", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::PrintedSv).cu },
        Twin { claim: "DPGP-REC32~printed-sv", field: "let.Sv", builtin: |x| rec32(x, Rec32Reading::PrintedSv).sv },
        Twin { claim: "DPGP-REC32~bracket-aa", field: "let.Cu", builtin: |x| rec32(x, Rec32Reading::BracketAa).cu },
        Twin { claim: "DPGP-REC32~bracket-aa", field: "let.Su", builtin: |x| rec32(x, Rec32Reading::BracketAa).su },
        Twin { claim: "DPGP-T1", field: "bound", builtin: |x| claims::theorem1_shape(&x.constants, &x.connectivity, x.params.k_u, x.f0, x.t) },
        Twin { claim: "DPGP-T1~printed-step", field: "bound", builtin: |x| claims::theorem1_shape(&x.constants, &x.connectivity, x.params.k_u, x.f0, x.t) },
        Twin { claim: "DPGP-C1", field: "bound", builtin: |_| claims::C1_EXPONENT },
        Twin { claim: "DPGP-C1~debiased-z", field: "bound", builtin: |_| claims::C1_EXPONENT },
        Twin { claim: "DPGP-C1~rate-inv-T", field: "bound", builtin: |_| claims::INV_T_EXPONENT },
    ];
    let conditions = vec![
        ConditionTwin { claim: "DPGP-L3", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-L3~printed", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-REC32", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-REC32~printed-sv", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-REC32~bracket-aa", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-T1", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-T1~printed-step", builtin: |x| claims::step_checks(&x.constants, &x.connectivity, &x.params, true) },
        ConditionTwin { claim: "DPGP-C1", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-C1~debiased-z", builtin: proof_steps },
        ConditionTwin { claim: "DPGP-C1~rate-inv-T", builtin: proof_steps },
    ];
    TwinTable { symbols: &SYMBOLS, values, fields, conditions }
}

/// Claims without a formula, and why.
pub const WITHOUT_FORMULA: [(&str, &str); 3] = [
    ("DPGP-R2", "orders two runs by their connectivity: a comparison of runs, not a bound"),
    ("DPGP-R2~stationarity", "as DPGP-R2"),
    ("DPGP-R2~factor", "as DPGP-R2"),
];
