//! NCCL collectives (`[[collective]]`) end to end: nccl-tests' numbers
//! against the line rate, the latency floor, NCCL's error on a failed
//! completion, and refused input.

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

/// 4 servers × 1 NIC, 100G leaf-spine: ring all_reduce at 16 MiB reaches
/// ≥ 90 % of the bound (line × payload efficiency), small sizes sit on a
/// latency floor, and the printed numbers obey nccl-tests' arithmetic.
#[test]
fn ring_all_reduce_reaches_the_bound_and_small_sizes_a_floor() {
    let out = tmp("nccl_allreduce_small");
    let o = run(&scenario("nccl_allreduce_small"), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("# Avg bus bandwidth    : "), "{stdout}");
    assert!(
        stdout.contains("#       size         count      type   redop    root"),
        "{stdout}"
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let r = rows(&s);
    // -b 8 -e 32M -f 8: 8, 64, ..., 16 MiB.
    let sizes: Vec<u64> = r
        .iter()
        .map(|x| x["size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(
        sizes,
        vec![8, 64, 512, 4096, 32768, 262144, 2 << 20, 16 << 20]
    );
    for x in r {
        assert_eq!(x["status"], "success");
        assert_eq!(x["op"], "all_reduce");
        assert_eq!(x["algorithm"], "ring");
        assert_eq!(x["ranks"], 4);
        assert_eq!(
            x["count"].as_u64().unwrap() * 4,
            x["size_bytes"].as_u64().unwrap()
        );
        // algbw = size / time (GB/s = 1e9 B/s); busbw = algbw × 2(n−1)/n.
        let (size, t) = (x["size_bytes"].as_f64().unwrap(), f(x, "time_us"));
        let alg = size / (t * 1e-6) / 1e9;
        assert!(
            (f(x, "algbw_GBps") - alg).abs() < 1e-9 * alg.max(1.0),
            "{x}"
        );
        assert!(
            (f(x, "busbw_GBps") - 1.5 * alg).abs() < 1e-9 * alg.max(1.0),
            "{x}"
        );
    }
    // Bound: 100 Gb/s × 4096 / (4096 + 82) bytes per packet.
    let bound = f(&r[0], "bound_GBps");
    assert!((bound - 12.5 * 4096.0 / 4178.0).abs() < 1e-3, "{bound}");
    let big = r.last().unwrap();
    assert!(f(big, "busbw_GBps") >= 0.9 * bound, "{big}");
    assert!(f(big, "busbw_GBps") <= bound * 1.001, "{big}");
    // The floor: 8 B and 512 B take the same time within 2 %, at least the
    // six one-way trips of the ring (2 × 2 µs inside a leaf, 4 × ... the
    // hops: 0→1 and 2→3 cross 2 links, 1→2 and 3→0 cross 4; 3 rounds of
    // both in 2(n−1) = 6 transfers: 3 × (2 + 4) µs = 18 µs).
    let (t8, t512) = (f(&r[0], "time_us"), f(&r[2], "time_us"));
    assert!((18.0..25.0).contains(&t8), "{t8}");
    assert!((t512 - t8).abs() / t8 < 0.02, "{t8} {t512}");
    // The outputs beside summary.json.
    let csv = std::fs::read_to_string(out.join("collectives.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + r.len());
    assert!(csv.starts_with("collective,op,algorithm,ranks,type,size_bytes"));
    assert!(out.join("busbw.png").exists() && out.join("busbw.svg").exists());
}

/// Every op runs to the end on the same fabric and stays under its bound
/// at its largest size (broadcast/reduce excepted: nccl-tests averages the
/// ranks' times, and the root's kernel ends early).
#[test]
fn every_op_completes() {
    for op in [
        "all_gather",
        "reduce_scatter",
        "alltoall",
        "sendrecv",
        "broadcast",
        "reduce",
    ] {
        let out = tmp(&format!("nccl_{op}"));
        let o = run(
            &scenario("nccl_allreduce_small"),
            &out,
            &[
                &format!("collective.allreduce.op={op}"),
                "collective.allreduce.minbytes=1MiB",
                "collective.allreduce.maxbytes=8MiB",
                "collective.allreduce.root=2",
            ],
        );
        assert!(
            o.status.success(),
            "{op}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let s: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        let r = rows(&s);
        assert_eq!(r.len(), 2, "{op}");
        for x in r {
            assert_eq!(x["status"], "success", "{op}: {x}");
            assert!(f(x, "busbw_GBps") > 0.5 * f(x, "bound_GBps"), "{op}: {x}");
            if !["broadcast", "reduce"].contains(&op) {
                assert!(
                    f(x, "busbw_GBps") <= 1.001 * f(x, "bound_GBps"),
                    "{op}: {x}"
                );
            }
        }
        let per_rank = ["all_gather", "reduce_scatter", "alltoall"].contains(&op);
        let count = r[0]["count"].as_u64().unwrap();
        assert_eq!(
            count,
            if per_rank {
                (1 << 20) / 4 / 4
            } else {
                (1 << 20) / 4
            },
            "{op}"
        );
    }
}

/// A 4-server star whose host3 link dies: a QP's retries run out and the
/// collective stops with NCCL's warning; the run itself still succeeds.
#[test]
fn a_failed_completion_ends_the_collective_with_nccls_text() {
    let t = failing_allreduce("");
    let (_, s) = run_text("nccl_fail", &t, &[]);
    let r = rows(&s);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["status"], "error");
    let e = r[0]["error"].as_str().unwrap();
    assert!(
        e.starts_with("NET/IB: Got completion from peer 10.0.0."),
        "{e}"
    );
    assert!(e.contains("with status=IBV_WC_RETRY_EXC_ERR(12)"), "{e}");
    assert!(e.contains("hca mlx5_0"), "{e}");
    assert!(e.contains("localGid ::ffff:10.0.0."), "{e}");
    // The timed-out QP is one of host3's connections.
    assert!(e.contains("10.0.0.4"), "{e}");
}

/// Bad input is refused at its key, with a hint.
#[test]
fn bad_input_is_refused_at_its_key() {
    let check = |sets: &[&str]| refused(&scenario("nccl_allreduce_small"), sets);
    let e = check(&["collective.allreduce.ranks=9"]);
    assert!(e.contains("key `collective[0].ranks`"), "{e}");
    assert!(
        e.contains("ranks = 9 do not fit: 4 servers × 1 GPUs = 4"),
        "{e}"
    );
    let e = check(&["collective.allreduce.env.NCCL_IB_HCA=mlx5_7"]);
    assert!(e.contains("key `collective[0].env.NCCL_IB_HCA`"), "{e}");
    assert!(
        e.contains("no RDMA interface") || e.contains("which no server has"),
        "{e}"
    );
    let e = check(&["collective.allreduce.minbytes=6"]);
    assert!(e.contains("key `collective[0].minbytes`"), "{e}");
    assert!(
        e.contains("6 bytes is not a multiple of float's 4 bytes"),
        "{e}"
    );
    let e = check(&["collective.allreduce.op=allreduce"]);
    assert!(e.contains("unknown collective `allreduce`"), "{e}");
    assert!(e.contains("did you mean `all_reduce`?"), "{e}");
    let e = check(&["collective.allreduce.env.NCCL_ALGO=CollNetDirect"]);
    assert!(
        e.contains("Ring and Tree are modelled for all_reduce"),
        "{e}"
    );
    let e = check(&["collective.allreduce.env.NCCL_STEPS=16"]);
    assert!(e.contains("compile-time constant"), "{e}");
    let e = check(&["collective.allreduce.env.NCCL_IB_QPS_PER_CONECTION=2"]);
    assert!(e.contains("unknown or unmodelled NCCL variable"), "{e}");
    assert!(
        e.contains("did you mean `NCCL_IB_QPS_PER_CONNECTION`?"),
        "{e}"
    );
    let e = check(&["collective.allreduce.servers=[\"host0\"]"]);
    assert!(e.contains("at least 2 servers"), "{e}");
    let e = check(&["sim.partitions=2"]);
    assert!(e.contains("NCCL collectives"), "{e}");
    // NCCL_PROTO: only Simple is modelled, so a list must keep it.
    let e = check(&["collective.allreduce.env.NCCL_PROTO=LL,LL128"]);
    assert!(
        e.contains("ll, ll128 is not modelled; only Simple is"),
        "{e}"
    );
    let e = check(&["collective.allreduce.env.NCCL_PROTO=^simple"]);
    assert!(
        e.contains("excluding Simple leaves only what is not modelled"),
        "{e}"
    );
    let e = check(&["collective.allreduce.env.NCCL_PROTO=LLX"]);
    assert!(e.contains("unknown value `llx`"), "{e}");
    assert!(e.contains("did you mean `ll`?"), "{e}");
    let e = check(&["collective.allreduce.env.NCCL_PROTO=allreduce:LL"]);
    assert!(e.contains("per-collective lists are not modelled"), "{e}");
}

/// NCCL_PROTO lists that keep Simple run as Simple.
#[test]
fn proto_lists_keeping_simple_are_accepted() {
    for v in ["Simple", "simple,LL", "^LL,LL128"] {
        let set = format!("collective.allreduce.env.NCCL_PROTO={v}");
        let o = check_with(&scenario("nccl_allreduce_small"), &[&set]);
        assert!(
            o.status.success(),
            "{v}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
