//! Scratch space for the integration tests: a directory of its own per test, removed when
//! its guard drops, so `cargo test` leaves nothing behind in the system's temp directory.
//!
//! A test that fails keeps its directory (the guard drops while the thread panics) and says
//! where it is, so the files it wrote can be looked at; `PODSIM_KEEP_TEST_DIRS=1` keeps
//! every directory.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A fresh, empty directory `podsim-<area>-<pid>-<name>` in the temp directory, removed on
/// drop (see the module's comment for when it is kept).
pub(crate) struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// `area` names the test module, `name` the test; together with the process ID they
    /// keep tests that run at the same time apart.
    pub(crate) fn new(area: &str, name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("podsim-{area}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        Scratch { dir }
    }

    /// A path for `file` inside this directory (nothing is created).
    pub(crate) fn file(self, file: &str) -> ScratchFile {
        let path = self.dir.join(file);
        ScratchFile { _dir: self, path }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test failed: its files are kept in {}", self.dir.display());
        } else if std::env::var_os("PODSIM_KEEP_TEST_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.dir
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.dir
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.dir.as_os_str()
    }
}

/// A file's path in a [`Scratch`] directory of its own; the directory goes with it.
pub(crate) struct ScratchFile {
    _dir: Scratch,
    path: PathBuf,
}

impl Deref for ScratchFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for ScratchFile {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

#[test]
fn a_scratch_directory_is_removed_when_its_guard_drops() {
    let s = Scratch::new("scratch", "drop");
    std::fs::write(s.join("f"), "x").unwrap();
    let dir = s.to_path_buf();
    assert!(dir.join("f").is_file());
    drop(s);
    if std::env::var_os("PODSIM_KEEP_TEST_DIRS").is_none() {
        assert!(!dir.exists(), "{} is still there", dir.display());
    }
    let f = Scratch::new("scratch", "file").file("a.yaml");
    std::fs::write(&*f, "x").unwrap();
    let parent = f.parent().unwrap().to_path_buf();
    drop(f);
    if std::env::var_os("PODSIM_KEEP_TEST_DIRS").is_none() {
        assert!(!parent.exists(), "{} is still there", parent.display());
    }
}
