//! TCP, as far as a capture of perftest's out-of-band exchange needs it.
//!
//! ```text
//!  0                16               32
//!  +----------------+----------------+
//!  |  source port   |  dest port     |
//!  +----------------+----------------+
//!  |        sequence number          |
//!  +---------------------------------+
//!  |     acknowledgement number      |
//!  +----+---+-+--------+-------------+
//!  |Off |Rsv|N|CEUAPRSF|   window    |   Off = header length in 32-bit words
//!  +----+---+-+--------+-------------+
//!  |   checksum     | urgent pointer |
//!  +----------------+----------------+
//!  |  options (0..40 bytes)          |
//!  +---------------------------------+
//! ```
//!
//! The data offset follows from the options and the checksum is computed
//! by emit over the pseudo-header, the header and the payload, unless
//! [`TcpRepr::checksum_override`] keeps a captured one (a capture taken on
//! the sending host has the checksum its NIC would have filled in).

use core::net::IpAddr;

use crate::error::{Error, Layer, Result, need};
use crate::wire::checksum;
use crate::wire::options::Ipv4Options;

mod field {
    use core::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const SEQ: Range<usize> = 4..8;
    pub const ACK: Range<usize> = 8..12;
    pub const OFF_FLAGS: Range<usize> = 12..14;
    pub const WINDOW: Range<usize> = 14..16;
    pub const CHECKSUM: Range<usize> = 16..18;
    pub const URGENT: Range<usize> = 18..20;
    pub const OPTIONS: usize = 20;
}

pub const IP_PROTO_TCP: u8 = 6;

/// Options of a TCP header: the same container as IPv4's (at most 40
/// bytes, a multiple of 4; pad with NOP or EOL to get there).
pub type TcpOptions = Ipv4Options;

/// The flag bits of header bytes 12..14 below the data offset.
pub mod flags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    pub const NS: u16 = 0x100;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// The 12 bits below the data offset: 3 reserved, NS, CWR ... FIN
    /// ([`flags`]).
    pub flags: u16,
    pub window: u16,
    pub urgent: u16,
    pub options: TcpOptions,
    /// `None`: emit computes the checksum. `Some`: a captured checksum
    /// that differs from the computed one, kept for byte-exact re-emission.
    pub checksum_override: Option<u16>,
}

/// The checksum of a segment (`segment` with its checksum field as is)
/// between `src` and `dst`, with the field taken as zero.
fn segment_checksum(src: IpAddr, dst: IpAddr, segment: &[u8]) -> u16 {
    let len = segment.len() as u32;
    let mut sum = match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let s = checksum::add(0, &s.octets());
            let s = checksum::add(s, &d.octets());
            checksum::add(s, &[0, IP_PROTO_TCP, (len >> 8) as u8, len as u8])
        }
        (s, d) => {
            let v6 = |a: IpAddr| match a {
                IpAddr::V6(a) => a.octets(),
                IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
            };
            let s = checksum::add(0, &v6(s));
            let s = checksum::add(s, &v6(d));
            checksum::add(s, &len.to_be_bytes())
        }
    };
    if src.is_ipv6() {
        sum = checksum::add(sum, &[0, 0, 0, IP_PROTO_TCP]);
    }
    let sum = checksum::add(sum, &segment[..field::CHECKSUM.start]);
    checksum::finish(checksum::add(sum, &segment[field::URGENT.start..]))
}

impl TcpRepr {
    /// Header without options.
    pub const MIN_LEN: usize = 20;

    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag == flag
    }

    pub fn header_len(&self) -> usize {
        Self::MIN_LEN + self.options.as_slice().len()
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Decodes the header at the start of `segment`, the TCP header and
    /// payload between `src` and `dst`; returns it and the header length.
    /// The checksum is compared only when `complete` (the whole segment
    /// was captured); otherwise a captured checksum is kept as is.
    pub fn parse(
        segment: &[u8],
        src: IpAddr,
        dst: IpAddr,
        complete: bool,
    ) -> Result<(TcpRepr, usize)> {
        need(segment, Layer::Tcp, Self::MIN_LEN)?;
        let off_flags = u16::from_be_bytes([segment[12], segment[13]]);
        let header_len = usize::from(off_flags >> 12) * 4;
        if header_len < Self::MIN_LEN {
            return Err(Error::Invalid {
                layer: Layer::Tcp,
                offset: field::OFF_FLAGS.start,
                field: "data_offset",
                value: (off_flags >> 12).into(),
                expected: "expected at least 5",
            });
        }
        need(segment, Layer::Tcp, header_len)?;
        let be16 = |r: core::ops::Range<usize>| {
            u16::from_be_bytes([segment[r.start], segment[r.start + 1]])
        };
        let be32 = |r: core::ops::Range<usize>| {
            u32::from_be_bytes(segment[r].try_into().expect("4 bytes"))
        };
        let checksum = be16(field::CHECKSUM);
        let computed = complete.then(|| segment_checksum(src, dst, segment));
        Ok((
            TcpRepr {
                src_port: be16(field::SRC_PORT),
                dst_port: be16(field::DST_PORT),
                seq: be32(field::SEQ),
                ack: be32(field::ACK),
                flags: off_flags & 0x0FFF,
                window: be16(field::WINDOW),
                urgent: be16(field::URGENT),
                options: TcpOptions::new(&segment[field::OPTIONS..header_len])
                    .expect("a multiple of 4 up to 40"),
                checksum_override: (computed != Some(checksum)).then_some(checksum),
            },
            header_len,
        ))
    }

    /// Writes the header and `payload` into `buf` for a segment from `src`
    /// to `dst`; returns the bytes written.
    ///
    /// # Panics
    /// If `buf` is shorter than the header plus the payload.
    pub fn emit(&self, buf: &mut [u8], src: IpAddr, dst: IpAddr, payload: &[u8]) -> usize {
        let hl = self.header_len();
        let seg = &mut buf[..hl + payload.len()];
        seg[field::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        seg[field::DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        seg[field::SEQ].copy_from_slice(&self.seq.to_be_bytes());
        seg[field::ACK].copy_from_slice(&self.ack.to_be_bytes());
        let off_flags = ((hl / 4) as u16) << 12 | (self.flags & 0x0FFF);
        seg[field::OFF_FLAGS].copy_from_slice(&off_flags.to_be_bytes());
        seg[field::WINDOW].copy_from_slice(&self.window.to_be_bytes());
        seg[field::URGENT].copy_from_slice(&self.urgent.to_be_bytes());
        seg[field::OPTIONS..hl].copy_from_slice(self.options.as_slice());
        seg[hl..].copy_from_slice(payload);
        let sum = self
            .checksum_override
            .unwrap_or_else(|| segment_checksum(src, dst, seg));
        seg[field::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
        seg.len()
    }

    /// The flags set, by name in bit order: `SYN,ACK`, `FIN,ACK`, `none`.
    pub fn flags_text(&self) -> String {
        const NAMES: [&str; 8] = ["FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"];
        let set: Vec<&str> = (0..8)
            .filter(|i| self.flags & (1 << i) != 0)
            .map(|i| NAMES[i])
            .collect();
        if set.is_empty() {
            "none".to_string()
        } else {
            set.join(",")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv4Addr;
    use proptest::prelude::*;

    fn addrs() -> (IpAddr, IpAddr) {
        (
            IpAddr::V4(Ipv4Addr::new(192, 168, 0, 1)),
            IpAddr::V4(Ipv4Addr::new(192, 168, 0, 2)),
        )
    }

    /// A SYN with MSS 1460, SACK permitted, timestamps, NOP, window scale 7,
    /// checksum worked out by hand over the pseudo-header.
    const SYN: [u8; 40] = [
        0xc0, 0x00, 0x48, 0x53, 0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x02, 0xfa,
        0xf0, 0x00, 0x00, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x03, 0x07,
    ];

    fn syn() -> TcpRepr {
        TcpRepr {
            src_port: 0xc000,
            dst_port: 18515,
            seq: 1000,
            ack: 0,
            flags: flags::SYN,
            window: 64240,
            urgent: 0,
            options: TcpOptions::new(&SYN[20..]).unwrap(),
            checksum_override: None,
        }
    }

    #[test]
    fn emit_fills_every_byte_and_the_checksum_verifies() {
        let (s, d) = addrs();
        let mut buf = [0xa5; 40];
        assert_eq!(syn().emit(&mut buf, s, d, &[]), 40);
        assert_eq!(&buf[..16], &SYN[..16]);
        assert_eq!(&buf[18..], &SYN[18..]);
        // A correct checksum makes the sum over pseudo-header and segment 0xFFFF.
        let mut sum = checksum::add(0, &[192, 168, 0, 1, 192, 168, 0, 2, 0, 6, 0, 40]);
        sum = checksum::add(sum, &buf);
        assert_eq!(sum, 0xFFFF);
        let (r, hl) = TcpRepr::parse(&buf, s, d, true).unwrap();
        assert_eq!((r, hl), (syn(), 40));
        assert!(r.has(flags::SYN) && !r.has(flags::ACK));
        assert_eq!(r.flags_text(), "SYN");
    }

    #[test]
    fn data_offset_below_five_is_invalid() {
        let (s, d) = addrs();
        let mut b = [0u8; 20];
        b[12] = 0x40;
        let e = TcpRepr::parse(&b, s, d, true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "TCP at offset 12: field `data_offset` is 4, expected at least 5"
        );
    }

    proptest! {
        #[test]
        fn round_trip(sp in any::<u16>(), dp in any::<u16>(), seq in any::<u32>(), ack in any::<u32>(),
                      fl in 0u16..0x1000, win in any::<u16>(), urg in any::<u16>(),
                      words in 0usize..=10, bad in proptest::option::of(any::<u16>()),
                      payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let (s, d) = addrs();
            let opts = vec![1u8; words * 4];
            let mut r = TcpRepr { src_port: sp, dst_port: dp, seq, ack, flags: fl, window: win, urgent: urg,
                options: TcpOptions::new(&opts).unwrap(), checksum_override: None };
            let mut buf = vec![0xa5; r.header_len() + payload.len()];
            r.emit(&mut buf, s, d, &payload);
            let good = u16::from_be_bytes([buf[16], buf[17]]);
            r.checksum_override = bad.filter(|b| *b != good);
            r.emit(&mut buf, s, d, &payload);
            let (p, hl) = TcpRepr::parse(&buf, s, d, true).unwrap();
            prop_assert_eq!(p, r);
            prop_assert_eq!(&buf[hl..], &payload[..]);
        }
    }
}
