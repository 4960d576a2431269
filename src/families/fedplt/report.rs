//! FedPLT's reports: one JSON per claim, its section of `SUMMARY.md`, and PNG figures (the
//! distance against both bounds, the measured alignment along the run, the residual error
//! against the step).

use std::path::PathBuf;

use crate::checker::{ClaimResult, RunOutcome};
use crate::claim::{fmt_num, BoundClaim, ConditionKind};
use crate::error::Result;
use crate::family::{ClaimSummary, ReportFile};
use crate::outcome::{claim_files, run_verdicts, RunRecord};
use crate::report::claim_figure::BoundFigure;
use crate::report::panels::{log_range, Axis, Figure, Layout, Panel, Series, BLUE, ORANGE, RED};
use crate::report::{markdown_table, opt_num, to_json, ReportMeta};
use crate::verdict::{ConstantsSource, VerdictKind};

use super::check::{fmt_rho_by_horizon, is_vacuous, Measured, ScenarioRun};
use super::claims::{equality_solution, RECURSION_HORIZON};
use super::formulas::{summary, Claim};
use super::runs::{ResidualPoint, Schedule};

/// The report files and the `SUMMARY.md` section: each claim's JSON (and figure), the
/// family-wide figures, the scenarios' JSON, and the summary with the speed-error trade-off.
///
/// # Errors
/// When a figure cannot be drawn.
pub fn report_files(
    claims: &[Claim],
    runs: &[ScenarioRun],
    sweep: Option<&(String, Vec<ResidualPoint>)>,
    tradeoff_expected: Option<&str>,
    meta: &ReportMeta,
    plots: bool,
) -> Result<(Vec<ReportFile>, String)> {
    let summaries: Vec<ClaimSummary> = claims.iter().map(|c| summary(c, String::new())).collect();
    let records: Vec<RunRecord<&Measured>> = runs
        .iter()
        .map(|r| RunRecord {
            scenario: &r.scenario.name,
            description: &r.scenario.description,
            hash: &r.scenario_hash,
            results: &r.results,
            extras: &r.measured,
        })
        .collect();
    let mut files = claim_files(meta, &summaries, &records)?;
    if plots {
        let named: Vec<(&str, &[ClaimResult])> = records.iter().map(|r| (r.scenario, r.results)).collect();
        let subtitle = "exact E||W^t - W*||^2 (blue) vs the bound with G^2 measured on the run (orange); log scale";
        for c in claims.iter().filter_map(|c| if let Claim::Builtin(b) = c { b.uses_run().then_some(b) } else { None }) {
            let has_json = files.iter().any(|f| f.path.ends_with(format!("{}.json", c.id())));
            if has_json {
                files.push(BoundFigure { claim: c.id(), title: c.title(), metric: "D^t", subtitle }.figure(&named).file(c.id())?);
            }
        }
        if !runs.is_empty() {
            files.push(alignment_figure(runs).file("FEDPLT-alignment")?);
        }
        // The scenarios the recursion claim is about (the decaying schedule: no scope check fails).
        let in_scope = |r: &&ScenarioRun| {
            r.result("FEDPLT-DECAY-RECURSION", ConstantsSource::Exact)
                .is_some_and(|c| !c.evaluation.checks.iter().any(|k| k.kind == ConditionKind::Scope && !k.holds))
        };
        let decaying: Vec<&ScenarioRun> = runs.iter().filter(in_scope).collect();
        if !decaying.is_empty() {
            files.push(recursion_figure(&decaying).file("FEDPLT-DECAY-RECURSION")?);
        }
        if let Some((name, points)) = sweep {
            files.push(residual_figure(name, points).file("FEDPLT-residual-vs-eta")?);
        }
    }
    files.push(scenarios_file(runs, sweep, meta)?);
    let mut summary = summary_markdown(runs);
    summary.push_str(&vacuous_markdown(runs));
    if let Some((name, points)) = sweep {
        summary.push_str(&tradeoff(name, points));
        summary.push_str(&super::tradeoff::section(name, points, tradeoff_expected));
    }
    Ok((files, summary))
}

/// What `fedplt/scenarios.json` and the `run` command report of every run (its constants,
/// schedule, the numbers measured on it, `rho_` by horizon, Assumption 6 for all `W` and, where
/// the small-step limit is not `W*`, at it, where the run overflowed if it did) and `extra`.
fn run_fields(r: &ScenarioRun, extra: serde_json::Value) -> serde_json::Value {
    let m = &r.measured;
    let mut fields = serde_json::json!({
        "scenario": r.scenario.name, "constants": r.constants, "schedule": r.schedule, "z": m.z, "g2_empirical": m.g2_empirical,
        "b_empirical": m.b_empirical, "rho_by_horizon": r.alignment.rho_by_horizon(), "a6_for_all_w": r.a6_for_all_w,
        "alignment_failure": r.alignment.first_failure, "limit_gap": m.limit_gap, "limit_stability": m.limit_stability,
    });
    if let (Some(all), Some(f)) = (fields.as_object_mut(), &r.step_scales) {
        all.insert("step_scales".into(), serde_json::json!(f));
    }
    if let (Some(all), Some(a)) = (fields.as_object_mut(), m.limit_alignment) {
        all.insert("limit_alignment".into(), serde_json::json!({ "client": a.client, "rho": a.rho }));
    }
    if let (Some(all), Some((t, k, path))) = (fields.as_object_mut(), r.alignment.first_overflow) {
        all.insert("overflow".into(), serde_json::json!({ "round": t, "client": k, "sample_path": path }));
    }
    if let (Some(all), serde_json::Value::Object(extra)) = (fields.as_object_mut(), extra) {
        all.extend(extra);
    }
    fields
}

/// `fedplt/scenarios.json`: the residual sweep and, per scenario, [`run_fields`] with its local
/// steps, gradient, sample paths and limit point.
fn scenarios_file(runs: &[ScenarioRun], sweep: Option<&(String, Vec<ResidualPoint>)>, meta: &ReportMeta) -> Result<ReportFile> {
    let scenario = |r: &ScenarioRun| {
        let (a, s) = (&r.alignment, &r.scenario);
        let extra = serde_json::json!({"tau": s.tau, "gradient": s.gradient, "rho_min": a.min, "sample_paths": a.replicates,
            "final_mean_gap": r.final_mean_gap, "limit_point": r.limit_point});
        run_fields(r, extra)
    };
    let runs_json = serde_json::json!({
        "meta": meta,
        "residual_sweep": sweep.map(|(name, points)| serde_json::json!({"scenario": name, "points": points})),
        "scenarios": runs.iter().map(scenario).collect::<Vec<_>>(),
    });
    Ok(ReportFile { path: PathBuf::from("fedplt").join("scenarios.json"), bytes: to_json(&runs_json)?.into_bytes() })
}

/// The speed-error trade-off of Case 1 (001:L651-653) on the sweep's scenario: per `eta`, the
/// exact steady distance against the residual `eta B / z`, and their ratio.
fn tradeoff(name: &str, points: &[ResidualPoint]) -> String {
    let rows = points.iter().map(|p| {
        let ratio = p.steady_distance.map(|d| p.residual_bound / d);
        [fmt_num(p.eta), opt_num(p.steady_distance), fmt_num(p.residual_bound), opt_num(ratio)]
    });
    let table = markdown_table("eta | exact steady D | residual eta B / z | ratio", rows);
    format!("\n### FedPLT speed-error trade-off (Case 1) on `{name}`\n\n{table}")
}

/// The `run` command's JSON for one scenario: `run_fields` with its hash, `rho_` at `T`,
/// `D^t`, the verdicts, the small-step limit point `W_lim` (001:L708-713), the realised masks
/// `m_k` and, per round `t` and client `k`, the smallest alignment ratio `rho_k` seen at the
/// client's local iterates over the sample paths (001:L151-155; `null` where none was decided).
///
/// # Errors
/// When the JSON cannot be written.
pub fn run_json(run: &ScenarioRun) -> Result<String> {
    let meta = ReportMeta::new(format!("cargo run --release -- run <file> (scenario `{}`)", run.scenario.name));
    let rho: Vec<Vec<Option<f64>>> = run.alignment.per_round_client_min.iter().map(|r| r.iter().map(|v| v.is_finite().then_some(*v)).collect()).collect();
    let extra = serde_json::json!({"meta": meta, "scenario_hash": run.scenario_hash, "alignment_min": run.alignment.min,
        "distance": run.distance, "verdicts": run_verdicts(&run.results), "limit_point": run.limit_point, "masks": run.masks,
        "rho_per_round_client": rho});
    to_json(&run_fields(run, extra))
}

/// The family's section of `SUMMARY.md`.
pub fn summary_markdown(runs: &[ScenarioRun]) -> String {
    let header = "scenario | K | d | tau | schedule | L | mu | sigma^2 | psi_ | psibar | uncovered | Gamma | rho_ | z | G^2 (run) | B (run) | ‖W_lim − W*‖";
    let rows = runs.iter().map(|r| {
        let (c, p) = (&r.constants, &r.constants.compensation);
        let mut schedule = match r.schedule {
            Schedule::Constant(eta) => format!("eta = {}", fmt_num(eta)),
            Schedule::Decaying { z, beta, offset } => format!("{}/({} (t + {}))", fmt_num(beta), fmt_num(z), fmt_num(offset)),
        };
        if let Some(f) = &r.step_scales {
            schedule.push_str(&format!("; eta_k = s_k eta^t, s = [{}]", f.iter().map(|v| fmt_num(*v)).collect::<Vec<_>>().join(", ")));
        }
        let m = &r.measured;
        let mut row = vec![r.scenario.name.clone(), c.clients.to_string(), c.dim.to_string(), r.scenario.tau.to_string(), schedule];
        row.extend([c.l, c.mu, c.sigma2, p.psi_min, p.psi_max].map(fmt_num));
        row.push(p.uncovered.to_string());
        row.extend([c.gamma_mask, r.alignment.min, m.z, m.g2_empirical, m.b_empirical, m.limit_gap].map(fmt_num));
        row
    });
    format!(
        "### How these verdicts are computed\n\nNot Fed-PLT (local training with privacy noise). `D^t = E||W^t - W*||^2` is exact (moment \
         propagation). Assumption 5 (bounded global gradient on R^d) cannot hold for a strongly \
         convex F, so every claim that uses G is not applicable as stated; its `empirical` row \
         takes G^2 as the largest E||grad F_k||^2 at the local iterates the run visits. rho_ \
         (Assumption 6) is the smallest alignment ratio along seeded sample paths.\n\n\n### FedPLT scenarios\n\n{}",
        markdown_table(header, rows)
    )
}

/// Per claim and constants source: the "holds", of which vacuous ([`is_vacuous`]: slack above
/// 1e3 only because `rho_` is near 0); then `rho_` against the horizon on every scenario with a
/// proper mask (`rho_ < 1`), where it is a sample-path minimum that can keep falling (001:L396).
fn vacuous_markdown(runs: &[ScenarioRun]) -> String {
    let mut lines: Vec<(String, usize, Vec<String>)> = Vec::new();
    for run in runs {
        for r in &run.results {
            let key = if r.constants == ConstantsSource::Exact { r.claim.to_string() } else { format!("{} (empirical)", r.claim) };
            let holds = usize::from(r.evaluation.verdict == VerdictKind::Holds);
            let vacuous = is_vacuous(&r.evaluation, run.alignment.min).then(|| format!("`{}`", run.scenario.name));
            match lines.iter_mut().find(|l| l.0 == key) {
                Some(l) => {
                    l.1 += holds;
                    l.2.extend(vacuous);
                }
                None => lines.push((key, holds, vacuous.into_iter().collect())),
            }
        }
    }
    let rows = lines.into_iter().filter(|l| l.1 > 0).map(|(key, holds, v)| [key, holds.to_string(), v.len().to_string(), v.join(", ")]);
    let table = markdown_table("claim | holds | of which vacuous | vacuous on", rows);
    let partial = runs.iter().filter(|r| r.alignment.min < 1.0).map(|r| [r.scenario.name.clone(), fmt_num(r.alignment.min), fmt_rho_by_horizon(&r.alignment)]);
    let rho = markdown_table("scenario | rho_ at T | rho_ against the horizon T'", partial);
    let a6 = runs.iter().map(|r| [r.scenario.name.clone(), if r.a6_for_all_w.holds() { "holds" } else { "violated" }.to_string(), r.a6_for_all_w.describe()]);
    let a6 = markdown_table("scenario | A6 for all W (001:L151-155) | why", a6);
    format!(
        "\n### FedPLT vacuous holds\n\nA \"holds\" is vacuous when its slack exceeds 1e3 only because rho_ < 1e-2 (the bound carries 1/z, \
         z = mu psi_ rho_).\n\n{table}\n### FedPLT rho_ against the horizon (proper masks)\n\n{rho}\n### FedPLT Assumption 6 for all W, decided exactly\n\n\
         With a shared optimum, rho_k > 0 for all W iff the symmetric part of diag(m_k) H_k is positive definite (a proper mask never is); \
         with the client's optimum a_k != W*, rho_k is undefined at W = a_k.\n\n{a6}"
    )
}

/// The smallest alignment ratio per round along the sample paths, per scenario; A6 needs it > 0.
fn alignment_figure(runs: &[ScenarioRun]) -> Figure {
    let panel = |run: &ScenarioRun| {
        let pts: Vec<(f64, f64)> = run.alignment.per_round_min.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(t, v)| (t as f64, *v)).collect();
        let lo = pts.iter().map(|p| p.1).fold(0.0, f64::min) - 0.1;
        let hi = pts.iter().map(|p| p.1).fold(1.0, f64::max) + 0.1;
        let x_max = (run.scenario.rounds as f64).max(1.0);
        let zero = Series { label: None, width: 1, ..Series::line("", RED, vec![(0.0, 0.0), (x_max, 0.0)]) };
        Some(Panel {
            caption: Some(format!("{} (rho_ = {})", run.scenario.name, fmt_num(run.alignment.min))),
            x: Axis::linear((0.0, x_max), "round"),
            y: Axis::linear((lo, hi), "min rho_k"),
            series: vec![zero, Series { label: None, ..Series::line("", BLUE, pts) }],
            legend: false,
        })
    };
    Figure {
        title: "FedPLT: measured alignment ratio rho_k along the run (Assumption 6)".into(),
        subtitle: "min over clients and sample paths of rho_k at every point a gradient is taken; A6 needs it > 0 (red line)".into(),
        layout: Layout::grid(50),
        panels: runs.iter().map(panel).collect(),
        empty_note: None,
    }
}

/// The speed-error trade-off: the exact steady state of `D^t` and the bound's residual `eta B / z`
/// against `eta`, log-log.
fn residual_figure(name: &str, points: &[ResidualPoint]) -> Figure {
    let steady: Vec<(f64, f64)> = points.iter().filter_map(|p| Some((p.eta, p.steady_distance?))).filter(|p| p.1 > 0.0).collect();
    let bound: Vec<(f64, f64)> = points.iter().map(|p| (p.eta, p.residual_bound)).filter(|p| p.1 > 0.0 && p.1.is_finite()).collect();
    let y = log_range(steady.iter().chain(&bound).map(|p| p.1));
    let (x_lo, x_hi) = points.iter().fold((f64::INFINITY, 0.0f64), |(a, b), p| (a.min(p.eta), b.max(p.eta)));
    let x = if x_lo.is_finite() && x_hi > x_lo { (x_lo / 1.5, x_hi * 1.5) } else { (1e-3, 1.0) };
    let panel = Panel {
        caption: None,
        x: Axis::log(x, "eta"),
        y: Axis::log(y, "E||W - W*||^2 as t -> infinity"),
        series: vec![
            Series { markers: Some(4), ..Series::line("exact steady state", BLUE, steady) },
            Series { markers: Some(4), ..Series::line("eta B / z", ORANGE, bound) },
        ],
        legend: true,
    };
    Figure {
        title: format!("FedPLT Case 1: residual error against the step ({name})"),
        subtitle: "exact steady-state E||W - W*||^2 (blue) and the bound's residual eta B / z (orange); log-log".into(),
        layout: Layout { label_areas: (36, 70), legend_line: 16, ..Layout::single((900, 504)) },
        panels: vec![Some(panel)],
        empty_note: None,
    }
}

/// Case 2's recursion taken with equality, `(B/z^2) H_t / t`, against the claimed `C/(t+1)`, per
/// decaying scenario, log-log up to `t = 10^6`: the recursion decays like `log t / t` and crosses
/// the claim.
fn recursion_figure(runs: &[&ScenarioRun]) -> Figure {
    let ts: Vec<usize> = crate::verdict::report_checkpoints(RECURSION_HORIZON);
    let panel = |run: &&ScenarioRun| {
        let b_over_z2 = run.measured.b_empirical / (run.measured.z * run.measured.z);
        let c = run.constants.d0 + b_over_z2;
        if !(b_over_z2.is_finite() && b_over_z2 > 0.0) {
            return None;
        }
        let eq = equality_solution(b_over_z2, RECURSION_HORIZON);
        let recursion: Vec<(f64, f64)> = ts.iter().map(|&t| (t as f64, eq[t - 1])).collect();
        let claim: Vec<(f64, f64)> = ts.iter().map(|&t| (t as f64, c / (t as f64 + 1.0))).collect();
        Some(Panel {
            caption: Some(run.scenario.name.clone()),
            x: Axis::log((1.0, RECURSION_HORIZON as f64), "t"),
            y: Axis::log(log_range(recursion.iter().chain(&claim).map(|p| p.1)), "D^t"),
            series: vec![Series::line("recursion with equality", BLUE, recursion), Series::line("C/(t+1)", ORANGE, claim)],
            legend: true,
        })
    };
    Figure {
        title: "FEDPLT-DECAY-RECURSION: the proof's recursion (equality) against C/(t+1)".into(),
        subtitle: "(B/z^2) H_t / t (blue) and (D^0 + B/z^2)/(t+1) (orange), with G^2 and rho_ measured on the run; log-log".into(),
        layout: Layout::grid(60),
        panels: runs.iter().map(panel).collect(),
        empty_note: None,
    }
}
