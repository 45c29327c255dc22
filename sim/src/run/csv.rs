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

/// One CSV row at a time, in a buffer that is reused: a fabric's series
/// run to millions of rows, and most fields are integers or a zero rate
/// (the idle ports of a reference topology), which need none of the
/// formatting machinery.
struct Row(String);

impl Row {
    fn int(&mut self, v: impl itoa::Integer) -> &mut Row {
        self.0.push_str(itoa::Buffer::new().format(v));
        self.0.push(',');
        self
    }
    fn text(&mut self, v: &str) -> &mut Row {
        self.0.push_str(v);
        self.0.push(',');
        self
    }
    /// A rate in Gb/s with three decimals, as `{:.3}` writes it.
    fn rate(&mut self, v: f64) -> &mut Row {
        use std::fmt::Write as _;
        if v == 0.0 && v.is_sign_positive() {
            self.0.push_str("0.000,");
        } else {
            let _ = write!(self.0, "{v:.3},");
        }
        self
    }
    /// Ends the row and writes it.
    fn write(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.0.pop();
        self.0.push('\n');
        out.write_all(self.0.as_bytes())?;
        self.0.clear();
        Ok(())
    }
}

/// `t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops`.
pub fn ports_csv(w: &World, out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops\n")?;
    let mut row = Row(String::with_capacity(128));
    for (s, prev) in with_previous(w.port_samples(), w.ports().len(), |s| s.port as usize) {
        let (dt, dtx, drx) = prev.map_or((Ps::ZERO, 0, 0), |p| {
            (s.t - p.t, s.tx_bytes - p.tx_bytes, s.rx_bytes - p.rx_bytes)
        });
        row.int(s.t.as_ns())
            .text(w.port(s.port).name())
            .int(s.tx_bytes)
            .int(s.rx_bytes)
            .rate(gbps(dtx, dt))
            .rate(gbps(drx, dt))
            .int(s.queued)
            .int(s.drops)
            .write(out)?;
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
    let mut row = Row(String::with_capacity(128));
    for (s, prev) in with_previous(w.qp_samples(), w.qp_count(), |s| s.qp as usize) {
        let q = w.qp(s.qp);
        let (dt, dtx, ddone) = prev.map_or((Ps::ZERO, 0, 0), |p| {
            (
                s.t - p.t,
                s.tx_payload - p.tx_payload,
                s.completed_bytes - p.completed_bytes,
            )
        });
        row.int(s.t.as_ns())
            .text(q.host())
            .int(q.qp().qpn())
            .text(q.role().name())
            .int(s.tx_payload)
            .int(s.completed_bytes)
            .rate(gbps(dtx, dt))
            .rate(gbps(ddone, dt))
            .int(s.retransmitted)
            .rate(s.rate_bps as f64 / 1e9)
            .write(out)?;
    }
    Ok(())
}
