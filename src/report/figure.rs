//! Figure primitives every family's PNGs share: the bundled font, a header and the PNG encoding.
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
