//! Hand-computed checks of the RC state machine (the rules of Linux rxe,
//! drivers/infiniband/sw/rxe, with the header sizes of
//! include/rdma/ib_pack.h and the RNR timer codes of include/rdma/ib_verbs.h).
//! Every expected value below was worked out by hand from those rules; the
//! comments show the arithmetic.

use roce_codec::{
    FrameRepr, IbRepr, IpRepr, Ipv4Repr, NakCode, Opcode, Psn, Syndrome, SyndromeKind,
};
use rocesim::time::{Ps, Rate};
use rocesim::transport::loopback::{Dir, Loopback, Loss};
use rocesim::transport::{
    Completion, PostError, QpConfig, QpState, RcQp, Verb, WcStatus, WorkRequest,
};
use std::collections::BTreeSet;

const A: u32 = 0x108;
const B: u32 = 0x109;

fn cfg() -> QpConfig {
    QpConfig::default()
}

fn pair(cfg: QpConfig, a_psn: u32, b_psn: u32) -> Loopback {
    let a = RcQp::new(A, B, Psn::new(a_psn), Psn::new(b_psn), cfg);
    let b = RcQp::new(B, A, Psn::new(b_psn), Psn::new(a_psn), cfg);
    Loopback::new(a, b, Rate::gbps(100), Ps::from_ns(500), 1)
}

/// QP A talking to B, both starting at PSN 0.
fn requester(cfg: QpConfig) -> RcQp {
    RcQp::new(A, B, Psn::new(0), Psn::new(0), cfg)
}

/// Posts a work request, which `qp` must accept.
fn post(qp: &mut RcQp, wr_id: u64, verb: Verb, len: u64) {
    qp.post_send(WorkRequest::new(wr_id, verb, len)).unwrap();
}

/// The packets sent in `dir` (lost or not), in order.
fn sent(lb: &Loopback, dir: Dir) -> Vec<IbRepr> {
    lb.trace()
        .iter()
        .filter(|e| e.dir == dir)
        .map(|e| e.pkt)
        .collect()
}

fn completions(qp: &mut RcQp) -> Vec<Completion> {
    std::iter::from_fn(|| qp.poll_completion()).collect()
}

/// Drains every packet a QP has ready now.
fn drain(qp: &mut RcQp, now: Ps) -> Vec<IbRepr> {
    std::iter::from_fn(|| qp.next_tx(now)).collect()
}

fn ops(pkts: &[IbRepr]) -> Vec<u8> {
    pkts.iter().map(|p| p.bth.opcode.0).collect()
}

fn psns(pkts: &[IbRepr]) -> Vec<u32> {
    pkts.iter().map(|p| p.bth.psn.value()).collect()
}

#[test]
fn write_10000_at_mtu_4096_is_first_middle_last() {
    // 4096 (+RETH) / 4096 / 1808 -> frames 4174, 4158, 1870 bytes with FCS
    // (header sizes of include/rdma/ib_pack.h), i.e. 4170, 4154, 1866 as
    // captured.
    let mut qp = RcQp::new(A, B, Psn::new(100), Psn::new(0), cfg());
    post(&mut qp, 7, Verb::Write, 10_000);
    let pkts = drain(&mut qp, Ps::ZERO);
    assert_eq!(ops(&pkts), [0x06, 0x07, 0x08]);
    assert_eq!(psns(&pkts), [100, 101, 102]);
    let lens: Vec<u32> = pkts.iter().map(|p| p.payload_len).collect();
    assert_eq!(lens, [4096, 4096, 1808]);
    let reth = pkts[0].ext.reth().unwrap();
    assert_eq!(reth.dma_len, 10_000);
    assert_eq!((reth.va, reth.rkey), (cfg().remote_va, cfg().rkey));
    assert!(pkts[1].ext.reth().is_none() && pkts[2].ext.reth().is_none());
    assert!(
        pkts.iter()
            .all(|p| p.ext.immdt().is_none() && p.ext.aeth().is_none())
    );
    assert_eq!(
        pkts.iter().map(|p| p.bth.ack_req).collect::<Vec<_>>(),
        [false, false, true]
    );
    assert!(
        pkts.iter()
            .all(|p| p.bth.dest_qp == B && p.bth.pkey == 0xFFFF)
    );
    let frame_lens: Vec<usize> = pkts
        .iter()
        .map(|ib| {
            let ip = Ipv4Repr::udp([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), 0, 0);
            let f = FrameRepr::rocev2([2; 6], [4; 6], IpRepr::V4(ip), 0xC000, *ib);
            f.to_vec(&vec![0u8; ib.payload_len as usize]).len()
        })
        .collect();
    assert_eq!(frame_lens, [4170, 4154, 1866]);
    for p in &pkts {
        p.check().unwrap();
    }
}

#[test]
fn send_and_immediate_variants() {
    let mut qp = requester(QpConfig {
        pmtu: 1024,
        ..cfg()
    });
    // SEND with immediate of 5000 B at 1024: 4 full packets + 904.
    post(&mut qp, 0xAABB_CCDD_0000_0042, Verb::SendImm, 5000);
    // 1-byte SEND: ONLY, PadCnt 3.
    post(&mut qp, 2, Verb::Send, 1);
    // WRITE with immediate fitting one packet: ONLY with RETH and ImmDt.
    post(&mut qp, 3, Verb::WriteImm, 1024);
    // Zero-length WRITE: ONLY, no payload, RETH length 0, one PSN.
    post(&mut qp, 4, Verb::Write, 0);
    // WRITE with immediate over two packets: FIRST (RETH), LAST_IMM.
    post(&mut qp, 5, Verb::WriteImm, 1500);
    let pkts = drain(&mut qp, Ps::ZERO);
    assert_eq!(
        ops(&pkts),
        [0x00, 0x01, 0x01, 0x01, 0x03, 0x04, 0x0B, 0x0A, 0x06, 0x09]
    );
    assert_eq!(psns(&pkts), (0..10).collect::<Vec<_>>());
    assert_eq!(pkts[4].payload_len, 904);
    assert_eq!(pkts[4].ext.immdt().unwrap().data, 0x0000_0042);
    assert!(
        pkts[..4]
            .iter()
            .all(|p| p.ext.immdt().is_none() && p.ext.reth().is_none())
    );
    assert_eq!((pkts[5].payload_len, pkts[5].bth.pad_count), (1, 3));
    assert_eq!(pkts[6].ext.reth().unwrap().dma_len, 1024);
    assert_eq!(pkts[6].ext.immdt().unwrap().data, 3);
    assert_eq!(
        (pkts[7].payload_len, pkts[7].ext.reth().unwrap().dma_len),
        (0, 0)
    );
    assert_eq!(pkts[8].ext.reth().unwrap().dma_len, 1500);
    assert_eq!(
        (pkts[9].payload_len, pkts[9].ext.immdt().unwrap().data),
        (476, 5)
    );
    for p in &pkts {
        p.check().unwrap();
    }
}

#[test]
fn ack_req_on_last_packets_and_on_the_66th_non_last_packet() {
    // rxe: `noack_pkts++ > 64` -> the 66th consecutive non-last packet
    // carries AckReq, then the count restarts. 200 packets of 256 B:
    // AckReq at indices 65, 131, 197 and on the last one, 199.
    let mut qp = requester(QpConfig { pmtu: 256, ..cfg() });
    post(&mut qp, 1, Verb::Write, 200 * 256);
    let pkts = drain(&mut qp, Ps::ZERO);
    assert_eq!(pkts.len(), 129, "the unacked-PSN window stops at 129");
    let mut qp = requester(QpConfig {
        pmtu: 256,
        max_unacked_psns: 1000,
        ..cfg()
    });
    post(&mut qp, 1, Verb::Write, 200 * 256);
    // Then 3-packet messages: only their last packets, the counter having
    // been reset by the last packet of the long message.
    for i in 0..3 {
        post(&mut qp, 2 + i, Verb::Send, 3 * 256);
    }
    let pkts = drain(&mut qp, Ps::ZERO);
    let with: Vec<usize> = (0..pkts.len()).filter(|&i| pkts[i].bth.ack_req).collect();
    assert_eq!(with, [65, 131, 197, 199, 202, 205, 208]);

    // ack_req_every = 0: only last packets.
    let mut qp = requester(QpConfig {
        pmtu: 256,
        ack_req_every: 0,
        ..cfg()
    });
    post(&mut qp, 1, Verb::Write, 100 * 256);
    let pkts = drain(&mut qp, Ps::ZERO);
    let with: Vec<usize> = (0..pkts.len()).filter(|&i| pkts[i].bth.ack_req).collect();
    assert_eq!(with, [99]);
}

#[test]
fn read_reserves_psns_across_the_wrap() {
    // READ of 10000 B at 4096 from PSN 0xFFFFFE occupies ceil(10000/4096)
    // = 3 PSNs: 0xFFFFFE, 0xFFFFFF, 0x000000. The next request uses 1.
    let mut lb = pair(cfg(), 0xFF_FFFE, 0x00_0500);
    lb.record_trace();
    post(lb.a_mut(), 1, Verb::Read, 10_000);
    post(lb.a_mut(), 2, Verb::Write, 100);
    assert!(lb.run_until(Ps::from_ms(1), 10_000));
    let a_to_b: Vec<IbRepr> = sent(&lb, Dir::AtoB);
    assert_eq!(ops(&a_to_b), [0x0C, 0x0A]);
    assert_eq!(psns(&a_to_b), [0xFF_FFFE, 0x00_0001]);
    assert_eq!(a_to_b[0].ext.reth().unwrap().dma_len, 10_000);
    assert!(a_to_b[0].bth.ack_req);
    let b_to_a: Vec<IbRepr> = sent(&lb, Dir::BtoA);
    // Responses FIRST (AETH), MIDDLE, LAST (AETH), then the WRITE's ACK.
    assert_eq!(ops(&b_to_a), [0x0D, 0x0E, 0x0F, 0x11]);
    assert_eq!(psns(&b_to_a), [0xFF_FFFE, 0xFF_FFFF, 0x00_0000, 0x00_0001]);
    assert_eq!(
        b_to_a.iter().map(|p| p.payload_len).collect::<Vec<_>>(),
        [4096, 4096, 1808, 0]
    );
    assert!(b_to_a[0].ext.aeth().is_some() && b_to_a[1].ext.aeth().is_none());
    // MSN: the READ is message 1, the WRITE message 2.
    assert_eq!(b_to_a[2].ext.aeth().unwrap().msn, 1);
    assert_eq!(b_to_a[3].ext.aeth().unwrap().msn, 2);
    assert_eq!(lb.b().expected_psn(), Psn::new(2));
    let c = completions(lb.a_mut());
    assert_eq!(c.len(), 2);
    assert_eq!(
        (c[0].wr_id, c[0].verb, c[0].status, c[0].bytes),
        (1, Verb::Read, WcStatus::Success, 10_000)
    );
    assert_eq!((c[1].wr_id, c[1].status), (2, WcStatus::Success));
    assert!(c[0].at <= c[1].at);
}

#[test]
fn one_nak_per_sequence_error_episode_then_go_back_n() {
    // A 10-packet WRITE (PSN 0..9) at 100G, 500 ns each way; packet 2 is
    // lost. The responder NAKs once with its ePSN (2) and drops the later
    // packets silently; the requester resends from 2, MIDDLE packets
    // staying MIDDLE.
    // Timing: FIRST is 12+16+4096+4 + 66 = 4194 B on the wire = 335.52 ns,
    // the others 4178 B = 334.24 ns. Packet k >= 1 leaves at
    // 335.52 + (k-1) * 334.24 ns: packet 3 at 1004.00, arriving at
    // 1838.24 ns; the NAK (86 B = 6.88 ns) is back at 2345.12 ns. Packet 7
    // left at 2340.96 ns, packet 8 would leave at 2675.20: so 0..7 went,
    // then 2..9. The responder dropped 3..7 (5 packets).
    let mut lb = pair(cfg(), 0, 0);
    lb.record_trace();
    lb.set_loss(Dir::AtoB, Loss::Indices(BTreeSet::from([2])));
    post(lb.a_mut(), 1, Verb::Write, 10 * 4096);
    assert!(lb.run_until(Ps::from_ms(1), 10_000));
    let tr = lb.trace();
    let sent: Vec<IbRepr> = tr
        .iter()
        .filter(|e| e.dir == Dir::AtoB)
        .map(|e| e.pkt)
        .collect();
    assert_eq!(
        psns(&sent),
        [0, 1, 2, 3, 4, 5, 6, 7, 2, 3, 4, 5, 6, 7, 8, 9]
    );
    assert_eq!(
        ops(&sent[8..]),
        [0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x08]
    );
    let back: Vec<IbRepr> = tr
        .iter()
        .filter(|e| e.dir == Dir::BtoA)
        .map(|e| e.pkt)
        .collect();
    let naks: Vec<&IbRepr> = back
        .iter()
        .filter(|p| p.ext.aeth().unwrap().syndrome == Syndrome::NAK_PSN_SEQUENCE_ERROR)
        .collect();
    assert_eq!(naks.len(), 1);
    assert_eq!(naks[0].bth.psn, Psn::new(2));
    let b = lb.b().counters();
    assert_eq!(b.out_of_sequence_rx, 5, "3..7 dropped after the gap");
    assert_eq!(
        (b.naks_tx, b.naks_tx_by_syndrome.psn_sequence_error),
        (1, 1)
    );
    let a = lb.a().counters();
    // 2..7 were sent before; 8 and 9 are new.
    assert_eq!(a.retransmitted_packets, 6);
    assert_eq!(a.retransmitted_payload_bytes, 6 * 4096);
    assert_eq!(a.rewinds.psn_sequence_error, 1);
    assert_eq!(a.naks_rx_by_syndrome.psn_sequence_error, 1);
    assert_eq!(a.timeouts, 0);
    let c = completions(lb.a_mut());
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].status, WcStatus::Success);
    assert_eq!(lb.b().counters().bytes_received, 10 * 4096);
}

#[test]
fn resend_from_the_middle_of_a_send_keeps_middle_opcodes() {
    let mut lb = pair(cfg(), 50, 0);
    lb.b_mut().post_recv(1);
    lb.record_trace();
    lb.set_loss(Dir::AtoB, Loss::Indices(BTreeSet::from([1])));
    post(lb.a_mut(), 1, Verb::Send, 4 * 4096);
    assert!(lb.run_until(Ps::from_ms(1), 10_000));
    let sent: Vec<IbRepr> = sent(&lb, Dir::AtoB);
    assert_eq!(ops(&sent), [0x00, 0x01, 0x01, 0x02, 0x01, 0x01, 0x02]);
    assert_eq!(psns(&sent), [50, 51, 52, 53, 51, 52, 53]);
    assert_eq!(lb.b().counters().recv_wqes_consumed, 1);
    assert_eq!(lb.b().rq_len(), 0);
    assert_eq!(completions(lb.a_mut())[0].status, WcStatus::Success);
}

#[test]
fn duplicates_are_re_acked_with_epsn_minus_one() {
    // A 3-packet WRITE (PSN 10..12) arrives whole but its only ACK (PSN 12)
    // is lost. After the ACK timeout the requester resends 10, 11, 12; the
    // responder, whose ePSN is 13, ACKs each duplicate with 13 - 1 = 12
    // (rxe duplicate_request), even the duplicate of PSN 10.
    let mut lb = pair(
        QpConfig {
            timeout: 8,
            ..cfg()
        },
        10,
        0,
    );
    lb.record_trace();
    lb.set_loss(Dir::BtoA, Loss::Indices(BTreeSet::from([0])));
    post(lb.a_mut(), 1, Verb::Write, 3 * 4096);
    assert!(lb.run_until(Ps::from_ms(10), 10_000));
    let back: Vec<&IbRepr> = lb
        .trace()
        .iter()
        .filter(|e| e.dir == Dir::BtoA)
        .map(|e| &e.pkt)
        .collect();
    assert!(back.len() >= 2);
    assert!(
        back.iter()
            .all(|p| p.bth.psn == Psn::new(12) && p.ext.aeth().unwrap().syndrome.is_ack())
    );
    let b = lb.b().counters();
    assert_eq!(b.duplicate_requests_rx, 3);
    assert_eq!(lb.b().expected_psn(), Psn::new(13));
    // The duplicates were not executed again.
    assert_eq!(b.msgs_received, 1);
    assert_eq!(b.bytes_received, 3 * 4096);
    let a = lb.a().counters();
    assert_eq!(
        (a.timeouts, a.rewinds.timeout, a.retransmitted_packets),
        (1, 1, 3)
    );
    let c = completions(lb.a_mut());
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].status, WcStatus::Success);
    // Completed when the first re-ACK came back.
    let t = 4_096_000u64 << 8;
    assert!(c[0].at > Ps(t));
}

#[test]
fn ack_timeout_arithmetic() {
    let t = |timeout| QpConfig { timeout, ..cfg() }.ack_timeout();
    assert_eq!(t(0), None);
    assert_eq!(t(1), Some(Ps::from_ns(8_192)));
    // 4.096 us x 2^14 = 67.108864 ms
    assert_eq!(t(14), Some(Ps(67_108_864_000)));
    // NCCL's 20: 4.294967296 s; 31: 8796 s.
    assert_eq!(t(20), Some(Ps(4_294_967_296_000)));
    assert_eq!(t(31), Some(Ps(4_096_000u64 << 31)));
}

/// The requester alone against a silent network: returns the times of the
/// transmissions of PSN `psn` and the completions.
fn silent(retry_cnt: u8, timeout: u8, wrs: u64) -> (Vec<Ps>, Vec<Completion>, RcQp) {
    let mut lb = pair(
        QpConfig {
            timeout,
            retry_cnt,
            ..cfg()
        },
        0x77,
        0,
    );
    lb.record_trace();
    lb.set_loss(Dir::AtoB, Loss::All);
    for i in 0..wrs {
        post(lb.a_mut(), i, Verb::Write, 100);
    }
    assert!(lb.run_until(Ps::from_ms(100_000), 1_000_000), "went quiet");
    let times = lb
        .trace()
        .iter()
        .filter(|e| e.dir == Dir::AtoB && e.pkt.bth.psn == Psn::new(0x77))
        .map(|e| e.at)
        .collect();
    let c = completions(lb.a_mut());
    (times, c, lb.a().clone())
}

#[test]
fn retry_cnt_7_means_8_transmissions_then_status_12() {
    // timeout 14: T = 67.108864 ms. The WRITE goes at 0 and again at each
    // expiry T, 2T, ..., 7T (7 retries); the 8th expiry, at 8T =
    // 536.870912 ms, completes it with IBV_WC_RETRY_EXC_ERR (12).
    let (times, c, qp) = silent(7, 14, 1);
    let t = 67_108_864_000u64;
    assert_eq!(times, (0..8).map(|k| Ps(k * t)).collect::<Vec<_>>());
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].status, WcStatus::RetryExcErr);
    assert_eq!(c[0].status.code(), 12);
    assert_eq!(c[0].at, Ps(8 * t));
    assert_eq!(c[0].at, Ps(536_870_912_000));
    assert_eq!(qp.state(), QpState::Error(WcStatus::RetryExcErr));
    let k = qp.counters();
    assert_eq!(
        (k.timeouts, k.rewinds.timeout, k.retransmitted_packets),
        (8, 7, 7)
    );
}

#[test]
fn retry_cnt_n_means_n_retries() {
    for n in 0..=7u8 {
        let (times, c, _) = silent(n, 1, 1);
        assert_eq!(times.len(), usize::from(n) + 1, "retry_cnt {n}");
        // timeout 1: T = 8.192 us.
        assert_eq!(c[0].at, Ps(8_192_000 * (u64::from(n) + 1)));
        assert_eq!(c[0].status, WcStatus::RetryExcErr);
    }
}

#[test]
fn error_flushes_every_later_request_with_status_5() {
    let (_, c, mut qp) = silent(0, 1, 3);
    let st: Vec<(u64, u8)> = c.iter().map(|c| (c.wr_id, c.status.code())).collect();
    assert_eq!(st, [(0, 12), (1, 5), (2, 5)]);
    assert!(c.iter().all(|c| c.at == Ps(8_192_000) && c.bytes == 0));
    // Posting to an Error QP completes at once with a flush; nothing is sent.
    post(&mut qp, 9, Verb::Send, 10);
    assert_eq!(qp.poll_completion().unwrap().status, WcStatus::WrFlushErr);
    assert_eq!(qp.next_tx(Ps::from_ms(1)), None);
    assert_eq!(qp.tx_ready_at(Ps::from_ms(1)), None);
    assert_eq!(qp.next_timer(), None);
    assert_eq!(qp.counters().msgs_failed, 4);
}

#[test]
fn timeout_zero_never_retries() {
    let mut lb = pair(
        QpConfig {
            timeout: 0,
            ..cfg()
        },
        0,
        0,
    );
    lb.set_loss(Dir::AtoB, Loss::All);
    post(lb.a_mut(), 1, Verb::Write, 1);
    assert!(lb.run_until(Ps::from_ms(1000), 1000));
    assert_eq!(lb.a().next_timer(), None);
    assert_eq!(lb.a().state(), QpState::Rts);
    assert_eq!(lb.sent(Dir::AtoB), (1, 1));
}

#[test]
fn rnr_nak_waits_the_timer_of_its_code() {
    // No receive posted: the SEND is RNR NAKed with min_rnr_timer 12
    // (640 us) and the NAK's PSN is the SEND's PSN. The requester resends
    // exactly 640 us after the NAK arrived; by then a receive is posted.
    let mut lb = pair(
        QpConfig {
            min_rnr_timer: 12,
            ..cfg()
        },
        300,
        0,
    );
    lb.record_trace();
    post(lb.a_mut(), 1, Verb::Send, 100);
    post(lb.a_mut(), 2, Verb::Write, 100);
    // Not quiet at 100 us: the RNR wait is pending.
    assert!(!lb.run_until(Ps::from_us(100), 10_000));
    assert!(lb.a().next_timer().is_some());
    // Until 100 us: SEND 300, WRITE 301, RNR NAK 300, then the sequence
    // NAK 300 the out-of-order WRITE earns (an RNR NAK is no sequence
    // error: it does not silence the next one).
    let tr: Vec<_> = lb.trace().to_vec();
    let nak = tr.iter().find(|e| e.dir == Dir::BtoA).unwrap();
    assert_eq!(nak.pkt.bth.psn, Psn::new(300));
    assert_eq!(nak.pkt.ext.aeth().unwrap().syndrome, Syndrome(0x20 | 12));
    let from_b: Vec<_> = tr.iter().filter(|e| e.dir == Dir::BtoA).collect();
    assert_eq!(from_b.len(), 2);
    assert_eq!(from_b[1].pkt.bth.psn, Psn::new(300));
    assert_eq!(
        from_b[1].pkt.ext.aeth().unwrap().syndrome,
        Syndrome::NAK_PSN_SEQUENCE_ERROR
    );
    assert_eq!(lb.b().counters().out_of_sequence_rx, 1);
    lb.b_mut().post_recv(1);
    assert!(lb.run_until(Ps::from_ms(10), 10_000));
    let tr = lb.trace();
    // NAK arrival = its departure + serialization (12+4+4+66 = 86 B at
    // 100G = 6.88 ns) + 500 ns.
    let nak_arrival = nak.at + Ps(6_880) + Ps::from_ns(500);
    let resend = tr.iter().filter(|e| e.dir == Dir::AtoB).nth(2).unwrap();
    assert_eq!(resend.pkt.bth.psn, Psn::new(300));
    assert_eq!(resend.at, nak_arrival + Ps::from_us(640));
    // The sequence NAK named the PSN the RNR wait resends from: no retry
    // of its own, no second go-back-N.
    let a = lb.a().counters();
    assert_eq!(
        (a.naks_rx_by_syndrome.rnr_nak, a.rewinds.rnr, a.timeouts),
        (1, 1, 0)
    );
    assert_eq!(a.naks_rx_by_syndrome.psn_sequence_error, 1);
    assert_eq!(a.rewinds.psn_sequence_error, 0);
    let c = completions(lb.a_mut());
    assert_eq!(
        c.iter().map(|c| c.status).collect::<Vec<_>>(),
        [WcStatus::Success; 2]
    );
}

#[test]
fn rnr_retry_exhaustion_is_status_13_and_7_is_infinite() {
    // rnr_retry 2, min_rnr_timer 1 (10 us), never a receive: the SEND goes
    // 3 times (first + 2 retries), the third RNR NAK fails it with 13.
    // min_rnr_timer 1 (10 us) and `rnr_retry`, never a receive posted.
    let refused = |rnr_retry| {
        pair(
            QpConfig {
                min_rnr_timer: 1,
                rnr_retry,
                ..cfg()
            },
            0,
            0,
        )
    };
    let mut lb = refused(2);
    post(lb.a_mut(), 1, Verb::Send, 100);
    post(lb.a_mut(), 2, Verb::Send, 100);
    assert!(lb.run_until(Ps::from_ms(10), 10_000));
    let c = completions(lb.a_mut());
    assert_eq!(
        c.iter().map(|c| c.status.code()).collect::<Vec<_>>(),
        [13, 5]
    );
    assert_eq!(lb.a().counters().naks_rx_by_syndrome.rnr_nak, 3);
    assert_eq!(lb.b().counters().naks_tx_by_syndrome.rnr_nak, 3);
    assert_eq!(lb.a().state(), QpState::Error(WcStatus::RnrRetryExcErr));

    let mut lb = refused(7);
    post(lb.a_mut(), 1, Verb::Send, 100);
    assert!(!lb.run_until(Ps::from_ms(10), 1_000_000));
    assert_eq!(lb.a().state(), QpState::Rts);
    // One try every ~10 us for 10 ms.
    assert!(lb.a().counters().naks_rx_by_syndrome.rnr_nak > 900);
    lb.b_mut().post_recv(1);
    assert!(lb.run_until(Ps::from_ms(20), 1_000_000));
    assert_eq!(completions(lb.a_mut())[0].status, WcStatus::Success);
}

#[test]
fn rnr_timer_codes_follow_the_table() {
    // enum ib_rnr_timeout (include/rdma/ib_verbs.h) through the QP: code
    // 1 = 10 us, 0 = 655.36 ms, 31 = 491.52 ms. Feed an RNR NAK by hand and
    // read the deadline.
    for (code, us) in [
        (1u8, 10u64),
        (0, 655_360),
        (31, 491_520),
        (14, 1280),
        (25, 61_440),
    ] {
        let mut qp = RcQp::new(A, B, Psn::new(5), Psn::new(0), cfg());
        post(&mut qp, 1, Verb::Send, 8);
        qp.next_tx(Ps::ZERO).unwrap();
        let t0 = Ps::from_us(3);
        qp.on_receive(
            &IbRepr::ack(A, Psn::new(5), Syndrome::rnr_nak(code), 0),
            false,
            t0,
        );
        assert_eq!(qp.next_timer(), Some(t0 + Ps::from_us(us)), "code {code}");
        assert_eq!(qp.tx_ready_at(t0), None, "silent while waiting");
        qp.on_timer(t0 + Ps::from_us(us));
        let again = qp.next_tx(t0 + Ps::from_us(us)).unwrap();
        assert_eq!(
            (again.bth.opcode, again.bth.psn),
            (Opcode(0x04), Psn::new(5))
        );
    }
}

#[test]
fn class_c_naks_complete_with_9_10_11() {
    for (code, status) in [
        (NakCode::InvalidRequest, 9u8),
        (NakCode::RemoteAccessError, 10),
        (NakCode::RemoteOperationalError, 11),
        (NakCode::InvalidRdRequest, 11),
    ] {
        let mut qp = requester(cfg());
        for i in 0..3 {
            post(&mut qp, i, Verb::Write, 4096);
        }
        assert_eq!(drain(&mut qp, Ps::ZERO).len(), 3);
        // ACK for PSN 0, then the NAK for PSN 1: WR 0 succeeds, WR 1 fails
        // with the NAK's status, WR 2 flushes.
        qp.on_receive(
            &IbRepr::ack(A, Psn::new(0), Syndrome::ACK_NO_CREDITS, 1),
            false,
            Ps(10),
        );
        qp.on_receive(
            &IbRepr::ack(A, Psn::new(1), Syndrome::nak(code), 1),
            false,
            Ps(20),
        );
        let c = completions(&mut qp);
        let got: Vec<(u64, u8)> = c.iter().map(|c| (c.wr_id, c.status.code())).collect();
        assert_eq!(got, [(0, 0), (1, status), (2, 5)]);
        assert_eq!(qp.state(), QpState::Error(c[1].status));
    }
}

#[test]
fn unacked_psn_window_and_tx_depth() {
    // max_unacked_psns 10: PSNs 0..=10 go (rxe's `req.psn > comp.psn +
    // 10` test), the 12th waits; an ACK for PSN 4 opens 5 more.
    let c = QpConfig {
        pmtu: 256,
        max_unacked_psns: 10,
        max_send_wr: 2,
        ..cfg()
    };
    let mut qp = requester(c);
    post(&mut qp, 1, Verb::Write, 30 * 256);
    post(&mut qp, 2, Verb::Write, 1);
    assert_eq!(
        qp.post_send(WorkRequest::new(3, Verb::Write, 1)),
        Err(PostError::QueueFull { depth: 2 })
    );
    assert_eq!(
        psns(&drain(&mut qp, Ps::ZERO)),
        (0..=10).collect::<Vec<_>>()
    );
    assert_eq!(qp.tx_ready_at(Ps::ZERO), None);
    qp.on_receive(
        &IbRepr::ack(A, Psn::new(4), Syndrome::ACK_NO_CREDITS, 0),
        false,
        Ps(1),
    );
    assert_eq!(psns(&drain(&mut qp, Ps(1))), (11..=15).collect::<Vec<_>>());
    assert_eq!(
        qp.post_send(WorkRequest::new(3, Verb::Write, 1 << 40)),
        Err(PostError::MessageTooLong {
            len: 1 << 40,
            max: 1 << 29
        })
    );
}

#[test]
fn an_inflight_cap_holds_exactly_that_many_packets_and_can_move() {
    // A cap of 5 (a byte window of 5 packets): PSNs 0..=4 go, the 6th
    // waits, unlike the unacked-PSN window's one more; an ACK for PSN 1
    // opens 2 more. Shrunk to 2 with 5 in flight: nothing goes until only
    // 1 is; lifted: the rest goes.
    let c = QpConfig { pmtu: 256, ..cfg() };
    let mut qp = requester(c);
    qp.set_inflight_cap(Some(5));
    post(&mut qp, 1, Verb::Write, 30 * 256);
    assert_eq!(psns(&drain(&mut qp, Ps::ZERO)), (0..=4).collect::<Vec<_>>());
    assert_eq!(qp.tx_ready_at(Ps::ZERO), None);
    qp.on_receive(
        &IbRepr::ack(A, Psn::new(1), Syndrome::ACK_NO_CREDITS, 0),
        false,
        Ps(1),
    );
    assert_eq!(psns(&drain(&mut qp, Ps(1))), [5, 6]);
    qp.set_inflight_cap(Some(2));
    qp.on_receive(
        &IbRepr::ack(A, Psn::new(4), Syndrome::ACK_NO_CREDITS, 0),
        false,
        Ps(2),
    );
    assert_eq!(qp.next_tx(Ps(2)), None, "5 and 6 in flight, cap 2");
    qp.on_receive(
        &IbRepr::ack(A, Psn::new(5), Syndrome::ACK_NO_CREDITS, 0),
        false,
        Ps(3),
    );
    assert_eq!(psns(&drain(&mut qp, Ps(3))), [7]);
    // 0 is taken as 1: a window never stops a QP for good.
    qp.set_inflight_cap(Some(0));
    qp.on_receive(
        &IbRepr::ack(A, Psn::new(7), Syndrome::ACK_NO_CREDITS, 0),
        false,
        Ps(4),
    );
    assert_eq!(psns(&drain(&mut qp, Ps(4))), [8]);
    qp.set_inflight_cap(None);
    assert_eq!(psns(&drain(&mut qp, Ps(5))), (9..30).collect::<Vec<_>>());
}

#[test]
fn max_rd_atomic_bounds_outstanding_reads() {
    let c = QpConfig {
        max_rd_atomic: 2,
        ..cfg()
    };
    let mut qp = requester(c);
    for i in 0..4 {
        post(&mut qp, i, Verb::Read, 8192);
    }
    let p = drain(&mut qp, Ps::ZERO);
    assert_eq!(psns(&p), [0, 2]);
    // The first READ's two responses complete it: a third READ may go.
    let mut r = IbRepr::new(Opcode(0x0D), A, Psn::new(0), 4096);
    r.ext.set_aeth(Some(roce_codec::AethRepr {
        syndrome: Syndrome::ACK_NO_CREDITS,
        msn: 1,
    }));
    qp.on_receive(&r, false, Ps(5));
    assert_eq!(qp.next_tx(Ps(5)), None);
    let mut r = IbRepr::new(Opcode(0x0F), A, Psn::new(1), 4096);
    r.ext.set_aeth(Some(roce_codec::AethRepr {
        syndrome: Syndrome::ACK_NO_CREDITS,
        msn: 1,
    }));
    qp.on_receive(&r, false, Ps(6));
    assert_eq!(psns(&drain(&mut qp, Ps(6))), [4]);
    assert_eq!(qp.poll_completion().unwrap().wr_id, 0);
}

#[test]
fn read_response_gap_re_requests_the_rest() {
    // READ of 5 x 1024 + 100 B at pmtu 1024 from PSN 20: responses 20..25.
    // Response 22 is lost: the requester re-requests once, from PSN 22,
    // for the 3 x 1024 + 100 bytes left at va + 2048.
    let c = QpConfig {
        pmtu: 1024,
        ..cfg()
    };
    let mut lb = pair(c, 20, 0);
    lb.record_trace();
    lb.set_loss(Dir::BtoA, Loss::Indices(BTreeSet::from([2])));
    post(lb.a_mut(), 1, Verb::Read, 5 * 1024 + 100);
    assert!(lb.run_until(Ps::from_ms(1), 10_000));
    let reqs: Vec<IbRepr> = sent(&lb, Dir::AtoB);
    assert_eq!(psns(&reqs), [20, 22]);
    let reth = reqs[1].ext.reth().unwrap();
    assert_eq!(reth.va, c.remote_va + 2048);
    assert_eq!(reth.dma_len, 3 * 1024 + 100);
    let resp: Vec<IbRepr> = sent(&lb, Dir::BtoA);
    // Original 20..25 (22 lost), the replay 22..25 starting with FIRST.
    assert_eq!(psns(&resp), [20, 21, 22, 23, 24, 25, 22, 23, 24, 25]);
    assert_eq!(ops(&resp[6..]), [0x0D, 0x0E, 0x0E, 0x0F]);
    assert_eq!(resp[9].payload_len, 100);
    let a = lb.a().counters();
    assert_eq!(a.rewinds.read_response_gap, 1);
    assert_eq!(a.stale_responses_rx, 2, "23 and 24 of the first stream");
    assert_eq!(a.retransmitted_packets, 1);
    assert_eq!(lb.b().counters().read_replays, 1);
    let c = completions(lb.a_mut());
    assert_eq!(
        (c.len(), c[0].status, c[0].bytes),
        (1, WcStatus::Success, 5 * 1024 + 100)
    );
}

#[test]
fn ack_past_an_incomplete_read_retries_it() {
    // Every response of the READ is lost; the WRITE after it is ACKed,
    // which tells the requester the responder is done with the READ.
    let mut lb = pair(cfg(), 0, 0);
    lb.record_trace();
    lb.set_loss(Dir::BtoA, Loss::Indices(BTreeSet::from([0, 1])));
    post(lb.a_mut(), 1, Verb::Read, 8192);
    post(lb.a_mut(), 2, Verb::Write, 8);
    assert!(lb.run_until(Ps::from_ms(1), 10_000));
    let a = lb.a().counters();
    assert_eq!(a.rewinds.ack_past_read, 1);
    assert_eq!(a.timeouts, 0);
    let c = completions(lb.a_mut());
    assert_eq!(
        c.iter().map(|c| (c.wr_id, c.status)).collect::<Vec<_>>(),
        [(1, WcStatus::Success), (2, WcStatus::Success)]
    );
}

#[test]
fn ce_marks_and_cnps_are_counted() {
    let mut qp = requester(cfg());
    qp.post_recv(1);
    let w = IbRepr::new(Opcode(0x04), A, Psn::new(0), 64).with_ack_req(true);
    qp.on_receive(&w, true, Ps(100));
    qp.on_receive(&IbRepr::cnp(A), false, Ps(200));
    let k = qp.counters();
    assert_eq!((k.ce_marks_rx, k.cnps_rx, k.rx.cnp.packets), (1, 1, 1));
    assert_eq!(qp.last_ce_mark(), Some(Ps(100)));
    assert_eq!(qp.last_cnp(), Some(Ps(200)));
    // The CE-marked SEND was still accepted and ACKed.
    let ack = qp.next_tx(Ps(300)).unwrap();
    assert!(matches!(
        ack.ext.aeth().unwrap().syndrome.kind(),
        SyndromeKind::Ack { .. }
    ));
    assert_eq!(ack.bth.psn, Psn::new(0));
}

#[test]
fn rate_limiter_spaces_data_packets() {
    // 10 Gb/s: a 4096-B WRITE MIDDLE is 12 + 4096 + 4 + 66 = 4178 B on the
    // wire = 33424 bits = 3342.4 ns.
    let mut qp = requester(cfg());
    qp.set_rate_limit(Some(Rate::gbps(10)));
    post(&mut qp, 1, Verb::Write, 3 * 4096);
    let p0 = qp.next_tx(Ps::ZERO).unwrap();
    assert_eq!(p0.bth.opcode, Opcode(0x06));
    // FIRST: +16 B RETH -> 4194 B = 3355.2 ns.
    assert_eq!(qp.tx_ready_at(Ps::ZERO), Some(Ps(3_355_200)));
    assert_eq!(qp.next_tx(Ps(3_355_199)), None);
    qp.next_tx(Ps(3_355_200)).unwrap();
    assert_eq!(
        qp.tx_ready_at(Ps(3_355_200)),
        Some(Ps(3_355_200 + 3_342_400))
    );
    // Responses (ACKs) are never held back.
    qp.post_recv(1);
    qp.on_receive(
        &IbRepr::new(Opcode(0x04), A, Psn::new(0), 8).with_ack_req(true),
        false,
        Ps(3_355_300),
    );
    assert_eq!(qp.tx_ready_at(Ps(3_355_300)), Some(Ps(3_355_300)));
    assert_eq!(qp.next_tx(Ps(3_355_300)).unwrap().bth.opcode, Opcode(0x11));
}

#[test]
fn a_new_gap_after_recovery_is_a_new_episode_with_its_own_nak() {
    // Two losses far apart: the responder clears `nak_sent` when the
    // missing packet arrives, so the second gap gets its own NAK and no
    // ACK timeout is needed.
    let mut lb = pair(cfg(), 0, 0);
    lb.record_trace();
    lb.set_loss(Dir::AtoB, Loss::Indices(BTreeSet::from([2, 25])));
    post(lb.a_mut(), 1, Verb::Write, 40 * 4096);
    assert!(lb.run_until(Ps::from_ms(1), 100_000));
    let lost: Vec<u32> = lb
        .trace()
        .iter()
        .filter(|e| e.dropped)
        .map(|e| e.pkt.bth.psn.value())
        .collect();
    let naks: Vec<u32> = lb
        .trace()
        .iter()
        .filter(|e| e.dir == Dir::BtoA)
        .filter(|e| e.pkt.ext.aeth().unwrap().syndrome == Syndrome::NAK_PSN_SEQUENCE_ERROR)
        .map(|e| e.pkt.bth.psn.value())
        .collect();
    assert_eq!(lost.len(), 2);
    assert_eq!(naks, lost);
    let a = lb.a().counters();
    assert_eq!((a.timeouts, a.rewinds.psn_sequence_error), (0, 2));
    assert_eq!(completions(lb.a_mut())[0].status, WcStatus::Success);
}

#[test]
fn out_of_order_opcode_is_an_invalid_request_nak() {
    // A MIDDLE with the expected PSN but no message started: the responder
    // NAKs it with 0x61 (invalid request, PSN of the offending packet) and
    // then goes to Error.
    let mut qp = RcQp::new(B, A, Psn::new(0), Psn::new(40), cfg());
    let bad = IbRepr::new(Opcode(0x07), B, Psn::new(40), 4096);
    qp.on_receive(&bad, false, Ps(1));
    let nak = qp.next_tx(Ps(2)).unwrap();
    assert_eq!(nak.bth.psn, Psn::new(40));
    assert_eq!(
        nak.ext.aeth().unwrap().syndrome,
        Syndrome::nak(NakCode::InvalidRequest)
    );
    assert_eq!(qp.counters().naks_tx_by_syndrome.invalid_request, 1);
    assert!(matches!(qp.state(), QpState::Error(_)));
    assert_eq!(qp.next_tx(Ps(3)), None);
}

#[test]
fn seeded_random_loss_is_deterministic_and_recovers() {
    let run = |seed| {
        let a = requester(cfg());
        let b = RcQp::new(B, A, Psn::new(0), Psn::new(0), cfg());
        let mut lb = Loopback::new(a, b, Rate::gbps(100), Ps::from_ns(500), seed);
        lb.record_trace();
        lb.set_loss(Dir::AtoB, Loss::Random(0.05));
        lb.set_loss(Dir::BtoA, Loss::Random(0.05));
        lb.b_mut().post_recv(20);
        for i in 0..20 {
            let verb = [Verb::Write, Verb::Send, Verb::Read][i as usize % 3];
            post(lb.a_mut(), i, verb, 30_000);
        }
        assert!(lb.run_until(Ps::from_ms(60_000), 1_000_000));
        let c = completions(lb.a_mut());
        assert!(c.iter().all(|c| c.status == WcStatus::Success));
        assert_eq!(c.len(), 20);
        let drops = lb.sent(Dir::AtoB).1 + lb.sent(Dir::BtoA).1;
        (lb.trace().to_vec(), drops)
    };
    let (t1, d1) = run(42);
    let (t2, d2) = run(42);
    assert_eq!(t1, t2, "same seed, same packets at the same times");
    assert!(d1 > 0 && d1 == d2);
    let (t3, _) = run(43);
    assert_ne!(t1, t3);
}

#[test]
fn the_ack_of_a_packet_received_echoing_congestion_carries_becn() {
    // ACK every packet (ack_req_every 1). A 3-packet WRITE (PSN 0..2) at
    // a responder with ePSN 0: packet 1 asks its ACK to echo a CE mark
    // (the reference's CNP flag), packets 0 and 2 do not; a duplicate of
    // packet 1 re-ACKed with ePSN - 1 = 2 echoes when asked, and a NAK
    // does as well. Only the asked-for ACKs carry BECN. (No coalescing:
    // each packet's ACK leaves.)
    let c = QpConfig {
        ack_req_every: 1,
        segment_bytes: 1000,
        coalesce_acks: false,
        ..cfg()
    };
    let mut a = requester(c);
    let mut b = RcQp::new(B, A, Psn::new(0), Psn::new(0), c);
    post(&mut a, 1, Verb::Write, 3000);
    let data = drain(&mut a, Ps::ZERO);
    assert_eq!(psns(&data), [0, 1, 2]);
    for (i, p) in data.iter().enumerate() {
        b.on_receive_echoing(p, i == 1, i == 1, Ps(i as u64));
    }
    b.on_receive_echoing(&data[1], true, true, Ps(5));
    let acks = drain(&mut b, Ps(6));
    assert_eq!(psns(&acks), [0, 1, 2, 2]);
    let becn: Vec<bool> = acks.iter().map(|p| p.bth.becn).collect();
    assert_eq!(becn, [false, true, false, true]);
    // Out of order (PSN 5 at ePSN 3): the NAK echoes.
    let mut late = data[2];
    late.bth.psn = Psn::new(5);
    b.on_receive_echoing(&late, true, true, Ps(7));
    let nak = b.next_tx(Ps(8)).unwrap();
    assert_eq!(
        nak.ext.aeth().unwrap().syndrome,
        Syndrome::NAK_PSN_SEQUENCE_ERROR
    );
    assert!(nak.bth.becn);
    // Coalesced (rxe): the one ACK left says what the four said, the echo
    // included.
    let mut r = RcQp::new(
        B,
        A,
        Psn::new(0),
        Psn::new(0),
        QpConfig {
            coalesce_acks: true,
            ..c
        },
    );
    for (i, p) in data.iter().enumerate() {
        r.on_receive_echoing(p, i == 1, i == 1, Ps(i as u64));
    }
    let acks = drain(&mut r, Ps(6));
    assert_eq!((psns(&acks), acks[0].bth.becn), (vec![2], true));
    // The plain entry point never echoes.
    let mut d = RcQp::new(B, A, Psn::new(0), Psn::new(0), c);
    d.on_receive(&data[0], true, Ps::ZERO);
    assert!(!d.next_tx(Ps(1)).unwrap().bth.becn);
}
