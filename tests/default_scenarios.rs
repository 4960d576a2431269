//! The embedded card's default scenarios: every verdict reproduced, negative controls that show
//! each check can fail, and byte-identical reports whatever the thread count.

use fedbounds::checker::{Plugin, RunOutcome};
use fedbounds::engine::Estimator;
use fedbounds::families::ccyw::card::{embedded_cards, Card, EstimatorChoice, Scenario};
use fedbounds::families::ccyw::card_claims::Catalog;
use fedbounds::families::ccyw::check::{run_scenario, CheckOptions, ScenarioRun, Selection};
use fedbounds::families::ccyw::claims;
use fedbounds::families::ccyw::family::Ccyw;
use fedbounds::families::ccyw::report::{report_files, Extras, ReportMeta};
use fedbounds::family::{Family, FamilyReport};
use fedbounds::outcome::{CheckOutcome, FamilyOutcome};
use fedbounds::verdict::{ConstantsSource, VerdictKind};

fn cards() -> Vec<Card> {
    embedded_cards().expect("embedded cards parse")
}

fn scenarios() -> Vec<Scenario> {
    cards().into_iter().flat_map(|c| c.written.scenarios).collect()
}

/// Every default scenario run with the default options, once for the tests that read them.
fn default_runs() -> &'static [ScenarioRun] {
    static RUNS: std::sync::OnceLock<Vec<ScenarioRun>> = std::sync::OnceLock::new();
    RUNS.get_or_init(|| scenarios().iter().map(|s| run_scenario(s, &Selection::all(), &CheckOptions::default()).expect("scenario runs")).collect())
}

fn run_named(name: &str, opts: &CheckOptions) -> ScenarioRun {
    let all = scenarios();
    let s = all.iter().find(|s| s.name == name).expect("scenario exists");
    run_scenario(s, &Selection::all(), opts).expect("scenario runs")
}

#[test]
fn cards_and_registry_name_the_same_claims() {
    let cards = cards();
    let mut in_card: Vec<&str> = cards.iter().flat_map(|c| c.claims.iter().map(|c| c.id.as_str())).collect();
    let mut in_code = claims::all_ids();
    in_card.sort_unstable();
    in_code.sort_unstable();
    assert_eq!(in_card, in_code);
}

#[test]
fn every_default_scenario_reproduces_its_expected_verdicts() {
    let runs = default_runs();
    let mismatches: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r.results.iter().filter(|c| c.constants.is_exact() && !r.matches_expected(c.claim)).map(move |c| {
                format!(
                    "{} on {}: got {} (empirical {:?}), expected {:?}",
                    c.claim,
                    r.scenario,
                    c.evaluation.verdict,
                    r.result(c.claim, ConstantsSource::Empirical).map(|e| e.evaluation.verdict),
                    c.expected
                )
            })
        })
        .collect();
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    let expectations: usize = scenarios().iter().map(|s| s.expected.len() + s.expected_empirical.len()).sum();
    assert!(expectations >= 25, "the card must pin down the verdicts it claims to check");
}

#[test]
fn default_scenarios_cover_the_required_settings() {
    let all = scenarios();
    let runs = default_runs();
    let has = |f: &dyn Fn(&ScenarioRun) -> bool| runs.iter().any(f);
    assert!(has(&|r| r.params.m < r.layout.n));
    assert!(has(&|r| r.params.m == r.layout.n));
    for k in [1, 5, 25] {
        assert!(has(&|r| r.params.k == k), "K = {k}");
    }
    assert!(has(&|r| r.constants.sigma_u2 == 0.0 && r.constants.sigma_v2 == 0.0));
    assert!(has(&|r| r.constants.sigma_u2 > 0.0));
    assert!(has(&|r| r.constants.bgd.finite().is_some()));
    assert!(has(&|r| r.constants.bgd.finite().is_none()));
    assert!(has(&|r| r.layout.n == 10 && r.params.m == 9 && r.params.k == 25), "paper defaults");
    assert!(all.len() == runs.len());
    let names: std::collections::BTreeSet<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), all.len(), "scenario names are unique across cards");
    assert!(has(&|r| r.algorithm == fedbounds::families::ccyw::algorithm::AlgorithmKind::ScaffoldP && r.params.m == 1), "Scaffold-P edge m = 1");
}

/// A holds verdict a shrunk bound must overturn: its deciding checkpoint has a positive lower
/// limit (a bound on a quantity that is identically zero, such as the drift at K = 1, cannot be
/// undercut by scaling it).
fn controllable(e: &fedbounds::verdict::Evaluation) -> Option<f64> {
    if e.verdict != VerdictKind::Holds {
        return None;
    }
    let p = e.decisive?;
    (p.estimate.lower > 0.0).then(|| p.estimate.lower / p.bound.expect("holds has a bound"))
}

/// Negative control for every claim and lemma that holds: shrinking the bound to half the lower
/// confidence limit at the deciding checkpoint must turn the verdict into "violated".
#[test]
fn shrunk_bounds_are_reported_violated() {
    let base = default_runs();
    let mut controlled = 0;
    for run in base {
        let ratios: Vec<f64> = run.results.iter().map(|c| &c.evaluation).filter_map(controllable).collect();
        if ratios.is_empty() {
            continue;
        }
        let scale = 0.5 * ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let shrunk = run_named(&run.scenario, &CheckOptions { bound_scale: Some(scale), ..Default::default() });
        for (before, after) in run.results.iter().zip(&shrunk.results) {
            assert_eq!((before.claim, before.constants), (after.claim, after.constants));
            let pairs = std::iter::once((&before.evaluation, &after.evaluation));
            for (b, a) in pairs {
                if controllable(b).is_some() {
                    assert_eq!(a.verdict, VerdictKind::Violated, "{} on {} with bound x {scale}", before.claim, run.scenario);
                    let p = a.decisive.expect("violation names its checkpoint");
                    assert!(p.estimate.lower > p.bound.unwrap());
                    controlled += 1;
                }
            }
        }
    }
    assert!(controlled >= 40, "only {controlled} holds verdicts were controlled");
}

#[test]
fn a_step_past_its_condition_is_not_applicable_and_names_the_condition() {
    let run = run_named("past-step-condition", &CheckOptions::default());
    let t37 = run.results.iter().find(|c| c.claim == "CCYW-T3.7").unwrap();
    assert_eq!(t37.evaluation.verdict, VerdictKind::NotApplicable);
    assert_eq!(t37.evaluation.failed.len(), 1, "{:?}", t37.evaluation.failed);
    let msg = &t37.evaluation.failed[0];
    assert!(msg.starts_with("gamma <= 1/(32 L K): given 0.0025 > required 0.00125"), "{msg}");

    let fedsim = run_named("fedsim-partial", &CheckOptions::default());
    let t37 = fedsim.results.iter().find(|c| c.claim == "CCYW-T3.7").unwrap();
    let failed = t37.evaluation.failed.join("; ");
    assert!(failed.contains("eta_u >= sqrt(m): given 1 < required 2.236068"), "{failed}");
    assert!(failed.contains("eta_v >= sqrt(n/m): given 1 < required 1.414214"), "{failed}");
}

#[test]
fn inner_steps_set_separately_can_break_the_standing_condition() {
    use fedbounds::families::ccyw::card::StepSpec;
    let all = scenarios();
    let mut s = all.iter().find(|s| s.name == "paper-default").unwrap().clone();
    s.rounds = 50;
    let opts = CheckOptions::default();
    let reference = run_scenario(&s, &Selection::all(), &opts).unwrap();
    let p = reference.params;
    let verdict = |run: &ScenarioRun| run.results.iter().find(|c| c.claim == "CCYW-T3.7").unwrap().evaluation.clone();
    // The same steps given as gamma_u and gamma_v reproduce the effective-step run exactly.
    s.algorithm.gamma = None;
    s.algorithm.eta_u = StepSpec::Value(p.eta_u);
    s.algorithm.eta_v = StepSpec::Value(p.eta_v);
    s.algorithm.gamma_u = Some(StepSpec::Value(p.gamma_u));
    s.algorithm.gamma_v = Some(StepSpec::Value(p.gamma_v));
    let same = run_scenario(&s, &Selection::all(), &opts).unwrap();
    assert_eq!(verdict(&same).verdict, VerdictKind::Holds);
    assert_eq!(verdict(&same).slack, verdict(&reference).slack);
    // A personal step 20% larger breaks gamma_u eta_u = gamma_v eta_v: the theorem no longer
    // applies, and the report says which condition fails and by how much.
    s.algorithm.gamma_v = Some(StepSpec::Value(1.2 * p.gamma_v));
    let broken = run_scenario(&s, &Selection::all(), &opts).unwrap();
    let e = verdict(&broken);
    assert_eq!(e.verdict, VerdictKind::NotApplicable);
    assert!(e.failed.iter().any(|f| f.starts_with("gamma_v eta_v = gamma_u eta_u")), "{:?}", e.failed);
    // Giving both forms, or neither, is bad input naming the field.
    s.algorithm.gamma = Some(StepSpec::Value(0.001));
    let err = s.check("scenario").unwrap_err().to_string();
    assert!(err.contains("algorithm.gamma") && err.contains("gamma_u and gamma_v"), "{err}");
}

#[test]
fn infinite_bgd_is_said_and_the_empirical_verdict_is_labelled() {
    let run = run_named("coupled-partial-k25", &CheckOptions::default());
    assert!(run.constants.bgd.finite().is_none());
    let t37 = run.result("CCYW-T3.7", ConstantsSource::Exact).unwrap();
    assert_eq!(t37.evaluation.verdict, VerdictKind::NotApplicable);
    assert!(t37.evaluation.failed[0].contains("b^2 is infinite because the u-blocks A_i differ"), "{:?}", t37.evaluation.failed);
    let emp = run.result("CCYW-T3.7", ConstantsSource::Empirical).expect("empirical verdict reported");
    assert_ne!(emp.evaluation.verdict, VerdictKind::NotApplicable);
    assert!(emp.label.as_deref().is_some_and(|l| l.starts_with("empirical b^2 = ")), "{:?}", emp.label);
    assert!(run.empirical_b2 > 0.0 && run.empirical_b2.is_finite());
    // Theorem 3.11 does not need BGD and so carries no empirical evaluation.
    let full = run_named("coupled-full-k5", &CheckOptions::default());
    let t311 = full.result("CCYW-T3.11", ConstantsSource::Exact).unwrap();
    assert_eq!(t311.evaluation.verdict, VerdictKind::Holds);
    assert!(full.result("CCYW-T3.11", ConstantsSource::Empirical).is_none());
}

/// I-CCYW5: without noise, at a start 1e-5 from the optimum of heterogeneous coupled clients, the
/// literal `B^0 = n G_u^0` admits `eta_u = T` and the drift of `u` pushes the average gradient
/// past Theorem 3.11's bound, which shrinks with `F0`; the primary reading's `B^0` (per client)
/// demands `eta_u` in the millions there and is not applicable. Negative control: with noise
/// (coupled-full-b0-literal, a start 0.05 away) the literal reading holds.
#[test]
fn the_literal_b0_reading_of_theorem_3_11_fails_near_the_optimum() {
    let run = run_named("coupled-full-b0-literal-noiseless", &CheckOptions::default());
    let literal = run.result("CCYW-T3.11~b0-literal", ConstantsSource::Exact).unwrap();
    assert_eq!(literal.evaluation.verdict, VerdictKind::Violated, "{:?}", literal.evaluation);
    assert!(literal.evaluation.slack.is_some_and(|s| s < 0.5), "observed at least twice the bound: {:?}", literal.evaluation.slack);
    let primary = run.result("CCYW-T3.11", ConstantsSource::Exact).unwrap();
    assert_eq!(primary.evaluation.verdict, VerdictKind::NotApplicable);
    assert!(primary.evaluation.failed.iter().any(|f| f.starts_with("eta_u >= max(T, sqrt(B^0 T/(n L F0)), sqrt(n))")), "{:?}", primary.evaluation.failed);
    let noisy = run_named("coupled-full-b0-literal", &CheckOptions::default());
    assert_eq!(noisy.result("CCYW-T3.11~b0-literal", ConstantsSource::Exact).unwrap().evaluation.verdict, VerdictKind::Holds);
}

/// Lemma 4.4 with one of 150 clients sampled: the memory term carries the right side and the
/// slack falls below 2; with one of 10 (scaffold-one-client) it is 11.
#[test]
fn lemma_4_4_is_tight_when_few_of_many_clients_are_sampled() {
    let slack = |name: &str| run_named(name, &CheckOptions::default()).result("CCYW-L4.4", ConstantsSource::Exact).unwrap().evaluation.slack.expect("a slack");
    let many = slack("scaffold-many-clients-one-sampled");
    assert!(many < 2.0 && many > 1.0, "{many}");
    let few = slack("scaffold-one-client");
    assert!(few > 5.0, "{few}");
}

/// A lemma speaks of every round, and is checked at every round of the run: on
/// deterministic-full-k25 (T = 400) Lemma 3.6's full-participation part is tightest at its last
/// round, past the 300 rounds lemmas had been cut at (slack 13.1 over those, 7.22 over all).
#[test]
fn lemmas_are_checked_at_every_round_of_the_run() {
    let run = run_named("deterministic-full-k25", &CheckOptions::default());
    let e = &run.result("CCYW-L3.6-FULL", ConstantsSource::Exact).unwrap().evaluation;
    let decisive = e.decisive.as_ref().expect("a decisive round").rounds;
    let slack = e.slack.expect("a slack");
    assert!(decisive > 300 && slack < 8.0, "decisive round {decisive}, slack {slack}");
    assert_eq!(e.verdict, VerdictKind::Holds);
}

/// The report files of `runs` as the command line writes them (through the shared summary).
fn report_bytes(runs: &[ScenarioRun]) -> Vec<(String, Vec<u8>)> {
    report_bytes_with(runs, Extras::default(), "test")
}

#[test]
fn reports_are_byte_identical_across_runs_and_thread_counts() {
    let names = ["paper-default", "noiseless-partial-k1", "coupled-full-k5"];
    let at = |threads| -> Vec<ScenarioRun> { names.iter().map(|n| run_named(n, &CheckOptions { threads: Some(threads), ..Default::default() })).collect() };
    let one = report_bytes(&at(1));
    let again = report_bytes(&at(1));
    let two = report_bytes(&at(2));
    let three = report_bytes(&at(3));
    assert!(one.len() >= 10);
    assert_eq!(one, again, "same seed, same bytes");
    assert_eq!(one, two, "1 vs 2 threads");
    assert_eq!(one, three, "1 vs 3 threads");
}

#[test]
fn the_seed_moves_monte_carlo_estimates_but_not_exact_ones() {
    let mut all = scenarios();
    let s = all.iter_mut().find(|s| s.name == "paper-default").unwrap();
    s.rounds = 100;
    let mc = CheckOptions { estimator: Some(EstimatorChoice::MonteCarlo), ..Default::default() };
    let exact = CheckOptions::default();
    let est = |r: &ScenarioRun| r.results[0].evaluation.series.last().unwrap().estimate.mean;
    let (mc_a, ex_a) = (run_scenario(s, &Selection::all(), &mc).unwrap(), run_scenario(s, &Selection::all(), &exact).unwrap());
    s.seed += 1;
    let (mc_b, ex_b) = (run_scenario(s, &Selection::all(), &mc).unwrap(), run_scenario(s, &Selection::all(), &exact).unwrap());
    assert_ne!(est(&mc_a), est(&mc_b), "the seed must reach the random streams");
    assert_eq!(est(&ex_a), est(&ex_b), "an expectation does not depend on the seed");
    assert_eq!(ex_a.estimator, Estimator::Exact);
    assert_eq!(mc_a.estimator, Estimator::MonteCarlo);
}

/// Snapshot: the committed `reports/` are exactly what the main command produces now, through
/// the same registry and check driver as the command line. Regenerate them with
/// `cargo run --release -- check` after an intended change.
#[test]
fn committed_reports_match_a_fresh_run() {
    let fresh = crate::main_job::sorted_bytes(crate::main_job::outcome().files(&crate::main_job::request().meta));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports");
    let mut stale = Vec::new();
    for (rel, bytes) in &fresh {
        match std::fs::read(root.join(rel)) {
            Ok(committed) if &committed == bytes => {}
            Ok(_) => stale.push(format!("{rel} differs")),
            Err(_) => stale.push(format!("{rel} missing")),
        }
    }
    assert!(fresh.len() > 50, "the main job writes every report ({} files)", fresh.len());
    assert!(stale.is_empty(), "reports/ is stale; rerun `cargo run --release -- check`: {stale:#?}");
}

fn report_bytes_with(runs: &[ScenarioRun], extras: Extras<'_>, command: &str) -> Vec<(String, Vec<u8>)> {
    let meta = ReportMeta::new(command);
    let (files, summary_markdown) = report_files(runs, &Catalog::default(), extras, &meta, true).unwrap();
    let family = FamilyReport { rows: fedbounds::checker::rows(&Ccyw, &Ccyw.builtin_claims(), runs), summary_markdown, files, ..Default::default() };
    let ccyw = &fedbounds::families::ccyw::FAMILY;
    let outcome = CheckOutcome { families: vec![FamilyOutcome { id: ccyw.id(), title: ccyw.title(), claims: ccyw.claims(), report: family }] };
    crate::main_job::sorted_bytes(outcome.files(&meta))
}
