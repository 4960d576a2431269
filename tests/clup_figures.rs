//! FedCLUP, Figure 2's statement on quadratics (`CLUP-FIG2-K`, 003:L264, L272, L1399): the rounds
//! to an eps-solution do not increase with the local steps `K` at any lambda of the card's sweep;
//! the ordering fails when the rounds grow with `K` or when a tie is not allowed (the negative
//! controls).

use fedbounds::families::clup::check::{run_scenario, Scenario};
use fedbounds::families::clup::claims::ALL;
use fedbounds::families::clup::family::embedded_card;
use fedbounds::families::clup::figures::{evaluate_local_steps, k_curves, k_points, LOCAL_STEPS};
use fedbounds::verdict::VerdictKind;

fn scenario(name: &str) -> Scenario {
    embedded_card().unwrap().card.scenarios.into_iter().find(|s| s.name == name).expect("scenario exists")
}

/// `(lambda, K from, K to, rounds from, rounds to)` of a point's text.
fn parse(point: &str) -> (f64, usize, usize, f64, f64) {
    let (l, rest) = point.strip_prefix("lambda ").unwrap().split_once(": K ").unwrap();
    let (ks, rounds) = rest.split_once(": ").unwrap();
    let (k0, k1) = ks.split_once(" -> ").unwrap();
    let (r0, r1) = rounds.split_once(" rounds vs ").unwrap();
    (l.parse().unwrap(), k0.parse().unwrap(), k1.parse().unwrap(), r0.parse().unwrap(), r1.parse().unwrap())
}

#[test]
fn more_local_steps_never_cost_rounds_on_the_card_sweep() {
    let s = scenario("low-r");
    let claim: Vec<_> = ALL.iter().copied().filter(|c| c.id == "CLUP-FIG2-K").collect();
    let run = run_scenario(&s, &claim, 1.0).unwrap();
    assert_eq!(run.results[0].evaluation.verdict, VerdictKind::Holds);
    let points: Vec<_> = run.points[0].1.iter().map(|p| parse(p)).collect();
    assert_eq!(points.len(), s.lambda_sweep.len() * (LOCAL_STEPS.len() - 1), "pairs within each lambda only");
    // From K = 1 to K = 2 every lambda saves rounds; none is lost at any step.
    for (l, k0, k1, r0, r1) in &points {
        assert!(k0 < k1 && r1 <= r0 && r1.is_finite(), "lambda {l}: K {k0} -> {k1}: {r0} -> {r1}");
        assert!(*k0 != 1 || r1 < r0, "lambda {l}: K = 2 saves rounds");
    }
    // Negative controls: a tie fails a strict reading (the side x 0.9), and rounds that grow with K fail.
    let strict = run_scenario(&s, &claim, 0.9).unwrap();
    assert_eq!(strict.results[0].evaluation.verdict, VerdictKind::Violated);
    // Curves that reach eps = 0 at round r (their last entry) give r rounds.
    let reaching = |rounds: f64| vec![0.0; rounds.ceil() as usize];
    let growing = k_points(&k_curves(&[0.5], |_, k| reaching(k as f64)), 0.0);
    assert_eq!(evaluate_local_steps(&growing, Vec::new(), 1.0).0.verdict, VerdictKind::Violated);
    let falling = k_points(&k_curves(&[0.5, 2.0], |l, k| reaching(l * 100.0 / k as f64)), 0.0);
    assert_eq!(evaluate_local_steps(&falling, Vec::new(), 1.0).0.verdict, VerdictKind::Holds, "pairs never cross lambdas");
    // No sweep: nothing to compare.
    assert_eq!(evaluate_local_steps(&[], Vec::new(), 1.0).0.verdict, VerdictKind::NotApplicable);
}

/// `~every-eps` decides every error level between the start and the scenario's eps: on
/// high-kappa-pole-band's model with low-r's lambda sweep the primary reading holds at eps 1e-8,
/// while at lambda 0.02 K = 32 needs more rounds than K = 16 to an error near 1e-3, which the
/// primary reading cannot see; at eps 1e-3 the primary reading itself fails there. Control: both
/// hold on low-r, and rounds that fall with K at every level hold.
#[test]
fn every_error_level_catches_a_slower_k_that_one_eps_misses() {
    let claims: Vec<_> = ALL.iter().copied().filter(|c| c.id.starts_with("CLUP-FIG2-K")).collect();
    let verdicts = |s: &Scenario| {
        let run = run_scenario(s, &claims, 1.0).unwrap();
        let v = |id: &str| run.results.iter().find(|r| r.claim == id).expect("computed").evaluation.verdict;
        (v("CLUP-FIG2-K"), v("CLUP-FIG2-K~every-eps"))
    };
    assert_eq!(verdicts(&scenario("low-r")), (VerdictKind::Holds, VerdictKind::Holds));
    let mut s = scenario("high-kappa-pole-band");
    s.lambda_sweep = scenario("low-r").lambda_sweep;
    s.epsilon = 1e-8;
    assert_eq!(verdicts(&s), (VerdictKind::Holds, VerdictKind::Violated));
    s.epsilon = 1e-3;
    assert_eq!(verdicts(&s).0, VerdictKind::Violated);
    // Curves that fall faster with K reach every level no later.
    let curves = fedbounds::families::clup::figures::k_curves(&[0.5], |_, k| (0..40).map(|t| 0.9f64.powi((t * k) as i32)).collect());
    let eps = 0.9f64.powi(39);
    assert_eq!(fedbounds::families::clup::figures::evaluate_every_eps(&curves, eps, Vec::new(), 1.0).0.verdict, VerdictKind::Holds);
}
