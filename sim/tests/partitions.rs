//! A run split into parts (`[sim] partitions`, two or more) writes the serial run's
//! outputs, byte for byte: every file of the run directory (the pcaps,
//! the CSVs, the plots, the counters) and summary.json but for its wall
//! time. Events of equal time are ordered by their origin component and its
//! own count (`rocesim_model::engine`), which no cut changes; a frame that
//! crosses the cut keeps its key.

mod common;

use std::path::Path;

use common::{files_below, run, scenario, tmp};
use serde_json::Value;

/// Every file of run directory `dir`, by its path below it; summary.json
/// without `wall_s`, the one output that differs between identical runs.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = files_below(dir)
        .into_iter()
        .map(|p| {
            let name = p.display().to_string();
            let mut bytes = std::fs::read(dir.join(&p)).unwrap();
            if name == "summary.json" {
                let mut v: Value = serde_json::from_slice(&bytes).unwrap();
                let wall = v.as_object_mut().unwrap().remove("wall_s");
                assert!(wall.is_some(), "summary.json has a wall_s");
                bytes = serde_json::to_vec_pretty(&v).unwrap();
            }
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Runs shipped scenario `name` serial and split into each of `parts`
/// (with `sets`); every run directory holds the serial one's files, byte
/// for byte.
fn alike(name: &str, sets: &[&str], parts: &[&str]) {
    let mut dirs = Vec::new();
    for parts in std::iter::once(&"1").chain(parts) {
        let out = tmp(&format!("partitions-{name}-{parts}"));
        let mut all = sets.to_vec();
        let p = format!("sim.partitions={parts}");
        all.push(&p);
        let o = run(&scenario(name), &out, &all);
        assert!(
            o.status.success(),
            "{name} with {parts} part(s): {}",
            String::from_utf8_lossy(&o.stderr)
        );
        dirs.push(out);
    }
    let serial = outputs(&dirs[0]);
    let names = |o: &[(String, Vec<u8>)]| o.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert!(serial.len() > 5, "{name}: {:?}", names(&serial));
    for (dir, n) in dirs[1..].iter().zip(parts) {
        let split = outputs(dir);
        assert_eq!(names(&serial), names(&split), "{name}: the same files");
        for ((file, a), (_, b)) in serial.iter().zip(&split) {
            assert!(a == b, "{name}: {file} differs between 1 and {n} parts");
        }
    }
}

/// The fabrics of the capacity chapter and the reference's fat-tree
/// (shortened): thousands of equal-time arrivals, frames crossing the cut
/// every window, PFC and ECN across it.
#[test]
fn split_fabrics_write_the_serial_runs_outputs() {
    let short = ["traffic.0.duration=200us"];
    alike("leaf_spine_capacity", &short, &["2", "3", "4"]);
    alike("fat_tree_websearch_generated", &short, &["2", "4"]);
    alike("ecmp", &[], &["2"]);
}

/// Incasts, with DCQCN and HPCC's telemetry on the frames that cross the
/// cut (a star's senders spread over the parts after the first), and
/// bonds whose slaves the taps record.
#[test]
fn split_incasts_and_bonds_write_the_serial_runs_outputs() {
    alike("dcqcn_convergence", &[], &["2", "4"]);
    alike("hpcc_16to1", &[], &["2", "4"]);
    alike("hpcc_2to1", &[], &["2", "3"]);
    alike("lag_hash", &[], &["2"]);
}
