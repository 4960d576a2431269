//! Claim cards (`theorems/*.toml`) and the scenarios they carry.
//!
//! A card is data: the statement, its source lines, assumptions, conditions, the reading chosen for
//! each inconsistency, default scenarios, and the verdict expected on each. The bound itself is a
//! named Rust function for now (`bound = { builtin = "..." }`); the `formula` key is reserved for
//! bounds evaluated at run time from the card.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::families::ccyw::algorithm::AlgorithmKind;
use crate::families::ccyw::card_claims::Catalog;
use crate::families::ccyw::problem::{ExplicitInstance, InstanceSpec, QuadraticInstance};
use crate::paper_card::PaperCard;
use crate::verdict::VerdictKind;

/// The embedded claim cards (file name, text), so the main command needs no files at run time.
pub const EMBEDDED_CARDS: [(&str, &str); 2] = [
    ("theorems/ccyw-fedavg-p.toml", include_str!("../../../theorems/ccyw-fedavg-p.toml")),
    ("theorems/ccyw-scaffold-p.toml", include_str!("../../../theorems/ccyw-scaffold-p.toml")),
];

/// A claim card as read: as written (the shared parts and this family's scenarios), with the
/// claims it can name: built in, and those it defines (compiled when it is read).
#[derive(Debug, Clone)]
pub struct Card {
    /// The card as written.
    pub written: PaperCard<Scenario>,
    /// The claims it can name.
    pub catalog: Catalog,
}

impl std::ops::Deref for Card {
    type Target = PaperCard<Scenario>;
    fn deref(&self) -> &PaperCard<Scenario> {
        &self.written
    }
}

pub use crate::card::{BoundSpec, ClaimCard, FamilyInfo, InconsistencyCard};

/// A step size: a number, or the claim's admissible extreme times a factor.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum StepSpec {
    /// A fixed value.
    Value(f64),
    /// The largest admissible `gamma` (or the prescribed one) / the smallest admissible `eta` of
    /// `admissible`'s claim, times `factor`.
    Admissible {
        /// Claim id.
        admissible: String,
        /// Multiplier (1 = at the boundary).
        #[serde(default = "one")]
        factor: f64,
    },
}

fn one() -> f64 {
    1.0
}

/// The forms of a [`StepSpec`], as its errors name them.
const STEP_FORMS: &str = "a number, or { admissible = \"CLAIM-ID\", factor = NUMBER } (factor 1 when omitted)";

/// Read by hand rather than `untagged`, which ignores unknown keys of the table (`{ admissible =
/// "CCYW-T3.7", factr = 100 }` read as factor 1) and says only that no form matched otherwise.
impl<'de> Deserialize<'de> for StepSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        /// The table form, every key checked.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Admissible {
            admissible: String,
            #[serde(default = "one")]
            factor: f64,
        }
        match toml::Value::deserialize(deserializer)? {
            toml::Value::Float(x) => Ok(StepSpec::Value(x)),
            toml::Value::Integer(x) => Ok(StepSpec::Value(x as f64)),
            table @ toml::Value::Table(_) => Admissible::deserialize(table)
                .map(|a| StepSpec::Admissible { admissible: a.admissible, factor: a.factor })
                .map_err(|e| D::Error::custom(format!("{} (a step is {STEP_FORMS})", e.message()))),
            other => Err(D::Error::custom(format!("invalid type: {} `{other}`, expected a step: {STEP_FORMS}", other.type_str()))),
        }
    }
}

/// Where a scenario's instance comes from: a table with exactly one of `generated` and `explicit`
/// ([`crate::strict::one_of`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(remote = "Self", rename_all = "snake_case", deny_unknown_fields)]
pub enum InstanceSource {
    /// A seeded recipe with target constants.
    Generated(InstanceSpec),
    /// Explicit matrices.
    Explicit(ExplicitInstance),
}

impl<'de> Deserialize<'de> for InstanceSource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        crate::strict::one_of(deserializer, &["generated", "explicit"], InstanceSource::deserialize)
    }
}

impl Serialize for InstanceSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        InstanceSource::serialize(self, serializer)
    }
}

impl InstanceSource {
    /// Builds the instance.
    ///
    /// # Errors
    /// Names the field at fault.
    pub fn build(&self) -> Result<QuadraticInstance> {
        match self {
            InstanceSource::Generated(spec) => spec.build(),
            InstanceSource::Explicit(e) => e.build(),
        }
    }
}

/// The algorithm of a scenario and its parameters.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AlgorithmSpec {
    /// Which algorithm runs: `fedavg-p` (default) or `scaffold-p`.
    #[serde(default)]
    pub kind: AlgorithmKind,
    /// Local steps `K`.
    pub k: usize,
    /// Sampled clients `m`.
    pub m: usize,
    /// Effective step `gamma = gamma_u eta_u = gamma_v eta_v`: the inner steps follow as
    /// `gamma / eta_u` and `gamma / eta_v`. Give either this or both `gamma_u` and `gamma_v`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gamma: Option<StepSpec>,
    /// Inner step for `u`, set on its own (with `gamma_v`, instead of `gamma`); the paper's
    /// standing condition `gamma_u eta_u = gamma_v eta_v` is then checked, not forced. An
    /// `admissible` rule gives the claim's `gamma` divided by `eta_u`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gamma_u: Option<StepSpec>,
    /// Inner step for `v`, set on its own (see `gamma_u`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gamma_v: Option<StepSpec>,
    /// Outer step for `u`.
    pub eta_u: StepSpec,
    /// Outer step for `v`.
    pub eta_v: StepSpec,
}

/// One scenario: an instance, the algorithm's parameters, the run, and expected verdicts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The family the scenario belongs to (`"ccyw"`; files without the key are this family's).
    /// Not part of the scenario's hash.
    #[serde(default, skip_serializing)]
    pub family: Option<String>,
    /// The claims its steps and expected verdicts may name: those of the card it is read from.
    #[serde(skip)]
    pub catalog: Catalog,
    /// Unique name.
    pub name: String,
    /// What it probes.
    #[serde(default)]
    pub description: String,
    /// Horizon `T`.
    pub rounds: usize,
    /// Monte Carlo replicates (ignored for deterministic runs).
    pub replicates: usize,
    /// Seed of the run's random streams.
    pub seed: u64,
    /// Confidence level of the intervals.
    #[serde(default = "default_confidence")]
    pub confidence: f64,
    /// Estimator: `exact` (moment propagation, the default) or `monte-carlo`.
    #[serde(default)]
    pub estimator: EstimatorChoice,
    /// The instance.
    pub instance: InstanceSource,
    /// The algorithm's parameters.
    pub algorithm: AlgorithmSpec,
    /// Expected verdict per claim id.
    #[serde(default)]
    pub expected: BTreeMap<String, VerdictKind>,
    /// Expected verdict of the empirical-b^2 evaluation (claims whose BGD fails) per claim id.
    #[serde(default)]
    pub expected_empirical: BTreeMap<String, VerdictKind>,
}

impl crate::checker::CardScenario for Scenario {
    fn name(&self) -> &str {
        &self.name
    }
    fn expected_claims(&self) -> Vec<&str> {
        self.expected.keys().chain(self.expected_empirical.keys()).map(String::as_str).collect()
    }
}

pub use crate::family::EstimatorChoice;

fn default_confidence() -> f64 {
    0.99
}

impl Scenario {
    /// SHA-256 of the scenario's canonical JSON form (first 16 hex digits).
    pub fn hash(&self) -> String {
        crate::card::canonical_hash(self)
    }

    /// Checks run parameters and expected-verdict keys, naming the field at fault.
    ///
    /// # Errors
    /// [`Error::InvalidField`].
    pub fn check(&self, field: &str) -> Result<()> {
        crate::card::require_family(field, self.family.as_deref(), super::FAMILY_ID)?;
        if self.rounds == 0 {
            return Err(Error::field(format!("{field}.rounds"), "got 0", "an integer >= 1"));
        }
        if self.replicates < 2 {
            return Err(Error::field(format!("{field}.replicates"), format!("got {}", self.replicates), "an integer >= 2"));
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::field(format!("{field}.confidence"), format!("got {}", self.confidence), "0 < confidence < 1"));
        }
        let ids = self.catalog.ids();
        let a = &self.algorithm;
        match (&a.gamma, &a.gamma_u, &a.gamma_v) {
            (Some(_), None, None) | (None, Some(_), Some(_)) => {}
            _ => {
                return Err(Error::field(
                    format!("{field}.algorithm.gamma"),
                    "give either gamma, or both gamma_u and gamma_v",
                    "gamma (effective step), or gamma_u and gamma_v (inner steps set separately)",
                ))
            }
        }
        let steps = [
            ("gamma", a.gamma.as_ref()),
            ("gamma_u", a.gamma_u.as_ref()),
            ("gamma_v", a.gamma_v.as_ref()),
            ("eta_u", Some(&a.eta_u)),
            ("eta_v", Some(&a.eta_v)),
        ];
        for (name, spec) in steps.into_iter().filter_map(|(n, s)| s.map(|s| (n, s))) {
            match spec {
                StepSpec::Value(v) => {
                    crate::error::require_step(&format!("{field}.algorithm.{name}"), *v)?;
                }
                StepSpec::Admissible { admissible, factor } => {
                    if !ids.contains(&admissible.as_str()) {
                        return Err(Error::field(format!("{field}.algorithm.{name}.admissible"), format!("unknown claim `{admissible}`"), ids.join(", ")));
                    }
                    crate::error::require_step(&format!("{field}.algorithm.{name}.factor"), *factor)?;
                }
            }
        }
        crate::card::require_known_claims(field, self.expected.keys().chain(self.expected_empirical.keys()), &ids)
    }
}

/// Parses a card, naming the offending key on error.
///
/// # Errors
/// [`Error::Parse`] for syntax, unknown keys or wrong types; [`Error::InvalidField`] for values
/// out of range; duplicate scenario names.
pub fn parse_card(text: &str, what: &str) -> Result<Card> {
    let mut written: PaperCard<Scenario> = crate::card::parse_toml(text, what)?;
    // Claims the card defines by formulas are compiled first, so its scenarios may name them.
    let catalog = Catalog::read(&written.claims, &EMBEDDED_CARDS.map(|c| c.1))?;
    for s in &mut written.scenarios {
        s.catalog = catalog.clone();
    }
    written.check_scenarios(|field, s| s.check(field))?;
    written.search.check(&catalog.ids())?;
    Ok(Card { written, catalog })
}

/// Parses a single-scenario file (the `run` command's input).
///
/// # Errors
/// As [`parse_card`].
pub fn parse_scenario(text: &str, what: &str) -> Result<Scenario> {
    let s: Scenario = crate::card::parse_toml(text, what)?;
    s.check("scenario")?;
    Ok(s)
}

/// Every embedded card, in order.
///
/// # Errors
/// Only if an embedded card is malformed (a test guards against this).
pub fn embedded_cards() -> Result<Vec<Card>> {
    let cards: Vec<Card> = EMBEDDED_CARDS.iter().map(|(name, text)| parse_card(text, name)).collect::<Result<_>>()?;
    let mut seen = std::collections::BTreeSet::new();
    for s in cards.iter().flat_map(|c| c.scenarios.iter()) {
        if !seen.insert(s.name.as_str()) {
            return Err(Error::field("scenarios.name", format!("`{}` appears in two cards", s.name), "unique scenario names"));
        }
    }
    Ok(cards)
}
