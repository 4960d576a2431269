//! The halves of (32): the u-step (26) (004:L597-603) and the v-step (31) (004:L604-633), checked
//! against `E F(ubar^t, V^{t+1})`, the objective between a round's v-step and its u-step, which the
//! run computes from the local phases in the square-root form `||R (x - x*)||^2 + F*`.
//!
//! - That quantity agrees with the trajectory's own `E F(ubar^t, V^t)` (a different code path, the
//!   state's quadratic form) where one step is frozen: with `eta_u` tiny the u-step does not move
//!   `ubar`, so `E F(ubar^t, V^{t+1})` is `E F(ubar^{t+1}, V^{t+1})`; with `eta_v` tiny it is `E
//!   F(ubar^t, V^t)`.
//! - The halves' right sides add up to (32)'s: (26) + (31) with `E F(ubar^t, V^{t+1})` cancelling.
//! - Negative control: both hold on the card's tightest scenario and both are violated there with
//!   the bounds scaled by 0.98, below their slack.

use fedbounds::families::dpgp::card::{embedded_card, parse_scenario, Card, Scenario};
use fedbounds::families::dpgp::check::{run_scenario, ScenarioRun};
use fedbounds::families::dpgp::claims::{Rec32, Rec32Reading};
use fedbounds::verdict::VerdictKind;

fn card() -> Card {
    embedded_card().expect("the embedded card parses")
}

fn card_scenario(name: &str) -> Scenario {
    card().card.scenarios.into_iter().find(|s| s.name == name).expect("a card scenario")
}

fn row(run: &ScenarioRun, claim: &str) -> (VerdictKind, Option<f64>) {
    let r = run.results.iter().find(|r| r.claim == claim).unwrap_or_else(|| panic!("a row of {claim}"));
    (r.evaluation.verdict, r.evaluation.slack)
}

/// A ring scenario with the given step constants (noise on both blocks).
fn frozen(c_u: f64, c_v: f64) -> Scenario {
    let text = format!(
        "family = \"dpgp\"\nname = \"frozen\"\ntopology = {{ kind = \"ring-hub\" }}\nm = 4\ndu = 2\ndv = 2\nl_u = 2.0\nmu_u = 0.5\nl_v = 2.0\n\
         mu_v = 1.0\nseed = 11\nk_u = 2\nk_v = 2\nc_u = {c_u}\nc_v = {c_v}\nsigma_u = 0.4\nsigma_v = 0.3\nheterogeneity = 1.0\nrounds = 30\n\
         sweep = [10, 20, 30]\n"
    );
    parse_scenario(&text, "test.toml").expect("the scenario parses")
}

/// Largest `|a_t - b_t| / max(|a_t|, |b_t|)` over the rounds.
fn apart(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| ((x - y) / x.abs().max(y.abs())).abs()).fold(0.0, f64::max)
}

#[test]
fn the_mid_objective_is_the_next_one_with_eta_u_frozen_and_the_current_one_with_eta_v_frozen() {
    let mid = |r: &ScenarioRun| r.trajectory.local.iter().map(|l| l.objective_mid).collect::<Vec<f64>>();
    let u_frozen = run_scenario(&frozen(1e-12, 1.0), 1.0).expect("it runs");
    let tr = &u_frozen.trajectory;
    let after_u = apart(&mid(&u_frozen), &tr.objective[1..]);
    let v_frozen = run_scenario(&frozen(0.4, 1e-12), 1.0).expect("it runs");
    let tv = &v_frozen.trajectory;
    let after_v = apart(&mid(&v_frozen), &tv.objective[..tv.objective.len() - 1]);
    eprintln!("u frozen: {after_u:.3e}; v frozen: {after_v:.3e}");
    assert!(after_u < 1e-9 && after_v < 1e-9, "u frozen {after_u:.3e}, v frozen {after_v:.3e}");
    // Negative control: with both steps moving, the mid objective is neither neighbour.
    let both = run_scenario(&frozen(0.4, 1.0), 1.0).expect("it runs");
    let t = &both.trajectory;
    assert!(apart(&mid(&both), &t.objective[1..]) > 1e-4 && apart(&mid(&both), &t.objective[..t.objective.len() - 1]) > 1e-4);
}

#[test]
fn the_halves_add_up_to_inequality_32() {
    let run = run_scenario(&card_scenario("l3-tight"), 1.0).expect("it runs");
    let (k, tr) = (&run.constants, &run.trajectory);
    let sigma = k.sigma_u.powi(2) + k.sigma_g2.value.expect("Assumption 4 holds here");
    for reading in [Rec32Reading::Primary, Rec32Reading::PrintedSv, Rec32Reading::BracketAa] {
        let c = Rec32::new(k, &run.connectivity, &run.params, reading);
        assert!(c.cu26 < 0.0 && c.vu == 0.0, "descent coefficient {}, no coupling here", c.cu26);
        for t in 0..tr.delta_ubar.len() {
            let (d, dv, mid) = (tr.delta_ubar[t], tr.delta_v[t], tr.local[t].objective_mid);
            let u_step = mid + c.u_step(d, sigma);
            let whole = tr.objective[t] + c.cu * d + c.cv * dv + c.sv + c.su * sigma;
            let sum = u_step + (tr.objective[t] + c.v_step(dv, d, sigma)) - mid;
            assert!((sum - whole).abs() <= 1e-12 * whole.abs().max(1.0), "round {t}: (26) + (31) = {sum}, (32) = {whole}");
        }
    }
}

#[test]
fn both_halves_hold_on_l3_tight_and_fail_with_the_bounds_scaled_below_their_slack() {
    let s = card_scenario("l3-tight");
    let run = run_scenario(&s, 1.0).expect("it runs");
    let scaled = run_scenario(&s, 0.98).expect("it runs");
    for claim in ["DPGP-EQ26", "DPGP-EQ26~bracket-aa", "DPGP-EQ31", "DPGP-EQ31~printed-sv"] {
        let (verdict, slack) = row(&run, claim);
        let slack = slack.expect("a slack");
        assert_eq!(verdict, VerdictKind::Holds, "{claim}");
        assert!((1.0..1.0 / 0.98).contains(&slack), "{claim}: slack {slack} is below 1/0.98");
        assert_eq!(row(&scaled, claim).0, VerdictKind::Violated, "negative control: {claim} with the bound times 0.98");
    }
}
