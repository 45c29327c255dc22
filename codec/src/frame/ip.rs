//! Layer 3: IPv4 and IPv6, read and written with etherparse.
//!
//! ```text
//!  IPv4: 20 bytes + 0..40 of options          IPv6: 40 bytes
//!  0        8        16                 31    0    4        12                  31
//!  +--------+--------+------------------+     +----+--------+--------------------+
//!  |Ver|IHL |DSCP|ECN|   total length   |     |Ver | TClass |     flow label     |
//!  +--------+--------+--+---------------+     +----+--------+----+-------+-------+
//!  | identification  |Fl|  frag offset  |     |  payload length  |NextHdr|HopLim |
//!  +--------+--------+--+---------------+     +------------------+-------+-------+
//!  |  TTL   | proto  | header checksum  |     |    source address (16 bytes)     |
//!  +--------+--------+------------------+     |  destination address (16 bytes)  |
//!  |  source address                    |     +----------------------------------+
//!  |  destination address               |
//!  |  options                           |      TClass = DSCP (6 bits) | ECN (2)
//!  +------------------------------------+      Fl = reserved | DF | MF
//! ```
//!
//! Lengths are not fields of the reprs: emit derives IPv4 total length and
//! IPv6 payload length from what follows, and the IPv4 header checksum too,
//! unless [`Ipv4Repr::checksum_override`] keeps a captured one. Parsing
//! splits the frame at the length the header declares, so Ethernet padding
//! and an FCS become the frame's trailer, and goes on to UDP only for
//! unfragmented datagrams (a later fragment has no UDP header).

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{
    IpDscp, IpEcn, IpFragOffset, IpNumber, Ipv4Header, Ipv4HeaderSlice, Ipv6FlowLabel, Ipv6Header,
    Ipv6HeaderSlice,
};

use super::ethernet::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use super::udp::parse_udp;
use super::{Frame, Net, ParseOptions, l4, split_declared, truncated};
use crate::error::{Error, Layer, Result, Warnings};
use crate::wire::checksum;
use crate::wire::icmpv4::IP_PROTO_ICMP;
use crate::wire::options::Ipv4Options;
use crate::wire::tcp::IP_PROTO_TCP;

pub const IP_PROTO_UDP: u8 = 17;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Repr {
    pub dscp: u8,
    pub ecn: u8,
    pub identification: u16,
    pub dont_fragment: bool,
    pub more_fragments: bool,
    /// In 8-byte units.
    pub fragment_offset: u16,
    pub ttl: u8,
    pub protocol: u8,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub options: Ipv4Options,
    /// `None`: emit computes the header checksum. `Some`: a captured
    /// checksum that differs from the computed one (checksum offload, a
    /// corrupted frame), kept so the frame re-emits byte for byte.
    pub checksum_override: Option<u16>,
}

impl Ipv4Repr {
    /// An IPv4/UDP header as rxe builds it: DF set, TTL 64, no options.
    pub fn udp(src: Ipv4Addr, dst: Ipv4Addr, dscp: u8, ecn: u8) -> Ipv4Repr {
        Ipv4Repr {
            dscp,
            ecn,
            identification: 0,
            dont_fragment: true,
            more_fragments: false,
            fragment_offset: 0,
            ttl: 64,
            protocol: IP_PROTO_UDP,
            src,
            dst,
            options: Ipv4Options::default(),
            checksum_override: None,
        }
    }

    pub fn header_len(&self) -> usize {
        20 + self.options.as_slice().len()
    }

    fn is_fragment(&self) -> bool {
        self.more_fragments || self.fragment_offset != 0
    }

    fn emit(&self, buf: &mut [u8], payload_len: usize) -> usize {
        let mut h = Ipv4Header {
            dscp: IpDscp::try_new(self.dscp & IpDscp::MAX_U8).unwrap(),
            ecn: IpEcn::try_new(self.ecn & 3).unwrap(),
            total_len: (self.header_len() + payload_len).min(usize::from(u16::MAX)) as u16,
            identification: self.identification,
            dont_fragment: self.dont_fragment,
            more_fragments: self.more_fragments,
            fragment_offset: IpFragOffset::try_new(self.fragment_offset & 0x1FFF).unwrap(),
            time_to_live: self.ttl,
            protocol: IpNumber(self.protocol),
            header_checksum: 0,
            source: self.src.octets(),
            destination: self.dst.octets(),
            options: etherparse::Ipv4Options::try_from(self.options.as_slice())
                .expect("options are a multiple of 4 up to 40"),
        };
        h.header_checksum = self
            .checksum_override
            .unwrap_or_else(|| h.calc_header_checksum());
        let bytes = h.to_bytes();
        buf[..bytes.len()].copy_from_slice(&bytes);
        bytes.len()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Repr {
    pub dscp: u8,
    pub ecn: u8,
    pub flow_label: u32,
    pub next_header: u8,
    pub hop_limit: u8,
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
}

impl Ipv6Repr {
    fn emit(&self, buf: &mut [u8], payload_len: usize) -> usize {
        let h = Ipv6Header {
            traffic_class: (self.dscp << 2) | (self.ecn & 3),
            flow_label: Ipv6FlowLabel::try_new(self.flow_label & 0xF_FFFF).unwrap(),
            payload_length: payload_len.min(usize::from(u16::MAX)) as u16,
            next_header: IpNumber(self.next_header),
            hop_limit: self.hop_limit,
            source: self.src.octets(),
            destination: self.dst.octets(),
        };
        buf[..Ipv6Header::LEN].copy_from_slice(&h.to_bytes());
        Ipv6Header::LEN
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpRepr {
    V4(Ipv4Repr),
    V6(Ipv6Repr),
}

impl IpRepr {
    pub fn dscp(&self) -> u8 {
        match self {
            IpRepr::V4(h) => h.dscp,
            IpRepr::V6(h) => h.dscp,
        }
    }

    pub fn ecn(&self) -> u8 {
        match self {
            IpRepr::V4(h) => h.ecn,
            IpRepr::V6(h) => h.ecn,
        }
    }

    /// Sets the ECN codepoint, as a switch does when it marks CE.
    pub fn set_ecn(&mut self, ecn: u8) {
        match self {
            IpRepr::V4(h) => h.ecn = ecn & 3,
            IpRepr::V6(h) => h.ecn = ecn & 3,
        }
    }

    pub fn src(&self) -> IpAddr {
        match self {
            IpRepr::V4(h) => IpAddr::V4(h.src),
            IpRepr::V6(h) => IpAddr::V6(h.src),
        }
    }

    pub fn dst(&self) -> IpAddr {
        match self {
            IpRepr::V4(h) => IpAddr::V4(h.dst),
            IpRepr::V6(h) => IpAddr::V6(h.dst),
        }
    }

    pub fn protocol(&self) -> u8 {
        match self {
            IpRepr::V4(h) => h.protocol,
            IpRepr::V6(h) => h.next_header,
        }
    }

    pub fn header_len(&self) -> usize {
        match self {
            IpRepr::V4(h) => h.header_len(),
            IpRepr::V6(_) => Ipv6Header::LEN,
        }
    }

    pub fn ethertype(&self) -> u16 {
        match self {
            IpRepr::V4(_) => ETHERTYPE_IPV4,
            IpRepr::V6(_) => ETHERTYPE_IPV6,
        }
    }

    /// The transport protocol whose header follows, if one does: not in a
    /// fragment (IPv6 fragments would announce a Fragment header instead).
    fn l4_protocol(&self) -> Option<u8> {
        match self {
            IpRepr::V4(h) => (!h.is_fragment()).then_some(h.protocol),
            IpRepr::V6(h) => Some(h.next_header),
        }
    }

    /// Writes the header for `payload_len` bytes of IP payload.
    pub(super) fn emit(&self, buf: &mut [u8], payload_len: usize) -> usize {
        match self {
            IpRepr::V4(r) => r.emit(buf, payload_len),
            IpRepr::V6(r) => r.emit(buf, payload_len),
        }
    }
}

/// The header checksum of `hdr` (options included) as it should be, to tell
/// a captured checksum emit would reproduce from one it must keep.
fn ipv4_checksum(hdr: &[u8]) -> u16 {
    checksum::finish(checksum::add(checksum::add(0, &hdr[..10]), &hdr[12..]))
}

/// The error for a header whose version nibble is not its own: the
/// EtherType promised one IP version and the bytes hold another.
fn bad_version(layer: Layer, offset: usize, version: u8, expected: &'static str) -> Error {
    Error::Invalid {
        layer,
        offset,
        field: "version",
        value: version.into(),
        expected,
    }
}

pub(super) fn parse_ipv4<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    off: usize,
    opts: &ParseOptions,
) -> Result<()> {
    use etherparse::err::ipv4::{HeaderError, HeaderSliceError};
    let h = Ipv4HeaderSlice::from_slice(&bytes[off..]).map_err(|e| match e {
        HeaderSliceError::Len(l) => truncated(Layer::Ipv4, off, &l),
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { version_number }) => {
            bad_version(Layer::Ipv4, off, version_number, "expected 4")
        }
        HeaderSliceError::Content(HeaderError::HeaderLengthSmallerThanHeader { ihl }) => {
            Error::Invalid {
                layer: Layer::Ipv4,
                offset: off,
                field: "ihl",
                value: ihl.into(),
                expected: "expected at least 5",
            }
        }
    })?;
    let raw = h.slice();
    // The reserved ("evil") flag bit has no place in the repr, so a header
    // with it set decodes but cannot re-emit.
    if raw[6] & 0x80 != 0 {
        f.warnings.insert(Warnings::IPV4_RESERVED_FLAG);
    }
    let checksum = h.header_checksum();
    let ip = Ipv4Repr {
        dscp: h.dcp().value(),
        ecn: h.ecn().value(),
        identification: h.identification(),
        dont_fragment: h.dont_fragment(),
        more_fragments: h.more_fragments(),
        fragment_offset: h.fragments_offset().value(),
        ttl: h.ttl(),
        protocol: h.protocol().0,
        src: h.source_addr(),
        dst: h.destination_addr(),
        options: Ipv4Options::new(h.options()).expect("etherparse bounds options"),
        checksum_override: (checksum != ipv4_checksum(raw)).then_some(checksum),
    };
    let total = usize::from(h.total_len());
    if total < raw.len() {
        return Err(Error::Invalid {
            layer: Layer::Ipv4,
            offset: off,
            field: "total_len",
            value: total as u64,
            expected: "smaller than the header itself",
        });
    }
    // A total length beyond the frame on the wire is no snaplen cut: the
    // header lies (tshark: "IPv4 total length exceeds packet length"). What
    // follows is still decoded as far as the bytes go, then the frame is
    // malformed at the IPv4 header.
    let exceeds = off + total > f.wire_len;
    if exceeds {
        f.warnings.insert(Warnings::IPV4_TOTAL_LENGTH_EXCEEDS);
    }
    let rest = parse_ip_payload(f, bytes, IpRepr::V4(ip), off, raw, total - raw.len(), opts);
    if exceeds {
        return Err(Error::Invalid {
            layer: Layer::Ipv4,
            offset: off,
            field: "total_len",
            value: total as u64,
            expected: "exceeds the packet length",
        });
    }
    rest
}

pub(super) fn parse_ipv6<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    off: usize,
    opts: &ParseOptions,
) -> Result<()> {
    use etherparse::err::ipv6::{HeaderError, HeaderSliceError};
    let h = Ipv6HeaderSlice::from_slice(&bytes[off..]).map_err(|e| match e {
        HeaderSliceError::Len(l) => truncated(Layer::Ipv6, off, &l),
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { version_number }) => {
            bad_version(Layer::Ipv6, off, version_number, "expected 6")
        }
    })?;
    let ip = Ipv6Repr {
        dscp: h.dscp().value(),
        ecn: h.ecn().value(),
        flow_label: h.flow_label().value(),
        next_header: h.next_header().0,
        hop_limit: h.hop_limit(),
        src: h.source_addr(),
        dst: h.destination_addr(),
    };
    let declared = usize::from(h.payload_length());
    parse_ip_payload(f, bytes, IpRepr::V6(ip), off, h.slice(), declared, opts)
}

/// What follows the IP header `raw` found at `off`: `declared` bytes of
/// payload as the header says, the rest of the frame as the trailer, then
/// UDP if the header announces it.
fn parse_ip_payload<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    ip: IpRepr,
    off: usize,
    raw: &'a [u8],
    declared: usize,
    opts: &ParseOptions,
) -> Result<()> {
    let l4 = off + raw.len();
    let (payload, trailer) = split_declared(bytes, l4, declared);
    f.trailer = trailer;
    f.net = Net::Ip {
        ip,
        udp: None,
        payload,
        declared_len: declared,
    };
    match (ip.l4_protocol(), ip) {
        (Some(IP_PROTO_UDP), _) => parse_udp(f, bytes, ip, raw, l4, declared, opts),
        (Some(IP_PROTO_TCP), _) => l4::parse_tcp(f, bytes, ip, l4, declared),
        (Some(IP_PROTO_ICMP), IpRepr::V4(_)) => l4::parse_icmpv4(f, bytes, ip, l4, declared),
        _ => Ok(()),
    }
}
