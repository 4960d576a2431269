//! Lemma 3's push-sum constants `C` and `q` given by a scenario (`push_sum = { c, q }`) in place
//! of the estimate from the realised mixing products (I-DPGP10): the run uses them and says so,
//! the graphs' own deviations are measured against the given envelope `C q^l` (the largest ratio
//! `E(l) / (C q^l)` and its lag; above 1 the given constants are smaller than the graphs attain
//! and are flagged), bad values are refused with the field and its range (exit 2), and export
//! writes them back. Each test has a negative control that shows it can fail.

use std::process::Command;

use fedbounds::families::dpgp::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

/// The shared header of a card of this family, without claims of its own.
const CARD_HEAD: &str = "claims = []\n[family]\nid = \"DPGP-GIVEN\"\nmodule = \"dpgp\"\npaper = \"DFedPGP\"\nsource_files = []\nalgorithm = \"Algorithm 1\"\n";

/// A generated scenario on random graphs with short horizons and `extra` keys.
fn scenario(name: &str, extra: &str) -> String {
    format!(
        "family = \"dpgp\"\nname = \"{name}\"\nm = 4\ndu = 2\ndv = 2\nl_u = 2.0\nmu_u = 0.5\nl_v = 2.0\nmu_v = 1.0\nheterogeneity = 1.0\n\
         sigma_u = 0.5\nsigma_v = 0.3\nseed = 11\nk_u = 2\nk_v = 2\nc_u = 0.4\nc_v = 1.0\nrounds = 40\nsweep = [10, 20, 40]\ngraph_seed = 5\n\
         topology = {{ kind = \"random-out\", k = 2 }}\n{extra}\n"
    )
}

fn run(text: &str) -> Value {
    serde_json::from_str(&FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")).expect("JSON")
}

fn given(c: f64, q: f64) -> String {
    format!("push_sum = {{ c = {c:?}, q = {q:?} }}")
}

#[test]
fn given_constants_replace_the_estimate_and_are_measured_against_the_graphs() {
    let estimated = run(&scenario("s", ""));
    let conn = &estimated["connectivity"];
    let (c, q) = (conn["c"].as_f64().expect("C"), conn["q"].as_f64().expect("q"));
    assert!(conn.get("given").is_none() && c > 0.0 && (0.0..1.0).contains(&q), "{conn}");
    // The estimate given back: the same numbers, a ratio of exactly 1, the same verdicts.
    let same = run(&scenario("s", &given(c, q)));
    let g = &same["connectivity"]["given"];
    assert_eq!((g["ratio"].as_f64(), g["too_small"].as_bool()), (Some(1.0), Some(false)), "{g}");
    assert_eq!((g["estimated_c"].as_f64(), g["estimated_q"].as_f64()), (Some(c), Some(q)));
    assert!(without_given(&same) == estimated, "given constants equal to the estimate must run to the same results");
    // Twice the estimated C: half the envelope is reached.
    let loose = run(&scenario("s", &given(2.0 * c, q)));
    assert_eq!(loose["connectivity"]["given"]["ratio"].as_f64(), Some(0.5));
    assert_eq!(loose["connectivity"]["c"].as_f64(), Some(2.0 * c));
    // Negative control: a smaller q than the graphs attain is flagged, with the ratio and lag,
    // and it changes the claims' numbers.
    let tight = run(&scenario("s", &given(c, q / 2.0)));
    let g = &tight["connectivity"]["given"];
    let ratio = g["ratio"].as_f64().expect("a ratio");
    assert!(g["too_small"].as_bool() == Some(true) && ratio > 1.0 && g["lag"].as_u64() > Some(0), "{g}");
    assert_eq!(tight["connectivity"]["q"].as_f64(), Some(q / 2.0));
    assert!(tight["verdicts"] != estimated["verdicts"]);
}

/// The run's JSON with every `given` key removed.
fn without_given(v: &Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("given");
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = v.clone();
    strip(&mut v);
    v
}

#[test]
fn bad_constants_are_refused_with_the_field_and_its_range() {
    let cases = [
        ("push_sum = { c = 1.0, q = 1.0 }", "scenario.push_sum.q", "a number in [0, 1)"),
        ("push_sum = { c = 1.0, q = -0.1 }", "scenario.push_sum.q", "a number in [0, 1)"),
        ("push_sum = { c = 1.0, q = nan }", "scenario.push_sum.q", "a number in [0, 1)"),
        ("push_sum = { c = 0.0, q = 0.5 }", "scenario.push_sum.c", "a finite number > 0"),
        ("push_sum = { c = -2.0, q = 0.5 }", "scenario.push_sum.c", "a finite number > 0"),
        ("push_sum = { c = nan, q = 0.5 }", "scenario.push_sum.c", "a finite number > 0"),
        ("push_sum = { c = inf, q = 0.5 }", "scenario.push_sum.c", "a finite number > 0"),
    ];
    for (keys, field, allowed) in cases {
        let e = FAMILY.run(&scenario("bad", keys), "test.toml", &RunOptions::default()).expect_err("refused").to_string();
        assert!(e.contains(&format!("`{field}`")) && e.contains(allowed), "{keys}: {e}");
    }
    for keys in ["push_sum = { c = 1.0 }", "push_sum = { c = 1.0, q = 0.5, d = 2.0 }"] {
        let e = FAMILY.run(&scenario("bad", keys), "test.toml", &RunOptions::default()).expect_err("refused").to_string();
        assert!(e.contains("cannot parse") && (e.contains("`q`") || e.contains("`d`")), "{keys}: {e}");
    }
    // The command line: exit 2, the field named, nothing written; a good value runs.
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let go = |name: &str, keys: &str| {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, scenario(name, keys)).expect("written");
        let out = dir.join(format!("{name}.json"));
        let o = Command::new(BIN).arg("run").arg(&file).arg("--out").arg(&out).output().expect("the binary runs");
        (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string(), out.exists())
    };
    let (code, stderr, written) = go("bad", "push_sum = { c = 1.0, q = 1.5 }");
    assert!(code == Some(2) && stderr.contains("scenario.push_sum.q") && !written, "{stderr}");
    // Negative control: q = 0 (exact averaging in one round) is admissible.
    let (code, stderr, written) = go("good", "push_sum = { c = 1.0, q = 0.0 }");
    assert!(code == Some(0) && written, "{stderr}");
}

#[test]
fn check_rows_say_given_and_export_keeps_the_constants() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let check = |name: &str, keys: &str| -> (String, String) {
        let card = dir.join(format!("{name}.toml"));
        let body = scenario(name, keys).replace("family = \"dpgp\"\n", "");
        std::fs::write(&card, format!("{CARD_HEAD}[[scenarios]]\n{body}")).expect("written");
        let out = dir.join(name);
        let o = Command::new(BIN)
            .args(["check", "--no-plots", "--claim", "DPGP-L3", "--claim", "DPGP-L1", "--card"])
            .arg(&card)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("the binary runs");
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
        let read = |f: &str| std::fs::read_to_string(out.join(f)).expect("a report file");
        (read("SUMMARY.md"), read("claims/DPGP-L3.md"))
    };
    let (summary, page) = check("tight", "push_sum = { c = 1.0, q = 0.3 }");
    let row = summary.lines().find(|l| l.starts_with("| DPGP-L3 | tight |")).expect("a DPGP-L3 row");
    assert!(row.starts_with("| DPGP-L3 | tight | given |"), "{row}");
    // The claim's page names the given constants and the flag.
    let labelled = page.lines().find(|l| l.starts_with("| tight | given C = 1, q = 0.3 (graphs reach ")).expect("a labelled row");
    assert!(labelled.contains("smaller than the graphs attain") && summary.contains("- tight: given C = 1, q = 0.3"), "{labelled}");
    assert!(summary.contains("1 (given!)") && summary.contains("0.3 (given!)"));
    // Lemma 1 uses no C, q: its row stays exact.
    assert!(summary.lines().any(|l| l.starts_with("| DPGP-L1 | tight | exact |")), "{summary}");
    // Negative control: without push_sum the rows say estimated and nothing says given.
    let (plain, page) = check("plain", "");
    assert!(plain.lines().any(|l| l.starts_with("| DPGP-L3 | plain | estimated |")) && !plain.contains("(given") && !page.contains("given C"), "{plain}");
    // Export writes the constants and reads them back to the same run.
    let text = scenario("s", "push_sum = { c = 1.5, q = 0.6 }");
    let exported = FAMILY.export_instance(&text, "test.toml").expect("exports");
    assert!(exported.contains("[push_sum]\nc = 1.5\nq = 0.6"), "{exported}");
    assert!(run(&text) == run(&exported));
    assert!(run(&text) != run(&exported.replace("q = 0.6", "q = 0.61")));
}
