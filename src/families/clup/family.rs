//! This family as the core sees it: its card, and the [`Family`] implementation behind `list`,
//! `check` and `run`.

use serde::{Deserialize, Serialize};

use crate::card::{ClaimCard, FamilyInfo, InconsistencyCard};
use crate::claim::BoundClaim;
use crate::error::{Error, Result};
use crate::family::{CheckRequest, ClaimSummary, Family, FamilyReport, Progress, RunOptions};

use super::check::{run_scenario, Scenario, ScenarioRun};
use super::claims::{ClupClaim, ALL};
use super::report;

/// The id scenario files use: `family = "clup"`.
pub const FAMILY_ID: &str = "clup";

/// The embedded card.
pub const CARD: (&str, &str) = ("theorems/clup.toml", include_str!("../../../theorems/clup.toml"));

/// FedCLUP's claim card.
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
}

/// Parses a card, naming the field at fault.
///
/// # Errors
/// [`Error::Parse`] or [`Error::InvalidField`].
pub fn parse_card(text: &str, what: &str) -> Result<Card> {
    let card: Card = toml::from_str(text).map_err(|e| Error::Parse { what: what.to_string(), message: e.to_string() })?;
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

/// FedCLUP of Yu, He, Sun, Xue, Li.
pub struct Clup;

/// The registered instance.
pub static FAMILY: Clup = Clup;

fn selected(ids: &[String]) -> Vec<ClupClaim> {
    ALL.iter().copied().filter(|c| ids.is_empty() || ids.iter().any(|id| id == c.id)).collect()
}

impl Family for Clup {
    fn id(&self) -> &'static str {
        FAMILY_ID
    }

    fn title(&self) -> &'static str {
        "Yu, He, Sun, Xue, Li: FedCLUP, statistical accuracy and communication in personalized FL"
    }

    fn claims(&self) -> Vec<ClaimSummary> {
        static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
        let statement = |id: &str| STATEMENTS.of(id, || embedded_card().map(|c| c.claims).unwrap_or_default());
        ALL.iter()
            .map(|c| ClaimSummary {
                id: c.id,
                kind: c.kind,
                title: c.title,
                statement: statement(c.id),
                source: c.source,
                reading: c.reading(),
                metric: c.metric,
            })
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
        let claims = selected(&request.claims);
        let scale = request.bound_scale.unwrap_or(1.0);
        let scenarios: Vec<&Scenario> = card.scenarios.iter().filter(|s| request.scenarios.is_empty() || request.scenarios.contains(&s.name)).collect();
        // Every design is drawn before any run: bad input fails before work or files.
        for s in &scenarios {
            (0..s.designs as u64).try_for_each(|d| s.model.instance(d).map(|_| ())).map_err(|e| e.in_scenario(&s.name))?;
        }
        progress.start(scenarios.len(), "FedCLUP scenarios");
        let mut runs: Vec<ScenarioRun> = Vec::with_capacity(scenarios.len());
        for s in &scenarios {
            runs.push(crate::engine::monte_carlo::in_pool(request.threads, || run_scenario(s, &claims, scale))?.map_err(|e| e.in_scenario(&s.name))?);
            progress.step();
        }
        progress.finish();
        let (files, summary_markdown) = report::report_files(&runs, &request.meta, request.plots)?;
        Ok(FamilyReport { rows: report::verdict_rows(&runs), summary_markdown, files, ..Default::default() })
    }

    /// Design 0's exact constants (`mu`, both readings of `L`, `rho^2`, `R`), the steps of
    /// Algorithm 1 at the scenario's lambda, and Lemma 1's constants there.
    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| Error::Parse { what: what.to_string(), message: e.to_string() })?;
        scenario.check("scenario")?;
        let c = scenario.model.instance(0)?.constants;
        let params = scenario.params(&c, scenario.lambda);
        Ok(serde_json::json!({
            "draw0": c,
            "kappa": c.l_sample / c.mu,
            "params": params,
            "lemma1": super::bounds::lemma1(c.mu, c.l_sample, scenario.lambda),
        }))
    }

    fn run(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| Error::Parse { what: what.to_string(), message: e.to_string() })?;
        scenario.check("scenario")?;
        let run = crate::engine::monte_carlo::in_pool(options.threads, || run_scenario(&scenario, &ALL, 1.0))??;
        let verdicts: Vec<serde_json::Value> = run
            .results
            .iter()
            .map(|c| serde_json::json!({"claim": c.claim, "verdict": c.evaluation.verdict, "slack": c.evaluation.slack, "failed": c.evaluation.failed}))
            .collect();
        crate::report::to_json(&serde_json::json!({
            "meta": crate::report::ReportMeta::new(format!("cargo run --release -- run <file> (scenario `{}`)", run.scenario)),
            "scenario": run.scenario,
            "scenario_hash": run.scenario_hash,
            "constants": run.constants,
            "params": run.params,
            "global_error": run.global_error,
            "k_study": run.k_study,
            "verdicts": verdicts,
        }))
    }

    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &super::formulas::SYMBOLS
    }
}
