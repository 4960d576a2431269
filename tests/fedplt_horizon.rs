//! Every embedded FedPLT scenario run at its rounds and at twice its rounds: the verdict of every
//! claim and reading is the same, except the pairs listed in [`EXPLAINED`] with the reason (the
//! card's scenario notes say the same). A pair that changes without a reason, or a listed pair
//! that no longer changes, fails the test; the negative control checks that a changed verdict
//! is caught.

use std::collections::BTreeMap;

use fedbounds::families::fedplt::check::{run_scenario, Scenario, ScenarioRun};
use fedbounds::families::fedplt::claims::ALL;
use fedbounds::families::fedplt::family::embedded_card;
use fedbounds::families::fedplt::formulas::Claim;
use fedbounds::verdict::VerdictKind;

/// `(scenario, claim, reading)` pairs whose verdict changes when the horizon doubles, and why.
const EXPLAINED: &[(&str, &str, &str, &str)] = &[];

/// `(scenario, claim, reading or constants source)`.
pub(crate) type Key = (String, String, String);

fn verdicts(run: &ScenarioRun) -> BTreeMap<Key, VerdictKind> {
    let name = &run.scenario.name;
    run.results.iter().map(|r| ((name.clone(), r.claim.to_string(), format!("{:?}", r.constants)), r.evaluation.verdict)).collect()
}

/// The pairs whose verdict differs between `short` and `long`, with both verdicts.
pub(crate) fn changed(short: &BTreeMap<Key, VerdictKind>, long: &BTreeMap<Key, VerdictKind>) -> Vec<(Key, VerdictKind, VerdictKind)> {
    assert_eq!(short.keys().collect::<Vec<_>>(), long.keys().collect::<Vec<_>>(), "the same pairs at both horizons");
    short.iter().filter(|(k, v)| long[*k] != **v).map(|(k, v)| (k.clone(), *v, long[k])).collect()
}

fn run(s: &Scenario, claims: &[Claim], factor: usize) -> BTreeMap<Key, VerdictKind> {
    let at = Scenario { rounds: s.rounds * factor, ..s.clone() };
    verdicts(&run_scenario(&at, claims, 1.0).unwrap())
}

#[test]
fn doubling_the_horizon_changes_only_the_explained_verdicts() {
    let read = embedded_card().unwrap();
    let builtin = ALL.iter().map(|c| Claim::Builtin(*c));
    let claims: Vec<Claim> = builtin.chain(read.defined.iter().map(|c| Claim::Card(c.clone()))).collect();
    let mut changes = Vec::new();
    for s in &read.card.scenarios {
        let (short, long) = (run(s, &claims, 1), run(s, &claims, 2));
        assert!(!short.is_empty(), "{} has verdicts", s.name);
        changes.extend(changed(&short, &long));
    }
    let found: Vec<(String, String, String)> = changes.iter().map(|c| c.0.clone()).collect();
    let listed: Vec<(String, String, String)> = EXPLAINED.iter().map(|e| (e.0.into(), e.1.into(), e.2.into())).collect();
    assert_eq!(found, listed, "verdicts changed by doubling the horizon: {changes:?}");
}

#[test]
fn a_changed_verdict_is_caught() {
    let key: Key = ("s".into(), "FEDPLT-CONST".into(), "Exact".into());
    let short = BTreeMap::from([(key.clone(), VerdictKind::Holds)]);
    let long = BTreeMap::from([(key.clone(), VerdictKind::Violated)]);
    assert_eq!(changed(&short, &long), vec![(key, VerdictKind::Holds, VerdictKind::Violated)]);
    assert!(changed(&short, &short).is_empty());
}
