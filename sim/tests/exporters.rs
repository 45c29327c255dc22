//! Counters where operators look for them: a run's `counters.prom` and
//! `sysfs/<host>/` read by Prometheus's own tools (promtool, a real
//! node_exporter) and checked against `summary.json`'s `counters`, the
//! kernel's formats and counter names (mlx5 en_stats.c, the IB PMA
//! `counters/` and mlx5 `hw_counters/` under /sys/class/infiniband).

mod common;

use common::*;
use roce_testkit::prometheus::{self, NodeExporter, Sample, check_metrics, promtool};
use rocesim::run::devices::{self, Kind};
use serde_json::Value;
use std::path::Path;

// Smaller than the shipped default so the debug-build test stays quick.
const LAG_SMALL: [&str; 2] = ["workload.0.size=1MiB", "workload.0.iters=8"];

/// Whether a counter is an RDMA one (`counters/` or `hw_counters/`, not
/// only counters.prom), by the kernel's lists in `rocesim::run::devices`:
/// the node_exporter test reads the `counters/` files back by their
/// kernel names, and a bond's counters must all be RDMA ones.
fn rdma(hw: &str) -> bool {
    devices::kind(hw) != Kind::Ethtool
}

/// The mlx5 name of a host interface in these scenarios: `mlx5_bond_0`
/// for the (only) bond, `mlx5_<n>` for NIC `eth<n>` (the n-th NIC).
fn mlx5_name(iface: &str) -> String {
    match iface.strip_prefix("eth") {
        Some(n) => format!("mlx5_{n}"),
        None => "mlx5_bond_0".to_string(),
    }
}

fn counters(s: &Value) -> &serde_json::Map<String, Value> {
    s["counters"].as_object().unwrap()
}

/// The `name` of every entry of summary.json's array `list`.
fn names<'a>(s: &'a Value, list: &str) -> Vec<&'a str> {
    s[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect()
}

/// The hosts of a run: nodes with ports that are no switch.
fn hosts(s: &Value) -> Vec<String> {
    let switches = names(s, "switches");
    let mut h: Vec<String> = names(s, "ports")
        .into_iter()
        .map(|p| p.split('.').next().unwrap())
        .filter(|n| !switches.contains(n))
        .map(str::to_string)
        .collect();
    h.sort();
    h.dedup();
    h
}

/// A hardware name's metric part and priority, read independently of the
/// exporter: `rx_prio3_pause` is (`rx_prio_pause`, `Some("3")`).
fn prio_split(hw: &str) -> (String, Option<String>) {
    let parts: Vec<&str> = hw.split('_').collect();
    for (i, p) in parts.iter().enumerate() {
        if let Some(n) = p.strip_prefix("prio")
            && !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
        {
            let mut base = parts.clone();
            base[i] = "prio";
            return (base.join("_"), Some(n.to_string()));
        }
    }
    (hw.to_string(), None)
}

/// Every counter of summary.json is one sample of counters.prom, under
/// the name and labels the module docs promise, with the same value.
fn every_counter_is_a_sample(name: &str, s: &Value, prom: &[Sample]) {
    let bonds = names(s, "bonds");
    // A bond's key holds only its RDMA device's counters: each must be a
    // name the sysfs writer places (else add it to run/devices.rs).
    for b in &bonds {
        for hw in counters(s)[*b].as_object().unwrap().keys() {
            assert!(rdma(hw), "{name}: {b} {hw}");
        }
    }
    let hosts = hosts(s);
    let mut n = 0;
    for (key, set) in counters(s) {
        let (host, iface) = key.split_once('.').unwrap();
        let has_rdma = bonds.contains(&key.as_str())
            || set.as_object().unwrap().contains_key("port_xmit_data");
        let rdma_device = (hosts.iter().any(|h| h == host) && has_rdma).then(|| mlx5_name(iface));
        for (hw, v) in set.as_object().unwrap() {
            let v = v.as_u64().unwrap() as f64;
            let (base, prio) = prio_split(hw);
            let (metric, mut labels) = match (&rdma_device, rdma(hw)) {
                (Some(dev), true) => (
                    format!("rocesim_rdma_{base}_total"),
                    vec![("host", host), ("device", dev.as_str()), ("port", "1")],
                ),
                _ => (
                    format!("rocesim_ethtool_{base}_total"),
                    vec![("host", host), ("device", iface)],
                ),
            };
            if let Some(p) = &prio {
                labels.push(("priority", p.as_str()));
            }
            assert_eq!(
                prometheus::value(prom, &metric, &labels),
                v,
                "{name}: {key} {hw}"
            );
            n += 1;
        }
    }
    let counted = prom.iter().filter(|p| p.0.ends_with("_total")).count();
    assert_eq!(
        counted, n,
        "{name}: counters.prom has samples summary.json lacks"
    );
}

#[test]
fn counters_prom_holds_every_counter_and_promtool_accepts_it() {
    let tool = promtool();
    for (name, sets) in [
        ("lag_hash", LAG_SMALL.to_vec()),
        ("retry_exceeded", vec![]),
        ("failover", vec![]),
        ("ecmp", vec![]),
        ("dcqcn_convergence", vec!["sim.stop_at=200us"]),
    ] {
        let (out, s) = run_scenario(name, &format!("prom_{name}"), &sets);
        let file = out.join("counters.prom");
        let text = std::fs::read_to_string(&file).unwrap();
        let prom = prometheus::parse(&text);
        every_counter_is_a_sample(name, &s, &prom);
        // Every RDMA device of every host has its info sample.
        for h in hosts(&s) {
            assert!(
                prom.iter()
                    .any(|p| p.0 == "rocesim_rdma_port_info" && p.1["host"] == h),
                "{name}: no rocesim_rdma_port_info for {h}"
            );
        }
        if let Some(p) = tool {
            check_metrics(p, &file);
        }
    }
}

/// A sysfs file's text without its newline; fails unless it is exactly
/// one line ending in `\n`, as the kernel's `sysfs_emit` writes it.
fn read(root: &Path, rel: &str) -> String {
    let t = std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let v = t
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("{rel}: no newline: {t:?}"));
    assert!(!v.contains('\n'), "{rel}: more than one line: {t:?}");
    v.to_string()
}

fn read_u64(root: &Path, rel: &str) -> u64 {
    let v = read(root, rel);
    v.parse()
        .unwrap_or_else(|_| panic!("{rel}: {v:?} is no integer"))
}

/// Every file of every host's tree is one line; every counter reads back
/// as an integer; an RDMA device's counters are summary.json's, no more,
/// no fewer.
/// Whether host `h` took part in the run, by `summary.json`: it has a QP,
/// or a port of its sent, received or dropped a frame.
fn took_part(s: &Value, h: &str) -> bool {
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
    let ports = s["ports"].as_array().unwrap().iter().filter(|p| {
        p["name"]
            .as_str()
            .unwrap()
            .strip_prefix(h)
            .is_some_and(|r| r.starts_with('.'))
    });
    ports
        .into_iter()
        .any(|p| n(p, "tx_packets") + n(p, "rx_packets") + n(p, "drops") > 0)
        || s["qps"].as_array().unwrap().iter().any(|q| q["host"] == h)
}

fn sysfs_matches_summary(name: &str, out: &Path, s: &Value) {
    for h in hosts(s) {
        let root = out.join("sysfs").join(&h);
        // Only the hosts that took part have a tree.
        assert_eq!(root.is_dir(), took_part(s, &h), "{name}: sysfs/{h}");
        if !took_part(s, &h) {
            continue;
        }
        let all = files_below(&root);
        assert!(!all.is_empty(), "{name}: no sysfs for {h}");
        for f in &all {
            let rel = f.to_str().unwrap();
            let v = read(&root, rel);
            let counter = ["/counters/", "/hw_counters/", "/statistics/"]
                .iter()
                .any(|d| rel.contains(d));
            if counter {
                assert!(v.parse::<u64>().is_ok(), "{name}: {h}/{rel}: {v:?}");
            }
        }
        for (key, set) in counters(s)
            .iter()
            .filter(|(k, _)| k.starts_with(&format!("{h}.")))
        {
            let iface = key.split_once('.').unwrap().1;
            let dev = format!("class/infiniband/{}/ports/1", mlx5_name(iface));
            for (hw, v) in set.as_object().unwrap() {
                let dir = match devices::kind(hw) {
                    Kind::Pma => "counters",
                    Kind::Hw => "hw_counters",
                    Kind::Ethtool => continue,
                };
                assert_eq!(
                    read_u64(&root, &format!("{dev}/{dir}/{hw}")),
                    v.as_u64().unwrap(),
                    "{name}: {key} {hw}"
                );
            }
            if root.join(&dev).exists() {
                let files = |d: &str| std::fs::read_dir(root.join(&dev).join(d)).unwrap().count();
                let rdma = set.as_object().unwrap().keys().filter(|k| rdma(k)).count();
                // hw_counters/ also has the kernel's `lifespan`.
                assert_eq!(
                    files("counters") + files("hw_counters"),
                    rdma + 1,
                    "{name}: {dev}"
                );
                assert_eq!(read_u64(&root, &format!("{dev}/hw_counters/lifespan")), 10);
            }
        }
    }
}

#[test]
fn sysfs_reads_back_as_the_kernel_writes_it() {
    // A bonded pair: one RDMA device per bond, the bond's files.
    let (out, s) = run_scenario("lag_hash", "sysfs_lag", &LAG_SMALL);
    sysfs_matches_summary("lag_hash", &out, &s);
    let a = out.join("sysfs/hostA/class");
    let entries = |d: &str| {
        let mut v: Vec<String> = std::fs::read_dir(a.join(d))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(entries("infiniband"), ["mlx5_bond_0"]);
    assert_eq!(entries("net"), ["bond0", "eth0", "eth1"]);
    let ib = "infiniband/mlx5_bond_0";
    assert_eq!(read(&a, &format!("{ib}/ports/1/state")), "4: ACTIVE");
    assert_eq!(read(&a, &format!("{ib}/ports/1/phys_state")), "5: LinkUp");
    assert_eq!(
        read(&a, &format!("{ib}/ports/1/rate")),
        "100 Gb/sec (4X EDR)"
    );
    assert_eq!(read(&a, &format!("{ib}/ports/1/link_layer")), "Ethernet");
    assert_eq!(read(&a, &format!("{ib}/node_type")), "1: CA");
    let mac = read(&a, "net/bond0/address");
    assert_eq!(
        read(&a, "net/eth1/address"),
        mac,
        "a slave carries its bond's MAC"
    );
    let m: Vec<&str> = mac.split(':').collect();
    assert_eq!(
        read(&a, &format!("{ib}/node_guid")),
        format!("{}{}:{}03:00{}:{}{}", m[0], m[1], m[2], m[3], m[4], m[5])
    );
    assert_eq!(read(&a, "net/bond0/bonding/mode"), "802.3ad 4");
    assert_eq!(read(&a, "net/bond0/bonding/xmit_hash_policy"), "layer3+4 1");
    assert_eq!(read(&a, "net/bond0/bonding/slaves"), "eth0 eth1");
    assert_eq!(read(&a, "net/bond0/speed"), "200000");
    assert_eq!(read(&a, "net/eth0/speed"), "100000");
    assert_eq!(read(&a, "net/eth0/mtu"), "9000");
    assert_eq!(read(&a, "net/eth0/operstate"), "up");
    assert_eq!(read(&a, "net/eth0/carrier"), "1");
    assert_eq!(read(&a, "net/eth0/flags"), "0x1803");
    assert_eq!(read(&a, "net/bond0/flags"), "0x1403");
    let stat = |dev: &str, n: &str| read_u64(&a, &format!("net/{dev}/statistics/{n}"));
    for n in ["tx_bytes", "tx_packets", "rx_bytes", "rx_packets"] {
        let e0 = port(&s, "hostA.eth0")[n].as_u64().unwrap();
        let e1 = port(&s, "hostA.eth1")[n].as_u64().unwrap();
        assert_eq!(stat("eth0", n), e0, "{n}");
        assert_eq!(stat("bond0", n), e0 + e1, "bond0 {n}: the slaves' sum");
    }

    // Two NICs, the QP on the second: mlx5_0 has no counters, mlx5_1 the
    // QP's, which received nothing: eth0 got (and refused) the frames for
    // eth1's GID, and the client's ACK timer expired.
    let (out, s) = run_scenario("retry_exceeded", "sysfs_retry", &[]);
    sysfs_matches_summary("retry_exceeded", &out, &s);
    let b = out.join("sysfs/hostB/class");
    assert_eq!(
        read(&b, "infiniband/mlx5_0/ports/1/rate"),
        "25 Gb/sec (1X EDR)"
    );
    assert_eq!(
        std::fs::read_dir(b.join("infiniband/mlx5_0/ports/1/counters"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(
        read_u64(&b, "infiniband/mlx5_1/ports/1/counters/port_rcv_packets"),
        0
    );
    let a = out.join("sysfs/hostA/class/infiniband/mlx5_0/ports/1");
    assert!(read_u64(&a, "hw_counters/local_ack_timeout_err") > 0);
    let refused = port(&s, "hostB.eth0")["drops_not_ours"].as_u64().unwrap();
    assert!(refused > 0);
    assert_eq!(read_u64(&b, "net/eth0/statistics/rx_dropped"), refused);
    assert_eq!(read(&b, "net/eth1/speed"), "25000");

    // A link down at the end: no carrier, speed unknown, port DOWN.
    let t = host(
        "a",
        "",
        &[("eth0", "10.0.0.1/24"), ("eth1", "10.0.1.1/24")],
        0,
    ) + &host(
        "b",
        "",
        &[("eth0", "10.0.0.2/24"), ("eth1", "10.0.1.2/24")],
        0,
    ) + &write_bw("a.eth0", "b.eth0", "size = \"64KiB\"\niters = 4\n")
        + &link("a.eth0", "b.eth0", "100Gbps")
        + &link("a.eth1", "b.eth1", "100Gbps")
        + "  [[link.event]]\n  at = \"1us\"\n  state = \"down\"\n";
    let (dir, s) = run_text("sysfs_down", &t, &[]);
    assert!(took_part(&s, "b"));
    let out = dir.join("run");
    sysfs_matches_summary("sysfs_down", &out, &s);
    let a = out.join("sysfs/a/class");
    assert_eq!(read(&a, "net/eth1/carrier"), "0");
    assert_eq!(read(&a, "net/eth1/operstate"), "down");
    assert_eq!(read(&a, "net/eth1/speed"), "-1");
    assert_eq!(read(&a, "net/eth1/duplex"), "unknown");
    assert_eq!(read(&a, "infiniband/mlx5_1/ports/1/state"), "1: DOWN");
    assert_eq!(
        read(&a, "infiniband/mlx5_1/ports/1/phys_state"),
        "3: Disabled"
    );
    assert_eq!(read(&a, "infiniband/mlx5_0/ports/1/state"), "4: ACTIVE");
    assert_eq!(read(&a, "net/eth0/mtu"), "1500");
}

/// node_exporter's infiniband, netclass and textfile collectors on one
/// simulated host: every collector succeeds and the series are the
/// summary's counters (PMA data in bytes: words x 4).
fn node_exporter_reads(out: &Path, host: &str, s: &Value) -> Option<Vec<Sample>> {
    let args = [
        "--collector.disable-defaults".to_string(),
        "--collector.infiniband".to_string(),
        "--collector.netclass".to_string(),
        "--collector.textfile".to_string(),
        "--web.disable-exporter-metrics".to_string(),
        format!("--path.sysfs={}", out.join("sysfs").join(host).display()),
        format!("--collector.textfile.directory={}", out.display()),
    ];
    let ne = NodeExporter::start(&args)?;
    let m = prometheus::parse(&ne.scrape());
    for c in ["infiniband", "netclass", "textfile"] {
        let ok = prometheus::value(&m, "node_scrape_collector_success", &[("collector", c)]);
        assert_eq!(ok, 1.0, "collector {c} failed");
    }
    assert_eq!(
        prometheus::value(&m, "node_textfile_scrape_error", &[]),
        0.0
    );
    for (key, set) in counters(s)
        .iter()
        .filter(|(k, _)| k.starts_with(&format!("{host}.")))
    {
        let iface = key.split_once('.').unwrap().1;
        let dev = mlx5_name(iface);
        let set = set.as_object().unwrap();
        let Some(xmit) = set.get("port_xmit_data") else {
            continue;
        };
        let l = [("device", dev.as_str()), ("port", "1")];
        let get = |n: &str| prometheus::value(&m, n, &l);
        let c = |n: &str| set[n].as_u64().unwrap() as f64;
        assert_eq!(
            get("node_infiniband_port_data_transmitted_bytes_total"),
            xmit.as_u64().unwrap() as f64 * 4.0
        );
        assert_eq!(
            get("node_infiniband_port_data_received_bytes_total"),
            c("port_rcv_data") * 4.0
        );
        assert_eq!(
            get("node_infiniband_port_packets_transmitted_total"),
            c("port_xmit_packets")
        );
        assert_eq!(
            get("node_infiniband_port_packets_received_total"),
            c("port_rcv_packets")
        );
        assert_eq!(get("node_infiniband_state_id"), 4.0);
        assert_eq!(get("node_infiniband_physical_state_id"), 5.0);
        // The textfile collector hands counters.prom through, words as words.
        let t = [("host", host), ("device", dev.as_str()), ("port", "1")];
        assert_eq!(
            prometheus::value(&m, "rocesim_rdma_port_xmit_data_total", &t),
            c("port_xmit_data")
        );
    }
    Some(m)
}

#[test]
fn node_exporter_reads_a_simulated_host_unchanged() {
    let (out, s) = run_scenario("lag_hash", "node_exporter_lag", &LAG_SMALL);
    let Some(m) = node_exporter_reads(&out, "hostA", &s) else {
        return;
    };
    let v = |n: &str, l: &[(&str, &str)]| prometheus::value(&m, n, l);
    let dev = [("device", "mlx5_bond_0"), ("port", "1")];
    // 100 Gb/s is 12.5 GB/s.
    assert_eq!(v("node_infiniband_rate_bytes_per_second", &dev), 12.5e9);
    let info = m
        .iter()
        .find(|p| p.0 == "node_infiniband_info")
        .expect("node_infiniband_info");
    assert_eq!(info.1["device"], "mlx5_bond_0");
    assert_eq!(info.1["hca_type"], "MT4119");
    assert_eq!(info.1["firmware_version"], "0.0.0000");
    assert_eq!(v("node_network_speed_bytes", &[("device", "bond0")]), 25e9);
    assert_eq!(v("node_network_mtu_bytes", &[("device", "eth1")]), 9000.0);
    assert_eq!(v("node_network_up", &[("device", "bond0")]), 1.0);
    assert_eq!(v("node_network_carrier", &[("device", "eth0")]), 1.0);
    let tx = counters(&s)["hostA.eth0"]["tx_bytes_phy"].as_u64().unwrap() as f64;
    let l = [("host", "hostA"), ("device", "eth0")];
    assert_eq!(v("rocesim_ethtool_tx_bytes_phy_total", &l), tx);

    // Two RDMA devices on one host, each with its own series.
    let (out, s) = run_scenario("retry_exceeded", "node_exporter_retry", &[]);
    let Some(m) = node_exporter_reads(&out, "hostB", &s) else {
        return;
    };
    for dev in ["mlx5_0", "mlx5_1"] {
        let l = [("device", dev), ("port", "1")];
        assert_eq!(
            prometheus::value(&m, "node_infiniband_rate_bytes_per_second", &l),
            25e9 / 8.0
        );
    }
}

/// Counters the model does not produce yet (the lossless-fabric and DCQCN
/// work adds them to `run/counters.rs`) come out with no change to the
/// exporters: per-priority pauses as one metric with a `priority` label,
/// an mlx5 congestion counter under `hw_counters/`, a name neither list
/// knows as an ethtool counter; promtool accepts the result.
#[test]
fn counters_added_later_need_no_exporter_change() {
    let (_, sim) = rocesim::run::check(&scenario("lag_hash"), &[]).unwrap();
    let w = sim.world();
    let mut c = rocesim::run::counters::of(w);
    for (key, name, v) in [
        ("sw1.p3", "rx_prio3_pause", 12),
        ("sw1.p3", "tx_prio3_pause_duration", 340),
        ("hostB.eth0", "rx_prio3_pause", 7),
        ("hostB.eth0", "tx_prio7_ecn_marked", 5),
        ("hostB.eth0", "rx_discards_phy", 2),
        ("hostA.bond0", "np_cnp_sent", 9),
        ("hostA.bond0", "rp_cnp_handled", 8),
    ] {
        c.get_mut(key).unwrap().insert(name.to_string(), v);
    }
    let text = rocesim::run::prom::counters_prom(w, &c);
    let m = prometheus::parse(&text);
    let v = |n: &str, l: &[(&str, &str)]| prometheus::value(&m, n, l);
    let sw = [("host", "sw1"), ("device", "p3"), ("priority", "3")];
    assert_eq!(v("rocesim_ethtool_rx_prio_pause_total", &sw), 12.0);
    assert_eq!(
        v("rocesim_ethtool_tx_prio_pause_duration_total", &sw),
        340.0
    );
    let b = [("host", "hostB"), ("device", "eth0"), ("priority", "3")];
    assert_eq!(v("rocesim_ethtool_rx_prio_pause_total", &b), 7.0);
    let b7 = [("host", "hostB"), ("device", "eth0"), ("priority", "7")];
    assert_eq!(v("rocesim_ethtool_tx_prio_ecn_marked_total", &b7), 5.0);
    let b = [("host", "hostB"), ("device", "eth0")];
    assert_eq!(v("rocesim_ethtool_rx_discards_phy_total", &b), 2.0);
    let a = [("host", "hostA"), ("device", "mlx5_bond_0"), ("port", "1")];
    assert_eq!(v("rocesim_rdma_np_cnp_sent_total", &a), 9.0);
    assert_eq!(v("rocesim_rdma_rp_cnp_handled_total", &a), 8.0);
    // One HELP and TYPE per metric, however many priorities and ports.
    let helps = text
        .lines()
        .filter(|l| l.starts_with("# HELP rocesim_ethtool_rx_prio_pause_total "))
        .count();
    assert_eq!(helps, 1, "{text}");
    assert!(
        text.contains("# HELP rocesim_ethtool_tx_prio_pause_duration_total ethtool -S counter tx_prio{N}_pause_duration"),
        "{text}"
    );
    if let Some(p) = promtool() {
        let dir = tmp("prom_later");
        let file = dir.join("counters.prom");
        std::fs::write(&file, &text).unwrap();
        check_metrics(p, &file);
    }
    // The sysfs tree places the RDMA ones by the kernel's directories and
    // leaves the ethtool ones to counters.prom.
    let t = rocesim::run::sysfs::tree(w, &c, &vec![true; w.hosts().len()]);
    let file = |rel: &str| {
        t.files
            .iter()
            .find(|(p, _)| p == Path::new(rel))
            .map(|(_, v)| v.as_str())
    };
    let hw = "sysfs/hostA/class/infiniband/mlx5_bond_0/ports/1/hw_counters";
    assert_eq!(file(&format!("{hw}/np_cnp_sent")), Some("9\n"));
    assert_eq!(file(&format!("{hw}/rp_cnp_handled")), Some("8\n"));
    assert!(t.files.iter().all(|(p, _)| !p.ends_with("rx_prio3_pause")));
}

/// A host that takes no part (no QP, no frame on its ports, as the idle
/// hosts of the reference's topologies) has no sysfs tree, but its
/// counters are in `counters.prom` and `summary.json` as before.
#[test]
fn a_host_that_takes_no_part_has_no_sysfs_tree() {
    let t = host("a", "", &[("eth0", "10.0.0.1/24")], 0)
        + &host(
            "b",
            "",
            &[("eth0", "10.0.0.2/24"), ("eth1", "10.0.1.2/24")],
            0,
        )
        + &host("idle", "", &[("eth0", "10.0.1.3/24")], 0)
        + &write_bw("a.eth0", "b.eth0", "size = \"64KiB\"\niters = 4\n")
        + &link("a.eth0", "b.eth0", "100Gbps")
        + &link("b.eth1", "idle.eth0", "100Gbps");
    let (dir, s) = run_text("sysfs_idle", &t, &[]);
    let out = dir.join("run");
    sysfs_matches_summary("sysfs_idle", &out, &s);
    assert!(out.join("sysfs/a").is_dir() && out.join("sysfs/b").is_dir());
    assert!(!took_part(&s, "idle"));
    assert!(!out.join("sysfs/idle").exists());
    let prom = std::fs::read_to_string(out.join("counters.prom")).unwrap();
    assert!(prom.contains("host=\"idle\""));
}

/// `[output] sysfs = false` leaves the tree out and nothing else: the
/// counters are still in summary.json and counters.prom.
#[test]
fn the_sysfs_tree_can_be_left_out() {
    let mut sets = LAG_SMALL.to_vec();
    sets.push("output.sysfs=false");
    let (out, s) = run_scenario("lag_hash", "sysfs_off", &sets);
    assert!(!out.join("sysfs").exists());
    for f in [
        "summary.json",
        "counters.prom",
        "ports.csv",
        "qps.csv",
        "ports.png",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    assert!(took_part(&s, "hostA"));
    let prom = std::fs::read_to_string(out.join("counters.prom")).unwrap();
    assert!(prom.contains("rocesim_rdma_port_xmit_data_total{host=\"hostA\""));
}
