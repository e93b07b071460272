//! The lines and paths that bulk runs and the command line share: the replay line printed
//! with every failure, and the temporary file an output is written to before it is renamed
//! into place (so an interrupted run leaves no half-written result).

use std::path::{Path, PathBuf};

/// The line that replays a run exactly.
pub(crate) fn replay_line(
    path: &Path,
    seed: u64,
    sets: &[String],
    profile: &Option<String>,
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
    s
}

fn shell_quote(s: &str) -> String {
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
