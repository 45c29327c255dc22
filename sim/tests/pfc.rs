//! PFC on a lossless priority (`[switch.mmu]`): the shipped pfc_incast
//! scenario drops nothing, pauses every upstream hop, and the pause frames
//! in its capture are the 802.1Qbb frames tshark decodes.

mod common;

use common::*;
use roce_testkit::tshark::{fields, tshark};
use serde_json::Value;

fn counter(s: &Value, port: &str, name: &str) -> u64 {
    s["counters"][port][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name} at {port}: {}", s["counters"][port]))
}

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
