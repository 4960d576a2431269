//! Each step condition of FedCLUP decides a verdict on some scenario: just past it the claim is
//! not applicable with that condition named (and no other), just inside it is checked and holds.
//! Relative steps of 1e-6 around each threshold (past the identity tolerance 1e-9 with which a
//! step set at its boundary by a formula counts as admissible), from the draw's constants:
//!
//! - `gamma < 1/L_g` (Theorem 2, 003:L176) with K = 60 local steps at lambda = 10, where
//!   (1 - eta mu_l)^K ~ 1e-68 keeps (14) met even with (1 - gamma L_g)^4 ~ 1e-24; and Lemma 6's
//!   `gamma <= 1/L_g` (003:L964) on the same run;
//! - `eta <= 1/L_l` (Lemma 5, 003:L955): CLUP-L5 with one local step;
//! - (14) (003:L178): CLUP-T2 at Corollary 2's steps with `K` the smallest meeting (14) and one less;
//! - (134) (003:L1164) is Corollary 2's choice of `K`, not a condition CLUP-C2's check applies:
//!   the corollary's proof needs (14), which (134) implies; with `K` one below (134), (14) still
//!   holds here and CLUP-C2 is checked (holds); one below the smallest `K` meeting (14) it is not
//!   applicable, (14) named;
//! - (134) is the hypothesis of CLUP-C2-K134, the implication (134) => (132) => (131) = (14): at
//!   (134)'s `K` it is checked (holds), one below it not applicable with (134) named (and no
//!   other).

use fedbounds::families::clup::bounds::k_134;
use fedbounds::families::clup::check::{run_scenario, Corollary2Multiples, Scenario};
use fedbounds::families::clup::claims::ALL;
use fedbounds::families::clup::family::embedded_card;
use fedbounds::families::clup::model::Constants;
use fedbounds::verdict::VerdictKind;

const PAST: f64 = 1.0 + 1e-6;
const INSIDE: f64 = 1.0 - 1e-6;

fn scenario(name: &str, rounds: usize) -> Scenario {
    let card = embedded_card().expect("the embedded card");
    let mut s = card.card.scenarios.into_iter().find(|s| s.name == name).expect("the scenario");
    s.rounds = rounds;
    s
}

/// Draw 0's constants.
fn constants(s: &Scenario) -> Constants {
    run_scenario(s, &[], 1.0).expect("the scenario runs").constants[0]
}

/// The claim's verdict and the failed conditions.
fn verdict(id: &str, s: &Scenario) -> (VerdictKind, Vec<String>) {
    let claim = ALL.iter().find(|c| c.id == id).expect("a built-in claim");
    let run = run_scenario(s, &[*claim], 1.0).expect("the scenario runs");
    let r = run.results.iter().find(|r| r.claim == id).expect("compared");
    (r.evaluation.verdict, r.evaluation.failed.clone())
}

/// Not applicable with exactly one failed condition, containing `name`.
fn fails_only(id: &str, s: &Scenario, name: &str) {
    let (v, failed) = verdict(id, s);
    assert_eq!(v, VerdictKind::NotApplicable, "{id}: {failed:?}");
    assert_eq!(failed.len(), 1, "{id}: only `{name}` fails: {failed:?}");
    assert!(failed[0].contains(name), "{id}: `{name}` named: {failed:?}");
}

fn holds(id: &str, s: &Scenario) {
    let (v, failed) = verdict(id, s);
    assert_eq!(v, VerdictKind::Holds, "{id}: {failed:?}");
}

#[test]
fn gamma_decides_theorem2_and_lemma6() {
    let mut s = scenario("low-r-lambda-large", 40);
    s.steps.k = Some(60);
    let c = constants(&s);
    let inv_lg = (s.lambda + c.l_sample) / (s.lambda * c.l_sample);
    s.steps.gamma = Some(inv_lg * PAST);
    fails_only("CLUP-T2", &s, "gamma < 1/L_g");
    fails_only("CLUP-L6", &s, "gamma <= 1/L_g");
    s.steps.gamma = Some(inv_lg * INSIDE);
    holds("CLUP-T2", &s);
    holds("CLUP-L6", &s);
}

#[test]
fn eta_decides_lemma5() {
    let mut s = scenario("one-local-step", 20);
    let c = constants(&s);
    let inv_ll = 1.0 / (c.l_sample + s.lambda);
    s.steps.eta = Some(inv_ll * PAST);
    fails_only("CLUP-L5", &s, "eta <= 1/L_l");
    s.steps.eta = Some(inv_ll * INSIDE);
    holds("CLUP-L5", &s);
}

#[test]
fn condition_14_decides_theorem2_at_the_smallest_k() {
    let s = scenario("low-r-lambda-large", 40);
    let run = run_scenario(&s, &[], 1.0).expect("runs");
    let k14 = run.k_study.expect("the K study").k_14.expect("some K meets (14)");
    assert!(k14 > 1);
    let mut at = s.clone();
    at.steps.k = Some(k14);
    holds("CLUP-T2", &at);
    at.steps.k = Some(k14 - 1);
    fails_only("CLUP-T2", &at, "(14)");
}

#[test]
fn below_134_corollary2_is_checked_and_below_14_it_is_not_applicable() {
    let mut s = scenario("low-r-lambda-large", 40);
    let c = constants(&s);
    let k = k_134(c.mu, c.l_sample, s.lambda);
    let k14 = run_scenario(&s, &[], 1.0).expect("runs").k_study.expect("the K study").k_14.expect("some K meets (14)");
    assert!(k14 + 1 < k, "(134) asks more than (14): {k} against {k14}");
    holds("CLUP-C2", &s);
    // ceil(K/divisor) = K - 1: below (134), (14) still met.
    let below = |target: usize| Some(Corollary2Multiples { gamma: 1.0, eta: 1.0, k_divisor: k as f64 / target as f64 * (1.0 + 1e-12) });
    s.corollary2_multiples = below(k - 1);
    holds("CLUP-C2", &s);
    s.corollary2_multiples = below(k14);
    holds("CLUP-C2", &s);
    s.corollary2_multiples = below(k14 - 1);
    fails_only("CLUP-C2", &s, "(14)");
}

#[test]
fn condition_134_decides_the_implication() {
    let mut s = scenario("low-r-lambda-large", 40);
    let c = constants(&s);
    let k = k_134(c.mu, c.l_sample, s.lambda);
    holds("CLUP-C2-K134", &s);
    // ceil(K/divisor) = K - 1.
    s.corollary2_multiples = Some(Corollary2Multiples { gamma: 1.0, eta: 1.0, k_divisor: k as f64 / (k - 1) as f64 * (1.0 + 1e-12) });
    fails_only("CLUP-C2-K134", &s, "(134)");
}
