//! What the hashes that spread flows read: the ECMP port word of a
//! RoCEv2 frame ([`hash_ports`]), the keys of the bonding and mlx5 LAG
//! hashes ([`Packet::flow_keys`]), and the 5-tuple switches hash on
//! ([`Packet::five_tuple`]).

use core::net::Ipv4Addr;

use roce_codec::hash::{FiveTuple, FlowAddrs, FlowKeys, ROCE_V2_UDP_DPORT};
use roce_codec::wire::grh::NXTHDR_IBA;
use roce_codec::wire::icmpv4::IP_PROTO_ICMP;
use roce_codec::wire::mac_control::ETHERTYPE_MAC_CONTROL;
use roce_codec::wire::tcp::IP_PROTO_TCP;

use super::in_flight::{ETHERTYPE_ARP, L3, Packet};

/// The ECMP port word of a RoCEv2 frame from UDP source port `sport`: its
/// own ports, the destination being 4791.
pub const fn hash_ports(sport: u16) -> u32 {
    sport as u32 | (ROCE_V2_UDP_DPORT as u32) << 16
}

impl Packet {
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
}
