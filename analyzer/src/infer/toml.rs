//! The plan as a scenario file, in the format of `scenarios/README.md`
//! ("The format in one screen"), each value with a comment that says what
//! it was read from or that it was assumed.
//!
//! The document is built with `toml_edit`, whose decor (the text around a
//! key, a value or a table header) carries the comments:
//!
//! ```text
//!  # Inferred by ...            the root table's prefix: header, notes
//!
//!  name = "..."                  root key-values
//!                                a blank line (the table's prefix)
//!  [[host]]                      one function per section: host_table,
//!  name = "hostA"   # 10.0.0.1   nic_table, bond_table, switch_table,
//!    [[host.nic]]                link_table, workload_table, tap_table
//!    name = "eth0"  # captured   nested tables and their values indented
//! ```

use toml_edit::{ArrayOfTables, Decor, DocumentMut, Item, Key, Table, Value};

use super::{BondPlan, HostPlan, Plan, Tool, WorkloadPlan};

/// Where a value's comment starts: `key = value` padded to this many
/// characters, then ` # comment`.
const COMMENT_COLUMN: usize = 36;

/// The indentation of a nested table (`[[host.nic]]`) and its values.
const INDENT: &str = "  ";

/// One table of the scenario as written: `[[name]]` after a blank line and
/// comment lines, or nested under one (`  [[host.nic]]`), indented.
struct Block {
    table: Table,
    indent: &'static str,
}

impl Block {
    /// The file's top-level key-values.
    fn root() -> Block {
        Block {
            table: Table::new(),
            indent: "",
        }
    }

    /// A top-level `[[...]]`: a blank line before it, then `comments`, each
    /// on a line of its own.
    fn top(comments: &[String]) -> Block {
        let mut table = Table::new();
        let mut prefix = String::from("\n");
        for c in comments {
            prefix.push_str(&format!("# {c}\n"));
        }
        table.decor_mut().set_prefix(prefix);
        Block { table, indent: "" }
    }

    /// A `[[parent.name]]` under a top-level table, it and its values
    /// indented.
    fn nested() -> Block {
        let mut table = Table::new();
        table.decor_mut().set_prefix(INDENT);
        Block {
            table,
            indent: INDENT,
        }
    }

    /// `key = value`, and `# comment` at the comment column unless it is
    /// empty.
    fn set(&mut self, key: &str, value: impl Into<Value>, comment: &str) -> &mut Block {
        let mut value = value.into();
        if !comment.is_empty() {
            let width = format!("{}{key} = {value}", self.indent).chars().count();
            let pad = COMMENT_COLUMN.saturating_sub(width);
            value
                .decor_mut()
                .set_suffix(format!("{:pad$} # {comment}", ""));
        }
        let key = Key::new(key).with_leaf_decor(Decor::new(self.indent, " "));
        self.table.insert_formatted(&key, Item::Value(value));
        self
    }

    /// Appends the table to the array of tables `key` of `parent`.
    fn append_to(self, parent: &mut Table, key: &str) {
        parent
            .entry(key)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .expect("an array of tables")
            .push(self.table);
    }
}

/// A TOML integer. Nothing the captures give comes near `i64::MAX`
/// (message sizes are 32-bit, counts are of messages seen).
fn int(n: impl Into<u64>) -> Value {
    Value::from(i64::try_from(n.into()).unwrap_or(i64::MAX))
}

/// A TOML integer written in hex, as QPNs and flow labels are read.
fn hex(n: u32) -> Value {
    format!("{n:#x}")
        .parse()
        .expect("a hex integer is a TOML value")
}

fn mac(m: [u8; 6]) -> String {
    crate::analyze::mac_text(m)
}

fn rate(gbps: f64) -> String {
    format!("{gbps}Gbps")
}

/// A capture's file name without its directory.
fn base_name(f: &str) -> &str {
    f.rsplit('/').next().unwrap_or(f)
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
    let files = p
        .files
        .iter()
        .map(|f| base_name(f))
        .collect::<Vec<_>>()
        .join(", ");
    let mut root = Block::root();
    root.set("name", p.name.as_str(), "")
        .set("description", format!("inferred from {files}"), "");
    let mut doc = DocumentMut::from(root.table);
    doc.decor_mut().set_prefix(header(p, &files));
    for h in &p.hosts {
        host_table(p, h).append_to(&mut doc, "host");
    }
    let (switch, links) = switch_table(p);
    switch.append_to(&mut doc, "switch");
    for (a, b) in &links {
        link_table(p, a, b).append_to(&mut doc, "link");
    }
    for w in &p.workloads {
        workload_table(p, w).append_to(&mut doc, "workload");
    }
    for h in p.hosts.iter().filter(|h| h.captured) {
        for n in &h.nics {
            tap_table(&format!("{}.{n}", h.name)).append_to(&mut doc, "tap");
        }
    }
    doc.to_string()
}

/// The comment at the top: where the scenario came from, how to use it,
/// and what it cannot say as the captures do; then a blank line.
fn header(p: &Plan, files: &str) -> String {
    let mut s = format!(
        "# Inferred by `roce-pcap infer` (roce-pcap {}) from {files}.\n\
         # Every value says what it was read from, or that it was assumed: a capture\n\
         # shows the hosts' frames, not the path between them. Replay it with\n\
         # `rocesim run THIS.toml`, then put the run beside the captures with\n\
         # `roce-pcap compare CAPTURES RUNDIR` to see where the model and reality differ.\n",
        env!("CARGO_PKG_VERSION")
    );
    if !p.notes.is_empty() {
        s.push_str("#\n# What the scenario cannot say as the captures do:\n");
        for n in &p.notes {
            s.push_str(&format!("#   - {n}\n"));
        }
    }
    s.push('\n');
    s
}

/// `[[host]]`: its name and RoCE, its NICs and its bond.
fn host_table(p: &Plan, h: &HostPlan) -> Block {
    let mut t = Block::top(&[]);
    let who = if h.captured {
        format!(
            "{}: the captured host (the captures are its interfaces)",
            h.ip
        )
    } else {
        format!("{}: a peer of the captured host", h.ip)
    };
    t.set("name", h.name.as_str(), &who)
        .set(
            "roce",
            if h.rocev1 { "v1" } else { "v2" },
            "as the frames were",
        )
        .set(
            "profile",
            "rxe",
            "assumed, the captures do not name the NIC: Soft-RoCE's 128-PSN window; \"connectx\" for a ConnectX",
        );
    if let Some(b) = h.qpn_base {
        t.set(
            "qpn_base",
            hex(b),
            "its first QPN in the captures; rocesim counts up from it",
        );
    }
    for (k, nic) in h.nics.iter().enumerate() {
        nic_table(p, h, k, nic).append_to(&mut t.table, "nic");
    }
    if let Some(b) = &h.bond {
        bond_table(p, h, b).append_to(&mut t.table, "bond");
    }
    t
}

/// The address of host `h` with the subnet's prefix.
fn ip(p: &Plan, h: &HostPlan) -> String {
    format!("{}/{}", h.ip, p.prefix)
}

const IP_NOTE: &str = "the prefix is assumed: one subnet for every host";

fn mac_note(h: &HostPlan) -> &'static str {
    if h.captured {
        "the source MAC of its frames"
    } else {
        "the source MAC of its frames (a router's if the path is routed)"
    }
}

/// `[[host.nic]]` number `k` of host `h`: the address is the bond's when
/// there is one.
fn nic_table(p: &Plan, h: &HostPlan, k: usize, nic: &str) -> Block {
    let mut t = Block::nested();
    let whence = match h.files.get(k) {
        Some(f) => format!("captured in {}", base_name(f)),
        None if h.bond.is_some() => "assumed: the peer is built like the captured host".into(),
        None => String::new(),
    };
    t.set("name", nic, &whence).set(
        "mtu",
        int(p.nic_mtu),
        "assumed: what the path MTU seen needs",
    );
    if let Some(v) = h.vlan {
        t.set("vlan", int(v), "the 802.1Q tag the requests carried");
    }
    if h.bond.is_none() {
        if let Some(m) = h.mac {
            t.set("mac", mac(m), mac_note(h));
        }
        t.set("ip", ip(p, h), IP_NOTE);
    }
    t
}

/// `[[host.bond]]`: every NIC of host `h`, with the hash policy (or the
/// queue-affinity LAG) inferred.
fn bond_table(p: &Plan, h: &HostPlan, b: &BondPlan) -> Block {
    let mut t = Block::nested();
    let why = if h.captured {
        b.why.as_str()
    } else {
        "assumed: as the captured host"
    };
    t.set("name", "bond0", "")
        .set(
            "mode",
            "802.3ad",
            "assumed: LACP (balance-xor hashes the same way)",
        )
        .set(
            "slaves",
            h.nics
                .iter()
                .map(String::as_str)
                .collect::<toml_edit::Array>(),
            "in the order of the captures",
        );
    match b.policy {
        Some(policy) => t.set("xmit_hash_policy", policy, why),
        None => t.set("lag", "queue-affinity", why),
    };
    if let Some(m) = h.mac {
        t.set("mac", mac(m), mac_note(h));
    }
    t.set("ip", ip(p, h), IP_NOTE);
    t
}

/// `[[switch]]` with a `[[switch.lag]]` per bonded host, and the links to
/// its ports (`host.nic`, `sw1.pN`) in host and NIC order.
fn switch_table(p: &Plan) -> (Block, Vec<(String, String)>) {
    let mut t = Block::top(&[]);
    t.set(
        "name",
        "sw1",
        "assumed: one switch between the hosts (a capture does not show the path)",
    );
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
            let mut lag = Block::nested();
            lag.set("name", format!("po_{}", h.name), "").set(
                "ports",
                ports
                    .iter()
                    .map(String::as_str)
                    .collect::<toml_edit::Array>(),
                &format!("{}'s bond", h.name),
            );
            lag.append_to(&mut t.table, "lag");
        }
    }
    (t, links)
}

/// `[[link]]` between `a` and `b`: the speed given or assumed, the delay
/// assumed.
fn link_table(p: &Plan, a: &str, b: &str) -> Block {
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
    let mut t = Block::top(&[]);
    t.set("a", a, "")
        .set("b", b, "")
        .set("rate", rate(p.link_gbps), &rate_note)
        .set("delay", "1us", &delay_note);
    t
}

/// `[[workload]]`, after its notes: a perftest stream, or its messages
/// one by one (`[[workload.message]]`).
fn workload_table(p: &Plan, w: &WorkloadPlan) -> Block {
    let mut t = Block::top(&w.notes);
    let tool = match &w.tool {
        Tool::Perftest { tool, .. } => *tool,
        Tool::Messages(_) => "messages",
    };
    t.set("name", w.name.as_str(), "")
        .set("tool", tool, "")
        .set("client", end(p, w.client), "the requester")
        .set("server", end(p, w.server), "the responder")
        .set("qps", int(w.flows.len() as u64), "");
    if let Tool::Perftest { size, iters, .. } = &w.tool {
        t.set("size", int(*size), "bytes per message")
            .set("iters", int(*iters), "messages per QP");
    }
    t.set(
        "tc",
        int(w.tc),
        &format!(
            "the first request's traffic class: DSCP {}, ECN {}",
            w.tc >> 2,
            w.tc & 3
        ),
    );
    if let Some(m) = w.mtu {
        t.set("mtu", int(m), "the path MTU seen");
    }
    if w.flow_label != 0 {
        t.set(
            "flow_label",
            hex(w.flow_label),
            "gives the captured UDP source port",
        );
    }
    t.set(
        "start",
        format!("{}ns", w.start_ns),
        "its first packet, after the first frame of the captures",
    );
    if let Tool::Messages(ms) = &w.tool {
        for (qp, verb, size, at) in ms {
            let mut m = Block::nested();
            m.set("qp", int(*qp), "")
                .set("verb", verb.name(), "")
                .set("size", int(*size), "")
                .set("at", format!("{at}ns"), "");
            m.append_to(&mut t.table, "message");
        }
    }
    t
}

/// `[[tap]]` at interface `at` of the captured host.
fn tap_table(at: &str) -> Block {
    let mut t = Block::top(&[]);
    t.set("at", at, "where the captures were taken").set(
        "snaplen",
        int(128u64),
        "headers only: enough for every figure compare shows",
    );
    t
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::super::Verb;
    use super::*;

    fn host(name: &str, n: u8, captured: bool, bond: Option<BondPlan>, nics: &[&str]) -> HostPlan {
        HostPlan {
            name: name.into(),
            ip: Ipv4Addr::new(10, 0, 0, n),
            mac: Some([2, 0, 0, 0, 0, n]),
            captured,
            nics: nics.iter().map(|s| s.to_string()).collect(),
            files: if captured {
                nics.iter()
                    .map(|s| format!("/runs/\"x\"/{s}.pcap"))
                    .collect()
            } else {
                Vec::new()
            },
            bond,
            qpn_base: Some(0x100 * u32::from(n)),
            rocev1: n == 1,
            vlan: Some(100),
        }
    }

    /// What the captures of the tests and traces/ do not reach: RoCE v1,
    /// VLANs, queue-affinity LAG, quotes in names, messages one by one.
    fn plan() -> Plan {
        let lag = BondPlan {
            policy: None,
            why: "inferred: the QPs took the slaves in turn".into(),
        };
        Plan {
            name: "lab \"7\"".into(),
            files: vec![
                "/runs/\"x\"/eth0.pcap".into(),
                "/runs/\"x\"/eth1.pcap".into(),
            ],
            link_gbps: 25.0,
            link_given: true,
            prefix: 24,
            nic_mtu: 4200,
            hosts: vec![
                host("hostA", 1, true, Some(lag), &["eth0", "eth1"]),
                host("hostB", 2, false, None, &["eth0"]),
            ],
            workloads: vec![WorkloadPlan {
                name: "w0".into(),
                client: 0,
                server: 1,
                flows: vec![0],
                tool: Tool::Messages(vec![(0, Verb::Write, 10, 0), (0, Verb::SendImm, 4096, 999)]),
                tc: 106,
                start_ns: 12345,
                mtu: Some(1024),
                flow_label: 0xabcde,
                notes: vec!["hostA -> hostB".into()],
                limits: vec![],
            }],
            notes: vec!["a note".into()],
            rtt_p50_ns: Some(21_060),
        }
    }

    #[test]
    fn every_section_reads_back_with_its_comments() {
        let text = write_toml(&plan());
        let doc: DocumentMut = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(doc["name"].as_str(), Some("lab \"7\""));
        let a = &doc["host"][0];
        assert_eq!(a["roce"].as_str(), Some("v1"));
        assert_eq!(a["qpn_base"].as_integer(), Some(0x100));
        assert_eq!(a["nic"][1]["vlan"].as_integer(), Some(100));
        assert_eq!(a["bond"][0]["lag"].as_str(), Some("queue-affinity"));
        assert!(a["nic"][0].get("ip").is_none());
        assert_eq!(doc["host"][1]["nic"][0]["ip"].as_str(), Some("10.0.0.2/24"));
        let ports = doc["switch"][0]["lag"][0]["ports"].as_array().unwrap();
        let ports: Vec<_> = ports.iter().filter_map(|p| p.as_str()).collect();
        assert_eq!(ports, ["p1", "p2"]);
        assert_eq!(doc["link"].as_array_of_tables().map(|l| l.len()), Some(3));
        let w = &doc["workload"][0];
        assert_eq!(w["flow_label"].as_integer(), Some(0xabcde));
        assert_eq!(w["message"][1]["verb"].as_str(), Some("send_imm"));
        assert_eq!(doc["tap"].as_array_of_tables().map(|t| t.len()), Some(2));
        for line in [
            "#   - a note\n\nname = ",
            "\nqpn_base = 0x100                     # its first QPN in the captures; rocesim counts up from it\n",
            "\n  [[host.nic]]\n  name = \"eth0\"                      # captured in eth0.pcap\n",
            "\n  lag = \"queue-affinity\"             # inferred: the QPs took the slaves in turn\n",
            "\nrate = \"25Gbps\"                      # the link speed given\n",
            "\n\n# hostA -> hostB\n[[workload]]\n",
            "\n  [[workload.message]]\n  qp = 0\n",
            "\nflow_label = 0xabcde                 # gives the captured UDP source port\n",
        ] {
            assert!(text.contains(line), "no {line:?} in\n{text}");
        }
    }
}
