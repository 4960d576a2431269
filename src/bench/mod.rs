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
pub mod scaling;

pub use measure::{cores, load_average, time, BenchRequest, Machine, Measurement, Target, Timing};
pub use scaling::{ScalingPoint, ScalingSeries};

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
        let (report, timing) = time(request.repeats, || family.check(&check, &Silent));
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

impl BenchReport {
    /// The scaling series of the measurements, in order.
    pub fn scaling(&self) -> Vec<ScalingSeries> {
        self.measurements.iter().filter_map(|m| m.scaling.clone()).collect()
    }

    /// Writes the scaling series to `dir` as `scaling.json` (machine, series with their points
    /// and fitted exponents) and `scaling.png` (one log-log panel per series).
    ///
    /// # Errors
    /// [`crate::Error`] of the figure or the files.
    pub fn write_scaling(&self, dir: &std::path::Path) -> Result<()> {
        let series = self.scaling();
        let io = |e: std::io::Error| crate::error::Error::Io { path: dir.display().to_string(), source: e };
        std::fs::create_dir_all(dir).map_err(io)?;
        let json = serde_json::json!({ "machine": self.machine, "series": series });
        let text = serde_json::to_string_pretty(&json).map_err(|e| crate::error::Error::serialization("scaling.json", e))?;
        // Both drawn before either is written, each written then renamed: never one without the other.
        let png = scaling::figure(&series).png()?;
        crate::report::write_atomic(&dir.join("scaling.json"), (text + "\n").as_bytes())?;
        crate::report::write_atomic(&dir.join("scaling.png"), &png)
    }
}
