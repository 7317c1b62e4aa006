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

use crate::score::{DatasetBlock, COL_AUC, COL_FED, COL_FULL, COL_N, COL_SUCCESS, COL_SURVIVORS};
use crate::stats::resample::Resampler;

/// Statistic slots of [`BlockSamples`]: TER, mean FED, AUC-PEC, final success, then PEC(k).
pub const STAT_TER: usize = 0;
pub const STAT_MEAN_FED: usize = 1;
pub const STAT_AUC: usize = 2;
pub const STAT_SUCCESS: usize = 3;
pub const STAT_PEC: usize = 4;

/// Resampled statistics of one dataset block.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockSamples {
    pub resamples: usize,
    /// Statistics per condition: `STAT_PEC + K`.
    pub stats: usize,
    /// `values[(c·stats + s)·resamples + b]`: statistic `s` of local condition `c` in resample
    /// `b`; one contiguous series per (condition, statistic).
    pub values: Vec<f64>,
}

impl BlockSamples {
    /// The series of statistic `stat` for local condition `c`.
    pub fn series(&self, c: usize, stat: usize) -> &[f64] {
        let start = (c * self.stats + stat) * self.resamples;
        &self.values[start..start + self.resamples]
    }
}

/// Runs `resamples` resamples of one block with the dataset's own stream of `seed`.
/// `progress(done)` is called every few hundred resamples with the number done so far.
pub fn bootstrap_block(
    block: &DatasetBlock,
    resamples: usize,
    seed: u64,
    progress: &mut dyn FnMut(usize),
) -> BlockSamples {
    let n_conds = block.conditions.len();
    let k_max = block.width - COL_SURVIVORS;
    let stats = STAT_PEC + k_max;
    let mut values = vec![f64::NAN; n_conds * stats * resamples];
    let n_tasks = block.tasks.len() as u32;
    let mut rng = Resampler::new(seed, &block.dataset);
    let mut acc = vec![0.0f64; n_conds * block.width];
    for b in 0..resamples {
        acc.fill(0.0);
        for _ in 0..n_tasks {
            let t = rng.index(n_tasks) as usize;
            for (a, x) in acc.iter_mut().zip(block.row(t)) {
                *a += x;
            }
        }
        for c in 0..n_conds {
            let cell = &acc[c * block.width..(c + 1) * block.width];
            let n = cell[COL_N];
            if n == 0.0 {
                continue; // undefined in this resample: stays NaN
            }
            let base = c * stats;
            let mut put = |s: usize, v: f64| values[(base + s) * resamples + b] = v;
            put(STAT_TER, cell[COL_FULL] / n);
            put(STAT_MEAN_FED, cell[COL_FED] / n);
            put(STAT_AUC, cell[COL_AUC] / n);
            put(STAT_SUCCESS, cell[COL_SUCCESS] / n);
            for k in 0..k_max {
                put(STAT_PEC + k, cell[COL_SURVIVORS + k] / n);
            }
        }
        if (b + 1) % 256 == 0 || b + 1 == resamples {
            progress(b + 1);
        }
    }
    BlockSamples {
        resamples,
        stats,
        values,
    }
}
