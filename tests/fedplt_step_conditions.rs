//! Each step condition of FedPLT decides on a scenario just past it and just inside it.
//!
//! Stated conditions bind: Case 1's `eta in (0, 1/z)` (001:L639) and the repair's `beta > 1`
//! (FEDPLT-DECAY~corrected). Just past one, the row is not applicable and names it as the only
//! failed condition; just inside, the row is checked. The conditions the derivation uses but no
//! result states, (a) `eta < 1/L`, (b) `gamma_k > 0`, (c) `gamma_k / (2 eta) < 1` and (d)
//! `z eta < 1` (001:L504-510), are reported, never binding (I-PLT6, the card's encoding): just
//! past one, the row is still checked and its notes name the condition; just inside, they do not.
//!
//! Every scenario has one client with a full mask, so `psi_ = psibar = rho_ = alpha = 1` and
//! `z = mu`: (a) reads `eta < 1/L`, (b) `eta < 1/(2L)`, (d) `eta < 1/mu`, and (c) reads
//! `1 - 2 eta L < 1`, true for every `eta > 0`, so (c) has no "past" here (it fails only where
//! `psi_ rho_ > 1 + 2 eta psibar^2 alpha^2 L`); the test shows it met on both sides of the others.

use fedbounds::families::fedplt::{CARD, FAMILY};
use fedbounds::family::{CardText, CheckRequest, Silent, VerdictRow};
use fedbounds::registry::Registry;
use fedbounds::verdict::{ConstantsSource, VerdictKind};

/// A scenario on one client, two coordinates, L = 1, with the step given as TOML.
fn scenario(name: &str, mu: f64, step: &str) -> String {
    format!(
        "[[scenarios]]\nname = \"{name}\"\nrounds = 40\nreplicates = 2\nseed = 3\ntau = 1\nstep = {step}\n\
         instance = {{ clients = 1, dim = 2, l = 1.0, mu = {mu:?}, sigma = 0.3, heterogeneity = 0.0, init_distance = 3.0, rotated = false, masks = {{ kind = \"full\" }}, seed = 3 }}\n"
    )
}

/// The embedded card's claims with these scenarios in place of its own (and no sweep, which
/// names one of them).
fn card(scenarios: &[String]) -> String {
    let mut card: toml::Table = toml::from_str(CARD.1).expect("the FedPLT card parses");
    card.remove("scenarios");
    card.remove("residual_sweep");
    format!("{}\n{}", toml::to_string(&card).expect("the card serialises"), scenarios.join("\n"))
}

/// The empirical row of `claim` on each scenario, in order (the claims read G^2, so the exact
/// rows are not applicable through A5 whatever the step).
fn rows(claim: &str, scenarios: &[(&str, f64, &str)]) -> Vec<VerdictRow> {
    let text = card(&scenarios.iter().map(|(n, mu, step)| scenario(n, *mu, step)).collect::<Vec<_>>());
    let registry = Registry::new(vec![&FAMILY]).unwrap();
    let request = CheckRequest { claims: vec![claim.into()], card: Some(CardText { what: "step conditions".into(), text }), ..Default::default() };
    let outcome = registry.check(&request, &Silent).expect("the scenarios are checked");
    scenarios
        .iter()
        .map(|(n, ..)| outcome.rows().find(|r| r.claim == claim && r.scenario == *n && r.constants == ConstantsSource::Empirical).expect("a row").clone())
        .collect()
}

fn constant(f: f64) -> String {
    format!("{{ constant_over_l = {f:?} }}")
}

/// A stated condition: just past it, not applicable with it the only failed condition; just
/// inside, checked with nothing failed.
fn assert_binding(claim: &str, needle: &str, past: &VerdictRow, inside: &VerdictRow) {
    let e = &past.evaluation;
    assert_eq!(e.verdict, VerdictKind::NotApplicable, "{claim} past `{needle}`: {e:?}");
    assert_eq!(e.failed.len(), 1, "{claim} past `{needle}`: only it fails: {:?}", e.failed);
    assert!(e.failed[0].contains(needle), "{claim} past `{needle}`: {:?}", e.failed);
    let e = &inside.evaluation;
    assert!(matches!(e.verdict, VerdictKind::Holds | VerdictKind::Violated), "{claim} inside `{needle}` is checked: {e:?}");
    assert!(e.failed.is_empty(), "{claim} inside `{needle}`: {:?}", e.failed);
}

/// An implicit condition: checked on both sides, named in the notes just past it only.
fn assert_reported(claim: &str, needle: &str, past: &VerdictRow, inside: &VerdictRow) {
    for (side, r, named) in [("past", past, true), ("inside", inside, false)] {
        let e = &r.evaluation;
        assert!(matches!(e.verdict, VerdictKind::Holds | VerdictKind::Violated), "{claim} {side} `{needle}` is checked (I-PLT6): {e:?}");
        assert!(e.failed.is_empty(), "{claim} {side} `{needle}`: {:?}", e.failed);
        assert_eq!(e.notes.iter().any(|n| n.contains(needle)), named, "{claim} {side} `{needle}`: notes {:?}", e.notes);
    }
}

#[test]
fn case_1_is_not_applicable_just_past_eta_z_equal_one_and_checked_just_inside() {
    // mu = L = 1: z = 1, eta z = 1.01 and 0.99.
    let (past, inside) = (constant(1.01), constant(0.99));
    let r = rows("FEDPLT-CONST", &[("past", 1.0, &past), ("inside", 1.0, &inside)]);
    assert_binding("FEDPLT-CONST", "eta in (0, 1/z) (001:L639)", &r[0], &r[1]);
}

#[test]
fn the_repair_is_not_applicable_at_beta_one_and_checked_just_above() {
    let (past, inside) = ("{ decaying = { beta = 1.0, offset = 16.0 } }", "{ decaying = { beta = 1.01, offset = 16.0 } }");
    let r = rows("FEDPLT-DECAY~corrected", &[("past", 1.0, past), ("inside", 1.0, inside)]);
    assert_binding("FEDPLT-DECAY~corrected", "beta > 1", &r[0], &r[1]);
}

#[test]
fn the_implicit_step_conditions_are_named_just_past_them_and_never_bind() {
    // (a) eta < 1/L, with mu = 1/2 so that (d) z eta = eta/2 < 1 on both sides.
    let (a_past, a_inside) = (constant(1.01), constant(0.99));
    // (b) eta < psi_ rho_ / (2 psibar^2 alpha^2 L) = 1/2.
    let (b_past, b_inside) = (constant(0.51), constant(0.49));
    // (d) z eta < 1 with z = mu = 1.
    let (d_past, d_inside) = (constant(1.01), constant(0.99));
    let scenarios = [
        ("a-past", 0.5, a_past.as_str()),
        ("a-inside", 0.5, a_inside.as_str()),
        ("b-past", 0.5, b_past.as_str()),
        ("b-inside", 0.5, b_inside.as_str()),
        ("d-past", 1.0, d_past.as_str()),
        ("d-inside", 1.0, d_inside.as_str()),
    ];
    for claim in ["FEDPLT-REC", "FEDPLT-CONST"] {
        let r = rows(claim, &scenarios);
        assert_reported(claim, "(a) eta^t < 1/L (001:L507)", &r[0], &r[1]);
        assert_reported(claim, "(b) gamma_k > 0", &r[2], &r[3]);
        if claim == "FEDPLT-REC" {
            assert_reported(claim, "(d) z eta^t < 1", &r[4], &r[5]);
        } else {
            // Case 1 states eta < 1/z itself: there (d) is its binding twin.
            assert_binding(claim, "eta in (0, 1/z) (001:L639)", &r[4], &r[5]);
        }
        // (c) psi_ rho_ - 2 eta L < 1 holds for every eta > 0 where psi_ rho_ = 1.
        assert!(r.iter().all(|x| !x.evaluation.notes.iter().any(|n| n.contains("(c) gamma_k"))), "{claim}: (c) is met at every step here");
    }
}

/// Negative control: the helpers see a failure where there is one. A row just inside a stated
/// condition is not "past" it, and a row past an implicit one does not pass as "inside".
#[test]
fn the_checks_fail_on_the_wrong_side() {
    let (past, inside) = (constant(1.01), constant(0.99));
    let r = rows("FEDPLT-CONST", &[("past", 1.0, &past), ("inside", 1.0, &inside)]);
    let swapped = std::panic::catch_unwind(|| assert_binding("FEDPLT-CONST", "eta in (0, 1/z)", &r[1], &r[0]));
    assert!(swapped.is_err(), "the sides swapped must fail");
    let r = rows("FEDPLT-REC", &[("past", 0.5, &past), ("inside", 0.5, &inside)]);
    let swapped = std::panic::catch_unwind(|| assert_reported("FEDPLT-REC", "(a) eta^t < 1/L", &r[1], &r[0]));
    assert!(swapped.is_err(), "the sides swapped must fail");
}
