//! `summary.json`'s `counters`: every port's counters under the names the
//! hardware and the kernel give them (mlx5 `ethtool -S` names of Linux
//! drivers/net/ethernet/mellanox/mlx5/core/en_stats.c, the IB PMA port
//! counters and mlx5 `hw_counters` under /sys/class/infiniband),
//! so that a simulated host can be read as a real one is:
//!
//! ```text
//!   "counters": {
//!     "hostA.eth0":  { ethtool -S names (the netdev: bytes, packets, pauses per priority) ... },
//!     "hostA.bond0": { RDMA port counters (IB PMA, 4-byte words) and hw_counters of the RDMA device ... },
//!     "sw1.p3":      { the switch port's counters: per-priority pauses, drops, ECN marks, watchdog,
//!                      bytes and frames sent (with [switch.ets]) ... }
//!   }
//! ```
//!
//! A host's RDMA device is its interface: a NIC (`mlx5_0`, counters under
//! the NIC's port name, beside its netdev counters) or a bond (`mlx5_bond_0`,
//! counters under the bond's name, since the RDMA device of a LAG is one
//! port whatever the slaves). Counters are integers, as the files in sysfs
//! are; a counter a model does not produce is left out rather than shown as
//! a zero it did not measure.

use roce_codec::IbRepr;
use std::collections::BTreeMap;

use crate::world::{PortView, World};

/// One port's (or RDMA device port's) counters, by name.
pub type CounterSet = BTreeMap<String, u64>;

/// Every port's counters, by port (or RDMA device) name.
pub fn of(w: &World) -> BTreeMap<String, CounterSet> {
    let mut out: BTreeMap<String, CounterSet> = BTreeMap::new();
    for (i, p) in w.ports().enumerate() {
        let set = out.entry(p.name().to_string()).or_default();
        netdev(p, set);
        if p.pause_configured() || w.peer_sends_pauses(i) {
            pauses(w, p, set);
        }
        w.nic_rx_counters(i, |name, v| {
            set.insert(name.into(), v);
        });
    }
    rdma(w, &mut out);
    out
}

/// The netdev (`ethtool -S`) counters of a host or switch port. The `_phy`
/// counters count every frame the port put on or took off its wire.
fn netdev(p: PortView<'_>, out: &mut CounterSet) {
    let c = p.counters();
    out.insert("tx_bytes_phy".into(), c.tx_bytes);
    out.insert("tx_packets_phy".into(), c.tx_packets);
    out.insert("rx_bytes_phy".into(), c.rx_bytes);
    out.insert("rx_packets_phy".into(), c.rx_packets);
    for prio in bits(p.marking_priorities()) {
        out.insert(format!("tx_prio{prio}_ecn_marked"), p.ecn_marked(prio));
    }
    // Per priority on the wire (mlx5 en_stats.c's per-prio traffic group:
    // octets as tx_bytes_phy counts them, no FCS), on the ports that count
    // them: those with an egress scheduler other than strict priority.
    if let Some(s) = p.select() {
        for prio in 0..8 {
            let (bytes, packets) = s.tx_of(prio);
            out.insert(format!("tx_prio{prio}_bytes"), bytes);
            out.insert(format!("tx_prio{prio}_packets"), packets);
        }
    }
}

/// The PFC/PAUSE counters (`rx_prio{N}_pause`, `_pause_duration` in
/// microseconds, `_pause_transition`, `tx_prio{N}_pause`,
/// `_pause_duration`; `global` for 802.3x; `rx/tx_pause_ctrl_phy`) of a
/// port that takes part in flow control (it or its peer sends pauses),
/// and on a switch port with PFC its per-priority buffer discards and its
/// watchdog's counters.
fn pauses(w: &World, p: PortView<'_>, out: &mut CounterSet) {
    p.pause_counters(w.now(), |name, v| {
        out.insert(name, v);
    });
    if !p.is_host_port() && p.pause_configured() {
        for prio in 0..8 {
            let (all, lossless) = p.prio_drops(prio);
            out.insert(format!("tx_prio{prio}_discards"), all);
            out.insert(format!("tx_prio{prio}_lossless_discards"), lossless);
        }
    }
}

/// The priorities whose bit is set in `mask`, ascending.
fn bits(mask: u8) -> impl Iterator<Item = usize> {
    (0..8).filter(move |p| mask & 1 << p != 0)
}

/// The RDMA device's port counters (`/sys/class/infiniband/<dev>/ports/1/
/// counters`) and hardware counters (`.../hw_counters`, `rdma statistic`),
/// summed over the device's QPs.
fn rdma(w: &World, out: &mut BTreeMap<String, CounterSet>) {
    for q in w.qps() {
        let c = q.counters();
        let set = out.entry(q.rdma_device_port()).or_default();
        let mut add = |name: &str, v: u64| *set.entry(name.to_string()).or_default() += v;
        // IB PMA data counters (port_xmit_data, port_rcv_data) count 4-byte
        // words of the IB packet, BTH through ICRC, as the QP counts its
        // bytes.
        add("port_xmit_data", c.tx_bytes / 4);
        add("port_xmit_packets", c.tx_packets);
        add("port_rcv_data", c.rx_bytes / 4);
        add("port_rcv_packets", c.rx_packets);
        add("out_of_sequence", c.out_of_sequence_rx);
        add("duplicate_request", c.duplicate_requests_rx);
        add("packet_seq_err", c.naks_rx_by_syndrome.psn_sequence_error);
        add("rnr_nak_retry_err", c.naks_rx_by_syndrome.rnr_nak);
        add("implied_nak_seq_err", c.rewinds.ack_past_read);
        add("local_ack_timeout_err", c.timeouts);
        add("rx_write_requests", c.rx.write.packets);
        add("rx_read_requests", c.rx.read_request.packets);
        add("np_ecn_marked_roce_packets", c.ce_marks_rx);
        add("req_cqe_error", c.req_cqe_error);
        add("req_cqe_flush_error", c.req_cqe_flush_error);
        add("resp_cqe_error", c.resp_cqe_error);
        add("resp_cqe_flush_error", c.resp_cqe_flush_error);
        // The reaction point's counters where the NIC runs DCQCN: CNPs
        // that reached a QP with a reaction point (for an ACK-clocked one,
        // ACKs that echoed a mark), and those that reached one whose
        // priority has none.
        if q.dcqcn() {
            let handled = match (q.reaction_point(), q.ack_clocked()) {
                (Some(rp), _) => rp.cnps,
                (None, Some((_, echoes))) => echoes,
                (None, None) => 0,
            };
            add("rp_cnp_handled", handled);
            add("rp_cnp_ignored", q.cnps_ignored());
        }
    }
    // The notification point's CNPs, per NIC port, summed per device. The
    // NIC sends them outside any QP's counters, but the port's PMA
    // counters count them as the receiving QP counts them. A NIC that
    // notifies by BECN on its ACKs (`cnp_on_ack`) counts each flagged ACK
    // as a CNP sent, and sends no frame for it.
    let cnp_words = IbRepr::cnp(0).buffer_len() as u64 / 4;
    for (device, np, frames) in w.notification_points() {
        let set = out.entry(device).or_default();
        let sent = np.cnps_sent();
        *set.entry("np_cnp_sent".into()).or_default() += sent;
        if frames {
            *set.entry("port_xmit_packets".into()).or_default() += sent;
            *set.entry("port_xmit_data".into()).or_default() += sent * cnp_words;
        }
    }
}
