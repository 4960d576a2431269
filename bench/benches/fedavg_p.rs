//! FedAvg-P throughput in client local steps per second at the paper's sizes (n = 10 clients,
//! m = 9 sampled, K = 25 local steps), with gamma = 1/(32 L K), eta_u = sqrt(m) = 3,
//! eta_v = sqrt(n/m), gamma_u = gamma/eta_u, gamma_v = gamma/eta_v.
//!
//! Every benchmark reports `Throughput::Elements(local steps)`, so criterion prints local steps/s:
//! - `round`: one `Algorithm::round` with pre-drawn `RoundDraws` (m K steps);
//! - `draw+round`: `RoundDraws::draw` + `round` (noise generation included; m K steps);
//! - `replicate_100_rounds`: `run_replicate` for 100 rounds (100 m K steps; includes the per-round
//!   draws and gradient summaries);
//! - `round_du20_dv10`: as `round` with du = 20, dv = 10.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

use fedbounds::families::ccyw::algorithm::{Algorithm, FedAvgP, RoundConfig, RoundDraws};
use fedbounds::families::ccyw::monte_carlo::run_replicate;
use fedbounds::families::ccyw::problem::{Coupling, InstanceSpec, ProblemConstants, QuadraticInstance};

const N: usize = 10;
const M: usize = 9;
const K: usize = 25;
const RUN_SEED: u64 = 1;

fn instance(du: usize, dv: usize) -> QuadraticInstance {
    InstanceSpec { n: N, du, dv, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b: 1.0, coupling: Coupling::Decoupled, init_distance: 3.0, seed: 11 }
        .build()
        .expect("valid instance")
}

/// FedAvg-P with the paper's default steps; `L` is the instance's exact smoothness constant.
fn fedavg_p(inst: &QuadraticInstance) -> FedAvgP {
    let l = ProblemConstants::compute(inst).expect("constants").l;
    let gamma = 1.0 / (32.0 * l * K as f64);
    let eta_u = 3.0;
    let eta_v = (N as f64 / M as f64).sqrt();
    let params = RoundConfig { k: K, m: M, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v }.check(N).expect("valid parameters");
    FedAvgP { params }
}

fn round_bench(c: &mut Criterion, group: &str, du: usize, dv: usize, with_draw: bool) {
    let inst = instance(du, dv);
    let alg = fedavg_p(&inst);
    let state = inst.initial_state().clone();
    let draws = RoundDraws::draw(&inst, M, K, RUN_SEED, 0, 0);
    let mut g = c.benchmark_group(group);
    g.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements((M * K) as u64));
    g.bench_function("round", |b| b.iter(|| alg.round(&inst, black_box(&state), black_box(&draws))));
    if with_draw {
        let mut t = 0u64;
        g.bench_function("draw+round", |b| {
            b.iter(|| {
                t = t.wrapping_add(1);
                let d = RoundDraws::draw(&inst, M, K, RUN_SEED, 0, black_box(t));
                alg.round(&inst, black_box(&state), &d)
            })
        });
    }
    g.finish();
}

fn paper_default(c: &mut Criterion) {
    round_bench(c, "fedavg_p_n10_m9_K25_du4_dv2", 4, 2, true);

    let inst = instance(4, 2);
    let alg = fedavg_p(&inst);
    let rounds = 100;
    let mut g = c.benchmark_group("fedavg_p_n10_m9_K25_du4_dv2");
    g.sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements((rounds * M * K) as u64));
    g.bench_function("replicate_100_rounds", |b| b.iter(|| run_replicate(&inst, &alg, black_box(rounds), RUN_SEED, 0)));
    g.finish();
}

fn larger_dimension(c: &mut Criterion) {
    round_bench(c, "fedavg_p_n10_m9_K25_du20_dv10", 20, 10, false);
}

criterion_group!(benches, paper_default, larger_dimension);
criterion_main!(benches);
