//! `flowcontrol.Backoff` as the kubelet uses it for crash loops and image pulls
//! (client-go `util/flowcontrol/backoff.go`, v1.31; no jitter, entries expire after
//! twice the maximum).

use crate::model::PodUid;
use crate::sim::{Dur, SimTime};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub(crate) struct Backoff {
    initial: Dur,
    max: Dur,
    entries: BTreeMap<String, (Dur, SimTime)>,
    /// No entry's last update is older than this (lowered by [`Backoff::next`], set by a
    /// walk of [`Backoff::gc`]; `None` while no entry was made since that walk found none):
    /// while it lies within twice the maximum of now, `gc` has nothing to drop.
    oldest: Option<SimTime>,
}

impl Backoff {
    pub(crate) fn new(initial: Dur, max: Dur) -> Self {
        Backoff {
            initial,
            max,
            entries: BTreeMap::new(),
            oldest: None,
        }
    }

    fn has_expired(&self, event_time: SimTime, last_update: SimTime) -> bool {
        event_time.since(last_update) > self.max.times(2)
    }

    /// `Next(id, eventTime)`.
    pub(crate) fn next(&mut self, id: &str, event_time: SimTime, now: SimTime) {
        let fresh = match self.entries.get(id) {
            None => true,
            Some((_, last)) => self.has_expired(event_time, *last),
        };
        let backoff = if fresh {
            self.initial
        } else {
            let b = self.entries[id].0;
            Dur(b.0.saturating_mul(2).min(self.max.0))
        };
        self.entries.insert(id.to_string(), (backoff, now));
        self.oldest = Some(self.oldest.map_or(now, |t| t.min(now)));
    }

    /// `IsInBackOffSince(id, eventTime)`: `now - eventTime < backoff`.
    #[cfg(test)]
    pub(crate) fn is_in_back_off_since(&self, id: &str, event_time: SimTime, now: SimTime) -> bool {
        match self.entries.get(id) {
            None => false,
            Some((b, last)) => !self.has_expired(event_time, *last) && now.since(event_time) < *b,
        }
    }

    /// [`Backoff::is_in_back_off_since`] with the back-off it found (`Get(id)`), on one
    /// lookup: `Some(backoff)` while in back-off. (The crash loop's [`ContainerBackoff`]
    /// checks its answers against it in debug builds.)
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub(crate) fn back_off_since(
        &self,
        id: &str,
        event_time: SimTime,
        now: SimTime,
    ) -> Option<Dur> {
        let (b, last) = self.entries.get(id)?;
        (!self.has_expired(event_time, *last) && now.since(event_time) < *b).then_some(*b)
    }

    /// `IsInBackOffSinceUpdate(id, eventTime)`: `eventTime - lastUpdate < backoff`.
    pub(crate) fn is_in_back_off_since_update(&self, id: &str, event_time: SimTime) -> bool {
        match self.entries.get(id) {
            None => false,
            Some((b, last)) => !self.has_expired(event_time, *last) && event_time.since(*last) < *b,
        }
    }

    /// Whether no entry is held (then nothing is in back-off).
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `Get(id)` (the sync path reads it through [`Backoff::back_off_since`]).
    #[cfg(test)]
    pub(crate) fn get(&self, id: &str) -> Dur {
        self.entries.get(id).map_or(Dur::ZERO, |e| e.0)
    }

    /// `GC()`: drop entries idle for more than twice the maximum. Housekeeping asks every
    /// 2 s; the walk runs only once the kept bound on the oldest update says an entry may
    /// have expired (debug builds check a skipped walk would drop nothing).
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    pub(crate) fn gc(&mut self, now: SimTime) {
        let max2 = self.max.times(2);
        if self.oldest.is_none_or(|t| now.since(t) <= max2) {
            debug_assert!(
                (self.entries.values()).all(|(_, last)| now.since(*last) <= max2),
                "back-off's bound on its oldest entry hides an expired one"
            );
            return;
        }
        self.entries.retain(|_, (_, last)| now.since(*last) <= max2);
        self.oldest = self.entries.values().map(|(_, last)| *last).min();
    }
}

/// The crash-loop back-off: [`Backoff`] for containers. Upstream keys it by the string
/// `name_namespace_uid_container` (`kuberuntime_manager.go` `doBackOff`, v1.31); a pod's
/// UID fixes its name and namespace, so (UID, container name) is the same key. Entries are
/// kept per pod, as the reason cache keeps them (a tree keyed by UID, each pod's entries a
/// short list sorted by container name): a crash-looping container's check builds no key
/// and compares integers down the tree, then a name or two. Debug builds keep the same
/// entries in a [`Backoff`] keyed by a string of both and check every answer against it.
#[derive(Clone, Debug)]
pub(crate) struct ContainerBackoff {
    initial: Dur,
    max: Dur,
    /// Per pod with at least one entry: (container name, back-off, last update), sorted
    /// by name.
    pods: BTreeMap<PodUid, Vec<(String, Dur, SimTime)>>,
    /// As [`Backoff`]'s: no entry's last update is older than this.
    oldest: Option<SimTime>,
    /// The same entries keyed by `uid_container` (a check only).
    #[cfg(debug_assertions)]
    shadow: Backoff,
}

impl ContainerBackoff {
    pub(crate) fn new(initial: Dur, max: Dur) -> Self {
        ContainerBackoff {
            initial,
            max,
            pods: BTreeMap::new(),
            oldest: None,
            #[cfg(debug_assertions)]
            shadow: Backoff::new(initial, max),
        }
    }

    #[cfg(debug_assertions)]
    fn shadow_key(uid: PodUid, container: &str) -> String {
        format!("{uid}_{container}")
    }

    /// The entry of (`uid`, `container`): (back-off, last update).
    fn get(&self, uid: PodUid, container: &str) -> Option<(Dur, SimTime)> {
        let list = self.pods.get(&uid)?;
        let i = list
            .binary_search_by(|(n, ..)| n.as_str().cmp(container))
            .ok()?;
        Some((list[i].1, list[i].2))
    }

    /// [`Backoff::back_off_since`] for the container `container` of pod `uid`.
    pub(crate) fn back_off_since(
        &self,
        uid: PodUid,
        container: &str,
        event_time: SimTime,
        now: SimTime,
    ) -> Option<Dur> {
        let found = self.get(uid, container).and_then(|(b, last)| {
            let expired = event_time.since(last) > self.max.times(2);
            (!expired && now.since(event_time) < b).then_some(b)
        });
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            found,
            (self.shadow).back_off_since(&Self::shadow_key(uid, container), event_time, now),
            "crash back-off of pod {uid} container {container}: per-pod entry out of step"
        );
        found
    }

    /// [`Backoff::next`] for the container `container` of pod `uid` (the name is copied
    /// only when the container gets its first entry).
    pub(crate) fn next(&mut self, uid: PodUid, container: &str, event_time: SimTime, now: SimTime) {
        let (initial, max) = (self.initial, self.max);
        let list = self.pods.entry(uid).or_default();
        match list.binary_search_by(|(n, ..)| n.as_str().cmp(container)) {
            Ok(i) => {
                let (_, b, last) = &mut list[i];
                *b = if event_time.since(*last) > max.times(2) {
                    initial
                } else {
                    Dur(b.0.saturating_mul(2).min(max.0))
                };
                *last = now;
            }
            Err(i) => list.insert(i, (container.to_owned(), initial, now)),
        }
        self.oldest = Some(self.oldest.map_or(now, |t| t.min(now)));
        #[cfg(debug_assertions)]
        {
            let key = Self::shadow_key(uid, container);
            self.shadow.next(&key, event_time, now);
            debug_assert_eq!(
                self.get(uid, container),
                self.shadow.entries.get(&key).copied(),
                "crash back-off of pod {uid} container {container}: next out of step"
            );
        }
    }

    /// [`Backoff::gc`]: drop entries idle for more than twice the maximum (a pod left
    /// without entries leaves the tree); the walk runs only once the bound on the oldest
    /// update says an entry may have expired.
    pub(crate) fn gc(&mut self, now: SimTime) {
        let max2 = self.max.times(2);
        #[cfg(debug_assertions)]
        self.shadow.gc(now);
        if self.oldest.is_some_and(|t| now.since(t) > max2) {
            self.pods.retain(|_, list| {
                list.retain(|(_, _, last)| now.since(*last) <= max2);
                !list.is_empty()
            });
            self.oldest = self.pods.values().flatten().map(|(_, _, last)| *last).min();
        }
        #[cfg(debug_assertions)]
        {
            let kept: usize = self.pods.values().map(Vec::len).sum();
            debug_assert_eq!(
                kept,
                self.shadow.entries.len(),
                "crash back-off: per-pod entries out of step after GC"
            );
            debug_assert!(
                (self.pods.values().flatten()).all(|(_, _, last)| now.since(*last) <= max2),
                "crash back-off's bound on its oldest entry hides an expired one"
            );
        }
    }
}

/// The error `SyncPod` returns for a container in crash-loop back-off (the text of
/// `fmt.Errorf("back-off %s restarting failed container=%s ...")` as the model words it),
/// built in one buffer of the right size: whole seconds, the usual case, as an integer, any
/// other delay through its `Display`.
#[cfg(test)]
pub(crate) fn crash_loop_message(backoff: Dur, container: &str) -> String {
    let mut msg = String::new();
    crash_loop_message_into(&mut msg, backoff, container);
    msg
}

/// [`crash_loop_message`] written into `msg` (emptied first), on its buffer.
pub(crate) fn crash_loop_message_into(msg: &mut String, backoff: Dur, container: &str) {
    use std::fmt::Write;
    const HEAD: &str = "CrashLoopBackOff: back-off ";
    const MID: &str = " restarting failed container=";
    msg.clear();
    msg.reserve(HEAD.len() + 24 + MID.len() + container.len());
    msg.push_str(HEAD);
    // Whole seconds (every back-off step) print as `Ns`, written digit by digit; the
    // general `Display` otherwise.
    if backoff.0 % 1_000_000_000 == 0 {
        push_decimal(msg, backoff.0 / 1_000_000_000);
        msg.push('s');
    } else {
        let _ = write!(msg, "{backoff}");
    }
    msg.push_str(MID);
    msg.push_str(container);
    debug_assert_eq!(
        *msg,
        format!("CrashLoopBackOff: back-off {backoff} restarting failed container={container}")
    );
}

/// Append `n` in decimal, as `Display` writes it, without the formatting machinery.
fn push_decimal(buf: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        buf.push(char::from(d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gc_skipping_on_its_bound_keeps_what_a_walk_keeps() {
        let (initial, max) = (Dur(10), Dur(300));
        let mut kept = Backoff::new(initial, max);
        let mut reference: BTreeMap<String, (Dur, SimTime)> = BTreeMap::new();
        let mut x = 12345u64;
        for step in 0..5_000u64 {
            let now = SimTime(step * 7);
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x >> 62 == 0 {
                let id = format!("k{}", (x >> 40) % 13);
                kept.next(&id, now, now);
                let fresh = reference
                    .get(&id)
                    .is_none_or(|e| now.since(e.1) > max.times(2));
                let b = if fresh {
                    initial
                } else {
                    Dur(reference[&id].0 .0.saturating_mul(2).min(max.0))
                };
                reference.insert(id, (b, now));
            } else if (x >> 50) % 3 == 0 {
                kept.gc(now);
                reference.retain(|_, e| now.since(e.1) <= max.times(2));
                assert_eq!(kept.entries, reference, "step {step}");
            }
        }
    }

    #[test]
    fn push_decimal_is_display() {
        for n in [0, 1, 9, 10, 99, 100, 300, 1_000_000_007, u64::MAX] {
            let mut s = String::from("x");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("x{n}"));
        }
    }

    #[test]
    fn crash_loop_message_is_the_formatted_text() {
        for n in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            1_500_000_000,
            10_000_000_000,
            20_000_000_000,
            300_000_000_000,
            1_000_000_001,
            u64::MAX / 1_000_000_000 * 1_000_000_000,
            u64::MAX,
        ] {
            let d = Dur(n);
            assert_eq!(
                crash_loop_message(d, "app"),
                format!("CrashLoopBackOff: back-off {d} restarting failed container=app")
            );
        }
    }

    #[test]
    fn back_off_since_is_is_in_back_off_since_with_get() {
        let mut b = Backoff::new(Dur::secs(10), Dur::secs(300));
        let t = |s: u64| SimTime(s * 1_000_000_000);
        for (ev, now) in [(5, 5), (10, 19), (10, 20), (10, 2000), (30, 30)] {
            let found = b.back_off_since("k", t(ev), t(now));
            let expected = b
                .is_in_back_off_since("k", t(ev), t(now))
                .then(|| b.get("k"));
            assert_eq!(found, expected, "event {ev} now {now}");
            b.next("k", t(ev), t(now));
        }
    }

    #[test]
    fn crash_loop_delays_are_0_10_20_40_capped_at_300() {
        let mut b = Backoff::new(Dur::secs(10), Dur::secs(300));
        let t = |s: u64| SimTime(s * 1_000_000_000);
        // First crash: no entry, start at once.
        assert!(!b.is_in_back_off_since("k", t(5), t(5)));
        b.next("k", t(5), t(5));
        // Second crash at 10 s: in back-off for 10 s.
        assert!(b.is_in_back_off_since("k", t(10), t(19)));
        assert!(!b.is_in_back_off_since("k", t(10), t(20)));
        b.next("k", t(10), t(20));
        assert_eq!(b.get("k"), Dur::secs(20));
        for _ in 0..10 {
            b.next("k", t(21), t(21));
        }
        assert_eq!(b.get("k"), Dur::secs(300));
        // An exit long after the last restart resets the back-off.
        b.next("k", t(21 + 601), t(21 + 601));
        assert_eq!(b.get("k"), Dur::secs(10));
    }
}
