//! Benchmark of the parse alone: a file read through [`Ingest`] in chunks, as the CLI reads it.
//!
//! `cargo run --release --example bench_parse -- FILE [--threads N] [--runs R] [--chunk BYTES]
//! [--min-chunk BYTES | --sequential | --prepare-only | --sliced]`
//!
//! Streams FILE from disk in chunks of `--chunk` bytes (default 1 MiB, the CLI's) and prints the
//! median over R runs of the time to the finished corpus, on N threads (default: every core).
//! `--min-chunk` sets the smallest chunk parsed on several threads (default: the ingest's);
//! `--sequential` reads every line on the calling thread; `--prepare-only` times only the part
//! the threads share (each line's JSON parse and validation) on one thread; `--sliced` times the
//! browser's split on one thread: the pool workers' share (`prepare_slice` + encoding, per slice
//! of `--chunk` bytes) and the coordinator's (decoding + `push_prepared`). `bench/parse.sh` runs
//! it.

use std::io::Read;
use std::time::Instant;

use prefix_exec::ingest::{Ingest, ParallelParse};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut threads = 0usize;
    let mut runs = 3usize;
    let mut chunk = 1usize << 20;
    let mut parallel = ParallelParse::default();
    let mut prepare_only = false;
    let mut sliced = false;
    let number = |v: Option<String>, what: &str| -> usize {
        v.and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{what} N"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = number(args.next(), "--threads"),
            "--runs" => runs = number(args.next(), "--runs").max(1),
            "--chunk" => chunk = number(args.next(), "--chunk").max(1),
            "--min-chunk" => parallel.min_chunk = number(args.next(), "--min-chunk"),
            "--sequential" => parallel = ParallelParse::OFF,
            "--prepare-only" => prepare_only = true,
            "--sliced" => sliced = true,
            _ => file = Some(a),
        }
    }
    let file = file.expect("usage: bench_parse FILE [--threads N] [--runs R] [--chunk BYTES]");
    // 0 = rayon's default: every available core.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .expect("thread pool");
    if prepare_only {
        // The part of the parse the threads share, alone on this thread: what is left of the
        // full parse is the sequential part (line splitting, the in-order replay).
        let bytes = std::fs::read(&file).expect("readable input");
        let mut times = Vec::new();
        let mut n = 0;
        for _ in 0..runs {
            let t0 = Instant::now();
            n = bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .filter_map(prefix_exec::formats::canonical::prepare_line)
                .count();
            times.push(t0.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{file}: {n} lines, JSON parse + validation alone on one thread: {:.3} s (median \
             of {runs})",
            times[times.len() / 2]
        );
        return;
    }
    if sliced {
        return bench_sliced(&file, chunk, runs);
    }
    let mut times = Vec::new();
    let (mut rollouts, mut diagnostics, mut bytes) = (0, 0, 0);
    let mut buf = vec![0u8; chunk];
    for _ in 0..runs {
        let t0 = Instant::now();
        let mut ingest = Ingest::new();
        ingest.set_parallel_parse(parallel);
        let f = ingest.begin_file(&file);
        let mut input = std::fs::File::open(&file).expect("readable input");
        loop {
            let n = input.read(&mut buf).expect("readable input");
            if n == 0 {
                break;
            }
            ingest.push(f, &buf[..n]);
        }
        ingest.end_file(f);
        bytes = ingest.bytes_read(f);
        let corpus = ingest.finish();
        times.push(t0.elapsed().as_secs_f64());
        rollouts = corpus.rollouts.len();
        diagnostics = corpus.diagnostics_total;
        std::hint::black_box(&corpus);
    }
    times.sort_by(f64::total_cmp);
    let t = times[times.len() / 2];
    let split = if parallel == ParallelParse::OFF {
        "never split".to_string()
    } else {
        format!("chunks from {} KiB split", parallel.min_chunk >> 10)
    };
    println!(
        "{file}: {} MB in {} KiB chunks, {rollouts} rollouts, {diagnostics} diagnostics, {} \
         threads, {split}: parse {t:.3} s ({:.0} MB/s, median of {runs})",
        bytes >> 20,
        chunk >> 10,
        rayon::current_num_threads(),
        bytes as f64 / 1e6 / t
    );
}

/// The browser's split (`ingest::prepared`), both shares timed on this thread: what the pool
/// workers do per slice, and what is left to the coordinator.
fn bench_sliced(file: &str, piece: usize, runs: usize) {
    use prefix_exec::ingest::prepared::{prepare_slice, PreparedLines};
    let bytes = std::fs::read(file).expect("readable input");
    // As in the browser: the first 64 KiB, read plainly, tell the format; slices follow.
    let head = bytes.len().min(64 * 1024);
    let starts: Vec<usize> = (head..bytes.len()).step_by(piece).collect();
    let median = |mut t: Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let (mut pool, mut coordinator, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    let (mut encoded_bytes, mut taken, mut rollouts) = (0, 0, 0);
    for _ in 0..runs {
        let t0 = Instant::now();
        let encoded: Vec<Vec<u8>> = starts
            .iter()
            .map(|&a| {
                let from = a.saturating_sub(1);
                let to = (a + piece).min(bytes.len());
                prepare_slice(&bytes[from..to], from as u64).encode()
            })
            .collect();
        pool.push(t0.elapsed().as_secs_f64());
        encoded_bytes = encoded.iter().map(Vec::len).sum::<usize>();
        let t0 = Instant::now();
        let mut ingest = Ingest::new();
        ingest.set_parallel_parse(ParallelParse::OFF);
        let f = ingest.begin_file(file);
        ingest.push(f, &bytes[..head]);
        taken = 0;
        for (k, &a) in starts.iter().enumerate() {
            let to = (a + piece).min(bytes.len());
            let mut lines = PreparedLines::decode(&encoded[k]).expect("decodes");
            let held = lines.len();
            ingest.push_prepared(f, &bytes[a..to], &mut lines);
            taken += held - lines.len();
        }
        ingest.end_file(f);
        let corpus = ingest.finish();
        coordinator.push(t0.elapsed().as_secs_f64());
        rollouts = corpus.rollouts.len();
        let t0 = Instant::now();
        let mut ingest = Ingest::new();
        ingest.set_parallel_parse(ParallelParse::OFF);
        let f = ingest.begin_file(file);
        ingest.push(f, &bytes[..head]);
        for &a in &starts {
            ingest.push(f, &bytes[a..(a + piece).min(bytes.len())]);
        }
        ingest.end_file(f);
        std::hint::black_box(ingest.finish());
        plain.push(t0.elapsed().as_secs_f64());
    }
    println!(
        "{file}: {} MB in slices of {} KiB, {rollouts} rollouts, {taken} lines read ahead \
         ({:.1} MB encoded); one thread, medians of {runs}: plain push {:.3} s; pool's share \
         (prepare_slice + encode) {:.3} s; coordinator's share (decode + push_prepared) {:.3} s",
        bytes.len() >> 20,
        piece >> 10,
        encoded_bytes as f64 / 1e6,
        median(plain),
        median(pool),
        median(coordinator),
    );
}
