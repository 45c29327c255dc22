//! In-band telemetry in the world: what a switch adds to the packets that
//! carry it ([`roce_codec::wire::int`]), for HPCC, and HPCC-PINT's per-port
//! utilisation ([`crate::cc::pint`]).
//!
//! ```text
//!  sender NIC                switch egress (pump_switch)            receiver NIC
//!  request + empty stack ──▶ record: clock, bytes sent, queue, rate ──▶ ... ──▶ stored (QpCc::echo_int)
//!  (make_packet)              pushed as the frame leaves the queue          │
//!  ACK-clocked HPCC ◀────────────────────── ACK + the records echoed ◀─────┘
//! ```
//!
//! The records live in the packet pool beside the packets (`PacketPool::int`);
//! a switch fetches them as the packet arrives and as it leaves the queue.

use rand_chacha::ChaCha8Rng;
use roce_codec::{IntHopRepr, IntRepr};

use super::World;
use crate::cc::{PintCodec, PintPort};
use crate::packet::PacketId;
use crate::time::Ps;

impl World {
    /// A frame leaves a switch's egress queue of `port` (local port
    /// `local` of switch `sw`): if it carries telemetry, the port's record
    /// goes on it (`SwitchNotifyDequeue` in the HPCC reference): the clock,
    /// the bytes the port sent before it, the bytes still queued, the link
    /// rate. A frame billed at its real size grows by the record; one billed
    /// as the reference bills it (whose telemetry has a fixed size) does
    /// not. A port whose rate has no code in the record adds none. On a PINT
    /// fabric the port's utilisation moves with every frame, and a PINT
    /// packet takes its power instead of a record.
    pub(super) fn push_telemetry(&mut self, port: u32, sw: u32, local: u32, id: PacketId) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        let (sent, queued, rate) = (p.dequeued_bytes(), p.queued_bytes(), p.rate());
        if let Some(pint) = self.switches[sw as usize].pint_mut() {
            let size = u64::from(self.pool.get(id).billed_len);
            pint.dequeue(
                local,
                now.as_ns(),
                queued,
                rate.bps(),
                size,
                self.pool.int_mut(id),
            );
        }
        if let Some(int) = self.pool.int_mut(id).filter(|i| !i.pint) {
            let before = int.hops().len();
            if let Some(hop) = IntHopRepr::new(rate.bps(), now.as_ns(), sent, queued, int.multi) {
                int.push(hop);
            }
            let grew = int.hops().len() > before;
            let pkt = self.pool.get_mut(id);
            if grew && pkt.wire_extra != 0 {
                pkt.frame_len += IntHopRepr::LEN as u16;
                pkt.billed_len += IntHopRepr::LEN as u16;
            }
        }
        p.count_dequeued(self.pool.get(id).billed_len);
    }
}

/// A switch's HPCC-PINT state: each egress port's [`PintPort`] and the
/// stream its rounding draws from (the reference's `rand()`).
#[derive(Debug, Clone)]
pub(super) struct SwitchPint {
    codec: PintCodec,
    max_rtt_ns: u64,
    ports: Vec<PintPort>,
    rng: ChaCha8Rng,
}

impl SwitchPint {
    pub(super) fn new(log_base: f64, max_rtt: Ps, ports: usize, rng: ChaCha8Rng) -> Self {
        SwitchPint {
            codec: PintCodec::new(log_base),
            max_rtt_ns: max_rtt.as_ns().max(1),
            ports: vec![PintPort::default(); ports],
            rng,
        }
    }

    /// A frame of `size` billed bytes leaves local port `local` at
    /// `now_ns` with `qlen` bytes left queued (`SwitchNotifyDequeue`): a
    /// PINT data packet updates the port's utilisation and takes its power
    /// if larger than the one it carries (compared before a one-byte field
    /// keeps its low bits, as the reference does); every frame is the
    /// port's last.
    fn dequeue(
        &mut self,
        local: u32,
        now_ns: u64,
        qlen: u64,
        rate_bps: u64,
        size: u64,
        int: Option<&mut IntRepr>,
    ) {
        let i = local as usize;
        if self.ports.len() <= i {
            self.ports.resize(i + 1, PintPort::default());
        }
        let port = &mut self.ports[i];
        if let Some(int) = int.filter(|i| i.pint && !i.echo) {
            let u = port.update(now_ns, qlen, rate_bps, self.max_rtt_ns, &mut self.rng);
            let power = self.codec.encode(u, &mut self.rng);
            if power > int.power {
                int.power = self.codec.stored(power);
            }
        }
        port.dequeued(now_ns, size);
    }
}

impl World {
    /// Every switch runs HPCC-PINT's egress computation (see
    /// [`super::Switch::set_pint`]).
    pub fn enable_pint(&mut self, log_base: f64, max_rtt: Ps) {
        let seed = self.seed;
        for s in &mut self.switches {
            s.set_pint(log_base, max_rtt, seed);
        }
    }
}
