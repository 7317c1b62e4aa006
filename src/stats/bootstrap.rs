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
// The resampling loop lives in the `prefix-exec-kernel` crate (so the browser's size-optimised
// worker can still compile it for speed); its table, layout and chunking are re-exported here.
pub use prefix_exec_kernel::samples::{chunk_count, BlockSamples, Difference, Series};
pub use prefix_exec_kernel::{
    chunk_range, BlockCells, ResampleTable, CHUNK, STAT_AUC, STAT_MEAN_FED, STAT_PEC, STAT_SUCCESS,
    STAT_TER,
};

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
}
