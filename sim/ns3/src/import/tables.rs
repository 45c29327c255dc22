//! The scenario's tables, one function each: `[sim]`, `[output]`,
//! `[topology]`, `[topology.host]` and `[topology.switch]`, from the
//! reference's config and topology.

use std::path::Path;

use toml_edit::{Array, InlineTable, Value};

use super::writer::{ScenarioFile, int, quoted_key};
use super::{HpccConfig, ImportError, NIC_PROFILE, SWITCH_PRESET};
use crate::config::CcMode;
use rocesim_model::cc::RedParams;
use rocesim_model::packet::Billing;
use rocesim_model::topology::Topology;
use rocesim_model::units::fmt_rate;

/// The comment above `partitions = 2` in `[sim]`, which runs an imported
/// fabric on both cores.
const PARTITIONS: &str = "\
Both cores: the fabric cut in two, each half on a thread of its own, in
lockstep windows of the smallest link delay between them. Equal-time
events keep one order whatever the cut: the outputs are those of
`partitions = 1`, byte for byte.";

/// The comment above `sysfs = false` in the `[output]` of an imported
/// experiment.
const OUTPUT: &str = "\
No sysfs/ trees: the reference's experiments are read through fct.txt,
the CSVs and the plots. A host's tree is some fifty files and
directories, which on a file system such as ext4 without a journal cost
more than a star's whole simulation (BENCHMARKS.md). Every counter is in
summary.json and counters.prom; `--set output.sysfs=true` writes the trees.";

/// `[sim]`: the reference's stop time and clock; both cores if
/// `partitions`.
pub(super) fn sim_table(w: &mut ScenarioFile, cfg: &HpccConfig, partitions: bool) {
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
pub(super) fn output_table(w: &mut ScenarioFile) {
    w.table(&["output"], false, "", "");
    w.comment(OUTPUT);
    w.set("sysfs", false, "");
}

/// `[topology]`: the reference's file, what rocesim does with its
/// multi-homed hosts and lossy links, and its LINK_DOWN as a link event.
/// `file` is the topology file as the scenario names it.
pub(super) fn topology_table(
    w: &mut ScenarioFile,
    config: &Path,
    cfg: &HpccConfig,
    topo_file: &crate::HpccTopology,
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

/// `[topology.host]`: the reference's NIC, with the config's DCQCN knobs
/// as the ConnectX names they map onto ([`DcqcnParams::hpcc_reference`]).
pub(super) fn host_tables(w: &mut ScenarioFile, cfg: &HpccConfig, topo: &crate::HpccTopology) {
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
    // CC_MODE 1 and 8 carry no INT header (IntHeader::NONE), so a data
    // packet is payload + SeqTsHeader 6 + UDP 8 + IPv4 20 + PppHeader 14,
    // an ACK 60 (`RdmaHw::GetNxtPacket`, `ReceiveUdp`). CC_MODE 7 adds its
    // 8-byte time stamp (IntHeader::TS) to both, the ACK's still inside
    // its 60 bytes (14 + 20 + qbbHeader 12 + 8 = 54, padded); the modes
    // that add more are refused above.
    if cfg.cc_mode == CcMode::Timely {
        w.set(
            "header_bytes",
            int(Billing::HPCC.header_bytes + 8),
            "          # its data packet: payload + SeqTs 6 and its time stamp 8, UDP 8, IPv4 20, PPP 14",
        );
    } else if cfg.cc_mode == CcMode::Hpcc {
        // CC_MODE 3 (IntHeader::NORMAL): 5 hops of 8 bytes and a count on
        // every packet, data and ACK alike, whatever the path's length.
        w.set(
            "header_bytes",
            int(Billing::HPCC_INT.header_bytes),
            "          # its data packet: payload + SeqTs 6 and its INT header 42, UDP 8, IPv4 20, PPP 14",
        );
        w.set(
            "ack_bytes",
            int(Billing::HPCC_INT.ack_bytes),
            "             # its ACK: PPP 14, IPv4 20, qbbHeader 12 and the INT header 42 it echoes",
        );
    } else if cfg.cc_mode == CcMode::HpccPint {
        // CC_MODE 10 (IntHeader::PINT): the header is its 2-byte union on
        // every packet; the ACK's 14 + 20 + 12 + 2 is padded to 60.
        w.set(
            "header_bytes",
            int(Billing::HPCC_PINT.header_bytes),
            "          # its data packet: payload + SeqTs 6 and its PINT header 2, UDP 8, IPv4 20, PPP 14",
        );
    } else {
        w.set(
            "header_bytes",
            int(Billing::HPCC.header_bytes),
            "          # its data packet: payload + SeqTs 6, UDP 8, IPv4 20, PPP 14",
        );
    }
    if cfg.cc_mode != CcMode::Hpcc {
        w.set(
            "ack_bytes",
            int(Billing::HPCC.ack_bytes),
            "             # its ACK, padded to 60 bytes",
        );
    }
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
                "  # VAR_WIN 1: window x the congestion control's rate / line rate",
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
    match cfg.cc_mode {
        CcMode::Dctcp => return dctcp_tables(w, cfg),
        CcMode::Timely => return timely_tables(w, cfg),
        CcMode::Hpcc | CcMode::HpccPint => return hpcc_tables(w, cfg, topo),
        _ => {}
    }
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

/// `[topology.host.cc]` for `CC_MODE 8`: DCTCP with the config's gain,
/// increase and floor. The profile's notification point stays as it is:
/// BECN on the ACK of every marked packet, the reference's CNP flag.
fn dctcp_tables(w: &mut ScenarioFile, cfg: &HpccConfig) {
    w.table(&["topology", "host", "cc"], false, "  ", "");
    w.set(
        "algorithm",
        "dctcp",
        "          # CC_MODE 8: on every ACK, alpha from the echoed marks, a cut per window",
    );
    w.blank();
    w.table(&["topology", "host", "cc", "dctcp"], false, "  ", "");
    w.set_aligned(
        "g",
        Value::from(cfg.ewma_gain),
        29,
        &format!("EWMA_GAIN {}", cfg.ewma_gain),
    );
    w.set_aligned(
        "rate_ai",
        Value::from(rate_key(cfg.dctcp_rate_ai)),
        29,
        &format!("DCTCP_RATE_AI {}", fmt_rate(cfg.dctcp_rate_ai)),
    );
    w.set_aligned(
        "min_rate",
        Value::from(rate_key(cfg.min_rate)),
        29,
        &format!("MIN_RATE {}", fmt_rate(cfg.min_rate)),
    );
}

/// `[topology.host.cc]` for `CC_MODE 7`: TIMELY with the config's steps
/// and floor; its thresholds are the reference's fixed `RdmaHw` defaults,
/// which the preset has (written out for the reader).
fn timely_tables(w: &mut ScenarioFile, cfg: &HpccConfig) {
    w.table(&["topology", "host", "cc"], false, "  ", "");
    w.set(
        "algorithm",
        "timely",
        "         # CC_MODE 7: a rate update per window of data, from the RTT its ACK echoes",
    );
    w.blank();
    w.table(&["topology", "host", "cc", "timely"], false, "  ", "");
    let rates = [
        ("rate_ai", cfg.rate_ai, "RATE_AI"),
        ("rate_hai", cfg.rate_hai, "RATE_HAI"),
    ];
    for (key, rate, name) in rates {
        if let Some(r) = rate {
            w.set_aligned(
                key,
                Value::from(rate_key(r)),
                29,
                &format!("{name} {}", fmt_rate(r)),
            );
        }
    }
    w.set_aligned(
        "min_rate",
        Value::from(rate_key(cfg.min_rate)),
        29,
        &format!("MIN_RATE {}", fmt_rate(cfg.min_rate)),
    );
    let fixed = "fixed in the reference (RdmaHw attribute default)";
    w.set_aligned(
        "ewma",
        Value::from(0.875),
        29,
        &format!("TimelyAlpha, {fixed}"),
    );
    w.set_aligned(
        "beta",
        Value::from(0.8),
        29,
        &format!("TimelyBeta, {fixed}"),
    );
    w.set_aligned(
        "t_low",
        Value::from("50us"),
        29,
        &format!("TimelyTLow, {fixed}"),
    );
    w.set_aligned(
        "t_high",
        Value::from("500us"),
        29,
        &format!("TimelyTHigh, {fixed}"),
    );
    w.set_aligned(
        "min_rtt",
        Value::from("20us"),
        29,
        &format!("TimelyMinRtt, {fixed}"),
    );
    w.set_aligned(
        "hai_after",
        int(5u32),
        29,
        "UpdateRateTimely's 5 additive steps before hyper-active ones",
    );
}

/// `[topology.host.cc]` for `CC_MODE 3`: HPCC with every knob the config
/// sets, and the base RTT third.cc gives every QP with `GLOBAL_T 1`
/// (`maxRtt`); for `CC_MODE 10`, HPCC-PINT with the knobs
/// `UpdateRateHpPint` reads and the power's (it reacts to every sampled
/// ACK, so `FAST_REACT`, `MULTI_RATE`, `SAMPLE_FEEDBACK` and `INT_MULTI`
/// do not apply).
fn hpcc_tables(w: &mut ScenarioFile, cfg: &HpccConfig, topo: &crate::HpccTopology) {
    let pint = cfg.cc_mode == CcMode::HpccPint;
    w.table(&["topology", "host", "cc"], false, "  ", "");
    if pint {
        w.set(
            "algorithm",
            "hpcc_pint",
            "      # CC_MODE 10: rate from the largest utilisation the switches encode",
        );
    } else {
        w.set(
            "algorithm",
            "hpcc",
            "           # CC_MODE 3: rate from the utilisation the switches' telemetry reports",
        );
    }
    w.blank();
    w.table(&["topology", "host", "cc", "hpcc"], false, "  ", "");
    w.set_aligned(
        "u_target",
        Value::from(cfg.u_target),
        29,
        &format!("U_TARGET {}", cfg.u_target),
    );
    if let Some(r) = cfg.rate_ai {
        w.set_aligned(
            "rate_ai",
            Value::from(rate_key(r)),
            29,
            &format!("RATE_AI {}", fmt_rate(r)),
        );
    }
    w.set_aligned(
        "min_rate",
        Value::from(rate_key(cfg.min_rate)),
        29,
        &format!("MIN_RATE {}", fmt_rate(cfg.min_rate)),
    );
    w.set_aligned(
        "mi_thresh",
        int(cfg.mi_thresh),
        29,
        &format!("MI_THRESH {}", cfg.mi_thresh),
    );
    if pint {
        w.set_aligned(
            "pint_log_base",
            Value::from(cfg.pint_log_base),
            29,
            &format!("PINT_LOG_BASE {}", cfg.pint_log_base),
        );
        w.set_aligned(
            "pint_prob",
            Value::from(cfg.pint_prob),
            29,
            &format!("PINT_PROB {}", cfg.pint_prob),
        );
    } else {
        for (key, v, name) in [
            ("fast_react", cfg.fast_react, "FAST_REACT"),
            ("multi_rate", cfg.multi_rate, "MULTI_RATE"),
            ("sample_feedback", cfg.sample_feedback, "SAMPLE_FEEDBACK"),
        ] {
            w.set_aligned(key, Value::from(v), 29, &format!("{name} {}", u8::from(v)));
        }
        w.set_aligned(
            "int_multi",
            int(cfg.int_multi.min(255)),
            29,
            &format!("INT_MULTI {}", cfg.int_multi),
        );
    }
    let (_, rtt) = topo.max_bdp(cfg.packet_payload_size);
    w.set_aligned(
        "base_rtt",
        Value::from(format!("{rtt}ns")),
        29,
        "GLOBAL_T 1: maxRtt, every QP's base RTT",
    );
}

/// A rate as a scenario writes it: whole Mb/s as `"615Mbps"`, else bit/s.
fn rate_key(r: rocesim_model::time::Rate) -> String {
    if r.bps() % 1_000_000 == 0 {
        format!("{}Mbps", r.bps() / 1_000_000)
    } else {
        format!("{}bps", r.bps())
    }
}

pub(super) fn opt_rate(r: Option<rocesim_model::time::Rate>) -> String {
    r.map_or("-".into(), fmt_rate)
}

/// `[topology.switch]`: the buffer, the reference's MMU and its ECN
/// thresholds for every link speed of the fabric.
pub(super) fn switch_tables(
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
             reserves, headroom, dynamic PFC thresholds) and egress queue (priority 0\n\
             first, then round robin), RED marking on dequeue;\n\
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
    // BEgressQueue::DoDequeueRR: queue 0 first, then one packet per queue
    // in turn. On the reference's own experiments (one data priority) the
    // flows finish at exactly the times strict priority gives.
    w.table(&["topology", "switch", "ets"], false, "  ", "");
    w.set(
        "preset",
        SWITCH_PRESET,
        "    # its egress queue: priority 0 first, then round robin",
    );
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
