//! ICMPv4 (RFC 792), for the error a host stack sends back: a RoCEv2
//! packet reaching a RoCE v1-only NIC is plain UDP to port 4791 for the
//! kernel, which has no listener there and answers "port unreachable".
//!
//! ```text
//!  0        8        16               32
//!  +--------+--------+----------------+
//!  |  type  |  code  |    checksum    |   type 3 code 3: port unreachable
//!  +--------+--------+----------------+
//!  |     rest of header (unused: 0)   |   (next-hop MTU for code 4)
//!  +----------------------------------+
//!  | the offending datagram, quoted:  |   its IP header and at least 8 bytes;
//!  | IP header + as much as fits      |   Linux quotes up to 576 bytes in all
//!  +----------------------------------+
//! ```
//!
//! Linux (`net/ipv4/icmp.c`, `__icmp_send`) quotes as much of the offending
//! datagram as keeps the ICMP packet within 576 bytes: at most
//! [`LINUX_MAX_QUOTE`] bytes from its IP header on. The error's IP header
//! takes the TOS `(tos & IPTOS_TOS_MASK) | IPTOS_PREC_INTERNETCONTROL`
//! ([`linux_error_tos`]); its ICMP socket does not set DF
//! (`IP_PMTUDISC_DONT`) and uses the default TTL 64.

use core::net::Ipv4Addr;

use etherparse::Ipv4HeaderSlice;

use crate::error::{Layer, Result, need};
use crate::wire::checksum;

mod field {
    use core::ops::Range;
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: Range<usize> = 2..4;
    pub const REST: Range<usize> = 4..8;
}

pub const IP_PROTO_ICMP: u8 = 1;
pub const TYPE_DEST_UNREACHABLE: u8 = 3;
pub const CODE_PORT_UNREACHABLE: u8 = 3;
/// 576 bytes less the 20-byte IP header and the 8-byte ICMP header.
pub const LINUX_MAX_QUOTE: usize = 576 - 20 - 8;

/// The TOS byte Linux gives an ICMP error about a datagram of TOS `tos`.
pub fn linux_error_tos(tos: u8) -> u8 {
    const IPTOS_TOS_MASK: u8 = 0x1E;
    const IPTOS_PREC_INTERNETCONTROL: u8 = 0xC0;
    (tos & IPTOS_TOS_MASK) | IPTOS_PREC_INTERNETCONTROL
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Icmpv4Repr {
    pub icmp_type: u8,
    pub code: u8,
    /// Bytes 4..8: unused (0) for destination unreachable, the next-hop
    /// MTU in the low 16 bits for "fragmentation needed", the identifier
    /// and sequence of an echo.
    pub rest: u32,
    /// `None`: emit computes the checksum; `Some`: a captured one that
    /// differs, kept for byte-exact re-emission.
    pub checksum_override: Option<u16>,
}

/// What an ICMP error quotes of the datagram that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuotedIpv4 {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub protocol: u8,
    pub ttl: u8,
    pub identification: u16,
    /// The total length the quoted header gives the original datagram.
    pub total_len: u16,
    /// The ports of a quoted UDP or TCP header (its first 4 bytes).
    pub ports: Option<(u16, u16)>,
    /// Bytes quoted after the IP header.
    pub quoted_payload_len: usize,
}

impl Icmpv4Repr {
    pub const LEN: usize = 8;

    /// Port unreachable, as a host sends it for a UDP datagram no socket
    /// listens for.
    pub fn port_unreachable() -> Icmpv4Repr {
        Icmpv4Repr {
            icmp_type: TYPE_DEST_UNREACHABLE,
            code: CODE_PORT_UNREACHABLE,
            ..Icmpv4Repr::default()
        }
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    /// Decodes the header of `message` (header and data); the checksum is
    /// compared only when `complete` (the whole message was captured).
    pub fn parse(message: &[u8], complete: bool) -> Result<Icmpv4Repr> {
        need(message, Layer::Icmpv4, Self::LEN)?;
        let sum = u16::from_be_bytes([message[2], message[3]]);
        let computed = complete.then(|| message_checksum(message));
        Ok(Icmpv4Repr {
            icmp_type: message[field::TYPE],
            code: message[field::CODE],
            rest: u32::from_be_bytes(message[field::REST].try_into().expect("4 bytes")),
            checksum_override: (computed != Some(sum)).then_some(sum),
        })
    }

    /// Writes the header and `data` into `buf`; returns the bytes written.
    ///
    /// # Panics
    /// If `buf` is shorter than 8 bytes plus the data.
    pub fn emit(&self, buf: &mut [u8], data: &[u8]) -> usize {
        let msg = &mut buf[..Self::LEN + data.len()];
        msg[field::TYPE] = self.icmp_type;
        msg[field::CODE] = self.code;
        msg[field::REST].copy_from_slice(&self.rest.to_be_bytes());
        msg[Self::LEN..].copy_from_slice(data);
        let sum = self
            .checksum_override
            .unwrap_or_else(|| message_checksum(msg));
        msg[field::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
        msg.len()
    }

    /// Whether the type is an error that quotes a datagram (destination
    /// unreachable, source quench, redirect, time exceeded, parameter problem).
    pub fn is_error(&self) -> bool {
        matches!(self.icmp_type, 3 | 4 | 5 | 11 | 12)
    }

    /// The quoted datagram of an error message, from its data.
    pub fn quoted(&self, data: &[u8]) -> Option<QuotedIpv4> {
        if !self.is_error() {
            return None;
        }
        let h = Ipv4HeaderSlice::from_slice(data).ok()?;
        let after = &data[h.slice().len()..];
        let ports = matches!(h.protocol().0, 6 | 17)
            .then(|| after.get(..4))
            .flatten()
            .map(|p| {
                (
                    u16::from_be_bytes([p[0], p[1]]),
                    u16::from_be_bytes([p[2], p[3]]),
                )
            });
        Some(QuotedIpv4 {
            src: h.source_addr(),
            dst: h.destination_addr(),
            protocol: h.protocol().0,
            ttl: h.ttl(),
            identification: h.identification(),
            total_len: h.total_len(),
            ports,
            quoted_payload_len: after.len(),
        })
    }
}

/// The checksum `message` should carry (its checksum field taken as zero).
fn message_checksum(message: &[u8]) -> u16 {
    let sum = checksum::add(0, &message[..field::CHECKSUM.start]);
    checksum::finish(checksum::add(sum, &message[field::REST.start..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Port unreachable quoting a 20-byte IPv4 header of a UDP datagram
    /// 10.0.0.1:49152 -> 10.0.0.2:4791 and its UDP header.
    const QUOTE: [u8; 28] = [
        0x45, 0x02, 0x00, 0x3c, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0xa9, 10, 0, 0, 1, 10, 0,
        0, 2, 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
    ];

    #[test]
    fn port_unreachable_literal_bytes() {
        let mut buf = [0xa5; 36];
        assert_eq!(Icmpv4Repr::port_unreachable().emit(&mut buf, &QUOTE), 36);
        assert_eq!(&buf[..2], &[3, 3]);
        assert_eq!(&buf[4..8], &[0, 0, 0, 0]);
        assert_eq!(&buf[8..], &QUOTE);
        // Ones'-complement sum over a message with a correct checksum is 0xFFFF.
        assert_eq!(checksum::add(0, &buf), 0xFFFF);
        let r = Icmpv4Repr::parse(&buf, true).unwrap();
        assert_eq!(r, Icmpv4Repr::port_unreachable());
        let q = r.quoted(&buf[8..]).unwrap();
        assert_eq!(q.src, Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(q.dst, Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!((q.protocol, q.total_len), (17, 60));
        assert_eq!(q.ports, Some((49152, 4791)));
        assert_eq!(q.quoted_payload_len, 8);
    }

    #[test]
    fn linux_tos_of_a_rocev2_error() {
        // DSCP 26, ECT(0): 0x6a -> precedence 6 with the TOS bits kept.
        assert_eq!(linux_error_tos(0x6a), 0xca);
        assert_eq!(linux_error_tos(0x00), 0xc0);
    }

    #[test]
    fn short_message_names_the_layer() {
        let e = Icmpv4Repr::parse(&[3, 3, 0], true).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ICMP at offset 0: 8 bytes required, 3 present"
        );
    }

    proptest! {
        #[test]
        fn round_trip(t in any::<u8>(), c in any::<u8>(), rest in any::<u32>(),
                      bad in proptest::option::of(any::<u16>()),
                      data in proptest::collection::vec(any::<u8>(), 0..100)) {
            let mut r = Icmpv4Repr { icmp_type: t, code: c, rest, checksum_override: None };
            let mut buf = vec![0xa5; 8 + data.len()];
            r.emit(&mut buf, &data);
            let good = u16::from_be_bytes([buf[2], buf[3]]);
            r.checksum_override = bad.filter(|b| *b != good);
            r.emit(&mut buf, &data);
            prop_assert_eq!(Icmpv4Repr::parse(&buf, true).unwrap(), r);
        }
    }
}
