//! The words of the mid-frequency transitions (pod workers' steps, local and API statuses,
//! runtime container records, config and host operations ...) as their derived `Hash`
//! feeds them to [`StableHasher`], written out field by field: the derived `Hash` of
//! [`Transition`] is one large function for every kind, whose code is fetched cold for a
//! record of a few words. Each arm feeds what the derive does: the variant's position as
//! an `isize`, then each field's `Hash` (a `u32` id as `write_u32`, a vocabulary word as
//! its text's words, a `bool` as `write_u8`, an `Option` as its discriminant as an
//! `isize` then the value, a `str` as its bytes then `0xff`, a `Vec` as its length then
//! its items). Debug builds compare every record with its derived `Hash`
//! (`check_derived`), and unit tests compare every arm.

use super::Transition;
use crate::model::{ApiContainerState, ApiContainerStatus, ApiPodStatus};
use crate::sim::trace::StableHasher;
use crate::sim::SimTime;
use std::hash::{Hash, Hasher};

/// The position of a variant in [`Transition`] (see `super::pos`).
mod pos {
    pub(super) const API_DELETE_REQUESTED: isize = 1;
    pub(super) const API_STATUS: isize = 3;
    pub(super) const API_REMOVED: isize = 4;
    pub(super) const SANDBOX_READY: isize = 8;
    pub(super) const SANDBOX_STOPPED: isize = 9;
    pub(super) const CONTAINER_RUNNING: isize = 10;
    pub(super) const SIGNAL: isize = 11;
    pub(super) const CONTAINER_EXITED: isize = 12;
    pub(super) const HOST: isize = 13;
    pub(super) const CONFIG_OP: isize = 21;
    pub(super) const WORKER: isize = 23;
    pub(super) const LOCAL_STATUS: isize = 26;
    pub(super) const PROBE_WORKER: isize = 29;
    pub(super) const PROBE_RESULT: isize = 31;
    pub(super) const API_STATUS_PATCHED: isize = 36;
    pub(super) const SYNC_STEP: isize = 38;
}

/// Feed `t`'s words if it is one of the kinds above (`true`), else nothing (`false`: the
/// caller hashes it as derived).
#[inline(always)]
pub(super) fn mid_words(t: &Transition, h: &mut StableHasher) -> bool {
    use Transition as T;
    match t {
        T::Worker { uid, what } => {
            h.write_isize(pos::WORKER);
            h.write_u32(uid.0);
            h.write_words(what.hash_words());
        }
        T::LocalStatus { uid, phase } => {
            h.write_isize(pos::LOCAL_STATUS);
            h.write_u32(uid.0);
            h.write_isize(*phase as isize);
        }
        T::ApiStatusPatched { uid, of, status } => {
            h.write_isize(pos::API_STATUS_PATCHED);
            h.write_u32(uid.0);
            h.write_u32(of.0);
            api_status_words(h, status);
        }
        T::ApiStatus { uid, phase, reason } => {
            h.write_isize(pos::API_STATUS);
            h.write_u32(uid.0);
            h.write_isize(*phase as isize);
            opt_str_words(h, reason.as_deref());
        }
        T::Host { uid, what } => {
            h.write_isize(pos::HOST);
            h.write_u32(uid.0);
            h.write_words(what.hash_words());
        }
        T::SyncStep { uid, step } => {
            h.write_isize(pos::SYNC_STEP);
            h.write_u32(uid.0);
            h.write_words(step.hash_words());
        }
        T::ConfigOp { uid, op } => {
            h.write_isize(pos::CONFIG_OP);
            h.write_u32(uid.0);
            h.write_words(op.hash_words());
        }
        T::ApiRemoved { uid, by } => {
            h.write_isize(pos::API_REMOVED);
            h.write_u32(uid.0);
            h.write_words(by.hash_words());
        }
        T::ApiDeleteRequested { uid, grace } => {
            h.write_isize(pos::API_DELETE_REQUESTED);
            h.write_u32(uid.0);
            h.write_i64(*grace);
        }
        T::SandboxReady { uid, id } | T::SandboxStopped { uid, id } => {
            h.write_isize(if matches!(t, T::SandboxReady { .. }) {
                pos::SANDBOX_READY
            } else {
                pos::SANDBOX_STOPPED
            });
            h.write_u32(uid.0);
            h.write_u32(id.0);
        }
        T::ContainerRunning { uid, id, name } => {
            h.write_isize(pos::CONTAINER_RUNNING);
            h.write_u32(uid.0);
            h.write_u32(id.0);
            name.as_str().hash(h);
        }
        T::Signal { uid, id, signal } => {
            h.write_isize(pos::SIGNAL);
            h.write_u32(uid.0);
            h.write_u32(id.0);
            h.write_words(signal.hash_words());
        }
        T::ContainerExited {
            uid,
            id,
            code,
            reason,
        } => {
            h.write_isize(pos::CONTAINER_EXITED);
            h.write_u32(uid.0);
            h.write_u32(id.0);
            h.write_u32(*code as u32);
            reason.hash(h);
        }
        T::ProbeWorker {
            uid,
            container,
            kind,
            what,
        } => {
            h.write_isize(pos::PROBE_WORKER);
            h.write_u32(uid.0);
            (**container).hash(h);
            h.write_words(super::probe_type_words(*kind));
            h.write_words(what.hash_words());
        }
        T::ProbeResult {
            uid,
            id,
            kind,
            result,
        } => {
            h.write_isize(pos::PROBE_RESULT);
            h.write_u32(uid.0);
            h.write_u32(id.0);
            h.write_words(super::probe_type_words(*kind));
            h.write_words(result.hash_words());
        }
        _ => return false,
    }
    true
}

/// An `Option<String>`'s (or `Option<&str>`'s) words: its discriminant, then the text's.
#[inline]
fn opt_str_words(h: &mut StableHasher, s: Option<&str>) {
    match s {
        None => h.write_isize(0),
        Some(s) => {
            h.write_isize(1);
            s.hash(h);
        }
    }
}

/// An `Option<SimTime>`'s words.
#[inline]
fn opt_time_words(h: &mut StableHasher, t: Option<SimTime>) {
    match t {
        None => h.write_isize(0),
        Some(t) => {
            h.write_isize(1);
            h.write_u64(t.0);
        }
    }
}

/// An [`ApiPodStatus`]'s words, in its fields' order.
fn api_status_words(h: &mut StableHasher, s: &ApiPodStatus) {
    h.write_isize(s.phase as isize);
    opt_str_words(h, s.reason.as_deref());
    opt_str_words(h, s.message.as_deref());
    h.write_u8(u8::from(s.ready));
    opt_time_words(h, s.start_time);
    h.write_usize(s.containers.len());
    for c in &s.containers {
        container_status_words(h, c);
    }
    s.conditions.hash(h);
    // `InitStatuses` hashes nothing when empty.
    if !s.init_containers.0.is_empty() {
        h.write_usize(s.init_containers.0.len());
        for c in &s.init_containers.0 {
            container_status_words(h, c);
        }
    }
}

/// An [`ApiContainerStatus`]'s words, in its fields' order.
#[inline]
fn container_status_words(h: &mut StableHasher, c: &ApiContainerStatus) {
    (*c.name).hash(h);
    state_words(h, &c.state);
    match &c.last_state {
        None => h.write_isize(0),
        Some(s) => {
            h.write_isize(1);
            state_words(h, s);
        }
    }
    h.write_u32(c.restart_count);
    h.write_u8(u8::from(c.ready));
    h.write_u8(u8::from(c.started));
    match c.container_id {
        None => h.write_isize(0),
        Some(id) => {
            h.write_isize(1);
            h.write_u32(id.0);
        }
    }
}

/// An [`ApiContainerState`]'s words: its variant's position, then its fields.
#[inline]
fn state_words(h: &mut StableHasher, s: &ApiContainerState) {
    match s {
        ApiContainerState::Waiting { reason } => {
            h.write_isize(0);
            reason.hash(h);
        }
        ApiContainerState::Running { started_at } => {
            h.write_isize(1);
            h.write_u64(started_at.0);
        }
        ApiContainerState::Terminated {
            exit_code,
            reason,
            started_at,
            finished_at,
        } => {
            h.write_isize(2);
            h.write_u32(*exit_code as u32);
            reason.hash(h);
            opt_time_words(h, *started_at);
            opt_time_words(h, *finished_at);
        }
    }
}
