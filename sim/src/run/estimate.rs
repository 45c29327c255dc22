//! What a run will cost before it starts: its peak memory and its event
//! count, estimated from the built world's sizes and the traffic it will
//! carry (`rocesim check` prints it; `rocesim run` refuses a run that
//! would not fit in the memory the machine has, [`refuse_if_too_large`]).
//!
//! ## The model
//!
//! Every term is a count read from the built world or the scenario, times
//! a cost per item measured on release builds (calibrated against
//! `sim/benches/fat_tree_scale.toml` at k = 8, 12, 16 and 20 and against
//! shipped scenarios; `sim/tests/estimate.rs` holds it to 1.5x of a real
//! run):
//!
//! ```text
//!  peak memory = base                          the binary, its font, the allocator's arenas
//!              + switches × hosts × PER_SWITCH_HOST   frames queued in the switches (a fit, below)
//!              + hosts        × PER_HOST       NICs, neighbour tables, profiles, sysfs records
//!              + ports        × PER_PORT       8 egress queues, counters, PFC/ECN state, and
//!                                              each port's counters in summary.json
//!              + route hops   × PER_ROUTE_HOP  switch routing tables: one per (route, next hop)
//!              + flows × PER_FLOW_KEPT × parts   a finished flow's records, in every part
//!              + flows at once × PER_LIVE_FLOW  a running flow's QPs and frames, at the most
//!              + port samples × size_of(PortSample)   time series: every port, every sample
//!              + QP samples   × size_of(QpSample)     every QP while it runs
//!              + taps         × PER_TAP        a capture's buffers (its frames go to disk)
//!
//!              + collective QPs × PER_COLL_QP  a collective's connections' QPs, their lanes
//!
//!  events = EVENTS_PER_HOP × packet hops + EVENTS_PER_FLOW × flows + sample ticks
//!  packet hops = Σ over flows (and workloads, collectives) of data packets × (1 + 1 / ack_req_every)
//!                × links on the path
//! ```
//!
//! * Flows are known before the run: `[[traffic]]` is drawn when the
//!   scenario loads (each flow's size, start and ideal completion time), so
//!   their count, bytes and packets are exact, and each flow's path length
//!   is a breadth-first search of the scenario's graph. A `[[workload]]`
//!   carries `qps × iters × size` bytes, or its client link's rate over its
//!   `duration`.
//! * A `[[collective]]` carries, per operation, what nccl-tests' bus
//!   bandwidth counts (`busbw` × time: the bytes each rank sends) times the
//!   ranks, of which the share that leaves a server crosses the fabric: a
//!   ring or chain passes each server once per channel (servers / ranks of
//!   its hops), alltoall sends (ranks − GPUs per server) / (ranks − 1) of
//!   its data off the server. Sizes and iterations (warm-up at the largest
//!   and the smallest size) as nccl-tests walks them; its QPs: a ring's
//!   channels (two per NIC) each cross every server boundary once, an
//!   alltoall connects every pair of ranks on different servers, each
//!   connection `NCCL_IB_QPS_PER_CONNECTION` QPs at each end.
//! * Samples: a port is sampled every `sim.sample_interval` (10 µs) over the
//!   run's span (the last flow's start plus its ideal time, doubled for
//!   queueing), its series thinned to at most `min(1000, 1 M / (ports +
//!   QPs))` rows as the sampler thins it (`rocesim_model::world::sample`);
//!   a QP only while it runs (its ideal time, doubled).
//! * The run's span is the estimate's weakest part: a congested fabric's
//!   tail flows take many times their ideal. The terms are printed so that
//!   the reader sees which one a change of the scenario moves.

use std::collections::HashMap;
use std::collections::VecDeque;

use crate::scenario::Scenario;
use crate::time::Ps;
use crate::world::{PortSample, QpSample};

/// What the process holds before any world: the binary's pages, the
/// bundled font, the allocator's arenas of two threads.
const BASE: u64 = 17_000_000;
const PER_HOST: u64 = 12_500;
const PER_PORT: u64 = 10_600;
const PER_ROUTE_HOP: u64 = 24;
/// The frames queued in the switches' buffers at the peak, fitted to
/// switches × hosts: under all-to-all traffic each switch holds frames
/// toward more hosts the larger the fabric (a k = 32 fat-tree at 30 %
/// WebSearch: ~3.7 M frames, 0.94 GB of 256-byte slots). No table of that
/// size exists: a switch's FDB holds only the hosts of its layer-2 domain,
/// and routes are summarised. (Fitted 2026-12-04 on split runs of
/// `fat_tree_scale` at k = 8, 16, 24, 32: 74, 307, 917, 2,006 MB at
/// 320-byte slots; scaled to 256-byte ones.)
const PER_SWITCH_HOST: u64 = 64;
/// A flow's costs (fitted 2026-12-05): kept once finished, in each part
/// (FbHdp's 100,156 flows: 195 MB serial, 326 MB split in two); while it
/// runs, its QPs and frames (the fat-tree benchmark's WebSearch flows).
const PER_FLOW_KEPT: u64 = 1_300;
const PER_LIVE_FLOW: u64 = 108_000;
const PER_TAP: u64 = 160 << 10;
/// Events per packet hop: the frame's end of transmission at the port,
/// its arrival at the peer, and a share of the host's send scheduling.
const EVENTS_PER_HOP: f64 = 1.7;
const EVENTS_PER_FLOW: u64 = 12;
/// A collective's packet hop: as a flow's, and its proxies' and lanes'
/// share (2.0 events per hop in the shipped collectives and the 256-rank
/// benchmark).
const EVENTS_PER_COLL_HOP: f64 = 2.0;
/// One QP of a collective with its share of the lanes, the plan, the
/// frames in flight and the summaries (fitted 2026-12-04 between
/// `sim/benches/nccl_allreduce_256.toml`, 1,024 QPs of 1 MiB messages,
/// 55 MB, and `nccl_alltoall.toml`, 7,168 QPs of small ones, 93 MB).
const PER_COLL_QP: u64 = 14_000;

/// One term of the memory estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// What is counted, e.g. "ports (queues, counters)".
    pub what: &'static str,
    pub count: u64,
    pub bytes: u64,
}

/// The estimate of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Memory terms, the largest first.
    pub terms: Vec<Term>,
    pub events: u64,
    pub packet_hops: u64,
    pub flows: u64,
    /// Simulated span the samples were estimated over.
    pub span: Ps,
}

impl Estimate {
    /// The estimate for a run of the loaded (lowered) scenario `sc`,
    /// before its world is built: a fabric of thousands of hosts takes
    /// gigabytes and a minute to build.
    pub fn of(sc: &Scenario) -> Estimate {
        let hops = Hops::new(sc);
        let hosts = sc.hosts.len() as u64;
        let switches = sc.switches.len() as u64;
        // Every link end is a port; a NIC without a link is one too.
        let linked: u64 = 2 * sc.links.len() as u64;
        let nics: u64 = sc.hosts.iter().map(|h| h.nics.len() as u64).sum();
        let ports = linked + nics.saturating_sub(linked.min(nics));
        let route_hops: u64 = sc
            .switches
            .iter()
            .flat_map(|s| &s.routes)
            .map(|r| r.via.len().max(1) as u64)
            .sum();
        // Payload per packet: the path MTU, or the profile's segment (the
        // hpcc profile's 1000 bytes); per sending host, made once.
        // And the packets on the wire per data packet: its ACKs, one per
        // `ack_req_every` (the hpcc profile's every packet).
        let mut payloads: Vec<Option<(u64, f64)>> = vec![None; sc.hosts.len()];
        let mut payload = |host: usize| -> (u64, f64) {
            let Some(h) = sc.hosts.get(host) else {
                return (1024, 1.0);
            };
            *payloads[host].get_or_insert_with(|| {
                let mtu = h.nics.first().map_or(1500, |n| n.mtu);
                let pmtu = rocesim_model::net::roce_mtu(mtu).unwrap_or(1024);
                let (seg, acks) = crate::scenario::profile::host_profile(h, host)
                    .map_or((0, 0), |p| (p.segment_bytes, p.ack_req_every));
                let seg = if seg == 0 { pmtu } else { seg.min(pmtu) };
                (u64::from(seg), 1.0 + 1.0 / f64::from(acks.max(1)))
            })
        };
        let mut data_hops = 0f64;
        let mut flows = 0u64;
        let mut span = Ps::ZERO;
        let mut first = Ps(u64::MAX);
        let mut qp_busy = 0u64; // QP-lifetimes in ps, summed
        let flow_workloads: std::collections::HashSet<u32> =
            sc.flows.iter().map(|f| f.workload).collect();
        // A flow runs from its start for twice its ideal time, as below
        // (at fabric scale within 10 % of the runs' own most at once).
        let flows_at_once = super::intervals::most_at_once(sc.flows.iter().map(|f| {
            let end = f.spec.start.0.saturating_add(f.ideal.0.saturating_mul(2));
            (f.spec.start, Ps(end))
        }));
        for f in &sc.flows {
            let (src, dst) = (f.spec.src.0 as usize, f.spec.dst.0 as usize);
            let (seg, wire) = payload(src);
            let packets = f.spec.size_bytes.div_ceil(seg).max(1);
            data_hops += packets as f64 * wire * f64::from(hops.between(src, dst));
            flows += 1;
            let busy = f.ideal.0.saturating_mul(2);
            span = span.max(Ps(f.spec.start.0.saturating_add(busy)));
            first = first.min(f.spec.start);
            qp_busy = qp_busy.saturating_add(busy.saturating_mul(2));
        }
        for (i, wl) in sc.workloads.iter().enumerate() {
            if flow_workloads.contains(&(i as u32)) {
                continue;
            }
            let host = |s: &str| {
                let name = s.split('.').next().unwrap_or(s);
                sc.hosts.iter().position(|h| h.name == name)
            };
            let (Some(c), Some(s)) = (host(&wl.client), host(&wl.server)) else {
                continue;
            };
            let rate = hops.rate_of(c).max(1);
            let (bytes, busy) = match wl.duration {
                Some(d) => (
                    (u128::from(rate) * u128::from(d.0.0) / 8 / 1_000_000_000_000) as u64,
                    d.0.0,
                ),
                None => {
                    let sent: u64 = if wl.messages.is_empty() {
                        u64::from(wl.qps) * wl.iters.unwrap_or(1000) * wl.size.0
                    } else {
                        wl.messages.iter().map(|m| m.size.0).sum()
                    };
                    (
                        sent,
                        (u128::from(sent) * 8 * 1_000_000_000_000 / u128::from(rate)) as u64,
                    )
                }
            };
            let (seg, wire) = payload(c);
            let packets = bytes.div_ceil(seg).max(1);
            data_hops += packets as f64 * wire * f64::from(hops.between(c, s));
            span = span.max(Ps(wl.start.0.0.saturating_add(busy)));
            first = first.min(wl.start.0);
            qp_busy = qp_busy.saturating_add(busy.saturating_mul(2 * u64::from(wl.qps)));
        }
        let mut coll_qps = 0u64;
        let mut coll_hops = 0f64;
        for cc in &sc.collectives {
            let host = cc
                .servers
                .first()
                .and_then(|s| sc.hosts.iter().position(|h| &h.name == s));
            // Its ACKs are counted with its messages, not by the profile's
            // AckReq frequency.
            let (seg, _) = payload(host.unwrap_or(0));
            let c = collective_traffic(sc, cc, &hops, seg);
            coll_hops += c.packets as f64 * c.links;
            coll_qps += c.qps;
            let busy = (u128::from(c.net_bytes) * 8 * 1_000_000_000_000
                / u128::from(c.net_rate.max(1))) as u64;
            span = span.max(Ps(cc.start.0.0.saturating_add(busy)));
            first = first.min(cc.start.0);
            qp_busy = qp_busy.saturating_add(busy.saturating_mul(c.qps));
        }
        let packet_hops = (data_hops + coll_hops) as u64;
        let every = sc
            .sim
            .sample_interval
            .map_or(Ps::from_us(10), |d| d.0)
            .0
            .max(1);
        let span = match sc.sim.stop_at {
            Some(stop) => span.min(stop.0),
            None => span,
        };
        // The sampler pauses while nothing happens (the reference's two
        // idle seconds before its flows): only the busy window is sampled.
        let ticks = span.0.saturating_sub(first.0.min(span.0)) / every + 1;
        let qps = 2 * flows
            + sc.workloads
                .iter()
                .enumerate()
                .filter(|(i, _)| !flow_workloads.contains(&(*i as u32)))
                .map(|(_, wl)| 2 * u64::from(wl.qps))
                .sum::<u64>()
            + coll_qps;
        // The sampler's thinning: at most `max` rows per series (at least
        // `max / 2` once it thinned).
        let max = (1_000_000 / (ports + qps).max(1)).clamp(20, 1000);
        let port_rows = ports * ticks.min(max + 1);
        let thin = ticks.div_ceil(max.max(1)).next_power_of_two();
        let qp_rows = qps + qp_busy / every / thin;
        let parts = u64::from(sc.sim.partitions.unwrap_or(1).max(1));
        let kept = PER_FLOW_KEPT * parts;
        let mut terms = vec![
            Term {
                what: "base (binary, font, allocator)",
                count: 1,
                bytes: BASE,
            },
            Term {
                what: "hosts (NICs, neighbour tables)",
                count: hosts,
                bytes: hosts * PER_HOST,
            },
            Term {
                what: "ports (queues, counters, summary)",
                count: ports,
                bytes: ports * PER_PORT,
            },
            Term {
                what: "queued frames (switches x hosts)",
                count: switches * hosts,
                bytes: switches * hosts * PER_SWITCH_HOST,
            },
            Term {
                what: "routing tables (route next hops)",
                count: route_hops,
                bytes: route_hops * PER_ROUTE_HOP,
            },
            Term {
                what: "flows (kept to the end)",
                count: flows,
                bytes: flows * kept,
            },
            Term {
                what: "flows running at once",
                count: flows_at_once,
                bytes: flows_at_once * PER_LIVE_FLOW,
            },
            Term {
                what: "collective QPs and lanes",
                count: coll_qps,
                bytes: coll_qps * PER_COLL_QP,
            },
            Term {
                what: "port time-series samples",
                count: port_rows,
                bytes: port_rows * std::mem::size_of::<PortSample>() as u64,
            },
            Term {
                what: "QP time-series samples",
                count: qp_rows,
                bytes: qp_rows * std::mem::size_of::<QpSample>() as u64,
            },
            Term {
                what: "pcap taps (buffers)",
                count: sc.taps.len() as u64,
                bytes: sc.taps.len() as u64 * PER_TAP,
            },
        ];
        terms.retain(|t| t.count > 0);
        terms.sort_by_key(|t| std::cmp::Reverse(t.bytes));
        let events = (EVENTS_PER_HOP * data_hops + EVENTS_PER_COLL_HOP * coll_hops) as u64
            + EVENTS_PER_FLOW * flows
            + ticks;
        Estimate {
            terms,
            events,
            packet_hops,
            flows,
            span,
        }
    }

    /// Estimated peak resident memory, bytes.
    pub fn peak_bytes(&self) -> u64 {
        self.terms.iter().map(|t| t.bytes).sum()
    }

    /// The largest term.
    pub fn largest(&self) -> &Term {
        &self.terms[0]
    }

    /// What `rocesim check` prints: the totals and every term.
    pub fn report(&self) -> String {
        let mut s = format!(
            "estimate: peak memory {}, {} events ({} packet hops, {} flows, {} simulated)\n",
            human_bytes(self.peak_bytes()),
            human_count(self.events),
            human_count(self.packet_hops),
            self.flows,
            self.span,
        );
        for t in &self.terms {
            s.push_str(&format!(
                "  {:>10}  {:<36} {:>12}\n",
                human_bytes(t.bytes),
                t.what,
                t.count
            ));
        }
        s
    }
}

/// `1.23 GB`, `456 MB`, `12 KB` (powers of 1000).
/// What one `[[collective]]` puts on the fabric (module docs).
struct CollTraffic {
    /// The links a message crosses between two servers (a mean).
    links: f64,
    net_bytes: u64,
    /// Data and CTS packets on the network.
    packets: u64,
    /// The rate the servers' NICs send at together (its busy time).
    net_rate: u64,
    qps: u64,
}

fn collective_traffic(
    sc: &Scenario,
    cc: &crate::scenario::schema::CollectiveCfg,
    hops: &Hops,
    seg: u64,
) -> CollTraffic {
    use rocesim_model::transport::collective::{CollOp, DataType, SizeStep, test_size, test_sizes};
    let host = |name: &str| sc.hosts.iter().position(|h| h.name == name);
    let servers: Vec<usize> = cc.servers.iter().filter_map(|s| host(s)).collect();
    let s = servers.len() as u64;
    let g = u64::from(cc.gpus_per_server.max(1));
    let n = cc.ranks.map_or(s * g, u64::from).max(1);
    let first = servers.first().copied().unwrap_or(0);
    let nics = sc.hosts.get(first).map_or(1, |h| h.nics.len().max(1)) as u64;
    let (Some(op), Some(dt)) = (
        CollOp::from_name(&cc.op),
        DataType::from_name(cc.datatype.as_deref().unwrap_or("float")),
    ) else {
        // `rocesim check` reports the error; nothing to estimate.
        return CollTraffic {
            links: 0.0,
            net_bytes: 0,
            packets: 0,
            net_rate: 1,
            qps: 0,
        };
    };
    let p2p = matches!(op, CollOp::AllToAll | CollOp::SendRecv);
    // A ring's messages go between the same GPU of two servers (the same
    // NIC, rail); p2p's between any two.
    let links = match servers.get(1) {
        None => 0.0,
        Some(&b) if p2p => hops.mean_between_links(first, b),
        Some(&b) => f64::from(hops.between(first, b)),
    };
    let step = match (cc.stepfactor, cc.stepbytes) {
        (Some(f), _) => SizeStep::Factor(f.max(2)),
        (None, b) => SizeStep::Bytes(b.map_or(1 << 20, |b| b.0).max(1)),
    };
    let sizes = test_sizes(
        cc.minbytes.map_or(32 << 20, |b| b.0),
        cc.maxbytes.map_or(32 << 20, |b| b.0),
        step,
    );
    let iters = u64::from(cc.iters.unwrap_or(20).max(1));
    let warm = u64::from(cc.warmup_iters.unwrap_or(1));
    let off_server = if s <= 1 {
        0.0
    } else {
        match op {
            CollOp::AllToAll => (n - g.min(n)) as f64 / (n - 1).max(1) as f64,
            _ => (s as f64 / n as f64).min(1.0),
        }
    };
    let conns = if s <= 1 {
        0
    } else {
        match p2p {
            true => n * (n - g.min(n)),
            false => 2 * nics * s,
        }
    };
    // The fewest messages a connection carries per operation, however
    // small: a ring's steps of one loop, one otherwise.
    let min_msgs = match op {
        CollOp::AllReduce => 2 * (n - 1),
        CollOp::AllGather | CollOp::ReduceScatter => n - 1,
        _ => 1,
    };
    // A message: at most a ring's 1 MiB slice or p2p's 128 KiB chunk.
    let msg_max = if p2p { 128 << 10 } else { 1 << 20 };
    // (bytes, packets) of one operation: every message at least one
    // packet, and three more (its CTS and the ACKs of both).
    let per_op = |size: u64| {
        let t = test_size(op, size, dt, n as u32);
        let bytes = t.algbw_bytes as f64 * op.bus_factor(n as u32) * n as f64 * off_server;
        // A small ring operation runs on fewer channels: one per 32 KiB
        // (512 threads x 64 bytes, facts §3).
        let used = match p2p {
            true => conns,
            false => conns.min((t.size_bytes >> 15).max(1) * s),
        };
        let per_conn = bytes / used.max(1) as f64;
        let msgs = used as f64 * (min_msgs as f64).max((per_conn / f64::from(msg_max)).ceil());
        (
            bytes,
            (bytes / seg.max(1) as f64).ceil().max(msgs) + 3.0 * msgs,
        )
    };
    let (mut bytes, mut packets) = (0f64, 0f64);
    let mut add = |size: u64, times: u64| {
        let (b, p) = per_op(size);
        bytes += b * times as f64;
        packets += p * times as f64;
    };
    sizes.iter().for_each(|&b| add(b, iters));
    if let (Some(&lo), Some(&hi)) = (sizes.first(), sizes.last()) {
        add(lo, warm);
        add(hi, warm);
    }
    let nq = cc
        .env
        .get("NCCL_IB_QPS_PER_CONNECTION")
        .and_then(|v| v.text().parse::<u64>().ok())
        .unwrap_or(1)
        .max(1);
    CollTraffic {
        links,
        net_bytes: bytes as u64,
        packets: packets as u64,
        net_rate: hops.rate_of(first).saturating_mul(nics * s),
        qps: 2 * conns * nq,
    }
}

pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} KB", b / 1e3)
    }
}

fn human_count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1} M", n as f64 / 1e6)
    } else {
        n.to_string()
    }
}

/// Path lengths in links between hosts: a breadth-first search of the
/// scenario's graph from each host's first neighbour (a fabric's thousands
/// of hosts hang off a few hundred edge switches, searched once each).
struct Hops {
    /// Nodes: hosts then switches; each node's neighbours.
    adj: Vec<Vec<u32>>,
    /// Each host's first link's rate, bit/s.
    rates: Vec<u64>,
    hosts: usize,
    from: std::cell::RefCell<HashMap<u32, Vec<u16>>>,
}

impl Hops {
    fn new(sc: &Scenario) -> Hops {
        let hosts = sc.hosts.len();
        let index: HashMap<&str, u32> = sc
            .hosts
            .iter()
            .map(|h| h.name.as_str())
            .chain(sc.switches.iter().map(|s| s.name.as_str()))
            .enumerate()
            .map(|(i, n)| (n, i as u32))
            .collect();
        let mut adj = vec![Vec::new(); hosts + sc.switches.len()];
        let mut rates = vec![0u64; hosts];
        for l in &sc.links {
            let node = |end: &str| index.get(end.split('.').next().unwrap_or(end)).copied();
            if let (Some(a), Some(b)) = (node(&l.a), node(&l.b)) {
                adj[a as usize].push(b);
                adj[b as usize].push(a);
                for n in [a, b] {
                    if (n as usize) < hosts && rates[n as usize] == 0 {
                        rates[n as usize] = l.rate.0.bps();
                    }
                }
            }
        }
        Hops {
            adj,
            rates,
            hosts,
            from: Default::default(),
        }
    }

    fn rate_of(&self, host: usize) -> u64 {
        self.rates.get(host).copied().unwrap_or(0)
    }

    /// Links on the path from host `a` to host `b` (2 where none is found:
    /// a back-to-back pair is 1, a star 2).
    fn between(&self, a: usize, b: usize) -> u32 {
        if a == b || a >= self.hosts || b >= self.hosts {
            return 0;
        }
        let Some(&first) = self.adj[a].first() else {
            return 2;
        };
        if first as usize == b {
            return 1;
        }
        let mut cache = self.from.borrow_mut();
        let dist = cache.entry(first).or_insert_with(|| self.bfs(first));
        match dist[b] {
            u16::MAX => 2,
            d => u32::from(d) + 1,
        }
    }

    /// Links from host `a`'s link `i` to host `b`'s link `j` (a GPU's NIC
    /// to another's), the mean over all pairs of links: on a rail fabric an
    /// alltoall's messages mostly cross rails, through a spine.
    fn mean_between_links(&self, a: usize, b: usize) -> f64 {
        let (Some(la), Some(lb)) = (self.adj.get(a), self.adj.get(b)) else {
            return 2.0;
        };
        if la.is_empty() || lb.is_empty() || a >= self.hosts || b >= self.hosts {
            return 2.0;
        }
        let mut cache = self.from.borrow_mut();
        let mut sum = 0u64;
        for &sa in la {
            let dist = cache.entry(sa).or_insert_with(|| self.bfs(sa));
            for &sb in lb {
                sum += match dist[sb as usize] {
                    u16::MAX => 2,
                    d => u64::from(d) + 2,
                };
            }
        }
        sum as f64 / (la.len() * lb.len()) as f64
    }

    fn bfs(&self, start: u32) -> Vec<u16> {
        let mut dist = vec![u16::MAX; self.adj.len()];
        dist[start as usize] = 0;
        let mut queue = VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            let d = dist[n as usize];
            // Hosts do not forward.
            if (n as usize) < self.hosts && n != start {
                continue;
            }
            for &m in &self.adj[n as usize] {
                if dist[m as usize] == u16::MAX {
                    dist[m as usize] = d + 1;
                    queue.push_back(m);
                }
            }
        }
        dist
    }
}

/// The environment variable that stands for `/proc/meminfo`'s
/// MemAvailable (bytes): a test, or a user who knows better than the
/// kernel's guess, sets it.
pub const MEM_AVAILABLE_ENV: &str = "ROCESIM_MEM_AVAILABLE";

/// The memory the machine can give a new process, bytes:
/// `ROCESIM_MEM_AVAILABLE`, else MemAvailable of `/proc/meminfo`; `None`
/// where neither is known (other operating systems): no refusal then.
pub fn mem_available() -> Result<Option<u64>, String> {
    if let Ok(v) = std::env::var(MEM_AVAILABLE_ENV) {
        return v.trim().parse::<u64>().map(Some).map_err(|_| {
            format!(
                "{MEM_AVAILABLE_ENV}={v}: not a number of bytes (e.g. {MEM_AVAILABLE_ENV}=8000000000)"
            )
        });
    }
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(None);
    };
    Ok(meminfo_available(&info))
}

/// MemAvailable of a `/proc/meminfo` text, bytes.
fn meminfo_available(info: &str) -> Option<u64> {
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Estimated peaks from which transparent huge pages pay: a fabric of
/// thousands of hosts (k = 24 and 32) ran 8-17 % faster with them
/// (BENCHMARKS.md, fabric scale).
const HUGE_PAGES_FROM: u64 = 512_000_000;

/// A hint for `rocesim check` where a run this large would go faster with
/// transparent huge pages and they are left to the program:
/// `thp_enabled` is `/sys/kernel/mm/transparent_hugepage/enabled`
/// (`always [madvise] never`), `tunables` the `GLIBC_TUNABLES` of the
/// environment. glibc's allocator asks for huge pages only when its
/// `glibc.malloc.hugetlb` tunable says so.
pub fn huge_page_hint(
    e: &Estimate,
    thp_enabled: Option<&str>,
    tunables: Option<&str>,
) -> Option<String> {
    let left_to_us = thp_enabled.is_some_and(|t| t.contains("[madvise]"));
    let asked = tunables.is_some_and(|t| t.contains("glibc.malloc.hugetlb"));
    (e.peak_bytes() >= HUGE_PAGES_FROM && left_to_us && !asked).then(|| {
        "hint: a run this large goes faster with transparent huge pages, which this kernel leaves to \
         the program: GLIBC_TUNABLES=glibc.malloc.hugetlb=1 rocesim run ... (the outputs are the same)"
            .to_string()
    })
}

/// [`huge_page_hint`] for this process, where glibc runs it (Linux).
pub fn huge_page_hint_here(e: &Estimate) -> Option<String> {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return None;
    }
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok();
    let tunables = std::env::var("GLIBC_TUNABLES").ok();
    huge_page_hint(e, thp.as_deref(), tunables.as_deref())
}

/// `rocesim run`'s guard: an error naming the estimate, its largest term
/// and what to do, when the run's estimated peak exceeds `available`.
pub fn refuse_if_too_large(e: &Estimate, available: Option<u64>) -> Result<(), String> {
    let Some(available) = available else {
        return Ok(());
    };
    let peak = e.peak_bytes();
    if peak <= available {
        return Ok(());
    }
    let big = e.largest();
    Err(format!(
        "this run would need about {} of memory at its peak (estimated; the largest part: {} {}, \
         {} of them), more than the {} this machine has available (MemAvailable, or \
         {MEM_AVAILABLE_ENV}); nothing was run or written\n  \
         hint: `--force` runs it anyway; a smaller fabric (e.g. --set topology.k=...), a shorter \
         traffic duration (--set traffic.0.duration=...) or fewer time-series samples (a longer \
         --set sim.sample_interval=...) make it smaller; `rocesim check` prints every part",
        human_bytes(peak),
        human_bytes(big.bytes),
        big.what,
        big.count,
        human_bytes(available),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_line() {
        let info = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   20000000 kB\n";
        assert_eq!(meminfo_available(info), Some(20_000_000 * 1024));
        assert_eq!(meminfo_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn refusal_names_the_estimate_and_largest_term() {
        let e = Estimate {
            terms: vec![
                Term {
                    what: "ports",
                    count: 10,
                    bytes: 3_000_000_000,
                },
                Term {
                    what: "hosts",
                    count: 2,
                    bytes: 1_000_000_000,
                },
            ],
            events: 1,
            packet_hops: 1,
            flows: 0,
            span: Ps::ZERO,
        };
        assert_eq!(refuse_if_too_large(&e, None), Ok(()));
        assert_eq!(refuse_if_too_large(&e, Some(4_000_000_000)), Ok(()));
        let msg = refuse_if_too_large(&e, Some(3_999_999_999)).unwrap_err();
        assert!(msg.contains("about 4.00 GB"), "{msg}");
        assert!(msg.contains("3.00 GB ports, 10 of them"), "{msg}");
        assert!(msg.contains("--force"), "{msg}");
    }

    /// The hint comes for a large run where the kernel leaves huge pages
    /// to the program and glibc has not been told already.
    #[test]
    fn huge_pages_are_hinted_where_they_would_help() {
        let of = |bytes| Estimate {
            terms: vec![Term {
                what: "ports",
                count: 1,
                bytes,
            }],
            events: 1,
            packet_hops: 1,
            flows: 0,
            span: Ps::ZERO,
        };
        let (big, small) = (of(1_900_000_000), of(226_000_000));
        let madvise = Some("always [madvise] never\n");
        let hint = huge_page_hint(&big, madvise, None).unwrap();
        assert!(
            hint.contains("GLIBC_TUNABLES=glibc.malloc.hugetlb=1"),
            "{hint}"
        );
        assert_eq!(huge_page_hint(&small, madvise, None), None);
        // `always`: every mapping gets them; `never`: none can.
        assert_eq!(
            huge_page_hint(&big, Some("[always] madvise never"), None),
            None
        );
        assert_eq!(
            huge_page_hint(&big, Some("always madvise [never]"), None),
            None
        );
        assert_eq!(huge_page_hint(&big, None, None), None);
        let told = Some("glibc.malloc.hugetlb=0");
        assert_eq!(huge_page_hint(&big, madvise, told), None);
    }
}
