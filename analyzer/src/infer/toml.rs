//! The plan as a scenario file, in the format of `scenarios/README.md`
//! ("The format in one screen"), each value with a comment that says what
//! it was read from or that it was assumed.

use std::fmt::Write;

use super::{Plan, Tool};

/// A TOML basic string (JSON's escapes are TOML's).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn mac(m: [u8; 6]) -> String {
    crate::analyze::mac_text(m)
}

/// A value and its comment, the comments of a block aligned.
fn kv(out: &mut String, indent: &str, key: &str, value: &str, comment: &str) {
    let line = format!("{indent}{key} = {value}");
    if comment.is_empty() {
        let _ = writeln!(out, "{line}");
    } else {
        let _ = writeln!(out, "{line:<36} # {comment}");
    }
}

fn rate(gbps: f64) -> String {
    quoted(&format!("{gbps}Gbps"))
}

/// The interface a workload end runs on: the bond, or the host.
fn end(p: &Plan, host: usize) -> String {
    let h = &p.hosts[host];
    if h.bond.is_some() {
        format!("{}.bond0", h.name)
    } else {
        h.name.clone()
    }
}

/// Writes the scenario of `p`.
pub fn write_toml(p: &Plan) -> String {
    let mut o = String::new();
    let files = p
        .files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap_or(f))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        o,
        "# Inferred by `roce-pcap infer` (roce-pcap {}) from {files}.",
        env!("CARGO_PKG_VERSION")
    );
    o.push_str(
        "# Every value says what it was read from, or that it was assumed: a capture\n\
         # shows the hosts' frames, not the path between them. Replay it with\n\
         # `rocesim run THIS.toml`, then put the run beside the captures with\n\
         # `roce-pcap compare CAPTURES RUNDIR` to see where the model and reality differ.\n",
    );
    if !p.notes.is_empty() {
        o.push_str("#\n# What the scenario cannot say as the captures do:\n");
        for n in &p.notes {
            let _ = writeln!(o, "#   - {n}");
        }
    }
    o.push('\n');
    kv(&mut o, "", "name", &quoted(&p.name), "");
    kv(
        &mut o,
        "",
        "description",
        &quoted(&format!("inferred from {files}")),
        "",
    );

    let vlan_note = "the 802.1Q tag the requests carried";
    for h in &p.hosts {
        o.push('\n');
        let _ = writeln!(o, "[[host]]");
        kv(
            &mut o,
            "",
            "name",
            &quoted(&h.name),
            &if h.captured {
                format!(
                    "{}: the captured host (the captures are its interfaces)",
                    h.ip
                )
            } else {
                format!("{}: a peer of the captured host", h.ip)
            },
        );
        kv(
            &mut o,
            "",
            "roce",
            &quoted(if h.rocev1 { "v1" } else { "v2" }),
            "as the frames were",
        );
        kv(
            &mut o,
            "",
            "profile",
            &quoted("rxe"),
            "assumed, the captures do not name the NIC: Soft-RoCE's 128-PSN window; \"connectx\" for a ConnectX",
        );
        if let Some(b) = h.qpn_base {
            kv(
                &mut o,
                "",
                "qpn_base",
                &format!("{b:#x}"),
                "its first QPN in the captures; rocesim counts up from it",
            );
        }
        let ip = format!("{}/{}", h.ip, p.prefix);
        let ip_note = "the prefix is assumed: one subnet for every host";
        let mac_note = if h.captured {
            "the source MAC of its frames"
        } else {
            "the source MAC of its frames (a router's if the path is routed)"
        };
        for (k, nic) in h.nics.iter().enumerate() {
            let _ = writeln!(o, "  [[host.nic]]");
            let file = h.files.get(k);
            kv(
                &mut o,
                "  ",
                "name",
                &quoted(nic),
                &match file {
                    Some(f) => format!("captured in {}", f.rsplit('/').next().unwrap_or(f)),
                    None if h.bond.is_some() => {
                        "assumed: the peer is built like the captured host".to_string()
                    }
                    None => String::new(),
                },
            );
            kv(
                &mut o,
                "  ",
                "mtu",
                &p.nic_mtu.to_string(),
                "assumed: what the path MTU seen needs",
            );
            if let Some(v) = h.vlan {
                kv(&mut o, "  ", "vlan", &v.to_string(), vlan_note);
            }
            if h.bond.is_none() {
                if let Some(m) = h.mac {
                    kv(&mut o, "  ", "mac", &quoted(&mac(m)), mac_note);
                }
                kv(&mut o, "  ", "ip", &quoted(&ip), ip_note);
            }
        }
        if let Some(b) = &h.bond {
            let _ = writeln!(o, "  [[host.bond]]");
            kv(&mut o, "  ", "name", &quoted("bond0"), "");
            kv(
                &mut o,
                "  ",
                "mode",
                &quoted("802.3ad"),
                "assumed: LACP (balance-xor hashes the same way)",
            );
            let slaves = h
                .nics
                .iter()
                .map(|n| quoted(n))
                .collect::<Vec<_>>()
                .join(", ");
            kv(
                &mut o,
                "  ",
                "slaves",
                &format!("[{slaves}]"),
                "in the order of the captures",
            );
            match b.policy {
                Some(policy) => kv(
                    &mut o,
                    "  ",
                    "xmit_hash_policy",
                    &quoted(policy),
                    if h.captured {
                        &b.why
                    } else {
                        "assumed: as the captured host"
                    },
                ),
                None => kv(
                    &mut o,
                    "  ",
                    "lag",
                    &quoted("queue-affinity"),
                    if h.captured {
                        &b.why
                    } else {
                        "assumed: as the captured host"
                    },
                ),
            }
            if let Some(m) = h.mac {
                kv(&mut o, "  ", "mac", &quoted(&mac(m)), mac_note);
            }
            kv(&mut o, "  ", "ip", &quoted(&ip), ip_note);
        }
    }

    o.push('\n');
    let _ = writeln!(o, "[[switch]]");
    kv(
        &mut o,
        "",
        "name",
        &quoted("sw1"),
        "assumed: one switch between the hosts (a capture does not show the path)",
    );
    // Switch ports in host and NIC order; a LAG per bonded host.
    let mut port = 0;
    let mut links = Vec::new();
    for h in &p.hosts {
        let ports: Vec<String> = h
            .nics
            .iter()
            .map(|n| {
                port += 1;
                links.push((format!("{}.{n}", h.name), format!("sw1.p{port}")));
                format!("p{port}")
            })
            .collect();
        if h.bond.is_some() {
            let _ = writeln!(o, "  [[switch.lag]]");
            kv(&mut o, "  ", "name", &quoted(&format!("po_{}", h.name)), "");
            kv(
                &mut o,
                "  ",
                "ports",
                &format!(
                    "[{}]",
                    ports
                        .iter()
                        .map(|s| quoted(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                &format!("{}'s bond", h.name),
            );
        }
    }
    let rate_note = if p.link_given {
        "the link speed given".to_string()
    } else {
        "assumed: 100 Gb/s (not in a capture; give --link-speed)".to_string()
    };
    let delay_note = match p.rtt_p50_ns {
        Some(rtt) => format!(
            "assumed (the lowest median ACK round trip seen is {})",
            roce_capture::human::duration(rtt)
        ),
        None => "assumed".to_string(),
    };
    for (a, b) in &links {
        o.push('\n');
        let _ = writeln!(o, "[[link]]");
        kv(&mut o, "", "a", &quoted(a), "");
        kv(&mut o, "", "b", &quoted(b), "");
        kv(&mut o, "", "rate", &rate(p.link_gbps), &rate_note);
        kv(&mut o, "", "delay", &quoted("1us"), &delay_note);
    }

    for w in &p.workloads {
        o.push('\n');
        for n in &w.notes {
            let _ = writeln!(o, "# {n}");
        }
        let _ = writeln!(o, "[[workload]]");
        kv(&mut o, "", "name", &quoted(&w.name), "");
        let (tool, qps) = match &w.tool {
            Tool::Perftest { tool, .. } => (*tool, w.flows.len()),
            Tool::Messages(_) => ("messages", w.flows.len()),
        };
        kv(&mut o, "", "tool", &quoted(tool), "");
        kv(
            &mut o,
            "",
            "client",
            &quoted(&end(p, w.client)),
            "the requester",
        );
        kv(
            &mut o,
            "",
            "server",
            &quoted(&end(p, w.server)),
            "the responder",
        );
        kv(&mut o, "", "qps", &qps.to_string(), "");
        if let Tool::Perftest { size, iters, .. } = &w.tool {
            kv(&mut o, "", "size", &size.to_string(), "bytes per message");
            kv(&mut o, "", "iters", &iters.to_string(), "messages per QP");
        }
        kv(
            &mut o,
            "",
            "tc",
            &w.tc.to_string(),
            &format!(
                "the first request's traffic class: DSCP {}, ECN {}",
                w.tc >> 2,
                w.tc & 3
            ),
        );
        if let Some(m) = w.mtu {
            kv(&mut o, "", "mtu", &m.to_string(), "the path MTU seen");
        }
        if w.flow_label != 0 {
            kv(
                &mut o,
                "",
                "flow_label",
                &format!("{:#x}", w.flow_label),
                "gives the captured UDP source port",
            );
        }
        kv(
            &mut o,
            "",
            "start",
            &quoted(&format!("{}ns", w.start_ns)),
            "its first packet, after the first frame of the captures",
        );
        if let Tool::Messages(ms) = &w.tool {
            for (qp, verb, size, at) in ms {
                let _ = writeln!(o, "  [[workload.message]]");
                kv(&mut o, "  ", "qp", &qp.to_string(), "");
                kv(&mut o, "  ", "verb", &quoted(verb.name()), "");
                kv(&mut o, "  ", "size", &size.to_string(), "");
                kv(&mut o, "  ", "at", &quoted(&format!("{at}ns")), "");
            }
        }
    }

    for h in p.hosts.iter().filter(|h| h.captured) {
        for n in &h.nics {
            o.push('\n');
            let _ = writeln!(o, "[[tap]]");
            kv(
                &mut o,
                "",
                "at",
                &quoted(&format!("{}.{n}", h.name)),
                "where the captures were taken",
            );
            kv(
                &mut o,
                "",
                "snaplen",
                "128",
                "headers only: enough for every figure compare shows",
            );
        }
    }
    o
}
