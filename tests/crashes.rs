//! Crashed rollouts (an infrastructure or provider error ended them), one policy for every
//! format (`formats::CrashPolicy`): hand-written inputs of each format with a crash, scored
//! under `benchmark` (each leaderboard's own count), `count` and `exclude`; the canonical
//! `crash` field; the per-condition count in the report and the table; and the released
//! tau-bench runs whose crashed episodes once formed a dataset of their own.

mod import_support;

use import_support::*;
use prefix_exec::formats::{CrashPolicy, ImportOptions};
use prefix_exec::report::{build_report, table, Settings};
use prefix_exec::rollout::Corpus;

fn with(policy: CrashPolicy) -> ImportOptions {
    ImportOptions {
        crashed: policy,
        ..ImportOptions::default()
    }
}

fn read(files: &[(&str, &[u8])], policy: CrashPolicy) -> Corpus {
    let files: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(n, b)| (n.to_string(), b.to_vec()))
        .collect();
    ingest_with(&files, &with(policy), usize::MAX).0
}

fn report(corpus: &Corpus) -> prefix_exec::report::Report {
    build_report(
        corpus,
        &Settings {
            bootstrap: 0,
            ..Settings::default()
        },
    )
}

/// (dataset, n, crashed) per condition.
fn counts(corpus: &Corpus) -> Vec<(String, u64, u64)> {
    report(corpus)
        .conditions
        .iter()
        .map(|c| (c.dataset.clone(), c.n, c.crashed))
        .collect()
}

/// A tau-bench file of the retail domain: one finished episode (one executed call, reward 1)
/// and two that crashed before the agent acted (`traj` empty, `info` = {error, traceback}).
const TAU_BENCH: &[u8] = br##"[
{"task_id": 0, "trial": 0, "reward": 1.0, "info": {"task": {"actions": []}}, "traj": [
  {"role": "system", "content": "# Retail agent policy\n..."},
  {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "function": {"name": "find", "arguments": "{}"}}]},
  {"role": "tool", "tool_call_id": "c", "content": "[]"}]},
{"task_id": 1, "trial": 0, "reward": 0.0, "info": {"error": "litellm.Timeout: APITimeoutError - Request timed out", "traceback": "Traceback ...\nlitellm.Timeout: x"}, "traj": []},
{"task_id": 2, "trial": 0, "reward": 0.0, "info": {"traceback": "Traceback (most recent call last):\n  File \"run.py\"\nopenai.InternalServerError: 503\n"}, "traj": []}
]"##;

#[test]
fn tau_bench_crashed_episodes_stay_in_their_domain() {
    let corpus = read(&[("m-retail.json", TAU_BENCH)], CrashPolicy::Benchmark);
    assert_eq!(counts(&corpus), [("tau-bench/retail".to_string(), 3, 2)]);
    let v = views(&corpus);
    // Crashed: one terminal no-tool action, not executable, not successful, `environment`.
    let crashed: Vec<_> = v.iter().filter(|v| v.task != "0").collect();
    for c in &crashed {
        assert_eq!((c.horizon, c.fed, c.success), (1, 1, false));
    }
    let f = corpus.rollouts[2].first_failure.unwrap();
    assert!(f.environment && f.label.is_none());
    assert_eq!(corpus.texts.get(f.label_source.unwrap()), "crash");
    assert_eq!(
        crashed
            .iter()
            .map(|c| c.error.as_deref().unwrap())
            .collect::<Vec<_>>(),
        [
            "litellm.Timeout: APITimeoutError - Request timed out",
            "openai.InternalServerError: 503"
        ]
    );
    let r = report(&corpus);
    let c = &r.conditions[0];
    assert_eq!((c.fully_executable, c.successes, c.rr_eligible), (1, 1, 2));
    assert_eq!(c.first_failure_labels.environment, Some(2));

    // Counting them is the benchmark's way already; excluding leaves them out, counted.
    assert_eq!(
        counts(&read(&[("m-retail.json", TAU_BENCH)], CrashPolicy::Count)),
        [("tau-bench/retail".to_string(), 3, 2)]
    );
    let (corpus, summary) = ingest_with(
        &[("m-retail.json".to_string(), TAU_BENCH.to_vec())],
        &with(CrashPolicy::Exclude),
        usize::MAX,
    );
    assert_eq!(counts(&corpus), [("tau-bench/retail".to_string(), 1, 0)]);
    assert_eq!(summary.files[0].excluded["crashed before any step"], 2);
    assert!(messages(&corpus).iter().any(
        |m| m.contains("2 rollouts excluded by termination reason \"crashed before any step\"")
    ));
}

#[test]
fn a_file_of_crashes_alone_takes_its_domain_from_its_name() {
    let only = br#"[{"task_id": 5, "trial": 0, "reward": 0.0, "info": {"error": "HTTP 400"}, "traj": []}]"#;
    let corpus = read(
        &[("tool-calling-airline-qwen-0.0_range_0--1.json", only)],
        CrashPolicy::Benchmark,
    );
    assert_eq!(counts(&corpus), [("tau-bench/airline".to_string(), 1, 1)]);
    let corpus = read(&[("qwen.json", only)], CrashPolicy::Benchmark);
    assert_eq!(counts(&corpus), [("tau-bench".to_string(), 1, 1)]);
}

#[test]
fn bfcl_inference_errors_follow_the_policy() {
    let files: Vec<(String, Vec<u8>)> = BFCL_RUN.iter().map(|r| fixture(r)).collect();
    let read = |policy, exclude_legacy| {
        let options = ImportOptions {
            crashed: policy,
            exclude_inference_errors: exclude_legacy,
            ..ImportOptions::default()
        };
        let corpus = ingest_with(&files, &options, usize::MAX).0;
        let r = report(&corpus);
        (r.conditions[0].n, r.conditions[0].crashed)
    };
    let (n, crashed) = read(CrashPolicy::Benchmark, false);
    assert!(crashed > 0, "the fixture has an inference error");
    assert_eq!(read(CrashPolicy::Count, true), (n, crashed));
    assert_eq!(read(CrashPolicy::Exclude, false), (n - crashed, 0));
    // The per-format option still speaks under `benchmark`.
    assert_eq!(read(CrashPolicy::Benchmark, true), (n - crashed, 0));
}

#[test]
fn inspect_errored_samples_follow_the_policy() {
    let files = vec![fixture("inspect/log.json")];
    let n = |policy| {
        let corpus = ingest_with(&files, &with(policy), usize::MAX).0;
        let r = report(&corpus);
        r.conditions
            .iter()
            .map(|c| (c.n, c.crashed))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let (kept, crashed) = n(CrashPolicy::Count);
    assert!(crashed > 0, "the fixture has errored samples");
    assert_eq!(n(CrashPolicy::Benchmark), (kept - crashed, 0));
    assert_eq!(n(CrashPolicy::Exclude), (kept - crashed, 0));
}

#[test]
fn toolsandbox_provider_errors_follow_the_policy() {
    let base = fixtures().join("toolsandbox");
    let files = walk(&base, &base);
    let n = |policy| {
        let corpus = ingest_with(&files, &with(policy), usize::MAX).0;
        let r = report(&corpus);
        (r.conditions[0].n, r.conditions[0].crashed)
    };
    let (kept, crashed) = n(CrashPolicy::Count);
    assert_eq!(crashed, 1, "the fixture's provider_timeout scenario");
    assert_eq!(n(CrashPolicy::Benchmark), (kept - 1, 0));
    assert_eq!(n(CrashPolicy::Exclude), (kept - 1, 0));
}

#[test]
fn canonical_crash_field() {
    let lines = br#"{"dataset":"d","task_id":"a","model":"m","method":"x","success":false,"steps":[],"crash":"HTTP 503"}
{"dataset":"d","task_id":"b","model":"m","method":"x","success":false,"steps":[{"tool":"t","ok":true}],"crash":"sandbox died"}
{"dataset":"d","task_id":"c","model":"m","method":"x","success":true,"steps":[],"crash":"HTTP 503"}
{"dataset":"d","task_id":"d","model":"m","method":"x","success":true,"steps":[],"no_tool_ok":true}
"#;
    let corpus = read(&[("runs.jsonl", lines)], CrashPolicy::Benchmark);
    // The crashed no-tool line fails at depth 1 (no_tool_ok or not); a crash after a step keeps
    // its steps; a successful crash is refused with its line.
    assert_eq!(
        shapes(&corpus),
        want(&[("a", 1, 1, false), ("b", 1, 2, false), ("d", 1, 2, true)])
    );
    assert!(messages(&corpus)
        .iter()
        .any(|m| m.contains("a rollout that crashed cannot be successful")));
    let r = report(&corpus);
    assert_eq!((r.conditions[0].n, r.conditions[0].crashed), (3, 2));
    // The text table gains a Crashed column only where a condition crashed.
    let text = table::render_text_as(&r, 2, table::Layout::Leaderboard);
    assert!(text.contains("Crashed"), "{text}");
    let last = lines.split(|&b| b == b'\n').nth(3).unwrap();
    let clean = read(&[("runs.jsonl", last)], CrashPolicy::Benchmark);
    let text = table::render_text_as(&report(&clean), 2, table::Layout::Leaderboard);
    assert!(!text.contains("Crashed"), "{text}");
}

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

/// The released tau-bench runs of jibf/agent_hard_benchmark: every crashed episode stays in its
/// file's domain, so each condition has the N the benchmark reports, and the success rates are
/// the files' own mean rewards (crashed episodes count as their stored 0.0).
#[test]
fn released_tau_bench_runs_count_their_crashes() {
    let dir =
        std::path::Path::new(SHARED).join("tau-bench/jibf+agent_hard_benchmark/tau-bench/results");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("skipped: shared data not found at {}", dir.display());
        return;
    };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .map(|p| (p.to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    let (corpus, _) = ingest_with(&files, &ImportOptions::default(), usize::MAX);
    let r = report(&corpus);
    let mut got: Vec<(String, String, u64, u64, u64)> = r
        .conditions
        .iter()
        .map(|c| {
            (
                c.dataset.clone(),
                c.model.clone(),
                c.n,
                c.crashed,
                c.successes,
            )
        })
        .collect();
    got.sort();
    // The shared README's table: episodes, crashed, mean reward × episodes.
    let want = [
        (
            "tau-bench/airline",
            "Qwen3-235B-A22B-Thinking-2507-FP8",
            50,
            4,
            22,
        ),
        ("tau-bench/airline", "Qwen3-8B", 50, 3, 18),
        ("tau-bench/airline", "gpt-4.1", 50, 0, 27),
        (
            "tau-bench/retail",
            "claude-4-sonnet-thinking-off",
            115,
            20,
            70,
        ),
        ("tau-bench/retail", "o4-mini-high", 115, 0, 78),
    ];
    let want: Vec<(String, String, u64, u64, u64)> = want
        .iter()
        .map(|&(d, m, n, c, s)| (d.to_string(), m.to_string(), n, c, s))
        .collect();
    assert_eq!(got, want);
    // Excluded, they leave the cohort: N = episodes − crashed.
    let (corpus, _) = ingest_with(&files, &with(CrashPolicy::Exclude), usize::MAX);
    let n: u64 = report(&corpus).conditions.iter().map(|c| c.n).sum();
    assert_eq!(n, 380 - 27);
}
