//! The orderings of runs beyond Remark 2: Remark 1 over `K_u` and over the noise levels
//! (004:L157), Remark 3 over `L_u` (004:L177) and Figure 3a over the out-degree (004:L240), each
//! on the card's comparison with the verdict it computes, and each shown able to fail (its bound,
//! the ratio 1, scaled below the worst ratio seen). A comparison whose scenarios differ along two
//! axes is refused with both keys named.

use fedbounds::families::dpgp::card::{embedded_card, parse_card, CARD};
use fedbounds::family::{CheckRequest, Silent};
use fedbounds::registry::Registry;
use fedbounds::verdict::VerdictKind;

fn rows(comparison: &str, scale: Option<f64>) -> Vec<(&'static str, VerdictKind, f64)> {
    let registry = Registry::new(vec![&fedbounds::families::dpgp::FAMILY]).expect("a registry");
    let request = CheckRequest { scenarios: vec![comparison.to_string()], bound_scale: scale, ..Default::default() };
    let outcome = registry.check(&request, &Silent).expect("the comparison runs");
    if scale.is_none() {
        assert!(outcome.mismatches().is_empty(), "{:?}", outcome.mismatches());
    }
    // The worst ratio is the ordering's estimate at its one checkpoint.
    outcome.rows().map(|r| (r.claim, r.evaluation.verdict, r.evaluation.decisive.map_or(f64::NAN, |p| p.estimate.mean))).collect()
}

/// Each claim of `comparison` has the verdict the card expects and its worst ratio, and is
/// violated with the bound scaled just below that ratio.
fn check(comparison: &str, expected: &[(&str, VerdictKind, f64)]) {
    let got = rows(comparison, None);
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for ((claim, verdict, worst), (id, want, ratio)) in got.iter().zip(expected) {
        assert_eq!((claim, verdict), (id, want), "{comparison}: worst ratio {worst}");
        assert!((worst - ratio).abs() <= 1e-4, "{comparison} {claim}: worst ratio {worst}, expected about {ratio}");
        if *verdict == VerdictKind::Holds {
            let scaled = rows(comparison, Some(worst * (1.0 - 1e-6)));
            let row = scaled.iter().find(|r| r.0 == *claim).expect("the row again");
            assert_eq!(row.1, VerdictKind::Violated, "negative control: {comparison} {claim} with its bound below the worst ratio {worst}");
        }
    }
}

#[test]
fn remark1_more_local_steps_is_slower_without_noise_and_faster_where_the_u_noise_dominates() {
    // ring-low: Theorem 1's metric 0.1561, 0.1565, 0.1567, 0.1568 for K_u = 1, 2, 4, 8 (one step
    // of eta_u K_u contracts more than K_u steps of eta_u); sigma_u = 2: 0.1591, 0.1580, 0.1571 for
    // K_u = 1, 2, 8 (the u-noise's variance per round falls as 1/K_u).
    check("remark1-ku", &[("DPGP-R1", VerdictKind::Violated, 1.00435)]);
    check("remark1-ku-noisy", &[("DPGP-R1", VerdictKind::Holds, 0.99486)]);
}

#[test]
fn remark1_variances_slow_the_convergence_and_sigma_g_ties_on_a_ring() {
    // ring-high differs from ring-low in sigma_g^2 only, and the metric is the same to rounding
    // (identical curvature, push-sum weights 1): the worst ratio is 1.
    check("remark1-variance", &[("DPGP-R1~variance", VerdictKind::Holds, 1.0)]);
}

#[test]
fn remark3_the_fast_terms_share_falls_with_l_u() {
    // Shares 0.266, 0.169, 0.098 for L_u = 2, 4, 8: worst ratio 0.169/0.266.
    check("remark3-lu", &[("DPGP-R3", VerdictKind::Holds, 0.63641)]);
}

#[test]
fn figure3a_more_neighbours_converge_faster() {
    let holds = VerdictKind::Holds;
    check(
        "figure3a-neighbours",
        &[
            ("DPGP-R2", holds, 0.24275),
            ("DPGP-R2~stationarity", holds, 0.99939),
            ("DPGP-R2~factor", holds, 0.24275),
            ("DPGP-F3A", holds, 0.99939),
            ("DPGP-F3A~consensus", holds, 0.24275),
        ],
    );
}

#[test]
fn a_comparison_along_two_axes_is_refused() {
    let card =
        CARD.1.replace("scenarios = [\"ring-low\", \"ring-low-lu4\", \"ring-low-lu8\"]", "scenarios = [\"ring-low\", \"ring-low-lu4\", \"ring-low-ku4\"]");
    assert_ne!(card, CARD.1);
    let err = parse_card(&card, "card").err().expect("two axes").to_string();
    assert!(err.contains("comparisons[") && err.contains("{k_u, l_u}"), "{err}");
    // Negative control: the card as written parses, and its comparison is along L_u.
    assert!(embedded_card().is_ok());
}
