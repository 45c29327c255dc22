//! A port: one end of a link, on a host NIC or a switch.
//!
//! ```text
//!                 ┌──────────────────────── Port ────────────────────────┐
//!   push(prio) ──▶│ egress queue 7 ─┐                                     │
//!                 │ egress queue 6 ─┤ strict priority,  ──▶ start_tx ──▶ │──▶ link
//!                 │      ...        │ skipping paused                    │    (busy until TxDone)
//!                 │ egress queue 0 ─┘ priorities                         │
//!                 │ queued bytes per priority, counters, tap, carrier    │
//!                 └──────────────────────────────────────────────────────┘
//! ```
//!
//! A port serializes one frame at a time: it is busy for the frame's wire
//! time (FCS, preamble and IFG included), until the clock passes the key of
//! the frame's `TxDone` event (reserved when the frame started, scheduled
//! only if the port will have something to send then). Switch ports queue
//! frames here; host ports queue only the kernel's own frames (ARP) and the
//! NIC's CNPs and priority ACKs here, and their NIC pulls RoCE packets from
//! its queue pairs at the moment the port is free (`world::host`), so a NIC
//! never holds more than the frame on the wire.
//!
//! Which queue goes next: strict priority, unless the port has a
//! [`select::TxSelect`] (`[switch.ets]`, `[host.ets]`: IEEE 802.1Qaz ETS,
//! or the HPCC reference's round robin).
//!
//! PFC: a port sends no frame of a priority whose bit is set in
//! [`Port::paused`], which PFC and PAUSE frames from its peer set and clear
//! (`world::pfc`); its own pending PAUSE frame goes before any queued one.
//! Its pause state and counters, both directions, are [`pause`]'s
//! [`PauseState`].

pub mod pause;
pub mod select;

use std::collections::VecDeque;

use serde::Serialize;

use crate::packet::PacketId;
use crate::time::{Ps, Rate};
use pause::{PauseConfig, PauseState};
use select::TxSelect;

/// Priorities (802.1p classes) per port.
pub const PRIOS: usize = 8;

/// What a port belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Host { host: u32, nic: u32 },
    Switch { sw: u32, local: u32 },
}

/// Counters of one port, both directions (those of every frame first).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[repr(C)]
pub struct PortCounters {
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub rx_packets: u64,
    /// Frames this port dropped: sent into a dead link, lost on its link,
    /// refused by a full buffer (switch egress), or received but not for
    /// this NIC (wrong MAC, a GID it does not own, unknown QP) or, on a
    /// routed switch port, not addressed to the switch.
    pub drops: u64,
    pub drops_link_down: u64,
    pub drops_loss: u64,
    pub drops_buffer: u64,
    pub drops_not_ours: u64,
    pub drops_no_route: u64,
}

/// Why a port dropped a frame (each reason has its counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// Sent into a dead link, in flight when it died, or queued on a port
    /// whose link went down.
    LinkDown,
    /// Lost on the link (its `loss` probability).
    Loss,
    /// The switch buffer had no room.
    Buffer,
    /// Not for this NIC, or not addressed to a routed switch port.
    NotOurs,
    /// No route, no live next hop, or TTL expired.
    NoRoute,
}

impl PortCounters {
    fn count_drop(&mut self, why: DropReason) {
        self.drops += 1;
        match why {
            DropReason::LinkDown => self.drops_link_down += 1,
            DropReason::Loss => self.drops_loss += 1,
            DropReason::Buffer => self.drops_buffer += 1,
            DropReason::NotOurs => self.drops_not_ours += 1,
            DropReason::NoRoute => self.drops_no_route += 1,
        }
    }
}

/// One FIFO per priority, and a bit per priority that has something (read
/// first, so it comes first).
#[repr(C)]
pub struct PrioQueues<T> {
    nonempty: u8,
    fifos: [VecDeque<T>; PRIOS],
}

impl<T> Default for PrioQueues<T> {
    fn default() -> Self {
        PrioQueues {
            fifos: Default::default(),
            nonempty: 0,
        }
    }
}

impl<T> PrioQueues<T> {
    #[inline]
    pub fn push(&mut self, prio: usize, x: T) {
        self.fifos[prio].push_back(x);
        self.nonempty |= 1 << prio;
    }

    #[inline]
    pub fn pop(&mut self, prio: usize) -> Option<T> {
        let x = self.fifos[prio].pop_front()?;
        if self.fifos[prio].is_empty() {
            self.nonempty &= !(1 << prio);
        }
        Some(x)
    }

    /// Bit `p` set: priority `p` has an entry.
    #[inline]
    pub fn mask(&self) -> u8 {
        self.nonempty
    }

    fn len(&self) -> usize {
        self.fifos.iter().map(VecDeque::len).sum()
    }

    /// Takes everything, priority 0 first, each in FIFO order.
    fn drain(&mut self) -> Vec<(usize, T)> {
        self.nonempty = 0;
        let mut out = Vec::new();
        for (prio, f) in self.fifos.iter_mut().enumerate() {
            out.extend(f.drain(..).map(|x| (prio, x)));
        }
        out
    }
}

/// The highest priority whose bit is set in `mask`.
#[inline]
pub fn highest(mask: u8) -> Option<usize> {
    (mask != 0).then(|| 7 - mask.leading_zeros() as usize)
}

/// A frame in an egress queue, with its length for the byte accounting.
#[derive(Debug, Clone, Copy)]
pub struct Queued {
    pub id: PacketId,
    pub len: u32,
}

/// The fields every frame through the port reads come first, in the
/// port's first two cache lines (`repr(C)` keeps the order, `align(64)`
/// puts it on a line): in a fabric of thousands of ports a port is rarely
/// in cache when a frame reaches it, and each line touched is a miss.
#[repr(C, align(64))]
pub struct Port {
    /// The scheduler key its last frame's `TxDone` has (reserved at
    /// `start_tx`): the port is busy until the clock passes it.
    tx_end: u128,
    owner: Owner,
    link: u32,
    peer: u32,
    tap: Option<u32>,
    carrier: bool,
    /// That `TxDone` is scheduled (not only reserved).
    tx_done_scheduled: bool,
    /// In a partitioned run: the port, and its peer, are simulated by
    /// another part (`world::part`). The sending port is in cache when a
    /// frame leaves, its peer usually is not: the peer's flag is kept here.
    elsewhere: bool,
    peer_elsewhere: bool,
    /// PFC: bit `p` set = the peer paused priority `p`.
    paused: u8,
    /// Priorities whose egress queues mark (bit per priority).
    marking: u8,
    /// Priorities whose frames the PFC watchdog drops now (a storm with
    /// the drop action): the `PauseState` bit, mirrored here because
    /// every frame a switch queues asks, and that state is a cold line.
    wd_dropping: u8,
    /// A PAUSE/PFC frame waits for the wire (`PauseState`'s pending mask
    /// is not empty), mirrored for the same reason: every pump asks.
    pause_pending: bool,
    /// `select` is set: every pump asks, and the box is a cold line.
    selects: bool,
    /// Extra delay added to frames leaving this port (switch latency).
    extra_delay: Ps,
    rate: Rate,
    /// The wire bytes of the last frame started and their time at `rate`:
    /// a port's frames are mostly of one size (a sender's data, a
    /// receiver's ACKs), and this spares each a 64-bit division.
    last_tx: (u64, Ps),
    counters: PortCounters,
    queued_bytes: [u64; PRIOS],
    queues: PrioQueues<Queued>,
    /// Pauses both ways: state, pending frame, counters.
    pause: Box<PauseState>,
    /// Packets this port's egress queues marked CE, per priority.
    ecn_marked: [u64; PRIOS],
    /// Frames the switch buffer refused, per egress priority; of them,
    /// lossless ones (the fabric's promise broken).
    prio_drops: [u64; PRIOS],
    lossless_drops: [u64; PRIOS],
    /// Transmission selection other than strict priority (`selects`).
    select: Option<Box<TxSelect>>,
    /// Bytes (as buffers count them) a switch port's egress queues have
    /// sent: the counter its telemetry reports (the HPCC reference's
    /// `m_txBytes`, which counts queued frames, not PAUSE frames).
    dequeued_bytes: u64,
    name: String,
}

impl Port {
    pub fn new(name: String, owner: Owner, link: u32, rate: Rate, extra_delay: Ps) -> Port {
        Port {
            name,
            owner,
            link,
            peer: u32::MAX,
            rate,
            last_tx: (0, Ps::ZERO),
            extra_delay,
            tx_end: 0,
            tx_done_scheduled: false,
            elsewhere: false,
            peer_elsewhere: false,
            carrier: true,
            queues: PrioQueues::default(),
            queued_bytes: [0; PRIOS],
            dequeued_bytes: 0,
            paused: 0,
            pause: Box::default(),
            counters: PortCounters::default(),
            ecn_marked: [0; PRIOS],
            marking: 0,
            wd_dropping: 0,
            pause_pending: false,
            prio_drops: [0; PRIOS],
            lossless_drops: [0; PRIOS],
            selects: false,
            select: None,
            tap: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    #[inline]
    pub fn owner(&self) -> Owner {
        self.owner
    }
    #[inline]
    pub fn link(&self) -> u32 {
        self.link
    }
    /// The port at the other end of the link.
    #[inline]
    pub fn peer(&self) -> u32 {
        self.peer
    }
    pub fn set_peer(&mut self, peer: u32) {
        self.peer = peer;
    }
    pub fn rate(&self) -> Rate {
        self.rate
    }
    #[inline]
    pub fn extra_delay(&self) -> Ps {
        self.extra_delay
    }
    pub fn counters(&self) -> &PortCounters {
        &self.counters
    }
    #[inline]
    pub fn tap(&self) -> Option<u32> {
        self.tap
    }
    pub fn set_tap(&mut self, tap: u32) {
        self.tap = Some(tap);
    }
    /// Whether another part of a partitioned run simulates this port.
    #[inline]
    pub fn elsewhere(&self) -> bool {
        self.elsewhere
    }
    /// Whether another part of a partitioned run simulates its peer: its
    /// frames leave this world as departures.
    #[inline]
    pub fn peer_elsewhere(&self) -> bool {
        self.peer_elsewhere
    }
    pub fn set_elsewhere(&mut self, elsewhere: bool) {
        self.elsewhere = elsewhere;
    }
    pub fn set_peer_elsewhere(&mut self, elsewhere: bool) {
        self.peer_elsewhere = elsewhere;
    }
    pub fn is_host_port(&self) -> bool {
        matches!(self.owner, Owner::Host { .. })
    }

    // ----- carrier and serialization ------------------------------------

    /// Whether the link's carrier is up at this end.
    #[inline]
    pub fn carrier(&self) -> bool {
        self.carrier
    }
    pub fn set_carrier(&mut self, up: bool) {
        self.carrier = up;
    }

    /// A frame is on the wire while the clock (the key of the event
    /// running, `now`) has not passed its `TxDone`'s key: the port can
    /// start another one only after that.
    #[inline]
    pub fn busy(&self, now: u128) -> bool {
        self.tx_end > now
    }

    /// Starts serializing a frame of `len` bytes (as captured, no FCS)
    /// whose `TxDone` has the key `tx_end`: counts it and returns its wire
    /// time.
    #[inline]
    /// Counts a frame of `len` bytes (no FCS) that takes `wire` bytes of
    /// wire time ([`crate::packet::Packet::wire_bytes`]), and returns that
    /// time.
    pub fn start_tx(&mut self, len: u32, wire: u64) -> Ps {
        self.counters.tx_bytes += u64::from(len);
        self.counters.tx_packets += 1;
        if self.last_tx.0 != wire {
            self.last_tx = (wire, self.rate.tx_time(wire));
        }
        self.last_tx.1
    }

    /// The `TxDone` of the frame just started has the key `key`, not yet
    /// scheduled.
    #[inline]
    pub fn set_tx_end(&mut self, key: u128) {
        self.tx_end = key;
        self.tx_done_scheduled = false;
    }

    /// The key of the last frame's `TxDone`, if it is reserved and not
    /// scheduled (the port may still want it).
    #[inline]
    pub fn unscheduled_tx_done(&self) -> Option<u128> {
        (self.tx_end != 0 && !self.tx_done_scheduled).then_some(self.tx_end)
    }

    #[inline]
    pub fn tx_end(&self) -> u128 {
        self.tx_end
    }

    /// Its `TxDone` goes into the scheduler.
    #[inline]
    pub fn tx_done_scheduled(&mut self) {
        self.tx_done_scheduled = true;
    }

    /// Whether it has something to send when its wire frees: a queued
    /// frame or a pending PAUSE (a host port's QPs are the NIC's to say).
    #[inline]
    pub fn has_work(&self) -> bool {
        self.queued() != 0 || self.pause_pending
    }

    /// Counts a frame that arrived whole.
    #[inline]
    pub fn count_rx(&mut self, len: u32) {
        self.counters.rx_bytes += u64::from(len);
        self.counters.rx_packets += 1;
    }

    #[inline]
    pub fn count_drop(&mut self, why: DropReason) {
        self.counters.count_drop(why);
    }

    // ----- egress queues ------------------------------------------------

    /// Bit `p` set: the peer paused priority `p` (PFC).
    #[inline]
    pub fn paused(&self) -> u8 {
        self.paused
    }
    #[inline]
    pub fn set_paused(&mut self, mask: u8) {
        self.paused = mask;
    }
    #[inline]
    pub fn pause(&self) -> &PauseState {
        &self.pause
    }
    #[inline]
    pub fn pause_mut(&mut self) -> &mut PauseState {
        &mut self.pause
    }
    /// It sends pauses as `cfg` says.
    pub fn configure_pauses(&mut self, cfg: PauseConfig) {
        self.pause.configure(cfg);
    }
    /// Whether the PFC watchdog drops priority `prio`'s frames now.
    #[inline]
    pub fn wd_drops(&self, prio: usize) -> bool {
        self.wd_dropping & (1 << prio) != 0
    }
    #[inline]
    pub fn pause_pending(&self) -> bool {
        debug_assert_eq!(self.pause_pending, self.pause.has_pending());
        self.pause_pending
    }
    pub fn set_pause_pending(&mut self, on: bool) {
        self.pause_pending = on;
    }
    pub fn set_wd_dropping(&mut self, prio: usize, on: bool) {
        self.wd_dropping = (self.wd_dropping & !(1 << prio)) | (u8::from(on) << prio);
    }

    /// Bit `p` set: priority `p` has a frame queued.
    #[inline]
    pub fn queued(&self) -> u8 {
        self.queues.mask()
    }

    #[inline]
    pub fn push(&mut self, prio: usize, id: PacketId, len: u32) {
        self.queued_bytes[prio] += u64::from(len);
        self.queues.push(prio, Queued { id, len });
    }

    /// The oldest frame of priority `prio`, unless that priority is paused.
    #[inline]
    pub fn pop(&mut self, prio: usize) -> Option<Queued> {
        if self.paused & (1 << prio) != 0 {
            return None;
        }
        let q = self.queues.pop(prio)?;
        self.queued_bytes[prio] -= u64::from(q.len);
        Some(q)
    }

    /// Strict priority: the oldest frame of the highest priority that has
    /// one and is not paused.
    #[inline]
    pub fn pop_strict(&mut self) -> Option<(usize, Queued)> {
        let prio = highest(self.queues.mask() & !self.paused)?;
        self.pop(prio).map(|q| (prio, q))
    }

    /// The oldest frame of the queue the port's transmission selection
    /// picks (strict priority without one).
    #[inline]
    pub fn pop_next(&mut self) -> Option<(usize, Queued)> {
        if !self.selects {
            return self.pop_strict();
        }
        let prio = self.next_prio(0)?;
        self.pop(prio).map(|q| (prio, q))
    }

    /// The priority whose turn it is among the frames queued here and
    /// `more` (bit per priority: a NIC's QPs with something to send), the
    /// paused ones left out.
    #[inline]
    pub fn next_prio(&mut self, more: u8) -> Option<usize> {
        let backlog = self.queues.mask() | more;
        if !self.selects {
            return highest(backlog & !self.paused);
        }
        let s = self.select.as_deref_mut()?;
        s.pick(backlog, self.paused)
    }

    /// The port runs `s` instead of strict priority.
    pub fn set_select(&mut self, s: TxSelect) {
        self.select = Some(Box::new(s));
        self.selects = true;
    }

    /// Its transmission selection, if not strict priority.
    pub fn select(&self) -> Option<&TxSelect> {
        self.select.as_deref()
    }

    /// Whether it runs a transmission selection other than strict
    /// priority (whose frames [`Port::sent_from`] wants to hear of).
    #[inline]
    pub fn selects(&self) -> bool {
        self.selects
    }

    /// A frame left from queue `queue`: `len` bytes (no FCS) at priority
    /// `prio` on the wire, `wire` bytes of link time (for the selection's
    /// credit and its per-priority counters).
    #[inline]
    pub fn sent_from(&mut self, queue: usize, prio: usize, len: u32, wire: u64) {
        if let Some(s) = self.select.as_deref_mut() {
            s.sent(queue, prio, len, wire);
        }
    }

    /// Empties the queue of priority `prio` (the PFC watchdog drops it).
    pub fn drain_prio(&mut self, prio: usize) -> Vec<Queued> {
        self.queued_bytes[prio] = 0;
        std::iter::from_fn(|| self.queues.pop(prio)).collect()
    }

    /// Empties every queue (the link died), paused or not.
    pub fn drain(&mut self) -> Vec<(usize, Queued)> {
        self.queued_bytes = [0; PRIOS];
        self.queues.drain()
    }

    /// Bytes waiting in the queue of priority `prio`.
    #[inline]
    pub fn queued_bytes_of(&self, prio: usize) -> u64 {
        self.queued_bytes[prio]
    }

    /// The buffer refused a frame of priority `prio` for this port.
    #[inline]
    pub fn count_prio_drop(&mut self, prio: usize, lossless: bool) {
        self.prio_drops[prio] += 1;
        self.lossless_drops[prio] += u64::from(lossless);
    }
    pub fn prio_drops(&self, prio: usize) -> u64 {
        self.prio_drops[prio]
    }
    pub fn lossless_drops(&self, prio: usize) -> u64 {
        self.lossless_drops[prio]
    }

    // ----- ECN ----------------------------------------------------------

    /// The switch marked a packet leaving by priority `prio`'s queue.
    #[inline]
    pub fn count_ecn_mark(&mut self, prio: usize) {
        self.ecn_marked[prio] += 1;
    }
    pub fn ecn_marked(&self, prio: usize) -> u64 {
        self.ecn_marked[prio]
    }
    /// Bit `p` set: priority `p`'s egress queue marks (RED/ECN).
    pub fn marking(&self) -> u8 {
        self.marking
    }
    pub fn set_marking(&mut self, mask: u8) {
        self.marking = mask;
    }

    /// Bytes its egress queues have sent ([`Port::count_dequeued`]).
    pub fn dequeued_bytes(&self) -> u64 {
        self.dequeued_bytes
    }

    /// A frame of `len` bytes left its egress queues.
    pub fn count_dequeued(&mut self, len: u16) {
        self.dequeued_bytes += u64::from(len);
    }

    /// Bytes waiting in all queues.
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes.iter().sum()
    }

    /// Frames waiting in all queues.
    pub fn queued_frames(&self) -> usize {
        self.queues.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{L3, Packet, PacketPool};
    use core::net::Ipv4Addr;
    use roce_codec::frame::EthRepr;

    fn ids(n: usize) -> Vec<PacketId> {
        let mut pool = PacketPool::new();
        let pkt = Packet {
            eth: EthRepr {
                dst: [0; 6],
                src: [0; 6],
            },
            vlan: None,
            l3: L3::Arp {
                op: 1,
                sha: [0; 6],
                spa: Ipv4Addr::UNSPECIFIED,
                tha: [0; 6],
                tpa: Ipv4Addr::UNSPECIFIED,
            },
            ib: Default::default(),
            prio: 0,
            frame_len: 60,
            billed_len: 60,
            wire_extra: 24,
            src_qp: u32::MAX,
            ingress: u32::MAX,
            mad: u32::MAX,
            int: crate::packet::NO_INT,
            ts: Ps::ZERO,
        };
        (0..n).map(|_| pool.alloc(pkt)).collect()
    }

    fn port() -> Port {
        let owner = Owner::Switch { sw: 0, local: 0 };
        Port::new("sw.p1".into(), owner, 0, Rate::gbps(100), Ps::ZERO)
    }

    #[test]
    fn strict_priority_then_fifo_with_byte_accounting() {
        let id = ids(4);
        let mut p = port();
        p.push(0, id[0], 100);
        p.push(3, id[1], 200);
        p.push(0, id[2], 300);
        p.push(3, id[3], 400);
        assert_eq!(p.queued_bytes(), 1000);
        let order: Vec<(usize, PacketId)> =
            std::iter::from_fn(|| p.pop_strict().map(|(prio, q)| (prio, q.id))).collect();
        assert_eq!(
            order,
            [(3, id[1]), (3, id[3]), (0, id[0]), (0, id[2])],
            "priority 3 first, each priority in arrival order"
        );
        assert_eq!((p.queued_bytes(), p.queued_frames()), (0, 0));
    }

    #[test]
    fn highest_priority_of_a_mask() {
        assert_eq!(highest(0), None);
        assert_eq!(highest(0b0000_0001), Some(0));
        assert_eq!(highest(0b0001_0100), Some(4));
        assert_eq!(highest(0b1000_0001), Some(7));
        let mut q: PrioQueues<u32> = PrioQueues::default();
        q.push(2, 20);
        q.push(5, 50);
        q.push(2, 21);
        assert_eq!(q.mask(), 0b0010_0100);
        assert_eq!(q.pop(2), Some(20));
        assert_eq!(q.mask(), 0b0010_0100, "priority 2 still holds 21");
        assert_eq!(q.pop(2), Some(21));
        assert_eq!((q.mask(), q.pop(2)), (0b0010_0000, None));
    }

    #[test]
    fn a_paused_priority_waits_and_lower_ones_go() {
        let id = ids(2);
        let mut p = port();
        p.push(5, id[0], 100);
        p.push(1, id[1], 100);
        p.paused = 1 << 5;
        assert_eq!(
            p.pop_strict().map(|(prio, q)| (prio, q.id)),
            Some((1, id[1]))
        );
        assert!(p.pop_strict().is_none(), "priority 5 is paused");
        p.paused = 0;
        assert_eq!(
            p.pop_strict().map(|(prio, q)| (prio, q.id)),
            Some((5, id[0]))
        );
    }

    #[test]
    fn an_ets_port_serves_by_its_shares_and_counts_per_priority() {
        use select::{EtsConfig, Tsa};
        let id = ids(20);
        let mut p = port();
        let mut c = EtsConfig::strict_priority();
        (c.tsa[3], c.tsa[4], c.tcbw[3], c.tcbw[4]) = (Tsa::Ets, Tsa::Ets, 70, 30);
        c.round_bytes = 1000;
        p.set_select(TxSelect::ets(c));
        for i in 0..10 {
            p.push(3, id[i], 100);
            p.push(4, id[10 + i], 100);
        }
        let order: Vec<usize> = std::iter::from_fn(|| {
            let (prio, q) = p.pop_next()?;
            p.sent_from(prio, prio, q.len, 100);
            Some(prio)
        })
        .collect();
        // Turns of 700 and 300 bytes: 7 and 3 frames, then priority 3's
        // last 3, then priority 4 alone.
        let runs = [(3, 7), (4, 3), (3, 3), (4, 7)];
        let want: Vec<usize> = runs.iter().flat_map(|&(p, n)| vec![p; n]).collect();
        assert_eq!(order, want);
        let s = p.select().unwrap();
        assert_eq!(
            (s.tx_of(3), s.tx_of(4), s.tx_of(0)),
            ((1000, 10), (1000, 10), (0, 0))
        );
    }

    #[test]
    fn drain_empties_every_priority() {
        let id = ids(2);
        let mut p = port();
        p.push(7, id[0], 100);
        p.push(1, id[1], 60);
        assert_eq!(p.drain().len(), 2);
        assert_eq!((p.queued_bytes(), p.queued_frames()), (0, 0));
        assert!(p.pop_strict().is_none());
    }

    #[test]
    fn serialization_takes_the_wire_time_and_counts() {
        let mut p = port();
        // 1000 B + FCS, preamble/SFD and IFG = 1024 B on the wire at 100G.
        assert_eq!(p.start_tx(1000, crate::time::wire_bytes(1000)), Ps(81_920));
        // The last size's time is kept: another size, then the first again.
        assert_eq!(p.start_tx(60, crate::time::wire_bytes(60)), Ps(6_720));
        assert_eq!(p.start_tx(1000, crate::time::wire_bytes(1000)), Ps(81_920));
        p.set_tx_end(7);
        assert!(p.busy(6));
        assert!(!p.busy(7), "the TxDone itself runs with the wire free");
        assert_eq!(p.unscheduled_tx_done(), Some(7));
        p.tx_done_scheduled();
        assert_eq!(p.unscheduled_tx_done(), None);
        p.count_drop(DropReason::Buffer);
        let c = p.counters();
        assert_eq!((c.tx_bytes, c.tx_packets), (2060, 3));
        assert_eq!((c.drops, c.drops_buffer), (1, 1));
    }
}
