//! Neighbour resolution as an instantaneous step at connection setup: what
//! the kernel's ARP would answer, by the rules in the [module
//! docs](super), without frames on the wire.

use std::collections::HashMap;

use core::net::Ipv4Addr;

use crate::world::World;
use crate::world::host::IfaceKind;
use crate::world::port::Owner;

/// A neighbour entry a host learned from an ARP request: (host, IP, MAC).
pub(super) type Learned = (u32, Ipv4Addr, [u8; 6]);

/// MACs (and IPs) reachable at layer 2 behind `port`: the host interface
/// there, or the switch and, unless it was entered through a routed port,
/// everything it bridges to.
pub(super) fn macs_behind(w: &World, port: u32) -> Vec<([u8; 6], Option<Ipv4Addr>)> {
    let mut out = Vec::new();
    let mut seen = vec![false; w.ports.len()];
    let mut stack = vec![port];
    while let Some(p) = stack.pop() {
        if seen[p as usize] {
            continue;
        }
        seen[p as usize] = true;
        match w.ports[p as usize].owner() {
            Owner::Host { host, nic } => {
                let h = &w.hosts[host as usize];
                let f = h.iface(h.nic(nic).iface());
                out.push((f.mac, f.ip.map(|i| i.addr)));
            }
            Owner::Switch { sw, local } => {
                let s = &w.switches[sw as usize];
                out.push((s.mac(), None));
                if s.is_routed(local) {
                    continue;
                }
                for (l, &other) in s.ports().iter().enumerate() {
                    seen[other as usize] = true;
                    let peer = w.ports[other as usize].peer();
                    if !seen[peer as usize] && !s.is_routed(l as u32) {
                        stack.push(peer);
                    }
                }
            }
        }
    }
    out
}

/// Resolves `dst_ip` for interface `iface` of `host`: the destination MAC
/// it will use, and the entries the answering host learned from the
/// request. `learned` holds what earlier requests taught.
pub(super) fn resolve(
    w: &World,
    host: u32,
    iface: u32,
    dst_ip: Ipv4Addr,
    learned: &HashMap<(u32, Ipv4Addr), [u8; 6]>,
) -> Result<([u8; 6], Vec<Learned>), String> {
    let h = &w.hosts[host as usize];
    let route = h.route(iface, dst_ip)?;
    let next_hop = route.next_hop;
    let e_if = h.iface(route.egress);
    if let Some(&mac) = learned.get(&(host, next_hop)) {
        return Ok((mac, vec![]));
    }
    // Who answers: walk what is behind the egress interface's port.
    let e_port = match e_if.kind {
        IfaceKind::Nic(n) => h.nic(n).port(),
        IfaceKind::Bond(b) => w.bonds[b as usize].bond.slaves[0].port,
    };
    let reach = macs_behind(w, w.ports[e_port as usize].peer());
    // Switch router MACs answer for the gateway.
    if next_hop != dst_ip || !e_if.ip.is_some_and(|n| n.contains(dst_ip)) {
        if let Some((mac, _)) = reach
            .iter()
            .find(|(m, _)| w.switches.iter().any(|s| s.mac() == *m))
        {
            return Ok((*mac, vec![]));
        }
        return Err(format!(
            "no router behind {}.{} answers for gateway {next_hop}",
            h.name, e_if.name
        ));
    }
    let Some((ti, th)) = w.hosts.iter().enumerate().find(|(_, t)| {
        t.ifaces
            .iter()
            .any(|f| f.ip.is_some_and(|n| n.addr == next_hop))
    }) else {
        return Err(format!("no host owns {next_hop}"));
    };
    let mut learned_out = Vec::new();
    let mut answer = None;
    for (ri, rf) in th.ifaces.iter().enumerate() {
        let reachable = reach.iter().any(|(m, _)| *m == rf.mac);
        if !reachable || ti as u32 == host && ri as u32 == route.egress {
            continue;
        }
        if th.arp_answers(ri as u32, next_hop, route.sender_ip) {
            learned_out.push((ti as u32, route.sender_ip, e_if.mac));
            answer.get_or_insert(rf.mac);
        }
    }
    match answer {
        Some(mac) => Ok((mac, learned_out)),
        None => Err(format!(
            "ARP for {next_hop} from {}.{} gets no answer: host `{}` has arp_ignore = {} and no interface reachable from {}.{} owns {next_hop}",
            h.name, e_if.name, th.name, th.arp_ignore, h.name, e_if.name
        )),
    }
}
