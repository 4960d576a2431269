//! A sweep resolved against its card: the family, the base scenario, and the scenario at each
//! index (its id, the values of its axes, and its table), computed on demand and deterministically.

use rand::Rng;

use crate::card::canonical_hash;
use crate::error::{Error, Result};
use crate::family::Family;
use crate::registry::Registry;
use crate::rng::StreamKey;

use super::spec::{Axis, Base, Design, Scale, Sweep};

/// One scenario of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// 0-based index in the sweep's order.
    pub index: usize,
    /// `<sweep name>-<index>`, zero-padded.
    pub id: String,
    /// Each axis's key and value, in the sweep's axis order.
    pub parameters: Vec<(String, toml::Value)>,
    /// The scenario table (the base with the axes' values and `name = id`).
    pub table: toml::Table,
}

/// A sweep with its card and family.
pub struct Plan {
    /// The sweep file.
    pub sweep: Sweep,
    /// The family its card belongs to.
    pub family: &'static dyn Family,
    /// The card, parsed as a table (its scenarios are kept: other entries may refer to them).
    pub card: toml::Table,
    /// The base scenario after `unset`, without its `name`.
    pub base: toml::Table,
    /// How many scenarios.
    pub len: usize,
    /// Identity of the sweep's inputs (sweep and card).
    pub hash: String,
    /// Identity of the card's text.
    pub card_hash: String,
    width: usize,
}

/// Sets `key` (dotted) of `table` to `value`, creating tables on the way.
///
/// # Errors
/// [`Error::InvalidField`] naming `field` when a segment on the way is not a table.
pub fn set_key(table: &mut toml::Table, key: &str, value: toml::Value, field: &str) -> Result<()> {
    let mut segments: Vec<&str> = key.split('.').collect();
    let last = segments.pop().unwrap_or(key);
    let mut at = table;
    let mut path = String::new();
    for s in segments {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(s);
        let entry = at.entry(s.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        at = match entry {
            toml::Value::Table(t) => t,
            other => {
                return Err(Error::field(
                    field,
                    format!("`{path}` is a {} in the base scenario, not a table", other.type_str()),
                    "a key whose parents are tables",
                ));
            }
        };
    }
    at.insert(last.to_string(), value);
    Ok(())
}

/// Removes `key` (dotted) from `table`.
///
/// # Errors
/// [`Error::InvalidField`] naming `field` when the key is absent.
pub fn unset_key(table: &mut toml::Table, key: &str, field: &str) -> Result<()> {
    let mut segments: Vec<&str> = key.split('.').collect();
    let last = segments.pop().unwrap_or(key);
    let mut at = table;
    for s in segments {
        at = match at.get_mut(s) {
            Some(toml::Value::Table(t)) => t,
            _ => return Err(Error::field(field, format!("`{key}` is not in the base scenario"), "keys of the base scenario")),
        };
    }
    at.remove(last).map(|_| ()).ok_or_else(|| Error::field(field, format!("`{key}` is not in the base scenario"), "keys of the base scenario"))
}

/// A number as TOML: an integer when the axis asks for one.
fn number(x: f64, integer: bool) -> toml::Value {
    if integer {
        toml::Value::Integer(x.round() as i64)
    } else {
        toml::Value::Float(x)
    }
}

/// The `k`-th of `points` grid points over `[lo, hi]` ([`Axis::grid_point`]).
fn grid_value(axis: &Axis, lo: f64, hi: f64, k: usize, points: usize) -> toml::Value {
    number(axis.grid_point(lo, hi, k, points), axis.integer)
}

/// A draw from `[lo, hi]` (integers: each of `lo..=hi` equally likely on a linear scale).
fn random_value(axis: &Axis, lo: f64, hi: f64, u: f64) -> toml::Value {
    let x = match (axis.scale, axis.integer) {
        (Scale::Linear, true) => {
            let (a, b) = (lo.ceil(), hi.floor().max(lo.ceil()));
            (a + (u * (b - a + 1.0)).floor()).min(b)
        }
        (Scale::Linear, false) => lo + u * (hi - lo),
        (Scale::Log, _) => (lo.ln() + u * (hi.ln() - lo.ln())).exp(),
    };
    number(x, axis.integer)
}

impl Plan {
    /// Resolves a sweep against its card's text. The card's family must be registered (and be the
    /// sweep's `family` when it names one); the base scenario must exist; the first scenario must
    /// take every axis's key.
    ///
    /// # Errors
    /// Bad input naming the field.
    pub fn new(sweep: Sweep, card_text: &str, card_what: &str, registry: &Registry) -> Result<Self> {
        sweep.check()?;
        let family = registry.family_of(card_text, card_what)?;
        if let Some(f) = &sweep.family {
            if f != family.id() {
                return Err(Error::field("family", format!("`{f}` but the card `{card_what}` is of family `{}`", family.id()), family.id()));
            }
        }
        crate::family::require_estimator("estimator", family.id(), family.estimators(), sweep.estimator)?;
        let known: Vec<&'static str> = family.claims().iter().map(|c| c.id).collect();
        if let Some(c) = sweep.claims.iter().find(|c| !known.contains(&c.as_str())) {
            return Err(Error::Unknown { kind: "claim", name: c.clone(), known: known.join(", ") });
        }
        let card: toml::Table = crate::card::parse_toml(card_text, card_what)?;
        let scenarios: Vec<&toml::Table> = match card.get("scenarios") {
            Some(toml::Value::Array(a)) => a.iter().filter_map(|v| v.as_table()).collect(),
            _ => Vec::new(),
        };
        let names: Vec<&str> = scenarios.iter().filter_map(|s| s.get("name").and_then(|n| n.as_str())).collect();
        let mut base = match &sweep.base {
            Base::Named(n) => scenarios
                .iter()
                .find(|s| s.get("name").and_then(|v| v.as_str()) == Some(n.as_str()))
                .map(|s| (*s).clone())
                .ok_or_else(|| Error::Unknown { kind: "base scenario", name: n.clone(), known: names.join(", ") })?,
            Base::Inline(t) => t.clone(),
        };
        base.remove("name");
        for (i, k) in sweep.unset.iter().enumerate() {
            unset_key(&mut base, k, &format!("unset[{i}]"))?;
        }
        let prefix = format!("{}-", sweep.name);
        if let Some(n) = names.iter().find(|n| n.strip_prefix(&prefix).is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))) {
            return Err(Error::field(
                "name",
                format!("the card has a scenario `{n}`, which a scenario id of the sweep could repeat"),
                "a name no scenario of the card starts with",
            ));
        }
        let len = sweep.len()?;
        let width = len.saturating_sub(1).to_string().len().max(4);
        let hash = canonical_hash(&(&sweep, card_text, env!("CARGO_PKG_VERSION")));
        let card_hash = canonical_hash(&card_text);
        let plan = Plan { sweep, family, card, base, len, hash, card_hash, width };
        if len > 0 {
            plan.point(0)?;
        }
        Ok(plan)
    }

    /// Reads a sweep file and its card (`card` relative to the sweep file's folder).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file; bad input naming the field.
    pub fn load(path: &std::path::Path, registry: &Registry) -> Result<Self> {
        let read = crate::text_file::read_text;
        let what = path.display().to_string();
        let sweep = Sweep::parse(&read(path)?, &what)?;
        let card_path = path.parent().unwrap_or(std::path::Path::new("")).join(&sweep.card);
        let card_text = read(&card_path)?;
        Self::new(sweep, &card_text, &card_path.display().to_string(), registry)
    }

    /// The id of scenario `index`.
    pub fn id(&self, index: usize) -> String {
        format!("{}-{:0w$}", self.sweep.name, index, w = self.width)
    }

    /// The value axis `j` takes in scenario `index`.
    fn value(&self, index: usize, j: usize, coords: &[usize]) -> toml::Value {
        let axis = &self.sweep.axes[j];
        match self.sweep.design {
            Design::Grid => match (&axis.values, axis.range) {
                (Some(v), _) => v[coords[j]].clone(),
                (None, Some([lo, hi])) => grid_value(axis, lo, hi, coords[j], axis.points.unwrap_or(1)),
                (None, None) => toml::Value::Boolean(false),
            },
            Design::Random => {
                let key = StreamKey { seed: self.sweep.seed.unwrap_or(0), replicate: index as u64, round: j as u64, client: 0 };
                let mut rng = key.rng(0);
                match (&axis.values, axis.range) {
                    (Some(v), _) => v[rng.gen_range(0..v.len())].clone(),
                    (None, Some([lo, hi])) => random_value(axis, lo, hi, rng.gen::<f64>()),
                    (None, None) => toml::Value::Boolean(false),
                }
            }
        }
    }

    /// Scenario `index`: the base with every axis's value set and `name` the id.
    ///
    /// # Errors
    /// [`Error::InvalidField`] for an index past the end or a key that cannot be set.
    pub fn point(&self, index: usize) -> Result<Point> {
        if index >= self.len {
            return Err(Error::field("index", format!("got {index}"), format!("< {}", self.len)));
        }
        // Mixed-radix digits of the index, last axis fastest.
        let mut coords = vec![0; self.sweep.axes.len()];
        if self.sweep.design == Design::Grid {
            let mut rest = index;
            for (j, a) in self.sweep.axes.iter().enumerate().rev() {
                let n = a.grid_len().max(1);
                coords[j] = rest % n;
                rest /= n;
            }
        }
        let id = self.id(index);
        let mut table = self.base.clone();
        let mut parameters = Vec::with_capacity(self.sweep.axes.len());
        for (j, a) in self.sweep.axes.iter().enumerate() {
            let v = self.value(index, j, &coords);
            set_key(&mut table, &a.key, v.clone(), &format!("axes[{j}].key"))?;
            parameters.push((a.key.clone(), v));
        }
        table.insert("name".into(), toml::Value::String(id.clone()));
        Ok(Point { index, id, parameters, table })
    }
}
