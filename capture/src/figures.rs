//! The per-QP figures both tools report, in one vocabulary.
//!
//! `rocesim` knows a connection from inside (its `summary.json` has one row
//! per QP, both ends); `roce-pcap` knows it from the wire (its report has one
//! row per request flow, as seen in the captures). Their JSON keeps the
//! shapes users already script against, but each converts its rows into
//! [`QpFigures`], so that putting a simulation beside a capture (`compare`) is
//! a join of two lists of the same type on [`QpKey`].
//!
//! ```text
//!   rocesim summary.json qps[]  ──(Summary::qp_figures)──┐
//!   (client row + server row per connection)             ├──▶ QpFigures ──join on QpKey──▶ side by side
//!   roce-pcap report qps[]      ──(analyzer: model)──────┘
//!   (one request flow per connection)
//! ```
//!
//! Conventions, for every field:
//! * A flow is named from its requester: `src` is the requester's address,
//!   `dst` the responder's; `requester_qpn` sends the requests, `responder_qpn`
//!   is the BTH DestQP of those requests (what a capture always shows).
//! * Times are nanoseconds since the start of the run (`rocesim`) or of the
//!   first frame of all the captures analyzed together (`roce-pcap`): the
//!   same time base as the tools' plots. Epoch times stay in the tools' own
//!   reports.
//! * Bytes are IB payload bytes (no headers, no pad) unless the name says
//!   `wire`: frame bytes from the Ethernet header up to the FCS, which
//!   captures do not hold (the length a capture records as on the wire).
//! * Rates are Gb/s (10^9 bit/s).
//! * Counts are what the requester side of the flow experienced: `naks` the
//!   NAKs it received (all syndromes), `cnps` the CNPs that reached it (about
//!   its requests), `ecn_ce_packets` its requests that carried CE.

use serde::Serialize;

/// What identifies one RC connection in both tools: the two addresses and
/// the responder's QPN (the requester's QPN is not always on the wire, e.g.
/// a capture of requests only).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct QpKey {
    pub src: String,
    pub dst: String,
    pub responder_qpn: u32,
}

/// The figures of one RC connection, as both tools can state them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QpFigures {
    pub key: QpKey,
    /// `None` when it was never seen (a capture holding requests only).
    pub requester_qpn: Option<u32>,
    pub udp_sport: u16,
    /// First and last packet of the flow (either direction), ns since the
    /// start of the run or capture. `rocesim` gives the requester's first
    /// packet and its last completion, which in a flow that ends cleanly
    /// is the arrival of the last response; a QP that failed completes at
    /// its error, after its last packet.
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    /// Request and READ-response payload, first transmissions and resends.
    pub payload_bytes: u64,
    /// Frames of the flow in both directions, and their wire bytes:
    /// `rocesim` counts what both ends sent (frames lost on the way
    /// included), `roce-pcap` what the captures saw.
    pub packets: u64,
    pub wire_bytes: u64,
    /// Requests the requester sent, first transmissions and resends, not
    /// counting CNPs (what `ecn_ce_packets` is a share of).
    pub request_packets: u64,
    /// Payload delivered once over the flow's active span, Gb/s: `rocesim`
    /// counts completed messages, `roce-pcap` first transmissions.
    pub goodput_gbps: f64,
    /// Messages completed (`rocesim`), or seen from their first packet to
    /// their last (`roce-pcap`; a READ to its last response).
    pub messages: u64,
    pub retransmitted_packets: u64,
    /// Go-back-N episodes: times the requester went back to a PSN it had
    /// sent before, after a NAK, an RNR NAK or a timeout (`roce-pcap` sees
    /// each as a resend run; `rocesim` does not count them yet: 0).
    pub go_back_n: u64,
    /// ACK timeouts of the requester (`rocesim` counts them; `roce-pcap`
    /// infers them from go-back-N episodes no NAK caused).
    pub timeouts: u64,
    /// NAKs the requester received, every syndrome: PSN sequence errors,
    /// RNR NAKs and the error NAKs (invalid request, remote access or
    /// operational error).
    pub naks: u64,
    /// CNPs that reached the requester.
    pub cnps: u64,
    /// Requests that arrived (or were captured) with ECN CE.
    pub ecn_ce_packets: u64,
    /// Message latency: from the message's first packet to the ACK that
    /// covers its last (a READ: to its last response), as the capture point
    /// sees them (`roce-pcap`; `rocesim` does not state it yet: `None`).
    pub message_latency_ns: Percentiles,
    /// The port (bond slave) that carried the requests: in `rocesim` the
    /// port of the first request (a bond failover can move later ones), in
    /// `roce-pcap` the capture file that carried most of them.
    pub port: Option<String>,
}

/// Nearest-rank percentiles of a set of samples; `None` without samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Percentiles {
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub max: Option<u64>,
}

/// The operation of a work request (a message), named as both tools'
/// scenarios and reports name it (`verb = "write_imm"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    Write,
    WriteImm,
    Send,
    SendImm,
    Read,
}

impl Verb {
    /// The `verb` value of a `[[workload.message]]`.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Write => "write",
            Verb::WriteImm => "write_imm",
            Verb::Send => "send",
            Verb::SendImm => "send_imm",
            Verb::Read => "read",
        }
    }

    /// Whether the responder consumes a receive WQE for this message
    /// (SEND, and RDMA WRITE with immediate).
    pub fn consumes_recv_wqe(self) -> bool {
        matches!(self, Verb::Send | Verb::SendImm | Verb::WriteImm)
    }

    pub fn has_immediate(self) -> bool {
        matches!(self, Verb::SendImm | Verb::WriteImm)
    }

    /// The perftest tool that streams this verb, when there is one.
    pub fn perftest(self) -> Option<&'static str> {
        match self {
            Verb::Write => Some("ib_write_bw"),
            Verb::Send => Some("ib_send_bw"),
            Verb::Read => Some("ib_read_bw"),
            Verb::WriteImm | Verb::SendImm => None,
        }
    }
}
