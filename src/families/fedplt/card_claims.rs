//! Claims defined by a user's card for FedPLT: a bound on `D^t = E||W^t - W*||^2` and its
//! conditions as formulas over [`super::formulas::SYMBOLS`], compiled by the core
//! ([`crate::formula::user`]) and checked on the same exact runs as the built-in bounds.
//!
//! A claim that reads `G2` (Assumption 5, no finite value on `R^d`) is not applicable as stated
//! and gets a labelled empirical row with `G^2` measured on the run, as the built-in bounds do.

use crate::card::ClaimCard;
use crate::claim::BoundClaim;
use crate::error::Result;
use crate::formula::user::{CardClaims, FormulaClaim, UserClaim, UserClaimRules};
use crate::formula::CompareSpec;

use super::claims::{Inputs, ALL};
use super::formulas::SYMBOLS;

/// The one metric a card-defined FedPLT claim bounds: `D^t = E||W^t - W*||^2`, exact, each round.
pub const DISTANCE: &str = "distance";

/// The metric as reports print it.
pub const DISTANCE_METRIC: &str = "D^t = E||W^t - W*||^2, each round";

/// What this family accepts in a card-defined claim: a bound on `distance`, compared at `t = T - 1`
/// (`per-round`) or averaged over `t < T` (`running-average`).
pub const RULES: UserClaimRules =
    UserClaimRules { symbols: SYMBOLS.symbols(), metrics: &[DISTANCE], algorithms: &[], comparisons: &[CompareSpec::PerRound, CompareSpec::RunningAverage] };

/// A FedPLT claim read from a card.
pub type CardClaim = FormulaClaim<Inputs>;

static REGISTERED: CardClaims<CardClaim> = CardClaims::new();

/// The card-defined claims registered so far.
pub fn registered() -> Vec<&'static CardClaim> {
    REGISTERED.all()
}

/// The ids of the built-in claims.
pub fn builtin_ids() -> Vec<&'static str> {
    ALL.iter().map(|c| c.id()).collect()
}

/// Every claim id: built in, then registered from cards.
pub fn all_ids() -> Vec<&'static str> {
    builtin_ids().into_iter().chain(registered().iter().map(|c| c.id())).collect()
}

/// Compiles and registers the entries that are not built in; returns how many are registered.
///
/// # Errors
/// The first entry that does not compile, naming its field (nothing is registered then).
pub fn register(entries: &[ClaimCard]) -> Result<usize> {
    REGISTERED.register(entries, &builtin_ids(), |e| Ok(FormulaClaim { claim: UserClaim::compile(e, &RULES)?, values: |x| SYMBOLS.values(x) }), |c| c.id())
}

/// Whether the claim reads `G^2` (then it also gets an empirical row).
pub fn needs_g2(c: &CardClaim) -> bool {
    c.claim.reads("G2")
}
