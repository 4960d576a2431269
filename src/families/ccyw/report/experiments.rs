//! The mirrored experiments' report: `experiments/experiments.json` (statements with the numbers
//! behind them, sweeps with thinned curves), `experiments/statements.csv`, one PNG per sweep.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::family::ReportFile;

use serde::Serialize;

use crate::error::Result;
use crate::families::ccyw::claims::fmt_num;
use crate::families::ccyw::experiments::{Curve, Experiments, Statement, INDEPENDENCE_TOLERANCE};

#[derive(Serialize)]
struct CurveEntry<'a> {
    #[serde(flatten)]
    curve: &'a Curve,
    /// `(t, E(G_u^t + hat G_v^t))` at rounds 0, 1, 2, 5, 10, ... and every 250th.
    points: Vec<(usize, f64)>,
}

#[derive(Serialize)]
struct SweepEntry<'a> {
    id: &'a str,
    title: &'a str,
    figure: String,
    curves: Vec<CurveEntry<'a>>,
}

#[derive(Serialize)]
struct ExperimentsReport<'a> {
    meta: &'a super::ReportMeta,
    card: &'static str,
    independence_tolerance: f64,
    statements: &'a [Statement],
    sweeps: Vec<SweepEntry<'a>>,
}

/// The experiments' files under `experiments/`.
///
/// # Errors
/// [`crate::error::Error::Serialization`] or [`crate::error::Error::Figure`] when a file cannot be
/// rendered.
pub fn experiments_files(e: &Experiments, meta: &super::ReportMeta, plots: bool) -> Result<Vec<ReportFile>> {
    let dir = PathBuf::from("experiments");
    let mut files = Vec::new();
    let report = ExperimentsReport {
        meta,
        card: crate::families::ccyw::experiments::EXPERIMENTS_CARD.0,
        independence_tolerance: INDEPENDENCE_TOLERANCE,
        statements: &e.statements,
        sweeps: e
            .sweeps
            .iter()
            .map(|s| SweepEntry {
                id: s.id,
                title: s.title,
                figure: format!("{}.png", s.id),
                curves: s.curves.iter().map(|c| CurveEntry { curve: c, points: c.thinned() }).collect(),
            })
            .collect(),
    };
    files.push(ReportFile { path: dir.join("experiments.json"), bytes: super::to_json(&report)?.into_bytes() });
    files.push(ReportFile { path: dir.join("statements.csv"), bytes: statements_csv(&e.statements).into_bytes() });
    if plots {
        for s in &e.sweeps {
            files.push(ReportFile { path: dir.join(format!("{}.png", s.id)), bytes: super::plot::sweep_figure(s).png()? });
        }
    }
    Ok(files)
}

fn statements_csv(statements: &[Statement]) -> String {
    let mut s = String::from("statement,verdict,expected,evidence\n");
    for st in statements {
        let evidence: Vec<String> = st.evidence.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let _ =
            writeln!(s, "{},{},{},\"{}\"", st.id, st.verdict, st.expected.map(|v| v.to_string()).unwrap_or_default(), evidence.join("; ").replace('"', "\"\""));
    }
    s
}

/// The experiments' section of `SUMMARY.md`.
pub fn experiments_markdown(e: &Experiments) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## The paper's figures mirrored (section 5)\n");
    let _ = writeln!(
        s,
        "Exact expected curves and exact steady states on quadratics (card `{}`; figures and numbers \
         under `experiments/`). Independence means a relative spread of steady states <= {}.\n",
        crate::families::ccyw::experiments::EXPERIMENTS_CARD.0,
        INDEPENDENCE_TOLERANCE
    );
    let _ = writeln!(s, "| statement | verdict | expected | claim | numbers |");
    let _ = writeln!(s, "|---|---|---|---|---|");
    for st in &e.statements {
        let mark = if st.matches_expected() { "" } else { " **MISMATCH**" };
        let numbers: Vec<String> = st.evidence.iter().map(|(k, v)| format!("{k} {}", fmt_num(*v))).collect();
        let _ = writeln!(
            s,
            "| {} | {}{} | {} | {} | {} |",
            st.id,
            st.verdict,
            mark,
            st.expected.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
            st.statement.replace('|', "\\|"),
            numbers.join("; ").replace('|', "\\|"),
        );
    }
    s
}
