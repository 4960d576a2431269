//! # fedbounds
//!
//! Checks the convergence theorems of federated-learning papers against exact, seeded numerics.
//!
//! Data flows one way through the crate:
//!
//! ```text
//! scenario (theorems/*.toml) -> instance + exact constants (family's problem model)
//!        -> seeded runs (family's algorithms, rng) -> estimates (engine)
//!        -> verdict per claim (claim, verdict) -> report (report)
//! ```
//!
//! The shared core ([`engine`], [`claim`], [`verdict`], [`report`], [`family`], [`rng`],
//! [`prec`], [`error`]) never names a paper; each paper is one folder under [`families`].
//!
//! Using fedbounds from a test of your own (check a claim, read and assert its verdict; query a
//! claim's conditions): see the examples of [`families`], the registry of the paper families.

pub mod bench;
pub mod budget;
pub mod card;
pub mod checker;
pub mod claim;
pub mod engine;
pub mod error;
pub mod explain;
pub mod explicit;
pub mod families;
pub mod family;
pub mod formula;
pub mod kinds;
pub mod machine_memory;
pub mod outcome;
pub mod paper_card;
pub mod prec;
pub mod progress_lines;
pub mod registry;
pub mod report;
pub mod rng;
pub mod search;
pub mod strict;
pub mod summary;
pub mod sweep;
pub mod text_file;
pub mod verdict;

pub use error::{Error, Result};
