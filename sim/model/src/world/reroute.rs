//! Re-routing a generated fabric when a link changes (`[topology] reroute
//! = true`): every switch's routes are computed again over the links that
//! are up, at the instant of the change, as the HPCC reference does on
//! `LINK_DOWN` (`TakeDownLink` recomputes every route and clears every
//! table).
//!
//! ```text
//!  Link{up/down} ──▶ link_change (carrier, queues) ──▶ reroute
//!                                                       │ ecmp_routes_over(topology, link is up)
//!                                                       ▼ route_table per switch
//!                                      Switch::replace_routes (next hops: groups + peer MACs)
//! ```
//!
//! Without it a switch only stops picking a dead member of a next-hop set,
//! which is what switch hardware does at once; a destination whose every
//! next hop died is then unreachable from that switch, and the switches
//! upstream keep sending toward it. The tables are built by the same
//! function the fabric's lowering uses (`topology::route_table`), so before
//! any change they are the generated ones, next hops in the same order
//! (the order ECMP's hash indexes).

use std::sync::Arc;

use super::{Owner, World};
use crate::net::IpNet;
use crate::topology::{LinkId, NodeId, Topology, ecmp_routes_over, route_table};
use crate::world::switch::NextHop;

/// What re-routing needs: the generated topology and where its links and
/// switches are in the world.
#[derive(Debug)]
pub struct Rerouter {
    pub topo: Arc<Topology>,
    /// Per topology link, the world link (`None`: a link between hosts).
    pub link: Vec<Option<u32>>,
    /// Per topology node, the world switch (`None`: a host).
    switch: Vec<Option<u32>>,
}

impl Rerouter {
    /// Maps `topo` onto `w`'s switches (by name) and links (through the
    /// switch port each link ends on, by its name), as the lowering named
    /// them.
    pub fn new(w: &World, topo: Arc<Topology>) -> Result<Rerouter, String> {
        let switch: Vec<Option<u32>> = topo
            .nodes()
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if !topo.is_switch(NodeId(i as u32)) {
                    return Ok(None);
                }
                w.switches
                    .iter()
                    .position(|s| s.name() == n.name)
                    .map(|s| Some(s as u32))
                    .ok_or_else(|| format!("no switch `{}` to re-route", n.name))
            })
            .collect::<Result<_, _>>()?;
        let mut link = Vec::with_capacity(topo.links().len());
        for (i, l) in topo.links().iter().enumerate() {
            let id = LinkId(i as u32);
            let end = [l.a, l.b]
                .into_iter()
                .find(|&n| switch[n.0 as usize].is_some());
            link.push(match end {
                None => None,
                Some(n) => {
                    let s = &w.switches[switch[n.0 as usize].unwrap_or(0) as usize];
                    let g = group_of(w, s.name(), &topo, id, n)?;
                    let port = s.ports()[s.groups()[g as usize].members[0] as usize];
                    Some(w.ports[port as usize].link())
                }
            });
        }
        Ok(Rerouter { topo, link, switch })
    }
}

/// The group of switch `name` that `link` of the topology ends on at node
/// `at`: the one named as the lowering named its port.
fn group_of(
    w: &World,
    name: &str,
    topo: &Topology,
    link: LinkId,
    at: NodeId,
) -> Result<u32, String> {
    let port = topo.local_port_name(link, at);
    let s = w
        .switches
        .iter()
        .find(|s| s.name() == name)
        .ok_or_else(|| format!("no switch `{name}`"))?;
    s.groups()
        .iter()
        .position(|g| g.name == port)
        .map(|g| g as u32)
        .ok_or_else(|| format!("switch `{name}` has no port `{port}` to re-route by"))
}

impl World {
    /// Recomputes every switch's routes over the links up now (see the
    /// module docs); a no-op unless the fabric re-routes.
    pub fn reroute(&mut self) {
        let Some(r) = self.reroute.take() else {
            return;
        };
        let up = |l: LinkId| r.link[l.0 as usize].is_none_or(|wl| self.links[wl as usize].is_up());
        // Only a switch with 65,535 distinct next-hop sets fails, and
        // then it failed at build already.
        if let Ok(routes) = ecmp_routes_over(&r.topo, up) {
            for (n, si) in r.switch.iter().enumerate() {
                let Some(si) = *si else { continue };
                let node = NodeId(n as u32);
                let table: Vec<(IpNet, Vec<NextHop>)> = route_table(&r.topo, &routes, node)
                    .into_iter()
                    .map(|tr| {
                        let name = self.switches[si as usize].name().to_string();
                        let hops = tr
                            .via
                            .iter()
                            .filter_map(|&l| group_of(self, &name, &r.topo, l, node).ok())
                            .map(|g| self.next_hop(si, g))
                            .collect();
                        let [a, b, c, d] = tr.prefix;
                        (
                            IpNet {
                                addr: core::net::Ipv4Addr::new(a, b, c, d),
                                prefix: tr.len,
                            },
                            hops,
                        )
                    })
                    .collect();
                self.switches[si as usize].replace_routes(table);
            }
        }
        self.reroute = Some(r);
    }

    /// The next hop through group `g` of switch `si`: the group and the
    /// MAC of whatever is at the other end of its first member.
    pub fn next_hop(&self, si: u32, g: u32) -> NextHop {
        let sw = &self.switches[si as usize];
        let port = sw.ports()[sw.groups()[g as usize].members[0] as usize];
        let peer = self.ports[port as usize].peer();
        let mac = match self.ports[peer as usize].owner() {
            Owner::Switch { sw: o, .. } => self.switches[o as usize].mac(),
            Owner::Host { host, nic } => {
                let h = &self.hosts[host as usize];
                h.iface(h.nic(nic).iface()).mac
            }
        };
        NextHop { group: g, mac }
    }
}
