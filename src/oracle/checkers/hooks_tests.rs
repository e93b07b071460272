//! Unit tests of the postStart-holds-deletion checker.

use crate::oracle::testkit::*;

/// Pod `P` (grace 30 s) with container 1 running and its postStart hook in flight; the
/// API delete (grace 30 s) reaches the kubelet at 5 s.
fn deleted_during_hook() -> Feed {
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .running(P, 1);
    f.cri(P, "ExecPostStart");
    f.wait(5000);
    f.tr(Transition::ApiDeleteRequested { uid: P, grace: 30 });
    f.cfg(P, "DELETE");
    f
}

fn hook_returns(f: &mut Feed) {
    f.tr(Transition::CriEnd {
        uid: P,
        call: CriOp::ExecPostStart,
        target: 0,
        error: None,
    });
}

#[test]
fn a_kill_held_past_the_grace_by_a_hook_is_a_finding() {
    let mut f = deleted_during_hook();
    f.wait(60_000);
    hook_returns(&mut f);
    f.wait(3_000).exited(P, 1, 0);
    assert!(f.has(Inv::DeletionNotHeldByPostStart));
}

#[test]
fn a_kill_within_the_grace_is_fine() {
    let mut f = deleted_during_hook();
    f.wait(20_000);
    hook_returns(&mut f);
    f.wait(3_000).exited(P, 1, 0);
    assert!(!f.has(Inv::DeletionNotHeldByPostStart));
}

#[test]
fn a_hook_still_running_at_the_end_past_the_bound_is_a_finding() {
    let mut f = deleted_during_hook();
    f.wait(50_000);
    assert!(f.finish().contains(&"deletion-not-held-by-poststart"));
}

#[test]
fn a_slow_kill_without_a_hook_is_not_this_invariants_business() {
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .running(P, 1);
    f.cri(P, "ExecPostStart");
    hook_returns(&mut f);
    f.wait(5000);
    f.tr(Transition::ApiDeleteRequested { uid: P, grace: 30 });
    f.cfg(P, "DELETE");
    f.wait(90_000).exited(P, 1, 0);
    assert!(!f.has(Inv::DeletionNotHeldByPostStart));
}
