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
use crate::wire::ieth::IethRepr;
use crate::wire::immdt::ImmDtRepr;
use crate::wire::mac_control::{MacControlRepr, OPCODE_PAUSE, OPCODE_PFC};
use crate::wire::opcode::{HeaderSet, Opcode};
use crate::wire::rdeth::RdethRepr;
use crate::wire::reth::RethRepr;
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
            ExtHeaders {
                rdeth: on(HeaderSet::RDETH).then_some(rd),
                deth: on(HeaderSet::DETH).then_some(de),
                xrceth: on(HeaderSet::XRCETH).then_some(xr),
                feth: on(HeaderSet::FETH).then_some(fe),
                reth: on(HeaderSet::RETH).then_some(re),
                atomic_eth: on(HeaderSet::ATOMIC_ETH).then_some(at),
                aeth: on(HeaderSet::AETH).then_some(ae),
                atomic_ack_eth: on(HeaderSet::ATOMIC_ACK_ETH).then_some(aa),
                immdt: on(HeaderSet::IMMDT).then_some(im),
                ieth: on(HeaderSet::IETH).then_some(ie),
                cnp: on(HeaderSet::CNP).then_some(cn),
            }
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
        .prop_map(|(ip, udp, (ib, p))| (NetRepr::RoceV2 { ip, udp, ib }, p));
    let v1 = (grh(), ib_repr(300).prop_flat_map(with_payload))
        .prop_map(|(grh, (ib, p))| (NetRepr::RoceV1 { grh, ib }, p));
    let macc = mac_control().prop_map(|m| (NetRepr::MacControl(m), Vec::new()));
    let not_roce = any::<u16>()
        .prop_filter("not RoCE", |p| *p != roce_port())
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
    let ip_other = (
        prop_oneof![
            any::<u8>()
                .prop_filter("not UDP", |p| *p != IP_PROTO_UDP)
                .prop_flat_map(|p| ipv4(p, true))
                .prop_map(IpRepr::V4),
            ipv4(IP_PROTO_UDP, true)
                .prop_filter("fragment", |h| h.more_fragments || h.fragment_offset != 0)
                .prop_map(IpRepr::V4),
            any::<u8>()
                .prop_filter("not UDP", |p| *p != IP_PROTO_UDP)
                .prop_flat_map(ipv6)
                .prop_map(IpRepr::V6),
        ],
        vec(any::<u8>(), 0..200),
    )
        .prop_map(|(ip, p)| (NetRepr::Ip { ip, udp: None }, p));
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
        prop_oneof![4 => v2, 1 => v1, 1 => macc, 1 => ip_udp, 1 => ip_other, 1 => other],
    )
        .prop_map(|(eth, vlans, (net, payload))| (FrameRepr { eth, vlans, net }, payload))
}
