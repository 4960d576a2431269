//! Step sizes and participation of the local-SGD algorithms (Table 1, 002:L66-77).

use serde::{Deserialize, Serialize};

use crate::error::{require_positive, Error, Result};

/// Step sizes and participation as given (unchecked), shared by FedAvg-P and Scaffold-P.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundConfig {
    /// Local steps `K >= 1`.
    pub k: usize,
    /// Clients sampled per round, `1 <= m <= n`.
    pub m: usize,
    /// Inner step for `u`, `gamma_u > 0`.
    pub gamma_u: f64,
    /// Inner step for `v`, `gamma_v > 0`.
    pub gamma_v: f64,
    /// Outer (server) step for `u`, `eta_u > 0`.
    pub eta_u: f64,
    /// Outer step for `v`, `eta_v > 0`.
    pub eta_v: f64,
}

/// Validated step sizes and participation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoundParams {
    /// Number of clients `n`.
    pub n: usize,
    /// Local steps `K`.
    pub k: usize,
    /// Clients sampled per round `m`.
    pub m: usize,
    /// `gamma_u`.
    pub gamma_u: f64,
    /// `gamma_v`.
    pub gamma_v: f64,
    /// `eta_u`.
    pub eta_u: f64,
    /// `eta_v`.
    pub eta_v: f64,
}

impl RoundParams {
    /// The effective step `gamma = gamma_u eta_u` (000:L50; the analysis also requires
    /// `gamma_u eta_u = gamma_v eta_v`, checked as a condition of every claim).
    pub fn gamma(&self) -> f64 {
        self.gamma_u * self.eta_u
    }
}

impl RoundConfig {
    /// Validates against the number of clients `n`.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the first field out of range.
    pub fn check(&self, n: usize) -> Result<RoundParams> {
        if self.k == 0 {
            return Err(Error::field("algorithm.k", "got 0", "an integer >= 1"));
        }
        if self.m == 0 || self.m > n {
            return Err(Error::field("algorithm.m", format!("got {}", self.m), format!("an integer with 1 <= m <= n = {n}")));
        }
        require_positive("algorithm.gamma_u", self.gamma_u)?;
        require_positive("algorithm.gamma_v", self.gamma_v)?;
        require_positive("algorithm.eta_u", self.eta_u)?;
        require_positive("algorithm.eta_v", self.eta_v)?;
        Ok(RoundParams { n, k: self.k, m: self.m, gamma_u: self.gamma_u, gamma_v: self.gamma_v, eta_u: self.eta_u, eta_v: self.eta_v })
    }
}
