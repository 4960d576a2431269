//! Sweeps: deterministic expansion, shares that merge to the bytes of a single run, runs on 1 and
//! 2 threads and repeated runs that agree byte for byte, resumption after an interruption, and
//! every registered family swept through its own card.

use std::path::{Path, PathBuf};

use fedbounds::families::registry;
use fedbounds::family::Silent;
use fedbounds::sweep::{report, Plan, Shard, Status, Sweep};

fn card(name: &str) -> String {
    format!("{}/theorems/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn plan(text: &str) -> Plan {
    let sweep = Sweep::parse(text, "test sweep").expect("valid sweep");
    let path = sweep.card.clone();
    let card_text = std::fs::read_to_string(&path).expect("card");
    Plan::new(sweep, &card_text, &path, &registry()).expect("plan")
}

/// 2 x 2 x 10 = 40 small FedAvg-P scenarios (well under a second in all).
fn grid40() -> String {
    format!(
        r#"
name = "det"
card = "{}"
claims = ["CCYW-T3.7", "CCYW-L3.5"]

[base]
rounds = 40
replicates = 2
seed = 1
instance.generated = {{ n = 4, du = 2, dv = 1, l = 1.0, mu = 0.1, sigma_u = 0.5, sigma_v = 0.5, b = 1.0, coupling = "decoupled", init_distance = 3.0, seed = 11 }}
algorithm = {{ k = 2, m = 3, gamma = {{ admissible = "CCYW-T3.7" }}, eta_u = {{ admissible = "CCYW-T3.7" }}, eta_v = {{ admissible = "CCYW-T3.7" }} }}

[[axes]]
key = "algorithm.gamma.factor"
values = [0.5, 1.0]

[[axes]]
key = "algorithm.k"
values = [1, 2]

[[axes]]
key = "seed"
range = [1, 10]
points = 10
integer = true
"#,
        card("ccyw-fedavg-p.toml")
    )
}

fn run(plan: &Plan, shard: Shard, out: &Path, threads: usize) -> fedbounds::sweep::ShareSummary {
    plan.run_share(shard, out, Some(threads), &Silent).expect("share runs")
}

/// Every record of `p`, run whole on 2 threads into a temporary folder.
fn records(p: &Plan) -> Vec<fedbounds::sweep::Record> {
    let tmp = tempfile::tempdir().unwrap();
    run(p, Shard::ALL, tmp.path(), 2);
    report::collect(p, &[tmp.path().to_path_buf()]).unwrap()
}

fn report_bytes(plan: &Plan, dirs: &[PathBuf], out: &Path) -> (Vec<u8>, Vec<u8>) {
    report::write_report(plan, dirs, out).expect("report");
    (std::fs::read(out.join("sweep.json")).unwrap(), std::fs::read(out.join("sweep.csv")).unwrap())
}

#[test]
fn a_grid_expands_in_order_with_the_last_axis_fastest() {
    let p = plan(&grid40());
    assert_eq!(p.len, 40);
    let first = p.point(0).unwrap();
    assert_eq!(first.id, "det-0000");
    let second = p.point(1).unwrap();
    assert_eq!(second.parameters[2].1, toml::Value::Integer(2), "seed varies fastest");
    let last = p.point(39).unwrap();
    assert_eq!(last.id, "det-0039");
    assert_eq!(last.parameters.iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>(), ["1.0", "2", "10"]);
    assert_eq!(last.table["algorithm"]["gamma"]["factor"].as_float(), Some(1.0));
    assert_eq!(last.table["name"].as_str(), Some("det-0039"));
    assert!(p.point(40).is_err(), "past the end is refused");
    // Same file, same scenarios.
    assert_eq!(plan(&grid40()).point(17).unwrap(), p.point(17).unwrap());
}

#[test]
fn a_random_design_draws_inside_its_ranges_and_repeats_with_its_seed() {
    let text = |seed: u64| {
        grid40()
            .replace(
                "[[axes]]\nkey = \"algorithm.gamma.factor\"\nvalues = [0.5, 1.0]",
                "[[axes]]\nkey = \"algorithm.gamma.factor\"\nrange = [0.01, 1.0]\nscale = \"log\"",
            )
            .replace("points = 10\n", "")
            .replace("claims = [", &format!("design = \"random\"\nsamples = 200\nseed = {seed}\nclaims = ["))
    };
    let a = plan(&text(5));
    assert_eq!(a.len, 200);
    let values: Vec<(f64, i64, i64)> = (0..200)
        .map(|j| {
            let p = a.point(j).unwrap();
            (p.parameters[0].1.as_float().unwrap(), p.parameters[1].1.as_integer().unwrap(), p.parameters[2].1.as_integer().unwrap())
        })
        .collect();
    assert!(values.iter().all(|(g, k, s)| (0.01..=1.0).contains(g) && [1, 2].contains(k) && (1..=10).contains(s)));
    assert!(values.iter().any(|v| v.0 < 0.1) && values.iter().any(|v| v.0 > 0.5), "log-uniform reaches both decades");
    assert!((1..=10).all(|s| values.iter().any(|v| v.2 == s)), "every integer of the range is drawn");
    let again = plan(&text(5));
    assert_eq!(again.point(123).unwrap(), a.point(123).unwrap());
    let other = plan(&text(6));
    assert_ne!(other.point(123).unwrap().parameters, a.point(123).unwrap().parameters, "another seed, other draws");
}

/// The report of a run on one thread, the reference of the determinism tests.
fn reference(p: &Plan, tmp: &Path) -> (Vec<u8>, Vec<u8>) {
    let dir = tmp.join("one-thread");
    let one = run(p, Shard::ALL, &dir, 1);
    assert_eq!((one.owned, one.ran, one.reused), (40, 40, 0));
    let bytes = report_bytes(p, std::slice::from_ref(&dir), &dir);
    let json = String::from_utf8(bytes.0.clone()).unwrap();
    assert!(json.contains("\"schema_version\": 1") && json.contains("\"checked\": 40"), "{}", &json[..600.min(json.len())]);
    assert_eq!(bytes.1.iter().filter(|b| **b == b'\n').count(), 1 + 80, "a header and one line per scenario and claim");
    bytes
}

#[test]
fn the_same_sweep_gives_the_same_bytes_on_1_and_2_threads() {
    let p = plan(&grid40());
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference(&p, tmp.path());
    let dir = tmp.path().join("two-threads");
    run(&p, Shard::ALL, &dir, 2);
    assert!(reference == report_bytes(&p, std::slice::from_ref(&dir), &dir));
}

#[test]
fn four_shards_merged_give_the_bytes_of_one_run() {
    let p = plan(&grid40());
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference(&p, tmp.path());
    let shards: Vec<PathBuf> = (1..=4).map(|i| tmp.path().join(format!("shard-{i}"))).collect();
    for (i, d) in shards.iter().enumerate() {
        let s = run(&p, Shard { index: i + 1, count: 4 }, d, 1);
        assert_eq!(s.owned, 10);
    }
    assert!(reference == report_bytes(&p, &shards, &tmp.path().join("merged")));
    // Negative control: the shares without the fourth cannot be merged.
    assert!(report::collect(&p, &shards[..3]).is_err());
}

#[test]
fn two_runs_of_the_same_sweep_give_the_same_bytes() {
    let p = plan(&grid40());
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference(&p, tmp.path());
    let dir = tmp.path().join("second-run");
    run(&p, Shard::ALL, &dir, 1);
    assert!(reference == report_bytes(&p, std::slice::from_ref(&dir), &dir));
    // Negative control: another sweep (one claim fewer) gives other bytes.
    let other = plan(&grid40().replace("claims = [\"CCYW-T3.7\", \"CCYW-L3.5\"]", "claims = [\"CCYW-T3.7\"]"));
    let dir = tmp.path().join("other");
    run(&other, Shard::ALL, &dir, 1);
    assert!(reference != report_bytes(&other, std::slice::from_ref(&dir), &dir));
}

#[test]
fn an_interrupted_sweep_checks_only_what_is_missing_and_ends_with_the_same_report() {
    let p = plan(&grid40());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    run(&p, Shard::ALL, &out, 2);
    let reference = report_bytes(&p, std::slice::from_ref(&out), &out);
    // An interruption: two records never written, one left as a temporary file, one truncated.
    let rec = |j: usize| out.join("scenarios").join(format!("det-{j:04}.json"));
    std::fs::remove_file(rec(3)).unwrap();
    std::fs::remove_file(rec(30)).unwrap();
    std::fs::rename(rec(7), out.join("scenarios").join("det-0007.json.partial")).unwrap();
    let text = std::fs::read(rec(12)).unwrap();
    std::fs::write(rec(12), &text[..text.len() / 2]).unwrap();
    // A record whose id, index or parameters were edited, keeping its inputs, is not this point's.
    let edit = |j: usize, from: &str, to: &str| {
        let text = std::fs::read_to_string(rec(j)).unwrap();
        assert_eq!(text.matches(from).count(), 1, "{from} in record {j}");
        std::fs::write(rec(j), text.replacen(from, to, 1)).unwrap();
    };
    edit(20, "\"id\": \"det-0020\"", "\"id\": \"det-0021\"");
    edit(21, "\"index\": 21", "\"index\": 22");
    let record: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(rec(22)).unwrap()).unwrap();
    let value = record["parameters"][0]["value"].to_string();
    edit(22, &format!("\"value\": {value}"), "\"value\": 12345");
    assert!(report::collect(&p, std::slice::from_ref(&out)).is_err(), "an incomplete sweep has no report");
    let s = run(&p, Shard::ALL, &out, 2);
    assert_eq!((s.ran, s.reused), (7, 33), "only the missing, damaged and edited records are checked again");
    assert!(reference == report_bytes(&p, std::slice::from_ref(&out), &out));
    // A record of other inputs (another card, claims or scenario) is never reused.
    let other = plan(&grid40().replace("claims = [\"CCYW-T3.7\", \"CCYW-L3.5\"]", "claims = [\"CCYW-T3.7\"]"));
    assert_eq!(run(&other, Shard::ALL, &out, 2).reused, 0);
}

#[test]
fn merging_names_the_scenarios_of_shares_that_did_not_run() {
    let p = plan(&grid40());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("shared");
    run(&p, Shard { index: 1, count: 4 }, &out, 1);
    run(&p, Shard { index: 3, count: 4 }, &out, 1);
    let err = report::collect(&p, std::slice::from_ref(&out)).unwrap_err().to_string();
    assert!(err.contains("20 of 40") && err.contains("det-0001") && err.contains("--shard"), "{err}");
}

#[test]
fn a_corner_the_family_refuses_is_recorded_with_its_field_and_the_rest_runs() {
    let text = grid40().replace("key = \"algorithm.k\"\nvalues = [1, 2]", "key = \"algorithm.m\"\nvalues = [3, 5]");
    let p = plan(&text);
    let records = records(&p);
    let totals = report::Totals::of(&records);
    assert_eq!((totals.checked, totals.bad_input, totals.failed), (20, 20, 0));
    let refused = records.iter().find(|r| r.status == Status::BadInput).unwrap();
    let error = refused.error.as_deref().unwrap();
    assert!(error.contains("algorithm.m") && error.contains(&refused.id), "{error}");
}

#[test]
fn a_value_of_the_wrong_type_is_named_by_its_axis_not_by_the_generated_card() {
    // The error had read `line 838, column 5 (`k = -1`): at `scenarios[13].algorithm.k``, a place
    // in the card text the sweep generates, which the user never sees.
    let text = grid40().replace("key = \"algorithm.k\"\nvalues = [1, 2]", "key = \"algorithm.k\"\nvalues = [1, -1]");
    let p = plan(&text);
    let records = records(&p);
    let refused = records.iter().find(|r| r.status == Status::BadInput).expect("the k = -1 corner is refused");
    let error = refused.error.as_deref().unwrap();
    assert!(error.contains("algorithm.k = -1") && error.contains("at `algorithm.k`: invalid value: integer `-1`"), "{error}");
    assert!(!error.contains("line ") && !error.contains("scenarios["), "{error}");
    assert_eq!(error.matches(&refused.id).count(), 1, "the scenario named once: {error}");
    // Control: the k = 1 corners are checked.
    assert!(records.iter().any(|r| r.status == Status::Checked && r.parameters.iter().any(|q| q.key == "algorithm.k")), "{records:?}");
}

#[test]
fn expected_verdicts_of_the_base_are_checked_on_every_scenario() {
    // Negative control: the base expects T3.7 violated; every scenario where it holds differs.
    let text = grid40()
        .replace("[[axes]]\nkey = \"algorithm.gamma.factor\"", "[base.expected]\n\"CCYW-T3.7\" = \"violated\"\n\n[[axes]]\nkey = \"algorithm.gamma.factor\"");
    let p = plan(&text);
    let totals = report::Totals::of(&records(&p));
    assert_eq!(totals.mismatches, totals.holds.min(40), "{totals:?}");
    assert!(totals.mismatches >= 20, "{totals:?}");
}

#[test]
fn every_family_sweeps_through_its_own_card() {
    let sweeps = [
        format!(
            "name = \"fp\"\ncard = \"{}\"\nbase = \"full-masks-shared-optimum\"\nunset = [\"expected\", \"expected_empirical\"]\ndesign = \"random\"\nsamples = 3\nseed = 3\n[[axes]]\nkey = \"step.constant_over_l\"\nrange = [0.05, 0.9]\nscale = \"log\"\n[[axes]]\nkey = \"rounds\"\nvalues = [60]\n",
            card("fedplt.toml")
        ),
        format!(
            "name = \"dp\"\ncard = \"{}\"\nbase = \"ring-low\"\nunset = [\"expected\"]\n[[axes]]\nkey = \"topology\"\nvalues = [{{ kind = \"ring\" }}, {{ kind = \"complete\" }}]\n[[axes]]\nkey = \"rounds\"\nvalues = [30]\n[[axes]]\nkey = \"sweep\"\nvalues = [[20, 40, 80]]\n",
            card("dpgp.toml")
        ),
        format!(
            "name = \"cl\"\ncard = \"{}\"\nbase = \"low-r-lambda-small\"\nunset = [\"expected\"]\nclaims = [\"CLUP-T2\", \"CLUP-C2\"]\n[[axes]]\nkey = \"lambda\"\nvalues = [0.1, 1.0]\n[[axes]]\nkey = \"rounds\"\nvalues = [50]\n",
            card("clup.toml")
        ),
        grid40(),
    ];
    let mut families = Vec::new();
    for text in &sweeps {
        let p = plan(text);
        let records = records(&p);
        assert!(records.iter().all(|r| r.status == Status::Checked && !r.rows.is_empty() && r.constants.is_object()), "{}", p.family.id());
        families.push(p.family.id());
    }
    let all: Vec<&str> = registry().families().iter().map(|f| f.id()).collect();
    for id in ["ccyw", "fedplt", "dpgp", "clup"] {
        assert!(families.contains(&id) && all.contains(&id));
    }
}

#[test]
fn bad_sweep_files_name_the_field() {
    let cases: [(&str, &str, &str); 14] = [
        ("points = 10\n", "points = 11\n", "would repeat values"),
        // An integer axis takes integer ends: [1.4, 3.4] had given the value 1, outside the range.
        ("range = [1, 10]\npoints = 10", "range = [1.4, 3.4]\npoints = 2", "axes[2].range"),
        // Rounded points of a log scale repeat where the linear count would not.
        ("range = [1, 10]\npoints = 10", "range = [1, 100]\npoints = 40\nscale = \"log\"", "would repeat values"),
        // An empty list had meant every claim; a claim listed twice had been checked twice.
        ("claims = [\"CCYW-T3.7\", \"CCYW-L3.5\"]", "claims = []", "an empty list selects no claim"),
        ("claims = [\"CCYW-T3.7\", \"CCYW-L3.5\"]", "claims = [\"CCYW-T3.7\", \"CCYW-T3.7\"]", "claims[1]"),
        ("axes]]\nkey = \"seed\"\nrange = [1, 10]\npoints = 10\ninteger = true", "axes]]\nkey = \"seed\"\nrange = [1, 10]\ninteger = true", "axes[2].points"),
        ("key = \"algorithm.k\"", "key = \"algorithm.gamma.factor.x\"", "axes[1].key"),
        ("key = \"algorithm.k\"", "key = \"algorithm\"", "overlap"),
        ("key = \"algorithm.k\"", "key = \"name\"", "axes[1].key"),
        ("values = [1, 2]", "values = []", "axes[1].values"),
        ("range = [1, 10]", "range = [10, 1]", "axes[2].range"),
        ("claims = [", "samples = 3\nclaims = [", "samples"),
        ("name = \"det\"", "name = \"../x\"", "name"),
        ("name = \"det\"", "name = \"det\"\nwhatever = 1", "whatever"),
    ];
    for (from, to, field) in cases {
        let text = grid40().replace(from, to);
        assert_ne!(text, grid40(), "{from}");
        let sweep = Sweep::parse(&text, "test sweep");
        let err = match sweep {
            Err(e) => e,
            Ok(s) => {
                let card_text = std::fs::read_to_string(&s.card).unwrap();
                match Plan::new(s, &card_text, "card", &registry()) {
                    Err(e) => e,
                    Ok(_) => panic!("accepted: {to}"),
                }
            }
        };
        assert!(err.is_bad_input() && err.to_string().contains(field), "{to}: {err}");
    }
    // An estimator the family does not offer is refused before any scenario runs, naming the
    // sweep's field (it had been recorded on every scenario as bad input of `--estimator`).
    let clup = |estimator: &str| {
        let text = format!(
            "name = \"cl\"\ncard = \"{}\"\nbase = \"low-r\"\nestimator = \"{estimator}\"\n[[axes]]\nkey = \"rounds\"\nvalues = [50]\n",
            card("clup.toml")
        );
        let sweep = Sweep::parse(&text, "test sweep").unwrap();
        Plan::new(sweep, &std::fs::read_to_string(card("clup.toml")).unwrap(), "card", &registry()).map(drop)
    };
    let err = clup("monte-carlo").unwrap_err().to_string();
    assert!(err.contains("invalid `estimator`") && err.contains("for `clup`: exact"), "{err}");
    clup("exact").expect("the estimator the family offers");
    // Controls: integer ends on a log scale with distinct rounded points, one claim.
    for (from, to) in [("range = [1, 10]\npoints = 10", "range = [1, 100]\npoints = 5\nscale = \"log\""), ("\"CCYW-T3.7\", \"CCYW-L3.5\"", "\"CCYW-T3.7\"")] {
        let text = grid40().replace(from, to);
        assert_ne!(text, grid40(), "{from}");
        Sweep::parse(&text, "test sweep").unwrap_or_else(|e| panic!("{to}: {e}"));
    }
    assert!(Shard::parse("0/4").is_err() && Shard::parse("5/4").is_err() && Shard::parse("1/0").is_err() && Shard::parse("a/b").is_err());
    assert_eq!(Shard::parse("4/4").unwrap(), Shard { index: 4, count: 4 });
}

#[test]
fn the_command_line_runs_shares_and_merges_them_to_the_bytes_of_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("det.toml");
    std::fs::write(&file, grid40()).unwrap();
    let bin = env!("CARGO_BIN_EXE_fedbounds");
    let fedbounds = |args: &[&str]| std::process::Command::new(bin).args(args).current_dir(tmp.path()).output().unwrap();
    let whole = fedbounds(&["sweep", "det.toml", "--out", "whole", "--threads", "2"]);
    assert_eq!(whole.status.code(), Some(0), "{}", String::from_utf8_lossy(&whole.stderr));
    for i in 1..=4 {
        let s = fedbounds(&["sweep", "det.toml", "--shard", &format!("{i}/4"), "--out", "shares"]);
        assert_eq!(s.status.code(), Some(0), "{}", String::from_utf8_lossy(&s.stderr));
        assert!(!tmp.path().join("shares/sweep.json").exists(), "a share writes no report");
    }
    let merged = fedbounds(&["merge", "det.toml", "shares"]);
    assert_eq!(merged.status.code(), Some(0), "{}", String::from_utf8_lossy(&merged.stderr));
    for f in ["sweep.json", "sweep.csv"] {
        assert!(std::fs::read(tmp.path().join("whole").join(f)).unwrap() == std::fs::read(tmp.path().join("shares").join(f)).unwrap(), "{f}");
    }
    let bad = fedbounds(&["sweep", "det.toml", "--shard", "0/4"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--shard"));
    let missing = fedbounds(&["merge", "det.toml", "nowhere"]);
    assert_eq!(missing.status.code(), Some(2), "{}", String::from_utf8_lossy(&missing.stderr));
}

/// A scenario whose records in two folders differ is refused naming both (the first folder had
/// won silently), and so is a folder that does not exist (it had been passed over). Control: the
/// same share in two folders, byte for byte, merges.
#[test]
fn merging_refuses_differing_copies_of_a_record_and_absent_folders() {
    let p = plan(&grid40());
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    run(&p, Shard::ALL, &a, 1);
    let b = tmp.path().join("b");
    std::fs::create_dir_all(b.join("scenarios")).unwrap();
    for entry in std::fs::read_dir(a.join("scenarios")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), b.join("scenarios").join(entry.file_name())).unwrap();
    }
    assert_eq!(report::collect(&p, &[a.clone(), b.clone()]).unwrap().len(), 40, "identical copies merge");
    let first =
        std::fs::read_dir(b.join("scenarios")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).min().unwrap();
    let text = std::fs::read_to_string(&first).unwrap();
    assert!(text.contains("\"verdict\": \"holds\""), "{text}");
    std::fs::write(&first, text.replacen("\"verdict\": \"holds\"", "\"verdict\": \"violated\"", 1)).unwrap();
    let err = report::collect(&p, &[a.clone(), b.clone()]).unwrap_err().to_string();
    assert!(err.contains("differing records") && err.contains(&a.display().to_string()) && err.contains(&b.display().to_string()), "{err}");
    let err = report::collect(&p, &[a, tmp.path().join("nowhere")]).unwrap_err().to_string();
    assert!(err.contains("nowhere") && err.contains("is not a folder"), "{err}");
}

/// A sweep whose claims apply to none of its scenarios checks nothing: exit 2, naming why
/// (it had exited 0 with no rows). A share owning no scenario (more shares than scenarios) still
/// leaves its folder, so the merge it points to runs. Control: the same sweep with a claim of
/// its setting, in three shares, merges with exit 0.
#[test]
fn a_sweep_that_checks_nothing_fails_and_an_empty_share_merges() {
    let tmp = tempfile::tempdir().unwrap();
    let two = |claim: &str| {
        grid40()
            .replace(r#"claims = ["CCYW-T3.7", "CCYW-L3.5"]"#, &format!("claims = [\"{claim}\"]"))
            .replace("range = [1, 10]\npoints = 10", "range = [1, 2]\npoints = 2")
    };
    let bin = env!("CARGO_BIN_EXE_fedbounds");
    let fedbounds = |args: &[&str]| std::process::Command::new(bin).args(args).current_dir(tmp.path()).output().unwrap();
    std::fs::write(tmp.path().join("other.toml"), two("CCYW-T4.5").replace("values = [1, 2]", "values = [1]").replace("values = [0.5, 1.0]", "values = [1.0]"))
        .unwrap();
    let nothing = fedbounds(&["sweep", "other.toml", "--out", "other"]);
    assert_eq!(nothing.status.code(), Some(2), "{}", String::from_utf8_lossy(&nothing.stderr));
    assert!(String::from_utf8_lossy(&nothing.stderr).contains("nothing checked"));
    std::fs::write(tmp.path().join("own.toml"), two("CCYW-T3.7").replace("values = [1, 2]", "values = [1]").replace("values = [0.5, 1.0]", "values = [1.0]"))
        .unwrap();
    for i in 1..=3 {
        let s = fedbounds(&["sweep", "own.toml", "--shard", &format!("{i}/3"), "--out", &format!("share{i}")]);
        assert_eq!(s.status.code(), Some(0), "{}", String::from_utf8_lossy(&s.stderr));
        assert!(tmp.path().join(format!("share{i}")).is_dir(), "share {i} has its folder");
    }
    let merged = fedbounds(&["merge", "own.toml", "share1", "share2", "share3", "--out", "merged"]);
    assert_eq!(merged.status.code(), Some(0), "{}", String::from_utf8_lossy(&merged.stderr));
}
