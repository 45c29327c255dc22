//! Time series: every port's and every QP's counters (and the rate its
//! limiter allows, which DCQCN moves), sampled on a grid.
//!
//! Samples sit on a grid of multiples of `every`. The sampler pauses after
//! an interval without activity and, when activity comes back at `t`,
//! repeats the last sample's values (which nothing changed in between) at
//! the grid point just before `t` only: a line across the idle span, not a
//! row per skipped point. Past ~1000 samples per series (or ~1 M rows in
//! all) the grid coarsens: every other point goes.
//!
//! A QP's series ends with the first sample after its work is done (its
//! workload index has posted everything and reaped every completion): that
//! row holds its final values and survives any coarsening. A fabric run
//! makes a QP pair per flow, and most flows last microseconds: sampling
//! every finished QP at every tick cost a 99,000-flow run 2.2 M rows of
//! repeated values and a walk over every QP it ever made, per tick.
//!
//! ```text
//!   Sample at k·every ──take──▶ one row per port, one per QP
//!        │ activity since the last one? ── yes ──▶ Sample at (k+1)·every
//!        └─ no: paused ─── next activity at t ──▶ repeat the last rows at the grid point before t, Sample after t
//! ```

use super::World;
use super::port::PRIOS;
use super::qp::{Role, WorkloadSlot};
use crate::engine::Event;
use crate::time::Ps;

/// One sample of one port.
#[derive(Debug, Clone, Copy)]
pub struct PortSample {
    pub t: Ps,
    /// Index of the port (in the world's port list).
    pub port: u32,
    pub tx_bytes: u64,
    pub rx_bytes: u64,
    /// Bytes in the port's egress queues (saturating at 4 GiB, past any
    /// switch buffer: a large fabric keeps a million samples, and 32-bit
    /// queue depths make each 80 bytes instead of 112).
    pub queued: u32,
    pub drops: u64,
    /// Bytes in each priority's egress queue (saturating, as `queued`).
    pub queued_prio: [u32; PRIOS],
    /// Bit `p` set: the peer has priority `p` paused (PFC/PAUSE).
    pub paused: u8,
}

/// One sample of one QP.
#[derive(Debug, Clone, Copy)]
pub struct QpSample {
    pub t: Ps,
    /// Index of the QP (in the world's QP list).
    pub qp: u32,
    /// Payload sent, retransmissions included.
    pub tx_payload: u64,
    /// Payload of completed messages (client QPs; 0 for servers).
    pub completed_bytes: u64,
    pub retransmitted: u64,
    /// The rate its limiter allows (DCQCN's current rate under the
    /// workload's `rate_limit`, else the line rate), bit/s.
    pub rate_bps: u64,
    /// The QP's work was done: its series ends here.
    pub last: bool,
}

#[derive(Default)]
pub struct Sampler {
    every: Ps,
    /// Something happened since the last sample.
    active_since_sample: bool,
    /// The sampler stopped ticking after an idle interval.
    paused: bool,
    ports: Vec<PortSample>,
    qps: Vec<QpSample>,
    /// The QPs whose series has ended (see the module's docs).
    ended: Vec<bool>,
}

impl Sampler {
    pub fn new(every: Ps) -> Sampler {
        Sampler {
            every,
            active_since_sample: true,
            paused: false,
            ports: Vec::new(),
            qps: Vec::new(),
            ended: Vec::new(),
        }
    }

    pub fn port_samples(&self) -> &[PortSample] {
        &self.ports
    }

    pub fn qp_samples(&self) -> &[QpSample] {
        &self.qps
    }

    /// The first grid point after `t`.
    fn next_time(&self, t: Ps) -> Ps {
        let every = self.every.0;
        Ps((t.0 / every + 1) * every)
    }

    /// Takes one sample of everything at `t` (once per time): the rows of
    /// `ports` ports and `qps` QPs, as `port_row` and `qp_row` read them
    /// (from one world, or from the partitions that own them).
    pub fn take(
        &mut self,
        t: Ps,
        ports: usize,
        port_row: impl Fn(usize) -> PortSample,
        qps: usize,
        qp_row: impl Fn(usize) -> QpSample,
    ) {
        if self.ports.last().is_some_and(|s| s.t >= t) {
            return;
        }
        self.ports
            .extend((0..ports).map(|i| PortSample { t, ..port_row(i) }));
        self.ended.resize(qps, false);
        for i in 0..qps {
            if self.ended[i] {
                continue;
            }
            let row = QpSample { t, ..qp_row(i) };
            self.ended[i] = row.last;
            self.qps.push(row);
        }
        self.thin(ports, qps);
    }

    /// Activity at `t` after the sampler paused: repeats the last sample
    /// at the grid point before `t`'s and returns when the next sample is
    /// due (see [`World::note_activity`]).
    pub fn resume_at(&mut self, t: Ps, ports: usize) -> Ps {
        self.paused = false;
        let last = self.ports.last().map_or(Ps::ZERO, |s| s.t);
        // The grid point at or after `t`, and the one before it: the last
        // sample is repeated there only, so the series stay flat across the
        // idle span without spending their rows on it (two idle seconds
        // before the reference's flows were 20,000 grid points, and
        // thinning then left the flows' 10 ms a handful of samples).
        let every = self.every.0;
        let k = Ps(t.0.div_ceil(every) * every).max(self.next_time(last));
        let before = Ps(k.0 - every);
        if before > last {
            self.repeat_last(before, ports);
        }
        k
    }

    /// After the sample at `t`: when the next is due, if the run was
    /// active since the last one and has events `pending`. Else the sampler
    /// pauses until [`Sampler::resume_at`]: idle for a whole interval, it
    /// stops ticking, so a timer armed far ahead (a 4 s ACK timeout after
    /// the work is done) neither costs events nor thins the series.
    pub fn after_tick(&mut self, t: Ps, pending: bool) -> Option<Ps> {
        if self.active_since_sample && pending {
            self.active_since_sample = false;
            Some(self.next_time(t))
        } else {
            self.paused = true;
            None
        }
    }

    /// Something happened since the last sample.
    pub fn note_active(&mut self) {
        self.active_since_sample = true;
    }

    /// It stopped ticking after an idle interval.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Whether something happened since the last sample; forgets it.
    pub fn take_active(&mut self) -> bool {
        std::mem::take(&mut self.active_since_sample)
    }

    /// The grid point at or after `t`.
    pub fn grid_at_or_after(&self, t: Ps) -> Ps {
        Ps(t.0.div_ceil(self.every.0) * self.every.0)
    }

    /// Forgets the samples after `end`; a QP whose series ended in one
    /// ends again in the next sample.
    fn drop_after(&mut self, end: Ps) {
        self.ports.retain(|s| s.t <= end);
        let ended = &mut self.ended;
        self.qps.retain(|s| {
            if s.t <= end {
                return true;
            }
            if s.last {
                ended[s.qp as usize] = false;
            }
            false
        });
    }

    /// The last sample again at `t` (nothing happened since). QPs made
    /// since (flows starting) have no rows to repeat.
    fn repeat_last(&mut self, t: Ps, ports: usize) {
        let last = self.ports.last().map(|s| s.t);
        let qps = self
            .qps
            .iter()
            .rev()
            .take_while(|s| Some(s.t) == last)
            .count();
        for i in self.ports.len() - ports..self.ports.len() {
            let s = PortSample { t, ..self.ports[i] };
            self.ports.push(s);
        }
        for i in self.qps.len() - qps..self.qps.len() {
            if !self.qps[i].last {
                let s = QpSample { t, ..self.qps[i] };
                self.qps.push(s);
            }
        }
        self.thin(ports, qps);
    }

    /// Keeps at most ~1000 samples per series and ~1 M rows in all: past
    /// that, halves the resolution (every other grid point goes).
    fn thin(&mut self, ports: usize, qps: usize) {
        let per = ports.max(1);
        let max = (1_000_000 / (ports + qps).max(1)).clamp(20, 1000);
        if self.ports.len() / per > max {
            self.every = Ps(self.every.0 * 2);
            let every = self.every;
            let keep = |t: Ps| t.0 % every.0 == 0;
            self.ports.retain(|s| keep(s.t));
            self.qps.retain(|s| keep(s.t) || s.last);
        }
    }
}

/// A queue depth as a sample keeps it.
fn depth(bytes: u64) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

impl World {
    /// `Sample`: one sample, and the next tick unless the run was idle for
    /// a whole interval.
    pub fn sample_tick(&mut self) {
        let now = self.now();
        // A `TxDone` after the tick is activity in the next interval: it
        // runs.
        for port in 0..self.ports.len() as u32 {
            self.schedule_tx_done(port);
        }
        self.take_sample(now);
        let pending = self.sched.pending() > 0;
        if let Some(next) = self.sampler.after_tick(now, pending) {
            self.sched.at(next, Event::Sample);
        }
    }

    /// Something happened at `t`: the sampler resumes if it was paused.
    pub fn note_activity(&mut self, t: Ps) {
        self.sampler.note_active();
        if !self.sampler.paused {
            return;
        }
        let k = self.sampler.resume_at(t, self.ports.len());
        self.sched.at(k, Event::Sample);
    }

    /// The final sample at the end of the run; samples taken after it
    /// (while only stale timers were left) say nothing and go.
    pub fn final_sample(&mut self, end: Ps) {
        self.sampler.drop_after(end);
        self.take_sample(end);
    }

    fn take_sample(&mut self, t: Ps) {
        let mut s = std::mem::take(&mut self.sampler);
        s.take(
            t,
            self.ports.len(),
            |i| self.port_row(i),
            self.qps.len(),
            |i| self.qp_row(i, &self.workloads),
        );
        self.sampler = s;
    }

    /// Port `i`'s row of a sample (its time is the sampler's).
    pub fn port_row(&self, i: usize) -> PortSample {
        let p = &self.ports[i];
        let c = p.counters();
        PortSample {
            t: Ps::ZERO,
            port: i as u32,
            tx_bytes: c.tx_bytes,
            rx_bytes: c.rx_bytes,
            queued: depth(p.queued_bytes()),
            drops: c.drops,
            queued_prio: std::array::from_fn(|prio| depth(p.queued_bytes_of(prio))),
            paused: p.paused(),
        }
    }

    /// QP `i`'s row of a sample; `last` if its work is done, as
    /// `workloads` (its client's, in a partitioned run) have it.
    pub fn qp_row(&self, i: usize, workloads: &[WorkloadSlot]) -> QpSample {
        let s = &self.qps[i];
        let w = &workloads[s.workload as usize].workload;
        let st = w.stats(s.index as usize);
        QpSample {
            t: Ps::ZERO,
            qp: i as u32,
            tx_payload: s.tx_payload,
            completed_bytes: if s.role == Role::Client {
                st.bytes_completed
            } else {
                0
            },
            retransmitted: s.live.retransmitted_packets(),
            rate_bps: s
                .live
                .allowed_rate(self.ports[s.port as usize].rate())
                .bps(),
            last: w.qp_done(s.index as usize),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: u64, qp: u32, last: bool) -> QpSample {
        QpSample {
            t: Ps(t),
            qp,
            tx_payload: t,
            completed_bytes: 0,
            retransmitted: 0,
            rate_bps: 0,
            last,
        }
    }

    /// A port's row: a k = 32 fat-tree keeps a million of them.
    #[test]
    fn a_port_sample_is_80_bytes_and_saturates() {
        assert_eq!(size_of::<PortSample>(), 80);
        assert_eq!(depth(5 << 30), u32::MAX);
        assert_eq!(depth(1500), 1500);
    }

    /// Coarsening drops the odd grid points but never a series' final row:
    /// a flow that lived between two kept points would lose its only row.
    #[test]
    fn coarsening_keeps_every_final_row() {
        let mut s = Sampler::new(Ps(10));
        s.ports = (0..=1000)
            .map(|k| PortSample {
                t: Ps(k * 10),
                port: 0,
                tx_bytes: 0,
                rx_bytes: 0,
                queued: 0,
                drops: 0,
                queued_prio: [0; PRIOS],
                paused: 0,
            })
            .collect();
        s.qps = vec![
            row(10, 0, false),
            row(20, 0, false),
            row(30, 0, true),
            row(30, 1, false),
        ];
        s.thin(1, 2);
        assert_eq!(s.every, Ps(20));
        let kept: Vec<(u64, u32)> = s.qps.iter().map(|r| (r.t.0, r.qp)).collect();
        assert_eq!(kept, [(20, 0), (30, 0)]);
    }

    /// A final row the end of the run cuts off is taken again at the end.
    #[test]
    fn a_final_row_after_the_end_is_taken_again() {
        let mut s = Sampler::new(Ps(10));
        s.ended = vec![true, true];
        s.qps = vec![row(10, 0, true), row(20, 1, true)];
        s.drop_after(Ps(15));
        assert_eq!(s.ended, [true, false]);
        assert_eq!(s.qps.len(), 1);
    }
}
