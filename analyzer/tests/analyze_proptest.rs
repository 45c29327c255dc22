//! Whatever RoCE traffic a capture holds, in whatever order and with
//! whatever field values, the analysis never panics and its counts add up.

use std::net::Ipv4Addr;

use proptest::prelude::*;
use roce_codec::wire::aeth::{AethRepr, Syndrome};
use roce_codec::*;
use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
use roce_testkit::cli::TempDir;
use roce_testkit::synth::{CaptureFormat, Synth};

/// Opcodes with their extended headers filled by `IbRepr::new`.
const OPCODES: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x24, 0x2A, 0x64, 0x81, 0xA4, 0x15,
];

#[derive(Debug, Clone)]
struct Pkt {
    forward: bool,
    opcode: u8,
    qpn: u32,
    psn: u32,
    payload: u32,
    syndrome: u8,
    dma_len: u32,
    ecn: u8,
    gap_ns: u64,
    file: usize,
    pfc: Option<(u8, u16)>,
}

fn pkt() -> impl Strategy<Value = Pkt> {
    (
        any::<bool>(),
        prop::sample::select(OPCODES),
        prop::sample::select(&[0x11u32, 0x12, 0x13, 0xFF_FFFF][..]),
        prop_oneof![0u32..64, (0xFF_FFF0u32..=0xFF_FFFF), any::<u32>()],
        prop_oneof![Just(0u32), 1u32..300, Just(4096)],
        any::<u8>(),
        prop_oneof![Just(0u32), 1u32..100_000, any::<u32>()],
        0u8..4,
        prop_oneof![Just(0u64), 0u64..20_000, Just(5_000_000)],
        0usize..2,
        prop::option::weighted(0.1, (any::<u8>(), any::<u16>())),
    )
        .prop_map(
            |(forward, opcode, qpn, psn, payload, syndrome, dma_len, ecn, gap_ns, file, pfc)| Pkt {
                forward,
                opcode,
                qpn,
                psn,
                payload,
                syndrome,
                dma_len,
                ecn,
                gap_ns,
                file,
                pfc,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_is_analyzed_without_panic(pkts in prop::collection::vec(pkt(), 1..200)) {
        let dir = TempDir::new("prop");
        let p0 = dir.join("a.pcap");
        let p1 = dir.join("b.pcapng");
        let mut s = Synth::create(&[(&p0, CaptureFormat::Pcap, 0), (&p1, CaptureFormat::PcapNg, 96)]).unwrap();
        let a = Ipv4Addr::new(10, 0, 0, 1);
        let b = Ipv4Addr::new(10, 0, 0, 2);
        let mut t = 1_000_000u64;
        let mut roce = 0u64;
        for k in &pkts {
            t += k.gap_ns;
            if let Some((ev, q)) = k.pfc {
                let mut times = [None; 8];
                for (i, slot) in times.iter_mut().enumerate() {
                    if ev & (1 << i) != 0 {
                        *slot = Some(q);
                    }
                }
                s.pfc(k.file, t, [2, 0, 0, 0, 0, 9], times).unwrap();
                continue;
            }
            let op = Opcode(k.opcode);
            let has_payload = op.info().is_some_and(|i| i.headers.contains(HeaderSet::PAYLOAD));
            let mut ib = IbRepr::new(op, k.qpn, Psn::new(k.psn), if has_payload { k.payload } else { 0 });
            if let Some(mut r) = ib.ext.reth() {
                r.dma_len = k.dma_len;
                ib.ext.set_reth(Some(r));
            }
            if ib.ext.aeth().is_some() {
                ib.ext.set_aeth(Some(AethRepr { syndrome: Syndrome(k.syndrome), msn: k.psn & 0xFF_FFFF }));
            }
            let (src, dst) = if k.forward { (a, b) } else { (b, a) };
            let ip = IpRepr::V4(Ipv4Repr::udp(src, dst, 26, k.ecn));
            let f = FrameRepr::rocev2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], ip, 0xC000, ib);
            s.frame(k.file, t, &f).unwrap();
            roce += 1;
        }
        s.finish().unwrap();
        let an = analyze_files(&[&p0, &p1], &AnalyzeOptions { series: true, ..AnalyzeOptions::default() }).unwrap();
        let r = &an.report;
        let files: u64 = r.files.iter().map(|f| f.roce_packets).sum();
        prop_assert_eq!(files, roce);
        // Every decodable RoCE frame lands in a flow, a response-only record
        // or is a mirror copy.
        let undecodable: u64 = r.files.iter().map(|f| f.roce_undecodable).sum();
        let in_flows: u64 = r.qps.iter().map(|q| q.packets + q.mirror_duplicates).sum::<u64>()
            + r.response_only.iter().map(|o| o.packets).sum::<u64>();
        prop_assert_eq!(in_flows + undecodable, roce);
        for q in &r.qps {
            prop_assert!(q.request_packets + q.response_packets == q.packets);
            prop_assert!(q.retransmitted_packets <= q.request_packets);
            if let (Some(p50), Some(max)) = (q.ack_rtt_ns.p50, q.ack_rtt_ns.max) {
                prop_assert!(p50 <= max);
            }
        }
        for p in &r.pfc {
            prop_assert!(p.longest_pause_ns <= p.pause_ns + 1e-6);
        }
        // Drawing is slow in debug builds: plot about one case in sixteen.
        if pkts.len() % 16 == 0 {
            roce_pcap::plot::plot(&an, &dir.join("plots"), 2).unwrap();
        }
    }
}
