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
use prefix_exec::report::ranks::rank_datasets;
use prefix_exec::report::{build_report, Settings};
use prefix_exec::rollout::Corpus;
use prefix_exec::score::{aggregate_with, MaxDepth};
use prefix_exec::stats::bootstrap::{bootstrap_block, BlockSamples};

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

/// The median time of the report's ranks for `corpus`, on resamples drawn as the report draws
/// them (its blocks' own bootstrap, same seed); the bootstrap itself is not timed.
fn ranks_time(corpus: &Corpus, settings: &Settings, time: &dyn Fn(&mut dyn FnMut()) -> f64) -> f64 {
    let resamples = settings.bootstrap as usize;
    let point = build_report(
        corpus,
        &Settings {
            bootstrap: 0,
            ..settings.clone()
        },
    );
    let agg = aggregate_with(corpus, MaxDepth::Fixed(10), resamples);
    let samples: Vec<Option<BlockSamples>> = agg
        .blocks
        .iter()
        .map(|b| Some(bootstrap_block(b, resamples, settings.seed, &mut |_| {})))
        .collect();
    time(&mut || {
        let mut notes = Vec::new();
        black_box(rank_datasets(
            &agg.blocks,
            &point.conditions,
            &samples,
            settings.level,
            &mut notes,
        ));
    })
}

/// A leaderboard-shaped dataset: `conditions` models of one method each, one rollout per task,
/// 1–8 steps, the first error and success from a fixed hash, each model a little stronger than
/// the last.
fn leaderboard(conditions: usize, tasks: usize) -> String {
    let mut out = String::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % 1000
    };
    for c in 0..conditions {
        let strength = 300 + 500 * c as u64 / conditions as u64;
        for t in 0..tasks {
            let len = 1 + next() % 8;
            let steps: Vec<&str> = (0..len)
                .map(|_| {
                    if next() < strength + 350 {
                        r#"{"ok":true}"#
                    } else {
                        r#"{"ok":false}"#
                    }
                })
                .collect();
            out.push_str(&format!(
                r#"{{"dataset":"board","task_id":"t{t:03}","model":"m{c:02}","method":"agent","success":{},"steps":[{}]}}"#,
                next() < strength,
                steps.join(",")
            ));
            out.push('\n');
        }
    }
    out
}
