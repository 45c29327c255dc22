//! A port's pauses, both directions: how it sends them ([`PauseConfig`],
//! with the PFC watchdog's [`Watchdog`]) and what it was told and told its
//! peer ([`PauseState`]: the state, the pending frame, the counters).
//!
//! The [`Port`](super::Port) holds its `PauseState`; what changes it (PFC
//! and PAUSE frames sent, refreshed and honoured, the watchdog) is
//! `world::pfc`, which reads and writes the state's fields.

use super::PRIOS;
use crate::time::Ps;

/// What the watchdog does to a queue in a storm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchdogAction {
    Drop,
    Forward,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watchdog {
    pub detect: Ps,
    pub restore: Ps,
    pub action: WatchdogAction,
}

/// How a port sends pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseConfig {
    /// The source MAC of its PAUSE frames.
    pub mac: [u8; 6],
    /// The time an XOFF asks for, in quanta of 512 bit times.
    pub quanta: u16,
    /// 802.3x PAUSE (every priority) instead of PFC.
    pub global: bool,
    pub watchdog: Option<Watchdog>,
}

/// Index of the 802.3x (global) counters beside the eight priorities.
pub const GLOBAL: usize = PRIOS;

/// One port's pause state and counters, both directions. Durations in
/// picoseconds; the counters report microseconds.
#[derive(Debug, Clone, Default)]
pub struct PauseState {
    pub(in crate::world) cfg: Option<PauseConfig>,
    // ----- received: this port is told to stop -----
    pub(in crate::world) until: [Ps; PRIOS + 1],
    pub(in crate::world) since: [Option<Ps>; PRIOS + 1],
    pub(in crate::world) rx_frames: [u64; PRIOS + 1],
    pub(in crate::world) rx_duration: [Ps; PRIOS + 1],
    pub(in crate::world) rx_transitions: [u64; PRIOS + 1],
    pub(in crate::world) last_rx: [Ps; PRIOS],
    // ----- sent: this port tells its peer to stop -----
    /// Priorities this port wants stopped now.
    pub(in crate::world) want: u8,
    /// A frame to send: priorities whose state changed or refresh.
    pub(in crate::world) pending: u8,
    pub(in crate::world) refresh_armed: u8,
    pub(in crate::world) tx_frames: [u64; PRIOS + 1],
    pub(in crate::world) tx_since: [Option<Ps>; PRIOS + 1],
    pub(in crate::world) tx_duration: [Ps; PRIOS + 1],
    // ----- watchdog -----
    pub(in crate::world) storm: u8,
    pub(in crate::world) wd_detected: [u64; PRIOS],
    pub(in crate::world) wd_restored: [u64; PRIOS],
    pub(in crate::world) wd_dropped: [u64; PRIOS],
}

/// The pause counters of one port, under their `ethtool -S` names.
pub struct PauseCounters<'a> {
    s: &'a PauseState,
    now: Ps,
}

impl PauseCounters<'_> {
    /// `(name, value)` of every counter the port has, PFC priorities that
    /// saw any pause, then 802.3x, then the watchdog's.
    pub fn each(&self, mut f: impl FnMut(String, u64)) {
        let s = self.s;
        let open = |since: Option<Ps>| since.map_or(0, |t| self.now.0.saturating_sub(t.0));
        for i in 0..=PRIOS {
            let name = if i == GLOBAL {
                "global".to_string()
            } else {
                format!("prio{i}")
            };
            let rx_us = (s.rx_duration[i].0 + open(s.since[i])) / 1_000_000;
            let tx_us = (s.tx_duration[i].0 + open(s.tx_since[i])) / 1_000_000;
            f(format!("rx_{name}_pause"), s.rx_frames[i]);
            f(format!("rx_{name}_pause_duration"), rx_us);
            f(format!("rx_{name}_pause_transition"), s.rx_transitions[i]);
            f(format!("tx_{name}_pause"), s.tx_frames[i]);
            f(format!("tx_{name}_pause_duration"), tx_us);
        }
        f("rx_pause_ctrl_phy".into(), s.rx_frames.iter().sum());
        f("tx_pause_ctrl_phy".into(), s.tx_frames.iter().sum());
        if s.cfg.is_some_and(|c| c.watchdog.is_some()) {
            for p in 0..PRIOS {
                f(format!("pfc_wd_prio{p}_storm_detected"), s.wd_detected[p]);
                f(format!("pfc_wd_prio{p}_storm_restored"), s.wd_restored[p]);
                f(format!("pfc_wd_prio{p}_tx_dropped"), s.wd_dropped[p]);
            }
        }
    }
}

impl PauseState {
    pub fn configure(&mut self, cfg: PauseConfig) {
        self.cfg = Some(cfg);
    }
    pub fn configured(&self) -> bool {
        self.cfg.is_some()
    }
    /// A PAUSE/PFC frame waits for the port's wire.
    #[inline]
    pub fn has_pending(&self) -> bool {
        self.pending != 0
    }
    pub fn counters(&self, now: Ps) -> PauseCounters<'_> {
        PauseCounters { s: self, now }
    }
    pub fn count_wd_drop(&mut self, prio: usize) {
        self.wd_dropped[prio] += 1;
    }
    /// Whether this port wants priority `prio` stopped at its peer.
    pub fn wants(&self, prio: usize) -> bool {
        self.want & 1 << prio != 0
    }
}
