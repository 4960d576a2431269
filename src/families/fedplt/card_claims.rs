//! Claims defined by a user's card for FedPLT: a bound on `D^t = E||W^t - W*||^2` and its
//! conditions as formulas over [`super::formulas::SYMBOLS`], compiled by the core
//! ([`crate::formula::user`]) and checked on the same exact runs as the built-in bounds.
//!
//! A claim that reads `G2` (Assumption 5, no finite value on `R^d`) is not applicable as stated
//! and gets a labelled empirical row with `G^2` measured on the run, as the built-in bounds do.

use std::sync::Arc;

use crate::card::ClaimCard;
use crate::claim::BoundClaim;
use crate::error::Result;
use crate::family::{ClaimKind, ClaimSummary};
use crate::formula::user::{compile_card_claims, FormulaClaim, UserClaim, UserClaimRules};
use crate::formula::CompareSpec;

use super::claims::{FedPltClaim, Inputs, ALL};
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

/// A claim of the family: built in, or defined by a card.
#[derive(Clone)]
pub enum Claim {
    /// A built-in claim.
    Builtin(FedPltClaim),
    /// A claim a card defines by formulas.
    Card(Arc<CardClaim>),
}

impl Claim {
    /// Its id.
    pub fn id(&self) -> &'static str {
        match self {
            Claim::Builtin(c) => c.id(),
            Claim::Card(c) => c.id(),
        }
    }

    /// Whether it reads `G^2` (then it also gets an empirical row).
    pub fn needs_g2(&self) -> bool {
        match self {
            Claim::Builtin(c) => c.needs_g2(),
            Claim::Card(c) => c.claim.reads("G2"),
        }
    }

    /// The claim as `list` and the reports show it; `statement` is the card's for a built-in claim.
    pub fn summary(&self, statement: String) -> ClaimSummary {
        match self {
            Claim::Builtin(c) => {
                ClaimSummary { id: c.id(), kind: ClaimKind::Bound, title: c.title(), statement, source: c.source(), reading: c.reading(), metric: c.metric() }
            }
            Claim::Card(c) => ClaimSummary {
                id: c.id(),
                kind: ClaimKind::Bound,
                title: c.title(),
                statement: c.claim.statement.clone(),
                source: c.source(),
                reading: c.reading(),
                metric: DISTANCE_METRIC,
            },
        }
    }
}

/// The ids of the built-in claims.
pub fn builtin_ids() -> Vec<&'static str> {
    ALL.iter().map(|c| c.id()).collect()
}

/// Compiles the entries of a card that are not built in.
///
/// # Errors
/// The first entry that does not compile, naming its field.
pub fn compile(entries: &[ClaimCard]) -> Result<Vec<Arc<CardClaim>>> {
    compile_card_claims(entries, &builtin_ids(), &SYMBOLS, |e| Ok(FormulaClaim { claim: UserClaim::compile(e, &RULES)?, values: |x| SYMBOLS.values(x) }))
}
