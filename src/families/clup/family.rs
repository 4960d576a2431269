//! This family as the core sees it: its card, and the [`Plugin`] implementation behind `list`,
//! `check` and `run`.

use crate::card::parse_toml;
use crate::checker::{Plugin, ReportSettings, RunSettings};
use crate::claim::BoundClaim;
use crate::error::{Error, Result};
use crate::family::{CardText, ClaimSummary, FamilyReport, Given, Progress, RunOptions, VerdictRow};
use crate::formula::user::{compile_card_claims, conditions_text, UserClaim};
use crate::paper_card::PaperCard;

use super::check::{draw_designs, run_drawn, Scenario, ScenarioRun};
use super::claims::{ClupClaim, Statement, ALL};
use super::explicit::ModelInput;
use super::formulas::{card_claim, SYMBOLS};
use super::model::Instance;
use super::report;

/// The id scenario files use: `family = "clup"`.
pub const FAMILY_ID: &str = "clup";

/// The embedded card.
pub const CARD: (&str, &str) = ("theorems/clup.toml", include_str!("../../../theorems/clup.toml"));

/// FedCLUP's claim card as read: as written (shared parts and scenarios), with the claims it
/// defines by formulas (not built in) compiled, in card order.
pub type Card = crate::formula::user::ReadCard<PaperCard<Scenario>, ClupClaim>;

/// Parses a card, naming the field at fault. Claims it defines by formulas (not built in) are
/// compiled first ([`card_claim`]), so its scenarios may name them; pure, so the same card read
/// twice gives the same claims.
///
/// # Errors
/// [`Error::Parse`] or [`Error::InvalidField`].
pub fn parse_card(text: &str, what: &str) -> Result<Card> {
    let card: PaperCard<Scenario> = parse_toml(text, what)?;
    let builtin: Vec<&str> = ALL.iter().map(|c| c.id).collect();
    let defined = compile_card_claims(&card.claims, &builtin, &[CARD.1], &SYMBOLS, card_claim)?;
    let known: Vec<&str> = builtin.iter().copied().chain(defined.iter().map(|c| c.id)).collect();
    card.check_scenarios(|field, s| s.check(field).and_then(|()| s.check_expected(field, &known)))?;
    card.search.check(&builtin)?;
    Ok(crate::formula::user::ReadCard { card, defined })
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

/// The registered family.
pub static FAMILY: crate::checker::Plugged<Clup> = crate::checker::Plugged(Clup);

/// Reads a scenario file as `run` and the sweeps' constants columns take it.
fn scenario_file(text: &str, what: &str) -> Result<Scenario> {
    let scenario: Scenario = crate::card::parse_toml(text, what)?;
    scenario.check("scenario")?;
    scenario.check_expected("scenario", &ALL.iter().map(|c| c.id).collect::<Vec<_>>())?;
    Ok(scenario)
}

impl Plugin for Clup {
    type Card = Card;
    type Scenario = Scenario;
    type Claim = ClupClaim;
    type Prepared = Vec<Instance>;
    type Run = ScenarioRun;

    fn id(&self) -> &'static str {
        FAMILY_ID
    }

    fn title(&self) -> &'static str {
        "Yu, He, Sun, Xue, Li: FedCLUP, statistical accuracy and communication in personalized FL"
    }

    fn embedded_card(&self) -> Result<Card> {
        embedded_card()
    }

    fn read_card(&self, card: &CardText) -> Result<Card> {
        parse_card(&card.text, &card.what)
    }

    fn builtin_claims(&self) -> Vec<ClupClaim> {
        ALL.to_vec()
    }

    fn defined_claims(&self, card: &Card) -> Vec<ClupClaim> {
        card.defined.iter().map(|c| **c).collect()
    }

    fn claim_id(&self, claim: &ClupClaim) -> &'static str {
        claim.id
    }

    fn summary(&self, c: &ClupClaim) -> ClaimSummary {
        static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
        let statement = match c.statement {
            Statement::Card(f) => f.0.claim.statement.clone(),
            _ => STATEMENTS.of(c.id, || embedded_card().map(|c| c.card.claims).unwrap_or_default()),
        };
        ClaimSummary { id: c.id, kind: c.kind, title: c.title, statement, source: c.source, reading: c.reading(), metric: c.metric }
    }

    /// Every design is drawn before any run: bad input fails before work or files.
    fn work(&self, s: &Scenario) -> Option<crate::budget::Work> {
        Some(s.work())
    }

    fn prepare(&self, s: &Scenario) -> Result<Vec<Instance>> {
        draw_designs(s)
    }

    /// Corollary 2's `K` of (134) follows from each design's condition number.
    fn prepared_work(&self, s: &Scenario, draws: &Vec<Instance>) -> Option<crate::budget::Work> {
        Some(s.prepared_work(draws))
    }

    fn run(&self, _card: &Card, s: &Scenario, draws: Vec<Instance>, claims: &[ClupClaim], settings: &RunSettings) -> Result<ScenarioRun> {
        run_drawn(s, draws, claims, settings.bound_scale)
    }

    fn report(
        &self,
        _card: &Card,
        _claims: &[ClupClaim],
        runs: &[ScenarioRun],
        _rows: &[VerdictRow],
        settings: &ReportSettings,
        _progress: &dyn Progress,
    ) -> Result<FamilyReport> {
        let (files, summary_markdown) = report::report_files(runs, settings.meta, settings.plots)?;
        Ok(FamilyReport { summary_markdown, files, ..Default::default() })
    }

    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        let scenario = scenario_file(text, what)?;
        let c = scenario.model.instance(0)?.constants;
        let params = scenario.params(&c, scenario.lambda);
        Ok(serde_json::json!({
            "draw0": c,
            "kappa": c.l_sample / c.mu,
            "params": params,
            "lemma1": super::bounds::lemma1(c.mu, c.l_sample, scenario.lambda),
        }))
    }

    fn run_file(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario = scenario_file(text, what)?;
        crate::budget::require(&scenario.work(), options.max_work)?;
        let draws = draw_designs(&scenario)?;
        crate::budget::require(&scenario.prepared_work(&draws), options.max_work)?;
        let run = crate::engine::monte_carlo::in_pool(options.threads, || run_drawn(&scenario, draws, &ALL, 1.0))??;
        let verdicts: Vec<serde_json::Value> = run
            .results
            .iter()
            .map(|c| serde_json::json!({"claim": c.claim, "verdict": c.evaluation.verdict, "slack": c.evaluation.slack, "failed": c.evaluation.failed, "notes": c.evaluation.notes}))
            .collect();
        crate::report::to_json(&serde_json::json!({
            "meta": crate::report::ReportMeta::new(format!("cargo run --release -- run <file> (scenario `{}`)", run.scenario)),
            "scenario": run.scenario,
            "scenario_hash": run.scenario_hash,
            "constants": run.constants,
            "params": run.params,
            "global_error": run.global_error,
            "stat_curves": run.stat_curves,
            "alg2": scenario.batch.map(|b| serde_json::json!({
                "batch": b,
                "fresh_batches": run.alg2_error,
                "one_batch": (!run.alg2_one_batch_error.is_empty()).then_some(&run.alg2_one_batch_error),
                "sigma2": run.sigma2,
                "ball": run.alg2_ball,
                "v1": run.t3_v1,
            })),
            "k_study": run.k_study,
            "verdicts": verdicts,
        }))
    }

    /// The scenario file with its design draws written out by their numbers
    /// ([`ModelInput::explicit`]): they build the same instances bit for bit, with the constants
    /// the scenario states, so the file runs to the same results (the scenario hash aside, which
    /// covers the model as written).
    fn export_instance(&self, text: &str, what: &str) -> Result<String> {
        let s = scenario_file(text, what)?;
        let draws = draw_designs(&s)?;
        let model = ModelInput::Explicit(s.model.explicit(&draws));
        let explicit = Scenario { family: None, designs: None, model, ..s };
        crate::explicit::exported_file(&explicit, &explicit.name, what, "The design draws", FAMILY_ID, "the explicit model")
    }

    fn searcher(&self) -> Option<&dyn crate::checker::Searcher<Self>> {
        Some(&super::search::Space)
    }

    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &super::formulas::SYMBOLS
    }

    /// The checks and bound of card-defined claims at the given values (`--set NAME=VALUE`,
    /// names as `fedbounds list --symbols` prints them). The built-in claims read quantities of
    /// the run (`V_1`, the draw's `mu`), so they are checked by `check` only.
    fn conditions(&self, card: Option<&Card>, given: &Given, ids: &[String], json: bool) -> Result<String> {
        let chosen: Vec<&UserClaim> = card
            .map(|c| c.defined.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|c| match c.statement {
                Statement::Card(f) => Some(&f.0.claim),
                _ => None,
            })
            .filter(|c| ids.is_empty() || ids.iter().any(|id| id == c.id))
            .collect();
        if chosen.is_empty() {
            return Err(Error::field(
                "--claim",
                "FedCLUP's built-in bounds read quantities of the run (V_1, the draw's mu): see `fedbounds check`",
                "a claim defined in the card given with --card",
            ));
        }
        let defined: Vec<&str> = chosen.iter().map(|c| c.id).collect();
        crate::formula::user::require_only_defined(ids, &defined)?;
        conditions_text(&chosen, &SYMBOLS, given, json)
    }
}
