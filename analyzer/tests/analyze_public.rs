//! `analyze` on the real captures of ../shared/traces/public, with tshark
//! as the independent count. Under ROCESIM_CI=1 the traces and tshark are
//! required; elsewhere the tests skip, saying why.

use std::collections::BTreeSet;
use std::path::Path;

use roce_pcap::analyze::{Analysis, AnalyzeOptions, analyze_files};
use roce_testkit::ci::public_trace as public;
use roce_testkit::tshark;

/// tshark's field lines for the RoCE frames of `path`, or None (skip) when
/// tshark is missing outside CI.
fn tshark_rows(path: &Path, fields: &[&str]) -> Option<Vec<Vec<String>>> {
    tshark::tshark()?;
    // SOURCES.md: without this, the frames from UDP port 69 decode as TFTP.
    let extra = [
        "--disable-protocol",
        "tftp",
        "-Y",
        "infiniband",
        "-E",
        "occurrence=f",
    ];
    Some(tshark::fields(path, &extra, fields))
}

/// The analysis of a public trace, or None (skip) when it is missing
/// outside CI.
fn analyzed(name: &str) -> Option<Analysis> {
    let p = public(name)?;
    Some(analyze_files(&[&p], &AnalyzeOptions::default()).unwrap())
}

#[test]
fn roce_pcap_counts_agree_with_tshark() {
    let Some(p) = public("roce.pcap") else { return };
    let Some(rows) = tshark_rows(&p, &["infiniband.bth.opcode", "infiniband.bth.destqp"]) else {
        return;
    };
    let a = analyze_files(&[&p], &AnalyzeOptions::default()).unwrap();
    let r = &a.report;
    // tshark: 105 RoCEv2 frames, 2 destination QPs, 37 ACKNOWLEDGE (opcode 17).
    let acks = rows.iter().filter(|f| f[0] == "17").count();
    let qps: BTreeSet<&str> = rows.iter().map(|f| f[1].as_str()).collect();
    assert_eq!((rows.len(), qps.len(), acks), (105, 2, 37));
    assert_eq!(r.files[0].roce_packets, rows.len() as u64);
    assert_eq!(r.files[0].packets, 123);
    assert_eq!(r.qps.len(), qps.len());
    let flow_packets: u64 = r.qps.iter().map(|q| q.packets).sum();
    assert_eq!(flow_packets, 105, "every RoCE frame belongs to a flow");
    assert!(r.response_only.is_empty());
    assert_eq!(r.qps.iter().map(|q| q.acks).sum::<u64>(), acks as u64);
    let by_opcode = |q: &roce_pcap::analyze::report::QpReport, name: &str| {
        q.opcodes.get(name).copied().unwrap_or(0)
    };
    for (name, code) in [
        ("RC_SEND_FIRST", "0"),
        ("RC_SEND_LAST_WITH_IMMEDIATE", "3"),
        ("RC_SEND_ONLY_WITH_IMMEDIATE", "5"),
        ("RC_ACKNOWLEDGE", "17"),
    ] {
        let ours: u64 = r.qps.iter().map(|q| by_opcode(q, name)).sum();
        let theirs = rows.iter().filter(|f| f[0] == code).count() as u64;
        assert_eq!(ours, theirs, "{name}");
    }
    // Every ICRC valid (tshark does not check it; scapy's BTH.compute_icrc
    // finds all 105 valid).
    assert_eq!(r.files[0].icrc_errors, 0);
    assert_eq!(r.files[0].icrc_unchecked, 0);
    assert!(r.qps.iter().all(|q| q.icrc_errors == 0));
    // The two directions use UDP ports 69 and 72: pairing falls back to PSN.
    let q45 = r.qps.iter().find(|q| q.dqpn == 0x45).unwrap();
    let q48 = r.qps.iter().find(|q| q.dqpn == 0x48).unwrap();
    assert_eq!(
        (q45.sport, q45.response_sport, q45.requester_qpn),
        (72, Some(69), Some(0x48))
    );
    assert_eq!(
        (q48.sport, q48.response_sport, q48.requester_qpn),
        (69, Some(72), Some(0x45))
    );
    // 0x45: 33 FIRST + 33 LAST + 1 ONLY requests, PSN 0..66, 36 ACKs; 0x48: 1 SEND_ONLY, 1 ACK.
    assert_eq!((q45.request_packets, q45.response_packets), (67, 36));
    assert_eq!((q45.psn.first, q45.psn.last), (Some(0), Some(66)));
    assert_eq!(
        (q45.messages, q45.retransmitted_packets, q45.out_of_sequence),
        (34, 0, 0)
    );
    assert_eq!(
        (q48.request_packets, q48.response_packets, q48.messages),
        (1, 1, 1)
    );
    // One RTT sample per ACK whose PSN was sent (all were), Karn-safe.
    assert_eq!(q45.ack_rtt_ns.samples, 36);
    // No MAC-control frames: say that NICs consume them.
    assert!(r.pfc.is_empty());
    assert!(r.findings.iter().any(|f| f.rule == "no-mac-control"));
}

#[test]
fn dcbx_lldp_is_not_pfc() {
    let Some(a) = analyzed("dcb_pfc.pcap") else {
        return;
    };
    let f = &a.report.files[0];
    assert_eq!(
        (
            f.packets,
            f.mac_control_frames,
            f.pfc_frames,
            f.roce_packets
        ),
        (5, 0, 0, 0)
    );
    assert!(a.report.pfc.is_empty());
    assert!(a.report.qps.is_empty());
}

#[test]
fn a_lone_read_request_is_a_flow_with_a_pending_read() {
    let Some(a) = analyzed("InfiniBandPacket.pcap") else {
        return;
    };
    let q = &a.report.qps[0];
    assert_eq!((q.dqpn, q.sport, q.packets), (0x11, 57236, 1));
    assert_eq!(q.opcodes.get("RC_RDMA_READ_REQUEST"), Some(&1));
    // 65536 B at an unknown path MTU: no message completes, nothing is lost.
    assert_eq!(
        (q.messages, q.retransmitted_packets, q.icrc_errors),
        (0, 0, 0)
    );
    assert_eq!(q.psn.first, Some(5_557_091));
}

#[test]
fn native_infiniband_erf_is_a_clear_error() {
    let Some(p) = public("infiniband.pcap") else {
        return;
    };
    let e = analyze_files(&[&p], &AnalyzeOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("infiniband.pcap") && e.contains("link type"),
        "{e}"
    );
}
