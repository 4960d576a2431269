//! A family's claim card as written (`theorems/*.toml`): the parts every family's card shares
//! (its metadata, one entry per claim, the inconsistencies, what the adversarial search is
//! expected to find), its scenarios, and the top-level sections only that family reads.
//!
//! Unknown keys are errors at every level: the shared parts and the family's scenarios refuse
//! them by `deny_unknown_fields`, and a top-level key that is not shared is handed to the family's
//! sections type, which refuses it the same way. (serde's `flatten` cannot be combined with
//! `deny_unknown_fields`, which is why the split is written here once instead of in each
//! family's card.)

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;

use crate::card::{ClaimCard, FamilyInfo, InconsistencyCard};
use crate::search::CardSearch;

/// A card's claim entries and its readings of the paper's inconsistencies.
pub type CardEntries<'c> = (Vec<&'c ClaimCard>, Vec<&'c InconsistencyCard>);

/// A scenario as a card holds it: what the checker reads of it without knowing its family.
pub trait CardScenario {
    /// Its name, unique in its card (`--scenario` selects it).
    fn name(&self) -> &str;
    /// The claim ids it expects a verdict of (its `expected` keys, of every constants source):
    /// each selected one must be computed by its run, else the check is refused (nothing checked
    /// is no pass). Required, so that no family turns that guard off by leaving it out.
    fn expected_claims(&self) -> Vec<&str>;
}

/// A card as read: its scenarios in card order, and its claim entries and inconsistencies (what
/// `explain` prints).
pub trait CardView<S> {
    /// The scenarios, in card order.
    fn scenarios(&self) -> Vec<&S>;
    /// The claim entries and the readings of the paper's inconsistencies.
    fn entries(&self) -> CardEntries<'_>;
}

impl<S, X> CardView<S> for PaperCard<S, X> {
    fn scenarios(&self) -> Vec<&S> {
        self.scenarios.iter().collect()
    }
    fn entries(&self) -> CardEntries<'_> {
        (self.claims.iter().collect(), self.inconsistencies.iter().collect())
    }
}

impl<S: CardScenario, X> PaperCard<S, X> {
    /// Checks every scenario in card order with `check(field, scenario)` (`field` is
    /// `scenarios[i] (NAME)`), and that no name repeats an earlier one.
    ///
    /// # Errors
    /// The first scenario's error; [`crate::error::Error::InvalidField`] for a repeated name.
    pub fn check_scenarios(&self, mut check: impl FnMut(&str, &S) -> crate::error::Result<()>) -> crate::error::Result<()> {
        for (i, s) in self.scenarios.iter().enumerate() {
            check(&format!("scenarios[{i}] ({})", s.name()), s)?;
            crate::card::require_new_scenario_name(self.scenarios[..i].iter().map(|o| o.name()), i, s.name())?;
        }
        Ok(())
    }
}

/// A family's claim card: the shared header, scenarios `S`, the family's own sections `X`.
#[derive(Debug, Clone)]
pub struct PaperCard<S, X = NoSections> {
    /// The family.
    pub family: FamilyInfo,
    /// One entry per claim and variant.
    pub claims: Vec<ClaimCard>,
    /// How each inconsistency of the source is encoded.
    pub inconsistencies: Vec<InconsistencyCard>,
    /// Default scenarios.
    pub scenarios: Vec<S>,
    /// What the adversarial search is expected to find.
    pub search: CardSearch,
    /// The top-level sections only this family reads.
    pub sections: X,
}

/// A family whose card has no sections of its own: any other top-level key is refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoSections {}

/// Read by hand: the derive's message for a struct without fields is "there are no fields".
impl<'de> Deserialize<'de> for NoSections {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match toml::Table::deserialize(deserializer)?.keys().next() {
            Some(key) => Err(serde::de::Error::custom(format!("unknown field `{key}`: this family's card has no top-level sections of its own"))),
            None => Ok(NoSections {}),
        }
    }
}

/// The top-level keys every card has (besides its family's sections).
const SHARED_KEYS: &str = "`family`, `claims`, `inconsistencies`, `scenarios` and `search`";

impl<'de, S: Deserialize<'de>, X: DeserializeOwned> Deserialize<'de> for PaperCard<S, X> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Written<S> {
            #[serde(deserialize_with = "family_table")]
            family: FamilyInfo,
            claims: Vec<ClaimCard>,
            #[serde(default)]
            inconsistencies: Vec<InconsistencyCard>,
            scenarios: Vec<S>,
            #[serde(default)]
            search: CardSearch,
            #[serde(flatten)]
            rest: toml::Table,
        }
        let w = Written::<S>::deserialize(deserializer)?;
        let ids: Vec<&str> = w.inconsistencies.iter().map(|i| i.id.as_str()).collect();
        if let Some(k) = (0..ids.len()).find(|&k| ids[..k].contains(&ids[k])) {
            return Err(serde::de::Error::custom(format!("inconsistencies[{k}].id: `{}` appears twice (each inconsistency once, by a unique id)", ids[k])));
        }
        let sections = X::deserialize(toml::Value::Table(w.rest))
            .map_err(|e| serde::de::Error::custom(format!("{} (besides the top-level keys every card has: {SHARED_KEYS})", e.message())))?;
        Ok(Self { family: w.family, claims: w.claims, inconsistencies: w.inconsistencies, scenarios: w.scenarios, search: w.search, sections })
    }
}

/// The `[family]` table. `family = "NAME"`, the form a scenario file names its family by, is
/// refused with how a card writes it instead.
fn family_table<'de, D: Deserializer<'de>>(deserializer: D) -> Result<FamilyInfo, D::Error> {
    match toml::Value::deserialize(deserializer)? {
        toml::Value::String(name) => Err(serde::de::Error::custom(format!(
            "`family = \"{name}\"` names the family of a scenario file; a card writes a [family] table: id, paper, source_files, algorithm and module = \"{name}\""
        ))),
        table => FamilyInfo::deserialize(table).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Scenario {
        name: String,
    }

    impl CardScenario for Scenario {
        fn name(&self) -> &str {
            &self.name
        }
        fn expected_claims(&self) -> Vec<&str> {
            Vec::new()
        }
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Sections {
        #[serde(default)]
        sweep: Option<Vec<f64>>,
    }

    const HEADER: &str = "claims = []\n[family]\nid = \"T\"\npaper = \"p\"\nsource_files = []\nalgorithm = \"a\"\n";

    fn read<X: DeserializeOwned>(extra: &str) -> Result<PaperCard<Scenario, X>, String> {
        let text = format!("{extra}\n{HEADER}\n[[scenarios]]\nname = \"s\"\n");
        toml::from_str(&text).map_err(|e| e.to_string())
    }

    #[test]
    fn shared_parts_scenarios_and_sections_are_read_and_unknown_keys_refused_at_every_level() {
        let card = read::<Sections>("sweep = [1.0, 2.0]").unwrap();
        assert_eq!((card.family.id.as_str(), card.scenarios[0].name.as_str()), ("T", "s"));
        assert_eq!(card.sections.sweep, Some(vec![1.0, 2.0]));
        assert!(card.search.expected.is_empty() && card.inconsistencies.is_empty());
        // Controls: an unknown top-level key, one the family has no section for, an unknown key
        // in a scenario and in the shared header are each refused, naming the key.
        assert!(read::<Sections>("swep = 1").unwrap_err().contains("swep"));
        assert!(read::<NoSections>("sweep = [1.0]").unwrap_err().contains("sweep"));
        // Each names the key and what the top level may hold, never serde's "there are no fields".
        let none = read::<NoSections>("zz = 1").unwrap_err();
        assert!(none.contains("unknown field `zz`: this family's card has no top-level sections") && none.contains("`scenarios`"), "{none}");
        assert!(!none.contains("there are no fields"), "{none}");
        let some = read::<Sections>("swep = 1").unwrap_err();
        assert!(some.contains("expected `sweep`") && some.contains("`family`, `claims`"), "{some}");
        let bad_scenario: Result<PaperCard<Scenario>, _> = toml::from_str(&format!("{HEADER}\n[[scenarios]]\nname = \"s\"\nnmae = 1\n"));
        assert!(bad_scenario.unwrap_err().to_string().contains("nmae"));
        let bad_family: Result<PaperCard<Scenario>, _> = toml::from_str(&HEADER.replace("algorithm", "algorithmm"));
        assert!(bad_family.unwrap_err().to_string().contains("algorithmm"));
        // A scenario file's `family = "NAME"` at the head of a card says how a card writes it.
        let named: Result<PaperCard<Scenario>, _> = toml::from_str("family = \"t\"\nclaims = []\n[[scenarios]]\nname = \"s\"\n");
        let message = named.unwrap_err().to_string();
        assert!(message.contains("a card writes a [family] table") && message.contains("module = \"t\""), "{message}");
    }

    #[test]
    fn every_scenario_is_checked_under_its_field_and_a_repeated_name_is_refused() {
        let card: PaperCard<Scenario> = toml::from_str(&format!("{HEADER}\n[[scenarios]]\nname = \"a\"\n[[scenarios]]\nname = \"b\"\n")).unwrap();
        let mut fields = Vec::new();
        card.check_scenarios(|field, _| {
            fields.push(field.to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(fields, ["scenarios[0] (a)", "scenarios[1] (b)"]);
        assert_eq!(card.scenarios().len(), 2);
        // Controls: a scenario's own error comes back as it is; a repeated name is refused naming
        // the later scenario's index.
        let refused = card.check_scenarios(|field, s| if s.name == "b" { Err(crate::error::Error::field(field, "bad", "good")) } else { Ok(()) });
        assert!(refused.unwrap_err().to_string().contains("scenarios[1] (b)"));
        let twice: PaperCard<Scenario> = toml::from_str(&format!("{HEADER}\n[[scenarios]]\nname = \"a\"\n[[scenarios]]\nname = \"a\"\n")).unwrap();
        let message = twice.check_scenarios(|_, _| Ok(())).unwrap_err().to_string();
        assert!(message.contains("scenarios[1].name") && message.contains("appears twice"), "{message}");
    }
}
