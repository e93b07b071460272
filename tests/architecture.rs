//! The architecture invariants the code map in `src/lib.rs` states, enforced on the source
//! tree: which module may name which, how large a file and a function may grow, and that
//! the repository's docs stand alone.

use std::path::Path;

fn files_under(dir: &str) -> Vec<(String, String)> {
    crate::files::with_ext(Path::new(dir), "rs")
        .into_iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// Source lines that are code (comments dropped), with their 1-based numbers.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

/// Every `(file, line, text)` under `dir` whose code names one of `needles`.
fn mentions(dir: &str, needles: &[&str]) -> Vec<String> {
    let mut hits = Vec::new();
    for (path, text) in files_under(dir) {
        for (n, l) in code_lines(&text) {
            if needles.iter().any(|k| l.contains(k)) {
                hits.push(format!("{path}:{n}: {}", l.trim()));
            }
        }
    }
    hits
}

#[test]
fn the_oracle_imports_only_model_and_sim() {
    let hits = mentions(
        "src/oracle",
        &[
            "crate::kubelet",
            "crate::world",
            "crate::run",
            "crate::scenario",
            "crate::cli",
        ],
    );
    assert!(
        hits.is_empty(),
        "the oracle names another room:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_world_names_neither_the_kubelet_nor_the_oracle() {
    let hits = mentions(
        "src/world",
        &[
            "crate::kubelet",
            "crate::oracle",
            "KEv",
            "Oracle",
            "crate::run",
        ],
    );
    assert!(
        hits.is_empty(),
        "the world names the kubelet or the oracle:\n{}",
        hits.join("\n")
    );
}

#[test]
fn bulk_modules_do_not_call_the_command_line() {
    let mut hits = Vec::new();
    for f in [
        "src/sweep.rs",
        "src/bisect.rs",
        "src/results.rs",
        "src/report.rs",
        "src/report_html.rs",
        "src/junit.rs",
        "src/progress.rs",
        "src/diff.rs",
    ] {
        if let Ok(text) = std::fs::read_to_string(f) {
            for (n, l) in code_lines(&text) {
                if l.contains("crate::cli") {
                    hits.push(format!("{f}:{n}: {}", l.trim()));
                }
            }
        }
    }
    hits.extend(mentions("src/plot", &["crate::cli"]));
    hits.extend(mentions("src/hunt", &["crate::cli"]));
    assert!(
        hits.is_empty(),
        "bulk code calls the CLI:\n{}",
        hits.join("\n")
    );
}

#[test]
fn scenario_validation_names_no_kubelet_or_oracle() {
    let hits = mentions(
        "src/scenario",
        &["crate::kubelet", "crate::oracle", "crate::world"],
    );
    assert!(
        hits.is_empty(),
        "scenario/ names another room:\n{}",
        hits.join("\n")
    );
}

#[test]
fn no_source_file_over_1000_lines() {
    let mut long = Vec::new();
    for (path, text) in files_under("src") {
        let n = text.lines().count();
        if n > 1000 {
            long.push(format!("{path}: {n} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "files over 1,000 lines:\n{}",
        long.join("\n")
    );
}

/// The functions of a rustfmt-formatted file, as (name, first line, length in lines): a
/// function runs from its `fn` line to the first line that closes it at its indentation.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = l.len() - t.len();
        let is_fn = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "const fn ",
            "pub const fn ",
        ]
        .iter()
        .any(|p| t.starts_with(p));
        if !is_fn || t.ends_with(';') {
            continue;
        }
        let name = t
            .split("fn ")
            .nth(1)
            .unwrap_or("")
            .split(['(', '<'])
            .next()
            .unwrap_or("");
        let close = format!("{}}}", " ".repeat(indent));
        if let Some(j) = lines[i..].iter().position(|x| *x == close) {
            out.push((name.to_string(), i + 1, j + 1));
        }
    }
    out
}

#[test]
fn no_function_over_150_lines() {
    let mut long = Vec::new();
    for (path, text) in files_under("src") {
        for (name, line, len) in functions(&text) {
            if len > 150 {
                long.push(format!("{path}:{line}: fn {name}: {len} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over 150 lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_measure_sees_a_long_function() {
    let body = "    let x = 1;\n".repeat(160);
    let text = format!("fn short() {{\n}}\n\npub fn long() {{\n{body}}}\n");
    let f = functions(&text);
    assert_eq!(f[0], ("short".to_string(), 1, 2));
    assert_eq!(f[1], ("long".to_string(), 4, 162));
}

#[test]
fn the_docs_stand_alone() {
    let outside = [
        "design.md",
        "kubelet-model.md",
        "race-catalog.md",
        "interface.md",
        "style-anchors.md",
        "ecosystem.md",
        "shared/",
    ];
    let mut hits = Vec::new();
    let mut texts = files_under("src");
    texts.extend(files_under("tests"));
    texts.extend(files_under("benches"));
    texts.push((
        "README.md".into(),
        std::fs::read_to_string("README.md").unwrap(),
    ));
    let mut yaml = crate::files::with_ext(Path::new("scenarios"), "yaml");
    yaml.extend(crate::files::with_ext(Path::new("benches"), "yaml"));
    for p in yaml {
        texts.push((
            p.display().to_string(),
            std::fs::read_to_string(&p).unwrap(),
        ));
    }
    for (path, text) in texts {
        if path.ends_with("architecture.rs") {
            continue;
        }
        for (n, l) in text.lines().enumerate() {
            if outside.iter().any(|k| l.contains(k)) {
                hits.push(format!("{path}:{}: {}", n + 1, l.trim()));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "pointers to documents outside the repository:\n{}",
        hits.join("\n")
    );
}
