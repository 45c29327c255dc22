//! A deterministic bench for two RC QPs: QP `a` and QP `b` joined by two
//! one-way channels, each with a rate, a propagation delay and a loss rule.
//!
//! ```text
//!            ┌──── channel A→B: serialize at rate, + delay, loss ────┐
//!   RcQp a ──┤                                                       ├── RcQp b
//!            └──── channel B→A: serialize at rate, + delay, loss ────┘
//! ```
//! It is the transport's test harness (unit tests, property tests, the
//! timing examples in the book) and a reference for how the network side
//! drives a QP. Same-time events run in a fixed order: arrivals (A→B
//! channel first), then timers (a first), then transmissions (a first).
//! Random loss draws from a ChaCha8 stream seeded by the caller, so a run
//! is a pure function of its inputs.

use super::{RcQp, Workload};
use crate::time::{Ps, Rate};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use roce_codec::IbRepr;
use std::collections::{BTreeSet, VecDeque};
use std::fmt;

/// Direction of a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    AtoB,
    BtoA,
}

impl Dir {
    fn index(self) -> usize {
        match self {
            Dir::AtoB => 0,
            Dir::BtoA => 1,
        }
    }
}

/// Which packets a channel drops. Packets are numbered 0, 1, 2, ... per
/// channel in the order they are sent.
pub enum Loss {
    None,
    /// Each packet independently with probability `p`.
    Random(f64),
    /// The packets with these numbers.
    Indices(BTreeSet<u64>),
    /// Every packet: a dead path.
    All,
    /// Any rule over (packet number, packet).
    Custom(LossFn),
}

/// A custom loss rule: (packet number on the channel, packet) -> drop?
pub type LossFn = Box<dyn FnMut(u64, &IbRepr) -> bool>;

impl fmt::Debug for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loss::None => write!(f, "None"),
            Loss::Random(p) => write!(f, "Random({p})"),
            Loss::Indices(s) => write!(f, "Indices({s:?})"),
            Loss::All => write!(f, "All"),
            Loss::Custom(_) => write!(f, "Custom(..)"),
        }
    }
}

/// One packet put on a channel, for tests that inspect the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireEvent {
    /// When its first bit left the sender.
    pub at: Ps,
    pub dir: Dir,
    pub pkt: IbRepr,
    pub dropped: bool,
}

#[derive(Debug)]
struct Channel {
    loss: Loss,
    busy_until: Ps,
    in_flight: VecDeque<(Ps, IbRepr)>,
    sent: u64,
    dropped: u64,
}

/// Two QPs and the channels between them.
#[derive(Debug)]
pub struct Loopback {
    a: RcQp,
    b: RcQp,
    now: Ps,
    rate: Rate,
    delay: Ps,
    /// Bytes a packet occupies beyond its IB part (Ethernet, IPv4, UDP,
    /// FCS, preamble, IFG).
    overhead: u64,
    ch: [Channel; 2],
    rng: ChaCha8Rng,
    trace: Option<Vec<WireEvent>>,
    steps: u64,
}

impl Loopback {
    /// `a` and `b` should name each other as destination QP.
    pub fn new(a: RcQp, b: RcQp, rate: Rate, delay: Ps, seed: u64) -> Loopback {
        let ch = || Channel {
            loss: Loss::None,
            busy_until: Ps::ZERO,
            in_flight: VecDeque::new(),
            sent: 0,
            dropped: 0,
        };
        Loopback {
            a,
            b,
            now: Ps::ZERO,
            rate,
            delay,
            overhead: 66,
            ch: [ch(), ch()],
            rng: ChaCha8Rng::seed_from_u64(seed),
            trace: None,
            steps: 0,
        }
    }

    pub fn set_loss(&mut self, dir: Dir, loss: Loss) {
        self.ch[dir.index()].loss = loss;
    }

    /// Keeps every packet sent from now on for [`Loopback::trace`].
    pub fn record_trace(&mut self) {
        self.trace.get_or_insert_with(Vec::new);
    }

    pub fn trace(&self) -> &[WireEvent] {
        self.trace.as_deref().unwrap_or(&[])
    }

    pub fn a(&self) -> &RcQp {
        &self.a
    }
    pub fn b(&self) -> &RcQp {
        &self.b
    }
    pub fn a_mut(&mut self) -> &mut RcQp {
        &mut self.a
    }
    pub fn b_mut(&mut self) -> &mut RcQp {
        &mut self.b
    }

    pub fn now(&self) -> Ps {
        self.now
    }

    /// Events processed so far.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Packets sent and dropped on a channel.
    pub fn sent(&self, dir: Dir) -> (u64, u64) {
        let c = &self.ch[dir.index()];
        (c.sent, c.dropped)
    }

    fn qp(&self, dir: Dir) -> &RcQp {
        match dir {
            Dir::AtoB => &self.a,
            Dir::BtoA => &self.b,
        }
    }

    /// The time of the next event, if any.
    pub fn next_event(&self) -> Option<Ps> {
        let mut t: Option<Ps> = None;
        let mut take = |x: Ps| t = Some(t.map_or(x, |t| t.min(x)));
        for dir in [Dir::AtoB, Dir::BtoA] {
            let ch = &self.ch[dir.index()];
            if let Some(&(at, _)) = ch.in_flight.front() {
                take(at);
            }
            let qp = self.qp(dir);
            if let Some(ready) = qp.tx_ready_at(self.now) {
                take(ready.max(ch.busy_until));
            }
            if let Some(timer) = qp.next_timer() {
                take(timer.max(self.now));
            }
        }
        t
    }

    /// Processes everything due at the next event time. Returns `false`
    /// when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        let Some(t) = self.next_event() else {
            return false;
        };
        self.now = t;
        self.steps += 1;
        for dir in [Dir::AtoB, Dir::BtoA] {
            while let Some(&(at, pkt)) = self.ch[dir.index()].in_flight.front() {
                if at > t {
                    break;
                }
                self.ch[dir.index()].in_flight.pop_front();
                let rx = match dir {
                    Dir::AtoB => &mut self.b,
                    Dir::BtoA => &mut self.a,
                };
                rx.on_receive(&pkt, false, t);
            }
        }
        for qp in [&mut self.a, &mut self.b] {
            if qp.next_timer().is_some_and(|d| d <= t) {
                qp.on_timer(t);
            }
        }
        for dir in [Dir::AtoB, Dir::BtoA] {
            let i = dir.index();
            if self.ch[i].busy_until > t {
                continue;
            }
            let tx = match dir {
                Dir::AtoB => &mut self.a,
                Dir::BtoA => &mut self.b,
            };
            let Some(pkt) = tx.next_tx(t) else {
                continue;
            };
            let wire = self.rate.tx_time(pkt.buffer_len() as u64 + self.overhead);
            let ch = &mut self.ch[i];
            let n = ch.sent;
            ch.sent += 1;
            ch.busy_until = t + wire;
            let dropped = match &mut ch.loss {
                Loss::None => false,
                Loss::Random(p) => {
                    // 53 random bits, as a uniform f64 in [0, 1).
                    let u = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    u < *p
                }
                Loss::Indices(set) => set.contains(&n),
                Loss::All => true,
                Loss::Custom(f) => f(n, &pkt),
            };
            if dropped {
                ch.dropped += 1;
            } else {
                ch.in_flight.push_back((t + wire + self.delay, pkt));
            }
            if let Some(trace) = &mut self.trace {
                trace.push(WireEvent {
                    at: t,
                    dir,
                    pkt,
                    dropped,
                });
            }
        }
        true
    }

    /// Steps until nothing is left, the clock passes `until`, or
    /// `max_steps` events ran. Returns whether it went quiet.
    pub fn run_until(&mut self, until: Ps, max_steps: u64) -> bool {
        for _ in 0..max_steps {
            match self.next_event() {
                None => return true,
                Some(t) if t > until => return false,
                Some(_) => {
                    self.step();
                }
            }
        }
        false
    }

    /// Runs QP pair `i` of `workload`: `a` is the client (requester), `b`
    /// the server. Stops when the workload is done for this pair and the
    /// wire is quiet, at `until`, or after `max_steps` events. Returns
    /// whether the pair finished.
    pub fn run_workload(
        &mut self,
        workload: &mut Workload,
        i: usize,
        until: Ps,
        max_steps: u64,
    ) -> bool {
        let mut wake: Option<Ps> = None;
        for _ in 0..max_steps {
            workload.drive_responder(i, &mut self.b, self.now);
            let w = workload.drive_requester(i, &mut self.a, self.now);
            wake = match (wake.filter(|&x| x > self.now), w) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            let next = match (self.next_event(), wake) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            let Some(t) = next else {
                return workload.qp_done(i);
            };
            if t > until {
                return false;
            }
            if self.next_event() == Some(t) {
                self.step();
            } else {
                self.now = t;
            }
        }
        false
    }
}
