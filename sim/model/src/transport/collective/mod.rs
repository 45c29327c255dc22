//! # NCCL collectives as nccl-tests runs them, over RC QPs
//!
//! A [`CollectiveSpec`] is one `*_perf` run of nccl-tests (`all_reduce_perf
//! -b 8 -e 128M -f 2 ...`): for each size, `warmup_iters` then `iters`
//! operations launched back to back on every rank. [`plan`] turns one
//! operation into what every GPU does, step by step, on each channel
//! (NCCL's device loop); [`Collective`] runs those steps over the network:
//! every inter-server step is one RDMA message on an RC QP of the world,
//! sent only once the receiver granted the buffer slot with its 64-byte
//! clear-to-send, so the collective's time *emerges* from the packets.
//!
//! ```text
//!   rank r (GPU)                 proxy r ─ QP pair ─ proxy r+1           rank r+1
//!   prim k: recv? reduce, send ─▶ fill slot ──────────────────────────▶  ...
//!                                 wait CTS ◀── RDMA WRITE 64 B ─────── post recv, CTS
//!                                 RDMA_WRITE_WITH_IMM (one slice) ───▶ data in, consumed by prim
//!   same server: an NVLink copy (bandwidth + latency, no fabric)
//! ```
//!
//! What is modelled, and where each number comes from. [V] = read in
//! NCCL or nccl-tests source (`/work/shared/reference/nccl-facts.md`, the
//! section named); [U] = inferred or a default of ours.
//!
//! * Ring for all_reduce (2(n−1) transfers per loop), all_gather and
//!   reduce_scatter (n−1), broadcast and reduce (a chain from / to the
//!   root) [V facts §2.1, §2.2 "Broadcast/Reduce: ring only"].
//! * Tree for all_reduce (`NCCL_ALGO=Tree`, module [`tree`]): NCCL's double
//!   binary tree over the servers, a chain inside each, the balanced
//!   pattern's GPUs facing parent and children, channels split between the
//!   two trees, `runTreeSplit`'s concurrent up and down, one-step chunks
//!   halved for the tree's depth [V facts §2.2]. NCCL's tuner (which picks
//!   tree or ring per size) is not modelled: a list allowing both runs Ring.
//! * Simple protocol only: step = `NCCL_BUFFSIZE / NCCL_STEPS` (4 MiB / 8);
//!   ring all_reduce/all_gather/reduce_scatter chunk = 4 steps, slice = 2
//!   steps, 2 slices per chunk, one RDMA message per slice [V §2.1];
//!   broadcast/reduce chunk = slice = 1 step [U: `BROADCAST_CHUNKSTEPS` /
//!   `REDUCE_CHUNKSTEPS` are 1 in collectives.h as we remember it]. A slice
//!   is at least 1/32 of its nominal size and the two slices of a short
//!   chunk roughly equal (`prims_simple.h`) [V §2.1].
//! * A connection's window: `NCCL_STEPS / slice_steps` messages (4 for the
//!   ring, 8 for chains and p2p): the receiver keeps that many CTSs out, the
//!   sender's GPU that many slots filled and not completed [V §3].
//! * Channels: each has its own ring neighbours and connections; the count
//!   shrinks for small operations while `bytes < nc × nthreads × 64`
//!   [V §3]; `nthreads` = 512 [U]. A channel's data is a contiguous part
//!   of the buffer, split evenly in 16-byte units [U: the exact
//!   `ncclCollCbdPart` grains are not modelled].
//! * Ring order: servers in order; on each server channel `c` enters at
//!   GPU `c mod g` and leaves from the GPU before it, through the NIC the
//!   entry GPU owns, so a ring leaves a server on the NIC it entered by
//!   (NCCL's `NET n → GPU a → … → GPU x → NET n`, the PXN hop to the NIC's
//!   GPU not modelled) [V §2.1, §6].
//! * p2p (sendrecv, alltoall): one connection per ordered peer pair [U:
//!   NCCL spreads a peer over several channels]; messages of
//!   `NCCL_P2P_NET_CHUNKSIZE` = 128 KiB, /4 below one step, /2 below 8
//!   [V §2.4]; a window of 8.
//! * QPs: `NCCL_IB_QPS_PER_CONNECTION` RC QPs per connection; a message
//!   goes whole on QP `m mod nqps` (`NCCL_IB_SPLIT_DATA_ON_QPS=0`), or is
//!   split over all of them in 128-byte-aligned shares (`=1`); the CTS is
//!   an RDMA WRITE of 64 B on QP 0 in the reverse direction, after a
//!   receive WQE per data QP the message uses [V §4.3].
//! * A failed work completion stops the collective (the proxy stops
//!   progressing, nccl-tests aborts) with NCCL's warning text [V §5],
//!   naming the peer by its out-of-band socket `IP<port>` when the set-up
//!   ran on the wire.
//! * Connection set-up (`connect = "socket"`, [`crate::world::nccl_connect`]):
//!   connections are made at the first operation (`NCCL_RUNTIME_CONNECT=1`,
//!   §2.5) and `ncclTransportP2pSetup` returns only when every one is up
//!   (its `while (!allChannelsConnected)` loop, `src/transport.cc`) [V], so
//!   the first operation's lanes start when the last set-up is done, its
//!   time counted from its launch ([`Collective::setup_done`]).
//! * Not modelled: LL/LL128, the proxy's polling and the GPU's launch
//!   overheads, GDR flush, the bootstrap, in-place runs (the
//!   network does the same work; only the out-of-place group is run and
//!   printed), data validation (`#wrong` is `N/A`, as with `-c 0`).
//! * nccl-tests: sizes from `minbytes` to `maxbytes` multiplying by
//!   `stepfactor` (or adding `stepbytes`); warm-up at the largest then the
//!   smallest size [U: TimeTest as forks of nccl-tests show it]; each
//!   size's time is the mean over ranks of (its last completion − the
//!   batch's start) / iters [V §1, `-a 1`].

mod engine;
#[cfg(test)]
mod engine_tests;
pub mod plan;
mod ready;
pub mod steps;
mod topo;
pub mod tree;

pub use engine::{Collective, CollectiveResult, NetConnInfo};
pub use plan::{ConnSpec, Lane, OpPlan, Prim, Topo};
pub use steps::Steps;
pub use tree::TreeLinks;

use crate::time::{Ps, Rate};

/// The collective an nccl-tests binary runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CollOp {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    SendRecv,
}

impl CollOp {
    pub const ALL: [CollOp; 7] = [
        CollOp::AllReduce,
        CollOp::AllGather,
        CollOp::ReduceScatter,
        CollOp::AllToAll,
        CollOp::Broadcast,
        CollOp::Reduce,
        CollOp::SendRecv,
    ];

    /// The nccl-tests name (`all_reduce` of `all_reduce_perf`).
    pub fn name(self) -> &'static str {
        match self {
            CollOp::AllReduce => "all_reduce",
            CollOp::AllGather => "all_gather",
            CollOp::ReduceScatter => "reduce_scatter",
            CollOp::AllToAll => "alltoall",
            CollOp::Broadcast => "broadcast",
            CollOp::Reduce => "reduce",
            CollOp::SendRecv => "sendrecv",
        }
    }

    pub fn from_name(s: &str) -> Option<CollOp> {
        let s = s.strip_suffix("_perf").unwrap_or(s);
        CollOp::ALL.into_iter().find(|o| o.name() == s)
    }

    /// busbw = algbw × this (nccl-tests' `<Coll>GetBw`, facts §1).
    pub fn bus_factor(self, n: u32) -> f64 {
        let n = f64::from(n);
        match self {
            CollOp::AllReduce => 2.0 * (n - 1.0) / n,
            CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll => (n - 1.0) / n,
            CollOp::Broadcast | CollOp::Reduce | CollOp::SendRecv => 1.0,
        }
    }

    /// Whether it reduces (the table's `redop` column is `sum`, else `none`).
    pub fn reduces(self) -> bool {
        matches!(
            self,
            CollOp::AllReduce | CollOp::ReduceScatter | CollOp::Reduce
        )
    }

    /// Whether it has a root (the table's `root` column, else −1).
    pub fn rooted(self) -> bool {
        matches!(self, CollOp::Broadcast | CollOp::Reduce)
    }

    /// Whether the command line's size is the whole buffer and `count`
    /// is per rank (all_gather, reduce_scatter, alltoall).
    pub fn count_per_rank(self) -> bool {
        matches!(
            self,
            CollOp::AllGather | CollOp::ReduceScatter | CollOp::AllToAll
        )
    }

    /// Runs as point-to-point sends rather than a ring.
    pub fn p2p(self) -> bool {
        matches!(self, CollOp::AllToAll | CollOp::SendRecv)
    }
}

/// How NCCL moves a (non-p2p) collective between ranks (`NCCL_ALGO`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Algo {
    /// Rings: every algorithm's fallback, the only one for all_gather,
    /// reduce_scatter, broadcast and reduce here (facts §2.2).
    #[default]
    Ring,
    /// The double binary tree over servers with a chain inside each, for
    /// all_reduce (facts §2.2).
    Tree,
}

impl Algo {
    /// The name in summary.json and collectives.csv.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Tree => "tree",
        }
    }
}

/// nccl-tests' `-d` datatypes and their sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Int8,
    Uint8,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Half,
    Float,
    Double,
    Bfloat16,
    F8e4m3,
    F8e5m2,
}

impl DataType {
    pub const ALL: [DataType; 12] = [
        DataType::Int8,
        DataType::Uint8,
        DataType::Int32,
        DataType::Uint32,
        DataType::Int64,
        DataType::Uint64,
        DataType::Half,
        DataType::Float,
        DataType::Double,
        DataType::Bfloat16,
        DataType::F8e4m3,
        DataType::F8e5m2,
    ];

    /// The name nccl-tests takes with `-d` and prints in the `type` column.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Int8 => "int8",
            DataType::Uint8 => "uint8",
            DataType::Int32 => "int32",
            DataType::Uint32 => "uint32",
            DataType::Int64 => "int64",
            DataType::Uint64 => "uint64",
            DataType::Half => "half",
            DataType::Float => "float",
            DataType::Double => "double",
            DataType::Bfloat16 => "bfloat16",
            DataType::F8e4m3 => "f8e4m3",
            DataType::F8e5m2 => "f8e5m2",
        }
    }

    pub fn from_name(s: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|d| d.name() == s)
    }

    pub fn size(self) -> u64 {
        match self {
            DataType::Int8 | DataType::Uint8 | DataType::F8e4m3 | DataType::F8e5m2 => 1,
            DataType::Half | DataType::Bfloat16 => 2,
            DataType::Int32 | DataType::Uint32 | DataType::Float => 4,
            DataType::Int64 | DataType::Uint64 | DataType::Double => 8,
        }
    }
}

/// What nccl-tests makes of a command-line size: the `count` it passes to
/// NCCL, the `size` it prints (the larger of a rank's send and receive
/// buffers) and the bytes algbw divides (facts §1, `*GetCollByteCount`,
/// `*GetBw`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestSize {
    pub count: u64,
    pub size_bytes: u64,
    pub algbw_bytes: u64,
}

/// nccl-tests' count and size for `size` bytes of `dt` on `n` ranks: for
/// the per-rank collectives the total count is divided by `n` and rounded
/// down to a 16-byte multiple.
pub fn test_size(op: CollOp, size: u64, dt: DataType, n: u32) -> TestSize {
    let e = dt.size();
    let total = size / e;
    if op.count_per_rank() {
        let align = (16 / e).max(1);
        let per = total / u64::from(n) / align * align;
        let bytes = per * e * u64::from(n);
        TestSize {
            count: per,
            size_bytes: bytes,
            algbw_bytes: bytes,
        }
    } else {
        TestSize {
            count: total,
            size_bytes: total * e,
            algbw_bytes: total * e,
        }
    }
}

/// The sizes nccl-tests walks: `minbytes`, then × `stepfactor` (> 1) or
/// + `stepbytes`, while at most `maxbytes`.
pub fn test_sizes(minbytes: u64, maxbytes: u64, step: SizeStep) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = minbytes;
    while s <= maxbytes {
        v.push(s);
        let next = match step {
            SizeStep::Factor(f) => s.saturating_mul(f),
            SizeStep::Bytes(b) => s.saturating_add(b),
        };
        if next <= s {
            break;
        }
        s = next;
    }
    v
}

/// `-f` or `-i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeStep {
    Factor(u64),
    Bytes(u64),
}

/// NCCL's knobs this model reads (the environment variables of the same
/// names; defaults are NCCL 2.30's, facts §4.5, §2.3, §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NcclKnobs {
    /// `NCCL_BUFFSIZE` (4 MiB).
    pub buffsize: u64,
    /// `NCCL_STEPS`: a compile-time constant of NCCL (8).
    pub steps: u32,
    /// Ring channels (after `NCCL_MIN/MAX_NCHANNELS`).
    pub channels: u32,
    /// `NCCL_NTHREADS` (512 [U]) for the small-op channel rule.
    pub nthreads: u32,
    /// `NCCL_IB_QPS_PER_CONNECTION` (1).
    pub qps_per_conn: u32,
    /// `NCCL_IB_SPLIT_DATA_ON_QPS` (0).
    pub split_data_on_qps: bool,
    /// `NCCL_P2P_NET_CHUNKSIZE` (128 KiB).
    pub p2p_net_chunk: u64,
    /// `NCCL_P2P_NVL_CHUNKSIZE` (512 KiB).
    pub p2p_nvl_chunk: u64,
    /// `NCCL_ALGO`'s choice for all_reduce (Ring).
    pub algo: Algo,
}

impl Default for NcclKnobs {
    fn default() -> NcclKnobs {
        NcclKnobs {
            buffsize: 4 << 20,
            steps: 8,
            channels: 2,
            nthreads: 512,
            qps_per_conn: 1,
            split_data_on_qps: false,
            p2p_net_chunk: 128 << 10,
            p2p_nvl_chunk: 512 << 10,
            algo: Algo::Ring,
        }
    }
}

/// The GPUs' side of the model: NVLink between GPUs of one server, and the
/// cost of reducing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuModel {
    /// A GPU's NVLink egress, shared by its channels.
    pub nvlink_rate: Rate,
    /// From a step's last byte written to the peer seeing it.
    pub nvlink_latency: Ps,
    /// Picoseconds per byte a reducing step costs before it is sent (0).
    pub reduce_ps_per_kib: u64,
}

/// One `*_perf` run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveSpec {
    pub op: CollOp,
    pub datatype: DataType,
    /// `-r`.
    pub root: u32,
    /// Command-line sizes, in order.
    pub sizes: Vec<u64>,
    /// `-n`, `-w`.
    pub iters: u32,
    pub warmup_iters: u32,
    pub knobs: NcclKnobs,
    pub gpu: GpuModel,
    /// When the first operation is launched.
    pub start: Ps,
    /// The bus bandwidth the node-boundary links allow at most (line
    /// rate × payload efficiency × NICs used; reported as `bound_GBps`).
    pub bound: Rate,
}

/// The `bound_GBps` of a size: busbw a perfect ring would reach when every
/// node-boundary link carries payload at `link` × `efficiency`.
pub fn bound_gbps(link: Rate, efficiency: f64) -> f64 {
    link.bps() as f64 / 8.0 * efficiency / 1e9
}

/// Payload bytes over wire bytes of a full RoCEv2 packet at `pmtu`:
/// BTH 12 + RETH/ImmDt counted once per message is ignored; per packet
/// 12 (BTH) + 4 (ICRC) + 8 (UDP) + 20 (IPv4) + 14 (Ethernet) + 4 (FCS) +
/// 20 (preamble, IFG) = 82 bytes beside the payload.
pub fn payload_efficiency(pmtu: u32) -> f64 {
    f64::from(pmtu) / f64::from(pmtu + 82)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_factors_are_nccl_tests() {
        assert_eq!(CollOp::AllReduce.bus_factor(4), 1.5);
        assert_eq!(CollOp::AllReduce.bus_factor(8), 1.75);
        for op in [CollOp::AllGather, CollOp::ReduceScatter, CollOp::AllToAll] {
            assert_eq!(op.bus_factor(4), 0.75);
        }
        for op in [CollOp::Broadcast, CollOp::Reduce, CollOp::SendRecv] {
            assert_eq!(op.bus_factor(16), 1.0);
        }
    }

    #[test]
    fn counts_follow_nccl_tests_rounding() {
        // all_reduce: count = size / 4, printed size the same.
        let t = test_size(CollOp::AllReduce, 1 << 20, DataType::Float, 4);
        assert_eq!((t.count, t.size_bytes), (262_144, 1 << 20));
        // all_gather of 1000 B on 3 ranks, float: 250 / 3 = 83 elements,
        // down to a multiple of 4 (16 B) = 80; printed 80 × 4 × 3 = 960.
        let t = test_size(CollOp::AllGather, 1000, DataType::Float, 3);
        assert_eq!((t.count, t.size_bytes, t.algbw_bytes), (80, 960, 960));
        // int8: 16 elements per 16 bytes.
        let t = test_size(CollOp::AllToAll, 1000, DataType::Int8, 3);
        assert_eq!((t.count, t.size_bytes), (320, 960));
        // double: 2 per 16 B; 100 B = 12 elements / 4 ranks = 3 → 2.
        let t = test_size(CollOp::ReduceScatter, 100, DataType::Double, 4);
        assert_eq!((t.count, t.size_bytes), (2, 64));
    }

    #[test]
    fn sizes_walk_like_the_flags() {
        assert_eq!(test_sizes(8, 64, SizeStep::Factor(2)), vec![8, 16, 32, 64]);
        assert_eq!(test_sizes(8, 100, SizeStep::Factor(2)), vec![8, 16, 32, 64]);
        assert_eq!(test_sizes(1, 3, SizeStep::Bytes(1)), vec![1, 2, 3]);
        assert_eq!(test_sizes(0, 0, SizeStep::Factor(2)), vec![0]);
    }

    #[test]
    fn names_round_trip() {
        for op in CollOp::ALL {
            assert_eq!(CollOp::from_name(op.name()), Some(op));
        }
        assert_eq!(
            CollOp::from_name("all_reduce_perf"),
            Some(CollOp::AllReduce)
        );
        for d in DataType::ALL {
            assert_eq!(DataType::from_name(d.name()), Some(d));
        }
        assert_eq!(DataType::Bfloat16.size(), 2);
    }

    #[test]
    fn bound_is_payload_share_of_the_line() {
        // 100 Gb/s at MTU 4096: 12.5 GB/s × 4096/4178.
        let b = bound_gbps(Rate::gbps(100), payload_efficiency(4096));
        assert!((b - 12.254_667).abs() < 1e-5, "{b}");
    }
}
