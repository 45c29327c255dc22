//! A NIC's receive buffer, for hosts that cannot take what the link
//! brings (`[host.pfc]`): a slow receiver (`rx_rate`) or one that stops
//! draining (`stall_at`, a hung host). The NIC pauses its switch port as a
//! switch pauses its upstream.
//!
//! ```text
//!   link ─▶ Arrive ─▶ rx buffer (bytes) ─▶ drained at rx_rate ─▶ the host takes it (QPs, ARP)
//!                        │ over xoff: PFC XOFF on its lossless priorities (refreshed)
//!                        │ under xon: XON
//!                        │ full: dropped, rx_discards_phy
//!                        └ XOFF without a break for stall_warning / stall_error:
//!                          tx_pause_storm_warning_events / _error_events; after the error
//!                          the NIC stops pausing (mlx5's stall prevention) and drops instead
//! ```

use std::collections::VecDeque;

use super::World;
use crate::engine::Event;
use crate::packet::PacketId;
use crate::time::{Ps, Rate};

/// The configuration of one NIC's receive buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RxConfig {
    /// How fast the host drains it; `None`: at line rate.
    pub rate: Option<Rate>,
    pub capacity: u64,
    pub xoff: u64,
    pub xon: u64,
    /// The host stops draining from this time on.
    pub stall_at: Option<Ps>,
    /// Bit per lossless priority the NIC pauses.
    pub prios: u8,
    pub stall_warning: Option<Ps>,
    pub stall_error: Option<Ps>,
}

pub struct RxBuffer {
    cfg: RxConfig,
    queue: VecDeque<(PacketId, u32)>,
    bytes: u64,
    draining: bool,
    /// XOFF sent and not yet XON, since when.
    xoff_since: Option<Ps>,
    warned: bool,
    /// Stall prevention tripped: pauses no more.
    gave_up: bool,
    discards: u64,
    warnings: u64,
    errors: u64,
}

impl RxBuffer {
    pub fn new(cfg: RxConfig) -> RxBuffer {
        RxBuffer {
            cfg,
            queue: VecDeque::new(),
            bytes: 0,
            draining: false,
            xoff_since: None,
            warned: false,
            gave_up: false,
            discards: 0,
            warnings: 0,
            errors: 0,
        }
    }

    /// `(name, value)` of its `ethtool -S` counters.
    pub fn counters(&self, mut f: impl FnMut(&'static str, u64)) {
        f("rx_discards_phy", self.discards);
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

    /// Time to take a frame of `wire` bytes of wire time
    /// ([`crate::packet::Packet::wire_bytes`]).
    fn drain_time(&self, wire: u64, line: Rate) -> Ps {
        self.cfg.rate.unwrap_or(line).tx_time(wire)
    }

    fn stalled(&self, now: Ps) -> bool {
        self.cfg.stall_at.is_some_and(|t| now >= t)
    }
}

impl World {
    /// A frame for NIC `nic` of `host` arrived at its port: into the
    /// receive buffer, if the NIC has one (returns false if not).
    pub fn rx_buffer_enqueue(&mut self, port: u32, host: u32, nic: u32, id: PacketId) -> bool {
        let now = self.now();
        let line = self.ports[port as usize].rate();
        let pkt = self.pool.get(id);
        let (len, wire) = (u32::from(pkt.billed_len), pkt.wire_bytes());
        let Some(rx) = self.hosts[host as usize].nics[nic as usize]
            .rx
            .as_deref_mut()
        else {
            return false;
        };
        if rx.bytes + u64::from(len) > rx.cfg.capacity {
            rx.discards += 1;
            self.pool.free(id);
            return true;
        }
        rx.queue.push_back((id, len));
        rx.bytes += u64::from(len);
        let xoff = rx.bytes >= rx.cfg.xoff && rx.xoff_since.is_none() && !rx.gave_up;
        if !rx.draining && !rx.stalled(now) {
            rx.draining = true;
            let t = now + rx.drain_time(wire, line);
            self.sched.at(t, Event::RxDrain { port });
        }
        if xoff {
            rx.xoff_since = Some(now);
            rx.warned = false;
            for t in [rx.cfg.stall_warning, rx.cfg.stall_error]
                .into_iter()
                .flatten()
            {
                self.sched.at(now + t, Event::NicStall { port });
            }
            let prios = rx.cfg.prios;
            self.pause_prios(port, prios, true);
        }
        true
    }

    /// The host takes the oldest frame of its NIC's receive buffer.
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
        let Some((id, len)) = rx.queue.pop_front() else {
            rx.draining = false;
            return;
        };
        rx.bytes -= u64::from(len);
        match rx.queue.front() {
            Some(&(next, _)) => {
                let t = now + rx.drain_time(self.pool.get(next).wire_bytes(), line);
                self.sched.at(t, Event::RxDrain { port });
            }
            None => rx.draining = false,
        }
        let xon = rx.xoff_since.is_some() && rx.bytes <= rx.cfg.xon;
        if xon {
            rx.xoff_since = None;
            let prios = rx.cfg.prios;
            self.pause_prios(port, prios, false);
        }
        self.host_deliver(port, host, nic, id);
    }

    /// The NIC's stall detection looks at how long it has been pausing.
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
        let Some(since) = rx.xoff_since else { return };
        if rx.cfg.stall_warning.is_some_and(|w| since + w == now) && !rx.warned {
            rx.warned = true;
            rx.warnings += 1;
        }
        if rx.cfg.stall_error.is_some_and(|e| since + e == now) {
            rx.errors += 1;
            rx.gave_up = true;
            rx.xoff_since = None;
            let prios = rx.cfg.prios;
            self.pause_prios(port, prios, false);
        }
    }

    fn pause_prios(&mut self, port: u32, prios: u8, xoff: bool) {
        self.send_pause(port, prios, xoff);
    }
}
