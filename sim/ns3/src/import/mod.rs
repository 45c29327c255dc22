//! `rocesim import-hpcc`: the reference's config, topology and flow files
//! as a scenario that runs its experiment.
//!
//! ```text
//!  e3.cfg ──config::read──▶ TOPOLOGY_FILE, FLOW_FILE (relative to the config's
//!    │                      directory, else by base name there; --topology/--flows win)
//!    ▼
//!  [topology] kind = "hpcc", file = ...   every host, switch and link of the file
//!  [[traffic]] flows = ...                one RC QP pair per flow, at its start time
//!  [sim] stop_at, tx_time_step           SIMULATOR_STOP_TIME; its 1 ns clock
//!  buffer, MTU                            BUFFER_SIZE, PACKET_PAYLOAD_SIZE
//!  [topology.host]  profile = "hpcc", segment_bytes   PACKET_PAYLOAD_SIZE; its header sizes
//!  [topology.host.dcqcn]                  CC_MODE 1, RP_TIMER, RATE_AI, ... (DcqcnParams::hpcc_reference)
//!  [topology.host.cc] algorithm = "dctcp" CC_MODE 8, EWMA_GAIN, DCTCP_RATE_AI, MIN_RATE
//!  [topology.host.cc] algorithm = "timely" CC_MODE 7, RATE_AI, RATE_HAI, MIN_RATE
//!  [topology.host.cc] algorithm = "hpcc"   CC_MODE 3, U_TARGET, RATE_AI, MI_THRESH, FAST_REACT, INT_MULTI, ...
//!  [topology.host.cc] algorithm = "hpcc_pint" CC_MODE 10, HPCC's knobs and PINT_LOG_BASE, PINT_PROB
//!  [topology.switch.mmu] preset           BUFFER_SIZE, the reference's switch-mmu.cc
//!  [topology.switch.ets] preset           its egress queue: broadcom-egress-queue.cc's round robin
//!  [topology.switch.ecn]                  KMIN_MAP, KMAX_MAP, PMAX_MAP per link speed, on dequeue, all packets
//! ```
//!
//! Both files are parsed here, so a bad line is reported now (file:line and
//! field), and the topology and flows are checked against each other (a
//! flow between nodes that are not hosts).

use std::path::{Component, Path, PathBuf};

use roce_capture::human::plural;

mod tables;
mod writer;

use super::{FormatError, HpccConfig};
use tables::{host_tables, output_table, sim_table, switch_tables, topology_table};
use writer::{ScenarioFile, int};

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
    /// Settings the scenario would not reproduce (see [`unmodelled`]).
    #[error("{}", unmodelled_message(config, list))]
    Unmodelled {
        config: String,
        list: Vec<Unmodelled>,
    },
}

/// A setting of the reference's config that rocesim does not reproduce.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmodelled {
    /// The line it is set on; 0: left at the reference's default.
    pub line: usize,
    /// `KEY value` as the reference reads it.
    pub setting: String,
    /// What the reference does that rocesim would not.
    pub why: String,
    /// What the scenario does instead when imported with `--approximate`.
    pub instead: String,
}

impl Unmodelled {
    /// `config:line: KEY value: why`.
    pub fn describe(&self, config: &str) -> String {
        let at = if self.line > 0 {
            format!("{config}:{}", self.line)
        } else {
            format!("{config} (not set: the reference's default)")
        };
        format!("{at}: {}: {}", self.setting, self.why)
    }
}

fn unmodelled_message(config: &str, list: &[Unmodelled]) -> String {
    let mut m = match list {
        [one] => one.describe(config),
        _ => {
            let mut m = format!("{} settings rocesim does not reproduce:", list.len());
            for u in list {
                m.push_str("\n  ");
                m.push_str(&u.describe(config));
            }
            m
        }
    };
    m.push_str(
        "\n  hint: change the config, or import with --approximate to get a scenario that \
         runs without them (each named in its comments)",
    );
    m
}

/// The reference-compatible presets the scenario names: the NIC profile of
/// every host and the switches' buffer and egress queue presets.
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
///
/// Settings of the config that the scenario would not reproduce are an
/// error ([`ImportError::Unmodelled`], all of them), unless `approximate`:
/// then the scenario runs without them and names each in its comments,
/// and they are returned beside it.
pub fn import(
    config: &Path,
    topology: Option<&Path>,
    flows: Option<&Path>,
    out: &Path,
    approximate: bool,
) -> Result<Imported, ImportError> {
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
    let topo = topo_file.to_topology().map_err(|e| ImportError::Invalid {
        file: topo_path.display().to_string(),
        msg: e.0,
    })?;
    let flow_file = super::flows::read(&flow_path)?;
    crate::flows::to_specs(&flow_file.flows, &topo).map_err(|e| ImportError::Invalid {
        file: flow_path.display().to_string(),
        msg: e.0,
    })?;
    // Bad input first: a refusal is about a run that could be set up.
    let unmodelled = unmodelled(&cfg);
    if !unmodelled.is_empty() && !approximate {
        return Err(ImportError::Unmodelled {
            config: config.display().to_string(),
            list: unmodelled,
        });
    }
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
    let mut w = ScenarioFile::new();
    w.comment(&format!(
        "{name}: the reference (ns-3 HPCC) run configured by {}, imported by\n\
         `rocesim import-hpcc`: its topology ({}, {}, {}) and its\n\
         {}, each one RC QP pair carrying one RDMA WRITE of the flow's size,\n\
         created at the flow's start time.\n\n\
         The reference sends {payload}-byte payloads; RoCE path MTUs are powers of two,\n\
         so the hosts use Ethernet MTU {mtu} (path MTU {}) and segment at {payload} bytes.",
        config.display(),
        plural(topo.host_count(), "host"),
        plural(topo.switch_count(), "switch"),
        plural(topo.links().len() as u64, "link"),
        plural(flow_file.flows.len() as u64, "flow"),
        rocesim_model::net::roce_mtu(mtu).unwrap_or(0),
    ));
    if !unmodelled.is_empty() {
        w.comment("\nNot reproduced (imported with --approximate): the reference's run differs in");
        for u in &unmodelled {
            w.comment(&format!(
                "  {} (line {}): {};\n    here {}.",
                u.setting, u.line, u.why, u.instead
            ));
        }
    }
    w.blank();
    w.set("name", name.as_str(), "");
    w.set("seed", 1, "");
    w.blank();
    // Both cores: a fabric by tiers, a star between its senders and the
    // rest (`rocesim::parallel::plan`). A multi-homed host is on a bond, and a
    // failing link re-routes the fabric: neither can be split; a star
    // without flows has no senders to cut away.
    let partitions = topo.multi_homed_hosts().count() == 0
        && cfg.link_down.is_none()
        && (topo.switch_count() > 1 || !flow_file.flows.is_empty());
    sim_table(&mut w, &cfg, partitions);
    w.blank();
    output_table(&mut w);
    w.blank();
    topology_table(
        &mut w,
        config,
        &cfg,
        &topo_file,
        &topo,
        &topo_path,
        &rel(&topo_path),
    )?;
    w.blank();
    host_tables(&mut w, &cfg, &topo_file);
    w.blank();
    w.table(&["topology", "nic"], false, "", "");
    w.set("mtu", int(mtu), "");
    w.blank();
    let mut notes = Vec::new();
    switch_tables(&mut w, config, &cfg, &topo, &mut notes);
    // Two blank lines, as in the scenarios shipped from this import
    // (scenarios/hpcc_*.toml, compared line by line in tests/anchors.rs).
    w.blank();
    w.blank();
    w.table(&["traffic"], true, "", "");
    w.set("name", "flows", "");
    w.set("flows", rel(&flow_path), "");
    Ok(Imported {
        text: w.finish(),
        approximated: unmodelled,
        notes,
    })
}

/// A scenario made from the reference's files.
#[derive(Debug)]
pub struct Imported {
    /// The scenario file's text.
    pub text: String,
    /// What it does not reproduce (only with `approximate`).
    pub approximated: Vec<Unmodelled>,
    /// What it reproduces of the reference that its config likely did not
    /// mean (a port speed missing from the ECN maps), each `file:line: why`.
    pub notes: Vec<String>,
}

/// The config's settings that the imported scenario would not reproduce,
/// in the config's order. DCQCN (`CC_MODE 1`), HPCC (`CC_MODE 3`) and
/// HPCC-PINT (`CC_MODE 10`: `PINT_LOG_BASE`, `PINT_PROB`), TIMELY (`CC_MODE 7`:
/// `RATE_AI`, `RATE_HAI`, `MIN_RATE`) or DCTCP (`CC_MODE 8`: `EWMA_GAIN`,
/// `DCTCP_RATE_AI`, `MIN_RATE`) with its window (`HAS_WIN`,
/// `GLOBAL_T`, `VAR_WIN`), a link failure (`LINK_DOWN`, with every
/// route recomputed), ACK priority, ECN (`ENABLE_QCN`), losses
/// (`ERROR_RATE_PER_LINK` and the topology's error rates) and an ACK per
/// packet are reproduced; settings that act only under another `CC_MODE`
/// (`U_TARGET`, `MI_THRESH`, `DCTCP_RATE_AI`, ...), outputs
/// (`ENABLE_TRACE`, `QLEN_MON_*`) and `USE_DYNAMIC_PFC_THRESHOLD` (read by
/// the reference into a device attribute it never uses) change nothing.
pub fn unmodelled(cfg: &HpccConfig) -> Vec<Unmodelled> {
    let mut list = Vec::new();
    let mut add = |key: &str, value: String, why: &str, instead: &str| {
        list.push(Unmodelled {
            line: cfg.line_of(key),
            setting: format!("{key} {value}"),
            why: why.into(),
            instead: instead.into(),
        });
    };
    // Every CC_MODE the config parser takes (1, 3, 7, 8, 10) is modelled.
    use super::config::CcMode;
    if matches!(cfg.cc_mode, CcMode::Hpcc | CcMode::HpccPint) && cfg.global_t != 1 {
        add(
            "GLOBAL_T",
            cfg.global_t.to_string(),
            "HPCC's base RTT is each flow's own path's (pairRtt)",
            "the largest base RTT of the flows' paths",
        );
    }
    if cfg.cc_mode == CcMode::Hpcc && cfg.int_multi > 255 {
        add(
            "INT_MULTI",
            cfg.int_multi.to_string(),
            "the telemetry's unit multiplier is one byte here",
            "INT_MULTI 255",
        );
    }
    if !cfg.rate_bound {
        add(
            "RATE_BOUND",
            "0".into(),
            "the NIC does not pace a QP at its DCQCN rate",
            "QPs are paced at their rate",
        );
    }
    let payload = cfg.packet_payload_size;
    if cfg.l2_ack_interval == 0 {
        add(
            "L2_ACK_INTERVAL",
            "0".into(),
            "the senders ignore every ACK (rdma-hw.cc: \"shouldn't receive ack\"), so no flow completes",
            "an ACK per packet",
        );
    } else if cfg.l2_ack_interval > payload {
        add(
            "L2_ACK_INTERVAL",
            cfg.l2_ack_interval.to_string(),
            "the receiver acknowledges every so many bytes, and at chunk boundaries (L2_CHUNK_SIZE)",
            "an ACK per packet",
        );
    }
    if cfg.l2_back_to_zero {
        add(
            "L2_BACK_TO_ZERO",
            "1".into(),
            "a NACK sends the QP back to the start of its chunk (L2_CHUNK_SIZE)",
            "go-back-N from the NAK's PSN, as RC does",
        );
    }
    list.sort_by_key(|u| u.line);
    list
}
