//! Runs of one scenario: instance, constants, connectivity, exact trajectories, and every claim's
//! evaluation.

use serde::Serialize;

use crate::claim::ConditionCheck;
use crate::engine::{nan_max, Estimator};
use rayon::prelude::*;

use crate::claim::BoundClaim;
use crate::error::{require_memory, Result};
use crate::verdict::{evaluate, evaluate_inequality, ConstantsSource, Evaluation};

use super::card::Scenario;
use crate::kinds::big_o::evaluate_big_o;
use crate::kinds::rate::{evaluate_rate, fit_slope, sweep_series, SlopeFit};
use crate::kinds::settling::{big_o_violation_if_settled, rate_violation_if_settled, Settling};

use super::card_claims::{constants_label, per_round_metric, CardClaim, CardInputs, WithAssumptions};
use super::claims::{
    aa, assumption_checks, lemma3_steps, step_checks, theorem1_shape, visited_assumption_checks, AaReading, Lemma2Reading, Rec32, Rec32Reading, C1_EXPONENT,
    INV_T_EXPONENT,
};
use super::formulas::Inputs;
use super::lemmas::LemmaRun;
use super::problem::{Constants, GradientDiversity, Instance};
use super::round::{exact_trajectory, exact_trajectory_with, sampled_trajectory, Params, Trajectory};
use super::topology::{Connectivity, GraphSequence};

/// Confidence of intervals (only the slope fit's; every expectation is exact).
pub const CONFIDENCE: f64 = 0.99;

pub use crate::checker::ClaimResult;

/// One horizon of the rate sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    /// `T`.
    pub rounds: usize,
    /// The steps at `T`.
    pub params: Params,
    /// The connectivity of the first `T` graphs.
    pub connectivity: Connectivity,
    /// `(1/T) sum_{t<T} (E Delta_ubar^t / L_u + E Delta_v^t / L_v)`.
    pub metric: f64,
    /// The same with `Delta_v^t` at the de-biased `z_i^t = u_i^t / mu_i^t` (DPGP-C1~debiased-z).
    pub metric_debiased: f64,
    /// `(1/T) sum_{t<T} (1/m) sum_i E||ubar^t - z_i^t||^2`.
    pub consensus: f64,
    /// Assumption 4's constant over the points of this run where the proofs use it
    /// ([`super::round::round_supremum`]).
    #[serde(skip)]
    pub sigma_g2_visited: f64,
    /// `kappa = T x` the slowest mode's contraction per round at this horizon's steps
    /// ([`Instance::slowest_contraction`]): how far the run has settled.
    pub slowest_mode_kappa: f64,
}

/// Everything a scenario's run produced.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioRun {
    /// Scenario name.
    pub scenario: String,
    /// Topology name.
    pub topology: String,
    /// Exact constants.
    pub constants: Constants,
    /// Connectivity at the per-round horizon.
    pub connectivity: Connectivity,
    /// Steps at the per-round horizon.
    pub params: Params,
    /// Exact trajectory at the per-round horizon.
    pub trajectory: Trajectory,
    /// Lemma 3's right side per round (primary AA).
    pub lemma3_bound: Vec<f64>,
    /// The rate sweep.
    pub sweep: Vec<SweepPoint>,
    /// The slope fit.
    pub fit: Option<SlopeFit>,
    /// Every claim's evaluation.
    pub results: Vec<ClaimResult>,
    /// `max_i ||u_i^0||` (zero unless an explicit instance starts elsewhere).
    #[serde(skip)]
    pub u0: f64,
    /// The floor of Theorem 1's printed `Delta_v^t` ([`literal_delta_v_floor`]) averaged over the
    /// push-sum weights of the second half of the longest horizon ([`mean_literal_floor`]); NaN
    /// when `F` has no unique minimizer.
    #[serde(skip)]
    pub literal_floor: f64,
    /// The out-degree `k` of a random out-neighbour topology (Figure 3a's axis, [`super::compare`]).
    #[serde(skip)]
    pub neighbours: Option<usize>,
}

impl crate::checker::RunOutcome for ScenarioRun {
    fn scenario_name(&self) -> &str {
        &self.scenario
    }
    fn results(&self) -> &[crate::checker::ClaimResult] {
        &self.results
    }
}

/// The mean of `x`, 0 for none.
pub(super) fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

/// Builds the instance and its constants.
///
/// # Errors
/// Bad input naming the field.
pub fn prepare(s: &Scenario) -> Result<(Instance, Constants)> {
    let inst = s.build_instance("scenario")?;
    let k = inst.constants()?;
    Ok((inst, k))
}

/// Runs one scenario: the per-round claims at `s.rounds`, the rate over `s.sweep`.
///
/// # Errors
/// Bad input; numerical failures.
pub fn run_scenario(s: &Scenario, bound_scale: f64) -> Result<ScenarioRun> {
    run_scenario_with(s, prepare(s)?, bound_scale, None, Reads::ALL)
}

/// What a run computes besides the per-round claims, each only where a checked claim reads it:
/// Lemmas 1 and 2's and (15)'s sides ([`super::claims::LOCAL_CLAIMS`]) and the rate sweep's
/// runs ([`reads_sweep`]). A search evaluates one claim at a time, and most of its claims read
/// neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// Lemmas 1 and 2's and (15)'s sides at every round of the per-round run.
    pub local: bool,
    /// The runs of the rate sweep (one per horizon of `sweep`).
    pub sweep: bool,
}

impl Reads {
    /// Everything: a whole card's check, a run file.
    pub const ALL: Self = Self { local: true, sweep: true };

    /// What the claims `ids` read. A claim a card defines by formulas may read the sweep, so
    /// `defined` (such a claim is checked) asks for it; Lemmas 1-2 and (15)'s sides are made for
    /// those claims only.
    pub fn of(ids: &[&str], defined: bool) -> Self {
        Self { local: ids.iter().any(|id| super::claims::LOCAL_CLAIMS.contains(id)), sweep: defined || ids.iter().any(|id| reads_sweep(id)) }
    }
}

/// Whether claim `id` reads the rate sweep: Theorem 1 and Corollary 1, in every reading.
pub fn reads_sweep(id: &str) -> bool {
    id.starts_with("DPGP-T1") || id.starts_with("DPGP-C1")
}

/// Seeded replicates of the per-round claims when a check asks for Monte Carlo.
pub const MONTE_CARLO_REPLICATES: usize = 200;

/// [`run_scenario`] on the instance and constants [`prepare`] made, with the per-round claims (Lemma 3, (32)) estimated from `replicates`
/// seeded runs (keyed streams `(seed, replicate, round, client)`, Student-t intervals with a
/// Bonferroni correction over rounds) instead of exact moments when `replicates` is given. The
/// rate claims stay exact (a sweep of horizons). Lemmas 1 and 2 and (15)
/// ([`super::claims::LOCAL_CLAIMS`]) and the claims on the rate sweep are evaluated where `reads`
/// asks for their quantities; without the sweep the run's `sweep` is empty and `fit` `None`.
///
/// # Errors
/// Bad input; numerical failures.
pub fn run_scenario_with(s: &Scenario, prepared: (Instance, Constants), bound_scale: f64, replicates: Option<usize>, reads: Reads) -> Result<ScenarioRun> {
    let setup = Setup::new(s, prepared);
    let params = s.params(s.rounds, setup.k.l_u, setup.k.l_v);
    let traj = exact_trajectory_with(&setup.inst, &params, &setup.prefix(s.rounds), s.rounds, reads.local)?;
    let replicated = setup.replicates(&params, replicates)?;
    let (sources, estimator): (Vec<&Trajectory>, Estimator) =
        if replicates.is_some() { (replicated.iter().collect(), Estimator::MonteCarlo) } else { (vec![&traj], Estimator::Exact) };
    let mut results = if reads.local { setup.lemma_results(&params, &sources, estimator, bound_scale) } else { Vec::new() };
    results.extend(setup.per_round_results(&params, &sources, estimator, bound_scale, A4::Stated));
    let sweep = if reads.sweep { setup.sweep(&traj)? } else { Vec::new() };
    let mut fit = None;
    if reads.sweep {
        let rate_checks = setup.sweep_checks(false, A4::Stated);
        results.extend(setup.theorem1_results(&sweep, rate_checks.clone(), traj.objective[0], A4::Stated));
        let rates;
        (fit, rates) = corollary1_results(&sweep, setup.horizon, rate_checks, bound_scale);
        results.extend(rates);
    }
    results.extend(setup.visited_results(&params, (&sources, estimator), &traj, reads.sweep.then_some(&sweep[..]), bound_scale));
    let aa_primary = aa(&params, &setup.conn, setup.k.l_u, AaReading::Proof);
    let lemma3_bound: Vec<f64> = traj.delta_ubar.iter().map(|d| aa_primary * (setup.sigma() + d)).collect();
    Ok(ScenarioRun {
        scenario: s.name.clone(),
        topology: s.topology.name(),
        constants: setup.k,
        connectivity: setup.conn,
        params,
        trajectory: traj,
        lemma3_bound,
        sweep,
        fit,
        results,
        u0: setup.u0,
        literal_floor: mean_literal_floor(&setup.inst, &setup.seq.weights[setup.horizon / 2..setup.horizon.max(1)]).unwrap_or(f64::NAN),
        neighbours: if let super::topology::Topology::RandomOut { k } = s.topology { Some(k) } else { None },
    })
}

/// Theorem 1 prints `Delta_v^t = (1/m) sum_i ||grad_v F_i(u_i^t, v_i^t)||^2` at the push-sum
/// numerator `u_i^t = mu_i^t z_i^t` (004:L133), while Algorithm 1 converges to `z_i = u*`,
/// `grad_v F_i(u*, v_i*) = B_i^T u* + D_i v_i* - b_i = 0`. There the printed measure is
/// `(1/m) sum_i (mu_i - 1)^2 ||B_i^T u*||^2`, positive where the weights `mu` stay away from 1 and
/// some `B_i^T u* != 0`, so the printed metric of Corollary 1 tends to this floor over `L_v`
/// instead of 0; a weight within [`super::prec::UNIT_WEIGHT`] of 1 counts as 1. `None` when the
/// joint Hessian is singular (no unique minimizer).
pub fn literal_delta_v_floor(inst: &Instance, mu: &nalgebra::DVector<f64>) -> Option<f64> {
    mean_literal_floor(inst, std::slice::from_ref(mu))
}

/// [`literal_delta_v_floor`] averaged over the push-sum weights of several rounds, `(1/|R|)
/// sum_{t in R} (1/m) sum_i (mu_i^t - 1)^2 ||B_i^T u*||^2`: the level the printed metric's average
/// `(1/T) sum_t E Delta_v^t / L_v` tends to when the weights keep changing (random out-neighbours
/// draw new graphs every round), over rounds `R` where their distribution has settled (the second
/// half of the horizon). With weights that converge (a static graph) every round gives the limit's
/// floor. `None` as [`literal_delta_v_floor`], or for no rounds.
pub fn mean_literal_floor(inst: &Instance, mus: &[nalgebra::DVector<f64>]) -> Option<f64> {
    let (h, g) = inst.joint();
    let x = h.lu().solve(&g)?;
    let u = x.rows(0, inst.du).into_owned();
    let m = inst.clients.len() as f64;
    let pulls: Vec<f64> = inst.clients.iter().map(|c| c.b.tr_mul(&u).norm_squared()).collect();
    let floor = |mu: &nalgebra::DVector<f64>| {
        pulls.iter().zip(mu.iter()).map(|(p, w)| if (w - 1.0).abs() <= super::prec::UNIT_WEIGHT { 0.0 } else { (w - 1.0).powi(2) * p }).sum::<f64>() / m
    };
    (!mus.is_empty()).then(|| mus.iter().map(floor).sum::<f64>() / mus.len() as f64)
}

/// What every claim of a scenario's run shares: the instance, its constants, the realised graphs
/// up to the longest horizon and their connectivity.
struct Setup<'a> {
    s: &'a Scenario,
    inst: Instance,
    k: Constants,
    seq: GraphSequence,
    conn: Connectivity,
    /// The longest horizon, of the sweep or of the per-round claims.
    horizon: usize,
    /// `max_i ||u_i^0||`.
    u0: f64,
}

impl<'a> Setup<'a> {
    fn new(s: &'a Scenario, (inst, k): (Instance, Constants)) -> Self {
        let horizon = s.horizon();
        let seq = GraphSequence::with_rule(&s.topology, s.mixing, s.m, horizon, s.graph_seed);
        // Connectivity of the whole realised sequence (the longest horizon): B, delta and the
        // estimated C, q of a prefix are no worse, so one estimate serves every horizon.
        let conn = s.connectivity_of(&seq);
        let u0 = inst.u0.iter().map(|u| u.norm()).fold(0.0, f64::max);
        Self { s, inst, k, seq, conn, horizon, u0 }
    }

    /// The first `t` graphs.
    fn prefix(&self, t: usize) -> GraphSequence {
        GraphSequence { mixing: self.seq.mixing[..t].to_vec(), weights: self.seq.weights[..=t].to_vec() }
    }

    /// `sigma_u^2 + sigma_g^2` of the stated constants (with `sigma_g^2 = 0` where it is
    /// infinite; the claims are then not applicable).
    fn sigma(&self) -> f64 {
        sigma_sum(&self.k)
    }

    /// The constants a reading of Assumption 4 gives: the stated ones, or with `sigma_g^2`
    /// the supremum over the proof's points of the run.
    fn constants(&self, a4: A4) -> Constants {
        match a4 {
            A4::Stated => self.k.clone(),
            A4::Visited(v) => Constants { sigma_g2: GradientDiversity { value: Some(v), reason: String::new() }, ..self.k.clone() },
        }
    }

    /// The assumption checks of a reading within `rounds`.
    fn assumptions(&self, a4: A4, rounds: usize) -> Vec<ConditionCheck> {
        match a4 {
            A4::Stated => assumption_checks(&self.k, &self.conn, rounds, self.u0),
            A4::Visited(v) => visited_assumption_checks(&self.k, &self.conn, rounds, self.u0, v),
        }
    }

    /// `replicates` seeded trajectories at the per-round horizon (none without Monte Carlo).
    fn replicates(&self, params: &Params, replicates: Option<usize>) -> Result<Vec<Trajectory>> {
        let Some(r) = replicates else { return Ok(Vec::new()) };
        let s = self.s;
        require_memory("replicates", 8.0 * 6.0 * r as f64 * (s.rounds + 1) as f64, "the per-round values of every replicate")?;
        let run_seq = self.prefix(s.rounds);
        Ok((0..r as u64).into_par_iter().map(|rep| sampled_trajectory(&self.inst, params, &run_seq, s.rounds, s.seed, rep)).collect())
    }

    /// Lemmas 1 and 2 (both readings) and (15) at the per-round horizon, on `sources` (the exact
    /// trajectory with its local sides, or the replicates) ([`super::lemmas`]).
    fn lemma_results(&self, params: &Params, sources: &[&Trajectory], estimator: Estimator, bound_scale: f64) -> Vec<ClaimResult> {
        let run = LemmaRun {
            constants: &self.k,
            connectivity: &self.conn,
            params,
            sources,
            estimator,
            rounds: self.s.rounds,
            u0: self.inst.u0.iter().map(|u| u.norm()).collect(),
            confidence: CONFIDENCE,
        };
        vec![run.lemma1(bound_scale), run.lemma2(Lemma2Reading::Proof, bound_scale), run.lemma2(Lemma2Reading::Printed, bound_scale), run.eq15(bound_scale)]
    }

    /// Lemma 3 and inequality (32) at the per-round horizon, on `sources` (the exact trajectory
    /// or the replicates).
    fn per_round_results(&self, params: &Params, sources: &[&Trajectory], estimator: Estimator, bound_scale: f64, a4: A4) -> Vec<ClaimResult> {
        let (s, conn) = (self.s, &self.conn);
        let k = &self.constants(a4);
        let sigma = sigma_sum(k);
        let assumptions = self.assumptions(a4, s.rounds);
        // Lemma 3 rests on Lemma 2 alone (004:L545): no condition on eta_v.
        let lemma3 = |reading: AaReading| {
            let mut checks = assumptions.clone();
            checks.extend(lemma3_steps(k, conn, params, reading));
            let a = aa(params, conn, k.l_u, reading);
            let sides = |t: usize| Some(sources.iter().map(|tr| (tr.consensus[t], a * (sigma + tr.delta_ubar[t]))).collect());
            evaluate_inequality(checks, s.rounds, &sides, estimator, CONFIDENCE, bound_scale)
        };
        let mut results = vec![
            ClaimResult {
                claim: "DPGP-L3",
                reading: "primary",
                constants: ConstantsSource::Estimated,
                evaluation: lemma3(AaReading::Proof),
                label: None,
                expected: None,
            },
            ClaimResult {
                claim: "DPGP-L3~printed",
                reading: "printed",
                constants: ConstantsSource::Estimated,
                evaluation: lemma3(AaReading::Printed),
                label: None,
                expected: None,
            },
        ];
        results.extend(self.descent_results(params, (sources, estimator), bound_scale, k, &assumptions));
        results
    }

    /// Inequality (32) and its halves, the u-step (26) and the v-step (31), each as a bound on the
    /// next suboptimality: `E F_after - F* <= E F_before - F* + step`, with `(before, after)` =
    /// `(F(ubar^t, V^t), F(ubar^{t+1}, V^{t+1}))` for (32), `(F(ubar^t, V^{t+1}), F(ubar^{t+1},
    /// V^{t+1}))` for (26) and `(F(ubar^t, V^t), F(ubar^t, V^{t+1}))` for (31) ([`Rec32`]). Both
    /// sides are >= 0 when it holds, so slack is a ratio and a scaled-down bound a stricter one.
    /// The halves need `E F(ubar^t, V^{t+1})`, which the run computes with the local phases: they
    /// are left out when a source has none.
    fn descent_results(
        &self,
        params: &Params,
        (sources, estimator): (&[&Trajectory], Estimator),
        bound_scale: f64,
        k: &Constants,
        assumptions: &[ConditionCheck],
    ) -> Vec<ClaimResult> {
        let sigma = sigma_sum(k);
        // The u-step (26) rests on Lemmas 2 and 3 (004:L589-603); (31) and (32) add Lemma 1.
        let steps = |part: Part| match part {
            Part::U => lemma3_steps(k, &self.conn, params, AaReading::Proof),
            Part::V | Part::Whole => step_checks(k, &self.conn, params, false),
        };
        let rounds = self.s.rounds;
        let halves = sources.iter().all(|tr| tr.local.len() >= rounds);
        let mut results = Vec::new();
        for (id, reading, r, part) in DESCENT {
            if part != Part::Whole && !halves {
                continue;
            }
            let c = Rec32::new(k, &self.conn, params, r);
            let side = |tr: &Trajectory, t: usize| -> (f64, f64) {
                let (d, dv) = (tr.delta_ubar[t], tr.delta_v[t]);
                match part {
                    Part::Whole => (tr.suboptimality[t + 1], tr.suboptimality[t] + c.cu * d + c.cv * dv + c.sv + c.su * sigma),
                    Part::U => (tr.suboptimality[t + 1], tr.local[t].suboptimality_mid + c.u_step(d, sigma)),
                    Part::V => (tr.local[t].suboptimality_mid, tr.suboptimality[t] + c.v_step(dv, d, sigma)),
                }
            };
            let sides = |t: usize| Some(sources.iter().map(|tr| side(tr, t)).collect());
            let checks = assumptions.iter().cloned().chain(steps(part)).collect();
            let evaluation = evaluate_inequality(checks, rounds, &sides, estimator, CONFIDENCE, bound_scale);
            results.push(ClaimResult { claim: id, reading, constants: ConstantsSource::Estimated, evaluation, label: None, expected: None });
        }
        results
    }

    /// The step conditions at every horizon of the sweep (the proof's, or with `printed` the
    /// theorem's as printed), each named with its `T`, after the assumption checks.
    fn sweep_checks(&self, printed: bool, a4: A4) -> Vec<ConditionCheck> {
        let (k, conn) = (&self.k, &self.conn);
        let mut checks = self.assumptions(a4, self.horizon);
        for &t in &self.s.sweep {
            for mut check in step_checks(k, conn, &self.s.params(t, k.l_u, k.l_v), printed) {
                check.name = format!("T = {t}: {}", check.name);
                checks.push(check);
            }
        }
        checks
    }

    /// The exact metrics at every horizon of the sweep (`traj` is the run at the per-round
    /// horizon, reused where the sweep has it).
    fn sweep(&self, traj: &Trajectory) -> Result<Vec<SweepPoint>> {
        let (s, k) = (self.s, &self.k);
        let mut sweep = Vec::with_capacity(s.sweep.len());
        for &t in &s.sweep {
            let p = s.params(t, k.l_u, k.l_v);
            let tr = if t == s.rounds { traj.clone() } else { exact_trajectory(&self.inst, &p, &self.prefix(t), t)? };
            sweep.push(SweepPoint {
                rounds: t,
                slowest_mode_kappa: t as f64 * self.inst.slowest_contraction(p.k_u as f64 * p.eta_u, p.k_v as f64 * p.eta_v),
                params: p,
                connectivity: self.conn,
                metric: mean(&tr.stationarity(k.l_u, k.l_v)),
                metric_debiased: mean(&tr.stationarity_debiased(k.l_u, k.l_v)),
                consensus: mean(&tr.consensus[..t]),
                sigma_g2_visited: tr.diversity.iter().copied().fold(f64::NEG_INFINITY, nan_max),
            });
        }
        Ok(sweep)
    }

    /// Theorem 1 as an `O(.)` statement: the metric against the bracket of (33) over the sweep
    /// ([`evaluate_big_o`]), under the proof's step conditions and under the printed one.
    /// `f0 = F(ubar^0, V^0)`.
    fn theorem1_results(&self, sweep: &[SweepPoint], rate_checks: Vec<ConditionCheck>, f0: f64, a4: A4) -> [ClaimResult; 2] {
        let k = self.constants(a4);
        let shape: Vec<(usize, f64, f64)> = sweep.iter().map(|p| (p.rounds, p.metric, theorem1_shape(&k, &self.conn, self.s.k_u, f0, p.rounds))).collect();
        [
            ClaimResult {
                claim: "DPGP-T1",
                reading: "primary",
                constants: ConstantsSource::Estimated,
                evaluation: big_o_violation_if_settled(evaluate_big_o(&shape, rate_checks), &shape, settling(sweep, BIG_O_READS)),
                label: None,
                expected: None,
            },
            ClaimResult {
                claim: "DPGP-T1~printed-step",
                reading: "printed-step",
                constants: ConstantsSource::Estimated,
                evaluation: big_o_violation_if_settled(evaluate_big_o(&shape, self.sweep_checks(true, a4)), &shape, settling(sweep, BIG_O_READS)),
                label: None,
                expected: None,
            },
        ]
    }

    /// The rows of the restricted reading of Assumption 4 ([`VISITED`]): Lemma 3 and (32) with
    /// `sigma_g^2` the supremum of [`super::round::round_supremum`] over the per-round run, Theorem 1 and
    /// Corollary 1 with the supremum over every run of the sweep (where it was run); the same
    /// evaluations as the stated rows otherwise, labelled `empirical`.
    fn visited_results(
        &self,
        params: &Params,
        (sources, estimator): (&[&Trajectory], Estimator),
        traj: &Trajectory,
        sweep: Option<&[SweepPoint]>,
        bound_scale: f64,
    ) -> Vec<ClaimResult> {
        let sup = |x: &mut dyn Iterator<Item = f64>| x.fold(f64::NEG_INFINITY, nan_max);
        let run = A4::Visited(sup(&mut traj.diversity.iter().copied()));
        let swept = A4::Visited(sup(&mut sweep.unwrap_or_default().iter().map(|p| p.sigma_g2_visited)));
        let mut rows = self.per_round_results(params, sources, estimator, bound_scale, run);
        if let Some(sweep) = sweep {
            let rate_checks = self.sweep_checks(false, swept);
            rows.extend(self.theorem1_results(sweep, rate_checks.clone(), traj.objective[0], swept));
            rows.extend(corollary1_results(sweep, self.horizon, rate_checks, bound_scale).1);
        }
        rows.into_iter()
            .filter_map(|r| {
                let (id, reading) = VISITED.iter().find(|(of, _, _)| *of == r.claim).map(|(_, id, reading)| (*id, *reading))?;
                let value = if id.starts_with("DPGP-L3") || id.starts_with("DPGP-REC32") { run } else { swept };
                let A4::Visited(v) = value else { return None };
                let label = Some(format!("sigma_g^2 over the proof's points = {}", crate::claim::fmt_num(v)));
                Some(ClaimResult { claim: id, reading, constants: ConstantsSource::Empirical, label, ..r })
            })
            .collect()
    }
}

/// Which part of a round's change of `F` a descent inequality bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The whole round, (32).
    Whole,
    /// The u-step, (26).
    U,
    /// The v-step, (31).
    V,
}

/// The descent inequalities: (claim, reading name, reading of the coefficients, part).
const DESCENT: [(&str, &str, Rec32Reading, Part); 7] = [
    ("DPGP-REC32", "primary", Rec32Reading::Primary, Part::Whole),
    ("DPGP-REC32~printed-sv", "printed-sv", Rec32Reading::PrintedSv, Part::Whole),
    ("DPGP-REC32~bracket-aa", "bracket-aa", Rec32Reading::BracketAa, Part::Whole),
    ("DPGP-EQ26", "primary", Rec32Reading::Primary, Part::U),
    ("DPGP-EQ26~bracket-aa", "bracket-aa", Rec32Reading::BracketAa, Part::U),
    ("DPGP-EQ31", "primary", Rec32Reading::Primary, Part::V),
    ("DPGP-EQ31~printed-sv", "printed-sv", Rec32Reading::PrintedSv, Part::V),
];

/// Which reading of Assumption 4 a set of rows uses.
#[derive(Debug, Clone, Copy)]
enum A4 {
    /// As printed: the supremum over all `u`, `V` (004:L121), infinite on most instances.
    Stated,
    /// Restricted to the points where Lemmas 2 and 3 use it, this value ([`super::round::round_supremum`]).
    Visited(f64),
}

/// The claims read with the restricted Assumption 4: (stated claim, variant id, reading name).
pub const VISITED: [(&str, &str, &str); 5] = [
    ("DPGP-L3", "DPGP-L3~visited-sg", "visited-sg"),
    ("DPGP-REC32", "DPGP-REC32~visited-sg", "visited-sg"),
    ("DPGP-T1", "DPGP-T1~visited-sg", "visited-sg"),
    ("DPGP-C1", "DPGP-C1~visited-sg", "visited-sg"),
    ("DPGP-C1~debiased-z", "DPGP-C1~debiased-z-visited-sg", "debiased-z-visited-sg"),
];

/// `sigma_u^2 + sigma_g^2` (with `sigma_g^2 = 0` where it is infinite).
fn sigma_sum(k: &Constants) -> f64 {
    k.sigma_u.powi(2) + k.sigma_g2.value.unwrap_or(0.0)
}

/// Corollary 1's rate over the sweep: the slope fit of the metric, and the rate claims (the
/// printed metric against `T^(-1/2)` and, as a negative control, `T^(-1)`; the de-biased metric
/// against `T^(-1/2)`).
/// The horizons an `O(.)` verdict reads: the three largest ([`crate::kinds::big_o`]).
const BIG_O_READS: usize = 3;

/// The settling of `sweep` at the first of its `reads` largest horizons (the smallest when there
/// are fewer).
fn settling(sweep: &[SweepPoint], reads: usize) -> Settling {
    let points: Vec<(usize, f64)> = sweep.iter().map(|p| (p.rounds, p.slowest_mode_kappa)).collect();
    Settling::of_sweep(&points, sweep.len().saturating_sub(reads))
}

fn corollary1_results(sweep: &[SweepPoint], horizon: usize, rate_checks: Vec<ConditionCheck>, bound_scale: f64) -> (Option<SlopeFit>, Vec<ClaimResult>) {
    // A rate is fitted over every horizon: it is read from the smallest.
    let at = |e: Evaluation| rate_violation_if_settled(e, settling(sweep, sweep.len()));
    let ts: Vec<usize> = sweep.iter().map(|p| p.rounds).collect();
    let ys: Vec<f64> = sweep.iter().map(|p| p.metric).collect();
    let fit = fit_slope(&ts, &ys, CONFIDENCE);
    let series = sweep_series(&ts, &ys);
    // The same rate with Delta_v^t read at the de-biased z_i^t (004:L133 prints u_i^t).
    let ys_debiased: Vec<f64> = sweep.iter().map(|p| p.metric_debiased).collect();
    let debiased =
        at(evaluate_rate(fit_slope(&ts, &ys_debiased, CONFIDENCE), C1_EXPONENT, horizon, sweep_series(&ts, &ys_debiased), rate_checks.clone(), bound_scale));
    let results = vec![
        ClaimResult {
            claim: "DPGP-C1",
            reading: "primary",
            constants: ConstantsSource::Estimated,
            evaluation: at(evaluate_rate(fit, C1_EXPONENT, horizon, series.clone(), rate_checks.clone(), bound_scale)),
            label: None,
            expected: None,
        },
        ClaimResult {
            claim: "DPGP-C1~rate-inv-T",
            reading: "rate-inv-T",
            constants: ConstantsSource::Estimated,
            evaluation: at(evaluate_rate(fit, INV_T_EXPONENT, horizon, series, rate_checks, bound_scale)),
            label: None,
            expected: None,
        },
        ClaimResult {
            claim: "DPGP-C1~debiased-z",
            reading: "debiased-z",
            constants: ConstantsSource::Estimated,
            evaluation: debiased,
            label: None,
            expected: None,
        },
    ];
    (fit, results)
}

/// Evaluates card-defined claims on a scenario's exact trajectory at its horizon `rounds` (the
/// steps of that horizon), each after the family's assumption checks.
pub fn evaluate_card_claims(claims: &[&CardClaim], rounds: usize, run: &ScenarioRun, bound_scale: f64) -> Vec<ClaimResult> {
    let (k, tr) = (&run.constants, &run.trajectory);
    let x = Inputs { constants: k.clone(), connectivity: run.connectivity, params: run.params, f0: tr.objective[0], t: rounds };
    let inputs = CardInputs::new(&x);
    claims
        .iter()
        .map(|c| {
            let series = per_round_metric(c.claim.metric, k, tr);
            let claim = WithAssumptions { claim: c, assumptions: assumption_checks(k, &run.connectivity, rounds, run.u0) };
            let evaluation = evaluate(&claim, &inputs, &[series[..rounds].to_vec()], Estimator::Exact, CONFIDENCE, bound_scale);
            ClaimResult { claim: c.id(), reading: "primary", constants: constants_label(c), evaluation, label: None, expected: None }
        })
        .collect()
}

/// The per-round series of a scenario's run at its per-round horizon `T` (exact expectations,
/// index `t` = round `t`), as `run` writes them beside the sweep.
#[derive(Debug, Clone, Serialize)]
pub struct RunSeries {
    /// `T`.
    pub rounds: usize,
    /// Theorem 1's metric `E Delta_ubar^t / L_u + E Delta_v^t / L_v`, `t < T` (004:L131-138).
    pub stationarity: Vec<f64>,
    /// The same with `Delta_v^t` at the de-biased `z_i^t` (DPGP-C1~debiased-z), `t < T`.
    pub stationarity_debiased: Vec<f64>,
    /// `E Delta_ubar^t = E||grad_u F(ubar^t, V^{t+1})||^2`, `t < T` (004:L133).
    pub delta_ubar: Vec<f64>,
    /// `E Delta_v^t` at the printed `u_i^t`, `t <= T` (004:L133).
    pub delta_v: Vec<f64>,
    /// `(1/m) sum_i E||grad_v F_i(z_i^t, v_i^t)||^2`, `t <= T`.
    pub delta_v_debiased: Vec<f64>,
    /// Lemma 3's left side `(1/m) sum_i E||ubar^t - z_i^t||^2`, `t <= T` (004:L522).
    pub consensus: Vec<f64>,
    /// The same at the raw numerators `u_i^t`, `t <= T`.
    pub consensus_raw: Vec<f64>,
    /// Lemma 3's right side `AA (sigma_u^2 + sigma_g^2 + E Delta_ubar^t)`, `t < T` (stated
    /// constants, `sigma_g^2 = 0` where infinite; the primary `AA`).
    pub lemma3_bound: Vec<f64>,
    /// `E F(ubar^t, V^t) - F*`, `t <= T`: the suboptimality (32) recurses on (004:L590).
    pub suboptimality: Vec<f64>,
    /// `max_{i, k < K_u} E||grad_u F_i(z_i^{t,k}, v_i^{t+1}) - grad_u F(z_i^{t,k}, V^{t+1})||^2`,
    /// `t < T`: Assumption 4's difference where Lemmas 2 and 3 use it (004:L503, L532).
    pub sigma_g2_visited: Vec<f64>,
}

impl RunSeries {
    /// The series of `run`.
    pub fn of(run: &ScenarioRun) -> Self {
        let (tr, k) = (&run.trajectory, &run.constants);
        Self {
            rounds: tr.delta_ubar.len(),
            stationarity: tr.stationarity(k.l_u, k.l_v),
            stationarity_debiased: tr.stationarity_debiased(k.l_u, k.l_v),
            delta_ubar: tr.delta_ubar.clone(),
            delta_v: tr.delta_v.clone(),
            delta_v_debiased: tr.delta_v_debiased.clone(),
            consensus: tr.consensus.clone(),
            consensus_raw: tr.consensus_raw.clone(),
            lemma3_bound: run.lemma3_bound.clone(),
            suboptimality: tr.suboptimality.clone(),
            sigma_g2_visited: tr.diversity.clone(),
        }
    }
}

/// The `run` command's JSON: the scenario's summary (as the report's per-scenario file holds it)
/// followed by its per-round [`RunSeries`].
#[derive(Serialize)]
pub struct RunFile<S: Serialize> {
    /// The summary's fields, at top level.
    #[serde(flatten)]
    pub summary: S,
    /// The per-round series.
    pub series: RunSeries,
}

/// The explicit form of a scenario file's instance and graphs, for `run --export-instance`
/// ([`Scenario::explicit_file`]) as TOML.
///
/// # Errors
/// Bad input naming the field (as `run`); [`crate::Error::Serialization`].
pub fn export_instance(text: &str, what: &str) -> Result<String> {
    let s = super::card::parse_scenario(text, what)?;
    let (inst, _) = prepare(&s).map_err(|e| e.in_scenario(&s.name))?;
    let file = toml::to_string(&s.explicit_file(&inst)).map_err(|e| crate::Error::serialization("the explicit instance", e))?;
    Ok(format!("# The instance and graphs of scenario `{}` ({what}), written out; `fedbounds run` on this file gives the same results.\n{file}", s.name))
}
