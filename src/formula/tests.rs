//! The language on small cases: values, positions of errors, divisions, conditions.

use super::claim::{ClaimFormulas, FormulaCard, Limit};
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
    assert_eq!(f.limit_of("gamma", true, &v), Some(Limit::Inclusive(1.0 / 192.0)));
    // A strict condition on the card is strict: the step at its boundary fails it, and the limit
    // it gives is just inside.
    let strict = ClaimFormulas::compile("MY-2", &card("gamma", &["gamma < 1/(32*L*K)"]), &SYMBOLS).expect("a strict condition");
    let at_boundary = [2.0, 3.0, 1.0 / 192.0, 0.5, 1.0];
    assert!(!strict.checks(&at_boundary)[0].holds);
    assert!(f.checks(&at_boundary).iter().all(|c| c.holds), "control: `<=` admits it");
    let limit = strict.limit_of("gamma", true, &v).expect("a limit");
    let inside = limit.admissible(true);
    assert_eq!(limit, Limit::Strict(1.0 / 192.0), "the printed limit is the condition's own");
    assert!(inside < 1.0 / 192.0 && !limit.is_exact() && strict.checks(&[2.0, 3.0, inside, 0.5, 1.0])[0].holds);
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

mod defined_claims {
    use crate::card::ClaimCard;
    use crate::claim::{BoundClaim, ConditionCheck, Declaration, Horizon, Reading};
    use crate::family::{ClaimKind, ClaimSummary, Given};
    use crate::formula::user::{compile_card_claims, defined_conditions, AnyClaim, FormulaClaim, ReadCard, UserClaim, UserClaimRules};
    use crate::formula::CompareSpec;

    use super::SYMBOLS;

    /// Inputs: the symbols' values, `L` first.
    #[derive(Clone, Copy)]
    struct X([f64; 5]);
    impl Horizon for X {
        fn horizon(&self) -> usize {
            1
        }
        fn at_horizon(&self, _: usize) -> Self {
            *self
        }
    }

    const DECLARED: Declaration = Declaration { id: "BUILT", title: "built in", source: "L1", reading: Reading::primary("as printed"), metric: "m" };

    /// A built-in claim: `1/L`, declared once.
    struct Built;
    impl BoundClaim for Built {
        type Inputs = X;
        fn id(&self) -> &'static str {
            DECLARED.id
        }
        fn title(&self) -> &'static str {
            DECLARED.title
        }
        fn source(&self) -> &'static str {
            DECLARED.source
        }
        fn reading(&self) -> Reading {
            DECLARED.reading
        }
        fn every_prefix(&self) -> bool {
            true
        }
        fn checks(&self, _: &X) -> Vec<ConditionCheck> {
            Vec::new()
        }
        fn bound(&self, x: &X) -> f64 {
            1.0 / x.0[0]
        }
    }

    const RULES: UserClaimRules = UserClaimRules { symbols: &SYMBOLS, metrics: &["m"], algorithms: &[], comparisons: &[CompareSpec::PerRound] };

    fn card(id: &str, bound: &str) -> ClaimCard {
        let text = format!(
            "id = \"{id}\"\ntitle = \"t\"\nstatement = \"s {id}\"\nsource = \"card\"\nassumptions = []\nconditions = []\nmetric = \"m\"\nreading = \"r\"\n\
             [formula]\nmetric = \"m\"\ncompare = \"per-round\"\nbound = \"{bound}\"\nconditions = [\"gamma <= 1/L\"]\n"
        );
        crate::card::parse_toml(&text, "test card").unwrap()
    }

    fn read(entries: &[ClaimCard]) -> ReadCard<Vec<ClaimCard>, FormulaClaim<X>> {
        let defined = compile_card_claims(entries, &["BUILT"], &[], &SYMBOLS, |e| {
            Ok(FormulaClaim { claim: UserClaim::compile(e, &RULES)?, values: |x: &X| x.0.to_vec() })
        })
        .unwrap();
        ReadCard { card: entries.to_vec(), defined }
    }

    #[test]
    fn built_in_and_card_claims_answer_alike_and_card_reading_is_pure() {
        let entries = [card("BUILT", "1/L"), card("TWO-L", "2*L")];
        let (first, second) = (read(&entries), read(&entries));
        assert_eq!(first.len(), 2, "the card derefs to the entries as written");
        let claims: Vec<AnyClaim<Built, X>> = std::iter::once(AnyClaim::Builtin(Built)).chain(first.defined.iter().cloned().map(AnyClaim::Card)).collect();
        let x = X([2.0, 1.0, 0.25, 0.5, 0.0]);
        let ids: Vec<&str> = claims.iter().map(|c| c.id()).collect();
        assert_eq!(ids, ["BUILT", "TWO-L"]);
        assert_eq!(claims.iter().map(|c| c.bound().bound(&x)).collect::<Vec<_>>(), [0.5, 4.0]);
        assert_eq!(second.defined.iter().map(|c| c.bound(&x)).collect::<Vec<_>>(), [4.0], "read twice, the same claims");
        assert!(claims[1].reads("L", |_| false) && !claims[1].reads("q", |_| true));
        assert!(claims[0].reads("q", |_| true), "a built-in claim answers through its family");
        let built = claims[0].summary(ClaimKind::Bound, "stated".into(), DECLARED.metric, "card metric");
        let declared = ClaimSummary::declared(&DECLARED, ClaimKind::Bound, "stated".into());
        assert_eq!((built.id, built.title, built.metric, built.statement.as_str()), (declared.id, declared.title, declared.metric, "stated"));
        let defined = claims[1].summary(ClaimKind::Bound, "ignored".into(), "m", "card metric");
        // Negative control: a card-defined claim keeps its own statement and the card metric.
        assert_eq!((defined.statement.as_str(), defined.metric), ("s TWO-L", "card metric"));
    }

    #[test]
    fn card_claim_ids_must_be_safe_file_names_and_not_built_in_ones_redefined() {
        let compile = |entries: &[ClaimCard], embedded: &[&str]| {
            compile_card_claims(entries, &["BUILT"], embedded, &SYMBOLS, |e| {
                Ok(FormulaClaim { claim: UserClaim::compile(e, &RULES)?, values: |x: &X| x.0.to_vec() })
            })
        };
        for bad in ["../../ESCAPED", "", ".hidden", "a/b", "a b", "x:y", "CARD\u{e9}"] {
            let err = compile(&[card("TWO-L", "2*L"), card(bad, "2*L")], &[]).err().expect(bad);
            let message = err.to_string();
            assert!(err.is_bad_input() && message.contains("claims[1].id") && message.contains("ASCII letters"), "{bad}: {message}");
        }
        // A built-in id whose entry is not the built-in claim's (another formula) is refused.
        let builtin = "[[claims]]\nid = \"BUILT\"\ntitle = \"t\"\nstatement = \"s BUILT\"\nsource = \"card\"\nassumptions = []\nconditions = []\n\
                       metric = \"m\"\nreading = \"r\"\n[claims.formula]\nmetric = \"m\"\ncompare = \"per-round\"\nbound = \"1/L\"\nconditions = [\"gamma <= 1/L\"]\n";
        let message = compile(&[card("TWO-L", "2*L"), card("BUILT", "2*L")], &[builtin]).err().expect("redefined").to_string();
        assert!(message.contains("claims[1].id") && message.contains("`BUILT` is a built-in claim's id"), "{message}");
        let message = compile(&[card("TWO-L", "2*L"), card("TWO-L", "3*L")], &[builtin]).err().expect("twice").to_string();
        assert!(message.contains("claims[1].id") && message.contains("appears twice"), "{message}");
        // Negative controls: the built-in claim's own entry, and ids with every allowed character.
        assert_eq!(compile(&[card("BUILT", "1/L"), card("A-b_1.2~c", "2*L")], &[builtin]).unwrap().len(), 1);
    }

    #[test]
    fn a_condition_that_cannot_be_evaluated_fails_unless_an_assumption_reports_it() {
        let mut with_b2 = card("B2", "2*L");
        with_b2.formula.as_mut().unwrap().conditions = vec!["gamma <= 1/(L + b2)".into()];
        let read = read(&[card("TWO-L", "2*L"), with_b2]);
        let (two_l, b2) = (&read.defined[0].claim, &read.defined[1].claim);
        // `gamma` has no value here and no assumption to report it: the condition fails as
        // unevaluated, binding (it was left out, and the claim compared as if it held).
        let checks = two_l.checks(&[2.0, 1.0, f64::NAN, 0.5, 1.0]);
        assert_eq!(checks.len(), 1);
        assert!(checks[0].is_unevaluated() && !checks[0].holds && checks[0].is_binding(), "{checks:?}");
        assert!(checks[0].to_string().contains("cannot be evaluated"), "{}", checks[0]);
        // `b2` without a value: its assumption fails (reported there), the condition is left out.
        let values = [2.0, 1.0, 0.25, 0.5, f64::NAN];
        let checks = b2.checks(&values);
        assert!(checks.iter().all(|k| k.kind == crate::claim::ConditionKind::Assumption && !k.holds) && !checks.is_empty(), "{checks:?}");
        // Controls: every value defined, each condition is evaluated and holds.
        assert!(two_l.checks(&[2.0, 1.0, 0.25, 0.5, 1.0]).iter().all(|k| k.holds && !k.is_unevaluated()));
        assert!(b2.checks(&[2.0, 1.0, 0.25, 0.5, 1.0]).iter().all(|k| k.holds && !k.is_unevaluated()));
    }

    #[test]
    fn a_formula_list_longer_than_its_limit_is_refused_naming_it() {
        use crate::formula::parse::MAX_LIST_LEN;
        let compile = |c: &ClaimCard| UserClaim::compile(c, &RULES).map(|_| ());
        let mut long = card("LONG", "2*L");
        long.formula.as_mut().unwrap().lets = (0..=MAX_LIST_LEN).map(|i| format!("a{i} = L")).collect();
        let message = compile(&long).unwrap_err().to_string();
        assert!(message.contains("claims[LONG].formula.let") && message.contains("101 entries") && message.contains("at most 100"), "{message}");
        // Control: at the limit it compiles.
        long.formula.as_mut().unwrap().lets.pop();
        assert!(compile(&long).is_ok());
    }

    #[test]
    fn conditions_of_card_claims_only_for_those_chosen() {
        let read = read(&[card("TWO-L", "2*L")]);
        let given: Given = [("L".to_string(), 2.0), ("gamma".to_string(), 0.25)].into_iter().collect();
        let text = defined_conditions(&read.defined, &[], &SYMBOLS, &given, false).unwrap().unwrap();
        assert!(text.contains("TWO-L: applicable") && text.contains("bound = 4"), "{text}");
        let violated: Given = [("L".to_string(), 2.0), ("gamma".to_string(), 1.0)].into_iter().collect();
        assert!(defined_conditions(&read.defined, &["TWO-L".into()], &SYMBOLS, &violated, false).unwrap().unwrap().contains("NOT applicable"));
        // Negative control: naming only other claims chooses none.
        assert!(defined_conditions(&read.defined, &["OTHER".into()], &SYMBOLS, &given, false).is_none());
        // A condition that reads a value not given is not checked, so the claim is undecided, never
        // applicable, and no bound is printed; given every value it reads (control above), it is.
        for partial in [Given::new(), [("L".to_string(), 2.0)].into_iter().collect()] {
            let text = defined_conditions(&read.defined, &[], &SYMBOLS, &partial, false).unwrap().unwrap();
            assert!(text.contains("TWO-L: undecided") && text.contains("[??] gamma <= 1/L: not checked") && !text.contains("bound ="), "{text}");
            let json: serde_json::Value = serde_json::from_str(&defined_conditions(&read.defined, &[], &SYMBOLS, &partial, true).unwrap().unwrap()).unwrap();
            assert!(json[0]["applicable"].is_null() && json[0]["undecided"][0] == "gamma <= 1/L", "{json}");
        }
        // A failed condition decides even when another value is missing: not applicable.
        let failed: Given = [("L".to_string(), 2.0), ("gamma".to_string(), 1.0)].into_iter().collect();
        let json: serde_json::Value = serde_json::from_str(&defined_conditions(&read.defined, &[], &SYMBOLS, &failed, true).unwrap().unwrap()).unwrap();
        assert_eq!(json[0]["applicable"], false);
    }
}
