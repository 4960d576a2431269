//! `fedbounds`: a thin command line over the library.
//!
//! Every paper family is reached through the registry ([`fedbounds::families::registry`]); this
//! file parses flags, calls the library, prints, and maps the outcome to an exit code: 0 all
//! verdicts as expected; 1 a computed verdict differs from its card; 2 bad input (unknown field,
//! value out of range, unknown claim); 3 a failure of the run (I/O, numerical, serialization,
//! figure, worker threads, internal: every [`Error`] that is not [`Error::is_bad_input`]).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use fedbounds::error::require_bound_scale;
use fedbounds::families::registry;
use fedbounds::family::{self, CardText, CheckRequest, EstimatorChoice, FamilyReport, Given, Progress, ReportFile, RunOptions, SearchRequest};
use fedbounds::outcome::CheckOutcome;
use fedbounds::progress_lines::ProgressLines;
use fedbounds::registry::Registry;
use fedbounds::report::{require_file_target, require_folder_target, write_atomic, ReportMeta};
use fedbounds::Error;

/// mimalloc: the engine allocates many small matrices per round, and glibc's allocator took about
/// a sixth of the tests' CPU time (the main job: 5-10% less CPU, about 20% more peak memory; the
/// same report bytes).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EXIT_MISMATCH: u8 = 1;
/// The input is wrong ([`Error::is_bad_input`]).
const EXIT_BAD_INPUT: u8 = 2;
/// The run failed: I/O, numerical, serialization, figure, worker threads, internal.
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
writes reports/). `fedbounds explain CLAIM` prints a claim's statement, conditions and formula as \
encoded; `fedbounds conditions` tells which step sizes a claim admits; `fedbounds run FILE` \
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
        /// Also list the claims a card defines by formulas.
        #[arg(long)]
        card: Option<PathBuf>,
        /// List the names each family's card formulas may use, with their meanings and ranges.
        #[arg(long)]
        symbols: bool,
    },
    /// Check claims on the card's default scenarios and write reports (JSON, Markdown, CSV, PNG).
    /// Without filters (--claim, --scenario, --card, --bound-scale, --estimator) it also mirrors
    /// the paper's figures and runs the adversarial search for every claim.
    Check(CheckArgs),
    /// Which conditions of each claim hold for given constants and step sizes, and the admissible steps.
    Conditions(Box<ConditionsArgs>),
    /// Run one scenario file (explicit matrices or a generated instance) and print per-round metrics,
    /// constants and verdicts as JSON.
    Run(RunArgs),
    /// Mirror the paper's figures (section 5) on quadratics and check each qualitative statement
    /// drawn from them; writes OUT/experiments/ (JSON, CSV, one PNG per sweep). Part of a plain
    /// `check`.
    Experiments(ExperimentsArgs),
    /// Search admissible quadratic instances for the one closest to a claim's bound (largest
    /// observed / bound; above 1 is a counterexample), and measure how far gamma can grow past its
    /// condition on it. Writes OUT/search/<ID>.{json,toml,png}; the .toml replays with `check --card`
    /// (CCYW's, a scenario file, with `run`), with the `--bound-scale` the search was given.
    Search(SearchArgs),
    /// Run a sweep file (a base scenario and axes over its keys, as a grid or random draws; see
    /// README "Sweeps"): one record per scenario under OUT/scenarios/, written as each finishes, so
    /// an interrupted run continues where it stopped. Without --shard it then writes
    /// OUT/sweep.json and OUT/sweep.csv.
    Sweep(SweepArgs),
    /// Merge the records of a sweep's shares (one folder each, or one shared folder) into
    /// OUT/sweep.json and OUT/sweep.csv: the same bytes as a run without --shard.
    Merge(MergeArgs),
    /// Time fixed seeded workloads (Monte Carlo client steps/s per algorithm, exact runs, each
    /// family's check) and print JSON with the machine's cores and load, to compare two versions.
    Bench(BenchArgs),
    /// Explain a claim: its statement and source lines, assumptions and conditions as printed, the
    /// reading encoded, the formula as encoded, and the card's readings of the paper's
    /// inconsistencies that concern it.
    Explain {
        /// Claim id (see `fedbounds list`), e.g. CCYW-T3.7 or FEDPLT-REC~alpha-sqrt-r.
        claim: String,
    },
    /// Print a shell completion script, e.g. `fedbounds completions bash >
    /// ~/.local/share/bash-completion/completions/fedbounds` (zsh: into a folder of `$fpath` as
    /// `_fedbounds`; fish: `~/.config/fish/completions/fedbounds.fish`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Args)]
struct SweepArgs {
    /// Sweep file (TOML).
    file: PathBuf,
    /// Run only the i-th of N shares (1 <= i <= N), e.g. `--shard ${SLURM_ARRAY_TASK_ID}/4`;
    /// scenario j belongs to share (j mod N) + 1.
    #[arg(long)]
    shard: Option<String>,
    /// Output folder (default: sweeps/<name of the sweep>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads, each checking one scenario at a time (results do not depend on it).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Args)]
struct MergeArgs {
    /// The sweep file the shares ran.
    file: PathBuf,
    /// Output folders of the shares (default: sweeps/<name of the sweep>).
    dirs: Vec<PathBuf>,
    /// Where the report goes (default: the first folder).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct BenchArgs {
    /// Worker threads of the parallel measurements (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Repetitions of each measurement; the best is reported.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Also measure how the exact engine's time and peak memory grow with the clients, rounds
    /// and dimension (and the 1,000-client run); writes scaling.json and scaling.png in DIR.
    #[arg(long, value_name = "DIR")]
    scaling: Option<std::path::PathBuf>,
}

#[derive(Args)]
struct SearchArgs {
    /// Claims to search (repeatable; default: every claim).
    #[arg(long = "claim")]
    claims: Vec<String>,
    /// Objective evaluations per claim (each one exact run); half random restarts, half refinement.
    #[arg(long, default_value_t = fedbounds::search::DEFAULT_BUDGET)]
    budget: usize,
    /// Evaluations of each "any instance" search of a step condition's room, per doubling of the
    /// step (0: the room on the worst instance found only).
    #[arg(long, default_value_t = fedbounds::search::space::DEFAULT_ROOM_BUDGET)]
    room_budget: usize,
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
    /// A card: the search is then of its family's claims only, its formula-defined claims among them (the card's scenarios give their starting points).
    #[arg(long)]
    card: Option<PathBuf>,
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

impl From<EstimatorArg> for EstimatorChoice {
    fn from(a: EstimatorArg) -> Self {
        match a {
            EstimatorArg::Exact => EstimatorChoice::Exact,
            EstimatorArg::MonteCarlo => EstimatorChoice::MonteCarlo,
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
    /// A claim card to use instead of the embedded ones (its family: `[family] module = "..."`,
    /// default the first registered).
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
    /// Print the full matrix (every claim on every scenario, one row each) instead of one line per claim.
    #[arg(long)]
    full: bool,
    /// What to print: a summary for people (text, default), every row as JSON, or summary.csv.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    /// Work budget of one scenario, in estimated multiply-adds (default 2e10, about a minute of one core);
    /// a scenario over it is refused before any work.
    #[arg(long)]
    max_work: Option<f64>,
}

/// Output formats of `check`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OutputFormat {
    /// One line per claim and family, disagreements first, totals last.
    Text,
    /// Every verdict row, with its evaluation, as JSON.
    Json,
    /// The rows of summary.csv.
    Csv,
}

#[derive(Args)]
struct ConditionsArgs {
    /// Number of clients n.
    #[arg(long)]
    n: Option<usize>,
    /// Sampled clients per round m (1 <= m <= n).
    #[arg(long)]
    m: Option<usize>,
    /// Local steps K.
    #[arg(long)]
    k: Option<usize>,
    /// Horizon T.
    #[arg(long = "rounds")]
    t: Option<usize>,
    /// Smoothness constant L.
    #[arg(long, allow_negative_numbers = true)]
    l: Option<f64>,
    /// Initial gap F0 = f(u^0, v^0) - inf f.
    #[arg(long, allow_negative_numbers = true)]
    f0: Option<f64>,
    /// BGD constant b^2; omit when infinite.
    #[arg(long, allow_negative_numbers = true)]
    b2: Option<f64>,
    /// sigma_u^2 (omitted: refused if a selected claim reads it; 0 for no noise).
    #[arg(long, allow_negative_numbers = true)]
    sigma_u2: Option<f64>,
    /// sigma_v^2 (omitted: refused if a selected claim reads it; 0 for no noise).
    #[arg(long, allow_negative_numbers = true)]
    sigma_v2: Option<f64>,
    /// B^0 = sum_i ||grad_u f_i(u^0, v_i^0)||^2 (Theorem 3.11; omitted: refused if a selected claim
    /// reads it).
    #[arg(long, allow_negative_numbers = true)]
    b0: Option<f64>,
    /// Dimension of u (0: no shared variable).
    #[arg(long)]
    du: Option<usize>,
    /// Dimension of v_i (0: no personal variable).
    #[arg(long)]
    dv: Option<usize>,
    /// Effective step gamma = gamma_u eta_u = gamma_v eta_v (omitted: each claim is checked at its own
    /// admissible gamma, its largest or the one it prescribes).
    #[arg(long, allow_negative_numbers = true)]
    gamma: Option<f64>,
    /// Outer step eta_u (omitted: each claim's smallest admissible one, or the one it prescribes).
    #[arg(long, allow_negative_numbers = true)]
    eta_u: Option<f64>,
    /// Outer step eta_v (omitted: each claim's smallest admissible one, or the one it prescribes).
    #[arg(long, allow_negative_numbers = true)]
    eta_v: Option<f64>,
    /// Only these claims (repeatable).
    #[arg(long = "claim")]
    claims: Vec<String>,
    /// Further named values for families whose claims need them, as NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// The family whose claims are queried (default: the first registered; see `list`).
    #[arg(long)]
    family: Option<String>,
    /// A card whose formula-defined claims are queried too (its family unless --family says otherwise).
    #[arg(long)]
    card: Option<PathBuf>,
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
    /// Override the scenario's estimator: exact (moment propagation) or monte-carlo.
    #[arg(long, value_enum)]
    estimator: Option<EstimatorArg>,
    /// Work budget of the scenario, in estimated multiply-adds (default 2e10, about a minute of one core).
    #[arg(long)]
    max_work: Option<f64>,
    /// Also write the scenario's instance (matrices, noise, initial point, graphs per round) in the
    /// family's explicit scenario-file form to this file (every family has one); running it gives
    /// the same results, the scenario hash aside. Written only when the run succeeds.
    #[arg(long)]
    export_instance: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let families = registry();
    let result = match cli.command {
        Command::List { json, card, symbols } => list(&families, json, card.as_deref(), symbols),
        Command::Check(a) => run_check(&families, a),
        Command::Conditions(a) => conditions(&families, *a),
        Command::Run(a) => run_file(&families, a),
        Command::Experiments(a) => run_experiments(&families, a),
        Command::Search(a) => run_search(&families, a),
        Command::Sweep(a) => run_sweep(&families, a),
        Command::Merge(a) => run_merge(&families, a),
        Command::Bench(a) => run_bench(&families, a),
        Command::Explain { claim } => explain(&families, &claim),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "fedbounds", &mut script);
            emit(&String::from_utf8_lossy(&script));
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // A library error's message already contains its sources (a file's OS error, a
            // scenario's own error); the chain is printed only for other errors.
            match e.downcast_ref::<Error>() {
                Some(lib) => eprintln!("error: {lib}"),
                None => eprintln!("error: {e:#}"),
            }
            let bad_input = e.downcast_ref::<Error>().is_some_and(Error::is_bad_input);
            ExitCode::from(if bad_input { EXIT_BAD_INPUT } else { EXIT_FAILURE })
        }
    }
}

/// `explain CLAIM`: the text of the family that has the claim; an unknown id is bad input.
fn explain(families: &Registry, id: &str) -> anyhow::Result<ExitCode> {
    for family in families.families() {
        if let Some(text) = family.explain(id)? {
            emit(&text);
            return Ok(ExitCode::SUCCESS);
        }
    }
    families.require_known_claims(&[id.to_string()], None)?;
    Err(fedbounds::Error::field("CLAIM", format!("`{id}` has no card entry to explain"), "a claim listed by `fedbounds list`").into())
}

/// How this program was invoked, for replay commands: `cargo run [--release] --` under cargo,
/// else the program as typed (`fedbounds`, `./target/release/fedbounds`), quoted when needed.
fn replay_prefix() -> String {
    let program = std::env::args().next().unwrap_or_else(|| "fedbounds".into());
    if std::env::var_os("CARGO_MANIFEST_DIR").is_some() {
        let release = if program.contains("/release/") { " --release" } else { "" };
        return format!("cargo run{release} --");
    }
    if program.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        program
    } else {
        format!("'{}'", program.replace('\'', "'\\''"))
    }
}

/// Writes `text` to standard output. A closed pipe (`fedbounds list | head`) ends the output
/// quietly (exit 0); any other failure to write it (a full disk) ends the program with exit 3
/// and a message, never a success whose output was lost.
fn emit(text: &str) {
    if let Err(code) = write_out(&mut std::io::stdout().lock(), text) {
        std::process::exit(code);
    }
}

/// Writes and flushes `text` to `out`; on failure, the exit code: 0 when the reader is gone (a
/// closed pipe), else [`EXIT_FAILURE`] after saying why on standard error.
fn write_out(out: &mut impl std::io::Write, text: &str) -> Result<(), i32> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(0),
        Err(e) => {
            eprintln!("error: cannot write standard output: {e}");
            Err(i32::from(EXIT_FAILURE))
        }
    }
}

/// The environment variable that sets the seconds between progress lines when standard error is
/// not a terminal.
const PROGRESS_INTERVAL_VAR: &str = "FEDBOUNDS_PROGRESS_INTERVAL";

/// Seconds between progress lines in a log unless [`PROGRESS_INTERVAL_VAR`] says otherwise.
const DEFAULT_PROGRESS_INTERVAL_SECONDS: u64 = 30;

/// Progress on standard error: a bar on a terminal; in a log (CI, a batch job, a pipe) a line
/// every [`DEFAULT_PROGRESS_INTERVAL_SECONDS`] (or `FEDBOUNDS_PROGRESS_INTERVAL`; 0: none) while a
/// phase runs ([`ProgressLines`]), so a long search or sweep is seen to be alive.
enum Bars {
    Terminal(std::sync::Mutex<Option<ProgressBar>>),
    Log(ProgressLines),
    Quiet,
}

impl Bars {
    /// # Errors
    /// `FEDBOUNDS_PROGRESS_INTERVAL` set to anything but a whole number of seconds.
    fn new() -> Result<Self, Error> {
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            return Ok(Bars::Terminal(std::sync::Mutex::new(None)));
        }
        let seconds = match std::env::var(PROGRESS_INTERVAL_VAR) {
            Err(_) => DEFAULT_PROGRESS_INTERVAL_SECONDS,
            Ok(v) => v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|s| *s <= 86_400)
                .ok_or_else(|| Error::field(PROGRESS_INTERVAL_VAR, format!("got `{v}`"), "whole seconds in [0, 86400] between progress lines (0: none)"))?,
        };
        Ok(match seconds {
            0 => Bars::Quiet,
            s => Bars::Log(ProgressLines::on_stderr(std::time::Duration::from_secs(s))),
        })
    }
}

impl Progress for Bars {
    fn start(&self, len: usize, label: &str) {
        match self {
            Bars::Terminal(slot) => {
                let bar = ProgressBar::new(len as u64);
                let style = ProgressStyle::with_template(&format!("{{bar:30}} {{pos}}/{{len}} {label}  {{elapsed}} (eta {{eta}})"))
                    .unwrap_or_else(|_| ProgressStyle::default_bar());
                bar.set_style(style);
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(bar);
                }
            }
            Bars::Log(lines) => lines.start(len, label),
            Bars::Quiet => {}
        }
    }
    fn step(&self) {
        match self {
            Bars::Terminal(slot) => {
                if let Some(bar) = slot.lock().ok().as_ref().and_then(|s| s.as_ref()) {
                    bar.inc(1);
                }
            }
            Bars::Log(lines) => lines.step(),
            Bars::Quiet => {}
        }
    }
    fn finish(&self) {
        match self {
            Bars::Terminal(slot) => {
                if let Some(bar) = slot.lock().ok().and_then(|mut s| s.take()) {
                    bar.finish_and_clear();
                }
            }
            Bars::Log(lines) => lines.finish(),
            Bars::Quiet => {}
        }
    }
}

/// Most worker threads a run may ask for (far above any core count; each thread reserves a
/// stack).
const MAX_THREADS: usize = 1024;

/// Most objective evaluations a search may ask for per claim (each is an exact run).
const MAX_BUDGET: usize = 1_000_000;

fn require_threads(threads: Option<usize>) -> Result<(), Error> {
    match threads {
        Some(0) => Err(Error::field("--threads", "got 0", format!("an integer >= 1 and <= {MAX_THREADS}"))),
        Some(t) if t > MAX_THREADS => Err(Error::field("--threads", format!("got {t}"), format!("an integer >= 1 and <= {MAX_THREADS}"))),
        _ => Ok(()),
    }
}

/// Reads a card given on the command line and checks that its family reads it (the claims it
/// defines compile); the card is then passed to every call that needs it.
fn load_card(families: &Registry, path: Option<&std::path::Path>) -> anyhow::Result<Option<CardText>> {
    let Some(p) = path else { return Ok(None) };
    let card = CardText { what: p.display().to_string(), text: fedbounds::text_file::read_text(p)? };
    families.read_card(&card)?;
    Ok(Some(card))
}

fn list_symbols(families: &Registry) {
    for f in families.families() {
        if f.symbols().is_empty() {
            continue;
        }
        emit(&format!(
            "{} ({}): names a card formula may use

{:<14} {:<16} meaning
",
            f.title(),
            f.id(),
            "name",
            "range"
        ));
        for s in f.symbols() {
            let range = s.range.to_string();
            emit(&format!(
                "{:<14} {:<16} {}
",
                s.name, range, s.meaning
            ));
        }
        emit(
            "
",
        );
    }
    emit(
        "Functions: sqrt, ln, exp, abs, min(a, ...), max(a, ...), div_pos(a, b) (a/b when b > 0, else inf); operators + - * / ^ and parentheses.
",
    );
}

fn list(families: &Registry, json: bool, card: Option<&std::path::Path>, symbols: bool) -> anyhow::Result<ExitCode> {
    let card = load_card(families, card)?;
    let card_family = card.as_ref().map(|c| families.family_of(&c.text, &c.what)).transpose()?.map(|f| f.id());
    let own = |f: &&dyn fedbounds::family::Family| card.as_ref().filter(|_| card_family == Some(f.id()));
    if symbols && json {
        let rows: Vec<serde_json::Value> = families
            .families()
            .iter()
            .filter(|f| !f.symbols().is_empty())
            .map(|f| {
                let symbols: Vec<serde_json::Value> = f
                    .symbols()
                    .iter()
                    .map(|s| serde_json::json!({ "name": s.name, "range": s.range.to_string(), "meaning": s.meaning, "assumption": s.assumption, "per_round": s.per_round }))
                    .collect();
                serde_json::json!({ "family": f.id(), "title": f.title(), "symbols": symbols })
            })
            .collect();
        emit(&format!("{}\n", serde_json::to_string_pretty(&serde_json::json!({ "families": rows }))?));
        return Ok(ExitCode::SUCCESS);
    }
    if symbols {
        list_symbols(families);
        return Ok(ExitCode::SUCCESS);
    }
    if json {
        let rows: Vec<serde_json::Value> = families
            .families()
            .iter()
            .map(|f| Ok(serde_json::json!({"family": f.id(), "title": f.title(), "claims": f.claims_with(own(f))?})))
            .collect::<Result<_, Error>>()?;
        emit(&format!("{}\n", serde_json::to_string_pretty(&serde_json::json!({ "families": rows }))?));
        return Ok(ExitCode::SUCCESS);
    }
    for f in families.families() {
        emit(&format!("{} ({})\n\n", f.title(), f.id()));
        for (kind, word) in [(family::ClaimKind::Bound, "claim"), (family::ClaimKind::Lemma, "lemma")] {
            let claims: Vec<_> = f.claims_with(own(f))?.into_iter().filter(|c| c.kind == kind).collect();
            if claims.is_empty() {
                continue;
            }
            emit(&format!("{:<24} {:<11} {:<34} title\n", word, "reading", "source"));
            for c in claims {
                emit(&format!("{:<24} {:<11} {:<34} {}\n", c.id, c.reading.name, c.source, c.title));
            }
            emit("\n");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn canonical_command(a: &CheckArgs) -> String {
    let mut cmd = String::from("cargo run --release -- check");
    for c in &a.claims {
        cmd.push_str(&format!(" --claim '{c}'"));
    }
    for s in &a.scenarios {
        cmd.push_str(&format!(" --scenario '{s}'"));
    }
    cmd + &verdict_options(a)
}

/// The options of a check that change its verdicts (card, bound scale, work limit, estimator), as
/// they are typed, for replay commands.
fn verdict_options(a: &CheckArgs) -> String {
    let mut cmd = String::new();
    if let Some(c) = &a.card {
        cmd.push_str(&format!(" --card '{}'", c.display()));
    }
    if let Some(b) = a.bound_scale {
        cmd.push_str(&format!(" --bound-scale {b}"));
    }
    if let Some(w) = a.max_work {
        cmd.push_str(&format!(" --max-work {w:e}"));
    }
    if let Some(e) = a.estimator {
        cmd.push_str(match e {
            EstimatorArg::Exact => " --estimator exact",
            EstimatorArg::MonteCarlo => " --estimator monte-carlo",
        });
    }
    cmd
}

/// Prints what a check produced and returns its exit code: 1 when anything differs from the
/// cards, with the reason on the last line. `replay` is the command up to its filters, for the
/// replay lines of the text summary.
fn finish(outcome: &CheckOutcome, written: usize, out: &std::path::Path, full: bool, format: OutputFormat, replay: &str) -> anyhow::Result<ExitCode> {
    match format {
        OutputFormat::Json => emit(&format!("{}\n", serde_json::to_string_pretty(&outcome.rows().collect::<Vec<_>>())?)),
        OutputFormat::Csv => emit(&outcome.summary_csv()),
        OutputFormat::Text if full => emit(&outcome.terminal_table()),
        OutputFormat::Text => emit(&outcome.terminal_summary(replay)),
    }
    let mismatches = outcome.mismatches();
    if format == OutputFormat::Text {
        emit(&format!("wrote {written} files under {}\n", out.display()));
        if mismatches.is_empty() {
            emit("exit 0: every verdict is the one its card expects\n");
        } else {
            emit(&format!("exit 1: {} findings differ from their cards (listed first)\n", mismatches.len()));
        }
    }
    if mismatches.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("verdicts differ from their claim cards: {}", mismatches.join(", "));
        Ok(ExitCode::from(EXIT_MISMATCH))
    }
}

fn run_check(families: &Registry, a: CheckArgs) -> anyhow::Result<ExitCode> {
    require_threads(a.threads)?;
    require_folder_target("--out", &a.out)?;
    fedbounds::budget::budget(a.max_work)?;
    let card = match &a.card {
        Some(p) => Some(CardText { what: p.display().to_string(), text: fedbounds::text_file::read_text(p)? }),
        None => None,
    };
    // A plain `check` (the main command) also runs the families' extra work (mirrored figures,
    // adversarial search).
    let full = a.claims.is_empty() && a.scenarios.is_empty() && a.card.is_none() && a.bound_scale.is_none() && a.estimator.is_none();
    let request = CheckRequest {
        claims: a.claims.clone(),
        scenarios: a.scenarios.clone(),
        card,
        threads: a.threads,
        bound_scale: a.bound_scale,
        estimator: a.estimator.map(Into::into),
        full,
        plots: !a.no_plots,
        meta: ReportMeta::new(canonical_command(&a)),
        max_work: a.max_work,
    };
    let outcome = families.check(&request, &Bars::new()?)?;
    let written = fedbounds::outcome::write_files(&a.out, &outcome.files(&request.meta))?;
    let replay = format!("{} check{}", replay_prefix(), verdict_options(&a));
    finish(&outcome, written.len(), &a.out, a.full, a.format, &replay)
}

fn conditions(families: &Registry, a: ConditionsArgs) -> anyhow::Result<ExitCode> {
    let card = load_card(families, a.card.as_deref())?;
    let target = match (&a.family, &card) {
        (Some(id), _) => families.by_id(id)?,
        (None, Some(c)) => families.family_of(&c.text, &c.what)?,
        (None, None) => families.default_family(),
    };
    let mut given = Given::new();
    let count = |v: Option<usize>| v.map(|v| v as f64);
    let counts = [("n", count(a.n)), ("m", count(a.m)), ("k", count(a.k)), ("rounds", count(a.t)), ("du", count(a.du)), ("dv", count(a.dv))];
    let values = [
        ("l", a.l),
        ("f0", a.f0),
        ("b2", a.b2),
        ("sigma-u2", a.sigma_u2),
        ("sigma-v2", a.sigma_v2),
        ("b0", a.b0),
        ("gamma", a.gamma),
        ("eta-u", a.eta_u),
        ("eta-v", a.eta_v),
    ];
    // A named flag the family reads neither as one of its flags nor as a symbol would be
    // silently ignored: refused, naming what the family does read.
    let reads = |name: &str| target.condition_flags().contains(&name) || fedbounds::formula::symbols::reads_symbol(target.symbols(), name);
    if let Some((name, _)) = counts.iter().chain(&values).find(|(name, v)| v.is_some() && !reads(name)) {
        let flags: Vec<String> = target.condition_flags().iter().map(|f| format!("--{f}")).collect();
        let allowed = if flags.is_empty() { String::new() } else { format!("{}, or ", flags.join(", ")) };
        return Err(Error::field(
            format!("--{name}"),
            format!("{}'s conditions do not read it", target.id()),
            format!("{allowed}--set NAME=VALUE with NAME from `fedbounds list --symbols`"),
        )
        .into());
    }
    // Only the values given reach the family, which names any it needs and lacks.
    for (name, v) in counts {
        if let Some(v) = v {
            given.insert(name.to_string(), v);
        }
    }
    for (name, v) in values {
        if let Some(v) = v {
            given.insert(name.to_string(), require_magnitude(name, v)?);
        }
    }
    for pair in &a.set {
        let (name, v) = pair.split_once('=').ok_or_else(|| Error::field("--set", format!("got `{pair}`"), "NAME=VALUE"))?;
        let v: f64 = v.trim().parse().map_err(|_| Error::field(format!("--set {name}"), format!("got `{v}`"), "a number"))?;
        let v = require_magnitude(&format!("set {}", name.trim()), v)?;
        fedbounds::formula::symbols::check_given(target.symbols(), name.trim(), v)?;
        // A name reads the symbol of that exact name, else the one it matches ignoring case and
        // `-`/`_` (`--set L` and `--l` both give `L`): two values for one symbol would leave one
        // of them silently unread. Distinct symbols such as FedPLT's `T` and `t` stay distinct.
        let reads = |key: &str| fedbounds::formula::symbols::symbol_read(target.symbols(), key);
        if let Some(other) = given.keys().find(|k| reads(k) == reads(name.trim())) {
            let first =
                if a.set.iter().any(|p| p.split_once('=').is_some_and(|(n, _)| n.trim() == other)) { format!("--set {other}") } else { format!("--{other}") };
            let message = format!("got {v}, but {first} already gives this symbol the value {}", given[other]);
            return Err(Error::field(format!("--set {}", name.trim()), message, "one value for each symbol").into());
        }
        given.insert(name.trim().to_string(), v);
    }
    families.require_known_claims(&a.claims, card.as_ref())?;
    emit(&target.conditions(&given, &a.claims, a.json, card.as_ref())?);
    Ok(ExitCode::SUCCESS)
}

fn run_file(families: &Registry, a: RunArgs) -> anyhow::Result<ExitCode> {
    let text = fedbounds::text_file::read_text(&a.file)?;
    let what = a.file.display().to_string();
    let target = families.family_of(&text, &what)?;
    require_threads(a.threads)?;
    fedbounds::budget::budget(a.max_work)?;
    let targets = [("--out", a.out.as_deref()), ("--export-instance", a.export_instance.as_deref())];
    for (flag, p) in targets {
        let Some(p) = p else { continue };
        require_file_target(flag, p)?;
        if same_path(p, &a.file) {
            return Err(Error::field(flag, format!("{} is the scenario file being run", p.display()), "a file other than the input").into());
        }
    }
    if let (Some(out), Some(export)) = (&a.out, &a.export_instance) {
        if same_path(out, export) {
            return Err(Error::field("--export-instance", format!("{} is also --out", export.display()), "a file other than --out").into());
        }
    }
    // Nothing is written before the run is known to succeed (its size and budget checked).
    let exported = match &a.export_instance {
        Some(_) => Some(target.export_instance(&text, &what)?),
        None => None,
    };
    let json = target.run(&text, &what, &RunOptions { threads: a.threads, estimator: a.estimator.map(Into::into), max_work: a.max_work })?;
    if let (Some(p), Some(exported)) = (&a.export_instance, exported) {
        write_atomic(p, exported.as_bytes())?;
    }
    match a.out {
        Some(p) => write_atomic(&p, json.as_bytes())?,
        None => emit(&json),
    }
    Ok(ExitCode::SUCCESS)
}

/// A finite constant or step given to `conditions`: 0, or of magnitude within the limits scenario
/// files have (products and squares of such values stay finite and normal), naming `--NAME`
/// otherwise. NaN and infinities go on to the family, whose message names the value's own range.
fn require_magnitude(name: &str, v: f64) -> Result<f64, Error> {
    use fedbounds::prec::{INPUT_MAGNITUDE_MAX, INPUT_MAGNITUDE_MIN};
    if !v.is_finite() || v == 0.0 || (v.abs() >= INPUT_MAGNITUDE_MIN && v.abs() <= INPUT_MAGNITUDE_MAX) {
        return Ok(v);
    }
    Err(Error::field(
        format!("--{name}"),
        format!("got {v:e}"),
        format!("a magnitude in [{INPUT_MAGNITUDE_MIN:e}, {INPUT_MAGNITUDE_MAX:e}], or 0 where the value may be 0"),
    ))
}

/// Whether two paths name the same file: equal once resolved (links and `..` followed where
/// the file exists, made absolute where it does not).
fn same_path(a: &std::path::Path, b: &std::path::Path) -> bool {
    let resolve = |p: &std::path::Path| p.canonicalize().or_else(|_| std::path::absolute(p)).ok();
    matches!((resolve(a), resolve(b)), (Some(x), Some(y)) if x == y)
}

/// Writes the families' reports of a command that is not `check` and prints them.
fn finish_reports(reports: Vec<(&'static str, FamilyReport)>, out: &std::path::Path, folder: &str) -> anyhow::Result<ExitCode> {
    let files: Vec<_> = reports.iter().flat_map(|(_, r)| r.files.iter().cloned()).collect();
    if files.is_empty() {
        // Which claims a command covers differs by command: every family searches some of its
        // claims (SUMMARY.md lists, per family, those it does not search and why); only
        // FedAvg-P mirrors figures.
        let allowed = match folder {
            "search" => SEARCHED_CLAIMS,
            _ => "claims of a family with this command (FedAvg-P's; `fedbounds check` checks the others)",
        };
        return Err(Error::field("--claim", format!("nothing to write: no family has {folder} for the claims asked for"), allowed).into());
    }
    let mut files = files;
    let searches: Vec<_> = reports.iter().flat_map(|(_, r)| r.searches.iter()).collect();
    if !searches.is_empty() {
        // Every family's lines in one table, in place of a family's own (FedAvg-P writes one).
        let table: std::path::PathBuf = format!("{folder}/search.csv").into();
        files.retain(|f| f.path != table);
        files.push(ReportFile { path: table, bytes: fedbounds::search::report::search_csv(searches).into_bytes() });
    }
    let written = fedbounds::outcome::write_subfolder(out, folder, &files)?;
    for (_, r) in &reports {
        emit(&r.terminal);
    }
    emit(&format!("\nwrote {} files under {}\n", written.len(), out.join(folder).display()));
    let mismatches: Vec<String> = reports.iter().flat_map(|(_, r)| r.mismatches.iter().cloned()).collect();
    if mismatches.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("findings that differ from the cards: {}", mismatches.join(", "));
        Ok(ExitCode::from(EXIT_MISMATCH))
    }
}

/// Which claims `search` takes, for its refusals.
const SEARCHED_CLAIMS: &str =
    "claims an adversarial search covers (the main job's SUMMARY.md says, per family, which claims are not searched and why; `fedbounds check` checks every claim)";

/// Refuses a value of a repeatable option given twice, naming it and its position.
fn require_distinct(flag: &str, values: &[String]) -> Result<(), Error> {
    match fedbounds::error::first_repeat(values) {
        Some((i, v)) => Err(Error::field(flag, format!("`{v}` is asked for twice ({flag} number {})", i + 1), "each value once")),
        None => Ok(()),
    }
}

/// Refuses claims asked for that no search ran (beside claims a search covers, they would
/// otherwise be dropped unseen).
fn require_searched(claims: &[String], searches: &[&fedbounds::search::report::SearchLine]) -> Result<(), Error> {
    let unsearched: Vec<&str> = claims.iter().map(String::as_str).filter(|c| !searches.iter().any(|s| s.claim == *c)).collect();
    if unsearched.is_empty() {
        return Ok(());
    }
    Err(Error::field("--claim", format!("no adversarial search covers {}; nothing was written", unsearched.join(", ")), SEARCHED_CLAIMS))
}

fn run_search(families: &Registry, a: SearchArgs) -> anyhow::Result<ExitCode> {
    if a.budget == 0 || a.budget > MAX_BUDGET {
        return Err(Error::field("--budget", format!("got {}", a.budget), format!("an integer >= 1 and <= {MAX_BUDGET}")).into());
    }
    require_bound_scale("--bound-scale", a.bound_scale)?;
    require_folder_target("--out", &a.out)?;
    require_folder_target("--out", &a.out.join("search"))?;
    let card = load_card(families, a.card.as_deref())?;
    if let Some(card) = &card {
        let f = families.family_of(&card.text, &card.what)?;
        if !families.families().iter().any(|g| g.id() == f.id() && g.has_search()) {
            return Err(Error::field(
                "--card",
                format!("family `{}` has no adversarial search", f.id()),
                "check its card's claims with `fedbounds check --card`",
            )
            .into());
        }
    }
    families.require_known_claims(&a.claims, card.as_ref())?;
    require_distinct("--claim", &a.claims)?;
    let mut cmd = format!("cargo run --release -- search --budget {} --seed {}", a.budget, a.seed);
    if let Some(c) = &a.card {
        cmd.push_str(&format!(" --card '{}'", c.display()));
    }
    for c in &a.claims {
        cmd.push_str(&format!(" --claim '{c}'"));
    }
    if a.bound_scale != 1.0 {
        cmd.push_str(&format!(" --bound-scale {}", a.bound_scale));
    }
    if a.room_budget != fedbounds::search::space::DEFAULT_ROOM_BUDGET {
        cmd.push_str(&format!(" --room-budget {}", a.room_budget));
    }
    let card_family = card.as_ref().map(|c| families.family_of(&c.text, &c.what)).transpose()?.map(|f| f.id());
    if a.room_budget > MAX_BUDGET {
        return Err(Error::field("--room-budget", format!("got {}", a.room_budget), format!("an integer >= 0 and <= {MAX_BUDGET}")).into());
    }
    let request = SearchRequest {
        claims: a.claims.clone(),
        budget: a.budget,
        room_budget: a.room_budget,
        seed: a.seed,
        bound_scale: a.bound_scale,
        plots: !a.no_plots,
        meta: ReportMeta::new(cmd),
        card: card.clone(),
        out: Some(a.out.clone()),
    };
    let mut reports = Vec::new();
    for f in families.families() {
        if card_family.is_some_and(|id| id != f.id()) {
            continue;
        }
        let own_card = card.as_ref().filter(|_| card_family == Some(f.id()));
        let concerned = a.claims.is_empty() || f.claims_with(own_card)?.iter().any(|c| a.claims.iter().any(|id| id == c.id));
        if concerned {
            if let Some(r) = f.search(&request, &Bars::new()?)? {
                reports.push((f.id(), r));
            }
        }
    }
    let searches: Vec<_> = reports.iter().flat_map(|(_, r)| r.searches.iter()).collect();
    if !searches.is_empty() {
        require_searched(&a.claims, &searches)?;
    }
    if !searches.is_empty() && searches.iter().all(|s| s.applicable == 0 && s.any_instance == (None, None)) {
        let evaluated: usize = searches.iter().map(|s| s.evaluations).sum();
        return Err(Error::field(
            "--budget",
            format!("nothing was checked: none of the {evaluated} instances evaluated satisfies the claims' assumptions, and no step-size room was measured"),
            format!("a budget large enough to reach an applicable instance (an integer <= {MAX_BUDGET}; the default is {})", fedbounds::search::DEFAULT_BUDGET),
        )
        .into());
    }
    finish_reports(reports, &a.out, "search")
}

fn run_bench(families: &Registry, a: BenchArgs) -> anyhow::Result<ExitCode> {
    require_threads(a.threads)?;
    if a.repeats == 0 || a.repeats > 100 {
        return Err(Error::field("--repeats", format!("got {}", a.repeats), "an integer >= 1 and <= 100").into());
    }
    if let Some(dir) = &a.scaling {
        // Before minutes of timing, not after them.
        require_folder_target("--scaling", dir)?;
    }
    let request =
        fedbounds::bench::BenchRequest { threads: a.threads.unwrap_or_else(fedbounds::bench::cores), repeats: a.repeats, scaling: a.scaling.is_some() };
    let report = fedbounds::bench::run(families, &request)?;
    if let Some(dir) = &a.scaling {
        report.write_scaling(dir)?;
    }
    emit(&format!("{}\n", serde_json::to_string_pretty(&report)?));
    Ok(ExitCode::SUCCESS)
}

fn run_experiments(families: &Registry, a: ExperimentsArgs) -> anyhow::Result<ExitCode> {
    require_threads(a.threads)?;
    require_folder_target("--out", &a.out)?;
    require_folder_target("--out", &a.out.join("experiments"))?;
    let meta = ReportMeta::new("cargo run --release -- experiments");
    let mut reports = Vec::new();
    for f in families.families() {
        if let Some(r) = f.experiments(a.threads, &meta, !a.no_plots, &Bars::new()?)? {
            reports.push((f.id(), r));
        }
    }
    finish_reports(reports, &a.out, "experiments")
}

/// Prints a sweep's totals and returns its exit code: 2 when a scenario was refused as bad input,
/// 3 when one failed, 1 when a verdict differs from a scenario's `expected`, 2 when no claim
/// applied to any scenario (nothing was checked), else 0.
fn finish_sweep(totals: &fedbounds::sweep::Totals, out: &std::path::Path) -> ExitCode {
    let t = totals;
    emit(&format!(
        "{} scenarios: {} checked, {} bad input, {} failed; {} rows: {} hold, {} violated, {} inconclusive, {} not applicable, {} differ from expected\n",
        t.scenarios, t.checked, t.bad_input, t.failed, t.rows, t.holds, t.violated, t.inconclusive, t.not_applicable, t.mismatches
    ));
    emit(&format!("wrote {} and {}\n", out.join("sweep.json").display(), out.join("sweep.csv").display()));
    if t.bad_input > 0 {
        eprintln!("{} scenarios were refused as bad input (their `error` names the field)", t.bad_input);
        ExitCode::from(EXIT_BAD_INPUT)
    } else if t.failed > 0 {
        eprintln!("{} scenarios failed (their `error` says where)", t.failed);
        ExitCode::from(EXIT_FAILURE)
    } else if t.mismatches > 0 {
        eprintln!("{} verdicts differ from their scenarios' expected verdicts", t.mismatches);
        ExitCode::from(EXIT_MISMATCH)
    } else if t.rows == 0 {
        eprintln!("nothing checked: the sweep's claims apply to none of its {} scenarios (each claim's setting: `fedbounds list`)", t.scenarios);
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    }
}

fn run_sweep(families: &Registry, a: SweepArgs) -> anyhow::Result<ExitCode> {
    require_threads(a.threads)?;
    let shard = match &a.shard {
        Some(s) => fedbounds::sweep::Shard::parse(s)?,
        None => fedbounds::sweep::Shard::ALL,
    };
    let plan = fedbounds::sweep::Plan::load(&a.file, families)?;
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("sweeps").join(&plan.sweep.name));
    require_folder_target("--out", &out)?;
    let done = plan.run_share(shard, &out, a.threads, &Bars::new()?)?;
    emit(&format!(
        "share {shard} of sweep {}: {} scenarios, {} checked now, {} kept from an earlier run\n",
        plan.sweep.name, done.owned, done.ran, done.reused
    ));
    if a.shard.is_some() {
        emit(&format!("when every share is done: fedbounds merge {} {}\n", a.file.display(), out.display()));
        return Ok(ExitCode::SUCCESS);
    }
    let totals = fedbounds::sweep::report::write_report(&plan, std::slice::from_ref(&out), &out)?;
    Ok(finish_sweep(&totals, &out))
}

fn run_merge(families: &Registry, a: MergeArgs) -> anyhow::Result<ExitCode> {
    let plan = fedbounds::sweep::Plan::load(&a.file, families)?;
    let dirs = if a.dirs.is_empty() { vec![PathBuf::from("sweeps").join(&plan.sweep.name)] } else { a.dirs.clone() };
    let out = a.out.clone().unwrap_or_else(|| dirs[0].clone());
    require_folder_target("--out", &out)?;
    for name in ["sweep.json", "sweep.csv"] {
        require_file_target("--out", &out.join(name))?;
    }
    let totals = fedbounds::sweep::report::write_report(&plan, &dirs, &out)?;
    Ok(finish_sweep(&totals, &out))
}

#[cfg(test)]
mod tests {
    /// A writer whose every write fails with `kind`.
    struct Failing(std::io::ErrorKind);

    impl std::io::Write for Failing {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(self.0))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_of_standard_output_exits_3_and_a_closed_pipe_0() {
        assert_eq!(super::write_out(&mut Failing(std::io::ErrorKind::StorageFull), "rows\n"), Err(3), "a full disk is a failure");
        assert_eq!(super::write_out(&mut Failing(std::io::ErrorKind::Other), "rows\n"), Err(3));
        assert_eq!(super::write_out(&mut Failing(std::io::ErrorKind::BrokenPipe), "rows\n"), Err(0), "the reader is gone: a quiet end");
        // Negative control: a writer that takes the text.
        let mut taken = Vec::new();
        assert_eq!(super::write_out(&mut taken, "rows\n"), Ok(()));
        assert_eq!(taken, b"rows\n");
    }
}
