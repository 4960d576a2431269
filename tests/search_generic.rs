//! The core's adversarial search on a family it has never seen, with known answers: gradient
//! descent on `f(x) = (mu x_1^2 + L x_2^2) / 2` from `x_0 = (cos theta, sin theta)`, claimed to
//! contract like `(1 - gamma mu)^(2t)` for `gamma <= 1/L`. The exact curve is
//! `cos^2 theta (1 - gamma mu)^(2t) + sin^2 theta (1 - gamma L)^(2t)`, so
//!
//! - the worst admissible ratio is exactly 1 (the bound is attained at `T' = 1` and, along
//!   `theta = 0`, at every `T'`);
//! - a bound scaled by 0.3 is violated with ratio 1/0.3;
//! - past the condition the bound breaks exactly when `|1 - gamma L| > |1 - gamma mu|`, i.e.
//!   `gamma > 2/(L + mu)` (for `theta > 0`): on the worst instance found (step `gamma_0`) at the
//!   first doubling `c` with `c gamma_0 > 2/(L + mu)`; over any instance (steps up to `1/L`) it
//!   holds at 1x and breaks at 2x (`mu = 0.1, L = 1`).

use fedbounds::checker::{CardEntries, CardScenario, CardView, ClaimResult, Plugged, Plugin, RunSettings, Searcher};
use fedbounds::claim::{BoundClaim, Comparison, ConditionCheck, ConditionKind, Horizon, Reading, Relation};
use fedbounds::engine::Estimator;
use fedbounds::family::{CardText, CheckRequest, ClaimKind, ClaimSummary, Family, FamilyReport, SearchRequest, Silent};
use fedbounds::registry::Registry;
use fedbounds::search::{Candidate, SearchSpace};
use fedbounds::verdict::{evaluate, ConstantsSource, VerdictKind};
use fedbounds::{Error, Result};

const MU: f64 = 0.1;
const L: f64 = 1.0;
const ROUNDS: usize = 30;

#[derive(Clone, Copy)]
struct Inputs {
    gamma: f64,
    t: usize,
}

impl Horizon for Inputs {
    fn horizon(&self) -> usize {
        self.t
    }
    fn at_horizon(&self, t: usize) -> Self {
        Self { t, ..*self }
    }
}

struct Rate;

impl BoundClaim for Rate {
    type Inputs = Inputs;
    fn id(&self) -> &'static str {
        "GD2-RATE"
    }
    fn title(&self) -> &'static str {
        "gradient descent contracts at rate 1 - gamma mu"
    }
    fn source(&self) -> &'static str {
        "textbook"
    }
    fn reading(&self) -> Reading {
        Reading::primary("as stated")
    }
    fn comparison(&self) -> Comparison {
        Comparison::PerRound
    }
    fn every_prefix(&self) -> bool {
        true
    }
    fn checks(&self, x: &Inputs) -> Vec<ConditionCheck> {
        vec![ConditionCheck::compare("gamma <= 1/L", ConditionKind::StepSize, x.gamma, Relation::AtMost, 1.0 / L)]
    }
    fn bound(&self, x: &Inputs) -> f64 {
        (1.0 - x.gamma * MU).powi(2 * (x.t as i32 - 1))
    }
}

#[derive(serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    gamma_times_l: f64,
    theta: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<VerdictKind>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Card {
    scenarios: Vec<Scenario>,
}

impl CardScenario for Scenario {
    fn name(&self) -> &str {
        &self.name
    }
    fn expected_claims(&self) -> Vec<&str> {
        self.expected.iter().map(|_| Rate.id()).collect()
    }
}

/// A card of scenarios only: no claim entries.
impl CardView<Scenario> for Card {
    fn scenarios(&self) -> Vec<&Scenario> {
        self.scenarios.iter().collect()
    }
    fn entries(&self) -> CardEntries<'_> {
        (Vec::new(), Vec::new())
    }
}

struct Gd2;
static GD2: Plugged<Gd2> = Plugged(Gd2);

impl Plugin for Gd2 {
    type Card = Card;
    type Scenario = Scenario;
    type Claim = &'static str;
    type Prepared = ();
    type Run = (String, Vec<ClaimResult>);
    fn id(&self) -> &'static str {
        "gd2"
    }
    fn title(&self) -> &'static str {
        "Gradient descent on a 2-D quadratic (a test family)"
    }
    fn embedded_card(&self) -> Result<Card> {
        self.read_card(&CardText { what: "gd2 card".into(), text: "[[scenarios]]\nname = \"s\"\ngamma_times_l = 0.5\ntheta = 0.3\n".into() })
    }
    fn read_card(&self, card: &CardText) -> Result<Card> {
        toml::from_str(&card.text).map_err(|e| Error::parse(card.what.clone(), e))
    }
    fn builtin_claims(&self) -> Vec<&'static str> {
        vec![Rate.id()]
    }
    fn claim_id(&self, claim: &&'static str) -> &'static str {
        claim
    }
    fn summary(&self, _claim: &&'static str) -> ClaimSummary {
        ClaimSummary::of(&Rate, ClaimKind::Bound, "||x_t||^2 <= (1 - gamma mu)^(2t) ||x_0||^2", "||x_t||^2")
    }
    fn prepare(&self, s: &Scenario) -> Result<()> {
        fedbounds::error::require_positive("gamma_times_l", s.gamma_times_l).map(drop)
    }
    fn run(&self, _card: &Card, s: &Scenario, _: (), _claims: &[&'static str], settings: &RunSettings) -> Result<Self::Run> {
        let gamma = s.gamma_times_l / L;
        let (c2, s2) = (s.theta.cos().powi(2), s.theta.sin().powi(2));
        let curve: Vec<f64> = (0..ROUNDS).map(|t| c2 * (1.0 - gamma * MU).powi(2 * t as i32) + s2 * (1.0 - gamma * L).powi(2 * t as i32)).collect();
        let evaluation = evaluate(&Rate, &Inputs { gamma, t: ROUNDS }, &[curve], Estimator::Exact, 0.99, settings.bound_scale);
        let result = ClaimResult::of(&Rate, ConstantsSource::Exact, evaluation).expecting(s.expected);
        Ok((s.name.clone(), vec![result]))
    }
    fn searcher(&self) -> Option<&dyn Searcher<Self>> {
        Some(&Space)
    }
}

/// `theta in [0, pi/2]`, `gamma L in [0.01, 1]`.
struct Space;

impl SearchSpace<Card, &'static str, Scenario> for Space {
    fn coordinates(&self, _claim: &&'static str) -> Vec<String> {
        vec!["theta in [0, pi/2]".into(), "gamma L in [0.01, 1]".into()]
    }
    fn step_conditions(&self, _claim: &&'static str) -> Vec<String> {
        vec!["gamma <= 1/L".into()]
    }
    fn decode(&self, _card: &Card, _claim: &&'static str, c: &Candidate, step: Option<(usize, f64)>) -> Result<Scenario> {
        let multiple = step.map_or(1.0, |(_, m)| m);
        Ok(Scenario { name: "worst".into(), gamma_times_l: (0.01 + 0.99 * c.x[1]) * multiple, theta: c.x[0] * std::f64::consts::FRAC_PI_2, expected: None })
    }
    fn replay_card(&self, _claim: &&'static str, s: &Scenario, _source: ConstantsSource, expected: VerdictKind) -> Result<String> {
        let s = Scenario { name: s.name.clone(), gamma_times_l: s.gamma_times_l, theta: s.theta, expected: Some(expected) };
        toml::to_string(&s).map(|t| format!("[[scenarios]]\n{t}")).map_err(|e| Error::serialization("replay card", e))
    }
}

fn search(bound_scale: f64, room_budget: usize) -> FamilyReport {
    let request =
        SearchRequest { claims: Vec::new(), budget: 80, room_budget, seed: 7, bound_scale, plots: false, meta: Default::default(), card: None, out: None };
    GD2.search(&request, &Silent).unwrap().expect("the family has a search")
}

fn json(report: &FamilyReport) -> serde_json::Value {
    let file = report.files.iter().find(|f| f.path.ends_with("GD2-RATE.json")).expect("a JSON result");
    serde_json::from_slice(&file.bytes).unwrap()
}

#[test]
fn the_worst_case_of_an_attained_bound_is_exactly_one_and_its_replay_agrees() {
    let report = search(1.0, 0);
    let line = &report.searches[0];
    assert_eq!(line.verdict, VerdictKind::Holds);
    let worst = line.worst_ratio.unwrap();
    assert!((worst - 1.0).abs() <= 1e-12, "worst ratio {worst}");
    assert_eq!(line.applicable, 80);
    // The replay card, read by the checker, gives the same verdict at the same ratio.
    let card = String::from_utf8(report.files.iter().find(|f| f.path.ends_with("GD2-RATE.toml")).unwrap().bytes.clone()).unwrap();
    let registry = Registry::new(vec![&GD2]).unwrap();
    let request = CheckRequest { card: Some(CardText { what: "replay".into(), text: card }), ..Default::default() };
    let outcome = registry.check(&request, &Silent).unwrap();
    let row = outcome.rows().next().unwrap();
    assert_eq!(row.evaluation.verdict, VerdictKind::Holds);
    assert!(outcome.mismatches().is_empty());
    assert!((1.0 / row.evaluation.slack.unwrap() - worst).abs() <= 1e-12);
}

#[test]
fn a_bound_scaled_below_the_worst_case_is_a_counterexample() {
    let report = search(0.3, 0);
    let line = &report.searches[0];
    assert_eq!(line.verdict, VerdictKind::Violated);
    assert!((line.worst_ratio.unwrap() - 1.0 / 0.3).abs() <= 1e-9, "{:?}", line.worst_ratio);
    assert_eq!(report.mismatches.len(), 1, "a counterexample is a finding: {:?}", report.mismatches);
}

#[test]
fn step_room_on_the_worst_instance_and_on_any_instance() {
    let report = search(1.0, 60);
    let line = &report.searches[0];
    assert_eq!(line.condition, "gamma <= 1/L");
    let worst = &json(&report)["search"]["worst"]["x"];
    let (theta_unit, g0) = (worst[0].as_f64().unwrap(), (0.01 + 0.99 * worst[1].as_f64().unwrap()) / L);
    assert!(theta_unit > 0.0);
    let first_break = (0..=10).map(|e| f64::from(1u32 << e)).find(|c| c * g0 > 2.0 / (L + MU)).unwrap();
    assert_eq!(line.worst_instance, (Some(first_break / 2.0), Some(first_break)), "gamma_0 L = {g0}");
    // Any instance: gamma > 2/(L + mu) = 1.82/L breaks it, reachable first at 2x.
    assert_eq!(line.any_instance, (Some(1.0), Some(2.0)));
    let csv = fedbounds::search::report::search_csv(&report.searches);
    assert!(csv.lines().nth(1).unwrap().starts_with("gd2,GD2-RATE,exact,holds,"), "{csv}");
}

#[test]
fn results_are_the_same_for_a_seed_on_one_or_two_threads() {
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| json(&search(1.0, 4)))
    };
    let one = on(1);
    assert_eq!(one, on(2));
    assert!(one["search"]["trace"].as_array().unwrap().len() == 80);
}
