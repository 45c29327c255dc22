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

use super::plan::{self, ConnSpec, Lane, OpPlan, Prim, Topo};
use super::ready::Ready;

#[path = "engine_fail.rs"]
mod fail;
use super::{CollectiveSpec, test_size};
use crate::time::Ps;
use crate::transport::{QpWorkloadStats, RcQp, Verb, WcStatus, WorkRequest};
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

#[derive(Debug, Clone)]
struct Net {
    /// Collective QP index of the connection's QP 0.
    qp0: u32,
    nq: u32,
    info: NetConnInfo,
    cts_posted: u64,
    cts_arrived: u64,
    /// Per QP: data WRs posted, completed, arrived at the receiver;
    /// receive WQEs due and posted.
    posted: Vec<u64>,
    done: Vec<u64>,
    inbound: Vec<u64>,
    recv_due: Vec<u64>,
    recv_posted: Vec<u64>,
}

impl Net {
    /// Whether every WR of message `m` is counted in `per_qp`.
    fn has(&self, per_qp: &[u64], m: u64, split: bool) -> bool {
        if split {
            per_qp.iter().all(|&n| n > m)
        } else {
            let nq = u64::from(self.nq);
            per_qp[(m % nq) as usize] > m / nq
        }
    }
}

#[derive(Debug, Clone)]
struct Conn {
    spec: ConnSpec,
    net: Option<Net>,
    /// Messages the sending GPU filled, the receiving GPU consumed.
    filled: u64,
    consumed: u64,
    /// NVLink: messages arrived, in order.
    arrived: u64,
    /// Net: messages whose send completed, in order.
    completed: u64,
    /// Messages the receiving proxy knows of (operations launched).
    known: u64,
    /// The batch's first message and the bytes of its filled ones.
    base: u64,
    sizes: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Start,
    Arrive { conn: u32 },
    Prim { lane: u32 },
}

#[derive(Debug, Clone, Copy, Default)]
struct LaneRun {
    cursor: usize,
    /// `prims[cursor]`, kept here: trying a blocked lane reads no plan.
    step: Option<Prim>,
    recv_k: u64,
    send_k: u64,
    busy: bool,
}

impl LaneRun {
    /// A lane at its first step.
    fn at(lane: &Lane) -> LaneRun {
        LaneRun {
            step: lane.prims.first().copied(),
            ..LaneRun::default()
        }
    }
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
    /// Collective QP index → (connection, QP within it).
    qp_conn: Vec<(u32, u32)>,
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
        let mut info = info.into_iter();
        let mut qp_conn = Vec::new();
        let conns: Vec<Conn> = conns
            .into_iter()
            .enumerate()
            .map(|(ci, c)| {
                let net = c.nics.map(|_| {
                    let qp0 = qp_conn.len() as u32;
                    for q in 0..nq {
                        qp_conn.push((ci as u32, q));
                    }
                    let z = vec![0; nq as usize];
                    Net {
                        qp0,
                        nq,
                        info: info.next().expect("one NetConnInfo per network connection"),
                        cts_posted: 0,
                        cts_arrived: 0,
                        posted: z.clone(),
                        done: z.clone(),
                        inbound: z.clone(),
                        recv_due: z.clone(),
                        recv_posted: z,
                    }
                });
                Conn {
                    spec: c,
                    net,
                    filled: 0,
                    consumed: 0,
                    arrived: 0,
                    completed: 0,
                    known: 0,
                    base: 0,
                    sizes: Vec::new(),
                }
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
        let nqp = qp_conn.len();
        let mut c = Collective {
            topo,
            conns,
            qp_conn,
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
        self.qp_conn.len() as u32
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
        let n = self.qp_conn.len();
        Some(if i < n {
            self.clients[i]
        } else {
            self.servers[i - n]
        })
    }

    fn wake_client(&mut self, i: u32) {
        if !self.woken[i as usize] && (i as usize) < self.clients.len() {
            self.woken[i as usize] = true;
            self.wakes.push(i);
        }
    }

    fn wake_server(&mut self, i: u32) {
        let k = self.qp_conn.len() + i as usize;
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

    /// The sending QP `i` of a connection: completions of its data, the
    /// CTSs that arrived; posts what the CTSs allow.
    pub fn drive_client(&mut self, i: usize, qp: &mut RcQp, now: Ps) -> Option<Ps> {
        let (c, q) = self.qp_conn[i];
        while let Some(comp) = qp.poll_completion() {
            let st = &mut self.stats[i];
            st.completed += 1;
            st.last_completion_at = Some(comp.at);
            if comp.status == WcStatus::Success {
                st.bytes_completed += comp.bytes;
                if let Some(n) = self.conns[c as usize].net.as_mut() {
                    n.done[q as usize] += 1;
                }
                self.ready.senders_of(c);
            } else {
                st.failed += 1;
                st.first_error.get_or_insert(comp.status);
                self.fail(c, true, comp.status);
            }
        }
        while let Some(m) = qp.poll_inbound() {
            if m.verb == Verb::Write {
                if let Some(n) = self.conns[c as usize].net.as_mut() {
                    n.cts_arrived += 1;
                }
                self.wake_conn_clients(c);
            }
        }
        self.progress(now);
        self.post_data(i, qp, now);
        self.note_timer(now);
        if i == 0 {
            self.reported = self.next_timer();
            return self.reported;
        }
        None
    }

    /// The receiving QP `i` of a connection: data that arrived; QP 0 posts
    /// the CTSs the window allows, each after its receive WQEs.
    pub fn drive_server(&mut self, i: usize, qp: &mut RcQp, now: Ps) {
        let (c, q) = self.qp_conn[i];
        while let Some(comp) = qp.poll_completion() {
            if comp.status != WcStatus::Success {
                self.fail(c, false, comp.status);
            }
        }
        while let Some(m) = qp.poll_inbound() {
            if m.verb == Verb::WriteImm {
                if let Some(n) = self.conns[c as usize].net.as_mut() {
                    n.inbound[q as usize] += 1;
                }
                self.ready.receivers_of(c);
            }
        }
        self.progress(now);
        if !self.finished && q == 0 {
            self.post_cts(c, qp);
        }
        let net = self.conns[c as usize].net.as_mut().unwrap();
        let due = net.recv_due[q as usize] - net.recv_posted[q as usize];
        if due > 0 && !self.finished {
            qp.post_recv(due as u32);
            net.recv_posted[q as usize] += due;
        }
        self.note_timer(now);
    }

    fn wake_conn_clients(&mut self, c: u32) {
        if let Some(n) = &self.conns[c as usize].net {
            let (qp0, nq) = (n.qp0, n.nq);
            for q in 0..nq {
                self.wake_client(qp0 + q);
            }
        }
    }

    fn post_cts(&mut self, c: u32, qp: &mut RcQp) {
        let split = self.spec.knobs.split_data_on_qps;
        let conn = &mut self.conns[c as usize];
        let window = u64::from(conn.spec.window);
        let net = conn.net.as_mut().unwrap();
        let mut wake = Vec::new();
        while net.cts_posted < conn.consumed + window && net.cts_posted < conn.known {
            let m = net.cts_posted;
            // A receive WQE on every QP the message uses, before its CTS.
            let qs: Vec<u32> = if split {
                (0..net.nq).collect()
            } else {
                vec![(m % u64::from(net.nq)) as u32]
            };
            for qq in qs {
                net.recv_due[qq as usize] += 1;
                if qq == 0 {
                    let due = net.recv_due[0] - net.recv_posted[0];
                    qp.post_recv(due as u32);
                    net.recv_posted[0] += due;
                } else {
                    wake.push(net.qp0 + qq);
                }
            }
            if qp
                .post_send(WorkRequest::new(m, Verb::Write, CTS_BYTES))
                .is_err()
            {
                break;
            }
            net.cts_posted += 1;
        }
        for w in wake {
            self.wake_server(w);
        }
    }

    fn post_data(&mut self, i: usize, qp: &mut RcQp, now: Ps) {
        if self.finished {
            return;
        }
        let (c, q) = self.qp_conn[i];
        let split = self.spec.knobs.split_data_on_qps;
        let conn = &mut self.conns[c as usize];
        let net = conn.net.as_mut().unwrap();
        let nq = u64::from(net.nq);
        loop {
            let k = net.posted[q as usize];
            let m = if split { k } else { k * nq + u64::from(q) };
            if m >= conn.filled || m >= net.cts_arrived {
                break;
            }
            let len = conn.sizes[(m - conn.base) as usize];
            let len = if split {
                let share = len.div_ceil(nq).div_ceil(SPLIT_ALIGN) * SPLIT_ALIGN;
                share.min(len.saturating_sub(u64::from(q) * share))
            } else {
                len
            };
            if qp
                .post_send(WorkRequest::new(m, Verb::WriteImm, len))
                .is_err()
            {
                break;
            }
            net.posted[q as usize] += 1;
            let st = &mut self.stats[i];
            st.posted += 1;
            st.first_post_at.get_or_insert(now);
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
                    self.conns[conn as usize].arrived += 1;
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

    /// Message index of a lane's next receive or send on connection `c`.
    fn msg(&self, c: u32, rank: u32, k: u64) -> u64 {
        let conn = &self.conns[c as usize];
        conn.base + u64::from(self.ranks[rank as usize].op) * self.plan.msgs[c as usize] + k
    }

    fn arrived(&self, c: u32, m: u64) -> bool {
        let conn = &self.conns[c as usize];
        match &conn.net {
            Some(n) => n.has(&n.inbound, m, self.spec.knobs.split_data_on_qps),
            None => m < conn.arrived,
        }
    }

    /// Whether the sender's slot for message `m` is free: its send `window`
    /// messages back completed (net), or was consumed (NVLink).
    fn slot_free(&mut self, c: u32, m: u64) -> bool {
        let split = self.spec.knobs.split_data_on_qps;
        let conn = &mut self.conns[c as usize];
        let window = u64::from(conn.spec.window);
        match &conn.net {
            Some(n) => {
                while conn.completed < conn.filled && n.has(&n.done, conn.completed, split) {
                    conn.completed += 1;
                }
                m < conn.completed + window
            }
            None => m < conn.consumed + window,
        }
    }

    fn try_lane(&mut self, l: usize, now: Ps) -> bool {
        if l >= self.lanes.len() || self.finished {
            return false;
        }
        let run = self.lanes[l];
        let lane = &self.plan.lanes[l];
        let rank = lane.rank;
        let Some(p) = run.step else {
            return false;
        };
        if run.busy || self.ranks[rank as usize].done {
            return false;
        }
        let ins = lane.ins.len();
        if p.recv {
            for &c in &lane.ins {
                if !self.arrived(c, self.msg(c, rank, run.recv_k)) {
                    return false;
                }
            }
        }
        if p.send {
            for i in 0..self.plan.lanes[l].outs.len() {
                let c = self.plan.lanes[l].outs[i];
                let m = self.msg(c, rank, run.send_k);
                if !self.slot_free(c, m) {
                    return false;
                }
            }
        }
        // One reduction per input (a tree's children).
        let cost = if p.reduce {
            p.bytes * ins as u64 * self.spec.gpu.reduce_ps_per_kib / 1024
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
        let lane = &self.plan.lanes[l];
        let (rank, nins, nouts) = (lane.rank, lane.ins.len(), lane.outs.len());
        let p = self.lanes[l].step.expect("a step at the cursor");
        let nlanes = lane.prims.len();
        self.ready.lane(l as u32);
        if p.recv {
            for i in 0..nins {
                let c = self.plan.lanes[l].ins[i];
                self.conns[c as usize].consumed += 1;
                self.ready.senders_of(c);
                if let Some(n) = &self.conns[c as usize].net {
                    let qp0 = n.qp0;
                    self.wake_server(qp0);
                }
            }
            self.lanes[l].recv_k += 1;
        }
        if p.send {
            for i in 0..nouts {
                let c = self.plan.lanes[l].outs[i];
                let conn = &mut self.conns[c as usize];
                conn.filled += 1;
                conn.sizes.push(p.bytes);
                if conn.net.is_some() {
                    self.wake_conn_clients(c);
                } else {
                    let g = &mut self.gpu_free[rank as usize];
                    let start = now.max(*g);
                    *g = start + self.spec.gpu.nvlink_rate.tx_time(p.bytes);
                    let at = *g + self.spec.gpu.nvlink_latency;
                    self.push_timer(at, Timer::Arrive { conn: c });
                }
            }
            self.lanes[l].send_k += 1;
        }
        let run = &mut self.lanes[l];
        run.busy = false;
        run.cursor += 1;
        run.step = self.plan.lanes[l].prims.get(run.cursor).copied();
        if run.cursor == nlanes {
            let r = &mut self.ranks[rank as usize];
            r.lanes_left -= 1;
            if r.lanes_left == 0 {
                self.next_op(rank, now);
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
            for &l in self.ready.of_rank(rank) {
                self.lanes[l as usize] = LaneRun::at(&self.plan.lanes[l as usize]);
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
            c.sizes.clear();
            c.known = c.filled + u64::from(b.iters) * self.plan.msgs[ci];
        }
        for ci in 0..self.conns.len() {
            if let Some(n) = &self.conns[ci].net {
                let qp0 = n.qp0;
                self.wake_server(qp0);
            }
        }
        self.lanes = self.plan.lanes.iter().map(LaneRun::at).collect();
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
