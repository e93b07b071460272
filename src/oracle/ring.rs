//! The oracle's per-pod history of recent transitions, kept for a finding's diagnosis
//! (the "last transitions of ..." lines). A transition is stored as a compact [`Rec`]:
//! `Copy`, 16 bytes, without the pod's UID (the ring's owner) and with every string (a
//! container name, an error, a reason) replaced by an id in a table of distinct strings
//! ([`Syms`]). Nothing is cloned or dropped as the ring turns; the text is rendered only
//! when a finding is made, through the transition's own `Display`, so the lines are the
//! ones the trace would print.
//!
//! All rings live in one flat vector (`ring` slots per pod, indexed by UID), so a pod's
//! history costs `ring` slots of 24 bytes and no allocation of its own.

use crate::model::{
    ApiPodStatus, ConditionStatus, ConfigOpKind, ContainerId, CriFailure, CriOp, EvictionSignal,
    EvictionStep, HostOp, KillPodNowStep, NoteKind, PodCondition, PodConditionType, PodPhase,
    PodUid, ProbeCached, ProbeType, ProbeVerdict, ProbeWorkerStep, ProcessSignal, RejectReason,
    RemovedBy, SandboxId, SyncKind, SyncStepKind, Transition, UpdateType, WatchDelivery,
    WorkerStep,
};
use crate::sim::SimTime;
use std::sync::Arc;

/// The id of a distinct string in [`Syms`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Sym(u32);

impl Sym {
    /// No string: an id [`Syms`] never gives (it holds fewer than `u32::MAX` strings).
    pub(crate) const NONE: Sym = Sym(u32::MAX);
}

/// A table of distinct strings: container names, probe names, errors, reasons. Its size
/// follows the scenario's vocabulary, not the number of pods or transitions. Looked up on
/// every probe: an open-addressing hash table (linear probing) finds a name with
/// one pass over its bytes and one comparison. Ids are given in order of first sight, and
/// the table is never iterated, so nothing depends on hash order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Syms {
    texts: Vec<Box<str>>,
    /// `id + 1` of the text hashed to each slot (0: empty); a power of two long, at most
    /// half full.
    slots: Vec<u32>,
    /// Static texts (a container's exit reason), by id; a handful per run.
    statics: Vec<&'static str>,
    /// Hints for [`Syms::intern_shared`]: sets of two slots (the set chosen by the
    /// string's address), each slot a shared string interned before and its id. Holding
    /// the `Arc` keeps its allocation alive, so an equal address is the same string. Two
    /// ways per set: two names whose addresses pick the same set both stay found (with
    /// one way, two probe workers sharing a slot took it from each other at every probe).
    /// Allocated at the first shared string, a fixed number of sets, so a set's index
    /// (below [`HINT_SETS`] by construction) needs no bounds check.
    hints: Option<Box<[HintSet; HINT_SETS]>>,
    /// The id [`Syms::intern`] gave last: the same text again (a pod's sync error, retried)
    /// is found by one comparison, without hashing it.
    last: Option<Sym>,
}

/// Sets of [`Syms::hints`] (two slots each): a power of two; the slots are well above the
/// number of probe workers of a node (each holds its own copy of its container's name, and
/// a run starts a new worker for each new container). 96 KiB per run, and the names it
/// holds.
const HINT_SET_BITS: u32 = 11;
const HINT_SETS: usize = 1 << HINT_SET_BITS;
/// Slots of [`Syms::hints`], two a set.
#[cfg(test)]
const HINTS: usize = 2 * HINT_SETS;

/// One set of [`Syms::hints`]: two slots, each a shared string and its id.
type HintSet = [Option<(Arc<str>, Sym)>; 2];

/// The set of [`Syms::hints`] of a shared string (below [`HINT_SETS`]): Fibonacci
/// hashing of its address (the top bits of the product).
#[inline]
fn hint_set(s: &Arc<str>) -> usize {
    let addr = s.as_ptr() as usize as u64;
    (addr.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - HINT_SET_BITS)) as usize
}

/// The id of a static text in [`Syms`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StaticSym(u32);

impl Syms {
    /// The id of `s`, added if new.
    pub(crate) fn intern(&mut self, s: &str) -> Sym {
        if let Some(k) = self.last {
            if *self.texts[k.0 as usize] == *s {
                return k;
            }
        }
        let k = self.intern_hashed(s);
        self.last = Some(k);
        k
    }

    /// [`Syms::intern`] through the hash table.
    fn intern_hashed(&mut self, s: &str) -> Sym {
        if self.slots.len() < 2 * (self.texts.len() + 1) {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = str_hash(s) as usize & mask;
        loop {
            match self.slots[i] {
                0 => break,
                k if *self.texts[k as usize - 1] == *s => return Sym(k - 1),
                _ => i = (i + 1) & mask,
            }
        }
        let id = u32::try_from(self.texts.len())
            .ok()
            .filter(|id| *id != Sym::NONE.0)
            .expect("fewer than 2^32 - 1 distinct strings");
        self.texts.push(s.into());
        self.slots[i] = id + 1;
        Sym(id)
    }

    /// [`Syms::intern`] of a string shared by the model (a probe worker's container name,
    /// one `Arc` cloned into each of its transitions): the same allocation is found again
    /// by its address, without hashing its bytes.
    #[inline]
    pub(crate) fn intern_shared(&mut self, s: &Arc<str>) -> Sym {
        match self.hinted(s) {
            Some(id) => id,
            None => self.intern_shared_slow(s, hint_set(s)),
        }
    }

    /// The id of `s` when a slot of its set of the hints holds it (no change to the table).
    #[inline]
    pub(crate) fn hinted(&self, s: &Arc<str>) -> Option<Sym> {
        let [first, second] = &self.hints.as_deref()?[hint_set(s)];
        match (first, second) {
            (Some((a, id)), _) if Arc::ptr_eq(a, s) => Some(*id),
            (_, Some((a, id))) if Arc::ptr_eq(a, s) => Some(*id),
            _ => None,
        }
    }

    /// [`Syms::intern_shared`] of a string in neither slot of its set of the hints:
    /// interned, and put in the set's first slot; the string that was there moves to the
    /// second (whose string, if any, is dropped).
    #[cold]
    #[inline(never)]
    fn intern_shared_slow(&mut self, s: &Arc<str>, set: usize) -> Sym {
        let id = self.intern(s);
        let hints = self.hints.get_or_insert_with(|| {
            let sets: Box<[HintSet]> = vec![[None, None]; HINT_SETS].into_boxed_slice();
            sets.try_into().expect("HINT_SETS sets")
        });
        let [first, second] = &mut hints[set];
        *second = first.replace((s.clone(), id));
        id
    }

    /// Twice the slots (at least 16), every text placed again.
    fn grow(&mut self) {
        let n = (self.slots.len() * 2).max(16);
        self.slots = vec![0; n];
        for (k, t) in self.texts.iter().enumerate() {
            let mut i = str_hash(t) as usize & (n - 1);
            while self.slots[i] != 0 {
                i = (i + 1) & (n - 1);
            }
            self.slots[i] = k as u32 + 1;
        }
    }

    /// Is `id` the id of `s`? (Any id: one the table never gave holds no text.)
    #[inline]
    pub(crate) fn holds(&self, id: Sym, s: &str) -> bool {
        self.texts.get(id.0 as usize).is_some_and(|t| **t == *s)
    }

    /// The id of `s` if it is in the table (no change to it).
    pub(crate) fn find(&self, s: &str) -> Option<Sym> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = str_hash(s) as usize & mask;
        loop {
            match self.slots[i] {
                0 => return None,
                k if *self.texts[k as usize - 1] == *s => return Some(Sym(k - 1)),
                _ => i = (i + 1) & mask,
            }
        }
    }

    pub(crate) fn text(&self, id: Sym) -> &str {
        &self.texts[id.0 as usize]
    }

    /// The id of the static text `s`, added if new.
    pub(crate) fn intern_static(&mut self, s: &'static str) -> StaticSym {
        let i = match self.statics.iter().position(|x| *x == s) {
            Some(i) => i,
            None => {
                self.statics.push(s);
                self.statics.len() - 1
            }
        };
        StaticSym(i as u32)
    }
}

/// The hash of a string for [`Syms`]' table: eight bytes at a time (a rotate, an xor and
/// a multiply each, as FxHash does), then the high half folded into the low bits the table
/// uses. (A sync error is a hundred bytes long; byte at a time, hashing it cost more than
/// the rest of its transition.)
fn str_hash(s: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = s.len() as u64;
    let mut chunks = s.as_bytes().chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// An `i64` stored as two `u32` halves: 4-byte aligned, so a [`Rec`] stays 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct I64([u32; 2]);

impl I64 {
    pub(crate) fn new(v: i64) -> Self {
        let u = v as u64;
        I64([u as u32, (u >> 32) as u32])
    }
    fn get(self) -> i64 {
        ((u64::from(self.0[1]) << 32) | u64::from(self.0[0])) as i64
    }
}

/// One transition of a pod, without its UID (the ring's owner) and with its strings
/// interned. Transitions with a value that does not fit are split into two variants
/// (`CriBeginTimeout`, `SyncBeginGrace`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Rec {
    /// An empty slot.
    #[default]
    Empty,
    /// `ApiCreated` whose name is the name of the pod's spec (always, today).
    Created,
    /// `ApiCreated` with another name.
    CreatedNamed(Sym),
    DeleteRequested(I64),
    ForceDeleted,
    ConditionSet(Sym, ConditionStatus),
    Status(PodPhase, Option<Sym>),
    Removed(RemovedBy),
    Watch(WatchDelivery),
    CriBegin(CriOp, u32),
    CriBeginTimeout(CriOp, u32, I64),
    CriEnd(CriOp, u32, Option<CriFailure>),
    SandboxReady(SandboxId),
    SandboxStopped(SandboxId),
    Running(ContainerId, Sym),
    Signal(ContainerId, ProcessSignal),
    Exited(ContainerId, i32, StaticSym),
    Host(HostOp),
    Rejected(RejectReason),
    Evict(EvictionSignal, I64),
    Eviction(EvictionStep),
    Config(ConfigOpKind),
    UpdatePod(UpdateType, bool),
    Worker(WorkerStep),
    SyncBegin(SyncKind),
    SyncBeginGrace(SyncKind, I64),
    SyncEnd(SyncKind, Option<Sym>),
    LocalStatus(PodPhase),
    LocalStatusDropped(PodUid),
    ProbeWorker(Sym, ProbeType, ProbeWorkerStep),
    Probe(Sym, ProbeType, ProbeVerdict),
    ProbeResult(ContainerId, ProbeType, ProbeCached),
    Note(NoteKind),
    KillPodNow(I64, KillPodNowStep, bool),
    Step(SyncStepKind),
    /// `ApiStatusPatched` of object `uid` (the mirror pod of a static pod, or the pod).
    Patched(PodUid, PodPhase, bool),
}

// The point of the record: keep a slot (with its time) at 24 bytes.
const _: () = assert!(std::mem::size_of::<Rec>() <= 16);
const _: () = assert!(std::mem::size_of::<(SimTime, Rec)>() <= 24);

impl Rec {
    /// The record of `tr`, a transition of a pod (`None` for a node-level one, and for the
    /// manifest removal the trace never records). Inlined into the oracle's one caller.
    #[inline]
    pub(crate) fn of(tr: &Transition, syms: &mut Syms) -> Option<Rec> {
        use Transition as T;
        Some(match tr {
            T::ApiCreated { name, spec, .. } => {
                if *name == spec.name {
                    Rec::Created
                } else {
                    Rec::CreatedNamed(syms.intern(name))
                }
            }
            T::ApiDeleteRequested { grace, .. } => Rec::DeleteRequested(I64::new(*grace)),
            T::ApiForceDeleted { .. } => Rec::ForceDeleted,
            T::ApiConditionSet { condition, .. } => {
                Rec::ConditionSet(syms.intern(condition.kind.as_str()), condition.status)
            }
            T::ApiStatus { phase, reason, .. } => {
                Rec::Status(*phase, reason.as_deref().map(|r| syms.intern(r)))
            }
            T::ApiRemoved { by, .. } => Rec::Removed(*by),
            T::WatchDelivered { kind, .. } => Rec::Watch(*kind),
            T::CriBegin {
                call,
                target,
                timeout_s,
                ..
            } => match timeout_s {
                Some(t) => Rec::CriBeginTimeout(*call, *target, I64::new(*t)),
                None => Rec::CriBegin(*call, *target),
            },
            T::CriEnd {
                call,
                target,
                error,
                ..
            } => Rec::CriEnd(*call, *target, *error),
            T::SandboxReady { id, .. } => Rec::SandboxReady(*id),
            T::SandboxStopped { id, .. } => Rec::SandboxStopped(*id),
            T::ContainerRunning { id, name, .. } => Rec::Running(*id, syms.intern(name)),
            T::Signal { id, signal, .. } => Rec::Signal(*id, *signal),
            T::ContainerExited {
                id, code, reason, ..
            } => Rec::Exited(*id, *code, syms.intern_static(reason)),
            T::Host { what, .. } => Rec::Host(*what),
            T::PodRejected { reason, .. } => Rec::Rejected(*reason),
            T::Evict { signal, grace, .. } => Rec::Evict(*signal, I64::new(*grace)),
            T::Eviction { what, .. } => Rec::Eviction(*what),
            T::ConfigOp { op, .. } => Rec::Config(*op),
            T::UpdatePod {
                ty, runtime_only, ..
            } => Rec::UpdatePod(*ty, *runtime_only),
            T::Worker { what, .. } => Rec::Worker(*what),
            T::SyncBegin { kind, grace, .. } => match grace {
                Some(g) => Rec::SyncBeginGrace(*kind, I64::new(*g)),
                None => Rec::SyncBegin(*kind),
            },
            T::SyncEnd { kind, error, .. } => {
                Rec::SyncEnd(*kind, error.as_deref().map(|e| syms.intern(e)))
            }
            T::LocalStatus { phase, .. } => Rec::LocalStatus(*phase),
            T::LocalStatusDropped { now_of, .. } => Rec::LocalStatusDropped(*now_of),
            T::ProbeWorker {
                container,
                kind,
                what,
                ..
            } => Rec::ProbeWorker(syms.intern_shared(container), *kind, *what),
            T::Probe {
                container,
                kind,
                result,
                ..
            } => Rec::Probe(syms.intern_shared(container), *kind, *result),
            T::ProbeResult {
                id, kind, result, ..
            } => Rec::ProbeResult(*id, *kind, *result),
            T::Note { what, .. } => Rec::Note(*what),
            T::KillPodNow {
                ch, what, evict, ..
            } => Rec::KillPodNow(I64::new(*ch as i64), *what, *evict),
            T::SyncStep { step, .. } => Rec::Step(*step),
            T::ApiStatusPatched { uid, status, .. } => {
                Rec::Patched(*uid, status.phase, status.ready)
            }
            T::StaticManifestRemoved { .. }
            | T::Logind { .. }
            | T::PowerOff { .. }
            | T::NodeMemoryAvailable { .. }
            | T::NodeFsPinned { .. }
            | T::NodePidAvailable { .. }
            | T::ImageRemoved { .. }
            | T::NodeReclaim { .. }
            | T::ImageGc { .. }
            | T::NodeCondition { .. }
            | T::Relist { .. }
            | T::Housekeeping
            | T::Shutdown { .. }
            | T::NodeReady { .. }
            | T::KubeletProcess { .. }
            | T::ShutdownGroup { .. } => return None,
        })
    }

    /// The record as the trace prints it, for pod `uid` named `name` (the name of its spec).
    pub(crate) fn render(self, uid: PodUid, name: &str, syms: &Syms) -> String {
        match self {
            Rec::Empty => String::new(),
            // Not rebuilt as a transition: that needs the pod's whole spec.
            Rec::Created => format!("api {uid} created {name}"),
            Rec::CreatedNamed(n) => format!("api {uid} created {}", syms.text(n)),
            rec => rec.transition(uid, syms).to_string(),
        }
    }

    /// The transition again, with what its `Display` shows (fields it does not show are
    /// defaults).
    fn transition(self, uid: PodUid, syms: &Syms) -> Transition {
        use Transition as T;
        let text = |s: Sym| syms.text(s).to_string();
        match self {
            Rec::Empty | Rec::Created | Rec::CreatedNamed(_) => {
                unreachable!("rendered without a transition")
            }
            Rec::DeleteRequested(g) => T::ApiDeleteRequested {
                uid,
                grace: g.get(),
            },
            Rec::ForceDeleted => T::ApiForceDeleted { uid },
            Rec::ConditionSet(kind, status) => T::ApiConditionSet {
                uid,
                condition: Box::new(PodCondition::new(
                    PodConditionType::parse(syms.text(kind)),
                    status,
                )),
            },
            Rec::Status(phase, reason) => T::ApiStatus {
                uid,
                phase,
                reason: reason.map(text),
            },
            Rec::Removed(by) => T::ApiRemoved { uid, by },
            Rec::Watch(kind) => T::WatchDelivered { uid, kind },
            Rec::CriBegin(call, target) => T::CriBegin {
                uid,
                call,
                target,
                timeout_s: None,
            },
            Rec::CriBeginTimeout(call, target, t) => T::CriBegin {
                uid,
                call,
                target,
                timeout_s: Some(t.get()),
            },
            Rec::CriEnd(call, target, error) => T::CriEnd {
                uid,
                call,
                target,
                error,
            },
            Rec::SandboxReady(id) => T::SandboxReady { uid, id },
            Rec::SandboxStopped(id) => T::SandboxStopped { uid, id },
            Rec::Running(id, name) => T::ContainerRunning {
                uid,
                id,
                name: text(name),
            },
            Rec::Signal(id, signal) => T::Signal { uid, id, signal },
            Rec::Exited(id, code, reason) => T::ContainerExited {
                uid,
                id,
                code,
                reason: syms.statics[reason.0 as usize],
            },
            Rec::Host(what) => T::Host { uid, what },
            Rec::Rejected(reason) => T::PodRejected { uid, reason },
            Rec::Evict(signal, grace) => T::Evict {
                uid,
                signal,
                grace: grace.get(),
            },
            Rec::Eviction(what) => T::Eviction { uid, what },
            Rec::Config(op) => T::ConfigOp { uid, op },
            Rec::UpdatePod(ty, runtime_only) => T::UpdatePod {
                uid,
                ty,
                runtime_only,
            },
            Rec::Worker(what) => T::Worker { uid, what },
            Rec::SyncBegin(kind) => T::SyncBegin {
                uid,
                kind,
                grace: None,
            },
            Rec::SyncBeginGrace(kind, g) => T::SyncBegin {
                uid,
                kind,
                grace: Some(g.get()),
            },
            Rec::SyncEnd(kind, error) => T::SyncEnd {
                uid,
                kind,
                error: error.map(text),
            },
            Rec::LocalStatus(phase) => T::LocalStatus { uid, phase },
            Rec::LocalStatusDropped(now_of) => T::LocalStatusDropped { uid, now_of },
            Rec::ProbeWorker(c, kind, what) => T::ProbeWorker {
                uid,
                container: Arc::from(syms.text(c)),
                kind,
                what,
            },
            Rec::Probe(c, kind, result) => T::Probe {
                uid,
                container: Arc::from(syms.text(c)),
                kind,
                result,
            },
            Rec::ProbeResult(id, kind, result) => T::ProbeResult {
                uid,
                id,
                kind,
                result,
            },
            Rec::Note(what) => T::Note { uid, what },
            Rec::KillPodNow(ch, what, evict) => T::KillPodNow {
                uid,
                ch: ch.get() as u64,
                what,
                evict,
            },
            Rec::Step(step) => T::SyncStep { uid, step },
            Rec::Patched(object, phase, ready) => T::ApiStatusPatched {
                uid: object,
                of: uid,
                status: Arc::new(ApiPodStatus {
                    phase,
                    ready,
                    ..Default::default()
                }),
            },
        }
    }
}

/// Every pod's ring, in one vector: pod `uid`'s slots are `ring * uid .. ring * (uid + 1)`.
/// A slot never written holds [`Rec::Empty`] (no transition's record is empty), so a ring
/// needs no count of its records: a push is one store of the slot and one of its position.
///
/// Rings of no slots ([`Rings::unkept`]) keep no record: a push only says whether the pod
/// has its place (as it would with slots), and a pod's history is empty. A run's first
/// pass keeps them so (a finding's history comes from running it again, see
/// `crate::run::FindingHistory`).
#[derive(Clone, Debug)]
pub(crate) struct Rings {
    /// Slots per pod (at most 255; none: no history kept).
    ring: usize,
    slots: Vec<(SimTime, Rec)>,
    /// Per pod: the slot written next (its oldest record once the ring is full). Its
    /// length says which pods have their place (with or without slots).
    next: Vec<u8>,
    /// The position after each position: `k + 1`, or 0 after the ring's last slot. A push
    /// reads its new position here instead of comparing with the ring's size, so the
    /// size and a zero are not held while the record is stored (no register to save on
    /// the oracle's quiet-probe path). Indexed by a `u8`: no bounds check. Held in place,
    /// not boxed: a push reads it at a fixed offset from the oracle it already holds, with
    /// no pointer to load and keep in a register of its own.
    succ: [u8; 256],
}

impl Default for Rings {
    fn default() -> Self {
        Rings {
            ring: 0,
            slots: Vec::new(),
            next: Vec::new(),
            succ: succ_table(0),
        }
    }
}

/// [`Rings::succ`] of rings of `ring` slots.
fn succ_table(ring: usize) -> [u8; 256] {
    std::array::from_fn(|k| if k + 1 == ring { 0 } else { (k + 1) as u8 })
}

impl Rings {
    /// Rings of `ring` slots, with room for `pods` pods (UIDs below `pods`).
    pub(crate) fn new(ring: usize, pods: usize) -> Self {
        assert!(ring > 0 && ring <= usize::from(u8::MAX), "ring size {ring}");
        Self::with_slots(ring, pods)
    }

    /// Rings that keep no record, with room for `pods` pods: every push is only the test
    /// that the pod has its place, and [`Rings::of`] is empty.
    pub(crate) fn unkept(pods: usize) -> Self {
        Self::with_slots(0, pods)
    }

    /// Whether pushes are kept.
    pub(crate) fn kept(&self) -> bool {
        self.ring != 0
    }

    fn with_slots(ring: usize, pods: usize) -> Self {
        Rings {
            ring,
            slots: Vec::with_capacity(ring * pods),
            next: Vec::with_capacity(pods),
            succ: succ_table(ring),
        }
    }

    /// No records, the same size of ring.
    pub(crate) fn emptied(&self) -> Self {
        Rings {
            ring: self.ring,
            succ: self.succ,
            ..Default::default()
        }
    }

    /// Add `rec` at `at` to the ring of `uid`, over its oldest record when full.
    #[inline]
    pub(crate) fn push(&mut self, uid: PodUid, at: SimTime, rec: Rec) {
        debug_assert!(
            !matches!(rec, Rec::Empty),
            "an empty record is an unused slot"
        );
        let i = uid.0 as usize;
        let ring = self.ring;
        // One bounds check on the common path (the slot index below has its own).
        let n = match self.next.get_mut(i) {
            Some(n) => n,
            None => Self::grow(&mut self.next, &mut self.slots, ring, i),
        };
        if ring == 0 {
            return;
        }
        let next = usize::from(*n);
        debug_assert_eq!(
            usize::from(self.succ[next]),
            (next + 1) % ring,
            "the position after {next}"
        );
        *n = self.succ[next];
        self.slots[i * ring + next] = (at, rec);
    }

    /// [`Rings::push`] when `uid` has a ring already (else nothing, and false): no call on
    /// its way, for the oracle's direct paths.
    #[inline]
    pub(crate) fn try_push(&mut self, uid: PodUid, at: SimTime, rec: Rec) -> bool {
        let i = uid.0 as usize;
        if i >= self.next.len() {
            return false;
        }
        if self.ring == 0 {
            return true;
        }
        let n = &mut self.next[i];
        let next = usize::from(*n);
        let Some(slot) = self.slots.get_mut(i * self.ring + next) else {
            return false;
        };
        // The position moves on before the slot is written: the position and its place
        // are then dead while the record is stored, so fewer values are live at once.
        debug_assert_eq!(
            usize::from(self.succ[next]),
            (next + 1) % self.ring,
            "the position after {next}"
        );
        *n = self.succ[next];
        *slot = (at, rec);
        true
    }

    /// [`Rings::try_push`] for the oracle's quiet-probe path, where one register more is
    /// one saved: the position moves on before the slot is even found, so the position and
    /// its place are dead while the record is stored. The slot is indexed, not looked up:
    /// a pod with a position has its slots ([`Rings::grow`] makes both), so the index
    /// check is a panic that never happens, and nothing is kept for it. (On the direct
    /// paths, which have registers to spare, the panic's arguments cost an instruction:
    /// they keep [`Rings::try_push`].)
    #[inline(always)]
    pub(crate) fn try_push_probe(&mut self, uid: PodUid, at: SimTime, rec: Rec) -> bool {
        let i = uid.0 as usize;
        if i >= self.next.len() {
            return false;
        }
        // No history kept: the pod has its place, which is all the caller asks.
        if self.ring == 0 {
            return true;
        }
        let n = &mut self.next[i];
        let next = usize::from(*n);
        debug_assert_eq!(
            usize::from(self.succ[next]),
            (next + 1) % self.ring,
            "the position after {next}"
        );
        *n = self.succ[next];
        self.slots[i * self.ring + next] = (at, rec);
        true
    }

    /// Room for the rings of UIDs up to `i`: the next slot of `i`'s (its first). It takes
    /// the two vectors it grows, not the rings: the caller reads [`Rings::succ`] while it
    /// holds the position.
    #[cold]
    #[inline(never)]
    fn grow<'a>(
        next: &'a mut Vec<u8>,
        slots: &mut Vec<(SimTime, Rec)>,
        ring: usize,
        i: usize,
    ) -> &'a mut u8 {
        next.resize(i + 1, 0);
        slots.resize((i + 1) * ring, (SimTime(0), Rec::Empty));
        &mut next[i]
    }

    /// The records of `uid`, oldest first.
    pub(crate) fn of(&self, uid: PodUid) -> impl Iterator<Item = (SimTime, Rec)> + '_ {
        let i = uid.0 as usize;
        // A pod never pushed to has no slots: no records.
        let (next, ring) = match self.next.get(i) {
            Some(n) => (usize::from(*n), self.ring),
            None => (0, 0),
        };
        (0..ring)
            .map(move |k| self.slots[i * self.ring + (next + k) % ring])
            .filter(|(_, rec)| !matches!(rec, Rec::Empty))
    }
}

/// One record of the node's history ([`NodeRing`]): the two frequent kinds, a relist and
/// a housekeeping, by value (no allocation, nothing to drop); any other transition whole.
#[derive(Clone, Debug)]
pub(crate) enum NodeRec {
    Relist(u32),
    Housekeeping,
    Other(Box<Transition>),
}

impl NodeRec {
    #[inline]
    fn of(tr: &Transition) -> Self {
        match *tr {
            Transition::Relist { changed } => NodeRec::Relist(changed),
            Transition::Housekeeping => NodeRec::Housekeeping,
            _ => NodeRec::Other(Box::new(tr.clone())),
        }
    }
}

/// As the trace prints the transition.
impl std::fmt::Display for NodeRec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeRec::Relist(changed) => Transition::Relist { changed: *changed }.fmt(f),
            NodeRec::Housekeeping => Transition::Housekeeping.fmt(f),
            NodeRec::Other(tr) => tr.fmt(f),
        }
    }
}

/// The node's last transitions (a node-level finding's diagnosis), oldest first: a ring
/// of `N` slots written in place, so a push is one store (and the drop of the record it
/// replaces), with no queue to shift; the two frequent kinds are stored without a clone.
#[derive(Clone, Debug)]
pub(crate) struct NodeRing<const N: usize> {
    /// Up to `N` records; once full, `next` is the oldest.
    slots: Vec<(SimTime, NodeRec)>,
    next: usize,
    /// False: no record is kept ([`NodeRing::unkept`]).
    keep: bool,
}

impl<const N: usize> Default for NodeRing<N> {
    fn default() -> Self {
        NodeRing {
            slots: Vec::new(),
            next: 0,
            keep: true,
        }
    }
}

impl<const N: usize> NodeRing<N> {
    /// A ring that keeps no record (pushes do nothing; [`NodeRing::iter`] is empty).
    pub(crate) fn unkept() -> Self {
        NodeRing {
            keep: false,
            ..Default::default()
        }
    }

    /// Add `tr` (a node-level transition) at `at`, over the oldest record when full.
    #[inline]
    pub(crate) fn push(&mut self, at: SimTime, tr: &Transition) {
        if self.keep {
            self.push_rec(at, NodeRec::of(tr));
        }
    }

    /// [`NodeRing::push`] of a record made by the caller (the oracle's direct paths make
    /// a relist's or a housekeeping's without the clone of any other kind). Only a slot
    /// whose record owns nothing (a relist's or a housekeeping's, the frequent kinds) is
    /// written here: the store drops nothing, so the path calls nothing and saves no
    /// register. The first lap and a slot holding a boxed transition take
    /// [`NodeRing::push_slow`].
    #[inline]
    pub(crate) fn push_rec(&mut self, at: SimTime, rec: NodeRec) {
        if !self.keep {
            return;
        }
        match self.slots.get_mut(self.next) {
            Some(slot) if !matches!(slot.1, NodeRec::Other(_)) => {
                *slot = (at, rec);
                self.next = if self.next + 1 == N { 0 } else { self.next + 1 };
            }
            _ => self.push_slow(at, rec),
        }
    }

    /// [`NodeRing::push_rec`] on the first lap (a new slot), or over a boxed transition
    /// (dropped here).
    #[cold]
    #[inline(never)]
    fn push_slow(&mut self, at: SimTime, rec: NodeRec) {
        match self.slots.get_mut(self.next) {
            Some(slot) => *slot = (at, rec),
            None => {
                if self.slots.capacity() == 0 {
                    self.slots.reserve_exact(N);
                }
                self.slots.push((at, rec));
            }
        }
        self.next = if self.next + 1 == N { 0 } else { self.next + 1 };
    }

    /// The records, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(SimTime, NodeRec)> + '_ {
        // Until the ring is full, `next` is its length: the split puts nothing first.
        let (newer, older) = self.slots.split_at(self.next.min(self.slots.len()));
        older.iter().chain(newer)
    }
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
