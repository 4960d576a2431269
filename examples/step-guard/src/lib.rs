//! A step-size rule of the kind a paper's author ships, and its guard: fedbounds checks, in this
//! crate's own `cargo test`, that the rule stays inside the step condition of the author's claim
//! and that the claim holds at the step the rule gives.
//!
//! The claim is `LOCAL-SGD` of `examples/local-sgd-card.toml` in the fedbounds repository (a
//! local-SGD bound of textbook shape for FedAvg with full participation; condition
//! `gamma <= 1/(8 L K)`). The guard checks it on the card's scenario
//! `local-sgd-heterogeneous-k5` (10 heterogeneous noisy clients, `L = 1`, `K = 5`, 400 rounds)
//! with the scenario's step replaced by the rule's.

use fedbounds::family::{CardText, CheckRequest, Silent};
use fedbounds::verdict::VerdictKind;

/// The claim card, as fedbounds ships it.
const CARD: &str = include_str!("../../local-sgd-card.toml");
/// The scenario of the card the guard runs, and its smoothness constant and local steps.
const SCENARIO: &str = "local-sgd-heterogeneous-k5";
const L: f64 = 1.0;
const K: usize = 5;

/// The author's rule: the largest step `LOCAL-SGD` admits, `gamma = 1/(8 L K)`.
pub fn step(l: f64, k: usize) -> f64 {
    1.0 / (8.0 * l * k as f64)
}

/// Checks `LOCAL-SGD` on the guard's scenario at the step `rule(L, K)`.
///
/// # Errors
/// A message naming the verdict and, when the claim is not applicable, the condition the step
/// fails (e.g. `gamma <= 1/(8*L*K)`); or why the check could not run.
pub fn guard(rule: impl Fn(f64, usize) -> f64) -> Result<f64, String> {
    let gamma = rule(L, K);
    let text = CARD.replace("gamma = { admissible = \"LOCAL-SGD\" }", &format!("gamma = {gamma:e}"));
    let request = CheckRequest {
        card: Some(CardText { what: "local-sgd-card.toml with the rule's step".into(), text }),
        claims: vec!["LOCAL-SGD".into()],
        scenarios: vec![SCENARIO.into()],
        ..Default::default()
    };
    let outcome = fedbounds::families::registry().check(&request, &Silent).map_err(|e| e.to_string())?;
    let row = outcome.rows().find(|r| r.claim == "LOCAL-SGD").ok_or("LOCAL-SGD was not checked")?;
    match (row.evaluation.verdict, row.evaluation.slack) {
        (VerdictKind::Holds, Some(slack)) => Ok(slack),
        (verdict, _) => Err(format!("LOCAL-SGD at gamma = {gamma:e}: {verdict} ({})", row.evaluation.failed.join("; "))),
    }
}
