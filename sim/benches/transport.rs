//! Cost of the RC state machine per packet, without any network model:
//! the requester's `next_tx`, the responder's `on_receive`, and the ACK
//! path back. `cargo bench -p rocesim --bench transport`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use roce_codec::Psn;
use rocesim::time::Ps;
use rocesim::transport::{QpConfig, RcQp, Verb, WorkRequest};
use std::hint::black_box;

/// Streams `msgs` WRITEs of `size` bytes from a to b, handing every packet
/// over at once (zero delay). Returns the request packets carried.
fn stream(size: u64, msgs: u64) -> u64 {
    let cfg = QpConfig::default();
    let mut a = RcQp::new(0x100, 0x200, Psn::new(0), Psn::new(0), cfg);
    let mut b = RcQp::new(0x200, 0x100, Psn::new(0), Psn::new(0), cfg);
    let mut posted = 0;
    let mut done = 0;
    let mut pkts = 0;
    let mut now = Ps::ZERO;
    while done < msgs {
        while posted < msgs
            && a.post_send(WorkRequest::new(posted, Verb::Write, size))
                .is_ok()
        {
            posted += 1;
        }
        while let Some(p) = a.next_tx(now) {
            pkts += 1;
            b.on_receive(&p, false, now);
            now += Ps(100);
        }
        while let Some(ack) = b.next_tx(now) {
            a.on_receive(&ack, false, now);
        }
        while a.poll_completion().is_some() {
            done += 1;
        }
    }
    pkts
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("rc_qp");
    // 64 KiB WRITEs at 4096: 16 packets per message, AckReq on the last.
    let pkts = stream(65536, 1000);
    g.throughput(Throughput::Elements(pkts));
    g.bench_function("write_64k_x1000", |bch| {
        bch.iter(|| black_box(stream(65536, 1000)))
    });
    // One-packet WRITEs: an ACK per packet.
    let pkts = stream(64, 10_000);
    g.throughput(Throughput::Elements(pkts));
    g.bench_function("write_64b_x10000", |bch| {
        bch.iter(|| black_box(stream(64, 10_000)))
    });
    g.finish();
}

// No plots: criterion's plotters backend needs system fonts the CI
// machine may not have; the numbers go to BENCHMARKS.md.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = bench
}
criterion_main!(benches);
