//! One operation as NCCL's device code runs it: per rank, per channel (a
//! [`Lane`]), the ordered steps ([`Prim`]) that receive from the previous
//! rank and/or send to the next, each step one slice = one message on a
//! connection ([`ConnSpec`]). Pure arithmetic: the unit tests check step
//! counts and bytes by hand.
//!
//! Ring all_reduce of one loop on ring position `p` (`runRing` in NCCL's
//! `all_reduce.h`, facts §2.1), each transfer cut into ≤ 2 slices:
//!
//! ```text
//!   k = 0            send chunk p
//!   k = 1 .. n−1     recv, reduce, send chunk p−k      (reduce-scatter)
//!   k = n .. 2n−3    recv, copy, send chunk p−k         (all-gather)
//!   k = 2n−2         recv chunk p+2
//! ```

use std::collections::BTreeMap;

pub use super::steps::{Prim, Steps};
pub use super::topo::Topo;
use super::tree::{self, TreeLinks};
use super::{Algo, CollOp, DataType, NcclKnobs};

/// A directed connection: `from` sends to `to` on `channel`. `nics` is
/// the sending and the receiving NIC when the two are on different
/// servers (a network connection), `None` over NVLink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnSpec {
    pub channel: u32,
    pub from: u32,
    pub to: u32,
    pub nics: Option<(u32, u32)>,
    /// Messages in flight at most (CTSs out, slots filled).
    pub window: u32,
}

/// What one rank runs on one channel (or towards one p2p peer), in order.
/// A receiving step takes the next message of every in-connection (a
/// tree's children), a sending step sends on every out-connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    pub rank: u32,
    pub ins: Vec<u32>,
    pub outs: Vec<u32>,
    pub prims: Steps,
}

/// One operation: its lanes and how many messages each connection carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpPlan {
    pub lanes: Vec<Lane>,
    pub msgs: Vec<u64>,
    pub channels: u32,
}

/// Whether this operation runs on the tree.
pub fn on_tree(op: CollOp, knobs: &NcclKnobs) -> bool {
    op == CollOp::AllReduce && knobs.algo == Algo::Tree
}

/// Chunk and slice of an algorithm, in NCCL steps (facts §2.1, §2.2, §2.4).
fn steps_of(op: CollOp, knobs: &NcclKnobs) -> (u64, u64) {
    match op {
        _ if on_tree(op, knobs) => (1, 1),
        CollOp::AllReduce | CollOp::AllGather | CollOp::ReduceScatter => (4, 2),
        CollOp::Broadcast | CollOp::Reduce | CollOp::AllToAll | CollOp::SendRecv => (1, 1),
    }
}

/// The connections of a collective (all sizes), in a fixed order.
pub fn connections(op: CollOp, topo: &Topo, knobs: &NcclKnobs, root: u32) -> Vec<ConnSpec> {
    let (_, slice_steps) = steps_of(op, knobs);
    let window = (u64::from(knobs.steps) / slice_steps).max(1) as u32;
    let mut v = Vec::new();
    let mut add = |channel, from, to, ch_nic: Option<u32>| {
        let nics = (topo.server(from) != topo.server(to)).then(|| match ch_nic {
            Some(n) => (n, n),
            // PXN: the sender uses the NIC of the destination GPU's
            // index, so p2p stays on one rail (facts §6).
            None => (topo.nic_of(topo.local(to)), topo.nic_of(topo.local(to))),
        });
        v.push(ConnSpec {
            channel,
            from,
            to,
            nics,
            window,
        });
    };
    let n = topo.ranks;
    match op {
        CollOp::SendRecv => {
            for r in 0..n {
                add(0, r, (r + 1) % n, None);
            }
        }
        CollOp::AllToAll => {
            for r in 0..n {
                for p in (0..n).filter(|&p| p != r) {
                    add(0, r, p, None);
                }
            }
        }
        _ if on_tree(op, knobs) => {
            // Per channel, each parent-child pair: up, then down.
            for ch in 0..knobs.channels {
                let t = TreeLinks::of(topo, ch, knobs.channels);
                for r in 0..n {
                    if let Some(p) = t.up[r as usize] {
                        add(ch, r, p, Some(t.nic));
                        add(ch, p, r, Some(t.nic));
                    }
                }
            }
        }
        _ => {
            for ch in 0..knobs.channels {
                let order = chain_order(op, topo, ch, root);
                // The NIC of the channel: the one its ring enters each
                // server by (the entry GPU's).
                let nic = topo.ring_nic(ch);
                let edges = if op.rooted() { n - 1 } else { n };
                for i in 0..edges {
                    let (a, b) = (order[i as usize], order[((i + 1) % n) as usize]);
                    add(ch, a, b, Some(nic));
                }
            }
        }
    }
    v
}

/// The ring of channel `ch`, rotated for a chain: broadcast from the root,
/// reduce towards it (the root last).
fn chain_order(op: CollOp, topo: &Topo, ch: u32, root: u32) -> Vec<u32> {
    let mut ring = topo.ring(ch);
    let at = ring.iter().position(|&r| r == root).unwrap_or(0);
    let n = ring.len();
    match op {
        CollOp::Broadcast => ring.rotate_left(at),
        CollOp::Reduce => ring.rotate_left((at + 1) % n),
        _ => {}
    }
    ring
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

/// The slices of a chunk of `nelem` elements (`prims_simple.h`: at most
/// `per_chunk` slices, each at least 1/32 of the nominal slice, the
/// chunk's halves rounded to 16 elements), in elements. Always at least
/// one (a step of 0 bytes still goes).
pub fn slices(nelem: u64, slice_elts: u64, per_chunk: u64) -> Vec<u64> {
    let size = (nelem.div_ceil(16 * per_chunk) * 16).max(slice_elts / 32);
    let mut v = Vec::new();
    let mut off = 0;
    loop {
        let s = size.min(nelem - off);
        v.push(s);
        off += s;
        if v.len() as u64 >= per_chunk || off >= nelem {
            return v;
        }
    }
}

/// The channels an operation of `bytes` uses: fewer while `bytes <
/// nc × nthreads × 64` (facts §3).
pub fn channels_for(bytes: u64, knobs: &NcclKnobs) -> u32 {
    let mut nc = knobs.channels.max(1);
    while nc > 1 && bytes < u64::from(nc) * u64::from(knobs.nthreads) * 64 {
        nc -= 1;
    }
    nc
}

/// The plan of one operation of `count` elements (nccl-tests' count).
pub fn plan_op(
    op: CollOp,
    topo: &Topo,
    knobs: &NcclKnobs,
    conns: &[ConnSpec],
    dt: DataType,
    count: u64,
    root: u32,
) -> OpPlan {
    let e = dt.size();
    let n = topo.ranks;
    let index: BTreeMap<(u32, u32, u32), u32> = conns
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.channel, c.from, c.to), i as u32))
        .collect();
    let mut plan = OpPlan {
        lanes: Vec::new(),
        msgs: vec![0; conns.len()],
        channels: 1,
    };
    let step_elts = knobs.buffsize / u64::from(knobs.steps) / e;
    if op.p2p() {
        let bytes = count * e;
        for (i, c) in conns.iter().enumerate() {
            let chunk = match c.nics {
                // NCCL_P2P_NET_CHUNKSIZE, /4 under one step, /2 under 8.
                Some(_) if bytes < knobs.p2p_net_chunk => knobs.p2p_net_chunk / 4,
                Some(_) if bytes < 8 * knobs.p2p_net_chunk => knobs.p2p_net_chunk / 2,
                Some(_) => knobs.p2p_net_chunk,
                None => knobs.p2p_nvl_chunk,
            };
            let mut sizes = Vec::new();
            let mut off = 0;
            while off < bytes {
                sizes.push(chunk.min(bytes - off));
                off += chunk;
            }
            plan.msgs[i] = sizes.len() as u64;
            let prims = |recv| {
                sizes
                    .iter()
                    .map(|&b| Prim {
                        recv,
                        send: !recv,
                        bytes: b,
                        reduce: false,
                    })
                    .collect()
            };
            plan.lanes.push(Lane {
                rank: c.from,
                ins: Vec::new(),
                outs: vec![i as u32],
                prims: prims(false),
            });
            plan.lanes.push(Lane {
                rank: c.to,
                ins: vec![i as u32],
                outs: Vec::new(),
                prims: prims(true),
            });
        }
        return plan;
    }
    if on_tree(op, knobs) {
        plan_tree(topo, knobs, &index, dt, count, &mut plan);
        return plan;
    }
    let (chunk_steps, slice_steps) = steps_of(op, knobs);
    let chunk_elts = step_elts * chunk_steps;
    let slice_elts = step_elts * slice_steps;
    let per_chunk = chunk_steps / slice_steps;
    let total_bytes = match op {
        CollOp::AllGather | CollOp::ReduceScatter => count * e * u64::from(n),
        _ => count * e,
    };
    let nc = channels_for(total_bytes, knobs);
    plan.channels = nc;
    let align = (16 / e).max(1);
    let per_channel = align_up(count.div_ceil(u64::from(nc)), align);
    for ch in 0..nc {
        let lo = (u64::from(ch) * per_channel).min(count);
        let part = (lo + per_channel).min(count) - lo;
        let order = chain_order(op, topo, ch, root);
        for (pos, &rank) in order.iter().enumerate() {
            let pos = pos as u32;
            let conn = |a: u32, b: u32| index.get(&(ch, a, b)).copied();
            let prev = order[((pos + n - 1) % n) as usize];
            let next = order[((pos + 1) % n) as usize];
            let (first, last) = (pos == 0, pos == n - 1);
            let in_conn = match op {
                CollOp::Broadcast | CollOp::Reduce if first => None,
                _ => conn(prev, rank),
            };
            let out_conn = match op {
                CollOp::Broadcast | CollOp::Reduce if last => None,
                _ => conn(rank, next),
            };
            let mut prims = Steps::default();
            let mut push = |nelem: u64, recv: bool, send: bool, reduce: bool| {
                for s in slices(nelem, slice_elts, per_chunk) {
                    prims.push(Prim {
                        recv,
                        send,
                        bytes: s * e,
                        reduce: reduce && recv,
                    });
                }
            };
            let mut off = 0;
            match op {
                CollOp::AllReduce => {
                    let loop_elts = u64::from(n) * chunk_elts;
                    while off < part {
                        let rem = part - off;
                        let ce = if rem < loop_elts {
                            align_up(rem.div_ceil(u64::from(n)), align)
                        } else {
                            chunk_elts
                        };
                        let size = |j: u32| ce.min(rem.saturating_sub(u64::from(j) * ce));
                        for k in 0..2 * n - 1 {
                            let chunk = (pos + 2 * n - k % n) % n;
                            let recv = k > 0;
                            let send = k < 2 * n - 2;
                            push(size(chunk), recv, send, k < n);
                        }
                        off += loop_elts;
                    }
                }
                _ => {
                    // all_gather, reduce_scatter: around the ring once per
                    // chunk; broadcast, reduce: down the chain.
                    let chain = op.rooted();
                    while off < part {
                        let nelem = chunk_elts.min(part - off);
                        if chain {
                            push(nelem, !first, !last, op == CollOp::Reduce);
                        } else {
                            let reduce = op == CollOp::ReduceScatter;
                            for k in 0..n {
                                push(nelem, k > 0, k < n - 1, reduce);
                            }
                        }
                        off += chunk_elts;
                    }
                }
            }
            if let Some(c) = out_conn {
                plan.msgs[c as usize] += prims.iter().filter(|p| p.send).count() as u64;
            }
            plan.lanes.push(Lane {
                rank,
                ins: in_conn.into_iter().collect(),
                outs: out_conn.into_iter().collect(),
                prims,
            });
        }
    }
    plan
}

/// The most bytes one server NIC sends, or receives, in one operation of
/// `plan`: what bounds the operation's time on the network.
pub fn busiest_nic_bytes(plan: &OpPlan, conns: &[ConnSpec], topo: &Topo) -> u64 {
    let mut load: BTreeMap<(u32, u32, bool), u64> = BTreeMap::new();
    for lane in &plan.lanes {
        let sent: u64 = lane.prims.iter().filter(|p| p.send).map(|p| p.bytes).sum();
        for &c in &lane.outs {
            let cs = &conns[c as usize];
            if let Some((a, b)) = cs.nics {
                *load.entry((topo.server(cs.from), a, true)).or_default() += sent;
                *load.entry((topo.server(cs.to), b, false)).or_default() += sent;
            }
        }
    }
    load.into_values().max().unwrap_or(0)
}

/// A tree all_reduce (`runTreeSplit`, module [`tree`]): per channel, each
/// rank's part in chunks of one step or less; the root reduces what its
/// children send and sends the result straight back, every other rank
/// runs an up lane (children → reduce → parent) and a down lane (parent →
/// children) side by side.
fn plan_tree(
    topo: &Topo,
    knobs: &NcclKnobs,
    index: &BTreeMap<(u32, u32, u32), u32>,
    dt: DataType,
    count: u64,
    plan: &mut OpPlan,
) {
    let e = dt.size();
    let nc = channels_for(count * e, knobs);
    plan.channels = nc;
    let step = knobs.buffsize / u64::from(knobs.steps);
    let chunk_elts = (tree::chunk_bytes(step, count * e, nc, tree::depth(topo)) / e).max(1);
    let align = (16 / e).max(1);
    let per_channel = align_up(count.div_ceil(u64::from(nc)), align);
    for ch in 0..nc {
        let lo = (u64::from(ch) * per_channel).min(count);
        let part = (lo + per_channel).min(count) - lo;
        let mut chunks = Vec::new();
        let mut off = 0;
        while off < part {
            chunks.push(chunk_elts.min(part - off) * e);
            off += chunk_elts;
        }
        let t = TreeLinks::of(topo, ch, knobs.channels);
        let conn = |a: u32, b: u32| index[&(ch, a, b)];
        for rank in 0..topo.ranks {
            let kids = &t.down[rank as usize];
            let from_kids: Vec<u32> = kids.iter().map(|&k| conn(k, rank)).collect();
            let to_kids: Vec<u32> = kids.iter().map(|&k| conn(rank, k)).collect();
            // (in, out, reduces): the up lane and the root reduce the
            // children's data into their own.
            let lanes = match t.up[rank as usize] {
                None if kids.is_empty() => Vec::new(),
                None => vec![(from_kids, to_kids, true)],
                Some(p) => vec![
                    (from_kids, vec![conn(rank, p)], true),
                    (vec![conn(p, rank)], to_kids, false),
                ],
            };
            for (ins, outs, reduce) in lanes {
                let prims: Steps = chunks
                    .iter()
                    .map(|&bytes| Prim {
                        recv: !ins.is_empty(),
                        send: !outs.is_empty(),
                        bytes,
                        reduce: reduce && !ins.is_empty(),
                    })
                    .collect();
                for &c in &outs {
                    plan.msgs[c as usize] += prims.len() as u64;
                }
                plan.lanes.push(Lane {
                    rank,
                    ins,
                    outs,
                    prims,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(ranks: u32, gpus: u32) -> Topo {
        Topo {
            ranks,
            gpus,
            nics: 1,
            nic_per_gpu: false,
        }
    }

    fn knobs(channels: u32) -> NcclKnobs {
        NcclKnobs {
            channels,
            ..NcclKnobs::default()
        }
    }

    /// Messages `lane`'s rank sends and receives, with their bytes.
    fn sends(l: &Lane) -> Vec<u64> {
        l.prims.iter().filter(|p| p.send).map(|p| p.bytes).collect()
    }

    #[test]
    fn ring_all_reduce_4_ranks_4mib_2_channels() {
        let t = topo(4, 1);
        let k = knobs(2);
        let conns = connections(CollOp::AllReduce, &t, &k, 0);
        // 2 channels × 4 ring edges, all between servers.
        assert_eq!(conns.len(), 8);
        assert!(conns.iter().all(|c| c.nics.is_some() && c.window == 4));
        let count = (4 << 20) / 4;
        let p = plan_op(CollOp::AllReduce, &t, &k, &conns, DataType::Float, count, 0);
        assert_eq!(p.channels, 2);
        // Each channel holds 2 MiB: one loop of 4 × 2 MiB would be 8 MiB,
        // so the chunk shrinks to 2 MiB / 4 = 512 KiB, cut into two
        // 256 KiB slices. 2(n−1) = 6 transfers × 2 slices = 12 messages
        // of 256 KiB on every connection; 2n−1 = 7 steps × 2 slices = 14
        // prims per lane.
        assert_eq!(p.msgs, vec![12; 8]);
        for l in &p.lanes {
            assert_eq!(l.prims.len(), 14);
            assert_eq!(sends(l), vec![256 << 10; 12]);
            assert_eq!(l.prims.iter().filter(|p| p.recv).count(), 12);
            // The reduce-scatter half reduces: receives of k = 1..=3.
            assert_eq!(l.prims.iter().filter(|p| p.reduce).count(), 6);
        }
        // Bytes each rank sends: 2(n−1)/n × 4 MiB = 6 MiB.
        let per_rank: u64 = p.lanes.iter().filter(|l| l.rank == 0).flat_map(sends).sum();
        assert_eq!(per_rank, 6 << 20);
    }

    #[test]
    fn ring_all_reduce_large_uses_1mib_messages() {
        // 64 MiB on 4 ranks, 1 channel: loops of 4 × 2 MiB = 8 MiB → 8
        // loops × 6 transfers × 2 slices of 1 MiB (the largest message,
        // facts §2.1).
        let t = topo(4, 1);
        let k = knobs(1);
        let conns = connections(CollOp::AllReduce, &t, &k, 0);
        let p = plan_op(
            CollOp::AllReduce,
            &t,
            &k,
            &conns,
            DataType::Float,
            16 << 20,
            0,
        );
        assert_eq!(p.msgs, vec![96; 4]);
        assert!(p.lanes.iter().all(|l| sends(l) == vec![1 << 20; 96]));
    }

    #[test]
    fn a_receive_matches_the_send_before_it() {
        // Odd sizes: every connection's k-th receive carries the bytes of
        // the sender's k-th send, whatever the op.
        let tree = NcclKnobs {
            algo: Algo::Tree,
            ..knobs(3)
        };
        for (op, k) in CollOp::ALL
            .into_iter()
            .map(|o| (o, knobs(3)))
            .chain([(CollOp::AllReduce, tree)])
        {
            let t = topo(5, 2);
            let conns = connections(op, &t, &k, 2);
            let p = plan_op(op, &t, &k, &conns, DataType::Half, 1_234_567, 2);
            for (c, _) in conns.iter().enumerate() {
                let c = c as u32;
                let out: Vec<u64> = p
                    .lanes
                    .iter()
                    .filter(|l| l.outs.contains(&c))
                    .flat_map(sends)
                    .collect();
                let inn: Vec<u64> = p
                    .lanes
                    .iter()
                    .filter(|l| l.ins.contains(&c))
                    .flat_map(|l| l.prims.iter().filter(|p| p.recv).map(|p| p.bytes))
                    .collect();
                assert_eq!(out, inn, "{op:?} conn {c}");
                assert_eq!(out.len() as u64, p.msgs[c as usize]);
            }
        }
    }

    #[test]
    fn tree_all_reduce_4_servers_2_channels() {
        let t = topo(4, 1);
        let k = NcclKnobs {
            channels: 2,
            algo: Algo::Tree,
            ..NcclKnobs::default()
        };
        let conns = connections(CollOp::AllReduce, &t, &k, 0);
        // Two trees (0 → 2 → {1, 3}; 3 → 1 → {2, 0}), 3 parent-child
        // pairs each, a connection each way; a window of 8 one-step slots.
        assert_eq!(conns.len(), 12);
        assert!(conns.iter().all(|c| c.window == 8 && c.nics.is_some()));
        let p = plan_op(
            CollOp::AllReduce,
            &t,
            &k,
            &conns,
            DataType::Float,
            1 << 20,
            0,
        );
        // 4 MiB, 2 MiB per channel; depth 1 − 1 + log2 4 = 2: 512 KiB
        // gives 4 chunks per channel (< 16), 256 KiB 8, 128 KiB 16: 16
        // messages of 128 KiB on every connection.
        assert_eq!(p.msgs, vec![16; 12]);
        // Per tree: the root's one lane, two lanes for each of the others.
        assert_eq!(p.lanes.len(), 14);
        assert!(p.lanes.iter().all(|l| l.prims.len() == 16));
        let lanes = |r: u32| -> Vec<&Lane> { p.lanes.iter().filter(|l| l.rank == r).collect() };
        // Rank 0: tree 0's root (receives from 2, reduces, sends back),
        // then a leaf of tree 1 (sends its part up; receives the result).
        let r0 = lanes(0);
        assert_eq!(r0.len(), 3);
        assert_eq!((r0[0].ins.len(), r0[0].outs.len()), (1, 1));
        assert!(r0[0].prims.iter().all(|p| p.recv && p.send && p.reduce));
        assert!(r0[1].prims.iter().all(|p| !p.recv && p.send && !p.reduce));
        assert!(r0[2].prims.iter().all(|p| p.recv && !p.send));
        // Rank 2, inside tree 0: reduces its two children's data up, and
        // sends the result down to both.
        let r2 = lanes(2);
        assert_eq!((r2[0].ins.len(), r2[0].outs.len()), (2, 1));
        assert!(r2[0].prims.iter().all(|p| p.reduce));
        assert_eq!((r2[1].ins.len(), r2[1].outs.len()), (1, 2));
        // Ranks 2 and 1, inner nodes of one tree: 2 MiB up and 2 × 2 MiB
        // down in it, 2 MiB up as a leaf of the other; the roots 0 and 3:
        // 2 MiB down to their one child, 2 MiB up the other tree.
        let sent = |r: u32| -> u64 {
            lanes(r)
                .iter()
                .map(|l| l.outs.len() as u64 * sends(l).iter().sum::<u64>())
                .sum()
        };
        assert_eq!(
            [sent(0), sent(1), sent(2), sent(3)],
            [4 << 20, 8 << 20, 8 << 20, 4 << 20]
        );
        assert_eq!(busiest_nic_bytes(&p, &conns, &t), 8 << 20);
    }

    #[test]
    fn small_ops_use_fewer_channels() {
        let k = knobs(4);
        // 4 × 512 × 64 = 128 KiB: below it, 3; below 64 KiB, 1.
        assert_eq!(channels_for(128 << 10, &k), 4);
        assert_eq!(channels_for((128 << 10) - 1, &k), 3);
        assert_eq!(channels_for(1000, &k), 1);
    }

    #[test]
    fn slices_are_nccl_prims() {
        let slice = (1 << 20) / 4; // 1 MiB of floats
        assert_eq!(slices(524_288, slice, 2), vec![262_144, 262_144]);
        // Small chunk: at least 1/32 slice = 8192 elements, so one slice.
        assert_eq!(slices(5000, slice, 2), vec![5000]);
        assert_eq!(slices(0, slice, 2), vec![0]);
        // 20000 elements: halves of 10000 → but at least 8192: 10000 + 10000.
        assert_eq!(slices(20000, slice, 2), vec![10000, 10000]);
    }

    #[test]
    fn rings_stay_on_the_channels_nic() {
        // 2 servers × 2 GPUs, one NIC per GPU: channel 1 enters each
        // server at GPU 1 and leaves from GPU 0, both through NIC 1.
        let t = Topo {
            ranks: 4,
            gpus: 2,
            nics: 2,
            nic_per_gpu: true,
        };
        assert_eq!(t.ring(0), vec![0, 1, 2, 3]);
        assert_eq!(t.ring(1), vec![1, 0, 3, 2]);
        let conns = connections(CollOp::AllReduce, &t, &knobs(2), 0);
        let net: Vec<_> = conns
            .iter()
            .filter_map(|c| c.nics.map(|n| (c.channel, c.from, c.to, n)))
            .collect();
        assert_eq!(
            net,
            vec![
                (0, 1, 2, (0, 0)),
                (0, 3, 0, (0, 0)),
                (1, 0, 3, (1, 1)),
                (1, 2, 1, (1, 1))
            ]
        );
    }

    #[test]
    fn chains_and_p2p() {
        let t = topo(4, 1);
        let k = knobs(1);
        // Broadcast from rank 2: 2 → 3 → 0 → 1, 3 connections, window 8;
        // 1 MiB in 512 KiB steps = 2 messages each.
        let conns = connections(CollOp::Broadcast, &t, &k, 2);
        let e: Vec<_> = conns.iter().map(|c| (c.from, c.to, c.window)).collect();
        assert_eq!(e, vec![(2, 3, 8), (3, 0, 8), (0, 1, 8)]);
        let p = plan_op(
            CollOp::Broadcast,
            &t,
            &k,
            &conns,
            DataType::Int8,
            1 << 20,
            2,
        );
        assert_eq!(p.msgs, vec![2, 2, 2]);
        // sendrecv of 300 KiB: under 8 steps of 128 KiB, so 64 KiB messages.
        let conns = connections(CollOp::SendRecv, &t, &k, 0);
        let p = plan_op(
            CollOp::SendRecv,
            &t,
            &k,
            &conns,
            DataType::Int8,
            300 << 10,
            0,
        );
        assert_eq!(p.msgs, vec![5; 4]);
        assert_eq!(
            sends(&p.lanes[0]),
            vec![64 << 10, 64 << 10, 64 << 10, 64 << 10, 44 << 10]
        );
        // alltoall: n(n−1) connections.
        assert_eq!(connections(CollOp::AllToAll, &t, &k, 0).len(), 12);
    }
}
