//! Shorthands for building frames, used by the simulator's taps, the corpus
//! generators and tests. They only fill in [`IbRepr`]/[`FrameRepr`] values;
//! the bytes still come from [`FrameRepr::emit`].
//!
//! ```
//! use core::net::Ipv4Addr;
//! use roce_codec::*;
//! let ib = IbRepr::new(Opcode(0x0A), 0x12, Psn::new(7), 4096)
//!     .with_reth(RethRepr { va: 0x1000, rkey: 0x42, dma_len: 4096 })
//!     .with_ack_req(true);
//! let ip = Ipv4Repr::udp(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2), 26, 2);
//! let f = FrameRepr::rocev2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], IpRepr::V4(ip), 0xC132, ib);
//! let bytes = f.to_vec(&[0; 4096]);
//! assert_eq!(bytes.len(), 14 + 20 + 8 + 12 + 16 + 4096 + 4);
//! ```

use core::net::{IpAddr, Ipv4Addr};

use crate::frame::{EthRepr, FrameRepr, IpRepr, Ipv4Options, Ipv4Repr, NetRepr, UdpRepr, Vlans};
use crate::hash::ROCE_V2_UDP_DPORT;
use crate::psn::Psn;
use crate::wire::aeth::{AethRepr, Syndrome};
use crate::wire::atomic_ack_eth::AtomicAckEthRepr;
use crate::wire::atomic_eth::AtomicEthRepr;
use crate::wire::bth::BthRepr;
use crate::wire::cm::{CmPath, CmRep, CmReq, CmRtu, ROCE_LID};
use crate::wire::cma::{self, CmaHdr};
use crate::wire::deth::DethRepr;
use crate::wire::ib::{ExtHeaders, IbRepr, pad_for};
use crate::wire::icmpv4::{IP_PROTO_ICMP, Icmpv4Repr, LINUX_MAX_QUOTE, linux_error_tos};
use crate::wire::ieth::IethRepr;
use crate::wire::immdt::ImmDtRepr;
use crate::wire::int::{INT_UDP_PORT, IntRepr};
use crate::wire::mac_control::{MacControlRepr, PAUSE_DST_MAC};
use crate::wire::mad::MadRepr;
use crate::wire::opcode::{HeaderSet, Opcode};
use crate::wire::reth::RethRepr;
use crate::wire::tcp::{IP_PROTO_TCP, TcpRepr};

impl ExtHeaders {
    /// Every header of `set`, zero-valued (a CNP's reserved bytes are zero,
    /// as on the wire).
    pub fn for_set(set: HeaderSet) -> ExtHeaders {
        let mut ext = ExtHeaders::defaults_of(set);
        if set.contains(HeaderSet::AETH) {
            ext.set_aeth(Some(AethRepr {
                syndrome: Syndrome::ACK_NO_CREDITS,
                msn: 0,
            }));
        }
        ext
    }
}

impl IbRepr {
    /// A packet of `opcode` with P_Key 0xFFFF, PadCnt from `payload_len`
    /// and every header its opcode needs present with zero values. A CNP
    /// gets BECN set. Reserved opcodes get no extended headers.
    pub fn new(opcode: Opcode, dest_qp: u32, psn: Psn, payload_len: u32) -> IbRepr {
        let set = opcode.info().map_or(HeaderSet::empty(), |i| i.headers);
        IbRepr {
            bth: BthRepr {
                opcode,
                pkey: BthRepr::DEFAULT_PKEY,
                dest_qp: dest_qp & 0xFF_FFFF,
                psn,
                pad_count: pad_for(payload_len),
                becn: opcode == Opcode::CNP,
                ..BthRepr::default()
            },
            ext: ExtHeaders::for_set(set),
            payload_len,
        }
    }

    /// A CNP for `dest_qp` as ConnectX NICs send it (PSN 0, BECN set).
    pub fn cnp(dest_qp: u32) -> IbRepr {
        IbRepr::new(Opcode::CNP, dest_qp, Psn::new(0), 0)
    }

    /// An RC ACKNOWLEDGE (or NAK) for `psn`: [`IbRepr::new`]'s, its AETH
    /// given. Built as such, not through `new`'s header set: a responder
    /// makes one for every few packets (every packet, for the HPCC
    /// reference's NIC), and through `new` the simulator's responder took
    /// 227 instructions to emit one, 145 so.
    pub fn ack(dest_qp: u32, psn: Psn, syndrome: Syndrome, msn: u32) -> IbRepr {
        IbRepr {
            bth: BthRepr {
                opcode: Opcode(0x11),
                pkey: BthRepr::DEFAULT_PKEY,
                dest_qp: dest_qp & 0xFF_FFFF,
                psn,
                ..BthRepr::default()
            },
            ext: ExtHeaders::default(),
            payload_len: 0,
        }
        .with_aeth(AethRepr {
            syndrome,
            msn: msn & 0xFF_FFFF,
        })
    }

    pub fn with_ack_req(mut self, ack_req: bool) -> IbRepr {
        self.bth.ack_req = ack_req;
        self
    }
    pub fn with_reth(mut self, reth: RethRepr) -> IbRepr {
        self.ext.set_reth(Some(reth));
        self
    }
    pub fn with_aeth(mut self, aeth: AethRepr) -> IbRepr {
        self.ext.set_aeth(Some(aeth));
        self
    }
    pub fn with_deth(mut self, deth: DethRepr) -> IbRepr {
        self.ext.set_deth(Some(deth));
        self
    }
    pub fn with_immdt(mut self, data: u32) -> IbRepr {
        self.ext.set_immdt(Some(ImmDtRepr { data }));
        self
    }
    pub fn with_atomic_eth(mut self, a: AtomicEthRepr) -> IbRepr {
        self.ext.set_atomic_eth(Some(a));
        self
    }
    pub fn with_atomic_ack_eth(mut self, orig: u64) -> IbRepr {
        self.ext.set_atomic_ack_eth(Some(AtomicAckEthRepr { orig }));
        self
    }
    pub fn with_ieth(mut self, rkey: u32) -> IbRepr {
        self.ext.set_ieth(Some(IethRepr { rkey }));
        self
    }
}

/// Values the Linux RDMA CM (`drivers/infiniband/core/cma.c`) puts in a
/// REQ whatever the consumer asks: `CMA_CM_RESPONSE_TIMEOUT` for both CM
/// response timeouts and `CMA_MAX_CM_RETRIES`.
pub const CMA_CM_RESPONSE_TIMEOUT: u8 = 20;
pub const CMA_MAX_CM_RETRIES: u8 = 15;

/// The GID of an IPv4 address (`::ffff:a.b.c.d`), as RoCE v2 uses it.
pub fn ipv4_gid(a: Ipv4Addr) -> [u8; 16] {
    a.to_ipv6_mapped().octets()
}

fn ip_gid(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v4) => ipv4_gid(v4),
        IpAddr::V6(v6) => v6.octets(),
    }
}

impl CmPath {
    /// A RoCE path between two IP addresses: permissive LIDs, the
    /// addresses as GIDs.
    pub fn roce(local: IpAddr, remote: IpAddr, traffic_class: u8, hop_limit: u8) -> CmPath {
        CmPath {
            local_lid: ROCE_LID,
            remote_lid: ROCE_LID,
            local_gid: ip_gid(local),
            remote_gid: ip_gid(remote),
            traffic_class,
            hop_limit,
            ..CmPath::default()
        }
    }
}

impl CmReq {
    /// The REQ of an RC `rdma_connect` from `src:src_port` to
    /// `dst:dst_port` over RoCE: RDMA_PS_TCP service ID, the RDMA CM
    /// header first in the private data, Linux's CM timeouts and retries,
    /// P_Key 0xFFFF, retry and RNR retry counts 7. `path_mtu` is the IB MTU
    /// code (3 = 1024 for a 1500-byte Ethernet MTU, 5 = 4096).
    #[allow(clippy::too_many_arguments)]
    pub fn rdma_cm(
        local_comm_id: u32,
        local_qpn: u32,
        starting_psn: u32,
        src: IpAddr,
        src_port: u16,
        dst: IpAddr,
        dst_port: u16,
        path_mtu: u8,
    ) -> CmReq {
        let mut private_data = [0; 92];
        CmaHdr::new(src, src_port, dst).emit(&mut private_data[..CmaHdr::LEN]);
        CmReq {
            local_comm_id,
            reserved4: 0,
            service_id: cma::service_id(dst_port),
            local_ca_guid: 0,
            local_qkey: 0,
            local_qpn: local_qpn & 0xFF_FFFF,
            responder_resources: 0,
            local_eecn: 0,
            initiator_depth: 0,
            remote_eecn: 0,
            remote_cm_response_timeout: CMA_CM_RESPONSE_TIMEOUT,
            transport_type: 0,
            end_to_end_flow_control: false,
            starting_psn: starting_psn & 0xFF_FFFF,
            local_cm_response_timeout: CMA_CM_RESPONSE_TIMEOUT,
            retry_count: 7,
            pkey: BthRepr::DEFAULT_PKEY,
            path_mtu,
            rdc_exists: false,
            rnr_retry_count: 7,
            max_cm_retries: CMA_MAX_CM_RETRIES,
            srq: false,
            extended_transport: 0,
            primary_path: CmPath::roce(src, dst, 0, 64),
            alternate_path: CmPath::default(),
            private_data,
        }
    }
}

impl CmRep {
    /// The REP answering `req` from the passive side's QP.
    pub fn answering(req: &CmReq, local_comm_id: u32, local_qpn: u32, starting_psn: u32) -> CmRep {
        CmRep {
            local_comm_id,
            remote_comm_id: req.local_comm_id,
            local_qkey: 0,
            local_qpn: local_qpn & 0xFF_FFFF,
            local_eecn: 0,
            starting_psn: starting_psn & 0xFF_FFFF,
            responder_resources: req.initiator_depth,
            initiator_depth: req.responder_resources,
            target_ack_delay: 0,
            failover_accepted: 0,
            end_to_end_flow_control: false,
            rnr_retry_count: req.rnr_retry_count,
            srq: false,
            vendor_id: 0,
            local_ca_guid: 0,
            private_data: [0; 196],
        }
    }
}

impl CmRtu {
    /// The RTU (or DREP) from the side whose ID is `local` to `remote`.
    pub fn between(local_comm_id: u32, remote_comm_id: u32) -> CmRtu {
        CmRtu {
            local_comm_id,
            remote_comm_id,
            private_data: [0; 224],
        }
    }
}

impl Ipv4Repr {
    /// An IPv4/TCP header as Linux sends it: DF set, TTL 64, no options.
    pub fn tcp(src: Ipv4Addr, dst: Ipv4Addr, dscp: u8, ecn: u8) -> Ipv4Repr {
        Ipv4Repr {
            protocol: IP_PROTO_TCP,
            ..Ipv4Repr::udp(src, dst, dscp, ecn)
        }
    }

    /// The header of the ICMP error Linux sends about `offending`: back to
    /// its source, TOS from [`linux_error_tos`], TTL 64, DF clear (the ICMP
    /// socket is IP_PMTUDISC_DONT).
    pub fn icmp_error_about(offending: &Ipv4Repr, identification: u16) -> Ipv4Repr {
        let tos = linux_error_tos(offending.dscp << 2 | offending.ecn);
        Ipv4Repr {
            dscp: tos >> 2,
            ecn: tos & 3,
            identification,
            dont_fragment: false,
            more_fragments: false,
            fragment_offset: 0,
            ttl: 64,
            protocol: IP_PROTO_ICMP,
            src: offending.dst,
            dst: offending.src,
            options: Ipv4Options::default(),
            checksum_override: None,
        }
    }
}

/// What of `datagram` (the offending IP datagram, from its header on) a
/// Linux ICMP error quotes: as much as fits in 576 bytes.
pub fn linux_icmp_quote(datagram: &[u8]) -> &[u8] {
    &datagram[..datagram.len().min(LINUX_MAX_QUOTE)]
}

impl FrameRepr {
    /// An untagged RoCEv2 frame carrying one MAD (a UD SEND ONLY from QP1
    /// to QP1); the MAD bytes ([`crate::wire::cm::CmRepr::to_bytes`]) are
    /// the payload given to emit.
    pub fn mad(
        dst_mac: [u8; 6],
        src_mac: [u8; 6],
        ip: IpRepr,
        udp_sport: u16,
        psn: Psn,
    ) -> FrameRepr {
        FrameRepr::rocev2(dst_mac, src_mac, ip, udp_sport, MadRepr::gsi_packet(psn))
    }

    /// An untagged TCP segment; its payload is given to emit.
    pub fn tcp(dst_mac: [u8; 6], src_mac: [u8; 6], ip: IpRepr, tcp: TcpRepr) -> FrameRepr {
        FrameRepr::untagged(dst_mac, src_mac, NetRepr::Tcp { ip, tcp })
    }

    fn untagged(dst: [u8; 6], src: [u8; 6], net: NetRepr) -> FrameRepr {
        FrameRepr {
            eth: EthRepr { dst, src },
            vlans: Vlans::none(),
            net,
        }
    }

    /// An untagged ICMPv4 message; its data (a quote) is given to emit.
    pub fn icmpv4(dst_mac: [u8; 6], src_mac: [u8; 6], ip: Ipv4Repr, icmp: Icmpv4Repr) -> FrameRepr {
        let net = NetRepr::Icmpv4 {
            ip: IpRepr::V4(ip),
            icmp,
        };
        FrameRepr::untagged(dst_mac, src_mac, net)
    }

    /// An untagged RoCEv2 frame to UDP port 4791.
    pub fn rocev2(
        dst_mac: [u8; 6],
        src_mac: [u8; 6],
        ip: IpRepr,
        udp_sport: u16,
        ib: IbRepr,
    ) -> FrameRepr {
        FrameRepr {
            eth: EthRepr {
                dst: dst_mac,
                src: src_mac,
            },
            vlans: Vlans::none(),
            net: NetRepr::RoceV2 {
                ip,
                udp: UdpRepr {
                    src_port: udp_sport,
                    dst_port: ROCE_V2_UDP_DPORT,
                    checksum: 0,
                },
                int: None,
                ib,
            },
        }
    }

    /// The frame carrying telemetry `int`, as an INT source sends it: the
    /// UDP destination port moves into the shim (`int.orig_dport`) and the
    /// UDP header goes to [`INT_UDP_PORT`]. On a frame that carries
    /// telemetry already, `int` replaces it and the shim keeps the original
    /// port. Frames other than RoCEv2 come back as they were.
    pub fn with_int(mut self, mut int: IntRepr) -> FrameRepr {
        if let NetRepr::RoceV2 {
            udp, int: carried, ..
        } = &mut self.net
        {
            int.orig_dport = carried.map_or(udp.dst_port, |c| c.orig_dport);
            *carried = Some(int);
            udp.dst_port = INT_UDP_PORT;
        }
        self
    }

    /// An 802.1Qbb PFC frame from `src_mac` to the reserved PAUSE address.
    pub fn pfc(src_mac: [u8; 6], enable_vector: u8, times: [u16; 8]) -> FrameRepr {
        FrameRepr {
            eth: EthRepr {
                dst: PAUSE_DST_MAC,
                src: src_mac,
            },
            vlans: Vlans::none(),
            net: NetRepr::MacControl(MacControlRepr::Pfc {
                enable_vector: u16::from(enable_vector),
                times,
            }),
        }
    }

    /// An 802.3x PAUSE frame.
    pub fn pause(src_mac: [u8; 6], time: u16) -> FrameRepr {
        FrameRepr {
            eth: EthRepr {
                dst: PAUSE_DST_MAC,
                src: src_mac,
            },
            vlans: Vlans::none(),
            net: NetRepr::MacControl(MacControlRepr::Pause { time }),
        }
    }

    /// The IB packet of a RoCE frame.
    pub fn ib(&self) -> Option<&IbRepr> {
        match &self.net {
            NetRepr::RoceV2 { ib, .. } | NetRepr::RoceV1 { ib, .. } => Some(ib),
            _ => None,
        }
    }

    pub fn ib_mut(&mut self) -> Option<&mut IbRepr> {
        match &mut self.net {
            NetRepr::RoceV2 { ib, .. } | NetRepr::RoceV1 { ib, .. } => Some(ib),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arbitrary::defined_opcodes;

    #[test]
    fn new_passes_check_for_every_defined_opcode() {
        for op in defined_opcodes() {
            let info = Opcode(op).info().unwrap();
            let len = if info.headers.contains(HeaderSet::PAYLOAD) {
                13
            } else {
                0
            };
            IbRepr::new(Opcode(op), 1, Psn::new(2), len)
                .check()
                .unwrap_or_else(|e| panic!("{op:#x}: {e}"));
        }
    }

    /// `ack` builds its headers itself: the same value as `new`'s
    /// ACKNOWLEDGE with the AETH given, for any QPN, PSN and MSN (their
    /// top bytes dropped), and bytes that say so.
    #[test]
    fn ack_is_new_with_its_aeth() {
        use proptest::prelude::*;
        proptest!(|(qp: u32, psn in 0u32..1 << 24, raw: u8, msn: u32)| {
            let syndrome = Syndrome(raw);
            let a = IbRepr::ack(qp, Psn::new(psn), syndrome, msn);
            let b = IbRepr::new(Opcode(0x11), qp, Psn::new(psn), 0).with_aeth(AethRepr {
                syndrome,
                msn: msn & 0xFF_FFFF,
            });
            prop_assert_eq!(a, b);
            prop_assert_eq!(a.bth.dest_qp, qp & 0xFF_FFFF);
            prop_assert_eq!(a.ext.aeth().map(|h| h.msn), Some(msn & 0xFF_FFFF));
            prop_assert_eq!(a.buffer_len(), 12 + 4 + 4);
        });
    }

    #[test]
    fn cnp_matches_the_connectx_capture() {
        let c = IbRepr::cnp(0x118);
        assert!(c.bth.becn && !c.bth.fecn);
        assert_eq!(c.bth.pkey, 0xFFFF);
        assert_eq!(c.buffer_len(), 12 + 16 + 4);
    }
}
