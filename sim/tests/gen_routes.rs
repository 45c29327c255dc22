//! Generated fabrics and their ECMP routes, against an independent
//! breadth-first search written here and against hand-counted fan-outs
//! and frame sizes.

use std::collections::VecDeque;

use rocesim::packet::Billing;
use rocesim::scenario::generate::topology::{FatTree, LeafSpine, LinkSpec, fat_tree};
use rocesim::time::{Ps, Rate};
use rocesim::topology::{
    Addressing, Framing, HostId, Link, Node, NodeId, NodeKind, PerHop, Port, Routes, Topology,
    ecmp_routes,
};

fn spec(g: u64) -> LinkSpec {
    LinkSpec::new(Rate::gbps(g), Ps::from_us(1))
}

/// Hop distance of every node to `dst`, where only switches forward.
fn distances(t: &Topology, dst: NodeId) -> Vec<Option<u32>> {
    let mut d = vec![None; t.nodes().len()];
    d[dst.0 as usize] = Some(0);
    let mut q = VecDeque::from([dst]);
    while let Some(n) = q.pop_front() {
        if n != dst && !t.is_switch(n) {
            continue;
        }
        for &l in t.links_of(n) {
            let m = t.peer(l, n);
            if d[m.0 as usize].is_none() {
                d[m.0 as usize] = Some(d[n.0 as usize].unwrap() + 1);
                q.push_back(m);
            }
        }
    }
    d
}

/// Every node's next hops toward every host are exactly its links to a
/// neighbour one hop closer (a host counts as a neighbour only if it is
/// the destination); paths exist exactly where distances do.
/// The ports `node` forwards to host `host` on, by name.
fn next_hop_ports(t: &Topology, r: &Routes, node: NodeId, host: u32) -> Vec<String> {
    r.next_hops(node, HostId(host))
        .iter()
        .map(|&l| t.port_name(l, node))
        .collect()
}

fn check_against_bfs(t: &Topology, r: &Routes) {
    for dst in 0..t.host_count() {
        let dst = HostId(dst);
        let dn = t.host_node(dst);
        let d = distances(t, dn);
        for i in 0..t.nodes().len() {
            let n = NodeId(i as u32);
            let mut want: Vec<_> = match d[i] {
                Some(k) if k > 0 => t
                    .links_of(n)
                    .iter()
                    .copied()
                    .filter(|&l| {
                        let m = t.peer(l, n);
                        d[m.0 as usize] == Some(k - 1) && (m == dn || t.is_switch(m))
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let mut got = r.next_hops(n, dst).to_vec();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{} toward {}", t.node(n).name, t.node(dn).name);
            if let Some(src) = t.host_of(n) {
                assert_eq!(
                    r.hop_count(t, src, dst),
                    d[i].filter(|&k| k > 0),
                    "{} -> {}",
                    src.0,
                    dst.0
                );
            }
        }
    }
}

#[test]
fn fat_trees_route_every_pair_over_shortest_paths() {
    for k in [4u32, 8] {
        let t = fat_tree(k, 1, [spec(100), spec(100), spec(400)]).unwrap();
        let r = ecmp_routes(&t).unwrap();
        check_against_bfs(&t, &r);
        let half = k / 2;
        let hosts_per_pod = half * half;
        for a in 0..t.host_count() {
            for b in 0..t.host_count() {
                let hops = if a == b {
                    None
                } else if a / half == b / half {
                    Some(2)
                } else if a / hosts_per_pod == b / hosts_per_pod {
                    Some(4)
                } else {
                    Some(6)
                };
                assert_eq!(
                    r.hop_count(&t, HostId(a), HostId(b)),
                    hops,
                    "k={k} {a}->{b}"
                );
            }
        }
        // ECMP fan-out toward a host in another pod: every uplink of the
        // edge and aggregation switches, one link down from a core.
        let far = HostId(t.host_count() - 1);
        let node = |n: &str| t.find(n).unwrap();
        assert_eq!(r.next_hops(node("edge0"), far).len(), half as usize);
        assert_eq!(r.next_hops(node("agg0"), far).len(), half as usize);
        assert_eq!(r.next_hops(node("core0"), far).len(), 1);
        // Toward a host of the same pod, other edge: up to every agg, then down.
        let near = HostId(half);
        assert_eq!(r.next_hops(node("edge0"), near).len(), half as usize);
        assert_eq!(r.next_hops(node("agg0"), near).len(), 1);
        assert_eq!(r.next_hops(node("edge0"), HostId(0)).len(), 1);
        // Bottleneck of a cross-pod pair: the 100G host links.
        assert_eq!(r.bottleneck_rate(&t, HostId(0), far), Some(Rate::gbps(100)));
    }
}

#[test]
fn k4_edge_switch_has_two_uplinks_toward_another_pod() {
    let t = fat_tree(4, 1, [spec(100); 3]).unwrap();
    let r = ecmp_routes(&t).unwrap();
    let edge0 = t.find("edge0").unwrap();
    assert_eq!(next_hop_ports(&t, &r, edge0, 15), ["edge0.u1", "edge0.u2"]);
    // Oversubscribed 3:1, the same routes with 3x the hosts.
    let over = fat_tree(4, 3, [spec(100); 3]).unwrap();
    let r3 = ecmp_routes(&over).unwrap();
    check_against_bfs(&over, &r3);
    assert_eq!(
        r3.next_hops(over.find("edge0").unwrap(), HostId(47)).len(),
        2
    );
}

#[test]
fn leaf_spine_uses_parallel_links() {
    let ls = LeafSpine {
        leaves: 4,
        spines: 2,
        hosts_per_leaf: 3,
        uplinks: 2,
        host_link: spec(100),
        fabric_link: spec(400),
    };
    let t = ls.build().unwrap();
    let r = ecmp_routes(&t).unwrap();
    check_against_bfs(&t, &r);
    let (leaf0, spine1) = (t.find("leaf0").unwrap(), t.find("spine1").unwrap());
    // To a host of another leaf: 2 spines x 2 parallel links.
    assert_eq!(r.next_hops(leaf0, HostId(11)).len(), 4);
    // A spine reaches a leaf's host over both parallel links.
    assert_eq!(
        next_hop_ports(&t, &r, spine1, 11),
        ["spine1.p7", "spine1.p8"]
    );
    assert_eq!(r.hop_count(&t, HostId(0), HostId(2)), Some(2));
    assert_eq!(r.hop_count(&t, HostId(0), HostId(11)), Some(4));
    // 2 x 4 us + 100G (80 ns) x 2 + 400G (20 ns) x 2.
    let rtt = r.base_rtt(
        &t,
        HostId(0),
        HostId(11),
        &PerHop::Reference { payload: 1000 },
    );
    assert_eq!(rtt, Some(Ps::from_ns(8000 + 160 + 40)));
}

#[test]
fn hosts_never_transit() {
    // sw0 - h1 - sw1, h0 on sw0, h2 on sw1: h1 is multi-homed, and the only
    // way from h0 to h2 would go through it.
    let node = |name: &str, kind| Node {
        name: name.into(),
        kind,
        tier: u8::from(kind == NodeKind::Switch),
    };
    let nodes = vec![
        node("h0", NodeKind::Host),
        node("h1", NodeKind::Host),
        node("h2", NodeKind::Host),
        node("sw0", NodeKind::Switch),
        node("sw1", NodeKind::Switch),
    ];
    let link = |a, ap, b, bp| Link {
        a: NodeId(a),
        a_port: ap,
        b: NodeId(b),
        b_port: bp,
        rate: Rate::gbps(10),
        delay: Ps::ZERO,
        loss: 0.0,
    };
    let links = vec![
        link(0, Port::Nic(0), 3, Port::Down(1)),
        link(1, Port::Nic(0), 3, Port::Down(2)),
        link(1, Port::Nic(1), 4, Port::Down(1)),
        link(2, Port::Nic(0), 4, Port::Down(2)),
    ];
    let t = Topology::new(nodes, links, Addressing::Sequential).unwrap();
    let r = ecmp_routes(&t).unwrap();
    check_against_bfs(&t, &r);
    assert_eq!(r.hop_count(&t, HostId(0), HostId(2)), None);
    assert!(r.next_hops(NodeId(3), HostId(2)).is_empty());
    assert_eq!(r.hop_count(&t, HostId(0), HostId(1)), Some(2));
    assert_eq!(r.hop_count(&t, HostId(1), HostId(2)), Some(2));
    assert_eq!(r.hop_count(&t, HostId(1), HostId(1)), None);
}

#[test]
fn rocev2_frames_counted_by_hand() {
    let f = Framing {
        pmtu: 1024,
        vlan: false,
        billing: Billing::REAL,
    };
    // Eth 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4.
    assert_eq!(f.data_frame_len(), 1082);
    // ... + AETH 4, no payload.
    assert_eq!(f.ack_frame_len(), 62);
    assert_eq!(
        Framing {
            pmtu: 1024,
            vlan: true,
            billing: Billing::REAL,
        }
        .data_frame_len(),
        1086
    );
    // 3000 B: FIRST (RETH 16, 1024) 1098, MIDDLE 1082, LAST (952) 1010;
    // each + FCS 4 + preamble/SFD 8 + gap 12.
    assert_eq!(f.write_wire_bytes(3000), 1122 + 1106 + 1034);
    // 1 B: WRITE ONLY with RETH, padded to 4: 14+20+8+12+16+4+4 = 78.
    assert_eq!(f.write_wire_bytes(1), 102);
    let t = fat_tree(4, 1, [spec(100); 3]).unwrap();
    let r = ecmp_routes(&t).unwrap();
    // Same edge: 2 x 2 us + per link (1106 + 86) B at 100G, then 3262 B at 100G.
    let ideal = r
        .framed_ideal_fct(&t, HostId(0), HostId(1), 3000, f)
        .unwrap();
    assert_eq!(ideal, Ps(4_000_000 + 2 * 95_360 + 260_960));
    // Billed at the HPCC reference's sizes: every data packet its payload
    // + 48, whatever its extension headers; an ACK 60; nothing added.
    let h = Framing {
        pmtu: 1000,
        vlan: false,
        billing: Billing::HPCC,
    };
    assert_eq!(h.write_wire_bytes(3000), 3 * 1048);
    assert_eq!(h.write_wire_bytes(1), 49);
    assert_eq!(h.ack_wire_bytes(), 60);
    // Per link (1048 + 60) B at 100G = 88.64 ns; then 3144 B = 251.52 ns.
    let billed = r
        .framed_ideal_fct(&t, HostId(0), HostId(1), 3000, h)
        .unwrap();
    assert_eq!(billed, Ps(4_000_000 + 2 * 88_640 + 251_520));
    let reference = r
        .reference_ideal_fct(&t, HostId(0), HostId(1), 3000, 1000)
        .unwrap();
    // 4160 ns + (3000 + 3 x 48) x 8 / 100 ns.
    assert_eq!(reference, Ps::from_ns(4160 + 251));
}

#[test]
fn route_tables_stay_small() {
    let t = FatTree::new(16, spec(100), spec(100), spec(100))
        .build()
        .unwrap();
    assert_eq!((t.host_count(), t.switch_count()), (1024, 320));
    let r = ecmp_routes(&t).unwrap();
    // 2 bytes per (switch, host); then per node a slot, and the distinct
    // next-hop sets (about 5000 links): well under 128 KB together.
    let entries = 320 * 1024 * 2;
    assert!(r.heap_bytes() < entries + 128 * 1024, "{}", r.heap_bytes());
    assert!(r.next_hop_entries() < 6000, "{}", r.next_hop_entries());
}
