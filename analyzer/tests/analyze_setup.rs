//! Connection set-up in `roce-pcap analyze`, on synthetic captures with
//! hand-computed expectations: an RDMA CM exchange (REQ, MRA, REP, RTU)
//! joined to the flow it connected, a REQ resent and never answered, a
//! REJ, and perftest's TCP key exchange on port 18515.

use roce_codec::perftest::KeyMessage;
use roce_codec::wire::cm::RejReason;
use roce_pcap::analyze::model::Severity;
use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
use roce_testkit::setup::{CmSetup, PerftestTcp};
use roce_testkit::synth::{Endpoint, RcConn, temp_captures};

const MS: u64 = 1_000_000;

fn keys(qpn: u32, psn: u32) -> KeyMessage {
    KeyMessage {
        qpn,
        psn,
        gid: Some([0; 16]),
        ..KeyMessage::default()
    }
}

#[test]
fn cm_exchange_is_joined_to_the_flow_it_set_up() {
    let (_d, [p], mut s) = temp_captures("setup-cm", ["cm.pcap"]);
    let a = Endpoint::host(1, 0x112);
    let b = Endpoint::host(2, 0x113);
    let mut cm = CmSetup::new(a, b, 0x4c11a5, 0x7a0001);
    cm.req(&mut s, MS).unwrap();
    cm.mra(&mut s, MS + 20_000, 22).unwrap();
    cm.rep(&mut s, MS + 50_000).unwrap();
    cm.rtu(&mut s, MS + 100_000).unwrap();
    let mut c = RcConn::new(a, b, 0xc000, 0x4c11a5);
    let sent = c.message(&mut s, 2 * MS, 8192, true, 1_000, &[]).unwrap();
    c.ack(&mut s, sent.end_ns + 5_000, sent.last).unwrap();
    let truth = s.finish().unwrap();
    let r = analyze_files(&[&p], &AnalyzeOptions::default())
        .unwrap()
        .report;
    // The four MADs are RoCE frames of the file, but no request flow.
    assert_eq!(r.files[0].roce_packets, truth[0].roce_packets);
    assert_eq!(r.qps.len(), 1);
    assert_eq!(r.setups.len(), 1);
    let st = &r.setups[0];
    assert_eq!(st.method, "rdma_cm");
    assert_eq!(
        (st.active.as_str(), st.passive.as_str()),
        ("10.0.0.1", "10.0.0.2")
    );
    assert_eq!(st.port, Some(18515));
    assert_eq!(st.outcome, "established");
    assert_eq!(st.established_ns, Some(100_000));
    assert_eq!(
        (st.active_qpn, st.active_psn),
        (Some(0x112), Some(0x4c11a5))
    );
    assert_eq!(
        (st.passive_qpn, st.passive_psn),
        (Some(0x113), Some(0x7a0001))
    );
    assert_eq!((st.requests, st.retries, st.mras), (1, 0, 1));
    assert_eq!(st.first_frame.frame, 1);
    assert_eq!(st.qps, vec![0]);
    let q = r.qps[0].setup.unwrap();
    assert_eq!(
        (q.setup, q.method, q.established_ns),
        (0, "rdma_cm", Some(100_000))
    );
    // The flow starts at the PSN the REQ announced.
    assert_eq!(r.qps[0].psn.first, Some(0x4c11a5));
    assert!(r.findings.iter().all(|f| !f.rule.starts_with("cm_")));
}

#[test]
fn a_req_never_answered_is_an_error_with_its_retries() {
    let (_d, [p], mut s) = temp_captures("setup-unanswered", ["req.pcap"]);
    let mut cm = CmSetup::new(Endpoint::host(1, 0x112), Endpoint::host(2, 0x113), 1, 2);
    // Linux resends after 2 × 2^(18-8) ms + 2^(20-8) ms = 6144 ms.
    for i in 0..3 {
        cm.req(&mut s, i * 6144 * MS).unwrap();
    }
    s.finish().unwrap();
    let r = analyze_files(&[&p], &AnalyzeOptions::default())
        .unwrap()
        .report;
    let st = &r.setups[0];
    assert_eq!(st.outcome, "unanswered");
    assert_eq!((st.requests, st.retries), (3, 2));
    assert_eq!(st.retry_interval_ns, Some(6144 * MS));
    assert_eq!(st.cm_response_timeout_ns, Some(4_294_967_296));
    assert_eq!(st.max_cm_retries, Some(15));
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "cm_req_unanswered")
        .unwrap();
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.frames[0].frame, 1);
    assert_eq!(
        f.message,
        "10.0.0.1 -> 10.0.0.2: CM REQ for QP 0x112 never answered (no REP, REJ or MRA): \
         sent 3 times (2 retries), the first two 6.14 s apart; the REQ's remote CM response \
         timeout is 4.29 s (4.096 µs × 2^n) and it allows 15 retries"
    );
}

#[test]
fn a_rej_is_an_error_with_its_reason() {
    let (_d, [p], mut s) = temp_captures("setup-rej", ["rej.pcap"]);
    let mut cm = CmSetup::new(Endpoint::host(1, 0x112), Endpoint::host(3, 0x114), 1, 2);
    cm.req(&mut s, MS).unwrap();
    cm.rej(&mut s, MS + 30_000, RejReason::InvalidServiceId)
        .unwrap();
    s.finish().unwrap();
    let r = analyze_files(&[&p], &AnalyzeOptions::default())
        .unwrap()
        .report;
    let st = &r.setups[0];
    assert_eq!(st.outcome, "rejected");
    assert_eq!(
        (st.reject_reason, st.reject_reason_name),
        (Some(8), Some("invalid service ID"))
    );
    let f = r.findings.iter().find(|f| f.rule == "cm_rejected").unwrap();
    assert_eq!(f.frames[0].frame, 2);
    assert_eq!(
        f.message,
        "10.0.0.1 -> 10.0.0.3: CM REQ for QP 0x112 rejected: reason 8 (invalid service ID)"
    );
}

#[test]
fn perftest_socket_exchange_sets_up_both_directions() {
    let (_d, [p], mut s) = temp_captures("setup-socket", ["socket.pcap"]);
    let a = Endpoint::host(1, 0x112);
    let b = Endpoint::host(2, 0x113);
    let mut t = PerftestTcp::new(a, b, 40000);
    t.connect(&mut s, MS, 50_000).unwrap();
    t.keys(&mut s, MS + 200_000, true, &keys(0x112, 0x111))
        .unwrap();
    t.keys(&mut s, MS + 260_000, false, &keys(0x113, 0x222))
        .unwrap();
    let mut ab = RcConn::new(a, b, 0xc000, 0x111);
    let sent = ab.message(&mut s, 2 * MS, 4096, true, 1_000, &[]).unwrap();
    ab.ack(&mut s, sent.end_ns + 5_000, sent.last).unwrap();
    let mut ba = RcConn::new(b, a, 0xc001, 0x222);
    let sent = ba.message(&mut s, 3 * MS, 4096, false, 1_000, &[]).unwrap();
    ba.ack(&mut s, sent.end_ns + 5_000, sent.last).unwrap();
    // The closing sync: the keys once more.
    t.keys(&mut s, 4 * MS, true, &keys(0x112, 0x111)).unwrap();
    t.keys(&mut s, 4 * MS + 60_000, false, &keys(0x113, 0x222))
        .unwrap();
    s.finish().unwrap();
    let r = analyze_files(&[&p], &AnalyzeOptions::default())
        .unwrap()
        .report;
    assert_eq!(r.setups.len(), 1);
    let st = &r.setups[0];
    assert_eq!(st.method, "socket");
    assert_eq!(st.port, Some(18515));
    assert_eq!(st.outcome, "established");
    assert_eq!(st.established_ns, Some(260_000));
    assert_eq!((st.active_qpn, st.active_psn), (Some(0x112), Some(0x111)));
    assert_eq!((st.passive_qpn, st.passive_psn), (Some(0x113), Some(0x222)));
    assert_eq!((st.requests, st.key_messages), (1, 4));
    assert_eq!(r.qps.len(), 2);
    let mut ids = st.qps.clone();
    ids.sort();
    assert_eq!(ids, vec![0, 1]);
    for q in &r.qps {
        assert_eq!(q.setup.unwrap().method, "socket");
    }
}

#[test]
fn setups_show_in_every_format() {
    let (_d, [p], mut s) = temp_captures("setup-formats", ["f.pcap"]);
    let mut cm = CmSetup::new(Endpoint::host(1, 0x112), Endpoint::host(2, 0x113), 5, 6);
    cm.req(&mut s, MS).unwrap();
    cm.rep(&mut s, MS + 40_000).unwrap();
    cm.rtu(&mut s, MS + 70_000).unwrap();
    let mut c = RcConn::new(
        Endpoint::host(1, 0x112),
        Endpoint::host(2, 0x113),
        0xc000,
        5,
    );
    let sent = c.message(&mut s, 2 * MS, 100, false, 1_000, &[]).unwrap();
    c.ack(&mut s, sent.end_ns + 5_000, sent.last).unwrap();
    s.finish().unwrap();
    let run = |fmt: &str| {
        let out = roce_testkit::cli::succeed(
            std::process::Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
                .arg("analyze")
                .arg(&p)
                .args(["--format", fmt]),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let table = run("table");
    assert!(
        table.contains(
            "CONNECTION SET-UP\n  rdma_cm 10.0.0.1 QP 0x112 PSN 0x5 -> 10.0.0.2 QP 0x113 PSN 0x6: established in 70.00 µs, flows [0]; first frame"
        ),
        "{table}"
    );
    assert!(
        table.contains("set up by rdma_cm (set-up 0), established in 70.00 µs"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["setups"][0]["outcome"], "established");
    assert_eq!(json["qps"][0]["setup"]["method"], "rdma_cm");
    let csv = run("csv");
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",setup_method,setup_established_ns")
    );
    assert!(lines.next().unwrap().ends_with(",rdma_cm,70000"));
}
