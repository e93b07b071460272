//! What the kubelet talks to: the container runtime, the API server, the node's power
//! management, the static-pod manifest directory, and the workload each container runs.
//! Also the closed [`Event`] enum of a run and the [`Ctx`] through which the kubelet acts on
//! the world: it can issue CRI calls and API requests and set timers, but it cannot read
//! the runtime's or the API server's ground truth.
//!
//! The world names neither the kubelet nor the oracle: [`Event`] carries the kubelet's own
//! timers as a type parameter `K`, and the world's components write transitions to a
//! [`Tracer`], whatever observes the trace. The run (`crate::run`) fixes both.

pub(crate) mod apiserver;
pub(crate) mod cri;
pub(crate) mod ctx;
pub(crate) mod dist;
pub(crate) mod files;
pub(crate) mod node;
pub(crate) mod runtime;
pub(crate) mod stats;

pub(crate) use cri::{Caller, CriClient};
pub(crate) use ctx::Ctx;
pub(crate) use files::FileSource;

use crate::model::{PodUid, Transition};
use apiserver::WatchEvent;
use cri::CriReq;
use node::LogindEv;
use runtime::RtEvent;

/// Where the world's transitions go: the run's trace (hashed, perhaps kept, and shown to
/// its observer), seen without its observer's type.
pub(crate) type Tracer = dyn crate::sim::Emit<Transition>;

/// `trace.emit` of a transition made of plain values only (a CRI call's begin or end, a
/// watch delivery): it is not dropped afterwards, which spares a call into the
/// transition's drop glue that would find nothing to free. Debug builds check the kind.
#[inline(always)]
pub(crate) fn emit_plain<T>(trace: &mut T, at: crate::sim::SimTime, t: Transition)
where
    T: crate::sim::Emit<Transition> + ?Sized,
{
    debug_assert!(matches!(
        t,
        Transition::CriBegin { .. } | Transition::CriEnd { .. } | Transition::WatchDelivered { .. }
    ));
    // The three kinds hold plain values only, so not dropping them frees nothing; a field
    // that owned something would stop this compiling rather than leak.
    const _: () = {
        use crate::model::{CriFailure, CriOp, WatchDelivery};
        use std::mem::needs_drop;
        assert!(!needs_drop::<PodUid>() && !needs_drop::<WatchDelivery>());
        assert!(!needs_drop::<CriOp>() && !needs_drop::<Option<CriFailure>>());
        assert!(!needs_drop::<Option<i64>>() && !needs_drop::<u32>());
    };
    let t = std::mem::ManuallyDrop::new(t);
    trace.emit(at, &t);
}

/// A kubelet incarnation: 0 for the kubelet started with the run, one more after each
/// `kubeletRestart`. Everything addressed to a kubelet process (its timers, CRI replies,
/// watch deliveries, answers to its API requests) carries the incarnation it belongs to;
/// the world drops what belongs to a dead one.
pub(crate) type Epoch = u32;

/// Every event of a run.
#[derive(Clone, Debug)]
pub(crate) enum Event<K> {
    /// Scenario pod declaration `i` is created in the API server.
    CreatePod(usize),
    /// Scenario timeline action `i` happens.
    Timeline(usize),
    /// The runtime's own process events.
    Runtime(RtEvent),
    /// A CRI call completes (its effect is applied now). The request is boxed: it is the
    /// largest payload (two strings), and inline it would make every event twice as large
    /// to move through the queue and to keep in it.
    CriComplete {
        caller: CriClient,
        req: Box<CriReq>,
        fault: Option<crate::model::CriError>,
    },
    /// A watch event reaches the config source of kubelet incarnation `.0`.
    Watch(Epoch, WatchEvent),
    /// The watch's initial list reached kubelet incarnation `.0`.
    WatchSynced(Epoch),
    /// The status manager's GET + PATCH for a pod reaches the API server.
    ApiStatusSync { uid: PodUid, epoch: Epoch },
    /// The status manager's final DELETE reaches the API server.
    ApiDelete { uid: PodUid, epoch: Epoch },
    /// A timer or wake-up of kubelet incarnation `.0`.
    Kubelet(Epoch, K),
    /// Kubelet incarnation `.0` starts after a restart's downtime.
    KubeletStart(Epoch),
    /// The static-pod file source reports a manifest change (inotify) to kubelet
    /// incarnation `.0`.
    File(Epoch, WatchEvent),
    /// The file source's initial listing reached kubelet incarnation `.0`.
    FileSynced(Epoch),
    /// The kubelet's request to create a mirror pod reaches the API server.
    ApiCreateMirror {
        pod: std::sync::Arc<crate::model::ApiPod>,
        epoch: Epoch,
    },
    /// The kubelet's request to delete a mirror pod reaches the API server.
    ApiDeleteMirror { uid: PodUid, epoch: Epoch },
    /// systemd-logind: a D-Bus call from the kubelet, or its own delay timer.
    Logind(LogindEv),
}

impl<K> Event<K> {
    /// Whether the event happens on the node (kubelet, runtime, logind, and the kubelet's
    /// side of the API connection). After power-off these are dropped.
    pub(crate) fn on_node(&self) -> bool {
        match self {
            Event::CreatePod(_) | Event::Timeline(_) => false,
            Event::Runtime(_)
            | Event::CriComplete { .. }
            | Event::Watch(..)
            | Event::WatchSynced(_)
            | Event::ApiStatusSync { .. }
            | Event::ApiDelete { .. }
            | Event::Kubelet(..)
            | Event::KubeletStart(_)
            | Event::File(..)
            | Event::FileSynced(_)
            | Event::ApiCreateMirror { .. }
            | Event::ApiDeleteMirror { .. }
            | Event::Logind(_) => true,
        }
    }
}
