//! The main job (`cargo run --release -- check`: every family, with figures and searches), run
//! once in this binary for the tests that read it: the snapshot of `reports/` and each family's
//! card reproduced.

use std::sync::OnceLock;

use fedbounds::family::{CheckRequest, FamilyReport, ReportFile, Silent};
use fedbounds::outcome::CheckOutcome;
use fedbounds::report::ReportMeta;

/// The main job's request, as the command line builds it.
pub fn request() -> CheckRequest {
    CheckRequest { full: true, plots: true, meta: ReportMeta::new("cargo run --release -- check"), ..Default::default() }
}

/// The main job's outcome.
pub fn outcome() -> &'static CheckOutcome {
    static OUTCOME: OnceLock<CheckOutcome> = OnceLock::new();
    OUTCOME.get_or_init(|| fedbounds::families::registry().check(&request(), &Silent).expect("the main job runs"))
}

/// Report files as `(path, bytes)`, sorted by path: what two runs are compared by.
pub fn sorted_bytes(files: Vec<ReportFile>) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = files.into_iter().map(|f| (f.path.display().to_string(), f.bytes)).collect();
    out.sort();
    out
}

/// One family's part of the main job.
pub fn family(id: &str) -> &'static FamilyReport {
    &outcome().families.iter().find(|f| f.id == id).unwrap_or_else(|| panic!("the main job checks {id}")).report
}
