//! The task-level bootstrap's random draws.
//!
//! Draws come from ChaCha8 (`rand_chacha::ChaCha8Rng`), seeded with the report's `u64` seed and
//! put on a stream chosen by the stratum's name (64-bit FNV-1a of its UTF-8 bytes). ChaCha is a
//! portable, documented generator: the same seed gives the same stream on every platform, so the
//! same input and seed give the same intervals natively and in the browser. Giving each dataset
//! its own stream also means adding a dataset to a report leaves the other datasets' intervals
//! unchanged.
//!
//! The bootstrap cuts a dataset's resamples into chunks ([`crate::CHUNK`]) and
//! each chunk draws from its own position of the dataset's stream: chunk `i` starts at word
//! `i·2^CHUNK_WORD_BITS` ([`Resampler::for_chunk`]). A draw takes a data-dependent number of
//! words (uniform sampling rejects some), so chunks starting at fixed positions are what makes
//! chunk `i`'s draws independent of every other chunk — and of which thread runs it. Chunk 0
//! starts where the stream starts, so a bootstrap of at most one chunk draws what it always did.
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

    /// The generator for chunk `chunk` of `stratum`'s bootstrap under `seed`: the stream of
    /// [`Resampler::new`], from word `chunk·2^CHUNK_WORD_BITS` on.
    pub fn for_chunk(seed: u64, stratum: &str, chunk: u64) -> Self {
        assert!(chunk < 1 << (STREAM_WORD_BITS - CHUNK_WORD_BITS));
        let mut r = Resampler::new(seed, stratum);
        r.rng.set_word_pos(u128::from(chunk) << CHUNK_WORD_BITS);
        r
    }

    /// A uniform index in `0..n` (`n > 0`).
    pub fn index(&mut self, n: u32) -> u32 {
        self.rng.random_range(0..n)
    }
}

/// Words (32-bit) of a ChaCha stream that `set_word_pos` can address: a 64-bit block counter
/// × 16 words per block.
const STREAM_WORD_BITS: u32 = 68;

/// Words reserved per chunk: 2^48 — a chunk of 250 resamples would need 10^12 tasks to reach the
/// next one, and 2^20 chunks (2.6·10^8 resamples, far above `MAX_BOOTSTRAP`) fit in a stream.
pub const CHUNK_WORD_BITS: u32 = 48;

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

    #[test]
    fn chunks_start_at_fixed_positions() {
        // Chunk 0 is the stream itself; chunk 1 is the same stream further on, not a function
        // of how many words chunk 0 used.
        let draw = |r: &mut Resampler| (0..16).map(|_| r.index(37)).collect::<Vec<_>>();
        assert_eq!(
            draw(&mut Resampler::for_chunk(3, "d", 0)),
            draw(&mut Resampler::new(3, "d"))
        );
        let mut r = Resampler::new(3, "d");
        r.rng.set_word_pos(1u128 << CHUNK_WORD_BITS);
        assert_eq!(draw(&mut Resampler::for_chunk(3, "d", 1)), draw(&mut r));
        assert_ne!(
            draw(&mut Resampler::for_chunk(3, "d", 1)),
            draw(&mut Resampler::for_chunk(3, "d", 2))
        );
    }
}
