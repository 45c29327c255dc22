//! ARP as frames on the wire (`sim.arp = "frames"`).
//!
//! The same kernel rules as the instantaneous model in [`super::build`],
//! played out with real ARP frames before a workload's first packet:
//!
//! ```text
//!  client host: route → egress E, next hop, sender IP (arp_announce)
//!     E ── who-has next hop? tell sender (broadcast) ──▶ switches flood
//!  every host receiving it: next hop local? arp_ignore allows on this NIC?
//!     → learn sender IP → requester MAC, reply from the receiving NIC
//!  requester: the first reply wins (later ones fall in `locktime`)
//!  server host: its own entry for the client, learned or resolved likewise
//!  both known → the QPs get their destination MACs and the workload starts
//! ```
//!
//! Next hops that are routers (switch gateways) answer at once: switches do
//! not run an ARP responder here. An unanswered request (lost on a lossy or
//! dead link) is sent again every second, the kernel's `retrans_time`. The
//! kernel gives up after `mcast_solicit` (3) probes and the tool fails to
//! connect; here the setup keeps trying, so the workload starts late
//! instead of never.

use core::net::Ipv4Addr;

use roce_codec::IbRepr;
use roce_codec::frame::{EthRepr, VlanTag};
use roce_codec::hash::bond_xmit_hash;

use super::port::DropReason;
use super::{IfaceKind, Role, World};
use crate::engine::Event;
use crate::packet::{L3, Packet, PacketId};
use crate::time::Ps;

const BROADCAST: [u8; 6] = [0xff; 6];
/// The kernel's neighbour `retrans_time`: 1 s between ARP probes.
const ARP_RETRANS: Ps = Ps::from_ms(1000);

/// An ARP request not answered yet.
pub(crate) struct PendingArp {
    host: u32,
    next_hop: Ipv4Addr,
    /// The interface it leaves and the sender address it carries.
    egress: u32,
    sender_ip: Ipv4Addr,
    /// Connections waiting for the answer.
    waiters: Vec<u32>,
}

/// The connection setups of the workloads and the ARP requests they wait
/// for.
#[derive(Default)]
pub(crate) struct ConnSetup {
    pub(super) conns: Vec<Conn>,
    pending: Vec<PendingArp>,
}

/// One workload's connection setup.
pub(crate) struct Conn {
    pub(crate) client: (u32, u32),
    pub(crate) server: (u32, u32),
    pub(crate) client_ip: Ipv4Addr,
    pub(crate) server_ip: Ipv4Addr,
    /// The instantaneous model's answers, used for router next hops.
    pub(crate) client_dmac_router: Option<[u8; 6]>,
    pub(crate) server_dmac_router: Option<[u8; 6]>,
    pub(crate) client_dmac: Option<[u8; 6]>,
    pub(crate) server_dmac: Option<[u8; 6]>,
    pub(crate) clients: Vec<u32>,
    pub(crate) servers: Vec<u32>,
    pub(crate) started: bool,
}

impl World {
    /// Advances a connection's setup as far as the neighbour tables allow.
    pub(crate) fn conn_step(&mut self, c: u32) {
        let now = self.now();
        for side in [Role::Client, Role::Server] {
            let conn = &self.setup.conns[c as usize];
            let (known, (host, iface), dst, router) = match side {
                Role::Client => (
                    conn.client_dmac,
                    conn.client,
                    conn.server_ip,
                    conn.client_dmac_router,
                ),
                Role::Server => (
                    conn.server_dmac,
                    conn.server,
                    conn.client_ip,
                    conn.server_dmac_router,
                ),
            };
            if known.is_some() {
                continue;
            }
            let Ok(route) = self.hosts[host as usize].route(iface, dst) else {
                return;
            };
            let next_hop = route.next_hop;
            let mac = if next_hop != dst {
                router
            } else {
                self.hosts[host as usize].neigh.get(&next_hop).copied()
            };
            match mac {
                Some(m) => {
                    let conn = &mut self.setup.conns[c as usize];
                    match side {
                        Role::Client => conn.client_dmac = Some(m),
                        Role::Server => conn.server_dmac = Some(m),
                    }
                }
                None => {
                    if let Some(p) = self
                        .setup
                        .pending
                        .iter_mut()
                        .find(|p| p.host == host && p.next_hop == next_hop)
                    {
                        if !p.waiters.contains(&c) {
                            p.waiters.push(c);
                        }
                    } else {
                        self.setup.pending.push(PendingArp {
                            host,
                            next_hop,
                            egress: route.egress,
                            sender_ip: route.sender_ip,
                            waiters: vec![c],
                        });
                        self.solicit(host, next_hop);
                    }
                    return;
                }
            }
        }
        let conn = &mut self.setup.conns[c as usize];
        if conn.started {
            return;
        }
        conn.started = true;
        let (cm, sm) = (conn.client_dmac.unwrap(), conn.server_dmac.unwrap());
        for &q in &conn.clients {
            self.qps[q as usize].eth.dst = cm;
        }
        for &q in &conn.servers {
            self.qps[q as usize].eth.dst = sm;
        }
        let clients = conn.clients.clone();
        for q in clients {
            self.drive_at(q, now);
        }
    }

    /// Broadcasts the pending request of `host` for `next_hop` and arms
    /// its retransmission.
    fn solicit(&mut self, host: u32, next_hop: Ipv4Addr) {
        let Some(p) = self
            .setup
            .pending
            .iter()
            .find(|p| p.host == host && p.next_hop == next_hop)
        else {
            return;
        };
        let (egress, sender_ip) = (p.egress, p.sender_ip);
        self.send_arp(host, egress, 1, BROADCAST, sender_ip, [0; 6], next_hop);
        let at = self.now() + ARP_RETRANS;
        self.sched.at(at, Event::ArpRetry { host, next_hop });
    }

    /// The retransmission timer of a request: sends it again if it is
    /// still unanswered. Returns whether it did.
    pub(crate) fn arp_retry(&mut self, host: u32, next_hop: Ipv4Addr) -> bool {
        let waiting = self
            .setup
            .pending
            .iter()
            .any(|p| p.host == host && p.next_hop == next_hop);
        if waiting {
            self.solicit(host, next_hop);
        }
        waiting
    }

    /// Queues an ARP frame on the port that interface `iface` of `host`
    /// transmits kernel traffic on.
    #[allow(clippy::too_many_arguments)]
    fn send_arp(
        &mut self,
        host: u32,
        iface: u32,
        op: u16,
        dst: [u8; 6],
        spa: Ipv4Addr,
        tha: [u8; 6],
        tpa: Ipv4Addr,
    ) {
        let now = self.now();
        let h = &self.hosts[host as usize];
        let f = &h.ifaces[iface as usize];
        let mut pkt = Packet {
            eth: EthRepr { dst, src: f.mac },
            vlan: f.vlan.map(|vid| VlanTag::dot1q(vid, 0)),
            l3: L3::Arp {
                op,
                sha: f.mac,
                spa,
                tha,
                tpa,
            },
            ib: IbRepr::default(),
            prio: 0,
            frame_len: 0,
            src_qp: u32::MAX,
            ingress: u32::MAX,
            born: now,
        };
        pkt.frame_len = Packet::compute_frame_len(pkt.vlan.is_some(), &pkt.l3, &pkt.ib);
        let port = match f.kind {
            IfaceKind::Nic(n) => h.nics[n as usize].port,
            IfaceKind::Bond(b) => {
                // Kernel traffic goes through the bond driver itself.
                let bond = &self.bonds[b as usize].bond;
                let hash = bond_xmit_hash(bond.policy.codec(), &pkt.flow_keys());
                bond.slaves[bond.kernel_slave(hash)].port
            }
        };
        let len = pkt.frame_len;
        let id = self.pool.alloc(pkt);
        let p = &mut self.ports[port as usize];
        p.push(0, id, len);
        if !p.busy() {
            self.pump(port);
        }
    }

    /// An ARP frame reached interface `iface` of `host`.
    pub(crate) fn arp_receive(&mut self, port: u32, host: u32, iface: u32, id: PacketId) {
        let pkt = *self.pool.get(id);
        let L3::Arp {
            op, sha, spa, tpa, ..
        } = pkt.l3
        else {
            unreachable!()
        };
        let h = &self.hosts[host as usize];
        let r = &h.ifaces[iface as usize];
        if pkt.eth.dst != BROADCAST && pkt.eth.dst != r.mac {
            return self.drop_frame(port, id, DropReason::NotOurs);
        }
        self.pool.free(id);
        match op {
            // A request this interface answers: learn the asker, reply.
            1 if h.arp_answers(iface, tpa, spa) => {
                self.hosts[host as usize].neigh.insert(spa, sha);
                self.send_arp(host, iface, 2, sha, tpa, sha, spa);
            }
            2 => {
                let Some(i) = self
                    .setup
                    .pending
                    .iter()
                    .position(|p| p.host == host && p.next_hop == spa)
                else {
                    // Not asked for, or a later answer inside locktime.
                    return;
                };
                let waiters = self.setup.pending.swap_remove(i).waiters;
                self.hosts[host as usize].neigh.insert(spa, sha);
                for c in waiters {
                    self.conn_step(c);
                }
            }
            _ => {}
        }
    }
}
