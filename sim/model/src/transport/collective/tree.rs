//! NCCL's tree for all_reduce: a double binary tree over the servers, a
//! chain over the GPUs inside each (facts §2.2, read in NCCL's
//! `src/graph/trees.cc` and `connect.cc`).
//!
//! Tree 0 numbers the servers as a binary tree in which leaves and inner
//! nodes alternate, rooted at server 0; tree 1 is its mirror (an even
//! number of servers) or the same tree shifted by one (odd), so that a
//! server that is an inner node in one tree is a leaf in the other and
//! every NIC carries about the same. Channels `0 .. C/2` run tree 0,
//! channels `C/2 .. C` tree 1 (NCCL duplicates its channels for the second
//! tree). 6 servers, tree 0 and tree 1:
//!
//! ```text
//!   0 ── 4            5 ── 1
//!       ╱ ╲               ╱ ╲
//!      2   5             3   0
//!     ╱ ╲               ╱ ╲
//!    1   3             4   2
//! ```
//!
//! Inside a server the channel's GPUs form a chain `g0 → g1 → … → g(k−1)`
//! (the ring's order for the channel). With NCCL's default "balanced"
//! pattern, `g0` talks to the parent server and to child 1, `g1` to child
//! 0; with one GPU per server (pattern "tree") `g0` does all three. Every
//! network hop of a channel goes through the channel's NIC ("trees are
//! symmetric": the same NIC in and out, search.cc).
//!
//! All-reduce runs as `runTreeSplit` (all_reduce.h): on every rank but the
//! root, one group of threads receives from the children, reduces and
//! sends up, while the other receives from the parent and sends down, both
//! chunk by chunk; the root receives, reduces and sends straight back
//! down. Each chunk is one step of `NCCL_BUFFSIZE / 8` or less: NCCL
//! halves it while the operation has too few chunks per channel for the
//! tree's depth (`calcCollChunking` / `computeColl` in enqueue.cc).

use super::topo::Topo;

/// A node's place in one binary tree: parent, children, and whether it is
/// its parent's child 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BtreeNode {
    pub up: Option<u32>,
    pub down: [Option<u32>; 2],
    pub child_type: u8,
}

/// `ncclGetBtree(n, r)`: rank `r`'s place in NCCL's binary tree of `n`
/// nodes rooted at 0.
pub fn btree(n: u32, r: u32) -> BtreeNode {
    let (n, r) = (i64::from(n), i64::from(r));
    let some = |x: i64| (x >= 0).then_some(x as u32);
    let mut bit = 1i64;
    while bit < n {
        if bit & r != 0 {
            break;
        }
        bit <<= 1;
    }
    if r == 0 {
        // Its one child is above it, so child 1.
        return BtreeNode {
            up: None,
            down: [None, if n > 1 { some(bit >> 1) } else { None }],
            child_type: 0,
        };
    }
    let mut up = (r ^ bit) | (bit << 1);
    if up >= n {
        up = r ^ bit;
    }
    let mut lowbit = bit >> 1;
    let d0 = if lowbit == 0 { -1 } else { r - lowbit };
    let mut d1 = if lowbit == 0 { -1 } else { r + lowbit };
    while d1 >= n {
        d1 = if lowbit == 0 { -1 } else { r + lowbit };
        lowbit >>= 1;
    }
    BtreeNode {
        up: some(up),
        down: [some(d0), some(d1)],
        child_type: u8::from(r >= up),
    }
}

/// `ncclGetDtree(n, r)`: rank `r` in tree 0 and in tree 1.
pub fn dtree(n: u32, r: u32) -> [BtreeNode; 2] {
    let t0 = btree(n, r);
    let map = |b: BtreeNode, f: &dyn Fn(u32) -> u32| BtreeNode {
        up: b.up.map(f),
        down: [b.down[0].map(f), b.down[1].map(f)],
        child_type: b.child_type,
    };
    let t1 = if n % 2 == 1 {
        map(btree(n, (r + n - 1) % n), &|x| (x + 1) % n)
    } else {
        map(btree(n, n - 1 - r), &|x| n - 1 - x)
    };
    [t0, t1]
}

/// One channel's tree over every rank: each rank's parent and children
/// (`ncclTree.up` / `.down` after `connectTrees`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeLinks {
    pub up: Vec<Option<u32>>,
    pub down: Vec<Vec<u32>>,
    /// The server NIC every network hop of the channel uses.
    pub nic: u32,
}

impl TreeLinks {
    /// Channel `ch` of `channels`: tree 0 for the first half, tree 1 for
    /// the second, the chain inside a server in the order of ring
    /// `ch mod (channels / 2)`.
    pub fn of(topo: &Topo, ch: u32, channels: u32) -> TreeLinks {
        let base = (channels / 2).max(1);
        let which = usize::from(ch >= base && channels > 1);
        let intra_ch = ch % base;
        let n = topo.ranks as usize;
        let mut up = vec![None; n];
        let mut down = vec![Vec::new(); n];
        let servers = topo.servers();
        // Per server: the chain, and who faces the parent (index 0) and
        // the two children (balanced: 1 and 0; one GPU: 0 and 0).
        let ring = topo.ring(intra_ch);
        let chain = |s: u32| -> &[u32] {
            let lo = (s * topo.gpus) as usize;
            let hi = (lo + topo.gpus as usize).min(n);
            &ring[lo..hi]
        };
        let to_child = |s: u32, t: usize| -> u32 {
            let c = chain(s);
            if t == 0 && c.len() > 1 { c[1] } else { c[0] }
        };
        for s in 0..servers {
            let c = chain(s);
            for w in c.windows(2) {
                up[w[1] as usize] = Some(w[0]);
                down[w[0] as usize].push(w[1]);
            }
        }
        for s in 0..servers {
            let node = dtree(servers, s)[which];
            if let Some(p) = node.up {
                up[chain(s)[0] as usize] = Some(to_child(p, usize::from(node.child_type)));
            }
            for (t, d) in node.down.iter().enumerate() {
                if let Some(d) = d {
                    down[to_child(s, t) as usize].push(chain(*d)[0]);
                }
            }
        }
        TreeLinks {
            up,
            down,
            nic: topo.ring_nic(intra_ch),
        }
    }
}

/// The tree's depth as NCCL estimates it: `ranks/servers − 1 +
/// log2(servers)` (connectTrees).
pub fn depth(topo: &Topo) -> u64 {
    let s = topo.servers().max(1);
    u64::from(topo.ranks / s - 1 + (31 - s.leading_zeros()))
}

/// The chunk (bytes) of a tree all_reduce of `bytes` on `channels`: a step,
/// halved while the channels get fewer than 8, 4, 1 chunks per level of
/// the tree, down to 128, 64, 32 KiB.
pub fn chunk_bytes(step: u64, bytes: u64, channels: u32, depth: u64) -> u64 {
    let mut c = step;
    let per = |c: u64| bytes / (u64::from(channels) * c);
    for (levels, floor) in [(8, 131_072), (4, 65_536), (1, 32_768)] {
        while per(c) < depth * levels && c > floor {
            c /= 2;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(n: u32, r: u32) -> (Option<u32>, [Option<u32>; 2]) {
        let b = btree(n, r);
        (b.up, b.down)
    }

    /// The drawing in NCCL's trees.cc: 14 ranks, root 0 → 8, 8 → 4, 12;
    /// 12 → 10, 13 (13 is out of bounds for 12's child 14); 13 → 12.
    #[test]
    fn btree_matches_nccls_drawing() {
        assert_eq!(links(14, 0), (None, [None, Some(8)]));
        assert_eq!(links(14, 8), (Some(0), [Some(4), Some(12)]));
        assert_eq!(links(14, 12), (Some(8), [Some(10), Some(13)]));
        assert_eq!(links(14, 13), (Some(12), [None, None]));
        assert_eq!(links(14, 2), (Some(4), [Some(1), Some(3)]));
        assert_eq!(links(14, 1), (Some(2), [None, None]));
        assert_eq!(links(1, 0), (None, [None, None]));
        // 4 is 8's first child, 12 its second.
        assert_eq!(btree(14, 4).child_type, 0);
        assert_eq!(btree(14, 12).child_type, 1);
    }

    /// trees.cc's second drawing: 12 ranks mirror (root 11 → 3, 3 → 1, 7);
    /// 13 ranks shift by one (root 1 → 9, 9 → 5, 0).
    #[test]
    fn second_tree_mirrors_or_shifts() {
        let t = |n, r| {
            let b = dtree(n, r)[1];
            (b.up, b.down)
        };
        assert_eq!(t(12, 11), (None, [None, Some(3)]));
        assert_eq!(t(12, 3), (Some(11), [Some(7), Some(1)]));
        assert_eq!(t(12, 0), (Some(1), [None, None]));
        assert_eq!(t(13, 1), (None, [None, Some(9)]));
        assert_eq!(t(13, 9), (Some(1), [Some(5), Some(0)]));
        assert_eq!(t(13, 0), (Some(9), [Some(11), None]));
    }

    /// Every rank but one root has a parent, and parent and child agree,
    /// for every size and both trees.
    #[test]
    fn trees_are_trees() {
        for n in 1..40 {
            for which in 0..2 {
                let mut roots = 0;
                for r in 0..n {
                    let b = dtree(n, r)[which];
                    match b.up {
                        None => roots += 1,
                        Some(p) => {
                            let pd = dtree(n, p)[which].down;
                            assert_eq!(pd[usize::from(b.child_type)], Some(r), "n {n} r {r}");
                        }
                    }
                    for d in b.down.into_iter().flatten() {
                        assert_eq!(dtree(n, d)[which].up, Some(r));
                    }
                }
                assert_eq!(roots, 1);
            }
        }
    }

    #[test]
    fn links_over_servers_and_chains() {
        // 4 servers × 2 GPUs, one NIC per GPU, 4 channels (2 per tree).
        let topo = Topo {
            ranks: 8,
            gpus: 2,
            nics: 2,
            nic_per_gpu: true,
        };
        // Channel 0, tree 0 over servers: 0 → 2, 2 → 1, 3. Chains 0→1,
        // 2→3, 4→5, 6→7; balanced: child 0 on the second GPU, child 1
        // and the parent on the first.
        let t = TreeLinks::of(&topo, 0, 4);
        assert_eq!(t.nic, 0);
        assert_eq!(
            t.up,
            vec![
                None,
                Some(0),
                Some(5),
                Some(2),
                Some(0),
                Some(4),
                Some(4),
                Some(6)
            ]
        );
        assert_eq!(t.down[0], vec![1, 4]);
        assert_eq!(t.down[4], vec![5, 6]);
        assert_eq!(t.down[5], vec![2]);
        // Channel 3: tree 1 (mirror: root server 3 → 1, 1 → 2, 0), the
        // chains of ring 1 (GPU 1 first), NIC 1.
        let t = TreeLinks::of(&topo, 3, 4);
        assert_eq!(t.nic, 1);
        // Server 3's first GPU (7) is the root; server 1 is its child 1,
        // so faces 7; server 1's children: 2 (child 0, on its second GPU,
        // 2) and 0 (child 1, on its first, 3).
        assert_eq!(t.up[7], None);
        assert_eq!(t.down[7], vec![6, 3]);
        assert_eq!(t.up[3], Some(7));
        assert_eq!(t.down[3], vec![2, 1]);
        assert_eq!(t.down[2], vec![5]);
        assert_eq!(t.up[1], Some(3));
        assert_eq!(t.up[5], Some(2));
    }

    #[test]
    fn chunk_halves_for_the_depth() {
        // 8 servers × 8 GPUs: depth 7 + 3 = 10.
        let topo = Topo {
            ranks: 64,
            gpus: 8,
            nics: 8,
            nic_per_gpu: true,
        };
        assert_eq!(depth(&topo), 10);
        let step = 512 << 10;
        // 1 GiB on 16 channels: 64 MiB each = 128 steps ≥ 80: a step.
        assert_eq!(chunk_bytes(step, 1 << 30, 16, 10), step);
        // 64 MiB: 4 MiB per channel: 8 steps < 80 → 256 KiB (16 < 80) →
        // 128 KiB (32 < 80, stop at 128 KiB); 32 ≥ 40? no → 64 KiB (64).
        assert_eq!(chunk_bytes(step, 64 << 20, 16, 10), 64 << 10);
        // 1 MiB: down to 32 KiB.
        assert_eq!(chunk_bytes(step, 1 << 20, 16, 10), 32 << 10);
    }
}
