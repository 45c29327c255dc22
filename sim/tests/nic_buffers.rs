//! ConnectX receive buffers end to end (`scenarios/nic_buffers.toml`): a
//! host that drains its NIC at half the link rate, priority 3 (PFC) in
//! buffer 1 and priority 0 in the lossy buffer 0. The lossless buffer
//! pauses its own priority and loses nothing; the lossy one is never
//! paused and drops; the driver's thresholds and its refusals show in
//! `rocesim check`.

mod common;

use common::*;

/// `rocesim check` on the shipped scenario with `sets`: exit code, stdout,
/// stderr.
fn check(sets: &[&str]) -> (Option<i32>, String, String) {
    let mut c = bin();
    c.current_dir(repo())
        .args(["check", "scenarios/nic_buffers.toml"]);
    for s in sets {
        c.args(["--set", s]);
    }
    let o = c.output().unwrap();
    (
        o.status.code(),
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// The table: with `cable_len = 200` at 100G and MTU 1500 the driver's
/// headroom is (301 + 216 x 200 / 100) x 100 + 272 x 1500 / 100 = 733 x
/// 100 + 4,080 = 77,380 bytes; buffer 1's XOFF threshold 130,944 - 77,380
/// = 53,564, 418 whole cells = 53,504; XON 53,564 - 9,216 = 44,348, 346
/// cells = 44,288. Buffer 0 holds the seven other priorities, lossy.
#[test]
fn check_prints_the_drivers_buffer_table() {
    let (code, out, err) = check(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(
            "r.eth0       1  130944              3    3      200 m  1500   77380      53504     44288"
        ),
        "{out}"
    );
    assert!(
        out.contains("r.eth0       0  130944  0,1,2,4,5,6,7    -          -     -       -          -         -"),
        "{out}"
    );
    // The NIC's headroom row: 130,944 - 53,504 = 77,440 above XOFF, more
    // than the 68,736 sw1.pr may still send.
    assert!(
        out.contains(
            "r.eth0         3  100Gbps      1.000us    324608 bits       77440     68736        0"
        ),
        "{out}"
    );
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn the_lossless_buffer_pauses_its_priority_and_the_lossy_one_drops() {
    let (dir, s) = run_scenario("nic_buffers", "nic_buffers", &[]);
    let r = |n: &str| counter(&s, "r.eth0", n);
    // Buffer 1 crossed XOFF: r paused priority 3 on sw1.pr, which got
    // every frame, and priority 3 lost nothing at the NIC or the switch.
    assert!(r("tx_prio3_pause") > 0);
    assert_eq!(counter(&s, "sw1.pr", "rx_prio3_pause"), r("tx_prio3_pause"));
    assert!(counter(&s, "sw1.pr", "rx_prio3_pause_duration") > 0);
    assert_eq!(r("rx_prio3_discards"), 0);
    assert_eq!(s["switches"][0]["lossless_drops"], 0);
    // Priority 0 is never paused; the NIC drops it, and every discard is
    // one of a priority.
    assert_eq!(
        s["counters"]["r.eth0"]["tx_prio0_pause"]
            .as_u64()
            .unwrap_or(0),
        0
    );
    assert_eq!(counter(&s, "sw1.pr", "rx_prio0_pause"), 0);
    assert!(r("rx_prio0_discards") > 1000, "{}", r("rx_prio0_discards"));
    let per_prio: u64 = (0..8).map(|p| r(&format!("rx_prio{p}_discards"))).sum();
    assert_eq!(r("rx_discards_phy"), per_prio);
    assert!(r("rx_buffer_passed_thres_phy") > 0);
    // a's QP retransmitted nothing; b's recovered its drops.
    let q = |host: &str| {
        clients(&s)
            .into_iter()
            .find(|q| q["host"] == host)
            .unwrap()
            .clone()
    };
    assert_eq!(q("a")["retransmitted_packets"], 0);
    assert_eq!(q("a")["status"], "success");
    assert!(q("b")["retransmitted_packets"].as_u64().unwrap() > 0);
    assert_eq!(q("b")["status"], "success");
    // The exporter has the new counters as one metric per name with a
    // priority label.
    let prom = std::fs::read_to_string(dir.join("counters.prom")).unwrap();
    let line = format!(
        "rocesim_ethtool_rx_prio_discards_total{{host=\"r\",device=\"eth0\",priority=\"0\"}} {}",
        r("rx_prio0_discards")
    );
    assert!(prom.contains(&line), "{line}");
}

/// The driver's default cable length, 7 m, on a 1 us (200 m) link: the
/// buffer keeps 35,680 bytes of headroom (35,712 in cells) where sw1.pr may
/// still send 68,736 after the XOFF: `check` warns, and the run drops
/// lossless frames at the NIC, which a retransmits.
#[test]
fn the_default_cable_length_is_short_for_a_long_link() {
    let (code, _, err) = check(&["host.r.pfc.cable_len=7"]);
    assert_eq!(code, Some(0));
    assert!(
        err.contains(
            "`r.eth0`: its receive buffer holds 35712 bytes above XOFF, short of the 68736 its peer may still send"
        ),
        "{err}"
    );
    let (_, s) = run_scenario("nic_buffers", "nic_buffers_7m", &["host.r.pfc.cable_len=7"]);
    assert!(counter(&s, "r.eth0", "rx_prio3_discards") > 0);
    let a = clients(&s).into_iter().find(|q| q["host"] == "a").unwrap();
    assert!(a["retransmitted_packets"].as_u64().unwrap() > 0);
}

/// A lossless buffer smaller than xoff + max_mtu + one cell is refused,
/// as mlx5's update_xoff_threshold refuses it: 77,380 + 9,216 + 128 =
/// 86,724 bytes.
#[test]
fn a_buffer_too_small_for_its_xoff_is_refused_with_the_drivers_rule() {
    let (code, _, err) = check(&["host.r.pfc.buffer_size=[130944,86723]"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "key `host[0].pfc.buffer_size[1]`: NIC `r.eth0` (100Gbps, MTU 1500): buffer 1 (86723 bytes) holds PFC \
             priorities [3] and is not enough for a lossless buffer: the mlx5 driver wants xoff 77380 + max_mtu 9216 \
             + one 128-byte cell = 86724 bytes (port_buffer.c update_xoff_threshold, -ENOMEM)"
        ),
        "{err}"
    );
    let (code, out, err) = check(&["host.r.pfc.buffer_size=[130944,86724]"]);
    assert_eq!(code, Some(0), "{err}");
    // 86,724 → 677 cells (86,656); XOFF 9,344 (73 cells); XON 128.
    assert!(out.contains("r.eth0       1   86656"), "{out}");
    assert!(out.contains("77380       9344       128"), "{out}");
    // The same run refuses it too.
    let dir = tmp("nic_buffers_small");
    let o = run(
        &scenario("nic_buffers"),
        &dir.join("run"),
        &["host.r.pfc.buffer_size=[130944,86723]"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("update_xoff_threshold"));
}
