//! The sweep's report: every scenario's record, read back from the record files of one or more
//! output folders (one per share, or one shared by all), as JSON with a schema version and as CSV.
//! The report depends only on the sweep and the records, so the shares of a sweep merge to the
//! bytes a single run writes.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::report::csv_field as field;
use crate::report::{to_json, write_atomic, ReportMeta};
use crate::verdict::VerdictKind;

use super::plan::Plan;
use super::record::{Record, Status};
use super::run::read_record;
use super::spec::{Axis, Design};

/// Version of the JSON report's layout; raised whenever a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// Counts over a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Totals {
    /// Scenarios.
    pub scenarios: usize,
    /// Checked by their family.
    pub checked: usize,
    /// Refused as bad input.
    pub bad_input: usize,
    /// Numerical or internal failures.
    pub failed: usize,
    /// Verdict rows.
    pub rows: usize,
    /// Rows that hold.
    pub holds: usize,
    /// Rows violated.
    pub violated: usize,
    /// Rows inconclusive.
    pub inconclusive: usize,
    /// Rows not applicable.
    pub not_applicable: usize,
    /// Rows whose verdict is not the one the scenario's `expected` asks for.
    pub mismatches: usize,
}

impl Totals {
    /// Counts `records`.
    pub fn of(records: &[Record]) -> Self {
        let mut t = Totals { scenarios: records.len(), ..Default::default() };
        for r in records {
            match r.status {
                Status::Checked => t.checked += 1,
                Status::BadInput => t.bad_input += 1,
                Status::Failed => t.failed += 1,
            }
            for row in &r.rows {
                t.rows += 1;
                match row.verdict {
                    VerdictKind::Holds => t.holds += 1,
                    VerdictKind::Violated => t.violated += 1,
                    VerdictKind::Inconclusive => t.inconclusive += 1,
                    VerdictKind::NotApplicable => t.not_applicable += 1,
                }
                if !row.matches {
                    t.mismatches += 1;
                }
            }
        }
        t
    }
}

/// The sweep as the report describes it.
#[derive(Serialize)]
struct Header<'a> {
    name: &'a str,
    family: &'static str,
    card: &'a str,
    design: Design,
    samples: Option<usize>,
    seed: Option<u64>,
    claims: &'a [String],
    axes: &'a [Axis],
    scenarios: usize,
    hash: &'a str,
}

#[derive(Serialize)]
struct Report<'a> {
    schema_version: u32,
    meta: ReportMeta,
    sweep: Header<'a>,
    totals: Totals,
    scenarios: &'a [Record],
}

/// Every record of the sweep, in index order, from the folders of `dirs` that hold it with the
/// right inputs (a scenario may be in several: shares written to one folder and copied).
///
/// # Errors
/// [`Error::InvalidField`] naming a folder that does not exist, a scenario whose records in two
/// folders differ (neither may be taken over the other), or how many scenarios have no record,
/// and the first few.
pub fn collect(plan: &Plan, dirs: &[PathBuf]) -> Result<Vec<Record>> {
    if let Some(absent) = dirs.iter().find(|d| !d.is_dir()) {
        return Err(Error::field("merge", format!("`{}` is not a folder", absent.display()), "the folders the shares were written to"));
    }
    let mut records = Vec::with_capacity(plan.len);
    let mut missing = Vec::new();
    for j in 0..plan.len {
        let point = plan.point(j)?;
        let inputs = plan.inputs_hash(&point);
        let mut found = dirs.iter().filter_map(|d| read_record(d, &point, &inputs).map(|r| (d, r)));
        let Some((first_dir, first)) = found.next() else {
            missing.push(point.id);
            continue;
        };
        if let Some((other_dir, _)) = found.find(|(_, r)| *r != first) {
            return Err(Error::field(
                "merge",
                format!("scenario {} has differing records in {} and {}", point.id, first_dir.display(), other_dir.display()),
                "one result per scenario (the same inputs give the same bytes: one of the two was changed or written by another version)",
            ));
        }
        records.push(first);
    }
    if !missing.is_empty() {
        let first: Vec<&str> = missing.iter().take(5).map(String::as_str).collect();
        let folders: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(Error::field(
            "merge",
            format!("{} of {} scenarios have no current result under {} (first: {})", missing.len(), plan.len, folders.join(", "), first.join(", ")),
            "the results of every share of the sweep (run the missing --shard i/N, then merge)",
        ));
    }
    Ok(records)
}

/// The JSON report.
///
/// # Errors
/// Only if serialization fails.
pub fn json(plan: &Plan, records: &[Record]) -> Result<String> {
    let s = &plan.sweep;
    let report = Report {
        schema_version: SCHEMA_VERSION,
        meta: ReportMeta::new(format!("cargo run --release -- sweep <file of sweep `{}`>", s.name)),
        sweep: Header {
            name: &s.name,
            family: plan.family.id(),
            card: &s.card,
            design: s.design,
            samples: s.samples,
            seed: s.seed,
            claims: &s.claims,
            axes: &s.axes,
            scenarios: plan.len,
            hash: &plan.hash,
        },
        totals: Totals::of(records),
        scenarios: records,
    };
    to_json(&report)
}

/// A JSON value as a CSV cell: strings bare, `null` empty, everything else as compact JSON.
fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => field(s),
        other => field(&other.to_string()),
    }
}

/// The scalar leaves of a constants object, by dotted path (arrays are left to the JSON).
fn leaves(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, serde_json::Value)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                leaves(&p, x, out);
            }
        }
        serde_json::Value::Array(_) => {}
        x if !prefix.is_empty() => out.push((prefix.to_string(), x.clone())),
        _ => {}
    }
}

fn num<T: std::fmt::Display>(x: Option<T>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// The CSV report: one line per scenario and claim row (one line with the error for a scenario
/// refused or failed). Columns: `index`, `id`, `param.<key>` per axis, `status`, `const.<name>`
/// per scalar constant any scenario reports, then the row's claim, reading, constants source,
/// verdict, expected, matches, slack, checkpoint, estimate, lower, upper, bound and detail.
pub fn csv(plan: &Plan, records: &[Record]) -> String {
    let mut names = BTreeSet::new();
    let per: Vec<Vec<(String, serde_json::Value)>> = records
        .iter()
        .map(|r| {
            let mut l = Vec::new();
            leaves("", &r.constants, &mut l);
            names.extend(l.iter().map(|(k, _)| k.clone()));
            l
        })
        .collect();
    let mut s = String::from("index,id");
    for a in &plan.sweep.axes {
        let _ = write!(s, ",{}", field(&format!("param.{}", a.key)));
    }
    s.push_str(",status");
    for n in &names {
        let _ = write!(s, ",{}", field(&format!("const.{n}")));
    }
    s.push_str(",claim,reading,constants,verdict,expected,matches,slack,checkpoint,estimate,lower,upper,bound,detail\n");
    for (r, consts) in records.iter().zip(&per) {
        let mut prefix = format!("{},{}", r.index, field(&r.id));
        for p in &r.parameters {
            let _ = write!(prefix, ",{}", cell(&p.value));
        }
        let status = match r.status {
            Status::Checked => "checked",
            Status::BadInput => "bad-input",
            Status::Failed => "failed",
        };
        let _ = write!(prefix, ",{status}");
        for n in &names {
            let v = consts.iter().find(|(k, _)| k == n).map(|(_, v)| cell(v)).unwrap_or_default();
            let _ = write!(prefix, ",{v}");
        }
        if r.rows.is_empty() {
            let _ = writeln!(s, "{prefix},,,,,,,,,,,,,{}", field(r.error.as_deref().unwrap_or("")));
        }
        for row in &r.rows {
            let _ = writeln!(
                s,
                "{prefix},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                field(&row.claim),
                field(&row.reading),
                field(row.constants.as_str()),
                row.verdict,
                num(row.expected),
                row.matches,
                num(row.slack),
                num(row.checkpoint),
                num(row.estimate),
                num(row.lower),
                num(row.upper),
                num(row.bound),
                field(&row.detail),
            );
        }
    }
    s
}

/// Collects the records of `dirs` and writes `sweep.json` and `sweep.csv` under `out`, each
/// atomically.
///
/// # Errors
/// As [`collect`]; [`Error::Io`] naming the file.
pub fn write_report(plan: &Plan, dirs: &[PathBuf], out: &Path) -> Result<Totals> {
    let records = collect(plan, dirs)?;
    write_atomic(&out.join("sweep.json"), json(plan, &records)?.as_bytes())?;
    write_atomic(&out.join("sweep.csv"), csv(plan, &records).as_bytes())?;
    Ok(Totals::of(&records))
}
