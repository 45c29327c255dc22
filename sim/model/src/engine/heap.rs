//! The scheduler's priority queue: a 4-ary min-heap of keys, with the
//! events beside them in a second array.
//!
//! ```text
//!   keys:   [k0 | k1 k2 k3 k4 | k5 .. k8  k9 .. k12 ...]   children of i: 4i+1 ..= 4i+4
//!   events: [e0 | e1 e2 e3 e4 | ...]                       moved with their keys
//! ```
//!
//! Taking the next event is a sift down from the top. Four children per
//! node halve the levels of a binary heap; the four keys a level compares
//! are 64 bytes apart from the events, and compared as a tournament of two
//! pairs whose first comparisons do not wait on each other. Keys are
//! unique (time, origin, the origin's sequence), so the order taken is the
//! keys' order whatever the heap's shape: any correct heap runs the same
//! simulation.

use super::Event;

/// Children per node.
const D: usize = 4;

#[derive(Debug, Default)]
pub(super) struct Heap {
    keys: Vec<u128>,
    evs: Vec<Event>,
}

impl Heap {
    pub(super) fn with_capacity(n: usize) -> Heap {
        Heap {
            keys: Vec::with_capacity(n),
            evs: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The smallest key and its event.
    #[inline]
    pub(super) fn peek(&self) -> Option<(u128, Event)> {
        Some((*self.keys.first()?, self.evs[0]))
    }

    #[inline]
    pub(super) fn peek_key(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    pub(super) fn push(&mut self, key: u128, ev: Event) {
        let mut i = self.keys.len();
        self.keys.push(key);
        self.evs.push(ev);
        // Sift up: parents larger than the new key move down a level.
        while i > 0 {
            let p = (i - 1) / D;
            if self.keys[p] <= key {
                break;
            }
            self.keys[i] = self.keys[p];
            self.evs[i] = self.evs[p];
            i = p;
        }
        self.keys[i] = key;
        self.evs[i] = ev;
    }

    /// Takes the smallest key and its event.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(u128, Event)> {
        let top = self.peek()?;
        let key = self.keys.pop()?;
        let ev = self.evs.pop()?;
        if !self.keys.is_empty() {
            self.sift_down(key, ev);
        }
        Some(top)
    }

    /// Takes the smallest key and puts `key` in its place: one sift where
    /// a pop and a push would be two. The heap must not be empty.
    #[inline]
    pub(super) fn replace_top(&mut self, key: u128, ev: Event) {
        self.sift_down(key, ev);
    }

    /// Puts (`key`, `ev`) in the hole at the top, moving smaller children
    /// up until it fits.
    #[inline]
    fn sift_down(&mut self, key: u128, ev: Event) {
        let n = self.keys.len();
        let mut i = 0;
        loop {
            let first = D * i + 1;
            if first >= n {
                break;
            }
            let (c, ck) = if first + D <= n {
                let k = &self.keys[first..first + D];
                let (i01, k01) = if k[1] < k[0] { (1, k[1]) } else { (0, k[0]) };
                let (i23, k23) = if k[3] < k[2] { (3, k[3]) } else { (2, k[2]) };
                let (j, m) = if k23 < k01 { (i23, k23) } else { (i01, k01) };
                (first + j, m)
            } else {
                let mut c = first;
                let mut ck = self.keys[first];
                for j in first + 1..n {
                    if self.keys[j] < ck {
                        c = j;
                        ck = self.keys[j];
                    }
                }
                (c, ck)
            };
            if key <= ck {
                break;
            }
            self.keys[i] = ck;
            self.evs[i] = self.evs[c];
            i = c;
        }
        self.keys[i] = key;
        self.evs[i] = ev;
    }

    /// Every event, in no particular order.
    pub(super) fn events(&self) -> impl Iterator<Item = Event> + '_ {
        self.evs.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev(port: u32) -> Event {
        Event::TxDone { port }
    }

    #[test]
    fn takes_keys_in_order_with_their_events() {
        let mut h = Heap::with_capacity(4);
        for k in [50u128, 3, 77, 3_000, 1, 12, 9, 40, 2] {
            h.push(k, ev(k as u32));
        }
        let mut out = Vec::new();
        while let Some((k, e)) = h.pop() {
            assert_eq!(e, ev(k as u32));
            out.push(k);
        }
        assert_eq!(out, [1, 2, 3, 9, 12, 40, 50, 77, 3_000]);
        assert_eq!(h.pop(), None);
    }

    proptest! {
        /// Against a sorted list: pushes, pops and top replacements in
        /// any mix take the keys in order.
        #[test]
        fn matches_a_sorted_list(ops in prop::collection::vec((0u8..3, 0u64..1_000), 0..300)) {
            let mut h = Heap::default();
            let mut model: Vec<u128> = Vec::new();
            for (i, (op, t)) in ops.into_iter().enumerate() {
                // Unique keys, as the scheduler's are.
                let key = (u128::from(t) << 32) | i as u128;
                match op {
                    0 | 1 => {
                        h.push(key, ev(i as u32));
                        model.push(key);
                    }
                    _ if !model.is_empty() => {
                        model.sort_unstable();
                        let top = model.remove(0);
                        prop_assert_eq!(h.peek_key(), Some(top));
                        if t % 2 == 0 {
                            prop_assert_eq!(h.pop().map(|(k, _)| k), Some(top));
                        } else {
                            h.replace_top(key, ev(i as u32));
                            model.push(key);
                        }
                    }
                    _ => prop_assert_eq!(h.pop(), None),
                }
                prop_assert_eq!(h.len(), model.len());
            }
            model.sort_unstable();
            for k in model {
                prop_assert_eq!(h.pop().map(|(k, _)| k), Some(k));
            }
        }
    }
}
