//! Every bound and condition of FedCLUP (003) as a pure function of a small named-inputs struct,
//! each citing the printed formula and its line. Readings that differ from the print are
//! separate functions or flags named after the inconsistency (I-CLUP..) they encode.

use serde::Serialize;

/// The statistical constants of Theorem 1 and Corollary 1 (003:L92-106).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stat {
    /// `mu` of Assumption 2.
    pub mu: f64,
    /// `L` of Assumption 1.
    pub l: f64,
    /// `rho^2` of Assumption 3.
    pub rho2: f64,
    /// `R` of P(R) (eq. 5).
    pub r: f64,
    /// Samples per client `n`.
    pub n: f64,
    /// Clients `m` (`N = m n`).
    pub m: f64,
}

impl Stat {
    /// `N = m n` (003:L114).
    pub fn big_n(&self) -> f64 {
        self.m * self.n
    }
    /// `kappa = L / mu` (003:L120).
    pub fn kappa(&self) -> f64 {
        self.l / self.mu
    }
}

/// How Theorem 1's bound is read (I-CLUP4, I-CLUP5, I-CLUP6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct T1Reading {
    /// `rho^2/n^2` in the two `Gq` terms of (70) as printed at L721 (I-CLUP4); the proof's (52)
    /// has `rho^2/n`.
    pub n_squared: bool,
    /// The printed `4 rho^2 lambda/(mu^3 n)` of (8)/(66) (I-CLUP5); the proof gives 16.
    pub printed_four: bool,
    /// Which validity condition guards the first branch (I-CLUP6).
    pub guard: FirstBranchGuard,
}

/// The condition under which Theorem 1's first branch is used (the theorem states none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FirstBranchGuard {
    /// `g(lambda) <= 1/(8 L^2)` (003:L754), which gives `1/(1 - 4 L^2 g) <= 2` as (52) needs.
    EightL2,
    /// `g(lambda) <= 1/(8L)^2` (003:L618).
    SixtyFourL2,
    /// None: the branch as printed, even where `1 - 4 L^2 g <= 0` makes it meaningless.
    Unguarded,
}

/// The reading the proof supports.
pub const T1_PROOF: T1Reading = T1Reading { n_squared: false, printed_four: false, guard: FirstBranchGuard::EightL2 };

/// `g(lambda) = (4/mu) (1/(mu + lambda) + L/(mu + lambda)^2)` (003:L613).
pub fn g(s: &Stat, lambda: f64) -> f64 {
    let a = s.mu + lambda;
    4.0 / s.mu * (1.0 / a + s.l / (a * a))
}

/// `Gq(lambda) = g / (1 - 4 L^2 g)` (003:L615, eq. 51): negative or infinite where
/// `1 - 4 L^2 g <= 0`.
pub fn gq(s: &Stat, lambda: f64) -> f64 {
    let gl = g(s, lambda);
    gl / (1.0 - 4.0 * s.l * s.l * gl)
}

/// `1/q1(lambda)` (003:L721, eq. 70):
/// `12/(mu+lambda)^2 (4L^2R^2 + 2rho^2/n) + 48L^2/(mu+lambda)^2 [Gq (4L^2R^2 + 2rho^2/n') +
/// 2 (8rho^2/(mu^2 N) + 8L^2R^2/mu^2)] + 3 Gq (4L^2R^2 + 2rho^2/n')` with `n' = n` (the proof's
/// (52), L620) or `n' = n^2` as printed (I-CLUP4).
pub fn q1_inv(s: &Stat, lambda: f64, n_squared: bool) -> f64 {
    let [a2, l2, het, het_gq, global] = q1_terms(s, lambda, n_squared);
    let gqv = gq(s, lambda);
    12.0 / a2 * het + 48.0 * l2 / a2 * (gqv * het_gq + global) + 3.0 * gqv * het_gq
}

/// The pieces of (70): `(mu + lambda)^2`, `L^2`, `4L^2R^2 + 2rho^2/n`, the same with `n'` and
/// `2 (8rho^2/(mu^2 N) + 8L^2R^2/mu^2)`.
fn q1_terms(s: &Stat, lambda: f64, n_squared: bool) -> [f64; 5] {
    let a = s.mu + lambda;
    let (l2, r2) = (s.l * s.l, s.r * s.r);
    let n_prime = if n_squared { s.n * s.n } else { s.n };
    let het = 4.0 * l2 * r2 + 2.0 * s.rho2 / s.n;
    let het_gq = 4.0 * l2 * r2 + 2.0 * s.rho2 / n_prime;
    let global = 2.0 * (8.0 * s.rho2 / (s.mu * s.mu * s.big_n()) + 8.0 * l2 * r2 / (s.mu * s.mu));
    [a * a, l2, het, het_gq, global]
}

/// `1/q1(lambda)` of (70) split as `free + per_gq Gq(lambda)` (003:L721), both parts `>= 0`:
/// `free = 12/(mu+lambda)^2 (4L^2R^2 + 2rho^2/n) + 96 L^2/(mu+lambda)^2 (8rho^2/(mu^2 N) +
/// 8L^2R^2/mu^2)`, `per_gq = (48 L^2/(mu+lambda)^2 + 3)(4L^2R^2 + 2rho^2/n')`.
pub fn q1_inv_parts(s: &Stat, lambda: f64, n_squared: bool) -> (f64, f64) {
    let [a2, l2, het, het_gq, global] = q1_terms(s, lambda, n_squared);
    (12.0 / a2 * het + 48.0 * l2 / a2 * global, (48.0 * l2 / a2 + 3.0) * het_gq)
}

/// The lambda at which `4 L^2 g(lambda) = u` (`u > 0`; `g` of 003:L613): with `a = mu + lambda`,
/// the positive root of `a^2 - (16 L^2/(mu u)) a - 16 L^3/(mu u) = 0`, minus `mu`. `u = 1` is the
/// pole of `Gq` (51), `u = 1/2` the guard `g = 1/(8 L^2)` (003:L754); `g` decreases in lambda,
/// so `4 L^2 g > u` exactly below this lambda.
pub fn lambda_at_4l2g(s: &Stat, u: f64) -> f64 {
    let c = 16.0 / u;
    let p = c * s.l * s.l / s.mu;
    let q = c * s.l.powi(3) / s.mu;
    (p + (p * p + 4.0 * q).sqrt()) / 2.0 - s.mu
}

/// Where Theorem 1's first branch as printed (no guard, I-CLUP6) is negative, decided in closed
/// form. With `u = 4 L^2 g(lambda)`, the branch is `P + Q Gq` with `P = 48 rho^2/(mu^2 N) + (48
/// L^2/mu^2 + 3) R^2 + free > 0`, `Q = per_gq >= 0` ([`q1_inv_parts`]) and `Gq = u/(4 L^2 (1 -
/// u))` (51). Below the pole (`u > 1`) it is negative exactly where `u/(u - 1) > c := 4 L^2 P/Q`,
/// i.e. `1 < u < 1 + 1/(c - 1)` (every `u > 1` when `c <= 1`): a band of relative width about
/// `1/(c - 1)`, `c ~ 16 kappa^2` when `R` dominates, so it exists at every `kappa` (`Gq -> -inf`
/// at the pole) but narrows like `1/(16 kappa^2)`. Returns `(probe, band)`: the lambda at `u = 1 +
/// 1/(2 (c - 1))` (the band's middle in `u`, where `u/(u - 1) = 2c - 1`, so the branch is about
/// `-P (c - 1)/c`), and the band's `u`-width `1/(c - 1)` (`+inf` when `c <= 1`), `c` taken at the
/// pole; `None` when `Q = 0` (no noise and no heterogeneity: no band).
pub fn unguarded_negative_probe(s: &Stat, n_squared: bool) -> Option<(f64, f64)> {
    let pole = lambda_at_4l2g(s, 1.0);
    let (free, per_gq) = q1_inv_parts(s, pole, n_squared);
    if per_gq.is_nan() || per_gq <= 0.0 {
        return None;
    }
    let p = first_free(s) + free;
    let c = 4.0 * s.l * s.l * p / per_gq;
    let width = if c > 1.0 { 1.0 / (c - 1.0) } else { f64::INFINITY };
    let du = if c > 2.0 { 0.5 / (c - 1.0) } else { 0.5 };
    Some((lambda_at_4l2g(s, 1.0 + du), width))
}

/// The part of Theorem 1's first branch outside `1/q1`: `48 rho^2/(mu^2 N) + (48 L^2/mu^2 + 3)
/// R^2` (003:L111).
fn first_free(s: &Stat) -> f64 {
    let (mu2, r2) = (s.mu * s.mu, s.r * s.r);
    48.0 * s.rho2 / (mu2 * s.big_n()) + (48.0 * s.l * s.l / mu2 + 3.0) * r2
}

/// `q2(lambda) = 8 lambda^2 R^2/mu^2 + 4 lambda R^2/mu` (003:L710, eq. 67).
pub fn q2(s: &Stat, lambda: f64) -> f64 {
    let r2 = s.r * s.r;
    8.0 * lambda * lambda * r2 / (s.mu * s.mu) + 4.0 * lambda * r2 / s.mu
}

/// Whether the first branch's guard holds at `lambda` (I-CLUP6).
pub fn first_branch_valid(s: &Stat, lambda: f64, guard: FirstBranchGuard) -> bool {
    let gl = g(s, lambda);
    match guard {
        FirstBranchGuard::EightL2 => gl <= 1.0 / (8.0 * s.l * s.l),
        FirstBranchGuard::SixtyFourL2 => gl <= 1.0 / (64.0 * s.l * s.l),
        FirstBranchGuard::Unguarded => true,
    }
}

/// Theorem 1's first branch, `48 rho^2/(mu^2 N) + (48 L^2/mu^2 + 3) R^2 + 1/q1(lambda)`
/// (003:L111, eq. 8), `+inf` where its guard fails.
pub fn t1_first(s: &Stat, lambda: f64, reading: T1Reading) -> f64 {
    if !first_branch_valid(s, lambda, reading.guard) {
        return f64::INFINITY;
    }
    first_free(s) + q1_inv(s, lambda, reading.n_squared)
}

/// Theorem 1's second branch, `4 rho^2/(mu^2 n) + (c rho^2/(mu^3 n) + 4R^2/mu) lambda +
/// 8 R^2 lambda^2/mu^2` (003:L112, eq. 8), with `c = 16` as (35) in (64) gives (I-CLUP5) or the
/// printed `c = 4`.
pub fn t1_second(s: &Stat, lambda: f64, printed_four: bool) -> f64 {
    let c = if printed_four { 4.0 } else { 16.0 };
    let mu = s.mu;
    4.0 * s.rho2 / (mu * mu * s.n) + (c * s.rho2 / (mu * mu * mu * s.n) + 4.0 * s.r * s.r / mu) * lambda + 8.0 * s.r * s.r * lambda * lambda / (mu * mu)
}

/// Theorem 1: `E||w~^(i) - w*^(i)||^2 <= min(first, second)` (003:L108-114).
pub fn t1_bound(s: &Stat, lambda: f64, reading: T1Reading) -> f64 {
    t1_first(s, lambda, reading).min(t1_second(s, lambda, reading.printed_four))
}

/// `C1 = 32 rho^2/mu^2`, `C2 = ((1+sqrt 3) rho/mu)^2 v 32 L^2/mu^2` (003:L777-780, eq. 80).
pub fn c1_c2(s: &Stat) -> (f64, f64) {
    let mu2 = s.mu * s.mu;
    let c2 = ((1.0 + 3f64.sqrt()).powi(2) * s.rho2 / mu2).max(32.0 * s.l * s.l / mu2);
    (32.0 * s.rho2 / mu2, c2)
}

/// `C3 = 192 rho^2/mu^2`, `C4 = (rho (1 + (4 C2 + 5)^(1/2))/mu)^2 v 198 kappa^2` (003:L843-846,
/// eq. 91).
pub fn c3_c4(s: &Stat) -> (f64, f64) {
    let (_, c2) = c1_c2(s);
    let c4 = (s.rho2.sqrt() * (1.0 + (4.0 * c2 + 5.0).sqrt()) / s.mu).powi(2).max(198.0 * s.kappa().powi(2));
    (192.0 * s.rho2 / (s.mu * s.mu), c4)
}

/// Corollary 1: `E||w~^(i) - w*^(i)||^2 <= C3/N + C4 (R^2 ^ 1/n)` (003:L124, eq. 9).
pub fn c1_bound(s: &Stat) -> f64 {
    let (c3, c4) = c3_c4(s);
    c3 / s.big_n() + c4 * (s.r * s.r).min(1.0 / s.n)
}

/// Whether Corollary 1 is in its large-lambda case, `R <= 1/sqrt(n)` (003:L122).
pub fn c1_small_r(s: &Stat) -> bool {
    s.r <= 1.0 / s.n.sqrt()
}

/// The smallest lambda of (93) (003:L866, also L122):
/// `max{64 kappa^2 L, (2 kappa v 5) mu (2L^2R^2 + rho^2/n)/(L^2R^2 + rho^2/N)} - mu`.
pub fn lambda_93(s: &Stat) -> f64 {
    let (l2r2, k) = (s.l * s.l * s.r * s.r, s.kappa());
    let ratio = (2.0 * l2r2 + s.rho2 / s.n) / (l2r2 + s.rho2 / s.big_n());
    (64.0 * k * k * s.l).max((2.0 * k).max(5.0) * s.mu * ratio) - s.mu
}

/// The largest lambda of (72)/(92) for `R > 1/sqrt(n)`: `rho^2/(n mu R^2)` (003:L122, L854).
pub fn lambda_72(s: &Stat) -> f64 {
    s.rho2 / (s.n * s.mu * s.r * s.r)
}

/// `a1 = (8 kappa/mu) {8 L^2 v (2L^2R^2 + rho^2/n)/(4 rho^2/(mu^2 N) + 4 kappa^2 R^2)} - mu`
/// (003:L858).
pub fn a1(s: &Stat) -> f64 {
    let (l2, r2, k) = (s.l * s.l, s.r * s.r, s.kappa());
    let ratio = (2.0 * l2 * r2 + s.rho2 / s.n) / (4.0 * s.rho2 / (s.mu * s.mu * s.big_n()) + 4.0 * k * k * r2);
    8.0 * k / s.mu * (8.0 * l2).max(ratio) - s.mu
}

/// `a2` as printed (003:L862, eq. 88):
/// `sqrt(8 (64 rho^2/N + 66 L^2R^2 + rho^2/n)/(32 rho^2/(mu^2 N) + 33 kappa^2 R^2)) - mu`.
pub fn a2_printed(s: &Stat) -> f64 {
    let (l2, r2, k, nn) = (s.l * s.l, s.r * s.r, s.kappa(), s.big_n());
    (8.0 * (64.0 * s.rho2 / nn + 66.0 * l2 * r2 + s.rho2 / s.n) / (32.0 * s.rho2 / (s.mu * s.mu * nn) + 33.0 * k * k * r2)).sqrt() - s.mu
}

/// `a2'` from the bracket of (85) (003:L815; I-CLUP8):
/// `sqrt(12 (128 kappa^2 rho^2/N + (128 kappa^2 + 4) L^2R^2 + 2 rho^2/n)/(96 rho^2/(mu^2 N) + 99 kappa^2 R^2)) - mu`.
pub fn a2_corrected(s: &Stat) -> f64 {
    let (l2, r2, k, nn) = (s.l * s.l, s.r * s.r, s.kappa(), s.big_n());
    let num = 128.0 * k * k * s.rho2 / nn + (128.0 * k * k + 4.0) * l2 * r2 + 2.0 * s.rho2 / s.n;
    (12.0 * num / (96.0 * s.rho2 / (s.mu * s.mu * nn) + 99.0 * k * k * r2)).sqrt() - s.mu
}

/// The constants of Lemma 1 (003:L159).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Lemma1 {
    /// `mu_g = lambda mu/(lambda + mu)`.
    pub mu_g: f64,
    /// `L_g = lambda L/(lambda + L)`.
    pub l_g: f64,
    /// `mu_l = mu + lambda`.
    pub mu_l: f64,
    /// `L_l = L + lambda`.
    pub l_l: f64,
    /// `L_w = lambda/(lambda + mu)`.
    pub l_w: f64,
}

/// Lemma 1's constants at `(mu, L, lambda)` (003:L159).
pub fn lemma1(mu: f64, l: f64, lambda: f64) -> Lemma1 {
    Lemma1 { mu_g: lambda * mu / (lambda + mu), l_g: lambda * l / (lambda + l), mu_l: mu + lambda, l_l: l + lambda, l_w: lambda / (lambda + mu) }
}

/// The optimization constants and parameters of Theorems 2 and 3 (003:L176-181, L1245-1251).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Opt {
    /// `mu`.
    pub mu: f64,
    /// `L`.
    pub l: f64,
    /// `lambda`.
    pub lambda: f64,
    /// Global step `gamma`.
    pub gamma: f64,
    /// Local step `eta`.
    pub eta: f64,
    /// Local steps `K`.
    pub k: f64,
    /// Clients `m`.
    pub m: f64,
    /// A bound on the error of `mu` (the model's `mu_error`; 0 where `mu` is exact): conditions on
    /// `mu` are decided over `mu +- mu_error`.
    #[serde(skip)]
    pub mu_error: f64,
}

impl Opt {
    /// Lemma 1's constants.
    pub fn lemma1(&self) -> Lemma1 {
        lemma1(self.mu, self.l, self.lambda)
    }
    /// `a = gamma mu_g`.
    pub fn a(&self) -> f64 {
        self.gamma * self.lemma1().mu_g
    }
}

/// Condition (14) (003:L178), its two sides: `(2 + 64 L_w^2 lambda^2/mu_g^2) (1 - eta mu_l)^K`
/// and `(1 - gamma L_g)^4`; with `exponent = 2`, the proof's (155) (003:L1307).
pub fn condition_14(o: &Opt, exponent: i32) -> (f64, f64) {
    condition_14_at(o, o.mu, exponent)
}

/// [`condition_14`]'s sides with `mu` in place of `o.mu` (the left side falls as `mu` grows: `mu_g`
/// and `mu_l` grow, `L_w` falls; the right side does not depend on `mu`).
pub fn condition_14_at(o: &Opt, mu: f64, exponent: i32) -> (f64, f64) {
    let o = &Opt { mu, ..*o };
    let c = o.lemma1();
    let lhs = (2.0 + 64.0 * c.l_w * c.l_w * o.lambda * o.lambda / (c.mu_g * c.mu_g)) * (1.0 - o.eta * c.mu_l).powf(o.k);
    (lhs, (1.0 - o.gamma * c.l_g).powi(exponent))
}

/// Theorem 2's rate `r = 1 - gamma mu_g/2 - (gamma mu_g)^2/2` (003:L181, eq. 117).
pub fn t2_rate(o: &Opt) -> f64 {
    let a = o.a();
    1.0 - a / 2.0 - a * a / 2.0
}

/// `q = (2 + 4 L_w^2 gamma^2 lambda^2)(1 - eta mu_l)^K` (003:L1102, eq. 124, with eps = 1).
pub fn t2_q(o: &Opt) -> f64 {
    let c = o.lemma1();
    (2.0 + 4.0 * c.l_w * c.l_w * o.gamma * o.gamma * o.lambda * o.lambda) * (1.0 - o.eta * c.mu_l).powf(o.k)
}

/// `a/b` where `b > 0`, else `+inf`: a quantity of the proof that has no finite positive value
/// there (the argument gives nothing), never a negative one from a sign change of its divisor.
fn div_pos(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::INFINITY
    }
}

/// `c1 = f/(1 - gamma mu_g + gamma eps_g - q) (gamma/eps_g + gamma^2 (2 + 1/zeta)) lambda^2` with
/// `eps_g = (mu_g/2)(1 - gamma mu_g)`, `zeta = 1 - gamma L_g` (003:L1049, `f = 2`; the proof of
/// Theorem 3 has `f = 1` at L1264 with `eps_g = mu_g/2`, I-CLUP13). The proof needs the three
/// divisors positive; where one is not, `c1 = +inf` (no Lyapunov constant).
pub fn lyapunov_c1(o: &Opt, theorem3: bool) -> f64 {
    let c = o.lemma1();
    let eps_g = if theorem3 { c.mu_g / 2.0 } else { c.mu_g / 2.0 * (1.0 - o.gamma * c.mu_g) };
    let zeta = 1.0 - o.gamma * c.l_g;
    let f = if theorem3 { 1.0 } else { 2.0 };
    let gap = 1.0 - o.gamma * c.mu_g + o.gamma * eps_g - t2_q(o);
    div_pos(f, gap) * (div_pos(o.gamma, eps_g) + o.gamma * o.gamma * (2.0 + div_pos(1.0, zeta))) * o.lambda * o.lambda
}

/// The local-model constant of (130) with `e_t^(i) <= m e_t` (003:L1134, I-CLUP3):
/// `||w_{t,K}^(i) - w~^(i)||^2 <= (2m/c1 + 2 L_w^2) V_t`.
pub fn local_factor(o: &Opt) -> f64 {
    2.0 * o.m / lyapunov_c1(o, false) + 2.0 * o.lemma1().l_w.powi(2)
}

/// The implicit condition (120): `gamma mu_g (2 + 1/zeta)/2 <= 1` (003:L1087; I-CLUP12, a proof
/// artifact, reported only); `+inf` where `zeta = 1 - gamma L_g <= 0`, where (120) has no meaning.
pub fn condition_120(o: &Opt) -> f64 {
    let c = o.lemma1();
    o.gamma * c.mu_g * (2.0 + div_pos(1.0, 1.0 - o.gamma * c.l_g)) / 2.0
}

/// Corollary 2's parameters (003:L185, L1143): `eta = 1/(lambda + L)`, `gamma = (lambda + L)/(2 lambda L)`.
pub fn corollary2_steps(l: f64, lambda: f64) -> (f64, f64) {
    (1.0 / (lambda + l), (lambda + l) / (2.0 * lambda * l))
}

/// Corollary 2's inner-loop count (134): the smallest integer `K >= 2 + (lambda+L)/(lambda+mu) ln(1056 kappa^2)` (003:L1164).
pub fn k_134(mu: f64, l: f64, lambda: f64) -> usize {
    let k = 2.0 + (lambda + l) / (lambda + mu) * (1056.0 * (l / mu).powi(2)).ln();
    k.ceil().max(1.0) as usize
}

/// The smallest `K >= 1` for which (14) holds at `(gamma, eta)`, `None` when no `K` does (its
/// right side is 0 or the contraction factor is 1) or when it exceeds `cap`.
pub fn k_min_14(o: &Opt, cap: usize) -> Option<usize> {
    (1..=cap).find(|&k| {
        let (lhs, rhs) = condition_14(&Opt { k: k as f64, ..*o }, 4);
        lhs <= rhs
    })
}

/// Corollary 2's printed rate `1 - (lambda + L)/(4 kappa (lambda + mu))` (003:L185), the same as
/// Corollary 3's `1 - 1/(4 kappa) - (L - mu)/(4 kappa (lambda + mu))` (003:L203).
pub fn c2_rate(mu: f64, l: f64, lambda: f64) -> f64 {
    1.0 - (lambda + l) / (4.0 * (l / mu) * (lambda + mu))
}

/// Corollary 4's rate `1 - 1/kappa - (L - mu)/(kappa (lambda + mu))` (003:L1327; I-CLUP1).
pub fn c4_rate(mu: f64, l: f64, lambda: f64) -> f64 {
    let k = l / mu;
    1.0 - 1.0 / k - (l - mu) / (k * (lambda + mu))
}

/// Corollary 2's communication complexity shape `kappa (lambda + mu)/(lambda + L) log(1/eps)`
/// (003:L188).
pub fn c2_rounds_shape(mu: f64, l: f64, lambda: f64, eps: f64) -> f64 {
    l / mu * (lambda + mu) / (lambda + l) * (1.0 / eps).ln()
}

/// Corollary 2 (ii) (003:L190) as an explicit bound free of lambda on the gradient evaluations
/// per client, `K x rounds`: with `rho = (lambda + L)/(lambda + mu) in [1, kappa]`, `K` of (134)
/// is at most `3 + rho ln(1056 kappa^2)` and the rounds the printed rate `1 - rho/(4 kappa)`
/// implies ([`rounds_from_rate`]) at most `2 + (4 kappa/rho) ln(c0/eps)` (`-ln(1 - x) >= x`), so
/// `K x rounds <= 6 + 12 kappa ln(c0/eps) + 2 kappa ln(1056 kappa^2) + 4 kappa ln(1056 kappa^2)
/// ln(c0/eps)` at every lambda (each `rho` term taken at the end of `[1, kappa]` where it is
/// largest).
pub fn c2_gradient_bound(mu: f64, l: f64, c0: f64, eps: f64) -> f64 {
    let k = l / mu;
    let la = (1056.0 * k * k).ln();
    let lc = (c0 / eps).ln().max(0.0);
    6.0 + 12.0 * k * lc + 2.0 * k * la + 4.0 * k * la * lc
}

/// Rounds the linear rate `rate` needs to bring `c0 rate^(t-1)` below `eps`:
/// the smallest `t >= 1` with `c0 rate^(t-1) <= eps`.
pub fn rounds_from_rate(c0: f64, rate: f64, eps: f64) -> f64 {
    if c0 <= eps {
        return 1.0;
    }
    if !(rate > 0.0 && rate < 1.0) {
        return f64::INFINITY;
    }
    1.0 + ((eps / c0).ln() / rate.ln()).ceil()
}

/// Theorem 3's noise ball as printed: `8/min(gamma mu_g/2, mu_l eta) (1/mu_g^2) lambda^2 eta^2 sigma^2/(B m)`
/// (003:L1251).
pub fn t3_ball(o: &Opt, sigma2: f64, b: f64) -> f64 {
    let c = o.lemma1();
    8.0 / (o.gamma * c.mu_g / 2.0).min(c.mu_l * o.eta) / (c.mu_g * c.mu_g) * o.lambda * o.lambda * o.eta * o.eta * sigma2 / (b * o.m)
}

/// The ball from the product of the two geometric sums of (L1313-1316) (I-CLUP16):
/// `16 lambda^2 eta sigma^2/(gamma mu_g^3 mu_l B m)`.
pub fn t3_ball_corrected(o: &Opt, sigma2: f64, b: f64) -> f64 {
    let c = o.lemma1();
    16.0 * o.lambda * o.lambda * o.eta * sigma2 / (o.gamma * c.mu_g.powi(3) * c.mu_l * b * o.m)
}

/// Theorem 3's rate: the proof's `1 - gamma mu_g/2` (003:L1277, eq. 148) or the statement's
/// `1 - gamma mu_g/2 - (gamma mu_g)^2/2` (003:L1249; I-CLUP16).
pub fn t3_rate(o: &Opt, stated: bool) -> f64 {
    if stated {
        t2_rate(o)
    } else {
        1.0 - o.a() / 2.0
    }
}

/// (35) (003:L527): `E||w~^(g) - w*_g||^2 <= (4 rho^2/n + 2 mu lambda R^2)/mu^2` (printed with
/// `u^2` for `mu^2`; p_i = 1/m, n_i = n). Solving (34) gives this bound on the clients' average
/// `(1/m) sum_i E||w~^(i) - w*^(i)||^2` (L742), which bounds the global error by Jensen.
pub fn global_35(s: &Stat, lambda: f64) -> f64 {
    (4.0 * s.rho2 / s.n + 2.0 * s.mu * lambda * s.r * s.r) / (s.mu * s.mu)
}

/// `+inf` unless `g(lambda) < 1/(8L)^2`, the condition (52) is printed under (003:L618), else 0
/// (the guard as a summand, `div_pos` of 0).
pub fn guard_52(s: &Stat, lambda: f64) -> f64 {
    div_pos(0.0, 1.0 / (64.0 * s.l * s.l) - g(s, lambda))
}

/// (52) (003:L621): `E||w~^(g) - w*_g||^2 <= Gq(lambda) (4L^2R^2 + 2rho^2/n) + 16 rho^2/(mu^2 N)
/// + 16 L^2R^2/mu^2`, `+inf` outside its condition `g(lambda) <= 1/(8L)^2` ([`guard_52`]).
pub fn global_52(s: &Stat, lambda: f64) -> f64 {
    let (l2r2, mu2) = (s.l * s.l * s.r * s.r, s.mu * s.mu);
    let het = 4.0 * l2r2 + 2.0 * s.rho2 / s.n;
    gq(s, lambda) * het + 16.0 * s.rho2 / (mu2 * s.big_n()) + 16.0 * l2r2 / mu2 + guard_52(s, lambda)
}

/// (52) with the factor 2 of `||a + b||^2 <= 2||a||^2 + 2||b||^2` that (50) omits (I-CLUP7): (49)
/// and Lemma 4's second moment `8 rho^2/(mu^2 N) + 8 L^2R^2/mu^2` each doubled, solved for the
/// global error: `(2 g (4L^2R^2 + 2rho^2/n) + 16 rho^2/(mu^2 N) + 16 L^2R^2/mu^2)/(1 - 8 L^2 g)`,
/// `+inf` outside `g(lambda) <= 1/(8L)^2` ([`guard_52`]).
pub fn global_52_young(s: &Stat, lambda: f64) -> f64 {
    let (l2r2, mu2, gl) = (s.l * s.l * s.r * s.r, s.mu * s.mu, g(s, lambda));
    let het = 4.0 * l2r2 + 2.0 * s.rho2 / s.n;
    div_pos(2.0 * gl * het + 16.0 * s.rho2 / (mu2 * s.big_n()) + 16.0 * l2r2 / mu2, 1.0 - 8.0 * s.l * s.l * gl) + guard_52(s, lambda)
}

/// (79) (003:L773): `E||w~^(g) - w*_g||^2 <= C1/N + C2 (1/n ^ R^2)`, `C1`, `C2` of (80).
pub fn global_79(s: &Stat) -> f64 {
    let (c1, c2) = c1_c2(s);
    c1 / s.big_n() + c2 * (1.0 / s.n).min(s.r * s.r)
}

/// The smallest lambda of (77) (003:L763), the global model's condition for `R <= 1/sqrt(n)`:
/// `(8 kappa/mu) {8L^2 v (2L^2R^2 + rho^2/n)/(4 rho^2/(mu^2 N) + 4 L^2R^2/mu^2)} - mu`.
pub fn lambda_77(s: &Stat) -> f64 {
    let (l2r2, mu2) = (s.l * s.l * s.r * s.r, s.mu * s.mu);
    let ratio = (2.0 * l2r2 + s.rho2 / s.n) / (4.0 * s.rho2 / (mu2 * s.big_n()) + 4.0 * l2r2 / mu2);
    8.0 * s.kappa() / s.mu * (8.0 * s.l * s.l).max(ratio) - s.mu
}

/// Lemma 4 (003:L424): `E||w~_GT - w*_g|| <= (rho sqrt(sum_i p_i^2/n_i) + L R)/(mu/2)`, with
/// `p_i = 1/m`, `n_i = n`: `(rho/sqrt(N) + L R)/(mu/2)`.
pub fn lemma4(s: &Stat) -> f64 {
    (s.rho2.sqrt() / s.big_n().sqrt() + s.l * s.r) / (s.mu / 2.0)
}

/// The steps of the remark after Theorem 3 (003:L1318): `eta = min{mu (lambda+L)/(4 L
/// (lambda+mu)^2), 1/(lambda+L)}`, `gamma = (lambda+L)/(2 lambda L)`; returns `(eta, gamma)`.
pub fn t3_remark_steps(mu: f64, l: f64, lambda: f64) -> (f64, f64) {
    let eta = (mu * (lambda + l) / (4.0 * l * (lambda + mu).powi(2))).min(1.0 / (lambda + l));
    (eta, (lambda + l) / (2.0 * lambda * l))
}

/// The noise ball of the remark after Theorem 3 (003:L1318), its `O(eps)` part taken to 0:
/// `min{1/(4 mu L), (lambda+mu)/(mu^2 (lambda+L))} sigma^2/(B m)`.
pub fn t3_remark_ball(o: &Opt, sigma2: f64, b: f64) -> f64 {
    (1.0 / (4.0 * o.mu * o.l)).min((o.lambda + o.mu) / (o.mu * o.mu * (o.lambda + o.l))) * sigma2 / (b * o.m)
}
