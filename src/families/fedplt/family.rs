//! This family as the core sees it: its card, and the [`Plugin`] behind `list`, `check` and `run`.

use serde::{Deserialize, Serialize};

use crate::card::{parse_toml, ClaimCard, FamilyInfo, InconsistencyCard};
use crate::checker::{CardEntries, ClaimResult, Plugin, ReportSettings, RunSettings};
use crate::claim::BoundClaim;
use crate::engine::monte_carlo::in_pool;
use crate::error::{Error, Result};
use crate::family::{CardText, ClaimSummary, FamilyReport, Given, Progress, RunOptions, VerdictRow};
use crate::formula::user::{compile_card_claims, defined_conditions, FormulaClaim, UserClaim};

use super::check::{prepare, residual_sweep, run_prepared, run_scenario, ResidualSweep, Scenario, ScenarioRun};
use super::claims::ALL;
use super::formulas::{builtin_ids, summary, CardClaim, Claim, RULES, SYMBOLS};
use super::problem::{Constants, Instance};

/// The id scenario files use: `family = "fedplt"`.
pub const FAMILY_ID: &str = "fedplt";

/// The embedded card.
pub const CARD: (&str, &str) = ("theorems/fedplt.toml", include_str!("../../../theorems/fedplt.toml"));

/// FedPLT's claim card, as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    /// The family.
    pub family: FamilyInfo,
    /// One entry per claim and variant.
    pub claims: Vec<ClaimCard>,
    /// How each inconsistency is encoded.
    #[serde(default)]
    pub inconsistencies: Vec<InconsistencyCard>,
    /// Default scenarios.
    pub scenarios: Vec<Scenario>,
    /// The speed-error sweep drawn by the main job.
    #[serde(default)]
    pub residual_sweep: Option<ResidualSweep>,
    /// What the adversarial search is expected to find.
    #[serde(default)]
    pub search: crate::search::CardSearch,
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
    let defined = compile_card_claims(&card.claims, &builtin_ids(), &SYMBOLS, |e| {
        Ok(FormulaClaim { claim: UserClaim::compile(e, &RULES)?, values: |x| SYMBOLS.values(x) })
    })?;
    card.search.check(&builtin_ids())?;
    if let Some(sweep) = &card.residual_sweep {
        if !card.scenarios.iter().any(|s| s.name == sweep.scenario) {
            return Err(Error::field("residual_sweep.scenario", format!("`{}` is not a scenario of the card", sweep.scenario), "a scenario name"));
        }
        if sweep.factors.is_empty() || sweep.factors.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
            return Err(Error::field("residual_sweep.factors", format!("got {:?}", sweep.factors), "finite numbers > 0"));
        }
    }
    let known: Vec<&str> = builtin_ids().into_iter().chain(defined.iter().map(|c| c.id())).collect();
    for (i, s) in card.scenarios.iter().enumerate() {
        s.check(&format!("scenarios[{i}] ({})", s.name), &known)?;
        crate::card::require_new_scenario_name(card.scenarios[..i].iter().map(|o| o.name.as_str()), i, &s.name)?;
    }
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
fn scenario_file(text: &str, what: &str) -> Result<Scenario> {
    let scenario: Scenario = parse_toml(text, what)?;
    scenario.check("scenario", &builtin_ids())?;
    Ok(scenario)
}

/// FedPLT of Dabaja and El-Azouzi.
pub struct FedPlt;

/// The registered family.
pub static FAMILY: crate::checker::Plugged<FedPlt> = crate::checker::Plugged(FedPlt);

impl Plugin for FedPlt {
    type Card = ReadCard;
    type Scenario = Scenario;
    type Claim = Claim;
    type Prepared = (Instance, Constants);
    type Run = ScenarioRun;

    fn id(&self) -> &'static str {
        FAMILY_ID
    }
    fn title(&self) -> &'static str {
        "Dabaja, El-Azouzi: FedPLT, static partial (layer) training with masks"
    }
    fn embedded_card(&self) -> Result<ReadCard> {
        embedded_card()
    }
    fn read_card(&self, card: &CardText) -> Result<ReadCard> {
        parse_card(&card.text, &card.what)
    }
    fn builtin_claims(&self) -> Vec<Claim> {
        ALL.iter().map(|c| Claim::Builtin(*c)).collect()
    }
    fn defined_claims(&self, card: &ReadCard) -> Vec<Claim> {
        card.defined.iter().map(|c| Claim::Card(c.clone())).collect()
    }
    fn claim_id(&self, claim: &Claim) -> &'static str {
        claim.id()
    }
    fn summary(&self, claim: &Claim) -> ClaimSummary {
        static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
        let statement = match claim {
            Claim::Builtin(c) => STATEMENTS.of(c.id(), || embedded_card().map(|c| c.card.claims).unwrap_or_default()),
            Claim::Card(_) => String::new(),
        };
        summary(claim, statement)
    }
    fn scenarios<'c>(&self, card: &'c ReadCard) -> Vec<&'c Scenario> {
        card.scenarios.iter().collect()
    }
    fn scenario_name<'s>(&self, scenario: &'s Scenario) -> &'s str {
        &scenario.name
    }

    fn expected<'s>(&self, scenario: &'s Scenario) -> Vec<&'s str> {
        scenario.expected.keys().chain(scenario.expected_empirical.keys()).map(String::as_str).collect()
    }

    fn work(&self, s: &Scenario) -> Option<crate::budget::Work> {
        Some(s.work())
    }

    fn prepare(&self, s: &Scenario) -> Result<(Instance, Constants)> {
        prepare(s)
    }
    fn run(&self, _card: &ReadCard, s: &Scenario, prepared: (Instance, Constants), claims: &[Claim], settings: &RunSettings) -> Result<ScenarioRun> {
        run_prepared(s, prepared, claims, settings.bound_scale)
    }
    fn card_entries<'c>(&self, card: &'c Self::Card) -> CardEntries<'c> {
        (card.claims.iter().collect(), card.inconsistencies.iter().collect())
    }

    fn outcome<'r>(&self, run: &'r ScenarioRun) -> (&'r str, &'r [ClaimResult]) {
        (&run.scenario.name, &run.results)
    }
    fn search(&self, card: Option<&Self::Card>, request: &crate::family::SearchRequest, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        crate::search::run::search_family(self, &super::search::Space, card, request, progress)
    }
    fn has_search(&self) -> bool {
        true
    }
    fn main_job_search(&self, card: &Self::Card, settings: &ReportSettings, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        crate::search::run::main_job(self, &super::search::Space, card, settings, progress)
    }
    /// The main job also draws the speed-error trade-off of Case 1.
    fn report(
        &self,
        card: &ReadCard,
        claims: &[Claim],
        runs: &[ScenarioRun],
        _: &[VerdictRow],
        settings: &ReportSettings,
        _: &dyn Progress,
    ) -> Result<FamilyReport> {
        let swept = card.residual_sweep.as_ref().filter(|_| settings.full);
        let sweep = swept.and_then(|sw| card.scenarios.iter().find(|s| s.name == sw.scenario).map(|s| (s, &sw.factors)));
        let sweep = sweep.map(|(s, f)| in_pool(settings.run.threads, || residual_sweep(s, f)).and_then(|p| Ok((s.name.clone(), p?)))).transpose()?;
        let (files, summary_markdown) = super::report::report_files(claims, runs, sweep.as_ref(), settings.meta, settings.plots)?;
        Ok(FamilyReport { summary_markdown, files, ..Default::default() })
    }
    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        let constants = scenario_file(text, what)?.instance.build()?.constants()?;
        serde_json::to_value(&constants).map_err(|e| Error::serialization("constants", e))
    }
    fn run_file(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario = scenario_file(text, what)?;
        crate::budget::require(&scenario.work(), options.max_work)?;
        let claims = self.builtin_claims();
        super::report::run_json(&in_pool(options.threads, || run_scenario(&scenario, &claims, 1.0))??)
    }
    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &SYMBOLS
    }
    /// The checks and bound of card-defined claims at the given values (`--set NAME=VALUE`,
    /// names as `fedbounds list --symbols` prints them). The built-in claims' conditions depend
    /// on the run (the measured alignment, the schedule), so they are checked by `check` only.
    fn conditions(&self, card: Option<&ReadCard>, given: &Given, ids: &[String], json: bool) -> Result<String> {
        let defined = card.map(|c| c.defined.as_slice()).unwrap_or_default();
        defined_conditions(defined, ids, &SYMBOLS, given, json).unwrap_or_else(|| {
            Err(Error::field(
                "--claim",
                "FedPLT's built-in conditions depend on the run (measured alignment, schedule): see `fedbounds check`",
                "a claim defined in the card given with --card",
            ))
        })
    }
}
