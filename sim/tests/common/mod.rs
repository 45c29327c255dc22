#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

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
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
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

pub fn ci() -> bool {
    std::env::var("ROCESIM_CI").is_ok_and(|v| v == "1")
}

/// tshark's path, or None (skip) outside CI; in CI a missing tshark fails.
pub fn tshark() -> Option<&'static str> {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        Some("tshark")
    } else if ci() {
        panic!("ROCESIM_CI=1 but tshark is not installed");
    } else {
        eprintln!("skipping: tshark not installed");
        None
    }
}

/// Hosts `a` (10.0.0.1/24) and `b` (10.0.0.2/24), one NIC `eth0` each at
/// Ethernet MTU `mtu`, and an `ib_write_bw` from a to b. Tests append
/// their links and switches and set the rest with --set.
pub fn two_hosts(mtu: u32) -> String {
    let mut t = String::new();
    for (h, ip) in [("a", "10.0.0.1/24"), ("b", "10.0.0.2/24")] {
        t.push_str(&format!(
            "[[host]]\nname = \"{h}\"\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"{ip}\"\n  mtu = {mtu}\n"
        ));
    }
    t.push_str("[[workload]]\ntool = \"ib_write_bw\"\nclient = \"a\"\nserver = \"b\"\n");
    t
}

/// A `[[link]]` between two endpoints.
pub fn link(a: &str, b: &str, rate: &str) -> String {
    format!("[[link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"{rate}\"\ndelay = \"1us\"\n")
}
