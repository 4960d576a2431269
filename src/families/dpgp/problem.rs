//! The partial-personalization quadratics of the checks and their exact constants.
//!
//! Client `i` holds `F_i(u, v) = 1/2 u^T A_i u + u^T B_i v + 1/2 v^T D_i v - a_i^T u - b_i^T v`
//! over the shared `u in R^du` and its personal `v in R^dv`; `F(u, V) = (1/m) sum_i F_i(u, v_i)`
//! (problem (2), 004:L73-80). Stochastic gradients add independent isotropic Gaussian noise,
//! `(sigma_u/sqrt(du)) xi` to `grad_u` and `(sigma_v/sqrt(dv)) xi` to `grad_v`, so the variances
//! of Assumption 3 are `sigma_u^2`, `sigma_v^2` exactly; an explicit instance
//! ([`super::explicit`]) may give a client anisotropic noise `S^{1/2} xi` of covariance `S`
//! instead, and then `sigma^2 = max_i tr(S_i)`.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

use crate::engine::column_order::{dot, row_times};
use crate::error::{require_memory, require_positive, require_scale, Error, Result};
use crate::rng::StreamKey;

/// One client's quadratic.
#[derive(Debug, Clone, PartialEq)]
pub struct Client {
    /// `A_i`, `du x du`, symmetric.
    pub a: DMatrix<f64>,
    /// `B_i`, `du x dv`: the u-v coupling.
    pub b: DMatrix<f64>,
    /// `D_i`, `dv x dv`, symmetric.
    pub d: DMatrix<f64>,
    /// `a_i`.
    pub lin_u: DVector<f64>,
    /// `b_i`.
    pub lin_v: DVector<f64>,
    /// Anisotropic noise of `grad_u` (`None`: isotropic, `sigma_u/sqrt(du)` per coordinate).
    pub noise_u: Option<Covariance>,
    /// Anisotropic noise of `grad_v` (`None`: isotropic, `sigma_v/sqrt(dv)` per coordinate).
    pub noise_v: Option<Covariance>,
}

pub use crate::explicit::Covariance;

/// One noise draw: `S^{1/2} xi` for an anisotropic covariance, else `scale xi`.
pub fn noise(covariance: Option<&Covariance>, xi: &[f64], scale: f64) -> DVector<f64> {
    let x = DVector::from_column_slice(xi);
    match covariance {
        Some(c) => &c.root * x,
        None => x * scale,
    }
}

impl Client {
    /// `grad_u F_i(u, v) = A_i u + B_i v - a_i`.
    pub fn grad_u(&self, u: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
        &self.a * u + &self.b * v - &self.lin_u
    }
    /// [`Client::grad_u`] written into `out`, with no allocation and the same bits (each row of
    /// the products summed in nalgebra's order, [`row_times`]).
    pub fn grad_u_into(&self, u: &[f64], v: &[f64], out: &mut [f64]) {
        for (r, o) in out.iter_mut().enumerate() {
            *o = (row_times(&self.a, r, |c| u[c]) + row_times(&self.b, r, |c| v[c])) - self.lin_u[r];
        }
    }
    /// [`Client::grad_v`] written into `out`, with no allocation and the same bits (`B_i^T u` as
    /// nalgebra's [`dot`]s, `D_i v` row by row in its order).
    pub fn grad_v_into(&self, u: &[f64], v: &[f64], out: &mut [f64]) {
        for (r, o) in out.iter_mut().enumerate() {
            *o = (dot(self.b.column(r).as_slice(), u) + row_times(&self.d, r, |c| v[c])) - self.lin_v[r];
        }
    }
    /// `grad_v F_i(u, v) = B_i^T u + D_i v - b_i`.
    pub fn grad_v(&self, u: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
        self.b.tr_mul(u) + &self.d * v - &self.lin_v
    }
    /// `F_i(u, v)`.
    pub fn value(&self, u: &DVector<f64>, v: &DVector<f64>) -> f64 {
        0.5 * u.dot(&(&self.a * u)) + u.dot(&(&self.b * v)) + 0.5 * v.dot(&(&self.d * v)) - self.lin_u.dot(u) - self.lin_v.dot(v)
    }
}

/// An instance: clients, noise levels and the initial point (`u_i^0 = 0` as the proofs assume,
/// 004:L554, unless an explicit instance gives it; `v_i^0` given).
#[derive(Debug, Clone)]
pub struct Instance {
    /// Shared dimension.
    pub du: usize,
    /// Personal dimension.
    pub dv: usize,
    /// The clients.
    pub clients: Vec<Client>,
    /// `sigma_u`: Assumption 3's constant, `sqrt(max_i tr(S_i))` with anisotropic noise.
    pub sigma_u: f64,
    /// `sigma_v`, likewise.
    pub sigma_v: f64,
    /// `u_i^0`.
    pub u0: Vec<DVector<f64>>,
    /// `v_i^0`.
    pub v0: Vec<DVector<f64>>,
}

/// How a generated instance couples `u` and `v`, and how far clients differ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct InstanceSpec {
    /// Clients `m`.
    pub m: usize,
    /// Shared dimension.
    pub du: usize,
    /// Personal dimension.
    pub dv: usize,
    /// Largest eigenvalue of `A_i` (of client 0's when the curvature is client-specific).
    pub l_u: f64,
    /// Smallest eigenvalue of every `A_i`.
    pub mu_u: f64,
    /// Largest eigenvalue of `D_i`.
    pub l_v: f64,
    /// Smallest eigenvalue of `D_i`.
    pub mu_v: f64,
    /// `||B_i|| = coupling sqrt(mu_u mu_v)`, each `B_i` drawn per client; `0 <= coupling < 1`
    /// keeps every client (and `F`) strongly convex.
    pub coupling: f64,
    /// Client-specific curvature, in `[0, 1)`: `0` gives every client the same diagonal `A` and
    /// `D`; above, client `i`'s `A_i = Q_i diag(s_i) Q_i^T` and `D_i = R_i diag(r_i) R_i^T`
    /// with its own random rotations `Q_i`, `R_i` and spectra from `mu_u` (`mu_v`) up to
    /// `l_u - client_curvature (l_u - mu_u) i/(m-1)` (likewise for `D_i`), so client 0 keeps
    /// `||A_0|| = l_u` and the clients differ in eigenvectors and spectra.
    pub client_curvature: f64,
    /// Heterogeneity of the shared linear terms: `a_i = abar + h e_i` with `e_i` of unit norm
    /// before centring.
    pub heterogeneity: f64,
    /// `sigma_u`.
    pub sigma_u: f64,
    /// `sigma_v`.
    pub sigma_v: f64,
    /// `||v_i^0||`.
    pub v0_norm: f64,
    /// Seed of the generator's keyed streams.
    pub seed: u64,
}

/// Checks the sizes of an instance, naming `field.m`, `field.du`, `field.dv`.
///
/// # Errors
/// [`Error::InvalidField`] with the allowed range.
pub fn validate_sizes(field: &str, m: usize, du: usize, dv: usize) -> Result<()> {
    if m == 0 || m > 256 {
        return Err(Error::field(format!("{field}.m"), format!("got {m}"), "an integer in [1, 256]"));
    }
    for (name, n) in [("du", du), ("dv", dv)] {
        if n == 0 || n > 64 {
            return Err(Error::field(format!("{field}.{name}"), format!("got {n}"), "an integer in [1, 64]"));
        }
    }
    Ok(())
}

/// Rounds slot of the generator's streams (apart from every run's rounds).
const GENERATOR_ROUND: u64 = u64::MAX - 7;

impl InstanceSpec {
    /// Validates the spec, naming `field.<name>` on failure.
    ///
    /// # Errors
    /// [`Error::InvalidField`] with the allowed range.
    pub fn validate(&self, field: &str) -> Result<()> {
        let f = |name: &str| format!("{field}.{name}");
        validate_sizes(field, self.m, self.du, self.dv)?;
        require_positive(&f("l_u"), self.l_u)?;
        require_positive(&f("mu_u"), self.mu_u)?;
        require_positive(&f("l_v"), self.l_v)?;
        require_positive(&f("mu_v"), self.mu_v)?;
        if self.mu_u > self.l_u {
            return Err(Error::field(f("mu_u"), format!("got {} > l_u = {}", self.mu_u, self.l_u), "0 < mu_u <= l_u"));
        }
        if self.mu_v > self.l_v {
            return Err(Error::field(f("mu_v"), format!("got {} > l_v = {}", self.mu_v, self.l_v), "0 < mu_v <= l_v"));
        }
        if !(self.coupling.is_finite() && (0.0..1.0).contains(&self.coupling)) {
            return Err(Error::field(f("coupling"), format!("got {}", self.coupling), "a number in [0, 1)"));
        }
        if !(self.client_curvature.is_finite() && (0.0..1.0).contains(&self.client_curvature)) {
            return Err(Error::field(f("client_curvature"), format!("got {}", self.client_curvature), "a number in [0, 1)"));
        }
        require_scale(&f("heterogeneity"), self.heterogeneity)?;
        require_scale(&f("sigma_u"), self.sigma_u)?;
        require_scale(&f("sigma_v"), self.sigma_v)?;
        require_scale(&f("v0_norm"), self.v0_norm)?;
        let state = (self.m * (self.du + self.dv) + self.du) as f64;
        require_memory(&f("m"), 8.0 * state * state * 4.0, "the second moment of the state")
    }

    /// The instance, from keyed streams (`client` slot `i` for client `i`'s draws).
    ///
    /// # Errors
    /// As [`InstanceSpec::validate`].
    pub fn build(&self, field: &str) -> Result<Instance> {
        self.validate(field)?;
        let (m, du, dv) = (self.m, self.du, self.dv);
        let normal = |i: usize, slot: u64, n: usize| self.normal(i, slot, n);
        let unit = |x: DVector<f64>| {
            let n = x.norm();
            if n > 0.0 {
                x / n
            } else {
                x
            }
        };
        let mut lin_u: Vec<DVector<f64>> = (0..m).map(|i| unit(normal(i, 1, du)) * self.heterogeneity).collect();
        let centre = lin_u.iter().fold(DVector::zeros(du), |acc, x| acc + x) / m as f64;
        let base = normal(usize::MAX >> 1, 2, du);
        for x in lin_u.iter_mut() {
            *x = &*x - &centre + &base;
        }
        let clients = (0..m)
            .map(|i| {
                let raw = DMatrix::from_column_slice(du, dv, normal(i, 3, du * dv).as_slice());
                let svd_norm = raw.clone().svd(false, false).singular_values.max().max(f64::MIN_POSITIVE);
                let b = raw * (self.coupling * (self.mu_u * self.mu_v).sqrt() / svd_norm);
                let a = self.curvature(i, self.mu_u, self.l_u, du, 6);
                let d = self.curvature(i, self.mu_v, self.l_v, dv, 7);
                Client { a, b, d, lin_u: lin_u[i].clone(), lin_v: normal(i, 4, dv), noise_u: None, noise_v: None }
            })
            .collect();
        let v0 = (0..m).map(|i| unit(normal(i, 5, dv)) * self.v0_norm).collect();
        Ok(Instance { du, dv, clients, sigma_u: self.sigma_u, sigma_v: self.sigma_v, u0: vec![DVector::zeros(du); m], v0 })
    }
}

impl InstanceSpec {
    /// `n` standard normals of client `i`'s keyed stream `slot`.
    fn normal(&self, i: usize, slot: u64, n: usize) -> DVector<f64> {
        let mut rng = StreamKey { seed: self.seed, replicate: 0, round: GENERATOR_ROUND, client: i as u64 }.rng(slot);
        DVector::from_fn(n, |_, _| StandardNormal.sample(&mut rng))
    }

    /// Client `i`'s curvature block of size `n` with eigenvalues from `lo` to `hi`: the shared
    /// `diag(hi, ..., lo)` when `client_curvature = 0`, else rotated by the orthogonal factor of a
    /// Gaussian matrix (stream `slot`) with the top eigenvalue lowered to
    /// `hi - client_curvature (hi - lo) i/(m-1)`.
    fn curvature(&self, i: usize, lo: f64, hi: f64, n: usize, slot: u64) -> DMatrix<f64> {
        let spread = |top: f64| DVector::from_fn(n, |k, _| if n == 1 { top } else { top - (top - lo) * k as f64 / (n - 1) as f64 });
        if self.client_curvature == 0.0 {
            return DMatrix::from_diagonal(&spread(hi));
        }
        let top = if self.m == 1 { hi } else { hi - self.client_curvature * (hi - lo) * i as f64 / (self.m - 1) as f64 };
        let q = DMatrix::from_column_slice(n, n, self.normal(i, slot, n * n).as_slice()).qr().q();
        let m = &q * DMatrix::from_diagonal(&spread(top)) * q.transpose();
        (&m + m.transpose()) * 0.5
    }
}

/// Spectral norm of a matrix.
fn spectral(m: &DMatrix<f64>) -> f64 {
    if m.is_empty() {
        return 0.0;
    }
    m.clone().svd(false, false).singular_values.max()
}

/// Assumption 4's constant, exactly: finite, or infinite with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GradientDiversity {
    /// `sigma_g^2`, `None` when the supremum is infinite.
    pub value: Option<f64>,
    /// Why it is infinite (empty when finite).
    pub reason: String,
}

/// Exact constants of an instance by the paper's definitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Constants {
    /// `L_u = max_i ||A_i||`: `grad_u F_i` is `L_u`-Lipschitz in `u` (Assumption 2, 004:L110).
    pub l_u: f64,
    /// `L_v = max_i ||D_i||` (004:L111).
    pub l_v: f64,
    /// `L_uv = max_i ||B_i||`: `grad_u F_i` is `L_uv`-Lipschitz in `v`.
    pub l_uv: f64,
    /// `L_vu = max_i ||B_i^T||`: `grad_v F_i` is `L_vu`-Lipschitz in `u` (equal to `L_uv` here).
    pub l_vu: f64,
    /// `chi = max{L_uv, L_vu} / sqrt(L_u L_v)` (004:L115).
    pub chi: f64,
    /// `sigma_u` (Assumption 3, 004:L118).
    pub sigma_u: f64,
    /// `sigma_v`.
    pub sigma_v: f64,
    /// `sigma_g^2` (Assumption 4, 004:L121).
    pub sigma_g2: GradientDiversity,
    /// `F* = min_{u, V} F(u, V)` (004:L131).
    pub f_star: f64,
}

impl Instance {
    /// Clients `m`.
    pub fn m(&self) -> usize {
        self.clients.len()
    }

    /// `(Abar, abar) = ((1/m) sum_j A_j, (1/m) sum_j a_j)`: the terms of the average u-gradient
    /// `grad_u F(u, V) = Abar u + (1/m) sum_j B_j v_j - abar` that do not read `V`.
    pub fn mean_u_terms(&self) -> (DMatrix<f64>, DVector<f64>) {
        let m = self.m() as f64;
        let a_bar = self.clients[1..].iter().fold(self.clients[0].a.clone(), |acc, c| acc + &c.a) / m;
        let lin_bar = self.clients[1..].iter().fold(self.clients[0].lin_u.clone(), |acc, c| acc + &c.lin_u) / m;
        (a_bar, lin_bar)
    }

    /// `F(u, V)`.
    pub fn objective(&self, u: &DVector<f64>, v: &[DVector<f64>]) -> f64 {
        self.clients.iter().zip(v).map(|(c, vi)| c.value(u, vi)).sum::<f64>() / self.m() as f64
    }

    /// Assumption 4 (004:L121): `sigma_g^2 = sup_{i, u, V} ||grad_u F_i(u, v_i) - grad_u F(u, V)||^2`
    /// with `grad_u F(u, V) = (1/m) sum_j (A_j u + B_j v_j - a_j)`. The difference is
    /// `(A_i - Abar) u + B_i v_i - (1/m) sum_j B_j v_j - (a_i - abar)`: bounded over all `u` only if
    /// every `A_i = Abar`, and over all `V` only if every `B_j = 0` (for `m >= 2`, `v_i` and `v_j`
    /// move independently, so any nonzero coupling, equal across clients or not, makes it
    /// unbounded). Then `sigma_g^2 = max_i ||a_i - abar||^2`.
    pub fn gradient_diversity(&self) -> GradientDiversity {
        let m = self.m() as f64;
        let abar = self.clients.iter().fold(DMatrix::zeros(self.du, self.du), |acc, c| acc + &c.a) / m;
        // Relative to the curvatures' own scale: a floor of 1 would call A_i of scale 1e-12 that
        // differ by half equal, and take Assumption 4 to hold where sigma_g^2 is infinite.
        let scale = self.clients.iter().map(|c| c.a.amax()).fold(0.0, f64::max);
        if self.clients.iter().any(|c| (&c.a - &abar).amax() > super::prec::EQUAL_CURVATURE * scale) {
            return GradientDiversity { value: None, reason: "the clients' u-curvatures A_i differ, so grad_u F_i - grad_u F grows without bound in u".into() };
        }
        if self.m() >= 2 && self.clients.iter().any(|c| c.b.amax() > 0.0) {
            return GradientDiversity {
                value: None,
                reason:
                    "some u-v coupling B_i is nonzero, so grad_u F_i(u, v_i) - grad_u F(u, V) = B_i v_i - (1/m) sum_j B_j v_j + const grows without bound in V"
                        .into(),
            };
        }
        let lbar = self.clients.iter().fold(DVector::zeros(self.du), |acc, c| acc + &c.lin_u) / m;
        let value = self.clients.iter().map(|c| (&c.lin_u - &lbar).norm_squared()).fold(0.0, f64::max);
        GradientDiversity { value: Some(value), reason: String::new() }
    }

    /// The joint Hessian and linear term of `F` over `x = [u; v_1; ...; v_m]`.
    pub fn joint(&self) -> (DMatrix<f64>, DVector<f64>) {
        let (du, dv, m) = (self.du, self.dv, self.m());
        let n = du + m * dv;
        let mut h = DMatrix::zeros(n, n);
        let mut g = DVector::zeros(n);
        let w = 1.0 / m as f64;
        for (i, c) in self.clients.iter().enumerate() {
            let o = du + i * dv;
            let mut huu = h.view_mut((0, 0), (du, du));
            huu += &c.a * w;
            h.view_mut((0, o), (du, dv)).copy_from(&(&c.b * w));
            h.view_mut((o, 0), (dv, du)).copy_from(&(c.b.transpose() * w));
            h.view_mut((o, o), (dv, dv)).copy_from(&(&c.d * w));
            let mut gu = g.rows_mut(0, du);
            gu += &c.lin_u * w;
            g.rows_mut(o, dv).copy_from(&(&c.lin_v * w));
        }
        (h, g)
    }

    /// The slowest contraction of one round's mean dynamics at local steps `(K_u eta_u, K_v eta_v)`: the smallest eigenvalue
    /// `lambda` of `P H` (`H` of [`Self::joint`], `P = diag(K_u eta_u I, m K_v eta_v I)`: a round
    /// moves `u` by `K_u eta_u` times the average gradient, each `v_i` by `K_v eta_v` times its
    /// client's, which is `m` times its block of `F`'s), read as `-ln(1 - lambda)` per round
    /// (`+inf` where `lambda >= 1`). `P H` is similar to the symmetric `P^(1/2) H P^(1/2)`, so
    /// `lambda` is real. A mean-field rate: push-sum weights and mixing are left out (mixing
    /// contracts disagreement, not this mode).
    /// `step_u = K_u eta_u`, `step_v = K_v eta_v`.
    pub fn slowest_contraction(&self, step_u: f64, step_v: f64) -> f64 {
        let (du, m) = (self.du, self.m());
        let (h, _) = self.joint();
        let root = |i: usize| if i < du { step_u.sqrt() } else { (m as f64 * step_v).sqrt() };
        let s = DMatrix::from_fn(h.nrows(), h.ncols(), |i, j| root(i) * h[(i, j)] * root(j));
        let lambda = SymmetricEigen::new(s).eigenvalues.min();
        if lambda >= 1.0 {
            f64::INFINITY
        } else {
            -(-lambda).ln_1p()
        }
    }

    /// `x* = H^{-1} g` and `F* = F(x*) = -g^T x* / 2` over `x = [u; v_1; ...; v_m]` ([`Self::joint`]),
    /// with `H`'s Cholesky factor `L` (`H = L L^T`); `None` when `H` is not positive definite.
    pub fn minimizer_with_factor(&self) -> Option<(DVector<f64>, f64, DMatrix<f64>)> {
        let (h, g) = self.joint();
        let c = h.cholesky()?;
        let x = c.solve(&g);
        let f_star = -0.5 * g.dot(&x);
        Some((x, f_star, c.l()))
    }

    /// `(x*, F*)` of [`Self::minimizer_with_factor`].
    pub fn minimizer(&self) -> Option<(DVector<f64>, f64)> {
        self.minimizer_with_factor().map(|(x, f, _)| (x, f))
    }

    /// The exact constants.
    ///
    /// # Errors
    /// [`Error::Instance`] when `F` has no finite minimum (joint Hessian not positive definite).
    pub fn constants(&self) -> Result<Constants> {
        let l_u = self.clients.iter().map(|c| spectral(&c.a)).fold(0.0, f64::max);
        let l_v = self.clients.iter().map(|c| spectral(&c.d)).fold(0.0, f64::max);
        let l_uv = self.clients.iter().map(|c| spectral(&c.b)).fold(0.0, f64::max);
        let l_vu = self.clients.iter().map(|c| spectral(&c.b.transpose())).fold(0.0, f64::max);
        let eig = SymmetricEigen::new(self.joint().0).eigenvalues;
        if eig.min() <= super::prec::STRONG_CONVEXITY * eig.amax() {
            return Err(Error::Instance(format!(
                "F is not strongly convex to working precision: the joint Hessian's smallest eigenvalue {:.3e} is at most {:e} x its largest magnitude {:.3e}; F* is not attained",
                eig.min(),
                super::prec::STRONG_CONVEXITY,
                eig.amax()
            )));
        }
        let (_, f_star) = self.minimizer().ok_or_else(|| Error::Numerical("joint Hessian factorization failed".into()))?;
        Ok(Constants {
            l_u,
            l_v,
            l_uv,
            l_vu,
            chi: l_uv.max(l_vu) / (l_u * l_v).sqrt(),
            sigma_u: self.sigma_u,
            sigma_v: self.sigma_v,
            sigma_g2: self.gradient_diversity(),
            f_star,
        })
    }
}
