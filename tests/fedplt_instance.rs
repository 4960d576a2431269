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
        ("instance.clients[0].mask[1]", "mask = [1, 2]", "{0, 1}"),
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
    // A mask entry other than 0 or 1 (a fraction, a count, a sign) is refused by its place, not
    // by the TOML parser.
    for entry in ["0.5", "2", "-1", "1.5", "nan"] {
        assert_refused(&explicit(&CLIENT0.replace("mask = [1, 0]", &format!("mask = [1, {entry}]")), TOP), "instance.clients[0].mask[1]", "{0, 1}");
    }
    for factor in ["0.0", "-1.0", "inf", "nan"] {
        assert_refused(&explicit(&format!("{CLIENT0}\nstep_scale = {factor}"), TOP), "instance.clients[0].step_scale", "a factor s_k in");
    }
    assert_refused(&explicit(CLIENT0, "sigma = 0.3\ninitial = [3.0]"), "instance.clients[0].hessian", "1 rows of length 1");
}

/// `fedbounds run FILE --export-instance OUT` refuses `text` with exit 2, naming `field` and
/// `allowed`, writing nothing.
fn assert_refused(text: &str, field: &str, allowed: &str) {
    // One folder per call: the tests run in parallel.
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let (file, out) = (dir.join("bad.toml"), dir.join("out.toml"));
    std::fs::write(&file, text).expect("the scenario is written");
    let o = Command::new(BIN).arg("run").arg(&file).arg("--export-instance").arg(&out).output().expect("the binary runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{field}: exit 2 expected\n{stderr}\n{text}");
    assert!(stderr.contains(field) && stderr.contains(allowed), "{field} / {allowed} not named:\n{stderr}");
    assert!(!out.exists(), "{field}: nothing may be written");
}

#[test]
fn the_cli_writes_an_explicit_file_that_runs_the_same() {
    // Negative control: the good input is accepted, so the refusals above are not blanket ones.
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let (file, out) = (dir.join("good.toml"), dir.join("out.toml"));
    let text = &card_files()[0].1;
    std::fs::write(&file, text).expect("the scenario is written");
    let o = Command::new(BIN).arg("run").arg(&file).arg("--export-instance").arg(&out).output().expect("the binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(&out).expect("the explicit file is written");
    assert_eq!(unhashed(run(text)), unhashed(run(&written)));
}

/// One client, full mask, `tau = 1`, constant step 0.3, with `noise` (a `noise_cov` line or
/// none) and `top` (the `sigma` line or none).
fn one_client(top: &str, noise: &str) -> String {
    format!(
        "family = \"fedplt\"\nname = \"one\"\nrounds = 12\nreplicates = 1\nseed = 5\ntau = 1\nstep = {{ constant = 0.3 }}\n\
         [instance]\n{top}\ninitial = [3.0, -2.0]\n[[instance.clients]]\nweight = 1.0\nhessian = [[2.0, 0.5], [0.5, 1.0]]\n\
         optimum = [1.0, 0.0]\nmask = [1, 1]\n{noise}\n"
    )
}

const S: [[f64; 2]; 2] = [[0.2, 0.05], [0.05, 0.1]];

/// `D^t = tr(P_t)`, `P_{t+1} = A P_t A^T + eta^2 S`, `A = I - eta H`, `P_0 = e_0 e_0^T`: one
/// client with a full mask and `psi = 1` runs SGD `e_{t+1} = A e_t - eta R xi` with `R R^T = S`.
fn closed_form(s: [[f64; 2]; 2], rounds: usize) -> Vec<f64> {
    use nalgebra::{Matrix2, Vector2};
    let (eta, h) = (0.3, Matrix2::new(2.0, 0.5, 0.5, 1.0));
    let a = Matrix2::identity() - h * eta;
    let e0 = Vector2::new(2.0, -2.0);
    let mut p = e0 * e0.transpose();
    let mut out = vec![p.trace()];
    for _ in 0..rounds {
        p = a * p * a.transpose() + Matrix2::new(s[0][0], s[0][1], s[1][0], s[1][1]) * (eta * eta);
        out.push(p.trace());
    }
    out
}

fn distance(text: &str) -> (Vec<f64>, f64, f64) {
    use fedbounds::families::fedplt::{card::scenario_file, check::run_scenario};
    let run = run_scenario(&scenario_file(text, "test.toml").expect("the scenario parses"), &[], 1.0).expect("the scenario runs");
    (run.distance, run.steps.update_noise, run.constants.sigma2)
}

#[test]
fn anisotropic_noise_matches_the_closed_form_on_one_client() {
    let rows = format!("noise_cov = [[{}, {}], [{}, {}]]", S[0][0], S[0][1], S[1][0], S[1][1]);
    let (d, update_noise, sigma2) = distance(&one_client("", &rows));
    let truth = closed_form(S, 12);
    assert_eq!(d.len(), truth.len());
    for (t, (x, y)) in d.iter().zip(&truth).enumerate() {
        assert!((x - y).abs() <= 1e-12 * y, "D^{t}: {x} vs closed form {y}");
    }
    // sigma^2 = tr(S), and the update's noise sum_i psi_i^2 c^2 S_ii = tr(S) with one client.
    assert!((sigma2 - 0.3).abs() <= 1e-15 && (update_noise - 0.3).abs() <= 1e-15, "{sigma2} {update_noise}");
    // Negative control: isotropic noise of the same trace (sigma^2 = 0.3) runs to another D^t,
    // which the same comparison refuses.
    let (iso, _, _) = distance(&one_client("sigma = 0.5477225575051661", ""));
    assert!(iso.iter().zip(&truth).skip(1).any(|(x, y)| (x - y).abs() > 1e-6 * y), "isotropic noise must differ");
    let iso_truth = closed_form([[0.15, 0.0], [0.0, 0.15]], 12);
    assert!(iso.iter().zip(&iso_truth).all(|(x, y)| (x - y).abs() <= 1e-12 * y), "the isotropic closed form, S = (sigma^2 / d) I");
    // The explicit form with covariances round-trips.
    let text = one_client("", &rows);
    let exported = export(&text);
    assert!(exported.contains("noise_cov") && !exported.contains("sigma ="), "{exported}");
    assert_eq!(unhashed(run(&text)), unhashed(run(&exported)));
}

#[test]
fn bad_noise_covariances_are_named() {
    let rows = "noise_cov = [[0.2, 0.05], [0.05, 0.1]]";
    assert_refused(&one_client("sigma = 0.3", rows), "instance.clients[0].noise_cov", "either instance.sigma");
    assert_refused(&one_client("", ""), "instance.clients[0].noise_cov", "either instance.sigma");
    assert_refused(&one_client("", "noise_cov = [[0.2, 0.0], [0.0, -0.1]]"), "instance.clients[0].noise_cov", "positive semidefinite");
    assert_refused(&one_client("", "noise_cov = [[0.2, 0.1], [0.0, 0.1]]"), "instance.clients[0].noise_cov", "symmetric");
    assert_refused(&one_client("", "noise_cov = [[0.2]]"), "instance.clients[0].noise_cov", "2 rows of length 2");
}

/// `examples/fedplt-explicit.toml` (two clients, overlapping masks, anisotropic noise) runs, its
/// `sigma^2` is the largest trace of its covariances (0.05, client 2; client 1's is 0.04), and
/// exporting it writes the same instance back (comments and empty expectation tables aside).
/// Negative control: the same file with client 2's covariance scaled by 2 reads a different
/// `sigma^2`.
#[test]
fn the_explicit_example_runs_and_exports_to_itself() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/fedplt-explicit.toml")).expect("the example");
    let sigma2 = |v: &Value| v["constants"]["sigma2"].as_f64().expect("constants.sigma2");
    let ran = run(&text);
    assert!((sigma2(&ran) - 0.05).abs() < 1e-15, "sigma^2 = max_k tr S_k = 0.05: {}", sigma2(&ran));
    let entries = |t: &str| -> Vec<String> {
        t.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty() && !l.starts_with("[expected")).map(str::to_string).collect()
    };
    assert_eq!(entries(&export(&text)), entries(&text), "the export writes the example's instance back");
    let doubled = text
        .replace("noise_cov = [[0.01, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 0.03]]", "noise_cov = [[0.02, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.06]]");
    assert_ne!(doubled, text, "the control edits the file");
    assert!((sigma2(&run(&doubled)) - 0.1).abs() < 1e-15, "the doubled covariance is read");
}
