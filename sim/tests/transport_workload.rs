//! perftest-like workloads over the loopback bench, with hand-computed
//! throughput and timing.

use PerftestOp::*;
use roce_codec::Psn;
use rocesim::time::{Ps, Rate};
use rocesim::transport::loopback::{Dir, Loopback};
use rocesim::transport::{
    MessageSpec, PerftestOp, PerftestSpec, QpConfig, RcQp, Verb, WcStatus, Workload, WorkloadError,
    WorkloadSpec,
};

fn bench(cfg: QpConfig) -> Loopback {
    let a = RcQp::new(0x100, 0x200, Psn::new(0), Psn::new(0), cfg);
    let b = RcQp::new(0x200, 0x100, Psn::new(0), Psn::new(0), cfg);
    Loopback::new(a, b, Rate::gbps(100), Ps::from_ns(500), 0)
}

/// A perftest of `op` with `-s size -n iters -t tx_depth`.
fn perftest_spec(op: PerftestOp, size: u64, iters: u64, tx_depth: u32) -> PerftestSpec {
    PerftestSpec {
        size,
        iters,
        tx_depth,
        ..PerftestSpec::new(op)
    }
}

fn perftest(spec: PerftestSpec) -> Workload {
    Workload::new(WorkloadSpec::Perftest(spec)).unwrap()
}

#[test]
fn ib_write_bw_runs_at_line_rate_minus_headers() {
    // ib_write_bw -s 65536 -n 100 -t 16 at 100G: 16 packets per message,
    // FIRST 12+16+4096+4+66 = 4194 B on the wire, 15 others 4178 B:
    // 66864 B per message, back to back (the 129-PSN window and 16 WRs
    // are far more than the 1 us RTT needs). The last packet ends at
    // 100 x 66864 x 8 / 100e9 = 534.912 us, arrives 500 ns later; its ACK
    // (86 B = 6.88 ns) is back at 535.91888 us.
    let mut w = perftest(perftest_spec(WriteBw, 65536, 100, 16));
    let mut lb = bench(QpConfig::default());
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    let s = *w.stats(0);
    assert_eq!((s.posted, s.completed, s.failed), (100, 100, 0));
    assert_eq!(s.bytes_completed, 100 * 65536);
    assert_eq!(s.first_post_at, Some(Ps::ZERO));
    assert_eq!(s.last_completion_at, Some(Ps(535_918_880)));
    // 6553600 B x 8 / 535.91888 us = 97.8297 Gb/s.
    let g = s.goodput_bps() / 1e9;
    assert!((g - 97.8297).abs() < 1e-4, "{g}");
    assert_eq!(lb.a().counters().bytes_completed, 100 * 65536);
    assert_eq!(lb.a().counters().tx.write.packets, 1600);
    assert!(w.is_done());
}

#[test]
fn tx_depth_bounds_outstanding_work_requests() {
    let mut w = perftest(perftest_spec(WriteBw, 4096, 50, 3));
    let mut lb = bench(QpConfig::default());
    let mut max = 0;
    for _ in 0..100_000 {
        let now = lb.now();
        w.drive_responder(0, lb.b_mut(), now);
        w.drive_requester(0, lb.a_mut(), now);
        max = max.max(lb.a().sq_outstanding());
        if !lb.step() {
            break;
        }
    }
    let now = lb.now();
    w.drive_requester(0, lb.a_mut(), now);
    assert_eq!(max, 3);
    assert!(w.qp_done(0));
    assert_eq!(w.stats(0).completed, 50);
}

#[test]
fn ib_send_bw_server_reposts_receives() {
    // rx_depth 4 < tx_depth 16: the server must repost as receives are
    // consumed, and post exactly -n receives in all; no RNR NAK.
    let mut w = perftest(PerftestSpec {
        rx_depth: 4,
        ..perftest_spec(SendBw, 8192, 60, 16)
    });
    let mut lb = bench(QpConfig::default());
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    assert_eq!(w.stats(0).completed, 60);
    assert_eq!(w.stats(0).failed, 0);
    let b = lb.b().counters();
    assert_eq!(b.recv_wqes_consumed, 60);
    assert_eq!(b.naks_tx_by_syndrome.rnr_nak, 0);
    assert_eq!(lb.b().rq_len(), 0, "no receive posted beyond -n");
}

#[test]
fn ib_send_bw_without_a_server_is_an_rnr_storm() {
    // Nobody posts receives: every SEND meets an RNR NAK; with
    // rnr_retry 1 and min_rnr_timer 1 (10 us) the first WR fails with 13
    // after 2 tries and perftest stops.
    let mut w = perftest(perftest_spec(SendBw, 64, 10, 4));
    let cfg = QpConfig {
        rnr_retry: 1,
        min_rnr_timer: 1,
        ..QpConfig::default()
    };
    let mut lb = bench(cfg);
    for _ in 0..10_000 {
        let now = lb.now();
        w.drive_requester(0, lb.a_mut(), now);
        if !lb.step() {
            break;
        }
    }
    let now = lb.now();
    w.drive_requester(0, lb.a_mut(), now);
    let s = w.stats(0);
    assert_eq!(s.first_error, Some(WcStatus::RnrRetryExcErr));
    assert_eq!((s.posted, s.completed, s.failed), (4, 4, 4));
    assert!(w.qp_done(0));
    assert_eq!(lb.b().counters().naks_tx_by_syndrome.rnr_nak, 2);
}

#[test]
fn ib_read_bw_completes_reads() {
    let mut w = perftest(PerftestSpec {
        size: 1 << 20,
        iters: 8,
        ..PerftestSpec::new(ReadBw)
    });
    let mut lb = bench(QpConfig {
        max_rd_atomic: 2,
        ..QpConfig::default()
    });
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    assert_eq!(w.stats(0).bytes_completed, 8 << 20);
    // 256 responses per READ, requests one packet each.
    let a = lb.a().counters();
    assert_eq!(a.tx.read_request.packets, 8);
    assert_eq!(a.rx.read_response.packets, 8 * 256);
    // IB bytes of the responses: FIRST and LAST carry BTH + AETH + ICRC
    // (20 B), the 254 MIDDLEs BTH + ICRC (16 B), plus 8 MiB of payload.
    let r = lb.b().counters().tx.read_response;
    assert_eq!(r.bytes, 8 * (2 * 20 + 254 * 16) + (8 << 20));
}

#[test]
fn duration_mode_posts_until_d_then_drains() {
    let mut w = perftest(PerftestSpec {
        size: 4096,
        duration: Some(Ps::from_us(50)),
        tx_depth: 8,
        ..PerftestSpec::new(WriteBw)
    });
    let mut lb = bench(QpConfig::default());
    lb.record_trace();
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    let s = w.stats(0);
    assert_eq!(s.completed, s.posted);
    // 4178 B per message = 334.24 ns: about 150 messages in 50 us.
    assert!((140..=160).contains(&s.posted), "{}", s.posted);
    // Posting stops at 50 us; the (at most 8) WRs posted before still go:
    // the last leaves before 50 us + 8 x 334.24 ns.
    let last_tx = lb.trace().iter().rfind(|e| e.dir == Dir::AtoB).unwrap().at;
    assert!(last_tx >= Ps::from_us(50) - Ps(334_240));
    assert!(last_tx < Ps::from_us(50) + Ps(8 * 334_240), "{last_tx}");
}

#[test]
fn message_lists_post_at_their_times() {
    let messages = vec![
        MessageSpec {
            at: Ps::from_us(10),
            qp: 0,
            verb: Verb::Write,
            len: 100,
        },
        MessageSpec {
            at: Ps::from_us(3),
            qp: 0,
            verb: Verb::Send,
            len: 5000,
        },
        MessageSpec {
            at: Ps::from_us(20),
            qp: 0,
            verb: Verb::Read,
            len: 9000,
        },
        MessageSpec {
            at: Ps::from_us(5),
            qp: 1,
            verb: Verb::Write,
            len: 1,
        },
    ];
    let spec = WorkloadSpec::Messages {
        qps: 2,
        tx_depth: 4,
        rx_depth: 16,
        tclass: 106,
        flow_label: 0,
        messages,
    };
    let mut w = Workload::new(spec).unwrap();
    assert_eq!((w.qps(), w.tclass()), (2, 106));
    let mut lb = bench(QpConfig::default());
    lb.record_trace();
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    let starts: Vec<(Ps, u8)> = lb
        .trace()
        .iter()
        .filter(|e| e.dir == Dir::AtoB)
        .filter(|e| matches!(e.pkt.bth.opcode.0, 0x00 | 0x0A | 0x0C))
        .map(|e| (e.at, e.pkt.bth.opcode.0))
        .collect();
    // Sorted by time: the SEND at 3 us, the WRITE at 10 us, the READ at 20.
    assert_eq!(
        starts,
        [
            (Ps::from_us(3), 0x00),
            (Ps::from_us(10), 0x0A),
            (Ps::from_us(20), 0x0C)
        ]
    );
    assert_eq!(w.stats(0).bytes_completed, 14_100);
    assert!(!w.qp_done(1));
}

#[test]
fn bad_specs_name_the_field() {
    let bad = |spec| Workload::new(spec).unwrap_err().to_string();
    let p = PerftestSpec::new(PerftestOp::WriteBw);
    assert_eq!(
        bad(WorkloadSpec::Perftest(PerftestSpec { qps: 0, ..p })),
        "qps = 0 is out of range: expected 1..=65536"
    );
    assert!(
        bad(WorkloadSpec::Perftest(PerftestSpec { size: 1 << 32, ..p }))
            .starts_with("size = 4294967296")
    );
    assert!(
        bad(WorkloadSpec::Perftest(PerftestSpec { tx_depth: 0, ..p })).starts_with("tx_depth = 0")
    );
    assert!(bad(WorkloadSpec::Perftest(PerftestSpec { iters: 0, ..p })).starts_with("iters = 0"));
    let e = Workload::new(WorkloadSpec::Messages {
        qps: 2,
        tx_depth: 1,
        rx_depth: 1,
        tclass: 0,
        flow_label: 0,
        messages: vec![MessageSpec {
            at: Ps::ZERO,
            qp: 2,
            verb: Verb::Send,
            len: 1,
        }],
    })
    .unwrap_err();
    assert_eq!(
        e,
        WorkloadError::NoSuchQp {
            index: 0,
            qp: 2,
            qps: 2
        }
    );
    assert_eq!(
        PerftestOp::from_name("ib_read_bw"),
        Some(PerftestOp::ReadBw)
    );
    assert_eq!(PerftestOp::from_name("ib_atomic_bw"), None);
}
