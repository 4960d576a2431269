//! This family's workloads for the `bench` command: Monte Carlo throughput of FedAvg-P and
//! Scaffold-P at the paper's sizes, exact moment runs at the paper's sizes and with 100 clients,
//! and the check of the card's `paper-default` scenario.
//!
//! The Monte Carlo instance is the paper's default setting (000:L677: n = 10, m = 9, K = 25) with
//! du = dv = 5, gamma = 1/(32 L K), eta_u = sqrt(m), eta_v = sqrt(n/m). A client local step is one
//! gradient (a 10 x 10 mat-vec), its noise (10 normal draws and a mat-vec) and the update.

use serde_json::json;

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

/// Client local steps per second the Monte Carlo path is held to on 2 cores or more.
pub const MONTE_CARLO_TARGET: f64 = 9e7;
/// Seconds the exact run at the paper's sizes (T = 1000) is held to.
pub const EXACT_PAPER_TARGET: f64 = 1.0;
/// Seconds the exact run with n = 100 clients (dv = 2, T = 1000) is held to.
pub const EXACT_HUNDRED_TARGET: f64 = 10.0;

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
    let (_, timing) = time(request.repeats, || exact_series(&inst, &alg, rounds, &inc));
    let workload = json!({ "n": n, "m": m, "K": k, "du": du, "dv": dv, "rounds": rounds, "state_dim": inst.layout().state_dim() });
    let mut out = Measurement::new(FAMILY_ID, format!("exact FedAvg-P moments, {name}: seconds"), workload, 1, timing);
    out.target = Some(Target::at_most(target, out.seconds));
    Ok(out)
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
