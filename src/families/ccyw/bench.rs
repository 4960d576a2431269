//! This family's workloads for the `bench` command: Monte Carlo throughput of FedAvg-P and
//! Scaffold-P at the paper's sizes, exact moment runs at the paper's sizes and with 100 clients,
//! and the check of the card's `paper-default` scenario.
//!
//! The Monte Carlo instance is the paper's default setting (000:L677: n = 10, m = 9, K = 25) with
//! du = dv = 5, gamma = 1/(32 L K), eta_u = sqrt(m), eta_v = sqrt(n/m). A client local step is one
//! gradient (a 10 x 10 mat-vec), its noise (10 normal draws and a mat-vec) and the update.

use serde_json::json;

use crate::bench::scaling::{measure_series, peak_memory_bytes, reset_peak_memory};
use crate::bench::{time, BenchRequest, Measurement, Target};
use crate::engine::monte_carlo::in_pool;
use crate::engine::InclusionMoments;
use crate::error::Result;
use crate::family::{CheckRequest, Family, Silent};

use super::algorithm::{Algorithm, FedAvgP, RoundConfig, ScaffoldP};
use super::exact::exact_series;
use super::monte_carlo::{simulate, Trajectory};
use super::problem::{Coupling, InstanceSpec, QuadraticInstance};
use super::FAMILY_ID;

/// Client local steps per second the Monte Carlo path is held to on 2 cores or more: 80% of the
/// 7.5e7 steps/s estimated as the limit of this workload on 2 cores.
pub const MONTE_CARLO_TARGET: f64 = 6e7;
/// Seconds the exact run at the paper's sizes (T = 1000) is held to.
pub const EXACT_PAPER_TARGET: f64 = 0.05;
/// Seconds the exact run with n = 100 clients (dv = 2, T = 1000) is held to.
pub const EXACT_HUNDRED_TARGET: f64 = 0.5;
/// Seconds the exact run with n = 1,000 clients (m = 100, du = 5, dv = 2, K = 25, T = 1000) is
/// held to, and its peak memory (bytes).
pub const EXACT_THOUSAND_TARGET: (f64, f64) = (30.0, 2e9);

/// Monte Carlo rounds and replicates per run.
const MC_ROUNDS: usize = 1000;
const MC_REPLICATES: usize = 16;
const MC_SEED: u64 = 1;

fn instance(n: usize, du: usize, dv: usize) -> Result<QuadraticInstance> {
    InstanceSpec { n, du, dv, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v: 0.5, b: 1.0, coupling: Coupling::Decoupled, init_distance: 3.0, seed: 11 }.build()
}

/// The paper's step sizes for `n`, `m`, `K` (L = 1 on these instances).
fn config(n: usize, m: usize, k: usize) -> RoundConfig {
    let gamma = 1.0 / (32.0 * k as f64);
    let (eta_u, eta_v) = ((m as f64).sqrt(), (n as f64 / m as f64).sqrt());
    RoundConfig { k, m, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v }
}

/// Every number of the replicates, as bits.
fn bits(runs: &[Trajectory]) -> Vec<u64> {
    runs.iter()
        .flat_map(|t| {
            t.final_state
                .iter()
                .copied()
                .chain(t.summaries.iter().flat_map(|s| [s.g_u, s.g_v, s.dissimilarity, s.b_sum, s.objective]))
                .map(f64::to_bits)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn monte_carlo(alg: &dyn Algorithm, inst: &QuadraticInstance, request: &BenchRequest) -> Result<Vec<Measurement>> {
    let layout = inst.layout();
    let steps = (MC_ROUNDS * alg.sampled_per_round() * alg.local_steps() * MC_REPLICATES) as u64;
    let workload = json!({
        "n": layout.n, "m": alg.sampled_per_round(), "K": alg.local_steps(), "du": layout.du, "dv": layout.dv,
        "rounds": MC_ROUNDS, "replicates": MC_REPLICATES, "seed": MC_SEED,
    });
    let run = |threads: usize| -> Result<(Vec<Trajectory>, crate::bench::Timing)> {
        let (out, timing) = time(request.repeats, || in_pool(Some(threads), || simulate(inst, alg, MC_ROUNDS, MC_SEED, MC_REPLICATES)));
        Ok((out?, timing))
    };
    let (single, single_timing) = run(1)?;
    let (parallel, parallel_timing) = run(request.threads)?;
    let name = format!("Monte Carlo {}: client local steps per second", alg.name());
    let one = Measurement::new(FAMILY_ID, name.clone(), workload.clone(), 1, single_timing).with_work(steps, "client local steps");
    let mut all = Measurement::new(FAMILY_ID, name, workload, request.threads, parallel_timing).with_work(steps, "client local steps");
    all.identical_to_single_thread = Some(bits(&single) == bits(&parallel));
    all.target = all.per_second.map(|r| Target::at_least(MONTE_CARLO_TARGET, r));
    Ok(vec![one, all])
}

/// Sizes of an exact run: clients, sampled clients, local steps, du, dv.
type Sizes = (usize, usize, usize, usize, usize);

fn exact(name: &str, (n, m, k, du, dv): Sizes, rounds: usize, target: f64, request: &BenchRequest) -> Result<Measurement> {
    let inst = instance(n, du, dv)?;
    let alg = FedAvgP { params: config(n, m, k).check(n)? };
    let inc = InclusionMoments::without_replacement(n, m);
    let (_, timing) = in_pool(Some(request.threads), || time(request.repeats, || exact_series(&inst, &alg, rounds, &inc)))?;
    let workload = json!({ "n": n, "m": m, "K": k, "du": du, "dv": dv, "rounds": rounds, "state_dim": inst.layout().state_dim() });
    let mut out = Measurement::new(FAMILY_ID, format!("exact FedAvg-P moments, {name}: seconds"), workload, request.threads, timing);
    out.target = Some(Target::at_most(target, out.seconds));
    Ok(out)
}

/// The exact run of FedAvg-P with `n` clients, `m = max(1, n / 10)` sampled (`n` itself up to
/// 10, the paper's m = 9 of 10 aside), `K = 25`, shared dimension `du`, `dv = 2`, for `rounds`.
fn exact_scaled(n: usize, du: usize, rounds: usize) -> Result<()> {
    let m = (n / 10).max(1).max(if n <= 10 { n - 1 } else { 1 });
    let inst = instance(n, du, 2)?;
    let alg = FedAvgP { params: config(n, m, 25).check(n)? };
    std::hint::black_box(exact_series(&inst, &alg, rounds, &InclusionMoments::without_replacement(n, m)));
    Ok(())
}

/// A scaling series: its name, the size varied, the sizes fixed, the points, the run at a point.
type SeriesSpec = (&'static str, &'static str, serde_json::Value, Vec<usize>, fn(usize) -> Result<()>);

/// How the exact engine's time and peak memory grow: against `n` (T = 100, du = 5), against `T`
/// (n = 100, du = 5) and against the shared dimension `du` (n = 100, T = 100), one repetition a
/// point; then Monte Carlo's throughput against replicates and threads
/// ([`monte_carlo_series`]). Each series is a measurement of its largest point carrying the
/// series.
fn scaling_series(threads: usize) -> Result<Vec<Measurement>> {
    let specs: [SeriesSpec; 3] = [
        (
            "exact FedAvg-P against clients",
            "n (clients)",
            json!({ "m": "n / 10", "K": 25, "du": 5, "dv": 2, "rounds": 100 }),
            vec![10, 30, 100, 300, 1000],
            |n| exact_scaled(n, 5, 100),
        ),
        ("exact FedAvg-P against rounds", "T (rounds)", json!({ "n": 100, "m": 10, "K": 25, "du": 5, "dv": 2 }), vec![100, 300, 1000, 3000], |t| {
            exact_scaled(100, 5, t)
        }),
        ("exact FedAvg-P against the shared dimension", "du", json!({ "n": 100, "m": 10, "K": 25, "dv": 2, "rounds": 100 }), vec![2, 5, 10, 20, 40], |du| {
            exact_scaled(100, du, 100)
        }),
    ];
    let exact = specs
        .into_iter()
        .map(|(name, axis, fixed, xs, job)| Ok((in_pool(Some(threads), || measure_series(FAMILY_ID, name, axis, fixed, &xs, 1, job))??, threads)));
    exact.chain(monte_carlo_series(threads)).map(|series| series.map(|(s, threads)| series_measurement(s, threads))).collect()
}

/// How Monte Carlo FedAvg-P's throughput grows with the replicates (on `threads` threads) and
/// with the threads (at [`MC_REPLICATES`] replicates), on the paper's instance of [`bench`]: time
/// against the size, and client local steps per second at each point. With the replicates
/// shared out evenly, time ~ replicates^1 and ~ threads^-1 are perfect scaling.
fn monte_carlo_series(threads: usize) -> impl Iterator<Item = Result<(crate::bench::ScalingSeries, usize)>> {
    let (n, m, k, rounds) = (10, 9, 25, MC_ROUNDS / 4);
    let fixed = json!({ "n": n, "m": m, "K": k, "du": 5, "dv": 5, "rounds": rounds, "seed": MC_SEED });
    let steps = move |replicates: f64| (rounds * m * k) as f64 * replicates;
    let run = move |threads: usize, replicates: usize| -> Result<()> {
        let inst = instance(n, 5, 5)?;
        let alg = FedAvgP { params: config(n, m, k).check(n)? };
        std::hint::black_box(in_pool(Some(threads), || simulate(&inst, &alg, rounds, MC_SEED, replicates))?);
        Ok(())
    };
    let by_replicates =
        measure_series(FAMILY_ID, "Monte Carlo FedAvg-P against replicates", "replicates", fixed.clone(), &[2, 4, 8, 16, 32, 64], 2, |r| run(threads, r));
    let thread_counts: Vec<usize> = (1..=threads).collect();
    let mut fixed_threads = fixed;
    fixed_threads["replicates"] = json!(MC_REPLICATES);
    let by_threads = measure_series(FAMILY_ID, "Monte Carlo FedAvg-P against threads", "threads", fixed_threads, &thread_counts, 2, |t| run(t, MC_REPLICATES));
    [
        by_replicates.map(|s| (s.with_work("client local steps", steps), threads)),
        by_threads.map(|s| (s.with_work("client local steps", move |_| steps(MC_REPLICATES as f64)), threads)),
    ]
    .into_iter()
}

/// A scaling series as a measurement of its largest point, on `threads` threads.
fn series_measurement(series: crate::bench::ScalingSeries, threads: usize) -> Measurement {
    let last = series.points.last().cloned();
    let timing = crate::bench::Timing { seconds: last.iter().map(|p| p.seconds).collect(), load_average: series.load_average, cpu_seconds: Vec::new() };
    let mut out = Measurement::new(FAMILY_ID, format!("{}: seconds at the largest point", series.name), series.fixed.clone(), threads, timing);
    out.peak_bytes = last.and_then(|p| p.peak_bytes);
    out.scaling = Some(series);
    out
}

/// The exact run with 1,000 clients held to [`EXACT_THOUSAND_TARGET`] (time and peak memory).
fn exact_thousand(request: &BenchRequest) -> Result<Measurement> {
    let resettable = reset_peak_memory();
    let (out, timing) = in_pool(Some(request.threads), || time(request.repeats.min(2), || exact_scaled(1000, 5, 1000)))?;
    out?;
    let workload = json!({ "n": 1000, "m": 100, "K": 25, "du": 5, "dv": 2, "rounds": 1000, "state_dim": 2005 });
    let mut m = Measurement::new(FAMILY_ID, "exact FedAvg-P moments, 1,000 clients: seconds", workload, request.threads, timing);
    m.peak_bytes = if resettable { peak_memory_bytes() } else { None };
    let (seconds, bytes) = EXACT_THOUSAND_TARGET;
    m.target = Some(Target { met: m.seconds <= seconds && m.peak_bytes.is_some_and(|b| b <= bytes), ..Target::at_most(seconds, m.seconds) });
    Ok(m)
}

/// The family's workloads.
///
/// # Errors
/// Numerical failures of the runs; a worker pool that cannot start.
pub fn bench(request: &BenchRequest) -> Result<Vec<Measurement>> {
    let (n, m, k) = (10, 9, 25);
    let inst = instance(n, 5, 5)?;
    let params = config(n, m, k).check(n)?;
    let mut out = monte_carlo(&FedAvgP { params }, &inst, request)?;
    out.extend(monte_carlo(&ScaffoldP { params }, &inst, request)?);
    out.push(exact("the paper's sizes", (n, m, k, 5, 5), 1000, EXACT_PAPER_TARGET, request)?);
    out.push(exact("100 clients", (100, 90, k, 5, 2), 1000, EXACT_HUNDRED_TARGET, request)?);
    if request.scaling {
        out.push(exact_thousand(request)?);
        out.extend(scaling_series(request.threads)?);
    }
    let check = CheckRequest { scenarios: vec!["paper-default".into()], threads: Some(request.threads), ..CheckRequest::default() };
    let (report, timing) = time(request.repeats, || super::FAMILY.check(&check, &Silent));
    let rows = report?.rows.len();
    out.push(Measurement::new(
        FAMILY_ID,
        "check of the card's paper-default scenario (exact verdicts of every claim, lemma estimates): seconds",
        json!({ "scenario": "paper-default", "n": 10, "m": 9, "K": 25, "du": 4, "dv": 2, "rounds": 1000, "rows": rows }),
        request.threads,
        timing,
    ));
    Ok(out)
}
