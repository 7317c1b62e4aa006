//! Percentiles by linear interpolation between order statistics.
//!
//! For sorted values `x₀ ≤ … ≤ x_{n−1}` and probability `p`, let `h = (n − 1)·p`, `j = ⌊h⌋`,
//! `γ = h − j`; the percentile is `x_j + γ·(x_{j+1} − x_j)` (Hyndman & Fan's type 7, numpy's
//! default `method="linear"`). Like numpy, the interpolation is written from the upper end when
//! `γ ≥ 0.5`, which keeps it monotone in `p` under rounding — so results match numpy bit for bit.

/// The `p`-percentile of `values` (any order; NaNs must have been removed). `None` when empty.
/// Reorders `values` in place (selection, not a full sort: O(n)).
pub fn percentile(values: &mut [f64], p: f64) -> Option<f64> {
    two_percentiles(values, p, p).map(|[v, _]| v)
}

/// `(j, γ)` of the type-7 rule: `h = (n − 1)·p`, `j = ⌊h⌋`, `γ = h − j`.
fn position(n: usize, p: f64) -> (usize, f64) {
    let h = (n - 1) as f64 * p;
    let j = (h.floor() as usize).min(n - 1);
    (j, h - j as f64)
}

/// The `p_lo`- and `p_hi`-percentiles (`p_lo ≤ p_hi`) with two selections, the second one only
/// over the part above the first order statistic.
fn two_percentiles(values: &mut [f64], p_lo: f64, p_hi: f64) -> Option<[f64; 2]> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let (j_lo, g_lo) = position(n, p_lo);
    let (j_hi, g_hi) = position(n, p_hi);
    let (_, &mut a_lo, above) = values.select_nth_unstable_by(j_lo, f64::total_cmp);
    let b_lo = above.iter().copied().min_by(f64::total_cmp).unwrap_or(a_lo);
    let (a_hi, b_hi) = if j_hi == j_lo {
        (a_lo, b_lo)
    } else {
        let (_, &mut a, above) = above.select_nth_unstable_by(j_hi - j_lo - 1, f64::total_cmp);
        (a, above.iter().copied().min_by(f64::total_cmp).unwrap_or(a))
    };
    Some([lerp(a_lo, b_lo, g_lo), lerp(a_hi, b_hi, g_hi)])
}

/// numpy's `_lerp`: `a + (b − a)·t`, computed from `b` when `t ≥ 0.5`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// The central `level` percentile interval `[P(α/2), P(1 − α/2)]`, `α = 1 − level`, of the
/// finite values in `values` (undefined resamples are NaN and skipped). `None` when no value is
/// finite.
///
/// A bootstrap series is long (`B` values) and only four order statistics are wanted, two near
/// each tail. From 2,048 values on they are found inside two narrow windows of the value range
/// (`windowed`), which costs one pass and two small selections; whenever the
/// windows turn out not to hold the wanted ranks, the full selection runs instead. Either way
/// the result is the same order statistics, so the same bits.
pub fn central_interval(values: &[f64], level: f64) -> Option<[f64; 2]> {
    central_interval_of(values, level)
}

/// A series read where it lies — e.g. a bootstrap series spread over chunks, or the difference
/// of two — without first copying it into one vector.
pub trait Values {
    fn count(&self) -> usize;
    /// Value `i` (`i < count()`).
    fn at(&self, i: usize) -> f64;
    /// Every value, in order.
    fn each(&self, f: impl FnMut(f64));
}

impl Values for [f64] {
    fn count(&self) -> usize {
        self.len()
    }
    fn at(&self, i: usize) -> f64 {
        self[i]
    }
    fn each(&self, mut f: impl FnMut(f64)) {
        for &v in self {
            f(v);
        }
    }
}

/// [`central_interval`] of a series read in place.
pub fn central_interval_of(values: &(impl Values + ?Sized), level: f64) -> Option<[f64; 2]> {
    let [p_lo, p_hi] = tail_probabilities(level);
    if values.count() >= WINDOWED_FROM {
        if let Some(found) = windowed(values, p_lo, p_hi) {
            return found;
        }
    }
    let mut all = Vec::with_capacity(values.count());
    values.each(|v| {
        if v.is_finite() {
            all.push(v);
        }
    });
    two_percentiles(&mut all, p_lo, p_hi)
}

/// The interval by the full selection alone: the reference [`central_interval`] must equal.
pub fn central_interval_by_selection(values: &mut Vec<f64>, level: f64) -> Option<[f64; 2]> {
    let [p_lo, p_hi] = tail_probabilities(level);
    values.retain(|v| v.is_finite());
    two_percentiles(values, p_lo, p_hi)
}

/// `[α/2, 1 − α/2]` for a central `level` interval.
fn tail_probabilities(level: f64) -> [f64; 2] {
    // Percent first, as `numpy.percentile(x, [2.5, 97.5])` is called: for 0.95 this gives exactly
    // 0.025 and 0.975, where `(1 − 0.95)/2` would give 0.025000000000000022.
    let tail_percent = (100.0 - 100.0 * level) / 2.0;
    [tail_percent / 100.0, (100.0 - tail_percent) / 100.0]
}

/// Series shorter than this take the full selection: the windows' sample would cost about as
/// much as the selection saves.
const WINDOWED_FROM: usize = 2048;
/// Values sampled to place the windows, in runs of [`SAMPLE_RUN`] consecutive values.
const SAMPLE: usize = 256;
const SAMPLE_RUN: usize = 32;

/// The order statistic's key: `f64::total_cmp`'s order as unsigned integers (finite values only
/// reach it), so a window is a range of keys and selections compare integers.
fn key(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

fn value_of(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

/// The interval's four order statistics found in two windows of keys, one around each tail's
/// rank: a sorted sample of the finite values (runs spread over the series) places each window
/// (its rank ± four binomial standard deviations of a sample quantile, plus slack); one pass
/// counts the finite values, those below each window, and gathers each window's values; a
/// selection inside each window gives `x_j` and `x_{j+1}`. `None` — the caller selects over
/// everything — when a wanted rank falls outside its window or the windows meet (a narrow
/// `level`).
fn windowed(values: &(impl Values + ?Sized), p_lo: f64, p_hi: f64) -> Option<Option<[f64; 2]>> {
    // The sample is read as runs of consecutive values spread evenly over the series: a few
    // cache lines each, where single values at a stride would each cost a memory access (a
    // bootstrap series is in resample order, which is random, so runs are as good a sample).
    let count = values.count();
    let runs = SAMPLE / SAMPLE_RUN;
    let mut sample: Vec<u64> = (0..runs)
        .flat_map(|r| {
            let start = r * (count - SAMPLE_RUN) / (runs - 1);
            start..start + SAMPLE_RUN
        })
        .map(|i| values.at(i))
        .filter(|v| v.is_finite())
        .map(key)
        .collect();
    if sample.len() < SAMPLE / 2 {
        return None;
    }
    sample.sort_unstable();
    let last = (sample.len() - 1) as f64;
    let window = |p: f64| -> (u64, u64) {
        let at = p * last;
        let margin = 4.0 * (sample.len() as f64 * p * (1.0 - p)).sqrt() + 4.0;
        let lo = if at - margin <= 0.0 {
            0
        } else {
            sample[(at - margin) as usize]
        };
        let hi = if at + margin >= last {
            u64::MAX
        } else {
            sample[(at + margin).ceil() as usize]
        };
        (lo, hi)
    };
    let (lo_a, hi_a) = window(p_lo);
    let (lo_b, hi_b) = window(p_hi);
    if hi_a >= lo_b {
        return None;
    }
    let (mut n, mut below_a, mut between) = (0usize, 0usize, 0usize);
    let expected = values.count() / 8 + 16;
    let (mut in_a, mut in_b) = (Vec::with_capacity(expected), Vec::with_capacity(expected));
    values.each(|v| {
        if !v.is_finite() {
            return;
        }
        n += 1;
        let k = key(v);
        if k < lo_a {
            below_a += 1;
        } else if k <= hi_a {
            in_a.push(k);
        } else if k < lo_b {
            between += 1;
        } else if k <= hi_b {
            in_b.push(k);
        }
    });
    let below_b = below_a + in_a.len() + between;
    let (j_lo, g_lo) = position(n, p_lo);
    let (j_hi, g_hi) = position(n, p_hi);
    let [a_lo, b_lo] = neighbours_in(&mut in_a, below_a, j_lo, n)?;
    let [a_hi, b_hi] = neighbours_in(&mut in_b, below_b, j_hi, n)?;
    Some(Some([lerp(a_lo, b_lo, g_lo), lerp(a_hi, b_hi, g_hi)]))
}

/// `x_j` and `x_{min(j+1, n−1)}` from a window holding the ranks `below..below + len`, when both
/// ranks are inside it.
fn neighbours_in(window: &mut [u64], below: usize, j: usize, n: usize) -> Option<[f64; 2]> {
    let next = (j + 1).min(n - 1);
    if j < below || next >= below + window.len() {
        return None;
    }
    let (_, &mut a, above) = window.select_nth_unstable(j - below);
    let b = if next == j {
        a
    } else {
        above.iter().copied().min()?
    };
    Some([value_of(a), value_of(b)])
}

/// [`central_interval`] of a series whose every value is `c / denominator` for an integer count
/// `0 ≤ c ≤ denominator` (computed as `c as f64 / denominator as f64`): a statistic whose
/// numerator counts rollouts out of a denominator that is the same in every resample. Such a
/// series takes at most `denominator + 1` values, so one counting pass over a histogram finds
/// the order statistics — O(B + denominator), no selection and no copy of the series — and the
/// interval is the same bits as [`central_interval`]'s (the same order statistics, the same
/// interpolation). A value not of that form (NaN, out of range, or a bucket holding two
/// different values) makes it fall back to [`central_interval`], so it is never wrong, only
/// sometimes not faster.
pub fn central_interval_of_counts(
    values: impl Iterator<Item = f64> + Clone,
    denominator: u64,
    level: f64,
) -> Option<[f64; 2]> {
    let fallback = |values: &dyn Fn() -> Vec<f64>| central_interval(&values(), level);
    let d = denominator as f64;
    // Past 2^24 buckets the histogram costs more than it saves (and c·d stops being exact).
    if denominator == 0 || denominator > 1 << 24 {
        return fallback(&|| values.clone().collect());
    }
    let mut count = vec![0u32; denominator as usize + 1];
    let mut value = vec![f64::NAN; denominator as usize + 1];
    let mut n = 0usize;
    for v in values.clone() {
        // `v · d` is within rounding of the count, so adding ½ and truncating finds it (a
        // truncating cast, not `f64::round`, which is a library call on baseline x86-64).
        // `!(x >= …)` also catches NaN.
        let x = v * d + 0.5;
        if !(x >= 0.0 && x < d + 1.0) {
            return fallback(&|| values.clone().collect());
        }
        let c = x as usize;
        if count[c] == 0 {
            value[c] = v;
        } else if value[c].to_bits() != v.to_bits() {
            return fallback(&|| values.clone().collect());
        }
        count[c] += 1;
        n += 1;
    }
    if n == 0 {
        return None;
    }
    let [p_lo, p_hi] = tail_probabilities(level);
    let (j_lo, g_lo) = position(n, p_lo);
    let (j_hi, g_hi) = position(n, p_hi);
    // The order statistics x_j and x_{j+1} (x_{n−1} past the end), by one cumulative scan.
    let wanted = [j_lo, (j_lo + 1).min(n - 1), j_hi, (j_hi + 1).min(n - 1)];
    let mut found = [f64::NAN; 4];
    let mut below = 0usize;
    for (c, &k) in count.iter().enumerate() {
        if k == 0 {
            continue;
        }
        let next = below + k as usize;
        for (f, &j) in found.iter_mut().zip(&wanted) {
            if (below..next).contains(&j) {
                *f = value[c];
            }
        }
        below = next;
    }
    Some([
        lerp(found[0], found[1], g_lo),
        lerp(found[2], found[3], g_hi),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_example() {
        // Sorted: 1 2 3 4 10. p = 0.1: h = 0.4 → 1 + 0.4·1 = 1.4.
        // p = 0.9: h = 3.6 → γ ≥ 0.5, so 10 − 6·(1 − 0.6000000000000001), which rounds to
        // 7.6000000000000005 — numpy.percentile(x, 90) gives the same bits.
        let mut v = vec![10.0, 3.0, 1.0, 4.0, 2.0];
        assert_eq!(percentile(&mut v, 0.1), Some(1.4));
        assert_eq!(percentile(&mut v, 0.9), Some(7.6000000000000005));
        assert_eq!(percentile(&mut v, 0.0), Some(1.0));
        assert_eq!(percentile(&mut v, 1.0), Some(10.0));
        assert_eq!(percentile(&mut v, 0.5), Some(3.0));
        assert_eq!(percentile(&mut [], 0.5), None);
        assert_eq!(percentile(&mut [7.0], 0.025), Some(7.0));
    }

    #[test]
    fn matches_numpy() {
        // numpy.percentile(np.arange(1, 10001) / 7, [2.5, 97.5])
        let v: Vec<f64> = (1..=10_000).rev().map(|i| i as f64 / 7.0).collect();
        let [lo, hi] = central_interval(&v, 0.95).unwrap();
        assert_eq!(lo, 35.85357142857143);
        assert_eq!(hi, 1392.8607142857143);
    }

    #[test]
    fn skips_undefined_resamples() {
        let v = vec![f64::NAN, 0.2, 0.4, f64::NAN];
        assert_eq!(central_interval(&v, 0.5), Some([0.25, 0.35000000000000003]));
        assert_eq!(central_interval(&[f64::NAN], 0.95), None);
    }

    use proptest::prelude::*;

    proptest! {
        /// The histogram of counts gives the selection's bits: any denominator, any counts, any
        /// level, any number of resamples (including one and two).
        #[test]
        fn counts_equal_selection(
            denominator in 1u64..600,
            counts in proptest::collection::vec(any::<u64>(), 1..3000),
            level in prop_oneof![Just(0.95), Just(0.9), Just(0.5), 0.01f64..0.999],
        ) {
            let values: Vec<f64> = counts
                .iter()
                .map(|c| (c % (denominator + 1)) as f64 / denominator as f64)
                .collect();
            let fast = central_interval_of_counts(values.iter().copied(), denominator, level);
            let slow = central_interval_by_selection(&mut values.clone(), level);
            prop_assert_eq!(fast.map(|[a, b]| [a.to_bits(), b.to_bits()]),
                slow.map(|[a, b]| [a.to_bits(), b.to_bits()]));
        }

        /// A series not made of counts over the denominator falls back to the selection.
        #[test]
        fn other_values_fall_back(
            values in proptest::collection::vec(-2.0f64..2.0, 1..500),
            denominator in 1u64..50,
        ) {
            let fast = central_interval_of_counts(values.iter().copied(), denominator, 0.95);
            let slow = central_interval_by_selection(&mut values.clone(), 0.95);
            prop_assert_eq!(fast.map(|[a, b]| [a.to_bits(), b.to_bits()]),
                slow.map(|[a, b]| [a.to_bits(), b.to_bits()]));
        }
    }

    /// A long series of the shapes bootstrap series take, with what makes selection subtle:
    /// undefined resamples (NaN), infinities, both zeros, heavy ties, a few extreme values, a
    /// period equal to the sample's stride (so the sample sees one value only).
    fn long_series() -> impl Strategy<Value = Vec<f64>> {
        let value = prop_oneof![
            8 => (-400i32..400).prop_map(|i| f64::from(i) / 200.0),
            4 => -3.0f64..3.0,
            1 => Just(f64::NAN),
            1 => Just(0.0),
            1 => Just(-0.0),
            1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(1e300), Just(-1e300)],
        ];
        prop_oneof![
            proptest::collection::vec(value, 2000..12_000),
            (2048usize..9000, 1usize..40, -1.0f64..1.0).prop_map(|(n, period, x)| {
                (0..n)
                    .map(|i| if i % period == 0 { x } else { x + i as f64 })
                    .collect()
            }),
            (2048usize..9000, 0usize..200).prop_map(|(n, nans)| {
                (0..n)
                    .map(|i| {
                        if i < nans * 40 {
                            f64::NAN
                        } else {
                            (i % 7) as f64
                        }
                    })
                    .collect()
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The windowed search gives the full selection's bits, at any level.
        #[test]
        fn windowed_equals_selection(
            values in long_series(),
            level in prop_oneof![Just(0.95), Just(0.9), Just(0.99), Just(0.5), 0.001f64..0.9999],
        ) {
            let fast = central_interval(&values, level);
            let slow = central_interval_by_selection(&mut values.clone(), level);
            prop_assert_eq!(fast.map(|[a, b]| [a.to_bits(), b.to_bits()]),
                slow.map(|[a, b]| [a.to_bits(), b.to_bits()]));
        }
    }

    #[test]
    fn windowed_takes_the_windows_on_bootstrap_like_series() {
        // A smooth series of 10,000 values: the windows hold the wanted ranks (no fallback).
        let values: Vec<f64> = (0..10_000)
            .map(|i| ((i * 7919) % 10_007) as f64 / 7.0)
            .collect();
        let [p_lo, p_hi] = tail_probabilities(0.95);
        assert!(windowed(&values[..], p_lo, p_hi).is_some());
        assert_eq!(
            central_interval(&values, 0.95),
            central_interval_by_selection(&mut values.clone(), 0.95)
        );
        // Fewer than half of the sampled values finite: no windows.
        let mostly_nan: Vec<f64> = (0..4096)
            .map(|i| if i % 4 == 0 { 1.0 } else { f64::NAN })
            .collect();
        assert!(windowed(&mostly_nan[..], p_lo, p_hi).is_none());
        assert_eq!(central_interval(&mostly_nan, 0.95), Some([1.0, 1.0]));
    }

    #[test]
    fn keys_order_as_total_cmp() {
        let mut v = [
            1.5,
            -0.0,
            0.0,
            -1e300,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            3.0,
            -7.25,
            1e-310,
        ];
        for &x in &v {
            assert_eq!(value_of(key(x)).to_bits(), x.to_bits());
        }
        let mut by_key = v;
        by_key.sort_by_key(|&x| key(x));
        v.sort_by(f64::total_cmp);
        assert_eq!(by_key.map(f64::to_bits), v.map(f64::to_bits));
    }

    #[test]
    fn counts_hand_example() {
        // Counts 0,1,1,2,3 out of 4: sorted 0, .25, .25, .5, .75; p = 0.1 → h = 0.4 → 0.1.
        let v = [0.5, 0.25, 0.0, 0.75, 0.25];
        let [lo, hi] = central_interval_of_counts(v.iter().copied(), 4, 0.8).unwrap();
        assert_eq!(lo, 0.1);
        assert_eq!(hi, central_interval(&v, 0.8).unwrap()[1]);
        assert_eq!(central_interval_of_counts([].into_iter(), 4, 0.95), None);
        // NaN (an undefined resample) is not a count: the selection skips it.
        let with_nan = [0.5, f64::NAN, 0.25];
        assert_eq!(
            central_interval_of_counts(with_nan.iter().copied(), 4, 0.95),
            central_interval(&with_nan, 0.95)
        );
    }
}
