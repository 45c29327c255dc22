//! PFC and PAUSE on the wire: a port that is told to stop, and a port that
//! tells its peer to.
//!
//! ```text
//!   switch MMU (XOFF at admit, XON at release)        host NIC receive buffer over xoff / under xon
//!            │                                                 │
//!            └──────────▶ send_pause(port, prio, on) ◀─────────┘
//!                          pending PFC frame (one per transmit opportunity, every priority's
//!                          latest state merged), sent before any queued frame once the frame
//!                          on the wire finishes; an XOFF is sent again every half quanta while
//!                          the sender still wants it (PfcRefresh)
//!                                      │ 802.1Qbb frame, 60 bytes, on the link (captured)
//!                                      ▼
//!   peer port: pause_received ── counted (rx_prioN_pause); priorities PFC is not enabled on
//!              │                 here (802.3x: PAUSE off here) go no further
//!              │ its reaction delay later (interface + response bit times; 0: at once)
//!              ▼
//!              pause_effect ──── time > 0: stop that priority until then + time × 512 bit times
//!                                time = 0: resume              (PauseExpire ends a pause not refreshed)
//! ```
//!
//! A paused priority's frames wait in their egress queue (switch) or in
//! their QPs (host NIC); the frame already on the wire when the pause takes
//! effect finishes. 802.3x PAUSE (`pause = "global"`) is the same with one
//! time for every priority. Paused time (`rx_prioN_pause_duration`) runs
//! from the pause's effect to the effect of the XON that ends it (or its
//! expiry): the time the port really held its frames back.
//!
//! The reaction delay is what makes headroom necessary beyond the cable:
//! IEEE 802.3 bounds the PHY/MAC latency (the interface delay) and the
//! time a MAC may take to act on a PAUSE (Annex 31B.3.7, in pause quanta
//! per speed); [`standard_interface_bits`] and [`standard_response_bits`]
//! are the defaults a scenario's ports get.
//!
//! The switch's PFC watchdog watches each egress queue that is paused: a
//! queue paused without a break for `detect` while holding frames is in a
//! storm; the watchdog then ignores that priority's pauses and either drops
//! its frames (queued and arriving) or forwards them regardless, until no
//! pause has arrived for `restore`.

use roce_codec::wire::mac_control::{MacControlRepr, pause_quanta_to_ps};

use super::World;
use super::port::{DropReason, PRIOS};
use crate::engine::Event;
use crate::packet::Packet;
use crate::time::{Ps, Rate};

/// The pause reaction IEEE 802.3 Annex 31B.3.7 allows a MAC, in bit times,
/// per speed: (Mb/s, pause quanta of 512 bit times). As tabulated in SONiC's
/// sonic-swss `cfgmgr/buffer_headroom_mellanox.lua` (`pause_quanta_per_speed`,
/// whose comment cites 31B.3.7); its 800G row repeats the 400G value. The
/// 10G row is the table's 67 quanta (a headroom article quotes 60).
const RESPONSE_QUANTA: [(u64, u64); 10] = [
    (100, 1),
    (1_000, 2),
    (10_000, 67),
    (25_000, 80),
    (40_000, 118),
    (50_000, 147),
    (100_000, 394),
    (200_000, 453),
    (400_000, 905),
    (800_000, 905),
];

/// The MAC/PHY (PCS, FEC, PMA) latency budget of IEEE 802.3 per speed, in
/// bit times (Mb/s, bits), as besthub.dev's "How to Compute Headroom for
/// Lossless Ethernet Links (Part 2)" quotes the standard's tables; no value
/// was found for 50, 200 or 400G.
const INTERFACE_BITS: [(u64, u64); 4] = [
    (10_000, 8_192),
    (25_000, 6_144),
    (40_000, 24_576),
    (100_000, 122_880),
];

/// The row of `table` for `rate`: its own, else the fastest speed below it
/// (a 200G port takes 100G's bit times), else the slowest row.
fn per_speed(table: &[(u64, u64)], rate: Rate) -> u64 {
    let mbps = rate.bps() / 1_000_000;
    table
        .iter()
        .rev()
        .find(|&&(speed, _)| speed <= mbps)
        .unwrap_or(&table[0])
        .1
}

/// The pause reaction 802.3 allows at `rate`, in bit times (100G: 394
/// quanta, 201,728 bit times, 2.017 µs).
pub fn standard_response_bits(rate: Rate) -> u64 {
    per_speed(&RESPONSE_QUANTA, rate) * 512
}

/// The interface delay 802.3 budgets at `rate`, in bit times (100G:
/// 122,880, 1.229 µs); speeds the source does not list take the next
/// slower listed one's.
pub fn standard_interface_bits(rate: Rate) -> u64 {
    per_speed(&INTERFACE_BITS, rate)
}

/// Whether 802.3's interface delay at `rate` is a value of its own in
/// the source, rather than a slower speed's taken for it.
pub fn standard_interface_listed(rate: Rate) -> bool {
    INTERFACE_BITS
        .iter()
        .any(|&(speed, _)| speed * 1_000_000 == rate.bps())
}

// How a port sends pauses, and its pause state, are the port's
// (`world::port::pause`); this module changes that state.
pub use super::port::pause::{
    GLOBAL, PauseConfig, PauseCounters, PauseRx, PauseState, Watchdog, WatchdogAction, bits_to_ps,
};

impl World {
    /// Port `port` asks its peer to stop (`xoff`) or resume the priorities
    /// of `mask`; the frame goes out once the port's current frame
    /// finishes.
    #[inline(never)]
    pub fn send_pause(&mut self, port: u32, mask: u8, xoff: bool) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        let rate = p.rate();
        let s = p.pause_mut();
        let Some(cfg) = s.cfg else { return };
        if xoff {
            s.want |= mask;
        } else {
            s.want &= !mask;
        }
        s.pending |= mask;
        let arm = if xoff { mask & !s.refresh_armed } else { 0 };
        s.refresh_armed |= arm;
        p.set_pause_pending(true);
        let half = Ps(pause_quanta_to_ps(cfg.quanta, rate.bps()) / 2).max(Ps(1));
        for prio in 0..PRIOS as u8 {
            if arm & 1 << prio != 0 {
                self.sched.at(now + half, Event::PfcRefresh { port, prio });
            }
        }
        self.pump(port);
    }

    /// Puts the pending PAUSE/PFC frame of an idle `port` on the wire;
    /// returns whether there was one.
    #[inline]
    pub fn send_pending_pause(&mut self, port: u32) -> bool {
        let p = &self.ports[port as usize];
        p.pause_pending() && self.put_pause_frame(port)
    }

    #[inline(never)]
    fn put_pause_frame(&mut self, port: u32) -> bool {
        let now = self.now();
        let s = self.ports[port as usize].pause_mut();
        let cfg = s.cfg.expect("pending pauses need a configuration");
        let time = |on: bool| if on { cfg.quanta } else { 0 };
        let repr = if cfg.global {
            let on = s.want != 0;
            track(&mut s.tx_since[GLOBAL], &mut s.tx_duration[GLOBAL], on, now);
            s.tx_frames[GLOBAL] += 1;
            MacControlRepr::Pause { time: time(on) }
        } else {
            let mut times = [0u16; PRIOS];
            for (prio, t) in times.iter_mut().enumerate() {
                if s.pending & 1 << prio != 0 {
                    let on = s.want & 1 << prio != 0;
                    *t = time(on);
                    track(&mut s.tx_since[prio], &mut s.tx_duration[prio], on, now);
                    s.tx_frames[prio] += 1;
                }
            }
            MacControlRepr::Pfc {
                enable_vector: u16::from(s.pending),
                times,
            }
        };
        s.pending = 0;
        self.ports[port as usize].set_pause_pending(false);
        let id = self.pool.alloc(Packet::mac_control(cfg.mac, repr));
        self.transmit(port, id);
        true
    }

    /// A PFC refresh timer: XOFF again if the port still wants `prio`
    /// stopped.
    #[inline(never)]
    pub fn pfc_refresh(&mut self, port: u32, prio: u8) {
        let prio = usize::from(prio);
        let s = self.ports[port as usize].pause_mut();
        s.refresh_armed &= !(1 << prio);
        if s.wants(prio) {
            self.send_pause(port, 1 << prio, true);
        }
    }

    /// A PAUSE or PFC frame arrived at `port`: the MAC consumes it. It is
    /// counted now; what the port obeys of it ([`PauseRx`]) takes effect
    /// its reaction delay later ([`World::pause_effect`]), at once when
    /// that delay is 0.
    #[inline(never)]
    pub fn pause_received(&mut self, port: u32, m: MacControlRepr) {
        let now = self.now();
        let s = self.ports[port as usize].pause_mut();
        let obeyed = match m {
            MacControlRepr::Pause { .. } => {
                s.rx_frames[GLOBAL] += 1;
                if s.rx.global { 0xff } else { 0 }
            }
            MacControlRepr::Pfc { .. } => {
                let mut listed = 0u8;
                for prio in 0..PRIOS {
                    if m.pause_quanta(prio as u8).is_some() {
                        s.rx_frames[prio] += 1;
                        listed |= 1 << prio;
                    }
                }
                listed & s.rx.pfc
            }
            MacControlRepr::Unknown { .. } => return,
        };
        for prio in 0..PRIOS {
            if obeyed & 1 << prio != 0 {
                s.last_rx[prio] = now;
            }
        }
        if obeyed == 0 {
            return; // counted, not obeyed: PFC is not enabled for it here
        }
        let delay = s.rx.delay;
        if delay == Ps::ZERO {
            return self.pause_obey(port, m);
        }
        s.rx_pending.push_back((now + delay, m));
        self.sched.at(now + delay, Event::PauseEffect { port });
    }

    /// The oldest pause `port` received and has not acted on takes effect
    /// (its reaction delay after its last bit arrived).
    #[inline(never)]
    pub fn pause_effect(&mut self, port: u32) {
        let s = self.ports[port as usize].pause_mut();
        let Some((at, m)) = s.rx_pending.pop_front() else {
            return;
        };
        debug_assert_eq!(at, self.now(), "pauses take effect in arrival order");
        self.pause_obey(port, m);
    }

    /// `port` acts on a pause frame now: stops or resumes the priorities it
    /// obeys of it, counts transitions and paused time.
    fn pause_obey(&mut self, port: u32, m: MacControlRepr) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        let bps = p.rate().bps();
        let s = p.pause_mut();
        let rx = s.rx;
        let mut times = [None::<u16>; PRIOS];
        let slot = match m {
            MacControlRepr::Pause { time } => {
                times = [Some(time); PRIOS];
                GLOBAL
            }
            MacControlRepr::Pfc { .. } => {
                for (prio, t) in times.iter_mut().enumerate() {
                    if rx.pfc & 1 << prio != 0 {
                        *t = m.pause_quanta(prio as u8);
                    }
                }
                usize::MAX
            }
            MacControlRepr::Unknown { .. } => return,
        };
        if slot == GLOBAL {
            let on = times[0].unwrap_or(0) > 0;
            if on && s.since[GLOBAL].is_none() {
                s.rx_transitions[GLOBAL] += 1;
            }
            track(&mut s.since[GLOBAL], &mut s.rx_duration[GLOBAL], on, now);
        }
        let wd = s.cfg.and_then(|c| c.watchdog);
        let mut paused = p.paused();
        let mut expire = None::<Ps>;
        for (prio, t) in times.iter().enumerate() {
            let Some(t) = *t else { continue };
            let bit = 1u8 << prio;
            let s = p.pause_mut();
            if slot != GLOBAL {
                if t > 0 && s.since[prio].is_none() {
                    s.rx_transitions[prio] += 1;
                }
                track(&mut s.since[prio], &mut s.rx_duration[prio], t > 0, now);
            }
            if s.storm & bit != 0 {
                continue; // the watchdog ignores this priority's pauses
            }
            if t > 0 {
                let until = now + Ps(pause_quanta_to_ps(t, bps));
                s.until[prio] = until;
                if let Some(w) = wd {
                    if paused & bit == 0 {
                        self.sched.at(
                            now + w.detect,
                            Event::Watchdog {
                                port,
                                prio: prio as u8,
                            },
                        );
                    }
                }
                paused |= bit;
                expire = Some(expire.map_or(until, |e: Ps| e.min(until)));
            } else {
                paused &= !bit;
            }
        }
        let resumed = p.paused() & !paused != 0;
        p.set_paused(paused);
        if let Some(t) = expire {
            self.sched.at(t, Event::PauseExpire { port });
        }
        if resumed {
            self.pump(port);
        }
    }

    /// Pauses of `port` that were not refreshed run out.
    #[inline(never)]
    pub fn pause_expire(&mut self, port: u32) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        let mut paused = p.paused();
        let s = p.pause_mut();
        for prio in 0..PRIOS {
            if paused & 1 << prio != 0 && s.until[prio] <= now {
                paused &= !(1 << prio);
                let until = s.until[prio];
                track(&mut s.since[prio], &mut s.rx_duration[prio], false, until);
                if s.since[GLOBAL].is_some() && prio == 0 {
                    track(
                        &mut s.since[GLOBAL],
                        &mut s.rx_duration[GLOBAL],
                        false,
                        until,
                    );
                }
            }
        }
        if paused != p.paused() {
            p.set_paused(paused);
            self.pump(port);
        }
    }

    /// The watchdog looks at (`port`, `prio`) `detect` after it was paused,
    /// or `restore` after it found a storm.
    #[inline(never)]
    pub fn watchdog(&mut self, port: u32, prio: u8) {
        let now = self.now();
        let prio = usize::from(prio);
        let bit = 1u8 << prio;
        let p = &mut self.ports[port as usize];
        let queued = p.queued() & bit != 0;
        let paused = p.paused() & bit != 0;
        let s = p.pause_mut();
        let Some(w) = s.cfg.and_then(|c| c.watchdog) else {
            return;
        };
        if s.storm & bit != 0 {
            if now.0 - s.last_rx[prio].0 >= w.restore.0 {
                s.storm &= !bit;
                s.wd_restored[prio] += 1;
                p.set_wd_dropping(prio, false);
            } else {
                let at = s.last_rx[prio] + w.restore;
                self.sched.at(
                    at,
                    Event::Watchdog {
                        port,
                        prio: prio as u8,
                    },
                );
            }
            return;
        }
        let since = s.since[prio].or(s.since[GLOBAL]);
        let stuck = paused && queued && since.is_some_and(|t| now.0 - t.0 >= w.detect.0);
        if !stuck {
            if paused {
                // Paused since later, or empty: look again a detection time on.
                self.sched.at(
                    now + w.detect,
                    Event::Watchdog {
                        port,
                        prio: prio as u8,
                    },
                );
            }
            return;
        }
        s.storm |= bit;
        s.wd_detected[prio] += 1;
        p.set_wd_dropping(prio, w.action == WatchdogAction::Drop);
        p.set_paused(p.paused() & !bit);
        self.sched.at(
            now + w.restore,
            Event::Watchdog {
                port,
                prio: prio as u8,
            },
        );
        if w.action == WatchdogAction::Drop {
            for q in self.ports[port as usize].drain_prio(prio) {
                self.ports[port as usize].pause_mut().count_wd_drop(prio);
                self.release_buffer(port, prio, q.id, q.len);
                self.drop_frame(port, q.id, DropReason::Buffer);
            }
        }
        self.pump(port);
    }
}

/// Opens (`on`) or closes an interval that started at `since`, adding a
/// closed one to `total`.
#[inline]
fn track(since: &mut Option<Ps>, total: &mut Ps, on: bool, now: Ps) {
    match (on, *since) {
        (true, None) => *since = Some(now),
        (false, Some(t)) => {
            *total = Ps(total.0 + now.0.saturating_sub(t.0));
            *since = None;
        }
        _ => {}
    }
}

/// Wire bytes of the largest frame an interface of MTU `mtu` sends:
/// Ethernet header (+ an 802.1Q tag), FCS, preamble and gap around it.
fn wire_frame_bytes(mtu: u32, tagged: bool) -> u64 {
    let tag = if tagged { 4 } else { 0 };
    crate::time::wire_bytes(u64::from(mtu) + 14 + tag)
}

impl World {
    /// Wire bytes of the largest frame any host of the world sends (what
    /// a switch may forward on any of its ports); a 1500-byte MTU's if it
    /// has no host.
    fn largest_wire_frame(&self) -> u64 {
        self.hosts
            .iter()
            .flat_map(|h| &h.ifaces)
            .map(|f| wire_frame_bytes(f.mtu, f.vlan.is_some()))
            .max()
            .unwrap_or_else(|| wire_frame_bytes(1500, false))
    }

    /// Wire bytes of the largest frame `port` sends: a NIC's, its
    /// interface's MTU; a switch's, the largest of the fabric.
    fn largest_frame_from(&self, port: u32) -> u64 {
        match self.ports[port as usize].owner() {
            super::Owner::Host { host, nic } => {
                let h = &self.hosts[host as usize];
                let f = h.iface(h.nic(nic).iface());
                wire_frame_bytes(f.mtu, f.vlan.is_some())
            }
            super::Owner::Switch { .. } => self.largest_wire_frame(),
        }
    }

    /// What `port`'s headroom must absorb per lossless priority
    /// ([`super::mmu::HeadroomNeed`]) when it pauses its peer: its speed
    /// and link, the largest frames either end sends (a NIC's MTU; a
    /// switch's, the fabric's largest) and the peer's reaction delay.
    pub fn headroom_need(&self, port: u32) -> super::mmu::HeadroomNeed {
        let p = &self.ports[port as usize];
        let peer = &self.ports[p.peer() as usize];
        let rx = peer.pause().rx();
        super::mmu::HeadroomNeed {
            rate: p.rate(),
            propagation: self.links[p.link() as usize].delay(),
            receiver_frame_bytes: self.largest_frame_from(port),
            sender_frame_bytes: self.largest_frame_from(p.peer()),
            peer_interface_bits: rx.interface_bits,
            peer_response_bits: rx.response_bits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_delays_per_speed() {
        // 802.3 31B.3.7 (SONiC's table): 394 quanta at 100G, 905 at 400G.
        assert_eq!(standard_response_bits(Rate::gbps(100)), 201_728);
        assert_eq!(standard_response_bits(Rate::gbps(400)), 463_360);
        assert_eq!(standard_response_bits(Rate::gbps(25)), 40_960);
        assert_eq!(standard_response_bits(Rate::gbps(10)), 34_304);
        assert_eq!(standard_interface_bits(Rate::gbps(100)), 122_880);
        assert_eq!(standard_interface_bits(Rate::gbps(25)), 6_144);
        // Unlisted speeds: the next slower listed one, the slowest below.
        assert_eq!(standard_interface_bits(Rate::gbps(400)), 122_880);
        assert_eq!(standard_interface_bits(Rate::gbps(50)), 24_576);
        assert_eq!(standard_interface_bits(Rate::gbps(1)), 8_192);
        assert_eq!(standard_response_bits(Rate::gbps(1600)), 463_360);
    }

    #[test]
    fn reaction_delay_in_picoseconds() {
        // 100G: 10 ps a bit; 400G: 2.5 ps, 586,240 bits = 1,465,600 ps;
        // 40G: 25 ps, one bit rounds up to 25.
        let rx = PauseRx::new(1 << 3, false, 122_880, 201_728, Rate::gbps(100));
        assert_eq!(rx.delay, Ps(3_246_080));
        assert_eq!(rx.reaction_bits(), 324_608);
        let rx = PauseRx::new(1 << 3, false, 122_880, 463_360, Rate::gbps(400));
        assert_eq!(rx.delay, Ps(1_465_600));
        assert_eq!(bits_to_ps(3, Rate::gbps(400)), Ps(8), "7.5 ps rounds up");
        assert_eq!(PauseRx::default().delay, Ps::ZERO);
        assert_eq!(PauseRx::default().pfc, 0xff);
    }
}
