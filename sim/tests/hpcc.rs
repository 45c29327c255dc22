//! HPCC end to end: two senders on one leaf into one receiver on the
//! other, over a spine, every host's NIC running HPCC. Each data packet
//! crosses three switches (leaf0, spine0, leaf1), each of which pushes its
//! egress port's record; the receiver's ACK echoes them. `roce-pcap
//! analyze` of the receiver's capture reads the three hops per flow; the
//! utilisation it computes from the records of the first one, leaf0's
//! uplink that the two flows share, is what the port's own byte counter
//! says over the flows' lifetime, and HPCC keeps that port's queue to a
//! burst at the start. The same holds when the fabric is split in two
//! parts, whose mail carries the records.

mod common;

use common::*;
use roce_pcap::analyze::{AnalyzeOptions, analyze_files};

const INCAST: &str = r#"
name = "hpcc_incast"
seed = 1

[topology]
kind = "leaf-spine"
leaves = 2
spines = 1
hosts_per_leaf = 2
uplinks = 1
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "100Gbps", delay = "1us" }

[topology.host]
profile = "connectx"

  # HPCC reads the records an ACK echoes: an ACK per packet, as the
  # reference's NIC sends them (a ConnectX asks for one per message).
  [topology.host.transport]
  ack_req_every = 1
  ack_coalesce = false

  [topology.host.cc]
  algorithm = "hpcc"

[[traffic]]
pattern = "incast"
receiver = "host3"
hosts = ["host0", "host1"]
size = "4MB"

[[tap]]
at = "host3.eth0"
snaplen = 128

[[tap]]
at = "host0.eth0"
snaplen = 128
"#;

/// `roce-pcap analyze` of one capture, as its `--format json` reports it.
fn analyze(pcap: &std::path::Path) -> serde_json::Value {
    let a = analyze_files(&[pcap], &AnalyzeOptions::default()).unwrap();
    serde_json::to_value(&a.report).unwrap()
}

/// The flows with telemetry in a report, each with its hops.
fn telemetry(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    report["qps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|q| q.get("telemetry"))
        .collect()
}

fn check(tag: &str, sets: &[&str]) {
    let (dir, s) = run_text(tag, INCAST, sets);
    let out = dir.join("run");
    assert_eq!(s["fct"]["finished"], 2, "{tag}");
    // The shared uplink's own count: its frames (data only: the ACKs come
    // back by other ports) over the time from the flows' start (both at
    // 0) to the last one's end, at 100 Gb/s.
    let uplink = s["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str().unwrap().starts_with("leaf0.u"))
        .unwrap();
    let fct_max = std::fs::read_to_string(out.join("fct.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().nth(6).unwrap().parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let counted = uplink["tx_bytes"].as_f64().unwrap() * 8.0 / (100e9 * fct_max * 1e-9);
    let rx = analyze(&tap_file(&s, &out, "host3.eth0"));
    let flows = telemetry(&rx);
    assert_eq!(flows.len(), 2, "{tag}: both flows carry telemetry");
    for t in &flows {
        let hops = t["hops"].as_array().unwrap();
        assert_eq!(hops.len(), 3, "{tag}: leaf0, spine0, leaf1: {t}");
        // Every 4 MB flow's 1024-byte packets all carry records.
        assert!(
            t["requests"].as_u64().unwrap() >= 4_000_000 / 1024,
            "{tag}: {t}"
        );
        let shared = &hops[0];
        assert_eq!(shared["rate_gbps"], 100.0);
        let u = shared["utilisation_mean"].as_f64().unwrap();
        assert!(
            (u - counted).abs() < 0.02 && u > 0.8,
            "{tag}: the records say {u}, the port's counter {counted}"
        );
        // The two flows' first packets meet at line rate; HPCC then
        // drains the queue (a mean of about ten frames at most).
        assert!(
            shared["qlen_max_bytes"].as_u64().unwrap() < 250_000,
            "{tag}: {shared}"
        );
        assert!(
            shared["qlen_mean_bytes"].as_f64().unwrap() < 20_000.0,
            "{tag}: {shared}"
        );
    }
    // The senders read the echoes: every ACK host0 received carries one.
    let tx = analyze(&tap_file(&s, &out, "host0.eth0"));
    let echoed = telemetry(&tx);
    assert_eq!(echoed.len(), 1, "{tag}");
    assert!(echoed[0]["echoes"].as_u64().unwrap() > 0, "{tag}");
}

#[test]
fn telemetry_crosses_three_switches_and_measures_the_shared_link() {
    check("hpcc_incast", &["sim.partitions=1"]);
    check("hpcc_incast_split", &["sim.partitions=2"]);
}

/// `rocesim check` warns where HPCC would hear once per message: the
/// scenario above without its ACK per packet (a ConnectX as it is); with
/// it, no warning.
#[test]
fn check_warns_of_hpcc_without_an_ack_per_packet() {
    let dir = tmp("hpcc_check");
    let check = |text: &str| {
        let file = dir.join("s.toml");
        std::fs::write(&file, text).unwrap();
        let o = bin().arg("check").arg(&file).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
    };
    let sparse = INCAST
        .replace("ack_req_every = 1", "")
        .replace("ack_coalesce = false", "");
    let out = check(&sparse);
    assert!(
        out.contains("4 hosts run HPCC but acknowledge less than every packet (`host0` first)")
            && out.contains("ack_req_every = 1 and ack_coalesce = false"),
        "{out}"
    );
    assert!(!check(INCAST).contains("run HPCC but"));
}

/// HPCC-PINT on the same incast (`algorithm = "hpcc_pint"`): every data
/// packet reaching host3 carries one power and no records, and every ACK
/// host0 receives echoes one. The shared uplink runs nearly full, so the
/// power the path reports, the largest port's, decodes (1.01^p / 512) to a
/// median utilisation near 1; the ideal of the power of a fully used port
/// is ⌈512⌉ = 1.01^627. Each switch rounds from its own stream, so the run
/// split in two parts completes its flows at the serial run's picoseconds.
#[test]
fn pint_carries_one_power_and_splits_alike() {
    use roce_capture::read::{CaptureReader, Next};
    use roce_codec::{Net, ParseOptions};
    let toml = INCAST.replace("algorithm = \"hpcc\"", "algorithm = \"hpcc_pint\"");
    let (d1, s1) = run_text("pint_incast", &toml, &["sim.partitions=1"]);
    let (d2, _) = run_text("pint_incast_split", &toml, &["sim.partitions=2"]);
    assert_eq!(s1["fct"]["finished"], 2);
    let fct = |d: &std::path::Path| std::fs::read_to_string(d.join("run/fct.txt")).unwrap();
    assert_eq!(fct(&d1), fct(&d2), "serial and split alike");
    let ints = |port: &str| {
        let pcap = tap_file(&s1, &d1.join("run"), port);
        let mut r = CaptureReader::open(&pcap).unwrap();
        let mut ints = Vec::new();
        while let Next::Frame(raw) = r.next_frame().unwrap() {
            let f = raw.decode(&ParseOptions::default()).unwrap();
            if let Net::RoceV2 { int, .. } = f.net {
                ints.push(int);
            }
        }
        ints
    };
    // The taps see both directions: the data and the ACKs echoing it.
    let rx = ints("host3.eth0");
    assert!(
        rx.iter()
            .all(|i| i.is_some_and(|i| i.pint && i.hops().is_empty()))
    );
    let mut powers: Vec<u16> = rx
        .iter()
        .flatten()
        .filter(|i| !i.echo)
        .map(|i| i.power)
        .collect();
    assert!(powers.len() >= 2 * 4_000_000 / 1024, "{}", powers.len());
    powers.sort_unstable();
    let median = 1.01f64.powi(i32::from(powers[powers.len() / 2])) / 512.0;
    eprintln!(
        "PINT incast: median power {} = U {median:.3}",
        powers[powers.len() / 2]
    );
    assert!(
        (0.8..1.3).contains(&median),
        "median power {} -> {median}",
        powers[powers.len() / 2]
    );
    let echoes: Vec<_> = ints("host0.eth0")
        .into_iter()
        .flatten()
        .filter(|i| i.echo)
        .collect();
    assert!(echoes.len() >= 4_000_000 / 1024, "{}", echoes.len());
    assert!(echoes.iter().all(|i| i.pint));
}
