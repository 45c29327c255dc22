//! The discrete-event core: a priority queue of `(time, origin, seq)` keys.
//!
//! ```text
//!   schedule(t, ev) ──▶ heap of Entry{t, origin, seq, ev} ──pop min──▶ World::handle(ev)
//!     origin = the component whose event is running              │  (sets the origin:
//!     seq    = that origin's own counter                         │   its component's)
//!                                  ▲                             │
//!                                  └──────── new events ◀────────┘
//! ```
//!
//! Events of equal time run in the order of their *origin*, the component
//! (a host, a switch, a flow's start; 0 for the run itself: the scenario's
//! set-up and the samples) whose event scheduled them, and then in the
//! order that component scheduled them (`seq` counts per origin). So a run
//! is a pure function of the scenario and the seed: nothing depends on hash
//! order, addresses or threads, and nothing on how the fabric is cut into
//! parts either. A component's events come, by induction, in the same order
//! whichever part runs it, and with them the keys of the events it
//! schedules; a global insertion counter would instead order two parts'
//! equal-time events by which part happened to run first. Events are
//! small `Copy` values naming a component by index; packets travel as ids
//! into a slab ([`crate::packet::PacketPool`]), so scheduling never allocates
//! once the heap has grown to its working size.
//!
//! Most pending events are frames in flight, and the frames in flight
//! toward one port arrive in the order they were sent. They wait in that
//! port's *lane* (a FIFO), and only the lane's head is in the heap, under
//! the key it was given when it was scheduled; when it is taken, the next
//! one takes its place at the top of the heap, with its own key, and sinks
//! to where it belongs (one sift, where a pop and a push would be two):
//!
//! ```text
//!   heap: … Arrive{p, k1} …        lane p: [k2, k3, k4]   (k1 < k2 < k3 < k4)
//!   take k1 ──▶ k2 in its place    lane p: [k3, k4]
//! ```
//!
//! The heap stays small (a few entries per link rather than every frame on
//! it) and the order is exactly the heap's: a lane's later entries cannot be
//! the minimum while its head, with a smaller key, is pending.
//!
//! An event that may turn out not to be needed can *reserve* its key
//! ([`Scheduler::reserve`]) instead: scheduled later with that key
//! ([`Scheduler::at_key`]) it runs exactly where it would have, and never
//! scheduled it costs nothing. A port's `TxDone` is such an event
//! (`World::schedule_tx_done`): most find nothing to send.
//!
//! Events due more than `HORIZON` ahead (timers, flows' starts: thousands
//! in a fabric, most of them never the next) wait in a second heap; the
//! next event is the smaller of the two heaps' first. The near heap, which
//! nearly every event goes through, stays a few hundred entries deep.

use std::collections::VecDeque;

mod heap;
use heap::Heap;

use crate::packet::PacketId;
use crate::time::Ps;

/// Something that happens to one component at one time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The last bit of the frame on a port's wire left: the port may start
    /// its next frame.
    TxDone { port: u32 },
    /// The last bit of a frame arrived at a port.
    Arrive { port: u32, pkt: PacketId },
    /// A queue pair's rate limiter or pacing said it may send again.
    QpWake { qp: u32 },
    /// A queue pair's retransmission or RNR timer may have expired.
    QpTimer { qp: u32 },
    /// A queue pair's DCQCN reaction point may have a rate cut or a rate
    /// increase due.
    RpDeadline { qp: u32 },
    /// A link's carrier goes down or up (both directions).
    Link { link: u32, up: bool },
    /// A bond's MII monitor polls its slaves.
    Miimon { bond: u32 },
    /// A workload's connection setup (frames-mode ARP) may proceed.
    ArpStart { conn: u32 },
    /// A workload's client opens its TCP connection (`connect = "socket"`).
    SocketStart { setup: u32 },
    /// A collective's sending proxy opens the TCP connection of one
    /// network connection (`[[collective]] connect = "socket"`).
    NcclSetupStart { setup: u32 },
    /// A workload's client starts its RDMA CM set-up (`connect = "rdma_cm"`).
    CmStart { setup: u32 },
    /// The response timeout of a CM REQ (the `tries`-th sent).
    CmTimeout { setup: u32, qp: u16, tries: u8 },
    /// A host's ARP request on interface `iface` for `next_hop` may need
    /// sending again.
    ArpRetry {
        host: u32,
        iface: u32,
        next_hop: core::net::Ipv4Addr,
    },
    /// A frame a host's kernel prepared (an ARP reply) goes to its port.
    KernelTx { port: u32, pkt: PacketId },
    /// A client QP's workload asked to be driven at this time (a scheduled
    /// message, the end of a `-D` run, the workload's start).
    Drive { qp: u32 },
    /// A flow (`[[traffic]]`) starts: its QP pair is made.
    FlowStart { flow: u32 },
    /// Take one sample of every time series.
    Sample,
    /// A port's PFC XOFF for `prio` is due again if it still wants it.
    PfcRefresh { port: u32, prio: u8 },
    /// A pause received by `port` may have run out.
    PauseExpire { port: u32 },
    /// The oldest pause `port` received takes effect (its reaction delay
    /// after its last bit).
    PauseEffect { port: u32 },
    /// A host NIC's receive buffer hands its oldest frame to the host.
    RxDrain { port: u32 },
    /// A host NIC's stall detection looks at its pausing.
    NicStall { port: u32 },
    /// The PFC watchdog looks at (`port`, `prio`).
    Watchdog { port: u32, prio: u8 },
}

/// `key` = time << 64 | origin << 40 | seq: one 128-bit comparison orders
/// by time, then origin, then the origin's own order.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    ev: Event,
}

impl Entry {
    fn at(&self) -> Ps {
        Scheduler::time_of(self.key)
    }
}

/// The frames in flight toward one port, in arrival order.
#[derive(Debug, Default)]
struct Lane {
    /// The key of the lane's entry in the heap, if it has one there.
    head: Option<u128>,
    /// The key of the latest arrival the lane holds.
    last: u128,
    /// The arrivals behind the head: (key, frame).
    waiting: VecDeque<(u128, PacketId)>,
}

/// Bits of a key's per-origin counter: 10^12 events per origin.
const SEQ_BITS: u32 = 40;
/// Origins a key can name (hosts + switches + flows + 1).
pub const MAX_ORIGINS: usize = 1 << (64 - SEQ_BITS);
/// The origin of the run itself: the scenario's set-up and every sample.
pub const RUN_ORIGIN: u32 = 0;

/// Events further ahead than this (20 us) go to the far heap.
const HORIZON: Ps = Ps(20_000_000);

/// The event queue and the clock.
#[derive(Debug, Default)]
pub struct Scheduler {
    /// Events due within [`HORIZON`] of when they were scheduled
    /// (module [`heap`]).
    heap: Heap,
    /// Events further ahead: timers, flows' starts.
    far: Heap,
    /// `lanes[port]`: arrivals at `port` behind the one in the heap.
    lanes: Vec<Lane>,
    /// Events in lanes, not in the heap.
    waiting: usize,
    /// The origin of the events scheduled now ([`Scheduler::set_origin`]).
    origin: u32,
    /// The current origin's next `seq`.
    seq: u64,
    /// Every other origin's next `seq`, saved while it is not current.
    seqs: Vec<u64>,
    now: Ps,
    /// The key of the event taken last: an event whose key is below it
    /// has run (or, reserved and never scheduled, would have).
    current: u128,
    executed: u64,
    /// See [`Scheduler::lazy_tx_done`].
    lazy_tx_done: bool,
    /// Tests only: every `TxDone` is scheduled, as before they could be
    /// left out, to compare the two.
    #[cfg(feature = "test-hooks")]
    eager_tx_done: bool,
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler {
            heap: Heap::with_capacity(1 << 12),
            ..Scheduler::default()
        }
    }

    pub fn now(&self) -> Ps {
        self.now
    }

    /// Events taken off the queue so far.
    pub fn executed(&self) -> u64 {
        self.executed
    }

    pub fn pending(&self) -> usize {
        self.heap.len() + self.far.len() + self.waiting
    }

    /// Makes `origin` the component whose events are scheduled from now
    /// on (the world sets it to the component of every event it runs).
    #[inline]
    pub fn set_origin(&mut self, origin: u32) {
        if origin == self.origin {
            return;
        }
        debug_assert!((origin as usize) < MAX_ORIGINS, "origin {origin}");
        let (old, new) = (self.origin as usize, origin as usize);
        if self.seqs.len() <= old.max(new) {
            self.seqs.resize(old.max(new) + 1, 0);
        }
        self.seqs[old] = self.seq;
        self.seq = self.seqs[new];
        self.origin = origin;
    }

    /// The origin of the events scheduled now.
    pub fn origin(&self) -> u32 {
        self.origin
    }

    /// The key of an event scheduled now for `at`: the clock if `at` is in
    /// the past, the current origin and its next number. A `Sample` is the
    /// run's own, whichever component's event asks for it.
    #[inline]
    fn key(&mut self, at: Ps, ev: &Event) -> (Ps, u128) {
        debug_assert!(at >= self.now, "event {ev:?} scheduled in the past");
        let at = at.max(self.now);
        if matches!(ev, Event::Sample) && self.origin != RUN_ORIGIN {
            let origin = self.origin;
            self.set_origin(RUN_ORIGIN);
            let k = self.key(at, ev);
            self.set_origin(origin);
            return k;
        }
        debug_assert!(self.seq < 1 << SEQ_BITS);
        let key =
            (u128::from(at.0) << 64) | (u128::from(self.origin) << SEQ_BITS) | u128::from(self.seq);
        self.seq += 1;
        (at, key)
    }

    /// The key a frame sent now to arrive at `at` takes, for a part that
    /// hands the frame to another ([`Scheduler::arrive_key`] there): as an
    /// arrival scheduled here would take it.
    pub fn arrival_key(&mut self, at: Ps) -> u128 {
        self.key(at, &Event::TxDone { port: 0 }).1
    }

    /// Schedules `ev` at `at`, which must not be in the past.
    pub fn at(&mut self, at: Ps, ev: Event) {
        let (_, key) = self.key(at, &ev);
        self.push(key, ev);
    }

    /// Reserves the place in the order of an event at `at` that may never
    /// be scheduled: the key it would have had if scheduled now. Given to
    /// [`Scheduler::at_key`] later, the event runs exactly where it would
    /// have; never given, it costs nothing.
    pub fn reserve(&mut self, at: Ps, ev: &Event) -> u128 {
        self.key(at, ev).1
    }

    /// Schedules `ev` under a key from [`Scheduler::reserve`], which must
    /// not have run yet (be above [`Scheduler::current`]).
    pub fn at_key(&mut self, key: u128, ev: Event) {
        debug_assert!(
            key > self.current,
            "event {ev:?} scheduled behind the clock"
        );
        self.push(key, ev);
    }

    fn push(&mut self, key: u128, ev: Event) {
        if Self::time_of(key).0 - self.now.0 > HORIZON.0 {
            self.far.push(key, ev);
        } else {
            self.heap.push(key, ev);
        }
    }

    /// The key of the event taken last (0 before the first).
    #[inline]
    pub fn current(&self) -> u128 {
        self.current
    }

    /// The time of a key.
    #[inline]
    pub fn time_of(key: u128) -> Ps {
        Ps((key >> 64) as u64)
    }

    /// Schedules the arrival of frame `pkt` at `port` at `at`: behind the
    /// port's earlier arrivals in its lane, or in the heap if it is the
    /// lane's first (or, which links do not do, overtakes an earlier one).
    pub fn arrive(&mut self, at: Ps, port: u32, pkt: PacketId) {
        let ev = Event::Arrive { port, pkt };
        let (_, key) = self.key(at, &ev);
        // A fresh key is never behind the clock; it may equal `current` only
        // as the run's very first key (0), before anything was taken.
        self.lane_arrival(key, port, pkt);
    }

    /// [`Scheduler::arrive`] under a key made elsewhere
    /// ([`Scheduler::arrival_key`]), which must not have run yet.
    #[inline]
    pub fn arrive_key(&mut self, key: u128, port: u32, pkt: PacketId) {
        debug_assert!(key > self.current, "arrival behind the clock");
        self.lane_arrival(key, port, pkt);
    }

    #[inline]
    fn lane_arrival(&mut self, key: u128, port: u32, pkt: PacketId) {
        let ev = Event::Arrive { port, pkt };
        let i = port as usize;
        if i >= self.lanes.len() {
            self.lanes.resize_with(i + 1, Lane::default);
        }
        let lane = &mut self.lanes[i];
        if lane.head.is_none() {
            lane.head = Some(key);
            lane.last = key;
        } else if key > lane.last {
            lane.last = key;
            lane.waiting.push_back((key, pkt));
            self.waiting += 1;
            return;
        }
        self.heap.push(key, ev);
    }

    /// The lane's head `key` is being taken: its next arrival, which is
    /// to take its place in the heap, if it has one.
    #[inline]
    fn advance(lanes: &mut [Lane], waiting: &mut usize, port: u32, key: u128) -> Option<Entry> {
        let lane = lanes.get_mut(port as usize)?;
        if lane.head != Some(key) {
            return None;
        }
        let next = lane.waiting.pop_front();
        lane.head = next.map(|(key, _)| key);
        let (key, pkt) = next?;
        *waiting -= 1;
        Some(Entry {
            key,
            ev: Event::Arrive { port, pkt },
        })
    }

    /// Schedules `ev` after `delay`.
    pub fn after(&mut self, delay: Ps, ev: Event) {
        self.at(self.now + delay, ev);
    }

    /// Whether the next event is the far heap's (else the near one's, if
    /// there is one).
    #[inline]
    fn far_first(&self) -> bool {
        match (self.heap.peek_key(), self.far.peek_key()) {
            (Some(n), Some(f)) => f < n,
            (n, f) => n.is_none() && f.is_some(),
        }
    }

    /// The entry [`Scheduler::pop`] would take now.
    #[inline]
    fn next(&self) -> Option<Entry> {
        self.head().1
    }

    /// Whether the next entry is the far heap's, and that entry.
    #[inline]
    fn head(&self) -> (bool, Option<Entry>) {
        let far = self.far_first();
        let h = if far { &self.far } else { &self.heap };
        (far, h.peek().map(|(key, ev)| Entry { key, ev }))
    }

    /// Whether the event running counts as activity (a frame's `TxDone`
    /// or arrival, a QP's wake-up): a frame it starts then needs no
    /// `TxDone` event unless its port has more to send
    /// (`World::transmit`), the event standing for the activity the
    /// `TxDone` would have been.
    #[inline]
    pub fn lazy_tx_done(&self) -> bool {
        self.lazy_tx_done
    }
    /// Says whether the event about to run counts as activity.
    #[inline]
    pub fn set_lazy_tx_done(&mut self, lazy: bool) {
        #[cfg(feature = "test-hooks")]
        let lazy = lazy && !self.eager_tx_done;
        self.lazy_tx_done = lazy;
    }
    /// Tests only: every `TxDone` is scheduled.
    #[cfg(feature = "test-hooks")]
    pub fn schedule_every_tx_done(&mut self) {
        self.eager_tx_done = true;
    }

    /// Sets the count of events taken (a partitioned run's, added up).
    pub fn set_executed(&mut self, n: u64) {
        self.executed = n;
    }

    /// Every pending event, in no particular order.
    pub fn pending_events(&self) -> impl Iterator<Item = Event> + '_ {
        let lanes = self.lanes.iter().enumerate().flat_map(|(port, l)| {
            l.waiting.iter().map(move |&(_, pkt)| Event::Arrive {
                port: port as u32,
                pkt,
            })
        });
        self.heap.events().chain(self.far.events()).chain(lanes)
    }

    /// Time of the next event.
    pub fn peek_time(&self) -> Option<Ps> {
        self.next().map(|e| e.at())
    }

    /// The event that [`Scheduler::pop`] would take now.
    #[inline]
    pub fn peek(&self) -> Option<Event> {
        self.next().map(|e| e.ev)
    }

    /// Takes the next event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(Ps, Event)> {
        self.pop_until(Ps(u64::MAX))
    }

    /// Takes the next event if it is due at or before `limit`: a loop's
    /// peek and pop in one, choosing the heap once.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: Ps) -> Option<(Ps, Event)> {
        let (far, next) = self.head();
        let e = next?;
        if e.at() > limit {
            return None;
        }
        if far {
            self.far.pop();
        } else {
            // An arrival's successor in its lane takes its place at the top
            // and sinks: one sift where a pop and a push are two.
            let next = match e.ev {
                Event::Arrive { port, .. } => {
                    Self::advance(&mut self.lanes, &mut self.waiting, port, e.key)
                }
                _ => None,
            };
            match next {
                Some(n) => self.heap.replace_top(n.key, n.ev),
                None => {
                    self.heap.pop();
                }
            }
        }
        self.now = e.at();
        self.current = e.key;
        self.executed += 1;
        Some((self.now, e.ev))
    }
}

#[cfg(test)]
mod tests;
