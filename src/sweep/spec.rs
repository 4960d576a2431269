//! The sweep file: a base scenario of one family, the axes that vary its keys, and the design
//! (a full grid, or seeded random draws) that turns them into a list of scenarios.
//!
//! ```toml
//! name = "fedplt-steps"                 # scenario ids are `fedplt-steps-0000`, `-0001`, ...
//! card = "../theorems/fedplt.toml"      # the family's card, relative to this file
//! base = "case1-full-masks"             # a scenario of the card, or an inline [base] table
//! unset = ["expected"]                  # keys of the base removed before the axes apply
//! design = "grid"                       # or "random" with `samples` and `seed`
//!
//! [[axes]]
//! key = "eta"                           # a dotted key of the scenario table
//! values = [0.01, 0.02, 0.05]           # or range = [lo, hi] (with points = n on a grid)
//! ```
//!
//! Parsing checks the sweep itself (types, ranges, sizes); the scenarios it makes are checked by
//! their family, through the same parser as any card's scenario.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::family::EstimatorChoice;

/// Most scenarios one sweep may expand to.
pub const MAX_SCENARIOS: usize = 1_000_000;

/// Most values one axis may take (grid points or listed values).
pub const MAX_AXIS_VALUES: usize = 100_000;

/// How the axes combine into scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    /// Every combination of the axes' values; the last axis varies fastest.
    #[default]
    Grid,
    /// `samples` scenarios, each axis drawn independently from a stream keyed by (seed, scenario
    /// index, axis index), so a scenario's values do not depend on any other.
    Random,
}

/// How a range is spaced (grid) or drawn (random).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Scale {
    /// Evenly spaced / uniform.
    #[default]
    Linear,
    /// Evenly spaced in the logarithm / log-uniform (both ends > 0).
    Log,
}

/// One varied key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    /// Dotted key of the scenario table, e.g. `algorithm.gamma.factor` or `topology`.
    pub key: String,
    /// The values it takes (any TOML value: numbers, strings, inline tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<toml::Value>>,
    /// Or a numeric range `[lo, hi]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// Grid points over `range` (grid design only; both ends included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<usize>,
    /// Spacing of `range`.
    #[serde(default)]
    pub scale: Scale,
    /// Round range values to integers (e.g. `k`, `seed`).
    #[serde(default)]
    pub integer: bool,
}

/// Where the base scenario comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Base {
    /// The scenario of the card with this name.
    Named(String),
    /// A scenario table written in the sweep file.
    Inline(toml::Table),
}

/// Read by hand rather than `untagged`, which says only that no form matched.
impl<'de> Deserialize<'de> for Base {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Error as _;
        match toml::Value::deserialize(deserializer)? {
            toml::Value::String(name) => Ok(Base::Named(name)),
            toml::Value::Table(table) => Ok(Base::Inline(table)),
            other => Err(D::Error::custom(format!(
                "invalid type: {} `{other}`, expected the name of a scenario of the card (base = \"NAME\") or a [base] table",
                other.type_str()
            ))),
        }
    }
}

/// A sweep file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// The sweep's name: scenario ids are `<name>-<index>`.
    pub name: String,
    /// The family (optional; must be the card's when given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    /// The claim card the scenarios are checked with, relative to the sweep file.
    pub card: String,
    /// The base scenario.
    pub base: Base,
    /// Keys of the base removed before the axes apply (e.g. its expected verdicts).
    #[serde(default)]
    pub unset: Vec<String>,
    /// Only these claims (all of the family's when the key is absent; an empty list is refused,
    /// since it would select nothing).
    #[serde(default, deserialize_with = "non_empty_claims")]
    pub claims: Vec<String>,
    /// Overrides every scenario's estimator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimator: Option<EstimatorChoice>,
    /// Grid or random.
    #[serde(default)]
    pub design: Design,
    /// Random design: how many scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
    /// Random design: the seed of the draws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The varied keys, in order.
    #[serde(default)]
    pub axes: Vec<Axis>,
}

/// Checks a dotted key: non-empty segments of letters, digits, `_` and `-`.
fn check_key(field: &str, key: &str) -> Result<()> {
    let ok = !key.is_empty() && key.split('.').all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::field(field, format!("got `{key}`"), "a dotted key of the scenario table, e.g. `algorithm.k` (segments of letters, digits, `_`, `-`)"))
    }
}

impl Axis {
    /// Checks the axis for `design`, naming `field` (e.g. `axes[2]`).
    ///
    /// # Errors
    /// [`Error::InvalidField`].
    pub fn check(&self, field: &str, design: Design) -> Result<()> {
        check_key(&format!("{field}.key"), &self.key)?;
        if self.key == "name" {
            return Err(Error::field(format!("{field}.key"), "`name` is set by the sweep (the scenario id)", "any other key of the scenario table"));
        }
        match (&self.values, &self.range) {
            (Some(v), None) => {
                if v.is_empty() || v.len() > MAX_AXIS_VALUES {
                    return Err(Error::field(format!("{field}.values"), format!("{} values", v.len()), format!("1 to {MAX_AXIS_VALUES} values")));
                }
                if self.points.is_some() || self.integer || self.scale != Scale::Linear {
                    return Err(Error::field(format!("{field}.values"), "given with points, scale or integer", "points, scale and integer only with range"));
                }
            }
            (None, Some([lo, hi])) => {
                if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                    return Err(Error::field(format!("{field}.range"), format!("got [{lo}, {hi}]"), "finite numbers lo <= hi"));
                }
                if self.scale == Scale::Log && *lo <= 0.0 {
                    return Err(Error::field(format!("{field}.range"), format!("got [{lo}, {hi}] with scale = \"log\""), "0 < lo <= hi"));
                }
                if self.integer && (lo.abs() > 2f64.powi(53) || hi.abs() > 2f64.powi(53) || lo.fract() != 0.0 || hi.fract() != 0.0) {
                    return Err(Error::field(format!("{field}.range"), format!("got [{lo}, {hi}] with integer = true"), "integers of magnitude <= 2^53"));
                }
                let repeats = |p: usize| (1..p).any(|k| self.grid_point(*lo, *hi, k, p).round() == self.grid_point(*lo, *hi, k - 1, p).round());
                match (design, self.points) {
                    (Design::Grid, Some(p)) if self.integer && p > 1 && p <= MAX_AXIS_VALUES && repeats(p) => {
                        return Err(Error::field(
                            format!("{field}.points"),
                            format!("{p} integer points in [{lo}, {hi}] would repeat values"),
                            "points whose rounded values differ (at most hi - lo + 1 on a linear scale, fewer on a log scale)",
                        ))
                    }
                    (Design::Grid, Some(p)) if (1..=MAX_AXIS_VALUES).contains(&p) => {}
                    (Design::Grid, p) => {
                        return Err(Error::field(
                            format!("{field}.points"),
                            p.map_or("missing".to_string(), |p| format!("got {p}")),
                            format!("an integer from 1 to {MAX_AXIS_VALUES} (a grid's range needs points)"),
                        ))
                    }
                    (Design::Random, None) => {}
                    (Design::Random, Some(_)) => {
                        return Err(Error::field(format!("{field}.points"), "given in a random design", "no points: a random design draws from the range"))
                    }
                }
            }
            _ => return Err(Error::field(field, "needs exactly one of `values` and `range`", "values = [...] or range = [lo, hi]")),
        }
        Ok(())
    }

    /// The `k`-th of `points` grid points over `[lo, hi]`, both ends exact: `lo + t (hi - lo)`
    /// on a linear scale, `exp(ln lo + t (ln hi - ln lo))` on a log scale, `t = k / (points - 1)`
    /// (before rounding, for an integer axis).
    pub fn grid_point(&self, lo: f64, hi: f64, k: usize, points: usize) -> f64 {
        if points <= 1 || k == 0 {
            lo
        } else if k + 1 == points {
            hi
        } else {
            let t = k as f64 / (points - 1) as f64;
            match self.scale {
                Scale::Linear => lo + t * (hi - lo),
                Scale::Log => (lo.ln() + t * (hi.ln() - lo.ln())).exp(),
            }
        }
    }

    /// How many values a grid takes along this axis.
    pub fn grid_len(&self) -> usize {
        match (&self.values, self.points) {
            (Some(v), _) => v.len(),
            (None, Some(p)) => p,
            (None, None) => 1,
        }
    }
}

/// `claims` as given: a list of at least one claim id.
fn non_empty_claims<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Vec<String>, D::Error> {
    let claims = Vec::<String>::deserialize(deserializer)?;
    if claims.is_empty() {
        return Err(serde::de::Error::custom("an empty list selects no claim (allowed: one or more claim ids, or no `claims` key for every claim)"));
    }
    Ok(claims)
}

impl Sweep {
    /// Parses and checks a sweep file's text.
    ///
    /// # Errors
    /// [`Error::Parse`] for syntax, unknown keys or wrong types; [`Error::InvalidField`] naming the
    /// field and its range otherwise.
    pub fn parse(text: &str, what: &str) -> Result<Self> {
        let sweep: Sweep = crate::card::parse_toml(text, what)?;
        sweep.check()?;
        Ok(sweep)
    }

    /// Checks every field.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the field.
    pub fn check(&self) -> Result<()> {
        let name_ok =
            !self.name.is_empty() && self.name.len() <= 100 && self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
        if !name_ok || self.name.starts_with('.') {
            return Err(Error::field(
                "name",
                format!("got `{}`", self.name),
                "1 to 100 letters, digits, `_`, `-`, `.`, not starting with `.` (it names files)",
            ));
        }
        if self.card.is_empty() {
            return Err(Error::field("card", "empty", "the path of a claim card"));
        }
        if let Base::Named(n) = &self.base {
            if n.is_empty() {
                return Err(Error::field("base", "empty", "a scenario name of the card, or a [base] table"));
            }
        }
        for (i, k) in self.unset.iter().enumerate() {
            check_key(&format!("unset[{i}]"), k)?;
        }
        if let Some((i, c)) = crate::error::first_repeat(&self.claims) {
            return Err(Error::field(format!("claims[{i}]"), format!("`{c}` listed twice"), "distinct claim ids"));
        }
        if self.axes.is_empty() {
            return Err(Error::field("axes", "none", "at least one [[axes]] entry"));
        }
        for (i, a) in self.axes.iter().enumerate() {
            a.check(&format!("axes[{i}]"), self.design)?;
            if self.axes[..i].iter().any(|b| b.key == a.key) {
                return Err(Error::field(format!("axes[{i}].key"), format!("`{}` varied twice", a.key), "distinct keys"));
            }
            // A key below another varied key would be overwritten by it, in an order-dependent way.
            if let Some(b) = self.axes[..i].iter().find(|b| a.key.starts_with(&format!("{}.", b.key)) || b.key.starts_with(&format!("{}.", a.key))) {
                return Err(Error::field(
                    format!("axes[{i}].key"),
                    format!("`{}` and `{}` overlap", a.key, b.key),
                    "keys neither of which is inside the other",
                ));
            }
        }
        match self.design {
            Design::Grid => {
                if self.samples.is_some() || self.seed.is_some() {
                    return Err(Error::field("samples", "given with design = \"grid\"", "samples and seed only with design = \"random\""));
                }
            }
            Design::Random => {
                match self.samples {
                    Some(s) if (1..=MAX_SCENARIOS).contains(&s) => {}
                    s => {
                        let got = s.map_or("missing".to_string(), |s| format!("got {s}"));
                        return Err(Error::field("samples", got, format!("an integer from 1 to {MAX_SCENARIOS} (random design)")));
                    }
                }
                if self.seed.is_none() {
                    return Err(Error::field("seed", "missing", "an integer >= 0 (random design)"));
                }
            }
        }
        self.len()?;
        Ok(())
    }

    /// How many scenarios the sweep expands to.
    ///
    /// # Errors
    /// [`Error::InvalidField`] above [`MAX_SCENARIOS`].
    pub fn len(&self) -> Result<usize> {
        let n = match self.design {
            Design::Random => self.samples.unwrap_or(0),
            Design::Grid => self.axes.iter().try_fold(1usize, |acc, a| acc.checked_mul(a.grid_len())).unwrap_or(usize::MAX),
        };
        if n > MAX_SCENARIOS {
            return Err(Error::field("axes", format!("{n} scenarios"), format!("at most {MAX_SCENARIOS} scenarios per sweep (split it)")));
        }
        Ok(n)
    }

    /// Whether the sweep is empty (never, once checked).
    pub fn is_empty(&self) -> bool {
        self.len().map(|n| n == 0).unwrap_or(true)
    }
}

/// The share of a sweep one job runs: `index` of `count` (1-based), scenario `j` belonging to
/// share `j mod count + 1`, so every share mixes cheap and costly corners of a grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based index.
    pub index: usize,
    /// Number of shares.
    pub count: usize,
}

/// Most shares a sweep may be split into.
pub const MAX_SHARDS: usize = 1_000_000;

impl Shard {
    /// The whole sweep.
    pub const ALL: Shard = Shard { index: 1, count: 1 };

    /// Parses `i/N`, `1 <= i <= N`.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming `--shard`.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || Error::field("--shard", format!("got `{text}`"), format!("i/N with integers 1 <= i <= N <= {MAX_SHARDS}, e.g. 3/4"));
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether scenario `j` (0-based) is in this share.
    pub fn owns(&self, j: usize) -> bool {
        j % self.count + 1 == self.index
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
