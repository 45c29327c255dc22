//! What the run directory reports: simulated time, rates and the sweep's
//! balance columns must describe the traffic, not artefacts of the run.

mod common;

use common::*;
use std::path::{Path, PathBuf};

/// Two hosts on one 100G link; 4 x 1 MiB RDMA WRITEs at RoCE MTU 4096,
/// sampled every 10 us.
fn pair(dir: &Path) -> PathBuf {
    let sc = dir.join("pair.toml");
    std::fs::write(&sc, two_hosts(4200) + &link("a.eth0", "b.eth0", "100Gbps")).unwrap();
    sc
}

const PAIR_SETS: [&str; 3] = [
    "sim.sample_interval=10us",
    "workload.0.size=1MiB",
    "workload.0.iters=4",
];

fn sets<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    PAIR_SETS
        .iter()
        .copied()
        .chain(extra.iter().copied())
        .collect()
}

/// The pair with `extra` sets, run into `run/` of a fresh directory
/// `name`: the directory, the scenario file and summary.json.
fn run_pair(name: &str, extra: &[&str]) -> (PathBuf, PathBuf, serde_json::Value) {
    let dir = tmp(name);
    let sc = pair(&dir);
    let s = run_ok(&sc, &dir.join("run"), &sets(extra));
    (dir, sc, s)
}

/// A `stop_at` far beyond the end of the work does not stretch the run:
/// the QP's ACK timer (67 ms, perftest's timeout 14) is still armed when
/// the work ends, but a pending timer is not activity.
#[test]
fn stop_at_after_the_work_does_not_stretch_the_run() {
    let (dir, sc, s) = run_pair("outputs_stop_at_idle", &["sim.stop_at=50ms"]);
    let t = s["sim_time_ns"].as_u64().unwrap();
    // 4 MiB at 100G is ~340 us on the wire; nowhere near 50 ms.
    assert!(t < 1_000_000, "sim_time_ns {t}");
    let a = port(&s, "a.eth0");
    let gbps = a["tx_gbps"].as_f64().unwrap();
    assert!(gbps > 90.0, "a.eth0 averaged {gbps} Gb/s over {t} ns");
    let csv = std::fs::read_to_string(dir.join("run/ports.csv")).unwrap();
    let last: u64 = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(last, t, "ports.csv runs past the end of the run");

    // Cut while the work is still going, the run lasts exactly stop_at.
    let s = run_ok(&sc, &dir.join("cut"), &sets(&["sim.stop_at=100us"]));
    assert_eq!(s["sim_time_ns"], 100_000);
    assert_eq!(clients(&s)[0]["status"], "running");
}

/// The times of `port`'s rows in a ports.csv.
fn sample_times(csv: &Path, port: &str) -> Vec<u64> {
    std::fs::read_to_string(csv)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| l.contains(&format!(",{port},")))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect()
}

/// The time series keep their resolution whatever timer is left armed at
/// the end: with NCCL's timeout 20 the QP's ACK timer (4.3 s) outlived a
/// 340 us transfer, the sampler ticked on until it fired and halved its
/// resolution to keep under 1000 samples, leaving ports.csv one row for
/// the whole transfer. Idle gaps inside a run (retransmission rounds)
/// cost one row each, at the grid point before activity resumes, so the
/// bursts keep the 10 us grid.
#[test]
fn samples_keep_their_interval_whatever_timer_is_left() {
    let (dir, _, s) = run_pair("outputs_sample_grid", &["workload.0.timeout=20"]);
    let end = s["sim_time_ns"].as_u64().unwrap();
    let times = sample_times(&dir.join("run/ports.csv"), "a.eth0");
    // Every 10 us from 0, then the end of the run.
    let grid: Vec<u64> = (0..).map(|k| k * 10_000).take_while(|&t| t < end).collect();
    assert_eq!(times[..times.len() - 1], grid[..], "{times:?}");
    assert_eq!(*times.last().unwrap(), end);

    // retry_exceeded: eight bursts 4.19 ms apart (the ACK timeout), idle in
    // between. On the 10 us grid throughout: steps of 10 us within a burst,
    // and a jump of about 4 ms per timeout to the grid point before it
    // fires: 7 retransmissions, then the timeout that gives up (status 12).
    let s = run_ok(&scenario("retry_exceeded"), &dir.join("re"), &[]);
    let end = s["sim_time_ns"].as_u64().unwrap();
    let times = sample_times(&dir.join("re/ports.csv"), "hostA.eth0");
    let (last, grid) = times.split_last().unwrap();
    assert_eq!(*last, end);
    assert!(grid.iter().all(|t| t % 10_000 == 0), "{times:?}");
    let steps: Vec<u64> = grid.windows(2).map(|w| w[1] - w[0]).collect();
    let jumps: Vec<u64> = steps.iter().copied().filter(|&d| d != 10_000).collect();
    assert_eq!(jumps.len(), 8, "{times:?}");
    assert!(
        jumps.iter().all(|&d| (3_900_000..=4_200_000).contains(&d)),
        "{jumps:?}"
    );
}

/// qps.csv's rate column is payload, not frames: for a QP alone on a
/// 100G link it sits below the port's frame rate by 4096 / 4154 (the
/// Ethernet, IPv4, UDP, BTH and ICRC bytes of a full MIDDLE packet), so
/// it is not called `tx_gbps` like the port's.
#[test]
fn qps_csv_rates_are_payload_rates() {
    let (dir, _, _) = run_pair("outputs_qps_csv", &["workload.0.size=8MiB"]);
    let qps = std::fs::read_to_string(dir.join("run/qps.csv")).unwrap();
    let header: Vec<&str> = qps.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "tx_payload_gbps")
        .expect("column");
    let row = |csv: &str, key: &str, t: &str| -> Vec<String> {
        csv.lines()
            .find(|l| l.starts_with(&format!("{t},")) && l.contains(key))
            .unwrap()
            .split(',')
            .map(str::to_string)
            .collect()
    };
    let q: f64 = row(&qps, ",client,", "1000000")[col].parse().unwrap();
    let ports = std::fs::read_to_string(dir.join("run/ports.csv")).unwrap();
    let p: f64 = row(&ports, ",a.eth0,", "1000000")[4].parse().unwrap();
    assert!(
        (q / p - 4096.0 / 4154.0).abs() < 0.002,
        "payload {q} vs frames {p}"
    );
}
