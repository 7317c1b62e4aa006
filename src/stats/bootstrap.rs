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
use crate::stats::percentile::Values;
use crate::stats::resample::Resampler;

/// Statistic slots of [`BlockSamples`]: TER, mean FED, AUC-PEC, final success, then PEC(k).
pub const STAT_TER: usize = 0;
pub const STAT_MEAN_FED: usize = 1;
pub const STAT_AUC: usize = 2;
pub const STAT_SUCCESS: usize = 3;
pub const STAT_PEC: usize = 4;

/// Resamples per chunk. A dataset's `B` resamples are cut into chunks of this many (the last
/// one shorter): the unit of parallel work (threads natively, Web Workers in the browser) and of
/// random streams. Chunk `i` always covers resamples `i·CHUNK..` and draws from its own
/// position of the dataset's stream ([`Resampler::for_chunk`]), so which thread or worker runs
/// it, and in what order, cannot change a number.
pub const CHUNK: usize = 250;

/// The number of chunks of a bootstrap with `resamples` resamples.
pub fn chunk_count(resamples: usize) -> usize {
    resamples.div_ceil(CHUNK)
}

/// The resamples of chunk `chunk`.
pub fn chunk_range(resamples: usize, chunk: usize) -> std::ops::Range<usize> {
    let start = (chunk * CHUNK).min(resamples);
    start..((chunk + 1) * CHUNK).min(resamples)
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

/// A block's task rows in the form a resample sums them: the integer columns in the narrowest
/// accumulator no resample sum can overflow, and the AUC-PEC column apart. Built once per block
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
    pub fn new(block: &DatasetBlock) -> Self {
        Self::from_cells(
            &block.dataset,
            block.tasks.len(),
            block.conditions.len(),
            block.width,
            &block.cells,
        )
    }

    /// The table of a block given by its parts: `cells` as [`DatasetBlock::cells`] (`tasks` rows
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

impl Count for u8 {
    const MAX: f64 = u8::MAX as f64;
    fn from_cell(v: f64) -> Self {
        v as u8
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Count for u16 {
    const MAX: f64 = u16::MAX as f64;
    fn from_cell(v: f64) -> Self {
        v as u16
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Count for u32 {
    const MAX: f64 = u32::MAX as f64;
    fn from_cell(v: f64) -> Self {
        v as u32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

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
    use crate::ingest::read_files;
    use crate::score::{aggregate, MaxDepth};

    /// Every table type and accumulator type (each taken when a cell or a sum could overflow the
    /// narrower one), and batches of any number of draws, must give the same bits: the choice is
    /// an optimisation, never a change of result.
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
        let mut table = ResampleTable::new(block);
        assert!(matches!(table.ints, Ints::U8U16(_)));
        let (cells, width) = (&block.cells, block.width);
        let true_max = table.max_cell;
        // A larger bound than the true largest cell is as safe, and makes the u8 batches short:
        // 255 → one draw per batch, 60 → four; 17 tasks are drawn per resample.
        for max_cell in [true_max, 60.0, 255.0] {
            table.max_cell = max_cell;
            for chunk in 0..3u64 {
                let rng = || Resampler::for_chunk(7, "d", chunk);
                let reference =
                    run::<f64, f64>(&table, &int_columns(cells, width), &mut rng(), 300);
                let others = [
                    run::<u8, u16>(&table, &int_columns(cells, width), &mut rng(), 300),
                    run::<u8, u32>(&table, &int_columns(cells, width), &mut rng(), 300),
                    run::<u16, u16>(&table, &int_columns(cells, width), &mut rng(), 300),
                    run::<u16, u32>(&table, &int_columns(cells, width), &mut rng(), 300),
                    run::<u32, u32>(&table, &int_columns(cells, width), &mut rng(), 300),
                ];
                for other in others {
                    assert_eq!(other.len(), reference.len());
                    for (a, b) in other.iter().zip(&reference) {
                        assert_eq!(a.to_bits(), b.to_bits(), "max cell {max_cell}");
                    }
                }
            }
        }
        table.max_cell = true_max;
        let whole = bootstrap_block(block, 300, 7, &mut |_| {});
        assert_eq!(whole.chunks.len(), 2);
        assert_eq!(whole.chunks[1], bootstrap_chunk(block, 300, 7, 1));
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
