//! A family's search as the commands run it: every claim its space covers (those asked for, else
//! all; with a card, the card's claims too), each constants source the space names, then the
//! report ([`super::report::family_report`]).

use super::space::{not_searched_note, not_searched_of, SearchSettings, SearchSpace, SpaceOf, Target};
use crate::checker::{Plugin, ReportSettings, Searcher};
use crate::error::{require_bound_scale, Result};
use crate::family::{FamilyReport, Progress, SearchRequest};

/// The core's adversarial search of every claim the family's search space covers (those asked
/// for, else all; with a card, its claims too) and each constants source it names.
pub fn search_family<P: Plugin>(
    plugin: &P,
    space: &SpaceOf<P>,
    card: Option<&P::Card>,
    request: &SearchRequest,
    progress: &dyn Progress,
) -> Result<Option<FamilyReport>> {
    require_bound_scale("--bound-scale", request.bound_scale)?;
    let embedded;
    let card = match card {
        Some(c) => c,
        None => {
            embedded = plugin.embedded_card()?;
            &embedded
        }
    };
    let mut claims = plugin.builtin_claims();
    claims.extend(plugin.defined_claims(card));
    claims.retain(|c| space.covers(c) && (request.claims.is_empty() || request.claims.iter().any(|id| id == plugin.claim_id(c))));
    let started = std::time::Instant::now();
    let targets: Vec<Target<'_, P>> = claims
        .iter()
        .flat_map(|claim| {
            space.sources(claim).into_iter().map(move |source| {
                let settings =
                    SearchSettings { budget: request.budget, room_budget: request.room_budget, seed: request.seed, bound_scale: request.bound_scale, source };
                Target { plugin, space, card, claim, settings, progress }
            })
        })
        .collect();
    // The searches are independent (each seeded by its own settings) and run side by side, so
    // one search's sequential part (the room of a step) does not leave a core idle; they are
    // collected in the claims' order, the first failure in that order reported.
    progress.start(targets.iter().map(Target::evaluations).sum(), &format!("{} searches", targets.len()));
    let found = crate::engine::monte_carlo::in_order(targets, |target| target.search());
    progress.finish();
    let searches = found.into_iter().collect::<Result<Vec<_>>>()?;
    let mut report = crate::search::report::family_report(plugin.title(), &searches, &request.meta)?;
    // The time goes to the terminal only: the files stay the same from run to run.
    let evaluations: usize = searches.iter().map(|s| s.trace.len()).sum();
    report.terminal.push_str(&format!(
        "  {} searches, {evaluations} worst-case evaluations (budget {} per search; {} per doubling of a step's room) in {:.1} s\n",
        searches.len(),
        request.budget,
        request.room_budget,
        started.elapsed().as_secs_f64()
    ));
    Ok(Some(report))
}

/// The search of the main job: every covered claim with the space's own budget
/// ([`SearchSpace::main_job_budget`]), seed 1, the run's bound scale.
///
/// # Errors
/// As [`search_family`].
pub fn main_job<P: Plugin>(plugin: &P, space: &SpaceOf<P>, card: &P::Card, settings: &ReportSettings, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
    let (budget, room_budget) = space.main_job_budget();
    let request = SearchRequest {
        claims: Vec::new(),
        budget,
        room_budget,
        seed: 1,
        bound_scale: settings.run.bound_scale,
        plots: settings.plots,
        meta: settings.meta.clone(),
        card: None,
        out: None,
    };
    search_family(plugin, space, Some(card), &request, progress)
}

impl<P: Plugin, S: SearchSpace<P::Card, P::Claim, P::Scenario> + 'static> Searcher<P> for S {
    fn search(&self, plugin: &P, card: Option<&P::Card>, request: &SearchRequest, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        search_family(plugin, self, card, request, progress)
    }
    /// The main job's search ([`main_job`]) with the claims it leaves out and why below its table
    /// ([`super::space::not_searched_note`]).
    fn main_job(&self, plugin: &P, card: &P::Card, settings: &ReportSettings, progress: &dyn Progress) -> Result<Option<FamilyReport>> {
        let found = main_job(plugin, self, card, settings, progress)?;
        Ok(found.map(|mut report| {
            report.summary_markdown.push_str(&not_searched_note(&not_searched_of(plugin, self)));
            report
        }))
    }
}
