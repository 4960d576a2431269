//! Figure primitives every family's PNGs share: the bundled font, a header, a legend, dashed
//! lines and the PNG encoding.
//!
//! Text is drawn with the bundled DejaVu Sans (assets/fonts, Bitstream Vera licence), registered
//! once, so figures need no system fonts and render identically everywhere.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::error::{Error, Result};

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Registers the bundled font (once per process).
pub fn ensure_font() {
    REGISTER.call_once(|| {
        // The bundled font is a valid TTF; a failure here would show as missing text, not a panic.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// A drawing failure as the library's error.
pub fn draw_err<E: std::fmt::Debug>(e: E) -> Error {
    Error::Figure(format!("{e:?}"))
}

/// Encodes an RGB buffer as PNG.
///
/// # Errors
/// [`Error::Figure`] if encoding fails.
pub fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(draw_err)?;
    writer.write_image_data(rgb).map_err(draw_err)?;
    writer.finish().map_err(draw_err)?;
    Ok(out)
}

/// A 56-pixel header (title and grey subtitle) over `root`; returns the area below it.
pub fn draw_header<'a>(
    root: &DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>,
    title: &str,
    subtitle: &str,
) -> Result<DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>> {
    let (header, body) = root.split_vertically(56);
    header.draw(&Text::new(title.to_string(), (12, 8), ("sans-serif", 18).into_font())).map_err(draw_err)?;
    header.draw(&Text::new(subtitle.to_string(), (12, 32), ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90)))).map_err(draw_err)?;
    Ok(body)
}

/// The legend box every figure uses.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(draw_err)
}

/// A horizontal dashed line at `y` from `x = 0` to `x_max`; dash and gap in pixels.
pub fn horizontal_dashes(x_max: f64, y: f64, dash: u32, gap: u32, colour: RGBColor) -> DashedLineSeries<std::vec::IntoIter<(f64, f64)>, u32> {
    DashedLineSeries::new(vec![(0.0, y), (x_max, y)], dash, gap, colour.stroke_width(1))
}
