//! The checkers: one per concern, each owning the invariants it checks (their table rows,
//! their state, their checks). They see every transition after [`Facts`] took it in, in a
//! fixed order (see [`Checkers`]), and report into [`Findings`].

pub(crate) mod api;
pub(crate) mod disk_reclaim;
pub(crate) mod eviction;
pub(crate) mod hooks;
pub(crate) mod init_containers;
pub(crate) mod kills;
pub(crate) mod liveness;
pub(crate) mod probes;
pub(crate) mod shutdown;
pub(crate) mod static_pods;
pub(crate) mod sync;
pub(crate) mod teardown;
pub(crate) mod worker;

use super::facts::Facts;
use super::findings::Findings;
use super::ring::Sym;
use crate::model::{
    CriOp, PodUid, ProbeType, ProbeVerdict, ProcessEvent, SyncKind, Transition, WorkerStep,
};
use crate::sim::{Dur, SimTime};

/// Liveness: time allowed on top of the grace period (sync ticker, PLEG relist, status
/// writes, CRI latencies, one post-kill verification retry).
pub(crate) const SLACK: Dur = Dur::secs(60);
/// Liveness: extra time per failed sync or CRI call of the pod (one pod-worker back-off of
/// 10-15 s, and the retry).
pub(crate) const PER_ERROR: Dur = Dur::secs(20);
/// Node shutdown, killPodNow: slack on a step's deadline (event ordering, latencies).
pub(crate) const STEP_SLACK: Dur = Dur::secs(1);

/// The kinds of transition some checker looks at, a bit each (see [`topic::of`]).
pub(crate) mod topic {
    use crate::model::Transition;

    pub(crate) const API_CREATED: u32 = 1 << 0;
    pub(crate) const API_REMOVED: u32 = 1 << 1;
    pub(crate) const API_STATUS_PATCHED: u32 = 1 << 2;
    pub(crate) const CONFIG_OP: u32 = 1 << 3;
    pub(crate) const CONTAINER_EXITED: u32 = 1 << 4;
    pub(crate) const CONTAINER_RUNNING: u32 = 1 << 5;
    pub(crate) const CRI_BEGIN: u32 = 1 << 6;
    pub(crate) const EVICT: u32 = 1 << 7;
    pub(crate) const EVICTION: u32 = 1 << 8;
    pub(crate) const HOST: u32 = 1 << 9;
    pub(crate) const HOUSEKEEPING: u32 = 1 << 10;
    pub(crate) const KILL_POD_NOW: u32 = 1 << 11;
    pub(crate) const KUBELET_PROCESS: u32 = 1 << 12;
    pub(crate) const LOCAL_STATUS: u32 = 1 << 13;
    pub(crate) const NODE_READY: u32 = 1 << 14;
    pub(crate) const NOTE: u32 = 1 << 15;
    pub(crate) const POD_REJECTED: u32 = 1 << 16;
    pub(crate) const POWER_OFF: u32 = 1 << 17;
    pub(crate) const PROBE: u32 = 1 << 18;
    pub(crate) const PROBE_RESULT: u32 = 1 << 19;
    pub(crate) const PROBE_WORKER: u32 = 1 << 20;
    pub(crate) const SHUTDOWN: u32 = 1 << 21;
    pub(crate) const SHUTDOWN_GROUP: u32 = 1 << 22;
    pub(crate) const SYNC_BEGIN: u32 = 1 << 23;
    pub(crate) const SYNC_END: u32 = 1 << 24;
    pub(crate) const SYNC_STEP: u32 = 1 << 25;
    pub(crate) const WORKER: u32 = 1 << 26;
    pub(crate) const SIGNAL: u32 = 1 << 27;
    pub(crate) const CRI_END: u32 = 1 << 28;
    pub(crate) const NODE_RECLAIM: u32 = 1 << 29;
    /// Image removals.
    pub(crate) const IMAGE: u32 = 1 << 30;

    /// No bit: a kind no checker looks at.
    pub(crate) const NONE: u32 = 0;

    /// The bit of `tr`'s kind (0: no checker looks at it).
    #[inline]
    pub(crate) fn of(tr: &Transition) -> u32 {
        use Transition::*;
        match tr {
            ApiCreated { .. } => API_CREATED,
            ApiRemoved { .. } => API_REMOVED,
            ApiStatusPatched { .. } => API_STATUS_PATCHED,
            ConfigOp { .. } => CONFIG_OP,
            ContainerExited { .. } => CONTAINER_EXITED,
            ContainerRunning { .. } => CONTAINER_RUNNING,
            CriBegin { .. } => CRI_BEGIN,
            CriEnd { .. } => CRI_END,
            Evict { .. } => EVICT,
            Eviction { .. } => EVICTION,
            Host { .. } => HOST,
            Housekeeping => HOUSEKEEPING,
            KillPodNow { .. } => KILL_POD_NOW,
            KubeletProcess { .. } => KUBELET_PROCESS,
            LocalStatus { .. } => LOCAL_STATUS,
            NodeReady { .. } => NODE_READY,
            Note { .. } => NOTE,
            PodRejected { .. } => POD_REJECTED,
            PowerOff { .. } => POWER_OFF,
            Probe { .. } => PROBE,
            ProbeResult { .. } => PROBE_RESULT,
            ProbeWorker { .. } => PROBE_WORKER,
            Shutdown { .. } => SHUTDOWN,
            ShutdownGroup { .. } => SHUTDOWN_GROUP,
            SyncBegin { .. } => SYNC_BEGIN,
            SyncEnd { .. } => SYNC_END,
            SyncStep { .. } => SYNC_STEP,
            Worker { .. } => WORKER,
            Signal { .. } => SIGNAL,
            NodeReclaim { .. } => NODE_RECLAIM,
            ImageRemoved { .. } => IMAGE,
            _ => 0,
        }
    }
}

/// One concern of the oracle.
pub(crate) trait Checker {
    /// The kinds of transition ([`topic`] bits) it looks at: it is not called for others
    /// (a worker record's removal is a `WORKER`, a kubelet crash a `KUBELET_PROCESS`).
    const TOPICS: u32;
    /// One transition, after the facts took it in: the checker's body, inlined where it
    /// is called. The oracle's direct paths call it (through [`Checkers::route`]) after
    /// matching the transition's kind themselves, so the compiler keeps only the arms of
    /// that kind, in line: a frequent transition runs through its own kind's checks, not
    /// through each checker's whole dispatch on the kind.
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings);
    /// [`Checker::on`] out of line: one copy of each checker, for the paths that do not
    /// know the kind (the table by kind of [`Oracle::general`](super::Oracle), the
    /// debug checks of unwatched transitions).
    #[inline(never)]
    fn transition(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        self.on(at, tr, facts, out);
    }
    /// End of the run: the node-level checks (before any pod's).
    fn finish_node(&mut self, _end: SimTime, _facts: &Facts, _out: &mut Findings) {}
    /// End of the run: the checks of one pod (every pod with a spec, in UID order).
    fn finish_pod(&mut self, _end: SimTime, _uid: PodUid, _facts: &Facts, _out: &mut Findings) {}
}

/// Every checker. The order is the order findings of one transition (or of the end of a
/// run) come in: a container start is checked for static pods before the worker, a CRI
/// call for the worker before the node shutdown; at the end, the shutdown's node checks
/// before the eviction's and the kills', and a pod's API checks before its eviction's and
/// its liveness.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checkers {
    static_pods: static_pods::StaticPods,
    pub(crate) worker: worker::WorkerChecker,
    sync: sync::SyncChecker,
    api: api::ApiChecker,
    teardown: teardown::Teardown,
    probes: probes::Probes,
    shutdown: shutdown::Shutdown,
    eviction: eviction::Eviction,
    kills: kills::Kills,
    init_containers: init_containers::InitContainers,
    hooks: hooks::Hooks,
    disk_reclaim: disk_reclaim::DiskReclaim,
    pub(crate) liveness: liveness::Liveness,
}

impl Checkers {
    /// One transition, to the checkers that look at its kind: a static table by kind (one
    /// monomorphized [`Checkers::route`] per [`topic`] bit, which calls only the checkers
    /// whose [`Checker::TOPICS`] hold it), so a transition does not ask every checker.
    #[inline]
    pub(crate) fn transition(
        &mut self,
        at: SimTime,
        tr: &Transition,
        facts: &Facts,
        out: &mut Findings,
    ) {
        // Direct paths for the most frequent kinds after probes (a SyncPod's beginning and
        // every sync's end, which `Oracle::other` sends here directly too): only the
        // checkers that act on them, without the table. A CRI call's beginning and a pod
        // worker's step go to the checkers that act on their values, as on the oracle's
        // direct paths; the ends of CRI calls no checker acts on skip the table.
        match *tr {
            Transition::SyncBegin {
                uid,
                kind: SyncKind::SyncPod,
                grace,
            } => return self.sync_pod_begin(at, tr, uid, grace, facts, out),
            Transition::SyncEnd { uid, kind, .. } => return self.sync_end(at, uid, kind),
            Transition::CriBegin { call, .. } => return self.cri_begin(at, tr, call, facts, out),
            Transition::Worker { what, .. } => return self.worker_step(at, tr, what, facts, out),
            Transition::CriEnd {
                call, ref error, ..
            } if !cri_end_watched(call, error.is_some()) => {
                return self.unwatched(at, tr, facts, out)
            }
            _ => {}
        }
        self.by_table(at, tr, facts, out);
    }

    /// A transition of a kind some checkers look at, with values none of them acts on
    /// (see [`cri_end_watched`]): nothing to do. Debug builds show it to those
    /// checkers all the same and check that none reported.
    #[inline(always)]
    pub(crate) fn unwatched(
        &mut self,
        at: SimTime,
        tr: &Transition,
        facts: &Facts,
        out: &mut Findings,
    ) {
        #[cfg(debug_assertions)]
        {
            let found = out.list().len();
            self.by_table(at, tr, facts, out);
            assert_eq!(
                out.list().len(),
                found,
                "a checker reported on a transition taken as unwatched: {tr:?}"
            );
        }
        #[cfg(not(debug_assertions))]
        let _ = (at, tr, facts, out);
    }

    /// [`Checkers::transition`] through the table by kind.
    #[inline(always)]
    fn by_table(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        let bit = topic::of(tr);
        /// The arms of the table: one per topic bit.
        macro_rules! table {
            ($($b:literal),* $(,)?) => {
                match bit.trailing_zeros() {
                    $($b => self.route_only::<{ 1u32 << $b }, false>(at, tr, facts, out, who::ALL),)*
                    // No bit (no checker looks at the kind).
                    _ => {}
                }
            };
        }
        table!(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
            24, 25, 26, 27, 28, 29, 30
        );
    }

    /// [`Checkers::transition`] of a sync's end: only liveness looks at it, and only at a
    /// SyncPod's.
    #[inline(always)]
    pub(crate) fn sync_end(&mut self, at: SimTime, uid: PodUid, kind: SyncKind) {
        if kind == SyncKind::SyncPod {
            self.liveness.sync_pod_end(at, uid);
        }
    }

    /// [`Checkers::transition`] of a housekeeping: only liveness looks at it.
    #[inline(always)]
    pub(crate) fn housekeeping(&mut self, at: SimTime, facts: &Facts, out: &mut Findings) {
        self.liveness.housekeeping(at, facts, out);
    }

    /// [`Checkers::transition`] of a SyncPod's beginning: the sync checker's checks, then
    /// liveness's note. The shutdown checker, the only other one that looks at a sync's
    /// beginning, acts on terminating syncs only: debug builds show it the transition and
    /// check that nothing changed.
    #[inline(always)]
    pub(crate) fn sync_pod_begin(
        &mut self,
        at: SimTime,
        tr: &Transition,
        uid: PodUid,
        grace: Option<i64>,
        facts: &Facts,
        out: &mut Findings,
    ) {
        self.sync.sync_pod_begin(at, uid, grace, facts, out);
        self.sync_pod_begin_rest(at, tr, uid, facts, out);
    }

    /// The rest of a SyncPod's beginning, after the sync checker: liveness. Debug builds
    /// show it to the shutdown checker as well and assert it neither changes nor reports
    /// (that checker acts on terminating syncs only).
    #[inline(always)]
    fn sync_pod_begin_rest(
        &mut self,
        at: SimTime,
        tr: &Transition,
        uid: PodUid,
        facts: &Facts,
        out: &mut Findings,
    ) {
        #[cfg(debug_assertions)]
        {
            let (was, found) = (self.shutdown.fingerprint(uid), out.list().len());
            self.shutdown.transition(at, tr, facts, out);
            assert_eq!(
                (self.shutdown.fingerprint(uid), out.list().len()),
                (was, found),
                "the shutdown checker acted on a SyncPod's beginning: {tr:?}"
            );
        }
        #[cfg(not(debug_assertions))]
        let _ = (tr, out);
        self.liveness.sync_pod_begin(at, uid, facts);
    }

    /// [`Checkers::transition`] of a transition of topic `BIT`: every checker that looks at
    /// it, in the fixed order (the test of each checker's topics is decided at compile time).
    /// The oracle's direct paths call it with their kind's topic, without the table.
    #[inline(always)]
    pub(crate) fn route<const BIT: u32>(
        &mut self,
        at: SimTime,
        tr: &Transition,
        facts: &Facts,
        out: &mut Findings,
    ) {
        self.route_only::<BIT, true>(at, tr, facts, out, who::ALL);
    }

    /// [`Checkers::sync_pod_begin`] of the oracle's direct path, which decided whether the
    /// SyncPod is quiet from the worker record before the sync changed it
    /// ([`sync::SyncChecker::sync_pod_begin_decided`]; a quiet one has no snapshot in
    /// [`Facts::before`]). Debug builds show it to the shutdown checker as well, as
    /// [`Checkers::sync_pod_begin`] does.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn sync_pod_begin_decided(
        &mut self,
        at: SimTime,
        tr: &Transition,
        uid: PodUid,
        grace: Option<i64>,
        quiet: bool,
        facts: &Facts,
        out: &mut Findings,
    ) {
        self.sync
            .sync_pod_begin_decided(at, uid, grace, quiet, facts, out);
        self.sync_pod_begin_rest(at, tr, uid, facts, out);
    }

    /// [`Checkers::route`] to the checkers of the set `only` ([`who`] bits) alone, in the
    /// same order: their bodies in line when `INLINE` ([`Checker::on`], for a caller that
    /// matched the kind), else their out-of-line copies ([`Checker::transition`]).
    #[inline(always)]
    fn route_only<const BIT: u32, const INLINE: bool>(
        &mut self,
        at: SimTime,
        tr: &Transition,
        facts: &Facts,
        out: &mut Findings,
        only: u16,
    ) {
        /// Call the checker when it looks at this kind of transition and is one of `only`.
        #[inline(always)]
        fn call<C: Checker, const BIT: u32, const INLINE: bool>(
            c: &mut C,
            me: u16,
            only: u16,
            at: SimTime,
            tr: &Transition,
            facts: &Facts,
            out: &mut Findings,
        ) {
            if C::TOPICS & BIT != 0 && only & me != 0 {
                if INLINE {
                    c.on(at, tr, facts, out);
                } else {
                    c.transition(at, tr, facts, out);
                }
            }
        }
        debug_assert_eq!(topic::of(tr), BIT);
        call::<_, BIT, INLINE>(
            &mut self.static_pods,
            who::STATIC_PODS,
            only,
            at,
            tr,
            facts,
            out,
        );
        call::<_, BIT, INLINE>(&mut self.worker, who::WORKER, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(&mut self.sync, who::SYNC, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(&mut self.api, who::API, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(&mut self.teardown, who::TEARDOWN, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(&mut self.probes, who::PROBES, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(&mut self.shutdown, who::SHUTDOWN, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(&mut self.eviction, who::EVICTION, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(&mut self.kills, who::KILLS, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(
            &mut self.init_containers,
            who::INIT_CONTAINERS,
            only,
            at,
            tr,
            facts,
            out,
        );
        call::<_, BIT, INLINE>(&mut self.hooks, who::HOOKS, only, at, tr, facts, out);
        call::<_, BIT, INLINE>(
            &mut self.disk_reclaim,
            who::DISK_RECLAIM,
            only,
            at,
            tr,
            facts,
            out,
        );
        call::<_, BIT, INLINE>(&mut self.liveness, who::LIVENESS, only, at, tr, facts, out);
    }

    /// [`Checkers::route`] of a transition of topic `BIT` whose values only the checkers of
    /// `only` act on: those alone are called. Debug builds show the transition to the
    /// topic's other checkers as well and check that none of them reported.
    #[inline(always)]
    fn route_acting<const BIT: u32>(
        &mut self,
        at: SimTime,
        tr: &Transition,
        facts: &Facts,
        out: &mut Findings,
        only: u16,
    ) {
        self.route_only::<BIT, true>(at, tr, facts, out, only);
        #[cfg(debug_assertions)]
        {
            let found = out.list().len();
            self.route_only::<BIT, false>(at, tr, facts, out, who::ALL & !only);
            assert_eq!(
                out.list().len(),
                found,
                "a checker outside {only:#06x} reported on {tr:?}"
            );
        }
    }

    /// [`Checkers::route`] of the beginning of CRI call `call`: only the checkers that act
    /// on that call ([`cri_begin_checkers`]).
    #[inline(always)]
    pub(crate) fn cri_begin(
        &mut self,
        at: SimTime,
        tr: &Transition,
        call: CriOp,
        facts: &Facts,
        out: &mut Findings,
    ) {
        self.route_acting::<{ topic::CRI_BEGIN }>(at, tr, facts, out, cri_begin_checkers(call));
    }

    /// [`Checkers::route`] of a pod worker's step `what`: only the checkers that act on
    /// that step ([`worker_step_checkers`]).
    #[inline(always)]
    pub(crate) fn worker_step(
        &mut self,
        at: SimTime,
        tr: &Transition,
        what: WorkerStep,
        facts: &Facts,
        out: &mut Findings,
    ) {
        self.route_acting::<{ topic::WORKER }>(at, tr, facts, out, worker_step_checkers(what));
    }

    /// [`Checkers::transition`] of a `Probe` transition: only the probes checker looks at
    /// it (asserted below).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn probe(
        &mut self,
        at: SimTime,
        uid: PodUid,
        container: &std::sync::Arc<str>,
        kind: ProbeType,
        result: ProbeVerdict,
        facts: &Facts,
        out: &mut Findings,
    ) {
        self.probes
            .probe(at, uid, container, kind, result, facts, out);
    }

    /// Tests only (of debug checks): the probes checker.
    #[cfg(all(test, debug_assertions))]
    pub(crate) fn probes_mut(&mut self) -> &mut probes::Probes {
        &mut self.probes
    }

    /// A probe of `uid`'s container shared as `container` that no checker needs to see
    /// (see [`probes::Probes::quiet`]; only the probes checker looks at probes): its
    /// interned name.
    #[inline(always)]
    pub(crate) fn quiet_probe(
        &self,
        uid: PodUid,
        container: &std::sync::Arc<str>,
        kind: ProbeType,
    ) -> Option<Sym> {
        self.probes.quiet(uid, container, kind)
    }

    pub(crate) fn finish(&mut self, end: SimTime, facts: &Facts, out: &mut Findings) {
        self.shutdown.finish_node(end, facts, out);
        self.eviction.finish_node(end, facts, out);
        self.kills.finish_node(end, facts, out);
        for (i, p) in facts.pods.iter().enumerate() {
            if p.spec.is_none() {
                continue;
            }
            let uid = PodUid(i as u32);
            self.api.finish_pod(end, uid, facts, out);
            self.eviction.finish_pod(end, uid, facts, out);
            self.liveness.finish_pod(end, uid, facts, out);
            self.hooks.finish_pod(end, uid, facts, out);
        }
    }
}

// The shortcut for probes (`Checkers::probe`): no other checker looks at them.
const _: () = assert!(
    (static_pods::StaticPods::TOPICS
        | worker::WorkerChecker::TOPICS
        | sync::SyncChecker::TOPICS
        | api::ApiChecker::TOPICS
        | teardown::Teardown::TOPICS
        | shutdown::Shutdown::TOPICS
        | eviction::Eviction::TOPICS
        | kills::Kills::TOPICS
        | init_containers::InitContainers::TOPICS
        | hooks::Hooks::TOPICS
        | disk_reclaim::DiskReclaim::TOPICS
        | liveness::Liveness::TOPICS)
        & topic::PROBE
        == 0
);

// The direct paths of `Checkers::transition`: a sync's beginning is looked at by the sync,
// shutdown and liveness checkers only, a sync's end by liveness only.
const _: () = {
    const fn looks(topics: u32, bit: u32) -> u32 {
        if topics & bit != 0 {
            1
        } else {
            0
        }
    }
    let all = [
        static_pods::StaticPods::TOPICS,
        worker::WorkerChecker::TOPICS,
        api::ApiChecker::TOPICS,
        teardown::Teardown::TOPICS,
        probes::Probes::TOPICS,
        eviction::Eviction::TOPICS,
        kills::Kills::TOPICS,
        init_containers::InitContainers::TOPICS,
        hooks::Hooks::TOPICS,
        disk_reclaim::DiskReclaim::TOPICS,
    ];
    let mut i = 0;
    while i < all.len() {
        assert!(all[i] & (topic::SYNC_BEGIN | topic::SYNC_END) == 0);
        i += 1;
    }
    assert!(looks(sync::SyncChecker::TOPICS, topic::SYNC_BEGIN) == 1);
    assert!(looks(shutdown::Shutdown::TOPICS, topic::SYNC_BEGIN) == 1);
    assert!(looks(liveness::Liveness::TOPICS, topic::SYNC_BEGIN) == 1);
    // A housekeeping: liveness only (`Checkers::housekeeping`).
    let mut i = 0;
    while i < all.len() {
        assert!(all[i] & topic::HOUSEKEEPING == 0);
        i += 1;
    }
    assert!(
        looks(sync::SyncChecker::TOPICS, topic::HOUSEKEEPING)
            + looks(shutdown::Shutdown::TOPICS, topic::HOUSEKEEPING)
            == 0
    );
    assert!(looks(liveness::Liveness::TOPICS, topic::HOUSEKEEPING) == 1);
    assert!(
        looks(sync::SyncChecker::TOPICS, topic::SYNC_END)
            + looks(shutdown::Shutdown::TOPICS, topic::SYNC_END)
            == 0
    );
};

/// The checkers, one bit each, in [`Checkers::route`]'s order: a set of them is what
/// [`Checkers::route_only`] calls.
pub(crate) mod who {
    pub(crate) const STATIC_PODS: u16 = 1 << 0;
    pub(crate) const WORKER: u16 = 1 << 1;
    pub(crate) const SYNC: u16 = 1 << 2;
    pub(crate) const API: u16 = 1 << 3;
    pub(crate) const TEARDOWN: u16 = 1 << 4;
    pub(crate) const PROBES: u16 = 1 << 5;
    pub(crate) const SHUTDOWN: u16 = 1 << 6;
    pub(crate) const EVICTION: u16 = 1 << 7;
    pub(crate) const KILLS: u16 = 1 << 8;
    pub(crate) const INIT_CONTAINERS: u16 = 1 << 9;
    pub(crate) const HOOKS: u16 = 1 << 10;
    pub(crate) const DISK_RECLAIM: u16 = 1 << 11;
    pub(crate) const LIVENESS: u16 = 1 << 12;
    /// Every checker.
    pub(crate) const ALL: u16 = (1 << 13) - 1;
}

/// The checkers that act on the beginning of a CRI call `call` (none: 0). The worker and
/// shutdown checkers on the calls that start something (RunPodSandbox, CreateContainer,
/// StartContainer), the sync checker and liveness on a kill (StopContainer, ExecPreStop),
/// the hooks checker on ExecPostStart, teardown on UnmountVolumes, RemovePodCgroup and
/// RemovePodDir. (Debug builds show every call to the topic's other checkers too and
/// check that they do not report: `Checkers::route_acting`, `Checkers::unwatched`.)
#[inline]
pub(crate) fn cri_begin_checkers(call: CriOp) -> u16 {
    use CriOp::*;
    match call {
        RunPodSandbox | CreateContainer | StartContainer => who::WORKER | who::SHUTDOWN,
        StopContainer | ExecPreStop => who::SYNC | who::LIVENESS,
        ExecPostStart => who::HOOKS,
        UnmountVolumes | RemovePodCgroup | RemovePodDir => who::TEARDOWN,
        _ => 0,
    }
}

/// The checkers that act on a pod worker's step `what` (none: 0): the static pods checker
/// on a worker's start and end, liveness on its end, the worker checker on v1.21's
/// ForgetWorker, and every checker of the topic on a worker record's removal
/// ([`record_removed`]; the shutdown checker also drops a kill queued on an orphaned
/// runtime pod's record). No checker acts on the other steps. (Debug builds check the
/// others: `Checkers::route_acting`.)
#[inline]
pub(crate) fn worker_step_checkers(what: WorkerStep) -> u16 {
    use WorkerStep::*;
    match what {
        Started => who::STATIC_PODS,
        Finished | FinishedNeverStarted => who::STATIC_PODS | who::LIVENESS,
        V121Forgotten => who::WORKER,
        RuntimePodRecordRemoved | Forgotten | OrphanNeverStarted => who::ALL,
        Record
        | FirstSightTerminal
        | RestartWhileTerminating
        | TerminationRequested
        | StaticPodBlocked
        | TerminationAcknowledged
        | Terminated
        | TerminalTerminating
        | OrphanTerminationRequested
        | V121TreatedAsTerminated => 0,
    }
}

/// Does some checker act on the end of a CRI call `call` (`failed`: with an error)? The
/// hooks checker on ExecPostStart's, the worker checker on a CreateContainer refused.
#[inline]
pub(crate) fn cri_end_watched(call: CriOp, failed: bool) -> bool {
    call == CriOp::ExecPostStart || (call == CriOp::CreateContainer && failed)
}

/// Per-pod state of one checker, by UID.
#[derive(Clone, Debug, Default)]
pub(crate) struct PerPod<T>(Vec<T>);

impl<T: Default> PerPod<T> {
    pub(crate) fn at(&mut self, uid: PodUid) -> &mut T {
        let i = uid.0 as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, T::default);
        }
        &mut self.0[i]
    }
    pub(crate) fn get(&self, uid: PodUid) -> Option<&T> {
        self.0.get(uid.0 as usize)
    }
    /// The state of `uid` if it has any yet (else it is the default).
    pub(crate) fn get_mut(&mut self, uid: PodUid) -> Option<&mut T> {
        self.0.get_mut(uid.0 as usize)
    }
    /// Back to the default for `uid`.
    pub(crate) fn reset(&mut self, uid: PodUid) {
        if let Some(x) = self.0.get_mut(uid.0 as usize) {
            *x = T::default();
        }
    }
    pub(crate) fn reset_all(&mut self) {
        for x in &mut self.0 {
            *x = T::default();
        }
    }
}

/// The kubelet process died: what the process knew is gone.
pub(crate) fn crashed(tr: &Transition) -> bool {
    matches!(
        tr,
        Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            ..
        }
    )
}

/// The pod's worker record was removed (what it went through is gone): its UID.
pub(crate) fn record_removed(tr: &Transition) -> Option<PodUid> {
    match tr {
        Transition::Worker {
            uid,
            what:
                WorkerStep::RuntimePodRecordRemoved
                | WorkerStep::Forgotten
                | WorkerStep::OrphanNeverStarted,
        } => Some(*uid),
        _ => None,
    }
}
