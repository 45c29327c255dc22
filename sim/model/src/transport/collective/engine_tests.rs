//! The engine on the transport's two-QP bench: a 2-rank broadcast's one
//! network connection, every step's CTS and data on the wire.

use super::*;
use crate::transport::loopback::{Dir, Loopback};
use crate::transport::{QpConfig, RcQp, Workload};
use roce_codec::Psn;

fn broadcast(iters: u32) -> Workload {
    let topo = Topo {
        ranks: 2,
        gpus: 1,
        nics: 1,
        nic_per_gpu: true,
    };
    let knobs = NcclKnobs {
        channels: 1,
        ..NcclKnobs::default()
    };
    let spec = CollectiveSpec {
        op: CollOp::Broadcast,
        datatype: DataType::Int8,
        root: 0,
        sizes: vec![1 << 20],
        iters,
        warmup_iters: 0,
        knobs,
        gpu: GpuModel {
            nvlink_rate: Rate::gbps(2960),
            nvlink_latency: Ps::from_us(1),
            reduce_ps_per_kib: 0,
        },
        start: Ps::ZERO,
        bound: Rate::gbps(100),
    };
    let conns = plan::connections(CollOp::Broadcast, &topo, &knobs, 0);
    assert_eq!(conns.len(), 1);
    let info = vec![NetConnInfo {
        send_ip: "10.0.0.1".parse().unwrap(),
        recv_ip: "10.0.0.2".parse().unwrap(),
        send_hca: "mlx5_0".into(),
        recv_hca: "mlx5_0".into(),
        oob_peer: None,
    }];
    Workload::collective(Collective::new(spec, topo, conns, info), 0)
}

fn bench() -> Loopback {
    let cfg = QpConfig {
        max_send_wr: 512,
        ..QpConfig::default()
    };
    let mut a = RcQp::new(1, 2, Psn::new(0), Psn::new(0), cfg);
    let mut b = RcQp::new(2, 1, Psn::new(0), Psn::new(0), cfg);
    a.set_record_inbound(true);
    b.set_record_inbound(true);
    let mut lb = Loopback::new(a, b, Rate::gbps(100), Ps::from_us(1), 1);
    lb.record_trace();
    lb
}

#[test]
fn each_step_waits_for_its_cts() {
    let mut w = broadcast(1);
    let mut lb = bench();
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    let c = w.as_collective().unwrap();
    assert!(c.is_done());
    let tr = lb.trace();
    // 1 MiB in 512 KiB steps (chunk = slice = 1 step): 2 CTSs of 64 B
    // back, 2 messages of 128 packets of 4096 B out.
    let cts: Vec<_> = tr
        .iter()
        .filter(|e| e.dir == Dir::BtoA && e.pkt.payload_len == 64)
        .collect();
    assert_eq!(cts.len(), 2);
    let data: Vec<_> = tr
        .iter()
        .filter(|e| e.dir == Dir::AtoB && e.pkt.payload_len > 0)
        .collect();
    assert_eq!(data.len(), 256);
    assert!(data.iter().all(|e| e.pkt.payload_len == 4096));
    // No data leaves before the first CTS has crossed the 1 µs wire.
    assert!(data[0].at >= cts[0].at + Ps::from_us(1), "{:?}", data[0].at);
    // nccl-tests' time: the mean of the ranks' ends, the root's at 0 (its
    // kernel ends once both steps are filled, inside the window of 8) and
    // rank 1's when the last packet is in (sent + < 0.4 µs + 1 µs).
    let r = &c.results()[0];
    assert_eq!((r.size_bytes, r.count), (1 << 20, 1 << 20));
    let last = data.last().unwrap().at.as_ps() as f64 / 1e6;
    assert!(
        2.0 * r.time_us > last + 1.0 && 2.0 * r.time_us < last + 1.4,
        "{} {last}",
        r.time_us
    );
    assert_eq!(r.busbw_gbps, r.algbw_gbps);
    assert!((r.algbw_gbps - (1u64 << 20) as f64 / r.time_us / 1e3).abs() < 1e-9);
}

#[test]
fn back_to_back_operations_share_the_window() {
    // 6 broadcasts of 2 steps: the root may run at most 8 steps (4
    // operations) ahead of completions, so rank 0 ends late too.
    let mut w = broadcast(6);
    let mut lb = bench();
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    let cts = lb
        .trace()
        .iter()
        .filter(|e| e.dir == Dir::BtoA && e.pkt.payload_len == 64)
        .count();
    assert_eq!(cts, 12);
    let c = w.as_collective().unwrap();
    let r = &c.results()[0];
    // Rank 1 gets 6 MiB at ≤ 100 Gb/s: ≥ 503 µs; rank 0 waits for the
    // first 4 steps' completions (≥ 4 × 41.9 µs) before its last 4: the
    // mean per operation exceeds (503 + 168) / 2 / 6 µs.
    assert!(r.time_us > (503.0 + 168.0) / 2.0 / 6.0, "{}", r.time_us);
    assert!(r.time_us < 503.0 / 6.0 * 1.1, "{}", r.time_us);
}

#[test]
fn the_first_operation_waits_for_the_set_ups_and_counts_them() {
    let mut w0 = broadcast(1);
    let mut lb = bench();
    assert!(lb.run_workload(&mut w0, 0, Ps::from_ms(10), 1_000_000));
    let t0 = w0.as_collective().unwrap().results()[0].time_us;
    // Two connections' set-ups: launched at 0, nothing moves until both
    // are done (the second at 50 µs); the time counts from the launch.
    let mut w = broadcast(1);
    let c = w.as_collective_mut().unwrap();
    c.set_setups(2);
    let mut lb = bench();
    assert!(!lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    assert!(lb.trace().is_empty());
    let c = w.as_collective_mut().unwrap();
    assert!(!c.setup_done(Ps::from_us(20)));
    assert!(c.setup_done(Ps::from_us(50)));
    assert!(lb.run_workload(&mut w, 0, Ps::from_ms(10), 1_000_000));
    assert!(lb.trace().iter().all(|e| e.at >= Ps::from_us(50)));
    let t = w.as_collective().unwrap().results()[0].time_us;
    assert!((t - (t0 + 50.0)).abs() < 1e-6, "{t} vs {t0} + 50");
}
