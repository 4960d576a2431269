//! FedPLT (Dabaja, El-Azouzi): the card's verdicts reproduced through the registry, negative
//! controls, the exact engine against closed forms and Monte Carlo, and property tests of the
//! masks, the reduction to FedAvg and the decaying-step algebra.

use nalgebra::DVector;
use proptest::prelude::*;

use fedbounds::checker::RunOutcome;
use fedbounds::engine::student_t_interval;
use fedbounds::families::fedplt::algorithm::{FedPltRound, LocalGradient};
use fedbounds::families::fedplt::check::{run_scenario, Scenario, StepSpec};
use fedbounds::families::fedplt::claims::{equality_solution, induction_sides, FedPltClaim, ALL};
use fedbounds::families::fedplt::explicit::InstanceInput;
use fedbounds::families::fedplt::family::embedded_card;
use fedbounds::families::fedplt::formulas::Claim;
use fedbounds::families::fedplt::problem::{InstanceSpec, MaskLayout};
use fedbounds::families::fedplt::runs::{exact_run, sample_paths, RunSetup, Schedule};
use fedbounds::families::fedplt::FAMILY;
use fedbounds::family::{CheckRequest, Silent};
use fedbounds::registry::Registry;
use fedbounds::verdict::{ConstantsSource, VerdictKind};

fn registry() -> Registry {
    Registry::new(vec![&FAMILY]).unwrap()
}

fn scenario(name: &str) -> Scenario {
    embedded_card().unwrap().card.scenarios.into_iter().find(|s| s.name == name).expect("scenario exists")
}

fn spec(masks: MaskLayout, heterogeneity: f64, sigma: f64) -> InstanceSpec {
    InstanceSpec {
        clients: 4,
        dim: 6,
        l: 1.0,
        mu: 0.2,
        sigma,
        heterogeneity,
        init_distance: 2.0,
        rotated: true,
        samples: Some(vec![3, 1, 4, 2]),
        masks,
        seed: 5,
    }
}

#[test]
fn the_card_reproduces_its_verdicts() {
    // The main job's rows (the card's scenarios, checked once for every test that reads them).
    let outcome = crate::main_job::outcome();
    let mismatches = outcome.mismatches();
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    let card = embedded_card().unwrap();
    let expected: usize = card.scenarios.iter().map(|s| s.expected.len() + s.expected_empirical.len()).sum();
    let compared = crate::main_job::family("fedplt").rows.iter().filter(|r| r.expected.is_some()).count();
    assert_eq!(compared, expected, "every expectation of the card is compared");
    assert!(card.scenarios.len() >= 10, "full, balanced and unbalanced partial masks, uncovered, tau > 1, decaying");
    // The repaired schedule's constant: the induction step holds for v = max(b'^2 B/(beta - 1), g D^0).
    for (b, beta, g, d0) in [(3.0f64, 2.0f64, 20.0f64, 9.0f64), (0.5, 1.5, 1.0, 100.0)] {
        let z = 0.2;
        let bp = beta / z;
        let v = (bp * bp * b / (beta - 1.0)).max(g * d0);
        for t in 0..1000 {
            let tg = t as f64 + g;
            let next = (1.0 - bp * z / tg) * v / tg + bp * bp * b / (tg * tg);
            assert!(next <= v / (tg + 1.0) * (1.0 + 1e-12), "t = {t}");
        }
    }
    // The claims as stated need A5 on R^d, which a strongly convex F cannot satisfy.
    let rec = outcome.rows().find(|r| r.claim == "FEDPLT-REC" && r.constants == ConstantsSource::Exact && r.scenario == "full-masks-shared-optimum").unwrap();
    assert_eq!(rec.evaluation.verdict, VerdictKind::NotApplicable);
    assert!(rec.evaluation.failed[0].contains("unbounded on R^d"), "{:?}", rec.evaluation.failed);
}

#[test]
fn shrunk_bounds_are_violated() {
    for (claim, name) in [
        ("FEDPLT-REC", "full-masks-shared-optimum"),
        ("FEDPLT-CONST", "balanced-layers-shared-optimum"),
        ("FEDPLT-DECAY", "decaying-one-dimensional"),
        ("FEDPLT-DECAY~corrected", "decaying-corrected-full-masks"),
    ] {
        let run = |scale: f64| {
            let request = CheckRequest { claims: vec![claim.into()], scenarios: vec![name.into()], bound_scale: Some(scale), ..Default::default() };
            let outcome = registry().check(&request, &Silent).unwrap();
            let row = outcome.rows().find(|r| r.claim == claim && r.constants == ConstantsSource::Empirical).unwrap().clone();
            row
        };
        let as_printed = run(1.0);
        assert_eq!(as_printed.evaluation.verdict, VerdictKind::Holds, "{claim} on {name}");
        let slack = as_printed.evaluation.slack.unwrap();
        let shrunk = run(0.9 / slack);
        assert_eq!(shrunk.evaluation.verdict, VerdictKind::Violated, "{claim} on {name} with the bound below the observed value");
    }
}

#[test]
fn heterogeneous_partial_masks_do_not_converge_to_the_optimum() {
    // The small-step limit is the zero of the masked field psi .* sum_k c_k m_k .* grad F_k, not
    // W*; with full masks it is W*. As printed, with no assumption (L24, L710), that is a
    // violation; Case 2, which concludes it (L708-713), assumes A6, which fails along the run
    // there: not applicable, naming it.
    let limit = |unconditional| [Claim::Builtin(FedPltClaim::Limit { unconditional })];
    let partial = run_scenario(&scenario("disjoint-masks-heterogeneous"), &limit(true), 1.0).unwrap();
    assert!(partial.measured.limit_gap > 0.1, "{}", partial.measured.limit_gap);
    assert_eq!(partial.results[0].evaluation.verdict, VerdictKind::Violated);
    let under_a6 = run_scenario(&scenario("disjoint-masks-heterogeneous"), &limit(false), 1.0).unwrap();
    let e = &under_a6.results[0].evaluation;
    assert_eq!(e.verdict, VerdictKind::NotApplicable);
    assert!(e.failed.iter().any(|f| f.contains("A6 positive masked alignment, along the run")), "{:?}", e.failed);
    let full = run_scenario(&scenario("full-masks-heterogeneous"), &limit(false), 1.0).unwrap();
    assert!(full.measured.limit_gap < 1e-12, "{}", full.measured.limit_gap);
    assert_eq!(full.results[0].evaluation.verdict, VerdictKind::Holds);
    // Uncovered coordinates never move, so W_lim - W* lives where no mask reaches:
    // rho_k(W_lim) = 0 exactly, and the ratios of a run settling there tend to 0 (001:L396 asks
    // min over every t in N > 0), though a finite run sees them positive (rho_ ~ 1e-6 at T = 300).
    let uncovered = run_scenario(&scenario("uncovered-coordinates"), &limit(false), 1.0).unwrap();
    assert_eq!(uncovered.constants.compensation.uncovered, 2);
    assert!(uncovered.alignment.first_failure.is_none() && uncovered.alignment.min > 0.0);
    let e = &uncovered.results[0].evaluation;
    assert_eq!(e.verdict, VerdictKind::NotApplicable);
    assert!(e.failed.iter().any(|f| f.contains("A6 at the limit") && f.contains("rho_k(W_lim) = 0 <= 0")), "{:?}", e.failed);
    let inst = scenario("uncovered-coordinates").instance.build().unwrap();
    for i in [4, 5] {
        assert_eq!(uncovered.limit_point[i], inst.initial[i]);
    }
    // Control, the claim can fail where it applies: A6 holds along the run and at W_lim, and
    // W_lim is 0.19 away from W*.
    let counter = run_scenario(&scenario("limit-counterexample"), &limit(false), 1.0).unwrap();
    let a = counter.measured.limit_alignment.expect("W_lim is not W*");
    assert!(a.holds() && (a.rho - 0.146848).abs() < 1e-6, "{a:?}");
    assert!(counter.alignment.min > 0.1 && (counter.measured.limit_gap - 0.194477).abs() < 1e-6);
    assert_eq!(counter.results[0].evaluation.verdict, VerdictKind::Violated);
}

#[test]
fn the_one_dimensional_decaying_run_is_sigma2_over_t_exactly() {
    // K = d = 1, mu = L = 1, eta^t = 1/(t+1): D^{t+1} = (t/(t+1))^2 D^t + sigma^2/(t+1)^2, so
    // D^t = sigma^2 / t for t >= 1 whatever D^0 (the referee's closed form).
    let s = scenario("decaying-one-dimensional");
    let inst = s.instance.build().unwrap();
    let c = inst.constants().unwrap();
    let w_star = DVector::from_column_slice(&c.w_star);
    let run = exact_run(
        &RunSetup { inst: &inst, psi: &c.compensation.psi, tau: 1, gradient: LocalGradient::Sgd, w_star: &w_star },
        Schedule::Decaying { z: 1.0, beta: 1.0, offset: 1.0 },
        500,
    )
    .unwrap();
    // The observable E||W - W*||^2 = E W^2 - 2 W* E W + W*^2 is exact up to the rounding of terms
    // of size W*^2 (see engine::Observable).
    let scale = w_star.norm_squared();
    for (t, d) in run.distance.iter().enumerate().skip(1) {
        let want = c.sigma2 / t as f64;
        assert!((d - want).abs() <= 1e-13 * (want + scale), "t = {t}: {d} vs {want}");
    }
    // Negative control: the closed form with the wrong noise level is told apart.
    assert!((run.distance[10] - 0.5 * c.sigma2 / 10.0).abs() > 1e-3);
}

#[test]
fn exact_moments_agree_with_monte_carlo() {
    let inst = spec(MaskLayout::Layers { layers: 3, per_client: 2 }, 0.5, 0.6).build().unwrap();
    let c = inst.constants().unwrap();
    let w_star = DVector::from_column_slice(&c.w_star);
    let (schedule, tau, rounds) = (Schedule::Constant(0.2), 3, 20);
    let setup = RunSetup { inst: &inst, psi: &c.compensation.psi, tau, gradient: LocalGradient::Sgd, w_star: &w_star };
    let exact = exact_run(&setup, schedule, rounds).unwrap();
    let paths = sample_paths(&setup, schedule, rounds, 9, 3000);
    let confidence = 1.0 - 0.01 / (rounds + 1) as f64;
    let outside = |values: &[f64]| -> Vec<usize> {
        (0..=rounds)
            .filter(|&t| {
                let xs: Vec<f64> = paths.distance_paths.iter().map(|p| p[t]).collect();
                let iv = student_t_interval(&xs, confidence);
                values[t] < iv.lower - 1e-12 || values[t] > iv.upper + 1e-12
            })
            .collect()
    };
    assert!(outside(&exact.distance).is_empty(), "exact D^t outside the Monte Carlo intervals at {:?}", outside(&exact.distance));
    // Negative control: the noiseless curve is rejected by the same intervals.
    let quiet = exact_run(&RunSetup { gradient: LocalGradient::Full, ..setup }, schedule, rounds).unwrap();
    assert!(!outside(&quiet.distance).is_empty(), "a curve without the noise went unnoticed");
}

#[test]
fn a_half_life_of_an_excess_below_rounding_is_not_counted() {
    use fedbounds::families::fedplt::runs::half_life;
    let inst = spec(MaskLayout::Layers { layers: 3, per_client: 2 }, 0.5, 0.6).build().unwrap();
    let c = inst.constants().unwrap();
    let w_star = DVector::from_column_slice(&c.w_star);
    let setup = RunSetup { inst: &inst, psi: &c.compensation.psi, tau: 1, gradient: LocalGradient::Sgd, w_star: &w_star };
    let d0 = exact_run(&setup, Schedule::Constant(0.2), 1).unwrap().distance[0];
    // A steady state within 1e-12 (relative) of D^0: the excess is the difference's rounding, and
    // the rounds it takes to "halve" would count rounding.
    assert_eq!(half_life(&setup, 0.2, d0 * (1.0 - 1e-12)), None);
    // Control: an excess of three quarters of D^0 halves in a counted number of rounds.
    assert!(half_life(&setup, 0.2, d0 / 4.0).is_some_and(|t| t >= 1));
}

#[test]
fn the_decaying_step_algebra_fails_as_the_referee_says() {
    // The induction step f(t) <= 0 holds iff C >= (B/z^2)(t+2): never for a fixed C = B/z^2.
    for t in [0usize, 1, 10, 1000] {
        let (lhs, rhs) = induction_sides(1.0, 1.0, t);
        assert!(lhs > rhs, "t = {t}");
        let (lhs, rhs) = induction_sides((t + 2) as f64, 1.0, t);
        assert!(lhs <= rhs * (1.0 + 1e-12), "t = {t}: C = (t+2) B/z^2 makes the step hold");
    }
    // The equality solution is (B/z^2) H_t / t and grows against 1/(t+1): (t+1) D^t ~ log t.
    let d = equality_solution(2.0, 100_000);
    assert!((d[0] - 2.0).abs() < 1e-15, "D^1 = B/z^2");
    let scaled = |t: usize| (t + 1) as f64 * d[t - 1];
    assert!(scaled(100_000) > 4.0 * scaled(1), "(t+1) D^t grows: {} vs {}", scaled(100_000), scaled(1));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn psi_times_coverage_is_one_on_covered_coordinates(seed in 0u64..1000, fraction in 0.1f64..1.0, samples in proptest::collection::vec(1u64..50, 4)) {
        let spec = InstanceSpec { samples: Some(samples), seed, ..spec(MaskLayout::Random { fraction }, 0.3, 0.1) };
        let inst = spec.build().unwrap();
        let comp = inst.compensation();
        for i in 0..inst.dim() {
            let coverage: f64 = inst.masks.iter().zip(&inst.weights).map(|(m, c)| c * m[i]).sum();
            if comp.covered[i] {
                prop_assert!((comp.psi[i] * coverage - 1.0).abs() < 1e-12);
                prop_assert!(comp.psi[i] >= 1.0 - 1e-12);
            } else {
                prop_assert_eq!(coverage, 0.0);
            }
        }
    }

    #[test]
    fn full_masks_reduce_fedplt_to_fedavg(seed in 0u64..1000, tau in 1usize..4, eta in 0.01f64..0.9) {
        let inst = InstanceSpec { seed, ..spec(MaskLayout::Full, 1.0, 0.4) }.build().unwrap();
        let c = inst.constants().unwrap();
        prop_assert!(c.compensation.psi.iter().all(|p| (p - 1.0).abs() < 1e-15));
        let round = FedPltRound { instance: &inst, psi: &c.compensation.psi, eta, tau, gradient: LocalGradient::Sgd };
        let noise: Vec<Vec<f64>> = (0..4).map(|k| round.draw_noise(k, seed, 0, 0)).collect();
        let got = fedbounds::engine::RandomAffineRound::apply(&round, &inst.initial, &[0, 1, 2, 3], &noise.concat());
        // FedAvg: the weighted average of the clients' local models.
        let want = (0..4).fold(DVector::zeros(6), |acc, k| acc + round.local_iterates(k, &inst.initial, &noise[k]).pop().unwrap() * inst.weights[k]);
        prop_assert!((got - want).amax() < 1e-12);
    }

    #[test]
    fn the_equality_solution_solves_the_recursion(b in 0.01f64..100.0) {
        let d = equality_solution(b, 200);
        for t in 1..200usize {
            let tf = t as f64;
            let next = tf / (tf + 1.0) * d[t - 1] + b / ((tf + 1.0) * (tf + 1.0));
            prop_assert!((d[t] - next).abs() <= 1e-12 * next);
        }
    }
}

#[test]
fn bad_fedplt_input_names_the_field() {
    let mut s = scenario("balanced-layers-shared-optimum");
    let InstanceInput::Recipe(spec) = &mut s.instance else { panic!("the card's scenarios are recipes") };
    spec.masks = MaskLayout::Layers { layers: 9, per_client: 1 };
    let err = run_scenario(&s, &all(), 1.0).unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("instance.masks.layers"), "{err}");
    let mut s = scenario("balanced-layers-shared-optimum");
    s.step = StepSpec::Constant(-0.1);
    let err = run_scenario(&s, &all(), 1.0).unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("step.constant"), "{err}");
    let mut s = scenario("balanced-layers-shared-optimum");
    s.rounds = 0;
    assert!(run_scenario(&s, &all(), 1.0).unwrap_err().to_string().contains("rounds"));
}

#[test]
fn assumption_6_failing_is_reported_with_where() {
    let run = run_scenario(&scenario("disjoint-masks-heterogeneous"), &[Claim::Builtin(FedPltClaim::ConstantStep)], 1.0).unwrap();
    let (t, k, _, v) = run.alignment.first_failure.expect("A6 fails on this run");
    assert!(v <= 0.0 || v.is_nan());
    let failed = &run.result("FEDPLT-CONST", ConstantsSource::Empirical).unwrap().evaluation.failed;
    assert!(failed.iter().any(|f| f.contains("A6") && f.contains(&format!("round {t}, client {k}"))), "{failed:?}");
}

#[test]
fn the_card_names_every_claim_and_every_inconsistency() {
    use fedbounds::claim::BoundClaim;
    let card = embedded_card().unwrap();
    let mut in_card: Vec<&str> = card.claims.iter().map(|c| c.id.as_str()).collect();
    let mut in_code: Vec<&str> = ALL.iter().map(|c| c.id()).collect();
    in_card.sort_unstable();
    in_code.sort_unstable();
    assert_eq!(in_card, in_code);
    let items: Vec<&str> = card.inconsistencies.iter().map(|i| i.id.as_str()).collect();
    let want: Vec<String> = (1..=11).map(|i| format!("I-PLT{i}")).collect();
    assert_eq!(items, want.iter().map(String::as_str).collect::<Vec<_>>());
}

/// Every built-in claim.
fn all() -> Vec<Claim> {
    ALL.iter().map(|c| Claim::Builtin(*c)).collect()
}

#[test]
fn an_alignment_ratio_decided_by_rounding_is_not_decided() {
    use fedbounds::families::fedplt::runs::{alignment_ratio, masked_within_rounding};
    let inst = spec(MaskLayout::Layers { layers: 3, per_client: 2 }, 0.5, 0.0).build().unwrap();
    let w_star = DVector::from_column_slice(&inst.constants().unwrap().w_star);
    let k = 0;
    let unmasked = (0..w_star.len()).find(|&i| inst.masks[k][i] == 0.0).expect("a coordinate client 0 does not train");
    // Every coordinate the mask sees equals W* in floating point, another does not: the ratio
    // computes to 0 (A6 would fail), though exact arithmetic near there gives a tiny value of
    // either sign. It is within rounding, so it decides nothing.
    let mut w = w_star.clone();
    w[unmasked] += 1.0;
    assert_eq!(alignment_ratio(&inst, k, &w, &w_star).value(), Some(0.0));
    assert!(masked_within_rounding(&inst, k, &w, &w_star));
    // Negative control: a masked coordinate 1e-9 (relative) away is a real distance, decided.
    let masked = (0..w_star.len()).find(|&i| inst.masks[k][i] != 0.0).unwrap();
    w[masked] += 1e-9 * (1.0 + w_star[masked].abs());
    assert!(!masked_within_rounding(&inst, k, &w, &w_star));
    assert!(alignment_ratio(&inst, k, &w, &w_star).value().is_some_and(|r| r != 0.0));
}

#[test]
fn at_the_optimum_is_relative_to_the_vectors_at_every_scale() {
    use fedbounds::families::fedplt::runs::at_optimum;
    let v = |x: &[f64]| DVector::from_column_slice(x);
    // W* = 0 and an iterate 1e-12 from it: a real distance on a small-scale instance (an absolute
    // floor of 1e-9 had called it the optimum, excusing an undefined ratio there from A6).
    assert!(!at_optimum(&v(&[1e-12, 0.0]), &v(&[0.0, 0.0])));
    assert!(!at_optimum(&v(&[2e-12, 1e-12]), &v(&[1e-12, 1e-12])));
    // A diverged iterate is not at the optimum (inf <= 1e-9 inf would say it is).
    assert!(!at_optimum(&v(&[f64::INFINITY, 0.0]), &v(&[1.0, 0.0])) && !at_optimum(&v(&[f64::NAN, 0.0]), &v(&[1.0, 0.0])));
    // Controls: equal vectors, and vectors equal to rounding at unit and large scales.
    assert!(at_optimum(&v(&[0.0, 0.0]), &v(&[0.0, 0.0])));
    assert!(at_optimum(&v(&[1.0 + 1e-13, 2.0]), &v(&[1.0, 2.0])));
    assert!(at_optimum(&v(&[1e12 + 1.0, 0.0]), &v(&[1e12, 0.0])));
}

#[test]
fn cases_1_and_2_are_scoped_to_one_local_step() {
    // The recursion behind Case 1 and Case 2 is proven for tau = 1 (I-PLT8): with tau = 5 the
    // constant-step bound is not applicable and says why.
    let claims = [FedPltClaim::ConstantStep, FedPltClaim::DecayingStep { any_c: false }, FedPltClaim::DecayingCorrected].map(Claim::Builtin);
    let run = run_scenario(&scenario("full-masks-tau-5"), &claims, 1.0).unwrap();
    for id in ["FEDPLT-CONST", "FEDPLT-DECAY", "FEDPLT-DECAY~corrected"] {
        let e = &run.result(id, ConstantsSource::Empirical).unwrap().evaluation;
        assert_eq!(e.verdict, VerdictKind::NotApplicable, "{id}");
        assert!(e.failed.iter().any(|f| f.contains("tau = 1")), "{id}: {:?}", e.failed);
    }
    // Negative control: the same scenario with one local step is in scope, and Case 1 holds.
    let mut one = scenario("full-masks-tau-5");
    one.tau = 1;
    let run = run_scenario(&one, &claims[..1], 1.0).unwrap();
    let e = &run.result("FEDPLT-CONST", ConstantsSource::Empirical).unwrap().evaluation;
    assert_eq!(e.verdict, VerdictKind::Holds, "{:?}", e.failed);
    assert!(!e.failed.iter().any(|f| f.contains("tau = 1")));
}

#[test]
fn assumption_6_for_all_w_is_decided_by_the_masked_symmetric_part() {
    use fedbounds::families::fedplt::a6::{decide, A6ForAllW};
    use fedbounds::families::fedplt::runs::alignment_ratio;
    let w_star = |inst: &fedbounds::families::fedplt::problem::Instance| DVector::from_column_slice(&inst.constants().unwrap().w_star);
    // Full masks, a shared optimum: the symmetric part is H_k itself, positive definite.
    let full = spec(MaskLayout::Full, 0.0, 0.3).build().unwrap();
    assert!(decide(&full, &w_star(&full)).holds(), "{:?}", decide(&full, &w_star(&full)));
    // Negative control: a proper mask with rotated H_k: lambda_min < 0, and the ratio computed
    // directly at W* + the witness is negative, as the decision says.
    let partial = spec(MaskLayout::Layers { layers: 3, per_client: 2 }, 0.0, 0.3).build().unwrap();
    let ws = w_star(&partial);
    match decide(&partial, &ws) {
        A6ForAllW::Fails { client, x, rho, lambda_min: Some(l) } => {
            assert!(l < 0.0, "{l}");
            let direct = alignment_ratio(&partial, client, &(&ws + DVector::from_column_slice(&x)), &ws).value().unwrap();
            assert!(direct < 0.0 && (direct - rho).abs() <= 1e-9 * rho.abs().max(1.0), "{direct} vs {rho}");
        }
        other => panic!("A6 must fail on a proper mask: {other:?}"),
    }
    // Heterogeneous optima with full masks: rho_k = 1 wherever defined (the 0/0 at W = a_k is
    // excluded, as at W*), so A6 holds.
    let het = spec(MaskLayout::Full, 1.0, 0.3).build().unwrap();
    assert!(decide(&het, &w_star(&het)).holds(), "{:?}", decide(&het, &w_star(&het)));
    // Heterogeneous optima with a proper mask: the witness W* + t e_j (j left out) has a zero
    // numerator and a positive denominator, rho_k = 0 computed directly.
    let het_partial = spec(MaskLayout::Layers { layers: 3, per_client: 2 }, 1.0, 0.3).build().unwrap();
    let ws = w_star(&het_partial);
    match decide(&het_partial, &ws) {
        A6ForAllW::Fails { client, x, rho, lambda_min: None } => {
            assert_eq!(rho, 0.0);
            let direct = alignment_ratio(&het_partial, client, &(&ws + DVector::from_column_slice(&x)), &ws).value().unwrap();
            assert_eq!(direct, 0.0, "a zero numerator over a positive denominator");
        }
        other => panic!("A6 must fail on a proper mask: {other:?}"),
    }
}

#[test]
fn holds_that_rest_on_a_vanishing_alignment_are_marked_vacuous() {
    let claims = [Claim::Builtin(FedPltClaim::ConstantStep)];
    let run = run_scenario(&scenario("uncovered-coordinates"), &claims, 1.0).unwrap();
    let horizons = run.alignment.rho_by_horizon();
    assert_eq!(horizons.last().unwrap(), &(300, run.alignment.min));
    assert!(horizons.windows(2).all(|w| w[1].1 <= w[0].1), "rho_ is a running minimum: {horizons:?}");
    assert!(horizons[0].1 > 100.0 * run.alignment.min, "rho_ falls with the horizon here: {horizons:?}");
    let e = &run.result("FEDPLT-CONST", ConstantsSource::Empirical).unwrap().evaluation;
    assert_eq!(e.verdict, VerdictKind::Holds);
    assert!(e.notes.iter().any(|n| n.starts_with("vacuous") && n.contains("T'=300")), "{:?}", e.notes);
    // Negative control: full masks (rho_ = 1) hold with a modest slack and no such note.
    let full = run_scenario(&scenario("full-masks-shared-optimum"), &claims, 1.0).unwrap();
    let e = &full.result("FEDPLT-CONST", ConstantsSource::Empirical).unwrap().evaluation;
    assert_eq!(e.verdict, VerdictKind::Holds);
    assert!(!e.notes.iter().any(|n| n.starts_with("vacuous")), "{:?}", e.notes);
}
