//! The adversarial search of any family, written once: the worst admissible instance of a claim
//! and the room its step-size conditions leave.
//!
//! A family opts in with a [`SearchSpace`]: it decodes a point of the unit cube into one of its
//! scenarios whose steps satisfy the claim's conditions (or multiplies one step by a factor past
//! its condition), and writes a card that replays a scenario. Everything else is the core's:
//!
//! - **the objective** is the family's own check of the claim on the decoded scenario
//!   ([`Plugin::prepare`], [`Plugin::run`]), read from the claim's row of the requested constants
//!   source: `observed / bound = 1 / slack` at the decisive checkpoint (a ratio above 1 is a
//!   counterexample; a diverged run is `+inf`); a row that is not applicable or not decided
//!   contributes its reason, never a number;
//! - **the worst case**: [`super::maximize`] (seeded random candidates, then coordinate refinement;
//!   independent of the thread count);
//! - **the step room** of each step-size condition `j`: the step multiplied by `c = 2^e`,
//!   `e = 0, 1, ..., MAX_DOUBLINGS`, compared with the printed bound although the condition no
//!   longer holds ([`crate::verdict::Evaluation::beyond_steps`]): on the worst instance found, the
//!   largest `c` up to which the bound still holds and the smallest at which it breaks; over any
//!   instance, the same from a search of its own at each `c` (stopping at the first break).

use rayon::prelude::*;
use serde::Serialize;

use super::{maximize, search_verdict, Candidate, Evaluated, Maximum};
use crate::checker::{Plugin, RunOutcome, RunSettings};
use crate::error::Result;
use crate::family::Progress;
use crate::verdict::{ConstantsSource, VerdictKind};

/// The search space of plug-in `P`.
pub type SpaceOf<P> = dyn SearchSpace<<P as Plugin>::Card, <P as Plugin>::Claim, <P as Plugin>::Scenario>;

/// Evaluations of each "any instance" search of a step condition's room, per doubling.
pub const DEFAULT_ROOM_BUDGET: usize = 24;

/// Doublings of a step past its condition that the step room tries (`c` up to `2^10 = 1024`).
pub const MAX_DOUBLINGS: u32 = 10;

/// Where a family's adversarial search looks for a claim's worst case: over the family's card,
/// claim and scenario types (its [`Plugin`]'s `Card`, `Claim`, `Scenario`), so that a space does
/// not name the plug-in that names it.
pub trait SearchSpace<Card, Claim, Scenario>: Sync {
    /// What each unit-cube coordinate decodes to, with its range, in order (for reports).
    fn coordinates(&self, claim: &Claim) -> Vec<String>;
    /// The coordinates that refinement moves (all by default).
    fn live(&self, claim: &Claim) -> Vec<usize> {
        (0..self.coordinates(claim).len()).collect()
    }
    /// Whether the search covers `claim` (every claim by default).
    fn covers(&self, _claim: &Claim) -> bool {
        true
    }
    /// Why the search does not cover `claim` (`None` for a covered claim, or for one the family
    /// gives no reason for: the note then says it is not in the search space); written below the
    /// family's search table by [`not_searched_note`].
    fn not_searched(&self, _claim: &Claim) -> Option<&'static str> {
        None
    }
    /// The constants sources searched for `claim`, each its own search (the claim as stated,
    /// [`ConstantsSource::Exact`], by default).
    fn sources(&self, _claim: &Claim) -> Vec<ConstantsSource> {
        vec![ConstantsSource::Exact]
    }
    /// The search verdict the card expects for `claim`'s rows of constants `source` (`None`: a
    /// counterexample is a finding, anything else is not).
    fn expected(&self, _card: &Card, _claim: &Claim, _source: ConstantsSource) -> Option<VerdictKind> {
        None
    }
    /// Evaluations of the worst-case search and of each "any instance" room search in the main
    /// job (`fedbounds check`, all claims); `fedbounds search` takes them from its options.
    fn main_job_budget(&self) -> (usize, usize) {
        (100, 12)
    }
    /// The claim's step-size conditions whose room is measured, as the claim states them.
    fn step_conditions(&self, claim: &Claim) -> Vec<String>;
    /// The scenario `candidate` decodes to, its steps inside the claim's conditions; with
    /// `step = Some((j, c))`, the step that condition `j` limits multiplied by `c` (past it for
    /// `c > 1`).
    ///
    /// # Errors
    /// When the decoded scenario is not a valid one (e.g. a step past a hard limit of the
    /// family's inputs): the candidate is then traced as not applicable.
    fn decode(&self, card: &Card, claim: &Claim, candidate: &Candidate, step: Option<(usize, f64)>) -> Result<Scenario>;
    /// A card that `fedbounds check --card` reads to replay `scenario`, expecting `expected` for
    /// the claim's row of constants `source` ([`card_with_scenario`] writes one from the family's
    /// own card).
    ///
    /// # Errors
    /// When the scenario cannot be written.
    fn replay_card(&self, claim: &Claim, scenario: &Scenario, source: ConstantsSource, expected: VerdictKind) -> Result<String>;
}

/// The reason given for a claim the search does not cover when its family names none.
pub const NO_REASON: &str = "not in the search space (no entry in the family's search)";

/// Each claim of `claims` (id, whether the search covers it, the family's reason) that the
/// search does not cover, with its reason ([`NO_REASON`] when the family gives none).
pub fn not_searched<'a>(claims: impl IntoIterator<Item = (&'a str, bool, Option<&'a str>)>) -> Vec<(&'a str, &'a str)> {
    claims.into_iter().filter(|(_, covered, _)| !covered).map(|(id, _, why)| (id, why.unwrap_or(NO_REASON))).collect()
}

/// The built-in claims of plug-in `P` that `space` does not cover, each with its reason.
pub fn not_searched_of<P: Plugin>(plugin: &P, space: &SpaceOf<P>) -> Vec<(&'static str, &'static str)> {
    let claims = plugin.builtin_claims();
    not_searched(claims.iter().map(|c| (plugin.claim_id(c), space.covers(c), space.not_searched(c))))
}

/// The note below a family's search table in `SUMMARY.md`: every claim the search leaves out,
/// `- ID: reason` (the id in backquotes), one a line (empty when it leaves none out).
pub fn not_searched_note(entries: &[(&str, &str)]) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let mut s = String::from("\nNot searched:\n\n");
    for (id, why) in entries {
        s.push_str(&format!("- `{id}`: {why}\n"));
    }
    s
}

/// The choice of `choices` that the unit-cube coordinate `u` falls on (equal shares, in order).
pub fn pick<T: Copy>(choices: &[T], u: f64) -> T {
    choices[((u * choices.len() as f64) as usize).min(choices.len() - 1)]
}

/// What a card expects of its family's search (`[search] expected = { "ID" = "holds",
/// "ID@empirical" = "violated" }`): the search verdict per claim and constants source (the exact
/// rows are named by the claim id alone). A claim the card says nothing of is expected not to
/// be violated.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardSearch {
    /// Expected search verdicts.
    #[serde(default)]
    pub expected: std::collections::BTreeMap<String, VerdictKind>,
}

impl CardSearch {
    /// The expected verdict of `claim`'s rows of constants `source`.
    pub fn expected(&self, claim: &str, source: ConstantsSource) -> Option<VerdictKind> {
        let key = match source {
            ConstantsSource::Exact => claim.to_string(),
            other => format!("{claim}@{other}"),
        };
        self.expected.get(&key).copied()
    }

    /// Checks that every key names one of `claims` (with an optional `@empirical`, `@estimated`
    /// or `@calibrated`).
    ///
    /// # Errors
    /// [`crate::Error::InvalidField`] naming the key and the claims it may name.
    pub fn check(&self, claims: &[&str]) -> Result<()> {
        for key in self.expected.keys() {
            let (id, source) = key.split_once('@').map_or((key.as_str(), None), |(i, s)| (i, Some(s)));
            let known_source = source.is_none_or(|s| ["empirical", "estimated", "calibrated"].contains(&s));
            if !claims.contains(&id) || !known_source {
                return Err(crate::Error::field(
                    format!("search.expected.{key}"),
                    "names no claim of the card (or an unknown constants source)",
                    format!("a claim id, optionally with @empirical, @estimated or @calibrated: {}", claims.join(", ")),
                ));
            }
        }
        Ok(())
    }
}

/// A replay card found with a bound scaled by `scale` (a negative control), headed by the option
/// that reproduces its expected verdict: the card itself has no bound scale, and a check without
/// it compares the unscaled bound.
fn with_bound_scale(card: String, scale: f64) -> String {
    if scale == 1.0 {
        return card;
    }
    format!("# Found with --bound-scale {scale:?}: its expected verdict is reproduced by `fedbounds check --card <this file> --bound-scale {scale:?}`.\n{card}")
}

/// A card made of `card`'s text before its first `[[scenarios]]` (its family, claims and
/// readings) and `scenario` as its only scenario.
///
/// # Errors
/// [`crate::Error::Serialization`] when the scenario cannot be written as TOML.
pub fn card_with_scenario<S: Serialize>(card: &str, scenario: &S) -> Result<String> {
    #[derive(Serialize)]
    struct Only<'a, S: Serialize> {
        scenarios: [&'a S; 1],
    }
    let head = card.find("[[scenarios]]").map_or(card, |i| &card[..i]);
    let body = toml::to_string(&Only { scenarios: [scenario] }).map_err(|e| crate::Error::serialization("the replay card's scenario", e))?;
    Ok(format!("{}\n{body}", head.trim_end()))
}

/// What a search is asked for.
#[derive(Debug, Clone, Copy)]
pub struct SearchSettings {
    /// Objective evaluations of the worst-case search.
    pub budget: usize,
    /// Objective evaluations of each "any instance" search of the step room (0: skipped).
    pub room_budget: usize,
    /// Seed: same seed, same result.
    pub seed: u64,
    /// Multiplies the bound (1 as printed; below 1 in negative controls).
    pub bound_scale: f64,
    /// Which constants the objective reads (the claim as stated is [`ConstantsSource::Exact`]).
    pub source: ConstantsSource,
}

/// How far one step-size condition can be exceeded before the bound breaks.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Room {
    /// The largest multiple `c = 2^e` of the admitted step up to which the bound held at every
    /// multiple tried (1: only inside the condition; `None`: not even there).
    pub holds_up_to: Option<f64>,
    /// The smallest multiple at which it broke (`None`: not up to `2^MAX_DOUBLINGS`).
    pub breaks_at: Option<f64>,
    /// Every multiple tried with its ratio `observed / bound` (`None`: not decided, see `stopped`).
    pub tried: Vec<(f64, Option<f64>)>,
    /// Why the scan stopped before a break or the last multiple, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// The room of one step-size condition, on the worst instance found and on any instance.
#[derive(Debug, Clone, Serialize)]
pub struct StepRoom {
    /// The condition, as the claim states it.
    pub condition: String,
    /// On the worst instance found by the search.
    pub worst_instance: Room,
    /// Over any instance (a search of its own at each multiple); `None` when not asked for.
    pub any_instance: Option<Room>,
}

/// One claim's search.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimSearch {
    /// The family's id.
    pub family: &'static str,
    /// The claim.
    pub claim: &'static str,
    /// The constants the objective read.
    pub constants: ConstantsSource,
    /// The coordinates, in order.
    pub coordinates: Vec<String>,
    /// Evaluations and seed.
    pub budget: usize,
    /// The seed.
    pub seed: u64,
    /// Evaluations where the claim applied (a ratio was computed).
    pub applicable: usize,
    /// The largest `observed / bound` found (`None`: no candidate applied).
    pub worst_ratio: Option<f64>,
    /// Holds (every ratio <= 1), violated (a counterexample), or not applicable (no candidate).
    pub verdict: VerdictKind,
    /// The verdict the card expects, if it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<VerdictKind>,
    /// The worst candidate.
    pub worst: Option<Candidate>,
    /// The most frequent reason candidates were not applicable, with its count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<(String, usize)>,
    /// The room of each step-size condition.
    pub step_room: Vec<StepRoom>,
    /// Every evaluation of the worst-case search, in order.
    pub trace: Vec<Evaluated>,
    /// A card that replays the worst candidate (`fedbounds check --card`).
    #[serde(skip)]
    pub replay: Option<String>,
}

/// What one claim's search works on.
pub struct Target<'a, P: Plugin> {
    /// The family.
    pub plugin: &'a P,
    /// Its search space.
    pub space: &'a SpaceOf<P>,
    /// The card whose claims and settings the runs use.
    pub card: &'a P::Card,
    /// The claim searched.
    pub claim: &'a P::Claim,
    /// Budget, seed, bound scale, constants source.
    pub settings: SearchSettings,
    /// Progress, one step per evaluation.
    pub progress: &'a dyn Progress,
}

impl<P: Plugin> Target<'_, P> {
    /// What the family's own card expects of a built-in claim's search, for a card given with
    /// `--card` that says nothing of it (a user card rarely has a `[search]` table; its silence
    /// would otherwise expect "holds" of a claim the family's card knows is violated).
    fn builtin_expectation(&self, claim: &P::Claim) -> Option<VerdictKind> {
        let id = self.plugin.claim_id(claim);
        if !self.plugin.builtin_claims().iter().any(|c| self.plugin.claim_id(c) == id) {
            return None;
        }
        self.plugin.embedded_card().ok().and_then(|card| self.space.expected(&card, claim, self.settings.source))
    }

    /// `observed / bound` of the claim on `scenario` as the family's own check computes it, or
    /// why there is none. With `past_steps`, a row not applicable only because step-size
    /// conditions fail gives the comparison made anyway.
    fn ratio_on(&self, scenario: &P::Scenario, past_steps: bool) -> (Option<f64>, Option<String>) {
        let (plugin, settings) = (self.plugin, &self.settings);
        let run_settings = RunSettings { bound_scale: settings.bound_scale, estimator: None, threads: None };
        let run = plugin.prepare(scenario).and_then(|prepared| plugin.run(self.card, scenario, prepared, std::slice::from_ref(self.claim), &run_settings));
        let run = match run {
            Ok(run) => run,
            Err(e) => return (None, Some(e.to_string())),
        };
        let id = plugin.claim_id(self.claim);
        let results = run.results();
        let Some(result) = results.iter().find(|r| r.claim == id && r.constants == settings.source) else {
            return (None, Some(format!("no {} row of {id} on this scenario", settings.source)));
        };
        let e = &result.evaluation;
        let (verdict, slack) = match (e.verdict, e.beyond_steps) {
            (VerdictKind::NotApplicable, Some(beyond)) if past_steps => beyond,
            (verdict, _) => (verdict, e.slack),
        };
        match (verdict, slack) {
            (VerdictKind::Holds | VerdictKind::Violated, Some(s)) if s > 0.0 => (Some(1.0 / s), None),
            (VerdictKind::Violated, _) => (Some(f64::INFINITY), None),
            (VerdictKind::NotApplicable, _) => (None, Some(e.failed.join("; "))),
            _ => (None, Some(format!("not decided ({})", e.notes.join("; ")))),
        }
    }

    /// The ratio at `candidate`, with the step of condition `j` multiplied by `c` if `step` is
    /// `Some((j, c))`.
    fn ratio_at(&self, candidate: &Candidate, step: Option<(usize, f64)>) -> (Option<f64>, Option<String>) {
        self.progress.step();
        match self.space.decode(self.card, self.claim, candidate, step) {
            Ok(s) => self.ratio_on(&s, step.is_some_and(|(_, c)| c > 1.0)),
            Err(e) => (None, Some(e.to_string())),
        }
    }

    /// A search with `budget` evaluations, at step multiple `step`.
    fn worst_case(&self, budget: usize, step: Option<(usize, f64)>) -> Maximum {
        let dimensions = self.space.coordinates(self.claim).len();
        maximize(dimensions, &self.space.live(self.claim), budget, self.settings.seed, &|c: &Candidate| self.ratio_at(c, step))
    }

    /// The room of condition `j`, on the worst candidate and (when asked for) over any instance.
    fn step_room(&self, j: usize, condition: String, worst: &Candidate) -> StepRoom {
        let worst_instance = scan(0, &mut |c| self.ratio_at(worst, Some((j, c))));
        let any_instance = (self.settings.room_budget > 0).then(|| {
            scan(1, &mut |c| match self.worst_case(self.settings.room_budget, Some((j, c))).best {
                Some((r, _)) => (Some(r), None),
                None => (None, Some("no candidate applied".to_string())),
            })
        });
        StepRoom { condition, worst_instance, any_instance }
    }

    /// Evaluations [`Target::search`] makes at most (for progress).
    pub fn evaluations(&self) -> usize {
        let conditions = self.space.step_conditions(self.claim).len();
        let doublings = MAX_DOUBLINGS as usize;
        self.settings.budget + conditions * (doublings + 1 + doublings * self.settings.room_budget)
    }

    /// Searches the claim's worst admissible instance and the room of each of its step-size
    /// conditions.
    ///
    /// # Errors
    /// Only when the replay card of the worst candidate cannot be written.
    pub fn search(&self) -> Result<ClaimSearch> {
        let (space, claim, settings) = (self.space, self.claim, &self.settings);
        let found = self.worst_case(settings.budget, None);
        let applicable = found.trace.iter().filter(|e| e.ratio.is_some()).count();
        let worst_ratio = found.best.as_ref().map(|b| b.0);
        let verdict = search_verdict(applicable > 0, worst_ratio.unwrap_or(0.0));
        let worst = found.best.map(|b| b.1);
        let step_room = match &worst {
            // The conditions' rooms are independent: measured side by side, collected in order.
            Some(w) => space.step_conditions(claim).into_par_iter().enumerate().map(|(j, c)| self.step_room(j, c, w)).collect(),
            None => Vec::new(),
        };
        let replay = match &worst {
            Some(c) => {
                Some(with_bound_scale(space.replay_card(claim, &space.decode(self.card, claim, c, None)?, settings.source, verdict)?, settings.bound_scale))
            }
            None => None,
        };
        Ok(ClaimSearch {
            family: self.plugin.id(),
            claim: self.plugin.claim_id(claim),
            constants: settings.source,
            coordinates: space.coordinates(claim),
            budget: settings.budget,
            seed: settings.seed,
            applicable,
            worst_ratio,
            verdict,
            expected: space.expected(self.card, claim, settings.source).or_else(|| self.builtin_expectation(claim)),
            worst,
            not_applicable: most_frequent_reason(&found.trace),
            step_room,
            trace: found.trace,
            replay,
        })
    }
}

impl ClaimSearch {
    /// Whether the search's verdict is the one the card expects; without an expectation, any
    /// verdict but a counterexample.
    pub fn matches_expected(&self) -> bool {
        match self.expected {
            Some(e) => e == self.verdict,
            None => self.verdict != VerdictKind::Violated,
        }
    }
}

/// Whether a ratio is a counterexample (beyond the verdicts' rounding tie).
fn breaks(ratio: f64) -> bool {
    search_verdict(true, ratio) == VerdictKind::Violated
}

/// Scans `c = 2^e`, `e = first..=MAX_DOUBLINGS`, with `ratio_at(c)`, until the bound breaks or
/// the ratio cannot be computed.
fn scan(first: u32, ratio_at: &mut dyn FnMut(f64) -> (Option<f64>, Option<String>)) -> Room {
    let mut room = Room { holds_up_to: (first > 0).then_some(1.0), ..Room::default() };
    for e in first..=MAX_DOUBLINGS {
        let c = f64::from(1u32 << e);
        let (ratio, why) = ratio_at(c);
        room.tried.push((c, ratio));
        match ratio {
            Some(r) if breaks(r) => {
                room.breaks_at = Some(c);
                return room;
            }
            Some(_) => room.holds_up_to = Some(c),
            None => {
                room.stopped = Some(format!("at {c} x the admitted step: {}", why.unwrap_or_default()));
                return room;
            }
        }
    }
    room
}

/// The reason most candidates were not applicable, with its count (ties: the first seen).
fn most_frequent_reason(trace: &[Evaluated]) -> Option<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for reason in trace.iter().filter_map(|e| e.reason.as_ref()) {
        match counts.iter_mut().find(|(r, _)| r == reason) {
            Some(entry) => entry.1 += 1,
            None => counts.push((reason.clone(), 1)),
        }
    }
    counts.into_iter().fold(None, |best: Option<(String, usize)>, c| if best.as_ref().is_none_or(|b| c.1 > b.1) { Some(c) } else { best })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_stops_at_the_first_break_and_names_why_it_stopped() {
        let room = scan(0, &mut |c| (Some(c / 5.0), None));
        assert_eq!((room.holds_up_to, room.breaks_at), (Some(4.0), Some(8.0)));
        assert_eq!(room.tried.len(), 4);
        let room = scan(0, &mut |c| if c < 4.0 { (Some(0.1), None) } else { (None, Some("diverged".into())) });
        assert_eq!((room.holds_up_to, room.breaks_at), (Some(2.0), None));
        assert!(room.stopped.as_deref().is_some_and(|s| s.contains("4 x") && s.contains("diverged")), "{room:?}");
        let room = scan(1, &mut |_| (Some(0.5), None));
        assert_eq!((room.holds_up_to, room.breaks_at), (Some(1024.0), None));
        let room = scan(0, &mut |_| (Some(2.0), None));
        assert_eq!((room.holds_up_to, room.breaks_at), (None, Some(1.0)), "a bound broken inside its condition has no room");
    }

    #[test]
    fn card_search_expectations_name_a_claim_and_a_source() {
        let card: CardSearch = toml::from_str("expected = { \"A\" = \"holds\", \"B@empirical\" = \"violated\" }").unwrap();
        assert_eq!(card.expected("A", ConstantsSource::Exact), Some(VerdictKind::Holds));
        assert_eq!(card.expected("B", ConstantsSource::Empirical), Some(VerdictKind::Violated));
        assert_eq!(card.expected("B", ConstantsSource::Exact), None);
        assert!(card.check(&["A", "B"]).is_ok());
        let err = card.check(&["A"]).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("search.expected.B@empirical"), "{err}");
        let typo: CardSearch = toml::from_str("expected = { \"A@exactly\" = \"holds\" }").unwrap();
        assert!(typo.check(&["A"]).is_err(), "an unknown source is refused");
    }

    #[test]
    fn the_most_frequent_reason_wins_and_ties_keep_the_first() {
        let e = |r: Option<&str>| Evaluated { eval: 0, phase: "random", ratio: r.is_none().then_some(0.5), reason: r.map(String::from) };
        let trace = [e(Some("a")), e(Some("b")), e(None), e(Some("b")), e(Some("a")), e(Some("b"))];
        assert_eq!(most_frequent_reason(&trace), Some(("b".to_string(), 3)));
        assert_eq!(most_frequent_reason(&trace[..2]), Some(("a".to_string(), 1)));
        assert_eq!(most_frequent_reason(&[e(None)]), None);
    }
}
