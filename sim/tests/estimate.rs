//! `rocesim check`'s estimate of a run's peak memory and events
//! (`rocesim::run::estimate`) against a real run, and `rocesim run`'s
//! refusal of a run that would not fit (`ROCESIM_MEM_AVAILABLE`).

use std::path::Path;
use std::process::Command;

use rocesim::run::Estimate;
use rocesim::scenario::{load, load_str};

const BIN: &str = env!("CARGO_BIN_EXE_rocesim");

fn bench() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fat_tree_scale.toml")
}

/// A k = 4 fat-tree (16 hosts, 20 switches of 4 ports) and one
/// ib_write_bw of 10 × 4 KiB from host0 (pod 0) to host15 (pod 3).
const ONE_WORKLOAD: &str = r#"
name = "estimate"
[topology]
kind = "fat-tree"
k = 4
host_link = { rate = "100Gbps", delay = "1us" }
edge_agg = { rate = "100Gbps", delay = "1us" }
agg_core = { rate = "100Gbps", delay = "1us" }
[topology.nic]
mtu = 1500

[[workload]]
tool = "ib_write_bw"
client = "host0"
server = "host15"
size = "4KiB"
iters = 10
"#;

/// The count of the estimate's term whose name starts with `what`.
fn term_count(e: &Estimate, what: &str) -> Option<u64> {
    e.terms
        .iter()
        .find(|t| t.what.starts_with(what))
        .map(|t| t.count)
}

/// Counted by hand: 40 packets of 1024 bytes (the path MTU of a 1500-byte
/// link), each with 1/256 of an ACK (the ConnectX profile's AckReq
/// frequency), over the 6 links between two pods.
#[test]
fn packet_hops_and_terms_by_hand() {
    let loaded = load_str(Path::new("e.toml"), ONE_WORKLOAD.into(), &[]).unwrap();
    let e = Estimate::of(&loaded.scenario);
    assert_eq!(e.packet_hops, (40.0 * 6.0 * (1.0 + 1.0 / 256.0)) as u64);
    assert_eq!(e.flows, 0);
    let count = |what: &str| term_count(&e, what);
    // 16 hosts; 20 switches × 16 hosts; 48 links, two ports each.
    assert_eq!(count("hosts"), Some(16));
    assert_eq!(count("queued frames"), Some(320));
    assert_eq!(count("ports"), Some(96));
    assert_eq!(e.peak_bytes(), e.terms.iter().map(|t| t.bytes).sum::<u64>());
    assert!(e.largest().bytes >= e.terms.last().unwrap().bytes);
}

/// Peak RSS (kB) and summary.json's events of a real run of `args`.
#[cfg(target_os = "linux")]
// The child is reaped by wait4, which also gives its peak RSS.
#[allow(clippy::zombie_processes)]
fn measured_run(args: &[&str], out: &Path) -> (u64, u64) {
    let child = Command::new(BIN)
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(out)
        .args(["-q", "--format", "json"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value to be written over.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing into the two locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    (usage.ru_maxrss as u64, summary["events"].as_u64().unwrap())
}

/// The benchmark fabric at k = 8 (128 hosts, 80 switches, 297 flows): the
/// estimate is within 1.5x of the peak RSS and the events the run reports.
#[cfg(target_os = "linux")]
#[test]
fn estimate_within_1_5x_of_a_real_run() {
    let loaded = load(&bench(), &[]).unwrap();
    let e = Estimate::of(&loaded.scenario);
    let out = std::env::temp_dir().join(format!("rocesim-estimate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let (rss_kb, events) = measured_run(&[bench().to_str().unwrap()], &out);
    std::fs::remove_dir_all(&out).unwrap();
    let rss = rss_kb * 1024;
    let within = |est: u64, real: u64| {
        let r = est as f64 / real as f64;
        (1.0 / 1.5..=1.5).contains(&r)
    };
    assert!(
        within(e.peak_bytes(), rss),
        "estimate {} B, measured peak RSS {rss} B",
        e.peak_bytes()
    );
    assert!(
        within(e.events, events),
        "estimate {} events, run {events}",
        e.events
    );
}

/// A run whose estimate exceeds the memory available is refused before
/// it starts: exit status 2, a message naming the estimate, its largest
/// term and `--force`, and no run directory; `--force` runs it.
#[test]
fn run_refused_when_estimate_exceeds_available_memory() {
    let dir = std::env::temp_dir().join(format!("rocesim-refuse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, ONE_WORKLOAD).unwrap();
    let loaded = load(&file, &[]).unwrap();
    let peak = Estimate::of(&loaded.scenario).peak_bytes();
    let out = dir.join("run");
    let run = |available: u64, force: bool| {
        let mut c = Command::new(BIN);
        c.arg("run").arg(&file).arg("--out").arg(&out).arg("-q");
        if force {
            c.arg("--force");
        }
        c.env("ROCESIM_MEM_AVAILABLE", available.to_string())
            .output()
            .unwrap()
    };
    let refused = run(peak - 1, false);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("would need about"), "{err}");
    assert!(err.contains("the largest part: "), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert!(!out.exists());
    assert!(
        std::fs::read_dir(&dir).unwrap().count() == 1,
        "nothing but s.toml"
    );
    // Just enough: it runs.
    let ran = run(peak, false);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(out.join("summary.json").exists());
    std::fs::remove_dir_all(&out).unwrap();
    let forced = run(1, true);
    assert!(forced.status.success());
    assert!(out.join("summary.json").exists());
    // A value that is no number of bytes names the variable.
    let bad = Command::new(BIN)
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .env("ROCESIM_MEM_AVAILABLE", "lots")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("ROCESIM_MEM_AVAILABLE=lots"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two servers of one GPU and one NIC under one leaf, one 1 MiB
/// all_reduce: what the estimate counts for a `[[collective]]`.
const ONE_ALLREDUCE: &str = r#"
name = "estimate_collective"
[topology]
kind = "leaf-spine"
leaves = 1
spines = 1
hosts_per_leaf = 2
uplinks = 1
host_link = { rate = "100Gbps", delay = "1us" }
fabric_link = { rate = "100Gbps", delay = "1us" }
[topology.nic]
mtu = 4200

[[collective]]
op = "all_reduce"
servers = ["host0", "host1"]
minbytes = "1MiB"
maxbytes = "1MiB"
iters = 1
warmup_iters = 0
"#;

/// Counted by hand from the module's model: 2 ranks on 2 servers, so every
/// ring hop leaves a server; nccl-tests' bus bytes 1 MiB x 2(n-1)/n = 1 MiB
/// per rank, 2 MiB on the wire, 512 packets of 4096 bytes. Two channels per
/// NIC, each crossing both server boundaries: 4 connections of 2 ring
/// steps (one message each) = 8 messages, each with a CTS and two ACKs
/// (24 packets). 536 packets over the 2 links through the switch; 4
/// connections of a QP at each end.
#[test]
fn a_collective_counted_by_hand() {
    let loaded = load_str(Path::new("c.toml"), ONE_ALLREDUCE.into(), &[]).unwrap();
    let e = Estimate::of(&loaded.scenario);
    assert_eq!(e.packet_hops, 2 * (512 + 24));
    assert_eq!(term_count(&e, "collective QPs"), Some(8));
}

/// The shipped two-server collective: the estimate within 1.5x of the run.
#[cfg(target_os = "linux")]
#[test]
fn collective_estimate_within_1_5x_of_a_real_run() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/nccl_allreduce_small.toml");
    let loaded = load(&file, &[]).unwrap();
    let e = Estimate::of(&loaded.scenario);
    let out = std::env::temp_dir().join(format!("rocesim-estimate-coll-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let (rss_kb, events) = measured_run(&[file.to_str().unwrap()], &out);
    std::fs::remove_dir_all(&out).unwrap();
    let ratio = |est: u64, real: u64| est as f64 / real as f64;
    let (m, v) = (
        ratio(e.peak_bytes(), rss_kb * 1024),
        ratio(e.events, events),
    );
    assert!((1.0 / 1.5..=1.5).contains(&m), "memory {m}");
    assert!(
        (1.0 / 1.5..=1.5).contains(&v),
        "events {} against {events}",
        e.events
    );
}
