//! FedPLT's per-round proof steps: the variance of the masked update (FEDPLT-VAR-L276, 001:L276),
//! the local divergence (FEDPLT-DIV-L592, 001:L592, and its printed reading with the global
//! gradient) and the psi step (001:L404-408), on the card's scenarios and in the search.
//!
//! Positive controls: the closed forms on scenarios where they are known by hand, the worst ratio
//! of the search and its replay. Negative controls: each bound scaled by 1/2 on its tight
//! scenario (slack 1) and in the search is violated, by the factor 2.

use fedbounds::checker::Plugin;
use fedbounds::families::fedplt::check::run_scenario;
use fedbounds::families::fedplt::claims::FedPltClaim;
use fedbounds::families::fedplt::family::embedded_card;
use fedbounds::families::fedplt::formulas::Claim;
use fedbounds::families::fedplt::{FedPlt, FAMILY};
use fedbounds::family::{CardText, CheckRequest, Family, FamilyReport, SearchRequest, Silent, VerdictRow};
use fedbounds::registry::Registry;
use fedbounds::search::line::SearchLine;
use fedbounds::verdict::{ConstantsSource, VerdictKind};

const VAR: &str = "FEDPLT-VAR-L276";
const DIV: &str = "FEDPLT-DIV-L592";
const DIV_GLOBAL: &str = "FEDPLT-DIV-L592~global-gradient";
const PSI: &str = "FEDPLT-PSI-STEP~updated-coordinates";

/// The claim's row of constants `source` on a card scenario (or on `card`), every bound times
/// `bound_scale`.
fn row(claim: &str, scenario: Option<&str>, card: Option<String>, source: ConstantsSource, bound_scale: f64) -> VerdictRow {
    let registry = Registry::new(vec![&FAMILY]).unwrap();
    let request = CheckRequest {
        claims: vec![claim.into()],
        scenarios: scenario.map(|s| vec![s.to_string()]).unwrap_or_default(),
        card: card.map(|text| CardText { what: "replay".into(), text }),
        bound_scale: Some(bound_scale),
        ..Default::default()
    };
    let outcome = registry.check(&request, &Silent).unwrap();
    let found = outcome.rows().find(|r| r.claim == claim && r.constants == source).expect("the claim's row").clone();
    found
}

fn search(claim: &str, budget: usize, bound_scale: f64) -> FamilyReport {
    let request = SearchRequest {
        claims: vec![claim.into()],
        budget,
        room_budget: 0,
        seed: 3,
        bound_scale,
        plots: false,
        meta: Default::default(),
        card: None,
        out: None,
    };
    FAMILY.search(&request, &Silent).unwrap().expect("FedPLT has a search space")
}

fn line<'a>(report: &'a FamilyReport, claim: &str, source: ConstantsSource) -> &'a SearchLine {
    report.searches.iter().find(|l| l.claim == claim && l.constants == source).expect("a search line")
}

/// The replay card of the line's worst instance.
fn replay(report: &FamilyReport, l: &SearchLine) -> String {
    let card = report.files.iter().find(|f| f.path.to_string_lossy() == l.replay).expect("a replay card");
    String::from_utf8(card.bytes.clone()).unwrap()
}

/// `observed / bound` of a row: `1 / slack`, infinite for a violation with a slack at most 0.
fn ratio(r: &VerdictRow) -> f64 {
    match r.evaluation.slack {
        Some(s) if s > 0.0 => 1.0 / s,
        _ => f64::INFINITY,
    }
}

#[test]
fn the_update_variance_is_sigma2_sum_c2_on_full_masks_and_tight_there() {
    // Full masks, four equal clients, psi = 1, eta = 0.5, sigma = 0.3: both sides are
    // eta^2 sigma^2 sum_k c_k^2 = 0.25 * 0.09 / 4 in every round (A4 holds with equality).
    let r = row(VAR, Some("full-masks-shared-optimum"), None, ConstantsSource::Exact, 1.0);
    assert_eq!(r.evaluation.verdict, VerdictKind::Holds);
    let d = r.evaluation.decisive.expect("a decisive round");
    assert!((d.estimate.mean - 0.25 * 0.09 / 4.0).abs() < 1e-15, "{d:?}");
    assert!((r.evaluation.slack.unwrap() - 1.0).abs() < 1e-12);
    // Negative control: half the bound is violated there, by the factor 2.
    let half = row(VAR, Some("full-masks-shared-optimum"), None, ConstantsSource::Exact, 0.5);
    assert_eq!(half.evaluation.verdict, VerdictKind::Violated);
    assert!((ratio(&half) - 2.0).abs() < 1e-12, "{}", ratio(&half));
    // Partial masks leave room: two of three layers per client, psi = 3/2, ratio (1/d) sum_i
    // psi_i^2 sum_k c_k^2 m_ki / (psibar^2 sum_k c_k^2) = 2/3 (the card's slack 1.5).
    let layers = row(VAR, Some("balanced-layers-shared-optimum"), None, ConstantsSource::Exact, 1.0);
    assert!((layers.evaluation.slack.unwrap() - 1.5).abs() < 1e-12);
    // Out of scope for tau > 1 (the proof's one-gradient model, I-PLT8).
    let tau5 = row(VAR, Some("full-masks-tau-5"), None, ConstantsSource::Exact, 1.0);
    assert_eq!(tau5.evaluation.verdict, VerdictKind::NotApplicable);
}

#[test]
fn the_local_divergence_is_exact_and_attained_on_one_client() {
    // One client, d = 1, H = 1, a shared optimum, tau = 1: W_k^{t,1} - W^t = -eta^t (W^t - W* + sigma xi),
    // so the divergence is (eta^t)^2 (D^t + sigma^2) exactly.
    let card = embedded_card().unwrap().card;
    let s = card.scenarios.iter().find(|s| s.name == "decaying-one-dimensional").unwrap();
    let run = run_scenario(s, &[Claim::Builtin(FedPltClaim::LocalDivergence { global_gradient: false })], 1.0).unwrap();
    for t in [0usize, 1, 7, 500, s.rounds - 1] {
        let eta = run.schedule.eta(t);
        let want = eta * eta * (run.distance[t] + 0.25);
        assert!((run.steps.divergence[t] - want).abs() <= 1e-12 * want, "t = {t}: {} vs {want}", run.steps.divergence[t]);
    }
    // As stated, A5 cannot hold on R^d; with G^2 measured on the run the bound is attained where
    // E||grad F(W^t)||^2 is largest (slack 1), and half of it is violated there.
    let stated = row(DIV, Some("decaying-one-dimensional"), None, ConstantsSource::Exact, 1.0);
    assert_eq!(stated.evaluation.verdict, VerdictKind::NotApplicable);
    let measured = row(DIV, Some("decaying-one-dimensional"), None, ConstantsSource::Empirical, 1.0);
    assert_eq!(measured.evaluation.verdict, VerdictKind::Holds);
    assert!((measured.evaluation.slack.unwrap() - 1.0).abs() < 1e-12);
    let half = row(DIV, Some("decaying-one-dimensional"), None, ConstantsSource::Empirical, 0.5);
    assert_eq!(half.evaluation.verdict, VerdictKind::Violated);
    assert!((ratio(&half) - 2.0).abs() < 1e-9, "{}", ratio(&half));
}

#[test]
fn the_global_gradient_does_not_bound_the_local_divergence() {
    // Full masks with a shared optimum but different (rotated) Hessians: ||sum_k c_k H_k x||^2 <
    // sum_k c_k ||H_k x||^2, so G^2 of the global gradient falls short of the local gradients.
    let printed = row(DIV_GLOBAL, Some("full-masks-shared-optimum"), None, ConstantsSource::Empirical, 1.0);
    assert_eq!(printed.evaluation.verdict, VerdictKind::Violated);
    assert!(printed.label.as_deref().is_some_and(|l| l.starts_with("empirical G^2")), "{:?}", printed.label);
    // Control: the proof's reading (local gradients) holds on the same run.
    let proof = row(DIV, Some("full-masks-shared-optimum"), None, ConstantsSource::Empirical, 1.0);
    assert_eq!(proof.evaluation.verdict, VerdictKind::Holds);
    // One client: the global gradient is the local one, and both readings agree.
    let one = |c| row(c, Some("decaying-one-dimensional"), None, ConstantsSource::Empirical, 1.0).evaluation.slack;
    assert_eq!(one(DIV_GLOBAL), one(DIV));
}

#[test]
fn the_searches_of_the_proof_steps_find_their_worst_ratios_and_replay_them() {
    for (claim, source) in [(VAR, ConstantsSource::Exact), (DIV, ConstantsSource::Empirical)] {
        let report = search(claim, 10, 1.0);
        let l = line(&report, claim, source);
        assert_eq!(l.verdict, VerdictKind::Holds, "{l:?}");
        assert!(l.condition.is_empty(), "no step condition: {l:?}");
        let worst = l.worst_ratio.expect("a worst ratio");
        assert!(worst > 0.5 && worst <= 1.0 + 1e-12, "{claim}: {worst}");
        let replayed = row(claim, None, Some(replay(&report, l)), source, 1.0);
        assert_eq!((replayed.evaluation.verdict, replayed.expected), (VerdictKind::Holds, Some(VerdictKind::Holds)));
        assert!((ratio(&replayed) - worst).abs() <= 1e-12 * worst, "{claim}: replayed {} vs searched {worst}", ratio(&replayed));
        // Negative control: half the bound is violated, by twice the worst ratio.
        let scaled = search(claim, 10, 0.5);
        let s = line(&scaled, claim, source);
        assert_eq!(s.verdict, VerdictKind::Violated, "{s:?}");
        assert!((s.worst_ratio.unwrap() - 2.0 * worst).abs() <= 1e-9, "{claim}: {s:?}");
        assert!(!scaled.mismatches.is_empty(), "a counterexample is a finding");
    }
    // The exact rows of the divergence need A5 on R^d: no candidate applies.
    let report = search(DIV, 4, 1.0);
    assert_eq!(line(&report, DIV, ConstantsSource::Exact).verdict, VerdictKind::NotApplicable);
}

#[test]
fn the_search_finds_the_psi_step_and_the_printed_divergence_violated_as_the_card_expects() {
    for (claim, source) in [(PSI, ConstantsSource::Exact), ("FEDPLT-PSI-STEP", ConstantsSource::Exact), (DIV_GLOBAL, ConstantsSource::Empirical)] {
        let report = search(claim, 12, 1.0);
        let l = line(&report, claim, source);
        assert_eq!(l.verdict, VerdictKind::Violated, "{l:?}");
        assert!(report.mismatches.is_empty(), "the card expects the violation: {:?}", report.mismatches);
        let worst = l.worst_ratio.unwrap();
        assert!(worst > 1.0, "{claim}: {worst}");
        let replayed = row(claim, None, Some(replay(&report, l)), source, 1.0);
        assert_eq!((replayed.evaluation.verdict, replayed.expected), (VerdictKind::Violated, Some(VerdictKind::Violated)));
        let r = ratio(&replayed);
        assert!(r == worst || (r - worst).abs() <= 1e-12 * worst, "{claim}: replayed {r} vs searched {worst}");
    }
    // Positive and negative control of the psi step on a scenario where it holds with equality
    // (full masks, psi = 1 on every coordinate: A = B): slack 1, and psi_ raised by 2 fails by 2.
    let holds = row(PSI, Some("full-masks-shared-optimum"), None, ConstantsSource::Exact, 1.0);
    assert_eq!(holds.evaluation.verdict, VerdictKind::Holds);
    assert!((holds.evaluation.slack.unwrap() - 1.0).abs() < 1e-12);
    let half = row(PSI, Some("full-masks-shared-optimum"), None, ConstantsSource::Exact, 0.5);
    assert_eq!(half.evaluation.verdict, VerdictKind::Violated);
    assert!((ratio(&half) - 2.0).abs() < 1e-9, "{}", ratio(&half));
}

#[test]
fn the_proof_steps_are_searched_with_no_step_condition() {
    use fedbounds::search::SearchSpace;
    let space = fedbounds::families::fedplt::search::Space;
    for c in [
        FedPltClaim::PsiStep { updated_only: false },
        FedPltClaim::PsiStep { updated_only: true },
        FedPltClaim::UpdateVariance,
        FedPltClaim::LocalDivergence { global_gradient: false },
        FedPltClaim::LocalDivergence { global_gradient: true },
    ] {
        let claim = Claim::Builtin(c);
        assert!(space.covers(&claim) && space.not_searched(&claim).is_none());
        assert!(space.step_conditions(&claim).is_empty());
        let sources = space.sources(&claim);
        assert_eq!(sources.contains(&ConstantsSource::Empirical), c.needs_g2(), "{sources:?}");
    }
    assert!(FedPlt.searcher().is_some());
}
