//! Every figure kind rendered on one small scenario and read back as pixels: what can be checked
//! without eyes is checked (the image decodes, each curve of the claim's figure is drawn in its own
//! colour of the shared palette, and the figure is not blank).

use std::collections::BTreeSet;

use fedbounds::family::{CheckRequest, Silent};
use fedbounds::report::panels::PALETTE;
use fedbounds::report::ReportMeta;

/// The palette colours (by index) that cover at least `min_pixels` pixels of `png`.
fn palette_colours(png: &[u8], min_pixels: usize) -> BTreeSet<usize> {
    let decoder = png::Decoder::new(png);
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG pixels");
    let channels = info.color_type.samples();
    let mut counts = [0usize; PALETTE.len()];
    for px in buf[..info.buffer_size()].chunks(channels) {
        if let Some(i) = PALETTE.iter().position(|c| (c.0, c.1, c.2) == (px[0], px[1], px[2])) {
            counts[i] += 1;
        }
    }
    (0..PALETTE.len()).filter(|&i| counts[i] >= min_pixels).collect()
}

/// The PNG files a check of `claim` on `scenario` renders, by path.
fn figures(claim: &str, scenario: &str) -> Vec<(String, Vec<u8>)> {
    let request = CheckRequest { claims: vec![claim.into()], scenarios: vec![scenario.into()], plots: true, ..Default::default() };
    let outcome = fedbounds::families::registry().check(&request, &Silent).expect("the check runs");
    outcome
        .files(&ReportMeta::new("test"))
        .into_iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "png"))
        .map(|f| (f.path.display().to_string(), f.bytes))
        .collect()
}

#[test]
fn every_figure_kind_draws_its_curves_in_distinct_palette_colours() {
    // (claim, scenario, figure, palette colours at least drawn): observed and bound curves. A
    // colour counts from 150 pixels on, more than a legend sample covers, so a curve is drawn.
    let cases = [
        ("CCYW-T3.7", "fedavg-partial", "figures/CCYW-T3.7.png", 2),
        ("FEDPLT-CONST", "rotated-layers-noiseless", "figures/FEDPLT-CONST.png", 2),
        ("FEDPLT-CONST", "rotated-layers-noiseless", "figures/FEDPLT-alignment.png", 1),
        ("CLUP-T2", "low-r", "figures/CLUP-T2.png", 2),
        ("DPGP-L3", "ring-low", "figures/dpgp-l3-ring-low.png", 2),
        ("DPGP-C1", "ring-low", "figures/dpgp-c1-ring-low.png", 2),
    ];
    for (claim, scenario, figure, curves) in cases {
        let files = figures(claim, scenario);
        let png = &files
            .iter()
            .find(|(p, _)| p == figure)
            .unwrap_or_else(|| panic!("{claim} on {scenario} renders no {figure}: {:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>()))
            .1;
        let drawn = palette_colours(png, 150);
        assert!(drawn.len() >= curves, "{figure}: {} palette colours drawn, {curves} curves expected ({drawn:?})", drawn.len());
    }
}

#[test]
fn a_blank_image_draws_no_curve() {
    // Negative control of the pixel reading: a white image has no palette colour, and one line of
    // a palette colour is found.
    let (w, h) = (40u32, 30u32);
    let encode = |pixels: &[u8]| {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.write_header().unwrap().write_image_data(pixels).unwrap();
        out
    };
    let mut pixels = vec![255u8; (w * h * 3) as usize];
    assert!(palette_colours(&encode(&pixels), 1).is_empty());
    let c = PALETTE[3];
    for x in 0..w as usize {
        pixels[3 * x..3 * x + 3].copy_from_slice(&[c.0, c.1, c.2]);
    }
    assert_eq!(palette_colours(&encode(&pixels), 20), BTreeSet::from([3]));
}
