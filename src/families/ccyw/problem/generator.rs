use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use super::constants::ProblemConstants;
use super::instance::{ClientQuadratic, Layout, QuadraticInstance};
use crate::error::{require_positive, require_scale, Error, Result};
use crate::rng::StreamKey;

/// How the shared and personal blocks interact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coupling {
    /// `A_i = A` for all clients and `B_i = 0`: the BGD constant `b^2` is finite and equals the
    /// spread of the linear terms.
    Decoupled,
    /// Each `H_i` is a random rotation of a spectrum in `[mu, L]`: in general `A_i` differ and
    /// `B_i != 0`, so `b^2` is infinite (Assumption 2.3 fails; see [`super::BgdConstant`]).
    /// Degenerate recipes are exceptions, and the computed constant says so: `mu = L` makes every
    /// `H_i = L I`, and `du = 1, dv = 0` makes every `A_i = L`; both give a finite `b^2`.
    Coupled,
}

/// A seeded recipe for an instance with target constants.
///
/// Constants of the built instance are computed afterwards by [`ProblemConstants::compute`]; the
/// recipe hits `L`, `sigma_u^2`, `sigma_v^2`, `b^2` (decoupled) and `||z^0 - z*||` exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceSpec {
    /// Number of clients `n >= 1`.
    pub n: usize,
    /// Dimension of `u` (0 drops the shared variable).
    pub du: usize,
    /// Dimension of each `v_i` (0 drops the personal variables).
    pub dv: usize,
    /// Target smoothness constant `L > 0` (max of block norms, Assumption 2.1).
    pub l: f64,
    /// Smallest eigenvalue of every spectrum, `0 < mu <= L`.
    pub mu: f64,
    /// `sigma_u = sqrt(tr S_u) >= 0`.
    pub sigma_u: f64,
    /// `sigma_v = sqrt(tr S_v) >= 0`.
    pub sigma_v: f64,
    /// Spread of the u-linear terms, `sqrt((1/n) sum_i ||g_{u,i} - gbar||^2) >= 0`; equal to the BGD
    /// constant `b` for decoupled instances.
    pub b: f64,
    /// Decoupled (finite b) or coupled (infinite b).
    pub coupling: Coupling,
    /// Distance of the initial point from the minimizer, `||z^0 - z*|| >= 0`.
    pub init_distance: f64,
    /// Seed of the instance (independent of the run's seed).
    pub seed: u64,
}

fn normal_vec(rng: &mut ChaCha8Rng, len: usize) -> DVector<f64> {
    DVector::from_fn(len, |_, _| rng.sample(StandardNormal))
}

fn random_orthogonal(rng: &mut ChaCha8Rng, dim: usize) -> DMatrix<f64> {
    if dim == 0 {
        return DMatrix::zeros(0, 0);
    }
    let g = DMatrix::from_fn(dim, dim, |_, _| rng.sample::<f64, _>(StandardNormal));
    g.qr().q()
}

/// A spectrum in `[mu, top]` with `top` attained, and `mu` attained when `dim >= 2`.
fn spectrum(rng: &mut ChaCha8Rng, dim: usize, mu: f64, top: f64) -> DVector<f64> {
    DVector::from_fn(dim, |k, _| match k {
        0 => top,
        1 => mu,
        _ => mu + (top - mu) * rng.gen::<f64>(),
    })
}

fn symmetric_with_spectrum(rng: &mut ChaCha8Rng, dim: usize, mu: f64, top: f64) -> DMatrix<f64> {
    let q = random_orthogonal(rng, dim);
    let s = spectrum(rng, dim, mu, top);
    let m = &q * DMatrix::from_diagonal(&s) * q.transpose();
    (&m + m.transpose()) * 0.5
}

fn covariance_with_trace(rng: &mut ChaCha8Rng, dim: usize, trace: f64) -> DMatrix<f64> {
    if dim == 0 || trace == 0.0 {
        return DMatrix::zeros(dim, dim);
    }
    let w = DMatrix::from_fn(dim, dim, |_, _| rng.sample::<f64, _>(StandardNormal));
    let s = &w * w.transpose();
    let s = (&s + s.transpose()) * 0.5;
    let t = s.trace();
    s * (trace / t)
}

/// `n` vectors with zero mean and `(1/n) sum ||delta_i||^2 = spread^2`.
fn centred_spread(rng: &mut ChaCha8Rng, n: usize, dim: usize, spread: f64) -> Vec<DVector<f64>> {
    let mut deltas: Vec<DVector<f64>> = (0..n).map(|_| normal_vec(rng, dim)).collect();
    if spread == 0.0 || dim == 0 {
        return deltas.iter().map(|d| d * 0.0).collect();
    }
    let mean = deltas.iter().fold(DVector::zeros(dim), |a, d| a + d) / n as f64;
    for d in &mut deltas {
        *d -= &mean;
    }
    let ms = deltas.iter().map(|d| d.norm_squared()).sum::<f64>() / n as f64;
    let scale = spread / ms.sqrt();
    deltas.iter().map(|d| d * scale).collect()
}

impl InstanceSpec {
    /// Checks every field, naming the first that is out of range.
    ///
    /// # Errors
    /// [`Error::InvalidField`] with the field name and its allowed range.
    pub fn check(&self) -> Result<()> {
        if self.n == 0 {
            return Err(Error::field("instance.n", "got 0", "an integer >= 1"));
        }
        // Each client holds a dense (du + dv)^2 Hessian, its rotation and its noise factor.
        let d = self.du as f64 + self.dv as f64;
        crate::error::require_memory("instance.n, instance.du, instance.dv", 8.0 * 4.0 * self.n as f64 * d * d, "the clients' matrices")?;
        if self.du + self.dv == 0 {
            return Err(Error::field("instance.du + instance.dv", "got 0", ">= 1"));
        }
        // Targets are squared when the instance is built: keep squares (and their sums) finite.
        let (floor, limit) = (crate::prec::INPUT_MAGNITUDE_MIN, crate::prec::INPUT_MAGNITUDE_MAX);
        for (field, v) in [("instance.l", self.l), ("instance.mu", self.mu)] {
            if !(v.is_finite() && (floor..=limit).contains(&v)) {
                return Err(Error::field(field, format!("got {v}"), format!("a number in [{floor:e}, {limit:e}]")));
            }
        }
        for (field, v) in
            [("instance.sigma_u", self.sigma_u), ("instance.sigma_v", self.sigma_v), ("instance.b", self.b), ("instance.init_distance", self.init_distance)]
        {
            if v.is_finite() && v > limit {
                return Err(Error::field(field, format!("got {v}"), format!("a number in [0, {limit:e}]")));
            }
        }
        require_positive("instance.l", self.l)?;
        require_positive("instance.mu", self.mu)?;
        if self.mu > self.l {
            return Err(Error::field("instance.mu", format!("got {} > l = {}", self.mu, self.l), "0 < mu <= l"));
        }
        let least = super::super::prec::MIN_CURVATURE_RATIO;
        if self.mu < least * self.l {
            return Err(Error::field(
                "instance.mu",
                format!("got {} with l = {} (condition number {:e})", self.mu, self.l, self.l / self.mu),
                format!("mu >= {least:e} l: a rotated Hessian of a larger condition number loses its smallest eigenvalue to rounding"),
            ));
        }
        require_scale("instance.sigma_u", self.sigma_u)?;
        require_scale("instance.sigma_v", self.sigma_v)?;
        require_scale("instance.b", self.b)?;
        require_scale("instance.init_distance", self.init_distance)?;
        if self.b > 0.0 && (self.n < 2 || self.du == 0) {
            return Err(Error::field("instance.b", format!("got {} with n = {}, du = {}", self.b, self.n, self.du), "b = 0 unless n >= 2 and du >= 1"));
        }
        Ok(())
    }

    /// Builds the instance.
    ///
    /// # Errors
    /// As [`InstanceSpec::check`].
    pub fn build(&self) -> Result<QuadraticInstance> {
        self.check()?;
        let layout = Layout { n: self.n, du: self.du, dv: self.dv };
        let d = layout.local_dim();
        let key = |slot: u64| StreamKey { seed: self.seed, replicate: u64::MAX, round: u64::MAX, client: slot };
        let mut shared_rng = key(u64::MAX).rng(0);
        let a_common = symmetric_with_spectrum(&mut shared_rng, self.du, self.mu, self.l);
        let g_mean = normal_vec(&mut shared_rng, self.du);
        let deltas = centred_spread(&mut shared_rng, self.n, self.du, self.b);

        let mut clients = Vec::with_capacity(self.n);
        for (i, delta) in deltas.iter().enumerate() {
            let mut rng = key(i as u64).rng(0);
            let hessian = match self.coupling {
                Coupling::Decoupled => {
                    let mut h = DMatrix::zeros(d, d);
                    h.view_mut((0, 0), (self.du, self.du)).copy_from(&a_common);
                    let c = symmetric_with_spectrum(&mut rng, self.dv, self.mu, self.l);
                    h.view_mut((self.du, self.du), (self.dv, self.dv)).copy_from(&c);
                    h
                }
                Coupling::Coupled => symmetric_with_spectrum(&mut rng, d, self.mu, self.l),
            };
            let mut linear = DVector::zeros(d);
            linear.rows_mut(0, self.du).copy_from(&(&g_mean + delta));
            linear.rows_mut(self.du, self.dv).copy_from(&normal_vec(&mut rng, self.dv));
            clients.push(ClientQuadratic { hessian, linear });
        }
        let mut noise_rng = key(u64::MAX - 1).rng(0);
        let su = covariance_with_trace(&mut noise_rng, self.du, self.sigma_u * self.sigma_u);
        let sv = covariance_with_trace(&mut noise_rng, self.dv, self.sigma_v * self.sigma_v);

        let provisional = QuadraticInstance::new(layout, clients.clone(), su.clone(), sv.clone(), DVector::zeros(layout.state_dim()))?;
        let constants = ProblemConstants::compute(&provisional)?;
        if self.coupling == Coupling::Coupled && constants.l > 0.0 {
            // Block norms of a rotated spectrum fall below its top eigenvalue; rescale so L is exact.
            let s = self.l / constants.l;
            for c in &mut clients {
                c.hessian *= s;
            }
        }
        let provisional = QuadraticInstance::new(layout, clients.clone(), su.clone(), sv.clone(), DVector::zeros(layout.state_dim()))?;
        let z_star = ProblemConstants::compute(&provisional)?.minimizer;
        let direction = normal_vec(&mut noise_rng, layout.state_dim());
        let z0 = z_star + direction.normalize() * self.init_distance;
        QuadraticInstance::new(layout, clients, su, sv, z0)
    }
}
