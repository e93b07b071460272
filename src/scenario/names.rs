//! The names a scenario may use that other parts of podsim define: the kubelet profiles, the
//! behaviour switches and the finding (invariant) names. Validation receives them as plain
//! data, built once at the top of the crate (`podsim::load` and friends), so this module
//! depends on neither the kubelet port nor the oracle.

/// One behaviour switch, as validation sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchName {
    /// The camelCase name used under `spec.kubelet.behaviours`.
    pub name: &'static str,
    /// Whether `false` (the old behaviour) is modelled.
    pub built: bool,
    /// Upstream issue(s) and PR(s), quoted when `false` is not built yet.
    pub refs: &'static str,
}

/// Everything validation checks names against.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// Every profile name, oldest first (`spec.kubelet.profile`, sweep `spec.profiles`).
    pub profiles: Vec<&'static str>,
    /// Every behaviour switch, in table order.
    pub switches: Vec<SwitchName>,
    /// The oracle's invariant names (`expect.findings`), offered in "did you mean" hints.
    pub invariants: Vec<&'static str>,
    /// Further finding names `expect.findings` accepts: those the run itself reports. They
    /// are not offered in hints.
    pub run_findings: Vec<&'static str>,
}

impl Names {
    /// The switch named `name`.
    pub fn switch(&self, name: &str) -> Option<&SwitchName> {
        self.switches.iter().find(|s| s.name == name)
    }

    /// Whether `name` is a finding a run can report.
    pub fn is_finding(&self, name: &str) -> bool {
        self.invariants.contains(&name) || self.run_findings.contains(&name)
    }
}
