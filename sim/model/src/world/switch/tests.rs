use super::*;
use crate::packet::L3;
use roce_codec::frame::{EthRepr, VlanTag};

const SW: [u8; 6] = [2, 0x5e, 0, 0, 0, 1];
const A: [u8; 6] = [2, 0, 0, 0, 1, 1];
const B: [u8; 6] = [2, 0, 0, 0, 1, 2];
const SPINE1: [u8; 6] = [2, 0x5e, 0, 0, 0, 2];
const SPINE2: [u8; 6] = [2, 0x5e, 0, 0, 0, 3];

fn net(s: &str) -> IpNet {
    crate::net::parse_ipnet(s).unwrap()
}

fn pkt(src: [u8; 6], dst: [u8; 6], ip_dst: [u8; 4], sport: u16) -> Packet {
    Packet {
        eth: EthRepr { dst, src },
        vlan: Some(VlanTag::dot1q(10, 5)),
        l3: L3::V2 {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::from(ip_dst),
            dscp: 26,
            ecn: 0,
            ttl: 64,
            sport,
            ecmp: crate::packet::hash_ports(sport),
        },
        ib: Default::default(),
        prio: 0,
        frame_len: 100,
        billed_len: 100,
        wire_extra: 24,
        src_qp: 0,
        ingress: u32::MAX,
        mad: u32::MAX,
        int: crate::packet::NO_INT,
        ts: crate::time::Ps::ZERO,
    }
}

fn group(name: &str, members: &[u32]) -> Group {
    Group {
        name: name.into(),
        members: members.to_vec(),
    }
}

/// Ports 0 and 1: hosts A and B (bridged); 2 and 3: a LAG `po1` to
/// another bridge; 4 and 5: routed uplinks to two spines, each the
/// next hop of 10.0.1.0/24 (ECMP) and 4 alone of 10.0.1.128/25.
fn leaf() -> Switch {
    let mut s = Switch::new("leaf".into(), SW, EcmpHash::LinuxL34, Trust::Dscp, 1 << 20);
    for p in 0..6 {
        s.add_port(p);
    }
    s.set_groups(
        vec![
            group("p1", &[0]),
            group("p2", &[1]),
            group("po1", &[2, 3]),
            group("u1", &[4]),
            group("u2", &[5]),
        ],
        vec![0, 1, 2, 2, 3, 4],
    );
    let hop = |group, mac| NextHop { group, mac };
    s.add_route(net("10.0.1.0/24"), vec![hop(3, SPINE1), hop(4, SPINE2)]);
    s.add_route(net("10.0.1.128/25"), vec![hop(3, SPINE1)]);
    let mut fdb = FastMap::default();
    fdb.insert(A, 0);
    fdb.insert(B, 1);
    let mut neigh = HashMap::new();
    neigh.insert(Ipv4Addr::new(10, 0, 0, 2), (B, 1));
    s.set_tables(fdb, neigh);
    s
}

#[test]
fn bridges_known_unicast_and_filters_same_port() {
    let s = leaf();
    let p = pkt(A, B, [10, 0, 0, 2], 0xC000);
    assert_eq!(
        s.forward(0, &p),
        Forward::Port {
            out: 1,
            routed_to: None
        }
    );
    assert_eq!(s.forward(1, &p), Forward::Filtered);
}

#[test]
fn floods_unknown_unicast_to_bridged_groups_only() {
    let s = leaf();
    let unknown = [2, 0, 0, 0, 9, 9];
    let Forward::Flood(outs) = s.forward(0, &pkt(A, unknown, [10, 0, 0, 9], 0xC000)) else {
        panic!("not flooded");
    };
    // Port 1 and one member of the LAG; never the ingress, never a
    // routed uplink.
    assert_eq!(outs.len(), 2, "{outs:?}");
    assert_eq!(outs[0], 1);
    assert!([2, 3].contains(&outs[1]), "{outs:?}");
}

#[test]
fn lag_member_by_hash_over_live_members() {
    let mut s = leaf();
    let unknown = [2, 0, 0, 0, 9, 9];
    let picks: Vec<u32> = (0..64)
        .map(
            |i| match s.forward(0, &pkt(A, unknown, [10, 0, 0, 9], 0xC000 + i)) {
                Forward::Flood(outs) => outs[1],
                f => panic!("{f:?}"),
            },
        )
        .collect();
    assert!(
        picks.contains(&2) && picks.contains(&3),
        "both members used"
    );
    s.set_port_up(3, false);
    for i in 0..64 {
        let Forward::Flood(outs) = s.forward(0, &pkt(A, unknown, [10, 0, 0, 9], 0xC000 + i)) else {
            panic!()
        };
        assert_eq!(outs[1], 2, "the dead member is skipped");
    }
}

/// Where host A's packet to `dst` with UDP source port 0xC000 + `i`
/// goes, addressed to the switch (routed).
fn routed_from_a(s: &Switch, dst: [u8; 4], i: u16) -> Forward {
    s.forward(0, &pkt(A, SW, dst, 0xC000 + i))
}

fn hop(out: u32, mac: [u8; 6]) -> Forward {
    Forward::Port {
        out,
        routed_to: Some(mac),
    }
}

#[test]
fn routes_longest_prefix_then_ecmp_over_live_next_hops() {
    let mut s = leaf();
    // /25 wins over /24: only spine 1.
    for i in 0..32 {
        assert_eq!(routed_from_a(&s, [10, 0, 1, 200], i), hop(4, SPINE1));
    }
    // /24: both spines by hash, then the survivor.
    let outs: Vec<Forward> = (0..32)
        .map(|i| routed_from_a(&s, [10, 0, 1, 7], i))
        .collect();
    assert!(outs.contains(&hop(4, SPINE1)) && outs.contains(&hop(5, SPINE2)));
    s.set_port_up(4, false);
    for i in 0..32 {
        assert_eq!(routed_from_a(&s, [10, 0, 1, 7], i), hop(5, SPINE2));
    }
    // With no live next hop the /25 has no route.
    assert_eq!(
        routed_from_a(&s, [10, 0, 1, 200], 0),
        Forward::Drop(DropReason::NoRoute)
    );
}

#[test]
fn routed_hops_prefer_attached_hosts_and_check_ttl() {
    let s = leaf();
    assert_eq!(
        s.forward(4, &pkt(SPINE1, SW, [10, 0, 0, 2], 0xC000)),
        hop(1, B)
    );
    let mut p = pkt(SPINE1, SW, [10, 0, 0, 2], 0xC000);
    if let L3::V2 { ttl, .. } = &mut p.l3 {
        *ttl = 1;
    }
    assert_eq!(s.forward(4, &p), Forward::Drop(DropReason::NoRoute));
    assert_eq!(
        s.forward(0, &pkt(A, SW, [192, 168, 0, 1], 0xC000)),
        Forward::Drop(DropReason::NoRoute),
        "no route"
    );
    // A routed port takes only frames addressed to the switch.
    assert_eq!(
        s.forward(4, &pkt(SPINE1, B, [10, 0, 0, 2], 0xC000)),
        Forward::Drop(DropReason::NotOurs)
    );
}

#[test]
fn learning_moves_a_station_and_a_dead_group_is_forgotten() {
    let mut s = leaf();
    s.learn(2, A);
    let p = pkt(B, A, [10, 0, 0, 1], 0xC000);
    assert!(matches!(s.forward(1, &p), Forward::Port { out: 2 | 3, .. }));
    s.learn(4, B); // routed ports learn nothing
    assert_eq!(s.fdb.get(&mac_key(&B)), Some(&1));
    s.set_port_up(2, false);
    assert!(matches!(s.forward(1, &p), Forward::Port { out: 3, .. }));
    s.set_port_up(3, false);
    assert!(matches!(s.forward(1, &p), Forward::Flood(_)), "A forgotten");
}

#[test]
fn a_station_that_moves_back_is_learned_again() {
    // Each port remembers the station its last frame taught; a move
    // elsewhere must make it forget, or the move back is not learned.
    let mut s = leaf();
    let (g1, g2) = (s.group_of(1), s.group_of(2));
    assert_ne!(g1, g2);
    s.learn(2, A);
    assert_eq!(s.fdb.get(&mac_key(&A)), Some(&g2));
    s.learn(1, A);
    assert_eq!(s.fdb.get(&mac_key(&A)), Some(&g1));
    s.learn(2, A);
    assert_eq!(s.fdb.get(&mac_key(&A)), Some(&g2));
}

#[test]
fn classification_by_trust_mode() {
    let mut s = leaf();
    let p = pkt(A, B, [10, 0, 0, 2], 0xC000);
    assert_eq!(s.classify(&p), 26 >> 3);
    s.trust = Trust::Pcp;
    assert_eq!(s.classify(&p), 5);
}
