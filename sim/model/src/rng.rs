//! One random stream per component.
//!
//! Each component (a lossy link, a QPN allocator, a LAG remapper) gets its
//! own ChaCha8 stream seeded from `(scenario seed, component name)`, so that
//! adding a component, or a component drawing one more number, never changes
//! what the others draw.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// The stream for the component called `name` under scenario seed `seed`.
pub fn component_rng(seed: u64, name: &str) -> ChaCha8Rng {
    // FNV-1a over the name, then mixed with the seed by splitmix64: stable
    // across platforms and Rust versions (unlike `DefaultHasher`).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut seed32 = [0u8; 32];
    let mut x = seed ^ h.rotate_left(17);
    for chunk in seed32.chunks_exact_mut(8) {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes());
    }
    ChaCha8Rng::from_seed(seed32)
}

/// A uniform `f64` in [0, 1) from 53 random bits.
pub fn unit_f64(rng: &mut ChaCha8Rng) -> f64 {
    use rand_chacha::rand_core::Rng;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `0..n` (n > 0), by rejection so it is unbiased.
pub fn below(rng: &mut ChaCha8Rng, n: u32) -> u32 {
    use rand_chacha::rand_core::Rng;
    debug_assert!(n > 0);
    let zone = u32::MAX - (u32::MAX % n);
    loop {
        let v = rng.next_u32();
        if v < zone {
            return v % n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_independent() {
        let a1: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(component_rng(1, "link.a"), |r, _| Some(below(r, 1000)))
            .collect();
        let a2: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(component_rng(1, "link.a"), |r, _| Some(below(r, 1000)))
            .collect();
        let b: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(component_rng(1, "link.b"), |r, _| Some(below(r, 1000)))
            .collect();
        let c: Vec<u32> = (0..4)
            .map(|_| 0)
            .scan(component_rng(2, "link.a"), |r, _| Some(below(r, 1000)))
            .collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
        let mut r = component_rng(7, "x");
        for _ in 0..1000 {
            let f = unit_f64(&mut r);
            assert!((0.0..1.0).contains(&f));
        }
    }
}
