//! `rocesim import-hpcc`: the reference's config, topology and flow files
//! as a scenario that runs its experiment.
//!
//! ```text
//!  e3.cfg ──config::read──▶ TOPOLOGY_FILE, FLOW_FILE (relative to the config's
//!    │                      directory, else by base name there; --topology/--flows win)
//!    ▼
//!  [topology] kind = "hpcc", file = ...   every host, switch and link of the file
//!  [[traffic]] flows = ...                one RC QP pair per flow, at its start time
//!  [sim] stop_at                          SIMULATOR_STOP_TIME
//!  buffer, MTU                            BUFFER_SIZE, PACKET_PAYLOAD_SIZE
//!  [topology.host]  profile = "hpcc", segment_bytes   PACKET_PAYLOAD_SIZE
//!  [topology.host.dcqcn]                  CC_MODE 1, RP_TIMER, RATE_AI, ... (DcqcnParams::hpcc_reference)
//!  [topology.switch.mmu] preset           BUFFER_SIZE, the reference's switch-mmu.cc
//!  [topology.switch.ecn]                  KMIN_MAP, KMAX_MAP, PMAX_MAP per link speed, on dequeue, all packets
//! ```
//!
//! Both files are parsed here, so a bad line is reported now (file:line and
//! field), and the topology and flows are checked against each other (a
//! flow between nodes that are not hosts).

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use roce_capture::human::plural;

use super::{FormatError, HpccConfig};
use crate::cc::{DcqcnParams, RedParams};
use crate::topology::Topology;
use crate::units::fmt_rate;

/// What went wrong, naming the file and, where there is one, the line.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("{config}: {key} {value}: no such file (looked for {tried})")]
    Missing {
        config: String,
        key: &'static str,
        value: String,
        tried: String,
    },
    #[error("{config}: no {key}; give one with {flag} FILE")]
    Unset {
        config: String,
        key: &'static str,
        flag: &'static str,
    },
    #[error("{file}: {msg}")]
    Invalid { file: String, msg: String },
}

/// The reference-compatible presets the scenario names: the NIC profile of
/// every host and the switches' buffer preset.
pub const NIC_PROFILE: &str = "hpcc";
pub const SWITCH_PRESET: &str = "hpcc_reference";

/// Where a file the config names is: relative to the config's directory,
/// else its base name there.
fn locate(config: &Path, key: &'static str, value: &str) -> Result<PathBuf, ImportError> {
    let dir = config.parent().unwrap_or(Path::new(""));
    let direct = dir.join(value);
    let base = Path::new(value)
        .file_name()
        .map(|b| dir.join(b))
        .unwrap_or_else(|| direct.clone());
    for p in [&direct, &base] {
        if p.is_file() {
            return Ok(p.clone());
        }
    }
    Err(ImportError::Missing {
        config: config.display().to_string(),
        key,
        value: value.into(),
        tried: format!("{} and {}", direct.display(), base.display()),
    })
}

fn given(
    over: Option<&Path>,
    config: &Path,
    key: &'static str,
    flag: &'static str,
    value: Option<&str>,
) -> Result<PathBuf, ImportError> {
    if let Some(p) = over {
        if !p.is_file() {
            return Err(ImportError::Invalid {
                file: p.display().to_string(),
                msg: format!("{flag}: no such file"),
            });
        }
        return Ok(p.to_path_buf());
    }
    let v = value.ok_or_else(|| ImportError::Unset {
        config: config.display().to_string(),
        key,
        flag,
    })?;
    locate(config, key, v)
}

/// `path` as seen from directory `from` (both made absolute).
pub fn relative_to(path: &Path, from: &Path) -> PathBuf {
    let abs = |p: &Path| {
        std::path::absolute(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect::<PathBuf>()
    };
    let (p, f) = (abs(path), abs(from));
    let (pc, fc): (Vec<_>, Vec<_>) = (p.components().collect(), f.components().collect());
    let common = pc.iter().zip(&fc).take_while(|(a, b)| a == b).count();
    // Only the root in common: the absolute path says more than ../../..
    if common <= 1 {
        return p;
    }
    let mut out = PathBuf::new();
    for _ in common..fc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c);
    }
    out
}

/// The scenario text for the reference run configured by `config`, to be
/// written at `out`.
pub fn import(
    config: &Path,
    topology: Option<&Path>,
    flows: Option<&Path>,
    out: &Path,
) -> Result<String, ImportError> {
    let cfg: HpccConfig = super::config::read(config)?;
    let topo_path = given(
        topology,
        config,
        "TOPOLOGY_FILE",
        "--topology",
        cfg.topology_file.as_deref(),
    )?;
    let flow_path = given(
        flows,
        config,
        "FLOW_FILE",
        "--flows",
        cfg.flow_file.as_deref(),
    )?;
    let topo_file = super::topology::read(&topo_path)?;
    let topo = Topology::from_hpcc(&topo_file).map_err(|e| ImportError::Invalid {
        file: topo_path.display().to_string(),
        msg: e.0,
    })?;
    let flow_file = super::flows::read(&flow_path)?;
    crate::traffic::from_hpcc(&flow_file.flows, &topo).map_err(|e| ImportError::Invalid {
        file: flow_path.display().to_string(),
        msg: e.0,
    })?;
    let out_dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let rel = |p: &Path| {
        relative_to(p, out_dir)
            .display()
            .to_string()
            .replace('\\', "/")
    };
    let name = out
        .file_stem()
        .map_or("imported".into(), |s| s.to_string_lossy().into_owned());
    // The reference's payload per packet; RoCE path MTUs are powers of two.
    let payload = cfg.packet_payload_size;
    let mtu = match payload {
        0..=1024 => 1500,
        1025..=2048 => 2200,
        _ => 9000,
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {name}: the reference (ns-3 HPCC) run configured by {}, imported by\n\
         # `rocesim import-hpcc`: its topology ({}, {}, {}) and its\n\
         # {}, each one RC QP pair carrying one RDMA WRITE of the flow's size,\n\
         # created at the flow's start time.\n#\n\
         # The reference sends {payload}-byte payloads; RoCE path MTUs are powers of two,\n\
         # so the hosts use Ethernet MTU {mtu} (path MTU {}) and segment at {payload} bytes.",
        config.display(),
        plural(topo.host_count(), "host"),
        plural(topo.switch_count(), "switch"),
        plural(topo.links().len() as u64, "link"),
        plural(flow_file.flows.len() as u64, "flow"),
        crate::world::roce_mtu(mtu).unwrap_or(0),
    );
    let _ = writeln!(s, "\nname = \"{name}\"\nseed = 1\n");
    let _ = writeln!(
        s,
        "[sim]\n# SIMULATOR_STOP_TIME {}\nstop_at = \"{}ps\"\nsample_interval = \"100us\"\n",
        cfg.simulator_stop_time, cfg.simulator_stop_time.0
    );
    let _ = writeln!(
        s,
        "[topology]\nkind = \"hpcc\"\nfile = \"{}\"\n",
        rel(&topo_path)
    );
    let _ = writeln!(s, "{}", host_tables(&cfg));
    let _ = writeln!(s, "[topology.nic]\nmtu = {mtu}\n");
    let _ = writeln!(s, "{}", switch_tables(config, &cfg, &topo));
    let _ = writeln!(
        s,
        "\n[[traffic]]\nname = \"flows\"\nflows = \"{}\"",
        rel(&flow_path)
    );
    Ok(s)
}

/// `[topology.host]`: the reference's NIC, with the config's DCQCN knobs
/// as the ConnectX names they map onto ([`DcqcnParams::hpcc_reference`]).
fn host_tables(cfg: &HpccConfig) -> String {
    let mut s = String::from(
        "# Every host: the reference's NIC (profile \"hpcc\": no window, one ACK per\n\
         # packet, sent ahead of the data but carrying the data's priority, so\n\
         # switches queue it with the data; 1000-byte payloads, DCQCN with the\n\
         # CNP flag on the ACK of every marked packet).\n",
    );
    let _ = writeln!(s, "[topology.host]\nprofile = \"{NIC_PROFILE}\"");
    let _ = writeln!(s, "\n  [topology.host.transport]");
    let _ = writeln!(
        s,
        "  segment_bytes = {}        # PACKET_PAYLOAD_SIZE",
        cfg.packet_payload_size
    );
    if !cfg.ack_high_prio {
        // RdmaEgressQueue::ack_q_idx = 3: the ACK queue stops with the
        // data's priority when the switch pauses it.
        let _ = writeln!(
            s,
            "  ack_queue = 3             # ACK_HIGH_PRIO 0: ACKs wait when priority 3 is paused"
        );
    }
    let _ = writeln!(s, "\n  [topology.host.dcqcn]");
    match DcqcnParams::hpcc_reference(cfg) {
        Err(e) => {
            let _ = writeln!(
                s,
                "  enable = false                # the config's {} {}{}",
                e.key,
                e.problem,
                e.hint.map_or(String::new(), |h| format!(" ({h})"))
            );
        }
        Ok(p) => {
            let knobs: [(&str, String, String); 9] = [
                (
                    "rpg_time_reset",
                    p.rpg_time_reset.to_string(),
                    format!("RP_TIMER {}", cfg.rp_timer),
                ),
                (
                    "rpg_threshold",
                    p.rpg_threshold.to_string(),
                    format!("FAST_RECOVERY_TIMES {}", cfg.fast_recovery_times),
                ),
                (
                    "rpg_ai_rate",
                    p.rpg_ai_rate.to_string(),
                    format!("RATE_AI {}", opt_rate(cfg.rate_ai)),
                ),
                (
                    "rpg_hai_rate",
                    p.rpg_hai_rate.to_string(),
                    format!("RATE_HAI {}", opt_rate(cfg.rate_hai)),
                ),
                (
                    "rpg_min_rate",
                    p.rpg_min_rate.to_string(),
                    format!("MIN_RATE {}", fmt_rate(cfg.min_rate)),
                ),
                (
                    "dce_tcp_g",
                    p.dce_tcp_g.to_string(),
                    format!("EWMA_GAIN {}: alpha keeps g/1024", cfg.ewma_gain),
                ),
                (
                    "dce_tcp_rtt",
                    p.dce_tcp_rtt.to_string(),
                    format!("ALPHA_RESUME_INTERVAL {}", cfg.alpha_resume_interval),
                ),
                (
                    "rate_reduce_monitor_period",
                    p.rate_reduce_monitor_period.to_string(),
                    format!("RATE_DECREASE_INTERVAL {}", cfg.rate_decrease_interval),
                ),
                (
                    "clamp_tgt_rate",
                    p.clamp_tgt_rate.to_string(),
                    format!("CLAMP_TARGET_RATE {}", u8::from(cfg.clamp_target_rate)),
                ),
            ];
            for (k, v, why) in knobs {
                let kv = format!("{k} = {v}");
                let _ = writeln!(s, "  {kv:<29} # {why}");
            }
        }
    }
    s
}

fn opt_rate(r: Option<crate::time::Rate>) -> String {
    r.map_or("-".into(), fmt_rate)
}

/// `[topology.switch]`: the buffer, the reference's MMU and its ECN
/// thresholds for every link speed of the fabric.
fn switch_tables(config: &Path, cfg: &HpccConfig, topo: &Topology) -> String {
    let mut s = format!(
        "# Every switch: BUFFER_SIZE {} (MiB), the reference's MMU (switch-mmu.cc:\n\
         # reserves, headroom, dynamic PFC thresholds), RED marking on dequeue;\n\
         # ECMP by MurmurHash3 seeded with each switch's node id (switch-node.cc),\n\
         # the default of generated switches.\n\
         [topology.switch]\nbuffer = \"{}MiB\"\n\n  [topology.switch.mmu]\n  preset = \"{SWITCH_PRESET}\"\n",
        cfg.buffer_size, cfg.buffer_size
    );
    let mut rates: Vec<_> = topo.links().iter().map(|l| l.rate).collect();
    rates.sort();
    rates.dedup();
    let mut red = Vec::new();
    for &r in &rates {
        match RedParams::hpcc_reference(cfg, r) {
            Ok(p) => red.push((fmt_rate(r), p)),
            Err(e) => {
                let _ = write!(
                    s,
                    "\n  # No ECN marking: {} {} ({}).\n",
                    e.key,
                    e.problem,
                    config.display()
                );
                return s;
            }
        }
    }
    let table = |f: &dyn Fn(&RedParams) -> String| {
        let parts: Vec<String> = red
            .iter()
            .map(|(r, p)| format!("\"{r}\" = {}", f(p)))
            .collect();
        format!("{{ {} }}", parts.join(", "))
    };
    let kmin = table(&|p| format!("\"{}KB\"", p.kmin_bytes / 1000));
    let kmax = table(&|p| format!("\"{}KB\"", p.kmax_bytes / 1000));
    let pmax = table(&|p| format!("{}", p.pmax));
    let _ = write!(
        s,
        "\n  [topology.switch.ecn]     # KMIN_MAP, KMAX_MAP, PMAX_MAP (KB = 1000 bytes)\n\
         \x20 priorities = [0, 1, 2, 3, 4, 5, 6]   # all but 7, as the reference marks all but its queue 0 (ACKs too)\n\
         \x20 kmin = {kmin}\n  kmax = {kmax}\n  pmax = {pmax}\n\
         \x20 mark = \"dequeue\"          # on the bytes left behind the leaving packet\n\
         \x20 ect_only = false          # whatever the packet's ECN field says\n"
    );
    s
}
