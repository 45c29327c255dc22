//! In-band network telemetry for HPCC: INT-MD over UDP, with one hop
//! record per switch that HPCC's sender reads (time, bytes sent, queue,
//! link rate).
//!
//! HPCC (Li et al., SIGCOMM 2019) paces each flow from the utilisation of
//! every link on its path, which each switch writes into the data packet as
//! it leaves the egress port; the receiver copies the records into its ACK.
//! rocesim carries them in the P4.org INT specification's shape (v2.1,
//! "INT-MD over UDP", §5.7) so that the frames are what an INT fabric
//! would send, and a packet without telemetry stays plain RoCEv2:
//!
//! ```text
//!  Eth | IPv4 | UDP dport = INT_UDP_PORT | shim | MD header | hop n ... hop 1 | BTH ... ICRC
//!                                          4 B     12 B        8 B each, newest first
//!
//!  shim       Type=1 (INT-MD):4 | NPT=1:2 | R:2 | Length:8 (words after the shim) | original UDP dport:16
//!  MD header  Ver=2:4 | D:1 | E:1 | M:1 | R:12 | HopML=2:5 | RemainingHopCnt:8
//!             Instruction bitmap:16 = 0 | Domain-specific ID:16 = 0x4850 ("HP")
//!             DS instruction:16 = 0x8000 (the HPCC hop) | DS flags:16 = echo:1 | R:7 | multi:8
//!  hop        rate code:3 | time:24 | tx bytes:20 | queue:17          (64 bits, big-endian)
//! ```
//!
//! * The UDP destination port moves into the shim (NPT 1), as the spec
//!   lets an INT source do, so that a dissector of RoCEv2 does not read the
//!   shim as a BTH; the receiver (the INT sink) puts it back. The ICRC is
//!   the one of the packet without the telemetry: what the sink hands its
//!   transport.
//! * The spec's standard instructions carry no byte counter and no link
//!   rate, which HPCC needs; its domain-specific instructions exist for
//!   such metadata. The hop record is the HPCC ns-3 reference's `IntHop`
//!   (`int-header.h`): line rate as a 3-bit code, the switch's clock in ns
//!   modulo 2^24, the port's transmitted bytes in units of 128 × `multi`
//!   modulo 2^20, the port's queued bytes in units of 80 × `multi`. The
//!   reference packs the same fields into a little-endian bit field; here
//!   they are big-endian, rate first.
//! * The receiver's echo on its ACK carries the data packet's records with
//!   the DS flag `echo` set and no hop left: switches add nothing to it
//!   (the reference's switches push only onto data packets).
//! * Rate codes 0-4 are the reference's (25, 50, 100, 200, 400 Gb/s);
//!   5-7 (10, 40, 800 Gb/s) are rocesim's, where the reference has none.
//!
//! HPCC-PINT (the reference's `CC_MODE 10`; Ben Basat et al., "PINT:
//! Probabilistic In-band Network Telemetry", SIGCOMM 2020) carries no hop
//! records: each switch folds its port's utilisation into one number, the
//! largest on the path, written as a power of the log base (`pint.cc`).
//! Here it is its own INT-MD form, the second domain-specific instruction
//! (bit 1), with the power in the one word that follows the header:
//!
//! ```text
//!  shim       as above, Length = 4 (the MD header and the power's word)
//!  MD header  HopML = 0 | RemainingHopCnt = 0 | DS instruction = 0x4000 (PINT power)
//!  power      power:16 | R:16                       (the path's largest, big-endian)
//! ```
//!
//! Switches overwrite the power with a larger one and never push, so the
//! stack keeps its size; the echo on the ACK sets the DS flag as for HPCC.

use crate::error::{Error, Layer, Result, need};

/// The UDP destination port of a RoCEv2 packet that carries telemetry.
/// INT has no IANA port; this one sits beside RoCEv2's 4791.
pub const INT_UDP_PORT: u16 = 4792;

/// The domain-specific ID of the HPCC hop record ("HP").
pub const HPCC_DS_ID: u16 = 0x4850;

/// The most hop records a stack holds here: the reference's `maxHop` is 5,
/// the switches of a three-tier fat-tree's longest path; 7 leave room for
/// more tiers and make [`IntRepr`] two cache lines.
pub const MAX_HOPS: usize = 7;

mod field {
    pub const SHIM: usize = 0;
    pub const SHIM_LEN: usize = 1;
    pub const SHIM_PORT: core::ops::Range<usize> = 2..4;
    pub const MD_VER_FLAGS: core::ops::Range<usize> = 4..6;
    pub const MD_HOPML: usize = 6;
    pub const MD_REMAINING: usize = 7;
    pub const MD_INSTR: core::ops::Range<usize> = 8..10;
    pub const DS_ID: core::ops::Range<usize> = 10..12;
    pub const DS_INSTR: core::ops::Range<usize> = 12..14;
    pub const DS_FLAGS: core::ops::Range<usize> = 14..16;
    pub const HOPS: usize = 16;
}

const SHIM_TYPE_MD: u8 = 1;
const SHIM_NPT_PORT: u8 = 1;
const MD_VERSION: u8 = 2;
const HOP_WORDS: u8 = 2;
const DS_INSTR_HPCC: u16 = 0x8000;
const DS_INSTR_PINT: u16 = 0x4000;
const DS_FLAG_ECHO: u16 = 0x8000;

/// One switch's record: what the egress port saw as the packet left it.
/// Fields hold the wire values (units and wrapping as the module says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C)]
pub struct IntHopRepr {
    /// The link rate's 3-bit code ([`IntHopRepr::rate_bps`]).
    pub rate_code: u8,
    /// The switch's clock in ns, modulo 2^24.
    pub time: u32,
    /// Bytes the port had sent before this packet, in units of
    /// 128 × `multi`, modulo 2^20.
    pub tx_bytes: u32,
    /// Bytes queued at the port as the packet left, in units of
    /// 80 × `multi` (saturating at 2^17 - 1).
    pub qlen: u32,
}

impl IntHopRepr {
    pub const LEN: usize = 8;
    pub const TIME_BITS: u32 = 24;
    pub const BYTES_BITS: u32 = 20;
    pub const QLEN_BITS: u32 = 17;
    /// Bytes per unit of `tx_bytes` and of `qlen` when `multi` is 1.
    pub const BYTE_UNIT: u64 = 128;
    pub const QLEN_UNIT: u64 = 80;
    const RATES_GBPS: [u64; 8] = [25, 50, 100, 200, 400, 10, 40, 800];

    /// The record of a port of `rate_bps` at `time_ns` that had sent
    /// `tx_bytes` and holds `qlen` bytes, in units of `multi`; `None` for a
    /// rate without a code.
    pub fn new(rate_bps: u64, time_ns: u64, tx_bytes: u64, qlen: u64, multi: u8) -> Option<Self> {
        let rate_code = Self::rate_code(rate_bps)?;
        let m = u64::from(multi.max(1));
        Some(IntHopRepr {
            rate_code,
            time: (time_ns & ((1 << Self::TIME_BITS) - 1)) as u32,
            tx_bytes: ((tx_bytes / (Self::BYTE_UNIT * m)) & ((1 << Self::BYTES_BITS) - 1)) as u32,
            qlen: (qlen / (Self::QLEN_UNIT * m)).min((1 << Self::QLEN_BITS) - 1) as u32,
        })
    }

    /// The code of a link rate, where it has one.
    pub fn rate_code(rate_bps: u64) -> Option<u8> {
        Self::RATES_GBPS
            .iter()
            .position(|&g| g * 1_000_000_000 == rate_bps)
            .map(|c| c as u8)
    }

    /// The link rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        Self::RATES_GBPS[usize::from(self.rate_code & 7)] * 1_000_000_000
    }

    /// Bytes sent between `earlier` and this record, across the counter's
    /// wrap (`IntHop::GetBytesDelta`).
    pub fn bytes_since(&self, earlier: &IntHopRepr, multi: u8) -> u64 {
        let d = self.tx_bytes.wrapping_sub(earlier.tx_bytes) & ((1 << Self::BYTES_BITS) - 1);
        u64::from(d) * Self::BYTE_UNIT * u64::from(multi.max(1))
    }

    /// Nanoseconds between `earlier` and this record, across the clock's
    /// wrap (`IntHop::GetTimeDelta`).
    pub fn ns_since(&self, earlier: &IntHopRepr) -> u64 {
        u64::from(self.time.wrapping_sub(earlier.time) & ((1 << Self::TIME_BITS) - 1))
    }

    /// The bytes-sent counter in bytes (still modulo 2^20 units).
    pub fn sent_bytes(&self, multi: u8) -> u64 {
        u64::from(self.tx_bytes) * Self::BYTE_UNIT * u64::from(multi.max(1))
    }

    /// The queued bytes the record stands for.
    pub fn qlen_bytes(&self, multi: u8) -> u64 {
        u64::from(self.qlen) * Self::QLEN_UNIT * u64::from(multi.max(1))
    }

    pub fn parse(buf: &[u8]) -> Result<IntHopRepr> {
        need(buf, Layer::Int, Self::LEN)?;
        let w = u64::from_be_bytes(buf[..8].try_into().unwrap());
        Ok(IntHopRepr {
            rate_code: (w >> 61) as u8,
            time: ((w >> 37) & ((1 << Self::TIME_BITS) - 1)) as u32,
            tx_bytes: ((w >> 17) & ((1 << Self::BYTES_BITS) - 1)) as u32,
            qlen: (w & ((1 << Self::QLEN_BITS) - 1)) as u32,
        })
    }

    pub fn emit(&self, buf: &mut [u8]) {
        let w = (u64::from(self.rate_code & 7) << 61)
            | (u64::from(self.time & ((1 << Self::TIME_BITS) - 1)) << 37)
            | (u64::from(self.tx_bytes & ((1 << Self::BYTES_BITS) - 1)) << 17)
            | u64::from(self.qlen & ((1 << Self::QLEN_BITS) - 1));
        buf[..8].copy_from_slice(&w.to_be_bytes());
    }
}

/// The telemetry of one packet: the shim, the metadata header and the
/// hops, in path order (`hops()[0]` is the first switch's; the wire holds
/// them newest first).
///
/// Laid out for a simulator that keeps one per packet in flight and
/// touches it at every switch: the counts first, then the hops, aligned to
/// a cache line, so that a push onto a path of up to three switches reads
/// and writes one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C, align(64))]
pub struct IntRepr {
    /// The UDP destination port the packet had (4791), kept in the shim.
    pub orig_dport: u16,
    /// Hops that may still push a record (RemainingHopCnt).
    pub remaining: u8,
    /// A hop found no room (the MD header's E bit).
    pub exceeded: bool,
    /// The receiver's copy on its ACK (DS flag): switches leave it alone.
    pub echo: bool,
    /// The units' multiplier (the reference's `INT_MULTI`).
    pub multi: u8,
    nhop: u8,
    /// HPCC-PINT's form: one power, no hop records (the module's second
    /// layout).
    pub pint: bool,
    /// The path's largest utilisation power so far (PINT only).
    pub power: u16,
    hops: [IntHopRepr; MAX_HOPS],
}

impl IntRepr {
    /// Shim and metadata header.
    pub const HEADER_LEN: usize = field::HOPS;

    /// An empty stack as the sending NIC (the INT source) starts it, with
    /// room for `max_hops` records.
    pub fn source(orig_dport: u16, max_hops: u8, multi: u8) -> IntRepr {
        IntRepr {
            orig_dport,
            remaining: max_hops.min(MAX_HOPS as u8),
            multi: multi.max(1),
            ..IntRepr::default()
        }
    }

    /// An HPCC-PINT packet's telemetry as its sender starts it: power 0.
    pub fn pint_source(orig_dport: u16) -> IntRepr {
        IntRepr {
            orig_dport,
            pint: true,
            ..IntRepr::default()
        }
    }

    /// PINT's word after the header.
    pub const PINT_LEN: usize = 4;

    /// The receiver's echo of `self` on its ACK to a packet with
    /// `orig_dport`.
    pub fn echo_of(&self, orig_dport: u16) -> IntRepr {
        IntRepr {
            orig_dport,
            remaining: 0,
            echo: true,
            ..*self
        }
    }

    pub fn hops(&self) -> &[IntHopRepr] {
        &self.hops[..usize::from(self.nhop)]
    }

    /// A transit switch's push: the record goes on when a hop remains,
    /// else the E bit is set. Echoes and PINT's form take nothing.
    pub fn push(&mut self, hop: IntHopRepr) {
        if self.echo || self.pint {
            return;
        }
        if self.remaining == 0 || usize::from(self.nhop) >= MAX_HOPS {
            self.exceeded = true;
            return;
        }
        self.hops[usize::from(self.nhop)] = hop;
        self.nhop += 1;
        self.remaining -= 1;
    }

    /// A PINT switch's write: the power goes on if larger than the
    /// packet's. Echoes and HPCC's form take nothing.
    pub fn raise_power(&mut self, power: u16) {
        if self.pint && !self.echo && power > self.power {
            self.power = power;
        }
    }

    pub fn buffer_len(&self) -> usize {
        if self.pint {
            return Self::HEADER_LEN + Self::PINT_LEN;
        }
        Self::HEADER_LEN + IntHopRepr::LEN * usize::from(self.nhop)
    }

    /// Parses the telemetry at the start of a UDP payload whose destination
    /// port was [`INT_UDP_PORT`]; returns it and its length.
    pub fn parse(buf: &[u8]) -> Result<(IntRepr, usize)> {
        need(buf, Layer::Int, Self::HEADER_LEN)?;
        let invalid = |offset, field, value: u64, expected| Error::Invalid {
            layer: Layer::Int,
            offset,
            field,
            value,
            expected,
        };
        let (ty, npt) = (buf[field::SHIM] >> 4, (buf[field::SHIM] >> 2) & 3);
        if ty != SHIM_TYPE_MD {
            return Err(invalid(0, "shim type", ty.into(), "1 (INT-MD)"));
        }
        if npt != SHIM_NPT_PORT {
            return Err(invalid(
                0,
                "NPT",
                npt.into(),
                "1 (original UDP port in the shim)",
            ));
        }
        let words = usize::from(buf[field::SHIM_LEN]);
        let vf = u16::from_be_bytes(buf[field::MD_VER_FLAGS].try_into().unwrap());
        let ver = (vf >> 12) as u8;
        if ver != MD_VERSION {
            return Err(invalid(4, "MD version", ver.into(), "2 (INT v2.1)"));
        }
        let hopml = buf[field::MD_HOPML] & 0x1F;
        let ds_instr = u16::from_be_bytes(buf[field::DS_INSTR].try_into().unwrap());
        if ds_instr == DS_INSTR_PINT {
            return Self::parse_pint(buf, words, vf);
        }
        if hopml != HOP_WORDS {
            return Err(invalid(6, "HopML", hopml.into(), "2 (the 8-byte HPCC hop)"));
        }
        let ds_id = u16::from_be_bytes(buf[field::DS_ID].try_into().unwrap());
        if ds_id != HPCC_DS_ID {
            return Err(invalid(
                10,
                "domain-specific ID",
                ds_id.into(),
                "0x4850 (HPCC hop)",
            ));
        }
        let stack_words = words
            .checked_sub(3)
            .ok_or_else(|| invalid(1, "shim length", words as u64, "at least 3 (the MD header)"))?;
        if stack_words % usize::from(HOP_WORDS) != 0 {
            return Err(invalid(1, "shim length", words as u64, "3 + 2 x hops"));
        }
        let nhop = stack_words / usize::from(HOP_WORDS);
        if nhop > MAX_HOPS {
            return Err(invalid(1, "shim length", words as u64, "at most 7 hops"));
        }
        let len = Self::HEADER_LEN + nhop * IntHopRepr::LEN;
        need(buf, Layer::Int, len)?;
        let flags = u16::from_be_bytes(buf[field::DS_FLAGS].try_into().unwrap());
        let mut r = IntRepr {
            orig_dport: u16::from_be_bytes(buf[field::SHIM_PORT].try_into().unwrap()),
            remaining: buf[field::MD_REMAINING],
            exceeded: vf & 0x0400 != 0,
            echo: flags & DS_FLAG_ECHO != 0,
            multi: (flags & 0xFF) as u8,
            nhop: nhop as u8,
            pint: false,
            power: 0,
            hops: [IntHopRepr::default(); MAX_HOPS],
        };
        // Newest first on the wire; path order here.
        for i in 0..nhop {
            let at = field::HOPS + (nhop - 1 - i) * IntHopRepr::LEN;
            r.hops[i] = IntHopRepr::parse(&buf[at..]).map_err(|e| e.at(at))?;
        }
        Ok((r, len))
    }

    /// The rest of a PINT form, after its shim and MD version.
    fn parse_pint(buf: &[u8], words: usize, vf: u16) -> Result<(IntRepr, usize)> {
        let invalid = |offset, field, value: u64, expected| Error::Invalid {
            layer: Layer::Int,
            offset,
            field,
            value,
            expected,
        };
        let hopml = buf[field::MD_HOPML] & 0x1F;
        if hopml != 0 {
            return Err(invalid(
                6,
                "HopML",
                hopml.into(),
                "0 (PINT has no hop records)",
            ));
        }
        let ds_id = u16::from_be_bytes(buf[field::DS_ID].try_into().unwrap());
        if ds_id != HPCC_DS_ID {
            return Err(invalid(
                10,
                "domain-specific ID",
                ds_id.into(),
                "0x4850 (HPCC)",
            ));
        }
        if words != 4 {
            return Err(invalid(
                1,
                "shim length",
                words as u64,
                "4 (PINT's power word)",
            ));
        }
        let len = Self::HEADER_LEN + Self::PINT_LEN;
        need(buf, Layer::Int, len)?;
        let flags = u16::from_be_bytes(buf[field::DS_FLAGS].try_into().unwrap());
        let at = field::HOPS;
        Ok((
            IntRepr {
                orig_dport: u16::from_be_bytes(buf[field::SHIM_PORT].try_into().unwrap()),
                remaining: buf[field::MD_REMAINING],
                exceeded: vf & 0x0400 != 0,
                echo: flags & DS_FLAG_ECHO != 0,
                multi: (flags & 0xFF) as u8,
                nhop: 0,
                pint: true,
                power: u16::from_be_bytes(buf[at..at + 2].try_into().unwrap()),
                hops: [IntHopRepr::default(); MAX_HOPS],
            },
            len,
        ))
    }

    /// Writes the telemetry; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let n = usize::from(self.nhop);
        buf[field::SHIM] = (SHIM_TYPE_MD << 4) | (SHIM_NPT_PORT << 2);
        buf[field::SHIM_LEN] = (3 + n * usize::from(HOP_WORDS)) as u8;
        if self.pint {
            buf[field::SHIM_LEN] = 4;
        }
        buf[field::SHIM_PORT].copy_from_slice(&self.orig_dport.to_be_bytes());
        let vf = (u16::from(MD_VERSION) << 12) | if self.exceeded { 0x0400 } else { 0 };
        buf[field::MD_VER_FLAGS].copy_from_slice(&vf.to_be_bytes());
        buf[field::MD_HOPML] = if self.pint { 0 } else { HOP_WORDS };
        buf[field::MD_REMAINING] = self.remaining;
        buf[field::MD_INSTR].copy_from_slice(&0u16.to_be_bytes());
        buf[field::DS_ID].copy_from_slice(&HPCC_DS_ID.to_be_bytes());
        let instr = if self.pint {
            DS_INSTR_PINT
        } else {
            DS_INSTR_HPCC
        };
        buf[field::DS_INSTR].copy_from_slice(&instr.to_be_bytes());
        let flags = if self.echo { DS_FLAG_ECHO } else { 0 } | u16::from(self.multi);
        buf[field::DS_FLAGS].copy_from_slice(&flags.to_be_bytes());
        if self.pint {
            let at = field::HOPS;
            buf[at..at + 2].copy_from_slice(&self.power.to_be_bytes());
            buf[at + 2..at + 4].copy_from_slice(&[0, 0]);
            return self.buffer_len();
        }
        for (i, h) in self.hops().iter().enumerate() {
            h.emit(&mut buf[field::HOPS + (n - 1 - i) * IntHopRepr::LEN..]);
        }
        self.buffer_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference's 100G hop at 2,000,001,234 ns, 1,000,000 bytes sent
    /// and 16,000 bytes queued, with INT_MULTI 4: time modulo 2^24,
    /// bytes / 512, queue / 320, all checked by hand.
    #[test]
    fn a_hop_as_the_reference_quantises_it() {
        let h = IntHopRepr::new(100_000_000_000, 2_000_001_234, 1_000_000, 16_000, 4).unwrap();
        assert_eq!(h.rate_code, 2);
        assert_eq!(h.time, (2_000_001_234u64 % (1 << 24)) as u32);
        assert_eq!(h.tx_bytes, 1_000_000 / 512);
        assert_eq!(h.qlen, 50);
        assert_eq!(h.qlen_bytes(4), 16_000);
        assert_eq!(h.sent_bytes(4), 1_000_000 / 512 * 512);
        assert_eq!(h.rate_bps(), 100_000_000_000);
        assert_eq!(IntHopRepr::new(1_000_000_000, 0, 0, 0, 1), None);
    }

    #[test]
    fn deltas_cross_the_wrap() {
        let a = IntHopRepr {
            time: (1 << 24) - 10,
            tx_bytes: (1 << 20) - 1,
            ..Default::default()
        };
        let b = IntHopRepr {
            time: 5,
            tx_bytes: 2,
            ..Default::default()
        };
        assert_eq!(b.ns_since(&a), 15);
        assert_eq!(b.bytes_since(&a, 1), 3 * 128);
    }

    /// Two hops emitted over 0xa5: every byte is the layout's, the newer
    /// hop first; and back.
    #[test]
    fn emit_then_parse() {
        let mut r = IntRepr::source(4791, 5, 4);
        let h1 = IntHopRepr {
            rate_code: 2,
            time: 0x123456,
            tx_bytes: 0xABCDE,
            qlen: 0x1FFFF,
        };
        let h2 = IntHopRepr {
            rate_code: 4,
            ..Default::default()
        };
        r.push(h1);
        r.push(h2);
        let mut buf = [0xa5; 40];
        assert_eq!(r.emit(&mut buf), 32);
        assert_eq!(&buf[..4], &[0x14, 7, 0x12, 0xB7]);
        assert_eq!(
            &buf[4..16],
            &[0x20, 0, 2, 3, 0, 0, 0x48, 0x50, 0x80, 0, 0, 4]
        );
        assert_eq!(
            &buf[16..24],
            &[0x80, 0, 0, 0, 0, 0, 0, 0],
            "the newest hop first"
        );
        // rate 2 | time 0x123456 | bytes 0xABCDE | qlen 0x1FFFF
        let w: u64 = (2 << 61) | (0x123456 << 37) | (0xABCDE << 17) | 0x1FFFF;
        assert_eq!(&buf[24..32], &w.to_be_bytes());
        assert_eq!(&buf[32..], &[0xa5; 8]);
        let (back, len) = IntRepr::parse(&buf).unwrap();
        assert_eq!((back, len), (r, 32));
        assert_eq!(back.hops(), &[h1, h2]);
    }

    #[test]
    fn a_full_stack_sets_e_and_an_echo_takes_nothing() {
        let mut r = IntRepr::source(4791, 1, 1);
        r.push(IntHopRepr::default());
        r.push(IntHopRepr::default());
        assert!(r.exceeded && r.hops().len() == 1 && r.remaining == 0);
        let mut e = r.echo_of(4791);
        e.push(IntHopRepr::default());
        assert!(e.echo && e.hops().len() == 1);
        let mut buf = [0; 24];
        e.emit(&mut buf);
        assert_eq!(IntRepr::parse(&buf).unwrap().0, e);
    }

    #[test]
    fn errors_name_the_field() {
        let mut buf = [0; 24];
        IntRepr::source(4791, 5, 1).emit(&mut buf);
        assert_eq!(
            IntRepr::parse(&buf[..10]).unwrap_err().to_string(),
            "INT at offset 0: 16 bytes required, 10 present"
        );
        let mut bad = buf;
        bad[1] = 6;
        assert_eq!(
            IntRepr::parse(&bad).unwrap_err().to_string(),
            "INT at offset 1: field `shim length` is 6, 3 + 2 x hops"
        );
        bad = buf;
        bad[1] = 7;
        assert_eq!(
            IntRepr::parse(&bad[..20]).unwrap_err().to_string(),
            "INT at offset 0: 32 bytes required, 20 present"
        );
        bad = buf;
        bad[10] = 0;
        assert!(
            IntRepr::parse(&bad)
                .unwrap_err()
                .to_string()
                .contains("domain-specific ID")
        );
    }

    /// PINT's form over 0xa5: shim length 4, HopML 0, DS instruction
    /// 0x4000, the power big-endian and a zero half word; a switch's
    /// smaller power leaves it, a larger one replaces it; an echo keeps it.
    #[test]
    fn pint_emit_then_parse() {
        let mut r = IntRepr::pint_source(4791);
        r.raise_power(0x0123);
        r.raise_power(0x0100);
        r.push(IntHopRepr::default());
        assert_eq!((r.power, r.hops().len()), (0x0123, 0));
        let mut buf = [0xa5; 24];
        assert_eq!(r.emit(&mut buf), 20);
        assert_eq!(&buf[..4], &[0x14, 4, 0x12, 0xB7]);
        assert_eq!(
            &buf[4..20],
            &[
                0x20, 0, 0, 0, 0, 0, 0x48, 0x50, 0x40, 0, 0, 0, 0x01, 0x23, 0, 0
            ]
        );
        assert_eq!(&buf[20..], &[0xa5; 4]);
        assert_eq!(IntRepr::parse(&buf).unwrap(), (r, 20));
        let mut e = r.echo_of(4791);
        e.raise_power(0xFFFF);
        assert_eq!(e.power, 0x0123);
        e.emit(&mut buf);
        assert_eq!(buf[14], 0x80, "the echo flag");
        assert_eq!(IntRepr::parse(&buf).unwrap(), (e, 20));
        let mut bad = buf;
        bad[1] = 5;
        assert_eq!(
            IntRepr::parse(&bad).unwrap_err().to_string(),
            "INT at offset 1: field `shim length` is 5, 4 (PINT's power word)"
        );
        assert!(IntRepr::parse(&buf[..18]).is_err());
    }

    fn hop() -> impl Strategy<Value = IntHopRepr> {
        (0u8..8, 0u32..1 << 24, 0u32..1 << 20, 0u32..1 << 17).prop_map(
            |(rate_code, time, tx_bytes, qlen)| IntHopRepr {
                rate_code,
                time,
                tx_bytes,
                qlen,
            },
        )
    }

    proptest! {
        #[test]
        fn round_trips(
            hops in proptest::collection::vec(hop(), 0..=MAX_HOPS),
            port: u16, multi in 1u8.., echo: bool, spare in 0u8..4,
        ) {
            let mut r = IntRepr::source(port, hops.len() as u8 + spare, multi);
            for h in &hops {
                r.push(*h);
            }
            let r = if echo { r.echo_of(port) } else { r };
            let mut buf = vec![0xa5; r.buffer_len() + 3];
            let n = r.emit(&mut buf);
            prop_assert_eq!(n, IntRepr::HEADER_LEN + 8 * hops.len());
            prop_assert_eq!(IntRepr::parse(&buf).unwrap(), (r, n));
        }

        #[test]
        fn pint_round_trips(port: u16, power: u16, echo: bool) {
            let mut r = IntRepr::pint_source(port);
            r.raise_power(power);
            let r = if echo { r.echo_of(port) } else { r };
            let mut buf = vec![0xa5; r.buffer_len() + 3];
            let n = r.emit(&mut buf);
            prop_assert_eq!(n, 20);
            prop_assert_eq!(IntRepr::parse(&buf).unwrap(), (r, n));
        }
    }
}
