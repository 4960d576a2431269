//! FedPLT's adversarial search space ([`crate::search::space`]): a unit-cube candidate decoded
//! into a scenario of the family's instance class (spectrum, noise, heterogeneity, start, clients,
//! dimension, mask layout, rotation, local steps) with its step inside the claim's conditions.
//!
//! Claims searched: the one-round recursion (its three readings), the constant step (Case 1) and
//! the decaying steps (Case 2 and its correction), each as stated (not applicable wherever
//! Assumption 5 fails, which is everywhere on quadratics, I-PLT1) and with `G^2` measured on the
//! run (the empirical rows). The step room scales the constant step `eta = f / L` past
//! `eta < 1/L` (condition (a), implicit, 001:L507) for the recursion and past `eta < 1/z`
//! (001:L639) for Case 1; the decaying schedules have no step to scale.
//!
//! The proof's per-round steps are searched too, at a constant step and any `tau`: the psi step
//! (001:L404-408, both readings of `psi_`; observed / bound is `1 / slack` of
//! [`super::psi_step::PsiOutcome::min_ratio`], above 1 exactly where the step fails), the variance
//! of the masked update (001:L276, in its scope `tau = 1`) and the local divergence (001:L592,
//! as stated and with `G^2` measured on the run, of the local or, as printed, the global
//! gradient). None of these states a step-size condition, so none has a step room.

use std::collections::BTreeMap;

use super::card::{ReadCard, CARD};
use super::check::{Scenario, StepSpec};
use super::claims::FedPltClaim;
use super::formulas::Claim;
use super::problem::{InstanceSpec, MaskLayout};
use crate::error::Result;
use crate::search::space::{card_with_scenario, pick};
use crate::search::{Candidate, SearchSpace};
use crate::verdict::{ConstantsSource, VerdictKind};

/// Rounds of every candidate's run.
const ROUNDS: usize = 60;
const CLIENTS: [usize; 4] = [1, 2, 3, 5];
const DIMS: [usize; 4] = [2, 3, 4, 6];
const TAUS: [usize; 4] = [1, 2, 3, 5];

/// The mask layout `u` picks in dimension `dim`, and its name.
fn mask_layout(u: f64, dim: usize) -> (MaskLayout, &'static str) {
    let layers = dim.min(3);
    match pick(&[0, 1, 2, 3, 4], u) {
        0 => (MaskLayout::Full, "full"),
        1 => (MaskLayout::Disjoint, "disjoint"),
        2 => (MaskLayout::Layers { layers, per_client: 1 }, "layers, 1 per client"),
        3 => (MaskLayout::Layers { layers, per_client: 2.min(layers) }, "layers, 2 per client"),
        _ => (MaskLayout::Random { fraction: 0.5 }, "random, r = 1/2"),
    }
}

/// The built-in claim a search covers, if it covers this one.
fn searched(claim: &Claim) -> Option<FedPltClaim> {
    match claim {
        Claim::Builtin(
            c @ (FedPltClaim::Recursion { .. }
            | FedPltClaim::ConstantStep
            | FedPltClaim::DecayingStep { .. }
            | FedPltClaim::DecayingCorrected
            | FedPltClaim::PsiStep { .. }
            | FedPltClaim::UpdateVariance
            | FedPltClaim::LocalDivergence { .. }),
        ) => Some(*c),
        _ => None,
    }
}

/// Whether the claim is one of the proof's per-round steps searched at any `tau` (the psi step
/// and the local divergence) or in its scope `tau = 1` (the update's variance).
fn proof_step(kind: Option<FedPltClaim>) -> bool {
    matches!(kind, Some(FedPltClaim::PsiStep { .. } | FedPltClaim::UpdateVariance | FedPltClaim::LocalDivergence { .. }))
}

/// Why the search does not cover a built-in claim: none of these compares a run's metric with a
/// bound whose slack a worse instance could shrink.
fn not_searched(claim: &FedPltClaim) -> Option<&'static str> {
    match claim {
        FedPltClaim::DecayInduction => Some(
            "the proof's algebra (001:L681-695), checked with equality: f(t) = (C t + B/z^2)/(t+1)^2 - C/(t+2) at C = B/z^2 has the sign of \
             B/z^2 (C/(t+1) - C/(t+2)) for every t, no run or step for an instance search to vary",
        ),
        FedPltClaim::DecayRecursion => Some(
            "the proof's algebra (001:L659-704), the recursion solved with equality in closed form ((B/z^2) H_t / t against C/(t+1), \
             t up to 10^6); it depends on an instance only through D^0 z^2 / B, no run or step for an instance search to vary",
        ),
        FedPltClaim::Limit { .. } => Some(
            "a limit statement (001:L708-713): ||W_lim - W*||^2 of the small-step limit point against 0, a bound of 0 with no ratio \
             observed / bound to maximize",
        ),
        FedPltClaim::AssumptionSix => Some(
            "an exact yes/no decision for all W in closed form (lambda_min of sym(m_k .* H_k) per client, 001:L151-155), without a \
             bound or a slack",
        ),
        _ => None,
    }
}

/// The search space of FedPLT's claims.
pub struct Space;

impl SearchSpace<ReadCard, Claim, Scenario> for Space {
    fn coordinates(&self, claim: &Claim) -> Vec<String> {
        let mut out: Vec<String> = [
            "log10(mu/L) in [-1.5, 0]",
            "sigma in [0, 1]",
            "heterogeneity ||a_k - a_mean|| in [0, 2]",
            "log10 ||W^0 - W*|| in [-1, 1]",
            "clients in {1, 2, 3, 5}",
            "dim in {2, 3, 4, 6}",
            "masks: full, disjoint, layers (1 or 2 per client), random r = 1/2",
            "rotated Hessians (>= 1/2)",
            "tau in {1, 2, 3, 5} (the tau-steps reading; else tau = 1)",
            "step: eta L in [0.01, 1] (constant), beta in [1, 4] (corrected decaying step)",
        ]
        .map(String::from)
        .to_vec();
        if proof_step(searched(claim)) {
            out[8] = "tau in {1, 2, 3, 5} (FEDPLT-VAR-L276: tau = 1, its scope)".into();
            out[9] = "step: eta L in [0.01, 1] (constant)".into();
        }
        out
    }

    fn covers(&self, claim: &Claim) -> bool {
        searched(claim).is_some()
    }

    fn not_searched(&self, claim: &Claim) -> Option<&'static str> {
        match claim {
            Claim::Builtin(c) => not_searched(c),
            _ => None,
        }
    }

    fn sources(&self, claim: &Claim) -> Vec<ConstantsSource> {
        match searched(claim) {
            Some(c) if !c.needs_g2() => vec![ConstantsSource::Exact],
            _ => vec![ConstantsSource::Exact, ConstantsSource::Empirical],
        }
    }

    fn step_conditions(&self, claim: &Claim) -> Vec<String> {
        match searched(claim) {
            Some(FedPltClaim::Recursion { .. }) => vec!["(a) eta < 1/L (implicit, 001:L507)".into()],
            Some(FedPltClaim::ConstantStep) => vec!["eta in (0, 1/z) (001:L639), from eta = f/L with f <= 1".into()],
            _ => Vec::new(),
        }
    }

    fn decode(&self, _card: &ReadCard, claim: &Claim, c: &Candidate, step: Option<(usize, f64)>) -> Result<Scenario> {
        let x = &c.x;
        let kind = searched(claim);
        let dim = pick(&DIMS, x[5]);
        let any_tau = matches!(kind, Some(FedPltClaim::Recursion { tau_steps: true, .. } | FedPltClaim::PsiStep { .. } | FedPltClaim::LocalDivergence { .. }));
        let tau = if any_tau { pick(&TAUS, x[8]) } else { 1 };
        let multiple = step.map_or(1.0, |(_, m)| m);
        let step = match kind {
            Some(FedPltClaim::DecayingStep { .. }) => StepSpec::Decaying { beta: 1.0, offset: 1.0 },
            Some(FedPltClaim::DecayingCorrected) => StepSpec::Decaying { beta: 1.0 + 3.0 * x[9], offset: 1.0 },
            _ => StepSpec::ConstantOverL(10f64.powf(-2.0 * (1.0 - x[9])) * multiple),
        };
        let (masks, mask_name) = mask_layout(x[6], dim);
        let instance = InstanceSpec {
            clients: pick(&CLIENTS, x[4]),
            dim,
            l: 1.0,
            mu: 10f64.powf(-1.5 * x[0]),
            sigma: x[1],
            heterogeneity: 2.0 * x[2],
            init_distance: 10f64.powf(2.0 * x[3] - 1.0),
            rotated: x[7] >= 0.5,
            samples: None,
            masks,
            seed: c.instance_seed,
        };
        Ok(Scenario {
            family: None,
            name: "search-worst".into(),
            description: format!("worst case found by the search ({mask_name} masks)"),
            rounds: ROUNDS,
            replicates: 2,
            seed: c.instance_seed,
            tau,
            gradient: Default::default(),
            step,
            instance: instance.into(),
            expected: BTreeMap::new(),
            expected_empirical: BTreeMap::new(),
        })
    }

    fn expected(&self, card: &ReadCard, claim: &Claim, source: ConstantsSource) -> Option<VerdictKind> {
        card.card.search.expected(claim.id(), source)
    }

    fn replay_card(&self, claim: &Claim, scenario: &Scenario, source: ConstantsSource, expected: VerdictKind) -> Result<String> {
        let mut s = scenario.clone();
        let entry = BTreeMap::from([(claim.id().to_string(), expected)]);
        match source {
            ConstantsSource::Exact => s.expected = entry,
            _ => s.expected_empirical = entry,
        }
        let mut text = card_with_scenario(CARD.1, &s)?;
        text.insert_str(0, "# A scenario found by `fedbounds search`; `fedbounds check --card` on this file replays it.\n");
        Ok(text)
    }
}
