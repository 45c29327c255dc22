//! Findings: small rules over the finished report, each with an id, a
//! severity and one sentence that tells an RDMA engineer what happened and
//! what it means.
//!
//! | rule | severity | fires when |
//! |---|---|---|
//! | `retry-exhausted` | error | one PSN resent ≥ 3 times in a row after timeouts or sequence NAKs, gaps not shrinking, then silence at least as long as the longest gap (or 7 resends, the most retry_cnt allows, then the end of the capture) |
//! | `repeated-timeouts` | warning | the same, but the flow recovered or went on, or the capture ends too soon after the last resend to tell |
//! | `rnr-retry-exhausted` | error | one PSN resent ≥ 3 times after RNR NAKs, then silence at least as long as the longest gap |
//! | `remote-error-nak` | error | invalid request / remote access / remote operational NAK |
//! | `icrc-errors` | error | frames whose ICRC does not match |
//! | `go-back-n` | warning | retransmission episodes |
//! | `rnr-storm` / `rnr-nak` | warning / info | ≥ 10 RNR NAKs / fewer |
//! | `out-of-sequence` | info | PSN gaps at the capture point |
//! | `mirror-duplicates` | info | identical frames repeated by a mirror port |
//! | `ecn-ce` | info | CE-marked packets and the CNPs they caused |
//! | `pfc-storm` | error / warning | a priority paused ≥ 50 % / ≥ 10 % of the capture |
//! | `pfc-seen` | info | pauses below the storm threshold |
//! | `no-mac-control` | info | a file without any MAC-control frame |
//! | `lag-imbalance` | warning | one of ≥ 2 slaves carries ≥ 90 % of the RoCE bytes |
//! | `qp-moved` / `qp-spread` | warning | a QP's requests changed slave (1–3 times / more) |
//! | `two-capture-points` | warning | a QP's requests alternate files and ≥ 40 % come again: one path captured twice |
//! | `hash-mismatch` | info | observed slaves differ from both bonding hash predictions |
//! | `capture-cut` | warning | a file ends in the middle of a record |
//! | `snaplen-truncated` | info | frames cut by the snaplen (ICRC not checkable) |
//! | `response-only` | info | responses whose requests are not in the capture |

use roce_codec::wire::aeth::NakCode;

use super::flow_table::FlowTable;
use super::model::*;
use roce_capture::human::{duration_brief, plural};

const RNR_STORM: u64 = 10;
const RETRY_RUN: u64 = 3;
/// retry_cnt is a 3-bit count: after 7 retries of one PSN a requester has
/// given up whatever it was set to (rxe alone treats 7 as infinite).
const MAX_RETRY_CNT: u64 = 7;

fn label(q: &QpReport) -> String {
    match q.requester_qpn {
        Some(r) => format!("{} QP {:#x} -> {} QP {:#x}", q.src, r, q.dst, q.dqpn),
        None => format!("{} -> {} QP {:#x}", q.src, q.dst, q.dqpn),
    }
}

/// How far apart the transmissions of a resent PSN were, and, when they
/// are even and all after timeouts, the `timeout` attribute they match
/// (IB: the local ACK timeout is 4.096 us x 2^timeout).
fn retry_timing(run: &super::flow::RetryRun) -> String {
    let iv = run.intervals();
    if iv.is_empty() {
        let gaps: Vec<String> = run.gaps.iter().map(|&g| duration_brief(g)).collect();
        return format!("each after a silence of {}", gaps.join(", "));
    }
    let list: Vec<String> = iv.iter().map(|&g| duration_brief(g)).collect();
    let mut text = format!("sent {} apart", list.join(", "));
    let (lo, hi) = (iv.iter().min().unwrap(), iv.iter().max().unwrap());
    let even = *hi as f64 <= *lo as f64 * 1.1;
    if run.timeouts == run.count && iv.len() >= 2 && even {
        let mid = (lo + hi) as f64 / 2.0;
        if let Some(t) = (0..32u32).find(|&t| {
            let v = 4096.0 * f64::from(1u32 << t);
            (mid - v).abs() <= 0.1 * v
        }) {
            let v = (4096u64 << t) as f64;
            let v = if v >= 1e6 {
                format!("{:.2} ms", v / 1e6)
            } else {
                format!("{:.1} µs", v / 1e3)
            };
            text.push_str(&format!(
                ": the local ACK timeout of a QP with timeout = {t}, 4.096 µs × 2^{t} = {v}"
            ));
        }
    }
    text
}

fn wc_status(name: &str) -> (u8, &'static str) {
    let code = match name {
        "invalid_request" => NakCode::InvalidRequest,
        "remote_access_error" => NakCode::RemoteAccessError,
        "remote_operational_error" => NakCode::RemoteOperationalError,
        _ => NakCode::Unknown(31),
    };
    match code.wc_status().unwrap_or(11) {
        9 => (9, "IBV_WC_REM_INV_REQ_ERR"),
        10 => (10, "IBV_WC_REM_ACCESS_ERR"),
        _ => (11, "IBV_WC_REM_OP_ERR"),
    }
}

pub(crate) fn findings(r: &Report, table: &FlowTable) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut add = |severity,
                   rule,
                   qp: Option<usize>,
                   file: Option<String>,
                   frames: Vec<FrameRef>,
                   message: String| {
        out.push(Finding {
            severity,
            rule,
            qp,
            file,
            frames,
            message,
        })
    };
    // The capture's last frame: a requester's silence is only seen up to here.
    let capture_end = r.capture.last_ts_ns.unwrap_or(0);
    // A requester with retries left resends once its timer (the wait
    // between its resends so far) runs out again; a capture that ends
    // sooner than that after the last resend cannot show it gave up.
    let silence = |run: &super::flow::RetryRun| {
        let waited = capture_end.saturating_sub(run.last_ts);
        let timer = run.gaps.iter().copied().max().unwrap_or(0);
        (waited, waited >= timer)
    };
    for (f, q) in table.flows.iter().zip(&r.qps) {
        let l = label(q);
        let run = &f.worst_retry_run;
        if let Some(psn) = run.psn.filter(|_| run.count >= RETRY_RUN) {
            let gaps = &run.gaps;
            let not_shrinking = gaps.windows(2).all(|w| w[1] as f64 >= 0.9 * w[0] as f64);
            let gap_text = retry_timing(run);
            let why = match (run.timeouts, run.count - run.timeouts) {
                (t, 0) => format!("{t} timeouts"),
                (0, n) => format!("{n} sequence-error NAKs"),
                (t, n) => format!("{t} timeouts and {n} sequence-error NAKs"),
            };
            let (waited, final_silence) = silence(run);
            let gave_up = f.ends_in_silence(run) && not_shrinking;
            let (severity, rule, message) = if gave_up
                && (final_silence || run.count >= MAX_RETRY_CNT)
            {
                let end = if final_silence {
                    format!(
                        "then the requester went silent for {} until the capture ends",
                        duration_brief(waited)
                    )
                } else {
                    "as many retries as the largest retry_cnt (7) allows, and the capture ends there"
                        .to_string()
                };
                (
                    Severity::Error,
                    "retry-exhausted",
                    format!(
                        "{l}: PSN {} was resent {} times after {why} ({gap_text}) with no ACK, {end}: the retry-exhausted signature (the work request completes with IBV_WC_RETRY_EXC_ERR, status 12, NCCL's \"transport retry counter exceeded\").",
                        psn.value(),
                        run.count,
                    ),
                )
            } else if gave_up {
                (
                    Severity::Warning,
                    "repeated-timeouts",
                    format!(
                        "{l}: PSN {} was resent {} times in a row after {why} ({gap_text}) with no ACK, and the capture ends {} after the last resend, before the requester's next retry was due: capture longer to tell whether its retry count ran out (IBV_WC_RETRY_EXC_ERR, status 12).",
                        psn.value(),
                        run.count,
                        duration_brief(waited)
                    ),
                )
            } else {
                (
                    Severity::Warning,
                    "repeated-timeouts",
                    format!(
                        "{l}: PSN {} was resent {} times in a row after {why} ({gap_text}) before the flow went on: the path or the responder stalled close to the retry limit.",
                        psn.value(),
                        run.count
                    ),
                )
            };
            add(
                severity,
                rule,
                Some(q.id),
                None,
                run.frames.clone(),
                message,
            );
        }
        let run = &f.worst_rnr_run;
        if let Some(psn) = run
            .psn
            .filter(|_| run.count >= RETRY_RUN && f.ends_in_silence(run) && silence(run).1)
        {
            add(
                Severity::Error,
                "rnr-retry-exhausted",
                Some(q.id),
                None,
                run.frames.clone(),
                format!(
                    "{l}: PSN {} was resent {} times after RNR NAKs with no ACK, then the requester went silent: its RNR retry count ran out (IBV_WC_RNR_RETRY_EXC_ERR, status 13); the responder never posted a receive buffer in time.",
                    psn.value(),
                    run.count
                ),
            );
        }
        for (frame, name, psn) in &f.error_naks {
            let (code, status) = wc_status(name);
            add(
                Severity::Error,
                "remote-error-nak",
                Some(q.id),
                None,
                vec![*frame],
                format!(
                    "{l}: the responder sent a {name} NAK for PSN {}: the requester completes that work request with {status} (status {code}) and its QP goes to the error state.",
                    psn.value()
                ),
            );
        }
        if q.icrc_errors > 0 {
            add(
                Severity::Error,
                "icrc-errors",
                Some(q.id),
                None,
                f.icrc_frames.clone(),
                format!(
                    "{l}: {} an ICRC that does not match the contents: corruption on the wire or a faulty NIC/switch; the receiver drops them, which costs retransmissions.",
                    if q.icrc_errors == 1 {
                        "1 frame carries".to_string()
                    } else {
                        format!("{} frames carry", q.icrc_errors)
                    }
                ),
            );
        }
        if q.go_back_n.episodes > 0 {
            let c = |k: &str| q.go_back_n.by_cause.get(k).copied().unwrap_or(0);
            let frames = q.go_back_n.list.iter().take(16).map(|e| e.frame).collect();
            let pct = if q.request_packets > 0 {
                100.0 * q.retransmitted_packets as f64 / q.request_packets as f64
            } else {
                0.0
            };
            add(
                Severity::Warning,
                "go-back-n",
                Some(q.id),
                None,
                frames,
                format!(
                    "{l}: {} ({} after a PSN sequence error NAK, {} after an RNR NAK, {} after a timeout) resent {}, {pct:.1}% of its requests.",
                    plural(q.go_back_n.episodes, "go-back-N episode"),
                    c("nak"),
                    c("rnr_nak"),
                    c("timeout"),
                    plural(q.retransmitted_packets, "packet")
                ),
            );
        }
        if q.rnr_naks.count > 0 {
            let timers = q
                .rnr_naks
                .timers_us
                .iter()
                .map(|(t, n)| format!("{n}× {t} µs"))
                .collect::<Vec<_>>()
                .join(", ");
            let (sev, rule, what) = if q.rnr_naks.count >= RNR_STORM {
                (
                    Severity::Warning,
                    "rnr-storm",
                    "the responder keeps running out of posted receive buffers; post receives earlier or deeper (an RNR retry count below 7 ends in IBV_WC_RNR_RETRY_EXC_ERR, status 13)",
                )
            } else {
                (
                    Severity::Info,
                    "rnr-nak",
                    "the responder had no receive buffer posted for a SEND and asked the requester to wait",
                )
            };
            add(
                sev,
                rule,
                Some(q.id),
                None,
                f.rnr_frames.clone(),
                format!(
                    "{l}: {} (timers {timers}): {what}.",
                    plural(q.rnr_naks.count, "RNR NAK")
                ),
            );
        }
        if q.out_of_sequence > 0 {
            add(
                Severity::Info,
                "out-of-sequence",
                Some(q.id),
                None,
                Vec::new(),
                format!(
                    "{l}: {} after a PSN gap ({} never seen at this capture point): loss before the capture point, or packets the capture itself dropped.",
                    if q.out_of_sequence == 1 {
                        "1 request arrived".to_string()
                    } else {
                        format!("{} requests arrived", q.out_of_sequence)
                    },
                    plural(q.missing_psns, "PSN")
                ),
            );
        }
        if q.mirror_duplicates > 0 {
            add(
                Severity::Info,
                "mirror-duplicates",
                Some(q.id),
                None,
                Vec::new(),
                format!(
                    "{l}: {} repeated byte-identically within {} by the capture setup (a mirror port copying twice); they are left out of every count.",
                    if q.mirror_duplicates == 1 {
                        "1 frame was".to_string()
                    } else {
                        format!("{} frames were", q.mirror_duplicates)
                    },
                    duration_brief(r.options.dup_window_ns)
                ),
            );
        }
        if q.ecn_ce_packets > 0 || q.cnps > 0 {
            let delay = match (q.cnp_delay_ns.p50, q.cnp_delay_ns.max) {
                (Some(p50), Some(max)) => {
                    format!(
                        ", first CE mark to its CNP p50 {} max {}",
                        duration_brief(p50),
                        duration_brief(max)
                    )
                }
                _ => String::new(),
            };
            add(
                Severity::Info,
                "ecn-ce",
                Some(q.id),
                None,
                Vec::new(),
                format!(
                    "{l}: {} CE-marked ({:.2}%) and {}{delay}: DCQCN is slowing this flow down at a congested queue.",
                    plural(q.ecn_ce_packets, "packet"),
                    100.0 * q.ecn_ce_fraction,
                    plural(q.cnps, "CNP")
                ),
            );
        }
    }
    for p in &r.pfc {
        let what = match p.priority {
            Some(prio) => format!("priority {prio}"),
            None => "all priorities (802.3x PAUSE)".into(),
        };
        let (sev, rule) = if p.paused_fraction >= 0.5 {
            (Severity::Error, "pfc-storm")
        } else if p.paused_fraction >= 0.1 {
            (Severity::Warning, "pfc-storm")
        } else {
            (Severity::Info, "pfc-seen")
        };
        add(
            sev,
            rule,
            None,
            Some(p.file.clone()),
            vec![p.first_frame],
            format!(
                "{}: {} from {} was paused {:.1}% of the capture ({} XOFF, {} XON, {} in all, longest continuous pause {}).",
                p.file,
                what,
                p.src_mac,
                100.0 * p.paused_fraction,
                p.xoff_frames,
                p.xon_frames,
                duration_brief(p.pause_ns as u64),
                duration_brief(p.longest_pause_ns as u64)
            ),
        );
    }
    for f in &r.files {
        if f.packets > 0 && f.mac_control_frames == 0 {
            add(
                Severity::Info,
                "no-mac-control",
                None,
                Some(f.file.clone()),
                Vec::new(),
                format!(
                    "{}: no MAC-control (PAUSE/PFC) frames. Host NICs usually consume PFC frames before the capture point, so this does not show there were no pauses: capture at the switch or read the NIC's pause counters (ethtool -S, *prio*_pause*).",
                    f.file
                ),
            );
        }
        if let Some(off) = f.cut_at_offset {
            let what = if f.cut_in_gzip {
                format!(
                    "its gzip stream ends early, in the record at byte {off} of the decompressed stream"
                )
            } else {
                format!("the file ends in the middle of the record at byte {off}")
            };
            add(
                Severity::Warning,
                "capture-cut",
                None,
                Some(f.file.clone()),
                Vec::new(),
                format!("{}: {what}; everything before it was analyzed.", f.file),
            );
        }
        if f.truncated_frames > 0 {
            add(
                Severity::Info,
                "snaplen-truncated",
                None,
                Some(f.file.clone()),
                Vec::new(),
                format!(
                    "{}: {} cut by the capture's snaplen; sizes come from the length fields, but the ICRC of {} could not be checked{}.",
                    f.file,
                    if f.truncated_frames == 1 {
                        "1 frame was".to_string()
                    } else {
                        format!("{} frames were", f.truncated_frames)
                    },
                    plural(f.icrc_unchecked, "RoCE frame"),
                    if f.roce_undecodable > 0 {
                        format!(
                            " and {} lost the BTH",
                            plural(f.roce_undecodable, "RoCE frame")
                        )
                    } else {
                        String::new()
                    }
                ),
            );
        }
    }
    lag_findings(r, &mut add);
    for ro in &r.response_only {
        add(
            Severity::Info,
            "response-only",
            None,
            None,
            vec![ro.first_frame],
            format!(
                "{} -> {} QP {:#x}: {} ({}) whose requests are not in these files: capture the other bond slave too, or the capture started after the requests.",
                ro.src,
                ro.dst,
                ro.requester_qpn,
                plural(ro.packets, "response"),
                ro.acks_naks_cnps()
            ),
        );
    }
    out.sort_by_key(|f| f.severity);
    out
}

fn lag_findings(
    r: &Report,
    add: &mut impl FnMut(Severity, &'static str, Option<usize>, Option<String>, Vec<FrameRef>, String),
) {
    let lag = &r.lag;
    if lag.files.len() >= 2 {
        if let Some(top) = lag
            .files
            .iter()
            .filter(|f| f.share_of_roce_bytes >= 0.9)
            .max_by(|a, b| a.share_of_roce_bytes.total_cmp(&b.share_of_roce_bytes))
        {
            let mut hint = String::new();
            let l34: std::collections::BTreeSet<_> = lag
                .qp_map
                .iter()
                .filter_map(|m| m.predicted_layer3_4.as_deref())
                .collect();
            let l23: std::collections::BTreeSet<_> = lag
                .qp_map
                .iter()
                .filter_map(|m| m.predicted_layer2_3.as_deref())
                .collect();
            if l23.len() == 1 && l34.len() > 1 {
                hint = " The layer2+3 hash puts every QP between these hosts on one slave while layer3+4 would spread them: check the bond's xmit_hash_policy.".into();
            } else if l34.len() <= 1 && lag.qp_map.len() > 1 {
                hint = " Even layer3+4 hashing predicts a single slave for these QPs' UDP source ports.".into();
            }
            add(
                Severity::Warning,
                "lag-imbalance",
                None,
                Some(top.file.clone()),
                Vec::new(),
                format!(
                    "{} carried {:.1}% of the RoCE bytes across {} slaves (imbalance {:.2}).{hint}",
                    top.file,
                    100.0 * top.share_of_roce_bytes,
                    lag.files.len(),
                    lag.imbalance.unwrap_or(0.0)
                ),
            );
        }
        let mut mismatched = Vec::new();
        for m in &lag.qp_map {
            if m.moves_total > 0 {
                // Every request twice, once per file, the second copy a
                // "retransmission": two capture points on one path.
                let q = r.qps.iter().find(|q| q.id == m.qp);
                let doubled = q.is_some_and(|q| {
                    q.retransmitted_packets * 5 >= q.request_packets * 2
                        && m.moves_total * 5 >= q.request_packets * 2
                });
                let (sev, rule, what) = if doubled {
                    (
                        Severity::Warning,
                        "two-capture-points",
                        "appear in two files, each request again a moment later in the other: these look like captures at two points of one path (sender and receiver, or both sides of a switch), not the slaves of one bond, and every frame counts twice; analyze each file on its own",
                    )
                } else if m.moves_total <= 3 {
                    (
                        Severity::Warning,
                        "qp-moved",
                        "moved between slaves (a failover or a re-hash after a link change)",
                    )
                } else {
                    (
                        Severity::Warning,
                        "qp-spread",
                        "alternated between slaves: packets of one QP are sprayed (balance-rr?), which reorders PSNs",
                    )
                };
                let first = m.moves.first();
                add(
                    sev,
                    rule,
                    Some(m.qp),
                    None,
                    m.moves.iter().take(16).map(|mv| mv.frame).collect(),
                    format!(
                        "{} -> {} QP {:#x}: requests {what}; {}{}.",
                        m.src,
                        m.dst,
                        m.dqpn,
                        plural(m.moves_total, "move"),
                        first.map_or(String::new(), |mv| format!(
                            ", first from {} to {}",
                            mv.from, mv.to
                        ))
                    ),
                );
            }
            if let Some(obs) = &m.request_file {
                let l34 = m.predicted_layer3_4.as_ref();
                let l23 = m.predicted_layer2_3.as_ref();
                if l34.is_some_and(|p| p != obs) && l23.is_some_and(|p| p != obs) {
                    mismatched.push(m.qp);
                }
            }
        }
        if !mismatched.is_empty() {
            add(
                Severity::Info,
                "hash-mismatch",
                None,
                None,
                Vec::new(),
                format!(
                    "{} of {} QPs sent their requests on a slave that neither the layer3+4 nor the layer2+3 bonding hash predicts (flows {}): the NIC steers RoCE itself (mlx5 LAG queue affinity or hardware hash), or the files are not in enslave order.",
                    mismatched.len(),
                    lag.qp_map.len(),
                    mismatched
                        .iter()
                        .map(|i| format!("#{i}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }
}

#[cfg(test)]
mod retry_timing_tests {
    use super::retry_timing;
    use crate::analyze::flow::RetryRun;

    fn run(first: Option<u64>, starts: &[u64], timeouts: u64) -> RetryRun {
        RetryRun {
            count: starts.len() as u64,
            timeouts,
            starts: starts.to_vec(),
            first_sent_ts: first,
            gaps: starts.iter().map(|_| 1_000).collect(),
            ..RetryRun::default()
        }
    }

    #[test]
    fn even_timeouts_name_the_timeout_attribute() {
        // timeout = 14: 4.096 us x 16384 = 67.108864 ms between sends.
        let t = 67_108_864;
        let r = run(Some(5), &[5 + t, 5 + 2 * t, 5 + 3 * t], 3);
        assert_eq!(
            retry_timing(&r),
            "sent 67.1 ms, 67.1 ms, 67.1 ms apart: the local ACK timeout of a QP with timeout = 14, \
             4.096 µs × 2^14 = 67.11 ms"
        );
    }

    #[test]
    fn backoff_naks_or_unknown_first_send_claim_no_attribute() {
        let r = run(Some(0), &[4_000_000, 12_000_000, 28_000_000], 3);
        assert_eq!(retry_timing(&r), "sent 4.0 ms, 8.0 ms, 16.0 ms apart");
        let t = 4_194_304;
        let r = run(Some(0), &[t, 2 * t, 3 * t], 2);
        assert_eq!(retry_timing(&r), "sent 4.2 ms, 4.2 ms, 4.2 ms apart");
        let r = run(None, &[t], 1);
        assert_eq!(retry_timing(&r), "each after a silence of 1.0 µs");
    }
}
