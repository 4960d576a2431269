//! The core checker: the loop every family's check shares, written once.
//!
//! A family plugs in by implementing [`Plugin`]: it reads its card (purely: the card's scenarios
//! and the claims it defines come back as a value), names its claims, prepares and runs one
//! scenario, and writes its own report files. The checker owns everything around that, in one
//! place and the same for every family ([`check`]):
//!
//! 1. the card: the one given (`--card`), else the embedded ones;
//! 2. the claims: those asked for, else those the given card defines, else every built-in one;
//! 3. the scenarios: those named (an unknown name in a given card is bad input), then those that
//!    concern a selected claim, and the members of the groups of scenarios that claims compare
//!    (an ordering between runs);
//! 4. validation: every selected scenario is prepared (once) before any run, so bad input fails
//!    before work or files; `--bound-scale` must be a finite number > 0;
//! 5. the runs, one scenario after another, each on the requested worker pool, with progress;
//! 6. the verdict rows, claim by claim in the order they first appear, then scenario by scenario,
//!    then group by group;
//! 7. the family's report (files, its section of `SUMMARY.md`, terminal sections).
//!
//! [`Plugged`] turns a plug-in into a [`Family`], the type-erased view the registry, the command
//! line and the sweeps use (argmin's split: a solver writes one step, the executor owns the loop).

use serde::Serialize;

use crate::bench::measure::{BenchRequest, Measurement};
use crate::error::{require_bound_scale, Error, Result};
use crate::family::{CardText, CheckRequest, ClaimSummary, EstimatorChoice, Family, FamilyReport, Given, Progress, RunOptions, SearchRequest, VerdictRow};
use crate::report::ReportMeta;
use crate::verdict::{ConstantsSource, Evaluation, VerdictKind};

/// One claim's outcome on one scenario: what a family's run hands to the checker, which adds the
/// family and the scenario to make a [`VerdictRow`].
#[derive(Debug, Clone, Serialize)]
pub struct ClaimResult {
    /// Claim id.
    pub claim: &'static str,
    /// The reading checked (`primary` or a variant's name).
    pub reading: &'static str,
    /// Which constants the evaluation used: only [`ConstantsSource::Exact`] results are verdicts
    /// on the claim as stated.
    pub constants: ConstantsSource,
    /// What a non-exact constant was, for the reader (e.g. `empirical G^2 = 0.3`).
    pub label: Option<String>,
    /// The evaluation.
    pub evaluation: Evaluation,
    /// The verdict the card expects.
    pub expected: Option<VerdictKind>,
}

impl ClaimResult {
    /// `claim`'s evaluation with constants from `constants`, under its id and reading, unlabelled
    /// and expecting nothing (see [`ClaimResult::expecting`]).
    pub fn of<C: crate::claim::BoundClaim + ?Sized>(claim: &C, constants: ConstantsSource, evaluation: Evaluation) -> Self {
        Self { claim: claim.id(), reading: claim.reading().name, constants, label: None, evaluation, expected: None }
    }

    /// The same result with the verdict the card expects.
    pub fn expecting(self, expected: Option<VerdictKind>) -> Self {
        Self { expected, ..self }
    }

    /// Whether the computed verdict is the one the card expects (where it says anything).
    pub fn matches_expected(&self) -> bool {
        self.expected.is_none_or(|e| e == self.evaluation.verdict)
    }

    /// The row of this result on `scenario` of `family`.
    pub fn row(&self, family: &'static str, scenario: &str) -> VerdictRow {
        VerdictRow {
            family,
            claim: self.claim,
            reading: self.reading,
            scenario: scenario.to_string(),
            constants: self.constants,
            label: self.label.clone(),
            evaluation: self.evaluation.clone(),
            expected: self.expected,
        }
    }
}

/// What a run is asked for beyond its scenario, validated by the checker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSettings {
    /// Multiplies every bound (1 as printed; below 1 only in negative controls).
    pub bound_scale: f64,
    /// Overrides the scenarios' own estimator.
    pub estimator: Option<EstimatorChoice>,
    /// Worker threads (rayon's default when `None`); results do not depend on it.
    pub threads: Option<usize>,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self { bound_scale: 1.0, estimator: None, threads: None }
    }
}

/// What a family's report is asked for.
#[derive(Debug, Clone, Copy)]
pub struct ReportSettings<'a> {
    /// The main job: also the family's extra work (mirrored figures, adversarial search).
    pub full: bool,
    /// Render PNG figures.
    pub plots: bool,
    /// Provenance written into every report.
    pub meta: &'a ReportMeta,
    /// The runs' settings.
    pub run: RunSettings,
}

/// Scenarios compared with each other (an ordering between runs, e.g. of topologies), named in
/// the card like a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'c> {
    /// Its name (`--scenario` selects it).
    pub name: &'c str,
    /// The scenarios it compares.
    pub members: Vec<&'c str>,
}

/// The checker's selection: which claims, which scenarios are run, which are reported, which
/// groups are compared.
pub struct Selection<'c, P: Plugin + ?Sized> {
    /// The claims, in report order.
    pub claims: Vec<P::Claim>,
    /// The scenarios to run, in card order: those reported and the members of the groups.
    pub scenarios: Vec<&'c P::Scenario>,
    /// Whether each scenario to run gets rows of its own (else it is run for a group only).
    pub reported: Vec<bool>,
    /// The groups compared.
    pub groups: Vec<Group<'c>>,
}

pub use crate::paper_card::{CardEntries, CardScenario, CardView};

/// One scenario's run as the checker reads it: the scenario's name and its results (each
/// claim's, the claim as stated first).
pub trait RunOutcome {
    /// The name of the scenario run.
    fn scenario_name(&self) -> &str;
    /// Its results.
    fn results(&self) -> &[ClaimResult];
    /// The result of claim `id` with constants from `constants` (exact, empirical, estimated).
    fn result(&self, id: &str, constants: ConstantsSource) -> Option<&ClaimResult> {
        self.results().iter().find(|r| r.claim == id && r.constants == constants)
    }
}

/// The smallest run: the scenario's name and its results.
impl RunOutcome for (String, Vec<ClaimResult>) {
    fn scenario_name(&self) -> &str {
        &self.0
    }
    fn results(&self) -> &[ClaimResult] {
        &self.1
    }
}

/// A paper family as a plug-in of the core checker.
pub trait Plugin: Sync + Send + 'static {
    /// A card as read: its scenarios, the claims it defines, its settings.
    type Card: CardView<Self::Scenario> + Sync + Send;
    /// A scenario of a card, as read (checked by [`Plugin::prepare`]): its name and expected
    /// claims are what the checker reads of it.
    type Scenario: CardScenario + Sync + Send;
    /// A claim: built in or defined by a card.
    type Claim: Clone + Sync + Send;
    /// A scenario checked and prepared (its instance built, its constants computed): made once,
    /// before any run, and handed to [`Plugin::run`].
    type Prepared: Send;
    /// Everything one scenario's run produced that rows and reports read.
    type Run: RunOutcome + Send;

    /// Short id, as scenario files name it (`family = "..."`).
    fn id(&self) -> &'static str;
    /// The paper and its algorithms, one line.
    fn title(&self) -> &'static str;
    /// The embedded card(s), read.
    ///
    /// # Errors
    /// Only if an embedded card is malformed (a test guards against this).
    fn embedded_card(&self) -> Result<Self::Card>;
    /// The estimators `--estimator` may choose (exact expectations only by default).
    fn estimators(&self) -> &'static [EstimatorChoice] {
        &[EstimatorChoice::Exact]
    }
    /// Reads a card's text: its scenarios and the claims it defines, compiled. Pure.
    ///
    /// # Errors
    /// Bad input naming the field.
    fn read_card(&self, card: &CardText) -> Result<Self::Card>;
    /// The built-in claims, in report order.
    fn builtin_claims(&self) -> Vec<Self::Claim>;
    /// The claims `card` defines (not built in), in card order.
    fn defined_claims(&self, _card: &Self::Card) -> Vec<Self::Claim> {
        Vec::new()
    }
    /// A claim's id.
    fn claim_id(&self, claim: &Self::Claim) -> &'static str;
    /// A claim as `list` and the reports show it.
    fn summary(&self, claim: &Self::Claim) -> ClaimSummary;
    /// The estimated work of `scenario` from its sizes alone, before it is prepared (see
    /// [`crate::budget`]); `None` for a family that gives no estimate.
    fn work(&self, _scenario: &Self::Scenario) -> Option<crate::budget::Work> {
        None
    }
    /// The estimated work of `scenario` once prepared, where a size the scenario does not state
    /// follows from its instance (a step count computed from a condition number); `None` (the
    /// default) when [`Plugin::work`] says all.
    fn prepared_work(&self, _scenario: &Self::Scenario, _prepared: &Self::Prepared) -> Option<crate::budget::Work> {
        None
    }
    /// Whether `scenario` concerns any of `claims` (a scenario of another algorithm does not).
    fn concerns(&self, _scenario: &Self::Scenario, _claims: &[Self::Claim]) -> bool {
        true
    }
    /// The card's groups of scenarios compared with each other (none by default).
    fn groups<'c>(&self, _card: &'c Self::Card) -> Vec<Group<'c>> {
        Vec::new()
    }
    /// Whether any of `claims` is checked on groups.
    fn compares(&self, _claims: &[Self::Claim]) -> bool {
        false
    }
    /// The claims of `claims` checked on `group`, from the runs of its members (in its order).
    fn compare(&self, _card: &Self::Card, _group: &Group, _members: &[&Self::Run], _claims: &[Self::Claim], _settings: &RunSettings) -> Vec<ClaimResult> {
        Vec::new()
    }
    /// Checks a scenario and builds its instance, so that bad input fails before any run.
    ///
    /// # Errors
    /// Bad input naming the field.
    fn prepare(&self, scenario: &Self::Scenario) -> Result<Self::Prepared>;
    /// Runs one prepared scenario and evaluates `claims` on it.
    ///
    /// # Errors
    /// Numerical failures.
    fn run(&self, card: &Self::Card, scenario: &Self::Scenario, prepared: Self::Prepared, claims: &[Self::Claim], settings: &RunSettings) -> Result<Self::Run>;
    /// The family's report: files, its section of `SUMMARY.md`, terminal sections, findings
    /// beyond the rows (`rows`, the checker's, are filled in by the checker).
    ///
    /// # Errors
    /// When a figure cannot be drawn; numerical failures of extra work.
    /// None by default: the checker's rows alone make the claim pages, JSON and summaries.
    fn report(
        &self,
        _card: &Self::Card,
        _claims: &[Self::Claim],
        _runs: &[Self::Run],
        _rows: &[VerdictRow],
        _settings: &ReportSettings,
        _progress: &dyn Progress,
    ) -> Result<FamilyReport> {
        Ok(FamilyReport::default())
    }
    /// The `run` command's JSON for one scenario file; by default the family has no `run`.
    ///
    /// # Errors
    /// Bad input naming the field; [`Error::InvalidField`] `family` when the family runs no files.
    fn run_file(&self, _text: &str, _what: &str, _options: &RunOptions) -> Result<String> {
        Err(crate::error::Error::field("family", format!("`{}` has no `run` command", self.id()), "a family that runs scenario files (`fedbounds list`)"))
    }
    /// The instance a scenario file produces, written in the family's explicit scenario-file
    /// form (`run --export-instance`); by default the family has none.
    ///
    /// # Errors
    /// Bad input naming the field; [`crate::error::Error::InvalidField`] `--export-instance` when
    /// the family exports no instances.
    fn export_instance(&self, _text: &str, _what: &str) -> Result<String> {
        Err(crate::error::Error::field(
            "--export-instance",
            format!("`{}` exports no instances", self.id()),
            "a scenario of a family with an explicit scenario form",
        ))
    }
    /// One scenario's constants as JSON (sweeps' constants columns); `null` by default.
    ///
    /// # Errors
    /// Bad input naming the field.
    fn scenario_constants(&self, _text: &str, _what: &str) -> Result<serde_json::Value> {
        Ok(serde_json::Value::Null)
    }
    /// See [`Family::conditions`].
    ///
    /// # Errors
    /// Bad input naming the value.
    fn conditions(&self, _card: Option<&Self::Card>, _given: &Given, _claims: &[String], _json: bool) -> Result<String> {
        Err(Error::Unknown { kind: "command for this family", name: "conditions".into(), known: "check, run".into() })
    }
    /// See [`Family::symbols`].
    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &[]
    }
    /// See [`Family::condition_flags`].
    fn condition_flags(&self) -> &'static [&'static str] {
        &[]
    }
    /// The family's adversarial search, a capability of its own: `None` (the default) for a
    /// family without one. Every search space of the core's search ([`crate::search::space`]) is
    /// a [`Searcher`]; a family with a search of its own implements [`Searcher`] for it. It serves
    /// `fedbounds search` ([`Searcher::search`]) and the main job's search section
    /// ([`Searcher::main_job`], which a family whose report already holds that search leaves
    /// empty); `list` shows whether a family has one: nothing to keep in step by hand.
    fn searcher(&self) -> Option<&dyn Searcher<Self>> {
        None
    }
    /// See [`Family::experiments`].
    ///
    /// # Errors
    /// Numerical failures.
    fn experiments(&self, _threads: Option<usize>, _meta: &ReportMeta, _plots: bool, _progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        Ok(None)
    }
    /// See [`Family::bench`].
    ///
    /// # Errors
    /// Numerical failures.
    fn bench(&self, _request: &BenchRequest) -> Result<Vec<Measurement>> {
        Ok(Vec::new())
    }
}

/// A plug-in's adversarial search, as the checker and the commands call it; implemented by every
/// search space of the core's search ([`crate::search::space::SearchSpace`]), so that the
/// checker never names the search (which runs plug-ins) and a family names only its space, and
/// by a family's search of its own.
pub trait Searcher<P: Plugin + ?Sized>: Sync {
    /// `fedbounds search`: every covered claim (those asked for, else all) with the request's
    /// budget and seed.
    ///
    /// # Errors
    /// Bad input; numerical failures.
    fn search(&self, plugin: &P, card: Option<&P::Card>, request: &SearchRequest, progress: &dyn Progress) -> Result<Option<FamilyReport>>;
    /// The main job's search, with the space's own budget.
    ///
    /// # Errors
    /// Numerical failures.
    fn main_job(&self, plugin: &P, card: &P::Card, settings: &ReportSettings, progress: &dyn Progress) -> Result<Option<FamilyReport>>;
}

/// The card a request names, read, or the embedded one.
fn card_of<P: Plugin>(plugin: &P, request: &CheckRequest) -> Result<P::Card> {
    match &request.card {
        Some(c) => plugin.read_card(c),
        None => plugin.embedded_card(),
    }
}

/// The claims a check concerns: those named (ids of other families are ignored), else those a
/// given card defines, else every built-in one.
pub fn select_claims<P: Plugin>(plugin: &P, card: &P::Card, request: &CheckRequest) -> Vec<P::Claim> {
    let defined = if request.card.is_some() { plugin.defined_claims(card) } else { Vec::new() };
    if request.claims.is_empty() {
        return if defined.is_empty() { plugin.builtin_claims() } else { defined };
    }
    let named = |c: &P::Claim| request.claims.iter().any(|id| id == plugin.claim_id(c));
    plugin.builtin_claims().into_iter().chain(defined).filter(named).collect()
}

/// Selects the claims, scenarios and groups of `request` on `card`.
///
/// # Errors
/// [`Error::Unknown`] for a scenario name the given card does not have.
pub fn select<'c, P: Plugin>(plugin: &P, card: &'c P::Card, request: &CheckRequest) -> Result<Selection<'c, P>> {
    let claims = select_claims(plugin, card, request);
    let all = card.scenarios();
    let groups = plugin.groups(card);
    if request.card.is_some() {
        let mut known: Vec<&str> = all.iter().map(|s| s.name()).collect();
        known.extend(groups.iter().map(|g| g.name));
        if let Some(name) = request.scenarios.iter().find(|n| !known.contains(&n.as_str())) {
            return Err(Error::Unknown { kind: "scenario", name: name.clone(), known: known.join(", ") });
        }
    }
    let named = |name: &str| request.scenarios.is_empty() || request.scenarios.iter().any(|n| n == name);
    let groups: Vec<Group> = if plugin.compares(&claims) { groups.into_iter().filter(|g| named(g.name)).collect() } else { Vec::new() };
    let (mut scenarios, mut reported) = (Vec::new(), Vec::new());
    for s in all {
        let own = named(s.name()) && plugin.concerns(s, &claims);
        if own || groups.iter().any(|g| g.members.contains(&s.name())) {
            scenarios.push(s);
            reported.push(own);
        }
    }
    Ok(Selection { claims, scenarios, reported, groups })
}

/// The rows of `runs` of `claims`: claim by claim in the order the claims first appear in the
/// runs (each run's claims taken in the order of `claims`), then run by run, each claim's
/// results in the order the run gives them (the claim as stated, then a labelled variant).
pub fn rows<P: Plugin>(plugin: &P, claims: &[P::Claim], runs: &[P::Run]) -> Vec<VerdictRow> {
    let named: Vec<(&str, &[ClaimResult])> = runs.iter().map(|r| (r.scenario_name(), r.results())).collect();
    let order: Vec<&'static str> = claims.iter().map(|c| plugin.claim_id(c)).collect();
    rows_of(plugin.id(), &order, &named)
}

/// The rows of named results (a scenario's run, or a group's comparison), in the order of
/// [`rows`]; `order` is the claims' report order.
pub fn rows_of(family: &'static str, order: &[&'static str], named: &[(&str, &[ClaimResult])]) -> Vec<VerdictRow> {
    let mut ids: Vec<&'static str> = Vec::new();
    for (_, results) in named {
        for id in order.iter().filter(|id| results.iter().any(|r| r.claim == **id)) {
            if !ids.contains(id) {
                ids.push(id);
            }
        }
    }
    let mut rows = Vec::new();
    for id in ids {
        for (name, results) in named {
            rows.extend(results.iter().filter(|r| r.claim == id).map(|r| r.row(family, name)));
        }
    }
    rows
}

/// Checks `request` with `plugin`: the loop of the module documentation.
///
/// # Errors
/// Bad input (before any run); numerical failures, each naming its scenario.
/// Each selected scenario's estimated work (refused over the budget `max_work`), and the
/// scenarios prepared, their prepared work refused over it too.
///
/// # Errors
/// The first scenario's, in card order, over the budget or failing to prepare.
fn sized_and_prepared<P: Plugin>(plugin: &P, selection: &Selection<'_, P>, max_work: Option<f64>) -> Result<(Vec<f64>, Vec<P::Prepared>)> {
    let mut costs = Vec::with_capacity(selection.scenarios.len());
    for s in &selection.scenarios {
        let work = plugin.work(s);
        if let Some(work) = &work {
            crate::budget::require(work, max_work).map_err(|e| e.in_scenario(s.name()))?;
        }
        costs.push(work.map_or(0.0, |w| w.total));
    }
    let prepared = selection.scenarios.iter().map(|s| plugin.prepare(s).map_err(|e| e.in_scenario(s.name()))).collect::<Result<Vec<_>>>()?;
    for (s, p) in selection.scenarios.iter().zip(&prepared) {
        if let Some(work) = plugin.prepared_work(s, p) {
            crate::budget::require(&work, max_work).map_err(|e| e.in_scenario(s.name()))?;
        }
    }
    Ok((costs, prepared))
}

pub fn check<P: Plugin>(plugin: &P, request: &CheckRequest, progress: &dyn Progress) -> Result<FamilyReport> {
    let bound_scale = match request.bound_scale {
        Some(b) => require_bound_scale("--bound-scale", b)?,
        None => 1.0,
    };
    crate::family::require_estimator("--estimator", plugin.id(), plugin.estimators(), request.estimator)?;
    let settings = RunSettings { bound_scale, estimator: request.estimator, threads: request.threads };
    let card = card_of(plugin, request)?;
    let selection = select(plugin, &card, request)?;
    let (costs, prepared) = sized_and_prepared(plugin, &selection, request.max_work)?;
    progress.start(selection.scenarios.len(), &format!("{} scenarios", plugin.id()));
    // Scenarios run in parallel, the costliest estimate first, collected in card order (the
    // first failure in that order is the one reported), so nothing depends on the number of
    // threads.
    let jobs: Vec<_> = selection.scenarios.iter().zip(prepared).collect();
    let runs = crate::engine::monte_carlo::in_pool(request.threads, || {
        crate::engine::monte_carlo::costliest_first(jobs, &costs, |(s, p)| {
            let run = plugin.run(&card, s, p, &selection.claims, &settings).map_err(|e| e.in_scenario(s.name()));
            progress.step();
            run
        })
    })?
    .into_iter()
    .collect::<Result<Vec<_>>>()?;
    progress.finish();
    require_expected_computed(plugin, &selection, &runs)?;
    let compared: Vec<(&str, Vec<ClaimResult>)> = selection
        .groups
        .iter()
        .map(|g| {
            let members: Vec<&P::Run> = g.members.iter().filter_map(|m| runs.iter().find(|r| r.scenario_name() == *m)).collect();
            (g.name, plugin.compare(&card, g, &members, &selection.claims, &settings))
        })
        .collect();
    let mut named: Vec<(&str, &[ClaimResult])> =
        runs.iter().zip(&selection.reported).filter(|(_, own)| **own).map(|(r, _)| (r.scenario_name(), r.results())).collect();
    named.extend(compared.iter().map(|(name, results)| (*name, results.as_slice())));
    let order: Vec<&'static str> = selection.claims.iter().map(|c| plugin.claim_id(c)).collect();
    let rows = rows_of(plugin.id(), &order, &named);
    let report_settings = ReportSettings { full: request.full, plots: request.plots, meta: &request.meta, run: settings };
    let mut report = plugin.report(&card, &selection.claims, &runs, &rows, &report_settings, progress)?;
    report.rows = rows;
    if request.full {
        if let Some(found) = plugin.searcher().map_or(Ok(None), |s| s.main_job(plugin, &card, &report_settings, progress))? {
            report.summary_markdown.push_str(&format!("\n{}", found.summary_markdown));
            report.terminal.push_str(&found.terminal);
            report.files.extend(found.files);
            report.mismatches.extend(found.mismatches);
            report.searches.extend(found.searches);
        }
    }
    Ok(report)
}

/// Refuses a run that computed no verdict of a selected claim its scenario expects one of (e.g. a
/// comparison over a sweep the scenario leaves empty): an expected verdict never computed would
/// otherwise pass unnoticed.
///
/// # Errors
/// [`Error::InvalidField`] naming the scenario's `expected` key.
fn require_expected_computed<P: Plugin>(plugin: &P, selection: &Selection<P>, runs: &[P::Run]) -> Result<()> {
    let selected: Vec<&str> = selection.claims.iter().map(|c| plugin.claim_id(c)).collect();
    for ((s, run), own) in selection.scenarios.iter().zip(runs).zip(&selection.reported) {
        let results = run.results();
        let missing = s.expected_claims().into_iter().filter(|id| selected.contains(id)).find(|id| !results.iter().any(|r| r.claim == *id));
        if let (true, Some(id)) = (*own, missing) {
            let name = s.name();
            return Err(Error::field(
                format!("scenarios[{name}].expected.{id}"),
                "the card expects a verdict that the run does not compute (nothing would be checked)",
                "expected verdicts of claims the scenario's settings evaluate (remove the key, or give the scenario what the claim needs)",
            ));
        }
    }
    Ok(())
}

/// A plug-in as the registry sees it.
pub struct Plugged<P>(pub P);

impl<P: Plugin> Plugged<P> {
    fn card(&self, card: Option<&CardText>) -> Result<Option<P::Card>> {
        card.map(|c| self.0.read_card(c)).transpose()
    }
}

impl<P: Plugin> Family for Plugged<P> {
    fn id(&self) -> &'static str {
        self.0.id()
    }
    fn title(&self) -> &'static str {
        self.0.title()
    }
    fn claims(&self) -> Vec<ClaimSummary> {
        self.0.builtin_claims().iter().map(|c| self.0.summary(c)).collect()
    }
    fn scenario_names(&self) -> Result<Vec<String>> {
        let card = self.0.embedded_card()?;
        let scenarios = card.scenarios().into_iter().map(|s| s.name().to_string());
        Ok(scenarios.chain(self.0.groups(&card).into_iter().map(|g| g.name.to_string())).collect())
    }
    fn check(&self, request: &CheckRequest, progress: &dyn Progress) -> Result<FamilyReport> {
        check(&self.0, request, progress)
    }
    fn run(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        crate::family::require_estimator("--estimator", self.0.id(), self.0.estimators(), options.estimator)?;
        self.0.run_file(text, what, options)
    }
    fn estimators(&self) -> &'static [EstimatorChoice] {
        self.0.estimators()
    }
    fn export_instance(&self, text: &str, what: &str) -> Result<String> {
        self.0.export_instance(text, what)
    }
    fn search(&self, request: &SearchRequest, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        let card = self.card(request.card.as_ref())?;
        self.0.searcher().map_or(Ok(None), |s| s.search(&self.0, card.as_ref(), request, progress))
    }
    fn has_search(&self) -> bool {
        self.0.searcher().is_some()
    }
    fn experiments(&self, threads: Option<usize>, meta: &ReportMeta, plots: bool, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        self.0.experiments(threads, meta, plots, progress)
    }
    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        self.0.scenario_constants(text, what)
    }
    fn conditions(&self, given: &Given, claims: &[String], json: bool, card: Option<&CardText>) -> Result<String> {
        let card = self.card(card)?;
        self.0.conditions(card.as_ref(), given, claims, json)
    }
    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        self.0.symbols()
    }
    fn condition_flags(&self) -> &'static [&'static str] {
        self.0.condition_flags()
    }
    fn card_claims(&self, card: &CardText) -> Result<Vec<ClaimSummary>> {
        let card = self.0.read_card(card)?;
        Ok(self.0.defined_claims(&card).iter().map(|c| self.0.summary(c)).collect())
    }
    fn bench(&self, request: &BenchRequest) -> Result<Vec<Measurement>> {
        self.0.bench(request)
    }
    fn explain(&self, id: &str) -> Result<Option<String>> {
        let Some(claim) = self.0.builtin_claims().into_iter().find(|c| self.0.claim_id(c) == id) else { return Ok(None) };
        let summary = self.0.summary(&claim);
        let card = self.0.embedded_card()?;
        let (claims, inconsistencies) = card.entries();
        Ok(Some(crate::explain::explain(self.0.id(), &summary, claims.into_iter().find(|c| c.id == id), &inconsistencies)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::fixtures::InverseT;
    use crate::claim::BoundClaim;
    use crate::engine::Estimator;
    use crate::verdict::evaluate_inequality;

    fn evaluation(lhs: f64) -> Evaluation {
        evaluate_inequality(Vec::new(), 1, &|_| Some(vec![(lhs, 0.5)]), Estimator::Exact, 0.99, 1.0)
    }

    #[test]
    fn a_result_carries_its_claims_identity_and_a_run_finds_it_by_id_and_source() {
        let exact = ClaimResult::of(&InverseT, ConstantsSource::Exact, evaluation(0.25)).expecting(Some(VerdictKind::Holds));
        assert_eq!((exact.claim, exact.reading, exact.label.as_deref()), (InverseT.id(), InverseT.reading().name, None));
        assert!(exact.matches_expected());
        // Control: a result whose verdict is not the one expected is seen to differ.
        let differs = ClaimResult::of(&InverseT, ConstantsSource::Empirical, evaluation(1.0)).expecting(Some(VerdictKind::Holds));
        assert_eq!(differs.evaluation.verdict, VerdictKind::Violated);
        assert!(!differs.matches_expected());
        let run = ("s".to_string(), vec![exact, differs]);
        assert_eq!(run.scenario_name(), "s");
        assert_eq!(run.result("INV-T", ConstantsSource::Empirical).map(|r| r.evaluation.verdict), Some(VerdictKind::Violated));
        assert_eq!(run.result("INV-T", ConstantsSource::Exact).map(|r| r.evaluation.verdict), Some(VerdictKind::Holds));
        // Controls: another source, another id.
        assert!(run.result("INV-T", ConstantsSource::Estimated).is_none() && run.result("INV", ConstantsSource::Exact).is_none());
    }
}
