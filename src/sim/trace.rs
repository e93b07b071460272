//! The trace: every transition of a run, folded into a running hash and optionally kept
//! as compact human-readable records (for `--trace` JSON Lines and determinism diffs).
//! An [`Observer`] sees every record as it is emitted (the run's invariant oracle); it
//! never touches the hash, so a trace with or without one hashes the same.

use super::time::SimTime;
use std::fmt::Display;
use std::hash::{Hash, Hasher};

/// A stable, fast 64-bit hasher (word-at-a-time multiply-xorshift). Not `std`'s
/// `DefaultHasher`, whose output is allowed to change between Rust releases.
#[derive(Clone, Debug)]
pub struct StableHasher {
    h: u64,
}

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher {
            h: 0x243f_6a88_85a3_08d3,
        }
    }
}

impl StableHasher {
    #[inline]
    fn word(&mut self, w: u64) {
        self.h = (self.h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.h ^= self.h >> 29;
    }
}

impl StableHasher {
    /// Feed `ws` one word at a time: what [`Hasher::write`] of a text and the `0xff` that
    /// ends a `str`'s `Hash` feed, when `ws` is [`str_words`] of it.
    #[inline]
    pub fn write_words(&mut self, ws: &[u64]) {
        for &w in ws {
            self.word(w);
        }
    }
}

/// How many words [`StableHasher`] takes for a `str`'s `Hash`: one a full eight bytes, one
/// for the 1 to 7 bytes left (if any), and the `0xff` that ends every string.
pub const fn str_word_count(s: &str) -> usize {
    s.len().div_ceil(8) + 1
}

/// The words [`StableHasher`] takes for `s`'s `Hash` (`N` is [`str_word_count`] of it),
/// worked out at compile time: [`Hasher::write`] of its bytes (whole little-endian words,
/// then the tail zero-padded with its length in the top byte), then `write_u8(0xff)`.
pub const fn str_words<const N: usize>(s: &str) -> [u64; N] {
    let b = s.as_bytes();
    let mut out = [0u64; N];
    let mut k = 0;
    while k < b.len() / 8 {
        out[k] = le_word(b, 8 * k, 8);
        k += 1;
    }
    let rest = b.len() % 8;
    if rest != 0 {
        out[k] = le_word(b, 8 * k, rest) ^ ((rest as u64) << 56);
        k += 1;
    }
    out[k] = 0xff;
    assert!(k + 1 == N, "N is str_word_count(s)");
    out
}

/// The `n` bytes of `b` from `at`, little-endian, zero-padded to a word.
const fn le_word(b: &[u8], at: usize, n: usize) -> u64 {
    let mut w = 0u64;
    let mut j = 0;
    while j < n {
        w |= (b[at + j] as u64) << (8 * j);
        j += 1;
    }
    w
}

/// The one word [`StableHasher`]'s [`Hasher::write`] takes for a text of 1 to 7 bytes (its
/// bytes little-endian, zero-padded, with the length in the top byte), or 0 for any other
/// length (no such word is 0: its top byte holds a length from 1 to 7). A `str`'s `Hash`
/// is then this word and the `0xff` that ends it; a caller that hashes the same short text
/// again and again can keep the word instead of reading the text.
pub const fn short_str_word(s: &str) -> u64 {
    let b = s.as_bytes();
    if b.is_empty() || b.len() >= 8 {
        return 0;
    }
    le_word(b, 0, b.len()) ^ ((b.len() as u64) << 56)
}

/// [`str_words`] of a constant text, as a `&'static [u64]`.
#[macro_export]
macro_rules! str_words {
    ($s:expr) => {{
        const S: &str = $s;
        const N: usize = $crate::sim::trace::str_word_count(S);
        const W: [u64; N] = $crate::sim::trace::str_words::<N>(S);
        &W
    }};
}

/// What a trace record feeds [`StableHasher`]: its `Hash`, or (for [`crate::model::Transition`])
/// the same words given a faster way.
pub trait TraceHash {
    fn trace_hash(&self, h: &mut StableHasher);

    /// [`TraceHash::trace_hash`] given `hint`, a word the caller kept that the record's
    /// hash takes (what it means is the record type's to say; 0: none). The words fed must
    /// be the same as without it.
    #[inline]
    fn trace_hash_hinted(&self, h: &mut StableHasher, hint: u64) {
        let _ = hint;
        self.trace_hash(h);
    }

    /// [`TraceHash::trace_hash_hinted`] on a hasher taken and given back by value, when
    /// the record and `hint` allow it without reading anything but the record's own words
    /// and calling nothing (`None`: they do not; the caller hashes the usual way). The
    /// words fed must be the same. A caller that gets `Some` keeps the state in registers
    /// and needs no frame for it.
    #[inline]
    fn trace_hash_quick(&self, h: StableHasher, hint: u64) -> Option<StableHasher> {
        let _ = (h, hint);
        None
    }
}

impl TraceHash for u32 {
    #[inline]
    fn trace_hash(&self, h: &mut StableHasher) {
        self.hash(h);
    }
}

impl TraceHash for &str {
    #[inline]
    fn trace_hash(&self, h: &mut StableHasher) {
        self.hash(h);
    }
}

impl Hasher for StableHasher {
    fn finish(&self) -> u64 {
        super::rng::mix64(self.h)
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        // The 1 to 7 bytes left, little-endian and zero-padded, read without a copy: two
        // overlapping 4-byte loads, or for 1 to 3 bytes the first, middle and last byte.
        let rest = chunks.remainder();
        let n = rest.len();
        if n != 0 {
            let w = if n >= 4 {
                let lo = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
                let hi = u32::from_le_bytes(rest[n - 4..].try_into().expect("4 bytes"));
                u64::from(lo) | (u64::from(hi) << (8 * (n - 4)))
            } else {
                u64::from(rest[0])
                    | (u64::from(rest[n / 2]) << (8 * (n / 2)))
                    | (u64::from(rest[n - 1]) << (8 * (n - 1)))
            };
            self.word(w ^ ((n as u64) << 56));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }
    fn write_i64(&mut self, i: i64) {
        self.word(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }
    fn write_isize(&mut self, i: isize) {
        self.word(i as u64);
    }
}

/// One kept trace record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub index: u64,
    pub at: SimTime,
    pub text: String,
    /// Running hash after this record.
    pub hash: u64,
}

/// Something that watches the records of a trace as they are emitted, read-only.
pub trait Observer<T> {
    fn observe(&mut self, at: SimTime, rec: &T);
}

/// The observer that looks at nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl<T> Observer<T> for NoObserver {
    #[inline]
    fn observe(&mut self, _at: SimTime, _rec: &T) {}
}

/// The trace of one run, with its observer `O`.
#[derive(Clone, Debug, Default)]
pub struct Trace<O = NoObserver> {
    hasher: StableHasher,
    count: u64,
    keep: bool,
    records: Vec<Record>,
    observer: O,
    /// Coverage points reached (a bit each; not part of the hash): the rare states a run
    /// got into, see `crate::model::reach`.
    reached: u64,
}

impl<O: Default> Trace<O> {
    /// A trace that only hashes (`keep = false`) or also keeps readable records, with the
    /// default observer.
    pub fn new(keep: bool) -> Self {
        Self::with_observer(keep, O::default())
    }
}

impl<O> Trace<O> {
    /// A trace whose records `observer` sees.
    pub fn with_observer(keep: bool, observer: O) -> Self {
        Trace {
            hasher: StableHasher::default(),
            count: 0,
            keep,
            records: Vec::new(),
            observer,
            reached: 0,
        }
    }

    /// Record that coverage point `bit` (< 64) was reached.
    #[inline]
    pub fn reach(&mut self, bit: u32) {
        self.reached |= 1 << bit;
    }

    /// The coverage points reached, a bit each.
    pub fn reached(&self) -> u64 {
        self.reached
    }

    /// Append one transition (the observer sees it after it is hashed).
    #[inline]
    pub fn emit<T: TraceHash + Display>(&mut self, at: SimTime, rec: &T)
    where
        O: Observer<T>,
    {
        // Hashed in a local copy, written back once: the state stays in a register for the
        // record's words instead of a load and a store of `self.hasher` around each.
        let mut h = self.hasher.clone();
        h.write_u64(at.0);
        rec.trace_hash(&mut h);
        self.hasher = h;
        self.count += 1;
        if self.keep {
            self.keep_record(at, rec);
        }
        self.observer.observe(at, rec);
    }

    /// [`Trace::emit`] of a record hashed with a word the caller kept
    /// ([`TraceHash::trace_hash_hinted`]): the same hash, count, record and observer.
    /// Debug builds hash the record without the hint too and compare.
    ///
    /// When no record is kept and the record hashes by value
    /// ([`TraceHash::trace_hash_quick`], a probe with its name's word), the hash state
    /// stays in registers and nothing is called before the observer: that path needs no
    /// saved registers and no frame, and the observer's call is a tail call. Anything else
    /// takes [`Trace::emit_hinted_full`], out of line.
    #[inline]
    pub fn emit_hinted<T: TraceHash + Display>(&mut self, at: SimTime, rec: &T, hint: u64)
    where
        O: Observer<T>,
    {
        if !self.keep {
            let mut h = self.hasher.clone();
            h.write_u64(at.0);
            if let Some(h) = rec.trace_hash_quick(h, hint) {
                #[cfg(debug_assertions)]
                {
                    let mut full = self.hasher.clone();
                    full.write_u64(at.0);
                    rec.trace_hash(&mut full);
                    assert_eq!(
                        h.h, full.h,
                        "trace: a record hashed by value with hint {hint:#x} hashes \
                         differently the usual way: {rec}"
                    );
                }
                self.hasher = h;
                self.count += 1;
                self.observer.observe(at, rec);
                return;
            }
        }
        self.emit_hinted_full(at, rec, hint);
    }

    /// [`Trace::emit_hinted`] when records are kept or the record does not hash by value.
    #[inline(never)]
    fn emit_hinted_full<T: TraceHash + Display>(&mut self, at: SimTime, rec: &T, hint: u64)
    where
        O: Observer<T>,
    {
        let mut h = self.hasher.clone();
        #[cfg(debug_assertions)]
        let mut full = self.hasher.clone();
        h.write_u64(at.0);
        rec.trace_hash_hinted(&mut h, hint);
        #[cfg(debug_assertions)]
        {
            full.write_u64(at.0);
            rec.trace_hash(&mut full);
            assert_eq!(
                h.h, full.h,
                "trace: a record hashed with hint {hint:#x} hashes differently without it: {rec}"
            );
        }
        self.hasher = h;
        self.count += 1;
        if self.keep {
            self.keep_record(at, rec);
        }
        self.observer.observe(at, rec);
    }

    /// [`Trace::emit`]'s readable record, when records are kept: out of line, as most runs
    /// keep none (the hashing path then needs fewer registers saved).
    #[cold]
    #[inline(never)]
    fn keep_record<T: Display>(&mut self, at: SimTime, rec: &T) {
        self.records.push(Record {
            index: self.count - 1,
            at,
            text: rec.to_string(),
            hash: self.hasher.finish(),
        });
    }

    /// Show `rec` to the observer only: it is not hashed, counted or kept. For a
    /// ground-truth fact the observer needs but the trace has never recorded (recording it
    /// would change the hash of every run that has it): the observer learns it in the same
    /// way as everything else, the trace stays what it was.
    #[inline]
    pub fn show<T>(&mut self, at: SimTime, rec: &T)
    where
        O: Observer<T>,
    {
        self.observer.observe(at, rec);
    }

    pub fn observer(&self) -> &O {
        &self.observer
    }

    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.observer
    }

    pub fn hash(&self) -> u64 {
        self.hasher.finish()
    }

    /// Hex form of the hash used in output and replay comparisons.
    pub fn hash_hex(&self) -> String {
        format!("{:016x}", self.hash())
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The kept records so far, handed over (the trace keeps counting and hashing): a run
    /// that streams its records drains them in batches, so they never pile up.
    pub fn take_records(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.records)
    }

    pub fn keeps_records(&self) -> bool {
        self.keep
    }
}

/// A trace as something to append to, whatever its observer: a component holds
/// `&mut dyn Emit<T>` to emit records and mark reach points without naming the observer
/// type (see [`Trace::emit`] and [`Trace::reach`]).
pub trait Emit<T> {
    fn emit(&mut self, at: SimTime, rec: &T);
    /// [`Trace::emit_hinted`].
    fn emit_hinted(&mut self, at: SimTime, rec: &T, hint: u64);
    fn reach(&mut self, bit: u32);
}

impl<T: TraceHash + Display, O: Observer<T>> Emit<T> for Trace<O> {
    #[inline]
    fn emit(&mut self, at: SimTime, rec: &T) {
        Trace::emit(self, at, rec);
    }

    #[inline]
    fn emit_hinted(&mut self, at: SimTime, rec: &T, hint: u64) {
        Trace::emit_hinted(self, at, rec, hint);
    }

    #[inline]
    fn reach(&mut self, bit: u32) {
        Trace::reach(self, bit);
    }
}

/// The first record at which two kept traces differ (index into both), if any.
pub fn first_difference(a: &[Record], b: &[Record]) -> Option<usize> {
    let n = a.len().min(b.len());
    (0..n)
        .find(|&i| a[i].at != b[i].at || a[i].text != b[i].text)
        .or(if a.len() != b.len() { Some(n) } else { None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_tails_hash_as_zero_padded_words() {
        // The word-at-a-time reading of the last bytes equals copying them into a zeroed
        // 8-byte buffer, for every tail length.
        let bytes: Vec<u8> = (1..=23u8).map(|b| b.wrapping_mul(37)).collect();
        for len in 0..bytes.len() {
            let mut fast = StableHasher::default();
            fast.write(&bytes[..len]);
            let mut slow = StableHasher::default();
            let mut chunks = bytes[..len].chunks_exact(8);
            for c in &mut chunks {
                slow.word(u64::from_le_bytes(c.try_into().unwrap()));
            }
            let rest = chunks.remainder();
            if !rest.is_empty() {
                let mut buf = [0u8; 8];
                buf[..rest.len()].copy_from_slice(rest);
                slow.word(u64::from_le_bytes(buf) ^ ((rest.len() as u64) << 56));
            }
            assert_eq!(fast.finish(), slow.finish(), "length {len}");
        }
    }

    #[test]
    fn a_short_str_word_and_0xff_hash_as_the_str() {
        // Every length from 0 to 10 bytes: a word for 1 to 7 bytes (never 0), which with
        // the `0xff` gives the hasher the `str`'s own `Hash`; 0 for any other length.
        let text = "abcdefghij";
        for len in 0..=text.len() {
            let s = &text[..len];
            let w = short_str_word(s);
            assert_eq!(w != 0, (1..=7).contains(&len), "length {len}");
            if w != 0 {
                let mut by_word = StableHasher::default();
                by_word.write_u64(w);
                by_word.write_u8(0xff);
                let mut by_hash = StableHasher::default();
                s.hash(&mut by_hash);
                assert_eq!(by_word.finish(), by_hash.finish(), "length {len}");
            }
        }
    }

    #[test]
    fn str_words_are_the_words_a_str_hash_feeds() {
        // Every length from 0 to 23 bytes (none, part of, one and two whole words, and
        // tails of every length): the constant words give the hasher the same state as the
        // `str`'s own `Hash`.
        macro_rules! check {
            ($($s:literal),+) => {{
                let mut lens = Vec::new();
                $(
                    let mut plain = StableHasher::default();
                    $s.hash(&mut plain);
                    let mut words = StableHasher::default();
                    words.write_words(crate::str_words!($s));
                    assert_eq!(plain.h, words.h, "{:?}", $s);
                    assert_eq!(plain.finish(), words.finish(), "{:?}", $s);
                    lens.push($s.len());
                )+
                lens
            }};
        }
        let lens = check!(
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abcde",
            "abcdef",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefghij",
            "abcdefghijk",
            "abcdefghijkl",
            "abcdefghijklm",
            "abcdefghijklmn",
            "abcdefghijklmno",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "abcdefghijklmnopqr",
            "abcdefghijklmnopqrs",
            "abcdefghijklmnopqrst",
            "abcdefghijklmnopqrstu",
            "abcdefghijklmnopqrstuv",
            "abcdefghijklmnopqrstuvw"
        );
        assert_eq!(lens, (0..=23).collect::<Vec<_>>());
    }

    #[test]
    fn hash_depends_on_content_order_and_time() {
        let mut a: Trace = Trace::new(false);
        a.emit(SimTime(1), &"x");
        a.emit(SimTime(2), &"y");
        let mut b: Trace = Trace::new(false);
        b.emit(SimTime(1), &"y");
        b.emit(SimTime(2), &"x");
        let mut c: Trace = Trace::new(true);
        c.emit(SimTime(1), &"x");
        c.emit(SimTime(3), &"y");
        assert_ne!(a.hash(), b.hash());
        assert_ne!(a.hash(), c.hash());
        assert_eq!(c.records().len(), 2);
        assert_eq!(c.records()[1].hash, c.hash());
    }

    /// Records the observer saw.
    #[derive(Default)]
    struct Seen(Vec<String>);

    impl Observer<&str> for Seen {
        fn observe(&mut self, _at: SimTime, rec: &&str) {
            self.0.push(rec.to_string());
        }
    }

    #[test]
    fn shown_records_reach_the_observer_but_not_the_hash() {
        let mut a: Trace<Seen> = Trace::new(true);
        a.emit(SimTime(1), &"x");
        let mut b: Trace<Seen> = Trace::new(true);
        b.emit(SimTime(1), &"x");
        b.show(SimTime(2), &"fact");
        assert_eq!(a.hash(), b.hash());
        assert_eq!(b.len(), 1);
        assert_eq!(b.records(), a.records());
        assert_eq!(b.observer().0, ["x", "fact"]);
    }

    #[test]
    fn first_difference_finds_divergence() {
        let mut a: Trace = Trace::new(true);
        let mut b: Trace = Trace::new(true);
        for (t, s) in [(1, "a"), (2, "b"), (3, "c")] {
            a.emit(SimTime(t), &s);
        }
        for (t, s) in [(1, "a"), (2, "B"), (3, "c")] {
            b.emit(SimTime(t), &s);
        }
        assert_eq!(first_difference(a.records(), b.records()), Some(1));
        assert_eq!(first_difference(a.records(), a.records()), None);
    }
}
