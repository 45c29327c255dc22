//! # RC transport: queue pairs as sans-I/O state machines
//!
//! An [`RcQp`] is one end of a Reliable Connected queue pair: the
//! *requester* half (it segments work requests into packets, numbers them
//! with PSNs, retransmits go-back-N) and the *responder* half (it accepts
//! packets in PSN order, ACKs, NAKs, answers RDMA READs). It never touches
//! a clock, a socket or an event queue: the network side hands it packets
//! and the current time, and asks it what to send next.
//!
//! ```text
//!            host A                                        host B
//!   WorkRequest ─post_send─▶ ┌────────┐   IbRepr    ┌────────┐
//!                            │ RcQp a │ ──next_tx──▶│ RcQp b │ on_receive
//!   Completion ◀─poll_comp── │ req|rsp│◀──next_tx── │ req|rsp│ (ACK, NAK,
//!                            └────────┘             └────────┘  read resp.)
//!        next_timer / on_timer: ACK timeout, RNR wait
//! ```
//!
//! The network side drives each QP with five calls:
//!
//! * [`RcQp::next_tx`] when the NIC port can take a packet. Responses (ACK,
//!   NAK, RDMA READ responses) come first, then request packets. Under
//!   go-back-N, retransmissions and new data come from the same cursor.
//! * [`RcQp::tx_ready_at`] to learn when to ask again: `Some(t)` means
//!   "a packet is ready at `t`" (later than now only when the per-QP rate
//!   limiter holds it back, the seam for DCQCN), `None` means "nothing until
//!   a packet arrives, a timer fires or a work request is posted".
//! * [`RcQp::on_receive`] for every packet whose BTH DestQP is this QP.
//! * [`RcQp::next_timer`] / [`RcQp::on_timer`]: after *any* call that can
//!   change the QP, re-read `next_timer()` and (re)schedule. A stale timer
//!   event is harmless: `on_timer` acts only on deadlines that have passed.
//! * [`RcQp::poll_completion`] to collect work completions.
//!
//! Protocol rules follow Linux soft-RoCE (drivers/infiniband/sw/rxe) and
//! the verbs headers: segmentation (rxe_req.c), AckReq placement and the
//! unacked-PSN window of rxe (rxe_param.h `RXE_MAX_PKT_PER_ACK`,
//! `RXE_MAX_UNACKED_PSNS`; rxe_req.c), RNR timer codes
//! (include/rdma/ib_verbs.h `enum ib_rnr_timeout`), retry counting with
//! `retry_cnt = N` meaning exactly N retries
//! (drivers/infiniband/hw/hfi1/rc.c `hfi1_restart_rc`, hw/qib/qib_rc.c
//! `qib_restart_rc`), completion statuses (rdma-core libibverbs/verbs.h
//! `enum ibv_wc_status`), go-back-N and READ PSN reservation (rxe_resp.c
//! `check_psn`, rxe_comp.c, rxe_req.c `update_wqe_psn`). [`Workload`]
//! generates perftest-like traffic, [`collective`] NCCL's collectives as
//! nccl-tests runs them;
//! [`QpnAllocator`] and [`udp_sport`] give QPs their numbers and their UDP
//! source port (include/rdma/ib_verbs.h `rdma_get_udp_sport`).

pub mod collective;
mod counters;
pub mod loopback;
mod qp;
mod qpn;
mod workload;

pub use counters::{
    ClassCounts, NakCounts, PackedCounters, PacketClass, QpCounters, RewindCounts, TxRx,
};
pub use qp::{InboundMessage, RcQp, max_message_len};
pub use qpn::{DEFAULT_QPN_BASE, QpnAllocator, QpnError, udp_sport};
pub use workload::{
    MessageSpec, PerftestOp, PerftestSpec, QpWorkloadStats, Workload, WorkloadError, WorkloadSpec,
};

use crate::time::Ps;
use thiserror::Error;

/// Static per-QP settings, as `ibv_modify_qp` (INIT→RTR→RTS) and perftest
/// set them, and the NIC's own protocol constants (AckReq frequency,
/// unacknowledged-PSN window, ACK coalescing, segment size), which differ
/// between NICs: [`crate::world::NicProfile`] sets them per host.
/// [`QpConfig::default`] is what `ib_write_bw` would program with an RoCE
/// MTU of 4096, on Soft-RoCE's (rxe's) protocol constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpConfig {
    /// Path MTU in payload bytes: 256, 512, 1024, 2048 or 4096.
    pub pmtu: u32,
    /// Local ACK timeout exponent, 0..=31: 4.096 µs × 2^timeout; 0 = no timer.
    pub timeout: u8,
    /// Retries after an ACK timeout or a PSN-sequence-error NAK, 0..=7.
    /// 7 means seven retries, not infinity (the `restart_rc` of Linux
    /// drivers/infiniband/hw/hfi1/rc.c and hw/qib/qib_rc.c has no special
    /// case for it; only rxe's rxe_comp.c treats 7 as infinite).
    pub retry_cnt: u8,
    /// Retries after RNR NAKs, 0..=7; 7 = retry forever.
    pub rnr_retry: u8,
    /// RNR timer code (0..=31) this QP's responder puts into its RNR NAKs.
    pub min_rnr_timer: u8,
    /// RDMA READs this requester keeps outstanding at most (≥ 1).
    pub max_rd_atomic: u8,
    /// The requester sets AckReq on the last packet of every message and on
    /// the `ack_req_every`-th consecutive non-last packet sent without it
    /// (the counter restarts whenever AckReq is set). rxe's rule,
    /// `noack_pkts++ > RXE_MAX_PKT_PER_ACK (64)`, is 66. 0 = only on last
    /// packets.
    pub ack_req_every: u32,
    /// A request packet with PSN `p` goes out only while
    /// `p - oldest_unacked <= max_unacked_psns` (rxe's test with
    /// `RXE_MAX_UNACKED_PSNS` = 128, so at most 129 PSNs are in flight).
    /// [`QpConfig::SPEC_WINDOW`] is a NIC with no window of its own.
    pub max_unacked_psns: u32,
    /// A positive ACK queued behind another positive ACK that has not left
    /// yet replaces it (one cumulative ACK says what both said). rxe's
    /// responder does this in effect; a ConnectX responder ACKs every
    /// packet that asked for it.
    pub coalesce_acks: bool,
    /// Payload bytes per packet of a multi-packet message (and of READ
    /// responses); 0 = the path MTU, as the spec requires. The HPCC ns-3
    /// reference's NIC cuts every message into 1000-byte packets whatever
    /// the MTU; a non-zero value here reproduces that (at most `pmtu`).
    pub segment_bytes: u32,
    /// Send queue depth: work requests posted and not yet completed.
    pub max_send_wr: u32,
    /// Remote buffer the RETH of WRITE and READ requests points at.
    pub remote_va: u64,
    /// R_Key of that buffer.
    pub rkey: u32,
    /// Bytes a packet occupies on the wire beyond its IB part (BTH through
    /// ICRC): Ethernet, IP, UDP headers, FCS, preamble and IFG. Used only by
    /// the per-QP rate limiter. Default 66 = 14 + 20 + 8 + 4 + 20 (IPv4,
    /// untagged).
    pub wire_overhead: u32,
    /// Bytes the rate limiter counts per packet beyond its payload in place
    /// of the IB part and `wire_overhead`, where the NIC bills its frames
    /// at other than their real size (`world::profile`, the HPCC
    /// reference's 48); 0: the real frame.
    pub billed_header_bytes: u32,
    /// The rate limiter's gaps are rounded down to a multiple of this many
    /// picoseconds, as the wire's serialization times are (`[sim]
    /// tx_time_step`); 1: exact.
    pub tx_time_step_ps: u64,
}

impl Default for QpConfig {
    fn default() -> QpConfig {
        QpConfig {
            pmtu: 4096,
            // perftest's default timeout (14 ⇒ 67.1 ms) and retry counts.
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            // perftest programs min_rnr_timer 12 (0.64 ms).
            min_rnr_timer: 12,
            max_rd_atomic: 16,
            ack_req_every: 66,
            max_unacked_psns: 128,
            coalesce_acks: true,
            segment_bytes: 0,
            max_send_wr: 128,
            remote_va: 0x7f00_0000_0000,
            rkey: 0x1234,
            wire_overhead: 66,
            billed_header_bytes: 0,
            tx_time_step_ps: 1,
        }
    }
}

/// A [`QpConfig`] field out of range; names the field like the verbs
/// attribute it stands for.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error("{field} = {value} is out of range: expected {expected}")]
    OutOfRange {
        field: &'static str,
        value: u64,
        expected: &'static str,
    },
}

impl QpConfig {
    /// The unacknowledged-PSN window of a NIC that keeps none beyond the
    /// spec's: IBA lets a requester have at most 2^23 PSNs outstanding
    /// (half the 24-bit PSN space, so a responder can tell a duplicate from
    /// a new packet). This window stops new packets at 2^22 − 1, so that
    /// even a READ sent at its edge (reserving at most 2^21 PSNs, see
    /// [`max_message_len`]) keeps fewer than 2^23 outstanding. No run
    /// comes near it: 2^22 packets of 256 bytes are 1 GiB in flight.
    pub const SPEC_WINDOW: u32 = (1 << 22) - 1;

    /// Payload bytes per packet: `segment_bytes`, or the path MTU.
    pub fn segment(&self) -> u32 {
        if self.segment_bytes == 0 {
            self.pmtu
        } else {
            self.segment_bytes
        }
    }

    /// Checks every field against what a NIC accepts.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field, value: u64, expected| {
            Err(ConfigError::OutOfRange {
                field,
                value,
                expected,
            })
        };
        if !matches!(self.pmtu, 256 | 512 | 1024 | 2048 | 4096) {
            return bad("pmtu", self.pmtu.into(), "256, 512, 1024, 2048 or 4096");
        }
        if self.timeout > 31 {
            return bad("timeout", self.timeout.into(), "0..=31");
        }
        if self.retry_cnt > 7 {
            return bad("retry_cnt", self.retry_cnt.into(), "0..=7");
        }
        if self.rnr_retry > 7 {
            return bad("rnr_retry", self.rnr_retry.into(), "0..=7 (7 = infinite)");
        }
        if self.min_rnr_timer > 31 {
            return bad("min_rnr_timer", self.min_rnr_timer.into(), "0..=31");
        }
        if self.max_rd_atomic == 0 {
            return bad("max_rd_atomic", 0, "at least 1");
        }
        if self.max_unacked_psns == 0 || self.max_unacked_psns >= 1 << 22 {
            return bad(
                "max_unacked_psns",
                self.max_unacked_psns.into(),
                "1..2^22 (well inside the 2^23 PSN window)",
            );
        }
        if self.max_send_wr == 0 {
            return bad("max_send_wr", 0, "at least 1");
        }
        if self.segment_bytes > self.pmtu {
            return bad(
                "segment_bytes",
                self.segment_bytes.into(),
                "0 (the path MTU) or at most the path MTU",
            );
        }
        Ok(())
    }

    /// The local ACK timeout, 4.096 µs × 2^timeout, or `None` for timeout 0.
    pub fn ack_timeout(&self) -> Option<Ps> {
        (self.timeout != 0).then(|| Ps(4_096_000u64 << self.timeout))
    }
}

/// The operation of a work request (the vocabulary both tools share).
pub use roce_capture::figures::Verb;

/// One send work request. Immediate data, where the verb carries it, is
/// the low 32 bits of `wr_id`, so a receiver can tell messages apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkRequest {
    pub wr_id: u64,
    pub verb: Verb,
    /// Message length in bytes, 0..=2^31.
    pub len: u64,
}

impl WorkRequest {
    pub fn new(wr_id: u64, verb: Verb, len: u64) -> WorkRequest {
        WorkRequest { wr_id, verb, len }
    }
}

/// Largest message an RC QP carries (`max_msg_sz` of ConnectX: 2^31 bytes).
pub const MAX_MSG_LEN: u64 = 1 << 31;

/// Why [`RcQp::post_send`] refused a work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PostError {
    #[error("send queue full: {depth} work requests outstanding (max_send_wr)")]
    QueueFull { depth: u32 },
    #[error("message of {len} bytes exceeds the maximum of {max} bytes")]
    MessageTooLong { len: u64, max: u64 },
}

/// Work completion status, numbered as `enum ibv_wc_status` (rdma-core
/// libibverbs/verbs.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WcStatus {
    Success,
    WrFlushErr,
    RemInvReqErr,
    RemAccessErr,
    RemOpErr,
    RetryExcErr,
    RnrRetryExcErr,
}

impl WcStatus {
    /// The numeric `ibv_wc_status`.
    pub fn code(self) -> u8 {
        match self {
            WcStatus::Success => 0,
            WcStatus::WrFlushErr => 5,
            WcStatus::RemInvReqErr => 9,
            WcStatus::RemAccessErr => 10,
            WcStatus::RemOpErr => 11,
            WcStatus::RetryExcErr => 12,
            WcStatus::RnrRetryExcErr => 13,
        }
    }

    /// The libibverbs name, as `ibv_wc_status_str` callers print it.
    pub fn ibv_name(self) -> &'static str {
        match self {
            WcStatus::Success => "IBV_WC_SUCCESS",
            WcStatus::WrFlushErr => "IBV_WC_WR_FLUSH_ERR",
            WcStatus::RemInvReqErr => "IBV_WC_REM_INV_REQ_ERR",
            WcStatus::RemAccessErr => "IBV_WC_REM_ACCESS_ERR",
            WcStatus::RemOpErr => "IBV_WC_REM_OP_ERR",
            WcStatus::RetryExcErr => "IBV_WC_RETRY_EXC_ERR",
            WcStatus::RnrRetryExcErr => "IBV_WC_RNR_RETRY_EXC_ERR",
        }
    }

    /// The `status` word of summary.json: `success`, `retry_exceeded`,
    /// `rnr_retry_exceeded`, `flushed`, `remote_invalid_request`,
    /// `remote_access_error`, `remote_operational_error`.
    pub fn summary_name(self) -> &'static str {
        match self {
            WcStatus::Success => "success",
            WcStatus::WrFlushErr => "flushed",
            WcStatus::RemInvReqErr => "remote_invalid_request",
            WcStatus::RemAccessErr => "remote_access_error",
            WcStatus::RemOpErr => "remote_operational_error",
            WcStatus::RetryExcErr => "retry_exceeded",
            WcStatus::RnrRetryExcErr => "rnr_retry_exceeded",
        }
    }
}

/// A send work completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub wr_id: u64,
    pub verb: Verb,
    pub status: WcStatus,
    /// Message length for a success, 0 otherwise (as `ibv_wc.byte_len`
    /// is undefined on error).
    pub bytes: u64,
    /// When the completion was generated.
    pub at: Ps,
}

/// The QP state as far as traffic is concerned: Ready To Send, or Error
/// with the status that moved it there. An Error QP sends nothing more,
/// drops every packet it receives, and flushes every work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpState {
    Rts,
    Error(WcStatus),
}
