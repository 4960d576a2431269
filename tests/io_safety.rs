//! What the command line writes, and where: card claim ids that cannot leave the output folder,
//! card claims that cannot hide behind a built-in id, `--out` targets that are never replaced
//! (a FIFO, a folder of the user's files), failed writes of standard output, and the replay
//! hint of a search. Each case has its negative control (a safe id, a regular file replaced, an
//! earlier report replaced).

use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).env_remove("RUST_BACKTRACE").output().expect("the fedbounds binary starts");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_code(what: &str, got: &(i32, String, String), code: i32, needles: &[&str]) {
    let (c, stdout, stderr) = got;
    assert!(!stderr.contains("panicked"), "{what}: panicked\n{stderr}");
    assert_eq!(*c, code, "{what}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{what}: `{n}` not in\n{stderr}");
    }
}

/// `examples/local-sgd-card.toml` with its second claim's id replaced by `id`, written into `dir`.
fn card_with_id(dir: &Path, id: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/local-sgd-card.toml")).unwrap();
    let path = dir.join("card.toml");
    std::fs::write(&path, text.replace("LOCAL-SGD~no-drift", id)).unwrap();
    path.to_str().unwrap().to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn card_claim_ids_that_are_not_safe_file_names_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    for id in ["../../ESCAPED", "", ".hidden", "a/b"] {
        let card = card_with_id(tmp.path(), id);
        let out = tmp.path().join("ck/esc");
        assert_code(&format!("check `{id}`"), &run(&["check", "--card", &card, "--out", s(&out), "--no-plots"]), 2, &["claims[1].id", "ASCII letters"]);
        let out = tmp.path().join("sx/o");
        let got = run(&["search", "--card", &card, "--claim", id, "--budget", "4", "--room-budget", "0", "--out", s(&out), "--no-plots"]);
        assert_code(&format!("search `{id}`"), &got, 2, &["claims[1].id"]);
    }
    // An id too long to name a file had run the whole check and failed writing it (exit 3).
    let card = card_with_id(tmp.path(), &"A".repeat(300));
    assert_code(
        "check a 300-character id",
        &run(&["check", "--card", &card, "--out", s(&tmp.path().join("ck/long")), "--no-plots"]),
        2,
        &["claims[1].id", "at most 120 characters"],
    );
    assert!(!tmp.path().join("ck").exists() && !tmp.path().join("sx").exists(), "nothing written");
    // Control: the longest id allowed names its files.
    let card = card_with_id(tmp.path(), &"A".repeat(120));
    let out = tmp.path().join("long-ok");
    assert_code("check a 120-character id", &run(&["check", "--card", &card, "--out", s(&out), "--no-plots"]), 0, &[]);
    assert!(out.join(format!("claims/{}.json", "A".repeat(120))).is_file());
    // Negative control: the example's own ids (`~` included) are accepted and name their files.
    let card = card_with_id(tmp.path(), "LOCAL-SGD~no-drift");
    let out = tmp.path().join("ok");
    assert_code("check the example", &run(&["check", "--card", &card, "--out", s(&out), "--no-plots"]), 0, &[]);
    assert!(out.join("claims/LOCAL-SGD~no-drift.json").is_file());
}

#[test]
fn a_card_claim_under_a_built_in_id_or_twice_the_same_id_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let card = card_with_id(tmp.path(), "CCYW-T3.7");
    let got = run(&["check", "--card", &card, "--out", s(&tmp.path().join("o")), "--no-plots"]);
    assert_code("built-in id", &got, 2, &["claims[1].id", "`CCYW-T3.7` is a built-in claim's id"]);
    // The same id twice (the second entry renamed, its expected verdicts dropped).
    let text = std::fs::read_to_string(&card).unwrap().replace("id = \"CCYW-T3.7\"", "id = \"LOCAL-SGD\"");
    let text: Vec<&str> = text.lines().filter(|l| !l.starts_with("\"CCYW-T3.7\" =")).collect();
    std::fs::write(&card, text.join("\n")).unwrap();
    assert_code("the same id twice", &run(&["list", "--card", &card]), 2, &["claims[1].id", "appears twice"]);
    // A built-in claim's entry naming another built-in bound (it had been checked with its own,
    // the name ignored), and an inconsistency listed twice, are refused.
    let clup = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("theorems/clup.toml")).unwrap();
    let edited = tmp.path().join("clup.toml");
    std::fs::write(&edited, clup.replacen("bound = { builtin = \"CLUP-L2\" }", "bound = { builtin = \"CLUP-L3\" }", 1)).unwrap();
    assert_code("another claim's bound", &run(&["list", "--card", s(&edited)]), 2, &["claims[CLUP-L2].bound.builtin", "checked with its own bound"]);
    std::fs::write(&edited, clup.replacen("id = \"I-CLUP2\"", "id = \"I-CLUP1\"", 1)).unwrap();
    assert_code("an inconsistency twice", &run(&["list", "--card", s(&edited)]), 2, &["inconsistencies[1].id", "`I-CLUP1` appears twice"]);
    // Negative controls: the embedded cards and the search's replay cards restate built-in
    // claims' entries as they are, and are read.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cards: Vec<_> = ["ccyw-fedavg-p", "ccyw-scaffold-p", "clup", "dpgp", "fedplt"].iter().map(|n| root.join(format!("theorems/{n}.toml"))).collect();
    for e in std::fs::read_dir(root.join("reports/search")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") && std::fs::read_to_string(&p).unwrap().contains("[[claims]]") {
            cards.push(p);
        }
    }
    for c in &cards {
        assert_code(&format!("list --card {}", c.display()), &run(&["list", "--card", s(c)]), 0, &[]);
    }
}

#[test]
fn run_out_never_replaces_a_fifo_or_a_folder_but_replaces_a_regular_file() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/explicit.toml");
    let fifo = tmp.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    assert_code("--out FIFO", &run(&["run", s(&scenario), "--out", s(&fifo)]), 2, &["--out", "not a regular file"]);
    use std::os::unix::fs::FileTypeExt as _;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is left as it was");
    assert_code("--out folder", &run(&["run", s(&scenario), "--out", s(tmp.path())]), 2, &["--out"]);
    let got = run(&["run", s(&scenario), "--export-instance", s(&fifo)]);
    assert_code("--export-instance FIFO", &got, 2, &["--export-instance"]);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "no temporary file left");
    // Negative control: a regular file is replaced.
    let file = tmp.path().join("run.json");
    std::fs::write(&file, "old").unwrap();
    assert_code("--out regular file", &run(&["run", s(&scenario), "--out", s(&file)]), 0, &[]);
    assert!(std::fs::read_to_string(&file).unwrap().contains("\"meta\""));
}

#[test]
fn search_and_experiments_keep_a_folder_of_the_users_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("DIR");
    std::fs::create_dir_all(dir.join("search")).unwrap();
    std::fs::create_dir_all(dir.join("experiments")).unwrap();
    std::fs::write(dir.join("search/mynotes.txt"), "mine").unwrap();
    std::fs::write(dir.join("experiments/mydata.csv"), "mine").unwrap();
    let search = ["search", "--claim", "CCYW-T3.7", "--budget", "2", "--room-budget", "24", "--no-plots", "--out", s(&dir)];
    assert_code("search", &run(&search), 2, &["--out", "search", "mynotes.txt"]);
    assert_code("experiments", &run(&["experiments", "--no-plots", "--out", s(&dir)]), 2, &["--out", "experiments", "mydata.csv"]);
    assert_eq!(std::fs::read_to_string(dir.join("search/mynotes.txt")).unwrap(), "mine");
    assert_eq!(std::fs::read_to_string(dir.join("experiments/mydata.csv")).unwrap(), "mine");
    // Negative control: an earlier search report is replaced by the next one.
    std::fs::remove_file(dir.join("search/mynotes.txt")).unwrap();
    assert_eq!(run(&search).0, 1, "a not-applicable search differs from its card");
    assert_eq!(run(&search).0, 1, "the second run replaces the first one's report");
    assert!(dir.join("search/search.csv").is_file());
}

#[test]
fn an_out_that_is_a_file_is_refused_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("FILE");
    std::fs::write(&file, "mine").unwrap();
    let started = std::time::Instant::now();
    assert_code("experiments", &run(&["experiments", "--out", s(&file)]), 2, &["--out"]);
    assert!(started.elapsed().as_secs_f64() < 3.0, "refused up front");
    let sweep = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sweep.toml");
    assert_code("merge", &run(&["merge", s(&sweep), s(tmp.path()), "--out", s(&file)]), 2, &["--out"]);
    assert_code("search", &run(&["search", "--claim", "CCYW-T3.7", "--budget", "2", "--out", s(&file)]), 2, &["--out"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn an_out_that_cannot_be_written_is_bad_input_before_the_run() {
    // `/proc` takes no new file: the check had run every claim, then failed to write (exit 3).
    assert_code("check --out /proc/...", &run(&["check", "--out", "/proc/fedbounds-reports"]), 2, &["--out", "no file can be created in `/proc`"]);
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/explicit.toml");
    assert_code("run --out /proc/...", &run(&["run", s(&scenario), "--out", "/proc/out.json"]), 2, &["--out", "no file can be created in `/proc`"]);
    // Control: a file in a writable folder, or in one yet to be created there, is written, and
    // the probe leaves nothing behind.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("new-folder/out.json");
    assert_code("run --out", &run(&["run", s(&scenario), "--out", s(&out)]), 0, &[]);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "new-folder alone");
    assert_eq!(std::fs::read_dir(tmp.path().join("new-folder")).unwrap().count(), 1, "out.json alone");
}

#[test]
fn a_failed_write_of_standard_output_exits_3() {
    // /dev/full as standard output (opened for writing only, as a shell's `> /dev/full`): every
    // write fails with ENOSPC.
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/explicit.toml");
    for args in [vec!["list"], vec!["explain", "CCYW-T3.7"], vec!["run", s(&scenario)]] {
        let out = Command::new(BIN).args(&args).stdout(Stdio::from(full.try_clone().unwrap())).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains("cannot write standard output"), "{args:?}: {stderr}");
    }
    // Negative control: the same commands into a pipe exit 0.
    assert_eq!(run(&["list"]).0, 0);
}

#[test]
fn a_search_names_its_replay_file_under_out_and_only_when_it_was_written() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("X");
    let got = run(&["search", "--claim", "CCYW-T3.7", "--budget", "2", "--room-budget", "24", "--no-plots", "--out", s(&out)]);
    assert_code("no instance found", &got, 1, &["CCYW-T3.7 (search: not applicable, no admissible instance"]);
    assert!(!got.2.contains("replay with") && !out.join("search/CCYW-T3.7.toml").exists(), "{}", got.2);
    // Negative control: a violated search writes the replay file and names it under --out.
    let got = run(&["search", "--claim", "CCYW-T3.7", "--budget", "4", "--room-budget", "0", "--bound-scale", "0.001", "--no-plots", "--out", s(&out)]);
    let replay = out.join("search/CCYW-T3.7.toml");
    assert_code("violated", &got, 1, &[&format!("replay with `cargo run --release -- run {}`", replay.display())]);
    assert!(replay.is_file());
}

/// Runs the binary with `FEDBOUNDS_PROGRESS_INTERVAL` set to `interval` (standard error is a pipe,
/// as in a log).
fn run_with_interval(args: &[&str], interval: Option<&str>) -> (i32, String, String) {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("RUST_BACKTRACE").env_remove("FEDBOUNDS_PROGRESS_INTERVAL");
    if let Some(i) = interval {
        command.env("FEDBOUNDS_PROGRESS_INTERVAL", i);
    }
    let out = command.output().expect("the fedbounds binary starts");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_phase_longer_than_the_interval_prints_progress_lines_in_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    // About 4 s of search: at a 1 s interval it prints its count, then its end.
    let long = run_with_interval(&["search", "--claim", "CCYW-T3.7", "--budget", "5000", "--no-plots", "--out", out], Some("1"));
    assert_code("search, interval 1 s", &long, 0, &["fedbounds: claims searched: 0/1 after ", "fedbounds: claims searched: 1/1 done in "]);
    // Controls: a run shorter than the default interval keeps the log clean; 0 turns the lines off.
    let short = ["search", "--claim", "CCYW-T3.7", "--budget", "50", "--no-plots", "--out", out];
    for interval in [None, Some("0")] {
        let got = run_with_interval(&short, interval);
        assert_code(&format!("short search, interval {interval:?}"), &got, 0, &[]);
        assert!(!got.2.contains("fedbounds: claims searched"), "{interval:?}: {}", got.2);
    }
    // An interval that is no number of seconds is bad input, refused before anything is written.
    let fresh = tempfile::tempdir().unwrap();
    let bad = run_with_interval(&["search", "--claim", "CCYW-T3.7", "--out", fresh.path().to_str().unwrap()], Some("soon"));
    assert_code("interval `soon`", &bad, 2, &["FEDBOUNDS_PROGRESS_INTERVAL", "got `soon`", "[0, 86400]"]);
    assert!(!fresh.path().join("search").exists(), "nothing written");
}
