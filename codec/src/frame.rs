//! Whole Ethernet frames, from the MAC header to the ICRC.
//!
//! ```text
//!  Ethernet ─┬─ 802.1Q (0..2 tags) ─┬─ IPv4 / IPv6 ── UDP ── dport ∈ RoCE ports ── IB packet   RoCEv2
//!            │                      ├─ 0x8915 ── GRH ── IB packet                            RoCE v1
//!            │                      ├─ 0x8808 ── PAUSE / PFC                                  MAC control
//!            │                      └─ anything else: opaque
//! ```
//!
//! Two directions share one set of types:
//! * [`FrameRepr`] is a frame as plain values. The simulator builds them and
//!   [`FrameRepr::emit`] writes the bytes, with lengths, IPv4 checksum and
//!   ICRC computed.
//! * [`Frame`] is what [`Frame::parse`] (strict) or [`Frame::parse_lax`]
//!   (snaplen-truncated captures) found in bytes. It borrows the payload and
//!   converts to a `FrameRepr` with [`Frame::to_repr`] when it is complete,
//!   so that `emit(parse(bytes)) == bytes`.
//!
//! Ethernet, 802.1Q, IPv4, IPv6 and UDP are read and written with etherparse.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{
    EtherType, Ethernet2Header, IpDscp, IpEcn, IpFragOffset, IpNumber, Ipv4Header, Ipv4HeaderSlice,
    Ipv6FlowLabel, Ipv6Header, Ipv6HeaderSlice, SingleVlanHeader, SingleVlanHeaderSlice, UdpHeader,
    UdpHeaderSlice, VlanId, VlanPcp,
};

use crate::error::{Error, Layer, Result, Warnings};
use crate::icrc;
use crate::wire::grh::{GrhRepr, NXTHDR_IBA};
use crate::wire::ib::{self, IbPacket, IbRepr};
use crate::wire::mac_control::{ETHERTYPE_MAC_CONTROL, MacControlRepr};

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// RoCE v1 (`ETH_P_IBOE`).
pub const ETHERTYPE_ROCE_V1: u16 = 0x8915;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_QINQ: u16 = 0x88A8;
const ETHERTYPE_QINQ_OLD: u16 = 0x9100;
pub const IP_PROTO_UDP: u8 = 17;
const ETH_LEN: usize = 14;
const VLAN_LEN: usize = 4;
const UDP_LEN: usize = 8;

/// The UDP destination ports decoded as RoCEv2 (4791 unless configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSet {
    ports: [u16; PortSet::MAX],
    len: u8,
}

impl PortSet {
    pub const MAX: usize = 8;

    /// A set of up to [`PortSet::MAX`] ports; `None` if there are more.
    pub fn new(ports: &[u16]) -> Option<PortSet> {
        if ports.len() > Self::MAX {
            return None;
        }
        let mut s = PortSet {
            ports: [0; Self::MAX],
            len: ports.len() as u8,
        };
        s.ports[..ports.len()].copy_from_slice(ports);
        Some(s)
    }

    pub fn contains(&self, port: u16) -> bool {
        self.ports[..self.len as usize].contains(&port)
    }

    pub fn as_slice(&self) -> &[u16] {
        &self.ports[..self.len as usize]
    }
}

impl Default for PortSet {
    fn default() -> Self {
        PortSet::new(&[crate::hash::ROCE_V2_UDP_DPORT]).unwrap()
    }
}

/// How to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    pub roce_v2_ports: PortSet,
    /// Compute and compare the ICRC of every complete RoCE packet.
    pub verify_icrc: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            roce_v2_ports: PortSet::default(),
            verify_icrc: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EthRepr {
    pub dst: [u8; 6],
    pub src: [u8; 6],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VlanTag {
    /// The TPID that announced this tag (0x8100, 0x88A8 or 0x9100).
    pub tpid: u16,
    pub pcp: u8,
    pub dei: bool,
    pub vid: u16,
}

impl VlanTag {
    /// A customer tag (TPID 0x8100).
    pub fn dot1q(vid: u16, pcp: u8) -> VlanTag {
        VlanTag {
            tpid: ETHERTYPE_VLAN,
            pcp,
            dei: false,
            vid,
        }
    }

    /// The 16-bit TCI as it appears on the wire.
    pub fn tci(&self) -> u16 {
        (u16::from(self.pcp & 7) << 13) | (u16::from(self.dei) << 12) | (self.vid & 0x0FFF)
    }
}

/// Zero, one or two 802.1Q tags, outermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Vlans {
    tags: [VlanTag; 2],
    len: u8,
}

impl Vlans {
    pub const MAX: usize = 2;

    pub fn none() -> Vlans {
        Vlans::default()
    }

    pub fn one(tag: VlanTag) -> Vlans {
        Vlans {
            tags: [tag, VlanTag::default()],
            len: 1,
        }
    }

    pub fn two(outer: VlanTag, inner: VlanTag) -> Vlans {
        Vlans {
            tags: [outer, inner],
            len: 2,
        }
    }

    pub fn as_slice(&self) -> &[VlanTag] {
        &self.tags[..self.len as usize]
    }

    pub fn outer(&self) -> Option<&VlanTag> {
        self.as_slice().first()
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn push(&mut self, tag: VlanTag) {
        self.tags[self.len as usize] = tag;
        self.len += 1;
    }
}

/// IPv4 options, at most 40 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Options {
    bytes: [u8; 40],
    len: u8,
}

impl Default for Ipv4Options {
    fn default() -> Self {
        Ipv4Options {
            bytes: [0; 40],
            len: 0,
        }
    }
}

impl Ipv4Options {
    /// Options of `bytes`; `None` unless the length is a multiple of 4 up to 40.
    pub fn new(bytes: &[u8]) -> Option<Ipv4Options> {
        if bytes.len() > 40 || bytes.len() % 4 != 0 {
            return None;
        }
        let mut o = Ipv4Options {
            bytes: [0; 40],
            len: bytes.len() as u8,
        };
        o.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(o)
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

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
        20 + self.options.len as usize
    }

    fn is_fragment(&self) -> bool {
        self.more_fragments || self.fragment_offset != 0
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

    /// Writes the header for `payload_len` bytes of IP payload.
    fn emit(&self, buf: &mut [u8], payload_len: usize) -> usize {
        match self {
            IpRepr::V4(r) => {
                let mut h = Ipv4Header {
                    dscp: IpDscp::try_new(r.dscp & IpDscp::MAX_U8).unwrap(),
                    ecn: IpEcn::try_new(r.ecn & 3).unwrap(),
                    total_len: (r.header_len() + payload_len).min(usize::from(u16::MAX)) as u16,
                    identification: r.identification,
                    dont_fragment: r.dont_fragment,
                    more_fragments: r.more_fragments,
                    fragment_offset: IpFragOffset::try_new(r.fragment_offset & 0x1FFF).unwrap(),
                    time_to_live: r.ttl,
                    protocol: IpNumber(r.protocol),
                    header_checksum: 0,
                    source: r.src.octets(),
                    destination: r.dst.octets(),
                    options: etherparse::Ipv4Options::try_from(r.options.as_slice())
                        .expect("options are a multiple of 4 up to 40"),
                };
                h.header_checksum = r
                    .checksum_override
                    .unwrap_or_else(|| h.calc_header_checksum());
                let bytes = h.to_bytes();
                buf[..bytes.len()].copy_from_slice(&bytes);
                bytes.len()
            }
            IpRepr::V6(r) => {
                let h = Ipv6Header {
                    traffic_class: (r.dscp << 2) | (r.ecn & 3),
                    flow_label: Ipv6FlowLabel::try_new(r.flow_label & 0xF_FFFF).unwrap(),
                    payload_length: payload_len.min(usize::from(u16::MAX)) as u16,
                    next_header: IpNumber(r.next_header),
                    hop_limit: r.hop_limit,
                    source: r.src.octets(),
                    destination: r.dst.octets(),
                };
                buf[..Ipv6Header::LEN].copy_from_slice(&h.to_bytes());
                Ipv6Header::LEN
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    /// Sent as is. RoCE NICs send 0 (no checksum); the ICRC protects the packet.
    pub checksum: u16,
}

/// What follows the Ethernet header (and tags) of a frame, as values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetRepr {
    RoceV2 {
        ip: IpRepr,
        udp: UdpRepr,
        ib: IbRepr,
    },
    RoceV1 {
        grh: GrhRepr,
        ib: IbRepr,
    },
    MacControl(MacControlRepr),
    /// IP that is not RoCEv2; the bytes after the last header are opaque.
    Ip {
        ip: IpRepr,
        udp: Option<UdpRepr>,
    },
    /// Any other EtherType; the body is opaque.
    Other {
        ethertype: u16,
    },
}

/// A whole frame as values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameRepr {
    pub eth: EthRepr,
    pub vlans: Vlans,
    pub net: NetRepr,
}

impl FrameRepr {
    /// The EtherType after the tags.
    pub fn ethertype(&self) -> u16 {
        match &self.net {
            NetRepr::RoceV2 { ip, .. } | NetRepr::Ip { ip, .. } => ip.ethertype(),
            NetRepr::RoceV1 { .. } => ETHERTYPE_ROCE_V1,
            NetRepr::MacControl(_) => ETHERTYPE_MAC_CONTROL,
            NetRepr::Other { ethertype } => *ethertype,
        }
    }

    fn l2_len(&self) -> usize {
        ETH_LEN + VLAN_LEN * self.vlans.len()
    }

    /// Frame length in bytes (no FCS). `opaque_len` is the length of the
    /// opaque body of `Ip` and `Other` frames and is ignored otherwise.
    pub fn buffer_len(&self, opaque_len: usize) -> usize {
        self.l2_len()
            + match &self.net {
                NetRepr::RoceV2 { ip, ib, .. } => ip.header_len() + UDP_LEN + ib.buffer_len(),
                NetRepr::RoceV1 { ib, .. } => GrhRepr::LEN + ib.buffer_len(),
                NetRepr::MacControl(m) => m.buffer_len(),
                NetRepr::Ip { ip, udp } => {
                    ip.header_len() + if udp.is_some() { UDP_LEN } else { 0 } + opaque_len
                }
                NetRepr::Other { .. } => opaque_len,
            }
    }

    /// Writes the frame into `buf` and returns its length.
    ///
    /// `payload` is the IB payload of RoCE frames (only the first
    /// `payload_len` bytes are used, so a simulator can pass one shared
    /// buffer of zeros) or the opaque body of `Ip`/`Other` frames. Lengths,
    /// the IPv4 header checksum and the ICRC are computed here.
    ///
    /// # Panics
    /// If `buf` is shorter than [`FrameRepr::buffer_len`], or a RoCE
    /// `payload` shorter than the IB packet's `payload_len`.
    pub fn emit(&self, buf: &mut [u8], payload: &[u8]) -> usize {
        let len = self.buffer_len(payload.len());
        let buf = &mut buf[..len];
        let eth = Ethernet2Header {
            destination: self.eth.dst,
            source: self.eth.src,
            ether_type: EtherType(match self.vlans.outer() {
                Some(t) => t.tpid,
                None => self.ethertype(),
            }),
        };
        buf[..ETH_LEN].copy_from_slice(&eth.to_bytes());
        let mut off = ETH_LEN;
        let tags = self.vlans.as_slice();
        for (i, t) in tags.iter().enumerate() {
            let next = tags.get(i + 1).map_or(self.ethertype(), |n| n.tpid);
            let v = SingleVlanHeader {
                pcp: VlanPcp::try_new(t.pcp & 7).unwrap(),
                drop_eligible_indicator: t.dei,
                vlan_id: VlanId::try_new(t.vid & 0x0FFF).unwrap(),
                ether_type: EtherType(next),
            };
            buf[off..off + VLAN_LEN].copy_from_slice(&v.to_bytes());
            off += VLAN_LEN;
        }
        match &self.net {
            NetRepr::RoceV2 { ip, udp, ib } => {
                let ip_start = off;
                let ib_len = ib.buffer_len();
                off += ip.emit(&mut buf[off..], UDP_LEN + ib_len);
                let udp_start = off;
                off += emit_udp(&mut buf[off..], udp, ib_len);
                let ib_start = off;
                let icrc_at = ib_start + ib.emit_without_icrc(&mut buf[ib_start..], payload);
                let (head, tail) = buf.split_at_mut(icrc_at);
                let ipb = &head[ip_start..udp_start];
                let udpb = &head[udp_start..ib_start];
                let crc = match ip {
                    IpRepr::V4(_) => icrc::rocev2_ipv4(ipb, udpb, &head[ib_start..]),
                    IpRepr::V6(_) => icrc::rocev2_ipv6(ipb, udpb, &head[ib_start..]),
                };
                tail[..4].copy_from_slice(&crc);
            }
            NetRepr::RoceV1 { grh, ib } => {
                grh.emit(&mut buf[off..], ib.buffer_len() as u16);
                let grh_start = off;
                off += GrhRepr::LEN;
                let icrc_at = off + ib.emit_without_icrc(&mut buf[off..], payload);
                let (head, tail) = buf.split_at_mut(icrc_at);
                let crc = icrc::rocev1(&head[grh_start..off], &head[off..]);
                tail[..4].copy_from_slice(&crc);
            }
            NetRepr::MacControl(m) => m.emit(&mut buf[off..]),
            NetRepr::Ip { ip, udp } => {
                let udp_len = if udp.is_some() { UDP_LEN } else { 0 };
                off += ip.emit(&mut buf[off..], udp_len + payload.len());
                if let Some(u) = udp {
                    off += emit_udp(&mut buf[off..], u, payload.len());
                }
                buf[off..].copy_from_slice(payload);
            }
            NetRepr::Other { .. } => buf[off..].copy_from_slice(payload),
        }
        len
    }

    /// [`FrameRepr::emit`] into a new vector.
    pub fn to_vec(&self, payload: &[u8]) -> Vec<u8> {
        let mut v = vec![0; self.buffer_len(payload.len())];
        self.emit(&mut v, payload);
        v
    }
}

fn emit_udp(buf: &mut [u8], u: &UdpRepr, payload_len: usize) -> usize {
    let h = UdpHeader {
        source_port: u.src_port,
        destination_port: u.dst_port,
        length: (UDP_LEN + payload_len).min(usize::from(u16::MAX)) as u16,
        checksum: u.checksum,
    };
    buf[..UDP_LEN].copy_from_slice(&h.to_bytes());
    UDP_LEN
}

/// What a frame turned out to be, as `roce-pcap dissect` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    RoceV2,
    RoceV1,
    Pfc,
    Pause8023x,
    Other,
    /// Decoding stopped on a bad field or a length the frame itself contradicts.
    Malformed,
    /// Decoding stopped where the capture's snaplen cut the frame.
    Truncated,
}

impl FrameKind {
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::RoceV2 => "rocev2",
            FrameKind::RoceV1 => "rocev1",
            FrameKind::Pfc => "pfc",
            FrameKind::Pause8023x => "pause8023x",
            FrameKind::Other => "other",
            FrameKind::Malformed => "malformed",
            FrameKind::Truncated => "truncated",
        }
    }
}

/// The network layer of a decoded frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net<'a> {
    /// `ib` is `None` when decoding stopped before the BTH was complete.
    RoceV2 {
        ip: IpRepr,
        udp: UdpRepr,
        ib: Option<IbPacket<'a>>,
    },
    RoceV1 {
        grh: GrhRepr,
        ib: Option<IbPacket<'a>>,
    },
    MacControl(MacControlRepr),
    Ip {
        ip: IpRepr,
        udp: Option<UdpRepr>,
        /// The captured bytes after the last header.
        payload: &'a [u8],
        /// The length the IP/UDP length fields give those bytes.
        declared_len: usize,
    },
    Other {
        payload: &'a [u8],
    },
    /// Decoding stopped before the network layer was identified.
    Undecoded,
}

/// A frame decoded from bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    pub eth: EthRepr,
    pub vlans: Vlans,
    /// The EtherType after the tags.
    pub ethertype: u16,
    pub net: Net<'a>,
    /// Bytes after the end the headers declare: Ethernet padding, an FCS.
    pub trailer: &'a [u8],
    /// The error that stopped decoding; `None` when the frame decoded fully.
    pub stop: Option<Error>,
    pub warnings: Warnings,
    /// Bytes captured and bytes on the wire (they differ under a snaplen).
    pub captured_len: usize,
    pub wire_len: usize,
}

impl<'a> Frame<'a> {
    /// Decodes a complete frame; any problem is an error.
    pub fn parse(bytes: &'a [u8], opts: &ParseOptions) -> Result<Frame<'a>> {
        let f = Frame::parse_lax(bytes, bytes.len(), opts)?;
        match f.stop {
            Some(e) => Err(e),
            None => Ok(f),
        }
    }

    /// Decodes as much as `bytes` holds of a frame that was `wire_len`
    /// bytes long on the wire. Fails only when not even the Ethernet
    /// header is there; otherwise [`Frame::stop`] says why decoding ended.
    pub fn parse_lax(bytes: &'a [u8], wire_len: usize, opts: &ParseOptions) -> Result<Frame<'a>> {
        if bytes.len() < ETH_LEN {
            return Err(Error::Truncated {
                layer: Layer::Ethernet,
                offset: 0,
                required: ETH_LEN,
                present: bytes.len(),
            });
        }
        let eth = EthRepr {
            dst: bytes[0..6].try_into().unwrap(),
            src: bytes[6..12].try_into().unwrap(),
        };
        let ethertype = u16::from_be_bytes([bytes[12], bytes[13]]);
        Ok(Frame::parse_after_l2(
            eth, ethertype, bytes, ETH_LEN, wire_len, opts,
        ))
    }

    /// Decodes from the EtherType on, for link layers other than Ethernet
    /// (Linux cooked captures): `bytes[l3_offset..]` follows a header that
    /// announced `ethertype`, and `eth` holds whatever addresses it gave.
    pub fn parse_after_l2(
        eth: EthRepr,
        ethertype: u16,
        bytes: &'a [u8],
        l3_offset: usize,
        wire_len: usize,
        opts: &ParseOptions,
    ) -> Frame<'a> {
        let mut f = Frame {
            eth,
            vlans: Vlans::none(),
            ethertype,
            net: Net::Undecoded,
            trailer: &[],
            stop: None,
            warnings: Warnings::empty(),
            captured_len: bytes.len(),
            wire_len: wire_len.max(bytes.len()),
        };
        let mut off = l3_offset;
        while matches!(
            f.ethertype,
            ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD
        ) && f.vlans.len() < Vlans::MAX
        {
            match SingleVlanHeaderSlice::from_slice(&bytes[off..]) {
                Ok(v) => {
                    f.vlans.push(VlanTag {
                        tpid: f.ethertype,
                        pcp: v.priority_code_point().value(),
                        dei: v.drop_eligible_indicator(),
                        vid: v.vlan_identifier().value(),
                    });
                    f.ethertype = v.ether_type().0;
                    off += VLAN_LEN;
                }
                Err(e) => {
                    f.stop = Some(Error::Truncated {
                        layer: Layer::Vlan,
                        offset: off,
                        required: e.required_len,
                        present: e.len,
                    });
                    return f;
                }
            }
        }
        let result = match f.ethertype {
            ETHERTYPE_IPV4 => parse_ipv4(&mut f, bytes, off, opts),
            ETHERTYPE_IPV6 => parse_ipv6(&mut f, bytes, off, opts),
            ETHERTYPE_ROCE_V1 => parse_rocev1(&mut f, bytes, off, opts),
            ETHERTYPE_MAC_CONTROL => parse_mac_control(&mut f, bytes, off),
            _ => {
                f.net = Net::Other {
                    payload: &bytes[off..],
                };
                Ok(())
            }
        };
        if let Err(e) = result {
            f.stop = Some(e);
        }
        f
    }

    pub fn kind(&self) -> FrameKind {
        if let Some(e) = &self.stop {
            return if e.is_truncation() && self.captured_len < self.wire_len {
                FrameKind::Truncated
            } else {
                FrameKind::Malformed
            };
        }
        match &self.net {
            Net::RoceV2 { .. } => FrameKind::RoceV2,
            Net::RoceV1 { .. } => FrameKind::RoceV1,
            Net::MacControl(MacControlRepr::Pfc { .. }) => FrameKind::Pfc,
            Net::MacControl(MacControlRepr::Pause { .. }) => FrameKind::Pause8023x,
            _ => FrameKind::Other,
        }
    }

    /// The IB packet of a RoCE frame, complete or not.
    pub fn ib(&self) -> Option<&IbPacket<'a>> {
        match &self.net {
            Net::RoceV2 { ib, .. } | Net::RoceV1 { ib, .. } => ib.as_ref(),
            _ => None,
        }
    }

    pub fn ip(&self) -> Option<&IpRepr> {
        match &self.net {
            Net::RoceV2 { ip, .. } | Net::Ip { ip, .. } => Some(ip),
            _ => None,
        }
    }

    pub fn udp(&self) -> Option<&UdpRepr> {
        match &self.net {
            Net::RoceV2 { udp, .. } => Some(udp),
            Net::Ip { udp, .. } => udp.as_ref(),
            _ => None,
        }
    }

    /// The frame as values plus the payload bytes `emit` needs, if it was
    /// decoded completely: `repr.emit(payload) ++ trailer == bytes`.
    pub fn to_repr(&self) -> Option<(FrameRepr, &'a [u8])> {
        if self.stop.is_some()
            || self.warnings.contains(Warnings::IPV4_RESERVED_FLAG)
            || self.warnings.contains(Warnings::UDP_LENGTH_MISMATCH)
        {
            return None;
        }
        let (net, payload) = match self.net {
            Net::RoceV2 { ip, udp, ib } => {
                let ib = ib?;
                (
                    NetRepr::RoceV2 {
                        ip,
                        udp,
                        ib: ib.repr()?,
                    },
                    ib.payload,
                )
            }
            Net::RoceV1 { grh, ib } => {
                let ib = ib?;
                (
                    NetRepr::RoceV1 {
                        grh,
                        ib: ib.repr()?,
                    },
                    ib.payload,
                )
            }
            Net::MacControl(m) => {
                // The body is re-emitted padded to 46 bytes; a capture that
                // lost the padding would not come back byte for byte.
                let l2 = ETH_LEN + VLAN_LEN * self.vlans.len();
                if self.captured_len < l2 + MacControlRepr::LEN
                    || self.warnings.contains(Warnings::MAC_CONTROL_PAD_NONZERO)
                {
                    return None;
                }
                (NetRepr::MacControl(m), &[][..])
            }
            Net::Ip {
                ip,
                udp,
                payload,
                declared_len,
            } => {
                if payload.len() != declared_len {
                    return None;
                }
                (NetRepr::Ip { ip, udp }, payload)
            }
            Net::Other { payload } => {
                if self.captured_len < self.wire_len {
                    return None;
                }
                (
                    NetRepr::Other {
                        ethertype: self.ethertype,
                    },
                    payload,
                )
            }
            Net::Undecoded => return None,
        };
        Some((
            FrameRepr {
                eth: self.eth,
                vlans: self.vlans,
                net,
            },
            payload,
        ))
    }
}

fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = hdr
        .chunks_exact(2)
        .enumerate()
        .filter(|(i, _)| *i != 5)
        .map(|(_, w)| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Splits the captured IP payload at the length the header declares.
/// Returns (captured payload, trailer).
fn split_declared(bytes: &[u8], start: usize, declared: usize) -> (&[u8], &[u8]) {
    let end = start + declared;
    if bytes.len() >= end {
        (&bytes[start..end], &bytes[end..])
    } else {
        (&bytes[start.min(bytes.len())..], &[])
    }
}

fn parse_ipv4<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    off: usize,
    opts: &ParseOptions,
) -> Result<()> {
    use etherparse::err::ipv4::{HeaderError, HeaderSliceError};
    let h = Ipv4HeaderSlice::from_slice(&bytes[off..]).map_err(|e| match e {
        HeaderSliceError::Len(l) => Error::Truncated {
            layer: Layer::Ipv4,
            offset: off,
            required: l.required_len,
            present: l.len,
        },
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { version_number }) => {
            Error::Invalid {
                layer: Layer::Ipv4,
                offset: off,
                field: "version",
                value: version_number.into(),
                expected: "expected 4",
            }
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
    let l4 = off + raw.len();
    let declared = total - raw.len();
    let (payload, trailer) = split_declared(bytes, l4, declared);
    f.trailer = trailer;
    f.net = Net::Ip {
        ip: IpRepr::V4(ip),
        udp: None,
        payload,
        declared_len: declared,
    };
    if ip.protocol != IP_PROTO_UDP || ip.is_fragment() {
        return Ok(());
    }
    parse_udp(f, bytes, IpRepr::V4(ip), raw, l4, declared, opts)
}

fn parse_ipv6<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    off: usize,
    opts: &ParseOptions,
) -> Result<()> {
    use etherparse::err::ipv6::{HeaderError, HeaderSliceError};
    let h = Ipv6HeaderSlice::from_slice(&bytes[off..]).map_err(|e| match e {
        HeaderSliceError::Len(l) => Error::Truncated {
            layer: Layer::Ipv6,
            offset: off,
            required: l.required_len,
            present: l.len,
        },
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { version_number }) => {
            Error::Invalid {
                layer: Layer::Ipv6,
                offset: off,
                field: "version",
                value: version_number.into(),
                expected: "expected 6",
            }
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
    let l4 = off + Ipv6Header::LEN;
    let declared = usize::from(h.payload_length());
    let (payload, trailer) = split_declared(bytes, l4, declared);
    f.trailer = trailer;
    f.net = Net::Ip {
        ip: IpRepr::V6(ip),
        udp: None,
        payload,
        declared_len: declared,
    };
    if ip.next_header != IP_PROTO_UDP {
        return Ok(());
    }
    parse_udp(f, bytes, IpRepr::V6(ip), h.slice(), l4, declared, opts)
}

/// UDP, and RoCEv2 when the destination port is one of ours. `ip_payload`
/// is the length the IP header gives its payload.
fn parse_udp<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    ip: IpRepr,
    ip_raw: &'a [u8],
    off: usize,
    ip_payload: usize,
    opts: &ParseOptions,
) -> Result<()> {
    let captured = &bytes[off.min(bytes.len())..bytes.len().min(off + ip_payload)];
    let present = if ip_payload < UDP_LEN {
        Some(ip_payload)
    } else if captured.len() < UDP_LEN {
        Some(captured.len())
    } else {
        None
    };
    if let Some(present) = present {
        return Err(Error::Truncated {
            layer: Layer::Udp,
            offset: off,
            required: UDP_LEN,
            present,
        });
    }
    let h = UdpHeaderSlice::from_slice(captured).expect("length checked");
    let udp = UdpRepr {
        src_port: h.source_port(),
        dst_port: h.destination_port(),
        checksum: h.checksum(),
    };
    let udp_len = usize::from(h.length());
    if !opts.roce_v2_ports.contains(udp.dst_port) {
        // Emit derives the UDP length from the IP length; a datagram whose
        // own length says otherwise is kept opaque but cannot re-emit.
        if udp_len != ip_payload {
            f.warnings.insert(Warnings::UDP_LENGTH_MISMATCH);
        }
        let declared = ip_payload - UDP_LEN;
        let (payload, _) = split_declared(bytes, off + UDP_LEN, declared);
        f.net = Net::Ip {
            ip,
            udp: Some(udp),
            payload,
            declared_len: declared,
        };
        return Ok(());
    }
    f.net = Net::RoceV2 { ip, udp, ib: None };
    if udp_len < UDP_LEN || udp_len > ip_payload {
        return Err(Error::Invalid {
            layer: Layer::Udp,
            offset: off,
            field: "length",
            value: udp_len as u64,
            expected: if udp_len < UDP_LEN {
                "expected at least 8"
            } else {
                "larger than the IP payload"
            },
        });
    }
    // A UDP length shorter than the IP payload leaves IP-level padding,
    // which we report with the trailer; emit derives the IP length from
    // the UDP length, so such a frame has no repr.
    if udp_len != ip_payload {
        f.warnings.insert(Warnings::UDP_LENGTH_MISMATCH);
    }
    if udp_len < ip_payload && bytes.len() > off + udp_len {
        f.trailer = &bytes[off + udp_len..];
    }
    let ib_start = off + UDP_LEN;
    let declared = udp_len - UDP_LEN;
    let ib_bytes = &bytes[ib_start.min(bytes.len())..];
    let (pkt, stop) = ib::parse(ib_bytes, declared);
    let pkt = pkt.map(|mut p| {
        if opts.verify_icrc {
            if let Some(wire) = p.icrc {
                let body = &bytes[ib_start..ib_start + declared - icrc::ICRC_LEN];
                let udp_raw = &bytes[off..ib_start];
                let crc = match ip {
                    IpRepr::V4(_) => icrc::rocev2_ipv4(ip_raw, udp_raw, body),
                    IpRepr::V6(_) => icrc::rocev2_ipv6(ip_raw, udp_raw, body),
                };
                mark_icrc(&mut p, crc == wire);
            }
        }
        f.warnings.insert(p.warnings);
        p
    });
    f.net = Net::RoceV2 { ip, udp, ib: pkt };
    stop.map_or(Ok(()), |e| Err(e.at(ib_start)))
}

fn mark_icrc(p: &mut IbPacket<'_>, valid: bool) {
    p.icrc_valid = Some(valid);
    if !valid {
        p.warnings.insert(Warnings::ICRC_MISMATCH);
    }
}

fn parse_rocev1<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    off: usize,
    opts: &ParseOptions,
) -> Result<()> {
    let grh = GrhRepr::parse(&bytes[off..]).map_err(|e| e.at(off))?;
    let ib_start = off + GrhRepr::LEN;
    let declared = usize::from(GrhRepr::pay_len(&bytes[off..]));
    let (_, trailer) = split_declared(bytes, ib_start, declared);
    f.trailer = trailer;
    f.net = Net::RoceV1 { grh, ib: None };
    if grh.next_header != NXTHDR_IBA {
        f.warnings.insert(Warnings::GRH_NXTHDR);
        return Ok(());
    }
    let (pkt, stop) = ib::parse(&bytes[ib_start..], declared);
    let pkt = pkt.map(|mut p| {
        if opts.verify_icrc {
            if let Some(wire) = p.icrc {
                let body = &bytes[ib_start..ib_start + declared - icrc::ICRC_LEN];
                mark_icrc(&mut p, icrc::rocev1(&bytes[off..ib_start], body) == wire);
            }
        }
        f.warnings.insert(p.warnings);
        p
    });
    f.net = Net::RoceV1 { grh, ib: pkt };
    stop.map_or(Ok(()), |e| Err(e.at(ib_start)))
}

fn parse_mac_control<'a>(f: &mut Frame<'a>, bytes: &'a [u8], off: usize) -> Result<()> {
    let m = MacControlRepr::parse(&bytes[off..]).map_err(|e| e.at(off))?;
    if matches!(m, MacControlRepr::Unknown { .. }) {
        f.warnings.insert(Warnings::UNKNOWN_MAC_CONTROL);
    }
    let end = off + MacControlRepr::LEN;
    // Emit writes zeros after the parameters; anything else there cannot
    // come back from a repr, so it is flagged (and `to_repr` declines).
    let rest = &bytes[(off + m.header_len()).min(bytes.len())..end.min(bytes.len())];
    if rest.iter().any(|&b| b != 0) {
        f.warnings.insert(Warnings::MAC_CONTROL_PAD_NONZERO);
    }
    f.trailer = if bytes.len() > end {
        &bytes[end..]
    } else {
        &[]
    };
    f.net = Net::MacControl(m);
    Ok(())
}
