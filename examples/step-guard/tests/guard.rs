//! The rule stays admissible and the claim holds at its step; a broken rule fails the guard.

use step_guard::{guard, step};

#[test]
fn the_rule_is_admitted_and_the_claim_holds_at_its_step() {
    let slack = guard(step).unwrap();
    // At the largest admitted step the bound is not loose: a wrong constant would show.
    assert!((1.0..10.0).contains(&slack), "slack {slack}");
}

#[test]
fn a_rule_past_the_condition_fails_the_guard() {
    // Negative control: twice the step leaves the claim's condition, and the guard says which.
    let err = guard(|l, k| 2.0 * step(l, k)).unwrap_err();
    assert!(err.contains("not-applicable") && err.contains("gamma <= 1/(8*L*K)"), "{err}");
}
