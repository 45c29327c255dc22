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

/// Network receive buffers per port (`MLX5E_MAX_NETWORK_BUFFER`,
/// port_buffer.h; two more are the NIC's internal ones).
pub const BUFFERS: usize = 8;
/// 802.1p priorities.
const PRIOS: usize = 8;
/// The unit of every buffer size and threshold (`MLX5E_BUFFER_CELL_SHIFT`
/// 7, port_buffer.h; newer NICs may report another `cap_cell_size` in the
/// SBCAM register, which is not modelled).
pub const CELL_BYTES: u64 = 128;
/// The driver's floor for the largest MTU a lossless buffer must hold
/// between its XOFF and XON thresholds (`MINIMUM_MAX_MTU`, port_buffer.c).
pub const MINIMUM_MAX_MTU: u32 = 9216;
/// The cable length the driver assumes until told (`MLX5E_DEFAULT_CABLE_LEN`,
/// port_buffer.h), in metres.
pub const DEFAULT_CABLE_LEN_M: u32 = 7;
/// The longest cable mlx5 accepts: lengths of 1000 m and more are ignored
/// (`MLX5E_MAX_CABLE_LENGTH` 1000, en_dcbnl.c `mlx5e_dcbnl_ieee_setpfc`).
pub const MAX_CABLE_LEN_M: u32 = 999;
/// `rx_buffer_passed_thres_phy` counts a buffer passing this share of its
/// size (the kernel's mlx5 counters.rst: "the port receive buffer was over
/// 85% full").
const PASSED_THRES_PERCENT: u64 = 85;

/// The headroom (bytes above the XOFF threshold) the mlx5 driver keeps in a
/// lossless buffer: port_buffer.c `calculate_xoff`, in its integer
/// arithmetic, `(301 + 216 × cable_len / 100) × speed / 1000 + 272 × mtu /
/// 100`, with the speed in Mb/s and at least 40,000 (40G is also what the
/// driver uses when it cannot read the speed), `mtu` the netdev's (L3)
/// MTU. Commit 0696d60853d5 writes it
/// `(301 + 2.16 × len[m]) × speed[Gb/s] + 2.72 × MTU[B]`. The driver
/// computes in 32 bits; these 64 give the same result for every speed up
/// to 1.6 Tb/s.
///
/// 100 Gb/s, 7 m, MTU 1500: `(301 + 15) × 100 + 4080` = 35,680 bytes.
pub fn mlx5_xoff_bytes(cable_len_m: u32, speed: Rate, mtu: u32) -> u64 {
    let mbps = (speed.bps() / 1_000_000).max(40_000);
    (301 + 216 * u64::from(cable_len_m) / 100) * mbps / 1000 + 272 * u64::from(mtu) / 100
}

/// `bytes` rounded down to whole cells, as the driver writes sizes and
/// thresholds to the PBMC register (port_buffer.c `port_set_buffer`).
fn cells(bytes: u64) -> u64 {
    bytes / CELL_BYTES * CELL_BYTES
}

/// One receive buffer as the NIC runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BufferCfg {
    /// Bytes it holds before it drops.
    pub size: u64,
    /// XOFF when it holds this many bytes (0 on a lossy buffer).
    pub xoff: u64,
    /// XON when a paused buffer is down to this many (0 on a lossy one).
    pub xon: u64,
    /// The priorities mapped to it.
    pub prios: u8,
    /// The priorities it pauses at XOFF: its PFC-enabled ones. None: it
    /// is lossy.
    pub pauses: u8,
}

impl BufferCfg {
    pub fn lossless(&self) -> bool {
        self.pauses != 0
    }
}

/// What the mlx5 driver was told (`mlnx_qos`, `dcb buffer`, `dcb pfc`) and
/// read from the port, from which it lays out the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mlx5Request {
    /// Bytes per buffer (`--buffer_size`), before rounding to cells.
    pub buffer_size: [u64; BUFFERS],
    /// Priority → buffer (`--prio2buffer`).
    pub prio2buffer: [u8; PRIOS],
    /// The PFC-enabled priorities (`--pfc`); every one with 802.3x PAUSE
    /// (port_buffer.c `fill_pfc_en`).
    pub pfc_en: u8,
    /// Metres (`--cable_len`).
    pub cable_len_m: u32,
    /// The port's speed.
    pub speed: Rate,
    /// The netdev's MTU.
    pub mtu: u32,
    /// The netdev's `max_mtu`: the driver uses at least [`MINIMUM_MAX_MTU`].
    pub max_mtu: u32,
    /// What the buffers may take together (`mlnx_qos` prints it as
    /// `max_buffer_size`: the port buffer less the internal buffers).
    pub max_buffer_size: u64,
}

/// The driver's layout of the buffers, and what it was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mlx5Layout {
    pub request: Mlx5Request,
    /// [`mlx5_xoff_bytes`] for the request.
    pub xoff_bytes: u64,
    /// `max(max_mtu, 9216)`: XOFF − XON of a lossless buffer.
    pub max_mtu: u32,
}

/// A request the driver refuses: the key it comes from (`buffer_size`,
/// `prio2buffer`, `cable_len`), the index in it, what is wrong and what
/// would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError {
    pub key: &'static str,
    pub index: Option<usize>,
    pub problem: String,
    pub hint: String,
}

/// How a NIC's receive buffers are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxLayout {
    /// Buffer 0 only for the one-FIFO layout.
    pub buffers: [BufferCfg; BUFFERS],
    pub prio2buffer: [u8; PRIOS],
    /// The driver's layout; None: one FIFO with given thresholds.
    pub mlx5: Option<Mlx5Layout>,
}

impl RxLayout {
    /// Every priority in one buffer of `capacity` bytes that pauses the
    /// priorities of `pauses` at `xoff` bytes and resumes at `xon`.
    pub fn single(capacity: u64, xoff: u64, xon: u64, pauses: u8) -> RxLayout {
        let mut buffers = [BufferCfg::default(); BUFFERS];
        buffers[0] = BufferCfg {
            size: capacity,
            xoff,
            xon,
            prios: 0xff,
            pauses,
        };
        RxLayout {
            buffers,
            prio2buffer: [0; PRIOS],
            mlx5: None,
        }
    }

    /// The mlx5 driver's host-owned layout (port_buffer.c
    /// `mlx5e_port_manual_buffer_config` with `update_buffer_lossy` and
    /// `update_xoff_threshold`), refusing what the driver refuses.
    pub fn mlx5(r: &Mlx5Request) -> Result<RxLayout, LayoutError> {
        if let Some(p) = r
            .prio2buffer
            .iter()
            .position(|&b| usize::from(b) >= BUFFERS)
        {
            return Err(LayoutError {
                key: "prio2buffer",
                index: Some(p),
                problem: format!(
                    "priority {p} maps to buffer {}, and a port has buffers 0..=7",
                    r.prio2buffer[p]
                ),
                hint: "one buffer index 0..=7 per priority, as mlnx_qos --prio2buffer takes them"
                    .into(),
            });
        }
        if !(1..=MAX_CABLE_LEN_M).contains(&r.cable_len_m) {
            return Err(LayoutError {
                key: "cable_len",
                index: None,
                problem: format!(
                    "{} m: mlx5 takes 1 to {MAX_CABLE_LEN_M} m (it ignores 0 and 1000 or more)",
                    r.cable_len_m
                ),
                hint: format!("the driver assumes {DEFAULT_CABLE_LEN_M} m until told"),
            });
        }
        let total: u64 = r.buffer_size.iter().sum();
        if total > r.max_buffer_size {
            return Err(LayoutError {
                key: "buffer_size",
                index: None,
                problem: format!(
                    "the buffers take {total} bytes together, more than the port's {} (max_buffer_size): the driver refuses it (-EINVAL)",
                    r.max_buffer_size
                ),
                hint: "shrink a lossy buffer to make room, or raise max_buffer_size for a NIC with more".into(),
            });
        }
        let xoff = mlx5_xoff_bytes(r.cable_len_m, r.speed, r.mtu);
        let max_mtu = r.max_mtu.max(MINIMUM_MAX_MTU);
        let need = xoff + u64::from(max_mtu) + CELL_BYTES;
        let mut buffers = [BufferCfg::default(); BUFFERS];
        for (i, b) in buffers.iter_mut().enumerate() {
            for p in 0..PRIOS {
                if usize::from(r.prio2buffer[p]) == i {
                    b.prios |= 1 << p;
                }
            }
            b.pauses = b.prios & r.pfc_en;
            let size = r.buffer_size[i];
            b.size = cells(size);
            if !b.lossless() {
                continue; // lossy: xon = xoff = 0
            }
            let prios = list(b.pauses);
            if size == 0 {
                return Err(LayoutError {
                    key: "buffer_size",
                    index: Some(i),
                    problem: format!(
                        "buffer {i} holds PFC priorities {prios} (lossless) and has 0 bytes: the driver refuses a lossless buffer of size 0 (-EINVAL)"
                    ),
                    hint: format!(
                        "give it at least {need} bytes, or map those priorities to another buffer"
                    ),
                });
            }
            if size < need {
                return Err(LayoutError {
                    key: "buffer_size",
                    index: Some(i),
                    problem: format!(
                        "buffer {i} ({size} bytes) holds PFC priorities {prios} and is not enough for a lossless buffer: \
                         the mlx5 driver wants xoff {xoff} + max_mtu {max_mtu} + one {CELL_BYTES}-byte cell = {need} bytes \
                         (port_buffer.c update_xoff_threshold, -ENOMEM)"
                    ),
                    hint: format!(
                        "xoff = (301 + 2.16 x {} m) x {} Gb/s + 2.72 x MTU {}: raise buffer_size[{i}] to {need} or more, or shorten cable_len",
                        r.cable_len_m,
                        (r.speed.bps() / 1_000_000).max(40_000) / 1000,
                        r.mtu
                    ),
                });
            }
            b.xoff = cells(size - xoff);
            b.xon = cells(size - xoff - u64::from(max_mtu));
        }
        Ok(RxLayout {
            buffers,
            prio2buffer: r.prio2buffer,
            mlx5: Some(Mlx5Layout {
                request: *r,
                xoff_bytes: xoff,
                max_mtu,
            }),
        })
    }

    /// The buffer priority `prio` goes to.
    #[inline]
    pub fn buffer_of(&self, prio: u8) -> usize {
        usize::from(self.prio2buffer[usize::from(prio & 7)])
    }
}

/// The priorities of `mask` as `[3]` or `[3, 4]`.
fn list(mask: u8) -> String {
    let v: Vec<u8> = (0..8).filter(|p| mask & 1 << p != 0).collect();
    format!("{v:?}")
}

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

    /// The request `mlnx_qos` makes of a 100G port by default: buffers 0
    /// and 1 of 130,944 bytes, priority 3 (PFC) in buffer 1.
    fn observed() -> Mlx5Request {
        Mlx5Request {
            buffer_size: [130_944, 130_944, 0, 0, 0, 0, 0, 0],
            prio2buffer: [0, 0, 0, 1, 0, 0, 0, 0],
            pfc_en: 1 << 3,
            cable_len_m: 7,
            speed: Rate::gbps(100),
            mtu: 1500,
            max_mtu: 9216,
            max_buffer_size: 262_016,
        }
    }

    #[test]
    fn xoff_is_the_drivers_integer_formula() {
        // (301 + 216 × 7 / 100) = 301 + 15 (1512 / 100 truncated) = 316;
        // × 100,000 Mb/s / 1000 = 31,600; + 272 × 1500 / 100 = 4,080.
        assert_eq!(mlx5_xoff_bytes(7, Rate::gbps(100), 1500), 35_680);
        // 100 m: 301 + 216 = 517 → 51,700 + 4,080 (lossless-facts §1.5).
        assert_eq!(mlx5_xoff_bytes(100, Rate::gbps(100), 1500), 55_780);
        // 4200-byte MTU, 5 m: 301 + 10 = 311 → 31,100 + 11,424 = 42,524.
        assert_eq!(mlx5_xoff_bytes(5, Rate::gbps(100), 4200), 42_524);
        // 25G counts as 40G: 316 × 40 + 4,080 = 16,720.
        assert_eq!(mlx5_xoff_bytes(7, Rate::gbps(25), 1500), 16_720);
        // 400G, 999 m: 216 × 999 / 100 = 2157 → 2458 × 400 = 983,200,
        // + 272 × 9000 / 100 = 24,480.
        assert_eq!(mlx5_xoff_bytes(999, Rate::gbps(400), 9000), 1_007_680);
    }

    #[test]
    fn the_facts_files_worked_example() {
        // Size 130,944 (1023 cells), 7 m, 100G, MTU 1500: xoff 35,680;
        // the driver's XOFF threshold 130,944 − 35,680 = 95,264 and XON
        // 95,264 − 9,216 = 86,048, written to the register in whole
        // cells: 744 (95,232 B) and 672 (86,016 B).
        let l = RxLayout::mlx5(&observed()).unwrap();
        let m = l.mlx5.unwrap();
        assert_eq!((m.xoff_bytes, m.max_mtu), (35_680, 9216));
        let b1 = l.buffers[1];
        assert_eq!(
            (b1.size, b1.xoff, b1.xon, b1.prios, b1.pauses),
            (130_944, 95_232, 86_016, 1 << 3, 1 << 3)
        );
        // Buffer 0 holds the other seven priorities and is lossy.
        let b0 = l.buffers[0];
        assert_eq!((b0.size, b0.xoff, b0.xon, b0.prios), (130_944, 0, 0, 0xf7));
        assert!(!b0.lossless() && b1.lossless());
        // A netdev max_mtu of 9978: XON 95,264 − 9,978 = 85,286 → 666
        // cells, 85,248 B.
        let l = RxLayout::mlx5(&Mlx5Request {
            max_mtu: 9978,
            ..observed()
        })
        .unwrap();
        assert_eq!(l.buffers[1].xon, 85_248);
        // A smaller max_mtu is raised to the driver's 9216.
        let l = RxLayout::mlx5(&Mlx5Request {
            max_mtu: 1500,
            ..observed()
        })
        .unwrap();
        assert_eq!(l.buffers[1].xon, 86_016);
    }

    #[test]
    fn sizes_round_down_to_cells_after_the_check() {
        // 30,000 → 234 cells, 29,952 B (community DOC-2933's example), on
        // a lossy buffer.
        let mut r = observed();
        r.buffer_size[2] = 30_000;
        r.buffer_size[0] = 100_000;
        let l = RxLayout::mlx5(&r).unwrap();
        assert_eq!(l.buffers[2].size, 29_952);
        assert_eq!(l.buffers[0].size, 99_968);
        // A lossless 100,000: the check is on the bytes asked for; the
        // thresholds from them, each rounded down: 64,320 → 502 cells
        // (64,256), 55,104 → 430 cells (55,040).
        let mut r = observed();
        r.buffer_size = [100_000, 100_000, 0, 0, 0, 0, 0, 0];
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        assert_eq!((b.size, b.xoff, b.xon), (99_968, 64_256, 55_040));
    }

    #[test]
    fn the_driver_refuses_a_lossless_buffer_below_xoff_max_mtu_and_a_cell() {
        // 35,680 + 9,216 + 128 = 45,024 bytes is the least.
        let mut r = observed();
        r.buffer_size[1] = 45_024;
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        // 9,344 − 0 → 73 cells; XON 128 → one cell.
        assert_eq!((b.xoff, b.xon), (9_344, 128));
        r.buffer_size[1] = 45_023;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert_eq!((e.key, e.index), ("buffer_size", Some(1)));
        assert!(e.problem.contains("45024 bytes"), "{}", e.problem);
        assert!(e.problem.contains("update_xoff_threshold"));
        // The same buffer lossy (no PFC priority in it) is fine.
        r.pfc_en = 0;
        let l = RxLayout::mlx5(&r).unwrap();
        assert!(!l.buffers[1].lossless());
        // A lossless buffer of 0 bytes.
        let mut r = observed();
        r.buffer_size[1] = 0;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert!(e.problem.contains("size 0"), "{}", e.problem);
        // 400G: 316 × 400 + 4,080 = 130,480 of headroom: the observed
        // 130,944 cannot hold it and a 9216-byte frame.
        let r = Mlx5Request {
            speed: Rate::gbps(400),
            ..observed()
        };
        assert!(RxLayout::mlx5(&r).unwrap_err().problem.contains("139824"));
    }

    #[test]
    fn bad_indexes_lengths_and_totals() {
        let mut r = observed();
        r.prio2buffer[5] = 8;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert_eq!((e.key, e.index), ("prio2buffer", Some(5)));
        for len in [0, 1000] {
            let r = Mlx5Request {
                cable_len_m: len,
                ..observed()
            };
            assert_eq!(RxLayout::mlx5(&r).unwrap_err().key, "cable_len");
        }
        // 999 m at 100G: (301 + 2157) × 100 + 4,080 = 249,880 bytes of
        // headroom, which the whole port (262,016) can give one buffer.
        let r = Mlx5Request {
            cable_len_m: 999,
            buffer_size: [0, 262_016, 0, 0, 0, 0, 0, 0],
            ..observed()
        };
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        assert_eq!(b.xoff, cells(262_016 - 249_880));
        let mut r = observed();
        r.buffer_size[2] = 129;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert_eq!((e.key, e.index), ("buffer_size", None));
        assert!(e.problem.contains("262017"), "{}", e.problem);
    }

    #[test]
    fn every_pfc_priority_makes_its_buffer_lossless() {
        // 802.3x PAUSE: pfc_en 0xff, every buffer with a priority is
        // lossless; buffer 1, with none mapped, stays lossy.
        let r = Mlx5Request {
            prio2buffer: [0; 8],
            pfc_en: 0xff,
            ..observed()
        };
        let l = RxLayout::mlx5(&r).unwrap();
        assert_eq!(l.buffers[0].pauses, 0xff);
        assert!(!l.buffers[1].lossless());
        // Priorities 3 and 4 in buffer 1, PFC on 3 only: lossless, pauses 3.
        let mut r = observed();
        r.prio2buffer[4] = 1;
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        assert_eq!((b.prios, b.pauses), (0x18, 0x08));
    }

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
