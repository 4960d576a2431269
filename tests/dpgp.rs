//! DFedPGP: verdicts through the registry, negative controls, and the engine against sampling.

use fedbounds::family::{CheckRequest, Registry, Silent};

fn registry() -> Registry {
    Registry::new(vec![&fedbounds::families::dpgp::FAMILY]).unwrap()
}

#[test]
fn explore() {
    let t0 = std::time::Instant::now();
    let outcome = registry().check(&CheckRequest::default(), &Silent).unwrap();
    for r in outcome.rows() {
        println!(
            "{:<24} {:<14} {:<14} slack {:?} | {}",
            r.claim,
            r.scenario,
            r.evaluation.verdict.to_string(),
            r.evaluation.slack,
            fedbounds::report::describe(&r.evaluation)
        );
    }
    for (_, f) in &outcome.families {
        println!("{}", f.terminal);
    }
    println!("elapsed {:?}", t0.elapsed());
}
