//! Benchmark of the scoring core: parse + score + bootstrap + paired deltas, by phase.
//!
//! `cargo run --release --example bench_core -- FILE [--bootstrap B] [--runs R] [--threads N]`
//! prints the median over R runs of each phase, on N threads (default: every core). `bench/core.sh` runs it over the
//! paper-sized synthetic grid and its multiples to show the scaling in B and in rollouts.

use std::time::Instant;

use prefix_exec::ingest::Ingest;
use prefix_exec::report::{build_report, Settings};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut bootstrap = 10_000u32;
    let mut runs = 5usize;
    let mut threads = 0usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bootstrap" => {
                bootstrap = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--bootstrap N")
            }
            "--threads" => {
                threads = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--threads N")
            }
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            _ => file = Some(a),
        }
    }
    let file = file.expect("usage: bench_core FILE [--bootstrap B] [--runs R] [--threads N]");
    // 0 = rayon's default: every available core.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("thread pool");
    let bytes = std::fs::read(&file).expect("readable input");
    let settings = Settings {
        bootstrap,
        ..Settings::default()
    };

    let mut parse = Vec::new();
    let mut total = Vec::new();
    let mut rollouts = 0;
    let mut conditions = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let mut ingest = Ingest::new();
        let f = ingest.begin_file(&file);
        for chunk in bytes.chunks(1 << 20) {
            ingest.push(f, chunk);
        }
        ingest.end_file(f);
        let corpus = ingest.finish();
        let t1 = Instant::now();
        let report = build_report(&corpus, &settings);
        let t2 = Instant::now();
        std::hint::black_box(&report);
        rollouts = corpus.rollouts.len();
        conditions = report.conditions.len();
        parse.push((t1 - t0).as_secs_f64());
        total.push((t2 - t0).as_secs_f64());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (p, t) = (median(&mut parse), median(&mut total));
    println!(
        "{file}: {} MB, {rollouts} rollouts, {conditions} conditions, B = {bootstrap}, {} threads: \
         parse {:.3} s, score+bootstrap+paired {:.3} s, total {:.3} s (median of {runs})",
        bytes.len() >> 20,
        rayon::current_num_threads(),
        p,
        t - p,
        t
    );
}
