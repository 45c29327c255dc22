//! ETS (IEEE 802.1Qaz) on a switch's egress port and on a NIC: two lossless
//! priorities that share a congested 100G port get the port in the
//! proportions `tcbw` gives them (measured over a steady window, from the
//! port's `tx_prio{N}_bytes`); a strict class starves the others, as the
//! standard says; a class that sends less than its share leaves the rest
//! to the other; bad tables are refused at the key. The scheduler's
//! arithmetic is tested by hand in `rocesim_model::world::port::select`.

mod common;

use std::path::Path;

use common::*;

/// The steady window: from 0.5 ms (both queues long since backed up) to
/// 1.5 ms (both senders still sending; the scenario stops at 2 ms). The run to 1.5 ms
/// passes through the run to 0.5 ms (same scenario, same seed): the
/// difference of their counters is what the port sent in between.
const FROM: &str = "500us";
const TO: &str = "1500us";
const WINDOW_S: f64 = 1e-3;

/// Gb/s per priority that `port` sent over the window (frame bytes, as
/// `tx_prio{N}_bytes` counts them) in `file` run with `sets`.
fn window(file: &Path, tag: &str, port: &str, sets: &[&str]) -> [f64; 8] {
    let at = |t: &str| {
        let stop = format!("sim.stop_at={t}");
        let mut all = vec![stop.as_str()];
        all.extend_from_slice(sets);
        run_ok(file, &tmp(&format!("ets_{tag}_{t}")), &all)
    };
    let (a, b) = (at(FROM), at(TO));
    std::array::from_fn(|p| {
        let name = format!("tx_prio{p}_bytes");
        let bytes = counter(&b, port, &name) - counter(&a, port, &name);
        bytes as f64 * 8.0 / WINDOW_S / 1e9
    })
}

/// `got` within 5 % of `want`.
fn within_5pc(got: f64, want: f64, what: &str) {
    assert!(
        (got / want - 1.0).abs() <= 0.05,
        "{what}: {got:.2}, not within 5 % of {want:.2}"
    );
}

/// The shipped scenario: priorities 3 and 4 at line rate into sw1.pr, ETS
/// 70 % / 30 %. Each gets its share of what the port carries (within 5 %;
/// measured 68.50 and 29.34 Gb/s of frame bytes, 70.0 % and 30.0 %).
#[test]
fn seventy_thirty_on_a_congested_switch_port() {
    let g = window(&scenario("ets_shares"), "70_30", "sw1.pr", &[]);
    let total = g[3] + g[4];
    // The port never idles: 100 Gb/s of wire time, 97.8 of it frame
    // bytes (1082-byte frames, 24 bytes of preamble, FCS and gap each).
    within_5pc(total, 100.0 * 1082.0 / 1106.0, "port total");
    within_5pc(g[3], 0.7 * total, "priority 3 (TC3, 70 %)");
    within_5pc(g[4], 0.3 * total, "priority 4 (TC4, 30 %)");
    assert!(
        g.iter()
            .enumerate()
            .all(|(p, &x)| p == 3 || p == 4 || x == 0.0)
    );
}

/// The whole run's outputs (2 ms, both senders busy to the end): per-class
/// bytes in `tc_tx_bytes` as the per-priority counters sum them, 70/30
/// again, PFC holding the senders without a drop, priority 4 (the smaller
/// share) paused longer.
#[test]
fn the_run_reports_bytes_per_class_and_pfc_holds_the_senders() {
    let (_, s) = run_scenario("ets_shares", "ets_shares", &[]);
    let tc = port(&s, "sw1.pr")["tc_tx_bytes"]
        .as_array()
        .unwrap()
        .clone();
    let tc: Vec<u64> = tc.iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(tc.len(), 8);
    let share = tc[3] as f64 / (tc[3] + tc[4]) as f64;
    within_5pc(share, 0.7, "TC3's share of the run");
    assert_eq!(tc[3], counter(&s, "sw1.pr", "tx_prio3_bytes"));
    assert_eq!(tc[4], counter(&s, "sw1.pr", "tx_prio4_bytes"));
    assert_eq!(
        tc.iter().sum::<u64>(),
        port(&s, "sw1.pr")["tx_bytes"].as_u64().unwrap()
    );
    // Ports without ETS carry neither.
    assert!(port(&s, "h1.eth0").get("tc_tx_bytes").is_none());
    assert!(s["counters"]["h1.eth0"].get("tx_prio3_bytes").is_none());
    assert_eq!(s["switches"][0]["lossless_drops"], 0);
    let paused = |p: &str, prio: u8| counter(&s, p, &format!("tx_prio{prio}_pause_duration"));
    assert!(
        paused("sw1.p2", 4) > 2 * paused("sw1.p1", 3),
        "h2 (30 %) paused {} us, h1 (70 %) {} us",
        paused("sw1.p2", 4),
        paused("sw1.p1", 3)
    );
    for q in clients(&s) {
        assert_eq!(q["status"], "running", "still sending at the stop");
        assert_eq!(q["retransmitted_packets"], 0);
    }
}

/// TC3 strict: priority 3 takes the whole port and priority 4 gets
/// nothing over the window, whatever its 100 % among the ETS classes.
#[test]
fn a_strict_class_starves_the_ets_ones() {
    let sets = [
        r#"switch.sw1.ets.tsa=["ets","strict","strict","strict","ets","strict","strict","strict"]"#,
        "switch.sw1.ets.tcbw=[0,0,0,0,100,0,0,0]",
    ];
    let g = window(&scenario("ets_shares"), "strict", "sw1.pr", &sets);
    assert_eq!(g[4], 0.0, "priority 4 starves");
    within_5pc(g[3], 100.0 * 1082.0 / 1106.0, "priority 3");
}

/// Priority 4 paced to 10 Gb/s, a third of its 30 %: it gets its 10, and
/// priority 3 the rest of the port, not 70 % of it.
#[test]
fn a_class_below_its_share_leaves_the_rest_to_the_other() {
    let g = window(
        &scenario("ets_shares"),
        "rate_limited",
        "sw1.pr",
        &["workload.w2.rate_limit=10Gbps"],
    );
    let total = 100.0 * 1082.0 / 1106.0;
    within_5pc(g[4], 10.0, "priority 4 (paced)");
    within_5pc(g[3], total - g[4], "priority 3 (the rest)");
    assert!(g[3] > 0.85 * total, "{:.2} Gb/s", g[3]);
}

/// One host, two QPs at priorities 3 and 4, `[host.ets]` 70/30: the NIC's
/// own port is the bottleneck, and its scheduler splits it.
const NIC_ETS: &str = r#"
name = "ets_nic"
seed = 1

[[switch]]
name = "sw1"
buffer = "16MiB"

[[host]]
name = "r"
profile = "connectx"
trust = "dscp"
  [host.dcqcn]
  enable = false
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.1/24"
  mtu = 1500

[[host]]
name = "h1"
profile = "connectx"
trust = "dscp"
  [host.dcqcn]
  enable = false
  [host.ets]
  tsa = ["strict", "strict", "strict", "ets", "ets", "strict", "strict", "strict"]
  tcbw = [0, 0, 0, 70, 30, 0, 0, 0]
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.2/24"
  mtu = 1500

[[link]]
a = "r.eth0"
b = "sw1.pr"
rate = "100Gbps"
delay = "1us"

[[link]]
a = "h1.eth0"
b = "sw1.p1"
rate = "100Gbps"
delay = "1us"

[[workload]]
name = "a"
tool = "ib_write_bw"
client = "h1"
server = "r"
size = "1MiB"
duration = "2ms"
tx_depth = 4
tc = 106

[[workload]]
name = "b"
tool = "ib_write_bw"
client = "h1"
server = "r"
size = "1MiB"
duration = "2ms"
tx_depth = 4
tc = 138
"#;

#[test]
fn a_nic_splits_its_link_by_its_ets_shares() {
    let dir = tmp("ets_nic");
    let file = dir.join("ets_nic.toml");
    std::fs::write(&file, NIC_ETS).unwrap();
    let g = window(&file, "nic", "h1.eth0", &[]);
    let total = g[3] + g[4];
    within_5pc(total, 100.0 * 1082.0 / 1106.0, "NIC port total");
    within_5pc(g[3], 0.7 * total, "priority 3 (70 %)");
    within_5pc(g[4], 0.3 * total, "priority 4 (30 %)");
    // Without [host.ets] the NIC runs strict priority: 4 before 3.
    let strict = NIC_ETS.replace("  [host.ets]\n", "").replace(
        "  tsa = [\"strict\", \"strict\", \"strict\", \"ets\", \"ets\", \"strict\", \"strict\", \"strict\"]\n  tcbw = [0, 0, 0, 70, 30, 0, 0, 0]\n",
        "",
    );
    assert!(!strict.contains("ets]"));
    let (_, s) = run_text("ets_nic_strict", &strict, &["sim.stop_at=1500us"]);
    let q = clients(&s);
    let bytes = |tc: &str| {
        q.iter()
            .find(|q| q["workload"] == tc)
            .map(|q| q["tx_payload_bytes"].as_u64().unwrap())
            .unwrap()
    };
    assert!(
        bytes("b") > 50 * bytes("a"),
        "strict: priority 4 {} bytes, priority 3 {}",
        bytes("b"),
        bytes("a")
    );
}

/// `[switch.ets]` set as strict priority (each priority its class, all
/// strict) schedules exactly as no table: the same QPs' bytes and times.
#[test]
fn an_all_strict_table_is_strict_priority() {
    let text = std::fs::read_to_string(scenario("ets_shares")).unwrap();
    let plain: String = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("[switch.ets]")
                || t.starts_with("prio_tc =")
                || t.starts_with("tsa =")
                || t.starts_with("tcbw ="))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(plain.contains("[switch.mmu]") && !plain.contains("\n  [switch.ets]"));
    let sets = ["sim.stop_at=1ms"];
    let (_, a) = run_text("ets_none", &plain, &sets);
    let strict = [
        "sim.stop_at=1ms",
        "switch.sw1.ets.prio_tc=[0,1,2,3,4,5,6,7]",
        r#"switch.sw1.ets.tsa=["strict","strict","strict","strict","strict","strict","strict","strict"]"#,
        "switch.sw1.ets.tcbw=[0,0,0,0,0,0,0,0]",
    ];
    let (_, b) = run_scenario("ets_shares", "ets_all_strict", &strict);
    assert_eq!(a["qps"], b["qps"]);
    assert_eq!(a["events"], b["events"]);
    for (pa, pb) in a["ports"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["ports"].as_array().unwrap())
    {
        assert_eq!(pa["tx_bytes"], pb["tx_bytes"], "{}", pa["name"]);
    }
    // Strict priority: priority 4 (the higher) had the port.
    let c = &b["counters"]["sw1.pr"];
    assert!(c["tx_prio4_bytes"].as_u64().unwrap() > 50 * c["tx_prio3_bytes"].as_u64().unwrap());
}

/// `rocesim check` prints the table as mlnx_qos options and per class.
#[test]
fn check_shows_the_ets_configuration() {
    let o = bin()
        .arg("check")
        .arg(scenario("ets_shares"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains(
            "ETS on sw1 (3 ports): mlnx_qos --prio_tc 0,0,0,3,4,0,6,0 \
             --tsa ets,strict,strict,ets,ets,strict,strict,strict --tcbw 0,0,0,70,30,0,0,0\n"
        ),
        "{out}"
    );
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|l| !l.starts_with("ETS on"))
        .skip(3)
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("assumptions"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["6", "strict", "-", "6"],
            vec!["4", "ets", "30", "%", "4"],
            vec!["3", "ets", "70", "%", "3"],
            vec![
                "0",
                "ets",
                "0",
                "%",
                "(what",
                "the",
                "others",
                "leave)",
                "0,1,2,5,7"
            ],
        ]
    );
}

/// Writes `ets_shares` with `[switch.ets]`'s lines replaced by `table`
/// (lines of `key = value`) and `host_table` (a whole table) added to h1,
/// and `rocesim check`s it, which must fail: its stderr.
fn refused(tag: &str, table: &str, host_table: &str) -> String {
    let text = std::fs::read_to_string(scenario("ets_shares")).unwrap();
    let mut out = String::new();
    let mut in_h1 = false;
    for l in text.lines() {
        let t = l.trim_start();
        if t.starts_with("prio_tc =") || t.starts_with("tsa =") || t.starts_with("tcbw =") {
            continue;
        }
        in_h1 |= t.starts_with("name = \"h1\"");
        // h1's first subtable: its own keys are above.
        if in_h1 && t.starts_with('[') {
            out.push_str(host_table);
            in_h1 = false;
        }
        out.push_str(l);
        out.push('\n');
        if t.starts_with("[switch.ets]") {
            out.push_str(table);
        }
    }
    let dir = tmp(&format!("ets_bad_{tag}"));
    let file = dir.join("bad.toml");
    std::fs::write(&file, out).unwrap();
    let o = bin().arg("check").arg(&file).output().unwrap();
    assert!(!o.status.success(), "{tag}: accepted");
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn bad_tables_are_refused_at_the_key() {
    let cases: [(&str, &str, &str, &[&str]); 6] = [
        (
            "sum",
            "  tsa = [\"ets\", \"strict\", \"strict\", \"ets\", \"ets\", \"strict\", \"strict\", \"strict\"]\n  tcbw = [0, 0, 0, 70, 20, 0, 0, 0]\n",
            "",
            &[
                "bad.toml:",
                "key `switch[0].ets.tcbw`: ETS shares sum to 90, must be 100 (TC0 0, TC3 70, TC4 20)",
            ],
        ),
        (
            "strict_share",
            "  tcbw = [0, 0, 0, 70, 30, 0, 0, 0]\n",
            "",
            &["key `switch[0].ets.tcbw[3]`: 70 % for traffic class 3, which is strict"],
        ),
        (
            "seven",
            "  prio_tc = [0, 0, 0, 3, 4, 0, 6]\n",
            "",
            &["key `switch[0].ets.prio_tc`: 7 values: it takes 8, one per priority"],
        ),
        (
            "vendor",
            "  tsa = [\"vendor\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\", \"strict\"]\n",
            "",
            &["key `switch[0].ets.tsa[0]`: \"vendor\" is not modelled"],
        ),
        (
            "preset_and_keys",
            "  preset = \"hpcc_reference\"\n  tcbw = [0, 0, 0, 0, 0, 0, 0, 0]\n",
            "",
            &["key `switch[0].ets.tcbw`: preset = \"hpcc_reference\" sets the whole scheduler"],
        ),
        (
            "preset_on_a_host",
            "",
            "  [host.ets]\n  preset = \"hpcc_reference\"\n",
            &["key `host[1].ets.preset`: the HPCC reference's round robin is its switches'"],
        ),
    ];
    for (tag, table, host, want) in cases {
        let err = refused(tag, table, host);
        for w in want {
            assert!(err.contains(w), "{tag}: {err}");
        }
    }
}
