//! Progress display for sweeps, on stderr only (stdout carries results).
//!
//! On a terminal: an indicatif bar with the run rate, ETA and finding counts. Otherwise
//! (CI, a pipe): one plain line every `PODSIM_PROGRESS_INTERVAL_MS` milliseconds (default
//! 5000). This module is the one place in podsim that reads the wall clock: the rate and
//! ETA shown to a person are about real time. Nothing it reads reaches a run or a result
//! file, so determinism (design decision 5) is untouched.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Progress of one sweep (or shard).
pub(crate) struct Progress {
    label: String,
    total: u64,
    start: Instant,
    mode: Mode,
    state: Mutex<State>,
}

enum Mode {
    Bar(ProgressBar),
    Plain { interval: Duration },
}

struct State {
    done: u64,
    /// Runs done when this process started (a resume).
    resumed: u64,
    /// Runs with findings, by invariant, in this sweep so far (the resumed runs included).
    findings: BTreeMap<String, u64>,
    last_line: Instant,
}

fn findings_text(f: &BTreeMap<String, u64>) -> String {
    if f.is_empty() {
        "findings: none".into()
    } else {
        let parts: Vec<String> = f.iter().map(|(k, v)| format!("{k} {v}")).collect();
        format!("findings: {}", parts.join(", "))
    }
}

fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

impl Progress {
    /// `total` runs, of which `done` were already in the result directory, with
    /// `findings` (runs with each finding among those, by invariant): every line counts the
    /// sweep's runs so far, not only this process's.
    pub(crate) fn new(
        label: &str,
        total: u64,
        done: u64,
        findings: BTreeMap<String, u64>,
    ) -> Progress {
        let mode = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{bar:30}] {pos}/{len} runs  {rate}  ETA {eta}  {msg}",
                )
                .expect("valid template")
                .with_key(
                    "rate",
                    |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0} runs/s", s.per_sec());
                    },
                )
                .progress_chars("=> "),
            );
            bar.set_prefix(label.to_string());
            bar.set_position(done);
            bar.reset_eta();
            bar.set_message(findings_text(&findings));
            Mode::Bar(bar)
        } else {
            let ms = std::env::var("PODSIM_PROGRESS_INTERVAL_MS")
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(5000);
            Mode::Plain {
                interval: Duration::from_millis(ms),
            }
        };
        let now = Instant::now();
        Progress {
            label: label.to_string(),
            total,
            start: now,
            mode,
            state: Mutex::new(State {
                done,
                resumed: done,
                findings,
                last_line: now,
            }),
        }
    }

    /// One run finished, with these findings (counts by invariant).
    pub(crate) fn record(&self, findings: &BTreeMap<String, u64>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.done += 1;
        for k in findings.keys() {
            *st.findings.entry(k.clone()).or_insert(0) += 1;
        }
        match &self.mode {
            Mode::Bar(bar) => {
                bar.inc(1);
                if !findings.is_empty() {
                    bar.set_message(findings_text(&st.findings));
                }
            }
            Mode::Plain { interval } => {
                let now = Instant::now();
                if now.duration_since(st.last_line) >= *interval {
                    st.last_line = now;
                    eprintln!("{}", self.line(&st, now));
                }
            }
        }
    }

    fn line(&self, st: &State, now: Instant) -> String {
        let elapsed = now.duration_since(self.start);
        let here = st.done - st.resumed;
        let rate = here as f64 / elapsed.as_secs_f64().max(1e-9);
        let left = self.total.saturating_sub(st.done);
        let eta = if here == 0 {
            "?".to_string()
        } else {
            human(Duration::from_secs_f64(left as f64 / rate))
        };
        format!(
            "{}: {}/{} runs ({:.0}%), {:.0} runs/s, elapsed {}, ETA {}, {}",
            self.label,
            st.done,
            self.total,
            if self.total == 0 {
                100.0
            } else {
                st.done as f64 * 100.0 / self.total as f64
            },
            rate,
            human(elapsed),
            eta,
            findings_text(&st.findings)
        )
    }

    /// Prints a message on stderr without tearing the bar.
    pub(crate) fn message(&self, msg: &str) {
        match &self.mode {
            Mode::Bar(bar) => bar.suspend(|| eprintln!("{msg}")),
            Mode::Plain { .. } => eprintln!("{msg}"),
        }
    }

    /// Clears the bar and prints one closing line.
    pub(crate) fn finish(&self) {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Mode::Bar(bar) = &self.mode {
            bar.finish_and_clear();
        }
        let elapsed = self.start.elapsed();
        let here = st.done - st.resumed;
        let resumed = if st.resumed > 0 {
            format!(", {} resumed", st.resumed)
        } else {
            String::new()
        };
        eprintln!(
            "{}: {}/{} runs, {here} run here in {} ({:.0} runs/s){resumed}, {}",
            self.label,
            st.done,
            self.total,
            human(elapsed),
            here as f64 / elapsed.as_secs_f64().max(1e-9),
            findings_text(&st.findings)
        );
    }
}

/// Progress of a search that may be bounded by time (`podsim hunt`): the wall time since
/// it started (for a budget in time) and a status line, on a terminal rewritten in place,
/// otherwise printed every `PODSIM_PROGRESS_INTERVAL_MS` milliseconds (default 5000).
pub(crate) struct Ticker {
    start: Instant,
    last: Instant,
    tty: bool,
    interval: Duration,
}

impl Ticker {
    pub(crate) fn new() -> Ticker {
        let tty = std::io::stderr().is_terminal();
        let ms = std::env::var("PODSIM_PROGRESS_INTERVAL_MS")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(if tty { 200 } else { 5000 });
        let now = Instant::now();
        Ticker {
            start: now,
            last: now,
            tty,
            interval: Duration::from_millis(ms),
        }
    }

    /// Wall time since the start.
    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Shows `line(elapsed seconds)` if the interval has passed since the last one.
    pub(crate) fn tick(&mut self, line: impl FnOnce(f64) -> String) {
        let now = Instant::now();
        if now.duration_since(self.last) < self.interval {
            return;
        }
        self.last = now;
        let text = line(self.start.elapsed().as_secs_f64());
        if self.tty {
            eprint!("\r\x1b[2K{text}");
        } else {
            eprintln!("{text}");
        }
    }

    /// Ends the status line with `line(elapsed seconds)`.
    pub(crate) fn finish(&self, line: impl FnOnce(f64) -> String) {
        let text = line(self.start.elapsed().as_secs_f64());
        if self.tty {
            eprintln!("\r\x1b[2K{text}");
        } else {
            eprintln!("{text}");
        }
    }
}
