//! This family's figures, as data for the shared [`crate::report::panels`]: per claim, one panel
//! per scenario with the observed running average against the bound over rounds (log-log); per
//! sweep of the mirrored experiments, the exact expected metric per setting over rounds; per
//! search, the trace of observed / bound.

use crate::checker::RunOutcome;
use crate::families::ccyw::check::{ClaimResult, ScenarioRun};
use crate::families::ccyw::claims::fmt_num;
use crate::families::ccyw::experiments::Sweep;
use crate::families::ccyw::search::SearchResult;
use crate::report::panels::{colour, log_range, Axis, Figure, Layout, Panel, Series, BLUE, GREEN, ORANGE, RED};
use crate::verdict::{ConstantsSource, Evaluation, VerdictKind};

/// Lines of reasons a figure with no applicable panel lists, and characters per line.
const REASONS: (usize, usize) = (14, 110);

/// A round count as an integer (`12000`, not `1.2e4`).
fn rounds_label(v: &f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", *v as i64)
    } else {
        crate::report::panels::tick_label(*v)
    }
}

/// Whether an evaluation's observed series has a band to draw (a sampled estimate whose interval
/// has width somewhere; exact and deterministic estimates have none).
fn banded(e: &Evaluation) -> bool {
    e.series.iter().any(|p| p.estimate.upper > p.estimate.lower)
}

/// The claim's figure: a panel per scenario where the claim applies (and per empirical-`b^2`
/// evaluation that applies), each the observed running average (its confidence band where it
/// is sampled) and the bound over rounds `T`. The subtitle names a band only when one is drawn.
/// With no applicable panel, the figure lists each scenario's failed conditions.
pub fn claim_figure(id: &str, title: &str, rows: &[(&ScenarioRun, &ClaimResult)]) -> Figure {
    let evaluations: Vec<(&ScenarioRun, &Evaluation, bool)> = rows
        .iter()
        .flat_map(|(run, c)| {
            let empirical = run.result(c.claim, ConstantsSource::Empirical).map(|r| (*run, &r.evaluation, true));
            [Some((*run, &c.evaluation, false)), empirical].into_iter().flatten()
        })
        .filter(|(_, e, _)| e.verdict != VerdictKind::NotApplicable)
        .collect();
    let bands = evaluations.iter().filter(|(_, e, _)| banded(e)).count();
    let observed = match bands {
        0 => "observed running average (exact)",
        b if b == evaluations.len() => "observed running average (mean, with confidence band)",
        _ => "observed running average (exact, or mean with confidence band where sampled)",
    };
    let bound = if evaluations.iter().any(|(_, e, _)| e.series.iter().any(|p| p.bound.is_some())) { " vs the claim's bound" } else { "" };
    let reasons: Vec<String> =
        rows.iter().take(REASONS.0).map(|(r, c)| format!("{}: {}", r.scenario, c.evaluation.failed.join("; ")).chars().take(REASONS.1).collect()).collect();
    Figure {
        title: format!("{id}: {title}"),
        subtitle: format!("{observed}{bound}; log-log axes"),
        layout: Layout::grid(70),
        panels: evaluations.iter().map(|(run, e, empirical)| Some(claim_panel(run, e, *empirical))).collect(),
        empty_note: Some(format!("not applicable on any scenario of this run:\n{}", reasons.join("\n"))),
    }
}

/// One scenario's panel: the observed running average (blue, over its band when sampled) and the
/// bound (red; a single marker when the bound exists only at the horizon, its `gamma` depending on
/// `T`).
fn claim_panel(run: &ScenarioRun, e: &Evaluation, empirical: bool) -> Panel {
    let s = &e.series;
    let ys = s.iter().flat_map(|p| [p.estimate.mean, p.estimate.upper]).chain(s.iter().filter_map(|p| p.bound));
    let y = log_range(ys.filter(|v| v.is_finite() && *v > 0.0));
    let t_max = s.last().map(|p| p.rounds).unwrap_or(1).max(2) as f64;
    let verdict = match (e.verdict, e.slack) {
        (VerdictKind::Holds, Some(slack)) => format!("holds, slack {}", fmt_num(slack)),
        (v, _) => v.to_string(),
    };
    // A mean of 0 has no place on a log axis: the legend says so rather than draw it at the edge.
    let zero = if s.iter().any(|p| p.estimate.mean > 0.0) { "" } else { " 0 (off the log axis)" };
    let mut observed = Series::line(format!("observed{zero}"), BLUE, s.iter().map(|p| (p.rounds as f64, p.estimate.mean)).collect());
    if banded(e) {
        observed.label = Some(format!("observed mean{zero}, confidence band"));
        observed.band = s.iter().map(|p| (p.rounds as f64, p.estimate.lower, p.estimate.upper)).collect();
    }
    let bound: Vec<(f64, f64)> = s.iter().filter_map(|p| p.bound.map(|b| (p.rounds as f64, b))).collect();
    let mut series = vec![observed];
    match bound.len() {
        0 => {}
        1 => series.push(Series::scatter("bound at T (gamma depends on T)", RED, bound, 6)),
        _ => series.push(Series::line("bound", RED, bound)),
    }
    Panel {
        caption: Some(format!("{}{}: {verdict}", run.scenario, if empirical { " (empirical b^2)" } else { "" })),
        x: Axis { format: Some(rounds_label), ..Axis::log((1.0, t_max), "rounds T") },
        y: Axis::log(y, "running average of the metric"),
        series,
        legend: true,
    }
}

/// One sweep of the mirrored experiments: per setting, in its own palette colour, the exact
/// expected metric over rounds (solid), its exact steady state (dashed) and its theorem's bound as
/// `T -> infinity` (dotted; `*` in the legend when the theorem's conditions fail at that setting),
/// both horizontal lines over every round drawn. Log-scale metric, linear rounds, as the paper's
/// figures. The subtitle names the dotted lines only when one is drawn.
pub fn sweep_figure(sweep: &Sweep) -> Figure {
    let rounds = sweep.curves.iter().map(|c| c.metric.len()).max().unwrap_or(2).max(2) as f64;
    let ys = sweep.curves.iter().flat_map(|c| c.metric.iter().copied().chain([c.steady_state]).chain(c.steady_bound.as_ref().map(|b| b.value)));
    let y = log_range(ys.filter(|v| v.is_finite() && *v > 0.0));
    let across = |v: f64, dashes: (u32, u32), i: usize| Series {
        label: None,
        width: 1,
        dashes: Some(dashes),
        ..Series::line("", colour(i), vec![(0.0, v), (rounds, v)])
    };
    let mut series = Vec::new();
    for (i, c) in sweep.curves.iter().enumerate() {
        let bound = c.steady_bound.as_ref().map(|b| format!(", {} bound {}{}", b.claim, fmt_num(b.value), if b.failed.is_empty() { "" } else { "*" }));
        let label = format!("{} (steady {}{})", c.setting.label, fmt_num(c.steady_state), bound.unwrap_or_default());
        series.push(Series::line(label, colour(i), c.metric.iter().enumerate().map(|(t, v)| (t as f64, *v)).collect()));
        series.push(across(c.steady_state, (14, 8), i));
        if let Some(b) = &c.steady_bound {
            series.push(across(b.value, (3, 6), i));
        }
    }
    let bounds = sweep.curves.iter().filter_map(|c| c.steady_bound.as_ref()).collect::<Vec<_>>();
    let dotted = match (bounds.is_empty(), bounds.iter().any(|b| !b.failed.is_empty())) {
        (true, _) => "",
        (false, false) => "; dotted: theorem bound as T -> inf",
        (false, true) => "; dotted: theorem bound as T -> inf (* conditions fail)",
    };
    let panel = Panel {
        caption: None,
        x: Axis { format: Some(rounds_label), ..Axis::linear((0.0, rounds), "round t") },
        y: Axis::log(y, "expected gradient norm"),
        series,
        legend: true,
    };
    Figure {
        title: format!("{}: {}", sweep.id, sweep.title),
        subtitle: format!("solid: exact E(G_u + hat G_v) per round; dashed: exact steady state{dotted}"),
        layout: Layout::single((900, 600)),
        panels: vec![Some(panel)],
        empty_note: None,
    }
}

/// A search trace: observed / bound per evaluation (random restarts and refinement as points in
/// two colours), the best so far, and the bound's line ratio = 1 (a counterexample lies above it)
/// over every evaluation. A phase without an applicable evaluation has no legend entry.
pub fn search_figure(r: &SearchResult) -> Figure {
    let points: Vec<(f64, f64, bool)> =
        r.trace.iter().filter_map(|e| e.ratio.filter(|x| x.is_finite() && *x > 0.0).map(|x| (e.eval as f64, x, e.phase == "random"))).collect();
    let y = log_range(points.iter().map(|p| p.1).chain([1.0]));
    let evals = r.trace.len().max(2) as f64;
    let phase = |random: bool| points.iter().filter(|p| p.2 == random).map(|p| (p.0, p.1)).collect::<Vec<_>>();
    let mut series: Vec<Series> = [("random restart", BLUE, phase(true)), ("coordinate refinement", ORANGE, phase(false))]
        .into_iter()
        .filter(|(_, _, p)| !p.is_empty())
        .map(|(label, c, p)| Series::scatter(label, c, p, 3))
        .collect();
    let best_line: Vec<(f64, f64)> = points
        .iter()
        .scan(0.0f64, |best, p| {
            *best = best.max(p.1);
            Some((p.0, *best))
        })
        .collect();
    if !best_line.is_empty() {
        series.push(Series::line("best so far", GREEN, best_line));
    }
    series.push(Series { width: 1, dashes: Some((10, 6)), ..Series::line("bound (ratio 1)", RED, vec![(0.0, 1.0), (evals, 1.0)]) });
    let verdict = match r.verdict {
        VerdictKind::Violated => "counterexample found",
        VerdictKind::NotApplicable => "no applicable candidate",
        _ => "no counterexample",
    };
    let omitted = match r.not_applicable {
        0 => String::new(),
        n => format!("; {n} not applicable candidates omitted"),
    };
    let panel = Panel { caption: None, x: Axis::linear((0.0, evals), "evaluation"), y: Axis::log(y, "observed / bound"), series, legend: true };
    Figure {
        title: format!("{}: worst observed/bound {} ({verdict})", r.claim, fmt_num(r.worst_ratio)),
        subtitle: format!("search seed {}, budget {}; points: one exact run each{omitted}", r.options.seed, r.options.budget),
        layout: Layout::single((900, 520)),
        panels: vec![Some(panel)],
        empty_note: None,
    }
}
