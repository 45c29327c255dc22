//! proptest strategies for every repr, for round-trip and no-panic tests
//! here and in the other crates (feature `proptest`).

use core::net::{Ipv4Addr, Ipv6Addr};

use proptest::collection::vec;
use proptest::prelude::*;

use crate::frame::*;
use crate::psn::Psn;
use crate::wire::aeth::{AethRepr, Syndrome};
use crate::wire::atomic_ack_eth::AtomicAckEthRepr;
use crate::wire::atomic_eth::AtomicEthRepr;
use crate::wire::bth::BthRepr;
use crate::wire::cnp::CnpRepr;
use crate::wire::deth::DethRepr;
use crate::wire::feth::FethRepr;
use crate::wire::grh::GrhRepr;
use crate::wire::ib::{ExtHeaders, IbRepr, pad_for};
use crate::wire::icmpv4::{IP_PROTO_ICMP, Icmpv4Repr};
use crate::wire::ieth::IethRepr;
use crate::wire::immdt::ImmDtRepr;
use crate::wire::int::{INT_UDP_PORT, IntHopRepr, IntRepr, MAX_HOPS};
use crate::wire::mac_control::{MacControlRepr, OPCODE_PAUSE, OPCODE_PFC};
use crate::wire::opcode::{HeaderSet, Opcode};
use crate::wire::rdeth::RdethRepr;
use crate::wire::reth::RethRepr;
use crate::wire::tcp::{IP_PROTO_TCP, TcpRepr};
use crate::wire::xrceth::XrcethRepr;

/// Every opcode byte with a table entry.
pub fn defined_opcodes() -> Vec<u8> {
    (0..=255u8)
        .filter(|&o| Opcode(o).info().is_some())
        .collect()
}

pub fn psn() -> impl Strategy<Value = Psn> {
    (0u32..=Psn::MASK).prop_map(Psn::new)
}

/// A BTH with the given opcode; PadCnt 0 (callers set it from the payload).
pub fn bth(opcode: u8, tver: u8) -> impl Strategy<Value = BthRepr> {
    (
        any::<[bool; 5]>(),
        any::<u16>(),
        0u32..=0xFF_FFFF,
        psn(),
        0u8..0x40,
        0u8..0x80,
    )
        .prop_map(move |(b, pkey, dest_qp, psn, resv6, resv7)| BthRepr {
            opcode: Opcode(opcode),
            solicited_event: b[0],
            mig_req: b[1],
            pad_count: 0,
            tver,
            pkey,
            fecn: b[2],
            becn: b[3],
            resv6,
            dest_qp,
            ack_req: b[4],
            resv7,
            psn,
        })
}

/// Extended headers for a header set, every field arbitrary.
pub fn ext_headers(set: HeaderSet) -> impl Strategy<Value = ExtHeaders> {
    let u24 = || 0u32..=0xFF_FFFF;
    (
        (any::<u8>(), u24()).prop_map(|(resv, ee_context)| RdethRepr { resv, ee_context }),
        (any::<u32>(), any::<u8>(), u24()).prop_map(|(qkey, resv, src_qp)| DethRepr {
            qkey,
            resv,
            src_qp,
        }),
        (any::<u8>(), u24()).prop_map(|(resv, xrc_srq)| XrcethRepr { resv, xrc_srq }),
        any::<u32>().prop_map(|raw| FethRepr { raw }),
        (any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(va, rkey, dma_len)| RethRepr {
            va,
            rkey,
            dma_len,
        }),
        (any::<u64>(), any::<u32>(), any::<u64>(), any::<u64>()).prop_map(
            |(va, rkey, swap_add, compare)| AtomicEthRepr {
                va,
                rkey,
                swap_add,
                compare,
            },
        ),
        (any::<u8>(), u24()).prop_map(|(s, msn)| AethRepr {
            syndrome: Syndrome(s),
            msn,
        }),
        any::<u64>().prop_map(|orig| AtomicAckEthRepr { orig }),
        any::<u32>().prop_map(|data| ImmDtRepr { data }),
        any::<u32>().prop_map(|rkey| IethRepr { rkey }),
        any::<[u8; 16]>().prop_map(|reserved| CnpRepr { reserved }),
    )
        .prop_map(move |(rd, de, xr, fe, re, at, ae, aa, im, ie, cn)| {
            let on = |f: HeaderSet| set.contains(f);
            let mut ext = ExtHeaders::default();
            ext.set_rdeth(on(HeaderSet::RDETH).then_some(rd));
            ext.set_deth(on(HeaderSet::DETH).then_some(de));
            ext.set_xrceth(on(HeaderSet::XRCETH).then_some(xr));
            ext.set_feth(on(HeaderSet::FETH).then_some(fe));
            ext.set_reth(on(HeaderSet::RETH).then_some(re));
            ext.set_atomic_eth(on(HeaderSet::ATOMIC_ETH).then_some(at));
            ext.set_aeth(on(HeaderSet::AETH).then_some(ae));
            ext.set_atomic_ack_eth(on(HeaderSet::ATOMIC_ACK_ETH).then_some(aa));
            ext.set_immdt(on(HeaderSet::IMMDT).then_some(im));
            ext.set_ieth(on(HeaderSet::IETH).then_some(ie));
            ext.set_cnp(on(HeaderSet::CNP).then_some(cn));
            ext
        })
}

/// An IB packet that decodes back to itself: a defined opcode with its
/// headers and a payload where allowed, or (one in eight) an opaque packet
/// with a reserved opcode or TVer ≠ 0.
pub fn ib_repr(max_payload: u32) -> impl Strategy<Value = IbRepr> {
    let defined = defined_opcodes();
    let known = proptest::sample::select(defined).prop_flat_map(move |op| {
        let info = Opcode(op).info().unwrap();
        let payload = if info.headers.contains(HeaderSet::PAYLOAD) {
            0..=max_payload
        } else {
            0..=0
        };
        (bth(op, 0), ext_headers(info.headers), payload).prop_map(|(mut bth, ext, payload_len)| {
            bth.pad_count = pad_for(payload_len);
            IbRepr {
                bth,
                ext,
                payload_len,
            }
        })
    });
    let opaque = (any::<u8>(), 0u8..16)
        .prop_filter("reserved opcode or TVer != 0", |(op, tver)| {
            Opcode(*op).info().is_none() || *tver != 0
        })
        .prop_flat_map(move |(op, tver)| (bth(op, tver), 0..=max_payload, 0u8..4))
        .prop_map(|(mut bth, payload_len, pad)| {
            bth.pad_count = pad;
            IbRepr {
                bth,
                ext: ExtHeaders::default(),
                payload_len,
            }
        });
    prop_oneof![7 => known, 1 => opaque]
}

pub fn vlans() -> impl Strategy<Value = Vlans> {
    let tag = (
        prop_oneof![Just(ETHERTYPE_VLAN), Just(ETHERTYPE_QINQ)],
        0u8..8,
        any::<bool>(),
        0u16..4096,
    )
        .prop_map(|(tpid, pcp, dei, vid)| VlanTag {
            tpid,
            pcp,
            dei,
            vid,
        });
    prop_oneof![
        Just(Vlans::none()),
        tag.clone().prop_map(Vlans::one),
        (tag.clone(), tag).prop_map(|(a, b)| Vlans::two(a, b)),
    ]
}

fn ipv4(protocol: u8, may_fragment: bool) -> impl Strategy<Value = Ipv4Repr> {
    (
        (
            0u8..64,
            0u8..4,
            any::<u16>(),
            any::<[bool; 2]>(),
            0u16..0x2000,
            any::<u8>(),
        ),
        (any::<[u8; 4]>(), any::<[u8; 4]>()),
        (0usize..=10).prop_flat_map(|words| vec(any::<u8>(), words * 4)),
    )
        .prop_map(
            move |((dscp, ecn, id, flags, frag, ttl), (s, d), opts)| Ipv4Repr {
                dscp,
                ecn,
                identification: id,
                dont_fragment: flags[0],
                more_fragments: may_fragment && flags[1],
                fragment_offset: if may_fragment { frag } else { 0 },
                ttl,
                protocol,
                src: Ipv4Addr::from(s),
                dst: Ipv4Addr::from(d),
                options: Ipv4Options::new(&opts).unwrap(),
                checksum_override: None,
            },
        )
}

fn ipv6(next_header: u8) -> impl Strategy<Value = Ipv6Repr> {
    (
        0u8..64,
        0u8..4,
        0u32..0x10_0000,
        any::<u8>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
    )
        .prop_map(move |(dscp, ecn, flow_label, hop_limit, s, d)| Ipv6Repr {
            dscp,
            ecn,
            flow_label,
            next_header,
            hop_limit,
            src: Ipv6Addr::from(s),
            dst: Ipv6Addr::from(d),
        })
}

/// A TCP header with options of every length; the checksum computed.
pub fn tcp() -> impl Strategy<Value = TcpRepr> {
    (
        (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>()),
        (0u16..0x1000, any::<u16>(), any::<u16>()),
        (0usize..=10).prop_flat_map(|words| vec(any::<u8>(), words * 4)),
    )
        .prop_map(|((sp, dp, seq, ack), (flags, window, urgent), o)| TcpRepr {
            src_port: sp,
            dst_port: dp,
            seq,
            ack,
            flags,
            window,
            urgent,
            options: Ipv4Options::new(&o).unwrap(),
            checksum_override: None,
        })
}

/// An ICMPv4 header of any type; the checksum computed.
pub fn icmpv4() -> impl Strategy<Value = Icmpv4Repr> {
    (any::<u8>(), any::<u8>(), any::<u32>()).prop_map(|(icmp_type, code, rest)| Icmpv4Repr {
        icmp_type,
        code,
        rest,
        checksum_override: None,
    })
}

fn roce_ip() -> impl Strategy<Value = IpRepr> {
    prop_oneof![
        ipv4(IP_PROTO_UDP, false).prop_map(IpRepr::V4),
        ipv6(IP_PROTO_UDP).prop_map(IpRepr::V6)
    ]
}

fn grh() -> impl Strategy<Value = GrhRepr> {
    (
        any::<u8>(),
        0u32..0x10_0000,
        any::<u8>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
    )
        .prop_map(
            |(traffic_class, flow_label, hop_limit, sgid, dgid)| GrhRepr {
                traffic_class,
                flow_label,
                hop_limit,
                sgid,
                dgid,
                ..GrhRepr::default()
            },
        )
}

pub fn mac_control() -> impl Strategy<Value = MacControlRepr> {
    prop_oneof![
        any::<u16>().prop_map(|time| MacControlRepr::Pause { time }),
        (any::<u16>(), any::<[u16; 8]>()).prop_map(|(enable_vector, times)| MacControlRepr::Pfc {
            enable_vector,
            times
        }),
        any::<u16>()
            .prop_filter("not PAUSE/PFC", |o| *o != OPCODE_PAUSE && *o != OPCODE_PFC)
            .prop_map(|opcode| MacControlRepr::Unknown { opcode }),
    ]
}

/// One switch's telemetry record, any field value.
pub fn int_hop() -> impl Strategy<Value = IntHopRepr> {
    (0u8..8, 0u32..1 << 24, 0u32..1 << 20, 0u32..1 << 17).prop_map(
        |(rate_code, time, tx_bytes, qlen)| IntHopRepr {
            rate_code,
            time,
            tx_bytes,
            qlen,
        },
    )
}

/// A telemetry stack as switches leave it (0 to [`MAX_HOPS`] records,
/// maybe one push too many, so the E bit) or as a receiver echoes it.
pub fn int_repr() -> impl Strategy<Value = IntRepr> {
    (
        vec(int_hop(), 0..=MAX_HOPS),
        any::<u16>(),
        any::<u8>(),
        0u8..4,
        any::<bool>(),
    )
        .prop_map(|(hops, orig_dport, multi, spare, echo)| {
            let mut r =
                IntRepr::source(orig_dport, (hops.len() as u8).saturating_add(spare), multi);
            for h in &hops {
                r.push(*h);
            }
            if echo { r.echo_of(orig_dport) } else { r }
        })
}

fn roce_port() -> u16 {
    crate::hash::ROCE_V2_UDP_DPORT
}

/// A whole frame and the payload to emit it with. Every frame this produces
/// decodes back to the same repr with the default options.
pub fn frame() -> impl Strategy<Value = (FrameRepr, Vec<u8>)> {
    let eth = (any::<[u8; 6]>(), any::<[u8; 6]>()).prop_map(|(dst, src)| EthRepr { dst, src });
    let udp = |dst: BoxedStrategy<u16>| {
        (any::<u16>(), dst, any::<u16>()).prop_map(|(src_port, dst_port, checksum)| UdpRepr {
            src_port,
            dst_port,
            checksum,
        })
    };
    let with_payload = |ib: IbRepr| {
        let n = ib.payload_len as usize;
        vec(any::<u8>(), n).prop_map(move |p| (ib, p))
    };
    let v2 = (
        roce_ip(),
        udp(Just(roce_port()).boxed()),
        ib_repr(300).prop_flat_map(with_payload),
    )
        .prop_map(|(ip, udp, (ib, p))| {
            let int = None;
            (NetRepr::RoceV2 { ip, udp, int, ib }, p)
        });
    let v2_int = (
        roce_ip(),
        udp(Just(INT_UDP_PORT).boxed()),
        int_repr(),
        ib_repr(300).prop_flat_map(with_payload),
    )
        .prop_map(|(ip, udp, int, (ib, p))| {
            let int = Some(int);
            (NetRepr::RoceV2 { ip, udp, int, ib }, p)
        });
    let v1 = (grh(), ib_repr(300).prop_flat_map(with_payload))
        .prop_map(|(grh, (ib, p))| (NetRepr::RoceV1 { grh, ib }, p));
    let macc = mac_control().prop_map(|m| (NetRepr::MacControl(m), Vec::new()));
    let not_roce = any::<u16>()
        .prop_filter("not RoCE", |p| *p != roce_port() && *p != INT_UDP_PORT)
        .boxed();
    let ip_udp = (
        prop_oneof![
            ipv4(IP_PROTO_UDP, false).prop_map(IpRepr::V4),
            ipv6(IP_PROTO_UDP).prop_map(IpRepr::V6)
        ],
        udp(not_roce),
        vec(any::<u8>(), 0..200),
    )
        .prop_map(|(ip, u, p)| (NetRepr::Ip { ip, udp: Some(u) }, p));
    let decoded = |p: &u8| [IP_PROTO_UDP, IP_PROTO_TCP, IP_PROTO_ICMP].contains(p);
    let ip_other = (
        prop_oneof![
            any::<u8>()
                .prop_filter("not decoded", move |p| !decoded(p))
                .prop_flat_map(|p| ipv4(p, true))
                .prop_map(IpRepr::V4),
            prop_oneof![Just(IP_PROTO_UDP), Just(IP_PROTO_TCP), Just(IP_PROTO_ICMP)]
                .prop_flat_map(|p| ipv4(p, true))
                .prop_filter("fragment", |h| h.more_fragments || h.fragment_offset != 0)
                .prop_map(IpRepr::V4),
            any::<u8>()
                .prop_filter("not UDP or TCP", |p| ![IP_PROTO_UDP, IP_PROTO_TCP]
                    .contains(p))
                .prop_flat_map(ipv6)
                .prop_map(IpRepr::V6),
        ],
        vec(any::<u8>(), 0..200),
    )
        .prop_map(|(ip, p)| (NetRepr::Ip { ip, udp: None }, p));
    let ip_tcp = (
        prop_oneof![
            ipv4(IP_PROTO_TCP, false).prop_map(IpRepr::V4),
            ipv6(IP_PROTO_TCP).prop_map(IpRepr::V6)
        ],
        tcp(),
        vec(any::<u8>(), 0..200),
    )
        .prop_map(|(ip, tcp, p)| (NetRepr::Tcp { ip, tcp }, p));
    let ip_icmp = (
        ipv4(IP_PROTO_ICMP, false).prop_map(IpRepr::V4),
        icmpv4(),
        vec(any::<u8>(), 0..200),
    )
        .prop_map(|(ip, icmp, p)| (NetRepr::Icmpv4 { ip, icmp }, p));
    let other = (
        any::<u16>().prop_filter("opaque EtherType", |t| {
            !matches!(
                *t,
                ETHERTYPE_IPV4
                    | ETHERTYPE_IPV6
                    | ETHERTYPE_ROCE_V1
                    | ETHERTYPE_VLAN
                    | ETHERTYPE_QINQ
                    | 0x9100
                    | 0x8808
            )
        }),
        vec(any::<u8>(), 0..100),
    )
        .prop_map(|(ethertype, p)| (NetRepr::Other { ethertype }, p));
    (
        eth,
        vlans(),
        prop_oneof![
            4 => v2,
            2 => v2_int,
            1 => v1,
            1 => macc,
            1 => ip_udp,
            1 => ip_other,
            1 => ip_tcp,
            1 => ip_icmp,
            1 => other
        ],
    )
        .prop_map(|(eth, vlans, (net, payload))| (FrameRepr { eth, vlans, net }, payload))
}

fn cm_path() -> impl Strategy<Value = crate::wire::cm::CmPath> {
    (
        (
            any::<u16>(),
            any::<u16>(),
            any::<[u8; 16]>(),
            any::<[u8; 16]>(),
        ),
        (0u32..0x10_0000, 0u8..0x40, any::<u8>(), any::<u8>()),
        (0u8..16, any::<bool>(), 0u8..32),
    )
        .prop_map(|((ll, rl, lg, rg), (fl, rate, tc, hl), (sl, sub, ack))| {
            crate::wire::cm::CmPath {
                local_lid: ll,
                remote_lid: rl,
                local_gid: lg,
                remote_gid: rg,
                flow_label: fl,
                packet_rate: rate,
                traffic_class: tc,
                hop_limit: hl,
                sl,
                subnet_local: sub,
                local_ack_timeout: ack,
            }
        })
}

fn bytes<const N: usize>() -> impl Strategy<Value = [u8; N]> {
    vec(any::<u8>(), N).prop_map(|v| v.try_into().expect("N bytes"))
}

/// Every CM message with every field drawn over its full width (reserved
/// bits zero, as emit writes them).
pub fn cm_message() -> impl Strategy<Value = crate::wire::cm::CmMessage> {
    use crate::wire::cm::*;
    let ids = (any::<u32>(), any::<u32>());
    let req = (
        (
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
        ),
        (
            0u32..0x100_0000,
            any::<u8>(),
            0u32..0x100_0000,
            any::<u8>(),
            0u32..0x100_0000,
        ),
        (
            0u8..32,
            0u8..4,
            any::<bool>(),
            0u32..0x100_0000,
            0u8..32,
            0u8..8,
        ),
        (
            any::<u16>(),
            0u8..16,
            any::<bool>(),
            0u8..8,
            0u8..16,
            any::<bool>(),
            0u8..8,
        ),
        (cm_path(), cm_path(), bytes::<92>()),
    )
        .prop_map(|(a, b, c, d, e)| {
            CmMessage::Req(CmReq {
                local_comm_id: a.0,
                reserved4: a.1,
                service_id: a.2,
                local_ca_guid: a.3,
                local_qkey: a.4,
                local_qpn: b.0,
                responder_resources: b.1,
                local_eecn: b.2,
                initiator_depth: b.3,
                remote_eecn: b.4,
                remote_cm_response_timeout: c.0,
                transport_type: c.1,
                end_to_end_flow_control: c.2,
                starting_psn: c.3,
                local_cm_response_timeout: c.4,
                retry_count: c.5,
                pkey: d.0,
                path_mtu: d.1,
                rdc_exists: d.2,
                rnr_retry_count: d.3,
                max_cm_retries: d.4,
                srq: d.5,
                extended_transport: d.6,
                primary_path: e.0,
                alternate_path: e.1,
                private_data: e.2,
            })
        });
    let mra = (ids, 0u8..4, 0u8..32, bytes::<222>()).prop_map(|((l, r), m, t, p)| {
        CmMessage::Mra(CmMra {
            local_comm_id: l,
            remote_comm_id: r,
            message_mraed: m,
            service_timeout: t,
            private_data: p,
        })
    });
    let rej = (
        ids,
        (0u8..4, 0u8..128, any::<u16>()),
        bytes::<72>(),
        bytes::<148>(),
    )
        .prop_map(|((l, r), (m, n, reason), ari, p)| {
            CmMessage::Rej(CmRej {
                local_comm_id: l,
                remote_comm_id: r,
                message_rejected: m,
                reject_info_length: n,
                reason: RejReason::from_code(reason),
                ari,
                private_data: p,
            })
        });
    let rep = (
        (
            ids,
            any::<u32>(),
            0u32..0x100_0000,
            0u32..0x100_0000,
            0u32..0x100_0000,
        ),
        (
            any::<u8>(),
            any::<u8>(),
            0u8..32,
            0u8..4,
            any::<bool>(),
            0u8..8,
            any::<bool>(),
        ),
        (0u32..0x100_0000, any::<u64>(), bytes::<196>()),
    )
        .prop_map(|(a, b, c)| {
            CmMessage::Rep(CmRep {
                local_comm_id: a.0.0,
                remote_comm_id: a.0.1,
                local_qkey: a.1,
                local_qpn: a.2,
                local_eecn: a.3,
                starting_psn: a.4,
                responder_resources: b.0,
                initiator_depth: b.1,
                target_ack_delay: b.2,
                failover_accepted: b.3,
                end_to_end_flow_control: b.4,
                rnr_retry_count: b.5,
                srq: b.6,
                vendor_id: c.0,
                local_ca_guid: c.1,
                private_data: c.2,
            })
        });
    let rtu = (ids, bytes::<224>(), any::<bool>()).prop_map(|((l, r), p, drep)| {
        let m = CmRtu {
            local_comm_id: l,
            remote_comm_id: r,
            private_data: p,
        };
        if drep {
            CmMessage::Drep(m)
        } else {
            CmMessage::Rtu(m)
        }
    });
    let dreq = (ids, 0u32..0x100_0000, bytes::<220>()).prop_map(|((l, r), q, p)| {
        CmMessage::Dreq(CmDreq {
            local_comm_id: l,
            remote_comm_id: r,
            remote_qpn: q,
            private_data: p,
        })
    });
    prop_oneof![req, mra, rej, rep, rtu, dreq]
}
