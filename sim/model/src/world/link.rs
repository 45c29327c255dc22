//! A link: a full-duplex cable between two ports, and the world's part in
//! moving a frame across it.
//!
//! ```text
//!   port A ──start_tx (busy for the wire time)──▶ Link::carry ──▶ Arrive at port B
//!            │                                     │ carrier or link down: lost (drops_link_down)
//!            └─ tap records tx ─ TxDone ─ pump     │ loss draw from the link's own RNG: lost (drops_loss)
//!                                                  └ else delivered after wire time + delay + latency
//! ```
//!
//! A frame arrives whole (store and forward): its last bit lands
//! `tx_time + delay` after its first left, plus the sending switch's
//! latency. Every frame put on a link is counted as sent and then as
//! delivered or lost, so [`Link::conserved`] holds at every instant.

use rand_chacha::ChaCha8Rng;

use super::port::{DropReason, Owner};
use super::{IfaceKind, World};
use crate::engine::Event;
use crate::packet::{L3, PacketId};
use crate::time::Ps;

pub struct Link {
    name: String,
    ends: [u32; 2],
    delay: Ps,
    loss: f64,
    /// Probability that a delivered ECT frame arrives CE-marked
    /// (`ce_mark`): an impairment standing for a congested hop the
    /// scenario does not model, not a switch's RED.
    ce_mark: f64,
    /// One random stream per direction (`rng[0]` for frames from
    /// `ends[0]`): a direction's draws then do not depend on the other's
    /// frames, which a split run may simulate in another part.
    rng: [ChaCha8Rng; 2],
    up: bool,
    /// Frames put on the wire / delivered / lost, both directions, bytes.
    sent_bytes: u64,
    delivered_bytes: u64,
    lost_bytes: u64,
}

/// What became of a frame put on a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// It arrives `delay` after its last bit left.
    Delivered {
        delay: Ps,
    },
    Lost(DropReason),
}

impl Link {
    pub fn new(name: String, ends: [u32; 2], delay: Ps, loss: f64, rng: ChaCha8Rng) -> Link {
        let mut back = rng.clone();
        back.set_stream(1);
        let rng = [rng, back];
        Link {
            name,
            ends,
            delay,
            loss,
            ce_mark: 0.0,
            rng,
            up: true,
            sent_bytes: 0,
            delivered_bytes: 0,
            lost_bytes: 0,
        }
    }

    /// Marks delivered ECT frames CE with probability `p`.
    pub fn set_ce_mark(&mut self, p: f64) {
        self.ce_mark = p;
    }

    /// Whether a delivered frame that is ECT (`ect`) arrives CE-marked. The
    /// draw is made only for ECT frames on a marking link, so a link
    /// without `ce_mark` keeps its random stream as before.
    fn marks_ce(&mut self, from: u32, ect: bool) -> bool {
        let rng = &mut self.rng[usize::from(from != self.ends[0])];
        ect && self.ce_mark > 0.0 && crate::rng::unit_f64(rng) < self.ce_mark
    }

    pub fn delay(&self) -> Ps {
        self.delay
    }

    /// The two ports, as the scenario's `a` and `b`.
    pub fn ends(&self) -> [u32; 2] {
        self.ends
    }

    /// A frame of `len` bytes leaves port `from` (an end), whose carrier
    /// is `carrier`. The loss draw is made only for a frame that could
    /// arrive, so a dead link does not advance the link's random stream.
    #[inline]
    pub fn carry(&mut self, from: u32, len: u32, carrier: bool) -> Carry {
        let len = u64::from(len);
        self.sent_bytes += len;
        let rng = &mut self.rng[usize::from(from != self.ends[0])];
        let lost = if !carrier || !self.up {
            Some(DropReason::LinkDown)
        } else if self.loss > 0.0 && crate::rng::unit_f64(rng) < self.loss {
            Some(DropReason::Loss)
        } else {
            None
        };
        match lost {
            Some(why) => {
                self.lost_bytes += len;
                Carry::Lost(why)
            }
            None => {
                self.delivered_bytes += len;
                Carry::Delivered { delay: self.delay }
            }
        }
    }

    /// Whether the carrier is up.
    pub fn is_up(&self) -> bool {
        self.up
    }

    /// Sets the carrier; returns whether it changed.
    pub fn set_up(&mut self, up: bool) -> bool {
        std::mem::replace(&mut self.up, up) != up
    }

    /// Adds the bytes `other` (this link in another part of a partitioned
    /// run, which carried the other direction) sent, delivered and lost.
    pub fn absorb(&mut self, other: &Link) {
        self.sent_bytes += other.sent_bytes;
        self.delivered_bytes += other.delivered_bytes;
        self.lost_bytes += other.lost_bytes;
    }

    /// Every byte sent was delivered or lost.
    pub fn conserved(&self) -> Result<(), String> {
        if self.sent_bytes != self.delivered_bytes + self.lost_bytes {
            return Err(format!(
                "link {}: sent {} != delivered {} + lost {}",
                self.name, self.sent_bytes, self.delivered_bytes, self.lost_bytes
            ));
        }
        Ok(())
    }
}

impl World {
    /// Tells `port`'s transmission selection, if it has one, that frame
    /// `id` leaves from its queue `queue` (call before `transmit`, which
    /// may free a frame lost on the link).
    #[inline]
    pub fn sent_from(&mut self, port: u32, queue: usize, id: PacketId) {
        let p = &mut self.ports[port as usize];
        if p.selects() {
            let pkt = self.pool.get(id);
            let prio = usize::from(pkt.prio & 7);
            p.sent_from(queue, prio, u32::from(pkt.frame_len), pkt.wire_bytes());
        }
    }

    /// Puts a frame on the wire of `port`.
    pub fn transmit(&mut self, port: u32, id: PacketId) {
        let now = self.now();
        let pkt = self.pool.get(id);
        let (frame_len, wire) = (u32::from(pkt.frame_len), pkt.wire_bytes());
        let p = &mut self.ports[port as usize];
        // A frame rounded down to nothing still takes a picosecond: its
        // `TxDone` must follow its start.
        let tx_time = p
            .start_tx(frame_len, wire)
            .floor_to(self.tx_step)
            .max(Ps(1));
        let (link, peer, extra, carrier) = (p.link(), p.peer(), p.extra_delay(), p.carrier());
        if let Some(t) = p.tap() {
            let body = self.setup_bytes(self.pool.get(id));
            let pkt = self.pool.get(id);
            self.taps[t as usize].record(now, pkt, self.pool.int_of(pkt), body.as_deref());
        }
        let key = self.sched.reserve(now + tx_time, &Event::TxDone { port });
        self.ports[port as usize].set_tx_end(key);
        if !self.sched.lazy_tx_done() || self.has_work(port) {
            self.schedule_tx_done(port);
        }
        self.packet_hops += 1;
        match self.links[link as usize].carry(port, frame_len, carrier) {
            Carry::Lost(why) => {
                // No arrival will stand for the `TxDone` as activity.
                self.schedule_tx_done(port);
                self.ports[port as usize].count_drop(why);
                self.pool.free(id);
            }
            Carry::Delivered { delay } => {
                let pkt = self.pool.get_mut(id);
                let ect = matches!(pkt.l3, L3::V2 { ecn: 1 | 2, .. });
                if self.links[link as usize].marks_ce(port, ect) {
                    if let L3::V2 { ecn, .. } = &mut pkt.l3 {
                        *ecn = 3;
                    }
                }
                let at = now + tx_time + delay + extra;
                if self.ports[port as usize].peer_elsewhere() {
                    let key = self.sched.arrival_key(at);
                    let pkt = self.pool.get(id);
                    self.departures.send(key, peer, pkt, self.pool.int_of(pkt));
                    self.pool.free(id);
                } else {
                    self.sched.arrive(at, peer, id);
                }
            }
        }
    }

    /// Puts the `TxDone` of the frame on `port`'s wire into the scheduler,
    /// under the key reserved when it started, if it is not there yet.
    ///
    /// A `TxDone` only pumps the port, so one that would find nothing to
    /// send is left out: most are, on ports that carry ACKs or a paced
    /// QP's frames. Whatever gives a busy port work later calls
    /// `World::pump`, which schedules it then; it runs exactly where it
    /// would have, its key being the one it had. A sample tick schedules
    /// those still ahead (they are activity for the sampler) and the end of
    /// the run counts them (`World::run`).
    pub fn schedule_tx_done(&mut self, port: u32) {
        let p = &mut self.ports[port as usize];
        if let Some(key) = p.unscheduled_tx_done() {
            if key > self.sched.current() {
                p.tx_done_scheduled();
                self.sched.at_key(key, Event::TxDone { port });
            }
        }
    }

    /// Whether `port` has something to send when its wire frees: a
    /// queued frame, a pending PAUSE, or (a host port) an active QP.
    fn has_work(&self, port: u32) -> bool {
        let p = &self.ports[port as usize];
        p.has_work()
            || match p.owner() {
                Owner::Host { host, nic } => {
                    self.hosts[host as usize].nics[nic as usize].has_active()
                }
                Owner::Switch { .. } => false,
            }
    }

    /// The last bit of a frame arrived at `port`.
    pub fn arrive(&mut self, port: u32, id: PacketId) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        if !p.carrier() {
            // The link went down while the frame was in flight.
            p.count_drop(DropReason::LinkDown);
            self.pool.free(id);
            return;
        }
        p.count_rx(self.pool.get(id).frame_len.into());
        let (tap, owner) = (p.tap(), p.owner());
        if let Some(t) = tap {
            let body = self.setup_bytes(self.pool.get(id));
            let pkt = self.pool.get(id);
            self.taps[t as usize].record(now, pkt, self.pool.int_of(pkt), body.as_deref());
        }
        if let crate::packet::L3::MacControl(m) = self.pool.get(id).l3 {
            self.pool.free(id);
            return self.pause_received(port, m);
        }
        match owner {
            Owner::Host { host, nic } => self.host_receive(port, host, nic, id),
            Owner::Switch { sw, local } => self.switch_receive(port, sw, local, id),
        }
    }

    /// A port drops a frame it holds.
    pub fn drop_frame(&mut self, port: u32, id: PacketId, why: DropReason) {
        self.ports[port as usize].count_drop(why);
        self.pool.free(id);
    }

    /// A link's carrier goes down or up, at both ends.
    pub fn link_change(&mut self, link: u32, up: bool) {
        let now = self.now();
        let l = &mut self.links[link as usize];
        if !l.set_up(up) {
            return;
        }
        for port in l.ends() {
            self.ports[port as usize].set_carrier(up);
            let owner = self.ports[port as usize].owner();
            if !up {
                // A dead port loses what it had queued.
                for (prio, q) in self.ports[port as usize].drain() {
                    self.release_buffer(port, prio, q.id, q.len);
                    self.drop_frame(port, q.id, DropReason::LinkDown);
                }
            }
            match owner {
                Owner::Switch { sw, local } => self.switches[sw as usize].set_port_up(local, up),
                Owner::Host { host, nic } => {
                    let h = &self.hosts[host as usize];
                    let n = h.nic(nic);
                    if let (Some(slave), IfaceKind::Bond(b)) = (n.slave(), h.iface(n.iface()).kind)
                    {
                        let bond = &mut self.bonds[b as usize].bond;
                        if let Some(t) = bond.carrier_changed(slave as usize, up, now) {
                            if !bond.poll_pending {
                                bond.poll_pending = true;
                                self.sched.at(t, Event::Miimon { bond: b });
                            }
                        }
                    }
                }
            }
            if up {
                self.pump(port);
            }
        }
        self.reroute();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::component_rng;

    #[test]
    fn every_byte_sent_is_delivered_or_lost() {
        let mut l = Link::new(
            "a--b".into(),
            [0, 1],
            Ps::from_ns(500),
            0.25,
            component_rng(1, "link:a--b"),
        );
        let mut lost = 0;
        for _ in 0..1000 {
            match l.carry(0, 1000, true) {
                Carry::Delivered { delay } => assert_eq!(delay, Ps::from_ns(500)),
                Carry::Lost(why) => {
                    assert_eq!(why, DropReason::Loss);
                    lost += 1;
                }
            }
        }
        // 25 % loss: 250 expected, sd ≈ 14.
        assert!((180..320).contains(&lost), "{lost}");
        assert!(l.set_up(false) && !l.set_up(false));
        assert_eq!(l.carry(0, 1000, true), Carry::Lost(DropReason::LinkDown));
        assert!(l.set_up(true));
        assert_eq!(
            l.carry(0, 1000, false),
            Carry::Lost(DropReason::LinkDown),
            "a port without carrier"
        );
        l.conserved().unwrap();
        assert_eq!(l.sent_bytes, 1_002_000);
        assert_eq!(l.lost_bytes, (lost + 2) * 1000);
    }

    #[test]
    fn a_dead_link_draws_no_loss_numbers() {
        let rng = component_rng(7, "link:x");
        let mut a = Link::new("x".into(), [0, 1], Ps::ZERO, 0.5, rng.clone());
        let mut b = Link::new("x".into(), [0, 1], Ps::ZERO, 0.5, rng);
        b.set_up(false);
        b.carry(0, 100, true);
        b.set_up(true);
        let fates = |l: &mut Link| (0..64).map(|_| l.carry(0, 100, true)).collect::<Vec<_>>();
        assert_eq!(fates(&mut a), fates(&mut b));
    }

    /// A direction's losses do not depend on the other direction's frames
    /// (which another part of a split run may send).
    #[test]
    fn each_direction_draws_its_own_stream() {
        let rng = component_rng(7, "link:x");
        let mut a = Link::new("x".into(), [3, 4], Ps::ZERO, 0.5, rng.clone());
        let mut b = Link::new("x".into(), [3, 4], Ps::ZERO, 0.5, rng);
        let fates = |l: &mut Link, from| {
            (0..64)
                .map(|_| l.carry(from, 100, true))
                .collect::<Vec<_>>()
        };
        let back = fates(&mut b, 4);
        assert_eq!(
            fates(&mut a, 3),
            fates(&mut b, 3),
            "forward, with and without traffic back"
        );
        assert_eq!(fates(&mut a, 4), back);
        assert_ne!(fates(&mut a, 3), fates(&mut a, 4), "two streams");
    }
}
