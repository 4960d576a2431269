//! What a paper family declares, and how the core drives every family the same way.
//!
//! A family (one folder under `src/families/`) owns its problem model, algorithms, claims, card
//! schema and scenarios. It implements [`Family`]; the command line, the reports and the check
//! driver ([`check`]) see every family only through this trait. Registering a family is one line
//! in `src/families/mod.rs`.
//!
//! Data flows one way: a family turns its scenarios into instances and exact constants, runs
//! them through the shared [`crate::engine`], compares with its claims through
//! [`crate::verdict`], and hands back [`VerdictRow`]s and the files of its report; the core
//! merges the families, writes every file atomically, and derives the exit status.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::claim::{fmt_num, Reading};
use crate::error::{Error, Result};
use crate::report::{describe, write_atomic, ReportMeta};
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
    /// Seed of the search.
    pub seed: u64,
    /// Multiplies every bound (negative controls).
    pub bound_scale: f64,
    /// Render PNG figures.
    pub plots: bool,
    /// Provenance.
    pub meta: ReportMeta,
}

/// Options of the `run` command.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Worker threads.
    pub threads: Option<usize>,
    /// Overrides the scenario's estimator.
    pub estimator: Option<EstimatorChoice>,
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
    /// Every claim and lemma, in report order.
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
    /// Which conditions of each selected claim hold for the given constants and steps, and the
    /// admissible steps, as text (or JSON).
    ///
    /// # Errors
    /// Bad input naming the value (`--name`) and its range.
    fn conditions(&self, _given: &Given, _claims: &[String], _json: bool) -> Result<String> {
        Err(Error::Unknown { kind: "command for this family", name: "conditions".into(), known: "check, run".into() })
    }
    /// The names a card's formulas may use for this family (empty when it reads none).
    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &[]
    }
    /// Reads a user's card: claims it defines by formulas (ids that are not built in) become
    /// claims of this family for the rest of the process, beside the built-in ones.
    ///
    /// # Errors
    /// Bad input naming the claim, the field and the position; by default, any claim of the card
    /// that is not built in, since the family reads no formula claims.
    fn load_card(&self, card: &CardText) -> Result<()> {
        let table: toml::Table = toml::from_str(&card.text).map_err(|e| Error::Parse { what: card.what.clone(), message: e.to_string() })?;
        let known: Vec<&str> = self.claims().iter().map(|c| c.id).collect();
        let claims = table.get("claims").and_then(|c| c.as_array()).cloned().unwrap_or_default();
        match claims.iter().filter_map(|c| c.get("id").and_then(|i| i.as_str())).find(|id| !known.contains(id)) {
            Some(id) => Err(Error::field(format!("claims[{id}]"), format!("family `{}` reads no claims defined in a card", self.id()), known.join(", "))),
            None => Ok(()),
        }
    }
    /// The family's own timed workloads for the `bench` command (e.g. Monte Carlo throughput,
    /// exact runs at fixed sizes); none by default.
    ///
    /// # Errors
    /// Numerical failures; a worker pool that cannot start.
    fn bench(&self, _request: &crate::bench::BenchRequest) -> Result<Vec<crate::bench::Measurement>> {
        Ok(Vec::new())
    }
}

/// The registered families. The first is the default for scenario and card files that name no
/// family (files written before families existed).
#[derive(Clone)]
pub struct Registry {
    families: Vec<&'static dyn Family>,
}

impl Registry {
    /// A registry of these families, the first being the default.
    ///
    /// # Errors
    /// [`Error::InvalidField`] when empty or when two families share an id or a claim id.
    pub fn new(families: Vec<&'static dyn Family>) -> Result<Self> {
        if families.is_empty() {
            return Err(Error::field("families", "none registered", "at least one family"));
        }
        let mut ids: Vec<&str> = Vec::new();
        let mut claims: Vec<&str> = Vec::new();
        for f in &families {
            if ids.contains(&f.id()) {
                return Err(Error::field("families", format!("`{}` registered twice", f.id()), "distinct family ids"));
            }
            ids.push(f.id());
            for c in f.claims() {
                if claims.contains(&c.id) {
                    return Err(Error::field("families", format!("claim `{}` declared twice", c.id), "distinct claim ids"));
                }
                claims.push(c.id);
            }
        }
        Ok(Self { families })
    }

    /// Every family, in registry order.
    pub fn families(&self) -> &[&'static dyn Family] {
        &self.families
    }

    /// The family of files that name none.
    pub fn default_family(&self) -> &'static dyn Family {
        self.families[0]
    }

    /// The family with this id.
    ///
    /// # Errors
    /// [`Error::Unknown`] listing the registered ids.
    pub fn by_id(&self, id: &str) -> Result<&'static dyn Family> {
        self.families.iter().copied().find(|f| f.id() == id).ok_or_else(|| Error::Unknown {
            kind: "family",
            name: id.to_string(),
            known: self.families.iter().map(|f| f.id()).collect::<Vec<_>>().join(", "),
        })
    }

    /// The family that declares claim `id`.
    pub fn family_of_claim(&self, id: &str) -> Option<&'static dyn Family> {
        self.families.iter().copied().find(|f| f.claims().iter().any(|c| c.id == id))
    }

    /// The family a scenario or card file belongs to: its top-level `family = "id"` key, or (in a
    /// card) `[family] module = "id"`; files that name none belong to the default family.
    ///
    /// # Errors
    /// [`Error::Parse`] for a file that is not TOML; [`Error::Unknown`] for an unregistered id.
    pub fn family_of(&self, text: &str, what: &str) -> Result<&'static dyn Family> {
        let table: toml::Table = toml::from_str(text).map_err(|e| Error::Parse { what: what.to_string(), message: e.to_string() })?;
        match table.get("family") {
            Some(toml::Value::String(id)) => self.by_id(id),
            Some(toml::Value::Table(t)) => match t.get("module").and_then(|v| v.as_str()) {
                Some(id) => self.by_id(id),
                None => Ok(self.default_family()),
            },
            _ => Ok(self.default_family()),
        }
    }

    /// Checks that every requested claim id belongs to some family.
    ///
    /// # Errors
    /// [`Error::Unknown`] naming the first unknown id and every known one.
    pub fn require_known_claims(&self, ids: &[String]) -> Result<()> {
        let known: Vec<&'static str> = self.families.iter().flat_map(|f| f.claims().into_iter().map(|c| c.id)).collect();
        match ids.iter().find(|id| !known.contains(&id.as_str())) {
            Some(id) => Err(Error::Unknown { kind: "claim", name: id.clone(), known: known.join(", ") }),
            None => Ok(()),
        }
    }

    /// Runs `request` on every family concerned (in registry order) and collects their reports.
    /// Claim ids and scenario names are checked against all families first, so a typo fails
    /// before any run; a card given on the command line goes to the family it names.
    ///
    /// # Errors
    /// The first error (bad input fails before any run of the family at fault).
    pub fn check(&self, request: &CheckRequest, progress: &dyn Progress) -> Result<CheckOutcome> {
        if let Some(card) = &request.card {
            self.family_of(&card.text, &card.what)?.load_card(card)?;
        }
        self.require_known_claims(&request.claims)?;
        let card_family = match &request.card {
            Some(card) => Some(self.family_of(&card.text, &card.what)?.id()),
            None => None,
        };
        if !request.scenarios.is_empty() && card_family.is_none() {
            let mut known = Vec::new();
            for f in &self.families {
                known.extend(f.scenario_names()?);
            }
            if let Some(name) = request.scenarios.iter().find(|s| !known.contains(s)) {
                return Err(Error::Unknown { kind: "scenario", name: name.clone(), known: known.join(", ") });
            }
        }
        let mut outcome = CheckOutcome::default();
        for f in &self.families {
            let concerned = match card_family {
                Some(id) => id == f.id(),
                None => {
                    let claimed = request.claims.is_empty() || f.claims().iter().any(|c| request.claims.iter().any(|id| id == c.id));
                    let named = request.scenarios.is_empty() || f.scenario_names()?.iter().any(|s| request.scenarios.contains(s));
                    claimed && named
                }
            };
            if concerned {
                outcome.families.push(FamilyOutcome { id: f.id(), title: f.title(), claims: f.claims(), report: f.check(request, progress)? });
            }
        }
        Ok(outcome)
    }
}

/// What one family's check produced, with what the summary needs to know of the family.
#[derive(Debug, Clone)]
pub struct FamilyOutcome {
    /// The family's id.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its claims, in report order.
    pub claims: Vec<ClaimSummary>,
    /// What its check produced.
    pub report: FamilyReport,
}

/// What a check of several families produced.
#[derive(Debug, Clone, Default)]
pub struct CheckOutcome {
    /// Every family's outcome, in registry order.
    pub families: Vec<FamilyOutcome>,
}

impl CheckOutcome {
    /// Every verdict row.
    pub fn rows(&self) -> impl Iterator<Item = &VerdictRow> {
        self.families.iter().flat_map(|f| f.report.rows.iter())
    }

    /// Everything that differs from the cards: rows whose verdict is not the expected one, then
    /// the families' other findings.
    pub fn mismatches(&self) -> Vec<String> {
        let rows = self.rows().filter(|r| !r.matches_expected()).map(|r| {
            let what = if r.constants.is_exact() { String::new() } else { format!(" ({})", r.constants) };
            format!("{}{what} on {}", r.claim, r.scenario)
        });
        let other = self.families.iter().flat_map(|f| f.report.mismatches.iter().cloned());
        let mut seen = Vec::new();
        for m in rows.chain(other) {
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        seen
    }

    /// Every report file: the families' files, a Markdown page per claim, then `SUMMARY.md` and
    /// `summary.csv`.
    pub fn files(&self, meta: &ReportMeta) -> Vec<ReportFile> {
        let mut files: Vec<ReportFile> = self.families.iter().flat_map(|f| f.report.files.iter().cloned()).collect();
        for f in &self.families {
            for c in &f.claims {
                let rows: Vec<&VerdictRow> = f.report.rows.iter().filter(|r| r.claim == c.id).collect();
                if !rows.is_empty() {
                    files.push(ReportFile {
                        path: PathBuf::from("claims").join(format!("{}.md", c.id)),
                        bytes: crate::summary::claim_page(c, &rows).into_bytes(),
                    });
                }
            }
        }
        if self.families.iter().any(|f| !f.report.rows.is_empty() || !f.report.summary_markdown.is_empty()) {
            let figures: Vec<String> = files.iter().map(|f| f.path.display().to_string()).filter(|p| p.starts_with("figures/")).collect();
            files.push(ReportFile { path: "SUMMARY.md".into(), bytes: self.summary_markdown(meta, &figures).into_bytes() });
            files.push(ReportFile { path: "summary.csv".into(), bytes: self.summary_csv().into_bytes() });
        }
        files
    }

    /// `SUMMARY.md`: a title with the command that reproduces it and the totals; per family, one
    /// entry per claim (statement, verdict line, figure, link to its page), then the family's own
    /// section (how it computes, its scenarios' constants, its extra work).
    pub fn summary_markdown(&self, meta: &ReportMeta, figures: &[String]) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# fedbounds verdicts\n");
        let _ = writeln!(s, "fedbounds {} — reproduce with `{}`\n", meta.crate_version, meta.command);
        let all: Vec<&VerdictRow> = self.rows().collect();
        let bad = all.iter().filter(|r| !r.matches_expected()).count();
        let _ = writeln!(
            s,
            "{} verdicts differ from the cards. Every claim below lists its verdicts over the scenarios in its setting; `claims/<ID>.md` has every scenario, `summary.csv` every number.\n",
            if bad == 0 { "No".to_string() } else { bad.to_string() }
        );
        for f in &self.families {
            let _ = writeln!(s, "## {} (`{}`)\n", f.title, f.id);
            s.push_str(&crate::summary::markdown_claims(&f.claims, &f.report.rows, figures));
            s.push_str(&f.report.summary_markdown);
            if !f.report.summary_markdown.ends_with('\n') {
                s.push('\n');
            }
        }
        s
    }

    /// The terminal summary (see [`crate::summary::terminal`]).
    pub fn terminal_summary(&self) -> String {
        let families: Vec<(&str, &str, &[VerdictRow], &str)> =
            self.families.iter().map(|f| (f.id, f.title, f.report.rows.as_slice(), f.report.terminal.as_str())).collect();
        let other: Vec<String> = self.families.iter().flat_map(|f| f.report.mismatches.iter().cloned()).collect();
        crate::summary::terminal(&families, &other)
    }

    /// `summary.csv`: one row per claim, scenario and constants source, for every family.
    pub fn summary_csv(&self) -> String {
        let mut s = String::from("claim,reading,scenario,constants,verdict,expected,slack,checkpoint,estimate,lower,upper,bound\n");
        for r in self.rows() {
            let e = &r.evaluation;
            let p = e.decisive.as_ref();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                r.claim,
                r.reading,
                r.scenario,
                r.constants,
                e.verdict,
                r.expected.map(|v| v.to_string()).unwrap_or_default(),
                e.slack.map(|x| x.to_string()).unwrap_or_default(),
                p.map(|p| p.rounds.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.mean.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.lower.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.upper.to_string()).unwrap_or_default(),
                p.and_then(|p| p.bound).map(|b| b.to_string()).unwrap_or_default(),
            );
        }
        s
    }

    /// The verdict table for a terminal, then the families' extra sections.
    pub fn terminal_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:<24} {:<30} {:<15} {:<15} {:>10}  detail", "claim", "scenario", "verdict", "expected", "slack");
        for r in self.rows() {
            let mark = if r.matches_expected() { "" } else { " !" };
            let claim = match &r.label {
                Some(label) => format!("  ({label})"),
                None => r.claim.to_string(),
            };
            let _ = writeln!(
                s,
                "{:<24} {:<30} {:<15} {:<15} {:>10}  {}",
                claim,
                r.scenario,
                format!("{}{mark}", r.evaluation.verdict),
                r.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                r.evaluation.slack.map(fmt_num).unwrap_or_else(|| "-".into()),
                describe(&r.evaluation)
            );
        }
        for f in &self.families {
            s.push_str(&f.report.terminal);
        }
        s
    }
}

/// Writes every file under `out`, each atomically (temporary name, then rename); returns the
/// paths written.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_files(out: &Path, files: &[ReportFile]) -> Result<Vec<PathBuf>> {
    files
        .iter()
        .map(|f| {
            let path = out.join(&f.path);
            write_atomic(&path, &f.bytes)?;
            Ok(path)
        })
        .collect()
}
