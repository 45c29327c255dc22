//! The shipped scenarios, run end to end through the binary, against
//! independent truth: the codec's bond hash, hand-computed timer values,
//! byte conservation and tshark.

mod common;

use common::*;
use core::net::Ipv4Addr;
use roce_codec::hash::{FlowKeys, XmitHashPolicy, bond_slave_index, bond_xmit_hash};
use roce_testkit::tshark::{fields, tshark};
use serde_json::Value;

const SHIPPED: &[&str] = &[
    "lag_hash",
    "retry_exceeded",
    "failover",
    "hpcc_2to1",
    "hpcc_16to1",
    "fat_tree_websearch_generated",
    "leaf_spine_capacity",
    "ets_shares",
    "cc_compare",
    "rail_fabric",
    "nccl_allreduce",
    "nccl_allreduce_small",
    "nccl_alltoall",
    "nccl_retry_exceeded",
    "nccl_ecmp",
];

fn mac(s: &str) -> [u8; 6] {
    let v: Vec<u8> = s
        .split(':')
        .map(|x| u8::from_str_radix(x, 16).unwrap())
        .collect();
    v.try_into().unwrap()
}

#[test]
fn every_shipped_scenario_checks() {
    let anchors = roce_testkit::ci::shared("anchors/hpcc-ns3");
    for name in SHIPPED {
        // The hpcc scenarios read the reference's files in ../shared.
        if name.starts_with("hpcc_") && anchors.is_none() {
            continue;
        }
        let o = bin().arg("check").arg(scenario(name)).output().unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains(": ok:"));
    }
}

// Smaller than the shipped default so the debug-build test stays quick.
const LAG_SMALL: [&str; 2] = ["workload.0.size=1MiB", "workload.0.iters=8"];

#[test]
fn lag_hash_slaves_follow_the_linux_layer34_hash() {
    let (_, s) = run_scenario("lag_hash", "lag_l34", &LAG_SMALL);
    // hostA's bond MAC is its first slave's (auto-assigned 02:00:00:00:01:01),
    // hostB's 02:00:00:00:01:02; the codec's bond_xmit_hash is the truth.
    let (smac, dmac) = (mac("02:00:00:00:01:01"), mac("02:00:00:00:01:02"));
    let qps = clients(&s);
    assert_eq!(qps.len(), 8);
    let mut per_slave = [0u64; 2];
    for q in &qps {
        let sport = q["udp_sport"].as_u64().unwrap() as u16;
        let keys = FlowKeys::rocev2_v4(
            smac,
            dmac,
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 0, 2),
            sport,
        );
        let want = bond_slave_index(bond_xmit_hash(XmitHashPolicy::Layer34, &keys), 2).unwrap();
        assert_eq!(
            q["slave"].as_u64().unwrap() as usize,
            want,
            "qp {}",
            q["qpn"]
        );
        assert_eq!(q["port"], format!("hostA.eth{want}"));
        assert_eq!(q["status"], "success");
        per_slave[want] += q["tx_bytes"].as_u64().unwrap();
        // The UDP source port is Linux's, from the two QPNs.
        let l = q["qpn"].as_u64().unwrap() as u32;
        let r = q["dest_qpn"].as_u64().unwrap() as u32;
        assert_eq!(sport, roce_codec::hash::roce_udp_sport(0, l, r));
    }
    // Port counters agree with the per-QP split (hostA only sends data).
    for (i, bytes) in per_slave.iter().enumerate() {
        assert_eq!(
            port(&s, &format!("hostA.eth{i}"))["tx_bytes"]
                .as_u64()
                .unwrap(),
            *bytes
        );
    }
    assert!(
        per_slave.iter().all(|&b| b > 0),
        "layer3+4 should use both slaves: {per_slave:?}"
    );
    // Responder QPs state the slave their ACKs leave hostB's bond on: the
    // same formula over the ACKs' headers (hostB's MACs and addresses
    // first, the connection's UDP source port).
    let servers: Vec<&Value> = s["qps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["role"] == "server")
        .collect();
    assert_eq!(servers.len(), 8);
    for q in servers {
        let keys = FlowKeys::rocev2_v4(
            dmac,
            smac,
            Ipv4Addr::new(10, 0, 0, 2),
            Ipv4Addr::new(10, 0, 0, 1),
            q["udp_sport"].as_u64().unwrap() as u16,
        );
        let want = bond_slave_index(bond_xmit_hash(XmitHashPolicy::Layer34, &keys), 2).unwrap();
        assert_eq!(
            q["slave"].as_u64().unwrap() as usize,
            want,
            "qp {}",
            q["qpn"]
        );
        assert_eq!(q["port"], format!("hostB.eth{want}"));
    }
}

/// `lag_hash`, small, with `extra` sets, run into a fresh directory `name`.
fn lag_small(name: &str, extra: &[&str]) -> (std::path::PathBuf, Value) {
    let sets: Vec<&str> = LAG_SMALL.iter().chain(extra).copied().collect();
    run_scenario("lag_hash", name, &sets)
}

/// `lag_hash`, small, with one more `set`: the summary and the bond slave
/// of every client QP.
fn lag_slaves(name: &str, set: &str) -> (Value, Vec<u64>) {
    let (_, s) = lag_small(name, &[set]);
    let slaves = clients(&s)
        .iter()
        .map(|q| q["slave"].as_u64().unwrap())
        .collect();
    (s, slaves)
}

#[test]
fn lag_hash_layer23_puts_every_qp_on_one_slave() {
    let (s, slaves) = lag_slaves("lag_l23", "host.hostA.bond.bond0.xmit_hash_policy=layer2+3");
    assert!(slaves.iter().all(|&x| x == slaves[0]), "{slaves:?}");
    let keys = FlowKeys::rocev2_v4(
        mac("02:00:00:00:01:01"),
        mac("02:00:00:00:01:02"),
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 0, 2),
        0xC000,
    );
    let want = bond_slave_index(bond_xmit_hash(XmitHashPolicy::Layer23, &keys), 2).unwrap() as u64;
    assert_eq!(slaves[0], want);
    assert_eq!(port(&s, &format!("hostA.eth{}", 1 - want))["tx_bytes"], 0);
    // One 100G slave carries everything: the aggregate cannot pass 100G.
    assert!(s["aggregate_goodput_gbps"].as_f64().unwrap() < 100.0);
}

#[test]
fn lag_hash_queue_affinity_alternates_ports() {
    let (_, slaves) = lag_slaves("lag_qa", "host.hostA.bond.bond0.lag=queue-affinity");
    // ucontext ctr starts at 1; each QP takes ++ctr % 2: 0, 1, 0, 1, ...
    assert_eq!(slaves, [0, 1, 0, 1, 0, 1, 0, 1]);
}

/// `client_lag_port` is `mlx5dv_modify_qp_lag_port` on every client QP
/// after the round robin: all eight on port 2 (slave 1). In hash mode, on
/// a NIC, or past the bond's ports, it is refused at its key.
#[test]
fn a_lag_port_pins_every_qp_of_the_workload() {
    let (s, slaves) = {
        let (_, s) = lag_small(
            "lag_port",
            &[
                "host.hostA.bond.bond0.lag=queue-affinity",
                "workload.0.client_lag_port=2",
            ],
        );
        let slaves: Vec<u64> = clients(&s)
            .iter()
            .map(|q| q["slave"].as_u64().unwrap())
            .collect();
        (s, slaves)
    };
    assert_eq!(slaves, [1; 8]);
    assert_eq!(port(&s, "hostA.eth0")["tx_bytes"], 0);
    for (sets, want) in [
        (
            vec!["workload.0.client_lag_port=2"],
            "bond `hostA.bond0` does not let a QP choose its port (mode = \"802.3ad\", lag = \"hash\")",
        ),
        (
            vec![
                "host.hostA.bond.bond0.lag=queue-affinity",
                "workload.0.client_lag_port=3",
            ],
            "client_lag_port = 3, but bond `hostA.bond0` has ports 1..=2",
        ),
        (
            vec![
                "host.hostA.bond.bond0.lag=queue-affinity",
                "workload.0.client_lag_port=0",
            ],
            "client_lag_port = 0, but bond `hostA.bond0` has ports 1..=2",
        ),
    ] {
        let sets: Vec<&str> = LAG_SMALL.iter().copied().chain(sets).collect();
        let o = run(&scenario("lag_hash"), &tmp("lag_port_bad"), &sets);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("workload[0].client_lag_port") && err.contains(want),
            "{err}"
        );
    }
}

/// Each workload is its own perftest process with its own user context:
/// the second one's counter starts at 2 (mlx5_ib_alloc_ucontext), so its
/// first QP takes port 2 even after the first process made an even number
/// of QPs.
#[test]
fn queue_affinity_round_robin_is_per_process() {
    let text = std::fs::read_to_string(scenario("lag_hash")).unwrap();
    let second = "\n[[workload]]\nname = \"second\"\ntool = \"ib_write_bw\"\nclient = \"hostA.bond0\"\nserver = \"hostB.bond0\"\nsize = \"64KiB\"\nqps = 2\niters = 2\n";
    let mut sets = LAG_SMALL.to_vec();
    sets.extend([
        "host.hostA.bond.bond0.lag=queue-affinity",
        "workload.0.qps=2",
    ]);
    let (_, s) = run_text("lag_qa_two", &(text + second), &sets);
    let slaves: Vec<(String, u64)> = clients(&s)
        .iter()
        .map(|q| {
            (
                q["workload"].as_str().unwrap().to_string(),
                q["slave"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("write_bw", 0),
        ("write_bw", 1),
        ("second", 1),
        ("second", 0),
    ];
    assert_eq!(slaves, want.map(|(w, s)| (w.to_string(), s)));
}

#[test]
fn lossless_run_conserves_bytes_and_completes_everything() {
    let (_, s) = run_scenario("lag_hash", "conserve", &LAG_SMALL);
    let ports = s["ports"].as_array().unwrap();
    let total_drops: u64 = ports.iter().map(|p| p["drops"].as_u64().unwrap()).sum();
    assert_eq!(total_drops, 0);
    // Every link delivers exactly what its ends sent.
    for (a, b) in [
        ("hostA.eth0", "sw1.p1"),
        ("hostA.eth1", "sw1.p2"),
        ("hostB.eth0", "sw1.p3"),
        ("hostB.eth1", "sw1.p4"),
    ] {
        assert_eq!(
            port(&s, a)["tx_bytes"],
            port(&s, b)["rx_bytes"],
            "{a} -> {b}"
        );
        assert_eq!(
            port(&s, b)["tx_bytes"],
            port(&s, a)["rx_bytes"],
            "{b} -> {a}"
        );
    }
    // The switch forwards every byte it receives (same frames, no rewrite).
    let sw_rx: u64 = ["sw1.p1", "sw1.p2", "sw1.p3", "sw1.p4"]
        .iter()
        .map(|p| port(&s, p)["rx_bytes"].as_u64().unwrap())
        .sum();
    let sw_tx: u64 = ["sw1.p1", "sw1.p2", "sw1.p3", "sw1.p4"]
        .iter()
        .map(|p| port(&s, p)["tx_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(sw_rx, sw_tx);
    for q in clients(&s) {
        assert_eq!(q["bytes_completed"], 8 * 1024 * 1024, "8 x 1 MiB per QP");
        assert_eq!(q["retransmitted_packets"], 0);
        assert_eq!(q["tx_payload_bytes"], 8 * 1024 * 1024);
    }
}

#[test]
fn retry_exceeded_ends_in_status_12_at_the_hand_computed_time() {
    let (_, s) = run_scenario("retry_exceeded", "retry", &[]);
    let q = clients(&s)[0];
    assert_eq!(q["status"], "retry_exceeded");
    assert_eq!(q["status_code"], 12);
    // ARP first: request and reply each cross two 25G links (84 wire bytes,
    // 26.88 ns, plus 500 ns), and hostB.eth0's kernel takes under 20 us to
    // answer, so the first RoCE packet leaves between 2107.52 ns and
    // 22.1 us. Local ACK timeout 4.096 us * 2^10 = 4 194 304 ns; the first
    // try and retry_cnt = 7 retries each wait one timeout.
    let first = q["first_tx_ns"].as_u64().unwrap();
    assert!((2107..2107 + 20_000).contains(&first), "{first}");
    let done = q["finished_at_ns"].as_u64().unwrap();
    assert!(done.abs_diff(first + 8 * 4_194_304) <= 1, "{done}");
    // The first WR fails with 12, the other 99 are flushed (5).
    assert_eq!(q["msgs_completed"], 0);
    assert_eq!(q["msgs_failed"], 100);
    assert_eq!(q["timeouts"], 8);
    // Every RoCE frame went to hostB.eth0's MAC and was refused there: it
    // does not own the GID 10.0.0.4. Besides them each of hostB's NICs got
    // the ARP request and sent one reply; hostA sent the request.
    let b0 = port(&s, "hostB.eth0");
    assert_eq!(b0["drops_not_ours"], q["tx_packets"]);
    assert_eq!(
        b0["rx_packets"].as_u64().unwrap(),
        q["tx_packets"].as_u64().unwrap() + 1
    );
    assert_eq!(
        port(&s, "hostA.eth0")["tx_packets"].as_u64().unwrap(),
        q["tx_packets"].as_u64().unwrap() + 1
    );
    assert_eq!(port(&s, "hostA.eth0")["rx_packets"], 2, "two ARP replies");
    assert_eq!(port(&s, "hostB.eth1")["rx_packets"], 1);
    assert_eq!(port(&s, "hostB.eth1")["tx_packets"], 1);
}

#[test]
fn retry_exceeded_needs_arp_ignore_and_arp_announce() {
    // arp_ignore = 1 alone: eth0 stays silent, but hostB's SYN-ACK from
    // 10.0.0.4 leaves eth0 (the main table's first route), whose request
    // "who has 10.0.0.1? tell 10.0.0.4" teaches hostA eth0's MAC for it.
    let (out, s) = run_scenario(
        "retry_exceeded",
        "retry_ignore",
        &["host.hostB.arp_ignore=1"],
    );
    assert_eq!(clients(&s)[0]["status"], "retry_exceeded");
    assert_eq!(port(&s, "hostB.eth0")["tx_packets"], 1, "its ARP request");
    if tshark().is_some() {
        let rows = fields(
            &out.join("hostA.eth0.pcap"),
            &["-Y", "arp.opcode == 1 && arp.src.proto_ipv4 == 10.0.0.4"],
            &["arp.src.hw_mac", "arp.dst.proto_ipv4"],
        );
        assert_eq!(rows, [["02:00:00:00:01:02", "10.0.0.1"]]);
    }
    // With arp_announce = 2 eth0 asks with its own address: success.
    let (_, s) = run_scenario(
        "retry_exceeded",
        "retry_fixed",
        &["host.hostB.arp_ignore=1", "host.hostB.arp_announce=2"],
    );
    let q = clients(&s)[0];
    assert_eq!(q["status"], "success");
    assert_eq!(q["bytes_completed"], 100 * 65536);
    // hostB.eth0: the broadcast and the answer to its own request in, that
    // request out, no RoCE frame.
    assert_eq!(port(&s, "hostB.eth0")["rx_packets"], 2);
    assert_eq!(port(&s, "hostB.eth0")["tx_packets"], 1);
}

#[test]
fn arp_frames_show_both_answers_in_the_capture() {
    if tshark().is_none() {
        return;
    }
    let out = tmp("retry_arp_capture");
    run_ok(&scenario("retry_exceeded"), &out, &["tap.1.snaplen=0"]);
    let names = [
        "arp.opcode",
        "arp.src.proto_ipv4",
        "arp.src.hw_mac",
        "arp.dst.proto_ipv4",
    ];
    let rows = fields(&out.join("hostA.eth0.pcap"), &["-Y", "arp"], &names);
    let rows: Vec<String> = rows.iter().map(|r| r.join("\t")).collect();
    assert_eq!(
        rows,
        [
            "1\t10.0.0.1\t02:00:00:00:01:01\t10.0.0.4",
            "2\t10.0.0.4\t02:00:00:00:01:02\t10.0.0.1",
            "2\t10.0.0.4\t02:00:00:00:02:02\t10.0.0.1",
        ],
        "{rows:?}"
    );
}

#[test]
fn failover_moves_traffic_after_miimon() {
    let (out, s) = run_scenario("failover", "failover", &[]);
    let ev = &s["bonds"][0]["events"];
    let said = |i: usize, what: &str| ev[i]["message"].as_str().unwrap().contains(what);
    // Link down at 20 ms, polls every 10 ms from t = 0: noticed at 30 ms.
    assert_eq!(ev[0]["t_ns"], 30_000_000, "{ev}");
    assert!(said(0, "down for slave 0"));
    assert_eq!(ev[1]["t_ns"], 30_000_000);
    assert!(said(1, "making slave 1 the active slave"));
    // The new active slave announces the bond (num_grat_arp = 1).
    assert_eq!(ev[2]["t_ns"], 30_000_000);
    assert!(said(2, "gratuitous ARP 1 of 1 from slave 1"));
    // Up at 45 ms: seen at the 50 ms poll, usable two polls (updelay
    // 20 ms) later.
    assert_eq!(ev[3]["t_ns"], 70_000_000);
    if tshark().is_some() {
        // tshark's own verdict on the frame: a gratuitous ARP for the
        // bond's address, from the bond's MAC, broadcast out of eth1.
        let rows = fields(
            &out.join("hostA.eth1.pcap"),
            &["-Y", "arp.isgratuitous"],
            &["frame.time_relative", "arp.src.proto_ipv4", "eth.dst"],
        );
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0][1], "10.0.0.1");
        assert_eq!(rows[0][2], "ff:ff:ff:ff:ff:ff");
    }
    assert!(port(&s, "hostA.eth0")["drops_link_down"].as_u64().unwrap() > 0);
    assert!(port(&s, "hostA.eth1")["tx_bytes"].as_u64().unwrap() > 0);
    for q in clients(&s) {
        assert_eq!(q["status"], "success");
        assert_eq!(q["slave"], 0, "first data left on the active slave");
        assert!(q["timeouts"].as_u64().unwrap() >= 1);
        assert!(q["retransmitted_packets"].as_u64().unwrap() > 0);
    }
    // Before the failure only eth0 sends; after the poll only eth1 does.
    let csv = std::fs::read_to_string(out.join("ports.csv")).unwrap();
    let tx_at = |port: &str, t_ns: u64| -> u64 {
        csv.lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f[1] == port && f[0].parse::<u64>().unwrap() <= t_ns)
            .last()
            .map(|f| f[2].parse().unwrap())
            .unwrap()
    };
    assert_eq!(tx_at("hostA.eth1", 19_000_000), 0);
    assert!(tx_at("hostA.eth1", 60_000_000) > 0);
    let eth0_late = tx_at("hostA.eth0", 60_000_000) - tx_at("hostA.eth0", 31_000_000);
    assert_eq!(eth0_late, 0, "nothing leaves eth0 once the bond moved away");
}

/// Every file of a run directory (the sysfs tree included) and its bytes,
/// by path relative to `dir`, sorted.
fn read_all(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    files_below(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(&f)).unwrap();
            (f.to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

fn without_wall(json: &[u8]) -> Value {
    let mut v: Value = serde_json::from_slice(json).unwrap();
    v.as_object_mut().unwrap().remove("wall_s");
    v
}

#[test]
fn same_seed_gives_byte_identical_outputs() {
    for (name, sets) in [("lag_hash", LAG_SMALL.to_vec()), ("failover", vec![])] {
        let a = tmp(&format!("det_a_{name}"));
        let b = tmp(&format!("det_b_{name}"));
        run_ok(&scenario(name), &a, &sets);
        run_ok(&scenario(name), &b, &sets);
        let (fa, fb) = (read_all(&a), read_all(&b));
        assert_eq!(
            fa.iter().map(|f| &f.0).collect::<Vec<_>>(),
            fb.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        assert!(
            fa.len() >= 8,
            "{:?}",
            fa.iter().map(|f| &f.0).collect::<Vec<_>>()
        );
        assert!(fa.iter().any(|f| f.0 == "counters.prom"), "{name}");
        assert!(fa.iter().any(|f| f.0.starts_with("sysfs/")), "{name}");
        for ((n, x), (_, y)) in fa.iter().zip(&fb) {
            if n == "summary.json" {
                // wall_s is the one value that measures the machine.
                assert_eq!(without_wall(x), without_wall(y), "{name}/{n}");
            } else {
                assert!(
                    x == y,
                    "{name}/{n} differs between two runs with the same seed"
                );
            }
        }
    }
    // A different seed changes the PSNs, so the captures differ.
    let c = tmp("det_c");
    let mut sets = LAG_SMALL.to_vec();
    sets.push("seed=2");
    run_ok(&scenario("lag_hash"), &c, &sets);
    assert_ne!(
        std::fs::read(c.join("hostA.eth0.pcap")).unwrap(),
        std::fs::read(tmp_path("det_a_lag_hash").join("hostA.eth0.pcap")).unwrap()
    );
}

fn tmp_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

#[test]
fn lossy_link_recovers_with_go_back_n() {
    let out = tmp("lossy");
    let mut sets = LAG_SMALL.to_vec();
    sets.push("link.2.loss=0.001");
    sets.push("workload.0.timeout=8");
    let s = run_ok(&scenario("lag_hash"), &out, &sets);
    let lost = port(&s, "sw1.p3")["drops_loss"].as_u64().unwrap();
    assert!(lost > 0);
    let retx: u64 = clients(&s)
        .iter()
        .map(|q| q["retransmitted_packets"].as_u64().unwrap())
        .sum();
    assert!(
        retx >= lost,
        "every loss costs at least one retransmission: {retx} < {lost}"
    );
    for q in clients(&s) {
        assert_eq!(q["status"], "success");
        assert_eq!(q["bytes_completed"], 8 * 1024 * 1024);
    }
    let naks: u64 = clients(&s)
        .iter()
        .map(|q| q["naks_rx"].as_u64().unwrap())
        .sum();
    assert!(naks > 0, "a gap is answered by a PSN-sequence-error NAK");
}

#[test]
fn tshark_reads_every_tap_without_a_malformed_frame() {
    if tshark().is_none() {
        return;
    }
    for (name, sets) in [
        ("lag_hash", LAG_SMALL.to_vec()),
        ("retry_exceeded", vec![]),
        ("failover", vec!["tap.0.snaplen=0"]),
        ("ecmp", vec![]),
    ] {
        let (out, s) = run_scenario(name, &format!("tshark_{name}"), &sets);
        let names = [
            "frame.number",
            "_ws.malformed",
            "_ws.expert.severity",
            "infiniband.bth.opcode",
            "arp.opcode",
        ];
        for (t, file) in s["taps"]
            .as_array()
            .unwrap()
            .iter()
            .zip(tap_files(&s, &out))
        {
            let rows = fields(&file, &[], &names);
            assert_eq!(
                rows.len() as u64,
                t["frames"].as_u64().unwrap(),
                "{}",
                file.display()
            );
            for f in &rows {
                let l = f.join("\t");
                assert!(f[1].is_empty(), "{}: malformed frame: {l}", file.display());
                // Expert severity 8388608 = error (4194304 = warning is
                // tolerated for nothing either: we emit no oddities).
                assert!(
                    f[2].is_empty() || !f[2].split(',').any(|x| x == "8388608"),
                    "{}: expert error: {l}",
                    file.display()
                );
                assert!(
                    !f[3].is_empty() || !f[4].is_empty(),
                    "{}: decoded as neither InfiniBand nor ARP: {l}",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn queue_affinity_with_a_flow_label_asks_the_bond_hash() {
    let (_, s) = lag_small(
        "lag_qa_fl",
        &[
            "host.hostA.bond.bond0.lag=queue-affinity",
            "workload.0.flow_label=0x12345",
        ],
    );
    // perftest --flow_label gives every QP the same label, hence the same
    // UDP source port, and the core's xmit_slave lookup the same slave.
    let sport = roce_codec::hash::flow_label_to_udp_sport(0x12345);
    let keys = FlowKeys::rocev2_v4(
        mac("02:00:00:00:01:01"),
        mac("02:00:00:00:01:02"),
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 0, 2),
        sport,
    );
    let want = bond_slave_index(bond_xmit_hash(XmitHashPolicy::Layer34, &keys), 2).unwrap() as u64;
    for q in clients(&s) {
        assert_eq!(q["udp_sport"], u64::from(sport));
        assert_eq!(q["slave"], want);
    }
}

#[test]
fn lacp_bond_moves_a_dead_slaves_buckets_and_back() {
    let (_, s) = lag_small(
        "lag_fail",
        &[
            "link.0.event=[{at = \"2ms\", state = \"down\"}, {at = \"5ms\", state = \"up\"}]",
            "host.hostA.bond.bond0.miimon=1ms",
            "workload.0.size=4MiB",
            "workload.0.timeout=10",
        ],
    );
    let ev: Vec<(u64, String)> = s["bonds"][0]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["t_ns"].as_u64().unwrap(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(ev.len(), 4, "{ev:?}");
    assert_eq!(ev[0].0, 3_000_000);
    assert!(ev[1].1.ends_with("buckets now map to slaves [1, 1]"));
    assert_eq!(ev[2].0, 6_000_000);
    assert!(ev[3].1.ends_with("buckets now map to slaves [0, 1]"));
    let moved: Vec<_> = clients(&s)
        .into_iter()
        .filter(|q| q["slave"] == 0)
        .collect();
    assert!(!moved.is_empty());
    for q in clients(&s) {
        assert_eq!(q["status"], "success");
        assert_eq!(q["bytes_completed"], 8 * 4 * 1024 * 1024);
    }
    // QPs hashed to the dead slave lost frames and recovered by timeout.
    for q in moved {
        assert!(q["timeouts"].as_u64().unwrap() >= 1, "{q}");
    }
    assert!(port(&s, "hostA.eth0")["drops_link_down"].as_u64().unwrap() > 0);
}

#[test]
fn per_qp_rate_limit_paces_on_the_wire() {
    let (_, s) = lag_small(
        "rate_limit",
        &["workload.0.rate_limit=10Gbps", "workload.0.qps=4"],
    );
    // A 4096-byte payload rides in 12 (BTH) + 4096 + 4 (ICRC) IB bytes plus
    // 66 wire bytes (Ethernet, IPv4, UDP, FCS, preamble, IFG): the goodput of
    // a QP paced to 10 Gb/s on the wire is 10 x 4096 / 4178 = 9.804 Gb/s
    // (the RETH of each message's first packet is noise at 1 MiB).
    for q in clients(&s) {
        let g = q["goodput_gbps"].as_f64().unwrap();
        assert!((9.78..=9.81).contains(&g), "{g}");
    }
}

/// The training runs of `scripts/build-pgo`, which lay out the benchmark
/// binary: each a shipped scenario that checks with its `--set`s, none of
/// them the ns-3 stars' experiments (BENCHMARKS.md times those against the
/// reference, and a profile fitted to them would flatter them), none
/// reading ../shared (a fresh clone has the repository only).
#[test]
fn pgo_training_runs_check_and_leave_the_stars_out() {
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/build-pgo"),
    )
    .unwrap();
    let (_, body) = script
        .split_once("\ntraining=(\n")
        .expect("a training list");
    let (body, _) = body.split_once("\n)\n").expect("the list's end");
    let runs: Vec<Vec<&str>> = body
        .lines()
        .map(|l| l.trim().trim_matches('"').split_whitespace().collect())
        .collect();
    assert!(runs.len() >= 10, "{runs:?}");
    let names: std::collections::BTreeSet<&str> = runs.iter().map(|r| r[0]).collect();
    for shipped in ["lag_hash", "failover", "dcqcn_convergence", "pfc_incast"] {
        assert!(names.contains(shipped), "{shipped} is not trained on");
    }
    for run in &runs {
        let (name, sets) = (run[0], &run[1..]);
        assert!(
            sets.len() % 2 == 0 && sets.chunks(2).all(|c| c[0] == "--set"),
            "{run:?}"
        );
        if name.starts_with("hpcc_") {
            // A star's file lends its settings only: its topology and
            // flows (the benchmark, in ../shared) are replaced.
            assert_ne!(name, "hpcc_2to1");
            assert!(
                sets.iter()
                    .any(|s| s.starts_with("topology.file=hpcc-small/"))
                    && sets
                        .iter()
                        .any(|s| s.starts_with("traffic.flows.flows=hpcc-small/")),
                "{run:?}"
            );
        }
        let o = bin()
            .arg("check")
            .arg(scenario(name))
            .args(sets)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{run:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
