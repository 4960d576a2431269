//! FEDPLT-PSI-STEP: the psi step of Part 2 (001:L404-408), `A = <x, psi .* m_k .* g>` against
//! `B = psi_ <x, m_k .* g>`, with `psi_` over all coordinates (001:L388) or over updated ones
//! (I-PLT4). Mixed-sign coordinates with psi varying on the mask fail; psi constant on the mask
//! holds even with mixed signs (the sign condition is logged, not required); an uncovered
//! coordinate separates the two readings; a card scenario's row is the step's verdict.

use nalgebra::{DMatrix, DVector};

use fedbounds::families::fedplt::check::run_scenario;
use fedbounds::families::fedplt::claims::FedPltClaim;
use fedbounds::families::fedplt::family::embedded_card;
use fedbounds::families::fedplt::formulas::Claim;
use fedbounds::families::fedplt::problem::Instance;
use fedbounds::families::fedplt::psi_step::{evaluation, psi_floors, ClientForm, PsiStepTally};
use fedbounds::verdict::VerdictKind;

/// One client with `H = I` and optimum `a`, so `g = grad F(W) = W - a` at `W = x` (`W* = 0`).
fn instance(mask: &[f64], a: &[f64]) -> Instance {
    let d = mask.len();
    Instance {
        hessians: vec![DMatrix::identity(d, d)],
        optima: vec![DVector::from_column_slice(a)],
        weights: vec![1.0],
        masks: vec![DVector::from_column_slice(mask)],
        sigma: 0.0,
        initial: DVector::zeros(d),
        noise: None,
        step_scales: None,
    }
}

/// The tally of the one point `W = x` with compensation `psi`, and the verdicts of both readings.
fn verdicts(mask: &[f64], a: &[f64], psi: &[f64], x: &[f64]) -> (PsiStepTally, [VerdictKind; 2]) {
    let inst = instance(mask, a);
    let mut tally = PsiStepTally::new(psi_floors(&inst, psi));
    tally.record(&inst, psi, 0, &DVector::from_column_slice(x), &DVector::zeros(mask.len()), (0, 0));
    let v = [0, 1].map(|j| evaluation(&tally, j, 1.0).verdict);
    (tally, v)
}

/// On sampled (noisy) paths a point where the step holds shows nothing about the states the
/// samples missed: client 0's form `Q(x) = 2 x_2^2 + 3 x_2` (psi = (1, 3), `H = I`, `W* = 0`,
/// `a = (-1, -1.5)`) is negative for `x_2` in `(-1.5, 0)`, so the point `x = (1, 1)` (where `Q =
/// 5`) leaves the step inconclusive, where it had held. With a shared optimum (`a = 0`) the form
/// `2 x_2^2` is `>= 0` at every state and the step holds; a deterministic path is decided on its
/// own points; a scaled-down bound (`psi_` doubled) makes the form indefinite, never holds.
#[test]
fn sampled_paths_hold_only_where_the_form_is_nonnegative_at_every_state() {
    let sampled = |a: &[f64], scale: f64| {
        let (tally, _) = verdicts(&[1.0, 1.0], a, &[1.0, 3.0], &[1.0, 1.0]);
        let inst = instance(&[1.0, 1.0], a);
        let e = evaluation(&tally.from_paths(16, &inst, &[1.0, 3.0], &DVector::zeros(2)), 0, scale);
        (e.verdict, e.notes.join(" "))
    };
    let (v, notes) = sampled(&[-1.0, -1.5], 1.0);
    assert_eq!(v, VerdictKind::Inconclusive, "{notes}");
    assert!(notes.contains("client 0's form") && notes.contains("A < B at 0"), "{notes}");
    let (v, notes) = sampled(&[0.0, 0.0], 1.0);
    assert_eq!(v, VerdictKind::Holds, "{notes}");
    assert!(notes.contains("holds at every state"), "{notes}");
    assert_eq!(verdicts(&[1.0, 1.0], &[-1.0, -1.5], &[1.0, 3.0], &[1.0, 1.0]).1, [VerdictKind::Holds; 2], "one deterministic path");
    assert_eq!(sampled(&[0.0, 0.0], 0.5).0, VerdictKind::Inconclusive, "psi_ = 2: the form 2 x_2^2 - x_1^2 is indefinite");
}

/// A client's optimum off `W*` by more than rounding makes the form's linear term count, however
/// small against `||W*||`: at `W* = (1e6, 1e6)`, `a = W* - (0, 1e-7)` gives `Q(x) = 2 x_2^2 +
/// 2e-7 x_2`, negative at `x_2 = -5e-8` (a tolerance of 1e-12 relative to `||W*||` had certified
/// it). Controls: the optimum shared exactly, or off by a rounding of `W*` (1e-9 < 8 eps (|W*_i| +
/// |a_i|)), is `>= 0` at every state.
#[test]
fn an_optimum_off_w_star_by_more_than_rounding_is_no_certificate() {
    let w_star = DVector::from_column_slice(&[1e6, 1e6]);
    let form = |offset: f64| {
        let inst = instance(&[1.0, 1.0], &[1e6, 1e6 - offset]);
        ClientForm::new(&inst, &[1.0, 3.0], 0, &w_star).nonnegative(1.0)
    };
    let (_, b) = form(1e-7).unwrap_err();
    assert!((b - 2e-7).abs() < 1e-9, "{b}");
    assert_eq!(form(0.0), Ok(()));
    assert_eq!(form(1e-9), Ok(()), "an offset within rounding of W*");
}

/// The referee's counterexample: psi = (1, 3), x = (1, -1), g = (2, 0.5): `<x, m .* g> = 1.5 > 0`
/// yet `A = 0.5 < B = 1.5`.
#[test]
fn mixed_signs_with_psi_varying_fail() {
    let (tally, v) = verdicts(&[1.0, 1.0], &[-1.0, -1.5], &[1.0, 3.0], &[1.0, -1.0]);
    assert_eq!(v, [VerdictKind::Violated; 2]);
    let o = tally.outcome(0, 1.0);
    let (_, _, _, a, b) = o.first_failure.unwrap();
    assert!((a - 0.5).abs() < 1e-12 && (b - 1.5).abs() < 1e-12, "A {a}, B {b}");
    assert_eq!(tally.sign_failures, 1);
    assert!((o.min_ratio - 1.0 / 3.0).abs() < 1e-12);
}

/// No point recorded (every one within rounding of `W*`): nothing decides the step, so it is
/// inconclusive, never holds. Control: one point recorded decides it.
#[test]
fn a_tally_without_points_is_inconclusive() {
    let inst = instance(&[1.0, 1.0], &[-1.0, -1.5]);
    let empty = PsiStepTally::new(psi_floors(&inst, &[2.0, 2.0]));
    let e = evaluation(&empty, 0, 1.0);
    assert_eq!(e.verdict, VerdictKind::Inconclusive);
    assert!(e.notes.iter().any(|n| n.starts_with("nothing compared")), "{:?}", e.notes);
    assert_eq!(verdicts(&[1.0, 1.0], &[-1.0, -1.5], &[2.0, 2.0], &[1.0, -1.0]).1, [VerdictKind::Holds; 2]);
}

/// Same point, psi constant on the mask: the step holds with equality although `x_2 g_2 < 0`.
#[test]
fn psi_constant_on_the_mask_holds_despite_mixed_signs() {
    let (tally, v) = verdicts(&[1.0, 1.0], &[-1.0, -1.5], &[2.0, 2.0], &[1.0, -1.0]);
    assert_eq!(v, [VerdictKind::Holds; 2]);
    assert_eq!(tally.sign_failures, 1, "the sign condition failed and is only logged");
    let notes = evaluation(&tally, 0, 1.0).notes.join(" ");
    assert!(notes.contains("x_i g_i < 0 on some masked coordinate at 1"), "{notes}");
    // Negative control: psi_ raised by 1/0.5 (the bound scaled down) fails, by the factor 2.
    let scaled = evaluation(&tally, 0, 0.5);
    assert_eq!(scaled.verdict, VerdictKind::Violated);
    assert!((scaled.slack.unwrap() - 0.5).abs() < 1e-12, "{:?}", scaled.slack);
}

/// Signs agree on every masked coordinate and psi varies: holds with room (`A / B = 3.5 / 2.5`).
#[test]
fn agreeing_signs_hold_with_room() {
    let (tally, v) = verdicts(&[1.0, 1.0], &[-1.0, 0.5], &[1.0, 3.0], &[1.0, 1.0]);
    assert_eq!(v, [VerdictKind::Holds; 2]);
    assert_eq!(tally.sign_failures, 0);
    assert!((evaluation(&tally, 0, 1.0).slack.unwrap() - 1.4).abs() < 1e-12);
}

/// An uncovered coordinate (psi = 1 there) lowers psi_ as printed to 1 below the covered psi = 2:
/// with `<x, m .* g> < 0` the printed step fails and the updated-coordinates reading holds.
#[test]
fn an_uncovered_coordinate_separates_the_readings() {
    let (tally, v) = verdicts(&[1.0, 1.0, 0.0], &[0.5, -3.0, 0.0], &[2.0, 2.0, 1.0], &[1.0, -1.0, 0.0]);
    assert_eq!(psi_floors(&instance(&[1.0, 1.0, 0.0], &[0.0; 3]), &[2.0, 2.0, 1.0]), [1.0, 2.0]);
    assert_eq!(v, [VerdictKind::Violated, VerdictKind::Holds]);
    assert_eq!([0, 1].map(|j| tally.outcome(j, 1.0).failures), [1, 0]);
}

/// A failure where `B <= 0` (A6 fails there: `<x, m .* g> < 0`) gives a slack below 1, `B / A`,
/// so the search's `observed / bound = 1 / slack` exceeds 1 exactly where the step fails; a
/// point that holds with `B < 0` leaves the slack alone.
#[test]
fn a_failure_where_b_is_negative_has_a_slack_below_1() {
    // psi = (1, 3), x = (1, -1), g = (-2, 0.5): terms x_i g_i = (-2, -0.5), <x, m .* g> = -2.5,
    // A = -2 - 1.5 = -3.5 < B = -2.5.
    let (tally, v) = verdicts(&[1.0, 1.0], &[3.0, -1.5], &[1.0, 3.0], &[1.0, -1.0]);
    assert_eq!(v, [VerdictKind::Violated; 2]);
    let e = evaluation(&tally, 0, 1.0);
    assert!((e.slack.unwrap() - 2.5 / 3.5).abs() < 1e-12, "{:?}", e.slack);
    // Control: terms x_i g_i = (1, -3) with psi = (3, 1): A = 0 >= B = -2 holds, and a point
    // that holds with B < 0 gives no slack.
    let (tally, v) = verdicts(&[1.0, 1.0], &[0.0, -4.0], &[3.0, 1.0], &[1.0, -1.0]);
    assert_eq!(v, [VerdictKind::Holds; 2]);
    assert_eq!(evaluation(&tally, 0, 1.0).slack, None);
}

#[test]
fn the_rows_of_card_scenarios_are_the_step() {
    let card = embedded_card().unwrap().card;
    let claims = [false, true].map(|updated_only| Claim::Builtin(FedPltClaim::PsiStep { updated_only }));
    for (name, want) in [("full-masks-heterogeneous", VerdictKind::Holds), ("unbalanced-layers-heterogeneous", VerdictKind::Violated)] {
        let s = card.scenarios.iter().find(|s| s.name == name).unwrap();
        let run = run_scenario(s, &claims, 1.0).unwrap();
        for id in ["FEDPLT-PSI-STEP", "FEDPLT-PSI-STEP~updated-coordinates"] {
            let rows: Vec<_> = run.results.iter().filter(|r| r.claim == id).collect();
            assert_eq!(rows.len(), 1, "{id}: one row, no empirical twin");
            assert_eq!(rows[0].evaluation.verdict, want, "{name} {id}");
            assert_eq!(s.expected.get(id), Some(&want), "{name}: the card expects the computed verdict");
        }
    }
}
