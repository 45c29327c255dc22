//! PFC and 802.3x PAUSE accounting per capture file, sender MAC and
//! priority.
//!
//! ```text
//!  XOFF q=100 at t0        XOFF q=100 at t1 (< t0 + 100 quanta)     XON at t2
//!  |====== running ======|                                         |
//!  |========== replaced at t1 ====|===== running ================ |  ended at t2
//!  paused time = (t1 - t0) + (t2 - t1); one continuous pause of t2 - t0
//! ```
//! A new frame for a priority replaces the pause that is running (the
//! receiver restarts its timer with the new quanta), an XON (time 0) ends
//! it, and a pause still running at the end of the capture is counted in
//! full. Times are integer picoseconds internally: one quantum is 512 bit
//! times, 5120 ps at 100 Gb/s. Instants are 128-bit: a capture time of
//! 2024 is 1.7e18 ns since the epoch, which as picoseconds is past 2^64.

use std::collections::BTreeMap;

use roce_codec::MacControlRepr;
use roce_codec::wire::mac_control::pause_quanta_to_ps;

use super::series::Intervals;

/// 802.3x PAUSE frames are kept under this pseudo priority.
pub(crate) const PAUSE_8023X: u8 = 8;

#[derive(Debug, Clone, Default)]
pub(crate) struct PrioState {
    pub xoff: u64,
    pub xon: u64,
    pub paused_ps: u64,
    pub longest_ps: u64,
    pub first_frame: Option<u64>,
    /// (start, end) of the pause running now, picoseconds since the epoch.
    running: Option<(u128, u128)>,
    continuous_since: Option<u128>,
    pub intervals: Option<Intervals>,
}

/// A duration between two instants, in picoseconds (no pause lasts 2^64 ps).
fn span(from: u128, to: u128) -> u64 {
    u64::try_from(to.saturating_sub(from)).unwrap_or(u64::MAX)
}

impl PrioState {
    fn frame(&mut self, t_ps: u128, quanta: u16, rate_bps: u64, frame: u64) {
        self.first_frame.get_or_insert(frame);
        if let Some((s, e)) = self.running.take() {
            if t_ps < e {
                self.paused_ps += span(s, t_ps);
                self.record(s, t_ps);
            } else {
                self.paused_ps += span(s, e);
                self.record(s, e);
                self.end_continuous(e);
            }
        }
        if quanta > 0 {
            self.xoff += 1;
            let end = t_ps + u128::from(pause_quanta_to_ps(quanta, rate_bps));
            self.running = Some((t_ps, end));
            self.continuous_since.get_or_insert(t_ps);
        } else {
            self.xon += 1;
            self.end_continuous(t_ps);
        }
    }

    fn end_continuous(&mut self, at: u128) {
        if let Some(s) = self.continuous_since.take() {
            self.longest_ps = self.longest_ps.max(span(s, at));
        }
    }

    fn record(&mut self, s: u128, e: u128) {
        // A capture whose clock steps back ends a pause before it began:
        // keep it as an instant so intervals stay ordered pairs.
        let e = e.max(s);
        if let Some(iv) = &mut self.intervals {
            let ns = |t: u128| u64::try_from(t / 1000).unwrap_or(u64::MAX);
            iv.push(ns(s), ns(e));
        }
    }

    fn finish(&mut self) {
        if let Some((s, e)) = self.running.take() {
            self.paused_ps += span(s, e);
            self.record(s, e);
            self.end_continuous(e);
        }
    }
}

/// Pause state of one capture file.
#[derive(Debug, Clone, Default)]
pub(crate) struct PfcFile {
    /// (sender MAC, priority or [`PAUSE_8023X`]) -> state.
    pub prios: BTreeMap<([u8; 6], u8), PrioState>,
    pub mac_control_frames: u64,
    pub pfc_frames: u64,
    pub pause_frames: u64,
    rate_bps: u64,
    keep_intervals: bool,
}

impl PfcFile {
    pub fn new(rate_bps: u64, keep_intervals: bool) -> PfcFile {
        PfcFile {
            rate_bps,
            keep_intervals,
            ..PfcFile::default()
        }
    }

    pub fn frame(&mut self, ts_ns: u64, src: [u8; 6], ctl: &MacControlRepr, frame: u64) {
        self.mac_control_frames += 1;
        let t_ps = u128::from(ts_ns) * 1000;
        let keep = self.keep_intervals;
        let rate = self.rate_bps;
        let mut apply = |prio: u8, quanta: u16| {
            let st = self.prios.entry((src, prio)).or_insert_with(|| PrioState {
                intervals: keep.then(Intervals::default),
                ..PrioState::default()
            });
            st.frame(t_ps, quanta, rate, frame);
        };
        match *ctl {
            MacControlRepr::Pfc { .. } => {
                for prio in 0..8 {
                    if let Some(q) = ctl.pause_quanta(prio) {
                        apply(prio, q);
                    }
                }
                self.pfc_frames += 1;
            }
            MacControlRepr::Pause { time } => {
                apply(PAUSE_8023X, time);
                self.pause_frames += 1;
            }
            MacControlRepr::Unknown { .. } => {}
        }
    }

    pub fn finish(&mut self) {
        for st in self.prios.values_mut() {
            st.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;

    fn pfc(prio: u8, q: u16) -> MacControlRepr {
        let mut times = [0; 8];
        times[prio as usize] = q;
        MacControlRepr::Pfc {
            enable_vector: 1 << prio,
            times,
        }
    }

    #[test]
    fn replacement_xon_and_running_pause() {
        let mut f = PfcFile::new(G100, false);
        let m = [2, 0, 0, 0, 0, 1];
        // 1000 quanta = 5.12 us at 100G. Refreshed after 2 us, XON 3 us later.
        f.frame(10_000, m, &pfc(3, 1000), 1);
        f.frame(12_000, m, &pfc(3, 1000), 2);
        f.frame(15_000, m, &pfc(3, 0), 3);
        // Expires on its own: 5.12 us, then a separate pause of 5.12 us that
        // is still running when the capture ends.
        f.frame(100_000, m, &pfc(3, 1000), 4);
        f.frame(200_000, m, &pfc(3, 1000), 5);
        f.finish();
        let st = &f.prios[&(m, 3)];
        assert_eq!((st.xoff, st.xon), (4, 1));
        assert_eq!(st.paused_ps, 5_000_000 + 2 * 5_120_000);
        assert_eq!(st.longest_ps, 5_120_000);
        assert_eq!(f.pfc_frames, 5);
    }

    #[test]
    fn disabled_classes_are_ignored() {
        let mut f = PfcFile::new(G100, false);
        let ctl = MacControlRepr::Pfc {
            enable_vector: 0x08,
            times: [0xFFFF, 0, 0, 7, 0, 0, 0, 0],
        };
        f.frame(0, [0; 6], &ctl, 1);
        f.finish();
        assert_eq!(f.prios.len(), 1);
        assert_eq!(f.prios[&([0; 6], 3)].paused_ps, 7 * 5120);
    }

    #[test]
    fn a_clock_stepping_back_records_an_instant_not_a_reversed_interval() {
        let mut f = PfcFile::new(G100, true);
        let m = [2, 0, 0, 0, 0, 1];
        f.frame(50_000, m, &pfc(3, 1000), 1);
        f.frame(20_000, m, &pfc(3, 0), 2);
        f.finish();
        let st = &f.prios[&(m, 3)];
        assert_eq!(st.paused_ps, 0);
        assert_eq!(st.intervals.as_ref().unwrap().iv, vec![(50_000, 50_000)]);
    }
}
