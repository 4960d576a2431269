//! This family as the core sees it: its card, and the [`Family`] implementation behind `list`,
//! `check` and `run`.

use serde::{Deserialize, Serialize};

use crate::card::{ClaimCard, FamilyInfo, InconsistencyCard};
use crate::claim::BoundClaim;
use crate::error::{Error, Result};
use crate::family::{CardText, CheckRequest, ClaimKind, ClaimSummary, Family, FamilyReport, Given, Progress, RunOptions};

use super::card_claims::CardClaim;
use super::check::{residual_sweep, run_scenario, run_scenario_with, ResidualSweep, Scenario, ScenarioRun};
use super::claims::{FedPltClaim, ALL};
use super::report;

/// The id scenario files use: `family = "fedplt"`.
pub const FAMILY_ID: &str = "fedplt";

/// The embedded card.
pub const CARD: (&str, &str) = ("theorems/fedplt.toml", include_str!("../../../theorems/fedplt.toml"));

/// FedPLT's claim card.
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
}

/// Parses a card, naming the field at fault.
///
/// # Errors
/// [`Error::Parse`] or [`Error::InvalidField`].
pub fn parse_card(text: &str, what: &str) -> Result<Card> {
    let card: Card = toml::from_str(text).map_err(|e| Error::Parse { what: what.to_string(), message: e.to_string() })?;
    // Claims the card defines by formulas are compiled and registered first, so its scenarios
    // may name them.
    super::card_claims::register(&card.claims)?;
    if let Some(sweep) = &card.residual_sweep {
        if !card.scenarios.iter().any(|s| s.name == sweep.scenario) {
            return Err(Error::field("residual_sweep.scenario", format!("`{}` is not a scenario of the card", sweep.scenario), "a scenario name"));
        }
        if sweep.factors.is_empty() || sweep.factors.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
            return Err(Error::field("residual_sweep.factors", format!("got {:?}", sweep.factors), "finite numbers > 0"));
        }
    }
    for (i, s) in card.scenarios.iter().enumerate() {
        s.check(&format!("scenarios[{i}] ({})", s.name))?;
        crate::card::require_new_scenario_name(card.scenarios[..i].iter().map(|o| o.name.as_str()), i, &s.name)?;
    }
    Ok(card)
}

/// The embedded card.
///
/// # Errors
/// Only if it is malformed (a test guards against this).
pub fn embedded_card() -> Result<Card> {
    parse_card(CARD.1, CARD.0)
}

/// FedPLT of Dabaja and El-Azouzi.
pub struct FedPlt;

/// The registered instance.
pub static FAMILY: FedPlt = FedPlt;

fn selected(ids: &[String]) -> Vec<FedPltClaim> {
    ALL.iter().copied().filter(|c| ids.is_empty() || ids.iter().any(|id| id == c.id())).collect()
}

impl Family for FedPlt {
    fn id(&self) -> &'static str {
        FAMILY_ID
    }

    fn title(&self) -> &'static str {
        "Dabaja, El-Azouzi: FedPLT, static partial (layer) training with masks"
    }

    fn claims(&self) -> Vec<ClaimSummary> {
        static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
        let statement = |id: &str| STATEMENTS.of(id, || embedded_card().map(|c| c.claims).unwrap_or_default());
        ALL.iter()
            .map(|c| ClaimSummary {
                id: c.id(),
                kind: ClaimKind::Bound,
                title: c.title(),
                statement: statement(c.id()),
                source: c.source(),
                reading: c.reading(),
                metric: c.metric(),
            })
            .chain(super::card_claims::registered().into_iter().map(|c| ClaimSummary {
                id: c.id(),
                kind: ClaimKind::Bound,
                title: c.title(),
                statement: c.claim.statement.clone(),
                source: c.source(),
                reading: c.reading(),
                metric: super::card_claims::DISTANCE_METRIC,
            }))
            .collect()
    }

    fn scenario_names(&self) -> Result<Vec<String>> {
        Ok(embedded_card()?.scenarios.into_iter().map(|s| s.name).collect())
    }

    fn check(&self, request: &CheckRequest, progress: &dyn Progress) -> Result<FamilyReport> {
        let card = match &request.card {
            Some(c) => parse_card(&c.text, &c.what)?,
            None => embedded_card()?,
        };
        // A card that defines claims by formulas is checked for those claims unless others are named.
        let defined: Vec<&CardClaim> = match &request.card {
            Some(_) => {
                let ids: Vec<&str> = card.claims.iter().map(|c| c.id.as_str()).collect();
                super::card_claims::registered().into_iter().filter(|c| ids.contains(&c.id())).collect()
            }
            None => Vec::new(),
        };
        let (claims, card_claims): (Vec<FedPltClaim>, Vec<&CardClaim>) = if request.claims.is_empty() && !defined.is_empty() {
            (Vec::new(), defined)
        } else {
            let named = super::card_claims::registered().into_iter().filter(|c| request.claims.iter().any(|id| id == c.id())).collect();
            (selected(&request.claims), named)
        };
        let scale = request.bound_scale.unwrap_or(1.0);
        let scenarios: Vec<&Scenario> = card.scenarios.iter().filter(|s| request.scenarios.is_empty() || request.scenarios.contains(&s.name)).collect();
        // Every instance is built before any run: bad input fails before work or files.
        for s in &scenarios {
            s.instance.build().and_then(|i| i.constants()).map_err(|e| e.in_scenario(&s.name))?;
        }
        progress.start(scenarios.len(), "FedPLT scenarios");
        let mut runs: Vec<ScenarioRun> = Vec::with_capacity(scenarios.len());
        for s in &scenarios {
            runs.push(
                crate::engine::monte_carlo::in_pool(request.threads, || run_scenario_with(s, &claims, &card_claims, scale))?
                    .map_err(|e| e.in_scenario(&s.name))?,
            );
            progress.step();
        }
        progress.finish();
        // The main job also draws the speed-error trade-off of Case 1.
        let sweep = match (&card.residual_sweep, request.full) {
            (Some(sw), true) => {
                let s = card
                    .scenarios
                    .iter()
                    .find(|s| s.name == sw.scenario)
                    .ok_or_else(|| Error::field("residual_sweep.scenario", "unknown", "a scenario name"))?;
                Some((s.name.clone(), crate::engine::monte_carlo::in_pool(request.threads, || residual_sweep(s, &sw.factors))??))
            }
            _ => None,
        };
        let (files, summary_markdown) = report::report_files(&runs, sweep.as_ref(), &request.meta, request.plots)?;
        Ok(FamilyReport { rows: report::verdict_rows(&runs), summary_markdown, files, ..Default::default() })
    }

    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| Error::Parse { what: what.to_string(), message: e.to_string() })?;
        scenario.check("scenario")?;
        let constants = scenario.instance.build()?.constants()?;
        serde_json::to_value(&constants).map_err(|e| Error::serialization("constants", e))
    }

    fn run(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| Error::Parse { what: what.to_string(), message: e.to_string() })?;
        scenario.check("scenario")?;
        let run = crate::engine::monte_carlo::in_pool(options.threads, || run_scenario(&scenario, &ALL, 1.0))??;
        let verdicts: Vec<serde_json::Value> = run
            .results
            .iter()
            .map(|c| serde_json::json!({"claim": c.claim, "verdict": c.evaluation.verdict, "failed": c.evaluation.failed, "empirical_verdict": c.empirical.as_ref().map(|e| e.verdict), "empirical_slack": c.empirical.as_ref().and_then(|e| e.slack)}))
            .collect();
        crate::report::to_json(&serde_json::json!({
            "meta": crate::report::ReportMeta::new(format!("cargo run --release -- run <file> (scenario `{}`)", run.scenario)),
            "scenario": run.scenario,
            "scenario_hash": run.scenario_hash,
            "constants": run.constants,
            "schedule": run.schedule,
            "z": run.z,
            "g2_empirical": run.g2_empirical,
            "b_empirical": run.b_empirical,
            "alignment_min": run.alignment.min,
            "alignment_failure": run.alignment.first_failure,
            "limit_gap": run.limit_gap,
            "distance": run.distance,
            "verdicts": verdicts,
        }))
    }

    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &super::formulas::SYMBOLS
    }

    fn load_card(&self, card: &CardText) -> Result<()> {
        parse_card(&card.text, &card.what).map(|_| ())
    }

    /// The checks and bound of card-defined claims at the given values (`--set NAME=VALUE`,
    /// names as `fedbounds list --symbols` prints them). The built-in claims' conditions depend
    /// on the run (the measured alignment, the schedule), so they are checked by `check` only.
    fn conditions(&self, given: &Given, ids: &[String], json: bool) -> Result<String> {
        let card = super::card_claims::registered();
        let chosen: Vec<&crate::formula::user::UserClaim> =
            card.iter().filter(|c| ids.is_empty() || ids.iter().any(|id| id == c.id())).map(|c| &c.claim).collect();
        if chosen.is_empty() {
            return Err(Error::field(
                "--claim",
                "FedPLT's built-in conditions depend on the run (measured alignment, schedule): see `fedbounds check`",
                "a claim defined in the card given with --card",
            ));
        }
        crate::formula::user::conditions_text(&chosen, &super::formulas::SYMBOLS, given, json)
    }
}
