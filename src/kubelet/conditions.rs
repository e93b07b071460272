//! Pod conditions as the kubelet writes them.
//!
//! Ports, as of v1.31: `pkg/kubelet/status/generate.go` (`GenerateContainersReadyCondition`,
//! `GeneratePodReadyCondition`, `GeneratePodInitializedCondition`,
//! `GeneratePodReadyToStartContainersCondition`, `NeedToReconcilePodReadiness` from
//! `status_manager.go`); the conditions step of `generateAPIPodStatus`
//! (`pkg/kubelet/kubelet_pods.go`); and the conditions part of `mergePodStatus`,
//! `SetContainerReadiness` and `isPodStatusByKubeletEqual`
//! (`pkg/kubelet/status/status_manager.go`).
//!
//! The kubelet owns five conditions and rewrites them on every status it generates, in
//! upstream's order: `PodReadyToStartContainers` (feature gate, beta and on since v1.29:
//! switch `readyToStartContainersCondition`), `Initialized`, `Ready`, `ContainersReady`,
//! `PodScheduled` (always True). Conditions it does not own (a readiness gate's) are copied
//! from the API object it last saw and never changed. `DisruptionTarget` is shared: the
//! eviction manager and the node shutdown manager add it to the status their kill writes
//! (feature gate `PodDisruptionConditions`, on since v1.26: switch
//! `disruptionTargetCondition`), and the status manager sends it only together with the
//! terminal phase. The active-deadline handler does not add it in v1.31.
//!
//! Not modelled: `lastTransitionTime` and `observedGeneration`.

use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPod, ApiPodStatus, ConditionStatus, Conditions,
    PodCondition, PodConditionType, PodPhase, PodSpec, RtPodStatus,
};
use std::sync::Arc;

use ConditionStatus::{False, True};
use PodConditionType as T;

/// Reasons (`generate.go`).
pub(crate) const POD_COMPLETED: &str = "PodCompleted";
pub(crate) const POD_FAILED: &str = "PodFailed";
pub(crate) const CONTAINERS_NOT_READY: &str = "ContainersNotReady";
pub(crate) const CONTAINERS_NOT_INITIALIZED: &str = "ContainersNotInitialized";
pub(crate) const READINESS_GATES_NOT_READY: &str = "ReadinessGatesNotReady";
/// `v1.PodReasonTerminationByKubelet`, the reason of the kubelet's `DisruptionTarget`.
pub(crate) const TERMINATION_BY_KUBELET: &str = "TerminationByKubelet";

fn cond(
    kind: PodConditionType,
    status: ConditionStatus,
    reason: &'static str,
    message: String,
) -> PodCondition {
    PodCondition {
        kind,
        status,
        reason: Some(reason),
        message: (!message.is_empty()).then(|| Arc::from(message)),
    }
}

/// Go's `%s` of a `[]string` (`[a b]`), appended to `out`.
fn push_go_list(out: &mut String, names: &[&str]) {
    out.push('[');
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(n);
    }
    out.push(']');
}

/// A condition that is True unless containers are listed: False with `reason` and the
/// message upstream's generators build (`containers with unknown status: [..]`, then
/// `containers with <what> status: [..]`, joined by `, `). The message is built in one
/// buffer (this runs on every generated status).
fn listed(
    kind: PodConditionType,
    reason: &'static str,
    unknown: &[&str],
    (what, others): (&str, &[&str]),
) -> PodCondition {
    if unknown.is_empty() && others.is_empty() {
        return PodCondition::new(kind, ConditionStatus::True);
    }
    let mut msg = String::with_capacity(64);
    if !unknown.is_empty() {
        msg.push_str("containers with unknown status: ");
        push_go_list(&mut msg, unknown);
    }
    if !others.is_empty() {
        if !msg.is_empty() {
            msg.push_str(", ");
        }
        msg.push_str("containers with ");
        msg.push_str(what);
        msg.push_str(" status: ");
        push_go_list(&mut msg, others);
    }
    cond(kind, ConditionStatus::False, reason, msg)
}

/// The `DisruptionTarget` condition the eviction and node shutdown managers add.
pub(crate) fn disruption_target(message: &str) -> PodCondition {
    cond(
        T::DisruptionTarget,
        True,
        TERMINATION_BY_KUBELET,
        message.to_owned(),
    )
}

/// `generateContainersReadyConditionForTerminalPhase` and its Ready twin.
fn terminal(kind: PodConditionType, phase: PodPhase) -> PodCondition {
    let reason = match phase {
        PodPhase::Failed => Some(POD_FAILED),
        PodPhase::Succeeded => Some(POD_COMPLETED),
        _ => None,
    };
    PodCondition {
        kind,
        status: False,
        reason,
        message: None,
    }
}

/// `GenerateContainersReadyCondition` (regular containers; restartable init containers
/// count too once they exist).
pub(crate) fn containers_ready(
    spec: &PodSpec,
    statuses: &[ApiContainerStatus],
    phase: PodPhase,
) -> PodCondition {
    containers_ready_in(spec, [statuses, &[]], phase)
}

/// [`containers_ready`] over two status lists searched in order (the regular then the
/// init container statuses, as upstream searches their concatenation), without building
/// the concatenation.
fn containers_ready_in(
    spec: &PodSpec,
    statuses: [&[ApiContainerStatus]; 2],
    phase: PodPhase,
) -> PodCondition {
    let (mut unknown, mut unready) = (Vec::new(), Vec::new());
    // v1.29+: native sidecars count too, before the regular containers.
    let sidecars = spec.init_containers.iter().filter(|c| c.is_sidecar());
    for c in sidecars.chain(&spec.containers) {
        let found = statuses
            .iter()
            .flat_map(|l| l.iter())
            .find(|s| *s.name == *c.name);
        match found {
            Some(s) if !s.ready => unready.push(c.name.as_str()),
            Some(_) => {}
            None => unknown.push(c.name.as_str()),
        }
    }
    if (phase == PodPhase::Succeeded && unknown.is_empty()) || phase == PodPhase::Failed {
        return terminal(T::ContainersReady, phase);
    }
    listed(
        T::ContainersReady,
        CONTAINERS_NOT_READY,
        &unknown,
        ("unready", &unready),
    )
}

/// [`containers_ready_in`] for a status built against `prev` (the cached status's
/// `ContainersReady`): the same condition, made without the two name lists (a bit per
/// container) and with its message written into a buffer kept between calls. A message
/// equal to `prev`'s is `prev`'s own text, shared: in the steady state (a pod whose
/// containers are not ready yet) nothing is allocated, and the list builder's test
/// against the cached list finds the very same text. Pods of over 64 containers take
/// [`containers_ready_in`].
fn containers_ready_against(
    spec: &PodSpec,
    statuses: [&[ApiContainerStatus]; 2],
    phase: PodPhase,
    prev: Option<&PodCondition>,
) -> PodCondition {
    thread_local! {
        static MESSAGE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    if spec.init_containers.len() + spec.containers.len() > 64 {
        return containers_ready_in(spec, statuses, phase);
    }
    let names = || {
        let sidecars = spec.init_containers.iter().filter(|c| c.is_sidecar());
        sidecars.chain(&spec.containers).map(|c| c.name.as_str())
    };
    let (mut unknown, mut unready) = (0u64, 0u64);
    for (i, name) in names().enumerate() {
        let found = statuses
            .iter()
            .flat_map(|l| l.iter())
            .find(|s| *s.name == *name);
        match found {
            Some(s) if !s.ready => unready |= 1 << i,
            Some(_) => {}
            None => unknown |= 1 << i,
        }
    }
    let out = if (phase == PodPhase::Succeeded && unknown == 0) || phase == PodPhase::Failed {
        terminal(T::ContainersReady, phase)
    } else if unknown == 0 && unready == 0 {
        PodCondition::new(T::ContainersReady, True)
    } else {
        // `listed`'s message, the names picked by their bits.
        let push_names = |msg: &mut String, bits: u64| {
            msg.push('[');
            let picked = names().enumerate().filter(|(i, _)| bits & (1 << i) != 0);
            for (k, (_, name)) in picked.enumerate() {
                if k > 0 {
                    msg.push(' ');
                }
                msg.push_str(name);
            }
            msg.push(']');
        };
        let message = MESSAGE.with_borrow_mut(|msg| {
            msg.clear();
            if unknown != 0 {
                msg.push_str("containers with unknown status: ");
                push_names(msg, unknown);
            }
            if unready != 0 {
                if !msg.is_empty() {
                    msg.push_str(", ");
                }
                msg.push_str("containers with unready status: ");
                push_names(msg, unready);
            }
            match prev.and_then(|p| p.message.as_ref()) {
                Some(m) if **m == **msg => m.clone(),
                _ => Arc::from(msg.as_str()),
            }
        });
        PodCondition {
            kind: T::ContainersReady,
            status: False,
            reason: Some(CONTAINERS_NOT_READY),
            message: Some(message),
        }
    };
    debug_assert_eq!(
        out,
        containers_ready_in(spec, statuses, phase),
        "ContainersReady built against the cached condition differs from the one built \
         from its name lists"
    );
    out
}

/// `GeneratePodReadyCondition`: the containers are ready and every readiness gate's
/// condition is True in `conditions`.
pub(crate) fn pod_ready(
    spec: &PodSpec,
    conditions: &Conditions,
    statuses: &[ApiContainerStatus],
    phase: PodPhase,
) -> PodCondition {
    pod_ready_from(containers_ready(spec, statuses, phase), spec, &conditions.0)
}

/// `GeneratePodReadyCondition` given its `GenerateContainersReadyCondition` result `cr`
/// (upstream computes it inside; [`generate`] needs it twice and computes it once).
fn pod_ready_from(cr: PodCondition, spec: &PodSpec, conditions: &[PodCondition]) -> PodCondition {
    if !cr.is_true() {
        return PodCondition {
            kind: T::Ready,
            ..cr
        };
    }
    let mut msgs = Vec::new();
    for gate in &spec.readiness_gates.0 {
        match conditions.iter().find(|c| &c.kind == gate) {
            None => msgs.push(format!(
                "corresponding condition of pod readiness gate \"{}\" does not exist.",
                gate.as_str()
            )),
            Some(c) if !c.is_true() => msgs.push(format!(
                "the status of pod readiness gate \"{}\" is not \"True\", but {}",
                gate.as_str(),
                c.status.as_str()
            )),
            Some(_) => {}
        }
    }
    if msgs.is_empty() {
        return PodCondition::new(T::Ready, True);
    }
    cond(T::Ready, False, READINESS_GATES_NOT_READY, msgs.join(", "))
}

/// `GeneratePodInitializedCondition`. This is the one seam for init containers: it reads
/// the spec's init containers and their statuses (`init_statuses`, empty while podsim
/// runs none: every bundled pod has no init container and is Initialized). A regular init
/// container counts as done when its status is ready (the kubelet marks an init container
/// ready when it exited 0); a restartable one (a native sidecar) will count once started.
pub(crate) fn initialized(
    spec: &PodSpec,
    init_statuses: &[ApiContainerStatus],
    statuses: &[ApiContainerStatus],
    phase: PodPhase,
) -> PodCondition {
    // No init container: nothing is unknown or incomplete, so short of Succeeded the
    // condition is True whether or not a regular container started (no search).
    if spec.init_containers.is_empty() && phase != PodPhase::Succeeded {
        debug_assert_eq!(
            initialized_in_full(spec, init_statuses, statuses, phase),
            PodCondition::new(T::Initialized, True),
            "Initialized without init containers"
        );
        return PodCondition::new(T::Initialized, True);
    }
    initialized_in_full(spec, init_statuses, statuses, phase)
}

/// [`initialized`] step by step.
fn initialized_in_full(
    spec: &PodSpec,
    init_statuses: &[ApiContainerStatus],
    statuses: &[ApiContainerStatus],
    phase: PodPhase,
) -> PodCondition {
    let (mut unknown, mut incomplete) = (Vec::new(), Vec::new());
    for c in &spec.init_containers {
        match init_statuses.iter().find(|s| *s.name == *c.name) {
            None => unknown.push(c.name.as_str()),
            Some(s) if !s.ready => incomplete.push(c.name.as_str()),
            Some(_) => {}
        }
    }
    if phase == PodPhase::Succeeded && unknown.is_empty() {
        return cond(T::Initialized, True, POD_COMPLETED, String::new());
    }
    // HasAnyRegularContainerStarted: a regular container ran, so the pod was initialised.
    let started = statuses.iter().any(|s| {
        spec.containers.iter().any(|c| *c.name == *s.name)
            && matches!(
                s.state,
                ApiContainerState::Running { .. } | ApiContainerState::Terminated { .. }
            )
    });
    if started {
        return PodCondition::new(T::Initialized, True);
    }
    listed(
        T::Initialized,
        CONTAINERS_NOT_INITIALIZED,
        &unknown,
        ("incomplete", &incomplete),
    )
}

/// `GeneratePodReadyToStartContainersCondition`: True when no new sandbox is needed (one
/// ready sandbox exists, its network configured).
pub(crate) fn ready_to_start_containers(rt: &RtPodStatus) -> PodCondition {
    let changed = super::sync::pod_sandbox_changed(rt).0;
    PodCondition::new(
        T::PodReadyToStartContainers,
        if changed { False } else { True },
    )
}

/// The conditions step of `generateAPIPodStatus`: the API object's conditions the kubelet
/// does not own, the cached `DisruptionTarget`, then the kubelet's own five.
pub(crate) fn generate(
    pod: &ApiPod,
    cached: &ApiPodStatus,
    rt: &RtPodStatus,
    statuses: &[ApiContainerStatus],
    init_statuses: &[ApiContainerStatus],
    phase: PodPhase,
    ready_to_start_gate: bool,
) -> Conditions {
    // Built against the cached list (this runs on every generated status): in the steady
    // state every condition equals the cached one and the cached list is shared as is.
    let mut out = ListBuilder::new(&cached.conditions, pod.status.conditions.0.len() + 6);
    // The API's conditions the kubelet does not own, the cached DisruptionTarget replacing
    // the first one of its type (`replace_or_append`).
    let dt = cached.conditions.get(&T::DisruptionTarget);
    let mut dt_placed = false;
    for c in pod
        .status
        .conditions
        .iter()
        .filter(|c| !c.kind.by_kubelet())
    {
        match dt {
            Some(d) if !dt_placed && c.kind == d.kind => {
                out.push_ref(d);
                dt_placed = true;
            }
            _ => out.push_ref(c),
        }
    }
    if let Some(d) = dt.filter(|_| !dt_placed) {
        out.push_ref(d);
    }
    if ready_to_start_gate {
        out.push(ready_to_start_containers(rt));
    }
    out.push(initialized(&pod.spec, init_statuses, statuses, phase));
    // Ready and ContainersReady search the regular then the init container statuses.
    let cr = containers_ready_against(
        &pod.spec,
        [statuses, init_statuses],
        phase,
        cached.conditions.get(&T::ContainersReady),
    );
    let ready = pod_ready_from(cr.clone(), &pod.spec, out.as_slice());
    out.push(ready);
    out.push(cr);
    out.push(PodCondition::new(T::PodScheduled, True));
    out.finish()
}

/// A condition list built against a cached one: while each pushed condition equals the
/// cached one at its position nothing is copied; [`ListBuilder::finish`] shares the cached
/// list when the whole of it was pushed, and otherwise wraps the list built.
///
/// When a push leaves the cached list, the builder looks for a list it generated lately
/// (for any pod: pods in the same state get equal lists) that begins with the conditions
/// pushed so far and this one, and goes on comparing against it; ending on the whole of
/// such a list shares it, with no list copied, interned and freed. Debug builds keep
/// every condition pushed and check the list finished against them.
struct ListBuilder<'a> {
    cached: &'a Conditions,
    /// A lately generated list the pushes match instead of `cached` (see above).
    other: Option<Conditions>,
    /// How many leading conditions equal those of the list matched (while `own` is
    /// `None`).
    same: usize,
    own: Option<Vec<PodCondition>>,
    capacity: usize,
    #[cfg(debug_assertions)]
    pushed: Vec<PodCondition>,
}

/// How many lists [`ListBuilder::finish`] made lately are remembered (most recent first).
const GENERATED_KEEP: usize = 16;

thread_local! {
    /// The condition lists the builder made lately, for [`ListBuilder::switch`]. Only
    /// sharing changes: every list here is immutable and compared by value.
    static GENERATED: std::cell::RefCell<Vec<Conditions>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl<'a> ListBuilder<'a> {
    fn new(cached: &'a Conditions, capacity: usize) -> Self {
        ListBuilder {
            cached,
            other: None,
            same: 0,
            own: None,
            capacity,
            #[cfg(debug_assertions)]
            pushed: Vec::new(),
        }
    }

    /// The list the pushes are compared with.
    fn target(&self) -> &[PodCondition] {
        match &self.other {
            Some(o) => &o.0,
            None => &self.cached.0,
        }
    }

    fn push_ref(&mut self, c: &PodCondition) {
        #[cfg(debug_assertions)]
        self.pushed.push(c.clone());
        if self.own.is_none() && (self.target().get(self.same) == Some(c) || self.switch(c)) {
            self.same += 1;
        } else {
            self.diverged().push(c.clone());
        }
    }

    fn push(&mut self, c: PodCondition) {
        #[cfg(debug_assertions)]
        self.pushed.push(c.clone());
        if self.own.is_none() && (self.target().get(self.same) == Some(&c) || self.switch(&c)) {
            self.same += 1;
        } else {
            self.diverged().push(c);
        }
    }

    /// A push left the list matched: match a lately generated list holding the
    /// conditions pushed so far, then `c`, if there is one (it becomes the most recent).
    #[inline(never)]
    fn switch(&mut self, c: &PodCondition) -> bool {
        let same = self.same;
        let found = GENERATED.with_borrow_mut(|g| {
            let prefix = self.target().get(..same)?;
            let i = g.iter().position(|l| {
                l.0.get(same) == Some(c) && l.0.get(..same).is_some_and(|p| p == prefix)
            })?;
            g[..=i].rotate_right(1);
            Some(g[0].clone())
        });
        let switched = found.is_some();
        if switched {
            self.other = found;
        }
        switched
    }

    /// The list of its own, started from the matched prefix pushed so far.
    fn diverged(&mut self) -> &mut Vec<PodCondition> {
        let (same, capacity) = (self.same, self.capacity);
        if self.own.is_none() {
            let mut v = Vec::with_capacity(capacity.max(same + 1));
            v.extend_from_slice(&self.target()[..same]);
            self.own = Some(v);
        }
        self.own.as_mut().expect("just made")
    }

    fn as_slice(&self) -> &[PodCondition] {
        match &self.own {
            Some(v) => v,
            None => &self.target()[..self.same],
        }
    }

    fn finish(self) -> Conditions {
        let target = self.other.as_ref().unwrap_or(self.cached);
        let out = match self.own {
            None if self.same == target.0.len() => target.clone(),
            None => remember(Conditions::interned(target.0[..self.same].to_vec())),
            Some(v) => remember(Conditions::interned(v)),
        };
        #[cfg(debug_assertions)]
        assert_eq!(
            *out.0, self.pushed,
            "condition list rule broken: the list built differs from the conditions pushed"
        );
        out
    }
}

/// Note `l` as the builder's most recent list (see [`ListBuilder::switch`]).
fn remember(l: Conditions) -> Conditions {
    GENERATED.with_borrow_mut(|g| match g.iter().position(|o| Arc::ptr_eq(&o.0, &l.0)) {
        Some(i) => g[..=i].rotate_right(1),
        None => {
            g.truncate(GENERATED_KEEP - 1);
            g.insert(0, l.clone());
        }
    });
    l
}

/// The conditions part of `mergePodStatus`: what the status manager writes over the API
/// object's `old` status. Conditions the kubelet does not own stay as the API has them;
/// the kubelet's own come from `new`; `DisruptionTarget` from `new` only goes with the
/// transition to a terminal phase once no container can run.
pub(crate) fn merge(
    old: &ApiPodStatus,
    new: &ApiPodStatus,
    could_have_running: bool,
) -> Conditions {
    // The usual case, when neither list holds a condition the kubelet does not own: the
    // result is the new list itself, shared (no list is built). Debug builds merge in full
    // and compare.
    let owned = |c: &PodCondition| c.kind.by_kubelet();
    if old.conditions.iter().all(owned) && new.conditions.iter().all(owned) {
        debug_assert_eq!(
            merge_in_full(old, new, could_have_running),
            new.conditions,
            "condition merge shortcut disagrees with the full merge"
        );
        return new.conditions.clone();
    }
    merge_in_full(old, new, could_have_running)
}

/// [`merge`] step by step.
fn merge_in_full(old: &ApiPodStatus, new: &ApiPodStatus, could_have_running: bool) -> Conditions {
    let mut out = Conditions::from_vec(
        old.conditions
            .iter()
            .filter(|c| !c.kind.by_kubelet())
            .cloned()
            .collect(),
    );
    let to_terminal = !old.phase.is_terminal() && new.phase.is_terminal();
    for c in new.conditions.iter() {
        if c.kind.by_kubelet() {
            out.push(c.clone());
        } else if c.kind.shared_by_kubelet() && to_terminal && !could_have_running {
            out.replace_or_append(c.clone());
        }
    }
    // Share an equal list (the new status's, else the old one's) instead of a third copy.
    let out = Conditions::interned(std::mem::take(out.make_mut()));
    out.shared_with(&new.conditions)
        .shared_with(&old.conditions)
}

/// The end of `mergePodStatus`: a terminal phase forces Ready and ContainersReady False.
pub(crate) fn force_not_ready_when_terminal(status: &mut ApiPodStatus) {
    if !status.phase.is_terminal() {
        return;
    }
    let c = &mut status.conditions;
    if c.is_true(&T::Ready) || c.is_true(&T::ContainersReady) {
        c.replace_or_append(terminal(T::ContainersReady, status.phase));
        c.replace_or_append(terminal(T::Ready, status.phase));
    }
}

/// The conditions part of `SetContainerReadiness`: Ready and ContainersReady regenerated
/// from the cached status (whose other conditions are as last generated).
pub(crate) fn refresh_readiness(spec: &PodSpec, status: &mut ApiPodStatus) {
    let lists = [&status.containers[..], &status.init_containers.0[..]];
    let cr = containers_ready_in(spec, lists, status.phase);
    let ready = pod_ready_from(cr.clone(), spec, &status.conditions.0);
    status.conditions.replace_or_append(ready);
    status.conditions.replace_or_append(cr);
    status.ready = status.conditions.is_true(&T::Ready);
}

/// `NeedToReconcilePodReadiness`: a pod with readiness gates whose Ready condition in the
/// API differs from what its conditions now give (a gate changed).
pub(crate) fn need_to_reconcile_pod_readiness(pod: &ApiPod) -> bool {
    if pod.spec.readiness_gates.0.is_empty() {
        return false;
    }
    let s = &pod.status;
    let want = pod_ready(&pod.spec, &s.conditions, &s.containers, s.phase);
    match s.conditions.get(&T::Ready) {
        Some(cur) => cur.status != want.status || cur.message != want.message,
        None => false,
    }
}

/// `isPodStatusByKubeletEqual`: equal but for the conditions the kubelet neither owns nor
/// shares. Compared in place, without copying either status (the status manager asks
/// this for every cached pod on each reconcile).
pub(crate) fn equal_by_kubelet(a: &ApiPodStatus, b: &ApiPodStatus) -> bool {
    if std::ptr::eq(a, b) {
        return true;
    }
    // Every field but the conditions must be equal (listed without `..`: a new field
    // must be added here).
    let ApiPodStatus {
        phase,
        reason,
        message,
        ready,
        start_time,
        containers,
        conditions,
        init_containers,
    } = a;
    let rest_equal = *phase == b.phase
        && *ready == b.ready
        && *start_time == b.start_time
        && *reason == b.reason
        && *message == b.message
        && *containers == b.containers
        && *init_containers == b.init_containers;
    if !rest_equal {
        return false;
    }
    if *conditions == b.conditions {
        return true;
    }
    own_conditions(conditions) == own_conditions(&b.conditions)
}

/// The conditions the kubelet owns or shares, sorted by type (stable).
fn own_conditions(c: &Conditions) -> Vec<&PodCondition> {
    let mut v: Vec<&PodCondition> = c
        .iter()
        .filter(|c| c.kind.by_kubelet() || c.kind.shared_by_kubelet())
        .collect();
    v.sort_by(|x, y| x.kind.cmp(&y.kind));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, PodUid, ReadinessGates, RestartPolicy};
    use crate::sim::SimTime;

    #[test]
    fn list_builder_shares_the_cached_list_only_when_equal() {
        let c = |k: PodConditionType, st: ConditionStatus| PodCondition::new(k, st);
        let cached = Conditions::from_vec(vec![c(T::Initialized, True), c(T::Ready, False)]);
        let build = |items: &[PodCondition]| {
            let mut b = ListBuilder::new(&cached, 4);
            for (i, it) in items.iter().enumerate() {
                if i % 2 == 0 {
                    b.push_ref(it);
                } else {
                    b.push(it.clone());
                }
            }
            assert_eq!(b.as_slice(), items);
            b.finish()
        };
        let same = build(&cached.0);
        assert!(Arc::ptr_eq(&same.0, &cached.0));
        let prefix = build(&cached.0[..1]);
        assert_eq!(*prefix.0, cached.0[..1]);
        let changed = [c(T::Initialized, True), c(T::Ready, True)];
        assert_eq!(*build(&changed).0, changed);
        let longer = [
            c(T::Initialized, True),
            c(T::Ready, False),
            c(T::PodScheduled, True),
        ];
        assert_eq!(*build(&longer).0, longer);
        assert!(build(&[]).0.is_empty());
        // A list built again (for another pod, against the same cached list) is the one
        // built lately, shared: nothing copied.
        let first = build(&changed);
        let again = build(&changed);
        assert!(Arc::ptr_eq(&first.0, &again.0));
        let other = [c(T::Initialized, False), c(T::Ready, True)];
        assert_eq!(*build(&other).0, other);
    }

    fn spec(gates: &[&str]) -> PodSpec {
        let mut s = PodSpec::new(
            "p",
            "default",
            RestartPolicy::Always,
            vec![
                ContainerSpec::named("a", "i"),
                ContainerSpec::named("b", "i"),
            ],
        );
        s.readiness_gates = ReadinessGates(gates.iter().map(|g| T::parse(g)).collect());
        s
    }

    fn st(name: &str, ready: bool) -> ApiContainerStatus {
        ApiContainerStatus {
            name: name.into(),
            state: ApiContainerState::Running {
                started_at: SimTime(1),
            },
            last_state: None,
            restart_count: 0,
            ready,
            started: true,
            container_id: None,
        }
    }

    #[test]
    fn containers_ready_names_unready_and_unknown_containers() {
        let s = spec(&[]);
        let c = containers_ready(&s, &[st("a", false)], PodPhase::Running);
        assert_eq!(c.status, False);
        assert_eq!(c.reason, Some(CONTAINERS_NOT_READY));
        assert_eq!(
            c.message.as_deref(),
            Some("containers with unknown status: [b], containers with unready status: [a]")
        );
        let c = containers_ready(&s, &[st("a", true), st("b", true)], PodPhase::Running);
        assert!(c.is_true() && c.reason.is_none());
        let c = containers_ready(&s, &[st("a", true), st("b", true)], PodPhase::Failed);
        assert_eq!((c.status, c.reason), (False, Some(POD_FAILED)));
        let c = containers_ready(&s, &[st("a", false), st("b", false)], PodPhase::Succeeded);
        assert_eq!((c.status, c.reason), (False, Some(POD_COMPLETED)));
    }

    #[test]
    fn ready_needs_every_gate_true() {
        let s = spec(&["example.com/g"]);
        let both = [st("a", true), st("b", true)];
        let none = Conditions::default();
        let r = pod_ready(&s, &none, &both, PodPhase::Running);
        assert_eq!(
            (r.status, r.reason),
            (False, Some(READINESS_GATES_NOT_READY))
        );
        let mut set = Conditions::default();
        set.replace_or_append(PodCondition::new(T::parse("example.com/g"), False));
        let r2 = pod_ready(&s, &set, &both, PodPhase::Running);
        assert_eq!(r2.reason, Some(READINESS_GATES_NOT_READY));
        assert_ne!(r.message, r2.message);
        set.replace_or_append(PodCondition::new(T::parse("example.com/g"), True));
        assert!(pod_ready(&s, &set, &both, PodPhase::Running).is_true());
        // Unready containers win over the gates, with ContainersReady's reason.
        let r = pod_ready(
            &s,
            &set,
            &[st("a", false), st("b", true)],
            PodPhase::Running,
        );
        assert_eq!(r.reason, Some(CONTAINERS_NOT_READY));
    }

    #[test]
    fn initialized_without_init_containers_is_true() {
        let s = spec(&[]);
        assert!(initialized(&s, &[], &[], PodPhase::Pending).is_true());
        let c = initialized(&s, &[], &[], PodPhase::Succeeded);
        assert_eq!((c.status, c.reason), (True, Some(POD_COMPLETED)));
        let mut s = spec(&[]);
        s.init_containers = vec![ContainerSpec::named("init", "i")].into();
        let c = initialized(&s, &[], &[], PodPhase::Pending);
        assert_eq!(
            (c.status, c.reason),
            (False, Some(CONTAINERS_NOT_INITIALIZED))
        );
        let mut done = st("init", true);
        done.state = ApiContainerState::Terminated {
            exit_code: 0,
            reason: "Completed",
            started_at: None,
            finished_at: None,
        };
        assert!(initialized(&s, &[done], &[], PodPhase::Pending).is_true());
        // A regular container that ran means the pod was initialised before.
        assert!(initialized(&s, &[], &[st("a", false)], PodPhase::Running).is_true());
    }

    #[test]
    fn generate_keeps_foreign_conditions_and_the_cached_disruption_target() {
        let mut pod = ApiPod::new(PodUid(1), spec(&["example.com/g"]));
        Arc::make_mut(&mut pod.status)
            .conditions
            .make_mut()
            .push(PodCondition::new(T::parse("example.com/g"), True));
        Arc::make_mut(&mut pod.status)
            .conditions
            .make_mut()
            .push(PodCondition::new(T::Ready, False));
        let mut cached = ApiPodStatus::default();
        cached.conditions.push(disruption_target("m"));
        let statuses = [st("a", true), st("b", true)];
        let c = generate(
            &pod,
            &cached,
            &RtPodStatus::default(),
            &statuses,
            &[],
            PodPhase::Running,
            true,
        );
        let kinds: Vec<&str> = c.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "example.com/g",
                "DisruptionTarget",
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled"
            ]
        );
        assert!(c.is_true(&T::Ready));
        assert!(!c.is_true(&T::PodReadyToStartContainers));
        let c = generate(
            &pod,
            &cached,
            &RtPodStatus::default(),
            &statuses,
            &[],
            PodPhase::Running,
            false,
        );
        assert!(c.get(&T::PodReadyToStartContainers).is_none());
    }

    #[test]
    fn merge_of_kubelet_owned_lists_is_the_new_list_shared() {
        let mut old = ApiPodStatus::default();
        old.conditions.push(PodCondition::new(T::Ready, False));
        let mut new = ApiPodStatus::default();
        new.conditions
            .push(PodCondition::new(T::ContainersReady, True));
        new.conditions.push(PodCondition::new(T::Ready, True));
        let out = merge(&old, &new, true);
        assert!(Arc::ptr_eq(&out.0, &new.conditions.0));
        assert_eq!(out, merge_in_full(&old, &new, true));
        // A condition the kubelet does not own (a readiness gate's) takes the full merge.
        old.conditions
            .push(PodCondition::new(T::parse("x/g"), True));
        let out = merge(&old, &new, true);
        assert_eq!(out, merge_in_full(&old, &new, true));
        let kinds: Vec<&str> = out.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(kinds, ["x/g", "ContainersReady", "Ready"]);
    }

    #[test]
    fn merge_sends_disruption_target_only_with_the_terminal_phase() {
        let mut old = ApiPodStatus {
            phase: PodPhase::Running,
            ..Default::default()
        };
        old.conditions
            .make_mut()
            .push(PodCondition::new(T::parse("x/g"), True));
        let mut new = ApiPodStatus {
            phase: PodPhase::Failed,
            ..Default::default()
        };
        new.conditions.push(disruption_target("m"));
        new.conditions.push(PodCondition::new(T::Ready, False));
        let held = merge(&old, &new, true);
        assert!(held.get(&T::DisruptionTarget).is_none());
        assert!(held.get(&T::parse("x/g")).is_some());
        let sent = merge(&old, &new, false);
        assert!(sent.is_true(&T::DisruptionTarget));
        let kinds: Vec<&str> = sent.iter().map(|c| c.kind.as_str()).collect();
        assert_eq!(kinds, ["x/g", "DisruptionTarget", "Ready"]);
        // Already terminal in the API: the API's copy stays, the new one is not sent.
        old.phase = PodPhase::Failed;
        assert!(merge(&old, &new, false).get(&T::DisruptionTarget).is_none());
    }

    #[test]
    fn readiness_reconcile_only_for_pods_with_gates() {
        let mut pod = ApiPod::new(PodUid(1), spec(&[]));
        Arc::make_mut(&mut pod.status).phase = PodPhase::Running;
        Arc::make_mut(&mut pod.status).containers = vec![st("a", true), st("b", true)];
        Arc::make_mut(&mut pod.status)
            .conditions
            .make_mut()
            .push(PodCondition::new(T::Ready, False));
        assert!(!need_to_reconcile_pod_readiness(&pod));
        let mut gated = pod.clone();
        gated.spec = Arc::new(spec(&["x/g"]));
        Arc::make_mut(&mut gated.status)
            .conditions
            .make_mut()
            .push(PodCondition::new(T::parse("x/g"), True));
        assert!(need_to_reconcile_pod_readiness(&gated));
        Arc::make_mut(&mut gated.status)
            .conditions
            .replace_or_append(PodCondition::new(T::Ready, True));
        assert!(!need_to_reconcile_pod_readiness(&gated));
    }

    #[test]
    fn equality_by_kubelet_ignores_foreign_conditions() {
        let mut a = ApiPodStatus::default();
        let mut b = a.clone();
        b.conditions
            .make_mut()
            .push(PodCondition::new(T::parse("x/g"), True));
        assert!(equal_by_kubelet(&a, &b));
        a.conditions.push(disruption_target("m"));
        assert!(!equal_by_kubelet(&a, &b));
    }
}
