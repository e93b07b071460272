//! The source of each event, for schedulers that tell sources apart (PCT): a plain key
//! standing for the goroutine or outside actor that would run it in a real node. It is
//! stable for a run: a pod worker keeps its key for its pod's life, a ticker keeps its own.
//! Events of one source at one instant run in the order they were scheduled.

use super::world::Event;
use crate::kubelet::prober::ProbeKey;
use crate::kubelet::KEv;
use crate::sim::trace::StableHasher;
use crate::world::cri::Caller;
use std::hash::Hasher;

/// Who runs an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source<'a> {
    /// A client creating scenario pod declaration `.0` in the API server.
    Creator(usize),
    /// Whoever runs the scenario's timeline (one actor: its actions stay in file order).
    Timeline,
    /// A container's process (exits, SIGKILL at the stop timeout).
    Container(u32),
    /// The pod worker goroutine of a UID (its wake-ups, its CRI replies, its kill timers).
    Worker(u32),
    Pleg,
    Deletor,
    /// The API watch feeding the kubelet's config source.
    ApiWatch,
    /// The static-pod file source.
    StaticFiles,
    /// The status manager (its signals, ticker and API writes).
    StatusManager,
    /// The mirror-pod client's API requests.
    MirrorClient,
    SyncTicker,
    HousekeepingTicker,
    /// A probe worker: (pod, container, probe type).
    ProbeWorker(u32, &'a str, &'static str),
    /// A probe worker's event, which carries its worker's key ([`probe_worker_source`]),
    /// worked out once when the worker started: the event names the worker by slot only.
    ProbeWorkerKey(u64),
    /// A probe results manager's update channel.
    ProbeResults(&'static str),
    ShutdownManager,
    /// The goroutine waiting in `killPodNow` for a pod.
    KillPodNow(u32),
    EvictionManager,
    /// The v1.21 design's pod killer.
    PodKiller,
    ContainerGc,
    VolumeManager,
    /// The kubelet process starting again after a restart.
    KubeletProcess,
    Logind,
    /// The image garbage collector (its period and its `RemoveImage` replies).
    ImageGc,
}

impl Source<'_> {
    fn key(self) -> u64 {
        let (tag, n, s, t): (u64, u64, &str, &str) = match self {
            // Worked out once, when the worker started (`probe_worker_source`).
            Source::ProbeWorkerKey(key) => return key,
            Source::Creator(i) => (1, i as u64, "", ""),
            Source::Timeline => (2, 0, "", ""),
            Source::Container(id) => (3, id.into(), "", ""),
            Source::Worker(uid) => (4, uid.into(), "", ""),
            Source::Pleg => (5, 0, "", ""),
            Source::Deletor => (6, 0, "", ""),
            Source::ApiWatch => (7, 0, "", ""),
            Source::StaticFiles => (8, 0, "", ""),
            Source::StatusManager => (9, 0, "", ""),
            Source::MirrorClient => (10, 0, "", ""),
            Source::SyncTicker => (11, 0, "", ""),
            Source::HousekeepingTicker => (12, 0, "", ""),
            Source::ProbeWorker(uid, container, kind) => (13, uid.into(), container, kind),
            Source::ProbeResults(kind) => (14, 0, kind, ""),
            Source::ShutdownManager => (15, 0, "", ""),
            Source::KillPodNow(uid) => (16, uid.into(), "", ""),
            Source::EvictionManager => (17, 0, "", ""),
            Source::PodKiller => (18, 0, "", ""),
            Source::ContainerGc => (19, 0, "", ""),
            Source::VolumeManager => (20, 0, "", ""),
            Source::KubeletProcess => (21, 0, "", ""),
            Source::Logind => (22, 0, "", ""),
            Source::ImageGc => (23, 0, "", ""),
        };
        let mut h = StableHasher::default();
        h.write_u64(tag);
        h.write_u64(n);
        for text in [s, t] {
            h.write_usize(text.len());
            h.write(text.as_bytes());
        }
        h.finish()
    }
}

fn kubelet_source(k: &KEv) -> Source<'_> {
    match k {
        KEv::WorkerWake(uid) | KEv::WorkerCacheReady(uid) => Source::Worker(uid.0),
        KEv::PreStopTimeout { uid, .. }
        | KEv::KillTurnTimeout { uid, .. }
        | KEv::PostStartCancelled { uid, .. } => Source::Worker(uid.0),
        KEv::SyncTick => Source::SyncTicker,
        KEv::HousekeepingTick => Source::HousekeepingTicker,
        KEv::PlegRelist | KEv::PlegEvent { .. } => Source::Pleg,
        KEv::StatusSignal | KEv::StatusTick => Source::StatusManager,
        KEv::ProbeWorker { source, .. } => Source::ProbeWorkerKey(*source),
        KEv::ProbeUpdates(kind) => Source::ProbeResults(kind.as_str()),
        KEv::PrepareForShutdown(_)
        | KEv::ShutdownGroupDeadline { .. }
        | KEv::ShutdownV122Timer { .. } => Source::ShutdownManager,
        KEv::KillPodNowReturned { uid, .. } => Source::KillPodNow(uid.0),
        KEv::EvictionSync | KEv::EvictionCleanupPoll(_) | KEv::EvictionCleanupTimeout(_) => {
            Source::EvictionManager
        }
        KEv::PodKillerReceive => Source::PodKiller,
        KEv::LegacyContainerGc | KEv::ContainerGc => Source::ContainerGc,
        KEv::VolumePopulatorTick => Source::VolumeManager,
        KEv::ImageGc => Source::ImageGc,
    }
}

fn source(e: &Event) -> Source<'_> {
    use crate::world::runtime::RtEvent;
    match e {
        Event::CreatePod(i) => Source::Creator(*i),
        Event::Timeline(_) => Source::Timeline,
        Event::Runtime(RtEvent::ProcExit { id, .. } | RtEvent::Sigkill { id, .. }) => {
            Source::Container(id.0)
        }
        Event::CriComplete { caller, .. } => match caller.caller {
            Caller::Worker { uid, .. } => Source::Worker(uid.0),
            Caller::Pleg => Source::Pleg,
            Caller::Deletor => Source::Deletor,
            Caller::ImageGc => Source::ImageGc,
            Caller::Reclaim => Source::EvictionManager,
        },
        Event::Watch(..) | Event::WatchSynced(_) => Source::ApiWatch,
        Event::ApiStatusSync { .. } | Event::ApiDelete { .. } => Source::StatusManager,
        Event::Kubelet(_, k) => kubelet_source(k),
        Event::KubeletStart(_) => Source::KubeletProcess,
        Event::File(..) | Event::FileSynced(_) => Source::StaticFiles,
        Event::ApiCreateMirror { .. } | Event::ApiDeleteMirror { .. } => Source::MirrorClient,
        Event::Logind(_) => Source::Logind,
    }
}

/// The source key of the events of the probe worker `key`: what its events carry.
pub(crate) fn probe_worker_source(key: &ProbeKey) -> u64 {
    Source::ProbeWorker(key.uid.0, &key.container, key.kind.as_str()).key()
}

/// The source key of an event (see the module comment).
pub(super) fn source_key(e: &Event) -> u64 {
    source(e).key()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PodUid;

    #[test]
    fn a_pod_workers_events_share_a_source_and_pods_do_not() {
        let w = |uid| Event::Kubelet(0, KEv::WorkerWake(PodUid(uid)));
        assert_eq!(source_key(&w(1)), source_key(&w(1)));
        assert_eq!(
            source_key(&w(1)),
            source_key(&Event::Kubelet(0, KEv::WorkerCacheReady(PodUid(1))))
        );
        assert_ne!(source_key(&w(1)), source_key(&w(2)));
        assert_ne!(
            source_key(&Event::Kubelet(0, KEv::SyncTick)),
            source_key(&Event::Kubelet(0, KEv::HousekeepingTick))
        );
        assert_ne!(
            source_key(&Event::CreatePod(1)),
            source_key(&Event::CreatePod(2))
        );
    }
}
