//! Packet sequence numbers: 24-bit counters that wrap.
//!
//! PSNs live on a circle of 2^24 values. Two PSNs are compared by the signed
//! distance between them, taken in a window of ±2^23, exactly as rxe's
//! `psn_compare` does: `(int32)((a - b) << 8)`. That comparison is not a total
//! order (it is not transitive across more than half the circle), so [`Psn`]
//! deliberately does not implement `Ord`; use [`Psn::cmp_psn`] or
//! [`Psn::distance`].
//!
//! ```text
//!            0xFFFFFE 0xFFFFFF 0x000000 0x000001
//!   ... ───────┴────────┴────────┴────────┴─────── ...
//!               "before"   wrap    "after"
//! ```

use core::cmp::Ordering;
use core::fmt;

/// A 24-bit packet sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Psn(u32);

impl Psn {
    pub const MASK: u32 = 0x00FF_FFFF;
    /// Half the PSN space: the comparison window of [`Psn::cmp_psn`].
    pub const HALF: u32 = 1 << 23;

    /// Builds a PSN from the low 24 bits of `value`.
    pub const fn new(value: u32) -> Psn {
        Psn(value & Self::MASK)
    }

    pub const fn value(self) -> u32 {
        self.0
    }

    /// The PSN `n` steps later, wrapping at 2^24.
    #[must_use]
    pub const fn add(self, n: u32) -> Psn {
        Psn(self.0.wrapping_add(n) & Self::MASK)
    }

    /// The PSN `n` steps earlier, wrapping at 2^24.
    #[must_use]
    pub const fn sub(self, n: u32) -> Psn {
        Psn(self.0.wrapping_sub(n) & Self::MASK)
    }

    #[must_use]
    pub const fn next(self) -> Psn {
        self.add(1)
    }

    /// Signed distance `self - other` in the window [-2^23, 2^23).
    pub const fn distance(self, other: Psn) -> i32 {
        (self.0.wrapping_sub(other.0) << 8) as i32 >> 8
    }

    /// Orders two PSNs as rxe does: `Greater` when `self` comes after `other`.
    pub fn cmp_psn(self, other: Psn) -> Ordering {
        self.distance(other).cmp(&0)
    }

    pub fn is_after(self, other: Psn) -> bool {
        self.distance(other) > 0
    }

    pub fn is_before(self, other: Psn) -> bool {
        self.distance(other) < 0
    }

    /// Number of PSNs a request of `len` bytes occupies at path MTU `pmtu`:
    /// `max(1, ceil(len / pmtu))`. An RDMA READ request reserves this many
    /// PSNs for its responses although it is sent as one packet.
    pub const fn packets_for(len: u64, pmtu: u32) -> u32 {
        if len == 0 {
            1
        } else {
            len.div_ceil(pmtu as u64) as u32
        }
    }
}

impl From<u32> for Psn {
    fn from(v: u32) -> Psn {
        Psn::new(v)
    }
}

impl From<Psn> for u32 {
    fn from(p: Psn) -> u32 {
        p.0
    }
}

impl fmt::Display for Psn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps_at_24_bits() {
        assert_eq!(Psn::new(0xFF_FFFF).next(), Psn::new(0));
        assert_eq!(Psn::new(0).sub(1), Psn::new(0xFF_FFFF));
        assert_eq!(Psn::new(0x1FF_FFFF).value(), 0xFF_FFFF);
    }

    #[test]
    fn compares_across_the_wrap() {
        let before = Psn::new(0xFF_FFFE);
        let after = Psn::new(1);
        assert_eq!(after.distance(before), 3);
        assert_eq!(before.distance(after), -3);
        assert_eq!(after.cmp_psn(before), Ordering::Greater);
        assert!(before.is_before(after));
        assert_eq!(Psn::new(5).cmp_psn(Psn::new(5)), Ordering::Equal);
    }

    #[test]
    fn window_edges_match_rxe() {
        // rxe: (int32)((a - b) << 8) > 0 means a after b. At exactly half the
        // space the shifted value is i32::MIN, i.e. "before".
        let a = Psn::new(0);
        assert_eq!(a.add(Psn::HALF - 1).distance(a), (Psn::HALF - 1) as i32);
        assert_eq!(a.add(Psn::HALF).distance(a), -(Psn::HALF as i32));
    }

    #[test]
    fn read_request_psn_reservation() {
        assert_eq!(Psn::packets_for(0, 4096), 1);
        assert_eq!(Psn::packets_for(1, 4096), 1);
        assert_eq!(Psn::packets_for(4096, 4096), 1);
        assert_eq!(Psn::packets_for(4097, 4096), 2);
        assert_eq!(Psn::packets_for(65536, 1024), 64);
    }

    proptest! {
        #[test]
        fn add_then_distance(a in 0u32..=Psn::MASK, n in 0u32..Psn::HALF) {
            let p = Psn::new(a);
            prop_assert_eq!(p.add(n).distance(p), n as i32);
            prop_assert_eq!(p.add(n).sub(n), p);
        }

        #[test]
        fn rxe_formula(a in 0u32..=Psn::MASK, b in 0u32..=Psn::MASK) {
            let rxe = ((a.wrapping_sub(b)) << 8) as i32;
            prop_assert_eq!(Psn::new(a).cmp_psn(Psn::new(b)), rxe.cmp(&0));
        }
    }
}
