//! Result directories and output files never lose data, through the binary: the lock of a
//! result directory (a second writer refused at once, a stale lock taken over), `kill -9`
//! mid-sweep then resume, output to devices, FIFOs and symbolic links, `--out` on a
//! foreign directory, and the per-row checksum of `runs.jsonl` on resume and merge.

use crate::scratch::Scratch;
use assert_cmd::Command;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

const QUICKSTART: &str = "scenarios/quickstart.yaml";

fn podsim() -> Command {
    let mut c = Command::cargo_bin("podsim").unwrap();
    c.env_remove("PODSIM_PROGRESS_INTERVAL_MS")
        .env_remove("PODSIM_SWEEP_CHUNK");
    c
}

/// The binary as a plain process, to run in the background.
fn spawn_sweep(out: &Path, seeds: u64) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_podsim"))
        .args(["sweep", QUICKSTART, "--jobs", "1", "--fail-on", "none"])
        .args(["--seeds", &seeds.to_string()])
        .arg("--out")
        .arg(out)
        // Small chunks: rows reach the file a few at a time.
        .env("PODSIM_SWEEP_CHUNK", "2")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn sweep(out: &Path, seeds: u64) -> Command {
    let mut c = podsim();
    c.args(["sweep", QUICKSTART, "--jobs", "1", "--fail-on", "none"])
        .args(["--seeds", &seeds.to_string()])
        .arg("--out")
        .arg(out);
    c
}

/// A fresh directory for one test.
fn tmp(name: &str) -> Scratch {
    Scratch::new("reliability", name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Exit code 2, no panic, and stderr has every one of `needles`.
fn refused(o: &std::process::Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
}

/// (index, traceHash) of every row of `runs.jsonl`.
fn rows(dir: &Path) -> Vec<(u64, String)> {
    read(&dir.join("runs.jsonl"))
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["index"].as_u64().unwrap(),
                v["traceHash"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn complete_lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map_or(0, |t| t.matches('\n').count())
}

/// Polls until `done` holds (waiting on another process is wall-clock by nature).
#[allow(clippy::disallowed_methods)]
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..6000 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("timed out waiting for {what}");
}

fn hostname() -> String {
    read(Path::new("/proc/sys/kernel/hostname"))
        .trim()
        .to_string()
}

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn a_second_writer_is_refused_at_once_and_the_first_finishes_whole() {
    let d = tmp("lock");
    let out = d.join("out");
    let seeds = 2000;
    let mut first = spawn_sweep(&out, seeds);
    let lock = out.join(".lock");
    // The lock, then the manifest (which makes the directory one `plot` would lock).
    wait_for("the first sweep's lock", || {
        lock.exists() && out.join("manifest.json").exists()
    });
    let pid = first.id().to_string();
    let holder = read(&lock);
    assert!(holder.contains(&format!("pid={pid} ")), "{holder}");
    let second = sweep(&out, seeds).output().unwrap();
    refused(
        &second,
        &[&format!("pid {pid}"), &out.display().to_string(), "in use"],
    );
    // Refused before running anything, while the first still runs.
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first sweep finished before the second was refused: the test proves nothing"
    );
    let plot = podsim().arg("plot").arg(&out).output().unwrap();
    refused(&plot, &[&format!("pid {pid}")]);
    assert!(first.wait().unwrap().success());
    assert!(out.join("summary.json").exists());
    assert!(!lock.exists(), "the lock is released at the end");
    let idx: Vec<u64> = rows(&out).iter().map(|r| r.0).collect();
    assert_eq!(idx, (0..seeds).collect::<Vec<_>>());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_stale_lock_is_taken_over_and_another_hosts_lock_is_not() {
    let d = tmp("stale");
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let pid = dead_pid();
    std::fs::write(
        out.join(".lock"),
        format!(
            "pid={pid} host={} start=0 since=2020-01-01T00:00:00Z\n",
            hostname()
        ),
    )
    .unwrap();
    let o = sweep(&out, 3).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("took over the stale lock"), "{err}");
    assert!(err.contains(&format!("pid {pid} ")), "{err}");
    assert!(out.join("summary.json").exists());
    assert!(!out.join(".lock").exists());
    // A lock taken on another host cannot be checked: it is held.
    std::fs::write(
        out.join(".lock"),
        "pid=1 host=some-other-host start=0 since=2020-01-01T00:00:00Z\n",
    )
    .unwrap();
    let o = sweep(&out, 3).output().unwrap();
    refused(&o, &["pid 1 on host some-other-host", "another host"]);
    assert!(out.join(".lock").exists(), "another's lock is left alone");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sweep_killed_mid_run_resumes_to_the_uninterrupted_result() {
    let d = tmp("kill");
    let seeds = 2000;
    let full = d.join("full");
    assert!(sweep(&full, seeds).output().unwrap().status.success());
    let part = d.join("part");
    let mut child = spawn_sweep(&part, seeds);
    let runs = part.join("runs.jsonl");
    wait_for("some rows", || complete_lines(&runs) >= 10);
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    let kept = complete_lines(&runs);
    assert!(kept < seeds as usize, "the sweep finished before the kill");
    assert!(!part.join("summary.json").exists());
    assert!(
        part.join(".lock").exists(),
        "a killed sweep leaves its lock"
    );
    let o = sweep(&part, seeds).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("took over the stale lock"), "{err}");
    assert!(err.contains("resuming:"), "{err}");
    assert_eq!(rows(&part), rows(&full));
    for f in ["manifest.json", "runs.jsonl", "summary.json"] {
        assert_eq!(read(&part.join(f)), read(&full.join(f)), "{f}");
    }
    assert!(!part.join(".lock").exists());
    let _ = std::fs::remove_dir_all(&d);
}

fn run_quickstart(extra: &[&std::ffi::OsStr]) -> std::process::Output {
    podsim()
        .args(["run", QUICKSTART])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_device_stays_a_device_and_a_full_one_is_an_error() {
    let o = run_quickstart(&["--trace".as_ref(), "/dev/null".as_ref()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ft = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(ft.is_char_device(), "/dev/null was replaced: {ft:?}");
    for flag in ["--trace", "--junit"] {
        let o = run_quickstart(&[flag.as_ref(), "/dev/full".as_ref()]);
        refused(&o, &["/dev/full", "cannot write"]);
    }
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn a_fifo_gets_the_junit_report_and_stays_a_fifo() {
    let d = tmp("fifo");
    let fifo = d.join("report.xml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read_to_string(&reader));
    });
    let o = run_quickstart(&["--junit".as_ref(), fifo.as_os_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let xml = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the reader got nothing")
        .unwrap();
    assert!(xml.contains("<testsuites"), "{xml}");
    assert!(xml.contains("quickstart"), "{xml}");
    let ft = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(ft.is_fifo(), "the FIFO was replaced: {ft:?}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_symlink_stays_a_link_and_its_target_gets_the_output() {
    let d = tmp("link");
    let target = d.join("real.jsonl");
    std::fs::write(&target, "old\n").unwrap();
    let link = d.join("trace.jsonl");
    std::os::unix::fs::symlink("real.jsonl", &link).unwrap();
    let svg_link = d.join("timeline.svg");
    std::os::unix::fs::symlink("real.svg", &svg_link).unwrap();
    let o = run_quickstart(&[
        "--trace".as_ref(),
        link.as_os_str(),
        "--timeline".as_ref(),
        svg_link.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for l in [&link, &svg_link] {
        let ft = std::fs::symlink_metadata(l).unwrap().file_type();
        assert!(ft.is_symlink(), "{} was replaced: {ft:?}", l.display());
    }
    let text = read(&target);
    assert!(text.starts_with("{\"atNs\":0,"), "{text:.200}");
    assert!(read(&d.join("real.svg")).contains("<svg"));
    // Nothing else was left in the directory (no temporary file).
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 4);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn out_on_a_foreign_directory_is_refused() {
    let d = tmp("foreign");
    std::fs::write(d.join("notes.txt"), "mine\n").unwrap();
    let o = sweep(&d, 3).output().unwrap();
    refused(
        &o,
        &[
            &d.display().to_string(),
            "not a podsim result directory",
            "notes.txt",
            "new or empty directory",
        ],
    );
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
    assert_eq!(left.len(), 1, "something was written into the directory");
    // An empty directory and a result directory are fine.
    let empty = d.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(sweep(&empty, 3).output().unwrap().status.success());
    assert!(sweep(&empty, 3).output().unwrap().status.success());
    let _ = std::fs::remove_dir_all(&d);
}

/// Replaces the traceHash of line `line` (1-based) of `runs.jsonl` with zeros.
fn edit_trace_hash(runs: &Path, line: usize) {
    let text = read(runs);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let l = &mut lines[line - 1];
    let at = l.find("\"traceHash\":\"").unwrap() + "\"traceHash\":\"".len();
    l.replace_range(at..at + 16, "0000000000000000");
    std::fs::write(runs, lines.join("\n") + "\n").unwrap();
}

#[test]
fn an_edited_row_is_refused_by_resume_and_merge() {
    let d = tmp("checksum");
    let out = d.join("out");
    assert!(sweep(&out, 6).output().unwrap().status.success());
    let runs = out.join("runs.jsonl");
    // An untouched directory resumes (nothing to run).
    assert!(sweep(&out, 6).output().unwrap().status.success());
    edit_trace_hash(&runs, 3);
    let o = sweep(&out, 6).output().unwrap();
    refused(&o, &[&format!("{}:3", runs.display()), "checksum mismatch"]);
    // A row without a checksum is refused too.
    let text = read(&runs);
    let stripped: String = text
        .lines()
        .map(|l| l.split(",\"checksum\"").next().unwrap().to_string() + "}\n")
        .collect();
    std::fs::write(&runs, stripped).unwrap();
    let o = sweep(&out, 6).output().unwrap();
    refused(&o, &[&format!("{}:1", runs.display()), "no checksum"]);

    // Merge: two clean shards merge; an edited row in one is refused.
    let shards: Vec<PathBuf> = (0..2).map(|i| d.join(format!("shard{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        let o = sweep(s, 4)
            .args(["--shard", &format!("{i}/2")])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let merge = |out: &Path| {
        podsim()
            .arg("merge")
            .args(&shards)
            .arg("--out")
            .arg(out)
            .args(["--fail-on", "none"])
            .output()
            .unwrap()
    };
    let o = merge(&d.join("merged"));
    assert!(o.status.success(), "{}", stderr(&o));
    let shard_runs = shards[1].join("runs.jsonl");
    edit_trace_hash(&shard_runs, 2);
    let o = merge(&d.join("merged2"));
    refused(
        &o,
        &[&format!("{}:2", shard_runs.display()), "checksum mismatch"],
    );
    // Merge into a foreign directory is refused as well.
    std::fs::write(d.join("notes.txt"), "mine\n").unwrap();
    // Re-running the shard from scratch repairs it.
    std::fs::remove_dir_all(&shards[1]).unwrap();
    assert!(sweep(&shards[1], 4)
        .args(["--shard", "1/2"])
        .output()
        .unwrap()
        .status
        .success());
    let o = merge(&d);
    refused(&o, &["not a podsim result directory", "notes.txt"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_result_directory_of_the_older_format_is_refused_with_a_reason() {
    let d = tmp("format");
    let out = d.join("out");
    assert!(sweep(&out, 3).output().unwrap().status.success());
    let m = out.join("manifest.json");
    let text = read(&m).replace(
        &format!("\"format\": {},", podsim::results::FORMAT),
        "\"format\": 1,",
    );
    assert!(text.contains("\"format\": 1,"));
    std::fs::write(&m, text).unwrap();
    let o = sweep(&out, 3).output().unwrap();
    refused(
        &o,
        &[&m.display().to_string(), "result format 1", "new directory"],
    );
    let _ = std::fs::remove_dir_all(&d);
}
