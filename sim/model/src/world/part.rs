//! A world that simulates part of a network: some of its switches and
//! hosts (with their ports, bonds and QPs) are simulated *elsewhere*, by
//! another world built from the same scenario. This is all the model
//! knows of a partitioned run (`[sim] partitions`); how the fabric is cut,
//! the threads, their meetings and the samples across the parts are the
//! `rocesim` crate's parallel run, a layer over this one: nothing here
//! starts a thread or waits.
//!
//! ```text
//!        this world                          the world elsewhere
//!   ┌───────────────────┐   departures   ┌───────────────────────┐
//!   │ switch ── port ───┼───── Mail ────▶│ port (elsewhere here) │
//!   │   (here)          │◀──── Mail ─────┼── deliver()           │
//!   └───────────────────┘                └───────────────────────┘
//! ```
//!
//! Where a component is simulated is network state, kept on the component
//! ([`World::confine`]): a port that is elsewhere, and on each port whether
//! its peer is, which is what sending a frame asks (`World::transmit`): a
//! frame for a port simulated elsewhere leaves as a [`Mail`] departure
//! instead of an arrival in this world's scheduler. Arrivals from
//! elsewhere come in with [`World::deliver`].
//!
//! Each part is a whole world, built from the same scenario, and takes
//! every event; it runs those of its own components ([`World::run_window`])
//! and counts the others as not its own. A flow's start runs in every part
//! (each makes its QP pair, so QP indices agree), but only the part of its
//! client drives it. A capture tap records in the part of its port (both
//! directions of a port are its part's events). At the end the parts'
//! components move into one world ([`World::absorb`]), and the run's
//! outputs are read from it as from a serial run.
//!
//! Determinism: a split run's outputs are the serial run's, byte for
//! byte, for any cut. Events of equal time order by their origin and the
//! origin's own count ([`crate::engine`]), which do not depend on the part
//! that runs them, and a frame from elsewhere keeps the key its sender
//! gave its arrival ([`Mail::to`]), so it runs where it would have run in
//! one world. A link draws its losses and CE marks from one random stream
//! per direction, so the part that sends a direction draws what the serial
//! run draws for it.

use super::port::Owner;
use super::tap::Tap;
use super::{Component, World};
use crate::engine::Event;
use crate::packet::{NO_INT, Packet};
use crate::time::Ps;
use roce_codec::IntRepr;

/// Frames on their way to ports simulated elsewhere, in the order sent:
/// each frame's (arrival's key, port) and the frame, apart (together, each took
/// six cache lines to cross where a frame fills five), and the earliest
/// arrival among them, which the meeting after the window needs (reading
/// every frame's time for it cost the 2:1 star's coordinator 3-10 ms).
///
/// A frame's telemetry travels beside it in `ints` (its `int` then
/// indexes `ints`, not a pool).
#[derive(Debug, Default)]
pub struct Mail {
    /// The key ([`crate::engine::Scheduler::arrival_key`]) the sender gave
    /// each frame's arrival, kept across the parts: the receiving part
    /// runs it exactly where a serial run would.
    pub to: Vec<(u128, u32)>,
    pub frames: Vec<Packet>,
    pub ints: Vec<IntRepr>,
    pub first: Option<Ps>,
    /// What a settled end of a flow tells the part of its peer, so that
    /// both can retire ([`super::retire::Note`]).
    pub notes: Vec<super::retire::Note>,
}

impl Mail {
    /// Sends frame `pkt`, arriving at `port` under `key`.
    #[inline]
    pub fn send(&mut self, key: u128, port: u32, pkt: &Packet, int: Option<&IntRepr>) {
        self.to.push((key, port));
        let at = crate::engine::Scheduler::time_of(key);
        // Copied once, straight into the buffer: pushed by value, it went
        // through a copy on the stack first. That, and the same on the way
        // in, cost the 2:1 star's part 0 51 M instructions.
        self.frames.extend_from_slice(std::slice::from_ref(pkt));
        let last = self.frames.last_mut().expect("just pushed");
        last.int = match int {
            Some(i) => {
                self.ints.push(*i);
                (self.ints.len() - 1) as u32
            }
            None => NO_INT,
        };
        self.first = earliest(self.first, Some(at));
    }

    pub fn is_empty(&self) -> bool {
        self.to.is_empty()
    }

    /// Moves every frame of `self` to the end of `to`: the buffers trade
    /// places when `to` is empty, as it is unless a sample came between
    /// two windows.
    pub fn move_to(&mut self, to: &mut Mail) {
        to.notes.append(&mut self.notes);
        if to.to.is_empty() {
            std::mem::swap(&mut self.to, &mut to.to);
            std::mem::swap(&mut self.frames, &mut to.frames);
            std::mem::swap(&mut self.ints, &mut to.ints);
            to.first = self.first;
        } else {
            to.to.append(&mut self.to);
            let base = to.ints.len() as u32;
            for f in self.frames.iter_mut().filter(|f| f.int != NO_INT) {
                f.int += base;
            }
            to.frames.append(&mut self.frames);
            to.ints.append(&mut self.ints);
            to.first = earliest(to.first, self.first);
        }
        self.first = None;
    }
}

/// What a part did in a window ([`World::run_window`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Window {
    /// The earliest activity in it.
    pub first_activity: Option<Ps>,
    /// It stopped at its `Sample`, which the caller takes across parts.
    pub at_sample: bool,
    /// Events taken that another part counts (a flow's start whose client
    /// is not ours) or that were not ours to run.
    pub foreign: u64,
}

/// What another part still held when a partitioned run ended, for
/// [`World::check_invariants_with`]: its packets (queued in ports that
/// moved here, or in flight), and whether it had events left or frames
/// were on their way between the parts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Leftover {
    pub live: usize,
    pub pending: bool,
}

impl World {
    /// Makes this world simulate only the hosts and switches marked `true`
    /// (by index); the others, their ports, bonds and QPs are elsewhere.
    pub fn confine(&mut self, host_here: &[bool], switch_here: &[bool]) {
        for (h, &here) in self.hosts.iter_mut().zip(host_here) {
            h.elsewhere = !here;
        }
        for (s, &here) in self.switches.iter_mut().zip(switch_here) {
            s.set_elsewhere(!here);
        }
        for p in &mut self.ports {
            let here = match p.owner() {
                Owner::Switch { sw, .. } => switch_here[sw as usize],
                Owner::Host { host, .. } => host_here[host as usize],
            };
            p.set_elsewhere(!here);
        }
        self.mark_peers();
    }

    /// Each port learns whether its peer is simulated elsewhere.
    fn mark_peers(&mut self) {
        for i in 0..self.ports.len() {
            let peer = self.ports[i].peer() as usize;
            let there = self.ports.get(peer).is_some_and(|p| p.elsewhere());
            self.ports[i].set_peer_elsewhere(there);
        }
    }

    /// Whether this world simulates QP `q` (its host is here).
    #[inline]
    pub fn owns_qp(&self, q: u32) -> bool {
        !self.hosts[self.qps[q as usize].host as usize].elsewhere
    }

    /// Whether this world counts flow `i`'s start (its client is here).
    pub fn owns_flow(&self, i: u32) -> bool {
        self.pending
            .get(i as usize)
            .is_none_or(|p| !self.hosts[p.client_host() as usize].elsewhere)
    }

    /// Whether this world runs `ev`: its component is here.
    fn owns(&self, ev: &Event) -> bool {
        match super::component_of(ev) {
            Component::Port(port) => !self.ports[port as usize].elsewhere(),
            Component::Qp(qp) => self.owns_qp(qp),
            Component::Bond(bond) => !self.hosts[self.bonds[bond as usize].host as usize].elsewhere,
            Component::Flow(flow) => self.owns_flow(flow),
            // Every part runs these: a partitioned run refuses the
            // scenarios that have them (link changes, ARP on the wire,
            // connection set-up), and `Sample` never reaches here.
            Component::HostSetUp(_) | Component::Run => true,
        }
    }

    /// Runs this world's events before `end`, stopping early at a
    /// `Sample` (which the caller takes across the parts).
    pub fn run_window(&mut self, end: Ps) -> Window {
        let mut win = Window::default();
        let prefetch = self.outgrows_caches();
        // The window's last instant (a window ending at 0 has none).
        let last = end.0.checked_sub(1).map(Ps);
        while let Some((t, ev)) = last.and_then(|l| self.sched.pop_until(l)) {
            if ev == Event::Sample {
                win.at_sample = true;
                break;
            }
            if !self.owns(&ev) {
                // Counted by another part; a flow's start runs in all.
                win.foreign += 1;
                if !matches!(ev, Event::FlowStart { .. }) {
                    continue;
                }
            }
            if self.step(ev, prefetch) {
                self.last_activity = t;
                self.sampler.note_active();
                win.first_activity.get_or_insert(t);
            }
        }
        self.sched.set_lazy_tx_done(false);
        win
    }

    /// Frames sent here from elsewhere go into their ports' lanes; `mail`
    /// is left empty, its buffers kept.
    pub fn deliver(&mut self, mail: &mut Mail) {
        for (&(key, port), pkt) in mail.to.iter().zip(&mut mail.frames) {
            let int = std::mem::replace(&mut pkt.int, NO_INT);
            let id = self.pool.alloc_copy(pkt);
            if int != NO_INT {
                self.pool.set_int(id, mail.ints[int as usize]);
            }
            self.sched.arrive_key(key, port, id);
        }
        mail.to.clear();
        mail.frames.clear();
        mail.ints.clear();
        mail.first = None;
        for note in std::mem::take(&mut mail.notes) {
            self.take_note(note);
        }
    }

    /// Gives `to` (another part of the same scenario) the capture taps of the ports it simulates and this world does not:
    /// a tap records its port's frames both ways, all of them events of
    /// the port's part. Each part keeps a placeholder in the place of a
    /// tap it does not record, so that indices agree, until
    /// [`World::absorb`] brings it back.
    pub fn hand_over_taps(&mut self, to: &mut World) {
        to.taps = self
            .taps
            .iter()
            .map(|t| Tap::elsewhere(t.port, t.file_name.clone()))
            .collect();
        for (i, t) in self.taps.iter_mut().enumerate() {
            let port = t.port as usize;
            if self.ports[port].elsewhere() && !to.ports[port].elsewhere() {
                to.ports[port].set_tap(i as u32);
                std::mem::swap(t, &mut to.taps[i]);
            }
        }
    }

    /// Moves the components `other` (another part of the same run)
    /// simulates and this world does not into this one, and adds up the
    /// counts. `foreign`: the events the parts took that were not theirs
    /// ([`Window::foreign`]), taken off the sum of events. When every part
    /// has been absorbed, the world is the whole run's, as a serial run's.
    pub fn absorb(&mut self, mut other: World, foreign: u64) -> Leftover {
        let take = |mine: bool, theirs: bool| mine && !theirs;
        let hosts: Vec<bool> = (0..self.hosts.len())
            .map(|i| take(self.hosts[i].elsewhere, other.hosts[i].elsewhere))
            .collect();
        let ports: Vec<bool> = (0..self.ports.len())
            .map(|i| take(self.ports[i].elsewhere(), other.ports[i].elsewhere()))
            .collect();
        for (i, &moved) in ports.iter().enumerate() {
            if moved {
                std::mem::swap(&mut self.ports[i], &mut other.ports[i]);
            }
        }
        for i in 0..self.switches.len() {
            if take(self.switches[i].elsewhere(), other.switches[i].elsewhere()) {
                std::mem::swap(&mut self.switches[i], &mut other.switches[i]);
            }
        }
        for i in 0..self.bonds.len() {
            if hosts[self.bonds[i].host as usize] {
                std::mem::swap(&mut self.bonds[i], &mut other.bonds[i]);
            }
        }
        for q in 0..self.qps.len() {
            if hosts[self.qps[q].host as usize] {
                std::mem::swap(&mut self.qps[q], &mut other.qps[q]);
            }
        }
        // A workload is its clients' (a flow's or a perftest run's, one
        // host).
        for i in 0..self.workloads.len() {
            let client = self.workloads[i].clients.first().copied();
            if client.is_some_and(|c| hosts[self.qps[c as usize].host as usize]) {
                std::mem::swap(&mut self.workloads[i], &mut other.workloads[i]);
            }
        }
        for (i, &moved) in hosts.iter().enumerate() {
            if moved {
                std::mem::swap(&mut self.hosts[i], &mut other.hosts[i]);
            }
        }
        for (l, theirs) in self.links.iter_mut().zip(&other.links) {
            l.absorb(theirs);
        }
        for (t, theirs) in self.taps.iter_mut().zip(&mut other.taps) {
            if ports[t.port as usize] {
                std::mem::swap(t, theirs);
            }
        }
        self.mark_peers();
        self.packet_hops += other.packet_hops;
        self.last_activity = self.last_activity.max(other.last_activity);
        let executed = self.sched.executed() + other.sched.executed() - foreign;
        self.sched.set_executed(executed);
        Leftover {
            live: other.pool.live(),
            pending: other.sched.peek_time().is_some() || !other.departures.is_empty(),
        }
    }
}

/// The earlier of two times either may lack.
pub fn earliest(a: Option<Ps>, b: Option<Ps>) -> Option<Ps> {
    a.into_iter().chain(b).min()
}
