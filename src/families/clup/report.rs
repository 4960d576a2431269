//! FedCLUP's reports: one JSON per claim, the scenarios' constants and sweeps, its section of
//! `SUMMARY.md`, and the PNG figures (Theorem 1's curves, Corollary 2's rounds, the total error
//! over rounds per lambda, the paper's Figures 1 and 3 mirrored on linear regression).

use std::fmt::Write as _;
use std::path::PathBuf;

use plotters::prelude::*;
use serde::Serialize;

use crate::claim::{fmt_num, BoundClaim};
use crate::error::Result;
use crate::family::ReportFile;
use crate::outcome::ClaimJson;
use crate::report::figure::{draw_err, draw_header, draw_legend, encode_png, ensure_font};
use crate::report::{reproduce_command, to_json, ReportMeta};
use crate::verdict::{Evaluation, VerdictKind};

use super::check::ScenarioRun;
use super::claims::ALL;

#[derive(Serialize)]
struct Entry<'a> {
    scenario: &'a str,
    description: &'a str,
    scenario_hash: &'a str,
    reproduce: String,
    constants: &'a [super::model::Constants],
    params: super::algorithm::Params,
    expected: Option<VerdictKind>,
    points: &'a [String],
    evaluation: &'a Evaluation,
}

/// The report files and the `SUMMARY.md` section.
///
/// # Errors
/// When a figure cannot be drawn.
pub fn report_files(runs: &[ScenarioRun], meta: &ReportMeta, plots: bool) -> Result<(Vec<ReportFile>, String)> {
    let mut files = Vec::new();
    for claim in &ALL {
        let entries: Vec<Entry> = runs
            .iter()
            .filter_map(|run| {
                let c = run.results.iter().find(|c| c.claim == claim.id)?;
                let points = run.points.iter().find(|p| p.0 == claim.id).map_or(&[][..], |p| &p.1);
                Some(Entry {
                    scenario: &run.scenario,
                    description: &run.description,
                    scenario_hash: &run.scenario_hash,
                    reproduce: reproduce_command(claim.id, &run.scenario),
                    constants: &run.constants,
                    params: run.params,
                    expected: c.expected,
                    points,
                    evaluation: &c.evaluation,
                })
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        let reading = claim.reading();
        let report = ClaimJson { meta, claim: claim.id, title: claim.title, source: claim.source, reading: &reading, metric: claim.metric, scenarios: entries };
        files.push(report.file()?);
    }
    let runs_json = serde_json::json!({
        "meta": meta,
        "scenarios": runs.iter().map(|r| serde_json::json!({
            "scenario": r.scenario, "constants": r.constants, "params": r.params,
            "local_train": r.local_train, "global_train": r.global_train, "stat_curve": r.stat_curve,
            "mean_of_locals_gap": r.mean_of_locals_gap, "sigma2": r.sigma2, "alg2_ball": r.alg2_ball,
            "sweep": r.sweep, "k_study": r.k_study, "train_levels": r.train_levels,
        })).collect::<Vec<_>>(),
    });
    files.push(ReportFile { path: PathBuf::from("clup").join("scenarios.json"), bytes: to_json(&runs_json)?.into_bytes() });
    if plots {
        let stat: Vec<&ScenarioRun> = runs.iter().filter(|r| !r.stat_curve.is_empty()).collect();
        if !stat.is_empty() {
            files.push(ReportFile { path: PathBuf::from("figures").join("CLUP-T1.png"), bytes: plot_statistical(&stat)? });
        }
        let swept: Vec<&ScenarioRun> = runs.iter().filter(|r| !r.sweep.is_empty()).collect();
        if !swept.is_empty() {
            files.push(ReportFile { path: PathBuf::from("figures").join("CLUP-C2-ROUNDS.png"), bytes: plot_rounds(&swept)? });
            files.push(ReportFile { path: PathBuf::from("figures").join("CLUP-C3.png"), bytes: plot_total(&swept)? });
        }
        let rate: Vec<&ScenarioRun> = runs.iter().filter(|r| r.results.iter().any(|c| c.claim == "CLUP-T2")).collect();
        if !rate.is_empty() {
            files.push(ReportFile { path: PathBuf::from("figures").join("CLUP-T2.png"), bytes: plot_rate(&rate)? });
        }
    }
    Ok((files, summary_markdown(runs)))
}

/// Best lambda per target total error: the lambda whose run stays below `target` from the
/// earliest round on (within the horizon), and that round.
pub fn best_lambda(run: &ScenarioRun, target: f64) -> Option<(f64, usize)> {
    run.total_error
        .iter()
        .filter_map(|(l, e)| {
            let last_above = e.iter().rposition(|v| *v > target);
            let t = match last_above {
                None => 1,
                Some(j) if j + 1 < e.len() => j + 2,
                Some(_) => return None,
            };
            Some((*l, t))
        })
        .min_by_key(|(_, t)| *t)
}

/// The family's section of `SUMMARY.md`: how the verdicts are computed, the scenarios' table,
/// Theorem 1's readings on each scenario with a statistical curve, Corollary 2's sweep and the
/// best lambda per target on each swept scenario.
pub fn summary_markdown(runs: &[ScenarioRun]) -> String {
    let mut s = String::new();
    write_method(&mut s);
    write_scenarios(&mut s, runs);
    for r in runs.iter().filter(|r| !r.stat_curve.is_empty()) {
        write_theorem1_readings(&mut s, r);
    }
    for r in runs.iter().filter(|r| !r.sweep.is_empty()) {
        write_corollary2_sweep(&mut s, r);
        write_best_lambdas(&mut s, r);
    }
    s
}

/// "How these verdicts are computed": the exact model and what is exact about it.
fn write_method(s: &mut String) {
    let _ = writeln!(s, "### How these verdicts are computed\n");
    let _ = writeln!(
        s,
        "Linear regression with squared loss: every feature has ||x||^2 = L (Assumption 1 exact), \
         ground truths on the sphere of radius R around their mean (P(R) exact), Gaussian labels \
         with rho^2 = s^2 L (Assumption 3 exact). mu (Assumption 2) and the empirical-Hessian L are \
         properties of a design draw: every draw is checked with its own mu, and a claim holds \
         only if it holds on every draw. Statistical errors are exact expectations over the label \
         noise given the design (the solutions are linear in the labels); Algorithm 1 is \
         deterministic given the data, Algorithm 2's moments over its batches are exact.\n"
    );
}

/// The scenarios' table: sizes, constants (`mu` per draw), parameters, the `K` study (conditions
/// (14) and (134)) and `max ||w_g - w_g(mean of locals)||`.
fn write_scenarios(s: &mut String, runs: &[ScenarioRun]) {
    let _ = writeln!(s, "### FedCLUP scenarios\n");
    let _ = writeln!(s, "| scenario | m | n | R | L (per sample) | L (empirical) | mu (draws) | lambda | gamma | eta | K | K(14) | K(134) | K attaining C2's rate | max ‖w_g − w_g(mean of locals)‖ |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for r in runs {
        let c = &r.constants[0];
        let mus: Vec<String> = r.constants.iter().map(|c| fmt_num(c.mu)).collect();
        let k = r.k_study.as_ref();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.m,
            r.n,
            fmt_num(c.r),
            fmt_num(c.l_sample),
            fmt_num(c.l_empirical),
            mus.join(", "),
            fmt_num(r.params.lambda),
            fmt_num(r.params.gamma),
            fmt_num(r.params.eta),
            r.params.k,
            k.and_then(|k| k.k_14).map(|v| v.to_string()).unwrap_or_else(|| "none".into()),
            k.map(|k| k.k_134.to_string()).unwrap_or_default(),
            k.and_then(|k| k.k_attains_c2_rate).map(|v| v.to_string()).unwrap_or_else(|| "none".into()),
            fmt_num(r.mean_of_locals_gap),
        );
    }
}

/// Theorem 1's readings on draw 0 of `r` at a few lambdas (003:L108-114, eq. 8): the exact
/// `max_i E||w~_i - w*_i||^2` against both branches of the bound, each as the proof gives it and as
/// printed (`rho^2/n^2` in branch 1, I-CLUP4; `4` in place of `16` in branch 2, I-CLUP5).
fn write_theorem1_readings(s: &mut String, r: &ScenarioRun) {
    let c = &r.constants[0];
    let st = super::bounds::Stat { mu: c.mu, l: c.l_sample, rho2: c.rho2, r: c.r, n: r.n as f64, m: r.m as f64 };
    let n2 = super::bounds::T1Reading { n_squared: true, ..super::bounds::T1_PROOF };
    let _ = writeln!(s, "\n### Theorem 1's readings on `{}` (draw 0)\n", r.scenario);
    let _ = writeln!(
        s,
        "| lambda | exact max_i E‖w~_i − w*_i‖² | branch 1 (proof, rho^2/n) | branch 1 (printed rho^2/n^2) | branch 2 (proof, 16) | branch 2 (printed 4) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for p in r.stat_curve.iter().filter(|p| [0.0, 1e-1, 1.0, 10.0, 1e3, 1e5].iter().any(|l| (p.lambda - l).abs() <= super::prec::GRID_MATCH * l.max(1.0))) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            fmt_num(p.lambda),
            fmt_num(p.error),
            fmt_num(p.first),
            fmt_num(super::bounds::t1_first(&st, p.lambda, n2)),
            fmt_num(p.second),
            fmt_num(super::bounds::t1_second(&st, p.lambda, true)),
        );
    }
}

/// Corollary 2's sweep on `r` (003:L187-192): per lambda, `K` of (134) (003:L1164), the rounds
/// measured and those implied by the rate, the rate's shape
/// `kappa (lambda+mu)/(lambda+L) log(1/eps)` and the gradient evaluations `K x rounds`.
fn write_corollary2_sweep(s: &mut String, r: &ScenarioRun) {
    let _ = writeln!(s, "\n### Corollary 2's sweep on `{}`\n", r.scenario);
    let _ = writeln!(
        s,
        "| lambda | K (134) | rounds measured | rounds implied by the rate | kappa (lambda+mu)/(lambda+L) log(1/eps) | gradient evaluations K x rounds |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for p in &r.sweep {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            fmt_num(p.lambda),
            p.k,
            fmt_num(p.rounds),
            fmt_num(p.predicted),
            fmt_num(p.shape),
            fmt_num(p.gradients)
        );
    }
}

/// The trade-off on `r`: LocalTrain's and GlobalTrain's total errors, then the best lambda per
/// target total error (see [`best_lambda`] and `targets`).
fn write_best_lambdas(s: &mut String, r: &ScenarioRun) {
    let (lt, gt) = r.train_levels;
    let _ = writeln!(s, "\nLocalTrain's total error {}, GlobalTrain's {} (draw 0's labels). Best lambda per target total error:\n", fmt_num(lt), fmt_num(gt));
    for target in targets(r) {
        match best_lambda(r, target) {
            Some((l, t)) => {
                let _ = writeln!(s, "- target {}: lambda {}, below it from round {t} on", fmt_num(target), fmt_num(l));
            }
            None => {
                let _ = writeln!(s, "- target {}: no lambda of the sweep reaches it in {} rounds", fmt_num(target), r.global_error.len());
            }
        }
    }
}

/// Target total errors for the trade-off: between the best plateau and 4x it.
fn targets(r: &ScenarioRun) -> Vec<f64> {
    let floor = r.total_error.iter().filter_map(|(_, e)| e.last().copied()).fold(f64::INFINITY, f64::min);
    if floor.is_finite() {
        vec![floor * 1.05, floor * 1.5, floor * 4.0]
    } else {
        Vec::new()
    }
}

const COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// One line of a panel.
struct Line {
    label: String,
    colour: RGBColor,
    points: Vec<(f64, f64)>,
    dashed: bool,
}

/// One panel.
struct Panel {
    caption: String,
    x_desc: &'static str,
    y_desc: &'static str,
    x_log: bool,
    lines: Vec<Line>,
}

const PANEL_W: u32 = 620;
const PANEL_H: u32 = 420;

fn draw(title: &str, subtitle: &str, panels: &[Panel]) -> Result<Vec<u8>> {
    ensure_font();
    let cols = panels.len().clamp(1, 3) as u32;
    let rows = (panels.len().max(1) as u32).div_ceil(cols);
    let (w, h) = (PANEL_W * cols, PANEL_H * rows + 56);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let body = draw_header(&root, title, subtitle)?;
        for (area, panel) in body.split_evenly((rows as usize, cols as usize)).iter().zip(panels) {
            let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite() && p.1 > 0.0 && (!panel.x_log || p.0 > 0.0);
            let all: Vec<(f64, f64)> = panel.lines.iter().flat_map(|l| l.points.iter().filter(finite).copied()).collect();
            let (x_lo, x_hi) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
            let (y_lo, y_hi) = all.iter().fold((f64::INFINITY, 0.0f64), |(a, b), p| (a.min(p.1), b.max(p.1)));
            let (x_lo, x_hi) = if x_lo < x_hi { (x_lo, x_hi) } else { (1.0, 10.0) };
            let (y_lo, y_hi) = if y_lo.is_finite() && y_hi > y_lo { (y_lo / 2.0, y_hi * 2.0) } else { (1e-6, 1.0) };
            macro_rules! fill {
                ($chart:expr) => {{
                    let mut chart = $chart;
                    chart
                        .configure_mesh()
                        .x_desc(panel.x_desc)
                        .y_desc(panel.y_desc)
                        .y_label_formatter(&|v| format!("{v:.0e}"))
                        .label_style(("sans-serif", 11))
                        .draw()
                        .map_err(draw_err)?;
                    for l in &panel.lines {
                        let pts: Vec<(f64, f64)> = l.points.iter().filter(finite).copied().collect();
                        let style = l.colour.stroke_width(2);
                        if l.dashed {
                            chart.draw_series(DashedLineSeries::new(pts, 6, 4, style)).map_err(draw_err)?.label(l.label.clone()).legend({
                                let c = l.colour;
                                move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                            });
                        } else {
                            chart.draw_series(LineSeries::new(pts, style)).map_err(draw_err)?.label(l.label.clone()).legend({
                                let c = l.colour;
                                move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                            });
                        }
                    }
                    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
                }};
            }
            let builder = |a| {
                let mut b = ChartBuilder::on(a);
                b.caption(panel.caption.clone(), ("sans-serif", 14)).margin(8).x_label_area_size(30).y_label_area_size(64);
                b
            };
            if panel.x_log {
                fill!(builder(area).build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale()).map_err(draw_err)?);
            } else {
                fill!(builder(area).build_cartesian_2d(x_lo..x_hi, (y_lo..y_hi).log_scale()).map_err(draw_err)?);
            }
        }
    }
    encode_png(&buf, w, h)
}

fn flat(x: &[f64], y: f64) -> Vec<(f64, f64)> {
    x.iter().map(|v| (*v, y)).collect()
}

/// Theorem 1: exact error against lambda, both branches, LocalTrain and GlobalTrain levels.
fn plot_statistical(runs: &[&ScenarioRun]) -> Result<Vec<u8>> {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            let pts: Vec<_> = r.stat_curve.iter().filter(|p| p.lambda > 0.0).collect();
            let xs: Vec<f64> = pts.iter().map(|p| p.lambda).collect();
            Panel {
                caption: format!("{} (R = {})", r.scenario, fmt_num(r.constants[0].r)),
                x_desc: "lambda",
                y_desc: "max_i E||w~_i - w*_i||^2",
                x_log: true,
                lines: vec![
                    Line { label: "exact".into(), colour: COLOURS[0], points: pts.iter().map(|p| (p.lambda, p.error)).collect(), dashed: false },
                    Line { label: "T1 branch 1".into(), colour: COLOURS[1], points: pts.iter().map(|p| (p.lambda, p.first)).collect(), dashed: false },
                    Line { label: "T1 branch 2".into(), colour: COLOURS[2], points: pts.iter().map(|p| (p.lambda, p.second)).collect(), dashed: false },
                    Line { label: "LocalTrain".into(), colour: COLOURS[3], points: flat(&xs, r.local_train), dashed: true },
                    Line { label: "GlobalTrain".into(), colour: COLOURS[4], points: flat(&xs, r.global_train), dashed: true },
                ],
            }
        })
        .collect();
    draw(
        "CLUP-T1: statistical error of the solution of (2) against lambda",
        "exact expectation over the label noise (draw 0) vs both branches of Theorem 1 (proof's reading; branch 1 +inf where g > 1/(8 L^2))",
        &panels,
    )
}

/// Corollary 2: measured rounds against lambda, with the curve it predicts.
fn plot_rounds(runs: &[&ScenarioRun]) -> Result<Vec<u8>> {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            // The O(.) shape scaled to the measured rounds at the smallest lambda.
            let scale = r.sweep.first().map(|p| p.rounds / p.shape).unwrap_or(1.0);
            Panel {
                caption: r.scenario.clone(),
                x_desc: "lambda",
                y_desc: "rounds to eps",
                x_log: true,
                lines: vec![
                    Line { label: "measured".into(), colour: COLOURS[0], points: r.sweep.iter().map(|p| (p.lambda, p.rounds)).collect(), dashed: false },
                    Line {
                        label: "implied by the printed rate".into(),
                        colour: COLOURS[1],
                        points: r.sweep.iter().map(|p| (p.lambda, p.predicted)).collect(),
                        dashed: false,
                    },
                    Line {
                        label: "kappa (l+mu)/(l+L) log(1/eps), scaled".into(),
                        colour: COLOURS[2],
                        points: r.sweep.iter().map(|p| (p.lambda, p.shape * scale)).collect(),
                        dashed: true,
                    },
                    Line {
                        label: "gradient evaluations / 100".into(),
                        colour: COLOURS[3],
                        points: r.sweep.iter().map(|p| (p.lambda, p.gradients / 100.0)).collect(),
                        dashed: true,
                    },
                ],
            }
        })
        .collect();
    draw(
        "CLUP-C2-ROUNDS: communication rounds against lambda",
        "Algorithm 1 at Corollary 2's eta, gamma and K of (134); the O(.) curve is scaled to the smallest lambda",
        &panels,
    )
}

/// Corollary 3: total error against rounds per lambda with LocalTrain and GlobalTrain.
fn plot_total(runs: &[&ScenarioRun]) -> Result<Vec<u8>> {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            let rounds = r.total_error.first().map(|(_, e)| e.len()).unwrap_or(1);
            let xs: Vec<f64> = (1..=rounds).map(|t| t as f64).collect();
            let mut lines: Vec<Line> = r
                .total_error
                .iter()
                .enumerate()
                .map(|(j, (l, e))| Line {
                    label: format!("lambda {}", fmt_num(*l)),
                    colour: COLOURS[j % 4],
                    points: e.iter().enumerate().map(|(t, v)| ((t + 1) as f64, *v)).collect(),
                    dashed: false,
                })
                .collect();
            lines.push(Line { label: "LocalTrain".into(), colour: COLOURS[6], points: flat(&xs, r.train_levels.0), dashed: true });
            lines.push(Line { label: "GlobalTrain".into(), colour: COLOURS[7], points: flat(&xs, r.train_levels.1), dashed: true });
            let best: Vec<String> =
                targets(r).iter().filter_map(|t| best_lambda(r, *t).map(|(l, n)| format!("{}: l={} ({n})", fmt_num(*t), fmt_num(l)))).collect();
            Panel {
                caption: format!("{}; best: {}", r.scenario, best.join("; ")),
                x_desc: "round",
                y_desc: "max_i ||w_tK^(i) - w*^(i)||^2",
                x_log: false,
                lines,
            }
        })
        .collect();
    draw(
        "CLUP-C3: total error against rounds for several lambda (Figure 3 mirrored)",
        "Algorithm 1 at Corollary 2's steps on draw 0's labels; caption: best lambda (rounds) per target total error",
        &panels,
    )
}

/// Theorem 2: the global error against r^(t-1) V_1 and the mean-of-locals server.
fn plot_rate(runs: &[&ScenarioRun]) -> Result<Vec<u8>> {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            let e = r.results.iter().find(|c| c.claim == "CLUP-T2").map(|c| &c.evaluation);
            let bound: Vec<(f64, f64)> = e.map(|e| e.series.iter().filter_map(|p| Some((p.rounds as f64, p.bound?))).collect()).unwrap_or_default();
            let verdict = e.map(|e| e.verdict.to_string()).unwrap_or_default();
            Panel {
                caption: format!("{} ({verdict})", r.scenario),
                x_desc: "round t",
                y_desc: "||w_t^g - w~^g||^2",
                x_log: false,
                lines: vec![
                    Line {
                        label: "Algorithm 1".into(),
                        colour: COLOURS[0],
                        points: r.global_error.iter().enumerate().map(|(t, v)| ((t + 1) as f64, *v)).collect(),
                        dashed: false,
                    },
                    Line { label: "r^(t-1) V_1".into(), colour: COLOURS[1], points: bound, dashed: false },
                    Line {
                        label: "mean of locals".into(),
                        colour: COLOURS[2],
                        points: r.mean_of_locals_error.iter().enumerate().map(|(t, v)| ((t + 1) as f64, *v)).collect(),
                        dashed: true,
                    },
                    Line {
                        label: "Alg. 2 E-error".into(),
                        colour: COLOURS[3],
                        points: r.alg2_error.iter().enumerate().map(|(t, v)| ((t + 1) as f64, *v)).collect(),
                        dashed: false,
                    },
                ],
            }
        })
        .collect();
    draw("CLUP-T2: linear convergence of Algorithm 1", "exact global error vs Theorem 2's r^(t-1) V_1; dashed: the server as the mean of the local models (gamma = 1/lambda); red: Algorithm 2 (exact expectation)", &panels)
}
