//! Connection set-up: how the QPs of the request flows were connected,
//! found in the capture itself.
//!
//! ```text
//!  rdma_cm  (MADs to QP1 over RoCE)            socket (perftest, TCP port 18515)
//!   active ── REQ ×(1 + retries) ─▶ passive      client ── SYN ─▶ server
//!          ◀─ MRA* ─ REP | REJ ───                       ◀─ SYN-ACK ─ ...
//!          ── RTU ─────────────▶  established            ── keys ─▶ ◀─ keys ─  established
//!  REQ: active QPN, starting PSN; REP: passive's     keys: each side's QPN and PSN
//! ```
//!
//! One [`SetupReport`] per connection attempt: an RDMA CM exchange is keyed
//! by the two addresses and the active side's communication ID (a resent
//! REQ keeps it, and its transaction ID); a perftest exchange by its TCP four-tuple.
//! Each set-up announces the QPNs and starting PSNs of both sides; a
//! request flow whose (source, destination, destination QPN) is one side's
//! send direction was set up by it ([`attach`]). A REQ never answered and a
//! REJ are findings.

use std::collections::BTreeMap;
use std::net::IpAddr;

use roce_capture::human::{duration_brief, plural};
use roce_codec::perftest::{self, KeyMessage};
use roce_codec::wire::cm::{self, CmMessage, CmRepr, RejReason, attr};
use roce_codec::wire::cma;
use roce_codec::wire::mad::MadRepr;
use roce_codec::{Frame, Net};

use super::model::{Finding, FrameRef, QpSetup, Report, SetupReport, Severity};

/// What one set-up frame said, kept small (it crosses threads).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SetupEvent {
    pub file: u16,
    pub frame: u64,
    pub ts_ns: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub what: SetupWhat,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum SetupWhat {
    Cm(CmSummary),
    Tcp {
        sport: u16,
        dport: u16,
        syn: bool,
        /// QPN and PSN of a perftest key message.
        keys: Option<(u32, u32)>,
    },
}

/// What the set-up table needs of a CM message (not its private data).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CmSummary {
    pub attribute_id: u16,
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// REQ and REP: the sender's QPN and starting PSN.
    pub qpn: u32,
    pub psn: u32,
    /// REQ: the service port, remote CM response timeout, max CM retries.
    pub port: Option<u16>,
    pub response_timeout: u8,
    pub max_cm_retries: u8,
    pub reason: Option<RejReason>,
}

impl CmSummary {
    fn of(m: &CmMessage) -> CmSummary {
        let mut c = CmSummary {
            attribute_id: m.attribute_id(),
            local_comm_id: m.local_comm_id(),
            remote_comm_id: m.remote_comm_id(),
            qpn: 0,
            psn: 0,
            port: None,
            response_timeout: 0,
            max_cm_retries: 0,
            reason: None,
        };
        match m {
            CmMessage::Req(q) => {
                (c.qpn, c.psn) = (q.local_qpn, q.starting_psn);
                c.port = cma::service_port(q.service_id);
                c.response_timeout = q.remote_cm_response_timeout;
                c.max_cm_retries = q.max_cm_retries;
            }
            CmMessage::Rep(p) => (c.qpn, c.psn) = (p.local_qpn, p.starting_psn),
            CmMessage::Rej(j) => c.reason = Some(j.reason),
            _ => {}
        }
        c
    }
}

impl SetupEvent {
    fn frame_ref(&self) -> FrameRef {
        FrameRef {
            file: self.file,
            frame: self.frame,
        }
    }
}

/// The set-up frame `f` is: a CM MAD in a RoCE packet, or TCP to or from
/// perftest's port.
pub(crate) fn decode(f: &Frame<'_>, file: u16, frame: u64, ts_ns: u64) -> Option<SetupEvent> {
    let ip = f.ip()?;
    let what = match &f.net {
        Net::RoceV2 { ib: Some(ib), .. } => {
            let mad = MadRepr::payload_of(ib)?;
            SetupWhat::Cm(CmSummary::of(&CmRepr::parse(mad).ok()?.message))
        }
        Net::Tcp { tcp, payload, .. }
            if tcp.src_port == perftest::PORT || tcp.dst_port == perftest::PORT =>
        {
            SetupWhat::Tcp {
                sport: tcp.src_port,
                dport: tcp.dst_port,
                syn: tcp.has(roce_codec::wire::tcp::flags::SYN),
                keys: KeyMessage::parse(payload).ok().map(|k| (k.qpn, k.psn)),
            }
        }
        _ => return None,
    };
    Some(SetupEvent {
        file,
        frame,
        ts_ns,
        src: ip.src(),
        dst: ip.dst(),
        what,
    })
}

/// One connection attempt being followed.
struct Attempt {
    report: SetupReport,
    /// Requests (REQs, SYNs) by time, for the retry interval.
    request_times: Vec<u64>,
    /// Whether the passive side answered at all (REP, REJ, MRA; SYN-ACK).
    answered: bool,
    /// Frame of the first unanswered request, for the finding.
    req_frame: FrameRef,
}

/// Set-up attempts in the order their first frame came.
#[derive(Default)]
pub(crate) struct SetupTable {
    attempts: Vec<Attempt>,
    /// (active address, passive address, active comm ID) → attempt.
    cm: BTreeMap<(IpAddr, IpAddr, u32), usize>,
    /// (client address, client port, server address) → attempt.
    tcp: BTreeMap<(IpAddr, u16, IpAddr), usize>,
}

fn new_report(
    method: &'static str,
    e: &SetupEvent,
    active: IpAddr,
    passive: IpAddr,
) -> SetupReport {
    SetupReport {
        id: 0,
        method,
        active: active.to_string(),
        passive: passive.to_string(),
        port: None,
        first_frame: e.frame_ref(),
        start_ts_ns: e.ts_ns,
        outcome: "incomplete",
        established_ns: None,
        active_qpn: None,
        active_psn: None,
        passive_qpn: None,
        passive_psn: None,
        requests: 0,
        retries: 0,
        retry_interval_ns: None,
        mras: 0,
        reject_reason: None,
        reject_reason_name: None,
        cm_response_timeout_ns: None,
        max_cm_retries: None,
        key_messages: 0,
        qps: Vec::new(),
    }
}

impl SetupTable {
    pub(crate) fn event(&mut self, e: &SetupEvent) {
        match e.what {
            SetupWhat::Cm(m) => self.cm_event(e, &m),
            SetupWhat::Tcp {
                sport,
                dport,
                syn,
                keys,
            } => self.tcp_event(e, sport, dport, syn, keys),
        }
    }

    fn cm_event(&mut self, e: &SetupEvent, m: &CmSummary) {
        // The active side's key: its own address and ID on what it sends,
        // the peer's address and the remote ID on what it receives.
        let key = match m.attribute_id {
            attr::REQ | attr::RTU => (e.src, e.dst, m.local_comm_id),
            attr::REP | attr::REJ | attr::MRA => (e.dst, e.src, m.remote_comm_id),
            _ => return,
        };
        let i = match (self.cm.get(&key), m.attribute_id) {
            (Some(&i), _) => i,
            (None, attr::REQ) => {
                self.attempts.push(Attempt {
                    report: new_report("rdma_cm", e, e.src, e.dst),
                    request_times: Vec::new(),
                    answered: false,
                    req_frame: e.frame_ref(),
                });
                self.cm.insert(key, self.attempts.len() - 1);
                self.attempts.len() - 1
            }
            // An answer to a REQ the capture does not hold.
            (None, _) => return,
        };
        let a = &mut self.attempts[i];
        let r = &mut a.report;
        match m.attribute_id {
            attr::REQ => {
                r.requests += 1;
                a.request_times.push(e.ts_ns);
                r.active_qpn = Some(m.qpn);
                r.active_psn = Some(m.psn);
                r.port = m.port;
                r.cm_response_timeout_ns = Some(cm::cm_timeout_ns(m.response_timeout));
                r.max_cm_retries = Some(m.max_cm_retries);
            }
            attr::MRA => {
                a.answered = true;
                r.mras += 1;
            }
            attr::REP => {
                a.answered = true;
                r.passive_qpn = Some(m.qpn);
                r.passive_psn = Some(m.psn);
                if r.outcome == "incomplete" {
                    r.outcome = "no_rtu";
                }
            }
            attr::REJ => {
                let reason = m.reason.unwrap_or(RejReason::Unknown(0));
                a.answered = true;
                r.outcome = "rejected";
                r.reject_reason = Some(reason.code());
                r.reject_reason_name = Some(reason.name());
                a.req_frame = e.frame_ref();
            }
            attr::RTU if r.established_ns.is_none() => {
                r.outcome = "established";
                r.established_ns = Some(e.ts_ns - r.start_ts_ns);
            }
            _ => {}
        }
    }

    fn tcp_event(
        &mut self,
        e: &SetupEvent,
        sport: u16,
        dport: u16,
        syn: bool,
        keys: Option<(u32, u32)>,
    ) {
        let from_client = dport == perftest::PORT;
        let key = if from_client {
            (e.src, sport, e.dst)
        } else {
            (e.dst, dport, e.src)
        };
        let i = match self.tcp.get(&key) {
            Some(&i) => i,
            None => {
                let (client, server) = if from_client {
                    (e.src, e.dst)
                } else {
                    (e.dst, e.src)
                };
                let mut r = new_report("socket", e, client, server);
                r.port = Some(perftest::PORT);
                self.attempts.push(Attempt {
                    report: r,
                    request_times: Vec::new(),
                    answered: false,
                    req_frame: e.frame_ref(),
                });
                self.tcp.insert(key, self.attempts.len() - 1);
                self.attempts.len() - 1
            }
        };
        let a = &mut self.attempts[i];
        let r = &mut a.report;
        if syn && from_client {
            r.requests += 1;
            a.request_times.push(e.ts_ns);
        } else if !from_client {
            a.answered = true;
        }
        if let Some((qpn, psn)) = keys {
            r.key_messages += 1;
            let (q, p) = if from_client {
                (&mut r.active_qpn, &mut r.active_psn)
            } else {
                (&mut r.passive_qpn, &mut r.passive_psn)
            };
            if q.is_none() {
                *q = Some(qpn);
                *p = Some(psn);
            }
            if r.established_ns.is_none() && r.active_qpn.is_some() && r.passive_qpn.is_some() {
                r.outcome = "established";
                r.established_ns = Some(e.ts_ns - r.start_ts_ns);
            }
        }
    }

    /// The finished reports, in the order their first frame came.
    pub(crate) fn finish(self) -> Vec<(SetupReport, bool, FrameRef)> {
        self.attempts
            .into_iter()
            .enumerate()
            .map(|(id, mut a)| {
                let r = &mut a.report;
                r.id = id;
                r.retries = r.requests.saturating_sub(1);
                r.retry_interval_ns = match a.request_times[..] {
                    [t0, t1, ..] => Some(t1 - t0),
                    _ => None,
                };
                if !a.answered && r.requests > 0 && r.outcome == "incomplete" {
                    r.outcome = "unanswered";
                }
                (a.report, a.answered, a.req_frame)
            })
            .collect()
    }
}

/// Puts the set-ups into the report: each flow learns which set-up made
/// it, and a REQ never answered or a REJ becomes a finding.
pub(crate) fn attach(report: &mut Report, setups: Vec<(SetupReport, bool, FrameRef)>) {
    let mut findings = Vec::new();
    for (mut s, _, frame) in setups {
        let sides = [
            (&s.active, &s.passive, s.passive_qpn),
            (&s.passive, &s.active, s.active_qpn),
        ];
        for (src, dst, dqpn) in sides {
            for q in report.qps.iter_mut() {
                if Some(q.dqpn) == dqpn && &q.src == src && &q.dst == dst && q.setup.is_none() {
                    q.setup = Some(QpSetup {
                        setup: s.id,
                        method: s.method,
                        established_ns: s.established_ns,
                    });
                    s.qps.push(q.id);
                }
            }
        }
        if let Some(f) = setup_finding(&s, frame) {
            findings.push(f);
        }
        report.setups.push(s);
    }
    report.findings.extend(findings);
    report.findings.sort_by_key(|f| f.severity);
}

fn retries(n: u64) -> String {
    if n == 1 {
        "1 retry".to_string()
    } else {
        format!("{n} retries")
    }
}

fn setup_finding(s: &SetupReport, frame: FrameRef) -> Option<Finding> {
    let who = format!("{} -> {}", s.active, s.passive);
    let (rule, message) = match (s.method, s.outcome) {
        ("rdma_cm", "unanswered") => {
            let interval = s
                .retry_interval_ns
                .map(|i| format!(", the first two {} apart", duration_brief(i)))
                .unwrap_or_default();
            let timeout = s.cm_response_timeout_ns.map_or(String::new(), |t| {
                format!(
                    "; the REQ's remote CM response timeout is {} (4.096 µs × 2^n) and it allows {}",
                    duration_brief(t),
                    retries(s.max_cm_retries.unwrap_or(0).into())
                )
            });
            (
                "cm_req_unanswered",
                format!(
                    "{who}: CM REQ for QP {:#x} never answered (no REP, REJ or MRA): sent {} ({}){interval}{timeout}",
                    s.active_qpn.unwrap_or(0),
                    plural(s.requests, "time"),
                    retries(s.retries),
                ),
            )
        }
        (_, "rejected") => (
            "cm_rejected",
            format!(
                "{who}: CM REQ for QP {:#x} rejected: reason {} ({})",
                s.active_qpn.unwrap_or(0),
                s.reject_reason.unwrap_or(0),
                s.reject_reason_name.unwrap_or(RejReason::Unknown(0).name())
            ),
        ),
        _ => return None,
    };
    Some(Finding {
        severity: Severity::Error,
        rule,
        qp: None,
        file: None,
        frames: vec![frame],
        message,
    })
}
