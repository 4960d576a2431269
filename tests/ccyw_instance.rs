//! FedAvg-P's explicit instances: `run --export-instance` writes a generated scenario's instance
//! by its matrices, and running the written file gives the same results (the scenario hash aside,
//! which covers the instance as written). The negative control changes one exported number and
//! sees the run change.

use fedbounds::families::ccyw::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

/// A generated, coupled, noisy scenario with a short horizon.
const GENERATED: &str = "family = \"ccyw\"\nname = \"export\"\nrounds = 30\nreplicates = 2\nseed = 3\n\
    instance.generated = { n = 4, du = 2, dv = 1, l = 1.0, mu = 0.1, sigma_u = 0.5, sigma_v = 0.3, b = 1.0, coupling = \"coupled\", init_distance = 3.0, seed = 11 }\n\
    algorithm = { k = 3, m = 2, gamma = { admissible = \"CCYW-T3.7\" }, eta_u = { admissible = \"CCYW-T3.7\" }, eta_v = { admissible = \"CCYW-T3.7\" } }\n";

/// The run's JSON without the scenario hash.
fn run(text: &str) -> Value {
    let mut json: Value = serde_json::from_str(&FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")).unwrap();
    json.as_object_mut().expect("an object").remove("scenario_hash");
    json
}

fn export(text: &str) -> String {
    FAMILY.export_instance(text, "test.toml").expect("the instance exports")
}

#[test]
fn an_exported_instance_runs_to_the_same_results() {
    // `run --export-instance` had refused every FedAvg-P scenario ("`ccyw` exports no instances"),
    // though the family reads the explicit form.
    let exported = export(GENERATED);
    assert!(exported.contains("[instance.explicit]") && !exported.contains("generated"), "explicit form only\n{exported}");
    assert_eq!(run(GENERATED), run(&exported), "the exported file runs to other results");
    // The explicit form of an explicit file is itself (after the header naming the source).
    let body = |t: &str| t.split_once('\n').map(|(_, b)| b.to_string()).unwrap_or_default();
    assert_eq!(body(&export(&exported)), body(&exported), "export is not a fixed point");
    // Negative control: one changed number of the first client's linear term changes the run.
    let line = exported.lines().find(|l| l.starts_with("linear = [")).expect("a linear line");
    let (head, rest) = line.split_once('[').unwrap();
    let (first, tail) = rest.split_once(',').unwrap();
    let changed = format!("{head}[{:?},{tail}", first.trim().parse::<f64>().unwrap() + 0.5);
    let perturbed = exported.replacen(line, &changed, 1);
    assert_ne!(perturbed, exported);
    assert!(run(GENERATED) != run(&perturbed), "a changed instance ran to the same results");
}
