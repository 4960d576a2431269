//! DFedPGP's tight scenarios catch a wrong term: each claim's formula twin (`[claims.formula]`) with
//! one top-level term of its bound, right side or a definition halved
//! ([`fedbounds::formula::wrong::wrong_terms`]) is evaluated on the run of the scenario where the
//! claim is tightest, and its verdict must flip to violated wherever the halved term exceeds the
//! room `bound - observed` at some round. The unmutated twin on the same run is the negative
//! control: it holds, with the slack the family's own row reports.
//!
//! The family's card-defined claims bound a metric by constants only (per-round inequalities of a
//! proof and slope claims are built in), so the twins are evaluated here on the run's per-round
//! quantities with the family's own sides: `lhs <= rhs` at every round for the per-round
//! inequalities (exact moments), [`evaluate_rate`] for Corollary 1's exponent and
//! [`evaluate_big_o`] for Theorem 1's bracket. DPGP-EQ15 and the Remark 2 orderings have no formula
//! twin (`formulas::WITHOUT_FORMULA` says why), so no term of theirs can be scaled.

use fedbounds::families::dpgp::card::{embedded_card, parse_card, Card};
use fedbounds::families::dpgp::check::{run_scenario, ScenarioRun};
use fedbounds::families::dpgp::formulas::{Inputs, SYMBOLS, WITHOUT_FORMULA};
use fedbounds::formula::wrong::wrong_terms;
use fedbounds::formula::{ClaimFormulas, FormulaCard};
use fedbounds::kinds::big_o::evaluate_big_o;
use fedbounds::kinds::rate::{evaluate_rate, sweep_series};
use fedbounds::verdict::VerdictKind;

fn card() -> Card {
    embedded_card().expect("the embedded card parses")
}

fn formula(card: &Card, id: &str) -> FormulaCard {
    card.claims.iter().find(|c| c.id == id).and_then(|c| c.formula.clone()).unwrap_or_else(|| panic!("{id} has a formula twin"))
}

fn run(card: &Card, scenario: &str) -> ScenarioRun {
    run_scenario(card.scenarios.iter().find(|s| s.name == scenario).expect("a card scenario"), 1.0).expect("the scenario runs")
}

/// The family's own slack of `claim` on `run`.
fn row_slack(run: &ScenarioRun, claim: &str) -> f64 {
    let row = run.results.iter().find(|r| r.claim == claim).expect("a row");
    assert_eq!(row.evaluation.verdict, VerdictKind::Holds, "{claim} on {}", run.scenario);
    row.evaluation.slack.expect("a slack")
}

fn slot(name: &str) -> usize {
    SYMBOLS.symbols().iter().position(|s| s.name == name).unwrap_or_else(|| panic!("no symbol `{name}`"))
}

/// The constants' values of a run at horizon `t` (per-round quantities NaN).
fn values(run: &ScenarioRun, t: usize) -> Vec<f64> {
    let x = Inputs { constants: run.constants.clone(), connectivity: run.connectivity, params: run.params, f0: run.trajectory.objective[0], t };
    SYMBOLS.values(&x)
}

/// The per-round quantities a twin reads at round `t` of `run`, by name; the Lemma 2 drift is the
/// statement's worst local step `k = 0..K_u-1` (DPGP-L2~printed).
fn round_quantities(run: &ScenarioRun, t: usize) -> Vec<(&'static str, f64)> {
    let tr = &run.trajectory;
    let kappa = run.params.k_u - 1;
    let mut out = vec![
        ("consensus_t", tr.consensus[t]),
        ("Delta_ubar_t", tr.delta_ubar[t]),
        ("Delta_v_t", tr.delta_v[t]),
        ("F_t", tr.objective[t]),
        ("F_next", tr.objective[t + 1]),
    ];
    if let Some(local) = tr.local.get(t) {
        out.push(("u_drift_t", local.u_drift[..kappa].iter().copied().fold(0.0, f64::max)));
        out.push(("u_grad_t", local.u_grad));
        out.push(("F_mid", local.objective_mid));
    }
    out
}

/// `min_t rhs_t / lhs_t` of a per-round twin over the run's rounds (exact moments), and whether
/// `lhs_t <= rhs_t` at every round.
fn per_round(run: &ScenarioRun, f: &FormulaCard) -> (f64, bool) {
    let twin = ClaimFormulas::compile("twin", f, SYMBOLS.symbols()).expect("the twin compiles");
    let rounds = run.trajectory.delta_ubar.len();
    let mut least = f64::INFINITY;
    let mut holds = true;
    for t in 0..rounds {
        let mut v = values(run, rounds);
        for (name, value) in round_quantities(run, t) {
            v[slot(name)] = value;
        }
        let (lhs, rhs) = (twin.field("lhs", &v).expect("lhs"), twin.field("rhs", &v).expect("rhs"));
        assert!(lhs.is_finite() && rhs.is_finite(), "round {t}: {lhs} <= {rhs}");
        holds &= lhs <= rhs;
        if lhs > 0.0 {
            least = least.min(rhs / lhs);
        }
    }
    (least, holds)
}

/// Every halved term of a per-round claim on `run` (a scenario where it is tight): the unmutated
/// twin holds with the family's slack (below 2); each mutant's verdict is computed, and the ones
/// that still hold are returned (field and term, least ratio) so the test can name them.
fn uncaught_halved_terms(claim: &str, run: &ScenarioRun) -> Vec<(String, f64)> {
    let f = formula(&card(), claim);
    let (slack, holds) = per_round(run, &f);
    assert!(holds, "negative control: {claim} as written holds on {}", run.scenario);
    let own = row_slack(run, claim);
    assert!((slack - own).abs() <= 1e-9 * own, "{claim} on {}: the twin's slack {slack} against the row's {own}", run.scenario);
    assert!(slack < 2.0, "{} is tight for {claim}: slack {slack}", run.scenario);
    let mut uncaught = Vec::new();
    let mutants = wrong_terms(&f, 0.5).expect("the twin's terms");
    assert!(!mutants.is_empty(), "{claim}: the twin has terms to halve");
    for w in mutants {
        let (least, holds) = per_round(run, &w.card);
        assert_eq!(holds, least >= 1.0, "{claim} {} {}: a verdict is its least ratio against 1", w.field, w.term);
        if holds {
            uncaught.push((format!("{} {}", w.field, w.term), least));
        }
    }
    uncaught
}

fn halved_terms(claim: &str, scenario: &str) -> Vec<(String, f64)> {
    uncaught_halved_terms(claim, &run(&card(), scenario))
}

#[test]
fn lemma2_printed_every_halved_term_is_violated_on_l3_printed_k32() {
    // rhs = f*(...) and f = 32*K_u*eta_u^2 are single terms: halving either halves the bound,
    // slack 1.10 -> 0.55.
    assert_eq!(halved_terms("DPGP-L2~printed", "l3-printed-k32"), Vec::<(String, f64)>::new());
}

#[test]
fn lemma3_printed_every_halved_term_is_violated_on_l3_tight() {
    // rhs = AA*(...) and AA = div_pos(...) are single terms: slack 1.31 -> 0.65.
    assert_eq!(halved_terms("DPGP-L3~printed", "l3-tight"), Vec::<(String, f64)>::new());
}

/// The u-step's positive corrections, in (32) as in (26): the `O(eta^2)` and `AA` terms, each
/// smaller than twice the room where (32) or (26) is tightest on the card's scenarios.
const U_STEP_CORRECTIONS: [&str; 7] = [
    "rhs +Su*(sigma_u^2 + sigma_g2)",
    "let.Pb +1",
    "let.Pb +(32*K_u*L_u^2*eta_u^2/delta^2)*(L_u^2*AA + 1)",
    "let.Pb +L_u^2*AA",
    "let.Su +K_u*L_u^2*eta_u*AA/2",
    "let.Su +5/2*K_u*L_u*eta_u^2*Pb",
    "let.Cu +Su",
];

#[test]
fn rec32_halved_terms_caught_on_l3_printed_k32_and_the_ones_that_cannot_be() {
    // (32) holds with slack 1.039 at its worst round: a halved term is caught where it exceeds the
    // room rhs - lhs, 3.9% of the bound. F_t and -F_star (F* = -0.92 here) are most of the right
    // side and are caught; the other 17 mutants are not, for three reasons.
    let card = card();
    let run = run(&card, "l3-printed-k32");
    let slack = per_round(&run, &formula(&card, "DPGP-REC32")).0;
    let uncaught = uncaught_halved_terms("DPGP-REC32", &run);
    // (a) Halving a negative term raises the bound (a weaker claim, never violated where the
    // claim holds): the descent terms, whose coefficients Cu, Cv are negative under the steps.
    let weaker = ["rhs +Cu*Delta_ubar_t", "rhs +Cv*Delta_v_t", "let.Cu +-eta_u*K_u/2", "let.Cv +-eta_v*K_v"];
    // (b) Zero here: sigma_v = 0 and no coupling (L_vu = 0).
    let zero = ["rhs +Sv", "let.Su +L_vu^2*AA/2", "let.Sv +4*eta_v^2*K_v^2*sigma_v^2*(1 + L_v)"];
    // (c) Positive terms smaller than twice the room at every round: the O(eta^2) and AA
    // corrections (least ratio 1.034 to 1.039 with the term halved).
    let small: Vec<&str> = U_STEP_CORRECTIONS.iter().chain(&["let.Cv +8*eta_v^2*K_v^2*L_v", "let.Cv +8*eta_v^2*K_v^2"]).copied().collect();
    assert_eq!(uncaught.len(), weaker.len() + zero.len() + small.len() + 1, "uncaught: {uncaught:#?}");
    for (n, least) in &uncaught {
        let why = if weaker.contains(&n.as_str()) {
            *least > slack * (1.0 + 1e-12)
        } else if zero.contains(&n.as_str()) {
            (*least - slack).abs() <= 1e-12 * slack
        } else {
            (small.contains(&n.as_str()) || n.starts_with("let.AA ")) && *least < slack && *least >= 1.0
        };
        assert!(why, "{n}: least ratio {least} against the unmutated {slack}");
    }
}

/// Every uncaught halved term of a half of (32) on `scenario`, each of three kinds as for (32):
/// negative (halving it raises the bound, least ratio above the unmutated slack), zero on this
/// instance (least ratio the slack), or positive but below the room (least ratio in `[1, slack)`).
/// Returns the uncaught names by kind.
fn halves_uncaught(claim: &str, scenario: &str) -> [Vec<String>; 3] {
    let card = card();
    let run = run(&card, scenario);
    let slack = per_round(&run, &formula(&card, claim)).0;
    let mut kinds: [Vec<String>; 3] = Default::default();
    for (n, least) in uncaught_halved_terms(claim, &run) {
        let kind = if least > slack * (1.0 + 1e-12) {
            0
        } else if (least - slack).abs() <= 1e-12 * slack {
            1
        } else {
            assert!((1.0..slack).contains(&least), "{claim} {n}: least ratio {least} against {slack}");
            2
        };
        kinds[kind].push(n);
    }
    eprintln!("{claim} on {scenario} (slack {slack}): {kinds:#?}");
    kinds
}

#[test]
fn eq26_halved_terms_caught_on_l3_tight_and_the_ones_that_cannot_be() {
    // (26) holds with slack 1.018 at its worst round: the room is 1.8% of the bound. F_mid and
    // -F_star are most of it and are caught.
    let [weaker, zero, small] = halves_uncaught("DPGP-EQ26", "l3-tight");
    assert_eq!(weaker, ["rhs +Cu*Delta_ubar_t", "let.Cu +-eta_u*K_u/2"], "the descent term, negative under the steps");
    assert!(zero.is_empty(), "{zero:?}");
    let small_expected = U_STEP_CORRECTIONS;
    let mut small: Vec<String> = small.into_iter().filter(|n| !n.starts_with("let.AA ")).collect();
    small.sort();
    let mut expected: Vec<String> = small_expected.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(small, expected, "the O(eta^2) and AA corrections, smaller than the room");
}

#[test]
fn eq31_halved_terms_caught_on_randk_small_step_and_the_ones_that_cannot_be() {
    // (31) holds with slack 1.016 at its worst round on randk-small-step: F_t and -F_star are
    // caught; the noise term Sv and the O(eta_v^2) parts of Cv are smaller than the room.
    let [weaker, zero, small] = halves_uncaught("DPGP-EQ31", "randk-small-step");
    assert_eq!(weaker, ["rhs +Cv*Delta_v_t", "let.Cv +-eta_v*K_v"], "the descent term, negative under the steps");
    // No coupling here (L_vu = 0): the consensus term and AA, which enters (31) only through it, are zero.
    assert_eq!(zero.len(), 3, "{zero:?}");
    assert!(zero[0] == "rhs +Vu*(sigma_u^2 + sigma_g2 + Delta_ubar_t)" && zero[1].starts_with("let.AA ") && zero[2] == "let.Vu +L_vu^2*AA/2", "{zero:?}");
    assert_eq!(small, ["rhs +Sv", "let.Cv +8*eta_v^2*K_v^2*L_v", "let.Cv +8*eta_v^2*K_v^2", "let.Sv +4*eta_v^2*K_v^2*sigma_v^2*(1 + L_v)"]);
}

/// The searched worst instance for DPGP-REC32 (`reports/search/DPGP-REC32@estimated.toml`, slack
/// 1.00005) is no better at catching the small terms: its room is 5e-5 of the bound and each halved
/// correction term moves the bound by less (printed); F_t halved is caught there too.
#[test]
fn rec32_on_the_searched_worst_instance() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/search/DPGP-REC32@estimated.toml");
    let text = std::fs::read_to_string(&path).expect("the search's replay card");
    let card = parse_card(&text, "replay").expect("the replay card parses");
    let run = run_scenario(&card.scenarios[0], 1.0).expect("it runs");
    let uncaught = uncaught_halved_terms("DPGP-REC32", &run);
    eprintln!("{uncaught:#?}");
    assert!(uncaught.iter().all(|(n, _)| n != "rhs +F_t"), "F_t halved must be caught");
}

/// Corollary 1's exponent `-1/2` on complete-low (slack 1.008): halving it gives `-1/4`, a weaker
/// rate the run satisfies, so no factor below 1 can be caught on an exponent; doubling it gives
/// the `1/T` rate, violated there (as DPGP-C1~rate-inv-T's row).
#[test]
fn corollary1_a_doubled_exponent_is_violated_on_complete_low_a_halved_one_cannot_be() {
    let card = card();
    let f = formula(&card, "DPGP-C1");
    let run = run(&card, "complete-low");
    let rate = |f: &FormulaCard| {
        let twin = ClaimFormulas::compile("twin", f, SYMBOLS.symbols()).expect("the twin compiles");
        let exponent = twin.bound(&values(&run, run.trajectory.delta_ubar.len()));
        let ts: Vec<usize> = run.sweep.iter().map(|p| p.rounds).collect();
        let ys: Vec<f64> = run.sweep.iter().map(|p| p.metric).collect();
        let e = evaluate_rate(run.fit, exponent, *ts.last().expect("a sweep"), sweep_series(&ts, &ys), Vec::new(), 1.0);
        (e.verdict, e.slack.expect("a slack"))
    };
    // Negative control: the exponent as written holds with the row's slack.
    let (v, slack) = rate(&f);
    assert_eq!(v, VerdictKind::Holds);
    assert!((slack - row_slack(&run, "DPGP-C1")).abs() <= 1e-12 && slack < 2.0, "{slack}");
    let halved = wrong_terms(&f, 0.5).expect("terms");
    assert_eq!(halved.len(), 1, "one term, the exponent");
    assert_eq!(rate(&halved[0].card).0, VerdictKind::Holds, "a halved exponent is a weaker rate: {}", halved[0].term);
    let doubled = wrong_terms(&f, 2.0).expect("terms");
    assert_eq!(rate(&doubled[0].card).0, VerdictKind::Violated, "the exponent doubled to -1 must be caught");
}

/// Theorem 1's bracket is an O(.) statement: metric/bracket must stop growing over the sweep, with
/// no constant, so a factor 2 on any term changes no verdict (every halved term still holds) and
/// there is no slack. A wrong rate does change it: the bracket with `T` for `sqrt(T)` (its
/// `T^-1/2` terms falling as `T^-1`, its `T^-3/2` ones as `T^-2`) is violated on the same runs,
/// where the bracket as written holds.
#[test]
fn theorem1_a_wrong_rate_is_violated_a_constant_factor_never_is() {
    let card = card();
    let f = formula(&card, "DPGP-T1");
    for scenario in ["l3-tight", "complete-low"] {
        let run = run(&card, scenario);
        let big_o = |f: &FormulaCard| {
            let twin = ClaimFormulas::compile("twin", f, SYMBOLS.symbols()).expect("the twin compiles");
            let points: Vec<(usize, f64, f64)> = run.sweep.iter().map(|p| (p.rounds, p.metric, twin.bound(&values(&run, p.rounds)))).collect();
            evaluate_big_o(&points, Vec::new()).verdict
        };
        let own = run.results.iter().find(|r| r.claim == "DPGP-T1").expect("a row").evaluation.verdict;
        assert_eq!((big_o(&f), own), (VerdictKind::Holds, VerdictKind::Holds), "negative control on {scenario}");
        for w in wrong_terms(&f, 0.5).expect("terms") {
            assert_eq!(big_o(&w.card), VerdictKind::Holds, "{scenario}: {} {} halved", w.field, w.term);
        }
        let mut wrong = f.clone();
        wrong.bound = f.bound.as_ref().map(|b| b.replace("sqrt(T)", "T"));
        assert_ne!(wrong.bound, f.bound);
        assert_eq!(big_o(&wrong), VerdictKind::Violated, "{scenario}: the bracket with T^-1 for T^-1/2");
    }
}

/// The claims listed as tight without a formula twin: nothing to scale (a twin added later must be
/// tested here).
#[test]
fn eq15_and_remark2_have_no_formula_twin() {
    let card = card();
    for (id, why) in WITHOUT_FORMULA {
        let entry = card.claims.iter().find(|c| c.id == id).expect("a card entry");
        assert!(entry.formula.is_none() && !why.is_empty(), "{id} now has a formula twin: test its wrong terms");
    }
}
