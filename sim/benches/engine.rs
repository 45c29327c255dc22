//! Simulator speed: events, packet-hops (one frame crossing one link) and
//! simulated time per wall-clock second, on the shipped scenarios and a
//! 64-QP variant of lag_hash.
//!
//!     cargo bench -p rocesim --bench engine [-- RUNS]
//!
//! Each case is built and run RUNS times (default 5) in this process; the
//! table shows the median wall time and the rates it implies. Taps are off
//! (no capture files), as in `rocesim sweep`.

use std::path::Path;
use std::time::Instant;

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let cases: [(&str, &str, &[&str]); 7] = [
        ("lag_hash", "lag_hash", &[]),
        (
            "lag_hash 64 QPs",
            "lag_hash",
            &["workload.0.qps=64", "workload.0.iters=1"],
        ),
        ("failover", "failover", &[]),
        ("retry_exceeded", "retry_exceeded", &[]),
        ("hpcc_2to1", "hpcc_2to1", &[]),
        ("hpcc_16to1", "hpcc_16to1", &[]),
        ("ecmp", "ecmp", &[]),
    ];
    println!(
        "{:<16} {:>10} {:>11} {:>12} {:>9} {:>13} {:>15} {:>14}",
        "case", "events", "hops", "sim time", "wall ms", "Mevents/s", "Mhops/s", "sim s/wall s"
    );
    for (label, file, sets) in cases {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let path = root.join(format!("{file}.toml"));
        let mut walls = Vec::new();
        let mut stats = (0, 0, 0.0);
        for _ in 0..runs {
            let (_, sim) = rocesim::run::check(&path, &sets).expect("scenario");
            let t = Instant::now();
            let w = sim.run(&mut ()).world;
            walls.push(t.elapsed().as_secs_f64());
            stats = (w.events(), w.packet_hops(), w.sim_time().as_secs_f64());
        }
        walls.sort_by(f64::total_cmp);
        let med = walls[walls.len() / 2];
        let (ev, hops, sim) = stats;
        println!(
            "{:<16} {:>10} {:>11} {:>10.3}ms {:>9.1} {:>13.2} {:>15.2} {:>14.4}",
            label,
            ev,
            hops,
            sim * 1e3,
            med * 1e3,
            ev as f64 / med / 1e6,
            hops as f64 / med / 1e6,
            sim / med
        );
    }
}
