//! `roce-pcap analyze` on a flow whose requests carry in-band telemetry
//! (HPCC's INT records from two switches) and whose ACKs echo it, beside a
//! flow without: per hop the queue and the link utilisation, worked out by
//! hand below; nothing about telemetry for the other flow.

use roce_codec::*;
use roce_testkit::synth::{Endpoint, temp_captures};

/// The two switches' records on request k (0..4): a 100G port whose
/// counter has sent 0, 6,400, 9,600 and 19,200 B at switch times 1,000 ns
/// apart, with 0, 16,000, 8,000 and 8,000 B queued; then a 25G port sending
/// 1,280 B per 1,000 ns with 800 B queued.
fn records(k: u64) -> IntRepr {
    const TX: [u64; 4] = [0, 6_400, 9_600, 19_200];
    const Q: [u64; 4] = [0, 16_000, 8_000, 8_000];
    let mut int = IntRepr::source(4791, 5, 1);
    let k_ = k as usize;
    int.push(IntHopRepr::new(100_000_000_000, 1_000 * (k + 1), TX[k_], Q[k_], 1).unwrap());
    int.push(IntHopRepr::new(25_000_000_000, 5_000 + 1_000 * k, 1_280 * k, 800, 1).unwrap());
    int
}

fn write_capture() -> (roce_testkit::cli::TempDir, std::path::PathBuf) {
    let (dir, [p], mut s) = temp_captures("analyze-int", ["int.pcap"]);
    let a = Endpoint::host(1, 0x11);
    let b = Endpoint::host(2, 0x22);
    let c = Endpoint::host(3, 0x33);
    let ip = |from: &Endpoint, to: &Endpoint| IpRepr::V4(Ipv4Repr::udp(from.ip, to.ip, 26, 2));
    let payload = [0x5a; 1000];
    for k in 0..4u64 {
        let t = 10_000 + 1_000 * k;
        let psn = Psn::new(100 + k as u32);
        let data = FrameRepr::rocev2(
            b.mac,
            a.mac,
            ip(&a, &b),
            0xc011,
            IbRepr::new(Opcode(0x0A), b.qpn, psn, 1000),
        )
        .with_int(records(k));
        s.record(0, t, &data, &data.to_vec(&payload)).unwrap();
        let ack = FrameRepr::rocev2(
            a.mac,
            b.mac,
            ip(&b, &a),
            0xc022,
            IbRepr::ack(a.qpn, psn, Syndrome::ACK_NO_CREDITS, k as u32 + 1),
        )
        .with_int(records(k).echo_of(4791));
        s.record(0, t + 500, &ack, &ack.to_vec(&[])).unwrap();
        // The other flow: plain RoCEv2.
        let plain = FrameRepr::rocev2(
            b.mac,
            c.mac,
            ip(&c, &b),
            0xc033,
            IbRepr::new(Opcode(0x0A), b.qpn, psn, 1000),
        );
        s.record(0, t + 600, &plain, &plain.to_vec(&payload))
            .unwrap();
    }
    s.finish().unwrap();
    (dir, p)
}

fn analyze(p: &std::path::Path, format: &str) -> String {
    let out = roce_testkit::cli::succeed(
        std::process::Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
            .arg("analyze")
            .arg(p)
            .args(["--format", format]),
    );
    String::from_utf8(out.stdout).unwrap()
}

// Hop 1: intervals of 6,400, 3,200 and 9,600 B in 1,000 ns at 100 Gb/s:
// 0.512, 0.256, 0.768; mean 19,200 × 8 / 3,000 ns / 100 Gb/s = 0.512.
// Queue max 16,000 B, mean (0 + 16,000 + 8,000 + 8,000) / 4 = 8,000 B.
// Hop 2: 1,280 B per 1,000 ns at 25 Gb/s: 0.4096 each time; queue 800 B.
#[test]
fn analyze_reports_queue_and_utilisation_per_hop() {
    let (_d, p) = write_capture();
    let report: serde_json::Value = serde_json::from_str(&analyze(&p, "json")).unwrap();
    let qps = report["qps"].as_array().unwrap();
    assert_eq!(qps.len(), 2);
    let int_flow = qps.iter().find(|q| q["src"] == "10.0.0.1").unwrap();
    let plain = qps.iter().find(|q| q["src"] == "10.0.0.3").unwrap();
    assert!(plain.get("telemetry").is_none(), "no telemetry, no key");
    let t = &int_flow["telemetry"];
    assert_eq!(
        (t["requests"].as_u64(), t["echoes"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(int_flow["acks"], 4, "the ACKs with echoes pair as ACKs");
    let hops = t["hops"].as_array().unwrap();
    assert_eq!(hops.len(), 2);
    let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-9;
    let h1 = &hops[0];
    assert_eq!(
        (h1["hop"].as_u64(), h1["records"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(h1["rate_gbps"], 100.0);
    assert_eq!(h1["qlen_max_bytes"], 16_000);
    assert!(close(&h1["qlen_mean_bytes"], 8_000.0));
    assert_eq!(h1["intervals"], 3);
    assert!(close(&h1["utilisation_mean"], 0.512), "{h1}");
    assert!(close(&h1["utilisation_max"], 0.768), "{h1}");
    let h2 = &hops[1];
    assert_eq!(h2["rate_gbps"], 25.0);
    assert_eq!(
        (h2["qlen_max_bytes"].as_u64(), h2["intervals"].as_u64()),
        (Some(800), Some(3))
    );
    assert!(close(&h2["qlen_mean_bytes"], 800.0));
    assert!(close(&h2["utilisation_mean"], 0.4096), "{h2}");
    assert!(close(&h2["utilisation_max"], 0.4096), "{h2}");

    let table = analyze(&p, "table");
    assert!(
        table.contains(
            "      INT       4 requests with records, echoed on 4 ACKs\n\
             \x20               hop 1 at 100.000 Gb/s: queue max 16.0 kB mean 8.0 kB, \
             utilisation mean 51.2% max 76.8% (3 intervals)\n\
             \x20               hop 2 at 25.000 Gb/s: queue max 800 B mean 800 B, \
             utilisation mean 41.0% max 41.0% (3 intervals)\n"
        ),
        "{table}"
    );
    assert_eq!(
        table.matches("INT ").count(),
        1,
        "only the flow with telemetry"
    );
}
