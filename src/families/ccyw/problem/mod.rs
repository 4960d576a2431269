//! Partial-personalization quadratic instances and their exact constants.
//!
//! Client `i` holds
//!
//! ```text
//! f_i(u, v_i) = 1/2 [u; v_i]^T H_i [u; v_i] - g_i^T [u; v_i],   H_i = [[A_i, B_i], [B_i^T, C_i]]
//! ```
//!
//! and the stochastic gradient adds `N(0, S_u)` to the u-block and `N(0, S_v)` to the v-block,
//! independently across clients and steps (Assumption 2.2 of Chen, Cao, Yuan, Wen, 000:L75-81).

mod constants;
mod generator;
mod instance;

pub use constants::{BgdConstant, GradientSummary, ProblemConstants};
pub use generator::{Coupling, InstanceSpec};
pub use instance::{ClientQuadratic, ExplicitClient, ExplicitInstance, Layout, QuadraticInstance};
