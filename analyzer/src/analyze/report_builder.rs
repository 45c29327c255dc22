//! Turns the finished flow table and per-file statistics into a [`Report`].

use std::collections::BTreeMap;

use core::net::IpAddr;

use roce_codec::hash::{FlowAddrs, FlowKeys, XmitHashPolicy, bond_slave_index, bond_xmit_hash};
use roce_codec::{Opcode, Psn};

use super::capture_merge::FileStats;
use super::flow::{Flow, HashFields};
use super::flow_table::FlowTable;
use super::model::*;
use super::pfc::PAUSE_8023X;

pub(crate) fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn hash_keys(h: &HashFields) -> FlowKeys {
    let addrs = match (h.src, h.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => Some(FlowAddrs::V4 { src: s, dst: d }),
        (IpAddr::V6(s), IpAddr::V6(d)) if !h.rocev1 => Some(FlowAddrs::V6 { src: s, dst: d }),
        _ => None,
    };
    FlowKeys {
        src_mac: h.src_mac,
        dst_mac: h.dst_mac,
        ethertype: match (h.rocev1, h.src) {
            (true, _) => 0x8915,
            (false, IpAddr::V4(_)) => 0x0800,
            (false, IpAddr::V6(_)) => 0x86DD,
        },
        vlan_tci: h.vlan_tci,
        ports: addrs.map(|_| (h.sport, roce_codec::hash::ROCE_V2_UDP_DPORT)),
        addrs,
    }
}

/// The slave index Linux bonding picks for these fields among `n` slaves.
pub(crate) fn predict(h: &HashFields, policy: XmitHashPolicy, n: usize) -> Option<usize> {
    if n < 2 {
        return None;
    }
    bond_slave_index(bond_xmit_hash(policy, &hash_keys(h)), n)
}

fn summary_ns(q: &super::quantiles::Quantiles) -> Summary {
    q.summary()
}

fn qp_report(id: usize, f: &Flow, names: &[String]) -> QpReport {
    let duration_ns = f.last_ts - f.first_ts;
    let goodput_gbps = if duration_ns > 0 {
        f.goodput_bytes as f64 * 8.0 / duration_ns as f64
    } else {
        0.0
    };
    let per_file: Vec<FileShare> = f
        .files
        .iter()
        .enumerate()
        .filter(|(_, u)| u.request_packets + u.response_packets > 0)
        .map(|(i, u)| FileShare {
            file: names[i].clone(),
            request_packets: u.request_packets,
            response_packets: u.response_packets,
            bytes: u.bytes,
        })
        .collect();
    QpReport {
        id,
        src: f.key.src.to_string(),
        dst: f.key.dst.to_string(),
        dqpn: f.key.qpn,
        requester_qpn: f.requester_qpn,
        transport: f.transport.name(),
        sport: f.sport,
        response_sport: f.response_sport,
        files: per_file.iter().map(|p| p.file.clone()).collect(),
        per_file,
        first_frame: f.first_frame,
        packets: f.packets,
        bytes: f.bytes,
        payload_bytes: f.payload_bytes,
        request_packets: f.request_packets,
        response_packets: f.response_packets,
        first_ts_ns: f.first_ts,
        last_ts_ns: f.last_ts,
        duration_ns,
        goodput_gbps,
        opcodes: f
            .opcodes
            .iter()
            .map(|(&op, &n)| (Opcode(op).name(), n))
            .fold(BTreeMap::new(), |mut m, (k, n)| {
                *m.entry(k).or_insert(0) += n;
                m
            }),
        messages: f.messages_total(),
        messages_by_kind: f.messages.iter().map(|(k, &n)| (k.name(), n)).collect(),
        partial_messages: f.partial_messages,
        message_bytes: f.message_bytes,
        message_size: f.message_size.summary(),
        message_latency_ns: summary_ns(&f.message_latency),
        psn: PsnRange {
            first: f.first_psn().map(Psn::value),
            last: f.last_psn().map(Psn::value),
            span: f.psn_span(),
            wrapped: f.psn_wrapped(),
        },
        pmtu: f.pmtu,
        retransmitted_packets: f.retransmitted_packets,
        retransmitted_bytes: f.retransmitted_bytes,
        out_of_sequence: f.out_of_sequence,
        missing_psns: f.missing_psns,
        mirror_duplicates: f.mirror_duplicates,
        repeated_responses: f.repeated_responses,
        go_back_n: GoBackN {
            episodes: f.episodes_total,
            by_cause: f.episodes_by_cause.clone(),
            list: f
                .episodes
                .iter()
                .map(|e| EpisodeReport {
                    frame: e.start,
                    last_frame: e.last,
                    ts_ns: e.ts_ns,
                    rewind_psn: e.rewind_psn.value(),
                    highest_psn: e.highest_psn.value(),
                    packets: e.packets,
                    bytes: e.bytes,
                    cause: e.cause.name(),
                    cause_frame: match e.cause {
                        super::flow::Cause::Nak { frame, .. }
                        | super::flow::Cause::RnrNak { frame, .. } => Some(frame),
                        super::flow::Cause::Timeout => None,
                    },
                    gap_ns: e.gap_ns,
                })
                .collect(),
        },
        acks: f.acks,
        naks: f.naks.clone(),
        rnr_naks: RnrReport {
            count: f.rnr_timers_us.values().sum(),
            timers_us: f.rnr_timers_us.clone(),
        },
        ack_rtt_ns: summary_ns(&f.ack_rtt),
        ecn_ce_packets: f.ecn_ce_packets,
        ecn_ce_fraction: if f.packets > 0 {
            f.ecn_ce_packets as f64 / f.packets as f64
        } else {
            0.0
        },
        cnps: f.cnps,
        cnp_delay_ns: summary_ns(&f.cnp_delay),
        cnps_without_ce: f.cnps_without_ce,
        icrc_errors: f.icrc_errors,
        icrc_unchecked: f.icrc_unchecked,
        read_responses_replayed: f.read_responses_replayed,
        untracked_psns: f.untracked_psns,
        ecn_ce_requests: f.ecn_ce_requests,
        cnps_to_requester: f.cnps_to_requester,
        setup: None,
        telemetry: f.telemetry.as_ref().map(|t| t.report()),
        wire: QpWire {
            tclass: f.request_tclass,
            rocev1: f.request_fields.rocev1,
            request_src_mac: f.request_fields.src_mac,
            request_dst_mac: f.request_fields.dst_mac,
            response_src_mac: f.response_fields.map(|h| h.src_mac),
            vlan_tci: f.request_fields.vlan_tci,
            message_log: f.message_log.clone(),
        },
    }
}

pub(crate) struct ReportInputs<'a> {
    pub table: &'a FlowTable,
    pub stats: &'a [FileStats],
    pub names: &'a [String],
    pub options: OptionsReport,
}

pub(crate) fn build_report(inputs: ReportInputs<'_>) -> Report {
    let ReportInputs {
        table,
        stats,
        names,
        options,
    } = inputs;
    let n_files = stats.len();
    let files: Vec<FileReport> = stats
        .iter()
        .zip(names)
        .map(|(s, name)| FileReport {
            file: name.clone(),
            mac_control_frames: s.pfc.mac_control_frames,
            pfc_frames: s.pfc.pfc_frames,
            pause_frames: s.pfc.pause_frames,
            duration_ns: match (s.row.first_ts_ns, s.row.last_ts_ns) {
                (Some(a), Some(b)) => b - a,
                _ => 0,
            },
            ..s.row.clone()
        })
        .collect();
    let qps: Vec<QpReport> = table
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| qp_report(i, f, names))
        .collect();
    let response_only = table
        .response_only
        .iter()
        .map(|r| ResponseOnlyReport {
            files: r
                .files
                .iter()
                .enumerate()
                .filter(|(_, u)| u.response_packets > 0)
                .map(|(i, _)| names[i].clone())
                .collect(),
            ..r.row.clone()
        })
        .collect();
    let mut pfc = Vec::new();
    for (file_index, (s, (name, fr))) in stats.iter().zip(names.iter().zip(&files)).enumerate() {
        for (&(src, prio), st) in &s.pfc.prios {
            let pause_ns = st.paused_ps as f64 / 1000.0;
            pfc.push(PfcReport {
                file: name.clone(),
                src_mac: mac_text(src),
                priority: (prio != PAUSE_8023X).then_some(prio),
                kind: if prio == PAUSE_8023X { "802.3x" } else { "pfc" },
                xoff_frames: st.xoff,
                xon_frames: st.xon,
                pause_ns,
                paused_fraction: if fr.duration_ns > 0 {
                    pause_ns / fr.duration_ns as f64
                } else {
                    0.0
                },
                longest_pause_ns: st.longest_ps as f64 / 1000.0,
                first_frame: super::model::FrameRef {
                    file: file_index as u16,
                    frame: st.first_frame.unwrap_or(0),
                },
            });
        }
    }
    let total_roce: u64 = stats.iter().map(|s| s.row.roce_bytes).sum();
    let lag_files: Vec<LagFile> = stats
        .iter()
        .zip(names)
        .map(|(s, name)| LagFile {
            file: name.clone(),
            roce_packets: s.row.roce_packets,
            roce_bytes: s.row.roce_bytes,
            packets: s.row.packets,
            bytes: s.row.bytes,
            share_of_roce_bytes: if total_roce > 0 {
                s.row.roce_bytes as f64 / total_roce as f64
            } else {
                0.0
            },
        })
        .collect();
    let imbalance = (n_files >= 2 && total_roce > 0).then(|| {
        let max = stats.iter().map(|s| s.row.roce_bytes).max().unwrap_or(0) as f64;
        max / (total_roce as f64 / n_files as f64)
    });
    let name_of = |i: Option<usize>| i.map(|i| names[i].clone());
    let qp_map = table
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| QpSlave {
            qp: i,
            src: f.key.src.to_string(),
            dst: f.key.dst.to_string(),
            dqpn: f.key.qpn,
            sport: f.sport,
            request_file: name_of(f.main_file(true).map(usize::from)),
            response_file: name_of(f.main_file(false).map(usize::from)),
            predicted_layer3_4: name_of(predict(
                &f.request_fields,
                XmitHashPolicy::Layer34,
                n_files,
            )),
            predicted_layer2_3: name_of(predict(
                &f.request_fields,
                XmitHashPolicy::Layer23,
                n_files,
            )),
            response_predicted_layer3_4: f
                .response_fields
                .and_then(|h| name_of(predict(&h, XmitHashPolicy::Layer34, n_files))),
            response_predicted_layer2_3: f
                .response_fields
                .and_then(|h| name_of(predict(&h, XmitHashPolicy::Layer23, n_files))),
            moves: f
                .request_moves
                .iter()
                .map(|m| SlaveMoveReport {
                    frame: m.frame,
                    ts_ns: m.ts_ns,
                    from: names[m.from as usize].clone(),
                    to: names[m.to as usize].clone(),
                })
                .collect(),
            moves_total: f.request_moves_total,
            response_moves_total: f.response_moves_total,
        })
        .collect();
    let lag = LagReport {
        files: lag_files,
        imbalance,
        qp_map,
        note: "predictions take the files as the bond's slaves in enslave order and apply the \
               Linux bonding transmit hash (balance-xor/802.3ad software path); RoCE on an mlx5 \
               LAG is steered by the NIC (queue affinity or its own hash), which may differ",
    };
    let capture = CaptureSpan {
        first_ts_ns: stats.iter().filter_map(|s| s.row.first_ts_ns).min(),
        last_ts_ns: stats.iter().filter_map(|s| s.row.last_ts_ns).max(),
        duration_ns: 0,
    };
    let capture = CaptureSpan {
        duration_ns: match (capture.first_ts_ns, capture.last_ts_ns) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        },
        ..capture
    };
    let mut report = Report {
        files,
        qps,
        response_only,
        pfc,
        lag,
        findings: Vec::new(),
        setups: Vec::new(),
        capture,
        options,
    };
    report.findings = super::findings::findings(&report, table);
    report
}
