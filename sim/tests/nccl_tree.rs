//! NCCL's tree all_reduce (`NCCL_ALGO=Tree`) end to end: the double binary
//! tree's latency against the ring's, the bus bandwidth its busiest NIC
//! allows (above the NICs' on two servers, as real runs show), and the
//! refusals NCCL itself would give.

mod common;

use common::*;
use serde_json::Value;

/// The collectives' rows of a run of the small leaf-spine with `sets`.
fn rows(tag: &str, sets: &[&str]) -> Vec<Value> {
    let s = run_ok(&scenario("nccl_allreduce_small"), &tmp(tag), sets);
    s["collectives"].as_array().unwrap().clone()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// 100 Gb/s × 4096 / (4096 + 82): a NIC's payload rate, GB/s.
const NIC: f64 = 12.5 * 4096.0 / 4178.0;

/// 4 servers × 1 GPU on the small leaf-spine (host0, host1 on leaf0; host2,
/// host3 on leaf1; every link 1 µs). Tree 0 is 0 → 2 → {1, 3}, tree 1 its
/// mirror 3 → 1 → {2, 0}. A small all_reduce climbs and descends the tree:
/// the longest way up is 1 → 2 → 0 (4 + 4 links), down the same, 16 µs of
/// wire, under the ring's 18 µs (six transfers around the ring). Server 2
/// is an inner node of tree 0 (S/2 from each child, S/2 up, S/2 to each
/// child) and a leaf of tree 1 (S/2 up, S/2 down): 2S each way through its
/// NIC, so algbw ≤ NIC/2 and busbw ≤ 1.5 × NIC/2 = 0.75 NIC.
#[test]
fn tree_all_reduce_on_four_servers() {
    let r = rows("nccl_tree4", &["collective.allreduce.env.NCCL_ALGO=Tree"]);
    assert_eq!(r.len(), 8);
    for x in &r {
        assert_eq!(x["algorithm"], "tree");
        assert_eq!(x["status"], "success");
        let alg = x["size_bytes"].as_f64().unwrap() / (f(x, "time_us") * 1e-6) / 1e9;
        assert!((f(x, "busbw_GBps") - 1.5 * alg).abs() < 1e-9 * alg.max(1.0));
    }
    let bound = f(&r[0], "bound_GBps");
    assert!((bound - 0.75 * NIC).abs() < 1e-3, "{bound}");
    let big = r.last().unwrap();
    assert!(f(big, "busbw_GBps") >= 0.9 * bound, "{big}");
    assert!(f(big, "busbw_GBps") <= bound * 1.001, "{big}");
    let t8 = f(&r[0], "time_us");
    assert!((16.0..18.0).contains(&t8), "{t8}");
    // The same operation on the ring: slower at 8 B, faster at 16 MiB.
    let rr = rows("nccl_tree4_ring", &[]);
    assert!(f(&rr[0], "time_us") > t8 + 1.0);
    assert!(f(rr.last().unwrap(), "busbw_GBps") > f(big, "busbw_GBps"));
}

/// 2 servers × 2 GPUs sharing one NIC: tree 0 is server 0 → server 1,
/// tree 1 the reverse, so each NIC sends S/2 down one tree and S/2 up the
/// other: algbw ≤ NIC, busbw ≤ 2(n−1)/n × NIC = 1.5 NIC, above what the
/// NICs carry (nccl-tests#196: tree busbw on 2 nodes exceeds the NIC).
/// Within a server the GPUs chain over NVLink.
#[test]
fn tree_on_two_servers_beats_the_nics() {
    let r = rows(
        "nccl_tree2",
        &[
            "collective.allreduce.env.NCCL_ALGO=Tree",
            "collective.allreduce.gpus_per_server=2",
            "collective.allreduce.servers=[\"host0\",\"host2\"]",
        ],
    );
    let bound = f(&r[0], "bound_GBps");
    assert!((bound - 1.5 * NIC).abs() < 1e-3, "{bound}");
    let big = r.last().unwrap();
    assert!(f(big, "busbw_GBps") >= 0.9 * bound, "{big}");
    assert!(f(big, "busbw_GBps") > NIC, "{big}");
}

fn check(sets: &[&str]) -> String {
    refused(&scenario("nccl_allreduce_small"), sets)
}

/// NCCL_ALGO as NCCL reads it: lists, exclusions, per-function entries;
/// a function left with no algorithm is NCCL's own error.
#[test]
fn nccl_algo_lists() {
    let e = check(&[
        "collective.allreduce.op=all_gather",
        "collective.allreduce.env.NCCL_ALGO=Tree",
    ]);
    assert!(e.contains("key `collective[0].env.NCCL_ALGO`"), "{e}");
    assert!(
        e.contains("no algorithm/protocol available for function AllGather with datatype ncclFloat32. NCCL_ALGO was set to Tree."),
        "{e}"
    );
    assert!(e.contains("ring;allreduce:tree"), "{e}");
    let e = check(&["collective.allreduce.env.NCCL_ALGO=NVLS"]);
    assert!(
        e.contains("Ring and Tree are modelled for all_reduce"),
        "{e}"
    );
    let e = check(&["collective.allreduce.env.NCCL_ALGO=Treee"]);
    assert!(e.contains("unknown algorithm `treee`"), "{e}");
    assert!(e.contains("did you mean `tree`?"), "{e}");
    let e = check(&["collective.allreduce.env.NCCL_ALGO=ring;allgather:treee"]);
    assert!(e.contains("unknown algorithm `treee`"), "{e}");
    let e = check(&["collective.allreduce.env.NCCL_ALGO=allreduse:tree"]);
    assert!(e.contains("unknown function `allreduse`"), "{e}");
    // Accepted: the tree for all_reduce only, an exclusion that leaves it.
    for (op, algo, want) in [
        ("all_gather", "ring;allreduce:tree", "ring"),
        ("all_reduce", "ring;allreduce:tree", "tree"),
        ("all_reduce", "^ring", "tree"),
        ("all_reduce", "Ring,Tree", "ring"),
    ] {
        let r = rows(
            &format!("nccl_algo_{op}_{want}"),
            &[
                &format!("collective.allreduce.op={op}"),
                &format!("collective.allreduce.env.NCCL_ALGO={algo}"),
                "collective.allreduce.minbytes=1MiB",
                "collective.allreduce.maxbytes=1MiB",
            ],
        );
        assert_eq!(r[0]["algorithm"], want, "{op} {algo}");
    }
}
