//! Figures of panels: a title and a grey subtitle over a grid of charts, each chart a set of line
//! series with an optional legend. A family only prepares the data ([`Figure`], [`Panel`],
//! [`Series`]); the drawing (grid, axes, mesh, series, markers, legend, PNG) is written here once.
//!
//! Draw order, for byte-identical figures: the header, then per panel its caption, mesh and
//! series in the order given (each line, then its markers), then its legend.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::figure::{draw_err, draw_header, encode_png, ensure_font};
use crate::error::{Error, Result};
use crate::family::ReportFile;

/// The colours of a figure's series, all distinct (matplotlib's "tab10"): series `i` of a panel
/// takes `PALETTE[i]`, so up to ten series never share a colour.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// The blue of the first series.
pub const BLUE: RGBColor = PALETTE[0];
/// The orange of the second series.
pub const ORANGE: RGBColor = PALETTE[1];
/// The green of the third series.
pub const GREEN: RGBColor = PALETTE[2];
/// The red of the fourth series.
pub const RED: RGBColor = PALETTE[3];
/// The grey of reference lines.
pub const GREY: RGBColor = PALETTE[7];

/// The colour of series `i` of `n`: `PALETTE[i]`, distinct for `n <= 10`; beyond ten series
/// colours repeat (a panel that needs more should be split).
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A tick label without spurious decimals: `0`; integers as integers (`50`, not `50.0`); powers of
/// ten outside `[1e-3, 1e4)` as `1e7`, `1e-5`; other numbers at four significant digits, in
/// scientific notation outside `[1e-3, 1e5)` with no trailing zeros (`2.5e7`, `0.25`).
pub fn tick_label(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    let exponent = a.log10().round();
    let power = (a / 10f64.powf(exponent) - 1.0).abs() < 1e-9;
    let sign = if v < 0.0 { "-" } else { "" };
    if power && !(-3.0..4.0).contains(&exponent) {
        return format!("{sign}1e{exponent}");
    }
    if v.fract() == 0.0 && a < 1e15 && (power || a < 1e5) {
        return format!("{}", v as i64);
    }
    if (1e-3..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        return s.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    let s = format!("{v:.3e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    format!("{}e{exp}", mantissa.trim_end_matches('0').trim_end_matches('.'))
}

/// The number of decades a logarithmic range spans (at least one): asking plotters for one more
/// label than this puts a tick, and a label, on every decade and on nothing else.
pub fn decades(range: (f64, f64)) -> usize {
    let (lo, hi) = (range.0.min(range.1), range.0.max(range.1));
    ((hi / lo).log10().floor().max(1.0)) as usize
}

/// One axis of a panel.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The range drawn.
    pub range: (f64, f64),
    /// Logarithmic scale.
    pub log: bool,
    /// Its description.
    pub desc: String,
    /// How tick labels are written ([`tick_label`] when `None`).
    pub format: Option<fn(&f64) -> String>,
}

impl Axis {
    /// A linear axis over `range`.
    pub fn linear(range: (f64, f64), desc: impl Into<String>) -> Self {
        Self { range, log: false, desc: desc.into(), format: None }
    }

    /// A logarithmic axis over `range`.
    pub fn log(range: (f64, f64), desc: impl Into<String>) -> Self {
        Self { log: true, ..Self::linear(range, desc) }
    }
}

/// One line of a panel (or, with `width` 0, its markers alone).
#[derive(Debug, Clone)]
pub struct Series {
    /// Its legend entry (none: not in the legend, e.g. a reference line).
    pub label: Option<String>,
    /// Its colour.
    pub colour: RGBColor,
    /// Stroke width in pixels; 0 draws no line (a scatter of its markers).
    pub width: u32,
    /// The points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Radius of a filled circle at every point, if any.
    pub markers: Option<u32>,
    /// Dash and gap lengths in pixels (none: a solid line).
    pub dashes: Option<(u32, u32)>,
    /// A band `(x, lower, upper)` filled under the line in its colour at 20% opacity (empty:
    /// none); edges outside the vertical axis are drawn at its ends.
    pub band: Vec<(f64, f64, f64)>,
}

impl Series {
    /// A labelled line, two pixels wide.
    pub fn line(label: impl Into<String>, colour: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Self { label: Some(label.into()), colour, width: 2, points, markers: None, dashes: None, band: Vec::new() }
    }

    /// A labelled scatter: a filled circle of `radius` pixels at every point, no line.
    pub fn scatter(label: impl Into<String>, colour: RGBColor, points: Vec<(f64, f64)>, radius: u32) -> Self {
        Self { width: 0, markers: Some(radius), ..Self::line(label, colour, points) }
    }

    /// A labelled dashed line (dashes of 6 pixels, gaps of 4), two pixels wide.
    pub fn dashed(label: impl Into<String>, colour: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Self { dashes: Some((6, 4)), ..Self::line(label, colour, points) }
    }
}

/// One chart of a figure.
#[derive(Debug, Clone)]
pub struct Panel {
    /// The caption above it, if any.
    pub caption: Option<String>,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The lines, in drawing order.
    pub series: Vec<Series>,
    /// A legend of the labelled series, drawn in a strip under the chart (outside the data).
    pub legend: bool,
}

/// Sizes and fonts of a figure's panels.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Width and height of one panel in pixels (the figure adds a 56-pixel header).
    pub cell: (u32, u32),
    /// Panels per row at most.
    pub columns: usize,
    /// Margin around each chart.
    pub margin: u32,
    /// Sizes of the x and y label areas.
    pub label_areas: (u32, u32),
    /// Font sizes of the captions and the tick labels.
    pub fonts: (u32, u32),
    /// Length in pixels of a line's sample in the legend.
    pub legend_line: u32,
}

impl Layout {
    /// Panels of 620 x 400 pixels, three to a row, margin 8, x labels 30 pixels high, y labels
    /// `y_labels` wide, captions at 15 points and ticks at 11.
    pub fn grid(y_labels: u32) -> Self {
        Self { cell: (620, 400), columns: 3, margin: 8, label_areas: (30, y_labels), fonts: (15, 11), legend_line: 16 }
    }

    /// One panel of `cell` pixels, margin 12, x labels 40 pixels high, y labels 70 wide, tick
    /// labels at 12 points and legend lines 20 pixels long.
    pub fn single(cell: (u32, u32)) -> Self {
        Self { cell, columns: 1, margin: 12, label_areas: (40, 70), fonts: (15, 12), legend_line: 20 }
    }
}

/// A figure: a header over a grid of panels.
#[derive(Debug, Clone)]
pub struct Figure {
    /// The title.
    pub title: String,
    /// The grey line under it.
    pub subtitle: String,
    /// Sizes and fonts.
    pub layout: Layout,
    /// The panels, row by row; `None` leaves its cell empty.
    pub panels: Vec<Option<Panel>>,
    /// Said under the header when there is no panel at all: its first line at 15 points, any
    /// further lines (after `\n`) under it at 13.
    pub empty_note: Option<String>,
}

impl Figure {
    /// The figure as PNG bytes: `min(panels, columns)` panels to a row.
    ///
    /// # Errors
    /// [`crate::Error::Figure`] if drawing fails.
    pub fn png(&self) -> Result<Vec<u8>> {
        ensure_font();
        let l = &self.layout;
        let cols = self.panels.len().clamp(1, l.columns.max(1)) as u32;
        let rows = (self.panels.len().max(1) as u32).div_ceil(cols);
        let (w, h) = (l.cell.0 * cols, l.cell.1 * rows + 56);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
            root.fill(&WHITE).map_err(draw_err)?;
            let body = draw_header(&root, &self.title, &self.subtitle)?;
            if let (true, Some(note)) = (self.panels.is_empty(), &self.empty_note) {
                draw_note(&body, note)?;
            }
            for (area, panel) in body.split_evenly((rows as usize, cols as usize)).iter().zip(&self.panels) {
                if let Some(panel) = panel {
                    draw_panel(area, panel, l)?;
                }
            }
            root.present().map_err(draw_err)?;
        }
        encode_png(&buf, w, h)
    }

    /// What a reader could be misled by, per panel: a labelled series with no drawable point, two
    /// labelled series of one colour, a drawable point outside the axes' ranges. Empty when none.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, p) in self.panels.iter().enumerate().filter_map(|(i, p)| Some((i, p.as_ref()?))) {
            let labelled: Vec<&Series> = p.series.iter().filter(|s| s.label.is_some()).collect();
            for (j, s) in labelled.iter().enumerate() {
                let name = s.label.as_deref().unwrap_or_default();
                if drawable(p, s).is_empty() {
                    out.push(format!("panel {i}: series `{name}` has no drawable point"));
                }
                if let Some(t) = labelled[..j].iter().find(|t| t.colour == s.colour) {
                    out.push(format!("panel {i}: `{name}` has the colour of `{}`", t.label.as_deref().unwrap_or_default()));
                }
            }
            let inside = |v: f64, (a, b): (f64, f64)| v >= a.min(b) && v <= a.max(b);
            if let Some(q) = p.series.iter().flat_map(|s| drawable(p, s)).find(|q| !inside(q.0, p.x.range) || !inside(q.1, p.y.range)) {
                out.push(format!("panel {i}: point ({}, {}) outside the axes", q.0, q.1));
            }
        }
        out
    }

    /// The figure as the report file `figures/<name>.png`.
    ///
    /// # Errors
    /// [`crate::Error::Figure`] if drawing fails.
    pub fn file(&self, name: &str) -> Result<ReportFile> {
        Ok(ReportFile { path: std::path::Path::new("figures").join(format!("{name}.png")), bytes: self.png()? })
    }
}

/// Decades a logarithmic axis of [`log_range`] spans at most below its largest value: an exact
/// error that decays geometrically reaches `1e-300` in a few hundred rounds, and an axis down to
/// there leaves the decades a reader compares a few pixels each. A line below it is clipped at
/// the axis.
pub const LOG_DECADES: i32 = 40;

/// `(lo / 2, 2 hi)` over the finite positive `values`, `lo` at least `hi 10^-LOG_DECADES` (and
/// a normal number: an axis from a subnormal or 0 has no finite logarithm), or `(1e-6, 1)` when
/// there is none: a logarithmic range with a factor of two of room.
pub fn log_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.into_iter().filter(|v| v.is_finite() && *v > 0.0).fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if lo.is_finite() && hi > 0.0 {
        let lo = lo.max(hi * 10f64.powi(-LOG_DECADES));
        ((lo / 2.0).max(f64::MIN_POSITIVE), hi * 2.0)
    } else {
        (1e-6, 1.0)
    }
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// A note's first line at (12, 20) in 15 points, its further lines 24 pixels apart from y = 50 in
/// 13 points.
fn draw_note(area: &Area, note: &str) -> Result<()> {
    for (i, line) in note.lines().enumerate() {
        let (y, size) = if i == 0 { (20, 15) } else { (50 + 24 * (i as i32 - 1), 13) };
        area.draw(&Text::new(line.to_string(), (12, y), ("sans-serif", size).into_font())).map_err(draw_err)?;
    }
    Ok(())
}

/// Height of one row of the legend strip in pixels.
const LEGEND_ROW: u32 = 18;

/// The legend's entries laid out left to right in rows `width` pixels wide: per labelled series,
/// its row and its x offset. An entry is the line's sample, a gap and its label (about 7 pixels a
/// character at 12 points).
fn legend_layout<'p>(panel: &'p Panel, l: &Layout, width: u32) -> Vec<(&'p Series, u32, u32)> {
    let (mut row, mut x) = (0, 0);
    let mut out = Vec::new();
    for s in panel.series.iter().filter(|s| s.label.is_some()) {
        let w = l.legend_line + 8 + 7 * s.label.as_ref().map_or(0, |t| t.chars().count()) as u32 + 18;
        if x > 0 && x + w > width {
            (row, x) = (row + 1, 0);
        }
        out.push((s, row, x));
        x += w;
    }
    out
}

fn draw_panel(area: &Area, panel: &Panel, l: &Layout) -> Result<()> {
    let (width, height) = area.dim_in_pixel();
    let left = l.margin + l.label_areas.1;
    let entries = if panel.legend { legend_layout(panel, l, width.saturating_sub(left + l.margin)) } else { Vec::new() };
    let strip = entries.last().map_or(0, |e| (e.1 + 1) * LEGEND_ROW + 4);
    let (chart_area, legend_area) = area.split_vertically(height.saturating_sub(strip));
    draw_chart(&chart_area, panel, l)?;
    for (s, row, x) in entries {
        let (x0, y) = ((left + x) as i32, (row * LEGEND_ROW + LEGEND_ROW / 2) as i32);
        let (ends, style) = (vec![(x0, y), (x0 + l.legend_line as i32, y)], s.colour.stroke_width(s.width.max(2)));
        match (s.width, s.dashes) {
            (0, _) => Ok(()),
            (_, Some((dash, gap))) => legend_area.draw(&DashedPathElement::new(ends, dash.min(l.legend_line / 3), gap.min(3), style)),
            (_, None) => legend_area.draw(&PathElement::new(ends, style)),
        }
        .map_err(draw_err)?;
        if s.markers.is_some() {
            legend_area.draw(&Circle::new((x0 + l.legend_line as i32 / 2, y), 3, s.colour.filled())).map_err(draw_err)?;
        }
        let text = Text::new(s.label.clone().unwrap_or_default(), (x0 + l.legend_line as i32 + 6, y - 7), ("sans-serif", 12).into_font());
        legend_area.draw(&text).map_err(draw_err)?;
    }
    Ok(())
}

fn draw_chart(area: &Area, panel: &Panel, l: &Layout) -> Result<()> {
    let mut b = ChartBuilder::on(area);
    if let Some(c) = &panel.caption {
        b.caption(c, ("sans-serif", l.fonts.0));
    }
    // A wider right margin keeps the last x tick label inside the panel.
    b.margin(l.margin).margin_right(l.margin.max(24)).x_label_area_size(l.label_areas.0).y_label_area_size(l.label_areas.1);
    // A logarithmic axis needs a range of positive normal numbers: from 0 or a subnormal the
    // drawing library's tick search does not end.
    for (axis, name) in [(&panel.x, "x"), (&panel.y, "y")] {
        let normal = |v: f64| v.is_finite() && v >= f64::MIN_POSITIVE;
        if axis.log && !(normal(axis.range.0) && normal(axis.range.1)) {
            return Err(Error::Figure(format!("the logarithmic {name} axis has the range {:?}, not of positive normal numbers", axis.range)));
        }
    }
    let x: RangedCoordf64 = (panel.x.range.0..panel.x.range.1).into();
    let (y0, y1) = panel.y.range;
    match (panel.x.log, panel.y.log) {
        (false, false) => fill(b.build_cartesian_2d(x, y0..y1).map_err(draw_err)?, panel, l),
        (false, true) => fill(b.build_cartesian_2d(x, (y0..y1).log_scale()).map_err(draw_err)?, panel, l),
        (true, false) => fill(b.build_cartesian_2d((panel.x.range.0..panel.x.range.1).log_scale(), y0..y1).map_err(draw_err)?, panel, l),
        (true, true) => fill(b.build_cartesian_2d((panel.x.range.0..panel.x.range.1).log_scale(), (y0..y1).log_scale()).map_err(draw_err)?, panel, l),
    }
}

/// The points of `s` a panel can draw: finite, and positive on a logarithmic axis (a line
/// through points outside the axes is clipped at their edge).
pub fn drawable(panel: &Panel, s: &Series) -> Vec<(f64, f64)> {
    let ok = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
    s.points.iter().copied().filter(|p| ok(p.0, panel.x.log) && ok(p.1, panel.y.log)).collect()
}

/// A band's outline: its upper edge left to right, then its lower edge back, over the points
/// whose `x` the panel can draw and whose edges are finite (a NaN or infinite edge leaves its
/// point out); an edge outside the vertical range is clipped to the range's nearer end.
fn band_outline(panel: &Panel, band: &[(f64, f64, f64)]) -> Vec<(f64, f64)> {
    let (lo, hi) = (panel.y.range.0.min(panel.y.range.1), panel.y.range.0.max(panel.y.range.1));
    let edge = |y: f64| y.clamp(lo, hi);
    let xs: Vec<&(f64, f64, f64)> = band.iter().filter(|b| b.0.is_finite() && (!panel.x.log || b.0 > 0.0) && b.1.is_finite() && b.2.is_finite()).collect();
    xs.iter().map(|b| (b.0, edge(b.2))).chain(xs.iter().rev().map(|b| (b.0, edge(b.1)))).collect()
}

fn default_label(v: &f64) -> String {
    tick_label(*v)
}

fn fill<'a, X, Y>(mut chart: ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, Y>>, panel: &Panel, l: &Layout) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(panel.x.desc.as_str()).y_desc(panel.y.desc.as_str());
    let (fx, fy) = (panel.x.format.unwrap_or(default_label), panel.y.format.unwrap_or(default_label));
    mesh.x_label_formatter(&fx).y_label_formatter(&fy);
    if panel.x.log {
        mesh.x_labels(decades(panel.x.range) + 1);
    }
    if panel.y.log {
        mesh.y_labels(decades(panel.y.range) + 1);
    }
    mesh.label_style(("sans-serif", l.fonts.1)).draw().map_err(draw_err)?;
    for s in &panel.series {
        let points = drawable(panel, s);
        if !s.band.is_empty() {
            chart.draw_series(std::iter::once(Polygon::new(band_outline(panel, &s.band), s.colour.mix(0.2).filled()))).map_err(draw_err)?;
        }
        let style = s.colour.stroke_width(s.width);
        match (s.width, s.dashes) {
            (0, _) => Ok(()),
            (_, Some((dash, gap))) => chart.draw_series(DashedLineSeries::new(points.clone(), dash, gap, style)).map(|_| ()),
            (_, None) => chart.draw_series(LineSeries::new(points.iter().copied(), style)).map(|_| ()),
        }
        .map_err(draw_err)?;
        if let Some(r) = s.markers {
            chart.draw_series(points.iter().map(|p| Circle::new(*p, r, s.colour.filled()))).map_err(draw_err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_range_pads_by_two_and_falls_back_when_empty() {
        assert_eq!(log_range([0.5, 4.0]), (0.25, 8.0));
        assert_eq!(log_range(std::iter::empty()), (1e-6, 1.0));
        // Negative control: a value of zero cannot be drawn on a log axis and gives the fallback.
        assert_ne!(log_range([0.0]), (0.0, 0.0));
        assert_eq!(log_range([0.0, f64::NAN, 0.5, 4.0]), (0.25, 8.0), "zero and NaN are not drawn and leave the range alone");
        // A decay to underflow spans at most LOG_DECADES below the top, and never reaches 0.
        let (lo, hi) = log_range([1e-300, 1.0]);
        assert!((lo / 0.5e-40 - 1.0).abs() < 1e-12 && hi == 2.0, "{lo} {hi}");
        let (lo, _) = log_range([5e-324, 1e-300]);
        assert!(lo >= f64::MIN_POSITIVE, "{lo}");
    }

    #[test]
    fn a_figure_is_a_png_of_its_grid_and_its_data_changes_it() {
        let panel = |y: f64| Panel {
            caption: Some("p".into()),
            x: Axis::linear((0.0, 2.0), "x"),
            y: Axis::log((0.1, 10.0), "y"),
            series: vec![Series::line("a", BLUE, vec![(0.0, 1.0), (2.0, y)])],
            legend: true,
        };
        let figure =
            |y: f64| Figure { title: "t".into(), subtitle: "s".into(), layout: Layout::grid(60), panels: vec![Some(panel(y)), None], empty_note: None };
        let png = figure(2.0).png().expect("draws");
        assert_eq!(&png[1..4], b"PNG");
        let decoder = png::Decoder::new(png.as_slice());
        let info = decoder.read_info().expect("decodes").info().clone();
        assert_eq!((info.width, info.height), (2 * 620, 400 + 56));
        assert_eq!(png, figure(2.0).png().expect("draws"), "deterministic");
        assert_ne!(png, figure(5.0).png().expect("draws"), "negative control: other data, other pixels");
    }

    #[test]
    fn a_logarithmic_axis_from_zero_or_a_subnormal_is_an_error_not_a_hang() {
        for lo in [0.0, 5e-324, f64::NAN] {
            let panel = Panel { caption: None, x: Axis::linear((0.0, 1.0), "x"), y: Axis::log((lo, 1.0), "y"), series: vec![], legend: false };
            let figure = Figure { title: "t".into(), subtitle: "s".into(), layout: Layout::grid(60), panels: vec![Some(panel)], empty_note: None };
            let err = figure.png().expect_err("refused").to_string();
            assert!(err.contains("logarithmic y axis"), "{err}");
        }
        // Control: the smallest normal number is a range the axis draws.
        let panel = Panel { caption: None, x: Axis::linear((0.0, 1.0), "x"), y: Axis::log((f64::MIN_POSITIVE, 1.0), "y"), series: vec![], legend: false };
        let figure = Figure { title: "t".into(), subtitle: "s".into(), layout: Layout::grid(60), panels: vec![Some(panel)], empty_note: None };
        assert!(figure.png().is_ok());
    }
}

#[cfg(test)]
mod checks {
    use super::*;

    fn panel(series: Vec<Series>) -> Panel {
        Panel { caption: None, x: Axis::linear((0.0, 10.0), "x"), y: Axis::log((1e-9, 10.0), "y"), series, legend: false }
    }

    fn figure(panels: Vec<Panel>) -> Figure {
        Figure { title: "t".into(), subtitle: "s".into(), layout: Layout::grid(60), panels: panels.into_iter().map(Some).collect(), empty_note: None }
    }

    /// The number of pixels of exactly `c` in the figure's PNG.
    fn pixels_of(f: &Figure, c: RGBColor) -> usize {
        let png = f.png().expect("draws");
        let mut reader = png::Decoder::new(png.as_slice()).read_info().expect("decodes");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("frame");
        buf[..info.buffer_size()].chunks(3).filter(|p| p == &[c.0, c.1, c.2]).count()
    }

    /// The number of pixels within 3 levels per channel of `c` drawn at `opacity` on white.
    fn pixels_near(f: &Figure, c: RGBColor, opacity: f64) -> usize {
        let png = f.png().expect("draws");
        let mut reader = png::Decoder::new(png.as_slice()).read_info().expect("decodes");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("frame");
        let blend = |v: u8| opacity * v as f64 + (1.0 - opacity) * 255.0;
        buf[..info.buffer_size()].chunks(3).filter(|p| [c.0, c.1, c.2].iter().zip(*p).all(|(v, q)| (blend(*v) - *q as f64).abs() <= 3.0)).count()
    }

    #[test]
    fn tick_labels_have_no_spurious_decimals() {
        for (v, s) in [
            (50.0, "50"),
            (200.0, "200"),
            (0.0, "0"),
            (1e7, "1e7"),
            (1e-5, "1e-5"),
            (0.01, "0.01"),
            (1000.0, "1000"),
            (0.25, "0.25"),
            (2.5e7, "2.5e7"),
            (-3.0, "-3"),
        ] {
            assert_eq!(tick_label(v), s, "{v}");
        }
        // Negative control: plotters' default label of a whole number has the decimal the
        // formatter removes.
        assert!(format!("{:?}", 50.0f64).ends_with(".0"));
        assert!(!tick_label(50.0).contains('.'));
    }

    #[test]
    fn every_decade_is_asked_for_on_a_log_axis() {
        assert_eq!(decades((1e-9, 10.0)), 10);
        assert_eq!(decades((0.5, 2.0)), 1);
        // Negative control: plotters' default of ten labels is fewer than the decades of a wide range.
        assert!(decades((1e-30, 1.0)) + 1 > 10);
    }

    #[test]
    fn the_palette_gives_every_series_of_a_panel_its_own_colour() {
        let colours: Vec<RGBColor> = (0..PALETTE.len()).map(colour).collect();
        for (i, c) in colours.iter().enumerate() {
            assert!(!colours[..i].contains(c), "series {i} repeats a colour");
        }
        // Negative control: the eleventh series repeats the first colour.
        assert_eq!(colour(PALETTE.len()), colour(0));
    }

    #[test]
    fn problems_name_a_missing_series_a_shared_colour_and_data_outside_the_axes() {
        let good = figure(vec![panel(vec![Series::line("a", colour(0), vec![(1.0, 1.0), (9.0, 1e-8)]), Series::dashed("b", colour(1), vec![(1.0, 2.0)])])]);
        assert_eq!(good.problems(), Vec::<String>::new());
        // Negative controls, one each.
        let same = figure(vec![panel(vec![Series::line("a", BLUE, vec![(1.0, 1.0)]), Series::line("b", BLUE, vec![(2.0, 1.0)])])]);
        assert!(same.problems()[0].contains("colour of `a`"), "{:?}", same.problems());
        let empty = figure(vec![panel(vec![Series::line("a", BLUE, vec![(1.0, 0.0), (2.0, f64::NAN)])])]);
        assert!(empty.problems()[0].contains("no drawable point"), "{:?}", empty.problems());
        let outside = figure(vec![panel(vec![Series::line("a", BLUE, vec![(1.0, 100.0)])])]);
        assert!(outside.problems()[0].contains("outside the axes"), "{:?}", outside.problems());
    }

    #[test]
    fn a_band_is_filled_only_when_given_and_a_scatter_draws_no_line() {
        let line = Series::line("a", colour(4), vec![(0.0, 1e-4), (10.0, 1e-4)]);
        let banded = Series { band: vec![(0.0, 1e-6, 1e-2), (10.0, 1e-6, 1e-2)], ..line.clone() };
        let count = |s: Series| pixels_near(&figure(vec![panel(vec![s])]), colour(4), 0.2);
        assert!(count(banded) > 10_000);
        // Negative control: without a band, only the line's antialiased edge has that colour.
        assert!(count(line.clone()) < 500);
        let scatter = Series::scatter("a", colour(4), vec![(2.0, 1e-4), (8.0, 1e-4)], 3);
        assert!(pixels_of(&figure(vec![panel(vec![scatter])]), colour(4)) < 100);
        assert!(pixels_of(&figure(vec![panel(vec![line])]), colour(4)) > 300, "negative control: the line joins them");
    }

    #[test]
    fn a_series_is_drawn_in_its_colour_and_the_legend_sits_under_the_chart() {
        let with = |points: Vec<(f64, f64)>, legend: bool| figure(vec![Panel { legend, ..panel(vec![Series::line("a", colour(4), points)]) }]);
        assert!(pixels_of(&with(vec![(0.0, 1.0), (10.0, 1e-8)], false), colour(4)) > 100);
        // Negative control: no drawable point, no pixel of its colour.
        assert_eq!(pixels_of(&with(vec![(0.0, 0.0)], false), colour(4)), 0);
        // The legend's sample alone (no data) is drawn in the strip under the chart: its pixels
        // lie below the x axis' labels.
        let png = with(vec![(0.0, 0.0)], true).png().expect("draws");
        let mut reader = png::Decoder::new(png.as_slice()).read_info().expect("decodes");
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).expect("frame");
        let rows: Vec<usize> = buf[..info.buffer_size()]
            .chunks(3)
            .enumerate()
            .filter(|(_, p)| p == &[colour(4).0, colour(4).1, colour(4).2])
            .map(|(i, _)| i / info.width as usize)
            .collect();
        assert!(!rows.is_empty() && rows.iter().all(|r| *r > 56 + 400 - 30), "legend rows {rows:?}");
    }
}
