//! DFedPGP's consensus constants against references computed here by hand, not by the family's
//! code: Lemma 3's `C q^(t-s)` envelope of the push-sum deviation (004:L525-532).
//!
//! The time-varying exponential graph on 4 nodes pushes to `i + 1` and `i + 2` in alternate
//! rounds with weight 1/2 each (self-loop included), so `P^t = (I + S^h)/2` with the cyclic
//! shift `S` and `(I + S)(I + S^2)/4 = J/4`: exact averaging after any two consecutive rounds,
//! push-sum weights 1. The deviation `E(l) = max_{i,j} |Phi_ij - 1/m|` of the product of `l`
//! rounds is therefore `3/4, 1/4, 0, 0, ...`, and the envelope through its lags is `C = 3/4`,
//! `q = 1/3`. Negative control: the ring on 3 nodes, `P = (I + S)/2`, contracts the disagreement
//! by `|1 + e^(2 pi i/3)| / 2 = 1/2` per round, not 1/3.

use fedbounds::families::dpgp::topology::{connectivity, deviation_by_lag, GraphSequence, Topology};

#[test]
fn exponential_graph_on_four_nodes_has_the_hand_computed_envelope() {
    let seq = GraphSequence::new(&Topology::Exponential, 4, 40, 0);
    for (t, p) in seq.mixing.iter().enumerate() {
        let hop = if t % 2 == 0 { 1 } else { 2 };
        for i in 0..4 {
            for j in 0..4 {
                let want = if j == i || j == (i + hop) % 4 { 0.5 } else { 0.0 };
                assert_eq!(p[(j, i)], want, "round {t}: weight of {i} -> {j}");
            }
        }
    }
    let by_lag = deviation_by_lag(&seq, 6);
    let want = [0.75, 0.25, 0.0, 0.0, 0.0, 0.0, 0.0];
    for (l, (got, want)) in by_lag.iter().zip(want).enumerate() {
        assert!((got - want).abs() <= 1e-15, "lag {l}: {got} vs {want}");
    }
    let c = connectivity(&Topology::Exponential, 4, 40, 0);
    assert!((c.c - 0.75).abs() <= 1e-12 && (c.q - 1.0 / 3.0).abs() <= 1e-12, "C = {}, q = {}", c.c, c.q);
    assert!((c.delta - 1.0).abs() <= 1e-15, "push-sum weights stay 1: delta = {}", c.delta);
}

#[test]
fn the_ring_on_three_nodes_contracts_by_one_half_not_one_third() {
    let c = connectivity(&Topology::Ring, 3, 200, 0);
    assert!((c.q - 0.5).abs() <= 1e-6, "q = {}", c.q);
    assert!((c.q - 1.0 / 3.0).abs() > 0.1, "the negative control differs from the exponential graph's q");
    // Its deviation at lag l is 2/3 * (1/2)^l exactly: |Phi_ii - 1/3| with
    // Phi = ((I + S)/2)^l = (1/3) J + (2/3) Re(((1 + w)/2)^l ...) peaks at (2/3) 2^-l.
    let by_lag = deviation_by_lag(&GraphSequence::new(&Topology::Ring, 3, 60, 0), 20);
    for (l, e) in by_lag.iter().enumerate() {
        assert!(*e <= 2.0 / 3.0 * 0.5f64.powi(l as i32) * (1.0 + 1e-12) + 1e-15, "lag {l}: {e}");
    }
}
