//! Scaling series: how a workload's time and peak memory grow with one of its sizes, measured
//! point by point and summarized by the exponent of a power law fitted on a log-log scale.
//!
//! Peak memory is the process's high-water mark of resident memory (`VmHWM` of
//! `/proc/self/status`), reset before each point by writing `5` to `/proc/self/clear_refs`
//! (Linux 4.0 and later), so each point reports its own peak (with what the process already
//! held). Where the system has neither, the memory is not reported.

use crate::error::Result;
use crate::report::panels::{colour, log_range, Axis, Figure, Layout, Panel, Series};

use super::measure::{load_average, time};
pub use super::measure::{ScalingPoint, ScalingSeries};

/// Resets the peak resident memory of this process; false where the system cannot.
pub fn reset_peak_memory() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The peak resident memory of this process in bytes (`VmHWM`), where the system reports it.
pub fn peak_memory_bytes() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The least-squares slope of `ln y` against `ln x` over the points with the larger half of the
/// `x` (at least two, where small sizes are dominated by fixed costs): the exponent `a` of
/// `y ~ x^a`. NaN with fewer than two points or a value that is not positive.
pub fn fit_exponent(points: &[(f64, f64)]) -> f64 {
    let mut sorted: Vec<(f64, f64)> = points.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let tail = &sorted[sorted.len() / 2..];
    if sorted.len() < 2 || tail.iter().any(|&(x, y)| !(x > 0.0 && y > 0.0)) {
        return f64::NAN;
    }
    let tail = if tail.len() < 2 { &sorted[sorted.len() - 2..] } else { tail };
    let logs: Vec<(f64, f64)> = tail.iter().map(|&(x, y)| (x.ln(), y.ln())).collect();
    let k = logs.len() as f64;
    let (mx, my) = (logs.iter().map(|p| p.0).sum::<f64>() / k, logs.iter().map(|p| p.1).sum::<f64>() / k);
    let sxy: f64 = logs.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = logs.iter().map(|&(x, _)| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// Measures `job(x)` at each size of `xs` (`repeats` times each, the best time kept) with its
/// peak memory, and fits the exponents.
///
/// # Errors
/// The first error of a job.
pub fn measure_series<T>(
    family: &'static str,
    name: impl Into<String>,
    axis: impl Into<String>,
    fixed: serde_json::Value,
    xs: &[usize],
    repeats: usize,
    mut job: impl FnMut(usize) -> Result<T>,
) -> Result<ScalingSeries> {
    let before = load_average();
    let mut points = Vec::with_capacity(xs.len());
    for &x in xs {
        let resettable = reset_peak_memory();
        let (out, timing) = time(repeats, || job(x));
        out?;
        let peak_bytes = if resettable { peak_memory_bytes() } else { None };
        points.push(ScalingPoint { x: x as f64, seconds: timing.best(), peak_bytes, per_second: None });
    }
    let time_exponent = fit_exponent(&points.iter().map(|p| (p.x, p.seconds)).collect::<Vec<_>>());
    let memory_exponent = memory_exponent(&points);
    Ok(ScalingSeries {
        family,
        name: name.into(),
        axis: axis.into(),
        fixed,
        points,
        time_exponent,
        memory_exponent,
        work_unit: None,
        load_average: [before, load_average()],
    })
}

impl ScalingSeries {
    /// The series with the work each point does, `work(x)` units of `unit`, read as a rate:
    /// `per_second = work(x) / seconds` at every point.
    pub fn with_work(mut self, unit: &str, work: impl Fn(f64) -> f64) -> Self {
        for p in &mut self.points {
            p.per_second = Some(work(p.x) / p.seconds);
        }
        self.work_unit = Some(unit.to_string());
        self
    }
}

/// A series' peak memory is said to grow with the work only where its largest peak is at least
/// this multiple of its smallest; below it the peaks are the process's own memory and noise.
const MEMORY_GROWTH_MIN: f64 = 1.25;

/// The exponent of the peak memory above the smallest point's (what the work itself holds);
/// none where the memory does not grow by [`MEMORY_GROWTH_MIN`].
fn memory_exponent(points: &[ScalingPoint]) -> Option<f64> {
    let peaks: Vec<f64> = points.iter().map(|p| p.peak_bytes).collect::<Option<_>>()?;
    let floor = peaks.iter().copied().fold(f64::INFINITY, f64::min);
    if peaks.iter().copied().fold(0.0, f64::max) < MEMORY_GROWTH_MIN * floor {
        return None;
    }
    let above: Vec<(f64, f64)> = points.iter().zip(&peaks).filter(|(_, &b)| b > floor).map(|(p, &b)| (p.x, b - floor)).collect();
    (above.len() >= 2).then(|| fit_exponent(&above))
}

/// The series as one log-log panel each: seconds and peak memory (MiB) against the size, the
/// fitted exponents in the caption.
pub fn figure(series: &[ScalingSeries]) -> Figure {
    let panels = series
        .iter()
        .map(|s| {
            let time: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.seconds)).collect();
            let memory: Vec<(f64, f64)> = s.points.iter().filter_map(|p| Some((p.x, p.peak_bytes? / (1024.0 * 1024.0)))).collect();
            let y = log_range(time.iter().chain(&memory).map(|p| p.1));
            let x = log_range(time.iter().map(|p| p.0));
            let memory_note = s.memory_exponent.map_or(String::new(), |a| format!(", memory ~ x^{a:.2}"));
            let rate = s.points.last().and_then(|p| Some(format!(" ({:.3e} {}/s at {})", p.per_second?, s.work_unit.as_deref()?, p.x)));
            let seconds = format!("seconds{}", rate.unwrap_or_default());
            let mut lines = vec![Series { markers: Some(3), ..Series::line(seconds, colour(0), time) }];
            if !memory.is_empty() {
                lines.push(Series { markers: Some(3), ..Series::dashed("peak memory (MiB)", colour(1), memory) });
            }
            Some(Panel {
                caption: Some(format!("{}: time ~ x^{:.2}{memory_note}", s.name, s.time_exponent)),
                x: Axis::log(x, s.axis.clone()),
                y: Axis::log(y, "seconds; MiB"),
                series: lines,
                legend: true,
            })
        })
        .collect();
    Figure {
        title: "How cost grows with the work".into(),
        subtitle: "best of the repetitions; exponents fitted on the larger half of each series (log-log least squares)".into(),
        layout: Layout::grid(70),
        panels,
        empty_note: Some("no scaling series was measured".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fitted_exponent_is_the_power_of_a_power_law() {
        let cubic: Vec<(f64, f64)> = [10.0, 30.0, 100.0, 300.0, 1000.0].iter().map(|&x: &f64| (x, 2e-6 * x.powi(3))).collect();
        assert!((fit_exponent(&cubic) - 3.0).abs() < 1e-9);
        // The small sizes, dominated by a fixed cost, do not bend the fit of the larger half.
        let with_floor: Vec<(f64, f64)> = cubic.iter().map(|&(x, y)| (x, if x < 50.0 { 1.0 } else { y })).collect();
        assert!((fit_exponent(&with_floor) - 3.0).abs() < 1e-9);
        // Negative control: a square law is told apart; a non-positive value gives NaN.
        let square: Vec<(f64, f64)> = cubic.iter().map(|&(x, _)| (x, x * x)).collect();
        assert!((fit_exponent(&square) - 2.0).abs() < 1e-9);
        assert!(fit_exponent(&[(1.0, 1.0), (2.0, 0.0)]).is_nan());
        assert!(fit_exponent(&[(1.0, 1.0)]).is_nan());
    }

    #[test]
    fn a_series_records_time_and_peak_memory_per_point() {
        let s = measure_series("core", "allocation", "MiB", serde_json::json!({}), &[8, 64], 1, |mib| {
            let v = vec![1u8; mib << 20];
            Ok(std::hint::black_box(v).iter().map(|&b| b as usize).sum::<usize>())
        })
        .unwrap();
        assert_eq!(s.points.len(), 2);
        if let (Some(a), Some(b)) = (s.points[0].peak_bytes, s.points[1].peak_bytes) {
            assert!(b - a > 40.0 * 1024.0 * 1024.0, "the larger allocation peaks higher: {a} vs {b}");
        }
        assert!(figure(&[s]).problems().is_empty());
    }

    #[test]
    fn a_series_with_work_reports_its_rate_per_point() {
        let s = measure_series("core", "sum", "n", serde_json::json!({}), &[1000, 4000], 1, |n| Ok(std::hint::black_box((0..n).sum::<usize>()))).unwrap();
        let json = serde_json::to_string(&s).unwrap();
        assert!(!json.contains("per_second") && !json.contains("work_unit"), "no rate without work: {json}");
        let s = s.with_work("additions", |x| 2.0 * x);
        for p in &s.points {
            assert_eq!(p.per_second, Some(2.0 * p.x / p.seconds));
        }
        // Negative control: the rate is per point, not the first point's copied.
        assert_ne!(s.points[0].per_second, s.points[1].per_second);
        let label = figure(std::slice::from_ref(&s)).panels[0].as_ref().unwrap().series[0].label.clone().unwrap();
        assert!(label.contains("additions/s at 4000"), "{label}");
    }
}
