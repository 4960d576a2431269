//! What a paper family declares, as the core sees it: the [`Family`] trait and the values that
//! cross it (requests, claim summaries, verdict rows, report files).
//!
//! A family (one folder under `src/families/`) owns its problem model, algorithms, claims, card
//! schema and scenarios. Most families implement [`crate::checker::Plugin`], and the core's
//! checker owns the loop (selection, validation, parallel runs, rows); the command line, the
//! reports and the [`crate::registry::Registry`] see every family only through [`Family`].
//! Registering a family is one line in `src/families/mod.rs`.
//!
//! Data flows one way: a family turns its scenarios into instances and exact constants, runs
//! them through the shared [`crate::engine`], compares with its claims through
//! [`crate::verdict`], and hands back [`VerdictRow`]s and the files of its report; the core
//! merges the families, writes every file atomically, and derives the exit status
//! ([`crate::outcome`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::bench::measure::{BenchRequest, Measurement};
use crate::claim::Reading;
use crate::error::{Error, Result};
use crate::report::ReportMeta;
use crate::verdict::{Evaluation, VerdictKind};

/// What kind of statement a claim is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// A bound on a metric of a run (theorem, corollary, special case).
    Bound,
    /// A per-round inequality of a proof (a lemma).
    Lemma,
}

/// A claim as `list` and the reports show it.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimSummary {
    /// Claim id as in CLAIMS.md; variants append `~name`.
    pub id: &'static str,
    /// Bound or lemma.
    pub kind: ClaimKind,
    /// One-line title.
    pub title: &'static str,
    /// The statement in ASCII math, from the family's card (empty when the card has none).
    pub statement: String,
    /// Source lines.
    pub source: &'static str,
    /// The reading encoded.
    pub reading: Reading,
    /// The metric bounded, or the inequality, in ASCII math.
    pub metric: &'static str,
}

impl ClaimSummary {
    /// The summary of a [`BoundClaim`](crate::claim::BoundClaim): its id, title, source and
    /// reading, with the statement and metric as the card prints them.
    pub fn of<C: crate::claim::BoundClaim>(claim: &C, kind: ClaimKind, statement: &str, metric: &'static str) -> Self {
        Self { id: claim.id(), kind, title: claim.title(), statement: statement.to_string(), source: claim.source(), reading: claim.reading(), metric }
    }

    /// The summary of a declared claim, with the statement as the card prints it.
    pub fn declared(d: &crate::claim::Declaration, kind: ClaimKind, statement: String) -> Self {
        Self { id: d.id, kind, title: d.title, statement, source: d.source, reading: d.reading.clone(), metric: d.metric }
    }
}

/// Which estimator a check uses when it overrides the scenarios' own choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum EstimatorChoice {
    /// Exact expectations (no sampling error).
    #[default]
    Exact,
    /// Seeded Monte Carlo replicates with a Student-t interval.
    MonteCarlo,
}

impl EstimatorChoice {
    /// The name the command line and scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            EstimatorChoice::Exact => "exact",
            EstimatorChoice::MonteCarlo => "monte-carlo",
        }
    }
}

/// Refuses an estimator override a family does not offer: its claims would be checked with its
/// own estimator while the command asked for another.
///
/// # Errors
/// [`Error::InvalidField`] `field` (`--estimator` on the command line, `estimator` in a sweep
/// file), naming the family and the estimators it offers.
pub fn require_estimator(field: &str, family: &str, offered: &[EstimatorChoice], asked: Option<EstimatorChoice>) -> Result<()> {
    match asked {
        Some(e) if !offered.contains(&e) => {
            let names: Vec<&str> = offered.iter().map(|o| o.name()).collect();
            Err(Error::field(
                field,
                format!("`{}`: the `{family}` family does not offer it", e.name()),
                format!("for `{family}`: {} (select another family's claims, scenarios or card to use `{}`)", names.join(", "), e.name()),
            ))
        }
        _ => Ok(()),
    }
}

/// A check as asked for on the command line, the same for every family.
#[derive(Debug, Clone, Default)]
pub struct CheckRequest {
    /// Only these claims (all when empty). Ids of other families are ignored by a family.
    pub claims: Vec<String>,
    /// Only these scenarios, by name (all when empty).
    pub scenarios: Vec<String>,
    /// A card given instead of the embedded ones: its text and where it came from.
    pub card: Option<CardText>,
    /// Worker threads (rayon's default when `None`); results do not depend on it.
    pub threads: Option<usize>,
    /// Multiplies every bound (below 1 only in negative controls).
    pub bound_scale: Option<f64>,
    /// Overrides every scenario's estimator.
    pub estimator: Option<EstimatorChoice>,
    /// The main job: also the family's extra work (mirrored figures, adversarial search).
    pub full: bool,
    /// Render PNG figures.
    pub plots: bool,
    /// Provenance written into every report.
    pub meta: ReportMeta,
    /// The work budget of one scenario ([`crate::budget::WORK_BUDGET`] when `None`).
    pub max_work: Option<f64>,
}

/// A card file's text and its name for messages.
#[derive(Debug, Clone)]
pub struct CardText {
    /// Where it came from (a path).
    pub what: String,
    /// Its TOML text.
    pub text: String,
}

/// An adversarial search as asked for on the command line.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Only these claims (all when empty).
    pub claims: Vec<String>,
    /// Objective evaluations per claim.
    pub budget: usize,
    /// Objective evaluations of each "any instance" search of a step condition's room, per
    /// doubling of the step (0: only the worst instance's room).
    pub room_budget: usize,
    /// Seed of the search.
    pub seed: u64,
    /// Multiplies every bound (negative controls).
    pub bound_scale: f64,
    /// Render PNG figures.
    pub plots: bool,
    /// Provenance.
    pub meta: ReportMeta,
    /// A card given instead of the embedded ones (its scenarios seed the search where the
    /// family's search starts from scenarios; its claims are searched beside the built-in ones).
    pub card: Option<CardText>,
    /// The folder the report goes to (its files under `OUT/search/`), which the replay commands
    /// of its findings name; `None`: they name the files relative to it.
    pub out: Option<std::path::PathBuf>,
}

/// Options of the `run` command.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Worker threads.
    pub threads: Option<usize>,
    /// Overrides the scenario's estimator.
    pub estimator: Option<EstimatorChoice>,
    /// The work budget ([`crate::budget::WORK_BUDGET`] when `None`).
    pub max_work: Option<f64>,
}

/// One claim's verdict on one scenario, as every family reports it.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictRow {
    /// The family's id.
    pub family: &'static str,
    /// Claim id.
    pub claim: &'static str,
    /// The reading checked (`primary` or a variant's name).
    pub reading: &'static str,
    /// Scenario name.
    pub scenario: String,
    /// Which constants the evaluation used: only [`Exact`](crate::verdict::ConstantsSource::Exact)
    /// rows are verdicts on the claim as stated.
    pub constants: crate::verdict::ConstantsSource,
    /// What the empirical constant was, for the reader (e.g. `empirical b^2 = 0.3`).
    pub label: Option<String>,
    /// The evaluation.
    pub evaluation: Evaluation,
    /// The verdict the card expects.
    pub expected: Option<VerdictKind>,
}

impl VerdictRow {
    /// Whether the computed verdict agrees with the card (where it says anything).
    pub fn matches_expected(&self) -> bool {
        self.expected.is_none_or(|e| e == self.evaluation.verdict)
    }
}

/// A report file: where it goes under the output folder, and its bytes.
#[derive(Debug, Clone)]
pub struct ReportFile {
    /// Path relative to the output folder.
    pub path: PathBuf,
    /// Content.
    pub bytes: Vec<u8>,
}

/// What one family's check produced.
#[derive(Debug, Clone, Default)]
pub struct FamilyReport {
    /// Verdict rows, in report order.
    pub rows: Vec<VerdictRow>,
    /// The family's section of `SUMMARY.md`.
    pub summary_markdown: String,
    /// Report files (per-claim JSON, figures, ...), relative to the output folder.
    pub files: Vec<ReportFile>,
    /// Findings that differ from the family's cards beyond the rows (e.g. a statement of a
    /// mirrored figure, a counterexample found by search), each with how to replay it.
    pub mismatches: Vec<String>,
    /// Extra sections for the terminal (tables of statements, search results).
    pub terminal: String,
    /// Lines of `search.csv` (adversarial searches), in report order.
    pub searches: Vec<crate::search::line::SearchLine>,
}

/// Progress of long work, shown by the command line (and silent in the library's tests).
pub trait Progress: Sync {
    /// Starts a phase of `len` steps.
    fn start(&self, len: usize, label: &str);
    /// One step done.
    fn step(&self);
    /// The phase is over.
    fn finish(&self);
}

/// Progress that shows nothing.
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _len: usize, _label: &str) {}
    fn step(&self) {}
    fn finish(&self) {}
}

/// The given values of a `conditions` query: named constants and parameters (e.g. `n`, `L`,
/// `gamma`), each as typed on the command line (`--n`, ...), for messages.
pub type Given = BTreeMap<String, f64>;

/// A paper family, as the core sees it.
pub trait Family: Sync + Send {
    /// Short id, as scenario files name it (`family = "..."`).
    fn id(&self) -> &'static str;
    /// The paper and its algorithms, one line.
    fn title(&self) -> &'static str;
    /// Every built-in claim and lemma, in report order.
    fn claims(&self) -> Vec<ClaimSummary>;
    /// Names of the default scenarios of the embedded cards.
    ///
    /// # Errors
    /// Only if an embedded card is malformed.
    fn scenario_names(&self) -> Result<Vec<String>>;
    /// Checks the selected claims on the selected scenarios (of the embedded cards, or of
    /// `request.card`). Bad input (a scenario that cannot be prepared) fails before any run.
    ///
    /// # Errors
    /// Bad input naming the field; numerical failures.
    fn check(&self, request: &CheckRequest, progress: &dyn Progress) -> Result<FamilyReport>;
    /// Runs one scenario file and returns the `run` command's JSON.
    ///
    /// # Errors
    /// Bad input naming the field.
    fn run(&self, text: &str, what: &str, options: &RunOptions) -> Result<String>;
    /// The instance a scenario file produces, written in the family's explicit scenario-file
    /// form (`run --export-instance`), so that running the written file gives the same results.
    ///
    /// # Errors
    /// Bad input naming the field; [`crate::error::Error::InvalidField`] `--export-instance` when
    /// the family exports no instances (the default).
    fn export_instance(&self, _text: &str, _what: &str) -> Result<String> {
        Err(crate::error::Error::field("--export-instance", "this family exports no instances", "a scenario of a family with an explicit scenario form"))
    }
    /// Adversarial search over admissible instances for the selected claims; `None` when the
    /// family has none.
    ///
    /// # Errors
    /// Bad input; numerical failures.
    fn search(&self, _request: &SearchRequest, _progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        Ok(None)
    }
    /// Whether [`Family::search`] searches (families without one keep the default `false`).
    fn has_search(&self) -> bool {
        false
    }
    /// The family's own experiments (e.g. a paper's figures mirrored); `None` when it has none.
    ///
    /// # Errors
    /// Numerical failures.
    fn experiments(&self, _threads: Option<usize>, _meta: &ReportMeta, _plots: bool, _progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        Ok(None)
    }
    /// The constants of one scenario (a scenario file's text, as `run` reads it) as JSON, for
    /// the tables of sweeps; `null` when the family reports none this way.
    ///
    /// # Errors
    /// Bad input naming the field.
    fn scenario_constants(&self, _text: &str, _what: &str) -> Result<serde_json::Value> {
        Ok(serde_json::Value::Null)
    }
    /// Which conditions of each selected claim (built in, or defined by `card`) hold for the given
    /// constants and steps, and the admissible steps, as text (or JSON).
    ///
    /// # Errors
    /// Bad input naming the value (`--name`) and its range.
    fn conditions(&self, _given: &Given, _claims: &[String], _json: bool, _card: Option<&CardText>) -> Result<String> {
        Err(Error::Unknown { kind: "command for this family", name: "conditions".into(), known: "check, run".into() })
    }
    /// The estimators `--estimator` may choose for this family's runs (its claims are checked on
    /// exact expectations only by default).
    fn estimators(&self) -> &'static [EstimatorChoice] {
        &[EstimatorChoice::Exact]
    }
    /// The named flags of `fedbounds conditions` (without dashes: `n`, `eta-u`) this family's
    /// `conditions` reads besides its symbols (`--set NAME=VALUE`, or a flag named as a
    /// symbol); the command refuses any other, so no value given is silently ignored. None by
    /// default.
    fn condition_flags(&self) -> &'static [&'static str] {
        &[]
    }
    /// The names a card's formulas may use for this family (empty when it reads none).
    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &[]
    }
    /// The claims a user's card defines by formulas (ids that are not built in), read and
    /// compiled; nothing is kept: reading a card twice gives the same claims, and two cards do not
    /// interfere. Commands that take `--card` pass the card to every call that needs it.
    ///
    /// # Errors
    /// Bad input naming the claim, the field and the position; by default, any claim of the card
    /// that is not built in, since the family reads no formula claims.
    fn card_claims(&self, card: &CardText) -> Result<Vec<ClaimSummary>> {
        let table: toml::Table = crate::card::parse_toml(&card.text, &card.what)?;
        let claims = table.get("claims").and_then(|c| c.as_array()).cloned().unwrap_or_default();
        let ids: Vec<&str> = claims.iter().filter_map(|c| c.get("id").and_then(|i| i.as_str())).collect();
        let known: Vec<&str> = self.claims().iter().map(|c| c.id).collect();
        crate::card::refuse_card_claims(self.id(), &ids, &known).map(|()| Vec::new())
    }
    /// Every claim: the built-in ones, then those `card` defines.
    ///
    /// # Errors
    /// As [`Family::card_claims`].
    fn claims_with(&self, card: Option<&CardText>) -> Result<Vec<ClaimSummary>> {
        let mut claims = self.claims();
        if let Some(card) = card {
            claims.extend(self.card_claims(card)?);
        }
        Ok(claims)
    }
    /// The family's own timed workloads for the `bench` command (e.g. Monte Carlo throughput,
    /// exact runs at fixed sizes); none by default.
    ///
    /// # Errors
    /// Numerical failures; a worker pool that cannot start.
    fn bench(&self, _request: &BenchRequest) -> Result<Vec<Measurement>> {
        Ok(Vec::new())
    }
    /// The `explain` text of claim `id` (statement, source, assumptions, conditions, the formula
    /// as encoded, the card's readings of inconsistencies), or `None` when the family has no such
    /// claim.
    ///
    /// # Errors
    /// When the family's embedded card cannot be read.
    fn explain(&self, _id: &str) -> Result<Option<String>> {
        Ok(None)
    }
}
