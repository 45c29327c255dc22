//! A finished flow's QPs give back their transport state
//! (`rocesim_model::world::retire`): every output must be what it was
//! when they kept it. Each scenario here runs both ways and every file of
//! the two run directories must match, and the QPs that retired must be
//! the flows' QPs of the run that let them.

use std::path::Path;

use roce_testkit::repo::{files_below, root};

use crate::parallel::Simulation;
use crate::scenario;
use crate::scenario::BuildOptions;

/// A k = 4 fat-tree with 64 KB flows from every host to every other: ECN
/// marks (low thresholds) make the receivers' NICs send CNP frames to the
/// senders, which may still be on their way when a flow completes, and
/// the host links lose frames, so some pairs keep a frame that never
/// arrives (and never retire) and some retransmit.
const LOSSY_FAT_TREE: &str = r#"
name = "lossy"
seed = 3
[sim]
sample_interval = "10us"
[topology]
kind = "fat-tree"
k = 4
host_link = { rate = "100Gbps", delay = "1us" }
link_loss = 0.002
[topology.host.dcqcn]
[topology.switch.ecn]
priorities = [0, 1, 2, 3, 4, 5, 6]
kmin = { "100Gbps" = "5KB" }
kmax = { "100Gbps" = "50KB" }
pmax = { "100Gbps" = 0.5 }
[[traffic]]
pattern = "all-to-all"
size = "64KB"
"#;

/// Runs `scenario` (a shipped one or [`LOSSY_FAT_TREE`]) with `sets` into
/// `dir`, its finished flows' QPs retired unless `keep`; returns how many
/// QPs retired and how many flows the run had.
fn run_into(scenario: &str, sets: &[&str], dir: &Path, keep: bool) -> (usize, usize) {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = match scenario {
        "lossy" => scenario::load_str(Path::new("lossy.toml"), LOSSY_FAT_TREE.to_string(), &sets),
        _ => scenario::load(
            &root().join("scenarios").join(format!("{scenario}.toml")),
            &sets,
        ),
    }
    .expect("scenario loads");
    std::fs::create_dir_all(dir).unwrap();
    let mut sim = Simulation::build(&loaded.scenario, "t", &BuildOptions::default()).unwrap();
    if keep {
        sim.each_world(|w| w.keep_finished_qps());
    }
    let done = sim.run(&mut ());
    done.check_invariants().unwrap();
    let mut w = done.world;
    w.finish().unwrap();
    super::outputs::write_every_output(&loaded.name, &w, dir);
    let retired = w.qps().filter(|q| q.retired()).count();
    (retired, w.flows().len())
}

/// Runs `scenario` both ways; returns how many QPs retired, of how many
/// flows.
fn same_outputs(scenario: &str, sets: &[&str]) -> (usize, usize) {
    let base =
        std::env::temp_dir().join(format!("rocesim-retire-{}-{scenario}", std::process::id()));
    let (freed, kept) = (base.join("freed"), base.join("kept"));
    let (retired, flows) = run_into(scenario, sets, &freed, false);
    assert_eq!(run_into(scenario, sets, &kept, true), (0, flows));
    let names = files_below(&freed);
    assert_eq!(names, files_below(&kept), "{scenario}: the same files");
    for n in &names {
        let (a, b) = (
            std::fs::read(freed.join(n)).unwrap(),
            std::fs::read(kept.join(n)).unwrap(),
        );
        assert!(a == b, "{scenario} {sets:?}: {} differs", n.display());
    }
    std::fs::remove_dir_all(&base).unwrap();
    (retired, flows)
}

/// Lost frames, retransmissions, CNP frames; serial, cut in two and in
/// four.
#[test]
fn lossy_flows_give_the_same_outputs_retired() {
    let (retired, flows) = same_outputs("lossy", &[]);
    assert_eq!(flows, 16 * 15);
    // Both ends of a flow retire together; the flows that lost a frame
    // for good keep theirs.
    assert_eq!(retired % 2, 0);
    assert!(
        retired > flows && retired < 2 * flows,
        "{retired} QPs of {flows} flows retired"
    );
    // Split in two and in four: the same pairs retire, those whose ends
    // are in different parts through their notes (`retire::Note`).
    for parts in ["sim.partitions=2", "sim.partitions=4"] {
        let (split, _) = same_outputs("lossy", &[parts]);
        assert_eq!(split, retired, "{parts}");
    }
}

/// ACK-clocked congestion control (DCTCP's marked ACKs, HPCC's telemetry
/// echoed on ACKs) and DCQCN with its flag on the ACK, on a leaf-spine's
/// WebSearch flows, some of which are still running at the end.
#[test]
fn websearch_flows_give_the_same_outputs_retired() {
    for cc in ["dctcp", "hpcc", "dcqcn"] {
        let algorithm = format!("topology.host.cc.algorithm={cc}");
        let sets = [
            algorithm.as_str(),
            "traffic.0.duration=60us",
            "sim.stop_at=150us",
        ];
        let (retired, flows) = same_outputs("cc_compare", &sets);
        assert!(
            retired > 0 && retired < 2 * flows,
            "{cc}: {retired} QPs of {flows} flows retired"
        );
    }
}
