//! The simulated network: components in arenas, one [`Scheduler`], and the
//! dispatch of every event to the component it names.
//!
//! ```text
//!   RcQp ──next_tx──▶ NIC (host.rs) ──▶ Port (port/) ──▶ Link (link.rs) ──▶ Port ──▶ Switch (switch.rs)
//!     ▲               strict priority,   serialize,         delay, loss,                 learn, classify,
//!     │               RR over QPs        egress queues      up/down                      forward (pure), buffer
//!     │                                                                                     │
//!   on_receive ◀── host receive (MAC, GID, QPN) ◀── Port ◀── Link ◀── Port (egress queues) ◀─┘
//! ```
//!
//! | file | component | owns |
//! |---|---|---|
//! | `port/` | [`PortCounters`], the port | egress queues per priority, strict priority, byte accounting, the PFC pause seam; `port/pause.rs` its pause state and counters |
//! | `link.rs` | the link | delay, loss and `ce_mark` (its own RNG), up/down, byte conservation; moving a frame across |
//! | `host.rs` | host, NIC, interface | routing and neighbours, the NIC's receive filter, pumping QPs onto the wire, bonds' failover |
//! | `profile.rs` | [`NicProfile`] | what a host's NIC does that verbs do not say: window, AckReq, ACKs, segments, ECN bits, trust, DCQCN |
//! | `nic_cc.rs` | DCQCN in the world | the NIC's notification point sending CNPs, each QP's reaction point pacing it, `RpDeadline` |
//! | `qp.rs` | a QP in the network | its headers and port, waking, timers, driving its workload, [`QpStatus`] |
//! | `retire.rs` | a finished flow's QPs | what the outputs read of them, kept when their transport state goes |
//! | `switch.rs` | the switch | learning, classification, the pure forwarding decision, admitting to and releasing its buffer |
//! | `ecn.rs` | a switch's congestion point | RED/ECN marking per (egress port, priority), its own random stream |
//! | `telemetry.rs` | in-band telemetry | a switch's record pushed onto the frames that carry HPCC's telemetry as they leave its queue |
//! | [`mmu`] | the switch MMU | reserves, headroom, dynamic thresholds, PFC edges: pure accounting the switch calls |
//! | `pfc.rs` | pauses on the wire | PFC/PAUSE frames sent (refreshed) and honoured after the port's reaction delay (802.3's per speed), for the priorities it has PFC on; pause counters, the PFC watchdog; a port's headroom need |
//! | `nic_rx.rs` | a host NIC's receive buffer | slow or hung receivers, the NIC's pauses and stall detection |
//! | `bond.rs`, `arp.rs`, `tap.rs` | bond, ARP frames, capture taps | slave choice and MII monitor; ARP on the wire; pcap bytes |
//! | `sample.rs` | the sampler | the time series |
//! | `part.rs` | a world that is one part of a partitioned run | which components are simulated elsewhere, a part's windows, the frames it sends elsewhere, the merge (the cut and the threads are `rocesim`'s) |
//! | `view.rs` | read-only views | what a run's outputs read ([`PortView`], [`QpView`], ...) |
//! | `place.rs`, `flows.rs` | QP placement, flows | where a connection's QPs go and their headers; `[[traffic]]` flows started at their time, their results |
//!
//! Components live in `Vec`s and refer to each other by index; an event
//! names one component and [`World::run`] dispatches it. Events of equal
//! time run in the order they were scheduled, so a run is a pure function
//! of the scenario and the seed. Every component's randomness comes from
//! its own stream ([`crate::rng`]).
//!
//! PFC and ECN run: every port skips the priorities its peer paused
//! (`Port::paused`); switches account buffer per (ingress port, priority)
//! in their [`mmu`]. A QP's rate limiter (DCQCN, perftest's `rate_limit`)
//! speaks through `tx_ready_at`: a QP that may send again by the time its
//! frame leaves the wire stays on its NIC's active list for the port's
//! `TxDone`; one held back longer leaves the list when its frame starts and
//! gets a [`Event::QpWake`] for the time `tx_ready_at` returns.

pub mod arp;
pub mod bond;
pub mod cm;
pub mod connect;
pub mod ecn;
pub mod flows;
pub mod host;
pub mod icmp;
pub mod link;
pub mod mmu;
pub mod nccl_connect;
pub mod neigh;
pub mod nic_cc;
pub mod nic_rx;
pub mod part;
pub mod pfc;
pub mod place;
pub mod port;
pub mod profile;
pub mod qp;
pub mod reroute;
pub mod retire;
pub mod sample;
pub mod switch;
pub mod tap;
pub mod telemetry;
pub mod view;

use crate::engine::{Event, Scheduler};
use crate::packet::PacketPool;
use crate::time::Ps;

use arp::ConnSetup;
use host::{Host, HostBond, IfaceKind};
use link::Link;
use port::{Owner, Port};
use qp::{QpSlot, WorkloadSlot};
use sample::Sampler;
use switch::Switch;
use tap::Tap;

pub use flows::{FlowResult, FlowTally};
pub use port::{PRIOS, PortCounters};
pub use profile::{
    AckPriority, AckRoute, DcqcnSetup, EcnMode, NicProfile, ProfileBase, hpcc_dcqcn,
};
pub use qp::{QpStatus, Role};
pub use sample::{PortSample, QpSample};
pub use view::{BondView, HostView, NicView, PortHeadroom, PortView, QpView, SwitchView, TapView};

/// Progress reported while running.
pub trait Progress {
    fn update(&mut self, now: Ps, end: Option<Ps>);
    /// Flows (`[[traffic]]`) finished so far, of all; called with
    /// `update` in runs that have flows.
    fn flows(&mut self, _done: usize, _total: usize) {}
    /// Events executed so far (all parts of a split run); called with
    /// `update`, for a rate (events per wall second).
    fn events(&mut self, _executed: u64) {}
}

impl Progress for () {
    fn update(&mut self, _: Ps, _: Option<Ps>) {}
}

/// The safety limit when a scenario gives no `stop_at`.
pub const DEFAULT_LIMIT: Ps = Ps(60_000_000_000_000);

/// The last instant a run may reach: `stop_at`, or the safety limit.
pub fn limit(stop_at: Option<Ps>) -> Ps {
    stop_at.unwrap_or(DEFAULT_LIMIT)
}

/// The simulated network: its components, the frames and events in
/// flight, and the instruments on it (capture taps, the sampler). What a
/// run is told beyond the network (its name, when it stops, how far it
/// is) is its caller's: [`World::run`] takes it.
pub struct World {
    /// The root of the network's random streams: each component's was
    /// drawn from it at build, ARP replies draw from it as they happen.
    pub seed: u64,
    pub sched: Scheduler,
    pub pool: PacketPool,
    pub ports: Vec<Port>,
    pub links: Vec<Link>,
    pub hosts: Vec<Host>,
    pub bonds: Vec<HostBond>,
    pub switches: Vec<Switch>,
    pub qps: Vec<QpSlot>,
    pub workloads: Vec<WorkloadSlot>,
    pub taps: Vec<Tap>,
    /// Connection setups with ARP on the wire.
    pub setup: ConnSetup,
    /// Workloads' socket set-ups (`connect = "socket"`).
    pub sockets: Vec<connect::SocketSetup>,
    /// Collectives' socket set-ups, one per network connection.
    pub nccl_setups: Vec<nccl_connect::NcclSetup>,
    /// Workloads' RDMA CM set-ups, and every MAD they sent.
    pub cms: Vec<cm::CmSetup>,
    pub mads: Vec<cm::SentMad>,
    pub sampler: Sampler,
    /// Frames that crossed one link, and the end of the last activity.
    pub packet_hops: u64,
    pub last_activity: Ps,
    /// Serialization times are rounded down to a multiple of this many
    /// picoseconds (`[sim] tx_time_step`).
    pub tx_step: u64,
    /// `[[traffic]]` flows and their workloads.
    pub flows: Vec<crate::flow::FlowRef>,
    /// The flows' connections, whose QPs are made at their start
    /// (`flows[i]` is `pending[i]` when there are any).
    pub pending: Vec<flows::PendingFlow>,
    /// A generated fabric that re-routes when a link changes.
    pub reroute: Option<Box<reroute::Rerouter>>,
    /// Frames on their way to ports another part simulates
    /// ([`part`]), until the parallel run moves them there.
    pub departures: part::Mail,
    /// A finished flow's QPs give back their memory ([`retire`]).
    pub retire_flows: bool,
    /// The counts this part's ends and their peers elsewhere sent each
    /// other, to retire across parts ([`retire::Note`]).
    notes: retire::Notes,
}

/// How the network is modelled and observed beyond its components
/// (`[sim]`).
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The time series' sampling interval.
    pub sample_interval: Ps,
    /// Serialization times are rounded down to a multiple of this many
    /// picoseconds (1: exact).
    pub tx_time_step: u64,
}

impl World {
    /// An empty world, to which a builder adds the network's components.
    pub fn new(seed: u64, settings: Settings, flows: Vec<crate::flow::FlowRef>) -> World {
        World {
            seed,
            sched: Scheduler::new(),
            pool: PacketPool::new(),
            ports: Vec::new(),
            links: Vec::new(),
            hosts: Vec::new(),
            bonds: Vec::new(),
            switches: Vec::new(),
            qps: Vec::new(),
            workloads: Vec::new(),
            taps: Vec::new(),
            setup: ConnSetup::default(),
            sockets: Vec::new(),
            nccl_setups: Vec::new(),
            cms: Vec::new(),
            mads: Vec::new(),
            sampler: Sampler::new(settings.sample_interval),
            packet_hops: 0,
            last_activity: Ps::ZERO,
            tx_step: settings.tx_time_step,
            flows,
            pending: Vec::new(),
            reroute: None,
            departures: part::Mail::default(),
            retire_flows: true,
            notes: retire::Notes::default(),
        }
    }
}

impl World {
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn now(&self) -> Ps {
        self.sched.now()
    }
    pub fn events(&self) -> u64 {
        self.sched.executed()
    }
    /// Frames that crossed one link (delivered or lost on it).
    pub fn packet_hops(&self) -> u64 {
        self.packet_hops
    }
    /// The end of the last activity (the simulated duration of the run).
    pub fn sim_time(&self) -> Ps {
        self.last_activity
    }
    /// Runs until nothing is left to do or `stop_at`.
    pub fn run(&mut self, stop_at: Option<Ps>, progress: &mut dyn Progress) {
        let limit = limit(stop_at);
        let prefetch = self.outgrows_caches();
        let mut tally = FlowTally::default();
        self.sched.at(Ps::ZERO, Event::Sample);
        let mut n: u64 = 0;
        while let Some((t, ev)) = self.sched.pop_until(limit) {
            if self.step(ev, prefetch) {
                self.last_activity = t;
                self.note_activity(t);
            }
            n += 1;
            if n & 0xFFFF == 0 {
                if !self.flows.is_empty() {
                    let (done, total) = self.count_finished_flows(&mut tally);
                    progress.flows(done, total);
                }
                progress.events(self.events());
                progress.update(self.sched.now(), stop_at);
            }
        }
        self.sched.set_lazy_tx_done(false);
        let left = self.sched.peek_time().is_some();
        self.end_run(stop_at, left, progress);
    }

    /// After the last event before [`limit`]`(stop_at)`: the run's end,
    /// the final sample. `left`: events were left (the run stopped at the
    /// limit).
    pub fn end_run(&mut self, stop_at: Option<Ps>, left: bool, progress: &mut dyn Progress) {
        let limit = limit(stop_at);
        // A `TxDone` left out was activity at its time, as its frame's
        // arrival is, unless the run stopped between the two.
        for p in &self.ports {
            let t = Scheduler::time_of(p.tx_end());
            if t <= limit {
                self.last_activity = self.last_activity.max(t);
            }
        }
        if let Some(s) = stop_at {
            // Cut short: the run lasted until `stop_at`. A QP timer still
            // armed after the work is done does not count.
            if left && self.work_left() {
                self.last_activity = s;
            }
        }
        self.final_sample(self.last_activity);
        progress.update(self.last_activity, stop_at);
    }

    /// Whether the network's state outgrows a core's L2 cache (past about
    /// a thousand ports or QPs, of 704 and ~1,500 bytes): each event then
    /// prefetches what the next one reads ([`World::step`]). In a small
    /// one all of it is in cache already, and prefetching only costs.
    pub fn outgrows_caches(&self) -> bool {
        self.ports.len() + self.qps.len() + 2 * self.flows.len() > 1000
    }

    /// Runs event `ev`, just taken; returns whether it was activity. The
    /// serial loop and a partitioned run's windows both run their events
    /// through it; `prefetch`: [`World::outgrows_caches`].
    #[inline(always)]
    pub fn step(&mut self, ev: Event, prefetch: bool) -> bool {
        if prefetch {
            self.prefetch_next();
        }
        self.sched.set_origin(self.origin_of(&ev));
        // These always count as activity, so the `TxDone`s of the frames
        // they start may be left out (`World::transmit`).
        self.sched.set_lazy_tx_done(matches!(
            ev,
            Event::TxDone { .. } | Event::Arrive { .. } | Event::QpWake { .. }
        ));
        self.handle(ev)
    }

    /// The component whose event `ev` is, as the scheduler's origin of
    /// the events it schedules ([`crate::engine`]): 1 + a host's index,
    /// then the switches, then one per flow (a flow's start runs in every
    /// part of a split run, and its own counter keeps its events' order the
    /// same in each); the run's (0) for what belongs to no one component.
    #[inline(always)]
    fn origin_of(&self, ev: &Event) -> u32 {
        let hosts = self.hosts.len() as u32;
        let host = |h: u32| 1 + h;
        match component_of(ev) {
            Component::Port(port) => match self.ports[port as usize].owner() {
                Owner::Host { host: h, .. } => host(h),
                Owner::Switch { sw, .. } => 1 + hosts + sw,
            },
            Component::Qp(qp) => host(self.qps[qp as usize].host),
            Component::Bond(bond) => host(self.bonds[bond as usize].host),
            Component::HostSetUp(h) => host(h),
            Component::Flow(flow) => 1 + hosts + self.switches.len() as u32 + flow,
            Component::Run => crate::engine::RUN_ORIGIN,
        }
    }

    /// The origins this world's events can have ([`World::origin_of`]).
    pub fn origins(&self) -> usize {
        1 + self.hosts.len() + self.switches.len() + self.flows.len()
    }

    /// Asks the CPU to bring in what the next event will read while this
    /// one runs: in a fabric of thousands of ports and QPs it is rarely in
    /// cache, and the next event is usually the one at the heap's top now.
    /// Not inlined: the loop of a small world keeps its code as it was.
    #[inline(never)]
    fn prefetch_next(&self) {
        let Some(next) = self.sched.peek() else {
            return;
        };
        match next {
            Event::Arrive { port, pkt } => {
                prefetch(&self.ports[port as usize], 2);
                // The line a switch reads: more lines in flight only
                // slowed the fabric (its fill buffers are the limit).
                prefetch(self.pool.get(pkt), 1);
                // Its telemetry, where the run has any: a switch pushes
                // onto it when it leaves, usually soon (HPCC keeps queues
                // short); a host reads it.
                if let Some(int) = self.pool.int_slot(pkt) {
                    prefetch(int, 1);
                }
            }
            Event::TxDone { port } => prefetch(&self.ports[port as usize], 2),
            Event::QpWake { qp } => prefetch(&self.qps[qp as usize], 2),
            _ => {}
        }
    }

    /// Tests only: schedules every frame's `TxDone` (see
    /// [`Scheduler::lazy_tx_done`]).
    #[cfg(feature = "test-hooks")]
    pub fn schedule_every_tx_done(&mut self) {
        self.sched.schedule_every_tx_done();
    }

    /// Tests only: every QP keeps its transport state to the end of the
    /// run, as before [`retire`] (outputs must not tell the difference).
    #[cfg(feature = "test-hooks")]
    pub fn keep_finished_qps(&mut self) {
        self.retire_flows = false;
    }

    /// Hands one event to the component it names; returns whether it
    /// changed anything (stale timers and samples do not count as activity
    /// for the run's end).
    ///
    /// Inlined into the loop: as a call it cost the stars ~4 % (its
    /// frame, spills and the event passed through memory, every event).
    #[inline(always)]
    fn handle(&mut self, ev: Event) -> bool {
        match ev {
            Event::TxDone { port } => self.pump(port),
            Event::Arrive { port, pkt } => self.arrive(port, pkt),
            Event::QpWake { qp } => self.qp_wake(qp),
            Event::QpTimer { qp } => return self.qp_timer(qp),
            Event::RpDeadline { qp } => return self.rp_deadline(qp),
            Event::Link { link, up } => self.link_change(link, up),
            Event::Miimon { bond } => self.miimon(bond),
            Event::ArpStart { conn } => self.conn_step(conn),
            Event::SocketStart { setup } => self.socket_start(setup),
            Event::NcclSetupStart { setup } => self.nccl_setup_start(setup),
            Event::CmStart { setup } => self.cm_start(setup),
            Event::CmTimeout { setup, qp, tries } => self.cm_timeout(setup, qp, tries),
            Event::ArpRetry {
                host,
                iface,
                next_hop,
            } => return self.arp_retry(host, iface, next_hop),
            Event::KernelTx { port, pkt } => self.kernel_tx(port, pkt),
            Event::Drive { qp } => return self.drive(qp),
            Event::FlowStart { flow } => flows::start_flow(self, flow),
            Event::Sample => {
                self.sample_tick();
                return false;
            }
            Event::PfcRefresh { port, prio } => self.pfc_refresh(port, prio),
            Event::PauseExpire { port } => self.pause_expire(port),
            Event::PauseEffect { port } => self.pause_effect(port),
            Event::Watchdog { port, prio } => self.watchdog(port, prio),
            Event::RxDrain { port } => self.rx_drain(port),
            Event::NicStall { port } => self.nic_stall(port),
        }
        true
    }

    /// Starts the next frame on an idle port; a busy one will look again
    /// at its `TxDone`, which is then scheduled.
    ///
    /// Inlined at its callers (the `TxDone`, a QP's wake-up, a switch's
    /// enqueue): a call here was 3-4 % of the stars' loop.
    #[inline(always)]
    fn pump(&mut self, port: u32) {
        let p = &self.ports[port as usize];
        if p.busy(self.sched.current()) {
            return self.schedule_tx_done(port);
        }
        if self.send_pending_pause(port) {
            return;
        }
        let p = &self.ports[port as usize];
        match p.owner() {
            Owner::Switch { sw, local } => self.pump_switch(port, sw, local),
            Owner::Host { host, nic } => self.pump_host(port, host, nic),
        }
    }

    /// Ends the run's side effects: flushes every capture; the first error
    /// is returned. The world is then only read.
    pub fn finish(&mut self) -> Result<(), String> {
        for t in &mut self.taps {
            t.finish()
                .map_err(|e| format!("tap {}: {e}", t.file_name))?;
        }
        Ok(())
    }

    /// Checks the conservation invariants that must hold at the end of any
    /// run: every frame put on a link was delivered or lost, and every
    /// packet allocated was freed or is still queued somewhere.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.check_invariants_with(part::Leftover::default())
    }

    /// [`World::check_invariants`] of the merged world of a partitioned
    /// run, with what the other part still held when it ended.
    pub fn check_invariants_with(&self, other: part::Leftover) -> Result<(), String> {
        for l in &self.links {
            l.conserved()?;
        }
        let queued: usize = self.ports.iter().map(Port::queued_frames).sum::<usize>()
            + self
                .hosts
                .iter()
                .flat_map(|h| &h.nics)
                .filter_map(|n| n.rx.as_deref())
                .map(|rx| rx.frames())
                .sum::<usize>();
        let live = self.pool.live() + other.live;
        let pending = self.sched.peek_time().is_some() || other.pending;
        if !pending && live != queued {
            return Err(format!(
                "{live} packets allocated but {queued} queued with no events pending"
            ));
        }
        Ok(())
    }
}

/// Prefetches the first `lines` cache lines of `*r`.
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    for i in 0..lines {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = (r as *const T).cast::<i8>().wrapping_add(64 * i);
        // A prefetch is only a hint: it reads nothing and cannot fault.
        #[allow(unused_unsafe)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (r, lines);
}

/// The component an event belongs to: the one whose state it changes, what
/// orders it among equal times ([`World::origin_of`]) and what decides the
/// part of a split run that runs it (`World::owns`). One list, so that a
/// new event is placed once.
#[derive(Debug, Clone, Copy)]
enum Component {
    Port(u32),
    Qp(u32),
    Bond(u32),
    /// A host's own set-up step (an ARP retry).
    HostSetUp(u32),
    /// A flow's start (every part of a split run makes its QPs).
    Flow(u32),
    /// Set-up steps of workloads, link changes and samples: no one
    /// component's.
    Run,
}

#[inline(always)]
fn component_of(ev: &Event) -> Component {
    match *ev {
        Event::TxDone { port }
        | Event::Arrive { port, .. }
        | Event::PfcRefresh { port, .. }
        | Event::PauseExpire { port }
        | Event::PauseEffect { port }
        | Event::RxDrain { port }
        | Event::NicStall { port }
        | Event::Watchdog { port, .. }
        | Event::KernelTx { port, .. } => Component::Port(port),
        Event::QpWake { qp }
        | Event::QpTimer { qp }
        | Event::RpDeadline { qp }
        | Event::Drive { qp } => Component::Qp(qp),
        Event::Miimon { bond } => Component::Bond(bond),
        Event::ArpRetry { host, .. } => Component::HostSetUp(host),
        Event::FlowStart { flow } => Component::Flow(flow),
        // A split run refuses the scenarios that have them (`world::part`).
        Event::Link { .. }
        | Event::ArpStart { .. }
        | Event::SocketStart { .. }
        | Event::NcclSetupStart { .. }
        | Event::CmStart { .. }
        | Event::CmTimeout { .. }
        | Event::Sample => Component::Run,
    }
}
