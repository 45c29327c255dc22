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
///
/// Both slabs grow by fixed chunks ([`Chunked`]), never by moving: a
/// slab that doubles holds the old and the new array while it copies,
/// and then up to twice what it needs. The frames buffered in a
/// 1,024-host fat-tree filled 524,288 slots of 320 bytes: the last
/// doubling alone held 252 MB, two thirds of the run's peak.
#[derive(Debug, Default)]
pub struct PacketPool {
    slots: Chunked<Packet>,
    free: Vec<u32>,
    live: usize,
    peak: usize,
    ints: Chunked<IntRepr>,
}

/// `1 << CHUNK_BITS` slots per chunk: 4,096 packets, 1.3 MB.
const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

/// A growable array in chunks of [`CHUNK`] slots that never move: index
/// `i` is slot `i % CHUNK` of chunk `i / CHUNK`.
#[derive(Debug)]
struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy> Chunked<T> {
    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    /// Appends `v`; returns its index.
    #[inline]
    fn push(&mut self, v: &T) -> usize {
        if self.len == self.chunks.len() * CHUNK {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let last = self.chunks.last_mut().expect("a chunk with room");
        last.extend_from_slice(std::slice::from_ref(v));
        self.len += 1;
        self.len - 1
    }

    /// Grows to `n` slots, the new ones `fill`.
    fn resize(&mut self, n: usize, fill: T) {
        while self.len < n {
            self.push(&fill);
        }
    }

    #[inline]
    fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i >> CHUNK_BITS)?.get(i & (CHUNK - 1))
    }
}

impl<T> std::ops::Index<usize> for Chunked<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }
}

impl<T> std::ops::IndexMut<usize> for Chunked<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i >> CHUNK_BITS][i & (CHUNK - 1)]
    }
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
            PacketId(self.slots.push(p) as u32)
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
        let many: Vec<_> = (0..2 * CHUNK as u32 + 5)
            .map(|n| pool.alloc(pkt(n)))
            .collect();
        pool.set_int(many[CHUNK + 7], IntRepr::source(4791, 3, 1));
        for (n, &id) in many.iter().enumerate() {
            assert_eq!(pool.get(id).ib.payload_len, n as u32, "slots across chunks");
        }
        assert_eq!(pool.int(many[CHUNK + 7]).map(|i| i.remaining), Some(3));
        assert!(pool.int(many[2 * CHUNK]).is_none());
        assert_eq!(
            pool.int_slot(a).map(|i| i.remaining),
            Some(4),
            "stale, flagged off"
        );
    }
}
