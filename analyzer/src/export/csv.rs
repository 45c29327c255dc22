//! `--format csv`: one row per request flow, for spreadsheets and scripts.
//! The last two columns say how the flow's QPs were connected (`rdma_cm`,
//! `socket`, empty when the capture does not hold the set-up) and how long
//! that took.

use std::io::{self, Write};

use super::Exporter;
use crate::analyze::Report;
use crate::analyze::model::Summary;

pub struct CsvExporter;

const COLUMNS: &[&str] = &[
    "id",
    "src",
    "dst",
    "dqpn",
    "requester_qpn",
    "transport",
    "sport",
    "files",
    "packets",
    "bytes",
    "payload_bytes",
    "duration_ns",
    "goodput_gbps",
    "messages",
    "message_latency_p50_ns",
    "message_latency_p99_ns",
    "psn_first",
    "psn_last",
    "retransmitted_packets",
    "retransmitted_bytes",
    "out_of_sequence",
    "gbn_episodes",
    "gbn_nak",
    "gbn_rnr_nak",
    "gbn_timeout",
    "naks",
    "rnr_naks",
    "ack_rtt_p50_ns",
    "ack_rtt_p99_ns",
    "ack_rtt_max_ns",
    "ecn_ce_packets",
    "ecn_ce_fraction",
    "cnps",
    "cnp_delay_p50_ns",
    "icrc_errors",
    "mirror_duplicates",
    "setup_method",
    "setup_established_ns",
];

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn summary_cells(s: &Summary) -> [String; 3] {
    [opt(s.p50), opt(s.p99), opt(s.max)]
}

impl Exporter for CsvExporter {
    fn write(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", COLUMNS.join(","))?;
        for f in &report.qps {
            let cause = |k: &str| {
                f.go_back_n
                    .by_cause
                    .get(k)
                    .copied()
                    .unwrap_or(0)
                    .to_string()
            };
            let naks = f
                .naks
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(";");
            let [rtt50, rtt99, rttmax] = summary_cells(&f.ack_rtt_ns);
            let [lat50, lat99, _] = summary_cells(&f.message_latency_ns);
            let row = [
                f.id.to_string(),
                f.src.clone(),
                f.dst.clone(),
                f.dqpn.to_string(),
                opt(f.requester_qpn),
                f.transport.to_string(),
                f.sport.to_string(),
                f.files.join(";"),
                f.packets.to_string(),
                f.bytes.to_string(),
                f.payload_bytes.to_string(),
                f.duration_ns.to_string(),
                // Shortest exact form: six decimals printed a 500 b/s flow as 0.000000.
                f.goodput_gbps.to_string(),
                f.messages.to_string(),
                lat50,
                lat99,
                opt(f.psn.first),
                opt(f.psn.last),
                f.retransmitted_packets.to_string(),
                f.retransmitted_bytes.to_string(),
                f.out_of_sequence.to_string(),
                f.go_back_n.episodes.to_string(),
                cause("nak"),
                cause("rnr_nak"),
                cause("timeout"),
                naks,
                f.rnr_naks.count.to_string(),
                rtt50,
                rtt99,
                rttmax,
                f.ecn_ce_packets.to_string(),
                f.ecn_ce_fraction.to_string(),
                f.cnps.to_string(),
                opt(f.cnp_delay_ns.p50),
                f.icrc_errors.to_string(),
                f.mirror_duplicates.to_string(),
                f.setup.map_or(String::new(), |s| s.method.to_string()),
                opt(f.setup.and_then(|s| s.established_ns)),
            ];
            debug_assert_eq!(row.len(), COLUMNS.len());
            let row: Vec<String> = row.iter().map(|s| field(s)).collect();
            writeln!(out, "{}", row.join(","))?;
        }
        Ok(())
    }
}
