//! `counters.prom`: every counter of `summary.json`'s `counters` in the
//! Prometheus text exposition format (version 0.0.4), for node_exporter's
//! textfile collector (`--collector.textfile.directory`) or any scraper;
//! `promtool check metrics` passes on it.
//!
//! ```text
//!  # HELP rocesim_rdma_port_xmit_data_total RDMA port counter port_xmit_data (...), in 4-byte words: ...
//!  # TYPE rocesim_rdma_port_xmit_data_total counter
//!  rocesim_rdma_port_xmit_data_total{host="hostA",device="mlx5_bond_0",port="1"} 67371136
//!  # HELP rocesim_ethtool_rx_prio_pause_total ethtool -S counter rx_prio{N}_pause ..., a count
//!  # TYPE rocesim_ethtool_rx_prio_pause_total counter
//!  rocesim_ethtool_rx_prio_pause_total{host="sw1",device="p3",priority="3"} 12
//! ```
//!
//! Naming: `rocesim_` + the group + the hardware name + `_total` (every one
//! is a counter, and promtool's lint wants the suffix):
//!
//! | group | counters | labels |
//! |---|---|---|
//! | `rocesim_ethtool_` | a netdev's `ethtool -S` counters, host NICs and switch ports | `host` (host or switch), `device` (netdev, or the switch's port) |
//! | `rocesim_rdma_` | an RDMA device port's IB PMA counters (`counters/`) and hardware counters (`hw_counters/`) | `host`, `device` (`mlx5_0`, `mlx5_bond_0`), `port` (`1`) |
//!
//! A per-priority name (`rx_prio3_pause`) loses its number to a `priority`
//! label: one metric `rocesim_ethtool_rx_prio_pause_total` with eight
//! series. Values are the hardware's own: `port_xmit_data` and
//! `port_rcv_data` stay in 4-byte words (the HELP line says so; multiply
//! by 4 for bytes, as node_exporter's infiniband collector does with the
//! sysfs files), pause durations in microseconds. Besides the counters,
//! the gauge `rocesim_rdma_port_info{host,device,port,netdev} 1` maps
//! every RDMA device to its netdev, as `ibdev2netdev` does.
//!
//! Which counters exist is `summary.json`'s business ([`super::counters`]):
//! a counter the model adds there shows here with no change to this file.
//! Families and series come in name order, so the file is a pure function
//! of the run.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use super::counters::CounterSet;
use super::devices::{self, Kind};
use crate::world::World;

/// One metric family: its HELP and TYPE, then its series (labels, value),
/// in the order they were added.
struct Family<'a> {
    name: &'a str,
    help: String,
    kind: &'static str,
    series: Vec<(Labels<'a>, u64)>,
}

/// A series' labels, borrowed from the owners and names they come from: a
/// `String` per label per series cost more than writing them out (a
/// fabric has hundreds of thousands of series).
struct Labels<'a> {
    host: &'a str,
    device: &'a str,
    /// An RDMA device port's series: `port="1"` follows the device.
    port: bool,
    priority: Option<u8>,
    netdev: Option<&'a str>,
}

/// What a hardware name makes: its priority, kind and metric name as an
/// RDMA or an ethtool counter, and the index of each one's family once
/// known.
struct Name {
    base: String,
    prio: Option<u8>,
    kind: Kind,
    metrics: [String; 2],
    families: [Cell<Option<usize>>; 2],
}

/// Which of a [`Name`]'s metrics.
const RDMA: usize = 0;
const ETHTOOL: usize = 1;

/// The text of `counters.prom` for the run's `counters`.
pub fn counters_prom(w: &World, counters: &BTreeMap<String, CounterSet>) -> String {
    let mut out = Vec::new();
    write_counters_prom(w, counters, &mut out).expect("a Vec takes every byte");
    String::from_utf8(out).expect("UTF-8 names")
}

/// Writes `counters.prom` for the run's `counters` to `to`, a family at a
/// time (a fabric's file runs to megabytes).
pub fn write_counters_prom(
    w: &World,
    counters: &BTreeMap<String, CounterSet>,
    to: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let owners = devices::owners(w);
    let owner_of: Vec<devices::Owner> = counters
        .keys()
        .map(|key| devices::owner(&owners, key))
        .collect();
    // Worked out once per name: a fabric's hosts repeat the same few dozen
    // names thousands of times.
    let mut names: HashMap<&str, Name> = HashMap::new();
    for hw in counters.values().flat_map(|set| set.keys()) {
        names.entry(hw.as_str()).or_insert_with(|| {
            let (base, prio) = devices::split_priority(hw);
            let metric = |group: &str| {
                let mut name = format!("rocesim_{group}_{}", metric_name(&base));
                if !name.ends_with("_total") {
                    name.push_str("_total");
                }
                name
            };
            Name {
                metrics: [metric("rdma"), metric("ethtool")],
                families: Default::default(),
                kind: devices::kind(hw),
                base,
                prio,
            }
        });
    }
    let mut families: Vec<Family<'_>> = Vec::new();
    let mut by_metric: HashMap<&str, usize> = HashMap::new();
    for ((_, set), o) in counters.iter().zip(&owner_of) {
        for (hw, &v) in set {
            let n = &names[hw.as_str()];
            let rdma = o.rdma.as_deref().filter(|_| n.kind != Kind::Ethtool);
            let which = if rdma.is_some() { RDMA } else { ETHTOOL };
            // Names that differ in a priority alone share a metric, so
            // its family: looked up by the metric's name once per name.
            let i = n.families[which].get().unwrap_or_else(|| {
                let metric = n.metrics[which].as_str();
                let i = *by_metric.entry(metric).or_insert_with(|| {
                    let kind = rdma.map_or(Kind::Ethtool, |_| n.kind);
                    families.push(Family {
                        name: metric,
                        help: help(hw, kind, &n.base, n.prio),
                        kind: "counter",
                        series: Vec::new(),
                    });
                    families.len() - 1
                });
                n.families[which].set(Some(i));
                i
            });
            let labels = Labels {
                host: &o.host,
                device: rdma.unwrap_or(&o.netdev),
                port: rdma.is_some(),
                priority: n.prio,
                netdev: None,
            };
            families[i].series.push((labels, v));
        }
    }
    let machines = devices::machines(w);
    let mut info = Family {
        name: "rocesim_rdma_port_info",
        help: "An RDMA device port of a simulated host and the netdev it runs over \
               (ibdev2netdev); always 1"
            .into(),
        kind: "gauge",
        series: Vec::new(),
    };
    // The machines whose counters are here (all of them, but in a large
    // fabric's summary, `super::series`).
    let shown: std::collections::HashSet<&str> = counters
        .keys()
        .map(|k| k.split('.').next().unwrap_or(k))
        .collect();
    for m in machines.iter().filter(|m| shown.contains(m.name)) {
        for d in &m.rdma {
            let labels = Labels {
                host: m.name,
                device: &d.name,
                port: true,
                priority: None,
                netdev: Some(d.netdev.name()),
            };
            info.series.push((labels, 1));
        }
    }
    if !info.series.is_empty() {
        families.push(info);
    }
    // Families in name order. Their names are unique (a counter's ends in
    // `_total`, the info gauge's does not), so the order is a function of
    // the run, whatever the sort.
    families.sort_unstable_by(|a, b| a.name.cmp(b.name));
    let mut out = String::new();
    for f in &families {
        out.clear();
        let _ = writeln!(out, "# HELP {} {}", f.name, escape_help(&f.help));
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        for (l, v) in &f.series {
            out.push_str(f.name);
            label(&mut out, "{host", l.host);
            label(&mut out, ",device", l.device);
            if l.port {
                out.push_str(",port=\"1\"");
            }
            if let Some(p) = l.priority {
                let _ = write!(out, ",priority=\"{p}\"");
            }
            if let Some(n) = l.netdev {
                label(&mut out, ",netdev", n);
            }
            let _ = writeln!(out, "}} {v}");
        }
        to.write_all(out.as_bytes())?;
    }
    Ok(())
}

/// `<key>="<value>"`, the value escaped if it must be (`key` carries the
/// separator before it).
fn label(out: &mut String, key: &str, value: &str) {
    out.push_str(key);
    out.push_str("=\"");
    if value.contains(['\\', '"', '\n']) {
        out.push_str(&escape_label(value));
    } else {
        out.push_str(value);
    }
    out.push('"');
}

/// A hardware name as a metric name: anything but `[A-Za-z0-9_]` becomes
/// `_`.
fn metric_name(hw: &str) -> String {
    hw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What the counter is and its unit, from its hardware name.
fn help(hw: &str, kind: Kind, base: &str, prio: Option<u8>) -> String {
    let per_prio = prio.is_some();
    let shown = if per_prio {
        base.replacen("prio", "prio{N}", 1)
    } else {
        hw.to_string()
    };
    let what = match kind {
        Kind::Pma => format!(
            "RDMA port counter {shown} (sysfs class/infiniband/<device>/ports/<port>/counters/)"
        ),
        Kind::Hw => format!(
            "RDMA hardware counter {shown} (sysfs class/infiniband/<device>/ports/<port>/hw_counters/)"
        ),
        Kind::Ethtool => format!("ethtool -S counter {shown} of the netdev (or switch port)"),
    };
    let unit = if matches!(hw, "port_xmit_data" | "port_rcv_data") {
        "in 4-byte words: multiply by 4 for bytes"
    } else if hw == "port_xmit_wait" {
        "in ticks of the port's sampling clock"
    } else if hw.contains("bytes") {
        "in bytes"
    } else if hw.ends_with("duration") {
        "in microseconds"
    } else {
        "a count"
    };
    let prio = if per_prio {
        ", priority N in the priority label"
    } else {
        ""
    };
    format!("{what}{prio}, {unit}; simulated by rocesim")
}

/// HELP text escapes backslash and newline.
fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Label values escape backslash, double quote and newline.
fn escape_label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_names_the_unit() {
        let h = help("port_xmit_data", Kind::Pma, "port_xmit_data", None);
        assert!(h.contains("counters/") && h.contains("4-byte words"), "{h}");
        let h = help(
            "rx_prio3_pause_duration",
            Kind::Ethtool,
            "rx_prio_pause_duration",
            Some(3),
        );
        assert!(h.contains("rx_prio{N}_pause_duration"), "{h}");
        assert!(
            h.contains("microseconds") && h.contains("priority label"),
            "{h}"
        );
        let h = help("np_cnp_sent", Kind::Hw, "np_cnp_sent", None);
        assert!(h.contains("hw_counters/") && h.ends_with("a count; simulated by rocesim"));
        let h = help("tx_bytes_phy", Kind::Ethtool, "tx_bytes_phy", None);
        assert!(h.contains("ethtool -S") && h.contains("in bytes"), "{h}");
    }

    #[test]
    fn escapes_follow_the_exposition_format() {
        assert_eq!(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(escape_help("a\\b\nc\""), "a\\\\b\\nc\"");
        assert_eq!(metric_name("rx-prio.x"), "rx_prio_x");
    }
}
