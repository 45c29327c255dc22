//! Reaction points clocked by ACKs: DCTCP and TIMELY, the reference's
//! algorithms beside DCQCN, chosen per NIC profile by [`Algorithm`].
//!
//! DCQCN's reaction point ([`super::ReactionPoint`]) runs on timers started
//! by CNPs. The HPCC reference's other congestion controls have no timer:
//! each ACK carries what they need (the congestion echo, the bytes
//! acknowledged), and the sender updates its rate when it reads the ACK
//! (`RdmaHw::ReceiveAck`). The world hands every ACK of a QP to its
//! [`AckClocked`] after the transport has processed it, with an
//! [`AckInfo`].

use super::ParamError;
use super::dctcp::{Dctcp, DctcpParams};
use super::timely::{Timely, TimelyParams};
use crate::time::{Ps, Rate};

/// The congestion control a NIC runs where its profile puts a reaction
/// point (`[host.cc] algorithm`).
#[derive(Debug, Clone, PartialEq)]
pub enum Algorithm {
    /// DCQCN, with the knobs of `[host.dcqcn]` (the default).
    Dcqcn,
    /// DCTCP on a rate ([`super::dctcp`]).
    Dctcp(DctcpParams),
    /// TIMELY ([`super::timely`]).
    Timely(TimelyParams),
}

impl Algorithm {
    /// Every algorithm, as scenarios name them.
    pub const NAMES: [&'static str; 3] = ["dcqcn", "dctcp", "timely"];

    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Dcqcn => "dcqcn",
            Algorithm::Dctcp(_) => "dctcp",
            Algorithm::Timely(_) => "timely",
        }
    }

    /// Whether it reads the congestion echo on ACKs (so the receiver must
    /// put it there: `cnp_on_ack`).
    pub fn needs_ack_echo(&self) -> bool {
        matches!(self, Algorithm::Dctcp(_))
    }

    /// Checks its knobs; the error names the knob.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            Algorithm::Dcqcn => Ok(()),
            Algorithm::Dctcp(p) => p.validate(),
            Algorithm::Timely(p) => p.validate(),
        }
    }

    /// The ACK-clocked reaction point of a QP on a port of rate `line`
    /// with `mtu` payload bytes per packet; `None` for DCQCN.
    pub fn ack_clocked(&self, line: Rate, mtu: u32) -> Option<AckClocked> {
        match self {
            Algorithm::Dcqcn => None,
            Algorithm::Dctcp(p) => Some(AckClocked::Dctcp(Dctcp::new(p, line, mtu))),
            Algorithm::Timely(p) => Some(AckClocked::Timely(Timely::new(p, line))),
        }
    }
}

/// What an ACK tells an ACK-clocked reaction point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckInfo {
    /// Payload bytes acknowledged so far, this ACK included (the
    /// reference's `ch.ack.seq`).
    pub acked: u64,
    /// Payload bytes sent so far (the reference's `snd_nxt`).
    pub sent: u64,
    /// The ACK echoes a CE mark (BTH BECN; the reference's CNP flag).
    pub ecn_echo: bool,
    /// Its data packet's round trip: from the send time the ACK echoes to
    /// its arrival (the reference's `Now() - ch.ack.ih.ts`); `None` when
    /// the ACK echoes none.
    pub rtt: Option<Ps>,
}

/// A QP's ACK-clocked reaction point.
#[derive(Debug, Clone)]
pub enum AckClocked {
    Dctcp(Dctcp),
    Timely(Timely),
}

impl AckClocked {
    /// The algorithm's name, as plots title it.
    pub fn title(&self) -> &'static str {
        match self {
            AckClocked::Dctcp(_) => "DCTCP",
            AckClocked::Timely(_) => "TIMELY",
        }
    }

    /// The rate to pace the QP at.
    pub fn rate(&self) -> Rate {
        match self {
            AckClocked::Dctcp(d) => d.rate(),
            AckClocked::Timely(t) => t.rate(),
        }
    }

    /// An ACK arrived; returns whether the rate changed.
    pub fn on_ack(&mut self, ack: &AckInfo) -> bool {
        match self {
            AckClocked::Dctcp(d) => d.on_ack(*ack),
            AckClocked::Timely(t) => t.on_ack(ack),
        }
    }

    /// ACKs that echoed a CE mark (TIMELY reads none).
    pub fn echoes(&self) -> u64 {
        match self {
            AckClocked::Dctcp(d) => d.echoes(),
            AckClocked::Timely(_) => 0,
        }
    }

    /// Whether a rate change re-times the packet waiting for its slot
    /// (the reference's `ChangeRate`): its DCTCP and TIMELY set the rate
    /// alone.
    pub fn retimes(&self) -> bool {
        match self {
            AckClocked::Dctcp(_) | AckClocked::Timely(_) => false,
        }
    }
}
