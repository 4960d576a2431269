//! Claims defined by a user's card: a bound, its conditions and its scope as formulas over this
//! family's symbols ([`super::formulas::SYMBOLS`]), checked like a built-in claim.
//!
//! A card given on the command line (`--card FILE`) is read once; its claims whose id is not
//! built in are compiled and registered for the rest of the process, so `list`, `check`,
//! `conditions` and `search` see them beside the built-in ones. The card's scenarios serve as the
//! default scenarios of its claims (the search starts from one where the claim is expected to
//! hold).

use std::sync::RwLock;

use crate::card::ClaimCard;
use crate::claim::{BoundClaim, Comparison, ConditionCheck, Reading};
use crate::error::{Error, Result};
use crate::formula::claim::AtSpec;
use crate::formula::{ClaimFormulas, CompareSpec};

use super::algorithm::AlgorithmKind;
use super::card::Scenario;
use super::claims::{AdmissibleSteps, Claim, ClaimInputs, GammaRule, Metric};
use super::formulas::{values, FIRST_RUN_QUANTITY, METRICS, SYMBOLS};

/// A claim read from a card.
pub struct CardClaim {
    id: &'static str,
    title: &'static str,
    source: &'static str,
    description: &'static str,
    /// The statement as the card prints it.
    pub statement: String,
    algorithm: AlgorithmKind,
    metric: Metric,
    comparison: Comparison,
    every_prefix: bool,
    /// The compiled formulas.
    pub formulas: ClaimFormulas,
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

impl CardClaim {
    /// Compiles a card entry.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `claims[ID].formula.FIELD`: a formula that does not compile
    /// (with its position), an unknown metric or algorithm, a comparison this family has no run
    /// for, a per-round quantity in a bound, or no formula at all.
    pub fn compile(card: &ClaimCard) -> Result<Self> {
        let id = &card.id;
        let field = |f: &str| format!("claims[{id}].formula{f}");
        let f = card.formula.as_ref().ok_or_else(|| {
            Error::field(
                field(""),
                "the claim is not built in and has no formula",
                "a [claims.formula] table with a `bound` over this family's symbols (`fedbounds list --symbols`)",
            )
        })?;
        let formulas = ClaimFormulas::compile(id, f, &SYMBOLS)?;
        if formulas.bound.is_none() {
            return Err(Error::field(field(".bound"), "missing (per-round inequalities of a proof are built in only)", "a bound on the metric"));
        }
        if let Some(i) = formulas.symbols_read().into_iter().find(|i| *i >= FIRST_RUN_QUANTITY) {
            return Err(Error::field(field(""), format!("reads `{}`, a per-round quantity of the lemmas", SYMBOLS[i].name), "constants and parameters only"));
        }
        let metric_names: Vec<&str> = METRICS.iter().map(|m| m.0).collect();
        let metric = match f.metric.as_deref() {
            Some(name) => METRICS
                .iter()
                .find(|m| m.0 == name)
                .map(|m| m.1)
                .ok_or_else(|| Error::field(field(".metric"), format!("unknown metric `{name}`"), metric_names.join(", ")))?,
            None => return Err(Error::field(field(".metric"), "missing", metric_names.join(", "))),
        };
        let algorithm = match f.algorithm.as_deref().unwrap_or("fedavg-p") {
            "fedavg-p" => AlgorithmKind::FedavgP,
            "scaffold-p" => AlgorithmKind::ScaffoldP,
            other => return Err(Error::field(field(".algorithm"), format!("unknown algorithm `{other}`"), "fedavg-p, scaffold-p")),
        };
        let comparison = match f.compare {
            CompareSpec::RunningAverage => Comparison::RunningAverage,
            CompareSpec::PerRound => Comparison::PerRound,
            CompareSpec::Slope => return Err(Error::field(field(".compare"), "`slope` is not a comparison this family runs", "running-average, per-round")),
        };
        Ok(Self {
            id: leak(id),
            title: leak(&card.title),
            source: leak(&card.source),
            description: leak(&card.reading),
            statement: card.statement.clone(),
            algorithm,
            metric,
            comparison,
            every_prefix: f.at == AtSpec::EveryPrefix,
            formulas,
        })
    }
}

impl BoundClaim for CardClaim {
    type Inputs = ClaimInputs;
    fn id(&self) -> &'static str {
        self.id
    }
    fn title(&self) -> &'static str {
        self.title
    }
    fn source(&self) -> &'static str {
        self.source
    }
    fn reading(&self) -> Reading {
        Reading { name: "primary", is_variant: false, description: self.description }
    }
    fn comparison(&self) -> Comparison {
        self.comparison
    }
    fn every_prefix(&self) -> bool {
        self.every_prefix
    }
    fn checks(&self, x: &ClaimInputs) -> Vec<ConditionCheck> {
        let v = values(x);
        let mut out = self.formulas.assumption_checks(&v);
        out.extend(self.formulas.checks(&v));
        out
    }
    fn bound(&self, x: &ClaimInputs) -> f64 {
        self.formulas.bound(&values(x))
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
        let v = values(x);
        let gamma = match self.formulas.limit_of("gamma", true, &v) {
            Some((g, true)) => GammaRule::Exactly(g),
            Some((g, false)) => GammaRule::AtMost(g),
            None => GammaRule::AtMost(f64::INFINITY),
        };
        let eta = |name: &str| self.formulas.limit_of(name, false, &v).map_or(1.0, |e| e.0);
        AdmissibleSteps { gamma, eta_u_min: eta("eta_u"), eta_v_min: eta("eta_v") }
    }
    fn eta_prescribed(&self, x: &ClaimInputs) -> (bool, bool) {
        let v = values(x);
        let exact = |name: &str| self.formulas.limit_of(name, false, &v).is_some_and(|e| e.1);
        (exact("eta_u"), exact("eta_v"))
    }
}

struct Registered {
    claims: Vec<&'static CardClaim>,
    scenarios: Vec<Scenario>,
}

static REGISTERED: RwLock<Registered> = RwLock::new(Registered { claims: Vec::new(), scenarios: Vec::new() });

/// The card-defined claims registered so far.
pub fn registered() -> Vec<&'static CardClaim> {
    REGISTERED.read().map(|r| r.claims.clone()).unwrap_or_default()
}

/// The scenarios of the cards that registered claims.
pub fn registered_scenarios() -> Vec<Scenario> {
    REGISTERED.read().map(|r| r.scenarios.clone()).unwrap_or_default()
}

/// Compiles and registers the claims of `entries` that are not built in; returns how many are
/// registered now. A claim id registered before is kept (the same card read twice).
///
/// # Errors
/// The first claim that does not compile (nothing is registered then).
pub fn register(entries: &[ClaimCard], builtin: &[&str], scenarios: Vec<Scenario>) -> Result<usize> {
    let mut new = Vec::new();
    for e in entries.iter().filter(|e| !builtin.contains(&e.id.as_str())) {
        new.push(CardClaim::compile(e)?);
    }
    let mut r = REGISTERED.write().map_err(|_| Error::Numerical("the registry of card claims is poisoned".into()))?;
    for c in new {
        if !r.claims.iter().any(|k| k.id == c.id) {
            r.claims.push(Box::leak(Box::new(c)));
        }
    }
    for s in scenarios {
        if !r.scenarios.iter().any(|k| k.name == s.name) {
            r.scenarios.push(s);
        }
    }
    Ok(r.claims.len())
}
