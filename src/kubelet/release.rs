//! Release names and their order.
//!
//! Each behaviour profile is a kubelet release (`v1.21` ... `v1.31`); `current` names the
//! newest. Releases compare by their minor version, so a table can say "on since v1.25"
//! and every profile at or after it has the change.

/// Every release podsim models, oldest first.
pub(crate) const RELEASES: [&str; 7] = [
    "v1.21", "v1.22", "v1.23", "v1.25", "v1.27", "v1.29", "v1.31",
];

/// The newest release: the one `current` stands for.
pub(crate) const NEWEST: &str = "v1.31";

/// The minor version of a release name `v1.NN` (`current` is the newest), or `None` for a
/// name that is not a release.
pub(crate) fn minor(name: &str) -> Option<u32> {
    let name = if name == "current" { NEWEST } else { name };
    name.strip_prefix("v1.")?.parse().ok()
}

/// Whether `release` is `since` or later. Panics on a name that is not a release: callers
/// pass validated profile names and table constants.
pub(crate) fn at_least(release: &str, since: &str) -> bool {
    let (r, s) = (minor(release), minor(since));
    assert!(
        r.is_some() && s.is_some(),
        "not a release: {release} / {since}"
    );
    r >= s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_are_in_order_and_current_is_the_newest() {
        let m: Vec<u32> = RELEASES.iter().map(|r| minor(r).unwrap()).collect();
        assert!(m.windows(2).all(|w| w[0] < w[1]), "{m:?}");
        assert_eq!(minor("current"), minor(NEWEST));
        assert_eq!(RELEASES.last(), Some(&NEWEST));
        assert!(at_least("v1.25", "v1.25") && at_least("current", "v1.29"));
        assert!(!at_least("v1.23", "v1.25"));
        assert_eq!(minor("v2.0"), None);
        assert_eq!(minor("v1.x"), None);
    }
}
