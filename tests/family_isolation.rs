//! A family is a plug-in: outside its own folder `src/families/<id>/`, the source names it only
//! in the registry (`src/families/mod.rs`: `pub mod <id>;` and `&<id>::FAMILY`), so a new family
//! touches its folder, its card, its tests and those two lines. Comments may name a family (as an
//! example); code, messages and flags may not.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether `line` names `id` as a word (`dpgp`, `dpgp::`, `"dpgp"`), not inside a longer name.
fn names(line: &str, id: &str) -> bool {
    line.match_indices(id).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + id.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

/// Each line of code (not a comment) outside the family's folder that names a family, except
/// the registry's two lines per family.
fn offenders(files: &[(String, String)], ids: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for id in ids {
                let own = path.contains(&format!("src/families/{id}/"));
                let registry = path.ends_with("src/families/mod.rs") && (code == format!("pub mod {id};") || code.contains(&format!("&{id}::FAMILY")));
                if !own && !registry && names(code, id) {
                    out.push(format!("{path}:{}: {}", n + 1, code));
                }
            }
        }
    }
    out
}

#[test]
fn outside_its_folder_a_family_is_named_only_by_the_registry() {
    let registry = fedbounds::families::registry();
    let ids: Vec<&str> = registry.families().iter().map(|f| f.id()).collect();
    assert!(ids.len() >= 4, "every family is registered: {ids:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    rust_files(&root.join("src"), &mut paths);
    paths.sort();
    let files: Vec<(String, String)> =
        paths.iter().map(|p| (p.strip_prefix(root).unwrap_or(p).display().to_string(), std::fs::read_to_string(p).expect("a source file"))).collect();
    assert!(files.len() > 50, "the whole source tree is read ({} files)", files.len());
    let found = offenders(&files, &ids);
    assert!(found.is_empty(), "code outside a family's folder names it:\n{}", found.join("\n"));
}

/// Negative controls: core code naming a family, one family reaching into another, and a message
/// naming one are caught; comments, the registry's lines and longer names are not.
#[test]
fn the_rule_catches_core_code_and_other_families_that_name_one() {
    let file = |p: &str, t: &str| (p.to_string(), t.to_string());
    let files = [
        file("src/main.rs", "let b = fedbounds::families::ccyw::search::DEFAULT_BUDGET;\n// ccyw in a comment\n"),
        file("src/families/clup/x.rs", "use crate::families::dpgp::graph;\nlet ccyw_like = 1;\n"),
        file("src/checker.rs", "Err(field(\"--x\", \"only (dpgp)\"))\n"),
        file("src/families/mod.rs", "pub mod ccyw;\npub mod dpgp;\nvec![&ccyw::FAMILY, &dpgp::FAMILY]\n"),
        file("src/families/dpgp/family.rs", "pub static FAMILY: Plugged<Dpgp> = ...; // dpgp\nlet id = \"dpgp\";\n"),
    ];
    let found = offenders(&files, &["ccyw", "dpgp"]);
    assert_eq!(
        found,
        [
            "src/main.rs:1: let b = fedbounds::families::ccyw::search::DEFAULT_BUDGET;",
            "src/families/clup/x.rs:1: use crate::families::dpgp::graph;",
            "src/checker.rs:1: Err(field(\"--x\", \"only (dpgp)\"))",
        ]
    );
}
