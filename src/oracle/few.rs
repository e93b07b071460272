//! [`Few`]: a list of a pod's facts that holds its first element in place and goes to the
//! heap only from its second on.
//!
//! Most pods have one ready sandbox, one running container and one container instance in
//! their whole life. With a `Vec` each of those lists was one small allocation per pod,
//! and freeing them all together at the end of a run left hundreds of small blocks for
//! the allocator to sort back when the next large block was freed. Held in place, a
//! pod's single element costs no allocation at all.

use std::ops::{Deref, DerefMut};

/// A list read as a slice: its first element in place, a `Vec` once it has had two.
#[derive(Clone, Debug)]
pub(crate) enum Few<T> {
    /// No element, or one, held in place.
    Inline(Option<T>),
    /// Once a second element came: all of them, on the heap (it stays there).
    Heap(Vec<T>),
}

impl<T> Default for Few<T> {
    fn default() -> Self {
        Few::Inline(None)
    }
}

impl<T> Few<T> {
    /// Append `x`.
    pub(crate) fn push(&mut self, x: T) {
        match self {
            Few::Inline(slot @ None) => *slot = Some(x),
            Few::Inline(slot) => {
                let first = slot.take();
                *self = Few::Heap(first.into_iter().chain([x]).collect());
            }
            Few::Heap(v) => v.push(x),
        }
    }

    /// Keep only the elements for which `keep` holds, in their order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        match self {
            Few::Inline(slot) => {
                if slot.as_ref().is_some_and(|x| !keep(x)) {
                    *slot = None;
                }
            }
            Few::Heap(v) => v.retain(keep),
        }
    }
}

impl<T> Deref for Few<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Few::Inline(slot) => slot.as_slice(),
            Few::Heap(v) => v,
        }
    }
}

impl<T> DerefMut for Few<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Few::Inline(slot) => slot.as_mut_slice(),
            Few::Heap(v) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Few;

    #[test]
    fn few_reads_like_the_vec_it_replaces() {
        let mut f: Few<u32> = Few::default();
        let mut v: Vec<u32> = Vec::new();
        assert!(f.is_empty());
        // Pushes and removals in a fixed pattern: both lists must read the same throughout.
        for step in 0..40u32 {
            if step % 3 == 2 {
                let gone = step / 2;
                f.retain(|x| *x != gone);
                v.retain(|x| *x != gone);
            } else {
                f.push(step);
                v.push(step);
            }
            assert_eq!(&f[..], &v[..]);
        }
        let mut one: Few<u32> = Few::default();
        one.push(7);
        assert!(matches!(one, Few::Inline(Some(7))));
        one.retain(|x| *x != 7);
        assert!(one.is_empty());
        one.push(8);
        one.push(9);
        assert_eq!(&one[..], &[8, 9]);
        one.iter_mut().for_each(|x| *x += 1);
        assert_eq!(&one[..], &[9, 10]);
    }
}
