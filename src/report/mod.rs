//! Reports shared by every family: atomic writes, pretty JSON, provenance, one-line descriptions
//! of evaluations, and the figure primitives.
//!
//! Every file is written to a temporary name and renamed into place, so an interrupted or failed
//! run never leaves a half-written report. Output is byte-identical for identical inputs: no
//! timestamps, no host names, maps in sorted order.

pub mod claim_figure;
pub mod figure;
pub mod panels;

use std::path::Path;

use serde::Serialize;

use crate::claim::{fmt_num, ConditionCheck, ConditionKind};
use crate::error::{Error, Result};
use crate::verdict::{Evaluation, VerdictKind};

/// What produced a report.
#[derive(Debug, Clone, Serialize)]
pub struct ReportMeta {
    /// `fedbounds` crate version.
    pub crate_version: &'static str,
    /// The command that reproduces the report.
    pub command: String,
}

impl Default for ReportMeta {
    /// The main command.
    fn default() -> Self {
        Self::new("cargo run --release -- check")
    }
}

impl ReportMeta {
    /// Metadata for a command line.
    pub fn new(command: impl Into<String>) -> Self {
        Self { crate_version: env!("CARGO_PKG_VERSION"), command: command.into() }
    }
}

/// `PID-NANOS`: a name part unique to this process and moment, for temporary files and folders
/// (two writers never share one; a stale one names the process that left it).
pub fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}", std::process::id())
}

/// Writes `bytes` to `path` atomically (temporary file in the same folder, then rename).
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    refuse_non_regular(&path.display().to_string(), path)?;
    let io = |e| Error::Io { path: path.display().to_string(), source: e };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    // A temporary name of this process and moment, so two writers never share one; removed on
    // every error.
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tmp = path.with_extension(format!("{ext}.{}.partial", unique_suffix()));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(io)
}

/// Refuses an output file `path` (given as `flag`) that exists and is not a regular file: a
/// folder, a device, a FIFO or a socket, which [`write_atomic`]'s rename would replace (a
/// regular file is replaced as a whole); or whose folder cannot be written, or created where it
/// does not exist ([`require_writable`]).
///
/// # Errors
/// [`Error::InvalidField`] naming `flag`.
pub fn require_file_target(flag: &str, path: &Path) -> Result<()> {
    refuse_non_regular(flag, path)?;
    require_writable(flag, path.parent().unwrap_or(Path::new("")))
}

/// [`require_file_target`]'s first half, which every write checks: `path` exists and is not a
/// regular file.
fn refuse_non_regular(flag: &str, path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(Error::field(
            flag,
            format!("`{}` exists and is not a regular file (a folder, device, FIFO or socket is never replaced)", path.display()),
            "a new file's path, or a regular file's to replace",
        )),
        _ => Ok(()),
    }
}

/// Refuses an output folder `path` (given as `flag`) that exists and is not a folder, or whose
/// parent cannot be written ([`require_writable`]), before any work is done.
///
/// # Errors
/// [`Error::InvalidField`] naming `flag`.
pub fn require_folder_target(flag: &str, path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_dir() => Err(Error::field(flag, format!("`{}` exists and is not a folder", path.display()), "a new folder's path, or a folder's")),
        // A report folder is written beside itself and renamed in (`outcome::replace_folder`):
        // its parent is where files are created. Probing there, not inside, also leaves a
        // concurrent writer of the folder nothing foreign to find in it.
        _ => require_writable(flag, path.parent().unwrap_or(Path::new(""))),
    }
}

/// Refuses a folder `dir` (or, where it does not exist yet, its nearest existing ancestor, where
/// it would be created) in which no file can be created: a probe file is created there and
/// removed. A run whose output cannot be written is refused before it runs, not after.
///
/// # Errors
/// [`Error::InvalidField`] naming `flag`, the folder and the system's reason.
pub fn require_writable(flag: &str, dir: &Path) -> Result<()> {
    let mut at = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    while std::fs::metadata(at).is_err() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => {
                at = Path::new(".");
                break;
            }
        }
    }
    let probe = at.join(format!(".fedbounds-probe-{}", unique_suffix()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Error::field(flag, format!("no file can be created in `{}`: {e}", at.display()), "a path in a folder this user can write")),
    }
}

/// Serializes to pretty JSON with a trailing newline.
pub fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value).map(|s| s + "\n").map_err(|e| Error::serialization("report", e))
}

/// The command that reproduces one claim on one scenario.
pub fn reproduce_command(claim: &str, scenario: &str) -> String {
    format!("cargo run --release -- check --claim '{claim}' --scenario '{scenario}'")
}

/// A CSV field (RFC 4180), quoted when it holds a comma, a quote or a line break, its quotes
/// doubled; any other text as it is.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number, or `-` when absent.
pub fn opt_num(x: Option<f64>) -> String {
    x.map(fmt_num).unwrap_or_else(|| "-".into())
}

/// One line describing an evaluation: verdict, slack and deciding checkpoint, or failed checks.
pub fn describe(e: &Evaluation) -> String {
    match e.verdict {
        VerdictKind::NotApplicable => {
            // Outside the claim's setting (e.g. m < n for a full-participation claim): say only that.
            let scope: Vec<&ConditionCheck> = e.checks.iter().filter(|c| c.kind == ConditionKind::Scope && !c.holds).collect();
            if scope.is_empty() {
                e.failed.join("; ")
            } else {
                format!("outside the claim's setting: {}", scope.iter().map(|c| c.to_string()).collect::<Vec<_>>().join("; "))
            }
        }
        _ => {
            let line = match &e.decisive {
                Some(p) => format!(
                    "T'={}: estimate {} [{}, {}] vs bound {}",
                    p.rounds,
                    fmt_num(p.estimate.mean),
                    fmt_num(p.estimate.lower),
                    fmt_num(p.estimate.upper),
                    opt_num(p.bound)
                ),
                None => String::new(),
            };
            // A numerical failure is said in the line itself, never left as a bare NaN.
            match e.notes.iter().find(|n| n.starts_with(crate::verdict::NUMERICAL_NOTE)) {
                Some(n) => format!("{line}; {n}"),
                None => line,
            }
        }
    }
}

/// A Markdown table: the header row (its cells joined by ` | `), its rule, then one row per entry
/// of `rows`.
pub fn markdown_table<R: AsRef<[String]>>(header: &str, rows: impl IntoIterator<Item = R>) -> String {
    let mut s = format!("| {header} |\n|{}\n", "---|".repeat(header.split(" | ").count()));
    for row in rows {
        s.push_str(&format!("| {} |\n", row.as_ref().join(" | ")));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn write_atomic_replaces_a_regular_file_but_never_a_fifo_or_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.json");
        std::fs::write(&file, "old").unwrap();
        super::write_atomic(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new", "a regular file is replaced");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let err = super::write_atomic(&fifo, b"x").unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("not a regular file"), "{err}");
        use std::os::unix::fs::FileTypeExt as _;
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still there");
        let err = super::require_file_target("--out", dir.path()).unwrap_err();
        assert!(err.to_string().contains("--out"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no temporary file left beside them");
    }

    #[test]
    fn markdown_table_has_a_rule_as_wide_as_its_header() {
        let t = super::markdown_table("a | b", [vec!["1".to_string(), "2".to_string()]]);
        assert_eq!(t, "| a | b |\n|---|---|\n| 1 | 2 |\n");
        // Negative control: three columns give a wider rule.
        assert!(super::markdown_table("a | b | c", Vec::<Vec<String>>::new()).contains("|---|---|---|"));
    }
}
