//! The names a scenario may use that other parts of podsim define: the kubelet profiles, the
//! behaviour switches and the finding (invariant) names. Validation receives them as plain
//! data, built once at the top of the crate (`podsim::load` and friends), so this module
//! depends on neither the kubelet port nor the oracle.

/// One behaviour switch, as validation sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchName {
    /// The camelCase name used under `spec.kubelet.behaviours`.
    pub name: &'static str,
    /// Whether `false` (the old behaviour) is modelled.
    pub built: bool,
    /// Upstream issue(s) and PR(s), quoted when `false` is not built yet.
    pub refs: &'static str,
    /// The releases in which the switch is on (`current` stands for the newest).
    pub on: Vec<&'static str>,
}

/// One feature gate on one profile, as validation sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateOnProfile {
    pub profile: &'static str,
    /// The name that profile's release knows the gate by.
    pub name: &'static str,
    pub default: bool,
    /// GA and locked to its default: setting it otherwise keeps the kubelet from starting.
    pub locked: bool,
    /// `alpha`, `beta` or `GA`.
    pub stage: &'static str,
}

/// One feature gate, as validation sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateName {
    /// Its newest name.
    pub name: &'static str,
    /// Every name it had.
    pub names: Vec<&'static str>,
    /// The profiles that have it.
    pub on: Vec<GateOnProfile>,
    /// The profiles whose release comes after its removal (the feature is in for good).
    pub removed_on: Vec<&'static str>,
    /// The behaviour switch it sets.
    pub switch: Option<&'static str>,
    /// Whether `false` is modelled.
    pub off_built: bool,
    /// Its stages by release, one line.
    pub history: String,
}

/// Everything validation checks names against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// Every profile name, oldest first (`spec.kubelet.profile`, sweep `spec.profiles`):
    /// the releases, then the aliases.
    pub profiles: Vec<&'static str>,
    /// Other names of releases: (alias, release), e.g. `current` for the newest.
    pub profile_aliases: Vec<(&'static str, &'static str)>,
    /// Every behaviour switch, in table order.
    pub switches: Vec<SwitchName>,
    /// Every feature gate podsim models.
    pub gates: Vec<GateName>,
    /// The oracle's invariant names (`expect.findings`), offered in "did you mean" hints.
    pub invariants: Vec<&'static str>,
    /// Further finding names `expect.findings` accepts: those the run itself reports. They
    /// are not offered in hints.
    pub run_findings: Vec<&'static str>,
}

impl Names {
    /// The profile `name` (kept as given: `current` stays `current`), if it is one.
    pub fn profile(&self, name: &str) -> Option<&'static str> {
        self.profiles.iter().find(|p| **p == name).copied()
    }

    /// The release a profile name stands for (an alias gives its release; a name that is
    /// not a profile gives itself).
    pub fn release<'a>(&self, name: &'a str) -> &'a str {
        self.profile_aliases
            .iter()
            .find(|(a, _)| *a == name)
            .map_or(name, |(_, r)| r)
    }

    /// Why `name` is not a profile: a did-you-mean hint when one is close, and the valid
    /// values (`unknown profile `v1.3` (did you mean `v1.31`?); valid values: ...`).
    pub fn profile_problem(&self, name: &str) -> String {
        let all: Vec<&str> = self.profiles.clone();
        let hint = crate::scenario::closest(name, &all)
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        let aliases: Vec<String> = self
            .profile_aliases
            .iter()
            .map(|(a, p)| format!("{a} (another name for {p})"))
            .collect();
        let releases: Vec<&str> = self
            .profiles
            .iter()
            .copied()
            .filter(|p| !self.profile_aliases.iter().any(|(a, _)| a == p))
            .collect();
        let mut valid = releases.join(", ");
        if !aliases.is_empty() {
            valid.push_str(", ");
            valid.push_str(&aliases.join(", "));
        }
        format!("unknown profile `{name}`{hint}; valid values: {valid}")
    }

    /// The switch named `name`.
    pub fn switch(&self, name: &str) -> Option<&SwitchName> {
        self.switches.iter().find(|s| s.name == name)
    }

    /// The value of switch `name` on `profile` with the scenario's `overrides` (a switch
    /// whose `false` is not built, or an unknown name, is on).
    pub fn switch_value(
        &self,
        name: &str,
        profile: &str,
        overrides: &std::collections::BTreeMap<String, bool>,
    ) -> bool {
        let Some(s) = self.switch(name) else {
            return true;
        };
        let base = !s.built || s.on.contains(&self.release(profile));
        overrides.get(name).copied().unwrap_or(base)
    }

    /// The gate called `name` on some release.
    pub fn gate(&self, name: &str) -> Option<&GateName> {
        self.gates.iter().find(|g| g.names.contains(&name))
    }

    /// The switch overrides a scenario's gates and behaviours make together: the switch
    /// of every gate set against its release's default, then the explicit `behaviours`.
    pub fn effective_switches(
        &self,
        profile: &str,
        gates: &std::collections::BTreeMap<String, bool>,
        behaviours: &std::collections::BTreeMap<String, bool>,
    ) -> std::collections::BTreeMap<String, bool> {
        let mut out = std::collections::BTreeMap::new();
        for g in &self.gates {
            let (Some(on), Some(sw)) = (g.on.iter().find(|o| o.profile == profile), g.switch)
            else {
                continue;
            };
            match gates.get(on.name) {
                Some(&v) if v != on.default => {
                    out.insert(sw.to_owned(), v);
                }
                _ => {}
            }
        }
        out.extend(behaviours.iter().map(|(k, v)| (k.clone(), *v)));
        out
    }

    /// Whether `name` is a finding a run can report.
    pub fn is_finding(&self, name: &str) -> bool {
        self.invariants.contains(&name) || self.run_findings.contains(&name)
    }
}
