//! PNG figures of a scenario: Theorem 1's metric against `T` (log-log) with the fitted slope and
//! a `-1/2` reference, and the consensus error against rounds with Lemma 3's bound. Drawn by the
//! shared panels of [`crate::report::panels`].

use crate::claim::fmt_num;
use crate::report::panels::{log_range, Axis, Figure, Layout, Panel, Series, BLUE, GREY, PALETTE, RED};

use super::check::ScenarioRun;

/// One panel of 720 x 424 pixels under the header, legend lines 20 pixels long.
fn single(title: String, subtitle: String, panel: Panel) -> Figure {
    Figure { title, subtitle, layout: Layout::single((720, 424)), panels: vec![Some(panel)], empty_note: None }
}

/// Theorem 1's metric over the sweep of `T`, the fitted line and a `T^(-1/2)` reference through
/// the first point.
pub fn rate_figure(run: &ScenarioRun) -> Figure {
    let fit = run.fit.map(|f| format!("fitted slope {} +- {} (99%)", fmt_num(f.slope), fmt_num(f.upper - f.slope))).unwrap_or_else(|| "no fit".into());
    let xs: Vec<f64> = run.sweep.iter().map(|p| p.rounds as f64).collect();
    let (x0, x1) = (xs.first().copied().unwrap_or(1.0) / 1.3, xs.last().copied().unwrap_or(2.0) * 1.3);
    let metric: Vec<(f64, f64)> = run.sweep.iter().map(|p| (p.rounds as f64, p.metric)).collect();
    let mut series = vec![Series { markers: Some(3), ..Series::line("exact metric", BLUE, metric) }];
    if let Some(f) = run.fit {
        let line: Vec<(f64, f64)> = [x0, x1].iter().map(|x| (*x, (f.intercept + f.slope * x.ln()).exp())).collect();
        series.push(Series { width: 1, ..Series::line(format!("fit, slope {}", fmt_num(f.slope)), RED, line) });
    }
    if let Some(first) = run.sweep.first() {
        let reference: Vec<(f64, f64)> = [x0, x1].iter().map(|x| (*x, first.metric * (x / first.rounds as f64).powf(-0.5))).collect();
        series.push(Series { width: 1, ..Series::dashed("slope -1/2 reference", GREY, reference) });
    }
    let panel = Panel {
        caption: None,
        x: Axis::log((x0, x1), "horizon T"),
        y: Axis::log(log_range(run.sweep.iter().map(|p| p.metric).filter(|v| v.is_finite() && *v > 0.0)), "(1/T) sum_t (E Delta_u/L_u + E Delta_v/L_v)"),
        series,
        legend: true,
    };
    single(format!("DPGP-C1, {}: stationarity vs T", run.scenario), format!("{}; steps proportional to 1/sqrt(T); {fit}", run.topology), panel)
}

/// The consensus error `(1/m) sum_i E||ubar^t - z_i^t||^2` (and the raw numerators') over rounds
/// with Lemma 3's bound (primary AA, estimated C and q); values at or below the axis' floor are
/// drawn on it.
pub fn consensus_figure(run: &ScenarioRun) -> Figure {
    let c = &run.connectivity;
    let tr = &run.trajectory;
    let n = tr.delta_ubar.len();
    let finite_bound = run.lemma3_bound.iter().all(|b| b.is_finite());
    let bound = run.lemma3_bound.iter().copied().filter(|_| finite_bound);
    let (lo, hi) = log_range(tr.consensus[..n].iter().chain(&tr.consensus_raw[..n]).copied().chain(bound).filter(|v| v.is_finite() && *v > 0.0));
    let on_axis = |v: &[f64]| (0..n).filter(|t| !v[*t].is_nan()).map(|t| (t as f64, v[t].max(lo))).collect::<Vec<_>>();
    let mut series = vec![
        Series::line("de-biased z_i (exact)", BLUE, on_axis(&tr.consensus)),
        Series { width: 1, ..Series::line("raw u_i (exact)", GREY, on_axis(&tr.consensus_raw)) },
    ];
    if finite_bound {
        series.push(Series::line("Lemma 3 bound (estimated C, q)", RED, on_axis(&run.lemma3_bound)));
    }
    let panel = Panel {
        caption: None,
        x: Axis::linear((0.0, n.max(1) as f64), "round t"),
        y: Axis::log((lo, hi), "(1/m) sum_i E||ubar - z_i||^2"),
        series,
        legend: true,
    };
    single(
        format!("DPGP-L3, {}: consensus error vs rounds", run.scenario),
        format!("{}; estimated C = {}, q = {}, delta = {}", run.topology, fmt_num(c.c), fmt_num(c.q), fmt_num(c.delta)),
        panel,
    )
}

/// The runs of a comparison (Remarks 1-3, Figure 3a; [`super::compare`]): Theorem 1's metric and
/// the consensus error over the rounds of the per-round horizon, one line per scenario, on log
/// axes spanning at most 9 decades below the largest value (values at or below an axis' floor,
/// such as a complete graph's consensus error at rounding level, drawn on it).
pub fn comparison_figure(name: &str, runs: &[&ScenarioRun]) -> Figure {
    let panel = |desc: &str, series: &dyn Fn(&ScenarioRun) -> Vec<f64>| {
        let all: Vec<Vec<f64>> = runs.iter().map(|r| series(r)).collect();
        let top = all.iter().flatten().copied().filter(|v| v.is_finite()).fold(0.0, f64::max);
        let (lo, hi) = log_range(all.iter().flatten().copied().filter(|v| v.is_finite() && *v > 1e-9 * top));
        let n = all.iter().map(Vec::len).max().unwrap_or(1);
        let lines = runs
            .iter()
            .zip(&all)
            .enumerate()
            .map(|(i, (r, ys))| {
                let points = ys.iter().enumerate().filter(|(_, y)| !y.is_nan()).map(|(t, y)| (t as f64, y.max(lo))).collect();
                Series::line(&r.scenario, PALETTE[i % PALETTE.len()], points)
            })
            .collect();
        Panel { caption: Some(desc.to_string()), x: Axis::linear((0.0, n.max(1) as f64), "round t"), y: Axis::log((lo, hi), desc), series: lines, legend: true }
    };
    let stationarity = panel("E Delta_u/L_u + E Delta_v/L_v", &|r| r.trajectory.stationarity(r.constants.l_u, r.constants.l_v));
    let consensus = panel("(1/m) sum_i E||ubar - z_i||^2", &|r| {
        let c = &r.trajectory.consensus;
        c[..c.len().saturating_sub(1)].to_vec()
    });
    Figure {
        title: format!("DFedPGP comparison {name}: Theorem 1's metric and the consensus error vs rounds"),
        subtitle: "one line per scenario; the scenarios differ only along the comparison's axis".into(),
        layout: Layout::grid(70),
        panels: vec![Some(stationarity), Some(consensus)],
        empty_note: None,
    }
}
