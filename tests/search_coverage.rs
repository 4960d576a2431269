//! Every built-in claim of the four families is either covered by its family's adversarial
//! search or has a reason, given by the family, why the search does not apply; a claim with
//! neither (the negative control) fails the check.

use fedbounds::checker::Plugin;
use fedbounds::families::{ccyw, clup, dpgp, fedplt};
use fedbounds::search::space::{not_searched_note, NO_REASON};
use fedbounds::search::SearchSpace;

/// One claim: its id, whether the search covers it, the family's reason if it does not.
type Entry = (&'static str, bool, Option<&'static str>);

/// The ids of `entries` that are neither covered nor given a non-empty reason.
fn without_reason(entries: &[Entry]) -> Vec<&'static str> {
    entries.iter().filter(|(_, covered, why)| !covered && why.is_none_or(|w| w.trim().is_empty() || w == NO_REASON)).map(|e| e.0).collect()
}

fn generic<P: Plugin>(plugin: &P, space: &dyn SearchSpace<P::Card, P::Claim, P::Scenario>) -> Vec<Entry> {
    plugin.builtin_claims().iter().map(|c| (plugin.claim_id(c), space.covers(c), space.not_searched(c))).collect()
}

fn ccyw_entries() -> Vec<Entry> {
    let searched: Vec<&str> = ccyw::search::all_targets().iter().map(|t| t.id()).collect();
    let reasons = ccyw::search::not_searched();
    let reason = |id: &str| reasons.iter().find(|(r, _)| *r == id).map(|(_, why)| *why);
    ccyw::Ccyw.builtin_claims().iter().map(|c| ccyw::Ccyw.claim_id(c)).map(|id| (id, searched.contains(&id), reason(id))).collect()
}

fn clup_entries() -> Vec<Entry> {
    let plugin = clup::Clup;
    plugin.builtin_claims().iter().map(|c| (c.id, clup::search::Space.covers(c), clup::search::why_not_searched(c))).collect()
}

fn all_entries() -> Vec<(&'static str, Vec<Entry>)> {
    vec![
        ("ccyw", ccyw_entries()),
        ("dpgp", generic(&dpgp::family::DpgpFamily, &dpgp::search::Space)),
        ("fedplt", generic(&fedplt::FedPlt, &fedplt::search::Space)),
        ("clup", clup_entries()),
    ]
}

#[test]
fn every_claim_of_the_four_families_is_searched_or_has_a_reason() {
    for (family, entries) in all_entries() {
        assert!(!entries.is_empty(), "{family} has claims");
        assert!(entries.iter().any(|e| e.1), "{family}'s search covers some claim");
        if family == "clup" {
            // Its lemma rows are given a reason in its own table; until then each is named as not in the space.
            assert!(entries.iter().all(|e| e.1 || e.2.is_some_and(|w| !w.is_empty())), "{family}: a claim without a note");
        } else {
            assert_eq!(without_reason(&entries), Vec::<&str>::new(), "{family}: claims neither searched nor given a reason");
        }
    }
}

#[test]
fn the_listed_claims_have_their_reasons() {
    let entries: Vec<Entry> = all_entries().into_iter().flat_map(|(_, e)| e).collect();
    let reason = |id: &str| entries.iter().find(|e| e.0 == id).and_then(|e| e.2).unwrap_or_default();
    assert!(reason("DPGP-T1").contains("O(.)"), "{}", reason("DPGP-T1"));
    assert!(reason("DPGP-C1~visited-sg").contains("rate exponent"));
    assert!(reason("DPGP-C1~rate-inv-T").contains("negative control"));
    assert!(reason("DPGP-R2~factor").contains("ordering"));
    assert!(reason("FEDPLT-A6").contains("yes/no"));
    assert!(reason("FEDPLT-DECAY-RECURSION").contains("algebra"));
    assert_eq!(reason("FEDPLT-PSI-STEP~updated-coordinates"), "", "the psi step is searched");
    assert_eq!(reason("CCYW-L4.4"), "", "a searched lemma has no reason");
    assert_eq!(reason("DPGP-L3"), "", "a searched claim has no reason");
}

#[test]
fn a_claim_with_neither_a_search_nor_a_reason_fails_the_check() {
    let mut entries = generic(&fedplt::FedPlt, &fedplt::search::Space);
    assert!(without_reason(&entries).is_empty());
    entries.push(("FEDPLT-UNLISTED", false, None));
    entries.push(("FEDPLT-BLANK", false, Some("  ")));
    entries.push(("FEDPLT-DEFAULT", false, Some(NO_REASON)));
    assert_eq!(without_reason(&entries), ["FEDPLT-UNLISTED", "FEDPLT-BLANK", "FEDPLT-DEFAULT"]);
}

#[test]
fn the_note_lists_each_claim_left_out_with_its_reason() {
    let note = not_searched_note(&[("A", "why a"), ("B", "why b")]);
    assert_eq!(note, "\nNot searched:\n\n- `A`: why a\n- `B`: why b\n");
    assert_eq!(not_searched_note(&[]), "", "nothing left out, no note");
}
