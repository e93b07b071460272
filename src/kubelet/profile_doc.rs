//! The switch table as text: `podsim bisect --list` and the README's switch table (kept
//! equal to [`switches_markdown`] by a test), one column per release and a `since` column.

use super::profile::{Switch, EARLIER, NONE, SWITCHES};
use super::release::RELEASES;

/// `since` as a reader sees it: the release, "before v1.21" or "none".
fn since_text(s: &Switch) -> String {
    let mut t = match s.since {
        EARLIER => "before v1.21".to_owned(),
        NONE => "none".to_owned(),
        r => r.to_owned(),
    };
    for (from, to) in s.absent {
        if *to == NONE {
            t.push_str(&format!(", gone since {from}"));
        } else {
            t.push_str(&format!(", absent {from} to before {to}"));
        }
    }
    t
}

/// `podsim bisect --list`: every switch, its value on each release (`current` is the
/// newest), the first release with its change, and its references.
pub(crate) fn switches_table() -> String {
    let mut s = format!("{:44} {}  since\n", "switch", RELEASES.join("  "));
    for sw in SWITCHES {
        let vals: Vec<String> = RELEASES
            .iter()
            .map(|r| {
                let v = if sw.on_in(r) { "on" } else { "off" };
                format!("{v:>width$}", width = r.len())
            })
            .collect();
        s.push_str(&format!(
            "{:44} {}  {}{}\n  {}\n  catalog entries {:?}; {}\n",
            sw.name,
            vals.join("  "),
            since_text(sw),
            if sw.built {
                ""
            } else {
                "  (old behaviour not built: on everywhere)"
            },
            sw.meaning,
            sw.entries,
            sw.refs
        ));
    }
    s
}

/// The README's switch table (between `<!-- switch begin -->` and `<!-- switch end -->`).
pub fn switches_markdown() -> String {
    let mut s = format!(
        "| switch | catalog | since | upstream | {} | `true` / `false` |\n|---|---|---|---|{}---|\n",
        RELEASES.join(" | "),
        "---|".repeat(RELEASES.len())
    );
    for sw in SWITCHES {
        let entries: Vec<String> = sw.entries.iter().map(|e| e.to_string()).collect();
        let vals: Vec<&str> = RELEASES
            .iter()
            .map(|r| if sw.on_in(r) { "on" } else { "**off**" })
            .collect();
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {}{} |\n",
            sw.name,
            if entries.is_empty() {
                "-".to_owned()
            } else {
                entries.join(", ")
            },
            since_text(sw),
            sw.refs,
            vals.join(" | "),
            sw.meaning,
            if sw.built {
                ""
            } else {
                " *(old behaviour not built: on everywhere)*"
            },
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn since_reads_as_a_release_or_a_marker() {
        let t = super::switches_table();
        assert!(t.contains("graceOverrideZeroHonoured"));
        let md = super::switches_markdown();
        assert!(md.contains("before v1.21, gone since v1.22"), "{md}");
        assert!(md.contains("| v1.28 |"), "{md}");
    }
}
