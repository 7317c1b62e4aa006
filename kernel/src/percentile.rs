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
pub fn central_interval(values: &mut Vec<f64>, level: f64) -> Option<[f64; 2]> {
    values.retain(|v| v.is_finite());
    // Percent first, as `numpy.percentile(x, [2.5, 97.5])` is called: for 0.95 this gives exactly
    // 0.025 and 0.975, where `(1 − 0.95)/2` would give 0.025000000000000022.
    let tail_percent = (100.0 - 100.0 * level) / 2.0;
    two_percentiles(values, tail_percent / 100.0, (100.0 - tail_percent) / 100.0)
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
    let fallback = |values: &dyn Fn() -> Vec<f64>| central_interval(&mut values(), level);
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
    let tail_percent = (100.0 - 100.0 * level) / 2.0;
    let (j_lo, g_lo) = position(n, tail_percent / 100.0);
    let (j_hi, g_hi) = position(n, (100.0 - tail_percent) / 100.0);
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
        let mut v: Vec<f64> = (1..=10_000).rev().map(|i| i as f64 / 7.0).collect();
        let [lo, hi] = central_interval(&mut v, 0.95).unwrap();
        assert_eq!(lo, 35.85357142857143);
        assert_eq!(hi, 1392.8607142857143);
    }

    #[test]
    fn skips_undefined_resamples() {
        let mut v = vec![f64::NAN, 0.2, 0.4, f64::NAN];
        assert_eq!(
            central_interval(&mut v, 0.5),
            Some([0.25, 0.35000000000000003])
        );
        assert_eq!(central_interval(&mut vec![f64::NAN], 0.95), None);
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
            let slow = central_interval(&mut values.clone(), level);
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
            let slow = central_interval(&mut values.clone(), 0.95);
            prop_assert_eq!(fast.map(|[a, b]| [a.to_bits(), b.to_bits()]),
                slow.map(|[a, b]| [a.to_bits(), b.to_bits()]));
        }
    }

    #[test]
    fn counts_hand_example() {
        // Counts 0,1,1,2,3 out of 4: sorted 0, .25, .25, .5, .75; p = 0.1 → h = 0.4 → 0.1.
        let v = [0.5, 0.25, 0.0, 0.75, 0.25];
        let [lo, hi] = central_interval_of_counts(v.iter().copied(), 4, 0.8).unwrap();
        assert_eq!(lo, 0.1);
        assert_eq!(hi, central_interval(&mut v.to_vec(), 0.8).unwrap()[1]);
        assert_eq!(central_interval_of_counts([].into_iter(), 4, 0.95), None);
        // NaN (an undefined resample) is not a count: the selection skips it.
        let with_nan = [0.5, f64::NAN, 0.25];
        assert_eq!(
            central_interval_of_counts(with_nan.iter().copied(), 4, 0.95),
            central_interval(&mut with_nan.to_vec(), 0.95)
        );
    }
}
