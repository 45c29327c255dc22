//! `rocesim run` writes and prints the QP records as it makes them from
//! the world ([`QpRows`]), one at a time; the library's [`Summary::of`]
//! collects them. Both must give the same bytes: summary.json and every
//! `--format`.

use roce_testkit::repo::root;

use super::summary::{QpRows, Summary};
use super::table::{summary_csv, summary_json, summary_table};
use crate::parallel::Simulation;
use crate::scenario;
use crate::scenario::BuildOptions;
use crate::world::World;

fn finished(scenario: &str, sets: &[&str]) -> World {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = scenario::load(
        &root().join("scenarios").join(format!("{scenario}.toml")),
        &sets,
    )
    .expect("scenario loads");
    let sim = Simulation::build(&loaded.scenario, "t", &BuildOptions::default()).unwrap();
    let mut w = sim.run(&mut ()).world;
    w.finish().unwrap();
    w
}

/// A QP that fails (retry exceeded, shown first in the table), a fabric
/// whose flows' QPs retired, and more client QPs than the table shows.
#[test]
fn records_made_as_read_are_the_collected_ones() {
    let runs = [
        finished("retry_exceeded", &[]),
        finished(
            "cc_compare",
            &["traffic.0.duration=60us", "sim.stop_at=150us"],
        ),
        finished("lag_hash", &["workload.0.qps=50", "workload.0.iters=4"]),
    ];
    for w in &runs {
        let collected = Summary::of("t", w, 0.0);
        let made = Summary::head("t", w, 0.0).with_qps(QpRows(w));
        assert!(collected.qps.len() > 1);
        assert_eq!(summary_json(&collected), summary_json(&made));
        assert_eq!(summary_csv(&collected), summary_csv(&made));
        assert_eq!(summary_table(&collected), summary_table(&made));
        // The same JSON as serde's own walk of the collected records.
        let records: Vec<serde_json::Value> =
            serde_json::from_str::<serde_json::Value>(&summary_json(&made)).unwrap()["qps"]
                .as_array()
                .unwrap()
                .clone();
        assert_eq!(
            records,
            serde_json::to_value(&collected.qps)
                .unwrap()
                .as_array()
                .unwrap()
                .clone()
        );
    }
    let failing = Summary::of("t", &runs[0], 0.0);
    assert!(failing.clients().any(|q| q.status_code == 12));
    let table = summary_table(&Summary::head("t", &runs[0], 0.0).with_qps(QpRows(&runs[0])));
    assert!(table.contains("retry_exceeded (12)"), "{table}");
}
