//! `compare` and `infer` end to end, with rocesim (testkit::rocesim builds
//! the workspace's binary):
//!
//! * the round trip: simulate, infer a scenario from the simulation's
//!   captures, simulate that, compare: per-QP goodput within 5 %, the same
//!   message counts and the same slave for every QP, and the hash policy
//!   the original scenario set (layer3+4, then layer2+3) read back;
//! * the public real capture (`../shared/traces/public/roce.pcap`) gives a
//!   scenario rocesim replays, with what it cannot express said in it;
//! * the JSON keys of `compare` are the documented ones;
//! * bad input: no flow in common, a side without RoCE, a run directory
//!   without captures, mixed link speeds, different link speeds per side.

use std::path::Path;
use std::process::{Command, Output};

use roce_capture::write::CaptureFormat;
use roce_testkit::ci::public_trace;
use roce_testkit::cli::{TempDir, read_json, stderr, stdout, succeed};
use roce_testkit::repo::root;
use roce_testkit::rocesim;
use roce_testkit::synth::{Endpoint, RcConn, Synth};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_roce-pcap");

fn pcap(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn lag_hash(out: &Path, sets: &[&str]) {
    rocesim::run(&root().join("scenarios/lag_hash.toml"), out, sets);
}

fn compare_json(a: &Path, b: &Path) -> Value {
    let o = pcap(&[&"compare", &a, &b, &"--format", &"json"]);
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "compare failed: {}",
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn simulate_infer_simulate_agrees_within_5_percent() {
    for (policy, sets) in [
        ("layer3+4", vec![]),
        (
            "layer2+3",
            vec!["host.hostA.bond.bond0.xmit_hash_policy=layer2+3"],
        ),
    ] {
        let dir = TempDir::new(&format!("roundtrip-{}", &policy[..6]));
        let (lab, model) = (dir.join("lab"), dir.join("model"));
        lag_hash(&lab, &sets);
        let scenario = dir.join("lab.toml");
        succeed(
            Command::new(BIN)
                .arg("infer")
                .arg(&lab)
                .arg("--out")
                .arg(&scenario),
        );
        let toml = std::fs::read_to_string(&scenario).unwrap();
        assert!(
            toml.contains(&format!(
                "xmit_hash_policy = \"{policy}\"      # inferred: {policy} puts 8 of 8 QPs"
            )),
            "{policy}:\n{toml}"
        );
        assert!(toml.contains("tool = \"ib_write_bw\""), "{toml}");
        rocesim::run(&scenario, &model, &[]);
        let c = compare_json(&lab, &model);
        let flows = c["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 8, "{policy}");
        for f in flows {
            assert_eq!(f["match"], "qpn", "{f}");
            let d = &f["diff"];
            let pct = d["goodput_pct"].as_f64().unwrap();
            assert!(pct.abs() < 5.0, "{policy}: goodput differs by {pct}%: {f}");
            assert_eq!(d["messages"], 0, "{f}");
            assert_eq!(d["same_slave"], true, "{f}");
            assert_eq!(f["a"]["messages"], 4);
        }
        for s in c["slaves"].as_array().unwrap() {
            assert!(s["diff_share"].as_f64().unwrap().abs() < 0.05, "{s}");
        }
        assert!(c["notes"].as_array().unwrap().is_empty(), "{}", c["notes"]);
    }
}

#[test]
fn the_public_capture_becomes_a_scenario_rocesim_replays() {
    let Some(real) = public_trace("roce.pcap") else {
        return;
    };
    let dir = TempDir::new("public-infer");
    let scenario = dir.join("hiroce.toml");
    succeed(
        Command::new(BIN)
            .arg("infer")
            .arg(&real)
            .arg("--out")
            .arg(&scenario),
    );
    let toml = std::fs::read_to_string(&scenario).unwrap();
    // SOURCES.md: 192.168.70.4 and .6, QPs 0x45 and 0x48, UDP source ports
    // 69 and 72, SEND First + SEND Last with Immediate, ECT(0), DSCP 0.
    for want in [
        "# 192.168.70.4: the captured host",
        "ip = \"192.168.70.6/24\"",
        "qpn_base = 0x45",
        "qpn_base = 0x48",
        "UDP source port 69 cannot be expressed",
        "UDP source port 72 cannot be expressed",
        "hostB QPN 0x48 becomes 0x49",
        "verb = \"send_imm\"",
        "tc = 2 ",
        "mtu = 1500",
    ] {
        assert!(toml.contains(want), "no {want:?} in\n{toml}");
    }
    let run = dir.join("run");
    rocesim::run(&scenario, &run, &[]);
    let c = compare_json(&real, &run);
    let flows = c["flows"].as_array().unwrap();
    let kinds: Vec<&str> = flows.iter().map(|f| f["match"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["qpn", "order"]);
    // One SEND one way, 33 of 2 KiB and one short the other.
    assert_eq!(
        (
            flows[0]["a"]["messages"].as_u64(),
            flows[0]["b"]["messages"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(
        (
            flows[1]["a"]["messages"].as_u64(),
            flows[1]["b"]["messages"].as_u64()
        ),
        (Some(34), Some(34))
    );
}

#[test]
fn compare_json_has_the_documented_keys_and_figures() {
    let dir = TempDir::new("compare-keys");
    let (a, b) = (dir.join("a"), dir.join("b"));
    lag_hash(&a, &[]);
    lag_hash(&b, &["host.hostA.bond.bond0.xmit_hash_policy=layer2+3"]);
    let c = compare_json(&a, &b);
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&c), ["a", "b", "flows", "notes", "pfc", "slaves"]);
    assert_eq!(
        keys(&c["a"]),
        [
            "duration_ns",
            "files",
            "flows",
            "goodput_gbps",
            "input",
            "kind",
            "link_speed_gbps",
            "roce_packets",
            "scenario",
            "warnings"
        ]
    );
    let f = &c["flows"][0];
    assert_eq!(keys(f), ["a", "b", "diff", "match"]);
    assert_eq!(
        keys(&f["a"]),
        [
            "cnps",
            "ecn_ce_packets",
            "ecn_ce_share",
            "first_ns",
            "flow",
            "go_back_n",
            "goodput_gbps",
            "key",
            "last_ns",
            "message_latency_ns",
            "messages",
            "naks",
            "packets",
            "payload_bytes",
            "port",
            "request_packets",
            "requester_qpn",
            "retransmitted_packets",
            "slave",
            "timeouts",
            "udp_sport",
            "wire_bytes"
        ]
    );
    assert_eq!(
        keys(&f["diff"]),
        [
            "cnps",
            "ecn_ce_share",
            "go_back_n",
            "goodput_gbps",
            "goodput_pct",
            "latency_p50_ns",
            "latency_p99_ns",
            "messages",
            "naks",
            "payload_bytes",
            "retransmitted_packets",
            "same_slave",
            "timeouts"
        ]
    );
    // lag_hash's summary: 156.806 Gb/s in all, 98.018 under layer2+3 with
    // every QP on slave 0 (rocesim's own aggregate, an independent count).
    for (side, run) in [("a", &a), ("b", &b)] {
        let sim = read_json(&run.join("summary.json"))["aggregate_goodput_gbps"]
            .as_f64()
            .unwrap();
        let got = c[side]["goodput_gbps"].as_f64().unwrap();
        assert!(
            (got - sim).abs() < 0.01 * sim,
            "{side}: {got} vs rocesim's {sim}"
        );
    }
    let slaves = c["slaves"].as_array().unwrap();
    assert_eq!(
        slaves[0]["b"]["share"].as_f64().map(|s| s > 0.99),
        Some(true)
    );
    assert_eq!(slaves[0]["b"]["flows"].as_array().unwrap().len(), 8);
    assert_eq!(slaves[0]["a"]["flows"].as_array().unwrap().len(), 4);
    // The table: every flow row says how it was matched.
    let o = pcap(&[&"compare", &a, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.starts_with("roce-pcap compare: 8 flows matched (8 by QPN), 0 only in A, 0 only in B"),
        "{t}"
    );
    assert!(
        t.lines().any(|l| l.trim_start().starts_with("goodput")
            && l.contains("156.806 Gb/s")
            && l.contains("98.018 Gb/s")),
        "{t}"
    );
}

/// A capture of one SEND between hosts `h` and `h + 1` (10.0.0.h, QPNs
/// 0x10 h + 1 and + 2), or of a frame that is not RoCE at all.
fn capture(path: &Path, host: Option<u8>) {
    let mut s = Synth::create(&[(path, CaptureFormat::Pcap, 0)]).unwrap();
    match host {
        Some(h) => {
            let q = 0x10 * u32::from(h);
            let mut c = RcConn::new(
                Endpoint::host(h, q + 1),
                Endpoint::host(h + 1, q + 2),
                0xC001,
                0,
            );
            let sent = c.message(&mut s, 1_000_000, 2048, false, 100, &[]).unwrap();
            c.ack(&mut s, sent.end_ns + 500, sent.last).unwrap();
        }
        // An ARP request: Ethernet broadcast, EtherType 0x0806.
        None => {
            let mut arp = vec![0xff; 6];
            arp.extend([2, 0, 0, 0, 0, 1, 0x08, 0x06]);
            arp.extend([0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
            arp.extend([0; 6]);
            arp.extend([10, 0, 0, 2]);
            arp.resize(60, 0);
            s.raw(0, 1_000, &arp).unwrap();
        }
    }
    s.finish().unwrap();
}

#[test]
fn bad_input_gets_a_clear_message_and_its_exit_status() {
    let dir = TempDir::new("compare-bad");
    let (one, other, none) = (
        dir.join("one.pcap"),
        dir.join("other.pcap"),
        dir.join("arp.pcap"),
    );
    capture(&one, Some(1));
    capture(&other, Some(7));
    capture(&none, None);

    // No flow in common: both listed, a note, exit 3.
    let o = pcap(&[&"compare", &one, &other]);
    assert_eq!(o.status.code(), Some(3), "{}{}", stdout(&o), stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains("0 flows matched, 1 only in A, 1 only in B"),
        "{t}"
    );
    assert!(t.contains("a-only  10.0.0.1:0x11 -> 10.0.0.2:0x12"), "{t}");
    assert!(t.contains("b-only  10.0.0.7:0x71 -> 10.0.0.8:0x72"), "{t}");
    assert!(
        stderr(&o).contains("A and B have no flow in common"),
        "{}",
        stderr(&o)
    );

    // A side without RoCE: said, exit 3; infer refuses it, exit 2.
    let o = pcap(&[&"compare", &one, &none]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).contains(&format!("B ({}) holds no RoCE frames", none.display())),
        "{}",
        stderr(&o)
    );
    let o = pcap(&[&"infer", &none]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no RC request flows in"),
        "{}",
        stderr(&o)
    );

    // A run directory without captures, one whose capture is gone.
    let run = dir.join("run");
    lag_hash(&run, &[]);
    let summary = read_json(&run.join("summary.json"));
    let bare = dir.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    let mut s = summary.clone();
    s["taps"] = Value::Array(Vec::new());
    std::fs::write(bare.join("summary.json"), s.to_string()).unwrap();
    let o = pcap(&[&"compare", &run, &bare]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("B: ")
            && stderr(&o).contains("a rocesim run directory without captures"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(bare.join("summary.json")).unwrap();
    let o = pcap(&[&"analyze", &bare]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no captures in this directory"),
        "{}",
        stderr(&o)
    );

    // Mixed link speeds in one run directory: refused unless --link-speed.
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    for f in ["hostA.eth0.pcap", "hostA.eth1.pcap"] {
        std::fs::copy(run.join(f), mixed.join(f)).unwrap();
    }
    let mut s = summary.clone();
    for p in s["ports"].as_array_mut().unwrap() {
        if p["name"] == "hostA.eth1" {
            p["rate_gbps"] = Value::from(25.0);
        }
    }
    std::fs::write(mixed.join("summary.json"), s.to_string()).unwrap();
    let o = pcap(&[&"analyze", &mixed]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "the tapped ports run at different speeds (hostA.eth0 100 Gb/s, hostA.eth1 25 Gb/s)"
        ),
        "{}",
        stderr(&o)
    );
    let o = pcap(&[&"analyze", &mixed, &"--link-speed", &"100"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // Sides at different speeds: compared, with a note (exit 3).
    let slow = dir.join("slow");
    lag_hash(
        &slow,
        &[
            "link.0.rate=25Gbps",
            "link.1.rate=25Gbps",
            "link.2.rate=25Gbps",
            "link.3.rate=25Gbps",
        ],
    );
    let o = pcap(&[&"compare", &run, &slow]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the link speeds differ: A at 100 Gb/s, B at 25 Gb/s"),
        "{}",
        stderr(&o)
    );

    // A flow that is not in the table.
    let o = pcap(&[&"compare", &run, &slow, &"--flow", &"8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--flow: 8 is not a flow of the table (0..8)"),
        "{}",
        stderr(&o)
    );
}
