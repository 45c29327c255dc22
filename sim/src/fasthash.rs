//! A small, fixed (non-randomized) hasher for the per-packet lookups: MAC
//! forwarding tables and QPN → QP maps. Keys are short integers or 6-byte
//! MACs that an attacker does not choose, so SipHash's DoS resistance buys
//! nothing here and costs a visible share of the run time.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate over 8-byte words (the FxHash scheme).
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_macs_hash_apart() {
        let mut m: FastMap<[u8; 6], u32> = FastMap::default();
        for i in 0..1000u32 {
            m.insert([2, 0, 0, (i >> 8) as u8, i as u8, 1], i);
        }
        for i in 0..1000u32 {
            assert_eq!(m[&[2, 0, 0, (i >> 8) as u8, i as u8, 1]], i);
        }
    }
}
