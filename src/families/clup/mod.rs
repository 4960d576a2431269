//! FedCLUP of Yu, He, Sun, Xue, Li: the statistical accuracy-communication trade-off of
//! personalized federated learning (`../shared/papers/yu-he-sun-xue-li-fedclup.txt`, cited as
//! `003`).
//!
//! The problem model is linear regression with exact constants ([`model`]); the solutions of
//! Problem (2), LocalTrain and GlobalTrain are solved for exactly; Algorithms 1 and 2 are affine
//! rounds for the shared engine ([`algorithm`]); every bound and condition is a pure function of
//! named inputs ([`bounds`]) wired to its checks in [`claims`] and evaluated in [`check`].

pub mod algorithm;
pub mod ball_scaling;
pub mod bounds;
pub mod check;
pub mod claims;
pub mod explicit;
pub mod family;
pub mod figure3;
pub mod figures;
pub mod formulas;
pub mod init;
pub mod k134;
pub mod lemmas;
pub mod model;
pub mod prec;
pub mod report;
pub mod search;

pub use family::{Card, Clup, CARD, FAMILY, FAMILY_ID};
