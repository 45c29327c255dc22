//! Read-only views of a world, for what reads it after (or between) runs:
//! the run directory's summary, CSVs and plots, sweeps, tests. Nothing
//! here can change the simulation.

use core::net::Ipv4Addr;

use super::World;
use super::bond::Bond;
use super::host::IfaceKind;
use super::port::{Owner, Port, PortCounters};
use super::qp::{QpSlot, QpStatus, Role};
use super::sample::{PortSample, QpSample};
use super::switch::Switch;
use super::tap::Tap;
use crate::cc::{NotificationPoint, ReactionPoint};
use crate::time::{Ps, Rate};
use crate::transport::{QpWorkloadStats, RcQp};

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
    /// A host NIC's port (not a switch's).
    pub fn is_host_port(&self) -> bool {
        self.port.is_host_port()
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
    /// The transport state machine (QPN, counters, state).
    pub fn qp(&self) -> &'a RcQp {
        &self.slot.qp
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
    /// DCQCN's reaction point, if its NIC runs one on the QP's priority.
    pub fn reaction_point(&self) -> Option<&'a ReactionPoint> {
        self.slot.cc.rp.as_ref()
    }
    /// CNPs that reached it while no reaction point ran on its priority.
    pub fn cnps_ignored(&self) -> u64 {
        self.slot.cc.cnps_ignored
    }
    /// The rate its limiter allows now: DCQCN's, under the workload's
    /// `rate_limit`, at most the port's line rate.
    pub fn allowed_rate(&self) -> Rate {
        let line = self.world.ports[self.slot.port as usize].rate();
        self.slot.cc.allowed_rate(line)
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
    bond: &'a Bond,
}

impl<'a> BondView<'a> {
    /// `host.bond`.
    pub fn name(&self) -> &'a str {
        &self.bond.name
    }
    pub fn mode(&self) -> &'static str {
        self.bond.mode.name()
    }
    pub fn xmit_hash_policy(&self) -> &'static str {
        self.bond.policy.codec().name()
    }
    /// Its slaves' ports, in enslave order.
    pub fn slaves(&self) -> impl Iterator<Item = PortView<'a>> + use<'a> {
        let w = self.world;
        self.bond.slaves.iter().map(move |s| w.port(s.port))
    }
    /// Every change it made: (time, kernel-style message).
    pub fn log(&self) -> &'a [(Ps, String)] {
        &self.bond.log
    }
}

/// A switch's buffer.
#[derive(Clone, Copy)]
pub struct SwitchView<'a> {
    switch: &'a Switch,
}

impl<'a> SwitchView<'a> {
    pub fn name(&self) -> &'a str {
        self.switch.name()
    }
    pub fn buffer_bytes(&self) -> u64 {
        self.switch.buffer().size()
    }
    pub fn peak_buffer_bytes(&self) -> u64 {
        self.switch.buffer().peak_used()
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
    /// QP `i` (indices as in [`QpSample::qp`]).
    pub fn qp(&self, i: u32) -> QpView<'_> {
        QpView {
            world: self,
            index: i,
            slot: &self.qps[i as usize],
        }
    }
    /// Every QP, both ends of every connection, in creation order.
    pub fn qps(&self) -> impl ExactSizeIterator<Item = QpView<'_>> {
        (0..self.qps.len() as u32).map(|i| self.qp(i))
    }
    pub fn bonds(&self) -> impl ExactSizeIterator<Item = BondView<'_>> {
        self.bonds.iter().map(|b| BondView {
            world: self,
            bond: &b.bond,
        })
    }
    pub fn switches(&self) -> impl ExactSizeIterator<Item = SwitchView<'_>> {
        self.switches.iter().map(|switch| SwitchView { switch })
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
    /// bond's slaves).
    pub fn notification_points(&self) -> impl Iterator<Item = (String, &NotificationPoint)> {
        self.hosts.iter().flat_map(|h| {
            h.nics.iter().filter_map(move |n| {
                let np = n.np.as_ref()?;
                Some((format!("{}.{}", h.name, h.iface(n.iface()).name), np))
            })
        })
    }

    /// Number of queue pairs (both ends of every connection).
    pub fn qp_count(&self) -> usize {
        self.qps.len()
    }

    /// Number of RC connections: the workloads' `qps` summed, one client
    /// QP each.
    pub fn connection_count(&self) -> usize {
        self.qps.iter().filter(|s| s.role == Role::Client).count()
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
