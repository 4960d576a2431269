//! The paper's figures mirrored (section 5): each statement's verdict is computed, matches the
//! experiments card, does not depend on the thread count, and can fail (negative controls that
//! perturb the computed curves the way a contradicting figure would).

use std::sync::OnceLock;

use fedbounds::families::ccyw::check::in_pool;
use fedbounds::families::ccyw::experiments::{
    apply_card, embedded_experiment_card, parse_experiment_card, statements, Experiments, Sweep, EXPERIMENTS_CARD, STATEMENT_IDS,
};
use fedbounds::families::ccyw::report::experiments_files;
use fedbounds::verdict::VerdictKind;
use fedbounds::Error;

use crate::main_job::sorted_bytes;

/// The experiments on one thread (the main job runs them on every core).
fn computed() -> &'static Experiments {
    static E: OnceLock<Experiments> = OnceLock::new();
    E.get_or_init(|| in_pool(Some(1), || Experiments::run(&|| {})).unwrap().unwrap())
}

fn verdict_of(sweeps: &[Sweep], id: &str) -> VerdictKind {
    statements(sweeps).into_iter().find(|s| s.id == id).unwrap_or_else(|| panic!("{id} not checked")).verdict
}

fn sweep_mut<'a>(sweeps: &'a mut [Sweep], id: &str) -> &'a mut Sweep {
    sweeps.iter_mut().find(|s| s.id == id).unwrap()
}

#[test]
fn every_statement_is_checked_and_matches_the_card() {
    let e = computed();
    let ids: Vec<&str> = e.statements.iter().map(|s| s.id).collect();
    assert_eq!(ids, STATEMENT_IDS.to_vec());
    for s in &e.statements {
        assert!(s.expected.is_some(), "{} has no expected verdict", s.id);
        assert!(s.matches_expected(), "{}: computed {} but the card expects {:?}; evidence {:?}", s.id, s.verdict, s.expected, s.evidence);
        assert!(!s.evidence.is_empty(), "{} shows no numbers", s.id);
    }
    for c in e.sweeps.iter().flat_map(|s| &s.curves) {
        assert!(c.at_steady_state, "{}: the curve never reaches its steady state", c.setting.label);
        assert_eq!(c.metric.len(), c.setting.rounds);
        // The exact fixed point is where the exact curve ends up.
        let last = *c.metric.last().unwrap();
        assert!((last / c.steady_state - 1.0).abs() < 0.02, "{}: last round {} vs steady state {}", c.setting.label, last, c.steady_state);
    }
}

/// The experiments' files (statements, thinned curves, and figures drawn from every round) on one
/// thread are the main job's byte for byte, run on rayon's default pool (every core; the
/// committed reports were made on two).
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let meta = crate::main_job::request().meta;
    let one = sorted_bytes(experiments_files(computed(), &meta, true).unwrap());
    let main = sorted_bytes(crate::main_job::family("ccyw").files.iter().filter(|f| f.path.starts_with("experiments")).cloned().collect());
    assert!(one.len() >= 3, "{} files", one.len());
    let paths = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&one), paths(&main));
    for (a, b) in one.iter().zip(&main) {
        assert!(a.1 == b.1, "{} differs between one thread and the default pool", a.0);
    }
    // Negative control: one round of one curve moved by 1e-12 relative shows in the files.
    let mut moved = computed().clone();
    moved.sweeps[0].curves[0].metric[1] *= 1.0 + 1e-12;
    assert_ne!(sorted_bytes(experiments_files(&moved, &meta, true).unwrap()), one);
}

#[test]
fn reversed_gamma_order_is_reported_violated() {
    let mut sweeps = computed().sweeps.clone();
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG1A-STEADY"), VerdictKind::Holds);
    sweep_mut(&mut sweeps, "fig1a").curves.reverse();
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG1A-STEADY"), VerdictKind::Violated);
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG1A-RATE"), VerdictKind::Violated);
}

#[test]
fn a_curve_short_of_its_steady_state_makes_speed_inconclusive() {
    let mut sweeps = computed().sweeps.clone();
    sweep_mut(&mut sweeps, "fig1c").curves[0].at_steady_state = false;
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG1C-RATE"), VerdictKind::Inconclusive);
    // Steady states are exact fixed points: statements about them stay decided.
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG1C-STEADY"), VerdictKind::Holds);
}

#[test]
fn a_dependence_on_k_or_b_breaks_independence() {
    let mut sweeps = computed().sweeps.clone();
    sweep_mut(&mut sweeps, "fig2c").curves[2].steady_state *= 1.2;
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG2C-STEADY"), VerdictKind::Violated);
    let mut sweeps = computed().sweeps.clone();
    sweep_mut(&mut sweeps, "fig1d-b").curves[0].steady_state *= 0.8;
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG1D-STEADY"), VerdictKind::Violated);
}

#[test]
fn scaffold_above_fedavg_is_reported_violated() {
    let mut sweeps = computed().sweeps.clone();
    let vs = sweep_mut(&mut sweeps, "fig2c-vs");
    let fed = vs.curves[0].steady_state;
    vs.curves[1].steady_state = fed * 1.01;
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG2C-VS"), VerdictKind::Violated);
}

#[test]
fn a_bound_below_a_steady_state_is_reported_violated() {
    let mut sweeps = computed().sweeps.clone();
    let c = sweeps.iter_mut().flat_map(|s| s.curves.iter_mut()).find(|c| c.steady_bound.as_ref().is_some_and(|b| b.failed.is_empty())).unwrap();
    let steady = c.steady_state;
    c.steady_bound.as_mut().unwrap().value = steady * 0.99;
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG-BOUNDS"), VerdictKind::Violated);
}

#[test]
fn a_card_expecting_another_verdict_is_a_mismatch() {
    let mut card = embedded_experiment_card().unwrap();
    card.statements.iter_mut().find(|s| s.id == "CCYW-FIG2C-VS").unwrap().expected = VerdictKind::Violated;
    let mut st = statements(&computed().sweeps);
    apply_card(&mut st, &card);
    let bad: Vec<&str> = st.iter().filter(|s| !s.matches_expected()).map(|s| s.id).collect();
    assert_eq!(bad, vec!["CCYW-FIG2C-VS"]);
}

#[test]
fn experiment_cards_with_bad_statement_ids_are_rejected() {
    let text = EXPERIMENTS_CARD.1;
    let field = |r: fedbounds::error::Result<_>| match r {
        Err(Error::InvalidField { field, .. }) => field,
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("accepted"),
    };
    let unknown = text.replacen("id = \"CCYW-FIG1A-RATE\"", "id = \"CCYW-FIG9Z\"", 1);
    assert_eq!(field(parse_experiment_card(&unknown, "x")), "statements[1].id");
    let twice = text.replacen("id = \"CCYW-FIG1A-RATE\"", "id = \"CCYW-FIG1A-STEADY\"", 1);
    assert_eq!(field(parse_experiment_card(&twice, "x")), "statements[1].id");
    let cut = text.rsplit_once("[[statements]]").unwrap().0;
    assert_eq!(field(parse_experiment_card(cut, "x")), "statements");
    let extra = text.replacen("expected = \"holds\"", "expected = \"holds\"\nexpcted = \"holds\"", 1);
    assert!(matches!(parse_experiment_card(&extra, "x"), Err(Error::Parse { .. })));
    let bad_verdict = text.replacen("expected = \"holds\"", "expected = \"fine\"", 1);
    assert!(matches!(parse_experiment_card(&bad_verdict, "x"), Err(Error::Parse { .. })));
}

#[test]
fn missing_sweeps_leave_statements_undecided_not_holding() {
    // No sweeps at all: every ordering or independence statement would hold vacuously on empty
    // lists; it must be inconclusive instead (the bound statement: nothing applicable).
    for s in statements(&[]) {
        let want = if s.id == "CCYW-FIG-BOUNDS" { VerdictKind::NotApplicable } else { VerdictKind::Inconclusive };
        assert_eq!(s.verdict, want, "{}", s.id);
    }
    // One sweep cut to a single curve.
    let mut sweeps = computed().sweeps.clone();
    sweep_mut(&mut sweeps, "fig2c-b").curves.truncate(1);
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG2C-STEADY"), VerdictKind::Inconclusive);
    // A NaN steady state.
    let mut sweeps = computed().sweeps.clone();
    sweep_mut(&mut sweeps, "fig1b").curves[1].steady_state = f64::NAN;
    assert_eq!(verdict_of(&sweeps, "CCYW-FIG1B-STEADY"), VerdictKind::Inconclusive);
}
