//! Congestion control for a lossless RoCEv2 fabric, as pure algorithms.
//!
//! DCQCN has three roles (Zhu et al., "Congestion Control for Large-Scale
//! RDMA Deployments", SIGCOMM 2015):
//!
//! ```text
//!   sender NIC (RP)                  switch egress queue (CP)             receiver NIC (NP)
//!  ┌──────────────────┐   data    ┌──────────────────────────┐  data,CE  ┌─────────────────────┐
//!  │ ReactionPoint    │──────────▶│ RED on the queue length: │──────────▶│ NotificationPoint   │
//!  │ per QP: RC, RT,  │           │ RedParams::should_mark   │           │ at most one CNP per │
//!  │ alpha, stages    │           └──────────────────────────┘           │ min_time_between_   │
//!  │                  │◀───────────────────── CNP ──────────────────────│ cnps per pacing key │
//!  └──────────────────┘                                                  └─────────────────────┘
//! ```
//!
//! * [`red`]: the congestion point, RED/ECN marking per (egress port,
//!   priority), with the reference simulator's per-link-speed tables.
//! * [`dcqcn`]: the knobs ([`DcqcnParams`], named as the ConnectX firmware
//!   names them, with the choices [`RpModel`] and [`CnpScope`]) and their
//!   two presets.
//! * [`rp`]: the reaction point ([`ReactionPoint`]), one per QP.
//! * [`np`]: the notification point ([`NotificationPoint`]), one per NIC
//!   port.
//! * [`ack`]: the choice of algorithm ([`Algorithm`]) and the reaction
//!   points clocked by ACKs rather than timers ([`AckClocked`]): [`dctcp`],
//!   which reads the notification as BECN on the ACK of each marked packet
//!   (the notification point's `cnp_on_ack`), as the HPCC reference's
//!   receiver flags its ACKs whatever algorithm the sender runs, and
//!   [`timely`], which reads the RTT of the data packet an ACK answers.
//!
//! None of them owns a clock or schedules anything: each is told the time
//! (`Ps`) and says what should happen and when. The world schedules one
//! event per QP at [`ReactionPoint::next_deadline`] and calls back; the
//! switch buffer that decides PAUSE/PFC is [`crate::world::mmu`].
//!
//! Every parameter set has a `validate()` returning a [`ParamError`] that
//! names the knob (the scenario layer prefixes its TOML table) and the range
//! it accepts.

pub mod ack;
pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod np;
pub mod pint;
pub mod red;
pub mod rp;
pub mod timely;

pub use ack::{AckClocked, AckInfo, Algorithm};
pub use dcqcn::{CnpScope, DcqcnParams, ReferenceDcqcn, RpModel};
pub use dctcp::{Dctcp, DctcpParams};
pub use hpcc::{Hpcc, HpccParams};
pub use np::{CnpKey, MarkedPacket, NotificationPoint};
pub use pint::{PintCodec, PintParams, PintPort};
pub use red::{MarkPoint, RedParams};
pub use rp::{ReactionPoint, retime};
pub use timely::{Timely, TimelyParams};

/// A parameter outside what the model accepts.
///
/// `key` is the knob's own name (`rpg_gd`, `kmax_bytes`, `headroom_bytes[3]`);
/// the scenario layer puts its table in front of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {problem}")]
pub struct ParamError {
    pub key: String,
    pub problem: String,
    pub hint: Option<String>,
}

/// The rate floor of an ACK-clocked reaction point (`min_rate`): a QP cut
/// to 0 would never send again, so would never be told to speed up.
pub(crate) fn check_min_rate(min_rate: crate::time::Rate) -> Result<(), ParamError> {
    match min_rate.bps() {
        0 => Err(ParamError::new(
            "min_rate",
            "0 would let a QP stop for good",
        )),
        _ => Ok(()),
    }
}

impl ParamError {
    pub fn new(key: impl Into<String>, problem: impl Into<String>) -> ParamError {
        ParamError {
            key: key.into(),
            problem: problem.into(),
            hint: None,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> ParamError {
        self.hint = Some(hint.into());
        self
    }
}
