//! The task-level percentile bootstrap (paper §3.1, `metrics.md` "Uncertainty").
//!
//! Within one dataset (the stratum), each resample draws `|tasks|` task ids uniformly with
//! replacement, and that *same* draw is applied to every (model, method) condition of the
//! dataset: a drawn task contributes all its rollouts in that condition, as many times as it was
//! drawn. Because conditions share the draw, differences between two conditions of a dataset are
//! paired by task.
//!
//! A resample is the sum of the drawn tasks' rows of [`DatasetBlock::cells`]; statistics are
//! ratios of those sums. A condition whose tasks were all missed by a draw has no rollouts in
//! that resample; its statistics are then undefined (NaN) for that resample and skipped by the
//! percentile rule.

use crate::score::{DatasetBlock, COL_SURVIVORS};
use crate::stats::percentile::Values;
// The resampling loop lives in the `prefix-exec-kernel` crate (so the browser's size-optimised
// worker can still compile it for speed); its table, layout and chunking are re-exported here.
pub use prefix_exec_kernel::{
    chunk_range, BlockCells, ResampleTable, CHUNK, STAT_AUC, STAT_MEAN_FED, STAT_PEC, STAT_SUCCESS,
    STAT_TER,
};

/// The number of chunks of a bootstrap with `resamples` resamples.
pub fn chunk_count(resamples: usize) -> usize {
    resamples.div_ceil(CHUNK)
}

/// Resampled statistics of one dataset block, held as its chunks.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockSamples {
    pub resamples: usize,
    /// Statistics per condition: `STAT_PEC + K`.
    pub stats: usize,
    /// Chunk `i` (resamples [`chunk_range`]`(resamples, i)`, `len` of them) holds
    /// `values[(c·stats + s)·len + b]`: statistic `s` of local condition `c` in the chunk's
    /// resample `b` — one contiguous run per (condition, statistic), as [`bootstrap_chunk`]
    /// returns it.
    pub chunks: Vec<Vec<f64>>,
}

impl BlockSamples {
    /// Assembles a block's samples from its chunks, in chunk order.
    pub fn from_chunks(resamples: usize, stats: usize, chunks: Vec<Vec<f64>>) -> Self {
        debug_assert_eq!(chunks.len(), chunk_count(resamples));
        BlockSamples {
            resamples,
            stats,
            chunks,
        }
    }

    /// The local conditions (columns) resampled: a block's conditions, plus the shared-task
    /// columns of its cross-condition pairs when the widened block was resampled.
    pub fn columns(&self) -> usize {
        match self.chunks.first() {
            Some(first) if self.stats > 0 => {
                first.len() / (self.stats * chunk_range(self.resamples, 0).len().max(1))
            }
            _ => 0,
        }
    }

    /// The series of statistic `stat` for local condition `c`, resample by resample.
    pub fn series(&self, c: usize, stat: usize) -> impl Iterator<Item = f64> + Clone + '_ {
        self.column(c, stat).runs().flatten().copied()
    }

    /// The same series, by reference.
    pub fn column(&self, c: usize, stat: usize) -> Series<'_> {
        Series {
            samples: self,
            c,
            stat,
        }
    }
}

/// One statistic of one local condition across a block's resamples: a run of values per chunk.
#[derive(Clone, Copy)]
pub struct Series<'a> {
    samples: &'a BlockSamples,
    c: usize,
    stat: usize,
}

impl<'a> Series<'a> {
    /// The chunks' runs, in resample order.
    fn runs(self) -> impl Iterator<Item = &'a [f64]> + Clone {
        let Series { samples, c, stat } = self;
        samples.chunks.iter().enumerate().map(move |(i, values)| {
            let len = chunk_range(samples.resamples, i).len();
            let start = (c * samples.stats + stat) * len;
            &values[start..start + len]
        })
    }

    pub fn to_vec(self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.samples.resamples);
        for run in self.runs() {
            out.extend_from_slice(run);
        }
        out
    }

    /// `self − other`, resample by resample, read in place: a paired difference, when both
    /// series come from the same draws (the same block, or its widened form).
    pub fn minus(self, other: Series<'a>) -> Difference<'a> {
        debug_assert_eq!(self.samples.resamples, other.samples.resamples);
        Difference(self, other)
    }
}

impl Values for Series<'_> {
    fn count(&self) -> usize {
        self.samples.resamples
    }
    fn at(&self, i: usize) -> f64 {
        let chunk = i / CHUNK;
        let len = chunk_range(self.samples.resamples, chunk).len();
        self.samples.chunks[chunk][(self.c * self.samples.stats + self.stat) * len + i % CHUNK]
    }
    fn each(&self, mut f: impl FnMut(f64)) {
        for run in self.runs() {
            for &v in run {
                f(v);
            }
        }
    }
}

/// The difference of two series of the same draws ([`Series::minus`]).
#[derive(Clone, Copy)]
pub struct Difference<'a>(Series<'a>, Series<'a>);

impl Values for Difference<'_> {
    fn count(&self) -> usize {
        self.0.count()
    }
    fn at(&self, i: usize) -> f64 {
        self.0.at(i) - self.1.at(i)
    }
    fn each(&self, mut f: impl FnMut(f64)) {
        for (a, b) in self.0.runs().zip(self.1.runs()) {
            for (x, y) in a.iter().zip(b) {
                f(x - y);
            }
        }
    }
}

/// The statistics per condition of a block: TER, mean FED, AUC-PEC, success, PEC(1..=K).
pub fn block_stats(block: &DatasetBlock) -> usize {
    STAT_PEC + block.width - COL_SURVIVORS
}

/// Runs all `resamples` resamples of one block, chunk by chunk, on the calling thread.
/// `progress(done)` is called after every chunk with the number of resamples done so far.
pub fn bootstrap_block(
    block: &DatasetBlock,
    resamples: usize,
    seed: u64,
    progress: &mut dyn FnMut(usize),
) -> BlockSamples {
    let table = ResampleTable::new(block);
    let chunks = (0..chunk_count(resamples))
        .map(|i| {
            let values = table.chunk(resamples, seed, i);
            progress(chunk_range(resamples, i).end);
            values
        })
        .collect();
    BlockSamples::from_chunks(resamples, block_stats(block), chunks)
}

impl BlockCells for DatasetBlock {
    fn dataset(&self) -> &str {
        &self.dataset
    }
    fn tasks(&self) -> usize {
        self.tasks.len()
    }
    fn conditions(&self) -> usize {
        self.conditions.len()
    }
    fn width(&self) -> usize {
        self.width
    }
    fn cells(&self) -> &[f64] {
        &self.cells
    }
}

/// Runs chunk `chunk` of a bootstrap of `block` with `resamples` resamples: the values of
/// [`BlockSamples::chunks`]`[chunk]`.
pub fn bootstrap_chunk(
    block: &DatasetBlock,
    resamples: usize,
    seed: u64,
    chunk: usize,
) -> Vec<f64> {
    ResampleTable::new(block).chunk(resamples, seed, chunk)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::read_files;
    use crate::score::{aggregate, MaxDepth};

    /// A block's table is its cells, whichever accumulator the kernel picks (its own tests
    /// check that the u16, u32 and f64 paths give the same bits), and a chunk run alone equals
    /// the same chunk of the whole bootstrap.
    #[test]
    fn chunks_alone_equal_the_whole_bootstrap() {
        let mut text = String::new();
        for i in 0..90u32 {
            let steps: Vec<String> = (0..1 + i % 6)
                .map(|s| format!(r#"{{"ok":{}}}"#, (i + 3 * s) % 7 != 0))
                .collect();
            text.push_str(&format!(
                r#"{{"dataset":"d","task_id":"t{}","model":"m","method":"a{}","success":{},"steps":[{}]}}"#,
                i % 17,
                i % 3,
                i % 4 != 0,
                steps.join(",")
            ));
            text.push('\n');
        }
        let corpus = read_files([("r.jsonl", text.as_bytes())]);
        let agg = aggregate(&corpus, MaxDepth::Fixed(5));
        let block = &agg.blocks[0];
        let from_parts = ResampleTable::from_cells(
            &block.dataset,
            block.tasks.len(),
            block.conditions.len(),
            block.width,
            &block.cells,
        );
        assert_eq!(
            ResampleTable::new(block).chunk(300, 7, 1),
            from_parts.chunk(300, 7, 1)
        );
        let whole = bootstrap_block(block, 300, 7, &mut |_| {});
        assert_eq!(whole.chunks.len(), 2);
        assert_eq!(whole.chunks[0], bootstrap_chunk(block, 300, 7, 0));
        assert_eq!(whole.chunks[1], bootstrap_chunk(block, 300, 7, 1));
        assert_eq!(whole.stats, block_stats(block));
    }

    use crate::stats::percentile::{central_interval_by_selection, central_interval_of};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A series and a paired difference read in place (chunk by chunk, or at an index) give
        /// the values and the interval of the same series collected into a vector.
        #[test]
        fn series_read_in_place_equal_collected(
            resamples in 1usize..6000,
            stats in 1usize..4,
            columns in 2usize..4,
            seed in any::<u64>(),
            nan_every in 0usize..50,
        ) {
            let mut state = seed | 1;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let chunks: Vec<Vec<f64>> = (0..chunk_count(resamples))
                .map(|i| {
                    let len = chunk_range(resamples, i).len();
                    (0..columns * stats * len)
                        .map(|_| {
                            let r = next();
                            if nan_every > 0 && r % nan_every as u64 == 0 {
                                f64::NAN
                            } else {
                                (r % 401) as f64 / 400.0
                            }
                        })
                        .collect()
                })
                .collect();
            let samples = BlockSamples::from_chunks(resamples, stats, chunks);
            let (a, b) = (samples.column(0, stats - 1), samples.column(1, 0));
            let collected: Vec<f64> = samples.series(0, stats - 1).collect();
            let to_bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(to_bits(&a.to_vec()), to_bits(&collected));
            let mut by_index = Vec::new();
            for i in 0..a.count() {
                by_index.push(a.at(i).to_bits());
            }
            prop_assert_eq!(by_index, to_bits(&collected));
            let difference: Vec<f64> = collected
                .iter()
                .zip(samples.series(1, 0))
                .map(|(x, y)| x - y)
                .collect();
            let d = a.minus(b);
            for (i, v) in difference.iter().enumerate() {
                prop_assert_eq!(d.at(i).to_bits(), v.to_bits());
            }
            let bits = |x: Option<[f64; 2]>| x.map(|[l, h]| [l.to_bits(), h.to_bits()]);
            prop_assert_eq!(
                bits(central_interval_of(&d, 0.95)),
                bits(central_interval_by_selection(&mut difference.clone(), 0.95))
            );
            prop_assert_eq!(
                bits(central_interval_of(&a, 0.9)),
                bits(central_interval_by_selection(&mut collected.clone(), 0.9))
            );
        }
    }
}
