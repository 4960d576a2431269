//! Every figure kind rendered on one small scenario and read back as pixels: what can be checked
//! without eyes is checked (the image decodes, each curve of the claim's figure is drawn in its own
//! colour of the shared palette, and the figure is not blank). The CCYW figures (claim curves
//! computed exactly and sampled, a sweep of the mirrored experiments, a search trace) are also built
//! as data, so their titles and their misleading-data checks are read too.

use std::collections::BTreeSet;

use fedbounds::families::ccyw;
use fedbounds::families::ccyw::check::{CheckOptions, ScenarioRun, Selection};
use fedbounds::families::ccyw::experiments::{Setting, Sweep};
use fedbounds::families::ccyw::report::{claim_figure, results_of, search_figure, sweep_figure};
use fedbounds::families::ccyw::search::SearchOptions;
use fedbounds::family::{CheckRequest, Silent};
use fedbounds::report::panels::{Figure, BLUE, PALETTE};
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

/// The pixels of `png` within 3 levels per channel of `c` drawn at 20% opacity on white (a band).
fn band_pixels(png: &[u8], c: (u8, u8, u8)) -> usize {
    let mut reader = png::Decoder::new(png).read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG pixels");
    let blend = |v: u8| 0.2 * v as f64 + 0.8 * 255.0;
    let near = |px: &[u8]| [c.0, c.1, c.2].iter().zip(px).all(|(v, p)| (blend(*v) - *p as f64).abs() <= 3.0);
    buf[..info.buffer_size()].chunks(info.color_type.samples()).filter(|px| near(px)).count()
}

/// The figure's PNG, after checking it draws nothing misleading ([`Figure::problems`]).
fn checked_png(f: &Figure) -> Vec<u8> {
    assert_eq!(f.problems(), Vec::<String>::new(), "{}", f.title);
    f.png().expect("the figure draws")
}

/// The card's scenario `name` cut to 40 rounds and 4 replicates (a wide band where sampled).
fn tiny_ccyw_run(name: &str) -> ScenarioRun {
    let cards = ccyw::card::embedded_cards().expect("the embedded cards parse");
    let mut s = cards.iter().flat_map(|c| &c.scenarios).find(|s| s.name == name).expect("the scenario exists").clone();
    (s.rounds, s.replicates) = (40, 4);
    ccyw::check::run_scenario(&s, &Selection::all(), &CheckOptions::default()).expect("the scenario runs")
}

#[test]
fn ccyw_claim_figures_promise_a_band_only_where_one_is_drawn() {
    // Lemma 3.5 is estimated by seeded replicates where the run is random, and by one exact run
    // where it is deterministic (no noise, every client sampled): a band only in the first case.
    let blue = (BLUE.0, BLUE.1, BLUE.2);
    let mut band_area = Vec::new();
    for (scenario, band) in [("deterministic-full-k25", false), ("fedavg-partial", true)] {
        let runs = [tiny_ccyw_run(scenario)];
        let figure = claim_figure("CCYW-L3.5", "Lemma 3.5", &results_of(&runs, "CCYW-L3.5"));
        let png = checked_png(&figure);
        let drawn = palette_colours(&png, 150);
        assert!(drawn.contains(&0) && drawn.contains(&3), "{scenario}: observed (blue) and bound (red) drawn: {drawn:?}");
        let banded = figure.panels.iter().flatten().flat_map(|p| &p.series).any(|s| !s.band.is_empty());
        assert_eq!((figure.subtitle.contains("band"), banded), (band, band), "{scenario}: {}", figure.subtitle);
        band_area.push(band_pixels(&png, blue));
    }
    // The deterministic figure is the negative control of the band's pixels: there, the band's
    // colour is only the antialiased edge of the blue line.
    assert!(band_area[1] > band_area[0] + 1000, "band pixels, deterministic and sampled: {band_area:?}");
    // Theorem 3.7 is computed exactly on the sampled scenario: no band, none promised.
    let runs = [tiny_ccyw_run("fedavg-partial")];
    let exact = claim_figure("CCYW-T3.7", "Theorem 3.7", &results_of(&runs, "CCYW-T3.7"));
    assert!(exact.subtitle.contains("(exact)") && !exact.subtitle.contains("band"), "{}", exact.subtitle);
}

#[test]
fn a_ccyw_claim_applicable_nowhere_lists_why_and_draws_no_curve() {
    // Theorem 3.11 is stated for full participation; the scenario samples 4 clients of 10.
    let runs = [tiny_ccyw_run("fedavg-partial")];
    let rows = results_of(&runs, "CCYW-T3.11");
    assert!(!rows.is_empty(), "the claim is evaluated (and not applicable)");
    let figure = claim_figure("CCYW-T3.11", "Theorem 3.11", &rows);
    assert!(figure.panels.is_empty() && figure.empty_note.as_deref().is_some_and(|n| n.contains("fedavg-partial")), "{:?}", figure.empty_note);
    // Antialiased text leaves a few pixels of the palette's grey; a curve covers hundreds.
    assert!(palette_colours(&checked_png(&figure), 150).is_empty());
    // Negative control: Theorem 3.7 applies and draws.
    assert!(!palette_colours(&checked_png(&claim_figure("CCYW-T3.7", "t", &results_of(&runs, "CCYW-T3.7"))), 150).is_empty());
}

#[test]
fn a_ccyw_sweep_draws_each_setting_in_its_own_colour() {
    let (id, title, settings) = ccyw::experiments::sweep_settings().into_iter().next().expect("a sweep");
    let curves = settings.iter().map(|s| ccyw::experiments::curve(&Setting { rounds: 200, ..s.clone() }).expect("the curve computes")).collect::<Vec<_>>();
    let n = curves.len();
    let mut sweep = Sweep { id, title, curves };
    let figure = sweep_figure(&sweep);
    assert_eq!(palette_colours(&checked_png(&figure), 150), (0..n).collect(), "one colour per setting");
    assert_eq!(figure.subtitle.contains("dotted"), sweep.curves.iter().any(|c| c.steady_bound.is_some()), "{}", figure.subtitle);
    // Negative control: without the theorems' bounds the subtitle promises no dotted line.
    sweep.curves.iter_mut().for_each(|c| c.steady_bound = None);
    assert!(!sweep_figure(&sweep).subtitle.contains("dotted"));
}

#[test]
fn a_ccyw_search_trace_draws_its_phases_best_and_bound_in_distinct_colours() {
    let claim = ccyw::claims::all_claims().into_iter().find(|c| c.id() == "CCYW-T3.7").expect("the claim exists");
    let result = ccyw::search::search(claim, &SearchOptions { budget: 12, ..Default::default() }).expect("the search runs");
    let figure = search_figure(&result);
    let labels: Vec<&str> = figure.panels[0].as_ref().map(|p| p.series.iter().filter_map(|s| s.label.as_deref()).collect()).unwrap_or_default();
    // Random restarts blue, refinement orange, best so far green, the bound red; a phase with no
    // applicable evaluation has no entry (and so no colour).
    let drawn = palette_colours(&checked_png(&figure), 60);
    assert!(drawn.is_superset(&BTreeSet::from([2, 3])), "best so far and bound drawn: {drawn:?}");
    assert_eq!(drawn.contains(&0), labels.contains(&"random restart"), "{labels:?} {drawn:?}");
    assert_eq!(drawn.contains(&1), labels.contains(&"coordinate refinement"), "{labels:?} {drawn:?}");
    assert!(labels.len() >= 3, "{labels:?}");
}
