//! A block's resampling: the table a resample sums rows of, and the loop that sums them.

use crate::resample::Resampler;
use crate::{
    chunk_range, COL_AUC, COL_FED, COL_FULL, COL_N, COL_SUCCESS, COL_SURVIVORS, STAT_AUC,
    STAT_MEAN_FED, STAT_PEC, STAT_SUCCESS, STAT_TER,
};

/// A per-task table as the bootstrap reads it (prefix-exec's `score::DatasetBlock`): `tasks`
/// rows of `conditions × width` cells, columns `COL_*`.
pub trait BlockCells {
    fn dataset(&self) -> &str;
    fn tasks(&self) -> usize;
    fn conditions(&self) -> usize;
    fn width(&self) -> usize;
    fn cells(&self) -> &[f64];
}

/// A block's task rows in the form a resample sums them: the integer columns in the narrowest
/// accumulator no resample sum can overflow, and the AUC-PEC column apart. Built once per block
/// and shared by all its chunks (and threads); it owns what it needs, so a Web Worker of the
/// browser's pool can build one from the cells it was sent ([`ResampleTable::from_cells`]).
pub struct ResampleTable {
    dataset: String,
    n_tasks: usize,
    n_conds: usize,
    width: usize,
    ints: Ints,
    aucs: Vec<f64>,
}

enum Ints {
    U16(Vec<u16>),
    U32(Vec<u32>),
    F64(Vec<f64>),
}

impl ResampleTable {
    pub fn new(block: &impl BlockCells) -> Self {
        Self::from_cells(
            block.dataset(),
            block.tasks(),
            block.conditions(),
            block.width(),
            block.cells(),
        )
    }

    /// The table of a block given by its parts: `cells` as [`BlockCells::cells`] (`tasks` rows
    /// of `conditions × width`). `None`-free: the caller checks `cells.len()`.
    pub fn from_cells(
        dataset: &str,
        tasks: usize,
        conditions: usize,
        width: usize,
        cells: &[f64],
    ) -> Self {
        debug_assert_eq!(cells.len(), tasks * conditions * width);
        // Every column but AUC-PEC's holds integers. Summed as u16 (or u32) they take a quarter
        // (or half) of the memory traffic and SIMD lanes of f64 — the inner loop's whole cost —
        // and convert to exactly the same f64 values, so the result does not depend on the
        // path. The narrowest type no resample sum can overflow is used: a resample draws
        // `tasks` rows, so no sum exceeds the largest cell × tasks.
        let max_cell = (0..cells.len())
            .filter(|i| i % width != COL_AUC)
            .map(|i| cells[i])
            .fold(0.0f64, f64::max);
        let aucs = cells
            .chunks_exact(width)
            .map(|cell| cell[COL_AUC])
            .collect();
        let max_sum = max_cell * tasks as f64;
        let ints = if max_sum <= f64::from(u16::MAX) {
            Ints::U16(int_columns(cells, width))
        } else if max_sum <= f64::from(u32::MAX) {
            Ints::U32(int_columns(cells, width))
        } else {
            Ints::F64(int_columns(cells, width))
        };
        ResampleTable {
            dataset: dataset.to_string(),
            n_tasks: tasks,
            n_conds: conditions,
            width,
            ints,
            aucs,
        }
    }

    /// The values of chunk `chunk` of a bootstrap with `resamples` resamples under `seed`.
    pub fn chunk(&self, resamples: usize, seed: u64, chunk: usize) -> Vec<f64> {
        let mut rng = Resampler::for_chunk(seed, &self.dataset, chunk as u64);
        let len = chunk_range(resamples, chunk).len();
        match &self.ints {
            Ints::U16(ints) => run(self, ints, &mut rng, len),
            Ints::U32(ints) => run(self, ints, &mut rng, len),
            Ints::F64(ints) => run(self, ints, &mut rng, len),
        }
    }
}

/// The integer columns (all but AUC) of every cell, task row by task row.
fn int_columns<T: Count>(cells: &[f64], width: usize) -> Vec<T> {
    cells
        .chunks_exact(width)
        .flat_map(|cell| {
            cell.iter()
                .enumerate()
                .filter(|&(col, _)| col != COL_AUC)
                .map(|(_, &v)| T::from_cell(v))
        })
        .collect()
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

impl Count for u16 {
    fn from_cell(v: f64) -> Self {
        v as u16
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
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

/// `resamples` resamples of `block` drawn from `rng`: the values of one chunk.
fn run<T: Count>(
    table: &ResampleTable,
    ints: &[T],
    rng: &mut Resampler,
    resamples: usize,
) -> Vec<f64> {
    let aucs = &table.aucs;
    let n_conds = table.n_conds;
    let k_max = table.width - COL_SURVIVORS;
    let stats = STAT_PEC + k_max;
    let int_width = table.width - 1;
    let int_row = n_conds * int_width;
    let mut values = vec![f64::NAN; n_conds * stats * resamples];
    let mut acc = vec![T::default(); int_row];
    let mut acc_auc = vec![0.0f64; n_conds];
    let shape = Shape {
        n_tasks: table.n_tasks as u32,
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
            ints,
            aucs,
            rng,
            &mut acc,
            &mut acc_auc,
            &mut values,
            b,
        );
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of `tasks` rows with integer columns of any size (the accumulator rule only
    /// looks at the largest cell) and fractional AUC sums.
    fn cells(tasks: usize, conds: usize, width: usize, scale: f64) -> Vec<f64> {
        let mut cells = Vec::new();
        for t in 0..tasks {
            for c in 0..conds {
                for col in 0..width {
                    let v = ((t * 7 + c * 3 + col * 5) % 11) as f64;
                    cells.push(if col == COL_AUC { v / 7.0 } else { v * scale });
                }
            }
        }
        cells
    }

    /// The u16 and u32 fast paths and the f64 fallback (each taken when a sum could overflow the
    /// narrower type) must give the same bits: the choice is an optimisation, never a change of
    /// result.
    #[test]
    fn integer_and_float_accumulation_agree() {
        let (tasks, conds, width) = (17, 3, COL_SURVIVORS + 5);
        let cells = cells(tasks, conds, width, 1.0);
        let table = ResampleTable::from_cells("d", tasks, conds, width, &cells);
        for chunk in 0..3u64 {
            let mut rng = Resampler::for_chunk(7, "d", chunk);
            let fast = run::<u32>(&table, &int_columns(&cells, width), &mut rng, 300);
            let mut rng = Resampler::for_chunk(7, "d", chunk);
            let narrow = run::<u16>(&table, &int_columns(&cells, width), &mut rng, 300);
            let mut rng = Resampler::for_chunk(7, "d", chunk);
            let wide = run::<f64>(&table, &int_columns(&cells, width), &mut rng, 300);
            assert_eq!(fast.len(), wide.len());
            for ((a, b), c) in fast.iter().zip(&wide).zip(&narrow) {
                assert_eq!(a.to_bits(), b.to_bits());
                assert_eq!(a.to_bits(), c.to_bits());
            }
        }
        assert!(matches!(table.ints, Ints::U16(_)));
    }

    #[test]
    fn the_narrowest_safe_accumulator_is_chosen() {
        let table = |scale: f64| {
            let cells = cells(17, 2, COL_SURVIVORS + 2, scale);
            ResampleTable::from_cells("d", 17, 2, COL_SURVIVORS + 2, &cells)
        };
        // Largest integer cell 10·scale, 17 draws: u16 up to 65,535, u32 up to 4,294,967,295.
        assert!(matches!(table(385.0).ints, Ints::U16(_)));
        assert!(matches!(table(386.0).ints, Ints::U32(_)));
        assert!(matches!(table(25_264_513.0).ints, Ints::U32(_)));
        assert!(matches!(table(25_264_514.0).ints, Ints::F64(_)));
    }
}
