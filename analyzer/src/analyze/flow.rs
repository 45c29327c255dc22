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
//! The sequence tracker sees request PSNs at the capture point:
//!
//! ```text
//!   PSN ▲                 rewind (go-back-N episode, cause NAK / RNR NAK / timeout)
//!       │        ●●●●●   ╱
//!       │   ●●●●●     ● ●●●●●●●●      ● original (after the highest PSN seen)
//!       │ ●●            ○○○○○          ○ retransmitted (not after the highest PSN seen)
//!       └─────────────────────────▶ t
//! ```
//! A PSN beyond the expected one is an out-of-sequence arrival (packets
//! lost before the capture point, or a capture that missed some); a PSN
//! at or before the highest seen is a retransmission, and a run of them
//! starting with a backwards jump is one go-back-N episode. The first
//! packet of a flow sets the baseline, so a capture starting mid-flow shows
//! no loss. Mirror-port copies (identical ICRC, PSN, opcode and length
//! within the duplicate window, with no NAK in between) are dropped before
//! any of this.

use core::net::IpAddr;
use std::collections::{BTreeMap, VecDeque};

use roce_codec::wire::aeth::{NakCode, SyndromeKind};
use roce_codec::{Operation, Psn, Transport};

use super::quantiles::Quantiles;
use super::roce_event::RoceEvent;
use super::series::{Bins, Points};

/// Entries kept for RTT, message and READ matching; beyond this (no ACKs
/// seen for a long time) the oldest are dropped and counted.
const MAX_OUTSTANDING: usize = 8192;
const DUP_RING: usize = 16;
/// How late a NAK may be captured after the resend it caused.
const NAK_AFTER_REWIND_NS: u64 = 10_000;
/// Requests taken for mirror copies that a NAK may still turn back into
/// resends.
const MAX_HELD_COPIES: usize = 8;
pub(crate) const MAX_EPISODES_KEPT: usize = 256;
const MAX_MOVES_KEPT: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub qpn: u32,
}

/// A frame of the input: file index and 1-based frame number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct FrameRef {
    pub file: u16,
    pub frame: u64,
}

impl FrameRef {
    pub(crate) fn of(ev: &RoceEvent) -> FrameRef {
        FrameRef {
            file: ev.file,
            frame: ev.frame,
        }
    }
}

/// Go-back-N episodes in a row that rewound to the same PSN: one retry
/// counter being used up.
#[derive(Debug, Clone, Default)]
pub(crate) struct RetryRun {
    pub psn: Option<Psn>,
    /// RNR NAK retries (rnr_retry, status 13) rather than timeouts and
    /// sequence-error NAKs (retry_cnt, status 12).
    pub rnr: bool,
    pub count: u64,
    pub timeouts: u64,
    /// First frame of each resend and the time since the request before it
    /// (the first [`MAX_RUN_KEPT`]).
    pub frames: Vec<FrameRef>,
    pub gaps: Vec<u64>,
    /// Time of the first frame of each resend (the first [`MAX_RUN_KEPT`]).
    pub starts: Vec<u64>,
    /// When the PSN was last sent before the run's first resend, if the
    /// capture saw it.
    pub first_sent_ts: Option<u64>,
    /// Last frame of the last resend, and its time.
    pub last: Option<FrameRef>,
    pub last_ts: u64,
}

const MAX_RUN_KEPT: usize = 64;

impl RetryRun {
    /// Time between successive transmissions of the PSN: from the one
    /// before the run (when the capture saw it) to the first resend, then
    /// resend to resend. For timeouts this is the requester's ACK timer, the value
    /// an engineer compares with 4.096 us x 2^timeout.
    pub fn intervals(&self) -> Vec<u64> {
        let mut prev = self.first_sent_ts;
        self.starts
            .iter()
            .filter_map(|&t| {
                let d = prev.map(|p| t.saturating_sub(p));
                prev = Some(t);
                d
            })
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cause {
    Nak { frame: FrameRef, psn: Psn },
    RnrNak { frame: FrameRef, timer_us: u32 },
    Timeout,
}

impl Cause {
    pub fn name(&self) -> &'static str {
        match self {
            Cause::Nak { .. } => "nak",
            Cause::RnrNak { .. } => "rnr_nak",
            Cause::Timeout => "timeout",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Episode {
    pub start: FrameRef,
    pub last: FrameRef,
    pub ts_ns: u64,
    /// Time of the last resend.
    last_ts: u64,
    pub rewind_psn: Psn,
    /// Highest PSN sent before the rewind.
    pub highest_psn: Psn,
    next: Psn,
    pub packets: u64,
    pub bytes: u64,
    pub cause: Cause,
    /// Time since the previous request of the flow.
    pub gap_ns: u64,
    /// When the rewound PSN was last sent before this resend, if seen.
    psn_sent_ts: Option<u64>,
    /// The flow's cumulative ACK when the episode began: a later, higher
    /// one lets the resend skip ahead.
    ack_seen_at_start: Option<Psn>,
}

#[derive(Debug, Clone, Copy)]
struct SentRequest {
    psn: Psn,
    /// Its last transmission (the first, until it is resent).
    ts: u64,
    retransmitted: bool,
}

#[derive(Debug, Clone, Copy)]
struct Fingerprint {
    psn: Psn,
    opcode: u8,
    ib_len: u32,
    icrc: Option<[u8; 4]>,
    msn: u32,
    ts: u64,
    epoch: u64,
}

#[derive(Debug, Clone, Copy)]
struct OpenMessage {
    first: Psn,
    ts: u64,
    first_payload: u32,
    dma_len: Option<u32>,
    kind: MessageKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MessageKind {
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

#[derive(Debug, Clone, Copy)]
struct PendingRead {
    psn: Psn,
    ts: u64,
    dma_len: u32,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct SlaveMove {
    pub frame: FrameRef,
    pub ts_ns: u64,
    pub from: u16,
    pub to: u16,
}

/// Per-file share of a flow.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FileUse {
    pub request_packets: u64,
    pub response_packets: u64,
    pub bytes: u64,
}

/// The L2/L3/L4 fields the bonding hash reads, from a flow's first packet
/// in one direction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HashFields {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub vlan_tci: Option<u16>,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub rocev1: bool,
}

impl HashFields {
    fn of(ev: &RoceEvent) -> HashFields {
        HashFields {
            src_mac: ev.src_mac,
            dst_mac: ev.dst_mac,
            vlan_tci: ev.vlan_tci,
            src: ev.src,
            dst: ev.dst,
            sport: ev.sport,
            rocev1: ev.rocev1,
        }
    }
}

/// Sequence state of the request direction.
#[derive(Debug, Clone, Default)]
struct PsnTracker {
    started: bool,
    /// The PSN the next new request should carry.
    next: Psn,
    /// After a READ whose PSN count is not known yet (path MTU unknown):
    /// (request PSN, fewest PSNs, most PSNs) it may occupy.
    read_fuzz: Option<(Psn, u32, u32)>,
    episode: Option<Episode>,
    pending_cause: Option<Cause>,
    last_request_ts: u64,
    /// Unwrapped PSN reference: (PSN, unwrapped value).
    unwrap_ref: (Psn, i64),
    unwrapped_first: i64,
    unwrapped_max: i64,
    first_psn: Psn,
    /// Increments on every sequence-error or RNR NAK: a frame identical to
    /// one sent before the NAK is a resend, not a mirror copy.
    nak_epoch: u64,
    /// Increments on every retransmitted request: an identical ACK after a
    /// resend is a re-ACK, not a mirror copy.
    retx_epoch: u64,
    /// PSN ranges skipped by out-of-sequence arrivals: (first, count). A
    /// resend that fills one is the first time the capture sees that data.
    missing: VecDeque<(Psn, u32)>,
}

const MAX_MISSING_RANGES: usize = 64;

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
    pub cnps: u64,
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
    // Slaves.
    cur_request_file: Option<u16>,
    cur_response_file: Option<u16>,
    pub request_moves: Vec<SlaveMove>,
    pub request_moves_total: u64,
    pub response_moves_total: u64,
    pub last_request_frame: FrameRef,
    pub last_ack_through: Option<Psn>,
    pub series: Option<Box<RecordedSeries>>,
}

/// Knobs the flow table passes down.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlowOptions {
    pub dup_window_ns: u64,
    pub pmtu: Option<u32>,
    pub series: bool,
}

fn read_psns(dma_len: u32, pmtu: Option<u32>) -> (u32, u32) {
    match pmtu {
        Some(m) => {
            let n = Psn::packets_for(u64::from(dma_len), m);
            (n, n)
        }
        None => (
            Psn::packets_for(u64::from(dma_len), 4096),
            Psn::packets_for(u64::from(dma_len), 256),
        ),
    }
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
            cnps: 0,
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
            cur_request_file: None,
            cur_response_file: None,
            request_moves: Vec::new(),
            request_moves_total: 0,
            response_moves_total: 0,
            last_request_frame: FrameRef::of(ev),
            last_ack_through: None,
            series: opts.series.then(Box::default),
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
    }

    pub fn messages_total(&self) -> u64 {
        self.messages.values().sum()
    }

    pub fn first_psn(&self) -> Option<Psn> {
        self.seq.started.then_some(self.seq.first_psn)
    }

    pub fn last_psn(&self) -> Option<Psn> {
        self.seq.started.then(|| {
            self.seq
                .unwrap_ref
                .0
                .add((self.seq.unwrapped_max - self.seq.unwrap_ref.1) as u32)
        })
    }

    /// PSNs between the first and the highest request PSN, both included.
    pub fn psn_span(&self) -> u64 {
        if self.seq.started {
            (self.seq.unwrapped_max - self.seq.unwrapped_first + 1) as u64
        } else {
            0
        }
    }

    pub fn psn_wrapped(&self) -> bool {
        self.seq.started
            && (self.seq.unwrapped_first < 0 || self.seq.unwrapped_max > i64::from(Psn::MASK))
    }

    /// Episode still open at the end of the capture goes into the list.
    pub fn finish(&mut self) {
        self.close_episode();
        self.end_retry_run();
    }

    /// Whether `psn` could be answered by this flow: between the first
    /// request PSN and the next one expected (a NAK carries that one).
    pub fn psn_window_contains(&self, psn: Psn) -> bool {
        if !self.seq.started || psn.distance(self.seq.first_psn) < 0 {
            return false;
        }
        let upper = match self.seq.read_fuzz {
            Some((p, _, hi)) => p.add(hi),
            None => self.seq.next,
        };
        psn.distance(upper) <= 0
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

    /// Checks the duplicate ring; records the frame if it is new.
    fn is_mirror_duplicate(&mut self, ev: &RoceEvent, window_ns: u64, epoch: u64) -> bool {
        // A frame damaged on the way still carries the ICRC of the good
        // bytes; its resend must not look like a copy of it.
        if ev.icrc_valid == Some(false) {
            return false;
        }
        let fp = Fingerprint {
            psn: ev.psn,
            opcode: ev.opcode.0,
            ib_len: ev.ib_len,
            icrc: ev.icrc,
            msn: ev
                .aeth
                .map_or(u32::MAX, |a| a.msn | (u32::from(a.syndrome.0) << 24)),
            ts: ev.ts_ns,
            epoch,
        };
        let dup = self.dups.iter().flatten().any(|d| {
            d.psn == fp.psn
                && d.opcode == fp.opcode
                && d.ib_len == fp.ib_len
                && d.icrc == fp.icrc
                && d.msn == fp.msn
                && d.epoch == fp.epoch
                && fp.ts.abs_diff(d.ts) <= window_ns
        });
        if !dup {
            self.dups[self.dup_next] = Some(fp);
            self.dup_next = (self.dup_next + 1) % DUP_RING;
        }
        dup
    }

    fn unwrapped(&self, psn: Psn) -> i64 {
        self.seq.unwrap_ref.1 + i64::from(psn.distance(self.seq.unwrap_ref.0))
    }

    fn track_slave(&mut self, ev: &RoceEvent, request: bool) {
        let cur = if request {
            &mut self.cur_request_file
        } else {
            &mut self.cur_response_file
        };
        match *cur {
            Some(f) if f != ev.file => {
                *cur = Some(ev.file);
                if request {
                    self.request_moves_total += 1;
                    if self.request_moves.len() < MAX_MOVES_KEPT {
                        self.request_moves.push(SlaveMove {
                            frame: FrameRef::of(ev),
                            ts_ns: ev.ts_ns,
                            from: f,
                            to: ev.file,
                        });
                    }
                } else {
                    self.response_moves_total += 1;
                }
            }
            Some(_) => {}
            None => *cur = Some(ev.file),
        }
    }

    /// A request of this flow (requester to responder).
    pub fn on_request(&mut self, ev: &RoceEvent, opts: &FlowOptions) {
        if self.is_mirror_duplicate(ev, opts.dup_window_ns, self.seq.nak_epoch) {
            self.mirror_duplicates += 1;
            self.mirrored_requests += 1;
            if self.held_copies.len() >= MAX_HELD_COPIES {
                self.held_copies.pop_front();
            }
            self.held_copies.push_back(*ev);
            return;
        }
        self.request(ev);
    }

    /// A NAK (sequence error or RNR) for `nak.psn` time-stamped with or
    /// just after requests that were taken for mirror copies, the first of
    /// them with the NAK's PSN: those were the resends the NAK caused (the
    /// NAK was captured on another slave whose clock is a little behind, or
    /// in the same clock tick). They are counted again as the requests they
    /// were, after the NAK, in their order.
    fn replay_resends(&mut self, nak: &RoceEvent, opts: &FlowOptions) {
        let Some(i) = self.held_copies.iter().position(|h| {
            h.psn == nak.psn && nak.ts_ns.saturating_sub(h.ts_ns) <= NAK_AFTER_REWIND_NS
        }) else {
            return;
        };
        let resends: Vec<RoceEvent> = self.held_copies.drain(i..).collect();
        for ev in &resends {
            self.mirror_duplicates -= 1;
            self.mirrored_requests -= 1;
            // Recorded under the NAK's epoch, so that a real copy of the
            // resend is still found.
            if self.is_mirror_duplicate(ev, opts.dup_window_ns, self.seq.nak_epoch) {
                self.mirror_duplicates += 1;
                self.mirrored_requests += 1;
            } else {
                self.request(ev);
            }
        }
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
        if ev.icrc_valid == Some(false) {
            self.icrc_errors += 1;
            if self.icrc_frames.len() < 16 {
                self.icrc_frames.push(FrameRef::of(ev));
            }
            return false;
        }
        true
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

    /// Decides original vs retransmission and moves the expected PSN.
    fn classify(&mut self, ev: &RoceEvent, nmin: u32, nmax: u32) -> bool {
        let p = ev.psn;
        let s = &mut self.seq;
        if !s.started {
            s.started = true;
            s.first_psn = p;
            s.unwrap_ref = (p, i64::from(p.value()));
            s.unwrapped_first = i64::from(p.value());
            s.unwrapped_max = s.unwrapped_first + i64::from(nmin) - 1;
            s.next = p.add(nmin);
            s.read_fuzz = (nmin != nmax).then_some((p, nmin, nmax));
            return true;
        }
        let mut gap = p.distance(s.next);
        if let Some((rp, lo, hi)) = s.read_fuzz {
            let d = p.distance(rp);
            if d >= lo as i32 && d <= hi as i32 {
                gap = 0;
            } else if d > hi as i32 {
                gap = d - hi as i32;
            }
        }
        if gap < 0 {
            return false;
        }
        if gap > 0 {
            self.out_of_sequence += 1;
            self.missing_psns += gap as u64;
            if s.missing.len() >= MAX_MISSING_RANGES {
                s.missing.pop_front();
            }
            s.missing.push_back((p.sub(gap as u32), gap as u32));
        }
        let uw = s.unwrap_ref.1 + i64::from(p.distance(s.unwrap_ref.0));
        s.unwrap_ref = (p, uw);
        s.unwrapped_max = s.unwrapped_max.max(uw + i64::from(nmin) - 1);
        s.next = p.add(nmin);
        s.read_fuzz = (nmin != nmax).then_some((p, nmin, nmax));
        true
    }

    /// Removes `psn` from the missing ranges; true if it was missing.
    fn fill_missing(&mut self, psn: Psn) -> bool {
        let m = &mut self.seq.missing;
        let Some(i) = m.iter().position(|&(start, n)| {
            let d = psn.distance(start);
            d >= 0 && (d as u32) < n
        }) else {
            return false;
        };
        let (start, n) = m[i];
        let d = psn.distance(start) as u32;
        if n == 1 {
            m.remove(i);
        } else if d == 0 {
            m[i] = (start.next(), n - 1);
        } else if d == n - 1 {
            m[i] = (start, n - 1);
        } else {
            m[i] = (start, d);
            m.insert(i + 1, (psn.next(), n - d - 1));
        }
        true
    }

    fn retransmission(&mut self, ev: &RoceEvent, since_last_ns: u64) {
        self.retransmitted_packets += 1;
        self.retransmitted_bytes += u64::from(ev.wire_len);
        self.seq.retx_epoch += 1;
        // When this PSN went out last (its first sending or an earlier
        // resend): the timer that fired is measured from there. RTT
        // samples skip retransmitted PSNs (Karn), so `ts` may move on.
        let mut psn_sent_ts = None;
        if let Some(i) = self.find_outstanding(ev.psn) {
            let s = &mut self.outstanding[i];
            psn_sent_ts = Some(s.ts);
            s.retransmitted = true;
            s.ts = ev.ts_ns;
        }
        let acked = self.last_ack_through;
        let continues = self.seq.episode.as_ref().is_some_and(|e| {
            e.next == ev.psn
                // The requester skipped what an ACK that came during the
                // resend covered (a responder re-ACKs on the first
                // duplicate): the same go-back-N, not a new timeout.
                || (ev.psn.is_after(e.next)
                    && acked.is_some_and(|a| a.next() == ev.psn)
                    && e.ack_seen_at_start != acked)
        });
        if !continues {
            self.close_episode();
            let cause = self.seq.pending_cause.take().unwrap_or(Cause::Timeout);
            let highest = self
                .seq
                .unwrap_ref
                .0
                .add((self.seq.unwrapped_max - self.seq.unwrap_ref.1) as u32);
            self.seq.episode = Some(Episode {
                start: FrameRef::of(ev),
                last: FrameRef::of(ev),
                ts_ns: ev.ts_ns,
                last_ts: ev.ts_ns,
                rewind_psn: ev.psn,
                highest_psn: highest,
                next: ev.psn,
                packets: 0,
                bytes: 0,
                cause,
                gap_ns: since_last_ns,
                psn_sent_ts,
                ack_seen_at_start: acked,
            });
        }
        let e = self.seq.episode.as_mut().unwrap();
        e.packets += 1;
        e.bytes += u64::from(ev.wire_len);
        e.last = FrameRef::of(ev);
        e.last_ts = ev.ts_ns;
        let n = if ev.opcode.operation() == Some(Operation::RdmaReadRequest) {
            read_psns(ev.dma_len.unwrap_or(0), self.pmtu).0
        } else {
            1
        };
        e.next = ev.psn.add(n);
    }

    fn close_episode(&mut self) {
        let Some(e) = self.seq.episode.take() else {
            return;
        };
        self.episodes_total += 1;
        *self.episodes_by_cause.entry(e.cause.name()).or_insert(0) += 1;
        let rnr = matches!(e.cause, Cause::RnrNak { .. });
        if self.run.psn != Some(e.rewind_psn) || self.run.rnr != rnr {
            self.end_retry_run();
            self.run = RetryRun {
                psn: Some(e.rewind_psn),
                rnr,
                first_sent_ts: e.psn_sent_ts,
                ..RetryRun::default()
            };
        }
        let run = &mut self.run;
        run.count += 1;
        if e.cause == Cause::Timeout {
            run.timeouts += 1;
        }
        if run.frames.len() < MAX_RUN_KEPT {
            run.frames.push(e.start);
            run.gaps.push(e.gap_ns);
            run.starts.push(e.ts_ns);
        }
        run.last = Some(e.last);
        run.last_ts = e.last_ts;
        if self.episodes.len() < MAX_EPISODES_KEPT {
            self.episodes.push(e);
        }
    }

    fn end_retry_run(&mut self) {
        let run = std::mem::take(&mut self.run);
        let worst = if run.rnr {
            &mut self.worst_rnr_run
        } else {
            &mut self.worst_retry_run
        };
        if run.count > worst.count {
            *worst = run;
        }
    }

    /// Whether `run` is the last thing the flow did: its last resend was
    /// the flow's last request and nothing acknowledged its PSN.
    pub fn ends_in_silence(&self, run: &RetryRun) -> bool {
        let (Some(psn), Some(last)) = (run.psn, run.last) else {
            return false;
        };
        let acked = self.last_ack_through.is_some_and(|a| psn.distance(a) <= 0);
        last == self.last_request_frame && !acked
    }

    fn push_outstanding(&mut self, s: SentRequest) {
        if self.outstanding.len() >= MAX_OUTSTANDING {
            self.outstanding.pop_front();
            self.untracked_psns += 1;
        }
        self.outstanding.push_back(s);
    }

    fn find_outstanding(&self, psn: Psn) -> Option<usize> {
        let front = self.outstanding.front()?.psn;
        let d = psn.distance(front);
        if d < 0 {
            return None;
        }
        let i = self
            .outstanding
            .partition_point(|s| s.psn.distance(front) < d);
        (i < self.outstanding.len() && self.outstanding[i].psn == psn).then_some(i)
    }

    /// Everything up to and including `psn` is acknowledged at `ts`.
    fn ack_through(&mut self, psn: Psn, ts: u64) {
        self.last_ack_through = Some(match self.last_ack_through {
            Some(a) if a.is_after(psn) => a,
            _ => psn,
        });
        while let Some(s) = self.outstanding.front() {
            if s.psn.distance(psn) > 0 {
                break;
            }
            self.outstanding.pop_front();
        }
        while let Some(&(last, start)) = self.unacked_messages.front() {
            if last.distance(psn) > 0 {
                break;
            }
            self.unacked_messages.pop_front();
            self.message_latency.add(ts.saturating_sub(start));
        }
    }

    fn record_message(
        &mut self,
        kind: MessageKind,
        size: u64,
        start_ts: u64,
        last: Psn,
        acked: bool,
    ) {
        *self.messages.entry(kind).or_insert(0) += 1;
        self.message_size.add(size);
        self.message_bytes += size;
        if acked {
            if self.unacked_messages.len() >= MAX_OUTSTANDING {
                self.unacked_messages.pop_front();
            }
            self.unacked_messages.push_back((last, start_ts));
        }
    }

    fn is_new_message(&self, psn: Psn) -> bool {
        self.last_done.is_none_or(|d| psn.is_after(d))
    }

    /// Message reconstruction from FIRST/MIDDLE/LAST/ONLY. Sizes come from
    /// the RETH (WRITE) or from the PSN count and the FIRST packet's
    /// payload (SEND), so they are right even when packets were lost
    /// before the capture point.
    ///
    /// `first_sighting`: a resend that fills a PSN gap (the original was lost
    /// before the capture point); a single-packet message there is new.
    fn assemble(&mut self, ev: &RoceEvent, op: Operation, reliable: bool, first_sighting: bool) {
        use Operation::*;
        let p = ev.psn;
        let kind = match op {
            SendFirst
            | SendMiddle
            | SendLast
            | SendLastWithImmediate
            | SendLastWithInvalidate
            | SendOnly
            | SendOnlyWithImmediate
            | SendOnlyWithInvalidate => MessageKind::Send,
            RdmaWriteFirst
            | RdmaWriteMiddle
            | RdmaWriteLast
            | RdmaWriteLastWithImmediate
            | RdmaWriteOnly
            | RdmaWriteOnlyWithImmediate => MessageKind::Write,
            RdmaReadRequest => MessageKind::Read,
            CompareSwap | FetchAdd | AtomicWrite => MessageKind::Atomic,
            _ => return,
        };
        if op == RdmaReadRequest {
            if self.is_new_message(p) && !self.reads.iter().any(|r| r.psn == p) {
                if self.reads.len() >= MAX_OUTSTANDING {
                    self.reads.pop_front();
                }
                self.reads.push_back(PendingRead {
                    psn: p,
                    ts: ev.ts_ns,
                    dma_len: ev.dma_len.unwrap_or(0),
                });
            }
            return;
        }
        let starts = op.starts_message();
        let ends = op.ends_message();
        if first_sighting && starts && ends && !self.is_new_message(p) {
            let size = if kind == MessageKind::Atomic && op != AtomicWrite {
                8
            } else {
                u64::from(ev.payload_len)
            };
            self.record_message(kind, size, ev.ts_ns, p, reliable);
            return;
        }
        if !self.is_new_message(p) {
            return;
        }
        match (starts, ends) {
            (true, true) => {
                let size = if kind == MessageKind::Atomic && op != AtomicWrite {
                    8
                } else {
                    u64::from(ev.payload_len)
                };
                self.record_message(kind, size, ev.ts_ns, p, reliable);
                self.last_done = Some(p);
                self.open = None;
            }
            (true, false) => {
                if self.open.is_some_and(|o| o.first == p) {
                    return;
                }
                self.open = Some(OpenMessage {
                    first: p,
                    ts: ev.ts_ns,
                    first_payload: ev.payload_len,
                    dma_len: ev.dma_len,
                    kind,
                });
            }
            (false, true) => {
                match self.open.take() {
                    Some(o) if p.distance(o.first) >= 0 => {
                        let size = match o.dma_len {
                            Some(d) if o.kind == MessageKind::Write => u64::from(d),
                            _ => {
                                p.distance(o.first) as u64 * u64::from(o.first_payload)
                                    + u64::from(ev.payload_len)
                            }
                        };
                        self.record_message(o.kind, size, o.ts, p, reliable);
                    }
                    _ => self.partial_messages += 1,
                }
                self.last_done = Some(p);
            }
            (false, false) => {}
        }
    }

    /// A response (ACK, NAK, READ response, atomic ACK) to this flow's requests.
    pub fn on_response(&mut self, ev: &RoceEvent, opts: &FlowOptions) {
        if self.is_mirror_duplicate(ev, opts.dup_window_ns, self.seq.retx_epoch) {
            // A responder re-ACKs every duplicate request with the same PSN
            // and MSN, which looks exactly like a mirror copy; only a
            // capture that also copied requests is taken to copy responses.
            if self.mirrored_requests > 0 {
                self.mirror_duplicates += 1;
                return;
            }
            self.repeated_responses += 1;
        }
        self.response_sport.get_or_insert(ev.sport);
        if self.response_fields.is_none() {
            self.response_fields = Some(HashFields::of(ev));
        }
        if !self.arrive(ev, false) {
            return;
        }
        let Some(op) = ev.opcode.operation() else {
            return;
        };
        let p = ev.psn;
        match op {
            Operation::Acknowledge | Operation::AtomicAcknowledge => {
                let Some(aeth) = ev.aeth else { return };
                match aeth.syndrome.kind() {
                    SyndromeKind::Ack { .. } => {
                        self.acks += 1;
                        if let Some(i) = self.find_outstanding(p) {
                            let s = self.outstanding[i];
                            if !s.retransmitted {
                                self.ack_rtt.add(ev.ts_ns.saturating_sub(s.ts));
                            }
                        }
                        self.ack_through(p, ev.ts_ns);
                        self.series_ack(ev, false);
                    }
                    SyndromeKind::RnrNak { .. } => {
                        self.count_nak(ev, aeth.syndrome.name());
                        let timer_us = aeth.syndrome.rnr_timer_us().unwrap_or(0);
                        *self.rnr_timers_us.entry(timer_us).or_insert(0) += 1;
                        if self.rnr_frames.len() < 16 {
                            self.rnr_frames.push(FrameRef::of(ev));
                        }
                        self.nak_cause(
                            ev,
                            Cause::RnrNak {
                                frame: FrameRef::of(ev),
                                timer_us,
                            },
                        );
                        self.ack_through(p.sub(1), ev.ts_ns);
                        self.replay_resends(ev, opts);
                    }
                    SyndromeKind::Nak(NakCode::PsnSequenceError) => {
                        self.count_nak(ev, aeth.syndrome.name());
                        self.nak_cause(
                            ev,
                            Cause::Nak {
                                frame: FrameRef::of(ev),
                                psn: p,
                            },
                        );
                        self.ack_through(p.sub(1), ev.ts_ns);
                        self.replay_resends(ev, opts);
                    }
                    SyndromeKind::Nak(_) | SyndromeKind::Reserved { .. } => {
                        let name = aeth.syndrome.name();
                        self.count_nak(ev, name);
                        if self.error_naks.len() < 16 {
                            self.error_naks.push((FrameRef::of(ev), name, p));
                        }
                    }
                }
            }
            Operation::RdmaReadResponseFirst
            | Operation::RdmaReadResponseMiddle
            | Operation::RdmaReadResponseLast
            | Operation::RdmaReadResponseOnly => {
                if matches!(
                    op,
                    Operation::RdmaReadResponseFirst | Operation::RdmaReadResponseMiddle
                ) && self.pmtu.is_none()
                    && ev.payload_len > 0
                {
                    self.pmtu = Some(ev.payload_len);
                }
                let new = self.read_response_max.is_none_or(|m| p.is_after(m));
                if new {
                    self.read_response_max = Some(p);
                    self.goodput_bytes += u64::from(ev.payload_len);
                    if let Some(s) = &mut self.series {
                        s.goodput.add(ev.ts_ns, f64::from(ev.payload_len));
                    }
                } else {
                    self.read_responses_replayed += 1;
                }
                self.ack_through(p.sub(1), ev.ts_ns);
                if op.ends_message() {
                    self.complete_read(p, ev.ts_ns);
                }
            }
            _ => {}
        }
    }

    /// A NAK that makes the requester go back: the cause of the next
    /// rewind, or of the one that just began at this PSN. The second case
    /// is a NAK time-stamped with or just after the resend it caused: the
    /// requester reacted within the same clock tick, or the two directions
    /// were captured on different slaves whose clocks differ a little.
    fn nak_cause(&mut self, ev: &RoceEvent, cause: Cause) {
        self.seq.nak_epoch += 1;
        if let Some(e) = &mut self.seq.episode {
            if e.cause == Cause::Timeout
                && e.rewind_psn == ev.psn
                && ev.ts_ns.saturating_sub(e.ts_ns) <= NAK_AFTER_REWIND_NS
            {
                e.cause = cause;
                return;
            }
        }
        self.seq.pending_cause = Some(cause);
    }

    fn series_ack(&mut self, ev: &RoceEvent, nak: bool) {
        if self.seq.started {
            let uw = self.unwrapped(ev.psn);
            if let Some(s) = &mut self.series {
                if nak {
                    s.naks.push(ev.ts_ns, uw);
                } else {
                    s.acks.push(ev.ts_ns, uw);
                }
            }
        }
    }

    fn count_nak(&mut self, ev: &RoceEvent, name: &'static str) {
        *self.naks.entry(name).or_insert(0) += 1;
        if self.nak_frames.len() < 16 {
            self.nak_frames.push(FrameRef::of(ev));
        }
        self.series_ack(ev, true);
    }

    fn complete_read(&mut self, last: Psn, ts: u64) {
        let mut done = None;
        while let Some(r) = self.reads.front() {
            if r.psn.is_after(last) {
                break;
            }
            done = self.reads.pop_front();
        }
        let Some(r) = done else { return };
        // The responses tell how many PSNs the READ took.
        if let Some((rp, _, _)) = self.seq.read_fuzz {
            if rp == r.psn {
                let n = (last.distance(r.psn) + 1) as u32;
                self.seq.read_fuzz = None;
                self.seq.next = r.psn.add(n);
                self.seq.unwrapped_max = self
                    .seq
                    .unwrapped_max
                    .max(self.unwrapped(r.psn) + i64::from(n) - 1);
            }
        }
        *self.messages.entry(MessageKind::Read).or_insert(0) += 1;
        self.message_size.add(u64::from(r.dma_len));
        self.message_bytes += u64::from(r.dma_len);
        self.message_latency.add(ts.saturating_sub(r.ts));
        self.ack_through(last, ts);
    }

    /// A CNP that slows down this flow's requester (`toward_requester`) or,
    /// for READ responses, its responder.
    pub fn on_cnp(&mut self, ev: &RoceEvent, toward_requester: bool) {
        self.account(ev, !toward_requester);
        self.track_slave(ev, !toward_requester);
        self.cnps += 1;
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

    /// The file that carried most of this flow's requests (responses if
    /// there were none).
    pub fn main_file(&self, requests: bool) -> Option<u16> {
        let pick = |f: &FileUse| {
            if requests {
                f.request_packets
            } else {
                f.response_packets
            }
        };
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| pick(f) > 0)
            .max_by_key(|(i, f)| (pick(f), std::cmp::Reverse(*i)))
            .map(|(i, _)| i as u16)
    }
}
