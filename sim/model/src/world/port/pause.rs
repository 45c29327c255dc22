//! A port's pauses, both directions: how it sends them ([`PauseConfig`],
//! with the PFC watchdog's [`Watchdog`]), which it obeys and how soon
//! ([`PauseRx`]), and what it was told and told its peer ([`PauseState`]:
//! the state, the pending frames, the counters).
//!
//! The [`Port`](super::Port) holds its `PauseState`; what changes it (PFC
//! and PAUSE frames sent, refreshed and honoured, the watchdog) is
//! `world::pfc`, which reads and writes the state's fields.

use std::collections::VecDeque;

use roce_codec::wire::mac_control::MacControlRepr;

use super::PRIOS;
use crate::time::{Ps, Rate};

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

/// Which received pauses a port obeys, and how long after a pause frame's
/// last bit it takes effect.
///
/// * Obeying: a PFC frame is obeyed only for the priorities PFC is
///   enabled on at this port, an 802.3x PAUSE only if 802.3x is on; the
///   rest are counted (`rx_prioN_pause`, `rx_global_pause`) and ignored.
///   mlx5 writes the one `pfc_en` bitmap to both the PFCC register's
///   `pfctx` (send) and `pfcrx` (obey) fields (drivers/net/ethernet/
///   mellanox/mlx5/core/en_dcbnl.c `mlx5e_dcbnl_ieee_setpfc` →
///   port.c `mlx5_set_port_pfc`), and reads its per-priority received
///   counts whatever that bitmap says (`mlx5e_dcbnl_ieee_getpfc`'s
///   `indications[i]` from the port counters).
/// * Delay: the receiving MAC/PHY's latency (`interface_bits`, IEEE
///   802.3's interface delay budget) plus its pause reaction
///   (`response_bits`, 802.3 Annex 31B.3.7's per-speed bound), both in
///   bit times of the port's speed. Frames that started before then
///   finish; the pause timer starts then. 0 for the HPCC reference,
///   which stops a queue the moment the frame is received
///   (qbb-net-device.cc `QbbNetDevice::Receive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseRx {
    /// Bit `p` set: PFC is enabled on priority `p` (obeyed).
    pub pfc: u8,
    /// 802.3x PAUSE is obeyed.
    pub global: bool,
    pub interface_bits: u64,
    pub response_bits: u64,
    /// `interface_bits + response_bits` at the port's speed, rounded up.
    pub delay: Ps,
}

impl PauseRx {
    /// What a port nobody configured does, the HPCC reference's: every
    /// pause obeyed, at once.
    pub const OBEY_ALL_AT_ONCE: PauseRx = PauseRx {
        pfc: 0xff,
        global: true,
        interface_bits: 0,
        response_bits: 0,
        delay: Ps::ZERO,
    };

    /// Obeys PFC on the priorities of `pfc`, or 802.3x if `global`, after
    /// `interface_bits + response_bits` bit times at `rate`.
    pub fn new(
        pfc: u8,
        global: bool,
        interface_bits: u64,
        response_bits: u64,
        rate: Rate,
    ) -> PauseRx {
        PauseRx {
            pfc,
            global,
            interface_bits,
            response_bits,
            delay: bits_to_ps(interface_bits.saturating_add(response_bits), rate),
        }
    }

    /// The same reaction, obeying other pauses.
    pub fn obeying(self, pfc: u8, global: bool) -> PauseRx {
        PauseRx {
            pfc,
            global,
            ..self
        }
    }

    /// Bit times from a pause frame's last bit to its effect.
    pub fn reaction_bits(&self) -> u64 {
        self.interface_bits.saturating_add(self.response_bits)
    }
}

impl Default for PauseRx {
    fn default() -> PauseRx {
        PauseRx::OBEY_ALL_AT_ONCE
    }
}

/// `bits` bit times at `rate`, rounded up to a whole picosecond (100G: 10
/// ps a bit).
pub fn bits_to_ps(bits: u64, rate: Rate) -> Ps {
    if rate.bps() == 0 {
        return Ps::ZERO;
    }
    let ps = (u128::from(bits) * 1_000_000_000_000).div_ceil(u128::from(rate.bps()));
    Ps(ps.min(u128::from(u64::MAX)) as u64)
}

/// Index of the 802.3x (global) counters beside the eight priorities.
pub const GLOBAL: usize = PRIOS;

/// One port's pause state and counters, both directions. Durations in
/// picoseconds; the counters report microseconds.
#[derive(Debug, Clone, Default)]
pub struct PauseState {
    pub(in crate::world) cfg: Option<PauseConfig>,
    // ----- received: this port is told to stop -----
    pub(in crate::world) rx: PauseRx,
    /// Obeyed frames that arrived and take effect later, in arrival
    /// order (one `PauseEffect` event each): when, and the frame.
    pub(in crate::world) rx_pending: VecDeque<(Ps, MacControlRepr)>,
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
    /// How it sends pauses, if it does.
    pub fn config(&self) -> Option<&PauseConfig> {
        self.cfg.as_ref()
    }
    /// Which received pauses it obeys, and how soon.
    pub fn set_rx(&mut self, rx: PauseRx) {
        self.rx = rx;
    }
    pub fn rx(&self) -> &PauseRx {
        &self.rx
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
