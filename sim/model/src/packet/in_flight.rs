//! The packet in flight: [`Packet`] and its network layer [`L3`], which
//! holds the header values of every kind of frame; the frame's length; and
//! what a hop reads and rewrites (ECN, DSCP, TTL, MACs).

use core::net::Ipv4Addr;

use roce_codec::IbRepr;
use roce_codec::frame::{EthRepr, VlanTag};
use roce_codec::perftest::KEY_MSG_SIZE_GID;
use roce_codec::wire::grh::GrhRepr;
use roce_codec::wire::icmpv4::{Icmpv4Repr, LINUX_MAX_QUOTE, linux_error_tos};
use roce_codec::wire::mac_control::MacControlRepr;
use roce_codec::wire::tcp::{TcpOptions, TcpRepr, flags};

use crate::time::Ps;

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
        /// ([`hash_ports`](super::hash_ports)), or those the HPCC reference
        /// gives its flows (`ecmp_ports = "flow"`, `world::profile`). Not on
        /// the wire.
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
    /// A TCP segment of the kernel's (`world::connect`), DSCP 0.
    Tcp {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        ttl: u8,
        seg: TcpSeg,
    },
    /// An ICMP "port unreachable" (type 3 code 3) a host's IP stack sends
    /// back about a RoCEv2 datagram it has no UDP listener for (a v2 frame
    /// at a v1-only NIC). The quoted datagram is `about` and the packet's
    /// `ib`; its bytes are made at the tap like any other.
    IcmpUnreachable {
        src: Ipv4Addr,
        dst: Ipv4Addr,
        /// IP identification of the error.
        ident: u16,
        ttl: u8,
        about: Udp4,
    },
}

/// A TCP segment of a connection set-up (perftest's socket to port 18515,
/// NCCL's to a proxy's listening socket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSeg {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    /// `roce_codec::wire::tcp::flags`.
    pub flags: u16,
    /// The MSS a SYN offers (the interface MTU less 40); in an NCCL data
    /// segment, the MSS its message was cut by.
    pub mss: u16,
    /// Its data, if any: bytes of message `index` of set-up `setup` (the
    /// bytes are made at the tap from the set-up's values).
    pub data: Option<SegData>,
}

/// Which message bytes a segment carries (8 bytes: a hop reads the
/// packet's first cache line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegData {
    /// Index into `World::sockets` (perftest) or `World::nccl_setups`.
    pub setup: u32,
    /// perftest: the QP whose key message it is; NCCL: the message
    /// (`roce_codec::nccl::message_len`) << 12 | the segment's number in it.
    pub index: u16,
    pub from_server: bool,
    /// Whether `setup` is an NCCL set-up.
    pub nccl: bool,
}

impl SegData {
    /// An NCCL segment: segment `seg` of message `msg`.
    pub fn nccl(setup: u32, from_server: bool, msg: u16, seg: u16) -> SegData {
        SegData {
            setup,
            index: msg << 12 | seg,
            from_server,
            nccl: true,
        }
    }

    /// The NCCL message it is part of.
    pub fn message(&self) -> u16 {
        if self.nccl {
            self.index >> 12
        } else {
            self.index
        }
    }

    /// The bytes `(offset, len)` of its message it carries, when the
    /// message goes in segments of at most `mss` bytes (a key message goes
    /// whole).
    pub fn span(&self, mss: u16) -> (usize, usize) {
        if !self.nccl {
            return (0, KEY_MSG_SIZE_GID);
        }
        let total = roce_codec::nccl::message_len(self.from_server, usize::from(self.index >> 12));
        let off = usize::from(self.index & 0xfff) * usize::from(mss);
        (
            off.min(total),
            total.saturating_sub(off).min(usize::from(mss)),
        )
    }
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
    /// its sender's profile bills ([`Billing`](super::Billing)).
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
    /// Where its in-band telemetry is ([`PacketPool::int`]: in the pool,
    /// its own index; in a part's mail, an index there), [`NO_INT`] for a
    /// frame without (every frame but HPCC's data packets and their ACKs).
    ///
    /// [`PacketPool::int`]: super::PacketPool::int
    pub int: u32,
    /// The time stamp it carries: on a request or CNP, when the sending
    /// NIC made it; on an ACK or NAK, the stamp of the packet it answers,
    /// echoed as the HPCC reference copies its data packet's `ts` into its
    /// ACK (TIMELY's RTT sample). Simulation metadata: no header field of
    /// the frame holds it.
    pub ts: Ps,
    pub ib: IbRepr,
}

/// [`Packet::int`] of a frame without telemetry.
pub const NO_INT: u32 = u32::MAX;

pub(super) const ETH_LEN: u32 = 14;
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
                l2 + IPV4_LEN + seg.header_len() + seg.data.map_or(0, |d| d.span(seg.mss).1 as u32)
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

    /// The destination and TTL of an IPv4 packet a router can forward.
    pub fn ipv4_dst_ttl(&self) -> Option<(Ipv4Addr, u8)> {
        match self.l3 {
            L3::V2 { dst, ttl, .. }
            | L3::IcmpUnreachable { dst, ttl, .. }
            | L3::Tcp { dst, ttl, .. } => Some((dst, ttl)),
            _ => None,
        }
    }

    pub fn is_arp(&self) -> bool {
        matches!(self.l3, L3::Arp { .. })
    }
}

#[cfg(test)]
mod tests {
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

    /// Four cache lines a frame: the switch buffers of a k = 32 fat-tree
    /// hold millions of them (1.2 GB at five lines, the size before the
    /// codec's extended headers shared one presence mask).
    #[test]
    fn a_frame_takes_four_cache_lines() {
        assert_eq!(size_of::<Packet>(), 256);
    }
}
