//! State per packet is not kept: ten times the packets on the same QPs
//! leave the flow table the same size. (The peak-RSS measurement on a 2 GB
//! capture is a bench: `ROCE_BENCH_MEMORY_GB=2 cargo bench -p roce-pcap
//! --bench analyze_speed`, recorded in BENCHMARKS.md.)

use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
use roce_testkit::cli::TempDir;
use roce_testkit::synth::{BenchCapture, bench_capture};

fn state_after(frames: u64, dir: &std::path::Path) -> (usize, u64, u64) {
    let path = dir.join(format!("m{frames}.pcap"));
    let p = BenchCapture {
        // 1 KiB messages at a 256-byte MTU: 4 packets, ACK, a go-back-N
        // episode each and a CNP every third, so every kind of per-flow
        // state is used and the episode lists overflow in both runs.
        frames,
        qps: 8,
        pmtu: 256,
        nak_every: 1,
        cnp_every: 3,
        message_bytes: 1024,
    };
    bench_capture(&path, p).unwrap();
    let a = analyze_files(&[&path], &AnalyzeOptions::default()).unwrap();
    let packets = a.report.qps.iter().map(|q| q.packets).sum();
    let episodes = a.report.qps.iter().map(|q| q.go_back_n.episodes).sum();
    (a.flow_state_bytes, packets, episodes)
}

#[test]
fn flow_state_does_not_grow_with_packets() {
    let dir = TempDir::new("memory");
    let (small, p1, e1) = state_after(20_000, &dir);
    let (large, p2, e2) = state_after(200_000, &dir);
    assert!(p2 > 9 * p1, "{p1} vs {p2} packets");
    // Both runs keep more episodes than the per-flow list holds.
    assert!(e1 > 8 * 256 && e2 > 9 * e1, "{e1} vs {e2} episodes");
    assert!(
        large <= small + small / 20,
        "flow state grew from {small} to {large} bytes for 10x the packets"
    );
    assert!(large < 2 << 20, "{large} bytes of state for 8 flows");
}
