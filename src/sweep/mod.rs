//! Sweeps: many scenarios of one family made from a base scenario and axes over its keys,
//! checked in shares (one per job of a cluster's array), resumable, and merged into one report.
//!
//! - [`spec`]: the sweep file (grid or random design), and shares `--shard i/N`;
//! - [`plan`]: the sweep resolved against its card: the scenario at each index;
//! - [`record`]: what is kept of one scenario (constants, estimates, bounds, verdicts);
//! - [`run`]: checking a share, one record file per scenario, written then renamed;
//! - [`report`]: the JSON and CSV report, from the record files alone.
//!
//! Sweeps know no family: a scenario is the family's own scenario table with keys set, checked
//! through [`crate::family::Family::check`] with the card it came from, like any card scenario.

pub mod plan;
pub mod record;
pub mod report;
pub mod run;
pub mod spec;

pub use plan::{Plan, Point};
pub use record::{Record, Row, Status};
pub use report::{Totals, SCHEMA_VERSION};
pub use run::ShareSummary;
pub use spec::{Shard, Sweep};
