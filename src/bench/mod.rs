//! The `bench` command: fixed seeded workloads timed on this machine, printed as JSON so that two
//! versions can be compared side by side.
//!
//! Each measurement is the best (smallest) wall-clock time of a few repetitions, which is the
//! least disturbed by other processes; the load average before and after is recorded next to it,
//! because on a shared machine a time only means something with the load it was taken under.
//! Families contribute their own workloads ([`crate::family::Family::bench`]); the core adds the
//! time of each family's check on its default scenarios.

use serde::Serialize;

use crate::error::Result;
use crate::family::{CheckRequest, Silent};
use crate::registry::Registry;

pub mod measure;

pub use measure::{cores, load_average, time, BenchRequest, Machine, Measurement, Target, Timing};

/// The JSON the command prints.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Where the numbers were taken.
    pub machine: Machine,
    /// Worker threads of the parallel measurements.
    pub threads: usize,
    /// Every measurement, families in registry order.
    pub measurements: Vec<Measurement>,
}

/// Runs every family's workloads, then times each family's check on its default scenarios
/// (no figures, no search: `check --full` adds those).
///
/// # Errors
/// A family's failure, or a worker pool that cannot start.
pub fn run(registry: &Registry, request: &BenchRequest) -> Result<BenchReport> {
    let mut measurements = Vec::new();
    for family in registry.families() {
        measurements.extend(family.bench(request)?);
    }
    for family in registry.families() {
        let check = CheckRequest { threads: Some(request.threads), ..CheckRequest::default() };
        let (report, timing) = time(1, || family.check(&check, &Silent));
        report?;
        measurements.push(Measurement::new(
            family.id(),
            "check on the default scenarios (every claim, no figures, no search)",
            serde_json::json!({ "scenarios": family.scenario_names()?.len() }),
            request.threads,
            timing,
        ));
    }
    Ok(BenchReport { machine: Machine::current(), threads: request.threads, measurements })
}
