//! Every built-in bound and condition is written twice: as Rust (`src/families/*/claims`) and as a
//! formula in its card (`theorems/*.toml`, `[claims.formula]`). This evaluates both encodings on
//! random inputs within the symbols' ranges and requires agreement to 1e-12 relative; a failure
//! names the claim, the field and, where the difference is a multiple of one term, that term.
//!
//! Each family's inputs are drawn from a ChaCha stream with a fixed seed: 2,000 draws per family,
//! with the structural cases (m = n, K = 1, du = 0 or dv = 0, conditions at their boundary, a
//! constant without a finite value) drawn often enough that every branch of every condition list
//! is compared.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fedbounds::card::ClaimCard;
use fedbounds::families::ccyw;
use fedbounds::families::ccyw::claims::{ClaimInputs, GammaRule};
use fedbounds::families::ccyw::formulas::{LemmaInputs, LemmaRound};
use fedbounds::families::ccyw::lemma_estimates::LemmaQuantities;
use fedbounds::families::ccyw::problem::GradientSummary;
use fedbounds::formula::twin::{compare, compile_cards, TwinTable};
use fedbounds::formula::ClaimFormulas;

const DRAWS: usize = 2000;

fn log_uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    (rng.gen_range(lo.ln()..hi.ln())).exp()
}

/// A non-negative constant: 0 now and then, else log-uniform.
fn constant(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    if rng.gen_bool(0.1) {
        0.0
    } else {
        log_uniform(rng, lo, hi)
    }
}

fn assert_twins<I>(family: &str, table: &TwinTable<I>, cards: &[ClaimCard], samples: &[I]) -> Vec<ClaimFormulas> {
    let formulas = compile_cards(cards, table.symbols).unwrap_or_else(|e| panic!("{family}: a card formula does not compile: {e}"));
    let disagreements = compare(table, &formulas, samples);
    assert!(disagreements.is_empty(), "{family}: the card formulas and the built-in code disagree:\n  {}", disagreements.join("\n  "));
    formulas
}

// ---------------------------------------------------------------------------------------------
// ccyw
// ---------------------------------------------------------------------------------------------

fn ccyw_inputs(rng: &mut ChaCha8Rng) -> ClaimInputs {
    let n = rng.gen_range(1..40);
    let m = if rng.gen_bool(0.4) { n } else { rng.gen_range(1..=n) };
    let k = if rng.gen_bool(0.3) { 1 } else { rng.gen_range(1..12) };
    let (du, dv) = match rng.gen_range(0..4) {
        0 => (0, rng.gen_range(1..4)),
        1 => (rng.gen_range(1..4), 0),
        _ => (rng.gen_range(1..4), rng.gen_range(1..4)),
    };
    let l = log_uniform(rng, 1e-2, 1e2);
    let gamma = log_uniform(rng, 1e-6, 1e-1);
    let eta_u = log_uniform(rng, 0.5, 1e4);
    let eta_v = log_uniform(rng, 0.5, 1e2);
    // The standing condition gamma_u eta_u = gamma_v eta_v holds in most draws.
    let gamma_v = if rng.gen_bool(0.8) { gamma / eta_v } else { log_uniform(rng, 1e-6, 1e-1) };
    let b0 = constant(rng, 1e-3, 1e3);
    ClaimInputs {
        n,
        m,
        k,
        t: rng.gen_range(1..5000),
        du,
        dv,
        l,
        f0: log_uniform(rng, 1e-3, 1e3),
        b2: if rng.gen_bool(0.15) { None } else { Some(constant(rng, 1e-3, 1e2)) },
        sigma_u2: constant(rng, 1e-3, 1e2),
        sigma_v2: constant(rng, 1e-3, 1e2),
        b0,
        b0_literal: b0 * rng.gen_range(0.0..1.0),
        gamma_u: gamma / eta_u,
        gamma_v,
        eta_u,
        eta_v,
    }
}

/// Some draws put the step at the claim's own admissible value, so equality conditions hold.
fn at_admissible(x: ClaimInputs, rng: &mut ChaCha8Rng) -> ClaimInputs {
    let claims = ccyw::claims::all_claims();
    let c = claims[rng.gen_range(0..claims.len())];
    let adm = c.admissible(&x);
    let gamma = adm.gamma.value();
    if !(gamma.is_finite() && gamma > 0.0 && adm.eta_u.value().is_finite()) {
        return x;
    }
    let (eta_u, eta_v) = (adm.eta_u.value().max(1e-3), adm.eta_v.value().max(1e-3));
    ClaimInputs { gamma_u: gamma / eta_u, gamma_v: gamma / eta_v, eta_u, eta_v, ..x }
}

fn ccyw_samples() -> Vec<ClaimInputs> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7717);
    (0..DRAWS)
        .map(|i| {
            let x = ccyw_inputs(&mut rng);
            if i % 3 == 0 {
                at_admissible(x, &mut rng)
            } else {
                x
            }
        })
        .collect()
}

fn ccyw_cards() -> Vec<ClaimCard> {
    ccyw::card::embedded_cards().expect("embedded cards parse").into_iter().flat_map(|c| c.written.claims).collect()
}

#[test]
fn ccyw_bounds_and_conditions_agree_with_their_card_formulas() {
    let samples = ccyw_samples();
    let formulas = assert_twins("ccyw", &ccyw::formulas::claim_twins(), &ccyw_cards(), &samples);
    // The admissible steps scenarios and the search use are the conditions' own limits.
    for c in ccyw::claims::all_claims() {
        let f = formulas.iter().find(|f| f.claim == c.id()).expect("every claim has a formula");
        for x in &samples {
            let v = ccyw::formulas::SYMBOLS.values(x);
            let adm = c.admissible(x);
            if x.b2.is_none() {
                continue;
            }
            let limit = f.limit_of("gamma", true, &v).unwrap_or_else(|| panic!("{}: no condition on gamma", c.id()));
            let (g, exact) = (limit.admissible(true), limit.is_exact());
            let builtin = match adm.gamma {
                GammaRule::AtMost(_) | GammaRule::Below(_) => (adm.gamma.value(), false),
                GammaRule::Exactly(g) => (g, true),
            };
            assert!(
                exact == builtin.1 && fedbounds::formula::twin::agree(g, builtin.0, 0.0),
                "{}: admissible gamma {builtin:?} vs the card's ({g}, {exact})",
                c.id()
            );
            if x.du > 0 {
                let e = f.limit_of("eta_u", false, &v).map(|e| e.admissible(false)).unwrap_or(f64::NAN);
                assert!(fedbounds::formula::twin::agree(e, adm.eta_u.value(), 0.0), "{}: admissible eta_u {:?} vs the card's {e}", c.id(), adm.eta_u);
            }
            if x.dv > 0 {
                let e = f.limit_of("eta_v", false, &v).map(|e| e.admissible(false)).unwrap_or(f64::NAN);
                assert!(fedbounds::formula::twin::agree(e, adm.eta_v.value(), 0.0), "{}: admissible eta_v {:?} vs the card's {e}", c.id(), adm.eta_v);
            }
        }
    }
}

fn quantities(rng: &mut ChaCha8Rng) -> LemmaQuantities {
    let mut c = || constant(rng, 1e-4, 1e3);
    let summary = GradientSummary { g_u: c(), g_v: c(), dissimilarity: c(), b_sum: c(), objective: c() };
    LemmaQuantities { drift: c(), memory_drift: c(), summary }
}

#[test]
fn ccyw_lemma_sides_and_conditions_agree_with_their_card_formulas() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1e33a);
    let samples: Vec<LemmaInputs> = ccyw_samples()
        .into_iter()
        .map(|x| {
            let x = ClaimInputs { t: x.t.max(2), ..x };
            LemmaInputs { x, round: LemmaRound { now: quantities(&mut rng), before: quantities(&mut rng) } }
        })
        .collect();
    assert_twins("ccyw lemmas", &ccyw::formulas::lemma_twins(), &ccyw_cards(), &samples);
}

#[test]
fn every_ccyw_claim_and_lemma_has_a_formula_twin() {
    let cards = ccyw_cards();
    for id in ccyw::claims::all_ids() {
        let card = cards.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("{id}: no card entry"));
        assert!(card.formula.is_some(), "{id}: no formula in its card");
    }
    let fields: Vec<&str> =
        ccyw::formulas::claim_twins().fields.iter().map(|t| t.claim).chain(ccyw::formulas::lemma_twins().fields.iter().map(|t| t.claim)).collect();
    for id in ccyw::claims::all_ids() {
        assert!(fields.contains(&id), "{id}: no built-in field twinned");
    }
}

/// Negative control: a changed coefficient in a card formula fails the comparison and names the
/// claim and the term.
#[test]
fn a_changed_coefficient_is_caught_and_its_term_named() {
    let mut cards = ccyw_cards();
    let t37 = cards.iter_mut().find(|c| c.id == "CCYW-T3.7").expect("T3.7");
    let f = t37.formula.as_mut().expect("formula");
    f.bound = f.bound.as_ref().map(|b| b.replace("+ 128*L^2", "- 128*L^2"));
    let table = ccyw::formulas::claim_twins();
    let formulas = compile_cards(&cards, table.symbols).expect("compiles");
    let d = compare(&table, &formulas, &ccyw_samples());
    assert!(d.len() == 1 && d[0].starts_with("CCYW-T3.7 `bound`"), "{d:?}");
    assert!(d[0].contains("term 3 `-128*L^2*K*(K-1)*b2*gamma^2/eta_u^2`") && d[0].contains(" -2 times"), "{}", d[0]);
    // And a changed condition.
    let mut cards = ccyw_cards();
    let c = cards.iter_mut().find(|c| c.id == "CCYW-T4.5").and_then(|c| c.formula.as_mut()).expect("T4.5");
    c.conditions[1] = "eta_u >= sqrt(n) if du > 0".into();
    let formulas = compile_cards(&cards, table.symbols).expect("compiles");
    let d = compare(&table, &formulas, &ccyw_samples());
    assert!(d.len() == 1 && d[0].starts_with("CCYW-T4.5 conditions: check 2"), "{d:?}");
}

// ---------------------------------------------------------------------------------------------
// fedplt
// ---------------------------------------------------------------------------------------------

use fedbounds::families::fedplt;
use fedbounds::families::fedplt::claims::Inputs as PltInputs;
use fedbounds::families::fedplt::formulas::{Round, RoundInputs};
use fedbounds::families::fedplt::runs::Schedule;

fn fedplt_inputs(rng: &mut ChaCha8Rng) -> PltInputs {
    let (mu, psi_min, rho_min) = (log_uniform(rng, 1e-2, 1.0), log_uniform(rng, 1e-2, 1.0), log_uniform(rng, 1e-2, 1.0));
    let z = mu * psi_min * rho_min;
    let schedule = match rng.gen_range(0..4) {
        0 => Schedule::Constant(log_uniform(rng, 1e-4, 1.0)),
        1 => Schedule::Decaying { z, beta: 1.0, offset: 1.0 },
        2 => Schedule::Decaying { z: z * rng.gen_range(0.5..1.5), beta: rng.gen_range(1.0..4.0), offset: rng.gen_range(1.0..20.0) },
        _ => Schedule::Decaying { z, beta: rng.gen_range(1.01..4.0), offset: 1.0 },
    };
    let alpha_min = if rng.gen_bool(0.1) { 0.0 } else { rng.gen_range(0.0..1.0) };
    let sqrt_r_min = rng.gen_range(0.0..1.0);
    PltInputs {
        t: rng.gen_range(1..3000),
        l: log_uniform(rng, 0.5, 1e2),
        mu,
        sigma2: constant(rng, 1e-3, 10.0),
        tau: if rng.gen_bool(0.5) { 1 } else { rng.gen_range(1..8) },
        psi_min,
        psi_max: psi_min + rng.gen_range(0.0..2.0),
        lambda: constant(rng, 1e-3, 10.0),
        d0: constant(rng, 1e-3, 10.0),
        gamma_mask: rng.gen_range(0.0..1.0),
        gamma_mask_sqrt_r: rng.gen_range(0.0..1.0),
        alpha_max: alpha_min + if rng.gen_bool(0.1) { 0.0 } else { rng.gen_range(0.0..1.0) },
        alpha_min,
        sqrt_r_max: sqrt_r_min + rng.gen_range(0.0..1.0),
        sqrt_r_min,
        g2: if rng.gen_bool(0.15) { None } else { Some(constant(rng, 1e-3, 10.0)) },
        rho_min,
        alignment_failure: None,
        alignment_within_rounding: 0,
        alignment_overflow: None,
        schedule,
        schedule_z_consistent: rng.gen_bool(0.8),
        limit_gap: constant(rng, 1e-6, 1.0),
        limit_alignment: None,
        client_steps: None,
    }
}

fn fedplt_cards() -> Vec<ClaimCard> {
    fedplt::family::embedded_card().expect("embedded card parses").card.claims
}

#[test]
fn fedplt_bounds_and_conditions_agree_with_their_card_formulas() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xfed9);
    let samples: Vec<PltInputs> = (0..DRAWS).map(|_| fedplt_inputs(&mut rng)).collect();
    assert_twins("fedplt", &fedplt::formulas::claim_twins(), &fedplt_cards(), &samples);
    let rounds: Vec<RoundInputs> =
        samples.into_iter().map(|x| RoundInputs { x, round: Round { t: rng.gen_range(0..x.t), d_t: constant(&mut rng, 1e-4, 10.0) } }).collect();
    assert_twins("fedplt per-round", &fedplt::formulas::round_twins(), &fedplt_cards(), &rounds);
}

#[test]
fn every_fedplt_claim_has_a_formula_twin() {
    let cards = fedplt_cards();
    let mut twinned: Vec<&str> = fedplt::formulas::claim_twins().fields.iter().map(|t| t.claim).collect();
    twinned.extend(fedplt::formulas::round_twins().fields.iter().map(|t| t.claim));
    for c in fedplt::claims::ALL.into_iter().filter(|c| c.has_formula()) {
        let id = fedbounds::claim::BoundClaim::id(&c);
        assert!(cards.iter().any(|k| k.id == id && k.formula.is_some()), "{id}: no formula in its card");
        assert!(twinned.contains(&id), "{id}: no built-in field twinned");
    }
}

// ---------------------------------------------------------------------------------------------
// dpgp
// ---------------------------------------------------------------------------------------------

use fedbounds::families::dpgp;
use fedbounds::families::dpgp::formulas::Inputs as DpgpInputs;
use fedbounds::families::dpgp::problem::{Constants, GradientDiversity};
use fedbounds::families::dpgp::round::Params;
use fedbounds::families::dpgp::topology::Connectivity;

fn dpgp_inputs(rng: &mut ChaCha8Rng) -> DpgpInputs {
    let l_u = log_uniform(rng, 0.1, 10.0);
    let l_vu = constant(rng, 1e-2, 5.0);
    let constants = Constants {
        l_u,
        l_v: log_uniform(rng, 0.1, 10.0),
        l_uv: l_vu,
        l_vu,
        chi: 1.0,
        sigma_u: constant(rng, 1e-2, 2.0),
        sigma_v: constant(rng, 1e-2, 2.0),
        sigma_g2: if rng.gen_bool(0.2) {
            GradientDiversity { value: None, reason: "coupled".into() }
        } else {
            GradientDiversity { value: Some(constant(rng, 1e-3, 5.0)), reason: String::new() }
        },
        f_star: rng.gen_range(-5.0..5.0),
    };
    let connectivity = Connectivity {
        window: Some(1),
        delta: if rng.gen_bool(0.05) { 0.0 } else { rng.gen_range(1e-3..1.0) },
        c: log_uniform(rng, 0.5, 50.0),
        q: rng.gen_range(0.0..0.99),
        estimation_rounds: 10,
        column_stochastic: true,
        given: None,
    };
    let params = Params {
        eta_u: log_uniform(rng, 1e-5, 1.0),
        eta_v: log_uniform(rng, 1e-4, 1.0),
        k_u: rng.gen_range(1..10),
        k_v: rng.gen_range(1..10),
        noise_draws: Default::default(),
    };
    DpgpInputs { f0: constants.f_star + constant(rng, 1e-3, 10.0), constants, connectivity, params, t: rng.gen_range(1..100_000) }
}

fn dpgp_cards() -> Vec<ClaimCard> {
    dpgp::card::embedded_card().expect("embedded card parses").card.claims
}

#[test]
fn dpgp_bounds_and_conditions_agree_with_their_card_formulas() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xd96);
    let samples: Vec<DpgpInputs> = (0..DRAWS).map(|_| dpgp_inputs(&mut rng)).collect();
    assert_twins("dpgp", &dpgp::formulas::claim_twins(), &dpgp_cards(), &samples);
}

#[test]
fn every_dpgp_claim_has_a_formula_twin_or_a_reason_why_not() {
    let cards = dpgp_cards();
    let twinned: Vec<&str> = dpgp::formulas::claim_twins().fields.iter().map(|t| t.claim).collect();
    for c in dpgp::claims::summaries() {
        if dpgp::formulas::WITHOUT_FORMULA.iter().any(|(id, _)| *id == c.id) {
            continue;
        }
        assert!(cards.iter().any(|k| k.id == c.id && k.formula.is_some()), "{}: no formula in its card", c.id);
        assert!(twinned.contains(&c.id), "{}: no built-in field twinned", c.id);
    }
}

// ---------------------------------------------------------------------------------------------
// clup
// ---------------------------------------------------------------------------------------------

use fedbounds::families::clup;
use fedbounds::families::clup::bounds::{Opt, Stat};
use fedbounds::families::clup::claims::Inputs as ClupInputs;

/// A point of FedCLUP: statistical constants and the steps of Algorithms 1-2, with Corollary 2's
/// steps and K of (134), the mean-of-locals step 1/lambda, and steps near the boundary
/// gamma = 1/L_g drawn often.
fn clup_inputs(rng: &mut ChaCha8Rng) -> ClupInputs {
    let mu = log_uniform(rng, 1e-2, 1.0);
    let l = if rng.gen_bool(0.1) { mu } else { mu * log_uniform(rng, 1.0, 100.0) };
    let n = rng.gen_range(2..200) as f64;
    let m = rng.gen_range(2..50) as f64;
    // lambda > 0 (the symbol's range); Theorem 1's grid point lambda = 0 has no divisions by lambda.
    let lambda = log_uniform(rng, 1e-3, 1e4);
    let stat = Stat { mu, l, rho2: log_uniform(rng, 1e-3, 10.0), r: constant(rng, 1e-3, 10.0), n, m };
    let lemma = clup::bounds::lemma1(mu, l, lambda);
    let (eta_c2, gamma_c2) = clup::bounds::corollary2_steps(l, lambda);
    let gamma = match rng.gen_range(0..10) {
        0..=2 => gamma_c2,
        3 => 1.0 / lambda,
        4 => (1.0 + if rng.gen_bool(0.5) { 1e-6 } else { -1e-6 }) / lemma.l_g,
        _ => log_uniform(rng, 1e-2, 3.0) / lemma.l_g,
    };
    let eta = if rng.gen_bool(0.4) { eta_c2 } else { log_uniform(rng, 0.1, 3.0) / lemma.l_l };
    let k = if rng.gen_bool(0.4) { clup::bounds::k_134(mu, l, lambda) as f64 } else { rng.gen_range(1..200) as f64 };
    ClupInputs {
        t: rng.gen_range(1..2000),
        stat,
        lambda,
        opt: Opt { mu, l, lambda, gamma, eta, k, m, mu_error: 0.0 },
        v1: constant(rng, 1e-3, 10.0),
        init_local: constant(rng, 1e-3, 10.0),
        sigma2: constant(rng, 1e-3, 10.0),
        batch: rng.gen_range(1..(n as usize + 5)) as f64,
        strongly_convex: true,
    }
}

fn clup_samples() -> Vec<ClupInputs> {
    let mut rng = ChaCha8Rng::seed_from_u64(0xc1a9);
    (0..DRAWS).map(|_| clup_inputs(&mut rng)).collect()
}

fn clup_cards() -> Vec<ClaimCard> {
    clup::family::embedded_card().expect("embedded card parses").card.claims
}

#[test]
fn clup_bounds_and_conditions_agree_with_their_card_formulas() {
    assert_twins("clup", &clup::formulas::claim_twins(), &clup_cards(), &clup_samples());
}

#[test]
fn every_clup_claim_has_a_formula_twin_or_a_reason_why_not() {
    let cards = clup_cards();
    let twinned: Vec<&str> = clup::formulas::claim_twins().fields.iter().map(|t| t.claim).collect();
    for c in clup::claims::ALL {
        if let Some((_, why)) = clup::formulas::WITHOUT_FORMULA.iter().find(|(id, _)| *id == c.id) {
            assert!(!why.is_empty() && cards.iter().any(|k| k.id == c.id && k.formula.is_none()), "{}: listed without a formula", c.id);
            continue;
        }
        assert!(cards.iter().any(|k| k.id == c.id && k.formula.is_some()), "{}: no formula in its card", c.id);
        assert!(twinned.contains(&c.id), "{}: no built-in field twinned", c.id);
    }
}

/// At the experiments' `gamma = 1/L_g` (I-CLUP11), the boundary of the strict `gamma < 1/L_g`,
/// the built-in check and the card's `<` agree: both fail there (a card's `<` had been checked as
/// `<=`, the one place the encodings differed).
#[test]
fn clup_strict_gamma_condition_agrees_at_gamma_one_over_l_g() {
    let samples: Vec<ClupInputs> = clup_samples()
        .into_iter()
        .map(|x| {
            let l_g = clup::bounds::lemma1(x.stat.mu, x.stat.l, x.lambda).l_g;
            ClupInputs { opt: Opt { gamma: 1.0 / l_g, ..x.opt }, ..x }
        })
        .collect();
    let table = clup::formulas::claim_twins();
    let formulas = compile_cards(&clup_cards(), table.symbols).expect("compiles");
    assert_eq!(compare(&table, &formulas, &samples), Vec::<String>::new());
    // The check compared fails at the boundary on both sides (a control that it is compared).
    let t2 = clup::claims::ALL.iter().find(|c| c.id == "CLUP-T2").expect("CLUP-T2");
    for x in &samples {
        let strict = fedbounds::claim::BoundClaim::checks(t2, x).into_iter().find(|c| c.name == "gamma < 1/L_g").expect("the strict check");
        assert!(!strict.holds, "{strict}");
    }
}
