//! Bad input on the command line: every case must exit 2 (bad input) with a message naming the
//! field at fault and its allowed range, never panic, and leave no output behind (no report, no
//! `--out` file, no `*.partial` file). A valid explicit scenario is run too, and the assertion
//! helper is shown to fail on a good input, so a passing test here means something.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

/// Exit code, stdout, stderr of one run of the binary.
type Outcome = (i32, String, String);

/// Runs the binary with `args`; returns (exit code, stdout, stderr). A death by signal is -1.
fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE").output().expect("the fedbounds binary starts");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Asserts a bad-input outcome: exit code 2, no panic, nothing on standard output, and a message
/// on standard error that contains every one of `needles` (the field and its allowed range).
fn assert_bad_input(what: &str, got: &(i32, String, String), needles: &[&str]) {
    let (code, stdout, stderr) = got;
    assert!(!stderr.contains("panicked"), "{what}: the binary panicked\nstderr:\n{stderr}");
    assert_eq!(*code, 2, "{what}: expected exit code 2 (bad input)\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.trim().is_empty(), "{what}: bad input must print nothing on stdout, got:\n{stdout}");
    assert!(stderr.contains("error:"), "{what}: no error message\nstderr:\n{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{what}: stderr does not contain `{n}`\nstderr:\n{stderr}");
    }
}

/// Names of the entries of `dir` (sorted); empty when `dir` does not exist.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Every file under `dir`, recursively (paths relative to `dir`).
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        if let Ok(rd) = std::fs::read_dir(d) {
            for e in rd {
                let p = e.expect("dir entry").path();
                if p.is_dir() {
                    walk(base, &p, out);
                } else {
                    out.push(p.strip_prefix(base).unwrap_or(&p).display().to_string());
                }
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

// ------------------------------------------------------------------------------------------------
// Scenario files.

/// A small valid explicit scenario: n = 3 clients, du = dv = 1, 2x2 SPD Hessians, small noise.
/// Every mutation below replaces one exact, unique piece of this text.
const VALID: &str = r#"name = "tiny-explicit"
description = "three clients, du = dv = 1"
rounds = 20
replicates = 4
seed = 7

[algorithm]
k = 2
m = 2
gamma = 0.05
eta_u = 1.0
eta_v = 1.0

[instance.explicit]
du = 1
dv = 1
noise_u_cov = [[0.01]]
noise_v_cov = [[0.02]]
u0 = [1.0]

[[instance.explicit.clients]]
hessian = [[2.0, 0.5], [0.5, 1.0]]
linear = [1.0, -1.0]
v0 = [0.5]

[[instance.explicit.clients]]
hessian = [[1.5, 0.2], [0.2, 2.0]]
linear = [0.0, 1.0]
v0 = [-0.5]

[[instance.explicit.clients]]
hessian = [[1.0, -0.3], [-0.3, 1.5]]
linear = [-1.0, 0.5]
v0 = [0.0]
"#;

/// `VALID` with each `(from, to)` applied; each `from` must occur exactly once, so a mutation
/// that silently fails to apply is caught here rather than passing as "valid".
fn mutate(edits: &[(&str, &str)]) -> String {
    let mut s = VALID.to_string();
    for (from, to) in edits {
        assert_eq!(s.matches(from).count(), 1, "mutation `{from}` must match exactly once");
        s = s.replacen(from, to, 1);
    }
    s
}

/// Writes `text` as `scenario.toml` in a fresh temp dir.
fn scenario_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("scenario.toml");
    std::fs::write(&path, text).expect("write scenario");
    (dir, path)
}

/// Runs `run FILE` twice on a bad scenario: to stdout, and with `--out DIR/OUT.json`. Both must be
/// bad input naming `needles`; the second must leave the directory as it was (no OUT.json and no
/// `*.partial`).
fn assert_bad_scenario(what: &str, text: &str, needles: &[&str]) {
    let (dir, file) = scenario_file(text);
    let file_s = file.to_str().expect("utf-8 path");
    let got = run(&["run", file_s]);
    assert_bad_input(what, &got, needles);

    let out = dir.path().join("OUT.json");
    let got = run(&["run", file_s, "--out", out.to_str().expect("utf-8 path")]);
    assert_bad_input(&format!("{what} (--out)"), &got, needles);
    assert!(!out.exists(), "{what}: OUT.json written despite bad input");
    assert_eq!(entries(dir.path()), vec!["scenario.toml".to_string()], "{what}: files left behind");
}

// ------------------------------------------------------------------------------------------------
// The helpers themselves.

#[test]
fn assertion_helper_can_fail() {
    // Each case below must make `assert_bad_input` panic (the panic messages in the test output
    // are expected). A helper that never fails would make every other test here vacuous.
    let must_fail: Vec<(&str, Outcome, Vec<&str>)> = vec![
        ("exit 0", (0, String::new(), "error: invalid `x` (allowed: y)".into()), vec!["x"]),
        ("exit 3", (3, String::new(), "error: invalid `x` (allowed: y)".into()), vec!["x"]),
        ("panic", (2, String::new(), "thread 'main' panicked at src/main.rs\nerror: x".into()), vec!["x"]),
        ("needle missing", (2, String::new(), "error: invalid `x` (allowed: y)".into()), vec!["z"]),
        ("stdout not empty", (2, "{\"partial\": 1}".into(), "error: invalid `x` (allowed: y)".into()), vec!["x"]),
    ];
    for (what, got, needles) in must_fail {
        let r = std::panic::catch_unwind(|| assert_bad_input(what, &got, &needles));
        assert!(r.is_err(), "assert_bad_input accepted a bad outcome: {what}");
    }
    // ...and it accepts a well-formed bad-input outcome.
    assert_bad_input("synthetic ok", &(2, String::new(), "error: invalid `x`: got 0 (allowed: y)".into()), &["`x`", "y"]);

    // On a real, valid input (exit 0, JSON on stdout) it fails.
    let (_dir, file) = scenario_file(VALID);
    let good = run(&["run", file.to_str().expect("utf-8 path")]);
    assert_eq!(good.0, 0, "the valid scenario must run: {}", good.2);
    let r = std::panic::catch_unwind(|| assert_bad_input("valid scenario", &good, &["algorithm.m"]));
    assert!(r.is_err(), "assert_bad_input accepted a successful run");
}

#[test]
fn mutate_rejects_a_mutation_that_does_not_apply() {
    let r = std::panic::catch_unwind(|| mutate(&[("m = 99\n", "m = 2\n")]));
    assert!(r.is_err());
}

// ------------------------------------------------------------------------------------------------
// Case 7: a valid explicit scenario runs and writes JSON.

#[test]
fn valid_explicit_scenario_writes_json() {
    let (dir, file) = scenario_file(VALID);
    let out = dir.path().join("OUT.json");
    let (code, stdout, stderr) = run(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let text = std::fs::read_to_string(&out).expect("OUT.json written");
    let json: serde_json::Value = serde_json::from_str(&text).expect("OUT.json is JSON");
    for key in ["constants", "rounds", "verdicts"] {
        assert!(json.get(key).is_some(), "OUT.json lacks `{key}`: {text}");
    }
    assert_eq!(json["rounds"].as_array().map(Vec::len), Some(20), "one row per round");
    assert!(json["verdicts"].as_array().is_some_and(|v| !v.is_empty()), "verdicts listed");
    assert_eq!(entries(dir.path()), vec!["OUT.json".to_string(), "scenario.toml".to_string()], "no *.partial left behind");

    // Without --out the same JSON goes to stdout.
    let (code, stdout, stderr) = run(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let json2: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(json2["constants"], json["constants"]);
    assert_eq!(json2["rounds"], json["rounds"]);
}

#[test]
fn a_scenario_names_its_family() {
    // Naming the family explicitly runs the same scenario to the same numbers.
    let (_dir, plain) = scenario_file(VALID);
    let (_dir2, named) = scenario_file(&format!("family = \"ccyw\"\n{VALID}"));
    let (code_a, out_a, err_a) = run(&["run", plain.to_str().unwrap()]);
    let (code_b, out_b, err_b) = run(&["run", named.to_str().unwrap()]);
    assert_eq!((code_a, code_b), (0, 0), "{err_a}\n{err_b}");
    assert_eq!(out_a, out_b, "the family key changes nothing else, not even the scenario hash");
    // An unknown family is bad input that lists the registered ones.
    assert_bad_scenario("family = nope", &format!("family = \"nope\"\n{VALID}"), &["unknown family `nope`", "ccyw"]);
}

#[test]
fn run_takes_the_estimator_flag() {
    let (_dir, file) = scenario_file(VALID);
    let (code, stdout, stderr) = run(&["run", file.to_str().unwrap(), "--estimator", "monte-carlo"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(json["estimator"], "monte-carlo");
    assert_eq!(json["replicates"], 4);
    let (code, stdout, _) = run(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(json["estimator"], "exact", "the scenario's own estimator without the flag");
}

#[test]
fn an_estimator_a_family_does_not_offer_is_refused_before_any_work() {
    // FedPLT's and FedCLUP's claims are on exact quantities: Monte Carlo there would be ignored.
    for file in ["examples/fedplt-explicit.toml", "examples/clup-explicit.toml"] {
        assert_bad_input(file, &run(&["run", file, "--estimator", "monte-carlo"]), &["`--estimator`", "does not offer it", "exact"]);
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let all = run(&["check", "--estimator", "monte-carlo", "--out", out.to_str().unwrap()]);
    assert_bad_input("check of every family", &all, &["`--estimator`", "`fedplt`"]);
    assert!(!out.exists(), "nothing written");
    // Controls: exact is offered everywhere; Monte Carlo where the family offers it (above).
    assert_eq!(run(&["run", "examples/clup-explicit.toml", "--estimator", "exact"]).0, 0);
}

#[test]
fn run_never_writes_over_its_input_or_before_it_is_known_to_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("c.toml");
    std::fs::copy("examples/clup-explicit.toml", &input).unwrap();
    let original = std::fs::read(&input).unwrap();
    let f = input.to_str().unwrap();
    assert_bad_input("--out = input", &run(&["run", f, "--out", f]), &["`--out`", "the scenario file being run"]);
    let both = dir.path().join("o.json");
    let b = both.to_str().unwrap();
    assert_bad_input("--out = --export-instance", &run(&["run", f, "--out", b, "--export-instance", b]), &["`--export-instance`", "also --out"]);
    // A run refused by its work budget writes no exported instance either.
    let export = dir.path().join("x.toml");
    assert_bad_input("over budget", &run(&["run", f, "--export-instance", export.to_str().unwrap(), "--max-work", "1"]), &["budget"]);
    assert!(!export.exists() && !both.exists(), "nothing written");
    assert_eq!(std::fs::read(&input).unwrap(), original, "the input is untouched");
    // Control: a run that succeeds writes both.
    let (code, _, stderr) = run(&["run", f, "--out", b, "--export-instance", export.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(export.exists() && both.exists());
}

#[test]
fn bench_refuses_a_scaling_folder_that_is_a_file_before_timing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "x").unwrap();
    // Refused before any workload runs (it had been refused with exit 3 after minutes of timing).
    assert_bad_input("--scaling FILE", &run(&["bench", "--repeats", "1", "--scaling", file.to_str().unwrap()]), &["`--scaling`", "not a folder"]);
    assert_eq!(std::fs::read(&file).unwrap(), b"x", "the file is untouched");
}

#[test]
fn conditions_refuses_constants_beyond_the_magnitudes_of_scenario_files() {
    let base = [
        "conditions",
        "--n",
        "10",
        "--m",
        "9",
        "--k",
        "25",
        "--rounds",
        "1000",
        "--f0",
        "4.5",
        "--b2",
        "1",
        "--sigma-u2",
        "0.25",
        "--sigma-v2",
        "0.25",
        "--b0",
        "1",
    ];
    for l in ["1e308", "5e-324", "-1e200"] {
        let mut args = base.to_vec();
        args.extend(["--l", l]);
        assert_bad_input(l, &run(&args), &["`--l`", "[1e-100, 1e100]"]);
    }
    let mut args = base.to_vec();
    args.extend(["--l", "1"]);
    assert_eq!(run(&args).0, 0, "control: L = 1");
}

#[test]
fn an_input_file_without_end_or_text_is_bad_input_naming_it() {
    assert_bad_input("run /dev/zero", &run(&["run", "/dev/zero"]), &["/dev/zero", "larger than 64 MiB"]);
    assert_bad_input("check --card /dev/zero", &run(&["check", "--card", "/dev/zero"]), &["/dev/zero", "larger than 64 MiB"]);
}

#[test]
fn conditions_of_a_card_claim_without_its_values_are_undecided_never_applicable() {
    let card = "examples/sgd-ball-fedplt-card.toml";
    let (code, stdout, stderr) = run(&["conditions", "--card", card]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("SGD-BALL: undecided") && stdout.contains("[??] eta <= 1/L: not checked") && !stdout.contains("bound ="), "{stdout}");
    // Control: every value the claim reads given (as the card's header shows), it is applicable.
    let values = ["eta=0.5", "L=1", "mu=0.2", "sigma2=0.09", "D0=9", "t=299", "psi_min=1", "psi_max=1", "tau=1", "Lambda=0", "constant_step=1"];
    let mut args = vec!["conditions", "--card", card];
    for v in &values {
        args.extend(["--set", v]);
    }
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("SGD-BALL: applicable") && stdout.contains("bound ="), "{stdout}");
}

// ------------------------------------------------------------------------------------------------
// Cases 1-3: `run FILE` with a bad scenario (each also run with --out: no OUT.json, no *.partial).

#[test]
fn unknown_key_at_top_level() {
    let text = mutate(&[("seed = 7\n", "seed = 7\nbogus = 1\n")]);
    assert_bad_scenario("top-level bogus", &text, &["bogus", "unknown field"]);
}

#[test]
fn unknown_key_in_explicit_instance() {
    let text = mutate(&[("du = 1\n", "du = 1\nbogus_key = 3\n")]);
    assert_bad_scenario("instance.explicit bogus_key", &text, &["bogus_key", "unknown field"]);
}

#[test]
fn unknown_key_in_algorithm_and_client() {
    let text = mutate(&[("eta_v = 1.0\n", "eta_v = 1.0\nlocal_steps = 3\n")]);
    assert_bad_scenario("algorithm.local_steps", &text, &["local_steps", "unknown field"]);
    let text = mutate(&[("v0 = [0.5]\n", "v0 = [0.5]\nweight = 2.0\n")]);
    assert_bad_scenario("client weight", &text, &["weight", "unknown field"]);
}

#[test]
fn missing_key_and_syntax_error_and_wrong_type() {
    let text = mutate(&[("seed = 7\n", "")]);
    assert_bad_scenario("missing seed", &text, &["seed", "missing field"]);
    let text = mutate(&[("rounds = 20\n", "rounds = = 20\n")]);
    assert_bad_scenario("syntax error", &text, &["cannot parse", "rounds"]);
    let text = mutate(&[("\nm = 2\n", "\nm = -1\n")]);
    assert_bad_scenario("m = -1 (not a usize)", &text, &["cannot parse", "m = -1"]);
    let text = mutate(&[("\nk = 2\n", "\nk = \"two\"\n")]);
    assert_bad_scenario("k is a string", &text, &["cannot parse", "k = \"two\""]);
}

#[test]
fn m_greater_than_n() {
    let text = mutate(&[("\nm = 2\n", "\nm = 4\n")]);
    assert_bad_scenario("m > n", &text, &["algorithm.m", "got 4", "1 <= m <= n = 3"]);
}

#[test]
fn m_zero() {
    let text = mutate(&[("\nm = 2\n", "\nm = 0\n")]);
    assert_bad_scenario("m = 0", &text, &["algorithm.m", "got 0", "1 <= m <= n = 3"]);
}

#[test]
fn k_zero() {
    let text = mutate(&[("\nk = 2\n", "\nk = 0\n")]);
    assert_bad_scenario("k = 0", &text, &["algorithm.k", "got 0", "an integer >= 1"]);
}

#[test]
fn negative_step() {
    let text = mutate(&[("gamma = 0.05\n", "gamma = -0.1\n")]);
    assert_bad_scenario("gamma = -0.1", &text, &["algorithm.gamma", "-0.1", "a finite number > 0"]);
    let text = mutate(&[("eta_u = 1.0\n", "eta_u = 0.0\n")]);
    assert_bad_scenario("eta_u = 0", &text, &["algorithm.eta_u", "a finite number > 0"]);
    let text = mutate(&[("eta_v = 1.0\n", "eta_v = -2.0\n")]);
    assert_bad_scenario("eta_v = -2", &text, &["algorithm.eta_v", "a finite number > 0"]);
}

#[test]
fn effective_and_inner_steps_together_or_half_given() {
    let both = mutate(&[("gamma = 0.05\n", "gamma = 0.05\ngamma_u = 0.01\ngamma_v = 0.01\n")]);
    assert_bad_scenario("gamma with gamma_u", &both, &["algorithm.gamma", "either gamma, or both gamma_u and gamma_v"]);
    let half = mutate(&[("gamma = 0.05\n", "gamma_u = 0.01\n")]);
    assert_bad_scenario("gamma_u alone", &half, &["algorithm.gamma", "either gamma, or both gamma_u and gamma_v"]);
    let negative = mutate(&[("gamma = 0.05\n", "gamma_u = 0.01\ngamma_v = -0.01\n")]);
    assert_bad_scenario("gamma_v < 0", &negative, &["algorithm.gamma_v", "a finite number > 0"]);
}

#[test]
fn nan_and_infinite_step() {
    let text = mutate(&[("gamma = 0.05\n", "gamma = nan\n")]);
    assert_bad_scenario("gamma = nan", &text, &["algorithm.gamma", "NaN", "a finite number > 0"]);
    let text = mutate(&[("eta_u = 1.0\n", "eta_u = inf\n")]);
    assert_bad_scenario("eta_u = inf", &text, &["algorithm.eta_u", "a finite number > 0"]);
}

#[test]
fn step_rule_naming_unknown_claim_or_bad_factor() {
    let text = mutate(&[("gamma = 0.05\n", "gamma = { admissible = \"NOPE\" }\n")]);
    assert_bad_scenario("admissible = NOPE", &text, &["algorithm.gamma.admissible", "NOPE", "CCYW-T3.7"]);
    let text = mutate(&[("gamma = 0.05\n", "gamma = { admissible = \"CCYW-T3.7\", factor = -1.0 }\n")]);
    assert_bad_scenario("factor = -1", &text, &["algorithm.gamma.factor", "a finite number > 0"]);
    // Every id the message lists is accepted: a lemma's admissible step too (it had been refused
    // as "unknown claim `CCYW-L3.5`" while the list of allowed ids named it).
    let text = mutate(&[("gamma = 0.05\n", "gamma = { admissible = \"CCYW-L3.5\" }\n")]);
    let (_dir, file) = scenario_file(&text);
    let got = run(&["run", file.to_str().unwrap()]);
    assert_eq!(got.0, 0, "a lemma's admissible step: {}", got.2);
}

#[test]
fn run_parameters_out_of_range() {
    let text = mutate(&[("rounds = 20\n", "rounds = 0\n")]);
    assert_bad_scenario("rounds = 0", &text, &["rounds", "an integer >= 1"]);
    let text = mutate(&[("replicates = 4\n", "replicates = 1\n")]);
    assert_bad_scenario("replicates = 1", &text, &["replicates", "an integer >= 2"]);
    let text = mutate(&[("seed = 7\n", "seed = 7\nconfidence = 1.5\n")]);
    assert_bad_scenario("confidence = 1.5", &text, &["confidence", "0 < confidence < 1"]);
    let text = mutate(&[("seed = 7\n", "seed = 7\nconfidence = nan\n")]);
    assert_bad_scenario("confidence = nan", &text, &["confidence", "0 < confidence < 1"]);
    let text = format!("{VALID}\n[expected]\n\"NOPE\" = \"holds\"\n");
    assert_bad_scenario("expected.NOPE", &text, &["expected.NOPE", "unknown claim id", "CCYW-T3.7"]);
}

#[test]
fn threads_zero() {
    let (dir, file) = scenario_file(VALID);
    let out = dir.path().join("OUT.json");
    let got = run(&["run", file.to_str().unwrap(), "--threads", "0", "--out", out.to_str().unwrap()]);
    assert_bad_input("run --threads 0", &got, &["--threads", "an integer >= 1"]);
    assert_eq!(entries(dir.path()), vec!["scenario.toml".to_string()]);
}

#[test]
fn non_symmetric_hessian() {
    let text = mutate(&[("hessian = [[2.0, 0.5], [0.5, 1.0]]", "hessian = [[2.0, 0.5], [0.9, 1.0]]")]);
    assert_bad_scenario("non-symmetric hessian", &text, &["instance.clients[0].hessian", "not symmetric", "a symmetric matrix"]);
}

#[test]
fn wrong_sized_hessian() {
    let text = mutate(&[("hessian = [[1.5, 0.2], [0.2, 2.0]]", "hessian = [[1.5, 0.2, 0.0], [0.2, 2.0, 0.0], [0.0, 0.0, 1.0]]")]);
    assert_bad_scenario("3x3 hessian", &text, &["instance.clients[1].hessian", "2 rows of length 2"]);
    let text = mutate(&[("hessian = [[1.0, -0.3], [-0.3, 1.5]]", "hessian = [[1.0, -0.3], [-0.3]]")]);
    assert_bad_scenario("ragged hessian", &text, &["instance.clients[2].hessian", "2 rows of length 2"]);
}

#[test]
fn non_finite_hessian_entry() {
    let text = mutate(&[("hessian = [[2.0, 0.5], [0.5, 1.0]]", "hessian = [[2.0, 0.5], [0.5, nan]]")]);
    assert_bad_scenario("nan in hessian", &text, &["instance.clients[0].hessian", "a finite number"]);
}

#[test]
fn indefinite_hessian_has_no_minimizer() {
    // C_0 = -1: f is unbounded below in v_0, so F0 is undefined. Not a single field, but the
    // message must say which matrix and why.
    let text = mutate(&[("hessian = [[2.0, 0.5], [0.5, 1.0]]", "hessian = [[2.0, 0.5], [0.5, -1.0]]")]);
    assert_bad_scenario("indefinite hessian", &text, &["Hessian", "eigenvalue"]);
}

#[test]
fn wrong_length_linear_term() {
    let text = mutate(&[("linear = [0.0, 1.0]", "linear = [0.0, 1.0, 2.0]")]);
    assert_bad_scenario("linear of length 3", &text, &["instance.clients[1].linear", "length 3", "du + dv = 2"]);
}

#[test]
fn wrong_length_initial_points() {
    let text = mutate(&[("u0 = [1.0]", "u0 = [1.0, 2.0]")]);
    assert_bad_scenario("u0 of length 2", &text, &["instance.u0", "length du = 1"]);
    let text = mutate(&[("v0 = [-0.5]", "v0 = []")]);
    assert_bad_scenario("v0 of length 0", &text, &["instance.clients[1].v0", "length dv = 1"]);
    // A value that is not finite is named as the file names it (it had been `initial point[k]`).
    let text = mutate(&[("u0 = [1.0]", "u0 = [nan]")]);
    assert_bad_scenario("u0 = [nan]", &text, &["instance.u0[0]", "a finite number"]);
    let text = mutate(&[("v0 = [-0.5]", "v0 = [inf]")]);
    assert_bad_scenario("v0 = [inf]", &text, &["instance.clients[1].v0[0]", "a finite number"]);
}

#[test]
fn non_psd_noise_covariance() {
    let text = mutate(&[("noise_u_cov = [[0.01]]", "noise_u_cov = [[-0.5]]")]);
    assert_bad_scenario("noise_u_cov = [[-0.5]]", &text, &["noise_u_cov", "a positive semidefinite matrix"]);
    // Judged at its own scale: -1e-10 is negative, not rounding (a floor of 1e-9 had taken it for 0).
    let text = mutate(&[("noise_u_cov = [[0.01]]", "noise_u_cov = [[-1e-10]]")]);
    assert_bad_scenario("noise_u_cov = [[-1e-10]]", &text, &["noise_u_cov", "a positive semidefinite matrix"]);
    let text = mutate(&[("noise_v_cov = [[0.02]]", "noise_v_cov = [[0.02, 0.0], [0.0, 0.02]]")]);
    assert_bad_scenario("noise_v_cov 2x2", &text, &["instance.noise_v_cov", "1 rows of length 1"]);
}

#[test]
fn bad_generated_instance() {
    let generated = |fields: &str| {
        format!(
            "name = \"gen\"\nrounds = 5\nreplicates = 2\nseed = 1\n\
             algorithm = {{ k = 1, m = 2, gamma = 0.01, eta_u = 1.0, eta_v = 1.0 }}\n\
             [instance.generated]\n{fields}\n"
        )
    };
    let ok = "n = 4\ndu = 2\ndv = 1\nl = 1.0\nmu = 0.1\nsigma_u = 0.1\nsigma_v = 0.1\nb = 0.5\ncoupling = \"decoupled\"\ninit_distance = 1.0\nseed = 3";
    // The base recipe is valid (so each failure below is due to its one change).
    let (_d, f) = scenario_file(&generated(ok));
    let (code, _, stderr) = run(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 0, "base generated scenario must run: {stderr}");

    assert_bad_scenario("mu > l", &generated(&ok.replace("mu = 0.1", "mu = 2.0")), &["instance.mu", "0 < mu <= l"]);
    assert_bad_scenario("l < 0", &generated(&ok.replace("l = 1.0", "l = -1.0")), &["instance.l", "a number in [1e-100, 1e100]"]);
    assert_bad_scenario("n = 0", &generated(&ok.replace("n = 4", "n = 0")), &["instance.n", "an integer >= 1"]);
    assert_bad_scenario("m > n (generated)", &generated(&ok.replace("n = 4", "n = 1").replace("b = 0.5", "b = 0.0")), &["algorithm.m", "1 <= m <= n = 1"]);
    assert_bad_scenario("sigma_u < 0", &generated(&ok.replace("sigma_u = 0.1", "sigma_u = -0.1")), &["instance.sigma_u", ">= 0"]);
    assert_bad_scenario("coupling typo", &generated(&ok.replace("\"decoupled\"", "\"loose\"")), &["loose", "decoupled"]);
    assert_bad_scenario("generated bogus", &generated(&format!("{ok}\nbogus = 1")), &["bogus", "unknown field"]);
}

#[test]
fn sizes_no_machine_holds_are_bad_input_not_an_abort() {
    // Each would ask for terabytes and years; each must be refused before any allocation, with
    // exit 2 (by the work budget or the memory limit, whichever the size breaks first).
    let huge_rounds = mutate(&[("rounds = 20\n", "rounds = 1000000000000\n")]);
    assert_bad_scenario("rounds = 1e12", &huge_rounds, &["rounds, replicates", "over the budget"]);
    let huge_replicates = mutate(&[("replicates = 4\n", "replicates = 100000000000\n")]);
    assert_bad_scenario("replicates = 1e11", &huge_replicates, &["rounds, replicates", "over the budget"]);
    let generated = "name = \"gen\"\nrounds = 5\nreplicates = 2\nseed = 1\n\
                     algorithm = { k = 1, m = 2, gamma = 0.01, eta_u = 1.0, eta_v = 1.0 }\n\
                     [instance.generated]\nn = 1000000000\ndu = 2\ndv = 1\nl = 1.0\nmu = 0.1\nsigma_u = 0.1\nsigma_v = 0.1\n\
                     b = 0.5\ncoupling = \"decoupled\"\ninit_distance = 1.0\nseed = 3\n";
    assert_bad_scenario("n = 1e9", generated, &["instance.n, instance.du, instance.dv", "8 GiB"]);
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().to_str().unwrap();
    assert_bad_input("search --budget 1e12", &run(&["search", "--out", o, "--budget", "1000000000000"]), &["--budget", "<= 1000000"]);
    assert_bad_input("check --threads 1e6", &run(&["check", "--out", o, "--threads", "1000000", "--claim", "CCYW-T3.7"]), &["--threads", "<= 1024"]);
    assert!(files_under(dir.path()).is_empty(), "nothing written");
}

#[test]
fn generated_noise_level_that_overflows_names_the_recipe_field() {
    // sigma_u = 1e200 is finite and >= 0, but sigma_u^2 overflows to inf. The file has no
    // `noise_u_cov`, so the message must name the field the user wrote, `instance.sigma_u`.
    // (Fails at the time of writing: the message is "invalid `noise_u_cov[0][0]`: got inf", an
    // internal matrix the generated recipe builds, without even the `instance.` prefix.)
    let text = "name = \"gen\"\nrounds = 5\nreplicates = 2\nseed = 1\n\
                algorithm = { k = 1, m = 1, gamma = 0.1, eta_u = 1.0, eta_v = 1.0 }\n\
                instance.generated = { n = 3, du = 1, dv = 1, l = 1.0, mu = 0.5, sigma_u = 1e200, sigma_v = 0.0, \
                b = 0.0, coupling = \"decoupled\", init_distance = 1.0, seed = 1 }\n";
    assert_bad_scenario("sigma_u = 1e200", text, &["instance.sigma_u"]);
}

#[test]
fn overflowing_initial_point_is_not_a_silent_success() {
    // Every entry is finite, but f(z^0) overflows: F0 = inf. The run must not exit 0 with
    // `"f0": null` and NaN metrics (JSON nulls); it must fail (bad input 2 or numerical failure 3)
    // without a panic and without writing OUT.json.
    // (Fails at the time of writing: exit 0, constants.f0/b0/b0_literal = null, f_gap = null,
    // CCYW-T3.7 reported `inconclusive` with a null bound and null estimate.)
    let text = mutate(&[("u0 = [1.0]", "u0 = [1e200]")]);
    let (dir, file) = scenario_file(&text);
    let out = dir.path().join("OUT.json");
    let (code, stdout, stderr) = run(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(code == 2 || code == 3, "u0 = 1e200 (F0 = inf): expected exit 2 or 3, got {code}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(!out.exists(), "OUT.json written for an instance with F0 = inf");
    assert_eq!(entries(dir.path()), vec!["scenario.toml".to_string()]);
}

// ------------------------------------------------------------------------------------------------
// Case 4: `check` with an unknown claim or scenario writes nothing.

#[test]
fn check_unknown_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reports");
    let got = run(&["check", "--out", out.to_str().unwrap(), "--claim", "NOPE"]);
    assert_bad_input("check --claim NOPE", &got, &["unknown claim `NOPE`", "known:", "CCYW-T3.7", "CCYW-SC-FEDAVG-FULL"]);
    assert!(!out.exists(), "--out dir created: {:?}", files_under(&out));
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn check_unknown_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reports");
    let got = run(&["check", "--out", out.to_str().unwrap(), "--scenario", "NOPE"]);
    assert_bad_input("check --scenario NOPE", &got, &["unknown scenario `NOPE`", "known:", "paper-default", "fedavg-full"]);
    assert!(!out.exists(), "--out dir created: {:?}", files_under(&out));
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn check_bad_options() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reports");
    let o = out.to_str().unwrap();
    assert_bad_input("check --threads 0", &run(&["check", "--out", o, "--threads", "0"]), &["--threads", "an integer >= 1"]);
    assert_bad_input("check --bound-scale 0", &run(&["check", "--out", o, "--bound-scale", "0"]), &["--bound-scale", "a finite number > 0"]);
    assert_bad_input("check --bound-scale nan", &run(&["check", "--out", o, "--bound-scale", "nan"]), &["--bound-scale", "a finite number > 0"]);
    assert_bad_input("check --bound-scale 1e300", &run(&["check", "--out", o, "--bound-scale", "1e300"]), &["--bound-scale", "at most 1e6"]);
    assert!(!out.exists(), "--out dir created: {:?}", files_under(&out));
}

#[test]
fn search_and_experiments_bad_options() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reports");
    let o = out.to_str().unwrap();
    assert_bad_input("search --budget 0", &run(&["search", "--out", o, "--budget", "0"]), &["--budget", "an integer >= 1"]);
    assert_bad_input("search --bound-scale -1", &run(&["search", "--out", o, "--bound-scale", "-1"]), &["--bound-scale", "a finite number > 0"]);
    assert_bad_input("search --bound-scale 2e6", &run(&["search", "--out", o, "--bound-scale", "2e6"]), &["--bound-scale", "at most 1e6"]);
    assert_bad_input("search --claim NOPE", &run(&["search", "--out", o, "--claim", "NOPE"]), &["NOPE", "CCYW-T3.7"]);
    assert_bad_input("experiments --threads 0", &run(&["experiments", "--out", o, "--threads", "0"]), &["--threads", "an integer >= 1"]);
    assert!(!out.exists(), "--out dir created: {:?}", files_under(&out));
}

#[test]
fn bench_bad_options() {
    assert_bad_input("bench --repeats 0", &run(&["bench", "--repeats", "0"]), &["--repeats", "an integer >= 1"]);
    assert_bad_input("bench --threads 0", &run(&["bench", "--threads", "0"]), &["--threads", "an integer >= 1"]);
}

// ------------------------------------------------------------------------------------------------
// Case 5: `check --card BADCARD`: validation of every scenario before any run or file.

fn card_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("theorems/ccyw-fedavg-p.toml");
    std::fs::read_to_string(path).expect("read the card")
}

/// The card with `from` replaced by `to` in the scenario named `scenario` (first match after its
/// `name = ...` line).
fn card_with(scenario: &str, from: &str, to: &str) -> String {
    let text = card_text();
    let anchor = format!("name = \"{scenario}\"");
    let start = text.find(&anchor).unwrap_or_else(|| panic!("scenario {scenario} in card"));
    let rel = text[start..].find(from).unwrap_or_else(|| panic!("`{from}` in scenario {scenario}"));
    let at = start + rel;
    // The replaced text must belong to this scenario (before the next [[scenarios]]).
    if let Some(next) = text[start..].find("[[scenarios]]") {
        assert!(rel < next, "`{from}` not inside scenario {scenario}");
    }
    format!("{}{}{}", &text[..at], to, &text[at + from.len()..])
}

fn assert_bad_card(what: &str, card: &str, extra: &[&str], needles: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let card_path = tmp.path().join("bad-card.toml");
    std::fs::write(&card_path, card).unwrap();
    let out = tmp.path().join("reports");
    let mut args = vec!["check", "--card", card_path.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-plots"];
    args.extend_from_slice(extra);
    let got = run(&args);
    assert_bad_input(what, &got, needles);
    assert!(files_under(&out).is_empty(), "{what}: report files written: {:?}", files_under(&out));
    assert_eq!(entries(tmp.path()), vec!["bad-card.toml".to_string()], "{what}: files left behind");
}

#[test]
fn card_copy_is_valid_before_mutation() {
    // The unmutated copy must parse and pass validation, else the failures below prove nothing.
    // Only the cheapest scenario is run, and only to check the card is accepted.
    let card = card_text();
    let parsed = fedbounds::families::ccyw::card::parse_card(&card, "copy").expect("the card parses");
    for s in &parsed.scenarios {
        fedbounds::families::ccyw::check::prepare(s).unwrap_or_else(|e| panic!("scenario {} prepares: {e}", s.name));
    }
    let bad = card_with("fedavg-full", "m = 10,", "m = 11,");
    let parsed = fedbounds::families::ccyw::card::parse_card(&bad, "bad").expect("m > n is not a parse error");
    let s = parsed.scenarios.iter().find(|s| s.name == "fedavg-full").unwrap();
    assert_eq!(s.algorithm.m, 11, "mutation applied");
}

#[test]
fn card_scenario_with_m_above_n() {
    // The last scenario is broken: if validation interleaved with runs, the earlier scenarios would
    // run first; reports must still not exist.
    let card = card_with("fedavg-full", "m = 10,", "m = 11,");
    assert_bad_card("card m = 11 > n = 10", &card, &[], &["fedavg-full", "algorithm.m", "got 11", "1 <= m <= n = 10"]);
    // Same when the bad scenario is selected explicitly alongside a good one.
    assert_bad_card(
        "card m > n, selected",
        &card,
        &["--scenario", "past-step-condition", "--scenario", "fedavg-full"],
        &["fedavg-full", "algorithm.m", "1 <= m <= n = 10"],
    );
}

#[test]
fn card_scenario_with_other_bad_fields() {
    let card = card_with("noiseless-partial-k1", "k = 1,", "k = 0,");
    assert_bad_card("card k = 0", &card, &[], &["noiseless-partial-k1", "algorithm.k", "an integer >= 1"]);
    let card = card_with("fedsim-partial", "eta_u = 1.0", "eta_u = -1.0");
    assert_bad_card("card eta_u < 0", &card, &[], &["fedsim-partial", "algorithm.eta_u", "a finite number > 0"]);
    let card = card_with("paper-default", "seed = 1\n", "seed = 1\nbogus = 1\n");
    assert_bad_card("card unknown key", &card, &[], &["bogus", "unknown field"]);
    let card = card_with("corollary-partial-k5", "name = \"corollary-partial-k5\"", "name = \"paper-default\"");
    assert_bad_card("card duplicate scenario name", &card, &[], &["name", "appears twice", "unique scenario names"]);
}

// ------------------------------------------------------------------------------------------------
// Case 6: `conditions` with out-of-range arguments.

const COND: &[&str] =
    &["conditions", "--n", "10", "--m", "5", "--k", "5", "--rounds", "100", "--l", "1", "--f0", "1", "--sigma-u2", "0.25", "--sigma-v2", "0.25"];

fn conditions_with(over: &[(&str, &str)]) -> (i32, String, String) {
    let mut args: Vec<String> = COND.iter().map(|s| s.to_string()).collect();
    for (flag, value) in over {
        match args.iter().position(|a| a == flag) {
            Some(i) => args[i + 1] = value.to_string(),
            None => {
                args.push(flag.to_string());
                args.push(value.to_string());
            }
        }
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&refs)
}

/// The base `conditions` arguments followed by `extra` verbatim (e.g. `--gamma=-0.1`).
fn conditions_extra(extra: &[&str]) -> (i32, String, String) {
    let mut args: Vec<&str> = COND.to_vec();
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn conditions_base_is_valid() {
    let (code, stdout, stderr) = conditions_with(&[("--gamma", "0.001"), ("--b0", "1")]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("CCYW-T3.7"));
}

#[test]
fn conditions_m_above_n() {
    assert_bad_input("conditions --m 11 --n 10", &conditions_with(&[("--m", "11")]), &["--m", "got 11", "1 <= m <= n = 10"]);
    assert_bad_input("conditions --m 0", &conditions_with(&[("--m", "0")]), &["--m", "got 0", "1 <= m <= n = 10"]);
    assert_bad_input("conditions --n 0", &conditions_with(&[("--n", "0")]), &["--n", "an integer >= 1"]);
}

#[test]
fn conditions_negative_or_nan_gamma() {
    // `--gamma=-0.1` reaches the range check; it must name the flag and the range.
    assert_bad_input("conditions --gamma=-0.1", &conditions_extra(&["--gamma=-0.1"]), &["--gamma", "a finite number > 0"]);
    assert_bad_input("conditions --gamma nan", &conditions_with(&[("--gamma", "nan")]), &["--gamma", "NaN", "a finite number > 0"]);
    assert_bad_input("conditions --gamma 0", &conditions_with(&[("--gamma", "0")]), &["--gamma", "a finite number > 0"]);
}

#[test]
fn conditions_negative_gamma_as_separate_value() {
    // `--gamma -0.1`, the way a user types it. The message must name the flag and its range like
    // `--gamma=-0.1` does. (Fails at the time of writing: clap takes `-0` for an unknown flag and
    // prints "unexpected argument '-0' found", which names neither `--gamma` nor its range;
    // the f64 options lack `allow_negative_numbers`.)
    let got = conditions_with(&[("--gamma", "-0.1")]);
    assert_bad_input("conditions --gamma -0.1", &got, &["--gamma", "a finite number > 0"]);
}

#[test]
fn conditions_names_a_missing_value_and_reaches_other_families() {
    assert_bad_input("conditions without --n", &run(&["conditions", "--m", "5", "--k", "5", "--rounds", "100", "--l", "1", "--f0", "1"]), &["--n", "missing"]);
    assert_bad_input("conditions --family nope", &run(&["conditions", "--family", "nope"]), &["unknown family `nope`", "ccyw, fedplt, dpgp"]);
    // DFedPGP's conditions are reached with --family and --set, without CCYW's flags.
    let (code, _, stderr) = run(&["conditions", "--family", "dpgp"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("missing"), "{stderr}");
    // The values are read by the names `list --symbols` gives (`L_u`, `C`); they had been read
    // only as `l-u`, `c`, and a missing one named flags that do not exist (`--l-u`).
    let dpgp = |values: &[&str]| {
        let mut args = vec!["conditions", "--family", "dpgp", "--eta-u", "0.01", "--eta-v", "0.01"];
        for v in values {
            args.extend(["--set", v]);
        }
        run(&args)
    };
    let (code, stdout, stderr) = dpgp(&["delta=1", "L_u=1", "L_v=1", "C=1", "q=0.5", "K_u=2", "K_v=2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("admissible eta_u"), "{stdout}");
    // The other spelling reads the same symbol; a missing value is named as it is given.
    assert_eq!(dpgp(&["delta=1", "l-u=1", "L_v=1", "C=1", "q=0.5", "K_u=2", "K_v=2"]).0, 0, "--set l-u reads L_u");
    let without_c = dpgp(&["delta=1", "L_u=1", "L_v=1", "q=0.5", "K_u=2", "K_v=2"]);
    assert_bad_input("dpgp conditions without C", &without_c, &["`--set C`", "missing", "--set C=VALUE"]);
}

/// The words of a command line.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// A value `conditions` reads as 0 when omitted (`--sigma-u2`, `--sigma-v2`, `--b0`) is refused
/// when a selected claim reads it: Theorem 3.11's eta_u condition reads B^0, and without `--b0`
/// it had been called applicable at eta_u = 2000, which `--b0 1e12` makes 4.7e6. Controls: with
/// `--b0` given it runs; a claim whose result does not depend on the value runs without it.
#[test]
fn conditions_refuses_a_claim_that_reads_an_omitted_value() {
    let t311 = "conditions --n 10 --m 10 --k 25 --rounds 1000 --l 1 --f0 4.5 --sigma-u2 0.25 --sigma-v2 0.25 --gamma 0.0004 --eta-u 2000 --eta-v 1.06 --claim CCYW-T3.11";
    assert_bad_input("conditions T3.11 without --b0", &run(&words(t311)), &["--b0", "missing, and CCYW-T3.11 reads it", "a number >= 0"]);
    let with_b0 = |b0: &str| run(&words(&format!("{t311} --b0 {b0}")));
    let (code, stdout, stderr) = with_b0("0");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(": applicable"), "{stdout}");
    assert!(with_b0("1e12").1.contains("NOT applicable"), "B^0 = 1e12 asks eta_u >= 4.7e6");
    let no_noise = |gamma: &str| {
        run(&words(&format!("conditions --n 10 --m 9 --k 25 --rounds 1000 --l 1 --f0 4.5 --b2 1 --eta-u 3 --eta-v 1.06 --claim CCYW-T3.7 --gamma {gamma}")))
    };
    let (code, stdout, _) = no_noise("0.002");
    assert!(code == 0 && stdout.contains("NOT applicable"), "not applicable at gamma 0.002, whatever the noise: {stdout}");
    assert_bad_input("conditions T3.7 applicable without the noise", &no_noise("0.001"), &["--sigma-u2", "CCYW-T3.7 reads it"]);
}

/// A prescribed step that computes to 0 (its terms overflow at these scales) cannot be compared:
/// `gamma = 1e-10` had passed `gamma = (32 L K + ...)^-1` against a required 0 and been called
/// applicable, with a bound. Control: the prescribed step at ordinary scales is compared.
#[test]
fn conditions_do_not_match_a_step_against_a_prescribed_step_lost_to_overflow() {
    let huge = "conditions --n 10 --m 10 --k 4294967295 --rounds 4294967295 --l 1e100 --f0 1e-100 --b2 1 --sigma-u2 1e100 --sigma-v2 1e100 --b0 1 --gamma 1e-10 --eta-u 1e100 --eta-v 1e100 --claim";
    for claim in ["CCYW-C3.8", "CCYW-T3.11-RATE", "CCYW-C4.6"] {
        let (code, stdout, stderr) = run(&words(&format!("{huge} {claim}")));
        assert_eq!(code, 0, "{stderr}");
        assert!(stdout.contains("NOT applicable") && stdout.contains("cannot be evaluated (the prescribed step computes to 0"), "{claim}: {stdout}");
    }
    let (code, stdout, _) = run(&words("conditions --n 10 --m 9 --k 25 --rounds 1000 --l 1 --f0 4.5 --b2 1 --sigma-u2 0.25 --sigma-v2 0.25 --claim CCYW-C3.8"));
    assert!(code == 0 && stdout.contains(": applicable"), "{stdout}");
}

/// A flag the family's conditions do not read is refused, naming what it reads: DFedPGP's had
/// ignored `--k 100 --l 50 --n 3`. Control: its own `--eta-u`, `--eta-v` and `--set` values run.
#[test]
fn conditions_refuse_a_flag_the_family_does_not_read() {
    let base = "conditions --family dpgp --eta-u 0.01 --eta-v 0.01 --set delta=1 --set L_u=1 --set L_v=1 --set C=1 --set q=0.5 --set K_u=2 --set K_v=2";
    assert_eq!(run(&words(base)).0, 0);
    assert_bad_input(
        "dpgp conditions --k",
        &run(&words(&format!("{base} --k 100"))),
        &["--k", "dpgp's conditions do not read it", "--eta-u, --eta-v, or --set NAME=VALUE"],
    );
    assert_bad_input("dpgp conditions --gamma", &run(&words(&format!("{base} --gamma 5"))), &["--gamma", "do not read it"]);
}

/// `--claim` selects what `conditions` evaluates, or is refused: DFedPGP's had printed Theorem
/// 1's step sizes for any id, a lemma's and another family's included; FedAvg-P's had called a
/// lemma it lists elsewhere "unknown". Controls: the theorem's own ids run.
#[test]
fn conditions_refuse_a_claim_whose_conditions_they_do_not_evaluate() {
    let base = "conditions --family dpgp --eta-u 0.01 --eta-v 0.01 --set delta=1 --set L_u=1 --set L_v=1 --set C=1 --set q=0.5 --set K_u=2 --set K_v=2";
    for claim in ["CCYW-T3.7", "DPGP-L1"] {
        assert_bad_input(claim, &run(&words(&format!("{base} --claim {claim}"))), &["--claim", claim, "DPGP-T1, DPGP-C1"]);
    }
    for claim in ["DPGP-T1", "DPGP-T1~printed-step", "DPGP-C1~rate-inv-T"] {
        let (code, stdout, stderr) = run(&words(&format!("{base} --claim {claim}")));
        assert!(code == 0 && stdout.contains("Theorem 1 step sizes"), "{claim}: {stderr}");
    }
    let lemma = conditions_extra(&["--b0", "1", "--claim", "CCYW-L3.5"]);
    assert_bad_input("CCYW-L3.5", &lemma, &["--claim", "`CCYW-L3.5` is not one of the claims whose step conditions", "CCYW-T3.7"]);
    assert!(!lemma.2.contains("unknown"), "{}", lemma.2);
    // Refused as such before the values it would read are asked for (it had said `--n`: missing).
    let bare = run(&["conditions", "--claim", "CCYW-L3.5"]);
    assert_bad_input("CCYW-L3.5 alone", &bare, &["`CCYW-L3.5` is not one of the claims whose step conditions"]);
    assert_eq!(conditions_extra(&["--b0", "1", "--claim", "CCYW-T3.7"]).0, 0);
    // Beside a claim a card defines, another id had been dropped without a word (exit 0).
    for (card, own, other) in [
        ("examples/theorem1-unit-constant-dpgp-card.toml", "T1-UNIT-CONSTANT", "DPGP-L1"),
        ("examples/sgd-ball-fedplt-card.toml", "SGD-BALL", "FEDPLT-REC"),
        ("examples/geometric-rate-clup-card.toml", "CLUP-RATE", "CLUP-T1"),
    ] {
        let both = run(&["conditions", "--card", card, "--claim", own, "--claim", other]);
        assert_bad_input(other, &both, &["--claim", &format!("`{other}` beside claims the card defines"), own]);
        let (code, stdout, stderr) = run(&["conditions", "--card", card, "--claim", own]);
        assert!(code == 0 && stdout.contains(own), "{card}: {stderr}");
    }
}

#[test]
fn conditions_refuses_a_value_given_twice() {
    // `--set L=5` beside `--l 1` had been accepted, and the built-in claims read `--l` alone.
    assert_bad_input(
        "conditions --set L=5",
        &conditions_extra(&["--set", "L=5"]),
        &["--set L", "got 5, but --l already gives this symbol the value 1", "one value for each symbol"],
    );
    assert_bad_input("conditions --set eta_u", &conditions_extra(&["--eta-u", "1", "--set", "eta_u=2"]), &["--set eta_u", "--eta-u"]);
    assert_bad_input(
        "conditions --set q twice",
        &run(&["conditions", "--family", "dpgp", "--set", "q=0.5", "--set", "Q=0.6"]),
        &["--set Q", "got 0.6, but --set q already gives this symbol the value 0.5"],
    );
    // Control: a name given once is read; FedPLT's distinct symbols `T` and `t` are two values.
    assert_eq!(conditions_extra(&["--set", "b0=1"]).0, 0);
    let card = "examples/sgd-ball-fedplt-card.toml";
    let values = ["eta=0.5", "L=1", "mu=0.2", "sigma2=0.09", "D0=9", "t=299", "T=300", "psi_min=1", "psi_max=1", "tau=1", "Lambda=0", "constant_step=1"];
    let mut args = vec!["conditions", "--card", card];
    for v in &values {
        args.extend(["--set", v]);
    }
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("SGD-BALL: applicable"), "{stdout}");
}

#[test]
fn conditions_other_ranges() {
    assert_bad_input("conditions --k 0", &conditions_with(&[("--k", "0")]), &["--k", "an integer >= 1"]);
    assert_bad_input("conditions --k 5e9", &conditions_with(&[("--k", "5000000000")]), &["--k", "a whole number in [0, 4294967295]"]);
    assert_bad_input("conditions --rounds 0", &conditions_with(&[("--rounds", "0")]), &["--rounds", "an integer >= 1"]);
    assert_bad_input("conditions --l 0", &conditions_with(&[("--l", "0")]), &["--l", "a finite number > 0"]);
    assert_bad_input("conditions --f0 inf", &conditions_with(&[("--f0", "inf")]), &["--f0", "a finite number > 0"]);
    assert_bad_input("conditions --sigma-u2 -1", &conditions_with(&[("--sigma-u2", "-1")]), &["--sigma-u2", ">= 0"]);
    assert_bad_input("conditions --b2 nan", &conditions_with(&[("--b2", "nan")]), &["--b2", ">= 0"]);
    assert_bad_input("conditions --eta-u 0", &conditions_with(&[("--eta-u", "0")]), &["--eta-u", "a finite number > 0"]);
    assert_bad_input("conditions --claim NOPE", &conditions_with(&[("--claim", "NOPE")]), &["unknown claim `NOPE`", "CCYW-T3.7"]);
}

// ------------------------------------------------------------------------------------------------
// The check's terminal summary.

#[test]
fn check_summary_lists_disagreements_first_and_ends_with_the_exit_reason() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().to_str().unwrap();
    let args = ["check", "--out", o, "--no-plots", "--claim", "FEDPLT-DECAY", "--scenario", "decaying-one-dimensional"];
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.trim_end().ends_with("exit 0: every verdict is the one its card expects"), "{stdout}");
    assert!(stdout.starts_with("Every verdict is the one its card expects: "), "{stdout}");
    assert!(stdout.lines().any(|l| l.trim_start().starts_with("empirical") && l.contains("holds 1/1")), "{stdout}");
    assert!(stdout.lines().all(|l| l.chars().count() <= 100), "the summary fits 100 columns:\n{stdout}");
    // A shrunk bound breaks the card's expectation: listed first, with its replay, exit 1.
    let mut shrunk = args.to_vec();
    shrunk.extend(["--bound-scale", "0.01"]);
    let (code, stdout, _) = run(&shrunk);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.starts_with("DIFFERS FROM THE CARDS"), "{stdout}");
    // Under cargo the replay is a cargo command; run directly, it is the program as invoked.
    // `cargo run --release --` when the binary under test is a release build.
    let release = if BIN.contains("/release/") { " --release" } else { "" };
    // The summary wraps at 100 columns: compared with its words joined by single spaces.
    // The replay keeps the options that change verdicts (it had dropped `--bound-scale`, and
    // replayed a "holds").
    let replay = format!("replay: cargo run{release} -- check --bound-scale 0.01 --claim 'FEDPLT-DECAY' --scenario 'decaying-one-dimensional'");
    assert!(stdout.split_whitespace().collect::<Vec<_>>().join(" ").contains(&replay), "{stdout}");
    assert!(stdout.trim_end().lines().last().unwrap().starts_with("exit 1: "), "{stdout}");
    let direct = Command::new(BIN).args(&shrunk).env_remove("CARGO_MANIFEST_DIR").output().unwrap();
    let direct = String::from_utf8_lossy(&direct.stdout);
    let direct_words = direct.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(direct_words.contains(&format!("replay: {BIN} check --bound-scale 0.01 --claim 'FEDPLT-DECAY'")), "{direct}");
    // Machines get JSON or CSV instead.
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let (code, stdout, _) = run(&json);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("JSON rows");
    assert!(rows.as_array().is_some_and(|r| r.iter().any(|r| r["claim"] == "FEDPLT-DECAY")));
    let mut csv = args.to_vec();
    csv.extend(["--format", "csv"]);
    let (_, stdout, _) = run(&csv);
    assert!(stdout.starts_with("claim,reading,scenario,constants,verdict"), "{stdout}");
}

// ------------------------------------------------------------------------------------------------
// FedCLUP scenario files (`family = "clup"`): lambda, R, B, gamma and eta out of range.

const CLUP_VALID: &str = r#"family = "clup"
name = "clup-file"
lambda = 0.5
rounds = 20
batch = 3
designs = 1
statistics = false
model = { m = 3, n = 6, d = 2, r = 0.1, l = 1.0, noise = 0.5, seed = 1 }
steps = { gamma = 1.5, eta = 0.6 }
"#;

fn clup_with(from: &str, to: &str) -> String {
    assert_eq!(CLUP_VALID.matches(from).count(), 1, "mutation `{from}` must match exactly once");
    CLUP_VALID.replacen(from, to, 1)
}

#[test]
fn clup_valid_file_runs() {
    let (dir, file) = scenario_file(CLUP_VALID);
    let out = dir.path().join("run.json");
    let (code, _, stderr) = run(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert!(json["verdicts"].as_array().is_some_and(|v| !v.is_empty()));
}

#[test]
fn clup_lambda_not_positive() {
    for bad in ["0.0", "-1.0", "nan"] {
        assert_bad_scenario(&format!("clup lambda = {bad}"), &clup_with("lambda = 0.5", &format!("lambda = {bad}")), &["lambda", "a finite number > 0"]);
    }
}

#[test]
fn clup_negative_radius() {
    assert_bad_scenario("clup R < 0", &clup_with("r = 0.1", "r = -0.1"), &["model.r", "a number in [0, 1e100]"]);
}

#[test]
fn clup_batch_above_n() {
    assert_bad_scenario("clup B > n", &clup_with("batch = 3", "batch = 7"), &["batch", "1 <= B <= n"]);
}

#[test]
fn clup_steps_outside_zero_infinity() {
    for (from, to, field) in [
        ("gamma = 1.5", "gamma = -1.5", "steps.gamma"),
        ("gamma = 1.5", "gamma = 0.0", "steps.gamma"),
        ("eta = 0.6", "eta = inf", "steps.eta"),
        ("eta = 0.6", "eta = -0.1", "steps.eta"),
    ] {
        assert_bad_scenario(&format!("clup {to}"), &clup_with(from, to), &[field, "a finite number > 0 in [1e-100, 1e100]"]);
    }
}

#[test]
fn steps_below_or_above_the_input_range_are_refused_in_every_family() {
    // A subnormal step (1e-320) had run: its products lose their digits, and CCYW's verdicts then
    // said "gamma_v eta_v = gamma_u eta_u: given 9.9999e-321 != required 1.0005e-320".
    let range = "[1e-100, 1e100]";
    assert_bad_scenario("ccyw gamma = 1e-320", &mutate(&[("gamma = 0.05\n", "gamma = 1e-320\n")]), &["algorithm.gamma", "got 1e-320", range]);
    assert_bad_scenario("ccyw eta_u = 1e101", &mutate(&[("eta_u = 1.0\n", "eta_u = 1e101\n")]), &["algorithm.eta_u", "got 1e101", range]);
    let factor = mutate(&[("gamma = 0.05\n", "gamma = { admissible = \"CCYW-T3.7\", factor = 1e-320 }\n")]);
    assert_bad_scenario("ccyw factor = 1e-320", &factor, &["algorithm.gamma.factor", range]);
    assert_bad_scenario("clup gamma = 1e-320", &clup_with("gamma = 1.5", "gamma = 1e-320"), &["steps.gamma", "got 1e-320", range]);
    assert_bad_scenario(
        "fedplt step = 1e-320",
        &fedplt_with("constant_over_l = 0.5", "constant_over_l = 1e-320"),
        &["step.constant_over_l", "got 1e-320", range],
    );
    assert_bad_scenario("dpgp c_u = 1e-320", &DPGP_VALID.replacen("c_u = 0.4", "c_u = 1e-320", 1), &["c_u", "got 1e-320", range]);
    // Controls: the smallest step in range runs in each family's file.
    for (what, text) in [
        ("ccyw gamma = 1e-100", mutate(&[("gamma = 0.05\n", "gamma = 1e-100\n")])),
        ("clup gamma = 1e-100", clup_with("gamma = 1.5", "gamma = 1e-100")),
        ("dpgp c_u = 1e-100", DPGP_VALID.replacen("c_u = 0.4", "c_u = 1e-100", 1)),
    ] {
        let (_dir, file) = scenario_file(&text);
        let (code, _, stderr) = run(&["run", file.to_str().unwrap()]);
        assert!(code == 0 || code == 1, "{what}: exit {code}\n{stderr}");
    }
}

#[test]
fn explicit_ccyw_numbers_beyond_the_input_magnitudes_are_refused() {
    // A noise covariance of 1e308 had run: its noise was lost to overflow in the moments (the
    // rounds matched a noise of 0.01) and CCYW-L3.5 "held" with an estimate outside its interval.
    let range = "at most 1e100";
    for (what, from, to, field) in [
        ("noise 1e308", "noise_u_cov = [[0.01]]", "noise_u_cov = [[1e308]]", "instance.noise_u_cov[0][0]"),
        ("hessian 1e101", "hessian = [[2.0, 0.5], [0.5, 1.0]]", "hessian = [[2.0, 0.5], [0.5, 1e101]]", "instance.clients[0].hessian[1][1]"),
        ("linear -1e200", "linear = [1.0, -1.0]", "linear = [1.0, -1e200]", "instance.clients[0].linear[1]"),
        ("u0 1e101", "u0 = [1.0]", "u0 = [1e101]", "instance.u0[0]"),
        ("v0 1e101", "v0 = [0.5]", "v0 = [1e101]", "instance.clients[0].v0[0]"),
    ] {
        assert_bad_scenario(what, &mutate(&[(from, to)]), &[field, range]);
    }
    // Control: the largest magnitude allowed runs.
    let (_dir, file) = scenario_file(&mutate(&[("noise_u_cov = [[0.01]]", "noise_u_cov = [[1e100]]")]));
    let (code, _, stderr) = run(&["run", file.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "noise 1e100: exit {code}\n{stderr}");
}

#[test]
fn a_generated_mu_lost_to_rounding_is_refused_naming_mu() {
    // mu = 1e-100 L is in [1e-100, 1e100] but its rotated Hessian's smallest eigenvalue came out
    // 0, refused as "instance is not admissible" without naming mu.
    let text = |mu: &str| {
        format!(
            "name = \"tiny-ratio\"\nrounds = 5\nreplicates = 2\nseed = 1\n\
             instance.generated = {{ n = 3, du = 2, dv = 1, l = 1.0, mu = {mu}, sigma_u = 0.1, sigma_v = 0.1, b = 0.0, coupling = \"coupled\", init_distance = 1.0, seed = 1 }}\n\
             algorithm = {{ k = 2, m = 2, gamma = 0.01, eta_u = 2.0, eta_v = 2.0 }}\n"
        )
    };
    assert_bad_scenario("mu = 1e-100", &text("1e-100"), &["instance.mu", "condition number 1e100", "mu >= 1e-12 l"]);
    // Control: the smallest ratio allowed runs.
    let (_dir, file) = scenario_file(&text("1e-12"));
    let (code, _, stderr) = run(&["run", file.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "mu = 1e-12: exit {code}\n{stderr}");
}

#[test]
fn a_value_far_outside_its_range_is_echoed_in_exponent_form() {
    // Rust prints 1e-300 in full (302 characters); the message shows it as written.
    let text = "name = \"tiny-mu\"\nrounds = 5\nreplicates = 2\nseed = 1\n\
                instance.generated = { n = 3, du = 1, dv = 1, l = 1.0, mu = 1e-300, sigma_u = 0.1, sigma_v = 0.1, b = 0.0, coupling = \"decoupled\", init_distance = 1.0, seed = 1 }\n\
                algorithm = { k = 2, m = 2, gamma = 0.01, eta_u = 2.0, eta_v = 2.0 }\n";
    let (_dir, file) = scenario_file(text);
    let got = run(&["run", file.to_str().unwrap()]);
    assert_bad_input("mu = 1e-300", &got, &["instance.mu", "got 1e-300", "[1e-100, 1e100]"]);
    assert!(got.2.len() < 300, "the message is short: {} characters\n{}", got.2.len(), got.2);
    // Control: the same file with mu in range is not refused for mu.
    let (_dir, file) = scenario_file(&text.replacen("mu = 1e-300", "mu = 0.5", 1));
    let control = run(&["run", file.to_str().unwrap()]);
    assert!(!control.2.contains("instance.mu"), "{}", control.2);
}

#[test]
fn clup_condition_14_failing_is_not_applicable_with_both_sides() {
    let (_dir, file) = scenario_file(&clup_with("eta = 0.6", "eta = 0.6, k = 1"));
    let (code, stdout, stderr) = run(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let t2 = json["verdicts"].as_array().unwrap().iter().find(|v| v["claim"] == "CLUP-T2").unwrap().clone();
    assert_eq!(t2["verdict"], "not-applicable");
    let failed = t2["failed"].to_string();
    assert!(failed.contains("(14)") && failed.contains("given") && failed.contains("required"), "{failed}");
}

#[test]
fn completions_cover_every_command_and_parse_as_bash() {
    let (code, script, stderr) = run(&["completions", "bash"]);
    assert_eq!(code, 0, "{stderr}");
    for command in ["check", "conditions", "sweep", "merge", "search", "completions"] {
        assert!(script.contains(command), "no completion for {command}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fedbounds.bash");
    std::fs::write(&path, &script).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&path).status().unwrap();
    assert!(syntax.success(), "the completion script is valid bash");
    // Negative control: an unknown shell is bad input naming the allowed values.
    let (code, _, stderr) = run(&["completions", "nosh"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("bash, elvish, fish, powershell, zsh"), "{stderr}");
}

#[test]
fn explain_gives_statement_conditions_formula_and_the_readings_of_inconsistencies() {
    let (code, text, stderr) = run(&["explain", "CCYW-T3.11"]);
    assert_eq!(code, 0, "{stderr}");
    for needle in [
        "source: 000:L421-427",
        "conditions, as printed:",
        "gamma <= 1/(84 L K)",
        "bound = 4*F0/(T*K*gamma)",
        "inconsistency I-CCYW5",
        "other reading: CCYW-T3.11~b0-literal",
    ] {
        assert!(text.contains(needle), "missing {needle:?}:\n{text}");
    }
    let (_, variant, _) = run(&["explain", "CCYW-T3.11~b0-literal"]);
    assert!(variant.contains("a flagged variant"), "{variant}");
    // Negative control: an unknown id is bad input naming the known ones.
    let (code, out, stderr) = run(&["explain", "NOPE"]);
    assert_eq!(code, 2, "{out}");
    assert!(stderr.contains("unknown claim `NOPE`") && stderr.contains("CCYW-T3.7"), "{stderr}");
}

// ------------------------------------------------------------------------------------------------
// Unknown keys inside enum-valued tables: a step rule, an instance source, mask layouts,
// topologies, feature laws. Each is refused naming the key and the keys allowed; the valid form
// beside it still runs (the negative control).

#[test]
fn ccyw_step_rule_and_instance_source_refuse_unknown_keys() {
    let rule = |extra: &str| mutate(&[("gamma = 0.05", &format!("gamma = {{ admissible = \"CCYW-T3.7\"{extra} }}"))]);
    let (_dir, file) = scenario_file(&rule(", factor = 0.5"));
    let ok = run(&["run", file.to_str().unwrap()]);
    assert_eq!(ok.0, 0, "the rule with `factor` runs: {}", ok.2);
    // `factr` was ignored (the run at factor 1).
    assert_bad_scenario("gamma rule with factr", &rule(", factr = 100"), &["unknown field `factr`", "`admissible` or `factor`"]);
    assert_bad_scenario(
        "eta_u a string",
        &mutate(&[("eta_u = 1.0", "eta_u = \"x\"")]),
        &["string", "a number, or { admissible = \"CLAIM-ID\", factor = NUMBER }"],
    );
    // The instance source: exactly one of `generated` and `explicit`, never serde's "wanted exactly
    // 1 element".
    let expected = "expected exactly one of `generated` or `explicit`";
    let source = mutate(&[("[instance.explicit]\n", "[instance]\nzz = 1\n\n[instance.explicit]\n")]);
    assert_bad_scenario("instance.zz", &source, &["unknown field `zz`", expected]);
    let both = mutate(&[("[instance.explicit]\n", "[instance.generated]\nn = 3\n\n[instance.explicit]\n")]);
    assert_bad_scenario("generated and explicit", &both, &["`explicit` and `generated` given together", expected]);
    let empty = "name = \"e\"\nrounds = 2\nreplicates = 2\nseed = 1\ninstance = {}\nalgorithm = { k = 1, m = 1, gamma = 0.1, eta_u = 1.0, eta_v = 1.0 }\n";
    assert_bad_scenario("instance = {}", empty, &["an empty table", expected]);
}

#[test]
fn a_card_scenario_with_a_misspelt_step_factor_is_refused_not_run_at_factor_one() {
    let card = card_with("past-step-condition", "factor = 2.0", "factr = 2.0");
    assert_bad_card("card factr", &card, &["--scenario", "paper-default"], &["unknown field `factr`", "`admissible` or `factor`"]);
}

#[test]
fn a_card_top_level_unknown_key_names_the_keys_a_card_has() {
    let card = format!("zz = 1\n{}", card_text());
    assert_bad_card("card zz", &card, &[], &["unknown field `zz`", "`family`, `claims`, `inconsistencies`, `scenarios` and `search`"]);
}

const FEDPLT_VALID: &str = r#"family = "fedplt"
name = "plt-file"
rounds = 10
replicates = 1
seed = 1
tau = 1
step = { constant_over_l = 0.5 }
instance = { clients = 3, dim = 4, l = 1.0, mu = 0.2, sigma = 0.3, heterogeneity = 0.5, init_distance = 3.0, masks = { kind = "full" }, seed = 11 }
"#;

fn fedplt_with(from: &str, to: &str) -> String {
    assert_eq!(FEDPLT_VALID.matches(from).count(), 1, "mutation `{from}` must match exactly once");
    FEDPLT_VALID.replacen(from, to, 1)
}

#[test]
fn fedplt_masks_and_step_refuse_unknown_keys() {
    for masks in ["{ kind = \"full\" }", "{ kind = \"disjoint\" }", "{ kind = \"layers\", layers = 2, per_client = 1 }"] {
        let (_dir, file) = scenario_file(&fedplt_with("{ kind = \"full\" }", masks));
        let ok = run(&["run", file.to_str().unwrap()]);
        assert_eq!(ok.0, 0, "masks = {masks} runs: {}", ok.2);
    }
    for (masks, key, kind) in [
        ("{ kind = \"full\", zz = 1 }", "zz", "full"),
        ("{ kind = \"full\", layers = 3, per_client = 1 }", "layers", "full"),
        ("{ kind = \"disjoint\", zz = 1 }", "zz", "disjoint"),
    ] {
        let needles = [format!("unknown field `{key}`"), format!("`kind = \"{kind}\"` takes no other key")];
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_bad_scenario(&format!("masks = {masks}"), &fedplt_with("{ kind = \"full\" }", masks), &needles);
    }
    let expected = "expected exactly one of `constant`, `constant_over_l` or `decaying`";
    assert_bad_scenario("step with zz", &fedplt_with("constant_over_l = 0.5", "constant_over_l = 0.5, zz = 1"), &["unknown field `zz`", expected]);
    assert_bad_scenario("step = {}", &fedplt_with("{ constant_over_l = 0.5 }", "{}"), &["an empty table", expected]);
}

#[test]
fn fedplt_explicit_empty_initial_point_names_a_list_length() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fedplt-explicit.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let start = text.find("initial = [").unwrap();
    let end = start + text[start..].find('\n').unwrap();
    let bad = format!("{}initial = []{}", &text[..start], &text[end..]);
    assert_bad_scenario("initial = []", &bad, &["instance.initial", "a list of 0 entries", "a list of at least 1 entry"]);
}

const DPGP_VALID: &str = r#"family = "dpgp"
name = "dpgp-file"
topology = { kind = "ring" }
heterogeneity = 0.5
coupling = 0.0
m = 4
du = 2
dv = 2
l_u = 2.0
mu_u = 1.0
l_v = 2.0
mu_v = 1.0
sigma_u = 0.5
sigma_v = 0.5
v0_norm = 1.0
seed = 7
k_u = 2
k_v = 2
c_u = 0.4
c_v = 1.0
rounds = 20
sweep = [5, 10, 20]
graph_seed = 3
"#;

#[test]
fn dpgp_topologies_refuse_unknown_keys() {
    let with = |topology: &str| DPGP_VALID.replacen("{ kind = \"ring\" }", topology, 1);
    for topology in ["{ kind = \"ring\" }", "{ kind = \"lazy\", self_weight = 0.3, graph = { kind = \"ring\" } }"] {
        let (_dir, file) = scenario_file(&with(topology));
        let ok = run(&["run", file.to_str().unwrap()]);
        assert_eq!(ok.0, 0, "topology = {topology} runs: {}", ok.2);
    }
    for (topology, key, kind) in [
        ("{ kind = \"ring\", zz = 1 }", "zz", "ring"),
        ("{ kind = \"ring\", k = 3 }", "k", "ring"),
        ("{ kind = \"complete\", rounds = 5 }", "rounds", "complete"),
        ("{ kind = \"exponential\", self_weight = 0.3 }", "self_weight", "exponential"),
        ("{ kind = \"lazy\", self_weight = 0.3, graph = { kind = \"ring\", zz = 1 } }", "zz", "ring"),
    ] {
        let needles = [format!("unknown field `{key}`"), format!("`kind = \"{kind}\"` takes no other key")];
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_bad_scenario(&format!("topology = {topology}"), &with(topology), &needles);
    }
}

#[test]
fn clup_features_missing_l_and_recipe_ranges() {
    let with_model = |model: &str| clup_with("{ m = 3, n = 6, d = 2, r = 0.1, l = 1.0, noise = 0.5, seed = 1 }", model);
    let gaussian = "{ m = 3, n = 6, d = 2, r = 0.1, noise = 0.5, seed = 1, features = { gaussian = { spectrum = [1.0, 2.0] } } }";
    let (_dir, file) = scenario_file(&with_model(gaussian));
    let ok = run(&["run", file.to_str().unwrap()]);
    assert_eq!(ok.0, 0, "Gaussian features run: {}", ok.2);
    let extra = gaussian.replace("] } }", "] }, zz = 1 }");
    assert_bad_scenario("features with zz", &with_model(&extra), &["unknown field `zz`", "expected exactly one of `sphere` or `gaussian`"]);
    let no_l = "{ m = 3, n = 6, d = 2, r = 0.1, noise = 0.5, seed = 1, features = \"sphere\" }";
    assert_bad_scenario("sphere without l", &with_model(no_l), &["model.l", "missing", "(0, 1e100]"]);
    // The explicit form's ranges: r = 1e200 made every error NaN.
    assert_bad_scenario("r = 1e200", &clup_with("r = 0.1", "r = 1e200"), &["model.r", "[0, 1e100]"]);
    assert_bad_scenario("noise = 1e200", &clup_with("noise = 0.5", "noise = 1e200"), &["model.noise", "(0, 1e100]"]);
    assert_bad_scenario("l = 1e200", &clup_with("l = 1.0", "l = 1e200"), &["model.l", "(0, 1e100]"]);
    assert_bad_scenario("lambda_grid = []", &format!("{CLUP_VALID}lambda_grid = []\n"), &["lambda_grid", "a list of 0 entries", "a list of 1 to"]);
}

// ------------------------------------------------------------------------------------------------
// Work the sizes alone did not show: refused before it runs, never a run of hours.

/// Two clients whose features make `kappa` about 2e10: without `steps.k`, Corollary 2's `K` of
/// (134) at `lambda = 1e-10` is about 1e12 local steps, which the sizes alone (counted as `K = 1`)
/// did not show, and the run did not end. Once the designs are drawn the work is estimated with
/// that `K` and refused. Control: at `lambda = 0.5` (`K` = 166) the same file runs.
const CLUP_ILL_CONDITIONED: &str = r#"family = "clup"
name = "ill-conditioned"
lambda = 1e-10
rounds = 10
batch = 2

[model]
noise = 0.3

[[model.draws]]

[[model.draws.clients]]
features = [[1.0, 0.0], [1.0, 0.0], [0.0, 1e-5], [0.0, 1e-5]]
labels = [1.0, 1.0, 0.0, 0.0]
ground_truth = [1.0, 0.5]

[[model.draws.clients]]
features = [[1.0, 0.0], [1.0, 0.0], [0.0, 1e-5], [0.0, 1e-5]]
labels = [1.0, 1.0, 0.0, 0.0]
ground_truth = [1.0, 0.5]
"#;

#[test]
fn clup_local_steps_of_134_at_a_huge_condition_number_are_refused() {
    assert_bad_scenario("clup K of (134) ~ 1e12", CLUP_ILL_CONDITIONED, &["steps.k (or lambda: K of (134))", "over the budget"]);
    let (_dir, file) = scenario_file(&CLUP_ILL_CONDITIONED.replace("lambda = 1e-10", "lambda = 0.5"));
    assert_eq!(run(&["run", file.to_str().unwrap()]).0, 0, "lambda = 0.5: K = 166 runs");
}

/// A swept lambda runs Figure 2's six `K` (twice) and Corollary 2's to eps, each up to 200,000
/// rounds of a `D x D` map: on `m = d = 16` (`D = 272`) one swept lambda is about 1.9e11
/// multiply-adds, which `rounds = 1` had hidden (the run did not end). Control: without the sweep
/// the scenario is within the budget; `m = 64` is refused for memory naming the model's sizes.
#[test]
fn clup_a_lambda_sweep_is_counted_at_its_round_cap() {
    let text = "family = \"clup\"\nname = \"sweep-heavy\"\nmodel = { m = 16, n = 16, d = 16, r = 0.05, l = 1.0, noise = 0.5, seed = 1 }\nlambda = 0.5\nrounds = 1\nlambda_sweep = [0.5]\n";
    assert_bad_scenario("clup lambda sweep at m = d = 16", text, &["lambda_sweep", "over the budget"]);
    let (_dir, file) = scenario_file(&text.replace("lambda_sweep = [0.5]\n", "").replace("m = 16, n = 16, d = 16", "m = 4, n = 16, d = 4"));
    assert_eq!(run(&["run", file.to_str().unwrap()]).0, 0, "no sweep, a small model: runs");
    let big = text.replace("m = 16,", "m = 64,");
    assert_bad_scenario("clup m = 64", &big, &["model.m", "model.d", "GiB"]);
}

/// The lemmas' exact sides read about `m (k_u + k_v + 2)(du + dv)` rows against the covariance
/// every round, which grows like `k^2` with the round's noise: 64 clients with `k_u = k_v = 100`
/// over 200 rounds (about 2.2e11 multiply-adds) had been estimated at 3% of the budget and did not
/// end; it is now refused for its noise maps' memory first. With `k_u = k_v = 25` (about 22 s,
/// estimated 3.1e10) the memory fits and the work is over the budget. Control: the same clients
/// with `k_u = k_v = 2` run.
#[test]
fn dpgp_many_local_steps_on_many_clients_are_refused() {
    let big = DPGP_VALID.replacen("m = 4\ndu = 2\ndv = 2", "m = 64\ndu = 1\ndv = 1", 1).replacen(
        "rounds = 20\nsweep = [5, 10, 20]",
        "rounds = 200\nsweep = [50, 100, 200]",
        1,
    );
    assert_bad_scenario("dpgp m = 64, k = 200", &big.replacen("k_u = 2\nk_v = 2", "k_u = 100\nk_v = 100", 1), &["k_u, k_v", "GiB"]);
    assert_bad_scenario("dpgp m = 64, k = 50", &big.replacen("k_u = 2\nk_v = 2", "k_u = 25\nk_v = 25", 1), &["k_u, k_v", "R = m (k + 2) p", "over the budget"]);
    let (_dir, file) = scenario_file(&big.replacen("rounds = 200\nsweep = [50, 100, 200]", "rounds = 20\nsweep = [5, 10, 20]", 1));
    assert_eq!(run(&["run", file.to_str().unwrap()]).0, 0, "64 clients, k = 4: runs");
}

/// Corollary 2's claims at their multiples run `K of (134) / k_divisor` local steps: a divisor of
/// 1e-6 made a run of minutes estimated at 1.6e3. Control: the divisor 1 runs.
#[test]
fn clup_a_tiny_k_divisor_is_counted() {
    let text = "family = \"clup\"\nname = \"c2-multiples\"\nlambda = 0.5\nrounds = 20\ndesigns = 1\nstatistics = false\nmodel = { m = 3, n = 6, d = 2, r = 0.1, l = 1.0, noise = 0.5, seed = 1 }\ncorollary2_multiples = { gamma = 1.0, eta = 1.0, k_divisor = 1e-6 }\n";
    assert_bad_scenario("clup k_divisor = 1e-6", text, &["steps.k (or lambda: K of (134))", "over the budget"]);
    let (_dir, file) = scenario_file(&text.replace("k_divisor = 1e-6", "k_divisor = 1.0"));
    assert_eq!(run(&["run", file.to_str().unwrap()]).0, 0, "k_divisor = 1 runs");
}

/// On a time-varying topology the lemmas' noise maps (about `R x m k p` numbers, for the local
/// sides and the differences) are rebuilt every round and kept for up to 8 graphs: 24 clients with
/// `du = 8`, `k_u = 100` had been estimated at 49 MB and were killed at 24 GB. Control: the same
/// topology with `k_u = 2` runs.
#[test]
fn dpgp_the_lemmas_noise_maps_are_counted_in_memory() {
    let text = DPGP_VALID
        .replacen("topology = { kind = \"ring\" }", "topology = { kind = \"random-out\", k = 3 }", 1)
        .replacen("m = 4\ndu = 2\ndv = 2", "m = 24\ndu = 8\ndv = 1", 1)
        .replacen("rounds = 20\nsweep = [5, 10, 20]", "rounds = 11\nsweep = [9, 10, 11]", 1);
    assert_bad_scenario("dpgp noise maps", &text.replacen("k_u = 2", "k_u = 100", 1).replacen("k_v = 2", "k_v = 1", 1), &["k_u, k_v", "GiB"]);
    let (_dir, file) = scenario_file(&text);
    assert_eq!(run(&["run", file.to_str().unwrap()]).0, 0, "k_u = 2 runs");
}

/// Numbers outside the instance's input range `[1e-100, 1e100]` (0 allowed where a value may be
/// 0) are refused in every family, as each family's other inputs are: a Hessian entry of
/// `1e-300` (FedAvg-P, DFedPGP), FedCLUP's `lambda = 1e300`, DFedPGP's `sigma_u = 1e300`. Each
/// had been accepted and run into overflowed constants and steps. Control: the same files at the
/// range's ends run.
#[test]
fn an_instance_number_outside_the_input_range_is_bad_input_in_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let example = |name: &str| std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)).unwrap();
    let cases = [
        (
            "explicit.toml",
            "hessian = [[2.0, 0.3], [0.3, 1.0]]",
            "hessian = [[1e-300, 0.0], [0.0, 1.0]]",
            "hessian = [[1e-100, 0.0], [0.0, 1.0]]",
            "hessian[0][0]",
        ),
        ("clup-explicit.toml", "lambda = 0.5", "lambda = 1e300", "lambda = 1e100", "lambda"),
        ("dpgp-explicit.toml", "sigma_u = 0.3", "sigma_u = 1e300", "sigma_u = 1e-100", "sigma_u"),
    ];
    for (file, from, bad, edge, field) in cases {
        let text = example(file);
        assert!(text.contains(from), "{file} has `{from}`");
        for (to, refused) in [(bad, true), (edge, false)] {
            let path = dir.path().join(file);
            std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
            let out = dir.path().join("out.json");
            let _ = std::fs::remove_file(&out);
            let got = run(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
            if refused {
                assert_bad_input(&format!("{file} with {to}"), &got, &[field, "1e-100", "1e100"]);
                assert!(!out.exists(), "{file} with {to}: nothing written");
            } else {
                assert!(got.0 == 0 || got.0 == 1, "{file} with {to}: {}", got.2);
            }
        }
    }
}
