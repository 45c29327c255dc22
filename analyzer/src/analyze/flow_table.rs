//! The flow table: routes every RoCE event to its request flow, pairing
//! responses with requests.
//!
//! ```text
//!  request  (src, dst, dqpn)  ──by_request──▶ flow (created on first sight)
//!  response (src, dst, dqpn)  ──by_response─▶ flow, learned on first pairing:
//!       candidates = flows from dst to src whose requester QPN is unknown
//!       1. same UDP source port (Linux gives both directions one port)
//!       2. else the response PSN lies in the flow's PSN window
//!       3. else the only candidate
//!  CNP (src, dst, dqpn)       ──by_response─▶ the requester is slowed down (marked requests)
//!                             ──by_request──▶ the responder is slowed down (marked READ responses)
//! ```
//! Responses that pair with nothing are kept per (src, dst, QPN) as
//! response-only records and tried again on every later response, so a
//! capture that starts with an ACK still pairs once the requests show up.

use std::collections::HashMap;

use core::net::IpAddr;

use roce_codec::{Operation, Transport};

use super::flow::{FileUse, Flow, FlowKey, FlowOptions};
use super::model::{FrameRef, ResponseOnlyReport};
use super::roce_event::RoceEvent;
use super::series::Bins;
use super::telemetry::IntHopEvent;

/// Responses, NAKs and CNPs whose request flow was never seen.
#[derive(Debug, Clone)]
pub(crate) struct ResponseOnly {
    /// The report row, counted as the responses come; its `files` are
    /// named from `files` when the report is built.
    pub row: ResponseOnlyReport,
    pub files: Vec<FileUse>,
}

pub(crate) struct FlowTable {
    pub flows: Vec<Flow>,
    by_request: HashMap<FlowKey, usize>,
    by_response: HashMap<FlowKey, usize>,
    by_pair: HashMap<(IpAddr, IpAddr), Vec<usize>>,
    pub response_only: Vec<ResponseOnly>,
    by_response_only: HashMap<FlowKey, usize>,
    n_files: usize,
    pub opts: FlowOptions,
    pub ce_bins: Option<Bins>,
    pub cnp_bins: Option<Bins>,
    pub first_ts: Option<u64>,
    pub last_ts: Option<u64>,
    /// The last request and response keys looked up: consecutive packets
    /// mostly belong to the same flow, and a compare is cheaper than a hash.
    last_request: Option<(FlowKey, usize)>,
    last_response: Option<(FlowKey, usize)>,
}

impl FlowTable {
    pub fn new(n_files: usize, opts: FlowOptions) -> FlowTable {
        FlowTable {
            flows: Vec::new(),
            by_request: HashMap::new(),
            by_response: HashMap::new(),
            by_pair: HashMap::new(),
            response_only: Vec::new(),
            by_response_only: HashMap::new(),
            n_files,
            opts,
            ce_bins: opts.series.then(Bins::default),
            cnp_bins: opts.series.then(Bins::default),
            first_ts: None,
            last_ts: None,
            last_request: None,
            last_response: None,
        }
    }

    pub fn event(&mut self, ev: &RoceEvent) {
        self.first_ts.get_or_insert(ev.ts_ns);
        self.last_ts = Some(self.last_ts.map_or(ev.ts_ns, |t| t.max(ev.ts_ns)));
        if ev.ce() {
            if let Some(b) = &mut self.ce_bins {
                b.add(ev.ts_ns, 1.0);
            }
        }
        match ev.opcode.operation() {
            Some(Operation::Cnp) => {
                if let Some(b) = &mut self.cnp_bins {
                    b.add(ev.ts_ns, 1.0);
                }
                self.cnp(ev);
            }
            Some(op) if op.is_response() => self.response(ev),
            _ => self.request(ev),
        }
    }

    /// A switch's record on the frame whose event came just before: a
    /// request's goes to its flow, an echo to the flow its ACK was paired
    /// with (none if it was not).
    pub fn int_hop(&mut self, ev: &IntHopEvent) {
        let key = FlowKey {
            src: ev.src,
            dst: ev.dst,
            qpn: ev.dqpn,
        };
        let index = if ev.echo {
            &self.by_response
        } else {
            &self.by_request
        };
        if let Some(&i) = index.get(&key) {
            self.flows[i]
                .telemetry
                .get_or_insert_with(Box::default)
                .record(ev);
        }
    }

    fn key(ev: &RoceEvent) -> FlowKey {
        FlowKey {
            src: ev.src,
            dst: ev.dst,
            qpn: ev.dqpn,
        }
    }

    fn request(&mut self, ev: &RoceEvent) {
        let key = Self::key(ev);
        let cached = self.last_request.filter(|(k, _)| *k == key).map(|(_, i)| i);
        let i = match cached.or_else(|| self.by_request.get(&key).copied()) {
            Some(i) => i,
            None => {
                let i = self.flows.len();
                self.flows.push(Flow::new(ev, self.n_files, &self.opts));
                self.by_request.insert(key, i);
                self.by_pair.entry((ev.src, ev.dst)).or_default().push(i);
                i
            }
        };
        self.last_request = Some((key, i));
        let opts = self.opts;
        self.flows[i].on_request(ev, &opts);
    }

    /// The flow a response (or CNP) from `ev.src` to requester QPN
    /// `ev.dqpn` belongs to, learning the pairing when it is new.
    fn pair(&mut self, ev: &RoceEvent, use_psn: bool) -> Option<usize> {
        let key = Self::key(ev);
        if let Some((k, i)) = self.last_response {
            if k == key {
                return Some(i);
            }
        }
        if let Some(&i) = self.by_response.get(&key) {
            self.last_response = Some((key, i));
            return Some(i);
        }
        let cands: Vec<usize> = self
            .by_pair
            .get(&(ev.dst, ev.src))?
            .iter()
            .copied()
            .filter(|&i| {
                let f = &self.flows[i];
                // UC has no responses, but its requesters get CNPs.
                f.requester_qpn.is_none()
                    && (matches!(f.transport, Transport::Rc | Transport::Xrc)
                        || (!use_psn && f.transport == Transport::Uc))
            })
            .collect();
        let by_port: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&i| self.flows[i].sport == ev.sport)
            .collect();
        let pool = if by_port.is_empty() { &cands } else { &by_port };
        let chosen = if pool.len() == 1 {
            Some(pool[0])
        } else {
            let by_psn: Vec<usize> = if use_psn {
                pool.iter()
                    .copied()
                    .filter(|&i| self.flows[i].psn_window_contains(ev.psn))
                    .collect()
            } else {
                Vec::new()
            };
            match by_psn.len() {
                0 => None,
                // Several flows could have sent this PSN: the one heard from last.
                _ => by_psn
                    .iter()
                    .copied()
                    .max_by_key(|&i| (self.flows[i].last_ts, std::cmp::Reverse(i))),
            }
        };
        let i = chosen?;
        let f = &mut self.flows[i];
        f.requester_qpn = Some(ev.dqpn);
        // A CNP's source port is the NP's choice (0 on ConnectX-4 Lx), not
        // the port of the flow's responses.
        if use_psn {
            f.response_sport = Some(ev.sport);
        }
        self.by_response.insert(key, i);
        Some(i)
    }

    fn response(&mut self, ev: &RoceEvent) {
        match self.pair(ev, true) {
            Some(i) => {
                let opts = self.opts;
                self.flows[i].on_response(ev, &opts);
            }
            None => self.orphan(ev),
        }
    }

    fn cnp(&mut self, ev: &RoceEvent) {
        let key = Self::key(ev);
        let to_requester = self.by_response.get(&key).copied();
        let to_responder = self.by_request.get(&key).copied();
        let target = match (to_requester, to_responder) {
            (Some(a), Some(b)) => {
                // The same QP is requester of one flow and responder of another.
                if !self.flows[a].has_pending_ce(true) && self.flows[b].has_pending_ce(false) {
                    Some((b, false))
                } else {
                    Some((a, true))
                }
            }
            (Some(a), None) => Some((a, true)),
            (None, Some(b)) => Some((b, false)),
            // A CNP carries no PSN; pair it only by port or as the only candidate.
            (None, None) => self.pair(ev, false).map(|a| (a, true)),
        };
        match target {
            Some((i, toward_requester)) => self.flows[i].on_cnp(ev, toward_requester),
            None => self.orphan(ev),
        }
    }

    fn orphan(&mut self, ev: &RoceEvent) {
        let key = Self::key(ev);
        let n_files = self.n_files;
        let i = *self.by_response_only.entry(key).or_insert_with(|| {
            self.response_only.push(ResponseOnly {
                row: ResponseOnlyReport {
                    src: key.src.to_string(),
                    dst: key.dst.to_string(),
                    requester_qpn: key.qpn,
                    sport: ev.sport,
                    files: Vec::new(),
                    first_frame: FrameRef::of(ev),
                    packets: 0,
                    bytes: 0,
                    acks: 0,
                    naks: 0,
                    cnps: 0,
                    read_responses: 0,
                },
                files: vec![FileUse::default(); n_files],
            });
            self.response_only.len() - 1
        });
        let r = &mut self.response_only[i];
        r.row.packets += 1;
        r.row.bytes += u64::from(ev.wire_len);
        r.files[ev.file as usize].response_packets += 1;
        r.files[ev.file as usize].bytes += u64::from(ev.wire_len);
        match ev.opcode.operation() {
            Some(Operation::Cnp) => r.row.cnps += 1,
            Some(Operation::Acknowledge | Operation::AtomicAcknowledge) => {
                if ev.aeth.is_some_and(|a| a.syndrome.is_ack()) {
                    r.row.acks += 1;
                } else {
                    r.row.naks += 1;
                }
            }
            _ => r.row.read_responses += 1,
        }
    }

    pub fn finish(&mut self) {
        for f in &mut self.flows {
            f.finish();
        }
    }
}
