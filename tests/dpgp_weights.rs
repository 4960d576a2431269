//! DFedPGP's push weights other than `1/|N_out(i)|`: a `weighted` topology (every round's
//! column-stochastic weights edge by edge) and a `lazy` one (a graph whose nodes keep a fixed
//! share). Algorithm 1's own weights given either way run to the bytes of the default; other
//! weights change the mixing and keep every column summing to one; bad weights are refused with
//! the field and its range (exit 2); `run --export-instance` writes them and reads them back to
//! the same bytes. Each test has a negative control that shows it can fail.

use std::process::Command;

use fedbounds::families::dpgp::topology::{connectivity, GraphSequence, Topology};
use fedbounds::families::dpgp::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_fedbounds");

/// A generated scenario with short horizons and the topology `topology`.
fn scenario(name: &str, topology: &str) -> String {
    format!(
        "family = \"dpgp\"\nname = \"{name}\"\nm = 4\ndu = 2\ndv = 2\nl_u = 2.0\nmu_u = 0.5\nl_v = 2.0\nmu_v = 1.0\nheterogeneity = 1.0\n\
         sigma_u = 0.5\nsigma_v = 0.3\nseed = 11\nk_u = 2\nk_v = 2\nc_u = 0.4\nc_v = 1.0\nrounds = 40\nsweep = [10, 20, 40]\ngraph_seed = 5\n\
         topology = {topology}\n"
    )
}

fn run(text: &str) -> String {
    FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")
}

fn run_err(text: &str) -> String {
    FAMILY.run(text, "test.toml", &RunOptions::default()).expect_err("a bad scenario is refused").to_string()
}

/// The run's JSON without the topology's name.
fn unnamed(json: &str) -> Value {
    let mut v: Value = serde_json::from_str(json).expect("JSON");
    v.as_object_mut().expect("an object").remove("topology");
    v
}

/// The directed ring on 4 nodes with Algorithm 1's weights written out: each node keeps 1/2 and
/// pushes 1/2 to its successor.
const RING_WEIGHTS: &str = "[[[0, 0, 0.5], [0, 1, 0.5], [1, 1, 0.5], [1, 2, 0.5], [2, 2, 0.5], [2, 3, 0.5], [3, 3, 0.5], [3, 0, 0.5]]]";

#[test]
fn algorithm_1_weights_given_explicitly_run_to_the_bytes_of_the_default() {
    let ring = run(&scenario("w", "{ kind = \"ring\" }"));
    let weighted = run(&scenario("w", &format!("{{ kind = \"weighted\", rounds = {RING_WEIGHTS}, name = \"directed ring\" }}")));
    assert_eq!(ring, weighted, "the ring's own weights, given edge by edge, must give the same bytes");
    // Lazy with the uniform share 1/|N_out| = 1/2 on the ring: the same matrices, so the same run.
    let lazy = run(&scenario("w", "{ kind = \"lazy\", self_weight = 0.5, graph = { kind = \"ring\" } }"));
    assert_eq!(unnamed(&ring), unnamed(&lazy));
    // On random graphs of every degree the weighted form of the uniform weights is the same
    // sequence bit for bit.
    let random = Topology::RandomOut { k: 2 };
    let rounds: Vec<Vec<(usize, usize, f64)>> = (0..30)
        .map(|t| {
            let p = random.mixing(6, t, 9);
            (0..6).flat_map(|i| (0..6).map(move |j| (i, j))).filter(|&(i, j)| p[(j, i)] != 0.0).map(|(i, j)| (i, j, p[(j, i)])).collect()
        })
        .collect();
    let weighted = Topology::Weighted { rounds, name: None };
    assert!(weighted.validate("topology", 6).is_ok());
    let (a, b) = (GraphSequence::new(&random, 6, 30, 9), GraphSequence::new(&weighted, 6, 30, 9));
    assert_eq!((a.mixing, a.weights), (b.mixing, b.weights));
    // Negative control: another self-weight on the ring changes the run.
    let other = run(&scenario("w", "{ kind = \"lazy\", self_weight = 0.6, graph = { kind = \"ring\" } }"));
    assert_ne!(unnamed(&ring), unnamed(&other));
}

#[test]
fn lazy_weights_keep_columns_stochastic_and_slow_the_mixing() {
    let lazy = Topology::Lazy { self_weight: 0.8, graph: Box::new(Topology::RandomOut { k: 2 }) };
    assert!(lazy.validate("topology", 6).is_ok());
    let seq = GraphSequence::new(&lazy, 6, 60, 4);
    for p in &seq.mixing {
        for (i, col) in p.column_iter().enumerate() {
            assert!((col.sum() - 1.0).abs() <= 1e-15, "column {i} sums to {}", col.sum());
            assert_eq!(col[i], 0.8);
            assert!(col.iter().enumerate().all(|(j, w)| j == i || *w == 0.0 || *w == (1.0 - 0.8) / 2.0), "{col}");
        }
    }
    let (slow, uniform) = (connectivity(&lazy, 6, 60, 4), connectivity(&Topology::RandomOut { k: 2 }, 6, 60, 4));
    assert!(slow.column_stochastic && slow.delta > 0.0 && slow.window == uniform.window);
    // Keeping 0.8 instead of 1/3 mixes more slowly: a larger estimated q.
    assert!(slow.q > uniform.q + 0.1, "q lazy {} against uniform {}", slow.q, uniform.q);
    // Negative control: the lazy weights are not Algorithm 1's on these graphs.
    assert_ne!(seq.mixing[0], Topology::RandomOut { k: 2 }.mixing(6, 0, 4));
}

#[test]
fn bad_weights_are_refused_with_the_field_and_its_range() {
    let weighted = |rounds: &str| format!("{{ kind = \"weighted\", rounds = {rounds} }}");
    let cases = [
        (weighted("[[[0, 0, 1.2], [0, 1, -0.2]]]"), "scenario.topology.rounds[0][1]", "a finite weight >= 0"),
        (weighted("[[[0, 0, 0.5], [0, 1, 0.4]]]"), "scenario.topology.rounds[0]", "summing to 1 within 1e-12"),
        (weighted("[[[1, 1, 1.0]], [[0, 1, 1.0]]]"), "scenario.topology.rounds[1]", "a share w_ii > 0"),
        (weighted("[[[0, 0, 0.5], [0, 4, 0.5]]]"), "scenario.topology.rounds[0][1]", "node indices in [0, m - 1] = [0, 3]"),
        (weighted("[[[0, 0, 0.5], [0, 1, 0.25], [0, 1, 0.25]]]"), "scenario.topology.rounds[0][2]", "each pair [i, j] at most once"),
        (weighted("[[[0, 0, nan], [0, 1, 0.5]]]"), "scenario.topology.rounds[0][0]", "a finite weight >= 0"),
        (weighted("[]"), "scenario.topology.rounds", "a non-empty list"),
        ("{ kind = \"lazy\", self_weight = 0.0, graph = { kind = \"ring\" } }".into(), "scenario.topology.self_weight", "(0, 1]"),
        ("{ kind = \"lazy\", self_weight = 1.5, graph = { kind = \"ring\" } }".into(), "scenario.topology.self_weight", "(0, 1]"),
        ("{ kind = \"lazy\", self_weight = nan, graph = { kind = \"ring\" } }".into(), "scenario.topology.self_weight", "(0, 1]"),
        (
            "{ kind = \"lazy\", self_weight = 0.5, graph = { kind = \"lazy\", self_weight = 0.5, graph = { kind = \"ring\" } } }".into(),
            "scenario.topology.graph.kind",
            "an unweighted kind",
        ),
        ("{ kind = \"lazy\", self_weight = 0.5, graph = { kind = \"random-out\", k = 4 } }".into(), "scenario.topology.graph.k", "[1, m - 1]"),
    ];
    for (topology, field, allowed) in &cases {
        let e = run_err(&scenario("bad", topology));
        assert!(e.contains(&format!("`{field}`")) && e.contains(allowed), "{topology}: {e}");
    }
    let row = run_err(&format!("{}mixing = \"row\"\n", scenario("bad", "{ kind = \"lazy\", self_weight = 0.5, graph = { kind = \"ring\" } }")));
    assert!(row.contains("`scenario.mixing`") && row.contains("mixing = \"column\""), "{row}");
    // Negative control: the same shapes with good weights run (a node listing none keeps all).
    for good in [weighted("[[[0, 0, 0.75], [0, 1, 0.25]], [[1, 1, 1.0]]]"), "{ kind = \"lazy\", self_weight = 1.0, graph = { kind = \"ring\" } }".into()] {
        run(&scenario("good", &good));
    }
}

#[test]
fn the_command_line_refuses_a_bad_column_with_exit_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let go = |name: &str, rounds: &str| {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, scenario(name, &format!("{{ kind = \"weighted\", rounds = {rounds} }}"))).expect("written");
        let out = dir.join(format!("{name}.json"));
        let o = Command::new(BIN).arg("run").arg(&file).arg("--out").arg(&out).output().expect("the binary runs");
        (o.status.code(), String::from_utf8_lossy(&o.stderr).to_string(), out.exists())
    };
    let (code, stderr, written) = go("bad", "[[[0, 0, 0.5], [0, 1, 0.6]]]");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("scenario.topology.rounds[0]") && stderr.contains("node 0's weights sum to 1.1"), "{stderr}");
    assert!(!written);
    // Negative control: a good column runs and writes its file.
    let (code, stderr, written) = go("good", "[[[0, 0, 0.5], [0, 1, 0.5]]]");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(written);
}

#[test]
fn weighted_and_lazy_scenarios_export_to_themselves() {
    let export = |text: &str| FAMILY.export_instance(text, "test.toml").expect("the instance exports");
    let body = |t: &str| t.split_once('\n').map(|(_, b)| b.to_string()).unwrap_or_default();
    let sources = [
        ("lazy", "{ kind = \"lazy\", self_weight = 0.7, graph = { kind = \"random-out\", k = 2 } }".to_string()),
        (
            "weighted",
            "{ kind = \"weighted\", rounds = [[[0, 0, 0.75], [0, 1, 0.125], [0, 2, 0.125]], [[2, 2, 0.25], [2, 3, 0.75], [3, 3, 0.5], [3, 0, 0.5]]] }".into(),
        ),
    ];
    for (name, topology) in &sources {
        let text = scenario(name, topology);
        let exported = export(&text);
        assert!(exported.contains("kind = \"weighted\""), "{name}: weights written\n{exported}");
        assert_eq!(run(&text), run(&exported), "{name}: the exported file runs to other bytes");
        assert_eq!(body(&export(&exported)), body(&exported), "{name}: export is not a fixed point");
    }
    // The default weights still export as an unweighted edge list.
    assert!(export(&scenario("ring", "{ kind = \"ring\" }")).contains("kind = \"explicit\""));
    // Negative control: another self-weight exports and runs to other bytes.
    let (a, b) = (scenario("lazy", &sources[0].1), scenario("lazy", &sources[0].1.replace("0.7", "0.6")));
    assert_ne!(export(&a), export(&b));
    assert_ne!(run(&export(&a)), run(&export(&b)));
}
