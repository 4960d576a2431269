//! DFedPGP's explicit instances: `run --export-instance` writes the instance and graphs a
//! generated scenario produced, and running the written file gives the same bytes; a hand-written
//! instance whose per-round answer is known in closed form (identical clients on a complete graph:
//! centralized minibatch SGD); bad explicit inputs refused with the field and its range (exit 2,
//! no panic, nothing written). Each test has a negative control that shows it can fail.

use std::process::Command;

use fedbounds::families::dpgp::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

/// A generated scenario with short horizons, its instance and graph keys replaced by `keys`.
fn generated(name: &str, keys: &str) -> String {
    format!(
        "family = \"dpgp\"\nname = \"{name}\"\nm = 4\ndu = 2\ndv = 2\nl_u = 2.0\nmu_u = 0.5\nl_v = 2.0\nmu_v = 1.0\nheterogeneity = 1.0\n\
         sigma_u = 0.5\nsigma_v = 0.3\nseed = 11\nk_u = 2\nk_v = 2\nc_u = 0.4\nc_v = 1.0\nrounds = 40\nsweep = [10, 20, 40]\n{keys}\n"
    )
}

fn run(text: &str) -> String {
    FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")
}

fn export(text: &str) -> String {
    FAMILY.export_instance(text, "test.toml").expect("the instance exports")
}

/// Every generator the explicit form must reproduce: client-specific curvature, coupling, random
/// time-varying graphs, the hub's push-sum weights `mu_i != 1`, the row-stochastic option.
const GENERATORS: [(&str, &str); 5] = [
    ("ring", "topology = { kind = \"ring\" }"),
    ("coupled-hetero", "topology = { kind = \"exponential\" }\ncoupling = 0.6\nclient_curvature = 0.7"),
    ("random", "topology = { kind = \"random-out\", k = 2 }\ngraph_seed = 5\nclient_curvature = 0.5"),
    ("hub", "topology = { kind = \"ring-hub\" }\ncoupling = 0.4"),
    ("row", "topology = { kind = \"ring-hub\" }\nmixing = \"row\"\nv0_norm = 2.0"),
];

#[test]
fn exported_instances_run_to_the_same_bytes() {
    for (name, keys) in GENERATORS {
        let text = generated(name, keys);
        let exported = export(&text);
        assert!(exported.contains("[instance]") && !exported.contains("mu_u"), "{name}: explicit form only\n{exported}");
        assert_eq!(run(&text), run(&exported), "{name}: the exported file runs to other bytes");
        // The explicit form of an explicit file is itself (after the header naming the source).
        let body = |t: &str| t.split_once('\n').map(|(_, b)| b.to_string()).unwrap_or_default();
        assert_eq!(body(&export(&exported)), body(&exported), "{name}: export is not a fixed point");
    }
}

#[test]
fn a_changed_exported_number_changes_the_run() {
    // Negative control of the round trip: the comparison sees one changed digit of one client.
    let text = generated("ring", GENERATORS[0].1);
    let exported = export(&text);
    let line = exported.lines().find(|l| l.starts_with("lin_u = [")).expect("a lin_u line");
    let perturbed = exported.replacen(line, &perturb_first(line), 1);
    assert_ne!(perturbed, exported);
    assert_ne!(run(&text), run(&perturbed), "a perturbed a_0 must change the run");
}

/// `lin_u = [x, ...]` with `x` replaced by `x + 1e-6`.
fn perturb_first(line: &str) -> String {
    let rest = line.strip_prefix("lin_u = [").expect("a lin_u line");
    let (first, tail) = rest.split_once(',').expect("two entries");
    let x: f64 = first.trim().parse().expect("a number");
    format!("lin_u = [{},{tail}", x + 1e-6)
}

/// The scenario of [`pair`]: two identical clients (`du = 2` diagonal `A`, `dv = 1`, `B = 0`) on
/// the complete graph with anisotropic u-noise. One push-sum round averages exactly (`mu = 1`),
/// so `ubar` is centralized SGD whose noise variance is divided by `m = 2`, and each `v_i` runs
/// its own SGD.
const PAIR_HEAD: &str = r#"family = "dpgp"
name = "pair"
topology = { kind = "complete" }
m = 2
du = 2
dv = 1
k_u = 3
k_v = 2
c_u = 0.6
c_v = 0.8
rounds = 30
sweep = [10, 20, 30]

[instance]
sigma_v = 0.4
"#;

/// One client of [`pair`].
const PAIR_CLIENT: &str = r#"
[[instance.clients]]
a = [[2.0, 0.0], [0.0, 0.5]]
b = [[0.0], [0.0]]
d = [[1.5]]
lin_u = [1.0, -2.0]
lin_v = [0.75]
v0 = [2.0]
noise_u_cov = [[0.3, 0.0], [0.0, 0.05]]
"#;

/// [`PAIR_HEAD`] with two copies of [`PAIR_CLIENT`].
fn pair() -> String {
    format!("{PAIR_HEAD}{PAIR_CLIENT}{PAIR_CLIENT}")
}

/// One coordinate's SGD: error mean and variance after each round of `k` steps of size `eta` on
/// curvature `a` with per-step noise variance `s`, the round's noise averaged over `m` copies.
fn sgd(a: f64, eta: f64, k: usize, s: f64, m: f64, start: f64, rounds: usize) -> Vec<(f64, f64)> {
    let r = 1.0 - eta * a;
    let rk = r.powi(k as i32);
    let noise: f64 = (0..k).map(|j| r.powi(2 * j as i32)).sum::<f64>() * eta * eta * s / m;
    let mut out = vec![(start, 0.0)];
    for _ in 0..rounds {
        let (mean, var) = out[out.len() - 1];
        out.push((rk * mean, rk * rk * var + noise));
    }
    out
}

/// `E F(ubar^t, V^t) - F*` of [`pair`] in closed form, the u-noise averaged over `m_u` clients.
fn pair_suboptimality(eta_u: f64, eta_v: f64, m_u: f64) -> Vec<f64> {
    let t = 30;
    let u = [sgd(2.0, eta_u, 3, 0.3, m_u, -0.5, t), sgd(0.5, eta_u, 3, 0.05, m_u, 4.0, t)];
    let v = sgd(1.5, eta_v, 2, 0.16, 1.0, 2.0 - 0.5, t);
    let half_square = |a: f64, (mean, var): (f64, f64)| 0.5 * a * (mean * mean + var);
    (0..=t).map(|s| half_square(2.0, u[0][s]) + half_square(0.5, u[1][s]) + half_square(1.5, v[s])).collect()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().expect("an array").iter().map(|x| x.as_f64().expect("a number")).collect()
}

fn close(a: &[f64], b: &[f64], rel: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= rel * y.abs().max(1e-300))
}

#[test]
fn identical_clients_on_a_complete_graph_are_centralized_sgd() {
    let json: Value = serde_json::from_str(&run(&pair())).expect("JSON");
    let (eta_u, eta_v) = (json["params"]["eta_u"].as_f64().expect("eta_u"), json["params"]["eta_v"].as_f64().expect("eta_v"));
    assert!((eta_u - 0.6 / (2.0 * 3.0 * 30f64.sqrt())).abs() < 1e-15, "eta_u = c_u / (L_u K_u sqrt(T))");
    assert_eq!(json["constants"]["sigma_u"].as_f64(), Some(0.35f64.sqrt()), "sigma_u^2 = tr(S_u)");
    let series = &json["series"];
    let got = numbers(&series["suboptimality"]);
    let want = pair_suboptimality(eta_u, eta_v, 2.0);
    assert!(close(&got, &want, 1e-10), "exact moments differ from the closed form\n{got:?}\n{want:?}");
    assert!(numbers(&series["consensus"]).iter().all(|c| c.abs() < 1e-20), "one complete round averages exactly");
    assert_eq!(numbers(&series["stationarity"]).len(), 30);
    // Negative controls: the noise not averaged over the two clients, or the covariance's axes
    // swapped, is a different curve.
    assert!(!close(&got, &pair_suboptimality(eta_u, eta_v, 1.0), 1e-6));
    let swapped: Value = serde_json::from_str(&run(&pair().replace("[[0.3, 0.0], [0.0, 0.05]]", "[[0.05, 0.0], [0.0, 0.3]]"))).expect("JSON");
    assert!(!close(&numbers(&swapped["series"]["suboptimality"]), &want, 1e-6));
}

#[test]
fn a_nonzero_start_fails_the_proofs_assumption() {
    let verdict = |text: &str, id: &str| -> String {
        let json: Value = serde_json::from_str(&run(text)).expect("JSON");
        let rows = json["verdicts"].as_array().expect("verdicts").iter().find(|r| r[0] == id).cloned().expect("the row");
        rows[1].as_str().expect("a verdict").to_string()
    };
    let moved = pair().replacen("v0 = [2.0]\n", "v0 = [2.0]\nu0 = [0.5, 0.0]\n", 1);
    assert_eq!(verdict(&moved, "DPGP-L3"), "not-applicable");
    // Control: from u_i^0 = 0 the same claim is applicable.
    assert_ne!(verdict(&pair(), "DPGP-L3"), "not-applicable");
}

/// The error of reading `text` as a scenario, or `None` when it is accepted and runs.
fn refusal(text: &str) -> Option<String> {
    FAMILY.run(text, "bad.toml", &RunOptions::default()).err().map(|e| {
        assert!(e.is_bad_input(), "not bad input: {e}");
        e.to_string()
    })
}

#[test]
fn bad_explicit_inputs_are_refused_naming_the_field() {
    let client0 = "a = [[2.0, 0.0], [0.0, 0.5]]";
    let cases: [(&str, String, &[&str]); 11] = [
        (
            "A of the wrong size",
            pair().replacen(client0, "a = [[2.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 1.0]]", 1),
            &["instance.clients[0].a", "2 rows of length 2"],
        ),
        ("lin_u too short", pair().replacen("lin_u = [1.0, -2.0]", "lin_u = [1.0]", 1), &["clients[0].lin_u", "length du = 2"]),
        ("A not symmetric", pair().replacen(client0, "a = [[2.0, 0.1], [0.0, 0.5]]", 1), &["clients[0].a", "symmetric"]),
        ("indefinite Hessian", pair().replacen("b = [[0.0], [0.0]]", "b = [[3.0], [0.0]]", 1), &["clients[0]", "positive semidefinite"]),
        ("NaN entry", pair().replacen(client0, "a = [[nan, 0.0], [0.0, 0.5]]", 1), &["clients[0].a[0][0]", "finite"]),
        ("covariance not PSD", pair().replacen("[[0.3, 0.0], [0.0, 0.05]]", "[[0.3, 0.0], [0.0, -0.05]]", 1), &["noise_u_cov", "positive semidefinite"]),
        ("noise given twice", pair().replacen("sigma_v = 0.4", "sigma_v = 0.4\nsigma_u = 0.1", 1), &["noise_u_cov", "either", "sigma_u"]),
        ("noise given nowhere", pair().replacen("sigma_v = 0.4\n", "", 1), &["noise_v_cov", "missing"]),
        ("one client short", pair().replacen("m = 2", "m = 3", 1), &["instance.clients", "m = 3"]),
        ("generator key beside [instance]", pair().replacen("m = 2", "m = 2\nheterogeneity = 1.0", 1), &["heterogeneity", "explicit [instance]"]),
        (
            "edge past the nodes",
            pair().replacen("topology = { kind = \"complete\" }", "topology = { kind = \"explicit\", rounds = [[[0, 2]]] }", 1),
            &["topology.rounds[0][0]", "[0, 1]"],
        ),
    ];
    for (what, text, needles) in cases {
        let message = refusal(&text).unwrap_or_else(|| panic!("{what}: accepted"));
        for n in needles {
            assert!(message.contains(n), "{what}: `{message}` does not name `{n}`");
        }
    }
    // F without a finite minimum (every A_i singular): refused when the constants are computed.
    let flat = pair().replace(client0, "a = [[2.0, 0.0], [0.0, 0.0]]");
    assert!(refusal(&flat).is_some_and(|m| m.contains("strongly convex")));
    // Negative control: the unchanged instance, and rounding-level asymmetry, are accepted.
    assert_eq!(refusal(&pair()), None);
    assert_eq!(refusal(&pair().replacen(client0, "a = [[2.0, 1e-17], [0.0, 0.5]]", 1)), None);
}

#[test]
fn the_command_line_writes_the_export_and_refuses_what_it_cannot() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let source = dir.join("random.toml");
    std::fs::write(&source, generated("random", GENERATORS[2].1)).expect("the scenario is written");
    let (exported, out) = (dir.join("random.explicit.toml"), dir.join("random.json"));
    let cli = |args: &[&str]| Command::new(BIN).args(args).output().expect("the binary runs");
    let first = cli(&["run", source.to_str().unwrap(), "--export-instance", exported.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let again = cli(&["run", exported.to_str().unwrap()]);
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stdout), std::fs::read_to_string(&out).expect("the run's JSON"), "the exported file runs to other bytes");
    // A family without explicit instances: exit 2, no panic, nothing written.
    let ccyw = dir.join("ccyw.toml");
    std::fs::write(&ccyw, "family = \"ccyw\"\n").expect("written");
    let refused = dir.join("refused.toml");
    let bad = cli(&["run", ccyw.to_str().unwrap(), "--export-instance", refused.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked") && !refused.exists());
    // A bad explicit instance: exit 2, the field named, no export and no partial file.
    let wrong = dir.join("wrong.toml");
    std::fs::write(&wrong, pair().replacen("lin_v = [0.75]", "lin_v = [0.75, 1.0]", 1)).expect("written");
    let bad = cli(&["run", wrong.to_str().unwrap(), "--export-instance", refused.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("instance.clients[0].lin_v"));
    let left: Vec<String> = std::fs::read_dir(&dir).expect("listed").map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()).collect();
    assert!(left.iter().all(|f| !f.contains("partial") && !f.starts_with("refused")), "{left:?}");
}

/// The instance's constants are judged at its own scale: the example with its `A_i`, `B_i`, `D_i`
/// scaled by `1e-14` is strongly convex, and its `A_i` still differ (Assumption 4 fails, as on the
/// example). With the floors `max(., 1)` it had been refused as not strongly convex, and `A_i`
/// differing by less than `1e-14` were called equal.
#[test]
fn an_instance_is_judged_at_its_own_scale() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/dpgp-explicit.toml")).expect("the example");
    let scaled: String = text
        .lines()
        .map(|l| match l.split_once(" = [[") {
            Some((key, rest)) if ["a", "b", "d"].contains(&key) => {
                let scale = |x: &str| x.trim().parse::<f64>().map(|v| format!("{:e}", v * 1e-14)).unwrap_or_else(|_| x.to_string());
                let body: String = rest
                    .trim_end_matches("]]")
                    .split("], [")
                    .map(|row| row.split(',').map(scale).collect::<Vec<_>>().join(", "))
                    .collect::<Vec<_>>()
                    .join("], [");
                format!("{key} = [[{body}]]")
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(scaled.contains("a = [[2e-14, 3e-15], [3e-15, 1e-14]]"), "{scaled}");
    for t in [&text, &scaled] {
        let out = run(t);
        assert!(out.contains("the clients' u-curvatures A_i differ"), "{out}");
    }
}
