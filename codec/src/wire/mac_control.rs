//! MAC control frames (EtherType 0x8808): 802.3x PAUSE and 802.1Qbb PFC.
//!
//! ```text
//! PAUSE (opcode 0x0001):  opcode(2) | pause_time(2)                 | zero pad
//! PFC   (opcode 0x0101):  opcode(2) | class-enable vector(2) | time[0..7] (2 each) | zero pad
//!                                     0x00 | e7 .. e0 (bit n = priority n)
//! ```
//! The MAC control payload is always padded to the 46-byte minimum, so the
//! frame is 60 bytes before the FCS. Times are in quanta of 512 bit times.

use crate::error::{Layer, Result, need};

/// The EtherType of MAC control frames.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// The destination address PAUSE and PFC frames are sent to.
pub const PAUSE_DST_MAC: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];

mod field {
    use core::ops::Range;
    pub const OPCODE: Range<usize> = 0..2;
    pub const PAUSE_TIME: Range<usize> = 2..4;
    pub const ENABLE_VECTOR: Range<usize> = 2..4;
    pub const PFC_TIMES: Range<usize> = 4..20;
}

pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;

/// A decoded MAC control frame body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MacControlRepr {
    /// 802.3x: pause every priority for `time` quanta (0 = resume).
    Pause { time: u16 },
    /// 802.1Qbb: per-priority pause. `enable_vector` is the whole 16-bit
    /// field (the top byte is reserved); bit n enables `times[n]`.
    Pfc { enable_vector: u16, times: [u16; 8] },
    /// Any other MAC control opcode (EPON MPCP, ...); the body is not decoded.
    Unknown { opcode: u16 },
}

impl MacControlRepr {
    /// MAC control payload length: the 46-byte Ethernet minimum.
    pub const LEN: usize = 46;

    pub fn opcode(&self) -> u16 {
        match *self {
            MacControlRepr::Pause { .. } => OPCODE_PAUSE,
            MacControlRepr::Pfc { .. } => OPCODE_PFC,
            MacControlRepr::Unknown { opcode } => opcode,
        }
    }

    /// Parses the body after the EtherType. Only the opcode and its
    /// parameters must be present; the zero padding may have been cut.
    pub fn parse(buf: &[u8]) -> Result<MacControlRepr> {
        need(buf, Layer::MacControl, 2)?;
        let opcode = u16::from_be_bytes([buf[0], buf[1]]);
        match opcode {
            OPCODE_PAUSE => {
                need(buf, Layer::MacControl, field::PAUSE_TIME.end)?;
                Ok(MacControlRepr::Pause {
                    time: u16::from_be_bytes([buf[2], buf[3]]),
                })
            }
            OPCODE_PFC => {
                need(buf, Layer::MacControl, field::PFC_TIMES.end)?;
                let mut times = [0u16; 8];
                for (i, t) in times.iter_mut().enumerate() {
                    let o = field::PFC_TIMES.start + 2 * i;
                    *t = u16::from_be_bytes([buf[o], buf[o + 1]]);
                }
                Ok(MacControlRepr::Pfc {
                    enable_vector: u16::from_be_bytes([buf[2], buf[3]]),
                    times,
                })
            }
            opcode => Ok(MacControlRepr::Unknown { opcode }),
        }
    }

    /// Bytes of the body this repr decodes (opcode and parameters).
    pub fn header_len(&self) -> usize {
        match self {
            MacControlRepr::Pause { .. } => field::PAUSE_TIME.end,
            MacControlRepr::Pfc { .. } => field::PFC_TIMES.end,
            MacControlRepr::Unknown { .. } => 2,
        }
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    /// Writes the 46-byte body, zero padded. For `Unknown` only the opcode
    /// is written and the rest is zero.
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..Self::LEN];
        buf.fill(0);
        buf[field::OPCODE].copy_from_slice(&self.opcode().to_be_bytes());
        match *self {
            MacControlRepr::Pause { time } => {
                buf[field::PAUSE_TIME].copy_from_slice(&time.to_be_bytes());
            }
            MacControlRepr::Pfc {
                enable_vector,
                times,
            } => {
                buf[field::ENABLE_VECTOR].copy_from_slice(&enable_vector.to_be_bytes());
                for (i, t) in times.iter().enumerate() {
                    let o = field::PFC_TIMES.start + 2 * i;
                    buf[o..o + 2].copy_from_slice(&t.to_be_bytes());
                }
            }
            MacControlRepr::Unknown { .. } => {}
        }
    }

    /// Is priority `prio` told to stop (enabled with a non-zero time)?
    /// For 802.3x PAUSE every priority is.
    pub fn pauses(&self, prio: u8) -> bool {
        self.pause_quanta(prio).is_some_and(|q| q > 0)
    }

    /// The pause time for `prio` if this frame speaks about it at all:
    /// `Some(0)` is an XON, `Some(n)` an XOFF for n quanta.
    pub fn pause_quanta(&self, prio: u8) -> Option<u16> {
        match *self {
            MacControlRepr::Pause { time } => Some(time),
            MacControlRepr::Pfc {
                enable_vector,
                times,
            } if prio < 8 => (enable_vector & (1 << prio) != 0).then_some(times[prio as usize]),
            _ => None,
        }
    }
}

/// One pause quantum is 512 bit times.
pub const BITS_PER_QUANTUM: u64 = 512;

/// Duration of `quanta` pause quanta on a link of `rate_bps`, in picoseconds
/// (exact for every standard rate: 5120 ps per quantum at 100 Gb/s).
pub fn pause_quanta_to_ps(quanta: u16, rate_bps: u64) -> u64 {
    if rate_bps == 0 {
        return 0;
    }
    (u128::from(quanta) * u128::from(BITS_PER_QUANTUM) * 1_000_000_000_000 / u128::from(rate_bps))
        as u64
}

/// Duration of `quanta` pause quanta on a link of `gbps` Gb/s, in nanoseconds.
pub fn pause_quanta_to_ns(quanta: u16, gbps: f64) -> f64 {
    f64::from(quanta) * BITS_PER_QUANTUM as f64 / gbps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pfc_round_trip_and_bits() {
        let r = MacControlRepr::Pfc {
            enable_vector: 0x0018,
            times: [0, 0, 0, 0xFFFF, 0, 0, 0, 0],
        };
        let mut buf = [0xa5; 46];
        r.emit(&mut buf);
        assert_eq!(&buf[..6], &[0x01, 0x01, 0x00, 0x18, 0, 0]);
        assert_eq!(&buf[10..12], &[0xFF, 0xFF]);
        assert!(buf[20..].iter().all(|&b| b == 0));
        assert_eq!(MacControlRepr::parse(&buf).unwrap(), r);
        assert!(r.pauses(3));
        assert_eq!(r.pause_quanta(4), Some(0), "enabled with time 0 is XON");
        assert_eq!(r.pause_quanta(2), None, "not enabled");
    }

    #[test]
    fn pause_8023x() {
        let r = MacControlRepr::parse(&[0x00, 0x01, 0x12, 0x34]).unwrap();
        assert_eq!(r, MacControlRepr::Pause { time: 0x1234 });
        assert!(r.pauses(0) && r.pauses(7));
    }

    #[test]
    fn quanta_conversion() {
        // A quantum is 512 bit times (IEEE 802.3 PAUSE; 802.1Qbb PFC uses
        // the same unit): 5.12 ns @100G, 1.28 ns @400G, 65535 ≈ 335.5 µs
        // @100G.
        assert_eq!(pause_quanta_to_ps(1, 100_000_000_000), 5120);
        assert_eq!(pause_quanta_to_ps(1, 400_000_000_000), 1280);
        assert_eq!(pause_quanta_to_ps(65535, 100_000_000_000), 335_539_200);
        assert!((pause_quanta_to_ns(65535, 100.0) - 335_539.2).abs() < 1e-6);
        assert_eq!(pause_quanta_to_ps(10, 25_000_000_000), 204_800);
    }

    #[test]
    fn truncated_pfc() {
        let e = MacControlRepr::parse(&[0x01, 0x01, 0, 0xff, 0, 0]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "MAC control at offset 0: 20 bytes required, 6 present"
        );
    }
}
