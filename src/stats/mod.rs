//! Statistics: interval estimators and the seeded resampler.
//!
//! - [`wilson`]: the Wilson score interval, used for RR (a conditional proportion).
//! - [`percentile`]: percentiles by linear interpolation between order statistics (Hyndman–Fan
//!   type 7, numpy's default), used for every bootstrap interval.
//! - [`resample`]: the task-level bootstrap's random draws, reproducible on every platform.
//! - [`normal`]: the standard normal quantile, for the Wilson interval's `z`.
//! - [`ranks`]: point ranks, simultaneous rank intervals (max-t over all pairs) and Kendall's τ_b,
//!   from the bootstrap's resampled series.
//!
//! Everything here uses only IEEE-exact operations (`+ − × ÷ √`) and the pure-Rust `libm`, so the
//! same inputs give the same bits natively and in WebAssembly.

pub mod bootstrap;
pub mod normal;
pub use prefix_exec_kernel::percentile;
pub use prefix_exec_kernel::resample;
pub mod ranks;
pub mod wilson;

/// Tolerance for the identity checks that compare two floating-point routes to the same number
/// (eq. 7 and eq. 12). Each route does a handful of correctly rounded operations on values in
/// [0, 1], so honest results differ by a few ulps (≈1e-16); 1e-9 flags only real disagreements.
pub const IDENTITY_TOLERANCE: f64 = 1e-9;
