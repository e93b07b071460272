//! The advisory lock of a result directory: `DIR/.lock`, one line of text naming the
//! process that writes the directory (pid, host, the process's start tick and the wall
//! time it took the lock). Every command that writes a result directory (`sweep`,
//! `merge`, `plot`) holds it from before its first write until it is done; a second writer
//! fails at once, naming the holder.
//!
//! The file is created with `create_new`, so of two processes exactly one creates it. A
//! lock whose process is gone (killed, or the machine rebooted) is *stale*: the next
//! writer on the same host sees that the pid no longer runs (or now runs another process,
//! by its start tick) and takes the lock over with a note. A lock taken on another host
//! cannot be checked and counts as held.
//!
//! The time in the lock is for the person reading the message only; it never reaches a
//! result file, so determinism is untouched (this and `progress` are the only wall-clock
//! readers).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// The lock file's name inside a result directory.
pub const LOCK: &str = ".lock";

/// A held lock; dropping it removes the lock file (if it is still this process's).
#[derive(Debug)]
pub(crate) struct DirLock {
    path: PathBuf,
    line: String,
}

/// What a lock file says about its holder.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Holder {
    pid: u32,
    host: String,
    /// Start time of the process in clock ticks since boot (`/proc/<pid>/stat` field 22),
    /// 0 where unknown; tells a reused pid from the holder.
    start: u64,
    since: String,
}

impl Holder {
    fn me() -> Holder {
        let pid = std::process::id();
        Holder {
            pid,
            host: hostname(),
            start: start_tick(pid).unwrap_or(0),
            since: now_utc(),
        }
    }

    fn line(&self) -> String {
        format!(
            "pid={} host={} start={} since={}\n",
            self.pid, self.host, self.start, self.since
        )
    }

    fn parse(text: &str) -> Option<Holder> {
        let mut h = Holder {
            pid: 0,
            host: String::new(),
            start: 0,
            since: String::new(),
        };
        for word in text.split_whitespace() {
            let (k, v) = word.split_once('=')?;
            match k {
                "pid" => h.pid = v.parse().ok()?,
                "host" => h.host = v.to_string(),
                "start" => h.start = v.parse().ok()?,
                "since" => h.since = v.to_string(),
                _ => {}
            }
        }
        (h.pid != 0 && !h.host.is_empty()).then_some(h)
    }

    fn describe(&self) -> String {
        format!(
            "pid {} on host {} since {}",
            self.pid, self.host, self.since
        )
    }
}

/// This machine's name (`/proc/sys/kernel/hostname`, `/etc/hostname`, `$HOSTNAME`).
fn hostname() -> String {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let name = read("/proc/sys/kernel/hostname")
        .or_else(|| read("/etc/hostname"))
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let name: String = name.trim().chars().filter(|c| !c.is_whitespace()).collect();
    if name.is_empty() {
        "unknown".into()
    } else {
        name
    }
}

/// Field 22 of `/proc/<pid>/stat` (after the command name, which may hold spaces).
fn start_tick(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process a lock names still runs (`None`: cannot tell on this system).
fn alive(h: &Holder) -> Option<bool> {
    if !Path::new("/proc/self").exists() {
        return None;
    }
    if !Path::new(&format!("/proc/{}", h.pid)).exists() {
        return Some(false);
    }
    // The pid runs: the holder, unless the pid was reused by a later process.
    match (h.start, start_tick(h.pid)) {
        (0, _) | (_, None) => Some(true),
        (a, Some(b)) => Some(a == b),
    }
}

/// The wall time as `YYYY-MM-DDTHH:MM:SSZ`.
fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn create(path: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let res = f.write_all(line.as_bytes()).and_then(|()| f.sync_all());
    if res.is_err() {
        let _ = std::fs::remove_file(path);
    }
    res
}

/// Moves a stale lock out of the way, unless another process took it over in between:
/// the lock is renamed to a name of this process's own, and put back if it is no longer
/// the stale text that was judged. Returns whether the stale lock was removed.
fn take_over(path: &Path, stale: &str) -> std::io::Result<bool> {
    let aside = path.with_file_name(format!("{LOCK}.stale-{}", std::process::id()));
    match std::fs::rename(path, &aside) {
        Ok(()) => {}
        // Gone in between (its owner released it, or another process took it over).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    let now = std::fs::read_to_string(&aside).unwrap_or_default();
    let was_stale = now == stale;
    if !was_stale {
        // Another writer's fresh lock: put it back (a hard link never replaces a file).
        let _ = std::fs::hard_link(&aside, path);
    }
    std::fs::remove_file(&aside)?;
    Ok(was_stale)
}

impl DirLock {
    /// Takes the lock of result directory `dir` (which exists), or says who holds it.
    /// Notes (a stale lock taken over) go to stderr.
    pub(crate) fn acquire(dir: &Path) -> Result<DirLock, String> {
        let path = dir.join(LOCK);
        let me = Holder::me();
        let line = me.line();
        // A few rounds: a stale lock moved aside, then another process racing for it.
        for _ in 0..3 {
            match create(&path, &line) {
                Ok(()) => return Ok(DirLock { path, line }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot create the lock {}: {e}", path.display())),
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                // Released in between: try again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("cannot read the lock {}: {e}", path.display())),
            };
            let busy = |why: &str| {
                format!(
                    "{} is in use by another podsim ({why}); wait for it to finish, or remove {} if no podsim is writing there",
                    dir.display(),
                    path.display()
                )
            };
            let Some(h) = Holder::parse(&text) else {
                return Err(busy(&format!("its lock {} is unreadable", path.display())));
            };
            if h.host != me.host {
                return Err(busy(&format!(
                    "{}; another host, so whether it still runs cannot be checked",
                    h.describe()
                )));
            }
            if alive(&h) != Some(false) {
                return Err(busy(&h.describe()));
            }
            let removed = take_over(&path, &text)
                .map_err(|e| format!("cannot remove the stale lock {}: {e}", path.display()))?;
            if removed {
                eprintln!(
                    "note: took over the stale lock {} ({} no longer runs)",
                    path.display(),
                    h.describe()
                );
            }
        }
        Err(format!(
            "cannot take the lock {}: other processes keep taking it",
            path.display()
        ))
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Only this process's own lock is removed.
        if std::fs::read_to_string(&self.path).is_ok_and(|t| t == self.line) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_line_reads_back() {
        let h = Holder {
            pid: 42,
            host: "node-a".into(),
            start: 7,
            since: "2024-01-02T03:04:05Z".into(),
        };
        assert_eq!(Holder::parse(&h.line()), Some(h));
        assert_eq!(Holder::parse(""), None);
        assert_eq!(Holder::parse("garbage"), None);
    }

    #[test]
    fn the_time_is_iso_8601() {
        let t = now_utc();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    }

    #[test]
    fn a_second_lock_on_one_directory_is_refused() {
        let d = std::env::temp_dir().join(format!("podsim-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let l = DirLock::acquire(&d).unwrap();
        let e = DirLock::acquire(&d).unwrap_err();
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(l);
        assert!(!d.join(LOCK).exists());
        drop(DirLock::acquire(&d).unwrap());
        let _ = std::fs::remove_dir_all(&d);
    }
}
