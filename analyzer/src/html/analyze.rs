//! The page of `analyze --html`: the report's tables, its plots, and for a
//! rocesim run directory the simulator's own summary.

use roce_capture::human::{bytes, duration, plural, rate};

use super::{Page, run};
use crate::compare::flow_name;
use crate::flags::Analyzed;
use crate::plot::PlotError;

/// Time-sequence graphs on a page: the flows with the most packets.
const PAGE_TSGS: usize = 4;

fn opt_duration(v: Option<u64>) -> String {
    v.map_or("-".into(), duration)
}

/// The page of `analyze --html` for the analysis `a` (with time series).
pub fn analyze_page(a: &Analyzed) -> Result<String, PlotError> {
    let r = &a.analysis.report;
    let inputs: Vec<String> = a
        .inputs
        .list
        .iter()
        .map(|i| roce_capture::read::input_name(&i.arg))
        .collect();
    let mut page = Page::new(&format!("roce-pcap analyze: {}", inputs.join(" ")));
    page.p(&format!("{}.", r.headline()));
    for w in &a.analysis.warnings {
        page.list(&[(Some("warning"), w.clone())]);
    }

    page.h2("files", "Files");
    let mut rows = vec![
        [
            "file",
            "frames",
            "bytes",
            "RoCE",
            "MAC control",
            "truncated",
            "ICRC bad",
            "duration",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for f in &r.files {
        rows.push(vec![
            f.file.clone(),
            f.packets.to_string(),
            bytes(f.bytes),
            f.roce_packets.to_string(),
            f.mac_control_frames.to_string(),
            f.truncated_frames.to_string(),
            f.icrc_errors.to_string(),
            duration(f.duration_ns),
        ]);
    }
    page.table(&rows);

    page.h2("flows", "Request flows");
    let figures = r.qp_figures();
    if figures.is_empty() {
        page.p("None: no RoCE requests in these files.");
    } else {
        let mut rows = vec![
            [
                "#",
                "flow",
                "sport",
                "packets",
                "bytes",
                "goodput",
                "messages",
                "latency p50",
                "latency p99",
                "retx",
                "go-back-N",
                "timeouts",
                "NAKs",
                "ECN-CE",
                "CNPs",
                "slave",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for (q, f) in r.qps.iter().zip(&figures) {
            rows.push(vec![
                q.id.to_string(),
                flow_name(f),
                f.udp_sport.to_string(),
                f.packets.to_string(),
                bytes(f.wire_bytes),
                rate(f.goodput_gbps),
                f.messages.to_string(),
                opt_duration(f.message_latency_ns.p50),
                opt_duration(f.message_latency_ns.p99),
                f.retransmitted_packets.to_string(),
                f.go_back_n.to_string(),
                f.timeouts.to_string(),
                f.naks.to_string(),
                q.ecn_ce_packets.to_string(),
                q.cnps.to_string(),
                f.port
                    .as_deref()
                    .map_or("-".into(), |p| p.rsplit('/').next().unwrap_or(p).into()),
            ]);
        }
        page.table(&rows);
    }

    page.h2("pfc", "PFC / PAUSE");
    if r.pfc.is_empty() {
        page.p(&format!(
            "No MAC-control frames in {}: host NICs usually consume PFC frames before a host \
             capture sees them, so this does not mean no pauses happened.",
            plural(r.files.len() as u64, "file")
        ));
    } else {
        page.p(&format!(
            "Pause quanta turned into time at {}.",
            rate(r.options.link_speed_gbps)
        ));
        let mut rows = vec![
            [
                "file", "sender", "priority", "XOFF", "XON", "paused", "share", "longest",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for p in &r.pfc {
            rows.push(vec![
                p.file.rsplit('/').next().unwrap_or(&p.file).to_string(),
                p.src_mac.clone(),
                p.priority.map_or("802.3x".into(), |p| p.to_string()),
                p.xoff_frames.to_string(),
                p.xon_frames.to_string(),
                duration(p.pause_ns as u64),
                format!("{:.2}%", 100.0 * p.paused_fraction),
                duration(p.longest_pause_ns as u64),
            ]);
        }
        page.table(&rows);
    }

    page.h2("slaves", "Bond slaves and the QP-to-slave map");
    let mut rows = vec![
        ["slave", "file", "RoCE frames", "RoCE bytes", "share"]
            .map(String::from)
            .to_vec(),
    ];
    for (i, f) in r.lag.files.iter().enumerate() {
        rows.push(vec![
            i.to_string(),
            f.file.clone(),
            f.roce_packets.to_string(),
            bytes(f.roce_bytes),
            format!("{:.1}%", 100.0 * f.share_of_roce_bytes),
        ]);
    }
    page.table(&rows);
    if let Some(imb) = r.lag.imbalance {
        page.p(&format!(
            "Imbalance (largest over mean RoCE bytes): {imb:.3} (1 is perfect)."
        ));
    }
    if !r.lag.qp_map.is_empty() {
        let mut rows = vec![
            [
                "#",
                "flow",
                "sport",
                "requests on",
                "responses on",
                "layer3+4 predicts",
                "layer2+3 predicts",
                "moves",
            ]
            .map(String::from)
            .to_vec(),
        ];
        let short = |f: &Option<String>| {
            f.as_deref().map_or("-".into(), |p| {
                p.rsplit('/').next().unwrap_or(p).to_string()
            })
        };
        for m in &r.lag.qp_map {
            rows.push(vec![
                m.qp.to_string(),
                format!("{} -> {}:{:#x}", m.src, m.dst, m.dqpn),
                m.sport.to_string(),
                short(&m.request_file),
                short(&m.response_file),
                short(&m.predicted_layer3_4),
                short(&m.predicted_layer2_3),
                m.moves_total.to_string(),
            ]);
        }
        page.table(&rows);
        page.p(r.lag.note);
    }

    page.h2("findings", "Findings");
    if r.findings.is_empty() {
        page.p("None.");
    } else {
        let items: Vec<(Option<&str>, String)> = r
            .findings
            .iter()
            .map(|f| {
                (
                    Some(f.severity.name()),
                    format!("{} {}: {}", f.severity.name(), f.rule, f.message),
                )
            })
            .collect();
        page.list(&items);
    }

    page.h2("plots", "Plots");
    for (name, svg) in crate::plot::svgs(&a.analysis, PAGE_TSGS)? {
        let caption = match name.as_str() {
            "goodput_qps" => {
                "Goodput per request flow (first transmissions) over time.".to_string()
            }
            "goodput_files" => "RoCE payload per capture file (bond slave) over time.".to_string(),
            "pfc" => "Paused intervals per file, sender and priority.".to_string(),
            "ecn_cnp" => "ECN-CE marked packets and CNPs per second.".to_string(),
            tsg => format!(
                "PSN time-sequence of flow #{} (first transmissions, resends, ACKs, NAKs){}.",
                tsg.trim_start_matches("tsg_qp").trim_end_matches("_zoom"),
                if tsg.ends_with("_zoom") {
                    ", zoomed on its traffic"
                } else {
                    ""
                }
            ),
        };
        page.figure(&svg, &caption);
    }
    if let Some(run) = a.inputs.run() {
        run::sections(&mut page, "run", "", run);
    }
    Ok(page.finish())
}
