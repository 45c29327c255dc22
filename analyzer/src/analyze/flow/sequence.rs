//! The PSN sequence of a flow's requests, as the capture point sees it:
//! originals, out-of-sequence arrivals, retransmissions and the go-back-N
//! episodes they form, with their causes, and the runs of episodes that
//! use up one retry counter.
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
//! no loss. PSNs are unwrapped (24-bit wrap-around counted) against the
//! first request, so spans and plots stay monotonic.

use std::collections::VecDeque;

use roce_codec::{Operation, Psn};

use super::{Flow, FrameRef, RoceEvent};

const MAX_EPISODES_KEPT: usize = 256;

/// Sequence state of the request direction.
#[derive(Debug, Clone, Default)]
pub(super) struct PsnTracker {
    pub(super) started: bool,
    /// The PSN the next new request should carry.
    pub(super) next: Psn,
    /// After a READ whose PSN count is not known yet (path MTU unknown):
    /// (request PSN, fewest PSNs, most PSNs) it may occupy.
    pub(super) read_fuzz: Option<(Psn, u32, u32)>,
    pub(super) episode: Option<Episode>,
    pub(super) pending_cause: Option<Cause>,
    pub(super) last_request_ts: u64,
    /// Unwrapped PSN reference: (PSN, unwrapped value).
    pub(super) unwrap_ref: (Psn, i64),
    pub(super) unwrapped_first: i64,
    pub(super) unwrapped_max: i64,
    pub(super) first_psn: Psn,
    /// Increments on every sequence-error or RNR NAK: a frame identical to
    /// one sent before the NAK is a resend, not a mirror copy.
    pub(super) nak_epoch: u64,
    /// Increments on every retransmitted request: an identical ACK after a
    /// resend is a re-ACK, not a mirror copy.
    pub(super) retx_epoch: u64,
    /// PSN ranges skipped by out-of-sequence arrivals: (first, count). A
    /// resend that fills one is the first time the capture sees that data.
    pub(super) missing: VecDeque<(Psn, u32)>,
}

const MAX_MISSING_RANGES: usize = 64;

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
    pub(super) last_ts: u64,
    pub rewind_psn: Psn,
    /// Highest PSN sent before the rewind.
    pub highest_psn: Psn,
    pub(super) next: Psn,
    pub packets: u64,
    pub bytes: u64,
    pub cause: Cause,
    /// Time since the previous request of the flow.
    pub gap_ns: u64,
    /// When the rewound PSN was last sent before this resend, if seen.
    pub(super) psn_sent_ts: Option<u64>,
    /// The flow's cumulative ACK when the episode began: a later, higher
    /// one lets the resend skip ahead.
    pub(super) ack_seen_at_start: Option<Psn>,
}

pub(super) fn read_psns(dma_len: u32, pmtu: Option<u32>) -> (u32, u32) {
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

    pub(super) fn unwrapped(&self, psn: Psn) -> i64 {
        self.seq.unwrap_ref.1 + i64::from(psn.distance(self.seq.unwrap_ref.0))
    }

    /// Decides original vs retransmission and moves the expected PSN.
    pub(super) fn classify(&mut self, ev: &RoceEvent, nmin: u32, nmax: u32) -> bool {
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
    pub(super) fn fill_missing(&mut self, psn: Psn) -> bool {
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

    pub(super) fn retransmission(&mut self, ev: &RoceEvent, since_last_ns: u64) {
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

    pub(super) fn close_episode(&mut self) {
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

    pub(super) fn end_retry_run(&mut self) {
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
}
