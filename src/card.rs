//! What every claim card shares (`theorems/*.toml`): the family's metadata, one human-readable
//! entry per claim, and how each inconsistency of the source is encoded. A family's card adds its
//! own scenario schema beside these.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Family metadata.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyInfo {
    /// Family id as the card names it (the paper's prefix and algorithm).
    pub id: String,
    /// Paper.
    pub paper: String,
    /// Paper text files (relative to the papers folder).
    pub source_files: Vec<String>,
    /// Algorithm and its listing.
    pub algorithm: String,
    /// The code family that reads this card (`"ccyw"`; cards without the key are this family's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
}

/// One claim's human-readable card.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimCard {
    /// Claim id (as in CLAIMS.md; variants append `~name`).
    pub id: String,
    /// Title.
    pub title: String,
    /// The statement in ASCII math.
    pub statement: String,
    /// Source lines.
    pub source: String,
    /// Assumptions.
    pub assumptions: Vec<String>,
    /// Conditions.
    pub conditions: Vec<String>,
    /// The metric bounded.
    pub metric: String,
    /// Where the bound is evaluated.
    #[serde(default)]
    pub bound: BoundSpec,
    /// Which reading is encoded, and why.
    pub reading: String,
    /// The claim as formulas over the family's symbols: for a built-in claim its twin (checked
    /// against the Rust by a property test), for a card-defined claim the claim itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<crate::formula::FormulaCard>,
    /// Why no scenario of the card checks this claim with slack (bound / observed) below 2, where
    /// none does: a factor-2 error in one of its terms would then not flip any verdict, so the
    /// card says why such a scenario cannot exist on this family's problems (a bound attained
    /// exactly, a loss the proof makes on every instance, a statement with no slack), with the
    /// numbers that show it. `tests/tight_scenarios.rs` holds every card to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tightness: Option<String>,
}

/// How a bound is evaluated.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct BoundSpec {
    /// Name of a built-in bound function (the claim id it implements).
    pub builtin: Option<String>,
    /// Reserved: a formula over the claim inputs, evaluated at run time.
    pub formula: Option<String>,
}

/// One inconsistency of the source and how it is encoded.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InconsistencyCard {
    /// Item id in CLAIMS.md section 5.
    pub id: String,
    /// What disagrees.
    pub summary: String,
    /// The reading encoded and checked.
    pub encoded: String,
    /// The flagged variant exposing the other reading, if it changes a number.
    pub variant: Option<String>,
    /// Whether a computation can test it.
    pub checkable: bool,
    /// Why not, when it cannot.
    pub reason: Option<String>,
}

/// SHA-256 of a scenario's canonical JSON form, first 16 hex digits: the id reports give a
/// scenario, so a reader can tell two runs of the same scenario from runs of edited ones.
pub fn canonical_hash<T: Serialize>(scenario: &T) -> String {
    use sha2::{Digest, Sha256};
    let json = serde_json::to_string(scenario).unwrap_or_default();
    Sha256::digest(json.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The claim statements of a family's embedded cards, read once per process: a family's `claims`
/// is asked for often (routing, validation, summaries) and parsing its cards each time is waste.
pub struct Statements(std::sync::OnceLock<Vec<(String, String)>>);

impl Statements {
    /// Not yet read.
    pub const fn new() -> Self {
        Self(std::sync::OnceLock::new())
    }

    /// The statement of claim `id`, empty when the cards have none; `entries` gives the cards'
    /// claim entries the first time (an empty list when the cards cannot be read, which a test of
    /// each family's embedded cards rules out).
    pub fn of(&self, id: &str, entries: impl FnOnce() -> Vec<ClaimCard>) -> String {
        let all = self.0.get_or_init(|| entries().into_iter().map(|c| (c.id, c.statement)).collect());
        all.iter().find(|(k, _)| k == id).map(|(_, v)| v.clone()).unwrap_or_default()
    }
}

impl Default for Statements {
    fn default() -> Self {
        Self::new()
    }
}

/// Refuses a scenario that names another family (`family = "NAME"`, as a scenario file names
/// its family); one without the key is the reading family's.
///
/// # Errors
/// Bad input naming `field.family` and the family that reads it.
pub fn require_family(field: &str, named: Option<&str>, family: &str) -> Result<()> {
    match named.filter(|f| *f != family) {
        Some(f) => Err(Error::field(format!("{field}.family"), format!("`{f}` in a scenario of family `{family}`"), family)),
        None => Ok(()),
    }
}

/// Refuses a scenario whose name an earlier scenario of the same card already has: scenario
/// names are the ids of report rows and files, so they must be unique within a card.
///
/// # Errors
/// Bad input naming `scenarios[index].name`.
pub fn require_new_scenario_name<'a>(earlier: impl IntoIterator<Item = &'a str>, index: usize, name: &str) -> crate::error::Result<()> {
    if earlier.into_iter().any(|o| o == name) {
        return Err(crate::error::Error::field(format!("scenarios[{index}].name"), format!("`{name}` appears twice"), "unique scenario names"));
    }
    Ok(())
}

/// For a family that reads no claims defined by formulas: every claim id of its card must be
/// built in.
///
/// # Errors
/// [`Error::InvalidField`] naming the first claim that is not built in and the ones that are.
pub fn refuse_card_claims(family: &str, ids: &[&str], builtin: &[&str]) -> Result<()> {
    match ids.iter().find(|id| !builtin.contains(id)) {
        Some(id) => Err(Error::field(format!("claims[{id}]"), format!("family `{family}` reads no claims defined in a card"), builtin.join(", "))),
        None => Ok(()),
    }
}

/// Reads TOML text (a card or a scenario file) into `T`.
///
/// # Errors
/// [`Error::Parse`] naming `what`, with the line and column, the dotted path of the value at fault
/// (`instance.clients[1].hessian`, joined with the path a table read whole reports, see
/// [`crate::strict::value_at_path`]) and the parser's message.
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_path_to_error::deserialize(toml::Deserializer::new(text)).map_err(|e| {
        let outer = e.path().to_string();
        let inner = e.into_inner();
        let (path, message) = crate::strict::join_path(&outer, inner.message());
        let place = match inner.span() {
            Some(span) => {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                let source = text.lines().nth(line - 1).unwrap_or_default().trim();
                format!("line {line}, column {column} (`{source}`): ")
            }
            None => String::new(),
        };
        Error::Parse { what: what.to_string(), place, path, message: message.into_owned() }
    })
}

/// Refuses an expected-verdict key (`<field>.expected.<key>`) that is not a claim id of `known`.
///
/// # Errors
/// [`Error::InvalidField`] naming the first unknown key and the known ids.
pub fn require_known_claims<'a>(field: &str, keys: impl IntoIterator<Item = &'a String>, known: &[&str]) -> Result<()> {
    match keys.into_iter().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(Error::field(format!("{field}.expected.{key}"), "unknown claim id", known.join(", "))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_of_another_family_is_refused_naming_its_field_and_the_family() {
        assert!(require_family("scenarios[0] (s)", None, "gd").is_ok(), "no key: the reading family's");
        assert!(require_family("scenarios[0] (s)", Some("gd"), "gd").is_ok());
        let err = require_family("scenarios[0] (s)", Some("other"), "gd").unwrap_err();
        assert!(err.is_bad_input());
        let message = err.to_string();
        assert!(message.contains("scenarios[0] (s).family") && message.contains("`other`") && message.contains("gd"), "{message}");
    }
}
