//! ECMP routes and per-pair figures, computed as the reference does.
//!
//! For every destination host, a breadth-first search from it over the
//! graph finds each node's hop distance; a node's next hops toward that
//! host are all its links to a neighbour one hop closer. Hosts end the
//! search (they are reached but never expanded), so no route transits a
//! host. This is the reference's `CalculateRoute` (`third.cc`), with one
//! refinement: next hops are links, not neighbours, so parallel links
//! between two switches are all used (the reference keeps one link per
//! node pair).
//!
//! Next hops are kept in the order the search found them, which is the
//! order a switch's ECMP hash indexes (`nexthops[hash % n]`). The first is
//! the link toward the neighbour that discovered the node, and following
//! first hops from a source host gives the path along which the reference
//! sums delays and takes the minimum rate (`pairDelay`, `pairTxDelay`,
//! `pairBw`).
//!
//! The order the search visits a node's neighbours in is the reference's
//! on its own topologies ([`Addressing::Hpcc`]): its `nbr2if` is a
//! `std::map` keyed by `Ptr<Node>`, so neighbours come by memory address.
//! Hosts are small heap objects; every `SwitchNode` carries 2 MB of
//! per-port counters (`m_bytes[257][257][8]`), so glibc gives each its own
//! `mmap`, and Linux places each new mapping below the last: switches come
//! after all hosts, in descending node id. (Printed by a program linked
//! with the reference's libraries, making the nodes as `third.cc` does:
//! hosts at 0x5567..., node 320 at 0x7f85011fa010, 321 at 0x7f8500ff4010,
//! and down by 0x206000 per switch.) Only switches are searched through,
//! so only their order matters. Other topologies use link order.
//!
//! # Size
//!
//! One table per switch, indexed by destination host, of 2-byte ids into
//! that switch's list of distinct next-hop sets (an edge switch of a
//! fat-tree has one set per local host plus "all uplinks"). A host with
//! one link needs no table. For the reference's `fat.txt` (320 hosts, 56
//! switches) that is 56 x 320 x 2 bytes plus 640 next-hop entries and a
//! slot per node, about 50 KB ([`Routes::heap_bytes`]). Building costs one
//! search per host, O(hosts x links), but the hosts with one link to a
//! switch share one search (a fat-tree's edge switch, k/2 hosts), and a
//! column copy of rows x hosts entries per other host.

use rustc_hash::FxHashMap;

use roce_codec::{IbRepr, Opcode, Psn, Syndrome};

use super::{Addressing, HostId, LinkId, NodeId, Topology, TopologyError};
use crate::packet::{Billing, L3, Packet};
use crate::time::{Ps, Rate, wire_bytes};

/// Header bytes the reference adds to each packet's payload (Ethernet,
/// IPv4, UDP and its own 6 bytes; no BTH, ICRC, FCS, preamble or gap).
pub const HPCC_HEADER_BYTES: u64 = 48;

const NONE: u16 = u16::MAX;

#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A switch, or a host with several links: row of `entries`.
    Row(u32),
    /// A host with one link, to `peer`; `peer_row` if the peer is a switch.
    Single {
        link: LinkId,
        peer: NodeId,
        peer_row: Option<u32>,
    },
    /// A host without links.
    Isolated,
}

/// Next hops from every node toward every host (see the module docs).
#[derive(Debug, Clone)]
pub struct Routes {
    hosts: Vec<NodeId>,
    slots: Vec<Slot>,
    /// `entries[row * hosts + dst]`: the row's set id for dst, or NONE.
    entries: Vec<u16>,
    /// A row's first set in `set_off`.
    set_base: Vec<u32>,
    /// Set s is `hops[set_off[s]..set_off[s + 1]]`.
    set_off: Vec<u32>,
    hops: Vec<LinkId>,
}

/// One route of a switch's table: `prefix/len` via these links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRoute {
    pub prefix: [u8; 4],
    pub len: u8,
    pub via: Vec<LinkId>,
}

/// Switch `id`'s routing table from `routes`: one route per distinct
/// next-hop set, the set most destinations share (the first on a tie) as
/// the default route `0.0.0.0/0`, the others one /24 per host, summarised
/// ([`summarize`]): the /24s of one set that fill a shorter prefix between
/// them are that prefix. Hosts cabled to the switch are left to its
/// neighbour table, unreachable ones out.
///
/// Summarised, a core switch of a k = 32 fat-tree routes each pod by one
/// /19 instead of its 256 hosts by one /24 each: 31 routes, not 8,192
/// (2.1 M routes over the 256 cores, which the lowered scenario spelled out
/// and each switch kept twice). Longest-prefix match gives every address
/// the same next hops as before.
pub fn route_table(topo: &Topology, routes: &Routes, id: NodeId) -> Vec<TableRoute> {
    let mut by_set: Vec<(Vec<LinkId>, Vec<u32>)> = Vec::new();
    // A node's distinct next-hop sets are stored once each, so a set is
    // known by where its slice starts: no hashing of the links per host.
    let mut index: FxHashMap<*const LinkId, usize> = FxHashMap::default();
    for h in 0..topo.host_count() {
        let hops = routes.next_hops(id, HostId(h));
        if hops.is_empty() {
            continue;
        }
        if hops.len() == 1 && topo.peer(hops[0], id) == topo.host_node(HostId(h)) {
            continue;
        }
        let i = *index.entry(hops.as_ptr()).or_insert_with(|| {
            by_set.push((hops.to_vec(), Vec::new()));
            by_set.len() - 1
        });
        by_set[i].1.push(h);
    }
    let default = (0..by_set.len()).max_by_key(|&i| (by_set[i].1.len(), usize::MAX - i));
    let mut table = Vec::new();
    for (i, (via, dsts)) in by_set.into_iter().enumerate() {
        if Some(i) == default {
            table.push(TableRoute {
                prefix: [0; 4],
                len: 0,
                via,
            });
            continue;
        }
        let nets = dsts
            .iter()
            .map(|&h| u32::from(topo.host_ip(HostId(h))) >> 8);
        for (net, len) in summarize(nets.collect()) {
            table.push(TableRoute {
                prefix: net.to_be_bytes(),
                len,
                via: via.clone(),
            });
        }
    }
    table
}

/// The fewest prefixes that cover exactly the /24s `nets` (each given as
/// its top 24 bits): two /24s that are the halves of a /23 become it, two
/// such /23s a /22, and so on (no shorter than a /8). In address order.
pub fn summarize(mut nets: Vec<u32>) -> Vec<(u32, u8)> {
    nets.sort_unstable();
    nets.dedup();
    let mut out = Vec::new();
    // `level`: prefixes of length `len`, as their top `len` bits, sorted.
    let (mut level, mut len) = (nets, 24u8);
    while !level.is_empty() {
        let mut up = Vec::new();
        let mut i = 0;
        while i < level.len() {
            let p = level[i];
            if len > 8 && p % 2 == 0 && level.get(i + 1) == Some(&(p + 1)) {
                up.push(p / 2);
                i += 2;
            } else {
                out.push((p << (32 - u32::from(len)), len));
                i += 1;
            }
        }
        level = up;
        len -= 1;
    }
    out.sort_unstable();
    out
}

/// The order a route search visits a node's neighbours in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchOrder {
    /// Link order: rocesim's own topologies.
    Links,
    /// The reference's, by address (the module docs): hosts first (their
    /// order is immaterial), then switches by descending node id; a node's
    /// links to one neighbour keep link order.
    ByAddress,
}

impl SearchOrder {
    /// The reference's order on its own topologies ([`Addressing::Hpcc`]),
    /// link order on any other.
    pub fn of(topo: &Topology) -> SearchOrder {
        match topo.addressing() {
            Addressing::Hpcc => SearchOrder::ByAddress,
            Addressing::Sequential => SearchOrder::Links,
        }
    }
}

/// Each node's links in `order`; `None`: link order, as they are.
fn search_order(topo: &Topology, order: SearchOrder) -> Option<Vec<Vec<LinkId>>> {
    if order == SearchOrder::Links {
        return None;
    }
    Some(
        (0..topo.nodes().len())
            .map(|i| {
                let me = NodeId(i as u32);
                let mut links = topo.links_of(me).to_vec();
                links.sort_by_key(|&l| {
                    let peer = topo.peer(l, me);
                    (topo.is_switch(peer), std::cmp::Reverse(peer.0))
                });
                links
            })
            .collect(),
    )
}

/// Computes the routes of `topo` (see the module docs).
pub fn ecmp_routes(topo: &Topology) -> Result<Routes, TopologyError> {
    ecmp_routes_over(topo, |_| true)
}

/// [`ecmp_routes`] over the links for which `up` holds, as the reference
/// recomputes every route when a link fails (`TakeDownLink`).
pub fn ecmp_routes_over(
    topo: &Topology,
    up: impl Fn(LinkId) -> bool,
) -> Result<Routes, TopologyError> {
    ecmp_routes_searching(topo, SearchOrder::of(topo), up)
}

/// [`ecmp_routes_over`], the search visiting neighbours in `order`: for a
/// graph of the reference's topology that is not numbered as its file (a
/// scenario's own graph, `rocesim_scenario::lower::traffic::graph`).
pub fn ecmp_routes_searching(
    topo: &Topology,
    order: SearchOrder,
    up: impl Fn(LinkId) -> bool,
) -> Result<Routes, TopologyError> {
    let n = topo.nodes().len();
    let hosts = topo.hosts().to_vec();
    let h = hosts.len();
    let mut rows = 0u32;
    let mut row_of = vec![None; n];
    for (i, r) in row_of.iter_mut().enumerate() {
        let id = NodeId(i as u32);
        if topo.is_switch(id) || topo.links_of(id).len() > 1 {
            *r = Some(rows);
            rows += 1;
        }
    }
    let mut entries = vec![NONE; rows as usize * h];
    let mut interned: Vec<FxHashMap<Vec<LinkId>, u16>> = vec![FxHashMap::default(); rows as usize];
    let mut sets: Vec<Vec<Vec<LinkId>>> = vec![Vec::new(); rows as usize];
    // Row `r`'s id of next-hop set `set`, interned on first sight.
    let mut intern = |r: u32, x: NodeId, set: &[LinkId]| -> Result<u16, TopologyError> {
        let row = &mut interned[r as usize];
        if let Some(&id) = row.get(set) {
            return Ok(id);
        }
        let id = row.len();
        if id >= usize::from(NONE) {
            return Err(TopologyError(format!(
                "{} has more than {NONE} distinct next-hop sets",
                topo.node(x).name
            )));
        }
        row.insert(set.to_vec(), id as u16);
        sets[r as usize].push(set.to_vec());
        Ok(id as u16)
    };
    // A host with one link, to a switch, is reached through that switch
    // alone: the search from it is the search from any other host with
    // one link to the same switch, but for that switch's own next hop (the
    // host's link). `behind[s]`: the first such host searched from behind
    // switch `s`, whose column of `entries` the others copy. A fat-tree's
    // edge switch holds k/2 hosts: k/2 times fewer searches, and the
    // entries (and the order sets are interned in) are the same.
    let mut behind: Vec<Option<usize>> = vec![None; n];

    const INF: u32 = u32::MAX;
    let mut dis = vec![INF; n];
    let mut queue: Vec<NodeId> = Vec::with_capacity(n);
    let mut reached: Vec<NodeId> = Vec::with_capacity(n);
    // Per node, a list (in discovery order) of its links toward the
    // destination: head/tail into `found`, chained by the `usize`.
    let mut head = vec![usize::MAX; n];
    let mut tail = vec![usize::MAX; n];
    let mut found: Vec<(LinkId, usize)> = Vec::new();
    let mut set = Vec::new();
    let by_address = search_order(topo, order);
    for (d, &dst) in hosts.iter().enumerate() {
        let edge = match topo.links_of(dst) {
            &[l] if up(l) && topo.is_switch(topo.peer(l, dst)) => Some((l, topo.peer(l, dst))),
            _ => None,
        };
        if let Some((l, s)) = edge {
            if let Some(d0) = behind[s.0 as usize] {
                let own = row_of[s.0 as usize].expect("a switch has a row");
                for r in 0..rows as usize {
                    entries[r * h + d] = entries[r * h + d0];
                }
                entries[own as usize * h + d] = intern(own, s, &[l])?;
                continue;
            }
            behind[s.0 as usize] = Some(d);
        }
        for &x in &reached {
            dis[x.0 as usize] = INF;
            head[x.0 as usize] = usize::MAX;
        }
        reached.clear();
        queue.clear();
        found.clear();
        dis[dst.0 as usize] = 0;
        reached.push(dst);
        queue.push(dst);
        let mut q = 0;
        while q < queue.len() {
            let now = queue[q];
            q += 1;
            let dn = dis[now.0 as usize];
            let links = match &by_address {
                Some(order) => &order[now.0 as usize][..],
                None => topo.links_of(now),
            };
            for &l in links {
                if !up(l) {
                    continue;
                }
                let next = topo.peer(l, now);
                let x = next.0 as usize;
                if dis[x] == INF {
                    dis[x] = dn + 1;
                    reached.push(next);
                    if topo.is_switch(next) {
                        queue.push(next);
                    }
                }
                if dis[x] == dn + 1 {
                    found.push((l, usize::MAX));
                    let i = found.len() - 1;
                    if head[x] == usize::MAX {
                        head[x] = i;
                    } else {
                        found[tail[x]].1 = i;
                    }
                    tail[x] = i;
                }
            }
        }
        for &x in &reached {
            let Some(r) = row_of[x.0 as usize] else {
                continue;
            };
            let mut i = head[x.0 as usize];
            if i == usize::MAX {
                continue;
            }
            set.clear();
            while i != usize::MAX {
                set.push(found[i].0);
                i = found[i].1;
            }
            entries[r as usize * h + d] = intern(r, x, &set)?;
        }
    }
    let mut set_base = Vec::with_capacity(rows as usize);
    let mut set_off = vec![0u32];
    let mut hops = Vec::new();
    for row in sets {
        set_base.push(set_off.len() as u32 - 1);
        for s in row {
            hops.extend_from_slice(&s);
            set_off.push(hops.len() as u32);
        }
    }
    let slots = (0..n)
        .map(|i| {
            let id = NodeId(i as u32);
            match (row_of[i], topo.links_of(id).first()) {
                (Some(r), _) => Slot::Row(r),
                (None, Some(&link)) => {
                    let peer = topo.peer(link, id);
                    let peer_row = row_of[peer.0 as usize].filter(|_| topo.is_switch(peer));
                    Slot::Single {
                        link,
                        peer,
                        peer_row,
                    }
                }
                (None, None) => Slot::Isolated,
            }
        })
        .collect();
    Ok(Routes {
        hosts,
        slots,
        entries,
        set_base,
        set_off,
        hops,
    })
}

impl Routes {
    /// The links from `node` on shortest paths toward host `dst`, in the
    /// order found (the first is the reference's path); empty at `dst`
    /// itself or when `dst` is unreachable.
    pub fn next_hops(&self, node: NodeId, dst: HostId) -> &[LinkId] {
        match &self.slots[node.0 as usize] {
            Slot::Row(r) => self.row_hops(*r, dst),
            Slot::Single {
                link,
                peer,
                peer_row,
            } => {
                let dst_node = self.hosts[dst.0 as usize];
                let via_peer = match peer_row {
                    _ if node == dst_node => false,
                    _ if *peer == dst_node => true,
                    Some(r) => !self.row_hops(*r, dst).is_empty(),
                    None => false,
                };
                if via_peer {
                    core::slice::from_ref(link)
                } else {
                    &[]
                }
            }
            Slot::Isolated => &[],
        }
    }

    fn row_hops(&self, row: u32, dst: HostId) -> &[LinkId] {
        let e = self.entries[row as usize * self.hosts.len() + dst.0 as usize];
        if e == NONE {
            return &[];
        }
        let s = (self.set_base[row as usize] + u32::from(e)) as usize;
        &self.hops[self.set_off[s] as usize..self.set_off[s + 1] as usize]
    }

    /// The reference's path from `src` to `dst` (first next hops), None
    /// when there is none (or `src == dst`).
    pub fn path<'a>(
        &'a self,
        topo: &'a Topology,
        src: HostId,
        dst: HostId,
    ) -> Option<impl Iterator<Item = LinkId> + 'a> {
        let mut node = self.hosts[src.0 as usize];
        self.next_hops(node, dst).first()?;
        let dst_node = self.hosts[dst.0 as usize];
        let mut budget = self.slots.len();
        Some(core::iter::from_fn(move || {
            if node == dst_node || budget == 0 {
                return None;
            }
            budget -= 1;
            let l = *self.next_hops(node, dst).first()?;
            node = topo.peer(l, node);
            Some(l)
        }))
    }

    /// Links between two hosts (2 on one switch).
    pub fn hop_count(&self, topo: &Topology, src: HostId, dst: HostId) -> Option<u32> {
        Some(self.path(topo, src, dst)?.count() as u32)
    }

    /// The slowest link on the path (`pairBw`).
    pub fn bottleneck_rate(&self, topo: &Topology, src: HostId, dst: HostId) -> Option<Rate> {
        self.path(topo, src, dst)?.map(|l| topo.link(l).rate).min()
    }

    /// The unloaded round-trip time: propagation both ways plus `per_hop`
    /// serialization on every link of the path (`pairRtt` with
    /// [`PerHop::Reference`]).
    pub fn base_rtt(
        &self,
        topo: &Topology,
        src: HostId,
        dst: HostId,
        per_hop: &PerHop,
    ) -> Option<Ps> {
        let mut rtt = Ps::ZERO;
        for l in self.path(topo, src, dst)? {
            let link = topo.link(l);
            rtt += link.delay + link.delay + per_hop.cost(link.rate);
        }
        Some(rtt)
    }

    /// The reference's ideal completion time of a flow of `size` bytes
    /// (`standalone_fct` in its FCT files): base RTT (with `payload`-byte
    /// packets) plus the flow's bytes and 48 header bytes per packet at
    /// the bottleneck rate, in whole nanoseconds as it computes them.
    pub fn reference_ideal_fct(
        &self,
        topo: &Topology,
        src: HostId,
        dst: HostId,
        size: u64,
        payload: u32,
    ) -> Option<Ps> {
        let payload = u64::from(payload.max(1));
        let rtt = self.base_rtt(topo, src, dst, &PerHop::Reference { payload })?;
        let bw = self.bottleneck_rate(topo, src, dst)?.bps();
        let bytes = size + size.div_ceil(payload).max(1) * HPCC_HEADER_BYTES;
        let ns = u128::from(bytes) * 8_000_000_000 / u128::from(bw);
        Some(rtt + Ps(ns as u64 * 1000))
    }

    /// The same idealization with rocesim's framing: base RTT with a
    /// full data frame and its ACK on every hop, plus every frame of an
    /// RDMA WRITE of `size` bytes (FCS, preamble and gap included) at the
    /// bottleneck rate. Compare slowdowns, not times, with the reference.
    pub fn framed_ideal_fct(
        &self,
        topo: &Topology,
        src: HostId,
        dst: HostId,
        size: u64,
        framing: Framing,
    ) -> Option<Ps> {
        let rtt = self.base_rtt(topo, src, dst, &PerHop::Framed(framing))?;
        let bw = self.bottleneck_rate(topo, src, dst)?;
        Some(rtt + bw.tx_time(framing.write_wire_bytes(size)))
    }

    /// Heap bytes held by the tables.
    pub fn heap_bytes(&self) -> usize {
        self.hosts.capacity() * size_of::<NodeId>()
            + self.slots.capacity() * size_of::<Slot>()
            + self.entries.capacity() * size_of::<u16>()
            + (self.set_base.capacity() + self.set_off.capacity()) * size_of::<u32>()
            + self.hops.capacity() * size_of::<LinkId>()
    }

    /// How many next-hop entries the switch tables hold in all.
    pub fn next_hop_entries(&self) -> usize {
        self.hops.len()
    }
}

/// What one link adds to a round trip besides propagation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerHop {
    /// The reference: `payload` bytes serialized once per link, in whole
    /// nanoseconds rounded down per link (`pairTxDelay`; 1000 in its runs).
    Reference { payload: u64 },
    /// rocesim: a full data frame forward and an ACK back on every link,
    /// each with FCS, preamble and inter-frame gap, to the picosecond.
    Framed(Framing),
}

impl PerHop {
    fn cost(&self, rate: Rate) -> Ps {
        match self {
            PerHop::Reference { payload } => {
                let ns = u128::from(*payload) * 8_000_000_000 / u128::from(rate.bps());
                Ps(ns as u64 * 1000)
            }
            PerHop::Framed(f) => {
                rate.tx_time(f.data(WRITE_MIDDLE, f.pmtu)) + rate.tx_time(f.ack_wire_bytes())
            }
        }
    }
}

/// RoCEv2 framing of RC traffic: the path MTU (payload per packet),
/// whether frames carry an 802.1Q tag, and what the sending NIC bills them
/// at ([`Billing::REAL`]: their real size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    pub pmtu: u32,
    pub vlan: bool,
    pub billing: Billing,
}

// RC opcodes (IBA table 38) whose frames make up a WRITE and its ACK.
const WRITE_FIRST: Opcode = Opcode(0x06);
const WRITE_MIDDLE: Opcode = Opcode(0x07);
const WRITE_LAST: Opcode = Opcode(0x08);
const WRITE_ONLY: Opcode = Opcode(0x0A);

impl Framing {
    /// A frame's length as a capture shows it (no FCS).
    fn frame_len(&self, ib: &IbRepr) -> u32 {
        let l3 = L3::V2 {
            src: core::net::Ipv4Addr::UNSPECIFIED,
            dst: core::net::Ipv4Addr::UNSPECIFIED,
            dscp: 0,
            ecn: 0,
            ttl: 64,
            sport: 0,
            ecmp: 0,
        };
        Packet::compute_frame_len(self.vlan, &l3, ib)
    }

    /// Wire bytes of one frame: billed, or the real frame with FCS,
    /// preamble and gap.
    fn wire(&self, ib: &IbRepr) -> u64 {
        match self.billing.billed(ib) {
            Some(b) => b.into(),
            None => wire_bytes(self.frame_len(ib).into()),
        }
    }

    fn data(&self, op: Opcode, payload: u32) -> u64 {
        self.wire(&IbRepr::new(op, 0, Psn::new(0), payload))
    }

    /// Wire bytes of an ACK.
    pub fn ack_wire_bytes(&self) -> u64 {
        self.wire(&IbRepr::ack(0, Psn::new(0), Syndrome(0), 0))
    }

    /// A full-MTU RDMA WRITE MIDDLE frame (no FCS): Ethernet, IPv4, UDP,
    /// BTH, payload, ICRC.
    pub fn data_frame_len(&self) -> u32 {
        self.frame_len(&IbRepr::new(WRITE_MIDDLE, 0, Psn::new(0), self.pmtu))
    }

    /// An RC ACK frame (no FCS): Ethernet, IPv4, UDP, BTH, AETH, ICRC.
    pub fn ack_frame_len(&self) -> u32 {
        self.frame_len(&IbRepr::ack(0, Psn::new(0), Syndrome(0), 0))
    }

    /// Wire bytes (frames with FCS, preamble and gap, or as billed) of all
    /// packets of an RDMA WRITE of `size` bytes: FIRST and ONLY carry a
    /// RETH.
    pub fn write_wire_bytes(&self, size: u64) -> u64 {
        let pmtu = u64::from(self.pmtu.max(1));
        let n = size.div_ceil(pmtu).max(1);
        if n == 1 {
            return self.data(WRITE_ONLY, size as u32);
        }
        let last = (size - (n - 1) * pmtu) as u32;
        self.data(WRITE_FIRST, self.pmtu)
            + (n - 2) * self.data(WRITE_MIDDLE, self.pmtu)
            + self.data(WRITE_LAST, last)
    }
}

#[cfg(test)]
mod tests {
    use super::summarize;

    fn net(a: u8, b: u8, c: u8) -> u32 {
        u32::from_be_bytes([0, a, b, c])
    }

    #[test]
    fn halves_become_their_whole() {
        // 10.0.0-7 (a /21), 10.0.8-9 (a /23), 10.0.11 alone, 10.0.13 alone.
        let mut nets: Vec<u32> = (0..10).map(|c| net(10, 0, c)).collect();
        nets.extend([net(10, 0, 11), net(10, 0, 13), net(10, 0, 3)]);
        let want = [
            (u32::from_be_bytes([10, 0, 0, 0]), 21),
            (u32::from_be_bytes([10, 0, 8, 0]), 23),
            (u32::from_be_bytes([10, 0, 11, 0]), 24),
            (u32::from_be_bytes([10, 0, 13, 0]), 24),
        ];
        assert_eq!(summarize(nets), want);
        // 10.0.1 and 10.0.2 are not the halves of one /23.
        assert_eq!(summarize(vec![net(10, 0, 1), net(10, 0, 2)]).len(), 2);
    }
}
