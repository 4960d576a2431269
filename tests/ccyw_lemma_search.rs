//! The adversarial search of the proofs' lemmas: on a small budget the lemma holds on the worst
//! instance found (estimated ratio at most 1), the same search with the right-hand side times 0.3
//! finds a counterexample that the lemma check calls violated (negative control), the worst
//! instance's file replays to the same ratio bit for bit (and `run` reports the lemma's verdict
//! there), and the search does not depend on the thread count.

use fedbounds::checker::Plugin;
use fedbounds::families::ccyw::card::parse_scenario;
use fedbounds::families::ccyw::claims::lemma_by_id;
use fedbounds::families::ccyw::report::scenario_file;
use fedbounds::families::ccyw::search::{lemma_evaluation, lemma_ratio, not_searched, search_lemma, SearchOptions, LEMMA_SEARCH_REPLICATES};
use fedbounds::family::RunOptions;
use fedbounds::verdict::VerdictKind;

fn opts(budget: usize, bound_scale: f64) -> SearchOptions {
    SearchOptions { budget, seed: 1, bound_scale, ..Default::default() }
}

#[test]
fn a_lemma_holds_on_its_worst_instance_and_a_tightened_one_is_violated() {
    let lemma = lemma_by_id("CCYW-L3.6-FULL").unwrap();
    let honest = search_lemma(lemma, &opts(24, 1.0)).unwrap();
    assert_eq!(honest.verdict, VerdictKind::Holds, "worst ratio {}", honest.worst_ratio);
    assert!(honest.worst_ratio > 0.0 && honest.worst_ratio <= 1.0, "{}", honest.worst_ratio);
    assert_eq!(honest.trace.len(), 24, "the budget is spent");
    let decisive = honest.worst_estimate.as_ref().expect("a lemma reports its decisive round's interval");
    assert!(decisive.estimate.lower <= decisive.estimate.upper && decisive.bound.is_some());
    // Its step conditions (gamma <= 1/(8 L K), eta_u >= max(T, sqrt n)) have their room measured
    // on the worst instance.
    assert!(honest.conservativeness.is_some());
    // Negative control: the right-hand side times 0.3 multiplies every ratio by 1/0.3, and the
    // lemma check now lies above the bound with its interval.
    let tightened = search_lemma(lemma, &opts(24, 0.3)).unwrap();
    assert!(tightened.worst_ratio > 1.0, "{}", tightened.worst_ratio);
    assert_eq!(tightened.verdict, VerdictKind::Violated, "worst ratio {}", tightened.worst_ratio);
    assert!((tightened.worst_ratio * 0.3 / honest.worst_ratio - 1.0).abs() < 1e-9, "{} vs {}", tightened.worst_ratio, honest.worst_ratio);
}

#[test]
fn an_estimate_above_one_is_violated_only_where_the_check_says_so() {
    // Lemma 3.6's first part is an identity on decoupled instances (B^t = n G_u^t + n b^2): the
    // ratio is 1 up to rounding, which the check calls a tie that holds; scaled by 0.3 the
    // interval of lhs - 0.3 rhs lies above 0.
    let lemma = lemma_by_id("CCYW-L3.6-BGD").unwrap();
    let tie = search_lemma(lemma, &opts(16, 1.0)).unwrap();
    assert!((tie.worst_ratio - 1.0).abs() < 1e-12, "{}", tie.worst_ratio);
    assert_eq!(tie.verdict, VerdictKind::Holds);
    assert!(tie.conservativeness.is_none(), "no step condition, no step room");
    let scaled = search_lemma(lemma, &opts(16, 0.3)).unwrap();
    assert_eq!(scaled.verdict, VerdictKind::Violated);
}

#[test]
fn the_worst_instance_replays_from_its_file() {
    for id in ["CCYW-L3.5", "CCYW-L4.4"] {
        let lemma = lemma_by_id(id).unwrap();
        let r = search_lemma(lemma, &opts(12, 1.0)).unwrap();
        let text = scenario_file(&r).unwrap().expect("a worst instance");
        let replayed = parse_scenario(&text, "replay").unwrap();
        assert_eq!(Some(&replayed), r.scenario.as_ref(), "{id}: the file round-trips");
        assert_eq!(replayed.replicates, LEMMA_SEARCH_REPLICATES);
        let (again, why) = lemma_ratio(lemma, &replayed, 1.0).unwrap();
        assert_eq!((again, why), (Some(r.worst_ratio), None), "{id}: the replayed ratio differs");
        let (evaluation, _) = lemma_evaluation(lemma, &replayed, 1.0).unwrap().unwrap();
        assert_eq!(evaluation.verdict, r.verdict, "{id}");
        // `run` evaluates the lemma on the file as `check` does.
        let json = fedbounds::families::ccyw::Ccyw.run_file(&text, "replay", &RunOptions::default()).unwrap();
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        let row = report["verdicts"].as_array().unwrap().iter().find(|v| v["claim"] == id).expect("the lemma's verdict");
        assert_eq!(row["verdict"], serde_json::to_value(r.verdict).unwrap(), "{id}");
        // At gamma x 1, the step-multiple path gives the search's ratio.
        if let Some(c) = &r.conservativeness {
            assert_eq!((c.trials[0].0, c.trials[0].1), (1.0, r.worst_ratio), "{id}");
        }
    }
}

#[test]
fn the_lemma_search_is_deterministic_and_ignores_the_thread_count() {
    let lemma = lemma_by_id("CCYW-L4.3").unwrap();
    let json = |r: &fedbounds::families::ccyw::search::SearchResult| serde_json::to_string(r).unwrap();
    let a = search_lemma(lemma, &opts(10, 1.0)).unwrap();
    let b = fedbounds::families::ccyw::check::in_pool(Some(1), || search_lemma(lemma, &opts(10, 1.0))).unwrap().unwrap();
    assert_eq!(json(&a), json(&b));
    let other_seed = search_lemma(lemma, &SearchOptions { seed: 2, ..opts(10, 1.0) }).unwrap();
    assert_ne!(json(&a), json(&other_seed), "the seed must reach the search");
}

#[test]
fn every_lemma_is_searched() {
    assert_eq!(not_searched(), Vec::<(&str, &str)>::new());
    let ids: Vec<&str> = fedbounds::families::ccyw::search::all_targets().iter().map(|t| t.id()).collect();
    for lemma in fedbounds::families::ccyw::claims::all_lemmas() {
        assert!(ids.contains(&lemma.id()), "{}", lemma.id());
    }
}
