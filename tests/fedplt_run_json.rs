//! FedPLT's `run` JSON gives the small-step limit point, the realised masks and, per round and
//! client, the smallest alignment ratio rho_k on the sample paths (001:L151-155), consistent with
//! the run's rho_ and ||W_lim - W*||.
//!
//! Control: on full masks with diagonal Hessians and a shared optimum every rho_k is 1 (the mask
//! sees the whole gradient), while the overlapping partial masks give ratios below 1.

use fedbounds::families::fedplt::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

fn run(masks: &str) -> Value {
    let text = format!(
        "family = \"fedplt\"\nname = \"run-json\"\nrounds = 5\nreplicates = 2\nseed = 3\ntau = 1\nstep = {{ constant_over_l = 0.5 }}\n\
         instance = {{ clients = 2, dim = 3, l = 1.0, mu = 0.2, sigma = 0.3, heterogeneity = 0.0, init_distance = 3.0, rotated = false, masks = {masks}, seed = 16 }}\n"
    );
    serde_json::from_str(&FAMILY.run(&text, "run-json", &RunOptions::default()).expect("the scenario runs")).expect("JSON")
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().expect("an array").iter().map(|x| x.as_f64().expect("a number")).collect()
}

/// Per round, the clients' ratios; `None` where none was decided.
fn rho_k(v: &Value) -> Vec<Vec<Option<f64>>> {
    v["rho_per_round_client"].as_array().expect("rho_per_round_client").iter().map(|r| r.as_array().unwrap().iter().map(Value::as_f64).collect()).collect()
}

#[test]
fn the_run_json_has_the_limit_point_the_masks_and_rho_k_per_round() {
    let v = run("{ kind = \"explicit\", coordinates = [[0, 1], [1, 2]] }");
    let masks: Vec<Vec<f64>> = v["masks"].as_array().expect("masks").iter().map(numbers).collect();
    assert_eq!(masks, vec![vec![1.0, 1.0, 0.0], vec![0.0, 1.0, 1.0]]);
    let limit = numbers(&v["limit_point"]);
    assert_eq!(limit.len(), 3);
    let w_star = numbers(&v["constants"]["w_star"]);
    let gap = limit.iter().zip(&w_star).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt();
    let limit_gap = v["limit_gap"].as_f64().unwrap();
    assert!((gap - limit_gap).abs() <= 1e-12 * (1.0 + limit_gap), "||W_lim - W*|| = {gap}, the run says {limit_gap}");
    let rho = rho_k(&v);
    assert_eq!((rho.len(), rho[0].len()), (5, 2), "one row per round, one column per client");
    let all: Vec<f64> = rho.iter().flatten().map(|x| x.expect("decided")).collect();
    let min = all.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(min, v["alignment_min"].as_f64().unwrap(), "rho_ is the least rho_k over rounds and clients");
    assert!(all.iter().all(|r| *r > 0.0 && *r < 1.0), "partial masks see part of the gradient: {all:?}");
    // Control: full masks see the whole gradient, rho_k = 1 everywhere.
    let full = run("{ kind = \"full\" }");
    assert_eq!(full["masks"], serde_json::json!([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]));
    for r in rho_k(&full).into_iter().flatten() {
        let r = r.expect("decided");
        assert!((r - 1.0).abs() <= 1e-12, "rho_k = {r} on a full mask");
    }
}

/// The verdicts of `examples/fedplt-explicit.toml` with its step set to `constant_over_l` for
/// `rounds` rounds: (claim, empirical verdict, its notes).
fn empirical_verdicts(constant_over_l: f64, rounds: usize) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/fedplt-explicit.toml")).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|l| match l {
            l if l.starts_with("rounds = ") => format!("rounds = {rounds}"),
            l if l.starts_with("constant_over_l = ") => format!("constant_over_l = {constant_over_l}"),
            l => l.to_string(),
        })
        .collect();
    assert!(edited.iter().any(|l| l.contains(&format!("constant_over_l = {constant_over_l}"))), "the step was set");
    let v: Value = serde_json::from_str(&FAMILY.run(&edited.join("\n"), "diverging", &RunOptions::default()).expect("the scenario runs")).unwrap();
    v["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["claim"].as_str().unwrap().to_string(), r["empirical_verdict"].as_str().unwrap_or("").to_string(), r["empirical_notes"].to_string()))
        .collect()
}

#[test]
fn an_empirical_holds_on_a_diverging_run_is_inconclusive() {
    // eta = 10/L: D^t grows to about 1e305 in 160 rounds, and G^2 measured on the run with it, so
    // the recursion "held" with the run's own constant.
    let diverging = empirical_verdicts(10.0, 160);
    let rec: Vec<&(String, String, String)> = diverging.iter().filter(|(c, _, _)| c.starts_with("FEDPLT-REC")).collect();
    assert!(!rec.is_empty());
    for (claim, verdict, notes) in &rec {
        assert_eq!(verdict, "inconclusive", "{claim}: {notes}");
        assert!(notes.contains("the run diverges"), "{claim}: {notes}");
    }
    assert!(diverging.iter().all(|(_, v, _)| v != "holds"), "{diverging:?}");
    // Control: at the example's own step the recursion holds with the measured constant.
    let stable = empirical_verdicts(0.1, 160);
    assert!(stable.iter().any(|(c, v, _)| c == "FEDPLT-REC" && v == "holds"), "{stable:?}");
}

#[test]
fn divergence_is_growth_past_the_first_half_not_noise_filling_up() {
    use fedbounds::families::fedplt::check::diverges;
    let geometric: Vec<f64> = (0..60).map(|t| 2f64.powi(t)).collect();
    assert!(diverges(&geometric));
    assert!(diverges(&[1.0, 2.0, f64::NAN, 1.0]), "a value that is not a number");
    // Controls: a run that starts at W* and fills with noise levels off; a converging run; zeros.
    let filling: Vec<f64> = (0..40).map(|t| 1e-6 * (1.0 - 0.5f64.powi(t))).collect();
    assert!(!diverges(&filling) && !diverges(&[4.0, 2.0, 1.0, 0.5]) && !diverges(&[0.0; 5]));
}
