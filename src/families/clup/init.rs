//! How a scenario's runs start: `init = "zero"` (the default), `init = "locals-at-solution"`, or
//! the initial models given, `init = { global = [...], locals = [[...], ...] }`: Algorithm 1's
//! and Algorithm 2's inputs `w_1^(g)` and `w_{0,K}^(i)` (003:L904, L1172), each zero when omitted.

use nalgebra::DVector;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the run starts.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Init {
    /// `w_1^(g) = 0`, `w_{0,K}^(i) = 0`.
    #[default]
    Zero,
    /// `w_{0,K}^(i) = w~^(i)` while `w_1^(g) = 0`: the local models already at their solution,
    /// the global model not.
    LocalsAtSolution,
    /// The initial models given.
    Given(GivenInit),
}

/// Initial models given by their numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GivenInit {
    /// `w_1^(g)`, length `d`; zero when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global: Option<Vec<f64>>,
    /// `w_{0,K}^(i)`, `m` vectors of length `d`; zero when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locals: Option<Vec<Vec<f64>>>,
}

/// The two named starts, as a card writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Named {
    Zero,
    LocalsAtSolution,
}

impl Serialize for Init {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::Zero => Named::Zero.serialize(serializer),
            Self::LocalsAtSolution => Named::LocalsAtSolution.serialize(serializer),
            Self::Given(g) => g.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Init {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = toml::Value::deserialize(deserializer)?;
        if value.is_table() {
            return GivenInit::deserialize(value).map(Self::Given).map_err(|e| D::Error::custom(format!("init: {}", e.message())));
        }
        match Named::deserialize(value)
            .map_err(|e| D::Error::custom(format!("init: {} (or a table {{ global = [...], locals = [[...], ...] }})", e.message())))?
        {
            Named::Zero => Ok(Self::Zero),
            Named::LocalsAtSolution => Ok(Self::LocalsAtSolution),
        }
    }
}

impl Init {
    /// Checks given initial models against `m` clients in dimension `d`: the global model of
    /// length `d`, `m` local models of length `d`, every entry finite.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `field.global` or `field.locals[i]`.
    pub fn check(&self, field: &str, m: usize, d: usize) -> Result<()> {
        let Self::Given(g) = self else { return Ok(()) };
        if let Some(w) = &g.global {
            crate::explicit::vector(&format!("{field}.global"), w, d, "d")?;
        }
        if let Some(locals) = &g.locals {
            if locals.len() != m {
                return Err(Error::field(format!("{field}.locals"), format!("{} vectors", locals.len()), format!("m = {m} vectors, one per client")));
            }
            for (i, w) in locals.iter().enumerate() {
                crate::explicit::vector(&format!("{field}.locals[{i}]"), w, d, "d")?;
            }
        }
        Ok(())
    }
}

impl GivenInit {
    /// The initial state `(w_1^(g), w_{0,K}^(1), ..., w_{0,K}^(m))` (checked by [`Init::check`]).
    pub fn state(&self, m: usize, d: usize) -> DVector<f64> {
        let mut z = DVector::zeros((m + 1) * d);
        if let Some(w) = &self.global {
            z.rows_mut(0, d).copy_from_slice(w);
        }
        for (i, w) in self.locals.iter().flatten().enumerate() {
            z.rows_mut((i + 1) * d, d).copy_from_slice(w);
        }
        z
    }
}
