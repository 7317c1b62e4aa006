//! The standard normal quantile function.

/// `Φ⁻¹(p)` for `p ∈ (0, 1)`: the `z` with `P(Z ≤ z) = p`.
///
/// Solved by bisection on `Φ(z) = erfc(−z/√2)/2` with `libm`'s `erfc`, to the last bit that
/// bisection can resolve. Slow by numerical standards (about a hundred `erfc` calls) but exact
/// to ~1 ulp of `Φ`, and bit-identical on every platform, which a platform `ln`/`exp` inside a
/// rational approximation would not guarantee. It is called once per report.
pub fn quantile(p: f64) -> f64 {
    assert!(
        p > 0.0 && p < 1.0,
        "normal quantile needs 0 < p < 1, got {p}"
    );
    let cdf = |z: f64| 0.5 * libm::erfc(-z / std::f64::consts::SQRT_2);
    let (mut lo, mut hi) = (-40.0_f64, 40.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid == lo || mid == hi {
            break;
        }
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The two-sided critical value for a confidence level: `Φ⁻¹(1 − α/2)` with `α = 1 − level`.
pub fn two_sided_z(level: f64) -> f64 {
    quantile(1.0 - (1.0 - level) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_published_quantiles() {
        // scipy.stats.norm.ppf values.
        let cases = [
            (0.975, 1.959963984540054),
            (0.95, 1.6448536269514722),
            (0.995, 2.5758293035489004),
            (0.5, 0.0),
            (0.025, -1.9599639845400545),
            (0.9995, 3.2905267314919255),
        ];
        for (p, z) in cases {
            let got = quantile(p);
            assert!((got - z).abs() < 1e-12, "p={p}: {got} vs {z}");
        }
        assert!((two_sided_z(0.95) - 1.959963984540054).abs() < 1e-12);
    }
}
