//! A block's resampled statistics as the chunks of its bootstrap hold them, and the series of
//! one statistic read in place (one condition's, or the paired difference of two), with their
//! intervals. Here rather than beside the bootstrap for the same reason as the rest of this
//! crate: the intervals' passes over the series are hot, and the methods below are not generic,
//! so they are compiled here, at this crate's optimisation level.

use crate::percentile::{central_interval_of, central_interval_of_counts, Values};
use crate::{chunk_range, CHUNK};

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
    /// resample `b` — one contiguous run per (condition, statistic), as `bootstrap_chunk` (prefix-exec's `stats::bootstrap`)
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
        self.column(c, stat).iter()
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

    /// The values, resample by resample.
    pub fn iter(self) -> impl Iterator<Item = f64> + Clone + 'a {
        self.runs().flatten().copied()
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

impl Series<'_> {
    /// The central `level` percentile interval of the series ([`central_interval_of`]).
    pub fn interval(self, level: f64) -> Option<[f64; 2]> {
        central_interval_of(&self, level)
    }

    /// The same interval for a series of counts over `denominator`
    /// ([`central_interval_of_counts`]: the same bits, without a selection).
    pub fn interval_of_counts(self, denominator: u64, level: f64) -> Option<[f64; 2]> {
        central_interval_of_counts(self.iter(), denominator, level)
    }
}

impl Difference<'_> {
    /// The central `level` percentile interval of the paired difference.
    pub fn interval(self, level: f64) -> Option<[f64; 2]> {
        central_interval_of(&self, level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::percentile::central_interval_by_selection;
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
            prop_assert_eq!(to_bits(&a.iter().collect::<Vec<_>>()), to_bits(&collected));
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
                bits(d.interval(0.95)),
                bits(central_interval_by_selection(&mut difference.clone(), 0.95))
            );
            prop_assert_eq!(
                bits(a.interval(0.9)),
                bits(central_interval_by_selection(&mut collected.clone(), 0.9))
            );
        }
    }
}
