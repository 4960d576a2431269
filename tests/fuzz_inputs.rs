//! Fuzzing of every input parser: scenario files (each family, routed by `family = ...`), sweep
//! files, and claim cards. Each input is a structured mutation of a valid document (a key
//! deleted, a value of the wrong type, NaN, infinities, negative, zero, huge or tiny numbers, an
//! unknown key, a duplicated line, the text truncated or overwritten with random bytes) or random
//! bytes alone. Every input must either parse or fail with a bad-input error whose message names
//! what is wrong (an I/O error naming the path, for a mutated file reference); a panic fails the
//! test and proptest prints the seed that replays it.
//!
//! `FEDBOUNDS_FUZZ_CASES` sets the inputs per target (default 600, cards a fifth of it, instances
//! a quarter: seconds in all), `FEDBOUNDS_FUZZ_SEED` other inputs than the fixed default ones;
//! README ("Sweeps") records the soak run of 100000 inputs.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fedbounds::families::registry;
use fedbounds::sweep::{Plan, Sweep};
use fedbounds::Error;

fn cases() -> u32 {
    std::env::var("FEDBOUNDS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(600)
}

/// A runner of `n` cases: the same inputs on every run (so the test's time is too), unless
/// `FEDBOUNDS_FUZZ_SEED` asks for other ones.
fn runner(n: u32) -> TestRunner {
    let config = Config { cases: n.max(1), failure_persistence: None, ..Config::default() };
    match std::env::var("FEDBOUNDS_FUZZ_SEED").ok().and_then(|v| v.parse::<u64>().ok()) {
        Some(seed) => {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&seed.to_le_bytes());
            TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
        }
        None => TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha)),
    }
}

fn root(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root(path)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Every path to a value of the tree.
fn paths(v: &toml::Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                at.push(Seg::Key(k.clone()));
                out.push(at.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        toml::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(Seg::Index(i));
                out.push(at.clone());
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn get<'a>(v: &'a toml::Value, path: &[Seg]) -> Option<&'a toml::Value> {
    let mut at = v;
    for s in path {
        at = match (s, at) {
            (Seg::Key(k), toml::Value::Table(t)) => t.get(k)?,
            (Seg::Index(i), toml::Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(at)
}

fn get_mut<'a>(v: &'a mut toml::Value, path: &[Seg]) -> Option<&'a mut toml::Value> {
    let mut at = v;
    for s in path {
        at = match (s, at) {
            (Seg::Key(k), toml::Value::Table(t)) => t.get_mut(k)?,
            (Seg::Index(i), toml::Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(at)
}

fn delete(v: &mut toml::Value, path: &[Seg]) {
    let Some((last, parent)) = path.split_last() else { return };
    match (last, get_mut(v, parent)) {
        (Seg::Key(k), Some(toml::Value::Table(t))) => {
            t.remove(k);
        }
        (Seg::Index(i), Some(toml::Value::Array(a))) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

/// Numbers that break ranges: NaN, infinities, signs, zero, extremes, non-integers.
fn special_number(rng: &mut ChaCha8Rng) -> toml::Value {
    let floats = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 0.0, -0.0, 1e308, -1e308, 1e-320, 0.5, 1e6, 1e12, 2f64.powi(64), 3.7];
    let ints = [0i64, -1, 1, 2, i64::MAX, i64::MIN, 1 << 20, 1 << 32, 1 << 40, 1_000_000, 65_536, 100_000_000];
    if rng.gen_bool(0.5) {
        toml::Value::Float(floats[rng.gen_range(0..floats.len())])
    } else {
        toml::Value::Integer(ints[rng.gen_range(0..ints.len())])
    }
}

/// A value of some other type.
fn wrong_type(rng: &mut ChaCha8Rng) -> toml::Value {
    match rng.gen_range(0..7) {
        0 => toml::Value::String(["", "x", "ring", "exact", "nan", "../../etc/passwd", "\u{1F600}"][rng.gen_range(0..7)].into()),
        1 => toml::Value::Boolean(rng.gen()),
        2 => toml::Value::Array(vec![]),
        3 => toml::Value::Array((0..rng.gen_range(1..5)).map(|_| special_number(rng)).collect()),
        4 => toml::Value::Table(toml::Table::new()),
        5 => {
            let mut t = toml::Table::new();
            t.insert("kind".into(), toml::Value::String("zzz".into()));
            toml::Value::Table(t)
        }
        _ => special_number(rng),
    }
}

fn random_text(rng: &mut ChaCha8Rng) -> String {
    let n = rng.gen_range(0..300);
    if rng.gen_bool(0.5) {
        let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789 =[]{}\"'.,-_#\n\t+eE";
        (0..n).map(|_| alphabet[rng.gen_range(0..alphabet.len())] as char).collect()
    } else {
        let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// One structured mutation of `base` (a valid document), chosen by `rng`.
fn mutate(base: &str, rng: &mut ChaCha8Rng) -> String {
    let mut doc: toml::Value = toml::Value::Table(toml::from_str(base).unwrap());
    let mut all = Vec::new();
    paths(&doc, &mut Vec::new(), &mut all);
    let op = rng.gen_range(0..10);
    let rounds = if op >= 8 { rng.gen_range(2..4) } else { 1 };
    for _ in 0..rounds {
        let path = all[rng.gen_range(0..all.len())].clone();
        match rng.gen_range(0..5) {
            0 => delete(&mut doc, &path),
            1 => {
                if let Some(v) = get_mut(&mut doc, &path) {
                    *v = wrong_type(rng);
                }
            }
            2 => {
                // A number where there is one, else anywhere.
                let numeric: Vec<&Vec<Seg>> = all.iter().filter(|p| matches!(get(&doc, p), Some(toml::Value::Integer(_) | toml::Value::Float(_)))).collect();
                let p = if numeric.is_empty() { path } else { numeric[rng.gen_range(0..numeric.len())].clone() };
                if let Some(v) = get_mut(&mut doc, &p) {
                    *v = special_number(rng);
                }
            }
            3 => {
                let parent = &path[..path.len() - 1];
                if let Some(toml::Value::Table(t)) = get_mut(&mut doc, parent) {
                    t.insert("unknown_key".into(), wrong_type(rng));
                }
            }
            _ => {
                if let Some(toml::Value::Array(a)) = get_mut(&mut doc, &path) {
                    if let Some(first) = a.first().cloned() {
                        a.extend(std::iter::repeat_n(first, rng.gen_range(1..4)));
                    }
                }
            }
        }
    }
    let text = toml::to_string(&doc).unwrap_or_default();
    match op {
        5 => {
            // Truncated at a character boundary.
            let cut = rng.gen_range(0..=text.len());
            let cut = (0..=cut).rev().find(|c| text.is_char_boundary(*c)).unwrap_or(0);
            text[..cut].to_string()
        }
        6 => {
            // A stretch overwritten with random bytes.
            let start = rng.gen_range(0..=text.len());
            let start = (0..=start).rev().find(|c| text.is_char_boundary(*c)).unwrap_or(0);
            let mut bytes = text.into_bytes();
            for b in bytes.iter_mut().skip(start).take(rng.gen_range(1..16)) {
                *b = rng.gen();
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        7 => {
            // A line repeated (duplicate keys).
            let lines: Vec<&str> = base.lines().collect();
            let k = rng.gen_range(0..lines.len().max(1));
            let mut out: Vec<&str> = lines.clone();
            if let Some(l) = lines.get(k) {
                out.insert(k, l);
            }
            out.join("\n")
        }
        9 if rng.gen_bool(0.3) => random_text(rng),
        _ => text,
    }
}

// ---------------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------------

/// An error is acceptable when it is the user's input, or an I/O error naming a file, and its
/// message says something.
fn clear(e: &Error) -> bool {
    let msg = e.to_string();
    !msg.trim().is_empty()
        && (e.is_bad_input() || matches!(e, Error::Io { .. }) || matches!(e, Error::InScenario { source, .. } if matches!(**source, Error::Io { .. })))
}

/// Runs `target` on `cases()` mutations of `bases`; returns how many inputs it tried.
fn fuzz(name: &str, bases: &[String], target: impl Fn(&str) -> Result<(), Error>) -> usize {
    fuzz_n(name, bases, target, cases())
}

/// Runs `target` on `n` mutations of `bases`.
fn fuzz_n(name: &str, bases: &[String], target: impl Fn(&str) -> Result<(), Error>, n: u32) -> usize {
    let tried = AtomicUsize::new(0);
    let start = std::time::Instant::now();
    let mut runner = runner(n);
    let result = runner.run(&(0..bases.len(), any::<u64>()), |(b, seed)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let input = mutate(&bases[b], &mut rng);
        tried.fetch_add(1, Ordering::Relaxed);
        match target(&input) {
            Ok(()) => Ok(()),
            Err(e) if clear(&e) => Ok(()),
            Err(e) => Err(TestCaseError::fail(format!("unclear error {e:?} for input:\n{input}"))),
        }
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    let n = tried.load(Ordering::Relaxed);
    eprintln!("fuzz {name}: {n} inputs in {:.2} s, no panic, every error clear", start.elapsed().as_secs_f64());
    n
}

/// Every scenario of every card of the four families, as a file of its own naming its family.
fn scenario_bases() -> Vec<String> {
    let mut out = vec![read("examples/explicit.toml")];
    for (card, family) in [
        ("theorems/ccyw-fedavg-p.toml", "ccyw"),
        ("theorems/ccyw-scaffold-p.toml", "ccyw"),
        ("theorems/fedplt.toml", "fedplt"),
        ("theorems/dpgp.toml", "dpgp"),
        ("theorems/clup.toml", "clup"),
    ] {
        let t: toml::Table = toml::from_str(&read(card)).unwrap();
        for s in t["scenarios"].as_array().unwrap() {
            let mut s = s.as_table().unwrap().clone();
            s.insert("family".into(), toml::Value::String(family.into()));
            out.push(toml::to_string(&s).unwrap());
        }
    }
    out
}

/// A scenario file as `run` reads it: routed to its family, then parsed and validated.
fn parse_scenario(text: &str) -> Result<(), Error> {
    let family = registry().family_of(text, "fuzzed scenario")?;
    match family.id() {
        "ccyw" => fedbounds::families::ccyw::card::parse_scenario(text, "fuzzed scenario").map(drop),
        "fedplt" => {
            let s: fedbounds::families::fedplt::check::Scenario = toml::from_str(text).map_err(|e| Error::parse("fuzzed scenario", e.to_string()))?;
            s.check("scenario", &fedbounds::families::fedplt::formulas::builtin_ids())
        }
        "dpgp" => fedbounds::families::dpgp::card::parse_scenario(text, "fuzzed scenario").map(drop),
        "clup" => {
            let s: fedbounds::families::clup::check::Scenario = toml::from_str(text).map_err(|e| Error::parse("fuzzed scenario", e.to_string()))?;
            s.check("scenario")
        }
        _ => Ok(()),
    }
}

fn sweep_bases() -> Vec<String> {
    let example =
        read("examples/sweep.toml").replace("card = \"../theorems/ccyw-fedavg-p.toml\"", &format!("card = \"{}\"", root("theorems/ccyw-fedavg-p.toml")));
    let random = format!(
        "name = \"fp\"\ncard = \"{}\"\nbase = \"full-masks-shared-optimum\"\nunset = [\"expected\", \"expected_empirical\"]\ndesign = \"random\"\nsamples = 30\nseed = 3\n[[axes]]\nkey = \"step.constant_over_l\"\nrange = [0.05, 0.9]\nscale = \"log\"\n[[axes]]\nkey = \"instance.clients\"\nrange = [2, 6]\ninteger = true\n",
        root("theorems/fedplt.toml")
    );
    let inline = format!(
        "name = \"dp\"\ncard = \"{}\"\nclaims = [\"DPGP-L3\"]\n[base]\nname = \"x\"\ntopology = {{ kind = \"ring\" }}\nheterogeneity = 0.5\ncoupling = 0.0\nm = 6\ndu = 2\ndv = 2\nl_u = 2.0\nmu_u = 1.0\nl_v = 2.0\nmu_v = 1.0\nsigma_u = 0.5\nsigma_v = 0.5\nv0_norm = 1.0\nseed = 7\nk_u = 2\nk_v = 2\nc_u = 0.4\nc_v = 1.0\nrounds = 200\nsweep = [100, 200]\n[[axes]]\nkey = \"topology\"\nvalues = [{{ kind = \"ring\" }}, {{ kind = \"complete\" }}]\n[[axes]]\nkey = \"m\"\nrange = [2, 8]\npoints = 4\ninteger = true\n",
        root("theorems/dpgp.toml")
    );
    let clup = read("examples/sweep-clup.toml").replace("card = \"../theorems/clup.toml\"", &format!("card = \"{}\"", root("theorems/clup.toml")));
    vec![example, random, inline, clup]
}

/// A sweep file: parsed, resolved against its card, its first and last scenarios made.
fn parse_sweep(text: &str, cards: &[(String, String)]) -> Result<(), Error> {
    let sweep = Sweep::parse(text, "fuzzed sweep")?;
    let card_text = cards.iter().find(|(p, _)| *p == sweep.card).map(|(_, t)| t.clone()).unwrap_or_else(|| "not a card [".to_string());
    let plan = Plan::new(sweep, &card_text, "card", &registry())?;
    for j in [0, plan.len / 2, plan.len.saturating_sub(1)] {
        if j < plan.len {
            plan.point(j)?;
        }
    }
    Ok(())
}

fn parse_card(text: &str) -> Result<(), Error> {
    let family = registry().family_of(text, "fuzzed card")?;
    match family.id() {
        "ccyw" => fedbounds::families::ccyw::card::parse_card(text, "fuzzed card").map(drop),
        "fedplt" => fedbounds::families::fedplt::family::parse_card(text, "fuzzed card").map(drop),
        "dpgp" => fedbounds::families::dpgp::card::parse_card(text, "fuzzed card").map(drop),
        "clup" => fedbounds::families::clup::family::parse_card(text, "fuzzed card").map(drop),
        _ => Ok(()),
    }
}

#[test]
fn fuzzed_scenario_files_parse_or_fail_clearly() {
    let bases = scenario_bases();
    for b in &bases {
        parse_scenario(b).unwrap_or_else(|e| panic!("base scenario rejected: {e}\n{b}"));
    }
    assert!(fuzz("scenarios", &bases, parse_scenario) >= cases() as usize);
}

#[test]
fn fuzzed_sweep_files_parse_or_fail_clearly() {
    let bases = sweep_bases();
    let cards: Vec<(String, String)> =
        ["theorems/ccyw-fedavg-p.toml", "theorems/fedplt.toml", "theorems/dpgp.toml", "theorems/clup.toml"].iter().map(|c| (root(c), read(c))).collect();
    for b in &bases {
        parse_sweep(b, &cards).unwrap_or_else(|e| panic!("base sweep rejected: {e}\n{b}"));
    }
    assert!(fuzz("sweeps", &bases, |t| parse_sweep(t, &cards)) >= cases() as usize);
}

#[test]
fn fuzzed_claim_cards_parse_or_fail_clearly() {
    let bases: Vec<String> =
        ["theorems/ccyw-fedavg-p.toml", "theorems/ccyw-scaffold-p.toml", "theorems/fedplt.toml", "theorems/dpgp.toml", "theorems/clup.toml"]
            .iter()
            .map(|c| read(c))
            .collect();
    for b in &bases {
        parse_card(b).unwrap();
    }
    // A card is long (every claim's text, every scenario): a fifth of the inputs of the others.
    let n = fuzz_n("cards", &bases, parse_card, (cases() / 5).max(1));
    assert!(n >= (cases() / 5) as usize);
}

#[test]
fn fuzzed_scenarios_build_their_instances_or_fail_clearly() {
    // Beyond parsing: the instance and its exact constants, for mutations of numbers only
    // (fewer inputs: each builds an instance).
    let bases = scenario_bases();
    let reg = registry();
    let target = |text: &str| -> Result<(), Error> {
        let family = reg.family_of(text, "fuzzed scenario")?;
        parse_scenario(text)?;
        family.scenario_constants(text, "fuzzed scenario").map(drop)
    };
    let n = cases() / 4;
    let tried = AtomicUsize::new(0);
    let mut runner = runner(n);
    runner
        .run(&(0..bases.len(), any::<u64>()), |(b, seed)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut doc: toml::Value = toml::Value::Table(toml::from_str(&bases[b]).unwrap());
            let mut all = Vec::new();
            paths(&doc, &mut Vec::new(), &mut all);
            let numeric: Vec<Vec<Seg>> =
                all.into_iter().filter(|p| matches!(get_mut(&mut doc.clone(), p), Some(toml::Value::Integer(_) | toml::Value::Float(_)))).collect();
            let p = &numeric[rng.gen_range(0..numeric.len())];
            if let Some(v) = get_mut(&mut doc, p) {
                *v = special_number(&mut rng);
            }
            let input = toml::to_string(&doc).unwrap();
            tried.fetch_add(1, Ordering::Relaxed);
            match target(&input) {
                Ok(()) => Ok(()),
                Err(e) if clear(&e) => Ok(()),
                Err(e) => Err(TestCaseError::fail(format!("unclear error {e:?} for input:\n{input}"))),
            }
        })
        .unwrap_or_else(|e| panic!("instances: {e}"));
    eprintln!("fuzz instances: {} inputs", tried.load(Ordering::Relaxed));
}

/// Inputs the fuzzing found that once crashed, kept as they were found.
#[test]
fn crash_reproducers_fail_as_bad_input() {
    // A million clients with personal dimension 2: the joint Hessian over (u, v_1, ..., v_n)
    // (2e6 x 2e6, 3.2e13 bytes) was allocated and the process aborted. The minimizer behind F0 no
    // longer forms it (each v_i is eliminated, O(n) memory), so the run is what cannot fit: it is
    // refused before any allocation, naming the fields; and the constants of a billion clients
    // (their matrices alone 1.2 TB) are refused naming instance.n.
    let text = read("theorems/ccyw-fedavg-p.toml");
    let card: toml::Table = toml::from_str(&text).unwrap();
    let with_clients = |n: i64| {
        let mut s = card["scenarios"].as_array().unwrap()[0].as_table().unwrap().clone();
        s["instance"]["generated"].as_table_mut().unwrap().insert("n".into(), toml::Value::Integer(n));
        toml::to_string(&s).unwrap()
    };
    let reg = registry();
    let input = with_clients(1_000_000);
    let family = reg.family_of(&input, "reproducer").unwrap();
    let err = family.run(&input, "reproducer", &Default::default()).unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("instance.n") && err.to_string().contains("GiB"), "{err}");
    let err = family.scenario_constants(&with_clients(1_000_000_000), "reproducer").unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("instance.n") && err.to_string().contains("the clients' matrices"), "{err}");

    // An explicit instance declaring dv = 2^32 with short vectors: the state vector of
    // du + n dv entries was allocated before the lengths were compared, and the process aborted.
    let mut explicit: toml::Table = toml::from_str(&read("examples/explicit.toml")).unwrap();
    explicit["instance"]["explicit"].as_table_mut().unwrap().insert("dv".into(), toml::Value::Integer(1 << 32));
    let input = toml::to_string(&explicit).unwrap();
    let err = family.scenario_constants(&input, "reproducer").unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("v0"), "{err}");
}
