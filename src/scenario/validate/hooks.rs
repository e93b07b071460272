//! `lifecycle.postStart` / `lifecycle.preStop` of a container, and what the manifest sets
//! in its `behaviour` (a `sleep` hook's seconds, the memory limit the OOM killer enforces).
//!
//! Handler kinds follow v1.31 `pkg/kubelet/lifecycle/handlers.go`: `exec` and `httpGet` run
//! for the container's `postStartDuration` / `preStopDuration`; `sleep` (the
//! `PodLifecycleSleepAction` gate, on by default since v1.30) is the kubelet's own wait of
//! its `seconds`; `tcpSocket` passes API validation but the handler runner has no case for
//! it and fails at once, so a postStart `tcpSocket` hook always fails (the container is
//! killed) and a preStop one does nothing (the stop goes on at once).

use super::primitives::{exactly_one, int, obj, Cx, Obj, Unknown};
use crate::model::{Behaviour, ContainerSpec, HookHandler};
use crate::scenario::schema::{Kind, Node};
use crate::sim::Dur;
use std::collections::BTreeMap;

/// A container's `lifecycle` as parsed.
#[derive(Default)]
pub(super) struct Lifecycle {
    pub(super) post_start: Option<HookHandler>,
    pub(super) pre_stop: Option<HookHandler>,
    /// Whether the preStop hook runs.
    pub(super) has_pre_stop: bool,
    /// The preStop `sleep` action's seconds.
    pub(super) pre_stop_sleep: Option<u64>,
}

const HANDLERS: [&str; 4] = ["exec", "httpGet", "tcpSocket", "sleep"];

/// `lifecycle` under container object `o` (if written).
pub(super) fn lifecycle(cx: &mut Cx, o: &Obj, tgps: i64) -> Lifecycle {
    let mut out = Lifecycle::default();
    let Some(l) = o.get("lifecycle") else {
        return out;
    };
    let lp = o.at("lifecycle");
    let Some(lo) = obj(cx, l, &lp, &["postStart", "preStop"], Unknown::Note) else {
        return out;
    };
    out.post_start = hook(cx, &lo, "postStart", tgps);
    out.pre_stop = hook(cx, &lo, "preStop", tgps);
    out.has_pre_stop = out.pre_stop.is_some();
    if let Some(HookHandler::Sleep(s)) = out.pre_stop {
        out.pre_stop_sleep = Some(s);
    }
    out
}

/// One hook's handler (`None` if absent or invalid).
fn hook(cx: &mut Cx, lo: &Obj, key: &str, tgps: i64) -> Option<HookHandler> {
    let n = lo.get(key)?;
    let p = lo.at(key);
    let ho = obj(cx, n, &p, &HANDLERS, Unknown::Note)?;
    let (k, v) = exactly_one(cx, &ho, &HANDLERS, &format!("a {key} hook"), None)?;
    let kind = match k.name.as_str() {
        "exec" => HookHandler::Exec,
        "httpGet" => HookHandler::HttpGet,
        "tcpSocket" => {
            let m = if key == "postStart" {
                "accepted, but v1.31's kubelet cannot run a tcpSocket hook: the hook fails at \
                 once (FailedPostStartHook) and the container is killed and restarted"
            } else {
                "no effect: v1.31's kubelet cannot run a tcpSocket hook: it fails at once \
                 (FailedPreStopHook) and the stop goes on"
            };
            cx.note(k.loc, &ho.at("tcpSocket"), m);
            HookHandler::TcpSocket
        }
        _ => {
            let what = format!("the `sleep` action of a {key} hook");
            super::gates::needs(cx, "PodLifecycleSleepAction", k.loc, &ho.at("sleep"), &what);
            let secs = super::pods::sleep_seconds(cx, v, &ho.at("sleep"), tgps)?;
            HookHandler::Sleep(secs)
        }
    };
    Some(kind)
}

/// What a container's manifest sets in its behaviour: the postStart `sleep` action's
/// seconds (the manifest wins over `postStartDuration`, which gets a note), the memory
/// limit, and notes for `postStart*` keys that cannot have an effect.
pub(super) fn manifest_behaviour(
    cx: &mut Cx,
    behaviour: &mut BTreeMap<String, Behaviour>,
    containers: &[&ContainerSpec],
    node: Option<&Node>,
    bp: &str,
) {
    for c in containers {
        let b = behaviour.entry(c.name.clone()).or_default();
        b.memory_limit_bytes = c.limits.memory_bytes;
        let own = entry(node, &c.name);
        let duration = entry(own, "postStartDuration");
        let exit = entry(own, "postStartExitCode");
        let why = match c.post_start.0 {
            None => Some("no effect: the container has no postStart hook"),
            Some(HookHandler::Sleep(_)) => Some(
                "no effect: the container's postStart hook is the `sleep` action, which lasts \
                 its seconds and cannot fail",
            ),
            Some(HookHandler::TcpSocket) => {
                Some("no effect: a tcpSocket postStart hook fails at once in v1.31")
            }
            Some(HookHandler::Exec | HookHandler::HttpGet) => None,
        };
        if let Some(why) = why {
            for (d, k) in [(duration, "postStartDuration"), (exit, "postStartExitCode")] {
                if let Some(d) = d {
                    cx.note(d.loc, &format!("{bp}.{}.{k}", c.name), why);
                }
            }
        }
        match c.post_start.0 {
            Some(HookHandler::Sleep(secs)) => {
                b.post_start_sleep = true;
                b.post_start_duration = Dur::secs(secs);
                b.post_start_exit_code = 0;
            }
            Some(HookHandler::TcpSocket) => {
                b.post_start_duration = Dur::ZERO;
                b.post_start_exit_code = 1;
            }
            _ => {}
        }
    }
}

/// The value under `key` in a mapping node.
fn entry<'n>(n: Option<&'n Node>, key: &str) -> Option<&'n Node> {
    match &n?.kind {
        Kind::Map(m) => m.iter().find(|(k, _)| k.name == key).map(|(_, v)| v),
        _ => None,
    }
}

/// `behaviour.<c>.postStartExitCode`'s bounds.
pub(super) fn post_start_exit_code(cx: &mut Cx, n: Option<&Node>, p: &str) -> Option<i32> {
    int(cx, n, p, 0, 255).map(|v| v as i32)
}
