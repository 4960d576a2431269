//! A claim of DFedPGP as the checker and the search handle it: built in (by id), or defined by a
//! card.

use std::sync::Arc;

use crate::claim::BoundClaim;

use super::card_claims::CardClaim;

/// A claim of this family: built in (by id), or defined by a card.
#[derive(Clone)]
pub enum DpgpClaim {
    /// A built-in claim or lemma.
    Builtin(&'static str),
    /// A claim a card defines by formulas.
    Card(Arc<CardClaim>),
}

impl DpgpClaim {
    pub fn id(&self) -> &'static str {
        match self {
            DpgpClaim::Builtin(id) => id,
            DpgpClaim::Card(c) => c.id(),
        }
    }
    /// The orderings (Remarks 1-3, Figure 3a) compare the runs of a group of scenarios
    /// ([`super::axis`], [`super::compare`]).
    pub fn compares(&self) -> bool {
        super::axis::COMPARISON_CLAIMS.contains(&self.id())
    }
}
