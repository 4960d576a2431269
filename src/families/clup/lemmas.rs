//! The two sides of FedCLUP's Lemmas 2, 3, 5 and 6 at one point of a draw or a run, and the steps
//! of the remark after Theorem 3 (003:L1318): pure functions of an instance and its models, which
//! the check ([`super::check`]) evaluates over draws, lambdas and rounds.

use nalgebra::DVector;

use super::algorithm::{Alg1Deviation, Params};
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

/// What Lemma 2's rounding ([`lemma2_rounding`]) reads of client `i`, independent of `w` and
/// `lambda`: `(||A_i||, kappa_i ||A_i^-1 b_i||, ||b_i||)`.
pub fn lemma2_client_scale(d: &Instance, i: usize) -> (f64, f64, f64) {
    let c = &d.clients[i];
    let (lo, hi) = super::model::spectrum(&c.a);
    let minimizer = super::model::inverse(&c.a) * &c.b;
    (hi, hi / lo * minimizer.norm(), c.b.norm())
}

/// How far Lemma 2's computed sides may miss each other by rounding alone at `w`: the two
/// gradients `a` and `b` of [`lemma2_sides`] subtract vectors of the size of `w` and of the
/// client's minimizer, so each carries an absolute error near `eps` times those sizes whatever
/// their own size (at a model `2^20` from the origin, `1e-9` of gradients of order 1). `client`
/// is [`lemma2_client_scale`].
///
/// # Formula
/// `delta = 4 d eps (lambda (||w|| + kappa_i ||A_i^-1 b_i||) + ||A_i|| ||w|| + ||b_i||)` bounds
/// `||a - b||` computed when `a = b` exactly (`a`'s difference `w - A_i^-1 b_i` after a solve of
/// condition `kappa_i`, scaled by `||lambda A_i (A_i + lambda I)^-1|| <= lambda`; `b`'s `A_i w -
/// b_i`, scaled by `lambda ||(A_i + lambda I)^-1|| <= 1`); a side then misses the other by at most
/// `delta (||a|| + ||b||)`.
pub fn lemma2_rounding(dim: usize, client: (f64, f64, f64), lambda: f64, w: &DVector<f64>, sides: &[(f64, f64); 2]) -> f64 {
    let (a_norm, minimizer_scale, b_norm) = client;
    let delta = 4.0 * dim as f64 * f64::EPSILON * (lambda * (w.norm() + minimizer_scale) + a_norm * w.norm() + b_norm);
    delta * (sides[0].0.sqrt() + sides[1].0.sqrt())
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

/// `q = (1 - eta mu_l)^K`, `mu_l = mu + lambda`, of Lemma 5, the factor `1 - eta lambda - eta mu`
/// with `1 - eta lambda` in one rounding (with `eta lambda` near 1 a rounded product would leave it
/// accurate only to `eps/(1 - eta lambda)`).
pub fn lemma5_factor(p: &Params, mu: f64) -> f64 {
    (p.keep() - p.eta * mu).powf(p.k as f64)
}

/// Lemma 5's sides on client `i` between rounds `t` and `t + 1` (003:L958, with (111)'s index)
/// from Algorithm 1's deviations at those rounds ([`super::algorithm::alg1_deviations`]):
/// `e_{t+1}^(i)` and `q (sqrt(e_t^(i)) + sqrt(D))^2`, `q = (1 - eta mu_l)^K`, `e_t^(i) =
/// ||w_{t,K}^(i) - w_*^(i)(w_t^(g))||^2` (the deviations' residual), `D = ||w_*^(i)(w_{t+1}^(g)) -
/// w_*^(i)(w_t^(g))||^2 = ||lambda (A_i + lambda I)^{-1} s_t||^2`, `s_t` the server's step: the
/// right side at its minimizing `eps = sqrt(D/e_t)`, since `min_eps (1 + eps) a + (1 + 1/eps) b =
/// (sqrt a + sqrt b)^2`. No side is a difference of models (which keeps only `eps ||w|| /
/// sqrt(e_t)` of its accuracy).
pub fn lemma5_sides(inst: &Instance, lambda: f64, q: f64, now: &Alg1Deviation, next: &Alg1Deviation, i: usize) -> (f64, f64) {
    let e_now = now.residuals[i].norm_squared();
    let e_next = next.residuals[i].norm_squared();
    let drift = inst.prox_linear(i, lambda, &now.step).norm_squared();
    (e_next, q * (e_now.sqrt() + drift.sqrt()).powi(2))
}

/// Lemma 6's sides at round `t` (003:L967) from Algorithm 1's deviations at rounds `t` and `t + 1`
/// ([`super::algorithm::alg1_deviations`]): `||w_{t+1}^(g) - w~^(g)||^2` against
/// `(1 - gamma mu_g) X + gamma^3 L_g ||G^||^2 + gamma^2 D + 2 gamma sqrt(X D) - gamma^2 ||G||^2`
/// with `X = ||w_t^(g) - w~^(g)||^2`, `G = (lambda/m) sum_i (w_t^(g) - w_*^(i)(w_t^(g)))` (Lemma
/// 2), `G^ = (lambda/m) sum_i (w_t^(g) - w_{t,K}^(i))` (103), `D = ||G - G^||^2`, `G - G^ =
/// (lambda/m) sum_i (w_{t,K}^(i) - w_*^(i)(w_t^(g)))` the local residuals: the right side at its
/// minimizing `eps_g = sqrt(D/X)`. Every vector comes from the deviations, none from subtracting
/// models (with `lambda = 1e12` that had left `G` and `G^` without a correct digit).
pub fn lemma6_sides(o: &Opt, now: &Alg1Deviation, next: &Alg1Deviation) -> (f64, f64) {
    let (lambda, gamma, m) = (o.lambda, o.gamma, now.residuals.len() as f64);
    let k = o.lemma1();
    let exact = &now.gradient;
    let gap = now.residuals.iter().fold(DVector::zeros(exact.len()), |a, r| a + r) * (lambda / m);
    let approx = exact - &gap;
    let x = now.global.norm_squared();
    let dev = gap.norm_squared();
    let rhs = (1.0 - gamma * k.mu_g) * x - gamma * gamma * exact.norm_squared()
        + gamma.powi(3) * k.l_g * approx.norm_squared()
        + gamma * gamma * dev
        + 2.0 * gamma * (x * dev).sqrt();
    (next.global.norm_squared(), rhs)
}

/// The steps of the remark after Theorem 3 on draw 0 ([`bounds::t3_remark_steps`]) with the
/// smallest `K` meeting (143) = (14) (`fallback_k` when none up to `cap` does; its condition then
/// fails).
pub fn t3_remark_params(inst: &Instance, lambda: f64, fallback_k: usize, cap: usize) -> Params {
    let c = inst.constants;
    let (eta, gamma) = bounds::t3_remark_steps(c.mu, c.l_sample, lambda);
    let o = Opt { mu: c.mu, l: c.l_sample, lambda, gamma, eta, k: 1.0, m: inst.m() as f64, mu_error: c.mu_error };
    Params { lambda, gamma, eta, k: bounds::k_min_14(&o, cap).unwrap_or(fallback_k) }
}
