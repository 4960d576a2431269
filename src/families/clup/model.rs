//! The statistical model: `m` clients with `n` samples each of a linear regression with squared
//! loss `l(w, (x, y)) = (x^T w - y)^2 / 2` (003:L41-51 with `p_i = 1/m`, `n_i = n`, L106).
//!
//! The constants of the paper are exact by construction:
//! - every feature has `||x||^2 = L`, so the per-sample Hessian `x x^T` has norm exactly `L`
//!   (Assumption 1 as printed, 003:L92);
//! - the ground truths are `w*^(i) = w*_g + R u_i` with unit `u_i` summing to zero, so every
//!   client sits exactly at distance `R` from their mean (P(R), eq. 5);
//! - labels are `y = x^T w*^(i) + s e`, `e ~ N(0, 1)`, so `E||grad l(w*^(i), z)||^2 = s^2 L = rho^2`
//!   exactly (Assumption 3).
//!
//! With Gaussian features ([`Features::Gaussian`]) the per-sample `L = max ||x||^2` and `rho^2 =
//! s^2 max_i tr(A_i)` are those of each drawn design; explicit data ([`super::explicit`]) gives
//! every number itself.
//!
//! `mu` (Assumption 2) and the empirical-Hessian `L` are properties of the drawn design: they are
//! computed per draw. Expectations over the data are taken over the label noise given the design
//! (exact, since every solution is linear in the labels); each design draw is checked with its own
//! `mu`, and a claim holds on a scenario only if it holds on every draw.

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use crate::error::{require_non_negative, require_positive, Error, Result};
use crate::prec::INPUT_MAGNITUDE_MAX as MAX;
use crate::rng::StreamKey;

/// What a scenario says about the data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Clients `m >= 2`.
    pub m: usize,
    /// Samples per client `n >= d`.
    pub n: usize,
    /// Dimension `d >= 2`.
    pub d: usize,
    /// Heterogeneity radius `R >= 0` (eq. 5).
    pub r: f64,
    /// `L`: the squared norm of every feature (sphere features only; omitted for Gaussian ones).
    #[serde(default = "not_given")]
    pub l: f64,
    /// Label noise standard deviation `s` (`rho^2 = s^2 L`).
    pub noise: f64,
    /// Norm of the mean ground truth `w*_g`.
    #[serde(default = "default_center")]
    pub center: f64,
    /// Seed of the designs and labels.
    pub seed: u64,
    /// How the features are drawn (the sphere `||x||^2 = L` by default).
    #[serde(default, skip_serializing_if = "Features::is_sphere")]
    pub features: Features,
}

fn default_center() -> f64 {
    1.0
}

fn not_given() -> f64 {
    f64::NAN
}

/// How a seeded design draws its features: `"sphere"` or a table with the one key `gaussian`
/// ([`crate::strict::one_of`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(remote = "Self", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Features {
    /// Isotropic on the sphere `||x||^2 = L`: the per-sample `L` of Assumption 1 is exact.
    #[default]
    Sphere,
    /// Gaussian `x = Sigma^{1/2} g`, `g ~ N(0, I_d)`: `features = { gaussian = { spectrum =
    /// [...] } }` (`Sigma` diagonal) or `{ gaussian = { covariance = [[...], ...] } }`. `L`,
    /// `mu` and `rho^2 = s^2 max_i tr(A_i)` are computed from each draw.
    Gaussian(Gaussian),
}

impl<'de> Deserialize<'de> for Features {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        crate::strict::one_of(deserializer, &["sphere", "gaussian"], Features::deserialize)
    }
}

impl Serialize for Features {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        Features::serialize(self, serializer)
    }
}

/// The covariance of Gaussian features: its eigenvalues on the axes, or the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gaussian {
    /// `Sigma = diag(spectrum)`, `d` positive numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spectrum: Option<Vec<f64>>,
    /// `Sigma` as rows, `d x d` symmetric positive definite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covariance: Option<Vec<Vec<f64>>>,
}

impl Features {
    /// The default.
    pub fn is_sphere(&self) -> bool {
        *self == Self::Sphere
    }

    /// `Sigma` of Gaussian features (checked by [`Features::check`]), `None` on the sphere.
    fn sigma(&self, d: usize) -> Option<DMatrix<f64>> {
        match self {
            Self::Sphere => None,
            Self::Gaussian(Gaussian { spectrum: Some(s), .. }) => Some(DMatrix::from_diagonal(&DVector::from_column_slice(s))),
            Self::Gaussian(Gaussian { covariance: Some(rows), .. }) => Some(DMatrix::from_fn(d, d, |i, j| 0.5 * (rows[i][j] + rows[j][i]))),
            Self::Gaussian(_) => None,
        }
    }

    /// `Sigma^{1/2}` of Gaussian features, `None` on the sphere.
    fn root(&self, d: usize) -> Option<DMatrix<f64>> {
        self.sigma(d).map(|s| crate::explicit::Covariance::new(s).root)
    }

    /// `lambda_max(Sigma)`: the scale strong convexity is judged against.
    fn scale(&self, d: usize) -> f64 {
        self.sigma(d).map_or(f64::NAN, |s| SymmetricEigen::new(s).eigenvalues.max())
    }

    /// Checks a Gaussian design's covariance: exactly one of `spectrum` (`d` numbers in
    /// `[INPUT_MAGNITUDE_MIN, INPUT_MAGNITUDE_MAX]`) and `covariance` (`d x d`, symmetric,
    /// eigenvalues in that range).
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `field.gaussian.<name>`.
    pub fn check(&self, field: &str, d: usize) -> Result<()> {
        use crate::prec::INPUT_MAGNITUDE_MIN as MIN;
        let Self::Gaussian(g) = self else { return Ok(()) };
        let range = format!("positive definite: eigenvalues in [{MIN:e}, {MAX:e}]");
        match (&g.spectrum, &g.covariance) {
            (Some(s), None) => {
                let v = crate::explicit::vector(&format!("{field}.gaussian.spectrum"), s, d, "d")?;
                match v.iter().position(|x| !(MIN..=MAX).contains(x)) {
                    Some(k) => Err(Error::field(format!("{field}.gaussian.spectrum[{k}]"), format!("got {}", v[k]), range)),
                    None => Ok(()),
                }
            }
            (None, Some(rows)) => {
                let f = format!("{field}.gaussian.covariance");
                let m = crate::explicit::symmetric(&f, super::prec::SYMMETRY, crate::explicit::matrix(&f, rows, (d, d), "d x d")?)?;
                let e = SymmetricEigen::new(m).eigenvalues;
                if e.min().is_nan() || e.min() < MIN || e.max() > MAX {
                    return Err(Error::field(f, format!("eigenvalues in [{:e}, {:e}]", e.min(), e.max()), range));
                }
                Ok(())
            }
            _ => Err(Error::field(
                format!("{field}.gaussian"),
                "neither or both of spectrum and covariance",
                "exactly one of spectrum (d eigenvalues) and covariance (d x d rows)",
            )),
        }
    }
}

/// Largest `m`, `n` and `d` a scenario may ask for.
pub const MAX_CLIENTS: usize = 64;
/// Largest `n`.
pub const MAX_SAMPLES: usize = 4096;
/// Largest `d`.
pub const MAX_DIM: usize = 16;

impl ModelSpec {
    /// Checks every field, naming the one at fault.
    ///
    /// # Errors
    /// [`Error::InvalidField`].
    pub fn check(&self, field: &str) -> Result<()> {
        if !(2..=MAX_CLIENTS).contains(&self.m) {
            return Err(Error::field(format!("{field}.m"), format!("got {}", self.m), format!("2 <= m <= {MAX_CLIENTS}")));
        }
        if !(2..=MAX_DIM).contains(&self.d) {
            return Err(Error::field(format!("{field}.d"), format!("got {}", self.d), format!("2 <= d <= {MAX_DIM}")));
        }
        if self.n < self.d || self.n > MAX_SAMPLES {
            return Err(Error::field(format!("{field}.n"), format!("got {}", self.n), format!("d <= n <= {MAX_SAMPLES} (Assumption 2 needs n >= d)")));
        }
        // The explicit form's ranges (`super::explicit`): no number above INPUT_MAGNITUDE_MAX, so
        // that the data, their squares and sums stay finite.
        if !(self.r.is_finite() && (0.0..=MAX).contains(&self.r)) {
            return Err(Error::field(format!("{field}.r"), format!("got {}", self.r), format!("a number in [0, {MAX:e}] (the radius R of P(R))")));
        }
        if self.features.is_sphere() {
            if self.l.is_nan() {
                return Err(Error::field(format!("{field}.l"), "missing", format!("a number in (0, {MAX:e}] with sphere features (||x||^2 = L)")));
            }
            require_at_most(&format!("{field}.l"), require_positive(&format!("{field}.l"), self.l)?, "(0")?;
        } else if !self.l.is_nan() {
            return Err(Error::field(format!("{field}.l"), format!("got {}", self.l), "omitted with Gaussian features (their covariance sets the scale)"));
        }
        self.features.check(&format!("{field}.features"), self.d)?;
        require_at_most(&format!("{field}.noise"), require_positive(&format!("{field}.noise"), self.noise)?, "(0")?;
        require_at_most(&format!("{field}.center"), require_non_negative(&format!("{field}.center"), self.center)?, "[0")?;
        Ok(())
    }
}

/// Checks that a number already checked against its lower end (`lower`, `"(0"` or `"[0"`) is at
/// most [`INPUT_MAGNITUDE_MAX`](crate::prec::INPUT_MAGNITUDE_MAX), as in the explicit form.
fn require_at_most(field: &str, value: f64, lower: &str) -> Result<f64> {
    if value > MAX {
        return Err(Error::field(field, format!("got {value}"), format!("a number in {lower}, {MAX:e}]")));
    }
    Ok(value)
}

/// One client's data.
#[derive(Debug, Clone)]
pub struct Client {
    /// Features, one per row (`n x d`).
    pub x: DMatrix<f64>,
    /// Labels.
    pub y: DVector<f64>,
    /// `A_i = X^T X / n`, the Hessian of `L_i`.
    pub a: DMatrix<f64>,
    /// `b_i = X^T y / n`, so `grad L_i(w) = A_i w - b_i`.
    pub b: DVector<f64>,
    /// `E b_i = A_i w*^(i)` over the label noise.
    pub b_mean: DVector<f64>,
    /// The ground truth `w*^(i)`.
    pub w_star: DVector<f64>,
}

/// One design draw with its labels.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Dimension.
    pub d: usize,
    /// Samples per client.
    pub n: usize,
    /// The clients.
    pub clients: Vec<Client>,
    /// Label noise variance `s^2`.
    pub noise2: f64,
    /// The constants of this draw.
    pub constants: Constants,
}

/// The exact constants of one draw.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Constants {
    /// `L` of Assumption 1 as printed: `max ||x||^2`, the per-sample smoothness.
    pub l_sample: f64,
    /// `max_i lambda_max(A_i)`: the smoothness of the empirical losses, all the proofs use.
    pub l_empirical: f64,
    /// `mu = min_i lambda_min(A_i)` (Assumption 2, the largest valid constant of this draw).
    pub mu: f64,
    /// A bound on the error of the computed `mu` ([`eigenvalue_error`]): the exact `mu` of the
    /// given numbers lies within `mu +- mu_error`. Near-singular features make it large relative
    /// to `mu`; a condition on `mu` decided within it is undecided, not met or failed.
    pub mu_error: f64,
    /// `rho^2 = s^2 L` (Assumption 3, exact).
    pub rho2: f64,
    /// `max_i ||w*^(i) - mean_j w*^(j)||`, which equals `R`.
    pub r: f64,
}

fn eig_range(a: &DMatrix<f64>) -> (f64, f64) {
    let e = SymmetricEigen::new(a.clone()).eigenvalues;
    (e.min(), e.max())
}

/// A bound on the error of each computed eigenvalue of `A = X^T X / n` (`n x d` features `X`)
/// against the exact eigenvalues of the exact `X^T X / n` of the same numbers.
///
/// # Formula
/// `(gamma_n + 4 d^2 eps) tr(A)`, `gamma_n = n eps / (1 - n eps)`: forming `A` errs entrywise by
/// at most `gamma_n |X|^T |X| / n`, whose 2-norm is at most `||X||_F^2 / n = tr(A)`; the symmetric
/// eigensolver is backward stable, with a backward error of at most `4 d^2 eps ||A||_2 <= 4 d^2
/// eps tr(A)` (a generous constant for the `O(d)` of the QR iteration); Weyl's inequality moves
/// each eigenvalue by at most the 2-norm of the perturbation. Relative to a small eigenvalue this
/// is about `eps kappa(A)`: `2.4e-4` for `lambda_min = 1.8e-12` of a matrix of norm 2, where the
/// computed value was `2.3e-5` off.
pub fn eigenvalue_error(a: &DMatrix<f64>, n: usize) -> f64 {
    let (eps, nf, d) = (f64::EPSILON, n as f64, a.nrows() as f64);
    let gamma_n = nf * eps / (1.0 - nf * eps);
    (gamma_n + 4.0 * d * d * eps) * a.trace().abs()
}

/// Strong convexity of every client's empirical loss (Assumption 2), checked on the clients'
/// Hessians `A_i`: `mu = min_i lambda_min(A_i)` must exceed
/// [`super::prec::STRONG_CONVEXITY`] times `scale`. Gives `(mu, max_i lambda_max(A_i), mu_error)`
/// (`mu_error` the largest [`eigenvalue_error`] over the clients, which bounds the error of the
/// minimum), or the client with the smallest eigenvalue and that eigenvalue.
fn curvatures(clients: &[Client], scale: f64) -> std::result::Result<(f64, f64, f64), (usize, f64)> {
    let mut mu = f64::INFINITY;
    let mut l_emp: f64 = 0.0;
    let mut mu_error: f64 = 0.0;
    let mut worst = 0;
    for (i, c) in clients.iter().enumerate() {
        let (lo, hi) = eig_range(&c.a);
        if lo < mu {
            worst = i;
        }
        mu = mu.min(lo);
        l_emp = l_emp.max(hi);
        mu_error = mu_error.max(eigenvalue_error(&c.a, c.x.nrows()));
    }
    if mu <= super::prec::STRONG_CONVEXITY * scale {
        return Err((worst, mu));
    }
    Ok((mu, l_emp, mu_error))
}

/// `R = max_i ||w*^(i) - mean_j w*^(j)||` (eq. 5, 003:L79), computed from the differences to the
/// first client's `w*^(1)`: `R = max_i ||delta_i - mean_j delta_j||`, `delta_i = w*^(i) - w*^(1)`.
/// The differences of nearby vectors are exact (Sterbenz), so the error is relative to the
/// spread, at most [`radius_error`] of `R`, however far the ground truths are from the origin;
/// averaging the `w*^(i)` themselves errs by `eps max ||w*||`, 5% of `R = 2e-6` at `||w*|| = 1e9`.
fn radius(clients: &[Client], d: usize) -> f64 {
    let Some(first) = clients.first() else { return 0.0 };
    let deltas: Vec<DVector<f64>> = clients.iter().map(|c| &c.w_star - &first.w_star).collect();
    let mean = deltas.iter().fold(DVector::zeros(d), |acc, x| acc + x) / clients.len() as f64;
    deltas.iter().map(|x| (x - &mean).norm()).fold(0.0, f64::max)
}

/// A bound on the relative error of the computed `R` (`Constants::r`) with `m` clients in dimension `d`:
/// `2 (m + d + 2) eps` (each difference errs by `eps` relative to itself, and every difference
/// is at most `2 R`; the mean adds `m eps`, the norm `d eps`).
pub fn radius_error(m: usize, d: usize) -> f64 {
    2.0 * (m + d + 2) as f64 * f64::EPSILON
}

/// One client's numbers as given or drawn: features (rows), labels, ground truth.
pub struct ClientData {
    /// `X`, `n x d`.
    pub x: DMatrix<f64>,
    /// `y`, length `n`.
    pub y: DVector<f64>,
    /// `w*^(i)`, length `d`.
    pub w_star: DVector<f64>,
}

impl Client {
    /// The client's Hessian `A_i = X^T X / n`, linear term `b_i = X^T y / n` and its mean
    /// `A_i w*^(i)` over the label noise (003:L41-51 for the squared loss).
    pub fn new(data: ClientData) -> Self {
        let ClientData { x, y, w_star } = data;
        let n = x.nrows() as f64;
        let a = x.transpose() * &x / n;
        let b = x.transpose() * &y / n;
        let b_mean = &a * &w_star;
        Self { x, y, a, b, b_mean, w_star }
    }
}

/// `rho^2` of Assumption 3 computed from a design: `s^2 max_i tr(A_i)`, the largest
/// `E||grad l(w*^(i), z)||^2 = s^2 (1/n) sum_j ||x_ij||^2` over the clients, `z` a sample of
/// client `i` with its label noise (the proof's `E||grad L_i(w*^(i))||^2 <= rho^2/n` then holds
/// with equality at the worst client).
pub fn design_rho2(clients: &[Client], noise2: f64) -> f64 {
    noise2 * clients.iter().map(|c| c.a.trace()).fold(0.0, crate::engine::nan_max)
}

impl Instance {
    /// The instance of clients' data with label noise variance `noise2` and Assumption 3's
    /// `rho2`; the constants `L` (per sample and empirical), `mu` and `R` computed from the data.
    ///
    /// # Errors
    /// `(client, lambda_min)` when an empirical loss is not strongly convex (the caller names
    /// the field).
    pub fn from_clients(data: Vec<ClientData>, noise2: f64, rho2: f64, scale: f64) -> std::result::Result<Self, (usize, f64)> {
        let (n, d) = data.first().map_or((0, 0), |c| c.x.shape());
        let m = data.len();
        let clients: Vec<Client> = data.into_iter().map(Client::new).collect();
        let (mu, l_emp, mu_error) = curvatures(&clients, scale)?;
        let r = radius(&clients, d);
        let l_sample = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| clients[i].x.row(j).norm_squared()).fold(0.0, f64::max);
        let constants = Constants { l_sample, l_empirical: l_emp, mu, mu_error, rho2, r };
        Ok(Instance { d, n, clients, noise2, constants })
    }
}

impl ModelSpec {
    /// Draws design number `draw` (features, labels) of this model: ground truths on a regular
    /// polygon of radius `R` around a centre of norm `center` in the first two coordinates,
    /// features by [`Features`], labels `x^T w*^(i) + s e`.
    ///
    /// # Errors
    /// [`Error::Instance`] when a client's empirical loss is not strongly convex.
    pub fn instance(&self, draw: u64) -> Result<Instance> {
        self.check("model")?;
        let (m, n, d) = (self.m, self.n, self.d);
        let mut center = DVector::zeros(d);
        {
            let mut rng = StreamKey { seed: self.seed, replicate: draw, round: u64::MAX, client: u64::MAX }.rng(0);
            let v = DVector::from_fn(d, |_, _| rng.sample::<f64, _>(StandardNormal));
            center += v.normalize() * self.center;
        }
        let root = self.features.root(d);
        let mut data = Vec::with_capacity(m);
        for i in 0..m {
            let angle = 2.0 * std::f64::consts::PI * i as f64 / m as f64;
            let mut u = DVector::zeros(d);
            u[0] = angle.cos();
            u[1] = angle.sin();
            let w_star = &center + u * self.r;
            let mut rng = StreamKey { seed: self.seed, replicate: draw, round: 0, client: i as u64 }.rng(0);
            let mut x = DMatrix::zeros(n, d);
            let mut y = DVector::zeros(n);
            for j in 0..n {
                let g = DVector::from_fn(d, |_, _| rng.sample::<f64, _>(StandardNormal));
                let v = match &root {
                    None => g.normalize() * self.l.sqrt(),
                    Some(root) => root * g,
                };
                let e: f64 = rng.sample(StandardNormal);
                y[j] = v.dot(&w_star) + self.noise * e;
                x.set_row(j, &v.transpose());
            }
            data.push(ClientData { x, y, w_star });
        }
        let noise2 = self.noise * self.noise;
        let scale = if root.is_none() { self.l } else { self.features.scale(d) };
        let inst = Instance::from_clients(data, noise2, f64::NAN, scale)
            .map_err(|(_, mu)| Error::Instance(format!("design draw {draw}: an empirical loss is not strongly convex (lambda_min = {mu:e}); raise n")))?;
        let rho2 = match root {
            None => self.noise * self.noise * self.l,
            Some(_) => design_rho2(&inst.clients, noise2),
        };
        Ok(Instance { constants: Constants { rho2, ..inst.constants }, ..inst })
    }

    /// `rho^2` as the scenario states it, the same on every draw: `s^2 L` on the sphere; `None`
    /// for Gaussian features, whose `rho^2` is computed per draw ([`design_rho2`]).
    pub fn stated_rho2(&self) -> Option<f64> {
        self.features.is_sphere().then_some(self.noise * self.noise * self.l)
    }
}

/// An estimator of the clients' models from the linear terms `b_i` (linear in them).
pub type LinearEstimator<'a> = dyn Fn(&[DVector<f64>]) -> Vec<DVector<f64>> + 'a;

/// A solution of Problem (2): the global and the local models.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// `w~^(g)`.
    pub global: DVector<f64>,
    /// `w~^(i)`.
    pub locals: Vec<DVector<f64>>,
}

pub(super) fn inverse(a: &DMatrix<f64>) -> DMatrix<f64> {
    a.clone()
        .cholesky()
        .map(|c| c.inverse())
        .unwrap_or_else(|| a.clone().try_inverse().unwrap_or_else(|| DMatrix::from_element(a.nrows(), a.ncols(), f64::NAN)))
}

impl Instance {
    /// Clients.
    pub fn m(&self) -> usize {
        self.clients.len()
    }

    /// `prox_{L_i/lambda}(w_g) = (A_i + lambda I)^{-1} (b_i + lambda w_g)` (003:L152, eq. 11).
    pub fn prox(&self, i: usize, lambda: f64, w_g: &DVector<f64>) -> DVector<f64> {
        let c = &self.clients[i];
        let h = &c.a + DMatrix::identity(self.d, self.d) * lambda;
        inverse(&h) * (&c.b + w_g * lambda)
    }

    /// The linear part of [`Self::prox`], `lambda (A_i + lambda I)^{-1} v`: how `w*^(i)(.)` moves
    /// when its argument moves by `v`.
    pub fn prox_linear(&self, i: usize, lambda: f64, v: &DVector<f64>) -> DVector<f64> {
        let h = &self.clients[i].a + DMatrix::identity(self.d, self.d) * lambda;
        inverse(&h) * (v * lambda)
    }

    /// `w_g - prox_{L_i/lambda}(w_g)`, evaluated without cancellation as
    /// `(A_i + lambda I)^{-1} (A_i w_g - b_i)`, which it equals since `prox(w_g) = (A_i + lambda
    /// I)^{-1} (b_i + lambda w_g)`. The subtraction `w_g - prox(w_g)` loses the digits the two
    /// share: where `A_i` is small beside `lambda` (features of scale `1e-2` at `lambda = 0.5`),
    /// relative errors above `1e-9`, enough to call Lemma 2's identity violated.
    pub fn prox_displacement(&self, i: usize, lambda: f64, w_g: &DVector<f64>) -> DVector<f64> {
        let c = &self.clients[i];
        let h = &c.a + DMatrix::identity(self.d, self.d) * lambda;
        inverse(&h) * (&c.a * w_g - &c.b)
    }

    /// The solution of Problem (2) for linear terms `b` (003:L48): the first-order conditions
    /// (23)-(24) give `w_i = (A_i + lambda I)^{-1}(b_i + lambda w_g)` and
    /// `(I - (lambda/m) sum_i (A_i + lambda I)^{-1}) w_g = (1/m) sum_i (A_i + lambda I)^{-1} b_i`.
    /// The matrix on the left is formed as `(1/m) sum_i (A_i + lambda I)^{-1} A_i`, which it
    /// equals (`I - lambda (A + lambda I)^{-1} = (A + lambda I)^{-1} A`): the difference from `I`
    /// would keep only `eps lambda/L` of its relative accuracy where `lambda` is large beside `A_i`.
    /// At `lambda = 0` the problem is LocalTrain (3) and `w_g` is taken as the mean (24).
    pub fn solve_with(&self, lambda: f64, b: &[DVector<f64>]) -> Solution {
        let (d, m) = (self.d, self.m() as f64);
        let inv: Vec<DMatrix<f64>> = self.clients.iter().map(|c| inverse(&(&c.a + DMatrix::identity(d, d) * lambda))).collect();
        if lambda == 0.0 {
            let locals: Vec<DVector<f64>> = inv.iter().zip(b).map(|(h, bi)| h * bi).collect();
            let global = locals.iter().fold(DVector::zeros(d), |acc, w| acc + w) / m;
            return Solution { global, locals };
        }
        let mut lhs = DMatrix::zeros(d, d);
        let mut rhs = DVector::zeros(d);
        for ((h, bi), c) in inv.iter().zip(b).zip(&self.clients) {
            lhs += h * &c.a / m;
            rhs += h * bi / m;
        }
        let global = inverse(&lhs) * rhs;
        let locals = inv.iter().zip(b).map(|(h, bi)| h * (bi + &global * lambda)).collect();
        Solution { global, locals }
    }

    /// The solution of Problem (2) on the drawn labels.
    pub fn solve(&self, lambda: f64) -> Solution {
        let b: Vec<DVector<f64>> = self.clients.iter().map(|c| c.b.clone()).collect();
        self.solve_with(lambda, &b)
    }

    /// LocalTrain (3): `w_i = A_i^{-1} b_i` for linear terms `b`.
    pub fn local_train_with(&self, b: &[DVector<f64>]) -> Vec<DVector<f64>> {
        self.clients.iter().zip(b).map(|(c, bi)| inverse(&c.a) * bi).collect()
    }

    /// GlobalTrain (4): `w = (sum_i A_i)^{-1} sum_i b_i` for linear terms `b`.
    pub fn global_train_with(&self, b: &[DVector<f64>]) -> DVector<f64> {
        let a = self.clients.iter().fold(DMatrix::zeros(self.d, self.d), |acc, c| acc + &c.a);
        let s = b.iter().fold(DVector::zeros(self.d), |acc, bi| acc + bi);
        inverse(&a) * s
    }

    /// `E||f_i(b) - w*^(i)||^2` per client over the label noise, for an estimator `f` linear in
    /// the linear terms `b` (`b_i = A_i w*^(i) + X_i^T e_i s / n`, `Cov b_i = s^2 A_i / n`):
    /// `||f_i(E b) - w*^(i)||^2 + sum_k tr(M_ik (s^2 A_k/n) M_ik^T)`, with the columns of `M`
    /// obtained by applying `f` to unit vectors.
    pub fn expected_errors(&self, f: &LinearEstimator<'_>) -> Vec<f64> {
        let mean: Vec<DVector<f64>> = self.clients.iter().map(|c| c.b_mean.clone()).collect();
        let bias: Vec<f64> = f(&mean).iter().zip(&self.clients).map(|(w, c)| (w - &c.w_star).norm_squared()).collect();
        self.add_noise_terms(f, bias)
    }

    /// Adds to `errors` (one per estimate `f` returns) the label noise's part of each expected
    /// square, `sum_k tr(M_ik (s^2 A_k/n) M_ik^T)`, `M_ik` the response of estimate `i` to `b_k`
    /// (`f` linear, so its columns are `f` of unit vectors).
    fn add_noise_terms(&self, f: &LinearEstimator<'_>, mut errors: Vec<f64>) -> Vec<f64> {
        let (d, m) = (self.d, self.m());
        let zero: Vec<DVector<f64>> = vec![DVector::zeros(d); m];
        for k in 0..m {
            // Response of every estimate to a unit change of b_k along each axis.
            let cols: Vec<Vec<DVector<f64>>> = (0..d)
                .map(|j| {
                    let mut b = zero.clone();
                    b[k][j] = 1.0;
                    f(&b)
                })
                .collect();
            let cov = &self.clients[k].a * (self.noise2 / self.n as f64);
            for (i, e) in errors.iter_mut().enumerate() {
                let mik = DMatrix::from_fn(d, d, |r, c| cols[c][i][r]);
                *e += (&mik * &cov * mik.transpose()).trace();
            }
        }
        errors
    }

    /// `E||w~^(i) - w*^(i)||^2` per client at `lambda` (Theorem 1's metric, 003:L108).
    pub fn statistical_errors(&self, lambda: f64) -> Vec<f64> {
        self.expected_errors(&|b| self.solve_with(lambda, b).locals)
    }

    /// `E||w~^(g) - w*_g||^2` at `lambda` (eq. 79's metric).
    pub fn global_statistical_error(&self, lambda: f64) -> f64 {
        self.expected_error_to_center(&|b| self.solve_with(lambda, b).global)
    }

    /// `E||f(b) - w*_g||^2` over the label noise, `w*_g = (1/m) sum_i w*^(i)` (003:L371), for a
    /// global estimate `f` linear in the linear terms `b`: `||f(E b) - w*_g||^2` plus the noise
    /// terms of [`Self::expected_errors`].
    pub fn expected_error_to_center(&self, f: &dyn Fn(&[DVector<f64>]) -> DVector<f64>) -> f64 {
        let center = self.clients.iter().fold(DVector::zeros(self.d), |acc, c| acc + &c.w_star) / self.m() as f64;
        let mean: Vec<DVector<f64>> = self.clients.iter().map(|c| c.b_mean.clone()).collect();
        let bias = (f(&mean) - center).norm_squared();
        self.add_noise_terms(&|b| vec![f(b)], vec![bias])[0]
    }

    /// GlobalTrain's `E||w~_GT - w*_g||^2` (Lemma 4's quantity, squared; 003:L424).
    pub fn global_train_error_to_center(&self) -> f64 {
        self.expected_error_to_center(&|b| self.global_train_with(b))
    }

    /// The gradient of the Moreau envelope `F_i` at `w` from its quadratic form alone: `F_i` has
    /// the Hessian `lambda A_i (A_i + lambda I)^{-1}` ([`Self::envelope_hessian`]) and the
    /// minimizer of `L_i`, `A_i^{-1} b_i`, so `grad F_i(w) = lambda A_i (A_i + lambda I)^{-1} (w -
    /// A_i^{-1} b_i)`: Lemma 2's left side without its prox (003:L161).
    pub fn envelope_gradient(&self, i: usize, lambda: f64, w: &DVector<f64>) -> DVector<f64> {
        let c = &self.clients[i];
        let (hess, _) = self.envelope_hessian(i, lambda);
        hess * (w - inverse(&c.a) * &c.b)
    }

    /// LocalTrain's `E||w_i - w*^(i)||^2` per client.
    pub fn local_train_errors(&self) -> Vec<f64> {
        self.expected_errors(&|b| self.local_train_with(b))
    }

    /// GlobalTrain's `E||w - w*^(i)||^2` per client.
    pub fn global_train_errors(&self) -> Vec<f64> {
        self.expected_errors(&|b| vec![self.global_train_with(b); self.m()])
    }

    /// The Hessian of the Moreau envelope `F_i`: `lambda A_i (A_i + lambda I)^{-1}`, and the
    /// Jacobian of `prox_{L_i/lambda}`: `lambda (A_i + lambda I)^{-1}` (Lemma 1's objects).
    pub fn envelope_hessian(&self, i: usize, lambda: f64) -> (DMatrix<f64>, DMatrix<f64>) {
        let a = &self.clients[i].a;
        let jac = inverse(&(a + DMatrix::identity(self.d, self.d) * lambda)) * lambda;
        (a * &jac, jac)
    }

    /// Per-sample gradient variance of client `i` (Assumption 4, variance reading) at a random
    /// model with mean `mean` and covariance `cov`:
    ///
    /// # Formula
    /// `E V(w) = tr(Q C) + V(mean)`, with `V(w) = (1/n) sum_j ||r_j(w) - g(w)||^2` the per-sample
    /// variance at a point, `r_j(w) = x_j (x_j^T w - y_j)` sample `j`'s gradient, `g(w)` their
    /// mean, and `Q = (1/n) sum_j M_j^T M_j`, `M_j = x_j x_j^T - A_i` (the variance is quadratic
    /// in `w` with curvature `Q`).
    ///
    /// `V(mean)` is summed from the residuals `x_j^T mean - y_j`, never expanded as the quadratic
    /// `mean^T Q mean - 2 q^T mean + c`: far from the origin (labels and models of size `2^20`)
    /// that expansion cancels terms `10^12` times the variance; Theorem 3's noise floor `sigma^2`
    /// was `3.7e-5` relative off on the three-client example moved by `2^20`, and 86,000 times too
    /// large on an instance of an earlier probe.
    pub fn sample_variance_at(&self, i: usize, q: &DMatrix<f64>, mean: &DVector<f64>, cov: &DMatrix<f64>) -> f64 {
        let c = &self.clients[i];
        let residuals = &c.x * mean - &c.y;
        let grads: Vec<DVector<f64>> = (0..self.n).map(|j| c.x.row(j).transpose() * residuals[j]).collect();
        let g = grads.iter().fold(DVector::zeros(self.d), |acc, r| acc + r) / self.n as f64;
        let at_mean = grads.iter().map(|r| (r - &g).norm_squared()).sum::<f64>() / self.n as f64;
        (q * cov).trace() + at_mean
    }

    /// The curvature `Q = (1/n) sum_j M_j^T M_j`, `M_j = x_j x_j^T - A_i`, of client `i`'s
    /// per-sample gradient variance ([`Self::sample_variance_at`]).
    pub fn sample_variance_curvature(&self, i: usize) -> DMatrix<f64> {
        let c = &self.clients[i];
        let mut q = DMatrix::zeros(self.d, self.d);
        for j in 0..self.n {
            let x = c.x.row(j).transpose();
            let mj = &x * x.transpose() - &c.a;
            q += mj.transpose() * &mj;
        }
        q / self.n as f64
    }
}

/// The eigenvalue range of a symmetric matrix.
pub fn spectrum(a: &DMatrix<f64>) -> (f64, f64) {
    eig_range(&((a + a.transpose()) * 0.5))
}
