//! The smallest family ([`family`], with its card `gd.toml`) driven by the core it has never
//! seen: verdicts, negative controls, routing, and its card's entries.

mod family;

use nalgebra::DMatrix;

use fedbounds::family::{CheckRequest, RunOptions, Silent};
use fedbounds::registry::Registry;
use fedbounds::verdict::VerdictKind;

use family::{exact_curve, Problem, GD};

#[test]
fn the_engine_gives_the_exact_curve() {
    let p = Problem::new(1.0);
    let (x_star, step) = (p.x_star.clone(), DMatrix::identity(3, 3) - &p.h * p.gamma);
    let mut e = &p.x0 - &x_star;
    for (t, got) in exact_curve(&p, 40).into_iter().enumerate() {
        let want = e.norm_squared();
        // The observable is tr(P) - 2 x*^T mu + ||x*||^2 from the second moment: exact up to
        // the rounding of those terms, whose size is ||x_t||^2 + ||x*||^2.
        let scale = (&e + &x_star).norm_squared() + x_star.norm_squared();
        assert!((got - want).abs() <= 1e-13 * scale, "t = {t}: engine {got:e}, closed form {want:e}");
        e = &step * e;
    }
    // Negative control: a curve off by one step is told apart.
    let curve = exact_curve(&p, 3);
    assert!((curve[2] - (&step * (&p.x0 - &x_star)).norm_squared()).abs() > 1e-6);
}

#[test]
fn the_core_drives_a_family_it_has_never_seen() {
    let registry = Registry::new(vec![&GD]).unwrap();
    let outcome = registry.check(&CheckRequest::default(), &Silent).unwrap();
    let verdicts: Vec<(String, VerdictKind)> = outcome.rows().map(|r| (r.scenario.clone(), r.evaluation.verdict)).collect();
    assert_eq!(verdicts, vec![("at-the-condition".to_string(), VerdictKind::Holds), ("past-the-condition".to_string(), VerdictKind::NotApplicable)]);
    assert!(outcome.mismatches().is_empty(), "{:?}", outcome.mismatches());
    let slack = outcome.rows().next().unwrap().evaluation.slack.unwrap();
    assert!(slack >= 1.0 && slack.is_finite(), "slack {slack}");
    let failed = &outcome.rows().nth(1).unwrap().evaluation.failed;
    assert!(failed[0].contains("gamma <= 1/L"), "{failed:?}");
    // The shared summary names the family's rows.
    let files = outcome.files(&Default::default());
    let csv = String::from_utf8(files.iter().find(|f| f.path.ends_with("summary.csv")).unwrap().bytes.clone()).unwrap();
    assert!(csv.contains("GD-RATE,primary,at-the-condition,exact,holds,holds"), "{csv}");
}

#[test]
fn a_bound_shrunk_below_the_curve_is_violated() {
    // The rate is tight along the slowest eigendirection, so halving the bound must fail.
    let registry = Registry::new(vec![&GD]).unwrap();
    let request = CheckRequest { bound_scale: Some(0.5), scenarios: vec!["at-the-condition".into()], ..Default::default() };
    let outcome = registry.check(&request, &Silent).unwrap();
    let row = outcome.rows().next().unwrap();
    assert_eq!(row.evaluation.verdict, VerdictKind::Violated);
    assert_eq!(outcome.mismatches(), vec!["GD-RATE on at-the-condition".to_string()]);
}

#[test]
fn files_and_claims_route_to_their_family() {
    let registry = Registry::new(vec![&fedbounds::families::ccyw::FAMILY, &GD]).unwrap();
    assert_eq!(registry.family_of("family = \"gd\"\ngamma_times_l = 0.5", "f").unwrap().id(), "gd");
    assert_eq!(registry.family_of("name = \"old\"", "f").unwrap().id(), "ccyw", "files naming no family are the default's");
    let unknown = registry.family_of("family = \"nope\"", "f").err().unwrap();
    assert!(unknown.is_bad_input() && unknown.to_string().contains("ccyw, gd"), "{unknown}");
    assert_eq!(registry.family_of_claim("GD-RATE").unwrap().id(), "gd");
    assert!(registry.require_known_claims(&["NOPE".into()], None).is_err());
    // A check that asks only for this family's claim runs only this family.
    let outcome = registry.check(&CheckRequest { claims: vec!["GD-RATE".into()], ..Default::default() }, &Silent).unwrap();
    assert_eq!(outcome.families.len(), 1);
    assert_eq!(outcome.families[0].id, "gd");
    // The family runs no scenario files: the `run` command says so, as bad input.
    let err = registry.by_id("gd").unwrap().run("gamma_times_l = 1.0", "f", &RunOptions::default()).unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("`gd` has no `run` command"), "{err}");
    // Two families may not declare the same id.
    assert!(Registry::new(vec![&GD, &GD]).is_err());
}

#[test]
fn the_card_is_read_as_a_paper_card() {
    let registry = Registry::new(vec![&GD]).unwrap();
    let family = registry.by_id("gd").unwrap();
    // `explain` prints the card's own entry for the claim.
    let text = family.explain("GD-RATE").unwrap().expect("the card has an entry for GD-RATE");
    assert!(text.contains("gamma <= 1/L") && text.contains("||x_t - x*||^2 <= (1 - gamma mu)^(2t)"), "{text}");
    assert!(family.explain("NOPE").unwrap().is_none());
    // Negative control: an unknown key in the card is refused, naming it.
    let card = include_str!("gd.toml").replace("[[scenarios]]\nname = \"at-the-condition\"", "[[scenarios]]\nname = \"at-the-condition\"\nstep = 1.0");
    let request = CheckRequest { card: Some(fedbounds::family::CardText { what: "edited".into(), text: card }), ..Default::default() };
    let Err(err) = registry.check(&request, &Silent) else { panic!("an unknown key is refused") };
    assert!(err.is_bad_input() && err.to_string().contains("step"), "{err}");
}
