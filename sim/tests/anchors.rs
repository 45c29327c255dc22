//! The hpcc scenarios rebuild the ns-3 peer's experiments
//! (`../shared/anchors/hpcc-ns3`): same senders, receiver, sizes, link
//! rates and delays; and an incast of N equal flows on one 100G port ends
//! near N x the anchor's standalone FCT, as fair sharing must.
//! Needs `../shared` (ROCESIM_CI rule).

mod common;

use common::*;
use std::path::PathBuf;

fn anchors() -> Option<PathBuf> {
    roce_testkit::ci::shared("anchors/hpcc-ns3")
}

fn check(name: &str, flows: &str, fct: &str) {
    let Some(dir) = anchors() else { return };
    let flow_text = std::fs::read_to_string(dir.join(flows)).unwrap();
    let topo = std::fs::read_to_string(dir.join("topology.txt")).unwrap();
    let loaded = rocesim::scenario::load(&scenario(name), &[]).unwrap();
    let sc = &loaded.scenario;
    let mut lines = flow_text.lines();
    let n: usize = lines.next().unwrap().trim().parse().unwrap();
    assert_eq!(sc.workloads.len(), n);
    let mut receiver = None;
    for (w, line) in sc.workloads.iter().zip(lines) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (src, dst, size): (u32, u32, u64) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[4].parse().unwrap(),
        );
        assert_eq!(w.client, format!("n{src}"));
        assert_eq!(w.server, format!("n{dst}"));
        assert_eq!(w.messages.len(), 1);
        assert_eq!(w.messages[0].size.0, size);
        // ns-3 priority 3 = our TC 104 (DSCP 26 >> 3 = 3).
        assert_eq!(f[2], "3");
        assert_eq!((w.tc >> 2) >> 3, 3);
        receiver = Some(dst);
        for node in [src, dst] {
            let link = topo
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|l| l.len() == 5 && l[1] == node.to_string())
                .unwrap();
            let ours = sc
                .links
                .iter()
                .find(|l| l.a == format!("n{node}.eth0"))
                .unwrap();
            assert_eq!(ours.rate.0, rocesim::units::parse_rate(link[2]).unwrap());
            assert_eq!(
                ours.delay.0,
                rocesim::units::parse_duration(link[3]).unwrap()
            );
        }
    }
    // Run it: N flows share the receiver's 100G port.
    let (_, s) = run_scenario(name, &format!("anchor_{name}"), &[]);
    let standalone_ns: f64 = std::fs::read_to_string(dir.join(fct))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(7)
        .unwrap()
        .parse()
        .unwrap();
    for q in clients(&s) {
        assert_eq!(q["status"], "success");
        let fct = q["finished_at_ns"].as_u64().unwrap() as f64;
        let ratio = fct / (n as f64 * standalone_ns);
        // 1024-byte RoCE payloads carry 78 B of headers where ns-3's 1000 B
        // carry 48: a few percent slower than N x standalone, never faster.
        assert!(
            (1.0..1.08).contains(&ratio),
            "{name}: fct {fct} ns = {ratio:.3} x {n} x standalone {standalone_ns}"
        );
    }
    let rx = port(&s, &format!("n{}.eth0", receiver.unwrap()));
    assert_eq!(rx["drops"], 0);
}

#[test]
fn hpcc_2to1_matches_the_anchor() {
    check(
        "hpcc_2to1",
        "flow_2to1.txt",
        "e3_dcqcn_2to1_notrace_fct.txt",
    );
}

#[test]
fn hpcc_16to1_matches_the_anchor() {
    check(
        "hpcc_16to1",
        "flow_16to1.txt",
        "e4_dcqcn_16to1_notrace_fct.txt",
    );
}
