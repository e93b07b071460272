//! Problems (errors) and notes found while loading podsim files, and how they print.

use std::fmt;

/// One thing wrong with an input file. `line`/`col` are 1-based; both are 0 when the problem
/// is not at a position in a file (e.g. a `--set` value, whose `file` is `--set PATH`).
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

fn write_line(
    f: &mut fmt::Formatter<'_>,
    level: &str,
    file: &str,
    line: usize,
    col: usize,
    path: &str,
    message: &str,
) -> fmt::Result {
    write!(f, "{level}: {file}")?;
    if line > 0 {
        write!(f, ":{line}:{col}")?;
    }
    if !path.is_empty() {
        write!(f, ": {path}")?;
    }
    write!(f, ": {message}")
}

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
        for p in &self.problems {
            writeln!(f, "{p}")?;
        }
        let n = self.problems.len();
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
}
