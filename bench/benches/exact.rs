//! Exact engine vs Monte Carlo on the paper-default scenario (n = 10, m = 9, K = 25, T = 1000), how
//! the exact engine's cost grows with the number of clients n and the dimension du, the exact
//! steady state (the experiments' instance, both algorithms), and one adversarial search.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

use fedbounds::engine::InclusionMoments;
use fedbounds::families::ccyw::algorithm::{FedAvgP, RoundConfig, ScaffoldP};
use fedbounds::families::ccyw::exact::{exact_series, stationary_summary};
use fedbounds::families::ccyw::monte_carlo::simulate;
use fedbounds::families::ccyw::problem::{Coupling, InstanceSpec, QuadraticInstance};

fn instance(n: usize, du: usize, dv: usize) -> QuadraticInstance {
    InstanceSpec { n, du, dv, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b: 1.0, coupling: Coupling::Decoupled, init_distance: 3.0, seed: 11 }
        .build()
        .expect("valid instance")
}

fn fedavg_p(n: usize, m: usize, k: usize) -> FedAvgP {
    let gamma = 1.0 / (32.0 * k as f64);
    let (eta_u, eta_v) = ((m as f64).sqrt(), (n as f64 / m as f64).sqrt());
    FedAvgP { params: RoundConfig { k, m, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v }.check(n).expect("valid") }
}

fn paper_default(c: &mut Criterion) {
    let inst = instance(10, 4, 2);
    let alg = fedavg_p(10, 9, 25);
    let mut g = c.benchmark_group("paper_default_T1000");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("exact", |b| b.iter(|| exact_series(&inst, &alg, 1000, &InclusionMoments::without_replacement(10, 9))));
    for r in [48usize, 192] {
        g.bench_with_input(BenchmarkId::new("monte_carlo_replicates", r), &r, |b, &r| b.iter(|| simulate(&inst, &alg, 1000, 1, r)));
    }
    g.finish();
}

fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("exact_scaling_T100");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    for n in [10usize, 30, 100] {
        let inst = instance(n, 4, 2);
        let alg = fedavg_p(n, n / 2, 5);
        g.bench_with_input(BenchmarkId::new("clients_n_dv2", n), &n, |b, &n| {
            b.iter(|| exact_series(&inst, &alg, 100, &InclusionMoments::without_replacement(n, n / 2)))
        });
    }
    for du in [4usize, 16, 64] {
        let inst = instance(10, du, 2);
        let alg = fedavg_p(10, 5, 5);
        g.bench_with_input(BenchmarkId::new("shared_dim_du_n10", du), &du, |b, _| {
            b.iter(|| exact_series(&inst, &alg, 100, &InclusionMoments::without_replacement(10, 5)))
        });
    }
    g.finish();
}

fn steady_state_and_search(c: &mut Criterion) {
    let mut g = c.benchmark_group("steady_state_and_search");
    g.sample_size(10).measurement_time(Duration::from_secs(6));
    let inst = instance(10, 2, 1);
    let fedavg = fedavg_p(10, 9, 25);
    let scaffold = ScaffoldP { params: fedavg.params };
    let inc = InclusionMoments::without_replacement(10, 9);
    g.bench_function("stationary_fedavg_p_n10_du2_dv1", |b| b.iter(|| stationary_summary(&inst, &fedavg, &inc)));
    g.bench_function("stationary_scaffold_p_n10_du2_dv1", |b| b.iter(|| stationary_summary(&inst, &scaffold, &inc)));
    let claim = fedbounds::families::ccyw::claims::by_id("CCYW-T4.5").expect("registered");
    let opts = fedbounds::families::ccyw::search::SearchOptions { budget: 50, ..Default::default() };
    g.bench_function("search_t4_5_budget_50", |b| b.iter(|| fedbounds::families::ccyw::search::search(claim, &opts)));
    g.finish();
}

criterion_group!(benches, paper_default, scaling, steady_state_and_search);
criterion_main!(benches);
