//! The discrete-event core: a priority queue of `(time, seq)` keys.
//!
//! ```text
//!   schedule(t, ev) ──▶ heap of Entry{t, seq, ev} ──pop min (t, seq)──▶ World::handle(ev)
//!                         seq = insertion counter                            │
//!                                  ▲                                         │
//!                                  └────────── new events ◀──────────────────┘
//! ```
//!
//! Events of equal time run in the order they were scheduled (`seq` is a
//! global insertion counter), so a run is a pure function of the scenario and
//! the seed: nothing depends on hash order, addresses or threads. Events are
//! small `Copy` values naming a component by index; packets travel as ids
//! into a slab ([`crate::packet::PacketPool`]), so scheduling never allocates
//! once the heap has grown to its working size.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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
    /// A host NIC's receive buffer hands its oldest frame to the host.
    RxDrain { port: u32 },
    /// A host NIC's stall detection looks at its pausing.
    NicStall { port: u32 },
    /// The PFC watchdog looks at (`port`, `prio`).
    Watchdog { port: u32, prio: u8 },
}

/// `key` = time << 64 | seq: one 128-bit comparison orders by time, then
/// by insertion.
#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    ev: Event,
}

impl Entry {
    fn at(&self) -> Ps {
        Ps((self.key >> 64) as u64)
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// The event queue and the clock.
#[derive(Debug, Default)]
pub struct Scheduler {
    heap: BinaryHeap<Entry>,
    seq: u64,
    now: Ps,
    executed: u64,
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler {
            heap: BinaryHeap::with_capacity(1 << 12),
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
        self.heap.len()
    }

    /// Schedules `ev` at `at`, which must not be in the past.
    pub fn at(&mut self, at: Ps, ev: Event) {
        debug_assert!(at >= self.now, "event {ev:?} scheduled in the past");
        let at = at.max(self.now);
        self.heap.push(Entry {
            key: (u128::from(at.0) << 64) | u128::from(self.seq),
            ev,
        });
        self.seq += 1;
    }

    /// Schedules `ev` after `delay`.
    pub fn after(&mut self, delay: Ps, ev: Event) {
        self.at(self.now + delay, ev);
    }

    /// Time of the next event.
    pub fn peek_time(&self) -> Option<Ps> {
        self.heap.peek().map(Entry::at)
    }

    /// Takes the next event and advances the clock to it.
    pub fn pop(&mut self) -> Option<(Ps, Event)> {
        let e = self.heap.pop()?;
        self.now = e.at();
        self.executed += 1;
        Some((self.now, e.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_run_in_insertion_order() {
        let mut s = Scheduler::new();
        s.at(Ps(10), Event::QpWake { qp: 1 });
        s.at(Ps(5), Event::QpWake { qp: 0 });
        s.at(Ps(10), Event::QpWake { qp: 2 });
        s.at(Ps(10), Event::QpWake { qp: 3 });
        let order: Vec<_> = std::iter::from_fn(|| s.pop())
            .map(|(t, e)| match e {
                Event::QpWake { qp } => (t.0, qp),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, [(5, 0), (10, 1), (10, 2), (10, 3)]);
        assert_eq!(s.executed(), 4);
        assert_eq!(s.now(), Ps(10));
    }

    #[test]
    fn after_is_relative_to_now() {
        let mut s = Scheduler::new();
        s.at(Ps(100), Event::Sample);
        s.pop();
        s.after(Ps(5), Event::Sample);
        assert_eq!(s.peek_time(), Some(Ps(105)));
    }
}
