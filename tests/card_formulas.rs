//! A claim written in a card, not in Rust: checked, listed, queried and searched like a built-in
//! one through the command line, and refused with the claim, the field and the position when a
//! formula is wrong (exit 2, nothing written).

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");
const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/local-sgd-card.toml");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).env_remove("RUST_BACKTRACE").output().expect("the fedbounds binary starts");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn out_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

#[test]
fn a_card_defined_claim_is_checked_end_to_end() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let (code, stdout, stderr) = run(&["check", "--card", EXAMPLE, "--out", out, "--no-plots", "--format", "csv"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("LOCAL-SGD,")).collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    assert!(rows.iter().filter(|r| r.contains(",holds,holds,")).count() == 3, "{stdout}");
    assert!(rows.iter().any(|r| r.contains("local-sgd-past-step,exact,not-applicable")), "{stdout}");
    assert!(!stdout.contains("CCYW-T3.7,"), "only the card's own claims are checked by default: {stdout}");
    assert!(Path::new(out).join("claims").join("LOCAL-SGD.md").exists(), "the claim has its report page");
    // Negative control: the bound shrunk below the observed values is reported violated (exit 1).
    let (code, stdout, _) = run(&["check", "--card", EXAMPLE, "--claim", "LOCAL-SGD", "--out", out, "--no-plots", "--format", "csv", "--bound-scale", "0.05"]);
    assert_eq!(code, 1);
    assert!(stdout.lines().any(|l| l.starts_with("LOCAL-SGD,") && l.contains(",violated,")), "{stdout}");
}

#[test]
fn list_conditions_and_search_see_a_card_defined_claim() {
    let (code, stdout, stderr) = run(&["list", "--card", EXAMPLE]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("LOCAL-SGD ") && stdout.contains("LOCAL-SGD~no-drift"), "{stdout}");
    let (code, stdout, stderr) = run(&[
        "conditions",
        "--card",
        EXAMPLE,
        "--claim",
        "LOCAL-SGD",
        "--n",
        "10",
        "--m",
        "10",
        "--k",
        "5",
        "--rounds",
        "100",
        "--l",
        "1",
        "--f0",
        "2",
        "--b2",
        "1",
        "--sigma-u2",
        "1",
        "--du",
        "4",
        "--dv",
        "0",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("LOCAL-SGD: admissible gamma <= 0.025, eta_u = 1"), "{stdout}");
    assert!(stdout.contains("[ok] gamma <= 1/(8*L*K)") && stdout.contains("bound = "), "{stdout}");
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let (code, stdout, stderr) = run(&["search", "--card", EXAMPLE, "--claim", "LOCAL-SGD", "--budget", "8", "--out", out, "--no-plots"]);
    assert!(code == 0 || code == 1, "{stdout}\n{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("LOCAL-SGD ")), "{stdout}");
    assert!(Path::new(out).join("search").join("LOCAL-SGD.toml").exists());
    let (_, stdout, _) = run(&["list", "--symbols"]);
    assert!(stdout.contains("sigma_u2") && stdout.contains("div_pos"), "{stdout}");
}

/// A strict step condition of a card is printed as strict: `conditions` names its limit with `<`
/// and checks a step just inside it, and a step at the limit fails.
#[test]
fn conditions_prints_a_strict_limit_as_strict() {
    let strict = card_with("\"gamma <= 1/(8*L*K)\"", "\"gamma < 1/(8*L*K)\"");
    let card = strict.path().to_str().expect("utf-8 path");
    let given = ["--n", "10", "--m", "10", "--k", "5", "--rounds", "100", "--l", "1", "--f0", "2", "--b2", "1", "--sigma-u2", "1", "--du", "4", "--dv", "0"];
    let (code, stdout, stderr) = run(&[&["conditions", "--card", card, "--claim", "LOCAL-SGD"][..], &given].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("LOCAL-SGD: admissible gamma < 0.025, eta_u = 1"), "{stdout}");
    assert!(stdout.contains(": applicable") && stdout.contains("[ok] gamma < 1/(8*L*K)"), "{stdout}");
    let (code, stdout, stderr) = run(&[&["conditions", "--card", card, "--claim", "LOCAL-SGD", "--gamma", "0.025"][..], &given].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("NOT applicable") && stdout.contains("[FAIL] gamma < 1/(8*L*K): given 0.025 >= required 0.025"), "{stdout}");
}

/// An outer step's limit is printed with its own relation: the card's prescribed `eta_u = 1` as
/// `=`, and a strict `eta_u > 1` as `>`, checked just inside it; `eta_u` at the limit fails. (Both
/// had been printed `eta_u >= 1`.)
#[test]
fn conditions_prints_an_outer_step_limit_with_its_relation() {
    let given = ["--n", "10", "--m", "10", "--k", "5", "--rounds", "100", "--l", "1", "--f0", "2", "--b2", "1", "--sigma-u2", "1", "--du", "4", "--dv", "0"];
    let strict = card_with("conditions = [\"eta_u = 1\", \"gamma <= 1/(8*L*K)\"]", "conditions = [\"eta_u > 1\", \"gamma <= 1/(8*L*K)\"]");
    let card = strict.path().to_str().expect("utf-8 path");
    let (code, stdout, stderr) = run(&[&["conditions", "--card", card, "--claim", "LOCAL-SGD"][..], &given].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("LOCAL-SGD: admissible gamma <= 0.025, eta_u > 1, eta_v >= 1"), "{stdout}");
    assert!(stdout.contains(": applicable") && stdout.contains("[ok] eta_u > 1"), "{stdout}");
    let (code, stdout, stderr) = run(&[&["conditions", "--card", card, "--claim", "LOCAL-SGD", "--eta-u", "1"][..], &given].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("NOT applicable") && stdout.contains("[FAIL] eta_u > 1"), "{stdout}");
    let (code, stdout, stderr) = run(&[&["conditions", "--card", EXAMPLE, "--claim", "LOCAL-SGD"][..], &given].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("LOCAL-SGD: admissible gamma <= 0.025, eta_u = 1, eta_v >= 1"), "{stdout}");
}

/// The example card with one formula replaced.
fn card_with(from: &str, to: &str) -> tempfile::NamedTempFile {
    example_with(EXAMPLE, from, to)
}

/// An example card with one formula replaced.
fn example_with(path: &str, from: &str, to: &str) -> tempfile::NamedTempFile {
    let text = std::fs::read_to_string(path).expect("the example card");
    assert!(text.contains(from), "{from}");
    let f = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(f.path(), text.replacen(from, to, 1)).expect("written");
    f
}

fn assert_refused(card: &tempfile::NamedTempFile, needles: &[&str]) {
    let dir = out_dir();
    let out = dir.path().join("reports");
    for args in [
        vec!["check", "--card", card.path().to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-plots"],
        vec!["list", "--card", card.path().to_str().unwrap()],
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stdout}\n{stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{args:?}: `{n}` not in {stderr}");
        }
        assert!(!out.exists(), "nothing written");
    }
}

#[test]
fn bad_formulas_are_refused_with_the_claim_the_field_and_the_position() {
    let bound = "bound = \"4*F0/(T*K*gamma) + 4*L*gamma*sigma_u2/n + drift\"";
    assert_refused(&card_with(bound, "bound = \"4*F0/(T*K*gama) + drift\""), &["claims[LOCAL-SGD].formula.bound", "column 11", "unknown symbol `gama`"]);
    assert_refused(&card_with(bound, "bound = \"4*F0/(T*K*gamma + drift\""), &["claims[LOCAL-SGD].formula.bound", "column 24", "`)`"]);
    assert_refused(&card_with(bound, "bound = \"4*F0/(T*(K-1)*gamma)\""), &["claims[LOCAL-SGD].formula.bound", "column 6", "can be zero"]);
    let cond = "conditions = [\"eta_u = 1\", \"gamma <= 1/(8*L*K)\"]";
    assert_refused(&card_with(cond, "conditions = [\"eta_u = 1\", \"gamma - 1/(8*L*K)\"]"), &["claims[LOCAL-SGD].formula.conditions[1]", "not a comparison"]);
    assert_refused(
        &card_with("metric = \"shared_plus_personal\"", "metric = \"gradient_norm\""),
        &["claims[LOCAL-SGD].formula.metric", "shared_plus_weighted_personal"],
    );
    // A per-round quantity of a proof has no value where a card-defined bound is compared.
    assert_refused(
        &card_with(bound, "bound = \"4*F0/(T*K*gamma) + 4*L*gamma*sigma_u2/n + E_t\""),
        &["claims[LOCAL-SGD].formula", "reads `E_t`, a per-round quantity of a proof"],
    );
    let lets = "let = [\"drift = 16*L^2";
    assert_refused(&card_with(lets, "let = [\"drift = 16*L^^2"), &["claims[LOCAL-SGD].formula.let[0]", "column 14"]);
}

const FEDPLT_EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/sgd-ball-fedplt-card.toml");
const DPGP_EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/theorem1-unit-constant-dpgp-card.toml");

/// The CSV rows of one claim.
fn rows_of<'a>(stdout: &'a str, claim: &str) -> Vec<&'a str> {
    stdout.lines().filter(|l| l.starts_with(&format!("{claim},"))).collect()
}

#[test]
fn a_fedplt_card_defined_claim_is_checked_listed_and_queried() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let (code, stdout, stderr) = run(&["check", "--card", FEDPLT_EXAMPLE, "--out", out, "--no-plots", "--format", "csv"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let rows = rows_of(&stdout, "SGD-BALL");
    assert_eq!(rows.len(), 3, "{stdout}");
    assert_eq!(rows.iter().filter(|r| r.contains(",exact,holds,holds,")).count(), 2, "{stdout}");
    assert!(rows.iter().any(|r| r.contains("sgd-ball-heterogeneous,exact,not-applicable,not-applicable")), "{stdout}");
    assert!(!stdout.contains("FEDPLT-CONST,"), "only the card's own claims are checked by default: {stdout}");
    assert!(Path::new(out).join("claims").join("SGD-BALL.json").exists() && Path::new(out).join("claims").join("SGD-BALL.md").exists());
    // Negative control: the bound shrunk below the observed distances is reported violated (exit 1).
    let (code, stdout, _) = run(&["check", "--card", FEDPLT_EXAMPLE, "--out", out, "--no-plots", "--format", "csv", "--bound-scale", "0.5"]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(rows_of(&stdout, "SGD-BALL").iter().filter(|r| r.contains(",violated,")).count(), 2, "{stdout}");
    let (code, stdout, stderr) = run(&["list", "--card", FEDPLT_EXAMPLE]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("SGD-BALL "), "{stdout}");
    let set = |kv: &'static str| ["--set", kv];
    let mut args = vec!["conditions", "--card", FEDPLT_EXAMPLE, "--claim", "SGD-BALL"];
    for kv in ["eta=0.5", "L=1", "mu=0.2", "sigma2=0.09", "D0=9", "t=0", "psi_min=1", "psi_max=1", "tau=1", "Lambda=0", "constant_step=1"] {
        args.extend(set(kv));
    }
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    // (1 - 0.1)^0 * 9 + 0.5 * 0.09 / 0.2 = 9.225
    assert!(stdout.contains("SGD-BALL: applicable") && stdout.contains("bound = 9.225"), "{stdout}");
    // FedPLT's search covers its built-in claims, not the claims a card defines by formulas.
    let (code, _, stderr) = run(&["search", "--card", FEDPLT_EXAMPLE, "--claim", "SGD-BALL", "--budget", "4", "--out", out, "--no-plots"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nothing to write"), "{stderr}");
}

/// A search of a built-in claim with a user card that has no `[search]` table reads what the
/// family's own card expects: FEDPLT-PSI-STEP's search is expected violated (I-PLT4), and with
/// `--card` it had been expected to hold, exit 1. Control: a search whose verdict differs from
/// the family card's expectation (FEDPLT-REC with its bound scaled to 0.01) still exits 1.
#[test]
fn a_search_with_a_user_card_expects_what_the_family_card_expects_of_a_built_in_claim() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let search = |claim: &str, extra: &[&str]| {
        run(&[&["search", "--card", FEDPLT_EXAMPLE, "--claim", claim, "--budget", "5", "--room-budget", "0", "--out", out, "--no-plots"][..], extra].concat())
    };
    let (code, _, stderr) = search("FEDPLT-PSI-STEP", &[]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("search").join("FEDPLT-PSI-STEP.json")).unwrap()).unwrap();
    let row = &json["search"];
    assert_eq!((row["verdict"].as_str(), row["expected"].as_str()), (Some("violated"), Some("violated")), "{row}");
    let (code, _, stderr) = search("FEDPLT-REC", &["--bound-scale", "0.01"]);
    assert_eq!(code, 1, "{stderr}");
}

/// A replay card found with `--bound-scale` says so in its first line, with the option that
/// reproduces its expected verdict: replayed with it the check agrees with the card (exit 0);
/// replayed without it (the control) the unscaled bound holds where the card expects violated.
#[test]
fn a_replay_found_with_a_scaled_bound_names_the_scale_that_reproduces_it() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let (code, _, stderr) =
        run(&["search", "--claim", "FEDPLT-REC", "--bound-scale", "0.01", "--budget", "5", "--room-budget", "0", "--out", out, "--no-plots"]);
    assert_eq!(code, 1, "the scaled bound is violated, which the card does not expect: {stderr}");
    let replay = dir.path().join("search").join("FEDPLT-REC@empirical.toml");
    let text = std::fs::read_to_string(&replay).unwrap();
    assert!(text.starts_with("# Found with --bound-scale 0.01:"), "{}", &text[..200]);
    // The report's command repeats every option that changes what the search finds (it had left
    // out `--room-budget`).
    let json = std::fs::read_to_string(dir.path().join("search").join("FEDPLT-REC@empirical.json")).unwrap();
    assert!(json.contains("search --budget 5 --seed") && json.contains("--bound-scale 0.01 --room-budget 0\""), "{json}");
    let replay = replay.to_str().unwrap();
    let again = dir.path().join("again");
    let again = again.to_str().unwrap();
    assert_eq!(run(&["check", "--card", replay, "--bound-scale", "0.01", "--out", again, "--no-plots"]).0, 0);
    assert_eq!(run(&["check", "--card", replay, "--out", again, "--no-plots"]).0, 1);
}

#[test]
fn a_dpgp_card_defined_claim_is_checked_listed_and_queried() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let (code, stdout, stderr) = run(&["check", "--card", DPGP_EXAMPLE, "--out", out, "--no-plots", "--format", "csv"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let rows = rows_of(&stdout, "T1-UNIT-CONSTANT");
    assert_eq!(rows.len(), 1, "{stdout}");
    assert!(rows[0].contains("t1-ring-low,estimated,holds,holds,"), "{stdout}");
    assert!(!stdout.contains("DPGP-T1,"), "only the card's own claims are checked by default: {stdout}");
    // Negative control.
    let (code, stdout, _) = run(&["check", "--card", DPGP_EXAMPLE, "--out", out, "--no-plots", "--format", "csv", "--bound-scale", "0.1"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(rows_of(&stdout, "T1-UNIT-CONSTANT")[0].contains(",violated,"), "{stdout}");
    let (code, stdout, stderr) = run(&["list", "--card", DPGP_EXAMPLE]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("T1-UNIT-CONSTANT "), "{stdout}");
    let args =
        ["conditions", "--card", DPGP_EXAMPLE, "--claim", "T1-UNIT-CONSTANT", "--set", "eta_u=0.1", "--set", "delta=1", "--set", "L_u=2", "--set", "K_u=1"];
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stderr}");
    // delta / (4 sqrt(2 L_u K_u)) = 1/8 = 0.125
    assert!(stdout.contains("[ok] eta_u < delta/(4*sqrt(2*L_u*K_u)): given 0.1 < required 0.125"), "{stdout}");
    let (code, _, stderr) = run(&["search", "--card", DPGP_EXAMPLE, "--claim", "T1-UNIT-CONSTANT", "--budget", "4", "--out", out, "--no-plots"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nothing to write"), "{stderr}");
}

#[test]
fn bad_formulas_in_fedplt_and_dpgp_cards_are_refused_with_the_position() {
    let bound = "bound = \"(1 - eta*mu)^t*D0 + eta*sigma2/mu\"";
    assert_refused(
        &example_with(FEDPLT_EXAMPLE, bound, "bound = \"(1 - eta*mu)^t*D0 + eta*sigma/mu\""),
        &["claims[SGD-BALL].formula.bound", "column 25", "unknown symbol `sigma`"],
    );
    assert_refused(
        &example_with(FEDPLT_EXAMPLE, bound, "bound = \"(1 - eta*mu)^t*D0 + eta*sigma2/mu + D_t\""),
        &["claims[SGD-BALL].formula", "reads `D_t`, a per-round quantity of a proof"],
    );
    assert_refused(&example_with(FEDPLT_EXAMPLE, "metric = \"distance\"", "metric = \"loss\""), &["claims[SGD-BALL].formula.metric", "distance"]);
    let bound = "bound = \"(F0 - F_star)/sqrt(T)";
    assert_refused(
        &example_with(DPGP_EXAMPLE, bound, "bound = \"(F0 - F_star)/(T - 1)"),
        &["claims[T1-UNIT-CONSTANT].formula.bound", "column 15", "can be zero"],
    );
    assert_refused(&example_with(DPGP_EXAMPLE, "compare = \"running-average\"", "compare = \"slope\""), &["claims[T1-UNIT-CONSTANT].formula.compare"]);
}

#[test]
fn reading_a_card_is_pure_the_same_card_twice_agrees_and_two_cards_do_not_interfere() {
    use fedbounds::family::{CardText, CheckRequest, Family, Silent};
    let registry = fedbounds::families::registry();
    let card = |path: &str| CardText { what: path.into(), text: std::fs::read_to_string(path).expect("example card") };
    let (ccyw, fedplt) = (card(EXAMPLE), card(FEDPLT_EXAMPLE));
    // The built-in claims are what they are, before and after any card is read.
    let builtin = |f: &dyn Family| f.claims().iter().map(|c| c.id).collect::<Vec<_>>();
    let before: Vec<Vec<&str>> = registry.families().iter().map(|f| builtin(*f)).collect();
    let (family, first) = registry.read_card(&ccyw).expect("the CCYW example reads");
    let (_, again) = registry.read_card(&ccyw).expect("and reads again");
    let ids = |claims: &[fedbounds::family::ClaimSummary]| claims.iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(family.id(), "ccyw");
    assert_eq!(ids(&first), vec!["LOCAL-SGD", "LOCAL-SGD~no-drift"]);
    assert_eq!(ids(&first), ids(&again), "the same card read twice defines the same claims");
    let (other, second) = registry.read_card(&fedplt).expect("the FedPLT example reads");
    assert_eq!((other.id(), ids(&second)), ("fedplt", vec!["SGD-BALL"]));
    let after: Vec<Vec<&str>> = registry.families().iter().map(|f| builtin(*f)).collect();
    assert_eq!(before, after, "reading cards leaves the built-in claims as they were");
    // A claim a card defines is known only with that card: without it, or with another card,
    // it is an unknown claim.
    assert!(registry.require_known_claims(&["LOCAL-SGD".into()], Some(&ccyw)).is_ok());
    assert!(registry.require_known_claims(&["LOCAL-SGD".into()], None).is_err());
    assert!(registry.require_known_claims(&["LOCAL-SGD".into()], Some(&fedplt)).is_err());
    // A check without the card does not see the card's claim.
    let request = CheckRequest { claims: vec!["LOCAL-SGD".into()], ..Default::default() };
    assert!(registry.check(&request, &Silent).is_err());
}

#[test]
fn a_check_that_selects_nothing_fails_with_exit_2() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    // A claim of one family with a scenario of another: no pair is checked.
    let (code, stdout, stderr) = run(&["check", "--claim", "CCYW-T3.7", "--scenario", "ring-low", "--out", out, "--no-plots"]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("nothing checked") && stderr.contains("--claim CCYW-T3.7 --scenario ring-low"), "{stderr}");
    assert!(std::fs::read_dir(out).map(|d| d.count()).unwrap_or(0) == 0, "nothing is written");
    // Negative control: the same claim on a scenario of its setting is checked.
    let (code, _, stderr) = run(&["check", "--claim", "CCYW-T3.7", "--scenario", "paper-default", "--out", out, "--no-plots"]);
    assert_eq!(code, 0, "{stderr}");
}

/// A scenario name may hold a comma, a quote or a line break (a card accepts any name): the CSV
/// quotes such a field (RFC 4180), so every row still has the header's columns. It had been
/// written bare, splitting one row into fields of other columns and over two lines.
#[test]
fn csv_rows_quote_a_scenario_name_with_a_comma_or_a_quote() {
    let dir = out_dir();
    let text = std::fs::read_to_string(EXAMPLE).unwrap().replace("name = \"local-sgd-heterogeneous-k5\"", "name = \"het,k5 \\\"q\\\"\"");
    let card = dir.path().join("comma.toml");
    std::fs::write(&card, text).unwrap();
    let out = dir.path().join("out");
    let (code, stdout, stderr) = run(&["check", "--card", card.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-plots", "--format", "csv"]);
    assert_eq!(code, 0, "{stderr}");
    let columns = |line: &str| {
        let (mut fields, mut quoted) = (1, false);
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => fields += 1,
                _ => {}
            }
        }
        fields
    };
    let header = stdout.lines().next().unwrap();
    assert!(stdout.lines().all(|l| columns(l) == columns(header)), "{stdout}");
    assert!(stdout.contains("\"het,k5 \"\"q\"\"\""), "{stdout}");
    // Control: a plain name is written as it is.
    assert!(stdout.contains(",local-sgd-heterogeneous-k20,"), "{stdout}");
}

/// `list --symbols --json` is JSON, as `--json` promises (it had printed the table): every family
/// with symbols, each symbol with its name, range and meaning. Control: without `--json`, the table.
#[test]
fn listed_symbols_are_json_when_asked() {
    let (code, stdout, stderr) = run(&["list", "--symbols", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    let families = json["families"].as_array().expect("families");
    assert!(families.iter().any(|f| f["family"] == "ccyw" && f["symbols"].as_array().is_some_and(|s| s.iter().any(|s| s["name"] == "gamma"))), "{stdout}");
    let (code, table, _) = run(&["list", "--symbols"]);
    assert!(code == 0 && table.contains("names a card formula may use") && serde_json::from_str::<serde_json::Value>(&table).is_err());
}

/// A card formula with a `bound` and the sides `lhs`/`rhs` is refused, naming the formula: the
/// sides had been read and never compared. Control: the bound alone is checked.
#[test]
fn a_formula_with_a_bound_and_sides_is_refused() {
    let dir = out_dir();
    let text = std::fs::read_to_string(EXAMPLE).unwrap();
    let line = "bound = \"4*F0/(T*K*gamma) + 4*L*gamma*sigma_u2/n + drift\"";
    assert!(text.contains(line));
    let card = dir.path().join("both.toml");
    std::fs::write(&card, text.replacen(line, &format!("{line}\nlhs = \"1\"\nrhs = \"2\""), 1)).unwrap();
    let out = dir.path().join("out");
    let (code, _, stderr) = run(&["check", "--card", card.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-plots"]);
    assert!(code == 2 && stderr.contains(".formula") && stderr.contains("not both"), "{code}: {stderr}");
    assert!(!out.exists(), "nothing written");
    let (code, _, stderr) = run(&["check", "--card", EXAMPLE, "--out", out.to_str().unwrap(), "--no-plots"]);
    assert_eq!(code, 0, "{stderr}");
}

/// A search of claims no search covers says which claims it covers and where the reasons are:
/// it had named only FedAvg-P's claims, though every family searches some of its own. Control:
/// a FedPLT claim the search covers writes its report.
#[test]
fn a_search_of_an_unsearched_claim_says_where_to_read_why() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let (code, _, stderr) = run(&["search", "--claim", "FEDPLT-LIMIT", "--budget", "2", "--room-budget", "0", "--out", out, "--no-plots"]);
    assert!(code == 2 && stderr.contains("claims an adversarial search covers") && !stderr.contains("CCYW's"), "{code}: {stderr}");
    let (code, _, stderr) = run(&["search", "--claim", "FEDPLT-REC", "--budget", "5", "--room-budget", "0", "--out", out, "--no-plots"]);
    assert!(code == 0 || code == 1, "{stderr}");
    assert!(dir.path().join("search").join("search.csv").exists());
}

/// `search` refuses a claim no search covers even beside one it covers, and a claim asked for
/// twice, writing nothing; the count of files it reports is the count on disk (FedAvg-P's own
/// table is replaced by every family's, not counted twice). Control: the covered claim alone.
#[test]
fn a_search_names_every_claim_it_drops_and_counts_what_it_writes() {
    let dir = out_dir();
    let out = dir.path().to_str().expect("utf-8 path");
    let base = ["search", "--budget", "4", "--room-budget", "0", "--no-plots", "--out", out];
    let with = |claims: &[&str]| {
        let mut args: Vec<&str> = base.to_vec();
        claims.iter().for_each(|c| args.extend(["--claim", c]));
        run(&args)
    };
    let (code, _, stderr) = with(&["CCYW-T3.7", "FEDPLT-LIMIT"]);
    assert!(code == 2 && stderr.contains("FEDPLT-LIMIT") && !dir.path().join("search").exists(), "{code}: {stderr}");
    let (code, _, stderr) = with(&["CCYW-T3.7", "CCYW-T3.7"]);
    assert!(code == 2 && stderr.contains("asked for twice") && !dir.path().join("search").exists(), "{code}: {stderr}");
    let (code, stdout, stderr) = with(&["CCYW-T3.7"]);
    assert!(code == 0 || code == 1, "{stderr}");
    let on_disk = std::fs::read_dir(dir.path().join("search")).unwrap().count();
    assert!(stdout.contains(&format!("wrote {on_disk} files under")), "{on_disk} files: {stdout}");
}

/// `search --room-budget` sets FedAvg-P's rooms over any instance as it does every family's: 0
/// measures none (the room on the worst instance only), 2 searches each multiple with 2
/// evaluations (FedAvg-P's rooms had taken 60 whatever was asked).
#[test]
fn a_fedavg_p_search_takes_the_room_budget_it_is_given() {
    let rooms = |budget: &str| {
        let dir = out_dir();
        let out = dir.path().to_str().expect("utf-8 path").to_string();
        let (code, _, stderr) = run(&["search", "--claim", "CCYW-T3.7", "--budget", "4", "--room-budget", budget, "--no-plots", "--out", &out]);
        assert!(code == 0 || code == 1, "{stderr}");
        let text = std::fs::read_to_string(dir.path().join("search").join("CCYW-T3.7.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        (json["result"]["room"].clone(), json["result"]["eta_room"].clone())
    };
    let (gamma, eta) = rooms("0");
    assert!(gamma.is_null() && eta.is_null(), "{gamma} {eta}");
    let (gamma, eta) = rooms("2");
    assert_eq!(gamma["budget"], 2, "{gamma}");
    assert_eq!(eta["budget"], 2, "{eta}");
}
