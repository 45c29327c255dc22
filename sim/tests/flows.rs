//! Generated fabrics and flow workloads end to end: `[topology]` lowered
//! into hosts, switches and routes; `[[traffic]]` into flows; the per-flow
//! results (fct.txt in the reference's format, fct.csv, summary.json's
//! `fct`); `rocesim import-hpcc`.

mod common;

use common::*;
use serde_json::Value;

const LEAF_SPINE: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_link = { rate = "100Gbps", delay = "1us" }
"#;

/// A k = 4 fat-tree (16 hosts, 20 switches, 48 links) with a 4 KB flow
/// from every host to every other.
const FAT_TREE_K4_ALL_TO_ALL: &str = r#"
[topology]
kind = "fat-tree"
k = 4
host_link = { rate = "100Gbps", delay = "1us" }
[[traffic]]
pattern = "all-to-all"
size = "4KB"
"#;

/// fct.csv as rows of named fields.
fn csv_rows(dir: &std::path::Path) -> Vec<std::collections::HashMap<String, String>> {
    let text = std::fs::read_to_string(dir.join("fct.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            head.iter()
                .cloned()
                .zip(l.split(',').map(String::from))
                .collect()
        })
        .collect()
}

/// A 64 000-byte WRITE from host0 to host3 (other leaf) on an idle
/// leaf-spine, small enough that the requester's window (128 unacked
/// PSNs, an ACK asked for every 66th) never stalls it. Ideal, by hand: 63
/// frames of a 1024-byte path MTU (62 full, 512 bytes in the last); 82
/// bytes of framing each (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS
/// 4, preamble 8, gap 12) and the RETH (16) on the first: 69 182 wire
/// bytes = 5 534.56 ns at 100 Gb/s; plus the unloaded round trip over 4
/// links: 8 us of propagation and, per link, one full data frame (1106 B)
/// and an ACK (86 B: + AETH 4) = 95.36 ns, so 8 381.44 ns. 13 916.00 ns in
/// all.
#[test]
fn a_single_flow_on_an_idle_path_takes_its_ideal_time() {
    let text = format!(
        "{LEAF_SPINE}\n[[traffic]]\npattern = \"one-to-many\"\nsender = \"host0\"\nhosts = [\"host3\"]\nsize = \"64000\"\n"
    );
    let (dir, s) = run_text("flow_single", &text, &[]);
    let rows = csv_rows(&dir.join("run"));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!((r["src"].as_str(), r["dst"].as_str()), ("host0", "host3"));
    let ideal: f64 = r["ideal_fct_ns"].parse().unwrap();
    assert!((ideal - 13_916.0).abs() <= 1.0, "ideal {ideal}");
    let fct: f64 = r["fct_ns"].parse().unwrap();
    // One full frame at 100 Gb/s: 88.48 ns.
    let packet = 1106.0 * 8.0 / 100.0;
    assert!(
        (fct - ideal).abs() <= packet,
        "fct {fct} ns vs ideal {ideal} ns (one packet {packet} ns)"
    );
    assert_eq!(s["fct"]["flows"], 1);
    assert_eq!(s["fct"]["by_size"].as_array().unwrap().len(), 5);
}

/// A QP's time series ends with the first sample at or after its flow
/// completes, and that row holds its final values; a longer flow's series
/// goes on. Two flows on disjoint paths of an idle leaf-spine: 64 000 bytes
/// host0 -> host3, 2 MB host1 -> host2, sampled every 2 us.
#[test]
fn a_finished_flows_series_ends_with_its_final_values() {
    let text = format!(
        "{LEAF_SPINE}\n[sim]\nsample_interval = \"2us\"\n\
         [[traffic]]\npattern = \"one-to-many\"\nsender = \"host0\"\nhosts = [\"host3\"]\nsize = \"64000\"\n\
         [[traffic]]\npattern = \"one-to-many\"\nsender = \"host1\"\nhosts = [\"host2\"]\nsize = \"2000000\"\n"
    );
    let (dir, _) = run_text("flow_series_end", &text, &[]);
    let flows = csv_rows(&dir.join("run"));
    let end_ns = |src: &str| -> u64 {
        let f = flows.iter().find(|f| f["src"] == src).unwrap();
        f["start_ns"].parse::<u64>().unwrap() + f["fct_ns"].parse::<f64>().unwrap().ceil() as u64
    };
    let qps = std::fs::read_to_string(dir.join("run/qps.csv")).unwrap();
    let rows = |host: &str| -> Vec<(u64, u64)> {
        qps.lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f[1] == host && f[3] == "client")
            .map(|f| (f[0].parse().unwrap(), f[5].parse().unwrap()))
            .collect()
    };
    let (short, long) = (rows("host0"), rows("host1"));
    let done = end_ns("host0");
    // The first grid point at or after the completion, by hand.
    let last_t = done.div_ceil(2000) * 2000;
    assert_eq!(short.last(), Some(&(last_t, 64_000)), "{short:?}");
    assert!(short.len() >= 3, "the 64 KB flow's series: {short:?}");
    assert!(
        short[..short.len() - 1].iter().all(|&(_, b)| b < 64_000),
        "{short:?}"
    );
    let long_end = end_ns("host1");
    assert!(
        long_end > last_t + 10_000,
        "the 2 MB flow ends at {long_end} ns"
    );
    // The last flow's last row is the run's final sample, at its end
    // (its last ACK), or the grid point after its completion.
    let &(t, bytes) = long.last().unwrap();
    assert_eq!(bytes, 2_000_000);
    assert!(
        t >= long_end && t <= long_end.div_ceil(2000) * 2000,
        "{t} vs {long_end}"
    );
    assert!(
        long.iter().filter(|&&(t, _)| t > last_t).count() >= 5,
        "{long:?}"
    );
}

/// A k = 4 fat-tree has 16 hosts, 20 switches, 48 links; one flow from
/// every host to every other completes (every host reaches every other
/// through the generated routes), and fct.txt parses as the reference's.
#[test]
fn a_generated_fat_tree_connects_every_pair() {
    let text = FAT_TREE_K4_ALL_TO_ALL;
    let dir = tmp("flow_fat_tree_check");
    let file = dir.join("ft.toml");
    std::fs::write(&file, text).unwrap();
    let o = bin().arg("check").arg(&file).output().unwrap();
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(
        line.contains("16 hosts, 20 switches, 48 links, 240 RC connections"),
        "{line}"
    );
    let (dir, s) = run_text("flow_fat_tree", text, &[]);
    let run = dir.join("run");
    assert_eq!(s["fct"]["flows"], 240);
    assert_eq!(s["fct"]["finished"], 240);
    let fct = rocesim::hpcc::fct::read(&run.join("fct.txt")).unwrap();
    assert_eq!(fct.len(), 240);
    let mut pairs: Vec<(u32, u32)> = fct
        .iter()
        .map(|f| (u32::from(f.sip), u32::from(f.dip)))
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 240);
    // Generated hosts: 10.0.0.1 + h << 8.
    assert!(
        fct.iter()
            .all(|f| f.sip.octets()[0] == 10 && f.sip.octets()[3] == 1)
    );
    for f in &fct {
        assert_eq!(f.size, 4000);
        assert!(f.fct_ns >= f.standalone_ns * 99 / 100, "{f:?}");
    }
    // The plot is a PNG.
    let png = std::fs::read(run.join("fct.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}

/// A link failure in a generated fabric: agg0's link to core0 fails at
/// 3 us while every host sends 40 KB to every other. Without re-routing,
/// core0 still gets traffic for pod 0 (the other pods' aggregation
/// switches hash flows to it) and has no way there: frames die for want
/// of a route. With `reroute = true` every route is recomputed at the
/// failure: no frame lacks one and every flow finishes. (That the tables
/// re-computed with every link up are the generated ones:
/// `world::reroute::tests`.)
#[test]
fn a_rerouting_fabric_goes_around_a_failed_link() {
    let failure = "reroute = true\n[[topology.link_event]]\nbetween = [\"agg0\", \"core0\"]\nat = \"3us\"\nstate = \"down\"\n";
    let text = FAT_TREE_K4_ALL_TO_ALL
        .replace("size = \"4KB\"", "size = \"40KB\"")
        .replace("[[traffic]]", &format!("{failure}[[traffic]]"))
        + "[sim]\nstop_at = \"20ms\"\n";
    let no_route = |s: &Value| -> u64 {
        s["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["drops_no_route"].as_u64().unwrap_or(0))
            .sum()
    };
    let (_, s) = run_text("reroute_on", &text, &[]);
    assert_eq!(s["fct"]["finished"], 240, "{}", s["fct"]);
    assert_eq!(no_route(&s), 0);
    let (_, s) = run_text("reroute_off", &text, &["topology.reroute=false"]);
    assert!(
        no_route(&s) > 0,
        "no frame lacked a route without re-routing"
    );
}

/// Bytes each aggregation switch sent up to the core (ports `aggN.uM`).
fn core_uplink_bytes(s: &Value) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = s["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["tx_bytes"].as_u64().unwrap(),
            )
        })
        .filter(|(n, _)| n.starts_with("agg") && n.contains(".u"))
        .collect();
    v.sort();
    v
}

/// ECMP polarisation. In a k = 4 fat-tree (8 aggregation switches, 2
/// core uplinks each) with a flow between every pair of hosts, generated
/// switches hash with MurmurHash3 seeded by their node id and every core
/// uplink carries traffic. With one seed on every switch the aggregation
/// switch repeats the edge switch's choice: an aggregation switch that is
/// uplink i of its edge switches sends everything up its own uplink i,
/// and half the core links stay idle.
#[test]
fn generated_switches_do_not_polarise_ecmp() {
    let text = FAT_TREE_K4_ALL_TO_ALL;
    let (_, s) = run_text("flow_ecmp_seeds", text, &[]);
    let up = core_uplink_bytes(&s);
    assert_eq!(up.len(), 16, "{up:?}");
    assert!(up.iter().all(|(_, b)| *b > 0), "an idle core link: {up:?}");
    let (_, s) = run_text("flow_ecmp_one_seed", text, &["topology.switch.hash_seed=0"]);
    let up = core_uplink_bytes(&s);
    let idle: Vec<&str> = up
        .iter()
        .filter(|(_, b)| *b == 0)
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(idle.len(), 8, "one seed everywhere: {up:?}");
    for a in 0..8 {
        let busy = up
            .iter()
            .filter(|(n, b)| n.starts_with(&format!("agg{a}.")) && *b > 0)
            .count();
        assert_eq!(busy, 1, "agg{a} with one seed: {up:?}");
    }
}

/// A run with many flows prints what a planner reads: the busiest 40
/// ports and 40 client QPs (saying how many more the CSVs hold) and the
/// slowdowns per flow size, the same figures as summary.json's `fct`.
#[test]
fn a_fabric_runs_table_is_cut_and_ends_with_the_slowdowns() {
    let text = FAT_TREE_K4_ALL_TO_ALL;
    let dir = tmp("flow_fat_tree_table");
    let file = dir.join("ft.toml");
    std::fs::write(&file, text).unwrap();
    let o = run(&file, &dir.join("run"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let qp_rows = out
        .lines()
        .filter(|l| l.trim_end().ends_with(" success"))
        .count();
    assert_eq!(qp_rows, 40, "{out}");
    assert!(out.contains("... 40 client QPs shown (any that did not succeed, then the lowest goodput); all 240 in qps.csv"), "{out}");
    // 48 links, both ends of each carried traffic: 96 ports, 40 shown.
    assert!(
        out.contains(
            "... 40 ports shown (any that dropped, then the busiest); 56 more in ports.csv"
        ),
        "{out}"
    );
    assert!(
        out.contains("flow completion: 240 of 240 flows finished"),
        "{out}"
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run/summary.json")).unwrap())
            .unwrap();
    let f = &s["fct"];
    let all = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some("all"))
        .expect("an `all` row");
    let want = format!(
        "all 240 {:.2} {:.2} {:.2}",
        f["slowdown"]["p50"].as_f64().unwrap(),
        f["slowdown"]["p95"].as_f64().unwrap(),
        f["slowdown"]["p99"].as_f64().unwrap()
    );
    assert_eq!(all.split_whitespace().collect::<Vec<_>>().join(" "), want);
    // 4 KB flows: one bucket, and the small panel.
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("<10KB ") && l.contains(" 240 ")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("<100KB (small)")),
        "{out}"
    );
}

/// Same scenario and seed: byte-identical flow outputs; another seed
/// draws other flows.
#[test]
fn flow_outputs_are_deterministic() {
    let text = format!(
        "{LEAF_SPINE}\n[[traffic]]\npattern = \"all-to-all\"\ncdf = \"{}\"\nload = 0.3\nduration = \"200us\"\n",
        repo().join("scenarios/cdf/WebSearch.txt").display()
    );
    let (a, sa) = run_text("flow_det_a", &text, &[]);
    let (b, _) = run_text("flow_det_b", &text, &[]);
    for f in ["fct.txt", "fct.csv", "fct.png"] {
        assert_eq!(
            std::fs::read(a.join("run").join(f)).unwrap(),
            std::fs::read(b.join("run").join(f)).unwrap(),
            "{f}"
        );
    }
    let (c, _) = run_text("flow_det_c", &text, &["seed=2"]);
    assert_ne!(
        std::fs::read(a.join("run/fct.csv")).unwrap(),
        std::fs::read(c.join("run/fct.csv")).unwrap()
    );
    assert!(sa["fct"]["flows"].as_u64().unwrap() > 0);
}

/// import-hpcc of the reference's 2:1 incast config: a scenario that
/// `rocesim check` accepts, with the reference's 2 flows on its 65-host
/// star.
#[test]
fn import_hpcc_gives_a_scenario_check_accepts() {
    let Some(dir) = roce_testkit::ci::shared("anchors/hpcc-ns3") else {
        return;
    };
    let out = tmp("import_hpcc").join("e3.toml");
    let o = bin()
        .arg("import-hpcc")
        .arg(dir.join("e3_dcqcn_2to1_notrace.cfg"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin().arg("check").arg(&out).output().unwrap();
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        line.contains("65 hosts, 1 switch, 65 links, 2 RC connections"),
        "{line}"
    );
    // Both cores, cut between the 2 senders and the rest; no sysfs trees.
    assert!(
        line.contains("partitions = 2: 1 switch and 63 hosts | 0 switches and 2 hosts"),
        "{line}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("\n[output]\n") && text.contains("\nsysfs = false\n"));
}

fn fct(s: &Value) -> &Value {
    &s["fct"]
}

/// A run without flows has no `fct` key and no fct files.
#[test]
fn a_run_without_flows_has_no_fct() {
    let (dir, s) = run_scenario("ecmp", "flow_none", &[]);
    assert!(fct(&s).is_null());
    assert!(!dir.join("fct.txt").exists());
}

/// The generated fat-tree scenario is the reference's fabric: 320 hosts,
/// 56 switches, 480 links; a short run of it finishes flows.
#[test]
fn the_generated_fat_tree_scenario_has_the_references_counts() {
    let o = bin()
        .arg("check")
        .arg(scenario("fat_tree_websearch_generated"))
        .args(["--set", "traffic.0.duration=100us"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(line.contains("320 hosts, 56 switches, 480 links"), "{line}");
}

/// The capacity sweep of leaf_spine_capacity.toml, shortened: sweep.csv
/// carries the FCT slowdown columns, one row per spine count.
#[test]
fn the_leaf_spine_sweep_reports_fct_slowdowns() {
    let out = tmp("flow_sweep");
    let o = bin()
        .arg("sweep")
        .arg(scenario("leaf_spine_capacity"))
        .args(["--set", "topology.spines=2,4"])
        .args(["--set", "traffic.0.duration=100us"])
        .args(["--seeds", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let p99 = head
        .iter()
        .position(|h| *h == "fct_slowdown_p99")
        .expect("a p99 column");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let v: f64 = r[p99].parse().unwrap();
        assert!(v >= 1.0, "{csv}");
    }
    assert!(String::from_utf8_lossy(&o.stdout).contains("slowdown p50"));
}

/// A flow's QP pair is made at the flow's start, not at t = 0: a run
/// stopped at 300 us has the QPs of the flows started by then and no
/// others, and no QP has a time-series row from before its flow started.
#[test]
fn flows_get_their_qps_when_they_start() {
    let (dir, s) = run_scenario(
        "leaf_spine_capacity",
        "flow_qps_at_start",
        &["sim.stop_at=300us"],
    );
    let flows = csv_rows(&dir);
    let start_of = |host: &str, qpn: u64| -> u64 {
        let f = flows
            .iter()
            .find(|f| {
                f["src"] == host
                    && u64::from_str_radix(f["src_qpn"].trim_start_matches("0x"), 16).unwrap()
                        == qpn
            })
            .unwrap_or_else(|| panic!("no flow from {host} QP {qpn}"));
        f["start_ns"].parse().unwrap()
    };
    let started = flows
        .iter()
        .filter(|f| f["start_ns"].parse::<u64>().unwrap() <= 300_000)
        .count();
    assert!(
        started > 0 && started < flows.len(),
        "{started} of {}",
        flows.len()
    );
    assert_eq!(s["qps"].as_array().unwrap().len(), 2 * started);
    assert_eq!(fct(&s)["flows"].as_u64().unwrap() as usize, flows.len());
    let qps = std::fs::read_to_string(dir.join("qps.csv")).unwrap();
    let mut rows = 0;
    for l in qps.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f[3] == "client" {
            let t: u64 = f[0].parse().unwrap();
            assert!(t >= start_of(f[1], f[2].parse().unwrap()), "{l}");
            rows += 1;
        }
    }
    assert!(rows > 0);
}

/// import-hpcc of the fat-tree config writes the reference's presets as
/// keys (not comments): its NIC with the config's DCQCN (MIN_RATE 1000Mb/s
/// here), its MMU, its ECN thresholds per port speed (KMIN_MAP 400/1600 KB
/// at 100/400G), and `check` accepts the result.
#[test]
fn import_hpcc_writes_the_reference_presets() {
    let Some(dir) = roce_testkit::ci::shared("anchors/hpcc-ns3") else {
        return;
    };
    let out = tmp("import_hpcc_fat").join("fat.toml");
    let o = bin()
        .arg("import-hpcc")
        .arg(dir.join("config_fat_ws30_10ms_dcqcn.txt"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    for want in [
        "\nprofile = \"hpcc\"\n",
        "\n  segment_bytes = 1000 ",
        "\n  rpg_min_rate = 1000 ",
        "\n  preset = \"hpcc_reference\"\n",
        "\n  kmin = { \"100Gbps\" = \"400KB\", \"400Gbps\" = \"1600KB\" }\n",
        "\n  kmax = { \"100Gbps\" = \"1600KB\", \"400Gbps\" = \"6400KB\" }\n",
        "\n  mark = \"dequeue\" ",
        "\n  ect_only = false ",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    let o = bin().arg("check").arg(&out).output().unwrap();
    let line = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        line.contains("320 hosts, 56 switches, 480 links, 6558 RC connections (13116 QPs"),
        "{line}"
    );
}

/// The hpcc profile bills frames at the reference's sizes: a 10 000-byte
/// WRITE from host0 to host1 (same leaf, two 1 us links at 100 Gb/s) in
/// ten 1000-byte packets of 1048 billed bytes (83.84 ns each, no preamble
/// or gap) and ACKs of 60 (4.8 ns). By hand: the last packet leaves host0
/// at 838.4 ns, reaches host1 at 838.4 + 1000 + 83.84 + 1000 = 2922.24 ns,
/// and its ACK host0 at 2922.24 + 2 x (4.8 + 1000) = 4931.84 ns. The ideal,
/// the round trip with one data packet and one ACK per link plus the
/// billed bytes at the bottleneck: 4000 + 2 x 88.64 + 838.4 = 5015.68 ns.
/// The wire carries the real frames all the same: the counters count
/// 1074 bytes for the first (its RETH) and 1058 for each of the others.
#[test]
fn the_hpcc_profile_times_frames_at_the_references_sizes() {
    let text = format!(
        "{LEAF_SPINE}\n  [topology.host]\n  profile = \"hpcc\"\n[[traffic]]\npattern = \"one-to-many\"\nsender = \"host0\"\nhosts = [\"host1\"]\nsize = \"10000\"\n"
    );
    let (dir, s) = run_text("flow_billed", &text, &[]);
    let rows = csv_rows(&dir.join("run"));
    let r = &rows[0];
    // fct.csv has whole nanoseconds.
    assert_eq!(
        (r["fct_ns"].as_str(), r["ideal_fct_ns"].as_str()),
        ("4931", "5015")
    );
    let host0 = &s["counters"]["host0.eth0"];
    assert_eq!(host0["tx_bytes_phy"], 1074 + 9 * 1058);
    // Ten real ACKs: 62 bytes (+ AETH 4 over a data packet's headers).
    assert_eq!(host0["rx_bytes_phy"], 10 * 62);

    // Billed at their real sizes instead: the first frame 1098 bytes of
    // wire (87.84 ns, its RETH), the others 1082 (86.56 ns), ACKs 86
    // (6.88 ns). The first frame's longer forward holds the second back
    // at the switch by 1.28 ns, and so every later one: the last ACK at
    // 87.84 + 9 x 86.56 + 1000 + 1.28 + 86.56 + 1000 + 2 x 1006.88 =
    // 4968.48 ns.
    let real = [
        "topology.host.transport.header_bytes=0",
        "topology.host.transport.ack_bytes=0",
    ];
    let (dir, _) = run_text("flow_billed_real", &text, &real);
    let r = &csv_rows(&dir.join("run"))[0];
    assert_eq!(r["fct_ns"], "4968");

    // On the reference's 1 ns clock: 83 ns a data frame, 4 an ACK, the
    // NIC's pacing too: 10 x 83 + 1000 + 83 + 1000 + 2 x (4 + 1000).
    let (dir, _) = run_text("flow_billed_ns", &text, &["sim.tx_time_step=1ns"]);
    let r = &csv_rows(&dir.join("run"))[0];
    assert_eq!(
        (r["fct_ns"].as_str(), r["ideal_fct_ns"].as_str()),
        ("4921", "5015")
    );
}
