//! The time series as CSV: `ports.csv` and `qps.csv`, one row per
//! component per sample, with rates over the interval ending at the row's
//! time.

use std::io::{self, Write};

use super::intervals::{gbps, with_previous};
use crate::time::Ps;
use crate::world::World;

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
        match thousandths(v) {
            Some(n) => {
                self.0.push_str(itoa::Buffer::new().format(n / 1000));
                let f = n % 1000;
                let digit = |d: u64| b'0' + d as u8;
                let digits = [
                    b'.',
                    digit(f / 100),
                    digit(f / 10 % 10),
                    digit(f % 10),
                    b',',
                ];
                self.0.extend(digits.map(char::from));
            }
            None => {
                let _ = write!(self.0, "{v:.3},");
            }
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

/// `v` in thousandths, rounded as `{:.3}` rounds it (the exact value of
/// `v`, half to even), where that is certain: `v * 1000` is within 1.2e-7
/// of the exact product below 1e9, so a fraction farther than 1e-6 from
/// one half rounds the same either way. `None` for the rest (ties,
/// negative, huge, not finite), which `{:.3}` writes: the formatter's
/// exact path was a tenth of writing a star's outputs.
fn thousandths(v: f64) -> Option<u64> {
    let m = v * 1000.0;
    let clear = v.is_sign_positive() && m < 1e9 && (m - m.floor() - 0.5).abs() > 1e-6;
    clear.then(|| (m + 0.5).floor() as u64)
}

/// `t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops`:
/// the rows of every port, or of the ports `keep` marks (by index).
pub fn ports_csv(w: &World, out: &mut dyn Write, keep: Option<&[bool]>) -> io::Result<()> {
    out.write_all(b"t_ns,port,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops\n")?;
    let mut row = Row(String::with_capacity(128));
    for (_, s, prev) in with_previous(w.port_samples(), w.ports().len(), |s| Some(s.port as usize))
    {
        if keep.is_some_and(|k| !k.get(s.port as usize).copied().unwrap_or(false)) {
            continue;
        }
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
/// Every QP's rows, or those of the QPs of the hosts `hosts` marks (by
/// index).
pub fn qps_csv(w: &World, out: &mut dyn Write, hosts: Option<&[bool]>) -> io::Result<()> {
    out.write_all(
        b"t_ns,host,qpn,role,tx_payload_bytes,completed_bytes,tx_payload_gbps,goodput_gbps,retransmitted_packets,rate_gbps\n",
    )?;
    let mut row = Row(String::with_capacity(128));
    let kept: Option<std::collections::HashSet<&str>> = hosts.map(|k| {
        w.hosts()
            .enumerate()
            .filter(|(i, _)| k.get(*i).copied().unwrap_or(false))
            .map(|(_, h)| h.name())
            .collect()
    });
    for (_, s, prev) in with_previous(w.qp_samples(), w.qp_count(), |s| Some(s.qp as usize)) {
        let q = w.qp(s.qp);
        if kept.as_ref().is_some_and(|k| !k.contains(q.host())) {
            continue;
        }
        let (dt, dtx, ddone) = prev.map_or((Ps::ZERO, 0, 0), |p| {
            (
                s.t - p.t,
                s.tx_payload - p.tx_payload,
                s.completed_bytes - p.completed_bytes,
            )
        });
        row.int(s.t.as_ns())
            .text(q.host())
            .int(q.qpn())
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rate(v: f64) -> String {
        let mut r = Row(String::new());
        r.rate(v);
        r.0
    }

    /// The standard formatter is the truth `rate` must write, ties and
    /// the values around them included.
    #[test]
    fn rate_writes_what_the_formatter_writes() {
        for v in [
            0.0,
            -0.0,
            0.0005,
            0.0015,
            0.0025,
            1.0005,
            2.5e-4,
            99.9995,
            100.0,
            12.3456789,
            999_999.999_5,
            1e6,
            1e8,
            -1.5,
            f64::NAN,
            f64::INFINITY,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(rate(v), format!("{v:.3},"), "{v:e}");
        }
    }

    proptest! {
        #[test]
        fn rate_matches_the_formatter(v in 0.0f64..1e7, k in 0u64..2_000_000, x in -1.0e3f64..1.0e3) {
            prop_assert_eq!(rate(v), format!("{v:.3},"));
            // Near a tie: k thousandths and a half, nudged.
            let t = (k as f64 + 0.5) / 1000.0 + x * f64::EPSILON;
            prop_assert_eq!(rate(t), format!("{t:.3},"));
        }
    }
}
