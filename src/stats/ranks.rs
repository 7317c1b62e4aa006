//! Ranks with simultaneous intervals, and rank divergence (`../shared/spec/ranks.md`).
//!
//! The inputs are one dataset's conditions: for a metric where higher is better (final success,
//! TER, AUC-PEC), each condition's point estimate θ_i and, when the bootstrap ran, its values on
//! the dataset's task-level resamples θ*_i,b — the very series the report's intervals come from,
//! so every condition and every metric of a dataset sees the same draws. A value that is NaN is
//! undefined on that resample (none of the condition's rollouts was drawn).
//!
//! # Point rank
//!
//! `rank(i) = 1 + #{ j : θ_j > θ_i }`: ties share the best rank (1, 2, 2, 4).
//!
//! # Simultaneous rank intervals (single-step max-t over all pairs)
//!
//! For every pair `i < j`, with `d_ij = θ_i − θ_j` and `d*_ij,b = θ*_i,b − θ*_j,b` on the
//! resamples where both are defined:
//!
//! 1. `s_ij` = the standard deviation (ddof = 1) of the `d*_ij,b` ([`Spread`]);
//! 2. on each resample, `t*_b = max |d*_ij,b − d_ij| / s_ij` over the pairs with `s_ij > 0`
//!    defined on `b` (a resample with no such pair is dropped);
//! 3. `c` = the type-7 `level`-percentile of the `t*_b` (numpy's `quantile(t, level)`): the
//!    **critical value**, one per metric;
//! 4. **i certainly ranks above j** iff `d_ij > c · s_ij` (for `s_ij = 0`: iff `d_ij > 0`).
//!
//! Then `rank_lo(i) = 1 + #{ j certainly above i }` and `rank_hi(i) = K − #{ j that i is
//! certainly above }`. Every pair is tested against the one critical value of the largest
//! standardised deviation over all pairs, so with probability ≈ `level` every pair's difference
//! lies within `c · s_ij` of its estimate at once — and with it every interval holds at once
//! ("simultaneous"; 15 conditions are 105 pairs, and 105 separate 95% tests would be wrong about
//! five of them). The **top group** is every condition with `rank_lo = 1`: no condition certainly
//! ranks above it, so it may be the best.
//!
//! "Certainly above" only ever holds where `θ_i > θ_j` (since `c ≥ 0`), so
//! `rank_lo ≤ rank ≤ rank_hi`; it is antisymmetric by construction. Where every condition is
//! defined on every resample it is transitive too: `s` is a norm of the paired differences, so
//! `s_ik ≤ s_ij + s_jk`, and `d_ik = d_ij + d_jk`. A higher level gives a larger `c` (the
//! percentile is monotone in its probability), so fewer pairs are certain and no interval
//! narrows.
//!
//! Floating point: the statistics are ratios of sums, so a difference that is constant over the
//! resamples in exact arithmetic can come out with a spread of a few ulps, which would make one
//! pair's `t*` as large as rounding noise allows. A spread (or, for a zero spread, a difference)
//! of at most [`NEGLIGIBLE`] is therefore taken as 0; the statistics lie in [0, 1], where any
//! real difference of two conditions is many orders of magnitude larger.
//!
//! # Rank divergence
//!
//! [`kendall_tau_b`] of two metrics over the conditions (ties in either leave a pair out of the
//! count, as `scipy.stats.kendalltau`'s default variant does, with its formula), undefined when
//! either metric is constant; [`tau_b_interval`] its type-7 central percentile interval over the
//! resamples on which both metrics are defined for every condition and τ_b is defined. A pair is
//! **discordant** when its order by one metric is the reverse of its order by the other
//! (`d^a_ij · d^b_ij < 0`), and **significant** when each side certainly ranks above the other
//! on the metric it leads ([`Intervals::above`], each metric with its own critical value).
//!
//! Everything here is sums, differences, products, quotients and square roots (each correctly
//! rounded in IEEE arithmetic, natively and in WebAssembly) in a fixed order, and the
//! percentiles of [`super::percentile`]: the same inputs give the same bits on every platform.

use super::percentile::{central_interval, percentile};

/// A spread or a difference at most this large is taken as 0 (see the module documentation).
pub const NEGLIGIBLE: f64 = 1e-12;

/// `1 + #{ j : values[j] > values[i] }` for each `i`: the point ranks, ties sharing the best.
pub fn point_ranks(values: &[f64]) -> Vec<usize> {
    values
        .iter()
        .map(|&v| 1 + values.iter().filter(|&&w| w > v).count())
        .collect()
}

/// The spread `s_ij` of a pair's resampled differences.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spread {
    /// Fewer than two resamples where both conditions are defined: no standard deviation, and
    /// neither condition is ever certainly above the other.
    Undefined,
    /// The differences do not vary (a spread of at most [`NEGLIGIBLE`]).
    Zero,
    /// `s_ij > 0`.
    Positive(f64),
}

/// The simultaneous rank intervals of one metric over one dataset's `K` conditions.
#[derive(Clone, Debug, PartialEq)]
pub struct Intervals {
    pub rank_lo: Vec<usize>,
    pub rank_hi: Vec<usize>,
    /// `c`; `None` when no pair has a positive spread (then only pairs of zero spread decide).
    pub critical_value: Option<f64>,
    /// `above[i · K + j]`: condition `i` certainly ranks above condition `j`.
    pub above: Vec<bool>,
    /// `K`.
    pub conditions: usize,
}

impl Intervals {
    /// Whether condition `i` certainly ranks above condition `j`.
    pub fn above(&self, i: usize, j: usize) -> bool {
        self.above[i * self.conditions + j]
    }
}

/// The spread of `d*_b − d` over the resamples where both series are defined, with the sum of
/// squares taken about the shift `d` (close to their mean, so the one pass loses nothing that
/// matters): `s² = (Σy² − (Σy)²/n) / (n − 1)`, `y_b = θ*_i,b − θ*_j,b − d`.
///
/// The sums run in [`LANES`] interleaved partial sums (resample `b` in lane `b mod LANES`),
/// added up in a fixed order at the end: the same bits on every platform, with four additions
/// in flight instead of one chain.
fn spread(a: &[f64], b: &[f64], d: f64) -> Spread {
    let (mut n, mut sum, mut squares) = ([0u32; LANES], [0.0f64; LANES], [0.0f64; LANES]);
    let mut add = |lane: usize, x: f64, y: f64| {
        let dev = x - y - d;
        let defined = !dev.is_nan();
        let dev = if defined { dev } else { 0.0 };
        n[lane] += u32::from(defined);
        sum[lane] += dev;
        squares[lane] += dev * dev;
    };
    let (whole, rest) = (a.len() / LANES * LANES, a.len().min(b.len()));
    for (xs, ys) in a[..whole].chunks_exact(LANES).zip(b.chunks_exact(LANES)) {
        for lane in 0..LANES {
            add(lane, xs[lane], ys[lane]);
        }
    }
    for i in whole..rest {
        add(i - whole, a[i], b[i]);
    }
    let total = |v: [f64; LANES]| (v[0] + v[1]) + (v[2] + v[3]);
    let n: u32 = n.iter().sum();
    if n < 2 {
        return Spread::Undefined;
    }
    let (sum, squares, n) = (total(sum), total(squares), f64::from(n));
    let variance = ((squares - sum * sum / n) / (n - 1.0)).max(0.0);
    let s = variance.sqrt();
    if s > NEGLIGIBLE {
        Spread::Positive(s)
    } else {
        Spread::Zero
    }
}

/// Partial sums of [`spread`].
const LANES: usize = 4;

/// The simultaneous rank intervals of `values` (the `K` point estimates) from `resampled`
/// (`resampled[i]`: condition `i`'s value on each of the `B` resamples, NaN where undefined) at
/// `level` (in (0, 1)); see the module documentation for the method.
pub fn simultaneous_intervals(values: &[f64], resampled: &[Vec<f64>], level: f64) -> Intervals {
    let k = values.len();
    debug_assert_eq!(resampled.len(), k);
    let resamples = resampled.first().map_or(0, Vec::len);
    // Pairs i < j in order: (i, j, d_ij, s_ij).
    let mut pairs = Vec::with_capacity(k * k.saturating_sub(1) / 2);
    for i in 0..k {
        for j in i + 1..k {
            let d = values[i] - values[j];
            pairs.push((i, j, d, spread(&resampled[i], &resampled[j], d)));
        }
    }
    // t*_b: the largest standardised deviation on each resample; −1 while no pair is defined.
    let mut t_max = vec![-1.0f64; resamples];
    for &(i, j, d, spread) in &pairs {
        let Spread::Positive(s) = spread else {
            continue;
        };
        for ((t, &x), &y) in t_max.iter_mut().zip(&resampled[i]).zip(&resampled[j]) {
            // `max` takes the other argument when one is NaN: an undefined pair adds nothing.
            *t = t.max((x - y - d).abs() / s);
        }
    }
    t_max.retain(|&t| t >= 0.0);
    let critical_value = percentile(&mut t_max, level);
    let mut above = vec![false; k * k];
    let (mut rank_lo, mut rank_hi) = (vec![1; k], vec![k; k]);
    for &(i, j, d, spread) in &pairs {
        let margin = match (spread, critical_value) {
            (Spread::Zero, _) => NEGLIGIBLE,
            (Spread::Positive(s), Some(c)) => c * s,
            // Undefined: nothing is certain (a positive spread always has a critical value).
            _ => continue,
        };
        let (hi, lo) = if d > margin {
            (i, j)
        } else if -d > margin {
            (j, i)
        } else {
            continue;
        };
        above[hi * k + lo] = true;
        rank_lo[lo] += 1;
        rank_hi[hi] -= 1;
    }
    Intervals {
        rank_lo,
        rank_hi,
        critical_value,
        above,
        conditions: k,
    }
}

/// The sign of `a − b`: −1, 0 or 1 (0 for a tie, and for an undefined value).
fn sign(a: f64, b: f64) -> i32 {
    i32::from(a > b) - i32::from(a < b)
}

/// Kendall's τ_b of `x` and `y` (the same conditions' values of two metrics): `(n_c − n_d) /
/// √(n₀ − n_x) / √(n₀ − n_y)`, where a pair tied in `x` or in `y` is neither concordant nor
/// discordant and `n₀ − n_x`, `n₀ − n_y` count the pairs not tied in `x`, in `y`; clamped to
/// [−1, 1] against rounding, as `scipy.stats.kendalltau` computes it. `None` when either is
/// constant (or there are fewer than two values).
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    let (mut concordance, mut untied_x, mut untied_y) = (0i32, 0u32, 0u32);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let (sx, sy) = (sign(x[i], x[j]), sign(y[i], y[j]));
            concordance += sx * sy;
            untied_x += u32::from(sx != 0);
            untied_y += u32::from(sy != 0);
        }
    }
    tau_of(concordance, untied_x, untied_y)
}

/// τ_b from its counts (at most [`crate::report::ranks::MAX_RANKED`]² pairs: exact in `i32`).
fn tau_of(concordance: i32, untied_x: u32, untied_y: u32) -> Option<f64> {
    if untied_x == 0 || untied_y == 0 {
        return None;
    }
    let tau = f64::from(concordance) / f64::from(untied_x).sqrt() / f64::from(untied_y).sqrt();
    Some(tau.clamp(-1.0, 1.0))
}

/// The central `level` percentile interval (type 7) of τ_b over the resamples: on resample `b`,
/// τ_b of `x[·][b]` and `y[·][b]` (`x[i]`, `y[i]`: condition `i`'s series of each metric), on
/// the resamples where every condition is defined in both and τ_b is defined. `None` when no
/// resample qualifies.
pub fn tau_b_interval(x: &[Vec<f64>], y: &[Vec<f64>], level: f64) -> Option<[f64; 2]> {
    let resamples = x.first().map_or(0, Vec::len);
    // Pair by pair, all resamples at once (the inner loop runs along the series): each
    // resample's concordance and untied counts, as `kendall_tau_b` counts them. A comparison with
    // an undefined value counts nothing, and its resample is left out below.
    let mut concordance = vec![0i32; resamples];
    let mut untied_x = vec![0u32; resamples];
    let mut untied_y = vec![0u32; resamples];
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let counts = concordance.iter_mut().zip(&mut untied_x).zip(&mut untied_y);
            let values = x[i].iter().zip(&x[j]).zip(y[i].iter().zip(&y[j]));
            for (((c, ux), uy), ((&xi, &xj), (&yi, &yj))) in counts.zip(values) {
                let (sx, sy) = (sign(xi, xj), sign(yi, yj));
                *c += sx * sy;
                *ux += u32::from(sx != 0);
                *uy += u32::from(sy != 0);
            }
        }
    }
    let taus: Vec<f64> = (0..resamples)
        .filter(|&b| x.iter().chain(y).all(|s| !s[b].is_nan()))
        .filter_map(|b| tau_of(concordance[b], untied_x[b], untied_y[b]))
        .collect();
    central_interval(&taus, level)
}

/// The discordant pairs of two metrics: `(i, j)` with `i` ahead on `a` and `j` ahead on `b`
/// (`a_i > a_j`, `b_j > b_i`), pairs in order of `min(i, j)`, then `max(i, j)`.
pub fn discordant_pairs(a: &[f64], b: &[f64]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..a.len() {
        for j in i + 1..a.len() {
            match (sign(a[i], a[j]), sign(b[i], b[j])) {
                (1, -1) => out.push((i, j)),
                (-1, 1) => out.push((j, i)),
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_ranks_share_the_best_rank() {
        assert_eq!(point_ranks(&[0.5, 0.7, 0.7, 0.1]), [3, 1, 1, 4]);
        assert_eq!(point_ranks(&[0.2, 0.2]), [1, 1]);
        assert!(point_ranks(&[]).is_empty());
    }

    #[test]
    fn spread_of_a_constant_difference_is_zero_and_of_one_value_undefined() {
        let a = [0.1 + 0.2, 0.3, 0.7];
        let b = [0.1, 0.1, 0.5];
        // 0.1 + 0.2 − 0.1 and 0.3 − 0.1 differ in their last bits: still no spread.
        assert_eq!(spread(&a, &b, 0.2), Spread::Zero);
        assert_eq!(
            spread(&[0.5, f64::NAN], &[0.1, 0.2], 0.4),
            Spread::Undefined
        );
        // [0, 1] differences: s = √0.5.
        let Spread::Positive(s) = spread(&[1.0, 0.0], &[0.0, 0.0], 0.5) else {
            panic!("a positive spread")
        };
        assert!((s - 0.5f64.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn tau_b_counts_ties_out() {
        // Pairs (0,1) tied in y, (1,2) tied in x, (0,2) concordant: 1 / √2 / √2 (= 0.5 but for
        // rounding, as scipy gives it).
        let tau = kendall_tau_b(&[1.0, 2.0, 2.0], &[1.0, 1.0, 2.0]).unwrap();
        assert_eq!(tau, 0.49999999999999994);
        // (0,1) tied in y; (0,2), (1,2) concordant: 2 / √3 / √2.
        let tau = kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 1.0, 2.0]).unwrap();
        assert_eq!(tau, 2.0 / 3f64.sqrt() / 2f64.sqrt());
        assert_eq!(kendall_tau_b(&[1.0, 1.0], &[0.0, 1.0]), None);
        assert_eq!(
            kendall_tau_b(&[3.0, 2.0, 1.0], &[1.0, 2.0, 3.0]),
            Some(-1.0)
        );
    }
}
