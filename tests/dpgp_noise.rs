//! DFedPGP's two readings of when a client draws its gradient noise: fresh at every local step
//! (the proofs', the default) or once per round (Algorithm 1's line 3, "sample a batch xi_i",
//! 004:L100; `noise_draws = "per-round"`). On one node with `B = 0` a phase of `K` steps
//! `x <- x - eta (h x - g + n_k)` ends with noise `-sum_k w_k n_{K-1-k}`, `w_k = eta (1 - eta h)^k`:
//! variance `(sum_k w_k^2) sigma^2` with fresh draws, `(sum_k w_k)^2 sigma^2` with one draw.
//! The exact moments give these closed forms, the Monte Carlo curves follow the exact ones of
//! their reading and not of the other, the run's JSON names the reading, and without noise the
//! two readings coincide bit for bit (control).

use fedbounds::engine::{Design, Moments, RandomAffineRound, RoundMaps};
use fedbounds::families::dpgp::card::parse_scenario;
use fedbounds::families::dpgp::problem::{noise, Covariance, Instance};
use fedbounds::families::dpgp::round::{exact_trajectory, local_iterates, sampled_trajectory, DpgpRound, Layout, NoiseDraws, Params};
use fedbounds::families::dpgp::topology::{GraphSequence, Topology};
use fedbounds::families::dpgp::FAMILY;
use fedbounds::family::{Family, RunOptions};
use nalgebra::{DMatrix, DVector};

/// One node (`m = 1`, `du = dv = 1`, `A = 1`, `B = 0`, `D = 2`) with noise levels `sigma`.
fn one_node(sigma: f64, draws: &str) -> String {
    format!(
        "family = \"dpgp\"\nname = \"one\"\ntopology = {{ kind = \"complete\" }}\nm = 1\ndu = 1\ndv = 1\nk_u = 4\nk_v = 3\nc_u = 0.4\nc_v = 0.3\n\
         rounds = 10\nsweep = [10, 20, 40]\nnoise_draws = \"{draws}\"\n[instance]\nsigma_u = {sigma}\nsigma_v = {sigma}\n[[instance.clients]]\n\
         a = [[1.0]]\nb = [[0.0]]\nd = [[2.0]]\nlin_u = [1.0]\nlin_v = [0.5]\nv0 = [0.0]\n"
    )
}

const ETA_U: f64 = 0.2;
const ETA_V: f64 = 0.15;

fn instance(sigma: f64) -> Instance {
    parse_scenario(&one_node(sigma, "per-step"), "one.toml").expect("the scenario reads").build_instance("scenario").expect("the instance builds")
}

fn params(draws: NoiseDraws) -> Params {
    Params { eta_u: ETA_U, eta_v: ETA_V, k_u: 4, k_v: 3, noise_draws: draws }
}

/// `(sum_k w_k^2, (sum_k w_k)^2)` for `w_k = eta (1 - eta h)^k`, `k < K`.
fn weights(eta: f64, h: f64, k: i32) -> (f64, f64) {
    let w: Vec<f64> = (0..k).map(|j| eta * (1.0 - eta * h).powi(j)).collect();
    (w.iter().map(|x| x * x).sum(), w.iter().sum::<f64>().powi(2))
}

/// The state's covariance after one round from `z0` (exact moments).
fn one_round(inst: &Instance, draws: NoiseDraws) -> DMatrix<f64> {
    let (mixing, mu) = (DMatrix::identity(1, 1), DVector::from_element(1, 1.0));
    let round = DpgpRound { inst, params: params(draws), mixing: &mixing, weights: &mu };
    let inc = Design::Full { n: 1 }.inclusion_moments().expect("full participation");
    let z0 = Layout::of(inst).initial(inst);
    assert_eq!(round.noise_per_component(), if draws == NoiseDraws::PerStep { 4 + 3 } else { 2 });
    RoundMaps::probe(&round).propagate(&Moments::point(z0), &inc).cov
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

#[test]
fn one_round_variances_are_the_closed_forms_of_each_reading() {
    let sigma = 0.7;
    let inst = instance(sigma);
    let (u_fresh, u_once) = weights(ETA_U, 1.0, 4);
    let (v_fresh, v_once) = weights(ETA_V, 2.0, 3);
    let s2 = sigma * sigma;
    let fresh = one_round(&inst, NoiseDraws::PerStep);
    let once = one_round(&inst, NoiseDraws::PerRound);
    // State [u; v; ubar_prev]: Var u at 0, Var v at 1.
    assert!(close(fresh[(0, 0)], u_fresh * s2) && close(fresh[(1, 1)], v_fresh * s2), "{fresh}");
    assert!(close(once[(0, 0)], u_once * s2) && close(once[(1, 1)], v_once * s2), "{once}");
    // The numbers: K_u = 4, eta_u = 0.2, h = 1: 0.0925 against 0.3486 (ratio 3.77).
    assert!((u_fresh - 0.092_469_76).abs() < 1e-9 && (u_once - 0.348_572_16).abs() < 1e-9, "{u_fresh} {u_once}");
    // With h = 0 the weights are all eta: K eta^2 against K^2 eta^2.
    assert_eq!(weights(0.5, 0.0, 4), (4.0 * 0.25, 16.0 * 0.25));
    // Negative control: the other reading's closed form misses by the ratio.
    assert!(!close(once[(0, 0)], u_fresh * s2) && !close(fresh[(0, 0)], u_once * s2));
    assert!(once[(0, 0)] / fresh[(0, 0)] > 3.7);
}

/// The exact objective curve `E F(ubar^t, V^t)` and the Monte Carlo mean of `reps` replicates
/// with its standard error, `t <= rounds`.
fn curves(inst: &Instance, draws: NoiseDraws, rounds: usize, reps: u64) -> (Vec<f64>, Vec<(f64, f64)>) {
    let seq = GraphSequence::new(&Topology::Complete, 1, rounds, 0);
    let p = params(draws);
    let exact = exact_trajectory(inst, &p, &seq, rounds).expect("exact moments").objective;
    let runs: Vec<Vec<f64>> = (0..reps).map(|r| sampled_trajectory(inst, &p, &seq, rounds, 17, r).objective).collect();
    let mc = (0..=rounds)
        .map(|t| {
            let x: Vec<f64> = runs.iter().map(|o| o[t]).collect();
            let n = x.len() as f64;
            let mean = x.iter().sum::<f64>() / n;
            let var = x.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1.0);
            (mean, (var / n).sqrt())
        })
        .collect();
    (exact, mc)
}

#[test]
fn monte_carlo_curves_follow_their_own_reading() {
    let inst = instance(0.7);
    let (rounds, reps) = (12, 4000);
    let (fresh, mc_fresh) = curves(&inst, NoiseDraws::PerStep, rounds, reps);
    let (once, mc_once) = curves(&inst, NoiseDraws::PerRound, rounds, reps);
    for t in 1..=rounds {
        for (exact, mc, other, name) in [(&fresh, &mc_fresh, &once, "per-step"), (&once, &mc_once, &fresh, "per-round")] {
            let (mean, se) = mc[t];
            assert!((mean - exact[t]).abs() <= 5.0 * se, "{name}, round {t}: MC {mean} +- {se} against exact {}", exact[t]);
            // Negative control: the other reading's exact curve is far outside the interval.
            assert!((mean - other[t]).abs() > 10.0 * se, "{name}, round {t}: MC {mean} +- {se} against the other reading {}", other[t]);
        }
    }
    // Shared noise raises the level: E F by 1/2 h sigma^2 ((sum w)^2 - sum w^2) per block after one round.
    let (u_fresh, u_once) = weights(ETA_U, 1.0, 4);
    let (v_fresh, v_once) = weights(ETA_V, 2.0, 3);
    let gap = 0.5 * 0.49 * (u_once - u_fresh) + 0.5 * 2.0 * 0.49 * (v_once - v_fresh);
    assert!(close(once[1] - fresh[1], gap), "{} against {gap}", once[1] - fresh[1]);
}

#[test]
fn without_noise_the_two_readings_coincide() {
    let inst = instance(0.0);
    let (fresh, mc_fresh) = curves(&inst, NoiseDraws::PerStep, 12, 3);
    let (once, mc_once) = curves(&inst, NoiseDraws::PerRound, 12, 3);
    assert_eq!(fresh, once);
    assert_eq!(mc_fresh, mc_once);
    // The whole run likewise, but for the reading it names.
    let json = |draws: &str| FAMILY.run(&one_node(0.0, draws), "one.toml", &RunOptions::default()).expect("the scenario runs");
    let (a, b) = (json("per-step"), json("per-round"));
    assert!(!a.contains("noise_draws") && b.contains("\"noise_draws\": \"per-round\""));
    assert_eq!(parsed(&a), without_reading(&b));
    // Negative control: with noise the runs differ beyond the name.
    let noisy = |draws: &str| FAMILY.run(&one_node(0.7, draws), "one.toml", &RunOptions::default()).expect("the scenario runs");
    assert_ne!(parsed(&noisy("per-step")), without_reading(&noisy("per-round")));
}

fn parsed(json: &str) -> serde_json::Value {
    serde_json::from_str(json).expect("JSON")
}

/// The run's JSON with every `noise_draws` key removed.
fn without_reading(json: &str) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(o) => {
                o.remove("noise_draws");
                o.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = parsed(json);
    strip(&mut v);
    v
}

/// Client `i`'s local phase in its vector form, as nalgebra evaluates it (the reference the
/// allocation-free [`local_iterates`] is held to, bit for bit).
fn local_phase_by_vectors(
    inst: &Instance,
    p: &Params,
    i: usize,
    mu: f64,
    u0: &DVector<f64>,
    v0: &DVector<f64>,
    xi: &[f64],
) -> (Vec<DVector<f64>>, Vec<DVector<f64>>, DVector<f64>) {
    let (du, dv) = (inst.du, inst.dv);
    let (su, sv) = (inst.sigma_u / (du as f64).sqrt(), inst.sigma_v / (dv as f64).sqrt());
    let c = &inst.clients[i];
    let draw = |k: usize| if p.noise_draws.is_per_step() { k } else { 0 };
    let z0 = u0 / mu;
    let mut vs = vec![v0.clone()];
    for k in 0..p.k_v {
        let r = draw(k);
        let g = c.grad_v(&z0, &vs[k]) + noise(c.noise_v.as_ref(), &xi[r * dv..(r + 1) * dv], sv);
        vs.push(&vs[k] - g * p.eta_v);
    }
    let base = if p.noise_draws.is_per_step() { p.k_v } else { p.k_v.min(1) } * dv;
    let mut us = vec![u0.clone()];
    let mut sum = DVector::zeros(du);
    for k in 0..p.k_u {
        let r = draw(k);
        let g = c.grad_u(&(&us[k] / mu), &vs[p.k_v]) + noise(c.noise_u.as_ref(), &xi[base + r * du..base + (r + 1) * du], su);
        sum += &g;
        us.push(&us[k] - g * p.eta_u);
    }
    (vs, us, sum)
}

#[test]
fn the_local_phase_has_the_bits_of_its_vector_form() {
    // du = 9 exercises the dot's blocks of eight; coupling makes B nonzero.
    let text = "family = \"dpgp\"\nname = \"wide\"\ntopology = { kind = \"ring\" }\nheterogeneity = 0.5\ncoupling = 0.3\nm = 3\ndu = 9\ndv = 3\n\
                l_u = 2.0\nmu_u = 1.0\nl_v = 2.0\nmu_v = 1.0\nsigma_u = 0.5\nsigma_v = 0.7\nv0_norm = 1.0\nseed = 7\nk_u = 3\nk_v = 2\nc_u = 0.4\n\
                c_v = 1.0\nrounds = 10\nsweep = [10, 20, 40]\ngraph_seed = 3\n";
    let mut inst = parse_scenario(text, "wide.toml").expect("the scenario reads").build_instance("scenario").expect("the instance builds");
    let spd = |d: usize, s: f64| {
        let r = DMatrix::from_fn(d, d, |i, j| ((i * d + j) as f64 * s).sin());
        &r * r.transpose() + DMatrix::identity(d, d) * 0.1
    };
    inst.clients[1].noise_u = Some(Covariance::new(spd(9, 0.37)));
    inst.clients[1].noise_v = Some(Covariance::new(spd(3, 0.53)));
    let (du, dv) = (inst.du, inst.dv);
    for draws in [NoiseDraws::PerStep, NoiseDraws::PerRound] {
        let p = Params { eta_u: 0.13, eta_v: 0.21, k_u: 3, k_v: 2, noise_draws: draws };
        for i in 0..3 {
            let u0 = DVector::from_fn(du, |r, _| ((r + i) as f64 * 0.9).cos() * 1.7);
            let v0 = DVector::from_fn(dv, |r, _| ((r * 2 + i) as f64 * 0.4).sin() - 0.3);
            let xi: Vec<f64> = (0..3 * du + 2 * dv).map(|l| ((l * 7 + i) as f64 * 0.61).sin() * 1.3).collect();
            let got = local_iterates(&inst, &p, i, 0.83, &u0, &v0, &xi);
            let (vs, us, sum) = local_phase_by_vectors(&inst, &p, i, 0.83, &u0, &v0, &xi);
            let bits = |a: &[DVector<f64>]| a.iter().flat_map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()).collect::<Vec<_>>();
            assert_eq!(bits(&got.v), bits(&vs), "client {i}, {draws:?}: v-iterates");
            assert_eq!(bits(&got.u), bits(&us), "client {i}, {draws:?}: u-iterates");
            assert_eq!(bits(std::slice::from_ref(&got.u_gradient_sum)), bits(std::slice::from_ref(&sum)), "client {i}, {draws:?}: gradient sum");
        }
    }
    // Negative control: another step size changes the iterates.
    let p = Params { eta_u: 0.13, eta_v: 0.21, k_u: 3, k_v: 2, noise_draws: NoiseDraws::PerStep };
    let (u0, v0, xi) = (DVector::from_element(du, 0.5), DVector::from_element(dv, 0.5), vec![0.3; 3 * du + 2 * dv]);
    let other = Params { eta_u: 0.14, ..p };
    assert_ne!(local_iterates(&inst, &p, 1, 1.0, &u0, &v0, &xi).u, local_iterates(&inst, &other, 1, 1.0, &u0, &v0, &xi).u);
}
