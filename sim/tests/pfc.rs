//! PFC on a lossless priority (`[switch.mmu]`): the shipped pfc_incast
//! scenario drops nothing, pauses every upstream hop, and the pause frames
//! in its capture are the 802.1Qbb frames tshark decodes.

mod common;

use common::*;
use roce_testkit::tshark::{fields, tshark};
use serde_json::Value;

/// The ports that must pause their peer in pfc_incast, and that peer:
/// sw1 towards its four senders and sw2, sw2 towards its four senders.
fn upstream_hops() -> Vec<(String, String)> {
    let mut hops: Vec<(String, String)> = (1..=4)
        .map(|i| (format!("sw1.p{i}"), format!("h{i}.eth0")))
        .collect();
    hops.push(("sw1.up".into(), "sw2.up".into()));
    hops.extend((5..=8).map(|i| (format!("sw2.p{i}"), format!("h{i}.eth0"))));
    hops
}

#[test]
fn pfc_incast_drops_nothing_and_pauses_every_upstream_hop() {
    let (dir, s) = run_scenario("pfc_incast", "pfc_incast", &[]);
    for sw in s["switches"].as_array().unwrap() {
        assert_eq!(sw["lossless_drops"], 0, "{sw}");
    }
    for p in s["ports"].as_array().unwrap() {
        assert_eq!(p["drops"], 0, "{p}");
    }
    for (sw_port, peer) in upstream_hops() {
        let sent = counter(&s, &sw_port, "tx_prio3_pause");
        assert!(sent > 5, "{sw_port} sent only {sent} pauses");
        assert_eq!(counter(&s, &peer, "rx_prio3_pause"), sent, "{peer}");
        assert_eq!(counter(&s, &sw_port, "tx_prio3_discards"), 0, "{sw_port}");
        // Paused time as seen from both ends of the link agrees to 1 us
        // per transition (the frame's flight time shifts both edges).
        let (tx, rx) = (
            counter(&s, &sw_port, "tx_prio3_pause_duration"),
            counter(&s, &peer, "rx_prio3_pause_duration"),
        );
        assert!(tx.abs_diff(rx) <= 2, "{sw_port} {tx} us vs {peer} {rx} us");
        // Only priority 3 is lossless: no other priority was paused.
        assert_eq!(counter(&s, &peer, "rx_prio4_pause"), 0);
    }
    // The receiver's port is not paused by anyone: it only receives.
    assert_eq!(counter(&s, "sw1.pr", "rx_prio3_pause"), 0);
    for c in clients(&s) {
        assert_eq!(c["status"], "success", "{c}");
    }
    // queues.csv: h1's NIC is shown paused on priority 3 at some samples,
    // sw1.pr's queue is never above the buffer, and priority 3 is the only
    // one that ever queued or paused.
    let csv = std::fs::read_to_string(dir.join("queues.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert!(rows.iter().any(|r| r[1] == "h1.eth0" && r[4] == "1"));
    assert!(rows.iter().all(|r| r[2] == "3"));
    let peak = rows
        .iter()
        .filter(|r| r[1] == "sw1.pr")
        .map(|r| r[3].parse::<u64>().unwrap())
        .max()
        .unwrap();
    assert!(peak > 100_000 && peak <= 16 << 20, "{peak}");
    assert!(dir.join("queues.png").is_file());

    // The pauses in h1's capture are what tshark reads as PFC: opcode
    // 0x0101, class-enable vector 0x0008 (priority 3), quanta 65535 for
    // XOFF and 0 for XON, 60-byte frames with no expert complaint.
    if tshark().is_none() {
        return;
    }
    let pcap = dir.join("pfc.pcap");
    let rows = fields(
        &pcap,
        &["-Y", "macc"],
        &[
            "frame.len",
            "eth.dst",
            "macc.opcode",
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c3",
            "_ws.expert",
        ],
    );
    assert_eq!(
        rows.len() as u64,
        counter(&s, "h1.eth0", "rx_pause_ctrl_phy")
    );
    let xoff = rows.iter().filter(|r| r[4] == "65535").count();
    assert!(xoff > 0 && xoff < rows.len(), "XOFFs and XONs both");
    for r in &rows {
        assert_eq!(
            r[..4],
            ["60", "01:80:c2:00:00:01", "0x0101", "0x0008"],
            "{r:?}"
        );
        assert!(r[4] == "65535" || r[4] == "0", "{r:?}");
        assert_eq!(r[5], "", "tshark's expert info: {r:?}");
    }
}

/// Without a lossless priority the same incast tail-drops at the
/// bottleneck and nobody pauses.
#[test]
fn lossy_priority_drops_and_never_pauses() {
    let (_, s) = run_scenario(
        "pfc_incast",
        "pfc_incast_lossy",
        &["switch.sw1.mmu.lossless=[]", "switch.sw2.mmu.lossless=[]"],
    );
    let drops: u64 = s["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["drops_buffer"].as_u64().unwrap())
        .sum();
    assert!(
        drops > 0,
        "a 1 MiB buffer and 8 x 130 KiB windows tail-drop"
    );
    assert!(s["counters"]["sw1.p1"].get("tx_prio3_pause").is_none());
}

/// 802.3x: the same incast with PAUSE frames (every priority at once).
#[test]
fn global_pause_stops_every_priority() {
    let (_, s) = run_scenario(
        "pfc_incast",
        "pfc_incast_global",
        &["switch.sw1.mmu.pause=global", "switch.sw2.mmu.pause=global"],
    );
    let sent = counter(&s, "sw1.p1", "tx_global_pause");
    assert!(sent > 0);
    assert_eq!(counter(&s, "h1.eth0", "rx_global_pause"), sent);
    assert_eq!(counter(&s, "sw1.p1", "tx_prio3_pause"), 0);
    for sw in s["switches"].as_array().unwrap() {
        assert_eq!(sw["lossless_drops"], 0, "{sw}");
    }
}

fn client<'a>(s: &'a Value, host: &str) -> &'a Value {
    clients(s)
        .into_iter()
        .find(|c| c["host"] == host)
        .unwrap_or_else(|| panic!("no client on {host}"))
}

/// A hung receiver's NIC pauses its switch port for the rest of the run,
/// refreshing every half quanta: 65535 x 512 bits at 100G is 335.5392 us,
/// so one XOFF every 167.7696 us from the first.
#[test]
fn pfc_storm_the_watchdog_stops_the_spread() {
    let (_, s) = run_scenario("pfc_storm", "pfc_storm", &[]);
    let paused_us = counter(&s, "r.eth0", "tx_prio3_pause_duration");
    assert!(paused_us > 18_000, "{paused_us}");
    assert_eq!(
        counter(&s, "r.eth0", "tx_prio3_pause"),
        1 + paused_us * 1_000_000 / 167_769_600,
        "refreshed every half quanta"
    );
    assert_eq!(counter(&s, "sw1.pr", "rx_prio3_pause_transition"), 1);
    assert_eq!(counter(&s, "r.eth0", "tx_pause_storm_warning_events"), 1);
    assert_eq!(counter(&s, "r.eth0", "tx_pause_storm_error_events"), 0);
    assert_eq!(counter(&s, "sw1.pr", "pfc_wd_prio3_storm_detected"), 1);
    assert!(counter(&s, "sw1.pr", "pfc_wd_prio3_tx_dropped") > 1000);
    assert!(counter(&s, "sw1.up", "tx_prio3_pause_duration") < 2_000);
    assert_eq!(client(&s, "h4")["status"], "success");
    for sw in s["switches"].as_array().unwrap() {
        assert_eq!(sw["lossless_drops"], 0, "{sw}");
    }

    // Without the watchdog the storm reaches the uplink and the innocent
    // flow behind it.
    let (_, s) = run_scenario(
        "pfc_storm",
        "pfc_storm_nowd",
        &["switch.sw1.mmu.watchdog.detect=1s"],
    );
    assert_eq!(counter(&s, "sw1.pr", "pfc_wd_prio3_storm_detected"), 0);
    assert!(counter(&s, "sw1.up", "tx_prio3_pause_duration") > 15_000);
    assert!(counter(&s, "h4.eth0", "rx_prio3_pause_duration") > 1_000);
    assert_ne!(client(&s, "h4")["status"], "success");

    // The NIC's stall prevention: after stall_error it stops pausing (its
    // last XOFF runs out) and drops what it cannot take.
    let (_, s) = run_scenario(
        "pfc_storm",
        "pfc_storm_nic",
        &[
            "switch.sw1.mmu.watchdog.detect=1s",
            "host.r.pfc.stall_error=3ms",
        ],
    );
    assert_eq!(counter(&s, "r.eth0", "tx_pause_storm_error_events"), 1);
    assert_eq!(counter(&s, "r.eth0", "tx_prio3_pause_duration"), 3_000);
    assert!(counter(&s, "r.eth0", "rx_discards_phy") > 0);
    assert_eq!(client(&s, "h4")["status"], "success");
}

/// The victim shares a paused uplink and priority with congested flows:
/// it is held to their share; on a lossy priority it runs past them.
#[test]
fn pfc_hol_the_victim_is_paused_with_the_congested_flows() {
    let gbps = |s: &Value| client(s, "victim")["goodput_gbps"].as_f64().unwrap();
    let (_, s) = run_scenario("pfc_hol", "pfc_hol", &[]);
    assert!(gbps(&s) < 20.0, "{}", gbps(&s));
    assert!(counter(&s, "victim.eth0", "rx_prio3_pause") > 0);
    let (_, lossy) = run_scenario("pfc_hol", "pfc_hol_tc0", &["workload.victim.tc=0"]);
    assert!(gbps(&lossy) > 50.0, "{}", gbps(&lossy));
    assert_eq!(counter(&lossy, "victim.eth0", "rx_prio3_pause"), 0);
}

/// The PFC chapter quotes today's runs: every line of its text blocks
/// (but the frame layout and the commands) is a line rocesim prints for
/// the commands shown, or the counters `jq` picks from summary.json.
#[test]
fn the_pfc_chapter_quotes_todays_runs() {
    let mut printed: Vec<String> = Vec::new();
    let thin = vec![
        "switch.sw1.mmu.headroom=30KB",
        "switch.sw2.mmu.headroom=30KB",
    ];
    // `rocesim check` as the book runs it, from the repository: the
    // headroom, the NIC buffers' section (the table, and the warning at
    // 7 m) and the ETS table.
    let checks: [(&str, &[&str]); 4] = [
        ("pfc_incast", &thin),
        ("nic_buffers", &[]),
        ("nic_buffers", &["host.r.pfc.cable_len=7"]),
        ("ets_shares", &[]),
    ];
    for (name, sets) in checks {
        let mut check = bin();
        check
            .current_dir(repo())
            .args(["check", &format!("scenarios/{name}.toml")]);
        for s in sets {
            check.args(["--set", s]);
        }
        let o = check.output().unwrap();
        assert!(o.status.success(), "rocesim check {name}");
        for out in [o.stdout, o.stderr] {
            printed.extend(String::from_utf8(out).unwrap().lines().map(str::to_string));
        }
    }
    for (name, tag, sets) in [
        ("pfc_incast", "book_pfc_incast", vec![]),
        ("pfc_incast", "book_pfc_incast_30kb", thin.clone()),
        ("pfc_storm", "book_pfc_storm", vec![]),
        ("ets_shares", "book_ets_shares", vec![]),
        (
            "pfc_storm",
            "book_pfc_storm_nowd",
            vec!["switch.sw1.mmu.watchdog.detect=1s"],
        ),
    ] {
        let dir = tmp(tag);
        let o = run(&scenario(name), &dir, &sets);
        assert!(o.status.success());
        printed.extend(
            String::from_utf8(o.stdout)
                .unwrap()
                .lines()
                .map(str::to_string),
        );
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        if tag == "book_pfc_incast_30kb" {
            // jq -c '[.switches[] | {name, lossless_drops}]'
            let drops: Vec<String> = s["switches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|sw| {
                    format!(
                        "{{\"name\":{},\"lossless_drops\":{}}}",
                        sw["name"], sw["lossless_drops"]
                    )
                })
                .collect();
            printed.push(format!("[{}]", drops.join(",")));
        }
        if tag == "book_ets_shares" {
            // jq -c '.ports[] | select(.name == "sw1.pr") | .tc_tx_bytes'
            let p = s["ports"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == "sw1.pr");
            printed.push(serde_json::to_string(&p.unwrap()["tc_tx_bytes"]).unwrap());
        }
        if tag == "book_pfc_incast" {
            for port in ["h1.eth0", "sw2.up", "h5.eth0"] {
                let picked: serde_json::Map<String, Value> = s["counters"][port]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| k.starts_with("rx_prio3_pause"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                printed.push(serde_json::to_string(&picked).unwrap());
            }
        }
    }
    let mut quoted = 0;
    for block in roce_testkit::repo::book_text_blocks("pfc.md") {
        if block[0].starts_with("DA ") {
            continue;
        }
        for line in block.iter().filter(|l| !l.starts_with("$ ")) {
            quoted += 1;
            assert!(
                printed.contains(line),
                "book/src/pfc.md quotes a line rocesim no longer prints:\n{line}"
            );
        }
    }
    assert!(quoted > 15, "quotes not found");
}

/// These tests' numbers come from Soft-RoCE's 128-PSN window and DSCP
/// trust: their hosts keep the rxe profile now that connectx is the default.
const RXE: &str = "profile = \"rxe\"\n";

/// A receiver that drains at half its link rate (`[host.pfc] rx_rate`)
/// pauses its switch port and gets exactly half a link: 50 Gb/s of wire
/// bytes. With MTU 1500 (RoCE MTU 1024) a WRITE packet is 1082 bytes
/// captured, 1106 on the wire with FCS, preamble and gap, so goodput is
/// 50 x 1024 / 1106 = 46.29 Gb/s (hpcc_2to1's per-flow figure, for the
/// same reason). Nothing is dropped anywhere; the switch holds the rest
/// of a's window. The NIC's 160 KB buffer pauses at 80 KB, which leaves
/// 80 KB for what the switch port sends before it stops: two 1538-byte
/// frames, the PFC frame, 2 x 1 us of cable and the port's 802.3 reaction
/// at 100G (324,608 bit times), 68,736 bytes (a 64 KB buffer, 32 KB above
/// XOFF, was enough only while pauses acted the instant they arrived).
#[test]
fn a_slow_receiver_pauses_its_switch_port_and_gets_its_drain_rate() {
    let pfc = "profile = \"rxe\"\n  [host.pfc]\n  priorities = [3]\n  rx_rate = \"50Gbps\"\n  rx_buffer = \"160KB\"\n";
    let mmu = "buffer = \"1MiB\"\n  [switch.mmu]\n  lossless = [3]\n  headroom = \"40KB\"\n";
    let t = host("a", RXE, &[("eth0", "10.0.0.1/24")], 1500)
        + &host("b", pfc, &[("eth0", "10.0.0.2/24")], 1500)
        + &switch("sw1", mmu, &[])
        + &link("a.eth0", "sw1.pa", "100G")
        + &link("b.eth0", "sw1.pb", "100G")
        + &write_bw("a", "b", "size = \"1MiB\"\niters = 16\ntc = 106\n");
    let (_, s) = run_text("slow_receiver", &t, &[]);
    let c = &clients(&s)[0];
    assert_eq!(c["status"], "success");
    let gbps = c["goodput_gbps"].as_f64().unwrap();
    assert!((gbps - 46.29).abs() < 0.5, "{gbps}");
    assert!(counter(&s, "b.eth0", "tx_prio3_pause") > 0);
    assert_eq!(
        counter(&s, "sw1.pb", "rx_prio3_pause"),
        counter(&s, "b.eth0", "tx_prio3_pause")
    );
    // a's 128-packet window fits in the switch: a itself is not paused.
    assert_eq!(counter(&s, "a.eth0", "rx_prio3_pause"), 0);
    assert_eq!(counter(&s, "b.eth0", "rx_discards_phy"), 0);
    assert_eq!(s["switches"][0]["lossless_drops"], 0);
}

/// `preset = "hpcc_reference"`: priorities 1-6 lossless, 0 and 7 (the hpcc
/// profile's ACKs) bypass the MMU. An 8:1 incast into a 1 MiB reference buffer (9 x 37500 B headroom:
/// 3 x 100 Gb/s x 1 us) pauses priority 3
/// and drops nothing; on priority 0 nothing is accounted, so nothing is
/// paused (and nothing dropped: the bypass never fills). The reference's
/// headroom counts on NICs that stop the moment a pause arrives: the hosts
/// here are told to (`[host.pfc]` delays 0, as the `hpcc` profile's).
/// With the 802.3 reaction of a real NIC (3.25 us at 100G) the same
/// headroom is short: lossless frames are dropped.
#[test]
fn the_hpcc_reference_preset_is_lossless_except_priorities_0_and_7() {
    let mmu = "buffer = \"1MiB\"\n  [switch.mmu]\n  preset = \"hpcc_reference\"\n";
    let at_once =
        "profile = \"rxe\"\n  [host.pfc]\n  interface_delay_bits = 0\n  response_time_bits = 0\n";
    let mut t = host("r", at_once, &[("eth0", "10.0.0.100/24")], 1500)
        + &switch("sw1", mmu, &[])
        + &link("r.eth0", "sw1.pr", "100G");
    t += &senders_to_r(8, at_once, "size = \"256KiB\"\niters = 4\ntc = 106\n");
    let (_, s) = run_text("hpcc_preset", &t, &[]);
    assert_eq!(s["switches"][0]["lossless_drops"], 0);
    let paused: u64 = (1..=8)
        .map(|i| counter(&s, &format!("h{i}.eth0"), "rx_prio3_pause"))
        .sum();
    assert!(paused > 0);
    let (_, s) = run_text("hpcc_preset_prio0", &t.replace("tc = 106", "tc = 0"), &[]);
    let paused: u64 = (1..=8)
        .map(|i| counter(&s, &format!("h{i}.eth0"), "rx_prio0_pause"))
        .sum();
    assert_eq!(paused, 0);
    // DSCP 56: priority 7, unaccounted too.
    let (_, s) = run_text("hpcc_preset_prio7", &t.replace("tc = 106", "tc = 224"), &[]);
    let paused: u64 = (1..=8)
        .map(|i| counter(&s, &format!("h{i}.eth0"), "rx_prio7_pause"))
        .sum();
    assert_eq!(paused, 0);
    // NICs that react as 802.3 allows: 37,500 bytes of headroom against
    // the 68,736 each port needs.
    let real = t.replace(at_once, RXE);
    let (_, s) = run_text("hpcc_preset_real_nics", &real, &[]);
    let sw = &s["switches"][0];
    assert!(sw["lossless_drops"].as_u64().unwrap() > 0, "{sw}");
    assert_eq!(sw["headroom"][0]["headroom_bytes"], 37_500);
    assert_eq!(sw["headroom"][0]["needed_bytes"], 68_736);
}

/// `headroom = "auto"` holds what arrives after XOFF, with 4200-byte MTUs
/// and PFC alone (ECN off) on a leaf-spine whose ring flows collide on
/// the uplinks: no lossless frame is ever dropped. The buffer used to
/// charge the frame that crosses the threshold, and the one arriving when
/// a filling pool lowered it, to headroom whole: one frame more than the
/// formula sizes for, 10 discards on seed 1.
#[test]
fn auto_headroom_drops_nothing_with_jumbo_frames_and_pfc_alone() {
    for seed in ["1", "6"] {
        let (_, s) = run_scenario(
            "nccl_ecmp",
            &format!("ecmp_pfc_alone_{seed}"),
            &[
                &format!("seed={seed}"),
                "topology.switch.ecn.priorities=[0]",
            ],
        );
        for sw in s["switches"].as_array().unwrap() {
            assert_eq!(sw["lossless_drops"], 0, "seed {seed}: {}", sw["name"]);
        }
        let pauses: u64 = s["counters"]
            .as_object()
            .unwrap()
            .values()
            .map(|c| c["tx_prio4_pause"].as_u64().unwrap_or(0))
            .sum();
        assert!(
            pauses > 100,
            "seed {seed}: PFC must be at work ({pauses} pauses)"
        );
    }
}
