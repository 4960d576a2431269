//! A wrong term in a FedPLT bound is caught on the claim's tight scenario. Each claim with a formula
//! twin (`[claims.formula]` in `theorems/fedplt.toml`) is rewritten with one top-level term of its
//! bound, right side or a definition halved (`formula::wrong::wrong_terms`, factor 1/2); every
//! version becomes a claim a card defines by formulas, checked on the scenario where the claim's
//! slack is least. A term that matters there (half of it exceeds bound - observed at some round)
//! must flip the verdict to violated; the terms that cannot are listed with the reason, derived
//! from the instance. Negative control: the formulas as written hold on the same scenario, as a
//! card-defined claim too, with the built-in claim's slack.

use std::collections::BTreeMap;

use fedbounds::families::fedplt::{CARD, FAMILY};
use fedbounds::family::{CardText, CheckRequest, Silent, VerdictRow};
use fedbounds::formula::wrong::wrong_terms;
use fedbounds::formula::FormulaCard;
use fedbounds::registry::Registry;
use fedbounds::verdict::{ConstantsSource, VerdictKind};

/// The id of the unmutated formulas as a card-defined claim.
const AS_WRITTEN: &str = "AS-WRITTEN";

fn embedded() -> toml::Table {
    toml::from_str(CARD.1).expect("the FedPLT card parses")
}

fn entry<'a>(card: &'a toml::Table, list: &str, key: &str, value: &str) -> &'a toml::Table {
    card[list]
        .as_array()
        .and_then(|a| a.iter().filter_map(|v| v.as_table()).find(|t| t.get(key).and_then(|v| v.as_str()) == Some(value)))
        .unwrap_or_else(|| panic!("the card has no {list} entry with {key} = {value}"))
}

/// The claim's formula twin as written in the card.
fn formula(claim: &str) -> FormulaCard {
    let card = embedded();
    let f = entry(&card, "claims", "id", claim).get("formula").unwrap_or_else(|| panic!("{claim} has no [claims.formula]"));
    f.clone().try_into().expect("a formula card")
}

/// A card defining each (id, formulas) as a claim with `claim`'s texts, and the one scenario.
fn card_text(claim: &str, scenario: &str, versions: &[(String, FormulaCard)]) -> String {
    let card = embedded();
    let base = entry(&card, "claims", "id", claim);
    let mut claims = Vec::new();
    for (id, f) in versions {
        // A claim a card defines names the metric it bounds; the built-in twins bound D^t.
        let f = FormulaCard { metric: f.metric.clone().or(Some("distance".into())), ..f.clone() };
        let mut c = base.clone();
        c.insert("id".into(), id.clone().into());
        c.remove("bound");
        c.remove("tightness");
        c.insert("formula".into(), toml::Value::try_from(&f).expect("a formula card serialises"));
        claims.push(toml::Value::Table(c));
    }
    let mut s = entry(&card, "scenarios", "name", scenario).clone();
    s.remove("expected");
    s.remove("expected_empirical");
    let mut family = card["family"].as_table().expect("[family]").clone();
    family.insert("id".into(), "WRONG-TERMS".into());
    let mut out = toml::Table::new();
    out.insert("family".into(), toml::Value::Table(family));
    out.insert("claims".into(), toml::Value::Array(claims));
    out.insert("scenarios".into(), toml::Value::Array(vec![toml::Value::Table(s)]));
    toml::to_string(&out).expect("the card serialises")
}

/// Each claim's row on the scenario (empirical: these formulas read `G2`).
fn rows(text: String) -> BTreeMap<String, VerdictRow> {
    let registry = Registry::new(vec![&FAMILY]).unwrap();
    let request = CheckRequest { card: Some(CardText { what: "wrong terms".into(), text }), ..Default::default() };
    let outcome = registry.check(&request, &Silent).expect("the card is checked");
    outcome.rows().filter(|r| r.constants == ConstantsSource::Empirical).map(|r| (r.claim.to_string(), r.clone())).collect()
}

/// The built-in claim's empirical row on the scenario of the embedded card.
fn builtin_row(claim: &str, scenario: &str) -> VerdictRow {
    let registry = Registry::new(vec![&FAMILY]).unwrap();
    let request = CheckRequest { claims: vec![claim.into()], scenarios: vec![scenario.into()], ..Default::default() };
    let outcome = registry.check(&request, &Silent).expect("the claim is checked");
    let found = outcome.rows().find(|r| r.claim == claim && r.constants == ConstantsSource::Empirical).expect("an empirical row").clone();
    found
}

/// One wrong version's outcome: the field and term scaled, the verdict and the slack.
#[derive(Debug)]
struct Outcome {
    field: String,
    term: String,
    verdict: VerdictKind,
    slack: Option<f64>,
}

/// The claim's formulas as written (the control) and with each term scaled by `factor`, checked
/// on `scenario` in one card.
fn outcomes(claim: &str, scenario: &str, factor: f64) -> (VerdictRow, Vec<Outcome>) {
    let f = formula(claim);
    let wrong = wrong_terms(&f, factor).expect("the card's formulas parse");
    let mut versions = vec![(AS_WRITTEN.to_string(), f)];
    versions.extend(wrong.iter().enumerate().map(|(i, w)| (format!("WRONG-{i}"), w.card.clone())));
    let mut rows = rows(card_text(claim, scenario, &versions));
    let control = rows.remove(AS_WRITTEN).expect("the unmutated claim's row");
    let out = wrong
        .into_iter()
        .enumerate()
        .map(|(i, w)| {
            let r = &rows[&format!("WRONG-{i}")];
            Outcome { field: w.field, term: w.term, verdict: r.evaluation.verdict, slack: r.evaluation.slack }
        })
        .collect();
    (control, out)
}

/// What a halved term does on the tight scenario: caught (violated), or held with the reason.
enum Expect {
    Caught,
    Held(&'static str),
}
use Expect::{Caught, Held};

/// The terms of the `nu`, `z` and `B` definitions every Case 1 and Case 2 formula shares.
const SHARED: [(&str, &str); 6] = [
    ("let.z", "+mu*psi_min*rho_min"),
    ("let.nu", "+2*psi_max^2*alpha_max^2*(1 - eta_min*L)"),
    ("let.nu", "+psi_min*rho_min"),
    ("let.B", "+2*tau^2*(G2 + sigma2)*Gamma"),
    ("let.B", "+2*L*nu*Lambda"),
    ("let.B", "+sigma2*psi_max^2*Gamma"),
];

/// Why a halved `z` never lowers a bound: every bound falls as `z` grows (`1/z`, `1/z^2`,
/// `(1 - z eta)^t`), so halving it loosens them.
const Z_LOOSENS: &str = "halving z raises every bound (1/z, 1/z^2, (1 - z eta)^t)";
/// Why `nu` and the `Lambda` term of `B` cannot matter on these scenarios: one client, so
/// `Lambda = 0` and `nu` enters `B` only through `2 L nu Lambda = 0`. They matter only with
/// heterogeneous optima, where every Case 1 and 2 bound has slack above 2 (the `B/z` and `B/z^2`
/// parts lose at least 3 sigma^2 against the noise they bound).
const LAMBDA_ZERO: &str = "Lambda = 0 on one client: nu and 2 L nu Lambda are 0";
/// `sigma = 0`: the noise term of `B` is 0.
const NOISELESS: &str = "sigma = 0: sigma^2 psibar^2 Gamma = 0";

fn expectations(claim: &str) -> Vec<(&'static str, &'static str, Expect)> {
    let shared = |why: [&'static str; 6]| SHARED.iter().zip(why).map(|(&(f, t), w)| (f, t, Held(w))).collect::<Vec<_>>();
    let mut out = match claim {
        // Slack 1.0088 at t = 0: bound - observed = eta B / z = 0.88 of D^0 = 100; the first term
        // is D^0 itself, half of it 50 > 0.88. The ball eta B / z is 0.88 and halving any part of
        // it moves the bound by at most 0.44 < 0.88: it is caught nowhere, since with noise the
        // steady state is eta sigma^2 / (mu (2 - eta mu)) <= eta sigma^2/mu against eta B / z >=
        // 3 eta sigma^2 / mu (slack >= 3 on one coordinate with L = mu), and without noise D^t
        // decays while the ball stays.
        "FEDPLT-CONST" => vec![
            ("bound", "+(1 - z*eta)^t*D0", Caught),
            ("bound", "+eta*B/z", Held("eta B / z = 0.88, half 0.44 < bound - observed = 0.88; the ball has slack >= 3 where it dominates")),
        ],
        // Slack 5/2: no term of C = D^0 + B/z^2 is worth more than C, and halving all of it
        // leaves slack 5/4 (the card's tightness).
        "FEDPLT-DECAY" => vec![("bound", "+C/(t + 1)", Held("the whole bound halved leaves slack 5/4: Case 2 has slack >= 5/2 on every instance (card)"))],
        // Slack 2 exactly: half the bound equals D^0, held with equality (a factor below 1/2
        // flips it: see the next test).
        "FEDPLT-DECAY~any-c" => vec![("bound", "+C/(t + 1)", Held("slack 2 exactly: half the bound equals D^0 (equality holds)"))],
        // Slack 1 at t = 0, where v/g = D^0: halving v (or the bound) is caught. The first
        // argument of the max, (beta/z)^2 B/(beta - 1) = 8 D^0, is below g D^0 = 16 D^0, so B's
        // terms and z do not reach the bound; where that argument is the max, the slack is at
        // least 4 (beta^2/(beta - 1) >= 4 and B/z^2 >= 2 D^0; the search's least is 4.03).
        "FEDPLT-DECAY~corrected" => vec![("bound", "+v/(t + g)", Caught)],
        other => panic!("no expectations for {other}"),
    };
    out.extend(match claim {
        "FEDPLT-CONST" => shared([Z_LOOSENS, LAMBDA_ZERO, LAMBDA_ZERO, "2 eta G^2/z = 0.88: halved, the bound falls 0.44 < 0.88", LAMBDA_ZERO, NOISELESS]),
        "FEDPLT-DECAY" => shared([
            Z_LOOSENS,
            LAMBDA_ZERO,
            LAMBDA_ZERO,
            "4 sigma^2 of C = 5 sigma^2: halved, slack 3/2",
            LAMBDA_ZERO,
            "sigma^2 of C = 5 sigma^2: halved, slack 9/4",
        ]),
        "FEDPLT-DECAY~any-c" => {
            shared([Z_LOOSENS, LAMBDA_ZERO, LAMBDA_ZERO, "the whole of B: halved, the bound equals D^0 (equality holds)", LAMBDA_ZERO, NOISELESS])
        }
        _ => shared([
            "z enters only the max's first argument 8 D^0 < g D^0 (z_s, the schedule's, is its own symbol)",
            LAMBDA_ZERO,
            LAMBDA_ZERO,
            "8 D^0 < g D^0 = 16 D^0 is not the max",
            LAMBDA_ZERO,
            NOISELESS,
        ]),
    });
    // The definition each claim adds after the shared ones.
    out.extend(match claim {
        "FEDPLT-DECAY" => vec![
            ("let.C", "+D0", Held("D^0 = 0 on this scenario; where D^0 dominates (t = 0) the slack is >= 3")),
            ("let.C", "+B/z^2", Held("B/z^2 = C here; halved, slack 5/4")),
        ],
        "FEDPLT-DECAY~any-c" => vec![("let.C", "+B/z^2", Held("C = B/z^2: halved, the bound equals D^0 (equality holds)"))],
        "FEDPLT-DECAY~corrected" => vec![("let.v", "+max(div_pos((beta/z_s)^2*B, beta - 1), g*D0)", Caught)],
        _ => vec![],
    });
    out
}

/// The claims with a formula twin a card can define (a bound on D^t), each with its tight
/// scenario of the card and that scenario's slack where it has a closed form (`None`: measured,
/// required below 2).
const TIGHT: [(&str, &str, Option<f64>); 4] = [
    ("FEDPLT-CONST", "constant-tight-noiseless", None),
    ("FEDPLT-DECAY", "decaying-noise-only", Some(2.5)),
    ("FEDPLT-DECAY~any-c", "decaying-noiseless-isotropic", Some(2.0)),
    ("FEDPLT-DECAY~corrected", "decaying-corrected-tight", Some(1.0)),
];

#[test]
fn every_halved_term_that_matters_on_the_tight_scenario_is_caught() {
    for (claim, scenario, closed_form) in TIGHT {
        let (control, got) = outcomes(claim, scenario, 0.5);
        // Negative control: the formulas as written hold there, with the built-in claim's slack.
        assert_eq!(control.evaluation.verdict, VerdictKind::Holds, "{claim} as written on {scenario}: {control:?}");
        let builtin = builtin_row(claim, scenario);
        assert_eq!(builtin.evaluation.verdict, VerdictKind::Holds, "{claim} built in on {scenario}");
        let slack = builtin.evaluation.slack.expect("a slack where it holds");
        match closed_form {
            Some(exact) => assert!((slack - exact).abs() <= 1e-12 * exact, "{claim} built in on {scenario}: slack {slack}, closed form {exact}"),
            None => assert!(slack > 1.0 && slack < 2.0, "{claim} built in on {scenario}: slack {slack}, a tight scenario's is below 2"),
        }
        let s = control.evaluation.slack.expect("a slack");
        assert!((s - slack).abs() <= 1e-12 * slack, "{claim}: the card's formulas give slack {s}, the built-in claim {slack}");
        let expected = expectations(claim);
        let listed: Vec<(&str, &str)> = expected.iter().map(|(f, t, _)| (*f, *t)).collect();
        let terms: Vec<(&str, &str)> = got.iter().map(|o| (o.field.as_str(), o.term.as_str())).collect();
        assert_eq!(terms, listed, "{claim}: the terms of its formulas changed; say for each new one whether {scenario} catches it");
        for (o, (_, _, e)) in got.iter().zip(&expected) {
            match e {
                Caught => {
                    assert_eq!(o.verdict, VerdictKind::Violated, "{claim}: {} {} halved is not caught on {scenario}: {o:?}", o.field, o.term);
                    assert!(o.slack.is_some_and(|s| s < 1.0), "{claim}: {o:?}");
                }
                Held(why) => assert_eq!(o.verdict, VerdictKind::Holds, "{claim}: {} {} halved ({why}) unexpectedly flips on {scenario}", o.field, o.term),
            }
        }
        // The claims whose tight scenario has slack below 2 catch at least one term.
        assert_eq!(got.iter().any(|o| o.verdict == VerdictKind::Violated), slack < 2.0, "{claim}: {got:?}");
    }
}

/// FEDPLT-DECAY~any-c at slack 2 exactly: a halved bound equals D^0 at t = 0 and holds with
/// equality (slack 1); any factor below 1/2 flips it. Control: factor 1/2 holds.
#[test]
fn the_least_slack_of_c_equal_b_over_z2_is_two_exactly() {
    let (_, half) = outcomes("FEDPLT-DECAY~any-c", "decaying-noiseless-isotropic", 0.5);
    let (_, below) = outcomes("FEDPLT-DECAY~any-c", "decaying-noiseless-isotropic", 0.499);
    let whole = |o: &&Outcome| matches!((o.field.as_str(), o.term.as_str()), ("bound", _) | ("let.C", _) | ("let.B", "+2*tau^2*(G2 + sigma2)*Gamma"));
    let (half, below): (Vec<&Outcome>, Vec<&Outcome>) = (half.iter().filter(whole).collect(), below.iter().filter(whole).collect());
    assert_eq!(half.len(), 3);
    for o in half {
        assert_eq!((o.verdict, o.slack), (VerdictKind::Holds, Some(1.0)), "{o:?}");
    }
    for o in below {
        assert_eq!(o.verdict, VerdictKind::Violated, "{o:?}");
    }
}

/// The claims with a formula twin not tested here, and why: a card can define a bound on D^t,
/// not a per-round inequality of a proof (`lhs`/`rhs`), which the card reader refuses; and
/// FEDPLT-LIMIT's bound (and its `~unconditional` variant's) is 0, which scaling leaves 0.
#[test]
fn the_formula_twins_left_out_are_refused_as_card_claims_or_have_nothing_to_scale() {
    for claim in ["FEDPLT-REC", "FEDPLT-REC~tau-steps", "FEDPLT-REC~alpha-sqrt-r", "FEDPLT-DECAY-INDUCTION", "FEDPLT-DECAY-RECURSION"] {
        let f = formula(claim);
        assert!(f.lhs.is_some() && f.rhs.is_some() && f.bound.is_none(), "{claim} is a per-round inequality");
        let registry = Registry::new(vec![&FAMILY]).unwrap();
        let text = card_text(claim, "constant-tight-noiseless", &[(AS_WRITTEN.into(), f)]);
        let request = CheckRequest { card: Some(CardText { what: "wrong terms".into(), text }), ..Default::default() };
        let err = registry.check(&request, &Silent).expect_err("a per-round inequality is built in only").to_string();
        assert!(err.contains("built in only"), "{claim}: {err}");
    }
    for claim in ["FEDPLT-LIMIT", "FEDPLT-LIMIT~unconditional"] {
        let limit = formula(claim);
        let wrong = wrong_terms(&limit, 0.5).unwrap();
        assert_eq!(limit.bound.as_deref(), Some("0"));
        assert_eq!(wrong.len(), 1);
        // Control: the one version scales the one term 0.
        assert_eq!(wrong[0].card.bound.as_deref(), Some("(0.5*(0))"));
    }
    // Every claim with a formula twin is either tested above or listed here.
    let card = embedded();
    let twins: Vec<&str> = card["claims"].as_array().unwrap().iter().filter(|c| c.get("formula").is_some()).map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(twins.len(), TIGHT.len() + 7, "{twins:?}");
}
