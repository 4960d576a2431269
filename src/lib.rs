//! # fedbounds
//!
//! Checks the convergence theorems of federated-learning papers against exact, seeded numerics.
//!
//! Data flows one way through the crate:
//!
//! ```text
//! scenario (theorems/*.toml) -> instance + exact constants (problem)
//!        -> seeded runs (algorithm, rng) -> estimates (estimate)
//!        -> verdict per claim (claims, verdict) -> report (report)
//! ```
//!
//! Every bound function cites the paper line it encodes; every constant is computed from the
//! instance by the paper's own definition (see [`problem::ProblemConstants`]).

pub mod algorithm;
pub mod card;
pub mod check;
pub mod claims;
pub mod error;
pub mod estimate;
pub mod experiments;
pub mod prec;
pub mod problem;
pub mod report;
pub mod search;
pub mod rng;
pub mod verdict;

pub use error::{Error, Result};
