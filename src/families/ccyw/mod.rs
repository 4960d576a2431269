//! Chen, Cao, Yuan, Wen: FedAvg-P and Scaffold-P for partial personalization
//! (`../shared/papers/chen-cao-yuan-wen-*`; `000` = the md.txt line numbers).
//!
//! The family's problem model is the partial-personalization quadratic ([`problem`]); its
//! algorithms are FedAvg-P and Scaffold-P ([`algorithm`]); its claims are Theorems 3.7, 3.11, 4.5,
//! their corollaries and special cases, and the lemmas their proofs chain ([`claims`]).

pub mod algorithm;
pub mod bench;
pub mod card;
pub mod card_claims;
pub mod check;
pub mod claims;
pub mod exact;
pub mod experiments;
pub mod family;
pub mod formulas;
pub mod lemma_estimates;
pub mod monte_carlo;
pub mod prec;
pub mod problem;
pub mod report;
pub mod resolution;
pub mod search;
pub use family::{Ccyw, FAMILY, FAMILY_ID};
