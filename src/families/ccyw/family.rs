//! This family as the core sees it: the [`Plugin`] implementation behind `list`, `check`, `run`,
//! `search`, `experiments` and `conditions`.

use crate::checker::{Plugin, ReportSettings, RunSettings, Searcher};
use crate::claim::{fmt_num, ConditionCheck};
use crate::error::{require_non_negative, require_positive, Error, Result};
use crate::family::{CardText, ClaimKind, ClaimSummary, FamilyReport, Given, Progress, ReportFile, RunOptions, SearchRequest, VerdictRow};
use crate::report::ReportMeta;
use crate::verdict::{ConstantsSource, VerdictKind};

use super::card::{self, Card, Scenario};
use super::card_claims::{CardClaim, Catalog};
use super::check::{self, CheckOptions, Prepared, ScenarioRun, Selection};
use super::claims::{self, AdmissibleSteps, Claim, ClaimInputs, LemmaClaim};
use super::experiments::Experiments;
use super::report;
use super::search::{self, SearchOptions, SearchResult};

/// The id scenario files use: `family = "ccyw"`.
pub const FAMILY_ID: &str = "ccyw";

/// FedAvg-P and Scaffold-P of Chen, Cao, Yuan, Wen.
pub struct Ccyw;

/// The registered family.
pub static FAMILY: crate::checker::Plugged<Ccyw> = crate::checker::Plugged(Ccyw);

/// The ids in `ids` that are claims of `catalog` or lemmas (all of them when `ids` is empty).
fn own_ids(ids: &[String], catalog: &Catalog) -> Vec<String> {
    let mine = catalog.ids();
    ids.iter().filter(|id| mine.contains(&id.as_str())).cloned().collect()
}

/// The claims of `catalog` with these ids (all when empty).
fn select_claims(ids: &[String], catalog: &Catalog) -> Result<Vec<&'static dyn Claim>> {
    if ids.is_empty() {
        return Ok(catalog.claims());
    }
    ids.iter()
        .map(|id| {
            // A known id without step conditions here (a lemma, another family's claim) is not
            // "unknown": it is said to be outside what `conditions` evaluates.
            catalog.by_id(id).ok_or_else(|| {
                Error::field(
                    "--claim",
                    format!("`{id}` is not one of the claims whose step conditions `conditions` evaluates for FedAvg-P and Scaffold-P"),
                    catalog.claims().iter().map(|c| c.id()).collect::<Vec<_>>().join(", "),
                )
            })
        })
        .collect()
}

fn progress_fn(progress: &dyn Progress) -> impl Fn() + Sync + '_ {
    move || progress.step()
}

/// The mirrored figures with a progress phase.
fn run_experiments(threads: Option<usize>, progress: &dyn Progress) -> Result<Experiments> {
    progress.start(super::experiments::curve_count(), "experiment curves");
    let step = progress_fn(progress);
    let e = crate::engine::monte_carlo::in_pool(threads, || Experiments::run(&step))??;
    progress.finish();
    Ok(e)
}

/// The claims of `catalog` and the lemmas with these ids as search targets (every claim and lemma
/// when empty).
fn select_targets(ids: &[String], catalog: &Catalog) -> Result<Vec<search::Target>> {
    let lemmas: Vec<&'static dyn LemmaClaim> = claims::all_lemmas().into_iter().filter(|l| ids.is_empty() || ids.iter().any(|id| id == l.id())).collect();
    let bound_ids: Vec<String> = ids.iter().filter(|id| claims::lemma_by_id(id).is_none()).cloned().collect();
    let bounds = if ids.is_empty() || !bound_ids.is_empty() { select_claims(&bound_ids, catalog)? } else { Vec::new() };
    Ok(bounds.into_iter().map(search::Target::Bound).chain(lemmas.into_iter().map(search::Target::Lemma)).collect())
}

/// Searches with a progress phase.
fn run_searches(chosen: &[search::Target], opts: &SearchOptions, threads: Option<usize>, progress: &dyn Progress) -> Result<Vec<SearchResult>> {
    progress.start(chosen.len(), "claims searched");
    let step = progress_fn(progress);
    let r = crate::engine::monte_carlo::in_pool(threads, || search::search_all(chosen, opts, &step))??;
    progress.finish();
    Ok(r)
}

fn statements_table(e: &Experiments) -> String {
    let mut s = format!("\n{:<28} {:<13} {:<13} statement\n", "figure statement", "verdict", "expected");
    for st in &e.statements {
        let mark = if st.matches_expected() { "" } else { " !" };
        let expected = st.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
        s.push_str(&format!("{:<28} {:<13} {:<13} {}\n", st.id, format!("{}{mark}", st.verdict), expected, st.statement));
    }
    s
}

fn searches_table(results: &[SearchResult]) -> String {
    let mut s = format!(
        "\n{:<24} {:<14} {:>10}  {:>13} {:>13}  {:>13} {:>13}  {:>11} {:>11}\n",
        "searched claim", "counterexample", "worst o/b", "worst: holds", "worst: diverg", "any: holds", "any: broken", "eta: holds", "eta: broken"
    );
    s.push_str(&format!(
        "{:<24} {:<14} {:>10}  {:>27}  {:>27}  {:>23}\n",
        "", "", "", "(gamma multiple, worst inst.)", "(gamma multiple, any inst.)", "(eta divisor, any inst.)"
    ));
    for r in results {
        let [a, b, c, d, e, f] = report::step_multiple_cells(r);
        s.push_str(&format!(
            "{:<24} {:<14} {:>10}  {:>13} {:>13}  {:>13} {:>13}  {:>11} {:>11}\n",
            r.claim,
            crate::search::counterexample_text(r.verdict),
            fmt_num(r.worst_ratio),
            a,
            b,
            c,
            d,
            e,
            f
        ));
    }
    s
}

/// The lines of `search.csv`: per claim, the `gamma` condition (on the worst instance: the
/// largest multiple at which the bound holds; over any instance: the searches of its room) and
/// the `eta` conditions (their room over any instance).
fn search_lines(results: &[SearchResult]) -> Vec<crate::search::report::SearchLine> {
    use crate::search::report::SearchLine;
    let mut lines = Vec::new();
    for r in results {
        let line = |condition: &str, worst_instance, any_instance| SearchLine {
            family: super::FAMILY_ID,
            claim: r.claim,
            constants: crate::verdict::ConstantsSource::Exact,
            verdict: r.verdict,
            worst_ratio: r.worst.as_ref().map(|_| r.worst_ratio),
            evaluations: r.trace.len(),
            applicable: r.trace.len() - r.not_applicable,
            condition: condition.to_string(),
            worst_instance,
            any_instance,
            replay: if r.scenario.is_some() { format!("search/{}.toml", r.claim) } else { String::new() },
        };
        let room = |c: &Option<search::ConditionRoom>| c.as_ref().map_or((None, None), |c| (Some(c.holds_up_to).filter(|h| *h > 0.0), c.broken_at));
        let on_worst = r.conservativeness.as_ref().map_or((None, None), |c| match c.bound_holds_up_to {
            Some(h) => (Some(h), c.trials.iter().map(|t| t.0).find(|m| *m > h)),
            None => (Some(search::MAX_GAMMA_MULTIPLE), None),
        });
        // A lemma has the lines of the steps its conditions bound (one blank line without any).
        let (gamma, eta) = (r.structure.bounds_gamma, r.structure.bounds_eta);
        if gamma {
            lines.push(line("gamma within its condition (or as prescribed)", on_worst, room(&r.room)));
        }
        if eta {
            lines.push(line("eta_u, eta_v within their conditions (gamma fixed)", (None, None), room(&r.eta_room)));
        }
        if !gamma && !eta {
            lines.push(line("", (None, None), (None, None)));
        }
    }
    lines
}

/// The searches whose verdict is not the one the cards expect (`[search] expected`; a claim the
/// cards say nothing of is expected to hold).
/// A finding names the replay file written for it (`OUT/search/<ID>.toml`, the worst instance,
/// written only when one was found) under `out`, the report's folder (said as `<report folder>`
/// when `None`).
fn search_mismatches(results: &[SearchResult], cards: Option<&Cards>, out: Option<&std::path::Path>) -> Vec<String> {
    let expected =
        |id: &str| cards.and_then(|c| c.cards.iter().find_map(|card| card.search.expected(id, ConstantsSource::Exact))).unwrap_or(VerdictKind::Holds);
    let replay = |id: &str| {
        let file = std::path::Path::new("search").join(format!("{id}.toml"));
        out.map_or_else(|| format!("<report folder>/{}", file.display()), |o| o.join(&file).display().to_string())
    };
    results
        .iter()
        .filter(|r| r.verdict != expected(r.claim))
        .map(|r| match &r.scenario {
            Some(_) => format!(
                "{} (search: counterexample {}, the card expects {}; replay with `cargo run --release -- run {}`)",
                r.claim,
                crate::search::counterexample_text(r.verdict),
                expected(r.claim),
                replay(r.claim)
            ),
            None => format!("{} (search: {}, no admissible instance to replay)", r.claim, crate::search::counterexample_text(r.verdict)),
        })
        .collect()
}

/// This family's own search (`search.rs`, which predates the core's), for `fedbounds search` over
/// the claims asked for (from the given card's scenarios, if any). The main job's search of every
/// claim runs in [`Plugin::report`] beside the experiments, whose report files and sections it
/// shares, so [`Searcher::main_job`] adds nothing here.
struct OwnSearch;

impl Searcher<Ccyw> for OwnSearch {
    fn search(&self, _: &Ccyw, cards: Option<&Cards>, request: &SearchRequest, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        let catalog = cards.map(|c| c.catalog.clone()).unwrap_or_default();
        let scenarios = cards.map(|c| c.cards.iter().flat_map(|c| c.scenarios.iter().cloned()).collect()).unwrap_or_default();
        let chosen = select_targets(&own_ids(&request.claims, &catalog), &catalog)?;
        let opts = SearchOptions {
            budget: request.budget,
            seed: request.seed,
            bound_scale: request.bound_scale,
            scenarios,
            room_budget: request.room_budget,
            ..Default::default()
        };
        let results = run_searches(&chosen, &opts, None, progress)?;
        let files: Vec<ReportFile> = report::search_files(&results, &request.meta, request.plots)?;
        let searches = search_lines(&results);
        Ok(Some(FamilyReport {
            files,
            terminal: searches_table(&results),
            mismatches: search_mismatches(&results, cards, request.out.as_deref()),
            searches,
            ..Default::default()
        }))
    }
    fn main_job(&self, _: &Ccyw, _: &Cards, _: &ReportSettings, _: &dyn Progress) -> Result<Option<FamilyReport>> {
        Ok(None)
    }
}

/// The cards a check reads: the embedded ones, or the one given, with the claims it can name.
pub struct Cards {
    /// The cards, in order.
    pub cards: Vec<Card>,
    /// The claims their scenarios and the check can name.
    pub catalog: Catalog,
}

impl crate::checker::CardView<Scenario> for Cards {
    fn scenarios(&self) -> Vec<&Scenario> {
        self.cards.iter().flat_map(|c| c.scenarios.iter()).collect()
    }
    fn entries(&self) -> crate::checker::CardEntries<'_> {
        (self.cards.iter().flat_map(|c| &c.claims).collect(), self.cards.iter().flat_map(|c| &c.inconsistencies).collect())
    }
}

/// A claim of this family: a bound (built in or defined by a card) or a lemma of a proof.
#[derive(Clone, Copy)]
pub enum CcywClaim {
    /// A bound on a run's metric.
    Bound(&'static dyn Claim),
    /// A per-round inequality of a proof.
    Lemma(&'static dyn LemmaClaim),
    /// A bound a card defines by formulas.
    Defined(&'static CardClaim),
}

impl CcywClaim {
    fn algorithm(&self) -> super::algorithm::AlgorithmKind {
        match self {
            CcywClaim::Bound(c) => c.algorithm(),
            CcywClaim::Lemma(l) => l.algorithm(),
            CcywClaim::Defined(c) => c.algorithm(),
        }
    }
}

fn bound_summary(c: &'static dyn Claim, statement: String) -> ClaimSummary {
    ClaimSummary { id: c.id(), kind: ClaimKind::Bound, title: c.title(), statement, source: c.source(), reading: c.reading(), metric: c.metric().formula() }
}

fn statement(id: &str) -> String {
    static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
    STATEMENTS.of(id, || card::embedded_cards().unwrap_or_default().into_iter().flat_map(|c| c.written.claims).collect())
}

impl Plugin for Ccyw {
    type Card = Cards;
    type Scenario = Scenario;
    type Claim = CcywClaim;
    type Prepared = Prepared;
    type Run = ScenarioRun;

    fn id(&self) -> &'static str {
        FAMILY_ID
    }

    fn title(&self) -> &'static str {
        "Chen, Cao, Yuan, Wen: FedAvg-P and Scaffold-P for partial personalization"
    }

    fn estimators(&self) -> &'static [crate::family::EstimatorChoice] {
        &[crate::family::EstimatorChoice::Exact, crate::family::EstimatorChoice::MonteCarlo]
    }
    fn embedded_card(&self) -> Result<Cards> {
        Ok(Cards { cards: card::embedded_cards()?, catalog: Catalog::default() })
    }

    fn read_card(&self, text: &CardText) -> Result<Cards> {
        let card = card::parse_card(&text.text, &text.what)?;
        Ok(Cards { catalog: card.catalog.clone(), cards: vec![card] })
    }

    fn builtin_claims(&self) -> Vec<CcywClaim> {
        let bounds = claims::all_claims().into_iter().map(CcywClaim::Bound);
        bounds.chain(claims::all_lemmas().into_iter().map(CcywClaim::Lemma)).collect()
    }

    fn defined_claims(&self, cards: &Cards) -> Vec<CcywClaim> {
        cards.catalog.defined().iter().map(|c| CcywClaim::Defined(c)).collect()
    }

    fn claim_id(&self, claim: &CcywClaim) -> &'static str {
        match claim {
            CcywClaim::Bound(c) => c.id(),
            CcywClaim::Lemma(l) => l.id(),
            CcywClaim::Defined(c) => (*c as &dyn Claim).id(),
        }
    }

    fn summary(&self, claim: &CcywClaim) -> ClaimSummary {
        match claim {
            CcywClaim::Bound(c) => bound_summary(*c, statement(c.id())),
            CcywClaim::Defined(c) => bound_summary(*c, c.statement().to_string()),
            CcywClaim::Lemma(l) => ClaimSummary {
                id: l.id(),
                kind: ClaimKind::Lemma,
                title: l.title(),
                statement: statement(l.id()),
                source: l.source(),
                reading: l.reading(),
                metric: l.inequality(),
            },
        }
    }

    fn concerns(&self, s: &Scenario, claims: &[CcywClaim]) -> bool {
        claims.iter().any(|c| c.algorithm() == s.algorithm.kind)
    }

    fn work(&self, s: &Scenario) -> Option<crate::budget::Work> {
        Some(check::work(s))
    }

    fn prepare(&self, s: &Scenario) -> Result<Prepared> {
        check::prepare(s)
    }

    fn run(&self, _cards: &Cards, s: &Scenario, prepared: Prepared, chosen: &[CcywClaim], settings: &RunSettings) -> Result<ScenarioRun> {
        let mut selection = Selection { claims: Vec::new(), lemmas: Vec::new() };
        for c in chosen {
            match c {
                CcywClaim::Bound(b) => selection.claims.push(*b),
                CcywClaim::Defined(b) => selection.claims.push(*b),
                CcywClaim::Lemma(l) => selection.lemmas.push(*l),
            }
        }
        let opts = CheckOptions { threads: settings.threads, bound_scale: Some(settings.bound_scale), estimator: settings.estimator };
        check::run_prepared(s, prepared, &selection, &opts)
    }

    fn report(
        &self,
        cards: &Cards,
        _claims: &[CcywClaim],
        runs: &[ScenarioRun],
        _rows: &[VerdictRow],
        settings: &ReportSettings,
        progress: &dyn Progress,
    ) -> Result<FamilyReport> {
        let threads = settings.run.threads;
        let (experiments, searches) = if settings.full {
            let e = run_experiments(threads, progress)?;
            let s = run_searches(&search::all_targets(), &SearchOptions::default(), threads, progress)?;
            (Some(e), s)
        } else {
            (None, Vec::new())
        };
        let extras = report::Extras { experiments: experiments.as_ref(), searches: &searches };
        let (files, summary_markdown) = report::report_files(runs, &cards.catalog, extras, settings.meta, settings.plots)?;
        let mut terminal = String::new();
        let mut mismatches = Vec::new();
        if let Some(e) = &experiments {
            terminal.push_str(&statements_table(e));
            mismatches.extend(e.mismatches().iter().map(|s| s.id.to_string()));
        }
        if !searches.is_empty() {
            terminal.push_str(&searches_table(&searches));
            mismatches.extend(search_mismatches(&searches, Some(cards), None));
        }
        Ok(FamilyReport { summary_markdown, files, mismatches, terminal, searches: search_lines(&searches), ..Default::default() })
    }

    fn run_file(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario = card::parse_scenario(text, what)?;
        crate::budget::require(&check::work(&scenario), options.max_work)?;
        report::run_report(&scenario, options.threads, options.estimator)
    }

    /// The scenario file with its instance written out by its matrices
    /// ([`ExplicitInstance::from_instance`](super::problem::ExplicitInstance::from_instance)):
    /// it builds the same instance bit for bit, so it runs to the same results (the scenario
    /// hash aside, which covers the instance as written).
    fn export_instance(&self, text: &str, what: &str) -> Result<String> {
        let scenario = card::parse_scenario(text, what)?;
        let inst = scenario.instance.build().map_err(|e| e.in_scenario(&scenario.name))?;
        let explicit = Scenario { instance: card::InstanceSource::Explicit(super::problem::ExplicitInstance::from_instance(&inst)), ..scenario };
        crate::explicit::exported_file(&explicit, &explicit.name, what, "The instance", super::FAMILY_ID, "the explicit instance")
    }

    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        let scenario = card::parse_scenario(text, what)?;
        let prepared = check::prepare(&scenario)?;
        // The resolved steps beside the instance's constants: a sweep over step multiples shows the steps.
        serde_json::to_value(serde_json::json!({ "instance": &prepared.constants, "steps": &prepared.params }))
            .map_err(|e| Error::serialization("constants", e))
    }

    fn searcher(&self) -> Option<&dyn Searcher<Self>> {
        Some(&OwnSearch)
    }

    fn experiments(&self, threads: Option<usize>, meta: &ReportMeta, plots: bool, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        let e = run_experiments(threads, progress)?;
        let files = report::experiments_files(&e, meta, plots)?;
        let mismatches = e.mismatches().iter().map(|s| s.id.to_string()).collect();
        Ok(Some(FamilyReport { files, terminal: statements_table(&e), mismatches, ..Default::default() }))
    }

    fn conditions(&self, cards: Option<&Cards>, given: &Given, ids: &[String], json: bool) -> Result<String> {
        conditions(given, ids, json, &cards.map(|c| c.catalog.clone()).unwrap_or_default())
    }

    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &super::formulas::SYMBOLS
    }

    /// Every flag the `conditions` command's inputs are read from.
    fn condition_flags(&self) -> &'static [&'static str] {
        &["n", "m", "k", "rounds", "du", "dv", "l", "f0", "b2", "sigma-u2", "sigma-v2", "b0", "gamma", "eta-u", "eta-v"]
    }

    fn bench(&self, request: &crate::bench::BenchRequest) -> Result<Vec<crate::bench::Measurement>> {
        super::bench::bench(request)
    }
}

/// A given value: `name` is the command-line flag without its dashes.
fn value(given: &Given, name: &str) -> Option<f64> {
    given.get(name).copied()
}

fn required(given: &Given, name: &str) -> Result<f64> {
    value(given, name).ok_or_else(|| Error::field(format!("--{name}"), "missing", "a value (see `fedbounds conditions --help`)"))
}

/// An integer-valued given: `>= 1` (and `<= max`).
fn count(given: &Given, name: &str, default: Option<usize>) -> Result<usize> {
    match value(given, name) {
        None => default.ok_or_else(|| Error::field(format!("--{name}"), "missing", "an integer >= 1")),
        Some(v) if v.fract() == 0.0 && v >= 0.0 && v <= u32::MAX as f64 => Ok(v as usize),
        Some(v) => Err(Error::field(format!("--{name}"), format!("got {v}"), format!("a whole number in [0, {}]", u32::MAX))),
    }
}

/// The `conditions` command: admissible steps and every check of each selected claim.
fn conditions(given: &Given, ids: &[String], json: bool, catalog: &Catalog) -> Result<String> {
    // The claims first: one whose conditions are not evaluated here is refused as such, not for
    // the values it would have needed.
    let chosen = select_claims(ids, catalog)?;
    let (base, steps) = condition_inputs(given)?;
    let mut rows = Vec::new();
    let mut text = String::new();
    for c in chosen {
        let at = ClaimAtSteps::new(c, &base, steps);
        require_read_values(&at, &base, steps, given)?;
        rows.push(at.json());
        at.write_text(&mut text);
    }
    if json {
        serde_json::to_string_pretty(&rows).map(|s| s + "\n").map_err(|e| Error::serialization("claims", e))
    } else {
        Ok(text)
    }
}

/// Sets one value of the claim inputs.
type SetValue = fn(&mut ClaimInputs, f64);

/// The values `conditions` reads as 0 when they are not given: the noise and `B^0`, each with how
/// to set it into the claim inputs.
const OPTIONAL_VALUES: [(&str, SetValue); 3] = [
    ("sigma-u2", |x, v| x.sigma_u2 = v),
    ("sigma-v2", |x, v| x.sigma_v2 = v),
    ("b0", |x, v| {
        x.b0 = v;
        x.b0_literal = v;
    }),
];

/// Refuses a claim that reads a value not given: `at` (computed with it at 0) would otherwise be
/// decided on a 0 the user never wrote (Theorem 3.11's `eta_u` condition reads `B^0`). A claim
/// reads it when setting it to 1 or to 1e6 changes its admissible steps, a check or its bound.
///
/// # Errors
/// [`Error::InvalidField`] naming the flag and the claim that reads it.
fn require_read_values(at: &ClaimAtSteps, base: &ClaimInputs, steps: GivenSteps, given: &Given) -> Result<()> {
    let row = at.json();
    for (name, set) in OPTIONAL_VALUES.iter().filter(|(name, _)| value(given, name).is_none()) {
        let changes = |v: f64| {
            let mut x = *base;
            set(&mut x, v);
            ClaimAtSteps::new(at.claim, &x, steps).json() != row
        };
        if changes(1.0) || changes(1e6) {
            return Err(Error::field(format!("--{name}"), format!("missing, and {} reads it", at.claim.id()), "a number >= 0; 0 for none"));
        }
    }
    Ok(())
}

/// The steps given on the command line (`None`: the claim's admissible one).
#[derive(Clone, Copy)]
struct GivenSteps {
    gamma: Option<f64>,
    eta_u: Option<f64>,
    eta_v: Option<f64>,
}

/// The claim inputs of the `conditions` command (steps `NaN` until a claim's are chosen) and the
/// given steps. Errors name the first invalid flag, in the order `n, m, k, rounds` (present),
/// then their ranges (`n >= 1`, `1 <= m <= n`, `k, rounds >= 1`), `l, f0 > 0`, `sigma-u2, sigma-v2,
/// b0, b2 >= 0`, `gamma, eta-u, eta-v > 0`, `du, dv` whole.
fn condition_inputs(given: &Given) -> Result<(ClaimInputs, GivenSteps)> {
    let n = count(given, "n", None)?;
    let m = count(given, "m", None)?;
    let k = count(given, "k", None)?;
    let t = count(given, "rounds", None)?;
    if n == 0 {
        return Err(Error::field("--n", "got 0", "an integer >= 1"));
    }
    if m == 0 || m > n {
        return Err(Error::field("--m", format!("got {m}"), format!("1 <= m <= n = {n}")));
    }
    if k == 0 || t == 0 {
        return Err(Error::field(if k == 0 { "--k" } else { "--rounds" }, "got 0", "an integer >= 1"));
    }
    let l = require_positive("--l", required(given, "l")?)?;
    let f0 = require_positive("--f0", required(given, "f0")?)?;
    let nonneg = |name: &str| -> Result<f64> { require_non_negative(&format!("--{name}"), value(given, name).unwrap_or(0.0)) };
    let (sigma_u2, sigma_v2, b0) = (nonneg("sigma-u2")?, nonneg("sigma-v2")?, nonneg("b0")?);
    let b2 = value(given, "b2").map(|b| require_non_negative("--b2", b)).transpose()?;
    let step = |name: &str| -> Result<Option<f64>> { value(given, name).map(|v| require_positive(&format!("--{name}"), v)).transpose() };
    let steps = GivenSteps { gamma: step("gamma")?, eta_u: step("eta-u")?, eta_v: step("eta-v")? };
    let du = count(given, "du", Some(1))?;
    let dv = count(given, "dv", Some(1))?;
    let base = ClaimInputs {
        n,
        m,
        k,
        t,
        du,
        dv,
        l,
        f0,
        b2,
        sigma_u2,
        sigma_v2,
        b0,
        b0_literal: b0,
        gamma_u: f64::NAN,
        gamma_v: f64::NAN,
        eta_u: f64::NAN,
        eta_v: f64::NAN,
    };
    Ok((base, steps))
}

/// One claim checked at the given steps, the admissible ones filling in those not given:
/// `gamma_u = gamma / eta_u`, `gamma_v = gamma / eta_v` (000:L50). Applicable when every binding
/// check holds; the bound is reported only then.
struct ClaimAtSteps {
    claim: &'static dyn Claim,
    admissible: AdmissibleSteps,
    gamma: f64,
    eta_u: f64,
    eta_v: f64,
    checks: Vec<ConditionCheck>,
    applicable: bool,
    bound: Option<f64>,
}

impl ClaimAtSteps {
    fn new(claim: &'static dyn Claim, base: &ClaimInputs, steps: GivenSteps) -> Self {
        let admissible = claim.admissible(base);
        let eta_u = steps.eta_u.unwrap_or(admissible.eta_u.value());
        let eta_v = steps.eta_v.unwrap_or(admissible.eta_v.value());
        let gamma = steps.gamma.unwrap_or(admissible.gamma.value());
        let x = ClaimInputs { gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v, ..*base };
        let checks = claim.checks(&x);
        let applicable = checks.iter().all(|k| k.holds || !k.is_binding());
        let bound = if applicable { Some(claim.bound(&x)) } else { None };
        Self { claim, admissible, gamma, eta_u, eta_v, checks, applicable, bound }
    }

    /// The claim's JSON row: admissible and checked steps, applicability, bound and checks.
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "claim": self.claim.id(),
            "admissible": self.admissible,
            "checked": {"gamma": self.gamma, "eta_u": self.eta_u, "eta_v": self.eta_v},
            "applicable": self.applicable,
            "bound": self.bound,
            "checks": self.checks.iter().map(|k| serde_json::json!({"check": k.to_string(), "holds": k.holds, "kind": k.kind})).collect::<Vec<_>>(),
        })
    }

    /// The claim's lines of text: admissible steps, the steps checked, each check and the bound.
    fn write_text(&self, text: &mut String) {
        let adm = &self.admissible;
        let gamma_word = adm.gamma.describe();
        text.push_str(&format!("{}: admissible {gamma_word}, {}, {}\n", self.claim.id(), adm.eta_u.describe("eta_u"), adm.eta_v.describe("eta_v")));
        text.push_str(&format!(
            "  at gamma = {}, eta_u = {}, eta_v = {}: {}\n",
            fmt_num(self.gamma),
            fmt_num(self.eta_u),
            fmt_num(self.eta_v),
            if self.applicable { "applicable" } else { "NOT applicable" }
        ));
        for k in &self.checks {
            text.push_str(&format!("    [{}] {k}\n", if k.holds { "ok" } else { "FAIL" }));
        }
        if let Some(bound) = self.bound {
            text.push_str(&format!("  bound = {}\n", fmt_num(bound)));
        }
    }
}
