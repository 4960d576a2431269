//! Adversarial search: deterministic per seed, stays inside the claims' conditions, finds a
//! counterexample when the bound is deliberately tightened (negative control), and its worst
//! instance replays to the same ratio, bit for bit, from the saved scenario file.

use fedbounds::families::ccyw::card::parse_scenario;
use fedbounds::families::ccyw::claims::by_id;
use fedbounds::families::ccyw::report::scenario_file;
use fedbounds::families::ccyw::search::{ratio, search, SearchOptions};
use fedbounds::verdict::VerdictKind;

fn opts(budget: usize, seed: u64, bound_scale: f64) -> SearchOptions {
    SearchOptions {
        budget,
        seed,
        bound_scale,
        gamma_multiple: 1.0,
        eta_divisor: 1.0,
        scenarios: Vec::new(),
        room_budget: fedbounds::families::ccyw::search::ROOM_BUDGET,
    }
}

#[test]
fn the_search_is_deterministic_per_seed() {
    let claim = by_id("CCYW-T4.5").unwrap();
    let a = search(claim, &opts(40, 7, 1.0)).unwrap();
    let b = search(claim, &opts(40, 7, 1.0)).unwrap();
    let c = search(claim, &opts(40, 8, 1.0)).unwrap();
    let json = |r| serde_json::to_string(r).unwrap();
    assert_eq!(json(&a), json(&b), "same seed, same search");
    assert_ne!(json(&a), json(&c), "the seed must reach the search");
    assert_eq!(a.trace.len(), 40, "the budget is spent");
    let one_thread = fedbounds::families::ccyw::check::in_pool(Some(1), || search(claim, &opts(40, 7, 1.0))).unwrap().unwrap();
    assert_eq!(json(&a), json(&one_thread), "the thread count must not matter");
}

#[test]
fn a_tightened_bound_yields_a_counterexample() {
    let claim = by_id("CCYW-T3.7").unwrap();
    let honest = search(claim, &opts(200, 1, 1.0)).unwrap();
    assert_eq!(honest.verdict, VerdictKind::Holds);
    // The search gets close to the bound's own constant: T3.7's 4 F0/(T K gamma) term makes 1/4
    // the limit on a noiseless, well-conditioned instance with small gamma.
    assert!(honest.worst_ratio > 0.24 && honest.worst_ratio <= 1.0, "{}", honest.worst_ratio);
    // Bound x 0.2: every ratio grows by 5, so the same search must now cross 1.
    let tightened = search(claim, &opts(200, 1, 0.2)).unwrap();
    assert_eq!(tightened.verdict, VerdictKind::Violated, "worst ratio {}", tightened.worst_ratio);
    assert!((tightened.worst_ratio / honest.worst_ratio - 5.0).abs() < 1e-9, "{} vs {}", tightened.worst_ratio, honest.worst_ratio);
}

#[test]
fn the_worst_instance_replays_exactly_from_its_file() {
    for id in ["CCYW-T3.7", "CCYW-C4.6", "CCYW-T3.11"] {
        let claim = by_id(id).unwrap();
        let r = search(claim, &opts(60, 3, 1.0)).unwrap();
        let text = scenario_file(&r).unwrap().expect("a worst instance");
        let replayed = parse_scenario(&text, "replay").unwrap();
        assert_eq!(Some(&replayed), r.scenario.as_ref(), "{id}: the file round-trips");
        let (again, _) = ratio(claim, &replayed, 1.0).unwrap();
        assert_eq!(again, Some(r.worst_ratio), "{id}: the replayed ratio differs");
        // The step-multiple path agrees with the verdict path at multiple 1.
        let cons = r.conservativeness.as_ref().unwrap();
        let (c, at_one, _) = cons.trials[0];
        assert_eq!(c, 1.0);
        assert!((at_one / r.worst_ratio - 1.0).abs() < 1e-12, "{id}: {at_one} vs {}", r.worst_ratio);
    }
}

#[test]
fn candidates_stay_inside_the_conditions_of_claims_without_bgd() {
    // Steps are decoded inside the admissible ranges, so no candidate of a claim that needs no
    // BGD (any instance qualifies) can be not applicable.
    for id in ["CCYW-T3.11", "CCYW-T4.5", "CCYW-C4.6", "CCYW-SC-PSGD"] {
        let r = search(by_id(id).unwrap(), &opts(60, 5, 1.0)).unwrap();
        assert_eq!(r.not_applicable, 0, "{id}: {:?}", r.trace.iter().filter_map(|e| e.reason.as_ref()).collect::<Vec<_>>());
    }
    // BGD claims reject coupled candidates (b^2 infinite), and say so.
    let r = search(by_id("CCYW-T3.7").unwrap(), &opts(60, 5, 1.0)).unwrap();
    assert!(r.not_applicable > 0);
    assert!(r.trace.iter().filter_map(|e| e.reason.as_ref()).any(|why| why.contains("A2.3")), "{:?}", r.trace.iter().filter_map(|e| e.reason.as_ref()).next());
}

#[test]
fn the_condition_room_is_bracketed_by_a_counterexample() {
    use fedbounds::families::ccyw::search::{at_multiple_ratio, condition_room, Knob, Relaxation};
    let claim = by_id("CCYW-T3.7").unwrap();
    let base = opts(30, 1, 1.0);
    let at_one = search(claim, &base).unwrap().worst_ratio;
    let room = condition_room(claim, &base, Knob::Gamma, at_one).unwrap();
    let broken = room.broken_at.expect("gamma x 1024 must break the bound somewhere");
    assert!(broken > 1.0 && room.holds_up_to < broken, "{room:?}");
    // The counterexample reproduces: its scenario (gamma inside the condition) run at the multiple.
    let (s, r) = room.counterexample.clone().unwrap();
    assert!(r > 1.0);
    assert_eq!(at_multiple_ratio(claim, &s, Relaxation { gamma: broken, eta: 1.0 }, 1.0).unwrap(), r);
    assert!(room.holds_up_to >= 1.0, "T3.7's condition leaves room: {room:?}");
    // Negative control: with the bound x 0.1 the claim is violated inside its condition, so it has
    // no room at all.
    let tight = opts(30, 1, 0.1);
    let at_one_tight = search(claim, &tight).unwrap().worst_ratio;
    assert!(at_one_tight > 1.0);
    let none = condition_room(claim, &tight, Knob::Gamma, at_one_tight).unwrap();
    assert_eq!((none.holds_up_to, none.broken_at), (0.0, Some(1.0)));
    // The outer-step conditions: shrinking eta at fixed gamma grows the inner steps until some
    // instance breaks the bound, and that counterexample reproduces too.
    let eta = condition_room(claim, &opts(60, 1, 1.0), Knob::Eta, at_one).unwrap();
    let broken = eta.broken_at.expect("eta / 1024 must break the bound somewhere");
    let (s, r) = eta.counterexample.clone().unwrap();
    assert_eq!(at_multiple_ratio(claim, &s, Relaxation { gamma: 1.0, eta: broken }, 1.0).unwrap(), r);
}

#[test]
fn a_card_may_state_expected_search_verdicts_for_the_claims_it_names() {
    use fedbounds::families::ccyw::card::{parse_card, EMBEDDED_CARDS};
    use fedbounds::verdict::ConstantsSource;
    let (what, text) = EMBEDDED_CARDS[0];
    let with = |table: &str| format!("{text}\n[search]\nexpected = {table}\n");
    let card = parse_card(&with("{ \"CCYW-T3.7\" = \"violated\" }"), what).expect("a search expectation on a claim of the card");
    assert_eq!(card.search.expected("CCYW-T3.7", ConstantsSource::Exact), Some(VerdictKind::Violated));
    assert_eq!(card.search.expected("CCYW-C3.8", ConstantsSource::Exact), None, "unstated: expected to hold");
    // Controls: a claim the family does not have, and a key the card's header does not know.
    let err = parse_card(&with("{ \"NOPE\" = \"violated\" }"), what).unwrap_err().to_string();
    assert!(err.contains("search.expected.NOPE"), "{err}");
    let err = parse_card(&format!("{text}\n[serch]\nexpected = {{}}\n"), what).unwrap_err().to_string();
    assert!(err.contains("serch"), "{err}");
}
