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
    // Every column but AUC-PEC's holds integers. Summed as u32 they take half the memory traffic
    // and SIMD lanes of f64 — the inner loop's whole cost — and convert to exactly the same f64
    // values, so the result does not depend on the path. u32 is used whenever no resample sum can
    // overflow it.
    let max_cell = (0..block.cells.len())
        .filter(|i| i % block.width != COL_AUC)
        .map(|i| block.cells[i])
        .fold(0.0f64, f64::max);
    if max_cell * block.tasks.len() as f64 <= f64::from(u32::MAX) {
        run::<u32>(block, resamples, seed, progress)
    } else {
        run::<f64>(block, resamples, seed, progress)
    }
}

/// Sizes of one block's resampling.
struct Shape {
    n_tasks: u32,
    n_conds: usize,
    int_width: usize,
    int_row: usize,
    k_max: usize,
    stats: usize,
    resamples: usize,
}

/// Draws one resample and stores its statistics in column `b` of `values`.
///
/// A function of its own, never inlined: WebAssembly engines optimise a function fully only
/// after it has been called a few times, so a loop body that stays inside one long call would
/// run in the baseline tier for a whole dataset.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn one_resample<T: Count>(
    shape: &Shape,
    ints: &[T],
    aucs: &[f64],
    rng: &mut Resampler,
    acc: &mut [T],
    acc_auc: &mut [f64],
    values: &mut [f64],
    b: usize,
) {
    let Shape {
        n_tasks,
        n_conds,
        int_width,
        int_row,
        k_max,
        stats,
        resamples,
    } = *shape;
    let int_col = |col: usize| if col < COL_AUC { col } else { col - 1 };
    acc.fill(T::default());
    acc_auc.fill(0.0);
    for _ in 0..n_tasks {
        let t = rng.index(n_tasks) as usize;
        for (a, &x) in acc.iter_mut().zip(&ints[t * int_row..(t + 1) * int_row]) {
            *a += x;
        }
        for (a, &x) in acc_auc
            .iter_mut()
            .zip(&aucs[t * n_conds..(t + 1) * n_conds])
        {
            *a += x;
        }
    }
    for c in 0..n_conds {
        let cell = &acc[c * int_width..(c + 1) * int_width];
        let col = |col: usize| cell[int_col(col)].to_f64();
        let n = col(COL_N);
        if n == 0.0 {
            continue; // undefined in this resample: stays NaN
        }
        let base = c * stats;
        let mut put = |s: usize, v: f64| values[(base + s) * resamples + b] = v;
        put(STAT_TER, col(COL_FULL) / n);
        put(STAT_MEAN_FED, col(COL_FED) / n);
        put(STAT_AUC, acc_auc[c] / n);
        put(STAT_SUCCESS, col(COL_SUCCESS) / n);
        for k in 0..k_max {
            put(STAT_PEC + k, col(COL_SURVIVORS + k) / n);
        }
    }
}

/// An accumulator type for the integer columns.
trait Count: Copy + Default + std::ops::AddAssign {
    fn from_cell(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

impl Count for u32 {
    fn from_cell(v: f64) -> Self {
        v as u32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Count for f64 {
    fn from_cell(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

fn run<T: Count>(
    block: &DatasetBlock,
    resamples: usize,
    seed: u64,
    progress: &mut dyn FnMut(usize),
) -> BlockSamples {
    let n_conds = block.conditions.len();
    let k_max = block.width - COL_SURVIVORS;
    let stats = STAT_PEC + k_max;
    // Integer columns (all but AUC) per task row, and the AUC column apart.
    let int_width = block.width - 1;
    let mut ints: Vec<T> = Vec::with_capacity(block.cells.len());
    let mut aucs: Vec<f64> = Vec::with_capacity(block.cells.len() / block.width);
    for cell in block.cells.chunks_exact(block.width) {
        for (col, &v) in cell.iter().enumerate() {
            if col == COL_AUC {
                aucs.push(v);
            } else {
                ints.push(T::from_cell(v));
            }
        }
    }
    let int_row = n_conds * int_width;
    let mut values = vec![f64::NAN; n_conds * stats * resamples];
    let n_tasks = block.tasks.len() as u32;
    let mut rng = Resampler::new(seed, &block.dataset);
    let mut acc = vec![T::default(); int_row];
    let mut acc_auc = vec![0.0f64; n_conds];
    let shape = Shape {
        n_tasks,
        n_conds,
        int_width,
        int_row,
        k_max,
        stats,
        resamples,
    };
    for b in 0..resamples {
        one_resample(
            &shape,
            &ints,
            &aucs,
            &mut rng,
            &mut acc,
            &mut acc_auc,
            &mut values,
            b,
        );
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::read_files;
    use crate::score::{aggregate, MaxDepth};

    /// The u32 fast path and the f64 fallback (taken when a sum could overflow u32) must give
    /// the same bits: the choice is an optimisation, never a change of result.
    #[test]
    fn integer_and_float_accumulation_agree() {
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
        let fast = run::<u32>(block, 300, 7, &mut |_| {});
        let wide = run::<f64>(block, 300, 7, &mut |_| {});
        assert_eq!(fast.values.len(), wide.values.len());
        for (a, b) in fast.values.iter().zip(&wide.values) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert_eq!(bootstrap_block(block, 300, 7, &mut |_| {}), fast);
    }
}
