//! DFedPGP's Lemma 1, Lemma 2 (the proof's constant and the printed one) and the push-sum bound
//! (15): verdicts on their card scenarios with a negative control each, hand-computed sides, and
//! the exact sides against seeded sampling.

use fedbounds::engine::student_t_interval;
use fedbounds::families::dpgp::card::{embedded_card, parse_scenario};
use fedbounds::families::dpgp::check::{run_scenario, ScenarioRun};
use fedbounds::families::dpgp::round::{exact_trajectory_with, sampled_trajectory, Params, Trajectory};
use fedbounds::families::dpgp::topology::GraphSequence;
use fedbounds::family::{CheckRequest, EstimatorChoice, Silent};
use fedbounds::registry::Registry;
use fedbounds::verdict::VerdictKind;

fn registry() -> Registry {
    Registry::new(vec![&fedbounds::families::dpgp::FAMILY]).unwrap()
}

/// Verdict and slack of `claim` on a card scenario, with the bound scaled by `scale`.
fn verdict(claim: &str, scenario: &str, scale: Option<f64>) -> (VerdictKind, Option<f64>) {
    let req = CheckRequest { claims: vec![claim.into()], scenarios: vec![scenario.into()], bound_scale: scale, ..Default::default() };
    let outcome = registry().check(&req, &Silent).unwrap();
    let row = outcome.rows().find(|r| r.claim == claim && r.scenario == scenario).unwrap();
    (row.evaluation.verdict, row.evaluation.slack)
}

fn card_run(name: &str) -> ScenarioRun {
    let card = embedded_card().unwrap();
    run_scenario(card.scenarios.iter().find(|s| s.name == name).unwrap(), 1.0).unwrap()
}

#[test]
fn lemma1_holds_with_slack_16_where_the_phase_is_one_noiseless_step() {
    // l3-tight: K_v = 1, sigma_v = 0, so v^1 - v^0 = -eta_v grad exactly and the left side is
    // eta_v^2 ||grad||^2 against 16 eta_v^2 ||grad||^2: slack 16 (the factors lost in the proof).
    let (v, slack) = verdict("DPGP-L1", "l3-tight", None);
    assert_eq!(v, VerdictKind::Holds);
    assert!((slack.unwrap() - 16.0).abs() < 1e-9, "{slack:?}");
    // By hand on the run: every client's drift is eta_v^2 times its starting gradient.
    let run = card_run("l3-tight");
    let eta = run.params.eta_v;
    for local in &run.trajectory.local[..5] {
        for (d, g) in local.v_drift.iter().zip(&local.v_grad) {
            assert!((d - eta * eta * g).abs() <= 1e-12 * (eta * eta * g).max(1e-300), "{d} vs {}", eta * eta * g);
        }
    }
    // Negative control: the bound below its slack is violated, just above it holds.
    assert_eq!(verdict("DPGP-L1", "l3-tight", Some(1.0 / 17.0)).0, VerdictKind::Violated);
    assert_eq!(verdict("DPGP-L1", "l3-tight", Some(1.0 / 15.0)).0, VerdictKind::Holds);
    // Past its step condition it is not applicable and names it.
    let (v, _) = verdict("DPGP-L1", "eta-v-past", None);
    assert_eq!(v, VerdictKind::NotApplicable);
}

#[test]
fn lemma2_the_printed_constant_fails_as_k_u_grows_and_the_proof_constant_holds() {
    // The printed 32 K_u eta_u^2: tight at K_u = 32, violated at K_u = 64 (I-DPGP5).
    let (v, slack) = verdict("DPGP-L2~printed", "l3-printed-k32", None);
    assert_eq!(v, VerdictKind::Holds);
    assert!(slack.unwrap() < 2.0, "{slack:?}");
    assert_eq!(verdict("DPGP-L2~printed", "l3-printed-k32", Some(0.5)).0, VerdictKind::Violated, "the bound / 2 on its tight scenario");
    assert_eq!(verdict("DPGP-L2~printed", "l2-printed-k64", None).0, VerdictKind::Violated);
    // The proof's 32 K_u^2 eta_u^2 holds there, with the slack of about 32 the proof loses.
    let (v, slack) = verdict("DPGP-L2", "l2-printed-k64", None);
    assert_eq!(v, VerdictKind::Holds);
    let s = slack.unwrap();
    assert!(s > 16.0, "{s}");
    assert_eq!(verdict("DPGP-L2", "l2-printed-k64", Some(0.5 / s)).0, VerdictKind::Violated);
    // By hand: one noiseless step from u_i^t is -eta_u grad_u F_i(z_i^t, v_i^{t+1}), and at
    // round 0 (u = 0, V^1 = V^0 - eta_v grad_v) the drift after K_u steps is about K_u^2 times it.
    let run = card_run("l3-printed-k32");
    let first = &run.trajectory.local[0];
    let k_u = run.params.k_u;
    let ratio = first.u_drift[k_u - 1] / first.u_drift[0];
    assert!(ratio > 0.8 * (k_u * k_u) as f64 && ratio < 1.2 * (k_u * k_u) as f64, "{ratio}");
    // Not applicable where Assumption 4 as stated is infinite.
    assert_eq!(verdict("DPGP-L2", "hetero-ring", None).0, VerdictKind::NotApplicable);
}

#[test]
fn eq15_with_own_gradients_only_is_violated_where_a_node_is_moved_by_the_others() {
    // Tight where it holds: the bound / 2 on the noiseless hetero-ring is violated.
    let (v, slack) = verdict("DPGP-EQ15", "hetero-ring-noiseless", None);
    assert_eq!(v, VerdictKind::Holds);
    assert!(slack.unwrap() < 2.0, "{slack:?}");
    assert_eq!(verdict("DPGP-EQ15", "hetero-ring-noiseless", Some(0.5)).0, VerdictKind::Violated);
    // With noise the inequality bounds every realisation: the noiseless path keeping it decides
    // nothing (a node whose noise cancels its own gradients breaks it), while one breaking it
    // is a counterexample (the bound / 2 on ring-high).
    assert_eq!(verdict("DPGP-EQ15", "ring-high", None).0, VerdictKind::Inconclusive);
    assert_eq!(verdict("DPGP-EQ15", "ring-high", Some(0.5)).0, VerdictKind::Violated);
    assert_eq!(verdict("DPGP-EQ15", "exp-low", None).0, VerdictKind::Violated);
    // l3-tight: heterogeneity on an eigenvector of the graph, some nodes' own gradients near 0.
    let (v, slack) = verdict("DPGP-EQ15", "l3-tight", None);
    assert_eq!(v, VerdictKind::Violated);
    assert!(slack.unwrap() < 0.1, "{slack:?}");
    // By hand: with u_i^0 = 0 every node starts at the average, and the violating node's own
    // gradients are small next to its deviation.
    let run = card_run("l3-tight");
    assert!(run.trajectory.path[0].deviation.iter().all(|d| *d == 0.0));
    let (t, conn, eta) = (8, run.connectivity, run.params.eta_u);
    let p = &run.trajectory.path[t];
    let rhs = |i: usize| eta * conn.c * (0..=t).map(|r| conn.q.powi((t - r) as i32) * run.trajectory.path[r].gradient_sum[i]).sum::<f64>();
    let worst = (0..p.deviation.len()).map(|i| p.deviation[i] / rhs(i)).fold(0.0, f64::max);
    assert!(worst > 10.0, "deviation / own-gradient bound at t = {t}: {worst}");
    // Its right side is computed from node i's own gradients only: the node with the largest
    // own gradients is not the violating one.
    let own = |i: usize| run.trajectory.path[..=t].iter().map(|r| r.gradient_sum[i]).sum::<f64>();
    let ratios: Vec<f64> = (0..p.deviation.len()).map(|i| p.deviation[i] / rhs(i)).collect();
    let strongest = (0..ratios.len()).fold(0, |a, i| if own(i) > own(a) { i } else { a });
    assert!(ratios[strongest] < worst, "{ratios:?}");
    // Outside push-sum mixing it is not applicable.
    assert_eq!(verdict("DPGP-EQ15", "hub-rowstoch", None).0, VerdictKind::NotApplicable);
}

#[test]
fn the_lemmas_under_monte_carlo_agree_with_the_exact_verdicts() {
    let claims = ["DPGP-L1", "DPGP-L2", "DPGP-L2~printed", "DPGP-EQ15"];
    let mc = CheckRequest {
        claims: claims.iter().map(|c| c.to_string()).collect(),
        scenarios: vec!["ring-high".into()],
        estimator: Some(EstimatorChoice::MonteCarlo),
        ..Default::default()
    };
    let outcome = registry().check(&mc, &Silent).unwrap();
    for r in outcome.rows() {
        assert_eq!(r.evaluation.estimator, fedbounds::engine::Estimator::MonteCarlo);
        // (15) bounds every realisation: sampled paths that keep it decide nothing on a noisy run.
        let kept = if r.claim == "DPGP-EQ15" { VerdictKind::Inconclusive } else { VerdictKind::Holds };
        assert_eq!(r.evaluation.verdict, kept, "{} under sampling", r.claim);
    }
    let outcome = registry().check(&CheckRequest { bound_scale: Some(0.01), ..mc }, &Silent).unwrap();
    for r in outcome.rows() {
        assert_eq!(r.evaluation.verdict, VerdictKind::Violated, "{} with the bound / 100 under sampling", r.claim);
    }
}

#[test]
fn exact_lemma_sides_agree_with_seeded_sampling() {
    let text = "name = \"t\"\ntopology = { kind = \"random-out\", k = 2 }\nm = 4\ndu = 2\ndv = 1\nmu_u = 0.5\nmu_v = 0.5\nheterogeneity = 1.0\ncoupling = 0.4\nsigma_u = 0.6\nsigma_v = 0.6\nk_u = 3\nk_v = 2\nc_u = 0.5\nc_v = 0.5\nrounds = 12\nsweep = [4, 8, 12]\nseed = 5\ngraph_seed = 9\n";
    let s = parse_scenario(text, "test").unwrap();
    let inst = s.instance().build("s").unwrap();
    let k = inst.constants().unwrap();
    let params: Params = s.params(s.rounds, k.l_u, k.l_v);
    let seq = GraphSequence::new(&s.topology, s.m, s.rounds, s.graph_seed);
    let exact = exact_trajectory_with(&inst, &params, &seq, s.rounds, true).unwrap();
    let reps: Vec<Trajectory> = (0..400).map(|r| sampled_trajectory(&inst, &params, &seq, s.rounds, 11, r)).collect();
    type Pick = fn(&Trajectory, usize) -> f64;
    let picks: [(&str, Pick); 4] = [
        ("v_drift", |x, t| x.local[t].v_drift[3]),
        ("v_grad", |x, t| x.local[t].v_grad[1]),
        ("u_drift", |x, t| x.local[t].u_drift[2]),
        ("u_grad", |x, t| x.local[t].u_grad),
    ];
    let confidence = 1.0 - 0.001 / 12.0;
    for t in [0usize, 4, 11] {
        for (name, pick) in picks {
            let samples: Vec<f64> = reps.iter().map(|r| pick(r, t)).collect();
            let iv = student_t_interval(&samples, confidence);
            let e = pick(&exact, t);
            assert!(iv.lower <= e && e <= iv.upper, "{name} at t = {t}: exact {e}, sampled [{}, {}]", iv.lower, iv.upper);
        }
    }
    // Negative control: the exact drift without the gradient noise is told apart.
    let mut quiet_inst = inst.clone();
    quiet_inst.sigma_u = 0.0;
    let quiet = exact_trajectory_with(&quiet_inst, &params, &seq, s.rounds, true).unwrap();
    let samples: Vec<f64> = reps.iter().map(|r| r.local[4].u_drift[2]).collect();
    let iv = student_t_interval(&samples, confidence);
    assert!(quiet.local[4].u_drift[2] < iv.lower, "{} vs [{}, {}]", quiet.local[4].u_drift[2], iv.lower, iv.upper);
    // The noiseless path of (15) is the exact run's mean: it matches a sampled path without noise.
    let mut silent = inst.clone();
    silent.sigma_u = 0.0;
    silent.sigma_v = 0.0;
    let path = sampled_trajectory(&silent, &params, &seq, s.rounds, 11, 0);
    let exact_quiet = exact_trajectory_with(&silent, &params, &seq, s.rounds, true).unwrap();
    for (a, b) in path.path.iter().zip(&exact_quiet.path) {
        for (x, y) in a.deviation.iter().zip(&b.deviation).chain(a.gradient_sum.iter().zip(&b.gradient_sum)) {
            assert!((x - y).abs() <= 1e-10 * (1.0 + x.abs()), "{x} vs {y}");
        }
    }
}

/// Lemma 3 and the u-step (26) rest on Lemmas 2 and 3 only (004:L545, L589-603): past Lemma 1's
/// `eta_v <= 1/(2 K_v L_v)` (eta-v-past) they are checked and hold, no condition of theirs naming
/// `eta_v`. Negative control: the v-step (31) and (32), which use Lemma 1, are not applicable
/// there and name it.
#[test]
fn lemma_3_and_the_u_step_carry_no_condition_on_eta_v() {
    let req = CheckRequest { scenarios: vec!["eta-v-past".into()], ..Default::default() };
    let outcome = registry().check(&req, &Silent).unwrap();
    let row = |id: &str| outcome.rows().find(|r| r.claim == id && r.scenario == "eta-v-past").unwrap_or_else(|| panic!("{id}")).evaluation.clone();
    for id in ["DPGP-L3", "DPGP-L3~printed", "DPGP-EQ26", "DPGP-EQ26~bracket-aa"] {
        let e = row(id);
        assert_eq!(e.verdict, VerdictKind::Holds, "{id}: {e:?}");
        assert!(e.checks.iter().all(|c| !c.name.contains("eta_v")), "{id}: {:?}", e.checks);
    }
    for id in ["DPGP-EQ31", "DPGP-REC32"] {
        let e = row(id);
        assert_eq!(e.verdict, VerdictKind::NotApplicable, "{id}");
        assert!(e.failed.iter().any(|f| f.contains("eta_v <= 1/(2 K_v L_v)")), "{id}: {:?}", e.failed);
    }
}

/// Lemma 3 as printed, (13), needs its own denominator positive, `eta_u < (1-q)/(L_u C sqrt(8
/// K_u))`, not the proof's `(K_u+1)` one: a step between the two admits the printed reading only.
/// Control: below both, both readings admit it.
#[test]
fn lemma_3_as_printed_is_admitted_up_to_its_own_denominator() {
    use fedbounds::families::dpgp::claims::{lemma3_steps_for, AaReading};
    let (l_u, delta, c, q, k_u) = (1.0, 1.0, 1.0, 0.5, 4);
    let proof_limit = (1.0 - q) / (l_u * c * (8.0 * k_u as f64 * (k_u as f64 + 1.0)).sqrt());
    let printed_limit = (1.0 - q) / (l_u * c * (8.0 * k_u as f64).sqrt());
    let at = |eta_u: f64, reading: AaReading| {
        let p = Params { eta_u, eta_v: 1.0, k_u, k_v: 1, noise_draws: Default::default() };
        lemma3_steps_for(l_u, delta, c, q, &p, reading).into_iter().find(|c| c.name.contains("1-q")).expect("the positivity check").holds
    };
    let between = (proof_limit * printed_limit).sqrt();
    assert!(at(between, AaReading::Printed) && !at(between, AaReading::Proof));
    assert!(at(0.5 * proof_limit, AaReading::Printed) && at(0.5 * proof_limit, AaReading::Proof));
    assert!(!at(1.01 * printed_limit, AaReading::Printed));
}
