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
//!   peer port: pause_received ── time > 0: stop that priority until now + time × 512 bit times
//!                                time = 0: resume now           (PauseExpire ends a pause not refreshed)
//! ```
//!
//! A paused priority's frames wait in their egress queue (switch) or in
//! their QPs (host NIC); the frame already on the wire finishes. 802.3x
//! PAUSE (`pause = "global"`) is the same with one time for every priority.
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
use crate::time::Ps;

// How a port sends pauses, and its pause state, are the port's
// (`world::port::pause`); this module changes that state.
pub use super::port::pause::{
    GLOBAL, PauseConfig, PauseCounters, PauseState, Watchdog, WatchdogAction,
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

    /// A PAUSE or PFC frame arrived at `port`: the MAC consumes it.
    #[inline(never)]
    pub fn pause_received(&mut self, port: u32, m: MacControlRepr) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        let bps = p.rate().bps();
        let s = p.pause_mut();
        let mut times = [None::<u16>; PRIOS];
        let slot = match m {
            MacControlRepr::Pause { time } => {
                times = [Some(time); PRIOS];
                GLOBAL
            }
            MacControlRepr::Pfc { .. } => {
                for (prio, t) in times.iter_mut().enumerate() {
                    *t = m.pause_quanta(prio as u8);
                }
                usize::MAX
            }
            MacControlRepr::Unknown { .. } => return,
        };
        if slot == GLOBAL {
            s.rx_frames[GLOBAL] += 1;
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
                s.rx_frames[prio] += 1;
                if t > 0 && s.since[prio].is_none() {
                    s.rx_transitions[prio] += 1;
                }
                track(&mut s.since[prio], &mut s.rx_duration[prio], t > 0, now);
            }
            s.last_rx[prio] = now;
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
