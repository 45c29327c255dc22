//! `[topology] kind = "rail"` lowered: a rail-optimized GPU cluster's
//! servers, leaves and spines ([`crate::generate::rail`] has the shape,
//! names and ports), their addresses and routes.
//!
//! ```text
//!  [topology] kind = "rail"
//!    servers, nics_per_server (8), servers_per_leaf (all), planes (1),
//!    spines, oversubscription (1) | uplinks, host_link, fabric_link,
//!    subnet = "per-rail" | "shared"
//!      ▼
//!  [[host]]   server<s>: [topology.host] keys, gateway = its rail-0 leaf
//!             [[host.nic]] eth<r> = [topology.nic] keys + ip, gateway
//!  [[switch]] su<g>_leaf<r>, plane<p>_spine<k>: [topology.switch] keys,
//!             murmur3 hashed, seeded by node id, [[switch.route]]s
//!  [[link]]   server links at host_link, leaf-spine links at fabric_link
//! ```
//!
//! # Addresses
//!
//! `subnet = "per-rail"` (the default) is what NVIDIA's rail-optimized
//! reference designs do: each rail is its own layer-3 network, each leaf
//! routes its rail's subnet. NIC r of server s, the i-th server of group
//! g, is `10.r.g.(i+1)/24`; its leaf answers at `10.r.g.254`, which is the
//! NIC's own `gateway` (its own routing table: RDMA address resolution
//! is bound to the GID's device, so a QP on eth3 leaves eth3 for its
//! leaf whatever the destination). The host's `gateway`, for the main
//! table (perftest's TCP connection), is its rail-0 leaf. So rail r is
//! 10.r.0.0/16, and the second octet of any address says its rail.
//!
//! `subnet = "shared"` gives the same addresses a /8 and no gateways:
//! every NIC of every server is on one subnet, the multi-NIC
//! misconfiguration behind NCCL's "error 12" (retry exceeded). The kernel
//! then sends everything on-link, ARP for a NIC of another rail is
//! broadcast on the asking NIC's leaf, and with `arp_ignore = 0` (the
//! kernel default) the target server's NIC *on that rail* answers for the
//! other NIC's address: the QP's frames go to a NIC that does not own
//! their GID and are dropped (`scenarios/retry_exceeded.toml` has the
//! mechanism, and its fixes apply: `[topology.host] arp_ignore = 1` turns
//! the silent blackhole into an ARP that nobody answers).
//!
//! # Routes
//!
//! A leaf holds its own servers' NICs in its neighbour table (their
//! frames are bridged); it routes group g' of its rail (`10.r.g'.0/24`)
//! and every other rail r' of its plane (`10.r'.0.0/16`) over all its
//! uplinks, ECMP. A spine routes each leaf's /24 of its plane over the
//! links to that leaf. No route leads from one plane to another: planes
//! are independent fabrics, and a NIC reaches only NICs of its plane.

use std::fmt::Write as _;

use crate::diagnostic::{KeyPath, ModelError};
use crate::generate::rail::Rail;
use crate::generate::topology::LinkSpec;
use crate::schema::{RailSubnet, TopologyCfg};
use rocesim_model::topology::Topology;

/// Most NICs a server may have: rail r is the second octet of 10.r.g.i.
const MAX_RAILS: u32 = 256;
/// Most groups: group g is the third octet.
const MAX_GROUPS: u32 = 256;
/// Most servers per leaf: .1 to .253 of a /24, .254 is the leaf's.
const MAX_PER_LEAF: u32 = 253;

fn gbps(s: LinkSpec) -> String {
    let g = s.rate.bps() as f64 / 1e9;
    format!("{g} Gb/s")
}

/// The shape `[topology]` asks for, every key checked (errors name the
/// key and the value).
pub(crate) fn shape(t: &TopologyCfg, host: LinkSpec, fabric: LinkSpec) -> Result<Rail, ModelError> {
    let at = KeyPath::root().key("topology");
    let foreign = [
        (t.k.is_some(), "k", "a fat-tree's radix"),
        (t.pods.is_some(), "pods", "a fat-tree's"),
        (
            t.hosts_per_edge.is_some(),
            "hosts_per_edge",
            "use servers_per_leaf",
        ),
        (t.edge_agg.is_some(), "edge_agg", "use fabric_link"),
        (t.agg_core.is_some(), "agg_core", "use fabric_link"),
        (
            t.leaves.is_some(),
            "leaves",
            "a rail fabric has one leaf per rail per group: give servers_per_leaf",
        ),
        (
            t.hosts_per_leaf.is_some(),
            "hosts_per_leaf",
            "use servers_per_leaf",
        ),
        (t.file.is_some(), "file", "kind = \"hpcc\"'s"),
    ];
    if let Some((_, key, hint)) = foreign.iter().find(|f| f.0) {
        return Err(ModelError::new(
            at.key(key),
            format!("`{key}` is not a key of kind = \"rail\""),
        )
        .hint(*hint));
    }
    if t.reroute == Some(true) {
        return Err(ModelError::new(
            at.key("reroute"),
            "kind = \"rail\" lays its routes out per rail subnet; `reroute` recomputes per-host routes (fat-tree, leaf-spine, hpcc) and is not available here",
        )
        .hint("leave it out: a switch still stops using a dead next hop (ECMP over the live uplinks)"));
    }
    let servers = t.servers.ok_or_else(|| {
        ModelError::new(at.clone(), "kind = \"rail\" needs `servers`")
            .hint("servers = 4 (GPU servers, one host each with nics_per_server NICs)")
    })?;
    let range = |key: &str, v: u32, max: u32, hint: &str| {
        if v == 0 || v > max {
            Err(
                ModelError::new(at.key(key), format!("{v} is out of range 1..={max}"))
                    .hint(hint.to_string()),
            )
        } else {
            Ok(v)
        }
    };
    range(
        "servers",
        servers,
        MAX_GROUPS * MAX_PER_LEAF,
        "GPU servers, e.g. servers = 4",
    )?;
    let nics = range(
        "nics_per_server",
        t.nics_per_server.unwrap_or(8),
        MAX_RAILS,
        "NICs (rails) per server: 8 on a DGX/HGX H100 (one ConnectX-7 per GPU); rail r is the second octet of its addresses, 10.r.g.i",
    )?;
    let per_leaf = range(
        "servers_per_leaf",
        t.servers_per_leaf.unwrap_or(servers.min(MAX_PER_LEAF)),
        MAX_PER_LEAF,
        "servers per group (each leaf's /24 has .1 to .253 for them, .254 for the leaf)",
    )?;
    let groups = servers.div_ceil(per_leaf);
    if groups > MAX_GROUPS {
        return Err(ModelError::new(
            at.key("servers_per_leaf"),
            format!("{servers} servers in groups of {per_leaf} are {groups} groups, more than the {MAX_GROUPS} the addresses number (10.rail.group.i)"),
        )
        .hint(format!("at least {} servers per leaf", servers.div_ceil(MAX_GROUPS))));
    }
    let planes = range(
        "planes",
        t.planes.unwrap_or(1),
        nics,
        "independent leaf-spine planes, at most one per rail (rail r is in plane r mod planes); 1 joins every rail",
    )?;
    let (spines, uplinks) = uplinks_and_spines(t, per_leaf, host, fabric)?;
    Ok(Rail {
        servers,
        nics_per_server: nics,
        servers_per_leaf: per_leaf,
        spines,
        uplinks,
        planes,
        host_link: host,
        fabric_link: fabric,
    })
}

/// (spines, parallel links per leaf-spine pair): given, or sized from
/// `oversubscription` (default 1: a leaf's uplinks carry what its servers
/// can send).
fn uplinks_and_spines(
    t: &TopologyCfg,
    per_leaf: u32,
    host: LinkSpec,
    fabric: LinkSpec,
) -> Result<(u32, u32), ModelError> {
    let at = KeyPath::root().key("topology");
    let positive = |key: &str, v: Option<u32>, hint: &str| match v {
        Some(0) => Err(
            ModelError::new(at.key(key), "0 is out of range (at least 1)").hint(hint.to_string()),
        ),
        _ => Ok(v),
    };
    let spines = positive("spines", t.spines, "spines per plane, e.g. spines = 4")?;
    let given_up = positive(
        "uplinks",
        t.uplinks,
        "parallel links per leaf-spine pair, e.g. uplinks = 1",
    )?;
    let over = positive(
        "oversubscription",
        t.oversubscription,
        "a leaf's downlink over uplink capacity: 1 = non-blocking, 2 = half the uplinks",
    )?;
    if let Some(u) = given_up {
        if over.is_some() {
            return Err(ModelError::new(
                at.key("oversubscription"),
                "give `oversubscription` or `uplinks`, not both",
            )
            .hint("oversubscription sizes each leaf's uplinks from its servers; uplinks sets the links per leaf-spine pair directly"));
        }
        let s = spines.ok_or_else(|| {
            ModelError::new(at.key("uplinks"), "`uplinks` needs `spines` too")
                .hint("spines = 4 (per plane); each leaf then has spines x uplinks uplinks")
        })?;
        return Ok((s, u));
    }
    let o = over.unwrap_or(1);
    // Leaf uplinks = servers x host rate / (oversubscription x fabric rate).
    let down = u128::from(per_leaf) * u128::from(host.rate.bps());
    let unit = u128::from(o) * u128::from(fabric.rate.bps());
    if down % unit != 0 {
        let want = down as f64 / o as f64 / 1e9;
        return Err(ModelError::new(
            at.key("oversubscription"),
            format!(
                "oversubscription = {o}: {per_leaf} servers per leaf at {} need {want} Gb/s of uplinks, not a whole number of {} fabric links",
                gbps(host),
                gbps(fabric)
            ),
        )
        .hint("pick servers_per_leaf, oversubscription or the link rates so that it divides, or give spines and uplinks"));
    }
    let n_up = (down / unit) as u32;
    match spines {
        None => Ok((n_up, 1)),
        Some(s) if n_up % s == 0 => Ok((s, n_up / s)),
        Some(s) => Err(ModelError::new(
            at.key("spines"),
            format!(
                "each leaf has {n_up} uplinks ({per_leaf} servers at {} over {} links, oversubscription {o}), which do not split evenly over {s} spines",
                gbps(host),
                gbps(fabric)
            ),
        )
        .hint(format!("a divisor of {n_up}, e.g. spines = {n_up} (one link to each), or leave spines out"))),
    }
}

/// The generated hosts and switches as TOML text (the links are the
/// caller's, as for every generated kind).
pub(crate) fn lowered_text(rail: &Rail, topo: &Topology, subnet: RailSubnet) -> String {
    let mut s = String::new();
    let spl = rail.servers_per_leaf;
    let per_rail = subnet == RailSubnet::PerRail;
    let len = if per_rail { 24 } else { 8 };
    for sv in 0..rail.servers {
        let (g, i) = (sv / spl, sv % spl);
        let _ = writeln!(s, "[[host]]\nname = \"server{sv}\"");
        if per_rail {
            let _ = writeln!(s, "gateway = \"10.0.{g}.254\"");
        }
        for r in 0..rail.nics_per_server {
            let _ = writeln!(
                s,
                "[[host.nic]]\nname = \"eth{r}\"\nip = \"10.{r}.{g}.{}/{len}\"",
                i + 1
            );
            if per_rail {
                let _ = writeln!(s, "gateway = \"10.{r}.{g}.254\"");
            }
        }
    }
    let switch = |s: &mut String, node: u32| {
        let name = &topo.nodes()[node as usize].name;
        let _ = writeln!(
            s,
            "[[switch]]\nname = \"{name}\"\nhash = \"murmur3\"\nhash_seed = {node}"
        );
    };
    let route = |s: &mut String, prefix: String, via: &[String]| {
        let _ = writeln!(
            s,
            "[[switch.route]]\nprefix = \"{prefix}\"\nvia = [{}]",
            via.join(", ")
        );
    };
    let u = rail.uplinks;
    for g in 0..rail.groups() {
        for r in 0..rail.nics_per_server {
            switch(&mut s, rail.leaf_node(g, r));
            let ups: Vec<String> = (1..=rail.spines * u).map(|k| format!("\"u{k}\"")).collect();
            for g2 in (0..rail.groups()).filter(|&g2| g2 != g) {
                route(&mut s, format!("10.{r}.{g2}.0/24"), &ups);
            }
            let plane = rail.plane_of(r);
            for r2 in (0..rail.nics_per_server).filter(|&r2| r2 != r && rail.plane_of(r2) == plane)
            {
                route(&mut s, format!("10.{r2}.0.0/16"), &ups);
            }
        }
    }
    for p in 0..rail.planes {
        for k in 0..rail.spines {
            switch(&mut s, rail.spine_node(p, k));
            for g in 0..rail.groups() {
                for r in (0..rail.nics_per_server).filter(|&r| rail.plane_of(r) == p) {
                    let j = rail.leaf_index_in_plane(g, r);
                    let via: Vec<String> = (1..=u).map(|l| format!("\"p{}\"", j * u + l)).collect();
                    route(&mut s, format!("10.{r}.{g}.0/24"), &via);
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::load_str;

    /// The scenario with `[topology]` keys `keys` and 400G links.
    fn load(keys: &str) -> Result<crate::Scenario, String> {
        let text =
            format!("[topology]\nkind = \"rail\"\n{keys}\nhost_link = {{ rate = \"400Gbps\" }}\n");
        load_str(Path::new("t.toml"), text, &[])
            .map(|l| l.scenario)
            .map_err(|e| e.to_string())
    }

    fn switch<'a>(sc: &'a crate::Scenario, name: &str) -> &'a crate::schema::SwitchCfg {
        sc.switches.iter().find(|s| s.name == name).unwrap()
    }

    fn uplinks(sc: &crate::Scenario, leaf: &str) -> usize {
        sc.links
            .iter()
            .filter(|l| l.a.starts_with(&format!("{leaf}.u")))
            .count()
    }

    #[test]
    fn four_servers_of_eight_rails_by_hand() {
        let sc = load("servers = 4").unwrap();
        // 4 hosts of 8 NICs, 8 leaves; non-blocking: 4 x 400G down, so
        // 4 x 400G up, one to each of 4 spines.
        assert_eq!(sc.hosts.len(), 4);
        assert!(sc.hosts.iter().all(|h| h.nics.len() == 8));
        assert_eq!(sc.switches.len(), 8 + 4);
        assert_eq!(sc.links.len(), 32 + 8 * 4);
        assert_eq!(uplinks(&sc, "su0_leaf5"), 4);
        // server2's NIC 3: rail 3, group 0, third server.
        let h = &sc.hosts[2];
        let n = &h.nics[3];
        assert_eq!(n.name, "eth3");
        assert_eq!(n.ip.unwrap().to_string(), "10.3.0.3/24");
        assert_eq!(n.gateway.unwrap().0.to_string(), "10.3.0.254");
        assert_eq!(h.gateway.unwrap().0.to_string(), "10.0.0.254");
        let link = sc.links.iter().find(|l| l.a == "server2.eth3").unwrap();
        assert_eq!(link.b, "su0_leaf3.p3");
        // Leaf 3 routes the 7 other rails up, ECMP over its 4 uplinks; a
        // spine routes each leaf's /24 down.
        let leaf = switch(&sc, "su0_leaf3");
        assert_eq!(leaf.routes.len(), 7);
        assert_eq!(leaf.routes[0].prefix.to_string(), "10.0.0.0/16");
        assert_eq!(leaf.routes[0].via, ["u1", "u2", "u3", "u4"]);
        let spine = switch(&sc, "plane0_spine2");
        assert_eq!(spine.routes.len(), 8);
        assert_eq!(spine.routes[3].prefix.to_string(), "10.3.0.0/24");
        assert_eq!(spine.routes[3].via, ["p4"]);
    }

    #[test]
    fn oversubscription_two_halves_the_uplinks() {
        for (keys, up) in [
            ("servers = 8\nnics_per_server = 2", 8),
            ("servers = 8\nnics_per_server = 2\noversubscription = 2", 4),
            ("servers = 8\nnics_per_server = 2\noversubscription = 4", 2),
            // 2 spines: the same 4 uplinks as 2 parallel pairs.
            (
                "servers = 8\nnics_per_server = 2\noversubscription = 2\nspines = 2",
                4,
            ),
        ] {
            let sc = load(keys).unwrap();
            assert_eq!(uplinks(&sc, "su0_leaf1"), up, "{keys}");
        }
        let sc =
            load("servers = 8\nnics_per_server = 2\noversubscription = 2\nspines = 2").unwrap();
        assert_eq!(sc.switches.len(), 2 + 2);
        assert_eq!(
            switch(&sc, "su0_leaf0").routes[0].via,
            ["u1", "u2", "u3", "u4"]
        );
    }

    #[test]
    fn groups_and_planes() {
        // 6 servers in groups of 4, 4 rails in 2 planes of 2 spines:
        // 2 groups x 4 leaves; each plane's 4 leaves x 2 spines.
        let sc = load(
            "servers = 6\nnics_per_server = 4\nservers_per_leaf = 4\nplanes = 2\nspines = 2\nuplinks = 1",
        )
        .unwrap();
        assert_eq!(sc.switches.len(), 8 + 2 * 2);
        assert_eq!(sc.links.len(), 6 * 4 + 8 * 2);
        // server5 is group 1's second server.
        let n = &sc.hosts[5].nics[2];
        assert_eq!(n.ip.unwrap().to_string(), "10.2.1.2/24");
        let link = sc.links.iter().find(|l| l.a == "server5.eth2").unwrap();
        assert_eq!(link.b, "su1_leaf2.p2");
        // su1_leaf2 (plane 0) routes rail 2 of group 0 and rail 0 (the
        // other rail of plane 0), never rails 1 or 3 (plane 1).
        let prefixes: Vec<String> = switch(&sc, "su1_leaf2")
            .routes
            .iter()
            .map(|r| r.prefix.to_string())
            .collect();
        assert_eq!(prefixes, ["10.2.0.0/24", "10.0.0.0/16"]);
        // Every leaf-spine link stays in its plane.
        for l in sc.links.iter().filter(|l| l.b.contains("spine")) {
            let r: u32 = l.a[l.a.find("leaf").unwrap() + 4..l.a.find('.').unwrap()]
                .parse()
                .unwrap();
            assert!(l.b.starts_with(&format!("plane{}_", r % 2)), "{l:?}");
        }
    }

    #[test]
    fn shared_subnet_puts_every_nic_in_one_slash_8() {
        let sc = load("servers = 2\nnics_per_server = 2\nsubnet = \"shared\"").unwrap();
        let n = &sc.hosts[1].nics[1];
        assert_eq!(n.ip.unwrap().to_string(), "10.1.0.2/8");
        assert!(n.gateway.is_none() && sc.hosts[1].gateway.is_none());
    }

    #[test]
    fn bad_values_name_their_key() {
        for (keys, key, says) in [
            ("", "topology", "needs `servers`"),
            ("servers = 0", "topology.servers", "out of range 1..="),
            (
                "servers = 2\nnics_per_server = 0",
                "topology.nics_per_server",
                "out of range 1..=256",
            ),
            (
                "servers = 300\nservers_per_leaf = 300",
                "topology.servers_per_leaf",
                "out of range 1..=253",
            ),
            (
                "servers = 2\nnics_per_server = 2\nplanes = 3",
                "topology.planes",
                "out of range 1..=2",
            ),
            (
                "servers = 3\noversubscription = 2",
                "topology.oversubscription",
                "600 Gb/s of uplinks, not a whole number of 400 Gb/s",
            ),
            ("servers = 4\nspines = 3", "topology.spines", "4 uplinks"),
            (
                "servers = 4\nuplinks = 1\noversubscription = 1",
                "topology.oversubscription",
                "not both",
            ),
            (
                "servers = 4\nuplinks = 2",
                "topology.uplinks",
                "needs `spines`",
            ),
            (
                "servers = 4\nhosts_per_leaf = 2",
                "topology.hosts_per_leaf",
                "not a key of kind = \"rail\"",
            ),
            (
                "servers = 4\nreroute = true",
                "topology.reroute",
                "not available",
            ),
            (
                "servers = 4\nsubnet = \"flat\"",
                "topology.subnet",
                "per-rail",
            ),
        ] {
            let e = load(keys).unwrap_err();
            assert!(
                e.contains(&format!("key `{key}`")) && e.contains(says) && e.contains("t.toml"),
                "{keys}: {e}"
            );
        }
    }
}
