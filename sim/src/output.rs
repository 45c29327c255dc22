//! The run directory: `summary.json` (a public interface: keys are only
//! ever added), per-port and per-QP CSV time series, PNG+SVG plots, and the
//! taps' captures (written while running).

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::packet::L3;
use crate::time::Ps;
use crate::world::{Owner, Role, World};

#[derive(Debug, Clone, Serialize)]
pub struct PortSummary {
    pub name: String,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    pub drops: u64,
    pub drops_link_down: u64,
    pub drops_loss: u64,
    pub drops_buffer: u64,
    pub drops_not_ours: u64,
    pub drops_no_route: u64,
    pub rate_gbps: f64,
    /// Average transmit throughput over the run.
    pub tx_gbps: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct QpSummary {
    pub host: String,
    pub interface: String,
    pub workload: String,
    pub role: &'static str,
    pub qpn: u32,
    pub dest_qpn: u32,
    pub src: String,
    pub dst: String,
    pub udp_sport: u16,
    /// NIC port that carried the QP's first data packet (client QPs).
    pub port: Option<String>,
    /// That port's index in its bond (enslave order), if bonded.
    pub slave: Option<u32>,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_payload_bytes: u64,
    /// Packets that reached this QP (ACKs/NAKs for a requester).
    pub rx_packets: u64,
    pub bytes_completed: u64,
    /// Messages completed successfully.
    pub msgs_completed: u64,
    /// Work completions with an error status (the failing one and the
    /// flushed ones after it).
    pub msgs_failed: u64,
    pub goodput_gbps: f64,
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    pub naks_rx: u64,
    pub naks_tx: u64,
    pub status: &'static str,
    /// `ibv_wc_status` of the QP's end state (0 success).
    pub status_code: u8,
    /// When the QP put its first packet on the wire, ns.
    pub first_tx_ns: Option<u64>,
    /// Time of the last completion (success or error), ns.
    pub finished_at_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BondEvent {
    pub t_ns: u64,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BondSummary {
    pub name: String,
    pub mode: &'static str,
    pub xmit_hash_policy: String,
    pub slaves: Vec<String>,
    pub slave_tx_bytes: Vec<u64>,
    pub events: Vec<BondEvent>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SwitchSummary {
    pub name: String,
    pub buffer_bytes: u64,
    pub peak_buffer_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TapSummary {
    pub port: String,
    pub file: String,
    pub frames: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub seed: u64,
    pub sim_time_ns: u64,
    pub events: u64,
    pub wall_s: f64,
    pub packet_hops: u64,
    /// Sum of client goodputs' bytes over the span from the first post to
    /// the last completion, in Gb/s.
    pub aggregate_goodput_gbps: f64,
    pub ports: Vec<PortSummary>,
    pub qps: Vec<QpSummary>,
    pub bonds: Vec<BondSummary>,
    pub switches: Vec<SwitchSummary>,
    pub taps: Vec<TapSummary>,
}

fn gbps(bytes: u64, t: Ps) -> f64 {
    if t == Ps::ZERO {
        0.0
    } else {
        bytes as f64 * 8.0 / t.as_secs_f64() / 1e9
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl World {
    pub fn summary(&self, wall_s: f64) -> Summary {
        let t = self.sim_time();
        let ports = self
            .ports
            .iter()
            .map(|p| PortSummary {
                name: p.name.clone(),
                tx_bytes: p.c.tx_bytes,
                tx_packets: p.c.tx_packets,
                rx_bytes: p.c.rx_bytes,
                rx_packets: p.c.rx_packets,
                drops: p.c.drops,
                drops_link_down: p.c.drops_link_down,
                drops_loss: p.c.drops_loss,
                drops_buffer: p.c.drops_buffer,
                drops_not_ours: p.c.drops_not_ours,
                drops_no_route: p.c.drops_no_route,
                rate_gbps: p.rate.bps() as f64 / 1e9,
                tx_gbps: round3(gbps(p.c.tx_bytes, t)),
            })
            .collect();
        let mut first_post: Option<Ps> = None;
        let mut last_done: Option<Ps> = None;
        let mut total_done = 0;
        let qps = self
            .qps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let h = &self.hosts[s.host as usize];
                let f = &h.ifaces[s.iface as usize];
                let wl = &self.wls[s.wl as usize];
                let st = wl.w.stats(s.idx as usize);
                let client = s.role == Role::Client;
                if client {
                    if let Some(a) = st.first_post_at {
                        first_post = Some(first_post.map_or(a, |f: Ps| f.min(a)));
                    }
                    if let Some(b) = st.last_completion_at {
                        last_done = Some(last_done.map_or(b, |l: Ps| l.max(b)));
                    }
                    total_done += st.bytes_completed;
                }
                let (src, dst) = match s.l3 {
                    L3::V2 { src, dst, .. } => (src, dst),
                    L3::V1 { sgid, dgid, .. } => (sgid, dgid),
                    L3::Arp { spa, tpa, .. } => (spa, tpa),
                };
                let c = s.qp.counters();
                let status = self.qp_state_name(i as u32);
                QpSummary {
                    host: h.name.clone(),
                    interface: f.name.clone(),
                    workload: wl.name.clone(),
                    role: if client { "client" } else { "server" },
                    qpn: s.qp.qpn(),
                    dest_qpn: s.qp.dest_qpn(),
                    src: src.to_string(),
                    dst: dst.to_string(),
                    udp_sport: s.sport,
                    port: s
                        .first_data_port
                        .map(|p| self.ports[p as usize].name.clone()),
                    slave: s.first_data_port.and_then(|p| self.slave_of_port(p)),
                    tx_bytes: s.tx_bytes,
                    tx_packets: s.tx_packets,
                    tx_payload_bytes: s.tx_payload,
                    rx_packets: c.rx_packets,
                    bytes_completed: if client {
                        st.bytes_completed
                    } else {
                        c.bytes_completed
                    },
                    msgs_completed: if client {
                        st.completed - st.failed
                    } else {
                        c.msgs_completed
                    },
                    msgs_failed: if client { st.failed } else { 0 },
                    goodput_gbps: if client {
                        round3(st.goodput_bps() / 1e9)
                    } else {
                        0.0
                    },
                    retransmitted_packets: c.retransmitted_packets,
                    timeouts: c.timeouts,
                    naks_rx: c.naks_rx,
                    naks_tx: c.naks_tx,
                    status,
                    status_code: match s.qp.state() {
                        crate::transport::QpState::Error(e) => e.code(),
                        crate::transport::QpState::Rts => st.first_error.map_or(0, |e| e.code()),
                    },
                    first_tx_ns: s.first_tx.map(|t| t.as_ns()),
                    finished_at_ns: if client {
                        st.last_completion_at.map(|t| t.as_ns())
                    } else {
                        None
                    },
                }
            })
            .collect();
        let aggregate = match (first_post, last_done) {
            (Some(a), Some(b)) if b > a => round3(gbps(total_done, b - a)),
            _ => 0.0,
        };
        let bonds = self
            .bonds
            .iter()
            .map(|(_, _, b)| BondSummary {
                name: b.name.clone(),
                mode: b.mode.name(),
                xmit_hash_policy: b.policy.codec().name().to_string(),
                slaves: b
                    .slaves
                    .iter()
                    .map(|s| self.ports[s.port as usize].name.clone())
                    .collect(),
                slave_tx_bytes: b
                    .slaves
                    .iter()
                    .map(|s| self.ports[s.port as usize].c.tx_bytes)
                    .collect(),
                events: b
                    .log
                    .iter()
                    .map(|(t, m)| BondEvent {
                        t_ns: t.as_ns(),
                        message: m.clone(),
                    })
                    .collect(),
            })
            .collect();
        let switches = self
            .switches
            .iter()
            .map(|s| SwitchSummary {
                name: s.name.clone(),
                buffer_bytes: s.buffer,
                peak_buffer_bytes: s.peak_used,
            })
            .collect();
        let taps = self
            .taps
            .iter()
            .map(|t| TapSummary {
                port: self.ports[t.port as usize].name.clone(),
                file: t.file_name.clone(),
                frames: t.frames,
            })
            .collect();
        Summary {
            scenario: self.name.clone(),
            seed: self.seed,
            sim_time_ns: t.as_ns(),
            events: self.events(),
            wall_s,
            packet_hops: self.packet_hops,
            aggregate_goodput_gbps: aggregate,
            ports,
            qps,
            bonds,
            switches,
            taps,
        }
    }
}

/// Writes summary.json, the CSVs and the plots into `dir`.
pub fn write_all(w: &World, dir: &Path, wall_s: f64) -> Result<Summary, String> {
    let s = w.summary(wall_s);
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let path = dir.join("summary.json");
    let json = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?;
    std::fs::write(&path, json + "\n").map_err(|e| io(&path, e))?;
    let path = dir.join("ports.csv");
    std::fs::write(&path, ports_csv(w)).map_err(|e| io(&path, e))?;
    let path = dir.join("qps.csv");
    std::fs::write(&path, qps_csv(w)).map_err(|e| io(&path, e))?;
    crate::plot::throughput_plots(w, dir)?;
    Ok(s)
}

/// `t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops`; the
/// rates are over the interval ending at `t_ns`.
pub fn ports_csv(w: &World) -> String {
    let mut out = String::from("t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops\n");
    let n = w.ports.len();
    for (k, s) in w.port_samples.iter().enumerate() {
        let prev = (k >= n).then(|| &w.port_samples[k - n]);
        let (dt, dtx, drx) = prev.map_or((Ps::ZERO, 0, 0), |p| {
            (s.t - p.t, s.tx_bytes - p.tx_bytes, s.rx_bytes - p.rx_bytes)
        });
        let _ = writeln!(
            out,
            "{},{},{},{},{:.3},{:.3},{},{}",
            s.t.as_ns(),
            w.ports[s.port as usize].name,
            s.tx_bytes,
            s.rx_bytes,
            gbps(dtx, dt),
            gbps(drx, dt),
            s.queued,
            s.drops
        );
    }
    out
}

/// `t_ns,host,qpn,role,tx_payload_bytes,completed_bytes,tx_payload_gbps,goodput_gbps,retransmitted_packets`:
/// payload sent (retransmissions included) and completed, with their rates
/// over the interval ending at `t_ns`.
pub fn qps_csv(w: &World) -> String {
    let mut out = String::from(
        "t_ns,host,qpn,role,tx_payload_bytes,completed_bytes,tx_payload_gbps,goodput_gbps,retransmitted_packets\n",
    );
    let n = w.qps.len();
    for (k, s) in w.qp_samples.iter().enumerate() {
        let q = &w.qps[s.qp as usize];
        let prev = (k >= n).then(|| &w.qp_samples[k - n]);
        let (dt, dtx, ddone) = prev.map_or((Ps::ZERO, 0, 0), |p| {
            (
                s.t - p.t,
                s.tx_payload - p.tx_payload,
                s.completed_bytes - p.completed_bytes,
            )
        });
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{:.3},{:.3},{}",
            s.t.as_ns(),
            w.hosts[q.host as usize].name,
            q.qp.qpn(),
            if q.role == Role::Client {
                "client"
            } else {
                "server"
            },
            s.tx_payload,
            s.completed_bytes,
            gbps(dtx, dt),
            gbps(ddone, dt),
            s.retransmitted
        );
    }
    out
}

/// Whether a port belongs to a host (for plots of NIC/slave throughput).
pub(crate) fn is_host_port(w: &World, port: u32) -> bool {
    matches!(w.ports[port as usize].owner, Owner::Host { .. })
}
