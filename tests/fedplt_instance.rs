//! FedPLT's explicit instances: `run --export-instance` writes the instance a scenario's seeded
//! recipe produced (Hessians, optima, weights, masks, `W^0`, `sigma`), and running the written
//! file gives the same results for every scenario of the embedded card; bad explicit inputs are
//! refused with the field and its range (exit 2, nothing written). Each test has a negative
//! control that shows it can fail.

use std::process::Command;

use fedbounds::families::fedplt::family::embedded_card;
use fedbounds::families::fedplt::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

fn run(text: &str) -> Value {
    serde_json::from_str(&FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")).expect("run JSON")
}

/// The run JSON without its scenario hash (which covers the instance as written, recipe or
/// numbers, and so differs between a scenario and its export by design).
fn unhashed(mut v: Value) -> Value {
    let hash = v.as_object_mut().and_then(|o| o.remove("scenario_hash"));
    assert!(hash.is_some(), "the run JSON has a scenario_hash");
    v
}

fn export(text: &str) -> String {
    FAMILY.export_instance(text, "test.toml").expect("the instance exports")
}

/// The card's scenarios as scenario files.
fn card_files() -> Vec<(String, String)> {
    let card = embedded_card().expect("the embedded card parses");
    card.card.scenarios.iter().map(|s| (s.name.clone(), format!("family = \"fedplt\"\n{}", toml::to_string(s).expect("a scenario serializes")))).collect()
}

#[test]
fn every_card_scenario_round_trips_through_its_explicit_form() {
    let files = card_files();
    assert!(files.len() >= 5, "the card has its scenarios");
    for (name, text) in files {
        let exported = export(&text);
        assert!(exported.contains("[[instance.clients]]") && !exported.contains("init_distance"), "{name}: explicit form only\n{exported}");
        assert_eq!(unhashed(run(&text)), unhashed(run(&exported)), "{name}: the exported file runs to other results");
        // The explicit form of an explicit file is itself (after the header naming the source).
        let body = |t: &str| t.split_once('\n').map(|(_, b)| b.to_string()).unwrap_or_default();
        assert_eq!(body(&export(&exported)), body(&exported), "{name}: export is not a fixed point");
    }
}

#[test]
fn a_changed_exported_number_changes_the_run() {
    // Negative control of the round trip: the comparison sees a 1e-6 change of one optimum entry.
    let (name, text) = card_files().into_iter().next().expect("a card scenario");
    let exported = export(&text);
    let line = exported.lines().find(|l| l.starts_with("optimum = [")).expect("an optimum line");
    let perturbed = exported.replacen(line, &perturb_first(line), 1);
    assert_ne!(perturbed, exported);
    assert_ne!(unhashed(run(&exported)), unhashed(run(&perturbed)), "{name}: a perturbed a_0 must change the run");
}

/// `optimum = [x, ...]` with `x` replaced by `x + 1e-6`.
fn perturb_first(line: &str) -> String {
    let rest = line.strip_prefix("optimum = [").expect("an optimum line");
    let (first, tail) = rest.split_once(',').expect("two entries");
    let x: f64 = first.trim().parse().expect("a number");
    format!("optimum = [{},{tail}", x + 1e-6)
}

/// A two-client explicit instance in dimension 2 with `keys` replacing its defaults.
fn explicit(client0: &str, top: &str) -> String {
    format!(
        "family = \"fedplt\"\nname = \"hand\"\nrounds = 20\nreplicates = 2\nseed = 3\ntau = 2\nstep = {{ constant_over_l = 0.5 }}\n\
         [instance]\n{top}\n[[instance.clients]]\n{client0}\n\
         [[instance.clients]]\nweight = 0.5\nhessian = [[1.0, 0.0], [0.0, 0.5]]\noptimum = [0.0, 1.0]\nmask = [1, 1]\n"
    )
}

const CLIENT0: &str = "weight = 0.5\nhessian = [[2.0, 0.5], [0.5, 1.0]]\noptimum = [1.0, 0.0]\nmask = [1, 0]";
const TOP: &str = "sigma = 0.3\ninitial = [3.0, -2.0]";

#[test]
fn a_hand_written_instance_runs_and_bad_fields_are_named() {
    let good = explicit(CLIENT0, TOP);
    let v = run(&good);
    assert_eq!(v["scenario"], "hand", "{v}");
    let bad: [(&str, &str, &str); 11] = [
        ("instance.clients[0].hessian", "hessian = [[2.0, 0.5], [0.4, 1.0]]", "symmetric"),
        ("instance.clients[0].hessian", "hessian = [[2.0, 0.0], [0.0, -1.0]]", "positive definite"),
        ("instance.clients[0].hessian", "hessian = [[2.0, 0.0]]", "2 rows of length 2"),
        ("instance.clients[0].hessian[1]", "hessian = [[2.0, 0.0], [0.0, nan]]", "finite"),
        ("instance.clients[0].optimum", "optimum = [1.0]", "length d = 2"),
        ("instance.clients[0].optimum[0]", "optimum = [inf, 0.0]", "finite"),
        ("instance.clients[0].mask", "mask = [1, 0, 1]", "length d = 2"),
        ("instance.clients[0].mask[1]", "mask = [1, 2]", "0 or 1"),
        ("instance.clients[0].weight", "weight = 0.0", "0 < c_k <= 1"),
        ("instance.clients[].weight", "weight = 0.6", "summing to 1"),
        ("instance.masks", "mask = [0, 0]", "cover"),
    ];
    for (field, line, allowed) in bad {
        let key = line.split(" = ").next().unwrap_or_default();
        let client0: String =
            CLIENT0.lines().map(|l| if l.starts_with(&format!("{key} = ")) { line.to_string() } else { l.to_string() }).collect::<Vec<_>>().join("\n");
        let text = explicit(&client0, TOP).replace("mask = [1, 1]", if field == "instance.masks" { "mask = [0, 0]" } else { "mask = [1, 1]" });
        assert_refused(&text, field, allowed);
    }
    assert_refused(&explicit(CLIENT0, "sigma = -0.1\ninitial = [3.0, -2.0]"), "instance.sigma", "[0, ");
    assert_refused(&explicit(CLIENT0, "sigma = 0.3\ninitial = [3.0]"), "instance.clients[0].hessian", "1 rows of length 1");
}

/// `fedbounds run FILE --export-instance OUT` refuses `text` with exit 2, naming `field` and
/// `allowed`, writing nothing.
fn assert_refused(text: &str, field: &str, allowed: &str) {
    let dir = std::env::temp_dir().join(format!("fedplt-instance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let (file, out) = (dir.join("bad.toml"), dir.join("out.toml"));
    std::fs::write(&file, text).expect("the scenario is written");
    let _ = std::fs::remove_file(&out);
    let o = Command::new(BIN).arg("run").arg(&file).arg("--export-instance").arg(&out).output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{field}: exit 2 expected\n{stderr}\n{text}");
    assert!(stderr.contains(field) && stderr.contains(allowed), "{field} / {allowed} not named:\n{stderr}");
    assert!(!out.exists(), "{field}: nothing may be written");
}

#[test]
fn the_cli_writes_an_explicit_file_that_runs_the_same() {
    // Negative control: the good input is accepted, so the refusals above are not blanket ones.
    let dir = std::env::temp_dir().join(format!("fedplt-instance-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let (file, out) = (dir.join("good.toml"), dir.join("out.toml"));
    let text = &card_files()[0].1;
    std::fs::write(&file, text).expect("the scenario is written");
    let o = Command::new(BIN).arg("run").arg(&file).arg("--export-instance").arg(&out).output().expect("the binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(&out).expect("the explicit file is written");
    assert_eq!(unhashed(run(text)), unhashed(run(&written)));
}
