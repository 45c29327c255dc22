//! Neighbour resolution as an instantaneous step at connection setup: what
//! the kernel's ARP would answer, by the rules in the [module
//! docs](super), without frames on the wire.

use std::collections::HashMap;

use core::net::Ipv4Addr;

use rocesim_model::time::Ps;
use rocesim_model::world::World;
use rocesim_model::world::host::{IfaceKind, Route};
use rocesim_model::world::neigh::{Step, reply_delay};
use rocesim_model::world::port::Owner;

/// A MAC and, for a host interface, its address.
pub(super) type Station = ([u8; 6], Option<Ipv4Addr>);

/// MACs (and IPs) reachable at layer 2 behind `port`: the host interface
/// there, or the switch and, unless it was entered through a routed port,
/// everything it bridges to.
pub(super) fn macs_behind(w: &World, port: u32) -> Vec<Station> {
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

/// Neighbour entries taught so far: (host, interface, address) → MAC.
pub(super) type Learned = HashMap<(u32, u32, Ipv4Addr), [u8; 6]>;

/// [`macs_behind`] of each port asked about, kept while the workloads are
/// built: the layer 2 around a host does not change then, and a flow file
/// of 100,000 flows asked the same few hundred ports 400,000 times.
#[derive(Default)]
pub(super) struct Behind(HashMap<u32, Vec<Station>>);

impl Behind {
    fn of(&mut self, w: &World, port: u32) -> &[Station] {
        self.0.entry(port).or_insert_with(|| macs_behind(w, port))
    }
}

/// Plays a connection's set-up ([`Step`]s) through the kernels' rules:
/// the MACs the client's and the server's QPs will send to, or the step
/// that failed and why (`true` when the failure is about the server's
/// address, the client's otherwise). `learned` keeps what earlier
/// requests taught.
pub(super) fn resolve_conn(
    w: &World,
    client: (u32, u32, Ipv4Addr),
    server: (u32, u32, Ipv4Addr),
    learned: &mut Learned,
    snapshots: &mut Vec<Learned>,
    behind: &mut Behind,
) -> Result<([u8; 6], [u8; 6]), (bool, String)> {
    resolve_steps(w, client, server, &Step::ALL, learned, snapshots, behind).map(|(c, s, _)| (c, s))
}

/// The client's and server's QP MACs and the client socket's address.
pub(super) type Resolved = ([u8; 6], [u8; 6], Ipv4Addr);

/// [`resolve_conn`]'s `steps` only; returns the MACs of the RoCE steps
/// (zero for those not taken) and the client socket's address.
pub(super) fn resolve_steps(
    w: &World,
    client: (u32, u32, Ipv4Addr),
    server: (u32, u32, Ipv4Addr),
    steps: &[Step],
    learned: &mut Learned,
    snapshots: &mut Vec<Learned>,
    behind: &mut Behind,
) -> Result<Resolved, (bool, String)> {
    let (mut client_sock, mut c_dmac, mut s_dmac) = (client.2, [0; 6], [0; 6]);
    for &step in steps {
        let host = if step.on_server() { server.0 } else { client.0 };
        let dst = match step {
            Step::ClientSocket | Step::ClientRoce => server.2,
            Step::ServerSocketReply => client_sock,
            Step::ServerRoce => client.2,
        };
        let about_server = matches!(step, Step::ClientSocket | Step::ClientRoce);
        let route = step
            .route(
                &w.hosts[host as usize],
                (client.1, client.2),
                (server.1, server.2),
                client_sock,
            )
            .map_err(|e| (about_server, e))?;
        let mac = resolve(w, host, route, dst, learned, behind).map_err(|e| (about_server, e))?;
        match step {
            Step::ClientSocket => client_sock = route.sender_ip,
            Step::ServerSocketReply => {}
            Step::ServerRoce => s_dmac = mac,
            Step::ClientRoce => c_dmac = mac,
        }
        snapshots.push(learned.clone());
    }
    Ok((c_dmac, s_dmac, client_sock))
}

/// Resolves `dst_ip` along `route` of `host`: the destination MAC it will
/// use. The answering interfaces learn the asker; the first reply (by the
/// seeded reply delays) wins.
fn resolve(
    w: &World,
    host: u32,
    route: Route,
    dst_ip: Ipv4Addr,
    learned: &mut Learned,
    behind: &mut Behind,
) -> Result<[u8; 6], String> {
    let h = &w.hosts[host as usize];
    let next_hop = route.next_hop;
    let e_if = h.iface(route.egress);
    if let Some(&mac) = learned.get(&(host, route.egress, next_hop)) {
        return Ok(mac);
    }
    // Who answers: walk what is behind the egress interface's port.
    let e_port = match e_if.kind {
        IfaceKind::Nic(n) => h.nic(n).port(),
        IfaceKind::Bond(b) => w.bonds[b as usize].bond.slaves[0].port,
    };
    let reach = behind.of(w, w.ports[e_port as usize].peer());
    // Switch router MACs answer for the gateway.
    if next_hop != dst_ip || !e_if.ip.is_some_and(|n| n.contains(dst_ip)) {
        if let Some((mac, _)) = reach
            .iter()
            .find(|(m, _)| w.switches.iter().any(|s| s.mac() == *m))
        {
            learned.insert((host, route.egress, next_hop), *mac);
            return Ok(*mac);
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
    let mut answer: Option<(Ps, [u8; 6])> = None;
    for (ri, rf) in th.ifaces.iter().enumerate() {
        let reachable = reach.iter().any(|(m, _)| *m == rf.mac);
        if !reachable || ti as u32 == host && ri as u32 == route.egress {
            continue;
        }
        if th.arp_answers(ri as u32, next_hop, route.sender_ip) {
            learned.insert((ti as u32, ri as u32, route.sender_ip), e_if.mac);
            let d = reply_delay(w.seed, ti as u32, ri as u32, route.sender_ip, next_hop);
            if answer.is_none_or(|(best, _)| d < best) {
                answer = Some((d, rf.mac));
            }
        }
    }
    match answer {
        Some((_, mac)) => {
            learned.insert((host, route.egress, next_hop), mac);
            Ok(mac)
        }
        None => Err(format!(
            "ARP for {next_hop} from {}.{} gets no answer: host `{}` has arp_ignore = {} and no interface reachable from {}.{} owns {next_hop}",
            h.name, e_if.name, th.name, th.arp_ignore, h.name, e_if.name
        )),
    }
}
