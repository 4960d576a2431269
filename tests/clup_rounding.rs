//! FedCLUP's conditions and constants where floating point cannot be trusted blindly: a
//! condition on `mu` of near-singular features is decided only outside `mu`'s error bound
//! (inside it the claim is inconclusive, never "holds" on a condition exact arithmetic fails); a
//! step `3.5e-10` above its bound is outside the condition; a stated `r` below the data's `R` is
//! refused however far the ground truths are from the origin. Each with a negative control.

use fedbounds::families::clup::FAMILY;
use fedbounds::family::{Family, RunOptions};
use serde_json::Value;

fn run(text: &str) -> Value {
    serde_json::from_str(&FAMILY.run(text, "test.toml", &RunOptions::default()).expect("the scenario runs")).expect("JSON")
}

fn verdict<'a>(v: &'a Value, claim: &str) -> &'a Value {
    v["verdicts"].as_array().expect("verdicts").iter().find(|r| r["claim"] == claim).unwrap_or_else(|| panic!("{claim} evaluated"))
}

/// Three clients in `d = 2`, the first with features `[[1, 0], [1, delta]]` (`mu ~ delta^2/4`), at
/// `gamma`, `eta = 0.666666`, `K = 150`.
fn near_singular(delta: f64, gamma: f64) -> String {
    format!(
        r#"family = "clup"
name = "near-singular"
lambda = 0.5
rounds = 60
batch = 1
steps = {{ gamma = {gamma:e}, eta = 0.666666, k = 150 }}

[model]
noise = 0.3

[[model.draws]]

[[model.draws.clients]]
features = [[1.0, 0.0], [1.0, {delta:e}]]
labels = [1.1, 0.95]
ground_truth = [1.0, 0.5]

[[model.draws.clients]]
features = [[0.0, 1.0], [0.6, 0.8]]
labels = [0.4, 0.91]
ground_truth = [1.2, 0.3]

[[model.draws.clients]]
features = [[0.8, 0.6], [0.6, -0.8]]
labels = [1.16, -0.13]
ground_truth = [0.8, 0.7]
"#
    )
}

/// At `delta = 2.7e-6`, `mu = 1.8225e-12` exactly, and the eigensolver's `mu` is `2.3e-5` too
/// large; at `gamma = 1.8923533488403426` exact (14) fails by `2e-5` relative (the left side
/// `0.01858355 > 0.01858318`), while the computed one passed and Theorem 2 had been called
/// "holds". Its error bound (`eps kappa` scale, `1.5e-3` of `mu` here) now leaves (14) undecided:
/// inconclusive. Control: a step far inside (14) on the same data decides it, and the claim holds.
#[test]
fn condition_14_within_mus_rounding_is_undecided_not_holds() {
    let v = run(&near_singular(2.7e-6, 1.8923533488403426));
    let c = &v["constants"];
    let mu_error = c.get("mu_error").or_else(|| c[0].get("mu_error")).and_then(Value::as_f64);
    let t2 = verdict(&v, "CLUP-T2");
    assert_eq!(t2["verdict"], "inconclusive", "{t2:#}");
    let why = t2.to_string();
    assert!(why.contains("(14)") && why.contains("not decided in floating point"), "{why}");
    assert!(mu_error.is_none_or(|e| e > 0.0), "mu's error bound is positive: {mu_error:?}");
    // Control: gamma far inside (14) (its right side grows as gamma falls) decides the condition.
    let v = run(&near_singular(2.7e-6, 0.5));
    let t2 = verdict(&v, "CLUP-T2");
    assert_eq!(t2["verdict"], "holds", "{t2:#}");
}

/// The explicit example's local step `eta = 0.512820513` exceeds `1/L_l = 0.5128205128205...` by
/// `3.5e-10` relative: outside `eta <= 1/L_l`, so Theorem 2 is not applicable (a tolerance of
/// `1e-9` had admitted it). Control: the step rounded down to `0.512820512` is inside.
#[test]
fn a_step_just_above_its_bound_is_outside_the_condition() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/clup-explicit.toml")).expect("the example reads");
    let at = |eta: &str| run(&text.replace("batch = 2", &format!("batch = 2\nsteps = {{ eta = {eta}, k = 26 }}")));
    let over = at("0.512820513");
    let t2 = verdict(&over, "CLUP-T2");
    assert_eq!(t2["verdict"], "not-applicable", "{t2:#}");
    assert!(t2.to_string().contains("eta <= 1/L_l"), "{t2:#}");
    let inside = at("0.512820512");
    assert_ne!(verdict(&inside, "CLUP-T2")["verdict"], "not-applicable");
}

/// Ground truths near `1e9` with a spread `R = 1.8828e-6`: a mean of the ground truths themselves
/// errs by `eps 1e9`, 5% of `R`, and the bounds had read a stated `r` 2% below `R` (P(R) fails,
/// and Theorem 1 was called "holds" on it). Now `R` is computed from differences, a stated `r`
/// far below it is refused naming `model.r`, and one within the ground truths' rounding of it is
/// read as `max(r, R)`: the same run as with `r` omitted. Control: an `r` above `R` is read as given.
#[test]
fn a_stated_radius_below_the_datas_is_not_read_far_from_the_origin() {
    let far = |r: Option<f64>| {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/clup-explicit.toml")).expect("the example reads");
        let text = match r {
            Some(r) => text.replace("noise = 0.3", &format!("noise = 0.3\nr = {r:e}")),
            None => text,
        };
        let offsets = [[0.0, 0.0], [2.0e-6, 1.0e-6], [-1.0e-6, 2.5e-6]];
        let mut k = 0;
        text.lines()
            .map(|l| {
                if l.starts_with("ground_truth") {
                    let o = offsets[k];
                    k += 1;
                    format!("ground_truth = [{:?}, {:?}]", 1e9 + o[0], 1e9 + o[1])
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let e = FAMILY.run(&far(Some(1e-7)), "far.toml", &RunOptions::default()).expect_err("a radius far below R is refused");
    assert!(e.to_string().contains("model.r"), "{e}");
    let omitted = run(&far(None));
    let r = omitted["constants"][0]["r"].as_f64().expect("R");
    // The exact R of these floats (rational arithmetic): 1.8827689076236303e-6.
    assert!((r / 1.8827689076236303e-6 - 1.0).abs() < 1e-12, "R from differences: {r:e}");
    let slacks = |v: &Value| v["verdicts"].as_array().expect("verdicts").iter().map(|r| r["slack"].as_f64()).collect::<Vec<_>>();
    assert_eq!(slacks(&run(&far(Some(1.85e-6)))), slacks(&omitted), "an r below R is read as R");
    // Control: a larger stated r is read, and changes the bounds that read R.
    assert_ne!(slacks(&run(&far(Some(1e-3)))), slacks(&omitted));
}
