//! Benchmark of one interval's ends on a bootstrap series of counts (TER or final success of a
//! condition with one rollout per task): the general selection (`central_interval`, on a copy of
//! the series, as the report takes it) against the histogram of counts
//! (`central_interval_of_counts`), which must give the same bits.
//!
//! `cargo run --release --example bench_percentile -- [--tasks N] [--bootstrap B] [--reps R]`

use std::hint::black_box;
use std::time::Instant;

use prefix_exec::stats::percentile::{
    central_interval, central_interval_by_selection, central_interval_of,
    central_interval_of_counts,
};

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut tasks, mut bootstrap, mut reps) = (200u64, 10_000usize, 2_000usize);
    while let Some(a) = args.next() {
        let v = args.next().and_then(|v| v.parse::<u64>().ok());
        match (a.as_str(), v) {
            ("--tasks", Some(v)) => tasks = v,
            ("--bootstrap", Some(v)) => bootstrap = v as usize,
            ("--reps", Some(v)) => reps = v as usize,
            _ => panic!("usage: bench_percentile [--tasks N] [--bootstrap B] [--reps R]"),
        }
    }
    // A binomial-looking series: the sum of `tasks` coin flips from an LCG, over `tasks`.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let series: Vec<f64> = (0..bootstrap)
        .map(|_| {
            let mut c = 0u64;
            for _ in 0..tasks {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                c += (state >> 63) & 1;
            }
            c as f64 / tasks as f64
        })
        .collect();
    let slow = central_interval(&series, 0.95);
    let fast = central_interval_of_counts(series.iter().copied(), tasks, 0.95);
    assert_eq!(slow, fast, "the two paths must agree");
    let time = |f: &dyn Fn() -> Option<[f64; 2]>| {
        let start = Instant::now();
        for _ in 0..reps {
            black_box(f());
        }
        start.elapsed().as_secs_f64() / reps as f64 * 1e6
    };
    let selection = time(&|| central_interval_by_selection(&mut black_box(&series).clone(), 0.95));
    let windowed = time(&|| central_interval_of(&black_box(&series)[..], 0.95));
    let counts =
        time(&|| central_interval_of_counts(black_box(&series).iter().copied(), tasks, 0.95));
    println!(
        "interval ends of a count series ({tasks} tasks, B = {bootstrap}): selection {selection:.1} µs, \
         windowed selection {windowed:.1} µs, histogram of counts {counts:.1} µs, same bits"
    );
    // A series with few ties, as paired differences of mean FED or AUC-PEC are.
    let smooth: Vec<f64> = series
        .iter()
        .enumerate()
        .map(|(i, v)| v + (i % 97) as f64 * 1e-5)
        .collect();
    let selection = time(&|| central_interval_by_selection(&mut black_box(&smooth).clone(), 0.95));
    let windowed = time(&|| central_interval_of(&black_box(&smooth)[..], 0.95));
    println!(
        "interval ends of a smooth series (B = {bootstrap}): selection {selection:.1} µs, windowed \
         selection {windowed:.1} µs, same bits"
    );
}
