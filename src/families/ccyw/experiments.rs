//! The paper's experiments (section 5, Figures 1a-d and 2a-c, 000:L669-685) mirrored on
//! quadratics, with every qualitative statement the paper draws from its figures checked by
//! computation.
//!
//! Curves are exact expected metrics `G_u^t + hat G_v^t` (moment propagation, no sampling
//! error). The steady state of a setting is exact too: the metric at the fixed point of the moment
//! recursion ([`crate::engine::stationary_moments`]). The descent time is the first round
//! at which the curve is within 10% of its steady state; a curve that does not get there within its
//! rounds makes a statement about speed inconclusive.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::claim::Horizon;
use crate::engine::InclusionMoments;
use crate::error::{Error, Result};
use crate::families::ccyw::algorithm::{AlgorithmKind, RoundConfig};
use crate::families::ccyw::check;
use crate::families::ccyw::claims::fedavg_p::CcywClaim;
use crate::families::ccyw::claims::scaffold_p::ScaffoldClaim;
use crate::families::ccyw::claims::{Claim, ConditionKind};
use crate::families::ccyw::exact::{exact_metric_series, stationary_summary};
use crate::families::ccyw::problem::{Coupling, InstanceSpec, ProblemConstants};
use crate::verdict::VerdictKind;

pub use super::prec::INDEPENDENCE_TOLERANCE;
use super::prec::STEADY_STATE_BAND;

/// How a setting's outer steps are chosen (the paper does not state its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OuterSteps {
    /// The smallest values Theorems 3.7 and 4.5 admit: `eta_u = sqrt(m)`, `eta_v = sqrt(n/m)`.
    Smallest,
    /// Theorem 3.11's condition at `T` = the setting's rounds: `eta_u = max(T, sqrt(B^0 T/(n L F0)),
    /// sqrt(n))`, `eta_v = 1` (000:L421).
    Theorem311,
}

/// One setting of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// Legend label, e.g. `gamma = 0.001`.
    pub label: String,
    /// The algorithm.
    pub algorithm: AlgorithmKind,
    /// Instance recipe.
    pub instance: InstanceSpec,
    /// `K`.
    pub k: usize,
    /// `m`.
    pub m: usize,
    /// Effective step `gamma`.
    pub gamma: f64,
    /// Outer steps.
    pub outer: OuterSteps,
    /// Rounds.
    pub rounds: usize,
}

/// The theorem whose `T -> infinity` bound a curve is compared with.
#[derive(Debug, Clone, Serialize)]
pub struct SteadyBound {
    /// Claim id, e.g. `CCYW-T3.7`.
    pub claim: &'static str,
    /// The bound's `gamma` terms (its `1/T` terms vanish): an upper bound on the steady state
    /// wherever the theorem applies for every large `T`.
    pub value: f64,
    /// The claim's assumptions and conditions that fail at `T` = the setting's rounds (empty: it
    /// applies).
    pub failed: Vec<String>,
}

/// A computed curve.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    /// The setting.
    pub setting: Setting,
    /// Outer steps used.
    pub eta_u: f64,
    /// Outer step on `v`.
    pub eta_v: f64,
    /// `E(G_u^t + hat G_v^t)` for `t = 0..rounds` (not serialized: see [`Curve::thinned`]).
    #[serde(skip)]
    pub metric: Vec<f64>,
    /// The metric at the exact stationary moments.
    pub steady_state: f64,
    /// Whether the curve came within 10% of its steady state within its rounds.
    pub at_steady_state: bool,
    /// First round within 10% of the steady state (the number of rounds if never).
    pub descent_rounds: usize,
    /// The theorem's steady-state bound; `None` where it is infinite (`b^2` infinite).
    pub steady_bound: Option<SteadyBound>,
}

impl Curve {
    /// The curve at rounds 0, 1, 2, 5, 10, 20, 50, ... and every 250th: enough to redraw it.
    pub fn thinned(&self) -> Vec<(usize, f64)> {
        let mut keep: Vec<usize> = (0..self.metric.len()).step_by(250).collect();
        let mut decade = 1;
        while decade < self.metric.len() {
            keep.extend([decade, 2 * decade, 5 * decade].into_iter().filter(|t| *t < self.metric.len()));
            decade *= 10;
        }
        keep.push(self.metric.len() - 1);
        keep.sort_unstable();
        keep.dedup();
        keep.into_iter().map(|t| (t, self.metric[t])).collect()
    }
}

/// A sweep: one figure.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Id, e.g. `fig1a`.
    pub id: &'static str,
    /// What the paper's figure shows.
    pub title: &'static str,
    /// Curves, one per setting.
    pub curves: Vec<Curve>,
}

/// A qualitative statement of section 5 and its computed verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    /// Id, e.g. `CCYW-FIG1A-STEADY`.
    pub id: &'static str,
    /// The statement, as the paper draws it from its figure.
    pub statement: &'static str,
    /// Source lines.
    pub source: &'static str,
    /// Holds, violated, or inconclusive (not at steady state).
    pub verdict: VerdictKind,
    /// The numbers behind the verdict.
    pub evidence: Vec<(String, f64)>,
    /// One line of explanation.
    pub detail: String,
    /// The verdict the experiments card expects (`None` until [`apply_card`]).
    pub expected: Option<VerdictKind>,
    /// The card's note on this statement.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Statement {
    fn new(id: &'static str, statement: &'static str, source: &'static str, verdict: VerdictKind, evidence: Vec<(String, f64)>, detail: String) -> Self {
        Self { id, statement, source, verdict, evidence, detail, expected: None, note: String::new() }
    }

    /// Whether the verdict is the one the card expects (true when the card names none).
    pub fn matches_expected(&self) -> bool {
        self.expected.is_none_or(|e| e == self.verdict)
    }
}

/// The sweeps' instance: the paper's n = 10 clients, small blocks (du = 2, dv = 1) so that the
/// exact steady state (a linear system over the entries of a symmetric second-moment matrix)
/// stays cheap for Scaffold-P's larger state.
fn base_instance(b: f64, sigma_v: f64) -> InstanceSpec {
    InstanceSpec { n: 10, du: 2, dv: 1, l: 1.0, mu: 0.1, sigma_u: 0.5, sigma_v, b, coupling: Coupling::Decoupled, init_distance: 3.0, seed: 41 }
}

/// As [`base_instance`] with client Hessians that differ (`Coupling::Coupled`): local runs then
/// drift apart even in expectation, which a decoupled instance (common shared block, heterogeneity
/// only in the linear terms) cannot show; `b^2` is infinite, so only full-participation claims apply.
fn heterogeneous_hessians(b: f64) -> InstanceSpec {
    InstanceSpec { coupling: Coupling::Coupled, ..base_instance(b, 0.5) }
}

/// The paper's defaults (000:L677): gamma = 0.001, m = 9, K = 25, n = 10.
const GAMMA: f64 = 0.001;
const ROUNDS: usize = 12000;

fn setting(label: String, algorithm: AlgorithmKind, instance: InstanceSpec, k: usize, m: usize, gamma: f64) -> Setting {
    Setting { label, algorithm, instance, k, m, gamma, outer: OuterSteps::Smallest, rounds: ROUNDS }
}

/// Computes one curve: exact expected metric per round, exact steady state, and the bound of the
/// theorem the figure illustrates (Theorem 3.7 for FedAvg-P with `m < n`, Theorem 3.11 with
/// `m = n`, Theorem 4.5 for Scaffold-P).
///
/// # Errors
/// If the instance or the parameters are invalid, or the moment recursion has no steady state.
pub fn curve(s: &Setting) -> Result<Curve> {
    if s.rounds == 0 {
        return Err(Error::field("setting.rounds", "got 0", "an integer >= 1"));
    }
    let inst = s.instance.build()?;
    let c = ProblemConstants::compute(&inst)?;
    let n = inst.layout().n;
    let claim: &'static dyn Claim = match s.algorithm {
        AlgorithmKind::FedavgP if s.m == n => &CcywClaim::Theorem311 { literal_b0: false },
        AlgorithmKind::FedavgP => &CcywClaim::Theorem37,
        AlgorithmKind::ScaffoldP => &ScaffoldClaim::Theorem45,
    };
    let base = check::base_inputs(&inst, &c, s.k, s.m, s.rounds);
    let (eta_u, eta_v) = match s.outer {
        OuterSteps::Smallest => ((s.m as f64).sqrt(), (n as f64 / s.m as f64).sqrt()),
        OuterSteps::Theorem311 => {
            let admissible = CcywClaim::Theorem311 { literal_b0: false }.admissible(&base);
            (admissible.eta_u.value(), admissible.eta_v.value())
        }
    };
    let params = RoundConfig { k: s.k, m: s.m, gamma_u: s.gamma / eta_u, gamma_v: s.gamma / eta_v, eta_u, eta_v }.check(n)?;
    let alg = s.algorithm.build(params);
    let inc = InclusionMoments::without_replacement(n, s.m);
    let metric_of = claim.metric();
    // The steady state first: a state too large for its system is refused before the series runs.
    let stationary =
        stationary_summary(&inst, alg.as_ref(), &inc)?.ok_or_else(|| Error::Numerical(format!("{}: the moment recursion has no steady state", s.label)))?;
    let metric = exact_metric_series(&inst, alg.as_ref(), s.rounds, &inc, metric_of);
    let steady_state = metric_of.value(&stationary, s.m, n);
    // Descent: the round from which the curve stays within 10% of its steady state (a NaN round
    // is outside, so a curve that ends in NaN never settles).
    let within = |m: f64| (m / steady_state - 1.0).abs() <= STEADY_STATE_BAND;
    let outside = metric.iter().rposition(|m| !within(*m));
    let (at_steady_state, descent_rounds) = match outside {
        None => (true, 0),
        Some(t) if t + 1 < metric.len() => (true, t + 1),
        Some(_) => (false, s.rounds),
    };
    let x = check::claim_inputs(&inst, &c, &params, s.rounds);
    // The gamma terms: the bound at T = infinity, an upper bound on the steady state only where
    // the conditions hold at T = rounds and keep holding as T grows.
    let value = claim.bound(&x.at_horizon(usize::MAX));
    let mut failed: Vec<String> = Vec::new();
    for (checks, when) in [(claim.checks(&x), ""), (claim.checks(&x.at_horizon(usize::MAX)), " as T -> infinity")] {
        for k in checks.iter().filter(|k| !k.holds && k.kind != ConditionKind::Implicit) {
            let (given, required) = crate::claim::fmt_pair(k.given, k.required);
            let line = format!("{}{when} (given {given}, required {required})", k.name);
            if !failed.iter().any(|f| f.starts_with(&k.name)) {
                failed.push(line);
            }
        }
    }
    let steady_bound = value.is_finite().then_some(SteadyBound { claim: claim.id(), value, failed });
    Ok(Curve { setting: s.clone(), eta_u, eta_v, metric, steady_state, at_steady_state, descent_rounds, steady_bound })
}

/// The sweeps of Figures 1a-d and 2a-c.
pub fn sweep_settings() -> Vec<(&'static str, &'static str, Vec<Setting>)> {
    use AlgorithmKind::{FedavgP, ScaffoldP};
    let gammas = [GAMMA, GAMMA / 2.0, GAMMA / 4.0];
    let by_gamma = |alg| gammas.iter().map(|g| setting(format!("gamma = {g}"), alg, base_instance(2.0, 0.5), 25, 9, *g)).collect();
    let by_m = |alg| [3usize, 6, 9].iter().map(|m| setting(format!("m = {m}"), alg, base_instance(2.0, 0.0), 25, *m, GAMMA)).collect();
    let by_k = |alg, m| [5usize, 10, 25].iter().map(|k| setting(format!("K = {k}"), alg, base_instance(2.0, 0.5), *k, m, GAMMA)).collect();
    let by_b = |alg, m| [0.5f64, 2.0, 5.0].iter().map(|b| setting(format!("b = {b}"), alg, base_instance(*b, 0.5), 25, m, GAMMA)).collect();
    let full = |label: String, b: f64, k: usize, outer: OuterSteps| Setting { outer, ..setting(label, FedavgP, heterogeneous_hessians(b), k, 10, GAMMA) };
    let full_by_k = [5usize, 10, 25].iter().map(|k| full(format!("K = {k}"), 2.0, *k, OuterSteps::Theorem311)).collect();
    let full_by_b = |outer| [0.5f64, 2.0, 5.0].iter().map(|b| full(format!("gradient spread {b}"), *b, 25, outer)).collect();
    vec![
        ("fig1a", "FedAvg-P, varying gamma (m = 9, K = 25)", by_gamma(FedavgP)),
        ("fig2a", "Scaffold-P, varying gamma (m = 9, K = 25)", by_gamma(ScaffoldP)),
        ("fig1b", "FedAvg-P, varying m with sigma_v = 0 (K = 25)", by_m(FedavgP)),
        ("fig2b", "Scaffold-P, varying m with sigma_v = 0 (K = 25)", by_m(ScaffoldP)),
        ("fig1c", "FedAvg-P, varying K (m = 9 of 10)", by_k(FedavgP, 9)),
        ("fig2c", "Scaffold-P, varying K (m = 9 of 10)", by_k(ScaffoldP, 9)),
        ("fig2c-b", "Scaffold-P, varying b (m = 9 of 10)", by_b(ScaffoldP, 9)),
        ("fig1d", "FedAvg-P, full participation, varying K (heterogeneous Hessians, eta_u per Theorem 3.11)", full_by_k),
        (
            "fig1d-b",
            "FedAvg-P, full participation, varying gradient spread (heterogeneous Hessians, eta_u per Theorem 3.11)",
            full_by_b(OuterSteps::Theorem311),
        ),
        (
            "fig1d-b-small-eta",
            "FedAvg-P, full participation, varying gradient spread at eta_u = sqrt(n) (outside Theorem 3.11)",
            full_by_b(OuterSteps::Smallest),
        ),
        (
            "fig2c-vs",
            "FedAvg-P vs Scaffold-P at high heterogeneity b = 5 (m = 9, K = 25)",
            by_b(FedavgP, 9)
                .into_iter()
                .chain(by_b(ScaffoldP, 9))
                .filter(|s: &Setting| s.instance.b == 5.0)
                .map(|mut s: Setting| {
                    s.label = format!("{} b = 5", s.algorithm.name());
                    s
                })
                .collect(),
        ),
    ]
}

/// Computes every sweep, curves in parallel (each curve is computed alone, so the result does not
/// depend on the number of threads); `progress` is called once per finished curve.
///
/// # Errors
/// If a setting is invalid (a test guards the built-in ones).
pub fn run_sweeps(progress: &(dyn Fn() + Sync)) -> Result<Vec<Sweep>> {
    let plan = sweep_settings();
    let unique = distinct_settings(&plan);
    let computed = unique
        .par_iter()
        .map(|s| {
            let c = curve(s);
            progress();
            c
        })
        .collect::<Result<Vec<Curve>>>()?;
    // A setting shared by several sweeps (e.g. the paper's defaults) is computed once.
    let lookup = |s: &Setting| -> Curve {
        let i = unique.iter().position(|u| same_run(u, s)).expect("every setting is among the distinct ones");
        Curve { setting: s.clone(), ..computed[i].clone() }
    };
    Ok(plan.iter().map(|(id, title, settings)| Sweep { id, title, curves: settings.iter().map(lookup).collect() }).collect())
}

/// Whether two settings describe the same run (labels aside).
fn same_run(a: &Setting, b: &Setting) -> bool {
    Setting { label: String::new(), ..a.clone() } == Setting { label: String::new(), ..b.clone() }
}

fn distinct_settings(plan: &[(&'static str, &'static str, Vec<Setting>)]) -> Vec<Setting> {
    let mut unique: Vec<Setting> = Vec::new();
    for s in plan.iter().flat_map(|(_, _, settings)| settings) {
        if !unique.iter().any(|u| same_run(u, s)) {
            unique.push(s.clone());
        }
    }
    unique
}

/// Number of distinct curves [`run_sweeps`] computes.
pub fn curve_count() -> usize {
    distinct_settings(&sweep_settings()).len()
}

/// The experiments card (`theorems/ccyw-experiments.toml`): the verdict expected of each statement.
pub const EXPERIMENTS_CARD: (&str, &str) = ("theorems/ccyw-experiments.toml", include_str!("../../../theorems/ccyw-experiments.toml"));

/// The experiments card.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentCard {
    /// What the card covers.
    pub family: ExperimentFamily,
    /// Expected verdicts.
    pub statements: Vec<ExpectedStatement>,
}

/// The experiments card's header.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFamily {
    /// Id.
    pub id: String,
    /// Paper and section.
    pub paper: String,
    /// Paper text files.
    pub source_files: Vec<String>,
    /// The sweeps, in words.
    pub sweeps: String,
}

/// The verdict expected of one statement.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedStatement {
    /// Statement id.
    pub id: String,
    /// Expected verdict.
    pub expected: VerdictKind,
    /// Why (optional).
    #[serde(default)]
    pub note: String,
}

/// Ids of the statements [`statements`] checks, in its order.
pub const STATEMENT_IDS: [&str; 13] = statement_ids(&STATEMENTS);

/// Parses an experiments card and checks that it names each statement exactly once.
///
/// # Errors
/// [`Error::Parse`] for malformed TOML or unknown keys; [`Error::InvalidField`] for an unknown,
/// repeated or missing statement id.
pub fn parse_experiment_card(text: &str, what: &str) -> Result<ExperimentCard> {
    let card: ExperimentCard = crate::card::parse_toml(text, what)?;
    for (i, s) in card.statements.iter().enumerate() {
        if !STATEMENT_IDS.contains(&s.id.as_str()) {
            return Err(Error::field(format!("statements[{i}].id"), format!("unknown statement `{}`", s.id), STATEMENT_IDS.join(", ")));
        }
        if card.statements[..i].iter().any(|o| o.id == s.id) {
            return Err(Error::field(format!("statements[{i}].id"), format!("`{}` appears twice", s.id), "unique statement ids"));
        }
    }
    if let Some(missing) = STATEMENT_IDS.iter().find(|id| !card.statements.iter().any(|s| s.id == **id)) {
        return Err(Error::field("statements", format!("no expected verdict for `{missing}`"), STATEMENT_IDS.join(", ")));
    }
    Ok(card)
}

/// The embedded experiments card.
///
/// # Errors
/// As [`parse_experiment_card`] (a test guards the embedded text).
pub fn embedded_experiment_card() -> Result<ExperimentCard> {
    parse_experiment_card(EXPERIMENTS_CARD.1, EXPERIMENTS_CARD.0)
}

/// Fills each statement's expected verdict and note from the card.
pub fn apply_card(statements: &mut [Statement], card: &ExperimentCard) {
    for s in statements {
        if let Some(e) = card.statements.iter().find(|e| e.id == s.id) {
            s.expected = Some(e.expected);
            s.note = e.note.clone();
        }
    }
}

/// Sweeps and checked statements: what the experiments report shows.
#[derive(Debug, Clone, Serialize)]
pub struct Experiments {
    /// The sweeps.
    pub sweeps: Vec<Sweep>,
    /// The statements with computed and expected verdicts.
    pub statements: Vec<Statement>,
}

impl Experiments {
    /// Runs every sweep and checks every statement against the embedded card.
    ///
    /// # Errors
    /// As [`run_sweeps`] and [`embedded_experiment_card`].
    pub fn run(progress: &(dyn Fn() + Sync)) -> Result<Self> {
        let card = embedded_experiment_card()?;
        let sweeps = run_sweeps(progress)?;
        let mut statements = statements(&sweeps);
        apply_card(&mut statements, &card);
        Ok(Self { sweeps, statements })
    }

    /// Statements whose verdict differs from the card.
    pub fn mismatches(&self) -> Vec<&Statement> {
        self.statements.iter().filter(|s| !s.matches_expected()).collect()
    }
}

fn find<'a>(sweeps: &'a [Sweep], id: &str) -> &'a [Curve] {
    sweeps.iter().find(|s| s.id == id).map(|s| s.curves.as_slice()).unwrap_or(&[])
}

fn evidence(curves: &[Curve], what: &str, f: impl Fn(&Curve) -> f64) -> Vec<(String, f64)> {
    curves.iter().map(|c| (format!("{} {what}", c.setting.label), f(c))).collect()
}

/// `values` strictly increasing along the sweep order.
fn increasing(values: &[f64]) -> bool {
    values.windows(2).all(|w| w[1] > w[0])
}

/// Whether every sweep a statement compares has at least two curves with finite steady states: a
/// missing sweep or a lone curve must not make an ordering hold vacuously.
fn comparable(groups: &[&[Curve]]) -> bool {
    groups.iter().all(|g| g.len() >= 2 && g.iter().all(|c| c.steady_state.is_finite()))
}

/// A statement about steady states: they are exact fixed points, so the verdict is decided
/// (inconclusive only when there is nothing to compare).
fn steady_verdict(groups: &[&[Curve]], holds: bool) -> VerdictKind {
    if !comparable(groups) {
        VerdictKind::Inconclusive
    } else if holds {
        VerdictKind::Holds
    } else {
        VerdictKind::Violated
    }
}

/// A statement about descent times: also inconclusive when some curve never settled within 10% of
/// its steady state (its descent time is then only a lower bound).
fn rate_verdict(groups: &[&[Curve]], holds: bool) -> VerdictKind {
    if groups.iter().any(|g| g.iter().any(|c| !c.at_steady_state)) {
        VerdictKind::Inconclusive
    } else {
        steady_verdict(groups, holds)
    }
}

/// Relative spread `max/min - 1` of the curves' steady states.
fn spread(curves: &[Curve]) -> f64 {
    let (lo, hi) = curves.iter().fold((f64::INFINITY, 0.0f64), |(a, b), c| (a.min(c.steady_state), b.max(c.steady_state)));
    hi / lo - 1.0
}

/// A statement's computed verdict, the numbers behind it and one line of explanation.
struct Outcome {
    verdict: VerdictKind,
    evidence: Vec<(String, f64)>,
    detail: String,
}

/// A qualitative statement of section 5: its id, the statement, its source lines, and how it is
/// checked on the sweeps.
struct StatementCheck {
    id: &'static str,
    statement: &'static str,
    source: &'static str,
    check: fn(&[Sweep]) -> Outcome,
}

const SMALLER_GAMMA_STEADY: &str = "a smaller gamma gives a smaller steady-state error";
const SMALLER_GAMMA_RATE: &str = "a smaller gamma gives slower convergence";
const FIG_A: &str = "000:L677-679 (Figs. 1a, 2a)";
const MORE_CLIENTS_STEADY: &str = "with sigma_v = 0, more participating clients m give a smaller steady-state error";
const FIG_B: &str = "000:L679-681 (Figs. 1b, 2b)";

/// Every statement [`statements`] checks, in order.
const STATEMENTS: [StatementCheck; 13] = [
    StatementCheck { id: "CCYW-FIG1A-STEADY", statement: SMALLER_GAMMA_STEADY, source: FIG_A, check: |s| gamma_steady(s, "fig1a", "FedAvg-P") },
    StatementCheck { id: "CCYW-FIG1A-RATE", statement: SMALLER_GAMMA_RATE, source: FIG_A, check: |s| gamma_rate(s, "fig1a", "FedAvg-P") },
    StatementCheck { id: "CCYW-FIG2A-STEADY", statement: SMALLER_GAMMA_STEADY, source: FIG_A, check: |s| gamma_steady(s, "fig2a", "Scaffold-P") },
    StatementCheck { id: "CCYW-FIG2A-RATE", statement: SMALLER_GAMMA_RATE, source: FIG_A, check: |s| gamma_rate(s, "fig2a", "Scaffold-P") },
    StatementCheck { id: "CCYW-FIG1B-STEADY", statement: MORE_CLIENTS_STEADY, source: FIG_B, check: |s| clients_steady(s, "fig1b", "FedAvg-P") },
    StatementCheck { id: "CCYW-FIG2B-STEADY", statement: MORE_CLIENTS_STEADY, source: FIG_B, check: |s| clients_steady(s, "fig2b", "Scaffold-P") },
    StatementCheck {
        id: "CCYW-FIG1C-RATE",
        statement: "a larger K accelerates convergence (FedAvg-P and Scaffold-P)",
        source: "000:L683 (Figs. 1c, 2c)",
        check: local_steps_rate,
    },
    StatementCheck {
        id: "CCYW-FIG1C-STEADY",
        statement: "with partial participation, a larger K gives FedAvg-P a larger steady-state gradient norm",
        source: "000:L683 (Fig. 1c), from Theorem 3.7's (n-m) K b^2 gamma and K^2 b^2 gamma^2 terms",
        check: local_steps_steady,
    },
    StatementCheck {
        id: "CCYW-FIG2C-STEADY",
        statement: "K and b^2 do not influence Scaffold-P's steady-state error",
        source: "000:L683 (Fig. 2c)",
        check: scaffold_independence,
    },
    StatementCheck {
        id: "CCYW-FIG2C-VS",
        statement: "Scaffold-P converges with a much smaller steady-state error than FedAvg-P (high heterogeneity)",
        source: "000:L683 (Fig. 2c; Remark 4.7)",
        check: scaffold_versus_fedavg,
    },
    StatementCheck {
        id: "CCYW-FIG1D-STEADY",
        statement: "with full participation, FedAvg-P's steady-state error is independent of K and b^2",
        source: "000:L685 (Fig. 1d; Theorem 3.11)",
        check: full_participation_independence,
    },
    StatementCheck {
        id: "CCYW-FIG1D-STEADY~any-eta",
        statement:
            "with full participation, FedAvg-P's steady-state error is independent of the heterogeneity, whatever eta_u (the figure's text names no eta_u)",
        source: "000:L685 read without Theorem 3.11's condition eta_u >= T (000:L421)",
        check: full_participation_any_eta,
    },
    StatementCheck {
        id: "CCYW-FIG-BOUNDS",
        statement: "each curve's steady state lies below its theorem's bound as T -> infinity (Theorems 3.7, 3.11, 4.5)",
        source: "000:L677-685 ('consistent with our convergence results')",
        check: steady_states_below_bounds,
    },
];

const fn statement_ids<const N: usize>(table: &[StatementCheck; N]) -> [&'static str; N] {
    let mut ids = [""; N];
    let mut i = 0;
    while i < N {
        ids[i] = table[i].id;
        i += 1;
    }
    ids
}

/// Checks every qualitative statement of section 5 on the computed sweeps.
pub fn statements(sweeps: &[Sweep]) -> Vec<Statement> {
    STATEMENTS
        .iter()
        .map(|s| {
            let o = (s.check)(sweeps);
            Statement::new(s.id, s.statement, s.source, o.verdict, o.evidence, o.detail)
        })
        .collect()
}

fn steady(c: &Curve) -> f64 {
    c.steady_state
}

fn descent(c: &Curve) -> f64 {
    c.descent_rounds as f64
}

/// The steady states of sweep `fig` decrease along its order.
fn steady_decreasing(sweeps: &[Sweep], fig: &str, detail: String) -> Outcome {
    let c = find(sweeps, fig);
    let ss: Vec<f64> = c.iter().map(steady).collect();
    Outcome { verdict: steady_verdict(&[c], ss.windows(2).all(|w| w[1] < w[0])), evidence: evidence(c, "steady state", steady), detail }
}

/// Figures 1a, 2a (sweep order: gamma decreasing): the steady states decrease.
fn gamma_steady(sweeps: &[Sweep], fig: &str, alg: &str) -> Outcome {
    steady_decreasing(sweeps, fig, format!("{alg}: steady states for gamma = 0.001, 0.0005, 0.00025"))
}

/// Figures 1a, 2a: the descent times increase as gamma decreases.
fn gamma_rate(sweeps: &[Sweep], fig: &str, alg: &str) -> Outcome {
    let c = find(sweeps, fig);
    let dr: Vec<f64> = c.iter().map(descent).collect();
    Outcome {
        verdict: rate_verdict(&[c], increasing(&dr)),
        evidence: evidence(c, "rounds to within 10% of steady state", descent),
        detail: format!("{alg}: descent times for decreasing gamma"),
    }
}

/// Figures 1b, 2b (sweep order: m increasing): the steady states decrease.
fn clients_steady(sweeps: &[Sweep], fig: &str, alg: &str) -> Outcome {
    steady_decreasing(sweeps, fig, format!("{alg}: m = 3, 6, 9; metric G_u + hat G_v, whose weight m/n on G_v itself grows with m (I-CCYW7)"))
}

/// Figures 1c, 2c (sweep order: K increasing): the descent times decrease for both algorithms.
fn local_steps_rate(sweeps: &[Sweep]) -> Outcome {
    let f1c = find(sweeps, "fig1c");
    let f2c = find(sweeps, "fig2c");
    let faster = |c: &[Curve]| c.windows(2).all(|w| w[1].descent_rounds < w[0].descent_rounds);
    Outcome {
        verdict: rate_verdict(&[f1c, f2c], faster(f1c) && faster(f2c)),
        evidence: [evidence(f1c, "FedAvg-P descent rounds", descent), evidence(f2c, "Scaffold-P descent rounds", descent)].concat(),
        detail: "K = 5, 10, 25 at m = 9".into(),
    }
}

/// Figure 1c: FedAvg-P's steady states increase with K.
fn local_steps_steady(sweeps: &[Sweep]) -> Outcome {
    let f1c = find(sweeps, "fig1c");
    let ss1c: Vec<f64> = f1c.iter().map(steady).collect();
    Outcome {
        verdict: steady_verdict(&[f1c], increasing(&ss1c)),
        evidence: evidence(f1c, "steady state", steady),
        detail: "FedAvg-P, K = 5, 10, 25 at m = 9 of 10, b = 2".into(),
    }
}

/// Figure 2c: Scaffold-P's steady states spread by at most [`INDEPENDENCE_TOLERANCE`] over K and b.
fn scaffold_independence(sweeps: &[Sweep]) -> Outcome {
    let f2c = find(sweeps, "fig2c");
    let f2cb = find(sweeps, "fig2c-b");
    let (sk, sb) = (spread(f2c), spread(f2cb));
    Outcome {
        verdict: steady_verdict(&[f2c, f2cb], sk <= INDEPENDENCE_TOLERANCE && sb <= INDEPENDENCE_TOLERANCE),
        evidence: [
            evidence(f2c, "steady state", steady),
            evidence(f2cb, "steady state", steady),
            vec![("relative spread over K".into(), sk), ("relative spread over b".into(), sb)],
        ]
        .concat(),
        detail: format!("independence means a relative spread <= {INDEPENDENCE_TOLERANCE} (the paper states no number)"),
    }
}

/// Figure 2c at b = 5: Scaffold-P's steady state below FedAvg-P's.
fn scaffold_versus_fedavg(sweeps: &[Sweep]) -> Outcome {
    let vs = find(sweeps, "fig2c-vs");
    let (fed, sca) = (vs.iter().find(|c| c.setting.algorithm == AlgorithmKind::FedavgP), vs.iter().find(|c| c.setting.algorithm == AlgorithmKind::ScaffoldP));
    let (f_ss, s_ss) = (fed.map_or(f64::NAN, |c| c.steady_state), sca.map_or(f64::NAN, |c| c.steady_state));
    Outcome {
        verdict: steady_verdict(&[vs], s_ss < f_ss),
        evidence: vec![("FedAvg-P steady state".into(), f_ss), ("Scaffold-P steady state".into(), s_ss), ("ratio FedAvg-P / Scaffold-P".into(), f_ss / s_ss)],
        detail: "b = 5, m = 9, K = 25; 'much smaller' is reported as the ratio, the check is the strict order".into(),
    }
}

/// Figure 1d: with full participation and Theorem 3.11's eta_u, FedAvg-P's steady states spread by
/// at most [`INDEPENDENCE_TOLERANCE`] over K and the gradient spread.
fn full_participation_independence(sweeps: &[Sweep]) -> Outcome {
    let f1d = find(sweeps, "fig1d");
    let f1db = find(sweeps, "fig1d-b");
    let (dk, db) = (spread(f1d), spread(f1db));
    Outcome {
        verdict: steady_verdict(&[f1d, f1db], dk <= INDEPENDENCE_TOLERANCE && db <= INDEPENDENCE_TOLERANCE),
        evidence: [evidence(f1d, "steady state", steady), evidence(f1db, "steady state", steady), vec![("relative spread over K".into(), dk), ("relative spread over gradient spread".into(), db)]].concat(),
        detail: format!(
            "heterogeneous client Hessians (b^2 infinite; a common shared block would make independence hold by construction), eta_u = max(T, ...) as Theorem 3.11 requires; independence means a relative spread <= {INDEPENDENCE_TOLERANCE}"
        ),
    }
}

/// Figure 1d read at eta_u = sqrt(n): the same independence without Theorem 3.11's condition.
fn full_participation_any_eta(sweeps: &[Sweep]) -> Outcome {
    let small = find(sweeps, "fig1d-b-small-eta");
    let ds = spread(small);
    Outcome {
        verdict: steady_verdict(&[small], ds <= INDEPENDENCE_TOLERANCE),
        evidence: [evidence(small, "steady state", steady), vec![("relative spread over gradient spread".into(), ds)]].concat(),
        detail: "flagged reading: eta_u = sqrt(n), the other settings as CCYW-FIG1D-STEADY; shows whether the condition eta_u >= T is what removes the heterogeneity"
            .into(),
    }
}

/// Every distinct curve whose theorem applies: its steady state at most its bound as T -> infinity.
fn steady_states_below_bounds(sweeps: &[Sweep]) -> Outcome {
    let mut checked: Vec<&Curve> = Vec::new();
    for c in sweeps.iter().flat_map(|s| &s.curves).filter(|c| c.steady_bound.as_ref().is_some_and(|b| b.failed.is_empty())) {
        // A setting shared by several sweeps counts once.
        if !checked.iter().any(|d| same_run(&d.setting, &c.setting)) {
            checked.push(c);
        }
    }
    // A bound that is not positive decides nothing (NaN), and one NaN ratio makes the worst NaN
    // (`nan_max`): it is never hidden behind the curves that compare.
    let ratio = |c: &&Curve| c.steady_bound.as_ref().map_or(f64::NAN, |b| if b.value > 0.0 { c.steady_state / b.value } else { f64::NAN });
    let worst = checked.iter().map(ratio).fold(0.0f64, crate::engine::nan_max);
    let verdict = if checked.is_empty() {
        VerdictKind::NotApplicable
    } else if !worst.is_finite() || checked.iter().any(|c| !c.steady_state.is_finite()) {
        VerdictKind::Inconclusive
    } else {
        steady_verdict(&[], worst <= 1.0)
    };
    Outcome {
        verdict,
        evidence: vec![("distinct curves whose theorem applies".into(), checked.len() as f64), ("largest steady state / bound".into(), worst)],
        detail: "curves whose theorem's conditions fail at their setting are drawn with the bound but not counted".into(),
    }
}
