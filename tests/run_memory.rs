//! Bounded memory on runs of many scenarios, measured by a counting allocator: while a
//! ToolSandbox run folder is read, nothing beyond the scenario being read is held on top of
//! what is kept per file and per rollout: a scenario is converted as soon as its files are in.
//! One test, so nothing else runs in this process while it measures.

use std::sync::atomic::Ordering;

use prefix_exec::ingest::Ingest;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{LIVE, PEAK};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/import/toolsandbox/agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05"
);

/// A run folder of `n` scenarios, each the fixture's `timestamp_scrambled` scenario (its
/// `execution_context.json` and `conversation.json`) under its own name, in the walk's name
/// order (the summary first, then per scenario the conversation before the context). Every
/// file's bytes differ (a whitespace suffix spelling its index): identical files are read once.
fn run(n: usize) -> Vec<(String, Vec<u8>)> {
    let scenario = format!("{FIXTURE}/trajectories/timestamp_scrambled");
    let context = std::fs::read(format!("{scenario}/execution_context.json")).unwrap();
    let conversation = std::fs::read(format!("{scenario}/conversation.json")).unwrap();
    let distinct = |bytes: &[u8], i: usize| {
        let mut b = bytes.to_vec();
        b.extend(
            format!("{i:b}")
                .bytes()
                .map(|d| if d == b'1' { b'\t' } else { b' ' }),
        );
        b.push(b'\n');
        b
    };
    let rows: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"name": "s{i:05}", "categories": ["MULTIPLE_TOOL_CALL"], "traceback": null, "exception_type": null, "similarity": 1.0, "turn_count": 4}}"#
            )
        })
        .collect();
    // Pretty-printed like the harness's: the first line is `{`.
    let summary = format!(
        "{{\n\"per_scenario_results\": [{}],\n\"category_aggregated_results\": {{\"ALL_CATEGORIES\": {{\"similarity\": 1.0}}}}\n}}",
        rows.join(",\n")
    );
    let dir = "agent_acme/m_user_openai/gpt-4o_01_02_2025_03_04_05";
    let mut files = vec![(format!("{dir}/result_summary.json"), summary.into_bytes())];
    for i in 0..n {
        let s = format!("{dir}/trajectories/s{i:05}");
        files.push((format!("{s}/conversation.json"), distinct(&conversation, i)));
        files.push((format!("{s}/execution_context.json"), distinct(&context, i)));
    }
    files
}

/// Reads `files` in 64 KiB chunks; returns the peak of live bytes above the start, the live
/// bytes once the input has ended (the corpus, the import summary and the session's per-file
/// state: what is kept per file and per rollout), and the rollouts read.
fn read(files: &[(String, Vec<u8>)]) -> (usize, usize, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let mut ingest = Ingest::new();
    for (name, bytes) in files {
        let f = ingest.begin_file(name);
        for chunk in bytes.chunks(64 << 10) {
            ingest.push(f, chunk);
        }
        ingest.end_file(f);
    }
    ingest.end_all();
    let end = LIVE.load(Ordering::Relaxed) - base;
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let (corpus, summary) = ingest.finish_with_summary();
    let n = corpus.rollouts.len();
    drop((corpus, summary));
    (peak, end, n)
}

#[test]
fn a_toolsandbox_run_is_read_scenario_by_scenario() {
    const KB: usize = 1 << 10;
    let mut excess = Vec::new();
    let mut sizes = Vec::new();
    for n in [250, 2_000] {
        let files = run(n);
        let largest = files.iter().map(|(_, b)| b.len()).max().unwrap();
        let (peak, end, rollouts) = read(&files);
        assert_eq!(rollouts, n);
        eprintln!(
            "{n} scenarios: peak {} KB, live at the end {} KB, excess {} KB (largest file {} KB)",
            peak / KB,
            end / KB,
            (peak - end) / KB,
            largest / KB
        );
        excess.push(peak - end);
        sizes.push((n, largest, end));
    }
    // What reading holds beyond what is kept: a few copies of the file being read, and the
    // old buffer of a per-file or per-rollout table while it doubles (each is under an eighth
    // of what is live). Holding every scenario's calls until the input ends, as this reader
    // once did, exceeds it (4.1 MB over 8.7 MB live at 2,000 scenarios).
    for (&(n, largest, end), &e) in sizes.iter().zip(&excess) {
        assert!(
            e < 4 * largest + end / 8,
            "{n} scenarios: {} KB held beyond {} KB live (largest file {} KB)",
            e / KB,
            end / KB,
            largest / KB
        );
    }
}
