//! The README's commands, run as a reader would run them, so an example cannot rot.
//!
//! Every command line of the README's `sh` blocks that starts with `podsim ` (or
//! `cargo run --release -- `, which is the same binary) is run by `sh` in a scratch
//! directory that holds the bundled scenarios and a copy of the test fixtures, with the
//! binary under test first on `PATH`. A command must exit 0, print no `error:` and never
//! panic. The quick start's printed summary must be what the binary prints today, line
//! for line (the README elides lines with `...`).

use crate::scratch::Scratch;
use std::path::Path;
use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string("README.md").unwrap()
}

/// The fenced blocks of a Markdown text with their info string: `(lang, body)`.
pub(crate) fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some((info.trim().to_string(), String::new()));
                }
            }
            Some((_, body)) => {
                if trimmed.starts_with("```") {
                    blocks.push(open.take().unwrap());
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "README.md: a fenced block is never closed");
    blocks
}

/// Joins `\` continuations and drops a trailing `# comment` (outside quotes).
fn logical_lines(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in body.lines() {
        let line = line.trim();
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(line);
        if let Some(stripped) = cur.strip_suffix('\\') {
            cur = stripped.trim_end().to_string();
            continue;
        }
        out.push(strip_comment(&cur).trim().to_string());
        cur.clear();
    }
    out
}

fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'#' if !single && !double && (i == 0 || bytes[i - 1] == b' ') => {
                return &line[..i];
            }
            _ => {}
        }
    }
    line
}

/// The podsim command lines of the README's `sh` blocks.
pub(crate) fn readme_commands(text: &str) -> Vec<String> {
    let mut cmds = Vec::new();
    for (lang, body) in fenced_blocks(text) {
        if lang != "sh" {
            continue;
        }
        for line in logical_lines(&body) {
            if let Some(rest) = line.strip_prefix("cargo run --release -- ") {
                cmds.push(format!("podsim {rest}"));
            } else if line.starts_with("podsim ") {
                cmds.push(line);
            }
        }
    }
    cmds
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A scratch directory laid out like the repository for the README's commands: the
/// scenarios (linked) and the fixtures (copied, since `plot` writes into its directory).
pub(crate) fn scratch(name: &str) -> Scratch {
    let repo = std::env::current_dir().unwrap();
    let dir = Scratch::new("readme", name);
    std::os::unix::fs::symlink(repo.join("scenarios"), dir.join("scenarios")).unwrap();
    std::os::unix::fs::symlink(repo.join("deploy"), dir.join("deploy")).unwrap();
    copy_dir(&repo.join("tests/fixtures"), &dir.join("tests/fixtures"));
    dir
}

/// Runs one shell command line in `dir` with the binary under test first on `PATH`.
pub(crate) fn sh(dir: &Path, cmd: &str) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("podsim");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env("PATH", path)
        .env("CI", "true")
        .output()
        .unwrap()
}

#[test]
fn the_readme_lists_its_commands() {
    let cmds = readme_commands(&readme());
    // The quick start's two set-up commands and the "other things to try" list at least.
    assert!(
        cmds.len() >= 10,
        "only {} commands found: {cmds:?}",
        cmds.len()
    );
    assert_eq!(cmds[0], "podsim run scenarios/quickstart.yaml");
}

#[test]
fn every_readme_command_runs() {
    let dir = scratch("all");
    let mut failed = Vec::new();
    for cmd in readme_commands(&readme()) {
        let out = sh(&dir, &cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() || stderr.contains("error:") || stderr.contains("panicked") {
            failed.push(format!(
                "{cmd}\n  exit {:?}\n  stderr: {}",
                out.status.code(),
                stderr
                    .lines()
                    .take(6)
                    .collect::<Vec<_>>()
                    .join("\n          ")
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "README commands that fail:\n{}",
        failed.join("\n")
    );
}

/// The quick start shows the summary the first command prints: every line it shows
/// (other than `...`) must be printed, in the same order.
#[test]
fn quickstart_output_is_what_podsim_prints() {
    let text = readme();
    let blocks = fenced_blocks(&text);
    let shown = blocks
        .iter()
        .find(|(lang, body)| lang.is_empty() && body.starts_with("podsim "))
        .map(|(_, body)| body.clone())
        .expect("the quick start's output block");
    let dir = scratch("quickstart");
    let out = sh(&dir, "podsim run scenarios/quickstart.yaml");
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
    let mut lines = printed.lines();
    for want in shown.lines().filter(|l| l.trim() != "...") {
        assert!(
            lines.any(|got| got == want),
            "README quick start shows a line podsim does not print (in this order):\n  {want}\nprinted:\n{printed}"
        );
    }
}

#[test]
fn comments_and_continuations_are_parsed() {
    let body = "podsim run a.yaml   # one\npodsim sweep b.yaml \\\n    --set x=1,2   # two\necho 'a # b'\n";
    assert_eq!(
        logical_lines(body),
        [
            "podsim run a.yaml",
            "podsim sweep b.yaml --set x=1,2",
            "echo 'a # b'"
        ]
    );
}
