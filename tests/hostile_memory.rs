//! Bounded memory on the big hostile inputs, measured by a counting allocator: the peak of live
//! heap bytes while reading and scoring, beyond the input itself. One test, so nothing else runs
//! in this process while it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use prefix_exec::ingest::Ingest;
use prefix_exec::report::{build_report, Settings};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak live bytes above the level at the call, while `f` runs.
fn peak_during(f: impl FnOnce()) -> usize {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - base
}

/// Reads `text` in 4 MiB chunks, as the browser does, and scores it.
fn read_and_score(text: &[u8], settings: &Settings) {
    let mut ingest = Ingest::new();
    let f = ingest.begin_file("big.jsonl");
    for chunk in text.chunks(4 << 20) {
        ingest.push(f, chunk);
    }
    ingest.end_file(f);
    let report = build_report(&ingest.finish(), settings);
    assert!(report.identity_violations.is_empty());
}

fn line(task: &str, model: &str, steps: &str) -> String {
    format!(
        r#"{{"dataset":"d","task_id":"{task}","model":"{model}","method":"a","success":true,"steps":[{steps}]}}"#
    )
}

const MB: usize = 1 << 20;

#[test]
fn big_inputs_take_bounded_memory() {
    let quick = Settings {
        bootstrap: 200,
        ..Settings::default()
    };

    // A line is buffered whole until it ends (while the format is detected, then while it is
    // parsed): memory grows with the longest line, never with the file, and its steps are not
    // kept.
    let big = "x".repeat(50 * MB);
    let text = line(
        "big",
        "m",
        &format!(r#"{{"tool":"w","args":{{"text":"{big}"}},"ok":true}}"#),
    );
    drop(big);
    let peak = peak_during(|| read_and_score(text.as_bytes(), &quick));
    eprintln!("50 MB line: peak {} MB", peak / MB);
    assert!(peak < 3 * 50 * MB, "50 MB line: {} MB", peak / MB);
    drop(text);

    // 100,000 steps fold as they stream: memory does not grow with the steps.
    let steps = vec![r#"{"tool":"x","args":{"a":1},"ok":true}"#; 100_000].join(",");
    let text = line("t", "m", &steps);
    let peak = peak_during(|| read_and_score(text.as_bytes(), &quick));
    eprintln!(
        "100,000 steps ({} MB line): peak {} MB",
        text.len() / MB,
        peak / MB
    );
    assert!(
        peak < 4 * text.len() + 16 * MB,
        "100,000 steps: {} MB",
        peak / MB
    );
    drop(text);

    // 20,000 conditions at the default 10,000 resamples: the bootstrap that would need 21 GB is
    // not run (the report says so), so memory stays that of scoring.
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&line(
            &format!("t{}", i % 50),
            &format!("m{i:05}"),
            r#"{"ok":true}"#,
        ));
        text.push('\n');
    }
    let peak = peak_during(|| read_and_score(text.as_bytes(), &Settings::default()));
    eprintln!("20,000 conditions, B = 10,000: peak {} MB", peak / MB);
    assert!(peak < 256 * MB, "20,000 conditions: {} MB", peak / MB);
    // With resamples that fit, the bootstrap stays under its 1 GiB limit.
    let peak = peak_during(|| read_and_score(text.as_bytes(), &quick));
    eprintln!("20,000 conditions, B = 200: peak {} MB", peak / MB);
    assert!(
        peak < 1024 * MB + 256 * MB,
        "20,000 conditions: {} MB",
        peak / MB
    );
}
