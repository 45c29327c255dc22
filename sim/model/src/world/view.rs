//! Read-only views of a world, for what reads it after (or between) runs:
//! the run directory's summary, CSVs and plots, sweeps, tests. Nothing
//! here can change the simulation.

use core::net::Ipv4Addr;

use super::World;
use super::bond::Bond;
use super::host::IfaceKind;
use super::port::select::TxSelect;
use super::port::{Owner, Port, PortCounters};
use super::qp::{QpSlot, QpStatus, Role};
use super::retire::RpCounts;
use super::sample::{PortSample, QpSample};
use super::switch::Switch;
use super::tap::Tap;
use crate::cc::NotificationPoint;
use crate::time::{Ps, Rate};
use crate::transport::{QpCounters, QpWorkloadStats};

/// A port.
#[derive(Clone, Copy)]
pub struct PortView<'a> {
    port: &'a Port,
}

impl<'a> PortView<'a> {
    /// `host.nic` or `switch.port`.
    pub fn name(&self) -> &'a str {
        self.port.name()
    }
    pub fn counters(&self) -> &'a PortCounters {
        self.port.counters()
    }
    pub fn rate(&self) -> Rate {
        self.port.rate()
    }
    /// Whether its link's carrier is up (after a run: as the run left it).
    pub fn carrier(&self) -> bool {
        self.port.carrier()
    }
    /// A host NIC's port (not a switch's).
    pub fn is_host_port(&self) -> bool {
        self.port.is_host_port()
    }
    /// Bit `p` set: priority `p`'s egress queue marks ECN (switch ports).
    pub fn marking_priorities(&self) -> u8 {
        self.port.marking()
    }
    /// Its pause counters (`rx_prio3_pause`, ...; watchdog counters on a
    /// switch port that has one), pauses still on counted up to `now`.
    pub fn pause_counters(&self, now: Ps, f: impl FnMut(String, u64)) {
        self.port.pause().counters(now).each(f)
    }
    /// Whether it sends or honours pauses (configured for PFC or PAUSE).
    pub fn pause_configured(&self) -> bool {
        self.port.pause().configured()
    }
    /// Frames of priority `prio` the switch buffer refused for this egress
    /// port, and how many of them were lossless.
    pub fn prio_drops(&self, prio: usize) -> (u64, u64) {
        (self.port.prio_drops(prio), self.port.lossless_drops(prio))
    }
    /// Bit `p` set: priority `p` is paused by the peer now.
    pub fn paused(&self) -> u8 {
        self.port.paused()
    }
    /// Packets its egress queue of priority `prio` marked CE.
    pub fn ecn_marked(&self, prio: usize) -> u64 {
        self.port.ecn_marked(prio)
    }
    /// Its transmission selection, if not strict priority (`[switch.ets]`,
    /// `[host.ets]`), with what it sent per priority.
    pub fn select(&self) -> Option<&'a TxSelect> {
        self.port.select()
    }
}

/// A host: its NICs and bonds, each bond or unbonded NIC one interface and
/// one RDMA device.
#[derive(Clone, Copy)]
pub struct HostView<'a> {
    world: &'a World,
    index: u32,
    host: &'a super::host::Host,
}

impl<'a> HostView<'a> {
    pub fn name(&self) -> &'a str {
        &self.host.name
    }
    /// What its NICs do that verbs do not say.
    pub fn profile(&self) -> &'a super::profile::NicProfile {
        &self.host.profile
    }
    /// Its NICs, in the scenario's order.
    pub fn nics(&self) -> impl ExactSizeIterator<Item = NicView<'a>> + use<'a> {
        let (world, host) = (self.world, self.host);
        host.nics
            .iter()
            .map(move |nic| NicView { world, host, nic })
    }
    /// Its bonds, in the scenario's order.
    pub fn bonds(&self) -> impl Iterator<Item = BondView<'a>> + use<'a> {
        let (world, index) = (self.world, self.index);
        world
            .bonds
            .iter()
            .filter(move |b| b.host == index)
            .map(move |hb| BondView { world, hb })
    }
}

/// A host's NIC.
#[derive(Clone, Copy)]
pub struct NicView<'a> {
    world: &'a World,
    host: &'a super::host::Host,
    nic: &'a super::host::Nic,
}

impl<'a> NicView<'a> {
    /// Its name on the host (`eth0`).
    pub fn name(&self) -> &'a str {
        &self.nic.name
    }
    /// Its own (permanent) MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.nic.mac
    }
    pub fn port(&self) -> PortView<'a> {
        self.world.port(self.nic.port())
    }
    /// Its Ethernet MTU: a bond's slave has its bond's.
    pub fn mtu(&self) -> u32 {
        self.host.iface(self.nic.iface()).mtu
    }
    /// The bond it is a slave of (the bond's name on the host), if any.
    pub fn bond(&self) -> Option<&'a str> {
        self.nic
            .slave()
            .map(|_| self.host.iface(self.nic.iface()).name.as_str())
    }
}

/// A queue pair and where it sits.
#[derive(Clone, Copy)]
pub struct QpView<'a> {
    world: &'a World,
    index: u32,
    slot: &'a QpSlot,
}

impl<'a> QpView<'a> {
    /// Its index (as in [`QpSample::qp`]).
    pub fn index(&self) -> u32 {
        self.index
    }
    pub fn host(&self) -> &'a str {
        &self.world.hosts[self.slot.host as usize].name
    }
    /// The interface (NIC or bond) it belongs to.
    pub fn interface(&self) -> &'a str {
        let h = &self.world.hosts[self.slot.host as usize];
        &h.iface(self.slot.iface).name
    }
    pub fn workload(&self) -> &'a str {
        &self.world.workloads[self.slot.workload as usize].name
    }
    pub fn role(&self) -> Role {
        self.slot.role
    }
    /// Its QP number, and its peer's.
    pub fn qpn(&self) -> u32 {
        self.slot.live.qpn()
    }
    pub fn dest_qpn(&self) -> u32 {
        self.slot.live.dest_qpn()
    }
    /// Everything its transport counted (kept when its flow retired it).
    pub fn counters(&self) -> QpCounters {
        self.slot.live.counters()
    }
    /// The port of its RDMA device, by the name the summary's `counters`
    /// use: `host.nic` for a NIC, `host.bond` for a bond (one RDMA device
    /// whatever its slaves).
    pub fn rdma_device_port(&self) -> String {
        format!("{}.{}", self.host(), self.interface())
    }
    /// Its own address and its peer's.
    pub fn src(&self) -> Ipv4Addr {
        self.slot.l3.src_ip()
    }
    pub fn dst(&self) -> Ipv4Addr {
        self.slot.l3.dst_ip()
    }
    pub fn udp_sport(&self) -> u16 {
        self.slot.sport
    }
    /// The port that carried its first data packet (client QPs).
    pub fn first_data_port(&self) -> Option<PortView<'a>> {
        self.slot.first_data_port.map(|p| self.world.port(p))
    }
    /// That port's index in its bond (enslave order), if bonded.
    pub fn first_data_slave(&self) -> Option<u32> {
        let p = self.slot.first_data_port?;
        match self.world.ports[p as usize].owner() {
            Owner::Host { host, nic } => self.world.hosts[host as usize].nic(nic).slave(),
            Owner::Switch { .. } => None,
        }
    }
    /// Frames it sent, their bytes, and their payload (resends included).
    pub fn tx_packets(&self) -> u64 {
        self.slot.tx_packets
    }
    pub fn tx_bytes(&self) -> u64 {
        self.slot.tx_bytes
    }
    pub fn tx_payload_bytes(&self) -> u64 {
        self.slot.tx_payload
    }
    /// When it put its first packet on the wire.
    pub fn first_tx(&self) -> Option<Ps> {
        self.slot.first_tx
    }
    /// What the workload achieved at this QP's index (the client's view:
    /// a server shares its client's index).
    pub fn stats(&self) -> &'a QpWorkloadStats {
        let w = &self.world.workloads[self.slot.workload as usize].workload;
        w.stats(self.slot.index as usize)
    }
    pub fn status(&self) -> QpStatus {
        self.world.qp_status(self.index)
    }
    /// The `ibv_wc_status` code the summary gives beside the status.
    pub fn status_code(&self) -> u8 {
        self.world.qp_status_code(self.index)
    }
    /// The CNPs and cuts of DCQCN's reaction point, if its NIC runs one
    /// on the QP's priority.
    pub fn reaction_point(&self) -> Option<RpCounts> {
        self.slot.live.rp()
    }
    /// The title and marked ACKs of the reaction point of an algorithm
    /// clocked by ACKs (DCTCP), if its NIC runs one on the QP's priority
    /// in place of DCQCN's.
    pub fn ack_clocked(&self) -> Option<(&'static str, u64)> {
        self.slot.live.ack_clocked()
    }
    /// CNPs that reached it while no reaction point ran on its priority.
    pub fn cnps_ignored(&self) -> u64 {
        self.slot.live.cnps_ignored()
    }
    /// The rate its limiter allows now: its congestion control's, under the workload's
    /// `rate_limit`, at most the port's line rate.
    pub fn allowed_rate(&self) -> Rate {
        let line = self.world.ports[self.slot.port as usize].rate();
        self.slot.live.allowed_rate(line)
    }
    /// Whether its flow is over and its transport state gone
    /// (`world::retire`).
    pub fn retired(&self) -> bool {
        self.slot.live.is_retired()
    }
    /// Whether its host's NIC profile runs DCQCN.
    pub fn dcqcn(&self) -> bool {
        self.world.hosts[self.slot.host as usize]
            .profile
            .dcqcn
            .is_some()
    }
}

/// A bond and what it did.
#[derive(Clone, Copy)]
pub struct BondView<'a> {
    world: &'a World,
    hb: &'a super::host::HostBond,
}

impl<'a> BondView<'a> {
    fn bond(&self) -> &'a Bond {
        &self.hb.bond
    }
    /// `host.bond`.
    pub fn name(&self) -> &'a str {
        &self.bond().name
    }
    /// Its name on its host (`bond0`).
    pub fn iface_name(&self) -> &'a str {
        &self.iface().name
    }
    /// Its MAC address and Ethernet MTU.
    pub fn mac(&self) -> [u8; 6] {
        self.iface().mac
    }
    pub fn mtu(&self) -> u32 {
        self.iface().mtu
    }
    fn iface(&self) -> &'a super::host::Iface {
        self.world.hosts[self.hb.host as usize].iface(self.hb.iface)
    }
    /// The slaves it may transmit on now (the kernel's `bond_slave_can_tx`):
    /// the active slave of an active-backup bond, else every slave the MII
    /// monitor found up; in enslave order.
    pub fn tx_slaves(&self) -> impl Iterator<Item = PortView<'a>> + use<'a> {
        let (w, b) = (self.world, self.bond());
        let backup = b.mode == super::bond::BondMode::ActiveBackup;
        b.slaves
            .iter()
            .enumerate()
            .filter(move |&(i, s)| s.usable && (!backup || i == b.active))
            .map(move |(_, s)| w.port(s.port))
    }
    pub fn mode(&self) -> &'static str {
        self.bond().mode.name()
    }
    pub fn xmit_hash_policy(&self) -> &'static str {
        self.bond().policy.codec().name()
    }
    /// How the RoCE traffic picks its slave, in words a report can print:
    /// `None` for an active-backup bond (the active slave carries it).
    pub fn roce_port_selection(&self) -> Option<&'static str> {
        use super::bond::{BondMode, LagHash, LagSelect};
        if self.bond().mode == BondMode::ActiveBackup {
            return None;
        }
        Some(match (self.bond().lag, self.bond().lag_hash) {
            (LagSelect::Hash, LagHash::Linux) => {
                "RoCE LAG hash mode: each packet's slave is predicted with the Linux bond formula (lag_hash = linux); the ConnectX hardware hash is not public"
            }
            (LagSelect::Hash, LagHash::Crc32) => {
                "RoCE LAG hash mode: each packet's slave comes from a CRC-32 of the policy's fields (lag_hash = crc32), a stand-in for the ConnectX hardware hash, which is not public"
            }
            (LagSelect::QueueAffinity, _) => {
                "RoCE LAG queue-affinity mode: QPs round-robin over the slaves at creation, unless their workload gives a port (client_lag_port, server_lag_port)"
            }
            (LagSelect::Software, _) => {
                "no RoCE LAG: the Linux bond driver's bond_xmit_hash over the usable slaves"
            }
        })
    }
    /// Its slaves' ports, in enslave order.
    pub fn slaves(&self) -> impl Iterator<Item = PortView<'a>> + use<'a> {
        let w = self.world;
        self.bond().slaves.iter().map(move |s| w.port(s.port))
    }
    /// Every change it made: (time, kernel-style message).
    pub fn log(&self) -> &'a [(Ps, String)] {
        &self.bond().log
    }
}

/// A switch's buffer.
#[derive(Clone, Copy)]
pub struct SwitchView<'a> {
    world: &'a World,
    switch: &'a Switch,
}

/// One switch port's PFC headroom: what it has for each of its lossless
/// priorities, and what they need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortHeadroom {
    pub port: u32,
    /// Bit per lossless priority.
    pub lossless: u8,
    pub configured_bytes: u64,
    pub need: super::mmu::HeadroomNeed,
}

impl PortHeadroom {
    /// Its lossless priorities, lowest first.
    pub fn priorities(&self) -> impl Iterator<Item = u8> + '_ {
        (0..super::PRIOS as u8).filter(|&p| self.lossless & 1 << p != 0)
    }
    pub fn needed_bytes(&self) -> u64 {
        self.need.bytes()
    }
    /// Bytes short of the need (0: enough).
    pub fn short_bytes(&self) -> u64 {
        self.needed_bytes().saturating_sub(self.configured_bytes)
    }
}

impl<'a> SwitchView<'a> {
    pub fn name(&self) -> &'a str {
        self.switch.name()
    }
    pub fn buffer_bytes(&self) -> u64 {
        self.switch.mmu().buffer_bytes()
    }
    pub fn peak_buffer_bytes(&self) -> u64 {
        self.switch.mmu().peak_used_bytes()
    }
    /// Lossless frames its buffer dropped (`None`: it has no lossless
    /// priority).
    pub fn lossless_drops(&self) -> Option<u64> {
        let m = self.switch.mmu();
        (m.lossless_mask() != 0).then(|| m.lossless_drops())
    }
    /// Each port's headroom beside what its lossless priorities need
    /// (empty: the switch has no lossless priority).
    pub fn headroom(&self) -> Vec<PortHeadroom> {
        let m = self.switch.mmu();
        let lossless = m.lossless_mask();
        if lossless == 0 {
            return Vec::new();
        }
        self.switch
            .ports()
            .iter()
            .enumerate()
            .map(|(local, &port)| PortHeadroom {
                port,
                lossless,
                configured_bytes: m.headroom_bytes(local),
                need: self.world.headroom_need(port),
            })
            .collect()
    }
}

/// A capture tap.
#[derive(Clone, Copy)]
pub struct TapView<'a> {
    world: &'a World,
    tap: &'a Tap,
}

impl<'a> TapView<'a> {
    pub fn port(&self) -> PortView<'a> {
        self.world.port(self.tap.port)
    }
    /// Its file, inside the run directory.
    pub fn file(&self) -> &'a str {
        &self.tap.file_name
    }
    pub fn frames(&self) -> u64 {
        self.tap.frames
    }
}

impl World {
    /// Port `i` (indices as in [`PortSample::port`]).
    pub fn port(&self, i: u32) -> PortView<'_> {
        PortView {
            port: &self.ports[i as usize],
        }
    }
    pub fn ports(&self) -> impl ExactSizeIterator<Item = PortView<'_>> {
        self.ports.iter().map(|port| PortView { port })
    }
    /// Each switch and host whose ports run a transmission selection other
    /// than strict priority, in the order of their first such port: its
    /// name, how many of its ports run it, and the selection (one table
    /// sets them all alike).
    pub fn tx_selections(&self) -> Vec<(&str, usize, &TxSelect)> {
        let mut out: Vec<(&str, usize, &TxSelect)> = Vec::new();
        for p in &self.ports {
            let Some(s) = p.select() else { continue };
            let name = match p.owner() {
                Owner::Switch { sw, .. } => self.switches[sw as usize].name(),
                Owner::Host { host, .. } => self.hosts[host as usize].name.as_str(),
            };
            match out.iter_mut().find(|(n, ..)| *n == name) {
                Some(o) => o.1 += 1,
                None => out.push((name, 1, s)),
            }
        }
        out
    }
    /// The receive-buffer counters of port `i`'s NIC, if it has one
    /// (`rx_discards_phy`, `tx_pause_storm_*_events`).
    pub fn nic_rx_counters(&self, i: usize, f: impl FnMut(&'static str, u64)) {
        if let Owner::Host { host, nic } = self.ports[i].owner() {
            if let Some(rx) = self.hosts[host as usize].nics[nic as usize].rx.as_deref() {
                rx.counters(f);
            }
        }
    }
    /// Whether the port at the other end of port `i`'s link sends pauses.
    pub fn peer_sends_pauses(&self, i: usize) -> bool {
        let peer = self.ports[i].peer();
        self.ports
            .get(peer as usize)
            .is_some_and(|q| q.pause().configured())
    }
    /// QP `i` (indices as in [`QpSample::qp`]).
    pub fn qp(&self, i: u32) -> QpView<'_> {
        QpView {
            world: self,
            index: i,
            slot: &self.qps[i as usize],
        }
    }
    /// The NCCL collectives (`[[collective]]`) and their names, in order.
    pub fn collectives(
        &self,
    ) -> impl Iterator<Item = (&str, &crate::transport::collective::Collective)> {
        self.workloads
            .iter()
            .filter_map(|w| Some((w.name.as_str(), w.workload.as_collective()?)))
    }
    /// Every QP, both ends of every connection, in creation order.
    pub fn qps(&self) -> impl ExactSizeIterator<Item = QpView<'_>> {
        (0..self.qps.len() as u32).map(|i| self.qp(i))
    }
    pub fn bonds(&self) -> impl ExactSizeIterator<Item = BondView<'_>> {
        self.bonds.iter().map(|hb| BondView { world: self, hb })
    }
    /// Every host, in the scenario's order.
    pub fn hosts(&self) -> impl ExactSizeIterator<Item = HostView<'_>> {
        self.hosts.iter().enumerate().map(|(i, host)| HostView {
            world: self,
            index: i as u32,
            host,
        })
    }
    /// Each lossless receive buffer of a host NIC with buffers of its own
    /// (`[host.pfc]`): its headroom above XOFF beside what its lossless
    /// priorities need.
    pub fn nic_headroom(&self) -> Vec<PortHeadroom> {
        let mut rows = Vec::new();
        for (port, layout) in self.nic_rx_layouts() {
            for b in layout.buffers.iter().filter(|b| b.lossless()) {
                rows.push(PortHeadroom {
                    port,
                    lossless: b.pauses,
                    configured_bytes: b.size - b.xoff,
                    need: self.headroom_need(port),
                });
            }
        }
        rows
    }

    /// The receive buffers of every cabled host NIC that has them
    /// (`[host.pfc]`), by port, in host and NIC order.
    pub fn nic_rx_layouts(&self) -> Vec<(u32, &super::nic_rx::RxLayout)> {
        let mut out = Vec::new();
        for h in &self.hosts {
            for n in &h.nics {
                let Some(rx) = n.rx.as_deref() else { continue };
                if n.port != u32::MAX {
                    out.push((n.port, &rx.config().layout));
                }
            }
        }
        out
    }
    pub fn switches(&self) -> impl ExactSizeIterator<Item = SwitchView<'_>> {
        self.switches.iter().map(|switch| SwitchView {
            world: self,
            switch,
        })
    }
    /// Which hosts take part in the run, by index: those with a queue
    /// pair and those whose ports have sent, received or dropped a frame.
    /// The rest (the idle hosts of a reference topology, there to size its
    /// switches' buffers) have nothing to show but zeros.
    pub fn hosts_taking_part(&self) -> Vec<bool> {
        let mut part = vec![false; self.hosts.len()];
        for q in &self.qps {
            part[q.host as usize] = true;
        }
        for (h, host) in self.hosts.iter().enumerate() {
            part[h] |= host.nics.iter().any(|n| {
                let c = self.ports[n.port() as usize].counters();
                c.tx_packets + c.rx_packets + c.drops > 0
            });
        }
        part
    }

    /// Which hosts a flow (`[[traffic]]`) not started yet names, by index:
    /// they will take part once it starts.
    pub fn hosts_of_pending_flows(&self) -> Vec<bool> {
        let mut named = vec![false; self.hosts.len()];
        for f in self.pending.iter() {
            for h in f.hosts().into_iter().flatten() {
                named[h as usize] = true;
            }
        }
        named
    }
    pub fn taps(&self) -> impl ExactSizeIterator<Item = TapView<'_>> {
        self.taps.iter().map(|tap| TapView { world: self, tap })
    }
    /// Every port's samples, one block of one sample per port per time.
    pub fn port_samples(&self) -> &[PortSample] {
        self.sampler.port_samples()
    }
    /// Every QP's samples, one block of one sample per QP per time.
    pub fn qp_samples(&self) -> &[QpSample] {
        self.sampler.qp_samples()
    }

    /// Every host NIC's DCQCN notification point, with the name of the
    /// RDMA device port it belongs to (`host.nic`, or `host.bond` for a
    /// bond's slaves), and whether its notifications are CNP frames
    /// (false: BECN on ACKs, `cnp_on_ack`, which costs no frame).
    pub fn notification_points(&self) -> impl Iterator<Item = (String, &NotificationPoint, bool)> {
        self.hosts.iter().flat_map(|h| {
            let frames = h.profile.dcqcn.as_ref().is_some_and(|d| !d.cnp_on_ack);
            h.nics.iter().filter_map(move |n| {
                let np = n.np.as_ref()?;
                Some((
                    format!("{}.{}", h.name, h.iface(n.iface()).name),
                    np,
                    frames,
                ))
            })
        })
    }

    /// Number of queue pairs made so far (both ends of every connection;
    /// a flow's two when it starts).
    pub fn qp_count(&self) -> usize {
        self.qps.len()
    }

    /// Number of RC connections: the workloads' `qps` summed, one client
    /// QP each, flows not yet started included.
    pub fn connection_count(&self) -> usize {
        self.qps.iter().filter(|s| s.role == Role::Client).count() + self.flows_not_started()
    }

    /// Flows whose QPs are not made yet.
    pub fn flows_not_started(&self) -> usize {
        self.pending.iter().filter(|p| !p.started()).count()
    }

    /// Ports of the interfaces client QPs send from: every slave of a
    /// bond, used or not, or the NIC's port; ascending.
    pub fn client_ports(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for s in self.qps.iter().filter(|s| s.role == Role::Client) {
            let h = &self.hosts[s.host as usize];
            match h.iface(s.iface).kind {
                IfaceKind::Nic(n) => out.push(h.nic(n).port()),
                IfaceKind::Bond(b) => {
                    let slaves = &self.bonds[b as usize].bond.slaves;
                    out.extend(slaves.iter().map(|sl| sl.port));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}
