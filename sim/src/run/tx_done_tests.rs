//! Leaving out the `TxDone` events that would find nothing to send
//! (`World::schedule_tx_done`) must change nothing but the event count:
//! each scenario here runs both ways and every file of the two run
//! directories (pcaps, CSVs, counters, sysfs, plots, summary) must match,
//! `summary.json` up to its `events` line.

use std::path::Path;

use roce_testkit::repo::{files_below, root};

use crate::scenario;
use crate::world::{BuildOptions, World};

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

/// Runs `scenario` (a shipped one, or [`SLOW`]) with `sets` into `dir`,
/// every `TxDone` scheduled if `eager`; returns the number of events.
fn run_into(scenario: &str, sets: &[&str], dir: &Path, eager: bool) -> u64 {
    let path = root().join("scenarios").join(format!("{scenario}.toml"));
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = if scenario == "slow" {
        scenario::load_str(Path::new("slow.toml"), SLOW.to_string(), &sets)
    } else {
        scenario::load(&path, &sets)
    }
    .expect("scenario loads");
    std::fs::create_dir_all(dir).unwrap();
    let opts = BuildOptions {
        tap_dir: Some(dir.to_path_buf()),
    };
    let mut w = World::build(&loaded.scenario, &loaded.name, &opts).expect("builds");
    if eager {
        w.schedule_every_tx_done();
    }
    w.run(&mut ());
    w.check_invariants().unwrap();
    w.finish().unwrap();
    super::write_outputs(&w, dir, 0.0, None).unwrap();
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

/// A port's `TxDone` alone in a sample interval.
#[test]
fn slow_links_sampled_finely_are_the_same_without_idle_tx_dones() {
    same_outputs("slow", &[]);
}
