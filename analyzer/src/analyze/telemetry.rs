//! In-band telemetry (HPCC's INT, [`roce_codec::wire::int`]): what the
//! switches on a flow's path wrote on its requests.
//!
//! ```text
//!  requester ── request + records [hop 1, hop 2, ...] ──▶ responder     measured, per hop index
//!  requester ◀── ACK + the same records (echo) ────────── responder     counted
//! ```
//!
//! Each record of a request becomes one [`IntHopEvent`], right after the
//! frame's own event in the merged stream (frames without telemetry add
//! none). Per flow and hop index (path order, the first switch first) the
//! figures are those HPCC's sender works from:
//! * the queue the port held as the packet left: maximum and mean over the
//!   records;
//! * the link utilisation between two consecutive records of the hop,
//!   `Δtx bytes × 8 / Δtime / rate` (`IntHop::GetBytesDelta`,
//!   `GetTimeDelta` in the reference's `int-header.h`, across the counters'
//!   wrap): the largest such value, and the mean weighted by time (bytes
//!   over all intervals / the time they span). Two records further apart
//!   in the capture than the 24-bit clock's 16.8 ms wrap, or at the same
//!   switch time (a copy), make no interval.
//!
//! Echoes are counted, not measured again: they carry the same records.

use core::net::IpAddr;

use roce_codec::IntHopRepr;
use roce_codec::wire::int::MAX_HOPS;

use super::model::{HopTelemetry, QpTelemetry};

/// One switch's record on a RoCE frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IntHopEvent {
    pub file: u16,
    pub frame: u64,
    pub ts_ns: u64,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub dqpn: u32,
    /// The receiver's echo on its ACK, not a data packet's own records.
    pub echo: bool,
    /// Path position: 0 is the first switch's record.
    pub index: u8,
    /// The units' multiplier of the stack (`INT_MULTI`).
    pub multi: u8,
    pub hop: IntHopRepr,
}

/// The events of one frame's telemetry (none without it), for the merge.
pub(crate) fn hop_events(
    f: &roce_codec::Frame<'_>,
    file: u16,
    frame: u64,
    ts_ns: u64,
) -> impl Iterator<Item = IntHopEvent> {
    let found = match (f.ip(), f.ib(), f.int()) {
        (Some(ip), Some(ib), Some(int)) => Some((*ip, ib.bth.dest_qp, *int)),
        _ => None,
    };
    found.into_iter().flat_map(move |(ip, dqpn, int)| {
        (0..int.hops().len()).map(move |i| IntHopEvent {
            file,
            frame,
            ts_ns,
            src: ip.src(),
            dst: ip.dst(),
            dqpn,
            echo: int.echo,
            index: i as u8,
            multi: int.multi,
            hop: int.hops()[i],
        })
    })
}

/// The 24-bit switch clock wraps every 2^24 ns (16.8 ms): records further
/// apart than that in the capture have an unknown number of wraps between.
const CLOCK_WRAP_NS: u64 = 1 << IntHopRepr::TIME_BITS;

/// One hop index of one flow.
#[derive(Debug, Clone, Default)]
struct HopStats {
    rate_bps: u64,
    records: u64,
    qlen_max: u64,
    qlen_sum: u64,
    /// The previous record and when the capture saw it.
    last: Option<(u64, IntHopRepr)>,
    intervals: u64,
    /// Σ Δtime and Σ Δtime × utilisation (ns the link was busy).
    span_ns: u64,
    busy_ns: f64,
    utilisation_max: f64,
}

/// The telemetry of one flow.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlowTelemetry {
    requests: u64,
    echoes: u64,
    hops: Vec<HopStats>,
}

impl FlowTelemetry {
    /// Heap bytes held (at most [`MAX_HOPS`] hops).
    pub fn state_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.hops.capacity() * std::mem::size_of::<HopStats>()
    }

    pub fn record(&mut self, ev: &IntHopEvent) {
        if ev.echo {
            if ev.index == 0 {
                self.echoes += 1;
            }
            return;
        }
        let i = usize::from(ev.index);
        if i >= MAX_HOPS {
            return;
        }
        if self.hops.len() <= i {
            self.hops.resize_with(i + 1, HopStats::default);
        }
        let h = &mut self.hops[i];
        // A copy of the previous record (a mirror port's duplicate).
        if h.last.is_some_and(|(_, r)| r == ev.hop) {
            return;
        }
        if ev.index == 0 {
            self.requests += 1;
        }
        let qlen = ev.hop.qlen_bytes(ev.multi);
        h.rate_bps = ev.hop.rate_bps();
        h.records += 1;
        h.qlen_max = h.qlen_max.max(qlen);
        h.qlen_sum += qlen;
        if let Some((ts, prev)) = h.last {
            let dt = ev.hop.ns_since(&prev);
            if dt > 0 && ev.ts_ns.saturating_sub(ts) < CLOCK_WRAP_NS {
                let bits = ev.hop.bytes_since(&prev, ev.multi) as f64 * 8.0;
                let u = bits * 1e9 / (dt as f64 * h.rate_bps as f64);
                h.intervals += 1;
                h.span_ns += dt;
                h.busy_ns += u * dt as f64;
                h.utilisation_max = h.utilisation_max.max(u);
            }
        }
        h.last = Some((ev.ts_ns, ev.hop));
    }

    pub fn report(&self) -> QpTelemetry {
        QpTelemetry {
            requests: self.requests,
            echoes: self.echoes,
            hops: self
                .hops
                .iter()
                .enumerate()
                .map(|(i, h)| HopTelemetry {
                    hop: i + 1,
                    rate_gbps: h.rate_bps as f64 / 1e9,
                    records: h.records,
                    qlen_max_bytes: h.qlen_max,
                    qlen_mean_bytes: if h.records > 0 {
                        h.qlen_sum as f64 / h.records as f64
                    } else {
                        0.0
                    },
                    intervals: h.intervals,
                    utilisation_mean: (h.span_ns > 0).then(|| h.busy_ns / h.span_ns as f64),
                    utilisation_max: (h.intervals > 0).then_some(h.utilisation_max),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts_ns: u64, index: u8, echo: bool, hop: IntHopRepr) -> IntHopEvent {
        IntHopEvent {
            file: 0,
            frame: 1,
            ts_ns,
            src: IpAddr::from([10, 0, 0, 1]),
            dst: IpAddr::from([10, 0, 0, 2]),
            dqpn: 0x22,
            echo,
            index,
            multi: 1,
            hop,
        }
    }

    /// A 100G hop whose counter advances 6,400 B in 1,000 ns (51.2 Gb/s:
    /// 0.512), then 3,200 B in 1,000 ns (0.256), with queues of 0, 16,000
    /// and 8,000 B: queue max 16,000, mean 8,000; utilisation max 0.512,
    /// mean (6,400 + 3,200) × 8 / 2,000 ns / 100 Gb/s = 0.384.
    #[test]
    fn queue_and_utilisation_by_hand() {
        let hop = |t: u64, tx: u64, q: u64| IntHopRepr::new(100_000_000_000, t, tx, q, 1).unwrap();
        let mut t = FlowTelemetry::default();
        t.record(&ev(10_000, 0, false, hop(1_000, 0, 0)));
        t.record(&ev(11_000, 0, false, hop(2_000, 6_400, 16_000)));
        t.record(&ev(11_000, 0, false, hop(2_000, 6_400, 16_000)));
        t.record(&ev(12_000, 0, false, hop(3_000, 9_600, 8_000)));
        t.record(&ev(12_500, 0, true, hop(3_000, 9_600, 8_000)));
        let r = t.report();
        assert_eq!((r.requests, r.echoes), (3, 1), "the copy is left out");
        let h = &r.hops[0];
        assert_eq!((h.hop, h.records, h.intervals), (1, 3, 2));
        assert_eq!(h.rate_gbps, 100.0);
        assert_eq!((h.qlen_max_bytes, h.qlen_mean_bytes), (16_000, 8_000.0));
        assert!((h.utilisation_max.unwrap() - 0.512).abs() < 1e-12);
        assert!((h.utilisation_mean.unwrap() - 0.384).abs() < 1e-12);
    }

    /// Records 20 ms apart in the capture: the 24-bit clock may have
    /// wrapped, so they make no interval.
    #[test]
    fn no_interval_across_a_possible_clock_wrap() {
        let hop = |t: u64, tx: u64| IntHopRepr::new(25_000_000_000, t, tx, 0, 1).unwrap();
        let mut t = FlowTelemetry::default();
        t.record(&ev(0, 1, false, hop(1_000, 0)));
        t.record(&ev(20_000_000, 1, false, hop(2_000, 1_280)));
        let r = t.report();
        assert_eq!(r.hops.len(), 2, "hop 1 unseen, hop 2 seen");
        assert_eq!((r.hops[0].records, r.requests), (0, 0));
        assert_eq!((r.hops[1].records, r.hops[1].intervals), (2, 0));
        assert_eq!(r.hops[1].utilisation_mean, None);
    }
}
