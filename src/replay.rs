//! The lines and paths that bulk runs and the command line share: the replay line printed
//! with every failure, and the temporary file an output is written to before it is renamed
//! into place (so an interrupted run leaves no half-written result).

use std::path::{Path, PathBuf};

/// Appended to the replay line of a scenario read from standard input (`-`): a shell
/// comment, so the line still pastes as a command, which replays the run given the same
/// scenario on standard input.
pub(crate) const STDIN_REPLAY_NOTE: &str = "  # the scenario read from standard input";

/// The line that replays a run exactly.
pub(crate) fn replay_line(
    path: &Path,
    seed: u64,
    sets: &[String],
    profile: &Option<String>,
) -> String {
    replay_line_with(path, seed, sets, profile, None)
}

/// [`replay_line`] of a run whose `--scheduler` was given (`scheduler`, as given).
pub(crate) fn replay_line_with(
    path: &Path,
    seed: u64,
    sets: &[String],
    profile: &Option<String>,
    scheduler: Option<&str>,
) -> String {
    let mut s = format!(
        "podsim run {} --seed {seed}",
        shell_quote(&path.display().to_string())
    );
    if let Some(p) = profile {
        s.push_str(&format!(" --profile {}", shell_quote(p)));
    }
    for x in sets {
        s.push_str(&format!(" --set {}", shell_quote(x)));
    }
    if let Some(x) = scheduler {
        s.push_str(&format!(" --scheduler {}", shell_quote(x)));
    }
    if crate::scenario::file::is_stdio(path) {
        s.push_str(STDIN_REPLAY_NOTE);
    }
    s
}

/// Characters a terminal would act on rather than show (controls, bidi overrides and
/// isolates, zero-width marks).
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

fn shell_quote(s: &str) -> String {
    if s.chars().any(invisible) {
        // Bash's ANSI-C quoting: the line stays printable and pastes back to the same bytes.
        let mut q = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => q.push_str("\\\\"),
                '\'' => q.push_str("\\'"),
                c if invisible(c) && (c as u32) < 0x80 => {
                    q.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if invisible(c) => q.push_str(&format!("\\u{:04x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('\'');
        return q;
    }
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `dir/.name.tmp-<pid>` next to `path`.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replay_line_escapes_what_a_terminal_would_act_on() {
        let l = replay_line(
            Path::new("a.yaml"),
            1,
            &["metadata.name=\u{1b}[2J\u{202e}x'y\\".to_string()],
            &None,
        );
        assert_eq!(
            l,
            "podsim run a.yaml --seed 1 --set $'metadata.name=\\x1b[2J\\u202ex\\'y\\\\'"
        );
        assert!(!l.chars().any(invisible));
    }

    #[test]
    fn the_replay_line_quotes_what_a_shell_would_split() {
        let l = replay_line(
            Path::new("my dir/a.yaml"),
            7,
            &["spec.x=a b".to_string()],
            &Some("v1.22".to_string()),
        );
        assert_eq!(
            l,
            "podsim run 'my dir/a.yaml' --seed 7 --profile v1.22 --set 'spec.x=a b'"
        );
    }

    #[test]
    fn the_replay_line_carries_the_scheduler() {
        let l = replay_line_with(Path::new("a.yaml"), 2, &[], &None, Some("pct:3"));
        assert_eq!(l, "podsim run a.yaml --seed 2 --scheduler pct:3");
    }

    #[test]
    fn a_scenario_from_standard_input_says_so_in_a_comment() {
        let l = replay_line(Path::new("-"), 3, &[], &None);
        assert_eq!(
            l,
            "podsim run - --seed 3  # the scenario read from standard input"
        );
    }

    #[test]
    fn the_temporary_file_is_hidden_beside_its_target() {
        let t = tmp_path(Path::new("/x/y/runs.jsonl"));
        assert_eq!(t.parent(), Some(Path::new("/x/y")));
        assert!(t
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".runs.jsonl.tmp-"));
    }
}
