//! Figures of panels: a title and a grey subtitle over a grid of charts, each chart a set of line
//! series with an optional legend. A family only prepares the data ([`Figure`], [`Panel`],
//! [`Series`]); the drawing (grid, axes, mesh, series, markers, legend, PNG) is written here once.
//!
//! Draw order, for byte-identical figures: the header, then per panel its caption, mesh and
//! series in the order given (each line, then its markers), then its legend.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::figure::{draw_err, draw_header, draw_legend, encode_png, ensure_font};
use crate::error::Result;
use crate::family::ReportFile;

/// The blue of the first series.
pub const BLUE: RGBColor = RGBColor(31, 119, 180);
/// The orange of the second series.
pub const ORANGE: RGBColor = RGBColor(255, 127, 14);

/// One axis of a panel.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The range drawn.
    pub range: (f64, f64),
    /// Logarithmic scale.
    pub log: bool,
    /// Its description.
    pub desc: String,
    /// How tick labels are written (plotters' default when `None`).
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

/// One line of a panel.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its legend entry (none: not in the legend, e.g. a reference line).
    pub label: Option<String>,
    /// Its colour.
    pub colour: RGBColor,
    /// Stroke width in pixels.
    pub width: u32,
    /// The points, in drawing order.
    pub points: Vec<(f64, f64)>,
    /// Radius of a filled circle at every point, if any.
    pub markers: Option<u32>,
}

impl Series {
    /// A labelled line, two pixels wide.
    pub fn line(label: impl Into<String>, colour: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Self { label: Some(label.into()), colour, width: 2, points, markers: None }
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
    /// Where the legend goes (none: no legend).
    pub legend: Option<SeriesLabelPosition>,
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
}

impl Layout {
    /// Panels of 620 x 400 pixels, three to a row, margin 8, x labels 30 pixels high, y labels
    /// `y_labels` wide, captions at 15 points and ticks at 11.
    pub fn grid(y_labels: u32) -> Self {
        Self { cell: (620, 400), columns: 3, margin: 8, label_areas: (30, y_labels), fonts: (15, 11) }
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
    /// Said under the header when there is no panel at all.
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
                body.draw(&Text::new(note.clone(), (12, 20), ("sans-serif", 15).into_font())).map_err(draw_err)?;
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

    /// The figure as the report file `figures/<name>.png`.
    ///
    /// # Errors
    /// [`crate::Error::Figure`] if drawing fails.
    pub fn file(&self, name: &str) -> Result<ReportFile> {
        Ok(ReportFile { path: std::path::Path::new("figures").join(format!("{name}.png")), bytes: self.png()? })
    }
}

/// `(lo / 2, 2 hi)` over `values` (each expected > 0), or `(1e-6, 1)` when there is none: a
/// logarithmic range with a factor of two of room.
pub fn log_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.into_iter().fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if lo.is_finite() && hi > 0.0 {
        (lo / 2.0, hi * 2.0)
    } else {
        (1e-6, 1.0)
    }
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

fn draw_panel(area: &Area, panel: &Panel, l: &Layout) -> Result<()> {
    let mut b = ChartBuilder::on(area);
    if let Some(c) = &panel.caption {
        b.caption(c, ("sans-serif", l.fonts.0));
    }
    b.margin(l.margin).x_label_area_size(l.label_areas.0).y_label_area_size(l.label_areas.1);
    let x: RangedCoordf64 = (panel.x.range.0..panel.x.range.1).into();
    let (y0, y1) = panel.y.range;
    match (panel.x.log, panel.y.log) {
        (false, false) => fill(b.build_cartesian_2d(x, y0..y1).map_err(draw_err)?, panel, l),
        (false, true) => fill(b.build_cartesian_2d(x, (y0..y1).log_scale()).map_err(draw_err)?, panel, l),
        (true, false) => fill(b.build_cartesian_2d((panel.x.range.0..panel.x.range.1).log_scale(), y0..y1).map_err(draw_err)?, panel, l),
        (true, true) => fill(b.build_cartesian_2d((panel.x.range.0..panel.x.range.1).log_scale(), (y0..y1).log_scale()).map_err(draw_err)?, panel, l),
    }
}

fn fill<'a, X, Y>(mut chart: ChartContext<'a, BitMapBackend<'a>, Cartesian2d<X, Y>>, panel: &Panel, l: &Layout) -> Result<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(panel.x.desc.as_str()).y_desc(panel.y.desc.as_str());
    if let Some(f) = &panel.x.format {
        mesh.x_label_formatter(f);
    }
    if let Some(f) = &panel.y.format {
        mesh.y_label_formatter(f);
    }
    mesh.label_style(("sans-serif", l.fonts.1)).draw().map_err(draw_err)?;
    for s in &panel.series {
        let style = s.colour.stroke_width(s.width);
        let drawn = chart.draw_series(LineSeries::new(s.points.iter().copied(), style)).map_err(draw_err)?;
        if let Some(label) = &s.label {
            drawn.label(label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
        }
        if let Some(r) = s.markers {
            chart.draw_series(s.points.iter().map(|p| Circle::new(*p, r, s.colour.filled()))).map_err(draw_err)?;
        }
    }
    match &panel.legend {
        Some(position) => draw_legend(&mut chart, position.clone()),
        None => Ok(()),
    }
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
    }

    #[test]
    fn a_figure_is_a_png_of_its_grid_and_its_data_changes_it() {
        let panel = |y: f64| Panel {
            caption: Some("p".into()),
            x: Axis::linear((0.0, 2.0), "x"),
            y: Axis::log((0.1, 10.0), "y"),
            series: vec![Series::line("a", BLUE, vec![(0.0, 1.0), (2.0, y)])],
            legend: Some(SeriesLabelPosition::UpperRight),
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
}
