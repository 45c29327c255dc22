//! A finished flow gives back its QPs' memory. A fabric run makes a QP
//! pair per `[[traffic]]` flow and keeps every slot to the end (events and
//! workloads name QPs by index); a retired slot keeps its headers and
//! counts, and of its transport and congestion control only what the
//! outputs read ([`RetiredQp`]).
//!
//! A pair retires when nothing can change either end again: the client's
//! work is done, neither end has anything to send, a timer armed, a wake-up,
//! a drive or a reaction-point deadline pending, and no frame for either
//! end is on its way: the frames both ends made (`QpSlot::tx_packets`,
//! `QpSlot::cnps_made`) are as many as both got (`QpSlot::rx_frames`),
//! each end counting in its own slot. A frame dropped on the way keeps the
//! pair live. Events still pending for a retired QP are stale and do
//! nothing, as they would have done.
//!
//! A pair whose ends are simulated in different parts of a split run
//! makes the same test across them: an end that has settled sends its
//! counts to its peer's part ([`Note`], with the frames between the
//! parts), and each end retires once it has settled and its peer's last
//! note says the peer settled having got every frame this end made, and
//! made no more than this end got. The client's part learns first that
//! the flow is done; its note tells the server's part. Retiring changes
//! no output, so when a note arrives does not matter.
//!
//! ```text
//!   client's part                               server's part
//!   client done, settled ── Note(made, got) ──▶ server finished; settled?
//!   counts agree? retire ◀── Note(made, got) ── counts agree? retire
//! ```

use std::collections::HashMap;

use core::ops::{Deref, DerefMut};

use super::World;
use super::nic_cc::QpCc;
use crate::time::Rate;
use crate::transport::{PackedCounters, QpCounters, QpState, RcQp};

/// What a settled end of a flow tells the part that simulates its peer:
/// the frames it made (`tx_packets + cnps_made`) and got (`rx_frames`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Note {
    /// The end the note is for: the sender's peer.
    pub qp: u32,
    pub made: u64,
    pub got: u64,
}

/// A part's notes in flight, per end of its own: the last it sent, and
/// the last its peer sent it.
#[derive(Debug, Default)]
pub struct Notes {
    sent: HashMap<u32, (u64, u64)>,
    got: HashMap<u32, (u64, u64)>,
}

/// The transport and congestion control of a QP that may still act.
pub struct LiveQp {
    pub qp: RcQp,
    pub cc: QpCc,
}

/// What the outputs read of a retired QP: its counters and its congestion
/// control's numbers packed together ([`PackedCounters`]; about 90 bytes
/// in two allocations for a short flow's QP, where they took 240).
pub struct RetiredQp {
    pub qpn: u32,
    pub dest_qpn: u32,
    pub state: QpState,
    /// Its ACK-clocked reaction point's title, if it ran one.
    acks: Option<&'static str>,
    /// The counters, then the numbers at [`Extra`]'s indices.
    packed: PackedCounters,
}

/// Where [`RetiredQp::packed`] keeps each number beside the counters.
#[derive(Clone, Copy)]
enum Extra {
    /// Its DCQCN reaction point's CNPs and cuts, if it ran one.
    RpCnps,
    RpCuts,
    /// The marked ACKs its ACK-clocked reaction point saw.
    AckEchoes,
    CnpsIgnored,
    /// The rate its reaction point set, and the workload's cap (bit/s).
    CcRate,
    Cap,
}

impl RetiredQp {
    fn extra(&self, e: Extra) -> Option<u64> {
        self.packed.extra(e as usize)
    }
}

/// A DCQCN reaction point's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RpCounts {
    pub cnps: u64,
    pub cuts: u64,
}

/// A QP slot's transport: live, or retired to its record.
pub enum QpBody {
    Live(Box<LiveQp>),
    Retired(Box<RetiredQp>),
}

impl QpBody {
    pub fn live(qp: RcQp, cc: QpCc) -> QpBody {
        QpBody::Live(Box::new(LiveQp { qp, cc }))
    }

    pub fn is_retired(&self) -> bool {
        matches!(self, QpBody::Retired(_))
    }

    pub fn qpn(&self) -> u32 {
        match self {
            QpBody::Live(l) => l.qp.qpn(),
            QpBody::Retired(r) => r.qpn,
        }
    }

    pub fn dest_qpn(&self) -> u32 {
        match self {
            QpBody::Live(l) => l.qp.dest_qpn(),
            QpBody::Retired(r) => r.dest_qpn,
        }
    }

    pub fn state(&self) -> QpState {
        match self {
            QpBody::Live(l) => l.qp.state(),
            QpBody::Retired(r) => r.state,
        }
    }

    pub fn counters(&self) -> QpCounters {
        match self {
            QpBody::Live(l) => *l.qp.counters(),
            QpBody::Retired(r) => r.packed.unpack(),
        }
    }

    pub fn retransmitted_packets(&self) -> u64 {
        match self {
            QpBody::Live(l) => l.qp.counters().retransmitted_packets,
            QpBody::Retired(r) => r.packed.unpack().retransmitted_packets,
        }
    }

    pub fn rp(&self) -> Option<RpCounts> {
        match self {
            QpBody::Live(l) => l.cc.rp.as_ref().map(|rp| RpCounts {
                cnps: rp.cnps(),
                cuts: rp.cuts(),
            }),
            QpBody::Retired(r) => Some(RpCounts {
                cnps: r.extra(Extra::RpCnps)?,
                cuts: r.extra(Extra::RpCuts)?,
            }),
        }
    }

    pub fn ack_clocked(&self) -> Option<(&'static str, u64)> {
        match self {
            QpBody::Live(l) => l.cc.acks.as_ref().map(|a| (a.title(), a.echoes())),
            QpBody::Retired(r) => Some((r.acks?, r.extra(Extra::AckEchoes)?)),
        }
    }

    pub fn cnps_ignored(&self) -> u64 {
        match self {
            QpBody::Live(l) => l.cc.cnps_ignored,
            QpBody::Retired(r) => r.extra(Extra::CnpsIgnored).unwrap_or(0),
        }
    }

    /// As [`QpCc::allowed_rate`].
    pub fn allowed_rate(&self, line: Rate) -> Rate {
        match self {
            QpBody::Live(l) => l.cc.allowed_rate(line),
            QpBody::Retired(r) => {
                let rate = r.extra(Extra::CcRate).map_or(line, Rate);
                r.extra(Extra::Cap)
                    .map_or(rate, |c| Rate(c).min(rate))
                    .min(line)
            }
        }
    }

    fn retire(&mut self) {
        let QpBody::Live(l) = &*self else { return };
        let (rp, acks) = (self.rp(), self.ack_clocked());
        let mut extra = [None; 6];
        for (e, v) in [
            (Extra::RpCnps, rp.map(|r| r.cnps)),
            (Extra::RpCuts, rp.map(|r| r.cuts)),
            (Extra::AckEchoes, acks.map(|a| a.1)),
            (
                Extra::CnpsIgnored,
                Some(l.cc.cnps_ignored).filter(|&n| n != 0),
            ),
            (Extra::CcRate, l.cc.cc_rate().map(|r| r.0)),
            (Extra::Cap, l.cc.cap.map(|r| r.0)),
        ] {
            extra[e as usize] = v;
        }
        let record = RetiredQp {
            qpn: l.qp.qpn(),
            dest_qpn: l.qp.dest_qpn(),
            state: l.qp.state(),
            acks: acks.map(|a| a.0),
            packed: PackedCounters::pack_with(l.qp.counters(), &extra),
        };
        *self = QpBody::Retired(Box::new(record));
    }
}

/// The event handlers reach a QP's transport through here once they have
/// checked it is live.
impl Deref for QpBody {
    type Target = LiveQp;
    fn deref(&self) -> &LiveQp {
        match self {
            QpBody::Live(l) => l,
            QpBody::Retired(_) => unreachable!("a retired QP's transport was used"),
        }
    }
}

impl DerefMut for QpBody {
    fn deref_mut(&mut self) -> &mut LiveQp {
        match self {
            QpBody::Live(l) => l,
            QpBody::Retired(_) => unreachable!("a retired QP's transport was used"),
        }
    }
}

impl World {
    /// Retires QP `q` and its peer if their flow is over (the module's
    /// docs). It runs after every change to every QP, so it first tests
    /// what fails while a flow runs from `q`'s slot alone, which the
    /// change just touched: the flow's work not done yet (`finished`), a
    /// frame to send, a wake-up or a drive pending. The rest, the peer's
    /// slot last, runs out of line, in the few changes after the flow's
    /// last completion.
    #[inline]
    pub fn try_retire(&mut self, q: u32) {
        let s = &self.qps[q as usize];
        if s.finished && !s.active && s.wake_at.is_none() && s.drive_at.is_none() {
            self.retire_if_settled(q);
        }
    }

    #[inline(never)]
    fn retire_if_settled(&mut self, q: u32) {
        let p = self.qps[q as usize].peer;
        if !self.retire_flows || !self.owns_qp(q) || !self.settled(q) {
            return;
        }
        if !self.owns_qp(p) {
            return self.retire_across(q, p);
        }
        if !self.settled(p) {
            return;
        }
        let (s, t) = (&self.qps[q as usize], &self.qps[p as usize]);
        let made = s.tx_packets + t.tx_packets + u64::from(s.cnps_made) + u64::from(t.cnps_made);
        if made == s.rx_frames + t.rx_frames {
            self.qps[q as usize].live.retire();
            self.qps[p as usize].live.retire();
        }
    }

    /// Settled end `q` of a pair whose end `p` another part simulates:
    /// tells that part its counts if they changed, and retires if `p`'s
    /// last note agrees with them (the module's docs).
    fn retire_across(&mut self, q: u32, p: u32) {
        let s = &self.qps[q as usize];
        let mine = (s.tx_packets + u64::from(s.cnps_made), s.rx_frames);
        if self.notes.sent.get(&q) != Some(&mine) {
            self.notes.sent.insert(q, mine);
            let (made, got) = mine;
            self.departures.notes.push(Note { qp: p, made, got });
        }
        let theirs = self.notes.got.get(&q).copied();
        if theirs.is_some_and(|(made, got)| made == mine.1 && got == mine.0) {
            self.notes.sent.remove(&q);
            self.notes.got.remove(&q);
            self.qps[q as usize].live.retire();
        }
    }

    /// A note from the part of `note.qp`'s peer, which has settled: the
    /// flow's work is done.
    pub(super) fn take_note(&mut self, note: Note) {
        let q = note.qp;
        if self.qps[q as usize].live.is_retired() {
            return;
        }
        self.notes.got.insert(q, (note.made, note.got));
        self.qps[q as usize].finished = true;
        self.try_retire(q);
    }

    /// Retires QP `q` if another part of the run simulates it (see
    /// `flows::start_flow`).
    pub(super) fn shed_foreign(&mut self, q: u32) {
        if !self.owns_qp(q) {
            self.qps[q as usize].live.retire();
        }
    }

    /// Whether nothing can change QP `q` any more, frames for it aside.
    fn settled(&self, q: u32) -> bool {
        let s = &self.qps[q as usize];
        if s.active || s.wake_at.is_some() || s.drive_at.is_some() {
            return false;
        }
        // The flow's work is its client's workload's, judged in the
        // client's part; a server whose client another part simulates
        // has that part's note instead.
        let wl = &self.workloads[s.workload as usize];
        let judged_here = wl.clients.first().is_none_or(|&c| self.owns_qp(c));
        if judged_here && !wl.workload.qp_done(s.index as usize) {
            return false;
        }
        let QpBody::Live(l) = &s.live else {
            return false;
        };
        !l.cc.dirty
            && l.cc.rp_at.is_none()
            && l.qp.next_timer().is_none()
            && l.qp.tx_ready_at(self.now()).is_none()
    }
}
