//! Packets in flight: header values, no bytes.
//!
//! A [`Packet`] holds what the network needs to forward it (MACs, VLAN tag,
//! IP addresses, DSCP/ECN, the UDP source port, the priority) and the
//! codec's [`IbRepr`](roce_codec::IbRepr) the queue pair produced. Bytes
//! are made only at a capture tap, by [`Packet::frame_repr`] and the
//! codec's `emit`.
//!
//! Packets live in a [`PacketPool`] (a slab with a free list) and travel as
//! [`PacketId`]s inside events, so the steady state allocates nothing.
//!
//! | file | holds |
//! |---|---|
//! | `in_flight.rs` | [`Packet`] and its network layer [`L3`] (the header values of every kind of frame), the frame's length, what a hop reads and rewrites |
//! | `kernel.rs` | the frames no queue pair sends: a host kernel's (ARP, TCP, ICMP errors, CM MADs) and a MAC's PFC and PAUSE |
//! | `bytes.rs` | what a capture tap emits: [`Packet::frame_repr`], the body of an ARP or MAC control frame, an ICMP error's quote |
//! | `billing.rs` | [`Billing`]: frames billed at the HPCC ns-3 reference's sizes instead of their real ones; [`frame_sizes`] |
//! | `hash_keys.rs` | what hashes read: [`hash_ports`], [`Packet::flow_keys`] (bonds, mlx5 LAG), [`Packet::five_tuple`] (switches' ECMP) |
//! | `pool.rs` | [`PacketPool`], the slab packets live in, and [`PacketId`] |
//!
//! `in_flight.rs` and `billing.rs` use none of the others; the others use
//! `in_flight.rs`, and `kernel.rs` also `billing.rs`.

mod billing;
mod bytes;
mod hash_keys;
mod in_flight;
mod kernel;
mod pool;

pub use billing::{Billing, frame_sizes};
pub use bytes::gid;
pub use hash_keys::hash_ports;
pub use in_flight::{ARP_BODY_LEN, ETHERTYPE_ARP, L3, NO_INT, Packet, SegData, TcpSeg, Udp4};
pub use pool::{PacketId, PacketPool};

/// A RoCEv2 RDMA WRITE ONLY of `len` bytes, for the tests of the files here.
#[cfg(test)]
fn pkt(len: u32) -> Packet {
    use core::net::Ipv4Addr;
    use roce_codec::frame::EthRepr;
    use roce_codec::{IbRepr, Opcode, Psn};

    use crate::time::Ps;

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
        int: crate::packet::NO_INT,
        ts: Ps::ZERO,
    }
}
