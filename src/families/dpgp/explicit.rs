//! Explicit DFedPGP instances: the `[instance]` table of a scenario file, with every client's
//! blocks of `F_i(u, v) = 1/2 u^T A_i u + u^T B_i v + 1/2 v^T D_i v - a_i^T u - b_i^T v`
//! (problem (2), 004:L73-80), its initial point and its gradient noise, checked field by field;
//! and the explicit form of any instance, which `run --export-instance` writes.
//!
//! ```toml
//! [instance]
//! sigma_u = 0.5            # isotropic noise (or noise_u_cov in every client)
//! sigma_v = 0.5            # likewise (or noise_v_cov in every client)
//! [[instance.clients]]     # m entries
//! a = [[2.0, 0.0], [0.0, 1.0]]   # A_i, du x du, symmetric (rows)
//! b = [[0.1], [0.0]]             # B_i, du x dv (rows)
//! d = [[1.0]]                    # D_i, dv x dv, symmetric
//! lin_u = [1.0, 0.0]             # a_i
//! lin_v = [0.5]                  # b_i
//! v0 = [0.0]                     # v_i^0
//! u0 = [0.0, 0.0]                # optional u_i^0 (zero as the proofs assume, 004:L554)
//! noise_u_cov = [[0.2, 0.0], [0.0, 0.05]]   # optional, with no sigma_u
//! ```
//!
//! Each client's Hessian `[[A_i, B_i], [B_i^T, D_i]]` must be positive semidefinite; `F` strongly
//! convex (so that `F*` is attained) is checked with the constants ([`Instance::constants`]).

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::prec::{PSD_FLOOR, SYMMETRY};
use super::problem::{validate_sizes, Client, Covariance, Instance};
use crate::error::{Error, Result};
use crate::explicit::{covariance, matrix, require_psd, rows, symmetric, vector};

/// An instance given by its matrices (the `[instance]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitInstance {
    /// Isotropic noise of `grad_u`: `(sigma_u/sqrt(du)) xi`; absent when every client gives
    /// `noise_u_cov`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_u: Option<f64>,
    /// Isotropic noise of `grad_v`, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sigma_v: Option<f64>,
    /// One entry per client, `m` in all.
    pub clients: Vec<ExplicitClient>,
}

/// One client of an [`ExplicitInstance`]; matrices as lists of rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitClient {
    /// `A_i`, `du x du`, symmetric.
    pub a: Vec<Vec<f64>>,
    /// `B_i`, `du x dv`.
    pub b: Vec<Vec<f64>>,
    /// `D_i`, `dv x dv`, symmetric.
    pub d: Vec<Vec<f64>>,
    /// `a_i`, length `du`.
    pub lin_u: Vec<f64>,
    /// `b_i`, length `dv`.
    pub lin_v: Vec<f64>,
    /// `u_i^0`, length `du` (zero when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u0: Option<Vec<f64>>,
    /// `v_i^0`, length `dv`.
    pub v0: Vec<f64>,
    /// Covariance of the `grad_u` noise, `du x du`, symmetric positive semidefinite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_u_cov: Option<Vec<Vec<f64>>>,
    /// Covariance of the `grad_v` noise, `dv x dv`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_v_cov: Option<Vec<Vec<f64>>>,
}

/// A client's quadratic and initial point.
struct Built {
    client: Client,
    u0: DVector<f64>,
    v0: DVector<f64>,
}

impl ExplicitClient {
    /// Checks every field (named `field.<name>`) for sizes `du`, `dv` and builds the client.
    fn build(&self, field: &str, du: usize, dv: usize) -> Result<Built> {
        let f = |name: &str| format!("{field}.{name}");
        let a = symmetric(&f("a"), SYMMETRY, matrix(&f("a"), &self.a, (du, du), "du x du")?)?;
        let b = matrix(&f("b"), &self.b, (du, dv), "du x dv")?;
        let d = symmetric(&f("d"), SYMMETRY, matrix(&f("d"), &self.d, (dv, dv), "dv x dv")?)?;
        let mut hessian = DMatrix::zeros(du + dv, du + dv);
        hessian.view_mut((0, 0), (du, du)).copy_from(&a);
        hessian.view_mut((0, du), (du, dv)).copy_from(&b);
        hessian.view_mut((du, 0), (dv, du)).copy_from(&b.transpose());
        hessian.view_mut((du, du), (dv, dv)).copy_from(&d);
        require_psd(&format!("{field}.[a, b; b^T, d]"), &hessian, PSD_FLOOR, "the client's Hessian [[A_i, B_i], [B_i^T, D_i]]")?;
        let noise_u = self.noise_u_cov.as_ref().map(|c| covariance(&f("noise_u_cov"), c, (du, "du x du"), SYMMETRY, PSD_FLOOR)).transpose()?;
        let noise_v = self.noise_v_cov.as_ref().map(|c| covariance(&f("noise_v_cov"), c, (dv, "dv x dv"), SYMMETRY, PSD_FLOOR)).transpose()?;
        let u0 = self.u0.as_ref().map_or_else(|| Ok(DVector::zeros(du)), |x| vector(&f("u0"), x, du, "du"))?;
        let client =
            Client { a, b, d, lin_u: vector(&f("lin_u"), &self.lin_u, du, "du")?, lin_v: vector(&f("lin_v"), &self.lin_v, dv, "dv")?, noise_u, noise_v };
        Ok(Built { client, u0, v0: vector(&f("v0"), &self.v0, dv, "dv")? })
    }
}

/// Assumption 3's constant of one block (`u` or `v`, 004:L118): the instance's isotropic `sigma`
/// when no client gives a covariance, else `sqrt(max_i tr(S_i))` when every client gives one.
fn noise_level(field: &str, block: &str, sigma: Option<f64>, covariances: &[Option<&Covariance>]) -> Result<f64> {
    let key = format!("noise_{block}_cov");
    let either = format!("either {field}.sigma_{block} (isotropic noise) or {key} in every client");
    match (sigma, covariances.iter().position(Option::is_some), covariances.iter().position(Option::is_none)) {
        (Some(s), None, _) => crate::error::require_scale(&format!("{field}.sigma_{block}"), s),
        (Some(_), Some(i), _) => Err(Error::field(format!("{field}.clients[{i}].{key}"), format!("given with {field}.sigma_{block}"), either)),
        (None, _, Some(i)) => Err(Error::field(format!("{field}.clients[{i}].{key}"), format!("missing, and {field}.sigma_{block} is not given"), either)),
        (None, _, None) => Ok(covariances.iter().flatten().map(|c| c.matrix.trace()).fold(0.0, f64::max).sqrt()),
    }
}

impl ExplicitInstance {
    /// Checks every field for `m` clients and sizes `du`, `dv` (the keys `scenario.m`, `.du`,
    /// `.dv`) and builds the instance; errors name `scenario.instance.<name>` and the allowed
    /// range.
    ///
    /// # Errors
    /// [`Error::InvalidField`]: a size out of range, a client count other than `m`, a matrix or
    /// vector of the wrong shape, a non-finite entry, a non-symmetric `A_i`, `D_i` or covariance,
    /// a client Hessian or covariance that is not positive semidefinite, noise given both ways or
    /// neither.
    pub fn build(&self, scenario: &str, m: usize, du: usize, dv: usize) -> Result<Instance> {
        validate_sizes(scenario, m, du, dv)?;
        let field = &format!("{scenario}.instance");
        if self.clients.len() != m {
            return Err(Error::field(format!("{field}.clients"), format!("{} clients", self.clients.len()), format!("m = {m} [[instance.clients]] entries")));
        }
        let built: Vec<Built> = self.clients.iter().enumerate().map(|(i, c)| c.build(&format!("{field}.clients[{i}]"), du, dv)).collect::<Result<_>>()?;
        let sigma_u = noise_level(field, "u", self.sigma_u, &built.iter().map(|b| b.client.noise_u.as_ref()).collect::<Vec<_>>())?;
        let sigma_v = noise_level(field, "v", self.sigma_v, &built.iter().map(|b| b.client.noise_v.as_ref()).collect::<Vec<_>>())?;
        let (u0, v0) = built.iter().map(|b| (b.u0.clone(), b.v0.clone())).unzip();
        Ok(Instance { du, dv, clients: built.into_iter().map(|b| b.client).collect(), sigma_u, sigma_v, u0, v0 })
    }

    /// The explicit form of `inst`: every number as the instance holds it, so that
    /// [`ExplicitInstance::build`] gives back the same instance bit for bit. `u_i^0` is written
    /// when some entry is not `+0`; the isotropic levels when no client has a covariance.
    pub fn of(inst: &Instance) -> Self {
        let list = |x: &DVector<f64>| -> Vec<f64> { x.iter().copied().collect() };
        let clients = inst
            .clients
            .iter()
            .zip(inst.u0.iter().zip(&inst.v0))
            .map(|(c, (u0, v0))| ExplicitClient {
                a: rows(&c.a),
                b: rows(&c.b),
                d: rows(&c.d),
                lin_u: list(&c.lin_u),
                lin_v: list(&c.lin_v),
                u0: u0.iter().any(|x| x.to_bits() != 0).then(|| list(u0)),
                v0: list(v0),
                noise_u_cov: c.noise_u.as_ref().map(|n| rows(&n.matrix)),
                noise_v_cov: c.noise_v.as_ref().map(|n| rows(&n.matrix)),
            })
            .collect();
        Self {
            sigma_u: inst.clients.iter().all(|c| c.noise_u.is_none()).then_some(inst.sigma_u),
            sigma_v: inst.clients.iter().all(|c| c.noise_v.is_none()).then_some(inst.sigma_v),
            clients,
        }
    }
}
