//! The smallest family, outside the crate on the public core only: gradient descent on one
//! quadratic and its rate ([`Rate`]), its card `gd.toml`; the checker owns the loop.

use nalgebra::{DMatrix, DVector, SymmetricEigen};

use fedbounds::checker::{CardScenario, ClaimResult, Plugged, Plugin, RunSettings};
use fedbounds::claim::{BoundClaim, Comparison, ConditionCheck, ConditionKind, Horizon, Reading, Relation};
use fedbounds::engine::{propagate_series, Design, Estimator, Moments, Observable, RandomAffineRound, RoundMaps};
use fedbounds::family::{CardText, ClaimKind, ClaimSummary};
use fedbounds::paper_card::PaperCard;
use fedbounds::verdict::{evaluate, ConstantsSource, VerdictKind};
use fedbounds::Result;

/// `n = 3` diagonal components; `H = (1/n) sum H_i` has eigenvalues `mu <= ... <= L`, minimizer `x*`.
pub struct Problem {
    hessians: Vec<DMatrix<f64>>,
    linear: Vec<DVector<f64>>,
    pub x0: DVector<f64>,
    pub h: DMatrix<f64>,
    pub x_star: DVector<f64>,
    mu: f64,
    l: f64,
    pub gamma: f64,
}

impl Problem {
    pub fn new(gamma_times_l: f64) -> Self {
        let spectra = [[1.0, 0.1, 0.4], [0.6, 0.3, 0.2], [1.1, 0.2, 0.9]];
        let hessians: Vec<DMatrix<f64>> = spectra.iter().map(|s| DMatrix::from_diagonal(&DVector::from_column_slice(s))).collect();
        let linear: Vec<DVector<f64>> = (0..3).map(|i| DVector::from_fn(3, |r, _| (i + r) as f64 - 1.0)).collect();
        let h = hessians.iter().fold(DMatrix::zeros(3, 3), |a, h| a + h) / 3.0;
        let x_star = h.clone().lu().solve(&(linear.iter().fold(DVector::zeros(3), |a, g| a + g) / 3.0)).expect("H is positive definite");
        let e = SymmetricEigen::new(h.clone()).eigenvalues;
        Self { hessians, linear, x0: DVector::from_element(3, 4.0), h, x_star, mu: e.min(), l: e.max(), gamma: gamma_times_l / e.max() }
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

/// A scenario of the card (`gd.toml`, read as a [`PaperCard`]): the step, the verdict expected.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    name: String,
    gamma_times_l: f64,
    expected: VerdictKind,
}

impl CardScenario for Scenario {
    fn name(&self) -> &str {
        &self.name
    }
    fn expected_claims(&self) -> Vec<&str> {
        vec![Rate.id()]
    }
}

/// The exact curve `E||x_t - x*||^2`, `t < rounds`, from the shared engine.
pub fn exact_curve(p: &Problem, rounds: usize) -> Vec<f64> {
    let maps = RoundMaps::probe(&GdRound(p));
    let inc = Design::Full { n: 3 }.inclusion_moments().unwrap();
    let distance = Observable::new(DMatrix::identity(3, 3), -&p.x_star);
    propagate_series(&maps, &inc, Moments::point(p.x0.clone()), rounds, |m| distance.expected_square(m)).values
}

/// The family: it reads its card and runs one scenario; the checker owns the loop.
pub struct GdFamily;
pub static GD: Plugged<GdFamily> = Plugged(GdFamily);

impl Plugin for GdFamily {
    type Card = PaperCard<Scenario>;
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
    fn embedded_card(&self) -> Result<Self::Card> {
        self.read_card(&CardText { what: "tests/family_gd/gd.toml".into(), text: include_str!("gd.toml").into() })
    }
    fn read_card(&self, card: &CardText) -> Result<Self::Card> {
        fedbounds::card::parse_toml(&card.text, &card.what)
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
    fn prepare(&self, s: &Scenario) -> Result<()> {
        fedbounds::error::require_positive("gamma_times_l", s.gamma_times_l).map(drop)
    }
    fn run(&self, _card: &Self::Card, s: &Scenario, _: (), _claims: &[&'static str], settings: &RunSettings) -> Result<Self::Run> {
        let p = Problem::new(s.gamma_times_l);
        let inputs = Inputs { l: p.l, mu: p.mu, gamma: p.gamma, initial_distance2: (&p.x0 - &p.x_star).norm_squared(), t: ROUNDS };
        let evaluation = evaluate(&Rate, &inputs, &[exact_curve(&p, ROUNDS)], Estimator::Exact, 0.99, settings.bound_scale);
        Ok((s.name.clone(), vec![ClaimResult::of(&Rate, ConstantsSource::Exact, evaluation).expecting(Some(s.expected))]))
    }
}
