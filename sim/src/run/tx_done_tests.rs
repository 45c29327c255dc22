//! Leaving out the `TxDone` events that would find nothing to send
//! (`World::schedule_tx_done`) must change nothing but the event count:
//! each scenario here runs both ways and every file of the two run
//! directories (pcaps, CSVs, counters, sysfs, plots, summary) must match,
//! `summary.json` up to its `events` line.

use std::path::Path;

use roce_testkit::repo::{files_below, root};

use crate::scenario;
use crate::scenario::{BuildOptions, build_world};

/// Slow links sampled every microsecond: a frame is on the wire for 80
/// us, so a switch port's `TxDone` is often the only thing that happens
/// in a sample interval, which a left-out one must still count as.
const SLOW: &str = r#"
name = "slow"
[sim]
sample_interval = "1us"
[[host]]
name = "a"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.1/24"
[[host]]
name = "b"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.2/24"
[[switch]]
name = "sw"
[[link]]
a = "a.eth0"
b = "sw.p1"
rate = "100Mbps"
delay = "3us"
[[link]]
a = "b.eth0"
b = "sw.p2"
rate = "100Mbps"
delay = "3us"
[[workload]]
tool = "ib_write_bw"
client = "a.eth0"
server = "b"
size = "4KiB"
iters = 3
"#;

/// One QP paced by its rate limiter to a quarter of a point-to-point
/// link: 10 MiB in 10,240 frames of 1 KiB, acknowledged every 256.
const PACED: &str = r#"
name = "paced"
[[host]]
name = "a"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.1/24"
[[host]]
name = "b"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.2/24"
[[link]]
a = "a.eth0"
b = "b.eth0"
rate = "100Gbps"
delay = "1us"
[[workload]]
tool = "ib_write_bw"
client = "a.eth0"
server = "b"
size = "1MiB"
iters = 10
rate_limit = "25Gbps"
"#;

/// Runs `scenario` (a shipped one, [`SLOW`] or [`PACED`]) with `sets` into `dir`,
/// every `TxDone` scheduled if `eager`; returns the number of events.
fn run_into(scenario: &str, sets: &[&str], dir: &Path, eager: bool) -> u64 {
    let path = root().join("scenarios").join(format!("{scenario}.toml"));
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let inline = match scenario {
        "slow" => Some(SLOW),
        "paced" => Some(PACED),
        _ => None,
    };
    let loaded = if let Some(text) = inline {
        scenario::load_str(
            Path::new(&format!("{scenario}.toml")),
            text.to_string(),
            &sets,
        )
    } else {
        scenario::load(&path, &sets)
    }
    .expect("scenario loads");
    std::fs::create_dir_all(dir).unwrap();
    let opts = BuildOptions {
        tap_dir: Some(dir.to_path_buf()),
    };
    let mut w = build_world(&loaded.scenario, &opts).expect("builds");
    if eager {
        w.schedule_every_tx_done();
    }
    w.run(loaded.scenario.sim.stop_at.map(|d| d.0), &mut ());
    w.check_invariants().unwrap();
    w.finish().unwrap();
    super::outputs::write_every_output(&loaded.name, &w, dir);
    w.events()
}

fn same_outputs(scenario: &str, sets: &[&str]) {
    let base =
        std::env::temp_dir().join(format!("rocesim-txdone-{}-{scenario}", std::process::id()));
    let (lazy, eager) = (base.join("lazy"), base.join("eager"));
    let lazy_events = run_into(scenario, sets, &lazy, false);
    let eager_events = run_into(scenario, sets, &eager, true);
    // The slow links' frames all span a sample tick, which schedules
    // their `TxDone`s: none is left out there.
    assert!(
        lazy_events < eager_events || scenario == "slow",
        "{scenario}: {lazy_events} events left out nothing ({eager_events} eager)"
    );
    let names = files_below(&lazy);
    assert_eq!(names, files_below(&eager), "{scenario}: the same files");
    let without_events = |text: String| {
        text.lines()
            .filter(|l| !l.trim_start().starts_with("\"events\": "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for n in &names {
        let (a, b) = (
            std::fs::read(lazy.join(n)).unwrap(),
            std::fs::read(eager.join(n)).unwrap(),
        );
        if n == Path::new("summary.json") {
            let text = |v: Vec<u8>| without_events(String::from_utf8(v).unwrap());
            assert_eq!(text(a), text(b), "{scenario}: summary.json differs");
        } else {
            assert!(a == b, "{scenario}: {} differs", n.display());
        }
    }
    std::fs::remove_dir_all(&base).unwrap();
}

/// Pauses both ways, the PFC watchdog dropping, a receiver that stops.
#[test]
fn pfc_storm_is_the_same_without_idle_tx_dones() {
    same_outputs("pfc_storm", &[]);
}

/// A slave's link going down under traffic (frames lost on the wire,
/// queues drained), the bond failing over, gratuitous ARP.
#[test]
fn failover_is_the_same_without_idle_tx_dones() {
    same_outputs("failover", &[]);
}

/// Loss, retransmission timers and a run that ends on a timer.
#[test]
fn retry_exceeded_is_the_same_without_idle_tx_dones() {
    same_outputs("retry_exceeded", &[]);
}

/// DCQCN pacing (the sampled per-QP rates), and a run cut at `stop_at`
/// while frames are on the wire.
#[test]
fn dcqcn_is_the_same_without_idle_tx_dones_also_when_cut_short() {
    same_outputs("dcqcn_convergence", &[]);
    same_outputs("dcqcn_convergence", &["sim.stop_at=1234567ns"]);
}

/// A switch port running ETS (its scheduler's credit moves with each frame
/// it sends, whatever `TxDone` ran), one of its senders paced.
#[test]
fn ets_is_the_same_without_idle_tx_dones() {
    same_outputs(
        "ets_shares",
        &["sim.stop_at=300us", "workload.w2.rate_limit=20Gbps"],
    );
}

/// A port's `TxDone` alone in a sample interval.
#[test]
fn slow_links_sampled_finely_are_the_same_without_idle_tx_dones() {
    same_outputs("slow", &[]);
}

/// A QP its rate limiter holds back leaves the NIC's active list when its
/// frame starts, with a wake-up for when it may send again: the port's
/// `TxDone`, which would find it not ready, is left out. Each paced frame
/// then costs two events (the wake-up that sends it, its arrival), where
/// it cost three.
#[test]
fn a_paced_frame_costs_its_wake_up_and_its_arrival() {
    let dir = std::env::temp_dir().join(format!("rocesim-paced-{}", std::process::id()));
    let events = run_into("paced", &[], &dir.join("lazy"), false);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("lazy/summary.json")).unwrap()).unwrap();
    let client = &summary["qps"][0];
    let frames = client["tx_packets"].as_u64().unwrap();
    assert_eq!(frames, 10 * 1024, "1 MiB in 1 KiB frames, 10 times");
    // Paced, not slowed: 1 KiB of payload in 1,106 bytes of wire time
    // (Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble and gap) at 25 Gb/s
    // is 23.15 Gb/s.
    let goodput = client["goodput_gbps"].as_f64().unwrap();
    assert!((23.0..=23.2).contains(&goodput), "goodput {goodput} Gb/s");
    let per_frame = events as f64 / frames as f64;
    assert!(
        (2.0..2.1).contains(&per_frame),
        "{events} events for {frames} paced frames: {per_frame:.3} each"
    );
    // The same outputs with every `TxDone` in the queue.
    same_outputs("paced", &[]);
    std::fs::remove_dir_all(&dir).unwrap();
}
