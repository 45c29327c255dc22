//! `[[workload]]`: a perftest-style run between two hosts, or an explicit
//! list of messages (`[[workload.message]]`).

use serde::Deserialize;

use super::scalars::{Bytes, Dur, RateQ, zero_dur};
use rocesim_model::world::cm::CmAnswer;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Connect {
    #[default]
    None,
    Socket,
    RdmaCm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    IbWriteBw,
    IbSendBw,
    IbReadBw,
    Messages,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerbCfg {
    Write,
    WriteImm,
    Send,
    SendImm,
    Read,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageCfg {
    pub verb: VerbCfg,
    pub size: Bytes,
    /// QP index within the workload (default 0).
    #[serde(default)]
    pub qp: u32,
    /// Post time (default: at the workload's start, in order).
    pub at: Option<Dur>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCfg {
    pub name: Option<String>,
    pub tool: Tool,
    /// How the two ends exchange QPNs and PSNs before the QPs start:
    /// `none` (the default: no set-up frames, the QPs start at once, as
    /// every shipped scenario's outputs assume) or `socket` (perftest's
    /// default: a TCP connection to port 18515 through the kernel IP path
    /// and its key messages, on the wire before the first RoCE packet) or
    /// `rdma_cm` (perftest's `-R`: CM REQ/REP/RTU MADs on QP1 over RoCE).
    #[serde(default)]
    pub connect: Connect,
    /// With `rdma_cm`: the server accepts (`accept`, default), has no
    /// listener (`no_listener`: REJ) or rejects (`reject`: REJ).
    #[serde(default)]
    pub cm_answer: CmAnswer,
    /// `host` or `host.interface` (NIC or bond) that runs the client.
    pub client: String,
    /// `host` or `host.interface` the client connects to.
    pub server: String,
    /// Message size (`-s`).
    #[serde(default = "default_size")]
    pub size: Bytes,
    /// Number of QPs (`-q`).
    #[serde(default = "one_u32")]
    pub qps: u32,
    /// Iterations per QP (`-n`); default 1000 unless `duration` is given.
    pub iters: Option<u64>,
    /// Run for this long instead of a number of iterations (`-D`; wins over
    /// `iters`, as in perftest).
    pub duration: Option<Dur>,
    /// Send queue depth (`-t`).
    #[serde(default = "default_tx_depth")]
    pub tx_depth: u32,
    /// Traffic class byte (`--tclass`, NCCL_IB_TC): DSCP << 2 | ECN.
    #[serde(default)]
    pub tc: u8,
    /// Service level (priority under PCP trust).
    #[serde(default)]
    pub sl: u8,
    /// RoCE path MTU (`-m`); default: the largest the interfaces allow.
    pub mtu: Option<u32>,
    #[serde(default = "default_timeout")]
    pub timeout: u8,
    #[serde(default = "seven")]
    pub retry_cnt: u8,
    #[serde(default = "seven")]
    pub rnr_retry: u8,
    #[serde(default = "default_min_rnr")]
    pub min_rnr_timer: u8,
    /// GRH flow label (`--flow_label`); 0 = derive from the QPNs.
    #[serde(default)]
    pub flow_label: u32,
    #[serde(default = "zero_dur")]
    pub start: Dur,
    /// Pace each client QP to this rate on the wire (perftest
    /// `--rate_limit`, a NIC's per-QP rate limiter; DCQCN moves it).
    pub rate_limit: Option<RateQ>,
    /// Explicit message list (`tool = "messages"`).
    #[serde(default, rename = "message")]
    pub messages: Vec<MessageCfg>,
    /// The port of its bond (1-based) the client's QPs send on, set after
    /// the round robin as `mlx5dv_modify_qp_lag_port` sets it: only on a
    /// bond in RoCE LAG queue-affinity mode. Flows of the HPCC reference's
    /// flow files get the NIC the reference picks ([`crate::lower::traffic`]).
    pub client_lag_port: Option<u8>,
    /// The same for the server's QPs.
    pub server_lag_port: Option<u8>,
}

fn default_size() -> Bytes {
    Bytes(65536)
}
fn default_tx_depth() -> u32 {
    128
}
fn default_timeout() -> u8 {
    14
}
fn seven() -> u8 {
    7
}
fn default_min_rnr() -> u8 {
    12
}

fn one_u32() -> u32 {
    1
}
