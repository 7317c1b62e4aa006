//! Each importer on its committed fixture: the rollouts it yields (T, FED, success, first
//! failure, names, cost), the per-file summary, the options, and the invariances the design
//! promises — any chunking, any file name, and `convert` then `score` = `score`.

mod import_support;

use import_support::*;
use prefix_exec::formats::{FailureSource, Format, ImportOptions};
use prefix_exec::ingest::{read_files, Ingest};
use prefix_exec::report::{build_report, Settings};
use prefix_exec::rollout::Label;

#[test]
fn tau_bench() {
    let (corpus, summary) = ingest(&["tau-bench/tiny-model-retail.json"]);
    assert!(corpus.diagnostics.is_empty(), "{:?}", messages(&corpus));
    let v = views(&corpus);
    assert!(v.iter().all(
        |v| (v.dataset.as_str(), v.model.as_str(), v.method.as_str())
            == ("tau-bench/retail", "tiny-model", "tool-calling")
    ));
    // Task 0: clean; recovered after "Error: user not found" (reward 0.9999999 counts).
    // Task 1: no tool call on a task without actions (executable), then "Unknown action" and
    // a call no tool message answers.
    assert_eq!(
        shapes(&corpus),
        want(&[
            ("0", 2, 3, true),
            ("0", 2, 1, true),
            ("1", 1, 2, true),
            ("1", 2, 1, false)
        ])
    );
    assert_eq!(v[1].error.as_deref(), Some("Error: user not found"));
    assert_eq!(v[1].tool.as_deref(), Some("find_user"));
    assert_eq!(v[3].error.as_deref(), Some("Unknown action refund"));
    assert_eq!(summary.files[0].format, Some(Format::TauBench));
    assert_eq!(summary.files[0].environment_first_failures, 2);
    // pass^k over the two trials of each task: (1 + 1/2)/2 and (1 + 0)/2.
    let report = prefix_exec::report::build_report(
        &corpus,
        &prefix_exec::report::Settings {
            bootstrap: 0,
            ..Default::default()
        },
    );
    assert_eq!(report.conditions[0].pass_hat, vec![0.75, 0.5]);
}

#[test]
fn tau2_results_with_tool_schemas() {
    let (corpus, summary) = ingest(&["tau2/telecom-results.json"]);
    assert!(corpus.diagnostics.is_empty(), "{:?}", messages(&corpus));
    let v = views(&corpus);
    assert!(v.iter().all(
        |v| (v.dataset.as_str(), v.model.as_str(), v.method.as_str())
            == ("tau2/telecom", "tiny-llm", "llm_agent")
    ));
    assert_eq!(
        shapes(&corpus),
        want(&[
            // toggle_data {"on": "yes"}: accepted by the environment, but not a boolean.
            ("a", 2, 2, true),
            // Only user-side tool calls: no agent action, on a task that needs none.
            ("b", 1, 2, false),
            // No `error` field: "Error: …" content rejects.
            ("c", 2, 1, false),
            // infrastructure_error, no message, on a task that needs an agent action.
            ("a", 1, 1, false),
            // A tool that is not exposed: the schema check speaks first.
            ("c", 1, 1, false),
        ])
    );
    assert_eq!(v[0].label, Some(Label::Schema));
    assert!(
        v[0].error.as_deref().unwrap().contains("toggle_data"),
        "{:?}",
        v[0].error
    );
    assert_eq!(v[2].error.as_deref(), Some("Error: line L2 not found"));
    // No label in the log: the built-in rule for a reference that does not resolve gives one.
    assert_eq!(v[2].label, Some(Label::Dependency));
    assert_eq!(v[4].label, Some(Label::Schema));
    assert!(v[4]
        .error
        .as_deref()
        .unwrap()
        .contains("not among the 2 tools"));
    // Agent tokens only (the user simulator's usage is not the method's cost).
    let c = corpus.rollouts[0].cost;
    assert_eq!(
        (c.get(0), c.get(1), c.get(2)),
        (Some(330.0), Some(30.0), Some(0.01))
    );
    let f = &summary.files[0];
    assert_eq!(
        (f.format, f.tools, f.rollouts),
        (Some(Format::Tau2Results), 2, 5)
    );
    assert_eq!(
        (f.schema_first_failures, f.environment_first_failures),
        (2, 2)
    );
    assert_eq!(f.termination_reasons.get("infrastructure_error"), Some(&1));
    assert_eq!(
        summary.first_failure_sources,
        [
            Some(FailureSource::SchemaCheck),
            None,
            Some(FailureSource::Environment),
            Some(FailureSource::Environment),
            Some(FailureSource::SchemaCheck)
        ]
    );
    let counts = summary.source_counts(&corpus);
    assert_eq!((counts[0].schema_check, counts[0].environment), (2, 2));
}

#[test]
fn tau2_options_exclusions_and_overrides() {
    let file = fixture("tau2/telecom-results.json");
    let options = ImportOptions {
        exclude_termination: vec!["infrastructure_error".into()],
        schema_checks: false,
        model: Some("renamed".into()),
        ..ImportOptions::default()
    };
    let (corpus, summary) = ingest_with(&[file], &options, usize::MAX);
    assert_eq!(
        shapes(&corpus),
        want(&[
            ("a", 2, 3, true),
            ("b", 1, 2, false),
            ("c", 2, 1, false),
            ("c", 1, 1, false)
        ])
    );
    assert!(views(&corpus).iter().all(|v| v.model == "renamed"));
    assert_eq!(
        summary.files[0].excluded.get("infrastructure_error"),
        Some(&1)
    );
    assert_eq!(summary.files[0].tools, 0);
    // Never silent: the exclusion is a file diagnostic.
    assert_eq!(
        messages(&corpus),
        ["0: 1 rollouts excluded by termination reason \"infrastructure_error\""]
    );
}

#[test]
fn tau2_bare_simulation_array() {
    let file = fixture("tau2/simulations-array.json");
    let (corpus, _) = ingest_with(
        std::slice::from_ref(&file),
        &ImportOptions::default(),
        usize::MAX,
    );
    assert_eq!(
        shapes(&corpus),
        want(&[("3", 1, 2, true), ("4", 1, 1, false)])
    );
    assert_eq!(
        corpus.condition_names(0),
        ("tau2", "unknown-model", "unknown-method")
    );
    assert!(has_message(&corpus, &["carries no run info"]));
    let options = ImportOptions {
        dataset: Some("tau2/retail".into()),
        model: Some("m".into()),
        method: Some("agent".into()),
        ..ImportOptions::default()
    };
    let (corpus, summary) = ingest_with(&[file], &options, 5);
    assert_eq!(corpus.condition_names(0), ("tau2/retail", "m", "agent"));
    assert_eq!(summary.files[0].format, Some(Format::Tau2Simulations));
}

#[test]
fn tau2_directory_form_in_any_order() {
    let run = [
        "tau2/dir-run/simulations/sim-b.json",
        "tau2/dir-run/results.json",
        "tau2/dir-run/simulations/sim-a.json",
    ];
    let (corpus, summary) = ingest(&run);
    assert!(corpus.diagnostics.is_empty(), "{:?}", messages(&corpus));
    // Files are resolved in input order: sim-b first.
    assert_eq!(
        shapes(&corpus),
        want(&[("2", 1, 2, false), ("1", 2, 1, true)])
    );
    assert_eq!(
        corpus.condition_names(0),
        ("tau2/airline", "dir-llm", "llm_agent")
    );
    assert_eq!(corpus.rollouts[1].cost.tokens(), Some(33.0));
    assert_eq!(summary.files[1].format, Some(Format::Tau2RunMetadata));
    assert_eq!(summary.files[0].format, Some(Format::Tau2Simulation));
    assert!(summary.files[0]
        .paired_with
        .as_deref()
        .unwrap()
        .ends_with("results.json"));
}

#[test]
fn bfcl_result_with_its_score() {
    let (corpus, summary) = ingest(&[
        "bfcl/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json",
        "bfcl/score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json",
    ]);
    // Since #11 an inference error is a rollout that failed before any step (the leaderboard's
    // cohort: N = 5, 2 correct), not a skipped line.
    assert_eq!(
        messages(&corpus),
        ["0: 1 inference errors (a `traceback` and no trajectory) scored as rollouts that failed before any step: one terminal no-tool action, not executable, not successful, as the leaderboard counts them; the option to exclude inference errors leaves them out"]
    );
    assert_eq!(
        shapes(&corpus),
        want(&[
            // The inference error: T = 1, FED = 1, failed.
            ("multi_turn_base_0", 1, 1, false),
            // cd ok; ls → {'error': …} (a Python repr); echo → None.
            ("multi_turn_base_1", 3, 2, true),
            // "Error during execution: …" first; a decoded call without output later.
            ("multi_turn_base_2", 3, 1, false),
            // step_2 before step_10: pwd ok, then a list whose first object has `error`.
            ("multi_turn_base_3", 2, 2, false),
            // Empty responses only, and successful.
            ("multi_turn_base_4", 1, 2, true),
        ])
    );
    let v = views(&corpus);
    assert_eq!(
        (
            v[1].dataset.as_str(),
            v[1].model.as_str(),
            v[1].method.as_str()
        ),
        ("bfcl/multi_turn_base", "tiny-model-FC", "fc")
    );
    assert_eq!(
        v[1].error.as_deref(),
        Some("{'error': 'ls: permission denied'}")
    );
    assert_eq!(v[1].tool.as_deref(), Some("ls"));
    let c = corpus.rollouts[1].cost;
    assert_eq!((c.tokens(), c.latency_s()), (Some(660.0), Some(2.0)));
    assert!(corpus.rollouts[0].no_tool && !corpus.rollouts[0].fully_executable());
    let f = &summary.files[0];
    assert_eq!(
        (f.rollouts, f.inference_errors, f.skipped_inference_errors),
        (5, 1, 0)
    );
    assert!(f.paired_with.as_deref().unwrap().ends_with("_score.json"));
    // The published counts hold: imported = total_count, successes = correct_count.
    let successes = corpus.rollouts.iter().filter(|r| r.success).count();
    assert_eq!((f.rollouts, successes), (5, 2));

    // Excluded on request: left out, counted and said.
    let files: Vec<(String, Vec<u8>)> = BFCL_RUN.iter().map(|r| fixture(r)).collect();
    let options = ImportOptions {
        exclude_inference_errors: true,
        ..ImportOptions::default()
    };
    let (corpus, summary) = ingest_with(&files, &options, usize::MAX);
    let f = &summary.files[0];
    assert_eq!(
        (f.rollouts, f.inference_errors, f.skipped_inference_errors),
        (4, 0, 1)
    );
    assert_eq!(corpus.rollouts.len(), 4);
    assert!(has_message(&corpus, &["1 inference-error lines excluded"]));
}

#[test]
fn bfcl_without_inference_log_pairs_by_file_names() {
    let (corpus, summary) = ingest(&[
        "bfcl/no-log/score/other-model/multi_turn/BFCL_v4_multi_turn_miss_func_score.json",
        "bfcl/no-log/result/other-model/multi_turn/BFCL_v4_multi_turn_miss_func_result.json",
    ]);
    assert_eq!(
        shapes(&corpus),
        want(&[
            ("multi_turn_miss_func_0", 3, 4, true),
            ("multi_turn_miss_func_1", 1, 2, true)
        ])
    );
    assert_eq!(
        corpus.condition_names(0),
        ("bfcl/multi_turn_miss_func", "other-model", "fc")
    );
    assert_eq!(summary.files[1].without_tool_outputs, 2);
    assert!(has_message(
        &corpus,
        &["2 rollouts have no inference_log", "upper bounds"]
    ));
    assert_eq!(corpus.rollouts[0].cost.tokens(), Some(150.0));
}

#[test]
fn canonical_tools_lines_and_per_rollout_tools() {
    let (corpus, summary) = ingest(&["canonical/tools.jsonl"]);
    assert!(corpus.diagnostics.is_empty(), "{:?}", messages(&corpus));
    assert_eq!(
        shapes(&corpus),
        want(&[
            ("t1", 3, 2, true),
            ("t2", 2, 2, false),
            ("t3", 1, 1, true),
            ("t4", 2, 2, true),
            ("t5", 1, 2, true),
            ("t6", 1, 1, false),
        ])
    );
    let labels: Vec<_> = views(&corpus).into_iter().map(|v| v.label).collect();
    assert_eq!(
        labels,
        [
            Some(Label::Schema),
            Some(Label::Schema),
            Some(Label::Schema),
            Some(Label::Precondition),
            None,
            // No tool call, infrastructure_error: rule env.infrastructure (not one of the five).
            None
        ]
    );
    assert_eq!(
        summary.first_failure_sources,
        [
            Some(FailureSource::SchemaCheck),
            Some(FailureSource::SchemaCheck),
            Some(FailureSource::SchemaCheck),
            Some(FailureSource::Environment),
            None,
            Some(FailureSource::Environment)
        ]
    );
    // Checks off: the log's own verdicts only.
    let options = ImportOptions {
        schema_checks: false,
        exclude_termination: vec!["infrastructure_error".into()],
        ..ImportOptions::default()
    };
    let (corpus, summary) = ingest_with(&[fixture("canonical/tools.jsonl")], &options, 7);
    assert_eq!(
        shapes(&corpus),
        want(&[
            ("t1", 3, 4, true),
            ("t2", 2, 3, false),
            ("t3", 1, 1, true),
            ("t4", 2, 2, true),
            ("t5", 1, 2, true)
        ])
    );
    assert_eq!(views(&corpus)[2].label, Some(Label::State));
    assert_eq!(
        summary.files[0].excluded.get("infrastructure_error"),
        Some(&1)
    );
}

/// Every fixture, dropped together under misleading names, in odd chunk sizes.
fn all_files(renamed: bool) -> Vec<(String, Vec<u8>)> {
    ALL_FIXTURES
        .iter()
        .map(|rel| {
            let (name, bytes) = fixture(rel);
            if renamed && !rel.starts_with("bfcl") && !rel.starts_with("tau-bench") {
                // Content decides, not the name (BFCL pairing and tau-bench's model default
                // use folder and file names, so those keep theirs).
                (format!("upload-{}.txt", rel.len()), bytes)
            } else {
                (name, bytes)
            }
        })
        .collect()
}

#[test]
fn chunking_and_names_change_nothing() {
    let reference = ingest_with(&all_files(false), &ImportOptions::default(), usize::MAX).0;
    // The BFCL fixture's inference error is a rollout (+ 1).
    assert_eq!(reference.rollouts.len(), 4 + 5 + 2 + 2 + 4 + 2 + 6 + 1);
    for chunk in [1, 2, 3, 17, 64, 4096] {
        let (corpus, _) = ingest_with(&all_files(true), &ImportOptions::default(), chunk);
        assert_eq!(views(&corpus), views(&reference), "chunk {chunk}");
        let costs: Vec<_> = corpus.rollouts.iter().map(|r| r.cost).collect();
        let want: Vec<_> = reference.rollouts.iter().map(|r| r.cost).collect();
        assert_eq!(costs, want, "chunk {chunk}");
        assert_eq!(
            corpus.diagnostics_total, reference.diagnostics_total,
            "chunk {chunk}"
        );
    }
}

#[test]
fn convert_then_score_equals_score() {
    let files = all_files(false);
    let options = ImportOptions {
        exclude_termination: vec!["too_many_errors".into()],
        ..ImportOptions::default()
    };
    let mut ingest = Ingest::converting();
    let mut lines = Vec::new();
    for (name, bytes) in &files {
        let f = ingest.begin_file_with(name, options.clone());
        for c in bytes.chunks(100) {
            ingest.push(f, c);
            lines.extend(ingest.drain_converted());
        }
        ingest.end_file(f);
        lines.extend(ingest.drain_converted());
    }
    ingest.end_all();
    lines.extend(ingest.drain_converted());
    let (direct, summary) = ingest.finish_with_summary();
    let text = lines.join("\n");
    let (back, back_summary) = {
        let mut i = Ingest::new();
        let f = i.begin_file("converted.jsonl");
        i.push(f, text.as_bytes());
        i.end_file(f);
        i.finish_with_summary()
    };
    assert_eq!(views(&back), views(&direct));
    assert_eq!(
        back_summary.first_failure_sources,
        summary.first_failure_sources
    );
    let settings = Settings {
        bootstrap: 200,
        seed: 3,
        ..Settings::default()
    };
    let a = build_report(&direct, &settings);
    let b = build_report(&back, &settings);
    assert_eq!(a.conditions, b.conditions);
    assert_eq!(a.paired, b.paired);
    // The canonical file's own tools line is kept, and cleared before the next file's rollouts.
    assert!(lines.iter().any(|l| l.starts_with(r#"{"tools": [{"type""#)));
    let t6 = lines
        .iter()
        .position(|l| l.contains(r#""task_id": "t6""#) || l.contains(r#""task_id":"t6""#))
        .unwrap();
    assert_eq!(lines[t6 + 1], r#"{"tools":null}"#);
    assert!(back.diagnostics.is_empty(), "{:?}", messages(&back));
}

#[test]
fn rollout_lines_for_a_viewer() {
    let files: Vec<_> = ALL_FIXTURES.iter().map(|r| fixture(r)).collect();
    let (corpus, summary) = ingest_with(&files, &ImportOptions::default(), usize::MAX);
    for (i, r) in corpus.rollouts.iter().enumerate() {
        let bytes = &files[r.source.file as usize].1;
        let at = r.source.offset as usize..(r.source.offset + u64::from(r.source.len)) as usize;
        let line = summary.rollout_line(&corpus, i, &bytes[at]).unwrap();
        // The re-read line reads back to the same rollout.
        let back = read_files([("one.jsonl", line.as_bytes())]);
        let (v, w) = (views(&back), views(&corpus));
        assert_eq!(v[0], w[i], "rollout {i}: {line}");
        let steps = prefix_exec::browse::parse_steps(&line).unwrap();
        assert_eq!(steps.len() as u32, if r.no_tool { 0 } else { r.horizon });
    }
}

/// The `reject_source` of each step of the canonical lines `convert` writes for `rel`.
fn reject_sources(rel: &str, options: &ImportOptions) -> Vec<Vec<Option<String>>> {
    let (name, bytes) = fixture(rel);
    let mut ingest = Ingest::converting();
    let f = ingest.begin_file_with(&name, options.clone());
    ingest.push(f, &bytes);
    ingest.end_file(f);
    ingest.end_all();
    ingest
        .drain_converted()
        .iter()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            v["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["reject_source"].as_str().map(str::to_string))
                .collect()
        })
        .collect()
}

fn some(s: &[Option<&str>]) -> Vec<Option<String>> {
    s.iter().map(|x| x.map(str::to_string)).collect()
}

#[test]
fn transcript_openai_chat_and_its_variants() {
    let (corpus, summary) = ingest(&["transcript/openai-chat.json"]);
    assert!(corpus.diagnostics.is_empty(), "{:?}", messages(&corpus));
    let v = views(&corpus);
    assert_eq!(
        (
            v[0].dataset.as_str(),
            v[0].model.as_str(),
            v[0].method.as_str()
        ),
        ("transcripts", "gpt-x", "react")
    );
    // search, price (replies out of order, by id), book (arguments not JSON), pay (an `error`
    // on the reply), notify (no reply); the user's own call is not a step.
    assert_eq!(shapes(&corpus), want(&[("book-1", 5, 3, false)]));
    assert_eq!(v[0].tool.as_deref(), Some("book"));
    assert_eq!(v[0].label, Some(Label::Schema));
    assert!(v[0].error.as_deref().unwrap().contains("not valid JSON"));
    assert_eq!(summary.files[0].format, Some(Format::Transcript));
    let mapping = &summary.files[0].mapping;
    assert_eq!(mapping["success"], "success");
    assert_eq!(mapping["task"], "task_id");
    assert_eq!(mapping["method"], "agent");
    assert_eq!(
        reject_sources("transcript/openai-chat.json", &ImportOptions::default()),
        [some(&[
            None,
            None,
            Some("arguments"),
            Some("flag:error"),
            Some("unanswered")
        ])]
    );
}

#[test]
fn transcript_anthropic_blocks() {
    let (corpus, _) = ingest(&["transcript/anthropic.jsonl"]);
    assert!(corpus.diagnostics.is_empty(), "{:?}", messages(&corpus));
    // a-1: read, write (is_error: permission denied), write again; a-2: no tool call, failed.
    assert_eq!(
        shapes(&corpus),
        want(&[("a-1", 3, 2, true), ("a-2", 1, 1, false)])
    );
    let v = views(&corpus);
    assert_eq!(
        v[0].error.as_deref(),
        Some("permission denied: /etc/app.cfg")
    );
    assert_eq!(v[0].label, Some(Label::Precondition));
    assert_eq!(v[1].label, Some(Label::Information));
    assert_eq!(
        reject_sources("transcript/anthropic.jsonl", &ImportOptions::default()),
        [some(&[None, Some("flag:is_error"), None]), vec![]]
    );
}

#[test]
fn transcript_responses_items_and_the_threshold() {
    let (corpus, summary) = ingest(&["transcript/responses.json"]);
    assert!(corpus.diagnostics.is_empty(), "{:?}", messages(&corpus));
    // r-1: lookup ("Tool lookup not found"), search (an MCP result, isError false); reward 1.
    // r-2: search (a block flagged isError); reward 0.5 < 1.
    assert_eq!(
        shapes(&corpus),
        want(&[("r-1", 2, 1, true), ("r-2", 1, 1, false)])
    );
    assert_eq!(summary.files[0].mapping["success"], "reward ≥ 1");
    assert_eq!(
        reject_sources("transcript/responses.json", &ImportOptions::default()),
        [
            some(&[Some("text:unknown-tool"), None]),
            some(&[Some("flag:mcp")])
        ]
    );
    let mut half = ImportOptions::default();
    half.transcript.fields.set("threshold=0.5").unwrap();
    let files = vec![fixture("transcript/responses.json")];
    let (corpus, _) = ingest_with(&files, &half, usize::MAX);
    assert_eq!(
        shapes(&corpus),
        want(&[("r-1", 2, 1, true), ("r-2", 1, 1, true)])
    );
    // Text rules off: only the flag rejects.
    let mut off = ImportOptions::default();
    off.transcript.reject.text_rules = false;
    let (corpus, _) = ingest_with(&files, &off, usize::MAX);
    assert_eq!(
        shapes(&corpus),
        want(&[("r-1", 2, 3, true), ("r-2", 1, 1, false)])
    );
}

#[test]
fn transcript_positional_replies_and_a_null_outcome() {
    let (corpus, summary) = ingest(&["transcript/positional.jsonl"]);
    // get, set ("Error: locked", its reply matched by position); the second record's reward is
    // null: not scored, counted.
    assert_eq!(shapes(&corpus), want(&[("7", 2, 2, false)]));
    let v = views(&corpus);
    assert_eq!(
        (v[0].dataset.as_str(), v[0].model.as_str()),
        ("bench", "org/m")
    );
    assert!(has_message(&corpus, &["paired with the calls by position"]));
    assert_eq!(
        summary.files[0].excluded["outcome field eval_result.overall_reward is null"],
        1
    );
    // Another success field, as `--field success=meta.is_correct` sets it.
    let mut by_flag = ImportOptions::default();
    by_flag
        .transcript
        .fields
        .set("success=meta.is_correct")
        .unwrap();
    let (corpus, _) = ingest_with(&[fixture("transcript/positional.jsonl")], &by_flag, 7);
    assert_eq!(
        shapes(&corpus),
        want(&[("7", 2, 2, true), ("8", 1, 1, false)])
    );
}

#[test]
fn transcripts_read_the_same_in_any_chunks() {
    for rel in [
        "transcript/openai-chat.json",
        "transcript/anthropic.jsonl",
        "transcript/responses.json",
        "transcript/positional.jsonl",
    ] {
        let files = vec![fixture(rel)];
        let whole = ingest_with(&files, &ImportOptions::default(), usize::MAX).0;
        for chunk in [1, 7, 64] {
            let cut = ingest_with(&files, &ImportOptions::default(), chunk).0;
            assert_eq!(views(&cut), views(&whole), "{rel} in chunks of {chunk}");
        }
    }
}
