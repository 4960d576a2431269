//! FedCLUP's scenario options beyond the sphere recipe: Gaussian features with a given covariance
//! (constants from the drawn data), a given lambda grid for Theorem 1, given initial models,
//! Algorithm 2's curves and every draw's Theorem 1 curve in `run`'s JSON, and the one-batch
//! enumeration limit applied to that reading only. Each test has a negative control.

use fedbounds::families::clup::model::{Features, Gaussian, ModelSpec};
use fedbounds::families::clup::FAMILY;
use fedbounds::family::{Family, RunOptions};
use nalgebra::DMatrix;
use serde_json::Value;

fn run(text: &str) -> Value {
    serde_json::from_str(&FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")).expect("JSON")
}

/// The error of running `text` (bad input), or `None` when it runs.
fn refusal(text: &str) -> Option<String> {
    FAMILY.run(text, "test.toml", &RunOptions::default()).err().map(|e| {
        assert!(e.is_bad_input(), "{e}");
        e.to_string()
    })
}

fn without_hash(mut v: Value) -> Value {
    v.as_object_mut().expect("an object").remove("scenario_hash");
    v
}

fn gaussian(spectrum: Option<Vec<f64>>, covariance: Option<Vec<Vec<f64>>>, n: usize) -> ModelSpec {
    ModelSpec { m: 4, n, d: 2, r: 0.3, l: f64::NAN, noise: 0.5, center: 1.0, seed: 9, features: Features::Gaussian(Gaussian { spectrum, covariance }) }
}

/// The clients' mean Hessian `(1/m) sum_i A_i`, the features' second moment.
fn second_moment(spec: &ModelSpec) -> DMatrix<f64> {
    let inst = spec.instance(0).expect("the design draws");
    inst.clients.iter().fold(DMatrix::zeros(2, 2), |acc, c| acc + &c.a) / inst.clients.len() as f64
}

#[test]
fn gaussian_features_follow_their_covariance_and_give_the_data_s_constants() {
    // 4 x 4096 samples of diag(4, 0.25): the second moment within 5% (the relative standard
    // error of a variance from 16384 samples is sqrt(2/16384) = 1.1%).
    let spec = gaussian(Some(vec![4.0, 0.25]), None, 4096);
    let s = second_moment(&spec);
    assert!((s[(0, 0)] / 4.0 - 1.0).abs() < 0.05 && (s[(1, 1)] / 0.25 - 1.0).abs() < 0.05 && s[(0, 1)].abs() < 0.05, "{s}");
    // Negative control: sphere features of the same mean square norm are isotropic.
    let sphere = ModelSpec { l: 4.25, features: Features::Sphere, ..spec.clone() };
    let t = second_moment(&sphere);
    assert!((t[(0, 0)] / 4.0 - 1.0).abs() > 0.05, "{t}");
    // The constants are the drawn data's: L = max ||x||^2, rho^2 = s^2 max_i tr(A_i), mu.
    let small = gaussian(Some(vec![4.0, 0.25]), None, 16);
    let inst = small.instance(1).expect("the design draws");
    let c = inst.constants;
    let l = inst.clients.iter().flat_map(|k| k.x.row_iter().map(|r| r.norm_squared()).collect::<Vec<_>>()).fold(0.0, f64::max);
    let rho2 = 0.25 * inst.clients.iter().map(|k| k.a.trace()).fold(0.0, f64::max);
    let mu = inst.clients.iter().map(|k| k.a.clone().symmetric_eigen().eigenvalues.min()).fold(f64::INFINITY, f64::min);
    assert_eq!((c.l_sample, c.rho2), (l, rho2));
    assert!((c.mu - mu).abs() <= 1e-12 * mu);
    assert!(l > 4.0 && rho2 != 0.25 * 4.25, "not the sphere's constants: L {l}, rho^2 {rho2}");
    // A covariance given as a diagonal matrix draws the same design as its spectrum.
    let by_matrix = gaussian(None, Some(vec![vec![4.0, 0.0], vec![0.0, 0.25]]), 16).instance(1).expect("the design draws");
    assert_eq!(by_matrix.clients[2].x, inst.clients[2].x);
}

const BASE: &str = "family = \"clup\"\nname = \"short\"\nlambda = 0.5\nrounds = 30\nbatch = 2\n";

fn with_model(model: &str) -> String {
    format!("{BASE}model = {model}\n")
}

#[test]
fn bad_gaussian_designs_are_refused_with_the_field() {
    let good = "{ m = 4, n = 16, d = 2, r = 0.3, noise = 0.5, seed = 9, features = { gaussian = { spectrum = [4.0, 0.25] } } }";
    let cases = [
        (good.replace("spectrum = [4.0, 0.25]", "spectrum = [4.0]"), "model.features.gaussian.spectrum"),
        (good.replace("spectrum = [4.0, 0.25]", "spectrum = [4.0, 0.0]"), "model.features.gaussian.spectrum[1]"),
        (good.replace("spectrum = [4.0, 0.25]", "spectrum = [4.0, nan]"), "model.features.gaussian.spectrum[1]"),
        (good.replace("spectrum = [4.0, 0.25]", "covariance = [[1.0, 2.0], [2.0, 1.0]]"), "model.features.gaussian.covariance"),
        (good.replace("spectrum = [4.0, 0.25]", "covariance = [[1.0, 0.5], [0.0, 1.0]]"), "model.features.gaussian.covariance"),
        (good.replace("spectrum = [4.0, 0.25]", "spectrum = [1.0, 1.0], covariance = [[1.0, 0.0], [0.0, 1.0]]"), "model.features.gaussian"),
        (good.replace("r = 0.3,", "r = 0.3, l = 1.0,"), "model.l"),
        (good.replace("gaussian = {", "cauchy = {"), "cauchy"),
    ];
    for (model, needle) in &cases {
        let e = refusal(&with_model(model)).unwrap_or_else(|| panic!("{needle}: accepted"));
        assert!(e.contains(needle), "{needle}: {e}");
    }
    // Negative control: the good design and a full covariance run.
    assert_eq!(refusal(&with_model(good)), None);
    assert_eq!(refusal(&with_model(&good.replace("spectrum = [4.0, 0.25]", "covariance = [[2.0, 0.5], [0.5, 1.0]]"))), None);
}

const LOW_R: &str = "{ m = 4, n = 8, d = 2, r = 0.05, l = 1.0, noise = 0.5, seed = 1 }";

#[test]
fn a_given_lambda_grid_is_where_theorem_1_is_compared() {
    let grid = [0.0, 0.05, 0.5, 5.0, 50.0];
    let text = format!("{}lambda_grid = {grid:?}\ndesigns = 3\n", with_model(LOW_R));
    let json = run(&text);
    let curves = json["stat_curves"].as_array().expect("one curve per draw");
    assert_eq!(curves.len(), 3, "every draw's curve");
    for curve in curves {
        let lambdas: Vec<f64> = curve.as_array().unwrap().iter().map(|p| p["lambda"].as_f64().unwrap()).collect();
        assert_eq!(lambdas, grid);
    }
    // The draws differ, so do their curves.
    assert_ne!(curves[0][1]["error"], curves[1][1]["error"]);
    // Negative control: without a grid, the default's 34 lambdas.
    assert_eq!(run(&with_model(LOW_R))["stat_curves"][0].as_array().unwrap().len(), 34);
    for (bad, needle) in [
        ("[]", "lambda_grid"),
        ("[0.0, 1.0, 0.5]", "lambda_grid[2]"),
        ("[-1.0, 1.0]", "lambda_grid[0]"),
        ("[0.0, nan]", "lambda_grid[1]"),
        ("[1.0, 1.0]", "lambda_grid[1]"),
    ] {
        let e = refusal(&format!("{}lambda_grid = {bad}\n", with_model(LOW_R))).unwrap_or_else(|| panic!("{bad}: accepted"));
        assert!(e.contains(needle), "{bad}: {e}");
    }
}

#[test]
fn given_initial_models_start_the_runs() {
    let zero = run(&format!("{}init = \"zero\"\n", with_model(LOW_R)));
    let given_zero = run(&format!("{}init = {{ global = [0.0, 0.0], locals = [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]] }}\n", with_model(LOW_R)));
    assert_eq!(without_hash(zero.clone()), without_hash(given_zero), "zeros given are the zero start");
    // Only the global model given (locals zero): a different first error.
    let moved = run(&format!("{}init = {{ global = [3.0, -1.0] }}\n", with_model(LOW_R)));
    assert_ne!(moved["global_error"][0], zero["global_error"][0]);
    // Negative control for the comparison above: the same start twice runs to the same JSON.
    assert_eq!(moved, run(&format!("{}init = {{ global = [3.0, -1.0] }}\n", with_model(LOW_R))));
    for (bad, needle) in [
        ("{ global = [1.0] }", "init.global"),
        ("{ locals = [[0.0, 0.0]] }", "init.locals"),
        ("{ locals = [[0.0, 0.0], [0.0, 0.0], [0.0, nan], [0.0, 0.0]] }", "init.locals[2][1]"),
        ("{ global = [0.0, 0.0], start = 1 }", "start"),
        ("\"ones\"", "init"),
    ] {
        let e = refusal(&format!("{}init = {bad}\n", with_model(LOW_R))).unwrap_or_else(|| panic!("{bad}: accepted"));
        assert!(e.contains(needle), "{bad}: {e}");
    }
}

/// The verdicts of a run by claim.
fn claims(json: &Value) -> Vec<String> {
    json["verdicts"].as_array().unwrap().iter().map(|v| v["claim"].as_str().unwrap().to_string()).collect()
}

#[test]
fn the_one_batch_limit_gates_that_reading_only() {
    // C(24, 6) = 134596 batches: the fresh-batch readings run, the one-batch reading does not.
    let big = "family = \"clup\"\nname = \"big\"\nmodel = { m = 2, n = 24, d = 2, r = 0.5, l = 1.0, noise = 0.5, seed = 7 }\nstatistics = false\nlambda = 1.0\nrounds = 20\nbatch = 6\n";
    let json = run(big);
    let ids = claims(&json);
    assert!(ids.iter().any(|c| c == "CLUP-T3") && ids.iter().any(|c| c == "CLUP-T3~v1-initial"), "{ids:?}");
    assert!(!ids.iter().any(|c| c == "CLUP-T3~one-batch"), "{ids:?}");
    assert_eq!(json["alg2"]["fresh_batches"].as_array().unwrap().len(), 20);
    assert!(json["alg2"]["one_batch"].is_null());
    // Expecting a verdict of the one-batch reading there is refused, naming it.
    let e = refusal(&format!("{big}[expected]\n\"CLUP-T3~one-batch\" = \"holds\"\n")).expect("refused");
    assert!(e.contains("expected.CLUP-T3~one-batch") && e.contains("C(n, B)"), "{e}");
    // Negative control: C(24, 2) = 276 batches, both readings run and are in the JSON.
    let small = run(&big.replace("batch = 6", "batch = 2"));
    assert!(claims(&small).iter().any(|c| c == "CLUP-T3~one-batch"));
    let one = small["alg2"]["one_batch"].as_array().expect("the one-batch curve");
    assert_eq!(one.len(), 20);
    assert_ne!(small["alg2"]["one_batch"], small["alg2"]["fresh_batches"], "the two readings differ");
    assert!(refusal(&format!("{}[expected]\n\"CLUP-T3~one-batch\" = \"holds\"\n", big.replace("batch = 6", "batch = 2"))).is_none());
}
