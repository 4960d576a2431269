//! This family as the core sees it: its card, and the [`Plugin`] behind `list`, `check` and `run`.

use crate::checker::{Plugin, ReportSettings, RunSettings, Searcher};
use crate::claim::BoundClaim;
use crate::engine::monte_carlo::in_pool;
use crate::error::{Error, Result};
use crate::family::{CardText, ClaimSummary, FamilyReport, Given, Progress, RunOptions, VerdictRow};
use crate::formula::user::defined_conditions;

use super::card::scenario_file;
pub use super::card::{embedded_card, parse_card, Card, ReadCard, CARD, FAMILY_ID};
use super::check::{prepare, residual_sweep, run_prepared, run_scenario, Scenario, ScenarioRun};
use super::claims::ALL;
use super::explicit::{ExplicitInstance, InstanceInput};
use super::formulas::{summary, Claim, SYMBOLS};
use super::problem::{Constants, Instance};

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
    fn work(&self, s: &Scenario) -> Option<crate::budget::Work> {
        Some(s.work())
    }

    fn prepare(&self, s: &Scenario) -> Result<(Instance, Constants)> {
        prepare(s)
    }
    fn run(&self, _card: &ReadCard, s: &Scenario, prepared: (Instance, Constants), claims: &[Claim], settings: &RunSettings) -> Result<ScenarioRun> {
        run_prepared(s, prepared, claims, settings.bound_scale)
    }
    fn searcher(&self) -> Option<&dyn Searcher<Self>> {
        Some(&super::search::Space)
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
        let swept = card.sections.residual_sweep.as_ref().filter(|_| settings.full);
        let sweep = swept.and_then(|sw| card.scenarios.iter().find(|s| s.name == sw.scenario).map(|s| (s, &sw.factors)));
        let sweep = sweep.map(|(s, f)| in_pool(settings.run.threads, || residual_sweep(s, f)).and_then(|p| Ok((s.name.clone(), p?)))).transpose()?;
        let expected = swept.and_then(|s| s.expected.as_deref());
        let (files, summary_markdown) = super::report::report_files(claims, runs, sweep.as_ref(), expected, settings.meta, settings.plots)?;
        // The trade-off's verdict is computed on the sweep; one the card does not expect fails the run.
        let mismatches = sweep
            .as_ref()
            .zip(expected)
            .map(|((name, points), e)| (name, super::tradeoff::evaluate(points, 1.0, false).verdict, e))
            .filter(|(_, found, e)| found.to_string() != *e)
            .map(|(name, found, e)| format!("{} on the sweep of `{name}` ({found}, the card expects {e})", super::tradeoff::ID))
            .into_iter()
            .collect();
        Ok(FamilyReport { summary_markdown, files, mismatches, ..Default::default() })
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
    /// The scenario file with its instance written out by its numbers
    /// ([`ExplicitInstance::of`]): it builds the same instance bit for bit, so it runs to the same
    /// results (the scenario hash aside, which covers the instance as written).
    fn export_instance(&self, text: &str, what: &str) -> Result<String> {
        let s = scenario_file(text, what)?;
        let (inst, _) = prepare(&s)?;
        let explicit = Scenario { family: None, instance: InstanceInput::Explicit(ExplicitInstance::of(&inst)), ..s };
        crate::explicit::exported_file(&explicit, &explicit.name, what, "The instance", FAMILY_ID, "the explicit instance")
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
