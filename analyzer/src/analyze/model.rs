//! The analysis result as plain serializable values: the public JSON
//! interface of `roce-pcap analyze` and what the table, CSV and plot
//! exporters read.
//!
//! FlowKey names fixed by the issue (keep them): top level `files`, `qps`,
//! `pfc`, `findings`; per QP `src`, `dst`, `dqpn`, `sport`, `files`,
//! `packets`, `bytes`, `payload_bytes`, `goodput_gbps`,
//! `retransmitted_packets`, `out_of_sequence`, `naks`, `cnps`,
//! `ecn_ce_packets`, `ack_rtt_ns` (`p50`, `p99`, `max`), `messages`,
//! `icrc_errors`; per PFC row `file`, `priority`, `xoff_frames`,
//! `xon_frames`, `pause_ns`. Times are nanoseconds since the Unix epoch
//! (or the capture's own epoch for simulated captures).

use std::collections::BTreeMap;

use roce_capture::human::plural;
use serde::Serialize;

pub use super::quantiles::Summary;

/// A request flow as every table names it: `src:requester_qpn ->
/// dst:responder_qpn`, with `?` for a requester QPN never seen.
pub fn flow_label(
    src: impl std::fmt::Display,
    requester_qpn: Option<u32>,
    dst: impl std::fmt::Display,
    dqpn: u32,
) -> String {
    let rq = requester_qpn.map_or("?".to_string(), |q| format!("{q:#x}"));
    format!("{src}:{rq} -> {dst}:{dqpn:#x}")
}

/// A frame of the input: file index and 1-based frame number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct FrameRef {
    pub file: u16,
    pub frame: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub files: Vec<FileReport>,
    pub qps: Vec<QpReport>,
    /// Responses, NAKs and CNPs whose requests were not in the capture.
    pub response_only: Vec<ResponseOnlyReport>,
    pub pfc: Vec<PfcReport>,
    pub lag: LagReport,
    pub findings: Vec<Finding>,
    pub capture: CaptureSpan,
    pub options: OptionsReport,
    /// Connection set-ups found in the capture (CM exchanges, perftest's
    /// TCP key exchange); the key is left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub setups: Vec<SetupReport>,
}

/// One connection set-up: an RDMA CM exchange (REQ, MRA, REP or REJ, RTU)
/// or perftest's key exchange over TCP port 18515.
#[derive(Debug, Clone, Serialize)]
pub struct SetupReport {
    /// Position in `setups`; flows refer to it.
    pub id: usize,
    /// `rdma_cm` or `socket`.
    pub method: &'static str,
    /// The side that connected (REQ sender, TCP client) and the other.
    pub active: String,
    pub passive: String,
    /// The RDMA CM service port, or perftest's TCP port.
    pub port: Option<u16>,
    pub first_frame: FrameRef,
    pub start_ts_ns: u64,
    /// `established` (RTU sent; both keys exchanged), `rejected`,
    /// `unanswered` (requests only), `no_rtu` (REP without RTU),
    /// `incomplete` (the capture holds part of it).
    pub outcome: &'static str,
    /// From the first REQ (SYN) to the RTU (the second key message).
    pub established_ns: Option<u64>,
    /// QPN and starting PSN each side announced (REQ and REP; the keys).
    pub active_qpn: Option<u32>,
    pub active_psn: Option<u32>,
    pub passive_qpn: Option<u32>,
    pub passive_psn: Option<u32>,
    /// REQs (SYNs) sent, the first included, and the resends among them.
    pub requests: u64,
    pub retries: u64,
    /// Between the first two requests.
    pub retry_interval_ns: Option<u64>,
    pub mras: u64,
    pub reject_reason: Option<u16>,
    pub reject_reason_name: Option<&'static str>,
    /// The REQ's remote CM response timeout, 4.096 µs × 2^field.
    pub cm_response_timeout_ns: Option<u64>,
    pub max_cm_retries: Option<u8>,
    /// perftest key messages seen (2 at set-up, 2 more at the closing sync).
    pub key_messages: u64,
    /// The flows (`qps` ids) whose QPs it connected.
    pub qps: Vec<usize>,
}

/// What the switches on a flow's path wrote on its requests (in-band
/// telemetry, `analyze::telemetry` says how the figures are made).
#[derive(Debug, Clone, Serialize)]
pub struct QpTelemetry {
    /// Requests that carried records, and responses that echoed them.
    pub requests: u64,
    pub echoes: u64,
    /// One entry per hop index, in path order (the first switch first).
    pub hops: Vec<HopTelemetry>,
}

/// One hop of a flow's path, from the records on its requests.
#[derive(Debug, Clone, Serialize)]
pub struct HopTelemetry {
    /// 1-based path position.
    pub hop: usize,
    /// The port's line rate, from the records' rate code.
    pub rate_gbps: f64,
    pub records: u64,
    /// The port's queue as each request left it.
    pub qlen_max_bytes: u64,
    pub qlen_mean_bytes: f64,
    /// Consecutive records that make an interval.
    pub intervals: u64,
    /// Bytes sent over the intervals / their time / the line rate (mean
    /// weighted by time); the largest value of one interval. `null`
    /// without an interval.
    pub utilisation_mean: Option<f64>,
    pub utilisation_max: Option<f64>,
}

/// How a flow's QPs were connected.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct QpSetup {
    /// Index into `setups`.
    pub setup: usize,
    pub method: &'static str,
    pub established_ns: Option<u64>,
}

impl Report {
    /// The report in one line, as the table starts it: `2 files, 66560
    /// RoCE frames, 8 request flows, 13.695 ms; findings: 0 error, 0
    /// warning, 4 info`.
    pub fn headline(&self) -> String {
        let roce: u64 = self.files.iter().map(|f| f.roce_packets).sum();
        let count = |s: Severity| self.findings.iter().filter(|f| f.severity == s).count();
        format!(
            "{}, {}, {}, {}; findings: {} error, {} warning, {} info",
            plural(self.files.len() as u64, "file"),
            plural(roce, "RoCE frame"),
            plural(self.qps.len() as u64, "request flow"),
            roce_capture::human::duration(self.capture.duration_ns),
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info)
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OptionsReport {
    pub link_speed_gbps: f64,
    pub roce_ports: Vec<u16>,
    pub dup_window_ns: u64,
    pub pmtu: Option<u32>,
    pub qp_filter: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct CaptureSpan {
    pub first_ts_ns: Option<u64>,
    pub last_ts_ns: Option<u64>,
    pub duration_ns: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FileReport {
    pub file: String,
    pub packets: u64,
    pub bytes: u64,
    pub roce_packets: u64,
    pub roce_bytes: u64,
    pub roce_payload_bytes: u64,
    /// RoCE frames whose BTH was cut off or malformed.
    pub roce_undecodable: u64,
    /// Frames cut by the snaplen.
    pub truncated_frames: u64,
    pub icrc_errors: u64,
    /// RoCE frames whose ICRC was not captured (snaplen).
    pub icrc_unchecked: u64,
    pub mac_control_frames: u64,
    pub pfc_frames: u64,
    pub pause_frames: u64,
    pub first_ts_ns: Option<u64>,
    pub last_ts_ns: Option<u64>,
    pub duration_ns: u64,
    /// Byte offset of the record the file ends in, when it is cut short
    /// (in the decompressed stream for a gzip file).
    pub cut_at_offset: Option<u64>,
    /// The file is gzip-compressed and its compressed stream ends early.
    pub cut_in_gzip: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileShare {
    pub file: String,
    pub request_packets: u64,
    pub response_packets: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct PsnRange {
    pub first: Option<u32>,
    /// Highest request PSN used (the last PSN a READ reserves included).
    pub last: Option<u32>,
    pub span: u64,
    pub wrapped: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct EpisodeReport {
    pub frame: FrameRef,
    pub last_frame: FrameRef,
    pub ts_ns: u64,
    pub rewind_psn: u32,
    pub highest_psn: u32,
    pub packets: u64,
    pub bytes: u64,
    /// `nak` (a PSN sequence error NAK came first), `rnr_nak`, `timeout`.
    pub cause: &'static str,
    pub cause_frame: Option<FrameRef>,
    /// Time since the flow's previous request.
    pub gap_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct GoBackN {
    pub episodes: u64,
    pub by_cause: BTreeMap<&'static str, u64>,
    /// The first episodes (at most 256).
    pub list: Vec<EpisodeReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RnrReport {
    pub count: u64,
    /// RNR timer (µs, from the syndrome's timer code) -> NAKs.
    pub timers_us: BTreeMap<u32, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QpReport {
    /// Position in `qps` of the unfiltered report; findings refer to it.
    pub id: usize,
    pub src: String,
    pub dst: String,
    /// The responder's QPN.
    pub dqpn: u32,
    /// The requester's QPN, learned from the responses.
    pub requester_qpn: Option<u32>,
    pub transport: &'static str,
    pub sport: u16,
    pub response_sport: Option<u16>,
    pub files: Vec<String>,
    pub per_file: Vec<FileShare>,
    pub first_frame: FrameRef,
    /// Every frame of the flow, both directions, CNPs included; mirror
    /// copies excluded. `bytes` are wire bytes (the frame length on the
    /// wire, whatever the snaplen kept).
    pub packets: u64,
    pub bytes: u64,
    /// IB payload of requests and READ responses, resends included.
    pub payload_bytes: u64,
    /// Frames from requester to responder (a CNP the requester sends about
    /// marked READ responses included) and back (ACKs, NAKs, READ
    /// responses, CNPs about marked requests).
    pub request_packets: u64,
    pub response_packets: u64,
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    pub duration_ns: u64,
    /// Payload of first transmissions (requests and READ responses) over the
    /// flow's duration.
    pub goodput_gbps: f64,
    pub opcodes: BTreeMap<&'static str, u64>,
    pub messages: u64,
    pub messages_by_kind: BTreeMap<&'static str, u64>,
    /// Messages whose FIRST packet came before the capture started.
    pub partial_messages: u64,
    pub message_bytes: u64,
    pub message_size: Summary,
    /// First packet to the ACK covering the last (SEND/WRITE/atomic), or
    /// READ request to its last response.
    pub message_latency_ns: Summary,
    pub psn: PsnRange,
    pub pmtu: Option<u32>,
    pub retransmitted_packets: u64,
    pub retransmitted_bytes: u64,
    pub out_of_sequence: u64,
    pub missing_psns: u64,
    pub mirror_duplicates: u64,
    /// Responses repeated byte for byte that were not mirror copies
    /// (re-ACKs of duplicate requests).
    pub repeated_responses: u64,
    pub go_back_n: GoBackN,
    pub acks: u64,
    pub naks: BTreeMap<&'static str, u64>,
    pub rnr_naks: RnrReport,
    /// One sample per ACK: from the first transmission of the PSN it
    /// carries to the ACK, skipped when that PSN was resent (Karn). An ACK
    /// also acknowledges every PSN before its own (coalescing).
    pub ack_rtt_ns: Summary,
    pub ecn_ce_packets: u64,
    pub ecn_ce_fraction: f64,
    pub cnps: u64,
    /// From the first CE-marked packet since the previous CNP in the
    /// direction a CNP slows down, to that CNP.
    pub cnp_delay_ns: Summary,
    pub cnps_without_ce: u64,
    pub icrc_errors: u64,
    pub icrc_unchecked: u64,
    pub read_responses_replayed: u64,
    /// Requests not tracked for RTT because no ACK came for very long.
    pub untracked_psns: u64,
    /// Of `ecn_ce_packets`, the requests; and of `cnps`, those that reached
    /// the requester: what [`Report::qp_figures`] reports, kept out of the
    /// JSON, whose keys are fixed.
    #[serde(skip)]
    pub ecn_ce_requests: u64,
    #[serde(skip)]
    pub cnps_to_requester: u64,
    /// The connection set-up that announced this flow's QPs, when the
    /// capture holds it (the key is left out otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<QpSetup>,
    /// In-band telemetry (HPCC's INT) on the flow's frames, when they
    /// carried any (the key is left out otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<QpTelemetry>,
    /// What the wire showed besides the figures, which `infer` builds a
    /// scenario from; kept out of the JSON.
    #[serde(skip)]
    pub wire: QpWire,
}

/// Header fields and messages of a flow as the capture showed them.
#[derive(Debug, Clone, Default)]
pub struct QpWire {
    /// The traffic class byte (DSCP << 2 | ECN) of the first request.
    pub tclass: u8,
    pub rocev1: bool,
    /// Ethernet addresses of the requests, and the source of the responses.
    pub request_src_mac: [u8; 6],
    pub request_dst_mac: [u8; 6],
    pub response_src_mac: Option<[u8; 6]>,
    /// The 802.1Q tag of the requests.
    pub vlan_tci: Option<u16>,
    /// The first messages, when the analysis kept them
    /// ([`crate::analyze::AnalyzeOptions::message_log`]).
    pub message_log: Option<MessageLog>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MessageKind {
    Send,
    Write,
    Read,
    Atomic,
}

impl MessageKind {
    pub fn name(self) -> &'static str {
        match self {
            MessageKind::Send => "send",
            MessageKind::Write => "write",
            MessageKind::Read => "read",
            MessageKind::Atomic => "atomic",
        }
    }
}

/// Messages a flow keeps for `infer` ([`super::AnalyzeOptions::message_log`]):
/// the first this many; the rest are counted.
pub(crate) const MESSAGE_LOG_MAX: usize = 4096;

/// One message as `infer` replays it: its kind, size and the time of its
/// first packet (a READ: of its request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedMessage {
    pub kind: MessageKind,
    pub size: u64,
    pub start_ns: u64,
}

/// The messages of a flow in the order they completed, up to
/// `MESSAGE_LOG_MAX`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageLog {
    pub messages: Vec<LoggedMessage>,
    /// Messages past the cap, not listed.
    pub dropped: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ResponseOnlyReport {
    pub src: String,
    pub dst: String,
    pub requester_qpn: u32,
    pub sport: u16,
    pub files: Vec<String>,
    pub first_frame: FrameRef,
    pub packets: u64,
    pub bytes: u64,
    pub acks: u64,
    pub naks: u64,
    pub cnps: u64,
    pub read_responses: u64,
}

impl ResponseOnlyReport {
    /// What the responses were, as tables and findings say it:
    /// `3 ACKs, 1 NAK, 0 CNPs`.
    pub fn acks_naks_cnps(&self) -> String {
        format!(
            "{}, {}, {}",
            plural(self.acks, "ACK"),
            plural(self.naks, "NAK"),
            plural(self.cnps, "CNP")
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PfcReport {
    pub file: String,
    pub src_mac: String,
    /// 0..7 for PFC; `null` for 802.3x PAUSE, which stops every priority.
    pub priority: Option<u8>,
    pub kind: &'static str,
    pub xoff_frames: u64,
    pub xon_frames: u64,
    /// Paused time at `link_speed_gbps`; a new frame replaces the running pause.
    pub pause_ns: f64,
    /// Paused time over the file's duration (may exceed 1 when the last
    /// pause runs past the end of the capture).
    pub paused_fraction: f64,
    pub longest_pause_ns: f64,
    pub first_frame: FrameRef,
}

#[derive(Debug, Clone, Serialize)]
pub struct LagFile {
    pub file: String,
    pub roce_packets: u64,
    pub roce_bytes: u64,
    pub packets: u64,
    pub bytes: u64,
    pub share_of_roce_bytes: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SlaveMoveReport {
    pub frame: FrameRef,
    pub ts_ns: u64,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct QpSlave {
    pub qp: usize,
    pub src: String,
    pub dst: String,
    pub dqpn: u32,
    pub sport: u16,
    /// The file that carried most of the requests / responses.
    pub request_file: Option<String>,
    pub response_file: Option<String>,
    /// The slave Linux bonding would pick for the requests (files taken as
    /// slaves in enslave order), by policy.
    pub predicted_layer3_4: Option<String>,
    pub predicted_layer2_3: Option<String>,
    pub response_predicted_layer3_4: Option<String>,
    pub response_predicted_layer2_3: Option<String>,
    /// Changes of the file carrying the requests (the first 32 listed).
    pub moves: Vec<SlaveMoveReport>,
    pub moves_total: u64,
    /// Changes of the file carrying the responses.
    pub response_moves_total: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LagReport {
    pub files: Vec<LagFile>,
    /// Largest RoCE byte count over the mean (1.0 = perfect balance); only
    /// with two or more files.
    pub imbalance: Option<f64>,
    pub qp_map: Vec<QpSlave>,
    pub note: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub rule: &'static str,
    /// Index into `qps` when the finding is about one flow.
    pub qp: Option<usize>,
    pub file: Option<String>,
    pub frames: Vec<FrameRef>,
    pub message: String,
}
