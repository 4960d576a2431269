//! The numerical engine every family shares: exact moments of random affine rounds, designs,
//! observables, and Monte Carlo intervals.
//!
//! ```text
//! RandomAffineRound --probe--> RoundMaps --propagate (Design)--> Moments (mu, C) per round --Observable--> E||M z + o||^2
//! ```

pub mod affine;
pub mod column_order;
pub mod design;
pub mod interval;
pub(crate) mod lift;
pub mod moments;
pub mod monte_carlo;
pub mod observable;
pub mod reuse;
mod rows;
pub mod series;
mod structured;

pub use affine::{stationary_moments, stationary_system_bytes, stationary_system_work, ComponentTerm, Products, RandomAffineRound, RoundMaps};
pub use design::{Design, InclusionMoments, Outcome, MAX_ENUMERATED_OUTCOMES};
pub use interval::{running_average, student_t_interval, Estimator, Interval};
pub use moments::{Moments, RankOne};
pub use observable::Observable;
pub use reuse::RecentByBits;
pub use series::{affine_gaussian_moments, nan_max, nan_min, propagate_series, MomentSeries};
