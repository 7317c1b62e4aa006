//! Benchmark of the report's ranks (`report::ranks`): what the simultaneous rank intervals and
//! the rank divergences cost next to the rest of the scoring.
//!
//! `cargo run --release --example bench_ranks -- GRID.jsonl [--conditions K] [--tasks N]
//! [--bootstrap B] [--runs R] [--threads T]`
//!
//! Prints, as medians of R runs on T threads (default 1):
//! - the paper grid's scoring (`build_report`: score, bootstrap, intervals, paired deltas and
//!   its own ranks — 3 datasets of 12 conditions), from the parsed corpus;
//! - the ranks of that grid alone (`rank_datasets` on the grid's own resamples);
//! - the ranks of one dataset of K conditions (default 15) × N tasks (default 200, one rollout
//!   a task) at B resamples (default 10,000), on its own resamples;
//!
//! and each ranks time as a share of the grid's scoring time. `bench/ranks.sh` runs it.

use std::hint::black_box;
use std::time::Instant;

use prefix_exec::ingest::read_files;
use prefix_exec::report::{build_report, Settings};

#[path = "common/ranks_bench.rs"]
mod common;
use common::{leaderboard, ranks_time};

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut file, mut conditions, mut tasks) = (None, 15usize, 200usize);
    let (mut bootstrap, mut runs, mut threads) = (10_000u32, 5usize, 1usize);
    while let Some(a) = args.next() {
        let mut value = || args.next().and_then(|v| v.parse::<usize>().ok()).expect(&a);
        match a.as_str() {
            "--conditions" => conditions = value(),
            "--tasks" => tasks = value(),
            "--bootstrap" => bootstrap = value() as u32,
            "--runs" => runs = value(),
            "--threads" => threads = value(),
            _ => file = Some(a.clone()),
        }
    }
    let file = file.expect("usage: bench_ranks GRID.jsonl [--conditions K] [--tasks N] …");
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("thread pool");
    let settings = Settings {
        bootstrap,
        ..Settings::default()
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let time = |f: &mut dyn FnMut()| {
        median(
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .collect(),
        )
    };

    let bytes = std::fs::read(&file).expect("readable grid");
    let grid = read_files([(file.as_str(), &bytes[..])]);
    let grid_scoring = time(&mut || {
        black_box(build_report(&grid, &settings));
    });
    let grid_ranks = ranks_time(&grid, &settings, &time);

    let wide = read_files([("wide.jsonl", leaderboard(conditions, tasks).as_bytes())]);
    let wide_ranks = ranks_time(&wide, &settings, &time);
    let wide_scoring = time(&mut || {
        black_box(build_report(&wide, &settings));
    });

    let pct = |x: f64| 100.0 * x / grid_scoring;
    println!(
        "{threads} thread(s), B = {bootstrap}, median of {runs}: paper grid ({} rollouts, {} \
         conditions) scoring {:.1} ms, of which its own ranks {:.2} ms ({:.1}%); ranks of one \
         dataset of {conditions} conditions x {tasks} tasks {:.2} ms = {:.1}% of the grid's \
         scoring (that dataset's whole scoring {:.1} ms)",
        grid.rollouts.len(),
        grid.conditions.len(),
        1e3 * grid_scoring,
        1e3 * grid_ranks,
        pct(grid_ranks),
        1e3 * wide_ranks,
        pct(wide_ranks),
        1e3 * wide_scoring,
    );
}
