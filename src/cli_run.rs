//! `podsim run`'s trace records, streamed as the run makes them: to the `--trace` file,
//! to the timeline's probe-failure markers, as typed transitions to the `--perfetto` file,
//! and (with `--check-determinism`) compared one
//! by one with those of a second run on another thread. No record is kept beyond a bounded
//! batch, so a run of a hundred million events needs no more memory than a short one.

use crate::model::Transition;
use crate::plot::timeline::ProbeFailures;
use crate::run::{run_streaming, RunOptions, RunOutput};
use crate::scenario::Scenario;
use crate::sim::trace::Record;
use crate::sim::SimTime;
use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

/// Takes the run's typed transitions, a batch at a time.
pub(crate) type TypedSink<'a> = dyn FnMut(&[(SimTime, Transition)]) + 'a;

/// How `--timeline` is written: its format, from `--timeline-format` or the file's
/// extension (SVG for `-`, standard output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fig(crate::cli::TimelineFormat);

impl Fig {
    /// The format of `--timeline path`; an error when neither the flag nor the extension
    /// gives one, or they disagree.
    pub(crate) fn of(path: &Path, flag: Option<crate::cli::TimelineFormat>) -> Result<Fig, String> {
        use crate::cli::TimelineFormat as F;
        if crate::scenario::file::is_stdio(path) {
            return Ok(Fig(flag.unwrap_or(F::Svg)));
        }
        let ext = match crate::plot::Format::of(path).map_err(|e| format!("--timeline {e}"))? {
            crate::plot::Format::Svg => F::Svg,
            crate::plot::Format::Png => F::Png,
        };
        match flag {
            Some(f) if f != ext => Err(format!(
                "--timeline-format {} does not match --timeline {} (the file name's extension \
                 gives the format; --timeline-format is for `--timeline -`)",
                if f == F::Svg { "svg" } else { "png" },
                path.display()
            )),
            _ => Ok(Fig(ext)),
        }
    }

    /// Draws `fig` into `path` (`-`: standard output).
    pub(crate) fn write(
        self,
        fig: &crate::plot::timeline::Timeline,
        path: &Path,
    ) -> Result<(), String> {
        use crate::cli::TimelineFormat as F;
        if !crate::scenario::file::is_stdio(path) {
            return crate::plot::write_figure(fig, path);
        }
        let fail = |e: &dyn std::fmt::Display| format!("cannot write <stdout>: {e}");
        match self.0 {
            F::Svg => {
                let svg = crate::plot::render_svg(fig).map_err(|e| fail(&e))?;
                crate::outfile::write_bytes(path, svg.as_bytes()).map_err(|e| fail(&e))
            }
            // The PNG encoder writes a file: a temporary one, copied to standard output.
            F::Png => crate::outfile::write_via_file(
                path,
                |_| PathBuf::from(format!(".podsim-timeline.tmp-{}.png", std::process::id())),
                |tmp| crate::plot::write_figure(fig, tmp),
            ),
        }
    }
}

/// What `podsim run` asked for beyond the run itself.
pub(crate) struct Wants<'a> {
    pub(crate) trace: Option<&'a Path>,
    pub(crate) perfetto: Option<&'a Path>,
    pub(crate) timeline: bool,
    pub(crate) check_determinism: bool,
}

/// The outcome of the second run of `--check-determinism`.
pub(crate) enum Second {
    /// Same trace hash.
    Same,
    /// Different hashes: the second run's, and the first differing record of each run.
    Differs {
        hash: String,
        first: Option<(String, String)>,
    },
    Panicked,
}

/// A streamed run.
pub(crate) struct Streamed {
    pub(crate) out: RunOutput,
    /// Records the run made.
    pub(crate) records: u64,
    pub(crate) probes: ProbeFailures,
    pub(crate) second: Option<Second>,
    /// The trace file, written but not yet in place (see [`TraceFile::commit`]).
    pub(crate) trace: Option<TraceFile>,
    /// The `--perfetto` file, complete but not yet in place, or the error writing it.
    pub(crate) perfetto: Option<std::io::Result<TraceFile>>,
}

/// `--trace FILE` (or `--perfetto FILE`) being written, by the rules of `crate::outfile`:
/// a regular file through a temporary file renamed into place once the run is done and
/// the file complete; a FIFO or device (`/dev/null`, a named pipe) in place; a symbolic
/// link followed, never replaced; `-` to standard output.
pub(crate) struct TraceFile {
    w: crate::outfile::Output,
    /// The first write error (nothing is written after it).
    err: Option<std::io::Error>,
}

impl TraceFile {
    fn create(path: &Path) -> std::io::Result<TraceFile> {
        Ok(TraceFile {
            w: crate::outfile::Output::create(path)?,
            err: None,
        })
    }

    fn write(&mut self, r: &Record) {
        if self.err.is_some() {
            return;
        }
        let line = serde_json::json!({
            "i": r.index,
            "atNs": r.at.0,
            "rec": r.text,
            "hash": format!("{:016x}", r.hash),
        });
        if let Err(e) = writeln!(self.w, "{line}") {
            self.err = Some(e);
        }
    }

    /// Flushes, syncs and renames the file into place.
    pub(crate) fn commit(mut self) -> std::io::Result<()> {
        match self.err.take() {
            Some(e) => Err(e),
            None => self.w.commit(),
        }
    }

    /// Leaves no file behind (a special file written in place, or standard output, keeps
    /// what it got).
    pub(crate) fn discard(self) {}
}

/// Raw bytes (the `--perfetto` file): the first error is kept and returned by
/// [`TraceFile::commit`] too.
impl Write for TraceFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(e) = &self.err {
            return Err(std::io::Error::new(e.kind(), e.to_string()));
        }
        self.w.write_all(buf).inspect_err(|e| {
            self.err = Some(std::io::Error::new(e.kind(), e.to_string()));
        })?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Puts the finished `--perfetto` file (if asked for) in place; an error writing it is
/// printed, naming the file, and exits 2.
pub(crate) fn commit_perfetto(
    file: Option<std::io::Result<TraceFile>>,
    path: Option<&Path>,
) -> Result<(), std::process::ExitCode> {
    let path = path.unwrap_or(Path::new("")).display();
    match file.map(|f| f.and_then(TraceFile::commit)) {
        None | Some(Ok(())) => Ok(()),
        Some(Err(e)) => {
            eprintln!("error: cannot write perfetto trace {path}: {e}");
            Err(std::process::ExitCode::from(2))
        }
    }
}

/// Run 1's records against run 2's, as both runs go (run 2 sends its records in
/// batches over a bounded channel, so at most a few batches wait).
struct Compare {
    rx: Option<Receiver<Vec<Record>>>,
    pending: VecDeque<Record>,
    /// The first differing record of each run (`<end of trace>` for a run that ended).
    first: Option<(String, String)>,
}

fn show(r: Option<&Record>) -> String {
    r.map_or("<end of trace>".to_string(), |r| {
        format!("#{} {} {}", r.index, r.at, r.text)
    })
}

impl Compare {
    fn next_other(&mut self) -> Option<Record> {
        while self.pending.is_empty() {
            match self.rx.as_ref()?.recv() {
                Ok(batch) => self.pending.extend(batch),
                Err(_) => {
                    self.rx = None;
                    return None;
                }
            }
        }
        self.pending.pop_front()
    }

    fn see(&mut self, r: &Record) {
        if self.first.is_some() {
            return;
        }
        let other = self.next_other();
        if !other
            .as_ref()
            .is_some_and(|o| o.at == r.at && o.text == r.text)
        {
            self.first = Some((show(Some(r)), show(other.as_ref())));
        }
    }

    /// Run 1 ended: a record run 2 still has is the first difference.
    fn finish(&mut self) {
        if self.first.is_none() {
            if let Some(o) = self.next_other() {
                self.first = Some((show(None), show(Some(&o))));
            }
        }
        // Run 2 may be waiting to send: let it go.
        self.rx = None;
    }
}

/// Runs `sc` once (twice with `--check-determinism`), streaming the records where `wants`
/// says. `run1` runs the first run (the caller wraps it to report panics). An error
/// creating an output file is returned (as the message to print) before anything runs.
pub(crate) fn run(
    sc: Arc<Scenario>,
    opts: &RunOptions,
    wants: &Wants<'_>,
    run1: impl FnOnce(&mut dyn FnMut(&[Record]), Option<&mut TypedSink<'_>>) -> RunOutput,
) -> Result<Streamed, String> {
    let create = |what: &str, p: &Path| {
        TraceFile::create(p).map_err(|e| format!("cannot write {what} {}: {e}", p.display()))
    };
    let mut trace = wants.trace.map(|p| create("trace", p)).transpose()?;
    let perfetto = wants.perfetto.map(|p| create("perfetto trace", p));
    let perfetto = match perfetto.transpose() {
        Ok(p) => p,
        Err(e) => {
            if let Some(t) = trace {
                t.discard();
            }
            return Err(e);
        }
    };
    let mut perfetto = perfetto.map(crate::run::perfetto::Perfetto::new);
    let mut probes = ProbeFailures::default();
    let mut records = 0u64;
    let (mut compare, second) = if wants.check_determinism {
        let (tx, rx) = sync_channel::<Vec<Record>>(4);
        let (sc2, opts2) = (sc.clone(), opts.clone());
        let h = std::thread::spawn(move || {
            let mut open = true;
            run_streaming(sc2, &opts2, &mut |batch| {
                open = open && tx.send(batch.to_vec()).is_ok();
            })
        });
        let c = Compare {
            rx: Some(rx),
            pending: VecDeque::new(),
            first: None,
        };
        (Some(c), Some(h))
    } else {
        (None, None)
    };
    let mut see_typed = |batch: &[(SimTime, Transition)]| {
        if let Some(p) = perfetto.as_mut() {
            p.see(batch);
        }
    };
    let typed: Option<&mut TypedSink<'_>> = if wants.perfetto.is_some() {
        Some(&mut see_typed)
    } else {
        None
    };
    let out = run1(
        &mut |batch| {
            for r in batch {
                records += 1;
                if let Some(t) = trace.as_mut() {
                    t.write(r);
                }
                if wants.timeline {
                    probes.see(r);
                }
                if let Some(c) = compare.as_mut() {
                    c.see(r);
                }
            }
        },
        typed,
    );
    let perfetto = perfetto.map(|p| p.finish(&out));
    let second = second.map(|h| {
        let mut c = compare.take().expect("a comparison with the second run");
        c.finish();
        match h.join() {
            Err(_) => Second::Panicked,
            Ok(o) if o.trace_hash == out.trace_hash => Second::Same,
            Ok(o) => Second::Differs {
                hash: o.trace_hash,
                first: c.first,
            },
        }
    });
    Ok(Streamed {
        out,
        records,
        probes,
        second,
        trace,
        perfetto,
    })
}
