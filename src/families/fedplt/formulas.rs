//! This family's formula table: the names a card's formulas may use, where their values come
//! from, and which built-in function each formula of a built-in claim twins.

use crate::claim::BoundClaim;
use crate::formula::twin::{ConditionTwin, Twin, TwinTable};
use crate::formula::{Interval, Symbol};

use super::claims::{self, Alpha, FedPltClaim, Inputs, ALL};
use super::runs::Schedule;

const fn sym(name: &'static str, meaning: &'static str, range: Interval) -> Symbol {
    Symbol { name, meaning, range, assumption: None }
}

const POSITIVE: Interval = Interval::above(0.0);
const NON_NEGATIVE: Interval = Interval::at_least(0.0);
const FLAG: Interval = Interval::closed(0.0, 1.0);

/// Index of the first per-round quantity (per-round inequalities only).
pub const FIRST_RUN_QUANTITY: usize = 27;

/// The names a formula of this family may use, in slot order.
pub static SYMBOLS: [Symbol; 30] = [
    sym("T", "horizon T", Interval::at_least(1.0)),
    sym("t", "the round compared: T - 1 for a bound at horizon T, the round of a per-round inequality", NON_NEGATIVE),
    sym("L", "smoothness L", POSITIVE),
    sym("mu", "strong convexity mu", POSITIVE),
    sym("sigma2", "gradient noise sigma^2", NON_NEGATIVE),
    sym("tau", "local steps tau", Interval::at_least(1.0)),
    sym("psi_min", "psi_, smallest masking weight over covered coordinates", POSITIVE),
    sym("psi_max", "psibar, largest masking weight", POSITIVE),
    sym("Lambda", "Lambda = sum_k c_k (F* - F_k*)", NON_NEGATIVE),
    sym("D0", "D^0 = ||W^0 - W*||^2", NON_NEGATIVE),
    sym("Gamma", "Gamma = sum_k c_k alpha_{r_k}^2, alpha as printed", NON_NEGATIVE),
    sym("Gamma_sqrt_r", "Gamma with alpha = sqrt(r_k) (I-PLT2)", NON_NEGATIVE),
    sym("alpha_max", "max_k alpha_{r_k} as printed", NON_NEGATIVE),
    sym("alpha_min", "min_k alpha_{r_k} as printed", NON_NEGATIVE),
    sym("sqrt_r_max", "max_k sqrt(r_k)", NON_NEGATIVE),
    sym("sqrt_r_min", "min_k sqrt(r_k)", NON_NEGATIVE),
    Symbol {
        name: "G2",
        meaning: "G^2 of Assumption 5 (no finite value on R^d; measured on the run in the empirical rows)",
        range: NON_NEGATIVE,
        assumption: Some("A5 bounded global gradient"),
    },
    Symbol { name: "rho_min", meaning: "rho_ = min rho_k along the run (Assumption 6)", range: POSITIVE, assumption: Some("A6 positive masked alignment") },
    sym("eta", "the step of round 0, eta^0", POSITIVE),
    sym("eta_min", "smallest step of rounds 0..T", POSITIVE),
    sym("eta_max", "largest step of rounds 0..T", POSITIVE),
    sym("z_s", "z of a decaying schedule beta/(z_s (t + g)) (none for a constant step)", POSITIVE),
    sym("beta", "beta of a decaying schedule", POSITIVE),
    sym("g", "offset g of a decaying schedule", POSITIVE),
    sym("constant_step", "1 for a constant step, else 0", FLAG),
    sym("unit_decay", "1 for the paper's decaying step 1/(z (t+1)), else 0", FLAG),
    sym("beta_decay", "1 for a decaying step beta/(z (t+g)) with beta > 1, else 0", FLAG),
    sym("eta_t", "per-round: the step eta^t of round t", POSITIVE),
    sym("D_t", "per-round: D^t = E||W^t - W*||^2", NON_NEGATIVE),
    sym("D_next", "per-round: D^{t+1} of the run (of the recursion solved with equality in FEDPLT-DECAY-RECURSION)", NON_NEGATIVE),
];

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// The values of the claim symbols at inputs `x` (per-round quantities NaN).
pub fn values(x: &Inputs) -> Vec<f64> {
    let (eta_min, eta_max) = x.step_range();
    let (z_s, beta, g) = match x.schedule {
        Schedule::Decaying { z, beta, offset } => (z, beta, offset),
        Schedule::Constant(_) => (f64::NAN, f64::NAN, f64::NAN),
    };
    let a6 = x.alignment_failure.is_none() && x.rho_min > 0.0;
    let mut v = vec![
        x.t as f64,
        x.t.saturating_sub(1) as f64,
        x.l,
        x.mu,
        x.sigma2,
        x.tau as f64,
        x.psi_min,
        x.psi_max,
        x.lambda,
        x.d0,
        x.gamma_mask,
        x.gamma_mask_sqrt_r,
        x.alpha_max,
        x.alpha_min,
        x.sqrt_r_max,
        x.sqrt_r_min,
        x.g2.unwrap_or(f64::NAN),
        if a6 { x.rho_min } else { f64::NAN },
        x.schedule.eta(0),
        eta_min,
        eta_max,
        z_s,
        beta,
        g,
        flag(matches!(x.schedule, Schedule::Constant(_))),
        flag(matches!(x.schedule, Schedule::Decaying { beta, offset, .. } if beta == 1.0 && offset == 1.0)),
        flag(matches!(x.schedule, Schedule::Decaying { beta, .. } if beta > 1.0)),
    ];
    v.resize(SYMBOLS.len(), f64::NAN);
    v
}

/// A per-round inequality's inputs: the claim inputs, round `t`, its step and `D^t`.
#[derive(Debug, Clone, Copy)]
pub struct RoundInputs {
    /// Constants and schedule.
    pub x: Inputs,
    /// The round.
    pub t: usize,
    /// `D^t`.
    pub d_t: f64,
}

/// Every symbol's value at a round (the step is the schedule's at `t`).
pub fn round_values(r: &RoundInputs) -> Vec<f64> {
    let mut v = values(&r.x);
    v[1] = r.t as f64;
    v[FIRST_RUN_QUANTITY] = r.x.schedule.eta(r.t);
    v[FIRST_RUN_QUANTITY + 1] = r.d_t;
    v
}

fn conditions_of(c: FedPltClaim) -> fn(&Inputs) -> Vec<crate::claim::ConditionCheck> {
    match c {
        FedPltClaim::Recursion { tau_steps: false, sqrt_r: false } => |x| FedPltClaim::Recursion { tau_steps: false, sqrt_r: false }.checks(x),
        FedPltClaim::Recursion { tau_steps: true, .. } => |x| FedPltClaim::Recursion { tau_steps: true, sqrt_r: false }.checks(x),
        FedPltClaim::Recursion { sqrt_r: true, .. } => |x| FedPltClaim::Recursion { tau_steps: false, sqrt_r: true }.checks(x),
        FedPltClaim::ConstantStep => |x| FedPltClaim::ConstantStep.checks(x),
        FedPltClaim::DecayingStep { any_c: false } => |x| FedPltClaim::DecayingStep { any_c: false }.checks(x),
        FedPltClaim::DecayingStep { any_c: true } => |x| FedPltClaim::DecayingStep { any_c: true }.checks(x),
        FedPltClaim::DecayingCorrected => |x| FedPltClaim::DecayingCorrected.checks(x),
        FedPltClaim::DecayInduction => |x| FedPltClaim::DecayInduction.checks(x),
        FedPltClaim::DecayRecursion => |x| FedPltClaim::DecayRecursion.checks(x),
        FedPltClaim::Limit => |x| FedPltClaim::Limit.checks(x),
    }
}

/// Every built-in bound and condition of the family beside the name of its formula.
pub fn claim_twins() -> TwinTable<Inputs> {
    let fields = vec![
        Twin { claim: "FEDPLT-CONST", field: "bound", builtin: |x| FedPltClaim::ConstantStep.bound(x) },
        Twin { claim: "FEDPLT-CONST", field: "let.B", builtin: |x| x.b(Alpha::Printed) },
        Twin { claim: "FEDPLT-CONST", field: "let.nu", builtin: |x| x.nu(Alpha::Printed) },
        Twin { claim: "FEDPLT-CONST", field: "let.z", builtin: Inputs::z },
        Twin { claim: "FEDPLT-DECAY", field: "bound", builtin: |x| FedPltClaim::DecayingStep { any_c: false }.bound(x) },
        Twin { claim: "FEDPLT-DECAY~any-c", field: "bound", builtin: |x| FedPltClaim::DecayingStep { any_c: true }.bound(x) },
        Twin { claim: "FEDPLT-DECAY~corrected", field: "bound", builtin: |x| FedPltClaim::DecayingCorrected.bound(x) },
        Twin { claim: "FEDPLT-DECAY~corrected", field: "let.v", builtin: claims::corrected_constant },
        Twin { claim: "FEDPLT-LIMIT", field: "bound", builtin: |x| FedPltClaim::Limit.bound(x) },
    ];
    let conditions = ALL.iter().map(|c| ConditionTwin { claim: c.id(), builtin: conditions_of(*c) }).collect();
    TwinTable { symbols: &SYMBOLS, values, fields, conditions }
}

fn recursion(a: Alpha) -> fn(&RoundInputs) -> f64 {
    match a {
        Alpha::Printed => |r| claims::recursion_rhs(&r.x, Alpha::Printed, r.x.schedule.eta(r.t), r.d_t),
        Alpha::SqrtR => |r| claims::recursion_rhs(&r.x, Alpha::SqrtR, r.x.schedule.eta(r.t), r.d_t),
    }
}

/// Every built-in side of the family's per-round inequalities beside the name of its formula.
pub fn round_twins() -> TwinTable<RoundInputs> {
    let fields = vec![
        Twin { claim: "FEDPLT-REC", field: "rhs", builtin: recursion(Alpha::Printed) },
        Twin { claim: "FEDPLT-REC~tau-steps", field: "rhs", builtin: recursion(Alpha::Printed) },
        Twin { claim: "FEDPLT-REC~alpha-sqrt-r", field: "rhs", builtin: recursion(Alpha::SqrtR) },
        Twin { claim: "FEDPLT-REC~alpha-sqrt-r", field: "let.B", builtin: |r| r.x.b(Alpha::SqrtR) },
        Twin {
            claim: "FEDPLT-DECAY-INDUCTION",
            field: "lhs",
            builtin: |r| {
                let c = claims::decaying_constant(&r.x, false);
                claims::induction_sides(c, c, r.t).0
            },
        },
        Twin {
            claim: "FEDPLT-DECAY-INDUCTION",
            field: "rhs",
            builtin: |r| {
                let c = claims::decaying_constant(&r.x, false);
                claims::induction_sides(c, c, r.t).1
            },
        },
        // Entry t of the recursion solved with equality is compared with C/(t+2) (check.rs).
        Twin { claim: "FEDPLT-DECAY-RECURSION", field: "rhs", builtin: |r| claims::decaying_constant(&r.x, true) / (r.t as f64 + 2.0) },
    ];
    TwinTable { symbols: &SYMBOLS, values: round_values, fields, conditions: Vec::new() }
}
