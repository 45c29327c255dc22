//! The frames no queue pair sends: a host kernel's ([`Packet::kernel`]:
//! ARP, the TCP of a connection set-up, CM MADs; and
//! [`Packet::icmp_port_unreachable`]) and a MAC's PFC and PAUSE frames
//! ([`Packet::mac_control`]).

use roce_codec::IbRepr;
use roce_codec::frame::{EthRepr, VlanTag};
use roce_codec::wire::mac_control::{MacControlRepr, PAUSE_DST_MAC};

use super::billing::frame_sizes;
use super::in_flight::{L3, Packet, Udp4};
use crate::time::Ps;

impl Packet {
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
            int: crate::packet::NO_INT,
            ts: born,
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
            int: crate::packet::NO_INT,
            ts: Ps::ZERO,
        }
    }
}
