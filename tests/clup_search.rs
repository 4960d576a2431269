//! FedCLUP's adversarial search: Lemma 1, whose constants are attained, has worst ratio 1; the
//! worst case of Theorem 2 replays from its card with the same verdict and ratio; a bound scaled
//! to 0.3 of its found worst case is violated on the search's instance (the negative control);
//! every claim is searched or has a stated reason; the step room of Theorem 2 is measured; every
//! claim is covered or listed in `NOT_SEARCHED` (a made-up id is neither); Lemma 6's worst case
//! holds at ratio <= 1 and a bound scaled below it is violated.

use fedbounds::families::clup::claims::ClupClaim;
use fedbounds::families::clup::claims::ALL;
use fedbounds::families::clup::search::{why_not_searched, Space, NOT_SEARCHED};
use fedbounds::families::clup::FAMILY;
use fedbounds::family::{CardText, CheckRequest, Family, FamilyReport, SearchRequest, Silent};
use fedbounds::registry::Registry;
use fedbounds::search::line::SearchLine;
use fedbounds::search::SearchSpace;
use fedbounds::verdict::VerdictKind;

fn search(claim: &str, budget: usize, bound_scale: f64) -> FamilyReport {
    let request = SearchRequest {
        claims: vec![claim.into()],
        budget,
        room_budget: 0,
        seed: 2,
        bound_scale,
        plots: false,
        meta: Default::default(),
        card: None,
        out: None,
    };
    FAMILY.search(&request, &Silent).unwrap().expect("FedCLUP has a search space")
}

fn line<'a>(report: &'a FamilyReport, claim: &str) -> &'a SearchLine {
    report.searches.iter().find(|l| l.claim == claim).expect("a search line")
}

fn replay_card(report: &FamilyReport) -> String {
    let card = report.files.iter().find(|f| f.path.extension().is_some_and(|e| e == "toml")).expect("a replay card");
    String::from_utf8(card.bytes.clone()).unwrap()
}

/// The claim's row when `card` is checked with every bound multiplied by `bound_scale`.
fn replayed(claim: &str, card: String, bound_scale: f64) -> fedbounds::family::VerdictRow {
    let registry = Registry::new(vec![&FAMILY]).unwrap();
    let request = CheckRequest {
        claims: vec![claim.into()],
        card: Some(CardText { what: "replay".into(), text: card }),
        bound_scale: Some(bound_scale),
        ..Default::default()
    };
    let outcome = registry.check(&request, &Silent).unwrap();
    let row = outcome.rows().find(|r| r.claim == claim).expect("the claim's row on the replayed scenario").clone();
    row
}

#[test]
fn lemma_1_is_attained_its_worst_ratio_is_1() {
    let report = search("CLUP-L1", 6, 1.0);
    let l = line(&report, "CLUP-L1");
    assert_eq!(l.verdict, VerdictKind::Holds, "{l:?}");
    assert_eq!(l.applicable, l.evaluations, "every design of the class is admissible");
    let worst = l.worst_ratio.expect("a worst ratio");
    assert!((worst - 1.0).abs() <= 1e-9, "Lemma 1's constants are attained: {worst}");
    // Control: Theorem 1 on the same class is far from tight, so a ratio of 1 is not a default.
    let t1 = search("CLUP-T1", 6, 1.0);
    assert!(line(&t1, "CLUP-T1").worst_ratio.is_some_and(|r| r < 0.5), "{:?}", line(&t1, "CLUP-T1"));
}

#[test]
fn the_worst_case_of_theorem_2_replays_and_a_bound_at_0_3_of_it_is_violated_there() {
    let claim = "CLUP-T2";
    let report = search(claim, 8, 1.0);
    let l = line(&report, claim);
    assert_eq!(l.verdict, VerdictKind::Holds, "{l:?}");
    let worst = l.worst_ratio.expect("a worst ratio");
    assert!(worst > 0.0 && worst <= 1.0, "{worst}");
    // The replay card gives the same verdict at the same ratio.
    let card = replay_card(&report);
    let row = replayed(claim, card.clone(), 1.0);
    assert_eq!((row.evaluation.verdict, row.expected), (VerdictKind::Holds, Some(VerdictKind::Holds)));
    let ratio = 1.0 / row.evaluation.slack.unwrap();
    assert!((ratio - worst).abs() <= 1e-12 * worst, "replayed {ratio} vs searched {worst}");
    // Negative control: the bound at 0.3 of the worst observed value is violated on that instance,
    // by the factor 1/0.3.
    let row = replayed(claim, card, 0.3 * worst);
    assert_eq!(row.evaluation.verdict, VerdictKind::Violated);
    let ratio = 1.0 / row.evaluation.slack.unwrap();
    assert!((ratio - 1.0 / 0.3).abs() <= 1e-9, "{ratio}");
    // And a search of the scaled bound reports it violated, as a finding.
    let scaled = search(claim, 8, 0.3 * worst);
    assert_eq!(line(&scaled, claim).verdict, VerdictKind::Violated);
    assert!(!scaled.mismatches.is_empty(), "a counterexample is a finding");
}

#[test]
fn the_step_room_of_theorem_2_is_measured_for_each_of_its_conditions() {
    let report = search("CLUP-T2", 4, 1.0);
    let lines: Vec<&SearchLine> = report.searches.iter().filter(|l| l.claim == "CLUP-T2").collect();
    let conditions: Vec<&str> = lines.iter().map(|l| l.condition.as_str()).collect();
    assert_eq!(conditions.len(), 3, "{conditions:?}");
    assert!(conditions[0].starts_with("gamma < 1/L_g") && conditions[1].starts_with("eta <= 1/L_l") && conditions[2].starts_with("(14)"));
    for l in &lines {
        assert!(l.worst_instance.0.is_some_and(|c| c >= 1.0), "the bound holds at the admitted step: {l:?}");
    }
    // eta past 2/L_l makes the local steps diverge: the bound breaks by 1024x; gamma
    // past 1/L_g leaves the bound without a value (the Lyapunov constant is infinite), so its
    // scan stops without a break.
    assert!(lines[1].worst_instance.1.is_some(), "{:?}", lines[1]);
    assert_eq!(lines[0].worst_instance.1, None, "{:?}", lines[0]);
    // The statistical claims have no step to scale.
    assert!(line(&search("CLUP-L1", 2, 1.0), "CLUP-L1").condition.is_empty());
}

#[test]
fn every_claim_is_searched_or_says_why_not() {
    let request = SearchRequest {
        claims: Vec::new(),
        budget: 1,
        room_budget: 0,
        seed: 1,
        bound_scale: 1.0,
        plots: false,
        meta: Default::default(),
        card: None,
        out: None,
    };
    let report = FAMILY.search(&request, &Silent).unwrap().unwrap();
    for c in &ALL {
        let searched = report.searches.iter().any(|l| l.claim == c.id);
        let reason = why_not_searched(c);
        assert!(searched != reason.is_some(), "{}: searched {searched}, stated reason {reason:?}", c.id);
    }
    // The orderings, the expgamma reading and the ball's scaling have reasons of their own.
    for (id, why) in NOT_SEARCHED {
        let claim = ALL.iter().find(|c| c.id == id).expect("a claim of the family");
        assert_eq!(why_not_searched(claim), Some(why));
    }
    // Control: a searched claim has no reason.
    assert_eq!(why_not_searched(&ALL[0]), None);
}

#[test]
fn claim_lines_mark_a_room_without_break_at_the_searchs_last_multiple() {
    assert_eq!(fedbounds::search::line::LAST_MULTIPLE, f64::from(1u32 << fedbounds::search::space::MAX_DOUBLINGS));
}

/// Whether the search accounts for `claim`: it covers it, or `NOT_SEARCHED` lists its id with a
/// reason (the fallback "not in the search space" does not count).
fn accounted(claim: &ClupClaim) -> bool {
    Space.covers(claim) || NOT_SEARCHED.iter().any(|(id, why)| *id == claim.id && !why.is_empty())
}

#[test]
fn every_claim_is_covered_or_listed_with_a_reason() {
    let missing: Vec<&str> = ALL.iter().filter(|c| !accounted(c)).map(|c| c.id).collect();
    assert!(missing.is_empty(), "neither searched nor listed in NOT_SEARCHED: {missing:?}");
    // The rows added with Lemmas 2-6, (35), (52), (79) and the remark: searched, or L2's reason.
    for id in [
        "CLUP-L3",
        "CLUP-L4",
        "CLUP-L5",
        "CLUP-L6",
        "CLUP-G35",
        "CLUP-G35~local-average",
        "CLUP-G52",
        "CLUP-G52~young",
        "CLUP-G79",
        "CLUP-T3-REMARK",
        "CLUP-T3-REMARK~ball-at-steps",
    ] {
        let claim = ALL.iter().find(|c| c.id == id).expect("a claim of the family");
        assert!(Space.covers(claim), "{id} is searched");
    }
    assert!(NOT_SEARCHED.iter().any(|(id, _)| *id == "CLUP-L2"));
    // Control: a made-up id on an unsearched statement is neither covered nor listed.
    let l2 = ALL.iter().find(|c| c.id == "CLUP-L2").unwrap();
    let made_up = ClupClaim { id: "CLUP-MADE-UP", ..*l2 };
    assert!(!accounted(&made_up));
}

#[test]
fn lemma_6_has_worst_ratio_at_most_1_and_a_bound_below_it_is_violated() {
    let claim = "CLUP-L6";
    let report = search(claim, 8, 1.0);
    let l = line(&report, claim);
    assert_eq!(l.verdict, VerdictKind::Holds, "{l:?}");
    let worst = l.worst_ratio.expect("a worst ratio");
    assert!(worst > 0.0 && worst <= 1.0 + 1e-9, "{worst}");
    assert!(l.condition.starts_with("gamma <= 1/L_g"), "{l:?}");
    // Negative control: the bound at 0.5 of the worst case is violated there.
    let scaled = search(claim, 8, 0.5 * worst);
    assert_eq!(line(&scaled, claim).verdict, VerdictKind::Violated);
}
