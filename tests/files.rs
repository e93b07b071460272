//! The files the tests walk: sorted, recursive listings of the repository's folders.

use std::path::{Path, PathBuf};

/// Every file under `dir` whose name ends in `.ext`, in sorted path order.
pub fn with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(dir, ext, &mut out);
    out
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// Every scenario file under `dir` (sweep files left out: their scenarios are bundled).
pub fn scenarios(dir: &str) -> Vec<PathBuf> {
    with_ext(Path::new(dir), "yaml")
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            !text.lines().any(|l| l.trim() == "kind: Sweep")
        })
        .collect()
}
