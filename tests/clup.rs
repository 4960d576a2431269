//! FedCLUP (Yu, He, Sun, Xue, Li): the card's verdicts reproduced through the registry, negative
//! controls, the exact solutions and expectations against their definitions and Monte Carlo, the
//! engine's rounds against direct iteration, and property tests of the bounds (q1, q2, the
//! minimax shape, Corollary 2's K).

use nalgebra::DVector;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};

use fedbounds::engine::{student_t_interval, RandomAffineRound};
use fedbounds::families::clup::algorithm::{block, initial_state, local_steps, run_alg1, run_alg2, Alg1Round, Batches, Params};
use fedbounds::families::clup::bounds::{self, Opt, Stat, T1_PROOF};
use fedbounds::families::clup::check::{first_branch_thresholds, lambda_grid, run_scenario, theorem1_band_probe, theorem1_probes, Scenario};
use fedbounds::families::clup::claims::ALL;
use fedbounds::families::clup::family::embedded_card;
use fedbounds::families::clup::model::{spectrum, ModelSpec};
use fedbounds::families::clup::FAMILY;
use fedbounds::family::{CheckRequest, Silent};
use fedbounds::registry::Registry;
use fedbounds::verdict::VerdictKind;

fn registry() -> Registry {
    Registry::new(vec![&FAMILY]).unwrap()
}

fn scenario(name: &str) -> Scenario {
    embedded_card().unwrap().card.scenarios.into_iter().find(|s| s.name == name).expect("scenario exists")
}

fn model(m: usize, n: usize, r: f64, seed: u64) -> ModelSpec {
    ModelSpec { m, n, d: 2, r, l: 1.0, noise: 0.5, center: 1.0, seed, features: Default::default() }
}

#[test]
fn the_card_reproduces_its_verdicts_and_shrunk_bounds_fail() {
    // The main job's rows (the card's scenarios, checked once for every test that reads them).
    let outcome = crate::main_job::outcome();
    let mismatches = outcome.mismatches();
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    let card = embedded_card().unwrap();
    let expected: usize = card.scenarios.iter().map(|s| s.expected.len()).sum();
    let compared = crate::main_job::family("clup").rows.iter().filter(|r| r.expected.is_some()).count();
    assert_eq!(compared, expected, "every expectation of the card is compared");
    assert!(card.scenarios.len() >= 7);
    let ids: Vec<&str> = card.claims.iter().map(|c| c.id.as_str()).collect();
    for c in &ALL {
        assert!(ids.contains(&c.id), "{} has a card entry", c.id);
    }
    let inconsistencies: Vec<&str> = card.inconsistencies.iter().map(|i| i.id.as_str()).collect();
    for k in 1..=20 {
        assert!(inconsistencies.contains(&format!("I-CLUP{k}").as_str()), "I-CLUP{k} is recorded");
    }
    for i in card.inconsistencies.iter().filter(|i| !i.checkable) {
        assert!(i.reason.as_deref().is_some_and(|r| r.starts_with("not checkable:")), "{} says why it is not checkable", i.id);
    }
    // Every claim is decided (holds or violated) somewhere: none is a claim that cannot fail to run.
    for c in &ALL {
        let rows: Vec<_> = outcome.rows().filter(|r| r.claim == c.id).collect();
        assert!(!rows.is_empty(), "{} is checked on some default scenario", c.id);
        if c.id != "CLUP-T2~expgamma" {
            assert!(rows.iter().any(|r| r.evaluation.verdict != VerdictKind::NotApplicable), "{} is applicable somewhere", c.id);
        }
    }
    // Negative control: with every bound times 1e-8 (below 1/slack of every row: Corollary 1's
    // slack reaches 3.3e6 at kappa ~ 42), everything that held is violated. Only this family's
    // claims are checked again (the other families ignore their ids).
    let held: std::collections::BTreeSet<String> =
        crate::main_job::family("clup").rows.iter().filter(|r| r.evaluation.verdict == VerdictKind::Holds).map(|r| r.claim.to_string()).collect();
    let shrunk = registry().check(&CheckRequest { claims: held.into_iter().collect(), bound_scale: Some(1e-8), ..Default::default() }, &Silent).unwrap();
    assert!(shrunk.rows().all(|r| r.family == "clup"), "only FedCLUP's claims are checked again");
    for r in crate::main_job::family("clup").rows.iter().filter(|r| r.evaluation.verdict == VerdictKind::Holds) {
        let s = shrunk.rows().find(|s| s.claim == r.claim && s.scenario == r.scenario).unwrap();
        assert_eq!(s.evaluation.verdict, VerdictKind::Violated, "{} on {} with the bound x 1e-8", r.claim, r.scenario);
    }
}

#[test]
fn condition_14_failing_is_not_applicable_with_both_sides() {
    let run = run_scenario(&scenario("few-local-steps"), &ALL, 1.0).unwrap();
    let t2 = run.results.iter().find(|c| c.claim == "CLUP-T2").unwrap();
    assert_eq!(t2.evaluation.verdict, VerdictKind::NotApplicable);
    let failed = t2.evaluation.failed.join("; ");
    assert!(failed.contains("(14)") && failed.contains("given") && failed.contains("required"), "{failed}");
    // The experiments' gamma = 1/L_g: the right side of (14) is 0 on every scenario.
    let exp = run.results.iter().find(|c| c.claim == "CLUP-T2~expgamma").unwrap();
    assert!(exp.evaluation.failed.iter().any(|f| f.contains("required 0")), "{:?}", exp.evaluation.failed);
}

#[test]
fn locals_at_their_solution_break_corollary_3s_printed_term() {
    let run = run_scenario(&scenario("locals-at-solution"), &ALL, 1.0).unwrap();
    for id in ["CLUP-C3", "CLUP-C3~c4"] {
        let c = run.results.iter().find(|c| c.claim == id).unwrap();
        assert_eq!(c.evaluation.verdict, VerdictKind::Violated, "{id}");
    }
    // The proof's V-based bound holds from the same start.
    let local = run.results.iter().find(|c| c.claim == "CLUP-T2-LOCAL").unwrap();
    assert_eq!(local.evaluation.verdict, VerdictKind::Holds);
}

/// Theorem 2's local models are compared from round 1: there the bound `(2m/c1 + 2 L_w^2) V_1`
/// is a statement about `w_{1,K}^(i)`, tightest on this scenario (0.39568 against 1.22798, by
/// hand). Control: the global form's round 1 is `X_1 <= V_1 = X_1 + c1 e_1`, true by definition,
/// and is not compared (its slack is not the tautology's 1).
#[test]
fn theorem_2s_local_models_are_compared_from_round_1() {
    let run = run_scenario(&scenario("explicit-three-clients"), &ALL, 1.0).unwrap();
    let local = &run.results.iter().find(|c| c.claim == "CLUP-T2-LOCAL").unwrap().evaluation;
    assert_eq!(local.verdict, VerdictKind::Holds);
    assert!((local.slack.unwrap() - 1.22798 / 0.39568).abs() < 1e-3, "{:?}", local.slack);
    assert_eq!(local.decisive.as_ref().map(|c| c.rounds), Some(0), "point 0, round 1: {:?}", local.decisive);
    let global = &run.results.iter().find(|c| c.claim == "CLUP-T2").unwrap().evaluation;
    assert!(global.slack.unwrap() > 1.01, "{:?}", global.slack);
}

#[test]
fn the_solution_of_problem_2_satisfies_its_first_order_conditions_and_its_limits() {
    let inst = model(5, 10, 0.3, 4).instance(0).unwrap();
    for lambda in [0.01, 0.3, 4.0] {
        let sol = inst.solve(lambda);
        // (23): grad L_i(w~_i) = lambda (w~_g - w~_i); (24): w~_g = mean w~_i.
        for (c, w) in inst.clients.iter().zip(&sol.locals) {
            let r = &c.a * w - &c.b - (&sol.global - w) * lambda;
            assert!(r.norm() < 1e-10, "(23) at lambda {lambda}: {}", r.norm());
        }
        let mean = sol.locals.iter().fold(DVector::zeros(2), |a, w| a + w) / 5.0;
        assert!((mean - &sol.global).norm() < 1e-10);
        // (129): w~_i = prox(w~_g).
        for (i, w) in sol.locals.iter().enumerate() {
            assert!((inst.prox(i, lambda, &sol.global) - w).norm() < 1e-10);
        }
    }
    let b: Vec<DVector<f64>> = inst.clients.iter().map(|c| c.b.clone()).collect();
    let local = inst.local_train_with(&b);
    let global = inst.global_train_with(&b);
    let small = inst.solve(1e-9);
    let large = inst.solve(1e9);
    for (w, l) in small.locals.iter().zip(&local) {
        assert!((w - l).norm() < 1e-6, "lambda -> 0 is LocalTrain");
    }
    for w in &large.locals {
        assert!((w - &global).norm() < 1e-6, "lambda -> inf is GlobalTrain");
    }
}

#[test]
fn exact_statistical_errors_agree_with_monte_carlo_over_the_labels() {
    let spec = model(4, 8, 0.4, 9);
    let inst = spec.instance(0).unwrap();
    let lambda = 0.7;
    let exact = inst.statistical_errors(lambda);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let reps = 4000;
    let mut samples: Vec<Vec<f64>> = (0..4).map(|_| Vec::with_capacity(reps)).collect();
    for _ in 0..reps {
        let b: Vec<DVector<f64>> = inst
            .clients
            .iter()
            .map(|c| {
                let e = DVector::from_fn(8, |_, _| 0.5 * <StandardNormal as Distribution<f64>>::sample(&StandardNormal, &mut rng));
                &c.b_mean + c.x.transpose() * e / 8.0
            })
            .collect();
        let sol = inst.solve_with(lambda, &b);
        for (i, w) in sol.locals.iter().enumerate() {
            samples[i].push((w - &inst.clients[i].w_star).norm_squared());
        }
    }
    for i in 0..4 {
        let iv = student_t_interval(&samples[i], 0.999);
        assert!(iv.lower <= exact[i] && exact[i] <= iv.upper, "client {i}: exact {} outside [{}, {}]", exact[i], iv.lower, iv.upper);
    }
    // The draw's constants are the paper's definitions: R exact, rho^2 = s^2 L, L per sample.
    let c = inst.constants;
    assert!((c.r - 0.4).abs() < 1e-12 && (c.rho2 - 0.25).abs() < 1e-12 && (c.l_sample - 1.0).abs() < 1e-12);
    assert!(c.mu > 0.0 && c.mu <= c.l_empirical && c.l_empirical <= c.l_sample + 1e-12);
}

#[test]
fn lemma_1_constants_are_attained_with_the_empirical_hessian_l() {
    let inst = model(5, 10, 0.3, 4).instance(1).unwrap();
    let c = inst.constants;
    for lambda in [0.05, 1.0, 20.0] {
        let k = bounds::lemma1(c.mu, c.l_empirical, lambda);
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for i in 0..5 {
            let (h, _) = inst.envelope_hessian(i, lambda);
            let (a, b) = spectrum(&h);
            lo = lo.min(a);
            hi = hi.max(b);
        }
        assert!((lo - k.mu_g).abs() < 1e-10 * k.mu_g.max(1.0), "mu_g attained");
        assert!((hi - k.l_g).abs() < 1e-10 * k.l_g.max(1.0), "L_g attained");
    }
}

#[test]
fn algorithm_1_through_the_engine_is_the_direct_iteration_and_alg2_with_full_batches_is_alg1() {
    let inst = model(4, 6, 0.5, 2).instance(0).unwrap();
    let p = Params { lambda: 0.8, gamma: 0.9, eta: 0.4, k: 3 };
    let z0 = initial_state(&DVector::from_vec(vec![0.3, -0.2]), &vec![DVector::from_vec(vec![1.0, 0.5]); 4]);
    let states = run_alg1(&inst, &p, &z0, 6);
    // Direct iteration of (13) and the server step.
    let mut wg = block(&z0, 0, 2);
    let mut locals: Vec<DVector<f64>> = (0..4).map(|i| block(&z0, i + 1, 2)).collect();
    for state in states.iter().skip(1) {
        let next: Vec<DVector<f64>> = locals.iter().enumerate().map(|(i, w)| local_steps(&inst, i, &p, w, &wg)).collect();
        let grad = next.iter().fold(DVector::zeros(2), |a, w| a + (&wg - w) * p.lambda) / 4.0;
        wg = &wg - grad * p.gamma;
        locals = next;
        assert!((block(state, 0, 2) - &wg).norm() < 1e-12);
        for (i, w) in locals.iter().enumerate() {
            assert!((block(state, i + 1, 2) - w).norm() < 1e-12);
        }
    }
    // The round is a sum of per-client terms (the engine's contract).
    let round = Alg1Round { inst: &inst, params: p };
    let all = round.apply(&z0, &[0, 1, 2, 3], &[]);
    let none = round.apply(&z0, &[], &[]);
    let sum = (0..4).fold(none.clone(), |acc, i| acc + (round.apply(&z0, &[i], &[]) - &none));
    assert!((all - sum).norm() < 1e-12);
    // Algorithm 2 with B = n has no randomness: it is Algorithm 1, both batch readings.
    let sol = inst.solve(p.lambda);
    for batches in [Batches::PerStep, Batches::PerRound] {
        let run = run_alg2(&inst, &p, 6, batches, &z0, &sol.global, 6);
        for (t, e) in run.global_error.iter().enumerate() {
            let direct = (block(&states[t], 0, 2) - &sol.global).norm_squared();
            assert!((e - direct).abs() < 1e-10 * direct.max(1e-12), "{batches:?} round {t}: {e} vs {direct}");
        }
    }
    // With gamma = 1/lambda the server's model is the mean of the local models.
    let pm = Params { gamma: 1.0 / p.lambda, ..p };
    for s in run_alg1(&inst, &pm, &z0, 4).iter().skip(1) {
        let mean = (1..=4).fold(DVector::zeros(2), |a, i| a + block(s, i, 2)) / 4.0;
        assert!((block(s, 0, 2) - mean).norm() < 1e-12);
    }
}

#[test]
fn a_batch_per_round_and_a_batch_per_step_differ_and_both_add_noise() {
    let inst = model(3, 6, 0.5, 5).instance(0).unwrap();
    let p = Params { lambda: 1.0, gamma: 0.9, eta: 0.3, k: 4 };
    let sol = inst.solve(p.lambda);
    let z0 = initial_state(&sol.global, &sol.locals);
    let full = run_alg2(&inst, &p, 6, Batches::PerStep, &z0, &sol.global, 40);
    let step = run_alg2(&inst, &p, 2, Batches::PerStep, &z0, &sol.global, 40);
    let round = run_alg2(&inst, &p, 2, Batches::PerRound, &z0, &sol.global, 40);
    assert!(full.global_error.iter().all(|e| *e < 1e-20), "at the solution with full batches nothing moves");
    let (a, b) = (step.global_error[39], round.global_error[39]);
    assert!(a > 1e-8 && b > 1e-8 && (a - b).abs() > 1e-3 * a.max(b), "noise floors {a} and {b}");
    assert!(step.sigma2 > 0.0);
}

#[test]
fn runs_are_deterministic() {
    // A run of low-r gives every slack of the main job's run of it, bit for bit.
    let run = run_scenario(&scenario("low-r"), &ALL, 1.0).unwrap();
    let main_job = &crate::main_job::family("clup").rows;
    for r in &run.results {
        let row = main_job.iter().find(|m| m.scenario == "low-r" && m.claim == r.claim).unwrap_or_else(|| panic!("{} on low-r in the main job", r.claim));
        assert_eq!(r.evaluation.slack.map(f64::to_bits), row.evaluation.slack.map(f64::to_bits), "{}", r.claim);
    }
    assert!(run.results.iter().filter(|r| r.evaluation.slack.is_some()).count() >= 5, "slacks are compared");
}

#[test]
fn the_unguarded_first_branch_is_negative_below_its_pole() {
    let st = Stat { mu: 0.3, l: 1.0, rho2: 0.25, r: 0.1, n: 12.0, m: 6.0 };
    let (pole, guard) = first_branch_thresholds(&st);
    assert!((4.0 * bounds::g(&st, pole) - 1.0).abs() < 1e-9 && (8.0 * bounds::g(&st, guard) - 1.0).abs() < 1e-9);
    let reading = bounds::T1Reading { guard: bounds::FirstBranchGuard::Unguarded, ..T1_PROOF };
    assert!(bounds::t1_first(&st, pole * (1.0 - 1e-3), reading) < 0.0);
    assert!(bounds::t1_first(&st, guard * 0.99, T1_PROOF).is_infinite());
    assert!(bounds::t1_first(&st, guard * 1.01, T1_PROOF).is_finite());
}

fn unguarded() -> bounds::T1Reading {
    bounds::T1Reading { guard: bounds::FirstBranchGuard::Unguarded, ..T1_PROOF }
}

#[test]
fn the_printed_first_branch_is_negative_inside_its_band_at_every_kappa() {
    for kappa in [1.5, 3.0, 8.0, 16.0, 20.0, 50.0, 200.0, 1000.0] {
        for r in [0.0, 0.05, 2.0] {
            let st = Stat { mu: 1.0 / kappa, l: 1.0, rho2: 0.25, r, n: 12.0, m: 6.0 };
            let (pole, _) = first_branch_thresholds(&st);
            let (probe, width) = bounds::unguarded_negative_probe(&st, false).unwrap();
            assert_eq!(theorem1_band_probe(&st), Some(probe));
            assert!(probe < pole, "kappa {kappa}: the probe lies below the pole");
            let at_probe = bounds::t1_first(&st, probe, unguarded());
            assert!(at_probe < 0.0, "kappa {kappa}, R {r}: the printed branch {at_probe} at the probe");
            // Negative control: just outside the band (4 L^2 g = 1 + 2 width) the branch is positive,
            // so the sign is decided by the band, not by every lambda below the pole.
            if width < 0.5 {
                let outside = bounds::lambda_at_4l2g(&st, 1.0 + 2.0 * width);
                assert!(bounds::t1_first(&st, outside, unguarded()) > 0.0, "kappa {kappa}, R {r}: outside the band");
            }
            // The band narrows like 1/(16 kappa^2): past kappa ~ 16 the old probe lambda_pole (1 - 1e-3)
            // lies below it and sees a positive branch.
            if kappa >= 16.0 && r > 0.0 {
                assert!(width < 1e-3 && bounds::t1_first(&st, pole * (1.0 - 1e-3), unguarded()) > 0.0, "kappa {kappa}: width {width}");
            }
        }
    }
    let none = Stat { mu: 0.5, l: 1.0, rho2: 0.0, r: 0.0, n: 12.0, m: 6.0 };
    assert_eq!(bounds::unguarded_negative_probe(&none, false), None, "no noise and no heterogeneity: no band");
}

#[test]
fn the_printed_theorem_1_is_violated_at_kappa_above_20_only_inside_the_band() {
    let run = run_scenario(&scenario("high-kappa-pole-band"), &ALL, 1.0).unwrap();
    assert!(run.constants.iter().all(|c| c.l_sample / c.mu >= 20.0), "every draw has kappa >= 20");
    let verdict = |id: &str| run.results.iter().find(|c| c.claim == id).unwrap().evaluation.verdict;
    assert_eq!(verdict("CLUP-T1~unguarded"), VerdictKind::Violated);
    assert_eq!(verdict("CLUP-T1"), VerdictKind::Holds);
    let points = &run.points.iter().find(|p| p.0 == "CLUP-T1~unguarded").unwrap().1;
    let bound = |p: &String| p.rsplit_once(" vs ").unwrap().1.parse::<f64>().unwrap();
    let (band, rest): (Vec<&String>, Vec<&String>) = points.iter().partition(|p| p.contains("inside the band"));
    assert_eq!(band.len(), 3, "one band probe per draw");
    assert!(band.iter().all(|p| bound(p) < 0.0), "{band:?}");
    // Negative control: every other point, the pole probes included, has a positive bound, so
    // without the band probe the printed reading would read as holding at this kappa.
    assert!(rest.iter().all(|p| bound(p) > 0.0));
}

#[test]
fn theorem_1_at_its_guard_probe_is_stable_under_one_ulp() {
    let ulps = |x: f64, k: i64| f64::from_bits((x.to_bits() as i64 + k) as u64);
    let mut flips = 0;
    for kappa in [1.5, 3.0, 3.6, 8.0, 20.0, 42.0, 300.0] {
        for (r, n) in [(0.05, 12.0), (2.0, 12.0), (0.3, 3.0)] {
            let st = Stat { mu: 1.0 / kappa, l: 1.0, rho2: 0.25, r, n, m: 6.0 };
            let probe = theorem1_probes(&st)[2];
            let at = bounds::t1_bound(&st, probe, T1_PROOF);
            assert!(bounds::t1_first(&st, probe, T1_PROOF).is_finite(), "kappa {kappa}: the branch is used at the probe");
            for k in [-1, 1] {
                let moved = bounds::t1_bound(&st, ulps(probe, k), T1_PROOF);
                assert!((moved - at).abs() <= 1e-12 * at, "kappa {kappa}, R {r}: {at} -> {moved} after {k} ulp");
            }
            // Negative control: at lambda_guard itself the branch flips between finite and +inf
            // within a few ulps (the rounding the probe avoids).
            let (_, guard) = first_branch_thresholds(&st);
            let finite: Vec<bool> = (-8..=8).map(|k| bounds::t1_first(&st, ulps(guard, k), T1_PROOF).is_finite()).collect();
            flips += usize::from(finite.contains(&true) && finite.contains(&false));
        }
    }
    assert!(flips > 0, "the first branch flips within 8 ulps of lambda_guard on some instance");
}

#[test]
fn theorem_3s_g1_is_read_after_the_first_local_steps_as_theorem_2s_e1() {
    // With B = n Algorithm 2 is deterministic: g_1 is ||(1/m) sum_i (w_{1,K}^(i) - prox_i(w_1^(g)))||^2
    // of the locals after the first K local steps, computed here by direct iteration of (13).
    let inst = model(4, 6, 0.5, 2).instance(0).unwrap();
    let p = Params { lambda: 0.8, gamma: 0.9, eta: 0.4, k: 3 };
    let wg = DVector::from_vec(vec![0.3, -0.2]);
    let w0 = vec![DVector::from_vec(vec![1.0, 0.5]); 4];
    let z0 = initial_state(&wg, &w0);
    let run = run_alg2(&inst, &p, 6, Batches::PerStep, &z0, &inst.solve(p.lambda).global, 3);
    let mean_error =
        |locals: &[DVector<f64>]| (locals.iter().enumerate().fold(DVector::zeros(2), |a, (i, w)| a + w - inst.prox(i, p.lambda, &wg)) / 4.0).norm_squared();
    let after: Vec<DVector<f64>> = (0..4).map(|i| local_steps(&inst, i, &p, &w0[i], &wg)).collect();
    let direct = mean_error(&after);
    assert!((run.g1 - direct).abs() <= 1e-10 * direct, "g_1 {} vs {direct}", run.g1);
    // Negative control: the initial locals (the ~v1-initial reading) give another value.
    let initial = mean_error(&w0);
    assert!((initial - direct).abs() > 0.01 * direct, "the two readings differ: {initial} vs {direct}");
}

#[test]
fn the_t2_figure_reads_v1_from_the_run() {
    use fedbounds::families::clup::report::t2_bound;
    let run = run_scenario(&scenario("low-r"), &ALL, 1.0).unwrap();
    let points = &run.points.iter().find(|p| p.0 == "CLUP-T2").unwrap().1;
    let curve = t2_bound(&run, run.global_error.len());
    assert_eq!(curve.len(), run.global_error.len());
    for p in points.iter().take(5) {
        let (t, rest) = p.strip_prefix("round ").unwrap().split_once(':').unwrap();
        let b: f64 = rest.rsplit_once(" vs ").unwrap().1.parse().unwrap();
        let drawn = curve[t.parse::<usize>().unwrap() - 1].1;
        assert!((drawn - b).abs() <= 1e-6 * b, "round {t}: drawn {drawn} vs the claim's bound {b}");
    }
    // Negative control: a run without its V_1 draws no bound.
    let mut blank = run;
    blank.t2_v1 = f64::NAN;
    assert!(t2_bound(&blank, 10).is_empty());
}

#[test]
fn corollary_2s_trends_and_q_monotonicity_are_verdicts_a_scaled_side_flips() {
    let claims: Vec<_> = ALL.iter().copied().filter(|c| ["CLUP-C2-COMPUTE", "CLUP-C2-MONOTONE", "CLUP-Q-MONOTONE", "CLUP-T3-BALL-B"].contains(&c.id)).collect();
    assert_eq!(claims.len(), 4);
    let mut s = scenario("low-r");
    s.lambda_sweep.reverse(); // listed in any order: compared in increasing lambda
    let run = run_scenario(&s, &claims, 1.0).unwrap();
    for r in &run.results {
        assert_eq!(r.evaluation.verdict, VerdictKind::Holds, "{}", r.claim);
        // Negative control: the compared side times 0.9/slack (a wrong factor just past the slack) flips it.
        let slack = r.evaluation.slack.unwrap();
        assert!(slack.is_finite() && slack > 1.0, "{}: slack {slack}", r.claim);
        let one: Vec<_> = claims.iter().copied().filter(|c| c.id == r.claim).collect();
        let shrunk = run_scenario(&s, &one, 0.9 / slack).unwrap();
        assert_eq!(shrunk.results[0].evaluation.verdict, VerdictKind::Violated, "{} with its side x 0.9/{slack}", r.claim);
    }
    // Corollary 2 (ii) as computed: K x rounds moves by less than 25% over two decades of lambda
    // while the rounds alone more than double.
    let g: Vec<f64> = run.sweep.iter().map(|p| p.gradients).collect();
    let rounds: Vec<f64> = run.sweep.iter().map(|p| p.rounds).collect();
    let spread = |v: &[f64]| v.iter().copied().fold(0.0, f64::max) / v.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(spread(&g) < 1.25 && spread(&rounds) > 2.0, "gradients {g:?}, rounds {rounds:?}");
}

#[test]
fn one_noisy_step_from_the_solution_scales_with_b_as_sampling_without_replacement() {
    // K = 1, one round from the solution: w_2^(g) - w~^(g) = (gamma lambda eta/m) sum_i (the batch
    // mean's gradient noise at w~^(i)), whose variance is V_i (n - B)/(B (n - 1)) per client: the
    // floor at B over the floor at 1 is (n - B)/(B (n - 1)) in closed form, independent of the bound.
    let inst = model(4, 12, 0.5, 3).instance(0).unwrap();
    let p = Params { lambda: 0.7, gamma: 0.9, eta: 0.3, k: 1 };
    let sol = inst.solve(p.lambda);
    let start = initial_state(&sol.global, &sol.locals);
    let floor = |b: usize| run_alg2(&inst, &p, b, Batches::PerStep, &start, &sol.global, 2).global_error[1];
    let (f1, n) = (floor(1), 12.0);
    assert!(f1 > 0.0);
    for b in [2usize, 4, 8] {
        let ratio = floor(b) / f1;
        let closed = (n - b as f64) / (b as f64 * (n - 1.0));
        assert!((ratio - closed).abs() <= 1e-9 * closed, "B = {b}: {ratio} vs {closed}");
        // Negative control: the with-replacement factor 1/B is another number.
        assert!((ratio - 1.0 / b as f64).abs() > 0.05 / b as f64, "B = {b}");
        // CLUP-T3-BALL-B's comparison floor(B) <= floor(1)/B holds here with slack (n - 1)/(n - B).
        assert!(floor(b) <= f1 / b as f64);
    }
}

#[test]
fn the_minimax_shape_holds_across_n_and_r() {
    // The exact error at the best lambda of the grid, over the minimax rate 1/N + min(R^2, 1/n),
    // stays within fixed constants while the rate itself moves over three decades.
    let mut ratios = Vec::new();
    let mut rates = Vec::new();
    for n in [8, 32, 128] {
        for r in [0.01, 0.1, 1.0, 3.0] {
            let spec = model(6, n, r, 11);
            let inst = spec.instance(0).unwrap();
            let best = lambda_grid().into_iter().map(|l| inst.statistical_errors(l).into_iter().fold(0.0, f64::max)).fold(f64::INFINITY, f64::min);
            let rate = 1.0 / (6.0 * n as f64) + (r * r).min(1.0 / n as f64);
            ratios.push(best / rate);
            rates.push(rate);
        }
    }
    let (lo, hi) = ratios.iter().fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    let (rlo, rhi) = rates.iter().fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    assert!(rhi / rlo > 100.0, "the sweep spans the regimes: {rlo} .. {rhi}");
    assert!(lo > 0.01 && hi < 10.0, "error / rate within [{lo}, {hi}]");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn q1_increases_without_bound_and_q2_increases_from_zero(mu in 0.05f64..1.0, kappa in 1.0f64..20.0, rho2 in 0.01f64..4.0, r in 0.0f64..3.0, n in 2usize..200) {
        let st = Stat { mu, l: mu * kappa, rho2, r, n: n as f64, m: 5.0 };
        let (_, guard) = first_branch_thresholds(&st);
        // Where the first branch is defined, q1 = 1/(1/q1) increases in lambda and grows without bound.
        let lambdas: Vec<f64> = (0..40).map(|j| guard * (1.0 + 1e-6) * 10f64.powf(j as f64 / 4.0)).collect();
        let q1: Vec<f64> = lambdas.iter().map(|l| 1.0 / bounds::q1_inv(&st, *l, false)).collect();
        prop_assert!(q1.windows(2).all(|w| w[1] > w[0]), "q1 increasing");
        prop_assert!(q1[39] > 1e6 * q1[0].min(1.0), "q1 unbounded");
        prop_assert_eq!(bounds::q2(&st, 0.0), 0.0);
        let q2: Vec<f64> = (0..20).map(|j| bounds::q2(&st, 0.01 * 2f64.powi(j))).collect();
        prop_assert!(r == 0.0 || q2.windows(2).all(|w| w[1] > w[0]), "q2 increasing");
    }

    #[test]
    fn corollary_2s_k_satisfies_condition_14(mu in 0.01f64..1.0, kappa in 1.0f64..200.0, lambda in 1e-3f64..1e3) {
        let l = mu * kappa;
        let (eta, gamma) = bounds::corollary2_steps(l, lambda);
        let k = bounds::k_134(mu, l, lambda);
        let o = Opt { mu, l, lambda, gamma, eta, k: k as f64, m: 4.0, mu_error: 0.0 };
        let (lhs, rhs) = bounds::condition_14(&o, 4);
        prop_assert!(lhs <= rhs, "K = {} gives {} > {}", k, lhs, rhs);
        prop_assert!(bounds::k_min_14(&o, k).is_some_and(|k14| k14 <= k));
        prop_assert!(bounds::c2_rate(mu, l, lambda) >= bounds::t2_rate(&o) - 1e-15, "the printed rate bounds r (I-CLUP2)");
    }
}

/// Algorithm 2's exact moments against sampled runs of Algorithm 2 written out here in the
/// models' own coordinates `(w_g, w_i)` (the exact moments propagate the relative coordinates
/// `(w_g, w_i - w_g)`), from a start where the local models differ from the global one.
#[test]
fn algorithm_2s_exact_moments_agree_with_sampled_batches() {
    use rand::seq::index::sample;
    let inst = model(3, 6, 0.5, 8).instance(0).unwrap();
    let p = Params { lambda: 1.0, gamma: 0.8, eta: 0.3, k: 3 };
    let (b, m) = (2, 3);
    let sol = inst.solve(p.lambda);
    let start_g = DVector::from_vec(vec![0.3, -0.2]);
    let start_locals: Vec<DVector<f64>> = (0..m).map(|i| DVector::from_vec(vec![0.5 - 0.4 * i as f64, 0.1 * i as f64])).collect();
    let z0 = initial_state(&start_g, &start_locals);
    let rounds = 8;
    for batches in [Batches::PerStep, Batches::PerRound] {
        let exact = run_alg2(&inst, &p, b, batches, &z0, &sol.global, rounds);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let reps = 3000;
        let mut last = Vec::with_capacity(reps);
        for _ in 0..reps {
            let (mut w_g, mut w) = (start_g.clone(), start_locals.clone());
            for _ in 0..rounds - 1 {
                let fixed: Vec<Vec<usize>> = (0..m).map(|_| sample(&mut rng, 6, b).into_vec()).collect();
                for _ in 0..p.k {
                    for (i, f) in fixed.iter().enumerate() {
                        let s = match batches {
                            Batches::PerStep => sample(&mut rng, 6, b).into_vec(),
                            Batches::PerRound => f.clone(),
                        };
                        // w_i - (eta/B) sum_{j in batch} {x_j (x_j^T w_i - y_j) + lambda (w_i - w_g)} (003:L1176)
                        let c = &inst.clients[i];
                        let grad = s.iter().fold(DVector::zeros(2), |acc, &j| {
                            let x = c.x.row(j).transpose();
                            acc + &x * (x.dot(&w[i]) - c.y[j]) + (&w[i] - &w_g) * p.lambda
                        });
                        w[i] = &w[i] - grad * (p.eta / b as f64);
                    }
                }
                // w_g - (gamma/m) sum_i lambda (w_g - w_i)
                let pull = w.iter().fold(DVector::zeros(2), |acc, wi| acc + (&w_g - wi) * p.lambda);
                w_g = &w_g - pull * (p.gamma / m as f64);
            }
            last.push((&w_g - &sol.global).norm_squared());
        }
        let iv = student_t_interval(&last, 0.999);
        let e = exact.global_error[rounds - 1];
        assert!(iv.lower <= e && e <= iv.upper, "{batches:?}: exact {e} outside [{}, {}]", iv.lower, iv.upper);
    }
}

#[test]
fn algorithm_2s_samples_state_their_rank_one_maps_as_the_step_computes_them() {
    use fedbounds::families::clup::algorithm::BatchStep;
    let inst = model(3, 6, 0.5, 8).instance(0).unwrap();
    let step = BatchStep { inst: &inst, client: 1, params: Params { lambda: 1.0, gamma: 0.8, eta: 0.3, k: 3 }, batch: 2 };
    let dim = step.state_dim();
    let basis = |c: usize| DVector::from_fn(dim, |r, _| if r == c { 1.0 } else { 0.0 });
    // A_j e_c as the step computes it: sample j's part of the step from e_c, less its constant.
    let probed = |j: usize, c: usize| {
        let zero = DVector::zeros(dim);
        (step.apply(&basis(c), &[j], &[]) - step.apply(&basis(c), &[], &[])) - (step.apply(&zero, &[j], &[]) - step.apply(&zero, &[], &[]))
    };
    for j in 0..inst.n {
        let (u, v) = step.component_rank_one(j).expect("a sample's map has rank one");
        for c in 0..dim {
            let (want, got) = (probed(j, c), &u * v[c]);
            assert!((&want - &got).amax() <= 1e-14 * (1.0 + want.amax()), "sample {j}, column {c}: {want} vs {got}");
        }
        // Negative control: another sample's factors are not this sample's map.
        let (u2, v2) = step.component_rank_one((j + 1) % inst.n).unwrap();
        let off = (0..dim).map(|c| (probed(j, c) - &u2 * v2[c]).amax()).fold(0.0, f64::max);
        assert!(off > 1e-6, "sample {j}: another sample's factors match ({off:e})");
    }
}

/// q1 of (70) as printed, over every lambda > 0 (CLUP-Q-MONOTONE~unguarded): on low-r's grid q1
/// jumps from positive to negative where 1/q1 crosses 0 below the pole of Gq, a decrease, so the
/// printed statement is violated at that pair. Negative control: the guarded reading (the pairs
/// where g(lambda) <= 1/(8 L^2) at both lambdas) holds on the same run; and on each pair that
/// fails, the two values are of opposite signs or decrease, read from the run's own points.
#[test]
fn q1_as_printed_is_not_monotone_across_the_pole_but_is_under_its_guard() {
    let run = run_scenario(&scenario("low-r"), &ALL, 1.0).unwrap();
    let eval = |id: &str| &run.results.iter().find(|c| c.claim == id).unwrap().evaluation;
    let printed = eval("CLUP-Q-MONOTONE~unguarded");
    assert_eq!(printed.verdict, VerdictKind::Violated, "{printed:?}");
    assert_eq!(eval("CLUP-Q-MONOTONE").verdict, VerdictKind::Holds);
    let points = &run.points.iter().find(|p| p.0 == "CLUP-Q-MONOTONE~unguarded").unwrap().1;
    let values = |p: &String| -> (f64, f64) {
        let (a, b) = p.rsplit_once(": ").unwrap().1.split_once(" vs ").unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    };
    let decreasing: Vec<(f64, f64)> = points.iter().filter(|p| p.contains("q1")).map(values).filter(|(a, b)| a > b).collect();
    assert!(!decreasing.is_empty() && decreasing.iter().any(|(a, b)| *a > 0.0 && *b < 0.0), "{decreasing:?}");
    // Negative q1 values that increase (below the band edge, toward the pole) are not counted
    // as decreases: every decreasing pair crosses from + to -.
    assert!(decreasing.iter().all(|(a, b)| *a > 0.0 && *b < 0.0), "{decreasing:?}");
    assert!(points.iter().filter(|p| p.contains("q1")).map(values).any(|(a, b)| a < 0.0 && b < 0.0 && a < b), "two negative q1 that increase");
}
