//! The two sides of FedCLUP's Lemmas 2, 3, 5 and 6 at one point of a draw or a run, and the steps
//! of the remark after Theorem 3 (003:L1318): pure functions of an instance and its models, which
//! the check ([`super::check`]) evaluates over draws, lambdas and rounds.

use nalgebra::DVector;

use super::algorithm::{block, Params};
use super::bounds::{self, Opt};
use super::model::Instance;

pub use super::prec::LEMMA_FLOOR;

/// `w*_g = (1/m) sum_i w*^(i)` (003:L371).
pub fn center(d: &Instance) -> DVector<f64> {
    d.clients.iter().fold(DVector::zeros(d.d), |acc, c| acc + &c.w_star) / d.m() as f64
}

/// Lemma 2's two sides at `w` (003:L161): `a = grad F_i(w)` from the envelope's quadratic form
/// ([`Instance::envelope_gradient`]) and `b = lambda (w - prox(w))` (its displacement evaluated
/// without cancellation, [`Instance::prox_displacement`]), compared as `||a||^2 <= <a, b>` and
/// `||b||^2 <= <a, b>`; both hold exactly when `a = b` (their sum is `||a - b||^2 <= 0`).
pub fn lemma2_sides(d: &Instance, i: usize, lambda: f64, w: &DVector<f64>) -> [(f64, f64); 2] {
    let a = d.envelope_gradient(i, lambda, w);
    let b = d.prox_displacement(i, lambda, w) * lambda;
    let ab = a.dot(&b);
    [(a.norm_squared(), ab), (b.norm_squared(), ab)]
}

/// Lemma 3's sides for every client on draw `d`'s labels at `lambda` (003:L394-398):
/// `||w~^(g) - w~^(i)||` and `2 ||A_i w~^(g) - b_i||/(mu + lambda)`. The solution's local model is
/// the prox of its global one, `w~^(i) = (A_i + lambda I)^{-1} (b_i + lambda w~^(g))` ((23)), so
/// the distance is [`Instance::prox_displacement`]'s norm, evaluated without subtracting two
/// near-equal vectors (which had made the lemma "violated" with features of scale `1e-15`).
pub fn lemma3_sides(d: &Instance, mu: f64, lambda: f64) -> Vec<(f64, f64)> {
    let sol = d.solve(lambda);
    let grad = |i: usize| &d.clients[i].a * &sol.global - &d.clients[i].b;
    (0..d.m()).map(|i| (d.prox_displacement(i, lambda, &sol.global).norm(), 2.0 * grad(i).norm() / (mu + lambda))).collect()
}

/// Algorithm 1's quantities at round `t` (1-based) from its states `s_t = (w_t^(g), w_{t-1,K})`
/// ([`super::algorithm::run_alg1`]): `w_t^(g)` and the local models `w_{t,K}^(i)` after its `K`
/// steps.
pub fn round_models(states: &[DVector<f64>], t: usize, d: usize, m: usize) -> (DVector<f64>, Vec<DVector<f64>>) {
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

/// The steps of the remark after Theorem 3 on draw 0 ([`bounds::t3_remark_steps`]) with the
/// smallest `K` meeting (143) = (14) (`fallback_k` when none up to `cap` does; its condition then
/// fails).
pub fn t3_remark_params(inst: &Instance, lambda: f64, fallback_k: usize, cap: usize) -> Params {
    let c = inst.constants;
    let (eta, gamma) = bounds::t3_remark_steps(c.mu, c.l_sample, lambda);
    let o = Opt { mu: c.mu, l: c.l_sample, lambda, gamma, eta, k: 1.0, m: inst.m() as f64 };
    Params { lambda, gamma, eta, k: bounds::k_min_14(&o, cap).unwrap_or(fallback_k) }
}
