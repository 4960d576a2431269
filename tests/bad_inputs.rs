//! Bad and extreme inputs that once crashed, hung, or passed with nothing checked: each must now
//! end quickly with its exit code and a message naming what is wrong (exit 2 for the input, 3
//! for a failure of the run), never a panic (101), an abort (134) or a run of minutes. Each case
//! has a negative control: the same input made good passes. Reports are replaced as a whole: a
//! write that fails leaves the previous report, two writers both leave a complete one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

/// Exit code (-1 for a death by signal), stdout, stderr.
type Outcome = (i32, String, String);

/// Runs the binary; a run over 60 s is a hang and fails the test.
fn run(args: &[&str]) -> Outcome {
    let start = Instant::now();
    let out = Command::new(BIN).args(args).env_remove("RUST_BACKTRACE").output().expect("the binary starts");
    assert!(start.elapsed() < Duration::from_secs(60), "{args:?} ran {:?}", start.elapsed());
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Asserts exit `code`, no panic, and every needle in stderr.
fn assert_exit(what: &str, got: &Outcome, code: i32, needles: &[&str]) {
    let (c, stdout, stderr) = got;
    assert!(!stderr.contains("panicked"), "{what}: panicked\n{stderr}");
    assert_eq!(*c, code, "{what}: exit code\nstdout:\n{stdout}\nstderr:\n{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{what}: stderr lacks `{n}`\n{stderr}");
    }
}

fn manifest(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).expect("a file of the crate")
}

/// A card's text before its first `[[scenarios]]` (its claims and metadata).
fn head_of(card: &str) -> String {
    let text = manifest(card);
    text[..text.find("[[scenarios]]").expect("a scenario")].to_string()
}

/// Writes `text` into `dir/name` and returns the path as a string.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writable temp dir");
    p.to_str().expect("utf-8 path").to_string()
}

fn ccyw_scenario(k: &str, rounds: u64) -> String {
    format!(
        r#"
[[scenarios]]
name = "s"
rounds = {rounds}
replicates = 2
seed = 1
instance.generated = {{ n = 4, du = 2, dv = 1, l = 1.0, mu = 0.1, sigma_u = 0.5, sigma_v = 0.5, b = 1.0, coupling = "decoupled", init_distance = 3.0, seed = 11 }}
algorithm = {{ k = {k}, m = 3, gamma = {{ admissible = "CCYW-T3.7" }}, eta_u = {{ admissible = "CCYW-T3.7" }}, eta_v = {{ admissible = "CCYW-T3.7" }} }}
[scenarios.expected]
"CCYW-T3.7" = "holds"
"#
    )
}

fn ccyw_card(k: &str) -> String {
    head_of("theorems/ccyw-fedavg-p.toml") + &ccyw_scenario(k, 10)
}

fn check(card: &str, out: &Path) -> Outcome {
    run(&["check", "--card", card, "--out", out.to_str().unwrap(), "--no-plots"])
}

#[test]
fn huge_local_step_counts_are_refused_by_the_work_budget() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for k in ["9223372036854775807", "100000000"] {
        let card = write(dir.path(), "k.toml", &ccyw_card(k));
        assert_exit(&format!("k = {k}"), &check(&card, &out), 2, &["scenario `s`", "algorithm.k"]);
    }
    let card = write(dir.path(), "k.toml", &ccyw_card("1000000"));
    assert_exit("k = 1e6", &check(&card, &out), 2, &["algorithm.k", "estimated work", "--max-work"]);
    // --max-work is checked, and raises the budget (then the memory limit is what refuses).
    let args = ["check", "--card", &card, "--out", out.to_str().unwrap(), "--no-plots", "--max-work"];
    assert_exit("--max-work nan", &run(&[&args[..], &["nan"]].concat()), 2, &["--max-work"]);
    // Negative control: a small k passes, and a budget below its work refuses it.
    let card = write(dir.path(), "k.toml", &ccyw_card("2"));
    assert_exit("k = 2", &check(&card, &out), 0, &[]);
    assert_exit("k = 2, --max-work 10", &run(&[&args[..], &["10"]].concat()), 2, &["estimated work"]);
}

/// A CCYW card with one formula-defined claim whose bound is `bound`.
fn card_with_bound(bound: &str) -> String {
    let claim = format!(
        r#"
[[claims]]
id = "MY-1"
title = "t"
statement = "s"
source = "none"
assumptions = []
conditions = []
metric = "m"
reading = "r"

[claims.formula]
algorithm = "fedavg-p"
metric = "shared_plus_weighted_personal"
compare = "running-average"
at = "every-prefix"
bound = "{bound}"
conditions = ["gamma <= 1/(32*L*K)"]
"#
    );
    head_of("theorems/ccyw-fedavg-p.toml") + &claim + &ccyw_scenario("2", 10).replace("\"CCYW-T3.7\" = \"holds\"", "")
}

#[test]
fn deep_or_long_formulas_are_refused_in_check_list_and_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases = [
        ("10000 parentheses", format!("{}L{}", "(".repeat(10_000), ")".repeat(10_000)), "more than 4096"),
        ("a 200000-term sum", vec!["L"; 200_000].join("+"), "more than 4096"),
        ("100000 minuses", format!("{}L", "-".repeat(100_000)), "more than 4096"),
        ("300 parentheses", format!("{}L{}", "(".repeat(300), ")".repeat(300)), "nests more than 200 levels"),
        ("a 1000-term sum", vec!["L"; 1000].join("+"), "nests more than 200 levels"),
    ];
    let conditions = ["--n", "10", "--m", "5", "--k", "2", "--rounds", "10", "--l", "1", "--f0", "1", "--gamma", "0.001"];
    for (what, bound, needle) in cases {
        let card = write(dir.path(), "f.toml", &card_with_bound(&bound));
        assert_exit(what, &check(&card, &out), 2, &["claims[MY-1].formula.bound", "column", needle]);
        assert_exit(what, &run(&["list", "--card", &card]), 2, &["claims[MY-1].formula.bound", needle]);
        assert_exit(what, &run(&[&["conditions", "--card", &card][..], &conditions].concat()), 2, &["claims[MY-1].formula.bound", needle]);
    }
    // Negative control: 150 parentheses and a 100-term sum are fine.
    let card = write(dir.path(), "f.toml", &card_with_bound(&format!("{}L{} + {}", "(".repeat(150), ")".repeat(150), vec!["L"; 100].join("+"))));
    assert_exit("150 parentheses", &run(&["list", "--card", &card]), 0, &[]);
    assert_exit("150 parentheses", &check(&card, &out), 0, &[]);
}

fn fedplt_card(rounds: &str, clients: &str, dim: &str) -> String {
    head_of("theorems/fedplt.toml")
        + &format!(
            r#"
[[scenarios]]
name = "s"
rounds = {rounds}
replicates = 2
seed = 1
tau = 1
step = {{ constant_over_l = 0.5 }}
instance = {{ clients = {clients}, dim = {dim}, l = 1.0, mu = 0.2, sigma = 0.3, heterogeneity = 0.0, init_distance = 3.0, rotated = true, masks = {{ kind = "full" }}, seed = 11 }}
"#
        )
}

#[test]
fn fedplt_sizes_beyond_the_budget_or_memory_are_refused_naming_their_fields() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let card = write(dir.path(), "p.toml", &fedplt_card("10000000", "4", "6"));
    assert_exit("rounds = 1e7", &check(&card, &out), 2, &["rounds", "estimated work"]);
    let card = write(dir.path(), "p.toml", &fedplt_card("300", "200", "200"));
    assert_exit("200 clients x dim 200", &check(&card, &out), 2, &["instance.clients, instance.dim", "estimated work"]);
    // dim = 1e7 is the dimension's memory, not the rounds' or replicates'.
    let card = write(dir.path(), "p.toml", &fedplt_card("10", "2", "10000000"));
    let got = check(&card, &out);
    assert_exit("dim = 1e7", &got, 2, &["instance.dim", "GiB"]);
    assert!(!got.2.contains("rounds, scenario.replicates"), "{}", got.2);
    // Negative control.
    let card = write(dir.path(), "p.toml", &fedplt_card("20", "2", "3"));
    assert_exit("a small FedPLT scenario", &check(&card, &out), 0, &[]);
}

/// A size under the fixed 8 GiB cap that the address space `ulimit -v` leaves cannot hold is
/// refused before anything is allocated (exit 2, naming the limit). A FedPLT check of dimension
/// 6000 under `ulimit -v 2000000` had aborted inside the allocator ("memory allocation of
/// 288000000 bytes failed", exit 134): its estimate counted 8 of the 40 `d x d` matrices it holds.
#[cfg(target_os = "linux")]
#[test]
fn a_size_the_address_space_limit_cannot_hold_is_refused_never_an_abort() {
    use fedbounds::families::fedplt::check::peak_matrix_bytes;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let limited = |card: &str| -> Outcome {
        let script = "ulimit -v 2000000 && exec \"$0\" \"$@\"";
        let args = [BIN, "check", "--card", card, "--out", out.to_str().unwrap(), "--no-plots", "--max-work", "1e13"];
        let o = Command::new("sh").arg("-c").arg(script).args(args).env_remove("RUST_BACKTRACE").output().expect("sh starts");
        (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    // Two clients in dimension 3000 hold 2.7 GiB: under the cap, over what 1.9 GiB of address space leaves.
    assert!(peak_matrix_bytes(2.0, 3000.0) < fedbounds::error::MEMORY_LIMIT_BYTES);
    let card = write(dir.path(), "p.toml", &fedplt_card("2", "2", "3000"));
    assert_exit("dim 3000 under ulimit -v", &limited(&card), 2, &["instance.clients", "instance.dim", "GiB", "ulimit -v"]);
    // Negative control: the same limit admits and checks a small scenario.
    let card = write(dir.path(), "p.toml", &fedplt_card("20", "2", "3"));
    assert_exit("a small FedPLT scenario under ulimit -v", &limited(&card), 0, &[]);
}

/// The CLUP card with its first scenario only, `edit` applied to that scenario.
fn clup_card(edit: impl Fn(&str) -> String) -> String {
    let text = manifest("theorems/clup.toml");
    let i = text.find("[[scenarios]]").unwrap();
    let j = i + 5 + text[i + 5..].find("[[scenarios]]").unwrap();
    text[..i].to_string() + &edit(&text[i..j])
}

#[test]
fn fedclup_huge_lambda_ends_and_an_empty_sweep_is_not_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let card = write(dir.path(), "c.toml", &clup_card(|s| s.replace("lambda = 0.5", "lambda = 1e20")));
    let got = check(&card, &out);
    assert!(matches!(got.0, 0..=3), "lambda = 1e20 ends with a verdict or an error: {got:?}");
    assert!(!got.2.contains("panicked"), "{}", got.2);
    let card = write(dir.path(), "c.toml", &clup_card(|s| s.replace("lambda_sweep = [0.02, 0.1, 0.5, 2.0, 10.0]", "lambda_sweep = []")));
    assert_exit("lambda_sweep = []", &check(&card, &out), 2, &["expected.CLUP-C2-", "does not compute"]);
    // Negative control: the scenario as the card has it passes.
    let card = write(dir.path(), "c.toml", &clup_card(str::to_string));
    assert_exit("the card's low-r", &check(&card, &out), 0, &[]);
}

#[test]
fn cards_that_would_check_nothing_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let head = head_of("theorems/ccyw-fedavg-p.toml");
    let card = write(dir.path(), "c.toml", &head);
    assert_exit("no scenarios key", &check(&card, &out), 2, &["missing field `scenarios`"]);
    let card = write(dir.path(), "c.toml", &format!("scenarios = []\n{head}"));
    assert_exit("no scenarios", &check(&card, &out), 2, &["nothing checked"]);
    // A claim id twice.
    let first = &head[head.find("[[claims]]").unwrap()..head.find("[[claims]]\nid = \"CCYW-C3.8\"").unwrap()];
    let twice = head.replacen(first, &format!("{first}{first}"), 1) + &ccyw_scenario("2", 10);
    let card = write(dir.path(), "c.toml", &twice);
    assert_exit("an id twice", &check(&card, &out), 2, &["`CCYW-T3.7` appears twice"]);
    assert_exit("an id twice (list)", &run(&["list", "--card", &card]), 2, &["appears twice"]);
    // An unknown built-in bound.
    let card = write(dir.path(), "c.toml", &ccyw_card("2").replacen("builtin = \"CCYW-T3.7\"", "builtin = \"NOSUCH\"", 1));
    assert_exit("builtin NOSUCH", &check(&card, &out), 2, &["claims[CCYW-T3.7].bound.builtin", "NOSUCH"]);
    // The formula twin of a built-in claim is compiled: 1/0 and unknown names are refused.
    let twin = "bound = \"4*F0/(T*K*gamma) + 12*L*X*gamma + 128*L^2*K*(K-1)*b2*gamma^2/eta_u^2\"";
    for (what, bound, needle) in [("1/0", "bound = \"1/0\"", "claims[CCYW-T3.7].formula.bound"), ("unknown name", "bound = \"NOSUCH*L\"", "NOSUCH")] {
        let card = write(dir.path(), "c.toml", &ccyw_card("2").replacen(twin, bound, 1));
        assert_exit(what, &check(&card, &out), 2, &[needle]);
    }
    // Zero pairs selected.
    assert_exit(
        "T3.7 on ring-low",
        &run(&["check", "--claim", "CCYW-T3.7", "--scenario", "ring-low", "--out", out.to_str().unwrap()]),
        2,
        &["nothing checked"],
    );
    // Negative control: the card unchanged passes.
    let card = write(dir.path(), "c.toml", &ccyw_card("2"));
    assert_exit("the card as written", &check(&card, &out), 0, &[]);
}

#[test]
fn a_search_that_writes_nothing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    // FedCLUP's search leaves out its orderings: searching only one writes nothing.
    assert_exit("search CLUP-Q-MONOTONE", &run(&["search", "--claim", "CLUP-Q-MONOTONE", "--budget", "2", "--out", o, "--no-plots"]), 2, &["nothing to write"]);
    assert!(!out.exists());
    // Negative control: a CCYW claim's search writes its files.
    let got = run(&["search", "--claim", "CCYW-T3.7", "--budget", "2", "--out", o, "--no-plots"]);
    assert!(matches!(got.0, 0 | 1), "search CCYW-T3.7 (a budget of 2 may differ from the card): {got:?}");
    assert!(out.join("search").read_dir().unwrap().count() > 0);
}

#[test]
fn a_search_whose_every_instance_is_not_applicable_checked_nothing_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    // With two evaluations FedPLT's recursion search reaches only instances where A6 fails.
    let got = run(&["search", "--claim", "FEDPLT-REC", "--budget", "2", "--out", o, "--no-plots"]);
    assert_exit("search FEDPLT-REC --budget 2", &got, 2, &["--budget", "nothing was checked"]);
    assert!(!out.exists(), "nothing is written when nothing was checked");
    // Negative control: the default budget reaches applicable instances and writes the search.
    let got = run(&["search", "--claim", "FEDPLT-REC", "--out", o, "--no-plots"]);
    assert!(matches!(got.0, 0 | 1), "search FEDPLT-REC: {got:?}");
    assert!(out.join("search").join("FEDPLT-REC@empirical.json").exists());
}

#[test]
fn conditions_refuses_unknown_names_and_values_out_of_range() {
    let card = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sgd-ball-fedplt-card.toml");
    let sets = ["eta=0.5", "L=1", "mu=0.2", "sigma2=0.09", "D0=9", "t=0", "psi_min=1", "psi_max=1", "tau=1", "Lambda=0", "constant_step=1"];
    let with = |replace: (&str, &str)| {
        let mut args = vec!["conditions".to_string(), "--card".into(), card.into(), "--claim".into(), "SGD-BALL".into()];
        for s in sets {
            args.extend(["--set".to_string(), if s == replace.0 { replace.1.to_string() } else { s.to_string() }]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&args)
    };
    assert_exit("--set nosuch", &with(("tau=1", "nosuch=1")), 2, &["--set nosuch", "unknown name", "sigma2"]);
    assert_exit("--set eta=nan", &with(("eta=0.5", "eta=nan")), 2, &["--set eta", "NaN", "(0, inf)"]);
    assert_exit("--set sigma2=-1", &with(("sigma2=0.09", "sigma2=-1")), 2, &["--set sigma2", "got -1", "[0, inf)"]);
    // Negative control.
    let (code, stdout, stderr) = with(("", ""));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("SGD-BALL: applicable"), "{stdout}");
}

#[test]
fn garbage_files_are_bad_input_and_os_errors_are_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = (0..2000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 0x80).collect();
    let garbage = dir.path().join("garbage.toml");
    std::fs::write(&garbage, bytes).unwrap();
    let g = garbage.to_str().unwrap();
    let out = dir.path().join("out");
    assert_exit("garbage card", &check(g, &out), 2, &["garbage.toml", "not UTF-8"]);
    assert_exit("garbage scenario", &run(&["run", g]), 2, &["garbage.toml", "not UTF-8"]);
    assert_exit("garbage sweep", &run(&["sweep", g, "--out", out.to_str().unwrap()]), 2, &["garbage.toml"]);
    let missing = dir.path().join("missing.toml");
    let got = run(&["run", missing.to_str().unwrap()]);
    assert_exit("missing file", &got, 2, &["missing.toml", "No such file"]);
    assert_eq!(got.2.matches("No such file").count(), 1, "{}", got.2);
    // Negative control: an error inside a scenario is printed once too.
    let card = write(dir.path(), "k.toml", &ccyw_card("100000000"));
    let got = check(&card, &out);
    assert_eq!(got.2.matches("algorithm.k").count(), 1, "{}", got.2);
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The names beside `dir` in its parent, other than `dir` itself and `keep`.
fn litter(dir: &Path, keep: &[&str]) -> Vec<String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| *n != name && !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn a_failed_write_leaves_the_previous_report() {
    let dir = tempfile::tempdir().unwrap();
    let card = write(dir.path(), "k.toml", &ccyw_card("2"));
    let out = dir.path().join("out");
    assert_exit("first write", &check(&card, &out), 0, &[]);
    let before = snapshot(&out);
    assert!(before.iter().any(|(p, _)| p == Path::new("SUMMARY.md")));
    // Files over 2 KiB cannot be written (a full disk, for root too); SIGXFSZ is ignored so the
    // write fails with an error instead of killing the process.
    let script = format!("trap '' XFSZ; ulimit -f 4; exec '{BIN}' check --card '{card}' --out '{}' --no-plots --bound-scale 0.5", out.display());
    let got = Command::new("sh").args(["-c", &script]).output().unwrap();
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(3), "{stderr}");
    assert_eq!(snapshot(&out), before, "the previous report is intact");
    assert_eq!(litter(&out, &["k.toml"]), Vec::<String>::new(), "temporary files removed");
    // A folder that is not a report is never replaced.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    assert_exit("--out a folder of other files", &check(&card, &other), 2, &["--out", "not a report folder"]);
    assert_eq!(std::fs::read_to_string(other.join("notes.txt")).unwrap(), "mine");
    // Negative control: the same write without the limit replaces the report.
    let got = run(&["check", "--card", &card, "--out", out.to_str().unwrap(), "--no-plots", "--bound-scale", "0.5"]);
    assert!(matches!(got.0, 0 | 1), "second write: {got:?}");
    assert_ne!(snapshot(&out), before);
}

#[test]
fn two_writers_on_one_folder_both_leave_a_complete_report() {
    let dir = tempfile::tempdir().unwrap();
    let card = write(dir.path(), "k.toml", &ccyw_card("2"));
    let out = dir.path().join("out");
    assert_exit("a single write", &check(&card, &out), 0, &[]);
    let names = |s: &[(PathBuf, Vec<u8>)]| s.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    let single = names(&snapshot(&out));
    for _ in 0..3 {
        let spawn = || Command::new(BIN).args(["check", "--card", &card, "--out", out.to_str().unwrap(), "--no-plots"]).output().unwrap();
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(spawn);
            let b = s.spawn(spawn);
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)), "{}\n{}", String::from_utf8_lossy(&a.stderr), String::from_utf8_lossy(&b.stderr));
        assert_eq!(names(&snapshot(&out)), single, "a complete report");
        assert_eq!(litter(&out, &["k.toml"]), Vec::<String>::new(), "temporary folders removed");
    }
}

#[test]
fn leftovers_of_a_killed_writer_are_removed_by_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let card = write(dir.path(), "k.toml", &ccyw_card("2"));
    let out = dir.path().join("out");
    assert_exit("first write", &check(&card, &out), 0, &[]);
    // What a writer killed mid-write leaves: its temporary folder, and a folder it had moved away
    // (pid 999999999 runs nowhere); a live process's temporary folder is not touched.
    let live = format!(".out.new-{}-1", std::process::id());
    for name in [".out.new-999999999-1", ".out.old-999999999-2", live.as_str()] {
        std::fs::create_dir(dir.path().join(name)).unwrap();
        std::fs::write(dir.path().join(name).join("SUMMARY.md"), "partial").unwrap();
    }
    assert_exit("second write", &check(&card, &out), 0, &[]);
    assert_eq!(litter(&out, &["k.toml"]), vec![live.clone()], "only the live writer's folder stays");
    // Negative control: a folder of another name is not a leftover of this report.
    std::fs::create_dir(dir.path().join(".other.new-999999999-1")).unwrap();
    assert_exit("third write", &check(&card, &out), 0, &[]);
    assert!(dir.path().join(".other.new-999999999-1").exists());
}

/// A sweep of the CCYW card's `paper-default` (checked on Theorem 3.7 alone) over `axis`, with
/// `head` lines (the design and its keys) before it; `base = "paper-default"` when `head` sets
/// no base. Gives the file's path.
fn ccyw_sweep(dir: &Path, axis: &str, head: &str) -> String {
    let card = format!("{}/theorems/ccyw-fedavg-p.toml", env!("CARGO_MANIFEST_DIR"));
    let base = if head.contains("base =") { "" } else { "base = \"paper-default\"\n" };
    let text = format!("name = \"s\"\ncard = \"{card}\"\n{base}unset = [\"expected\"]\nclaims = [\"CCYW-T3.7\"]\n{head}\n[[axes]]\n{axis}\n");
    write(dir, "sweep.toml", &text)
}

#[test]
fn a_sweep_axis_with_a_misspelt_key_inside_a_step_rule_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let good = ccyw_sweep(dir.path(), "key = \"algorithm.gamma.factor\"\nvalues = [0.5]", "");
    assert_exit("factor axis", &run(&["sweep", &good, "--out", o]), 0, &[]);
    // `factr` was ignored: every scenario ran at factor 1.
    let bad = ccyw_sweep(dir.path(), "key = \"algorithm.gamma.factr\"\nvalues = [0.25, 0.5]", "");
    let out2 = dir.path().join("out2");
    assert_exit("factr axis", &run(&["sweep", &bad, "--out", out2.to_str().unwrap()]), 2, &["refused as bad input"]);
    let json = std::fs::read_to_string(out2.join("sweep.json")).unwrap();
    assert_eq!(json.matches("unknown field `factr`, expected `admissible` or `factor`").count(), 2, "{json}");
}

#[test]
fn sweep_messages_say_missing_or_the_number_never_an_option() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let range = "key = \"algorithm.gamma.factor\"\nrange = [0.25, 0.5]";
    let no_points = ccyw_sweep(dir.path(), range, "");
    assert_exit("grid range without points", &run(&["sweep", &no_points, "--out", o]), 2, &["axes[0].points`: missing", "an integer from 1 to"]);
    let no_samples = ccyw_sweep(dir.path(), range, "design = \"random\"\nseed = 1");
    let got = run(&["sweep", &no_samples, "--out", o]);
    assert_exit("random without samples", &got, 2, &["`samples`: missing", "an integer from 1 to"]);
    let zero = ccyw_sweep(dir.path(), range, "design = \"random\"\nseed = 1\nsamples = 0");
    let got0 = run(&["sweep", &zero, "--out", o]);
    assert_exit("samples = 0", &got0, 2, &["`samples`: got 0", "an integer from 1 to"]);
    assert!(!got.2.contains("None") && !got0.2.contains("Some("), "{}\n{}", got.2, got0.2);
    let number_base = ccyw_sweep(dir.path(), range, "base = 5");
    let got = run(&["sweep", &number_base, "--out", o]);
    assert_exit("base = 5", &got, 2, &["expected the name of a scenario of the card (base = \"NAME\") or a [base] table"]);
    assert!(!got.2.contains("untagged"), "{}", got.2);
}
