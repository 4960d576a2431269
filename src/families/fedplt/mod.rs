//! FedPLT of Dabaja and El-Azouzi: static partial (layer) training with masks and psi
//! compensation (`../shared/papers/dabaja-elazouzi-fedplt.txt`, cited as `001`). Not Fed-PLT,
//! the local-training method with privacy noise of the same name.
//!
//! The problem model is heterogeneous strongly convex quadratics with static masks
//! ([`problem`]); the algorithm is one pure round ([`algorithm`]) whose exact moments come from the
//! shared engine ([`runs`]); the claims are the recursion of Step 5, its constant- and
//! decaying-step consequences, the proof's induction step and the limit point ([`claims`]); the
//! speed-error trade-off of Case 1 is decided on the card's sweep of steps ([`tradeoff`]).

pub mod a6;
pub mod algorithm;
pub mod card;
pub mod check;
pub mod claims;
pub mod explicit;
pub mod family;
pub mod formulas;
pub mod prec;
pub mod problem;
pub mod psi_step;
pub mod report;
pub mod runs;
pub mod search;
pub mod tradeoff;

pub use family::{FedPlt, CARD, FAMILY, FAMILY_ID};
