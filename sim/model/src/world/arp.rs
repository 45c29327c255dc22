//! ARP as frames on the wire (`sim.arp = "frames"`).
//!
//! The same kernel rules as the instantaneous model of the scenario crate's
//! build (`rocesim_scenario::build`),
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
use roce_codec::hash::bond_xmit_hash;

use super::host::Route;
use super::neigh::{Step, reply_delay};
use super::port::DropReason;
use super::{IfaceKind, World};
use crate::engine::Event;
use crate::packet::{L3, Packet, PacketId};
use crate::time::Ps;

const BROADCAST: [u8; 6] = [0xff; 6];
/// The kernel's neighbour `retrans_time`: 1 s between ARP probes.
const ARP_RETRANS: Ps = Ps::from_ms(1000);

/// An ARP request not answered yet.
pub struct PendingArp {
    host: u32,
    /// The interface it leaves (whose neighbour table learns the answer)
    /// and the sender address it carries.
    egress: u32,
    next_hop: Ipv4Addr,
    sender_ip: Ipv4Addr,
    /// Connections waiting for the answer.
    waiters: Vec<u32>,
}

/// The connection setups of the workloads and the ARP requests they wait
/// for.
#[derive(Default)]
pub struct ConnSetup {
    pub conns: Vec<Conn>,
    pending: Vec<PendingArp>,
}

/// One workload's connection setup.
pub struct Conn {
    pub client: (u32, u32),
    pub server: (u32, u32),
    pub client_ip: Ipv4Addr,
    pub server_ip: Ipv4Addr,
    /// The instantaneous model's answers, used for router next hops.
    pub client_dmac_router: Option<[u8; 6]>,
    pub server_dmac_router: Option<[u8; 6]>,
    pub client_dmac: Option<[u8; 6]>,
    pub server_dmac: Option<[u8; 6]>,
    pub clients: Vec<u32>,
    pub servers: Vec<u32>,
    /// The next of the [`Step`]s to make, and the client socket's source
    /// address (known once step 1 is routed).
    pub step: usize,
    pub client_sock: Ipv4Addr,
    pub started: bool,
    /// Its socket set-up (`connect = "socket"`), which starts the clients.
    pub socket: Option<u32>,
    /// Its RDMA CM set-up (`connect = "rdma_cm"`), which starts them.
    pub cm: Option<u32>,
    /// The steps may run up to here: with a socket set-up each waits for
    /// the segment that makes a kernel take it (`world::connect`).
    pub gate: usize,
}

impl World {
    /// Advances a connection's setup as far as the neighbour tables allow.
    pub fn conn_step(&mut self, c: u32) {
        let now = self.now();
        while let Some(&step) = Step::ALL.get(self.setup.conns[c as usize].step) {
            let conn = &self.setup.conns[c as usize];
            if conn.step >= conn.gate {
                break;
            }
            let (host, router, dst) = match step {
                Step::ClientSocket => (conn.client.0, None, conn.server_ip),
                Step::ServerSocketReply => (conn.server.0, None, conn.client_sock),
                Step::ServerRoce => (conn.server.0, conn.server_dmac_router, conn.client_ip),
                Step::ClientRoce => (conn.client.0, conn.client_dmac_router, conn.server_ip),
            };
            let h = &self.hosts[host as usize];
            let Ok(route) = step.route(
                h,
                (conn.client.1, conn.client_ip),
                (conn.server.1, conn.server_ip),
                conn.client_sock,
            ) else {
                return;
            };
            let next_hop = route.next_hop;
            let mac = if next_hop != dst {
                // A router answers at once; a socket step needs nothing
                // from it.
                router.or(Some([0; 6]))
            } else {
                h.neigh.get(&(route.egress, next_hop)).copied()
            };
            let Some(m) = mac else {
                self.request(c, host, route);
                return;
            };
            let conn = &mut self.setup.conns[c as usize];
            match step {
                Step::ClientSocket => conn.client_sock = route.sender_ip,
                Step::ServerSocketReply => {}
                Step::ServerRoce => conn.server_dmac = Some(m),
                Step::ClientRoce => conn.client_dmac = Some(m),
            }
            conn.step += 1;
        }
        let conn = &mut self.setup.conns[c as usize];
        let (socket, done) = (conn.socket, conn.step);
        if done < Step::ALL.len() {
            if let Some(s) = socket {
                self.socket_resolved(s, done);
            }
            return;
        }
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
        if let Some(s) = socket {
            return self.socket_resolved(s, done);
        }
        if let Some(s) = conn.cm {
            return self.cm_start(s);
        }
        let clients = conn.clients.clone();
        for q in clients {
            self.drive_at(q, now);
        }
    }

    /// Makes connection `c` wait for `host`'s ARP request along `route`,
    /// sending it unless the same request is already out.
    fn request(&mut self, c: u32, host: u32, route: Route) {
        let same = |p: &PendingArp| {
            p.host == host && p.egress == route.egress && p.next_hop == route.next_hop
        };
        if let Some(p) = self.setup.pending.iter_mut().find(|p| same(p)) {
            if !p.waiters.contains(&c) {
                p.waiters.push(c);
            }
            return;
        }
        self.setup.pending.push(PendingArp {
            host,
            egress: route.egress,
            next_hop: route.next_hop,
            sender_ip: route.sender_ip,
            waiters: vec![c],
        });
        self.solicit(host, route.egress, route.next_hop);
    }

    /// Broadcasts the pending request of `host` on `egress` for
    /// `next_hop` and arms its retransmission.
    fn solicit(&mut self, host: u32, egress: u32, next_hop: Ipv4Addr) {
        let Some(p) = self
            .setup
            .pending
            .iter()
            .find(|p| p.host == host && p.egress == egress && p.next_hop == next_hop)
        else {
            return;
        };
        let sender_ip = p.sender_ip;
        let now = self.now();
        self.send_arp(host, egress, 1, BROADCAST, sender_ip, [0; 6], next_hop, now);
        self.sched.at(
            now + ARP_RETRANS,
            Event::ArpRetry {
                host,
                iface: egress,
                next_hop,
            },
        );
    }

    /// The retransmission timer of a request: sends it again if it is
    /// still unanswered. Returns whether it did.
    pub fn arp_retry(&mut self, host: u32, iface: u32, next_hop: Ipv4Addr) -> bool {
        let waiting = self
            .setup
            .pending
            .iter()
            .any(|p| p.host == host && p.egress == iface && p.next_hop == next_hop);
        if waiting {
            self.solicit(host, iface, next_hop);
        }
        waiting
    }

    /// A bond's new active slave announces the bond's address with
    /// gratuitous ARP requests (`num_grat_arp`), so that switches learn
    /// where its MAC now lives and peers refresh their entries.
    pub fn gratuitous_arp(&mut self, host: u32, iface: u32) {
        let Some(ip) = self.hosts[host as usize].ifaces[iface as usize].ip else {
            return;
        };
        let now = self.now();
        self.send_arp(host, iface, 1, BROADCAST, ip.addr, [0; 6], ip.addr, now);
    }

    /// A frame the host's kernel queued earlier (an ARP reply after its
    /// processing time) goes to its port now.
    pub fn kernel_tx(&mut self, port: u32, id: crate::packet::PacketId) {
        let len = self.pool.get(id).billed_len.into();
        let p = &mut self.ports[port as usize];
        p.push(0, id, len);
        self.pump(port);
    }

    /// Queues an ARP frame, at time `at`, on the port that interface
    /// `iface` of `host` transmits kernel traffic on.
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
        at: Ps,
    ) {
        let now = self.now();
        let h = &self.hosts[host as usize];
        let f = &h.ifaces[iface as usize];
        let l3 = L3::Arp {
            op,
            sha: f.mac,
            spa,
            tha,
            tpa,
        };
        let pkt = Packet::kernel(f.mac, dst, f.vlan, l3, IbRepr::default(), now);
        self.kernel_send(host, iface, pkt, at);
    }

    /// Queues a frame of `host`'s kernel (ARP, ICMP) at time `at` on the
    /// port interface `iface` transmits it on.
    pub fn kernel_send(&mut self, host: u32, iface: u32, pkt: Packet, at: Ps) {
        let now = self.now();
        let h = &self.hosts[host as usize];
        let port = match h.ifaces[iface as usize].kind {
            IfaceKind::Nic(n) => h.nics[n as usize].port,
            IfaceKind::Bond(b) => {
                // Kernel traffic goes through the bond driver itself.
                let bond = &self.bonds[b as usize].bond;
                let hash = bond_xmit_hash(bond.policy.codec(), &pkt.flow_keys());
                bond.slaves[bond.kernel_slave(hash)].port
            }
        };
        let id = self.pool.alloc(pkt);
        if at > now {
            self.sched.at(at, Event::KernelTx { port, pkt: id });
        } else {
            self.kernel_tx(port, id);
        }
    }

    /// An ARP frame reached interface `iface` of `host`.
    pub fn arp_receive(&mut self, port: u32, host: u32, iface: u32, id: PacketId) {
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
            // A request this interface answers: learn the asker
            // (overriding what it knew), reply after the kernel's time.
            1 if h.arp_answers(iface, tpa, spa) => {
                self.hosts[host as usize].neigh.insert((iface, spa), sha);
                let at = self.now() + reply_delay(self.seed, host, iface, spa, tpa);
                self.send_arp(host, iface, 2, sha, tpa, sha, spa, at);
            }
            // A gratuitous ARP refreshes an entry the device has.
            1 if spa == tpa => {
                if let Some(m) = self.hosts[host as usize].neigh.get_mut(&(iface, spa)) {
                    *m = sha;
                }
            }
            2 => {
                let Some(i) = self
                    .setup
                    .pending
                    .iter()
                    .position(|p| p.host == host && p.egress == iface && p.next_hop == spa)
                else {
                    // Not asked for, or a later answer inside locktime.
                    return;
                };
                let waiters = self.setup.pending.swap_remove(i).waiters;
                self.hosts[host as usize].neigh.insert((iface, spa), sha);
                for c in waiters {
                    self.conn_step(c);
                }
            }
            _ => {}
        }
    }
}
