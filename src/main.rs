//! `fedbounds`: a thin command line over the library.
//!
//! Exit codes: 0 all verdicts as expected; 1 a computed verdict differs from its card; 2 bad
//! input (unknown field, value out of range, unknown claim); 3 an I/O or numerical failure.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use fedbounds::families::ccyw::card::{self, Card};
use fedbounds::families::ccyw::check::{self, CheckOptions, ScenarioRun};
use fedbounds::families::ccyw::claims::{self, fmt_num, Claim, ClaimInputs};
use fedbounds::families::ccyw::experiments;
use fedbounds::families::ccyw::report::{self, ReportMeta};
use fedbounds::verdict::VerdictKind;
use fedbounds::Error;

const EXIT_MISMATCH: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;
const EXIT_FAILURE: u8 = 3;

#[derive(Parser)]
#[command(
    name = "fedbounds",
    version,
    about = "Check convergence theorems of federated-learning papers against exact, seeded numerics",
    long_about = "fedbounds encodes each convergence claim of a paper as an executable bound, runs the \
algorithm on quadratic instances whose constants (L, sigma, b, F0, ...) are computed exactly, and \
reports a verdict per claim and scenario: holds (with slack = bound/observed), violated (with the \
counterexample), inconclusive, or not applicable (which assumption or step-size condition fails, by \
how much).\n\nStart with `fedbounds list`, then `fedbounds check` (all claims on the default \
scenarios of theorems/*.toml, the paper's figures mirrored, and an adversarial search per claim; \
writes reports/). `fedbounds conditions` tells which step sizes a claim admits; `fedbounds run FILE` \
runs one scenario file and prints per-round metrics as JSON; `fedbounds search` and `fedbounds \
experiments` run those parts alone with their own settings.",
    after_help = "Exit codes: 0 verdicts as expected, 1 a verdict differs from its claim card, 2 bad input, 3 I/O or numerical failure."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the claims: id, reading, source lines and title.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Check claims on the card's default scenarios and write reports (JSON, Markdown, CSV, PNG).
    /// Without filters (--claim, --scenario, --card, --bound-scale, --estimator) it also mirrors
    /// the paper's figures and runs the adversarial search for every claim.
    Check(CheckArgs),
    /// Which conditions of each claim hold for given constants and step sizes, and the admissible steps.
    Conditions(ConditionsArgs),
    /// Run one scenario file (explicit matrices or a generated instance) and print per-round metrics,
    /// constants and verdicts as JSON.
    Run(RunArgs),
    /// Mirror the paper's figures (section 5) on quadratics and check each qualitative statement
    /// drawn from them; writes OUT/experiments/ (JSON, CSV, one PNG per sweep). Part of a plain
    /// `check`.
    Experiments(ExperimentsArgs),
    /// Search admissible quadratic instances for the one closest to a claim's bound (largest
    /// observed / bound; above 1 is a counterexample), and measure how far gamma can grow past its
    /// condition on it. Writes OUT/search/<ID>.{json,toml,png}; the .toml replays with `run`.
    Search(SearchArgs),
}

#[derive(Args)]
struct SearchArgs {
    /// Claims to search (repeatable; default: every claim).
    #[arg(long = "claim")]
    claims: Vec<String>,
    /// Objective evaluations per claim (each one exact run); half random restarts, half refinement.
    #[arg(long, default_value_t = fedbounds::families::ccyw::search::DEFAULT_BUDGET)]
    budget: usize,
    /// Seed of the search (same seed, same result).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Multiply every bound by this factor (a negative control: the search must then find ratios above 1).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    bound_scale: f64,
    /// Output folder (files go to OUT/search/).
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Skip the PNG figures.
    #[arg(long)]
    no_plots: bool,
}

#[derive(Args)]
struct ExperimentsArgs {
    /// Output folder (files go to OUT/experiments/).
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Worker threads (results do not depend on it).
    #[arg(long)]
    threads: Option<usize>,
    /// Skip the PNG figures.
    #[arg(long)]
    no_plots: bool,
}

/// Estimators selectable on the command line.
#[derive(Clone, Copy, clap::ValueEnum)]
enum EstimatorArg {
    /// Exact expectations by moment propagation (no sampling error).
    Exact,
    /// Seeded Monte Carlo replicates with a 99% Student-t interval.
    MonteCarlo,
}

impl From<EstimatorArg> for card::EstimatorChoice {
    fn from(a: EstimatorArg) -> Self {
        match a {
            EstimatorArg::Exact => card::EstimatorChoice::Exact,
            EstimatorArg::MonteCarlo => card::EstimatorChoice::MonteCarlo,
        }
    }
}

#[derive(Args)]
struct CheckArgs {
    /// Only these claims (repeatable), e.g. --claim CCYW-T3.7.
    #[arg(long = "claim")]
    claims: Vec<String>,
    /// Only these scenarios (repeatable), by name.
    #[arg(long = "scenario")]
    scenarios: Vec<String>,
    /// A claim card to use instead of the embedded one.
    #[arg(long)]
    card: Option<PathBuf>,
    /// Output folder.
    #[arg(long, default_value = "reports")]
    out: PathBuf,
    /// Worker threads (results do not depend on it).
    #[arg(long)]
    threads: Option<usize>,
    /// Override every scenario's estimator: exact (moment propagation) or monte-carlo.
    #[arg(long, value_enum)]
    estimator: Option<EstimatorArg>,
    /// Skip the PNG figures.
    #[arg(long)]
    no_plots: bool,
    /// Multiply every bound by this factor (a negative control: below 1 the check must be able to fail).
    #[arg(long, allow_negative_numbers = true)]
    bound_scale: Option<f64>,
}

#[derive(Args)]
struct ConditionsArgs {
    /// Number of clients n.
    #[arg(long)]
    n: usize,
    /// Sampled clients per round m (1 <= m <= n).
    #[arg(long)]
    m: usize,
    /// Local steps K.
    #[arg(long)]
    k: usize,
    /// Horizon T.
    #[arg(long = "rounds")]
    t: usize,
    /// Smoothness constant L.
    #[arg(long, allow_negative_numbers = true)]
    l: f64,
    /// Initial gap F0 = f(u^0, v^0) - inf f.
    #[arg(long, allow_negative_numbers = true)]
    f0: f64,
    /// BGD constant b^2; omit when infinite.
    #[arg(long, allow_negative_numbers = true)]
    b2: Option<f64>,
    /// sigma_u^2.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    sigma_u2: f64,
    /// sigma_v^2.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    sigma_v2: f64,
    /// B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2 (Theorem 3.11).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    b0: f64,
    /// Dimension of u (0: no shared variable).
    #[arg(long, default_value_t = 1)]
    du: usize,
    /// Dimension of v_i (0: no personal variable).
    #[arg(long, default_value_t = 1)]
    dv: usize,
    /// Effective step gamma = gamma_u eta_u = gamma_v eta_v (omit to only print admissible steps).
    #[arg(long, allow_negative_numbers = true)]
    gamma: Option<f64>,
    /// Outer step eta_u.
    #[arg(long, allow_negative_numbers = true)]
    eta_u: Option<f64>,
    /// Outer step eta_v.
    #[arg(long, allow_negative_numbers = true)]
    eta_v: Option<f64>,
    /// Only these claims (repeatable).
    #[arg(long = "claim")]
    claims: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct RunArgs {
    /// Scenario file (TOML; see README "Scenario files").
    file: PathBuf,
    /// Write the JSON here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads.
    #[arg(long)]
    threads: Option<usize>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::List { json } => list(json),
        Command::Check(a) => run_check(a),
        Command::Conditions(a) => conditions(a),
        Command::Run(a) => run_file(a),
        Command::Experiments(a) => run_experiments(a),
        Command::Search(a) => run_search(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            let code = match e.downcast_ref::<Error>() {
                Some(Error::InvalidField { .. } | Error::Parse { .. } | Error::Unknown { .. } | Error::Instance(_)) => EXIT_BAD_INPUT,
                _ => EXIT_FAILURE,
            };
            ExitCode::from(code)
        }
    }
}

fn list(json: bool) -> anyhow::Result<ExitCode> {
    let all = claims::all_claims();
    let lemmas = claims::all_lemmas();
    if json {
        let rows: Vec<serde_json::Value> = all
            .iter()
            .map(|c| {
                serde_json::json!({"id": c.id(), "title": c.title(), "source": c.source(), "reading": c.reading(), "metric": c.metric().formula()})
            })
            .collect();
        let lemma_rows: Vec<serde_json::Value> = lemmas
            .iter()
            .map(|c| serde_json::json!({"id": c.id(), "title": c.title(), "source": c.source(), "reading": c.reading(), "inequality": c.inequality()}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"claims": rows, "lemmas": lemma_rows}))?);
    } else {
        println!("{:<24} {:<11} {:<34} title", "claim", "reading", "source");
        for c in all {
            println!("{:<24} {:<11} {:<34} {}", c.id(), c.reading().name, c.source(), c.title());
        }
        println!("\n{:<24} {:<11} {:<34} title", "lemma", "reading", "source");
        for c in lemmas {
            println!("{:<24} {:<11} {:<34} {}", c.id(), c.reading().name, c.source(), c.title());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn load_cards(path: &Option<PathBuf>) -> anyhow::Result<Vec<Card>> {
    Ok(match path {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| Error::Io { path: p.display().to_string(), source: e })?;
            vec![card::parse_card(&text, &p.display().to_string())?]
        }
        None => card::embedded_cards()?,
    })
}

fn select_claims(ids: &[String]) -> Result<Vec<&'static dyn Claim>, Error> {
    if ids.is_empty() {
        return Ok(claims::all_claims());
    }
    ids.iter()
        .map(|id| claims::by_id(id).ok_or_else(|| Error::Unknown { kind: "claim", name: id.clone(), known: claims::all_claims().iter().map(|c| c.id()).collect::<Vec<_>>().join(", ") }))
        .collect()
}

fn canonical_command(a: &CheckArgs) -> String {
    let mut cmd = String::from("cargo run --release -- check");
    for c in &a.claims {
        cmd.push_str(&format!(" --claim '{c}'"));
    }
    for s in &a.scenarios {
        cmd.push_str(&format!(" --scenario '{s}'"));
    }
    if let Some(c) = &a.card {
        cmd.push_str(&format!(" --card '{}'", c.display()));
    }
    if let Some(b) = a.bound_scale {
        cmd.push_str(&format!(" --bound-scale {b}"));
    }
    if let Some(e) = a.estimator {
        cmd.push_str(match e {
            EstimatorArg::Exact => " --estimator exact",
            EstimatorArg::MonteCarlo => " --estimator monte-carlo",
        });
    }
    cmd
}

fn run_check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let cards = load_cards(&a.card)?;
    let all_scenarios: Vec<&card::Scenario> = cards.iter().flat_map(|c| c.scenarios.iter()).collect();
    let selection = check::Selection::by_ids(&a.claims)?;
    if let Some(b) = a.bound_scale {
        if !(b.is_finite() && b > 0.0) {
            return Err(Error::field("--bound-scale", format!("got {b}"), "a finite number > 0").into());
        }
    }
    if a.threads == Some(0) {
        return Err(Error::field("--threads", "got 0", "an integer >= 1").into());
    }
    for name in &a.scenarios {
        if !all_scenarios.iter().any(|s| &s.name == name) {
            let known: Vec<&str> = all_scenarios.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::Unknown { kind: "scenario", name: name.clone(), known: known.join(", ") }.into());
        }
    }
    let scenarios: Vec<&card::Scenario> = all_scenarios
        .into_iter()
        .filter(|s| a.scenarios.is_empty() || a.scenarios.contains(&s.name))
        .filter(|s| selection.concerns(s.algorithm.kind))
        .collect();
    // Resolve every scenario first: bad input fails before any run or any file is written.
    for s in &scenarios {
        check::prepare(s).map_err(|e| anyhow::Error::new(e).context(format!("scenario `{}`", s.name)))?;
    }
    let opts = CheckOptions { threads: a.threads, bound_scale: a.bound_scale, estimator: a.estimator.map(Into::into) };
    let bar = ProgressBar::new(scenarios.len() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} scenarios  {msg}").expect("static template"));
    let mut runs: Vec<ScenarioRun> = Vec::new();
    for s in &scenarios {
        bar.set_message(s.name.clone());
        runs.push(check::run_scenario(s, &selection, &opts)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    // A plain `check` (the main command) also mirrors the paper's figures.
    let plain = a.claims.is_empty() && a.scenarios.is_empty() && a.card.is_none() && a.bound_scale.is_none() && a.estimator.is_none();
    let experiments = if plain { Some(compute_experiments(a.threads)?) } else { None };
    let searches = if plain {
        check::in_pool(a.threads, || compute_searches(&claims::all_claims(), &fedbounds::families::ccyw::search::SearchOptions::default()))??
    } else {
        Vec::new()
    };
    let meta = ReportMeta::new(canonical_command(&a));
    let extras = report::Extras { experiments: experiments.as_ref(), searches: &searches };
    let written = report::write_all(&a.out, &runs, extras, &meta, !a.no_plots)?;
    print_table(&runs);
    if let Some(e) = &experiments {
        print_statements(e);
    }
    if !searches.is_empty() {
        print_searches(&searches);
    }
    println!("\nwrote {} files under {}", written.len(), a.out.display());
    let mismatches: Vec<String> = runs
        .iter()
        .flat_map(|r| r.results.iter().filter(|c| !c.matches_expected()).map(move |c| format!("{} on {}", c.claim, r.scenario)))
        .chain(experiments.iter().flat_map(|e| e.mismatches().into_iter().map(|s| s.id.to_string())))
        .chain(
            searches
                .iter()
                .filter(|r| r.verdict != VerdictKind::Holds)
                .map(|r| format!("{} (search: {}, {})", r.claim, r.verdict, a.out.join("search").join(format!("{}.toml", r.claim)).display())),
        )
        .collect();
    if mismatches.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("verdicts differ from their claim cards: {}", mismatches.join(", "));
        Ok(ExitCode::from(EXIT_MISMATCH))
    }
}

fn compute_experiments(threads: Option<usize>) -> anyhow::Result<experiments::Experiments> {
    if threads == Some(0) {
        return Err(Error::field("--threads", "got 0", "an integer >= 1").into());
    }
    let bar = ProgressBar::new(experiments::curve_count() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} experiment curves").expect("static template"));
    let e = check::in_pool(threads, || experiments::Experiments::run(&|| bar.inc(1)))??;
    bar.finish_and_clear();
    Ok(e)
}

fn print_statements(e: &experiments::Experiments) {
    println!("\n{:<28} {:<13} {:<13} statement", "figure statement", "verdict", "expected");
    for s in &e.statements {
        let mark = if s.matches_expected() { "" } else { " !" };
        let expected = s.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
        println!("{:<28} {:<13} {:<13} {}", s.id, format!("{}{mark}", s.verdict), expected, s.statement);
    }
}

fn compute_searches(claims: &[&'static dyn Claim], opts: &fedbounds::families::ccyw::search::SearchOptions) -> anyhow::Result<Vec<fedbounds::families::ccyw::search::SearchResult>> {
    let bar = ProgressBar::new(claims.len() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} claims searched").expect("static template"));
    let r = fedbounds::families::ccyw::search::search_all(claims, opts, &|| bar.inc(1))?;
    bar.finish_and_clear();
    Ok(r)
}

fn print_searches(results: &[fedbounds::families::ccyw::search::SearchResult]) {
    println!(
        "\n{:<24} {:<8} {:>10}  {:>13} {:>13}  {:>13} {:>13}  {:>11} {:>11}",
        "searched claim", "verdict", "worst o/b", "worst: holds", "worst: diverg", "any: holds", "any: broken", "eta: holds", "eta: broken"
    );
    println!("{:<24} {:<8} {:>10}  {:>27}  {:>27}  {:>23}", "", "", "", "(gamma multiple, worst inst.)", "(gamma multiple, any inst.)", "(eta divisor, any inst.)");
    for r in results {
        let [a, b, c, d, e, f] = report::step_multiple_cells(r);
        println!(
            "{:<24} {:<8} {:>10}  {:>13} {:>13}  {:>13} {:>13}  {:>11} {:>11}",
            r.claim,
            r.verdict.to_string(),
            fmt_num(r.worst_ratio),
            a,
            b,
            c,
            d,
            e,
            f
        );
    }
}

fn run_search(a: SearchArgs) -> anyhow::Result<ExitCode> {
    if a.budget == 0 {
        return Err(Error::field("--budget", "got 0", "an integer >= 1").into());
    }
    if !(a.bound_scale.is_finite() && a.bound_scale > 0.0) {
        return Err(Error::field("--bound-scale", format!("got {}", a.bound_scale), "a finite number > 0").into());
    }
    let chosen = select_claims(&a.claims)?;
    let opts = fedbounds::families::ccyw::search::SearchOptions { budget: a.budget, seed: a.seed, bound_scale: a.bound_scale, ..Default::default() };
    let results = compute_searches(&chosen, &opts)?;
    let mut cmd = format!("cargo run --release -- search --budget {} --seed {}", a.budget, a.seed);
    for c in &a.claims {
        cmd.push_str(&format!(" --claim '{c}'"));
    }
    if a.bound_scale != 1.0 {
        cmd.push_str(&format!(" --bound-scale {}", a.bound_scale));
    }
    let written = report::write_searches(&a.out, &results, &ReportMeta::new(cmd), !a.no_plots)?;
    print_searches(&results);
    println!("\nwrote {} files under {}", written.len(), a.out.join("search").display());
    let found: Vec<String> = results.iter().filter(|r| r.verdict != VerdictKind::Holds).map(|r| format!("{} ({})", r.claim, r.verdict)).collect();
    if found.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("counterexamples (observed / bound > 1) or nothing applicable: {}", found.join(", "));
        Ok(ExitCode::from(EXIT_MISMATCH))
    }
}

fn run_experiments(a: ExperimentsArgs) -> anyhow::Result<ExitCode> {
    let e = compute_experiments(a.threads)?;
    let meta = ReportMeta::new("cargo run --release -- experiments");
    let written = report::write_experiments(&a.out, &e, &meta, !a.no_plots)?;
    print_statements(&e);
    println!("\nwrote {} files under {}", written.len(), a.out.join("experiments").display());
    let mismatches: Vec<&str> = e.mismatches().iter().map(|s| s.id).collect();
    if mismatches.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("verdicts differ from the experiments card: {}", mismatches.join(", "));
        Ok(ExitCode::from(EXIT_MISMATCH))
    }
}

fn print_table(runs: &[ScenarioRun]) {
    println!("{:<24} {:<30} {:<15} {:<15} {:>10}  detail", "claim", "scenario", "verdict", "expected", "slack");
    for r in runs {
        for c in &r.results {
            let mark = if c.matches_expected() { "" } else { " !" };
            println!(
                "{:<24} {:<30} {:<15} {:<15} {:>10}  {}",
                c.claim,
                r.scenario,
                format!("{}{mark}", c.evaluation.verdict),
                c.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                c.evaluation.slack.map(fmt_num).unwrap_or_else(|| "-".into()),
                report::describe(&c.evaluation)
            );
            if let Some(e) = &c.empirical {
                println!(
                    "{:<24} {:<30} {:<15} {:<15} {:>10}  {}",
                    "  (empirical b^2)",
                    r.scenario,
                    e.verdict.to_string(),
                    c.expected_empirical.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                    e.slack.map(fmt_num).unwrap_or_else(|| "-".into()),
                    report::describe(e)
                );
            }
        }
    }
}

fn conditions(a: ConditionsArgs) -> anyhow::Result<ExitCode> {
    if a.n == 0 {
        return Err(Error::field("--n", "got 0", "an integer >= 1").into());
    }
    if a.m == 0 || a.m > a.n {
        return Err(Error::field("--m", format!("got {}", a.m), format!("1 <= m <= n = {}", a.n)).into());
    }
    if a.k == 0 || a.t == 0 {
        return Err(Error::field(if a.k == 0 { "--k" } else { "--rounds" }, "got 0", "an integer >= 1").into());
    }
    fedbounds::error::require_positive("--l", a.l)?;
    fedbounds::error::require_positive("--f0", a.f0)?;
    for (name, v) in [("--sigma-u2", a.sigma_u2), ("--sigma-v2", a.sigma_v2), ("--b0", a.b0)] {
        fedbounds::error::require_non_negative(name, v)?;
    }
    if let Some(b2) = a.b2 {
        fedbounds::error::require_non_negative("--b2", b2)?;
    }
    for (name, v) in [("--gamma", a.gamma), ("--eta-u", a.eta_u), ("--eta-v", a.eta_v)] {
        if let Some(v) = v {
            fedbounds::error::require_positive(name, v)?;
        }
    }
    let claims = select_claims(&a.claims)?;
    let base = ClaimInputs {
        n: a.n,
        m: a.m,
        k: a.k,
        t: a.t,
        du: a.du,
        dv: a.dv,
        l: a.l,
        f0: a.f0,
        b2: a.b2,
        sigma_u2: a.sigma_u2,
        sigma_v2: a.sigma_v2,
        b0: a.b0,
        b0_literal: a.b0,
        gamma_u: f64::NAN,
        gamma_v: f64::NAN,
        eta_u: f64::NAN,
        eta_v: f64::NAN,
    };
    let mut rows = Vec::new();
    for c in claims {
        let adm = c.admissible(&base);
        let eta_u = a.eta_u.unwrap_or(adm.eta_u_min);
        let eta_v = a.eta_v.unwrap_or(adm.eta_v_min);
        let gamma = a.gamma.unwrap_or(adm.gamma.value());
        let x = ClaimInputs { gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v, ..base };
        let checks = c.checks(&x);
        let applicable = checks.iter().all(|k| k.holds || !k.is_binding());
        rows.push(serde_json::json!({
            "claim": c.id(),
            "admissible": adm,
            "checked": {"gamma": gamma, "eta_u": eta_u, "eta_v": eta_v},
            "applicable": applicable,
            "bound": if applicable { Some(c.bound(&x)) } else { None },
            "checks": checks.iter().map(|k| serde_json::json!({"check": k.to_string(), "holds": k.holds, "kind": k.kind})).collect::<Vec<_>>(),
        }));
        if !a.json {
            let gamma_word = match adm.gamma {
                claims::GammaRule::AtMost(g) => format!("gamma <= {}", fmt_num(g)),
                claims::GammaRule::Exactly(g) => format!("gamma = {}", fmt_num(g)),
            };
            println!(
                "{}: admissible {gamma_word}, eta_u >= {}, eta_v >= {}",
                c.id(),
                fmt_num(adm.eta_u_min),
                fmt_num(adm.eta_v_min)
            );
            println!("  at gamma = {}, eta_u = {}, eta_v = {}: {}", fmt_num(gamma), fmt_num(eta_u), fmt_num(eta_v), if applicable { "applicable" } else { "NOT applicable" });
            for k in &checks {
                println!("    [{}] {k}", if k.holds { "ok" } else { "FAIL" });
            }
            if applicable {
                println!("  bound = {}", fmt_num(c.bound(&x)));
            }
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    }
    Ok(ExitCode::SUCCESS)
}

fn run_file(a: RunArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&a.file).map_err(|e| Error::Io { path: a.file.display().to_string(), source: e })?;
    let scenario = card::parse_scenario(&text, &a.file.display().to_string())?;
    if a.threads == Some(0) {
        return Err(Error::field("--threads", "got 0", "an integer >= 1").into());
    }
    let json = report::run_report(&scenario, a.threads)?;
    match a.out {
        Some(p) => report::write_atomic(&p, json.as_bytes())?,
        None => print!("{json}"),
    }
    Ok(ExitCode::SUCCESS)
}
