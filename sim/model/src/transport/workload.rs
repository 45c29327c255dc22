//! Traffic generators: perftest-like bandwidth tests and explicit message
//! lists, turned into work requests on RC QPs.
//!
//! perftest's bandwidth loop, which [`Workload`] reproduces per QP:
//!
//! ```text
//!   post until tx_depth WRs are outstanding (or iters posted / -D over)
//!   loop: poll the CQ; for each completion post one more WR
//!   ib_send_bw server: pre-post rx_depth receives, repost one per receive
//! ```
//! The network side calls [`Workload::drive_requester`] for each client QP
//! after anything happened to it (a packet arrived, a timer fired) and at
//! the time it returns, and [`Workload::drive_responder`] for the server
//! QPs likewise.

use super::collective::Collective;
use super::{MAX_MSG_LEN, RcQp, Verb, WcStatus, WorkRequest};
use crate::time::Ps;
use thiserror::Error;

/// The perftest binary being imitated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PerftestOp {
    /// `ib_write_bw`: RDMA WRITE.
    WriteBw,
    /// `ib_send_bw`: SEND; the server must keep receives posted.
    SendBw,
    /// `ib_read_bw`: RDMA READ, limited by `max_rd_atomic` outstanding.
    ReadBw,
}

impl PerftestOp {
    pub fn verb(self) -> Verb {
        match self {
            PerftestOp::WriteBw => Verb::Write,
            PerftestOp::SendBw => Verb::Send,
            PerftestOp::ReadBw => Verb::Read,
        }
    }

    /// `ib_write_bw`, `ib_send_bw`, `ib_read_bw` (or `write`, `send`, `read`).
    pub fn from_name(name: &str) -> Option<PerftestOp> {
        match name {
            "ib_write_bw" | "write" => Some(PerftestOp::WriteBw),
            "ib_send_bw" | "send" => Some(PerftestOp::SendBw),
            "ib_read_bw" | "read" => Some(PerftestOp::ReadBw),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PerftestOp::WriteBw => "ib_write_bw",
            PerftestOp::SendBw => "ib_send_bw",
            PerftestOp::ReadBw => "ib_read_bw",
        }
    }
}

/// `ib_{write,send,read}_bw` options. Defaults are perftest's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerftestSpec {
    pub op: PerftestOp,
    /// `-s`: message size in bytes (default 65536).
    pub size: u64,
    /// `-q`: number of QPs (default 1).
    pub qps: u32,
    /// `-n`: messages per QP (default 5000). Ignored with `duration`.
    pub iters: u64,
    /// `-D`: post for this long instead of `iters` messages.
    pub duration: Option<Ps>,
    /// `-t`: WRs kept outstanding per QP (default 128; perftest lowers it
    /// to `iters` when fewer messages are sent).
    pub tx_depth: u32,
    /// `-r`: receives the `ib_send_bw` server keeps posted (default 512).
    pub rx_depth: u32,
    /// `--tclass`: the GRH traffic class (IP TOS byte) of every QP.
    pub tclass: u8,
    /// `--flow_label`: 0 derives the label (and UDP port) from the QPNs.
    pub flow_label: u32,
}

impl PerftestSpec {
    pub fn new(op: PerftestOp) -> PerftestSpec {
        PerftestSpec {
            op,
            size: 65536,
            qps: 1,
            iters: 5000,
            duration: None,
            tx_depth: 128,
            rx_depth: 512,
            tclass: 0,
            flow_label: 0,
        }
    }
}

/// One message of an explicit list: post `verb` of `len` bytes on QP
/// index `qp` at time `at` (later if the send queue is full then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageSpec {
    pub at: Ps,
    pub qp: u32,
    pub verb: Verb,
    pub len: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkloadSpec {
    Perftest(PerftestSpec),
    /// Messages at given times; each QP posts its own in time order, at
    /// most `tx_depth` outstanding. A SEND list needs receives at the
    /// server: `rx_depth` are kept posted.
    Messages {
        qps: u32,
        tx_depth: u32,
        rx_depth: u32,
        tclass: u8,
        flow_label: u32,
        /// Empty in a [`Workload`]'s spec: it keeps each QP's own.
        messages: Vec<MessageSpec>,
    },
    /// An NCCL collective ([`Workload::collective`]): its QP pairs are its
    /// network connections' QPs, sending end as client.
    Collective {
        tclass: u8,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorkloadError {
    #[error("{field} = {value} is out of range: expected {expected}")]
    OutOfRange {
        field: &'static str,
        value: u64,
        expected: &'static str,
    },
    #[error("message {index} names qp {qp}, but the workload has {qps} QPs (0..{qps})")]
    NoSuchQp { index: usize, qp: u32, qps: u32 },
    #[error("a collective workload is made by Workload::collective")]
    NotACollective,
}

/// What one QP of a workload achieved.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QpWorkloadStats {
    pub posted: u64,
    pub completed: u64,
    /// Payload bytes of the successful completions.
    pub bytes_completed: u64,
    pub failed: u64,
    /// The first error status seen, if any.
    pub first_error: Option<WcStatus>,
    pub first_post_at: Option<Ps>,
    pub last_completion_at: Option<Ps>,
}

impl QpWorkloadStats {
    /// Goodput: payload bytes completed successfully, in bits per second,
    /// over the time from the first post to the last completion.
    pub fn goodput_bps(&self) -> f64 {
        match (self.first_post_at, self.last_completion_at) {
            (Some(a), Some(b)) if b > a => {
                self.bytes_completed as f64 * 8.0 / (b - a).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct PerQp {
    stats: QpWorkloadStats,
    outstanding: u64,
    started_at: Option<Ps>,
    /// No more work requests will be posted.
    posting_done: bool,
    /// This QP's messages (message lists), in time order, and the next one.
    msgs: Vec<MessageSpec>,
    next_msg: usize,
    /// Receives the server side must post in total (`None`: unbounded).
    recvs_needed: Option<u64>,
    recvs_posted: u64,
}

/// A running workload over `qps()` QP pairs.
#[derive(Debug, Clone)]
pub struct Workload {
    spec: WorkloadSpec,
    per_qp: Vec<PerQp>,
    coll: Option<Box<Collective>>,
}

fn range_check(
    field: &'static str,
    value: u64,
    ok: bool,
    expected: &'static str,
) -> Result<(), WorkloadError> {
    if ok {
        Ok(())
    } else {
        Err(WorkloadError::OutOfRange {
            field,
            value,
            expected,
        })
    }
}

impl Workload {
    pub fn new(mut spec: WorkloadSpec) -> Result<Workload, WorkloadError> {
        let per_qp = match &mut spec {
            WorkloadSpec::Perftest(p) => {
                range_check(
                    "qps",
                    p.qps.into(),
                    (1..=65536).contains(&p.qps),
                    "1..=65536",
                )?;
                range_check(
                    "size",
                    p.size,
                    p.size <= MAX_MSG_LEN,
                    "0..=2147483648 (2^31, max_msg_sz)",
                )?;
                range_check("tx_depth", p.tx_depth.into(), p.tx_depth >= 1, "at least 1")?;
                range_check("rx_depth", p.rx_depth.into(), p.rx_depth >= 1, "at least 1")?;
                match p.duration {
                    Some(d) => range_check("duration", d.as_ps(), d > Ps::ZERO, "more than 0")?,
                    None => range_check("iters", p.iters, p.iters >= 1, "at least 1")?,
                }
                let recvs_needed = match (p.op, p.duration) {
                    (PerftestOp::SendBw, None) => Some(p.iters),
                    (PerftestOp::SendBw, Some(_)) => None,
                    _ => Some(0),
                };
                vec![
                    PerQp {
                        recvs_needed,
                        ..PerQp::default()
                    };
                    p.qps as usize
                ]
            }
            WorkloadSpec::Messages {
                qps,
                tx_depth,
                rx_depth,
                messages,
                ..
            } => {
                range_check("qps", (*qps).into(), (1..=65536).contains(qps), "1..=65536")?;
                range_check("tx_depth", (*tx_depth).into(), *tx_depth >= 1, "at least 1")?;
                range_check("rx_depth", (*rx_depth).into(), *rx_depth >= 1, "at least 1")?;
                let mut per_qp = vec![PerQp::default(); *qps as usize];
                // Each QP keeps its own list, sized to it; the spec's goes
                // (a fabric run has one workload per flow, 100,000 of them).
                let messages = std::mem::take(messages);
                let mut counts = vec![0usize; *qps as usize];
                for m in &messages {
                    if let Some(n) = counts.get_mut(m.qp as usize) {
                        *n += 1;
                    }
                }
                for (q, n) in per_qp.iter_mut().zip(counts) {
                    q.msgs.reserve_exact(n);
                }
                for (index, m) in messages.iter().enumerate() {
                    if m.qp >= *qps {
                        return Err(WorkloadError::NoSuchQp {
                            index,
                            qp: m.qp,
                            qps: *qps,
                        });
                    }
                    range_check(
                        "len",
                        m.len,
                        m.len <= MAX_MSG_LEN,
                        "0..=2147483648 (2^31, max_msg_sz)",
                    )?;
                    per_qp[m.qp as usize].msgs.push(*m);
                }
                for q in &mut per_qp {
                    // Stable: equal times keep list order.
                    q.msgs.sort_by_key(|m| m.at);
                    let recvs = q.msgs.iter().filter(|m| m.verb.consumes_recv_wqe()).count();
                    q.recvs_needed = Some(recvs as u64);
                }
                per_qp
            }
            WorkloadSpec::Collective { .. } => return Err(WorkloadError::NotACollective),
        };
        Ok(Workload {
            spec,
            per_qp,
            coll: None,
        })
    }

    /// A workload that runs an NCCL collective on its QP pairs.
    pub fn collective(c: Collective, tclass: u8) -> Workload {
        Workload {
            spec: WorkloadSpec::Collective { tclass },
            per_qp: Vec::new(),
            coll: Some(Box::new(c)),
        }
    }

    /// The collective, if this workload is one.
    pub fn as_collective(&self) -> Option<&Collective> {
        self.coll.as_deref()
    }

    pub fn as_collective_mut(&mut self) -> Option<&mut Collective> {
        self.coll.as_deref_mut()
    }

    /// A QP (world index) the collective has work for now; see
    /// [`Collective::take_wake`].
    #[inline]
    pub fn take_wake(&mut self) -> Option<u32> {
        self.coll.as_mut().and_then(|c| c.take_wake())
    }

    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// Number of QP pairs the workload runs on.
    pub fn qps(&self) -> u32 {
        match &self.coll {
            Some(c) => c.qps(),
            None => self.per_qp.len() as u32,
        }
    }

    /// The GRH traffic class (TOS byte) every QP uses.
    pub fn tclass(&self) -> u8 {
        match &self.spec {
            WorkloadSpec::Perftest(p) => p.tclass,
            WorkloadSpec::Messages { tclass, .. } => *tclass,
            WorkloadSpec::Collective { tclass } => *tclass,
        }
    }

    /// The GRH flow label (0 = derived from the QPNs).
    pub fn flow_label(&self) -> u32 {
        match &self.spec {
            WorkloadSpec::Perftest(p) => p.flow_label,
            WorkloadSpec::Messages { flow_label, .. } => *flow_label,
            // NCCL sets no flow label (facts §4.2).
            WorkloadSpec::Collective { .. } => 0,
        }
    }

    /// Reaps the completions of client QP `i` and posts what is due.
    /// Returns when to call again if nothing happens to the QP before
    /// (a scheduled message or the end of `-D`), else `None`.
    ///
    /// Like perftest, a QP stops posting at its first error completion.
    pub fn drive_requester(&mut self, i: usize, qp: &mut RcQp, now: Ps) -> Option<Ps> {
        if let Some(c) = &mut self.coll {
            return c.drive_client(i, qp, now);
        }
        let q = &mut self.per_qp[i];
        while let Some(c) = qp.poll_completion() {
            q.outstanding = q.outstanding.saturating_sub(1);
            q.stats.completed += 1;
            if c.status == WcStatus::Success {
                q.stats.bytes_completed += c.bytes;
            } else {
                q.stats.failed += 1;
                q.stats.first_error.get_or_insert(c.status);
            }
            q.stats.last_completion_at = Some(c.at);
        }
        if q.stats.first_error.is_some() {
            q.posting_done = true;
        }
        let start = *q.started_at.get_or_insert(now);
        let mut post = |q: &mut PerQp, verb: Verb, len: u64| -> bool {
            let wr = WorkRequest::new(q.stats.posted, verb, len);
            if qp.post_send(wr).is_err() {
                return false;
            }
            q.stats.posted += 1;
            q.outstanding += 1;
            q.stats.first_post_at.get_or_insert(now);
            true
        };
        match &self.spec {
            WorkloadSpec::Perftest(p) => {
                let end = p.duration.map(|d| start + d);
                // perftest lowers tx_depth to iters when fewer are sent.
                let depth = match end {
                    Some(_) => u64::from(p.tx_depth),
                    None => u64::from(p.tx_depth).min(p.iters),
                };
                if end.is_some_and(|e| now >= e) || (end.is_none() && q.stats.posted >= p.iters) {
                    q.posting_done = true;
                }
                while !q.posting_done && q.outstanding < depth {
                    if !post(q, p.op.verb(), p.size) {
                        break;
                    }
                    if end.is_none() && q.stats.posted >= p.iters {
                        q.posting_done = true;
                    }
                }
                end.filter(|&e| e > now && !q.posting_done)
            }
            WorkloadSpec::Messages { tx_depth, .. } => {
                while !q.posting_done
                    && q.next_msg < q.msgs.len()
                    && q.msgs[q.next_msg].at <= now
                    && q.outstanding < u64::from(*tx_depth)
                {
                    let m = q.msgs[q.next_msg];
                    if !post(q, m.verb, m.len) {
                        break;
                    }
                    q.next_msg += 1;
                }
                if q.next_msg == q.msgs.len() {
                    q.posting_done = true;
                }
                if q.posting_done {
                    None
                } else {
                    q.msgs.get(q.next_msg).map(|m| m.at).filter(|&at| at > now)
                }
            }
            WorkloadSpec::Collective { .. } => None,
        }
    }

    /// Keeps the server QP `i` supplied with receive WQEs: up to
    /// `rx_depth` posted, and in total as many as messages will need them
    /// (perftest's `ib_send_bw` server pre-posts and reposts per receive).
    pub fn drive_responder(&mut self, i: usize, qp: &mut RcQp, now: Ps) {
        let rx_depth = match (&self.spec, &mut self.coll) {
            (_, Some(c)) => return c.drive_server(i, qp, now),
            (WorkloadSpec::Perftest(p), _) => p.rx_depth,
            (WorkloadSpec::Messages { rx_depth, .. }, _) => *rx_depth,
            (WorkloadSpec::Collective { .. }, None) => return,
        };
        let q = &mut self.per_qp[i];
        let room = u64::from(rx_depth.saturating_sub(qp.rq_len()));
        let want = match q.recvs_needed {
            Some(n) => room.min(n - q.recvs_posted),
            None => room,
        };
        if want > 0 {
            qp.post_recv(want as u32);
            q.recvs_posted += want;
        }
    }

    /// Whether QP `i` has posted everything and seen every completion.
    pub fn qp_done(&self, i: usize) -> bool {
        if let Some(c) = &self.coll {
            return c.is_done();
        }
        let q = &self.per_qp[i];
        q.posting_done && q.outstanding == 0
    }

    pub fn is_done(&self) -> bool {
        if let Some(c) = &self.coll {
            return c.is_done();
        }
        (0..self.per_qp.len()).all(|i| self.qp_done(i))
    }

    pub fn stats(&self, i: usize) -> &QpWorkloadStats {
        match &self.coll {
            Some(c) => c.stats(i),
            None => &self.per_qp[i].stats,
        }
    }
}
