//! DFedPGP (Liu, Shi, Li, Wu, Wang, Shen; paper 004): decentralized partial personalization with
//! push-sum over directed time-varying graphs.
//!
//! `topology` (graphs, push-sum weights, Assumption 1's window, `delta`, estimated `C`, `q`),
//! `problem` (the quadratics and their exact constants), `round` (Algorithm 1 as a random affine
//! round, exact and sampled trajectories), `claims` (Lemma 3, inequality (32), Corollary 1's
//! rate, Remark 2), `card` (scenario schema), `check` (scenario runs), `plot`, `family`.

pub mod card;
pub mod check;
pub mod claims;
pub mod family;
pub mod plot;
pub mod problem;
pub mod round;
pub mod topology;

pub use family::FAMILY;
