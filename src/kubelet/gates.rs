//! Feature gates by release: the kubelet feature gates that change what podsim models,
//! each with its stages as upstream's `pkg/features/kube_features.go` of each release has
//! them (v1.21 to v1.31; from v1.31 on the file lists every stage with the release it
//! started in).
//!
//! A gate can set a behaviour switch (its value *is* the switch's value while the gate
//! exists: a gate that does not exist on a release is off there) and can allow scenario
//! features (a sidecar needs `SidecarContainers`, a `sleep` hook needs
//! `PodLifecycleSleepAction`, ...). The scenario sets gates under
//! `spec.kubelet.featureGates: {NAME: bool}`; a gate that the release does not know, or a
//! locked (GA) gate set against its default, is an error, as the kubelet refuses to start
//! with it (`featuregate.Set` in `k8s.io/component-base/featuregate`).
//!
//! Resolution order of a run's switches: the profile's switch values, then the switches of
//! the gates whose value differs from the release's default, then the scenario's explicit
//! `behaviours`.

use super::profile::{Behaviours, Sw, SWITCHES};
use super::release::minor;
use std::collections::BTreeMap;

/// A gate's maturity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    Alpha,
    Beta,
    Ga,
}

impl Stage {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Stage::Alpha => "alpha",
            Stage::Beta => "beta",
            Stage::Ga => "GA",
        }
    }
}

/// From release `v1.<since>` on (until the next step), the gate is at `stage` with
/// `default`; `locked`: it cannot be set against the default.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    pub(crate) since: u32,
    pub(crate) stage: Stage,
    pub(crate) default: bool,
    pub(crate) locked: bool,
}

const fn step(since: u32, stage: Stage, default: bool, locked: bool) -> Step {
    Step {
        since,
        stage,
        default,
        locked,
    }
}

/// One feature gate.
#[derive(Clone, Copy, Debug)]
pub struct Gate {
    /// The gate's name (its newest name).
    pub name: &'static str,
    /// An earlier name and the first release (minor) with `name`: the gate was called
    /// the earlier name before it.
    pub(crate) old_name: Option<(&'static str, u32)>,
    pub(crate) steps: &'static [Step],
    /// The first release (minor) that no longer has the gate.
    pub(crate) removed: Option<u32>,
    /// The behaviour switch the gate sets, if any.
    pub(crate) switch: Option<Sw>,
    /// Whether podsim models the gate turned off where it is on by default.
    pub(crate) off_built: bool,
    /// What the gate controls in podsim.
    pub controls: &'static str,
    /// Upstream KEP / PRs.
    pub refs: &'static str,
}

use Stage::{Alpha, Beta, Ga};

/// The gate table (by name).
pub const GATES: &[Gate] = &[
    Gate {
        name: "GracefulNodeShutdown",
        old_name: None,
        steps: &[step(20, Alpha, false, false), step(21, Beta, true, false)],
        removed: None,
        switch: None,
        off_built: true,
        controls: "the graceful node shutdown manager: off, `shutdownGracePeriod` and `shutdownGracePeriodCriticalPods` above 0 are an error (KubeletConfiguration validation)",
        refs: "KEP 2000",
    },
    Gate {
        name: "GracefulNodeShutdownBasedOnPodPriority",
        old_name: None,
        steps: &[step(23, Alpha, false, false), step(24, Beta, true, false)],
        removed: None,
        switch: None,
        off_built: true,
        controls: "`shutdownGracePeriodByPodPriority`; off, the field is an error (KubeletConfiguration validation). From v1.23 the shutdown manager always kills by priority groups (with the gate off, migrateConfig makes the two groups of `shutdownGracePeriod` and `shutdownGracePeriodCriticalPods`), so the gate sets no switch; before v1.23 there are no groups (switch `shutdownKillsByPriorityGroups`)",
        refs: "KEP 2712, PR 102915",
    },
    Gate {
        name: "LocalStorageCapacityIsolation",
        old_name: None,
        steps: &[step(10, Beta, true, false), step(25, Ga, true, true)],
        removed: Some(27),
        switch: None,
        off_built: false,
        controls: "ephemeral-storage limits and emptyDir sizeLimit enforced by the eviction manager; `false` is not built yet",
        refs: "KEP 361",
    },
    Gate {
        name: "PodDisruptionConditions",
        old_name: None,
        steps: &[
            step(25, Alpha, false, false),
            step(26, Beta, true, false),
            step(31, Ga, true, true),
        ],
        removed: None,
        switch: Some(Sw::DisruptionTargetCondition),
        off_built: true,
        controls: "behaviour `disruptionTargetCondition`",
        refs: "KEP 3329",
    },
    Gate {
        name: "PodLifecycleSleepAction",
        old_name: None,
        steps: &[step(29, Alpha, false, false), step(30, Beta, true, false)],
        removed: None,
        switch: None,
        off_built: true,
        controls: "the `sleep` action of postStart and preStop hooks; off, a `sleep` hook is an error (the API server drops the field)",
        refs: "KEP 3960",
    },
    Gate {
        name: "PodReadyToStartContainersCondition",
        old_name: Some(("PodHasNetworkCondition", 28)),
        steps: &[step(25, Alpha, false, false), step(29, Beta, true, false)],
        removed: None,
        switch: Some(Sw::ReadyToStartContainersCondition),
        off_built: true,
        controls: "behaviour `readyToStartContainersCondition` (named PodHasNetworkCondition before v1.28)",
        refs: "KEP 3085",
    },
    Gate {
        name: "ProbeTerminationGracePeriod",
        old_name: None,
        steps: &[
            step(21, Alpha, false, false),
            step(22, Beta, false, false),
            step(25, Beta, true, false),
            step(28, Ga, true, true),
        ],
        removed: Some(29),
        switch: Some(Sw::ProbeTerminationGracePeriod),
        off_built: true,
        controls: "behaviour `probeTerminationGracePeriod`; off, a probe's `terminationGracePeriodSeconds` is accepted and ignored (a note)",
        refs: "KEP 2238",
    },
    Gate {
        name: "SidecarContainers",
        old_name: None,
        steps: &[step(28, Alpha, false, false), step(29, Beta, true, false)],
        removed: None,
        switch: Some(Sw::SidecarsStopAfterMainContainers),
        off_built: true,
        controls: "native sidecars (an init container with `restartPolicy: Always`; off, an error) and behaviour `sidecarsStopAfterMainContainers` (v1.29's PR 120620)",
        refs: "KEP 753",
    },
];

/// A gate's stage on one release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OnRelease {
    /// The name the release knows it by.
    pub(crate) name: &'static str,
    pub(crate) stage: Stage,
    pub(crate) default: bool,
    pub(crate) locked: bool,
}

impl Gate {
    /// The gate on `profile`, `None` if that release does not have it (or the profile is
    /// not a release name).
    pub(crate) fn on(&self, profile: &str) -> Option<OnRelease> {
        let m = minor(profile)?;
        if self.removed.is_some_and(|r| m >= r) {
            return None;
        }
        let s = self.steps.iter().rev().find(|s| s.since <= m)?;
        let name = match self.old_name {
            Some((old, renamed)) if m < renamed => old,
            _ => self.name,
        };
        Some(OnRelease {
            name,
            stage: s.stage,
            default: s.default,
            locked: s.locked,
        })
    }

    /// Whether `profile`'s release comes after the gate was removed: the feature is then
    /// in for good (a gate is removed only after GA).
    pub(crate) fn removed_on(&self, profile: &str) -> bool {
        matches!((minor(profile), self.removed), (Some(m), Some(r)) if m >= r)
    }

    /// The gate's value on `profile` with the scenario's `overrides`: `Some(true)` after its
    /// removal, `None` before the release had it.
    pub(crate) fn state(&self, profile: &str, overrides: &BTreeMap<String, bool>) -> Option<bool> {
        if self.removed_on(profile) {
            return Some(true);
        }
        let r = self.on(profile)?;
        Some(overrides.get(r.name).copied().unwrap_or(r.default))
    }

    /// Every name the gate had, newest first.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        let mut v = vec![self.name];
        v.extend(self.old_name.map(|(o, _)| o));
        v
    }

    /// The switch's name, if the gate sets one.
    pub(crate) fn switch_name(&self) -> Option<&'static str> {
        by_name_of(self.switch?)
    }

    /// One line for tables: the stages by release (`alpha v1.28 (off), beta v1.29 (on)`).
    pub(crate) fn history(&self) -> String {
        let mut parts: Vec<String> = self
            .steps
            .iter()
            .map(|s| {
                format!(
                    "{} v1.{} ({}{})",
                    s.stage.as_str(),
                    s.since,
                    if s.default { "on" } else { "off" },
                    if s.locked { ", locked" } else { "" }
                )
            })
            .collect();
        if let Some(r) = self.removed {
            parts.push(format!("removed v1.{r}"));
        }
        parts.join(", ")
    }
}

/// The name of switch `sw`.
fn by_name_of(sw: Sw) -> Option<&'static str> {
    SWITCHES.iter().find(|s| s.sw == sw).map(|s| s.name)
}

/// The gate named `name` on any release (its name or its earlier name).
pub(crate) fn by_any_name(name: &str) -> Option<&'static Gate> {
    GATES
        .iter()
        .find(|g| g.name == name || g.old_name.is_some_and(|(o, _)| o == name))
}

/// The resolved gates of `profile` with the scenario's `overrides` (names as the release
/// knows them; validation has rejected any other): every gate the release has, by the
/// release's name.
pub(crate) fn resolved(
    profile: &str,
    overrides: &BTreeMap<String, bool>,
) -> BTreeMap<String, bool> {
    GATES
        .iter()
        .filter_map(|g| {
            let r = g.on(profile)?;
            let v = overrides.get(r.name).copied().unwrap_or(r.default);
            Some((r.name.to_owned(), v))
        })
        .collect()
}

/// The value of the gate named `name` (any of its names) on `profile` with `overrides`:
/// `false` before the release had it, `true` after it was removed.
pub(crate) fn value(profile: &str, overrides: &BTreeMap<String, bool>, name: &str) -> bool {
    by_any_name(name).is_some_and(|g| g.state(profile, overrides) == Some(true))
}

/// The switch values of one run: `profile`'s, then the switches of the gates set against
/// the release's default, then the explicit `behaviours`.
pub(crate) fn resolve(
    profile: &str,
    gates: &BTreeMap<String, bool>,
    behaviours: &BTreeMap<String, bool>,
) -> Behaviours {
    let mut b = Behaviours::resolve(profile, behaviours);
    for g in GATES {
        let (Some(r), Some(sw)) = (g.on(profile), g.switch) else {
            continue;
        };
        let explicit = by_name_of(sw).is_some_and(|n| behaviours.contains_key(n));
        match gates.get(r.name) {
            Some(&v) if v != r.default && !explicit => b.set(sw, v),
            _ => {}
        }
    }
    b
}

/// Why `sc` cannot run on `profile`: the first gate (by the scenario's own gate settings
/// moved to that release) that refuses one of the features it uses, or a gate setting the
/// release does not accept. `None` when it can run.
pub(crate) fn refusal(sc: &crate::scenario::Scenario, profile: &str) -> Option<String> {
    let gates = &sc.kubelet.feature_gates;
    for (name, &v) in gates {
        let Some(g) = by_any_name(name) else {
            return Some(format!("unknown feature gate {name}"));
        };
        match g.on(profile) {
            None => return Some(format!("{profile} has no feature gate {name}")),
            Some(r) if r.name != name.as_str() => {
                return Some(format!("{profile} calls feature gate {name} {}", r.name))
            }
            Some(r) if r.locked && v != r.default => {
                return Some(format!(
                    "feature gate {name} is locked to {} on {profile}",
                    r.default
                ))
            }
            Some(_) => {}
        }
    }
    let off = |n: &str| !value(profile, gates, n);
    let uses = uses(sc);
    for (feature, gate) in [
        (uses.sidecar, "SidecarContainers"),
        (uses.sleep, "PodLifecycleSleepAction"),
        (
            uses.priority_groups,
            "GracefulNodeShutdownBasedOnPodPriority",
        ),
        (uses.shutdown_grace, "GracefulNodeShutdown"),
    ] {
        if let (Some(what), true) = (feature, off(gate)) {
            return Some(format!(
                "{what} needs feature gate {gate}, off on {profile}"
            ));
        }
    }
    None
}

/// The gated features a scenario uses (each: what, for messages).
struct Uses {
    sidecar: Option<&'static str>,
    sleep: Option<&'static str>,
    priority_groups: Option<&'static str>,
    shutdown_grace: Option<&'static str>,
}

fn uses(sc: &crate::scenario::Scenario) -> Uses {
    use crate::model::HookHandler;
    let specs = sc.pods.iter().map(|p| &p.spec);
    let mut sidecar = None;
    let mut sleep = None;
    for s in specs {
        for c in s.init_containers.iter().chain(s.containers.iter()) {
            if c.is_sidecar() {
                sidecar = Some("a sidecar (init container with restartPolicy: Always)");
            }
            let is_sleep = |h: &Option<HookHandler>| matches!(h, Some(HookHandler::Sleep(_)));
            if is_sleep(&c.post_start.0) || is_sleep(&c.pre_stop.0) {
                sleep = Some("a `sleep` lifecycle hook");
            }
        }
    }
    let cfg = &sc.kubelet.config;
    Uses {
        sidecar,
        sleep,
        // An explicit `shutdownKillsByPriorityGroups: true` brings the groups in without
        // the gate (as validation allows).
        priority_groups: (!cfg.shutdown_grace_period_by_pod_priority.is_empty()
            && sc.kubelet.behaviours.get("shutdownKillsByPriorityGroups") != Some(&true))
        .then_some("shutdownGracePeriodByPodPriority"),
        shutdown_grace: (cfg.shutdown_grace_period > crate::sim::Dur::ZERO)
            .then_some("shutdownGracePeriod"),
    }
}

/// The gate table as Markdown (the README's, between `<!-- gates:begin -->` and
/// `<!-- gates:end -->`): per gate its value on every profile (`-`: the release has no such
/// gate; `locked`: GA, cannot be turned off), its stages and what it controls in podsim.
#[cfg(test)]
pub(crate) fn markdown() -> String {
    use super::release::RELEASES as PROFILES;
    let mut s = format!(
        "\n| gate | {} | stages | in podsim |\n|---|{}---|---|\n",
        PROFILES.join(" | "),
        "---|".repeat(PROFILES.len())
    );
    for g in GATES {
        let cells: Vec<String> = PROFILES
            .iter()
            .map(|p| match g.on(p) {
                None if g.removed_on(p) => "on (gate removed)".to_owned(),
                None => "-".to_owned(),
                Some(r) => {
                    let v = if r.default { "on" } else { "**off**" };
                    let renamed = if r.name == g.name {
                        String::new()
                    } else {
                        format!(" (as {})", r.name)
                    };
                    let locked = if r.locked { " (locked)" } else { "" };
                    format!("{v}{locked}{renamed}")
                }
            })
            .collect();
        s.push_str(&format!(
            "| `{}` | {} | {} | {} ({}) |\n",
            g.name,
            cells.join(" | "),
            g.history(),
            g.controls,
            g.refs
        ));
    }
    s.push('\n');
    s
}

/// `podsim bisect --list`'s gate part: every gate, its value on each profile, what it
/// controls.
pub(crate) fn list_table() -> String {
    use super::release::RELEASES as PROFILES;
    let mut s = format!("\n{:44} {}\n", "feature gate", PROFILES.join("  "));
    for g in GATES {
        let vals: Vec<String> = PROFILES
            .iter()
            .map(|p| {
                let v = match g.on(p) {
                    None if g.removed_on(p) => "on",
                    None => "-",
                    Some(r) if r.default => "on",
                    Some(_) => "off",
                };
                format!("{v:>width$}", width = p.len())
            })
            .collect();
        s.push_str(&format!(
            "{:44} {}\n  {}\n  {}; {}\n",
            g.name,
            vals.join("  "),
            g.controls,
            g.history(),
            g.refs
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubelet::profile::PROFILES;

    /// The gate table and the switch table cannot drift apart: on every profile, a gate
    /// that sets a switch defaults to the switch's value there (a gate a release does not
    /// have counts as off).
    #[test]
    fn gate_defaults_equal_their_switches_on_every_profile() {
        let mut checked = 0;
        for g in GATES {
            let Some(sw) = g.switch else { continue };
            let row = SWITCHES.iter().find(|s| s.sw == sw).expect("switch row");
            for p in PROFILES {
                let gate = g.state(p, &BTreeMap::new()) == Some(true);
                let switch = Behaviours::profile(p).on(sw);
                assert_eq!(
                    gate, switch,
                    "{p}: gate {} defaults to {gate}, switch {} is {switch}",
                    g.name, row.name
                );
                checked += 1;
            }
        }
        assert!(checked >= 4 * PROFILES.len(), "{checked}");
    }

    #[test]
    fn stages_follow_upstream() {
        let g = by_any_name("PodHasNetworkCondition").unwrap();
        assert_eq!(
            g.on("v1.27").map(|r| r.name),
            Some("PodHasNetworkCondition")
        );
        assert_eq!(
            g.on("v1.29").map(|r| (r.name, r.default)),
            Some((g.name, true))
        );
        assert_eq!(g.on("v1.23"), None);
        let p = by_any_name("ProbeTerminationGracePeriod").unwrap();
        assert_eq!(
            p.on("v1.22").map(|r| (r.stage, r.default)),
            Some((Beta, false))
        );
        assert_eq!(p.on("v1.25").map(|r| r.default), Some(true));
        assert_eq!(p.on("v1.29"), None);
        let d = by_any_name("PodDisruptionConditions").unwrap();
        assert!(d.on("current").is_some_and(|r| r.locked && r.default));
        assert!(d.on("v1.27").is_some_and(|r| !r.locked && r.default));
        for g in GATES {
            assert!(
                g.steps.windows(2).all(|w| w[0].since < w[1].since),
                "{}",
                g.name
            );
            assert!(g.switch.is_none() || g.switch_name().is_some());
        }
    }

    #[test]
    fn a_gate_set_against_its_default_sets_its_switch_and_behaviours_win() {
        let mut gates = BTreeMap::new();
        gates.insert("ProbeTerminationGracePeriod".to_owned(), true);
        let b = resolve("v1.22", &gates, &BTreeMap::new());
        assert!(b.on(Sw::ProbeTerminationGracePeriod));
        let mut beh = BTreeMap::new();
        beh.insert("probeTerminationGracePeriod".to_owned(), false);
        assert!(!resolve("v1.22", &gates, &beh).on(Sw::ProbeTerminationGracePeriod));
        // At its default a gate leaves the profile's switch as it is.
        let mut at_default = BTreeMap::new();
        at_default.insert("ProbeTerminationGracePeriod".to_owned(), false);
        assert_eq!(
            resolve("v1.22", &at_default, &BTreeMap::new()),
            Behaviours::profile("v1.22")
        );
        assert!(resolved("v1.22", &gates)["ProbeTerminationGracePeriod"]);
    }

    /// The README's gate table is [`markdown`]. To rewrite it after changing the table:
    /// `PODSIM_GATES_RECORD=1 cargo test --lib gates`.
    #[test]
    fn the_readme_lists_the_gate_table() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        let readme = std::fs::read_to_string(file).unwrap();
        let (begin, end) = ("<!-- gates:begin -->", "<!-- gates:end -->");
        let a = readme.find(begin).expect("the begin marker") + begin.len();
        let b = readme.find(end).expect("the end marker");
        let want = markdown();
        if std::env::var("PODSIM_GATES_RECORD").is_ok_and(|v| v == "1") {
            let text = format!("{}{want}{}", &readme[..a], &readme[b..]);
            std::fs::write(file, text).unwrap();
            return;
        }
        assert!(
            readme[a..b] == want,
            "README.md's feature gate table differs from src/kubelet/gates.rs; rewrite it with \
             PODSIM_GATES_RECORD=1 cargo test --lib gates"
        );
    }
}
