//! The registered families, and a check across them: claim ids and scenario names are resolved
//! against every family before any run, and a card goes to the family it names.

use crate::error::{Error, Result};
use crate::family::{CardText, CheckRequest, Family, Progress};
use crate::outcome::{CheckOutcome, FamilyOutcome};

/// The registered families. The first is the default for scenario and card files that name no
/// family (files written before families existed).
#[derive(Clone)]
pub struct Registry {
    families: Vec<&'static dyn Family>,
}

impl Registry {
    /// A registry of these families, the first being the default.
    ///
    /// # Errors
    /// [`Error::InvalidField`] when empty or when two families share an id or a claim id.
    pub fn new(families: Vec<&'static dyn Family>) -> Result<Self> {
        if families.is_empty() {
            return Err(Error::field("families", "none registered", "at least one family"));
        }
        let mut ids: Vec<&str> = Vec::new();
        let mut claims: Vec<&str> = Vec::new();
        for f in &families {
            if ids.contains(&f.id()) {
                return Err(Error::field("families", format!("`{}` registered twice", f.id()), "distinct family ids"));
            }
            ids.push(f.id());
            for c in f.claims() {
                if claims.contains(&c.id) {
                    return Err(Error::field("families", format!("claim `{}` declared twice", c.id), "distinct claim ids"));
                }
                claims.push(c.id);
            }
        }
        Ok(Self { families })
    }

    /// Every family, in registry order.
    pub fn families(&self) -> &[&'static dyn Family] {
        &self.families
    }

    /// The family of files that name none.
    pub fn default_family(&self) -> &'static dyn Family {
        self.families[0]
    }

    /// The family with this id.
    ///
    /// # Errors
    /// [`Error::Unknown`] listing the registered ids.
    pub fn by_id(&self, id: &str) -> Result<&'static dyn Family> {
        self.families.iter().copied().find(|f| f.id() == id).ok_or_else(|| Error::Unknown {
            kind: "family",
            name: id.to_string(),
            known: self.families.iter().map(|f| f.id()).collect::<Vec<_>>().join(", "),
        })
    }

    /// The family that declares claim `id` (built in).
    pub fn family_of_claim(&self, id: &str) -> Option<&'static dyn Family> {
        self.families.iter().copied().find(|f| f.claims().iter().any(|c| c.id == id))
    }

    /// The card's family, and the claims the card defines (read, nothing kept).
    ///
    /// # Errors
    /// As [`Registry::family_of`] and [`Family::card_claims`].
    pub fn read_card(&self, card: &CardText) -> Result<(&'static dyn Family, Vec<crate::family::ClaimSummary>)> {
        let family = self.family_of(&card.text, &card.what)?;
        let claims = family.card_claims(card)?;
        Ok((family, claims))
    }

    /// The family a scenario or card file belongs to: its top-level `family = "id"` key, or (in a
    /// card) `[family] module = "id"`; files that name none belong to the default family.
    ///
    /// # Errors
    /// [`Error::Parse`] for a file that is not TOML; [`Error::Unknown`] for an unregistered id.
    pub fn family_of(&self, text: &str, what: &str) -> Result<&'static dyn Family> {
        let table: toml::Table = crate::card::parse_toml(text, what)?;
        match table.get("family") {
            Some(toml::Value::String(id)) => self.by_id(id),
            Some(toml::Value::Table(t)) => match t.get("module").and_then(|v| v.as_str()) {
                Some(id) => self.by_id(id),
                None => Ok(self.default_family()),
            },
            _ => Ok(self.default_family()),
        }
    }

    /// Checks that every requested claim id belongs to some family, or is defined by `card`.
    ///
    /// # Errors
    /// [`Error::Unknown`] naming the first unknown id and every known one; a card that cannot be
    /// read.
    pub fn require_known_claims(&self, ids: &[String], card: Option<&CardText>) -> Result<()> {
        let mut known: Vec<&'static str> = self.families.iter().flat_map(|f| f.claims().into_iter().map(|c| c.id)).collect();
        if let Some(card) = card {
            known.extend(self.read_card(card)?.1.into_iter().map(|c| c.id));
        }
        match ids.iter().find(|id| !known.contains(&id.as_str())) {
            Some(id) => Err(Error::Unknown { kind: "claim", name: id.clone(), known: known.join(", ") }),
            None => Ok(()),
        }
    }

    /// Runs `request` on every family concerned (in registry order) and collects their reports.
    /// Claim ids and scenario names are checked against all families first, so a typo fails
    /// before any run; a card given on the command line goes to the family it names.
    ///
    /// # Errors
    /// The first error (bad input fails before any run of the family at fault); bad input when
    /// the request selects no claim on any scenario (a check that checks nothing fails).
    pub fn check(&self, request: &CheckRequest, progress: &dyn Progress) -> Result<CheckOutcome> {
        self.require_known_claims(&request.claims, request.card.as_ref())?;
        let card_family = match &request.card {
            Some(card) => Some(self.family_of(&card.text, &card.what)?.id()),
            None => None,
        };
        if !request.scenarios.is_empty() && card_family.is_none() {
            let mut known = Vec::new();
            for f in &self.families {
                known.extend(f.scenario_names()?);
            }
            if let Some(name) = request.scenarios.iter().find(|s| !known.contains(s)) {
                return Err(Error::Unknown { kind: "scenario", name: name.clone(), known: known.join(", ") });
            }
        }
        let mut concerned = Vec::new();
        for f in &self.families {
            let selected = match card_family {
                Some(id) => id == f.id(),
                None => {
                    let claimed = request.claims.is_empty() || f.claims().iter().any(|c| request.claims.iter().any(|id| id == c.id));
                    let named = request.scenarios.is_empty() || f.scenario_names()?.iter().any(|s| request.scenarios.contains(s));
                    claimed && named
                }
            };
            if selected {
                // Before any family runs: an estimator one of them does not offer is bad input.
                crate::family::require_estimator("--estimator", f.id(), f.estimators(), request.estimator)?;
                concerned.push(f);
            }
        }
        let mut outcome = CheckOutcome::default();
        for f in concerned {
            let claims = f.claims_with(request.card.as_ref().filter(|_| card_family == Some(f.id())))?;
            outcome.families.push(FamilyOutcome { id: f.id(), title: f.title(), claims, report: f.check(request, progress)? });
        }
        if outcome.rows().next().is_none() {
            let mut asked: Vec<String> = request.claims.iter().map(|c| format!("--claim {c}")).collect();
            asked.extend(request.scenarios.iter().map(|s| format!("--scenario {s}")));
            asked.extend(request.card.iter().map(|c| format!("--card {}", c.what)));
            let asked = if asked.is_empty() { "the default scenarios".to_string() } else { asked.join(" ") };
            return Err(Error::field(
                "--claim, --scenario",
                format!("nothing checked: {asked} selects no claim on a scenario of its setting"),
                "a claim and a scenario of the same family, the scenario in the claim's setting (`fedbounds list`)",
            ));
        }
        Ok(outcome)
    }
}
