//! The packet pool: [`Packet`]s in a slab with a free list, and the
//! [`PacketId`]s events carry instead of packets.

use super::in_flight::Packet;

/// Index of a packet in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PacketId(u32);

#[cfg(test)]
impl PacketId {
    pub(crate) fn from_index(i: u32) -> PacketId {
        PacketId(i)
    }
}

/// A slab of packets with a free list.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
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

    #[inline]
    pub fn free(&mut self, id: PacketId) {
        debug_assert!(!self.free.contains(&id.0), "double free of {id:?}");
        self.live -= 1;
        self.free.push(id.0);
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
}
