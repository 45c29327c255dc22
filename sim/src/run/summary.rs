//! `summary.json`: what a run did, per port, QP, bond, switch and tap. A
//! public interface: keys are only ever added.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::counters::{self, CounterSet};
use super::intervals::gbps;

use crate::time::Ps;
use crate::transport::QpCounters;
use crate::world::{PortCounters, PortHeadroom, PortView, QpStatus, QpView, Role, World};

/// A name that many QP records repeat (a host's, an address, a port's, a
/// flow's): one allocation for all of them, where a fabric's 200,000
/// records each held its own copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name(Arc<str>);

impl core::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl core::fmt::Display for Name {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Name {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// The names the records of one summary share, by what they name.
#[derive(Default)]
struct Names<'a> {
    text: HashMap<&'a str, Name>,
    addr: HashMap<core::net::Ipv4Addr, Name>,
}

impl<'a> Names<'a> {
    fn of(&mut self, t: &'a str) -> Name {
        self.text
            .entry(t)
            .or_insert_with(|| Name(Arc::from(t)))
            .clone()
    }
    fn addr(&mut self, a: core::net::Ipv4Addr) -> Name {
        self.addr
            .entry(a)
            .or_insert_with(|| Name(Arc::from(a.to_string())))
            .clone()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PortSummary {
    pub name: String,
    #[serde(flatten)]
    pub counters: PortCounters,
    pub rate_gbps: f64,
    /// Average transmit throughput over the run.
    pub tx_gbps: f64,
    /// Bytes sent per traffic class (0 to 7, as `prio_tc` maps the
    /// priorities on the wire): only for a port running ETS
    /// (`[switch.ets]`, `[host.ets]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tc_tx_bytes: Option<Vec<u64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QpSummary {
    pub host: Name,
    pub interface: Name,
    pub workload: Name,
    pub role: Role,
    pub qpn: u32,
    pub dest_qpn: u32,
    pub src: Name,
    pub dst: Name,
    pub udp_sport: u16,
    /// NIC port that carried the QP's first packet: a client's first
    /// request, a server's first ACK or READ response (on a bond, the
    /// slave its responses leave on).
    pub port: Option<Name>,
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
    pub status: QpStatus,
    /// `ibv_wc_status` of the QP's end state (0 success).
    pub status_code: u8,
    /// When the QP put its first packet on the wire, ns.
    pub first_tx_ns: Option<u64>,
    /// Time of the last completion (success or error), ns.
    pub finished_at_ns: Option<u64>,
    /// What the shared figures need beyond the above (not in the JSON:
    /// its keys stay as they were). Not the whole `QpCounters`: a fabric's
    /// summary holds a record per QP, hundreds of thousands of them.
    #[serde(skip)]
    pub figures: FigureCounts,
}

/// The few counters of a QP that [`Summary::qp_figures`] reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FigureCounts {
    /// Request packets sent: SEND, WRITE and READ request.
    pub request_packets: u64,
    /// Go-back-N episodes, whatever their cause.
    pub rewinds: u64,
    /// CNPs that reached the QP.
    pub cnps_rx: u64,
    /// Packets that reached the QP with CE.
    pub ce_marks_rx: u64,
}

impl FigureCounts {
    fn of(c: &QpCounters) -> FigureCounts {
        FigureCounts {
            request_packets: c.tx.send.packets + c.tx.write.packets + c.tx.read_request.packets,
            rewinds: c.rewinds.total(),
            cnps_rx: c.cnps_rx,
            ce_marks_rx: c.ce_marks_rx,
        }
    }
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
    /// How RoCE traffic picks its slave, and where the per-QP slave
    /// prediction comes from (absent for active-backup).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roce_port_selection: Option<&'static str>,
    pub slaves: Vec<String>,
    pub slave_tx_bytes: Vec<u64>,
    pub events: Vec<BondEvent>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SwitchSummary {
    pub name: String,
    pub buffer_bytes: u64,
    pub peak_buffer_bytes: u64,
    /// Lossless frames the buffer dropped: 0 in a fabric built right.
    /// Only for a switch with lossless priorities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lossless_drops: Option<u64>,
    /// Each port's PFC headroom beside what its lossless priorities need
    /// (both frames in flight, the PFC frame, the cable both ways, the
    /// peer's reaction). Only for a switch with lossless priorities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom: Option<Vec<HeadroomSummary>>,
}

/// One switch port's headroom, per lossless priority.
#[derive(Debug, Clone, Serialize)]
pub struct HeadroomSummary {
    pub port: String,
    pub priorities: Vec<u8>,
    pub headroom_bytes: u64,
    pub needed_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TapSummary {
    pub port: String,
    pub file: String,
    pub frames: u64,
}

/// The summary of a run. Its QP records (`Q`) are collected
/// (`Vec<QpSummary>`, the default), made from the world as they are read
/// ([`QpRows`]: what `rocesim run` writes and prints, where a fabric's
/// 200,000 records would have been the run's largest allocation), or left
/// out (`()`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary<Q = Vec<QpSummary>> {
    pub scenario: String,
    pub seed: u64,
    pub sim_time_ns: u64,
    pub events: u64,
    pub wall_s: f64,
    pub packet_hops: u64,
    /// Sum of client goodputs' bytes over the span from the first post to
    /// the last completion, in Gb/s.
    pub aggregate_goodput_gbps: f64,
    /// The defaults the run took without a source, each naming its key
    /// ([`rocesim_scenario::assumptions`]): set the key to make it yours.
    pub assumptions: Vec<String>,
    pub ports: Vec<PortSummary>,
    pub qps: Q,
    pub bonds: Vec<BondSummary>,
    pub switches: Vec<SwitchSummary>,
    pub taps: Vec<TapSummary>,
    /// Every port's counters under their hardware names (see
    /// [`super::counters`]).
    pub counters: BTreeMap<String, CounterSet>,
    /// Flow completion times of a run with `[[traffic]]` (see [`super::fct`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct: Option<super::fct::FctSummary>,
    /// nccl-tests rows of the run's `[[collective]]`s (see
    /// [`super::collectives`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub collectives: Vec<super::collectives::CollectiveRow>,
}

fn headroom_summary(w: &World, rows: &[PortHeadroom]) -> Option<Vec<HeadroomSummary>> {
    if rows.is_empty() {
        return None;
    }
    let rows = rows
        .iter()
        .map(|h| HeadroomSummary {
            port: w.port(h.port).name().to_string(),
            priorities: h.priorities().collect(),
            headroom_bytes: h.configured_bytes,
            needed_bytes: h.needed_bytes(),
        })
        .collect();
    Some(rows)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl PortSummary {
    fn of(p: PortView<'_>, t: Ps) -> PortSummary {
        let counters = *p.counters();
        PortSummary {
            name: p.name().to_string(),
            counters,
            rate_gbps: p.rate().bps() as f64 / 1e9,
            tx_gbps: round3(gbps(counters.tx_bytes, t)),
            tc_tx_bytes: p.select().and_then(|s| {
                let cfg = s.ets_config()?;
                let mut tc = vec![0u64; 8];
                for prio in 0..8 {
                    tc[usize::from(cfg.prio_tc[prio])] += s.tx_of(prio).0;
                }
                Some(tc)
            }),
        }
    }
}

impl QpSummary {
    fn of<'a>(q: QpView<'a>, names: &mut Names<'a>) -> QpSummary {
        let st = q.stats();
        let client = q.role() == Role::Client;
        let c = &q.counters();
        QpSummary {
            host: names.of(q.host()),
            interface: names.of(q.interface()),
            workload: names.of(q.workload()),
            role: q.role(),
            qpn: q.qpn(),
            dest_qpn: q.dest_qpn(),
            src: names.addr(q.src()),
            dst: names.addr(q.dst()),
            udp_sport: q.udp_sport(),
            port: q.first_data_port().map(|p| names.of(p.name())),
            slave: q.first_data_slave(),
            tx_bytes: q.tx_bytes(),
            tx_packets: q.tx_packets(),
            tx_payload_bytes: q.tx_payload_bytes(),
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
            status: q.status(),
            status_code: q.status_code(),
            first_tx_ns: q.first_tx().map(|t| t.as_ns()),
            finished_at_ns: if client {
                st.last_completion_at.map(|t| t.as_ns())
            } else {
                None
            },
            figures: FigureCounts::of(c),
        }
    }
}

/// Every QP's record, made from the world as it is read, in QP order:
/// serialized one record at a time (summary.json), or iterated.
#[derive(Clone, Copy)]
pub struct QpRows<'w>(pub &'w World);

impl<'w> QpRows<'w> {
    /// The records; each makes its own names, none kept after it.
    pub fn iter(self) -> impl Iterator<Item = QpSummary> + 'w {
        self.0
            .qps()
            .map(|q| QpSummary::of(q, &mut Names::default()))
    }

    /// The records, collected, sharing their names.
    pub fn collect(self) -> Vec<QpSummary> {
        let mut names = Names::default();
        self.0.qps().map(|q| QpSummary::of(q, &mut names)).collect()
    }
}

impl core::fmt::Debug for QpRows<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "QpRows({} QPs)", self.0.qps().len())
    }
}

impl Serialize for QpRows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// A summary's QP records, however held: what the printed table and CSV
/// read.
pub trait QpRecords: Serialize {
    /// The client (requester) records, in QP order.
    fn client_records(&self) -> Box<dyn Iterator<Item = Cow<'_, QpSummary>> + '_>;
}

impl QpRecords for Vec<QpSummary> {
    fn client_records(&self) -> Box<dyn Iterator<Item = Cow<'_, QpSummary>> + '_> {
        Box::new(
            self.iter()
                .filter(|q| q.role == Role::Client)
                .map(Cow::Borrowed),
        )
    }
}

impl QpRecords for QpRows<'_> {
    fn client_records(&self) -> Box<dyn Iterator<Item = Cow<'_, QpSummary>> + '_> {
        let w = self.0;
        Box::new(
            w.qps()
                .filter(|q| q.role() == Role::Client)
                .map(|q| Cow::Owned(QpSummary::of(q, &mut Names::default()))),
        )
    }
}

impl<Q> Summary<Q> {
    /// The same summary with QP records `qps`.
    pub fn with_qps<R>(self, qps: R) -> Summary<R> {
        Summary {
            scenario: self.scenario,
            seed: self.seed,
            sim_time_ns: self.sim_time_ns,
            events: self.events,
            wall_s: self.wall_s,
            packet_hops: self.packet_hops,
            aggregate_goodput_gbps: self.aggregate_goodput_gbps,
            assumptions: self.assumptions,
            ports: self.ports,
            qps,
            bonds: self.bonds,
            switches: self.switches,
            taps: self.taps,
            counters: self.counters,
            fct: self.fct,
            collectives: self.collectives,
        }
    }
}

impl Summary {
    /// The summary of a finished (or checked) world of run `name`;
    /// `wall_s` is the run's wall-clock time.
    pub fn of(name: &str, w: &World, wall_s: f64) -> Summary {
        Summary::head(name, w, wall_s).with_qps(QpRows(w).collect())
    }
}

impl Summary<()> {
    /// [`Summary::of`] without the QP records.
    pub fn head(name: &str, w: &World, wall_s: f64) -> Summary<()> {
        let t = w.sim_time();
        let mut first_post: Option<Ps> = None;
        let mut last_done: Option<Ps> = None;
        let mut total_done = 0;
        for q in w.qps().filter(|q| q.role() == Role::Client) {
            let st = q.stats();
            if let Some(a) = st.first_post_at {
                first_post = Some(first_post.map_or(a, |f| f.min(a)));
            }
            if let Some(b) = st.last_completion_at {
                last_done = Some(last_done.map_or(b, |l| l.max(b)));
            }
            total_done += st.bytes_completed;
        }
        let aggregate = match (first_post, last_done) {
            (Some(a), Some(b)) if b > a => round3(gbps(total_done, b - a)),
            _ => 0.0,
        };
        let bonds = w
            .bonds()
            .map(|b| BondSummary {
                name: b.name().to_string(),
                mode: b.mode(),
                xmit_hash_policy: b.xmit_hash_policy().to_string(),
                roce_port_selection: b.roce_port_selection(),
                slaves: b.slaves().map(|p| p.name().to_string()).collect(),
                slave_tx_bytes: b.slaves().map(|p| p.counters().tx_bytes).collect(),
                events: b
                    .log()
                    .iter()
                    .map(|(t, m)| BondEvent {
                        t_ns: t.as_ns(),
                        message: m.clone(),
                    })
                    .collect(),
            })
            .collect();
        let switches = w
            .switches()
            .map(|s| SwitchSummary {
                name: s.name().to_string(),
                buffer_bytes: s.buffer_bytes(),
                peak_buffer_bytes: s.peak_buffer_bytes(),
                lossless_drops: s.lossless_drops(),
                headroom: headroom_summary(w, &s.headroom()),
            })
            .collect();
        let taps = w
            .taps()
            .map(|tap| TapSummary {
                port: tap.port().name().to_string(),
                file: tap.file().to_string(),
                frames: tap.frames(),
            })
            .collect();
        Summary {
            scenario: name.to_string(),
            seed: w.seed(),
            sim_time_ns: t.as_ns(),
            events: w.events(),
            wall_s,
            packet_hops: w.packet_hops(),
            aggregate_goodput_gbps: aggregate,
            assumptions: Vec::new(),
            ports: w.ports().map(|p| PortSummary::of(p, t)).collect(),
            qps: (),
            bonds,
            switches,
            taps,
            counters: counters::of(w),
            fct: super::fct::summary(w),
            collectives: super::collectives::rows(w),
        }
    }
}

impl Summary {
    /// The client (requester) QP rows.
    pub fn clients(&self) -> impl Iterator<Item = &QpSummary> {
        self.qps.iter().filter(|q| q.role == Role::Client)
    }
}
