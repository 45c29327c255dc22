//! # `roce-pcap infer`: a rocesim scenario from captures
//!
//! The captures are analyzed as `analyze` does (with each flow's first
//! messages kept); the plan below is read off the report, and written as a
//! scenario `rocesim run` replays (`infer/toml.rs`). What the captures cannot show
//! is assumed, and the file says so where it is used.
//!
//! ```text
//!  captures ──analyze──▶ Report ──plan──▶ Plan { hosts, workloads, notes } ──toml──▶ SCENARIO.toml
//!
//!  from the wire                          assumed (said so in the file)
//!  ─────────────                          ─────────────────────────────
//!  hosts: IPs, MACs, RoCE v1/v2           one switch between the hosts, links of 1 µs
//!  the captured host: one NIC per file    the bond mode (802.3ad), the subnet (/24 or wider)
//!  its bond's hash policy (by checking    the peers built like the captured host
//!    where each QP's frames went)         Ethernet MTU from the path MTU (4096: 9000)
//!  QPs: QPNs (qpn_base), UDP source       link speed: --link-speed, a run directory's ports,
//!    port (derived, or a flow label)        else 100 Gb/s
//!  verbs, message sizes and times,
//!    traffic class (DSCP, ECN)
//! ```
//!
//! Which host was captured: the one that is an end of the most flows (on a
//! tie, the requester of the first); its captures are its bond's slaves in
//! order. A workload is one client-server pair: `ib_write_bw`,
//! `ib_send_bw` or `ib_read_bw` when every QP of the pair moved the same
//! number of messages of one size and verb, starting together (as perftest
//! does); else `tool = "messages"` with every message at its time.

pub mod cli;
mod toml;
mod workloads;

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use crate::analyze::Report;
use crate::analyze::model::{QpReport, QpSlave};

pub use self::toml::write_toml;
use self::workloads::{assign_qpns, workloads_of};

/// Why no scenario could be inferred.
#[derive(Debug, thiserror::Error)]
pub enum InferError {
    #[error(
        "no RC request flows in {files}: nothing to build a scenario from (is it RoCE traffic? see --roce-port)"
    )]
    NoFlows { files: String },
    #[error("{flow}: {addr} is an IPv6 address, which rocesim does not model")]
    Ipv6 { flow: String, addr: IpAddr },
}

/// The verb of a message as the scenario names it.
pub use roce_capture::figures::Verb;

/// A bond of the captured host (and, assumed, of its peers).
#[derive(Debug, Clone)]
pub struct BondPlan {
    /// `layer3+4`, `layer2+3`, or `None` for queue-affinity LAG.
    pub policy: Option<&'static str>,
    /// How the policy was inferred, for the comment beside it.
    pub why: String,
}

/// One host of the scenario.
#[derive(Debug, Clone)]
pub struct HostPlan {
    pub name: String,
    pub ip: Ipv4Addr,
    /// The source MAC of its frames (requests, or responses), when valid
    /// for an interface.
    pub mac: Option<[u8; 6]>,
    pub captured: bool,
    /// Interfaces: the captured host's from its capture files.
    pub nics: Vec<String>,
    /// The capture file each NIC stands for (the captured host).
    pub files: Vec<String>,
    pub bond: Option<BondPlan>,
    pub qpn_base: Option<u32>,
    pub rocev1: bool,
    pub vlan: Option<u16>,
}

/// What a workload does.
#[derive(Debug, Clone)]
pub enum Tool {
    /// `ib_*_bw -s size -n iters -q qps`.
    Perftest {
        tool: &'static str,
        size: u64,
        iters: u64,
    },
    /// Every message: QP index, verb, size, time after the workload's start.
    Messages(Vec<(u32, Verb, u64, u64)>),
}

/// One workload: a client-server pair and its QPs (report rows, in the
/// order the scenario creates them).
#[derive(Debug, Clone)]
pub struct WorkloadPlan {
    pub name: String,
    pub client: usize,
    pub server: usize,
    pub flows: Vec<usize>,
    pub tool: Tool,
    pub tc: u8,
    /// Since the first frame of the captures.
    pub start_ns: u64,
    /// A `-m` when the path MTU is not what the NIC MTU gives.
    pub mtu: Option<u32>,
    pub flow_label: u32,
    /// Comments: what each figure came from.
    pub notes: Vec<String>,
    /// What this workload cannot say as the captures do (also listed in
    /// the file's header).
    pub limits: Vec<String>,
}

/// The scenario to write.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub files: Vec<String>,
    pub link_gbps: f64,
    /// `--link-speed` (or a run directory) gave the speed.
    pub link_given: bool,
    pub prefix: u8,
    pub nic_mtu: u32,
    pub hosts: Vec<HostPlan>,
    pub workloads: Vec<WorkloadPlan>,
    /// What the scenario cannot express or had to assume, for the header.
    pub notes: Vec<String>,
    /// The lowest median ACK round trip of any flow, for the links' comment.
    pub rtt_p50_ns: Option<u64>,
}

fn v4(flow: &QpReport, addr: &str) -> Result<Ipv4Addr, InferError> {
    let ip: IpAddr = addr.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    match ip {
        IpAddr::V4(a) => Ok(a),
        IpAddr::V6(a) => a.to_ipv4_mapped().ok_or(InferError::Ipv6 {
            flow: crate::analyze::model::flow_label(
                &flow.src,
                flow.requester_qpn,
                &flow.dst,
                flow.dqpn,
            ),
            addr: ip,
        }),
    }
}

/// A MAC an interface may have (unicast, not zero).
fn station(mac: [u8; 6]) -> Option<[u8; 6]> {
    (mac[0] & 1 == 0 && mac != [0; 6]).then_some(mac)
}

/// The interface name a capture file stands for: the last dotted part of
/// its name before the extension (`hostA.eth0.pcap` → `eth0`), kept to
/// letters, digits, `_` and `-`, when it reads as an interface name (a
/// letter first, a digit in it); else `eth<i>`.
pub fn nic_name(file: &str, i: usize) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    let stem = crate::inputs::CAPTURE_SUFFIXES
        .iter()
        .find_map(|s| base.strip_suffix(s))
        .unwrap_or(base);
    let last = stem.rsplit('.').next().unwrap_or(stem);
    let clean: String = last
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    let interface = clean.starts_with(|c: char| c.is_ascii_alphabetic())
        && clean.contains(|c: char| c.is_ascii_digit());
    if !interface { format!("eth{i}") } else { clean }
}

/// The Ethernet MTU a host needs for a RoCE path MTU (the largest IB MTU
/// that fits is the path MTU), and whether the workload must ask for it.
fn nic_mtu(pmtu: u32) -> (u32, Option<u32>) {
    match pmtu {
        4096 => (9000, None),
        2048 => (4200, None),
        1024 => (1500, None),
        other => (1500, Some(other)),
    }
}

/// The longest prefix (at most 24) that holds every address.
fn common_prefix(ips: &[Ipv4Addr]) -> u8 {
    let mut p = 24u8;
    for a in ips {
        for b in ips {
            let diff = u32::from(*a) ^ u32::from(*b);
            p = p.min(diff.leading_zeros() as u8);
        }
    }
    p.max(1)
}

/// Reads the plan off `report`; `link` is the link speed and whether the
/// user (or a run directory) gave it.
pub fn plan(report: &Report, name: &str, link: (f64, bool)) -> Result<Plan, InferError> {
    let files: Vec<String> = report.files.iter().map(|f| f.file.clone()).collect();
    let mut notes = Vec::new();
    let flows: Vec<&QpReport> = report
        .qps
        .iter()
        .filter(|q| {
            let rc = q.transport == "RC" && q.messages > 0;
            if !rc {
                notes.push(format!(
                    "flow #{} ({} {}) is left out: {}",
                    q.id,
                    q.transport,
                    crate::analyze::model::flow_label(&q.src, q.requester_qpn, &q.dst, q.dqpn),
                    if q.transport != "RC" {
                        "only RC is modelled"
                    } else {
                        "no whole message was seen"
                    }
                ));
            }
            rc
        })
        .collect();
    if flows.is_empty() {
        return Err(InferError::NoFlows {
            files: files.join(", "),
        });
    }

    // Hosts in order of appearance; the captured one is an end of most flows.
    let mut ips: Vec<Ipv4Addr> = Vec::new();
    for q in &flows {
        for a in [v4(q, &q.src)?, v4(q, &q.dst)?] {
            if !ips.contains(&a) {
                ips.push(a);
            }
        }
    }
    let ends = |ip: Ipv4Addr| {
        flows
            .iter()
            .filter(|q| v4(q, &q.src).ok() == Some(ip) || v4(q, &q.dst).ok() == Some(ip))
            .count()
    };
    let first_src = v4(flows[0], &flows[0].src)?;
    let captured = ips
        .iter()
        .copied()
        .max_by_key(|&ip| (ends(ip), ip == first_src))
        .unwrap_or(first_src);
    ips.sort_by_key(|&ip| ip != captured);
    let host_of = |ip: Ipv4Addr| ips.iter().position(|&h| h == ip).unwrap_or(0);

    // The captured host's bond, from where its frames went.
    let nics: Vec<String> = files
        .iter()
        .enumerate()
        .map(|(i, f)| nic_name(f, i))
        .collect();
    let mut uniq = Vec::new();
    for (i, n) in nics.iter().enumerate() {
        uniq.push(if uniq.contains(n) {
            format!("eth{i}")
        } else {
            n.clone()
        });
    }
    let bond = (files.len() >= 2).then(|| infer_bond(report, &flows, captured, &files));

    let mut hosts: Vec<HostPlan> = ips
        .iter()
        .enumerate()
        .map(|(i, &ip)| {
            let is_captured = ip == captured;
            // Its frames: the requests it sends, else the responses.
            let mac = flows.iter().find_map(|q| {
                if v4(q, &q.src).ok() == Some(ip) {
                    Some(q.wire.request_src_mac)
                } else if v4(q, &q.dst).ok() == Some(ip) {
                    q.wire.response_src_mac
                } else {
                    None
                }
            });
            HostPlan {
                name: format!("host{}", (b'A' + (i as u8 % 26)) as char),
                ip,
                mac: mac.and_then(station),
                captured: is_captured,
                nics: if is_captured {
                    uniq.clone()
                } else if bond.is_some() {
                    (0..files.len()).map(|k| format!("eth{k}")).collect()
                } else {
                    vec!["eth0".to_string()]
                },
                files: if is_captured {
                    files.clone()
                } else {
                    Vec::new()
                },
                bond: bond.clone(),
                qpn_base: None,
                rocev1: flows.iter().any(|q| q.wire.rocev1),
                vlan: flows
                    .iter()
                    .find_map(|q| q.wire.vlan_tci)
                    .map(|t| t & 0x0fff),
            }
        })
        .collect();
    // Two hosts with one MAC (a router in between, or a mirror): neither
    // keeps it.
    for i in 0..hosts.len() {
        let m = hosts[i].mac;
        if m.is_some() && hosts.iter().filter(|h| h.mac == m).count() > 1 {
            notes.push(format!(
                "{} shares its source MAC with another host (a router between the hosts?): the scenario gives it its own",
                hosts[i].name
            ));
            hosts[i].mac = None;
        }
    }

    // Workloads: one client-server pair each, QPs by requester QPN.
    let mut pairs: BTreeMap<(usize, usize), Vec<&QpReport>> = BTreeMap::new();
    for q in &flows {
        let (c, s) = (host_of(v4(q, &q.src)?), host_of(v4(q, &q.dst)?));
        pairs.entry((c, s)).or_default().push(q);
    }
    let pmtu = flows.iter().filter_map(|q| q.pmtu).max().unwrap_or(1024);
    let (nic_mtu, mtu) = nic_mtu(pmtu);
    let origin = report.capture.first_ts_ns.unwrap_or(0);
    let mut workloads = Vec::new();
    let mut pairs: Vec<((usize, usize), Vec<&QpReport>)> = pairs.into_iter().collect();
    pairs.sort_by_key(|(_, qs)| qs.iter().map(|q| q.first_ts_ns).min());
    for ((c, s), mut qs) in pairs {
        qs.sort_by_key(|q| (q.requester_qpn.unwrap_or(u32::MAX), q.dqpn, q.id));
        workloads.extend(workloads_of(&hosts, c, s, &qs, origin, mtu));
    }
    for (i, w) in workloads.iter_mut().enumerate() {
        w.name = format!("w{i}");
    }
    notes.extend(workloads.iter().flat_map(|w| w.limits.iter().cloned()));
    assign_qpns(&mut hosts, &workloads, report, &mut notes);

    Ok(Plan {
        name: name.to_string(),
        files,
        link_gbps: link.0,
        link_given: link.1,
        prefix: common_prefix(&ips),
        nic_mtu,
        hosts,
        workloads,
        notes,
        rtt_p50_ns: flows.iter().filter_map(|q| q.ack_rtt_ns.p50).min(),
    })
}

/// The hash policy the captured host's frames followed: each flow's
/// frames from that host went to one file, which layer3+4 or layer2+3
/// predicts, or the QPs took the slaves in turn (queue affinity).
fn infer_bond(
    report: &Report,
    flows: &[&QpReport],
    captured: Ipv4Addr,
    files: &[String],
) -> BondPlan {
    let maps: Vec<&QpSlave> = flows
        .iter()
        .filter_map(|q| report.lag.qp_map.iter().find(|m| m.qp == q.id))
        .collect();
    // The captured host's own transmissions: requests it sends, responses
    // it returns.
    let sent: Vec<(Option<&String>, Option<&String>, Option<&String>)> = maps
        .iter()
        .map(|m| {
            if m.src.parse::<Ipv4Addr>().ok() == Some(captured) {
                (
                    m.request_file.as_ref(),
                    m.predicted_layer3_4.as_ref(),
                    m.predicted_layer2_3.as_ref(),
                )
            } else {
                (
                    m.response_file.as_ref(),
                    m.response_predicted_layer3_4.as_ref(),
                    m.response_predicted_layer2_3.as_ref(),
                )
            }
        })
        .filter(|(f, _, _)| f.is_some())
        .collect();
    let n = sent.len();
    let l34 = sent.iter().filter(|(f, p, _)| f == p).count();
    let l23 = sent.iter().filter(|(f, _, p)| f == p).count();
    // Queue affinity: in QPN order, slave 0, 1, 2, ... round robin.
    let mut by_qpn: Vec<(u32, &String)> = flows
        .iter()
        .zip(&maps)
        .filter_map(|(q, m)| Some((q.requester_qpn.unwrap_or(q.dqpn), m.request_file.as_ref()?)))
        .collect();
    by_qpn.sort();
    let rr = by_qpn.len() >= 2
        && by_qpn
            .iter()
            .enumerate()
            .all(|(i, (_, f))| files.iter().position(|x| x == *f) == Some(i % files.len()));
    let fits = |k: usize| format!("{k} of {}", plural_qps(n));
    if n > 0 && l34 == n && l23 < n {
        BondPlan {
            policy: Some("layer3+4"),
            why: format!(
                "inferred: layer3+4 puts {} on the slave it was captured on; layer2+3 {}",
                fits(l34),
                fits(l23)
            ),
        }
    } else if n > 0 && l23 == n && l34 < n {
        BondPlan {
            policy: Some("layer2+3"),
            why: format!(
                "inferred: layer2+3 puts {} on the slave it was captured on; layer3+4 {}",
                fits(l23),
                fits(l34)
            ),
        }
    } else if n > 0 && l34 == n {
        BondPlan {
            policy: Some("layer3+4"),
            why: format!(
                "layer3+4 and layer2+3 both fit all {}: layer3+4 assumed",
                plural_qps(n)
            ),
        }
    } else if rr && l34 < n {
        BondPlan {
            policy: None,
            why: "inferred: the QPs took the slaves in turn by QPN (mlx5 queue affinity); layer3+4 fits ".to_string()
                + &fits(l34),
        }
    } else {
        BondPlan {
            policy: Some("layer3+4"),
            why: format!(
                "assumed: neither Linux hash fits every QP (layer3+4 {}, layer2+3 {}): the NIC's own LAG hash is not public",
                fits(l34),
                fits(l23)
            ),
        }
    }
}

fn plural_qps(n: usize) -> String {
    roce_capture::human::plural(n as u64, "QP")
}

#[cfg(test)]
mod tests {
    use super::workloads::flow_label_for;
    use super::*;
    use roce_codec::hash::roce_udp_sport;

    #[test]
    fn nic_names_come_from_file_names() {
        assert_eq!(nic_name("runs/x/hostA.eth0.pcap", 0), "eth0");
        assert_eq!(nic_name("slave1.pcapng.gz", 1), "slave1");
        assert_eq!(nic_name("/tmp/0.pcap", 2), "eth2");
        assert_eq!(nic_name("<stdin>", 0), "eth0");
        assert_eq!(nic_name("roce.pcap", 0), "eth0");
        assert_eq!(nic_name("ens1f0np0.pcap", 3), "ens1f0np0");
    }

    #[test]
    fn flow_labels_reproduce_ports_in_rocesim_range() {
        // rdma_calc_flow_label (include/rdma/ib_verbs.h) for QPNs 0x11, 0x12:
        // derived ports need no label.
        assert_eq!(flow_label_for(0xC132, 0x11, 0x12), Some(0));
        // Any port of 0xC000..=0xFFFF has a label; below it none.
        for sport in [0xC000u16, 0xC001, 0xEDD1, 0xFFFF] {
            let l = flow_label_for(sport, 0x11, 0x12).unwrap();
            assert!(l != 0 || sport == 0xC132);
            assert_eq!(roce_udp_sport(l, 0x11, 0x12), sport, "{sport:#x}");
        }
        assert_eq!(flow_label_for(69, 0x45, 0x48), None);
    }

    #[test]
    fn the_subnet_holds_every_host() {
        let ip = |s: &str| s.parse::<Ipv4Addr>().unwrap();
        assert_eq!(common_prefix(&[ip("10.0.0.1"), ip("10.0.0.2")]), 24);
        assert_eq!(common_prefix(&[ip("10.0.0.1"), ip("10.0.1.2")]), 23);
        assert_eq!(common_prefix(&[ip("10.0.0.1"), ip("192.168.0.1")]), 1);
    }
}
