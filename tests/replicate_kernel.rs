//! The allocation-free Monte Carlo kernel against the reference rounds (`Algorithm::round` on
//! `RoundDraws::draw`): the same trajectories bit for bit, for both algorithms, coupled and
//! decoupled instances, partial and full participation, noiseless instances and the reductions
//! `du = 0` and `dv = 0`, local dimensions compiled for and larger ones, `u` and `v_i` stepped
//! apart (decoupled instances); the lemma quantities read along the kernel's local steps; and a
//! changed kernel must be caught by the same comparison.

use fedbounds::families::ccyw::algorithm::{Algorithm, FedAvgP, RoundConfig, ScaffoldP};
use fedbounds::families::ccyw::lemma_estimates::{lemma_replicate, lemma_replicate_reference, LemmaQuantities};
use fedbounds::families::ccyw::monte_carlo::{run_replicate, run_replicate_reference, Trajectory};
use fedbounds::families::ccyw::problem::{Coupling, InstanceSpec, QuadraticInstance};

fn instance(n: usize, du: usize, dv: usize, coupling: Coupling, sigma: f64) -> QuadraticInstance {
    let b = if du > 0 && coupling == Coupling::Decoupled { 1.0 } else { 0.0 };
    InstanceSpec { n, du, dv, l: 1.0, mu: 0.1, sigma_u: sigma, sigma_v: sigma, b, coupling, init_distance: 3.0, seed: 5 }.build().unwrap()
}

fn params(m: usize, k: usize) -> RoundConfig {
    let gamma = 0.01;
    let (eta_u, eta_v) = (3.0, 1.1);
    RoundConfig { k, m, gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v }
}

/// Every number of a trajectory as its bits.
fn bits(t: &Trajectory) -> Vec<u64> {
    let mut out: Vec<u64> = t.final_state.iter().map(|x| x.to_bits()).collect();
    for s in &t.summaries {
        out.extend([s.g_u, s.g_v, s.dissimilarity, s.b_sum, s.objective].map(f64::to_bits));
    }
    out
}

fn assert_identical(inst: &QuadraticInstance, alg: &dyn Algorithm, label: &str) {
    assert!(alg.kernel(inst).is_some(), "{label}: the algorithm has a kernel");
    for replicate in [0, 3] {
        let fast = run_replicate(inst, alg, 40, 9, replicate);
        let reference = run_replicate_reference(inst, alg, 40, 9, replicate);
        assert_eq!(bits(&fast), bits(&reference), "{label}, replicate {replicate}");
    }
}

/// `(n, du, dv, coupling, sigma, m, K)` of the compared instances and rounds.
const CASES: [(usize, usize, usize, Coupling, f64, usize, usize); 9] = [
    (6, 3, 2, Coupling::Decoupled, 0.5, 4, 5),
    (6, 3, 2, Coupling::Coupled, 0.5, 6, 3),
    (5, 4, 3, Coupling::Coupled, 0.0, 2, 4),
    (4, 0, 2, Coupling::Coupled, 0.3, 4, 1),
    (4, 3, 0, Coupling::Decoupled, 0.3, 3, 2),
    (10, 5, 5, Coupling::Decoupled, 0.5, 9, 25),
    // A local dimension above the sizes compiled for (16): the slice path.
    (3, 12, 6, Coupling::Coupled, 0.4, 2, 3),
    // Above 16 too, but decoupled: u (12) and v_i (6) stepped apart, each compiled for.
    (3, 12, 6, Coupling::Decoupled, 0.4, 2, 3),
    // Decoupled and noiseless: the blocks without noise.
    (5, 2, 3, Coupling::Decoupled, 0.0, 3, 4),
];

#[test]
fn the_kernel_reproduces_the_reference_rounds_bit_for_bit() {
    for (n, du, dv, coupling, sigma, m, k) in CASES {
        let inst = instance(n, du, dv, coupling, sigma);
        let p = params(m, k).check(n).unwrap();
        let label = format!("n={n} du={du} dv={dv} {coupling:?} sigma={sigma} m={m} K={k}");
        assert_identical(&inst, &FedAvgP { params: p }, &format!("FedAvg-P {label}"));
        assert_identical(&inst, &ScaffoldP { params: p }, &format!("Scaffold-P {label}"));
    }
}

#[test]
fn the_comparison_catches_a_kernel_with_other_steps() {
    // Negative control: a kernel built with a different gamma_v gives other bits.
    let inst = instance(6, 3, 2, Coupling::Coupled, 0.5);
    let p = params(4, 5).check(6).unwrap();
    let other = RoundConfig { gamma_v: p.gamma_v * (1.0 + 1e-12), ..params(4, 5) }.check(6).unwrap();
    let fast = run_replicate(&inst, &FedAvgP { params: other }, 20, 9, 0);
    let reference = run_replicate_reference(&inst, &FedAvgP { params: p }, 20, 9, 0);
    assert_ne!(bits(&fast), bits(&reference));
}

/// Every number of a replicate's lemma quantities as its bits.
fn lemma_bits(q: &[LemmaQuantities]) -> Vec<u64> {
    q.iter()
        .flat_map(|q| [q.drift, q.memory_drift, q.summary.g_u, q.summary.g_v, q.summary.dissimilarity, q.summary.b_sum, q.summary.objective])
        .map(f64::to_bits)
        .collect()
}

#[test]
fn the_lemma_quantities_through_the_kernel_are_the_reference_s_bit_for_bit() {
    // The virtual sequences (noiseless, every client) and the remembered local iterates of the
    // sampled clients, on the lane path (whole and split blocks) and the slice path.
    for (n, du, dv, coupling, sigma, m, k) in CASES {
        let inst = instance(n, du, dv, coupling, sigma);
        let p = params(m, k).check(n).unwrap();
        let energy: Vec<f64> = (0..n).map(|i| 0.25 * (i + 1) as f64).collect();
        for (alg, name) in [(&FedAvgP { params: p } as &dyn Algorithm, "FedAvg-P"), (&ScaffoldP { params: p }, "Scaffold-P")] {
            assert!(alg.kernel(&inst).is_some(), "{name}: the algorithm has a kernel");
            let fast = lemma_replicate(&inst, alg, 12, 9, 2, &energy);
            let reference = lemma_replicate_reference(&inst, alg, 12, 9, 2, &energy);
            assert_eq!(lemma_bits(&fast), lemma_bits(&reference), "{name} n={n} du={du} dv={dv} {coupling:?} sigma={sigma}");
        }
    }
    // Negative control: other steps give other quantities.
    let inst = instance(6, 3, 2, Coupling::Decoupled, 0.5);
    let p = params(4, 5).check(6).unwrap();
    let other = RoundConfig { gamma_u: p.gamma_u * (1.0 + 1e-12), ..params(4, 5) }.check(6).unwrap();
    let energy = [0.0; 6];
    assert_ne!(
        lemma_bits(&lemma_replicate(&inst, &FedAvgP { params: other }, 12, 9, 2, &energy)),
        lemma_bits(&lemma_replicate_reference(&inst, &FedAvgP { params: p }, 12, 9, 2, &energy))
    );
}
