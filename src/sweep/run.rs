//! Running a share of a sweep: each scenario is checked by its family and its record written to
//! `<out>/scenarios/<id>.json` as soon as it finishes (temporary file, then rename). A record
//! already there with the same inputs is kept, so an interrupted run continues where it stopped.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use crate::card::canonical_hash;
use crate::error::{Error, Result};
use crate::family::{CardText, CheckRequest, Progress, Silent};
use crate::report::{to_json, write_atomic, ReportMeta};

use super::plan::{Plan, Point};
use super::record::{Parameter, Record, Row, Status};
use super::spec::Shard;

/// What a share's run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShareSummary {
    /// Scenarios in the share.
    pub owned: usize,
    /// Checked now.
    pub ran: usize,
    /// Kept from an earlier run with the same inputs.
    pub reused: usize,
}

/// Where scenario `id`'s record lives under `out`.
pub fn record_path(out: &Path, id: &str) -> PathBuf {
    out.join("scenarios").join(format!("{id}.json"))
}

/// Point `point`'s record under `dir` when it exists, parses, has these inputs and is that
/// point's (its index, id and parameters: a record edited or copied under another name is not
/// taken for this point's).
pub fn read_record(dir: &Path, point: &Point, inputs: &str) -> Option<Record> {
    let text = crate::text_file::read_text(&record_path(dir, &point.id)).ok()?;
    serde_json::from_str::<Record>(&text).ok().filter(|r| r.inputs == inputs && r.index == point.index && r.id == point.id && r.parameters == parameters(point))
}

/// A point's axes' values as its record keeps them.
fn parameters(point: &Point) -> Vec<Parameter> {
    point.parameters.iter().map(|(k, v)| Parameter { key: k.clone(), value: serde_json::to_value(v).unwrap_or(serde_json::Value::Null) }).collect()
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "no message".into())
}

/// A parse error in the scenario a sweep appended to its card (`scenarios[appended]`) as the
/// user reads it: the path inside the scenario, without the line and column of a text the
/// sweep generated (the error's `what` names the sweep's values instead).
fn in_point(e: Error, appended: usize) -> Error {
    match e {
        Error::Parse { what, path, message, .. } if path.starts_with(&format!("scenarios[{appended}]")) => {
            let inner = path[format!("scenarios[{appended}]").len()..].trim_start_matches('.').to_string();
            Error::Parse { what, place: String::new(), path: inner, message }
        }
        other => other,
    }
}

impl Plan {
    /// The hash of what scenario `point`'s result depends on.
    pub fn inputs_hash(&self, point: &Point) -> String {
        canonical_hash(&(&self.card_hash, &self.sweep.claims, &self.sweep.estimator, &point.table, env!("CARGO_PKG_VERSION")))
    }

    /// Checks one scenario through its family: the card with the scenario appended, only that
    /// scenario selected. Bad input and failures become the record's status, never a panic.
    pub fn check_point(&self, point: &Point) -> Record {
        let inputs = self.inputs_hash(point);
        let mut record = Record {
            index: point.index,
            id: point.id.clone(),
            inputs,
            parameters: parameters(point),
            status: Status::Checked,
            error: None,
            constants: serde_json::Value::Null,
            rows: Vec::new(),
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| self.check_rows(point)));
        match outcome {
            Ok(Ok((rows, constants))) => {
                record.rows = rows;
                record.constants = constants;
            }
            Ok(Err(e)) => {
                record.status = if e.is_bad_input() { Status::BadInput } else { Status::Failed };
                record.error = Some(e.to_string());
            }
            Err(payload) => {
                record.status = Status::Failed;
                record.error = Some(format!("internal error (a defect; please report it with this scenario): {}", panic_text(payload.as_ref())));
            }
        }
        record
    }

    fn check_rows(&self, point: &Point) -> Result<(Vec<Row>, serde_json::Value)> {
        let mut card = self.card.clone();
        let appended = match card.entry("scenarios").or_insert_with(|| toml::Value::Array(Vec::new())) {
            toml::Value::Array(a) => {
                a.push(toml::Value::Table(point.table.clone()));
                a.len() - 1
            }
            other => return Err(Error::field("card.scenarios", format!("a {}", other.type_str()), "an array of scenario tables")),
        };
        let values: Vec<String> = point.parameters.iter().map(|(key, value)| format!("{key} = {value}")).collect();
        // The scenario's id is said once, by `in_scenario` below.
        let what = format!("sweep `{}` at {}", self.sweep.name, values.join(", "));
        let text = toml::to_string(&card).map_err(|e| Error::parse(what.clone(), e).in_scenario(&point.id))?;
        let request = CheckRequest {
            claims: self.sweep.claims.clone(),
            scenarios: vec![point.id.clone()],
            card: Some(CardText { what: what.clone(), text }),
            threads: Some(1),
            bound_scale: None,
            estimator: self.sweep.estimator,
            full: false,
            plots: false,
            meta: ReportMeta::new("cargo run --release -- sweep"),
            max_work: None,
        };
        let report = self.family.check(&request, &Silent).map_err(|e| in_point(e, appended).in_scenario(&point.id))?;
        let rows = report.rows.iter().filter(|r| r.scenario == point.id).map(Row::of).collect();
        let scenario = toml::to_string(&point.table).map_err(|e| Error::parse(what.clone(), e).in_scenario(&point.id))?;
        let constants = self.family.scenario_constants(&scenario, &what).map_err(|e| e.in_scenario(&point.id))?;
        Ok((rows, constants))
    }

    /// Runs share `shard` into `out` on `threads` workers (rayon's default when `None`),
    /// skipping scenarios whose record is already there with the same inputs. Records do not
    /// depend on the number of workers.
    ///
    /// # Errors
    /// [`Error::Io`] when a record cannot be written; bad input for a point that cannot be made.
    pub fn run_share(&self, shard: Shard, out: &Path, threads: Option<usize>, progress: &dyn Progress) -> Result<ShareSummary> {
        let owned: Vec<usize> = (0..self.len).filter(|j| shard.owns(*j)).collect();
        // A share's folder exists even when it owns no scenario (more shares than scenarios), so
        // that the merge the run points to finds every share's folder.
        let records = out.join("scenarios");
        std::fs::create_dir_all(&records).map_err(|e| Error::Io { path: records.display().to_string(), source: e })?;
        let mut pending = Vec::new();
        for &j in &owned {
            let point = self.point(j)?;
            if read_record(out, &point, &self.inputs_hash(&point)).is_none() {
                pending.push(point);
            }
        }
        let summary = ShareSummary { owned: owned.len(), ran: pending.len(), reused: owned.len() - pending.len() };
        progress.start(pending.len(), &format!("scenarios of sweep {} (share {shard})", self.sweep.name));
        // Plain worker threads taking the next scenario in turn: a family runs its own thread
        // pool inside a check, and a rayon worker blocked on it would steal the next scenario on
        // the same stack, nesting without bound.
        let workers = threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).clamp(1, pending.len().max(1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let failure: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(point) = pending.get(k) else { break };
                    let record = self.check_point(point);
                    let written = to_json(&record).and_then(|json| write_atomic(&record_path(out, &point.id), json.as_bytes()));
                    if let Err(e) = written {
                        // Stop every worker: a record that cannot be written is lost work.
                        next.store(pending.len(), std::sync::atomic::Ordering::Relaxed);
                        if let Ok(mut slot) = failure.lock() {
                            slot.get_or_insert(e);
                        }
                        break;
                    }
                    progress.step();
                });
            }
        });
        if let Some(e) = failure.into_inner().ok().flatten() {
            return Err(e);
        }
        progress.finish();
        Ok(summary)
    }
}
