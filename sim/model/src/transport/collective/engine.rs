//! The running collective: ranks' lanes step through their [`OpPlan`]; each
//! network connection's proxies move its messages on the world's RC QPs.
//!
//! The network side drives it like a perftest workload, QP by QP:
//! [`Collective::drive_client`] for a connection's sending QPs (they post
//! the data, RDMA WRITE with immediate, and receive the CTSs),
//! [`Collective::drive_server`] for its receiving QPs (they post receive
//! WQEs and the CTS writes, and take the data). What one QP's news makes
//! possible on another QP is queued for [`Collective::take_wake`]; the
//! collective's own clock (NVLink copies, reductions, the first launch) is
//! [`Collective::next_timer`], reported through client QP 0.
//!
//! Counters are cumulative over the run, so that one connection's
//! messages of successive operations and sizes follow each other as NCCL's
//! step counters do.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::plan::{self, ConnSpec, OpPlan, Prim, Topo};
use super::ready::Ready;

#[path = "engine_fail.rs"]
mod fail;
#[path = "engine_net.rs"]
mod net;
use super::{CollectiveSpec, test_size};
use crate::time::Ps;
use crate::transport::QpWorkloadStats;
pub use fail::NetConnInfo;

/// NCCL's `IB_WRITE_CHUNK_ALIGNMENT`: a split message's share per QP is
/// rounded up to this (facts §4.3).
const SPLIT_ALIGN: u64 = 128;
/// Bytes of one CTS record (`ncclIbSendFifo`, facts §4.3).
const CTS_BYTES: u64 = 64;

/// One row of nccl-tests' table.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectiveResult {
    /// The command-line size this row is for.
    pub cmd_bytes: u64,
    pub size_bytes: u64,
    pub count: u64,
    /// Per operation, mean over ranks (µs); 0 for a failed size.
    pub time_us: f64,
    pub algbw_gbps: f64,
    pub busbw_gbps: f64,
    /// NCCL's warning, when a work completion failed during this size.
    pub error: Option<String>,
}

/// A network connection's proxies.
#[derive(Debug, Clone)]
struct Net {
    /// Collective QP index of the connection's QP 0.
    qp0: u32,
    nq: u32,
    /// Its entry in `Collective::infos`.
    info: u32,
    cts_posted: u64,
    cts_arrived: u64,
}

/// One collective QP's work requests: data WRs posted, completed, arrived
/// at the receiver; receive WQEs due and posted. One flat array over the
/// collective's QPs (a connection's QPs side by side), not a vector per
/// connection and counter: a QP event reads one cache line.
#[derive(Debug, Clone, Copy, Default)]
struct QpRun {
    /// Its connection, and its index there.
    conn: u32,
    q: u32,
    posted: u64,
    done: u64,
    inbound: u64,
    recv_due: u64,
    recv_posted: u64,
    /// The sending (receiving) end was woken: what it may post changed.
    /// Most QP events are a packet's, which change nothing a proxy posts
    /// (they need not read the connection).
    kick_client: bool,
    kick_server: bool,
}

/// Whether every WR of message `m` of the connection whose QPs are `qps`
/// is counted by `f` (non-split: message `m` goes whole on QP `m mod nq`).
fn has(qps: &[QpRun], f: impl Fn(&QpRun) -> u64, m: u64, split: bool) -> bool {
    if split {
        qps.iter().all(|q| f(q) > m)
    } else {
        let nq = qps.len() as u64;
        f(&qps[(m % nq) as usize]) > m / nq
    }
}

/// What a lane's next step waits on, per connection: how many messages
/// arrived in order, and the first message whose slot is not free. Dense
/// and small, apart from [`Conn`], because trying a lane reads nothing
/// else of its connections.
#[derive(Debug, Clone, Copy, Default)]
struct Gate {
    arrived: u64,
    slot_end: u64,
}

#[derive(Debug, Clone)]
struct Conn {
    spec: ConnSpec,
    net: Option<Net>,
    /// Messages the sending GPU filled, the receiving GPU consumed.
    filled: u64,
    consumed: u64,
    /// Net: messages whose send completed, in order.
    completed: u64,
    /// Messages the receiving proxy knows of (operations launched).
    known: u64,
    /// The batch's first message.
    base: u64,
    /// Where the connection's `window` message sizes start in
    /// `Collective::sizes` (message `m`'s at `m mod window`: a message is
    /// posted while at most `window` are filled and not completed).
    sizes_at: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Start,
    Arrive { conn: u32 },
    Prim { lane: u32 },
}

/// The most connections a lane receives from or sends to (a tree's
/// children: NCCL_MAX_TREE_ARITY is 3).
const MAX_LINKS: usize = 3;

/// A lane's state, with what trying it reads: its connections and the
/// next message on each, beside the step at its cursor (a blocked lane is
/// tried without reading the plan).
#[derive(Debug, Clone, Copy, Default)]
struct LaneRun {
    step: Option<Prim>,
    /// The run of equal steps ([`Steps`]) the cursor is in, and how many
    /// of its steps are left, this one included.
    run: u32,
    left: u32,
    rank: u32,
    busy: bool,
    nins: u8,
    nouts: u8,
    ins: [u32; MAX_LINKS],
    outs: [u32; MAX_LINKS],
    /// The message index of the next receive (send) on each.
    in_m: [u64; MAX_LINKS],
    out_m: [u64; MAX_LINKS],
}

#[derive(Debug, Clone, Copy, Default)]
struct RankRun {
    op: u32,
    lanes_left: u32,
    done: bool,
    end: Ps,
}

/// One batch of back-to-back operations of one size.
#[derive(Debug, Clone, Copy)]
struct Batch {
    cmd: u64,
    iters: u32,
    report: bool,
}

/// An nccl-tests run in progress.
#[derive(Debug, Clone)]
pub struct Collective {
    spec: CollectiveSpec,
    topo: Topo,
    conns: Vec<Conn>,
    gates: Vec<Gate>,
    /// Per network connection, who its ends are (for NCCL's error text).
    infos: Vec<NetConnInfo>,
    /// Every connection's last `window` message sizes.
    sizes: Vec<u64>,
    /// Per collective QP: its connection and WRs.
    qps: Vec<QpRun>,
    clients: Vec<u32>,
    servers: Vec<u32>,
    batches: Vec<Batch>,
    batch: usize,
    batch_start: Ps,
    plan: OpPlan,
    lanes: Vec<LaneRun>,
    ranks: Vec<RankRun>,
    ranks_left: u32,
    gpu_free: Vec<Ps>,
    timers: BinaryHeap<Reverse<(Ps, u64, Timer)>>,
    seq: u64,
    wakes: Vec<u32>,
    woken: Vec<bool>,
    reported: Option<Ps>,
    /// Lanes that may step ([`Ready`]).
    ready: Ready,
    stats: Vec<QpWorkloadStats>,
    results: Vec<CollectiveResult>,
    finished: bool,
    /// Connection set-ups not done yet, and when the first operation was
    /// launched if it waits for them.
    setups_left: u32,
    launched: Option<Ps>,
}

impl Collective {
    /// A run of `spec` on `topo`; `conns` from [`plan::connections`], and
    /// for each network connection (in order) who its ends are. The QPs
    /// are numbered connection by connection, `knobs.qps_per_conn` each.
    pub fn new(
        spec: CollectiveSpec,
        topo: Topo,
        conns: Vec<ConnSpec>,
        info: Vec<NetConnInfo>,
    ) -> Collective {
        let nq = spec.knobs.qps_per_conn.max(1);
        let mut qps = Vec::new();
        let mut infos = Vec::new();
        let mut info = info.into_iter();
        let mut sizes_len = 0;
        let conns: Vec<Conn> = conns
            .into_iter()
            .enumerate()
            .map(|(ci, c)| {
                let net = c.nics.map(|_| {
                    let qp0 = qps.len() as u32;
                    for q in 0..nq {
                        qps.push(QpRun {
                            conn: ci as u32,
                            q,
                            ..QpRun::default()
                        });
                    }
                    infos.push(info.next().expect("one NetConnInfo per network connection"));
                    Net {
                        qp0,
                        nq,
                        info: infos.len() as u32 - 1,
                        cts_posted: 0,
                        cts_arrived: 0,
                    }
                });
                let sizes_at = sizes_len;
                sizes_len += c.window.max(1);
                Conn {
                    spec: c,
                    net,
                    filled: 0,
                    consumed: 0,
                    completed: 0,
                    known: 0,
                    base: 0,
                    sizes_at,
                }
            })
            .collect();
        let gates = conns
            .iter()
            .map(|c| Gate {
                arrived: 0,
                slot_end: u64::from(c.spec.window),
            })
            .collect();
        let mut batches = Vec::new();
        if spec.warmup_iters > 0 && !spec.sizes.is_empty() {
            // nccl-tests warms up at the largest, then the smallest size.
            let (lo, hi) = (spec.sizes[0], *spec.sizes.last().unwrap());
            for cmd in [hi, lo] {
                batches.push(Batch {
                    cmd,
                    iters: spec.warmup_iters,
                    report: false,
                });
            }
        }
        for &cmd in &spec.sizes {
            batches.push(Batch {
                cmd,
                iters: spec.iters.max(1),
                report: true,
            });
        }
        let nqp = qps.len();
        let mut c = Collective {
            topo,
            conns,
            gates,
            infos,
            sizes: vec![0; sizes_len as usize],
            qps,
            clients: Vec::new(),
            servers: Vec::new(),
            batches,
            batch: 0,
            batch_start: Ps::ZERO,
            plan: OpPlan {
                lanes: Vec::new(),
                msgs: Vec::new(),
                channels: 0,
            },
            lanes: Vec::new(),
            ranks: vec![RankRun::default(); topo.ranks as usize],
            ranks_left: 0,
            gpu_free: vec![Ps::ZERO; topo.ranks as usize],
            timers: BinaryHeap::new(),
            seq: 0,
            wakes: Vec::new(),
            woken: vec![false; 2 * nqp],
            reported: None,
            ready: Ready::default(),
            stats: vec![QpWorkloadStats::default(); nqp],
            results: Vec::new(),
            finished: false,
            setups_left: 0,
            launched: None,
            spec,
        };
        c.push_timer(c.spec.start, Timer::Start);
        c
    }

    /// QP pairs (connection QPs) the collective runs on.
    pub fn qps(&self) -> u32 {
        self.qps.len() as u32
    }

    /// The world's indices of each pair's sending and receiving QP.
    pub fn set_qp_ids(&mut self, clients: Vec<u32>, servers: Vec<u32>) {
        self.clients = clients;
        self.servers = servers;
    }

    pub fn spec(&self) -> &CollectiveSpec {
        &self.spec
    }
    pub fn topo(&self) -> &Topo {
        &self.topo
    }
    pub fn results(&self) -> &[CollectiveResult] {
        &self.results
    }
    pub fn is_done(&self) -> bool {
        self.finished
    }
    /// NCCL's warning, if a work completion failed.
    pub fn error(&self) -> Option<&str> {
        self.results.last().and_then(|r| r.error.as_deref())
    }
    pub fn stats(&self, i: usize) -> &QpWorkloadStats {
        &self.stats[i]
    }

    /// When the collective's own clock next needs it.
    pub fn next_timer(&self) -> Option<Ps> {
        self.timers.peek().map(|Reverse((t, _, _))| *t)
    }

    /// A QP (world index) that may have something to do now.
    pub fn take_wake(&mut self) -> Option<u32> {
        // Indices below `qps()` are sending QPs, the rest receiving ones.
        let i = self.wakes.pop()? as usize;
        self.woken[i] = false;
        let n = self.qps.len();
        Some(if i < n {
            self.clients[i]
        } else {
            self.servers[i - n]
        })
    }

    fn wake_client(&mut self, i: u32) {
        if let Some(q) = self.qps.get_mut(i as usize) {
            q.kick_client = true;
        }
        if !self.woken[i as usize] && (i as usize) < self.clients.len() {
            self.woken[i as usize] = true;
            self.wakes.push(i);
        }
    }

    fn wake_server(&mut self, i: u32) {
        if let Some(q) = self.qps.get_mut(i as usize) {
            q.kick_server = true;
        }
        let k = self.qps.len() + i as usize;
        if !self.woken[k] && (i as usize) < self.servers.len() {
            self.woken[k] = true;
            self.wakes.push(k as u32);
        }
    }

    fn push_timer(&mut self, t: Ps, tm: Timer) {
        self.seq += 1;
        self.timers.push(Reverse((t, self.seq, tm)));
    }

    /// Reports a new earliest timer through client QP 0.
    fn note_timer(&mut self, now: Ps) {
        if let Some(t) = self.next_timer() {
            if self.reported.is_none_or(|r| r <= now || r > t) {
                self.wake_client(0);
            }
        }
    }

    /// Runs what is due: the collective's timers, then every lane as far
    /// as it can go.
    fn progress(&mut self, now: Ps) {
        while let Some(&Reverse((t, _, tm))) = self.timers.peek() {
            if t > now || self.finished {
                break;
            }
            self.timers.pop();
            match tm {
                Timer::Start if self.setups_left > 0 => self.launched = Some(now),
                Timer::Start => self.start_batch(now),
                Timer::Arrive { conn } => {
                    self.gates[conn as usize].arrived += 1;
                    self.ready.receivers_of(conn);
                }
                Timer::Prim { lane } => self.finish_prim(lane as usize, now),
            }
        }
        // Every lane that may step, in lane order, round again while any
        // moved ([`Ready`]); a batch that ends here starts the next, whose
        // lanes are all candidates.
        let mut from = 0;
        while !self.finished {
            let Some(l) = self.ready.next(from) else {
                break;
            };
            while self.try_lane(l as usize, now) {}
            self.ready.done(l);
            from = l + 1;
        }
        if self.finished {
            self.timers.clear();
            self.ready.clear();
        }
    }

    /// Lane `l` at the first step of its rank's operation `op`: the
    /// message index of its next receive and send on each connection.
    fn lane_at(&self, l: usize, op: u32) -> LaneRun {
        let lane = &self.plan.lanes[l];
        assert!(
            lane.ins.len() <= MAX_LINKS && lane.outs.len() <= MAX_LINKS,
            "a lane has at most {MAX_LINKS} connections each way"
        );
        let first =
            |c: u32| self.conns[c as usize].base + u64::from(op) * self.plan.msgs[c as usize];
        let first_run = lane.prims.run(0);
        let mut run = LaneRun {
            step: first_run.map(|(p, _)| p),
            left: first_run.map_or(0, |(_, n)| n),
            rank: lane.rank,
            nins: lane.ins.len() as u8,
            nouts: lane.outs.len() as u8,
            ..LaneRun::default()
        };
        for (i, &c) in lane.ins.iter().enumerate() {
            run.ins[i] = c;
            run.in_m[i] = first(c);
        }
        for (i, &c) in lane.outs.iter().enumerate() {
            run.outs[i] = c;
            run.out_m[i] = first(c);
        }
        run
    }

    /// Runs lane `l`'s next step if it can; a lane blocked on one of its
    /// connections waits on it ([`Ready`]).
    fn try_lane(&mut self, l: usize, now: Ps) -> bool {
        if l >= self.lanes.len() || self.finished {
            return false;
        }
        let run = &self.lanes[l];
        let Some(p) = run.step else {
            return false;
        };
        if run.busy || self.ranks[run.rank as usize].done {
            return false;
        }
        if p.recv {
            for i in 0..usize::from(run.nins) {
                let c = run.ins[i];
                if self.gates[c as usize].arrived <= run.in_m[i] {
                    self.ready.wait_recv(c, l as u32);
                    return false;
                }
            }
        }
        if p.send {
            for i in 0..usize::from(run.nouts) {
                let c = run.outs[i];
                if self.gates[c as usize].slot_end <= run.out_m[i] {
                    self.ready.wait_send(c, l as u32);
                    return false;
                }
            }
        }
        // One reduction per input (a tree's children).
        let cost = if p.reduce {
            p.bytes * u64::from(run.nins) * self.spec.gpu.reduce_ps_per_kib / 1024
        } else {
            0
        };
        if cost > 0 {
            self.lanes[l].busy = true;
            self.push_timer(now + Ps(cost), Timer::Prim { lane: l as u32 });
        } else {
            self.finish_prim(l, now);
        }
        true
    }

    /// A step's data is consumed and/or its slot filled.
    fn finish_prim(&mut self, l: usize, now: Ps) {
        let run = self.lanes[l];
        let p = run.step.expect("a step at the cursor");
        self.ready.lane(l as u32);
        if p.recv {
            for &c in &run.ins[..usize::from(run.nins)] {
                let conn = &mut self.conns[c as usize];
                conn.consumed += 1;
                match &conn.net {
                    // The receiving proxy may post the next CTS.
                    Some(n) => {
                        let qp0 = n.qp0;
                        self.wake_server(qp0);
                    }
                    // An NVLink slot is free once consumed.
                    None => {
                        self.gates[c as usize].slot_end =
                            conn.consumed + u64::from(conn.spec.window);
                        self.ready.senders_of(c);
                    }
                }
            }
        }
        if p.send {
            for &c in &run.outs[..usize::from(run.nouts)] {
                let conn = &mut self.conns[c as usize];
                let window = u64::from(conn.spec.window.max(1));
                self.sizes[conn.sizes_at as usize + (conn.filled % window) as usize] = p.bytes;
                conn.filled += 1;
                if conn.net.is_some() {
                    self.wake_conn_clients(c);
                } else {
                    let g = &mut self.gpu_free[run.rank as usize];
                    let start = now.max(*g);
                    *g = start + self.spec.gpu.nvlink_rate.tx_time(p.bytes);
                    let at = *g + self.spec.gpu.nvlink_latency;
                    self.push_timer(at, Timer::Arrive { conn: c });
                }
            }
        }
        let prims = &self.plan.lanes[l].prims;
        let r = &mut self.lanes[l];
        if p.recv {
            r.in_m.iter_mut().for_each(|m| *m += 1);
        }
        if p.send {
            r.out_m.iter_mut().for_each(|m| *m += 1);
        }
        r.busy = false;
        r.left -= 1;
        if r.left == 0 {
            r.run += 1;
            let next = prims.run(r.run as usize);
            r.step = next.map(|(p, _)| p);
            r.left = next.map_or(0, |(_, n)| n);
        }
        if r.step.is_none() {
            let rk = &mut self.ranks[run.rank as usize];
            rk.lanes_left -= 1;
            if rk.lanes_left == 0 {
                self.next_op(run.rank, now);
            }
        }
    }

    /// Lanes of `rank` with steps to run (an empty one is done at once).
    fn lanes_of(&self, rank: u32) -> u32 {
        let lanes = &self.plan.lanes;
        self.ready
            .of_rank(rank)
            .iter()
            .filter(|&&l| !lanes[l as usize].prims.is_empty())
            .count() as u32
    }

    /// Rank `rank` finished an operation: the next one starts (stream
    /// order), or the rank is done with the batch.
    fn next_op(&mut self, rank: u32, now: Ps) {
        let iters = self.batches[self.batch].iters;
        loop {
            let r = &mut self.ranks[rank as usize];
            r.op += 1;
            if r.op >= iters {
                r.done = true;
                r.end = now;
                self.ranks_left -= 1;
                if self.ranks_left == 0 {
                    self.finish_batch(now);
                }
                return;
            }
            let op = self.ranks[rank as usize].op;
            for i in 0..self.ready.of_rank(rank).len() {
                let l = self.ready.of_rank(rank)[i] as usize;
                self.lanes[l] = self.lane_at(l, op);
            }
            let n = self.lanes_of(rank);
            self.ranks[rank as usize].lanes_left = n;
            self.ready.rank(rank);
            if n > 0 {
                return;
            }
        }
    }

    fn start_batch(&mut self, now: Ps) {
        let b = self.batches[self.batch];
        let s = &self.spec;
        let t = test_size(s.op, b.cmd, s.datatype, self.topo.ranks);
        let specs: Vec<ConnSpec> = self.conns.iter().map(|c| c.spec).collect();
        self.plan = plan::plan_op(
            s.op, &self.topo, &s.knobs, &specs, s.datatype, t.count, s.root,
        );
        self.batch_start = self.launched.take().unwrap_or(now);
        for (ci, c) in self.conns.iter_mut().enumerate() {
            c.base = c.filled;
            c.known = c.filled + u64::from(b.iters) * self.plan.msgs[ci];
        }
        for ci in 0..self.conns.len() {
            if let Some(n) = &self.conns[ci].net {
                let qp0 = n.qp0;
                self.wake_server(qp0);
            }
        }
        self.lanes = (0..self.plan.lanes.len())
            .map(|l| self.lane_at(l, 0))
            .collect();
        self.ready
            .start(&self.plan, self.conns.len(), self.topo.ranks as usize);
        self.ranks_left = self.topo.ranks;
        for r in 0..self.topo.ranks {
            let n = self.lanes_of(r);
            self.ranks[r as usize] = RankRun {
                op: 0,
                lanes_left: n,
                done: false,
                end: now,
            };
        }
        let batch = self.batch;
        for r in 0..self.topo.ranks {
            if self.ranks[r as usize].lanes_left == 0 {
                // Nothing to do on this rank (no data): each operation
                // ends at once.
                self.next_op(r, now);
                if self.batch != batch || self.finished {
                    return;
                }
            }
        }
    }

    fn finish_batch(&mut self, now: Ps) {
        let b = self.batches[self.batch];
        if b.report {
            let s = &self.spec;
            let t = test_size(s.op, b.cmd, s.datatype, self.topo.ranks);
            let n = f64::from(self.topo.ranks);
            let secs: f64 = self
                .ranks
                .iter()
                .map(|r| (r.end - self.batch_start).as_secs_f64() / f64::from(b.iters))
                .sum::<f64>()
                / n;
            let algbw = if secs > 0.0 {
                t.algbw_bytes as f64 / secs / 1e9
            } else {
                0.0
            };
            self.results.push(CollectiveResult {
                cmd_bytes: b.cmd,
                size_bytes: t.size_bytes,
                count: t.count,
                time_us: secs * 1e6,
                algbw_gbps: algbw,
                busbw_gbps: algbw * s.op.bus_factor(self.topo.ranks),
                error: None,
            });
        }
        self.batch += 1;
        if self.batch < self.batches.len() {
            self.start_batch(now);
        } else {
            self.finished = true;
        }
    }
}
