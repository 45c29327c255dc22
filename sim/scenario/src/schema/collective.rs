//! `[[collective]]`: an nccl-tests run (`all_reduce_perf -b 8 -e 128M -f 2`)
//! across servers, with NCCL's environment in `[collective.env]`. Keys
//! mirror the flags; `op` and `datatype` are checked by the builder so a
//! typo gets a "did you mean".

use std::collections::BTreeMap;

use serde::Deserialize;

use super::scalars::{Bytes, Dur, RateQ, zero_dur};
use super::workload::Connect;

/// An environment value as a user pastes it: `"mlx5_0,mlx5_1"` or `4`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum EnvValue {
    Int(i64),
    Str(String),
}

impl EnvValue {
    pub fn text(&self) -> String {
        match self {
            EnvValue::Int(i) => i.to_string(),
            EnvValue::Str(s) => s.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveCfg {
    pub name: Option<String>,
    /// The nccl-tests binary: `all_reduce`, `all_gather`, `reduce_scatter`,
    /// `alltoall`, `broadcast`, `reduce`, `sendrecv` (`_perf` may follow).
    pub op: String,
    /// The servers, in rank order (hosts of the scenario).
    pub servers: Vec<String>,
    /// GPUs (ranks) per server (`-g` × processes per node); default 1.
    #[serde(default = "one")]
    pub gpus_per_server: u32,
    /// Ranks in all (mpirun `-np`); default servers × gpus_per_server.
    pub ranks: Option<u32>,
    /// `per_gpu` (GPU i owns NIC i) or `shared` (the GPUs share the
    /// NICs); default per_gpu when a server has as many NICs as GPUs.
    pub gpu_nic: Option<String>,
    /// `-b`, `-e` (default 32M each, as nccl-tests).
    pub minbytes: Option<Bytes>,
    pub maxbytes: Option<Bytes>,
    /// `-f`: multiply the size by this; else `-i` `stepbytes` (1M).
    pub stepfactor: Option<u64>,
    pub stepbytes: Option<Bytes>,
    /// `-n` (20), `-w` (1).
    pub iters: Option<u32>,
    pub warmup_iters: Option<u32>,
    /// `-d` (float).
    pub datatype: Option<String>,
    /// `-r` (0).
    #[serde(default)]
    pub root: u32,
    #[serde(default = "zero_dur")]
    pub start: Dur,
    /// How QPs are connected: `none` (default: no set-up frames) or
    /// `socket` (NCCL's out-of-band TCP exchange per network connection,
    /// before the first operation runs); `rdma_cm` is refused.
    #[serde(default)]
    pub connect: Connect,
    /// A GPU's NVLink egress, shared by its channels (default 2960 Gbps,
    /// 370 GB/s: an H100's NVLink minus protocol overhead, facts §7).
    pub nvlink_bw: Option<RateQ>,
    /// NVLink step latency (default 1us).
    pub nvlink_latency: Option<Dur>,
    /// GPU time to reduce 1 KiB before sending it on (default 0).
    pub reduce_time_per_kib: Option<Dur>,
    /// NCCL environment variables (`NCCL_IB_HCA = "mlx5_0"`).
    #[serde(default)]
    pub env: BTreeMap<String, EnvValue>,
}

fn one() -> u32 {
    1
}
