//! Tests of `rocesim_model::world::reroute` on worlds built from scenarios.

use std::path::Path;

use rocesim_model::net::IpNet;
use rocesim_model::topology::NodeId;
use rocesim_model::world::World;
use rocesim_model::world::switch::NextHop;

use crate::{BuildOptions, build_world};

const FAT_TREE: &str = "[topology]\nkind = \"fat-tree\"\nk = 4\nhost_link = { rate = \"100Gbps\" }\nreroute = true\n[[traffic]]\npattern = \"permutation\"\nsize = \"4KB\"\n";

fn world(text: &str) -> World {
    let l = crate::load_str(Path::new("t.toml"), text.into(), &[]).unwrap();
    build_world(&l.scenario, &BuildOptions::default()).unwrap()
}

fn tables(w: &World) -> Vec<Vec<(IpNet, Vec<NextHop>)>> {
    w.switches.iter().map(|s| s.routes().to_vec()).collect()
}

/// Re-routing over a fabric whose links are all up gives back the
/// tables the lowering wrote, next hops in the same order (the order
/// the ECMP hash indexes); with agg0's link to core0 down, core0 reaches
/// pod 0 through another pod, and no other switch sends pod 0's
/// traffic up to core0 any more; with it up again, the first tables.
#[test]
fn rerouting_recomputes_around_a_link_and_back() {
    let mut w = world(FAT_TREE);
    let built = tables(&w);
    assert!(built.iter().all(|t| !t.is_empty()));
    w.reroute();
    assert_eq!(tables(&w), built);

    let r = w.reroute.as_ref().unwrap();
    let topo = r.topo.clone();
    let node =
        |name: &str| NodeId(topo.nodes().iter().position(|n| n.name == name).unwrap() as u32);
    let (agg0, core0) = (node("agg0"), node("core0"));
    let l = topo
        .links()
        .iter()
        .position(|l| (l.a, l.b) == (agg0, core0) || (l.a, l.b) == (core0, agg0))
        .unwrap();
    let wl = r.link[l].unwrap();
    w.link_change(wl, false);
    let after = tables(&w);
    assert_ne!(after, built);
    // Pod 0's hosts (0..=3: 10.0.0.1 .. 10.0.3.1): before, the other
    // pods' switches send some of their traffic up to core0; after,
    // none does, and core0 itself still has a way there.
    let core0_mac = w
        .switches
        .iter()
        .find(|s| s.name() == "core0")
        .unwrap()
        .mac();
    let via_core0 = |t: &[Vec<(IpNet, Vec<NextHop>)>], skip_core0: bool| {
        let mut n = 0;
        for (si, table) in t.iter().enumerate() {
            if skip_core0 && w.switches[si].name() == "core0" {
                continue;
            }
            for h in 0..4u8 {
                let ip = u32::from(core::net::Ipv4Addr::new(10, 0, h, 1));
                let best = table
                    .iter()
                    .filter(|(net, _)| ip & net.mask() == u32::from(net.addr) & net.mask())
                    .max_by_key(|(net, _)| net.prefix);
                if let Some((_, hops)) = best {
                    n += hops.iter().filter(|hop| hop.mac == core0_mac).count();
                }
            }
        }
        n
    };
    assert!(via_core0(&built, true) > 0);
    assert_eq!(via_core0(&after, true), 0, "{after:?}");
    let ci = w.switches.iter().position(|s| s.name() == "core0").unwrap();
    for h in 0..4u8 {
        let ip = u32::from(core::net::Ipv4Addr::new(10, 0, h, 1));
        assert!(
            after[ci].iter().any(
                |(net, hops)| ip & net.mask() == u32::from(net.addr) & net.mask()
                    && !hops.is_empty()
            ),
            "core0 lost host {h}"
        );
    }
    w.link_change(wl, true);
    assert_eq!(tables(&w), built);
}
