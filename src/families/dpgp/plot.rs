//! PNG figures of a scenario: Theorem 1's metric against `T` (log-log) with the fitted slope and
//! a `-1/2` reference, and the consensus error against rounds with Lemma 3's bound.

use plotters::prelude::*;

use crate::claim::fmt_num;
use crate::error::Result;
use crate::report::figure::{draw_err, draw_header, draw_legend, encode_png, ensure_font};

use super::check::ScenarioRun;

const W: u32 = 720;
const H: u32 = 480;
const BLUE: RGBColor = RGBColor(31, 119, 180);
const RED: RGBColor = RGBColor(214, 39, 40);
const GREY: RGBColor = RGBColor(120, 120, 120);

fn log_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.filter(|v| v.is_finite() && *v > 0.0).fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if lo.is_finite() && hi > 0.0 {
        (lo / 2.0, hi * 2.0)
    } else {
        (1e-12, 1.0)
    }
}

/// Theorem 1's metric over the sweep of `T`, the fitted line and a `T^(-1/2)` reference through
/// the first point.
///
/// # Errors
/// [`crate::Error::Figure`] if drawing fails.
pub fn rate_figure(run: &ScenarioRun) -> Result<Vec<u8>> {
    ensure_font();
    let mut buf = vec![255u8; (W * H * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let fit = run.fit.map(|f| format!("fitted slope {} +- {} (99%)", fmt_num(f.slope), fmt_num(f.upper - f.slope))).unwrap_or_else(|| "no fit".into());
        let body =
            draw_header(&root, &format!("DPGP-C1, {}: stationarity vs T", run.scenario), &format!("{}; steps proportional to 1/sqrt(T); {fit}", run.topology))?;
        let xs: Vec<f64> = run.sweep.iter().map(|p| p.rounds as f64).collect();
        let (x0, x1) = (xs.first().copied().unwrap_or(1.0) / 1.3, xs.last().copied().unwrap_or(2.0) * 1.3);
        let (lo, hi) = log_range(run.sweep.iter().map(|p| p.metric));
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x0..x1).log_scale(), (lo..hi).log_scale())
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .x_desc("horizon T")
            .y_desc("(1/T) sum_t (E Delta_u/L_u + E Delta_v/L_v)")
            .x_label_formatter(&|x| fmt_num(*x))
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(draw_err)?;
        chart
            .draw_series(LineSeries::new(run.sweep.iter().map(|p| (p.rounds as f64, p.metric)), BLUE.stroke_width(2)))
            .map_err(draw_err)?
            .label("exact metric")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        chart.draw_series(run.sweep.iter().map(|p| Circle::new((p.rounds as f64, p.metric), 3, BLUE.filled()))).map_err(draw_err)?;
        if let Some(f) = run.fit {
            let line: Vec<(f64, f64)> = [x0, x1].iter().map(|x| (*x, (f.intercept + f.slope * x.ln()).exp())).collect();
            chart
                .draw_series(LineSeries::new(line, RED.stroke_width(1)))
                .map_err(draw_err)?
                .label(format!("fit, slope {}", fmt_num(f.slope)))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(1)));
        }
        if let Some(first) = run.sweep.first() {
            let reference: Vec<(f64, f64)> = [x0, x1].iter().map(|x| (*x, first.metric * (x / first.rounds as f64).powf(-0.5))).collect();
            chart
                .draw_series(DashedLineSeries::new(reference, 6, 4, GREY.stroke_width(1)))
                .map_err(draw_err)?
                .label("slope -1/2 reference")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], GREY.stroke_width(1)));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, W, H)
}

/// The consensus error `(1/m) sum_i E||ubar^t - z_i^t||^2` (and the raw numerators') over rounds
/// with Lemma 3's bound (primary AA, estimated C and q).
///
/// # Errors
/// [`crate::Error::Figure`] if drawing fails.
pub fn consensus_figure(run: &ScenarioRun) -> Result<Vec<u8>> {
    ensure_font();
    let mut buf = vec![255u8; (W * H * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let c = &run.connectivity;
        let body = draw_header(
            &root,
            &format!("DPGP-L3, {}: consensus error vs rounds", run.scenario),
            &format!("{}; estimated C = {}, q = {}, delta = {}", run.topology, fmt_num(c.c), fmt_num(c.q), fmt_num(c.delta)),
        )?;
        let tr = &run.trajectory;
        let n = tr.delta_ubar.len();
        let finite_bound = run.lemma3_bound.iter().all(|b| b.is_finite());
        let (lo, hi) =
            log_range(tr.consensus[..n].iter().chain(&tr.consensus_raw[..n]).copied().chain(run.lemma3_bound.iter().copied().filter(|_| finite_bound)));
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n.max(1) as f64, (lo..hi).log_scale())
            .map_err(draw_err)?;
        chart
            .configure_mesh()
            .x_desc("round t")
            .y_desc("(1/m) sum_i E||ubar - z_i||^2")
            .y_label_formatter(&|y| format!("{y:.0e}"))
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(draw_err)?;
        let pos = |v: f64| v.max(lo);
        chart
            .draw_series(LineSeries::new((0..n).map(|t| (t as f64, pos(tr.consensus[t]))), BLUE.stroke_width(2)))
            .map_err(draw_err)?
            .label("de-biased z_i (exact)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        chart
            .draw_series(LineSeries::new((0..n).map(|t| (t as f64, pos(tr.consensus_raw[t]))), GREY.stroke_width(1)))
            .map_err(draw_err)?
            .label("raw u_i (exact)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], GREY.stroke_width(1)));
        if finite_bound {
            chart
                .draw_series(LineSeries::new((0..n).map(|t| (t as f64, pos(run.lemma3_bound[t]))), RED.stroke_width(2)))
                .map_err(draw_err)?
                .label("Lemma 3 bound (estimated C, q)")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, W, H)
}
