//! FedCLUP's explicit data: `run --export-instance` writes a scenario's design draws by their
//! numbers, and the written file runs to the same JSON (the scenario hash aside) for every
//! scenario of the card (shortened to 10 rounds); a changed feature changes the run; bad explicit
//! data refused with the field and its range (exit 2, nothing written). Each test has a negative
//! control.

use std::process::Command;

use fedbounds::families::clup::check::Scenario;
use fedbounds::families::clup::family::embedded_card;
use fedbounds::families::clup::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

fn run(text: &str) -> Value {
    serde_json::from_str(&FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")).expect("JSON")
}

fn export(text: &str) -> String {
    FAMILY.export_instance(text, "test.toml").expect("the design draws export")
}

/// The run's JSON without its scenario hash (which covers the model as written).
fn without_hash(mut v: Value) -> Value {
    v.as_object_mut().expect("an object").remove("scenario_hash");
    v
}

/// The card's scenarios as scenario files, shortened: the round trip is about the data, which every
/// round and every lambda reads, so 10 rounds and two lambdas of a sweep see all of it.
fn card_scenarios() -> Vec<(String, String)> {
    let card = embedded_card().expect("the card reads");
    let short = |s: &Scenario| {
        let mut s = s.clone();
        s.rounds = s.rounds.min(10);
        s.lambda_sweep.truncate(2);
        s
    };
    card.scenarios.iter().map(|s| (s.name.clone(), format!("family = \"clup\"\n{}", toml::to_string(&short(s)).expect("a scenario serializes")))).collect()
}

/// The text after the first line (the header naming the source).
fn body(t: &str) -> String {
    t.split_once('\n').map(|(_, b)| b.to_string()).unwrap_or_default()
}

/// Every `part`-th scenario of the card (from `first`) exports, runs to the same JSON but its
/// hash, and its export exports to itself.
fn round_trips(first: usize, part: usize) {
    for (name, text) in card_scenarios().into_iter().skip(first).step_by(part) {
        let exported = export(&text);
        assert!(exported.contains("[[model.draws.clients]]") && !exported.contains("seed ="), "{name}: explicit form only\n{exported}");
        let (a, b) = (run(&text), run(&exported));
        // The hash covers the model as written: a recipe's export hashes otherwise, explicit
        // data's is itself.
        assert_eq!(a["scenario_hash"] == b["scenario_hash"], text.contains("[[model.draws]]"), "{name}: the scenario hash");
        assert_eq!(without_hash(a), without_hash(b), "{name}: the exported file runs to another JSON");
        assert_eq!(body(&export(&exported)), body(&exported), "{name}: export is not a fixed point");
    }
}

#[test]
fn card_scenarios_round_trip_first_half() {
    round_trips(0, 2);
}

#[test]
fn card_scenarios_round_trip_second_half() {
    round_trips(1, 2);
}

/// A short scenario of the card's low-r model.
const LOW_R: &str = "family = \"clup\"\nname = \"short\"\nmodel = { m = 4, n = 8, d = 2, r = 0.05, l = 1.0, noise = 0.5, seed = 1 }\n\
                     lambda = 0.5\nrounds = 30\nbatch = 2\n";

#[test]
fn a_feature_changed_by_1e_6_changes_the_run() {
    // Negative control of the round trip: the comparison sees one feature moved by 1e-6.
    let exported = export(LOW_R);
    let line = exported.lines().find(|l| l.starts_with("features = [[")).expect("a features line");
    let rest = line.strip_prefix("features = [[").expect("a features line");
    let (first, tail) = rest.split_once(',').expect("two entries");
    let x: f64 = first.trim().parse().expect("a number");
    // Towards zero, so that the stated rho^2 = s^2 L stays above the data's.
    let perturbed = exported.replacen(line, &format!("features = [[{},{tail}", x - 1e-6 * x.signum()), 1);
    assert_ne!(perturbed, exported);
    let (a, b) = (without_hash(run(&exported)), without_hash(run(&perturbed)));
    assert_ne!(a["constants"], b["constants"]);
    assert_ne!(a["global_error"], b["global_error"]);
    // ... and the unperturbed file runs to the recipe's JSON.
    assert_eq!(a, without_hash(run(LOW_R)));
}

fn example() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/clup-explicit.toml")).expect("the example reads")
}

/// The error of running `text`, as text, or `None` when it runs.
fn refusal(text: &str) -> Option<String> {
    match FAMILY.run(text, "test.toml", &RunOptions::default()) {
        Ok(_) => None,
        Err(e) => {
            assert!(e.is_bad_input(), "{e}");
            Some(e.to_string())
        }
    }
}

/// The example with its first client only.
fn one_client(text: &str) -> String {
    let parts: Vec<&str> = text.split("\n[[model.draws.clients]]").collect();
    format!("{}\n[[model.draws.clients]]{}", parts[0], parts[1])
}

#[test]
fn bad_explicit_data_is_refused_with_the_field_and_its_range() {
    let text = example();
    // Client 1's numbers (client 0 sets n and d).
    let first = "features = [[0.9, -0.4], [0.1, 1.1], [-0.8, 0.3], [0.5, 0.6]]";
    let labels = "labels = [0.882, 0.372, -0.3, 0.827]";
    let truth = "ground_truth = [1.2, 0.3]";
    let cases: Vec<(String, &str)> = vec![
        (text.replacen(first, "features = [[0.9, -0.4], [0.1, 1.1], [-0.8, 0.3]]", 1), "model.draws[0].clients[1].features"),
        (text.replacen(first, "features = [[0.9, -0.4, 0.0], [0.1, 1.1], [-0.8, 0.3], [0.5, 0.6]]", 1), "model.draws[0].clients[1].features"),
        (text.replacen(first, "features = [[0.9, nan], [0.1, 1.1], [-0.8, 0.3], [0.5, 0.6]]", 1), "model.draws[0].clients[1].features[0][1]"),
        (text.replacen(first, "features = [[0.9, inf], [0.1, 1.1], [-0.8, 0.3], [0.5, 0.6]]", 1), "model.draws[0].clients[1].features[0][1]"),
        (text.replacen(labels, "labels = [0.882, 0.372, -0.3]", 1), "model.draws[0].clients[1].labels"),
        (text.replacen(labels, "labels = [0.882, 0.372, nan, 0.827]", 1), "model.draws[0].clients[1].labels[2]"),
        (text.replacen(truth, "ground_truth = [1.2, 0.3, 0.0]", 1), "model.draws[0].clients[1].ground_truth"),
        // Client 0's ground truth of the wrong length is the field at fault (its features had been).
        (text.replacen("ground_truth = [1.0, 0.5]", "ground_truth = [1.0, 0.5, 0.0]", 1), "model.draws[0].clients[0].ground_truth"),
        // Fewer samples than the dimension in client 0.
        (text.replacen("features = [[1.0, 0.2], [-0.3, 0.9], [0.6, -0.7], [0.4, 0.5]]", "features = [[1.0, 0.2]]", 1), "model.draws[0].clients[0].features"),
        (text.replacen("noise = 0.3", "noise = 0.0", 1), "model.noise"),
        (text.replacen("noise = 0.3", "noise = -1.0", 1), "model.noise"),
        (text.replacen("noise = 0.3", "noise = 0.3\nr = -1.0", 1), "model.r"),
        (text.replacen("noise = 0.3", "noise = 0.3\nr = 0.1", 1), "model.r"),
        (text.replacen("noise = 0.3", "noise = 0.3\nrho2 = 0.01", 1), "model.rho2"),
        (text.replacen("noise = 0.3", "noise = 0.3\nrho2 = nan", 1), "model.rho2"),
        (text.replacen("noise = 0.3", "noise = 0.3\nseed = 3", 1), "seed"),
        // A singular design: every feature of client 1 on one line.
        (
            text.replacen("[[0.9, -0.4], [0.1, 1.1], [-0.8, 0.3], [0.5, 0.6]]", "[[1.0, 1.0], [2.0, 2.0], [-1.0, -1.0], [0.5, 0.5]]", 1),
            "model.draws[0].clients[1].features",
        ),
        // One client only.
        (one_client(&text), "model.draws[0].clients"),
        (text.replacen("batch = 2", "batch = 2\ndesigns = 2", 1), "designs"),
        (text.replacen("batch = 2", "batch = 5", 1), "batch"),
    ];
    for (bad, needle) in &cases {
        assert_ne!(bad, &text, "{needle}: the edit applies");
        let e = refusal(bad).unwrap_or_else(|| panic!("{needle}: accepted"));
        assert!(e.contains(needle), "{needle}: {e}");
    }
    // Negative control: the example as written runs; a valid stated R and rho^2 (above the
    // data's) are accepted.
    assert_eq!(refusal(&text), None);
    assert_eq!(refusal(&text.replacen("noise = 0.3", "noise = 0.3\nr = 0.3\nrho2 = 0.1", 1)), None);
}

#[test]
fn the_command_line_exports_and_refuses_bad_data_writing_nothing() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let source = dir.join("short.toml");
    std::fs::write(&source, LOW_R).expect("written");
    let (exported, out) = (dir.join("short.explicit.toml"), dir.join("short.json"));
    let cli = |args: &[&str]| Command::new(BIN).args(args).output().expect("the binary runs");
    let first = cli(&["run", source.to_str().unwrap(), "--export-instance", exported.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let again = cli(&["run", exported.to_str().unwrap()]);
    assert!(again.status.success());
    let parse = |s: &str| without_hash(serde_json::from_str(s).expect("JSON"));
    assert_eq!(parse(&String::from_utf8_lossy(&again.stdout)), parse(&std::fs::read_to_string(&out).expect("the run's JSON")));
    // Bad data: exit 2, the field named, no export and no output.
    let wrong = dir.join("wrong.toml");
    std::fs::write(&wrong, example().replacen("labels = [0.882, 0.372, -0.3, 0.827]", "labels = [0.882]", 1)).expect("written");
    let (refused, json) = (dir.join("refused.toml"), dir.join("refused.json"));
    let bad = cli(&["run", wrong.to_str().unwrap(), "--export-instance", refused.to_str().unwrap(), "--out", json.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("model.draws[0].clients[1].labels") && !stderr.contains("panicked"), "{stderr}");
    assert!(!refused.exists() && !json.exists());
    // Negative control: the example itself runs through the command line.
    let ok = cli(&["run", concat!(env!("CARGO_MANIFEST_DIR"), "/examples/clup-explicit.toml")]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}
