//! Claims defined by a user's card for DFedPGP: a bound on one of the run's per-round metrics and
//! its conditions as formulas over [`super::formulas::SYMBOLS`], compiled by the core
//! ([`crate::formula::user`]) and checked (by `check::evaluate_card_claims`) on the scenario's
//! exact trajectory at its horizon `rounds` (the steps of that horizon), every prefix
//! `T' <= rounds` or the horizon only.
//!
//! The family's assumption checks (delta > 0, a joint-connectivity window) apply to every
//! claim, as to the built-in ones. A claim that reads `C` or `q` (estimated from the realised
//! mixing products) gives `estimated` rows, else `exact` ones.

use crate::card::ClaimCard;
use crate::claim::{ConditionCheck, Forwards, Horizon};
use crate::error::Result;
use std::sync::Arc;

use crate::formula::user::{compile_card_claims, FormulaClaim, UserClaim, UserClaimRules};
use crate::formula::CompareSpec;
use crate::verdict::ConstantsSource;

use super::claims::summaries;
use super::formulas::{Inputs, FIRST_RUN_QUANTITY, SYMBOLS};
use super::problem::Constants;
use super::round::Trajectory;

/// Theorem 1's metric per round, `E Delta_ubar^t / L_u + E Delta_v^t / L_v`.
pub const STATIONARITY: &str = "stationarity";
/// The consensus error per round, `(1/m) sum_i E||ubar^t - z_i^t||^2`.
pub const CONSENSUS: &str = "consensus";
/// The suboptimality per round, `E F(ubar^t, V^t) - F*`.
pub const SUBOPTIMALITY: &str = "suboptimality";

/// What this family accepts in a card-defined claim.
pub const RULES: UserClaimRules = UserClaimRules {
    symbols: SYMBOLS.symbols(),
    metrics: &[STATIONARITY, CONSENSUS, SUBOPTIMALITY],
    algorithms: &[],
    comparisons: &[CompareSpec::RunningAverage, CompareSpec::PerRound],
};

/// The metric as reports print it.
pub fn metric_formula(name: &str) -> &'static str {
    match name {
        STATIONARITY => "E Delta_ubar^t / L_u + E Delta_v^t / L_v, per round",
        CONSENSUS => "(1/m) sum_i E||ubar^t - z_i^t||^2, per round",
        _ => "E F(ubar^t, V^t) - F*, per round",
    }
}

/// The symbol values of a run, with the horizon `T` settable (the verdict core compares every
/// prefix): a copyable form of [`Inputs`].
#[derive(Debug, Clone, Copy)]
pub struct CardInputs {
    slots: [f64; FIRST_RUN_QUANTITY],
}

/// Slot of `T` in [`SYMBOLS`].
const T_SLOT: usize = FIRST_RUN_QUANTITY - 1;

impl CardInputs {
    /// The values at these inputs.
    pub fn new(x: &Inputs) -> Self {
        let v = SYMBOLS.values(x);
        let mut slots = [f64::NAN; FIRST_RUN_QUANTITY];
        slots.copy_from_slice(&v[..FIRST_RUN_QUANTITY]);
        Self { slots }
    }
}

impl Horizon for CardInputs {
    fn horizon(&self) -> usize {
        self.slots[T_SLOT] as usize
    }
    fn at_horizon(&self, t: usize) -> Self {
        let mut slots = self.slots;
        slots[T_SLOT] = t as f64;
        Self { slots }
    }
}

fn card_values(x: &CardInputs) -> Vec<f64> {
    let mut v = x.slots.to_vec();
    v.resize(SYMBOLS.len(), f64::NAN);
    v
}

/// A DFedPGP claim read from a card.
pub type CardClaim = FormulaClaim<CardInputs>;

/// Compiles the entries of a card that are not built in, in card order; an entry under a built-in
/// id must carry that claim's formula in `embedded` (the family's own card text).
///
/// # Errors
/// The first entry that does not compile, naming its field.
pub fn compile(entries: &[ClaimCard], embedded: &str) -> Result<Vec<Arc<CardClaim>>> {
    let builtin: Vec<&str> = summaries().iter().map(|c| c.id).collect();
    compile_card_claims(entries, &builtin, &[embedded], &super::formulas::SYMBOLS, |e| {
        Ok(FormulaClaim { claim: UserClaim::compile(e, &RULES)?, values: card_values })
    })
}

/// A card claim with the family's assumption checks before its own.
pub struct WithAssumptions<'a> {
    /// The claim.
    pub claim: &'a CardClaim,
    /// The family's assumption checks on the scenario.
    pub assumptions: Vec<ConditionCheck>,
}

impl Forwards for WithAssumptions<'_> {
    type To = CardClaim;
    fn to(&self) -> &CardClaim {
        self.claim
    }
    fn first_checks(&self, _x: &CardInputs) -> Vec<ConditionCheck> {
        self.assumptions.clone()
    }
}

/// The per-round series of a card claim's metric on a trajectory (`k` the instance's constants).
pub fn per_round_metric(metric: &str, k: &Constants, tr: &Trajectory) -> Vec<f64> {
    match metric {
        STATIONARITY => tr.stationarity(k.l_u, k.l_v),
        CONSENSUS => tr.consensus.clone(),
        _ => tr.suboptimality.clone(),
    }
}

/// Which constants a card claim's rows use: estimated when it reads `C` or `q` (estimated from
/// the realised mixing products), else exact.
pub fn constants_label(c: &CardClaim) -> ConstantsSource {
    if c.claim.reads("C") || c.claim.reads("q") {
        ConstantsSource::Estimated
    } else {
        ConstantsSource::Exact
    }
}
