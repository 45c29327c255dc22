//! The AI-fabric scenarios end to end: the rail-optimized all_reduce at
//! its bound and on its latency floor, alltoall where PFC and DCQCN meet
//! an oversubscribed leaf, and NCCL's error 12 on servers whose NICs share
//! one subnet, with every fix the scenario's header lists.

mod common;

use common::*;
use serde_json::Value;

fn rows(s: &Value) -> &Vec<Value> {
    s["collectives"]
        .as_array()
        .expect("summary.json has collectives")
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// A full 4096-byte RoCE packet's payload share: 4096 of 4096 + 82 bytes
/// on the wire (Ethernet 14 + FCS 4 + preamble and gap 20, IPv4 20, UDP
/// 8, BTH 12, ICRC 4), as bound_GBps counts it.
const EFF: f64 = 4096.0 / 4178.0;

/// 64 ranks on 8 servers x 8 NICs of a non-blocking 100G rail fabric: the
/// largest size reaches >= 90 % of eight NICs' payload rate, and no byte
/// crosses a spine (rings stay on their rail).
#[test]
fn rail_all_reduce_reaches_the_bound_without_the_spines() {
    let (_, s) = run_scenario(
        "nccl_allreduce",
        "fab_ar_big",
        &["collective.allreduce.minbytes=128MiB"],
    );
    let r = rows(&s);
    assert_eq!(r.len(), 1);
    let x = &r[0];
    assert_eq!(x["status"], "success", "{x}");
    assert_eq!(x["ranks"], 64);
    assert_eq!(x["size_bytes"], 128u64 << 20);
    let bound = f(x, "bound_GBps");
    assert!((bound - 8.0 * 12.5 * EFF).abs() < 1e-3, "{bound}");
    assert!(f(x, "busbw_GBps") >= 0.9 * bound, "{x}");
    assert!(f(x, "busbw_GBps") <= bound * 1.001, "{x}");
    assert_eq!(counter_sum(&s, "tx_bytes_phy", |p| p.contains("spine")), 0);
    assert!(counter_sum(&s, "tx_bytes_phy", |p| p.contains("leaf")) > 0);
    // Nothing congests a rail: no pause, no mark.
    assert_eq!(counter_sum(&s, "tx_prio4_pause", |_| true), 0);
    assert_eq!(counter_sum(&s, "tx_prio4_ecn_marked", |_| true), 0);
}

/// Small sizes sit on the ring's latency: 8 B and 512 B take the same
/// time, and one more microsecond per NVLink transfer adds at most the
/// 112 NVLink transfers of a loop (2(n-1) = 126 transfers, 14 of them
/// between servers), at least 90 % of it (nccl-tests averages the ranks'
/// ends, and the ranks finish in turn round the ring).
#[test]
fn rail_all_reduce_small_sizes_sit_on_the_ring_latency() {
    let time = |lat: &str| -> (f64, f64) {
        let (_, s) = run_scenario(
            "nccl_allreduce",
            &format!("fab_ar_floor_{lat}"),
            &[
                "collective.allreduce.maxbytes=512",
                &format!("collective.allreduce.nvlink_latency={lat}"),
            ],
        );
        let r = rows(&s);
        assert_eq!(r.len(), 3);
        (f(&r[0], "time_us"), f(&r[2], "time_us"))
    };
    let (t8, t512) = time("1us");
    assert!((t512 - t8).abs() / t8 < 0.01, "{t8} {t512}");
    assert!((100.0..130.0).contains(&t8), "{t8}");
    let (u8, _) = time("2us");
    let added = u8 - t8;
    assert!((0.9 * 112.0..=112.0).contains(&added), "{t8} -> {u8}");
}

/// alltoall on the 2:1 rail fabric: the leaves' uplinks are marked, the
/// receivers send CNPs, the leaves pause their servers; nothing is lost,
/// and busbw stays under what the uplinks allow (7/8 of the NICs' bound:
/// 4/7 of a leaf's traffic needs the other group, 200 of 400 Gb/s up).
/// Non-blocking, none of it happens.
#[test]
fn alltoall_on_an_oversubscribed_rail_fabric_meets_pfc_and_dcqcn() {
    let (_, s) = run_scenario("nccl_alltoall", "fab_a2a", &[]);
    let r = rows(&s);
    assert_eq!(r.len(), 3);
    let big = r.last().unwrap();
    assert_eq!(big["status"], "success");
    let bound = f(big, "bound_GBps");
    // 8 NICs x payload rate x (n-1) / (g (n-g)), n = 64, g = 8.
    assert!(
        (bound - 8.0 * 12.5 * EFF * 63.0 / (8.0 * 56.0)).abs() < 1e-3,
        "{bound}"
    );
    assert!(f(big, "busbw_GBps") < 7.0 / 8.0 * bound, "{big}");
    assert!(f(big, "busbw_GBps") > 0.6 * bound, "{big}");
    let uplink = |p: &str| p.contains("_leaf") && p.contains(".u");
    let downlink = |p: &str| p.contains("_leaf") && p.contains(".p");
    let marks = counter_sum(&s, "tx_prio4_ecn_marked", |_| true);
    assert!(marks > 0);
    assert_eq!(counter_sum(&s, "tx_prio4_ecn_marked", uplink), marks);
    let cnps = counter_sum(&s, "np_cnp_sent", |_| true);
    assert!(cnps > 0);
    assert_eq!(counter_sum(&s, "rp_cnp_handled", |_| true), cnps);
    let pauses = counter_sum(&s, "tx_prio4_pause", |_| true);
    assert!(pauses > 0);
    assert_eq!(counter_sum(&s, "tx_prio4_pause", downlink), pauses);
    assert_eq!(
        counter_sum(&s, "rx_prio4_pause", |p| p.starts_with("server")),
        pauses
    );
    assert_eq!(counter_sum(&s, "tx_prio4_discards", |_| true), 0);
    assert_eq!(counter_sum(&s, "tx_prio4_lossless_discards", |_| true), 0);

    let (_, s) = run_scenario(
        "nccl_alltoall",
        "fab_a2a_nb",
        &["topology.oversubscription=1"],
    );
    let big = rows(&s).last().unwrap().clone();
    assert!(f(&big, "busbw_GBps") >= 0.95 * bound, "{big}");
    assert_eq!(counter_sum(&s, "tx_prio4_ecn_marked", |_| true), 0);
    assert_eq!(counter_sum(&s, "tx_prio4_pause", |_| true), 0);
}

/// Without PFC on priority 4 the uplinks drop, and a lost tail waits for
/// NCCL's ACK timeout, 4.096 us x 2^20 = 4.295 s: the 4 MiB row's time per
/// operation (5 iterations) is at least a fifth of that.
#[test]
fn lossy_alltoall_waits_for_the_ack_timeout() {
    let (_, s) = run_scenario(
        "nccl_alltoall",
        "fab_a2a_lossy",
        &["topology.switch.mmu.lossless=[0]"],
    );
    assert!(counter_sum(&s, "tx_prio4_discards", |_| true) > 0);
    assert!(counter_sum(&s, "local_ack_timeout_err", |_| true) > 0);
    let big = rows(&s).last().unwrap();
    assert_eq!(big["status"], "success");
    let timeout_us = 4.096 * f64::from(1u32 << 20);
    assert!(f(big, "time_us") >= timeout_us / 5.0, "{big}");
}

/// `--set host.server0.K --set host.server1.K` for each K.
fn both(keys: &[&str]) -> Vec<String> {
    ["server0", "server1"]
        .iter()
        .flat_map(|h| keys.iter().map(move |k| format!("host.{h}.{k}")))
        .collect()
}

/// Per-rail /24s: eth<r> of server s is 10.r.0.(s+1)/24.
fn rail_subnets() -> Vec<String> {
    (0..2)
        .flat_map(|s| {
            (0..4).map(move |r| format!("host.server{s}.nic.eth{r}.ip=10.{r}.0.{}/24", s + 1))
        })
        .collect()
}

/// The seed case's row: (status, error text) of its one failing or its
/// largest size.
fn seed_case(tag: &str, sets: &[String]) -> (String, String, f64) {
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let (_, s) = run_scenario("nccl_retry_exceeded", tag, &sets);
    let last = rows(&s).last().unwrap();
    (
        last["status"].as_str().unwrap().to_string(),
        last["error"].as_str().unwrap_or("").to_string(),
        f(last, "busbw_GBps"),
    )
}

/// Under the kernel defaults the all_reduce ends in NCCL's status-12
/// warning, after 8 ACK timeouts of 4.295 s; each fix the header lists
/// succeeds at the NICs' bound, each non-fix still fails.
#[test]
fn shared_subnet_error_12_and_every_listed_fix() {
    let (status, error, _) = seed_case("seed_defaults", &[]);
    assert_eq!(status, "error");
    assert!(
        error.starts_with("NET/IB: Got completion from peer 10."),
        "{error}"
    );
    assert!(error.contains("status=IBV_WC_RETRY_EXC_ERR(12)"), "{error}");
    assert!(error.contains("hca mlx5_"), "{error}");
    let (_, s) = run_scenario("nccl_retry_exceeded", "seed_defaults_qps", &[]);
    // The failed QP's last attempt: 8 x 4.096 us x 2^20 after its start.
    let failed: Vec<&Value> = s["qps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["status_code"] == 12 && q["role"] == "client")
        .collect();
    assert!(!failed.is_empty());
    for q in &failed {
        assert_eq!(q["timeouts"], 8, "{q}");
        let end = q["finished_at_ns"].as_f64().unwrap() - q["first_tx_ns"].as_f64().unwrap();
        assert!((end / 1e9 - 8.0 * 4.294967).abs() < 0.01, "{q}");
    }
    // Two 4-NIC servers at 100G: the bound is 4 NICs' payload rate.
    let bound = 4.0 * 12.5 * EFF;
    let mut rails = rail_subnets();
    rails.extend(both(&["rp_filter=1"]));
    let fixes: Vec<(&str, Vec<String>)> = vec![
        (
            "fix_ignore_announce",
            both(&["arp_ignore=1", "arp_announce=2"]),
        ),
        ("fix_ignore", both(&["arp_ignore=1"])),
        ("fix_ignore2", both(&["arp_ignore=2"])),
        ("fix_policy", both(&["arp_ignore=1", "policy_routing=true"])),
        ("fix_rails_rp", rails),
    ];
    let mut seen = Vec::new();
    for (tag, sets) in fixes {
        let (status, error, busbw) = seed_case(tag, &sets);
        assert_eq!(status, "success", "{tag}: {error}");
        assert!(busbw >= 0.95 * bound && busbw <= bound, "{tag}: {busbw}");
        seen.push(busbw);
    }
    // Once every QP has its peer's MAC the runs are the same run.
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    let not_fixes: Vec<(&str, Vec<String>)> = vec![
        ("nofix_rp", both(&["rp_filter=1"])),
        ("nofix_policy", both(&["policy_routing=true"])),
        ("nofix_rails", rail_subnets()),
    ];
    for (tag, sets) in not_fixes {
        let (status, error, _) = seed_case(tag, &sets);
        assert_eq!(status, "error", "{tag}");
        assert!(error.contains("IBV_WC_RETRY_EXC_ERR(12)"), "{tag}: {error}");
    }
}

/// The same servers' all_reduce on the rail fabric with every NIC in one
/// /8: the rings stay on their rails, where each leaf's broadcast domain
/// holds one NIC per server, so nothing answers for another NIC.
#[test]
fn a_shared_subnet_on_a_rail_fabric_leaves_the_rings_alone() {
    let (_, s) = run_scenario(
        "nccl_allreduce",
        "fab_ar_shared",
        &[
            "topology.subnet=shared",
            "collective.allreduce.maxbytes=4KiB",
        ],
    );
    for x in rows(&s) {
        assert_eq!(x["status"], "success", "{x}");
    }
}

/// NCCL_IB_HCA names RDMA devices: a netdev name is refused with the
/// device it belongs to.
#[test]
fn nccl_ib_hca_names_rdma_devices() {
    let o = bin()
        .arg("check")
        .arg(scenario("nccl_allreduce"))
        .args(["--set", "collective.allreduce.env.NCCL_IB_HCA=eth3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("key `collective[0].env.NCCL_IB_HCA`"), "{e}");
    assert!(e.contains("`eth3` is the netdev of `mlx5_3`"), "{e}");
}
