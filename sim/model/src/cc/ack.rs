//! Reaction points clocked by ACKs: DCTCP, TIMELY and HPCC, the
//! reference's algorithms beside DCQCN, chosen per NIC profile by
//! [`Algorithm`].
//!
//! DCQCN's reaction point ([`super::ReactionPoint`]) runs on timers started
//! by CNPs. The HPCC reference's other congestion controls have no timer:
//! each ACK carries what they need (the congestion echo, the bytes
//! acknowledged), and the sender updates its rate when it reads the ACK
//! (`RdmaHw::ReceiveAck`). The world hands every ACK of a QP to its
//! [`AckClocked`] after the transport has processed it, with an
//! [`AckInfo`].

use super::ParamError;
use roce_codec::IntRepr;

use super::dctcp::{Dctcp, DctcpParams};
use super::hpcc::{Hpcc, HpccParams};
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
    /// HPCC ([`super::hpcc`]), reading the switches' telemetry; with
    /// [`HpccParams::pint`], HPCC-PINT ([`super::pint`]).
    Hpcc(HpccParams),
}

impl Algorithm {
    /// Every algorithm, as scenarios name them.
    pub const NAMES: [&'static str; 5] = ["dcqcn", "dctcp", "timely", "hpcc", "hpcc_pint"];

    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Dcqcn => "dcqcn",
            Algorithm::Dctcp(_) => "dctcp",
            Algorithm::Timely(_) => "timely",
            Algorithm::Hpcc(p) if p.pint.is_some() => "hpcc_pint",
            Algorithm::Hpcc(_) => "hpcc",
        }
    }

    /// The telemetry's bytes a data packet starts with (the hops come
    /// later, from the switches; PINT's power is there from the start).
    pub fn telemetry_start_len(&self) -> u32 {
        match self {
            Algorithm::Hpcc(p) if p.pint.is_some() => {
                (IntRepr::HEADER_LEN + IntRepr::PINT_LEN) as u32
            }
            Algorithm::Hpcc(_) => IntRepr::HEADER_LEN as u32,
            _ => 0,
        }
    }

    /// Whether its data packets carry telemetry for the switches to fill
    /// in ([`roce_codec::wire::int`]).
    pub fn needs_telemetry(&self) -> bool {
        matches!(self, Algorithm::Hpcc(_))
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
            Algorithm::Hpcc(p) => p.validate(),
        }
    }

    /// The ACK-clocked reaction point of a QP on a port of rate `line`
    /// with `mtu` payload bytes per packet and a window of `win` bytes (0:
    /// none); `None` for DCQCN.
    pub fn ack_clocked(&self, line: Rate, mtu: u32, win: u64) -> Option<AckClocked> {
        match self {
            Algorithm::Dcqcn => None,
            Algorithm::Dctcp(p) => Some(AckClocked::Dctcp(Dctcp::new(p, line, mtu))),
            Algorithm::Timely(p) => Some(AckClocked::Timely(Timely::new(p, line))),
            Algorithm::Hpcc(p) => Some(AckClocked::Hpcc(Box::new(Hpcc::new(p, line, win)))),
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
    /// Boxed: its records of the path make it several times the others.
    Hpcc(Box<Hpcc>),
}

impl AckClocked {
    /// The algorithm's name, as plots title it.
    pub fn title(&self) -> &'static str {
        match self {
            AckClocked::Dctcp(_) => "DCTCP",
            AckClocked::Timely(_) => "TIMELY",
            AckClocked::Hpcc(h) if h.pint().is_some() => "HPCC-PINT",
            AckClocked::Hpcc(_) => "HPCC",
        }
    }

    /// The rate to pace the QP at.
    pub fn rate(&self) -> Rate {
        match self {
            AckClocked::Dctcp(d) => d.rate(),
            AckClocked::Timely(t) => t.rate(),
            AckClocked::Hpcc(h) => h.rate(),
        }
    }

    /// An ACK arrived, with the telemetry it echoes if any; returns
    /// whether the rate changed.
    pub fn on_ack(&mut self, ack: &AckInfo, int: Option<&IntRepr>) -> bool {
        match self {
            AckClocked::Dctcp(d) => d.on_ack(*ack),
            AckClocked::Timely(t) => t.on_ack(ack),
            AckClocked::Hpcc(h) => h.on_ack(ack, int),
        }
    }

    /// The telemetry a data packet starts with, for an algorithm that
    /// reads it.
    pub fn telemetry_source(&self, orig_dport: u16) -> Option<IntRepr> {
        match self {
            AckClocked::Hpcc(h) => Some(h.source(orig_dport)),
            AckClocked::Dctcp(_) | AckClocked::Timely(_) => None,
        }
    }

    /// PINT's knobs, if it runs HPCC-PINT.
    pub fn pint(&self) -> Option<&super::PintParams> {
        match self {
            AckClocked::Hpcc(h) => h.pint(),
            AckClocked::Dctcp(_) | AckClocked::Timely(_) => None,
        }
    }

    /// The window its queue term divides by, once the flow's own is known
    /// (`GLOBAL_T 0`).
    pub fn set_window(&mut self, win: u64) {
        if let AckClocked::Hpcc(h) = self {
            h.set_window(win);
        }
    }

    /// ACKs that echoed a CE mark (TIMELY reads none).
    pub fn echoes(&self) -> u64 {
        match self {
            AckClocked::Dctcp(d) => d.echoes(),
            AckClocked::Timely(_) | AckClocked::Hpcc(_) => 0,
        }
    }

    /// Whether a rate change re-times the packet waiting for its slot
    /// (the reference's `ChangeRate`): its DCTCP and TIMELY set the rate
    /// alone, its HPCC calls `ChangeRate`.
    pub fn retimes(&self) -> bool {
        match self {
            AckClocked::Dctcp(_) | AckClocked::Timely(_) => false,
            AckClocked::Hpcc(_) => true,
        }
    }
}
