//! FEDPLT-A6: Assumption 6 "for all W" (001:L151-155) as its own claim row, decided exactly per
//! mask and Hessian. A full mask holds (`rho_k = 1` wherever defined); a proper mask (a zero
//! diagonal entry of `M`) fails, and the counterexample it reports does have `rho_k <= 0` when
//! `rho_k` is recomputed from the gradients.

use nalgebra::{DMatrix, DVector};

use fedbounds::families::fedplt::a6::{decide, A6ForAllW};
use fedbounds::families::fedplt::check::{a6_evaluation, run_scenario};
use fedbounds::families::fedplt::claims::FedPltClaim;
use fedbounds::families::fedplt::family::embedded_card;
use fedbounds::families::fedplt::formulas::Claim;
use fedbounds::families::fedplt::problem::Instance;
use fedbounds::verdict::{ConstantsSource, VerdictKind};

/// Two clients with one coupled (non-diagonal) Hessian each, a shared optimum `W* = 0`.
fn instance(masks: [[f64; 3]; 2]) -> Instance {
    let h0 = DMatrix::from_row_slice(3, 3, &[2.0, 0.6, 0.0, 0.6, 1.0, 0.3, 0.0, 0.3, 0.5]);
    let h1 = DMatrix::from_row_slice(3, 3, &[1.0, -0.4, 0.2, -0.4, 1.5, 0.0, 0.2, 0.0, 0.8]);
    Instance {
        hessians: vec![h0, h1],
        optima: vec![DVector::zeros(3), DVector::zeros(3)],
        weights: vec![0.5, 0.5],
        masks: masks.iter().map(|m| DVector::from_column_slice(m)).collect(),
        sigma: 0.0,
        initial: DVector::from_element(3, 1.0),
        noise: None,
        step_scales: None,
    }
}

/// `rho_k(W) = <m_k .* grad F_k(W), W - W*> / <grad F_k(W), W - W*>` (001:L153) from the gradient.
fn rho_at(inst: &Instance, k: usize, w: &DVector<f64>, w_star: &DVector<f64>) -> f64 {
    let g = inst.gradient(k, w);
    let x = w - w_star;
    inst.masks[k].component_mul(&g).dot(&x) / g.dot(&x)
}

#[test]
fn full_masks_hold() {
    let inst = instance([[1.0; 3], [1.0; 3]]);
    let decision = decide(&inst, &DVector::zeros(3));
    assert!(matches!(decision, A6ForAllW::Holds { lambda_min } if lambda_min > 0.0), "{decision:?}");
    assert_eq!(a6_evaluation(&decision).verdict, VerdictKind::Holds);
}

#[test]
fn a_proper_mask_fails_at_its_counterexample() {
    let inst = instance([[1.0, 1.0, 0.0], [1.0; 3]]);
    let w_star = DVector::zeros(3);
    let decision = decide(&inst, &w_star);
    let A6ForAllW::Fails { client, x, rho, .. } = &decision else { panic!("a proper mask must fail: {decision:?}") };
    assert_eq!(*client, 0);
    let recomputed = rho_at(&inst, 0, &DVector::from_column_slice(x), &w_star);
    assert!(recomputed <= 0.0 && (recomputed - rho).abs() <= 1e-12, "rho {rho} vs recomputed {recomputed}");
    let evaluation = a6_evaluation(&decision);
    assert_eq!(evaluation.verdict, VerdictKind::Violated);
    assert!(evaluation.notes.iter().any(|n| n.contains("counterexample: client 0")), "{:?}", evaluation.notes);
}

/// A client optimum other than `W*` with full masks: `rho_k = 1` wherever it is defined (the
/// `0/0` at `W = a_k` is excluded, as at `W*`), so A6 holds; checked directly on a grid of points.
/// Control: the same optima with a proper mask fail, at a witness where the ratio recomputed from
/// the gradients is 0 (a zero numerator over a positive denominator).
#[test]
fn a_client_optimum_other_than_w_star_holds_with_full_masks_and_fails_with_a_proper_one() {
    let mut inst = instance([[1.0; 3], [1.0; 3]]);
    inst.optima[1] = DVector::from_column_slice(&[0.5, 0.0, 0.0]);
    let w_star = inst.minimizer().unwrap();
    let decision = decide(&inst, &w_star);
    assert!(decision.holds(), "{decision:?}");
    assert_eq!(a6_evaluation(&decision).verdict, VerdictKind::Holds);
    for k in 0..2 {
        for p in [[1.0, -2.0, 0.5], [-0.3, 0.1, 2.0], [0.5, 0.0, 0.0]] {
            let w = DVector::from_column_slice(&p);
            let rho = rho_at(&inst, k, &w, &w_star);
            assert!(rho.is_nan() || rho == 1.0, "client {k} at {p:?}: {rho}");
        }
    }
    inst.masks[1] = DVector::from_column_slice(&[1.0, 0.0, 1.0]);
    let w_star = inst.minimizer().unwrap();
    let decision = decide(&inst, &w_star);
    let A6ForAllW::Fails { client, x, rho, lambda_min: None } = &decision else { panic!("a proper mask must fail: {decision:?}") };
    assert_eq!((*client, *rho), (1, 0.0));
    let w = &w_star + DVector::from_column_slice(x);
    let g = inst.gradient(1, &w);
    assert!(g.dot(&(&w - &w_star)) > 0.0 && rho_at(&inst, 1, &w, &w_star) == 0.0);
    assert_eq!(a6_evaluation(&decision).verdict, VerdictKind::Violated);
}

#[test]
fn the_row_of_a_card_scenario_is_the_decision() {
    let card = embedded_card().unwrap().card;
    let a6 = [Claim::Builtin(FedPltClaim::AssumptionSix)];
    for (name, want) in [("full-masks-shared-optimum", VerdictKind::Holds), ("balanced-layers-shared-optimum", VerdictKind::Violated)] {
        let s = card.scenarios.iter().find(|s| s.name == name).unwrap();
        let s = fedbounds::families::fedplt::check::Scenario { rounds: 5, replicates: 2, ..s.clone() };
        let run = run_scenario(&s, &a6, 1.0).unwrap();
        let rows: Vec<_> = run.results.iter().filter(|r| r.claim == "FEDPLT-A6").collect();
        assert_eq!(rows.len(), 1, "one row, no empirical twin");
        assert_eq!(rows[0].constants, ConstantsSource::Exact);
        assert_eq!(rows[0].evaluation.verdict, want, "{name}");
        assert_eq!(s.expected.get("FEDPLT-A6"), Some(&want), "{name}: the card expects the decision");
    }
}
