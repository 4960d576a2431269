//! The card schema of DFedPGP: scenarios (an instance, a topology, steps in Corollary 1's form, the
//! horizons) with the verdicts the card expects, and comparisons of topologies (Remark 2).
//! The card is read through [`PaperCard`] (a `[family]` table with `module = "dpgp"`, claims,
//! inconsistencies, `[search]`), its own section being `comparisons`; unknown keys are errors at
//! every level. A scenario file of its own names its family by a top-level `family = "dpgp"`.
//! A scenario's instance is generated from its keys (`mu_u`, `heterogeneity`, ...) or given by
//! its matrices in an `[instance]` table ([`super::explicit`]), never both. Optional keys beyond
//! Algorithm 1's defaults: push weights through a `weighted` or `lazy` topology
//! ([`Topology::Weighted`], [`Topology::Lazy`]; only with `mixing = "column"`), `noise_draws =
//! "per-round"` (the listing's one sample per round, [`NoiseDraws`]) and `push_sum = { c, q }`
//! (Lemma 3's constants given, [`PushSumConstants`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::card::parse_toml;
use crate::claim::BoundClaim;
use crate::error::{require_memory, require_step, Error, Result};
use crate::formula::user::ReadCard;
use crate::paper_card::PaperCard;
use crate::verdict::VerdictKind;

use super::card_claims::CardClaim;
use super::explicit::ExplicitInstance;
use super::problem::{Instance, InstanceSpec};
use super::round::{NoiseDraws, Params};
use super::topology::{connectivity_of, Connectivity, GraphSequence, MixingRule, PushSumConstants, Topology};

/// The family's id.
pub const FAMILY_ID: &str = "dpgp";

/// The embedded card.
pub const CARD: (&str, &str) = ("theorems/dpgp.toml", include_str!("../../../theorems/dpgp.toml"));

/// Largest horizon a scenario may ask for.
pub const MAX_ROUNDS: usize = 20_000;

/// Largest state `m (du + dv) + du` of exact moment propagation.
pub const MAX_STATE: usize = 512;

/// Largest number of rounds (the sweep's and the per-round horizon's) one scenario may run.
pub const MAX_TOTAL_ROUNDS: usize = 60_000;

/// DFedPGP's claim card as written: the shared parts, its scenarios and its comparisons.
pub type WrittenCard = PaperCard<Scenario, Sections>;

/// The top-level sections only DFedPGP's card has.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sections {
    /// Comparisons of topologies (Remark 2, Figure 3a).
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
}

/// A card as read: as written, with the claims it defines by formulas (not built in) compiled,
/// in card order.
pub type Card = ReadCard<WrittenCard, CardClaim>;

fn d_k() -> usize {
    2
}

/// One scenario (read through [`ScenarioFile`]).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "ScenarioFile")]
pub struct Scenario {
    /// `"dpgp"` when the scenario is a file of its own (optional).
    pub family: Option<String>,
    /// Name.
    pub name: String,
    /// The graphs.
    pub topology: Topology,
    /// Seed of random graphs.
    pub graph_seed: u64,
    /// `column` (push-sum, Algorithm 1) or `row` (the experiments' pull weights, flagged).
    pub mixing: MixingRule,
    /// Clients `m`.
    pub m: usize,
    /// Shared dimension.
    pub du: usize,
    /// Personal dimension.
    pub dv: usize,
    /// Largest eigenvalue of `A`.
    pub l_u: f64,
    /// Smallest eigenvalue of `A`.
    pub mu_u: f64,
    /// Largest eigenvalue of `D_i`.
    pub l_v: f64,
    /// Smallest eigenvalue of `D_i`.
    pub mu_v: f64,
    /// `||B_i|| / sqrt(mu_u mu_v)`, in `[0, 1)`.
    pub coupling: f64,
    /// Client-specific curvature in `[0, 1)` (rotated `A_i`, `D_i` with their own spectra; 0:
    /// every client the same diagonal blocks).
    pub client_curvature: f64,
    /// Spread of the shared linear terms.
    pub heterogeneity: f64,
    /// `sigma_u`.
    pub sigma_u: f64,
    /// `sigma_v`.
    pub sigma_v: f64,
    /// `||v_i^0||`.
    pub v0_norm: f64,
    /// Instance seed.
    pub seed: u64,
    /// `K_u`.
    pub k_u: usize,
    /// `K_v`.
    pub k_v: usize,
    /// `eta_u = c_u / (L_u K_u sqrt(T))` (Corollary 1's form, 004:L142).
    pub c_u: f64,
    /// `eta_v = c_v / (L_v K_v sqrt(T))`.
    pub c_v: f64,
    /// Horizon of the per-round checks (Lemma 3, (32)).
    pub rounds: usize,
    /// Horizons of Corollary 1's rate fit (at least three, increasing).
    pub sweep: Vec<usize>,
    /// Expected verdicts by claim id.
    pub expected: BTreeMap<String, VerdictKind>,
    /// The instance given by its matrices; then the generator's keys above (`l_u` to `v0_norm`)
    /// are 0 and unused.
    pub explicit: Option<Arc<ExplicitInstance>>,
    /// When the gradient noise is drawn: every local step (default) or once per round
    /// (`noise_draws = "per-round"`, the listing's line 3).
    pub noise_draws: NoiseDraws,
    /// Lemma 3's `C` and `q` given (`push_sum = { c = ..., q = ... }`) instead of estimated.
    pub push_sum: Option<PushSumConstants>,
}

impl crate::checker::CardScenario for Scenario {
    fn name(&self) -> &str {
        &self.name
    }
    fn expected_claims(&self) -> Vec<&str> {
        self.expected.keys().map(String::as_str).collect()
    }
}

/// A scenario as a file holds it: the generator's keys (`mu_u`, `mu_v`, `heterogeneity`,
/// `sigma_u`, `sigma_v` required, the others with their defaults), or an explicit `[instance]`
/// without any of them. Read into a [`Scenario`]; written by `run --export-instance`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    family: Option<String>,
    name: String,
    topology: Topology,
    #[serde(default, skip_serializing_if = "is_zero")]
    graph_seed: u64,
    #[serde(default)]
    mixing: MixingRule,
    m: usize,
    du: usize,
    dv: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    l_u: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mu_u: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    l_v: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mu_v: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    coupling: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_curvature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    heterogeneity: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sigma_u: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sigma_v: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    v0_norm: Option<f64>,
    #[serde(default)]
    seed: u64,
    #[serde(default = "d_k")]
    k_u: usize,
    #[serde(default = "d_k")]
    k_v: usize,
    c_u: f64,
    c_v: f64,
    rounds: usize,
    sweep: Vec<usize>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    expected: BTreeMap<String, VerdictKind>,
    #[serde(default, skip_serializing_if = "NoiseDraws::is_per_step")]
    noise_draws: NoiseDraws,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    push_sum: Option<PushSumConstants>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    instance: Option<ExplicitInstance>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl TryFrom<ScenarioFile> for Scenario {
    type Error = String;

    /// The generator's keys, each with its default or required, or none of them beside an
    /// explicit `[instance]`.
    fn try_from(f: ScenarioFile) -> std::result::Result<Self, String> {
        let keys = [
            ("l_u", f.l_u, Some(1.0)),
            ("mu_u", f.mu_u, None),
            ("l_v", f.l_v, Some(1.0)),
            ("mu_v", f.mu_v, None),
            ("coupling", f.coupling, Some(0.0)),
            ("client_curvature", f.client_curvature, Some(0.0)),
            ("heterogeneity", f.heterogeneity, None),
            ("sigma_u", f.sigma_u, None),
            ("sigma_v", f.sigma_v, None),
            ("v0_norm", f.v0_norm, Some(1.0)),
        ];
        let explicit = f.instance.map(Arc::new);
        let mut values = [0.0; 10];
        for ((key, given, default), value) in keys.into_iter().zip(values.iter_mut()) {
            *value = match (explicit.is_some(), given, default) {
                (true, Some(_), _) => {
                    return Err(format!(
                    "`{key}` is a key of a generated instance; a scenario with an explicit [instance] takes its matrices and noise from there (remove `{key}`)"
                ))
                }
                (true, None, _) => 0.0,
                (false, Some(v), _) | (false, None, Some(v)) => v,
                (false, None, None) => return Err(format!("missing field `{key}`")),
            };
        }
        let [l_u, mu_u, l_v, mu_v, coupling, client_curvature, heterogeneity, sigma_u, sigma_v, v0_norm] = values;
        Ok(Scenario {
            family: f.family,
            name: f.name,
            topology: f.topology,
            graph_seed: f.graph_seed,
            mixing: f.mixing,
            m: f.m,
            du: f.du,
            dv: f.dv,
            l_u,
            mu_u,
            l_v,
            mu_v,
            coupling,
            client_curvature,
            heterogeneity,
            sigma_u,
            sigma_v,
            v0_norm,
            seed: f.seed,
            k_u: f.k_u,
            k_v: f.k_v,
            c_u: f.c_u,
            c_v: f.c_v,
            rounds: f.rounds,
            sweep: f.sweep,
            expected: f.expected,
            explicit,
            noise_draws: f.noise_draws,
            push_sum: f.push_sum,
        })
    }
}

/// The estimated work of `s` (see [`crate::budget`]): with `m` clients, `p = du + dv`, the state
/// `D = m p + du`, `k = k_u + k_v` local steps, `T` the rounds and `H` the rounds run (the
/// per-round horizon and every horizon of the rate sweep): the exact propagation `H m D^2`, the
/// probe of a round's maps `m (D + k p) k p^2`, and the lemmas' exact sides at every round, about
/// `R = m (k + 2) p` rows each read against the state's covariance and the round's noise: `T R (D^2
/// + R)` (measured: 64 clients with `k = 50` take about 20 s, time growing like `k^2`); holding
/// `8 m (D + k p) D` bytes, and the lemmas' noise maps, about `R x m k p` numbers each for the
/// local sides and the differences, kept for up to `GRAPHS_KEPT` (8) graphs of a time-varying
/// topology: `2 * GRAPHS_KEPT * 8 R m k p` bytes.
pub fn work(s: &Scenario) -> crate::budget::Work {
    let [m, du, dv, ku, kv, t] = [s.m, s.du, s.dv, s.k_u, s.k_v, s.rounds].map(|x| x as f64);
    let horizons = t + s.sweep.iter().map(|h| *h as f64).sum::<f64>();
    let (p, k) = (du + dv, ku + kv);
    let d = m * p + du;
    let rows = m * (k + 2.0) * p;
    let total = horizons * m * d * d + m * (d + k * p) * k * p * p + t * rows * (d * d + rows);
    let formula =
        "H m D^2 + m (D + k p) k p^2 + T R (D^2 + R) (p = du + dv, D = m p + du, k = k_u + k_v, R = m (k + 2) p, T = rounds, H = rounds + sum(sweep))";
    let noise_maps = 2.0 * super::round::GRAPHS_KEPT as f64 * 8.0 * rows * m * k * p;
    crate::budget::Work::new("rounds, sweep, m, du, dv, k_u, k_v", formula, total).holding(8.0 * m * (d + k * p) * d + noise_maps)
}

/// A comparison of scenarios that differ along one axis only ([`super::axis`]).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Comparison {
    /// What its scenarios differ in, found when the card is read.
    #[serde(skip)]
    pub axis: super::axis::Axis,
    /// Name (a scenario name of the reports).
    pub name: String,
    /// The scenarios compared.
    pub scenarios: Vec<String>,
    /// Expected verdicts by claim id.
    #[serde(default)]
    pub expected: BTreeMap<String, VerdictKind>,
}

impl Scenario {
    /// The keys in which `other` differs from this scenario, by name, for a comparison's axis
    /// ([`super::axis::classify`]); the horizons of the rate sweep are not compared (comparisons
    /// read the runs at the per-round horizon).
    pub fn differences(&self, other: &Scenario) -> std::collections::BTreeSet<&'static str> {
        let blank = |s: &Scenario| InstanceSpec { l_u: 0.0, sigma_u: 0.0, sigma_v: 0.0, heterogeneity: 0.0, ..s.instance() };
        let (a, b) = (self.instance(), other.instance());
        let keys = [
            ("topology", self.topology != other.topology),
            ("graph_seed", self.graph_seed != other.graph_seed),
            ("mixing", self.mixing != other.mixing),
            ("k_u", self.k_u != other.k_u),
            ("k_v", self.k_v != other.k_v),
            ("c_u", self.c_u != other.c_u),
            ("c_v", self.c_v != other.c_v),
            ("rounds", self.rounds != other.rounds),
            ("explicit", self.explicit != other.explicit),
            ("noise_draws", self.noise_draws != other.noise_draws),
            ("push_sum", self.push_sum != other.push_sum),
            ("l_u", a.l_u != b.l_u),
            ("sigma_u", a.sigma_u != b.sigma_u),
            ("sigma_v", a.sigma_v != b.sigma_v),
            ("heterogeneity", a.heterogeneity != b.heterogeneity),
            ("instance", blank(self) != blank(other)),
        ];
        keys.into_iter().filter_map(|(name, differs)| differs.then_some(name)).collect()
    }

    /// The instance spec.
    pub fn instance(&self) -> InstanceSpec {
        InstanceSpec {
            m: self.m,
            du: self.du,
            dv: self.dv,
            l_u: self.l_u,
            mu_u: self.mu_u,
            l_v: self.l_v,
            mu_v: self.mu_v,
            coupling: self.coupling,
            client_curvature: self.client_curvature,
            heterogeneity: self.heterogeneity,
            sigma_u: self.sigma_u,
            sigma_v: self.sigma_v,
            v0_norm: self.v0_norm,
            seed: self.seed,
        }
    }

    /// The instance: built from the explicit `[instance]`, or generated from the keys.
    ///
    /// # Errors
    /// As [`ExplicitInstance::build`] or [`InstanceSpec::build`], naming `field.<name>`.
    pub fn build_instance(&self, field: &str) -> Result<Instance> {
        match &self.explicit {
            Some(e) => e.build(field, self.m, self.du, self.dv),
            None => self.instance().build(field),
        }
    }

    /// The longest horizon, of the sweep or of the per-round claims.
    pub fn horizon(&self) -> usize {
        self.sweep.iter().copied().chain(std::iter::once(self.rounds)).max().unwrap_or(self.rounds)
    }

    /// This scenario with `inst` (its instance) written out by its matrices and its graphs
    /// recorded edge by edge over its horizon ([`Topology::recorded`]): the file
    /// `run --export-instance` writes. It builds the same instance and graphs bit for bit, so it
    /// runs to the same results.
    pub fn explicit_file(&self, inst: &Instance) -> ScenarioFile {
        ScenarioFile {
            family: Some(FAMILY_ID.into()),
            name: self.name.clone(),
            topology: self.topology.recorded(self.m, self.horizon(), self.graph_seed),
            graph_seed: 0,
            mixing: self.mixing,
            m: self.m,
            du: self.du,
            dv: self.dv,
            l_u: None,
            mu_u: None,
            l_v: None,
            mu_v: None,
            coupling: None,
            client_curvature: None,
            heterogeneity: None,
            sigma_u: None,
            sigma_v: None,
            v0_norm: None,
            seed: self.seed,
            k_u: self.k_u,
            k_v: self.k_v,
            c_u: self.c_u,
            c_v: self.c_v,
            rounds: self.rounds,
            sweep: self.sweep.clone(),
            expected: self.expected.clone(),
            noise_draws: self.noise_draws,
            push_sum: self.push_sum,
            instance: Some(ExplicitInstance::of(inst)),
        }
    }

    /// The connectivity of the scenario's graphs `seq` (realised already, under its mixing), with
    /// Lemma 3's `C` and `q` given ([`Scenario::push_sum`]) or estimated.
    pub fn connectivity_of(&self, seq: &GraphSequence) -> Connectivity {
        connectivity_of(seq, &self.topology, self.graph_seed, self.push_sum)
    }

    /// The steps at horizon `t` (`L_u`, `L_v` the instance's constants).
    pub fn params(&self, t: usize, l_u: f64, l_v: f64) -> Params {
        let s = (t as f64).sqrt();
        Params {
            eta_u: self.c_u / (l_u * self.k_u as f64 * s),
            eta_v: self.c_v / (l_v * self.k_v as f64 * s),
            k_u: self.k_u,
            k_v: self.k_v,
            noise_draws: self.noise_draws,
        }
    }

    /// Validates every field, naming it as `field.<name>`.
    ///
    /// # Errors
    /// [`Error::InvalidField`] with the allowed range.
    pub fn validate(&self, field: &str, defined: &[&str]) -> Result<()> {
        let f = |n: &str| format!("{field}.{n}");
        crate::card::require_family(field, self.family.as_deref(), FAMILY_ID)?;
        if self.name.is_empty() || self.name.contains(['/', '\\']) {
            return Err(Error::field(f("name"), format!("got `{}`", self.name), "a non-empty name without slashes"));
        }
        match &self.explicit {
            Some(e) => drop(e.build(field, self.m, self.du, self.dv)?),
            None => self.instance().validate(field)?,
        }
        self.topology.validate(&f("topology"), self.m)?;
        if self.mixing == MixingRule::Row && self.topology.weighted() {
            return Err(Error::field(
                f("mixing"),
                format!("row with {} topology weights", self.topology.name()),
                "mixing = \"column\" with a weighted or lazy topology (row pull weights are 1/|N_in(i)| by construction)",
            ));
        }
        if let Some(c) = &self.push_sum {
            c.validate(&f("push_sum"))?;
        }
        for (n, k) in [("k_u", self.k_u), ("k_v", self.k_v)] {
            if k == 0 || k > 100 {
                return Err(Error::field(f(n), format!("got {k}"), "an integer in [1, 100]"));
            }
        }
        require_step(&f("c_u"), self.c_u)?;
        require_step(&f("c_v"), self.c_v)?;
        if self.rounds == 0 || self.rounds > MAX_ROUNDS {
            return Err(Error::field(f("rounds"), format!("got {}", self.rounds), format!("an integer in [1, {MAX_ROUNDS}]")));
        }
        if self.sweep.len() < 3 || self.sweep.windows(2).any(|w| w[0] >= w[1]) || self.sweep[0] == 0 || self.sweep.iter().any(|t| *t > MAX_ROUNDS) {
            return Err(Error::field(f("sweep"), format!("got {:?}", self.sweep), format!("at least three increasing horizons in [1, {MAX_ROUNDS}]")));
        }
        for id in self.expected.keys() {
            let builtin = super::claims::summaries().iter().any(|c| c.id == id && !super::axis::COMPARISON_CLAIMS.contains(&c.id));
            if !builtin && !defined.contains(&id.as_str()) {
                return Err(Error::field(f("expected"), format!("unknown claim `{id}`"), "claim ids of DPGP-L3, DPGP-REC32, DPGP-C1 and their variants"));
            }
        }
        // Exact moments cost a dense propagation per round: bound the state and the total rounds.
        let state = self.m * (self.du + self.dv) + self.du;
        if state > MAX_STATE {
            return Err(Error::field(f("m"), format!("state dimension m (du + dv) + du = {state}"), format!("sizes with m (du + dv) + du <= {MAX_STATE}")));
        }
        let total: usize = self.sweep.iter().sum::<usize>() + self.rounds;
        if total > MAX_TOTAL_ROUNDS {
            return Err(Error::field(
                f("sweep"),
                format!("{total} rounds in all (sweep and rounds)"),
                format!("at most {MAX_TOTAL_ROUNDS} rounds per scenario"),
            ));
        }
        // Dense moments of the state, two copies, per round of the longest run.
        let dim = (self.m * (self.du + self.dv) + self.du) as f64;
        let horizon = self.sweep.iter().chain(std::iter::once(&self.rounds)).copied().max().unwrap_or(0) as f64;
        require_memory(&f("m"), 8.0 * (4.0 * dim * dim + 8.0 * horizon), "the moments and per-round summaries")?;
        Ok(())
    }
}

/// Parses and validates a card, naming the field at fault. Claims it defines by formulas are
/// compiled first, so its scenarios may name them.
///
/// # Errors
/// [`Error::Parse`] naming the unknown or mistyped key; [`Error::InvalidField`].
pub fn parse_card(text: &str, what: &str) -> Result<Card> {
    let mut card: WrittenCard = parse_toml(text, what)?;
    if let Some(module) = card.family.module.as_deref().filter(|x| *x != FAMILY_ID) {
        return Err(Error::field("family.module", format!("`{module}` in a card of family `{FAMILY_ID}`"), FAMILY_ID));
    }
    for (k, s) in card.scenarios.iter_mut().enumerate() {
        let field = format!("scenarios[{k}] ({}).topology", s.name);
        s.topology = std::mem::replace(&mut s.topology, Topology::Complete).resolve(&field)?;
    }
    card.search.check(&super::claims::summaries().iter().map(|c| c.id).collect::<Vec<_>>())?;
    let defined = super::card_claims::compile(&card.claims, CARD.1)?;
    let ids: Vec<&str> = defined.iter().map(|c| c.id()).collect();
    card.check_scenarios(|field, s| s.validate(field, &ids))?;
    let axes = card.sections.comparisons.iter().enumerate().map(|(k, c)| comparison_axis(&card, k, c)).collect::<Result<Vec<_>>>()?;
    for (c, axis) in card.sections.comparisons.iter_mut().zip(axes) {
        c.axis = axis;
    }
    Ok(ReadCard { card, defined })
}

/// The axis of `card`'s comparison `k`: its name new among the scenarios' and the earlier
/// comparisons', at least two of the card's scenarios that differ along one axis, and expected
/// verdicts only of that axis's claims.
fn comparison_axis(card: &WrittenCard, k: usize, c: &Comparison) -> Result<super::axis::Axis> {
    let field = format!("comparisons[{k}]");
    let earlier = card.sections.comparisons[..k].iter().map(|o| &o.name);
    if card.scenarios.iter().map(|s| &s.name).chain(earlier).any(|n| *n == c.name) {
        return Err(Error::field(format!("{field}.name"), format!("`{}` is already a name", c.name), "distinct names"));
    }
    let members: Vec<&Scenario> = c
        .scenarios
        .iter()
        .map(|n| {
            card.scenarios
                .iter()
                .find(|s| &s.name == n)
                .ok_or_else(|| Error::field(format!("{field}.scenarios"), format!("unknown scenario `{n}`"), "names of this card's scenarios"))
        })
        .collect::<Result<_>>()?;
    if members.len() < 2 {
        return Err(Error::field(format!("{field}.scenarios"), format!("{} scenarios", members.len()), "at least two"));
    }
    let differences: Vec<_> = members[1..].iter().map(|s| members[0].differences(s)).collect();
    let degrees: Vec<usize> = members.iter().filter_map(|s| if let Topology::RandomOut { k } = s.topology { Some(k) } else { None }).collect();
    let distinct = degrees.len() == members.len() && degrees.iter().collect::<std::collections::BTreeSet<_>>().len() == degrees.len();
    let axis = super::axis::classify(&members[0].name, &differences, distinct)
        .map_err(|e| Error::field(format!("{field}.scenarios"), e, "scenarios that differ along one axis"))?;
    if let Some(id) = c.expected.keys().find(|id| !axis.claims().contains(&id.as_str())) {
        return Err(Error::field(format!("{field}.expected"), format!("unknown claim `{id}`"), axis.claims().join(", ")));
    }
    Ok(axis)
}

/// The embedded card.
///
/// # Errors
/// Only if it is malformed (a test guards against this).
pub fn embedded_card() -> Result<Card> {
    parse_card(CARD.1, CARD.0)
}

/// Parses one scenario file (a single scenario's keys at top level).
///
/// # Errors
/// As [`parse_card`].
pub fn parse_scenario(text: &str, what: &str) -> Result<Scenario> {
    let mut s: Scenario = parse_toml(text, what)?;
    s.topology = std::mem::replace(&mut s.topology, Topology::Complete).resolve("scenario.topology")?;
    s.validate("scenario", &[])?;
    Ok(s)
}
