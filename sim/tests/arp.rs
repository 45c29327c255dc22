//! The multi-NIC ARP model in the reverse direction: the requester has two
//! NICs in one subnet and its QP lives on the second. Which of them answers
//! the responder's ARP request decides where its ACKs go.

mod common;

use common::*;

/// Host a with NICs a1 and a2 in one subnet, b, one switch; the QP lives
/// on a2.
fn two_nic_client() -> String {
    let mut t = "name = \"two_nic_client\"\n".to_string()
        + &host(
            "a",
            "",
            &[("a1", "10.0.0.1/24"), ("a2", "10.0.0.2/24")],
            4200,
        )
        + &host("b", "", &[("eth0", "10.0.0.3/24")], 4200)
        + &switch("sw", "", &[]);
    for (a, b) in [("a.a1", "sw.p1"), ("a.a2", "sw.p2"), ("b.eth0", "sw.p3")] {
        t += &link_with(a, b, "25G", "");
    }
    t + &write_bw(
        "a.a2",
        "b",
        "size = \"64KiB\"\niters = 4\ntimeout = 4\nretry_cnt = 2\n",
    )
}

fn status(name: &str, sets: &[&str]) -> (String, serde_json::Value) {
    let (_, s) = run_text(name, &two_nic_client(), sets);
    (clients(&s)[0]["status"].as_str().unwrap().to_string(), s)
}

/// Outcome of the two-NIC client under seeds 1..=8.
fn outcomes(name: &str, sets: &[&str]) -> Vec<(String, serde_json::Value)> {
    (1..=8)
        .map(|seed| {
            let mut all = sets.to_vec();
            let seed = format!("seed={seed}");
            all.push(&seed);
            status(&format!("{name}_{seed}"), &all)
        })
        .collect()
}

#[test]
fn defaults_race_and_the_seed_decides() {
    // a's TCP connection leaves a1 (the main table's first route) asking
    // with a1's own address, so b learns nothing about 10.0.0.2. b's QP,
    // bound to eth0, then asks "who has 10.0.0.2?": with a's arp_ignore = 0
    // both a1 and a2 answer and the first reply (a seeded race) wins. When
    // a1 wins, b sends every ACK to a1, whose RoCE NIC does not own
    // 10.0.0.2.
    let runs = outcomes("arp_default", &[]);
    let failed: Vec<_> = runs
        .iter()
        .filter(|(st, _)| st == "retry_exceeded")
        .collect();
    let fine = runs.iter().filter(|(st, _)| st == "success").count();
    assert!(!failed.is_empty() && fine > 0, "both orders among 8 seeds");
    assert_eq!(failed.len() + fine, runs.len());
    for (_, s) in failed {
        let a1 = port(s, "a.a1");
        assert!(a1["drops_not_ours"].as_u64().unwrap() > 0);
        assert_eq!(a1["drops_not_ours"], a1["rx_packets"]);
        // The data itself got through: b's QP received it and answered.
        let server = s["qps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["role"] == "server")
            .unwrap();
        assert!(server["tx_packets"].as_u64().unwrap() > 0, "b answered");
    }
}

#[test]
fn arp_ignore_fixes_the_reverse_direction() {
    // Only a2 answers for its own address: every seed connects, as Linux
    // does (the RDMA stack's lookup is bound to the GID's device).
    for (st, _) in outcomes("arp_ignore", &["host.a.arp_ignore=1"]) {
        assert_eq!(st, "success");
    }
}

#[test]
fn policy_routing_and_arp_announce_do_not_settle_the_race() {
    // Neither changes who answers b's request: the same seeds fail.
    let base: Vec<String> = outcomes("arp_base", &[]).into_iter().map(|o| o.0).collect();
    for sets in [
        vec!["host.a.policy_routing=true"],
        vec!["host.a.arp_announce=2"],
    ] {
        let got: Vec<String> = outcomes(&format!("arp_{}", sets[0]), &sets)
            .into_iter()
            .map(|o| o.0)
            .collect();
        assert_eq!(got, base, "{sets:?}");
    }
    // Strict reverse-path filtering: the route back to b leaves a1, so
    // only a1 answers and every seed fails.
    for (st, _) in outcomes("arp_rp", &["host.a.rp_filter=1"]) {
        assert_eq!(st, "retry_exceeded");
    }
}

#[test]
fn arp_frames_reach_the_same_answers_as_the_instant_model() {
    for sets in [
        vec!["seed=1"],
        vec!["seed=2"],
        vec!["seed=3"],
        vec!["seed=2", "host.a.arp_ignore=1"],
        vec!["seed=2", "host.a.rp_filter=1"],
    ] {
        let tag = sets.join("_").replace(['.', '='], "_");
        let (instant, si) = status(&format!("arp_i_{tag}"), &sets);
        let mut f = sets.clone();
        f.push("sim.arp=frames");
        let (frames, sf) = status(&format!("arp_f_{tag}"), &f);
        assert_eq!(instant, frames, "{sets:?}");
        // Same blackhole (or none) in both: RoCE frames a1 refused. (Their
        // number may differ by the ACKs of a few microseconds: with frames
        // the QPs start after the exchange, not at 0.)
        let refused = |s: &serde_json::Value| port(s, "a.a1")["drops_not_ours"].as_u64().unwrap();
        assert_eq!(refused(&si) > 0, instant == "retry_exceeded", "{sets:?}");
        assert_eq!(refused(&sf) > 0, frames == "retry_exceeded", "{sets:?}");
    }
    // Bonds and routed fabrics resolve too, with the same slave choice.
    for (name, extra) in [
        (
            "lag_hash",
            vec!["workload.0.size=256KiB", "workload.0.iters=2"],
        ),
        ("ecmp", vec!["workload.0.iters=2"]),
    ] {
        let mut a = extra.clone();
        let i = run_ok(&scenario(name), &tmp(&format!("arp_i_{name}")), &a);
        a.push("sim.arp=frames");
        let f = run_ok(&scenario(name), &tmp(&format!("arp_f_{name}")), &a);
        let slaves = |s: &serde_json::Value| -> Vec<(serde_json::Value, serde_json::Value)> {
            clients(s)
                .iter()
                .map(|q| (q["status"].clone(), q["slave"].clone()))
                .collect()
        };
        assert_eq!(slaves(&i), slaves(&f), "{name}");
        assert!(
            clients(&f).iter().all(|q| q["status"] == "success"),
            "{name}"
        );
    }
}

/// a -- sw -- b with ARP as frames; a's link is down from 0 to 1.5 s.
fn pair_frames() -> String {
    two_hosts(1500)
        + "[[switch]]\nname = \"sw\"\n"
        + &link("a.eth0", "sw.p1", "25Gbps")
        + "  [[link.event]]\n  at = \"0s\"\n  state = \"down\"\n  [[link.event]]\n  at = \"1.5s\"\n  state = \"up\"\n"
        + &link("b.eth0", "sw.p2", "25Gbps")
}

/// A lost ARP request is sent again every second (the kernel's
/// retrans_time), instead of leaving the workload waiting forever with
/// its QPs `running` and the run ending at 0 ms: down at 0, the requests
/// at 0 s and 1 s are lost, the one at 2 s is answered.
#[test]
fn a_lost_arp_request_is_retransmitted_every_second() {
    let sets = [
        "sim.arp=frames",
        "workload.0.size=4KiB",
        "workload.0.iters=2",
    ];
    let (_, s) = run_text("arp_retransmit", &pair_frames(), &sets);
    let q = clients(&s)[0];
    assert_eq!(q["status"], "success", "{q}");
    let first = q["first_tx_ns"].as_u64().unwrap();
    // Request and reply: two 25G hops of 1 us each way.
    assert!((2_000_000_000..2_000_010_000).contains(&first), "{first}");
    assert_eq!(port(&s, "a.eth0")["drops_link_down"], 2);
}
