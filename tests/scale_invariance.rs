//! Verdicts that do not depend on units: an instance whose objective (or labels) is scaled, with
//! the steps scaled back, runs the same iterates in exact arithmetic, so every verdict and slack
//! must be the same. Each case from the command line, with a control that a real change of the
//! instance moves the slack (the comparison can fail).

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

/// Runs `fedbounds run` on `toml` (written into `dir`) and returns the JSON it writes.
fn run(dir: &Path, name: &str, toml: &str) -> serde_json::Value {
    let (file, out) = (dir.join(format!("{name}.toml")), dir.join(format!("{name}.json")));
    std::fs::write(&file, toml).unwrap();
    let status = Command::new(BIN).arg("run").arg(&file).arg("--out").arg(&out).output().expect("the fedbounds binary starts");
    assert!(status.status.success(), "{name}: {}", String::from_utf8_lossy(&status.stderr));
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

/// `(claim, verdict, slack)` of every row of a run.
fn rows(json: &serde_json::Value) -> Vec<(String, String, Option<f64>)> {
    json["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| (v["claim"].as_str().unwrap().to_string(), v["verdict"].as_str().unwrap().to_string(), v["slack"].as_f64()))
        .collect()
}

/// Every row of `b` has `a`'s verdict and its slack within `rel`.
fn assert_same_rows(a: &serde_json::Value, b: &serde_json::Value, rel: f64, what: &str) {
    let (a, b) = (rows(a), rows(b));
    assert_eq!(a.len(), b.len(), "{what}");
    for ((id, verdict, slack), (_, verdict_b, slack_b)) in a.iter().zip(&b) {
        assert_eq!(verdict, verdict_b, "{what}: {id}");
        match (slack, slack_b) {
            (Some(x), Some(y)) => assert!((x - y).abs() <= rel * x.abs(), "{what}: {id} slack {x} against {y}"),
            (x, y) => assert_eq!(x.is_some(), y.is_some(), "{what}: {id}"),
        }
    }
}

/// Scaffold-P on two clients with `f` times `c`: Hessians `c I`, linear terms `+-c`, noise
/// covariances `c^2 / 100`, the steps the theorem's admissible ones (they scale as `1/c`).
fn scaffold_p(c: f64, second_hessian: f64) -> String {
    format!(
        r#"name = "scaled"
rounds = 40
replicates = 4
seed = 1
algorithm = {{ kind = "scaffold-p", k = 2, m = 1, gamma = {{ admissible = "CCYW-T4.5" }}, eta_u = {{ admissible = "CCYW-T4.5" }}, eta_v = {{ admissible = "CCYW-T4.5" }} }}

[instance.explicit]
du = 1
dv = 1
noise_u_cov = [[{noise:e}]]
noise_v_cov = [[{noise:e}]]
u0 = [1.0]

[[instance.explicit.clients]]
hessian = [[{c:e}, 0.0], [0.0, {c:e}]]
linear = [{c:e}, 0.0]
v0 = [0.0]

[[instance.explicit.clients]]
hessian = [[{h2:e}, 0.0], [0.0, {c:e}]]
linear = [{minus:e}, 0.0]
v0 = [0.0]
"#,
        noise = c * c / 100.0,
        h2 = c * second_hessian,
        minus = -c
    )
}

/// Scaffold-P's exact verdicts at `c = 1`, `1e16` and `1e40` agree to 1e-9: its state holds
/// control variates in gradient units, `c` times the model's, and the exact engine had probed
/// every coordinate with a unit value, whose reads by the model's rows (coefficients of `1e-19`)
/// sank below the rounding of the round's constants: at `c = 1e16` Theorem 4.5 had been violated
/// (slack 0.84 against 7.9). Control: the second client's Hessian 1% larger moves the slack.
#[test]
fn scaffold_p_verdicts_do_not_depend_on_the_objectives_units() {
    let dir = tempfile::tempdir().unwrap();
    let base = run(dir.path(), "c1", &scaffold_p(1.0, 1.0));
    assert!(rows(&base).iter().any(|(id, v, _)| id == "CCYW-T4.5" && v == "holds"), "{:?}", rows(&base));
    for c in [1e16, 1e40] {
        let scaled = run(dir.path(), &format!("c{c:e}"), &scaffold_p(c, 1.0));
        assert_same_rows(&base, &scaled, 1e-9, &format!("f times {c:e}"));
    }
    let (same, other) = (run(dir.path(), "same", &scaffold_p(1e16, 1.0)), run(dir.path(), "other", &scaffold_p(1e16, 1.01)));
    let slack = |json: &serde_json::Value| rows(json).into_iter().find(|r| r.0 == "CCYW-T4.5").and_then(|r| r.2).unwrap();
    assert!((slack(&other) - slack(&same)).abs() > 1e-6 * slack(&same), "control: at the same scale a different instance has another slack");
}

/// FedCLUP's three-client example with labels, ground truths and noise times `2^40` (exact in
/// floating point): Algorithm 2's exact moments scale by `2^80` to 1e-12 and every verdict and
/// slack but those of the paper's own scale-dependent formulas (Corollary 1's `min(R^2, 1/n)`,
/// (79)'s `R < 1/sqrt(n)`) agrees. The engine had probed the local steps' maps with unit vectors
/// beside constants of `2^40` and kept 12 of their 53 bits (errors of 1e-4 by round 5, Lemma 5
/// "violated"). Control: one label moved by 1% changes Algorithm 2's moments.
#[test]
fn fedclup_runs_scale_with_labels_scaled_by_a_power_of_two() {
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/clup-explicit.toml")).unwrap();
    let example = example.replace("rounds = 100", "rounds = 5");
    let scale = 2f64.powi(40);
    let scaled_list = |line: &str| {
        let (key, list) = line.split_once(" = ").unwrap();
        let values: Vec<String> = list.trim_matches(|c| c == '[' || c == ']').split(", ").map(|x| format!("{:?}", x.parse::<f64>().unwrap() * scale)).collect();
        format!("{key} = [{}]", values.join(", "))
    };
    let scaled = |example: &str| {
        example
            .lines()
            .map(|line| match line {
                l if l.starts_with("labels") || l.starts_with("ground_truth") => scaled_list(l),
                l if l.starts_with("noise") => format!("noise = {:?}", 0.3 * scale),
                l => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (base, big) = (run(dir.path(), "base", &example), run(dir.path(), "big", &scaled(&example)));
    let fresh = |json: &serde_json::Value| json["alg2"]["fresh_batches"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect::<Vec<_>>();
    for (a, b) in fresh(&base).iter().zip(fresh(&big)) {
        assert!((a * scale * scale - b).abs() <= 1e-12 * b, "fresh batches: {a} times 2^80 against {b}");
    }
    let keep = |json: &serde_json::Value| {
        let mut j = json.clone();
        let kept: Vec<serde_json::Value> = j["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| !["CLUP-C1", "CLUP-C1~a2-printed", "CLUP-G79"].contains(&v["claim"].as_str().unwrap()))
            .cloned()
            .collect();
        j["verdicts"] = serde_json::Value::Array(kept);
        j
    };
    assert_same_rows(&keep(&base), &keep(&big), 1e-9, "labels times 2^40");
    let moved = run(dir.path(), "moved", &scaled(&example.replacen("labels = [1.128,", "labels = [1.14,", 1)));
    let (a, b) = (fresh(&base)[4] * scale * scale, fresh(&moved)[4]);
    assert!((a - b).abs() > 1e-6 * a, "control: one label moved by 1% changes the moments ({a} against {b})");
}

/// FedPLT on two clients with a shared optimum `(s, 2s)`, noise `0.1 s` and `W^0 = 0`: every
/// quantity scales by `s^2`. At `s = 1e16` the gradients `H (W - W*)` had been probed beside
/// `H W*` of `1e16`, where a unit change rounds away: the gradient observables came out 0, the
/// run's `G^2` was `1.7e-31 s^2` against `4.25 s^2`, and FEDPLT-DIV-L592~global-gradient
/// "held" where it is violated. Control: at `s = 1` the row is violated.
#[test]
fn fedplt_gradients_far_from_the_origin_keep_their_digits() {
    let dir = tempfile::tempdir().unwrap();
    let file = |s: f64| {
        format!(
            r#"family = "fedplt"
name = "far"
rounds = 50
replicates = 1
seed = 3
tau = 1
gradient = "sgd"

[step]
constant_over_l = 0.1

[instance]
initial = [0.0, 0.0]
sigma = {sigma:e}

[[instance.clients]]
weight = 0.5
hessian = [[1.0, 0.0], [0.0, 0.5]]
optimum = [{s:e}, {two:e}]
mask = [1, 1]

[[instance.clients]]
weight = 0.5
hessian = [[0.5, 0.0], [0.0, 1.0]]
optimum = [{s:e}, {two:e}]
mask = [1, 1]
"#,
            sigma = 0.1 * s,
            two = 2.0 * s
        )
    };
    let (near, far) = (run(dir.path(), "near", &file(1.0)), run(dir.path(), "far", &file(1e16)));
    let g2 = |json: &serde_json::Value, s: f64| json["g2_empirical"].as_f64().unwrap() / (s * s);
    assert!((g2(&near, 1.0) - 4.25).abs() < 1e-12, "{}", g2(&near, 1.0));
    assert!((g2(&far, 1e16) - 4.25).abs() < 1e-9, "G^2 / s^2 = {} at s = 1e16", g2(&far, 1e16));
    let empirical = |json: &serde_json::Value| {
        json["verdicts"].as_array().unwrap().iter().find(|v| v["claim"] == "FEDPLT-DIV-L592~global-gradient").unwrap()["empirical_verdict"].clone()
    };
    assert_eq!(empirical(&near), "violated", "control");
    assert_eq!(empirical(&far), "violated");
}

/// DFedPGP on a noiseless ring of three clients with `grad_u F_i = u - s`: `E||grad_u F(ubar^t)||^2`
/// is `s^2 (1 - eta)^(4t)` whatever `s`. At `s = 1e16` the gradient's map had been probed beside
/// its constant `s`, rounded to 0, and `Delta_ubar` stayed at `s^2` in every round. Control: the
/// series falls at `s = 1`, and by the same factors at `s = 1e16`.
#[test]
fn dfedpgp_gradients_far_from_the_origin_keep_their_digits() {
    let dir = tempfile::tempdir().unwrap();
    let file = |s: f64| {
        let mut t = String::from(
            "family = \"dpgp\"\nname = \"far\"\ntopology = { kind = \"ring\" }\nm = 3\ndu = 1\ndv = 1\nk_u = 2\nk_v = 2\nc_u = 0.4\nc_v = 1.0\nrounds = 200\nsweep = [50, 100, 200]\n\n[instance]\nsigma_u = 0.0\nsigma_v = 0.0\n",
        );
        for (d, lin_v, v0) in [(1.0, 0.5, 0.0), (2.0, -0.5, 1.0), (1.5, 0.0, 0.5)] {
            t += &format!("\n[[instance.clients]]\na = [[1.0]]\nb = [[0.0]]\nd = [[{d:?}]]\nlin_u = [{s:e}]\nlin_v = [{lin_v:?}]\nv0 = [{v0:?}]\n");
        }
        t
    };
    let series =
        |json: &serde_json::Value, s: f64| json["series"]["delta_ubar"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() / (s * s)).collect::<Vec<_>>();
    let (near, far) = (series(&run(dir.path(), "near", &file(1.0)), 1.0), series(&run(dir.path(), "far", &file(1e16)), 1e16));
    assert!(near[3] < 0.9 * near[0], "control: the series falls ({:?})", &near[..4]);
    for (t, (a, b)) in near.iter().zip(&far).enumerate().take(50) {
        assert!((a - b).abs() <= 1e-9 * a, "round {t}: {a} at s = 1, {b} at s = 1e16");
    }
}

/// The card's `decaying-noise-only` FedPLT scenario (one client at `W* = 1`, noise only) with its
/// noise at 0.5 and at `1e-20`: the decaying step's `z`, `D^t / sigma^2` and every verdict agree.
/// The sample paths had run on `W` itself, held to `eps ||W*||`: with noise below `1e-15` every
/// point was "within rounding of W*", `rho_` undefined, the step `NaN` and the run frozen at
/// `D = 0`. Control: the distances do scale with `sigma^2` (a run that froze would not).
#[test]
fn fedplt_noise_far_below_the_optimum_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let file = |sigma: f64| {
        format!(
            "family = \"fedplt\"\nname = \"decaying-noise-only\"\nrounds = 200\nreplicates = 1\nseed = 8\ntau = 1\nstep = {{ decaying = {{ beta = 1.0, offset = 1.0 }} }}\ninstance = {{ clients = 1, dim = 1, l = 1.0, mu = 1.0, sigma = {sigma:e}, heterogeneity = 0.0, init_distance = 0.0, masks = {{ kind = \"full\" }}, seed = 18 }}\n"
        )
    };
    let (loud, quiet) = (run(dir.path(), "loud", &file(0.5)), run(dir.path(), "quiet", &file(1e-20)));
    assert_eq!(quiet["z"], loud["z"]);
    let distance =
        |json: &serde_json::Value, sigma: f64| json["distance"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() / (sigma * sigma)).collect::<Vec<_>>();
    let (a, b) = (distance(&loud, 0.5), distance(&quiet, 1e-20));
    assert!(b[1] > 0.0, "control: the quiet run moves ({:?})", &b[..3]);
    for (t, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= 1e-9 * x.abs(), "round {t}: {x} against {y}");
    }
    let keep = |json: &serde_json::Value| {
        json["verdicts"].as_array().unwrap().iter().map(|v| (v["claim"].clone(), v["verdict"].clone(), v["empirical_verdict"].clone())).collect::<Vec<_>>()
    };
    assert_eq!(keep(&loud), keep(&quiet));
}
