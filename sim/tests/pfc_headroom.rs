//! PFC headroom as a planner sizes it, now that a pause takes effect only
//! after the receiving port's interface delay and response time: too
//! little headroom drops lossless frames, the headroom `rocesim check`
//! recommends drops none; cable lengths; PFC enabled per priority on the
//! receiving side; 802.3x and PFC on one port refused.

mod common;

use common::*;
use serde_json::Value;

/// pfc_incast's need per switch port, by hand from the 802.1Qbb delay
/// model's component sum (the receiver's frame in flight, the PFC frame,
/// the cable both ways, the peer's interface delay and response, the
/// sender's frame in flight), every link 100 Gb/s (10 ps a bit) and 1 us,
/// every NIC MTU 1500, the NICs' defaults IEEE 802.3's:
///
/// ```text
///   frame at the switch  (1500 + 18 + 20) × 8 =  12,304 bits
///   PFC frame            (64 + 8 + 12) × 8    =     672
///   cable, both ways     2 × 1 us / 10 ps     = 200,000
///   NIC interface delay  (100G)               = 122,880
///   NIC pause response   394 quanta × 512     = 201,728
///   frame at the NIC     (1500 + 18 + 20) × 8 =  12,304
///                                               549,888 bits = 68,736 bytes
/// ```
const INCAST_NEED: u64 = 68_736;

const HEADROOM_30KB: [&str; 2] = [
    "switch.sw1.mmu.headroom=30KB",
    "switch.sw2.mmu.headroom=30KB",
];

fn lossless_drops(s: &Value) -> Vec<u64> {
    s["switches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sw| sw["lossless_drops"].as_u64().unwrap())
        .collect()
}

/// `rocesim check` with `sets`: its stdout and stderr.
fn check(file: &std::path::Path, sets: &[&str]) -> (String, String) {
    let mut c = bin();
    c.arg("check").arg(file);
    for s in sets {
        c.arg("--set").arg(s);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// The bytes a warning recommends: `headroom = "<n>B" covers them all`.
fn recommended(warning: &str) -> u64 {
    let tail = warning
        .split("headroom = \"")
        .nth(2)
        .unwrap_or_else(|| panic!("no recommendation in {warning:?}"));
    tail.split('B').next().unwrap().parse().unwrap()
}

/// The issue's test: with 30 KB of headroom on every switch, pfc_incast's
/// lossless priority drops; `rocesim check` says so and recommends the
/// need computed above; with that, nothing is dropped.
#[test]
fn thirty_kb_of_headroom_drops_lossless_frames_and_the_recommended_drops_none() {
    let (out, err) = check(&scenario("pfc_incast"), &HEADROOM_30KB);
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 2, "one per switch: {err}");
    for w in &warnings {
        assert!(w.contains("lossless frames will be dropped"), "{w}");
        assert_eq!(recommended(w), INCAST_NEED, "{w}");
    }
    // Every lossless (port, priority), short by 68,736 − 30,000.
    for p in [
        "sw1.pr", "sw1.p1", "sw1.p4", "sw1.up", "sw2.p5", "sw2.p8", "sw2.up",
    ] {
        let row = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{p} ")))
            .unwrap_or_else(|| panic!("no row for {p}:\n{out}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[1], "3", "{row}");
        assert_eq!(
            cells[cells.len() - 3..],
            ["30000", "68736", "38736"],
            "{row}"
        );
    }
    // The run, cut at 1 ms: the first burst already overflows.
    let mut sets = HEADROOM_30KB.to_vec();
    sets.push("sim.stop_at=1ms");
    let (_, s) = run_scenario("pfc_incast", "headroom_30kb", &sets);
    let drops = lossless_drops(&s);
    assert!(drops.iter().all(|&d| d > 0), "{drops:?}");
    let lossless_discards: u64 = s["counters"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|c| c.get("tx_prio3_lossless_discards"))
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(lossless_discards, drops.iter().sum::<u64>());
    let row = &s["switches"][0]["headroom"][0];
    assert_eq!(
        (&row["port"], &row["headroom_bytes"], &row["needed_bytes"]),
        (
            &Value::from("sw1.pr"),
            &Value::from(30_000),
            &Value::from(INCAST_NEED)
        )
    );

    // What check recommended: nothing dropped, nothing retransmitted.
    let h = format!("{INCAST_NEED}B");
    let sets = [
        format!("switch.sw1.mmu.headroom={h}"),
        format!("switch.sw2.mmu.headroom={h}"),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let (out, err) = check(&scenario("pfc_incast"), &sets);
    assert!(!err.contains("warning"), "{err}");
    assert!(out.contains("68736     68736        0"), "{out}");
    let (_, s) = run_scenario("pfc_incast", "headroom_recommended", &sets);
    assert_eq!(lossless_drops(&s), [0, 0]);
    for c in clients(&s) {
        assert_eq!(c["status"], "success", "{c}");
        assert_eq!(c["retransmitted_packets"], 0, "{c}");
    }
}

/// The sum bounds what the model needs, with little to spare: the
/// senders' RoCE frames (1,106 wire bytes at a 1500-byte MTU) are smaller
/// than the 1,538 it budgets, and the buffer holds no preamble or gap.
/// pfc_incast stops dropping at 64,936 bytes of headroom (64,935 drop),
/// 5.5 % under the 68,736 of the sum (the PFC chapter quotes both).
#[test]
fn the_need_is_a_close_bound() {
    let at = |bytes: u64, tag: &str| {
        let sets = [
            format!("switch.sw1.mmu.headroom={bytes}B"),
            format!("switch.sw2.mmu.headroom={bytes}B"),
        ];
        let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
        lossless_drops(&run_scenario("pfc_incast", tag, &sets).1)
            .iter()
            .sum::<u64>()
    };
    assert_eq!(at(64_936, "headroom_64936"), 0);
    assert!(at(64_935, "headroom_64935") > 0);
}

/// Two hosts and a lossless switch; their links as `link_keys` says.
fn cabled(link_keys: &str) -> String {
    two_hosts(1500)
        + &switch(
            "sw1",
            "  [switch.mmu]\n  lossless = [3]\n  headroom = \"auto\"\n",
            &[],
        )
        + &link_with("a.eth0", "sw1.pa", "100G", link_keys)
        + &link_with("b.eth0", "sw1.pb", "100G", link_keys)
}

/// A cable's length gives its propagation at 5 ns a metre. 100 m of
/// 100G with 1500-byte MTUs is the worked example of the delay model:
/// 12,304 + 672 + 2 × 500 ns / 10 ps (100,000) + 122,880 + 201,728 +
/// 12,304 = 449,888 bits = 56,236 bytes.
#[test]
fn a_cable_length_sizes_the_headroom() {
    let dir = tmp("headroom_cable");
    let file = dir.join("cable.toml");
    std::fs::write(&file, cabled("length = \"100m\"\n")).unwrap();
    let (out, err) = check(&file, &[]);
    assert!(!err.contains("warning"), "{err}");
    let row = out.lines().find(|l| l.starts_with("sw1.pa ")).unwrap();
    assert!(row.contains("500.000ns"), "{row}");
    assert!(row.ends_with("56236     56236        0"), "{row}");
}

/// `delay` and `length` on one link: refused at the key, with the line.
#[test]
fn a_link_with_a_delay_and_a_length_is_refused() {
    let t = cabled("delay = \"1us\"\nlength = \"100m\"\n");
    let dir = tmp("headroom_both");
    let file = dir.join("both.toml");
    std::fs::write(&file, &t).unwrap();
    let o = bin().arg("check").arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = t.lines().position(|l| l.starts_with("length")).unwrap() + 1;
    assert!(
        err.contains(&format!(
            "both.toml:{line}:1: key `link[0].length`: a link has a `delay` or a `length`, not both"
        )),
        "{err}"
    );
}

/// The reaction keys: a per-speed table without the port's speed, and a
/// reaction longer than any pause, refused at the key.
#[test]
fn reaction_keys_are_checked_at_their_key() {
    let dir = tmp("headroom_keys");
    let file = dir.join("keys.toml");
    for (keys, says) in [
        (
            "  response_time_bits = { \"25Gbps\" = 40960 }\n",
            "key `switch[0].mmu.response_time_bits`: has no value for 100Gbps, the speed of port `sw1.pa`",
        ),
        (
            "  interface_delay_bits = 40000000\n",
            "key `switch[0].mmu.interface_delay_bits`: 40000000 bit times at 100Gbps is longer than the longest pause",
        ),
    ] {
        let t = cabled("delay = \"1us\"\n").replace(
            "  headroom = \"auto\"\n",
            &format!("  headroom = \"auto\"\n{keys}"),
        );
        std::fs::write(&file, &t).unwrap();
        let o = bin().arg("check").arg(&file).output().unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{err}");
    }
}

/// 802.3x PAUSE and PFC on one NIC: refused at `pause`.
#[test]
fn pause_and_pfc_on_one_port_is_refused() {
    let t = two_hosts(1500).replacen(
        "name = \"b\"\n",
        "name = \"b\"\n  [host.pfc]\n  priorities = [3]\n  pause = \"global\"\n",
        1,
    ) + &link("a.eth0", "b.eth0", "100G");
    let dir = tmp("headroom_pause_pfc");
    let file = dir.join("both.toml");
    std::fs::write(&file, &t).unwrap();
    let o = bin().arg("check").arg(&file).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let line = t.lines().position(|l| l.contains("pause = ")).unwrap() + 1;
    assert!(
        err.contains(&format!(
            "both.toml:{line}:3: key `host[1].pfc.pause`: 802.3x PAUSE (pause = \"global\") and PFC on priorities [3] on one port"
        )),
        "{err}"
    );
}

/// Senders whose NICs have PFC on priority 4 only (`[host.pfc]
/// priorities = [4]`) count the switch's priority-3 pauses and ignore
/// them, as mlx5 does for a priority not in its `pfc_en`: they are never
/// held back, and the switch drops lossless frames (its headroom was sized
/// for senders that stop). ConnectX NICs without DCQCN send at line rate:
/// 4:1 into one port; the first millisecond shows it.
#[test]
fn a_nic_ignores_pauses_for_priorities_it_has_no_pfc_on() {
    let cx = "profile = \"connectx\"\ntrust = \"dscp\"\n  [host.dcqcn]\n  enable = false\n";
    let nic = format!("{cx}  [host.pfc]\n  priorities = [4]\n");
    let mut t = host("r", cx, &[("eth0", "10.0.0.100/24")], 1500)
        + &switch(
            "sw1",
            "buffer = \"1MiB\"\n  [switch.mmu]\n  lossless = [3]\n  headroom = \"auto\"\n",
            &[],
        )
        + &link("r.eth0", "sw1.pr", "100G");
    t += &senders_to_r(4, &nic, "size = \"1MiB\"\niters = 4\ntc = 106\n");
    let (_, s) = run_text("pfc_not_enabled", &t, &["sim.stop_at=1ms"]);
    let c = |p: &str, n: &str| s["counters"][p][n].as_u64().unwrap();
    for i in 1..=4 {
        let nic = format!("h{i}.eth0");
        assert!(c(&nic, "rx_prio3_pause") > 0, "{nic} got pauses");
        assert_eq!(c(&nic, "rx_prio3_pause_transition"), 0, "{nic} obeyed none");
        assert_eq!(c(&nic, "rx_prio3_pause_duration"), 0);
    }
    assert!(lossless_drops(&s)[0] > 0, "{}", s["switches"]);
    // The same senders without PFC settings of their own take the
    // switch's priority 3 (DCBX, willing) and obey: nothing dropped.
    let willing = t.replace("  [host.pfc]\n  priorities = [4]\n", "");
    let (_, s) = run_text("pfc_willing", &willing, &["sim.stop_at=1ms"]);
    assert_eq!(lossless_drops(&s), [0]);
    assert!(
        s["counters"]["h1.eth0"]["rx_prio3_pause_duration"]
            .as_u64()
            .unwrap()
            > 0
    );
}
