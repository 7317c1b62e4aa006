//! The Wilson score interval for a binomial proportion.

/// The Wilson score interval for `successes` out of `trials` at two-sided critical value `z`,
/// without continuity correction; `None` when `trials == 0` (the proportion is undefined).
///
/// With `p̂ = x/n`: centre `(p̂ + z²/2n) / (1 + z²/n)`, half-width
/// `z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n)` — the same arithmetic as statsmodels'
/// `proportion_confint(method="wilson")`. Ends are clamped to [0, 1], which only removes
/// rounding noise at `x = 0` or `x = n`.
pub fn wilson(successes: u64, trials: u64, z: f64) -> Option<[f64; 2]> {
    if trials == 0 {
        return None;
    }
    debug_assert!(successes <= trials);
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denom;
    let dist = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    Some([(center - dist).max(0.0), (center + dist).min(1.0)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::normal::two_sided_z;

    #[test]
    fn matches_statsmodels() {
        // statsmodels.stats.proportion.proportion_confint(x, n, alpha, method="wilson"),
        // statsmodels 0.14.
        let z95 = two_sided_z(0.95);
        let z90 = two_sided_z(0.90);
        let cases = [
            (138, 190, z95, 0.658906474140098, 0.7847550651570817),
            (0, 61, z95, 0.0, 0.059243867898112854),
            (93, 106, z95, 0.8014136606026787, 0.9269087857569649),
            (7, 7, z95, 0.6456695649333125, 0.9999999999999999),
            (1, 2, z95, 0.09453120573423068, 0.9054687942657693),
            (30, 100, z90, 0.23070495436914523, 0.37983213394412446),
        ];
        for (x, n, z, lo, hi) in cases {
            let [a, b] = wilson(x, n, z).unwrap();
            assert!(
                (a - lo).abs() < 1e-12 && (b - hi).abs() < 1e-12,
                "{x}/{n}: [{a}, {b}]"
            );
        }
        assert_eq!(wilson(0, 0, z95), None);
    }
}
