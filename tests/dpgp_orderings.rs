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

/// Each claim of `comparison` has the verdict the card expects, its worst ratio on the side of 1
/// the verdict says (at most 1 when it holds, above when violated), and is violated with the bound
/// scaled just below that ratio. Returns the worst ratios, in the card's order.
fn check(comparison: &str, expected: &[(&str, VerdictKind)]) -> Vec<f64> {
    let got = rows(comparison, None);
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for ((claim, verdict, worst), (id, want)) in got.iter().zip(expected) {
        assert_eq!((claim, verdict), (id, want), "{comparison}: worst ratio {worst}");
        assert!(worst.is_finite() && *worst > 0.0, "{comparison} {claim}: worst ratio {worst}");
        assert_eq!(*worst <= 1.0 + 1e-12, *verdict == VerdictKind::Holds, "{comparison} {claim}: worst ratio {worst} and {verdict:?}");
        if *verdict == VerdictKind::Holds {
            let scaled = rows(comparison, Some(worst * (1.0 - 1e-6)));
            let row = scaled.iter().find(|r| r.0 == *claim).expect("the row again");
            assert_eq!(row.1, VerdictKind::Violated, "negative control: {comparison} {claim} with its bound below the worst ratio {worst}");
        }
    }
    got.iter().map(|r| r.2).collect()
}

#[test]
fn remark1_more_local_steps_is_slower_without_noise_and_faster_where_the_u_noise_dominates() {
    // ring-low: Theorem 1's metric 0.1561, 0.1565, 0.1567, 0.1568 for K_u = 1, 2, 4, 8 (one step
    // of eta_u K_u contracts more than K_u steps of eta_u); sigma_u = 2: 0.1591, 0.1580, 0.1571 for
    // K_u = 1, 2, 8 (the u-noise's variance per round falls as 1/K_u).
    check("remark1-ku", &[("DPGP-R1", VerdictKind::Violated)]);
    check("remark1-ku-noisy", &[("DPGP-R1", VerdictKind::Holds)]);
}

#[test]
fn remark1_variances_slow_the_convergence_and_sigma_g_ties_on_a_ring() {
    // ring-high differs from ring-low in sigma_g^2 only, and the metric is the same to rounding
    // (identical curvature, push-sum weights 1): the worst ratio is 1.
    let worst = check("remark1-variance", &[("DPGP-R1~variance", VerdictKind::Holds)]);
    assert!((worst[0] - 1.0).abs() <= 1e-12, "a tie to rounding: {worst:?}");
}

#[test]
fn remark3_the_fast_terms_share_falls_with_l_u() {
    // Shares 0.266, 0.169, 0.098 for L_u = 2, 4, 8: worst ratio 0.169/0.266, well below 1.
    let worst = check("remark3-lu", &[("DPGP-R3", VerdictKind::Holds)]);
    assert!(worst[0] < 0.9, "{worst:?}");
}

#[test]
fn figure3a_more_neighbours_converge_faster() {
    let holds = VerdictKind::Holds;
    let ids = ["DPGP-R2", "DPGP-R2~stationarity", "DPGP-R2~factor", "DPGP-F3A", "DPGP-F3A~consensus"];
    let worst = check("figure3a-neighbours", &ids.map(|id| (id, holds)));
    // On this comparison the orderings by q, by C/(1-q) and by out-degree agree, so readings of
    // the same metric give the same worst ratio: R2, its factor reading and F3A's consensus read
    // the consensus error; R2's stationarity reading and F3A read Theorem 1's metric.
    assert!(worst[0] == worst[2] && worst[0] == worst[4] && worst[1] == worst[3], "{worst:?}");
    assert!(worst[0] != worst[1], "control: the two metrics differ: {worst:?}");
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
