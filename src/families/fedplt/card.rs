//! FedPLT's card: its scenarios, the claims it defines by formulas, its residual sweep and what
//! its search is expected to find, read purely.

use serde::Deserialize;

use crate::card::parse_toml;
use crate::claim::BoundClaim;
use crate::error::{Error, Result};
use crate::formula::user::{compile_card_claims, FormulaClaim, UserClaim};
use crate::paper_card::PaperCard;

use super::check::{ResidualSweep, Scenario};
use super::formulas::{builtin_ids, CardClaim, RULES, SYMBOLS};

/// The id scenario files use: `family = "fedplt"`.
pub const FAMILY_ID: &str = "fedplt";

/// The embedded card.
pub const CARD: (&str, &str) = ("theorems/fedplt.toml", include_str!("../../../theorems/fedplt.toml"));

/// FedPLT's claim card, as written: the shared parts, its scenarios and its residual sweep.
pub type Card = PaperCard<Scenario, Sections>;

/// The top-level sections only FedPLT's card has.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sections {
    /// The speed-error sweep drawn by the main job.
    #[serde(default)]
    pub residual_sweep: Option<ResidualSweep>,
}

/// A card as read: as written, with the claims it defines by formulas (not built in) compiled,
/// in card order.
pub type ReadCard = crate::formula::user::ReadCard<Card, CardClaim>;

/// Parses a card, naming the field at fault. Claims it defines by formulas are compiled first,
/// so its scenarios may name them.
///
/// # Errors
/// [`Error::Parse`] or [`Error::InvalidField`].
pub fn parse_card(text: &str, what: &str) -> Result<ReadCard> {
    let card: Card = parse_toml(text, what)?;
    let defined = compile_card_claims(&card.claims, &builtin_ids(), &[CARD.1], &SYMBOLS, |e| {
        Ok(FormulaClaim { claim: UserClaim::compile(e, &RULES)?, values: |x| SYMBOLS.values(x) })
    })?;
    card.search.check(&builtin_ids())?;
    if let Some(sweep) = &card.sections.residual_sweep {
        if !card.scenarios.iter().any(|s| s.name == sweep.scenario) {
            return Err(Error::field("residual_sweep.scenario", format!("`{}` is not a scenario of the card", sweep.scenario), "a scenario name"));
        }
        if sweep.factors.is_empty() || sweep.factors.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
            return Err(Error::field("residual_sweep.factors", format!("got {:?}", sweep.factors), "finite numbers > 0"));
        }
        if let Some(e) = sweep.expected.as_deref().filter(|e| !["holds", "violated", "inconclusive", "not-applicable"].contains(e)) {
            return Err(Error::field("residual_sweep.expected", format!("got `{e}`"), "holds, violated, inconclusive or not-applicable"));
        }
    }
    let known: Vec<&str> = builtin_ids().into_iter().chain(defined.iter().map(|c| c.id())).collect();
    card.check_scenarios(|field, s| s.check(field, &known))?;
    Ok(ReadCard { card, defined })
}

/// The embedded card.
///
/// # Errors
/// Only if it is malformed (a test guards against this).
pub fn embedded_card() -> Result<ReadCard> {
    parse_card(CARD.1, CARD.0)
}

/// Reads a scenario file as `run` and the sweeps' constants columns take it.
pub fn scenario_file(text: &str, what: &str) -> Result<Scenario> {
    let scenario: Scenario = parse_toml(text, what)?;
    scenario.check("scenario", &builtin_ids())?;
    Ok(scenario)
}
