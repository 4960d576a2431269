//! What a timed workload is: the request, the measurement with the load around it, targets, and
//! the machine. Families build their workloads from these; the `bench` command collects them.

use std::time::Instant;

use serde::Serialize;

/// What the command was asked for.
#[derive(Debug, Clone, Copy)]
pub struct BenchRequest {
    /// Worker threads of the parallel measurements (the machine's cores by default).
    pub threads: usize,
    /// Repetitions of each measurement (the best one is reported).
    pub repeats: usize,
    /// Whether families also measure their scaling series (longer: minutes).
    pub scaling: bool,
}

/// A performance target and whether the measurement meets it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// `at least` (a rate) or `at most` (a time).
    pub kind: &'static str,
    /// The target value in the measurement's unit.
    pub value: f64,
    /// Whether the measured value meets it.
    pub met: bool,
}

impl Target {
    /// A rate of at least `value`.
    pub fn at_least(value: f64, measured: f64) -> Self {
        Self { kind: "at least", value, met: measured >= value }
    }
    /// A time of at most `value`.
    pub fn at_most(value: f64, measured: f64) -> Self {
        Self { kind: "at most", value, met: measured <= value }
    }
}

/// One timed workload.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    /// The family whose code is measured (`core` for shared work).
    pub family: &'static str,
    /// What is measured.
    pub name: String,
    /// The workload's fixed parameters (sizes, seeds, rounds, replicates).
    pub workload: serde_json::Value,
    /// Worker threads used.
    pub threads: usize,
    /// Best wall-clock seconds over the repetitions.
    pub seconds: f64,
    /// All repetitions' seconds, in order.
    pub repetitions: Vec<f64>,
    /// Units of work done per run (e.g. client local steps), when the workload counts them.
    pub work: Option<u64>,
    /// The unit of `work` (e.g. `client local steps`).
    pub work_unit: Option<&'static str>,
    /// `work / seconds`.
    pub per_second: Option<f64>,
    /// Processor seconds of the process (every thread, user and system) in the repetition with
    /// the fewest, where the system reports them (`/proc/self/stat`, 10 ms ticks): on a shared
    /// machine the wall-clock time grows with the load, this much less.
    pub cpu_seconds: Option<f64>,
    /// `work / cpu_seconds`: the rate per processor second (per core used), less disturbed by
    /// other processes than `per_second`.
    pub per_cpu_second: Option<f64>,
    /// Whether the result is bit-for-bit the single-threaded one, where that is checked.
    pub identical_to_single_thread: Option<bool>,
    /// The target this workload is held to, if any.
    pub target: Option<Target>,
    /// 1-minute load average before the first and after the last repetition.
    pub load_average: [Option<f64>; 2],
    /// Peak resident memory of the run (bytes), where measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_bytes: Option<f64>,
    /// The scaling series this measurement summarizes (its largest point), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<ScalingSeries>,
}

impl Measurement {
    /// A measurement of `repetitions` wall-clock times (seconds) and the loads around them.
    pub fn new(family: &'static str, name: impl Into<String>, workload: serde_json::Value, threads: usize, timing: Timing) -> Self {
        Self {
            family,
            name: name.into(),
            workload,
            threads,
            seconds: timing.best(),
            repetitions: timing.seconds,
            work: None,
            work_unit: None,
            per_second: None,
            cpu_seconds: timing.cpu_seconds.iter().copied().flatten().reduce(f64::min),
            per_cpu_second: None,
            identical_to_single_thread: None,
            target: None,
            load_average: timing.load_average,
            peak_bytes: None,
            scaling: None,
        }
    }

    /// Records that each run did `work` units of `unit`.
    pub fn with_work(mut self, work: u64, unit: &'static str) -> Self {
        self.work = Some(work);
        self.work_unit = Some(unit);
        self.per_second = Some(work as f64 / self.seconds);
        self.per_cpu_second = self.cpu_seconds.filter(|&c| c > 0.0).map(|c| work as f64 / c);
        self
    }
}

/// Wall-clock times of repeated runs.
#[derive(Debug, Clone)]
pub struct Timing {
    /// Seconds of each run.
    pub seconds: Vec<f64>,
    /// 1-minute load average before and after.
    pub load_average: [Option<f64>; 2],
    /// Processor seconds of each run ([`cpu_seconds`]), where measured.
    pub cpu_seconds: Vec<Option<f64>>,
}

impl Timing {
    /// The smallest time.
    pub fn best(&self) -> f64 {
        self.seconds.iter().copied().fold(f64::INFINITY, f64::min)
    }
}

/// Runs `job` `repeats` times (at least once) and returns the last result with the times.
pub fn time<T>(repeats: usize, mut job: impl FnMut() -> T) -> (T, Timing) {
    let before = load_average();
    let mut seconds = Vec::with_capacity(repeats.max(1));
    let mut cpu = Vec::with_capacity(repeats.max(1));
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let (start, cpu_start) = (Instant::now(), cpu_seconds());
        let out = std::hint::black_box(job());
        seconds.push(start.elapsed().as_secs_f64());
        cpu.push(cpu_start.zip(cpu_seconds()).map(|(a, b)| b - a));
        last = Some(out);
    }
    let after = load_average();
    (last.expect("at least one run"), Timing { seconds, load_average: [before, after], cpu_seconds: cpu })
}

/// Processor seconds this process has used so far, every thread, user and system: fields 14
/// and 15 of `/proc/self/stat` in clock ticks of 1/100 s (Linux's `USER_HZ`), where the system
/// has them.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let (user, system): (f64, f64) = (fields.next()?.parse().ok()?, fields.next()?.parse().ok()?);
    Some((user + system) / 100.0)
}

/// The 1-minute load average (`/proc/loadavg`), where the system has one.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// The machine the numbers were taken on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// Cores available to this process.
    pub cores: usize,
    /// CPU model name, where the system reports it.
    pub cpu: Option<String>,
    /// Operating system and architecture.
    pub os: String,
    /// The crate's version.
    pub version: &'static str,
}

impl Machine {
    /// This machine.
    pub fn current() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().to_string()));
        Self { cores: cores(), cpu, os: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH), version: env!("CARGO_PKG_VERSION") }
    }
}

/// Cores available to this process (1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// One point of a series.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingPoint {
    /// The size varied.
    pub x: f64,
    /// Best wall-clock seconds over the repetitions.
    pub seconds: f64,
    /// Peak resident memory during the point (bytes), where measurable.
    pub peak_bytes: Option<f64>,
    /// Units of work done per second (the series' `work_unit`), where the series counts its work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_second: Option<f64>,
}

/// Time and peak memory against one size, the others fixed.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingSeries {
    /// The family whose code is measured.
    pub family: &'static str,
    /// What is measured.
    pub name: String,
    /// The size varied (e.g. `n (clients)`).
    pub axis: String,
    /// The sizes held fixed.
    pub fixed: serde_json::Value,
    /// The points, in increasing `x`.
    pub points: Vec<ScalingPoint>,
    /// The exponent `a` of `seconds ~ x^a` fitted on the larger half of the points (see
    /// [`super::scaling::fit_exponent`]).
    pub time_exponent: f64,
    /// The same for the peak memory above the smallest point's.
    pub memory_exponent: Option<f64>,
    /// What a point's `per_second` counts (e.g. `client local steps`), where it is counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_unit: Option<String>,
    /// 1-minute load average before the first and after the last point.
    pub load_average: [Option<f64>; 2],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processor_time_grows_with_work_done_and_not_past_the_wall_clock() {
        let Some(start) = cpu_seconds() else { return };
        let spin = Instant::now();
        let mut used = 0.0;
        while used < 0.05 && spin.elapsed().as_secs_f64() < 30.0 {
            used = std::hint::black_box(cpu_seconds().expect("read once already") - start);
        }
        let wall = spin.elapsed().as_secs_f64();
        assert!(used >= 0.05, "busy for {wall} s, {used} processor seconds");
        // The process's time counts every thread (other tests run beside this one), but no
        // process uses more processor time than the wall clock times the machine's cores (plus
        // a tick per core).
        let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
        assert!(used <= cores * (wall + 0.011), "{used} processor seconds in {wall} s on {cores} cores");
    }

    #[test]
    fn targets_say_whether_they_are_met() {
        assert!(Target::at_least(10.0, 12.0).met);
        assert!(!Target::at_least(10.0, 8.0).met);
        assert!(Target::at_most(1.0, 0.5).met);
        assert!(!Target::at_most(1.0, 1.5).met);
    }

    #[test]
    fn a_measurement_reports_the_best_repetition_and_its_rate() {
        let (out, timing) = time(3, || 7);
        assert_eq!(out, 7);
        assert_eq!(timing.seconds.len(), 3);
        let m = Measurement::new(
            "core",
            "x",
            serde_json::json!({}),
            1,
            Timing { seconds: vec![2.0, 0.5, 1.0], load_average: [None, None], cpu_seconds: vec![Some(1.0), None, Some(0.25)] },
        )
        .with_work(100, "steps");
        assert_eq!(m.seconds, 0.5);
        assert_eq!(m.per_second, Some(200.0));
        assert_eq!(m.cpu_seconds, Some(0.25));
        assert_eq!(m.per_cpu_second, Some(400.0));
    }
}
