//! A switch: learning bridge and router in one, with a shared buffer.
//!
//! ```text
//!  Arrive ─▶ learn (bridged ports) ─▶ classify (DSCP / PCP) ─▶ forward (pure) ──▶ Port(member) ─▶ buffer admits? ─▶ egress queue
//!                                                             │                 Flood(members) ─▶ one copy each ─┘
//!                                                             │                 Filtered (destination behind the ingress port)
//!                                                             └─ FDB, neighbours, routes + ECMP, LAG hash   Drop(reason)
//! ```
//!
//! [`Switch::forward`] decides where a packet goes from the switch's tables
//! alone (FDB, neighbour table, routes, groups and which ports have
//! carrier), so it can be read and tested on its own; the world then does
//! what it says. Ports are grouped: a LAG is one group of member ports,
//! every other port a group of one. Tables name groups, and a group's
//! member is picked by the switch's 5-tuple hash over the members whose
//! link is up.
//!
//! A group named as a route's next hop (`via`) is a routed (layer 3) port:
//! it takes only frames addressed to the switch, learns nothing, and is
//! never flooded to.
//!
//! The buffer is a [`Mmu`]: `enqueue` admits (lossy priorities tail-drop,
//! lossless ones never do and may send XOFF upstream on the ingress port),
//! `release_buffer` releases (and may send XON). Without `[switch.mmu]` it
//! is one shared pool that tail-drops when full.

use std::collections::HashMap;

use core::net::Ipv4Addr;

use super::telemetry::SwitchPint;
use crate::time::Ps;
use roce_codec::hash::{EcmpHash, FiveTuple};

use super::World;
use super::ecn::Ecn;
use super::mmu::{Admit, DropReason as MmuDrop, Mmu, MmuConfig, PfcAction};
use super::port::DropReason;
use super::profile::Trust;
use crate::net::IpNet;
use crate::packet::{Packet, PacketId};
use rustc_hash::FxHashMap as FastMap;

/// Ports that forward as one: a LAG, or a single port.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    /// Local port indices.
    pub members: Vec<u32>,
}

/// One next hop of a route: the group it leaves by and the MAC it is
/// addressed to there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextHop {
    pub group: u32,
    pub mac: [u8; 6],
}

/// Where a packet goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forward {
    /// Out of the port with this local index. `routed_to`: a routed hop,
    /// whose source MAC becomes the switch's, destination MAC this one,
    /// and whose TTL drops by one.
    Port {
        out: u32,
        routed_to: Option<[u8; 6]>,
    },
    /// Unknown unicast or broadcast: one copy out of each of these ports
    /// (a member of every other bridged group), none if empty.
    Flood(Vec<u32>),
    /// The destination is behind the port it came in on: discarded, as a
    /// bridge does, without counting a drop.
    Filtered,
    /// Dropped, counted at the ingress port.
    Drop(DropReason),
}

/// A MAC as the FDB's key: its six bytes in one integer.
#[inline]
fn mac_key(m: &[u8; 6]) -> u64 {
    let mut w = [0u8; 8];
    w[..6].copy_from_slice(m);
    u64::from_le_bytes(w)
}

pub struct Switch {
    name: String,
    mac: [u8; 6],
    /// Global port ids by local index.
    ports: Vec<u32>,
    /// Carrier per local port, as the switch's port-state table has it.
    port_up: Vec<bool>,
    groups: Vec<Group>,
    group_of: Vec<u32>,
    /// Per group: a routed (layer 3) port.
    routed: Vec<bool>,
    /// MAC (as [`mac_key`]) → group. Keyed by one integer, as `neigh`:
    /// a byte array hashes as a slice (its length, then a byte copy).
    fdb: FastMap<u64, u32>,
    /// `learned[local]`: the source MAC ([`mac_key`]) that port's last
    /// frame taught, known to be in `fdb` at the port's group (`u64::MAX`:
    /// none). A port's frames come from one station or a few, so nearly
    /// every frame's learning is this compare instead of a lookup.
    learned: Vec<u64>,
    /// Directly attached host addresses (as `u32`): IP → (MAC, group).
    /// (Looked up for every routed packet: a fixed hasher, as `fdb`.)
    neigh: FastMap<u32, ([u8; 6], u32)>,
    /// Routes: prefix → next hops (ECMP over those with a live member).
    routes: Vec<(IpNet, Vec<NextHop>)>,
    /// `live[i]`: route `i`'s next hops whose group has a member with
    /// carrier, kept as carriers change: every routed packet picks among
    /// them, and walking each hop's group and its members' carriers per
    /// packet was a chain of cold loads in a fabric.
    live: Vec<Vec<NextHop>>,
    /// `sole[g]`: group `g`'s member if it has exactly one (every port
    /// but a LAG's), else `u32::MAX`.
    sole: Vec<u32>,
    /// Longest-prefix match without a scan: per prefix length present
    /// (longest first), network → index in `routes`. A generated fabric's
    /// switch has hundreds of /24s, looked up for every routed packet.
    lpm: Vec<(u8, FastMap<u32, u32>)>,
    hash: EcmpHash,
    trust: Trust,
    /// The buffer: accounting, thresholds, PFC edges.
    mmu: Mmu,
    /// RED/ECN marking on the egress queues, if configured.
    ecn: Option<Box<Ecn>>,
    /// HPCC-PINT's per-port utilisation, when the fabric runs it.
    pint: Option<Box<SwitchPint>>,
    /// Another part of a partitioned run simulates it (`world::part`).
    elsewhere: bool,
}

impl Switch {
    /// Whether another part of a partitioned run simulates it.
    pub fn elsewhere(&self) -> bool {
        self.elsewhere
    }
    pub fn set_elsewhere(&mut self, elsewhere: bool) {
        self.elsewhere = elsewhere;
    }
    pub fn new(name: String, mac: [u8; 6], hash: EcmpHash, trust: Trust, buffer: u64) -> Switch {
        Switch {
            name,
            mac,
            ports: Vec::new(),
            port_up: Vec::new(),
            groups: Vec::new(),
            group_of: Vec::new(),
            routed: Vec::new(),
            fdb: FastMap::default(),
            learned: Vec::new(),
            neigh: FastMap::default(),
            routes: Vec::new(),
            live: Vec::new(),
            sole: Vec::new(),
            lpm: Vec::new(),
            hash,
            trust,
            mmu: Mmu::new(&MmuConfig::shared_pool(buffer, 0)).expect("an empty pool is valid"),
            ecn: None,
            pint: None,
            elsewhere: false,
        }
    }

    // ----- construction -------------------------------------------------

    /// Adds the port with global id `port`; returns its local index.
    pub fn add_port(&mut self, port: u32) -> u32 {
        self.ports.push(port);
        self.port_up.push(true);
        self.learned.push(u64::MAX);
        (self.ports.len() - 1) as u32
    }

    /// Sets the groups (LAGs and single ports), `group_of[local]` naming
    /// each port's.
    pub fn set_groups(&mut self, groups: Vec<Group>, group_of: Vec<u32>) {
        self.routed = vec![false; groups.len()];
        self.sole = groups
            .iter()
            .map(|g| match g.members[..] {
                [m] => m,
                _ => u32::MAX,
            })
            .collect();
        self.groups = groups;
        self.group_of = group_of;
    }

    /// Adds a route; its next hops' groups become routed ports.
    pub fn add_route(&mut self, net: IpNet, hops: Vec<NextHop>) {
        for h in &hops {
            self.routed[h.group as usize] = true;
        }
        let i = match self.lpm.binary_search_by(|(len, _)| net.prefix.cmp(len)) {
            Ok(i) => i,
            Err(i) => {
                self.lpm.insert(i, (net.prefix, FastMap::default()));
                i
            }
        };
        // A later route for the same prefix wins, as the scan it replaces
        // (the last maximum) had it.
        self.lpm[i]
            .1
            .insert(net.network(), self.routes.len() as u32);
        self.live.push(self.live_hops(&hops));
        self.routes.push((net, hops));
    }

    fn live_hops(&self, hops: &[NextHop]) -> Vec<NextHop> {
        hops.iter()
            .filter(|h| self.group_alive(h.group))
            .copied()
            .collect()
    }

    /// The routes, in the order they were added.
    pub fn routes(&self) -> &[(IpNet, Vec<NextHop>)] {
        &self.routes
    }

    /// Replaces every route (the fabric re-routed around a link change);
    /// groups routed before stay routed.
    pub fn replace_routes(&mut self, routes: Vec<(IpNet, Vec<NextHop>)>) {
        self.routes.clear();
        self.live.clear();
        self.lpm.clear();
        for (net, hops) in routes {
            self.add_route(net, hops);
        }
    }

    /// Marks on its egress queues.
    pub fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = Some(Box::new(ecn));
    }

    /// Runs HPCC-PINT's egress computation ([`crate::cc::pint`]) on every
    /// port: powers of `log_base`, T = `max_rtt`, rounding drawn from the
    /// switch's own stream of `seed`.
    pub fn set_pint(&mut self, log_base: f64, max_rtt: Ps, seed: u64) {
        let rng = crate::rng::component_rng(seed, &format!("pint:{}", self.name));
        self.pint = Some(Box::new(SwitchPint::new(
            log_base,
            max_rtt,
            self.ports.len(),
            rng,
        )));
    }

    /// HPCC-PINT's state, when the fabric runs it.
    pub(super) fn pint_mut(&mut self) -> Option<&mut SwitchPint> {
        self.pint.as_deref_mut()
    }

    /// The pre-learned FDB (MAC → group) and neighbour table.
    pub fn set_tables(
        &mut self,
        fdb: FastMap<[u8; 6], u32>,
        neigh: HashMap<Ipv4Addr, ([u8; 6], u32)>,
    ) {
        self.fdb = fdb.into_iter().map(|(m, g)| (mac_key(&m), g)).collect();
        self.learned.fill(u64::MAX);
        self.neigh = neigh
            .into_iter()
            .map(|(ip, hop)| (u32::from(ip), hop))
            .collect();
    }

    // ----- inspection ---------------------------------------------------

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn mac(&self) -> [u8; 6] {
        self.mac
    }
    /// Global port ids by local index.
    pub fn ports(&self) -> &[u32] {
        &self.ports
    }
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }
    pub fn group_of(&self, local: u32) -> u32 {
        self.group_of[local as usize]
    }
    pub fn is_routed_group(&self, g: u32) -> bool {
        self.routed[g as usize]
    }
    /// Whether the port with local index `local` is a routed port.
    pub fn is_routed(&self, local: u32) -> bool {
        self.group_of
            .get(local as usize)
            .and_then(|&g| self.routed.get(g as usize))
            .copied()
            .unwrap_or(false)
    }
    pub fn mmu(&self) -> &Mmu {
        &self.mmu
    }
    /// Its buffer, once its ports are known.
    pub fn set_mmu(&mut self, mmu: Mmu) {
        self.mmu = mmu;
    }

    // ----- behaviour ----------------------------------------------------

    /// A port's carrier changed. A group left with no live member forgets
    /// what was learned behind it.
    pub fn set_port_up(&mut self, local: u32, up: bool) {
        self.port_up[local as usize] = up;
        self.live = self.routes.iter().map(|(_, h)| self.live_hops(h)).collect();
        if up {
            return;
        }
        let g = self.group_of[local as usize];
        if !self.group_alive(g) {
            self.fdb.retain(|_, v| *v != g);
            self.learned.fill(u64::MAX);
        }
    }

    #[inline]
    fn group_alive(&self, g: u32) -> bool {
        self.groups[g as usize]
            .members
            .iter()
            .any(|&m| self.port_up[m as usize])
    }

    /// L2 learning on a bridged port; a MAC seen on a new port moves there
    /// (station move, as after a bond failover).
    #[inline]
    pub fn learn(&mut self, in_local: u32, src: [u8; 6]) {
        let g = self.group_of[in_local as usize];
        let key = mac_key(&src);
        if self.routed[g as usize] || self.learned[in_local as usize] == key {
            return;
        }
        if self.fdb.insert(key, g) != Some(g) {
            // Moved (or new): no other port may still vouch for it.
            for k in &mut self.learned {
                if *k == key {
                    *k = u64::MAX;
                }
            }
        }
        self.learned[in_local as usize] = key;
    }

    /// The priority (egress queue) the switch's trust mode gives a packet.
    #[inline]
    pub fn classify(&self, pkt: &Packet) -> u8 {
        self.trust.priority_of(pkt)
    }

    /// Where a packet that came in on local port `in_local` goes: a pure
    /// function of the switch's tables and the packet.
    #[inline]
    pub fn forward(&self, in_local: u32, pkt: &Packet) -> Forward {
        let in_group = self.group_of[in_local as usize];
        let to_us = pkt.eth.dst == self.mac;
        if self.routed[in_group as usize] && !to_us {
            // A layer 3 port bridges nothing.
            return Forward::Drop(DropReason::NotOurs);
        }
        let (out, routed_to) = if to_us {
            match self.route(pkt) {
                Ok(hop) => (Some(hop.group), Some(hop.mac)),
                Err(why) => return Forward::Drop(why),
            }
        } else {
            (self.fdb.get(&mac_key(&pkt.eth.dst)).copied(), None)
        };
        let tuple = pkt.five_tuple();
        match out {
            Some(g) if g != in_group => match self.pick_member(g, &tuple) {
                Some(out) => Forward::Port { out, routed_to },
                None => Forward::Drop(DropReason::NoRoute),
            },
            Some(_) => Forward::Filtered,
            None => Forward::Flood(
                (0..self.groups.len() as u32)
                    .filter(|&g| g != in_group && !self.routed[g as usize])
                    .filter_map(|g| self.pick_member(g, &tuple))
                    .collect(),
            ),
        }
    }

    /// The next hop of a packet addressed to the switch: an attached host
    /// (neighbour table), else the longest matching route, ECMP over its
    /// next hops with a live member.
    fn route(&self, pkt: &Packet) -> Result<NextHop, DropReason> {
        let Some((dst, ttl)) = pkt.ipv4_dst_ttl() else {
            return Err(DropReason::NoRoute);
        };
        if ttl <= 1 {
            return Err(DropReason::NoRoute);
        }
        let dst_bits = u32::from(dst);
        if let Some(&(mac, group)) = self.neigh.get(&dst_bits) {
            return Ok(NextHop { group, mac });
        }
        let best = self.lpm.iter().find_map(|(len, nets)| {
            let mask = if *len == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(*len))
            };
            nets.get(&(dst_bits & mask))
        });
        let Some(hops) = best.map(|&i| &self.live[i as usize]) else {
            return Err(DropReason::NoRoute);
        };
        let i = self
            .hash
            .select(&pkt.five_tuple(), hops.len())
            .ok_or(DropReason::NoRoute)?;
        Ok(hops[i])
    }

    /// A member of group `g` by the 5-tuple hash over the members whose
    /// link is up (the first 64 of them; the first member when none is:
    /// the frame is then lost at its egress port).
    ///
    /// Inlined, the group of one member (every port of the stars' switch)
    /// costs a load; the hash over several is a call.
    #[inline(always)]
    fn pick_member(&self, g: u32, tuple: &FiveTuple) -> Option<u32> {
        let sole = self.sole[g as usize];
        if sole != u32::MAX {
            return Some(sole);
        }
        self.pick_among(g, tuple)
    }

    #[inline(never)]
    fn pick_among(&self, g: u32, tuple: &FiveTuple) -> Option<u32> {
        let members = &self.groups[g as usize].members;
        // Counted then indexed, as for routes: no buffer per packet.
        let up = || {
            members
                .iter()
                .copied()
                .filter(|&m| self.port_up[m as usize])
                .take(64)
        };
        let n = up().count();
        if n == 0 {
            return Some(members[0]);
        }
        let i = self.hash.select(tuple, n)?;
        up().nth(i)
    }
}

impl World {
    /// A frame arrived at switch `sw` on its local port `local` (global
    /// `port`).
    pub fn switch_receive(&mut self, port: u32, sw: u32, local: u32, id: PacketId) {
        let s = &mut self.switches[sw as usize];
        let pkt = self.pool.get_mut(id);
        s.learn(local, pkt.eth.src);
        pkt.prio = s.classify(pkt);
        match s.forward(local, pkt) {
            Forward::Port { out, routed_to } => {
                if let Some(mac) = routed_to {
                    pkt.route_hop(s.mac, mac);
                }
                self.enqueue(sw, local, out, id);
            }
            Forward::Flood(outs) => {
                let copy = *pkt;
                for (i, &out) in outs.iter().enumerate() {
                    let id = if i == 0 { id } else { self.pool.alloc(copy) };
                    self.enqueue(sw, local, out, id);
                }
                if outs.is_empty() {
                    self.pool.free(id);
                }
            }
            Forward::Filtered => self.pool.free(id),
            Forward::Drop(why) => self.drop_frame(port, id, why),
        }
    }

    /// Queues a frame on the switch's egress port `out_local`, if the port
    /// has carrier and the buffer admits it; the MMU's XOFF goes upstream.
    fn enqueue(&mut self, sw: u32, in_local: u32, out_local: u32, id: PacketId) {
        let s = &mut self.switches[sw as usize];
        let out = s.ports[out_local as usize];
        let pkt = self.pool.get_mut(id);
        let (len, prio) = (u32::from(pkt.billed_len), usize::from(pkt.prio & 7));
        // The ingress link's rate: what of the frame arrived before a
        // decision taken while it was arriving (`Mmu::admit_at`).
        let (now, in_rate) = (
            self.sched.now(),
            self.ports[s.ports[in_local as usize] as usize].rate(),
        );
        let p = &mut self.ports[out as usize];
        if !p.carrier() {
            return self.drop_frame(out, id, DropReason::LinkDown);
        }
        if p.wd_drops(prio) {
            p.pause_mut().count_wd_drop(prio);
            return self.drop_frame(out, id, DropReason::Buffer);
        }
        let pfc = match s.mmu.admit_at(
            in_local as usize,
            prio,
            u64::from(len),
            Some((now, in_rate)),
        ) {
            Admit::Accept { pfc } => pfc,
            Admit::Drop(why) => {
                p.count_prio_drop(prio, why == MmuDrop::HeadroomFull);
                return self.drop_frame(out, id, DropReason::Buffer);
            }
        };
        pkt.ingress = in_local;
        if let Some(e) = s.ecn.as_deref_mut() {
            if !e.at_dequeue() && e.mark(out_local, prio, p.queued_bytes_of(prio), pkt) {
                p.count_ecn_mark(prio);
            }
        }
        p.push(prio, id, len);
        if let Some(a) = pfc {
            let upstream = s.ports[in_local as usize];
            self.send_pause(upstream, 1 << prio, a == PfcAction::Xoff);
        }
        self.drift_xoff(sw);
        self.pump(out);
    }

    /// Pauses the peers of the lossless queues of switch `sw` that its
    /// filling pool put over their thresholds ([`Mmu::drift_xoff`]).
    fn drift_xoff(&mut self, sw: u32) {
        let now = self.sched.now();
        for (local, prio) in self.switches[sw as usize].mmu.drift_xoff(now) {
            let upstream = self.switches[sw as usize].ports[local as usize];
            self.send_pause(upstream, 1 << prio, true);
        }
    }

    /// A switch port (local index `local` of switch `sw`) starts its next
    /// frame: strict priority, or its transmission selection
    /// (`[switch.ets]`).
    pub fn pump_switch(&mut self, port: u32, sw: u32, local: u32) {
        let p = &mut self.ports[port as usize];
        if let Some((prio, q)) = p.pop_next() {
            // Its telemetry, if the run has any, is read below: ask for it
            // now, while marking and the buffer's release run (its miss was
            // a third of a HPCC fabric's switch time).
            if let Some(int) = self.pool.int_slot(q.id) {
                super::prefetch(int, 1);
            }
            if let Some(e) = self.switches[sw as usize].ecn.as_deref_mut() {
                let pkt = self.pool.get_mut(q.id);
                if e.at_dequeue() && e.mark(local, prio, p.queued_bytes_of(prio), pkt) {
                    p.count_ecn_mark(prio);
                }
            }
            self.release_buffer(port, prio, q.id, q.len);
            self.push_telemetry(port, sw, local, q.id);
            self.sent_from(port, prio, q.id);
            self.transmit(port, q.id);
        }
    }

    /// A frame left the egress queue of `port`: a switch frees its buffer,
    /// and the MMU's XON goes upstream.
    pub fn release_buffer(&mut self, port: u32, prio: usize, id: PacketId, len: u32) {
        if let super::Owner::Switch { sw, .. } = self.ports[port as usize].owner() {
            let ingress = self.pool.get(id).ingress;
            let s = &mut self.switches[sw as usize];
            if let Some(PfcAction::Xon) = s.mmu.release(ingress as usize, prio, u64::from(len)) {
                let upstream = s.ports[ingress as usize];
                self.send_pause(upstream, 1 << prio, false);
            }
        }
    }
}

#[cfg(test)]
mod tests;
