//! The adversarial search's report: per claim `search/<ID>.json` (worst ratio, the instance, the
//! step-multiple trials, the whole trace), `search/<ID>.toml` (the worst instance as a scenario
//! file that `fedbounds run` replays exactly), `search/<ID>.png` (the trace), and a table.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::family::ReportFile;

use crate::error::{Error, Result};
use crate::families::ccyw::claims::fmt_num;
use crate::families::ccyw::search::SearchResult;

/// The worst instance of a search as a scenario file (TOML), with a header saying how to replay it.
///
/// # Errors
/// [`Error::Serialization`] if the scenario cannot be serialized.
pub fn scenario_file(r: &SearchResult) -> Result<Option<String>> {
    let Some(s) = &r.scenario else { return Ok(None) };
    let body = toml::to_string(s).map_err(|e| Error::serialization("scenario", e))?;
    let lemma = if crate::families::ccyw::claims::lemma_by_id(r.claim).is_some() {
        format!(
            "# A lemma: observed / bound is max_t mean lhs_t / mean rhs_t over the file's {} seeded replicates (an estimate); \
             `run` prints the lemma check's verdict there.\n",
            s.replicates
        )
    } else {
        String::new()
    };
    // `run` compares the unscaled bound: a ratio found against a scaled one says so.
    let scaled = if r.options.bound_scale == 1.0 {
        String::new()
    } else {
        format!(
            "# The ratio is against the bound scaled by --bound-scale {:?}; `run` compares the unscaled bound (its ratio is {:?} times this one).\n",
            r.options.bound_scale, r.options.bound_scale
        )
    };
    Ok(Some(format!(
        "# Worst admissible instance found for {} (observed / bound = {}), search seed {}, budget {}.\n{lemma}{scaled}\
         # Replay: cargo run --release -- run <this file>\n\n{body}",
        r.claim, r.worst_ratio, r.options.seed, r.options.budget,
    )))
}

/// Writes the search files under `out/search` and returns their paths.
///
/// # Errors
/// [`Error::Serialization`] or [`Error::Figure`] when a file cannot be rendered.
pub fn search_files(results: &[SearchResult], meta: &super::ReportMeta, plots: bool) -> Result<Vec<ReportFile>> {
    let dir = PathBuf::from("search");
    let mut files = Vec::new();
    for r in results {
        let json = super::to_json(&serde_json::json!({ "meta": meta, "coordinates": crate::families::ccyw::search::COORDINATES, "result": r }))?;
        files.push(ReportFile { path: dir.join(format!("{}.json", r.claim)), bytes: json.into_bytes() });
        if let Some(text) = scenario_file(r)? {
            files.push(ReportFile { path: dir.join(format!("{}.toml", r.claim)), bytes: text.into_bytes() });
        }
        if plots {
            files.push(ReportFile { path: dir.join(format!("{}.png", r.claim)), bytes: super::plot::search_figure(r).png()? });
        }
    }
    files.push(ReportFile { path: dir.join("search.csv"), bytes: search_csv(results).into_bytes() });
    Ok(files)
}

/// The six step multiples of a result, in table order: on the worst instance, where the bound
/// stops holding and where the metric diverges; over any instance, for gamma and then for eta,
/// where no counterexample was found and where one was. Outer `None`: not measured; inner `None`:
/// not reached up to [`crate::families::ccyw::search::MAX_GAMMA_MULTIPLE`].
pub fn step_multiples(r: &SearchResult) -> [Option<Option<f64>>; 6] {
    let c = r.conservativeness.as_ref();
    let (g, e) = (r.room.as_ref(), r.eta_room.as_ref());
    [
        c.map(|c| c.bound_holds_up_to),
        c.map(|c| c.diverges_from),
        g.map(|m| Some(m.holds_up_to)),
        g.map(|m| m.broken_at),
        e.map(|m| Some(m.holds_up_to)),
        e.map(|m| m.broken_at),
    ]
}

/// [`step_multiples`] for people: `-` not measured, `> 1024` not reached.
pub fn step_multiple_cells(r: &SearchResult) -> [String; 6] {
    step_multiples(r).map(|x| match x {
        None => "-".into(),
        Some(None) => format!("> {}", crate::families::ccyw::search::MAX_GAMMA_MULTIPLE),
        Some(Some(v)) => fmt_num(v),
    })
}

fn search_csv(results: &[SearchResult]) -> String {
    let mut s = String::from(
        "claim,verdict,worst_ratio,evaluations,not_applicable,bound_holds_up_to_gamma_multiple,diverges_from_gamma_multiple,any_instance_holds_up_to,any_instance_broken_at,eta_divisor_holds_up_to,eta_divisor_broken_at,instance\n",
    );
    for r in results {
        let multiples: Vec<String> = step_multiples(r).iter().map(|x| x.flatten().map(|v| v.to_string()).unwrap_or_default()).collect();
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{}",
            r.claim,
            r.verdict,
            r.worst_ratio,
            r.trace.len(),
            r.not_applicable,
            multiples.join(","),
            r.scenario.as_ref().map(|_| format!("search/{}.toml", r.claim)).unwrap_or_default(),
        );
    }
    s
}

/// The search's section of `SUMMARY.md`.
pub fn search_markdown(results: &[SearchResult]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## Adversarial search: worst admissible instance per claim\n");
    let _ = writeln!(
        s,
        "Largest observed / bound over admissible quadratic instances and steps (exact expectations; \
         seeded random restarts, then coordinate refinement; `fedbounds search --claim ID --budget N`). \
         A ratio above 1 is a counterexample. The gamma multiples say how far gamma can grow past its \
         condition (or prescribed value): on the worst instance, before the printed bound fails and \
         before the expected metric diverges (growth by {} within {} rounds); over any instance, the \
         largest multiple 2^e (e = 1..10, a search of {} evaluations each; e = 0 is the search above) \
         with no counterexample and the smallest with one. The eta columns do the same for the \
         outer-step conditions: eta_u and eta_v divided by 2^e at fixed gamma.\n\n\
         The proofs' lemmas (CCYW-L*) are searched the same way, their steps inside the lemma's own \
         conditions: observed / bound is max_t mean lhs_t / mean rhs_t over the instance's seeded \
         replicates (an estimate), and the verdict is the lemma check's on the worst instance \
         (violated only where the interval of lhs - rhs lies above 0). A lemma's gamma and eta \
         columns are measured only where it bounds those steps (`-`: no such condition).\n",
        fmt_num(crate::families::ccyw::search::DIVERGENCE_GROWTH),
        crate::families::ccyw::search::DIVERGENCE_ROUNDS,
        crate::families::ccyw::search::ROOM_BUDGET
    );
    let _ = writeln!(
        s,
        "| claim | counterexample | worst observed/bound | evaluations (not applicable) | worst instance: bound holds up to gamma x | worst instance: diverges from gamma x | any instance: holds up to gamma x | any instance: broken at gamma x | any instance: holds down to eta / | any instance: broken at eta / | instance |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|");
    for r in results {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} ({}) | {} | {} |",
            r.claim,
            crate::search::counterexample_text(r.verdict),
            fmt_num(r.worst_ratio),
            r.trace.len(),
            r.not_applicable,
            step_multiple_cells(r).join(" | "),
            r.scenario.as_ref().map(|_| format!("`search/{}.toml`", r.claim)).unwrap_or_else(|| "-".into()),
        );
    }
    s.push_str(&crate::search::space::not_searched_note(&crate::families::ccyw::search::not_searched()));
    s
}
