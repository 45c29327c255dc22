//! Ground truth: a corpus generated here with exactly known events, and
//! every figure of the analysis checked against the numbers worked out by
//! hand in the comments (frame sizes: Ethernet 14 + IPv4 20 + UDP 8 + BTH
//! 12 [+ RETH 16] + payload + pad + ICRC 4; no FCS in the files).
//!
//! Host A (10.0.0.1, MAC ..:0a) is captured on its two bond slaves:
//! `slave0.pcapng` and `slave1.pcap.gz`.
//!
//! | flow | what happens |
//! |---|---|
//! | F0 A:0x11 → B:0x12 | WRITEs across the PSN wrap, a NAK episode, a timeout episode, mirror copies |
//! | F1 A:0x13 → B:0x14 | READs (PSN reservation, path MTU learned), CE on a response, CNP to the responder, other response port |
//! | F2 A:0x21 → C:0x22 | 12 RNR NAKs (storm), CE marks with CNPs 3 and 5 µs later |
//! | F3 A:0x31 → D:0x32 | one PSN resent after 4, 8, 16 ms timeouts, then silence |
//! | F4 A:0x41 → B:0x42 | remote access error NAK |
//! | F5 B:0x51 → A:0x52 | capture starts mid-message, upstream loss (gap), failover s0 → s1 |
//! | F6 A:0x61 → E:0x62 | one frame with a bad ICRC |
//! | PFC on slave0 | prio 3 refresh/XON/long/running pauses, prio 4, an 802.3x PAUSE |

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use roce_codec::Psn;
use roce_codec::wire::aeth::{NakCode, Syndrome};
use roce_pcap::analyze::report::{FrameRef, QpReport, Report};
use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
use roce_testkit::cli::TempDir;
use roce_testkit::pcap::gzip_file;
use roce_testkit::synth::{CaptureFormat, Endpoint, FileTruth, RcConn, Synth, temp_captures};

/// 2024-01-02 03:04:05 UTC: a capture of this century, whose times in
/// picoseconds do not fit 64 bits (PFC accounting once saturated them and
/// reported every pause as 0 while a 1970 corpus passed).
const T0: u64 = 1_704_164_645_000_000_000;
const T1: u64 = T0 + 3_000_000;
const T2: u64 = T0 + 4_000_000;
const T3: u64 = T0 + 25_000_000;
const T4: u64 = T0 + 60_000_000;
const T5: u64 = T0 + 70_000_000;
const T6: u64 = T0 + 75_000_000;
const TP: u64 = T0 + 80_000_000;

fn ep(last: u8, qpn: u32) -> Endpoint {
    let mac = if last == 0x0a || last == 0x0b {
        [0, 0, 0, 0, 0, last]
    } else {
        [2, 0, 0, 0, 0, last]
    };
    let ip = match last {
        0x0a => Ipv4Addr::new(10, 0, 0, 1),
        0x0b => Ipv4Addr::new(10, 0, 0, 2),
        0x0c => Ipv4Addr::new(10, 0, 0, 3),
        0x0d => Ipv4Addr::new(10, 0, 0, 4),
        _ => Ipv4Addr::new(10, 0, 0, 5),
    };
    Endpoint { mac, ip, qpn }
}

/// Frame numbers of interesting frames, as (file, frame).
#[derive(Default)]
struct Marks {
    f0_nak: (u16, u64),
    f0_first_resend: (u16, u64),
    f3_resends: Vec<(u16, u64)>,
    f4_nak: (u16, u64),
    f5_move: (u16, u64),
}

fn last_frame(s: &Synth, file: usize) -> (u16, u64) {
    (file as u16, s.truth[file].packets)
}

fn build(dir: &Path) -> (Vec<PathBuf>, Vec<FileTruth>, Marks) {
    let ([p0, p1], mut s) = Synth::create_in(dir, ["slave0.pcapng", "slave1.pcap"]).unwrap();
    let mut m = Marks::default();

    // F0: sport 0xC000 with the MACs and IPs of the bond-hash vectors in
    // codec/src/hash.rs.
    let mut f0 = RcConn::new(ep(0x0a, 0x11), ep(0x0b, 0x12), 0xC000, 0xFF_FFF8);
    f0.request_file = 1;
    f0.response_file = 0;
    for i in 0..5u64 {
        // 8192 B = FIRST + LAST; ACK 6 us after the LAST.
        let sent = f0
            .message(&mut s, T0 + i * 100_000, 8192, true, 1000, &[])
            .unwrap();
        f0.ack(&mut s, sent.end_ns + 6000, sent.last).unwrap();
    }
    // msg5: PSNs 2,3,4; PSN 3 lost after the capture point: NAK(3), resend 3,4.
    let sent = f0
        .message(&mut s, T0 + 500_000, 12288, true, 1000, &[])
        .unwrap();
    assert_eq!((sent.first, sent.last), (Psn::new(2), Psn::new(4)));
    f0.nak(
        &mut s,
        T0 + 504_000,
        Psn::new(3),
        Syndrome::NAK_PSN_SEQUENCE_ERROR,
    )
    .unwrap();
    m.f0_nak = last_frame(&s, 0);
    f0.resend(&mut s, T0 + 506_000, Psn::new(3)).unwrap();
    m.f0_first_resend = last_frame(&s, 1);
    f0.resend(&mut s, T0 + 507_000, Psn::new(4)).unwrap();
    f0.ack(&mut s, T0 + 513_000, Psn::new(4)).unwrap();
    // msg6: PSNs 5,6, no answer; resent after 1 ms.
    f0.message(&mut s, T0 + 600_000, 8192, true, 1000, &[])
        .unwrap();
    f0.resend(&mut s, T0 + 1_601_000, Psn::new(5)).unwrap();
    f0.resend(&mut s, T0 + 1_602_000, Psn::new(6)).unwrap();
    f0.ack(&mut s, T0 + 1_608_000, Psn::new(6)).unwrap();
    // msg7: PSNs 7,8, each copied by a mirror port 2 us later, the ACK too.
    let t = T0 + 2_000_000;
    f0.message(&mut s, t, 8192, true, 1000, &[]).unwrap();
    f0.resend(&mut s, t + 2000, Psn::new(7)).unwrap();
    f0.resend(&mut s, t + 3000, Psn::new(8)).unwrap();
    f0.ack(&mut s, t + 9000, Psn::new(8)).unwrap();
    f0.nak(&mut s, t + 10_000, Psn::new(8), Syndrome::ACK_NO_CREDITS)
        .unwrap();

    // F1: READ 10000 B at PSN 100 = 3 responses (4096, 4096, 1808); the
    // MIDDLE is CE-marked and A sends a CNP to B's QP 4 us later.
    let mut f1 = RcConn::new(ep(0x0a, 0x13), ep(0x0b, 0x14), 0xE123, 100);
    f1.response_sport = 0xD000;
    let r = f1.read_request(&mut s, T1, 10_000).unwrap();
    f1.read_responses(&mut s, T1 + 5000, r.first, 10_000, 1000, &[1])
        .unwrap();
    f1.cnp_to_responder(&mut s, T1 + 10_000).unwrap();
    let w = f1.message(&mut s, T1 + 20_000, 1000, true, 0, &[]).unwrap();
    assert_eq!(w.first, Psn::new(103), "the READ reserved 100..=102");
    f1.ack(&mut s, T1 + 26_000, w.last).unwrap();
    let r2 = f1.read_request(&mut s, T1 + 30_000, 4096).unwrap();
    f1.read_responses(&mut s, T1 + 35_000, r2.first, 4096, 0, &[])
        .unwrap();

    // F2: SEND_ONLY 512 B at PSN 0 meets 12 RNR NAKs (timer code 14 = 1280 us).
    let mut f2 = RcConn::new(ep(0x0a, 0x21), ep(0x0c, 0x22), 0xC100, 0);
    f2.request_file = 0;
    f2.response_file = 1;
    f2.message(&mut s, T2, 512, false, 0, &[]).unwrap();
    let mut t = T2;
    for _ in 0..12 {
        f2.nak(&mut s, t + 3000, Psn::new(0), Syndrome::rnr_nak(14))
            .unwrap();
        t += 1_286_000;
        f2.resend(&mut s, t, Psn::new(0)).unwrap();
    }
    f2.ack(&mut s, t + 3000, Psn::new(0)).unwrap();
    let a = f2
        .message(&mut s, T0 + 19_500_000, 512, false, 0, &[0])
        .unwrap();
    f2.cnp_to_requester(&mut s, a.end_ns + 3000).unwrap();
    f2.ack(&mut s, a.end_ns + 6000, a.last).unwrap();
    let b = f2
        .message(&mut s, T0 + 19_600_000, 512, false, 0, &[0])
        .unwrap();
    f2.cnp_to_requester(&mut s, b.end_ns + 5000).unwrap();
    f2.ack(&mut s, b.end_ns + 6000, b.last).unwrap();

    // F3: WRITE_ONLY 256 B at PSN 7, resent after 4, 8 and 16 ms, then nothing.
    let mut f3 = RcConn::new(ep(0x0a, 0x31), ep(0x0d, 0x32), 0xC200, 7);
    f3.request_file = 1;
    f3.message(&mut s, T3, 256, true, 0, &[]).unwrap();
    for at in [4_000_000, 12_000_000, 28_000_000] {
        f3.resend(&mut s, T3 + at, Psn::new(7)).unwrap();
        m.f3_resends.push(last_frame(&s, 1));
    }

    // F4: WRITE_ONLY 64 B, answered by a remote access error NAK.
    let mut f4 = RcConn::new(ep(0x0a, 0x41), ep(0x0b, 0x42), 0xC300, 0);
    f4.message(&mut s, T4, 64, true, 0, &[]).unwrap();
    f4.nak(
        &mut s,
        T4 + 5000,
        Psn::new(0),
        Syndrome::nak(NakCode::RemoteAccessError),
    )
    .unwrap();
    m.f4_nak = last_frame(&s, 0);

    // F5: B is the requester; A's capture starts inside a SEND (MIDDLE 500,
    // LAST 501), PSN 505 is lost upstream, and B's bond fails over to slave1.
    let mut f5 = RcConn::new(ep(0x0b, 0x51), ep(0x0a, 0x52), 0xC400, 500);
    f5.packet(&mut s, T5, 0x01, Psn::new(500), 4096, false)
        .unwrap();
    f5.packet(&mut s, T5 + 1000, 0x02, Psn::new(501), 100, true)
        .unwrap();
    f5.ack(&mut s, T5 + 3000, Psn::new(501)).unwrap();
    f5.packet(&mut s, T5 + 10_000, 0x04, Psn::new(502), 200, true)
        .unwrap();
    f5.packet(&mut s, T5 + 11_000, 0x04, Psn::new(503), 200, true)
        .unwrap();
    f5.ack(&mut s, T5 + 14_000, Psn::new(503)).unwrap();
    f5.request_file = 1;
    f5.packet(&mut s, T5 + 20_000, 0x04, Psn::new(504), 200, true)
        .unwrap();
    m.f5_move = last_frame(&s, 1);
    f5.packet(&mut s, T5 + 21_000, 0x04, Psn::new(506), 200, true)
        .unwrap();
    f5.nak(
        &mut s,
        T5 + 22_000,
        Psn::new(505),
        Syndrome::NAK_PSN_SEQUENCE_ERROR,
    )
    .unwrap();
    f5.packet(&mut s, T5 + 25_000, 0x04, Psn::new(505), 200, true)
        .unwrap();
    f5.resend(&mut s, T5 + 26_000, Psn::new(506)).unwrap();
    f5.ack(&mut s, T5 + 30_000, Psn::new(506)).unwrap();

    // F6: a WRITE_ONLY whose first copy is corrupted, then the good one.
    let mut f6 = RcConn::new(ep(0x0a, 0x61), ep(0x0e, 0x62), 0xC500, 0);
    f6.corrupted_write(&mut s, T6, 128).unwrap();
    let g = f6.message(&mut s, T6 + 1000, 128, true, 0, &[]).unwrap();
    f6.ack(&mut s, T6 + 6000, g.last).unwrap();
    // An ACK from E to a QP of A that never sent anything here.
    let mut orphan = RcConn::new(ep(0x0a, 0x71), ep(0x0e, 0x72), 0xC600, 0);
    orphan.response_file = 1;
    orphan.ack(&mut s, T6 + 100_000, Psn::new(42)).unwrap();

    // PFC from the switch on slave0, 100 Gb/s: 1 quantum = 5.12 ns.
    let sw = [2, 0, 0, 0, 0, 0xee];
    let p3 = |q| {
        let mut t = [None; 8];
        t[3] = Some(q);
        t
    };
    s.pfc(0, TP, sw, p3(1000)).unwrap();
    s.pfc(0, TP + 2000, sw, p3(1000)).unwrap();
    s.pfc(0, TP + 5000, sw, p3(0)).unwrap();
    let mut both = p3(0xFFFF);
    both[4] = Some(200);
    s.pfc(0, TP + 100_000, sw, both).unwrap();
    s.frame(
        0,
        TP + 200_000,
        &roce_codec::FrameRepr::pause([2, 0, 0, 0, 0, 0xef], 50),
    )
    .unwrap();
    s.pfc(0, TP + 1_000_000, sw, p3(100)).unwrap();

    let truth = s.finish().unwrap();
    let p1 = gzip_file(&p1).unwrap();
    (vec![p0, p1], truth, m)
}

fn fr((file, frame): (u16, u64)) -> FrameRef {
    FrameRef { file, frame }
}

fn qp<'a>(r: &'a Report, src: &str, dqpn: u32) -> &'a QpReport {
    r.qps
        .iter()
        .find(|q| q.src == src && q.dqpn == dqpn)
        .unwrap_or_else(|| panic!("no flow {src} -> QP {dqpn:#x}"))
}

fn q3(s: &roce_pcap::analyze::Summary) -> (Option<u64>, Option<u64>, Option<u64>) {
    (s.p50, s.p99, s.max)
}

const WRITE_FIRST: u64 = 14 + 20 + 8 + 12 + 16 + 4096 + 4; // 4170
const WRITE_MID: u64 = 14 + 20 + 8 + 12 + 4096 + 4; // 4154
const ACK: u64 = 14 + 20 + 8 + 12 + 4 + 4; // 62

#[test]
fn every_figure_of_the_generated_corpus() {
    let dir = TempDir::new("truth");
    let (paths, truth, marks) = build(&dir);
    let a = analyze_files(&paths, &AnalyzeOptions::default()).unwrap();
    let r = &a.report;
    assert!(a.warnings.is_empty());

    // Files: exactly what was written, the gzip one read transparently.
    assert_eq!(r.files.len(), 2);
    for (f, t) in r.files.iter().zip(&truth) {
        assert_eq!((f.packets, f.bytes), (t.packets, t.bytes), "{}", f.file);
        assert_eq!(
            (f.roce_packets, f.roce_bytes),
            (t.roce_packets, t.roce_bytes),
            "{}",
            f.file
        );
        assert_eq!(f.mac_control_frames, t.mac_control_frames);
        assert_eq!(f.truncated_frames, 0);
    }
    assert_eq!(r.files[0].icrc_errors, 1);
    assert_eq!((r.files[0].pfc_frames, r.files[0].pause_frames), (5, 1));
    assert_eq!(r.qps.len(), 7);

    // F0.
    let f0 = qp(r, "10.0.0.1", 0x12);
    assert_eq!(f0.id, 0);
    assert_eq!(
        (f0.sport, f0.response_sport, f0.requester_qpn),
        (0xC000, Some(0xC000), Some(0x11))
    );
    // 21 requests (10 + msg5 3+2 + msg6 2+2 + msg7 2) and 9 responses; 3 mirror copies left out.
    assert_eq!(
        (f0.request_packets, f0.response_packets, f0.packets),
        (21, 9, 30)
    );
    assert_eq!(f0.mirror_duplicates, 3);
    // 7 two-packet messages, msg5 FIRST+MIDDLE+LAST, resends MIDDLE+LAST and FIRST+LAST, 9 ACKs.
    let req_bytes = 7 * (WRITE_FIRST + WRITE_MID)
        + (WRITE_FIRST + 2 * WRITE_MID)
        + 2 * WRITE_MID
        + (WRITE_FIRST + WRITE_MID);
    assert_eq!(f0.bytes, req_bytes + 9 * ACK);
    assert_eq!(f0.payload_bytes, 7 * 8192 + 12288 + 4 * 4096);
    assert_eq!(f0.messages, 8);
    assert_eq!(f0.message_bytes, 7 * 8192 + 12288);
    assert_eq!(f0.messages_by_kind.get("write"), Some(&8));
    assert_eq!(f0.duration_ns, 2_009_000);
    let goodput = (7 * 8192 + 12288) as f64 * 8.0 / 2_009_000.0;
    assert!(
        (f0.goodput_gbps - goodput).abs() < 1e-12,
        "{}",
        f0.goodput_gbps
    );
    assert_eq!(
        (f0.psn.first, f0.psn.last, f0.psn.span, f0.psn.wrapped),
        (Some(0xFF_FFF8), Some(8), 17, true)
    );
    assert_eq!(
        (f0.retransmitted_packets, f0.retransmitted_bytes),
        (4, 2 * WRITE_MID + WRITE_FIRST + WRITE_MID)
    );
    assert_eq!((f0.out_of_sequence, f0.missing_psns), (0, 0));
    assert_eq!(f0.go_back_n.episodes, 2);
    let e = &f0.go_back_n.list;
    assert_eq!(
        (e[0].cause, e[0].rewind_psn, e[0].highest_psn, e[0].packets),
        ("nak", 3, 4, 2)
    );
    assert_eq!((e[0].gap_ns, e[0].bytes), (4000, 2 * WRITE_MID));
    assert_eq!(e[0].cause_frame, Some(fr(marks.f0_nak)));
    assert_eq!(e[0].frame, fr(marks.f0_first_resend));
    assert_eq!(
        (
            e[1].cause,
            e[1].rewind_psn,
            e[1].highest_psn,
            e[1].packets,
            e[1].gap_ns
        ),
        ("timeout", 5, 6, 2, 1_000_000)
    );
    assert_eq!(e[1].cause_frame, None);
    assert_eq!(f0.naks.get("psn_sequence_error"), Some(&1));
    assert_eq!(f0.acks, 8);
    // RTT: 5 x 6 us, msg7 8 us; the ACKs of msg5 and msg6 cover resent PSNs (Karn).
    assert_eq!(f0.ack_rtt_ns.samples, 6);
    assert_eq!(q3(&f0.ack_rtt_ns), (Some(6000), Some(8000), Some(8000)));
    // Latency: 5 x 7 us, msg5 13 us, msg6 1008 us, msg7 9 us.
    assert_eq!(f0.message_latency_ns.samples, 8);
    assert_eq!(
        q3(&f0.message_latency_ns),
        (Some(7000), Some(1_008_000), Some(1_008_000))
    );
    assert_eq!((f0.ecn_ce_packets, f0.cnps, f0.icrc_errors), (0, 0, 0));
    assert_eq!(
        f0.files,
        vec![r.files[0].file.clone(), r.files[1].file.clone()]
    );
    assert_eq!(
        (
            f0.per_file[1].request_packets,
            f0.per_file[0].response_packets
        ),
        (21, 9)
    );

    // F1.
    let f1 = qp(r, "10.0.0.1", 0x14);
    assert_eq!(
        (f1.sport, f1.response_sport, f1.requester_qpn),
        (0xE123, Some(0xD000), Some(0x13))
    );
    assert_eq!(
        (f1.request_packets, f1.response_packets),
        (4, 5),
        "READ, CNP, WRITE, READ / 3+1 responses, ACK"
    );
    assert_eq!(f1.messages, 3);
    assert_eq!(
        (
            f1.messages_by_kind.get("read"),
            f1.messages_by_kind.get("write")
        ),
        (Some(&2), Some(&1))
    );
    assert_eq!(f1.message_bytes, 10_000 + 1000 + 4096);
    assert_eq!(
        q3(&f1.message_size),
        (Some(4096), Some(10_000), Some(10_000))
    );
    assert_eq!(
        q3(&f1.message_latency_ns),
        (Some(6000), Some(7000), Some(7000))
    );
    assert_eq!(
        (f1.psn.first, f1.psn.last, f1.psn.span),
        (Some(100), Some(104), 5)
    );
    assert_eq!(f1.pmtu, Some(4096));
    assert_eq!((f1.out_of_sequence, f1.retransmitted_packets), (0, 0));
    assert_eq!(f1.payload_bytes, 15_096);
    assert_eq!((f1.ecn_ce_packets, f1.cnps, f1.cnps_without_ce), (1, 1, 0));
    assert_eq!(q3(&f1.cnp_delay_ns), (Some(4000), Some(4000), Some(4000)));
    assert_eq!(q3(&f1.ack_rtt_ns), (Some(6000), Some(6000), Some(6000)));
    assert!((f1.ecn_ce_fraction - 1.0 / 9.0).abs() < 1e-12);

    // F2.
    let f2 = qp(r, "10.0.0.1", 0x22);
    assert_eq!(f2.naks.get("rnr_nak"), Some(&12));
    assert_eq!(f2.rnr_naks.count, 12);
    assert_eq!(f2.rnr_naks.timers_us.get(&1280), Some(&12));
    assert_eq!(
        (f2.retransmitted_packets, f2.retransmitted_bytes),
        (12, 12 * (14 + 20 + 8 + 12 + 512 + 4))
    );
    assert_eq!(f2.go_back_n.episodes, 12);
    assert_eq!(f2.go_back_n.by_cause.get("rnr_nak"), Some(&12));
    assert!(
        f2.go_back_n
            .list
            .iter()
            .all(|e| e.gap_ns == 1_286_000 && e.rewind_psn == 0)
    );
    assert_eq!((f2.request_packets, f2.response_packets), (15, 17));
    assert_eq!((f2.ecn_ce_packets, f2.cnps), (2, 2));
    assert_eq!(q3(&f2.cnp_delay_ns), (Some(3000), Some(5000), Some(5000)));
    assert_eq!(f2.ack_rtt_ns.samples, 2);
    assert_eq!(q3(&f2.ack_rtt_ns), (Some(6000), Some(6000), Some(6000)));
    assert_eq!(f2.messages, 3);
    assert_eq!(
        q3(&f2.message_latency_ns),
        (Some(6000), Some(15_435_000), Some(15_435_000))
    );

    // F3.
    let f3 = qp(r, "10.0.0.1", 0x32);
    assert_eq!(f3.requester_qpn, None);
    assert_eq!(
        (f3.packets, f3.retransmitted_packets, f3.go_back_n.episodes),
        (4, 3, 3)
    );
    let gaps: Vec<u64> = f3.go_back_n.list.iter().map(|e| e.gap_ns).collect();
    assert_eq!(gaps, [4_000_000, 8_000_000, 16_000_000]);
    assert_eq!(f3.go_back_n.by_cause.get("timeout"), Some(&3));
    assert_eq!(f3.ack_rtt_ns.samples, 0);
    assert_eq!(f3.ack_rtt_ns.p50, None);

    // F4.
    let f4 = qp(r, "10.0.0.1", 0x42);
    assert_eq!(f4.naks.get("remote_access_error"), Some(&1));
    assert_eq!(f4.packets, 2);

    // F5: B requests to A, seen at A.
    let f5 = qp(r, "10.0.0.2", 0x52);
    assert_eq!(f5.requester_qpn, Some(0x51));
    assert_eq!((f5.request_packets, f5.response_packets), (8, 4));
    assert_eq!((f5.out_of_sequence, f5.missing_psns), (1, 1));
    assert_eq!((f5.retransmitted_packets, f5.go_back_n.episodes), (2, 1));
    let e = &f5.go_back_n.list[0];
    assert_eq!(
        (e.cause, e.rewind_psn, e.highest_psn, e.gap_ns),
        ("nak", 505, 506, 4000)
    );
    assert_eq!((f5.messages, f5.partial_messages), (5, 1));
    assert_eq!(q3(&f5.ack_rtt_ns), (Some(2000), Some(3000), Some(3000)));
    assert_eq!(
        q3(&f5.message_latency_ns),
        (Some(4000), Some(9000), Some(9000))
    );
    assert_eq!(f5.payload_bytes, 4096 + 100 + 6 * 200);
    assert_eq!(
        (f5.psn.first, f5.psn.last, f5.psn.span),
        (Some(500), Some(506), 7)
    );
    assert_eq!(
        (
            f5.per_file[0].request_packets,
            f5.per_file[1].request_packets
        ),
        (4, 4)
    );

    // F6.
    let f6 = qp(r, "10.0.0.1", 0x62);
    assert_eq!(
        (
            f6.packets,
            f6.icrc_errors,
            f6.retransmitted_packets,
            f6.messages
        ),
        (3, 1, 0, 1)
    );

    // The orphan ACK.
    assert_eq!(r.response_only.len(), 1);
    let o = &r.response_only[0];
    assert_eq!(
        (o.src.as_str(), o.requester_qpn, o.acks, o.packets),
        ("10.0.0.5", 0x71, 1, 1)
    );

    // PFC.
    assert_eq!(r.pfc.len(), 3);
    let p3 = r.pfc.iter().find(|p| p.priority == Some(3)).unwrap();
    assert_eq!((p3.xoff_frames, p3.xon_frames), (4, 1));
    // 2 us (replaced) + 3 us (XON) + 65535 quanta + 100 quanta (running at the end).
    assert!((p3.pause_ns - 341_051.2).abs() < 1e-6, "{}", p3.pause_ns);
    assert!((p3.longest_pause_ns - 335_539.2).abs() < 1e-6);
    assert_eq!(r.files[0].duration_ns, TP + 1_000_000 - (T0 + 7000));
    assert!((p3.paused_fraction - 341_051.2 / r.files[0].duration_ns as f64).abs() < 1e-15);
    let p4 = r.pfc.iter().find(|p| p.priority == Some(4)).unwrap();
    assert_eq!(
        (
            p4.xoff_frames,
            p4.xon_frames,
            p4.pause_ns,
            p4.longest_pause_ns
        ),
        (1, 0, 1024.0, 1024.0)
    );
    let px = r.pfc.iter().find(|p| p.priority.is_none()).unwrap();
    assert_eq!(
        (px.kind, px.src_mac.as_str(), px.xoff_frames, px.pause_ns),
        ("802.3x", "02:00:00:00:00:ef", 1, 256.0)
    );
    assert_eq!(p3.src_mac, "02:00:00:00:00:ee");

    // LAG: shares from the bytes written; predictions of bond_main.c's
    // layer3+4 hash (vectors in codec/src/hash.rs).
    let total = truth[0].roce_bytes + truth[1].roce_bytes;
    let max = truth[0].roce_bytes.max(truth[1].roce_bytes) as f64;
    assert!((r.lag.imbalance.unwrap() - max / (total as f64 / 2.0)).abs() < 1e-12);
    let m0 = r.lag.qp_map.iter().find(|m| m.qp == f0.id).unwrap();
    assert_eq!(
        m0.predicted_layer3_4.as_deref(),
        Some(r.files[1].file.as_str()),
        "0x5A535333 % 2 = 1"
    );
    assert_eq!(
        m0.predicted_layer2_3.as_deref(),
        Some(r.files[0].file.as_str()),
        "0x3030B0A % 2 = 0"
    );
    assert_eq!(m0.request_file.as_deref(), Some(r.files[1].file.as_str()));
    assert_eq!(m0.response_file.as_deref(), Some(r.files[0].file.as_str()));
    let m1 = r.lag.qp_map.iter().find(|m| m.qp == f1.id).unwrap();
    assert_eq!(
        m1.predicted_layer3_4.as_deref(),
        Some(r.files[0].file.as_str()),
        "0x5A5342B2 % 2 = 0"
    );
    let m5 = r.lag.qp_map.iter().find(|m| m.qp == f5.id).unwrap();
    assert_eq!(m5.moves_total, 1);
    assert_eq!(m5.moves[0].frame, fr(marks.f5_move));
    assert_eq!(
        (m5.moves[0].from.as_str(), m5.moves[0].to.as_str()),
        (r.files[0].file.as_str(), r.files[1].file.as_str())
    );

    // Findings.
    let got: BTreeSet<(&str, Option<usize>)> = r.findings.iter().map(|f| (f.rule, f.qp)).collect();
    for want in [
        ("retry-exhausted", Some(f3.id)),
        ("remote-error-nak", Some(f4.id)),
        ("icrc-errors", Some(f6.id)),
        ("go-back-n", Some(f0.id)),
        ("go-back-n", Some(f5.id)),
        ("rnr-storm", Some(f2.id)),
        ("out-of-sequence", Some(f5.id)),
        ("mirror-duplicates", Some(f0.id)),
        ("ecn-ce", Some(f1.id)),
        ("ecn-ce", Some(f2.id)),
        ("qp-moved", Some(f5.id)),
        ("pfc-seen", None),
        ("no-mac-control", None),
        ("response-only", None),
    ] {
        assert!(got.contains(&want), "missing finding {want:?} in {got:?}");
    }
    assert!(
        !got.contains(&("retry-exhausted", Some(f0.id))),
        "F0 recovered"
    );
    let rx = r
        .findings
        .iter()
        .find(|f| f.rule == "retry-exhausted")
        .unwrap();
    assert_eq!(
        rx.frames,
        marks.f3_resends.iter().map(|&m| fr(m)).collect::<Vec<_>>()
    );
    assert!(
        rx.message.contains("IBV_WC_RETRY_EXC_ERR") && rx.message.contains("PSN 7"),
        "{}",
        rx.message
    );
    let ra = r
        .findings
        .iter()
        .find(|f| f.rule == "remote-error-nak")
        .unwrap();
    assert_eq!(ra.frames, vec![fr(marks.f4_nak)]);
    assert!(ra.message.contains("status 10"), "{}", ra.message);
    let nm = r
        .findings
        .iter()
        .find(|f| f.rule == "no-mac-control")
        .unwrap();
    assert_eq!(nm.file.as_deref(), Some(r.files[1].file.as_str()));
    // Errors first.
    assert!(
        r.findings
            .windows(2)
            .all(|w| w[0].severity <= w[1].severity)
    );

    // The same input gives byte-identical JSON, however many decoder
    // threads share the files.
    let json = serde_json::to_string(r).unwrap();
    for n in [1, 2, 3] {
        let opts = AnalyzeOptions {
            threads: Some(n),
            ..AnalyzeOptions::default()
        };
        let again = analyze_files(&paths, &opts).unwrap();
        assert_eq!(
            serde_json::to_string(&again.report).unwrap(),
            json,
            "{n} decoder threads"
        );
    }
    // ANALYZE_TRUTH_KEEP=DIR keeps the corpus for a look with the CLI.
    if let Ok(keep) = std::env::var("ANALYZE_TRUTH_KEEP") {
        std::fs::create_dir_all(&keep).unwrap();
        for p in &paths {
            std::fs::copy(p, Path::new(&keep).join(p.file_name().unwrap())).unwrap();
        }
    }
}

/// A capture cut by a 80-byte snaplen: headers only. Sizes, sequence and
/// messages come out exact from the length fields; no ICRC can be checked.
#[test]
fn a_snaplen_truncated_capture_keeps_every_count() {
    let dir = TempDir::new("snaplen");
    let path = dir.join("snap80.pcap");
    let mut s = Synth::create(&[(&path, CaptureFormat::Pcap, 80)]).unwrap();
    let mut c = RcConn::new(ep(0x0a, 0x11), ep(0x0b, 0x12), 0xC000, 0);
    let mut wire = 0u64;
    for i in 0..10u64 {
        let sent = c
            .message(&mut s, T0 + i * 50_000, 8192, true, 1000, &[])
            .unwrap();
        wire += sent.bytes;
        if i == 4 {
            // PSN 9 lost: NAK(9), resend 9.
            wire += c
                .nak(
                    &mut s,
                    sent.end_ns + 2000,
                    Psn::new(9),
                    Syndrome::NAK_PSN_SEQUENCE_ERROR,
                )
                .unwrap();
            wire += c.resend(&mut s, sent.end_ns + 4000, Psn::new(9)).unwrap();
        }
        wire += c.ack(&mut s, sent.end_ns + 10_000, sent.last).unwrap();
    }
    let truth = s.finish().unwrap();
    let a = analyze_files(&[&path], &AnalyzeOptions::default()).unwrap();
    let r = &a.report;
    let f = &r.files[0];
    // 20 data + 1 resend are cut (4170/4154 > 80); NAK and ACKs (62) are not.
    assert_eq!(
        (f.packets, f.bytes, f.truncated_frames),
        (32, truth[0].bytes, 21)
    );
    assert_eq!(f.bytes, wire);
    assert_eq!(
        (f.icrc_unchecked, f.icrc_errors, f.roce_undecodable),
        (21, 0, 0)
    );
    let q = &r.qps[0];
    assert_eq!((q.packets, q.bytes), (32, wire));
    assert_eq!(q.payload_bytes, 10 * 8192 + 4096);
    assert_eq!((q.messages, q.message_bytes), (10, 81_920));
    assert_eq!((q.retransmitted_packets, q.go_back_n.episodes), (1, 1));
    assert_eq!(q.go_back_n.list[0].cause, "nak");
    assert_eq!((q.icrc_unchecked, q.mirror_duplicates), (21, 0));
    // RTT: 9 ACKs on first transmissions at 10 us after the LAST.
    assert_eq!((q.ack_rtt_ns.samples, q.ack_rtt_ns.p50), (9, Some(10_000)));
    assert!(
        r.findings
            .iter()
            .any(|f| f.rule == "snaplen-truncated" && f.message.contains("21 RoCE frames"))
    );
}

/// `traces/analyze_slave0.pcapng` and `traces/analyze_slave1.pcap.gz` are
/// this corpus, shipped so that people can run `roce-pcap analyze` and
/// `plot` on it; they must not drift from the generator. Regenerate with
/// `ANALYZE_REGENERATE_TRACES=1 cargo test -p roce-pcap --test analyze_truth`.
#[test]
fn shipped_traces_are_the_corpus() {
    let dir = TempDir::new("shipped");
    let (paths, _, _) = build(&dir);
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let shipped = ["analyze_slave0.pcapng", "analyze_slave1.pcap.gz"];
    for (p, name) in paths.iter().zip(shipped) {
        let fresh = std::fs::read(p).unwrap();
        let target = traces.join(name);
        if std::env::var_os("ANALYZE_REGENERATE_TRACES").is_some() {
            std::fs::write(&target, &fresh).unwrap();
        }
        let old = std::fs::read(&target).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
        assert!(
            old == fresh,
            "{} differs from the generator; regenerate it",
            target.display()
        );
    }
}

/// Whole windows resent after timeouts (the shape rxe and the simulator
/// produce), and RNR retries, each ending in silence.
#[test]
fn retry_runs_of_whole_windows_end_in_exhaustion() {
    let (_dir, [path], mut s) = temp_captures("runs", ["runs.pcap"]);
    // A: a 3-packet WRITE (PSN 40..42) resent whole after 4 ms, 4 ms, 4 ms, 4 ms.
    let mut a = RcConn::new(ep(0x0a, 0x11), ep(0x0b, 0x12), 0xC000, 40);
    let sent = a.message(&mut s, T0, 3 * 4096, true, 1000, &[]).unwrap();
    let mut t = sent.end_ns;
    let mut starts = Vec::new();
    for _ in 0..4 {
        t += 4_000_000;
        for k in 0..3 {
            a.resend(&mut s, t + k * 1000, Psn::new(40 + k as u32))
                .unwrap();
            if k == 0 {
                starts.push(fr((0, s.truth[0].packets)));
            }
        }
        t += 2000;
    }
    // B: SEND_ONLY PSN 9 refused by 5 RNR NAKs, resent each time, then nothing.
    let mut b = RcConn::new(ep(0x0a, 0x21), ep(0x0c, 0x22), 0xC100, 9);
    let mut t = T0 + 100_000_000;
    b.message(&mut s, t, 100, false, 0, &[]).unwrap();
    for _ in 0..5 {
        b.nak(&mut s, t + 2000, Psn::new(9), Syndrome::rnr_nak(1))
            .unwrap();
        t += 20_000;
        b.resend(&mut s, t, Psn::new(9)).unwrap();
    }
    // The capture goes on for 1 ms (another QP's WRITE), much longer than
    // B's 20 us between attempts: B has given up.
    let mut c = RcConn::new(ep(0x0a, 0x41), ep(0x0b, 0x42), 0xC300, 0);
    c.message(&mut s, t + 1_000_000, 64, true, 0, &[]).unwrap();
    s.finish().unwrap();
    let r = analyze_files(&[&path], &AnalyzeOptions::default())
        .unwrap()
        .report;
    let qa = qp(&r, "10.0.0.1", 0x12);
    assert_eq!((qa.retransmitted_packets, qa.go_back_n.episodes), (12, 4));
    assert!(
        qa.go_back_n
            .list
            .iter()
            .all(|e| (e.rewind_psn, e.highest_psn, e.packets) == (40, 42, 3))
    );
    let gaps: Vec<u64> = qa.go_back_n.list.iter().map(|e| e.gap_ns).collect();
    // Each resend starts 4 ms after the last packet of the one before.
    assert_eq!(gaps, [4_000_000; 4]);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "retry-exhausted")
        .expect("retry-exhausted");
    assert_eq!((f.qp, &f.frames), (Some(qa.id), &starts));
    assert!(
        f.message.contains("4 times after 4 timeouts"),
        "{}",
        f.message
    );
    let qb = qp(&r, "10.0.0.1", 0x22);
    assert_eq!(
        (qb.rnr_naks.count, qb.go_back_n.by_cause.get("rnr_nak")),
        (5, Some(&5))
    );
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "rnr-retry-exhausted")
        .expect("rnr-retry-exhausted");
    assert_eq!(f.qp, Some(qb.id));
    assert!(f.message.contains("status 13"), "{}", f.message);
    assert!(
        !r.findings
            .iter()
            .any(|f| f.rule == "retry-exhausted" && f.qp == Some(qb.id))
    );
}

/// A responder re-ACKs duplicate requests with identical ACKs, fractions of
/// a microsecond apart; without mirrored requests they are not mirror
/// copies (the simulator's failover scenario showed this).
#[test]
fn identical_re_acks_are_not_mirror_copies() {
    let (_dir, [path], mut s) = temp_captures("reack", ["reack.pcap"]);
    let mut a = RcConn::new(ep(0x0a, 0x11), ep(0x0b, 0x12), 0xC000, 100);
    let sent = a.message(&mut s, T0, 3 * 4096, true, 300, &[]).unwrap();
    a.ack(&mut s, sent.end_ns + 300, sent.last).unwrap();
    for k in 1..=2 {
        a.nak(
            &mut s,
            sent.end_ns + 300 + k * 300,
            sent.last,
            Syndrome::ACK_NO_CREDITS,
        )
        .unwrap();
    }
    s.finish().unwrap();
    let r = analyze_files(&[&path], &AnalyzeOptions::default())
        .unwrap()
        .report;
    let q = &r.qps[0];
    assert_eq!(
        (
            q.acks,
            q.response_packets,
            q.repeated_responses,
            q.mirror_duplicates
        ),
        (3, 3, 2, 0)
    );
    assert!(!r.findings.iter().any(|f| f.rule == "mirror-duplicates"));
}

/// A resend time-stamped with (or just before) the NAK that caused it, the
/// two on different slaves: the merge puts the resend first (file order
/// breaks the tie), and the episode is still the NAK's.
#[test]
fn a_nak_tied_with_its_resend_is_still_the_cause() {
    let (_dir, [p0, p1], mut s) = temp_captures("tie", ["tx.pcap", "rx.pcap"]);
    let mut a = RcConn::new(ep(0x0a, 0x11), ep(0x0b, 0x12), 0xC000, 0);
    a.response_file = 1;
    let sent = a.message(&mut s, T0, 4 * 4096, true, 500, &[]).unwrap();
    let t = sent.end_ns + 5000;
    // Resend of PSN 2 at t on slave0, the NAK for PSN 2 at t on slave1.
    a.resend(&mut s, t, Psn::new(2)).unwrap();
    a.nak(&mut s, t, Psn::new(2), Syndrome::NAK_PSN_SEQUENCE_ERROR)
        .unwrap();
    a.resend(&mut s, t + 500, Psn::new(3)).unwrap();
    a.ack(&mut s, t + 5000, Psn::new(3)).unwrap();
    // Later a real timeout: PSN 4 sent, nothing for 1 ms, resent, ACKed.
    let w = a.message(&mut s, t + 100_000, 100, true, 0, &[]).unwrap();
    a.resend(&mut s, w.end_ns + 1_000_000, w.last).unwrap();
    // A NAK for a different PSN right after it does not take the timeout over.
    a.nak(
        &mut s,
        w.end_ns + 1_000_100,
        Psn::new(9),
        Syndrome::NAK_PSN_SEQUENCE_ERROR,
    )
    .unwrap();
    s.finish().unwrap();
    let r = analyze_files(&[&p0, &p1], &AnalyzeOptions::default())
        .unwrap()
        .report;
    let q = &r.qps[0];
    let causes: Vec<&str> = q.go_back_n.list.iter().map(|e| e.cause).collect();
    assert_eq!(causes, ["nak", "timeout"]);
    let e = &q.go_back_n.list[0];
    assert_eq!(e.cause_frame, Some(fr((1, 1))));
    // The resend of PSN 2 (tx.pcap#5), 5.5 us after its original, is the
    // episode's first packet, not a mirror copy: PSNs 2, 3 and later 4 resent.
    assert_eq!(
        (e.frame, e.rewind_psn, e.highest_psn, e.packets),
        (fr((0, 5)), 2, 3, 2)
    );
    assert_eq!((q.retransmitted_packets, q.mirror_duplicates), (3, 0));
}

/// Sender and receiver captures given as if they were bond slaves: every
/// request shows up in both, 30 us apart. The analysis cannot undo that,
/// but it must say so instead of blaming the bond.
#[test]
fn two_capture_points_of_one_path_are_called_out() {
    let (_dir, [p0, p1], mut s) = temp_captures("twopoints", ["sender.pcap", "receiver.pcap"]);
    let mut a = RcConn::new(ep(0x0a, 0x11), ep(0x0b, 0x12), 0xC000, 0);
    for i in 0..20u64 {
        let t = T0 + i * 100_000;
        a.request_file = 0;
        let x = a.message(&mut s, t, 100, true, 0, &[]).unwrap();
        a.request_file = 1;
        a.resend(&mut s, t + 30_000, x.last).unwrap();
        a.response_file = 1;
        a.ack(&mut s, t + 32_000, x.last).unwrap();
    }
    s.finish().unwrap();
    let r = analyze_files(&[&p0, &p1], &AnalyzeOptions::default())
        .unwrap()
        .report;
    assert!(
        r.findings.iter().any(|f| f.rule == "two-capture-points"),
        "{:?}",
        r.findings.iter().map(|f| f.rule).collect::<Vec<_>>()
    );
    assert!(!r.findings.iter().any(|f| f.rule == "qp-spread"));
}

/// UC has no ACKs, so nothing tells its requester's QPN but the CNPs that
/// DCQCN sends it: they still belong to the flow.
#[test]
fn cnps_of_a_uc_flow_belong_to_it() {
    let (_dir, [path], mut s) = temp_captures("uc", ["uc.pcap"]);
    let mut u = RcConn::new(ep(0x0a, 0x31), ep(0x0b, 0x32), 0xC300, 5);
    u.response_sport = 0;
    for i in 0..4u32 {
        u.packet(
            &mut s,
            T0 + u64::from(i) * 1000,
            0x24,
            Psn::new(5 + i),
            512,
            false,
        )
        .unwrap();
    }
    u.cnp_to_requester(&mut s, T0 + 5000).unwrap();
    s.finish().unwrap();
    let r = analyze_files(&[&path], &AnalyzeOptions::default())
        .unwrap()
        .report;
    assert!(r.response_only.is_empty());
    let q = &r.qps[0];
    assert_eq!(
        (q.transport, q.messages, q.cnps, q.packets),
        ("UC", 4, 1, 5)
    );
}
