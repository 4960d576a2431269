//! PNG figures: per claim, one panel per scenario with the observed running average (and its
//! confidence band) against the bound over rounds, both axes logarithmic.
//!
//! Sweeps of the mirrored experiments and search traces have their own figures below. The font,
//! header, legend and encoding are the shared ones of [`crate::report::figure`].

use plotters::prelude::*;

use crate::error::Result;
use crate::families::ccyw::check::{ClaimResult, ScenarioRun};
use crate::families::ccyw::claims::fmt_num;
use crate::report::figure::{draw_err, draw_header, draw_legend, encode_png, ensure_font, horizontal_dashes};
use crate::report::panels::{colour, decades, tick_label};
use crate::verdict::{ConstantsSource, Evaluation, VerdictKind};

const PANEL_W: u32 = 640;
const PANEL_H: u32 = 420;

/// Renders the claim's figure and returns PNG bytes.
///
/// # Errors
/// [`crate::Error::Figure`] if drawing fails.
pub fn plot_claim(id: &str, title: &str, rows: &[(&ScenarioRun, &ClaimResult)]) -> Result<Vec<u8>> {
    ensure_font();
    let panels: Vec<(&ScenarioRun, &ClaimResult, &Evaluation, bool)> = rows
        .iter()
        .flat_map(|(run, c)| {
            let mut v = Vec::new();
            if c.evaluation.verdict != VerdictKind::NotApplicable {
                v.push((*run, *c, &c.evaluation, false));
            }
            if let Some(e) = run.result(c.claim, ConstantsSource::Empirical).map(|r| &r.evaluation) {
                if e.verdict != VerdictKind::NotApplicable {
                    v.push((*run, *c, e, true));
                }
            }
            v
        })
        .collect();
    let cols = panels.len().clamp(1, 3) as u32;
    let nrows = (panels.len().max(1) as u32).div_ceil(cols);
    let (w, h) = (PANEL_W * cols, PANEL_H * nrows + 60);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let (header, body) = root.split_vertically(60);
        header.draw(&Text::new(format!("{id}: {title}"), (12, 10), ("sans-serif", 22).into_font())).map_err(draw_err)?;
        // A band is promised only when one is drawn (exact evaluations have none).
        let banded = panels.iter().any(|(_, _, e, _)| e.series.iter().any(|p| p.estimate.upper > p.estimate.lower));
        let band = if banded { "observed running average (mean, with confidence band)" } else { "observed running average (exact)" };
        header
            .draw(&Text::new(format!("{band} vs the claim's bound; log-log axes"), (12, 36), ("sans-serif", 15).into_font().color(&RGBColor(90, 90, 90))))
            .map_err(draw_err)?;
        if panels.is_empty() {
            let reasons: Vec<String> = rows.iter().map(|(r, c)| format!("{}: {}", r.scenario, c.evaluation.failed.join("; "))).collect();
            body.draw(&Text::new("not applicable on any scenario of this run:", (12, 20), ("sans-serif", 16).into_font())).map_err(draw_err)?;
            for (i, line) in reasons.iter().enumerate().take(14) {
                let line: String = line.chars().take(110).collect();
                body.draw(&Text::new(line, (12, 50 + 24 * i as i32), ("sans-serif", 13).into_font())).map_err(draw_err)?;
            }
        } else {
            let areas = body.split_evenly((nrows as usize, cols as usize));
            for (area, (run, _c, e, empirical)) in areas.iter().zip(&panels) {
                draw_panel(area, run, e, *empirical)?;
            }
        }
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, run: &ScenarioRun, e: &Evaluation, empirical: bool) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let s = &e.series;
    let positive = |x: f64| x.is_finite() && x > 0.0;
    let mut ys: Vec<f64> = s.iter().flat_map(|p| [p.estimate.mean, p.estimate.upper]).filter(|x| positive(*x)).collect();
    ys.extend(s.iter().filter_map(|p| p.bound).filter(|x| positive(*x)));
    let (mut lo, mut hi) = ys.iter().fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(*y), b.max(*y)));
    if !lo.is_finite() || hi <= 0.0 {
        lo = 1e-12;
        hi = 1.0;
    }
    let (lo, hi) = (lo / 2.0, hi * 2.0);
    let t_max = s.last().map(|p| p.rounds).unwrap_or(1).max(2) as f64;
    let verdict = match e.verdict {
        VerdictKind::Holds => format!("holds, slack {}", e.slack.map(fmt_num).unwrap_or_default()),
        v => v.to_string(),
    };
    let caption = format!("{}{}: {}", run.scenario, if empirical { " (empirical b^2)" } else { "" }, verdict);
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .caption(caption, ("sans-serif", 16))
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((1f64..t_max).log_scale(), (lo..hi).log_scale())
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc("rounds T")
        .y_desc("running average of the metric")
        .x_labels(decades((1.0, t_max)) + 1)
        .y_labels(decades((lo, hi)) + 1)
        .x_label_formatter(&|x| tick_label(*x))
        .y_label_formatter(&|y| tick_label(*y))
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(draw_err)?;
    let clamp = |y: f64| y.max(lo);
    let band: Vec<(f64, f64)> =
        s.iter().map(|p| (p.rounds as f64, clamp(p.estimate.upper))).chain(s.iter().rev().map(|p| (p.rounds as f64, clamp(p.estimate.lower)))).collect();
    chart.draw_series(std::iter::once(Polygon::new(band, RGBColor(31, 119, 180).mix(0.2).filled()))).map_err(draw_err)?;
    chart
        .draw_series(LineSeries::new(s.iter().map(|p| (p.rounds as f64, clamp(p.estimate.mean))), RGBColor(31, 119, 180).stroke_width(2)))
        .map_err(draw_err)?
        .label("observed (mean)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RGBColor(31, 119, 180).stroke_width(2)));
    let bound_pts: Vec<(f64, f64)> = s.iter().filter_map(|p| p.bound.map(|b| (p.rounds as f64, clamp(b)))).collect();
    let red = RGBColor(214, 39, 40);
    if bound_pts.len() > 1 {
        chart
            .draw_series(LineSeries::new(bound_pts, red.stroke_width(2)))
            .map_err(draw_err)?
            .label("bound")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2)));
    } else if let Some(&(x, y)) = bound_pts.first() {
        chart
            .draw_series(std::iter::once(Circle::new((x, y), 6, red.filled())))
            .map_err(draw_err)?
            .label("bound at T (gamma depends on T)")
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, red.filled()));
    }
    draw_legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
    Ok(())
}

/// Renders one sweep of the mirrored experiments: per setting, the exact expected metric over
/// rounds (solid), its exact steady state (dashed) and its theorem's bound as `T -> infinity`
/// (dotted; marked when the theorem's conditions fail at that setting). Log-scale metric, linear
/// rounds, as the paper's figures.
///
/// # Errors
/// [`crate::Error::Figure`] if drawing fails.
pub fn plot_sweep(sweep: &crate::families::ccyw::experiments::Sweep) -> Result<Vec<u8>> {
    ensure_font();
    let (w, h) = (900u32, 600u32);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let body = draw_header(
            &root,
            &format!("{}: {}", sweep.id, sweep.title),
            "solid: exact E(G_u + hat G_v) per round; dashed: exact steady state; dotted: theorem bound as T -> inf (* conditions fail)",
        )?;
        let positive = |y: f64| y.is_finite() && y > 0.0;
        let ys = sweep.curves.iter().flat_map(|c| c.metric.iter().copied().chain([c.steady_state]).chain(c.steady_bound.as_ref().map(|b| b.value)));
        let (lo, hi) = ys.filter(|y| positive(*y)).fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(y), b.max(y)));
        let (lo, hi) = if lo.is_finite() && hi > 0.0 { (lo / 2.0, hi * 2.0) } else { (1e-12, 1.0) };
        let rounds = sweep.curves.iter().map(|c| c.metric.len()).max().unwrap_or(2).max(2) as f64;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..rounds, (lo..hi).log_scale())
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .x_desc("round t")
            .x_label_formatter(&|x| tick_label(*x))
            .y_desc("expected gradient norm")
            .y_labels(decades((lo, hi)) + 1)
            .y_label_formatter(&|y| tick_label(*y))
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(draw_err)?;
        let clamp = |y: f64| y.max(lo);
        for (i, c) in sweep.curves.iter().enumerate() {
            let colour = colour(i);
            chart
                .draw_series(LineSeries::new(c.metric.iter().enumerate().map(|(t, y)| (t as f64, clamp(*y))), colour.stroke_width(2)))
                .map_err(draw_err)?
                .label(format!("{}  (steady {})", c.setting.label, fmt_num(c.steady_state)))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
            chart.draw_series(horizontal_dashes(rounds, c.steady_state, 14, 8, colour)).map_err(draw_err)?;
            if let Some(b) = &c.steady_bound {
                let mark = if b.failed.is_empty() { "" } else { "*" };
                chart
                    .draw_series(horizontal_dashes(rounds, b.value, 3, 6, colour))
                    .map_err(draw_err)?
                    .label(format!("{} bound {}{mark}", b.claim, fmt_num(b.value)))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 6, y), (x + 10, y), (x + 16, y)], colour.stroke_width(1)));
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

/// Renders a search trace: observed / bound per evaluation (random restarts and refinement in two
/// colours), the best so far, and the line ratio = 1 above which a counterexample lies.
///
/// # Errors
/// [`crate::Error::Figure`] if drawing fails.
pub fn plot_search(r: &crate::families::ccyw::search::SearchResult) -> Result<Vec<u8>> {
    ensure_font();
    let (w, h) = (900u32, 560u32);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let verdict = if r.worst_ratio > 1.0 { "counterexample found" } else { "no counterexample" };
        let body = draw_header(
            &root,
            &format!("{}: worst observed/bound {} ({verdict})", r.claim, fmt_num(r.worst_ratio)),
            &format!("search seed {}, budget {}; points: one exact run each; not applicable candidates omitted", r.options.seed, r.options.budget),
        )?;
        let points: Vec<(f64, f64, bool)> =
            r.trace.iter().filter_map(|e| e.ratio.filter(|x| x.is_finite() && *x > 0.0).map(|x| (e.eval as f64, x, e.phase == "random"))).collect();
        let lo = points.iter().map(|p| p.1).fold(1.0f64, f64::min) / 2.0;
        let hi = points.iter().map(|p| p.1).fold(1.0f64, f64::max) * 2.0;
        let evals = (r.trace.len().max(2)) as f64;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..evals, (lo..hi).log_scale())
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .x_desc("evaluation")
            .y_desc("observed / bound")
            .x_label_formatter(&|x| tick_label(*x))
            .y_labels(decades((lo, hi)) + 1)
            .y_label_formatter(&|y| tick_label(*y))
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(draw_err)?;
        let (blue, orange, red) = (RGBColor(31, 119, 180), RGBColor(255, 127, 14), RGBColor(214, 39, 40));
        chart
            .draw_series(points.iter().filter(|p| p.2).map(|p| Circle::new((p.0, p.1), 3, blue.filled())))
            .map_err(draw_err)?
            .label("random restart")
            .legend(move |(x, y)| Circle::new((x + 10, y), 3, blue.filled()));
        chart
            .draw_series(points.iter().filter(|p| !p.2).map(|p| Circle::new((p.0, p.1), 3, orange.filled())))
            .map_err(draw_err)?
            .label("coordinate refinement")
            .legend(move |(x, y)| Circle::new((x + 10, y), 3, orange.filled()));
        let mut best = 0.0f64;
        let best_line: Vec<(f64, f64)> = points
            .iter()
            .map(|p| {
                best = best.max(p.1);
                (p.0, best)
            })
            .collect();
        chart
            .draw_series(LineSeries::new(best_line, BLACK.stroke_width(2)))
            .map_err(draw_err)?
            .label("best so far")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        chart
            .draw_series(horizontal_dashes(evals, 1.0, 10, 6, red))
            .map_err(draw_err)?
            .label("bound (ratio 1)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(1)));
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}
