//! FEDPLT-TRADEOFF (001:L653): the card's sweep of constant steps gives the verdict the card
//! expects, and its negative controls (the pairs reversed, the ball shrunk below the steady
//! states, a step outside `(0, 1/z)`) are violated or not applicable.

use fedbounds::families::fedplt::check::residual_sweep;
use fedbounds::families::fedplt::family::embedded_card;
use fedbounds::families::fedplt::runs::ResidualPoint;
use fedbounds::families::fedplt::tradeoff::{ball, evaluate, section};
use fedbounds::verdict::VerdictKind;

fn card_sweep() -> (Vec<ResidualPoint>, Option<String>) {
    let card = embedded_card().unwrap().card;
    let sweep = card.sections.residual_sweep.expect("the card sweeps the step");
    let scenario = card.scenarios.iter().find(|s| s.name == sweep.scenario).expect("the swept scenario exists");
    (residual_sweep(scenario, &sweep.factors).unwrap(), sweep.expected)
}

fn point(eta: f64, steady: f64, ball: f64, half_life: usize) -> ResidualPoint {
    ResidualPoint {
        eta,
        steady_distance: Some(steady),
        residual_bound: ball,
        z_eta: 0.1 * eta,
        half_life: Some(half_life),
        client_steps: None,
        alignment_failure: None,
    }
}

#[test]
fn the_card_sweep_gives_the_expected_verdict_and_its_controls_fail() {
    let (points, expected) = card_sweep();
    let t = evaluate(&points, 1.0, false);
    assert_eq!(Some(t.verdict.to_string()), expected, "{:?}", t.why);
    assert!(t.balls.iter().all(|b| b.verdict == VerdictKind::Holds));
    assert_eq!(t.faster.verdict, VerdictKind::Holds);
    assert_eq!(t.larger.verdict, VerdictKind::Holds);
    assert!(points.windows(2).all(|w| w[0].half_life <= w[1].half_life), "the sweep runs from the largest step down");
    // Negative control: the pairs reversed (a smaller step contracting faster and settling farther).
    let reversed = evaluate(&points, 1.0, true);
    assert_eq!(reversed.verdict, VerdictKind::Violated);
    assert_eq!(reversed.faster.verdict, VerdictKind::Violated);
    assert_eq!(reversed.larger.verdict, VerdictKind::Violated);
    // Negative control: the ball shrunk below the smallest steady state's share of it.
    let tight = points.iter().filter_map(|p| Some(p.steady_distance? / p.residual_bound)).fold(f64::INFINITY, f64::min);
    assert_eq!(evaluate(&points, tight / 2.0, false).verdict, VerdictKind::Violated);
    let text = section("swept", &points, expected.as_deref());
    assert!(text.contains("FEDPLT-TRADEOFF (001:L653) on `swept`: holds (expected holds)"), "{text}");
}

#[test]
fn synthetic_sweeps_hold_or_name_the_failing_part() {
    let good = [point(0.4, 0.02, 1.0, 5), point(0.2, 0.01, 0.5, 10), point(0.1, 0.005, 0.25, 20)];
    assert_eq!(evaluate(&good, 1.0, false).verdict, VerdictKind::Holds);
    // A steady state outside its ball.
    let outside = [point(0.4, 2.0, 1.0, 5), point(0.2, 0.01, 0.5, 10)];
    let t = evaluate(&outside, 1.0, false);
    assert_eq!(t.verdict, VerdictKind::Violated);
    assert!(t.why.unwrap().contains("eta = 0.4"));
    // A larger step that contracts slower.
    let slower = [point(0.4, 0.02, 1.0, 30), point(0.2, 0.01, 0.5, 10)];
    let t = evaluate(&slower, 1.0, false);
    assert_eq!((t.faster.verdict, t.verdict), (VerdictKind::Violated, VerdictKind::Violated));
    assert!(t.why.unwrap().contains("contracts faster"));
    // A step outside (0, 1/z): not applicable, naming the condition.
    let mut big = point(0.4, 0.02, 1.0, 5);
    big.z_eta = 1.5;
    let b = ball(&big, 1.0);
    assert_eq!(b.verdict, VerdictKind::NotApplicable);
    assert!(b.why.unwrap().contains("eta in (0, 1/z)"));
    assert_eq!(evaluate(&[big, point(0.2, 0.01, 0.5, 10)], 1.0, false).verdict, VerdictKind::NotApplicable);
    // An infinite ball says nothing, and a run along which A6 failed is outside Case 1: neither
    // holds (an infinite bound had held against any steady state).
    let mut vacuous = point(0.4, 0.02, 1.0, 5);
    vacuous.residual_bound = f64::INFINITY;
    let b = ball(&vacuous, 1.0);
    assert!(b.verdict == VerdictKind::NotApplicable && b.why.unwrap().contains("not finite"));
    let mut a6 = point(0.4, 0.02, 1.0, 5);
    a6.alignment_failure = Some((3, 1, 0, f64::NAN));
    let b = ball(&a6, 1.0);
    assert!(b.verdict == VerdictKind::NotApplicable && b.why.unwrap().contains("A6 fails along the run"));
    // A missing half-life never holds.
    let mut unknown = point(0.2, 0.01, 0.5, 10);
    unknown.half_life = None;
    assert_eq!(evaluate(&[point(0.4, 0.02, 1.0, 5), unknown], 1.0, false).faster.verdict, VerdictKind::Inconclusive);
    // One step: no pairs, so the orderings are not applicable.
    assert_eq!(evaluate(&good[..1], 1.0, false).verdict, VerdictKind::NotApplicable);
}

#[test]
fn a_trade_off_verdict_the_card_does_not_expect_fails_the_main_job() {
    use fedbounds::checker::{Plugin, ReportSettings, RunSettings};
    use fedbounds::families::fedplt::family::{parse_card, FedPlt, CARD};
    let report = |card_text: &str| {
        let card = parse_card(card_text, "card").unwrap();
        let meta = fedbounds::report::ReportMeta::default();
        let settings = ReportSettings { full: true, plots: false, meta: &meta, run: RunSettings::default() };
        FedPlt.report(&card, &[], &[], &[], &settings, &fedbounds::family::Silent).unwrap()
    };
    // The card as written: the sweep's verdict is the one it expects.
    let text = CARD.1;
    assert!(report(text).mismatches.is_empty());
    // Negative control: the same card expecting "violated" makes the main job report a mismatch.
    let sweep = text.find("[residual_sweep]").unwrap();
    let at = sweep + text[sweep..].find("expected = \"holds\"").unwrap();
    let wrong = format!("{}expected = \"violated\"{}", &text[..at], &text[at + "expected = \"holds\"".len()..]);
    let found = report(&wrong).mismatches;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("FEDPLT-TRADEOFF") && found[0].contains("holds, the card expects violated"), "{found:?}");
}

/// The trade-off of Case 1 takes one step for every client (001:L639): a sweep whose clients step
/// differently is not applicable, naming the steps, even where its points would hold or be
/// violated. Negative control: the same points with one common step hold.
#[test]
fn a_sweep_with_differing_client_steps_is_not_applicable() {
    let common: Vec<ResidualPoint> = [(0.4, 0.2, 1.0, 5), (0.2, 0.1, 0.5, 10), (0.1, 0.05, 0.25, 20)].map(|(e, s, b, h)| point(e, s, b, h)).to_vec();
    assert_eq!(evaluate(&common, 1.0, false).verdict, VerdictKind::Holds);
    let differ: Vec<ResidualPoint> = common.iter().map(|p| ResidualPoint { client_steps: Some((0.5 * p.eta, 2.0 * p.eta)), ..*p }).collect();
    for reversed in [false, true] {
        let t = evaluate(&differ, 1.0, reversed);
        assert_eq!(t.verdict, VerdictKind::NotApplicable, "{:?}", t.why);
        let why = t.why.unwrap_or_default();
        assert!(why.contains("one step eta for every client") && why.contains("min eta_k = 0.2, max eta_k = 0.8"), "{why}");
    }
}
