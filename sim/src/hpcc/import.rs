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
//!  [topology.host] profile = "hpcc"       the reference NIC, DCQCN knobs from the config
//!  [topology.switch.mmu] preset           hpcc_reference; [topology.switch.ecn] KMIN/KMAX/PMAX_MAP
//! ```
//!
//! Both files are parsed here, so a bad line is reported now (file:line and
//! field), and the topology and flows are checked against each other (a
//! flow between nodes that are not hosts).

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use roce_capture::human::plural;

use super::{FormatError, HpccConfig};
use crate::topology::Topology;

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
         # so the hosts use Ethernet MTU {mtu} (path MTU {}).",
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
    let _ = writeln!(
        s,
        "# Every host: the reference's NIC (rdma-hw.cc): no window, an ACK per\n\
         # packet at top priority, a CNP flag on the ACK of every CE-marked packet,\n\
         # {payload}-byte segments, DCQCN with the reference's arithmetic.\n\
         [topology.host]\nprofile = \"{NIC_PROFILE}\"\n"
    );
    s.push_str(&dcqcn_keys(&cfg).map_err(|e| ImportError::Invalid {
        file: config.display().to_string(),
        msg: e.to_string(),
    })?);
    let _ = writeln!(s, "\n[topology.nic]\nmtu = {mtu}\n");
    let _ = writeln!(
        s,
        "# Every switch: BUFFER_SIZE {} MB, the reference's MMU (switch-mmu.cc:\n\
         # priority 0 never paused, 1-7 lossless, a 4 KiB reserve per ingress queue,\n\
         # 3 x rate x delay headroom per port, dynamic PFC thresholds).\n\
         [topology.switch]\nbuffer = \"{}MiB\"\n\n[topology.switch.mmu]\npreset = \"{SWITCH_PRESET}\"",
        cfg.buffer_size, cfg.buffer_size,
    );
    s.push_str(&ecn_keys(&cfg, &topo));
    let _ = writeln!(
        s,
        "\n[[traffic]]\nname = \"flows\"\nflows = \"{}\"",
        rel(&flow_path)
    );
    Ok(s)
}

/// `[topology.host.dcqcn]`: the reference's DCQCN knobs, each from the
/// config key it comes from (`DcqcnParams::hpcc_reference` maps them).
fn dcqcn_keys(cfg: &HpccConfig) -> Result<String, crate::cc::ParamError> {
    let p = crate::cc::DcqcnParams::hpcc_reference(cfg)?;
    let mut s = String::from("[topology.host.dcqcn]\nmodel = \"hpcc-reference\"\n");
    let keys: [(&str, String, &str); 9] = [
        (
            "rpg_time_reset",
            p.rpg_time_reset.to_string(),
            "RP_TIMER, us",
        ),
        (
            "rpg_threshold",
            p.rpg_threshold.to_string(),
            "FAST_RECOVERY_TIMES",
        ),
        ("rpg_ai_rate", p.rpg_ai_rate.to_string(), "RATE_AI, Mb/s"),
        ("rpg_hai_rate", p.rpg_hai_rate.to_string(), "RATE_HAI, Mb/s"),
        ("rpg_min_rate", p.rpg_min_rate.to_string(), "MIN_RATE, Mb/s"),
        (
            "dce_tcp_g",
            p.dce_tcp_g.to_string(),
            "EWMA_GAIN = (1024 - this) / 1024",
        ),
        (
            "dce_tcp_rtt",
            p.dce_tcp_rtt.to_string(),
            "ALPHA_RESUME_INTERVAL, us",
        ),
        (
            "rate_reduce_monitor_period",
            p.rate_reduce_monitor_period.to_string(),
            "RATE_DECREASE_INTERVAL, us",
        ),
        (
            "clamp_tgt_rate",
            p.clamp_tgt_rate.to_string(),
            "CLAMP_TARGET_RATE",
        ),
    ];
    for (k, v, from) in keys {
        let _ = writeln!(s, "{:<34} # {from}", format!("{k} = {v}"));
    }
    Ok(s)
}

/// `[topology.switch.ecn]`: Kmin, Kmax and Pmax per link rate of the
/// fabric (`KMIN_MAP`, `KMAX_MAP`, `PMAX_MAP`), marked as the reference
/// does: on the bytes left behind at dequeue, whatever the ECN field says,
/// on every queue but the ACKs' (its queue 0 is priority 7 here).
fn ecn_keys(cfg: &HpccConfig, topo: &Topology) -> String {
    let mut rates: Vec<_> = topo.links().iter().map(|l| l.rate).collect();
    rates.sort();
    rates.dedup();
    let (mut kmin, mut kmax, mut pmax) = (Vec::new(), Vec::new(), Vec::new());
    for r in rates {
        if let Some((lo, hi, p)) = cfg.ecn(r) {
            let r = crate::units::fmt_rate(r);
            kmin.push(format!("\"{r}\" = \"{lo}B\""));
            kmax.push(format!("\"{r}\" = \"{hi}B\""));
            pmax.push(format!("\"{r}\" = {p}"));
        }
    }
    if kmin.is_empty() {
        return "\n# No KMIN_MAP/KMAX_MAP entry for the fabric's link rates: no ECN marking.\n"
            .into();
    }
    let table = |v: &[String]| format!("{{ {} }}", v.join(", "));
    format!(
        "\n# ECN as the reference marks (switch-node.cc): KMIN_MAP/KMAX_MAP/PMAX_MAP per\n\
         # port speed, on the egress bytes at dequeue, ECT or not; never the ACKs' queue\n\
         # (the reference's queue 0, priority 7 here: profile = \"hpcc\" sends ACKs at the top).\n\
         [topology.switch.ecn]\npriorities = [1, 2, 3, 4, 5, 6]\nkmin = {}\nkmax = {}\npmax = {}\n\
         mark = \"dequeue\"\nect_only = false\n",
        table(&kmin),
        table(&kmax),
        table(&pmax)
    )
}
