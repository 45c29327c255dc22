//! The time series as CSV: `ports.csv` and `qps.csv`, one row per
//! component per sample, with rates over the interval ending at the row's
//! time.

use std::io::{self, Write};

use super::summary::gbps;
use crate::time::Ps;
use crate::world::World;

/// Rows of samples of `n` components (`key`: which one, below `n`), in
/// time order: each with the same component's previous row, if any. A
/// component made during the run (a flow's QP) has rows from then on.
pub(crate) fn with_previous<S>(
    samples: &[S],
    n: usize,
    key: impl Fn(&S) -> usize,
) -> impl Iterator<Item = (&S, Option<&S>)> {
    let mut last: Vec<Option<usize>> = vec![None; n];
    samples.iter().enumerate().map(move |(k, s)| {
        let prev = last[key(s)].replace(k);
        (s, prev.map(|p| &samples[p]))
    })
}

/// `t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops`.
pub fn ports_csv(w: &World, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops\n")?;
    for (s, prev) in with_previous(w.port_samples(), w.ports().len(), |s| s.port as usize) {
        let (dt, dtx, drx) = prev.map_or((Ps::ZERO, 0, 0), |p| {
            (s.t - p.t, s.tx_bytes - p.tx_bytes, s.rx_bytes - p.rx_bytes)
        });
        writeln!(
            out,
            "{},{},{},{},{:.3},{:.3},{},{}",
            s.t.as_ns(),
            w.port(s.port).name(),
            s.tx_bytes,
            s.rx_bytes,
            gbps(dtx, dt),
            gbps(drx, dt),
            s.queued,
            s.drops
        )?;
    }
    Ok(())
}

/// `t_ns,host,qpn,role,tx_payload_bytes,completed_bytes,tx_payload_gbps,goodput_gbps,retransmitted_packets,rate_gbps`:
/// payload sent (retransmissions included) and completed, with their rates,
/// and the rate the QP's limiter allowed at that instant (DCQCN's current
/// rate; the line rate, or `rate_limit`, where DCQCN does not run).
pub fn qps_csv(w: &World, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(
        b"t_ns,host,qpn,role,tx_payload_bytes,completed_bytes,tx_payload_gbps,goodput_gbps,retransmitted_packets,rate_gbps\n",
    )?;
    for (s, prev) in with_previous(w.qp_samples(), w.qp_count(), |s| s.qp as usize) {
        let q = w.qp(s.qp);
        let (dt, dtx, ddone) = prev.map_or((Ps::ZERO, 0, 0), |p| {
            (
                s.t - p.t,
                s.tx_payload - p.tx_payload,
                s.completed_bytes - p.completed_bytes,
            )
        });
        writeln!(
            out,
            "{},{},{},{},{},{},{:.3},{:.3},{},{:.3}",
            s.t.as_ns(),
            q.host(),
            q.qp().qpn(),
            q.role().name(),
            s.tx_payload,
            s.completed_bytes,
            gbps(dtx, dt),
            gbps(ddone, dt),
            s.retransmitted,
            s.rate_bps as f64 / 1e9
        )?;
    }
    Ok(())
}
