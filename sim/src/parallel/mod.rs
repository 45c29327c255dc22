//! The parallel run: a world cut into parts, each simulated on a thread of
//! its own (`[sim] partitions = N`), as a layer over the model. Two parts
//! meet through the protocol drawn here; three or more through a simpler
//! coordinator ([`many`]). This layer
//! cuts the fabric ([`plan`]), builds one world per part and tells each
//! which components are its own; the model runs a part's window of events
//! and sends the frames for the other part's ports away
//! ([`rocesim_model::world::part`]). This layer owns the parts and their
//! mailboxes, starts the threads, meets them between windows, samples
//! across the parts, and merges them at the end. A serial run is the same
//! [`Simulation`] with one part.
//!
//! Parts only meet on links, and a frame sent on a link arrives at least
//! the link's delay later. So if the smallest delay of a link between the
//! parts is `L`, whatever either part does before `W + L` cannot change
//! what the other does before `W + L`: both run that window at once
//! (conservative, synchronous parallel discrete-event simulation), then
//! swap the frames they sent each other, which arrive later than the
//! window's end.
//!
//! ```text
//!   coordinator (main thread, part 0)            worker (part 1)
//!   run window k: inbox -> lanes,                run window k: the same
//!     events before its end E (or its `Sample`)
//!   post frames k, report k  ──────────────▶◀──  post frames k, report k
//!   fast meeting (most windows): each reads the other's report and works
//!     out window k+1 the same way:
//!     W = earliest next event or frame of either part
//!     E = min(W + L, just after the next sample, stop)
//!   slow meeting (a sample, a paused sampler, every 1024th window):
//!     the coordinator takes the sample (or counts the flows) from both
//!     worlds, decides E  ──go(E)──▶  the worker, waiting, starts
//! ```
//! Frames sent in window k arrive at or after its end, and go into the
//! other part's lanes as window k + 1 starts.
//!
//! Determinism: a window's end and the frames swapped depend on the two
//! parts' events only, not on the threads' timing, and every event, a
//! frame from the other part included, runs under the key a serial run
//! gives it (time, then its origin component, then that component's own
//! count: [`rocesim_model::engine`]). So the outputs are the serial run's,
//! byte for byte, whatever the cut (wall time apart); `tests/partitions.rs`
//! checks it on the shipped fabrics.

mod affinity;
mod many;
pub mod plan;

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rocesim_model::engine::Event;
use rocesim_model::time::Ps;
use rocesim_model::world::part::{Leftover, Mail, Window, earliest};
use rocesim_model::world::{FlowTally, Progress, World, limit};

pub use plan::{Cut, Plan};
use rocesim_scenario::{BuildOptions, KeyPath, ModelError, Scenario};

/// The most parts a run may be cut into.
const MAX_PARTS: u32 = 64;

/// A world ready to run: serial, or cut into parts that run in parallel.
pub struct Simulation {
    /// The run's name (the scenario's `name`, or its file's stem).
    name: String,
    /// The run stops here at the latest (`[sim] stop_at`).
    stop_at: Option<Ps>,
    /// The world of a serial run, or part 0 of a partitioned one.
    world: World,
    /// Parts 1 and up of a partitioned run, and the cut.
    twin: Option<(Vec<World>, Plan)>,
    /// The unsourced defaults the scenario runs on
    /// ([`rocesim_scenario::assumptions`]).
    assumptions: Vec<String>,
}

/// A finished run: the world (the parts merged into one), read by the
/// outputs as a serial run's.
pub struct Finished {
    pub name: String,
    pub world: World,
    /// The unsourced defaults the run took (`summary.json` lists them).
    pub assumptions: Vec<String>,
    /// What a part merged into `world` still held at the end.
    leftover: Leftover,
}

impl Finished {
    /// [`World::check_invariants`] of the whole run.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.world.check_invariants_with(self.leftover)
    }
}

impl Simulation {
    /// Builds scenario `sc` as `[sim] partitions` asks: one world, or one
    /// per part, cut by [`plan::plan`]. Errors name their key.
    pub fn build(sc: &Scenario, name: &str, opts: &BuildOptions) -> Result<Simulation, ModelError> {
        let key = || KeyPath::root().key("sim").key("partitions");
        let mut world = rocesim_scenario::build_world(sc, opts)?;
        // Each host, switch and flow orders its own events (the scheduler's
        // key has 24 bits for them).
        if world.origins() > rocesim_model::engine::MAX_ORIGINS {
            return Err(ModelError::new(
                KeyPath::root().key("traffic"),
                format!(
                    "{} hosts, switches and flows: at most {} can be simulated in one run",
                    world.origins() - 1,
                    rocesim_model::engine::MAX_ORIGINS - 1
                ),
            )
            .hint(
                "a shorter traffic duration or fewer flows (split the arrivals over several runs)",
            ));
        }
        let twin = match sc.sim.partitions.unwrap_or(1) {
            0 => {
                return Err(
                    ModelError::new(key(), "0 partitions: at least 1".to_string())
                        .hint("1 runs the fabric on one thread, N cuts it into N parts"),
                );
            }
            1 => None,
            n @ 2..=MAX_PARTS => {
                let plan = plan::plan(&world, n as u8).map_err(|e| {
                    ModelError::new(key(), format!("cannot split this scenario: {e}"))
                        .hint("set `partitions = 1` (the default), or fewer parts")
                })?;
                let (hosts, switches) = plan.mask(0);
                let mut others = Vec::new();
                for part in 1..n as u8 {
                    // A part's taps are those `world` opened, handed over.
                    let no_taps = BuildOptions { tap_dir: None };
                    let mut other = rocesim_scenario::build_world(sc, &no_taps)?;
                    let (hosts, switches) = plan.mask(part);
                    other.confine(&hosts, &switches);
                    others.push(other);
                }
                world.confine(&hosts, &switches);
                for other in &mut others {
                    world.hand_over_taps(other);
                }
                Some((others, plan))
            }
            n => {
                return Err(ModelError::new(
                    key(),
                    format!("{n} partitions: at most {MAX_PARTS} are supported"),
                )
                .hint("about one part per core: the parts meet after every window"));
            }
        };
        Ok(Simulation {
            name: name.to_string(),
            stop_at: sc.sim.stop_at.map(|d| d.0),
            world,
            twin,
            assumptions: rocesim_scenario::assumptions(sc),
        })
    }

    /// The world, or part 0: its names, settings and static network are
    /// every part's.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The unsourced defaults the scenario runs on.
    pub fn assumptions(&self) -> &[String] {
        &self.assumptions
    }

    /// The parts the run is split into.
    pub fn partitions(&self) -> u32 {
        self.twin
            .as_ref()
            .map_or(1, |(others, _)| 1 + others.len() as u32)
    }

    /// The plan of a partitioned world's cut; `None` for a serial one.
    pub fn plan(&self) -> Option<&Plan> {
        self.twin.as_ref().map(|(_, plan)| plan)
    }

    /// How a partitioned world is cut; `None` for a serial one.
    pub fn cut(&self) -> Option<Cut> {
        self.twin.as_ref().map(|(_, plan)| plan.cut(&self.world))
    }

    /// Creates the capture files in `dir` (see
    /// [`rocesim_scenario::open_taps`]); a tap records in the part of its
    /// port.
    pub fn open_taps(&mut self, sc: &Scenario, dir: &Path) -> Result<(), ModelError> {
        rocesim_scenario::open_taps(&mut self.world, sc, dir)?;
        if let Some((others, _)) = self.twin.as_mut() {
            for other in others {
                self.world.hand_over_taps(other);
            }
        }
        Ok(())
    }

    /// Runs until nothing is left to do or the scenario's `stop_at`.
    pub fn run(self, progress: &mut dyn Progress) -> Finished {
        let Simulation {
            name,
            stop_at,
            mut world,
            twin,
            assumptions,
        } = self;
        let Some((mut others, plan)) = twin else {
            world.run(stop_at, progress);
            return Finished {
                name,
                world,
                assumptions,
                leftover: Leftover::default(),
            };
        };
        let (left, leftover) = if others.len() == 1 {
            let twin = others.pop().expect("one other part");
            run(&mut world, twin, plan.lookahead, stop_at, progress)
        } else {
            many::run(&mut world, others, &plan, stop_at, progress)
        };
        world.end_run(stop_at, left, progress);
        Finished {
            name,
            world,
            assumptions,
            leftover,
        }
    }
}

/// The two threads' meeting points, each on a line of its own: a thread
/// spinning on a line that the other writes as it runs events costs both
/// a cache miss per write (the stars' windows ran at half speed so).
///
/// Most windows meet *fast*: as its window ends, each thread posts its
/// frames and a [`Report`], then reads the other's and works out the next
/// window by itself ([`next_start`]): both get the same from the same
/// reports. No thread waits for the other to decide, and neither touches
/// the other's world. The meeting after a window that stopped at a
/// sample, and those before the first window, before every 1024th
/// (progress) and while the sampler is paused, are *slow*: the
/// coordinator takes the worker's report, locks the twin if it must (to
/// sample, to schedule a sample, to count finished flows), decides the
/// end and sends it with [`Go`], as every meeting did before; reading the
/// twin's scheduler and `Part` between windows, taking its lock and
/// waiting for `go` cost the 2:1 star's windows most of 1.9 us each.
///
/// Reports and mail alternate between two slots by window parity: a
/// thread writes window `k + 2`'s only after the other has read window
/// `k`'s (it read them before it ran window `k + 1`, whose report the
/// writer waited for).
struct Sync {
    /// Slow meetings: the window the worker may start, its end.
    go: Line<Go>,
    /// `reports[part][k % 2]`: what part `part` says after window `k`.
    reports: [[Line<Report>; 2]; 2],
    /// `mail[part][k % 2]`: the frames part `part` sent the other in
    /// window `k`, which go into the other's lanes as window `k + 1`
    /// starts.
    mail: [[Line<Slot>; 2]; 2],
    /// Either thread panicked: nobody is coming.
    dead: Line<AtomicBool>,
    /// How long a wait spins before it yields (0 on one CPU): tens of
    /// microseconds, longer than a window usually keeps the other part (256
    /// spins made the 2:1 star's windows 10 % slower).
    spins: u32,
}

/// One slot of mail, not locked: the reports order every access to it.
/// Part `p` writes `mail[p][k % 2]` as window `k` ends, before its report
/// `k` (a release); the other part reads it after that report (an
/// acquire), as its window `k + 1` starts, before its own report `k + 1`;
/// and part `p` writes the slot again only for window `k + 2`, after it
/// read that report `k + 1`. A slow meeting's coordinator moves part 0's
/// frames itself while the worker waits for `go` (a release it acquires).
/// A `Mutex` here cost each window two more atomic exchanges on a line
/// the other thread had just written, and its lock word pushed the mail
/// onto a second line.
struct Slot(UnsafeCell<Mail>);

// SAFETY: `Slot::get`'s callers follow the protocol above: one thread at a
// time, ordered by the reports' and `go`'s release and acquire.
unsafe impl std::marker::Sync for Slot {}

impl Slot {
    /// # Safety
    /// The caller must be the thread the protocol above lets at this slot
    /// now, and hold the reference only while it is.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut Mail {
        // SAFETY: exclusive by the caller's contract.
        unsafe { &mut *self.0.get() }
    }
}

/// A slow meeting's answer: the window the worker may start, its end
/// (`u64::MAX`: stop) and when the next sample is due.
#[derive(Default)]
struct Go {
    epoch: AtomicU64,
    end: AtomicU64,
    next_sample: AtomicU64,
}

/// What a part says as a window ends (`epoch` written last): times as
/// picoseconds, [`NO_TIME`] for none.
#[derive(Default)]
struct Report {
    epoch: AtomicU64,
    /// The part's next event, the frames it just received aside.
    next: AtomicU64,
    /// The earliest arrival among the frames it sent in the window.
    sent_first: AtomicU64,
    /// Its earliest activity in the window.
    first_activity: AtomicU64,
    /// The window stopped at its `Sample`.
    at_sample: AtomicBool,
}

/// A [`Report`] as read.
#[derive(Debug, Clone, Copy, Default)]
struct Said {
    next: Option<Ps>,
    sent_first: Option<Ps>,
    first_activity: Option<Ps>,
    at_sample: bool,
}

impl Sync {
    /// Waits until `x` reaches `epoch`: spinning, as a window lasts
    /// microseconds, then yielding. With one CPU there is no point in
    /// spinning: the other thread runs only once this one yields (2,048
    /// spins a wait made a split star take 6 s instead of 0.2 on one CPU).
    fn wait(&self, x: &AtomicU64, epoch: u64) {
        wait_until(
            x,
            epoch,
            &self.dead,
            self.spins,
            "the other partition's thread panicked",
        );
    }

    fn new() -> Sync {
        let mail = || Line(Slot(UnsafeCell::new(Mail::default())));
        Sync {
            go: Line(Go::default()),
            reports: Default::default(),
            mail: [[mail(), mail()], [mail(), mail()]],
            dead: Line(AtomicBool::new(false)),
            spins: match std::thread::available_parallelism() {
                Ok(n) if n.get() > 1 => 1 << 11,
                _ => 0,
            },
        }
    }

    /// Part `w` (the world of part `part`) ends window `k`, in which it
    /// did `win`: its frames go to the mail, then its report, which is
    /// returned.
    fn post(&self, part: usize, k: u64, w: &mut World, win: Window) -> Said {
        let told = said(w, win);
        // SAFETY: part `part`'s thread is the slot's writer here (`Slot`).
        let slot = unsafe { self.mail[part][(k % 2) as usize].get() };
        w.departures.move_to(slot);
        let r = &self.reports[part][(k % 2) as usize];
        r.next.store(pack(told.next), Ordering::Relaxed);
        r.sent_first.store(pack(told.sent_first), Ordering::Relaxed);
        r.first_activity
            .store(pack(told.first_activity), Ordering::Relaxed);
        r.at_sample.store(told.at_sample, Ordering::Relaxed);
        r.epoch.store(k, Ordering::Release);
        told
    }

    /// Waits for part `part`'s report of window `k` and reads it.
    fn read(&self, part: usize, k: u64) -> Said {
        let r = &self.reports[part][(k % 2) as usize];
        self.wait(&r.epoch, k);
        Said {
            next: unpack(r.next.load(Ordering::Relaxed)),
            sent_first: unpack(r.sent_first.load(Ordering::Relaxed)),
            first_activity: unpack(r.first_activity.load(Ordering::Relaxed)),
            at_sample: r.at_sample.load(Ordering::Relaxed),
        }
    }

    /// Moves the frames part `part` sent in window `k` into `to`.
    fn take(&self, part: usize, k: u64, to: &mut Mail) {
        // SAFETY: the caller read part `part`'s report of window `k` (or,
        // in a slow meeting, is its writer with the worker waiting): no
        // thread writes the slot before the caller's next report (`Slot`).
        unsafe { self.mail[part][(k % 2) as usize].get() }.move_to(to);
    }
}

/// Windows between two progress reports, each a slow meeting: some 10 ms
/// of a star's run (every 64th, as before, made half of its slow meetings,
/// for a bar redrawn at most 20 times a second).
const PROGRESS_EVERY: u64 = 1024;

/// Whether the meeting after window `k` is slow (see [`Sync`]): both
/// threads decide it from what both know.
fn slow_meeting(k: u64, at_sample: bool, next_sample: Option<Ps>) -> bool {
    k == 0 || at_sample || next_sample.is_none() || (k + 1) % PROGRESS_EVERY == 0
}

/// When the window after a fast meeting starts, from the two parts'
/// reports: their next events and the frames they sent each other.
fn next_start(a: Said, b: Said) -> Option<Ps> {
    [a.next, a.sent_first, b.next, b.sent_first]
        .into_iter()
        .flatten()
        .min()
}

/// A window from `start`: as far as a frame from the other part cannot
/// reach, and no further than the stop or (both parts stop at their
/// `Sample`) just after the next sample, if one is due.
fn window_end(start: Ps, limit: Ps, lookahead: Ps, sample: Option<Ps>) -> Ps {
    let end = Ps(start.0.saturating_add(lookahead.0)).min(Ps(limit.0.saturating_add(1)));
    sample.map_or(end, |ts| end.min(Ps(ts.0.saturating_add(1))))
}

/// An absent time in [`Report`] and [`Go`]: no event runs at the last
/// picosecond.
const NO_TIME: u64 = u64::MAX;

fn pack(t: Option<Ps>) -> u64 {
    t.map_or(NO_TIME, |t| t.0)
}
fn unpack(t: u64) -> Option<Ps> {
    (t != NO_TIME).then_some(Ps(t))
}

/// A value alone on its cache lines (two: the adjacent-line prefetcher
/// pulls pairs).
#[derive(Default)]
#[repr(align(128))]
struct Line<T>(T);

/// Waits until `x` reaches `k`: `spins` spins, then yielding to the other
/// threads; panics with `why` once `dead` says a thread it waits for died.
fn wait_until(x: &AtomicU64, k: u64, dead: &AtomicBool, spins: u32, why: &str) {
    let mut spun = 0u32;
    while x.load(Ordering::Acquire) < k {
        if dead.load(Ordering::Relaxed) {
            panic!("{why}");
        }
        spun += 1;
        if spun < spins {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Tells the coordinator if the worker dies.
struct DeathNotice<'a>(&'a AtomicBool);
impl Drop for DeathNotice<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Part 1 of a run, as its worker thread holds it.
struct Part {
    world: Box<World>,
    /// The frames part 0 sent it, which go into its lanes as its next
    /// window starts (on its own thread, whose caches hold the lanes).
    inbox: Mail,
    /// Events it took that were not its own ([`Window::foreign`]).
    foreign: u64,
    /// Its count of finished flows, for the progress bar.
    tally: FlowTally,
}

impl Part {
    /// Its next event, the frames received included.
    fn next_time(&self) -> Option<Ps> {
        earliest(self.world.sched.peek_time(), self.inbox.first)
    }
}

fn worker(twin: &Mutex<Part>, sync: &Sync, cpu: Option<usize>, limit: Ps, lookahead: Ps) {
    // The worker's thread ends with the run: its CPU stays set.
    let _pinned = cpu.map(affinity::pin);
    let _notice = DeathNotice(&sync.dead);
    // Windows run; what this part said after the last; the next sample.
    let (mut k, mut me, mut next_sample) = (0u64, Said::default(), None);
    loop {
        let end = if slow_meeting(k, me.at_sample, next_sample) {
            sync.wait(&sync.go.epoch, k + 1);
            let end = sync.go.end.load(Ordering::Relaxed);
            if end == u64::MAX {
                return;
            }
            next_sample = unpack(sync.go.next_sample.load(Ordering::Relaxed));
            Ps(end)
        } else {
            match next_start(sync.read(0, k), me).filter(|&t| t <= limit) {
                Some(start) => window_end(start, limit, lookahead, next_sample),
                None => return,
            }
        };
        // Locked by the coordinator only at slow meetings: this lock's
        // line stays with this thread.
        let mut guard = twin.lock().expect("the worker holds its part");
        let b = &mut *guard;
        if k > 0 {
            sync.take(0, k, &mut b.inbox);
        }
        b.world.deliver(&mut b.inbox);
        let win = b.world.run_window(end);
        b.foreign += win.foreign;
        k += 1;
        me = sync.post(1, k, &mut b.world, win);
    }
}

/// Runs the two parts `w` (part 0) and `twin` (part 1) to the end, then
/// moves the twin's components into `w`. Returns whether events were left
/// when the run stopped, and what the twin still held.
///
/// Sampling: each part has the serial run's `Sample` events, scheduled
/// when a serial run schedules them (so after the events of their time
/// scheduled before, and before the others); a window stops at them, and
/// between windows the coordinator takes the sample from the parts that
/// own each row, and schedules the next in both.
fn run(
    w: &mut World,
    twin: World,
    lookahead: Ps,
    stop_at: Option<Ps>,
    progress: &mut dyn Progress,
) -> (bool, Leftover) {
    let limit = limit(stop_at);
    let mut twin = Part {
        world: Box::new(twin),
        inbox: Mail::default(),
        foreign: 0,
        tally: FlowTally::default(),
    };
    for x in [&mut *w, &mut *twin.world] {
        x.sched.at(Ps::ZERO, Event::Sample);
    }
    // What part 1 said after the last window.
    let mut b = Said {
        next: twin.next_time(),
        ..Said::default()
    };
    // Part 0's inbox and foreign events (part 1's are its `Part`'s).
    let mut inbox = Mail::default();
    let mut foreign = 0u64;
    let mut tally = FlowTally::default();
    let twin = Mutex::new(twin);
    let sync = Sync::new();
    let mut left = false;
    // Windows run.
    let mut k = 0u64;
    std::thread::scope(|s| {
        let cpus = affinity::two_cpus();
        let (worker_cpu, part1, meet) = (cpus.map(|c| c[1]), &twin, &sync);
        s.spawn(move || worker(part1, meet, worker_cpu, limit, lookahead));
        // The coordinator's mask comes back when the run ends: the
        // threads that write the outputs inherit it.
        let _pinned = cpus.map(|c| affinity::pin(c[0]));
        let _notice = DeathNotice(&sync.dead);
        let lock_twin = || twin.lock().expect("the worker is waiting");
        // When the sampler's next `Sample` is due (`None`: it paused).
        let mut next_sample = Some(Ps::ZERO);
        // Events before it have run in both parts.
        let mut done_to = Ps::ZERO;
        // What part 0 said after the last window.
        let mut a = Said::default();
        // Whether the last meeting was slow.
        let mut slow;
        loop {
            // Between windows k and k + 1: part 1's frames of window k
            // come in (part 0's go out as its window ends, below).
            if k > 0 {
                sync.take(1, k, &mut inbox);
            }
            slow = slow_meeting(k, a.at_sample, next_sample);
            if !slow {
                let t_ev = next_start(a, b);
                let Some(start) = t_ev.filter(|&t| t <= limit) else {
                    left = t_ev.is_some();
                    break;
                };
                let end = window_end(start, limit, lookahead, next_sample);
                done_to = end;
                k += 1;
                w.deliver(&mut inbox);
                let win = w.run_window(end);
                foreign += win.foreign;
                a = sync.post(0, k, w, win);
                b = sync.read(1, k);
                continue;
            }
            // Part 1's frames of window k, if the worker is to be
            // scheduled here (its next event, below, counts them).
            let mut to_b = a.sent_first;
            if a.at_sample {
                debug_assert!(b.at_sample, "the parts stop at the same sample");
                let mut guard = lock_twin();
                let tw = &mut *guard;
                // Part 0's frames go to part 1's inbox, where the sample
                // counts them.
                if k > 0 {
                    sync.take(0, k, &mut tw.inbox);
                }
                let ts = w.now();
                next_sample = sample(w, &inbox, tw, ts);
                b = Said {
                    next: tw.next_time(),
                    ..Said::default()
                };
                a.first_activity = None;
                to_b = None;
            }
            // The sampler resumes after a pause at the first activity, as
            // `note_activity` has it; a grid point the window passed
            // gives way to the first after it.
            let first = earliest(a.first_activity, b.first_activity);
            if let (None, Some(t), true) = (next_sample, first, w.sampler.is_paused()) {
                let k = w.sampler.resume_at(t, w.ports.len());
                // No event after `k` has run (a window of one instant on
                // the grid, below), or the first grid point after them.
                let k = if k.0 + 1 >= done_to.0 {
                    k
                } else {
                    w.sampler.grid_at_or_after(done_to)
                };
                w.sched.at(k, Event::Sample);
                let mut tw = lock_twin();
                tw.world.sched.at(k, Event::Sample);
                b.next = tw.next_time();
                next_sample = Some(k);
            }
            // Part 0's next event counts part 1's frames, now in its inbox.
            let t_ev = earliest(
                earliest(w.sched.peek_time(), inbox.first),
                earliest(b.next, to_b),
            );
            let Some(start) = t_ev.filter(|&t| t <= limit) else {
                left = t_ev.is_some();
                break;
            };
            let mut end = window_end(start, limit, lookahead, next_sample);
            // Paused: activity at a grid point resumes the sampling there,
            // after that instant's events.
            if next_sample.is_none() && w.sampler.grid_at_or_after(start) == start {
                end = Ps(start.0.saturating_add(1));
            }
            if (k + 1) % PROGRESS_EVERY == 0 {
                if !w.flows.is_empty() {
                    let (da, total) = w.count_finished_flows(&mut tally);
                    let mut tw = lock_twin();
                    let tw = &mut *tw;
                    let (db, _) = tw.world.count_finished_flows(&mut tw.tally);
                    progress.flows(da + db - tally.started(), total);
                }
                progress.events(w.events() + lock_twin().world.events());
                progress.update(start, stop_at);
            }
            done_to = end;
            k += 1;
            sync.go.end.store(end.0, Ordering::Relaxed);
            sync.go
                .next_sample
                .store(pack(next_sample), Ordering::Relaxed);
            sync.go.epoch.store(k, Ordering::Release);
            w.deliver(&mut inbox);
            let win = w.run_window(end);
            foreign += win.foreign;
            a = sync.post(0, k, w, win);
            b = sync.read(1, k);
        }
        // A fast meeting's stop the worker saw too; a slow one's it is
        // told.
        if slow {
            sync.go.end.store(u64::MAX, Ordering::Relaxed);
            sync.go.epoch.store(k + 1, Ordering::Release);
        }
    });
    let mut twin = twin.into_inner().expect("the worker is done");
    // Part 0's frames of the last window are still in the mail.
    if k > 0 {
        sync.take(0, k, &mut twin.inbox);
    }
    let mut leftover = w.absorb(*twin.world, foreign + twin.foreign);
    leftover.pending |= !twin.inbox.is_empty() || !inbox.is_empty();
    (left, leftover)
}

/// What part `w` says as a window ends in which it did `win` (its inbox
/// went into the lanes as the window started).
fn said(w: &World, win: Window) -> Said {
    Said {
        next: w.sched.peek_time(),
        sent_first: w.departures.first,
        first_activity: win.first_activity,
        at_sample: win.at_sample,
    }
}

/// The sample at `ts`, where both parts, `w` (part 0, whose inbox is
/// `inbox`) and `b`, stopped at their `Sample`; returns when the next is
/// due (`None`: the sampler paused).
fn sample(w: &mut World, inbox: &Mail, b: &mut Part, ts: Ps) -> Option<Ps> {
    for x in [&mut *w, &mut *b.world] {
        // A `TxDone` after the tick is activity in the next interval.
        for port in 0..x.ports.len() as u32 {
            if !x.ports[port as usize].elsewhere() {
                x.schedule_tx_done(port);
            }
        }
    }
    // One event of a serial run.
    b.foreign += 1;
    let mut s = std::mem::take(&mut w.sampler);
    let (wr, br): (&World, &World) = (w, &b.world);
    s.take(
        ts,
        wr.ports.len(),
        |i| {
            if wr.ports[i].elsewhere() {
                br.port_row(i)
            } else {
                wr.port_row(i)
            }
        },
        wr.qps.len(),
        |i| {
            // The workload is its client's part's.
            let client = wr.workloads[wr.qps[i].workload as usize]
                .clients
                .first()
                .copied();
            let wl = match client {
                Some(c) if !wr.owns_qp(c) => &br.workloads,
                _ => &wr.workloads,
            };
            if wr.owns_qp(i as u32) {
                wr.qp_row(i, wl)
            } else {
                br.qp_row(i, wl)
            }
        },
    );
    // Activity in either part keeps the sampler ticking.
    if b.world.sampler.take_active() {
        s.note_active();
    }
    let inbound = inbox.to.len() + b.inbox.to.len();
    let pending = w.sched.pending() + b.world.sched.pending() + inbound > 0;
    let next = s.after_tick(ts, pending);
    w.sampler = s;
    if let Some(t) = next {
        for x in [&mut *w, &mut *b.world] {
            x.sched.at(t, Event::Sample);
        }
    }
    next
}

#[cfg(test)]
mod tests;
