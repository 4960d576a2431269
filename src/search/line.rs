//! One line of `search.csv`: what every family's search reports per claim and step condition
//! (kept apart from the search itself, so that a family's report can carry the lines).

use std::fmt::Write as _;

use serde::Serialize;

use crate::verdict::{ConstantsSource, VerdictKind};

/// One line of `search.csv`: a claim's worst case and the room of one of its step-size
/// conditions (the condition columns empty when it has none).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchLine {
    /// Family id.
    pub family: &'static str,
    /// Claim id.
    pub claim: &'static str,
    /// Constants the objective read.
    pub constants: ConstantsSource,
    /// Holds, violated or not applicable.
    pub verdict: VerdictKind,
    /// Largest `observed / bound` found.
    pub worst_ratio: Option<f64>,
    /// Objective evaluations of the worst-case search.
    pub evaluations: usize,
    /// Of which applicable.
    pub applicable: usize,
    /// The step-size condition (empty when none).
    pub condition: String,
    /// On the worst instance: largest multiple of the admitted step that still holds, smallest
    /// that breaks.
    pub worst_instance: (Option<f64>, Option<f64>),
    /// Over any instance: the same.
    pub any_instance: (Option<f64>, Option<f64>),
    /// The replay file, relative to the report folder.
    pub replay: String,
}

impl SearchLine {
    /// The header of `search.csv`.
    pub const HEADER: &'static str = "family,claim,constants,verdict,worst_ratio,evaluations,applicable,condition,\
worst_instance_holds_up_to,worst_instance_breaks_at,any_instance_holds_up_to,any_instance_breaks_at,replay";

    /// The line as CSV (the condition quoted).
    pub fn csv(&self) -> String {
        let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        format!(
            "{},{},{},{},{},{},{},\"{}\",{},{},{},{},{}",
            self.family,
            self.claim,
            self.constants,
            self.verdict,
            num(self.worst_ratio),
            self.evaluations,
            self.applicable,
            self.condition.replace('"', "\"\""),
            num(self.worst_instance.0),
            num(self.worst_instance.1),
            num(self.any_instance.0),
            num(self.any_instance.1),
            self.replay
        )
    }
}

/// `search.csv` from every family's lines, in the order given.
pub fn search_csv<'a>(lines: impl IntoIterator<Item = &'a SearchLine>) -> String {
    let mut s = format!("{}\n", SearchLine::HEADER);
    for l in lines {
        let _ = writeln!(s, "{}", l.csv());
    }
    s
}
