//! FedCLUP, Theorem 3's ball against `m` and `B` as rate exponents (`CLUP-T3-BALL-M-SLOPE`,
//! `CLUP-T3-BALL-B-SLOPE`, 003:L194, L1251, L1320): the card's scenario computes slopes at most
//! -1 with their intervals; a steeper claimed exponent, the ball read as `1/(B m)^2`, is violated
//! on the same sweeps (the negative control); repeating clients keeps the solution and halves
//! the floor; the sweep over `m` runs only on scenarios with two clients.

use fedbounds::families::clup::ball_scaling::{batch_sweep, clients_sweep, evaluate, noise_floor, replicated, EXPONENT};
use fedbounds::families::clup::check::{run_scenario, Scenario};
use fedbounds::families::clup::claims::ALL;
use fedbounds::families::clup::family::embedded_card;
use fedbounds::verdict::VerdictKind;

fn scenario(name: &str) -> Scenario {
    embedded_card().unwrap().card.scenarios.into_iter().find(|s| s.name == name).expect("scenario exists")
}

const IDS: [&str; 2] = ["CLUP-T3-BALL-M-SLOPE", "CLUP-T3-BALL-B-SLOPE"];

#[test]
fn the_card_scenario_computes_slopes_at_most_minus_one_and_a_squared_ball_fails() {
    let s = scenario("ball-scaling");
    let claims: Vec<_> = ALL.iter().copied().filter(|c| IDS.contains(&c.id)).collect();
    assert_eq!(claims.len(), 2);
    let run = run_scenario(&s, &claims, 1.0).unwrap();
    for r in &run.results {
        assert_eq!(r.evaluation.verdict, VerdictKind::Holds, "{}", r.claim);
        let fit = r.evaluation.decisive.unwrap().estimate;
        // The decisive point is 2^slope with its interval: the upper end at most 2^-1.
        assert!(fit.upper <= 0.5 && fit.lower <= fit.mean && fit.mean <= fit.upper, "{}: {fit:?}", r.claim);
    }
    let inst = s.model.instance(0).unwrap();
    let p = s.params(&inst.constants, s.lambda);
    let b = s.batch.unwrap();
    let over_m = clients_sweep(&inst, &p, b, s.rounds).expect("two clients: the sweep over m runs");
    let over_b = batch_sweep(&inst, &p, s.rounds);
    let (fm, fb) = (over_m.fit.unwrap(), over_b.fit.unwrap());
    // Over m the floor is 1/m up to the multiplicative part of the sampling noise (its local
    // deviations), which steepens it slightly; over B sampling without replacement steepens it.
    assert!(fm.upper <= -1.0 && fm.slope > -1.01, "slope over m {fm:?}");
    assert!(fb.upper <= -1.0 && fb.slope < -1.1, "slope over B {fb:?}");
    for sw in [&over_m, &over_b] {
        assert_eq!(evaluate(sw, EXPONENT, Vec::new(), 1.0).0.verdict, VerdictKind::Holds, "{:?}", sw.axis);
        // Negative control: the ball read as 1/(B m)^2, an exponent steeper than the floor's.
        let (e, points) = evaluate(sw, 2.0 * EXPONENT, Vec::new(), 1.0);
        assert_eq!(e.verdict, VerdictKind::Violated, "{:?} against exponent -2: {points:?}", sw.axis);
    }
}

#[test]
fn repeated_clients_keep_the_solution_and_divide_the_floor() {
    let s = scenario("ball-scaling");
    let inst = s.model.instance(0).unwrap();
    let p = s.params(&inst.constants, s.lambda);
    let twice = replicated(&inst, 2);
    assert_eq!(twice.m(), 2 * inst.m());
    let (a, b) = (inst.solve(s.lambda).global, twice.solve(s.lambda).global);
    assert!((a - b).norm() <= 1e-12, "the global solution is the same");
    let (f1, f2) = (noise_floor(&inst, &p, 2, s.rounds), noise_floor(&twice, &p, 2, s.rounds));
    assert!(f1 > 0.0 && (f2 / f1 - 0.5).abs() < 0.01, "floor {f1} -> {f2}");
    // Negative control: the same instance without copies keeps its floor.
    assert!((noise_floor(&replicated(&inst, 1), &p, 2, s.rounds) - f1).abs() <= 1e-12 * f1);
    // The sweep over m is not run where 8 m exceeds 16 clients (low-r has six).
    let low = scenario("low-r");
    let li = low.model.instance(0).unwrap();
    assert!(clients_sweep(&li, &low.params(&li.constants, low.lambda), 3, 2).is_none());
}
