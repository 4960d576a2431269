//! Every embedded CCYW scenario (FedAvg-P and Scaffold-P cards) run at three times its rounds: a
//! theorem of the form `(1/T) sum_{t<T} ... <= bound(T)` speaks of every `T`, and its slack can
//! keep falling past the card's horizon (Theorem 4.5 on `scaffold-many-clients-one-sampled`: 26.3
//! at `T = 300`, 4.9 at `T = 3000`). Every verdict the card expects at its rounds (which other
//! tests check the card's runs give) is the verdict at three times the rounds, except the pairs
//! listed in [`EXPLAINED`] with the reason. A pair that changes without a reason, or a listed pair
//! that no longer changes, fails the test (the comparison is FedPLT's, whose negative control
//! checks that a changed verdict is caught).

use std::collections::BTreeMap;

use fedbounds::families::ccyw::card::{embedded_cards, Scenario};
use fedbounds::families::ccyw::check::{run_scenario, CheckOptions, ScenarioRun, Selection};
use fedbounds::verdict::VerdictKind;

use super::fedplt_horizon::{changed, Key};

/// How many times the card's rounds the long run takes.
const FACTOR: usize = 3;

/// `(scenario, claim, constants source)` pairs whose verdict changes at `FACTOR` times the rounds,
/// and why.
const EXPLAINED: &[(&str, &str, &str, &str)] = &[];

fn verdicts(run: &ScenarioRun) -> BTreeMap<Key, VerdictKind> {
    run.results.iter().map(|r| ((run.scenario.clone(), r.claim.to_string(), format!("{:?}", r.constants)), r.evaluation.verdict)).collect()
}

/// The verdicts the card expects of `s`, keyed as [`verdicts`] keys them.
fn expected(s: &Scenario) -> BTreeMap<Key, VerdictKind> {
    let key = |claim: &String, source: &str| (s.name.clone(), claim.clone(), source.to_string());
    let exact = s.expected.iter().map(|(c, v)| (key(c, "Exact"), *v));
    exact.chain(s.expected_empirical.iter().map(|(c, v)| (key(c, "Empirical"), *v))).collect()
}

/// The verdicts of `s` run at `factor` times its rounds, on the pairs the card expects.
fn long_run(s: &Scenario, selection: &Selection, factor: usize) -> BTreeMap<Key, VerdictKind> {
    let at = Scenario { rounds: s.rounds * factor, ..s.clone() };
    let all = verdicts(&run_scenario(&at, selection, &CheckOptions::default()).unwrap());
    let keep = expected(s);
    all.into_iter().filter(|(k, _)| keep.contains_key(k)).collect()
}

#[test]
fn three_times_the_horizon_changes_only_the_explained_verdicts() {
    let mut changes = Vec::new();
    for card in embedded_cards().unwrap() {
        let selection = Selection::all_in(&card.catalog);
        for s in &card.written.scenarios {
            let short = expected(s);
            assert!(!short.is_empty(), "{} expects verdicts", s.name);
            changes.extend(changed(&short, &long_run(s, &selection, FACTOR)));
        }
    }
    let found: Vec<Key> = changes.iter().map(|c| c.0.clone()).collect();
    let listed: Vec<Key> = EXPLAINED.iter().map(|e| (e.0.into(), e.1.into(), e.2.into())).collect();
    assert_eq!(found, listed, "verdicts changed by tripling the horizon: {changes:?}");
}
