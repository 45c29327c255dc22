//! `compare --format table`: the sides, then the flows (two tables: rate
//! and messages; loss, congestion and slave), the slaves, PFC and the
//! notes, every figure of A beside B's and their difference B - A.

use std::io::{self, Write};

use roce_capture::human::{bytes, duration, rate, table};

use super::{Comparison, FlowRow, FlowSide, SlaveSide};

/// A signed difference as `+3`, `-1`, `0`.
fn signed(d: i64) -> String {
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

/// A signed duration difference: `+1.20 µs`, `-3.000 ms`, `0 ns`.
fn signed_duration(d: i64) -> String {
    let mag = duration(d.unsigned_abs());
    match d.signum() {
        1 => format!("+{mag}"),
        -1 => format!("-{mag}"),
        _ => mag,
    }
}

/// `+1.2%` (or `-` without a base).
fn pct(p: Option<f64>) -> String {
    p.map_or("-".into(), |p| format!("{p:+.1}%"))
}

/// `a/b` of one figure of a row, `-` for a missing side.
fn pair(r: &FlowRow, f: impl Fn(&FlowSide) -> String) -> String {
    let cell = |s: &Option<FlowSide>| s.as_ref().map_or("-".to_string(), &f);
    format!("{}/{}", cell(&r.a), cell(&r.b))
}

fn cell(s: &Option<FlowSide>, f: impl Fn(&FlowSide) -> String) -> String {
    s.as_ref().map_or("-".to_string(), f)
}

fn opt_duration(v: Option<u64>) -> String {
    v.map_or("-".into(), duration)
}

fn slave_name(c: &Comparison, b: bool, s: &FlowSide) -> String {
    let files = if b { &c.b.files } else { &c.a.files };
    match s.slave {
        Some(i) => {
            let f = &files[i];
            format!("{i} {}", f.rsplit('/').next().unwrap_or(f))
        }
        None => "-".into(),
    }
}

/// Indents every line of a text table by two spaces.
fn indented(t: String) -> String {
    t.lines().map(|l| format!("  {l}\n")).collect()
}

/// The sides' figures: a header row, then one row per figure with A, B
/// and B - A.
pub fn side_rows(c: &Comparison) -> Vec<Vec<String>> {
    let row = |name: &str, a: String, b: String, d: String| vec![name.to_string(), a, b, d];
    let g = c.b.goodput_gbps - c.a.goodput_gbps;
    vec![
        row("", "A".into(), "B".into(), "B - A".into()),
        row("input", c.a.input.clone(), c.b.input.clone(), String::new()),
        row("kind", c.a.kind.into(), c.b.kind.into(), String::new()),
        row(
            "scenario",
            c.a.scenario.clone().unwrap_or("-".into()),
            c.b.scenario.clone().unwrap_or("-".into()),
            String::new(),
        ),
        row(
            "captures",
            c.a.files.len().to_string(),
            c.b.files.len().to_string(),
            signed(c.b.files.len() as i64 - c.a.files.len() as i64),
        ),
        row(
            "link speed",
            rate(c.a.link_speed_gbps),
            rate(c.b.link_speed_gbps),
            String::new(),
        ),
        row(
            "duration",
            duration(c.a.duration_ns),
            duration(c.b.duration_ns),
            signed_duration(c.b.duration_ns as i64 - c.a.duration_ns as i64),
        ),
        row(
            "RoCE frames",
            c.a.roce_packets.to_string(),
            c.b.roce_packets.to_string(),
            signed(c.b.roce_packets as i64 - c.a.roce_packets as i64),
        ),
        row(
            "request flows",
            c.a.flows.to_string(),
            c.b.flows.to_string(),
            signed(c.b.flows as i64 - c.a.flows as i64),
        ),
        row(
            "goodput",
            rate(c.a.goodput_gbps),
            rate(c.b.goodput_gbps),
            format!(
                "{}{} ({})",
                if g < 0.0 { "-" } else { "+" },
                rate(g.abs()),
                pct((c.a.goodput_gbps > 0.0).then(|| g / c.a.goodput_gbps * 100.0))
            ),
        ),
    ]
}

/// Goodput and messages of every flow row.
pub fn flow_rate_rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "#",
            "match",
            "flow",
            "goodput A",
            "goodput B",
            "B - A",
            "messages",
            "latency p50",
            "latency p99",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (i, r) in c.flows.iter().enumerate() {
        rows.push(vec![
            i.to_string(),
            r.matched.name().to_string(),
            flow_label(r),
            cell(&r.a, |s| rate(s.figures.goodput_gbps)),
            cell(&r.b, |s| rate(s.figures.goodput_gbps)),
            r.diff.as_ref().map_or("-".into(), |d| pct(d.goodput_pct)),
            pair(r, |s| s.figures.messages.to_string()),
            pair(r, |s| opt_duration(s.figures.message_latency_ns.p50)),
            pair(r, |s| opt_duration(s.figures.message_latency_ns.p99)),
        ]);
    }
    rows
}

/// Loss, congestion and the slave of every flow row.
pub fn flow_loss_rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "#",
            "retx",
            "go-back-N",
            "timeouts",
            "NAKs",
            "CNPs",
            "ECN-CE %",
            "slave A",
            "slave B",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (i, r) in c.flows.iter().enumerate() {
        rows.push(vec![
            i.to_string(),
            pair(r, |s| s.figures.retransmitted_packets.to_string()),
            pair(r, |s| s.figures.go_back_n.to_string()),
            pair(r, |s| s.figures.timeouts.to_string()),
            pair(r, |s| s.figures.naks.to_string()),
            pair(r, |s| s.figures.cnps.to_string()),
            pair(r, |s| format!("{:.2}", 100.0 * s.ecn_ce_share)),
            cell(&r.a, |s| slave_name(c, false, s)),
            cell(&r.b, |s| slave_name(c, true, s)),
        ]);
    }
    rows
}

/// Bytes per slave and the flows each carried, A beside B.
pub fn slave_table_rows(c: &Comparison) -> Vec<Vec<String>> {
    let mut rows = vec![
        [
            "slave", "A", "RoCE A", "share A", "B", "RoCE B", "share B", "B - A", "flows A",
            "flows B",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let flows_on = |v: &[usize]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter()
                .map(|k| format!("#{k}"))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    for s in &c.slaves {
        let side = |x: &Option<SlaveSide>, f: &dyn Fn(&SlaveSide) -> String| {
            x.as_ref().map_or("-".to_string(), f)
        };
        let name = |x: &SlaveSide| x.file.rsplit('/').next().unwrap_or(&x.file).to_string();
        let share = |x: &SlaveSide| format!("{:.1}%", 100.0 * x.share);
        rows.push(vec![
            s.slave.to_string(),
            side(&s.a, &name),
            side(&s.a, &|x| bytes(x.roce_bytes)),
            side(&s.a, &share),
            side(&s.b, &name),
            side(&s.b, &|x| bytes(x.roce_bytes)),
            side(&s.b, &share),
            s.diff_share
                .map_or("-".into(), |d| format!("{:+.1} pt", 100.0 * d)),
            side(&s.a, &|x| flows_on(&x.flows)),
            side(&s.b, &|x| flows_on(&x.flows)),
        ]);
    }
    rows
}

/// Pause frames and time per priority (empty without any).
pub fn pfc_table_rows(c: &Comparison) -> Vec<Vec<String>> {
    if c.pfc.is_empty() {
        return Vec::new();
    }
    let mut rows = vec![
        [
            "priority", "XOFF A", "paused A", "XOFF B", "paused B", "B - A",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for p in &c.pfc {
        rows.push(vec![
            p.priority.map_or("802.3x".into(), |p| p.to_string()),
            p.a.xoff_frames.to_string(),
            duration(p.a.pause_ns as u64),
            p.b.xoff_frames.to_string(),
            duration(p.b.pause_ns as u64),
            signed_duration(p.diff_pause_ns.round() as i64),
        ]);
    }
    rows
}

/// The headings of the tables, as both the text and the HTML report write
/// them.
pub const FLOW_RATE_TITLE: &str = "FLOWS: goodput and messages (A/B)";
pub const FLOW_LOSS_TITLE: &str = "FLOWS: loss, congestion and slave (A/B)";
pub const SLAVES_TITLE: &str = "SLAVES (the i-th capture of A beside the i-th of B)";
pub const PFC_TITLE: &str = "PFC / PAUSE (all captures and senders of a side)";
pub const NO_PFC: &str = "no MAC-control frames on either side (host NICs usually consume them before a host capture sees them)";

/// Writes the comparison as the text tables people read.
pub fn write_table(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "roce-pcap compare: {}\n", c.match_line())?;
    writeln!(out, "SIDES")?;
    write!(out, "{}", indented(table(&side_rows(c))))?;
    writeln!(out, "\n{FLOW_RATE_TITLE}")?;
    if c.flows.is_empty() {
        writeln!(out, "  none: no RoCE request flows on either side")?;
    } else {
        write!(out, "{}", indented(table(&flow_rate_rows(c))))?;
        writeln!(out, "\n{FLOW_LOSS_TITLE}")?;
        write!(out, "{}", indented(table(&flow_loss_rows(c))))?;
    }
    writeln!(out, "\n{SLAVES_TITLE}")?;
    write!(out, "{}", indented(table(&slave_table_rows(c))))?;
    writeln!(out, "\n{PFC_TITLE}")?;
    let pfc = pfc_table_rows(c);
    if pfc.is_empty() {
        writeln!(out, "  {NO_PFC}")?;
    } else {
        write!(out, "{}", indented(table(&pfc)))?;
    }
    if !c.notes.is_empty() {
        writeln!(out, "\nNOTES")?;
        for n in &c.notes {
            writeln!(out, "  {n}")?;
        }
    }
    Ok(())
}

/// A's name of the flow, with B's after `=` when it differs.
pub(super) fn flow_label(r: &FlowRow) -> String {
    match (&r.a, &r.b) {
        (Some(a), Some(b)) if a.flow != b.flow => format!("{} = {}", a.flow, b.flow),
        (Some(a), _) => a.flow.clone(),
        (None, Some(b)) => b.flow.clone(),
        (None, None) => String::new(),
    }
}
