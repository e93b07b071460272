//! Lifecycle hook spans for the timeline, gathered from the run's trace records: a hook
//! call begins (`cri <uid> ExecPostStart#<id> begin`, likewise `ExecPreStop`) and ends
//! (`... ok` or `... error ...`); the container of runtime id `c<id>` is named by its
//! `rt <uid> c<id> <name> running` record.

use std::collections::BTreeMap;

/// Which hook a span is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HookKind {
    PostStart,
    PreStop,
}

/// One hook call: kind, container name, begin (ns), end (ns; `None` while still running
/// at the end of the run), and whether it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HookSpan {
    pub(crate) kind: HookKind,
    pub(crate) container: String,
    pub(crate) begin: u64,
    pub(crate) end: Option<u64>,
    pub(crate) failed: bool,
}

/// The most hook spans kept (as for probe-failure markers).
const MAX_SPANS: usize = 100_000;

/// Hook spans per pod UID.
#[derive(Debug, Default)]
pub(crate) struct HookSpans {
    pub(crate) by_uid: BTreeMap<String, Vec<HookSpan>>,
    /// Container names by (uid, runtime id), from the `running` records.
    names: BTreeMap<(String, String), String>,
    kept: usize,
}

impl HookSpans {
    /// Looks at one record's text at `at` (ns).
    pub(crate) fn see(&mut self, at: u64, text: &str) {
        let w: Vec<&str> = text.split_whitespace().collect();
        match w.as_slice() {
            ["rt", uid, id, name, "running"] => {
                self.names
                    .insert((uid.to_string(), id.to_string()), name.to_string());
            }
            ["cri", uid, call, state, ..] => {
                let Some((op, id)) = call.split_once('#') else {
                    return;
                };
                let kind = match op {
                    "ExecPostStart" => HookKind::PostStart,
                    "ExecPreStop" => HookKind::PreStop,
                    _ => return,
                };
                let key = (uid.to_string(), format!("c{id}"));
                let container = self.names.get(&key).cloned().unwrap_or(key.1);
                let spans = self.by_uid.entry(uid.to_string()).or_default();
                if *state == "begin" {
                    if self.kept < MAX_SPANS {
                        self.kept += 1;
                        spans.push(HookSpan {
                            kind,
                            container,
                            begin: at,
                            end: None,
                            failed: false,
                        });
                    }
                    return;
                }
                let open = spans
                    .iter_mut()
                    .rev()
                    .find(|s| s.kind == kind && s.container == container && s.end.is_none());
                if let Some(s) = open {
                    s.end = Some(at);
                    s.failed = *state != "ok";
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_pair_begin_and_end_by_container() {
        let mut h = HookSpans::default();
        h.see(1, "rt uid-0001 c3 app running");
        h.see(1, "cri uid-0001 ExecPostStart#3 begin");
        h.see(2, "cri uid-0001 StartContainer#3 begin");
        h.see(5, "cri uid-0001 ExecPostStart#3 error PostStartHook failed");
        h.see(9, "cri uid-0001 ExecPreStop#3 begin");
        let s = &h.by_uid["uid-0001"];
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0],
            HookSpan {
                kind: HookKind::PostStart,
                container: "app".into(),
                begin: 1,
                end: Some(5),
                failed: true,
            }
        );
        assert_eq!((s[1].kind, s[1].end), (HookKind::PreStop, None));
    }
}
