//! FedCLUP's reports: one JSON per claim, the scenarios' constants and sweeps, its section of
//! `SUMMARY.md`, and the PNG figures (Theorem 1's curves, Corollary 2's rounds, the total error
//! over rounds per lambda, the paper's Figures 1 and 3 mirrored on linear regression).

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::claim::{fmt_num, BoundClaim};
use crate::error::Result;
use crate::family::ReportFile;
use crate::outcome::ClaimJson;
use crate::report::panels::{colour, log_range, Axis, Figure, Layout, Panel, Series};
use crate::report::{reproduce_command, to_json, ReportMeta};
use crate::verdict::{Evaluation, VerdictKind};

use super::ball_scaling::{BallAxis, BallSweep};
use super::check::ScenarioRun;
use super::claims::ALL;
use super::figure3::Method;

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
            files.push(plot_statistical(&stat).file("CLUP-T1")?);
        }
        let swept: Vec<&ScenarioRun> = runs.iter().filter(|r| !r.sweep.is_empty()).collect();
        if !swept.is_empty() {
            files.push(plot_rounds(&swept).file("CLUP-C2-ROUNDS")?);
            files.push(plot_total(&swept).file("CLUP-C3")?);
        }
        let k_swept: Vec<&ScenarioRun> = runs.iter().filter(|r| !r.k_sweep.is_empty()).collect();
        if !k_swept.is_empty() {
            files.push(plot_local_steps(&k_swept).file("CLUP-FIG2-K")?);
        }
        for (axis, id) in [(BallAxis::Clients, "CLUP-T3-BALL-M-SLOPE"), (BallAxis::Batch, "CLUP-T3-BALL-B-SLOPE")] {
            let swept: Vec<(&ScenarioRun, &BallSweep)> =
                runs.iter().flat_map(|r| r.ball_sweeps.iter().filter(|sw| sw.axis == axis).map(move |sw| (r, sw))).collect();
            if !swept.is_empty() {
                files.push(plot_ball_slope(id, &swept).file(id)?);
            }
        }
        let studied: Vec<&ScenarioRun> = runs.iter().filter(|r| r.figure3.is_some()).collect();
        if !studied.is_empty() {
            files.push(plot_figure3(&studied).file("CLUP-FIG3-LAMBDA")?);
        }
        let rate: Vec<&ScenarioRun> = runs.iter().filter(|r| r.results.iter().any(|c| c.claim == "CLUP-T2")).collect();
        if !rate.is_empty() {
            files.push(plot_rate(&rate).file("CLUP-T2")?);
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

/// A panel of `series` on a logarithmic y axis, over the range of their drawable points (`x`
/// logarithmic too when `x_log`); the legend under it.
fn panel(caption: String, (x_desc, y_desc): (&str, &str), x_log: bool, series: Vec<Series>) -> Panel {
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite() && p.1 > 0.0 && (!x_log || p.0 > 0.0);
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.iter().filter(finite).copied()).collect();
    let (x_lo, x_hi) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let x = if x_lo < x_hi { (x_lo, x_hi) } else { (1.0, 10.0) };
    let x = if x_log { Axis::log(x, x_desc) } else { Axis::linear(x, x_desc) };
    Panel { caption: Some(caption), x, y: Axis::log(log_range(all.iter().map(|p| p.1)), y_desc), series, legend: true }
}

/// The family's figures: panels of 620 x 420 pixels, three to a row.
fn figure(title: &str, subtitle: &str, panels: Vec<Panel>) -> Figure {
    let layout = Layout { cell: (620, 420), label_areas: (30, 64), fonts: (14, 11), ..Layout::grid(64) };
    Figure { title: title.into(), subtitle: subtitle.into(), layout, panels: panels.into_iter().map(Some).collect(), empty_note: None }
}

fn flat(x: &[f64], y: f64) -> Vec<(f64, f64)> {
    x.iter().map(|v| (*v, y)).collect()
}

/// `(t, v_t)`, `t = 1, 2, ...`: a per-round series against its round.
fn by_round(v: &[f64]) -> Vec<(f64, f64)> {
    v.iter().enumerate().map(|(t, v)| ((t + 1) as f64, *v)).collect()
}

/// Theorem 1: exact error against lambda, both branches, LocalTrain and GlobalTrain levels.
fn plot_statistical(runs: &[&ScenarioRun]) -> Figure {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            let pts: Vec<_> = r.stat_curve.iter().filter(|p| p.lambda > 0.0).collect();
            let xs: Vec<f64> = pts.iter().map(|p| p.lambda).collect();
            let series = vec![
                Series::line("exact", colour(0), pts.iter().map(|p| (p.lambda, p.error)).collect()),
                Series::line("T1 branch 1", colour(1), pts.iter().map(|p| (p.lambda, p.first)).collect()),
                Series::line("T1 branch 2", colour(2), pts.iter().map(|p| (p.lambda, p.second)).collect()),
                Series::dashed("LocalTrain", colour(3), flat(&xs, r.local_train)),
                Series::dashed("GlobalTrain", colour(4), flat(&xs, r.global_train)),
            ];
            panel(format!("{} (R = {})", r.scenario, fmt_num(r.constants[0].r)), ("lambda", "max_i E||w~_i - w*_i||^2"), true, series)
        })
        .collect();
    figure(
        "CLUP-T1: statistical error of the solution of (2) against lambda",
        "exact expectation over the label noise (draw 0) vs both branches of Theorem 1 (proof's reading; branch 1 +inf where g > 1/(8 L^2))",
        panels,
    )
}

/// Corollary 2: measured rounds against lambda, with the curve it predicts.
fn plot_rounds(runs: &[&ScenarioRun]) -> Figure {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            // The O(.) shape scaled to the measured rounds at the smallest lambda.
            let scale = r.sweep.first().map(|p| p.rounds / p.shape).unwrap_or(1.0);
            let series = vec![
                Series::line("measured", colour(0), r.sweep.iter().map(|p| (p.lambda, p.rounds)).collect()),
                Series::line("implied by the printed rate", colour(1), r.sweep.iter().map(|p| (p.lambda, p.predicted)).collect()),
                Series::dashed("kappa (l+mu)/(l+L) log(1/eps), scaled", colour(2), r.sweep.iter().map(|p| (p.lambda, p.shape * scale)).collect()),
                Series::dashed("gradient evaluations / 100", colour(3), r.sweep.iter().map(|p| (p.lambda, p.gradients / 100.0)).collect()),
            ];
            panel(r.scenario.clone(), ("lambda", "rounds to eps"), true, series)
        })
        .collect();
    figure(
        "CLUP-C2-ROUNDS: communication rounds against lambda",
        "Algorithm 1 at Corollary 2's eta, gamma and K of (134); the O(.) curve is scaled to the smallest lambda",
        panels,
    )
}

/// Corollary 3: total error against rounds per lambda with LocalTrain and GlobalTrain, every
/// series in its own colour.
fn plot_total(runs: &[&ScenarioRun]) -> Figure {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            let rounds = r.total_error.first().map(|(_, e)| e.len()).unwrap_or(1);
            let xs: Vec<f64> = (1..=rounds).map(|t| t as f64).collect();
            let n = r.total_error.len();
            let mut series: Vec<Series> =
                r.total_error.iter().enumerate().map(|(j, (l, e))| Series::line(format!("lambda {}", fmt_num(*l)), colour(j), by_round(e))).collect();
            series.push(Series::dashed("LocalTrain", colour(n), flat(&xs, r.train_levels.0)));
            series.push(Series::dashed("GlobalTrain", colour(n + 1), flat(&xs, r.train_levels.1)));
            let best: Vec<String> =
                targets(r).iter().filter_map(|t| best_lambda(r, *t).map(|(l, n)| format!("{}: l={} ({n})", fmt_num(*t), fmt_num(l)))).collect();
            panel(format!("{}; best: {}", r.scenario, best.join("; ")), ("round", "max_i ||w_tK^(i) - w*^(i)||^2"), false, series)
        })
        .collect();
    figure(
        "CLUP-C3: total error against rounds for several lambda (Figure 3 mirrored)",
        "Algorithm 1 at Corollary 2's steps on draw 0's labels; caption: best lambda (rounds) per target total error",
        panels,
    )
}

/// A panel of rounds to an `eps`-solution (y) against `x`, titled by its scenario. Rounds start
/// at 0 (a target met at the start), so the rounds axis is linear, from 0 to one past the most.
fn rounds_panel(scenario: &str, x: Axis, series: Vec<Series>) -> Panel {
    let most = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(1.0, f64::max);
    Panel { caption: Some(scenario.to_string()), x, y: Axis::linear((0.0, most + 1.0), "rounds to eps"), series, legend: true }
}

/// Figure 2 (003:L264, L272): rounds to an `eps`-solution against the local steps `K`, one line
/// per lambda of the sweep; the claim is that no line rises.
fn plot_local_steps(runs: &[&ScenarioRun]) -> Figure {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            let mut lambdas: Vec<f64> = r.k_sweep.iter().map(|p| p.lambda).collect();
            lambdas.dedup();
            let series: Vec<Series> = lambdas
                .iter()
                .enumerate()
                .map(|(j, l)| {
                    let points = r.k_sweep.iter().filter(|p| p.lambda == *l && p.rounds.is_finite()).map(|p| (p.k as f64, p.rounds)).collect();
                    Series::line(format!("lambda {}", fmt_num(*l)), colour(j), points)
                })
                .collect();
            rounds_panel(&r.scenario, Axis::log((1.0, 32.0), "local steps K"), series)
        })
        .collect();
    figure(
        "CLUP-FIG2-K: rounds to an eps-solution against the local steps K (Figure 2 as a statement)",
        "Algorithm 1 at Corollary 2's gamma and eta, one line per lambda; the claim: no line rises with K",
        panels,
    )
}

/// Theorem 3's ball against `m` or `B` (003:L194, L1320): Algorithm 2's exact noise floor from
/// the solution, the fitted power law and the claimed `1/(B m)` through the first point, log-log.
fn plot_ball_slope(id: &str, swept: &[(&ScenarioRun, &BallSweep)]) -> Figure {
    let name = if swept[0].1.axis == BallAxis::Clients { "clients m" } else { "batch size B" };
    let panels: Vec<Panel> = swept
        .iter()
        .map(|(r, sw)| {
            let xs: Vec<f64> = sw.xs.iter().map(|x| *x as f64).collect();
            let mut series = vec![Series::line("exact noise floor", colour(0), xs.iter().copied().zip(sw.floors.iter().copied()).collect())];
            if let Some(fit) = &sw.fit {
                let line = xs.iter().map(|x| (*x, (fit.intercept + fit.slope * x.ln()).exp())).collect();
                series.push(Series::dashed(format!("fit: slope {:.4} [{:.4}, {:.4}]", fit.slope, fit.lower, fit.upper), colour(1), line));
            }
            if let (Some(x0), Some(y0)) = (xs.first(), sw.floors.first()) {
                series.push(Series::dashed("1/(B m) through the first point", colour(2), xs.iter().map(|x| (*x, y0 * x0 / x)).collect()));
            }
            panel(r.scenario.clone(), (name, "E||w_T^g - w~^g||^2 from the solution"), true, series)
        })
        .collect();
    figure(
        &format!("{id}: Theorem 3's noise floor against the {name}"),
        "Algorithm 2, fresh batches per local step, exact moments; the claim: slope at most -1 (99% interval)",
        panels,
    )
}

/// Figure 3 (003:L276, L284): rounds to each target total error against the target, one series
/// per method (LocalTrain and GlobalTrain dashed, FedCLUP at each lambda of the sweep); a target a
/// method does not reach within the horizon has no point.
fn plot_figure3(runs: &[&ScenarioRun]) -> Figure {
    let panels: Vec<Panel> = runs
        .iter()
        .filter_map(|r| {
            let study = r.figure3.as_ref()?;
            let mut methods: Vec<(usize, &Method, &Vec<f64>)> = study.methods.iter().zip(&study.rounds).enumerate().map(|(j, (m, k))| (j, m, k)).collect();
            // The baselines drawn last, on top of the lambdas that tie with them.
            methods.sort_by_key(|(_, m, _)| !matches!(m, Method::FedClup(_)));
            let series: Vec<Series> = methods
                .into_iter()
                .map(|(j, method, rounds)| {
                    let points = study.targets.iter().zip(rounds).filter(|(_, k)| k.is_finite()).map(|(t, k)| (*t, *k)).collect();
                    match method {
                        Method::FedClup(l) => Series::line(format!("FedCLUP lambda {}", fmt_num(*l)), colour(j), points),
                        Method::LocalTrain | Method::GlobalTrain => Series::dashed(method.name(), colour(j), points),
                    }
                })
                .collect();
            Some(rounds_panel(&r.scenario, Axis::log(log_range(study.targets.iter().copied()), "target total error eps"), series))
        })
        .collect();
    figure(
        "CLUP-FIG3-LAMBDA: rounds to a target total error, per method (Figure 3 as a statement)",
        "worst client's exact E||w_tK^(i) - w*^(i)||^2; LocalTrain (lambda = 0) and GlobalTrain (lambda -> inf) dashed",
        panels,
    )
}

/// Theorem 2's bound `r^(t-1) V_1` (003:L181) at rounds `1..=rounds`: the rate `r` of
/// [`super::bounds::t2_rate`] at draw 0's constants and the scenario's steps, `V_1` the run's own
/// ([`ScenarioRun::t2_v1`]). Empty when `V_1` or `r` is not a finite positive number.
pub fn t2_bound(r: &ScenarioRun, rounds: usize) -> Vec<(f64, f64)> {
    let c = &r.constants[0];
    let p = &r.params;
    let o = super::bounds::Opt { mu: c.mu, l: c.l_sample, lambda: p.lambda, gamma: p.gamma, eta: p.eta, k: p.k as f64, m: r.m as f64, mu_error: c.mu_error };
    let rate = super::bounds::t2_rate(&o);
    if !(r.t2_v1.is_finite() && rate.is_finite() && rate > 0.0) {
        return Vec::new();
    }
    (1..=rounds).map(|t| (t as f64, r.t2_v1 * rate.powi(t as i32 - 1))).collect()
}

/// Theorem 2: the global error against its bound `r^(t-1) V_1` over every round, and the
/// mean-of-locals server.
fn plot_rate(runs: &[&ScenarioRun]) -> Figure {
    let panels: Vec<Panel> = runs
        .iter()
        .map(|r| {
            let verdict = r.results.iter().find(|c| c.claim == "CLUP-T2").map(|c| c.evaluation.verdict.to_string()).unwrap_or_default();
            let series = vec![
                Series::line("Algorithm 1", colour(0), by_round(&r.global_error)),
                Series::line("r^(t-1) V_1", colour(1), t2_bound(r, r.global_error.len())),
                Series::dashed("mean of locals", colour(2), by_round(&r.mean_of_locals_error)),
                Series::line("Alg. 2 E-error", colour(3), by_round(&r.alg2_error)),
            ];
            panel(format!("{} ({verdict})", r.scenario), ("round t", "||w_t^g - w~^g||^2"), false, series)
        })
        .collect();
    figure(
        "CLUP-T2: linear convergence of Algorithm 1",
        "exact global error vs Theorem 2's bound r^(t-1) V_1 (orange); dashed: the server as the mean of the local models (gamma = 1/lambda); red: Algorithm 2 (exact expectation)",
        panels,
    )
}
