//! `[output] series = "summary"`: a large fabric's run directory holds the
//! tiers' series, the busiest ports' and those asked for, and the asked
//! hosts' QPs, trees and counters; `all` (a small scenario's default)
//! holds everything. Checked on the benchmark fabric at k = 4 (16 hosts,
//! 20 switches), summary against the all-series run of the same seed.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::*;

fn bench() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fat_tree_scale.toml")
}

fn csv(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// A tier's tx, rx and queued bytes at one time, and its ports.
type TierSum<'a> = (u64, u64, u64, BTreeSet<&'a str>);

#[test]
fn summary_series_against_all() {
    let dir = tmp("series_summary");
    let k4 = "topology.k=4";
    let all = dir.join("all");
    run_ok(&bench(), &all, &[k4]);
    let sum = dir.join("summary");
    run_ok(
        &bench(),
        &sum,
        &[
            k4,
            "output.series=summary",
            "output.ports=[\"core3.p1\"]",
            "output.hosts=[\"host3\"]",
        ],
    );
    // 16 hosts: the default is every series and tree.
    assert!(!all.join("tiers.csv").exists());
    assert_eq!(std::fs::read_dir(all.join("sysfs")).unwrap().count(), 16);

    // Summary: one host's tree, its QPs only.
    let trees: Vec<_> = std::fs::read_dir(sum.join("sysfs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(trees, ["host3"]);
    let qps = csv(&sum.join("qps.csv"));
    assert!(!qps.is_empty());
    assert!(qps.iter().all(|r| r[1] == "host3"));
    let qps_all = csv(&all.join("qps.csv"));
    let host3: Vec<_> = qps_all.iter().filter(|r| r[1] == "host3").collect();
    assert_eq!(qps.iter().collect::<Vec<_>>(), host3);

    // ports.csv: the 24 busiest and the one asked for, rows as the full
    // file has them.
    let rows = csv(&sum.join("ports.csv"));
    let names: BTreeSet<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert!(names.contains("core3.p1"));
    assert!(names.len() <= 25 && names.len() >= 24, "{}", names.len());
    let rows_all = csv(&all.join("ports.csv"));
    let kept: Vec<_> = rows_all
        .iter()
        .filter(|r| names.contains(r[1].as_str()))
        .collect();
    assert_eq!(rows.iter().collect::<Vec<_>>(), kept);

    // tiers.csv: each tier's ports summed from the full ports.csv. A k = 4
    // fat-tree: 16 host NICs, 8 edge and 8 aggregation switches of 4
    // ports, 4 core switches of 4.
    let tier_of = |port: &str| match port.split('.').next().unwrap() {
        p if p.starts_with("host") => "hosts",
        p if p.starts_with("edge") => "edge",
        p if p.starts_with("agg") => "aggregation",
        p if p.starts_with("core") => "core",
        p => panic!("{p}"),
    };
    let mut sums: BTreeMap<(u64, &str), TierSum> = BTreeMap::new();
    for r in &rows_all {
        let e = sums
            .entry((r[0].parse().unwrap(), tier_of(&r[1])))
            .or_default();
        e.0 += r[2].parse::<u64>().unwrap();
        e.1 += r[3].parse::<u64>().unwrap();
        e.2 += r[6].parse::<u64>().unwrap();
        e.3.insert(&r[1]);
    }
    let tiers = csv(&sum.join("tiers.csv"));
    assert_eq!(tiers.len(), sums.len());
    for t in &tiers {
        let (tx, rx, queued, ports) = &sums[&(t[0].parse().unwrap(), t[1].as_str())];
        let count = match t[1].as_str() {
            "hosts" | "core" => 16,
            _ => 32,
        };
        assert_eq!(t[2].parse::<usize>().unwrap(), count, "{t:?}");
        assert_eq!(ports.len(), count);
        assert_eq!(t[3].parse::<u64>().unwrap(), *tx, "{t:?}");
        assert_eq!(t[4].parse::<u64>().unwrap(), *rx, "{t:?}");
        assert_eq!(t[7].parse::<u64>().unwrap(), *queued, "{t:?}");
    }
    // The traffic reached the core.
    assert!(tiers.iter().any(|t| t[1] == "core" && t[3] != "0"));

    // counters.prom: the kept ports' and host3's series only.
    let prom = std::fs::read_to_string(sum.join("counters.prom")).unwrap();
    let nodes: BTreeSet<&str> = names
        .iter()
        .map(|n| n.split('.').next().unwrap())
        .chain(["host3"])
        .collect();
    let labelled: BTreeSet<&str> = prom
        .lines()
        .filter_map(|l| l.split("host=\"").nth(1)?.split('"').next())
        .collect();
    assert!(labelled.contains("host3") && labelled.contains("core3"));
    assert!(labelled.is_subset(&nodes), "{labelled:?} {nodes:?}");
    let prom_all = std::fs::read_to_string(all.join("counters.prom")).unwrap();
    assert!(prom.len() < prom_all.len() / 2);
    // summary.json is the same but for its wall-clock time.
    let strip = |p: &Path| {
        std::fs::read_to_string(p.join("summary.json"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("  \"wall_s\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&all), strip(&sum));
}

/// A name `[output]` asks for that the scenario lacks is an error naming
/// the key, before anything is run.
#[test]
fn unknown_output_port_is_refused() {
    let dir = tmp("series_unknown");
    let o = run(
        &bench(),
        &dir.join("run"),
        &[
            "topology.k=4",
            "output.series=summary",
            "output.ports=[\"core9.p1\"]",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("output.ports[0]: no port `core9.p1`"), "{err}");
    assert!(!dir.join("run").exists());
    // rocesim check says the same.
    let o = bin()
        .arg("check")
        .arg(bench())
        .args([
            "--set",
            "topology.k=4",
            "--set",
            "output.hosts=[\"host16\"]",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("output.hosts[0]: no host `host16`"), "{err}");
}

/// The default: every series up to 512 hosts (k = 12: 432), a summary
/// beyond (k = 14: 686); `output.series` chooses either way.
#[test]
fn large_fabric_threshold() {
    let all = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let sc = rocesim::scenario::load(&bench(), &sets).unwrap().scenario;
        sc.output.all_series(sc.hosts.len())
    };
    assert!(all(&["topology.k=12"]));
    assert!(!all(&["topology.k=14"]));
    assert!(all(&["topology.k=14", "output.series=all"]));
    assert!(!all(&["topology.k=4", "output.series=summary"]));
    let o = run(
        &bench(),
        &tmp("series_bad").join("run"),
        &["topology.k=4", "output.series=some"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("series"), "{err}");
}
