//! Explicit FedCLUP data: the `model` table of a scenario given by its numbers instead of a
//! seeded recipe, every field checked; and the explicit form of any scenario's design draws,
//! which `run --export-instance` writes.
//!
//! Client `i` of a draw holds `n` samples `(x_ij, y_ij)` of a linear regression with squared loss
//! and its ground truth `w*^(i)` (003:L41-51 with `p_i = 1/m`, `n_i = n`, L106); the labels are
//! read as `y = x^T w*^(i) + s e`, `e ~ N(0, 1)`, so that expectations are taken over the label
//! noise given the features, as for seeded designs ([`super::model`]).
//!
//! ```toml
//! [model]
//! noise = 0.5            # s > 0, the label noise standard deviation
//! r = 0.05               # optional: R of P(R) (eq. 5); computed from the ground truths if omitted
//! rho2 = 0.25            # optional: rho^2 of Assumption 3; s^2 max_i tr(A_i) if omitted
//! [[model.draws]]        # one per design draw (1 to 32); draw 0 runs the algorithms
//! [[model.draws.clients]]   # m >= 2 clients, the same n in each
//! features = [[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]   # X, n x d (rows), n >= d
//! labels = [1.2, 0.9, 1.3]                           # y, length n
//! ground_truth = [1.0, 1.0]                          # w*^(i), length d
//! ```
//!
//! `L` (per sample, `max ||x_ij||^2`, and the empirical `max_i lambda_max(A_i)`) and `mu = min_i
//! lambda_min(A_i)` are computed from each draw as for seeded designs, `A_i = X_i^T X_i / n`;
//! every `A_i` must be positive definite (Assumption 2). A stated `rho2` must be at least the
//! value the data give (to [`super::prec::ASSUMED_CONSTANT`]); a stated `r` below the data's `R`
//! by more than rounding is refused, and the bounds read `max(r, R)`: P(R) holds for the data.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::model::{design_rho2, ClientData, Constants, Instance, ModelSpec, MAX_CLIENTS, MAX_DIM, MAX_SAMPLES};
use super::prec::ASSUMED_CONSTANT;
use crate::error::{require_len, require_memory, require_positive, Error, Result};
use crate::explicit::{matrix, recipe_or_explicit, rows, vector};
use crate::prec::INPUT_MAGNITUDE_MAX;

/// Largest number of design draws a scenario may hold or ask for.
pub const MAX_DRAWS: usize = 32;

/// A model given by its numbers (the `model` table with a list of draws).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitModel {
    /// Label noise standard deviation `s > 0`.
    pub noise: f64,
    /// `R` of P(R) (eq. 5), at least `max_i ||w*^(i) - mean_j w*^(j)||` of every draw; computed
    /// per draw when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<f64>,
    /// `rho^2` of Assumption 3, at least `s^2 max_i tr(A_i)` of every draw; computed per draw
    /// when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho2: Option<f64>,
    /// The design draws, 1 to [`MAX_DRAWS`].
    pub draws: Vec<ExplicitDraw>,
}

/// One design draw: its clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitDraw {
    /// `m >= 2` clients.
    pub clients: Vec<ExplicitClient>,
}

/// One client's data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitClient {
    /// `X`: `n` rows of length `d`.
    pub features: Vec<Vec<f64>>,
    /// `y`: length `n`.
    pub labels: Vec<f64>,
    /// `w*^(i)`: length `d`.
    pub ground_truth: Vec<f64>,
}

/// A scenario's model: the seeded recipe (the default) or the explicit numbers.
///
/// Told apart by `draws`: present only in the explicit form. A recipe serializes exactly as
/// [`ModelSpec`] does (so its scenario hash is unchanged).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ModelInput {
    /// The seeded recipe.
    Seeded(ModelSpec),
    /// The explicit numbers.
    Explicit(ExplicitModel),
}

impl<'de> Deserialize<'de> for ModelInput {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        recipe_or_explicit(deserializer, |v| v.get("draws").is_some(), "explicit model", Self::Seeded, Self::Explicit)
    }
}

impl From<ModelSpec> for ModelInput {
    fn from(spec: ModelSpec) -> Self {
        Self::Seeded(spec)
    }
}

impl ModelInput {
    /// Clients `m` (of the first draw in the explicit form).
    pub fn m(&self) -> usize {
        match self {
            Self::Seeded(s) => s.m,
            Self::Explicit(e) => e.draws.first().map_or(0, |d| d.clients.len()),
        }
    }

    /// Samples per client `n`.
    pub fn n(&self) -> usize {
        match self {
            Self::Seeded(s) => s.n,
            Self::Explicit(e) => e.first_client().map_or(0, |c| c.features.len()),
        }
    }

    /// Dimension `d`.
    pub fn d(&self) -> usize {
        match self {
            Self::Seeded(s) => s.d,
            Self::Explicit(e) => e.first_client().map_or(0, |c| c.ground_truth.len()),
        }
    }

    /// The number of draws the explicit form holds (`None` for a recipe, which draws any number).
    pub fn draws(&self) -> Option<usize> {
        match self {
            Self::Seeded(_) => None,
            Self::Explicit(e) => Some(e.draws.len()),
        }
    }

    /// Checks every field, naming the one at fault (`field.<name>`).
    ///
    /// # Errors
    /// [`Error::InvalidField`].
    pub fn check(&self, field: &str) -> Result<()> {
        match self {
            Self::Seeded(s) => s.check(field),
            Self::Explicit(e) => e.check(field),
        }
    }

    /// Design draw number `draw`: drawn from the recipe, or the given numbers.
    ///
    /// # Errors
    /// Bad input naming the field; an instance that is not strongly convex.
    pub fn instance(&self, draw: u64) -> Result<Instance> {
        match self {
            Self::Seeded(s) => s.instance(draw),
            Self::Explicit(e) => e.instance(draw as usize),
        }
    }

    /// `R` the statistical bounds read on a draw with constants `c`: the recipe's, the stated
    /// one, or the draw's `max_i ||w*^(i) - mean_j w*^(j)||`.
    pub fn radius(&self, c: &Constants) -> f64 {
        match self {
            // The recipe's or the stated R, or the data's where the ground truths are farther
            // apart (rounding of a polygon of radius R around a far centre, or a stated r within
            // that rounding of the data's): P(R) must hold for the ground truths as given.
            Self::Seeded(s) => s.r.max(c.r),
            Self::Explicit(e) => e.r.map_or(c.r, |r| r.max(c.r)),
        }
    }

    /// The explicit form of `draws` (drawn from this model), with the constants this model
    /// states (`r`, and `rho2` where it is the same on every draw), so that the written model
    /// gives back the same instances and constants bit for bit.
    pub fn explicit(&self, draws: &[Instance]) -> ExplicitModel {
        let (noise, r, rho2) = match self {
            Self::Seeded(s) => (s.noise, Some(s.r), s.stated_rho2()),
            Self::Explicit(e) => (e.noise, e.r, e.rho2),
        };
        ExplicitModel { noise, r, rho2, draws: draws.iter().map(ExplicitDraw::of).collect() }
    }
}

impl ExplicitDraw {
    /// The numbers of an instance's clients.
    fn of(inst: &Instance) -> Self {
        let clients = inst
            .clients
            .iter()
            .map(|c| ExplicitClient { features: rows(&c.x), labels: c.y.iter().copied().collect(), ground_truth: c.w_star.iter().copied().collect() })
            .collect();
        Self { clients }
    }
}

/// Checks a stated constant: finite, `>= 0`, at most [`INPUT_MAGNITUDE_MAX`].
fn require_stated(field: &str, v: Option<f64>) -> Result<()> {
    match v {
        Some(x) if !(x.is_finite() && (0.0..=INPUT_MAGNITUDE_MAX).contains(&x)) => {
            Err(Error::field(field, format!("got {x}"), format!("a number in [0, {INPUT_MAGNITUDE_MAX:e}]")))
        }
        _ => Ok(()),
    }
}

impl ExplicitModel {
    fn first_client(&self) -> Option<&ExplicitClient> {
        self.draws.first().and_then(|d| d.clients.first())
    }

    /// Checks every field: the counts (`1 <= draws <= 32`, `2 <= m <= 64`, `1 <= d <= 16`, `d <= n
    /// <= 4096`, the same in every draw and client), the shapes, every entry finite and at most
    /// [`INPUT_MAGNITUDE_MAX`] in magnitude, `noise > 0`, stated `r` and `rho2` in `[0,
    /// INPUT_MAGNITUDE_MAX]`.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `field.<name>` and the allowed range.
    pub fn check(&self, field: &str) -> Result<()> {
        require_len(&format!("{field}.draws"), self.draws.len(), 1, MAX_DRAWS)?;
        let m = require_len(&format!("{field}.draws[0].clients"), self.draws[0].clients.len(), 2, MAX_CLIENTS)?;
        let first = &self.draws[0].clients[0];
        // `d` is the length every feature row of the first client shares (then a ground truth of
        // another length is the field at fault), else that of its ground truth.
        let row = first.features.first().map(Vec::len).filter(|l| first.features.iter().all(|r| r.len() == *l));
        let d = match row {
            Some(l) => require_len(&format!("{field}.draws[0].clients[0].features[0]"), l, 1, MAX_DIM)?,
            None => require_len(&format!("{field}.draws[0].clients[0].ground_truth"), first.ground_truth.len(), 1, MAX_DIM)?,
        };
        let n = first.features.len();
        if n < d || n > MAX_SAMPLES {
            return Err(Error::field(
                format!("{field}.draws[0].clients[0].features"),
                format!("{n} samples with d = {d}"),
                format!("d <= n <= {MAX_SAMPLES} samples (Assumption 2 needs n >= d)"),
            ));
        }
        require_memory(&format!("{field}.draws"), 8.0 * (self.draws.len() * m * n * (d + 1)) as f64, "the explicit data")?;
        require_positive(&format!("{field}.noise"), self.noise)?;
        if self.noise > INPUT_MAGNITUDE_MAX {
            return Err(Error::field(format!("{field}.noise"), format!("got {}", self.noise), format!("a number in (0, {INPUT_MAGNITUDE_MAX:e}]")));
        }
        require_stated(&format!("{field}.r"), self.r)?;
        require_stated(&format!("{field}.rho2"), self.rho2)?;
        for (k, draw) in self.draws.iter().enumerate() {
            let f = format!("{field}.draws[{k}].clients");
            if draw.clients.len() != m {
                return Err(Error::field(f, format!("{} clients", draw.clients.len()), format!("m = {m} clients, as in draws[0]")));
            }
            for (i, c) in draw.clients.iter().enumerate() {
                c.check(&format!("{f}[{i}]"), n, d)?;
            }
        }
        Ok(())
    }

    /// Draw `k` as an instance, its constants computed; a stated `r` or `rho2` checked against
    /// them.
    ///
    /// # Errors
    /// [`Error::InvalidField`]: a field out of range ([`Self::check`]), a client whose `A_i` is
    /// not positive definite, a stated constant below the data's.
    pub fn instance(&self, k: usize) -> Result<Instance> {
        self.check("model")?;
        let draw = self
            .draws
            .get(k)
            .ok_or_else(|| Error::field("designs", format!("draw {k} asked for"), format!("at most {} draws (model.draws)", self.draws.len())))?;
        let data: Vec<ClientData> = draw.clients.iter().map(ExplicitClient::data).collect();
        let noise2 = self.noise * self.noise;
        let scale = data.iter().flat_map(|c| c.x.row_iter().map(|r| r.norm_squared())).fold(0.0, f64::max);
        let inst = Instance::from_clients(data, noise2, f64::NAN, scale).map_err(|(i, mu)| {
            Error::field(
                format!("model.draws[{k}].clients[{i}].features"),
                format!(
                    "X^T X / n has smallest eigenvalue {mu:e}, at most {:e} x the largest squared feature row norm {scale:e} of the draw (not positive definite to working precision)",
                    super::prec::STRONG_CONVEXITY
                ),
                "features spanning R^d: X^T X / n positive definite relative to the features' scale (Assumption 2)",
            )
        })?;
        let computed = design_rho2(&inst.clients, noise2);
        if let Some(rho2) = self.rho2.filter(|s| *s < computed * (1.0 - ASSUMED_CONSTANT)) {
            return Err(Error::field(
                "model.rho2",
                format!("{rho2:e} below s^2 max_i tr(A_i) = {computed:e} of draw {k}"),
                "rho^2 >= s^2 max_i tr(A_i) (Assumption 3), or omit it",
            ));
        }
        // Below the data's R by more than the rounding of its computation and of the ground
        // truths themselves (a recipe's radius around a far centre, written back by an export).
        let scale = inst.clients.iter().map(|c| c.w_star.norm()).fold(0.0, f64::max);
        let below = inst.constants.r * (1.0 - super::model::radius_error(inst.m(), inst.d)) - 4.0 * f64::EPSILON * scale;
        if let Some(r) = self.r.filter(|r| *r < below) {
            return Err(Error::field(
                "model.r",
                format!("{r:e} below max_i ||w*^(i) - mean_j w*^(j)|| = {:e} of draw {k}", inst.constants.r),
                "R >= the ground truths' largest distance to their mean (eq. 5), or omit it",
            ));
        }
        let rho2 = self.rho2.unwrap_or(computed);
        Ok(Instance { constants: Constants { rho2, ..inst.constants }, ..inst })
    }
}

impl ExplicitClient {
    /// Checks the shapes (`n x d` features, `n` labels, `d` ground truth) and entries.
    fn check(&self, field: &str, n: usize, d: usize) -> Result<()> {
        matrix(&format!("{field}.features"), &self.features, (n, d), "n x d, one row per sample")?;
        vector(&format!("{field}.labels"), &self.labels, n, "n")?;
        vector(&format!("{field}.ground_truth"), &self.ground_truth, d, "d")?;
        Ok(())
    }

    /// The client's numbers (checked by [`Self::check`]).
    fn data(&self) -> ClientData {
        let (n, d) = (self.labels.len(), self.ground_truth.len());
        ClientData {
            x: DMatrix::from_fn(n, d, |i, j| self.features[i][j]),
            y: DVector::from_column_slice(&self.labels),
            w_star: DVector::from_column_slice(&self.ground_truth),
        }
    }
}
