//! The parallel run against the serial one, on shipped scenarios.

use rocesim_model::time::Ps;
use rocesim_model::world::World;
use rocesim_scenario::{BuildOptions, ModelError};

use super::Simulation;

impl Simulation {
    /// Tests only: `f` on the world of every part.
    pub(crate) fn each_world(&mut self, mut f: impl FnMut(&mut World)) {
        f(&mut self.world);
        for w in self.twin.iter_mut().flat_map(|(others, _)| others) {
            f(w);
        }
    }
}

fn build(file: &str, sets: &[&str]) -> Result<Simulation, ModelError> {
    let path = roce_testkit::repo::root().join("scenarios").join(file);
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = rocesim_scenario::load(&path, &sets).expect("loads");
    Simulation::build(&loaded.scenario, "t", &BuildOptions::default())
}

/// What a run's outputs read, compared between two runs.
fn results(w: &World) -> String {
    let ports: Vec<_> = w.ports.iter().map(|p| *p.counters()).collect();
    let qps: Vec<_> = w
        .qps
        .iter()
        .map(|q| (q.tx_bytes, q.tx_payload, q.live.counters()))
        .collect();
    format!(
        "{:?}\n{ports:?}\n{qps:?}\n{} {} {:?}\n{:?}\n{:?}",
        w.flows(),
        w.events(),
        w.packet_hops(),
        w.sim_time(),
        w.sampler.port_samples().len(),
        w.sampler
            .qp_samples()
            .iter()
            .map(|s| (s.t, s.qp, s.tx_payload, s.last))
            .collect::<Vec<_>>(),
    )
}

/// A leaf-spine of 4 leaves and 2 spines cut in two: leaves 0-1,
/// spine 0 and their hosts, then the rest; the parts meet on the
/// leaf-spine links of 1 us.
#[test]
fn a_fabric_is_cut_by_tier_halves() {
    let sim = build("leaf_spine_capacity.toml", &["sim.partitions=2"]).unwrap();
    let w = sim.world();
    let plan = sim.plan().expect("cut");
    let name = |s: usize| w.switches[s].name().to_string();
    let part1: Vec<String> = (0..w.switches.len())
        .filter(|&s| plan.switch_part[s] == 1)
        .map(name)
        .collect();
    assert_eq!(part1, ["leaf2", "leaf3", "spine1"]);
    // Part 0's world simulates the rest, and knows which ports' peers
    // are the other part's: the leaf-spine links across the cut.
    for (s, sw) in w.switches.iter().enumerate() {
        assert_eq!(sw.elsewhere(), plan.switch_part[s] == 1, "{}", sw.name());
    }
    let across: Vec<&str> = w
        .ports
        .iter()
        .filter(|p| !p.elsewhere() && p.peer_elsewhere())
        .map(|p| p.name())
        .collect();
    // Leaves 0-1 up to spine 1, spine 0 down to leaves 2-3.
    assert_eq!(across, ["leaf0.u2", "leaf1.u2", "spine0.p3", "spine0.p4"]);
    assert_eq!(sim.cut().unwrap().links, across.len());
    for (h, host) in w.hosts.iter().enumerate() {
        let n: usize = host.name.trim_start_matches("host").parse().unwrap();
        // 8 hosts per leaf.
        assert_eq!(plan.host_part[h], u8::from(n >= 16), "{}", host.name);
    }
    assert_eq!(plan.lookahead, Ps::from_us(1));
}

/// A star: the senders in one part, the switch and the receivers in
/// the other; the senders are the flows' clients (`hpcc_2to1`, whose
/// topology is the reference's, in `../shared`) or the workloads'
/// (`dcqcn_convergence`).
#[test]
fn a_star_is_cut_between_senders_and_the_rest() {
    let cut = |sim: &Simulation, clients: &[u32]| {
        let (w, plan) = (sim.world(), sim.plan().expect("cut"));
        for h in 0..w.hosts.len() as u32 {
            assert_eq!(plan.host_part[h as usize], u8::from(clients.contains(&h)));
        }
        assert!(plan.switch_part.iter().all(|&p| p == 0));
    };
    let sim = build("dcqcn_convergence.toml", &["sim.partitions=2"]).unwrap();
    let w = sim.world();
    let clients: Vec<u32> = w
        .qps
        .iter()
        .filter(|q| q.role == rocesim_model::world::qp::Role::Client)
        .map(|q| q.host)
        .collect();
    assert_eq!(clients.len(), 4);
    cut(&sim, &clients);
    if roce_testkit::ci::shared("anchors/hpcc-ns3").is_none() {
        return;
    }
    let sim = build("hpcc_2to1.toml", &["sim.partitions=2"]).unwrap();
    let w = sim.world();
    let clients: Vec<u32> = w.pending.iter().map(|p| p.client_host()).collect();
    assert_eq!(clients.len(), 2);
    cut(&sim, &clients);
}

/// Split in two, a fabric's flows finish at the same picosecond, and
/// every counter, sample and the event count come out as in the serial
/// run: no frame in this one meets another at the same instant across
/// the cut. Run twice, the split run is the same again.
#[test]
fn a_split_run_gives_the_serial_runs_results() {
    let sets = ["traffic.0.duration=100us"];
    let serial = build("leaf_spine_capacity.toml", &sets).unwrap();
    assert_eq!(serial.partitions(), 1);
    let serial = serial.run(&mut ()).world;
    let split = build("leaf_spine_capacity.toml", &[sets[0], "sim.partitions=2"]).unwrap();
    assert_eq!(split.partitions(), 2);
    let split = split.run(&mut ());
    let w = &split.world;
    assert!(w.flows().iter().all(|f| f.finished_at.is_some()));
    assert!(w.flows().len() > 5, "{}", w.flows().len());
    assert_eq!(results(w), results(&serial));
    split.check_invariants().unwrap();
    let again = build("leaf_spine_capacity.toml", &[sets[0], "sim.partitions=2"]).unwrap();
    let again = again.run(&mut ()).world;
    assert_eq!(results(&again), results(w));
}

/// Stopped while frames are in flight between the parts and queued in
/// both: the counts still add up, and the run says where it stopped.
#[test]
fn a_split_run_stops_at_stop_at() {
    let sets = ["traffic.0.duration=100us", "sim.stop_at=30us"];
    let serial = build("leaf_spine_capacity.toml", &sets).unwrap();
    let serial = serial.run(&mut ()).world;
    let split = build(
        "leaf_spine_capacity.toml",
        &[sets[0], sets[1], "sim.partitions=2"],
    )
    .unwrap();
    let split = split.run(&mut ());
    assert_eq!(split.world.sim_time(), Ps::from_us(30));
    assert_eq!(results(&split.world), results(&serial));
    split.check_invariants().unwrap();
}

/// A capture tap records in the part that owns its port: split, the
/// scenario's pcap holds the serial run's frames, byte for byte, both
/// when the taps open with the build and when a run opens them after.
#[test]
fn a_tap_records_in_its_ports_part() {
    let path = roce_testkit::repo::root().join("scenarios/roce_modes.toml");
    let dir = std::env::temp_dir().join(format!("rocesim-split-taps-{}", std::process::id()));
    let pcap = |sets: &[&str], sub: &str, at_build: bool| -> Vec<u8> {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).unwrap();
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let sc = rocesim_scenario::load(&path, &sets).unwrap().scenario;
        let opts = BuildOptions {
            tap_dir: at_build.then(|| d.clone()),
        };
        let mut sim = Simulation::build(&sc, "t", &opts).unwrap();
        if !at_build {
            sim.open_taps(&sc, &d).unwrap();
        }
        let mut w = sim.run(&mut ()).world;
        w.finish().unwrap();
        assert!(w.taps.iter().all(|t| t.frames > 0));
        std::fs::read(d.join("hostA.eth0.pcap")).unwrap()
    };
    let serial = pcap(&[], "serial", true);
    assert!(serial.len() > 1000, "{}", serial.len());
    let split = ["sim.partitions=2"];
    assert_eq!(pcap(&split, "split-build", true), serial);
    assert_eq!(pcap(&split, "split-run", false), serial);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bond is its host's: split, lag_hash's bonds spread the same QPs
/// over the same slaves, and every port and QP counts what it did in
/// the serial run (two frames' order at one instant differs, not what
/// was sent).
#[test]
fn a_bond_runs_in_its_hosts_part() {
    let counts = |w: &World| {
        let ports: Vec<_> = w.ports.iter().map(|p| *p.counters()).collect();
        let qps: Vec<_> = w
            .qps
            .iter()
            .map(|q| (q.port, q.tx_bytes, q.tx_payload))
            .collect();
        let bonds: Vec<_> = w.bonds.iter().map(|b| b.bond.active).collect();
        format!("{ports:?}\n{qps:?}\n{bonds:?}\n{:?}", w.sim_time())
    };
    let serial = build("lag_hash.toml", &[]).unwrap().run(&mut ()).world;
    let split = build("lag_hash.toml", &["sim.partitions=2"]).unwrap();
    assert_eq!(split.cut().unwrap().hosts, [1, 1]);
    let split = split.run(&mut ());
    assert_eq!(counts(&split.world), counts(&serial));
    split.check_invariants().unwrap();
}

/// What a split run cannot do is refused at `sim.partitions`, with
/// the reason.
#[test]
fn what_cannot_be_split_is_refused() {
    let err = |file, sets: &[&str]| {
        let Err(e) = build(file, sets) else {
            panic!("{file} {sets:?} was split");
        };
        assert_eq!(e.path.to_string(), "sim.partitions");
        format!("{}; {}", e.msg, e.hint.unwrap_or_default())
    };
    let e = err("retry_exceeded.toml", &["sim.partitions=2"]);
    assert!(e.contains("ARP on the wire"), "{e}");
    let e = err("failover.toml", &["sim.partitions=2"]);
    assert!(e.contains("need one partition"), "{e}");
    let e = err("leaf_spine_capacity.toml", &["sim.partitions=65"]);
    assert!(e.contains("65 partitions: at most 64"), "{e}");
    let e = err("lag_hash.toml", &["sim.partitions=3"]);
    assert!(e.contains("part 2 of 3 empty"), "{e}");
    let e = err("leaf_spine_capacity.toml", &["sim.partitions=0"]);
    assert!(e.contains("0 partitions"), "{e}");
}
