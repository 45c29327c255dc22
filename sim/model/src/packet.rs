//! Packets in flight: header values, no bytes.
//!
//! A [`Packet`] holds what the network needs to forward it (MACs, VLAN tag,
//! IP addresses, DSCP/ECN, the UDP source port, the priority) and the
//! codec's [`IbRepr`] the queue pair produced. Bytes are made only at a
//! capture tap, by [`Packet::frame_repr`] and the codec's `emit`.
//!
//! Packets live in a [`PacketPool`] (a slab with a free list) and travel as
//! [`PacketId`]s inside events, so the steady state allocates nothing.

use core::net::{Ipv4Addr, Ipv6Addr};

use roce_codec::build::linux_icmp_quote;
use roce_codec::frame::{EthRepr, FrameRepr, IpRepr, Ipv4Repr, NetRepr, UdpRepr, VlanTag, Vlans};
use roce_codec::hash::{FiveTuple, FlowAddrs, FlowKeys, ROCE_V2_UDP_DPORT};
use roce_codec::perftest::KEY_MSG_SIZE_GID;
use roce_codec::wire::grh::{GrhRepr, NXTHDR_IBA};
use roce_codec::wire::icmpv4::{IP_PROTO_ICMP, Icmpv4Repr, LINUX_MAX_QUOTE, linux_error_tos};
use roce_codec::wire::mac_control::{ETHERTYPE_MAC_CONTROL, MacControlRepr, PAUSE_DST_MAC};
use roce_codec::wire::tcp::{IP_PROTO_TCP, TcpOptions, TcpRepr, flags};
use roce_codec::{IbRepr, Opcode};

use crate::time::{FCS_LEN, Ps, WIRE_OVERHEAD};

/// Index of a packet in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketId(u32);

#[cfg(test)]
impl PacketId {
    pub(crate) fn from_index(i: u32) -> PacketId {
        PacketId(i)
    }
}

/// The network layer of a RoCE packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L3 {
    /// RoCEv2: IPv4 + UDP to 4791.
    V2 {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        dscp: u8,
        ecn: u8,
        ttl: u8,
        sport: u16,
        /// The (source, destination) UDP ports a switch's ECMP hash reads,
        /// `source | destination << 16`: the frame's own ports
        /// ([`hash_ports`]), or those the HPCC reference gives its flows
        /// (`ecmp_ports = "flow"`, `world::profile`). Not on the wire.
        ecmp: u32,
    },
    /// RoCE v1: a GRH straight after Ethernet (EtherType 0x8915). The GIDs
    /// are the IPv4-mapped addresses of the two interfaces.
    V1 {
        sgid: Ipv4Addr,
        dgid: Ipv4Addr,
        tclass: u8,
        flow_label: u32,
    },
    /// ARP for IPv4 over Ethernet (EtherType 0x0806), padded to the
    /// 60-byte minimum frame. Only with `sim.arp = "frames"`.
    Arp {
        /// 1 request, 2 reply.
        op: u16,
        sha: [u8; 6],
        spa: Ipv4Addr,
        tha: [u8; 6],
        tpa: Ipv4Addr,
    },
    /// A MAC control frame (EtherType 0x8808): 802.1Qbb PFC or 802.3x
    /// PAUSE, untagged, to 01:80:c2:00:00:01, consumed by the MAC it
    /// reaches (never forwarded).
    MacControl(MacControlRepr),
    /// An ICMP "port unreachable" (type 3 code 3) a host's IP stack sends
    /// back about a RoCEv2 datagram it has no UDP listener for (a v2 frame
    /// at a v1-only NIC). The quoted datagram is `about` and the packet's
    /// `ib`; its bytes are made at the tap like any other.
    /// A TCP segment of the kernel's (`world::connect`), DSCP 0.
    Tcp {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        ttl: u8,
        seg: TcpSeg,
    },
    IcmpUnreachable {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        /// IP identification of the error.
        ident: u16,
        ttl: u8,
        about: Udp4,
    },
}

/// The ECMP port word of a RoCEv2 frame from UDP source port `sport`: its
/// own ports, the destination being 4791.
pub const fn hash_ports(sport: u16) -> u32 {
    sport as u32 | (ROCE_V2_UDP_DPORT as u32) << 16
}

/// A TCP segment of a connection set-up (perftest's socket to port 18515).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSeg {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    /// `roce_codec::wire::tcp::flags`.
    pub flags: u16,
    /// The MSS a SYN offers (the interface MTU less 40).
    pub mss: u16,
    /// Its data, if any: key message `index` of set-up `setup` (the bytes
    /// are made at the tap from the set-up's values).
    pub data: Option<SegData>,
}

/// Which key message a segment carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegData {
    pub setup: u32,
    pub from_server: bool,
    pub index: u16,
}

/// The IPv4/UDP header values of a RoCEv2 datagram (what an ICMP error
/// quotes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Udp4 {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub dscp: u8,
    pub ecn: u8,
    pub ttl: u8,
    pub sport: u16,
}

impl TcpSeg {
    /// Linux's SYN and SYN-ACK offer an MSS (for a 1500-byte MTU: 1460);
    /// other options (SACK, timestamps, window scale) are left out.
    fn options(&self) -> TcpOptions {
        if self.flags & flags::SYN != 0 {
            let [hi, lo] = self.mss.to_be_bytes();
            TcpOptions::new(&[2, 4, hi, lo]).expect("4 bytes")
        } else {
            TcpOptions::default()
        }
    }

    fn header_len(&self) -> u32 {
        (TcpRepr::MIN_LEN + self.options().as_slice().len()) as u32
    }

    pub fn repr(&self) -> TcpRepr {
        TcpRepr {
            src_port: self.sport,
            dst_port: self.dport,
            seq: self.seq,
            ack: self.ack,
            flags: self.flags,
            // Linux's initial window for a 1460-byte MSS (44 segments).
            window: 64240,
            urgent: 0,
            options: self.options(),
            checksum_override: None,
        }
    }
}

impl Udp4 {
    fn ipv4(&self) -> Ipv4Repr {
        let mut ip = Ipv4Repr::udp(self.src, self.dst, self.dscp, self.ecn);
        ip.ttl = self.ttl;
        ip
    }
}

impl L3 {
    /// The source address (RoCE v1: the address the GID maps; ARP: the
    /// sender's).
    pub fn src_ip(&self) -> Ipv4Addr {
        match *self {
            L3::V2 { src, .. } => src,
            L3::V1 { sgid, .. } => sgid,
            L3::Arp { spa, .. } => spa,
            L3::IcmpUnreachable { src, .. } | L3::Tcp { src, .. } => src,
            L3::MacControl(_) => Ipv4Addr::UNSPECIFIED,
        }
    }

    /// The destination address (ARP: the target's).
    pub fn dst_ip(&self) -> Ipv4Addr {
        match *self {
            L3::V2 { dst, .. } => dst,
            L3::V1 { dgid, .. } => dgid,
            L3::Arp { tpa, .. } => tpa,
            L3::IcmpUnreachable { dst, .. } | L3::Tcp { dst, .. } => dst,
            L3::MacControl(_) => Ipv4Addr::UNSPECIFIED,
        }
    }
}

/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// ARP body (28 bytes) plus padding to the 60-byte minimum frame.
pub const ARP_BODY_LEN: usize = 46;

/// One frame in flight.
///
/// `repr(C)`, aligned to a cache line, with what every switch hop reads
/// (addresses, classification, length, ingress) in its first 64 bytes:
/// a switch in a fabric of thousands of ports finds a frame's slot cold,
/// and then reads one line of it instead of the two or three that the
/// compiler's order (the `IbRepr` first) spread those fields over.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub struct Packet {
    pub l3: L3,
    pub eth: EthRepr,
    /// Frame length as a capture shows it (no FCS).
    pub frame_len: u16,
    /// Bytes the buffers and queues count for it: `frame_len`, or the size
    /// its sender's profile bills ([`Billing`]).
    pub billed_len: u16,
    /// Switch ingress port while the packet sits in a switch buffer (for
    /// per-ingress accounting), `u32::MAX` elsewhere.
    pub ingress: u32,
    pub vlan: Option<VlanTag>,
    /// The 802.1p priority / traffic class queue it travels in.
    pub prio: u8,
    /// Bytes the wire adds to `billed_len` while it is sent: FCS, preamble
    /// and inter-frame gap (24), or 0 where the billed size stands for the
    /// whole frame on the wire.
    pub wire_extra: u8,
    // ^ the first cache line
    /// Global index of the queue pair that sent it.
    pub src_qp: u32,
    /// A CM MAD's index in the world's log of sent MADs (whose bytes a tap
    /// writes), `u32::MAX` for every other packet.
    pub mad: u32,
    /// When it was created by the sending NIC.
    pub born: Ps,
    pub ib: IbRepr,
}

/// How a NIC bills its RoCE frames to the wire and to buffers, when not
/// at their real size.
///
/// A real frame of a 1000-byte RDMA WRITE MIDDLE takes 1082 bytes of wire
/// time (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble,
/// SFD and gap 20) and 1058 bytes of buffer. The HPCC ns-3 reference
/// counts 1048 for both (its 14-byte PPP header standing for Ethernet,
/// IPv4, UDP and a 6-byte sequence header; no FCS, preamble or gap) and 60
/// for an ACK. Reproducing its experiments means timing, pacing and
/// buffering frames at its sizes; captures and byte counters keep the real
/// frames, which are what a NIC would put on a wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Billing {
    /// Bytes a packet of the QP's data (request or READ response) costs
    /// beyond its payload; 0: its real frame.
    pub header_bytes: u16,
    /// Bytes an ACK, NAK or CNP costs; 0: its real frame.
    pub ack_bytes: u16,
}

impl Billing {
    /// Every frame at its real size.
    pub const REAL: Billing = Billing {
        header_bytes: 0,
        ack_bytes: 0,
    };

    /// The HPCC ns-3 reference's sizes (see [`crate::world::NicProfile`]'s
    /// `hpcc` preset for where they come from).
    pub const HPCC: Billing = Billing {
        header_bytes: 48,
        ack_bytes: 60,
    };

    /// The billed size of `ib`'s frame, `None`: its real frame.
    #[inline]
    pub fn billed(&self, ib: &IbRepr) -> Option<u32> {
        // RC ACKNOWLEDGE (NAKs too) and CNP: no payload, one size.
        const RC_ACKNOWLEDGE: u8 = 0x11;
        let (bytes, payload) = match ib.bth.opcode {
            Opcode(RC_ACKNOWLEDGE) | Opcode::CNP => (self.ack_bytes, 0),
            _ => (self.header_bytes, ib.payload_len),
        };
        (bytes != 0).then(|| u32::from(bytes) + payload)
    }
}

/// `(frame_len, billed_len, wire_extra)` of a frame of `frame_len` bytes
/// (no FCS) billed at `billed` bytes of wire and buffer, or at its real
/// size.
pub fn frame_sizes(frame_len: u32, billed: Option<u32>) -> (u16, u16, u8) {
    let real = u16::try_from(frame_len).expect("a frame is shorter than 64 KiB");
    match billed {
        None => (real, real, (FCS_LEN + WIRE_OVERHEAD) as u8),
        Some(b) => (
            real,
            u16::try_from(b).expect("a billed frame is shorter than 64 KiB"),
            0,
        ),
    }
}

const ETH_LEN: u32 = 14;
const VLAN_LEN: u32 = 4;
const IPV4_LEN: u32 = 20;
const UDP_LEN: u32 = 8;

impl Packet {
    /// Length of the frame for `ib` under these headers (no FCS).
    pub fn compute_frame_len(vlan: bool, l3: &L3, ib: &IbRepr) -> u32 {
        let l2 = ETH_LEN + if vlan { VLAN_LEN } else { 0 };
        match l3 {
            L3::V2 { .. } => l2 + IPV4_LEN + UDP_LEN + ib.buffer_len() as u32,
            L3::V1 { .. } => l2 + GrhRepr::LEN as u32 + ib.buffer_len() as u32,
            L3::Arp { .. } => l2 + ARP_BODY_LEN as u32,
            L3::MacControl(_) => l2 + MacControlRepr::LEN as u32,
            L3::Tcp { seg, .. } => {
                l2 + IPV4_LEN + seg.header_len() + seg.data.map_or(0, |_| KEY_MSG_SIZE_GID as u32)
            }
            L3::IcmpUnreachable { .. } => {
                let offending = IPV4_LEN + UDP_LEN + ib.buffer_len() as u32;
                l2 + IPV4_LEN + Icmpv4Repr::LEN as u32 + offending.min(LINUX_MAX_QUOTE as u32)
            }
        }
    }

    /// Bytes of wire time it takes.
    #[inline]
    pub fn wire_bytes(&self) -> u64 {
        u64::from(self.billed_len) + u64::from(self.wire_extra)
    }

    pub fn ecn_ce(&self) -> bool {
        matches!(self.l3, L3::V2 { ecn: 3, .. })
    }

    /// The 2-bit ECN field of an IP packet (RoCEv2); `None` for frames
    /// without an IP header (RoCE v1, ARP), which a switch's RED never
    /// marks: ECN is an IP function.
    #[inline]
    pub fn ip_ecn(&self) -> Option<u8> {
        match self.l3 {
            L3::V2 { ecn, .. } => Some(ecn & 3),
            // An ICMP error keeps ECT(0) of its datagram (Linux's TOS mask)
            // but is a handful of frames: switches here leave it unmarked.
            L3::V1 { .. }
            | L3::Arp { .. }
            | L3::MacControl(_)
            | L3::IcmpUnreachable { .. }
            | L3::Tcp { .. } => None,
        }
    }

    /// A congested switch marks the packet Congestion Experienced (CE,
    /// both ECN bits set); frames without an IP header are left alone.
    #[inline]
    pub fn set_ce(&mut self) {
        if let L3::V2 { ecn, .. } = &mut self.l3 {
            *ecn = 3;
        }
    }

    /// The TOS byte of an ICMP error about `about` (Linux's rule).
    fn icmp_tos(about: &Udp4) -> u8 {
        linux_error_tos(about.dscp << 2 | about.ecn)
    }

    pub fn dst_ip(&self) -> Ipv4Addr {
        self.l3.dst_ip()
    }

    pub fn src_ip(&self) -> Ipv4Addr {
        self.l3.src_ip()
    }

    pub fn dscp(&self) -> Option<u8> {
        match self.l3 {
            L3::V2 { dscp, .. } => Some(dscp),
            L3::IcmpUnreachable { about, .. } => Some(Self::icmp_tos(&about) >> 2),
            L3::Tcp { .. } => Some(0),
            L3::V1 { .. } | L3::Arp { .. } | L3::MacControl(_) => None,
        }
    }

    /// A router forwarded it: its MACs, and one hop less to live.
    pub fn route_hop(&mut self, src: [u8; 6], dst: [u8; 6]) {
        self.eth.src = src;
        self.eth.dst = dst;
        if let L3::V2 { ttl, .. } | L3::IcmpUnreachable { ttl, .. } | L3::Tcp { ttl, .. } =
            &mut self.l3
        {
            *ttl -= 1;
        }
    }

    /// A frame of a host's kernel (ARP, TCP, ICMP, a MAD): from `src` to
    /// `dst`, tagged with priority 0 on a VLAN interface, sent by no QP.
    pub fn kernel(
        src: [u8; 6],
        dst: [u8; 6],
        vlan: Option<u16>,
        l3: L3,
        ib: IbRepr,
        born: Ps,
    ) -> Packet {
        let vlan = vlan.map(|vid| VlanTag::dot1q(vid, 0));
        let (frame_len, billed_len, wire_extra) =
            frame_sizes(Packet::compute_frame_len(vlan.is_some(), &l3, &ib), None);
        Packet {
            eth: EthRepr { dst, src },
            vlan,
            frame_len,
            billed_len,
            wire_extra,
            l3,
            ib,
            prio: 0,
            src_qp: u32::MAX,
            ingress: u32::MAX,
            mad: u32::MAX,
            born,
        }
    }

    /// The destination and TTL of an IPv4 packet a router can forward.
    pub fn ipv4_dst_ttl(&self) -> Option<(Ipv4Addr, u8)> {
        match self.l3 {
            L3::V2 { dst, ttl, .. }
            | L3::IcmpUnreachable { dst, ttl, .. }
            | L3::Tcp { dst, ttl, .. } => Some((dst, ttl)),
            _ => None,
        }
    }

    /// An ICMP port unreachable from `src_mac`/`src` about the RoCEv2
    /// packet `offending`, to `dst_mac` (Linux `icmp_send`: back to the
    /// datagram's source, TTL 64).
    pub fn icmp_port_unreachable(
        offending: &Packet,
        src_mac: [u8; 6],
        dst_mac: [u8; 6],
        ident: u16,
        vlan: Option<u16>,
        born: Ps,
    ) -> Option<Packet> {
        let L3::V2 {
            src,
            dst,
            dscp,
            ecn,
            ttl,
            sport,
            ..
        } = offending.l3
        else {
            return None;
        };
        let about = Udp4 {
            src,
            dst,
            dscp,
            ecn,
            ttl,
            sport,
        };
        let l3 = L3::IcmpUnreachable {
            src: dst,
            dst: src,
            ident,
            ttl: 64,
            about,
        };
        Some(Packet::kernel(
            src_mac,
            dst_mac,
            vlan,
            l3,
            offending.ib,
            born,
        ))
    }

    /// The data of an ICMP error (its quote of the offending datagram, as
    /// much as Linux quotes), written into `buf` through the codec's emit;
    /// `zeros` is the IB payload. `None` for other packets.
    pub fn icmp_data<'b>(&self, buf: &'b mut [u8], zeros: &[u8]) -> Option<&'b [u8]> {
        let L3::IcmpUnreachable { about, .. } = self.l3 else {
            return None;
        };
        let f = FrameRepr {
            eth: self.eth,
            vlans: Vlans::none(),
            net: NetRepr::RoceV2 {
                ip: IpRepr::V4(about.ipv4()),
                udp: UdpRepr {
                    src_port: about.sport,
                    dst_port: ROCE_V2_UDP_DPORT,
                    checksum: 0,
                },
                ib: self.ib,
            },
        };
        let n = f.emit(buf, &zeros[..self.ib.payload_len as usize]);
        Some(linux_icmp_quote(&buf[ETH_LEN as usize..n]))
    }

    pub fn is_arp(&self) -> bool {
        matches!(self.l3, L3::Arp { .. })
    }

    /// A PFC or PAUSE frame from a port whose MAC is `src`.
    pub fn mac_control(src: [u8; 6], repr: MacControlRepr) -> Packet {
        let l3 = L3::MacControl(repr);
        let (frame_len, billed_len, wire_extra) = frame_sizes(
            Packet::compute_frame_len(false, &l3, &IbRepr::default()),
            None,
        );
        Packet {
            eth: EthRepr {
                dst: PAUSE_DST_MAC,
                src,
            },
            vlan: None,
            frame_len,
            billed_len,
            wire_extra,
            l3,
            ib: IbRepr::default(),
            prio: 7,
            src_qp: u32::MAX,
            ingress: u32::MAX,
            mad: u32::MAX,
            born: Ps::ZERO,
        }
    }

    /// The bytes after the EtherType of a frame that is not RoCE (ARP,
    /// MAC control), padding included: the 46-byte minimum payload.
    pub fn l2_body(&self) -> Option<[u8; ARP_BODY_LEN]> {
        if let L3::MacControl(m) = self.l3 {
            let mut b = [0u8; ARP_BODY_LEN];
            m.emit(&mut b);
            return Some(b);
        }
        self.arp_body()
    }

    /// The ARP body and padding as on the wire (RFC 826, Ethernet/IPv4).
    pub fn arp_body(&self) -> Option<[u8; ARP_BODY_LEN]> {
        let L3::Arp {
            op,
            sha,
            spa,
            tha,
            tpa,
        } = self.l3
        else {
            return None;
        };
        let mut b = [0u8; ARP_BODY_LEN];
        b[0..2].copy_from_slice(&1u16.to_be_bytes()); // hardware: Ethernet
        b[2..4].copy_from_slice(&0x0800u16.to_be_bytes()); // protocol: IPv4
        b[4] = 6;
        b[5] = 4;
        b[6..8].copy_from_slice(&op.to_be_bytes());
        b[8..14].copy_from_slice(&sha);
        b[14..18].copy_from_slice(&spa.octets());
        b[18..24].copy_from_slice(&tha);
        b[24..28].copy_from_slice(&tpa.octets());
        Some(b)
    }

    /// The fields the bonding hash and the mlx5 LAG hash read.
    pub fn flow_keys(&self) -> FlowKeys {
        match self.l3 {
            L3::V2 {
                src, dst, sport, ..
            } => {
                let mut k = FlowKeys::rocev2_v4(self.eth.src, self.eth.dst, src, dst, sport);
                k.vlan_tci = self.vlan.map(|v| v.tci());
                k
            }
            L3::IcmpUnreachable { src, dst, .. } | L3::Tcp { src, dst, .. } => FlowKeys {
                src_mac: self.eth.src,
                dst_mac: self.eth.dst,
                ethertype: 0x0800,
                vlan_tci: self.vlan.map(|v| v.tci()),
                addrs: Some(FlowAddrs::V4 { src, dst }),
                ports: match self.l3 {
                    L3::Tcp { seg, .. } => Some((seg.sport, seg.dport)),
                    _ => None,
                },
            },
            L3::V1 { .. } | L3::Arp { .. } | L3::MacControl(_) => FlowKeys {
                src_mac: self.eth.src,
                dst_mac: self.eth.dst,
                ethertype: match self.l3 {
                    L3::Arp { .. } => ETHERTYPE_ARP,
                    L3::MacControl(_) => ETHERTYPE_MAC_CONTROL,
                    _ => roce_codec::frame::ETHERTYPE_ROCE_V1,
                },
                vlan_tci: self.vlan.map(|v| v.tci()),
                addrs: None,
                ports: None,
            },
        }
    }

    /// The 5-tuple switches hash on. RoCE v1 has no IP header: its GIDs
    /// stand in for the addresses and the GRH next header for the protocol.
    pub fn five_tuple(&self) -> FiveTuple {
        match self.l3 {
            L3::V2 { src, dst, ecmp, .. } => FiveTuple {
                addrs: FlowAddrs::V4 { src, dst },
                protocol: roce_codec::frame::IP_PROTO_UDP,
                sport: ecmp as u16,
                dport: (ecmp >> 16) as u16,
            },
            L3::MacControl(_) => FiveTuple {
                addrs: FlowAddrs::V4 {
                    src: Ipv4Addr::UNSPECIFIED,
                    dst: Ipv4Addr::UNSPECIFIED,
                },
                protocol: 0,
                sport: 0,
                dport: 0,
            },
            L3::Arp { spa, tpa, .. } => FiveTuple {
                addrs: FlowAddrs::V4 { src: spa, dst: tpa },
                protocol: 0,
                sport: 0,
                dport: 0,
            },
            L3::IcmpUnreachable { src, dst, .. } => FiveTuple {
                addrs: FlowAddrs::V4 { src, dst },
                protocol: IP_PROTO_ICMP,
                sport: 0,
                dport: 0,
            },
            L3::Tcp { src, dst, seg, .. } => FiveTuple {
                addrs: FlowAddrs::V4 { src, dst },
                protocol: IP_PROTO_TCP,
                sport: seg.sport,
                dport: seg.dport,
            },
            L3::V1 { sgid, dgid, .. } => FiveTuple {
                addrs: FlowAddrs::V6 {
                    src: sgid.to_ipv6_mapped(),
                    dst: dgid.to_ipv6_mapped(),
                },
                protocol: NXTHDR_IBA,
                sport: 0,
                dport: 0,
            },
        }
    }

    /// The frame as codec values, for a tap to emit.
    pub fn frame_repr(&self) -> FrameRepr {
        let net = match self.l3 {
            L3::V2 {
                src,
                dst,
                dscp,
                ecn,
                ttl,
                sport,
                ..
            } => {
                let mut ip = Ipv4Repr::udp(src, dst, dscp, ecn);
                ip.ttl = ttl;
                NetRepr::RoceV2 {
                    ip: IpRepr::V4(ip),
                    udp: UdpRepr {
                        src_port: sport,
                        dst_port: ROCE_V2_UDP_DPORT,
                        checksum: 0,
                    },
                    ib: self.ib,
                }
            }
            L3::Arp { .. } => NetRepr::Other {
                ethertype: ETHERTYPE_ARP,
            },
            L3::MacControl(_) => NetRepr::Other {
                ethertype: ETHERTYPE_MAC_CONTROL,
            },
            L3::Tcp { src, dst, ttl, seg } => {
                let mut ip = Ipv4Repr::tcp(src, dst, 0, 0);
                ip.ttl = ttl;
                NetRepr::Tcp {
                    ip: IpRepr::V4(ip),
                    tcp: seg.repr(),
                }
            }
            L3::IcmpUnreachable {
                ident, ttl, about, ..
            } => {
                let mut ip = Ipv4Repr::icmp_error_about(&about.ipv4(), ident);
                ip.ttl = ttl;
                NetRepr::Icmpv4 {
                    ip: IpRepr::V4(ip),
                    icmp: Icmpv4Repr::port_unreachable(),
                }
            }
            L3::V1 {
                sgid,
                dgid,
                tclass,
                flow_label,
            } => NetRepr::RoceV1 {
                grh: GrhRepr {
                    ip_ver: 6,
                    traffic_class: tclass,
                    flow_label,
                    next_header: NXTHDR_IBA,
                    hop_limit: 1,
                    sgid: gid(sgid),
                    dgid: gid(dgid),
                },
                ib: self.ib,
            },
        };
        FrameRepr {
            eth: self.eth,
            vlans: self.vlan.map_or(Vlans::none(), Vlans::one),
            net,
        }
    }
}

/// The IPv4-mapped GID of an address (`::ffff:a.b.c.d`), as RoCE uses for
/// IPv4-based GIDs.
pub fn gid(ip: Ipv4Addr) -> [u8; 16] {
    let v6: Ipv6Addr = ip.to_ipv6_mapped();
    v6.octets()
}

/// A slab of packets with a free list.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
}

impl PacketPool {
    pub fn new() -> PacketPool {
        PacketPool::default()
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.alloc_copy(&p)
    }

    /// [`PacketPool::alloc`] of a copy of `p`, copied once, straight into
    /// its slot.
    #[inline]
    pub fn alloc_copy(&mut self, p: &Packet) -> PacketId {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = *p;
            PacketId(i)
        } else {
            self.slots.extend_from_slice(std::slice::from_ref(p));
            PacketId((self.slots.len() - 1) as u32)
        }
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(!self.free.contains(&id.0), "double free of {id:?}");
        self.live -= 1;
        self.free.push(id.0);
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.live
    }

    pub fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_codec::{Opcode, Psn};

    fn pkt(len: u32) -> Packet {
        let ib = IbRepr::new(Opcode(0x0A), 7, Psn::new(1), len);
        let l3 = L3::V2 {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 32,
            ecn: 0,
            ttl: 64,
            sport: 0xC132,
            ecmp: hash_ports(0xC132),
        };
        let (frame_len, billed_len, wire_extra) =
            frame_sizes(Packet::compute_frame_len(false, &l3, &ib), None);
        Packet {
            eth: EthRepr {
                dst: [2, 0, 0, 0, 0, 2],
                src: [2, 0, 0, 0, 0, 1],
            },
            vlan: None,
            frame_len,
            billed_len,
            wire_extra,
            l3,
            ib,
            prio: 4,
            src_qp: 0,
            ingress: u32::MAX,
            mad: u32::MAX,
            born: Ps::ZERO,
        }
    }

    /// A data packet is billed its payload + `header_bytes` whatever its
    /// extension headers (a WRITE FIRST's RETH, a READ request's none); an
    /// ACK, NAK or CNP `ack_bytes`; a zero keeps the real frame, whose
    /// wire time adds FCS, preamble and gap.
    #[test]
    fn billing_replaces_the_headers_not_the_payload() {
        let h = Billing::HPCC;
        let first = IbRepr::new(Opcode(0x06), 7, Psn::new(1), 1000);
        let middle = IbRepr::new(Opcode(0x07), 7, Psn::new(2), 1000);
        let read = IbRepr::new(Opcode(0x0C), 7, Psn::new(3), 0);
        let ack = IbRepr::ack(7, Psn::new(2), roce_codec::Syndrome(0), 0);
        let cnp = IbRepr::cnp(7);
        assert_eq!(h.billed(&first), Some(1048));
        assert_eq!(h.billed(&middle), Some(1048));
        assert_eq!(h.billed(&read), Some(48));
        assert_eq!(h.billed(&ack), Some(60));
        assert_eq!(h.billed(&cnp), Some(60));
        let data_only = Billing { ack_bytes: 0, ..h };
        assert_eq!(data_only.billed(&ack), None);
        assert_eq!(Billing::REAL.billed(&middle), None);
        assert_eq!(frame_sizes(1058, None), (1058, 1058, 24));
        assert_eq!(frame_sizes(1058, Some(1048)), (1058, 1048, 0));
        let mut p = pkt(1000);
        assert_eq!(p.wire_bytes(), u64::from(p.frame_len) + 24);
        (p.frame_len, p.billed_len, p.wire_extra) = frame_sizes(p.frame_len.into(), Some(1048));
        assert_eq!(p.wire_bytes(), 1048);
    }

    #[test]
    fn frame_len_matches_the_emitted_frame() {
        for len in [0, 1, 1000, 4096] {
            let p = pkt(len);
            let bytes = p.frame_repr().to_vec(&vec![0; len as usize]);
            assert_eq!(bytes.len(), usize::from(p.frame_len), "payload {len}");
        }
        // WRITE ONLY 4096 B with RETH = 4174 B with FCS (header sizes of
        // include/rdma/ib_pack.h).
        assert_eq!(
            pkt(4096).frame_len + 4,
            14 + 20 + 8 + 12 + 16 + 4096 + 4 + 4
        );
    }

    #[test]
    fn icmp_error_quotes_what_linux_quotes() {
        for (len, quoted) in [(0, 20 + 8 + 12 + 16 + 4), (488, 548), (1000, 548)] {
            let p = pkt(len);
            let e =
                Packet::icmp_port_unreachable(&p, [2, 0, 0, 0, 0, 2], p.eth.src, 7, None, Ps::ZERO)
                    .unwrap();
            assert_eq!(e.src_ip(), p.dst_ip());
            let mut q = vec![0xa5; 8192];
            let data = e.icmp_data(&mut q, &[0; 4096]).unwrap().to_vec();
            assert_eq!(data.len(), quoted, "payload {len}");
            // IPv4, UDP, BTH, RETH, payload, ICRC: 548 from a 488-byte
            // payload on, the most a 576-byte error carries.
            let whole = p.frame_repr().to_vec(&vec![0; len as usize]);
            assert_eq!(data[..], whole[14..14 + quoted]);
            let bytes = e.frame_repr().to_vec(&data);
            assert_eq!(bytes.len(), usize::from(e.frame_len), "payload {len}");
            // Type 3 code 3; TOS 0xc0 for DSCP 32 (TOS 0x80): precedence 6.
            assert_eq!((bytes[34], bytes[35]), (3, 3));
            assert_eq!(bytes[15], 0xc0);
        }
    }

    #[test]
    fn pool_reuses_slots() {
        let mut pool = PacketPool::new();
        let a = pool.alloc(pkt(1));
        let b = pool.alloc(pkt(2));
        pool.free(a);
        let c = pool.alloc(pkt(3));
        assert_eq!(a, c);
        assert_ne!(b, c);
        assert_eq!(pool.live(), 2);
        assert_eq!(pool.peak(), 2);
        assert_eq!(pool.get(c).ib.payload_len, 3);
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    /// What a switch hop reads is in the slot's first cache line.
    #[test]
    fn a_switch_hop_reads_one_cache_line() {
        assert_eq!(align_of::<Packet>(), 64);
        for end in [
            core::mem::offset_of!(Packet, l3) + size_of::<L3>(),
            core::mem::offset_of!(Packet, eth) + size_of::<EthRepr>(),
            core::mem::offset_of!(Packet, frame_len) + 2,
            core::mem::offset_of!(Packet, billed_len) + 2,
            core::mem::offset_of!(Packet, wire_extra) + 1,
            core::mem::offset_of!(Packet, ingress) + 4,
            core::mem::offset_of!(Packet, vlan) + size_of::<Option<VlanTag>>(),
            core::mem::offset_of!(Packet, prio) + 1,
        ] {
            assert!(end <= 64, "{end}");
        }
    }
}
