//! Writing an output file (`--trace`, `--junit`, `--timeline`, the files of a result
//! directory) without losing data and without replacing what the path names.
//!
//! A regular file (or a path that does not exist yet) is written to a temporary file
//! beside it, synced, and renamed over it, so an interrupted write leaves the old file or
//! the new one, never half of one. A path that names something else is never replaced by
//! a regular file:
//!
//! * a FIFO, a character or block device or a socket (`/dev/null`, `/dev/stdout` on a
//!   terminal or pipe, a named pipe someone reads) is opened for writing and written in
//!   place, without truncating it;
//! * a symbolic link stays a link: the write goes through to the file it points to, by
//!   the same rule (a regular or missing target is replaced by a rename in the target's
//!   directory; a special target is written in place).
//!
//! * `-` is standard output: written directly, no temporary file (see [`claim_stdout`]
//!   for the rule that keeps standard output to one file).
//!
//! A write error (a full disk, `/dev/full`) is returned as an `io::Error`; the caller names
//! the file ([`display_name`]). A temporary file left by a failed write is removed.
//!
//! Every output file goes through here: [`write_with`] or [`write_bytes`] for a file made
//! in one go, [`Output`] for one written as a run goes (the trace), [`write_via_file`] for
//! an encoder that needs a path of its own.

use crate::scenario::file::is_stdio;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `path` as messages name an output: `<stdout>` for `-`, else the path as given.
pub(crate) fn display_name(path: &Path) -> String {
    if is_stdio(path) {
        "<stdout>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// Checks that at most one thing writes to standard output. `files` are the output flags
/// and their paths (`("--trace", Some("-"))`), `others` the flags that print to standard
/// output themselves when given (`("--json", true)`). Returns whether a file goes to
/// standard output (the caller then prints its text summary to standard error); the error
/// names both flags.
pub(crate) fn claim_stdout(
    files: &[(&str, Option<&Path>)],
    others: &[(&str, bool)],
) -> Result<bool, String> {
    let to_stdout: Vec<&str> = files
        .iter()
        .filter(|(_, p)| p.is_some_and(is_stdio))
        .map(|(f, _)| *f)
        .collect();
    let Some(first) = to_stdout.first() else {
        return Ok(false);
    };
    if let Some(second) = to_stdout.get(1) {
        return Err(format!(
            "{first} - and {second} - would both write to standard output; give one of them a file"
        ));
    }
    if let Some((other, _)) = others.iter().find(|(_, on)| *on) {
        return Err(format!(
            "{first} - and {other} would both write to standard output; give {first} a file, or drop {other}"
        ));
    }
    Ok(true)
}

/// Standard output, or a file being written (a temporary one beside its target, or a
/// special file in place).
enum Sink {
    Stdout(std::io::BufWriter<std::io::Stdout>),
    File(std::io::BufWriter<std::fs::File>),
}

/// An output file being written as its content is made: `-` goes to standard output as it
/// comes; a regular file is written to a temporary file and renamed into place by
/// [`Output::commit`] (dropped without a commit, it leaves nothing behind but what a
/// special file or standard output already got).
pub(crate) struct Output {
    sink: Sink,
    /// The temporary file and where it is renamed to (`None`: written in place).
    tmp: Option<(PathBuf, PathBuf)>,
    committed: bool,
}

impl Output {
    /// Opens `path` for writing by the rules of this module.
    pub(crate) fn create(path: &Path) -> std::io::Result<Output> {
        if is_stdio(path) {
            return Ok(Output {
                sink: Sink::Stdout(std::io::BufWriter::new(std::io::stdout())),
                tmp: None,
                committed: false,
            });
        }
        let (f, tmp) = match resolve(path)? {
            Target::InPlace(p) => (open_in_place(&p)?, None),
            Target::Replace(p) => {
                let tmp = tmp_path(&p);
                (std::fs::File::create(&tmp)?, Some((tmp, p)))
            }
        };
        Ok(Output {
            sink: Sink::File(std::io::BufWriter::new(f)),
            tmp,
            committed: false,
        })
    }

    /// Flushes, syncs and renames the file into place.
    pub(crate) fn commit(mut self) -> std::io::Result<()> {
        let res = match &mut self.sink {
            Sink::Stdout(w) => w.flush(),
            Sink::File(w) => w.flush().and_then(|()| match &self.tmp {
                Some((tmp, to)) => w
                    .get_ref()
                    .sync_all()
                    .and_then(|()| std::fs::rename(tmp, to))
                    .map(|()| sync_dir(to)),
                None => Ok(()),
            }),
        };
        self.committed = res.is_ok();
        res
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.sink {
            Sink::Stdout(w) => w.write(buf),
            Sink::File(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Stdout(w) => w.flush(),
            Sink::File(w) => w.flush(),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let (false, Some((tmp, _))) = (self.committed, &self.tmp) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Where the bytes for a path go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A regular file, or nothing yet: write a temporary file beside this path, rename it
    /// over this path.
    Replace(PathBuf),
    /// A FIFO, device or socket: open this path for writing and write in place.
    InPlace(PathBuf),
}

/// Symbolic links followed at most (as the kernel's own limit).
const MAX_LINKS: usize = 40;

/// Follows `path` through its symbolic links (if any) to what it finally names.
pub(crate) fn resolve(path: &Path) -> std::io::Result<Target> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::Replace(p)),
            Err(e) => return Err(e),
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            // The kernel resolves links like `/proc/self/fd/1` (behind `/dev/stdout`)
            // itself; their text (`pipe:[123]`) is no path. Ask it what the link names.
            if let Ok(m) = std::fs::metadata(&p) {
                if !m.is_file() && !m.is_dir() {
                    return Ok(Target::InPlace(p));
                }
            }
            let to = std::fs::read_link(&p)?;
            p = if to.is_absolute() {
                to
            } else {
                p.parent().unwrap_or(Path::new("")).join(to)
            };
            continue;
        }
        if ft.is_dir() {
            return Err(std::io::Error::other("is a directory"));
        }
        return Ok(if ft.is_file() {
            Target::Replace(p)
        } else {
            Target::InPlace(p)
        });
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// `dir/.name.tmp-<pid>` next to `path`.
pub(crate) fn tmp_path(path: &Path) -> PathBuf {
    crate::replay::tmp_path(path)
}

fn sync_dir(path: &Path) {
    // Makes the rename durable; not every platform can open a directory, so best effort.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Opens `path` (a special file) for writing in place: no create, no truncate.
fn open_in_place(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().write(true).open(path)
}

/// Writes what `fill` writes to `path`, by the rules of this module. `fill` gets a
/// buffered writer; flushing it is done here.
pub(crate) fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = Output::create(path)?;
    fill(&mut out)?;
    out.commit()
}

/// Writes `bytes` to `path` (see [`write_with`]).
pub(crate) fn write_bytes(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// For writers that need a file path of their own (the PNG encoder): `produce` writes a
/// temporary file, which is then renamed over the target, or copied into a special file
/// and removed, or copied to standard output (`-`) and removed. `tmp_for` names the
/// temporary file for a path (it keeps the extension).
pub(crate) fn write_via_file(
    path: &Path,
    tmp_for: impl Fn(&Path) -> PathBuf,
    produce: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", display_name(path));
    if is_stdio(path) {
        // Made in the system's temporary directory (`tmp_for` is asked for a name for `-`,
        // and should give one with the extension the encoder wants), then copied to
        // standard output.
        let name = tmp_for(path);
        let tmp = std::env::temp_dir().join(name.file_name().unwrap_or_default());
        let res = produce(&tmp).and_then(|()| {
            (|| {
                let mut out = std::io::stdout().lock();
                std::io::copy(&mut std::fs::File::open(&tmp)?, &mut out)?;
                out.flush()
            })()
            .map_err(|e| e.to_string())
        });
        let _ = std::fs::remove_file(&tmp);
        return res.map_err(|e| fail(&e));
    }
    let target = resolve(path).map_err(|e| fail(&e))?;
    let (tmp, dest) = match &target {
        Target::Replace(p) => (tmp_for(p), p.clone()),
        // A device's directory (`/dev`) takes no temporary file: use the system's.
        Target::InPlace(p) => {
            let name = tmp_for(p);
            let name = name.file_name().unwrap_or_default();
            (std::env::temp_dir().join(name), p.clone())
        }
    };
    let res = produce(&tmp).and_then(|()| match target {
        Target::Replace(_) => std::fs::rename(&tmp, &dest).map_err(|e| e.to_string()),
        Target::InPlace(_) => (|| {
            let mut f = open_in_place(&dest)?;
            std::io::copy(&mut std::fs::File::open(&tmp)?, &mut f)?;
            f.flush()
        })()
        .map_err(|e| e.to_string()),
    });
    match &target {
        Target::Replace(_) if res.is_ok() => sync_dir(&dest),
        _ => {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    res.map_err(|e| fail(&e))
}

/// What went wrong writing the command's own output to standard output: `None` while all
/// is well, `Some(None)` once the reader went away (a broken pipe), `Some(Some(e))` for
/// any other error (a full disk behind a redirection).
static STDOUT_STATE: std::sync::Mutex<Option<Option<String>>> = std::sync::Mutex::new(None);

/// Writes to standard output. A reader that went away (`podsim invariants | head`) is
/// not an error: the rest of the output is dropped and the command finishes as it would
/// (a sweep still writes its result directory). Any other error is kept for
/// [`stdout_failure`]; later writes are dropped.
pub(crate) fn stdout_write(args: std::fmt::Arguments<'_>) {
    let mut state = STDOUT_STATE.lock().unwrap_or_else(|p| p.into_inner());
    if state.is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        *state = Some(if e.kind() == std::io::ErrorKind::BrokenPipe {
            None
        } else {
            Some(e.to_string())
        });
    }
}

/// The error that stopped [`stdout_write`], other than a reader that went away.
pub(crate) fn stdout_failure() -> Option<String> {
    let state = STDOUT_STATE.lock().unwrap_or_else(|p| p.into_inner());
    state.clone().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("podsim-outfile-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_and_missing_files_are_replaced() {
        let d = dir("regular");
        let f = d.join("a.txt");
        assert_eq!(resolve(&f).unwrap(), Target::Replace(f.clone()));
        write_bytes(&f, b"one").unwrap();
        write_bytes(&f, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "two");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_and_devices_written_in_place() {
        let d = dir("links");
        let real = d.join("real.txt");
        let link = d.join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        // A dangling link: its target is created.
        assert_eq!(resolve(&link).unwrap(), Target::Replace(d.join("real.txt")));
        write_bytes(&link, b"x").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "x");
        assert_eq!(
            resolve(Path::new("/dev/null")).unwrap(),
            Target::InPlace("/dev/null".into())
        );
        assert!(resolve(&d).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
