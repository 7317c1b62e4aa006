//! The task-level bootstrap's random draws.
//!
//! Draws come from ChaCha8 (`rand_chacha::ChaCha8Rng`), seeded with the report's `u64` seed and
//! put on a stream chosen by the stratum's name (64-bit FNV-1a of its UTF-8 bytes). ChaCha is a
//! portable, documented generator: the same seed gives the same stream on every platform, so the
//! same input and seed give the same intervals natively and in the browser. Giving each dataset
//! its own stream also means adding a dataset to a report leaves the other datasets' intervals
//! unchanged.
//!
//! An index is drawn as a `u32` (never `usize`, whose width differs between wasm32 and x86_64)
//! with `rand`'s uniform integer sampling, which is exact (unbiased) and specified per version;
//! the version is pinned through `Cargo.lock`.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random task draws for one stratum.
pub struct Resampler {
    rng: ChaCha8Rng,
}

impl Resampler {
    /// The generator for `stratum` under `seed`.
    pub fn new(seed: u64, stratum: &str) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(fnv1a64(stratum.as_bytes()));
        Resampler { rng }
    }

    /// A uniform index in `0..n` (`n > 0`).
    pub fn index(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }
}

/// 64-bit FNV-1a.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn the_stream_is_pinned() {
        // A change here changes every published interval: it must be deliberate.
        let mut r = Resampler::new(0, "bfcl-v3");
        let draws: Vec<u32> = (0..8).map(|_| r.index(200)).collect();
        let again: Vec<u32> = {
            let mut r = Resampler::new(0, "bfcl-v3");
            (0..8).map(|_| r.index(200)).collect()
        };
        assert_eq!(draws, again);
        let other: Vec<u32> = {
            let mut r = Resampler::new(0, "toolsandbox");
            (0..8).map(|_| r.index(200)).collect()
        };
        assert_ne!(draws, other);
        assert!(draws.iter().all(|&d| d < 200));
    }
}
