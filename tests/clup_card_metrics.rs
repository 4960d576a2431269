//! The metrics a FedCLUP card-defined claim may bound (`formulas::METRICS`): each one reads the
//! observed series of a built-in claim with a formula twin, so that claim's twin written as a
//! card-defined claim on the metric gives the built-in claim's verdict and slack on the same
//! scenario (`low-r` at 40 rounds: every metric is compared there, the statistical ones on its
//! three design draws, Algorithm 2 with B = 3 in both batch readings). Negative controls: on each
//! metric, the twin with its bound scaled by half its slack is violated; an unknown metric is
//! refused naming `claims[ID].formula.metric` and every allowed name.

use fedbounds::card::ClaimCard;
use fedbounds::error::Error;
use fedbounds::families::clup::check::{run_scenario, Scenario};
use fedbounds::families::clup::claims::{ClupClaim, ALL};
use fedbounds::families::clup::family::embedded_card;
use fedbounds::families::clup::formulas::{card_claim, METRICS, METRIC_NAMES};
use fedbounds::formula::FormulaCard;
use fedbounds::verdict::{Evaluation, VerdictKind};

use crate::clup_card_metrics_common::{card, CLAIM_METRICS};

fn entry(id: &str) -> ClaimCard {
    embedded_card().expect("the embedded card").claims.iter().find(|c| c.id == id).expect("a card entry").clone()
}

/// The formula with its bound multiplied by `factor`.
fn scaled(f: &FormulaCard, factor: f64) -> FormulaCard {
    FormulaCard { bound: Some(format!("{factor:?}*({})", f.bound.as_deref().expect("a bound"))), ..f.clone() }
}

fn low_r() -> Scenario {
    let card = embedded_card().expect("the embedded card");
    let s = card.card.scenarios.into_iter().find(|s| s.name == "low-r").expect("the scenario");
    Scenario { rounds: 40, ..s }
}

fn evaluations(s: &Scenario, claims: &[ClupClaim]) -> Vec<Evaluation> {
    let run = run_scenario(s, claims, 1.0).expect("the scenario runs");
    claims.iter().map(|c| run.results.iter().find(|r| r.claim == c.id).unwrap_or_else(|| panic!("{} is compared", c.id)).evaluation.clone()).collect()
}

#[test]
fn each_metric_reads_the_series_of_its_built_in_claims() {
    for m in &METRICS {
        assert!(CLAIM_METRICS.iter().any(|(_, name)| *name == m.name), "{} bounds no built-in claim's series", m.name);
        assert!(m.measures.contains("003:L"), "{}: cites the paper line", m.name);
        let by_statement: Vec<&str> = ALL.iter().filter(|c| c.statement == m.reads).map(|c| c.id).collect();
        assert!(by_statement.iter().all(|id| CLAIM_METRICS.contains(&(*id, m.name))), "{}: {by_statement:?}", m.name);
    }
    let s = low_r();
    let mut claims = Vec::new();
    for (id, metric) in CLAIM_METRICS {
        let e = entry(id);
        claims.push(*ALL.iter().find(|c| c.id == id).expect("a built-in claim"));
        claims.push(card(&e, format!("{id}-TWIN"), e.formula.as_ref().expect("a twin"), metric));
    }
    let evals = evaluations(&s, &claims);
    for (k, (id, metric)) in CLAIM_METRICS.iter().enumerate() {
        let (b, t) = (&evals[2 * k], &evals[2 * k + 1]);
        assert_eq!(b.verdict, t.verdict, "{id} on {metric}");
        match (b.slack, t.slack) {
            (Some(x), Some(y)) => assert!((x - y).abs() <= 1e-9 * x.abs(), "{id} on {metric}: slack {x} built in, {y} as a card claim"),
            (x, y) => assert_eq!((x, y), (None, None), "{id} on {metric}"),
        }
        // Corollary 4's rate is faster than the run on low-r (I-CLUP1): violated there, by the
        // built-in claim and its twin alike; every other claim holds.
        let expected = if *id == "CLUP-C3~c4" { VerdictKind::Violated } else { VerdictKind::Holds };
        assert_eq!(b.verdict, expected, "{id}");
    }
}

/// On every metric a card-defined claim can fail: the first twin on it with its bound scaled by
/// half its slack is violated (and the unscaled one holds).
#[test]
fn a_card_claim_on_each_metric_is_violated_below_its_slack() {
    let s = low_r();
    let twins: Vec<(&str, FormulaCard)> = METRICS
        .iter()
        .map(|m| {
            let id = CLAIM_METRICS.iter().find(|(_, name)| *name == m.name).expect("a claim").0;
            (m.name, entry(id).formula.expect("a twin"))
        })
        .collect();
    let base = entry("CLUP-T2");
    let claims: Vec<ClupClaim> = twins.iter().map(|(metric, f)| card(&base, format!("HOLDS-{metric}"), f, metric)).collect();
    let evals = evaluations(&s, &claims);
    let mut wrong = Vec::new();
    for ((metric, f), e) in twins.iter().zip(&evals) {
        assert_eq!(e.verdict, VerdictKind::Holds, "{metric}: {e:?}");
        let slack = e.slack.unwrap_or_else(|| panic!("{metric}: {e:?}"));
        wrong.push(card(&base, format!("WRONG-{metric}"), &scaled(f, 0.5 / slack), metric));
    }
    for ((metric, _), e) in twins.iter().zip(evaluations(&s, &wrong)) {
        assert_eq!(e.verdict, VerdictKind::Violated, "{metric}: {e:?}");
    }
}

#[test]
fn an_unknown_metric_is_refused_naming_the_field_and_every_metric() {
    let e = entry("CLUP-T2");
    let mut bad = e.clone();
    bad.id = "CLUP-NEW".to_string();
    bad.bound = Default::default();
    bad.formula.as_mut().expect("a twin").metric = Some("global_error".to_string());
    match card_claim(&bad) {
        Err(Error::InvalidField { field, message, allowed }) => {
            assert_eq!(field, "claims[CLUP-NEW].formula.metric");
            assert!(message.contains("global_error"), "{message}");
            assert_eq!(allowed, METRIC_NAMES.join(", "));
        }
        other => panic!("{:?}", other.map(|c| c.id)),
    }
    // Negative control: the same entry on a known metric compiles.
    bad.formula.as_mut().expect("a twin").metric = Some("lyapunov-ratio".to_string());
    assert_eq!(card_claim(&bad).expect("compiles").metric, METRICS.iter().find(|m| m.name == "lyapunov-ratio").expect("a metric").measures);
}
