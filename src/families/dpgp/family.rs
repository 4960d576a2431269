//! The `Family` implementation of DFedPGP: claims, default scenarios from the embedded card
//! `theorems/dpgp.toml`, checks, runs and report files.
//!
//! Every expectation is exact (moment propagation over the realised graphs) unless a check or a
//! run asks for Monte Carlo, which replaces the per-round claims' (Lemma 3, (32)) exact moments
//! by [`MONTE_CARLO_REPLICATES`] keyed-stream replicates; replicates run on `--threads` workers
//! and the files do not depend on their number. Rows say which constants they used: `estimated`
//! (C and q from the realised products, in Lemma 3, (32), Theorem 1's bracket and the rates).
//! Theorem 1's hidden constant is not fitted ([`crate::kinds::big_o`]).
//!
//! Files: `claims/<ID>.json` per claim, `claims/dpgp-scenarios.json` (constants, connectivity,
//! sweep and fit per scenario), with `--plots` `figures/dpgp-c1-<scenario>.png` (metric vs `T`,
//! fitted slope, `-1/2` reference) and `figures/dpgp-l3-<scenario>.png` (consensus error vs
//! rounds with Lemma 3's bound), `figures/dpgp-<comparison>.png` (Theorem 1's metric and the
//! consensus error of a comparison's scenarios vs rounds), and the family's section of `SUMMARY.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::checker::{ClaimResult, Group, Plugged, Plugin, ReportSettings, RunSettings, Searcher};
use crate::claim::{fmt_num, BoundClaim};
use crate::error::{require_positive, Error, Result};
use crate::family::{CardText, ClaimSummary, EstimatorChoice, FamilyReport, Given, Progress, ReportFile, RunOptions, VerdictRow};
use crate::report::{describe, opt_num, reproduce_command, to_json, ReportMeta};
use crate::verdict::{ConstantsSource, VerdictKind};

use super::card::{embedded_card, parse_card, parse_scenario, Card, Scenario, FAMILY_ID};
use super::card_claims::{self, CardClaim};
use super::check::{evaluate_card_claims, prepare, run_scenario_with, Reads, ScenarioRun, MONTE_CARLO_REPLICATES};
pub use super::claim::DpgpClaim;
use super::claims::{step_checks_for, summaries};
use super::compare::run_comparison;
use super::plot::{comparison_figure, consensus_figure, rate_figure};
use super::problem::{Constants, Instance};
use super::round::Params;

/// The claims whose step conditions are Theorem 1's whole (`conditions` prints those), with
/// their variants (`DPGP-T1~printed-step`, ...).
const THEOREM_1_CLAIMS: [&str; 2] = ["DPGP-T1", "DPGP-C1"];

/// The family.
pub struct DpgpFamily;

/// The registered family.
pub static FAMILY: Plugged<DpgpFamily> = Plugged(DpgpFamily);

/// One row of a claim's JSON file.
#[derive(Serialize)]
struct ClaimFileRow<'a> {
    scenario: &'a str,
    constants: ConstantsSource,
    verdict: VerdictKind,
    expected: Option<VerdictKind>,
    detail: String,
    reproduce: String,
    evaluation: &'a crate::verdict::Evaluation,
}

/// A claim's JSON file.
#[derive(Serialize)]
struct ClaimFile<'a> {
    meta: &'a ReportMeta,
    claim: &'a ClaimSummary,
    rows: Vec<ClaimFileRow<'a>>,
}

/// What the per-scenario file and `run` report about a scenario's run (everything but the
/// per-round series of the claims).
#[derive(Serialize)]
struct RunSummary<'a> {
    scenario: &'a str,
    topology: &'a str,
    constants: &'a super::problem::Constants,
    connectivity: &'a super::topology::Connectivity,
    params: &'a super::round::Params,
    sweep: &'a [super::check::SweepPoint],
    fit: Option<crate::kinds::rate::SlopeFit>,
    verdicts: Vec<(&'static str, VerdictKind, Option<f64>, String)>,
}

fn summarize(run: &ScenarioRun) -> RunSummary<'_> {
    RunSummary {
        scenario: &run.scenario,
        topology: &run.topology,
        constants: &run.constants,
        connectivity: &run.connectivity,
        params: &run.params,
        sweep: &run.sweep,
        fit: run.fit,
        verdicts: run.results.iter().map(|r| (r.claim, r.evaluation.verdict, r.evaluation.slack, describe(&r.evaluation))).collect(),
    }
}

fn statement(id: &str) -> String {
    static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
    STATEMENTS.of(id, || embedded_card().map(|c| c.card.claims).unwrap_or_default())
}

impl Plugin for DpgpFamily {
    type Card = Card;
    type Scenario = Scenario;
    type Claim = DpgpClaim;
    type Prepared = (Instance, Constants);
    type Run = ScenarioRun;

    fn id(&self) -> &'static str {
        FAMILY_ID
    }

    fn title(&self) -> &'static str {
        "Liu, Shi, Li, Wu, Wang, Shen: DFedPGP, decentralized partial personalization with push-sum on directed time-varying graphs"
    }

    fn estimators(&self) -> &'static [EstimatorChoice] {
        &[EstimatorChoice::Exact, EstimatorChoice::MonteCarlo]
    }
    fn embedded_card(&self) -> Result<Card> {
        embedded_card()
    }

    fn read_card(&self, card: &CardText) -> Result<Card> {
        parse_card(&card.text, &card.what)
    }

    fn builtin_claims(&self) -> Vec<DpgpClaim> {
        summaries().into_iter().map(|c| DpgpClaim::Builtin(c.id)).collect()
    }

    fn defined_claims(&self, card: &Card) -> Vec<DpgpClaim> {
        card.defined.iter().map(|c| DpgpClaim::Card(c.clone())).collect()
    }

    fn claim_id(&self, claim: &DpgpClaim) -> &'static str {
        claim.id()
    }

    fn summary(&self, claim: &DpgpClaim) -> ClaimSummary {
        match claim {
            DpgpClaim::Builtin(id) => {
                let mut c = summaries().into_iter().find(|c| c.id == *id).unwrap_or_else(|| unreachable!("a built-in id has a summary"));
                c.statement = statement(id);
                c
            }
            DpgpClaim::Card(c) => ClaimSummary {
                id: c.id(),
                kind: crate::family::ClaimKind::Bound,
                title: c.title(),
                statement: c.claim.statement.clone(),
                source: c.source(),
                reading: c.reading(),
                metric: card_claims::metric_formula(c.claim.metric),
            },
        }
    }

    fn concerns(&self, _s: &Scenario, claims: &[DpgpClaim]) -> bool {
        claims.iter().any(|c| !c.compares())
    }

    fn groups<'c>(&self, card: &'c Card) -> Vec<Group<'c>> {
        card.sections.comparisons.iter().map(|c| Group { name: &c.name, members: c.scenarios.iter().map(String::as_str).collect() }).collect()
    }

    fn compares(&self, claims: &[DpgpClaim]) -> bool {
        claims.iter().any(DpgpClaim::compares)
    }

    fn compare(&self, card: &Card, group: &Group, members: &[&ScenarioRun], claims: &[DpgpClaim], settings: &RunSettings) -> Vec<ClaimResult> {
        let Some(c) = card.sections.comparisons.iter().find(|c| c.name == group.name) else { return Vec::new() };
        let selected = |id: &str| claims.iter().any(|c| c.id() == id);
        let mut results: Vec<ClaimResult> = run_comparison(c, members, settings.bound_scale).into_iter().filter(|r| selected(r.claim)).collect();
        for r in &mut results {
            r.expected = c.expected.get(r.claim).copied();
        }
        results
    }

    fn work(&self, s: &Scenario) -> Option<crate::budget::Work> {
        Some(super::card::work(s))
    }

    fn prepare(&self, s: &Scenario) -> Result<(Instance, Constants)> {
        prepare(s)
    }

    /// Every expectation exact, unless the check asks for Monte Carlo: then the per-round claims
    /// use [`MONTE_CARLO_REPLICATES`] keyed-stream replicates.
    fn run(&self, _card: &Card, s: &Scenario, prepared: (Instance, Constants), claims: &[DpgpClaim], settings: &RunSettings) -> Result<ScenarioRun> {
        let replicates = (settings.estimator == Some(EstimatorChoice::MonteCarlo)).then_some(MONTE_CARLO_REPLICATES);
        let defined = claims.iter().any(|c| matches!(c, DpgpClaim::Card(_)));
        let mut run = run_scenario_with(s, prepared, settings.bound_scale, replicates, Reads::of(&claims.iter().map(|c| c.id()).collect::<Vec<_>>(), defined))?;
        let cards: Vec<&CardClaim> = claims.iter().filter_map(|c| if let DpgpClaim::Card(c) = c { Some(c.as_ref()) } else { None }).collect();
        run.results.extend(evaluate_card_claims(&cards, s.rounds, &run, settings.bound_scale));
        let selected = |id: &str| claims.iter().any(|c| c.id() == id);
        run.results.retain(|r| selected(r.claim));
        let given = run.connectivity.given_label();
        for r in &mut run.results {
            r.expected = s.expected.get(r.claim).copied();
            if r.constants == ConstantsSource::Estimated && r.label.is_none() {
                r.label.clone_from(&given);
            }
        }
        Ok(run)
    }

    fn searcher(&self) -> Option<&dyn Searcher<Self>> {
        Some(&super::search::Space)
    }

    fn report(
        &self,
        card: &Card,
        claims: &[DpgpClaim],
        runs: &[ScenarioRun],
        rows: &[VerdictRow],
        settings: &ReportSettings,
        _: &dyn Progress,
    ) -> Result<FamilyReport> {
        let runs: BTreeMap<String, &ScenarioRun> = runs.iter().map(|r| (r.scenario.clone(), r)).collect();
        let summaries: Vec<ClaimSummary> = claims.iter().map(|c| self.summary(c)).collect();
        let mut files = claim_files(rows, &summaries, settings.meta)?;
        let summaries_json: Vec<RunSummary> = runs.values().map(|r| summarize(r)).collect();
        files.push(ReportFile { path: PathBuf::from("claims").join("dpgp-scenarios.json"), bytes: to_json(&summaries_json)?.into_bytes() });
        if settings.plots {
            for run in runs.values() {
                // Corollary 1's figure, where a checked claim had the sweep run.
                if !run.sweep.is_empty() {
                    files.push(rate_figure(run).file(&format!("dpgp-c1-{}", run.scenario))?);
                }
                files.push(consensus_figure(run).file(&format!("dpgp-l3-{}", run.scenario))?);
            }
            for c in &card.sections.comparisons {
                let members: Option<Vec<&ScenarioRun>> = c.scenarios.iter().map(|n| runs.get(n).copied()).collect();
                if let Some(members) = members.filter(|_| rows.iter().any(|r| r.scenario == c.name)) {
                    files.push(comparison_figure(&c.name, &members).file(&format!("dpgp-{}", c.name))?);
                }
            }
        }
        Ok(FamilyReport { summary_markdown: markdown(rows, &runs), files, terminal: terminal(&runs), ..Default::default() })
    }

    /// The step-size conditions of Theorem 1 for given values: `--eta-u`, `--eta-v` and, through
    /// `--set`, `delta`, `l-u`, `l-v`, `k-u`, `k-v`, `c`, `q` (estimated or known): the proof's
    /// conditions (I-DPGP2) and the printed one, each with its given and required value.
    fn conditions(&self, card: Option<&Card>, given: &Given, claims: &[String], json: bool) -> Result<String> {
        let defined = card.map(|c| c.defined.as_slice()).unwrap_or_default();
        let card: Vec<&CardClaim> = defined.iter().map(|c| c.as_ref()).filter(|c| claims.iter().any(|id| id == c.id())).collect();
        if !card.is_empty() {
            let chosen: Vec<&crate::formula::user::UserClaim> = card.iter().map(|c| &c.claim).collect();
            let defined: Vec<&str> = chosen.iter().map(|c| c.id).collect();
            crate::formula::user::require_only_defined(claims, &defined)?;
            return crate::formula::user::conditions_text(&chosen, &super::formulas::SYMBOLS, given, json);
        }
        // The conditions printed are Theorem 1's, which Corollary 1 shares; another claim (a lemma
        // with a subset of them, another family's claim) had been answered with them silently.
        if let Some(id) = claims.iter().find(|id| !THEOREM_1_CLAIMS.iter().any(|t| id.as_str() == *t || id.starts_with(&format!("{t}~")))) {
            return Err(Error::field(
                "--claim",
                format!(
                    "`{id}`: DFedPGP's `conditions` evaluates Theorem 1's step sizes, which only Theorem 1 and Corollary 1 (and their variants) carry whole"
                ),
                "DPGP-T1, DPGP-C1 or one of their variants, a claim defined in the card given with --card, or no --claim",
            ));
        }
        // A value is found by its symbol as `list --symbols` names it (`L_u`), whatever its case
        // and `-`/`_` (`--set l-u`, `--eta-u`), and a missing one is named as it is given.
        let symbols = super::formulas::SYMBOLS.symbols();
        let read = |key: &str| crate::formula::symbols::symbol_read(symbols, key);
        // The option a symbol is given by, and how it is typed.
        let flag = |symbol: &str| match symbol {
            "eta_u" | "eta_v" => {
                let option = format!("--{}", symbol.replace('_', "-"));
                (option.clone(), format!("{option} VALUE"))
            }
            _ => (format!("--set {symbol}"), format!("--set {symbol}=VALUE")),
        };
        let lookup = |symbol: &str| -> Result<f64> {
            let found = given.iter().find(|(k, _)| read(k) == read(symbol)).map(|(_, v)| *v);
            let (option, typed) = flag(symbol);
            found.ok_or_else(|| Error::field(option, "missing", format!("a value, as `{typed}`")))
        };
        let get = |symbol: &str| -> Result<f64> { require_positive(&flag(symbol).0, lookup(symbol)?) };
        let whole = |symbol: &str| -> Result<usize> {
            let v = get(symbol)?;
            if v.fract() == 0.0 && v <= 1e6 {
                Ok(v as usize)
            } else {
                Err(Error::field(flag(symbol).0, format!("got {v}"), "a whole number in [1, 1e6]"))
            }
        };
        let (eta_u, eta_v, delta, l_u, l_v, c) = (get("eta_u")?, get("eta_v")?, get("delta")?, get("L_u")?, get("L_v")?, get("C")?);
        let q = lookup("q")?;
        if !(0.0..1.0).contains(&q) {
            return Err(Error::field("--set q", format!("got {q}"), "a number in [0, 1)"));
        }
        let params = Params { eta_u, eta_v, k_u: whole("K_u")?, k_v: whole("K_v")?, noise_draws: Default::default() };
        let proof = step_checks_for(l_u, l_v, delta, c, q, &params, false);
        let printed = step_checks_for(l_u, l_v, delta, c, q, &params, true);
        let admissible = proof.iter().filter(|c| c.name.starts_with("eta_u")).map(|c| c.required).fold(f64::INFINITY, f64::min);
        if json {
            return to_json(&serde_json::json!({ "proof": proof, "printed": printed, "eta_u_max": admissible }));
        }
        let mut s = String::from("DFedPGP, Theorem 1 step sizes (004:L131; proof: L478, L509, L554, L590)\n");
        for c in proof.iter().chain(&printed) {
            let _ = writeln!(s, "  [{}] {c}", if c.holds { "ok" } else { "FAILS" });
        }
        let _ = writeln!(s, "  admissible eta_u under the proof's conditions: < {}", fmt_num(admissible));
        Ok(s)
    }

    fn scenario_constants(&self, text: &str, what: &str) -> Result<serde_json::Value> {
        let scenario = parse_scenario(text, what)?;
        let (_, constants) = prepare(&scenario)?;
        serde_json::to_value(&constants).map_err(|e| Error::serialization("constants", e))
    }

    fn run_file(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario = parse_scenario(text, what)?;
        crate::budget::require(&super::card::work(&scenario), options.max_work)?;
        prepare(&scenario).map_err(|e| e.in_scenario(&scenario.name))?;
        let replicates = (options.estimator == Some(EstimatorChoice::MonteCarlo)).then_some(MONTE_CARLO_REPLICATES);
        let run = prepare(&scenario).and_then(|p| run_scenario_with(&scenario, p, 1.0, replicates, Reads::ALL)).map_err(|e| e.in_scenario(&scenario.name))?;
        to_json(&super::check::RunFile { summary: summarize(&run), series: super::check::RunSeries::of(&run) })
    }

    fn export_instance(&self, text: &str, what: &str) -> Result<String> {
        super::check::export_instance(text, what)
    }

    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &super::formulas::SYMBOLS
    }
    /// The steps, also symbols (`eta_u`, `eta_v`), given as their flags.
    fn condition_flags(&self) -> &'static [&'static str] {
        &["eta-u", "eta-v"]
    }
}

/// One JSON file per claim with its rows (the checker's, in its order).
///
/// # Errors
/// A claim without a summary; serialization.
fn claim_files(rows: &[VerdictRow], claims: &[ClaimSummary], meta: &ReportMeta) -> Result<Vec<ReportFile>> {
    let mut ids: Vec<&'static str> = Vec::new();
    for r in rows {
        if !ids.contains(&r.claim) {
            ids.push(r.claim);
        }
    }
    let mut files = Vec::new();
    for id in ids {
        // The built-in summary as the family declares it (the card's statement is in SUMMARY.md).
        let summary =
            summaries().into_iter().chain(claims.iter().cloned()).find(|c| c.id == id).ok_or_else(|| Error::Internal(format!("claim {id} has no summary")))?;
        let file = ClaimFile {
            meta,
            claim: &summary,
            rows: rows
                .iter()
                .filter(|r| r.claim == id)
                .map(|r| ClaimFileRow {
                    scenario: &r.scenario,
                    constants: r.constants,
                    verdict: r.evaluation.verdict,
                    expected: r.expected,
                    detail: describe(&r.evaluation),
                    reproduce: reproduce_command(id, &r.scenario),
                    evaluation: &r.evaluation,
                })
                .collect(),
        };
        files.push(ReportFile { path: PathBuf::from("claims").join(format!("{id}.json")), bytes: to_json(&file)?.into_bytes() });
    }
    Ok(files)
}

/// `C` or `q` for the tables: the number, marked `(given)` when the scenario gives it, with a
/// `!` when the graphs' deviations exceed the given envelope ([`super::topology::Envelope`]).
fn cq(c: &super::topology::Connectivity, x: f64) -> String {
    match c.given {
        Some(g) => format!("{} (given{})", fmt_num(x), if g.too_small { "!" } else { "" }),
        None => fmt_num(x),
    }
}

/// Connectivity and rate per scenario, for the terminal.
fn terminal(runs: &BTreeMap<String, &ScenarioRun>) -> String {
    let mut s = String::from("\nDFedPGP connectivity and rates (C, q estimated from the realised mixing products)\n");
    let _ = writeln!(s, "{:<22} {:<28} {:>4} {:>9} {:>9} {:>9} {:>22}", "scenario", "topology", "B", "delta", "C", "q", "slope (99%)");
    for r in runs.values() {
        let c = &r.connectivity;
        let slope = r.fit.map(|f| format!("{} [{}, {}]", fmt_num(f.slope), fmt_num(f.lower), fmt_num(f.upper))).unwrap_or_else(|| "-".into());
        let b = c.window.map(|b| b.to_string()).unwrap_or_else(|| "none".into());
        let _ = writeln!(s, "{:<22} {:<28} {:>4} {:>9} {:>9} {:>9} {:>22}", r.scenario, r.topology, b, fmt_num(c.delta), cq(c, c.c), cq(c, c.q), slope);
    }
    s
}

/// The family's section of SUMMARY.md.
fn markdown(rows: &[VerdictRow], runs: &BTreeMap<String, &ScenarioRun>) -> String {
    let mut s = String::from("## DFedPGP (dpgp)\n\n");
    s.push_str("Push-sum DFedPGP (Algorithm 1, 004:L100) on partial-personalization quadratics; every expectation exact (moment propagation over the realised graphs). ");
    s.push_str("Lemma 3's C and q are *estimated* from the realised mixing products; rows using them say `estimated`.\n\n");
    s.push_str("| claim | scenario | constants | verdict | expected | slack | detail |\n|---|---|---|---|---|---|---|\n");
    for r in rows {
        let expected = r.expected.map(|e| e.to_string()).unwrap_or_else(|| "-".into());
        let detail = describe(&r.evaluation).replace('|', "\\|");
        // Rows whose C, q the scenario gives say so (the overview's label has the numbers).
        let given = runs.get(&r.scenario).is_some_and(|run| run.connectivity.given.is_some()) && r.label.as_deref().is_some_and(|l| l.starts_with("given C"));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.claim,
            r.scenario,
            if given { "given".to_string() } else { r.constants.to_string() },
            r.evaluation.verdict,
            expected,
            opt_num(r.evaluation.slack),
            detail
        );
    }
    s.push_str("\n| scenario | topology | B | delta | C (est.) | q (est.) | sigma_g^2 | slope of the metric vs T (99%) |\n|---|---|---|---|---|---|---|---|\n");
    for r in runs.values() {
        let c = &r.connectivity;
        let sg = r.constants.sigma_g2.value.map(fmt_num).unwrap_or_else(|| "infinite".into());
        let slope = r.fit.map(|f| format!("{} [{}, {}]", fmt_num(f.slope), fmt_num(f.lower), fmt_num(f.upper))).unwrap_or_else(|| "-".into());
        let b = c.window.map(|b| b.to_string()).unwrap_or_else(|| "none".into());
        let _ = writeln!(s, "| {} | {} | {} | {} | {} | {} | {} | {} |", r.scenario, r.topology, b, fmt_num(c.delta), cq(c, c.c), cq(c, c.q), sg, slope);
    }
    s.push('\n');
    for r in runs.values() {
        if let Some(label) = r.connectivity.given_label() {
            let _ = writeln!(s, "- {}: {label}.", r.scenario);
        }
    }
    if runs.values().any(|r| r.connectivity.given.is_some()) {
        s.push_str("\n(given): the scenario's own C, q (`push_sum`), used in place of the estimate; `!`: the graphs' deviations max_(i,j) |Phi_ij/(Phi mu)_i - 1/m| exceed C q^l at some lag l (004:L532).\n\n");
    }
    literal_delta_v_table(&mut s, runs);
    s
}

/// Where the push-sum weights stay away from 1 and a coupling `B_i` is nonzero: Theorem 1's
/// printed `Delta_v^t` (at `u_i^t`, 004:L133) against the de-biased one (at `z_i^t`) over the
/// sweep. The printed metric tends to `floor / L_v` ([`super::check::literal_delta_v_floor`]); with
/// its excess over that floor falling as `T^-1/2` its local slope `-(1/2) excess / metric` reaches
/// `-1/4` at `T = T_max (excess(T_max) / (floor/L_v))^2`.
fn literal_delta_v_table(s: &mut String, runs: &BTreeMap<String, &ScenarioRun>) {
    let with_floor: Vec<&&ScenarioRun> = runs.values().filter(|r| r.literal_floor > 0.0 && r.sweep.len() >= 2).collect();
    if with_floor.is_empty() {
        return;
    }
    s.push_str("Theorem 1's printed Delta_v^t (grad_v at u_i^t = mu_i^t z_i^t, 004:L133) against the de-biased one (at z_i^t) where the push-sum weights stay away from 1 and B_i != 0: ");
    s.push_str("the printed metric tends to the floor (1/m) sum_i (mu_i - 1)^2 ||B_i^T u*||^2 over L_v (mu at the longest horizon) and its slope flattens; the de-biased one keeps falling. ");
    s.push_str("Slopes over the last two horizons; the flattening horizon is where the printed metric's slope reaches -1/4, extrapolated with its excess over the floor falling as T^-1/2.\n\n");
    s.push_str("| scenario | floor | floor / L_v | T max | printed metric | slope | de-biased metric | slope | printed slope -1/4 at T |\n|---|---|---|---|---|---|---|---|---|\n");
    for r in with_floor {
        let n = r.sweep.len();
        let (a, b) = (&r.sweep[n - 2], &r.sweep[n - 1]);
        let slope = |ya: f64, yb: f64| fmt_num((yb / ya).ln() / (b.rounds as f64 / a.rounds as f64).ln());
        let level = r.literal_floor / r.constants.l_v;
        let excess = b.metric - level;
        let flat = if excess > 0.0 { fmt_num(b.rounds as f64 * (excess / level).powi(2)) } else { "-".into() };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            fmt_num(r.literal_floor),
            fmt_num(level),
            b.rounds,
            fmt_num(b.metric),
            slope(a.metric, b.metric),
            fmt_num(b.metric_debiased),
            slope(a.metric_debiased, b.metric_debiased),
            flat
        );
    }
    s.push('\n');
}
