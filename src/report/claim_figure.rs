//! The figure of a bound over rounds, the same for every family: per scenario, the observed
//! metric against the bound at every checkpoint of the evaluation, log scale.

use crate::checker::ClaimResult;
use crate::verdict::{ConstantsSource, VerdictKind};

use super::panels::{log_range, Axis, Figure, Layout, Panel, Series, BLUE, ORANGE};

/// What a bound figure shows: the claim, its title, the metric's axis label and the subtitle
/// (what the blue and orange curves are).
pub struct BoundFigure<'a> {
    /// Claim id.
    pub claim: &'a str,
    /// Its title.
    pub title: &'a str,
    /// The metric, as the y axis names it.
    pub metric: &'a str,
    /// The subtitle.
    pub subtitle: &'a str,
}

impl BoundFigure<'_> {
    /// One panel per run `(scenario, results)` with an applicable evaluation of the claim: the
    /// observed metric (blue) against the bound (orange) at each checkpoint where both are positive,
    /// from the empirical evaluation where there is one, else the claim as stated; captioned with
    /// the scenario and that evaluation's verdict.
    pub fn figure(&self, runs: &[(&str, &[ClaimResult])]) -> Figure {
        let panel = |(scenario, results): &(&str, &[ClaimResult])| {
            let of = |c| results.iter().find(|r| r.claim == self.claim && r.constants == c);
            let stated = of(ConstantsSource::Exact)?;
            let e = of(ConstantsSource::Empirical).map_or(&stated.evaluation, |e| &e.evaluation);
            if e.verdict == VerdictKind::NotApplicable || e.series.is_empty() {
                return None;
            }
            let pts: Vec<(f64, f64, f64)> =
                e.series.iter().filter_map(|p| Some((p.rounds as f64, p.estimate.mean, p.bound?))).filter(|p| p.1 > 0.0 && p.2 > 0.0).collect();
            let x_max = pts.iter().map(|p| p.0).fold(1.0, f64::max);
            Some(Panel {
                caption: Some(format!("{scenario} ({})", e.verdict)),
                x: Axis::linear((0.0, x_max), "round"),
                y: Axis::log(log_range(pts.iter().flat_map(|p| [p.1, p.2])), self.metric),
                series: vec![
                    Series::line("observed", BLUE, pts.iter().map(|p| (p.0, p.1)).collect()),
                    Series::line("bound", ORANGE, pts.iter().map(|p| (p.0, p.2)).collect()),
                ],
                legend: true,
            })
        };
        Figure {
            title: format!("{}: {}", self.claim, self.title),
            subtitle: self.subtitle.into(),
            layout: Layout::grid(60),
            panels: runs.iter().filter_map(panel).map(Some).collect(),
            empty_note: Some("not applicable on every scenario (see the JSON for the failing conditions)".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Estimator;
    use crate::verdict::evaluate_inequality;

    /// `D^t` against the bound `2^-t` over 20 rounds.
    fn result(constants: ConstantsSource, scale: f64) -> ClaimResult {
        let sides = |t: usize| Some(vec![(scale * 0.5f64.powi(t as i32), 0.5f64.powi(t as i32))]);
        let evaluation = evaluate_inequality(Vec::new(), 20, &sides, Estimator::Exact, 0.99, 1.0);
        ClaimResult { claim: "HALF", reading: "primary", constants, label: None, evaluation, expected: None }
    }

    #[test]
    fn a_panel_per_applicable_run_from_the_empirical_evaluation_where_there_is_one() {
        let both = [result(ConstantsSource::Exact, 2.0), result(ConstantsSource::Empirical, 0.25)];
        let stated = [result(ConstantsSource::Exact, 2.0)];
        let spec = BoundFigure { claim: "HALF", title: "halving", metric: "D^t", subtitle: "observed vs bound" };
        let fig = spec.figure(&[("a", &both), ("b", &stated), ("c", &[])]);
        assert_eq!(fig.title, "HALF: halving");
        let captions: Vec<String> = fig.panels.iter().flatten().filter_map(|p| p.caption.clone()).collect();
        // Negative control: the stated evaluation alone (scenario b) is violated, the empirical one holds.
        assert_eq!(captions, ["a (holds)", "b (violated)"]);
        let first = fig.panels[0].as_ref().unwrap();
        assert!(first.series.iter().all(|s| !s.points.is_empty()));
        assert!(first.series[0].points.iter().zip(&first.series[1].points).all(|(o, b)| o.1 < b.1), "observed below the bound");
    }
}
