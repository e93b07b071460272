//! Problems (errors) and notes found while loading podsim files, and how they print.

use std::fmt;

/// One thing wrong with an input file. `line`/`col` are 1-based; both are 0 when the problem
/// is not at a position in a file (e.g. a `--set` value, whose `file` is `--set PATH=VALUE`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub file: String,
    pub line: usize,
    pub col: usize,
    /// Field path, e.g. `spec.pods[0].template.spec.containers[1].livenessProbe.periodSeconds`
    /// (empty for the document as a whole).
    pub path: String,
    pub message: String,
}

/// Something worth telling the user that is not an error: a Pod-manifest field podsim does
/// not model. Same fields and position rules as [`Problem`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Note {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub path: String,
    pub message: String,
}

/// Whether `c` must not reach a terminal raw: C0 and C1 controls, DEL, and the Unicode
/// format characters that reorder or hide text (bidi embeddings, overrides and isolates,
/// marks, zero-width characters, line and paragraph separators, the byte-order mark).
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// `s` with every control or text-reordering character written as a Rust escape
/// (`\u{1b}`), so that user text echoed in a message (names, values, paths, hints) shows
/// what it holds and cannot recolour, reorder or hide the terminal's text. Every problem
/// and note line goes through it.
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_hidden) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn write_line(
    f: &mut fmt::Formatter<'_>,
    level: &str,
    file: &str,
    line: usize,
    col: usize,
    path: &str,
    message: &str,
) -> fmt::Result {
    write!(f, "{level}: {}", escape_controls(file))?;
    if line > 0 {
        write!(f, ":{line}:{col}")?;
    }
    if !path.is_empty() {
        write!(f, ": {}", escape_controls(path))?;
    }
    write!(f, ": {}", escape_controls(message))
}

/// At most this many problems are printed; the rest are counted.
pub const SHOWN_PROBLEMS: usize = 20;

/// `error: FILE:LINE:COL: PATH: MESSAGE`
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_line(
            f,
            "error",
            &self.file,
            self.line,
            self.col,
            &self.path,
            &self.message,
        )
    }
}

/// `note: FILE:LINE:COL: PATH: MESSAGE`
impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_line(
            f,
            "note",
            &self.file,
            self.line,
            self.col,
            &self.path,
            &self.message,
        )
    }
}

/// Every problem of a file (never only the first), plus the notes found on the way.
/// `Display` prints one `error:` line per problem and a final count line; notes are not
/// printed by `Display` (print them with [`LoadError::notes`] if wanted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// In file order (problems from `--set` values last). Never empty.
    pub problems: Vec<Problem>,
    pub notes: Vec<Note>,
}

impl LoadError {
    /// An error with a single problem.
    pub fn single(problem: Problem) -> LoadError {
        LoadError {
            problems: vec![problem],
            notes: Vec::new(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in self.problems.iter().take(SHOWN_PROBLEMS) {
            writeln!(f, "{p}")?;
        }
        let n = self.problems.len();
        if n > SHOWN_PROBLEMS {
            writeln!(f, "... and {} more (not shown)", n - SHOWN_PROBLEMS)?;
        }
        write!(f, "{n} problem{} found", if n == 1 { "" } else { "s" })
    }
}

impl std::error::Error for LoadError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let p = Problem {
            file: "a.yaml".into(),
            line: 3,
            col: 5,
            path: "spec.horizon".into(),
            message: "negative".into(),
        };
        assert_eq!(p.to_string(), "error: a.yaml:3:5: spec.horizon: negative");
        let s = Problem {
            file: "--set spec.seed".into(),
            line: 0,
            col: 0,
            path: "spec.seed".into(),
            message: "expected an integer".into(),
        };
        assert_eq!(
            s.to_string(),
            "error: --set spec.seed: spec.seed: expected an integer"
        );
        let e = LoadError {
            problems: vec![p, s],
            notes: vec![],
        };
        assert!(e.to_string().ends_with("\n2 problems found"));
    }

    #[test]
    fn controls_are_escaped() {
        assert_eq!(escape_controls("plain é"), "plain é");
        assert_eq!(
            escape_controls("a\u{1b}[31m\u{7}b\u{202e}c\u{9b}\n"),
            "a\\u{1b}[31m\\u{7}b\\u{202e}c\\u{9b}\\u{a}"
        );
        let p = Problem {
            file: "a\u{1b}.yaml".into(),
            line: 1,
            col: 1,
            path: "spec.\u{2066}x".into(),
            message: "`\u{7}`".into(),
        };
        assert_eq!(
            p.to_string(),
            "error: a\\u{1b}.yaml:1:1: spec.\\u{2066}x: `\\u{7}`"
        );
    }

    #[test]
    fn long_lists_are_capped() {
        let p = |i: usize| Problem {
            file: "a.yaml".into(),
            line: i,
            col: 1,
            path: String::new(),
            message: "bad".into(),
        };
        let e = LoadError {
            problems: (1..=25).map(p).collect(),
            notes: vec![],
        };
        let s = e.to_string();
        assert_eq!(s.lines().count(), 22, "{s}");
        assert!(
            s.contains("a.yaml:20:1") && !s.contains("a.yaml:21:1"),
            "{s}"
        );
        assert!(
            s.ends_with("... and 5 more (not shown)\n25 problems found"),
            "{s}"
        );
    }
}
