//! The language on small cases: values, positions of errors, divisions, conditions.

use super::claim::{ClaimFormulas, FormulaCard};
use super::compile::{compile, Scope, Symbol};
use super::interval::Interval;
use super::parse::{parse_condition, parse_expr};

static SYMBOLS: [Symbol; 5] = [
    Symbol { name: "L", meaning: "smoothness", range: Interval::above(0.0), assumption: None, per_round: false },
    Symbol { name: "K", meaning: "local steps", range: Interval::at_least(1.0), assumption: None, per_round: false },
    Symbol { name: "gamma", meaning: "step", range: Interval::above(0.0), assumption: None, per_round: false },
    Symbol { name: "q", meaning: "contraction", range: Interval::closed_open(0.0, 1.0), assumption: None, per_round: false },
    Symbol { name: "b2", meaning: "dissimilarity", range: Interval::at_least(0.0), assumption: Some("A2.3 bounded dissimilarity"), per_round: false },
];

fn eval(text: &str, v: &[f64]) -> f64 {
    let e = parse_expr(text).unwrap();
    compile(&e, &Scope::new(&SYMBOLS)).unwrap().0.eval(v)
}

#[test]
fn precedence_and_functions() {
    let v = [2.0, 3.0, 0.5, 0.25, 4.0];
    assert_eq!(eval("1 + 2*3^2", &v), 19.0);
    assert_eq!(eval("-K^2", &v), -9.0);
    assert_eq!(eval("2^3^2", &v), 512.0);
    assert_eq!(eval("(1 - q)^2", &v), 0.5625);
    assert_eq!(eval("max(1, K, L) + min(q, gamma)", &v), 3.25);
    assert_eq!(eval("sqrt(b2) / (2*L)", &v), 0.5);
    assert_eq!(eval("1e-1 * 10", &v), 1.0);
    assert_eq!(eval("div_pos(1, q - 1)", &v), f64::INFINITY);
}

fn err(text: &str) -> super::FormulaError {
    match parse_expr(text) {
        Err(e) => e,
        Ok(e) => compile(&e, &Scope::new(&SYMBOLS)).map(|_| ()).expect_err("an error"),
    }
}

#[test]
fn errors_point_at_the_character_at_fault() {
    let e = err("4*L/(K*gama)");
    assert_eq!(e.pos, 7);
    assert!(e.message.contains("unknown symbol `gama`"), "{e}");
    assert_eq!(err("4*L/(K*gamma").pos, 12, "missing parenthesis at the end");
    assert_eq!(err("4*L + * K").pos, 6);
    assert_eq!(err("1/(K - 1)").pos, 2, "K - 1 is zero at K = 1");
    assert!(err("1/(K - 1)").message.contains("can be zero"));
    assert_eq!(err("sqrtt(K)").pos, 0);
    assert_eq!(err("L <= K").pos, 2, "a comparison where a value is expected");
    assert_eq!(err("L $ K").pos, 2);
    // Ranges exclude zero where they must.
    let e = parse_expr("1/(1 - q) + 1/(L*K*gamma) + 1/(32*L*K + sqrt(b2))").unwrap();
    assert!(compile(&e, &Scope::new(&SYMBOLS)).is_ok());
}

#[test]
fn a_condition_is_a_comparison() {
    assert!(parse_condition("gamma <= 1/(32*L*K) if K > 1").unwrap().guard.is_some());
    let e = parse_condition("gamma + 1/(32*L*K)").unwrap_err();
    assert!(e.message.contains("not a comparison"), "{e}");
    assert!(parse_condition("a <= b <= c").unwrap_err().message.contains("chained"));
}

fn card(bound: &str, conditions: &[&str]) -> FormulaCard {
    FormulaCard { bound: Some(bound.into()), conditions: conditions.iter().map(|s| s.to_string()).collect(), ..Default::default() }
}

#[test]
fn a_claim_compiles_checks_and_names_its_field() {
    let c = FormulaCard { lets: vec!["X = b2 + K".into()], ..card("X*gamma/(K - 1)", &["K >= 2", "gamma <= 1/(32*L*K)", "L = 2 if K > 100"]) };
    let f = ClaimFormulas::compile("MY-1", &c, &SYMBOLS).expect("K >= 2 makes K - 1 positive");
    let v = [2.0, 3.0, 0.001, 0.5, 1.0];
    assert_eq!(f.bound(&v), 4.0 * 0.001 / 2.0);
    let checks = f.checks(&v);
    assert_eq!(checks.len(), 2, "the guarded condition is left out");
    assert!(checks.iter().all(|c| c.holds));
    assert_eq!(f.limit_of("gamma", true, &v), Some((1.0 / 192.0, false)));
    // b2 without a value: its assumption fails, the bound says nothing.
    let v = [2.0, 3.0, 0.001, 0.5, f64::NAN];
    assert_eq!(f.bound(&v), f64::INFINITY);
    let a = f.assumption_checks(&v);
    assert_eq!(a.len(), 1);
    assert!(!a[0].holds);
    let err = ClaimFormulas::compile("MY-1", &card("gamma/(K - 1)", &[]), &SYMBOLS).unwrap_err().to_string();
    assert!(err.contains("claims[MY-1].formula.bound") && err.contains("column 7") && err.contains("can be zero"), "{err}");
    let err = ClaimFormulas::compile("MY-1", &card("gamma", &["gamma 1/L"]), &SYMBOLS).unwrap_err().to_string();
    assert!(err.contains("formula.conditions[0]") && err.contains("column 7"), "{err}");
    let err = ClaimFormulas::compile("MY-1", &card("gamma", &["gamma + 1"]), &SYMBOLS).unwrap_err().to_string();
    assert!(err.contains("not a comparison"), "{err}");
    let err = ClaimFormulas::compile("MY-1", &FormulaCard { lets: vec!["K = 2".into()], ..card("K", &[]) }, &SYMBOLS).unwrap_err().to_string();
    assert!(err.contains("let[0]") && err.contains("already defined"), "{err}");
}

#[test]
fn terms_of_a_sum_keep_their_signs() {
    let f = ClaimFormulas::compile("MY-2", &card("4*L/(K*gamma) - 12*L*gamma + b2", &[]), &SYMBOLS).unwrap();
    let t = f.terms("bound", &[1.0, 1.0, 0.5, 0.0, 3.0]);
    assert_eq!(t.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["+4*L/(K*gamma)", "-12*L*gamma", "+b2"]);
    assert_eq!(t.iter().map(|x| x.1).collect::<Vec<_>>(), [8.0, -6.0, 3.0]);
}
