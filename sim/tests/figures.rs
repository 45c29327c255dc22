//! The summary in the shared vocabulary (`Summary::qp_figures`, one
//! `QpFigures` per connection) against what the captures at the
//! requester's ports show, read independently by roce-pcap: the two tools
//! must state the same connection the same way.

mod common;

use common::*;
use roce_capture::figures::QpFigures;
use roce_pcap::analyze::model::QpReport;
use roce_pcap::analyze::{AnalyzeOptions, Report, analyze_files};
use rocesim::run::{self, RunOptions, Summary};

/// Runs lag_hash with whole frames captured at both of hostA's bond
/// slaves (every frame of every connection passes one of them) and
/// analyzes the captures.
fn run_and_read(name: &str, sets: &[&str]) -> (Summary, Report) {
    // Sixteen 512 KiB WRITEs per QP, whole frames at both taps.
    let mut all = vec![
        "workload.0.size=512KiB".to_string(),
        "workload.0.iters=16".into(),
    ];
    all.extend((0..2).map(|t| format!("tap.{t}.snaplen=0")));
    all.extend(sets.iter().map(|s| s.to_string()));
    let opts = RunOptions {
        out: Some(tmp(name)),
        sets: all,
        ..RunOptions::default()
    };
    let done = run::run(&scenario("lag_hash"), &opts, &mut ()).unwrap();
    let (s, dir) = (done.summary(), done.dir);
    let files: Vec<_> = s.taps.iter().map(|t| dir.join(&t.file)).collect();
    let a = analyze_files(&files, &AnalyzeOptions::default()).unwrap();
    (s, a.report)
}

/// The capture's flow of connection `f`, and the port whose capture saw
/// its first frame.
fn flow<'a>(s: &Summary, flows: &'a [QpReport], f: &QpFigures) -> (&'a QpReport, String) {
    let r = flows
        .iter()
        .find(|r| r.dqpn == f.key.responder_qpn && r.src == f.key.src)
        .unwrap_or_else(|| panic!("no flow for {:?}", f.key));
    let port = s.taps[usize::from(r.first_frame.file)].port.clone();
    (r, port)
}

/// What holds whatever the network did: names, numbers, the first packet
/// and where it left, retransmissions and NAKs at the requester.
fn check_requester_side(f: &QpFigures, r: &QpReport, first_port: &str) {
    assert_eq!(f.key.dst, r.dst);
    assert_eq!(f.requester_qpn, r.requester_qpn);
    assert_eq!(f.udp_sport, r.sport);
    assert_eq!(f.first_ns, Some(r.first_ts_ns), "{:?}", f.key);
    assert_eq!(f.port.as_deref(), Some(first_port), "{:?}", f.key);
    assert_eq!(
        f.retransmitted_packets, r.retransmitted_packets,
        "{:?}",
        f.key
    );
    assert_eq!(f.naks, r.naks.values().sum::<u64>(), "{:?}", f.key);
    assert_eq!(
        (f.cnps, f.ecn_ce_packets),
        (r.cnps_to_requester, r.ecn_ce_requests)
    );
}

#[test]
fn figures_of_a_clean_run_are_what_the_captures_show() {
    let (s, report) = run_and_read("figures_clean", &[]);
    let flows = &report.qps;
    let figs = s.qp_figures();
    assert_eq!(figs.len(), 8);
    assert_eq!(flows.len(), 8);
    for f in &figs {
        let (r, first_port) = flow(&s, flows, f);
        check_requester_side(f, r, &first_port);
        // Nothing lost: every frame either end sent passed a tap, and the
        // last one is the ACK that completed the last message.
        assert_eq!(f.last_ns, Some(r.last_ts_ns), "{:?}", f.key);
        assert_eq!(f.packets, r.packets, "{:?}", f.key);
        assert_eq!(f.wire_bytes, r.bytes, "{:?}", f.key);
        assert_eq!(f.payload_bytes, r.payload_bytes, "{:?}", f.key);
        assert_eq!(f.payload_bytes, 8 << 20, "16 x 512 KiB, no resends");
        assert_eq!(f.messages, r.messages);
        assert_eq!(f.messages, 16);
        assert_eq!((f.retransmitted_packets, f.timeouts, f.naks), (0, 0, 0));
        assert!(f.goodput_gbps > 0.0);
    }
}

#[test]
fn figures_of_a_lossy_run_agree_on_the_requester_side() {
    let (s, report) = run_and_read(
        "figures_lossy",
        &[
            "link.2.loss=0.002",
            "link.3.loss=0.002",
            "workload.0.timeout=8",
        ],
    );
    let flows = &report.qps;
    let figs = s.qp_figures();
    let retx: u64 = figs.iter().map(|f| f.retransmitted_packets).sum();
    let naks: u64 = figs.iter().map(|f| f.naks).sum();
    assert!(
        retx > 0 && naks > 0,
        "the loss must cost resends and NAKs for this test to mean anything"
    );
    for f in &figs {
        let (r, first_port) = flow(&s, flows, f);
        check_requester_side(f, r, &first_port);
        // Frames lost behind the switch never reached hostA's taps, but
        // both ends counted them as sent.
        assert!(f.packets >= r.packets, "{:?}", f.key);
        assert!(f.wire_bytes >= r.bytes, "{:?}", f.key);
        // The last completion comes with (or before) the last frame seen.
        assert!(f.last_ns.unwrap() <= r.last_ts_ns, "{:?}", f.key);
    }
}

/// What `compare` will do: both tools' figures, joined on the key, agree
/// field by field once both count time from the first frame.
#[test]
fn the_simulation_and_its_captures_state_each_connection_alike() {
    let (s, report) = run_and_read("figures_joined", &[]);
    let ours = s.qp_figures();
    let theirs = report.qp_figures();
    assert_eq!(ours.len(), theirs.len());
    let origin = ours.iter().filter_map(|f| f.first_ns).min().unwrap();
    for f in &ours {
        let t = theirs
            .iter()
            .find(|t| t.key == f.key)
            .unwrap_or_else(|| panic!("roce-pcap has no {:?}", f.key));
        let since_first = |ns: Option<u64>| ns.map(|n| n - origin);
        assert_eq!(since_first(f.first_ns), t.first_ns, "{:?}", f.key);
        assert_eq!(since_first(f.last_ns), t.last_ns, "{:?}", f.key);
        let counts = |x: &QpFigures| {
            (
                x.requester_qpn,
                x.udp_sport,
                x.payload_bytes,
                x.packets,
                x.wire_bytes,
                x.messages,
                x.retransmitted_packets,
                x.naks,
                x.cnps,
                x.ecn_ce_packets,
            )
        };
        assert_eq!(counts(f), counts(t), "{:?}", f.key);
        // roce-pcap names the capture that carried the requests.
        let file = t.port.as_deref().unwrap();
        let tap = s.taps.iter().find(|tap| file.ends_with(&tap.file)).unwrap();
        assert_eq!(f.port.as_deref(), Some(tap.port.as_str()), "{:?}", f.key);
    }
}
