//! Sweeps know no family: a family written outside the crate, registered on its own, sweeps with
//! no code for sweeps. Its scenarios say how they end (a number checked against a bound, a
//! diverged metric, a NaN, a numerical error, a panic), so the sweep's handling of each is seen:
//! a failure or a panic becomes the scenario's status with its message, never an aborted sweep;
//! a non-finite number is named in the row, never a silent NaN.

use fedbounds::engine::{Estimator, Interval};
use fedbounds::family::{CheckRequest, ClaimKind, ClaimSummary, Family, FamilyReport, Progress, RunOptions, Silent, VerdictRow};
use fedbounds::registry::Registry;
use fedbounds::sweep::{report, Plan, Shard, Status, Sweep};
use fedbounds::verdict::{decide, numerical_note, Checkpoint, ConstantsSource, Evaluation};
use fedbounds::Error;

struct Probe;

static PROBE: Probe = Probe;

const CLAIM: &str = "PROBE-BOUND";

fn claim() -> ClaimSummary {
    ClaimSummary {
        id: CLAIM,
        kind: ClaimKind::Bound,
        title: "x <= 1",
        statement: "x <= 1".into(),
        source: "none",
        reading: fedbounds::claim::Reading { name: "primary", is_variant: false, description: "as stated" },
        metric: "x",
    }
}

impl Family for Probe {
    fn id(&self) -> &'static str {
        "probe"
    }
    fn title(&self) -> &'static str {
        "a family outside the crate"
    }
    fn claims(&self) -> Vec<ClaimSummary> {
        vec![claim()]
    }
    fn scenario_names(&self) -> fedbounds::Result<Vec<String>> {
        Ok(Vec::new())
    }
    fn check(&self, request: &CheckRequest, _progress: &dyn Progress) -> fedbounds::Result<FamilyReport> {
        let card = request.card.as_ref().ok_or_else(|| Error::field("card", "missing", "a card"))?;
        let table: toml::Table = toml::from_str(&card.text).map_err(|e| Error::parse(card.what.clone(), e))?;
        let mut rows = Vec::new();
        for s in table["scenarios"].as_array().into_iter().flatten().filter_map(|s| s.as_table()) {
            let name = s["name"].as_str().unwrap_or_default().to_string();
            if !request.scenarios.contains(&name) {
                continue;
            }
            let x = s.get("x").and_then(|v| v.as_float()).ok_or_else(|| Error::field("x", "missing or not a number", "a number"))?;
            let estimate = match s.get("mode").and_then(|m| m.as_str()).unwrap_or("ok") {
                "ok" => x,
                "diverge" => f64::INFINITY,
                "nan" => f64::NAN,
                "numerical" => return Err(Error::Numerical(format!("covariance lost positive semidefiniteness at round {x}"))),
                "panic" => panic!("probe panics at x = {x}"),
                other => return Err(Error::field("mode", format!("got `{other}`"), "ok, diverge, nan, numerical, panic")),
            };
            let point = Checkpoint { rounds: 7, estimate: Interval { mean: estimate, lower: estimate, upper: estimate }, bound: Some(1.0) };
            let evaluation = Evaluation {
                verdict: decide(&point.estimate, 1.0),
                slack: Some(1.0 / estimate),
                decisive: Some(point),
                checks: Vec::new(),
                failed: Vec::new(),
                notes: numerical_note(Some(&point)).into_iter().collect(),
                estimator: Estimator::Exact,
                series: Vec::new(),
                beyond_steps: None,
            };
            rows.push(VerdictRow {
                family: "probe",
                claim: CLAIM,
                reading: "primary",
                scenario: name,
                constants: ConstantsSource::Exact,
                label: None,
                evaluation,
                expected: None,
            });
        }
        Ok(FamilyReport { rows, ..Default::default() })
    }
    fn run(&self, _text: &str, _what: &str, _options: &RunOptions) -> fedbounds::Result<String> {
        Ok(String::new())
    }
}

#[test]
fn a_family_outside_the_crate_sweeps_and_every_ending_is_recorded() {
    let registry = Registry::new(vec![&PROBE]).unwrap();
    let card = "family = \"probe\"\n";
    let sweep = Sweep::parse(
        "name = \"probe\"\ncard = \"probe.toml\"\n[base]\nx = 0.5\n[[axes]]\nkey = \"mode\"\nvalues = [\"ok\", \"diverge\", \"nan\", \"numerical\", \"panic\", \"nonsense\"]\n[[axes]]\nkey = \"x\"\nvalues = [0.5, 2.0]\n",
        "probe sweep",
    )
    .unwrap();
    let plan = Plan::new(sweep, card, "probe.toml", &registry).unwrap();
    assert_eq!(plan.len, 12);
    let tmp = tempfile::tempdir().unwrap();
    let share = plan.run_share(Shard::ALL, tmp.path(), Some(2), &Silent).unwrap();
    assert_eq!(share.ran, 12, "a panic in one scenario does not stop the others");
    let records = report::collect(&plan, &[tmp.path().to_path_buf()]).unwrap();
    let by = |mode: &str, x: f64| records.iter().find(|r| r.parameters[0].value == mode && r.parameters[1].value.as_f64() == Some(x)).unwrap();
    // A number below and above the bound: holds, then violated (the negative control).
    assert_eq!(by("ok", 0.5).rows[0].verdict, fedbounds::verdict::VerdictKind::Holds);
    assert_eq!(by("ok", 2.0).rows[0].verdict, fedbounds::verdict::VerdictKind::Violated);
    // A diverged metric is violated and says where; a NaN decides nothing and says so.
    let diverged = &by("diverge", 0.5).rows[0];
    assert_eq!(diverged.verdict, fedbounds::verdict::VerdictKind::Violated);
    assert!(diverged.estimate.is_none() && diverged.detail.contains("numerical failure at T'=7") && diverged.detail.contains("diverged"), "{diverged:?}");
    let nan = &by("nan", 0.5).rows[0];
    assert_eq!(nan.verdict, fedbounds::verdict::VerdictKind::Inconclusive);
    assert!(nan.notes.iter().any(|n| n.contains("NaN")) && nan.detail.contains("numerical failure"), "{nan:?}");
    // A numerical error and a panic: the scenario failed, with its message.
    let numerical = by("numerical", 2.0);
    assert_eq!(numerical.status, Status::Failed);
    assert!(numerical.error.as_deref().unwrap().contains("positive semidefiniteness at round 2"));
    let panicked = by("panic", 0.5);
    assert_eq!(panicked.status, Status::Failed);
    assert!(panicked.error.as_deref().unwrap().contains("probe panics at x = 0.5"));
    // Bad input names the field.
    let bad = by("nonsense", 0.5);
    assert_eq!(bad.status, Status::BadInput);
    assert!(bad.error.as_deref().unwrap().contains("`mode`"));
    // No bare NaN reaches the report: the number is null and the row's words say why.
    assert!(nan.estimate.is_none() && nan.slack.is_none() && nan.notes.iter().any(|n| n.contains("the estimate is NaN")), "{nan:?}");
    let json: serde_json::Value = serde_json::from_str(&report::json(&plan, &records).unwrap()).unwrap();
    let row = &json["scenarios"].as_array().unwrap().iter().find(|r| r["parameters"][0]["value"] == "nan").unwrap()["rows"][0];
    assert!(row["estimate"].is_null() && row["detail"].as_str().unwrap().contains("numerical failure"), "{row}");
    let totals = report::Totals::of(&records);
    assert_eq!((totals.checked, totals.failed, totals.bad_input), (6, 4, 2));
}
