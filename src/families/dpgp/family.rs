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
//! rounds with Lemma 3's bound), and the family's section of `SUMMARY.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::claim::{fmt_num, BoundClaim};
use crate::error::{require_positive, Error, Result};
use crate::family::{CardText, CheckRequest, ClaimSummary, EstimatorChoice, Family, FamilyReport, Given, Progress, ReportFile, RunOptions, VerdictRow};
use crate::report::{describe, opt_num, reproduce_command, to_json, ReportMeta};
use crate::verdict::{ConstantsSource, VerdictKind};

use super::card::{parse_card, parse_scenario, Card, Comparison, Scenario, DEFAULT_CARD, FAMILY_ID};
use super::card_claims::{self, CardClaim};
use super::check::{evaluate_card_claims, prepare, run_comparison, run_scenario_with, ClaimResult, ScenarioRun, MONTE_CARLO_REPLICATES};
use super::claims::{step_checks_for, summaries};
use super::plot::{consensus_figure, rate_figure};
use super::round::Params;

/// A claim's result on a named scenario with the card's expectation.
type ClaimRow = (String, ClaimResult, Option<VerdictKind>);

/// The family.
pub struct DpgpFamily;

/// The registered instance.
pub static FAMILY: DpgpFamily = DpgpFamily;

/// The card of a request: its own, or the embedded default.
fn card(request: &CheckRequest) -> Result<Card> {
    match &request.card {
        Some(c) => parse_card(&c.text, &c.what),
        None => parse_card(DEFAULT_CARD, "theorems/dpgp.toml"),
    }
}

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

impl Family for DpgpFamily {
    fn id(&self) -> &'static str {
        FAMILY_ID
    }

    fn title(&self) -> &'static str {
        "Liu, Shi, Li, Wu, Wang, Shen: DFedPGP, decentralized partial personalization with push-sum on directed time-varying graphs"
    }

    fn claims(&self) -> Vec<ClaimSummary> {
        static STATEMENTS: crate::card::Statements = crate::card::Statements::new();
        summaries()
            .into_iter()
            .map(|mut c| {
                c.statement = STATEMENTS.of(c.id, || parse_card(DEFAULT_CARD, "theorems/dpgp.toml").map(|c| c.claims).unwrap_or_default());
                c
            })
            .collect()
    }

    fn card_claims(&self, card: &CardText) -> Result<Vec<ClaimSummary>> {
        Ok(parse_card(&card.text, &card.what)?
            .defined
            .0
            .iter()
            .map(|c| ClaimSummary {
                id: c.id(),
                kind: crate::family::ClaimKind::Bound,
                title: c.title(),
                statement: c.claim.statement.clone(),
                source: c.source(),
                reading: c.reading(),
                metric: card_claims::metric_formula(c.claim.metric),
            })
            .collect())
    }

    fn scenario_names(&self) -> Result<Vec<String>> {
        let c = parse_card(DEFAULT_CARD, "theorems/dpgp.toml")?;
        Ok(c.scenarios.iter().map(|s| s.name.clone()).chain(c.comparisons.iter().map(|c| c.name.clone())).collect())
    }

    fn check(&self, request: &CheckRequest, progress: &dyn Progress) -> Result<FamilyReport> {
        let card = card(request)?;
        let bound_scale = match request.bound_scale {
            Some(b) => require_positive("--bound-scale", b)?,
            None => 1.0,
        };
        let claims = self.claims_with(request.card.as_ref())?;
        let selection = Selection::new(&claims, request, &card)?;
        let needed = selection.needed_scenarios(&card);
        // Bad input fails before any run.
        for s in &needed {
            prepare(s).map_err(|e| e.in_scenario(&s.name))?;
        }
        let runs = run_all(&needed, &selection.chosen_cards, request, bound_scale, progress)?;
        let by_claim = selection.rows_by_claim(&card, &runs, bound_scale);
        let (rows, mut files) = claim_files(&selection.ids, &by_claim, &claims, &request.meta)?;
        let summaries_json: Vec<RunSummary> = runs.values().map(summarize).collect();
        files.push(ReportFile { path: PathBuf::from("claims").join("dpgp-scenarios.json"), bytes: to_json(&summaries_json)?.into_bytes() });
        if request.plots {
            for run in runs.values() {
                files.push(ReportFile { path: PathBuf::from("figures").join(format!("dpgp-c1-{}.png", run.scenario)), bytes: rate_figure(run)? });
                files.push(ReportFile { path: PathBuf::from("figures").join(format!("dpgp-l3-{}.png", run.scenario)), bytes: consensus_figure(run)? });
            }
        }
        let summary_markdown = markdown(&rows, &runs);
        let terminal = terminal(&runs);
        Ok(FamilyReport { rows, summary_markdown, files, mismatches: Vec::new(), terminal })
    }

    /// The step-size conditions of Theorem 1 for given values: `--eta-u`, `--eta-v` and, through
    /// `--set`, `delta`, `l-u`, `l-v`, `k-u`, `k-v`, `c`, `q` (estimated or known): the proof's
    /// conditions (I-DPGP2) and the printed one, each with its given and required value.
    fn conditions(&self, given: &Given, claims: &[String], json: bool, card: Option<&CardText>) -> Result<String> {
        let read = card.map(|c| parse_card(&c.text, &c.what)).transpose()?;
        let defined = read.map(|c| c.defined).unwrap_or_default();
        let card: Vec<&CardClaim> = defined.0.iter().map(|c| c.as_ref()).filter(|c| claims.iter().any(|id| id == c.id())).collect();
        if !card.is_empty() {
            let chosen: Vec<&crate::formula::user::UserClaim> = card.iter().map(|c| &c.claim).collect();
            return crate::formula::user::conditions_text(&chosen, &super::formulas::SYMBOLS, given, json);
        }
        let get = |name: &str| -> Result<f64> {
            let v = given
                .get(name)
                .copied()
                .ok_or_else(|| Error::field(format!("--{name}"), "missing", "a value (`--eta-u`, `--eta-v`, or `--set NAME=VALUE`)"))?;
            require_positive(&format!("--{name}"), v)
        };
        let whole = |name: &str| -> Result<usize> {
            let v = get(name)?;
            if v.fract() == 0.0 && v <= 1e6 {
                Ok(v as usize)
            } else {
                Err(Error::field(format!("--{name}"), format!("got {v}"), "a whole number in [1, 1e6]"))
            }
        };
        let (eta_u, eta_v, delta, l_u, l_v, c) = (get("eta-u")?, get("eta-v")?, get("delta")?, get("l-u")?, get("l-v")?, get("c")?);
        let q = given.get("q").copied().ok_or_else(|| Error::field("--q", "missing", "a value in [0, 1) via --set q=..."))?;
        if !(0.0..1.0).contains(&q) {
            return Err(Error::field("--q", format!("got {q}"), "a number in [0, 1)"));
        }
        let params = Params { eta_u, eta_v, k_u: whole("k-u")?, k_v: whole("k-v")? };
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

    fn run(&self, text: &str, what: &str, options: &RunOptions) -> Result<String> {
        let scenario = parse_scenario(text, what)?;
        prepare(&scenario).map_err(|e| e.in_scenario(&scenario.name))?;
        let replicates = (options.estimator == Some(EstimatorChoice::MonteCarlo)).then_some(MONTE_CARLO_REPLICATES);
        let run = run_scenario_with(&scenario, 1.0, replicates).map_err(|e| e.in_scenario(&scenario.name))?;
        to_json(&summarize(&run))
    }

    fn symbols(&self) -> &'static [crate::formula::Symbol] {
        &super::formulas::SYMBOLS
    }
}

/// What a check request selects: the claims (built-in and card-defined) and scenarios to run.
struct Selection<'r> {
    /// Every claim id of the family, in report order.
    ids: Vec<&'static str>,
    /// The claims asked for (empty: all).
    wanted: Vec<String>,
    /// The card-defined claims to evaluate.
    chosen_cards: Vec<&'r CardClaim>,
    /// The scenarios asked for (empty: all).
    scenarios: &'r [String],
    /// Whether any claim evaluated on single scenarios (not a comparison) is asked for.
    scenario_claims: bool,
}

impl<'r> Selection<'r> {
    /// The selection of `request` on `card`; `claims` is every claim of the family.
    ///
    /// # Errors
    /// A scenario name the request's own card does not have.
    fn new(claims: &[ClaimSummary], request: &'r CheckRequest, card: &'r Card) -> Result<Self> {
        let names: Vec<&str> = card.scenarios.iter().map(|s| s.name.as_str()).chain(card.comparisons.iter().map(|c| c.name.as_str())).collect();
        if request.card.is_some() {
            if let Some(n) = request.scenarios.iter().find(|n| !names.contains(&n.as_str())) {
                return Err(Error::Unknown { kind: "scenario", name: n.clone(), known: names.join(", ") });
            }
        }
        let ids: Vec<&'static str> = claims.iter().map(|c| c.id).collect();
        // A card that defines claims by formulas is checked for those claims unless others are named.
        let defined: Vec<&'r CardClaim> = card.defined.0.iter().map(|c| c.as_ref()).collect();
        let wanted: Vec<String> =
            if request.claims.is_empty() && !defined.is_empty() { defined.iter().map(|c| c.id().to_string()).collect() } else { request.claims.clone() };
        let mut selection = Self { ids, wanted, chosen_cards: Vec::new(), scenarios: &request.scenarios, scenario_claims: false };
        selection.chosen_cards = defined.into_iter().filter(|c| selection.claim(c.id())).collect();
        selection.scenario_claims = selection.ids.iter().any(|id| !id.starts_with("DPGP-R2") && selection.claim(id));
        Ok(selection)
    }

    /// Whether claim `id` is selected.
    fn claim(&self, id: &str) -> bool {
        self.wanted.is_empty() || self.wanted.iter().any(|c| c == id)
    }

    /// Whether scenario (or comparison) `name` is selected.
    fn named(&self, name: &str) -> bool {
        self.scenarios.is_empty() || self.scenarios.iter().any(|s| s == name)
    }

    /// The comparisons of `card` to evaluate (Remark 2's claims).
    fn comparisons<'c>(&self, card: &'c Card) -> Vec<&'c Comparison> {
        let remark2 = self.ids.iter().any(|id| id.starts_with("DPGP-R2") && self.claim(id));
        card.comparisons.iter().filter(|c| remark2 && self.named(&c.name)).collect()
    }

    /// The scenarios to run: those selected for their own claims and the members of selected
    /// comparisons, in card order.
    fn needed_scenarios<'c>(&self, card: &'c Card) -> Vec<&'c Scenario> {
        let comparisons = self.comparisons(card);
        card.scenarios.iter().filter(|s| (self.scenario_claims && self.named(&s.name)) || comparisons.iter().any(|c| c.scenarios.contains(&s.name))).collect()
    }

    /// The selected claims' results with the card's expectations, by claim: scenarios in card
    /// order, then comparisons.
    fn rows_by_claim(&self, card: &Card, runs: &BTreeMap<String, ScenarioRun>, bound_scale: f64) -> BTreeMap<&'static str, Vec<ClaimRow>> {
        let mut by_claim: BTreeMap<&'static str, Vec<ClaimRow>> = BTreeMap::new();
        for s in card.scenarios.iter().filter(|s| self.scenario_claims && self.named(&s.name)) {
            let Some(run) = runs.get(&s.name) else { continue };
            for r in run.results.iter().filter(|r| self.claim(r.claim)) {
                by_claim.entry(r.claim).or_default().push((s.name.clone(), r.clone(), s.expected.get(r.claim).copied()));
            }
        }
        for c in self.comparisons(card) {
            let members: Vec<&ScenarioRun> = c.scenarios.iter().filter_map(|n| runs.get(n)).collect();
            for r in run_comparison(c, &members, bound_scale).into_iter().filter(|r| self.claim(r.claim)) {
                let expected = c.expected.get(r.claim).copied();
                by_claim.entry(r.claim).or_default().push((c.name.clone(), r, expected));
            }
        }
        by_claim
    }
}

/// Runs `needed` scenarios with the chosen card claims, replicates on `--threads` workers (the
/// results do not depend on how many).
///
/// # Errors
/// A bad `--threads`; a scenario's run failing (named).
fn run_all(
    needed: &[&Scenario],
    chosen_cards: &[&CardClaim],
    request: &CheckRequest,
    bound_scale: f64,
    progress: &dyn Progress,
) -> Result<BTreeMap<String, ScenarioRun>> {
    let replicates = (request.estimator == Some(EstimatorChoice::MonteCarlo)).then_some(MONTE_CARLO_REPLICATES);
    progress.start(needed.len(), "dpgp scenarios");
    let mut runs: BTreeMap<String, ScenarioRun> = BTreeMap::new();
    let threads = match request.threads {
        Some(0) | Some(1025..) => return Err(Error::field("--threads", format!("got {:?}", request.threads), "an integer in [1, 1024]")),
        t => t.unwrap_or(0),
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| Error::ThreadPool(e.to_string()))?;
    for s in needed {
        let mut run = pool.install(|| run_scenario_with(s, bound_scale, replicates)).map_err(|e| e.in_scenario(&s.name))?;
        run.results.extend(evaluate_card_claims(chosen_cards, s.rounds, &run, bound_scale));
        runs.insert(s.name.clone(), run);
        progress.step();
    }
    progress.finish();
    Ok(runs)
}

/// The verdict rows in claim order and one JSON file per claim with rows.
///
/// # Errors
/// A claim without a summary; serialization.
fn claim_files(
    ids: &[&'static str],
    by_claim: &BTreeMap<&'static str, Vec<ClaimRow>>,
    claims: &[ClaimSummary],
    meta: &ReportMeta,
) -> Result<(Vec<VerdictRow>, Vec<ReportFile>)> {
    let (mut rows, mut files) = (Vec::new(), Vec::new());
    for id in ids {
        let Some(list) = by_claim.get(id) else { continue };
        for (scenario, r, expected) in list {
            rows.push(VerdictRow {
                family: FAMILY_ID,
                claim: r.claim,
                reading: r.reading,
                scenario: scenario.clone(),
                constants: r.constants,
                label: None,
                evaluation: r.evaluation.clone(),
                expected: *expected,
            });
        }
        let summary =
            summaries().into_iter().chain(claims.iter().cloned()).find(|c| c.id == *id).ok_or_else(|| Error::Internal(format!("claim {id} has no summary")))?;
        let file = ClaimFile {
            meta,
            claim: &summary,
            rows: list
                .iter()
                .map(|(scenario, r, expected)| ClaimFileRow {
                    scenario,
                    constants: r.constants,
                    verdict: r.evaluation.verdict,
                    expected: *expected,
                    detail: describe(&r.evaluation),
                    reproduce: reproduce_command(id, scenario),
                    evaluation: &r.evaluation,
                })
                .collect(),
        };
        files.push(ReportFile { path: PathBuf::from("claims").join(format!("{id}.json")), bytes: to_json(&file)?.into_bytes() });
    }
    Ok((rows, files))
}

/// Connectivity and rate per scenario, for the terminal.
fn terminal(runs: &BTreeMap<String, ScenarioRun>) -> String {
    let mut s = String::from("\nDFedPGP connectivity and rates (C, q estimated from the realised mixing products)\n");
    let _ = writeln!(s, "{:<22} {:<28} {:>4} {:>9} {:>9} {:>9} {:>22}", "scenario", "topology", "B", "delta", "C", "q", "slope (99%)");
    for r in runs.values() {
        let c = &r.connectivity;
        let slope = r.fit.map(|f| format!("{} [{}, {}]", fmt_num(f.slope), fmt_num(f.lower), fmt_num(f.upper))).unwrap_or_else(|| "-".into());
        let b = c.window.map(|b| b.to_string()).unwrap_or_else(|| "none".into());
        let _ = writeln!(s, "{:<22} {:<28} {:>4} {:>9} {:>9} {:>9} {:>22}", r.scenario, r.topology, b, fmt_num(c.delta), fmt_num(c.c), fmt_num(c.q), slope);
    }
    s
}

/// The family's section of SUMMARY.md.
fn markdown(rows: &[VerdictRow], runs: &BTreeMap<String, ScenarioRun>) -> String {
    let mut s = String::from("## DFedPGP (dpgp)\n\n");
    s.push_str("Push-sum DFedPGP (Algorithm 1, 004:L100) on partial-personalization quadratics; every expectation exact (moment propagation over the realised graphs). ");
    s.push_str("Lemma 3's C and q are *estimated* from the realised mixing products; rows using them say `estimated`.\n\n");
    s.push_str("| claim | scenario | constants | verdict | expected | slack | detail |\n|---|---|---|---|---|---|---|\n");
    for r in rows {
        let expected = r.expected.map(|e| e.to_string()).unwrap_or_else(|| "-".into());
        let detail = describe(&r.evaluation).replace('|', "\\|");
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.claim,
            r.scenario,
            r.constants,
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
        let _ = writeln!(s, "| {} | {} | {} | {} | {} | {} | {} | {} |", r.scenario, r.topology, b, fmt_num(c.delta), fmt_num(c.c), fmt_num(c.q), sg, slope);
    }
    s.push('\n');
    s
}
