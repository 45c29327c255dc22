//! The fabric: switches, links and the ports they create, LAGs, routes,
//! the bridging-loop check, and the tables switches start with.

use std::collections::HashMap;

use roce_codec::hash::EcmpHash;

use super::names::{Nodes, host_key, iface_key, root, switch_key};
use super::neighbours::macs_behind;
use crate::diagnostic::{KeyPath, ModelError};
use crate::schema::{LinkCfg, LinkState, Scenario, SwitchHash, fmt_mac};
use rocesim_model::engine::Event;
use rocesim_model::rng::component_rng;
use rocesim_model::time::{Ps, Rate};
use rocesim_model::world::World;
use rocesim_model::world::link::Link;
use rocesim_model::world::port::{Owner, Port};
use rocesim_model::world::switch::{Group, Switch};
use rustc_hash::FxHashMap as FastMap;

/// Ports by endpoint name (`host.nic`, `switch.port`), as taps name them.
pub(super) type PortNames = HashMap<String, u32>;

/// What cabling the links reads and fills: hosts and switches by name,
/// and the ports cabled so far.
struct Cabling<'a> {
    nodes: &'a Nodes<'a>,
    ports: PortNames,
}

/// Adds switches, links and ports, LAGs and routes; returns the port
/// names.
pub(super) fn add_fabric(
    w: &mut World,
    sc: &Scenario,
    nodes: &Nodes,
) -> Result<PortNames, ModelError> {
    for (si, scfg) in sc.switches.iter().enumerate() {
        if scfg.buffer.0 < 16 * 1024 {
            return Err(ModelError::new(
                switch_key(si).key("buffer"),
                "a switch buffer below 16 KiB cannot hold a jumbo frame per port",
            ));
        }
        let mac = scfg.mac.map_or(
            [0x02, 0x5e, 0x00, 0x00, (si >> 8) as u8, (si + 1) as u8],
            |m| m.0,
        );
        let hash = match scfg.hash {
            SwitchHash::Crc32 => EcmpHash::Crc32 {
                seed: scfg.hash_seed,
            },
            SwitchHash::LinuxL34 => EcmpHash::LinuxL34,
            SwitchHash::Xor16 => EcmpHash::Xor16,
            SwitchHash::Murmur3 => EcmpHash::Murmur3 {
                seed: scfg.hash_seed,
            },
        };
        let s = Switch::new(scfg.name.clone(), mac, hash, scfg.trust, scfg.buffer.0);
        w.switches.push(s);
    }
    let mut cab = Cabling {
        nodes,
        ports: PortNames::new(),
    };
    for (li, lc) in sc.links.iter().enumerate() {
        add_link(w, sc, &mut cab, li, lc)?;
    }
    for (hi, h) in w.hosts.iter().enumerate() {
        for (ni, n) in h.nics.iter().enumerate() {
            if n.port == u32::MAX {
                return Err(ModelError::new(
                    host_key(hi).key("nic").index(ni).key("name"),
                    format!("NIC `{}.{}` is not cabled", h.name, n.name),
                )
                .hint(format!("add a [[link]] with a = \"{}.{}\"", h.name, n.name)));
            }
        }
    }
    for b in &mut w.bonds {
        for s in b.bond.slaves.iter_mut() {
            s.port = w.hosts[b.host as usize].nics[s.nic as usize].port;
        }
    }
    for si in 0..sc.switches.len() {
        add_groups(w, sc, si)?;
    }
    for si in 0..sc.switches.len() {
        add_routes(w, sc, si)?;
    }
    check_bridging_loops(w, sc)?;
    check_unique_macs(w, sc)?;
    super::qos::add_ecn(w, sc)?;
    super::qos::add_pause_delays(w, sc)?;
    super::qos::add_mmu(w, sc)?;
    super::qos::add_host_pfc(w, sc)?;
    super::qos::add_pause_obeying(w, sc)?;
    super::ets::add_ets(w, sc)?;
    for si in 0..w.switches.len() {
        prelearn(w, si);
    }
    Ok(cab.ports)
}

/// One station, one MAC: a MAC on two interfaces (or a switch) makes the
/// FDBs flap between them. Switches are the exception when no bridged
/// link joins them: a router's MAC is seen only in the layer-2 domain it
/// bridges, so two routers in different domains may share one (an anycast
/// gateway: a host bonded to both reaches either with the same frame).
fn check_unique_macs(w: &World, sc: &Scenario) -> Result<(), ModelError> {
    let domain = bridged_domains(w);
    // The MAC → who has it, and its bridged domain if a switch.
    let mut macs: HashMap<[u8; 6], Vec<(String, Option<usize>)>> = HashMap::new();
    let stations = w.hosts.iter().enumerate().flat_map(|(hi, h)| {
        h.ifaces.iter().map(move |f| {
            (
                f.mac,
                iface_key(sc, hi, &f.name).key("mac"),
                format!("{}.{}", h.name, f.name),
                None,
            )
        })
    });
    let switches = w.switches.iter().enumerate().map(|(si, s)| {
        (
            s.mac(),
            switch_key(si).key("mac"),
            s.name().to_string(),
            Some(domain[si]),
        )
    });
    for (mac, at, who, domain) in stations.chain(switches) {
        let holders = macs.entry(mac).or_default();
        let clash = holders
            .iter()
            .find(|(_, d)| domain.is_none() || d.is_none() || *d == domain);
        if let Some((prev, _)) = clash {
            return Err(ModelError::new(
                at,
                format!(
                    "MAC {} of `{who}` is also the MAC of `{prev}`",
                    fmt_mac(&mac)
                ),
            )
            .hint("give each interface its own `mac`, or leave it out to have one assigned"));
        }
        holders.push((who, domain));
    }
    Ok(())
}

/// A link and the ports at its ends; its scheduled carrier changes.
fn add_link(
    w: &mut World,
    sc: &Scenario,
    cab: &mut Cabling,
    li: usize,
    lc: &LinkCfg,
) -> Result<(), ModelError> {
    let at = root().key("link").index(li);
    if !(0.0..1.0).contains(&lc.loss) {
        return Err(ModelError::new(
            at.key("loss"),
            format!("loss {} must be a probability in [0, 1)", lc.loss),
        ));
    }
    if !(0.0..=1.0).contains(&lc.ce_mark) {
        return Err(ModelError::new(
            at.key("ce_mark"),
            format!("ce_mark {} must be a probability in [0, 1]", lc.ce_mark),
        )
        .hint("the share of ECT frames this link delivers CE-marked; 0 (default) marks none"));
    }
    if lc.delay.is_some() && lc.length.is_some() {
        return Err(ModelError::new(
            at.key("length"),
            "a link has a `delay` or a `length`, not both",
        )
        .hint("keep `length` (the propagation is 5 ns a metre) or `delay`, not both"));
    }
    let link = w.links.len() as u32;
    let a = add_port(w, sc, cab, &lc.a, at.key("a"), link, lc.rate.0)?;
    let b = add_port(w, sc, cab, &lc.b, at.key("b"), link, lc.rate.0)?;
    w.ports[a as usize].set_peer(b);
    w.ports[b as usize].set_peer(a);
    let name = lc
        .name
        .clone()
        .unwrap_or_else(|| format!("{}--{}", lc.a, lc.b));
    let mut last = Ps::ZERO;
    for (ei, ev) in lc.events.iter().enumerate() {
        if ev.at.0 < last {
            return Err(ModelError::new(
                at.key("event").index(ei).key("at"),
                "link events must be in time order",
            ));
        }
        last = ev.at.0;
        let up = ev.state == LinkState::Up;
        w.sched.at(ev.at.0, Event::Link { link, up });
    }
    let rng = component_rng(sc.seed, &format!("link:{name}"));
    w.links
        .push(Link::new(name, [a, b], lc.propagation(), lc.loss, rng));
    w.links[link as usize].set_ce_mark(lc.ce_mark);
    Ok(())
}

/// Creates the port for a link endpoint `node.port`.
fn add_port(
    w: &mut World,
    sc: &Scenario,
    cab: &mut Cabling,
    endpoint: &str,
    at: KeyPath,
    link: u32,
    rate: Rate,
) -> Result<u32, ModelError> {
    let Some((node, port)) = endpoint.split_once('.') else {
        return Err(ModelError::new(
            at,
            format!("endpoint `{endpoint}` must be `host.nic` or `switch.port`"),
        ));
    };
    if cab.ports.contains_key(endpoint) {
        return Err(ModelError::new(
            at,
            format!("`{endpoint}` is already cabled by another link"),
        ));
    }
    let id = w.ports.len() as u32;
    let (owner, extra_delay) = if let Some(hi) = cab.nodes.host(node) {
        let nics = &sc.hosts[hi].nics;
        let Some(ni) = nics.iter().position(|n| n.name == port) else {
            return Err(
                ModelError::new(at, format!("host `{node}` has no NIC `{port}`"))
                    .did_you_mean(port, nics.iter().map(|n| n.name.as_str())),
            );
        };
        if let Some(r) = nics[ni].rate {
            if r.0 != rate {
                return Err(ModelError::new(
                    at,
                    format!(
                        "NIC `{endpoint}` runs at {} but the link at {}",
                        rocesim_model::units::fmt_rate(r.0),
                        rocesim_model::units::fmt_rate(rate)
                    ),
                )
                .hint("make the link rate match the NIC, or drop the NIC's `rate`"));
            }
        }
        w.hosts[hi].nics[ni].port = id;
        let owner = Owner::Host {
            host: hi as u32,
            nic: ni as u32,
        };
        (owner, Ps::ZERO)
    } else if let Some(si) = cab.nodes.switch(node) {
        let local = w.switches[si].add_port(id);
        let owner = Owner::Switch {
            sw: si as u32,
            local,
        };
        (owner, sc.switches[si].latency.0)
    } else {
        let names = sc
            .hosts
            .iter()
            .map(|h| h.name.as_str())
            .chain(sc.switches.iter().map(|s| s.name.as_str()));
        return Err(
            ModelError::new(at, format!("no host or switch `{node}`")).did_you_mean(node, names)
        );
    };
    w.ports.push(Port::new(
        endpoint.to_string(),
        owner,
        link,
        rate,
        extra_delay,
    ));
    cab.ports.insert(endpoint.to_string(), id);
    Ok(id)
}

/// A switch's groups: its LAGs, then every other port alone.
fn add_groups(w: &mut World, sc: &Scenario, si: usize) -> Result<(), ModelError> {
    let scfg = &sc.switches[si];
    let sw = &w.switches[si];
    let local_names: Vec<String> = sw
        .ports()
        .iter()
        .map(|&p| {
            let full = w.ports[p as usize].name();
            full.split_once('.')
                .map_or(full.to_string(), |(_, b)| b.to_string())
        })
        .collect();
    let mut group_of = vec![u32::MAX; local_names.len()];
    let mut groups = Vec::new();
    for (gi, lag) in scfg.lags.iter().enumerate() {
        let at = switch_key(si).key("lag").index(gi).key("ports");
        if lag.ports.is_empty() {
            return Err(ModelError::new(at, "a LAG needs member ports"));
        }
        let mut members = Vec::new();
        for (pi, pn) in lag.ports.iter().enumerate() {
            let Some(l) = local_names.iter().position(|n| n == pn) else {
                return Err(ModelError::new(
                    at.index(pi),
                    format!(
                        "switch `{}` has no port `{pn}` (ports are created by [[link]] endpoints)",
                        scfg.name
                    ),
                )
                .did_you_mean(pn, local_names.iter().map(String::as_str)));
            };
            if group_of[l] != u32::MAX {
                return Err(ModelError::new(
                    at.index(pi),
                    format!("port `{pn}` is already in a LAG"),
                ));
            }
            group_of[l] = groups.len() as u32;
            members.push(l as u32);
        }
        groups.push(Group {
            name: lag.name.clone(),
            members,
        });
    }
    for (l, g) in group_of.iter_mut().enumerate() {
        if *g == u32::MAX {
            *g = groups.len() as u32;
            groups.push(Group {
                name: local_names[l].clone(),
                members: vec![l as u32],
            });
        }
    }
    w.switches[si].set_groups(groups, group_of);
    Ok(())
}

/// A switch's routes; their next hops become routed ports.
fn add_routes(w: &mut World, sc: &Scenario, si: usize) -> Result<(), ModelError> {
    let scfg = &sc.switches[si];
    for (ri, r) in scfg.routes.iter().enumerate() {
        let at = switch_key(si).key("route").index(ri).key("via");
        let mut hops = Vec::new();
        for (vi, v) in r.via.iter().enumerate() {
            let sw = &w.switches[si];
            let Some(g) = sw.groups().iter().position(|g| g.name == *v) else {
                let names = sw.groups().iter().map(|g| g.name.as_str());
                return Err(ModelError::new(
                    at.index(vi),
                    format!("switch `{}` has no port or LAG `{v}`", scfg.name),
                )
                .did_you_mean(v, names));
            };
            hops.push(w.next_hop(si as u32, g as u32));
        }
        if hops.is_empty() {
            return Err(ModelError::new(at, "a route needs at least one next hop"));
        }
        w.switches[si].add_route(r.prefix, hops);
    }
    Ok(())
}

/// Links between two switches with no routed end, as (link, (switch,
/// local port) at each end): the links that bridge layer 2.
fn bridged_links(w: &World) -> impl Iterator<Item = (usize, (u32, u32), (u32, u32))> + '_ {
    w.links.iter().enumerate().filter_map(|(li, l)| {
        let [a, b] = l.ends();
        let (Owner::Switch { sw: sa, local: la }, Owner::Switch { sw: sb, local: lb }) =
            (w.ports[a as usize].owner(), w.ports[b as usize].owner())
        else {
            return None;
        };
        let routed = w.switches[sa as usize].is_routed(la) || w.switches[sb as usize].is_routed(lb);
        (!routed).then_some((li, (sa, la), (sb, lb)))
    })
}

/// The root of `x` in a union-find forest, halving the path.
fn root_of(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Each switch's layer-2 domain: the smallest switch index among those
/// joined to it by bridged links.
fn bridged_domains(w: &World) -> Vec<usize> {
    let mut domain: Vec<usize> = (0..w.switches.len()).collect();
    for (_, (sa, _), (sb, _)) in bridged_links(w) {
        let (ra, rb) = (
            root_of(&mut domain, sa as usize),
            root_of(&mut domain, sb as usize),
        );
        domain[ra.max(rb)] = ra.min(rb);
    }
    (0..domain.len()).map(|s| root_of(&mut domain, s)).collect()
}

/// Refuses a bridging loop: no spanning tree is modelled, so a broadcast
/// or an unknown unicast frame would circle it forever and pre-learned
/// tables would point around it. Links between two switches count unless
/// either end is a routed port (a route `via`); the members of a LAG that
/// joins the same two groups count once.
fn check_bridging_loops(w: &World, sc: &Scenario) -> Result<(), ModelError> {
    let mut parent: Vec<usize> = (0..w.switches.len()).collect();
    let mut joined: Vec<((u32, u32), (u32, u32))> = Vec::new();
    for (li, (sa, la), (sb, lb)) in bridged_links(w) {
        let (s_a, s_b) = (&w.switches[sa as usize], &w.switches[sb as usize]);
        let ends = ((sa, s_a.group_of(la)), (sb, s_b.group_of(lb)));
        if joined.contains(&ends) {
            continue;
        }
        joined.push(ends);
        let (ra, rb) = (
            root_of(&mut parent, sa as usize),
            root_of(&mut parent, sb as usize),
        );
        if ra == rb {
            let ring: Vec<&str> = (0..w.switches.len())
                .filter(|&s| root_of(&mut parent, s) == ra)
                .map(|s| w.switches[s].name())
                .collect();
            return Err(ModelError::new(
                root().key("link").index(li),
                format!(
                    "link `{} -- {}` closes a bridging loop through switch{} {}; rocesim runs no spanning tree, so frames would circle it",
                    sc.links[li].a,
                    sc.links[li].b,
                    if ring.len() > 1 { "es" } else { "" },
                    ring.join(", ")
                ),
            )
            .hint("make parallel links one [[switch.lag]] on both switches, or route between the switches ([[switch.route]] via these ports)"));
        }
        parent[ra] = rb;
    }
    Ok(())
}

/// Pre-learned FDB and neighbour tables: what the switch would have
/// learned from the ARP and CM exchange before the first RoCE packet. The
/// FDB spans the bridged domain (it stops at routed ports); the neighbour
/// (ARP) table of the router holds only hosts cabled to this switch, so
/// routed traffic to farther hosts follows the routes.
fn prelearn(w: &mut World, si: usize) {
    let mut fdb = FastMap::default();
    let mut neigh = HashMap::new();
    let sw = &w.switches[si];
    for (g, group) in sw.groups().iter().enumerate() {
        let routed = sw.is_routed_group(g as u32);
        for &m in &group.members {
            let port = sw.ports()[m as usize];
            let peer = w.ports[port as usize].peer();
            let direct = w.ports[peer as usize].is_host_port();
            for (mac, ip) in macs_behind(w, peer) {
                if !routed {
                    fdb.entry(mac).or_insert(g as u32);
                }
                if let (true, Some(ip)) = (direct, ip) {
                    neigh.entry(ip).or_insert((mac, g as u32));
                }
            }
        }
    }
    w.switches[si].set_tables(fdb, neigh);
}
