//! The simulated network: ports, links, hosts with NICs and bonds, switches,
//! queue pairs and workloads, driven by one [`Scheduler`].
//!
//! ```text
//!   RcQp ──next_tx──▶ host port ──serialize──▶ link (delay, loss, up/down) ──▶ switch port
//!     ▲                (8 prio lists of          │                              │ classify (DSCP/PCP)
//!     │                 active QPs, strict)      │                              │ buffer check (ingress acct.)
//!     │                                          │                              ▼ FDB / routes, ECMP/LAG hash
//!   on_receive ◀── host port ◀── link ◀── switch egress port (8 prio queues, strict priority)
//! ```
//!
//! Components live in `Vec`s and refer to each other by index; an event
//! names one component and the world dispatches it. Every component's
//! randomness comes from its own stream ([`crate::rng`]).
//!
//! Hooks for the next issue (PFC, ECN, DCQCN) are in place: every port has
//! eight priority queues (switches) or eight priority lists of active QPs
//! (NICs); switches account buffer per (ingress port, priority); QPs have a
//! rate limiter seam through `tx_ready_at` (a [`Event::QpWake`] is scheduled
//! for the time it returns).

mod arp;
mod bond;
mod build;
pub mod mmu;
mod tap;

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use core::net::Ipv4Addr;

use rand_chacha::ChaCha8Rng;
use roce_codec::IbRepr;
use roce_codec::frame::{EthRepr, VlanTag};
use roce_codec::hash::{EcmpHash, FiveTuple};

use crate::engine::{Event, Scheduler};
use crate::fasthash::FastMap;
use crate::packet::{L3, Packet, PacketId, PacketPool};
use crate::scenario::schema::{IpNet, RoceMode, Trust};
use crate::time::{Ps, Rate, wire_bytes};
use crate::transport::{QpState, RcQp, Workload};

pub(crate) use arp::Conn;
pub(crate) use bond::Bond;
pub use build::BuildOptions;
pub(crate) use tap::Tap;

pub const PRIOS: usize = 8;
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    Host { host: u32, nic: u32 },
    Switch { sw: u32, local: u32 },
}

/// Counters of one port, both directions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortCounters {
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    /// Frames this port dropped: sent into a dead link, lost on its link,
    /// refused by a full buffer (switch egress), or received but not for
    /// this NIC (wrong MAC, a GID it does not own, unknown QP) or, on a
    /// routed switch port, not addressed to the switch.
    pub drops: u64,
    pub drops_link_down: u64,
    pub drops_loss: u64,
    pub drops_buffer: u64,
    pub drops_not_ours: u64,
    pub drops_no_route: u64,
}

pub(crate) struct Port {
    pub(crate) name: String,
    pub(crate) owner: Owner,
    pub(crate) link: u32,
    pub(crate) peer: u32,
    pub(crate) rate: Rate,
    pub(crate) busy: bool,
    pub(crate) carrier: bool,
    pub(crate) queues: [VecDeque<PacketId>; PRIOS],
    pub(crate) qbytes: [u64; PRIOS],
    /// Host ports: QPs that may have something to send, per priority.
    pub(crate) active: [VecDeque<u32>; PRIOS],
    pub(crate) c: PortCounters,
    pub(crate) tap: Option<u32>,
    /// Extra delay added to frames leaving this port (switch latency).
    pub(crate) extra_delay: Ps,
}

pub(crate) struct Link {
    pub(crate) name: String,
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) delay: Ps,
    pub(crate) loss: f64,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) up: bool,
    /// Frames put on the wire / delivered / lost, both directions.
    pub(crate) sent_bytes: u64,
    pub(crate) delivered_bytes: u64,
    pub(crate) lost_bytes: u64,
}

pub(crate) struct Nic {
    pub(crate) name: String,
    pub(crate) mac: [u8; 6],
    pub(crate) port: u32,
    pub(crate) iface: u32,
    /// Index in its bond's slave list.
    pub(crate) slave: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IfaceKind {
    Nic(u32),
    Bond(u32),
}

pub(crate) struct Iface {
    pub(crate) name: String,
    pub(crate) kind: IfaceKind,
    pub(crate) mac: [u8; 6],
    pub(crate) ip: Option<IpNet>,
    pub(crate) mtu: u32,
    pub(crate) vlan: Option<u16>,
    /// QPN → global QP index (each interface is one RDMA device).
    pub(crate) qpns: FastMap<u32, u32>,
}

pub(crate) struct Host {
    pub(crate) name: String,
    pub(crate) roce: RoceMode,
    pub(crate) trust: Trust,
    pub(crate) arp_ignore: u8,
    pub(crate) arp_announce: u8,
    pub(crate) policy_routing: bool,
    pub(crate) gateway: Option<Ipv4Addr>,
    pub(crate) nics: Vec<Nic>,
    pub(crate) ifaces: Vec<Iface>,
}

pub(crate) struct Group {
    pub(crate) name: String,
    /// Local port indices.
    pub(crate) members: Vec<u32>,
}

/// A route's next hop: (group, MAC to write as destination).
pub(crate) type NextHop = (u32, [u8; 6]);

pub(crate) struct Switch {
    pub(crate) name: String,
    pub(crate) mac: [u8; 6],
    /// Global port ids by local index.
    pub(crate) ports: Vec<u32>,
    pub(crate) groups: Vec<Group>,
    pub(crate) group_of: Vec<u32>,
    pub(crate) fdb: FastMap<[u8; 6], u32>,
    /// Directly attached host addresses: IP → (MAC, group).
    pub(crate) neigh: HashMap<Ipv4Addr, ([u8; 6], u32)>,
    /// Routes: prefix → (next-hop MAC per group, groups) for ECMP.
    pub(crate) routes: Vec<(IpNet, Vec<NextHop>)>,
    /// Per group: a route next hop, i.e. a routed (layer 3) port. It only
    /// takes frames addressed to the switch, learns nothing, and is never
    /// flooded to or bridged into.
    pub(crate) routed: Vec<bool>,
    pub(crate) hash: EcmpHash,
    pub(crate) trust: Trust,
    pub(crate) buffer: u64,
    pub(crate) used: u64,
    pub(crate) peak_used: u64,
    /// Bytes held per (ingress local port, priority): the PFC hook.
    pub(crate) ingress: Vec<[u64; PRIOS]>,
}

impl Switch {
    /// Whether the port with local index `local` is a routed port.
    pub(crate) fn is_routed(&self, local: u32) -> bool {
        self.group_of
            .get(local as usize)
            .and_then(|&g| self.routed.get(g as usize))
            .copied()
            .unwrap_or(false)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Client,
    Server,
}

pub(crate) struct QpSlot {
    pub(crate) qp: RcQp,
    pub(crate) host: u32,
    pub(crate) iface: u32,
    pub(crate) wl: u32,
    pub(crate) idx: u32,
    pub(crate) role: Role,
    pub(crate) port: u32,
    pub(crate) prio: u8,
    pub(crate) eth: EthRepr,
    pub(crate) vlan: Option<VlanTag>,
    pub(crate) l3: L3,
    pub(crate) sport: u16,
    pub(crate) lag_hash: u32,
    pub(crate) affinity: u32,
    pub(crate) active: bool,
    pub(crate) wake_at: Option<Ps>,
    pub(crate) timer_at: Option<Ps>,
    /// When the workload asked to be driven again (a scheduled message,
    /// the end of `-D`).
    pub(crate) drive_at: Option<Ps>,
    pub(crate) first_data_port: Option<u32>,
    pub(crate) first_tx: Option<Ps>,
    pub(crate) tx_bytes: u64,
    pub(crate) tx_packets: u64,
    pub(crate) tx_payload: u64,
}

pub(crate) struct Wl {
    pub(crate) name: String,
    pub(crate) w: Workload,
    pub(crate) clients: Vec<u32>,
}

/// A time-series sample of one port or QP.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PortSample {
    pub(crate) t: Ps,
    pub(crate) port: u32,
    pub(crate) tx_bytes: u64,
    pub(crate) rx_bytes: u64,
    pub(crate) queued: u64,
    pub(crate) drops: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct QpSample {
    pub(crate) t: Ps,
    pub(crate) qp: u32,
    pub(crate) tx_payload: u64,
    pub(crate) completed_bytes: u64,
    pub(crate) retransmitted: u64,
}

/// Progress reported while running.
pub trait Progress {
    fn update(&mut self, now: Ps, end: Option<Ps>);
}

impl Progress for () {
    fn update(&mut self, _: Ps, _: Option<Ps>) {}
}

pub struct World {
    pub(crate) name: String,
    pub(crate) seed: u64,
    pub(crate) sched: Scheduler,
    pub(crate) pool: PacketPool,
    pub(crate) ports: Vec<Port>,
    pub(crate) links: Vec<Link>,
    pub(crate) hosts: Vec<Host>,
    pub(crate) bonds: Vec<(u32, u32, Bond)>,
    pub(crate) switches: Vec<Switch>,
    pub(crate) qps: Vec<QpSlot>,
    pub(crate) wls: Vec<Wl>,
    pub(crate) taps: Vec<Tap>,
    pub(crate) stop_at: Option<Ps>,
    pub(crate) sample_every: Ps,
    /// Something happened since the last sample.
    pub(crate) active_since_sample: bool,
    /// The sampler stopped ticking after an idle interval.
    pub(crate) sampling_paused: bool,
    pub(crate) port_samples: Vec<PortSample>,
    pub(crate) qp_samples: Vec<QpSample>,
    pub(crate) packet_hops: u64,
    pub(crate) last_activity: Ps,
    /// Kernel neighbour tables (frames-mode ARP), per host.
    pub(crate) neigh: Vec<FastMap<Ipv4Addr, [u8; 6]>>,
    /// Outstanding ARP requests.
    pub(crate) pending: Vec<arp::PendingArp>,
    /// Connection setups (frames-mode ARP), one per workload.
    pub(crate) conns: Vec<Conn>,
}

/// The safety limit when a scenario gives no `stop_at`.
pub const DEFAULT_LIMIT: Ps = Ps(60_000_000_000_000);

impl World {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn now(&self) -> Ps {
        self.sched.now()
    }
    pub fn events(&self) -> u64 {
        self.sched.executed()
    }
    /// Frames that crossed one link (delivered or lost on it).
    pub fn packet_hops(&self) -> u64 {
        self.packet_hops
    }
    /// The end of the last activity (the simulated duration of the run).
    pub fn sim_time(&self) -> Ps {
        self.last_activity
    }

    pub fn stop_at(&self) -> Option<Ps> {
        self.stop_at
    }

    /// Runs until nothing is left to do or `stop_at`.
    pub fn run(&mut self, progress: &mut dyn Progress) {
        let limit = self.stop_at.unwrap_or(DEFAULT_LIMIT);
        self.sched.at(Ps::ZERO, Event::Sample);
        let mut n: u64 = 0;
        while let Some(t) = self.sched.peek_time() {
            if t > limit {
                break;
            }
            let (_, ev) = self.sched.pop().expect("peeked");
            if self.handle(ev) {
                self.last_activity = t;
                self.active_since_sample = true;
                if self.sampling_paused {
                    self.resume_sampling(t);
                }
            }
            n += 1;
            if n & 0xFFFF == 0 {
                progress.update(self.sched.now(), self.stop_at);
            }
        }
        if let Some(s) = self.stop_at {
            // Cut short: the run lasted until `stop_at`. A QP timer still
            // armed after the work is done does not count.
            if self.sched.peek_time().is_some() && self.work_left() {
                self.last_activity = s;
            }
        }
        // Samples taken while only stale timers were left say nothing.
        let end = self.last_activity;
        self.port_samples.retain(|s| s.t <= end);
        self.qp_samples.retain(|s| s.t <= end);
        self.take_sample(end);
        progress.update(self.last_activity, self.stop_at);
    }

    /// Whether a client QP has work left (its status is `running`).
    fn work_left(&self) -> bool {
        (0..self.qps.len() as u32).any(|q| {
            self.qps[q as usize].role == Role::Client && self.qp_state_name(q) == "running"
        })
    }

    /// Handles one event; returns whether it changed anything (stale
    /// timers and samples do not count as activity for the run's end).
    fn handle(&mut self, ev: Event) -> bool {
        match ev {
            Event::TxDone { port } => {
                self.ports[port as usize].busy = false;
                self.pump(port);
            }
            Event::Arrive { port, pkt } => self.arrive(port, pkt),
            Event::QpWake { qp } => {
                let now = self.now();
                let s = &mut self.qps[qp as usize];
                if s.wake_at.is_some_and(|w| w <= now) {
                    s.wake_at = None;
                    self.activate(qp);
                }
            }
            Event::QpTimer { qp } => {
                let now = self.now();
                let s = &mut self.qps[qp as usize];
                if s.timer_at.is_none_or(|t| t > now) {
                    return false;
                }
                s.timer_at = None;
                let fired = s.qp.next_timer().is_some_and(|t| t <= now);
                if fired {
                    s.qp.on_timer(now);
                }
                self.after_qp_change(qp);
                return fired;
            }
            Event::Link { link, up } => self.link_change(link, up),
            Event::Miimon { bond } => self.miimon(bond),
            Event::ArpStart { conn } => self.conn_step(conn),
            Event::ArpRetry { host, next_hop } => return self.arp_retry(host, next_hop),
            Event::Drive { qp } => {
                let now = self.now();
                let s = &mut self.qps[qp as usize];
                if s.drive_at.is_none_or(|t| t > now) {
                    return false;
                }
                s.drive_at = None;
                self.after_qp_change(qp);
            }
            Event::Sample => {
                let now = self.now();
                self.take_sample(now);
                if self.active_since_sample && self.sched.pending() > 0 {
                    self.active_since_sample = false;
                    let next = self.next_sample_time(now);
                    self.sched.at(next, Event::Sample);
                } else {
                    // Idle for a whole interval: stop ticking, so a timer
                    // armed far ahead (a 4 s ACK timeout after the work is
                    // done) neither costs events nor thins the series.
                    self.sampling_paused = true;
                }
                return false;
            }
        }
        true
    }

    // ----- sending -----------------------------------------------------

    /// Starts the next frame on an idle port.
    fn pump(&mut self, port: u32) {
        let p = &self.ports[port as usize];
        if p.busy {
            return;
        }
        match p.owner {
            Owner::Switch { .. } => {
                for prio in (0..PRIOS).rev() {
                    if let Some(id) = self.ports[port as usize].queues[prio].pop_front() {
                        self.dequeued(port, prio, id);
                        self.transmit(port, id);
                        return;
                    }
                }
            }
            Owner::Host { .. } => self.pump_host(port),
        }
    }

    fn dequeued(&mut self, port: u32, prio: usize, id: PacketId) {
        let len = u64::from(self.pool.get(id).frame_len);
        let p = &mut self.ports[port as usize];
        p.qbytes[prio] -= len;
        if let Owner::Switch { sw, .. } = p.owner {
            let ingress = self.pool.get(id).ingress;
            let s = &mut self.switches[sw as usize];
            s.used -= len;
            if ingress != NONE {
                let ing = &mut s.ingress[ingress as usize][prio];
                *ing = ing.saturating_sub(len);
            }
        }
    }

    /// Host port: strict priority over the lists of active QPs,
    /// round-robin inside one priority.
    fn pump_host(&mut self, port: u32) {
        let now = self.now();
        for prio in (0..PRIOS).rev() {
            // Frames the host's kernel queued (ARP, at priority 0) go
            // before the QPs of their priority, after higher ones.
            if let Some(id) = self.ports[port as usize].queues[prio].pop_front() {
                self.dequeued(port, prio, id);
                self.transmit(port, id);
                return;
            }
            while let Some(q) = self.ports[port as usize].active[prio].pop_front() {
                let slot = &mut self.qps[q as usize];
                if slot.port != port || usize::from(slot.prio) != prio {
                    // Moved to another slave; it was re-queued there.
                    continue;
                }
                match slot.qp.next_tx(now) {
                    Some(ib) => {
                        self.ports[port as usize].active[prio].push_back(q);
                        let id = self.make_packet(q, ib);
                        self.transmit(port, id);
                        self.after_qp_change(q);
                        return;
                    }
                    None => {
                        slot.active = false;
                        if let Some(t) = slot.qp.tx_ready_at(now) {
                            debug_assert!(
                                t > now,
                                "QP {q}: tx_ready_at {t} <= now {now} but next_tx gave nothing"
                            );
                            let t = t.max(Ps(now.0 + 1));
                            if slot.wake_at.is_none_or(|w| w > t) {
                                slot.wake_at = Some(t);
                                self.sched.at(t, Event::QpWake { qp: q });
                            }
                        }
                        self.after_timer_only(q);
                    }
                }
            }
        }
    }

    fn make_packet(&mut self, q: u32, ib: IbRepr) -> PacketId {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        s.first_tx.get_or_insert(now);
        let frame_len = Packet::compute_frame_len(s.vlan.is_some(), &s.l3, &ib);
        s.tx_bytes += u64::from(frame_len);
        s.tx_packets += 1;
        s.tx_payload += u64::from(ib.payload_len);
        // A client QP's first packet is a request: the first data packet of
        // a WRITE or SEND, the request of a READ.
        if s.first_data_port.is_none() && s.role == Role::Client {
            s.first_data_port = Some(s.port);
        }
        let pkt = Packet {
            eth: s.eth,
            vlan: s.vlan,
            l3: s.l3,
            ib,
            prio: s.prio,
            frame_len,
            src_qp: q,
            ingress: NONE,
            born: now,
        };
        self.pool.alloc(pkt)
    }

    /// Puts a frame on the wire of `port`.
    fn transmit(&mut self, port: u32, id: PacketId) {
        let now = self.now();
        let frame_len = self.pool.get(id).frame_len;
        let p = &mut self.ports[port as usize];
        p.busy = true;
        p.c.tx_bytes += u64::from(frame_len);
        p.c.tx_packets += 1;
        let tx_time = p.rate.tx_time(wire_bytes(u64::from(frame_len)));
        let (link, peer, extra, carrier, tap) = (p.link, p.peer, p.extra_delay, p.carrier, p.tap);
        if let Some(t) = tap {
            self.taps[t as usize].record(now, self.pool.get(id));
        }
        self.sched.at(now + tx_time, Event::TxDone { port });
        let l = &mut self.links[link as usize];
        l.sent_bytes += u64::from(frame_len);
        self.packet_hops += 1;
        let lost = if !carrier || !l.up {
            self.ports[port as usize].c.drops_link_down += 1;
            true
        } else if l.loss > 0.0 && crate::rng::unit_f64(&mut l.rng) < l.loss {
            self.ports[port as usize].c.drops_loss += 1;
            true
        } else {
            false
        };
        let l = &mut self.links[link as usize];
        if lost {
            l.lost_bytes += u64::from(frame_len);
            self.ports[port as usize].c.drops += 1;
            self.pool.free(id);
        } else {
            l.delivered_bytes += u64::from(frame_len);
            let delay = l.delay;
            self.sched.at(
                now + tx_time + delay + extra,
                Event::Arrive {
                    port: peer,
                    pkt: id,
                },
            );
        }
    }

    // ----- receiving ---------------------------------------------------

    fn arrive(&mut self, port: u32, id: PacketId) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        let len = u64::from(self.pool.get(id).frame_len);
        if !p.carrier {
            // The link went down while the frame was in flight.
            p.c.drops += 1;
            p.c.drops_link_down += 1;
            self.pool.free(id);
            return;
        }
        p.c.rx_bytes += len;
        p.c.rx_packets += 1;
        if let Some(t) = p.tap {
            self.taps[t as usize].record(now, self.pool.get(id));
        }
        match p.owner {
            Owner::Host { host, nic } => self.host_receive(port, host, nic, id),
            Owner::Switch { sw, local } => self.switch_receive(port, sw, local, id),
        }
    }

    fn drop_not_ours(&mut self, port: u32, id: PacketId) {
        let c = &mut self.ports[port as usize].c;
        c.drops += 1;
        c.drops_not_ours += 1;
        self.pool.free(id);
    }

    fn host_receive(&mut self, port: u32, host: u32, nic: u32, id: PacketId) {
        let now = self.now();
        let h = &self.hosts[host as usize];
        let iface_id = h.nics[nic as usize].iface;
        if self.pool.get(id).is_arp() {
            return self.arp_receive(port, host, iface_id, id);
        }
        let iface = &h.ifaces[iface_id as usize];
        let pkt = self.pool.get(id);
        // The NIC's MAC filter, then the RoCE GID check: a RoCE NIC only
        // accepts packets addressed to a GID it owns, whatever the kernel's
        // weak-host IP stack would accept.
        let owns_gid = iface.ip.is_some_and(|ip| ip.addr == pkt.dst_ip());
        let v1_ok = matches!(pkt.l3, L3::V1 { .. }) == (h.roce == RoceMode::V1);
        let qp = iface.qpns.get(&pkt.ib.bth.dest_qp).copied();
        let (true, true, true, Some(q)) = (pkt.eth.dst == iface.mac, owns_gid, v1_ok, qp) else {
            self.drop_not_ours(port, id);
            return;
        };
        let s = &mut self.qps[q as usize];
        s.qp.on_receive(&pkt.ib, pkt.ecn_ce(), now);
        self.pool.free(id);
        self.after_qp_change(q);
    }

    fn switch_receive(&mut self, port: u32, sw: u32, local: u32, id: PacketId) {
        let s = &mut self.switches[sw as usize];
        let in_group = s.group_of[local as usize];
        let pkt = self.pool.get_mut(id);
        if s.routed[in_group as usize] {
            // A layer 3 port bridges nothing.
            if pkt.eth.dst != s.mac {
                return self.drop_not_ours(port, id);
            }
        } else if s.fdb.get(&pkt.eth.src) != Some(&in_group) {
            // L2 learning; a MAC seen on a new port moves there (station
            // move, as after a bond failover).
            s.fdb.insert(pkt.eth.src, in_group);
        }
        // Classification by the switch's trust mode.
        pkt.prio = match (s.trust, pkt.l3) {
            (Trust::Dscp, L3::V2 { dscp, .. }) => dscp >> 3,
            (Trust::Dscp, L3::V1 { .. } | L3::Arp { .. }) => pkt.vlan.map_or(0, |v| v.pcp),
            (Trust::Pcp, _) => pkt.vlan.map_or(0, |v| v.pcp),
        };
        let out = if pkt.eth.dst == s.mac {
            // Routed hop.
            let L3::V2 { dst, ttl, .. } = pkt.l3 else {
                return self.switch_drop_route(port, id);
            };
            if ttl <= 1 {
                return self.switch_drop_route(port, id);
            }
            let (mac, group) = if let Some(&(mac, g)) = s.neigh.get(&dst) {
                (mac, g)
            } else {
                let best = s
                    .routes
                    .iter()
                    .filter(|(net, _)| net.contains(dst))
                    .max_by_key(|(net, _)| net.prefix);
                let Some((_, hops)) = best else {
                    return self.switch_drop_route(port, id);
                };
                // ECMP over the next hops with a live member, counted then
                // indexed: this runs for every routed packet, so no Vec.
                let ports = &self.ports;
                let alive = |&&(g, _): &&NextHop| {
                    s.groups[g as usize]
                        .members
                        .iter()
                        .any(|&m| ports[s.ports[m as usize] as usize].carrier)
                };
                let n = hops.iter().filter(alive).count();
                let Some(i) = s.hash.select(&pkt.five_tuple(), n) else {
                    return self.switch_drop_route(port, id);
                };
                let &(g, mac) = hops.iter().filter(alive).nth(i).expect("i < n");
                (mac, g)
            };
            pkt.eth.src = s.mac;
            pkt.eth.dst = mac;
            if let L3::V2 { ttl, .. } = &mut pkt.l3 {
                *ttl -= 1;
            }
            Some(group)
        } else {
            s.fdb.get(&pkt.eth.dst).copied()
        };
        let tuple = pkt.five_tuple();
        match out {
            Some(g) if g != in_group => {
                if let Some(member) = self.pick_member(sw, g, &tuple) {
                    self.enqueue(sw, local, member, id);
                } else {
                    self.switch_drop_route(port, id);
                }
            }
            Some(_) => {
                // Destination behind the port it came from: filtered.
                self.pool.free(id);
            }
            None => {
                // Unknown unicast and broadcast: flood to every other
                // bridged group.
                let groups = self.switches[sw as usize].groups.len() as u32;
                let mut first = true;
                for g in 0..groups {
                    if g == in_group || self.switches[sw as usize].routed[g as usize] {
                        continue;
                    }
                    if let Some(member) = self.pick_member(sw, g, &tuple) {
                        let copy = if first {
                            id
                        } else {
                            let p = *self.pool.get(id);
                            self.pool.alloc(p)
                        };
                        first = false;
                        self.enqueue(sw, local, member, copy);
                    }
                }
                if first {
                    self.pool.free(id);
                }
            }
        }
    }

    fn switch_drop_route(&mut self, port: u32, id: PacketId) {
        let c = &mut self.ports[port as usize].c;
        c.drops += 1;
        c.drops_no_route += 1;
        self.pool.free(id);
    }

    /// A member of group `g` by the switch's 5-tuple hash over the members
    /// whose link is up.
    fn pick_member(&self, sw: u32, g: u32, tuple: &FiveTuple) -> Option<u32> {
        let s = &self.switches[sw as usize];
        let members = &s.groups[g as usize].members;
        if members.len() == 1 {
            return Some(members[0]);
        }
        let mut up = [0u32; 64];
        let mut n = 0;
        for &m in members.iter() {
            if self.ports[s.ports[m as usize] as usize].carrier && n < up.len() {
                up[n] = m;
                n += 1;
            }
        }
        if n == 0 {
            return Some(members[0]);
        }
        let i = s.hash.select(tuple, n)?;
        Some(up[i])
    }

    fn enqueue(&mut self, sw: u32, in_local: u32, out_local: u32, id: PacketId) {
        let s = &mut self.switches[sw as usize];
        let out = s.ports[out_local as usize];
        let pkt = self.pool.get_mut(id);
        let len = u64::from(pkt.frame_len);
        let prio = usize::from(pkt.prio & 7);
        let p = &mut self.ports[out as usize];
        if s.used + len > s.buffer || !p.carrier {
            p.c.drops += 1;
            if p.carrier {
                p.c.drops_buffer += 1;
            } else {
                p.c.drops_link_down += 1;
            }
            self.pool.free(id);
            return;
        }
        pkt.ingress = in_local;
        s.used += len;
        s.peak_used = s.peak_used.max(s.used);
        s.ingress[in_local as usize][prio] += len;
        p.qbytes[prio] += len;
        p.queues[prio].push_back(id);
        if !p.busy {
            self.pump(out);
        }
    }

    // ----- queue pairs -------------------------------------------------

    /// Puts a QP on its port's active list and starts the port if idle.
    fn activate(&mut self, q: u32) {
        let s = &mut self.qps[q as usize];
        if !s.active {
            s.active = true;
            let port = s.port;
            let prio = usize::from(s.prio);
            self.ports[port as usize].active[prio].push_back(q);
        }
        let port = self.qps[q as usize].port;
        if !self.ports[port as usize].busy {
            self.pump(port);
        }
    }

    /// After anything happened to a QP: let the workload react, wake the
    /// QP if it has something to send, and (re)arm its timer.
    fn after_qp_change(&mut self, q: u32) {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        let wl = &mut self.wls[s.wl as usize];
        match s.role {
            Role::Client => {
                let next = wl.w.drive_requester(s.idx as usize, &mut s.qp, now);
                if let Some(t) = next {
                    if s.drive_at.is_none_or(|w| w > t || w <= now) {
                        s.drive_at = Some(t);
                        self.sched.at(t.max(now), Event::Drive { qp: q });
                    }
                }
            }
            Role::Server => wl.w.drive_responder(s.idx as usize, &mut s.qp, now),
        }
        if !s.active {
            if let Some(t) = s.qp.tx_ready_at(now) {
                if t <= now {
                    self.activate(q);
                } else if s.wake_at.is_none_or(|w| w > t) {
                    s.wake_at = Some(t);
                    self.sched.at(t, Event::QpWake { qp: q });
                }
            }
        }
        self.after_timer_only(q);
    }

    fn after_timer_only(&mut self, q: u32) {
        let s = &mut self.qps[q as usize];
        if let Some(t) = s.qp.next_timer() {
            if s.timer_at.is_none_or(|cur| cur > t) {
                s.timer_at = Some(t);
                let now = self.sched.now();
                self.sched.at(t.max(now), Event::QpTimer { qp: q });
            }
        }
    }

    // ----- links and bonds ---------------------------------------------

    fn link_change(&mut self, link: u32, up: bool) {
        let now = self.now();
        let l = &mut self.links[link as usize];
        if l.up == up {
            return;
        }
        l.up = up;
        for port in [l.a, l.b] {
            self.ports[port as usize].carrier = up;
            if !up {
                // A dead port loses what it had queued.
                for prio in 0..PRIOS {
                    while let Some(id) = self.ports[port as usize].queues[prio].pop_front() {
                        self.dequeued(port, prio, id);
                        let c = &mut self.ports[port as usize].c;
                        c.drops += 1;
                        c.drops_link_down += 1;
                        self.pool.free(id);
                    }
                }
            }
            if let (false, Owner::Switch { sw, local }) = (up, self.ports[port as usize].owner) {
                // Forget what was learned behind a group with no live member.
                let s = &mut self.switches[sw as usize];
                let g = s.group_of[local as usize];
                let ports = &self.ports;
                if s.groups[g as usize]
                    .members
                    .iter()
                    .all(|&m| !ports[s.ports[m as usize] as usize].carrier)
                {
                    s.fdb.retain(|_, v| *v != g);
                }
            }
            if let Owner::Host { host, nic } = self.ports[port as usize].owner {
                let n = &self.hosts[host as usize].nics[nic as usize];
                if let (Some(slave), IfaceKind::Bond(b)) = (
                    n.slave,
                    self.hosts[host as usize].ifaces[n.iface as usize].kind,
                ) {
                    let bond = &mut self.bonds[b as usize].2;
                    if let Some(t) = bond.carrier_changed(slave as usize, up, now) {
                        if !bond.poll_pending {
                            bond.poll_pending = true;
                            self.sched.at(t, Event::Miimon { bond: b });
                        }
                    }
                }
            }
            if up {
                self.pump(port);
            }
        }
    }

    fn miimon(&mut self, b: u32) {
        let now = self.now();
        let bond = &mut self.bonds[b as usize].2;
        bond.poll_pending = false;
        let (changed, again) = bond.poll(now);
        if let Some(t) = again {
            bond.poll_pending = true;
            self.sched.at(t, Event::Miimon { bond: b });
        }
        if changed {
            self.remap_bond(b);
        }
    }

    /// Moves every QP of a bond to the slave the bond now picks for it.
    fn remap_bond(&mut self, b: u32) {
        let (host, iface, ref bond) = self.bonds[b as usize];
        let mut moved = Vec::new();
        for (_, &q) in self.hosts[host as usize].ifaces[iface as usize].qpns.iter() {
            let s = &self.qps[q as usize];
            let slave = bond.slave_for(s.lag_hash, s.affinity);
            let port = bond.slaves[slave].port;
            if port != s.port {
                moved.push((q, port));
            }
        }
        moved.sort_unstable();
        for (q, port) in moved {
            let s = &mut self.qps[q as usize];
            s.port = port;
            s.active = false;
            self.activate(q);
        }
    }

    /// Ports of the interfaces client QPs send from: every slave of a
    /// bond, used or not, or the NIC's port; ascending.
    pub(crate) fn client_ports(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for s in self.qps.iter().filter(|s| s.role == Role::Client) {
            let h = &self.hosts[s.host as usize];
            match h.ifaces[s.iface as usize].kind {
                IfaceKind::Nic(n) => out.push(h.nics[n as usize].port),
                IfaceKind::Bond(b) => {
                    out.extend(self.bonds[b as usize].2.slaves.iter().map(|sl| sl.port))
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The slave index a bond QP uses now (for the summary).
    pub(crate) fn slave_of_port(&self, port: u32) -> Option<u32> {
        match self.ports[port as usize].owner {
            Owner::Host { host, nic } => self.hosts[host as usize].nics[nic as usize].slave,
            Owner::Switch { .. } => None,
        }
    }

    // ----- sampling ----------------------------------------------------
    //
    // Samples sit on a grid of multiples of `sample_every`. The sampler
    // pauses after an interval without activity and, when activity comes
    // back at `t`, fills the grid points it skipped (before `t`) with the
    // last sample's values, which nothing changed in between.

    /// The first grid point after `t`.
    fn next_sample_time(&self, t: Ps) -> Ps {
        let every = self.sample_every.0;
        Ps((t.0 / every + 1) * every)
    }

    fn resume_sampling(&mut self, t: Ps) {
        self.sampling_paused = false;
        let last = self.port_samples.last().map_or(Ps::ZERO, |s| s.t);
        let mut k = self.next_sample_time(last);
        while k < t {
            self.repeat_last_sample(k);
            k = self.next_sample_time(k);
        }
        self.sched.at(k, Event::Sample);
    }

    /// The last sample again at `t` (nothing happened since).
    fn repeat_last_sample(&mut self, t: Ps) {
        let (n, m) = (self.ports.len(), self.qps.len());
        for i in self.port_samples.len() - n..self.port_samples.len() {
            let s = PortSample {
                t,
                ..self.port_samples[i]
            };
            self.port_samples.push(s);
        }
        for i in self.qp_samples.len() - m..self.qp_samples.len() {
            let s = QpSample {
                t,
                ..self.qp_samples[i]
            };
            self.qp_samples.push(s);
        }
        self.thin_samples();
    }

    fn take_sample(&mut self, t: Ps) {
        if self.port_samples.last().is_some_and(|s| s.t >= t) {
            return;
        }
        for (i, p) in self.ports.iter().enumerate() {
            self.port_samples.push(PortSample {
                t,
                port: i as u32,
                tx_bytes: p.c.tx_bytes,
                rx_bytes: p.c.rx_bytes,
                queued: p.qbytes.iter().sum(),
                drops: p.c.drops,
            });
        }
        for (i, s) in self.qps.iter().enumerate() {
            let st = self.wls[s.wl as usize].w.stats(s.idx as usize);
            self.qp_samples.push(QpSample {
                t,
                qp: i as u32,
                tx_payload: s.tx_payload,
                completed_bytes: if s.role == Role::Client {
                    st.bytes_completed
                } else {
                    0
                },
                retransmitted: s.qp.counters().retransmitted_packets,
            });
        }
        self.thin_samples();
    }

    /// Keeps at most ~1000 samples per series and ~1 M rows in all: past
    /// that, halves the resolution (every other grid point goes).
    fn thin_samples(&mut self) {
        let per = self.ports.len().max(1);
        let max = (1_000_000 / (self.ports.len() + self.qps.len()).max(1)).clamp(20, 1000);
        if self.port_samples.len() / per > max {
            self.sample_every = Ps(self.sample_every.0 * 2);
            let keep = |t: Ps, every: Ps| t.0 % every.0 == 0;
            let every = self.sample_every;
            self.port_samples.retain(|s| keep(s.t, every));
            self.qp_samples.retain(|s| keep(s.t, every));
        }
    }

    // ----- teardown ----------------------------------------------------

    /// Flushes every tap; the first error is returned.
    pub(crate) fn finish_taps(&mut self) -> Result<(), String> {
        for t in &mut self.taps {
            t.finish()
                .map_err(|e| format!("tap {}: {e}", t.file_name))?;
        }
        Ok(())
    }

    /// Checks the conservation invariants that must hold at the end of any
    /// run: every frame put on a link was delivered or lost, and every
    /// packet allocated was freed or is still queued somewhere.
    pub fn check_invariants(&self) -> Result<(), String> {
        for l in &self.links {
            if l.sent_bytes != l.delivered_bytes + l.lost_bytes {
                return Err(format!(
                    "link {}: sent {} != delivered {} + lost {}",
                    l.name, l.sent_bytes, l.delivered_bytes, l.lost_bytes
                ));
            }
        }
        let queued: usize = self
            .ports
            .iter()
            .map(|p| p.queues.iter().map(VecDeque::len).sum::<usize>())
            .sum();
        if self.sched.peek_time().is_none() && self.pool.live() != queued {
            return Err(format!(
                "{} packets allocated but {} queued with no events pending",
                self.pool.live(),
                queued
            ));
        }
        Ok(())
    }

    pub(crate) fn qp_state_name(&self, q: u32) -> &'static str {
        let s = &self.qps[q as usize];
        match s.qp.state() {
            QpState::Error(st) => st.summary_name(),
            QpState::Rts => {
                let w = &self.wls[s.wl as usize].w;
                if s.role == Role::Client && w.qp_done(s.idx as usize) {
                    let st = w.stats(s.idx as usize);
                    st.first_error.map_or("success", |e| e.summary_name())
                } else if s.role == Role::Server {
                    let client = self.wls[s.wl as usize].clients[s.idx as usize];
                    if self.qps[client as usize].qp.state() != QpState::Rts
                        || w.qp_done(s.idx as usize)
                    {
                        "success"
                    } else {
                        "running"
                    }
                } else {
                    "running"
                }
            }
        }
    }

    pub fn write_outputs(
        &mut self,
        dir: &Path,
        wall_s: f64,
    ) -> Result<crate::output::Summary, String> {
        self.finish_taps()?;
        crate::output::write_all(self, dir, wall_s)
    }
}

impl World {
    /// Number of queue pairs (both ends of every connection).
    pub fn qp_count(&self) -> usize {
        self.qps.len()
    }

    /// Number of RC connections: the workloads' `qps` summed, one client
    /// QP each.
    pub fn connection_count(&self) -> usize {
        self.qps.iter().filter(|s| s.role == Role::Client).count()
    }
}
