//! The analyzer reads the simulator's captures and finds the simulator's
//! own counters, exactly: per port (frames and bytes), per QP (request
//! packets, payload, retransmissions, ACKs, NAKs, messages).

mod common;

use common::*;
use roce_pcap::analyze::{Analysis, AnalyzeOptions, analyze_files};
use serde_json::Value;

fn analyze(files: &[std::path::PathBuf]) -> Analysis {
    analyze_files(files, &AnalyzeOptions::default()).unwrap()
}

fn check(name: &str, sets: &[&str]) -> Value {
    let out = tmp(name);
    let mut all = vec![
        "workload.0.size=1MiB",
        "workload.0.iters=8",
        "tap.0.snaplen=0",
        "tap.1.snaplen=0",
    ];
    all.extend_from_slice(sets);
    let s = run_ok(&scenario("lag_hash"), &out, &all);
    let a = analyze(&tap_files(&s, &out));
    let r = &a.report;
    // Per capture: every frame the port sent or received.
    for (t, f) in s["taps"].as_array().unwrap().iter().zip(&r.files) {
        let p = port(&s, t["port"].as_str().unwrap());
        assert!(f.file.ends_with(t["file"].as_str().unwrap()));
        assert_eq!(
            f.packets,
            p["tx_packets"].as_u64().unwrap() + p["rx_packets"].as_u64().unwrap(),
            "{}",
            f.file
        );
        assert_eq!(
            f.bytes,
            p["tx_bytes"].as_u64().unwrap() + p["rx_bytes"].as_u64().unwrap(),
            "{}",
            f.file
        );
        assert_eq!(f.icrc_errors, 0);
        assert_eq!(f.truncated_frames, 0);
    }
    // Per QP: the analyzer keys flows by the responder's QPN.
    let qps = s["qps"].as_array().unwrap();
    for c in clients(&s) {
        let server = qps
            .iter()
            .find(|q| q["role"] == "server" && q["qpn"] == c["dest_qpn"])
            .unwrap();
        let f = r
            .qps
            .iter()
            .find(|f| u64::from(f.dqpn) == c["dest_qpn"].as_u64().unwrap())
            .unwrap_or_else(|| panic!("no flow for {}", c["dest_qpn"]));
        assert_eq!(f.requester_qpn.map(u64::from), c["qpn"].as_u64());
        assert_eq!(u64::from(f.sport), c["udp_sport"].as_u64().unwrap());
        assert_eq!(f.src, c["src"].as_str().unwrap());
        let naks: u64 = f.naks.values().sum();
        // Responses can be lost between the responder and the tap; what the
        // tap saw is what reached the requester QP. Payload of first
        // transmissions plus retransmitted payload is what the QP put on
        // the wire.
        for (ours, key) in [
            (f.request_packets, "tx_packets"),
            (f.response_packets, "rx_packets"),
            (f.retransmitted_packets, "retransmitted_packets"),
            (naks, "naks_rx"),
            (f.acks + naks, "rx_packets"),
            (f.messages, "msgs_completed"),
            (f.message_bytes, "bytes_completed"),
            (f.payload_bytes, "tx_payload_bytes"),
        ] {
            assert_eq!(ours, c[key].as_u64().unwrap(), "qp {}: {key}", c["qpn"]);
        }
        assert!(f.response_packets <= server["tx_packets"].as_u64().unwrap());
        assert!(naks <= server["naks_tx"].as_u64().unwrap());
    }
    assert_eq!(r.qps.len(), clients(&s).len());
    s
}

#[test]
fn analyzer_reproduces_counters_of_a_clean_run() {
    let s = check("analyze_clean", &[]);
    assert!(clients(&s).iter().all(|q| q["retransmitted_packets"] == 0));
}

#[test]
fn analyzer_reproduces_counters_of_a_lossy_run() {
    let s = check(
        "analyze_lossy",
        &[
            "link.2.loss=0.002",
            "link.3.loss=0.002",
            "workload.0.timeout=8",
        ],
    );
    let retx: u64 = clients(&s)
        .iter()
        .map(|q| q["retransmitted_packets"].as_u64().unwrap())
        .sum();
    assert!(
        retx > 0,
        "the lossy run must retransmit for this test to mean anything"
    );
}

#[test]
fn responder_sees_every_psn_in_order_on_a_lossless_run() {
    // Taps on hostB's slaves: what the responder receives, merged.
    let (out, s) = run_scenario(
        "lag_hash",
        "analyze_responder",
        &[
            "workload.0.size=1MiB",
            "workload.0.iters=8",
            "tap.0.at=hostB.eth0",
            "tap.1.at=hostB.eth1",
            "tap.0.snaplen=0",
            "tap.1.snaplen=0",
        ],
    );
    let a = analyze(&tap_files(&s, &out));
    assert_eq!(a.report.qps.len(), 8);
    for f in &a.report.qps {
        assert_eq!(f.out_of_sequence, 0, "qp {:#x}", f.dqpn);
        assert_eq!(f.missing_psns, 0, "qp {:#x}", f.dqpn);
        assert_eq!(f.retransmitted_packets, 0, "qp {:#x}", f.dqpn);
        // 8 MiB in 4096-byte packets, one PSN each.
        assert_eq!(f.psn.span, 8 * 256, "qp {:#x}", f.dqpn);
        assert_eq!(f.request_packets, 8 * 256);
    }
}

/// The analyzer reads the QP's `timeout` attribute back from the capture
/// of a dead path: the retry-exhausted finding names the value the
/// scenario set, for two settings.
#[test]
fn retry_exhausted_finding_names_the_scenarios_timeout() {
    for timeout in [10u32, 12] {
        let out = tmp(&format!("retry_timeout_{timeout}"));
        let t = format!("workload.0.timeout={timeout}");
        let s = run_ok(
            &scenario("retry_exceeded"),
            &out,
            &[t.as_str(), "workload.0.iters=4"],
        );
        let client = clients(&s)[0].clone();
        assert_eq!(client["status"], "retry_exceeded");
        let a = analyze(&[tap_file(&s, &out, "hostA.eth0")]);
        let f = a
            .report
            .findings
            .iter()
            .find(|f| f.rule == "retry-exhausted")
            .expect("retry-exhausted finding");
        let want = format!("timeout = {timeout}, 4.096 µs × 2^{timeout}");
        assert!(f.message.contains(&want), "{}", f.message);
    }
}

/// tcpdump on both slaves of the failover bond: the analyzer counts each
/// QP's timeouts and retransmissions as the simulator does, and sees the
/// QPs move from slave 0 to slave 1.
#[test]
fn analyzer_reads_the_failover_from_both_slaves() {
    let (out, s) = run_scenario("failover", "failover_taps", &[]);
    let a = analyze(&["hostA.eth0", "hostA.eth1"].map(|p| tap_file(&s, &out, p)));
    let r = &a.report;
    for c in clients(&s) {
        let f = r
            .qps
            .iter()
            .find(|f| u64::from(f.dqpn) == c["dest_qpn"].as_u64().unwrap())
            .unwrap();
        assert_eq!(
            f.retransmitted_packets,
            c["retransmitted_packets"].as_u64().unwrap()
        );
        assert_eq!(
            f.go_back_n.by_cause.get("timeout").copied().unwrap_or(0),
            c["timeouts"].as_u64().unwrap(),
            "{:?}",
            f.go_back_n
        );
        assert!(
            r.findings
                .iter()
                .any(|x| x.rule == "qp-moved" && x.qp == Some(f.id)),
            "no qp-moved finding for flow {}",
            f.id
        );
    }
}

/// `--tap PORT[:SNAPLEN]` captures at a port the scenario does not tap:
/// here the switch port towards hostB.eth0, whose frames are exactly what
/// that port sent and received; errors name the flag and leave no run
/// directory.
#[test]
fn tap_flag_adds_a_capture_point() {
    let out = tmp("tap_flag");
    let o = bin()
        .arg("run")
        .arg(scenario("lag_hash"))
        .args([
            "--set",
            "workload.0.size=1MiB",
            "--set",
            "workload.0.iters=2",
        ])
        .args(["--tap", "sw1.p3:96", "--format", "json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = analyze(&[tap_file(&s, &out, "sw1.p3")]);
    let p = port(&s, "sw1.p3");
    assert_eq!(
        a.report.files[0].packets,
        p["tx_packets"].as_u64().unwrap() + p["rx_packets"].as_u64().unwrap()
    );
    assert!(
        a.report.files[0].truncated_frames > 0,
        "snaplen 96 cuts data frames"
    );
    for (flag, want) in [
        ("sw1.p9", "--tap sw1.p9: no port `sw1.p9` to tap"),
        (
            "hostA.eth0",
            "--tap hostA.eth0: port `hostA.eth0` already has a tap",
        ),
        (
            "sw1.p3:big",
            "--tap sw1.p3:big: snaplen `big` is not a number",
        ),
    ] {
        let bad = tmp("tap_flag_bad").join("run");
        let o = bin()
            .arg("run")
            .arg(scenario("lag_hash"))
            .args(["--tap", flag, "--out"])
            .arg(&bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(!bad.exists());
    }
}
