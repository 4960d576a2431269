//! Explicit FedPLT instances: the `[instance]` table of a scenario given by its numbers instead of
//! a seeded recipe, every field checked; and the explicit form of any instance, which
//! `run --export-instance` writes.
//!
//! Client `k` holds `F_k(W) = 1/2 (W - a_k)^T H_k (W - a_k)`, weight `c_k` (001:L30) and a static
//! binary mask `m_k` (001:L90-96); its stochastic gradient adds `(sigma / sqrt(d)) xi`,
//! `xi ~ N(0, I_d)` (Assumption 4 with equality, 001:L136-141).
//!
//! ```toml
//! [instance]
//! sigma = 0.3               # noise level, >= 0
//! initial = [0.0, 0.0]      # W^0, length d
//! [[instance.clients]]      # K >= 1 entries
//! weight = 0.5              # c_k > 0; the weights sum to 1
//! hessian = [[2.0, 0.0], [0.0, 1.0]]   # H_k, d x d, symmetric positive definite (rows)
//! optimum = [1.0, 0.0]      # a_k, the minimizer of F_k
//! mask = [1, 0]             # m_k, 0 or 1 per coordinate
//! noise_cov = [[0.1, 0.0], [0.0, 0.02]]   # optional S_k (in every client, with no sigma)
//! step_scale = 2.0          # optional s_k > 0: the client steps with eta_k = s_k eta^t (default 1)
//! ```
//!
//! With covariances, Assumption 4's `sigma^2 = max_k tr(S_k)`.
//!
//! `step_scale` gives each client its own step `eta_k` of eq. 4 (001:L57) as a multiple of the
//! scenario's step `eta^t`. The analysis takes one step `eta^t` for every client (001:L108-110,
//! L194): when the factors differ, the claims built on that step are not applicable; when they
//! are all equal to `s`, the run is the one at the common step `s eta^t`.
//!
//! `H_k` positive definite is Assumption 2 (`mu = min_k lambda_min(H_k) > 0`, 001:L126-129); its
//! smallest eigenvalue must be at least [`crate::prec::INPUT_MAGNITUDE_MIN`] and its largest at
//! most [`crate::prec::INPUT_MAGNITUDE_MAX`], the range the recipe allows for `mu` and `L`. That
//! some coordinate is covered is checked with the constants ([`Instance::constants`]).

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use serde::{Deserialize, Serialize};

use super::prec::{PSD_FLOOR, SYMMETRY, WEIGHT_SUM};
use super::problem::{Instance, InstanceSpec};
use crate::error::{require_len, require_memory, Error, Result};
use crate::explicit::{covariance, finite, matrix, recipe_or_explicit, rows, symmetric, vector, Covariance};
use crate::prec::{INPUT_MAGNITUDE_MAX, INPUT_MAGNITUDE_MIN};

/// An instance given by its numbers (the `[instance]` table with a list of clients).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitInstance {
    /// `sigma >= 0` of Assumption 4 (isotropic noise `(sigma / sqrt(d)) xi`); absent when every
    /// client gives `noise_cov`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma: Option<f64>,
    /// `W^0`, length `d >= 1`.
    pub initial: Vec<f64>,
    /// One entry per client, `K >= 1` in all.
    pub clients: Vec<ExplicitClient>,
}

/// One client of an [`ExplicitInstance`]; the Hessian as a list of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitClient {
    /// `c_k`, in `(0, 1]`.
    pub weight: f64,
    /// `H_k`, `d x d`, symmetric positive definite.
    pub hessian: Vec<Vec<f64>>,
    /// `a_k`, length `d`.
    pub optimum: Vec<f64>,
    /// `m_k`, length `d`, entries 0 or 1 (any other number is refused by name).
    pub mask: Vec<MaskEntry>,
    /// `S_k`, the covariance of the gradient noise, `d x d` symmetric positive semidefinite
    /// (anisotropic noise `R_k xi`, `R_k R_k^T = S_k`); only without `instance.sigma`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_cov: Option<Vec<Vec<f64>>>,
    /// `s_k > 0`: the client's step is `eta_k^t = s_k eta^t` (its `eta_k` of eq. 4, 001:L57);
    /// absent: 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_scale: Option<f64>,
}

/// One entry of a mask as written: any TOML number, so that a value other than 0 or 1 is refused
/// by [`ExplicitInstance::build`] naming its place rather than by the parser; written back as the
/// integer 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaskEntry(pub f64);

impl Serialize for MaskEntry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0 {
            0.0 => serializer.serialize_u8(0),
            1.0 => serializer.serialize_u8(1),
            v => serializer.serialize_f64(v),
        }
    }
}

impl<'de> Deserialize<'de> for MaskEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        f64::deserialize(deserializer).map(Self)
    }
}

/// A scenario's instance: the seeded recipe (the default) or the explicit numbers.
///
/// The two are told apart by `clients`: a count in the recipe, a list of tables in the explicit
/// form. A recipe serializes exactly as [`InstanceSpec`] does (so its scenario hash is unchanged).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InstanceInput {
    /// The seeded recipe.
    Recipe(InstanceSpec),
    /// The explicit numbers.
    Explicit(ExplicitInstance),
}

impl<'de> Deserialize<'de> for InstanceInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let explicit = |v: &toml::Value| matches!(v.get("clients"), Some(toml::Value::Array(_)));
        recipe_or_explicit(deserializer, explicit, "explicit instance", Self::Recipe, Self::Explicit)
    }
}

impl From<InstanceSpec> for InstanceInput {
    fn from(spec: InstanceSpec) -> Self {
        Self::Recipe(spec)
    }
}

impl InstanceInput {
    /// Clients `K` as written (the explicit form's list length).
    pub fn clients(&self) -> usize {
        match self {
            Self::Recipe(s) => s.clients,
            Self::Explicit(e) => e.clients.len(),
        }
    }

    /// Dimension `d` as written (the explicit form's `W^0` length).
    pub fn dim(&self) -> usize {
        match self {
            Self::Recipe(s) => s.dim,
            Self::Explicit(e) => e.initial.len(),
        }
    }

    /// Validates the input and builds the instance.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the field and its range.
    pub fn build(&self) -> Result<Instance> {
        match self {
            Self::Recipe(s) => s.build(),
            Self::Explicit(e) => e.build(),
        }
    }
}

/// Checks a symmetric `H_k`: `INPUT_MAGNITUDE_MIN <= lambda_min` and
/// `lambda_max <= INPUT_MAGNITUDE_MAX` (Assumptions 1-2 with the recipe's range).
fn require_positive_definite(field: &str, h: &DMatrix<f64>) -> Result<()> {
    let eig = SymmetricEigen::new(h.clone()).eigenvalues;
    let (least, most) = (eig.min(), eig.max());
    if least.is_nan() || least < INPUT_MAGNITUDE_MIN || most > INPUT_MAGNITUDE_MAX {
        let got = format!("eigenvalues in [{least:e}, {most:e}]");
        return Err(Error::field(field, got, format!("symmetric positive definite, eigenvalues in [{INPUT_MAGNITUDE_MIN:e}, {INPUT_MAGNITUDE_MAX:e}]")));
    }
    Ok(())
}

/// A client's numbers, checked.
struct Built {
    hessian: DMatrix<f64>,
    optimum: DVector<f64>,
    mask: DVector<f64>,
    noise: Option<Covariance>,
}

/// `sigma` of Assumption 4: the isotropic level when no client gives `noise_cov`, else
/// `sqrt(max_k tr(S_k))` when every client gives one.
fn noise_level(sigma: Option<f64>, covariances: &[Option<Covariance>]) -> Result<(f64, Option<Vec<Covariance>>)> {
    let either = "either instance.sigma (isotropic noise) or noise_cov in every client";
    match (sigma, covariances.iter().position(Option::is_some), covariances.iter().position(Option::is_none)) {
        (Some(s), None, _) => {
            if !(s.is_finite() && (0.0..=INPUT_MAGNITUDE_MAX).contains(&s)) {
                return Err(Error::field("instance.sigma", format!("got {s}"), format!("a number in [0, {INPUT_MAGNITUDE_MAX:e}]")));
            }
            Ok((s, None))
        }
        (Some(_), Some(i), _) => Err(Error::field(format!("instance.clients[{i}].noise_cov"), "given with instance.sigma", either)),
        (None, _, Some(i)) => Err(Error::field(format!("instance.clients[{i}].noise_cov"), "missing, and instance.sigma is not given", either)),
        (None, _, None) => {
            let all: Vec<Covariance> = covariances.iter().flatten().cloned().collect();
            Ok((all.iter().map(|c| c.matrix.trace()).fold(0.0, f64::max).sqrt(), Some(all)))
        }
    }
}

impl ExplicitClient {
    /// Checks every field (named `field.<name>`) for dimension `d`; gives `(H_k, a_k, m_k)`.
    fn build(&self, field: &str, d: usize) -> Result<Built> {
        let f = |name: &str| format!("{field}.{name}");
        if !(self.weight.is_finite() && self.weight > 0.0 && self.weight <= 1.0) {
            return Err(Error::field(f("weight"), format!("got {}", self.weight), "0 < c_k <= 1"));
        }
        let hessian = symmetric(&f("hessian"), SYMMETRY, matrix(&f("hessian"), &self.hessian, (d, d), "d x d")?)?;
        require_positive_definite(&f("hessian"), &hessian)?;
        let optimum = vector(&f("optimum"), &self.optimum, d, "d")?;
        if self.mask.len() != d {
            return Err(Error::field(f("mask"), format!("length {}", self.mask.len()), format!("length d = {d}")));
        }
        if let Some((i, v)) = self.mask.iter().enumerate().find(|(_, v)| v.0 != 0.0 && v.0 != 1.0) {
            return Err(Error::field(format!("{}[{i}]", f("mask")), format!("got {}", v.0), "a value in {0, 1} (the coordinate is updated or not)"));
        }
        if let Some(s) = self.step_scale.filter(|s| !(s.is_finite() && *s >= INPUT_MAGNITUDE_MIN && *s <= INPUT_MAGNITUDE_MAX)) {
            return Err(Error::field(f("step_scale"), format!("got {s}"), format!("a factor s_k in [{INPUT_MAGNITUDE_MIN:e}, {INPUT_MAGNITUDE_MAX:e}]")));
        }
        let noise = self.noise_cov.as_ref().map(|rows| covariance(&f("noise_cov"), rows, (d, "d x d"), SYMMETRY, PSD_FLOOR)).transpose()?;
        Ok(Built { hessian, optimum, mask: DVector::from_iterator(d, self.mask.iter().map(|v| v.0)), noise })
    }
}

impl ExplicitInstance {
    /// Checks every field and builds the instance; errors name `instance.<name>` and the allowed
    /// range.
    ///
    /// # Errors
    /// [`Error::InvalidField`]: no client or an empty `W^0`, a matrix or vector of the wrong
    /// shape, a non-finite entry, a non-symmetric or not positive definite `H_k`, a weight out of
    /// `(0, 1]` or weights whose sum is not 1 (to [`WEIGHT_SUM`]), a mask entry other than 0 or 1, a
    /// step factor that is not a positive finite number in the input range,
    /// a negative or non-finite `sigma`, a noise covariance that is not symmetric positive
    /// semidefinite, noise given both ways or neither.
    pub fn build(&self) -> Result<Instance> {
        let k = require_len("instance.clients", self.clients.len(), 1, usize::MAX)?;
        let d = require_len("instance.initial", self.initial.len(), 1, usize::MAX)?;
        require_memory("instance.clients, instance.initial", 8.0 * 4.0 * k as f64 * d as f64 * d as f64, "the clients' matrices")?;
        finite("instance.initial", &self.initial)?;
        let built: Vec<_> = self.clients.iter().enumerate().map(|(i, c)| c.build(&format!("instance.clients[{i}]"), d)).collect::<Result<_>>()?;
        let total: f64 = self.clients.iter().map(|c| c.weight).sum();
        if (total - 1.0).abs() > WEIGHT_SUM {
            return Err(Error::field(
                "instance.clients[].weight",
                format!("the weights sum to {total}"),
                format!("weights c_k summing to 1 (to {WEIGHT_SUM:e})"),
            ));
        }
        let (sigma, noise) = noise_level(self.sigma, &built.iter().map(|b| b.noise.clone()).collect::<Vec<_>>())?;
        Ok(Instance {
            hessians: built.iter().map(|b| b.hessian.clone()).collect(),
            optima: built.iter().map(|b| b.optimum.clone()).collect(),
            weights: self.clients.iter().map(|c| c.weight).collect(),
            masks: built.into_iter().map(|b| b.mask).collect(),
            sigma,
            initial: DVector::from_column_slice(&self.initial),
            noise,
            step_scales: self.clients.iter().any(|c| c.step_scale.is_some()).then(|| self.clients.iter().map(|c| c.step_scale.unwrap_or(1.0)).collect()),
        })
    }

    /// The explicit form of `inst`: every number as the instance holds it, so that
    /// [`ExplicitInstance::build`] gives back the same instance bit for bit.
    pub fn of(inst: &Instance) -> Self {
        let clients = (0..inst.clients())
            .map(|k| ExplicitClient {
                weight: inst.weights[k],
                hessian: rows(&inst.hessians[k]),
                optimum: inst.optima[k].iter().copied().collect(),
                mask: inst.masks[k].iter().map(|v| MaskEntry(f64::from(u8::from(*v != 0.0)))).collect(),
                noise_cov: inst.noise.as_ref().map(|n| rows(&n[k].matrix)),
                step_scale: inst.step_scales.as_ref().map(|s| s[k]),
            })
            .collect();
        Self { sigma: inst.noise.is_none().then_some(inst.sigma), initial: inst.initial.iter().copied().collect(), clients }
    }
}
