//! Switch topologies the simulator must refuse or handle without looping:
//! no spanning tree is modelled, so a bridging loop is a scenario error
//! (frames would circle forever), while a routed fabric whose links form a
//! physical cycle (leaf-spine) is fine because broadcasts and unknown
//! unicast never cross a routed port.

mod common;

use std::path::Path;

use common::{link, scenario, switch, two_hosts};

use rocesim::parallel::Simulation;
use rocesim::run::Summary;
use rocesim::scenario::BuildOptions;
use rocesim::scenario::load_str;
use rocesim::world::QpStatus;

fn build(text: &str) -> Result<Simulation, String> {
    build_with(
        text,
        &[
            "sim.arp=frames",
            "sim.stop_at=50ms",
            "workload.0.size=64KiB",
            "workload.0.iters=4",
        ],
    )
}

fn build_with(text: &str, sets: &[&str]) -> Result<Simulation, String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded =
        load_str(Path::new("t.toml"), text.to_string(), &sets).map_err(|e| e.to_string())?;
    Simulation::build(&loaded.scenario, &loaded.name, &BuildOptions::default())
        .map_err(|e| loaded.locate(&e).to_string())
}

/// Hosts a and b (`two_hosts`), plain switches, and 100G `links`.
fn bridged(switches: &[&str], links: &[(&str, &str)]) -> String {
    let mut t = two_hosts(1500);
    for s in switches {
        t.push_str(&switch(s, "", &[]));
    }
    for (a, b) in links {
        t.push_str(&link(a, b, "100Gbps"));
    }
    t
}

/// Runs `sim` to the end (or its `stop_at`); its invariants hold and
/// every client QP succeeded.
fn run_to_success(sim: Simulation) -> Summary {
    let done = sim.run(&mut ());
    done.check_invariants().unwrap();
    let s = Summary::of(&done.name, &done.world, 0.0);
    for q in s.clients() {
        assert_eq!(q.status, QpStatus::Success, "{q:?}");
    }
    s
}

#[test]
fn a_ring_of_bridges_is_refused_at_the_link_that_closes_it() {
    let t = bridged(
        &["s1", "s2", "s3"],
        &[
            ("a.eth0", "s1.p1"),
            ("b.eth0", "s3.p1"),
            ("s1.x", "s2.x"),
            ("s2.y", "s3.y"),
            ("s3.z", "s1.z"),
        ],
    );
    let e = build(&t).err().expect("a bridging loop must be refused");
    assert!(e.contains("key `link[4]`"), "{e}");
    assert!(e.contains("bridging loop"), "{e}");
    assert!(e.contains("hint:"), "{e}");
}

#[test]
fn parallel_links_bridge_only_as_a_lag_on_both_ends() {
    let t = bridged(
        &["s1", "s2"],
        &[
            ("a.eth0", "s1.p1"),
            ("b.eth0", "s2.p1"),
            ("s1.u1", "s2.u1"),
            ("s1.u2", "s2.u2"),
        ],
    );
    let e = build(&t)
        .err()
        .expect("two plain links between two bridges loop");
    assert!(
        e.contains("key `link[3]`") && e.contains("bridging loop"),
        "{e}"
    );

    // A LAG on one end only still loops (the other switch floods into
    // both members).
    let one_sided = t.replacen(
        "[[switch]]\nname = \"s2\"\n",
        "[[switch]]\nname = \"s2\"\n  [[switch.lag]]\n  name = \"po1\"\n  ports = [\"u1\", \"u2\"]\n",
        1,
    );
    assert!(build(&one_sided).is_err());

    // As a LAG on both ends it is one logical link; the ARP broadcast
    // crosses it once and the workload completes.
    let lag = one_sided.replacen(
        "[[switch]]\nname = \"s1\"\n",
        "[[switch]]\nname = \"s1\"\n  [[switch.lag]]\n  name = \"po1\"\n  ports = [\"u1\", \"u2\"]\n",
        1,
    );
    let s = run_to_success(build(&lag).unwrap());
    // Back across the trunk: the ARP reply once, then one ACK per 64 KiB
    // message (64 packets at RoCE MTU 1024, AckReq only on the last).
    let trunk: u64 = s
        .ports
        .iter()
        .filter(|p| p.name.starts_with("s2.u"))
        .map(|p| p.counters.tx_packets)
        .sum();
    assert_eq!(trunk, 1 + 4, "ARP reply and ACKs: {:?}", s.ports);
}

/// Two hosts on one leaf of the routed leaf-spine of `scenarios/ecmp.toml`
/// (a physical cycle through the spines): their ARP broadcast stays on
/// the leaf, as on a real L3 fabric, instead of circling leaf1 → spine1 →
/// leaf2 → spine2 → leaf1.
#[test]
fn broadcasts_do_not_cross_routed_ports() {
    let ecmp = std::fs::read_to_string(scenario("ecmp")).unwrap();
    let t = format!(
        "{ecmp}\n[[host]]\nname = \"hostC\"\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.1.2/24\"\n\
         {}[[workload]]\ntool = \"ib_write_bw\"\nclient = \"hostA\"\nserver = \"hostC\"\nsize = \"64KiB\"\niters = 4\n",
        link("hostC.eth0", "leaf1.p2", "100Gbps")
    );
    let sets = ["sim.arp=frames", "sim.stop_at=20ms", "workload.0.iters=1"];
    let s = run_to_success(build_with(&t, &sets).unwrap());
    // The spines carry the routed workload only: 8 QPs x 16 x 1 MiB at
    // RoCE MTU 4096, and nothing of hostA and hostC's bridged exchange.
    let spine_rx: u64 = s
        .ports
        .iter()
        .filter(|p| p.name.starts_with("spine") && p.name.ends_with("d1"))
        .map(|p| p.counters.rx_packets)
        .sum();
    assert_eq!(spine_rx, 8 * 256, "{:?}", s.ports);
}
