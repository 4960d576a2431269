//! A FedCLUP claim written in a card, not in Rust (`examples/geometric-rate-clup-card.toml`): a
//! bound formula over the family's symbols, compared with Theorem 2's global error every round.
//! Its verdict and slack as the card expects; the same claim with its bound halved is violated
//! (the negative control); an unknown symbol refused with the field, exit 2 from the command
//! line; reading the card twice gives the same claims.

use std::process::Command;

use fedbounds::error::Error;
use fedbounds::families::clup::check::run_scenario;
use fedbounds::families::clup::family::{parse_card, Card};
use fedbounds::verdict::VerdictKind;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/geometric-rate-clup-card.toml");
const BOUND: &str = "bound = \"rate^(t - 1)*V1\"";

fn text() -> String {
    std::fs::read_to_string(EXAMPLE).expect("the example card")
}

/// The claim's verdict and slack on the card's scenario.
fn outcome(card: &Card) -> (VerdictKind, Option<f64>) {
    assert_eq!(card.defined.len(), 1, "the card defines one claim");
    let defined: Vec<_> = card.defined.iter().map(|c| **c).collect();
    let run = run_scenario(&card.scenarios[0], &defined, 1.0).expect("the scenario runs");
    let r = run.results.iter().find(|r| r.claim == "CLUP-RATE").expect("the claim is compared");
    (r.evaluation.verdict, r.evaluation.slack)
}

#[test]
fn the_example_claim_holds_with_slack_below_two_and_halved_it_is_violated() {
    let card = parse_card(&text(), "example").expect("the example card reads");
    let (verdict, slack) = outcome(&card);
    assert_eq!(verdict, VerdictKind::Holds);
    let slack = slack.expect("a slack where it holds");
    assert!(slack > 1.0 && slack < 2.0, "slack {slack}");
    assert_eq!(card.scenarios[0].expected.get("CLUP-RATE"), Some(&VerdictKind::Holds));

    // The negative control: the same claim mis-stated with half the bound.
    let halved = text().replace(BOUND, "bound = \"rate^(t - 1)*V1/2\"");
    assert_ne!(halved, text());
    let (verdict, slack) = outcome(&parse_card(&halved, "halved").expect("the halved card reads"));
    assert_eq!(verdict, VerdictKind::Violated, "slack {slack:?}");
}

#[test]
fn an_unknown_symbol_is_refused_naming_the_field() {
    let bad = text().replace(BOUND, "bound = \"rate^(t - 1)*V9\"");
    match parse_card(&bad, "bad") {
        Err(Error::InvalidField { field, message, .. }) => {
            assert_eq!(field, "claims[CLUP-RATE].formula.bound");
            assert!(message.contains("unknown symbol `V9`"), "{message}");
        }
        other => panic!("expected an invalid field, got {:?}", other.map(|c| c.defined.len())),
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, &bad).expect("written");
    let out = dir.path().join("out");
    let args = ["check", "--card", path.to_str().expect("utf-8"), "--out", out.to_str().expect("utf-8"), "--no-plots"];
    let run = Command::new(BIN).args(args).env_remove("RUST_BACKTRACE").output().expect("the binary starts");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("claims[CLUP-RATE].formula.bound"), "{stderr}");
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_horizon_only_claim_and_an_unknown_expected_id_are_refused() {
    let horizon = text().replace("compare = \"per-round\"", "compare = \"per-round\"\nat = \"horizon\"");
    assert!(matches!(parse_card(&horizon, "horizon"), Err(Error::InvalidField { field, .. }) if field == "claims[CLUP-RATE].formula.at"));
    let unknown = text().replace("\"CLUP-RATE\" = \"holds\"", "\"CLUP-RATE2\" = \"holds\"");
    assert!(matches!(parse_card(&unknown, "unknown"), Err(Error::InvalidField { field, .. }) if field.ends_with("expected.CLUP-RATE2")));
}

#[test]
fn reading_the_card_twice_gives_the_same_claims() {
    let (a, b) = (parse_card(&text(), "a").expect("reads"), parse_card(&text(), "b").expect("reads"));
    let ids = |c: &Card| c.defined.iter().map(|d| (d.id, d.title, d.metric)).collect::<Vec<_>>();
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(outcome(&a).1.map(f64::to_bits), outcome(&b).1.map(f64::to_bits));
    // The embedded card defines none, before and after reading the example.
    assert!(fedbounds::families::clup::family::embedded_card().expect("reads").defined.is_empty());
}

#[test]
fn conditions_gives_the_card_claims_bound_and_refuses_a_built_in_one() {
    let run = |args: &[&str]| Command::new(BIN).args(args).env_remove("RUST_BACKTRACE").output().expect("the binary starts");
    let out = run(&["conditions", "--card", EXAMPLE, "--set", "t=3", "--set", "V1=2", "--set", "uniform=1"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("CLUP-RATE: applicable") && stdout.contains("bound = 0.5"), "{stdout}");
    let out = run(&["conditions", "--card", EXAMPLE, "--claim", "CLUP-T2", "--set", "t=3"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
