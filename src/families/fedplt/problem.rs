//! FedPLT's problem model: heterogeneous strongly convex quadratics with static masks, and every
//! constant the paper's recursion uses, computed exactly from the instance.
//!
//! Client `k` holds `F_k(W) = 1/2 (W - a_k)^T H_k (W - a_k)` (so `F_k* = min F_k = 0`), weight
//! `c_k = n_k / n` and a binary mask `m_k`; its stochastic gradient adds `(sigma / sqrt(d)) xi`,
//! `xi ~ N(0, I_d)`, so Assumption 4 holds with equality: `E||grad l - grad F_k||^2 = sigma^2`
//! (001:L136-141). The global objective is `F = sum_k c_k F_k` (001:L30).

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use crate::error::{require_count, require_memory, require_non_negative, require_positive, Error, Result};
use crate::explicit::Covariance;
use crate::rng::StreamKey;

/// How the clients' masks are laid out: `{ kind = "full" }`, `{ kind = "layers", layers = 3,
/// per_client = 1 }`, ...; a key the kind does not take is refused ([`crate::strict`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaskLayout {
    /// Every client updates every coordinate (FedPLT reduces to FedAvg).
    Full,
    /// Each coordinate belongs to exactly one client (round-robin): disjoint masks, full coverage.
    Disjoint,
    /// The coordinates form `layers` contiguous blocks ("layers"); client `k` updates
    /// `per_client` consecutive layers starting at layer `k mod layers` (overlapping when
    /// `per_client > 1`).
    Layers {
        /// Number of blocks, `1 <= layers <= d`.
        layers: usize,
        /// Blocks per client, `1 <= per_client <= layers`.
        per_client: usize,
    },
    /// Client `k` updates a seeded random subset of `max(1, round(fraction d))` coordinates.
    Random {
        /// Update fraction `r`, `0 < r <= 1`.
        fraction: f64,
    },
    /// Given coordinates per client (0-based); coordinates nobody lists stay uncovered.
    Explicit {
        /// One list per client.
        coordinates: Vec<Vec<usize>>,
    },
}

impl<'de> Deserialize<'de> for MaskLayout {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        crate::strict::internally_tagged(deserializer, "kind", MaskLayout::deserialize)
    }
}

impl Serialize for MaskLayout {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        MaskLayout::serialize(self, serializer)
    }
}

/// A seeded recipe for an instance (unchecked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstanceSpec {
    /// Clients `K >= 1`.
    pub clients: usize,
    /// Dimension `d >= 1`.
    pub dim: usize,
    /// Smoothness `L`: the largest eigenvalue over all `H_k` equals it exactly.
    pub l: f64,
    /// Strong convexity `mu`: the smallest eigenvalue over all `H_k` equals it exactly.
    pub mu: f64,
    /// Noise level `sigma >= 0` of Assumption 4.
    pub sigma: f64,
    /// `||a_k - a_mean||` for every client (0: a shared optimum).
    pub heterogeneity: f64,
    /// `||W^0 - W*||`.
    pub init_distance: f64,
    /// Random rotations of the Hessians (false: diagonal `H_k`, aligned with the masks).
    #[serde(default)]
    pub rotated: bool,
    /// Samples per client `n_k` (default: equal weights).
    #[serde(default)]
    pub samples: Option<Vec<u64>>,
    /// The masks.
    pub masks: MaskLayout,
    /// Seed of the recipe.
    pub seed: u64,
}

/// Which stream of the recipe a draw comes from (keyed apart from every run).
const RECIPE_ROUND: u64 = u64::MAX - 2;

/// A FedPLT instance with its masks.
#[derive(Debug, Clone)]
pub struct Instance {
    /// `H_k`.
    pub hessians: Vec<DMatrix<f64>>,
    /// `a_k`, the minimizer of `F_k`.
    pub optima: Vec<DVector<f64>>,
    /// `c_k = n_k / n`.
    pub weights: Vec<f64>,
    /// `m_k` as 0/1 values.
    pub masks: Vec<DVector<f64>>,
    /// `sigma`.
    pub sigma: f64,
    /// `W^0`.
    pub initial: DVector<f64>,
    /// Per-client noise covariances `S_k` (an explicit instance's `noise_cov`); `None`: the
    /// isotropic `(sigma / sqrt(d)) xi` of every client, `S_k = (sigma^2 / d) I`.
    pub noise: Option<Vec<Covariance>>,
    /// Per-client step factors `s_k` (an explicit instance's `step_scale`): client `k` steps with
    /// `eta_k^t = s_k eta^t` (its own `eta_k` of eq. 4, 001:L57); `None`: every client takes the
    /// round's step `eta^t`, as the analysis does (001:L108-110, L194).
    pub step_scales: Option<Vec<f64>>,
}

fn unit_vector(rng: &mut rand_chacha::ChaCha8Rng, d: usize) -> DVector<f64> {
    loop {
        let v = DVector::from_fn(d, |_, _| rng.sample::<f64, _>(StandardNormal));
        let n = v.norm();
        if n > super::prec::UNIT_VECTOR_MIN_NORM {
            return v / n;
        }
    }
}

impl InstanceSpec {
    /// Validates the recipe and builds the instance.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the field and its range.
    pub fn build(&self) -> Result<Instance> {
        let (k, d) = (require_count("instance.clients", self.clients, 1, usize::MAX)?, require_count("instance.dim", self.dim, 1, usize::MAX)?);
        require_memory("instance.clients, instance.dim", 8.0 * 4.0 * k as f64 * d as f64 * d as f64, "the clients' matrices")?;
        require_positive("instance.l", self.l)?;
        require_positive("instance.mu", self.mu)?;
        let (floor, limit) = (crate::prec::INPUT_MAGNITUDE_MIN, crate::prec::INPUT_MAGNITUDE_MAX);
        if self.mu > self.l || self.l > limit || self.mu < floor {
            return Err(Error::field("instance.mu", format!("got mu = {} with l = {}", self.mu, self.l), format!("{floor:e} <= mu <= l <= {limit:e}")));
        }
        for (field, v) in [("instance.sigma", self.sigma), ("instance.heterogeneity", self.heterogeneity), ("instance.init_distance", self.init_distance)] {
            require_non_negative(field, v)?;
            if v > limit {
                return Err(Error::field(field, format!("got {v}"), format!("a number in [0, {limit:e}]")));
            }
        }
        let weights = match &self.samples {
            None => vec![1.0 / k as f64; k],
            Some(n) => {
                if n.len() != k || n.contains(&0) {
                    return Err(Error::field("instance.samples", format!("got {n:?}"), format!("{k} positive integers (one per client)")));
                }
                let total: f64 = n.iter().map(|x| *x as f64).sum();
                n.iter().map(|x| *x as f64 / total).collect()
            }
        };
        let masks = self.masks(k, d)?;
        let mut rng = StreamKey { seed: self.seed, replicate: 0, round: RECIPE_ROUND, client: 0 }.rng(0);
        // Spectra in [mu, L], then the extremes placed so that L and mu are exact: L at client 0's
        // first eigenvalue, mu at its second (or at client 1's first when d = 1).
        let mut spectra: Vec<DVector<f64>> = (0..k).map(|_| DVector::from_fn(d, |_, _| self.mu + (self.l - self.mu) * rng.gen::<f64>())).collect();
        spectra[0][0] = self.l;
        match (d, k) {
            (1, 1) if self.mu != self.l => {
                return Err(Error::field("instance.mu", format!("got mu = {} < l = {} with one client and dim 1", self.mu, self.l), "mu = l when K = d = 1"));
            }
            (1, 1) => {}
            (1, _) => spectra[1][0] = self.mu,
            _ => spectra[0][1] = self.mu,
        }
        let hessians: Vec<DMatrix<f64>> = spectra
            .iter()
            .map(|spectrum| {
                if self.rotated {
                    let g = DMatrix::from_fn(d, d, |_, _| rng.sample::<f64, _>(StandardNormal));
                    let q = g.qr().q();
                    let h = &q * DMatrix::from_diagonal(spectrum) * q.transpose();
                    (&h + h.transpose()) * 0.5
                } else {
                    DMatrix::from_diagonal(spectrum)
                }
            })
            .collect();
        let centre = DVector::from_fn(d, |i, _| (i as f64 + 1.0).sqrt());
        let optima: Vec<DVector<f64>> = (0..k).map(|_| &centre + unit_vector(&mut rng, d) * self.heterogeneity).collect();
        let mut inst = Instance { hessians, optima, weights, masks, sigma: self.sigma, initial: DVector::zeros(d), noise: None, step_scales: None };
        let w_star = inst.minimizer()?;
        inst.initial = &w_star + unit_vector(&mut rng, d) * self.init_distance;
        Ok(inst)
    }

    fn masks(&self, k: usize, d: usize) -> Result<Vec<DVector<f64>>> {
        let mut masks = vec![DVector::zeros(d); k];
        match &self.masks {
            MaskLayout::Full => masks.iter_mut().for_each(|m| m.fill(1.0)),
            MaskLayout::Disjoint => (0..d).for_each(|i| masks[i % k][i] = 1.0),
            MaskLayout::Layers { layers, per_client } => {
                require_count("instance.masks.layers", *layers, 1, d)?;
                require_count("instance.masks.per_client", *per_client, 1, *layers)?;
                for (c, m) in masks.iter_mut().enumerate() {
                    for j in 0..*per_client {
                        let layer = (c + j) % layers;
                        let (lo, hi) = (layer * d / layers, (layer + 1) * d / layers);
                        (lo..hi).for_each(|i| m[i] = 1.0);
                    }
                }
            }
            MaskLayout::Random { fraction } => {
                if !(fraction.is_finite() && *fraction > 0.0 && *fraction <= 1.0) {
                    return Err(Error::field("instance.masks.fraction", format!("got {fraction}"), "0 < fraction <= 1"));
                }
                let count = ((fraction * d as f64).round() as usize).clamp(1, d);
                for (c, m) in masks.iter_mut().enumerate() {
                    let mut rng = StreamKey { seed: self.seed, replicate: 1, round: RECIPE_ROUND, client: c as u64 }.rng(0);
                    rand::seq::index::sample(&mut rng, d, count).into_iter().for_each(|i| m[i] = 1.0);
                }
            }
            MaskLayout::Explicit { coordinates } => {
                if coordinates.len() != k {
                    return Err(Error::field("instance.masks.coordinates", format!("{} lists", coordinates.len()), format!("one list per client ({k})")));
                }
                for (c, list) in coordinates.iter().enumerate() {
                    for &i in list {
                        masks[c][require_count(&format!("instance.masks.coordinates[{c}]"), i, 0, d - 1)?] = 1.0;
                    }
                }
            }
        }
        Ok(masks)
    }
}

/// The compensation vector and the coverage of the masks (001:L90-96).
#[derive(Debug, Clone, Serialize)]
pub struct Compensation {
    /// `psi_i = 1 / sum_k c_k (m_k)_i` on covered coordinates; 1 on uncovered ones (the paper
    /// leaves them arbitrary: their update is zero).
    pub psi: Vec<f64>,
    /// Whether some client updates coordinate `i`.
    pub covered: Vec<bool>,
    /// `psi_ = min psi_i` over covered coordinates (the proof's L388 takes all coordinates,
    /// where psi is arbitrary on uncovered ones: I-PLT4).
    pub psi_min: f64,
    /// `psibar = max psi_i` over covered coordinates.
    pub psi_max: f64,
    /// Coordinates no client updates.
    pub uncovered: usize,
}

/// Every constant of the recursion that depends on the instance alone.
#[derive(Debug, Clone, Serialize)]
pub struct Constants {
    /// Clients `K`.
    pub clients: usize,
    /// Dimension `d`.
    pub dim: usize,
    /// `L = max_k lambda_max(H_k)` (Assumption 1, 001:L116-119).
    pub l: f64,
    /// `mu = min_k lambda_min(H_k)` (Assumption 2, 001:L126-129).
    pub mu: f64,
    /// `sigma^2` (Assumption 4, with equality).
    pub sigma2: f64,
    /// The global minimizer `W*`.
    pub w_star: Vec<f64>,
    /// `F* = F(W*)`.
    pub f_star: f64,
    /// `Lambda = sum_k c_k (F* - F_k*) = F*` since `F_k* = 0` (001:L524).
    pub lambda: f64,
    /// `c_k`.
    pub weights: Vec<f64>,
    /// `r_k = ||m_k||_0 / d`.
    pub fractions: Vec<f64>,
    /// `alpha_{r_k} = min(1, sqrt(d r_k))` as printed (001:L357; 1 for a nonempty mask).
    pub alpha: Vec<f64>,
    /// `Gamma = sum_k c_k alpha_{r_k}^2` (001:L588).
    pub gamma_mask: f64,
    /// `Gamma` with the flagged `alpha = sqrt(r_k)` (I-PLT2).
    pub gamma_mask_sqrt_r: f64,
    /// The compensation vector.
    pub compensation: Compensation,
    /// `D^0 = ||W^0 - W*||^2`.
    pub d0: f64,
    /// Whether every client shares the optimum (`a_k = W*`).
    pub shared_optimum: bool,
}

impl Instance {
    /// The same instance in the coordinates `e = W - origin`: every optimum `a_k` and `W^0`
    /// moved by `-origin` (the Hessians, weights, masks and noise unchanged), so its gradient at
    /// `e` is `grad F_k(origin + e)`.
    pub fn shifted(&self, origin: &DVector<f64>) -> Instance {
        Instance { optima: self.optima.iter().map(|a| a - origin).collect(), initial: &self.initial - origin, ..self.clone() }
    }

    /// `K`.
    pub fn clients(&self) -> usize {
        self.hessians.len()
    }

    /// `d`.
    pub fn dim(&self) -> usize {
        self.initial.len()
    }

    /// `W* = H^{-1} sum_k c_k H_k a_k` with `H = sum_k c_k H_k`.
    ///
    /// # Errors
    /// [`Error::Instance`] when `H` is singular.
    pub fn minimizer(&self) -> Result<DVector<f64>> {
        let rhs = self.hessians.iter().zip(&self.optima).zip(&self.weights).fold(DVector::zeros(self.dim()), |a, ((h, o), c)| a + h * o * *c);
        let hessian = self.hessians.iter().zip(&self.weights).fold(DMatrix::zeros(self.dim(), self.dim()), |a, (h, c)| a + h * *c);
        hessian.cholesky().map(|ch| ch.solve(&rhs)).ok_or_else(|| Error::Instance("the weighted Hessian is not positive definite".into()))
    }

    /// The condition number `lambda_max / lambda_min` of the weighted Hessian `sum_k c_k H_k`
    /// that [`Self::minimizer`] solves with (it bounds the solve's relative rounding).
    pub fn minimizer_condition(&self) -> f64 {
        let hessian = self.hessians.iter().zip(&self.weights).fold(DMatrix::zeros(self.dim(), self.dim()), |a, (h, c)| a + h * *c);
        let eigen = hessian.symmetric_eigenvalues();
        eigen.max() / eigen.min()
    }

    /// `E[(grad l - grad F_k)_i^2]`, the diagonal of client `k`'s noise covariance:
    /// `sigma^2 / d` per coordinate when isotropic, else `(S_k)_ii`.
    pub fn noise_diagonal(&self, k: usize) -> DVector<f64> {
        match &self.noise {
            None => DVector::from_element(self.dim(), self.sigma * self.sigma / self.dim() as f64),
            Some(n) => n[k].matrix.diagonal(),
        }
    }

    /// Client `k`'s step `eta_k^t = s_k eta^t` at the round's step `eta`; exactly `eta` without
    /// per-client factors.
    pub fn client_step(&self, k: usize, eta: f64) -> f64 {
        self.step_scales.as_ref().map_or(eta, |s| s[k] * eta)
    }

    /// The common factor `s` when every client's step is `s eta^t` (1 without per-client
    /// factors), `None` when two clients' factors differ (in any bit).
    pub fn common_step_scale(&self) -> Option<f64> {
        match &self.step_scales {
            None => Some(1.0),
            Some(s) => s.iter().all(|v| *v == s[0]).then(|| s[0]),
        }
    }

    /// `(min_k s_k, max_k s_k)` of the per-client factors (`(1, 1)` without them).
    pub fn step_scale_range(&self) -> (f64, f64) {
        self.step_scales.as_ref().map_or((1.0, 1.0), |s| s.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(*v), hi.max(*v))))
    }

    /// `grad F_k(W) = H_k (W - a_k)`.
    pub fn gradient(&self, k: usize, w: &DVector<f64>) -> DVector<f64> {
        &self.hessians[k] * (w - &self.optima[k])
    }

    /// The compensation vector and coverage (001:L90-96).
    pub fn compensation(&self) -> Compensation {
        let d = self.dim();
        let coverage: Vec<f64> = (0..d).map(|i| self.masks.iter().zip(&self.weights).map(|(m, c)| c * m[i]).sum()).collect();
        let covered: Vec<bool> = (0..d).map(|i| self.masks.iter().any(|m| m[i] != 0.0)).collect();
        let psi: Vec<f64> = coverage.iter().zip(&covered).map(|(c, on)| if *on { 1.0 / c } else { 1.0 }).collect();
        let on: Vec<f64> = psi.iter().zip(&covered).filter(|(_, c)| **c).map(|(p, _)| *p).collect();
        let psi_min = on.iter().copied().fold(f64::INFINITY, f64::min);
        let psi_max = on.iter().copied().fold(0.0, f64::max);
        Compensation { psi, uncovered: covered.iter().filter(|c| !**c).count(), covered, psi_min, psi_max }
    }

    /// The constants of the instance.
    ///
    /// # Errors
    /// When the weighted Hessian is singular or no coordinate is covered.
    pub fn constants(&self) -> Result<Constants> {
        let d = self.dim();
        let eig = |h: &DMatrix<f64>| SymmetricEigen::new(h.clone()).eigenvalues;
        let l = self.hessians.iter().map(|h| eig(h).max()).fold(0.0, f64::max);
        let mu = self.hessians.iter().map(|h| eig(h).min()).fold(f64::INFINITY, f64::min);
        let w_star = self.minimizer()?;
        // F* = sum_k c_k F_k(W*), F_k(W) = 1/2 (W - a_k)^T H_k (W - a_k).
        let local = |k: usize| (&w_star - &self.optima[k], &self.hessians[k]);
        let f_star: f64 = (0..self.clients()).map(local).zip(&self.weights).map(|((x, h), c)| c * (0.5 * x.dot(&(h * &x)))).sum();
        let fractions: Vec<f64> = self.masks.iter().map(|m| m.sum() / d as f64).collect();
        let alpha: Vec<f64> = fractions.iter().map(|r| (d as f64 * r).sqrt().min(1.0)).collect();
        let gamma_mask = self.weights.iter().zip(&alpha).map(|(c, a)| c * a * a).sum();
        let gamma_mask_sqrt_r = self.weights.iter().zip(&fractions).map(|(c, r)| c * r).sum();
        let compensation = self.compensation();
        if compensation.uncovered == d {
            return Err(Error::field("instance.masks", "no client updates any coordinate", "masks that cover at least one coordinate"));
        }
        let shared_optimum = self.optima.iter().all(|a| (a - &w_star).norm() <= super::prec::SHARED_OPTIMUM * (1.0 + w_star.norm()));
        Ok(Constants {
            clients: self.clients(),
            dim: d,
            l,
            mu,
            sigma2: self.sigma * self.sigma,
            d0: (&self.initial - &w_star).norm_squared(),
            w_star: w_star.iter().copied().collect(),
            f_star,
            lambda: f_star,
            weights: self.weights.clone(),
            fractions,
            alpha,
            gamma_mask,
            gamma_mask_sqrt_r,
            compensation,
            shared_optimum,
        })
    }
}
