//! The workloads of a plan: one per client-server pair (or per QP when a
//! QP needs its own flow label), their verbs, sizes and times, and the
//! QPN bases that make rocesim's allocation give the captured QPNs.

use roce_codec::hash::roce_udp_sport;

use super::{HostPlan, Tool, Verb, WorkloadPlan, plural_qps};
use crate::analyze::Report;
use crate::analyze::model::{MessageKind, QpReport, flow_label};

/// The verb of a flow's messages of `kind`: immediates from its opcodes.
pub(super) fn verb(q: &QpReport, kind: MessageKind) -> Verb {
    let has = |needle: &str| q.opcodes.keys().any(|k| k.contains(needle));
    match kind {
        MessageKind::Write if has("WRITE") && has("WITH_IMMEDIATE") => Verb::WriteImm,
        MessageKind::Write => Verb::Write,
        MessageKind::Send if has("SEND") && has("WITH_IMMEDIATE") => Verb::SendImm,
        MessageKind::Read => Verb::Read,
        MessageKind::Send | MessageKind::Atomic => Verb::Send,
    }
}

/// The flow label that makes rocesim give this flow its captured UDP
/// source port, when one does.
pub(super) fn flow_label_for(sport: u16, rq: u32, dq: u32) -> Option<u32> {
    if roce_udp_sport(0, rq, dq) == sport {
        return Some(0);
    }
    let low = u32::from(sport & 0x3fff);
    [low, low ^ 0x4001, 0x4001]
        .into_iter()
        .find(|&fl| fl != 0 && roce_udp_sport(fl, rq, dq) == sport)
}

/// The workloads of one client-server pair: one perftest stream when the
/// QPs are uniform, else explicit messages (one workload per QP when a QP
/// needs its own flow label for its UDP port).
pub(super) fn workloads_of(
    hosts: &[HostPlan],
    c: usize,
    s: usize,
    qs: &[&QpReport],
    origin: u64,
    mtu: Option<u32>,
) -> Vec<WorkloadPlan> {
    let tclass = |q: &QpReport| {
        // A CE mark is the network's; the sender sent ECT(0).
        let t = q.wire.tclass;
        if t & 3 == 3 { t & !3 | 2 } else { t }
    };
    let labels: Vec<Option<u32>> = qs
        .iter()
        .map(|q| flow_label_for(q.sport, q.requester_qpn.unwrap_or(0), q.dqpn))
        .collect();
    let derived = labels.iter().all(|l| *l == Some(0));
    let logs: Vec<Vec<(Verb, u64, u64)>> = qs
        .iter()
        .map(|q| {
            q.wire
                .message_log
                .iter()
                .flat_map(|l| l.messages.iter())
                .map(|m| (verb(q, m.kind), m.size, m.start_ns.saturating_sub(origin)))
                .collect()
        })
        .collect();
    let start = logs
        .iter()
        .flat_map(|l| l.iter().map(|m| m.2))
        .min()
        .unwrap_or(0);
    let who = format!("{} -> {}", hosts[c].name, hosts[s].name);
    let mut base_notes = vec![format!(
        "{who}: {} ({})",
        plural_qps(qs.len()),
        qs.iter()
            .map(|q| flow_label(&q.src, q.requester_qpn, &q.dst, q.dqpn))
            .collect::<Vec<_>>()
            .join(", ")
    )];
    let rates: Vec<String> = qs
        .iter()
        .map(|q| roce_capture::human::rate(q.goodput_gbps))
        .collect();
    base_notes.push(format!("goodput seen per QP: {}", rates.join(", ")));
    for q in qs {
        if let Some(l) = &q.wire.message_log {
            if l.dropped > 0 {
                base_notes.push(format!(
                    "flow #{}: {} messages, the first {} kept (the rest are not in the scenario)",
                    q.id,
                    q.messages,
                    l.messages.len()
                ));
            }
        }
    }
    // One stream when every QP sent the same messages, starting together.
    let first = logs.first().and_then(|l| l.first()).copied();
    let uniform = first.is_some_and(|(v, size, _)| {
        v.perftest().is_some()
            && logs
                .iter()
                .all(|l| l.len() == logs[0].len() && l.iter().all(|m| m.0 == v && m.1 == size))
            && qs
                .iter()
                .all(|q| q.wire.message_log.as_ref().is_some_and(|l| l.dropped == 0))
            && {
                let starts: Vec<u64> = logs.iter().filter_map(|l| l.first().map(|m| m.2)).collect();
                let spread = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
                let span = qs.iter().map(|q| q.duration_ns).max().unwrap_or(0);
                spread <= span / 10
            }
    });
    let plan =
        |flows: Vec<usize>, tool: Tool, start_ns: u64, flow_label: u32, notes: Vec<String>| {
            WorkloadPlan {
                name: String::new(),
                client: c,
                server: s,
                flows,
                tool,
                tc: tclass(qs[0]),
                start_ns,
                mtu,
                flow_label,
                notes,
                limits: Vec::new(),
            }
        };
    if uniform && derived {
        let (v, size, _) = first.expect("uniform has a first message");
        let mut notes = base_notes;
        notes.push(format!(
            "every QP: {} messages of {size} B ({}), starting together: a perftest stream, as fast as the path allows (no rate_limit)",
            logs[0].len(),
            v.name()
        ));
        return vec![plan(
            qs.iter().map(|q| q.id).collect(),
            Tool::Perftest {
                tool: v.perftest().expect("checked"),
                size,
                iters: logs[0].len() as u64,
            },
            start,
            0,
            notes,
        )];
    }
    let messages = |qp: u32, log: &[(Verb, u64, u64)], from: u64| {
        log.iter()
            .map(|&(v, size, at)| (qp, v, size, at - from))
            .collect::<Vec<_>>()
    };
    if derived {
        let mut all: Vec<(u32, Verb, u64, u64)> = logs
            .iter()
            .enumerate()
            .flat_map(|(i, l)| messages(i as u32, l, start))
            .collect();
        all.sort_by_key(|m| (m.3, m.0));
        let mut notes = base_notes;
        notes.push("messages at the times their first packet was seen".to_string());
        return vec![plan(
            qs.iter().map(|q| q.id).collect(),
            Tool::Messages(all),
            start,
            0,
            notes,
        )];
    }
    // A flow label per QP reproduces a UDP port the QPNs do not give.
    qs.iter()
        .zip(&logs)
        .zip(&labels)
        .map(|((q, log), label)| {
            let from = log.first().map_or(start, |m| m.2);
            let mut notes = base_notes.clone();
            notes.truncate(1);
            notes[0] = format!("{who}: {}", flow_label(&q.src, q.requester_qpn, &q.dst, q.dqpn));
            let limits = match label {
                Some(l) => {
                    notes.push(format!(
                        "UDP source port {} is not the one the QPNs give: flow_label = {l:#x} gives it",
                        q.sport
                    ));
                    Vec::new()
                }
                None => vec![format!(
                    "flow #{}: UDP source port {} cannot be expressed: rocesim's ports are 0xC000..=0xFFFF (derived from the QPNs or a flow label); the QPNs' port is used",
                    q.id, q.sport
                )],
            };
            let label = label.unwrap_or(0);
            notes.extend(limits.iter().cloned());
            notes.push("messages at the times their first packet was seen".to_string());
            WorkloadPlan {
                limits,
                ..plan(vec![q.id], Tool::Messages(messages(0, log, from)), from, label, notes)
            }
        })
        .collect()
}

/// Sets each host's `qpn_base` so that rocesim's sequential allocation
/// (per host, workload after workload: clients then servers) gives the
/// captured QPNs, and says where it cannot.
pub(super) fn assign_qpns(
    hosts: &mut [HostPlan],
    workloads: &[WorkloadPlan],
    report: &Report,
    notes: &mut Vec<String>,
) {
    let mut next: Vec<Option<u32>> = vec![None; hosts.len()];
    let mut misses: Vec<String> = Vec::new();
    let row = |id: usize| {
        report
            .qps
            .iter()
            .find(|q| q.id == id)
            .expect("a flow of the report")
    };
    for w in workloads {
        for (host, pick) in [
            (
                w.client,
                (|q: &QpReport| q.requester_qpn) as fn(&QpReport) -> Option<u32>,
            ),
            (w.server, |q: &QpReport| Some(q.dqpn)),
        ] {
            for &id in &w.flows {
                let want = pick(row(id));
                let got = match next[host] {
                    Some(n) => n,
                    None => {
                        let base = want.unwrap_or(0x100).max(2);
                        hosts[host].qpn_base = Some(base);
                        base
                    }
                };
                if let Some(want) = want {
                    if want != got {
                        misses.push(format!(
                            "{} QPN {want:#x} becomes {got:#x}",
                            hosts[host].name
                        ));
                    }
                }
                next[host] = Some(got + 1);
            }
        }
    }
    if !misses.is_empty() {
        notes.push(format!(
            "QPNs the scenario cannot give (rocesim hands each host's QPNs out in sequence from one qpn_base; there is no per-QP QPN): {}",
            misses.join(", ")
        ));
    }
}
