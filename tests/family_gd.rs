//! The smallest family, written outside the crate against the public core only: gradient descent
//! on one quadratic with the textbook rate `||x_t - x*||^2 <= (1 - gamma mu)^(2t) ||x_0 - x*||^2`
//! (`gamma <= 1/L`): a card with expected verdicts, a [`Plugin`] whose loop the checker owns, and
//! the exact engine for its curve (checked against the closed form).

use nalgebra::{DMatrix, DVector, SymmetricEigen};

use fedbounds::checker::{ClaimResult, Plugged, Plugin, RunSettings};
use fedbounds::claim::{BoundClaim, Comparison, ConditionCheck, ConditionKind, Horizon, Reading, Relation};
use fedbounds::engine::{propagate_series, Design, Estimator, Moments, Observable, RandomAffineRound, RoundMaps};
use fedbounds::family::{CardText, CheckRequest, ClaimKind, ClaimSummary, RunOptions, Silent};
use fedbounds::registry::Registry;
use fedbounds::verdict::{evaluate, ConstantsSource, VerdictKind};
use fedbounds::{Error, Result};

// ---------------------------------------------------------------------------------------------
// The family: problem, round, claim, card, and the Plugin.

/// `n = 3` diagonal components; `H = (1/n) sum H_i` has eigenvalues `mu <= ... <= L`, minimizer `x*`.
struct Problem {
    hessians: Vec<DMatrix<f64>>,
    linear: Vec<DVector<f64>>,
    x0: DVector<f64>,
    h: DMatrix<f64>,
    x_star: DVector<f64>,
    mu: f64,
    l: f64,
    gamma: f64,
}

impl Problem {
    fn new(gamma_times_l: f64) -> Self {
        let spectra = [[1.0, 0.1, 0.4], [0.6, 0.3, 0.2], [1.1, 0.2, 0.9]];
        let hessians: Vec<DMatrix<f64>> = spectra.iter().map(|s| DMatrix::from_diagonal(&DVector::from_column_slice(s))).collect();
        let linear: Vec<DVector<f64>> = (0..3).map(|i| DVector::from_fn(3, |r, _| (i + r) as f64 - 1.0)).collect();
        let h = hessians.iter().fold(DMatrix::zeros(3, 3), |a, h| a + h) / 3.0;
        let x_star = h.clone().lu().solve(&(linear.iter().fold(DVector::zeros(3), |a, g| a + g) / 3.0)).expect("H is positive definite");
        let e = SymmetricEigen::new(h.clone()).eigenvalues;
        let (mu, l) = (e.min(), e.max());
        Self { hessians, linear, x0: DVector::from_element(3, 4.0), h, x_star, mu, l, gamma: gamma_times_l / l }
    }
}

/// One GD step as a random affine round whose design always activates every component.
struct GdRound<'a>(&'a Problem);

impl RandomAffineRound for GdRound<'_> {
    fn state_dim(&self) -> usize {
        3
    }
    fn components(&self) -> usize {
        3
    }
    fn noise_per_component(&self) -> usize {
        0
    }
    fn apply(&self, x: &DVector<f64>, active: &[usize], _noise: &[f64]) -> DVector<f64> {
        active.iter().fold(x.clone(), |acc, &i| acc - (&self.0.hessians[i] * x - &self.0.linear[i]) * (self.0.gamma / 3.0))
    }
}

#[derive(Clone, Copy)]
struct Inputs {
    l: f64,
    mu: f64,
    gamma: f64,
    initial_distance2: f64,
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

/// `||x_t - x*||^2 <= (1 - gamma mu)^(2t) ||x_0 - x*||^2` for `gamma <= 1/L`.
struct Rate;

impl BoundClaim for Rate {
    type Inputs = Inputs;
    fn id(&self) -> &'static str {
        "GD-RATE"
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
        vec![ConditionCheck::compare("gamma <= 1/L", ConditionKind::StepSize, x.gamma, Relation::AtMost, 1.0 / x.l)]
    }
    /// At horizon `T'` the metric compared is `||x_{T'-1} - x*||^2`.
    fn bound(&self, x: &Inputs) -> f64 {
        (1.0 - x.gamma * x.mu).powi(2 * (x.t as i32 - 1)) * x.initial_distance2
    }
}

const ROUNDS: usize = 60;

/// The family's card: its scenarios with the verdicts they expect.
const CARD: &str = r#"
[[scenarios]]
name = "at-the-condition"
gamma_times_l = 1.0
expected = "holds"

[[scenarios]]
name = "past-the-condition"
gamma_times_l = 1.5
expected = "not-applicable"
"#;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Card {
    scenarios: Vec<Scenario>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    gamma_times_l: f64,
    expected: VerdictKind,
}

/// The exact curve `E||x_t - x*||^2`, `t < rounds`, from the shared engine.
fn exact_curve(p: &Problem, rounds: usize) -> Vec<f64> {
    let maps = RoundMaps::probe(&GdRound(p));
    let inc = Design::Full { n: 3 }.inclusion_moments().unwrap();
    let distance = Observable::new(DMatrix::identity(3, 3), -&p.x_star);
    propagate_series(&maps, &inc, Moments::point(p.x0.clone()), rounds, |m| distance.expected_square(m)).values
}

/// The family: the checker owns the loop; the family reads its card and runs one scenario.
struct GdFamily;
static GD: Plugged<GdFamily> = Plugged(GdFamily);

impl Plugin for GdFamily {
    type Card = Card;
    type Scenario = Scenario;
    type Claim = &'static str;
    type Prepared = ();
    type Run = (String, Vec<ClaimResult>);
    fn id(&self) -> &'static str {
        "gd"
    }
    fn title(&self) -> &'static str {
        "Gradient descent on one quadratic (a test family)"
    }
    fn embedded_card(&self) -> Result<Card> {
        self.read_card(&CardText { what: "gd card".into(), text: CARD.into() })
    }
    fn read_card(&self, card: &CardText) -> Result<Card> {
        toml::from_str(&card.text).map_err(|e| Error::Parse { what: card.what.clone(), message: e.to_string() })
    }
    fn builtin_claims(&self) -> Vec<&'static str> {
        vec![Rate.id()]
    }
    fn claim_id(&self, claim: &&'static str) -> &'static str {
        claim
    }
    fn summary(&self, _claim: &&'static str) -> ClaimSummary {
        ClaimSummary::of(&Rate, ClaimKind::Bound, "||x_t - x*||^2 <= (1 - gamma mu)^(2t) ||x_0 - x*||^2", "||x_t - x*||^2")
    }
    fn scenarios<'c>(&self, card: &'c Card) -> Vec<&'c Scenario> {
        card.scenarios.iter().collect()
    }
    fn scenario_name<'s>(&self, s: &'s Scenario) -> &'s str {
        &s.name
    }
    fn prepare(&self, s: &Scenario) -> Result<()> {
        fedbounds::error::require_positive("gamma_times_l", s.gamma_times_l).map(drop)
    }
    fn run(&self, _card: &Card, s: &Scenario, _: (), _claims: &[&'static str], settings: &RunSettings) -> Result<Self::Run> {
        let p = Problem::new(s.gamma_times_l);
        let inputs = Inputs { l: p.l, mu: p.mu, gamma: p.gamma, initial_distance2: (&p.x0 - &p.x_star).norm_squared(), t: ROUNDS };
        let evaluation = evaluate(&Rate, &inputs, &[exact_curve(&p, ROUNDS)], Estimator::Exact, 0.99, settings.bound_scale);
        let result =
            ClaimResult { claim: Rate.id(), reading: "primary", constants: ConstantsSource::Exact, label: None, evaluation, expected: Some(s.expected) };
        Ok((s.name.clone(), vec![result]))
    }
    fn outcome<'r>(&self, run: &'r Self::Run) -> (&'r str, &'r [ClaimResult]) {
        (&run.0, &run.1)
    }
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn the_engine_gives_the_exact_curve() {
    let p = Problem::new(1.0);
    let (x_star, step) = (p.x_star.clone(), DMatrix::identity(3, 3) - &p.h * p.gamma);
    let mut e = &p.x0 - &x_star;
    for (t, got) in exact_curve(&p, 40).into_iter().enumerate() {
        let want = e.norm_squared();
        // The observable is tr(P) - 2 x*^T mu + ||x*||^2 from the second moment: exact up to
        // the rounding of those terms, whose size is ||x_t||^2 + ||x*||^2.
        let scale = (&e + &x_star).norm_squared() + x_star.norm_squared();
        assert!((got - want).abs() <= 1e-13 * scale, "t = {t}: engine {got:e}, closed form {want:e}");
        e = &step * e;
    }
    // Negative control: a curve off by one step is told apart.
    let curve = exact_curve(&p, 3);
    assert!((curve[2] - (&step * (&p.x0 - &x_star)).norm_squared()).abs() > 1e-6);
}

#[test]
fn the_core_drives_a_family_it_has_never_seen() {
    let registry = Registry::new(vec![&GD]).unwrap();
    let outcome = registry.check(&CheckRequest::default(), &Silent).unwrap();
    let verdicts: Vec<(String, VerdictKind)> = outcome.rows().map(|r| (r.scenario.clone(), r.evaluation.verdict)).collect();
    assert_eq!(verdicts, vec![("at-the-condition".to_string(), VerdictKind::Holds), ("past-the-condition".to_string(), VerdictKind::NotApplicable)]);
    assert!(outcome.mismatches().is_empty(), "{:?}", outcome.mismatches());
    let slack = outcome.rows().next().unwrap().evaluation.slack.unwrap();
    assert!(slack >= 1.0 && slack.is_finite(), "slack {slack}");
    let failed = &outcome.rows().nth(1).unwrap().evaluation.failed;
    assert!(failed[0].contains("gamma <= 1/L"), "{failed:?}");
    // The shared summary names the family's rows.
    let files = outcome.files(&Default::default());
    let csv = String::from_utf8(files.iter().find(|f| f.path.ends_with("summary.csv")).unwrap().bytes.clone()).unwrap();
    assert!(csv.contains("GD-RATE,primary,at-the-condition,exact,holds,holds"), "{csv}");
}

#[test]
fn a_bound_shrunk_below_the_curve_is_violated() {
    // The rate is tight along the slowest eigendirection, so halving the bound must fail.
    let registry = Registry::new(vec![&GD]).unwrap();
    let request = CheckRequest { bound_scale: Some(0.5), scenarios: vec!["at-the-condition".into()], ..Default::default() };
    let outcome = registry.check(&request, &Silent).unwrap();
    let row = outcome.rows().next().unwrap();
    assert_eq!(row.evaluation.verdict, VerdictKind::Violated);
    assert_eq!(outcome.mismatches(), vec!["GD-RATE on at-the-condition".to_string()]);
}

#[test]
fn files_and_claims_route_to_their_family() {
    let registry = Registry::new(vec![&fedbounds::families::ccyw::FAMILY, &GD]).unwrap();
    assert_eq!(registry.family_of("family = \"gd\"\ngamma_times_l = 0.5", "f").unwrap().id(), "gd");
    assert_eq!(registry.family_of("name = \"old\"", "f").unwrap().id(), "ccyw", "files naming no family are the default's");
    let unknown = registry.family_of("family = \"nope\"", "f").err().unwrap();
    assert!(unknown.is_bad_input() && unknown.to_string().contains("ccyw, gd"), "{unknown}");
    assert_eq!(registry.family_of_claim("GD-RATE").unwrap().id(), "gd");
    assert!(registry.require_known_claims(&["NOPE".into()], None).is_err());
    // A check that asks only for this family's claim runs only this family.
    let outcome = registry.check(&CheckRequest { claims: vec!["GD-RATE".into()], ..Default::default() }, &Silent).unwrap();
    assert_eq!(outcome.families.len(), 1);
    assert_eq!(outcome.families[0].id, "gd");
    // The family runs no scenario files: the `run` command says so, as bad input.
    let err = registry.by_id("gd").unwrap().run("gamma_times_l = 1.0", "f", &RunOptions::default()).unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("`gd` has no `run` command"), "{err}");
    // Two families may not declare the same id.
    assert!(Registry::new(vec![&GD, &GD]).is_err());
}
