//! What a sweep keeps of one scenario: its parameters, its family's constants, and one row per
//! claim with the estimate, bound, slack and verdict. One JSON file per scenario; the report is
//! built from these files alone, so a merged report cannot depend on which job ran what.

use serde::{Deserialize, Serialize};

use crate::family::VerdictRow;
use crate::report::describe;
use crate::verdict::{ConstantsSource, VerdictKind};

/// Whether a scenario was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Its family checked it: see the rows.
    Checked,
    /// Its family refused it (a value out of range, e.g. `m > n` at a corner of the grid).
    BadInput,
    /// A numerical or internal failure; `error` says what and where.
    Failed,
}

/// An axis's value in one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    /// The dotted key.
    pub key: String,
    /// Its value.
    pub value: serde_json::Value,
}

/// One claim's verdict on the scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Claim id.
    pub claim: String,
    /// The reading checked.
    pub reading: String,
    /// Which constants the evaluation used (stored as `exact`, `empirical`, `estimated`,
    /// `calibrated`, as every earlier record has it).
    pub constants: ConstantsSource,
    /// What an empirical constant was.
    pub label: Option<String>,
    /// The verdict.
    pub verdict: VerdictKind,
    /// The verdict the scenario's `expected` table asks for, if any.
    pub expected: Option<VerdictKind>,
    /// Whether the verdict is the expected one (true when none is expected).
    pub matches: bool,
    /// Smallest bound / estimate.
    pub slack: Option<f64>,
    /// The deciding checkpoint `T'`.
    pub checkpoint: Option<usize>,
    /// The estimate there (mean, lower and upper confidence limits).
    pub estimate: Option<f64>,
    /// Lower confidence limit.
    pub lower: Option<f64>,
    /// Upper confidence limit.
    pub upper: Option<f64>,
    /// The bound there.
    pub bound: Option<f64>,
    /// One line: the deciding checkpoint, or why the claim is not applicable.
    pub detail: String,
    /// Binding conditions that fail.
    pub failed: Vec<String>,
    /// Implicit conditions that fail and numerical notes.
    pub notes: Vec<String>,
}

/// A number, or `None` with a note naming it when it is not finite (never a silent NaN).
fn finite(x: Option<f64>, what: &str, at: Option<usize>, notes: &mut Vec<String>) -> Option<f64> {
    match x {
        Some(v) if !v.is_finite() => {
            let at = at.map(|t| format!(" at T'={t}")).unwrap_or_default();
            notes.push(format!("numerical failure: {what} is {v}{at}"));
            None
        }
        x => x,
    }
}

impl Row {
    /// The row of a family's verdict.
    pub fn of(r: &VerdictRow) -> Self {
        let e = &r.evaluation;
        let p = e.decisive.as_ref();
        let at = p.map(|p| p.rounds);
        let mut notes = e.notes.clone();
        let estimate = finite(p.map(|p| p.estimate.mean), "the estimate", at, &mut notes);
        let lower = finite(p.map(|p| p.estimate.lower), "the lower limit", at, &mut notes);
        let upper = finite(p.map(|p| p.estimate.upper), "the upper limit", at, &mut notes);
        let bound = finite(p.and_then(|p| p.bound), "the bound", at, &mut notes);
        let slack = finite(e.slack, "the slack", at, &mut notes);
        notes.dedup();
        Row {
            claim: r.claim.to_string(),
            reading: r.reading.to_string(),
            constants: r.constants,
            label: r.label.clone(),
            verdict: e.verdict,
            expected: r.expected,
            matches: r.matches_expected(),
            slack,
            checkpoint: at,
            estimate,
            lower,
            upper,
            bound,
            detail: describe(e),
            failed: e.failed.clone(),
            notes,
        }
    }
}

/// One scenario's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// 0-based index in the sweep.
    pub index: usize,
    /// The scenario id.
    pub id: String,
    /// Hash of everything the result depends on (card, claims, estimator, the scenario table,
    /// crate version): a result is reused only when it matches.
    pub inputs: String,
    /// The axes' values.
    pub parameters: Vec<Parameter>,
    /// Checked, refused, or failed.
    pub status: Status,
    /// Why it was refused or failed, naming the field or the numerical step.
    pub error: Option<String>,
    /// The family's constants of the scenario (`null` when it reports none).
    pub constants: serde_json::Value,
    /// One row per claim and constants source.
    pub rows: Vec<Row>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as the sweep has always written it (`constants` a plain string in each row).
    fn stored(constants: &str) -> serde_json::Value {
        serde_json::json!({
            "index": 0, "id": "s-0", "inputs": "abc", "parameters": [{ "key": "algorithm.k", "value": 2 }],
            "status": "checked", "error": null, "constants": { "l": 1.0 },
            "rows": [{
                "claim": "T-1", "reading": "primary", "constants": constants, "label": null, "verdict": "holds",
                "expected": null, "matches": true, "slack": 2.0, "checkpoint": 10, "estimate": 0.5, "lower": 0.5,
                "upper": 0.5, "bound": 1.0, "detail": "", "failed": [], "notes": []
            }]
        })
    }

    #[test]
    fn stored_records_read_back_and_write_the_same_fields() {
        for (name, source) in [
            ("exact", ConstantsSource::Exact),
            ("empirical", ConstantsSource::Empirical),
            ("estimated", ConstantsSource::Estimated),
            ("calibrated", ConstantsSource::Calibrated),
        ] {
            let text = serde_json::to_string_pretty(&stored(name)).unwrap();
            let record: Record = serde_json::from_str(&text).unwrap();
            assert_eq!(record.rows[0].constants, source);
            assert_eq!(serde_json::to_value(&record).unwrap(), stored(name), "{name}");
        }
        // Negative control: a source the crate does not know is not read as another one.
        assert!(serde_json::from_value::<Record>(stored("fitted")).is_err());
    }
}
