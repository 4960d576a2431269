//! Claims defined by a user's card: a bound, its conditions and its scope as formulas over this
//! family's symbols ([`super::formulas::SYMBOLS`]), checked like a built-in claim.
//!
//! A card given on the command line (`--card FILE`) is read once; its claims whose id is not
//! built in are compiled by the core ([`crate::formula::user`]) and registered for the rest of
//! the process, so `list`, `check`, `conditions` and `search` see them beside the built-in ones.
//! The card's scenarios serve as the default scenarios of its claims (the search starts from one
//! where the claim is expected to hold).

use std::sync::RwLock;

use crate::card::ClaimCard;
use crate::claim::{BoundClaim, Comparison, ConditionCheck, Reading};
use crate::error::{Error, Result};
use crate::formula::user::{CardClaims, FormulaClaim, UserClaim, UserClaimRules};
use crate::formula::CompareSpec;

use super::algorithm::AlgorithmKind;
use super::card::Scenario;
use super::claims::{AdmissibleSteps, Claim, ClaimInputs, GammaRule, Metric};
use super::formulas::{METRICS, SYMBOLS};

/// What this family accepts in a card-defined claim.
pub const RULES: UserClaimRules = UserClaimRules {
    symbols: SYMBOLS.symbols(),
    metrics: &["shared_plus_weighted_personal", "shared_plus_personal"],
    algorithms: &["fedavg-p", "scaffold-p"],
    comparisons: &[CompareSpec::RunningAverage, CompareSpec::PerRound],
};

/// A claim read from a card.
pub struct CardClaim {
    /// The claim as the core compiled it.
    pub claim: FormulaClaim<ClaimInputs>,
    algorithm: AlgorithmKind,
    metric: Metric,
}

impl CardClaim {
    /// Compiles a card entry.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `claims[ID].formula.FIELD` (see [`UserClaim::compile`]).
    pub fn compile(card: &ClaimCard) -> Result<Self> {
        let claim = UserClaim::compile(card, &RULES)?;
        let metric = METRICS.iter().find(|m| m.0 == claim.metric).map(|m| m.1).ok_or_else(|| Error::field("metric", claim.metric, "a metric of METRICS"))?;
        let algorithm = if claim.algorithm == "scaffold-p" { AlgorithmKind::ScaffoldP } else { AlgorithmKind::FedavgP };
        Ok(Self { claim: FormulaClaim { claim, values: |x| SYMBOLS.values(x) }, algorithm, metric })
    }

    /// The statement as the card prints it.
    pub fn statement(&self) -> &str {
        &self.claim.claim.statement
    }
}

impl BoundClaim for CardClaim {
    type Inputs = ClaimInputs;
    fn id(&self) -> &'static str {
        self.claim.id()
    }
    fn title(&self) -> &'static str {
        self.claim.title()
    }
    fn source(&self) -> &'static str {
        self.claim.source()
    }
    fn reading(&self) -> Reading {
        self.claim.reading()
    }
    fn comparison(&self) -> Comparison {
        self.claim.comparison()
    }
    fn every_prefix(&self) -> bool {
        self.claim.every_prefix()
    }
    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck> {
        self.claim.checks(x)
    }
    fn bound(&self, x: &ClaimInputs) -> f64 {
        self.claim.bound(x)
    }
}

impl Claim for CardClaim {
    fn algorithm(&self) -> AlgorithmKind {
        self.algorithm
    }
    fn metric(&self) -> Metric {
        self.metric
    }
    /// The limits the card's step conditions put on `gamma`, `eta_u`, `eta_v` (a condition
    /// `gamma <= expr`, `gamma = expr`, `eta_u >= expr`, ...); no condition: `gamma` unbounded,
    /// `eta` at least 1.
    fn admissible(&self, x: &ClaimInputs) -> AdmissibleSteps {
        let v = SYMBOLS.values(x);
        let f = &self.claim.claim.formulas;
        let gamma = match f.limit_of("gamma", true, &v) {
            Some((g, true)) => GammaRule::Exactly(g),
            Some((g, false)) => GammaRule::AtMost(g),
            None => GammaRule::AtMost(f64::INFINITY),
        };
        let eta = |name: &str| f.limit_of(name, false, &v).map_or(1.0, |e| e.0);
        AdmissibleSteps { gamma, eta_u_min: eta("eta_u"), eta_v_min: eta("eta_v") }
    }
    fn eta_prescribed(&self, x: &ClaimInputs) -> (bool, bool) {
        let v = SYMBOLS.values(x);
        let exact = |name: &str| self.claim.claim.formulas.limit_of(name, false, &v).is_some_and(|e| e.1);
        (exact("eta_u"), exact("eta_v"))
    }
}

static REGISTERED: CardClaims<CardClaim> = CardClaims::new();
static SCENARIOS: RwLock<Vec<Scenario>> = RwLock::new(Vec::new());

/// The card-defined claims registered so far.
pub fn registered() -> Vec<&'static CardClaim> {
    REGISTERED.all()
}

/// The scenarios of the cards that registered claims.
pub fn registered_scenarios() -> Vec<Scenario> {
    SCENARIOS.read().map(|r| r.clone()).unwrap_or_default()
}

/// Compiles and registers the claims of `entries` that are not built in, and the card's
/// scenarios; returns how many claims are registered now.
///
/// # Errors
/// The first claim that does not compile (nothing is registered then).
pub fn register(entries: &[ClaimCard], builtin: &[&str], scenarios: Vec<Scenario>) -> Result<usize> {
    let n = REGISTERED.register(entries, builtin, CardClaim::compile, |c| c.id())?;
    let mut r = SCENARIOS.write().map_err(|_| Error::Numerical("the registry of card scenarios is poisoned".into()))?;
    for s in scenarios {
        if !r.iter().any(|k| k.name == s.name) {
            r.push(s);
        }
    }
    Ok(n)
}
