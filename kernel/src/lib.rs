//! The hot loops of prefix-exec's statistics (see its `stats` module, which re-exports these
//! items): the bootstrap's per-task table a resample sums rows of ([`ResampleTable`]), the
//! draws ([`resample::Resampler`]), the layout both share with the scoring code, and the
//! percentile selection of the intervals ([`percentile`]). And the innermost loop of reading a
//! JSON document whole ([`json`], re-exported by prefix-exec's `formats::scan`).
//!
//! A crate of its own for one reason: Cargo sets optimisation levels per crate. The browser's
//! worker is optimised for size except this crate, which stays at opt-level 3 so that the
//! compiler unrolls and vectorises (wasm SIMD) the loops where a report spends most of its time
//! (the root `Cargo.toml`, `[profile.wasm-worker]`). Its generic code is instantiated here where
//! it can be: a generic function is compiled in the crate that instantiates it, at that crate's
//! level.

pub mod json;
pub mod percentile;
pub mod resample;
pub mod samples;
mod table;

pub use table::{BlockCells, ResampleTable};

/// Column of a per-task table's cells (`score::DatasetBlock::cells`): rollouts.
pub const COL_N: usize = 0;
/// Column: fully executable rollouts (`FED = T + 1`).
pub const COL_FULL: usize = 1;
/// Column: successful rollouts.
pub const COL_SUCCESS: usize = 2;
/// Column: sum of FED.
pub const COL_FED: usize = 3;
/// Column: sum of `(FED − 1)/T`.
pub const COL_AUC: usize = 4;
/// Column of `#{FED > 1}`; `#{FED > k}` is at `COL_SURVIVORS + k − 1`.
pub const COL_SURVIVORS: usize = 5;

/// Statistic slots of a resample's values ([`samples::BlockSamples`]): TER, mean FED,
/// AUC-PEC, final success, then PEC(k).
pub const STAT_TER: usize = 0;
pub const STAT_MEAN_FED: usize = 1;
pub const STAT_AUC: usize = 2;
pub const STAT_SUCCESS: usize = 3;
pub const STAT_PEC: usize = 4;

/// Resamples per chunk. A dataset's `B` resamples are cut into chunks of this many (the last
/// one shorter): the unit of parallel work (threads natively, Web Workers in the browser) and of
/// random streams. Chunk `i` always covers resamples `i·CHUNK..` and draws from its own
/// position of the dataset's stream ([`resample::Resampler::for_chunk`]), so which thread or
/// worker runs it, and in what order, cannot change a number.
pub const CHUNK: usize = 250;

/// The resamples of chunk `chunk`.
pub fn chunk_range(resamples: usize, chunk: usize) -> std::ops::Range<usize> {
    let start = (chunk * CHUNK).min(resamples);
    start..((chunk + 1) * CHUNK).min(resamples)
}
