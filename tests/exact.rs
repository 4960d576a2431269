//! The exact engine against the simulated algorithm: agreement round by round with Monte Carlo,
//! a wrong sampling model that the same comparison must catch, and the structural contract the
//! engine relies on.

use nalgebra::DVector;

use fedbounds::engine::{student_t_interval, InclusionMoments};
use fedbounds::families::ccyw::algorithm::{Algorithm, FedAvgP, RoundConfig, RoundDraws, ScaffoldP};
use fedbounds::families::ccyw::exact::exact_series;
use fedbounds::families::ccyw::monte_carlo::simulate;
use fedbounds::families::ccyw::problem::{Coupling, GradientSummary, InstanceSpec, QuadraticInstance};

fn instance(n: usize, coupling: Coupling, sigma: f64, b: f64) -> QuadraticInstance {
    InstanceSpec { n, du: 2, dv: 1, l: 1.0, mu: 0.2, sigma_u: sigma, sigma_v: sigma, b, coupling, init_distance: 2.0, seed: 3 }.build().unwrap()
}

fn fedavg_p(n: usize, m: usize, k: usize) -> FedAvgP {
    let gamma = 0.05;
    let (eta_u, eta_v) = (1.5, 1.2);
    FedAvgP { params: RoundConfig { k, m, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v }.check(n).unwrap() }
}

type Field = (&'static str, fn(&GradientSummary) -> f64);
const FIELDS: [Field; 4] = [("g_u", |g| g.g_u), ("g_v", |g| g.g_v), ("objective", |g| g.objective), ("dissimilarity", |g| g.dissimilarity)];

/// Rounds and fields where the exact value lies outside the Monte Carlo interval, with
/// Bonferroni-corrected confidence over all comparisons.
fn disagreements(exact: &[GradientSummary], mc: &[Vec<GradientSummary>], family_error: f64) -> Vec<String> {
    let comparisons = (exact.len() * FIELDS.len()) as f64;
    let confidence = 1.0 - family_error / comparisons;
    let mut out = Vec::new();
    for (t, e) in exact.iter().enumerate() {
        for (name, f) in FIELDS {
            let xs: Vec<f64> = mc.iter().map(|r| f(&r[t])).collect();
            let iv = student_t_interval(&xs, confidence);
            let v = f(e);
            // Rounding slack for zero-width intervals (the deterministic start).
            let tol = 1e-9 * v.abs().max(1e-12);
            if v < iv.lower - tol || v > iv.upper + tol {
                out.push(format!("t={t} {name}: exact {v:.6} outside [{:.6}, {:.6}]", iv.lower, iv.upper));
            }
        }
    }
    out
}

fn monte_carlo(inst: &QuadraticInstance, alg: &dyn Algorithm, rounds: usize, replicates: usize) -> Vec<Vec<GradientSummary>> {
    simulate(inst, alg, rounds, 17, replicates).into_iter().map(|t| t.summaries).collect()
}

#[test]
fn exact_moments_agree_with_monte_carlo_round_by_round() {
    let inst = instance(4, Coupling::Coupled, 0.6, 2.0);
    let alg = fedavg_p(4, 2, 3);
    let rounds = 30;
    let exact = exact_series(&inst, &alg, rounds, &InclusionMoments::without_replacement(4, 2));
    let mc = monte_carlo(&inst, &alg, rounds, 4000);
    let bad = disagreements(&exact.summaries, &mc, 0.01);
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Negative control: the same comparison rejects the moments of sampling with replacement.
#[test]
fn a_wrong_sampling_model_is_detected() {
    let inst = instance(4, Coupling::Coupled, 0.6, 2.0);
    let alg = fedavg_p(4, 2, 3);
    let rounds = 30;
    let wrong = exact_series(&inst, &alg, rounds, &InclusionMoments::with_replacement(4, 2));
    let mc = monte_carlo(&inst, &alg, rounds, 4000);
    let bad = disagreements(&wrong.summaries, &mc, 0.01);
    assert!(bad.len() >= 5, "with-replacement moments were not rejected: {bad:?}");
}

#[test]
fn inclusion_moments_match_enumeration_of_all_subsets() {
    // Enumerate all m-subsets of n and count: the exact P(i in S) and P(i, j in S).
    for (n, m) in [(5usize, 2usize), (4, 1), (6, 6), (7, 3)] {
        let mut count_i = 0usize;
        let mut count_ij = 0usize;
        let mut total = 0usize;
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != m {
                continue;
            }
            total += 1;
            count_i += (mask & 1) as usize;
            count_ij += ((mask & 1) * ((mask >> 1) & 1)) as usize;
        }
        let inc = InclusionMoments::without_replacement(n, m);
        assert!((inc.p - count_i as f64 / total as f64).abs() < 1e-15);
        assert!((inc.q - count_ij as f64 / total as f64).abs() < 1e-15, "n={n} m={m}");
        assert_eq!(inc.p, inc.p2);
    }
}

#[test]
fn a_deterministic_run_equals_its_exact_expectation() {
    let inst = instance(5, Coupling::Coupled, 0.0, 1.0);
    let alg = fedavg_p(5, 5, 4);
    let exact = exact_series(&inst, &alg, 50, &InclusionMoments::without_replacement(5, 5));
    let run = monte_carlo(&inst, &alg, 50, 1);
    for (t, (e, r)) in exact.summaries.iter().zip(&run[0]).enumerate() {
        for (name, f) in FIELDS {
            let (a, b) = (f(e), f(r));
            assert!((a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12), "t={t} {name}: exact {a} vs run {b}");
        }
    }
}

/// The engine relies on each round being a sum of per-client affine terms (the `Algorithm`
/// contract). Check the identity on random subsets and noise.
#[test]
fn a_round_is_a_sum_of_per_client_terms() {
    let inst = instance(6, Coupling::Coupled, 0.5, 1.0);
    let alg = fedavg_p(6, 3, 4);
    let d = inst.layout().local_dim();
    let z = inst.initial_state().clone() * 0.7;
    for round in 0..10u64 {
        let full = RoundDraws::draw(&inst, 3, 4, 99, 0, round);
        let empty = RoundDraws { sampled: vec![], local_dim: d, steps: 4, noise: vec![] };
        let base = alg.round(&inst, &z, &empty);
        let mut sum = base.clone();
        for (j, &i) in full.sampled.iter().enumerate() {
            let single = RoundDraws { sampled: vec![i], local_dim: d, steps: 4, noise: full.noise[j * 4 * d..(j + 1) * 4 * d].to_vec() };
            sum += alg.round(&inst, &z, &single) - &base;
        }
        let direct = alg.round(&inst, &z, &full);
        assert!((direct - sum).amax() < 1e-12, "round {round}");
    }
}

#[test]
fn second_moments_stay_psd_at_a_hundred_clients() {
    let inst =
        InstanceSpec { n: 100, du: 3, dv: 2, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b: 1.0, coupling: Coupling::Coupled, init_distance: 3.0, seed: 5 }
            .build()
            .unwrap();
    let alg = fedavg_p(100, 10, 5);
    let series = exact_series(&inst, &alg, 60, &InclusionMoments::without_replacement(100, 10));
    assert_eq!(inst.layout().state_dim(), 203);
    assert!(series.min_covariance_eigenvalue > -1e-9 * series.second_moment_scale.max(1.0), "{series:?}");
    assert!(series.summaries.iter().all(|g| g.g_u.is_finite() && g.g_v.is_finite()));
    let first = series.summaries[0];
    let direct = GradientSummary::at(&inst, inst.initial_state());
    assert!((first.g_u - direct.g_u).abs() < 1e-9 * direct.g_u.max(1.0), "round 0 is the deterministic start");
    let _ = DVector::<f64>::zeros(1);
}

#[test]
fn scaffold_p_exact_moments_agree_with_monte_carlo() {
    let inst = instance(4, Coupling::Coupled, 0.6, 2.0);
    let alg = ScaffoldP { params: fedavg_p(4, 2, 3).params };
    let rounds = 30;
    let exact = exact_series(&inst, &alg, rounds, &InclusionMoments::without_replacement(4, 2));
    let mc = monte_carlo(&inst, &alg, rounds, 4000);
    let bad = disagreements(&exact.summaries, &mc, 0.01);
    assert!(bad.is_empty(), "{bad:#?}");
    let wrong = exact_series(&inst, &alg, rounds, &InclusionMoments::with_replacement(4, 2));
    assert!(disagreements(&wrong.summaries, &mc, 0.01).len() >= 5, "negative control: wrong sampling model not detected");
}

#[test]
fn scaffold_p_round_is_a_sum_of_per_client_terms() {
    let inst = instance(6, Coupling::Coupled, 0.5, 1.0);
    let alg = ScaffoldP { params: fedavg_p(6, 3, 4).params };
    let d = inst.layout().local_dim();
    let init = RoundDraws::initialization(&inst, 4, 5, 0);
    let z = alg.initial_state(&inst, &init);
    assert_eq!(z.len(), alg.state_dim(&inst));
    for round in 0..10u64 {
        let full = RoundDraws::draw(&inst, 3, 4, 99, 0, round);
        let empty = RoundDraws { sampled: vec![], local_dim: d, steps: 4, noise: vec![] };
        let base = alg.round(&inst, &z, &empty);
        let mut sum = base.clone();
        for (j, &i) in full.sampled.iter().enumerate() {
            let single = RoundDraws { sampled: vec![i], local_dim: d, steps: 4, noise: full.noise[j * 4 * d..(j + 1) * 4 * d].to_vec() };
            sum += alg.round(&inst, &z, &single) - &base;
        }
        assert!((alg.round(&inst, &z, &full) - sum).amax() < 1e-10, "round {round}");
    }
}

/// The stationary moments are a fixed point of the moment propagation, for FedAvg-P with an outer
/// step as large as Theorem 3.11 asks (eta_u = 10^4, where the listing's `(1 - eta_u) u` form
/// would cancel four digits) and for Scaffold-P (whose conserved `c - mean c_i` makes the
/// equations singular); the exact curve ends there. Negative control: the moments after a few
/// rounds from the start are not a fixed point.
#[test]
fn stationary_moments_are_a_fixed_point_the_curve_reaches() {
    use fedbounds::engine::stationary_moments;
    use fedbounds::families::ccyw::exact::{initial_moments, probe_round};
    let inst = instance(5, Coupling::Coupled, 0.5, 1.0);
    let gamma = 0.01;
    let big = FedAvgP { params: RoundConfig { k: 3, m: 5, gamma_u: gamma / 1e4, gamma_v: gamma, eta_u: 1e4, eta_v: 1.0 }.check(5).unwrap() };
    let scaffold = ScaffoldP {
        params: RoundConfig { k: 3, m: 2, gamma_u: gamma / 2f64.sqrt(), gamma_v: gamma / 2.5f64.sqrt(), eta_u: 2f64.sqrt(), eta_v: 2.5f64.sqrt() }
            .check(5)
            .unwrap(),
    };
    let algs: [(&dyn Algorithm, usize); 2] = [(&big, 5), (&scaffold, 2)];
    for (alg, m) in algs {
        let inc = InclusionMoments::without_replacement(5, m);
        let maps = probe_round(&inst, alg);
        let m0 = initial_moments(&inst, alg);
        let steady = stationary_moments(&maps, &inc, &m0).unwrap().expect("a steady state exists");
        let next = maps.propagate(&steady, &inc);
        let scale = steady.second_moment_scale().max(1.0);
        assert!((&next.mean - &steady.mean).amax() < 1e-12 * scale && (&next.cov - &steady.cov).amax() < 1e-12 * scale, "{}: not a fixed point", alg.name());
        let mut m_t = m0.clone();
        for _ in 0..5 {
            m_t = maps.propagate(&m_t, &inc);
        }
        assert!((maps.propagate(&m_t, &inc).second_moment() - m_t.second_moment()).amax() > 1e-6 * scale, "negative control");
        for _ in 0..20_000 {
            m_t = maps.propagate(&m_t, &inc);
        }
        let gap = (m_t.second_moment() - steady.second_moment()).amax();
        assert!(gap < 1e-8 * scale, "{}: the recursion ends {gap:e} away from the fixed point", alg.name());
    }
}
