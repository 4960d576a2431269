//! FedCLUP, (134) as a checked step of Corollary 2's proof (`CLUP-C2-K134`, 003:L1141-1164):
//! at `K` of (134) every link of the chain (134) => (132) => (131) = (14) holds at Corollary 2's
//! steps, on a dense grid of `lambda/mu` and `kappa` and on random constants; the negative
//! controls: one step below the smallest `K` meeting (14), (14) fails and the chain's compared
//! sides say so; a bound scaled below `K_14/K` turns the scenario's row to violated.

use fedbounds::families::clup::bounds::k_134;
use fedbounds::families::clup::check::{run_scenario, Scenario};
use fedbounds::families::clup::claims::ALL;
use fedbounds::families::clup::family::embedded_card;
use fedbounds::families::clup::k134::{chain, chains, Chain};
use fedbounds::verdict::VerdictKind;
use rand::{Rng, SeedableRng};

fn scenario(name: &str) -> Scenario {
    embedded_card().unwrap().card.scenarios.into_iter().find(|s| s.name == name).expect("scenario exists")
}

/// Every link holds (`lhs <= rhs`, both finite or the left side 0).
fn all_hold(c: &Chain) -> bool {
    c.links().iter().all(|(_, l, r)| l <= r)
}

/// The dense grid: `lambda/mu` in `10^[-4, 6]` and `kappa` in `{1} U 10^[0.05, 5]`, 1/20 decade
/// apart, at `mu = 1` and `mu = 0.3` (the chain depends on `lambda/mu` and `kappa` only, up to
/// rounding).
fn grid() -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for mu in [1.0, 0.3] {
        for ik in 0..=100 {
            let kappa = 10f64.powf(ik as f64 / 20.0);
            for il in -80..=120 {
                out.push((mu, kappa * mu, mu * 10f64.powf(il as f64 / 20.0)));
            }
        }
    }
    out
}

#[test]
fn k_134_implies_every_link_on_a_dense_grid() {
    let mut least = (f64::INFINITY, 0.0, 0.0);
    for (mu, l, lambda) in grid() {
        let c = chain(mu, l, lambda, k_134(mu, l, lambda));
        assert!(all_hold(&c), "mu {mu}, L {l}, lambda {lambda}: {}", c.describe());
        assert_eq!(c.compared().len(), 1, "only K_14 <= K compared where every link holds");
        let ratio = c.k as f64 / c.k_14 as f64;
        if ratio < least.0 {
            least = (ratio, c.kappa, lambda / mu);
        }
    }
    // The least K/K_14 over the grid: (134) asks at least 1.2 times the local steps (14) needs,
    // the least where kappa is large and lambda ~ kappa/6 (1.236 = 220/178 at kappa ~ 8.9e4,
    // lambda ~ 1.4e4 mu; 1.21 at kappa ~ 8.9e5 past the grid).
    assert!(least.0 > 1.0 && least.0 < 1.5, "least K/K_14 {least:?}");
}

#[test]
fn k_134_implies_every_link_on_random_constants() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(134);
    for _ in 0..20_000 {
        let mu = 10f64.powf(rng.gen_range(-3.0..3.0));
        let kappa = if rng.gen_bool(0.1) { 1.0 } else { 10f64.powf(rng.gen_range(0.0..6.0)) };
        let lambda = mu * 10f64.powf(rng.gen_range(-5.0..7.0));
        let c = chain(mu, kappa * mu, lambda, k_134(mu, kappa * mu, lambda));
        assert!(all_hold(&c), "{}", c.describe());
    }
}

#[test]
fn one_step_below_the_smallest_k_of_14_fails_14() {
    let mut checked = 0;
    for (mu, l, lambda) in grid().into_iter().step_by(7) {
        let k14 = chain(mu, l, lambda, 1).k_14;
        let at = chain(mu, l, lambda, k14);
        assert!(at.sides_14.0 <= at.sides_14.1, "(14) holds at K_14: {}", at.describe());
        if k14 < 2 {
            continue;
        }
        let below = chain(mu, l, lambda, k14 - 1);
        assert!(below.sides_14.0 > below.sides_14.1, "(14) fails at K_14 - 1: {}", below.describe());
        // The compared sides carry the failure: K_14 > K and (14)'s own pair.
        let compared = below.compared();
        assert!(compared[0].0 > compared[0].1 && compared.iter().any(|(l, r)| *l == below.sides_14.0 && *r == below.sides_14.1), "{compared:?}");
        checked += 1;
    }
    assert!(checked > 1000, "{checked} points with K_14 >= 2");
}

#[test]
fn the_card_rows_hold_with_slack_k_over_k14_and_fail_scaled_below_it() {
    let claim: Vec<_> = ALL.iter().copied().filter(|c| c.id == "CLUP-C2-K134").collect();
    let s = scenario("low-r");
    let run = run_scenario(&s, &claim, 1.0).unwrap();
    let r = &run.results[0];
    assert_eq!(r.evaluation.verdict, VerdictKind::Holds, "{:?}", r.evaluation.failed);
    let c = run.constants[0];
    let all = chains(c.mu, c.l_sample, s.lambda, k_134(c.mu, c.l_sample, s.lambda), &s.lambda_sweep);
    assert_eq!(run.points[0].1.len(), 1 + s.lambda_sweep.len());
    let least = all.iter().map(|c| c.k as f64 / c.k_14 as f64).fold(f64::INFINITY, f64::min);
    assert!((r.evaluation.slack.unwrap() - least).abs() < 1e-12 && least < 2.0, "slack {:?} vs K/K_14 {least}", r.evaluation.slack);
    // Negative control: the bound (K) scaled below K_14 at the tightest lambda.
    let scaled = run_scenario(&s, &claim, 0.9 / least).unwrap();
    assert_eq!(scaled.results[0].evaluation.verdict, VerdictKind::Violated);
}
