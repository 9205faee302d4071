//! The clock's priority queue of pending keys, smallest first.
//!
//! A run usually has a handful of things pending at once — a few heartbeats, the messages on
//! the wire, a timeout or two — and the queue is on the path of every event. While it is
//! small it is a vector sorted largest first, so the next key is the last element: peek and
//! pop touch one end, a push moves the few keys later than the new one, and a key can be
//! removed outright (a cancelled timeout leaves nothing behind). Past [`SORTED_MAX`] keys it
//! becomes a binary heap (O(log n) push and pop, removal left to the caller's lazy
//! deletion), and back to a sorted vector once it has shrunk to [`SORTED_MIN`].
//!
//! Keys are unique (they embed a sequence number), so the order of pops never depends on the
//! representation: both give the keys in ascending order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The most keys kept sorted; one more makes a heap.
const SORTED_MAX: usize = 48;
/// A heap that shrinks to this many keys is sorted again (well below [`SORTED_MAX`], so a
/// queue hovering near the limit does not convert back and forth).
const SORTED_MIN: usize = 16;

pub(crate) struct Queue {
    /// Descending while `heap` is empty and unused; the earliest key is last.
    sorted: Vec<u128>,
    heap: BinaryHeap<Reverse<u128>>,
    large: bool,
}

impl Queue {
    pub fn with_capacity(capacity: usize) -> Self {
        Queue {
            sorted: Vec::with_capacity(capacity),
            heap: BinaryHeap::new(),
            large: false,
        }
    }

    pub fn len(&self) -> usize {
        if self.large {
            self.heap.len()
        } else {
            self.sorted.len()
        }
    }

    // Always: as a plain hint it was inlined into `Sleep::poll` or not depending on unrelated
    // code elsewhere in the crate (the engine bench, the comparison workload: 425,722
    // instructions per run when it was not, 422,499 forced).
    #[inline(always)]
    pub fn push(&mut self, key: u128) {
        if self.large {
            self.heap.push(Reverse(key));
            return;
        }
        if self.sorted.len() == SORTED_MAX {
            self.make_heap();
            self.heap.push(Reverse(key));
            return;
        }
        // Insertion from the small end: new keys are mostly near-term (a message on the wire)
        // and move nothing; a far one (a timeout) moves the few keys due before it.
        self.sorted.push(key);
        let keys = self.sorted.as_mut_slice();
        let mut i = keys.len() - 1;
        while i > 0 && keys[i - 1] < key {
            keys[i] = keys[i - 1];
            i -= 1;
        }
        keys[i] = key;
        // Keys are unique and the vector strictly descending: a duplicate key (two events
        // with one sequence number) would make the pop order depend on the representation.
        debug_assert!(
            (i == 0 || keys[i - 1] > key) && (i + 1 == keys.len() || key > keys[i + 1]),
            "queue keys must be unique and sorted descending (key {key:#x} at {i})"
        );
    }

    #[inline]
    pub fn peek(&self) -> Option<u128> {
        if self.large {
            self.heap.peek().map(|k| k.0)
        } else {
            self.sorted.last().copied()
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<u128> {
        let key = if self.large {
            let key = self.heap.pop().map(|k| k.0);
            if self.heap.len() <= SORTED_MIN {
                self.make_sorted();
            }
            key
        } else {
            self.sorted.pop()
        };
        // Pops come out in ascending order whatever the representation (and across a
        // conversion between them): the key popped is before every key left.
        debug_assert!(
            match (key, self.peek()) {
                (Some(k), Some(next)) => k < next,
                _ => true,
            },
            "the queue popped a key that is not the earliest"
        );
        key
    }

    /// Removes `key` if the queue is sorted (true), else leaves it for lazy deletion (false).
    #[inline]
    pub fn remove(&mut self, key: u128) -> bool {
        if self.large {
            return false;
        }
        // A removed key is usually a timeout, among the latest: search from the far end.
        match self.sorted.iter().position(|&k| k <= key) {
            Some(i) if self.sorted[i] == key => {
                self.sorted.remove(i);
                true
            }
            _ => false,
        }
    }

    /// Keeps the keys `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(u128) -> bool) {
        if self.large {
            let mut keys = std::mem::take(&mut self.heap).into_vec();
            keys.retain(|k| keep(k.0));
            self.heap = BinaryHeap::from(keys);
            if self.heap.len() <= SORTED_MIN {
                self.make_sorted();
            }
        } else {
            self.sorted.retain(|&k| keep(k));
        }
    }

    fn make_heap(&mut self) {
        debug_assert!(!self.large && self.heap.is_empty());
        self.heap.extend(self.sorted.drain(..).map(Reverse));
        self.large = true;
    }

    fn make_sorted(&mut self) {
        debug_assert!(self.large && self.sorted.is_empty());
        // Sorted ascending in `Reverse` order: the largest key first, as the vector keeps them.
        self.sorted.extend(
            std::mem::take(&mut self.heap)
                .into_sorted_vec()
                .into_iter()
                .map(|k| k.0),
        );
        self.large = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choice::{Choices, Seeded};

    /// Random pushes, pops and removals through both representations give exactly what a
    /// reference (a sorted set) gives.
    #[test]
    fn matches_a_sorted_set_across_both_representations() {
        let mut rng = Seeded::new(9);
        let mut queue = Queue::with_capacity(4);
        let mut reference = std::collections::BTreeSet::new();
        let mut next = 0u128;
        let mut saw_heap = false;
        let mut saw_back_make_sorted = false;
        for step in 0..200_000 {
            // Phases where pushes outnumber pops and the other way round: the queue grows past
            // the sorted limit and shrinks back, again and again.
            let push_weight = if (step / 400) % 2 == 0 { 6 } else { 2 };
            match rng.below("op", 10) {
                op if op < push_weight => {
                    next += 1;
                    let key = (u128::from(rng.below("t", 1000)) << 64) | next;
                    queue.push(key);
                    reference.insert(key);
                }
                op if op < 8 => assert_eq!(queue.pop(), reference.pop_first()),
                8 => {
                    if let Some(&key) = reference.iter().nth(rng.below("i", 8) as usize) {
                        if queue.remove(key) {
                            reference.remove(&key);
                        }
                    }
                }
                _ => {
                    let cut = u128::from(rng.below("c", 1000)) << 64;
                    queue.retain(|k| k < cut || k % 3 != 0);
                    reference.retain(|&k| k < cut || k % 3 != 0);
                }
            }
            assert_eq!(queue.peek(), reference.first().copied());
            assert_eq!(queue.len(), reference.len());
            saw_heap |= queue.large;
            saw_back_make_sorted |= saw_heap && !queue.large;
        }
        assert!(
            saw_heap && saw_back_make_sorted,
            "both representations exercised"
        );
    }
}
