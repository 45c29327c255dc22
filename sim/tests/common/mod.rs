//! What the simulator's tests share: running `rocesim` on a scenario,
//! reading its summary, and writing small scenarios. What the analyzer's
//! tests share too (tshark, `../shared`, the book) is in `roce-testkit`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// Not every test binary lists a run directory (see dead_code above).
#[allow(unused_imports)]
pub use roce_testkit::repo::files_below;
pub use roce_testkit::repo::root as repo;
use serde_json::Value;

pub fn scenario(name: &str) -> PathBuf {
    repo().join("scenarios").join(format!("{name}.toml"))
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rocesim"))
}

/// A fresh directory under the target dir, removed first if present.
pub fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn run(scenario: &Path, out: &Path, sets: &[&str]) -> Output {
    let mut c = bin();
    c.arg("run").arg(scenario).arg("--out").arg(out);
    for s in sets {
        c.arg("--set").arg(s);
    }
    c.output().unwrap()
}

/// Runs and returns summary.json, failing the test on a non-zero exit.
pub fn run_ok(scenario: &Path, out: &Path, sets: &[&str]) -> Value {
    let o = run(scenario, out, sets);
    assert!(
        o.status.success(),
        "rocesim run failed: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    // stderr is a pipe here: no progress bar, just the closing line.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains('\r') && !err.contains('\x1b'),
        "progress bar drawn into a pipe: {err:?}"
    );
    assert!(err.starts_with("rocesim: wrote "), "{err:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("aggregate goodput:"));
    summary_at(out)
}

/// `rocesim check` of `scenario` with `sets`.
pub fn check_with(scenario: &Path, sets: &[&str]) -> Output {
    let mut c = bin();
    c.arg("check").arg(scenario);
    for s in sets {
        c.arg("--set").arg(s);
    }
    c.output().unwrap()
}

/// `rocesim check` of `scenario` with `sets`, which must refuse it: its
/// stderr.
pub fn refused(scenario: &Path, sets: &[&str]) -> String {
    let o = check_with(scenario, sets);
    assert!(!o.status.success(), "{sets:?} was accepted");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The summary.json of run directory `dir`.
pub fn summary_at(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("summary.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("summary.json").display()));
    serde_json::from_str(&text).unwrap()
}

/// Counter `name` of port or RDMA device `port` in a summary's `counters`.
pub fn counter(s: &Value, port: &str, name: &str) -> u64 {
    s["counters"][port][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no counter {name} at {port}: {}", s["counters"][port]))
}

/// The sum of counter `name` over the ports whose name satisfies `keep`
/// (0 where a port does not count it).
pub fn counter_sum(s: &Value, name: &str, keep: impl Fn(&str) -> bool) -> u64 {
    s["counters"]
        .as_object()
        .expect("summary.json has counters")
        .iter()
        .filter(|(p, _)| keep(p))
        .map(|(_, c)| c[name].as_u64().unwrap_or(0))
        .sum()
}

/// Runs the shipped scenario `name` with `sets` into a fresh directory
/// `tag` (which must succeed): the directory and summary.json.
pub fn run_scenario(name: &str, tag: &str, sets: &[&str]) -> (PathBuf, Value) {
    let out = tmp(tag);
    let s = run_ok(&scenario(name), &out, sets);
    (out, s)
}

pub fn port<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no port {name}"))
}

pub fn clients(s: &Value) -> Vec<&Value> {
    s["qps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["role"] == "client")
        .collect()
}

/// The files the scenario's taps wrote, in tap order.
pub fn tap_files(s: &Value, out: &Path) -> Vec<PathBuf> {
    s["taps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| out.join(t["file"].as_str().unwrap()))
        .collect()
}

/// The file of the tap at `port`.
pub fn tap_file(s: &Value, out: &Path, port: &str) -> PathBuf {
    let t = s["taps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["port"] == port)
        .unwrap_or_else(|| panic!("no tap at {port}"));
    out.join(t["file"].as_str().unwrap())
}

/// Writes `toml` as `<name>.toml` into a fresh directory `name`, runs it
/// into `run/` there (which must succeed) and returns the directory and
/// summary.json.
pub fn run_text(name: &str, toml: &str, sets: &[&str]) -> (PathBuf, Value) {
    let dir = tmp(name);
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, toml).unwrap();
    let s = run_ok(&file, &dir.join("run"), sets);
    (dir, s)
}

/// A `[[host]]`: `keys` (lines such as `gateway = "..."`, or ""), then its
/// NICs `(name, address/prefix)`, all at Ethernet MTU `mtu` (0: the
/// default).
pub fn host(name: &str, keys: &str, nics: &[(&str, &str)], mtu: u32) -> String {
    let mut t = format!("[[host]]\nname = \"{name}\"\n{keys}");
    for (nic, ip) in nics {
        t.push_str(&format!(
            "  [[host.nic]]\n  name = \"{nic}\"\n  ip = \"{ip}\"\n"
        ));
        if mtu != 0 {
            t.push_str(&format!("  mtu = {mtu}\n"));
        }
    }
    t
}

/// A `[[switch]]`: `keys` (or ""), then its routes `(prefix, via ports)`.
pub fn switch(name: &str, keys: &str, routes: &[(&str, &[&str])]) -> String {
    let mut t = format!("[[switch]]\nname = \"{name}\"\n{keys}");
    for (prefix, via) in routes {
        let via: Vec<String> = via.iter().map(|p| format!("\"{p}\"")).collect();
        t.push_str(&format!(
            "  [[switch.route]]\n  prefix = \"{prefix}\"\n  via = [{}]\n",
            via.join(", ")
        ));
    }
    t
}

/// An `ib_write_bw` from `client` to `server`, with more `keys` (or "").
pub fn write_bw(client: &str, server: &str, keys: &str) -> String {
    format!(
        "[[workload]]\ntool = \"ib_write_bw\"\nclient = \"{client}\"\nserver = \"{server}\"\n{keys}"
    )
}

/// An incast's senders: hosts `h1`..`h{n}` (10.0.0.i/24, NIC keys
/// `nic`, Ethernet MTU 1500), each on port `sw1.p{i}` of a switch `sw1`
/// over a 100G link, each running an `ib_write_bw` to host `r` with
/// `keys`. The test adds `r`, `sw1` and their link.
pub fn senders_to_r(n: u32, nic: &str, keys: &str) -> String {
    let mut t = String::new();
    for i in 1..=n {
        t += &host(
            &format!("h{i}"),
            nic,
            &[("eth0", &format!("10.0.0.{i}/24"))],
            1500,
        );
        t += &link(&format!("h{i}.eth0"), &format!("sw1.p{i}"), "100G");
        t += &write_bw(&format!("h{i}"), "r", keys);
    }
    t
}

/// Hosts `a` (10.0.0.1/24) and `b` (10.0.0.2/24), one NIC `eth0` each at
/// Ethernet MTU `mtu`, and an `ib_write_bw` from a to b. Tests append
/// their links and switches and set the rest with --set.
pub fn two_hosts(mtu: u32) -> String {
    host("a", "", &[("eth0", "10.0.0.1/24")], mtu)
        + &host("b", "", &[("eth0", "10.0.0.2/24")], mtu)
        + &write_bw("a", "b", "")
}

/// A `[[link]]` between two endpoints, 1 us long.
pub fn link(a: &str, b: &str, rate: &str) -> String {
    link_with(a, b, rate, "delay = \"1us\"\n")
}

/// A `[[link]]` with more `keys` (or "": no delay).
pub fn link_with(a: &str, b: &str, rate: &str, keys: &str) -> String {
    format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"{rate}\"\n{keys}")
}

/// The ns-3 reference's inputs and results (`../shared/anchors/hpcc-ns3`),
/// when this checkout sits beside them.
pub fn ns3_anchors() -> Option<PathBuf> {
    roce_testkit::ci::shared("anchors/hpcc-ns3")
}

/// An FCT file's rows (`sip dip sport dport size start_ns fct_ns
/// standalone_fct_ns`), in its order (completion order).
pub fn fct_rows(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            l.split_whitespace()
                .enumerate()
                .map(|(i, f)| match i {
                    0 | 1 => u64::from_str_radix(f, 16).unwrap(),
                    _ => f.parse().unwrap(),
                })
                .collect()
        })
        .collect()
}

/// FCT over the ideal, at least 1 (as the reference's scripts clamp it).
pub fn fct_slowdown(r: &[u64]) -> f64 {
    (r[6] as f64 / r[7] as f64).max(1.0)
}

/// Run `name`'s `fct.txt` (`got`) against the reference's (`want`): the
/// same flows (addresses as the reference writes them, sizes, starts),
/// and each flow's slowdown, in completion order, within 10 % of the
/// reference's. Returns the differences, smallest first.
pub fn slowdowns_match(name: &str, got: &Path, want: &Path) -> Vec<f64> {
    let (got, want) = (fct_rows(got), fct_rows(want));
    assert_eq!(got.len(), want.len(), "{name}: every flow finishes");
    let key = |r: &Vec<u64>| (r[0], r[1], r[4], r[5]);
    let mut a: Vec<_> = got.iter().map(key).collect();
    let mut b: Vec<_> = want.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b, "{name}: the reference's flows");
    let mut errs = Vec::new();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let (sg, sw) = (fct_slowdown(g), fct_slowdown(w));
        let d = sg / sw - 1.0;
        errs.push(d.abs());
        assert!(
            d.abs() <= 0.10,
            "{name}: flow {} to finish: slowdown {sg:.3} against the reference's {sw:.3} ({:+.1} %)",
            i + 1,
            d * 100.0
        );
    }
    errs.sort_by(f64::total_cmp);
    errs
}

/// Four servers of one 100G NIC under switch `sw1`, s3's link going down
/// at 300 µs, and a 64 MiB all_reduce over them (`ar`, `-n 2 -w 0`) whose
/// QPs give up fast (`NCCL_IB_TIMEOUT` 8, `NCCL_IB_RETRY_CNT` 1): a
/// collective that fails with error 12. `collective_keys` go into its
/// `[[collective]]` table.
pub fn failing_allreduce(collective_keys: &str) -> String {
    let mut t = String::new();
    for i in 0..4 {
        let ip = format!("10.0.0.{}/24", i + 1);
        t += &host(&format!("s{i}"), "", &[("mlx5_0", &ip)], 4200);
        let keys = if i == 3 {
            "delay = \"1us\"\n  [[link.event]]\n  at = \"300us\"\n  state = \"down\"\n"
        } else {
            "delay = \"1us\"\n"
        };
        t += &link_with(
            &format!("s{i}.mlx5_0"),
            &format!("sw1.p{}", i + 1),
            "100G",
            keys,
        );
    }
    t += &switch("sw1", "", &[]);
    t += &format!(
        r#"
[[collective]]
name = "ar"
op = "all_reduce"
servers = ["s0", "s1", "s2", "s3"]
minbytes = "64MiB"
maxbytes = "64MiB"
iters = 2
warmup_iters = 0
{collective_keys}  [collective.env]
  NCCL_IB_HCA = "mlx5"
  NCCL_IB_TIMEOUT = 8
  NCCL_IB_RETRY_CNT = 1
"#
    );
    t
}
