//! In-band telemetry in the world: what a switch adds to the packets that
//! carry it ([`roce_codec::wire::int`]), for HPCC.
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

use roce_codec::IntHopRepr;

use super::World;
use crate::packet::PacketId;

impl World {
    /// A frame leaves a switch's egress queue of `port`: if it carries
    /// telemetry, the port's record goes on it (`SwitchNotifyDequeue` in
    /// the HPCC reference): the clock, the bytes the port sent before it,
    /// the bytes still queued, the link rate. A frame billed at its real
    /// size grows by the record; one billed as the reference bills it
    /// (whose telemetry has a fixed size) does not. A port whose rate has
    /// no code in the record adds none.
    pub(super) fn push_telemetry(&mut self, port: u32, id: PacketId) {
        let now = self.now();
        let p = &mut self.ports[port as usize];
        let (sent, queued, rate) = (p.dequeued_bytes(), p.queued_bytes(), p.rate());
        if let Some(int) = self.pool.int_mut(id) {
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
