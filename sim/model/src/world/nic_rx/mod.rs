//! A NIC's port receive buffers, for hosts that cannot always take what
//! the link brings (`[host.pfc]`): a slow receiver (`rx_rate`) or one that
//! stops draining (`stall_at`, a hung host). The NIC pauses its switch
//! port as a switch pauses its upstream.
//!
//! ```text
//!   link ─▶ Arrive ─▶ priority (the host's trust: PCP, or DSCP >> 3)
//!                       │ prio2buffer
//!                       ▼
//!            buffer 0 … buffer 7 (bytes each) ─▶ drained at rx_rate, in arrival order ─▶ the host (QPs, ARP)
//!                │ lossless (a PFC priority maps to it):
//!                │   over its XOFF threshold: PFC XOFF on its PFC priorities (refreshed)
//!                │   under its XON threshold: XON
//!                │ full: dropped, rx_discards_phy and rx_prio{N}_discards (lossy or not)
//!                │ over 85 % of its size: rx_buffer_passed_thres_phy
//!                └ XOFF without a break for stall_warning / stall_error:
//!                  tx_pause_storm_warning_events / _error_events; after the error
//!                  the NIC stops pausing (mlx5's stall prevention) and drops instead
//! ```
//!
//! Two layouts ([`RxLayout`]):
//!
//! * **ConnectX (mlx5)**: up to eight buffers, each a size, lossy or
//!   lossless, with XOFF and XON thresholds; `prio2buffer` maps each
//!   802.1p priority to one. This is the PBMC/PPTB register pair that
//!   `mlnx_qos --buffer_size --prio2buffer --cable_len` programs through
//!   the mlx5 driver (drivers/net/ethernet/mellanox/mlx5/core/en/
//!   port_buffer.c, en_dcbnl.c). The thresholds are the driver's own
//!   (`mlx5e_port_manual_buffer_config`, the host-owned algorithm):
//!   [`mlx5_xoff_bytes`] is the headroom a lossless buffer keeps above its
//!   XOFF threshold, from the cable length, the port speed and the MTU;
//!   XOFF at `size − xoff`, XON at that minus `max(max_mtu, 9216)`; a
//!   buffer is lossless iff a PFC-enabled priority maps to it (every one
//!   with 802.3x PAUSE); sizes and thresholds are whole 128-byte cells,
//!   rounded down. By default the firmware owns the buffers and its own
//!   (auto) algorithm is not public: rocesim always runs the driver's.
//! * **One FIFO** (`rx_buffer`, `xoff`, `xon`): every priority in one
//!   buffer with thresholds as given, pausing the NIC's PFC priorities:
//!   the older model, which the `rxe` and `hpcc` profiles keep by default.
//!
//! The host takes frames from the port in the order they arrived, whichever
//! buffer holds them, at `rx_rate` (one path to the host per port, the
//! PCIe link and the host's rings): how ConnectX arbitrates between its
//! buffers is not documented, and the simplest model is kept.

use std::collections::VecDeque;

use super::World;
use crate::engine::Event;
use crate::packet::PacketId;
use crate::time::{Ps, Rate};

mod layout;
pub use layout::*;

/// 802.1p priorities.
const PRIOS: usize = 8;

/// `rx_buffer_passed_thres_phy` counts a buffer passing this share of its
/// size (the kernel's mlx5 counters.rst: "the port receive buffer was over
/// 85% full").
const PASSED_THRES_PERCENT: u64 = 85;

/// The configuration of one NIC's receive buffers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RxConfig {
    /// How fast the host drains them; `None`: at line rate.
    pub rate: Option<Rate>,
    pub layout: RxLayout,
    /// The host stops draining from this time on.
    pub stall_at: Option<Ps>,
    pub stall_warning: Option<Ps>,
    pub stall_error: Option<Ps>,
}

/// One buffer's state.
#[derive(Debug, Clone, Copy, Default)]
struct BufState {
    bytes: u64,
    /// XOFF sent and not yet XON, since when.
    xoff_since: Option<Ps>,
    warned: bool,
    /// Above 85 % of its size.
    over_thres: bool,
}

pub struct RxBuffer {
    cfg: RxConfig,
    /// Frames in arrival order: id, bytes, buffer.
    queue: VecDeque<(PacketId, u32, u8)>,
    state: [BufState; BUFFERS],
    draining: bool,
    /// Stall prevention tripped: pauses no more.
    gave_up: bool,
    discards: u64,
    prio_discards: [u64; PRIOS],
    passed_thres: u64,
    warnings: u64,
    errors: u64,
}

/// `rx_prio{N}_discards`: frames of priority N the port dropped for lack
/// of receive buffer (mlx5 en_stats.c, PPCNT per-priority `rx_discards`,
/// commit 827a8cb2dd2b "Add discard counters per priority").
const PRIO_DISCARDS: [&str; PRIOS] = [
    "rx_prio0_discards",
    "rx_prio1_discards",
    "rx_prio2_discards",
    "rx_prio3_discards",
    "rx_prio4_discards",
    "rx_prio5_discards",
    "rx_prio6_discards",
    "rx_prio7_discards",
];

impl RxBuffer {
    pub fn new(cfg: RxConfig) -> RxBuffer {
        RxBuffer {
            cfg,
            queue: VecDeque::new(),
            state: [BufState::default(); BUFFERS],
            draining: false,
            gave_up: false,
            discards: 0,
            prio_discards: [0; PRIOS],
            passed_thres: 0,
            warnings: 0,
            errors: 0,
        }
    }

    /// `(name, value)` of its `ethtool -S` counters (mlx5 en_stats.c
    /// names): the port's discards, and with the ConnectX layout its
    /// discards per priority and its passes of 85 % fullness.
    pub fn counters(&self, mut f: impl FnMut(&'static str, u64)) {
        f("rx_discards_phy", self.discards);
        if self.cfg.layout.mlx5.is_some() {
            for (name, &n) in PRIO_DISCARDS.iter().zip(&self.prio_discards) {
                f(name, n);
            }
            f("rx_buffer_passed_thres_phy", self.passed_thres);
        }
        if self.cfg.stall_warning.is_some() || self.cfg.stall_error.is_some() {
            f("tx_pause_storm_warning_events", self.warnings);
            f("tx_pause_storm_error_events", self.errors);
        }
    }

    pub fn config(&self) -> &RxConfig {
        &self.cfg
    }

    /// Frames waiting in it.
    pub fn frames(&self) -> usize {
        self.queue.len()
    }

    /// Bytes waiting in buffer `b`.
    pub fn bytes(&self, b: usize) -> u64 {
        self.state[b].bytes
    }

    /// Time to take a frame of `wire` bytes of wire time
    /// ([`crate::packet::Packet::wire_bytes`]).
    fn drain_time(&self, wire: u64, line: Rate) -> Ps {
        self.cfg.rate.unwrap_or(line).tx_time(wire)
    }

    fn stalled(&self, now: Ps) -> bool {
        self.cfg.stall_at.is_some_and(|t| now >= t)
    }

    /// A frame of `len` bytes and priority `prio` arrives: into its
    /// buffer (returns which and whether it now crosses XOFF), or dropped
    /// (None).
    fn admit(&mut self, id: PacketId, len: u32, prio: u8) -> Option<(usize, bool)> {
        let b = self.cfg.layout.buffer_of(prio);
        let cfg = self.cfg.layout.buffers[b];
        let s = &mut self.state[b];
        if s.bytes + u64::from(len) > cfg.size {
            self.discards += 1;
            self.prio_discards[usize::from(prio & 7)] += 1;
            return None;
        }
        self.queue.push_back((id, len, b as u8));
        s.bytes += u64::from(len);
        if !s.over_thres && s.bytes * 100 > cfg.size * PASSED_THRES_PERCENT {
            s.over_thres = true;
            self.passed_thres += 1;
        }
        let xoff = cfg.lossless() && s.bytes >= cfg.xoff && s.xoff_since.is_none() && !self.gave_up;
        Some((b, xoff))
    }

    /// The oldest frame leaves: it, and the priorities its buffer now
    /// resumes (0: none).
    fn take(&mut self) -> Option<(PacketId, u8)> {
        let (id, len, b) = self.queue.pop_front()?;
        let cfg = self.cfg.layout.buffers[usize::from(b)];
        let s = &mut self.state[usize::from(b)];
        s.bytes -= u64::from(len);
        if s.over_thres && s.bytes * 100 <= cfg.size * PASSED_THRES_PERCENT {
            s.over_thres = false;
        }
        let xon = s.xoff_since.is_some() && s.bytes <= cfg.xon;
        if xon {
            s.xoff_since = None;
            return Some((id, cfg.pauses));
        }
        Some((id, 0))
    }
}

impl World {
    /// A frame for NIC `nic` of `host` arrived at its port: into the
    /// receive buffer of its priority, if the NIC has buffers (returns
    /// false if not).
    pub fn rx_buffer_enqueue(&mut self, port: u32, host: u32, nic: u32, id: PacketId) -> bool {
        let now = self.now();
        let line = self.ports[port as usize].rate();
        let pkt = self.pool.get(id);
        let (len, wire) = (u32::from(pkt.billed_len), pkt.wire_bytes());
        let h = &mut self.hosts[host as usize];
        let prio = h.trust.priority_of(pkt);
        let Some(rx) = h.nics[nic as usize].rx.as_deref_mut() else {
            return false;
        };
        let Some((b, xoff)) = rx.admit(id, len, prio) else {
            self.pool.free(id);
            return true;
        };
        if !rx.draining && !rx.stalled(now) {
            rx.draining = true;
            let t = now + rx.drain_time(wire, line);
            self.sched.at(t, Event::RxDrain { port });
        }
        if xoff {
            let s = &mut rx.state[b];
            s.xoff_since = Some(now);
            s.warned = false;
            for t in [rx.cfg.stall_warning, rx.cfg.stall_error]
                .into_iter()
                .flatten()
            {
                self.sched.at(now + t, Event::NicStall { port });
            }
            let prios = rx.cfg.layout.buffers[b].pauses;
            self.send_pause(port, prios, true);
        }
        true
    }

    /// The host takes the oldest frame of its NIC's receive buffers.
    #[inline(never)]
    pub fn rx_drain(&mut self, port: u32) {
        let now = self.now();
        let super::Owner::Host { host, nic } = self.ports[port as usize].owner() else {
            return;
        };
        let line = self.ports[port as usize].rate();
        let rx = self.hosts[host as usize].nics[nic as usize]
            .rx
            .as_deref_mut()
            .expect("RxDrain only for NICs with a receive buffer");
        if rx.stalled(now) {
            rx.draining = false;
            return;
        }
        let Some((id, resume)) = rx.take() else {
            rx.draining = false;
            return;
        };
        match rx.queue.front() {
            Some(&(next, _, _)) => {
                let t = now + rx.drain_time(self.pool.get(next).wire_bytes(), line);
                self.sched.at(t, Event::RxDrain { port });
            }
            None => rx.draining = false,
        }
        if resume != 0 {
            self.send_pause(port, resume, false);
        }
        self.host_deliver(port, host, nic, id);
    }

    /// The NIC's stall detection looks at how long each buffer has been
    /// pausing: a warning per buffer paused for `stall_warning` without a
    /// break; after `stall_error` the port stops pausing altogether
    /// (mlx5's stall prevention is the device's, not a buffer's) and
    /// resumes every priority it holds.
    #[inline(never)]
    pub fn nic_stall(&mut self, port: u32) {
        let now = self.now();
        let super::Owner::Host { host, nic } = self.ports[port as usize].owner() else {
            return;
        };
        let Some(rx) = self.hosts[host as usize].nics[nic as usize]
            .rx
            .as_deref_mut()
        else {
            return;
        };
        let mut error = false;
        for s in &mut rx.state {
            let Some(since) = s.xoff_since else { continue };
            if rx.cfg.stall_warning.is_some_and(|w| since + w == now) && !s.warned {
                s.warned = true;
                rx.warnings += 1;
            }
            error |= rx.cfg.stall_error.is_some_and(|e| since + e == now);
        }
        if !error {
            return;
        }
        rx.errors += 1;
        rx.gave_up = true;
        let mut resume = 0u8;
        for (s, b) in rx.state.iter_mut().zip(&rx.cfg.layout.buffers) {
            if s.xoff_since.take().is_some() {
                resume |= b.pauses;
            }
        }
        self.send_pause(port, resume, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::layout::observed;

    fn id(n: u32) -> PacketId {
        PacketId::from_index(n)
    }

    #[test]
    fn a_lossless_buffer_pauses_and_resumes_a_lossy_one_drops() {
        let l = RxLayout::mlx5(&observed()).unwrap();
        let mut rx = RxBuffer::new(RxConfig {
            rate: None,
            layout: l,
            stall_at: None,
            stall_warning: None,
            stall_error: None,
        });
        // 1,000-byte frames of priority 3: the 96th takes buffer 1 to
        // 96,000 ≥ 95,232, XOFF; those before it do not.
        for n in 1..=95 {
            assert_eq!(rx.admit(id(n), 1000, 3), Some((1, false)), "frame {n}");
        }
        assert_eq!(rx.admit(id(96), 1000, 3), Some((1, true)));
        rx.state[1].xoff_since = Some(Ps(1));
        // No second XOFF while paused; 85 % of 130,944 is 111,302.4: the
        // 112th frame passes it, once.
        for n in 97..=130 {
            assert_eq!(rx.admit(id(n), 1000, 3), Some((1, false)));
        }
        assert_eq!(rx.passed_thres, 1);
        // 130,000 + 1,000 > 130,944: dropped, lossless or not.
        assert_eq!(rx.admit(id(131), 1000, 3), None);
        assert_eq!((rx.discards, rx.prio_discards[3]), (1, 1));
        // Priority 0 goes to buffer 0: never a pause, drops when full.
        for n in 0..130 {
            assert_eq!(rx.admit(id(200 + n), 1000, 0), Some((0, false)));
        }
        assert_eq!(rx.admit(id(400), 1000, 5), None);
        assert_eq!(rx.prio_discards[5], 1);
        assert_eq!(rx.passed_thres, 2);
        // Draining in arrival order: buffer 1 resumes once at 86,016 or
        // less, i.e. after 44 of its 130 frames leave (86,000).
        for n in 1..=43 {
            assert_eq!(rx.take(), Some((id(n), 0)));
        }
        assert_eq!(rx.take(), Some((id(44), 1 << 3)));
        assert_eq!(rx.state[1].xoff_since, None);
        assert_eq!(rx.bytes(1), 86_000);
        let mut seen = std::collections::BTreeMap::new();
        rx.counters(|k, v| {
            seen.insert(k, v);
        });
        assert_eq!(seen["rx_discards_phy"], 2);
        assert_eq!(seen["rx_prio3_discards"], 1);
        assert_eq!(seen["rx_prio5_discards"], 1);
        assert_eq!(seen["rx_prio0_discards"], 0);
        assert_eq!(seen["rx_buffer_passed_thres_phy"], 2);
        assert!(!seen.contains_key("tx_pause_storm_warning_events"));
    }

    #[test]
    fn one_fifo_keeps_its_counters_and_thresholds() {
        let mut rx = RxBuffer::new(RxConfig {
            rate: None,
            layout: RxLayout::single(4000, 2000, 1000, 1 << 3),
            stall_at: None,
            stall_warning: None,
            stall_error: None,
        });
        // Every priority into the one buffer; XOFF at 2000 bytes.
        assert_eq!(rx.admit(id(1), 1000, 0), Some((0, false)));
        assert_eq!(rx.admit(id(2), 1000, 5), Some((0, true)));
        rx.state[0].xoff_since = Some(Ps(1));
        assert_eq!(rx.admit(id(3), 1000, 3), Some((0, false)));
        assert_eq!(rx.admit(id(4), 1000, 3), Some((0, false)));
        assert_eq!(rx.admit(id(5), 1, 3), None);
        assert_eq!(rx.take(), Some((id(1), 0)));
        assert_eq!(rx.take(), Some((id(2), 0)));
        assert_eq!(rx.take(), Some((id(3), 1 << 3)));
        let mut seen = Vec::new();
        rx.counters(|k, v| seen.push((k, v)));
        assert_eq!(seen, [("rx_discards_phy", 1)]);
    }
}
