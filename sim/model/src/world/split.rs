//! A world as one part of a partitioned run (`[sim] partitions = 2`): the
//! fabric cut in two ([`plan`]), which components are this part's, the
//! frames it sends the other ([`Part`]), a window of its events
//! ([`World::run_window`]), and the merge of the parts at the end
//! ([`merge`]). The threads, their meetings and the samples across the
//! parts are the `rocesim` crate's parallel run, a layer over this one:
//! nothing here starts a thread or waits.
//!
//! Parts only meet on links, and a frame sent on a link arrives at least
//! the link's delay later: the smallest delay across the cut (the plan's
//! `lookahead`) is how far both parts may run at once (the windows and
//! meetings are drawn in `rocesim::parallel`).
//!
//! Each part is a whole world, built from the same scenario; it owns the
//! switches and hosts of its half (a host goes with the switch it hangs
//! from) and their ports and QPs, and runs only their events. A flow's
//! start runs in both (both make its QP pair, so QP indices agree), but
//! only the part of its client drives it. A capture tap records in the
//! part of its port (both directions of a port are its part's events). At
//! the end, the other part's components move into the first, and the
//! run's outputs are read from it as from a serial run.
//!
//! Determinism: a window's end, the frames swapped and the order they go
//! into the lanes depend on the two parts' events only, not on the
//! threads' timing. Equal-time events order as in a serial run within a
//! part; a frame from the other part is inserted at the window's end, so
//! it follows the local events of its time that were scheduled before.
//! The outputs are a function of the scenario, the seed and the number of
//! parts, and differ from the serial run's by such ties.
//!
//! A link's random stream (`loss`, `ce_mark`) serves both directions in a
//! serial run; across the cut, each part draws from its own copy for the
//! direction it sends, so a lossy link between the parts loses other
//! frames than the serial run does (as deterministically).
//!
//! How the fabric is cut: switches by tier (their distance from the
//! hosts), each tier's first half by index to part 0, the rest to part 1,
//! so that a fat-tree's pods (numbered in order) stay whole. A fabric with
//! one switch next to the hosts (a star) puts the senders (the flows' and
//! workloads' clients) in part 1 and the switch and the receivers in part
//! 0: a request crosses once, its ACK once.

use super::World;
use super::port::Owner;
use super::tap::Tap;
use crate::engine::Event;
use crate::packet::Packet;
use crate::time::Ps;

/// How the fabric is cut.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Part of each port, host and switch.
    pub port_part: Vec<u8>,
    pub host_part: Vec<u8>,
    pub switch_part: Vec<u8>,
    /// The smallest delay of a frame from one part to the other.
    pub lookahead: Ps,
}

/// One part's view of the cut, and what it sends the other.
#[derive(Debug)]
pub struct Part {
    pub me: u8,
    pub plan: Plan,
    /// Frames sent to the other part's ports.
    pub outbox: Mail,
    /// Frames the other part sent here in its last window, which go into
    /// the lanes when the next window starts (on this part's thread, whose
    /// caches hold the lanes).
    pub inbox: Mail,
    /// The earliest activity in the current window.
    pub first_activity: Option<Ps>,
    /// The window stopped at its `Sample`.
    pub at_sample: bool,
    /// Events taken here that another part counts (a flow's start, whose
    /// client is not ours) or that were not ours to run.
    pub foreign: u64,
}

impl Part {
    #[inline]
    pub fn owns_port(&self, port: u32) -> bool {
        self.plan.port_part[port as usize] == self.me
    }
    #[inline]
    pub fn owns_host(&self, host: u32) -> bool {
        self.plan.host_part[host as usize] == self.me
    }
    /// Sends frame `pkt` arriving at `port` (the other part's) at `at`.
    #[inline]
    pub fn send(&mut self, at: Ps, port: u32, pkt: &Packet) {
        self.outbox.to.push((at, port));
        // Copied once, straight into the buffer: pushed by value, it went
        // through a copy on the stack first. That, and the same on the way
        // in, cost the 2:1 star's part 0 51 M instructions.
        self.outbox
            .frames
            .extend_from_slice(std::slice::from_ref(pkt));
        self.outbox.first = earliest(self.outbox.first, Some(at));
    }
}

/// Frames from one part to the other in the order sent: each frame's
/// (arrival, port) and the frame, apart (together, each took six cache
/// lines to cross where a frame fills five), and the earliest arrival
/// among them, which the meeting after the window needs (reading every
/// frame's time for it cost the 2:1 star's coordinator 3-10 ms).
#[derive(Debug, Default)]
pub struct Mail {
    pub to: Vec<(Ps, u32)>,
    pub frames: Vec<Packet>,
    pub first: Option<Ps>,
}

/// Cuts world `w` in two, or says why it cannot be.
pub fn plan(w: &World) -> Result<Plan, String> {
    let refuse = |what: &str| Err(format!("{what} need one partition"));
    if w.reroute.is_some() {
        return refuse("re-routing on link changes (`[topology] reroute`)");
    }
    for ev in w.sched.pending_events() {
        match ev {
            Event::Link { .. } => return refuse("link changes (`[[link.event]]`)"),
            Event::ArpStart { .. } | Event::ArpRetry { .. } | Event::KernelTx { .. } => {
                return refuse("ARP on the wire (`sim.arp = \"frames\"`)");
            }
            Event::SocketStart { .. } | Event::CmStart { .. } | Event::CmTimeout { .. } => {
                return refuse("connection set-up (`workload.connect`)");
            }
            _ => {}
        }
    }
    // The switch at the far end of each port, if any.
    let far_switch = |p: u32| -> Option<u32> {
        let peer = w.ports[p as usize].peer();
        match w.ports.get(peer as usize)?.owner() {
            Owner::Switch { sw, .. } => Some(sw),
            Owner::Host { .. } => None,
        }
    };
    // Tiers: 1 for a switch next to a host, n + 1 next to tier n.
    let mut tier = vec![0u32; w.switches.len()];
    let mut frontier: Vec<u32> = Vec::new();
    for (i, p) in w.ports.iter().enumerate() {
        if let (Owner::Host { .. }, Some(sw)) = (p.owner(), far_switch(i as u32)) {
            if tier[sw as usize] == 0 {
                tier[sw as usize] = 1;
                frontier.push(sw);
            }
        }
    }
    let edge = frontier.len();
    let mut level = 1;
    while !frontier.is_empty() {
        level += 1;
        let mut next = Vec::new();
        for (i, p) in w.ports.iter().enumerate() {
            if let (Owner::Switch { sw, .. }, Some(far)) = (p.owner(), far_switch(i as u32)) {
                if tier[sw as usize] == level - 1 && tier[far as usize] == 0 {
                    tier[far as usize] = level;
                    next.push(far);
                }
            }
        }
        frontier = next;
    }
    let mut switch_part = vec![0u8; w.switches.len()];
    let mut host_part = vec![0u8; w.hosts.len()];
    if edge < 2 {
        // A star: the hosts that send (flows' and workloads' clients) in
        // part 1, the switch and the receivers in part 0. A frame then
        // crosses once each way (a request in, its ACK out), and the
        // senders' QP work weighs about what the switch's and the
        // receivers' hops do.
        for p in &w.pending {
            host_part[p.client_host() as usize] = 1;
        }
        for q in &w.qps {
            if q.role == super::qp::Role::Client {
                host_part[q.host as usize] = 1;
            }
        }
    } else {
        for t in 1..=level {
            let of_tier: Vec<usize> = (0..tier.len()).filter(|&s| tier[s] == t).collect();
            let half = of_tier.len().div_ceil(2);
            for &s in &of_tier[half..] {
                switch_part[s] = 1;
            }
        }
        // A host goes with the switch of its first port.
        let mut placed = vec![false; w.hosts.len()];
        for (i, p) in w.ports.iter().enumerate() {
            if let Owner::Host { host, .. } = p.owner() {
                if !placed[host as usize] {
                    placed[host as usize] = true;
                    if let Some(sw) = far_switch(i as u32) {
                        host_part[host as usize] = switch_part[sw as usize];
                    }
                }
            }
        }
    }
    let port_part: Vec<u8> = w
        .ports
        .iter()
        .map(|p| match p.owner() {
            Owner::Switch { sw, .. } => switch_part[sw as usize],
            Owner::Host { host, .. } => host_part[host as usize],
        })
        .collect();
    if !port_part.contains(&0) || !port_part.contains(&1) {
        return Err(
            "the cut leaves a part empty: one switch and no host that sends (a star's senders \
             are its second part)"
                .into(),
        );
    }
    let lookahead = w
        .ports
        .iter()
        .enumerate()
        .filter(|&(i, p)| {
            (p.peer() as usize) < port_part.len() && port_part[i] != port_part[p.peer() as usize]
        })
        .map(|(_, p)| w.links[p.link() as usize].delay() + p.extra_delay())
        .min()
        .unwrap_or(Ps::ZERO);
    if lookahead == Ps::ZERO {
        return Err(
            "a link between the parts has no delay: each part could act on the other at once"
                .into(),
        );
    }
    Ok(Plan {
        port_part,
        host_part,
        switch_part,
        lookahead,
    })
}

/// Makes `w` and `twin` (the same scenario built again) the two parts of
/// `plan`: part 0 and part 1.
pub fn pair(w: &mut World, twin: &mut World, plan: Plan) {
    let part = |me| Part {
        me,
        plan: plan.clone(),
        outbox: Mail::default(),
        inbox: Mail::default(),
        first_activity: None,
        at_sample: false,
        foreign: 0,
    };
    twin.split = Some(Box::new(part(1)));
    w.split = Some(Box::new(part(0)));
}

/// Gives the twin of a partitioned world `w` the capture taps of its
/// ports, which `w` opened (and records for its own): a tap records its
/// port's frames both ways, all of them events of the port's part. `w`
/// keeps a placeholder in each one's place, so that indices agree, until
/// the merge brings it back.
pub fn hand_over_taps(w: &mut World, twin: &mut World) {
    let plan = &w.split.as_deref().expect("a part").plan;
    twin.taps = w
        .taps
        .iter()
        .map(|t| Tap::elsewhere(t.port, t.file_name.clone()))
        .collect();
    for (i, t) in w.taps.iter_mut().enumerate() {
        if plan.port_part[t.port as usize] == 1 {
            twin.ports[t.port as usize].set_tap(i as u32);
            std::mem::swap(t, &mut twin.taps[i]);
        }
    }
}

/// How a world is cut, as `rocesim check` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Switches and hosts of each part.
    pub switches: [usize; 2],
    pub hosts: [usize; 2],
    /// Links between the parts, and the smallest delay of a frame across.
    pub links: usize,
    pub lookahead: Ps,
}

impl World {
    /// How a partitioned world is cut; `None` for a serial one.
    pub fn cut(&self) -> Option<Cut> {
        let plan = &self.split.as_deref()?.plan;
        let count = |v: &[u8], p: u8| v.iter().filter(|&&x| x == p).count();
        let links = self
            .links
            .iter()
            .filter(|l| {
                let [a, b] = l.ends();
                plan.port_part[a as usize] != plan.port_part[b as usize]
            })
            .count();
        Some(Cut {
            switches: [count(&plan.switch_part, 0), count(&plan.switch_part, 1)],
            hosts: [count(&plan.host_part, 0), count(&plan.host_part, 1)],
            links,
            lookahead: plan.lookahead,
        })
    }

    /// Whether this world runs QP `q`'s events.
    #[inline]
    pub fn owns_qp(&self, q: u32) -> bool {
        self.split
            .as_ref()
            .is_none_or(|s| s.owns_host(self.qps[q as usize].host))
    }

    /// Whether this part runs `ev`: its component is ours.
    fn owns(&self, ev: &Event) -> bool {
        let part = self.part();
        match *ev {
            Event::TxDone { port }
            | Event::Arrive { port, .. }
            | Event::PfcRefresh { port, .. }
            | Event::PauseExpire { port }
            | Event::RxDrain { port }
            | Event::NicStall { port }
            | Event::Watchdog { port, .. }
            | Event::KernelTx { port, .. } => part.owns_port(port),
            Event::QpWake { qp }
            | Event::QpTimer { qp }
            | Event::RpDeadline { qp }
            | Event::Drive { qp } => part.owns_host(self.qps[qp as usize].host),
            Event::Miimon { bond } => part.owns_host(self.bonds[bond as usize].host),
            _ => true,
        }
    }

    /// Whether this part counts flow `i`'s start (its client is ours).
    pub fn owns_flow(&self, i: u32) -> bool {
        self.split.as_deref().is_none_or(|part| {
            self.pending
                .get(i as usize)
                .is_none_or(|p| part.owns_host(p.client_host()))
        })
    }

    /// Runs this part's events before `end`.
    pub fn run_window(&mut self, end: Ps) {
        self.receive();
        self.part_mut().first_activity = None;
        // The window's last instant (a window ending at 0 has none).
        let last = end.0.checked_sub(1).map(Ps);
        while let Some((t, ev)) = last.and_then(|l| self.sched.pop_until(l)) {
            if ev == Event::Sample {
                // The coordinator takes it, from both parts.
                self.part_mut().at_sample = true;
                break;
            }
            let ours = match ev {
                Event::FlowStart { flow } => self.owns_flow(flow),
                _ => self.owns(&ev),
            };
            if !ours {
                // Counted by the other part; a flow's start runs in both.
                self.part_mut().foreign += 1;
                if !matches!(ev, Event::FlowStart { .. }) {
                    continue;
                }
            }
            if self.step(ev) {
                self.last_activity = t;
                self.sampler.note_active();
                self.part_mut().first_activity.get_or_insert(t);
            }
        }
        self.lazy_tx_done = false;
    }

    /// Frames the other part sent here go into their ports' lanes.
    pub fn receive(&mut self) {
        let mut inbox = std::mem::take(&mut self.part_mut().inbox);
        for (&(at, port), pkt) in inbox.to.iter().zip(&inbox.frames) {
            let id = self.pool.alloc_copy(pkt);
            self.sched.arrive(at, port, id);
        }
        inbox.to.clear();
        inbox.frames.clear();
        inbox.first = None;
        self.part_mut().inbox = inbox;
    }

    /// The time of this part's next event, frames received included.
    pub fn next_time(&self) -> Option<Ps> {
        earliest(self.sched.peek_time(), self.part().inbox.first)
    }

    pub fn part(&self) -> &Part {
        self.split.as_deref().expect("a part")
    }
    pub fn part_mut(&mut self) -> &mut Part {
        self.split.as_deref_mut().expect("a part")
    }
}

/// The earlier of two times either may lack.
pub fn earliest(a: Option<Ps>, b: Option<Ps>) -> Option<Ps> {
    a.into_iter().chain(b).min()
}

/// What the other part still held when a partitioned run ended, for
/// [`World::check_invariants_with`]: its packets (queued in ports that
/// moved here, or in flight), and whether it had events left or frames
/// were on their way between the parts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Leftover {
    pub live: usize,
    pub pending: bool,
}

/// Moves what part 1 owns from `b` into `w` (part 0), adds up the
/// counts, and makes `w` a serial world again, the whole run's.
pub fn merge(w: &mut World, mut b: World) -> Leftover {
    let plan = w.part().plan.clone();
    for (i, &part) in plan.port_part.iter().enumerate() {
        if part == 1 {
            std::mem::swap(&mut w.ports[i], &mut b.ports[i]);
        }
    }
    for (i, &part) in plan.host_part.iter().enumerate() {
        if part == 1 {
            std::mem::swap(&mut w.hosts[i], &mut b.hosts[i]);
        }
    }
    for (i, &part) in plan.switch_part.iter().enumerate() {
        if part == 1 {
            std::mem::swap(&mut w.switches[i], &mut b.switches[i]);
        }
    }
    for i in 0..w.bonds.len() {
        if plan.host_part[w.bonds[i].host as usize] == 1 {
            std::mem::swap(&mut w.bonds[i], &mut b.bonds[i]);
        }
    }
    for q in 0..w.qps.len() {
        if plan.host_part[w.qps[q].host as usize] == 1 {
            std::mem::swap(&mut w.qps[q], &mut b.qps[q]);
        }
    }
    // A workload is its clients' (a flow's or a perftest run's, one host).
    for i in 0..w.workloads.len() {
        let client = w.workloads[i].clients.first().copied();
        if client.is_some_and(|c| plan.host_part[w.qps[c as usize].host as usize] == 1) {
            std::mem::swap(&mut w.workloads[i], &mut b.workloads[i]);
        }
    }
    for (l, other) in w.links.iter_mut().zip(&b.links) {
        l.absorb(other);
    }
    for (t, other) in w.taps.iter_mut().zip(&mut b.taps) {
        if plan.port_part[t.port as usize] == 1 {
            std::mem::swap(t, other);
        }
    }
    w.packet_hops += b.packet_hops;
    w.last_activity = w.last_activity.max(b.last_activity);
    let foreign = w.part().foreign + b.part().foreign;
    let executed = w.sched.executed() + b.sched.executed() - foreign;
    w.sched.set_executed(executed);
    let left = Leftover {
        live: b.pool.live(),
        pending: b.sched.peek_time().is_some()
            || !b.part().inbox.to.is_empty()
            || !w.part().inbox.to.is_empty(),
    };
    w.split = None;
    left
}
