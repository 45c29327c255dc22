//! The reference's own files (`shared/anchors/hpcc-ns3`) through the
//! format parsers: counts and totals. Needs the shared
//! directory (ROCESIM_CI rule: skipped with a message when absent, a
//! failure when ROCESIM_CI=1).

use std::path::{Path, PathBuf};

use rocesim::hpcc::{self, config::CcMode};
use rocesim::time::{Ps, Rate};

/// The anchors directory: `shared/` beside the checkout or any of its
/// parents (a worktree sits one level deeper than the main checkout).
fn anchors() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(d) = here
        .ancestors()
        .map(|a| a.join("shared/anchors/hpcc-ns3"))
        .find(|d| d.is_dir())
    {
        return Some(d);
    }
    assert!(
        std::env::var("ROCESIM_CI").map_or(true, |v| v != "1"),
        "ROCESIM_CI=1 but shared/anchors/hpcc-ns3 is not beside {}",
        here.display()
    );
    eprintln!(
        "skipping: shared/anchors/hpcc-ns3 not found above {}",
        here.display()
    );
    None
}

#[test]
fn every_file_parses_with_the_expected_counts() {
    let Some(dir) = anchors() else { return };
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        match name.as_str() {
            "fat.txt" => {
                let t = hpcc::topology::read(&p).unwrap();
                assert_eq!(
                    (t.node_count(), t.switches().len(), t.links().len()),
                    (376, 56, 480)
                );
                assert_eq!(t.host_count(), 320);
                assert_eq!(t.trailing(), None);
                let fast = t
                    .links()
                    .iter()
                    .filter(|l| l.rate == Rate::gbps(400))
                    .count();
                assert_eq!(fast, 160);
                assert!(
                    t.links()
                        .iter()
                        .all(|l| l.delay == Ps::from_us(1) && l.error_rate == 0.0)
                );
            }
            "topology.txt" => {
                // CRLF, `0.001ms`, and 196 lines the reference never reads
                // after the 65 links its header declares.
                let t = hpcc::topology::read(&p).unwrap();
                assert_eq!(
                    (t.node_count(), t.switches(), t.links().len()),
                    (66, &[0u32][..], 65)
                );
                assert!(
                    t.links()
                        .iter()
                        .all(|l| l.delay == Ps::from_us(1) && l.rate == Rate::gbps(100))
                );
                let tr = t.trailing().unwrap();
                assert_eq!((tr.first_line, tr.lines), (68, 196));
                assert_eq!(
                    tr.warning("topology.txt", "links"),
                    "topology.txt: 196 lines from line 68 on, after the links the header declares, \
                     ignored (as the reference ignores them)"
                );
            }
            "ws30_10ms.txt" | "flow_2to1.txt" | "flow_16to1.txt" => {
                let f = hpcc::flows::read(&p).unwrap();
                assert_eq!(f.trailing, None);
                let (n, total): (usize, u64) = match name.as_str() {
                    "ws30_10ms.txt" => (6558, 10_948_740_534),
                    "flow_2to1.txt" => (2, 400_000_000),
                    _ => (16, 400_000_000),
                };
                assert_eq!(f.flows.len(), n, "{name}");
                assert_eq!(f.flows.iter().map(|f| f.size).sum::<u64>(), total, "{name}");
                assert!(f.flows.iter().all(|f| f.priority == 3 && f.dport == 100));
                assert!(f.flows[0].start >= Ps::from_ms(2000));
            }
            "e3_dcqcn_2to1_notrace.cfg"
            | "e4_dcqcn_16to1_notrace.cfg"
            | "config_fat_ws30_10ms_dcqcn.txt" => {
                let c = hpcc::config::read(&p).unwrap();
                assert_eq!(c.cc_mode, CcMode::Dcqcn);
                assert_eq!(c.packet_payload_size, 1000);
                assert_eq!(
                    (
                        c.rp_timer,
                        c.alpha_resume_interval,
                        c.rate_decrease_interval
                    ),
                    (Ps::from_us(300), Ps::from_us(1), Ps::from_us(4))
                );
                assert_eq!(c.ewma_gain, 1.0 / 256.0);
                assert_eq!(
                    (c.rate_ai, c.rate_hai),
                    (Some(Rate(20_000_000)), Some(Rate(200_000_000)))
                );
                assert_eq!(c.buffer_bytes(), 32 << 20);
                assert_eq!(c.simulator_stop_time, Ps::from_ms(4000));
                assert!(
                    c.ack_high_prio && !c.has_win && c.link_down.is_none() && !c.l2_back_to_zero
                );
                assert_eq!(c.ecn(Rate::gbps(100)), Some((400_000, 1_600_000, 0.2)));
                if name.starts_with("config_fat") {
                    assert_eq!(c.topology_file.as_deref(), Some("mix/fat.txt"));
                    assert_eq!(c.min_rate, Rate::gbps(1));
                    assert_eq!(c.ecn(Rate::gbps(400)), Some((1_600_000, 6_400_000, 0.2)));
                    assert_eq!(c.kmax_map.entries.len(), 2);
                } else {
                    assert_eq!(c.min_rate, Rate(100_000_000));
                    assert_eq!(c.ecn(Rate::gbps(25)), Some((100_000, 400_000, 0.2)));
                }
            }
            "WebSearch_distribution.txt" | "FbHdp_distribution.txt" => {
                let c = hpcc::cdf::read(&p).unwrap();
                // getAvg by hand (python3 over the file): 1711250 and 120420.75.
                let (points, mean) = if name.starts_with("Web") {
                    (12, 1_711_250.0)
                } else {
                    (20, 120_420.75)
                };
                assert_eq!((c.points().len(), c.mean()), (points, mean), "{name}");
            }
            n if n.contains("fct") => {
                let f = hpcc::fct::read(&p).unwrap();
                let want = if n.starts_with("e3") {
                    2
                } else if n.starts_with("e4") {
                    16
                } else {
                    6558
                };
                assert_eq!(f.len(), want, "{n}");
            }
            "README.md" => continue,
            other => panic!("{other}: a new anchor file; teach this test its format"),
        }
        seen += 1;
    }
    assert_eq!(seen, 13);
}
