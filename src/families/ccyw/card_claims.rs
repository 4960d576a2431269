//! Claims defined by a user's card: a bound, its conditions and its scope as formulas over this
//! family's symbols ([`super::formulas::SYMBOLS`]), checked like a built-in claim.
//!
//! A card given on the command line (`--card FILE`) is read by each command that takes it; its
//! claims whose id is not built in are compiled by the core ([`crate::formula::user`]) into a
//! [`Catalog`] that travels with the card (and with each of its scenarios), so `list`, `check`,
//! `conditions` and `search` see them beside the built-in ones. Nothing is kept between reads.
//! The card's scenarios serve as the default scenarios of its claims (the search starts from one
//! where the claim is expected to hold).

use crate::card::ClaimCard;
use crate::claim::{BoundClaim, Forwards};
use crate::error::{Error, Result};
use crate::formula::user::{compile_card_claims, FormulaClaim, UserClaim, UserClaimRules};
use crate::formula::{CompareSpec, Limit};

use super::algorithm::AlgorithmKind;
use super::claims::{self as builtin, AdmissibleSteps, Claim, ClaimInputs, EtaRule, GammaRule, Metric};
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

impl Forwards for CardClaim {
    type To = FormulaClaim<ClaimInputs>;
    fn to(&self) -> &FormulaClaim<ClaimInputs> {
        &self.claim
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
            Some(Limit::Exactly(g)) => GammaRule::Exactly(g),
            Some(Limit::Inclusive(g)) => GammaRule::AtMost(g),
            Some(Limit::Strict(g)) => GammaRule::Below(g),
            None => GammaRule::AtMost(f64::INFINITY),
        };
        let eta = |name: &str| match f.limit_of(name, false, &v) {
            Some(Limit::Exactly(e)) => EtaRule::Exactly(e),
            Some(Limit::Inclusive(e)) => EtaRule::AtLeast(e),
            Some(Limit::Strict(e)) => EtaRule::Above(e),
            None => EtaRule::AtLeast(1.0),
        };
        AdmissibleSteps { gamma, eta_u: eta("eta_u"), eta_v: eta("eta_v") }
    }
}

/// The claims a command can name: the built-in ones, then those the card it read defines.
#[derive(Clone, Default)]
pub struct Catalog {
    defined: Vec<&'static CardClaim>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.defined.iter().map(|c| BoundClaim::id(*c))).finish()
    }
}

impl PartialEq for Catalog {
    fn eq(&self, other: &Self) -> bool {
        self.defined.len() == other.defined.len() && self.defined.iter().zip(&other.defined).all(|(a, b)| std::ptr::eq(*a, *b))
    }
}

impl Catalog {
    /// The built-in claims and those of `entries` that are not built in, compiled. A claim's
    /// metadata is `&'static` everywhere, so each compiled claim lives as long as the process;
    /// nothing else is kept (reading the same card twice gives two equal catalogs). An entry under
    /// a built-in id must carry that claim's formula in one of `embedded` (the family's own cards).
    ///
    /// # Errors
    /// The first claim that does not compile, naming its field.
    pub fn read(entries: &[ClaimCard], embedded: &[&str]) -> Result<Self> {
        let compiled = compile_card_claims(entries, &builtin::builtin_ids(), embedded, &super::formulas::SYMBOLS, CardClaim::compile)?;
        let defined = compiled.into_iter().map(|c| &**Box::leak(Box::new(c))).collect();
        Ok(Self { defined })
    }

    /// The claims the card defines, in card order.
    pub fn defined(&self) -> &[&'static CardClaim] {
        &self.defined
    }

    /// Every claim, in report order: the built-in ones, then those the card defines.
    pub fn claims(&self) -> Vec<&'static dyn Claim> {
        builtin::all_claims().into_iter().chain(self.defined.iter().map(|c| *c as &dyn Claim)).collect()
    }

    /// Every claim and lemma id.
    pub fn ids(&self) -> Vec<&'static str> {
        self.claims().iter().map(|c| c.id()).chain(builtin::all_lemmas().iter().map(|c| c.id())).collect()
    }

    /// The claim with this id.
    pub fn by_id(&self, id: &str) -> Option<&'static dyn Claim> {
        self.claims().into_iter().find(|c| c.id() == id)
    }
}
