//! This family as the core sees it: the [`Family`] implementation behind `list`, `check`, `run`,
//! `search`, `experiments` and `conditions`.

use crate::claim::{fmt_num, BoundClaim};
use crate::error::{require_non_negative, require_positive, Error, Result};
use crate::family::{CardText, CheckRequest, ClaimKind, ClaimSummary, Family, FamilyReport, Given, Progress, ReportFile, RunOptions, SearchRequest};
use crate::report::ReportMeta;
use crate::verdict::VerdictKind;

use super::card::{self, Card, Scenario};
use super::card_claims::Catalog;
use super::check::{self, CheckOptions, Selection};
use super::claims::{self, Claim, ClaimInputs, GammaRule};
use super::experiments::Experiments;
use super::report;
use super::search::{self, SearchOptions, SearchResult};

/// The id scenario files use: `family = "ccyw"`.
pub const FAMILY_ID: &str = "ccyw";

/// FedAvg-P and Scaffold-P of Chen, Cao, Yuan, Wen.
pub struct Ccyw;

/// The registered instance.
pub static FAMILY: Ccyw = Ccyw;

fn cards(request: &CheckRequest) -> Result<Vec<Card>> {
    match &request.card {
        Some(c) => Ok(vec![card::parse_card(&c.text, &c.what)?]),
        None => card::embedded_cards(),
    }
}

/// The claims a given card can name (the built-in ones when no card is given).
fn catalog(card: Option<&CardText>) -> Result<(Catalog, Vec<Scenario>)> {
    match card {
        Some(c) => {
            let card = card::parse_card(&c.text, &c.what)?;
            Ok((card.catalog, card.scenarios))
        }
        None => Ok((Catalog::default(), Vec::new())),
    }
}

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
            catalog.by_id(id).ok_or_else(|| Error::Unknown {
                kind: "claim",
                name: id.clone(),
                known: catalog.claims().iter().map(|c| c.id()).collect::<Vec<_>>().join(", "),
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

/// Searches with a progress phase.
fn run_searches(chosen: &[&'static dyn Claim], opts: &SearchOptions, threads: Option<usize>, progress: &dyn Progress) -> Result<Vec<SearchResult>> {
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
        "\n{:<24} {:<8} {:>10}  {:>13} {:>13}  {:>13} {:>13}  {:>11} {:>11}\n",
        "searched claim", "verdict", "worst o/b", "worst: holds", "worst: diverg", "any: holds", "any: broken", "eta: holds", "eta: broken"
    );
    s.push_str(&format!(
        "{:<24} {:<8} {:>10}  {:>27}  {:>27}  {:>23}\n",
        "", "", "", "(gamma multiple, worst inst.)", "(gamma multiple, any inst.)", "(eta divisor, any inst.)"
    ));
    for r in results {
        let [a, b, c, d, e, f] = report::step_multiple_cells(r);
        s.push_str(&format!(
            "{:<24} {:<8} {:>10}  {:>13} {:>13}  {:>13} {:>13}  {:>11} {:>11}\n",
            r.claim,
            r.verdict.to_string(),
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

fn search_mismatches(results: &[SearchResult]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.verdict != VerdictKind::Holds)
        .map(|r| format!("{} (search: {}, replay with `cargo run --release -- run reports/search/{}.toml`)", r.claim, r.verdict, r.claim))
        .collect()
}

impl Family for Ccyw {
    fn id(&self) -> &'static str {
        FAMILY_ID
    }

    fn title(&self) -> &'static str {
        "Chen, Cao, Yuan, Wen: FedAvg-P and Scaffold-P for partial personalization"
    }

    fn claims(&self) -> Vec<ClaimSummary> {
        static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
        let statement = |id: &str| STATEMENTS.of(id, || card::embedded_cards().unwrap_or_default().into_iter().flat_map(|c| c.claims).collect());
        let bounds = claims::all_claims().into_iter().map(|c| ClaimSummary {
            id: c.id(),
            kind: ClaimKind::Bound,
            title: c.title(),
            statement: statement(c.id()),
            source: c.source(),
            reading: c.reading(),
            metric: c.metric().formula(),
        });
        let lemmas = claims::all_lemmas().into_iter().map(|c| ClaimSummary {
            id: c.id(),
            kind: ClaimKind::Lemma,
            title: c.title(),
            statement: statement(c.id()),
            source: c.source(),
            reading: c.reading(),
            metric: c.inequality(),
        });
        bounds.chain(lemmas).collect()
    }

    fn scenario_names(&self) -> Result<Vec<String>> {
        Ok(card::embedded_cards()?.iter().flat_map(|c| c.scenarios.iter().map(|s| s.name.clone())).collect())
    }

    fn bench(&self, request: &crate::bench::BenchRequest) -> Result<Vec<crate::bench::Measurement>> {
        super::bench::bench(request)
    }

    fn check(&self, request: &CheckRequest, progress: &dyn Progress) -> Result<FamilyReport> {
        let cards = cards(request)?;
        let all_scenarios: Vec<&Scenario> = cards.iter().flat_map(|c| c.scenarios.iter()).collect();
        let catalog = match &request.card {
            Some(_) => cards.first().map(|c| c.catalog.clone()).unwrap_or_default(),
            None => Catalog::default(),
        };
        // A card that defines claims by formulas is checked for those claims unless others are named.
        let card_defined: Vec<String> = match &request.card {
            Some(_) if request.claims.is_empty() => catalog.defined().iter().map(|c| crate::claim::BoundClaim::id(*c).to_string()).collect(),
            _ => Vec::new(),
        };
        let selection = Selection::by_ids(&own_ids(if card_defined.is_empty() { &request.claims } else { &card_defined }, &catalog), &catalog)?;
        if let Some(b) = request.bound_scale {
            require_positive("--bound-scale", b)?;
        }
        for name in &request.scenarios {
            if request.card.is_some() && !all_scenarios.iter().any(|s| &s.name == name) {
                let known: Vec<&str> = all_scenarios.iter().map(|s| s.name.as_str()).collect();
                return Err(Error::Unknown { kind: "scenario", name: name.clone(), known: known.join(", ") });
            }
        }
        let scenarios: Vec<&Scenario> = all_scenarios
            .into_iter()
            .filter(|s| request.scenarios.is_empty() || request.scenarios.contains(&s.name))
            .filter(|s| selection.concerns(s.algorithm.kind))
            .collect();
        // Resolve every scenario first: bad input fails before any run or any file is written.
        for s in &scenarios {
            check::prepare(s).map_err(|e| e.in_scenario(&s.name))?;
        }
        let opts = CheckOptions { threads: request.threads, bound_scale: request.bound_scale, estimator: request.estimator };
        progress.start(scenarios.len(), "scenarios");
        let mut runs = Vec::with_capacity(scenarios.len());
        for s in &scenarios {
            runs.push(check::run_scenario(s, &selection, &opts)?);
            progress.step();
        }
        progress.finish();
        let (experiments, searches) = if request.full {
            let e = run_experiments(request.threads, progress)?;
            let s = run_searches(&claims::all_claims(), &SearchOptions::default(), request.threads, progress)?;
            (Some(e), s)
        } else {
            (None, Vec::new())
        };
        let extras = report::Extras { experiments: experiments.as_ref(), searches: &searches };
        let (files, summary_markdown) = report::report_files(&runs, extras, &request.meta, request.plots)?;
        let mut terminal = String::new();
        let mut mismatches = Vec::new();
        if let Some(e) = &experiments {
            terminal.push_str(&statements_table(e));
            mismatches.extend(e.mismatches().iter().map(|s| s.id.to_string()));
        }
        if !searches.is_empty() {
            terminal.push_str(&searches_table(&searches));
            mismatches.extend(search_mismatches(&searches));
        }
        Ok(FamilyReport { rows: report::verdict_rows(&runs), summary_markdown, files, mismatches, terminal })
    }

    fn run(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario = card::parse_scenario(text, what)?;
        report::run_report(&scenario, options.threads, options.estimator)
    }

    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        let scenario = card::parse_scenario(text, what)?;
        let prepared = check::prepare(&scenario)?;
        // The resolved steps beside the instance's constants: a sweep over step multiples shows the steps.
        serde_json::to_value(serde_json::json!({ "instance": &prepared.constants, "steps": &prepared.params }))
            .map_err(|e| Error::Numerical(format!("cannot serialize constants: {e}")))
    }

    fn search(&self, request: &SearchRequest, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        let (catalog, scenarios) = catalog(request.card.as_ref())?;
        let chosen = select_claims(&own_ids(&request.claims, &catalog), &catalog)?;
        let opts = SearchOptions { budget: request.budget, seed: request.seed, bound_scale: request.bound_scale, scenarios, ..Default::default() };
        let results = run_searches(&chosen, &opts, None, progress)?;
        let files: Vec<ReportFile> = report::search_files(&results, &request.meta, request.plots)?;
        Ok(Some(FamilyReport { files, terminal: searches_table(&results), mismatches: search_mismatches(&results), ..Default::default() }))
    }

    fn has_search(&self) -> bool {
        true
    }

    fn experiments(&self, threads: Option<usize>, meta: &ReportMeta, plots: bool, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        let e = run_experiments(threads, progress)?;
        let files = report::experiments_files(&e, meta, plots)?;
        let mismatches = e.mismatches().iter().map(|s| s.id.to_string()).collect();
        Ok(Some(FamilyReport { files, terminal: statements_table(&e), mismatches, ..Default::default() }))
    }

    fn conditions(&self, given: &Given, ids: &[String], json: bool, card: Option<&CardText>) -> Result<String> {
        conditions(given, ids, json, &catalog(card)?.0)
    }

    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &super::formulas::SYMBOLS
    }

    fn card_claims(&self, card: &CardText) -> Result<Vec<ClaimSummary>> {
        let (catalog, _) = catalog(Some(card))?;
        Ok(catalog
            .defined()
            .iter()
            .map(|c| ClaimSummary {
                id: c.id(),
                kind: ClaimKind::Bound,
                title: c.title(),
                statement: c.statement().to_string(),
                source: c.source(),
                reading: c.reading(),
                metric: c.metric().formula(),
            })
            .collect())
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
        Some(v) => Err(Error::field(format!("--{name}"), format!("got {v}"), "a whole number")),
    }
}

/// The `conditions` command: admissible steps and every check of each selected claim.
fn conditions(given: &Given, ids: &[String], json: bool, catalog: &Catalog) -> Result<String> {
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
    let (gamma_given, eta_u_given, eta_v_given) = (step("gamma")?, step("eta-u")?, step("eta-v")?);
    let du = count(given, "du", Some(1))?;
    let dv = count(given, "dv", Some(1))?;
    let chosen = select_claims(ids, catalog)?;
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
    let mut rows = Vec::new();
    let mut text = String::new();
    for c in chosen {
        let adm = c.admissible(&base);
        let eta_u = eta_u_given.unwrap_or(adm.eta_u_min);
        let eta_v = eta_v_given.unwrap_or(adm.eta_v_min);
        let gamma = gamma_given.unwrap_or(adm.gamma.value());
        let x = ClaimInputs { gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v, ..base };
        let checks = c.checks(&x);
        let applicable = checks.iter().all(|k| k.holds || !k.is_binding());
        rows.push(serde_json::json!({
            "claim": c.id(),
            "admissible": adm,
            "checked": {"gamma": gamma, "eta_u": eta_u, "eta_v": eta_v},
            "applicable": applicable,
            "bound": if applicable { Some(c.bound(&x)) } else { None },
            "checks": checks.iter().map(|k| serde_json::json!({"check": k.to_string(), "holds": k.holds, "kind": k.kind})).collect::<Vec<_>>(),
        }));
        let gamma_word = match adm.gamma {
            GammaRule::AtMost(g) => format!("gamma <= {}", fmt_num(g)),
            GammaRule::Exactly(g) => format!("gamma = {}", fmt_num(g)),
        };
        text.push_str(&format!("{}: admissible {gamma_word}, eta_u >= {}, eta_v >= {}\n", c.id(), fmt_num(adm.eta_u_min), fmt_num(adm.eta_v_min)));
        text.push_str(&format!(
            "  at gamma = {}, eta_u = {}, eta_v = {}: {}\n",
            fmt_num(gamma),
            fmt_num(eta_u),
            fmt_num(eta_v),
            if applicable { "applicable" } else { "NOT applicable" }
        ));
        for k in &checks {
            text.push_str(&format!("    [{}] {k}\n", if k.holds { "ok" } else { "FAIL" }));
        }
        if applicable {
            text.push_str(&format!("  bound = {}\n", fmt_num(c.bound(&x))));
        }
    }
    if json {
        serde_json::to_string_pretty(&rows).map(|s| s + "\n").map_err(|e| Error::Numerical(format!("cannot serialize: {e}")))
    } else {
        Ok(text)
    }
}
