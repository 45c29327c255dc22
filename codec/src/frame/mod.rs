//! Whole Ethernet frames, from the MAC header to the ICRC.
//!
//! ```text
//!  Ethernet ─┬─ 802.1Q (0..2 tags) ─┬─ IPv4 / IPv6 ── UDP ── dport ∈ RoCE ports ── IB packet   RoCEv2
//!            │                      │               │      └ dport 4792 ── INT ── IB packet    RoCEv2 + telemetry
//!            │                      │               ├─ TCP (perftest's port 18515, any)        host stack
//!            │                      │               └─ ICMPv4 (port unreachable, any)          host stack
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
//! This file holds those two types and the drivers that walk the layers;
//! each layer group has its own file, with its layout drawn at the top:
//!
//! | file          | layer                                                         |
//! |---------------|---------------------------------------------------------------|
//! | `ethernet.rs` | Ethernet II, 802.1Q/802.1ad tags, MAC control dispatch        |
//! | `ip.rs`       | IPv4 (options, checksum), IPv6                                |
//! | `udp.rs`      | UDP, the RoCEv2 port test, in-band telemetry (INT) before the BTH |
//! | `l4.rs`       | TCP and ICMPv4 of the host stack                              |
//! | `roce.rs`     | the IB packet after UDP, INT or the GRH (RoCE v1), its ICRC   |
//! | `options.rs`  | [`ParseOptions`]: RoCEv2 ports, ICRC checking                 |
//!
//! Parsing is a chain of functions, one per layer, each taking the frame
//! decoded so far and the offset its header starts at. Each fills in what
//! it found (`Frame::net`, the trailer, warnings) *before* it hands on, so
//! that when a later layer stops, the frame still shows every layer above:
//!
//! ```text
//!  parse_lax ── parse_eth, parse_vlans ─┬─ parse_ipv4 ─┬─ parse_ip_payload ─┬─ parse_udp ── (INT) ── parse_ib
//!                                       ├─ parse_ipv6 ─┘                    ├─ parse_tcp
//!                                       │                                   └─ parse_icmpv4
//!                                       ├─ parse_rocev1 ── parse_ib
//!                                       └─ parse_mac_control
//! ```
//!
//! A stop is an [`Error`] in frame offsets; the strict [`Frame::parse`]
//! returns it, the lax one keeps it in [`Frame::stop`]. Ethernet, 802.1Q,
//! IPv4, IPv6 and UDP are read and written with etherparse; the IB headers,
//! the GRH and MAC control with [`crate::wire`].

mod ethernet;
mod ip;
mod l4;
mod options;
mod roce;
mod udp;

pub use ethernet::{
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_QINQ, ETHERTYPE_ROCE_V1, ETHERTYPE_VLAN, EthRepr,
    VlanTag, Vlans,
};
pub use ip::{IP_PROTO_UDP, IpRepr, Ipv4Repr, Ipv6Repr};
pub use options::{ParseOptions, PortSet};
pub use udp::UdpRepr;

// The options of IPv4 (and TCP) headers: a leaf of `wire`, which TCP uses too.
pub use crate::wire::options::Ipv4Options;

use crate::error::{Error, Layer, Result, Warnings};
use crate::icrc;
use crate::wire::grh::GrhRepr;
use crate::wire::ib::{IbPacket, IbRepr};
use crate::wire::icmpv4::Icmpv4Repr;
use crate::wire::int::{INT_UDP_PORT, IntRepr};
use crate::wire::mac_control::{ETHERTYPE_MAC_CONTROL, MacControlRepr};
use crate::wire::tcp::TcpRepr;
use udp::UDP_LEN;

/// What follows the Ethernet header (and tags) of a frame, as values.
// RoCEv2's variant holds the telemetry inline (`IntRepr`, a cache-line
// aligned 128 bytes for the simulator's pool): the enum stays `Copy` and
// is built on the stack per frame, where a box would allocate per frame.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetRepr {
    RoceV2 {
        ip: IpRepr,
        /// The UDP header as sent: with telemetry its `dst_port` is
        /// [`INT_UDP_PORT`] and the RoCEv2 port is `int.orig_dport`
        /// ([`FrameRepr::with_int`] sets both).
        udp: UdpRepr,
        /// In-band telemetry between the UDP header and the BTH
        /// ([`crate::wire::int`]).
        int: Option<IntRepr>,
        ib: IbRepr,
    },
    RoceV1 {
        grh: GrhRepr,
        ib: IbRepr,
    },
    MacControl(MacControlRepr),
    /// IP that is not RoCEv2, TCP or ICMPv4; the bytes after the last
    /// header are opaque.
    Ip {
        ip: IpRepr,
        udp: Option<UdpRepr>,
    },
    /// A TCP segment; its payload is opaque.
    Tcp {
        ip: IpRepr,
        tcp: TcpRepr,
    },
    /// An ICMPv4 message; its data (an error's quoted datagram) is opaque.
    Icmpv4 {
        ip: IpRepr,
        icmp: Icmpv4Repr,
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
            NetRepr::RoceV2 { ip, .. }
            | NetRepr::Ip { ip, .. }
            | NetRepr::Tcp { ip, .. }
            | NetRepr::Icmpv4 { ip, .. } => ip.ethertype(),
            NetRepr::RoceV1 { .. } => ETHERTYPE_ROCE_V1,
            NetRepr::MacControl(_) => ETHERTYPE_MAC_CONTROL,
            NetRepr::Other { ethertype } => *ethertype,
        }
    }

    /// Frame length in bytes (no FCS). `opaque_len` is the length of the
    /// opaque body of `Ip`, `Tcp`, `Icmpv4` and `Other` frames and is
    /// ignored otherwise.
    pub fn buffer_len(&self, opaque_len: usize) -> usize {
        ethernet::l2_len(&self.vlans)
            + match &self.net {
                NetRepr::RoceV2 { ip, int, ib, .. } => {
                    ip.header_len() + UDP_LEN + int_len(int) + ib.buffer_len()
                }
                NetRepr::RoceV1 { ib, .. } => GrhRepr::LEN + ib.buffer_len(),
                NetRepr::MacControl(m) => m.buffer_len(),
                NetRepr::Ip { ip, udp } => {
                    ip.header_len() + if udp.is_some() { UDP_LEN } else { 0 } + opaque_len
                }
                NetRepr::Tcp { ip, tcp } => ip.header_len() + tcp.header_len() + opaque_len,
                NetRepr::Icmpv4 { ip, .. } => ip.header_len() + Icmpv4Repr::LEN + opaque_len,
                NetRepr::Other { .. } => opaque_len,
            }
    }

    /// Writes the frame into `buf` and returns its length.
    ///
    /// `payload` is the IB payload of RoCE frames (only the first
    /// `payload_len` bytes are used, so a simulator can pass one shared
    /// buffer of zeros) or the opaque body of `Ip`/`Tcp`/`Icmpv4`/`Other`
    /// frames. Lengths, the IPv4, TCP and ICMP checksums and the ICRC are
    /// computed here; telemetry counts in the IP and UDP lengths, and the
    /// ICRC is the one of the packet without it (`roce.rs`).
    ///
    /// # Panics
    /// If `buf` is shorter than [`FrameRepr::buffer_len`], or a RoCE
    /// `payload` shorter than the IB packet's `payload_len`.
    pub fn emit(&self, buf: &mut [u8], payload: &[u8]) -> usize {
        let len = self.buffer_len(payload.len());
        let buf = &mut buf[..len];
        let mut off = ethernet::emit_l2(&self.eth, &self.vlans, self.ethertype(), buf);
        match &self.net {
            NetRepr::RoceV2 { ip, udp, int, ib } => {
                debug_assert!(
                    int.is_none() || udp.dst_port == INT_UDP_PORT,
                    "telemetry travels to UDP port {INT_UDP_PORT}"
                );
                let l4_len = int_len(int) + ib.buffer_len();
                let udp_start = off + ip.emit(&mut buf[off..], UDP_LEN + l4_len);
                let int_start = udp_start + udp.emit(&mut buf[udp_start..], l4_len);
                let ib_start = int_start + int.map_or(0, |i| i.emit(&mut buf[int_start..]));
                roce::emit_ib(buf, ib_start, ib, payload, |head| {
                    let (ip_hdr, udp_hdr) = (&head[off..udp_start], &head[udp_start..int_start]);
                    let ib = &head[ib_start..];
                    match int {
                        None => roce::rocev2_icrc(ip, ip_hdr, udp_hdr, ib),
                        Some(int) => roce::rocev2_icrc_at_sink(ip, ip_hdr, udp_hdr, int, ib),
                    }
                });
            }
            NetRepr::RoceV1 { grh, ib } => {
                grh.emit(&mut buf[off..], ib.buffer_len() as u16);
                let ib_start = off + GrhRepr::LEN;
                roce::emit_ib(buf, ib_start, ib, payload, |head| {
                    icrc::rocev1(&head[off..ib_start], &head[ib_start..])
                });
            }
            NetRepr::MacControl(m) => m.emit(&mut buf[off..]),
            NetRepr::Ip { ip, udp } => {
                let udp_len = if udp.is_some() { UDP_LEN } else { 0 };
                off += ip.emit(&mut buf[off..], udp_len + payload.len());
                if let Some(u) = udp {
                    off += u.emit(&mut buf[off..], payload.len());
                }
                buf[off..].copy_from_slice(payload);
            }
            NetRepr::Tcp { ip, tcp } => {
                off += ip.emit(&mut buf[off..], tcp.header_len() + payload.len());
                tcp.emit(&mut buf[off..], ip.src(), ip.dst(), payload);
            }
            NetRepr::Icmpv4 { ip, icmp } => {
                off += ip.emit(&mut buf[off..], Icmpv4Repr::LEN + payload.len());
                icmp.emit(&mut buf[off..], payload);
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
// As `NetRepr`: the telemetry inline keeps the decoded frame `Copy`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net<'a> {
    /// `ib` is `None` when decoding stopped before the BTH was complete.
    RoceV2 {
        ip: IpRepr,
        udp: UdpRepr,
        /// In-band telemetry before the BTH (UDP port [`INT_UDP_PORT`]).
        int: Option<IntRepr>,
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
    Tcp {
        ip: IpRepr,
        tcp: TcpRepr,
        /// The captured payload after the TCP header.
        payload: &'a [u8],
        /// The payload length the IP header implies.
        declared_len: usize,
    },
    Icmpv4 {
        ip: IpRepr,
        icmp: Icmpv4Repr,
        /// The captured data after the 8-byte header (an error's quote).
        data: &'a [u8],
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
        let (eth, ethertype) = ethernet::parse_eth(bytes)?;
        Ok(Frame::parse_after_l2(
            eth,
            ethertype,
            bytes,
            ethernet::ETH_LEN,
            wire_len,
            opts,
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
        let result =
            ethernet::parse_vlans(&mut f, bytes, l3_offset).and_then(|off| match f.ethertype {
                ETHERTYPE_IPV4 => ip::parse_ipv4(&mut f, bytes, off, opts),
                ETHERTYPE_IPV6 => ip::parse_ipv6(&mut f, bytes, off, opts),
                ETHERTYPE_ROCE_V1 => roce::parse_rocev1(&mut f, bytes, off, opts),
                ETHERTYPE_MAC_CONTROL => ethernet::parse_mac_control(&mut f, bytes, off),
                _ => {
                    f.net = Net::Other {
                        payload: &bytes[off..],
                    };
                    Ok(())
                }
            });
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
            Net::RoceV2 { ip, .. }
            | Net::Ip { ip, .. }
            | Net::Tcp { ip, .. }
            | Net::Icmpv4 { ip, .. } => Some(ip),
            _ => None,
        }
    }

    pub fn tcp(&self) -> Option<&TcpRepr> {
        match &self.net {
            Net::Tcp { tcp, .. } => Some(tcp),
            _ => None,
        }
    }

    pub fn icmpv4(&self) -> Option<&Icmpv4Repr> {
        match &self.net {
            Net::Icmpv4 { icmp, .. } => Some(icmp),
            _ => None,
        }
    }

    /// The in-band telemetry of a RoCEv2 frame that carries some.
    pub fn int(&self) -> Option<&IntRepr> {
        match &self.net {
            Net::RoceV2 { int, .. } => int.as_ref(),
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
            Net::RoceV2 { ip, udp, int, ib } => {
                let ib = ib?;
                (
                    NetRepr::RoceV2 {
                        ip,
                        udp,
                        int,
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
                if self.captured_len < ethernet::l2_len(&self.vlans) + MacControlRepr::LEN
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
            Net::Tcp {
                ip,
                tcp,
                payload,
                declared_len,
            } => {
                if payload.len() != declared_len {
                    return None;
                }
                (NetRepr::Tcp { ip, tcp }, payload)
            }
            Net::Icmpv4 {
                ip,
                icmp,
                data,
                declared_len,
            } => {
                if data.len() != declared_len {
                    return None;
                }
                (NetRepr::Icmpv4 { ip, icmp }, data)
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

/// The bytes telemetry takes in a RoCEv2 frame.
fn int_len(int: &Option<IntRepr>) -> usize {
    int.as_ref().map_or(0, IntRepr::buffer_len)
}

/// Splits the captured bytes from `start` at the length a header declares
/// for them. Returns (captured part of the declared bytes, trailer).
fn split_declared(bytes: &[u8], start: usize, declared: usize) -> (&[u8], &[u8]) {
    let end = start + declared;
    if bytes.len() >= end {
        (&bytes[start..end], &bytes[end..])
    } else {
        (&bytes[start.min(bytes.len())..], &[])
    }
}

/// An etherparse length error as ours, at frame offset `offset`.
fn truncated(layer: Layer, offset: usize, e: &etherparse::err::LenError) -> Error {
    Error::Truncated {
        layer,
        offset,
        required: e.required_len,
        present: e.len,
    }
}
