//! This family's formula table: the names a card's formulas may use, where their values come
//! from, and which built-in function each formula of a built-in claim twins; and the claims a
//! card defines by formulas.
//!
//! A card-defined claim bounds `D^t = E||W^t - W*||^2` with formulas over [`SYMBOLS`], compiled
//! by the core ([`crate::formula::user`]) and checked on the same exact runs as the built-in
//! bounds. One that reads `G2` (Assumption 5, no finite value on `R^d`) is not applicable as
//! stated and gets a labelled empirical row, as the built-in bounds do.

use crate::claim::BoundClaim;
use crate::family::{ClaimKind, ClaimSummary};
use crate::formula::twin::{ConditionTwin, Twin, TwinTable};
use crate::formula::user::{AnyClaim, FormulaClaim, UserClaimRules};
use crate::formula::CompareSpec;
use crate::formula::{SymbolDef, SymbolTable, COUNT, FLAG, NON_NEGATIVE, POSITIVE};

use super::claims::{self, Alpha, FedPltClaim, Inputs, ALL};
use super::runs::Schedule;

/// What this family accepts in a card-defined claim: a bound on `distance` (`D^t`), compared at
/// `t = T - 1` (`per-round`) or averaged over `t < T` (`running-average`).
pub const RULES: UserClaimRules =
    UserClaimRules { symbols: SYMBOLS.symbols(), metrics: &["distance"], algorithms: &[], comparisons: &[CompareSpec::PerRound, CompareSpec::RunningAverage] };

/// A FedPLT claim read from a card.
pub type CardClaim = FormulaClaim<Inputs>;

/// A claim of the family: built in, or defined by a card.
pub type Claim = AnyClaim<FedPltClaim, Inputs>;

/// Whether a claim reads `G^2` (then it also gets an empirical row).
pub fn needs_g2(claim: &Claim) -> bool {
    claim.reads("G2", FedPltClaim::needs_g2)
}

/// A claim as `list` and the reports show it; `statement` is the card's for a built-in claim.
pub fn summary(claim: &Claim, statement: String) -> ClaimSummary {
    let metric = match claim {
        Claim::Builtin(c) => c.declaration().metric,
        Claim::Card(_) => "",
    };
    claim.summary(ClaimKind::Bound, statement, metric, "D^t = E||W^t - W*||^2, each round")
}

/// The ids of the built-in claims.
pub fn builtin_ids() -> Vec<&'static str> {
    ALL.iter().map(|c| c.id()).collect()
}

type Def = SymbolDef<Inputs, Round>;

/// The names a formula of this family may use, in slot order, and where their values come from.
pub static SYMBOLS: SymbolTable<Inputs, Round, 30> = SymbolTable::new([
    Def::new("T", "horizon T", COUNT, |x| x.t as f64),
    Def::new("t", "the round compared: T - 1 for a bound at horizon T, the round of a per-round inequality", NON_NEGATIVE, |x| x.t.saturating_sub(1) as f64)
        .at_round(|r| r.round.t as f64),
    Def::new("L", "smoothness L", POSITIVE, |x| x.l),
    Def::new("mu", "strong convexity mu", POSITIVE, |x| x.mu),
    Def::new("sigma2", "gradient noise sigma^2", NON_NEGATIVE, |x| x.sigma2),
    Def::new("tau", "local steps tau", COUNT, |x| x.tau as f64),
    Def::new("psi_min", "psi_, smallest masking weight over covered coordinates", POSITIVE, |x| x.psi_min),
    Def::new("psi_max", "psibar, largest masking weight", POSITIVE, |x| x.psi_max),
    Def::new("Lambda", "Lambda = sum_k c_k (F* - F_k*)", NON_NEGATIVE, |x| x.lambda),
    Def::new("D0", "D^0 = ||W^0 - W*||^2", NON_NEGATIVE, |x| x.d0),
    Def::new("Gamma", "Gamma = sum_k c_k alpha_{r_k}^2, alpha as printed", NON_NEGATIVE, |x| x.gamma_mask),
    Def::new("Gamma_sqrt_r", "Gamma with alpha = sqrt(r_k) (I-PLT2)", NON_NEGATIVE, |x| x.gamma_mask_sqrt_r),
    Def::new("alpha_max", "max_k alpha_{r_k} as printed", NON_NEGATIVE, |x| x.alpha_max),
    Def::new("alpha_min", "min_k alpha_{r_k} as printed", NON_NEGATIVE, |x| x.alpha_min),
    Def::new("sqrt_r_max", "max_k sqrt(r_k)", NON_NEGATIVE, |x| x.sqrt_r_max),
    Def::new("sqrt_r_min", "min_k sqrt(r_k)", NON_NEGATIVE, |x| x.sqrt_r_min),
    Def::new("G2", "G^2 of Assumption 5 (no finite value on R^d; measured on the run in the empirical rows)", NON_NEGATIVE, |x| x.g2.unwrap_or(f64::NAN))
        .assuming("A5 bounded global gradient"),
    Def::new("rho_min", "rho_ = min rho_k along the run (Assumption 6)", POSITIVE, |x| {
        if x.alignment_failure.is_none() && x.rho_min > 0.0 {
            x.rho_min
        } else {
            f64::NAN
        }
    })
    .assuming("A6 positive masked alignment"),
    Def::new("eta", "the step of round 0, eta^0", POSITIVE, |x| x.schedule.eta(0)),
    Def::new("eta_min", "smallest step of rounds 0..T", POSITIVE, |x| x.step_range().0),
    Def::new("eta_max", "largest step of rounds 0..T", POSITIVE, |x| x.step_range().1),
    Def::new("z_s", "z of a decaying schedule beta/(z_s (t + g)) (none for a constant step)", POSITIVE, |x| decaying(x).0),
    Def::new("beta", "beta of a decaying schedule", POSITIVE, |x| decaying(x).1),
    Def::new("g", "offset g of a decaying schedule", POSITIVE, |x| decaying(x).2),
    Def::new("constant_step", "1 for a constant step, else 0", FLAG, |x| flag(matches!(x.schedule, Schedule::Constant(_)))),
    Def::new("unit_decay", "1 for the paper's decaying step 1/(z (t+1)), else 0", FLAG, |x| {
        flag(matches!(x.schedule, Schedule::Decaying { beta, offset, .. } if beta == 1.0 && offset == 1.0))
    }),
    Def::new("beta_decay", "1 for a decaying step beta/(z (t+g)) with beta > 1, else 0", FLAG, |x| {
        flag(matches!(x.schedule, Schedule::Decaying { beta, .. } if beta > 1.0))
    }),
    Def::per_round("eta_t", "per-round: the step eta^t of round t", POSITIVE).at_round(|r| r.x.schedule.eta(r.round.t)),
    Def::per_round("D_t", "per-round: D^t = E||W^t - W*||^2", NON_NEGATIVE).at_round(|r| r.round.d_t),
    Def::per_round("D_next", "per-round: D^{t+1} of the run (of the recursion solved with equality in FEDPLT-DECAY-RECURSION)", NON_NEGATIVE),
]);

fn flag(b: bool) -> f64 {
    f64::from(u8::from(b))
}

/// `(z, beta, g)` of a decaying schedule, NaN for a constant step.
fn decaying(x: &Inputs) -> (f64, f64, f64) {
    match x.schedule {
        Schedule::Decaying { z, beta, offset } => (z, beta, offset),
        Schedule::Constant(_) => (f64::NAN, f64::NAN, f64::NAN),
    }
}

/// A per-round inequality's round: `t` (its step is the schedule's at `t`) and `D^t`.
#[derive(Debug, Clone, Copy)]
pub struct Round {
    /// The round.
    pub t: usize,
    /// `D^t`.
    pub d_t: f64,
}

/// A per-round inequality's inputs: the claim inputs and the round.
pub type RoundInputs = crate::formula::RoundInputs<Inputs, Round>;

/// The conditions of the `I`-th claim of [`ALL`], as a function pointer.
fn nth<const I: usize>(x: &Inputs) -> Vec<crate::claim::ConditionCheck> {
    ALL[I].checks(x)
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
        Twin { claim: "FEDPLT-LIMIT", field: "bound", builtin: |x| FedPltClaim::Limit { unconditional: false }.bound(x) },
        Twin { claim: "FEDPLT-LIMIT~unconditional", field: "bound", builtin: |x| FedPltClaim::Limit { unconditional: true }.bound(x) },
    ];
    let of: [fn(&Inputs) -> Vec<crate::claim::ConditionCheck>; 10] =
        [nth::<0>, nth::<1>, nth::<2>, nth::<3>, nth::<4>, nth::<5>, nth::<6>, nth::<7>, nth::<8>, nth::<9>];
    // FEDPLT-A6, the psi step, the update's variance and the local divergence (the last of `ALL`)
    // have no formula: they are decided in closed form (`a6`), at the sample paths' points
    // (`psi_step`), or against quantities of the round that are not symbols (`check::RoundSteps`).
    let conditions = ALL.iter().filter(|c| c.has_formula()).zip(of).map(|(c, builtin)| ConditionTwin { claim: c.id(), builtin }).collect();
    TwinTable { symbols: SYMBOLS.symbols(), values: |x| SYMBOLS.values(x), fields, conditions }
}

fn recursion(a: Alpha) -> fn(&RoundInputs) -> f64 {
    match a {
        Alpha::Printed => |r| claims::recursion_rhs(&r.x, Alpha::Printed, r.x.schedule.eta(r.round.t), r.round.d_t),
        Alpha::SqrtR => |r| claims::recursion_rhs(&r.x, Alpha::SqrtR, r.x.schedule.eta(r.round.t), r.round.d_t),
    }
}

/// Every built-in side of the family's per-round inequalities beside the name of its formula.
pub fn round_twins() -> TwinTable<RoundInputs> {
    let fields = vec![
        Twin { claim: "FEDPLT-REC", field: "rhs", builtin: recursion(Alpha::Printed) },
        Twin { claim: "FEDPLT-REC~tau-steps", field: "rhs", builtin: recursion(Alpha::Printed) },
        Twin { claim: "FEDPLT-REC~alpha-sqrt-r", field: "rhs", builtin: recursion(Alpha::SqrtR) },
        Twin { claim: "FEDPLT-REC~alpha-sqrt-r", field: "let.B", builtin: |r| r.x.b(Alpha::SqrtR) },
        Twin { claim: "FEDPLT-DECAY-INDUCTION", field: "lhs", builtin: |r| claims::induction_at(&r.x, r.round.t).0 },
        Twin { claim: "FEDPLT-DECAY-INDUCTION", field: "rhs", builtin: |r| claims::induction_at(&r.x, r.round.t).1 },
        // Entry t of the recursion solved with equality is compared with C/(t+2) (check.rs).
        Twin { claim: "FEDPLT-DECAY-RECURSION", field: "rhs", builtin: |r| claims::decaying_constant(&r.x, true) / (r.round.t as f64 + 2.0) },
    ];
    TwinTable { symbols: SYMBOLS.symbols(), values: |r| SYMBOLS.round_values(r), fields, conditions: Vec::new() }
}
