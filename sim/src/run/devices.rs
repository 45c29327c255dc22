//! A simulated host as Linux shows it: its netdevs, its RDMA devices, and
//! which of `summary.json`'s counters (see [`super::counters`]) belong to
//! which, for `counters.prom` ([`super::prom`]) and the sysfs tree
//! ([`super::sysfs`]).
//!
//! ```text
//!  host hostA (NICs eth0, eth1 bonded as bond0, eth2)
//!    netdevs   eth0, eth1, eth2, bond0          (class/net; NICs first, then bonds)
//!    RDMA      mlx5_bond_0 over bond0           (the RoCE LAG: one device for the bond)
//!              mlx5_2      over eth2            (mlx5_<n>: the n-th NIC of the host)
//!  counters   "hostA.eth0"  ethtool -S names               → netdev eth0
//!             "hostA.bond0" IB PMA names  → counters/      → mlx5_bond_0 port 1
//!                           mlx5 hw names → hw_counters/
//!             "hostA.eth2"  both kinds, told apart by name → eth2 and mlx5_2 port 1
//! ```
//!
//! Device names follow mlx5: every NIC registers `mlx5_<n>` in probe order
//! (here the host's NIC order); a RoCE LAG unregisters its slaves' devices
//! and registers `mlx5_bond_<n>` in their place, so a bond's slaves have
//! no RDMA device of their own and the n-th bond of a host is
//! `mlx5_bond_<n>`. Every RDMA device has one port, port 1.
//!
//! A counter's kind is its name: the IB PMA names are the kernel's fixed
//! list (`drivers/infiniband/core/sysfs.c`, `pma_attrs_ext`), the hardware
//! counters the mlx5 driver's (`drivers/infiniband/hw/mlx5/counters.c`:
//! `basic_q_cnts` ... `ext_ppcnt_cnts`); every other name is an `ethtool -S`
//! counter of the port's netdev. A counter that the model adds later is
//! placed by the same rule with no change here (an RDMA counter newer than
//! these lists would show as an ethtool counter: the tests check that every
//! counter of a bond's RDMA device is known here).

use crate::time::Rate;
use crate::world::{BondView, NicView, PortView, World};

/// Where a counter belongs, by its hardware name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An IB PMA port counter: `ports/<n>/counters/<name>`.
    Pma,
    /// An RDMA hardware counter: `ports/<n>/hw_counters/<name>`.
    Hw,
    /// A netdev's `ethtool -S` counter (no sysfs file).
    Ethtool,
}

/// The IB PMA counters the kernel shows under `counters/`
/// (`pma_attrs_ext`, with the extended 64-bit data and packet counters).
pub const PMA: [&str; 21] = [
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_discards",
    "port_xmit_constraint_errors",
    "port_rcv_constraint_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "VL15_dropped",
    "port_xmit_data",
    "port_rcv_data",
    "port_xmit_packets",
    "port_rcv_packets",
    "port_xmit_wait",
    "unicast_xmit_packets",
    "unicast_rcv_packets",
    "multicast_xmit_packets",
    "multicast_rcv_packets",
];

/// The mlx5 driver's hardware counters (`hw_counters/`), in the driver's
/// order: Q counters, congestion counters, the extended PPCNT one.
pub const MLX5_HW: [&str; 31] = [
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "req_transport_retries_exceeded",
    "req_rnr_retries_exceeded",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_icrc_encapsulated",
];

/// The kind of the counter named `name`.
pub fn kind(name: &str) -> Kind {
    if PMA.contains(&name) {
        Kind::Pma
    } else if MLX5_HW.contains(&name) {
        Kind::Hw
    } else {
        Kind::Ethtool
    }
}

/// A per-priority name without its priority: `rx_prio3_pause` →
/// (`rx_prio_pause`, 3). Other names come back whole.
pub fn split_priority(name: &str) -> (String, Option<u8>) {
    let mut from = 0;
    while let Some(i) = name[from..].find("prio").map(|i| i + from) {
        let after = &name[i + 4..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &after[digits..];
        let bounded = i == 0 || name.as_bytes()[i - 1] == b'_';
        if digits > 0 && bounded && (rest.is_empty() || rest.starts_with('_')) {
            if let Ok(p) = after[..digits].parse::<u8>() {
                return (format!("{}prio{rest}", &name[..i]), Some(p));
            }
        }
        from = i + 4;
    }
    (name.to_string(), None)
}

/// A netdev of a host: a NIC or a bond.
#[derive(Clone, Copy)]
pub enum Netdev<'a> {
    Nic(NicView<'a>),
    Bond(BondView<'a>),
}

/// What `/sys/class/net/<if>/statistics` can say: the kernel's names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetStats {
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub rx_dropped: u64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_dropped: u64,
}

impl<'a> Netdev<'a> {
    /// Its name on the host (`eth0`, `bond0`).
    pub fn name(&self) -> &'a str {
        match self {
            Netdev::Nic(n) => n.name(),
            Netdev::Bond(b) => b.iface_name(),
        }
    }
    /// Its address: a bond's slaves carry the bond's, as Linux sets them.
    pub fn mac(&self, m: &Machine<'a>) -> [u8; 6] {
        match self {
            Netdev::Nic(n) => n
                .bond()
                .and_then(|b| m.bond(b))
                .map_or(n.mac(), |b| b.mac()),
            Netdev::Bond(b) => b.mac(),
        }
    }
    pub fn mtu(&self) -> u32 {
        match self {
            Netdev::Nic(n) => n.mtu(),
            Netdev::Bond(b) => b.mtu(),
        }
    }
    /// Carrier: the link's for a NIC; for a bond, whether it has a slave
    /// the MII monitor finds up.
    pub fn carrier(&self) -> bool {
        match self {
            Netdev::Nic(n) => n.port().carrier(),
            Netdev::Bond(b) => b.tx_slaves().next().is_some(),
        }
    }
    /// Link speed in Mb/s, `None` without carrier (sysfs then shows -1):
    /// a bond's is the sum over the slaves it may send on, as
    /// `bond_ethtool_get_link_ksettings` adds them.
    pub fn speed_mbps(&self) -> Option<u64> {
        let mbps = |p: PortView<'_>| p.rate().bps() / 1_000_000;
        match self {
            Netdev::Nic(n) => n.port().carrier().then(|| mbps(n.port())),
            Netdev::Bond(b) => self.carrier().then(|| b.tx_slaves().map(mbps).sum()),
        }
    }
    /// Frames and bytes on the port(s), every frame counted (see
    /// [`super::sysfs`] for how that differs from a real mlx5 netdev);
    /// drops: frames received but not for this NIC (rx), frames the port
    /// could not send because its link was down (tx). A bond sums its
    /// slaves, as `bond_get_stats` does.
    pub fn stats(&self) -> NetStats {
        let of = |p: PortView<'_>| {
            let c = p.counters();
            NetStats {
                rx_bytes: c.rx_bytes,
                rx_packets: c.rx_packets,
                rx_dropped: c.drops_not_ours,
                tx_bytes: c.tx_bytes,
                tx_packets: c.tx_packets,
                tx_dropped: c.drops_link_down,
            }
        };
        match self {
            Netdev::Nic(n) => of(n.port()),
            Netdev::Bond(b) => b
                .slaves()
                .map(of)
                .fold(NetStats::default(), |a, s| NetStats {
                    rx_bytes: a.rx_bytes + s.rx_bytes,
                    rx_packets: a.rx_packets + s.rx_packets,
                    rx_dropped: a.rx_dropped + s.rx_dropped,
                    tx_bytes: a.tx_bytes + s.tx_bytes,
                    tx_packets: a.tx_packets + s.tx_packets,
                    tx_dropped: a.tx_dropped + s.tx_dropped,
                }),
        }
    }
}

/// An RDMA device of a host (one port, port 1).
pub struct RdmaDevice<'a> {
    /// `mlx5_0`, `mlx5_bond_0`.
    pub name: String,
    /// The netdev it runs over (a NIC or a bond).
    pub netdev: Netdev<'a>,
    /// Its key in `summary.json`'s `counters`: `host.iface`.
    pub key: String,
    /// The physical port whose speed it reports (a bond's first slave:
    /// mlx5 reads the PTYS register of its native port).
    pub phys: PortView<'a>,
}

impl RdmaDevice<'_> {
    /// Port state ACTIVE: the netdev (a LAG's bond) is up with carrier.
    pub fn active(&self) -> bool {
        self.netdev.carrier()
    }
    pub fn rate(&self) -> Rate {
        self.phys.rate()
    }
}

/// A host with its netdevs and RDMA devices.
pub struct Machine<'a> {
    pub name: &'a str,
    /// NICs in the host's order, then bonds.
    pub netdevs: Vec<Netdev<'a>>,
    pub rdma: Vec<RdmaDevice<'a>>,
}

impl<'a> Machine<'a> {
    fn bond(&self, name: &str) -> Option<BondView<'a>> {
        self.netdevs.iter().find_map(|n| match n {
            Netdev::Bond(b) if b.iface_name() == name => Some(*b),
            _ => None,
        })
    }
    /// The ifindex Linux would give netdev `i` (`lo` is 1).
    pub fn ifindex(&self, i: usize) -> usize {
        i + 2
    }
}

/// Every host of the world as Linux shows it, in the scenario's order.
pub fn machines(w: &World) -> Vec<Machine<'_>> {
    w.hosts()
        .map(|h| {
            let mut netdevs: Vec<Netdev<'_>> = h.nics().map(Netdev::Nic).collect();
            netdevs.extend(h.bonds().map(Netdev::Bond));
            let mut rdma = Vec::new();
            for (i, b) in h.bonds().enumerate() {
                let Some(phys) = b.slaves().next() else {
                    continue;
                };
                rdma.push(RdmaDevice {
                    name: format!("mlx5_bond_{i}"),
                    netdev: Netdev::Bond(b),
                    key: format!("{}.{}", h.name(), b.iface_name()),
                    phys,
                });
            }
            for (i, n) in h.nics().enumerate().filter(|(_, n)| n.bond().is_none()) {
                rdma.push(RdmaDevice {
                    name: format!("mlx5_{i}"),
                    netdev: Netdev::Nic(n),
                    key: format!("{}.{}", h.name(), n.name()),
                    phys: n.port(),
                });
            }
            rdma.sort_by(|a, b| a.name.cmp(&b.name));
            Machine {
                name: h.name(),
                netdevs,
                rdma,
            }
        })
        .collect()
}

/// Who a key of `summary.json`'s `counters` belongs to.
#[derive(Debug, Clone)]
pub struct Owner {
    /// The host (or switch).
    pub host: String,
    /// The netdev its ethtool counters are of (a switch's port name).
    pub netdev: String,
    /// The RDMA device its PMA and hardware counters are of, if any.
    pub rdma: Option<String>,
}

/// The owner of every counters key that is a host's; any other key
/// (`switch.port`) is its own netdev on the switch ([`owner`]).
pub fn owners(w: &World) -> Vec<(String, Owner)> {
    let mut out = Vec::new();
    for m in machines(w) {
        for n in &m.netdevs {
            let key = format!("{}.{}", m.name, n.name());
            let rdma = m.rdma.iter().find(|d| d.key == key).map(|d| d.name.clone());
            out.push((
                key,
                Owner {
                    host: m.name.to_string(),
                    netdev: n.name().to_string(),
                    rdma,
                },
            ));
        }
    }
    out
}

/// The owner of counters key `key` among `owners`, else the switch port
/// (or any other `node.port`) the key names.
pub fn owner(owners: &[(String, Owner)], key: &str) -> Owner {
    if let Some((_, o)) = owners.iter().find(|(k, _)| k == key) {
        return o.clone();
    }
    let (host, port) = key.split_once('.').unwrap_or((key, ""));
    Owner {
        host: host.to_string(),
        netdev: port.to_string(),
        rdma: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_come_out_of_names() {
        let s = |n: &str| split_priority(n);
        assert_eq!(s("rx_prio3_pause"), ("rx_prio_pause".into(), Some(3)));
        assert_eq!(
            s("tx_prio7_pause_duration"),
            ("tx_prio_pause_duration".into(), Some(7))
        );
        assert_eq!(s("prio0_bytes"), ("prio_bytes".into(), Some(0)));
        assert_eq!(s("rx_prio4"), ("rx_prio".into(), Some(4)));
        // Not a priority: no digits, digits glued to more letters, or
        // "prio" inside a word.
        for n in [
            "rx_global_pause",
            "rx_prio_pause",
            "rx_prio3x_pause",
            "xprio3_pause",
            "tx_bytes_phy",
        ] {
            assert_eq!(s(n), (n.to_string(), None), "{n}");
        }
    }

    #[test]
    fn kinds_follow_the_kernel_lists() {
        assert_eq!(kind("port_xmit_data"), Kind::Pma);
        assert_eq!(kind("VL15_dropped"), Kind::Pma);
        assert_eq!(kind("np_cnp_sent"), Kind::Hw);
        assert_eq!(kind("out_of_sequence"), Kind::Hw);
        assert_eq!(kind("rx_prio3_pause"), Kind::Ethtool);
        assert_eq!(kind("tx_bytes_phy"), Kind::Ethtool);
        // The lists do not overlap and hold no repeats.
        let mut all: Vec<&str> = PMA.iter().chain(MLX5_HW.iter()).copied().collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), PMA.len() + MLX5_HW.len());
    }
}
