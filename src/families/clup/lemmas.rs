//! FedCLUP's Lemmas 2-6, the global model's bounds (35), (52), (79) and the remark after
//! Theorem 3 (003:L1318), evaluated on a scenario's design draws and on exact runs of
//! Algorithms 1 and 2. Each function returns the evaluation and what each compared point is.

use nalgebra::DVector;

use crate::claim::BoundClaim;

use super::algorithm::{block, initial_state, run_alg1, run_alg2, Batches, Params};
use super::bounds::{self, Opt, Stat};
use super::check::{base_inputs, opt_of, per_point, stat_of, Outcome, Prepared, MAX_K};
use super::claims::{ClupClaim, Inputs};
use super::model::Instance;

/// Squared distances of Algorithm 1 below `LEMMA_FLOOR` times the squared scale of the models
/// ([`model_scale`]) are not compared in Lemmas 5 and 6: they are differences of vectors of that
/// scale, so one of `1e-16` carries relative rounding near `1e-8` and one near `1e-32` is
/// rounding alone.
pub const LEMMA_FLOOR: f64 = 1e-16;

/// The squared scale of the models a run compares: `max(||w~^(g)||^2, max_i ||w~^(i)||^2,
/// ||z_0||^2)`.
fn model_scale(c: &Prepared) -> f64 {
    c.sol.locals.iter().map(|w| w.norm_squared()).fold(c.sol.global.norm_squared(), f64::max).max(c.z0.norm_squared())
}

/// `w*_g = (1/m) sum_i w*^(i)` (003:L371).
fn center(d: &Instance) -> DVector<f64> {
    d.clients.iter().fold(DVector::zeros(d.d), |acc, c| acc + &c.w_star) / d.m() as f64
}

/// Lemma 2's two sides at `w` (003:L161): `a = grad F_i(w)` from the envelope's quadratic form
/// ([`Instance::envelope_gradient`]) and `b = lambda (w - prox(w))`, compared as `||a||^2 <= <a,
/// b>` and `||b||^2 <= <a, b>`; both hold exactly when `a = b` (their sum is `||a - b||^2 <= 0`).
pub fn lemma2_sides(d: &Instance, i: usize, lambda: f64, w: &DVector<f64>) -> [(f64, f64); 2] {
    let a = d.envelope_gradient(i, lambda, w);
    let b = (w - d.prox(i, lambda, w)) * lambda;
    let ab = a.dot(&b);
    [(a.norm_squared(), ab), (b.norm_squared(), ab)]
}

/// Lemma 2 on every draw, client and positive lambda of the grid, at `w_g = 0` and `w_g = w*_g`.
pub(super) fn lemma2(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (mut sides, mut points) = (Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        for (wi, w) in [DVector::zeros(d.d), center(d)].iter().enumerate() {
            for &l in c.grid.iter().filter(|l| **l > 0.0) {
                for i in 0..d.m() {
                    for (what, (lhs, rhs)) in ["||a||^2 <= <a, b>", "||b||^2 <= <a, b>"].iter().zip(lemma2_sides(d, i, l, w)) {
                        sides.push((lhs, rhs));
                        points.push(format!("draw {di}, w_g {}, lambda {l:.4e}, client {i}: {what}: {lhs:.6e} vs {rhs:.6e}", ["0", "w*_g"][wi]));
                    }
                }
            }
        }
    }
    (per_point(claim.checks(&base_inputs(c.stat0, c.o)), &sides, scale), points)
}

/// Lemma 3's sides for every client on draw `d`'s labels at `lambda` (003:L394-398):
/// `||w~^(g) - w~^(i)||` and `2 ||A_i w~^(g) - b_i||/(mu + lambda)`.
pub fn lemma3_sides(d: &Instance, mu: f64, lambda: f64) -> Vec<(f64, f64)> {
    let sol = d.solve(lambda);
    let grad = |i: usize| &d.clients[i].a * &sol.global - &d.clients[i].b;
    (0..d.m()).map(|i| ((&sol.global - &sol.locals[i]).norm(), 2.0 * grad(i).norm() / (mu + lambda))).collect()
}

/// Lemma 3 on every draw, client and positive lambda of the grid.
pub(super) fn lemma3(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (mut sides, mut points) = (Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        for &l in c.grid.iter().filter(|l| **l > 0.0) {
            for (i, (lhs, rhs)) in lemma3_sides(d, d.constants.mu, l).into_iter().enumerate() {
                sides.push((lhs, rhs));
                points.push(format!("draw {di}, lambda {l:.4e}, client {i}: {lhs:.6e} vs {rhs:.6e}"));
            }
        }
    }
    (per_point(claim.checks(&base_inputs(c.stat0, c.o)), &sides, scale), points)
}

/// The statistical metric a global-model claim reads at `lambda` on draw `d`: `E||w~^(g) -
/// w*_g||^2`, or with `local_average` the clients' `(1/m) sum_i E||w~^(i) - w*^(i)||^2`.
fn global_metric(d: &Instance, lambda: f64, local_average: bool) -> f64 {
    if local_average {
        d.statistical_errors(lambda).iter().sum::<f64>() / d.m() as f64
    } else {
        d.global_statistical_error(lambda)
    }
}

/// The lambdas a global-model bound is compared at on a draw with constants `st`.
fn global_lambdas(c: &Prepared, st: &Stat, statement: super::claims::Statement) -> Vec<f64> {
    use super::claims::Statement;
    match statement {
        Statement::Global52 { .. } => {
            let edge = bounds::lambda_at_4l2g(st, 1.0 / 16.0) * (1.0 + super::prec::GUARD_OFFSET);
            c.grid.iter().copied().filter(|&l| bounds::guard_52(st, l) == 0.0).chain(std::iter::once(edge)).collect()
        }
        Statement::Global79 if bounds::c1_small_r(st) => {
            let l = bounds::lambda_77(st);
            vec![l, 10.0 * l, 1000.0 * l]
        }
        Statement::Global79 => {
            let l = bounds::lambda_72(st);
            vec![0.0, l / 10.0, l]
        }
        _ => c.grid.clone(),
    }
}

/// (35), (52) or (79) on every draw at their lambdas ([`global_lambdas`]): (35) over the grid,
/// (52) where its condition `g(lambda) < 1/(8L)^2` holds (and just inside it), (79) at the
/// lambdas (77) or (72) admits.
pub(super) fn global_bound(c: &Prepared, claim: &ClupClaim, local_average: bool, scale: f64) -> Outcome {
    let (mut sides, mut points, mut checks) = (Vec::new(), Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat_of(&d.constants, &c.s.model, false);
        checks = claim.checks(&base_inputs(st, c.o));
        for l in global_lambdas(c, &st, claim.statement) {
            let (e, b) = (global_metric(d, l, local_average), claim.bound(&Inputs { lambda: l, ..base_inputs(st, c.o) }));
            sides.push((e, b));
            points.push(format!("draw {di} (mu {:.4}), lambda {l:.4e}: {e:.6e} vs {b:.6e}", st.mu));
        }
    }
    (per_point(checks, &sides, scale), points)
}

/// Lemma 4 on every draw: the root mean square `(E||w~_GT - w*_g||^2)^(1/2)`, which bounds
/// `E||w~_GT - w*_g||`, against the lemma's bound.
pub(super) fn lemma4(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (mut sides, mut points, mut checks) = (Vec::new(), Vec::new(), Vec::new());
    for (di, d) in c.draws.iter().enumerate() {
        let st = stat_of(&d.constants, &c.s.model, false);
        let x = base_inputs(st, c.o);
        checks = claim.checks(&x);
        let (e, b) = (d.global_train_error_to_center().sqrt(), claim.bound(&x));
        sides.push((e, b));
        points.push(format!("draw {di} (mu {:.4}): {e:.6e} vs {b:.6e}", st.mu));
    }
    (per_point(checks, &sides, scale), points)
}

/// Algorithm 1's quantities at round `t` (1-based) from its states `s_t = (w_t^(g), w_{t-1,K})`
/// ([`run_alg1`]): `w_t^(g)` and the local models `w_{t,K}^(i)` after its `K` steps.
fn round_models(states: &[DVector<f64>], t: usize, d: usize, m: usize) -> (DVector<f64>, Vec<DVector<f64>>) {
    (block(&states[t - 1], 0, d), (0..m).map(|i| block(&states[t], i + 1, d)).collect())
}

/// Lemma 5's sides on one client between rounds `t` and `t + 1` (003:L958, with (111)'s index):
/// `e_{t+1}^(i)` and `q (sqrt(e_t^(i)) + sqrt(D))^2`, `q = (1 - eta mu_l)^K`, `D =
/// ||w_*^(i)(w_{t+1}^(g)) - w_*^(i)(w_t^(g))||^2`: the right side at its minimizing `eps =
/// sqrt(D/e_t)`, since `min_eps (1 + eps) a + (1 + 1/eps) b = (sqrt a + sqrt b)^2`.
pub fn lemma5_sides(inst: &Instance, p: &Params, q: f64, now: (&DVector<f64>, &DVector<f64>), next: (&DVector<f64>, &DVector<f64>), i: usize) -> (f64, f64) {
    let (star_now, star_next) = (inst.prox(i, p.lambda, now.0), inst.prox(i, p.lambda, next.0));
    let e_now = (now.1 - &star_now).norm_squared();
    let e_next = (next.1 - &star_next).norm_squared();
    let drift = (&star_next - &star_now).norm_squared();
    (e_next, q * (e_now.sqrt() + drift.sqrt()).powi(2))
}

/// Lemma 5 on Algorithm 1 at the scenario's steps, every client and round where `e_{t+1}^(i)` is
/// above [`LEMMA_FLOOR`] times the models' squared scale; `None` where no round is (the `K` local
/// steps bring every `e_t^(i)` to the rounding floor: nothing to compare).
pub(super) fn lemma5(c: &Prepared, claim: &ClupClaim, scale: f64) -> Option<Outcome> {
    let (inst, s) = (c.inst(), c.s);
    let (d, m) = (inst.d, inst.m());
    let states = run_alg1(inst, &c.p, &c.z0, s.rounds);
    let q = (1.0 - c.p.eta * (c.c0.mu + c.p.lambda)).powf(c.p.k as f64);
    let (mut sides, mut points) = (Vec::new(), Vec::new());
    let floor = LEMMA_FLOOR * model_scale(c);
    for t in 1..s.rounds {
        let (g_now, l_now) = round_models(&states, t, d, m);
        let (g_next, l_next) = round_models(&states, t + 1, d, m);
        for i in 0..m {
            let (lhs, rhs) = lemma5_sides(inst, &c.p, q, (&g_now, &l_now[i]), (&g_next, &l_next[i]), i);
            if lhs < floor {
                continue;
            }
            sides.push((lhs, rhs));
            points.push(format!("t = {t}, client {i}: e_(t+1) = {lhs:.6e} vs {rhs:.6e}"));
        }
    }
    (!sides.is_empty()).then(|| (per_point(claim.checks(&base_inputs(c.stat0, c.o)), &sides, scale), points))
}

/// Lemma 6's sides at round `t` (003:L967): `||w_{t+1}^(g) - w~^(g)||^2` against
/// `(1 - gamma mu_g) X + gamma^3 L_g ||G^||^2 + gamma^2 D + 2 gamma sqrt(X D) - gamma^2 ||G||^2`
/// with `X = ||w_t^(g) - w~^(g)||^2`, `G = (lambda/m) sum_i (w_t^(g) - w_*^(i)(w_t^(g)))` (Lemma
/// 2), `G^ = (lambda/m) sum_i (w_t^(g) - w_{t,K}^(i))` (103), `D = ||G - G^||^2`: the right side
/// at its minimizing `eps_g = sqrt(D/X)`.
pub fn lemma6_sides(inst: &Instance, o: &Opt, target: &DVector<f64>, wg: &DVector<f64>, locals: &[DVector<f64>], next: &DVector<f64>) -> (f64, f64) {
    let (m, lambda, gamma) = (inst.m(), o.lambda, o.gamma);
    let k = o.lemma1();
    let exact = (0..m).fold(DVector::zeros(inst.d), |a, i| a + (wg - inst.prox(i, lambda, wg))) * (lambda / m as f64);
    let approx = locals.iter().fold(DVector::zeros(inst.d), |a, w| a + (wg - w)) * (lambda / m as f64);
    let x = (wg - target).norm_squared();
    let dev = (&exact - &approx).norm_squared();
    let rhs = (1.0 - gamma * k.mu_g) * x - gamma * gamma * exact.norm_squared()
        + gamma.powi(3) * k.l_g * approx.norm_squared()
        + gamma * gamma * dev
        + 2.0 * gamma * (x * dev).sqrt();
    ((next - target).norm_squared(), rhs)
}

/// Lemma 6 on Algorithm 1 at the scenario's steps, every round while `||w_{t+1}^(g) -
/// w~^(g)||^2` stays above [`LEMMA_FLOOR`] times the models' squared scale.
pub(super) fn lemma6(c: &Prepared, claim: &ClupClaim, scale: f64) -> Outcome {
    let (inst, s) = (c.inst(), c.s);
    let (d, m) = (inst.d, inst.m());
    let states = run_alg1(inst, &c.p, &c.z0, s.rounds);
    let (mut sides, mut points) = (Vec::new(), Vec::new());
    let floor = LEMMA_FLOOR * model_scale(c);
    for t in 1..s.rounds {
        let (wg, locals) = round_models(&states, t, d, m);
        let next = block(&states[t], 0, d);
        let (lhs, rhs) = lemma6_sides(inst, &c.o, &c.sol.global, &wg, &locals, &next);
        if lhs < floor {
            break;
        }
        sides.push((lhs, rhs));
        points.push(format!("t = {t}: ||w_(t+1) - w~||^2 = {lhs:.6e} vs {rhs:.6e}"));
    }
    (per_point(claim.checks(&base_inputs(c.stat0, c.o)), &sides, scale), points)
}

/// The steps of the remark after Theorem 3 on draw 0 ([`bounds::t3_remark_steps`]) with the
/// smallest `K` meeting (143) = (14) (the scenario's `K` when none up to [`MAX_K`] does; its
/// condition then fails).
pub fn t3_remark_params(inst: &Instance, lambda: f64, fallback_k: usize) -> Params {
    let c = inst.constants;
    let (eta, gamma) = bounds::t3_remark_steps(c.mu, c.l_sample, lambda);
    let o = Opt { mu: c.mu, l: c.l_sample, lambda, gamma, eta, k: 1.0, m: inst.m() as f64 };
    Params { lambda, gamma, eta, k: bounds::k_min_14(&o, MAX_K).unwrap_or(fallback_k) }
}

/// The remark after Theorem 3 (003:L1318): Algorithm 2 at its steps (fresh batches of `batch`)
/// started at the solution, so its error is the noise floor alone, against the ball at every
/// round after the first (whose error is 0).
pub(super) fn t3_remark(c: &Prepared, claim: &ClupClaim, batch: usize, scale: f64) -> Outcome {
    let (inst, s) = (c.inst(), c.s);
    let p = t3_remark_params(inst, s.lambda, c.p.k);
    let start = initial_state(&c.sol.global, &c.sol.locals);
    let run = run_alg2(inst, &p, batch, Batches::PerStep, &start, &c.sol.global, s.rounds);
    let x = Inputs { sigma2: run.sigma2, batch: batch as f64, ..base_inputs(c.stat0, opt_of(&c.c0, s.model.m, &p, false)) };
    let b = claim.bound(&x);
    let sides: Vec<(f64, f64)> = run.global_error.iter().skip(1).map(|e| (*e, b)).collect();
    let points = sides.iter().enumerate().map(|(t, (e, b))| format!("round {} (eta {:.4e}, K {}): {e:.6e} vs {b:.6e}", t + 2, p.eta, p.k)).collect();
    (per_point(claim.checks(&x), &sides, scale), points)
}
