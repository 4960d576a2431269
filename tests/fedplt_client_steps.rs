//! Client-specific steps `eta_k = s_k eta^t` (eq. 4 gives each client its own `eta_k`, 001:L57;
//! the analysis takes one `eta^t` for all, 001:L108-110, L194), set by `step_scale` in an explicit
//! instance:
//! - the exact `D^t` of a run with differing steps equals a hand-written moment recursion (one
//!   client, two clients with SGD noise, two clients with `tau = 2` full gradients) to 1e-12;
//! - equal factors reproduce the common-step run bit for bit (factor 1 against no factor, factor 2
//!   against the doubled step);
//! - factors that differ by 1e-6 make every claim built on the common step not applicable, naming
//!   the condition and the steps, and leave the per-client rows (A6, psi step, variance, local
//!   divergence) applicable;
//! - the export writes the factors back.
//!
//! Each has a negative control that shows it can fail.

use fedbounds::families::fedplt::card::scenario_file;
use fedbounds::families::fedplt::check::{run_scenario, ScenarioRun};
use fedbounds::families::fedplt::claims::ALL;
use fedbounds::families::fedplt::formulas::Claim;
use fedbounds::families::fedplt::FAMILY;
use fedbounds::family::{Family, RunOptions};
use fedbounds::verdict::VerdictKind;
use nalgebra::{DMatrix, DVector};
use serde_json::Value;

/// One client's numbers: weight, Hessian, optimum, mask, step factor (`None`: no `step_scale`).
struct Client {
    weight: f64,
    hessian: [[f64; 2]; 2],
    optimum: [f64; 2],
    mask: [u8; 2],
    scale: Option<f64>,
}

const INITIAL: [f64; 2] = [3.0, -2.0];

/// Two clients with diagonal Hessians and a shared optimum, client 0's mask `mask0`, client 1's
/// full: the masked alignment stays positive along the run, so with equal steps the recursion's
/// empirical rows are applicable (and, with full masks, Case 2's).
fn two_aligned(mask0: [u8; 2], s0: Option<f64>, s1: Option<f64>) -> Vec<Client> {
    vec![
        Client { weight: 0.5, hessian: [[2.0, 0.0], [0.0, 1.0]], optimum: [1.0, 1.0], mask: mask0, scale: s0 },
        Client { weight: 0.5, hessian: [[1.0, 0.0], [0.0, 0.5]], optimum: [1.0, 1.0], mask: [1, 1], scale: s1 },
    ]
}

fn two(s0: Option<f64>, s1: Option<f64>) -> Vec<Client> {
    vec![
        Client { weight: 0.5, hessian: [[2.0, 0.5], [0.5, 1.0]], optimum: [1.0, 0.0], mask: [1, 0], scale: s0 },
        Client { weight: 0.5, hessian: [[1.0, 0.0], [0.0, 0.5]], optimum: [0.0, 1.0], mask: [1, 1], scale: s1 },
    ]
}

/// A scenario file: `rounds`, `tau`, `gradient`, `step` (a TOML inline table), `sigma` and the
/// clients.
fn scenario(rounds: usize, tau: usize, gradient: &str, step: &str, sigma: f64, clients: &[Client]) -> String {
    let mut text = format!(
        "family = \"fedplt\"\nname = \"steps\"\nrounds = {rounds}\nreplicates = 4\nseed = 7\ntau = {tau}\ngradient = \"{gradient}\"\nstep = {step}\n\
         [instance]\nsigma = {sigma:?}\ninitial = {INITIAL:?}\n"
    );
    for c in clients {
        text.push_str(&format!("[[instance.clients]]\nweight = {:?}\nhessian = {:?}\noptimum = {:?}\nmask = {:?}\n", c.weight, c.hessian, c.optimum, c.mask));
        if let Some(s) = c.scale {
            text.push_str(&format!("step_scale = {s:?}\n"));
        }
    }
    text
}

fn run_all(text: &str) -> ScenarioRun {
    let builtin: Vec<Claim> = ALL.iter().map(|c| Claim::Builtin(*c)).collect();
    run_scenario(&scenario_file(text, "test.toml").expect("the scenario parses"), &builtin, 1.0).expect("the scenario runs")
}

/// The hand-written recursion of one FedPLT round with client steps `eta_k = s_k eta`, in the
/// error `e = W - W*`: client `k` runs `x <- x - eta_k M_k (H_k (x - a_k) + (sigma / sqrt(d)) xi)`
/// `tau` times from `W`, and `W' = W + Psi sum_k c_k M_k (x_k - W)` (001:L57, L88-96). For
/// `tau = 1` the round is `e' = A e + b + noise` with `A = I - Psi sum_k c_k eta_k M_k H_k`,
/// `b = -Psi sum_k c_k eta_k M_k H_k (W* - a_k)`, noise covariance
/// `sum_k (c_k eta_k)^2 (sigma^2 / d) Psi M_k Psi`; then `D = ||E e||^2 + tr Cov e`. For
/// `sigma = 0` (or the full gradient) any `tau` is iterated directly.
fn hand_distance(clients: &[Client], eta: f64, sigma: f64, tau: usize, rounds: usize) -> Vec<f64> {
    let d = 2;
    let h: Vec<DMatrix<f64>> = clients.iter().map(|c| DMatrix::from_fn(d, d, |i, j| c.hessian[i][j])).collect();
    let a: Vec<DVector<f64>> = clients.iter().map(|c| DVector::from_column_slice(&c.optimum)).collect();
    let m: Vec<DMatrix<f64>> = clients.iter().map(|c| DMatrix::from_fn(d, d, |i, j| if i == j { f64::from(c.mask[i]) } else { 0.0 })).collect();
    let cw: Vec<f64> = clients.iter().map(|c| c.weight).collect();
    let step: Vec<f64> = clients.iter().map(|c| c.scale.unwrap_or(1.0) * eta).collect();
    let hbar = (0..clients.len()).fold(DMatrix::zeros(d, d), |s, k| s + &h[k] * cw[k]);
    let rhs = (0..clients.len()).fold(DVector::zeros(d), |s, k| s + &h[k] * &a[k] * cw[k]);
    let w_star = hbar.cholesky().expect("positive definite").solve(&rhs);
    let coverage = (0..clients.len()).fold(DMatrix::zeros(d, d), |s, k| s + &m[k] * cw[k]);
    let psi = DMatrix::from_fn(d, d, |i, j| if i == j { 1.0 / coverage[(i, i)] } else { 0.0 });
    let mut mean = DVector::from_column_slice(&INITIAL) - &w_star;
    let mut cov = DMatrix::<f64>::zeros(d, d);
    let mut out = vec![mean.norm_squared()];
    for _ in 0..rounds {
        if tau == 1 {
            let drift = (0..clients.len()).fold(DMatrix::zeros(d, d), |s, k| s + &m[k] * &h[k] * (cw[k] * step[k]));
            let a_map = DMatrix::identity(d, d) - &psi * drift;
            let b = (0..clients.len()).fold(DVector::zeros(d), |s, k| s - &psi * &m[k] * &h[k] * (&w_star - &a[k]) * (cw[k] * step[k]));
            let noise = (0..clients.len()).fold(DMatrix::zeros(d, d), |s, k| s + &psi * &m[k] * &psi * ((cw[k] * step[k]).powi(2) * sigma * sigma / d as f64));
            mean = &a_map * &mean + b;
            cov = &a_map * &cov * a_map.transpose() + noise;
        } else {
            assert_eq!(sigma, 0.0, "tau > 1 by hand without noise only");
            let w = &mean + &w_star;
            let update = (0..clients.len()).fold(DVector::zeros(d), |s, k| {
                let mut x = w.clone();
                for _ in 0..tau {
                    x -= &m[k] * &h[k] * (&x - &a[k]) * step[k];
                }
                s + &m[k] * (x - &w) * cw[k]
            });
            mean = &w + &psi * update - &w_star;
        }
        out.push(mean.norm_squared() + cov.trace());
    }
    out
}

fn assert_close(run: &[f64], hand: &[f64], what: &str) {
    assert_eq!(run.len(), hand.len(), "{what}");
    for (t, (x, y)) in run.iter().zip(hand).enumerate() {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1e-300), "{what}: D^{t} = {x} against the hand recursion's {y}");
    }
}

fn distance(text: &str) -> Vec<f64> {
    run_scenario(&scenario_file(text, "test.toml").expect("the scenario parses"), &[], 1.0).expect("the scenario runs").distance
}

#[test]
fn client_steps_follow_the_hand_recursion() {
    let step = "{ constant = 0.1 }";
    // One client with factor 3: its step is 0.3.
    let one = vec![Client { weight: 1.0, hessian: [[2.0, 0.5], [0.5, 1.0]], optimum: [1.0, 0.0], mask: [1, 1], scale: Some(3.0) }];
    assert_close(&distance(&scenario(15, 1, "sgd", step, 0.3, &one)), &hand_distance(&one, 0.1, 0.3, 1, 15), "one client, s = 3");
    // Two clients, overlapping masks (psi = [1, 2]), steps 0.1 and 0.25, SGD noise.
    let clients = two(Some(1.0), Some(2.5));
    let hand = hand_distance(&clients, 0.1, 0.3, 1, 25);
    assert_close(&distance(&scenario(25, 1, "sgd", step, 0.3, &clients)), &hand, "two clients, s = [1, 2.5], SGD");
    // Two clients, two full-gradient local steps each.
    let full = hand_distance(&clients, 0.1, 0.0, 2, 25);
    assert_close(&distance(&scenario(25, 2, "full", step, 0.0, &clients)), &full, "two clients, s = [1, 2.5], tau = 2");
    // Negative control: the common-step run (no factors) is far from the same hand recursion.
    let common = distance(&scenario(25, 1, "sgd", step, 0.3, &two(None, None)));
    assert!(common.iter().zip(&hand).skip(1).any(|(x, y)| (x - y).abs() > 1e-3 * y), "the comparison sees the client steps");
}

/// The run JSON without its scenario hash (the factors as written are part of it).
fn unhashed(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(&FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")).expect("run JSON");
    assert!(v.as_object_mut().and_then(|o| o.remove("scenario_hash")).is_some(), "the run JSON has a scenario_hash");
    v
}

#[test]
fn equal_client_steps_are_the_common_step_bit_for_bit() {
    for (step, gradient, tau) in
        [("{ constant_over_l = 0.5 }", "sgd", 1), ("{ decaying = { beta = 1.0, offset = 1.0 } }", "sgd", 1), ("{ constant = 0.05 }", "full", 2)]
    {
        let absent = scenario(40, tau, gradient, step, 0.3, &two(None, None));
        let ones = scenario(40, tau, gradient, step, 0.3, &two(Some(1.0), Some(1.0)));
        assert_eq!(unhashed(&absent), unhashed(&ones), "{step}: factors 1 against none");
        let (a, b) = (run_all(&absent), run_all(&ones));
        assert_eq!(format!("{:?}", a.results), format!("{:?}", b.results), "{step}: every result, bit for bit");
        assert_eq!(a.distance.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), b.distance.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }
    // Factor 2 on every client is the step doubled (0.05 * 2 = 0.1 exactly).
    let doubled = unhashed(&scenario(40, 1, "sgd", "{ constant = 0.05 }", 0.3, &two(Some(2.0), Some(2.0))));
    assert_eq!(doubled, unhashed(&scenario(40, 1, "sgd", "{ constant = 0.1 }", 0.3, &two(None, None))), "s = 2 is the step 2 eta");
    // Negative control: factors 2 and 2 + 1e-6 run to another D^t, which the comparison sees.
    let near = unhashed(&scenario(40, 1, "sgd", "{ constant = 0.05 }", 0.3, &two(Some(2.0), Some(2.000001))));
    assert_ne!(doubled["distance"], Value::Null, "the run JSON carries D^t");
    assert_ne!(near, doubled, "a 1e-6 change of one factor changes the run");
}

/// The claims whose statement takes one step `eta^t` for every client.
fn common_step_claim(id: &str) -> bool {
    !["FEDPLT-A6", "FEDPLT-PSI-STEP", "FEDPLT-VAR-L276", "FEDPLT-DIV-L592"].iter().any(|p| id.starts_with(p))
}

const DIFFER: &str = "client steps differ: min eta_k";

#[test]
fn steps_differing_by_1e_6_make_the_common_step_claims_not_applicable() {
    let mut flips = Vec::new();
    let steps = [
        ("{ constant_over_l = 0.5 }", [1, 0]),
        ("{ decaying = { beta = 1.0, offset = 1.0 } }", [1, 1]),
        ("{ decaying = { beta = 2.0, offset = 4.0 } }", [1, 1]),
    ];
    for (step, mask0) in steps {
        let equal = run_all(&scenario(60, 1, "sgd", step, 0.3, &two_aligned(mask0, Some(1.0), Some(1.0))));
        let differ = run_all(&scenario(60, 1, "sgd", step, 0.3, &two_aligned(mask0, Some(1.0), Some(1.000001))));
        assert_eq!(equal.results.len(), differ.results.len());
        for (e, d) in equal.results.iter().zip(&differ.results) {
            let why = d.evaluation.failed.join("; ");
            let named = why.contains(DIFFER) && why.contains("001:L108-110");
            if common_step_claim(d.claim) {
                assert_eq!(d.evaluation.verdict, VerdictKind::NotApplicable, "{step}: {} {:?}", d.claim, d.constants);
                assert!(named, "{step}: {} does not name the common step: {why}", d.claim);
                // Negative control: with equal factors the condition is not among the reasons.
                assert!(!e.evaluation.failed.join("; ").contains(DIFFER), "{step}: {}", e.claim);
                if e.evaluation.verdict != VerdictKind::NotApplicable {
                    flips.push(format!("{step}: {} {:?} {}", d.claim, d.constants, e.evaluation.verdict));
                }
            } else {
                assert!(!named, "{step}: {} is taken client by client: {why}", d.claim);
                assert_eq!(e.evaluation.verdict, d.evaluation.verdict, "{step}: {} {:?}", d.claim, d.constants);
            }
        }
    }
    // Every claim family flips somewhere: the recursion and Case 1 (constant step), Case 2 and its
    // proof steps (the paper's decaying step), the corrected Case 2, the limit.
    for id in ["FEDPLT-REC ", "FEDPLT-CONST ", "FEDPLT-DECAY ", "FEDPLT-DECAY~corrected ", "FEDPLT-LIMIT "] {
        assert!(flips.iter().any(|f| f.contains(&format!("}}: {id}"))), "{id} never flips: {flips:#?}");
    }
}

#[test]
fn the_export_writes_the_step_factors_back() {
    let text = scenario(20, 1, "sgd", "{ constant = 0.1 }", 0.3, &two(None, Some(2.5)));
    let exported = FAMILY.export_instance(&text, "test.toml").expect("the instance exports");
    assert!(exported.contains("step_scale = 1.0") && exported.contains("step_scale = 2.5"), "{exported}");
    assert_eq!(unhashed(&text), unhashed(&exported), "the exported file runs the same");
    let body = |t: &str| t.split_once('\n').map(|(_, b)| b.to_string()).unwrap_or_default();
    assert_eq!(body(&FAMILY.export_instance(&exported, "test.toml").expect("re-export")), body(&exported), "export is a fixed point");
    // Negative control: without factors nothing is written, and the run differs.
    let plain = FAMILY.export_instance(&scenario(20, 1, "sgd", "{ constant = 0.1 }", 0.3, &two(None, None)), "test.toml").expect("exports");
    assert!(!plain.contains("step_scale"), "{plain}");
    assert_ne!(unhashed(&plain), unhashed(&exported));
}
