//! # `roce-pcap compare`: two analyses side by side
//!
//! A and B (a capture, `-`, a directory of captures, a rocesim run
//! directory) are analyzed with the same code and the same options; their
//! request flows, stated in the vocabulary both tools share
//! ([`QpFigures`]), are joined, and every figure is put beside its twin
//! with the difference B - A.
//!
//! ```text
//!  A ──analyze──▶ Report ──qp_figures──┐
//!                                      ├── match flows ──▶ Comparison { a, b, flows[], slaves[], pfc[], notes[] }
//!  B ──analyze──▶ Report ──qp_figures──┘                      └─▶ table | json; plots; report.html
//! ```
//!
//! Flows are matched, in this order, by:
//!
//! | `match` | when |
//! |---|---|
//! | `qpn` | same addresses and responder QPN, and the same requester QPN (or one side never saw it) |
//! | `qpns` | same requester and responder QPN, different addresses (e.g. a replay on other hosts) |
//! | `order` | same addresses, k-th unmatched flow of that address pair on each side, by first frame |
//! | `a-only`, `b-only` | no partner |
//!
//! Slaves are matched by position: the i-th capture of A beside the i-th of
//! B (both in the bond's enslave order), so that `hostA.eth0.pcap` of a
//! simulation meets `eth0.pcap` of the lab.

pub mod table;

use std::collections::BTreeMap;

use roce_capture::figures::QpFigures;
use serde::Serialize;

use crate::analyze::Report;
use crate::analyze::model::flow_label;
use crate::flags::Analyzed;

pub use self::table::write_table;

/// One side of a comparison: what was read and its figures.
#[derive(Debug, Clone, Serialize)]
pub struct SideSummary {
    /// The input as given on the command line.
    pub input: String,
    /// `run`, `captures`, `file` or `stdin`.
    pub kind: &'static str,
    /// The scenario's name, for a rocesim run directory.
    pub scenario: Option<String>,
    /// The captures analyzed, in slave order.
    pub files: Vec<String>,
    pub link_speed_gbps: f64,
    /// First to last frame of all the captures.
    pub duration_ns: u64,
    pub roce_packets: u64,
    pub flows: usize,
    /// First-transmission payload of all flows over the span from the
    /// earliest flow's first frame to the latest flow's last, Gb/s.
    pub goodput_gbps: f64,
    /// Warnings of the analysis (captures cut short).
    pub warnings: Vec<String>,
}

/// How a flow of A found its flow of B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MatchKind {
    #[serde(rename = "qpn")]
    Qpn,
    #[serde(rename = "qpns")]
    Qpns,
    #[serde(rename = "order")]
    Order,
    #[serde(rename = "a-only")]
    AOnly,
    #[serde(rename = "b-only")]
    BOnly,
}

impl MatchKind {
    pub fn name(self) -> &'static str {
        match self {
            MatchKind::Qpn => "qpn",
            MatchKind::Qpns => "qpns",
            MatchKind::Order => "order",
            MatchKind::AOnly => "a-only",
            MatchKind::BOnly => "b-only",
        }
    }
}

/// One flow as one side saw it.
#[derive(Debug, Clone, Serialize)]
pub struct FlowSide {
    /// `src:requester_qpn -> dst:responder_qpn` (`?` for an unknown QPN).
    pub flow: String,
    #[serde(flatten)]
    pub figures: QpFigures,
    /// Position of `port` among the side's captures (the bond slave).
    pub slave: Option<usize>,
    /// `ecn_ce_packets` over `request_packets`.
    pub ecn_ce_share: f64,
    /// The flow's number in its side's analyze report (`qps[].id`), which
    /// its time series carry.
    #[serde(skip)]
    pub qp: usize,
}

/// B - A of the figures of a matched flow.
#[derive(Debug, Clone, Serialize)]
pub struct FlowDiff {
    pub goodput_gbps: f64,
    /// Relative to A, in percent (`None` when A's is 0).
    pub goodput_pct: Option<f64>,
    pub messages: i64,
    pub payload_bytes: i64,
    pub latency_p50_ns: Option<i64>,
    pub latency_p99_ns: Option<i64>,
    pub retransmitted_packets: i64,
    pub go_back_n: i64,
    pub timeouts: i64,
    pub naks: i64,
    pub cnps: i64,
    pub ecn_ce_share: f64,
    /// Both sides put the requests on the same slave (by position).
    pub same_slave: Option<bool>,
}

/// One row of the flow table: a matched pair or a flow of one side only.
#[derive(Debug, Clone, Serialize)]
pub struct FlowRow {
    #[serde(rename = "match")]
    pub matched: MatchKind,
    pub a: Option<FlowSide>,
    pub b: Option<FlowSide>,
    pub diff: Option<FlowDiff>,
}

/// One capture (bond slave) of a side.
#[derive(Debug, Clone, Serialize)]
pub struct SlaveSide {
    pub file: String,
    pub roce_packets: u64,
    pub roce_bytes: u64,
    /// Of the side's RoCE bytes.
    pub share: f64,
    /// The rows of `flows` whose requests this slave carried on this side:
    /// the QP-to-slave map.
    pub flows: Vec<usize>,
}

/// The i-th slave of A beside the i-th of B.
#[derive(Debug, Clone, Serialize)]
pub struct SlaveRow {
    pub slave: usize,
    pub a: Option<SlaveSide>,
    pub b: Option<SlaveSide>,
    /// B - A: RoCE bytes and share.
    pub diff_roce_bytes: Option<i64>,
    pub diff_share: Option<f64>,
}

/// Pause frames and time of one priority, all captures and senders of a
/// side summed.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PauseSide {
    pub xoff_frames: u64,
    pub xon_frames: u64,
    pub pause_ns: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PfcRow {
    /// 0..7; `null` for 802.3x PAUSE.
    pub priority: Option<u8>,
    pub a: PauseSide,
    pub b: PauseSide,
    /// B - A of `pause_ns`.
    pub diff_pause_ns: f64,
}

/// The JSON document of `compare --format json`; its keys are fixed.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: SideSummary,
    pub b: SideSummary,
    pub flows: Vec<FlowRow>,
    pub slaves: Vec<SlaveRow>,
    pub pfc: Vec<PfcRow>,
    /// What the reader must know: no flow in common, different link
    /// speeds, a side without RoCE. Each is a warning (exit 3).
    pub notes: Vec<String>,
}

impl Comparison {
    /// Joins the analyses of A and B.
    pub fn new(a: &Analyzed, b: &Analyzed) -> Comparison {
        let (ra, rb) = (&a.analysis.report, &b.analysis.report);
        let fa: Vec<FlowSide> = sides(ra);
        let fb: Vec<FlowSide> = sides(rb);
        let pairs = match_flows(&fa, &fb);
        let flows: Vec<FlowRow> = pairs
            .into_iter()
            .map(|(kind, ia, ib)| {
                let (a, b) = (ia.map(|i| fa[i].clone()), ib.map(|i| fb[i].clone()));
                let diff = match (&a, &b) {
                    (Some(a), Some(b)) => Some(diff(a, b)),
                    _ => None,
                };
                FlowRow {
                    matched: kind,
                    a,
                    b,
                    diff,
                }
            })
            .collect();
        let slaves = slave_rows(ra, rb, &flows);
        let pfc = pfc_rows(ra, rb);
        let mut c = Comparison {
            a: summary(a),
            b: summary(b),
            flows,
            slaves,
            pfc,
            notes: Vec::new(),
        };
        c.notes = c.notes();
        c
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for (name, s) in [("A", &self.a), ("B", &self.b)] {
            if s.roce_packets == 0 {
                notes.push(format!(
                    "{name} ({}) holds no RoCE frames: nothing to compare on that side",
                    s.input
                ));
            }
        }
        if self.matched().count() == 0 && !self.flows.is_empty() {
            notes.push(format!(
                "A and B have no flow in common (no QPN pair or address pair on both sides): \
                 both are listed, A's {} and B's {} flows, without differences",
                self.a.flows, self.b.flows
            ));
        }
        if self.a.link_speed_gbps != self.b.link_speed_gbps {
            notes.push(format!(
                "the link speeds differ: A at {} Gb/s, B at {} Gb/s; goodputs are compared as \
                 they are, and each side's pause quanta are turned into time at its own speed",
                self.a.link_speed_gbps, self.b.link_speed_gbps
            ));
        }
        notes
    }

    /// The rows with both sides.
    pub fn matched(&self) -> impl Iterator<Item = &FlowRow> {
        self.flows.iter().filter(|f| f.a.is_some() && f.b.is_some())
    }

    /// `8 flows matched (6 by QPN, 2 by order), 1 only in A, 0 only in B`.
    pub fn match_line(&self) -> String {
        let count = |k: MatchKind| self.flows.iter().filter(|f| f.matched == k).count();
        let by: Vec<String> = [
            (MatchKind::Qpn, "by QPN"),
            (MatchKind::Qpns, "by QPN pair on other addresses"),
            (MatchKind::Order, "by address pair and order"),
        ]
        .iter()
        .filter(|(k, _)| count(*k) > 0)
        .map(|(k, what)| format!("{} {what}", count(*k)))
        .collect();
        format!(
            "{} matched{}, {} only in A, {} only in B",
            roce_capture::human::plural(self.matched().count() as u64, "flow"),
            if by.is_empty() {
                String::new()
            } else {
                format!(" ({})", by.join(", "))
            },
            count(MatchKind::AOnly),
            count(MatchKind::BOnly)
        )
    }
}

/// `src:rqpn -> dst:dqpn` as the analyze table writes a flow.
pub fn flow_name(f: &QpFigures) -> String {
    flow_label(&f.key.src, f.requester_qpn, &f.key.dst, f.key.responder_qpn)
}

fn sides(r: &Report) -> Vec<FlowSide> {
    r.qp_figures()
        .into_iter()
        .zip(&r.qps)
        .map(|(f, q)| FlowSide {
            qp: q.id,
            flow: flow_name(&f),
            slave: f
                .port
                .as_ref()
                .and_then(|p| r.files.iter().position(|x| &x.file == p)),
            ecn_ce_share: if f.request_packets > 0 {
                f.ecn_ce_packets as f64 / f.request_packets as f64
            } else {
                0.0
            },
            figures: f,
        })
        .collect()
}

/// Pairs of flow indices, A's flows in their order (each followed by its
/// partner), then B's flows without one.
fn match_flows(a: &[FlowSide], b: &[FlowSide]) -> Vec<(MatchKind, Option<usize>, Option<usize>)> {
    let mut partner: Vec<Option<(MatchKind, usize)>> = vec![None; a.len()];
    let mut taken = vec![false; b.len()];
    let qpn = |x: &QpFigures, y: &QpFigures| {
        x.key == y.key
            && (x.requester_qpn == y.requester_qpn
                || x.requester_qpn.is_none()
                || y.requester_qpn.is_none())
    };
    let qpns = |x: &QpFigures, y: &QpFigures| {
        x.key.responder_qpn == y.key.responder_qpn
            && x.requester_qpn.is_some()
            && x.requester_qpn == y.requester_qpn
    };
    for (kind, same) in [
        (
            MatchKind::Qpn,
            &qpn as &dyn Fn(&QpFigures, &QpFigures) -> bool,
        ),
        (MatchKind::Qpns, &qpns),
    ] {
        for (i, fa) in a.iter().enumerate() {
            if partner[i].is_some() {
                continue;
            }
            if let Some(j) = (0..b.len()).find(|&j| !taken[j] && same(&fa.figures, &b[j].figures)) {
                partner[i] = Some((kind, j));
                taken[j] = true;
            }
        }
    }
    // By address pair and order of first frame.
    // (src, dst) -> (A's unmatched flows, B's unmatched flows).
    type Unmatched = (Vec<usize>, Vec<usize>);
    let mut by_pair: BTreeMap<(&str, &str), Unmatched> = BTreeMap::new();
    for (i, f) in a.iter().enumerate().filter(|(i, _)| partner[*i].is_none()) {
        by_pair
            .entry((&f.figures.key.src, &f.figures.key.dst))
            .or_default()
            .0
            .push(i);
    }
    for (j, f) in b.iter().enumerate().filter(|(j, _)| !taken[*j]) {
        by_pair
            .entry((&f.figures.key.src, &f.figures.key.dst))
            .or_default()
            .1
            .push(j);
    }
    for (mut ia, mut ib) in by_pair.into_values() {
        ia.sort_by_key(|&i| (a[i].figures.first_ns, i));
        ib.sort_by_key(|&j| (b[j].figures.first_ns, j));
        for (i, j) in ia.into_iter().zip(ib) {
            partner[i] = Some((MatchKind::Order, j));
            taken[j] = true;
        }
    }
    let mut rows: Vec<(MatchKind, Option<usize>, Option<usize>)> = partner
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Some((k, j)) => (*k, Some(i), Some(*j)),
            None => (MatchKind::AOnly, Some(i), None),
        })
        .collect();
    rows.extend(
        (0..b.len())
            .filter(|&j| !taken[j])
            .map(|j| (MatchKind::BOnly, None, Some(j))),
    );
    rows
}

fn diff(a: &FlowSide, b: &FlowSide) -> FlowDiff {
    let (x, y) = (&a.figures, &b.figures);
    let d = |p: u64, q: u64| q as i64 - p as i64;
    let opt = |p: Option<u64>, q: Option<u64>| Some(d(p?, q?));
    FlowDiff {
        goodput_gbps: y.goodput_gbps - x.goodput_gbps,
        goodput_pct: (x.goodput_gbps > 0.0)
            .then(|| (y.goodput_gbps - x.goodput_gbps) / x.goodput_gbps * 100.0),
        messages: d(x.messages, y.messages),
        payload_bytes: d(x.payload_bytes, y.payload_bytes),
        latency_p50_ns: opt(x.message_latency_ns.p50, y.message_latency_ns.p50),
        latency_p99_ns: opt(x.message_latency_ns.p99, y.message_latency_ns.p99),
        retransmitted_packets: d(x.retransmitted_packets, y.retransmitted_packets),
        go_back_n: d(x.go_back_n, y.go_back_n),
        timeouts: d(x.timeouts, y.timeouts),
        naks: d(x.naks, y.naks),
        cnps: d(x.cnps, y.cnps),
        ecn_ce_share: b.ecn_ce_share - a.ecn_ce_share,
        same_slave: match (a.slave, b.slave) {
            (Some(p), Some(q)) => Some(p == q),
            _ => None,
        },
    }
}

fn summary(s: &Analyzed) -> SideSummary {
    let r = &s.analysis.report;
    let input = match s.inputs.list.as_slice() {
        [one] => one,
        _ => unreachable!("compare reads one input per side"),
    };
    let first = r.qps.iter().map(|q| q.first_ts_ns).min();
    let last = r.qps.iter().map(|q| q.last_ts_ns).max();
    let goodput_bits: f64 = r
        .qps
        .iter()
        .map(|q| q.goodput_gbps * q.duration_ns as f64)
        .sum();
    let span = match (first, last) {
        (Some(f), Some(l)) if l > f => (l - f) as f64,
        _ => 0.0,
    };
    SideSummary {
        input: roce_capture::read::input_name(&input.arg),
        kind: input.kind.name(),
        scenario: input
            .run
            .as_ref()
            .and_then(|r| r.scenario())
            .map(str::to_string),
        files: r.files.iter().map(|f| f.file.clone()).collect(),
        link_speed_gbps: r.options.link_speed_gbps,
        duration_ns: r.capture.duration_ns,
        roce_packets: r.files.iter().map(|f| f.roce_packets).sum(),
        flows: r.qps.len(),
        goodput_gbps: if span > 0.0 { goodput_bits / span } else { 0.0 },
        warnings: s.analysis.warnings.clone(),
    }
}

fn slave_rows(ra: &Report, rb: &Report, flows: &[FlowRow]) -> Vec<SlaveRow> {
    let side = |r: &Report, i: usize, pick: fn(&FlowRow) -> Option<&FlowSide>| {
        let f = r.lag.files.get(i)?;
        Some(SlaveSide {
            file: f.file.clone(),
            roce_packets: f.roce_packets,
            roce_bytes: f.roce_bytes,
            share: f.share_of_roce_bytes,
            flows: flows
                .iter()
                .enumerate()
                .filter(|(_, row)| pick(row).is_some_and(|s| s.slave == Some(i)))
                .map(|(k, _)| k)
                .collect(),
        })
    };
    (0..ra.lag.files.len().max(rb.lag.files.len()))
        .map(|i| {
            let a = side(ra, i, |r| r.a.as_ref());
            let b = side(rb, i, |r| r.b.as_ref());
            let (diff_roce_bytes, diff_share) = match (&a, &b) {
                (Some(a), Some(b)) => (
                    Some(b.roce_bytes as i64 - a.roce_bytes as i64),
                    Some(b.share - a.share),
                ),
                _ => (None, None),
            };
            SlaveRow {
                slave: i,
                a,
                b,
                diff_roce_bytes,
                diff_share,
            }
        })
        .collect()
}

fn pfc_rows(ra: &Report, rb: &Report) -> Vec<PfcRow> {
    let mut rows: BTreeMap<Option<u8>, (PauseSide, PauseSide)> = BTreeMap::new();
    for (r, b_side) in [(ra, false), (rb, true)] {
        for p in &r.pfc {
            let e = rows.entry(p.priority).or_default();
            let s = if b_side { &mut e.1 } else { &mut e.0 };
            s.xoff_frames += p.xoff_frames;
            s.xon_frames += p.xon_frames;
            s.pause_ns += p.pause_ns;
        }
    }
    rows.into_iter()
        .map(|(priority, (a, b))| PfcRow {
            priority,
            a,
            b,
            diff_pause_ns: b.pause_ns - a.pause_ns,
        })
        .collect()
}
