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
use toml_edit::{Array, ArrayOfTables, Decor, DocumentMut, InlineTable, Item, Key, Table, Value};

use super::{FormatError, HpccConfig};
use rocesim_model::cc::RedParams;
use rocesim_model::packet::Billing;
use rocesim_model::topology::Topology;
use rocesim_model::units::fmt_rate;

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

/// The comment above `partitions = 2` in `[sim]`, which runs an imported
/// fabric on both cores.
const PARTITIONS: &str = "\
Both cores: the fabric cut in two, each half on a thread of its own, in
lockstep windows of the smallest link delay between them. Equal-time
events meeting across the cut may order differently from `partitions = 1`
(BENCHMARKS.md).";

/// The comment above `sysfs = false` in the `[output]` of an imported
/// experiment.
const OUTPUT: &str = "\
No sysfs/ trees: the reference's experiments are read through fct.txt,
the CSVs and the plots. A host's tree is some fifty files and
directories, which on a file system such as ext4 without a journal cost
more than a star's whole simulation (BENCHMARKS.md). Every counter is in
summary.json and counters.prom; `--set output.sysfs=true` writes the trees.";

/// The scenario as it is written: a TOML document (`toml_edit`), the table
/// the next key goes in, and the blank and comment lines that go above the
/// next key or table header. A value's comment is the text beside it (its
/// decor), spaces included, so the columns stay as written.
struct ScenarioFile {
    doc: DocumentMut,
    /// The path of the table the next key goes in (empty: the top).
    at: Vec<&'static str>,
    /// The indentation of that table's lines.
    indent: &'static str,
    above: String,
}

impl ScenarioFile {
    fn new() -> ScenarioFile {
        ScenarioFile {
            doc: DocumentMut::new(),
            at: Vec::new(),
            indent: "",
            above: String::new(),
        }
    }

    /// A blank line above what comes next.
    fn blank(&mut self) {
        self.above.push('\n');
    }

    /// `text` as comment lines above what comes next, indented as the
    /// current table.
    fn comment(&mut self, text: &str) {
        self.comment_at(self.indent, text);
    }

    /// `text` as comment lines above what comes next, indented by `indent`
    /// (a table header's comment).
    fn comment_at(&mut self, indent: &str, text: &str) {
        for line in text.lines() {
            let sep = if line.is_empty() { "" } else { " " };
            let _ = writeln!(self.above, "{indent}#{sep}{line}");
        }
    }

    /// The table at `path`; for an array of tables, its last.
    fn table_at(&mut self, path: &[&str]) -> &mut Table {
        let mut t = self.doc.as_table_mut();
        for key in path {
            t = match t.get_mut(key) {
                Some(Item::Table(next)) => next,
                Some(Item::ArrayOfTables(a)) => a.iter_mut().last().expect("a table"),
                _ => panic!("no table {key} in {path:?}"),
            };
        }
        t
    }

    /// A new table `[path]` (or one more `[[path]]`) whose header and lines
    /// are indented by `indent`, with `beside` after its header; the keys
    /// that follow go in it.
    fn table(&mut self, path: &[&'static str], array: bool, indent: &'static str, beside: &str) {
        let mut t = Table::new();
        t.decor_mut()
            .set_prefix(std::mem::take(&mut self.above) + indent);
        if !beside.is_empty() {
            t.decor_mut().set_suffix(beside);
        }
        let (key, parent) = path.split_last().expect("a table's path");
        let parent = self.table_at(parent);
        if array {
            parent
                .entry(key)
                .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
                .as_array_of_tables_mut()
                .expect("an array of tables")
                .push(t);
        } else {
            parent.insert(key, Item::Table(t));
        }
        self.at = path.to_vec();
        self.indent = indent;
    }

    /// `key = value` in the current table, with `beside` after the value
    /// (spaces, then `# why`) unless it is empty.
    fn set(&mut self, key: &str, value: impl Into<Value>, beside: &str) {
        let mut value = value.into();
        if !beside.is_empty() {
            value.decor_mut().set_suffix(beside);
        }
        let prefix = std::mem::take(&mut self.above) + self.indent;
        let key = Key::new(key).with_leaf_decor(Decor::new(prefix, " "));
        let at = self.at.clone();
        self.table_at(&at)
            .insert_formatted(&key, Item::Value(value));
    }

    /// `key = value` with `# why` beside it, the comments of a block
    /// starting after `key = value` padded to `width` characters.
    fn set_aligned(&mut self, key: &str, value: impl Into<Value>, width: usize, why: &str) {
        let value = value.into();
        let kv = format!("{key} = {value}").chars().count();
        let pad = width.saturating_sub(kv);
        self.set(key, value, &format!("{:pad$} # {why}", ""));
    }

    /// The text of the document; lines left above nothing end it.
    fn finish(mut self) -> String {
        self.doc.set_trailing(self.above);
        self.doc.to_string()
    }
}

/// A TOML integer. The figures written (sizes, byte counts) are far from
/// `i64::MAX`.
fn int(n: impl Into<u64>) -> Value {
    Value::from(i64::try_from(n.into()).unwrap_or(i64::MAX))
}

/// A key written as a basic string (`"100Gbps"`), as rates are.
fn quoted_key(k: &str) -> Key {
    Value::from(k)
        .to_string()
        .parse()
        .expect("a quoted string is a TOML key")
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
    // rest (`world::split`). A multi-homed host is on a bond, and a
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

/// `[sim]`: the reference's stop time and clock; both cores if
/// `partitions`.
fn sim_table(w: &mut ScenarioFile, cfg: &HpccConfig, partitions: bool) {
    w.table(&["sim"], false, "", "");
    w.comment(&format!("SIMULATOR_STOP_TIME {}", cfg.simulator_stop_time));
    w.set("stop_at", format!("{}ps", cfg.simulator_stop_time.0), "");
    w.set("sample_interval", "100us", "");
    w.comment("its clock: transmission times truncated to the nanosecond (Time::FromDouble)");
    w.set("tx_time_step", "1ns", "");
    if partitions {
        w.comment(PARTITIONS);
        w.set("partitions", 2, "");
    }
}

/// `[output]`: no sysfs/ trees.
fn output_table(w: &mut ScenarioFile) {
    w.table(&["output"], false, "", "");
    w.comment(OUTPUT);
    w.set("sysfs", false, "");
}

/// `[topology]`: the reference's file, what rocesim does with its
/// multi-homed hosts and lossy links, and its LINK_DOWN as a link event.
/// `file` is the topology file as the scenario names it.
fn topology_table(
    w: &mut ScenarioFile,
    config: &Path,
    cfg: &HpccConfig,
    topo_file: &super::HpccTopology,
    topo: &Topology,
    topo_path: &Path,
    file: &str,
) -> Result<(), ImportError> {
    w.table(&["topology"], false, "", "");
    w.set("kind", "hpcc", "");
    w.set("file", file, "");
    let multi_homed = topo.multi_homed_hosts().count();
    if multi_homed > 0 {
        w.comment(&format!(
            "Hosts cabled to more than one switch: {multi_homed} of {}. The reference gives such\n\
             a host one address and puts each QP on one of its NICs by a hash of the QP's addresses\n\
             and ports; here each holds its address on a bond of its links (balance-xor, RoCE LAG\n\
             queue-affinity mode: a port per QP), every flow pinned to the NIC the reference\n\
             picks, and all switches answer to one router MAC, so that either of a host's\n\
             switches is its gateway.",
            topo.hosts().len()
        ));
    }
    let from_file = topo_file.links().iter().any(|l| l.error_rate > 0.0);
    if cfg.error_rate_per_link > 0.0 || from_file {
        let sources = match (from_file, cfg.error_rate_per_link > 0.0) {
            (true, true) => "the file's error rates, ERROR_RATE_PER_LINK",
            (true, false) => "the file's error rates",
            _ => "ERROR_RATE_PER_LINK",
        };
        w.comment(&format!(
            "Frames are lost ({sources}): rocesim's RC recovers them as the spec\n\
             says (NAK, go-back-N, ACK timeout up to retry_cnt); the reference only by\n\
             NACK, with no timeout, so a lost last packet stalls its flow there."
        ));
    }
    if cfg.error_rate_per_link > 0.0 {
        w.set(
            "link_loss",
            cfg.error_rate_per_link,
            "   # ERROR_RATE_PER_LINK: every link the file gives no error rate",
        );
    }
    if let Some(d) = cfg.link_down {
        // TakeDownLink at 2 s + t us: both ends down, every route
        // recomputed over the links left.
        let name = |n: u32| topo.node(rocesim_model::topology::NodeId(n)).name.clone();
        let joined = topo_file
            .links()
            .iter()
            .any(|l| (l.a, l.b) == (d.a, d.b) || (l.a, l.b) == (d.b, d.a));
        if !joined {
            return Err(ImportError::Invalid {
                file: format!("{}:{}", config.display(), cfg.line_of("LINK_DOWN")),
                msg: format!(
                    "LINK_DOWN {} {} {}: {} has no link between nodes {} and {} (the reference would take nothing down)",
                    d.after.as_ns() / 1000,
                    d.a,
                    d.b,
                    topo_path.display(),
                    d.a,
                    d.b
                ),
            });
        }
        let us = d.after.as_ns() / 1000;
        w.set(
            "reroute",
            true,
            "            # LINK_DOWN: every route is recomputed when the link fails",
        );
        w.blank();
        w.table(
            &["topology", "link_event"],
            true,
            "  ",
            &format!("   # LINK_DOWN {us} {} {}: at 2 s + {us} us", d.a, d.b),
        );
        w.set("between", Array::from_iter([name(d.a), name(d.b)]), "");
        w.set(
            "at",
            format!(
                "{}ps",
                (rocesim_model::time::Ps::from_us(2_000_000) + d.after).0
            ),
            "",
        );
        w.set("state", "down", "");
    }
    Ok(())
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
/// in the config's order. DCQCN (`CC_MODE 1`) with its window (`HAS_WIN`,
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
    if cfg.cc_mode != super::config::CcMode::Dcqcn {
        add(
            "CC_MODE",
            cfg.cc_mode.describe().into(),
            "rocesim's reaction point is DCQCN's (CC_MODE 1); this congestion control is not modelled",
            "no congestion control runs",
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

/// `[topology.host]`: the reference's NIC, with the config's DCQCN knobs
/// as the ConnectX names they map onto ([`DcqcnParams::hpcc_reference`]).
fn host_tables(w: &mut ScenarioFile, cfg: &HpccConfig, topo: &super::HpccTopology) {
    w.comment_at(
        "",
        "Every host: the reference's NIC (profile \"hpcc\": no window unless HAS_WIN, one ACK per\n\
         packet, sent ahead of the data but carrying the data's priority, so\n\
         switches queue it with the data; 1000-byte payloads, DCQCN with the\n\
         CNP flag on the ACK of every marked packet; frames timed, paced and\n\
         buffered at its sizes, captured at their real ones).",
    );
    w.table(&["topology", "host"], false, "", "");
    w.set("profile", NIC_PROFILE, "");
    w.blank();
    w.table(&["topology", "host", "transport"], false, "  ", "");
    w.set(
        "segment_bytes",
        int(cfg.packet_payload_size),
        "        # PACKET_PAYLOAD_SIZE",
    );
    // CC_MODE 1 carries no INT header (IntHeader::NONE), so a data packet
    // is payload + SeqTsHeader 6 + UDP 8 + IPv4 20 + PppHeader 14, an ACK
    // 60 (`RdmaHw::GetNxtPacket`, `ReceiveUdp`); the modes that add one are
    // refused above.
    w.set(
        "header_bytes",
        int(Billing::HPCC.header_bytes),
        "          # its data packet: payload + SeqTs 6, UDP 8, IPv4 20, PPP 14",
    );
    w.set(
        "ack_bytes",
        int(Billing::HPCC.ack_bytes),
        "             # its ACK, padded to 60 bytes",
    );
    w.set(
        "ecmp_ports",
        "flow",
        "       # its switches hash each flow's own UDP ports: 10000 + the pair's earlier flows, the flow's dport",
    );
    if cfg.has_win && cfg.global_t != 1 {
        w.set(
            "window_bytes",
            "path",
            &format!(
                "     # HAS_WIN 1, GLOBAL_T {}: each flow's own path's bandwidth-delay product",
                cfg.global_t
            ),
        );
    } else if cfg.has_win {
        let (bdp, rtt) = topo.max_bdp(cfg.packet_payload_size);
        w.set(
            "window_bytes",
            int(bdp),
            &format!("      # HAS_WIN 1, GLOBAL_T 1: maxBdp (maxRtt {rtt} ns)"),
        );
        if cfg.var_win {
            w.set(
                "window_follows_rate",
                true,
                "  # VAR_WIN 1: window x DCQCN rate / line rate",
            );
        }
    }
    if !cfg.ack_high_prio {
        // RdmaEgressQueue::ack_q_idx = 3: the ACK queue stops with the
        // data's priority when the switch pauses it.
        w.set(
            "ack_queue",
            3,
            "             # ACK_HIGH_PRIO 0: ACKs wait when priority 3 is paused",
        );
    }
    w.blank();
    w.table(&["topology", "host", "dcqcn"], false, "  ", "");
    match cfg.dcqcn() {
        Err(e) => {
            w.set(
                "enable",
                false,
                &format!(
                    "                # the config's {} {}{}",
                    e.key,
                    e.problem,
                    e.hint.map_or(String::new(), |h| format!(" ({h})"))
                ),
            );
        }
        Ok(p) => {
            let knobs: [(&str, Value, String); 9] = [
                (
                    "rpg_time_reset",
                    int(p.rpg_time_reset),
                    format!("RP_TIMER {}", cfg.rp_timer),
                ),
                (
                    "rpg_threshold",
                    int(p.rpg_threshold),
                    format!("FAST_RECOVERY_TIMES {}", cfg.fast_recovery_times),
                ),
                (
                    "rpg_ai_rate",
                    int(p.rpg_ai_rate),
                    format!("RATE_AI {}", opt_rate(cfg.rate_ai)),
                ),
                (
                    "rpg_hai_rate",
                    int(p.rpg_hai_rate),
                    format!("RATE_HAI {}", opt_rate(cfg.rate_hai)),
                ),
                (
                    "rpg_min_rate",
                    int(p.rpg_min_rate),
                    format!("MIN_RATE {}", fmt_rate(cfg.min_rate)),
                ),
                (
                    "dce_tcp_g",
                    int(p.dce_tcp_g),
                    format!("EWMA_GAIN {}: alpha keeps g/1024", cfg.ewma_gain),
                ),
                (
                    "dce_tcp_rtt",
                    int(p.dce_tcp_rtt),
                    format!("ALPHA_RESUME_INTERVAL {}", cfg.alpha_resume_interval),
                ),
                (
                    "rate_reduce_monitor_period",
                    int(p.rate_reduce_monitor_period),
                    format!("RATE_DECREASE_INTERVAL {}", cfg.rate_decrease_interval),
                ),
                (
                    "clamp_tgt_rate",
                    Value::from(p.clamp_tgt_rate),
                    format!("CLAMP_TARGET_RATE {}", u8::from(cfg.clamp_target_rate)),
                ),
            ];
            for (k, v, why) in knobs {
                w.set_aligned(k, v, 29, &why);
            }
        }
    }
}

fn opt_rate(r: Option<rocesim_model::time::Rate>) -> String {
    r.map_or("-".into(), fmt_rate)
}

/// `[topology.switch]`: the buffer, the reference's MMU and its ECN
/// thresholds for every link speed of the fabric.
fn switch_tables(
    w: &mut ScenarioFile,
    config: &Path,
    cfg: &HpccConfig,
    topo: &Topology,
    notes: &mut Vec<String>,
) {
    w.comment_at(
        "",
        &format!(
            "Every switch: BUFFER_SIZE {} (MiB), the reference's MMU (switch-mmu.cc:\n\
             reserves, headroom, dynamic PFC thresholds), RED marking on dequeue;\n\
             ECMP by MurmurHash3 seeded with each switch's node id (switch-node.cc),\n\
             the default of generated switches.",
            cfg.buffer_size
        ),
    );
    w.table(&["topology", "switch"], false, "", "");
    w.set("buffer", format!("{}MiB", cfg.buffer_size), "");
    w.blank();
    w.table(&["topology", "switch", "mmu"], false, "  ", "");
    w.set("preset", SWITCH_PRESET, "");
    w.blank();
    if !cfg.enable_qcn {
        w.comment("ENABLE_QCN 0: the switches mark nothing (no [topology.switch.ecn]).");
        return;
    }
    let mut rates: Vec<_> = topo.links().iter().map(|l| l.rate).collect();
    rates.sort();
    rates.dedup();
    let mut red = Vec::new();
    for &r in &rates {
        let (p, missing) = cfg.red(r);
        if !missing.is_empty() {
            let keys = missing.join(", ");
            let at = missing
                .iter()
                .map(|k| cfg.line_of(k))
                .filter(|&l| l > 0)
                .min()
                .map_or(String::new(), |l| format!(":{l}"));
            let marks = if p.kmax_bytes == 0 {
                "every packet that leaves bytes behind it in the queue is marked".to_string()
            } else {
                format!("packets are marked only above {} KB", p.kmax_bytes / 1000)
            };
            let have = if missing.len() == 1 { "has" } else { "have" };
            notes.push(format!(
                "{}{at}: {keys} {have} no entry for the fabric's {} ports; the reference \
                 asserts one in debug builds only, and its optimized build reads 0 there: \
                 {marks}; the scenario does the same",
                config.display(),
                fmt_rate(r)
            ));
            w.comment(&format!(
                "{keys}: no entry for {}; the reference's optimized build reads 0 there:\n{marks}.",
                fmt_rate(r)
            ));
        }
        red.push((fmt_rate(r), p));
    }
    // `{ "25Gbps" = ..., "100Gbps" = ... }`: a value per link speed.
    let by_rate = |f: &dyn Fn(&RedParams) -> Value| {
        let mut t = InlineTable::new();
        for (r, p) in &red {
            t.insert_formatted(&quoted_key(r), f(p));
        }
        Value::InlineTable(t)
    };
    w.table(
        &["topology", "switch", "ecn"],
        false,
        "  ",
        "     # KMIN_MAP, KMAX_MAP, PMAX_MAP (KB = 1000 bytes)",
    );
    w.set(
        "priorities",
        Array::from_iter((0..7).map(i64::from)),
        "   # all but 7, as the reference marks all but its queue 0 (ACKs too)",
    );
    w.set(
        "kmin",
        by_rate(&|p| format!("{}KB", p.kmin_bytes / 1000).into()),
        "",
    );
    w.set(
        "kmax",
        by_rate(&|p| format!("{}KB", p.kmax_bytes / 1000).into()),
        "",
    );
    w.set("pmax", by_rate(&|p| p.pmax.into()), "");
    w.set(
        "mark",
        "dequeue",
        "          # on the bytes left behind the leaving packet",
    );
    w.set(
        "ect_only",
        false,
        "          # whatever the packet's ECN field says",
    );
}
