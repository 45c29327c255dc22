//! A run cut into three parts or more (`[sim] partitions = N`): each part
//! on a thread of its own, meeting after every window.
//!
//! ```text
//!   coordinator (part 0)                       workers (parts 1 .. N-1)
//!   decide window k: its end E       ──go(k, E)──▶  wait for go
//!   deliver inbox, run window to E               deliver inbox, run to E
//!   wait for every part's done(k)    ◀──done(k)──  done(k), wait for go
//!   route every part's departures to the inbox of the port's part;
//!   a sample across the parts if the window stopped at one;
//!   the next window: W = earliest next event or frame of any part,
//!                    E = min(W + L, just after the next sample, stop)
//! ```
//!
//! Unlike the two-part run ([`super::run`]), every meeting is one the
//! coordinator decides, with the workers waiting: simpler, and a meeting
//! costs a few microseconds more, which a fabric's windows of a
//! microsecond of simulated time (thousands of events each) pay for.
//! The outputs are the serial run's, as for two parts: every event runs
//! under the key a serial run gives it ([`rocesim_model::engine`]).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rocesim_model::engine::Event;
use rocesim_model::packet::NO_INT;
use rocesim_model::time::Ps;
use rocesim_model::world::part::{Leftover, Mail, Window, earliest};
use rocesim_model::world::{FlowTally, Progress, Settings, World, limit};

use super::{PROGRESS_EVERY, Plan, wait_until, window_end};

/// One part a worker runs.
struct Part {
    world: World,
    /// Frames from the other parts, into the lanes as its window starts.
    inbox: Mail,
    /// Events it took that were another part's ([`Window::foreign`]).
    foreign: u64,
    /// What it did in its last window.
    win: Window,
    tally: FlowTally,
}

impl Part {
    fn new(world: World) -> Part {
        Part {
            world,
            inbox: Mail::default(),
            foreign: 0,
            win: Window::default(),
            tally: FlowTally::default(),
        }
    }

    fn next_time(&self) -> Option<Ps> {
        earliest(self.world.sched.peek_time(), self.inbox.first)
    }

    /// Delivers its inbox and runs its window to `end`.
    fn run_window(&mut self, end: Ps) {
        self.world.deliver(&mut self.inbox);
        self.win = self.world.run_window(end);
        self.foreign += self.win.foreign;
    }
}

/// The meetings: the coordinator's `go` (window number and end; `STOP`
/// ends the run) and each worker's `done`.
struct Meet {
    go: AtomicU64,
    end: AtomicU64,
    done: Vec<AtomicU64>,
    /// A thread panicked: nobody is coming.
    dead: AtomicBool,
}

const STOP: u64 = u64::MAX;

impl Meet {
    /// Waits until `x` reaches `k`, spinning briefly, then yielding.
    fn wait(&self, x: &AtomicU64, k: u64) {
        wait_until(
            x,
            k,
            &self.dead,
            1 << 10,
            "another partition's thread panicked",
        );
    }
}

/// Sets `dead` if the thread holding it panics.
struct DeathNotice<'a>(&'a AtomicBool);
impl Drop for DeathNotice<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

fn worker(part: &Mutex<Part>, meet: &Meet, me: usize) {
    let _notice = DeathNotice(&meet.dead);
    for k in 1u64.. {
        meet.wait(&meet.go, k);
        let end = meet.end.load(Ordering::Relaxed);
        if end == STOP {
            return;
        }
        part.lock()
            .expect("a worker holds its part")
            .run_window(Ps(end));
        meet.done[me].store(k, Ordering::Release);
    }
}

/// Runs part 0 (`w`) and `others` (parts 1 and up) of `plan` to the end,
/// then moves their components into `w`. Returns whether events were left
/// when the run stopped, and what the other parts still held.
pub(super) fn run(
    w: &mut World,
    others: Vec<World>,
    plan: &Plan,
    stop_at: Option<Ps>,
    progress: &mut dyn Progress,
) -> (bool, Leftover) {
    let limit = limit(stop_at);
    let lookahead = plan.lookahead;
    let parts: Vec<Mutex<Part>> = others
        .into_iter()
        .map(|o| Mutex::new(Part::new(o)))
        .collect();
    let mut p0 = Part::new(std::mem::replace(w, placeholder(w)));
    p0.world.sched.at(Ps::ZERO, Event::Sample);
    for p in &parts {
        p.lock()
            .expect("no thread yet")
            .world
            .sched
            .at(Ps::ZERO, Event::Sample);
    }
    let meet = Meet {
        go: AtomicU64::new(0),
        end: AtomicU64::new(0),
        done: (0..parts.len()).map(|_| AtomicU64::new(0)).collect(),
        dead: AtomicBool::new(false),
    };
    let mut left = false;
    std::thread::scope(|s| {
        for (i, part) in parts.iter().enumerate() {
            let meet = &meet;
            s.spawn(move || worker(part, meet, i));
        }
        let _notice = DeathNotice(&meet.dead);
        // When the next `Sample` is due (`None`: the sampler paused), and
        // the end of the last window.
        let (mut next_sample, mut done_to) = (Some(Ps::ZERO), Ps::ZERO);
        let mut k = 0u64;
        loop {
            // Between windows k and k + 1, the workers waiting for go.
            let mut guards: Vec<_> = parts
                .iter()
                .map(|p| p.lock().expect("the workers wait"))
                .collect();
            let mut all: Vec<&mut Part> = std::iter::once(&mut p0)
                .chain(guards.iter_mut().map(|g| &mut **g))
                .collect();
            route_mail(&mut all, plan);
            let wins: Vec<Window> = all.iter().map(|p| p.win).collect();
            if wins[0].at_sample {
                debug_assert!(wins.iter().all(|w| w.at_sample), "one sample for all");
                let ts = all[0].world.now();
                next_sample = sample(&mut all, plan, ts);
                for p in all.iter_mut() {
                    p.win.first_activity = None;
                }
            }
            // The sampler resumes after a pause at the first activity.
            let first = all
                .iter()
                .fold(None, |t, p| earliest(t, p.win.first_activity));
            if let (None, Some(t), true) = (next_sample, first, all[0].world.sampler.is_paused()) {
                let w0 = &mut all[0].world;
                let g = w0.sampler.resume_at(t, w0.ports.len());
                let g = if g.0 + 1 >= done_to.0 {
                    g
                } else {
                    w0.sampler.grid_at_or_after(done_to)
                };
                for p in all.iter_mut() {
                    p.world.sched.at(g, Event::Sample);
                }
                next_sample = Some(g);
            }
            for p in all.iter_mut() {
                p.win = Window::default();
            }
            let t_ev = all.iter().fold(None, |t, p| earliest(t, p.next_time()));
            let Some(start) = t_ev.filter(|&t| t <= limit) else {
                left = t_ev.is_some();
                break;
            };
            let mut end = window_end(start, limit, lookahead, next_sample);
            if next_sample.is_none() && all[0].world.sampler.grid_at_or_after(start) == start {
                end = Ps(start.0.saturating_add(1));
            }
            if (k + 1) % PROGRESS_EVERY == 0 {
                if !all[0].world.flows.is_empty() {
                    let (mut done, mut total) = (0, 0);
                    for p in all.iter_mut() {
                        let (d, t) = p.world.count_finished_flows(&mut p.tally);
                        done += d;
                        total = t;
                    }
                    // Every part starts every flow and counts the others'
                    // as done: those are counted N - 1 times too often.
                    let extra = all[0].tally.started() * (all.len() - 1);
                    progress.flows(done.saturating_sub(extra), total);
                }
                progress.events(all.iter().map(|p| p.world.events()).sum());
                progress.update(start, stop_at);
            }
            drop(all);
            drop(guards);
            done_to = end;
            k += 1;
            meet.end.store(end.0, Ordering::Relaxed);
            meet.go.store(k, Ordering::Release);
            p0.run_window(end);
            for d in &meet.done {
                meet.wait(d, k);
            }
        }
        meet.end.store(STOP, Ordering::Relaxed);
        meet.go.store(k + 1, Ordering::Release);
    });
    *w = p0.world;
    let mut leftover = Leftover {
        live: 0,
        pending: !p0.inbox.is_empty(),
    };
    let mut foreign = p0.foreign;
    for p in parts {
        let p = p.into_inner().expect("the workers are done");
        leftover.pending |= !p.inbox.is_empty();
        let l = w.absorb(p.world, foreign + p.foreign);
        foreign = 0;
        leftover.live += l.live;
        leftover.pending |= l.pending;
    }
    (left, leftover)
}

/// What stands in `w`'s place while its world is part 0's: the world
/// itself is moved, so a stand-in must exist; an empty world of the same
/// seed and settings costs nothing.
fn placeholder(w: &World) -> World {
    let settings = Settings {
        sample_interval: Ps(1),
        tx_time_step: 1,
    };
    World::new(w.seed(), settings, Vec::new())
}

/// Moves every part's departures into the inbox of the part that
/// simulates each frame's port, in the order sent, and each note to the
/// part of its QP.
fn route_mail(all: &mut [&mut Part], plan: &Plan) {
    for from in 0..all.len() {
        let mut out = std::mem::take(&mut all[from].world.departures);
        for (&(key, port), frame) in out.to.iter().zip(&out.frames) {
            let to = usize::from(plan.port_part[port as usize]);
            let int = (frame.int != NO_INT).then(|| &out.ints[frame.int as usize]);
            let mut f = *frame;
            f.int = NO_INT;
            all[to].inbox.send(key, port, &f, int);
        }
        out.to.clear();
        out.frames.clear();
        out.ints.clear();
        out.first = None;
        // A note goes to the part of the end it is for.
        for note in out.notes.drain(..) {
            let host = all[from].world.qps[note.qp as usize].host;
            let to = usize::from(plan.host_part[host as usize]);
            all[to].inbox.notes.push(note);
        }
        all[from].world.departures = out;
    }
}

/// The sample at `ts`, where every part stopped at its `Sample`; returns
/// when the next is due (`None`: the sampler paused).
fn sample(all: &mut [&mut Part], plan: &Plan, ts: Ps) -> Option<Ps> {
    for p in all.iter_mut() {
        let x = &mut p.world;
        for port in 0..x.ports.len() as u32 {
            if !x.ports[port as usize].elsewhere() {
                x.schedule_tx_done(port);
            }
        }
    }
    // One event of a serial run, taken by every part.
    for p in all.iter_mut().skip(1) {
        p.foreign += 1;
    }
    let mut s = std::mem::take(&mut all[0].world.sampler);
    {
        let worlds: Vec<&World> = all.iter().map(|p| &p.world).collect();
        let w0 = worlds[0];
        let host_part = |h: u32| usize::from(plan.host_part[h as usize]);
        s.take(
            ts,
            w0.ports.len(),
            |i| worlds[usize::from(plan.port_part[i])].port_row(i),
            w0.qps.len(),
            |i| {
                // The workload is its client's part's.
                let wl_part = w0.workloads[w0.qps[i].workload as usize]
                    .clients
                    .first()
                    .map_or(0, |&c| host_part(w0.qps[c as usize].host));
                let owner = host_part(w0.qps[i].host);
                worlds[owner].qp_row(i, &worlds[wl_part].workloads)
            },
        );
    }
    let mut active = false;
    for p in all.iter_mut().skip(1) {
        active |= p.world.sampler.take_active();
    }
    if active {
        s.note_active();
    }
    let pending = all
        .iter()
        .map(|p| p.world.sched.pending() + p.inbox.to.len())
        .sum::<usize>()
        > 0;
    let next = s.after_tick(ts, pending);
    all[0].world.sampler = s;
    if let Some(t) = next {
        for p in all.iter_mut() {
            p.world.sched.at(t, Event::Sample);
        }
    }
    next
}
