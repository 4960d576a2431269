//! What a check of several families produced, and its exporters: the terminal lines,
//! `SUMMARY.md`, one Markdown page per claim, `summary.csv`, and the atomic writing of files.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::checker::ClaimResult;
use crate::claim::{fmt_num, Reading};
use crate::error::{Error, Result};
use crate::family::{ClaimSummary, FamilyReport, ReportFile, VerdictRow};
use crate::report::csv_field;
use crate::report::{describe, reproduce_command, to_json, ReportMeta};
use crate::summary::FamilySummary;
use crate::verdict::{ConstantsSource, Evaluation, VerdictKind};

/// One claim's JSON file (`claims/<ID>.json`): the claim's identity, then one entry per scenario
/// in the family's own entry type `E` (its run's numbers beside the evaluation).
#[derive(Serialize)]
pub struct ClaimJson<'a, E: Serialize> {
    /// Provenance.
    pub meta: &'a ReportMeta,
    /// Claim id.
    pub claim: &'a str,
    /// One-line title.
    pub title: &'a str,
    /// Source lines.
    pub source: &'a str,
    /// The reading checked.
    pub reading: &'a Reading,
    /// The metric bounded, or the inequality.
    pub metric: &'a str,
    /// One entry per scenario.
    pub scenarios: Vec<E>,
}

impl<E: Serialize> ClaimJson<'_, E> {
    /// The file.
    ///
    /// # Errors
    /// When the JSON cannot be written.
    pub fn file(&self) -> Result<ReportFile> {
        Ok(ReportFile { path: PathBuf::from("claims").join(format!("{}.json", self.claim)), bytes: to_json(self)?.into_bytes() })
    }
}

/// What one family's check produced, with what the summary needs to know of the family.
#[derive(Debug, Clone)]
pub struct FamilyOutcome {
    /// The family's id.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its claims, in report order.
    pub claims: Vec<ClaimSummary>,
    /// What its check produced.
    pub report: FamilyReport,
}

/// What a check of several families produced.
#[derive(Debug, Clone, Default)]
pub struct CheckOutcome {
    /// Every family's outcome, in registry order.
    pub families: Vec<FamilyOutcome>,
}

impl CheckOutcome {
    /// Every verdict row.
    pub fn rows(&self) -> impl Iterator<Item = &VerdictRow> {
        self.families.iter().flat_map(|f| f.report.rows.iter())
    }

    /// Everything that differs from the cards: rows whose verdict is not the expected one, then
    /// the families' other findings.
    pub fn mismatches(&self) -> Vec<String> {
        let rows = self.rows().filter(|r| !r.matches_expected()).map(|r| {
            let what = if r.constants.is_exact() { String::new() } else { format!(" ({})", r.constants) };
            format!("{}{what} on {}", r.claim, r.scenario)
        });
        let other = self.families.iter().flat_map(|f| f.report.mismatches.iter().cloned());
        let mut seen = Vec::new();
        for m in rows.chain(other) {
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        seen
    }

    /// Every report file: the families' files, a Markdown page per claim, then `SUMMARY.md` and
    /// `summary.csv`.
    pub fn files(&self, meta: &ReportMeta) -> Vec<ReportFile> {
        let mut files: Vec<ReportFile> = self.families.iter().flat_map(|f| f.report.files.iter().cloned()).collect();
        for f in &self.families {
            for c in &f.claims {
                let rows: Vec<&VerdictRow> = f.report.rows.iter().filter(|r| r.claim == c.id).collect();
                if !rows.is_empty() {
                    files.push(ReportFile {
                        path: PathBuf::from("claims").join(format!("{}.md", c.id)),
                        bytes: crate::summary::claim_page(c, &rows).into_bytes(),
                    });
                }
            }
        }
        if self.families.iter().any(|f| !f.report.rows.is_empty() || !f.report.summary_markdown.is_empty()) {
            let figures: Vec<String> = files.iter().map(|f| f.path.display().to_string()).filter(|p| p.starts_with("figures/")).collect();
            files.push(ReportFile { path: "SUMMARY.md".into(), bytes: self.summary_markdown(meta, &figures).into_bytes() });
            files.push(ReportFile { path: "summary.csv".into(), bytes: self.summary_csv().into_bytes() });
        }
        let searches: Vec<_> = self.families.iter().flat_map(|f| f.report.searches.iter()).collect();
        if !searches.is_empty() {
            files.push(ReportFile { path: "search.csv".into(), bytes: crate::search::report::search_csv(searches).into_bytes() });
        }
        files
    }

    /// `SUMMARY.md`: a title with the command that reproduces it and the totals, a table of
    /// contents and the overview table ([`crate::summary::markdown_overview`]); per family, one
    /// entry per claim (statement, verdict line, figure, link to its page), then the family's own
    /// section (how it computes, its scenarios' constants, its extra work).
    pub fn summary_markdown(&self, meta: &ReportMeta, figures: &[String]) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# fedbounds verdicts\n");
        let _ = writeln!(s, "fedbounds {} — reproduce with `{}`\n", meta.crate_version, meta.command);
        let all: Vec<&VerdictRow> = self.rows().collect();
        let bad = all.iter().filter(|r| !r.matches_expected()).count();
        let _ = writeln!(
            s,
            "{} verdicts differ from the cards. Every claim below lists its verdicts over the scenarios in its setting; `claims/<ID>.md` has every scenario, `summary.csv` every number.\n",
            if bad == 0 { "No".to_string() } else { bad.to_string() }
        );
        s.push_str(&crate::summary::markdown_overview(&self.family_summaries()));
        for f in &self.families {
            let _ = writeln!(s, "<a id=\"family-{}\"></a>\n\n## {} (`{}`)\n", f.id, f.title, f.id);
            s.push_str(&crate::summary::markdown_claims(&f.claims, &f.report.rows, &f.report.searches, figures));
            s.push_str(&f.report.summary_markdown);
            if !f.report.summary_markdown.ends_with('\n') {
                s.push('\n');
            }
        }
        s
    }

    /// The terminal summary (see [`crate::summary::terminal`]); `replay` is how the tool was
    /// invoked up to its filters (program, `check` and the options that change verdicts), for the
    /// replay commands.
    pub fn terminal_summary(&self, replay: &str) -> String {
        let other: Vec<String> = self.families.iter().flat_map(|f| f.report.mismatches.iter().cloned()).collect();
        crate::summary::terminal(&self.family_summaries(), &other, replay)
    }

    /// Each family's rows, search lines and terminal tables, for the summaries.
    fn family_summaries(&self) -> Vec<FamilySummary<'_>> {
        self.families
            .iter()
            .map(|f| FamilySummary { id: f.id, title: f.title, rows: &f.report.rows, searches: &f.report.searches, extra: &f.report.terminal })
            .collect()
    }

    /// `summary.csv`: one row per claim, scenario and constants source, for every family.
    pub fn summary_csv(&self) -> String {
        let mut s = String::from("claim,reading,scenario,constants,verdict,expected,slack,checkpoint,estimate,lower,upper,bound\n");
        for r in self.rows() {
            let e = &r.evaluation;
            let p = e.decisive.as_ref();
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(r.claim),
                csv_field(r.reading),
                csv_field(&r.scenario),
                csv_field(&r.constants.to_string()),
                e.verdict,
                r.expected.map(|v| v.to_string()).unwrap_or_default(),
                e.slack.map(|x| x.to_string()).unwrap_or_default(),
                p.map(|p| p.rounds.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.mean.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.lower.to_string()).unwrap_or_default(),
                p.map(|p| p.estimate.upper.to_string()).unwrap_or_default(),
                p.and_then(|p| p.bound).map(|b| b.to_string()).unwrap_or_default(),
            );
        }
        s
    }

    /// The verdict table for a terminal, then the families' extra sections.
    pub fn terminal_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:<24} {:<30} {:<15} {:<15} {:>10}  detail", "claim", "scenario", "verdict", "expected", "slack");
        for r in self.rows() {
            let mark = if r.matches_expected() { "" } else { " !" };
            let claim = match &r.label {
                Some(label) => format!("  ({label})"),
                None => r.claim.to_string(),
            };
            let _ = writeln!(
                s,
                "{:<24} {:<30} {:<15} {:<15} {:>10}  {}",
                claim,
                r.scenario,
                format!("{}{mark}", r.evaluation.verdict),
                r.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                r.evaluation.slack.map(fmt_num).unwrap_or_else(|| "-".into()),
                describe(&r.evaluation)
            );
        }
        for f in &self.families {
            s.push_str(&f.report.terminal);
        }
        s
    }
}

/// Writes a report: every file under `out`, the folder replaced as a whole (see
/// [`replace_folder`]), so an interrupted or failed write leaves the previous complete report.
/// An existing `out` is replaced only when it is empty or a previous report (it has a
/// `SUMMARY.md`, or it is a folder of `folder_files`' own: `search/`, `experiments/`); returns the
/// paths written.
///
/// # Errors
/// [`Error::InvalidField`] naming `--out` for a folder that is not a report; [`Error::Io`]
/// naming the file or folder that could not be written.
pub fn write_files(out: &Path, files: &[ReportFile]) -> Result<Vec<PathBuf>> {
    if out.join("SUMMARY.md").is_file() {
        if let Some(foreign) = foreign_report_entry(out, files) {
            return Err(Error::field(
                "--out",
                format!(
                    "`{}` holds `{}`, which is not a file of an earlier report (a report replaces its folder as a whole, and would delete it)",
                    out.display(),
                    foreign.display()
                ),
                "a new or empty folder, or an earlier report's folder (move the other files away)",
            ));
        }
    }
    let is_report = |dir: &Path| dir.join("SUMMARY.md").is_file();
    replace_folder(out, files, &is_report)?;
    Ok(files.iter().map(|f| out.join(&f.path)).collect())
}

/// [`write_files`] for the files of one subfolder `folder` of `out` (a `search` or
/// `experiments` run): that subfolder is replaced as a whole, the rest of `out` is kept.
///
/// # Errors
/// As [`write_files`].
pub fn write_subfolder(out: &Path, folder: &str, files: &[ReportFile]) -> Result<Vec<PathBuf>> {
    let inside: Option<Vec<ReportFile>> =
        files.iter().map(|f| f.path.strip_prefix(folder).ok().map(|p| ReportFile { path: p.to_path_buf(), bytes: f.bytes.clone() })).collect();
    match inside {
        Some(inside) => {
            let dir = out.join(folder);
            if let Some(foreign) = foreign_file(&dir, &inside) {
                return Err(Error::field(
                    "--out",
                    format!(
                        "`{}` holds `{}`, which is not a file of an earlier `{folder}` report (a report replaces its folder as a whole and writes only regular files)",
                        dir.display(),
                        foreign.to_string_lossy()
                    ),
                    format!("an --out whose {folder}/ is new, empty, or an earlier {folder} report's (move the other files away)"),
                ));
            }
            replace_folder(&dir, &inside, &|_| true)?;
            Ok(files.iter().map(|f| out.join(&f.path)).collect())
        }
        None => write_files(out, files),
    }
}

/// The first entry of an existing report folder `dir` (it has a `SUMMARY.md`) that no report
/// writes, or `None`. A report holds, at its top, regular files of its own names (`SUMMARY.md`,
/// the tables, any top-level name of `files`) and folders, each of regular files only: claim pages
/// and JSON in `claims/`, and JSON, CSV, TOML and PNG files in the others (`figures/`, `search/`,
/// a family's). Anything else (a hidden entry such as `.git`, a nested folder, a symbolic link,
/// a Markdown file outside `claims/`) belongs to someone else.
fn foreign_report_entry(dir: &Path, files: &[ReportFile]) -> Option<PathBuf> {
    let own_top = |name: &std::ffi::OsStr| {
        ["SUMMARY.md", "summary.csv", "search.csv"].iter().any(|n| name == *n)
            || files.iter().any(|f| f.path.components().next().is_some_and(|c| c.as_os_str() == name))
    };
    let plain = |name: &std::ffi::OsStr| name.to_str().is_some_and(|n| !n.is_empty() && !n.starts_with('.'));
    // An entry that cannot be read is someone else's too: it is never taken for a report's.
    let Ok(entries) = std::fs::read_dir(dir) else { return Some(PathBuf::from(".")) };
    for top in entries {
        let Ok(top) = top else { return Some(PathBuf::from(".")) };
        let (name, path) = (top.file_name(), PathBuf::from(top.file_name()));
        let Ok(kind) = top.file_type() else { return Some(path) };
        if kind.is_file() && plain(&name) && own_top(&name) {
            continue;
        }
        if !kind.is_dir() || !plain(&name) {
            return Some(path);
        }
        let allowed: &[&str] = if name == "claims" { &["json", "md"] } else { &["json", "csv", "toml", "png"] };
        let Ok(inner_entries) = std::fs::read_dir(top.path()) else { return Some(path) };
        for entry in inner_entries {
            let Ok(entry) = entry else { return Some(path) };
            let inner = Path::new(&name).join(entry.file_name());
            let ext_ok = Path::new(&entry.file_name()).extension().and_then(|x| x.to_str()).is_some_and(|x| allowed.contains(&x));
            if !entry.file_type().is_ok_and(|t| t.is_file()) || !plain(&entry.file_name()) || !ext_ok {
                return Some(inner);
            }
        }
    }
    None
}

/// The first entry of an existing folder `dir` that a report writing `files` into it could not
/// have written itself, or `None` when there is none (or no folder). A report's folder holds
/// regular files only, at least one of the names `files` has (its table, e.g. `search.csv`), and
/// besides those only per-claim or per-sweep files (`.json`, `.toml`, `.png` named like an id)
/// of an earlier run.
fn foreign_file(dir: &Path, files: &[ReportFile]) -> Option<std::ffi::OsString> {
    let entries: Vec<std::fs::DirEntry> = std::fs::read_dir(dir).ok()?.flatten().collect();
    let ours = |name: &std::ffi::OsStr| files.iter().any(|f| f.path.as_os_str() == name);
    let own_kind = |e: &std::fs::DirEntry| {
        let path = Path::new(e.file_name().as_os_str()).to_path_buf();
        // A claim id, with `@SOURCE` for a search of other constants (`MY-CLAIM@estimated`).
        let id_like = path.file_stem().and_then(|s| s.to_str()).is_some_and(|s| s.split('@').all(|p| crate::formula::user::require_claim_id("", p).is_ok()));
        let ext = path.extension().and_then(|x| x.to_str());
        e.file_type().is_ok_and(|t| t.is_file()) && (ours(&e.file_name()) || (id_like && matches!(ext, Some("json" | "toml" | "png"))))
    };
    let marked = entries.iter().any(|e| ours(&e.file_name()) && e.file_type().is_ok_and(|t| t.is_file()));
    match entries.iter().find(|e| !own_kind(e)) {
        Some(e) => Some(e.file_name()),
        None if !marked => entries.first().map(std::fs::DirEntry::file_name),
        None => None,
    }
}

/// A name beside `dir`, unique to this process and moment: `.NAME.TAG-PID-NANOS`.
fn sibling(dir: &Path, tag: &str) -> PathBuf {
    let name = dir.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!(".{name}.{tag}-{}", crate::report::unique_suffix()))
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io { path: path.display().to_string(), source: e }
}

/// Writes `files` into a new sibling folder of `dir` (named per process), then swaps it in:
/// the old `dir` renamed away, the new one renamed in, the old one removed. Every rename is
/// atomic, so `dir` is at every moment the previous complete report, the new complete one, or
/// (between two renames) absent; two processes writing the same `dir` both end with a complete
/// folder (the later one's). The temporary folder is removed on every error. An existing `dir`
/// that is neither empty nor accepted by `is_report` is refused, so a report never replaces a
/// folder of other files.
///
/// # Errors
/// [`Error::InvalidField`] naming `--out`; [`Error::Io`] naming what could not be written.
pub fn replace_folder(dir: &Path, files: &[ReportFile], is_report: &dyn Fn(&Path) -> bool) -> Result<()> {
    let non_empty = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
    if dir.exists() && (!dir.is_dir() || (non_empty && !is_report(dir))) {
        return Err(Error::field(
            "--out",
            format!("`{}` exists and is not a report folder (a report replaces its folder as a whole)", dir.display()),
            "a new or empty folder, or an earlier report's folder",
        ));
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    remove_stale_siblings(dir);
    let tmp = sibling(dir, "new");
    let written = write_tree(&tmp, files).and_then(|()| swap_in(&tmp, dir));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    written
}

/// Removes what an interrupted writer of `dir` left beside it: its temporary folders
/// (`.NAME.new-PID-NANOS`), and, while `dir` itself exists, folders it had moved away
/// (`.NAME.old-PID-NANOS`), of processes that no longer run. Where the process table cannot be
/// read (no `/proc`), nothing is removed.
fn remove_stale_siblings(dir: &Path) {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name().map(|n| n.to_string_lossy().into_owned())) else { return };
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&format!(".{name}.")) else { continue };
        let (tag, pid) = match rest.split_once('-') {
            Some((tag, tail)) => (tag, tail.split('-').next().and_then(|p| p.parse::<u32>().ok())),
            None => continue,
        };
        let stale = pid.is_some_and(|p| p != std::process::id() && !Path::new("/proc").join(p.to_string()).exists());
        if stale && (tag == "new" || (tag == "old" && dir.exists())) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn write_tree(tmp: &Path, files: &[ReportFile]) -> Result<()> {
    require_plain_paths(files)?;
    std::fs::create_dir(tmp).map_err(io_error(tmp))?;
    for f in files {
        let path = tmp.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        std::fs::write(&path, &f.bytes).map_err(io_error(&path))?;
    }
    Ok(())
}

/// Refuses a report file whose path is not plain names below its folder: a component `..`, `/`
/// or `.`, or one starting with `.` (a hidden file). File names come from claim ids, which a
/// card's reading already holds to a safe form; this is the last guard before anything is written.
///
/// # Errors
/// [`Error::Internal`] naming the path.
pub fn require_plain_paths(files: &[ReportFile]) -> Result<()> {
    for f in files {
        let plain = |c: std::path::Component| matches!(c, std::path::Component::Normal(n) if !n.to_string_lossy().starts_with('.'));
        if f.path.as_os_str().is_empty() || !f.path.components().all(plain) {
            return Err(Error::Internal(format!("report file `{}` is not a plain file name below its folder", f.path.display())));
        }
    }
    Ok(())
}

/// Renames `tmp` to `dir`, moving any `dir` there away first (retried while another process
/// puts its own `dir` in between), then removes what was moved away.
fn swap_in(tmp: &Path, dir: &Path) -> Result<()> {
    let mut moved = Vec::new();
    let mut result = Err(Error::Internal(format!("{}: could not be swapped in", dir.display())));
    for _ in 0..64 {
        if dir.exists() {
            let old = sibling(dir, "old");
            match std::fs::rename(dir, &old) {
                Ok(()) => moved.push(old),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    result = Err(io_error(dir)(e));
                    break;
                }
            }
        }
        match std::fs::rename(tmp, dir) {
            Ok(()) => {
                result = Ok(());
                break;
            }
            // Another process put its folder in between: move it away too, and try again.
            Err(_) if dir.exists() => continue,
            Err(e) => {
                result = Err(io_error(dir)(e));
                break;
            }
        }
    }
    if result.is_err() {
        // Put the previous report back where nothing took its place.
        if let Some(last) = moved.pop().filter(|_| !dir.exists()) {
            let _ = std::fs::rename(&last, dir);
        }
    }
    for old in moved {
        let _ = std::fs::remove_dir_all(old);
    }
    result
}

/// One scenario's entry in a claim's JSON (`claims/<ID>.json`): the scenario, the command that
/// reproduces it, the family's numbers of the run (`extras`, flattened in their field order),
/// then the claim's evaluation as stated and, where there is one, with empirical constants.
#[derive(Serialize)]
pub struct ScenarioEntry<'a, X: Serialize> {
    /// Scenario name.
    pub scenario: &'a str,
    /// What it probes.
    pub description: &'a str,
    /// Its hash.
    pub scenario_hash: &'a str,
    /// The command that reproduces this claim on it.
    pub reproduce: String,
    /// The family's numbers of the run.
    #[serde(flatten)]
    pub extras: X,
    /// The verdict the card expects of the claim as stated.
    pub expected: Option<VerdictKind>,
    /// The verdict the card expects of the empirical evaluation.
    pub expected_empirical: Option<VerdictKind>,
    /// The claim as stated.
    pub evaluation: &'a Evaluation,
    /// The claim with empirical constants, if evaluated.
    pub empirical: Option<&'a Evaluation>,
}

impl<'a, X: Serialize> ScenarioEntry<'a, X> {
    /// The entry of claim `id` on a run `(name, description, hash)` with these `results`; `None`
    /// when the run has no exact-constants result of the claim.
    pub fn of(id: &str, (scenario, description, scenario_hash): (&'a str, &'a str, &'a str), results: &'a [ClaimResult], extras: X) -> Option<Self> {
        let of = |c| results.iter().find(|r| r.claim == id && r.constants == c);
        let (exact, empirical) = (of(ConstantsSource::Exact)?, of(ConstantsSource::Empirical));
        Some(Self {
            scenario,
            description,
            scenario_hash,
            reproduce: reproduce_command(id, scenario),
            extras,
            expected: exact.expected,
            expected_empirical: empirical.and_then(|e| e.expected),
            evaluation: &exact.evaluation,
            empirical: empirical.map(|e| &e.evaluation),
        })
    }
}

/// One run as the claims' JSON files read it: its scenario's name, description and hash, its
/// results, and the family's numbers of the run (`extras`, beside each claim's evaluation).
pub struct RunRecord<'a, X> {
    /// Scenario name.
    pub scenario: &'a str,
    /// What it probes.
    pub description: &'a str,
    /// Its hash.
    pub hash: &'a str,
    /// Its results.
    pub results: &'a [ClaimResult],
    /// The family's numbers of the run.
    pub extras: X,
}

/// Each claim's JSON file `claims/<ID>.json` ([`ClaimJson`]): one [`ScenarioEntry`] per run with
/// an exact-constants result of the claim, in run order; claims in the order of `claims`, and a
/// claim no run has a result of gets no file.
///
/// # Errors
/// When a JSON file cannot be written.
pub fn claim_files<X: Serialize + Clone>(meta: &ReportMeta, claims: &[ClaimSummary], runs: &[RunRecord<X>]) -> Result<Vec<ReportFile>> {
    let mut files = Vec::new();
    for c in claims {
        let scenarios: Vec<_> = runs.iter().filter_map(|r| ScenarioEntry::of(c.id, (r.scenario, r.description, r.hash), r.results, r.extras.clone())).collect();
        if !scenarios.is_empty() {
            files.push(ClaimJson { meta, claim: c.id, title: c.title, source: c.source, reading: &c.reading, metric: c.metric, scenarios }.file()?);
        }
    }
    Ok(files)
}

/// The verdicts of a run as the `run` command prints them: per claim as stated, its verdict,
/// failed conditions and notes (a numerical failure says where the run stopped being comparable),
/// then the verdict, slack and notes of its empirical evaluation (null without one).
pub fn run_verdicts(results: &[ClaimResult]) -> Vec<serde_json::Value> {
    let of = |id: &str, c| results.iter().find(|r| r.claim == id && r.constants == c);
    let exact = results.iter().filter(|c| c.constants == ConstantsSource::Exact);
    exact
        .map(|c| {
            let e = of(c.claim, ConstantsSource::Empirical).map(|e| &e.evaluation);
            serde_json::json!({"claim": c.claim, "verdict": c.evaluation.verdict, "failed": c.evaluation.failed, "notes": c.evaluation.notes, "empirical_verdict": e.map(|e| e.verdict), "empirical_slack": e.and_then(|e| e.slack), "empirical_notes": e.map(|e| &e.notes)})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Reading;
    use crate::family::ClaimKind;
    use crate::verdict::evaluate_inequality;

    fn file(path: &str) -> ReportFile {
        ReportFile { path: path.into(), bytes: b"x".to_vec() }
    }

    /// A folder with a `SUMMARY.md` of someone else's (a repository, a book's `src/`, a report
    /// with a user's file added) is refused, naming the entry, and left as it was; an earlier
    /// report (control) is replaced.
    #[test]
    fn a_folder_with_a_summary_and_other_files_is_not_taken_for_a_report() {
        let files = [file("SUMMARY.md"), file("summary.csv"), file("claims/A.json"), file("claims/A.md"), file("figures/A.png")];
        for (foreign, named) in [(".git/HEAD", ".git"), ("src/chapter.md", "src/chapter.md"), ("MARKER", "MARKER"), ("claims/notes.txt", "claims/notes.txt")] {
            let out = tempfile::tempdir().unwrap();
            let dir = out.path().join("r");
            std::fs::create_dir_all(dir.join(foreign).parent().unwrap()).unwrap();
            std::fs::write(dir.join("SUMMARY.md"), "theirs").unwrap();
            std::fs::write(dir.join(foreign), "theirs").unwrap();
            let err = write_files(&dir, &files).unwrap_err();
            assert!(err.is_bad_input() && err.to_string().contains(named), "{foreign}: {err}");
            assert_eq!(std::fs::read_to_string(dir.join(foreign)).unwrap(), "theirs", "{foreign} kept");
        }
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("r");
        write_files(&dir, &[file("SUMMARY.md"), file("claims/B.json"), file("paper/runs.json"), file("figures/B.png")]).unwrap();
        write_files(&dir, &files).unwrap();
        assert!(dir.join("claims/A.json").is_file() && !dir.join("paper").exists());
    }

    #[test]
    fn a_subfolder_of_other_files_is_refused_and_an_earlier_report_replaced() {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("search");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("mynotes.txt"), "mine").unwrap();
        let files = [file("search/A.json"), file("search/search.csv")];
        let err = write_subfolder(out.path(), "search", &files).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("mynotes.txt"), "{err}");
        assert!(dir.join("mynotes.txt").is_file(), "the user's file is kept");
        // A `.csv` the report does not write is foreign even beside an earlier report.
        std::fs::remove_file(dir.join("mynotes.txt")).unwrap();
        std::fs::write(dir.join("search.csv"), "earlier").unwrap();
        std::fs::write(dir.join("mydata.csv"), "mine").unwrap();
        assert!(write_subfolder(out.path(), "search", &files).unwrap_err().to_string().contains("mydata.csv"));
        // Negative control: an earlier report (its table, per-claim files of other claims,
        // `ID@SOURCE` names) is replaced as a whole.
        std::fs::remove_file(dir.join("mydata.csv")).unwrap();
        std::fs::write(dir.join("B~variant.toml"), "earlier").unwrap();
        std::fs::write(dir.join("C@estimated.png"), "earlier").unwrap();
        write_subfolder(out.path(), "search", &files).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["A.json", "search.csv"]);
    }

    #[test]
    fn report_files_with_paths_that_leave_their_folder_or_hide_are_refused() {
        for bad in ["claims/../../ESCAPED.json", "claims/.md", "/tmp/x.json", "..", ""] {
            let err = require_plain_paths(&[file(bad)]).unwrap_err();
            assert!(matches!(err, Error::Internal(_)), "{bad}: {err}");
        }
        let out = tempfile::tempdir().unwrap();
        assert!(write_files(&out.path().join("r"), &[file("claims/../../ESCAPED.json")]).is_err());
        assert!(!out.path().join("ESCAPED.json").exists() && !out.path().join("r").exists(), "nothing written");
        // Negative control: plain names, variant ids included.
        require_plain_paths(&[file("claims/MY-CLAIM~variant.json"), file("search/MY-CLAIM@estimated.toml"), file("SUMMARY.md")]).unwrap();
    }

    fn result(claim: &'static str, constants: ConstantsSource, lhs: f64) -> ClaimResult {
        let evaluation = evaluate_inequality(Vec::new(), 1, &|_| Some(vec![(lhs, 1.0)]), crate::engine::Estimator::Exact, 0.99, 1.0);
        ClaimResult { claim, reading: "primary", constants, label: None, evaluation, expected: Some(VerdictKind::Holds) }
    }

    fn summary(id: &'static str) -> ClaimSummary {
        ClaimSummary { id, kind: ClaimKind::Lemma, title: "t", statement: String::new(), source: "s", reading: Reading::primary("r"), metric: "m" }
    }

    #[test]
    fn one_json_per_claim_with_a_result_and_run_verdicts_pair_the_empirical_row() {
        let a = [result("A", ConstantsSource::Exact, 2.0), result("A", ConstantsSource::Empirical, 0.5)];
        let b = [result("A", ConstantsSource::Exact, 0.5)];
        let runs = [
            RunRecord { scenario: "one", description: "d", hash: "h1", results: &a, extras: serde_json::json!({"x": 1}) },
            RunRecord { scenario: "two", description: "d", hash: "h2", results: &b, extras: serde_json::json!({"x": 2}) },
        ];
        let files = claim_files(&ReportMeta::default(), &[summary("A"), summary("B")], &runs).unwrap();
        // Negative control: claim B has no result, so no file.
        assert_eq!(files.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>(), ["claims/A.json"]);
        let json: serde_json::Value = serde_json::from_slice(&files[0].bytes).unwrap();
        let entries = json["scenarios"].as_array().unwrap();
        assert_eq!((entries[0]["scenario"].as_str(), entries[0]["x"].as_i64(), entries[1]["x"].as_i64()), (Some("one"), Some(1), Some(2)));
        assert_eq!((entries[0]["evaluation"]["verdict"].as_str(), entries[0]["empirical"]["verdict"].as_str()), (Some("violated"), Some("holds")));
        assert!(entries[1]["empirical"].is_null());
        let verdicts = run_verdicts(&a);
        assert_eq!(verdicts.len(), 1, "one entry per claim as stated");
        assert_eq!((verdicts[0]["verdict"].as_str(), verdicts[0]["empirical_verdict"].as_str()), (Some("violated"), Some("holds")));
        assert!(run_verdicts(&b)[0]["empirical_verdict"].is_null());
    }
}
