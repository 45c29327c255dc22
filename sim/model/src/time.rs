//! Simulated time and link rates, in integers.
//!
//! Time is integer picoseconds ([`Ps`]): at 400 Gb/s one bit lasts 2.5 ps,
//! so nanoseconds would round every serialization time, while a `u64` of
//! picoseconds still spans 213 days. Rates are bits per second.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// A point in simulated time or a duration, in picoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Ps(pub u64);

impl Ps {
    pub const ZERO: Ps = Ps(0);
    pub const MAX: Ps = Ps(u64::MAX);

    pub const fn from_ns(ns: u64) -> Ps {
        Ps(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Ps {
        Ps(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Ps {
        Ps(ms * 1_000_000_000)
    }
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (truncated), as pcap timestamps want them.
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    pub fn saturating_sub(self, other: Ps) -> Ps {
        Ps(self.0.saturating_sub(other.0))
    }
    /// Rounded down to a multiple of `step` picoseconds (`[sim]
    /// tx_time_step`; 1: unchanged).
    #[inline]
    pub const fn floor_to(self, step: u64) -> Ps {
        // Per transmitted frame: most runs keep the exact time, and the
        // reference's 1 ns clock divides by a constant (a multiply).
        match step {
            0 | 1 => self,
            1_000 => Ps(self.0 - self.0 % 1_000),
            s => Ps(self.0 - self.0 % s),
        }
    }
}

impl Add for Ps {
    type Output = Ps;
    fn add(self, rhs: Ps) -> Ps {
        Ps(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Ps {
    fn add_assign(&mut self, rhs: Ps) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for Ps {
    type Output = Ps;
    fn sub(self, rhs: Ps) -> Ps {
        Ps(self.0 - rhs.0)
    }
}

impl fmt::Display for Ps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= 1_000_000_000 {
            write!(f, "{:.3}ms", ps as f64 / 1e9)
        } else if ps >= 1_000_000 {
            write!(f, "{:.3}us", ps as f64 / 1e6)
        } else if ps >= 1_000 {
            write!(f, "{:.3}ns", ps as f64 / 1e3)
        } else {
            write!(f, "{ps}ps")
        }
    }
}

/// A link or pacing rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn gbps(g: u64) -> Rate {
        Rate(g * 1_000_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }

    /// Time to serialize `bytes` at this rate, rounded up to a whole
    /// picosecond so that back-to-back frames never overlap.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Ps {
        debug_assert!(self.0 > 0);
        // A frame's bit-picoseconds fit in 64 bits (up to 2.3 MB): a 64-bit
        // division, not the 128-bit one (a library call) every frame paid.
        const MAX_U64: u64 = u64::MAX / (8 * 1_000_000_000_000);
        if bytes <= MAX_U64 {
            return Ps((bytes * 8 * 1_000_000_000_000).div_ceil(self.0));
        }
        let bits = u128::from(bytes) * 8 * 1_000_000_000_000;
        Ps(bits.div_ceil(u128::from(self.0)) as u64)
    }
}

/// Bytes a frame occupies on the wire beyond its own length: preamble and
/// start-of-frame delimiter (8) plus the minimum inter-frame gap (12).
pub const WIRE_OVERHEAD: u64 = 20;
/// The Ethernet FCS, which captures omit but the wire carries.
pub const FCS_LEN: u64 = 4;

/// Wire occupancy of a frame of `frame_len` bytes as a capture shows it
/// (no FCS): FCS, preamble, SFD and inter-frame gap added.
pub const fn wire_bytes(frame_len: u64) -> u64 {
    frame_len + FCS_LEN + WIRE_OVERHEAD
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's clock: 1048 bytes take 83.84 ns at 100G and 20.96
    /// at 400G, which it truncates to 83 and 20; a 60-byte ACK at 400G,
    /// 1.2 ns, to 1.
    #[test]
    fn times_floored_to_a_step() {
        let t = |gbps, bytes| Rate::gbps(gbps).tx_time(bytes);
        assert_eq!(t(100, 1048), Ps(83_840));
        assert_eq!(t(100, 1048).floor_to(1_000), Ps(83_000));
        assert_eq!(t(400, 1048).floor_to(1_000), Ps(20_000));
        assert_eq!(t(400, 60).floor_to(1_000), Ps(1_000));
        assert_eq!(t(100, 1048).floor_to(1), Ps(83_840));
        assert_eq!(Ps(83_903).floor_to(64), Ps(83_840));
    }

    #[test]
    fn serialization_times() {
        // A 4174-byte frame (RDMA WRITE FIRST, 4096 B payload, with FCS) plus
        // 20 bytes of preamble/IFG is 4194 B = 33552 bits: 335.52 ns at 100G.
        assert_eq!(Rate::gbps(100).tx_time(wire_bytes(4170)), Ps(335_520));
        // 64-byte frame at 400G: 84 B * 8 = 672 bits = 1680 ps.
        assert_eq!(Rate::gbps(400).tx_time(84), Ps(1_680));
        // Rounds up: 1 byte at 3 b/s.
        assert_eq!(Rate(3).tx_time(1), Ps(2_666_666_666_667));
        // Both sides of the 64-bit fast path agree with the 128-bit sum.
        for bytes in [2_305_842, 2_305_843, 2_305_844, 1 << 40] {
            let r = Rate::gbps(100);
            let want = (u128::from(bytes) * 8_000_000_000_000).div_ceil(u128::from(r.0));
            assert_eq!(r.tx_time(bytes), Ps(want as u64), "{bytes}");
        }
    }

    #[test]
    fn display() {
        assert_eq!(Ps::from_us(4).to_string(), "4.000us");
        assert_eq!(Ps(999).to_string(), "999ps");
        assert_eq!((Ps::from_ms(1) + Ps::from_ns(5)).to_string(), "1.000ms");
    }
}
