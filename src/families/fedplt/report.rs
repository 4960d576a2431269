//! FedPLT's reports: one JSON per claim, its section of `SUMMARY.md`, and PNG figures (the
//! distance against both bounds, the measured alignment along the run, the residual error
//! against the step).

use std::fmt::Write as _;
use std::path::PathBuf;

use plotters::prelude::*;
use serde::Serialize;

use crate::checker::ClaimResult;
use crate::claim::{fmt_num, BoundClaim};
use crate::error::Result;
use crate::family::ReportFile;
use crate::outcome::ClaimJson;
use crate::report::figure::{draw_err, draw_header, draw_legend, encode_png, ensure_font};
use crate::report::{opt_num, reproduce_command, to_json, ReportMeta};
use crate::verdict::{ConstantsSource, Evaluation, VerdictKind};

use super::card_claims::Claim;
use super::check::ScenarioRun;
use super::claims::FedPltClaim;
use super::runs::ResidualPoint;

#[derive(Serialize)]
struct Entry<'a> {
    scenario: &'a str,
    description: &'a str,
    scenario_hash: &'a str,
    reproduce: String,
    z: f64,
    g2_empirical: f64,
    b_empirical: f64,
    rho_min: f64,
    alignment_failure: Option<(usize, usize, u64, f64)>,
    limit_gap: f64,
    expected: Option<VerdictKind>,
    expected_empirical: Option<VerdictKind>,
    evaluation: &'a Evaluation,
    empirical: Option<&'a Evaluation>,
}

/// The report files and the `SUMMARY.md` section: each claim's JSON (and figure), the
/// family-wide figures, the scenarios' JSON, and the summary with the speed-error trade-off.
///
/// # Errors
/// When a figure cannot be drawn.
pub fn report_files(
    claims: &[Claim],
    runs: &[ScenarioRun],
    sweep: Option<&(String, Vec<ResidualPoint>)>,
    meta: &ReportMeta,
    plots: bool,
) -> Result<(Vec<ReportFile>, String)> {
    let mut files = Vec::new();
    for claim in claims {
        files.extend(claim_files(claim, runs, meta, plots)?);
    }
    if plots {
        files.extend(family_figures(runs, sweep)?);
    }
    files.push(scenarios_file(runs, sweep, meta)?);
    let mut summary = summary_markdown(runs);
    if let Some((name, points)) = sweep {
        write_tradeoff(&mut summary, name, points);
    }
    Ok((files, summary))
}

/// One claim's files: its JSON (one entry per scenario the claim was checked on, none when it
/// was checked on no scenario) and, with `plots`, the figure of a built-in claim about the run.
fn claim_files(claim: &Claim, runs: &[ScenarioRun], meta: &ReportMeta, plots: bool) -> Result<Vec<ReportFile>> {
    let entries = claim_entries(claim, runs);
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let summary = claim.summary(String::new());
    let report = ClaimJson {
        meta,
        claim: claim.id(),
        title: summary.title,
        source: summary.source,
        reading: &summary.reading,
        metric: summary.metric,
        scenarios: entries,
    };
    let mut files = vec![report.file()?];
    if let (true, Claim::Builtin(builtin)) = (plots, claim) {
        if builtin.uses_run() {
            files.push(ReportFile { path: PathBuf::from("figures").join(format!("{}.png", claim.id())), bytes: plot_claim(*builtin, runs)? });
        }
    }
    Ok(files)
}

/// A claim's JSON entries: per scenario with an exact-constants result, the scenario, its
/// measured constants and alignment, and the exact (and empirical-constants) evaluations.
fn claim_entries<'a>(claim: &Claim, runs: &'a [ScenarioRun]) -> Vec<Entry<'a>> {
    runs.iter()
        .filter_map(|run| {
            let c = run.result(claim.id(), ConstantsSource::Exact)?;
            let e = run.result(claim.id(), ConstantsSource::Empirical);
            Some(Entry {
                scenario: &run.scenario,
                description: &run.description,
                scenario_hash: &run.scenario_hash,
                reproduce: reproduce_command(claim.id(), &run.scenario),
                z: run.z,
                g2_empirical: run.g2_empirical,
                b_empirical: run.b_empirical,
                rho_min: run.alignment.min,
                alignment_failure: run.alignment.first_failure,
                limit_gap: run.limit_gap,
                expected: c.expected,
                expected_empirical: e.and_then(|e| e.expected),
                evaluation: &c.evaluation,
                empirical: e.map(|e| &e.evaluation),
            })
        })
        .collect()
}

/// The figures over all scenarios: the alignment along each run, the decaying-step recursion on
/// the scenarios the recursion claim is about, and the residual error against the step.
fn family_figures(runs: &[ScenarioRun], sweep: Option<&(String, Vec<ResidualPoint>)>) -> Result<Vec<ReportFile>> {
    let mut files = Vec::new();
    if !runs.is_empty() {
        files.push(ReportFile { path: PathBuf::from("figures").join("FEDPLT-alignment.png"), bytes: plot_alignment(runs)? });
    }
    // The scenarios the recursion claim is about (the decaying schedule: no scope check fails).
    let in_scope = |c: &ClaimResult| !c.evaluation.checks.iter().any(|k| k.kind == crate::claim::ConditionKind::Scope && !k.holds);
    let decaying: Vec<&ScenarioRun> = runs.iter().filter(|r| r.result("FEDPLT-DECAY-RECURSION", ConstantsSource::Exact).is_some_and(in_scope)).collect();
    if !decaying.is_empty() {
        files.push(ReportFile { path: PathBuf::from("figures").join("FEDPLT-DECAY-RECURSION.png"), bytes: plot_recursion(&decaying)? });
    }
    if let Some((name, points)) = sweep {
        files.push(ReportFile { path: PathBuf::from("figures").join("FEDPLT-residual-vs-eta.png"), bytes: plot_residual(name, points)? });
    }
    Ok(files)
}

/// `fedplt/scenarios.json`: the residual sweep and, per scenario, its constants, schedule,
/// measured constants, alignment and limit point.
fn scenarios_file(runs: &[ScenarioRun], sweep: Option<&(String, Vec<ResidualPoint>)>, meta: &ReportMeta) -> Result<ReportFile> {
    let runs_json = serde_json::json!({
        "meta": meta,
        "residual_sweep": sweep.map(|(name, points)| serde_json::json!({"scenario": name, "points": points})),
        "scenarios": runs.iter().map(|r| serde_json::json!({
            "scenario": r.scenario, "constants": r.constants, "schedule": r.schedule, "tau": r.tau, "gradient": r.gradient,
            "z": r.z, "g2_empirical": r.g2_empirical, "b_empirical": r.b_empirical,
            "rho_min": r.alignment.min, "alignment_failure": r.alignment.first_failure, "sample_paths": r.alignment.replicates,
            "final_mean_gap": r.final_mean_gap, "limit_point": r.limit_point, "limit_gap": r.limit_gap,
        })).collect::<Vec<_>>(),
    });
    Ok(ReportFile { path: PathBuf::from("fedplt").join("scenarios.json"), bytes: to_json(&runs_json)?.into_bytes() })
}

/// The speed-error trade-off of Case 1 (001:L651-653) on the sweep's scenario: per `eta`, the
/// exact steady distance against the residual `eta B / z`, and their ratio.
fn write_tradeoff(summary: &mut String, name: &str, points: &[ResidualPoint]) {
    let _ = writeln!(summary, "\n### FedPLT speed-error trade-off (Case 1) on `{name}`\n");
    let _ = writeln!(summary, "| eta | exact steady D | residual eta B / z | ratio |");
    let _ = writeln!(summary, "|---|---|---|---|");
    for p in points {
        let ratio = p.steady_distance.map(|d| p.residual_bound / d);
        let _ = writeln!(summary, "| {} | {} | {} | {} |", fmt_num(p.eta), opt_num(p.steady_distance), fmt_num(p.residual_bound), opt_num(ratio));
    }
}

/// The `run` command's JSON for one scenario.
///
/// # Errors
/// When the JSON cannot be written.
pub fn run_json(run: &ScenarioRun) -> Result<String> {
    let verdicts: Vec<serde_json::Value> = run
        .results
        .iter()
        .filter(|c| c.constants == ConstantsSource::Exact)
        .map(|c| {
            let e = run.result(c.claim, ConstantsSource::Empirical);
            serde_json::json!({"claim": c.claim, "verdict": c.evaluation.verdict, "failed": c.evaluation.failed, "empirical_verdict": e.map(|e| e.evaluation.verdict), "empirical_slack": e.and_then(|e| e.evaluation.slack)})
        })
        .collect();
    to_json(&serde_json::json!({
        "meta": ReportMeta::new(format!("cargo run --release -- run <file> (scenario `{}`)", run.scenario)),
        "scenario": run.scenario,
        "scenario_hash": run.scenario_hash,
        "constants": run.constants,
        "schedule": run.schedule,
        "z": run.z,
        "g2_empirical": run.g2_empirical,
        "b_empirical": run.b_empirical,
        "alignment_min": run.alignment.min,
        "alignment_failure": run.alignment.first_failure,
        "limit_gap": run.limit_gap,
        "distance": run.distance,
        "verdicts": verdicts,
    }))
}

/// The family's section of `SUMMARY.md`.
pub fn summary_markdown(runs: &[ScenarioRun]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### How these verdicts are computed\n");
    let _ = writeln!(
        s,
        "Not Fed-PLT (local training with privacy noise). `D^t = E||W^t - W*||^2` is exact (moment \
         propagation). Assumption 5 (bounded global gradient on R^d) cannot hold for a strongly \
         convex F, so every claim that uses G is not applicable as stated; its `empirical` row \
         takes G^2 as the largest E||grad F_k||^2 at the local iterates the run visits. rho_ \
         (Assumption 6) is the smallest alignment ratio along seeded sample paths.\n"
    );
    let _ = writeln!(s, "\n### FedPLT scenarios\n");
    let _ = writeln!(
        s,
        "| scenario | K | d | tau | schedule | L | mu | sigma^2 | psi_ | psibar | uncovered | Gamma | rho_ | z | G^2 (run) | B (run) | ‖W_lim − W*‖ |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in runs {
        let c = &r.constants;
        let schedule = match r.schedule {
            super::runs::Schedule::Constant(eta) => format!("eta = {}", fmt_num(eta)),
            super::runs::Schedule::Decaying { z, beta, offset } => format!("{}/({} (t + {}))", fmt_num(beta), fmt_num(z), fmt_num(offset)),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            c.clients,
            c.dim,
            r.tau,
            schedule,
            fmt_num(c.l),
            fmt_num(c.mu),
            fmt_num(c.sigma2),
            fmt_num(c.compensation.psi_min),
            fmt_num(c.compensation.psi_max),
            c.compensation.uncovered,
            fmt_num(c.gamma_mask),
            fmt_num(r.alignment.min),
            fmt_num(r.z),
            fmt_num(r.g2_empirical),
            fmt_num(r.b_empirical),
            fmt_num(r.limit_gap),
        );
    }
    s
}

const PANEL_W: u32 = 620;
const PANEL_H: u32 = 400;
/// Columns, rows and pixel size of a figure of `panels` panels, three to a row under a 56-pixel
/// header.
fn grid(panels: usize) -> (u32, u32, u32, u32) {
    let cols = panels.clamp(1, 3) as u32;
    let rows = (panels.max(1) as u32).div_ceil(cols);
    (cols, rows, PANEL_W * cols, PANEL_H * rows + 56)
}

const BLUE: RGBColor = RGBColor(31, 119, 180);
const ORANGE: RGBColor = RGBColor(255, 127, 14);

/// Per scenario: `D^t` (exact) against the claim's bound (empirical G^2) over rounds, log y.
fn plot_claim(claim: FedPltClaim, runs: &[ScenarioRun]) -> Result<Vec<u8>> {
    ensure_font();
    let panels: Vec<(&ScenarioRun, &Evaluation)> = runs
        .iter()
        .filter_map(|r| {
            let c = r.result(claim.id(), ConstantsSource::Exact)?;
            let e = r.result(claim.id(), ConstantsSource::Empirical).map_or(&c.evaluation, |e| &e.evaluation);
            (e.verdict != VerdictKind::NotApplicable && !e.series.is_empty()).then_some((r, e))
        })
        .collect();
    let (cols, rows, w, h) = grid(panels.len());
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let body = draw_header(
            &root,
            &format!("{}: {}", claim.id(), claim.title()),
            "exact E||W^t - W*||^2 (blue) vs the bound with G^2 measured on the run (orange); log scale",
        )?;
        if panels.is_empty() {
            body.draw(&Text::new("not applicable on every scenario (see the JSON for the failing conditions)", (12, 20), ("sans-serif", 15).into_font()))
                .map_err(draw_err)?;
        }
        for (area, (run, e)) in body.split_evenly((rows as usize, cols as usize)).iter().zip(&panels) {
            let pts: Vec<(f64, f64, f64)> =
                e.series.iter().filter_map(|p| Some((p.rounds as f64, p.estimate.mean, p.bound?))).filter(|p| p.1 > 0.0 && p.2 > 0.0).collect();
            let (lo, hi) = pts.iter().fold((f64::INFINITY, 0.0f64), |(a, b), p| (a.min(p.1.min(p.2)), b.max(p.1.max(p.2))));
            let (lo, hi) = if lo.is_finite() && hi > 0.0 { (lo / 2.0, hi * 2.0) } else { (1e-6, 1.0) };
            let x_max = pts.iter().map(|p| p.0).fold(1.0, f64::max);
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{} ({})", run.scenario, e.verdict), ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..x_max, (lo..hi).log_scale())
                .map_err(draw_err)?;
            chart.configure_mesh().x_desc("round").y_desc("D^t").label_style(("sans-serif", 11)).draw().map_err(draw_err)?;
            chart
                .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.1)), BLUE.stroke_width(2)))
                .map_err(draw_err)?
                .label("observed")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLUE.stroke_width(2)));
            chart
                .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.2)), ORANGE.stroke_width(2)))
                .map_err(draw_err)?
                .label("bound")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], ORANGE.stroke_width(2)));
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

/// The smallest alignment ratio per round along the sample paths, per scenario; A6 needs it > 0.
fn plot_alignment(runs: &[ScenarioRun]) -> Result<Vec<u8>> {
    ensure_font();
    let (cols, rows, w, h) = grid(runs.len());
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let body = draw_header(
            &root,
            "FedPLT: measured alignment ratio rho_k along the run (Assumption 6)",
            "min over clients and sample paths of rho_k at every point a gradient is taken; A6 needs it > 0 (red line)",
        )?;
        for (area, run) in body.split_evenly((rows as usize, cols as usize)).iter().zip(runs) {
            let pts: Vec<(f64, f64)> = run.alignment.per_round_min.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(t, v)| (t as f64, *v)).collect();
            let lo = pts.iter().map(|p| p.1).fold(0.0, f64::min) - 0.1;
            let hi = pts.iter().map(|p| p.1).fold(1.0, f64::max) + 0.1;
            let x_max = (run.rounds as f64).max(1.0);
            let mut chart = ChartBuilder::on(area)
                .caption(format!("{} (rho_ = {})", run.scenario, fmt_num(run.alignment.min)), ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(50)
                .build_cartesian_2d(0.0..x_max, lo..hi)
                .map_err(draw_err)?;
            chart.configure_mesh().x_desc("round").y_desc("min rho_k").label_style(("sans-serif", 11)).draw().map_err(draw_err)?;
            chart.draw_series(LineSeries::new(vec![(0.0, 0.0), (x_max, 0.0)], RED.stroke_width(1))).map_err(draw_err)?;
            chart.draw_series(LineSeries::new(pts, BLUE.stroke_width(2))).map_err(draw_err)?;
        }
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

/// The speed-error trade-off: the exact steady state of `D^t` and the bound's residual `eta B / z`
/// against `eta`, log-log.
fn plot_residual(name: &str, points: &[ResidualPoint]) -> Result<Vec<u8>> {
    ensure_font();
    let (w, h) = (900u32, 560u32);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let body = draw_header(
            &root,
            &format!("FedPLT Case 1: residual error against the step ({name})"),
            "exact steady-state E||W - W*||^2 (blue) and the bound's residual eta B / z (orange); log-log",
        )?;
        let steady: Vec<(f64, f64)> = points.iter().filter_map(|p| Some((p.eta, p.steady_distance?))).filter(|p| p.1 > 0.0).collect();
        let bound: Vec<(f64, f64)> = points.iter().map(|p| (p.eta, p.residual_bound)).filter(|p| p.1 > 0.0 && p.1.is_finite()).collect();
        let ys: Vec<f64> = steady.iter().chain(&bound).map(|p| p.1).collect();
        let (lo, hi) = ys.iter().fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(*y), b.max(*y)));
        let (lo, hi) = if lo.is_finite() && hi > 0.0 { (lo / 2.0, hi * 2.0) } else { (1e-6, 1.0) };
        let (x_lo, x_hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(a, b), p| (a.min(p.eta), b.max(p.eta)));
        let (x_lo, x_hi) = if x_lo.is_finite() && x_hi > x_lo { (x_lo / 1.5, x_hi * 1.5) } else { (1e-3, 1.0) };
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(70)
            .build_cartesian_2d((x_lo..x_hi).log_scale(), (lo..hi).log_scale())
            .map_err(draw_err)?;
        chart.configure_mesh().x_desc("eta").y_desc("E||W - W*||^2 as t -> infinity").label_style(("sans-serif", 12)).draw().map_err(draw_err)?;
        chart
            .draw_series(LineSeries::new(steady.clone(), BLUE.stroke_width(2)))
            .map_err(draw_err)?
            .label("exact steady state")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLUE.stroke_width(2)));
        chart.draw_series(steady.iter().map(|p| Circle::new(*p, 4, BLUE.filled()))).map_err(draw_err)?;
        chart
            .draw_series(LineSeries::new(bound.clone(), ORANGE.stroke_width(2)))
            .map_err(draw_err)?
            .label("eta B / z")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], ORANGE.stroke_width(2)));
        chart.draw_series(bound.iter().map(|p| Circle::new(*p, 4, ORANGE.filled()))).map_err(draw_err)?;
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}

/// Case 2's recursion taken with equality, `(B/z^2) H_t / t`, against the claimed `C/(t+1)`, per
/// decaying scenario, log-log up to `t = 10^6`: the recursion decays like `log t / t` and crosses
/// the claim.
fn plot_recursion(runs: &[&ScenarioRun]) -> Result<Vec<u8>> {
    use super::claims::{equality_solution, RECURSION_HORIZON};
    ensure_font();
    let (cols, rows, w, h) = grid(runs.len());
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let body = draw_header(
            &root,
            "FEDPLT-DECAY-RECURSION: the proof's recursion (equality) against C/(t+1)",
            "(B/z^2) H_t / t (blue) and (D^0 + B/z^2)/(t+1) (orange), with G^2 and rho_ measured on the run; log-log",
        )?;
        for (area, run) in body.split_evenly((rows as usize, cols as usize)).iter().zip(runs) {
            let b_over_z2 = run.b_empirical / (run.z * run.z);
            let c = run.constants.d0 + b_over_z2;
            if !(b_over_z2.is_finite() && b_over_z2 > 0.0) {
                continue;
            }
            let eq = equality_solution(b_over_z2, RECURSION_HORIZON);
            let ts: Vec<usize> = crate::verdict::report_checkpoints(RECURSION_HORIZON);
            let recursion: Vec<(f64, f64)> = ts.iter().map(|&t| (t as f64, eq[t - 1])).collect();
            let claim: Vec<(f64, f64)> = ts.iter().map(|&t| (t as f64, c / (t as f64 + 1.0))).collect();
            let ys: Vec<f64> = recursion.iter().chain(&claim).map(|p| p.1).collect();
            let (lo, hi) = ys.iter().fold((f64::INFINITY, 0.0f64), |(a, b), y| (a.min(*y), b.max(*y)));
            let mut chart = ChartBuilder::on(area)
                .caption(run.scenario.clone(), ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d((1.0..RECURSION_HORIZON as f64).log_scale(), (lo / 2.0..hi * 2.0).log_scale())
                .map_err(draw_err)?;
            chart.configure_mesh().x_desc("t").y_desc("D^t").label_style(("sans-serif", 11)).draw().map_err(draw_err)?;
            chart
                .draw_series(LineSeries::new(recursion, BLUE.stroke_width(2)))
                .map_err(draw_err)?
                .label("recursion with equality")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLUE.stroke_width(2)));
            chart
                .draw_series(LineSeries::new(claim, ORANGE.stroke_width(2)))
                .map_err(draw_err)?
                .label("C/(t+1)")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], ORANGE.stroke_width(2)));
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        root.present().map_err(draw_err)?;
    }
    encode_png(&buf, w, h)
}
