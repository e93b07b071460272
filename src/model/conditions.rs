//! Pod conditions: the `v1.PodCondition` subset podsim models (type, status, reason,
//! message; no timestamps), the condition types the kubelet owns, and the check a
//! condition type must pass (API validation of `spec.readinessGates[].conditionType`).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// `v1.PodConditionType`: the types the kubelet writes or reads by name, and any other
/// (a readiness gate's, written by some other controller).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PodConditionType {
    PodScheduled,
    PodReadyToStartContainers,
    Initialized,
    ContainersReady,
    Ready,
    DisruptionTarget,
    /// A type no kubelet code knows, e.g. a readiness gate's `example.com/lb-ready`.
    Other(Arc<str>),
}

impl PodConditionType {
    /// The type named `s` (a known name is its variant).
    pub fn parse(s: &str) -> Self {
        use PodConditionType::*;
        match s {
            "PodScheduled" => PodScheduled,
            "PodReadyToStartContainers" => PodReadyToStartContainers,
            "Initialized" => Initialized,
            "ContainersReady" => ContainersReady,
            "Ready" => Ready,
            "DisruptionTarget" => DisruptionTarget,
            other => Other(other.into()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            PodConditionType::Other(s) => s,
            known => known.static_name().unwrap_or_default(),
        }
    }

    /// The name of a type the kubelet knows, as a static string (`None` for
    /// [`Self::Other`], whose name lives in the value): the run summary borrows it
    /// rather than copying it.
    pub(crate) fn static_name(&self) -> Option<&'static str> {
        use PodConditionType::*;
        Some(match self {
            PodScheduled => "PodScheduled",
            PodReadyToStartContainers => "PodReadyToStartContainers",
            Initialized => "Initialized",
            ContainersReady => "ContainersReady",
            Ready => "Ready",
            DisruptionTarget => "DisruptionTarget",
            Other(_) => return None,
        })
    }

    /// `PodConditionByKubelet` (v1.31 `pkg/kubelet/types/pod_status.go`): the types the
    /// kubelet owns and rewrites on every status it generates. (Upstream counts
    /// `PodReadyToStartContainers` only while its feature gate is on; podsim counts it
    /// always, which only matters to someone else writing it, and the timeline may not.)
    pub fn by_kubelet(&self) -> bool {
        use PodConditionType::*;
        matches!(
            self,
            PodScheduled | PodReadyToStartContainers | Initialized | ContainersReady | Ready
        )
    }

    /// `PodConditionSharedByKubelet`: written by the kubelet and by others.
    pub fn shared_by_kubelet(&self) -> bool {
        matches!(self, PodConditionType::DisruptionTarget)
    }
}

/// `v1.ConditionStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

impl ConditionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "True" => Some(ConditionStatus::True),
            "False" => Some(ConditionStatus::False),
            "Unknown" => Some(ConditionStatus::Unknown),
            _ => None,
        }
    }
}

/// `v1.PodCondition` without its timestamps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodCondition {
    pub kind: PodConditionType,
    pub status: ConditionStatus,
    pub reason: Option<&'static str>,
    pub message: Option<Arc<str>>,
}

impl PodCondition {
    /// A condition without reason or message.
    pub fn new(kind: PodConditionType, status: ConditionStatus) -> Self {
        PodCondition {
            kind,
            status,
            reason: None,
            message: None,
        }
    }

    pub fn is_true(&self) -> bool {
        self.status == ConditionStatus::True
    }
}

/// `status.conditions`, in the order they were written.
///
/// Hashes only the conditions the kubelet does not generate afresh on every status (a
/// readiness gate's, `DisruptionTarget`): the kubelet's own five follow from the rest of
/// the status and from traced runtime events, so runs that use neither readiness gates nor
/// a disruption condition keep the trace hashes they had before conditions were modelled.
///
/// Shared copy-on-write: the status manager's cache, the API object and the kubelet's
/// copies of one status hold the same list until one of them changes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conditions(pub Arc<Vec<PodCondition>>);

impl Hash for Conditions {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for c in self.0.iter().filter(|c| !c.kind.by_kubelet()) {
            c.hash(state);
        }
    }
}

impl Conditions {
    /// The list `v`, stored without spare capacity.
    pub fn from_vec(mut v: Vec<PodCondition>) -> Self {
        v.shrink_to_fit();
        Conditions(Arc::new(v))
    }

    /// The list `v`, shared with an equal list made recently on this thread (by any pod):
    /// pods in the same state have equal conditions, so at 100,000 pods a handful of lists
    /// stand for all of them instead of one per pod. Only memory changes: a list is
    /// copy-on-write, and nobody compares lists by address.
    pub fn interned(v: Vec<PodCondition>) -> Self {
        /// Distinct lists remembered (most recently used first).
        const KEEP: usize = 16;
        thread_local! {
            static RECENT: std::cell::RefCell<Vec<Arc<Vec<PodCondition>>>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        RECENT.with_borrow_mut(|recent| {
            if let Some(i) = recent.iter().position(|l| **l == v) {
                let l = recent[i].clone();
                recent[..=i].rotate_right(1);
                return Conditions(l);
            }
            let l = Conditions::from_vec(v).0;
            if recent.len() == KEEP {
                recent.pop();
            }
            recent.insert(0, l.clone());
            Conditions(l)
        })
    }

    /// `self`, sharing `other`'s list when the two are equal (so equal statuses keep one
    /// copy of their conditions).
    pub fn shared_with(self, other: &Conditions) -> Self {
        if self == *other {
            other.clone()
        } else {
            self
        }
    }

    /// Append `c` (copying the list first if it is shared).
    pub fn push(&mut self, c: PodCondition) {
        Arc::make_mut(&mut self.0).push(c);
    }

    /// The list to change in place (copied first if it is shared).
    pub fn make_mut(&mut self) -> &mut Vec<PodCondition> {
        Arc::make_mut(&mut self.0)
    }

    /// `GetPodConditionFromList`.
    pub fn get(&self, kind: &PodConditionType) -> Option<&PodCondition> {
        self.0.iter().find(|c| &c.kind == kind)
    }

    /// Whether the condition `kind` is there and True.
    pub fn is_true(&self, kind: &PodConditionType) -> bool {
        self.get(kind).is_some_and(PodCondition::is_true)
    }

    /// `ReplaceOrAppendPodCondition`: replace the condition of the same type in place, or
    /// append it.
    pub fn replace_or_append(&mut self, c: PodCondition) {
        match self.0.iter().position(|o| o.kind == c.kind) {
            Some(i) if self.0[i] == c => {}
            Some(i) => self.make_mut()[i] = c,
            None => self.push(c),
        }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, PodCondition> {
        self.0.iter()
    }
}

/// API validation of a condition type (a qualified name, as `ValidateQualifiedName` in
/// apimachinery): an optional DNS-subdomain prefix and `/`, then a name of at most 63
/// characters of alphanumerics, `-`, `_` and `.`, starting and ending alphanumeric.
/// `Err` says what is wrong.
pub fn check_condition_type(s: &str) -> Result<(), String> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            return Err("the prefix before `/` must not be empty".into());
        }
        if p.len() > 253 {
            return Err("the prefix before `/` must be at most 253 characters".into());
        }
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        };
        if !p.split('.').all(label_ok) {
            return Err(format!(
                "the prefix `{p}` must be a DNS subdomain (lower-case alphanumerics, `-` and \
                 `.`, e.g. `example.com`)"
            ));
        }
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    if name.is_empty() {
        return Err("the name part must not be empty".into());
    }
    if name.len() > 63 {
        return Err("the name part must be at most 63 characters".into());
    }
    let inner = |c: char| alnum(c) || c == '-' || c == '_' || c == '.';
    if !name.chars().all(inner)
        || !name.starts_with(alnum)
        || !name.ends_with(alnum)
        || name.contains('/')
    {
        return Err(format!(
            "the name `{name}` must consist of alphanumerics, `-`, `_` or `.`, and start and \
             end with an alphanumeric"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_types_parse_to_their_variants_and_back() {
        for s in [
            "PodScheduled",
            "PodReadyToStartContainers",
            "Initialized",
            "ContainersReady",
            "Ready",
            "DisruptionTarget",
            "example.com/lb-ready",
        ] {
            assert_eq!(PodConditionType::parse(s).as_str(), s);
        }
        assert!(matches!(
            PodConditionType::parse("example.com/lb-ready"),
            PodConditionType::Other(_)
        ));
        assert!(PodConditionType::Ready.by_kubelet());
        assert!(!PodConditionType::DisruptionTarget.by_kubelet());
        assert!(PodConditionType::DisruptionTarget.shared_by_kubelet());
        assert!(!PodConditionType::parse("x").by_kubelet());
    }

    #[test]
    fn condition_types_are_qualified_names() {
        for ok in ["Ready", "example.com/lb-ready", "a", "x_y.z", "a.b-c/D9"] {
            assert_eq!(check_condition_type(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "/x",
            "Example.com/x",
            "example.com/",
            "-x",
            "x-",
            "a b",
            "a/b/c",
            &"x".repeat(64),
        ] {
            assert!(check_condition_type(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn replace_or_append_keeps_position() {
        let mut c = Conditions::default();
        c.replace_or_append(PodCondition::new(
            PodConditionType::Ready,
            ConditionStatus::False,
        ));
        c.replace_or_append(PodCondition::new(
            PodConditionType::PodScheduled,
            ConditionStatus::True,
        ));
        c.replace_or_append(PodCondition::new(
            PodConditionType::Ready,
            ConditionStatus::True,
        ));
        assert_eq!(c.0.len(), 2);
        assert!(c.is_true(&PodConditionType::Ready));
        assert_eq!(c.0[0].kind, PodConditionType::Ready);
    }

    #[test]
    fn hash_skips_the_kubelets_own_conditions() {
        let h = |c: &Conditions| {
            let mut s = crate::sim::trace::StableHasher::default();
            c.hash(&mut s);
            s.finish()
        };
        let empty = Conditions::default();
        let own = Conditions::from_vec(vec![PodCondition::new(
            PodConditionType::Ready,
            ConditionStatus::True,
        )]);
        let gate = Conditions::from_vec(vec![PodCondition::new(
            PodConditionType::parse("example.com/g"),
            ConditionStatus::True,
        )]);
        assert_eq!(h(&empty), h(&own));
        assert_ne!(h(&empty), h(&gate));
    }
}
