//! The Inspect AI reader on real logs (`../shared/data/released-runs/inspect`, third-party
//! files never committed here; two of them state no license). When the folder is absent, each
//! test says "skipped" and passes.
//!
//! The expected counts were computed independently of this reader (a short Python script over
//! the same files applying the rule of docs/formats.md), then spot-checked by hand against the
//! JSON: e.g. the METR log's 6 samples hold 70 bash calls in `messages` plus 6 final `submit()`
//! calls that exist only as tool events (76 steps, none failing); the GAIA 3.5-sonnet log's 4
//! rejected calls are web-browser `unknown` errors and a `timeout`.

use std::path::{Path, PathBuf};

use prefix_exec::formats::{Format, ImportOptions};
use prefix_exec::ingest::Ingest;
use prefix_exec::rollout::Corpus;

const INSPECT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/data/released-runs/inspect"
);

fn shared(test: &str) -> Option<PathBuf> {
    let p = Path::new(INSPECT);
    if p.is_dir() {
        Some(p.to_path_buf())
    } else {
        println!("{test}: skipped: shared data not found at {INSPECT}");
        None
    }
}

/// Per file: rollouts, Σ T, Σ FED, successes, fully executable rollouts, and the diagnostics
/// that must appear.
struct Expect {
    file: &'static str,
    format: Format,
    dataset: &'static str,
    model: &'static str,
    method: &'static str,
    rollouts: usize,
    sum_t: u64,
    sum_fed: u64,
    successes: usize,
    fully_executable: usize,
    notes: &'static [&'static str],
}

const EXPECT: &[Expect] = &[
    Expect {
        file: "METR+inspect-action/tests/core/importer/data_fixtures/eval_logs/small.eval",
        format: Format::InspectEval,
        dataset: "oxdna_simple",
        model: "anthropic/claude-opus-4-1-20250805",
        method: "metr_agents/react",
        rollouts: 6,
        sum_t: 76,
        sum_fed: 82,
        successes: 6,
        fully_executable: 6,
        notes: &[
            "6 calls exist only as tool events",
            "(6/6 scored samples) agrees with the log's score_metr_task accuracy",
        ],
    },
    Expect {
        file: "UKGovernmentBEIS+inspect_ai/tests/analysis/test_logs/2025-05-12T20-27-36-04-00_browser.json",
        format: Format::InspectJson,
        dataset: "browser",
        model: "openai/gpt-4o-mini",
        method: "generate",
        rollouts: 1,
        sum_t: 4,
        sum_fed: 5,
        successes: 1,
        fully_executable: 1,
        notes: &["agrees with the log's includes accuracy"],
    },
    Expect {
        file: "UKGovernmentBEIS+inspect_ai/tests/analysis/test_logs/2025-05-12T20-28-13-04-00_popularity.json",
        format: Format::InspectJson,
        dataset: "popularity",
        model: "openai/gpt-4o-mini",
        method: "generate",
        rollouts: 3,
        sum_t: 3,
        sum_fed: 5,
        successes: 2,
        fully_executable: 2,
        notes: &[
            "the eval's status is \"cancelled\"",
            "(2/3 scored samples) agrees with the log's match accuracy",
        ],
    },
    Expect {
        file: "UKGovernmentBEIS+inspect_ai/tests/log/test_eval_log/log_message_deduplication.eval",
        format: Format::InspectEval,
        dataset: "inspect_test_utils/guess_number",
        model: "hardcoded/hardcoded",
        method: "generate",
        rollouts: 1,
        sum_t: 5,
        sum_fed: 6,
        successes: 0,
        fully_executable: 1,
        notes: &[
            "log format version 3 is newer",
            "(0/1 scored samples) agrees with the log's closeness_log accuracy",
        ],
    },
    Expect {
        file: "UKGovernmentBEIS+inspect_ai/tests/log/test_eval_log/log_tool_call_error.json",
        format: Format::InspectJson,
        dataset: "",
        model: "",
        method: "",
        rollouts: 0,
        sum_t: 0,
        sum_fed: 0,
        successes: 0,
        fully_executable: 0,
        notes: &[
            "1 samples not scored, excluded: 1 × no scores (scorer \"includes\")",
            "11 tool messages answer no call",
            "no sample here was scored to compare with",
        ],
    },
    Expect {
        file: "bigmouthmodels+eval-scan/tests/assets/gaia/2025-04-22T12-47-43+00-00_gaia_44bWf4thg5Mv4xh8nMcHjU.eval",
        format: Format::InspectEval,
        dataset: "inspect_evals/gaia (GAIA)",
        model: "anthropic/claude-3-7-sonnet-20250219",
        method: "basic_agent_loop",
        rollouts: 3,
        sum_t: 57,
        sum_fed: 60,
        successes: 1,
        fully_executable: 3,
        notes: &["(1/3 scored samples) agrees with the log's gaia_scorer accuracy"],
    },
    Expect {
        file: "bigmouthmodels+eval-scan/tests/assets/gaia/2025-04-22T12-47-43+00-00_gaia_72tL4xgwPbXDCdxdDr7zao.eval",
        format: Format::InspectEval,
        dataset: "inspect_evals/gaia (GAIA)",
        model: "anthropic/claude-3-5-sonnet-20240620",
        method: "basic_agent_loop",
        rollouts: 3,
        sum_t: 39,
        sum_fed: 10,
        successes: 1,
        fully_executable: 1,
        notes: &["(1/3 scored samples) agrees with the log's gaia_scorer accuracy"],
    },
    Expect {
        file: "evaleval+every_eval_ever/tests/data/inspect/data_cvebench_empty_choices.json",
        format: Format::InspectJson,
        dataset: "",
        model: "",
        method: "",
        rollouts: 0,
        sum_t: 0,
        sum_fed: 0,
        successes: 0,
        fully_executable: 0,
        notes: &[
            "1 samples errored (`error` set",
            "the log's check_exploit mean is 0.7051, but no sample here was scored",
        ],
    },
    Expect {
        file: "prakratt+CircumEval/logs/logs/fastapi/gpt_5_4/gradient/2026-04-22T06-19-39-00-00_cv-task-D-a-codex-cli_openrouter-openai-gpt-5.4_2MKqs9XaXci5ywCWnt8KxD.eval",
        format: Format::InspectEval,
        dataset: "cv_task_D_a_codex_cli (cv_task_D_a)",
        model: "openrouter/openai/gpt-5.4",
        method: "Codex CLI",
        rollouts: 10,
        sum_t: 46,
        sum_fed: 54,
        successes: 1,
        fully_executable: 8,
        notes: &["(1/10 scored samples) agrees with the log's sabotage_scorer accuracy"],
    },
    Expect {
        file: "prakratt+CircumEval/logs/logs/fastapi/sonnet_4_6/gradient/2026-04-23T00-30-47-00-00_cv-task-A-tests-d-claude-code_openrouter-anthropic-claude-sonnet-4-6_PaYfLvfa5EvWKc6nmzrxvn.eval",
        format: Format::InspectEval,
        dataset: "cv_task_A_tests_d_claude_code (cv_task_A_tests_d)",
        model: "openrouter/anthropic/claude-sonnet-4-6",
        method: "Claude Code",
        rollouts: 10,
        sum_t: 83,
        sum_fed: 42,
        successes: 0,
        fully_executable: 2,
        notes: &["(0/10 scored samples) agrees with the log's sabotage_scorer accuracy"],
    },
    Expect {
        file: "tidyverse+vitals/inst/test/inspect/logs/2025-04-07T11-00-30-05-00_arithmetic-with-tool_gKECTBvzvzgtPqQCd3cirF.json",
        format: Format::InspectJson,
        dataset: "arithmetic_with_tool",
        model: "anthropic/claude-3-5-sonnet-latest",
        method: "generate",
        rollouts: 2,
        sum_t: 2,
        sum_fed: 4,
        successes: 2,
        fully_executable: 2,
        notes: &["(2/2 scored samples) agrees with the log's match accuracy"],
    },
];

/// Reads a file pushed in chunks, and (for archives) by random access.
fn read(path: &Path, chunk: usize, random_access: bool) -> (Corpus, Option<Format>) {
    let name = path.to_string_lossy();
    let mut ingest = Ingest::new();
    let f = ingest.begin_file_with(&name, ImportOptions::default());
    if random_access {
        let mut file = std::fs::File::open(path).unwrap();
        ingest.read_archive(f, &mut file);
    } else {
        let bytes = std::fs::read(path).unwrap();
        for c in bytes.chunks(chunk) {
            ingest.push(f, c);
        }
        ingest.end_file(f);
    }
    let (corpus, summary) = ingest.finish_with_summary();
    (corpus, summary.files[0].format)
}

fn check(e: &Expect, corpus: &Corpus, format: Option<Format>, how: &str) {
    let ctx = format!("{} ({how})", e.file);
    assert_eq!(format, Some(e.format), "{ctx}");
    let r = &corpus.rollouts;
    assert_eq!(r.len(), e.rollouts, "{ctx}");
    assert_eq!(
        r.iter().map(|r| u64::from(r.horizon)).sum::<u64>(),
        e.sum_t,
        "{ctx}"
    );
    assert_eq!(
        r.iter().map(|r| u64::from(r.fed.0)).sum::<u64>(),
        e.sum_fed,
        "{ctx}"
    );
    assert_eq!(r.iter().filter(|r| r.success).count(), e.successes, "{ctx}");
    assert_eq!(
        r.iter().filter(|r| r.fully_executable()).count(),
        e.fully_executable,
        "{ctx}"
    );
    if let Some(first) = r.first() {
        let names = corpus.condition_names(first.condition);
        assert_eq!(names, (e.dataset, e.model, e.method), "{ctx}");
    }
    let messages: Vec<&str> = corpus
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    let checks: Vec<&str> = corpus.checks.iter().map(|d| d.message.as_str()).collect();
    for want in e.notes {
        // A self-check that agrees is a check passed, never a diagnostic.
        let (found, not_in) = if want.contains("agrees with the log") {
            (&checks, &messages)
        } else {
            (&messages, &checks)
        };
        assert!(
            found.iter().any(|m| m.contains(want)),
            "{ctx}: missing {want:?} in {found:#?}"
        );
        assert!(
            !not_in.iter().any(|m| m.contains(want)),
            "{ctx}: {want:?} misplaced in {not_in:#?}"
        );
    }
    assert_eq!(corpus.files[0].errors, 0, "{ctx}: {messages:#?}");
}

#[test]
fn released_inspect_logs() {
    let Some(root) = shared("released_inspect_logs") else {
        return;
    };
    for e in EXPECT {
        let path = root.join(e.file);
        let (corpus, format) = read(&path, 1 << 16, false);
        check(e, &corpus, format, "pushed in 64 KiB chunks");
        if e.format == Format::InspectEval {
            let (c2, format) = read(&path, 0, true);
            check(e, &c2, format, "random access");
        } else {
            let (c2, format) = read(&path, 4093, false);
            check(e, &c2, format, "pushed in 4093-byte chunks");
        }
    }
}

#[test]
fn two_models_pair_by_sample_id() {
    let Some(root) = shared("two_models_pair_by_sample_id") else {
        return;
    };
    // The two GAIA runs (same 3 samples, two models) form one dataset with two conditions.
    let mut ingest = Ingest::new();
    for e in EXPECT.iter().filter(|e| e.file.contains("/gaia/")) {
        let path = root.join(e.file);
        let f = ingest.begin_file(&path.to_string_lossy());
        ingest.read_archive(f, &mut std::fs::File::open(&path).unwrap());
    }
    let corpus = ingest.finish();
    assert_eq!(corpus.rollouts.len(), 6);
    let datasets: std::collections::BTreeSet<&str> = corpus
        .rollouts
        .iter()
        .map(|r| corpus.condition_names(r.condition).0)
        .collect();
    assert_eq!(datasets.len(), 1);
    let tasks: std::collections::BTreeSet<_> = corpus.rollouts.iter().map(|r| r.task).collect();
    assert_eq!(tasks.len(), 3);
    let report = prefix_exec::report::build_report(
        &corpus,
        &prefix_exec::report::Settings {
            bootstrap: 200,
            ..prefix_exec::report::Settings::default()
        },
    );
    // Two models under one method, each with a single method (the leaderboard shape): one entry
    // for the two conditions, the cross-condition pair on their shared tasks; the model pair of
    // the same two conditions (asked by name) has the same numbers.
    let kinds: Vec<&str> = report.paired.iter().map(|p| p.compare.as_str()).collect();
    assert_eq!(kinds, ["conditions"], "one entry for the two conditions");
    assert_eq!(report.paired[0].n_shared, Some(3));
    let model = |side: &prefix_exec::report::PairSide| match side {
        prefix_exec::report::PairSide::Condition(c) => c.model.clone(),
        prefix_exec::report::PairSide::Name(n) => n.clone(),
    };
    let named = prefix_exec::report::build_report(
        &corpus,
        &prefix_exec::report::Settings {
            bootstrap: 200,
            pairs: vec![(model(&report.paired[0].a), model(&report.paired[0].b))],
            ..prefix_exec::report::Settings::default()
        },
    );
    let kinds: Vec<&str> = named.paired.iter().map(|p| p.compare.as_str()).collect();
    assert_eq!(kinds, ["models"]);
    assert_eq!(named.paired[0].ter, report.paired[0].ter);
    assert_eq!(
        named.paired[0].final_success,
        report.paired[0].final_success
    );
}

// ---- the committed, hand-made fixtures (tests/fixtures/import/inspect, see generate.py) ------

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/inspect")
        .join(name)
}

/// (task, T, FED, success) per rollout of the fixture run, derived by hand from generate.py:
/// sample 1 epoch 1 runs a (ok), b (timeout), c (parse error): FED 2 of 3, C; epoch 2 makes no
/// call and scores I; t-3's calls are answered by events (d ran, e rejected by the approver) or
/// nowhere (f): FED 2 of 3, score 1.0; 4 errored, 5 NaN and 6 a dict are left out; 7's only call
/// has a legacy tool_error: FED 1, P; 8 runs h then a submit() that only its events hold: 2 steps,
/// both executed, true.
const FIXTURE_RUN: [(&str, u32, u32, bool); 5] = [
    ("1", 3, 2, true),
    ("1", 1, 1, false),
    ("t-3", 3, 2, true),
    ("7", 1, 1, false),
    ("8", 2, 3, true),
];

fn outcomes(corpus: &Corpus) -> Vec<(String, u32, u32, bool)> {
    corpus
        .rollouts
        .iter()
        .map(|r| {
            (
                corpus.task_name(r.task).to_string(),
                r.horizon,
                r.fed.0,
                r.success,
            )
        })
        .collect()
}

fn want() -> Vec<(String, u32, u32, bool)> {
    FIXTURE_RUN
        .iter()
        .map(|(t, h, f, s)| (t.to_string(), *h, *f, *s))
        .collect()
}

#[test]
fn fixture_logs_in_both_containers_and_every_compression() {
    let json = read(&fixture("log.json"), 1000, false);
    assert_eq!(json.1, Some(Format::InspectJson));
    assert_eq!(outcomes(&json.0), want());
    let eval = read(&fixture("log.eval"), 777, false);
    assert_eq!(eval.1, Some(Format::InspectEval));
    assert_eq!(outcomes(&eval.0), want());
    let random = read(&fixture("log.eval"), 0, true);
    assert_eq!(outcomes(&random.0), want());
    let notes = |c: &Corpus| -> Vec<String> {
        c.diagnostics
            .iter()
            .chain(&c.checks)
            .map(|d| d.message.clone())
            .collect()
    };
    assert_eq!(notes(&json.0), notes(&eval.0));
    assert_eq!(notes(&eval.0), notes(&random.0));
    // The self-check that agrees is a passed check, not a diagnostic.
    assert!(json.0.checks.iter().any(|d| d
        .message
        .contains("(3/5 scored samples) agrees with the log's match accuracy")));
    assert!(!json
        .0
        .diagnostics
        .iter()
        .any(|d| d.message.contains("self-check")));

    // The same entries zstd-compressed (Inspect ≥ 0.3.206) and stored read the same.
    let bytes = std::fs::read(fixture("log.eval")).unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])).unwrap();
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut data).unwrap();
        entries.push((f.name().unwrap().to_string(), data));
    }
    let refs: Vec<(&str, &[u8])> = entries.iter().map(|(n, d)| (n.as_str(), &d[..])).collect();
    for method in [93, 0] {
        let rebuilt = prefix_exec::formats::inspect::archive::build_zip(&refs, method, None);
        let mut ingest = Ingest::new();
        let f = ingest.begin_file("log-zstd.eval");
        ingest.read_archive(f, &mut &rebuilt[..]);
        let corpus = ingest.finish();
        assert_eq!(outcomes(&corpus), want(), "method {method}");
        assert_eq!(notes(&corpus), notes(&eval.0));
    }
}

#[test]
fn a_run_that_never_finished() {
    let (corpus, format) = read(&fixture("crashed.eval"), 100, false);
    assert_eq!(format, Some(Format::InspectEval));
    assert_eq!(outcomes(&corpus), want()[..2].to_vec());
    assert!(corpus
        .diagnostics
        .iter()
        .any(|d| d.message.contains("no header.json")));
}

#[test]
fn convert_then_score_gives_the_same_rollouts() {
    let mut ingest = Ingest::converting();
    let f = ingest.begin_file("log.eval");
    ingest.read_archive(f, &mut std::fs::File::open(fixture("log.eval")).unwrap());
    ingest.end_all();
    let lines = ingest.drain_converted();
    let text = lines.join("\n");
    let back = prefix_exec::ingest::read_files([("converted.jsonl", text.as_bytes())]);
    assert_eq!(outcomes(&back), want());
    let first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first["meta"]["format"], "inspect");
    assert_eq!(first["cost"]["tokens"], 1125.0);
    assert_eq!(first["cost"]["latency_s"], 12.5);
    assert_eq!(
        first["steps"][1]["error"],
        "timeout: Command timed out before completing."
    );
}
