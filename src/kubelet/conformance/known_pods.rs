//! `TestSyncKnownPods` and `Test_removeTerminatedWorker`.

use super::*;

fn desired(uids: &[u32]) -> crate::model::uid_map::UidMap<Arc<ApiPod>> {
    uids.iter()
        .map(|&u| (uid(u), p(u).name("name").build()))
        .collect()
}

fn channels(w: &World) -> Vec<PodUid> {
    w.kubelet
        .pw
        .records
        .iter()
        .filter(|(_, s)| s.has_worker)
        .map(|(u, _)| *u)
        .collect()
}

/// Mirrors upstream `TestSyncKnownPods` (UID "i" is `PodUid(1000 + i)`, the unknown "abc" is
/// `PodUid(4242)`).
#[test]
fn test_sync_known_pods() {
    const N: u32 = 20;
    let abc = uid(4242);
    let mut w = world();
    for i in 0..N {
        send(
            &mut w,
            opts(UpdateType::Update, p(1000 + i).name("name").build()),
        );
    }
    drain(&mut w);
    assert_eq!(channels(&w).len(), N as usize);

    for i in 0..N {
        if i == 2 || i == 14 {
            continue;
        }
        let mut pod = p(1000 + i).name("name");
        if i % 2 == 0 {
            pod = pod.deleted(30);
        }
        send(&mut w, opts(UpdateType::Kill, pod.build()));
    }
    drain(&mut w);

    let pw = &w.kubelet.pw;
    assert!(pw.should_pod_containers_be_terminating(uid(1000)));
    assert!(pw.should_pod_containers_be_terminating(uid(1001)));
    assert!(!pw.should_pod_containers_be_terminating(uid(1002)));
    assert!(pw.is_pod_termination_requested(uid(1000)));
    assert!(!pw.is_pod_termination_requested(uid(1002)));
    assert!(!pw.could_have_running_containers(uid(1000)));
    assert!(!pw.could_have_running_containers(uid(1001)));
    assert!(pw.could_have_running_containers(uid(1002)));
    assert!(pw.should_pod_content_be_removed(uid(1000)));
    assert!(!pw.should_pod_content_be_removed(uid(1001)));
    assert!(!pw.should_pod_content_be_removed(uid(1002)));
    // An unknown UID before the first SyncKnownPods.
    assert!(!pw.should_pod_containers_be_terminating(abc));
    assert!(pw.could_have_running_containers(abc));
    assert!(!pw.should_pod_content_be_removed(abc));

    let want = desired(&[2 + 1000, 14 + 1000]);
    let known = w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &want));
    assert_eq!(channels(&w), vec![uid(1002), uid(1014)]);
    assert_eq!(
        known.0.iter().map(|(u, _)| *u).collect::<Vec<_>>(),
        channels(&w)
    );
    assert!(known.values().all(|s| !s.orphan && s.has_config));
    let pw = &w.kubelet.pw;
    assert!(!pw.is_pod_termination_requested(uid(1002)));
    // An unknown UID after the first SyncKnownPods.
    assert!(pw.should_pod_containers_be_terminating(abc));
    assert!(!pw.could_have_running_containers(abc));
    assert!(pw.should_pod_content_be_removed(abc));

    // Workers that are not terminated stay until they are: orphaned while running, they are
    // terminated with their spec grace and kept until the next sync.
    let none = crate::model::uid_map::UidMap::new();
    w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &none));
    drain(&mut w);
    assert!(channels(&w).is_empty());
    assert_eq!(
        w.kubelet.pw.records.keys().copied().collect::<Vec<_>>(),
        vec![uid(1002), uid(1014)]
    );
    for u in [uid(1002), uid(1014)] {
        let s = st(&w, u);
        assert_eq!(
            flags(s),
            Flags {
                started: true,
                terminating: true,
                terminated: true,
                grace: 30,
                started_terminating: true,
                deleted: true,
                finished: true,
                ..NONE
            }
        );
        assert_eq!(
            syncs(&w, u),
            v(&["SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"])
        );
    }

    // Kills of finished pods are no-ops; the next sync forgets them.
    for u in [1002, 1014] {
        send(&mut w, opts(UpdateType::Kill, p(u).name("name").build()));
    }
    drain(&mut w);
    w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &none));
    assert!(channels(&w).is_empty());
    assert!(w.kubelet.pw.records.is_empty());
}

/// One `Test_removeTerminatedWorker` case, run through `SyncKnownPods`.
struct RemoveCase {
    desc: &'static str,
    orphan: bool,
    restart_requested: bool,
    finished: bool,
    started: bool,
    terminating: bool,
    terminated: bool,
    /// Resource version of the pending update's pod (upstream's pod name "2").
    pending: Option<u64>,
    /// Resource version of the active update's pod (upstream's pod name "1").
    active: Option<u64>,
    removed: bool,
    expect_pending: Option<u64>,
}

const CASE: RemoveCase = RemoveCase {
    desc: "",
    orphan: true,
    restart_requested: false,
    finished: false,
    started: false,
    terminating: false,
    terminated: false,
    pending: None,
    active: None,
    removed: false,
    expect_pending: None,
};

/// Mirrors upstream `Test_removeTerminatedWorker` (all cases without static-pod state; the
/// removal is reached through `SyncKnownPods`, which calls it for orphans and for UIDs with
/// a restart requested).
#[test]
fn test_remove_terminated_worker() {
    let cases = [
        RemoveCase {
            desc: "finished worker",
            orphan: false,
            restart_requested: true,
            finished: true,
            removed: true,
            ..CASE
        },
        RemoveCase {
            desc: "not yet started worker",
            orphan: false,
            restart_requested: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned not started worker",
            removed: true,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned started worker",
            started: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminating worker with no activeUpdate",
            started: true,
            terminating: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminating worker",
            started: true,
            terminating: true,
            active: Some(1),
            removed: false,
            expect_pending: Some(1),
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminating worker with pendingUpdate",
            started: true,
            terminating: true,
            active: Some(1),
            pending: Some(2),
            removed: false,
            expect_pending: Some(2),
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminated worker with no activeUpdate",
            started: true,
            terminating: true,
            terminated: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminated worker",
            started: true,
            terminating: true,
            terminated: true,
            active: Some(1),
            removed: false,
            expect_pending: Some(1),
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminated worker with pendingUpdate",
            started: true,
            terminating: true,
            terminated: true,
            active: Some(1),
            pending: Some(2),
            removed: false,
            expect_pending: Some(2),
            ..CASE
        },
    ];
    for c in cases {
        let mut w = world();
        let u = uid(1001);
        let t = |s: u64| SimTime(Dur::secs(s).0);
        let mut s = PodSyncStatus::new("fake-fullname".into(), t(1));
        s.restart_requested = c.restart_requested;
        s.finished = c.finished;
        s.started_at = c.started.then(|| t(1));
        s.terminating_at = c.terminating.then(|| t(2));
        s.terminated_at = c.terminated.then(|| t(3));
        let o = |rv: u64| opts(UpdateType::Sync, p(1001).version(rv).build());
        s.active_update = c.active.map(o);
        s.pending_update = c.pending.map(o);
        // The worker goroutine and its channel exist; a pending update has signalled it.
        s.has_worker = !c.finished;
        s.working = c.pending.is_some();
        s.signalled = c.pending.is_some();
        w.kubelet.pw.records.insert(u, Box::new(s));

        let want = if c.orphan {
            crate::model::uid_map::UidMap::new()
        } else {
            desired(&[1001])
        };
        let known = w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &want));
        let desc = c.desc;
        let Some(s) = w.kubelet.pw.records.get(&u) else {
            assert!(c.removed, "{desc}: expected the worker to be kept");
            assert!(!known.contains_key(&u), "{desc}: removed but reported");
            continue;
        };
        assert!(!c.removed, "{desc}: expected the worker to be removed");
        assert!(known.contains_key(&u), "{desc}: kept but not reported");
        let pending = s
            .pending_update
            .as_ref()
            .map(|o| o.pod.as_ref().expect("pod").resource_version);
        assert_eq!(pending, c.expect_pending, "{desc}: pendingUpdate");
        if c.expect_pending.is_some() {
            assert!(s.working, "{desc}: should be working");
            assert!(s.signalled, "{desc}: one signal on the update channel");
        }
        if c.orphan {
            assert!(s.deleted, "{desc}: orphans are considered deleted");
            assert!(s.is_termination_requested(), "{desc}: orphan terminating");
        }
    }
}
