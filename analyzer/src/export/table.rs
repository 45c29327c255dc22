//! `--format table`: what a person reads in a terminal. One summary line
//! per flow, then the details that matter for that flow, then PFC, LAG and
//! the findings.

use std::io::{self, Write};

use roce_capture::human::{bytes, duration, plural, rate};

use super::Exporter;
use crate::analyze::Report;
use crate::analyze::model::{FrameRef, QpReport, QpTelemetry, Summary, flow_label};

pub struct TableExporter;

fn frame(r: &Report, f: FrameRef) -> String {
    let name = r
        .files
        .get(f.file as usize)
        .map(|f| f.file.rsplit('/').next().unwrap_or(&f.file).to_string())
        .unwrap_or_default();
    format!("{name}#{}", f.frame)
}

fn p50_p99_max(s: &Summary) -> String {
    match (s.p50, s.p99, s.max) {
        (Some(a), Some(b), Some(c)) => format!("{}/{}/{}", duration(a), duration(b), duration(c)),
        _ => "-".into(),
    }
}

fn qpn(q: Option<u32>) -> String {
    q.map_or("?".into(), |q| format!("{q:#x}"))
}

/// `CONNECTION SET-UP`: one line per CM or perftest exchange, only when
/// the capture holds one.
fn setup_section(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    if r.setups.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "CONNECTION SET-UP")?;
    for s in &r.setups {
        let side = |q: Option<u32>, p: Option<u32>| match (q, p) {
            (Some(q), Some(p)) => format!("QP {q:#x} PSN {p:#x}"),
            _ => "QP ?".to_string(),
        };
        let time = s
            .established_ns
            .map_or(String::new(), |t| format!(" in {}", duration(t)));
        let mut extra = Vec::new();
        if s.retries > 0 {
            extra.push(match s.retries {
                1 => "1 retry".to_string(),
                n => format!("{n} retries"),
            });
        }
        if s.mras > 0 {
            extra.push(plural(s.mras, "MRA"));
        }
        if let (Some(c), Some(n)) = (s.reject_reason, s.reject_reason_name) {
            extra.push(format!("reason {c} ({n})"));
        }
        if !s.qps.is_empty() {
            let ids: Vec<String> = s.qps.iter().map(|q| format!("[{q}]")).collect();
            extra.push(format!("flows {}", ids.join(" ")));
        }
        let extra = if extra.is_empty() {
            String::new()
        } else {
            format!(", {}", extra.join(", "))
        };
        writeln!(
            out,
            "  {:<7} {} {} -> {} {}: {}{time}{extra}; first frame {}",
            s.method,
            s.active,
            side(s.active_qpn, s.active_psn),
            s.passive,
            side(s.passive_qpn, s.passive_psn),
            s.outcome,
            frame(r, s.first_frame)
        )?;
    }
    Ok(())
}

fn flow_details(r: &Report, f: &QpReport, out: &mut dyn Write) -> io::Result<()> {
    let ports = match f.response_sport {
        Some(p) if p != f.sport => format!("{} (responses {p})", f.sport),
        _ => f.sport.to_string(),
    };
    writeln!(
        out,
        "  [{}] {} QP {} -> {} QP {:#x}  {}  UDP sport {ports}  first frame {}",
        f.id,
        f.src,
        qpn(f.requester_qpn),
        f.dst,
        f.dqpn,
        f.transport,
        frame(r, f.first_frame)
    )?;
    if let Some(s) = f.setup {
        let time = s.established_ns.map_or(String::new(), |t| {
            format!(", established in {}", duration(t))
        });
        writeln!(
            out,
            "      set up by {} (set-up {}){time}",
            s.method, s.setup
        )?;
    }
    let per_file = f
        .per_file
        .iter()
        .map(|p| {
            format!(
                "{} ({} req, {} resp)",
                p.file, p.request_packets, p.response_packets
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(out, "      files     {per_file}")?;
    writeln!(
        out,
        "      traffic   {} ({}, {}), {}, payload {}, {} goodput over {}",
        plural(f.packets, "packet"),
        plural(f.request_packets, "request"),
        plural(f.response_packets, "response"),
        bytes(f.bytes),
        bytes(f.payload_bytes),
        rate(f.goodput_gbps),
        duration(f.duration_ns)
    )?;
    let ops = f
        .opcodes
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(out, "      opcodes   {ops}")?;
    let kinds = f
        .messages_by_kind
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(
        out,
        "      messages  {}{}{}, size p50 {} max {}, latency p50/p99/max {}",
        f.messages,
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({kinds})")
        },
        if f.partial_messages > 0 {
            format!(", {} partial", f.partial_messages)
        } else {
            String::new()
        },
        f.message_size.p50.map_or("-".into(), bytes),
        f.message_size.max.map_or("-".into(), bytes),
        p50_p99_max(&f.message_latency_ns)
    )?;
    writeln!(
        out,
        "      PSN       {}..{} ({}{}){}",
        f.psn.first.map_or("-".into(), |p| p.to_string()),
        f.psn.last.map_or("-".into(), |p| p.to_string()),
        plural(f.psn.span, "PSN"),
        if f.psn.wrapped { ", wrapped" } else { "" },
        f.pmtu.map_or(String::new(), |m| format!(", path MTU {m}"))
    )?;
    writeln!(
        out,
        "      loss      {} retransmitted ({}), {} out of sequence ({} missing), {}{}, {}",
        f.retransmitted_packets,
        bytes(f.retransmitted_bytes),
        f.out_of_sequence,
        plural(f.missing_psns, "PSN"),
        plural(f.go_back_n.episodes, "go-back-N episode"),
        if f.go_back_n.by_cause.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                f.go_back_n
                    .by_cause
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        plural(f.mirror_duplicates, "mirror duplicate")
    )?;
    for e in f.go_back_n.list.iter().take(8) {
        writeln!(
            out,
            "                {} back to PSN {} (highest sent {}): {}, {}, cause {}{}, {} after the previous request",
            frame(r, e.frame),
            e.rewind_psn,
            e.highest_psn,
            plural(e.packets, "packet"),
            bytes(e.bytes),
            e.cause,
            e.cause_frame
                .map_or(String::new(), |c| format!(" {}", frame(r, c))),
            duration(e.gap_ns)
        )?;
    }
    if f.go_back_n.list.len() > 8 {
        writeln!(
            out,
            "                ... {} more (see --format json)",
            f.go_back_n.episodes - 8
        )?;
    }
    let naks = if f.naks.is_empty() {
        "none".to_string()
    } else {
        f.naks
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let rnr = if f.rnr_naks.timers_us.is_empty() {
        String::new()
    } else {
        format!(
            " (RNR timers {})",
            f.rnr_naks
                .timers_us
                .iter()
                .map(|(t, n)| format!("{t} µs×{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    writeln!(
        out,
        "      acks      {}{}, RTT p50/p99/max {} ({}); NAKs {naks}{rnr}",
        plural(f.acks, "ACK"),
        if f.repeated_responses > 0 {
            format!(
                " ({} repeated: re-ACKs of duplicates)",
                f.repeated_responses
            )
        } else {
            String::new()
        },
        p50_p99_max(&f.ack_rtt_ns),
        plural(f.ack_rtt_ns.samples, "sample")
    )?;
    if let Some(t) = &f.telemetry {
        telemetry_lines(t, out)?;
    }
    writeln!(
        out,
        "      ecn       {} CE ({:.2}%), {}, CE→CNP p50/p99/max {}; ICRC errors {}{}",
        f.ecn_ce_packets,
        100.0 * f.ecn_ce_fraction,
        plural(f.cnps, "CNP"),
        p50_p99_max(&f.cnp_delay_ns),
        f.icrc_errors,
        if f.icrc_unchecked > 0 {
            format!(" ({} not checkable: snaplen)", f.icrc_unchecked)
        } else {
            String::new()
        }
    )
}

/// In-band telemetry: how many requests carried records (and ACKs echoed
/// them), then one line per hop of the path.
fn telemetry_lines(t: &QpTelemetry, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "      INT       {} with records, echoed on {}",
        plural(t.requests, "request"),
        plural(t.echoes, "ACK"),
    )?;
    let pct = |u: Option<f64>| u.map_or("-".to_string(), |u| format!("{:.1}%", 100.0 * u));
    for h in &t.hops {
        writeln!(
            out,
            "                hop {} at {}: queue max {} mean {}, utilisation mean {} max {} ({})",
            h.hop,
            rate(h.rate_gbps),
            bytes(h.qlen_max_bytes),
            bytes(h.qlen_mean_bytes.round() as u64),
            pct(h.utilisation_mean),
            pct(h.utilisation_max),
            plural(h.intervals, "interval"),
        )?;
    }
    Ok(())
}

impl Exporter for TableExporter {
    fn write(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "roce-pcap analyze: {}", r.headline())?;
        writeln!(out)?;
        writeln!(out, "FILES")?;
        let w = r
            .files
            .iter()
            .map(|f| f.file.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(
            out,
            "  {:<w$} {:>10} {:>12} {:>10} {:>8} {:>9} {:>8} {:>12}",
            "file", "frames", "bytes", "roce", "macctl", "truncated", "icrc-bad", "duration"
        )?;
        for f in &r.files {
            writeln!(
                out,
                "  {:<w$} {:>10} {:>12} {:>10} {:>8} {:>9} {:>8} {:>12}{}",
                f.file,
                f.packets,
                bytes(f.bytes),
                f.roce_packets,
                f.mac_control_frames,
                f.truncated_frames,
                f.icrc_errors,
                duration(f.duration_ns),
                f.cut_at_offset
                    .map_or(String::new(), |o| format!("  CUT at byte {o}"))
            )?;
        }
        writeln!(out)?;
        writeln!(out, "REQUEST FLOWS (requester -> responder QP)")?;
        let flows: Vec<String> = r
            .qps
            .iter()
            .map(|f| flow_label(&f.src, f.requester_qpn, &f.dst, f.dqpn))
            .collect();
        let w = flows
            .iter()
            .map(|f| f.chars().count())
            .max()
            .unwrap_or(0)
            .max(4);
        if r.qps.is_empty() {
            writeln!(out, "  none: no RoCE requests in these files")?;
        } else {
            writeln!(
                out,
                "  {:>3} {:<w$} {:>6} {:>8} {:>10} {:>12} {:>6} {:>6} {:>5} {:>5} {:>5} {:>6} {:>6}",
                "#",
                "flow",
                "sport",
                "packets",
                "bytes",
                "goodput",
                "msgs",
                "retx",
                "oos",
                "gbn",
                "naks",
                "ce",
                "cnps"
            )?;
        }
        for (f, flow) in r.qps.iter().zip(&flows) {
            writeln!(
                out,
                "  {:>3} {:<w$} {:>6} {:>8} {:>10} {:>12} {:>6} {:>6} {:>5} {:>5} {:>5} {:>6} {:>6}",
                f.id,
                flow,
                f.sport,
                f.packets,
                bytes(f.bytes),
                rate(f.goodput_gbps),
                f.messages,
                f.retransmitted_packets,
                f.out_of_sequence,
                f.go_back_n.episodes,
                f.naks.values().sum::<u64>(),
                f.ecn_ce_packets,
                f.cnps
            )?;
        }
        writeln!(out)?;
        for f in &r.qps {
            flow_details(r, f, out)?;
        }
        setup_section(r, out)?;
        if !r.response_only.is_empty() {
            writeln!(out)?;
            writeln!(out, "RESPONSES WITHOUT REQUESTS")?;
            for ro in &r.response_only {
                writeln!(
                    out,
                    "  {} -> {} QP {:#x} sport {}: {} ({}, {}) in {}",
                    ro.src,
                    ro.dst,
                    ro.requester_qpn,
                    ro.sport,
                    plural(ro.packets, "packet"),
                    ro.acks_naks_cnps(),
                    plural(ro.read_responses, "READ response"),
                    ro.files.join(", ")
                )?;
            }
        }
        writeln!(out)?;
        writeln!(out, "PFC / PAUSE (at {} Gb/s)", r.options.link_speed_gbps)?;
        if r.pfc.is_empty() {
            let none: Vec<&str> = r
                .files
                .iter()
                .filter(|f| f.mac_control_frames == 0)
                .map(|f| f.file.as_str())
                .collect();
            writeln!(
                out,
                "  no MAC-control frames in {}: host NICs usually consume PFC frames before a host capture sees them, so this does not mean no pauses happened",
                none.join(", ")
            )?;
        } else {
            let w = r
                .pfc
                .iter()
                .map(|p| p.file.chars().count())
                .max()
                .unwrap_or(4)
                .max(4);
            writeln!(
                out,
                "  {:<w$} {:<17} {:>4} {:>8} {:>8} {:>14} {:>8} {:>14}",
                "file", "sender", "prio", "xoff", "xon", "paused", "share", "longest"
            )?;
            for p in &r.pfc {
                writeln!(
                    out,
                    "  {:<w$} {:<17} {:>4} {:>8} {:>8} {:>14} {:>7.2}% {:>14}",
                    p.file,
                    p.src_mac,
                    p.priority.map_or("all".into(), |p| p.to_string()),
                    p.xoff_frames,
                    p.xon_frames,
                    duration(p.pause_ns as u64),
                    100.0 * p.paused_fraction,
                    duration(p.longest_pause_ns as u64)
                )?;
            }
        }
        if r.lag.files.len() >= 2 {
            writeln!(out)?;
            writeln!(
                out,
                "LAG BALANCE (imbalance max/mean {:.2})",
                r.lag.imbalance.unwrap_or(0.0)
            )?;
            let w = r
                .lag
                .files
                .iter()
                .map(|f| f.file.chars().count())
                .max()
                .unwrap_or(4);
            for f in &r.lag.files {
                writeln!(
                    out,
                    "  {:<w$} {:>10} RoCE frames {:>12} {:>6.1}%",
                    f.file,
                    f.roce_packets,
                    bytes(f.roce_bytes),
                    100.0 * f.share_of_roce_bytes
                )?;
            }
            let lag_flows: Vec<String> = r
                .lag
                .qp_map
                .iter()
                .map(|m| format!("{} -> {}:{:#x}", m.src, m.dst, m.dqpn))
                .collect();
            let fw = lag_flows
                .iter()
                .map(|f| f.chars().count())
                .max()
                .unwrap_or(0)
                .max(4);
            let short = |s: &Option<String>| {
                s.as_deref().map_or("-".to_string(), |s| {
                    s.rsplit('/').next().unwrap_or(s).to_string()
                })
            };
            let sw = r
                .lag
                .files
                .iter()
                .map(|f| short(&Some(f.file.clone())).chars().count())
                .max()
                .unwrap_or(0)
                .max(20);
            writeln!(
                out,
                "  {:>3} {:<fw$} {:>6}  {:<sw$} {:<sw$} {:<sw$} {:>5}",
                "#",
                "flow",
                "sport",
                "requests on",
                "layer3+4 predicts",
                "layer2+3 predicts",
                "moves"
            )?;
            for (m, flow) in r.lag.qp_map.iter().zip(&lag_flows) {
                writeln!(
                    out,
                    "  {:>3} {:<fw$} {:>6}  {:<sw$} {:<sw$} {:<sw$} {:>5}",
                    m.qp,
                    flow,
                    m.sport,
                    short(&m.request_file),
                    short(&m.predicted_layer3_4),
                    short(&m.predicted_layer2_3),
                    m.moves_total
                )?;
            }
            writeln!(out, "  note: {}", r.lag.note)?;
        }
        writeln!(out)?;
        writeln!(out, "FINDINGS")?;
        if r.findings.is_empty() {
            writeln!(out, "  none")?;
        }
        for f in &r.findings {
            let frames = if f.frames.is_empty() {
                String::new()
            } else {
                format!(
                    " [frames {}]",
                    f.frames
                        .iter()
                        .take(8)
                        .map(|&fr| frame(r, fr))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            };
            writeln!(
                out,
                "  {:<7} {:<18} {}{frames}",
                f.severity.name(),
                f.rule,
                f.message
            )?;
        }
        Ok(())
    }
}
