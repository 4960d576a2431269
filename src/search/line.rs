//! One line of `search.csv`: what every family's search reports per claim and step condition
//! (kept apart from the search itself, so that a family's report can carry the lines).

use std::fmt::Write as _;

use serde::Serialize;

use crate::report::csv_field;
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
            csv_field(self.family),
            csv_field(self.claim),
            csv_field(&self.constants.to_string()),
            self.verdict,
            num(self.worst_ratio),
            self.evaluations,
            self.applicable,
            self.condition.replace('"', "\"\""),
            num(self.worst_instance.0),
            num(self.worst_instance.1),
            num(self.any_instance.0),
            num(self.any_instance.1),
            csv_field(&self.replay)
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

/// What a claim line shows of a claim's search (terminal and `SUMMARY.md`, beside the default
/// scenarios' slack): the worst `observed / bound` found and, per step-size condition, the largest
/// multiple of the admitted step at which the bound held on the worst instance found and over any
/// instance found (`gamma 8x/32x`; `1024x+`: no break up to the last multiple tried; `none`: broken
/// at the admitted step; `-`: not measured).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchCell {
    /// `0.930354`, `inf`, or `-` when no candidate applied.
    pub worst: String,
    /// `gamma 8x/-, eta 2x/-`, empty without step conditions.
    pub room: String,
}

/// The last multiple a step room tries: `2^MAX_DOUBLINGS` of the search (`search::space`, which
/// this file does not import: a family's report carries these lines without the search).
pub const LAST_MULTIPLE: f64 = 1024.0;

/// A multiple as a claim line shows it: `8x`, `62.969x`, `1024x+` (no break up to the last one
/// tried), `none` (broken at the admitted step), `-` (not measured).
fn multiple((holds, breaks): (Option<f64>, Option<f64>)) -> String {
    match (holds, breaks) {
        (None, None) => "-".into(),
        (None, Some(_)) => "none".into(),
        (Some(c), b) => {
            let n = if c.fract() == 0.0 { format!("{c:.0}") } else { format!("{c:.3}").trim_end_matches('0').to_string() };
            let more = if b.is_none() && c >= LAST_MULTIPLE { "+" } else { "" };
            format!("{n}x{more}")
        }
    }
}

/// A condition's short name: its text before the first relation or comment (`gamma`, `eta_u,
/// eta_v`, `(14)/(143)`, `(a) eta`).
fn condition_name(condition: &str) -> &str {
    let cut = [" within", " <", " >", " =", " in ", " below", " on ", " ("].iter().filter_map(|p| condition.find(p)).min();
    condition[..cut.unwrap_or(condition.len())].trim()
}

impl SearchCell {
    /// The cell of `claim`'s search with constants `source` among `lines`; `None` without one.
    pub fn of(lines: &[SearchLine], claim: &str, source: ConstantsSource) -> Option<Self> {
        let of: Vec<&SearchLine> = lines.iter().filter(|l| l.claim == claim && l.constants == source).collect();
        let first = of.first()?;
        let worst = first.worst_ratio.map_or("-".to_string(), crate::claim::fmt_num);
        let rooms: Vec<String> = of
            .iter()
            .filter(|l| !l.condition.is_empty())
            .map(|l| format!("{} {}/{}", condition_name(&l.condition), multiple(l.worst_instance), multiple(l.any_instance)))
            .collect();
        Some(Self { worst, room: rooms.join(", ") })
    }

    /// `worst observed/bound 0.930354; step room (worst/any instance): gamma 8x/-, eta 2x/-`, or
    /// `no candidate applied` for the worst ratio.
    pub fn text(&self) -> String {
        let room = if self.room.is_empty() { String::new() } else { format!("; step room (worst/any instance): {}", self.room) };
        let worst = if self.worst == "-" { "no candidate applied".to_string() } else { format!("worst observed/bound {}", self.worst) };
        format!("{worst}{room}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(condition: &str, worst_instance: (Option<f64>, Option<f64>), any_instance: (Option<f64>, Option<f64>)) -> SearchLine {
        SearchLine {
            family: "test",
            claim: "T-1",
            constants: ConstantsSource::Exact,
            verdict: VerdictKind::Holds,
            worst_ratio: Some(0.25),
            evaluations: 10,
            applicable: 10,
            condition: condition.into(),
            worst_instance,
            any_instance,
            replay: String::new(),
        }
    }

    #[test]
    fn a_claim_line_shows_the_worst_ratio_and_each_conditions_room() {
        let lines = [
            line("gamma within its condition (or as prescribed)", (Some(62.96867914346164), Some(63.3)), (Some(32.0), Some(64.0))),
            line("eta_u, eta_v within their conditions (gamma fixed)", (None, None), (Some(1024.0), None)),
            line("(14)/(143) on K: K divided by c", (None, Some(1.0)), (None, None)),
        ];
        let cell = SearchCell::of(&lines, "T-1", ConstantsSource::Exact).expect("a cell");
        assert_eq!(cell.worst, "0.25");
        assert_eq!(cell.room, "gamma 62.969x/32x, eta_u, eta_v -/1024x+, (14)/(143) none/-");
        assert_eq!(cell.text(), format!("worst observed/bound 0.25; step room (worst/any instance): {}", cell.room));
        // Without conditions the room is left out; another claim or source has no cell.
        let plain = SearchCell::of(&[line("", (None, None), (None, None))], "T-1", ConstantsSource::Exact).unwrap();
        assert_eq!(plain.text(), "worst observed/bound 0.25");
        assert_eq!(SearchCell::of(&lines, "T-2", ConstantsSource::Exact), None);
        let none = SearchLine { worst_ratio: None, ..line("", (None, None), (None, None)) };
        assert_eq!(SearchCell::of(&[none], "T-1", ConstantsSource::Exact).unwrap().text(), "no candidate applied");
        assert_eq!(SearchCell::of(&lines, "T-1", ConstantsSource::Empirical), None);
        // A room that stopped short of the last multiple has no `+`.
        assert_eq!(multiple((Some(8.0), None)), "8x");
    }
}
