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

use super::{RcQp, Verb, WcStatus};
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
        messages: Vec<MessageSpec>,
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

/// A running workload over `qps()` QP pairs.
#[derive(Debug, Clone)]
pub struct Workload {
    spec: WorkloadSpec,
    stats: Vec<QpWorkloadStats>,
}

impl Workload {
    pub fn new(spec: WorkloadSpec) -> Result<Workload, WorkloadError> {
        let qps = match &spec {
            WorkloadSpec::Perftest(p) => p.qps,
            WorkloadSpec::Messages { qps, .. } => *qps,
        };
        Ok(Workload {
            spec,
            stats: vec![QpWorkloadStats::default(); qps as usize],
        })
    }

    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// Number of QP pairs the workload runs on.
    pub fn qps(&self) -> u32 {
        self.stats.len() as u32
    }

    /// The GRH traffic class (TOS byte) every QP uses.
    pub fn tclass(&self) -> u8 {
        match &self.spec {
            WorkloadSpec::Perftest(p) => p.tclass,
            WorkloadSpec::Messages { tclass, .. } => *tclass,
        }
    }

    /// The GRH flow label (0 = derived from the QPNs).
    pub fn flow_label(&self) -> u32 {
        match &self.spec {
            WorkloadSpec::Perftest(p) => p.flow_label,
            WorkloadSpec::Messages { flow_label, .. } => *flow_label,
        }
    }

    /// Reaps the completions of client QP `i` and posts what is due.
    /// Returns when to call again if nothing happens to the QP before
    /// (a scheduled message or the end of `-D`), else `None`.
    pub fn drive_requester(&mut self, i: usize, qp: &mut RcQp, now: Ps) -> Option<Ps> {
        let _ = (i, qp, now);
        None
    }

    /// Keeps the server QP `i` supplied with receive WQEs.
    pub fn drive_responder(&mut self, i: usize, qp: &mut RcQp, now: Ps) {
        let _ = (i, qp, now);
    }

    /// Whether QP `i` has posted everything and seen every completion.
    pub fn qp_done(&self, i: usize) -> bool {
        let _ = i;
        false
    }

    pub fn is_done(&self) -> bool {
        (0..self.stats.len()).all(|i| self.qp_done(i))
    }

    pub fn stats(&self, i: usize) -> &QpWorkloadStats {
        &self.stats[i]
    }
}
