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
/// type that holds every cell (summed into the narrowest accumulator no resample sum can
/// overflow, see [`Ints`]), and the AUC-PEC column apart. Built once per block
/// and shared by all its chunks (and threads); it owns what it needs, so a Web Worker of the
/// browser's pool can build one from the cells it was sent ([`ResampleTable::from_cells`]).
pub struct ResampleTable {
    dataset: String,
    n_tasks: usize,
    n_conds: usize,
    width: usize,
    /// The largest integer cell: how many draws a batch may sum in the table's type.
    max_cell: f64,
    ints: Ints,
    aucs: Vec<f64>,
}

/// The integer columns as a resample sums them: the table's cells in the narrowest type that
/// holds every cell, summed in batches (as many draws as cannot overflow it) into accumulators
/// of the narrowest type no resample sum can overflow. Named table type, then accumulator type.
enum Ints {
    U8U16(Vec<u8>),
    U8U32(Vec<u8>),
    U16U16(Vec<u16>),
    U16U32(Vec<u16>),
    U32U32(Vec<u32>),
    F64F64(Vec<f64>),
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
        // The table's rows are what a resample reads, a random row per draw: cells held in u8
        // (when every cell fits) halve that traffic again, and are summed in batches of draws
        // that cannot overflow u8 before being added to the wider accumulators.
        let max_sum = max_cell * tasks as f64;
        let small = max_cell <= f64::from(u8::MAX);
        let ints = if max_sum <= f64::from(u16::MAX) {
            if small {
                Ints::U8U16(int_columns(cells, width))
            } else {
                Ints::U16U16(int_columns(cells, width))
            }
        } else if max_sum <= f64::from(u32::MAX) {
            if small {
                Ints::U8U32(int_columns(cells, width))
            } else if max_cell <= f64::from(u16::MAX) {
                Ints::U16U32(int_columns(cells, width))
            } else {
                Ints::U32U32(int_columns(cells, width))
            }
        } else {
            Ints::F64F64(int_columns(cells, width))
        };
        ResampleTable {
            dataset: dataset.to_string(),
            n_tasks: tasks,
            n_conds: conditions,
            width,
            max_cell,
            ints,
            aucs,
        }
    }

    /// The values of chunk `chunk` of a bootstrap with `resamples` resamples under `seed`.
    pub fn chunk(&self, resamples: usize, seed: u64, chunk: usize) -> Vec<f64> {
        let mut rng = Resampler::for_chunk(seed, &self.dataset, chunk as u64);
        let len = chunk_range(resamples, chunk).len();
        match &self.ints {
            Ints::U8U16(ints) => run::<u8, u16>(self, ints, &mut rng, len),
            Ints::U8U32(ints) => run::<u8, u32>(self, ints, &mut rng, len),
            Ints::U16U16(ints) => run::<u16, u16>(self, ints, &mut rng, len),
            Ints::U16U32(ints) => run::<u16, u32>(self, ints, &mut rng, len),
            Ints::U32U32(ints) => run::<u32, u32>(self, ints, &mut rng, len),
            Ints::F64F64(ints) => run::<f64, f64>(self, ints, &mut rng, len),
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
    /// Draws a batch sums in the table's type before it is added to the accumulators.
    batch_draws: u32,
}

/// Draws one resample and stores its statistics in column `b` of `values`.
///
/// A function of its own, never inlined: WebAssembly engines optimise a function fully only
/// after it has been called a few times, so a loop body that stays inside one long call would
/// run in the baseline tier for a whole dataset.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn one_resample<S: Count, W: Count + From<S>>(
    shape: &Shape,
    ints: &[S],
    aucs: &[f64],
    rng: &mut Resampler,
    batch: &mut [S],
    acc: &mut [W],
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
        batch_draws,
    } = *shape;
    let int_col = |col: usize| if col < COL_AUC { col } else { col - 1 };
    acc.fill(W::default());
    batch.fill(S::default());
    acc_auc.fill(0.0);
    let mut left = batch_draws;
    for _ in 0..n_tasks {
        let t = rng.index(n_tasks) as usize;
        for (a, &x) in batch.iter_mut().zip(&ints[t * int_row..(t + 1) * int_row]) {
            *a += x;
        }
        for (a, &x) in acc_auc
            .iter_mut()
            .zip(&aucs[t * n_conds..(t + 1) * n_conds])
        {
            *a += x;
        }
        left -= 1;
        if left == 0 {
            flush(batch, acc);
            left = batch_draws;
        }
    }
    flush(batch, acc);
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

/// Adds a batch's sums to the accumulators and empties it.
fn flush<S: Count, W: Count + From<S>>(batch: &mut [S], acc: &mut [W]) {
    for (w, s) in acc.iter_mut().zip(batch.iter_mut()) {
        *w += W::from(*s);
        *s = S::default();
    }
}

/// A type for the integer columns: of the table's cells, or of the sums.
trait Count: Copy + Default + std::ops::AddAssign {
    /// The largest integer it holds exactly.
    const MAX: f64;
    fn from_cell(v: f64) -> Self;
    fn to_f64(self) -> f64;
}

/// The unsigned types, each converting exactly to and from `f64`.
macro_rules! unsigned_count {
    ($($t:ty),*) => {$(
        impl Count for $t {
            const MAX: f64 = <$t>::MAX as f64;
            fn from_cell(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
        }
    )*};
}

unsigned_count!(u8, u16, u32);

impl Count for f64 {
    /// 2^53: every integer up to it is exact.
    const MAX: f64 = 9_007_199_254_740_992.0;
    fn from_cell(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// `resamples` resamples of `block` drawn from `rng`: the values of one chunk.
fn run<S: Count, W: Count + From<S>>(
    table: &ResampleTable,
    ints: &[S],
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
    let mut acc = vec![W::default(); int_row];
    let mut batch = vec![S::default(); int_row];
    let mut acc_auc = vec![0.0f64; n_conds];
    let shape = Shape {
        n_tasks: table.n_tasks as u32,
        n_conds,
        int_width,
        int_row,
        k_max,
        stats,
        resamples,
        // At least one draw; a table of zeros may sum any number.
        batch_draws: (S::MAX / table.max_cell.max(1.0)).min(f64::from(u32::MAX)) as u32,
    };
    for b in 0..resamples {
        one_resample(
            &shape,
            ints,
            aucs,
            rng,
            &mut batch,
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

    /// Every table type and accumulator type (each taken when a cell or a sum could overflow the
    /// narrower one), and batches of any number of draws, must give the same bits: the choice is
    /// an optimisation, never a change of result.
    #[test]
    fn integer_and_float_accumulation_agree() {
        let (tasks, conds, width) = (17, 3, COL_SURVIVORS + 5);
        let cells = cells(tasks, conds, width, 1.0);
        let mut table = ResampleTable::from_cells("d", tasks, conds, width, &cells);
        assert!(matches!(table.ints, Ints::U8U16(_)));
        let true_max = table.max_cell;
        // A larger bound than the true largest cell is as safe, and makes the u8 batches short:
        // 255 → one draw per batch, 60 → four; 17 tasks are drawn per resample.
        for max_cell in [true_max, 60.0, 255.0] {
            table.max_cell = max_cell;
            for chunk in 0..3u64 {
                let rng = || Resampler::for_chunk(7, "d", chunk);
                let reference =
                    run::<f64, f64>(&table, &int_columns(&cells, width), &mut rng(), 300);
                let others = [
                    run::<u8, u16>(&table, &int_columns(&cells, width), &mut rng(), 300),
                    run::<u8, u32>(&table, &int_columns(&cells, width), &mut rng(), 300),
                    run::<u16, u16>(&table, &int_columns(&cells, width), &mut rng(), 300),
                    run::<u16, u32>(&table, &int_columns(&cells, width), &mut rng(), 300),
                    run::<u32, u32>(&table, &int_columns(&cells, width), &mut rng(), 300),
                ];
                for other in others {
                    assert_eq!(other.len(), reference.len());
                    for (a, b) in other.iter().zip(&reference) {
                        assert_eq!(a.to_bits(), b.to_bits(), "max cell {max_cell}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_narrowest_safe_accumulator_is_chosen() {
        let table = |scale: f64| {
            let cells = cells(17, 2, COL_SURVIVORS + 2, scale);
            ResampleTable::from_cells("d", 17, 2, COL_SURVIVORS + 2, &cells)
        };
        // Largest integer cell 10·scale, 17 draws: sums in u16 up to 65,535, in u32 up to
        // 4,294,967,295; cells in u8 up to 255, in u16 up to 65,535.
        assert!(matches!(table(25.5).ints, Ints::U8U16(_)));
        assert!(matches!(table(25.6).ints, Ints::U16U16(_)));
        assert!(matches!(table(385.0).ints, Ints::U16U16(_)));
        assert!(matches!(table(386.0).ints, Ints::U16U32(_)));
        assert!(matches!(table(6553.5).ints, Ints::U16U32(_)));
        assert!(matches!(table(6553.6).ints, Ints::U32U32(_)));
        assert!(matches!(table(25_264_513.0).ints, Ints::U32U32(_)));
        assert!(matches!(table(25_264_514.0).ints, Ints::F64F64(_)));
    }
}
