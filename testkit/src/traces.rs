//! The generator of the captures in `traces/` (see `traces/README.md`).
//!
//! Every frame is built with the codec's builders (`roce_codec::build`) and
//! written through [`Synth`], one file each, except the link types and
//! timestamp resolution the capture writer does not produce (Linux cooked
//! SLL/SLL2, microsecond pcap), which go through [`crate::pcap::raw_pcap`].
//! Malformed frames start as valid ones and get one field broken by hand.
//!
//! ```text
//!  generate(dir) ── opcodes  rc_flow  vlan_ipv6_ecn  rocev1  pfc_pause  malformed  truncated
//!               │     └──────────── Synth, frames 1 µs (+17 ns per frame) apart from T0
//!               ├── sll  sll2  usec
//!               │     └──────────── raw_pcap, frames 1 ms apart from T0
//!               └── setup: connection set-up (crate::setup), times as a host sees them
//! ```
//!
//! Nothing here is random or depends on the clock, so the files are the same
//! byte for byte on every run; `analyzer/tests/dissect_traces.rs` regenerates
//! them into a temporary directory and compares with the committed files,
//! and rewrites `traces/` when run as
//! `cargo test -p roce-pcap --test dissect_traces -- --ignored regenerate`.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use pcap_file::{DataLink, Endianness, TsResolution};
use roce_capture::write::CaptureFormat;
use roce_codec::*;

use crate::pcap::raw_pcap;
use crate::synth::Synth;

/// The files of the corpus, in the order they are written.
pub const FILES: &[&str] = &[
    "opcodes.pcap",
    "rc_flow.pcapng",
    "vlan_ipv6_ecn.pcapng",
    "rocev1.pcap",
    "pfc_pause.pcap",
    "malformed.pcap",
    "truncated.pcap",
    "sll.pcap",
    "sll2.pcap",
    "usec.pcap",
    "setup.pcap",
];

/// Writes every file of [`FILES`] into `dir`.
pub fn generate(dir: &Path) -> io::Result<()> {
    opcodes(&dir.join("opcodes.pcap"))?;
    rc_flow(&dir.join("rc_flow.pcapng"))?;
    vlan_ipv6_ecn(&dir.join("vlan_ipv6_ecn.pcapng"))?;
    rocev1(&dir.join("rocev1.pcap"))?;
    pfc_pause(&dir.join("pfc_pause.pcap"))?;
    malformed(&dir.join("malformed.pcap"))?;
    truncated(&dir.join("truncated.pcap"))?;
    cooked(&dir.join("sll.pcap"), DataLink::LINUX_SLL)?;
    cooked(&dir.join("sll2.pcap"), DataLink::LINUX_SLL2)?;
    usec(&dir.join("usec.pcap"))?;
    setup(&dir.join("setup.pcap"))?;
    Ok(())
}

const MAC_A: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x0a];
const MAC_B: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x0b];
const IP_A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const IP_B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const IP6_A: Ipv6Addr = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 0xa);
const IP6_B: Ipv6Addr = Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 0xb);
/// Capture start: 2024-01-02 03:04:05 UTC, with nanoseconds so that a
/// microsecond reader would show the difference.
const T0: u64 = 1_704_164_645_000_000_000 + 123_456_789;
/// A payload buffer every frame takes its first bytes from.
static PAYLOAD: [u8; 4096] = {
    let mut p = [0u8; 4096];
    let mut i = 0;
    while i < p.len() {
        p[i] = (i * 7 + 3) as u8;
        i += 1;
    }
    p
};

/// A tiny deterministic sequence of distinctive field values.
fn val(seed: u64, salt: u64) -> u64 {
    let mut x = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(salt.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 29)
}

/// Fills every extended header the packet has with distinctive values, so
/// that a field read from the wrong bytes shows in a comparison.
fn fill(ib: &mut IbRepr, seed: u64) {
    let v = |salt| val(seed, salt);
    let x = &mut ib.ext;
    if let Some(mut h) = x.rdeth() {
        h.ee_context = v(1) as u32 & 0xFF_FFFF;
        x.set_rdeth(Some(h));
    }
    if let Some(mut h) = x.deth() {
        h.qkey = v(2) as u32;
        h.src_qp = v(3) as u32 & 0xFF_FFFF;
        x.set_deth(Some(h));
    }
    if let Some(mut h) = x.xrceth() {
        h.xrc_srq = v(4) as u32 & 0xFF_FFFF;
        x.set_xrceth(Some(h));
    }
    if let Some(mut h) = x.feth() {
        h.raw = 0x0000_0012;
        x.set_feth(Some(h));
    }
    if x.reth().is_some() {
        x.set_reth(Some(RethRepr {
            va: v(5),
            rkey: v(6) as u32,
            dma_len: v(7) as u32 & 0xFFFF,
        }));
    }
    if x.atomic_eth().is_some() {
        x.set_atomic_eth(Some(AtomicEthRepr {
            va: v(8) & !7,
            rkey: v(9) as u32,
            swap_add: v(10),
            compare: v(11),
        }));
    }
    if x.aeth().is_some() {
        x.set_aeth(Some(AethRepr {
            syndrome: Syndrome(v(12) as u8 & 0x7F),
            msn: v(13) as u32 & 0xFF_FFFF,
        }));
    }
    if let Some(mut h) = x.atomic_ack_eth() {
        h.orig = v(14);
        x.set_atomic_ack_eth(Some(h));
    }
    if let Some(mut h) = x.immdt() {
        h.data = v(15) as u32;
        x.set_immdt(Some(h));
    }
    if let Some(mut h) = x.ieth() {
        h.rkey = v(16) as u32;
        x.set_ieth(Some(h));
    }
}

/// A packet of `opcode` with distinctive BTH and header values.
fn packet(opcode: u8, seed: u64, payload_len: u32) -> IbRepr {
    let op = Opcode(opcode);
    let carries = op
        .info()
        .is_none_or(|i| i.headers.contains(HeaderSet::PAYLOAD));
    let len = if carries { payload_len } else { 0 };
    let mut ib = IbRepr::new(
        op,
        val(seed, 20) as u32,
        Psn::new(val(seed, 21) as u32),
        len,
    );
    ib.bth.solicited_event = seed % 3 == 0;
    ib.bth.mig_req = seed % 2 == 1;
    ib.bth.ack_req = seed % 4 < 2;
    ib.bth.fecn = seed % 5 == 0;
    ib.bth.becn |= seed % 7 == 0;
    ib.bth.pkey = if seed % 2 == 0 { 0xFFFF } else { 0x8001 };
    fill(&mut ib, seed);
    ib
}

fn v4(dscp: u8, ecn: u8) -> IpRepr {
    IpRepr::V4(Ipv4Repr::udp(IP_A, IP_B, dscp, ecn))
}

fn v6(dscp: u8, ecn: u8, flow_label: u32) -> IpRepr {
    IpRepr::V6(Ipv6Repr {
        dscp,
        ecn,
        flow_label,
        next_header: 17,
        hop_limit: 64,
        src: IP6_A,
        dst: IP6_B,
    })
}

fn rocev2(ip: IpRepr, ib: IbRepr) -> FrameRepr {
    let sport = hash::roce_udp_sport(0, 0x11, ib.bth.dest_qp.max(1));
    FrameRepr::rocev2(MAC_B, MAC_A, ip, sport, ib)
}

/// A frame from A to B with no tags.
fn untagged(net: NetRepr) -> FrameRepr {
    FrameRepr {
        eth: EthRepr {
            dst: MAC_B,
            src: MAC_A,
        },
        vlans: Vlans::none(),
        net,
    }
}

fn bytes(f: &FrameRepr) -> Vec<u8> {
    f.to_vec(&PAYLOAD)
}

/// One corpus file: a [`Synth`] of one file, named after it, and the clock
/// that stamps its frames from [`T0`] on, 1 µs apart plus 17 ns per frame
/// written (so that intervals differ).
struct Out {
    s: Synth,
    t: u64,
}

impl Out {
    fn create(path: &Path, format: CaptureFormat, snaplen: u32) -> io::Result<Out> {
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("trace");
        Ok(Out {
            s: Synth::create_named(&[(path, format, snaplen, name)])?,
            t: T0,
        })
    }

    fn tick(&mut self) {
        self.t += 1_000 + self.s.truth[0].packets * 17;
    }

    /// Bytes as they are (broken by hand).
    fn put(&mut self, frame: &[u8]) -> io::Result<()> {
        self.s.raw(0, self.t, frame)?;
        self.tick();
        Ok(())
    }

    fn repr(&mut self, f: &FrameRepr) -> io::Result<()> {
        self.s.record(0, self.t, f, &f.to_vec(&PAYLOAD))?;
        self.tick();
        Ok(())
    }

    fn finish(self) -> io::Result<()> {
        self.s.finish().map(drop)
    }
}

/// Every opcode byte the codec knows, then reserved ones and TVer 1.
fn opcodes(path: &Path) -> io::Result<()> {
    let mut out = Out::create(path, CaptureFormat::Pcap, 0)?;
    let mut seed = 1;
    for op in 0..=255u8 {
        if Opcode(op).info().is_none() {
            continue;
        }
        // Payload lengths 0..=3 modulo 4 exercise every PadCnt.
        let ib = packet(op, seed, 13 + (seed as u32 % 4) * 9);
        out.repr(&rocev2(v4(26, 2), ib))?;
        seed += 1;
    }
    for op in [
        0x15u8, 0x18, 0x1E, 0x1F, 0x2C, 0x56, 0x66, 0x80, 0x82, 0xC0, 0xFF,
    ] {
        out.repr(&rocev2(v4(26, 2), packet(op, seed, 20)))?;
        seed += 1;
    }
    // TVer 1: the header layout is unknown, so only the BTH decodes.
    let mut ib = packet(0x0A, seed, 32);
    ib.bth.tver = 1;
    out.repr(&rocev2(v4(26, 2), ib))?;
    out.finish()
}

/// One RC connection doing what RC does: a 10000-byte WRITE at MTU 4096,
/// SENDs, a READ, atomics, a NAK and its go-back-N, an RNR NAK, a CNP.
fn rc_flow(path: &Path) -> io::Result<()> {
    let mut out = Out::create(path, CaptureFormat::PcapNg, 0)?;
    let (qa, qb) = (0x11u32, 0x12u32);
    let sport = hash::roce_udp_sport(0, qa, qb);
    // Requests from A to QP qb (with an ECN codepoint), responses back to qa.
    let fwd = |ib: IbRepr, ecn: u8| FrameRepr::rocev2(MAC_B, MAC_A, v4(26, ecn), sport, ib);
    let back = |ib: IbRepr| {
        let ip = IpRepr::V4(Ipv4Repr::udp(IP_B, IP_A, 26, 2));
        FrameRepr::rocev2(MAC_A, MAC_B, ip, sport, ib)
    };
    let req = |op, p, len| IbRepr::new(Opcode(op), qb, Psn::new(p), len);
    let resp = |op, p, len| IbRepr::new(Opcode(op), qa, Psn::new(p), len);
    let nak = |p, syndrome, msn| IbRepr::ack(qa, Psn::new(p), syndrome, msn);
    let ack = |p, msn| nak(p, Syndrome::ACK_NO_CREDITS, msn);
    let aeth = |msn| AethRepr {
        syndrome: Syndrome::ACK_NO_CREDITS,
        msn,
    };
    let mut put = |f: FrameRepr| out.repr(&f);
    let mut psn = 100u32;
    // RDMA WRITE 10000 B: FIRST 4096 (+RETH), MIDDLE 4096, LAST 1808.
    let reth = RethRepr {
        va: 0x7f00_dead_0000,
        rkey: 0x1234,
        dma_len: 10000,
    };
    put(fwd(req(0x06, psn, 4096).with_reth(reth), 2))?;
    put(fwd(req(0x07, psn + 1, 4096), 3))?;
    put(fwd(req(0x08, psn + 2, 1808).with_ack_req(true), 2))?;
    // The responder saw CE on the MIDDLE: CNP to the requester QP.
    put(back(IbRepr::cnp(qa)))?;
    put(back(ack(psn + 2, 1)))?;
    psn += 3;
    // SEND with immediate, 3 packets, one lost: NAK PSN sequence error.
    let last = req(0x03, psn + 2, 77)
        .with_immdt(0xCAFE_F00D)
        .with_ack_req(true);
    put(fwd(req(0x00, psn, 1024), 2))?;
    put(fwd(last, 2))?;
    put(back(nak(psn + 1, Syndrome::NAK_PSN_SEQUENCE_ERROR, 1)))?;
    put(fwd(req(0x01, psn + 1, 1024), 2))?;
    put(fwd(last, 2))?;
    put(back(ack(psn + 2, 2)))?;
    psn += 3;
    // RNR NAK (timer code 14 = 1.28 ms), then the retry succeeds.
    put(fwd(req(0x04, psn, 64).with_ack_req(true), 2))?;
    put(back(nak(psn, Syndrome::rnr_nak(14), 2)))?;
    put(fwd(req(0x04, psn, 64).with_ack_req(true), 2))?;
    put(back(ack(psn, 3)))?;
    psn += 1;
    // RDMA READ of 5000 B: one request, two responses, PSNs reserved.
    let read = RethRepr {
        va: 0x7f00_beef_0000,
        rkey: 0x4321,
        dma_len: 5000,
    };
    put(fwd(req(0x0C, psn, 0).with_reth(read).with_ack_req(true), 2))?;
    put(back(resp(0x0D, psn, 4096).with_aeth(aeth(4))))?;
    put(back(resp(0x0F, psn + 1, 904).with_aeth(aeth(4))))?;
    psn += 2;
    // FETCH_ADD and its atomic ACK.
    let fetch_add = AtomicEthRepr {
        va: 0x7f00_0000_1000,
        rkey: 0x55,
        swap_add: 1,
        compare: 0,
    };
    put(fwd(
        req(0x14, psn, 0)
            .with_atomic_eth(fetch_add)
            .with_ack_req(true),
        2,
    ))?;
    put(back(
        resp(0x12, psn, 0)
            .with_aeth(aeth(5))
            .with_atomic_ack_eth(41),
    ))?;
    out.finish()
}

/// VLAN and QinQ tags, IPv6, every ECN codepoint, a CNP at DSCP 48.
fn vlan_ipv6_ecn(path: &Path) -> io::Result<()> {
    let mut out = Out::create(path, CaptureFormat::PcapNg, 0)?;
    let mut seed = 500;
    for ecn in 0..4u8 {
        let mut f = rocev2(v4(26, ecn), packet(0x04, seed, 100));
        f.vlans = Vlans::one(VlanTag::dot1q(100 + u16::from(ecn), 3));
        out.repr(&f)?;
        out.repr(&rocev2(v6(26, ecn, 0x12345), packet(0x0A, seed + 1, 256)))?;
        seed += 2;
    }
    // CNPs as a ConnectX NP sends them: DSCP 48, priority 6.
    let mut cnp = rocev2(v4(48, 2), IbRepr::cnp(0x118));
    cnp.vlans = Vlans::one(VlanTag::dot1q(100, 6));
    out.repr(&cnp)?;
    out.repr(&rocev2(v6(48, 2, 0), IbRepr::cnp(0xABCDE)))?;
    // 802.1ad outer tag and 802.1Q inner tag.
    let mut f = rocev2(v6(26, 3, 7), packet(0x11, seed, 0));
    f.vlans = Vlans::two(
        VlanTag {
            tpid: 0x88A8,
            pcp: 5,
            dei: true,
            vid: 2000,
        },
        VlanTag::dot1q(300, 3),
    );
    out.repr(&f)?;
    let mut f = rocev2(v4(10, 1), packet(0x65, seed + 1, 44));
    f.vlans = Vlans::two(VlanTag::dot1q(7, 2), VlanTag::dot1q(8, 4));
    out.repr(&f)?;
    out.finish()
}

/// RoCE v1: EtherType 0x8915, GRH, BTH.
fn rocev1(path: &Path) -> io::Result<()> {
    let mut out = Out::create(path, CaptureFormat::Pcap, 0)?;
    let gid = |ip: Ipv4Addr| ip.to_ipv6_mapped().octets();
    let ops = [
        0x04u8, 0x06, 0x0A, 0x0C, 0x10, 0x11, 0x12, 0x13, 0x24, 0x64, 0x65, 0x81,
    ];
    for (seed, op) in (700u64..).zip(ops) {
        let grh = GrhRepr {
            traffic_class: ((seed % 64) as u8) << 2 | (seed % 4) as u8,
            flow_label: val(seed, 30) as u32 & 0xF_FFFF,
            hop_limit: (seed % 255) as u8 + 1,
            sgid: gid(IP_A),
            dgid: gid(IP_B),
            ..GrhRepr::default()
        };
        let ib = if op == 0x81 {
            IbRepr::cnp(0x33)
        } else {
            packet(op, seed, 50 + (seed as u32 % 4))
        };
        let mut f = untagged(NetRepr::RoceV1 { grh, ib });
        if op == 0x0A {
            f.vlans = Vlans::one(VlanTag::dot1q(42, 3));
        }
        out.repr(&f)?;
    }
    out.finish()
}

/// 802.1Qbb PFC (XOFF, XON, several classes), 802.3x PAUSE, and a MAC
/// control opcode that is neither.
fn pfc_pause(path: &Path) -> io::Result<()> {
    let mut out = Out::create(path, CaptureFormat::Pcap, 0)?;
    let mut t = [0u16; 8];
    t[3] = 0xFFFF;
    out.repr(&FrameRepr::pfc(MAC_A, 0x08, t))?;
    t[3] = 0;
    out.repr(&FrameRepr::pfc(MAC_A, 0x08, t))?;
    out.repr(&FrameRepr::pfc(
        MAC_B,
        0xC9,
        [100, 0, 0, 300, 0, 0, 600, 700],
    ))?;
    out.repr(&FrameRepr::pfc(MAC_B, 0xFF, [1, 2, 3, 4, 5, 6, 7, 8]))?;
    out.repr(&FrameRepr::pause(MAC_A, 0xFFFF))?;
    out.repr(&FrameRepr::pause(MAC_A, 0))?;
    let mut gate = bytes(&FrameRepr::pause(MAC_B, 0x1234));
    gate[14..16].copy_from_slice(&0x0002u16.to_be_bytes()); // MPCP GATE
    out.put(&gate)?;
    out.finish()
}

/// Frames whose own fields contradict each other, and frames that look
/// like RoCE but are not.
fn malformed(path: &Path) -> io::Result<()> {
    let mut out = Out::create(path, CaptureFormat::Pcap, 0)?;
    let base = || rocev2(v4(26, 2), packet(0x04, 900, 40));
    let good = bytes(&base());
    const IP: usize = 14;
    const UDP: usize = 34;
    // 1: ICRC corrupted (still RoCEv2, with a warning).
    let mut b = good.clone();
    let n = b.len();
    b[n - 1] ^= 0x5A;
    out.put(&b)?;
    // 2: UDP length 6 (< 8).
    let mut b = good.clone();
    b[UDP + 4..UDP + 6].copy_from_slice(&6u16.to_be_bytes());
    out.put(&b)?;
    // 3: UDP length larger than the IP payload.
    let mut b = good.clone();
    let l = u16::from_be_bytes([b[UDP + 4], b[UDP + 5]]) + 100;
    b[UDP + 4..UDP + 6].copy_from_slice(&l.to_be_bytes());
    out.put(&b)?;
    // 4: UDP length leaves 10 bytes for BTH + ICRC.
    let mut b = good.clone();
    b[UDP + 4..UDP + 6].copy_from_slice(&18u16.to_be_bytes());
    out.put(&b)?;
    // 5: an ACK whose UDP length leaves no room for the AETH.
    let mut b = bytes(&rocev2(v4(26, 2), packet(0x11, 901, 0)));
    b[UDP + 4..UDP + 6].copy_from_slice(&(8u16 + 12 + 4).to_be_bytes());
    out.put(&b)?;
    // 6: IPv4 IHL 4.
    let mut b = good.clone();
    b[IP] = 0x44;
    out.put(&b)?;
    // 7: IPv4 total length smaller than the header.
    let mut b = good.clone();
    b[IP + 2..IP + 4].copy_from_slice(&12u16.to_be_bytes());
    out.put(&b)?;
    // 8: PadCnt 3 on an ACK (no payload to pad).
    let mut f = rocev2(v4(26, 2), packet(0x11, 902, 0));
    if let Some(ib) = f.ib_mut() {
        ib.bth.pad_count = 3;
    }
    out.repr(&f)?;
    // 9: an ACK carrying payload bytes.
    let mut f = rocev2(v4(26, 2), packet(0x11, 903, 0));
    if let Some(ib) = f.ib_mut() {
        ib.payload_len = 8;
    }
    out.repr(&f)?;
    // 10: a CNP with non-zero reserved bytes.
    let mut f = rocev2(v4(48, 2), IbRepr::cnp(0x77));
    if let Some(ib) = f.ib_mut() {
        ib.ext.set_cnp(Some(CnpRepr {
            reserved: [0xAB; 16],
        }));
    }
    out.repr(&f)?;
    // 11: UDP from port 4791 to another port: not RoCEv2.
    let mut b = good.clone();
    b[UDP..UDP + 2].copy_from_slice(&4791u16.to_be_bytes());
    b[UDP + 2..UDP + 4].copy_from_slice(&5000u16.to_be_bytes());
    out.put(&b)?;
    // 12: a RoCE v1 GRH with IPVer 4.
    let mut b = bytes(&untagged(NetRepr::RoceV1 {
        grh: GrhRepr::default(),
        ib: packet(0x04, 904, 8),
    }));
    b[IP] = 0x40 | (b[IP] & 0x0F);
    out.put(&b)?;
    // 13: a RoCE v1 GRH whose next header is not the IBA transport.
    let b = bytes(&untagged(NetRepr::RoceV1 {
        grh: GrhRepr {
            next_header: 0x3B,
            ..GrhRepr::default()
        },
        ib: packet(0x04, 905, 8),
    }));
    out.put(&b)?;
    // 14: 10 bytes, shorter than an Ethernet header.
    out.put(&good[..10])?;
    // 15: a non-RoCE UDP datagram and a TCP segment.
    let udp = untagged(NetRepr::Ip {
        ip: IpRepr::V4(Ipv4Repr::udp(IP_A, IP_B, 0, 0)),
        udp: Some(UdpRepr {
            src_port: 5353,
            dst_port: 5353,
            checksum: 0,
        }),
    });
    out.put(&udp.to_vec(&PAYLOAD[..30]))?;
    let mut tcp_ip = Ipv4Repr::udp(IP_A, IP_B, 0, 0);
    tcp_ip.protocol = 6;
    let tcp = untagged(NetRepr::Ip {
        ip: IpRepr::V4(tcp_ip),
        udp: None,
    });
    let mut seg = [0u8; 20];
    seg[12] = 0x50;
    out.put(&tcp.to_vec(&seg))?;
    // 16: an ACK with 4 bytes after the IP packet (a capture that kept the FCS).
    let mut b = bytes(&rocev2(v4(26, 2), packet(0x11, 906, 0)));
    b.extend_from_slice(&[0xDE, 0xAD, 0xBE, 0xEF]);
    out.put(&b)?;
    out.finish()
}

/// A snaplen of 64 cutting frames in every layer.
fn truncated(path: &Path) -> io::Result<()> {
    let mut out = Out::create(path, CaptureFormat::Pcap, 64)?;
    // IPv4 SEND: BTH ends at 54, the payload is cut.
    out.repr(&rocev2(v4(26, 2), packet(0x04, 1000, 200)))?;
    // IPv4 WRITE FIRST: the RETH (54..70) is cut.
    out.repr(&rocev2(v4(26, 2), packet(0x06, 1001, 200)))?;
    // IPv4 SEND of 8 bytes: the frame is 66 bytes, the ICRC is cut.
    out.repr(&rocev2(v4(26, 2), packet(0x04, 1002, 8)))?;
    // IPv6: the BTH (62..74) is cut.
    out.repr(&rocev2(v6(26, 2, 1), packet(0x04, 1003, 8)))?;
    // Two tags and IPv6: the UDP header (62..70) is cut.
    let mut f = rocev2(v6(26, 2, 1), packet(0x04, 1004, 8));
    f.vlans = Vlans::two(VlanTag::dot1q(1, 1), VlanTag::dot1q(2, 2));
    out.repr(&f)?;
    // IPv4 with 40 bytes of options: the IPv4 header (14..74) is cut.
    let mut ip = Ipv4Repr::udp(IP_A, IP_B, 26, 2);
    ip.options = Ipv4Options::new(&[1; 40]).expect("40 bytes of NOP");
    out.repr(&rocev2(IpRepr::V4(ip), packet(0x04, 1005, 8)))?;
    // RoCE v1: the BTH (54..66) is cut.
    out.repr(&untagged(NetRepr::RoceV1 {
        grh: GrhRepr::default(),
        ib: packet(0x04, 1006, 8),
    }))?;
    // Not cut: an ACK fits in 64 bytes.
    out.repr(&rocev2(v4(26, 2), packet(0x11, 1007, 0)))?;
    out.finish()
}

/// Frames of a raw pcap file: 1 ms apart from [`T0`].
fn spaced(frames: Vec<Vec<u8>>) -> Vec<(u64, Vec<u8>)> {
    (0..).map(|i| T0 + i * 1_000_000).zip(frames).collect()
}

/// A few frames as a Linux cooked capture (`tcpdump -i any`) sees them:
/// the Ethernet header replaced by SLL (16 bytes) or SLL2 (20 bytes).
fn cooked(path: &Path, datalink: DataLink) -> io::Result<()> {
    let mut frames = Vec::new();
    let seed = 1100;
    let mut tagged = rocev2(v4(26, 3), packet(0x0A, seed + 9, 64));
    tagged.vlans = Vlans::one(VlanTag::dot1q(10, 3));
    for f in [
        rocev2(v4(26, 2), packet(0x06, seed, 256)),
        rocev2(v6(26, 2, 5), packet(0x11, seed + 1, 0)),
        rocev2(v4(48, 2), IbRepr::cnp(0x42)),
        tagged,
    ] {
        let eth = bytes(&f);
        let ethertype = [eth[12], eth[13]];
        let mut b = Vec::new();
        if datalink == DataLink::LINUX_SLL {
            // packet type 4 (outgoing), ARPHRD_ETHER, address length 6.
            b.extend_from_slice(&[0, 4, 0, 1, 0, 6]);
            b.extend_from_slice(&eth[6..12]);
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&ethertype);
        } else {
            // protocol, reserved, ifindex 3, ARPHRD_ETHER, type 0 (to us), addr len 6.
            b.extend_from_slice(&ethertype);
            b.extend_from_slice(&[0, 0, 0, 0, 0, 3, 0, 1, 0, 6]);
            b.extend_from_slice(&eth[6..12]);
            b.extend_from_slice(&[0, 0]);
        }
        b.extend_from_slice(&eth[14..]);
        frames.push(b);
    }
    raw_pcap(
        path,
        datalink,
        TsResolution::NanoSecond,
        Endianness::Little,
        &spaced(frames),
    )
}

/// Microsecond timestamps in a big-endian pcap, as older tools write them.
fn usec(path: &Path) -> io::Result<()> {
    let frames: Vec<Vec<u8>> = [0x04u8, 0x11, 0x0C, 0x81]
        .iter()
        .enumerate()
        .map(|(i, &op)| {
            let ib = if op == 0x81 {
                IbRepr::cnp(0x9)
            } else {
                packet(op, 1200 + i as u64, 32)
            };
            bytes(&rocev2(v4(26, 2), ib))
        })
        .collect();
    raw_pcap(
        path,
        DataLink::ETHERNET,
        TsResolution::MicroSecond,
        Endianness::Big,
        &spaced(frames),
    )
}

/// Connection set-up as the hosts of a perftest pair see it: an RDMA CM
/// exchange and the flow it connects, perftest's TCP key exchange and its
/// flow, a REQ resent and never answered, a REJ, a RoCEv2 packet a v1-only
/// host answers with ICMP port unreachable, and an IPv4 total length
/// beyond the frame.
fn setup(path: &Path) -> io::Result<()> {
    use crate::setup::{CmSetup, PerftestTcp};
    use crate::synth::{Endpoint, RcConn};
    use roce_codec::wire::icmpv4::Icmpv4Repr;
    const US: u64 = 1_000;
    let mut s = Synth::create(&[(path, CaptureFormat::Pcap, 0)])?;
    let a = Endpoint::host(1, 0x11);
    let b = Endpoint::host(2, 0x12);
    // RDMA CM: REQ, REP 45 µs later, RTU 90 µs after the REQ; then a WRITE.
    let mut cm = CmSetup::new(a, b, 0x3e1a5, 0x7c0001);
    cm.req(&mut s, T0)?;
    cm.rep(&mut s, T0 + 45 * US)?;
    cm.rtu(&mut s, T0 + 90 * US)?;
    let mut w = RcConn::new(a, b, 0xc011, 0x3e1a5);
    let sent = w.message(&mut s, T0 + 200 * US, 8192, true, US, &[])?;
    w.ack(&mut s, sent.end_ns + 6 * US, sent.last)?;
    // perftest over TCP port 18515: keys 210 and 270 µs after the SYN.
    let (c, d) = (Endpoint::host(1, 0x21), Endpoint::host(2, 0x22));
    let mut t = PerftestTcp::new(c, d, 40_000);
    let t1 = T0 + 1_000 * US;
    t.connect(&mut s, t1, 30 * US)?;
    let mut gid = [0u8; 16];
    gid[10..12].copy_from_slice(&[0xff, 0xff]);
    gid[12..].copy_from_slice(&c.ip.octets());
    let kc = perftest::KeyMessage {
        lid: 0,
        out_reads: 16,
        qpn: c.qpn,
        psn: 0x51a2,
        rkey: 0x2003,
        vaddr: 0x7f00_0000_1000,
        gid: Some(gid),
        srqn: 0,
    };
    gid[12..].copy_from_slice(&d.ip.octets());
    let kd = perftest::KeyMessage {
        qpn: d.qpn,
        psn: 0x9e07,
        rkey: 0x3004,
        gid: Some(gid),
        ..kc
    };
    t.keys(&mut s, t1 + 210 * US, true, &kc)?;
    t.keys(&mut s, t1 + 270 * US, false, &kd)?;
    let mut f = RcConn::new(c, d, 0xc021, kc.psn);
    let sent = f.message(&mut s, t1 + 400 * US, 1000, false, US, &[])?;
    f.ack(&mut s, sent.end_ns + 6 * US, sent.last)?;
    t.keys(&mut s, t1 + 600 * US, true, &kc)?;
    t.keys(&mut s, t1 + 660 * US, false, &kd)?;
    // A REQ to 10.0.0.3 that nothing answers (resent at the end).
    let mut lost = CmSetup::new(a, Endpoint::host(3, 0x13), 0x100, 0x200);
    let t2 = T0 + 2_000 * US;
    lost.req(&mut s, t2)?;
    // A REQ to 10.0.0.4, where no one listens on the port: REJ reason 8.
    let mut rej = CmSetup::new(a, Endpoint::host(4, 0x14), 0x300, 0x400);
    rej.req(&mut s, t2 + 100 * US)?;
    rej.rej(
        &mut s,
        t2 + 130 * US,
        roce_codec::wire::cm::RejReason::InvalidServiceId,
    )?;
    // RoCEv2 to 10.0.0.5, a v1-only host: plain UDP to 4791, port unreachable.
    let e = Endpoint::host(5, 0x15);
    let v2 = FrameRepr::rocev2(
        e.mac,
        a.mac,
        IpRepr::V4(Ipv4Repr::udp(a.ip, e.ip, 26, 2)),
        0xc015,
        IbRepr::new(Opcode(0x04), e.qpn, Psn::new(1), 64),
    );
    let v2_bytes = v2.to_vec(&PAYLOAD[..64]);
    s.record(0, t2 + 300 * US, &v2, &v2_bytes)?;
    let NetRepr::RoceV2 {
        ip: IpRepr::V4(v2_ip),
        ..
    } = v2.net
    else {
        unreachable!("built as IPv4")
    };
    let icmp = FrameRepr::icmpv4(
        a.mac,
        e.mac,
        Ipv4Repr::icmp_error_about(&v2_ip, 0x4a1c),
        Icmpv4Repr::port_unreachable(),
    );
    let quote = build::linux_icmp_quote(&v2_bytes[14..]);
    s.record(0, t2 + 312 * US, &icmp, &icmp.to_vec(quote))?;
    // The same RoCEv2 frame with an IPv4 total length of 1000: malformed.
    let mut bad = v2_bytes.clone();
    bad[16..18].copy_from_slice(&1000u16.to_be_bytes());
    s.raw(0, t2 + 400 * US, &bad)?;
    // The unanswered REQ again after 2 × 2^(18-8) + 2^(20-8) = 6144 ms, twice.
    for i in 1..3 {
        lost.req(&mut s, t2 + i * 6_144_000 * US)?;
    }
    s.finish().map(|_| ())
}
