//! The reference's own files (`shared/anchors/hpcc-ns3`) through the
//! format parsers, the topology import and routing, and the traffic
//! import: counts, totals, and its FCT output's `standalone_fct` and
//! `start_ns` columns reproduced flow by flow. Needs the shared
//! directory (ROCESIM_CI rule: skipped with a message when absent, a
//! failure when ROCESIM_CI=1).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rocesim::hpcc::{self, config::CcMode, fct::HpccFct};
use rocesim::packet::Billing;
use rocesim::scenario::generate::topology::{FatTree, LinkSpec};
use rocesim::time::{Ps, Rate};
use rocesim::topology::{Framing, HostId, NodeId, PerHop, Topology, ecmp_routes};

/// The anchors directory (`roce_testkit::ci::shared`: beside the checkout
/// or above it; skipped or, under ROCESIM_CI=1, failed when absent).
fn anchors() -> Option<PathBuf> {
    roce_testkit::ci::shared("anchors/hpcc-ns3")
}

fn topo(dir: &Path, name: &str) -> Topology {
    rocesim::hpcc::HpccTopology::to_topology(&hpcc::topology::read(&dir.join(name)).unwrap())
        .unwrap()
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
                // The copy shipped with the scenarios is this file.
                let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../scenarios/cdf")
                    .join(name.replace("_distribution", ""));
                assert_eq!(
                    std::fs::read(&shipped).unwrap(),
                    std::fs::read(&p).unwrap(),
                    "{}",
                    shipped.display()
                );
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
            // The reference's other congestion controls on the two stars:
            // each config's CC_MODE, and its FCT file's flows.
            "cc" => {
                let mut files = 0;
                for e in std::fs::read_dir(&p).unwrap() {
                    let f = e.unwrap().path();
                    let n = f.file_name().unwrap().to_string_lossy().to_string();
                    let want_mode = match n.rsplit('_').next().unwrap() {
                        "dctcp.txt" => CcMode::Dctcp,
                        "hp95.txt" => CcMode::Hpcc,
                        "timely.txt" => CcMode::Timely,
                        _ => panic!("cc/{n}: a new anchor file; teach this test its format"),
                    };
                    let flows = if n.contains("_2to1_") { 2 } else { 16 };
                    if n.starts_with("config_") {
                        let cfg = hpcc::config::read(&f).unwrap();
                        assert_eq!(cfg.cc_mode, want_mode, "cc/{n}");
                    } else {
                        assert!(n.starts_with("fct_"), "cc/{n}");
                        assert_eq!(hpcc::fct::read(&f).unwrap().len(), flows, "cc/{n}");
                    }
                    files += 1;
                }
                assert_eq!(files, 12);
                continue;
            }
            other => panic!("{other}: a new anchor file; teach this test its format"),
        }
        seen += 1;
    }
    assert_eq!(seen, 13);
}

#[test]
fn fat_txt_is_a_k8_fat_tree_cut_to_5_pods() {
    let Some(dir) = anchors() else { return };
    let imported = topo(&dir, "fat.txt");
    let spec = |g| LinkSpec::new(Rate::gbps(g), Ps::from_us(1));
    let generated = FatTree {
        k: 8,
        pods: 5,
        hosts_per_edge: 16,
        host_link: spec(100),
        edge_agg: spec(400),
        agg_core: spec(400),
    };
    assert_eq!(generated.oversubscription(), 1.0);
    let generated = generated.build().unwrap();
    // Same nodes in the same order, the same links in the same order.
    let ends = |t: &Topology| -> Vec<_> {
        t.links()
            .iter()
            .map(|l| (l.a, l.b, l.rate, l.delay))
            .collect()
    };
    assert_eq!(ends(&generated), ends(&imported));
    let tiers = |t: &Topology| -> Vec<u8> { t.nodes().iter().map(|n| n.tier).collect() };
    assert_eq!(tiers(&generated), tiers(&imported));
    assert_eq!(imported.node(NodeId(320)).name, "sw320");
    assert_eq!(
        imported.port_name(rocesim::topology::LinkId(320), NodeId(320)),
        "sw320.p17"
    );
}

#[test]
fn base_rtt_and_bottleneck_of_fat_txt_pairs() {
    let Some(dir) = anchors() else { return };
    let t = topo(&dir, "fat.txt");
    let r = ecmp_routes(&t).unwrap();
    let reference = PerHop::Reference { payload: 1000 };
    // Hosts 0..15 hang off switch 320, 0..63 are pod 0 (switches 320..323).
    // 2 x (1 us per link) + 1000 B x 8 at 100G (80 ns) or 400G (20 ns) per link.
    for (dst, hops, rtt_ns) in [
        (1, 2, 2 * 2000 + 2 * 80),
        (16, 4, 4 * 2000 + 2 * 80 + 2 * 20),
        (64, 6, 6 * 2000 + 2 * 80 + 4 * 20),
    ] {
        let (a, b) = (HostId(0), HostId(dst));
        assert_eq!(r.hop_count(&t, a, b), Some(hops));
        assert_eq!(r.base_rtt(&t, a, b, &reference), Some(Ps::from_ns(rtt_ns)));
        assert_eq!(r.base_rtt(&t, b, a, &reference), Some(Ps::from_ns(rtt_ns)));
        assert_eq!(r.bottleneck_rate(&t, a, b), Some(Rate::gbps(100)));
    }
    // rocesim's framing, PMTU 1024 without VLAN: a 1082-byte WRITE MIDDLE
    // frame (14 + 20 + 8 + 12 + 1024 + 4) and a 62-byte ACK, each plus FCS,
    // preamble and gap (24): 1106 B = 88.48 ns and 86 B = 6.88 ns at 100G.
    let framed = PerHop::Framed(Framing {
        pmtu: 1024,
        vlan: false,
        billing: Billing::REAL,
    });
    assert_eq!(
        r.base_rtt(&t, HostId(0), HostId(1), &framed),
        Some(Ps(4_000_000 + 2 * (88_480 + 6_880)))
    );
    // Tables: 20 ToRs x (16 + 4), 20 aggs x (4 + 4), 16 cores x 5 entries.
    assert_eq!(r.next_hop_entries(), 640);
    eprintln!("fat.txt route tables: {} bytes on the heap", r.heap_bytes());
    assert!(r.heap_bytes() < 64 * 1024, "{}", r.heap_bytes());
}

/// Every flow of a reference run, matched with its FCT line: the ideal
/// FCT, the start time and the addresses come out exactly as the
/// reference wrote them.
fn reproduce(dir: &Path, topology: &str, flows: &str, fcts: &str) -> usize {
    let t = topo(dir, topology);
    let r = ecmp_routes(&t).unwrap();
    let parsed = hpcc::flows::read(&dir.join(flows)).unwrap().flows;
    let mut by_key: HashMap<(u32, u32, u64, u64), Vec<HpccFct>> = HashMap::new();
    for f in hpcc::fct::read(&dir.join(fcts)).unwrap() {
        by_key
            .entry((f.src_node(), f.dst_node(), f.size, f.start_ns))
            .or_default()
            .push(f);
    }
    let mut written_start_differs = 0;
    for f in &parsed {
        let (src, dst) = (
            t.host_of(NodeId(f.src)).unwrap(),
            t.host_of(NodeId(f.dst)).unwrap(),
        );
        let key = (f.src, f.dst, f.size, f.reference_start_ns());
        let fct = by_key
            .get_mut(&key)
            .and_then(Vec::pop)
            .unwrap_or_else(|| panic!("{flows}:{}: no FCT line {key:?}", f.line));
        assert_eq!((t.host_ip(src), t.host_ip(dst)), (fct.sip, fct.dip));
        let ideal = r.reference_ideal_fct(&t, src, dst, f.size, 1000).unwrap();
        assert_eq!(ideal, Ps::from_ns(fct.standalone_ns), "{flows}:{}", f.line);
        written_start_differs += usize::from(f.start.as_ns() != fct.start_ns);
    }
    assert!(by_key.values().all(Vec::is_empty));
    written_start_differs
}

#[test]
fn standalone_fct_and_start_columns_reproduced_for_every_flow() {
    let Some(dir) = anchors() else { return };
    let off = reproduce(
        &dir,
        "fat.txt",
        "ws30_10ms.txt",
        "fct_fat_ws30_10ms_dcqcn.txt",
    );
    // The reference reads start times through a double: many land 1 ns early.
    assert!(off > 1000, "{off}");
    assert_eq!(
        reproduce(
            &dir,
            "topology.txt",
            "flow_2to1.txt",
            "e3_dcqcn_2to1_notrace_fct.txt"
        ),
        0
    );
    assert_eq!(
        reproduce(
            &dir,
            "topology.txt",
            "flow_16to1.txt",
            "e4_dcqcn_16to1_notrace_fct.txt"
        ),
        0
    );
}

#[test]
fn reference_flows_map_node_ids_to_host_indices() {
    let Some(dir) = anchors() else { return };
    // topology.txt's node 0 is the switch, so node n is host n - 1.
    let t = topo(&dir, "topology.txt");
    let f = hpcc::flows::read(&dir.join("flow_2to1.txt")).unwrap().flows;
    let s = hpcc::flows::to_specs(&f, &t).unwrap();
    assert_eq!((s[0].src, s[0].dst), (HostId(1), HostId(0)));
    assert_eq!(t.node(t.host_node(s[0].src)).name, "n2");
    assert_eq!(t.host_ip(s[0].src), core::net::Ipv4Addr::new(11, 0, 2, 1));
    let mut bad = f.clone();
    bad[0].src = 0;
    assert_eq!(
        hpcc::flows::to_specs(&bad, &t).unwrap_err().0,
        "flow on line 2: src node 0 is a switch, not a host"
    );
    // Written back, the flows read the same.
    let text = hpcc::flows::write(&hpcc::flows::from_specs(&s, &t));
    let fields = |v: &[hpcc::HpccFlow]| -> Vec<_> {
        v.iter()
            .map(|x| (x.src, x.dst, x.priority, x.dport, x.size, x.start))
            .collect()
    };
    assert_eq!(
        fields(&hpcc::flows::parse(&text, "back").unwrap().flows),
        fields(&f)
    );
}
