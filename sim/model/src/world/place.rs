//! Queue pairs placed on their ports: a connection's two ends ([`Side`]),
//! each QP's headers, bond slave, rate limiter, window and reaction point
//! ([`add_qp`]), at build time or when a flow starts
//! ([`super::flows::start_flow`]).

use std::collections::HashMap;

use core::net::Ipv4Addr;

use roce_codec::Psn;
use roce_codec::frame::{EthRepr, VlanTag};

use super::World;
use super::host::IfaceKind;
use super::nic_cc::{QpCc, SeqCount};
use super::profile::{RoceMode, Trust};
use super::qp::{QpSlot, Role};
use super::retire::QpBody;
use crate::cc::{AckClocked, Algorithm, ReactionPoint};
use crate::packet::{L3, Packet};
use crate::time::Ps;
use crate::transport::{QpConfig, RcQp};

/// One end of a workload: an interface with an address.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    pub host: u32,
    pub iface: u32,
    pub ip: Ipv4Addr,
}

/// What a QP takes from its workload's settings.
#[derive(Debug, Clone, Copy)]
pub struct QpKnobs {
    pub tc: u8,
    pub sl: u8,
    pub flow_label: u32,
    pub rate_limit: Option<crate::time::Rate>,
    /// The client's and the server's LAG port (1-based), if set.
    pub lag_port: [Option<u8>; 2],
}

/// One end of one connection, as its QP is set up.
#[derive(Debug, Clone, Copy)]
pub struct Side {
    pub role: Role,
    pub local: Endpoint,
    pub remote_ip: Ipv4Addr,
    /// Local and remote QPN.
    pub qpn: [u32; 2],
    /// The PSN this end sends first, and the one it expects first.
    pub psn: [Psn; 2],
    pub dmac: [u8; 6],
    pub sport: u16,
    /// The RoCE version its QP sends.
    pub mode: RoceMode,
}

/// The RoCE versions of a connection's client and server QPs: the client
/// its `default_roce_mode`; the server the client's when its NIC supports
/// it (the CM answers in the REQ's GID type), else its own, and then the
/// two do not understand each other.
pub fn modes(w: &World, client: &Endpoint, server: &Endpoint) -> (RoceMode, RoceMode) {
    let (ch, sh) = (
        &w.hosts[client.host as usize],
        &w.hosts[server.host as usize],
    );
    let s = if sh.roce_modes.supports(ch.roce) {
        ch.roce
    } else {
        sh.roce
    };
    (ch.roce, s)
}

/// Creates the QP of one end of connection `index` of workload `wl`;
/// returns its global index.
pub fn add_qp(
    w: &mut World,
    wc: &QpKnobs,
    cfg: QpConfig,
    side: &Side,
    wl: u32,
    index: u32,
    contexts: &mut HashMap<u32, u32>,
) -> u32 {
    let gidx = w.qps.len() as u32;
    let h = &mut w.hosts[side.local.host as usize];
    let (trust, roce) = (h.trust, side.mode);
    let profile = h.profile.clone();
    let f = &mut h.ifaces[side.local.iface as usize];
    f.qpns.insert(side.qpn[0], gidx);
    let prio = match trust {
        Trust::Dscp => (wc.tc >> 2) >> 3,
        Trust::Pcp => wc.sl & 7,
    };
    let vlan = f.vlan.map(|vid| VlanTag::dot1q(vid, prio));
    let (src, dst) = (side.local.ip, side.remote_ip);
    let l3 = match roce {
        RoceMode::V2 => L3::V2 {
            src,
            dst,
            dscp: wc.tc >> 2,
            ecn: profile.ecn_bits(wc.tc, prio),
            ttl: 64,
            sport: side.sport,
            ecmp: crate::packet::hash_ports(side.sport),
        },
        RoceMode::V1 => L3::V1 {
            sgid: src,
            dgid: dst,
            tclass: wc.tc,
            flow_label: wc.flow_label,
        },
    };
    let eth = EthRepr {
        dst: side.dmac,
        src: f.mac,
    };
    let (port, lag_hash, affinity) = match f.kind {
        IfaceKind::Nic(n) => (h.nics[n as usize].port, 0, 0),
        IfaceKind::Bond(b) => {
            let keys = Packet {
                eth,
                vlan,
                l3,
                ib: Default::default(),
                prio,
                frame_len: 0,
                billed_len: 0,
                wire_extra: 0,
                src_qp: gidx,
                ingress: u32::MAX,
                mad: u32::MAX,
                int: crate::packet::NO_INT,
                ts: Ps::ZERO,
            }
            .flow_keys();
            let bond = &mut w.bonds[b as usize].bond;
            let hash = bond.hash(&keys);
            // RESET->INIT takes the round-robin affinity; with a non-zero
            // flow label the core then asks the bond for the slave of a fake
            // frame of this flow (drivers/infiniband/core/lag.c: the bond's
            // hash over all slaves, `bond_xmit_get_slave`) at INIT->RTR.
            let ctx = contexts.entry(b).or_insert_with(|| bond.new_context());
            let mut aff = bond.next_affinity(ctx);
            if wc.flow_label != 0 {
                aff = bond.linux_slave_all(&keys);
            }
            // mlx5dv_modify_qp_lag_port, after both (checked at the key).
            let end = usize::from(side.role != Role::Client);
            if let Some(p) = wc.lag_port[end] {
                aff = u32::from(p) - 1;
            }
            let s = bond.slave_for(hash, aff);
            (bond.slaves[s].port, hash, aff)
        }
    };
    // Wire bytes beyond the IB packet, for the QP's rate limiter: Ethernet
    // (+ tag), IPv4 + UDP or the GRH, FCS, preamble, IFG.
    let mut qcfg = profile.qp_config(cfg);
    let l3_len = match l3 {
        L3::V2 { .. } => 20 + 8,
        L3::V1 { .. } => 40,
        L3::Arp { .. } | L3::MacControl(_) | L3::IcmpUnreachable { .. } | L3::Tcp { .. } => {
            unreachable!("QPs send RoCE")
        }
    };
    // An algorithm that reads telemetry sends it from the first byte: its
    // header (the hops come later, from the switches).
    let int_len = match l3 {
        L3::V2 { .. } => profile.algorithm.telemetry_start_len(),
        _ => 0,
    };
    qcfg.wire_overhead = 14 + if vlan.is_some() { 4 } else { 0 } + l3_len + int_len + 4 + 20;
    qcfg.billed_header_bytes = u32::from(profile.billing.header_bytes);
    qcfg.tx_time_step_ps = w.tx_step;
    let mut qp = RcQp::new(side.qpn[0], side.qpn[1], side.psn[0], side.psn[1], qcfg);
    let cap = (side.role == Role::Client)
        .then_some(wc.rate_limit)
        .flatten();
    qp.set_rate_limit(cap);
    let line = w.ports[port as usize].rate();
    let window = profile.byte_window.map(|bw| (bw, qcfg.segment()));
    if let Some((bw, segment)) = window {
        qp.set_inflight_cap(Some(bw.packets(segment, line, line)));
    }
    // Where the profile runs a reaction point: DCQCN's, or the ACK-clocked
    // one of its algorithm.
    let rp = profile.rp(prio);
    let win = profile.byte_window.map_or(0, |w| w.bytes);
    let acks = rp.and_then(|_| profile.algorithm.ack_clocked(line, qcfg.segment(), win));
    let dcqcn = rp.filter(|_| profile.algorithm == Algorithm::Dcqcn);
    // HPCC-PINT's ACK sampling draws from the QP's own stream.
    let pint_sample = acks
        .as_ref()
        .and_then(AckClocked::pint)
        .filter(|p| p.prob < 1.0)
        .map(|_| {
            let q = w.qps.len();
            Box::new(crate::rng::component_rng(w.seed, &format!("pint:qp{q}")))
        });
    let cc = QpCc {
        rp: dcqcn.map(|d| ReactionPoint::new(&d.params, line)),
        retime: match &acks {
            Some(a) => a.retimes(),
            None => dcqcn.is_some_and(|d| d.retimes()),
        },
        cap,
        ack: profile.ack_route(),
        window,
        acks,
        seq: SeqCount {
            una: side.psn[0],
            acked: 0,
            segment: qcfg.segment(),
        },
        pint_sample,
        ..QpCc::default()
    };
    w.qps.push(QpSlot {
        live: QpBody::live(qp, cc),
        peer: u32::MAX,
        rx_frames: 0,
        cnps_made: 0,
        finished: false,
        host: side.local.host,
        iface: side.local.iface,
        workload: wl,
        index,
        role: side.role,
        port,
        prio,
        eth,
        vlan,
        l3,
        billing: profile.billing,
        sport: side.sport,
        lag_hash,
        affinity,
        active: false,
        wake_at: None,
        timer_at: None,
        drive_at: None,
        first_data_port: None,
        first_tx: None,
        tx_bytes: 0,
        tx_packets: 0,
        tx_payload: 0,
        unconnected: None,
    });
    gidx
}
