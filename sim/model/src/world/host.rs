//! A host: NICs, interfaces (a NIC or a bond over NICs, each one RDMA
//! device with its QPs), the kernel's routing and neighbour table, and the
//! NIC side of its queue pairs.
//!
//! ```text
//!            ┌──────────────────────────── host ────────────────────────────┐
//!            │ iface bond0 (MAC, IP = GID, QPN → QP)     iface eth2          │
//!            │   Bond: which slave a QP uses               │                │
//!            │   ├── NIC eth0 ── active QPs per prio ──▶ port ──▶ link      │
//!            │   └── NIC eth1 ── active QPs per prio ──▶ port ──▶ link      │
//!            │ route(): egress iface, next hop, ARP sender; neighbour table  │
//!            └──────────────────────────────────────────────────────────────┘
//! ```
//!
//! Sending: when its port is free, a NIC takes the next packet by strict
//! priority, or by the port's ETS configuration (`[host.ets]`,
//! `world::port::select`: priorities to traffic classes, strict classes
//! first, ETS classes by their shares); kernel frames (ARP) of a priority
//! go before its QPs, and the QPs of one priority take turns, one packet
//! each (no source we read says how a ConnectX arbitrates among the QPs of
//! one class; the HPCC reference's NIC does the same, `RdmaEgressQueue::
//! GetNextQindex`). A QP that has nothing to send leaves the list until it
//! has (`world::qp`). Receiving: the NIC's MAC filter,
//! then the RoCE GID check and the QPN lookup; a RoCE NIC accepts only
//! packets addressed to a GID it owns, whatever the kernel's weak-host IP
//! stack would accept.

use core::net::Ipv4Addr;

use super::World;
use super::bond::Bond;
use super::nic_cc::Notify;
use super::nic_rx::RxBuffer;
use super::port::{DropReason, PrioQueues};
use super::profile::NicProfile;
use super::profile::{RoceMode, RoceModes, Trust};
use crate::cc::NotificationPoint;
use crate::engine::{Event, Scheduler};
use crate::net::IpNet;
use crate::packet::{L3, Packet, PacketId};
use crate::time::Ps;
use roce_codec::Operation;
use roce_codec::wire::mad::GSI_QPN;
use rustc_hash::FxHashMap as FastMap;

pub struct Nic {
    pub name: String,
    pub mac: [u8; 6],
    pub port: u32,
    pub iface: u32,
    /// Index in its bond's slave list.
    pub slave: Option<u32>,
    /// QPs that may have something to send, per priority.
    active: PrioQueues<u32>,
    /// A receive buffer that can back up (`[host.pfc]`), or none: the
    /// host takes every frame as it arrives.
    pub rx: Option<Box<RxBuffer>>,
    /// DCQCN's notification point of this port, if the profile runs one.
    pub np: Option<NotificationPoint>,
}

impl Nic {
    pub fn new(name: String, mac: [u8; 6]) -> Nic {
        Nic {
            name,
            mac,
            port: u32::MAX,
            iface: u32::MAX,
            slave: None,
            active: PrioQueues::default(),
            rx: None,
            np: None,
        }
    }
    pub fn port(&self) -> u32 {
        self.port
    }
    pub fn iface(&self) -> u32 {
        self.iface
    }
    pub fn slave(&self) -> Option<u32> {
        self.slave
    }
    /// Some QP may have something to send.
    #[inline]
    pub fn has_active(&self) -> bool {
        self.active.mask() != 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfaceKind {
    Nic(u32),
    Bond(u32),
}

/// An interface with an address: one RDMA device.
pub struct Iface {
    pub name: String,
    pub kind: IfaceKind,
    pub mac: [u8; 6],
    pub ip: Option<IpNet>,
    /// The default route of the interface's own routing table (`ip route
    /// add default via GW dev ethN table ethN`): what a lookup bound to
    /// the device (RDMA address resolution) or from its address with
    /// `policy_routing` takes off its subnet, before the host's `gateway`.
    /// On its subnet (checked when the host is built).
    pub gateway: Option<Ipv4Addr>,
    pub mtu: u32,
    pub vlan: Option<u16>,
    /// QPN → global QP index.
    pub qpns: FastMap<u32, u32>,
}

/// A bond and the interface it is.
pub struct HostBond {
    pub host: u32,
    pub iface: u32,
    pub bond: Bond,
}

/// How a host reaches an address: see [`Host::route`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The interface the traffic leaves.
    pub egress: u32,
    /// The address whose MAC it needs: the destination, or a gateway.
    pub next_hop: Ipv4Addr,
    /// The sender address of its ARP request (`arp_announce`).
    pub sender_ip: Ipv4Addr,
}

pub struct Host {
    pub name: String,
    /// `default_roce_mode`: what its client QPs use.
    pub roce: RoceMode,
    /// The versions its NICs implement.
    pub roce_modes: RoceModes,
    /// Per-destination ICMP error rate limits (`icmp_ratelimit`).
    pub icmp_peers: FastMap<Ipv4Addr, super::icmp::IcmpBucket>,
    /// The IP identification of its next ICMP error.
    pub icmp_ident: u16,
    /// ICMP errors sent, and not sent for the rate limit.
    pub icmp_sent: u64,
    pub icmp_suppressed: u64,
    pub trust: Trust,
    pub arp_ignore: u8,
    pub rp_filter: u8,
    pub arp_announce: u8,
    pub policy_routing: bool,
    pub gateway: Option<Ipv4Addr>,
    pub nics: Vec<Nic>,
    pub ifaces: Vec<Iface>,
    /// The kernel's neighbour tables (frames-mode ARP): one per device, as
    /// Linux keeps them (`ip neigh show dev eth1`), keyed by (interface,
    /// address).
    pub neigh: FastMap<(u32, Ipv4Addr), [u8; 6]>,
    /// How its NICs build, acknowledge, mark and pace RC traffic.
    pub profile: NicProfile,
    /// Another part of a partitioned run simulates it, its NICs and QPs
    /// (`world::part`).
    pub elsewhere: bool,
}

impl Host {
    pub fn nic(&self, n: u32) -> &Nic {
        &self.nics[n as usize]
    }
    pub fn iface(&self, i: u32) -> &Iface {
        &self.ifaces[i as usize]
    }

    /// The route of an unbound socket's traffic to `dst_ip` (perftest's
    /// TCP connection, a ping): the main table picks the interface, and
    /// the packet's source is that interface's own address, so policy
    /// rules keyed on another source do not apply.
    pub fn unbound_route(&self, dst_ip: Ipv4Addr) -> Result<Route, String> {
        let (e, _) = self.main_table(dst_ip)?;
        self.route(e as u32, dst_ip)
    }

    /// The main table's choice for `dst_ip`: the first connected route
    /// that covers it (the interface listed first), or the gateway through
    /// the interface on its subnet. Returns (egress, next hop).
    fn main_table(&self, dst_ip: Ipv4Addr) -> Result<(usize, Ipv4Addr), String> {
        let on_link = |f: &Iface| f.ip.is_some_and(|n| n.contains(dst_ip));
        if let Some(e) = self.ifaces.iter().position(on_link) {
            return Ok((e, dst_ip));
        }
        let gw = self.gateway.ok_or_else(|| {
            format!(
                "no route from host `{}` to {dst_ip}: not on any local subnet and no `gateway`",
                self.name
            )
        })?;
        let e = self
            .ifaces
            .iter()
            .position(|f| f.ip.is_some_and(|n| n.contains(gw)))
            .ok_or_else(|| {
                format!(
                    "gateway {gw} of host `{}` is on none of its subnets",
                    self.name
                )
            })?;
        Ok((e, gw))
    }

    /// The route the RDMA stack resolves a GID's peer with: bound to the
    /// GID's device (`addr4_resolve` with `flowi4_oif = bound_dev_if`), so
    /// it leaves that interface whatever the main table says, and its ARP
    /// (sent with no packet behind it) asks with the interface's own
    /// address (`inet_select_addr`), whatever `arp_announce` says. Off
    /// the interface's subnet it goes to the interface's own `gateway`,
    /// else to the host's when that is on the subnet.
    pub fn roce_route(&self, gid_iface: u32, dst_ip: Ipv4Addr) -> Result<Route, String> {
        let f = &self.ifaces[gid_iface as usize];
        let net =
            f.ip.ok_or_else(|| format!("{}.{} has no address", self.name, f.name))?;
        let next_hop = if net.contains(dst_ip) {
            dst_ip
        } else {
            match f.gateway.or(self.gateway) {
                Some(gw) if net.contains(gw) => gw,
                _ => {
                    return Err(format!(
                        "no route from {}.{} (the GID's device, which RDMA address resolution is bound to) to {dst_ip}: not on its subnet {net} and no `gateway` on it",
                        self.name, f.name
                    ));
                }
            }
        };
        Ok(Route {
            egress: gid_iface,
            next_hop,
            sender_ip: net.addr,
        })
    }

    /// The route of this host's traffic from interface `src_iface`'s
    /// address to `dst_ip`, as the kernel picks it for a socket bound to
    /// that address (see `rocesim_scenario::build` for the rules).
    pub fn route(&self, src_iface: u32, dst_ip: Ipv4Addr) -> Result<Route, String> {
        let s_if = &self.ifaces[src_iface as usize];
        let s_ip = s_if
            .ip
            .ok_or_else(|| format!("{}.{} has no address", self.name, s_if.name))?;
        let (egress, next_hop) = if self.policy_routing {
            if s_ip.contains(dst_ip) {
                (src_iface as usize, dst_ip)
            } else {
                let gw = s_if.gateway.or(self.gateway).ok_or_else(|| {
                    format!(
                        "{dst_ip} is not on {}'s subnet {s_ip} and host `{}` has no `gateway`",
                        s_if.name, self.name
                    )
                })?;
                (src_iface as usize, gw)
            }
        } else {
            self.main_table(dst_ip)?
        };
        // arp_solicit: 0 announces the packet's source address; 1 keeps it
        // only if the egress interface has a subnet holding both it and
        // the target (inet_addr_onlink), else falls back to 2; 2 uses the
        // egress interface's own address.
        let e_ip = self.ifaces[egress].ip;
        let keep = match self.arp_announce {
            0 => true,
            1 => e_ip.is_some_and(|n| n.contains(next_hop) && n.contains(s_ip.addr)),
            _ => false,
        };
        let sender_ip = if keep {
            s_ip.addr
        } else {
            e_ip.map_or(s_ip.addr, |n| n.addr)
        };
        Ok(Route {
            egress: egress as u32,
            next_hop,
            sender_ip,
        })
    }

    /// Whether interface `iface` answers an ARP request for `target` from
    /// `sender`: `arp_ignore` 0 any local address, 1 the interface's own,
    /// 2 its own and the sender in its subnet; then `rp_filter`, which the
    /// kernel applies to the request as to any packet for a local address
    /// (`ip_route_input` → `fib_validate_source`): 1 the route back to the
    /// sender, from the target address, must leave this interface, 2 there
    /// must be one.
    pub fn arp_answers(&self, iface: u32, target: Ipv4Addr, sender: Ipv4Addr) -> bool {
        let Some(net) = self.ifaces[iface as usize].ip else {
            return false;
        };
        let ignore_ok = match self.arp_ignore {
            0 => self
                .ifaces
                .iter()
                .any(|f| f.ip.is_some_and(|n| n.addr == target)),
            1 => net.addr == target,
            _ => net.addr == target && net.contains(sender),
        };
        if !ignore_ok || self.rp_filter == 0 {
            return ignore_ok;
        }
        let owner = self
            .ifaces
            .iter()
            .position(|f| f.ip.is_some_and(|n| n.addr == target))
            .map_or(iface, |i| i as u32);
        match self.route(owner, sender) {
            Ok(back) => self.rp_filter == 2 || back.egress == iface,
            Err(_) => false,
        }
    }

    /// The QP a RoCE packet that arrived on NIC `nic` is for, if the NIC
    /// takes it: its MAC, a GID the interface owns, a RoCE version the NIC
    /// implements, and a QPN of the device.
    fn receiving_qp(&self, nic: u32, pkt: &Packet) -> Option<u32> {
        let iface = &self.ifaces[self.nics[nic as usize].iface as usize];
        self.takes_roce(nic, pkt)
            .then(|| iface.qpns.get(&pkt.ib.bth.dest_qp).copied())
            .flatten()
    }

    /// Whether NIC `nic` takes a RoCE packet: its MAC, a GID the interface
    /// owns, a RoCE version the NIC implements.
    fn takes_roce(&self, nic: u32, pkt: &Packet) -> bool {
        let iface = &self.ifaces[self.nics[nic as usize].iface as usize];
        let owns_gid = iface.ip.is_some_and(|ip| ip.addr == pkt.dst_ip());
        let version_ok = match pkt.l3 {
            L3::V1 { .. } => self.roce_modes.supports(RoceMode::V1),
            L3::V2 { .. } => self.roce_modes.supports(RoceMode::V2),
            _ => false,
        };
        pkt.eth.dst == iface.mac && owns_gid && version_ok
    }
}

impl World {
    /// A frame arrived at NIC `nic` of `host` (its port `port`): through
    /// its receive buffer if it has one.
    pub fn host_receive(&mut self, port: u32, host: u32, nic: u32, id: PacketId) {
        if !self.rx_buffer_enqueue(port, host, nic, id) {
            self.host_deliver(port, host, nic, id);
        }
    }

    /// The host takes a frame its NIC received.
    pub fn host_deliver(&mut self, port: u32, host: u32, nic: u32, id: PacketId) {
        let now = self.now();
        let h = &self.hosts[host as usize];
        if self.pool.get(id).is_arp() {
            let iface = h.nics[nic as usize].iface;
            return self.arp_receive(port, host, iface, id);
        }
        let pkt = self.pool.get(id);
        match pkt.l3 {
            // No socket of the RDMA stack listens to ICMP: the requester
            // learns nothing and times out.
            L3::IcmpUnreachable { .. } => return self.pool.free(id),
            L3::Tcp { .. } => return self.tcp_receive(port, host, nic, id),
            // Not RoCE for this NIC: plain UDP for the kernel.
            L3::V2 { .. } if !h.roce_modes.supports(RoceMode::V2) => {
                return self.udp_unreachable(port, host, nic, id);
            }
            _ => {}
        }
        if pkt.ib.bth.dest_qp == GSI_QPN && h.takes_roce(nic, pkt) {
            return self.cm_receive(port, host, id);
        }
        let Some(q) = h.receiving_qp(nic, pkt) else {
            return self.drop_frame(port, id, DropReason::NotOurs);
        };
        // A QP retires with no frame on its way to it (`world::retire`).
        debug_assert!(
            !self.qps[q as usize].live.is_retired(),
            "frame for retired QP {q}"
        );
        let notify = self.congestion_rx(host, nic, q, id);
        let echo = matches!(notify, Some(Notify::EchoOnAck));
        let pkt = self.pool.get(id);
        let op = pkt.ib.bth.opcode;
        let ack = (op.operation() == Some(Operation::Acknowledge)).then_some(pkt.ib.bth.becn);
        let slot = &mut self.qps[q as usize];
        slot.rx_frames += 1;
        // The CNP this frame may make is on its way before the QP has
        // handled the frame, and keeps the pair from retiring.
        slot.cnps_made += u32::from(matches!(notify, Some(Notify::Cnp(_))));
        let int = self.pool.int_of(pkt);
        let live = &mut *slot.live;
        if op.0 <= 0x0C {
            // A request: the ACK it makes echoes its stamp and telemetry.
            live.cc.echo = pkt.ts;
            if let Some(i) = int {
                match &mut live.cc.echo_int {
                    Some(b) => **b = *i,
                    None => live.cc.echo_int = Some(Box::new(*i)),
                }
            }
        }
        live.qp.on_receive_echoing(&pkt.ib, pkt.ecn_ce(), echo, now);
        if let Some(becn) = ack {
            self.ack_clocked_rx(q, becn, id);
        }
        self.pool.free(id);
        self.after_qp_change(q);
        if let Some(Notify::Cnp(c)) = notify {
            self.send_cnp(c);
        }
    }

    /// A host port starts its next frame: the port's transmission
    /// selection (strict priority, or ETS with `[host.ets]`) over the
    /// frames queued on the port (the kernel's ARP; the NIC's CNPs, and
    /// ACKs of a profile that sends them at a priority of their own) and
    /// the NIC's lists of active QPs, round robin per packet among the QPs
    /// of one priority.
    pub fn pump_host(&mut self, port: u32, host: u32, nic: u32) {
        let now = self.now();
        loop {
            let active = self.hosts[host as usize].nics[nic as usize].active.mask();
            let Some(prio) = self.ports[port as usize].next_prio(active) else {
                return;
            };
            // Frames queued on the port (ARP at priority 0, CNPs, ACKs at
            // their own priority) go before the QPs of their priority.
            if let Some(q) = self.ports[port as usize].pop(prio) {
                self.sent_from(port, prio, q.id);
                return self.transmit(port, q.id);
            }
            while let Some(q) = self.hosts[host as usize].nics[nic as usize]
                .active
                .pop(prio)
            {
                let slot = &mut self.qps[q as usize];
                if slot.port != port || usize::from(slot.prio) != prio {
                    // Moved to another slave; it was re-queued there.
                    continue;
                }
                let Some(ib) = slot.live.qp.next_tx(now) else {
                    slot.active = false;
                    if let Some(t) = slot.live.qp.tx_ready_at(now) {
                        debug_assert!(
                            t > now,
                            "QP {q}: tx_ready_at {t} <= now {now} but next_tx gave nothing"
                        );
                        slot.wake_at_least(Ps(now.0 + 1).max(t), q, &mut self.sched);
                    }
                    self.rearm_timer(q);
                    continue;
                };
                let id = self.make_packet(q, ib);
                self.sent_from(port, prio, id);
                // Off the active list while its frame is on the wire, the
                // QP does not make the port's `TxDone` run (`transmit`
                // leaves out one with nothing to send).
                self.transmit(port, id);
                self.requeue_after_tx(port, host, nic, prio, q);
                return self.after_qp_change(q);
            }
        }
    }

    /// A QP that just put a frame on `port`: back on its NIC's active list
    /// if it may send again by the time the wire frees, so the port's
    /// `TxDone` takes its next frame; otherwise (paced by its rate limiter,
    /// or with nothing to send) off the list, with a wake-up when it may.
    /// One event per paced frame (the wake-up), where a `TxDone` that
    /// found it not ready and then its wake-up were two.
    fn requeue_after_tx(&mut self, port: u32, host: u32, nic: u32, prio: usize, q: u32) {
        let now = self.now();
        let wire_free = Scheduler::time_of(self.ports[port as usize].tx_end());
        let slot = &mut self.qps[q as usize];
        match slot.live.qp.tx_ready_at(now) {
            Some(t) if t <= wire_free => {
                self.hosts[host as usize].nics[nic as usize]
                    .active
                    .push(prio, q);
                self.schedule_tx_done(port);
            }
            ready => {
                slot.active = false;
                if let Some(t) = ready {
                    slot.wake_at_least(t, q, &mut self.sched);
                }
            }
        }
    }

    /// Puts a QP on its NIC's active list and starts the port if idle.
    pub fn activate(&mut self, q: u32) {
        let s = &mut self.qps[q as usize];
        let port = s.port;
        // A retired QP has nothing to send: on the list, it would leave it
        // at once.
        if !s.active && !s.live.is_retired() {
            s.active = true;
            let prio = usize::from(s.prio);
            if let super::Owner::Host { host, nic } = self.ports[port as usize].owner() {
                self.hosts[host as usize].nics[nic as usize]
                    .active
                    .push(prio, q);
            }
        }
        self.pump(port);
    }

    /// A bond's MII monitor polls its slaves.
    pub fn miimon(&mut self, b: u32) {
        let now = self.now();
        let bond = &mut self.bonds[b as usize].bond;
        bond.poll_pending = false;
        let (changed, mut again) = bond.poll(now);
        // Peer notification: one gratuitous ARP per poll from the new
        // active slave until `num_grat_arp` went out.
        let garp = bond.grat_arp_left > 0;
        if garp {
            bond.grat_arp_left -= 1;
            let (n, left) = (bond.num_grat_arp, bond.grat_arp_left);
            let msg = format!(
                "{}: gratuitous ARP {} of {n} from slave {}",
                bond.name,
                n - left,
                bond.active
            );
            bond.log.push((now, msg));
            if left > 0 {
                again = Some(again.unwrap_or(bond.next_poll(now)));
            }
        }
        if let Some(t) = again {
            bond.poll_pending = true;
            self.sched.at(t, Event::Miimon { bond: b });
        }
        if changed {
            self.remap_bond(b);
        }
        if garp {
            let HostBond { host, iface, .. } = self.bonds[b as usize];
            self.gratuitous_arp(host, iface);
        }
    }

    /// Moves every QP of a bond to the slave the bond now picks for it.
    fn remap_bond(&mut self, b: u32) {
        let HostBond {
            host,
            iface,
            ref bond,
        } = self.bonds[b as usize];
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
}
