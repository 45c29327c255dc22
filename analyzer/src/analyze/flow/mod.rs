//! Per request flow state: the sequence tracker, message assembly, ACK
//! matching and the counters of one flow.
//!
//! A request flow is one requester talking to one responder QP:
//!
//! ```text
//!   requester (src, QPN q)                         responder (dst, dqpn r)
//!        │ ── SEND/WRITE/READ/ATOMIC requests, dqpn r ──────▶ │   keyed by (src, dst, r)
//!        │ ◀── ACK / NAK / READ responses, dqpn q ─────────── │   keyed by (dst, src, q),
//!        │ ◀── CNP for marked requests, dqpn q ────────────── │   learned when paired
//!        │ ── CNP for marked READ responses, dqpn r ────────▶ │
//! ```
//!
//! A flow's state is one struct, [`Flow`]; its parts live in one file each,
//! by what they follow:
//!
//! | file | follows |
//! |---|---|
//! | `mod.rs` | the flow, its counters, and the path of a request and of a CNP |
//! | `sequence.rs` | the request PSNs: out of sequence, retransmissions, go-back-N episodes, retry runs |
//! | `messages.rs` | message assembly, sizes and latencies |
//! | `acks.rs` | ACKs and their round-trip times, NAKs, READ responses |
//! | `mirror.rs` | mirror-port copies, left out before any of the above |
//! | `slaves.rs` | the capture files (bond slaves) the flow's packets are on |

mod acks;
mod messages;
mod mirror;
mod sequence;
mod slaves;

use core::net::IpAddr;
use std::collections::{BTreeMap, VecDeque};

use roce_codec::{Operation, Psn, Transport};

use self::acks::SentRequest;
use self::messages::{OpenMessage, PendingRead};
use self::mirror::{DUP_RING, Fingerprint};
pub(crate) use self::sequence::{Cause, Episode, RetryRun};
use self::sequence::{PsnTracker, read_psns};
pub(crate) use self::slaves::{FileUse, HashFields, SlaveMove};
use super::model::{FrameRef, LoggedMessage, MessageKind, MessageLog};
use super::quantiles::Quantiles;
use super::roce_event::RoceEvent;
use super::series::{Bins, Points};
use super::telemetry::FlowTelemetry;

/// Entries kept for RTT, message and READ matching; beyond this (no ACKs
/// seen for a long time) the oldest are dropped and counted.
const MAX_OUTSTANDING: usize = 8192;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub qpn: u32,
}

// The model's FrameRef, made from the event a flow is handed.
impl FrameRef {
    pub(crate) fn of(ev: &RoceEvent) -> FrameRef {
        FrameRef {
            file: ev.file,
            frame: ev.frame,
        }
    }
}

/// The time series one flow records as the capture is read (for plots);
/// they become a [`super::FlowSeries`] when the analysis ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordedSeries {
    pub originals: Points,
    pub retransmissions: Points,
    pub acks: Points,
    pub naks: Points,
    pub goodput: Bins,
}

#[derive(Debug, Clone)]
pub(crate) struct Flow {
    pub key: FlowKey,
    pub transport: Transport,
    pub sport: u16,
    pub requester_qpn: Option<u32>,
    pub response_sport: Option<u16>,
    pub request_fields: HashFields,
    pub response_fields: Option<HashFields>,
    pub files: Vec<FileUse>,
    pub first_frame: FrameRef,
    pub packets: u64,
    pub bytes: u64,
    pub payload_bytes: u64,
    /// Payload of first transmissions only (requests and READ responses).
    pub goodput_bytes: u64,
    pub request_packets: u64,
    pub response_packets: u64,
    pub first_ts: u64,
    pub last_ts: u64,
    pub opcodes: BTreeMap<u8, u64>,
    pub pmtu: Option<u32>,
    seq: PsnTracker,
    outstanding: VecDeque<SentRequest>,
    pub untracked_psns: u64,
    dups: [Option<Fingerprint>; DUP_RING],
    dup_next: usize,
    pub mirror_duplicates: u64,
    mirrored_requests: u64,
    /// The last requests taken for mirror copies, kept for a moment in
    /// case a NAK for their PSN follows: see [`Flow::replay_resends`].
    held_copies: VecDeque<RoceEvent>,
    /// Responses identical to one just before them that were not taken for
    /// mirror copies: re-ACKs of duplicate requests.
    pub repeated_responses: u64,
    pub retransmitted_packets: u64,
    pub retransmitted_bytes: u64,
    pub out_of_sequence: u64,
    pub missing_psns: u64,
    pub episodes: Vec<Episode>,
    pub episodes_total: u64,
    pub episodes_by_cause: BTreeMap<&'static str, u64>,
    /// Episodes that rewound to the same PSN in a row, now and the longest
    /// so far, per retry counter (retry_cnt: timeouts and NAKs; rnr_retry).
    run: RetryRun,
    pub worst_retry_run: RetryRun,
    pub worst_rnr_run: RetryRun,
    pub acks: u64,
    pub naks: BTreeMap<&'static str, u64>,
    pub nak_frames: Vec<FrameRef>,
    pub error_naks: Vec<(FrameRef, &'static str, Psn)>,
    pub rnr_timers_us: BTreeMap<u32, u64>,
    pub rnr_frames: Vec<FrameRef>,
    pub ack_rtt: Quantiles,
    pub ecn_ce_packets: u64,
    /// Of `ecn_ce_packets`, the requests.
    pub ecn_ce_requests: u64,
    pub cnps: u64,
    /// Of `cnps`, those to the requester (about marked requests).
    pub cnps_to_requester: u64,
    pub cnp_delay: Quantiles,
    pub cnps_without_ce: u64,
    ce_pending_requests: Option<u64>,
    ce_pending_responses: Option<u64>,
    pub icrc_errors: u64,
    pub icrc_frames: Vec<FrameRef>,
    pub icrc_unchecked: u64,
    // Messages.
    open: Option<OpenMessage>,
    last_done: Option<Psn>,
    unacked_messages: VecDeque<(Psn, u64)>,
    reads: VecDeque<PendingRead>,
    read_response_max: Option<Psn>,
    pub read_responses_replayed: u64,
    pub messages: BTreeMap<MessageKind, u64>,
    pub partial_messages: u64,
    pub message_size: Quantiles,
    pub message_bytes: u64,
    pub message_latency: Quantiles,
    /// The first messages, for `infer` (only with [`FlowOptions::message_log`]).
    pub message_log: Option<MessageLog>,
    /// The traffic class byte (DSCP << 2 | ECN) of the first request.
    pub request_tclass: u8,
    // Slaves.
    cur_request_file: Option<u16>,
    cur_response_file: Option<u16>,
    pub request_moves: Vec<SlaveMove>,
    pub request_moves_total: u64,
    pub response_moves_total: u64,
    pub last_request_frame: FrameRef,
    pub last_ack_through: Option<Psn>,
    pub series: Option<Box<RecordedSeries>>,
    /// In-band telemetry, from the first frame that carried some.
    pub telemetry: Option<Box<FlowTelemetry>>,
}

/// Knobs the flow table passes down.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlowOptions {
    pub dup_window_ns: u64,
    pub pmtu: Option<u32>,
    pub series: bool,
    /// Keep each flow's first messages ([`MessageLog`]) for `infer`.
    pub message_log: bool,
}

impl Flow {
    pub fn new(ev: &RoceEvent, n_files: usize, opts: &FlowOptions) -> Flow {
        Flow {
            key: FlowKey {
                src: ev.src,
                dst: ev.dst,
                qpn: ev.dqpn,
            },
            transport: ev.opcode.transport(),
            sport: ev.sport,
            requester_qpn: None,
            response_sport: None,
            request_fields: HashFields::of(ev),
            response_fields: None,
            files: vec![FileUse::default(); n_files],
            first_frame: FrameRef::of(ev),
            packets: 0,
            bytes: 0,
            payload_bytes: 0,
            goodput_bytes: 0,
            request_packets: 0,
            response_packets: 0,
            first_ts: ev.ts_ns,
            last_ts: ev.ts_ns,
            opcodes: BTreeMap::new(),
            pmtu: opts.pmtu,
            seq: PsnTracker::default(),
            outstanding: VecDeque::new(),
            untracked_psns: 0,
            dups: [None; DUP_RING],
            dup_next: 0,
            mirror_duplicates: 0,
            mirrored_requests: 0,
            held_copies: VecDeque::new(),
            repeated_responses: 0,
            retransmitted_packets: 0,
            retransmitted_bytes: 0,
            out_of_sequence: 0,
            missing_psns: 0,
            episodes: Vec::new(),
            episodes_total: 0,
            episodes_by_cause: BTreeMap::new(),
            run: RetryRun::default(),
            worst_retry_run: RetryRun::default(),
            worst_rnr_run: RetryRun::default(),
            acks: 0,
            naks: BTreeMap::new(),
            nak_frames: Vec::new(),
            error_naks: Vec::new(),
            rnr_timers_us: BTreeMap::new(),
            rnr_frames: Vec::new(),
            ack_rtt: Quantiles::default(),
            ecn_ce_packets: 0,
            ecn_ce_requests: 0,
            cnps: 0,
            cnps_to_requester: 0,
            cnp_delay: Quantiles::default(),
            cnps_without_ce: 0,
            ce_pending_requests: None,
            ce_pending_responses: None,
            icrc_errors: 0,
            icrc_frames: Vec::new(),
            icrc_unchecked: 0,
            open: None,
            last_done: None,
            unacked_messages: VecDeque::new(),
            reads: VecDeque::new(),
            read_response_max: None,
            read_responses_replayed: 0,
            messages: BTreeMap::new(),
            partial_messages: 0,
            message_size: Quantiles::default(),
            message_bytes: 0,
            message_latency: Quantiles::default(),
            message_log: opts.message_log.then(MessageLog::default),
            request_tclass: ev.tclass,
            cur_request_file: None,
            cur_response_file: None,
            request_moves: Vec::new(),
            request_moves_total: 0,
            response_moves_total: 0,
            last_request_frame: FrameRef::of(ev),
            last_ack_through: None,
            series: opts.series.then(Box::default),
            telemetry: None,
        }
    }

    /// Heap bytes held by this flow's state (queues, histograms, lists):
    /// what must not grow with the number of packets.
    pub fn state_bytes(&self) -> usize {
        use std::mem::size_of;
        let q = |q: &Quantiles| q.keys() * 48;
        self.outstanding.capacity() * size_of::<SentRequest>()
            + self.unacked_messages.capacity() * size_of::<(Psn, u64)>()
            + self.reads.capacity() * size_of::<PendingRead>()
            + self.seq.missing.capacity() * size_of::<(Psn, u32)>()
            + self.held_copies.capacity() * size_of::<RoceEvent>()
            + self.episodes.capacity() * size_of::<Episode>()
            + self.request_moves.capacity() * size_of::<SlaveMove>()
            + self.files.capacity() * size_of::<FileUse>()
            + (self.opcodes.len() + self.naks.len() + self.rnr_timers_us.len()) * 48
            + (self.run.frames.capacity()
                + self.worst_retry_run.frames.capacity()
                + self.worst_rnr_run.frames.capacity())
                * 32
            + q(&self.ack_rtt)
            + q(&self.cnp_delay)
            + q(&self.message_size)
            + q(&self.message_latency)
            + self
                .message_log
                .as_ref()
                .map_or(0, |l| l.messages.capacity() * size_of::<LoggedMessage>())
            + self.telemetry.as_ref().map_or(0, |t| t.state_bytes())
    }

    /// Episode still open at the end of the capture goes into the list.
    pub fn finish(&mut self) {
        self.close_episode();
        self.end_retry_run();
    }

    /// A request of this flow (requester to responder).
    pub fn on_request(&mut self, ev: &RoceEvent, opts: &FlowOptions) {
        if self.is_mirror_duplicate(ev, opts.dup_window_ns, self.seq.nak_epoch) {
            self.hold_copy(ev);
            return;
        }
        self.request(ev);
    }

    fn request(&mut self, ev: &RoceEvent) {
        if !self.arrive(ev, true) {
            return;
        }
        let Some(op) = ev.opcode.operation() else {
            return;
        };
        if matches!(
            op,
            Operation::SendFirst
                | Operation::SendMiddle
                | Operation::RdmaWriteFirst
                | Operation::RdmaWriteMiddle
        ) && self.pmtu.is_none()
            && ev.payload_len > 0
        {
            self.pmtu = Some(ev.payload_len);
        }
        let (nmin, nmax) = if op == Operation::RdmaReadRequest {
            read_psns(ev.dma_len.unwrap_or(0), self.pmtu)
        } else {
            (1, 1)
        };
        let ud = self.transport == Transport::Ud;
        let original = ud || self.classify(ev, nmin, nmax);
        let mut first_sighting = false;
        if !ud {
            let since = ev.ts_ns.saturating_sub(self.seq.last_request_ts);
            if original {
                self.close_episode();
                self.goodput_bytes += u64::from(ev.payload_len);
                if let Some(s) = &mut self.series {
                    s.goodput.add(ev.ts_ns, f64::from(ev.payload_len));
                }
                self.push_outstanding(SentRequest {
                    psn: ev.psn,
                    ts: ev.ts_ns,
                    retransmitted: false,
                });
            } else {
                self.retransmission(ev, since);
                first_sighting = self.fill_missing(ev.psn);
                if first_sighting {
                    self.goodput_bytes += u64::from(ev.payload_len);
                    if let Some(s) = &mut self.series {
                        s.goodput.add(ev.ts_ns, f64::from(ev.payload_len));
                    }
                }
            }
            let uw = self.unwrapped(ev.psn);
            if let Some(s) = &mut self.series {
                if original {
                    s.originals.push(ev.ts_ns, uw);
                } else {
                    s.retransmissions.push(ev.ts_ns, uw);
                }
            }
            self.seq.last_request_ts = ev.ts_ns;
        } else {
            self.goodput_bytes += u64::from(ev.payload_len);
            if let Some(s) = &mut self.series {
                s.goodput.add(ev.ts_ns, f64::from(ev.payload_len));
            }
        }
        self.last_request_frame = FrameRef::of(ev);
        self.assemble(ev, op, !ud, first_sighting);
    }

    /// What every frame of the flow adds, in either direction. False when
    /// its ICRC is bad: the receiving NIC drops it, so it is lost, and its
    /// fields may be garbage.
    fn arrive(&mut self, ev: &RoceEvent, request: bool) -> bool {
        self.account(ev, request);
        self.payload_bytes += u64::from(ev.payload_len);
        self.track_slave(ev, request);
        let ce = if request {
            &mut self.ce_pending_requests
        } else {
            &mut self.ce_pending_responses
        };
        if ev.ce() && ce.is_none() {
            *ce = Some(ev.ts_ns);
        }
        if ev.ce() && request {
            self.ecn_ce_requests += 1;
        }
        if ev.icrc_valid == Some(false) {
            self.icrc_errors += 1;
            if self.icrc_frames.len() < 16 {
                self.icrc_frames.push(FrameRef::of(ev));
            }
            return false;
        }
        true
    }

    fn account(&mut self, ev: &RoceEvent, request: bool) {
        self.packets += 1;
        self.bytes += u64::from(ev.wire_len);
        self.last_ts = self.last_ts.max(ev.ts_ns);
        self.first_ts = self.first_ts.min(ev.ts_ns);
        *self.opcodes.entry(ev.opcode.0).or_insert(0) += 1;
        let fu = &mut self.files[ev.file as usize];
        fu.bytes += u64::from(ev.wire_len);
        if request {
            fu.request_packets += 1;
            self.request_packets += 1;
        } else {
            fu.response_packets += 1;
            self.response_packets += 1;
        }
        if ev.icrc_valid.is_none() {
            self.icrc_unchecked += 1;
        }
        if ev.ce() {
            self.ecn_ce_packets += 1;
        }
    }

    /// A CNP that slows down this flow's requester (`toward_requester`) or,
    /// for READ responses, its responder.
    pub fn on_cnp(&mut self, ev: &RoceEvent, toward_requester: bool) {
        self.account(ev, !toward_requester);
        self.track_slave(ev, !toward_requester);
        self.cnps += 1;
        if toward_requester {
            self.cnps_to_requester += 1;
        }
        let pending = if toward_requester {
            self.ce_pending_requests.take()
        } else {
            self.ce_pending_responses.take()
        };
        match pending {
            Some(t) => self.cnp_delay.add(ev.ts_ns.saturating_sub(t)),
            None => self.cnps_without_ce += 1,
        }
    }

    pub fn has_pending_ce(&self, toward_requester: bool) -> bool {
        if toward_requester {
            self.ce_pending_requests.is_some()
        } else {
            self.ce_pending_responses.is_some()
        }
    }
}
