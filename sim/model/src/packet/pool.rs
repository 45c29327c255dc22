//! The packet pool: [`Packet`]s in a slab with a free list, and the
//! [`PacketId`]s events carry instead of packets.

use roce_codec::IntRepr;

use super::in_flight::{NO_INT, Packet};

/// Index of a packet in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketId(u32);

#[cfg(test)]
impl PacketId {
    pub(crate) fn from_index(i: u32) -> PacketId {
        PacketId(i)
    }
}

/// A slab of packets with a free list, and beside it, slot for slot, the
/// in-band telemetry of the packets that carry it ([`Packet::int`]): a
/// line of bytes most packets never need stays out of every packet's
/// slot, and a packet's telemetry is found from its id alone, so it can be
/// fetched without waiting for the packet ([`PacketPool::prefetch_int`]).
/// The telemetry slab grows only once a packet carries some.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
    ints: Vec<IntRepr>,
}

impl PacketPool {
    pub fn new() -> PacketPool {
        PacketPool::default()
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.alloc_copy(&p)
    }

    /// [`PacketPool::alloc`] of a copy of `p`, copied once, straight into
    /// its slot.
    #[inline]
    pub fn alloc_copy(&mut self, p: &Packet) -> PacketId {
        debug_assert_eq!(p.int, NO_INT, "telemetry goes with set_int");
        self.live += 1;
        self.peak = self.peak.max(self.live);
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = *p;
            PacketId(i)
        } else {
            self.slots.extend_from_slice(std::slice::from_ref(p));
            PacketId((self.slots.len() - 1) as u32)
        }
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id.0 as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }

    /// Frees the packet and its telemetry.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(!self.free.contains(&id.0), "double free of {id:?}");
        self.live -= 1;
        self.free.push(id.0);
        self.slots[id.0 as usize].int = NO_INT;
    }

    /// Gives packet `id` the telemetry `int` (replacing any it had).
    pub fn set_int(&mut self, id: PacketId, int: IntRepr) {
        let i = id.0 as usize;
        if self.ints.len() <= i {
            self.ints
                .resize(self.slots.len().max(i + 1), IntRepr::default());
        }
        self.ints[i] = int;
        self.slots[i].int = id.0;
    }

    /// The telemetry packet `id` carries.
    #[inline]
    pub fn int(&self, id: PacketId) -> Option<&IntRepr> {
        self.int_of(self.get(id))
    }

    /// The telemetry of `pkt`, a packet of this pool.
    #[inline]
    pub fn int_of(&self, pkt: &Packet) -> Option<&IntRepr> {
        (pkt.int != NO_INT).then(|| &self.ints[pkt.int as usize])
    }

    #[inline]
    pub fn int_mut(&mut self, id: PacketId) -> Option<&mut IntRepr> {
        let i = self.get(id).int;
        (i != NO_INT).then(|| &mut self.ints[i as usize])
    }

    /// Where packet `id`'s telemetry would be, if the pool holds any:
    /// to ask the CPU for it while other work runs.
    #[inline]
    pub fn int_slot(&self, id: PacketId) -> Option<&IntRepr> {
        self.ints.get(id.0 as usize)
    }

    /// Packets currently allocated.
    pub fn live(&self) -> usize {
        self.live
    }

    pub fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::pkt;

    #[test]
    fn pool_reuses_slots() {
        let mut pool = PacketPool::new();
        let a = pool.alloc(pkt(1));
        let b = pool.alloc(pkt(2));
        pool.free(a);
        let c = pool.alloc(pkt(3));
        assert_eq!(a, c);
        assert_ne!(b, c);
        assert_eq!(pool.live(), 2);
        assert_eq!(pool.peak(), 2);
        assert_eq!(pool.get(c).ib.payload_len, 3);
    }

    /// Telemetry lives in its own slab, at its packet's index: gone with
    /// its packet, a reused slot carries none until given some.
    #[test]
    fn telemetry_goes_with_its_packet() {
        let mut pool = PacketPool::new();
        let (a, b) = (pool.alloc(pkt(1)), pool.alloc(pkt(2)));
        pool.set_int(a, IntRepr::source(4791, 5, 1));
        assert_eq!(pool.int(a).map(|i| i.remaining), Some(5));
        assert!(pool.int(b).is_none());
        pool.int_mut(a).unwrap().remaining = 4;
        pool.free(a);
        let c = pool.alloc(pkt(3));
        assert!(pool.int(c).is_none(), "a reused slot has no telemetry");
        pool.set_int(b, IntRepr::source(4791, 2, 1));
        assert_eq!(
            pool.get(b).int,
            1,
            "a packet's telemetry is at its own index"
        );
        assert_eq!(pool.int(b).map(|i| i.remaining), Some(2));
        assert_eq!(
            pool.int_slot(a).map(|i| i.remaining),
            Some(4),
            "stale, flagged off"
        );
    }
}
