//! DFedPGP's adversarial search: a small search of inequality (32) read on the proof's points,
//! whose replay card, checked like any card, gives the same verdict at the same ratio; and the
//! negative control, the bound scaled to 0.3, which the search must break.

use fedbounds::families::dpgp::FAMILY;
use fedbounds::family::{CardText, CheckRequest, Family, FamilyReport, SearchRequest, Silent};
use fedbounds::registry::Registry;
use fedbounds::verdict::VerdictKind;

const CLAIM: &str = "DPGP-REC32~visited-sg";

fn search(bound_scale: f64) -> FamilyReport {
    let request = SearchRequest {
        claims: vec![CLAIM.into()],
        budget: 6,
        room_budget: 0,
        seed: 3,
        bound_scale,
        plots: false,
        meta: Default::default(),
        card: None,
        out: None,
    };
    FAMILY.search(&request, &Silent).unwrap().expect("DFedPGP has a search space")
}

#[test]
fn the_worst_case_of_32_replays_with_the_same_verdict_and_ratio() {
    let report = search(1.0);
    let line = report.searches.iter().find(|l| l.claim == CLAIM).expect("a search line");
    assert_eq!(line.verdict, VerdictKind::Holds, "{line:?}");
    assert!(line.applicable > 0);
    let worst = line.worst_ratio.expect("a worst ratio");
    assert!(worst > 0.0 && worst <= 1.0, "{worst}");
    let card = report.files.iter().find(|f| f.path.extension().is_some_and(|e| e == "toml")).expect("a replay card");
    let text = String::from_utf8(card.bytes.clone()).unwrap();
    let registry = Registry::new(vec![&FAMILY]).unwrap();
    let request = CheckRequest { claims: vec![CLAIM.into()], card: Some(CardText { what: "replay".into(), text }), ..Default::default() };
    let outcome = registry.check(&request, &Silent).unwrap();
    let row = outcome.rows().find(|r| r.claim == CLAIM).expect("the claim's row on the replayed scenario");
    assert_eq!(row.evaluation.verdict, VerdictKind::Holds);
    assert_eq!(row.expected, Some(VerdictKind::Holds));
    assert!(outcome.mismatches().is_empty(), "{:?}", outcome.mismatches());
    assert!((1.0 / row.evaluation.slack.unwrap() - worst).abs() <= 1e-12, "replayed {} vs searched {worst}", 1.0 / row.evaluation.slack.unwrap());
}

#[test]
fn a_bound_scaled_to_0_3_is_broken_by_the_search() {
    let report = search(0.3);
    let line = report.searches.iter().find(|l| l.claim == CLAIM).expect("a search line");
    assert_eq!(line.verdict, VerdictKind::Violated, "{line:?}");
    assert!(line.worst_ratio.is_some_and(|r| r > 1.0));
    assert!(!report.mismatches.is_empty(), "a counterexample is a finding");
}

#[test]
fn claims_without_a_slack_are_not_searched() {
    let request = SearchRequest {
        claims: vec!["DPGP-T1".into()],
        budget: 2,
        room_budget: 0,
        seed: 3,
        bound_scale: 1.0,
        plots: false,
        meta: Default::default(),
        card: None,
        out: None,
    };
    let report = FAMILY.search(&request, &Silent).unwrap().expect("DFedPGP has a search space");
    assert!(report.searches.is_empty(), "Theorem 1 is an O(.) statement");
    // Control: a covered claim does get a line.
    assert!(!search(1.0).searches.is_empty());
}
