//! Tests of `rocesim_model::world::flows` on worlds built from scenarios.

use rocesim_model::world::{Progress, World};

use crate::{BuildOptions, build_world};

/// What the progress bar was told, call by call.
#[derive(Default)]
struct Record(Vec<(usize, usize)>);
impl Progress for Record {
    fn update(&mut self, _: rocesim_model::time::Ps, _: Option<rocesim_model::time::Ps>) {}
    fn flows(&mut self, done: usize, total: usize) {
        self.0.push((done, total));
    }
}

/// The running count agrees with a count of every flow's workload,
/// during the run (it never goes back) and at its end, with some flows
/// unstarted, some running and some finished.
#[test]
fn the_progress_count_is_every_finished_flow() {
    let path = roce_testkit::repo::root().join("scenarios/leaf_spine_capacity.toml");
    let sets = vec!["sim.stop_at=1500us".to_string()];
    let loaded = crate::load(&path, &sets).expect("loads");
    let opts = BuildOptions { tap_dir: None };
    let mut w = build_world(&loaded.scenario, &opts).expect("builds");
    let mut seen = Record::default();
    w.run(loaded.scenario.sim.stop_at.map(|d| d.0), &mut seen);
    let every = |w: &World| {
        w.flows
            .iter()
            .filter(|f| w.workloads[f.workload as usize].workload.is_done())
            .count()
    };
    let done = every(&w);
    assert!(
        done > 0 && done < w.flows.len(),
        "{done} of {}",
        w.flows.len()
    );
    assert!(seen.0.len() >= 2, "{:?}", seen.0);
    assert!(seen.0.windows(2).all(|p| p[0].0 <= p[1].0), "{:?}", seen.0);
    let mut tally = rocesim_model::world::FlowTally::default();
    assert_eq!(w.count_finished_flows(&mut tally), (done, w.flows.len()));
    // Counted again from where it left off, the count stands.
    assert_eq!(w.count_finished_flows(&mut tally), (done, w.flows.len()));
}
