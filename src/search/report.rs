//! What a search writes: per claim `search/<ID>.json` (the result with its trace) and
//! `search/<ID>.toml` (a card that replays the worst candidate), a Markdown table, a terminal
//! table, and the lines of `search.csv` (one per claim and step-size condition, for every family).

use std::fmt::Write as _;

use serde::Serialize;

pub use super::line::{search_csv, SearchLine};
use super::space::{ClaimSearch, Room};
use crate::error::{Error, Result};
use crate::family::{FamilyReport, ReportFile};
use crate::report::{markdown_table, ReportMeta};
use crate::verdict::{ConstantsSource, VerdictKind};

/// The file stem of a search: the claim id, with `@source` for a source other than the exact one.
fn stem(s: &ClaimSearch) -> String {
    match s.constants {
        ConstantsSource::Exact => s.claim.to_string(),
        other => format!("{}@{other}", s.claim),
    }
}

/// `holds to 4x, breaks at 8x`; `holds to 1024x, no break up to 1024x`; `holds to 2x, stopped
/// at 4x: <why>`.
fn room_cell(room: Option<&Room>) -> String {
    let Some(r) = room else { return "-".into() };
    let up = r.holds_up_to.map_or("never holds".to_string(), |c| format!("holds to {c}x"));
    match (r.breaks_at, &r.stopped) {
        (Some(c), _) => format!("{up}, breaks at {c}x"),
        (None, Some(why)) => format!("{up}, stopped {why}"),
        (None, None) => format!("{up}, no break up to {}x", r.tried.last().map_or(1.0, |t| t.0)),
    }
}

/// The lines of `search.csv` of one search.
pub fn lines(s: &ClaimSearch) -> Vec<SearchLine> {
    let line = |condition: String, worst_instance, any_instance| SearchLine {
        family: s.family,
        claim: s.claim,
        constants: s.constants,
        verdict: s.verdict,
        worst_ratio: s.worst_ratio,
        evaluations: s.trace.len(),
        applicable: s.applicable,
        condition,
        worst_instance,
        any_instance,
        replay: if s.replay.is_some() { format!("search/{}.toml", stem(s)) } else { String::new() },
    };
    if s.step_room.is_empty() {
        return vec![line(String::new(), (None, None), (None, None))];
    }
    let pair = |r: &Room| (r.holds_up_to, r.breaks_at);
    s.step_room.iter().map(|r| line(r.condition.clone(), pair(&r.worst_instance), r.any_instance.as_ref().map_or((None, None), pair))).collect()
}

#[derive(Serialize)]
struct SearchJson<'a> {
    meta: &'a ReportMeta,
    search: &'a ClaimSearch,
}

/// A family's search report: files, its section of `SUMMARY.md`, a terminal table, the lines of
/// `search.csv`, and a finding for each counterexample (with its replay).
///
/// # Errors
/// [`Error::Serialization`] when a result cannot be written as JSON.
pub fn family_report(title: &str, searches: &[ClaimSearch], meta: &ReportMeta) -> Result<FamilyReport> {
    let mut files = Vec::new();
    for s in searches {
        let json = serde_json::to_string_pretty(&SearchJson { meta, search: s }).map_err(|e| Error::serialization(format!("search/{}.json", stem(s)), e))?;
        files.push(ReportFile { path: format!("search/{}.json", stem(s)).into(), bytes: format!("{json}\n").into_bytes() });
        if let Some(card) = &s.replay {
            files.push(ReportFile { path: format!("search/{}.toml", stem(s)).into(), bytes: card.clone().into_bytes() });
        }
    }
    let rows: Vec<Vec<String>> = searches.iter().flat_map(table_rows).collect();
    let header = "claim | constants | counterexample | worst observed/bound | applicable | step condition | on the worst instance | on any instance";
    let table = markdown_table(header, &rows);
    let summary_markdown = format!("### Adversarial search: {title}\n\n{table}\n");
    let mut terminal = format!("\nAdversarial search: {title}\n");
    for r in &rows {
        let _ = writeln!(terminal, "  {:<28} {:<9} {:<20} {:>10}", r[0], r[1], r[2], r[3]);
        let detail = if r[5].is_empty() { r[6].clone() } else { format!("{}: worst instance {}; any instance {}", r[5], r[6], r[7]) };
        if !detail.is_empty() {
            terminal.push_str(&crate::summary::wrap(&detail, 6, 8));
        }
    }
    let mismatches = searches
        .iter()
        .filter(|s| !s.matches_expected())
        .map(|s| {
            let (found, expected) = (super::counterexample_text(s.verdict), s.expected.unwrap_or(VerdictKind::Holds));
            format!("{} (search, {}: counterexample {found}, the card expects {expected}): search/{}.toml", s.claim, s.constants, stem(s))
        })
        .collect();
    Ok(FamilyReport { summary_markdown, files, terminal, mismatches, searches: searches.iter().flat_map(lines).collect(), ..Default::default() })
}

fn table_rows(s: &ClaimSearch) -> Vec<Vec<String>> {
    let ratio = s.worst_ratio.map_or("-".to_string(), |r| format!("{r:.6}"));
    let applicable = format!("{}/{}", s.applicable, s.trace.len());
    let found = super::counterexample_text(s.verdict);
    let verdict = match s.expected {
        Some(e) if e == s.verdict && e == VerdictKind::Violated => format!("{found} (expected)"),
        Some(e) if e != s.verdict => format!("{found} (card: {})", super::counterexample_text(e)),
        _ => found.to_string(),
    };
    let head = [s.claim.to_string(), s.constants.to_string(), verdict, ratio, applicable];
    if s.step_room.is_empty() {
        let why = s.not_applicable.as_ref().filter(|_| s.applicable == 0).map_or(String::new(), |(r, n)| format!("({n}x) {r}"));
        return vec![head.into_iter().chain([String::new(), why, String::new()]).collect()];
    }
    s.step_room
        .iter()
        .map(|r| head.iter().cloned().chain([r.condition.clone(), room_cell(Some(&r.worst_instance)), room_cell(r.any_instance.as_ref())]).collect())
        .collect()
}
