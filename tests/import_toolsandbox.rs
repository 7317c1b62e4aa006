//! The ToolSandbox importer end to end: the committed hand-written run folder
//! (`tests/fixtures/import/toolsandbox/`) through `Ingest` (every rule, the run's messages, the
//! rollout viewer's re-reading, options, chunking and file order, convert then score), and the
//! real released runs in `../shared` (skipped with a message when absent).

mod import_support;

use std::path::{Path, PathBuf};

use import_support::*;
use prefix_exec::browse::parse_steps;
use prefix_exec::formats::{toolsandbox, Format, ImportOptions, ImportSummary};
use prefix_exec::ingest::Ingest;
use prefix_exec::rollout::Corpus;

const RUN: &str = "agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05";

fn fixture_run() -> Vec<(String, Vec<u8>)> {
    let base = fixtures().join("toolsandbox");
    walk(&base, &base.join(RUN))
}

fn with_tau(tau: f64, keep: bool) -> ImportOptions {
    ImportOptions {
        toolsandbox: toolsandbox::Options {
            tau,
            keep_provider_errors: keep,
        },
        ..ImportOptions::default()
    }
}

/// The rollouts sorted by task: (task, T, FED, success).
fn sorted_shapes(corpus: &Corpus) -> Vec<(String, u32, u32, bool)> {
    let mut s = shapes(corpus);
    s.sort();
    s
}

fn steps_of(
    corpus: &Corpus,
    summary: &ImportSummary,
    files: &[(String, Vec<u8>)],
    task: &str,
) -> Vec<prefix_exec::browse::StepView> {
    let i = corpus
        .rollouts
        .iter()
        .position(|r| corpus.task_name(r.task) == task)
        .unwrap();
    let src = corpus.rollouts[i].source;
    let bytes = &files[src.file as usize].1[src.offset as usize..][..src.len as usize];
    let line = summary.rollout_line(corpus, i, bytes).unwrap();
    parse_steps(&line).unwrap()
}

#[test]
fn every_rule_on_the_fixture_run() {
    let files = fixture_run();
    let (corpus, summary) = ingest_with(&files, &ImportOptions::default(), usize::MAX);
    let v = views(&corpus);
    assert!(v.iter().all(
        |v| (v.dataset.as_str(), v.model.as_str(), v.method.as_str())
            == ("toolsandbox", "acme/tiny-1", "default")
    ));
    assert_eq!(
        sorted_shapes(&corpus),
        want(&[
            // JSONDecodeError: one synthetic rejected call, no name.
            ("bad_json_crash", 1, 1, false),
            // Max turns: the unanswered parallel pair is dropped.
            ("max_turns_cut", 1, 2, false),
            // No agent call, success: an executable terminal no-tool action.
            ("no_tool_refusal", 1, 2, true),
            // conversation.json alone: the failure is recognised from the text.
            ("only_conversation", 2, 1, false),
            // similarity 0.95 < τ = 1.
            ("timestamp_scrambled", 1, 2, false),
            // KeyError for an unknown tool: a final rejected call named from the traceback.
            ("unknown_tool_crash", 2, 2, false),
            // Permuted parallel replies: the first call is the one that raised.
            ("wifi_on_parallel", 4, 1, true),
        ])
    );
    let by_task = |t: &str| v.iter().find(|v| v.task == t).unwrap();
    assert_eq!(
        by_task("wifi_on_parallel").error.as_deref(),
        Some("PermissionError: Wifi cannot be turned on in low battery mode")
    );
    assert_eq!(
        by_task("wifi_on_parallel").tool.as_deref(),
        Some("set_wifi_status")
    );
    assert_eq!(
        by_task("unknown_tool_crash").tool.as_deref(),
        Some("functions.set_wifi_status")
    );
    assert!(by_task("bad_json_crash")
        .error
        .as_deref()
        .unwrap()
        .starts_with("json.decoder.JSONDecodeError"));
    // Formats, pairing and the explained empty files.
    let format = |suffix: &str| {
        summary
            .files
            .iter()
            .find(|f| f.name.ends_with(suffix))
            .unwrap()
    };
    assert_eq!(
        format("result_summary.json").format,
        Some(Format::ToolSandboxSummary)
    );
    let ctx = format("wifi_on_parallel/execution_context.json");
    assert_eq!(ctx.format, Some(Format::ToolSandboxContext));
    assert_eq!(
        ctx.paired_with.as_deref(),
        Some(&*format!("{RUN}/result_summary.json"))
    );
    assert_eq!(
        format("provider_timeout/execution_context.json")
            .excluded
            .get("provider error APITimeoutError"),
        Some(&1)
    );
    let conv = format("timestamp_scrambled/conversation.json");
    assert_eq!(
        (conv.format, conv.rollouts),
        (Some(Format::ToolSandboxConversation), 0)
    );
    assert!(conv
        .read_instead
        .as_deref()
        .unwrap()
        .ends_with("timestamp_scrambled/execution_context.json"));
    // The run's messages: exclusion, missing trajectory; nothing else. The self-check that
    // passed is no problem: it is among the checks.
    let m = messages(&corpus);
    assert!(
        has_message(&corpus, &["1 scenarios excluded", "APITimeoutError"]),
        "{m:?}"
    );
    assert!(
        has_message(&corpus, &["1 of the 9 scenarios", "missing_one"]),
        "{m:?}"
    );
    assert!(
        has_passed_check(&corpus, &["self-check", "matches"]),
        "{m:?}"
    );
    assert!(!has_message(&corpus, &["self-check"]), "{m:?}");
    assert!(has_message(&corpus, &["conversation.json alone"]), "{m:?}");
    assert!(
        has_message(
            &corpus,
            &["excluded by termination reason \"provider error APITimeoutError\""]
        ),
        "{m:?}"
    );
    assert!(!has_message(&corpus, &["SyntaxError"]), "{m:?}");
    assert!(!has_message(&corpus, &["holds no rollouts"]), "{m:?}");
    assert_eq!(corpus.diagnostics.len(), 4, "{m:?}");
    assert_eq!(corpus.checks.len(), 1, "{:?}", corpus.checks);
    assert!(corpus.files.iter().all(|f| f.errors == 0));

    // The rollout viewer re-reads each scenario from its trajectory file.
    let s = steps_of(&corpus, &summary, &files, "timestamp_scrambled");
    assert_eq!(s[0].tool.as_deref(), Some("get_current_timestamp"));
    assert_eq!(s[0].agent_tool.as_deref(), Some("utilities_2"));
    let s = steps_of(&corpus, &summary, &files, "wifi_on_parallel");
    assert_eq!(s.len(), 4);
    assert!(s[0].first_error && !s[1].first_error && s[1].executable);
    assert_eq!(s[0].args.as_deref(), Some(r#"{"on":true}"#));
    assert_eq!(
        s[0].error.as_deref(),
        Some("PermissionError: Wifi cannot be turned on in low battery mode")
    );
    let s = steps_of(&corpus, &summary, &files, "unknown_tool_crash");
    assert!(s[1]
        .error
        .as_deref()
        .unwrap()
        .starts_with("KeyError: \"Agent tool call"));
    let s = steps_of(&corpus, &summary, &files, "max_turns_cut");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].args.as_deref(), Some(r#"{"name":"O'Hara"}"#));
}

#[test]
fn threshold_and_provider_option() {
    let files = fixture_run();
    let (corpus, _) = ingest_with(&files, &with_tau(0.9, false), usize::MAX);
    let ok: Vec<String> = views(&corpus)
        .into_iter()
        .filter(|v| v.success)
        .map(|v| v.task)
        .collect();
    assert!(ok.contains(&"timestamp_scrambled".to_string()), "{ok:?}");
    assert_eq!(ok.len(), 3);
    let (corpus, summary) = ingest_with(&files, &with_tau(1.0, true), usize::MAX);
    let v = views(&corpus);
    let p = v.iter().find(|v| v.task == "provider_timeout").unwrap();
    assert_eq!(
        (p.horizon, p.fed, p.success),
        (1, 1, false),
        "no call: a failed no-tool action"
    );
    assert!(has_message(&corpus, &["kept as failures"]));
    assert!(summary.files.iter().all(|f| f.excluded.is_empty()));
    // An invalid threshold rejects the run with a message, never a panic.
    let (corpus, _) = ingest_with(&files, &with_tau(2.0, false), usize::MAX);
    assert!(corpus.rollouts.is_empty());
    assert!(has_message(&corpus, &["between 0 and 1"]));
}

#[test]
fn any_chunking_and_file_order_read_the_same() {
    let files = fixture_run();
    let (whole, _) = ingest_with(&files, &ImportOptions::default(), usize::MAX);
    for chunk in [1, 7, 4096] {
        let (c, _) = ingest_with(&files, &ImportOptions::default(), chunk);
        assert_eq!(c.rollouts, whole.rollouts, "chunk {chunk}");
        assert_eq!(c.diagnostics, whole.diagnostics, "chunk {chunk}");
    }
    let mut reversed = files.clone();
    reversed.reverse();
    let (r, _) = ingest_with(&reversed, &ImportOptions::default(), usize::MAX);
    assert_eq!(sorted_shapes(&r), sorted_shapes(&whole));
}

/// Two runs copied out of their `agent_<provider>/` folders (or renamed altogether) never merge
/// into one condition: each model comes from its own folder's name, with a note.
#[test]
fn runs_without_agent_folders_keep_their_own_models() {
    let files = fixture_run();
    // Each copy's bytes differ (a trailing space per copy): identical files are read once.
    let under = |prefix: &str, copy: usize| -> Vec<(String, Vec<u8>)> {
        files
            .iter()
            .map(|(n, b)| {
                let rest = n.split_once("/tiny-1_user_openai/").unwrap().1;
                let mut b = b.clone();
                b.extend(std::iter::repeat_n(b' ', copy));
                (format!("{prefix}/{rest}"), b)
            })
            .collect()
    };
    let mut both = under("o3-high_user_openai", 0);
    both.extend(under("copies/gpt-4.1_user_openai", 1));
    let renamed = under("copies/x", 2).into_iter().map(|(n, b)| {
        let (_, rest) = n.split_once("_03_04_05/").unwrap();
        (format!("copies/renamed-run/{rest}"), b)
    });
    both.extend(renamed);
    let (corpus, _) = ingest_with(&both, &ImportOptions::default(), usize::MAX);
    let mut models: Vec<&str> = (0..corpus.conditions.len() as u32)
        .map(|c| corpus.condition_names(c).1)
        .collect();
    models.sort_unstable();
    assert_eq!(models, ["gpt-4.1", "o3-high", "renamed-run"]);
    assert_eq!(corpus.rollouts.len(), 21);
    assert!(has_message(
        &corpus,
        &[
            "taken from the folder <model>_user_<user>_<timestamp>",
            "\"o3-high\""
        ]
    ));
    assert!(has_message(
        &corpus,
        &["taken from the run folder's own name", "\"renamed-run\""]
    ));
}

#[test]
fn files_without_their_run_say_what_is_missing() {
    let files = fixture_run();
    // Trajectories without the summary.
    let only: Vec<_> = files
        .iter()
        .filter(|(n, _)| n.contains("/trajectories/"))
        .cloned()
        .collect();
    let (corpus, _) = ingest_with(&only, &ImportOptions::default(), usize::MAX);
    assert!(corpus.rollouts.is_empty());
    assert!(has_message(
        &corpus,
        &["needs its run's result_summary.json"]
    ));
    // Bare names (files picked without their folders): the scenario is unknown.
    let bare: Vec<_> = files
        .iter()
        .map(|(n, b)| (n.rsplit('/').next().unwrap().to_string(), b.clone()))
        .collect();
    let (corpus, _) = ingest_with(&bare, &ImportOptions::default(), usize::MAX);
    assert!(corpus.rollouts.is_empty());
    assert!(has_message(&corpus, &["known by its folder"]));
    assert!(has_message(
        &corpus,
        &["the model is taken from the summary file's name"]
    ));
    // Names from trajectories/ down, with the summary at the top: paired by scenario name.
    let cut = format!("{RUN}/");
    let short: Vec<_> = files
        .iter()
        .map(|(n, b)| (n.trim_start_matches(&cut).to_string(), b.clone()))
        .collect();
    let (corpus, _) = ingest_with(
        &short,
        &ImportOptions {
            model: Some("m".into()),
            ..ImportOptions::default()
        },
        usize::MAX,
    );
    assert_eq!(corpus.rollouts.len(), 7);
}

#[test]
fn convert_then_score_equals_score() {
    let files = fixture_run();
    let mut ingest = Ingest::converting();
    for (name, bytes) in &files {
        let f = ingest.begin_file(name);
        ingest.push(f, bytes);
        ingest.end_file(f);
    }
    ingest.end_all();
    let lines = ingest.drain_converted().join("\n");
    let direct = ingest.finish();
    let (back, _) = ingest_with(
        &[("out.jsonl".into(), lines.into_bytes())],
        &ImportOptions::default(),
        usize::MAX,
    );
    assert_eq!(sorted_shapes(&back), sorted_shapes(&direct));
}

// ---- the released runs ------------------------------------------------------------------------

const SHARED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/data/released-runs/toolsandbox"
);

fn shared(test: &str) -> Option<PathBuf> {
    let p = Path::new(SHARED);
    if p.is_dir() {
        Some(p.to_path_buf())
    } else {
        println!("{test}: skipped: shared data not found at {SHARED}");
        None
    }
}

/// (run folder relative to the toolsandbox folder, scenarios with trajectories, of them without
/// traceback and similarity ≥ 1, flagged).
const RUNS: [(&str, usize, usize, bool); 3] = [
    ("agent_anthropic/claude-4-sonnet-thinking-off_user_openai/gpt-4o-20240806_08_15_2025_03_02_49", 55, 16, false),
    ("agent_togetherai/moonshotai/Kimi-K2-Instruct_user_openai/gpt-4o-20240806_08_15_2025_02_22_48", 102, 15, false),
    ("agent_deepseek-ai/DeepSeek-V3-0324_user_openai/gpt-4o-20240806_08_15_2025_23_27_18", 3, 0, true),
];

/// The summary's own count: rows with a trajectory folder, no traceback and similarity ≥ τ.
fn summary_successes(dir: &Path, tau: f64) -> usize {
    let s: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("result_summary.json")).unwrap()).unwrap();
    s["per_scenario_results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            dir.join("trajectories")
                .join(r["name"].as_str().unwrap())
                .is_dir()
        })
        .filter(|r| r["traceback"].is_null() && r["similarity"].as_f64().unwrap() >= tau)
        .count()
}

#[test]
fn released_runs() {
    let Some(root) = shared("released_runs") else {
        return;
    };
    for (run, scenarios, successes, flagged) in RUNS {
        let dir = root.join(run);
        let files = walk(&root, &dir);
        let (corpus, summary) = ingest_with(&files, &ImportOptions::default(), 1 << 16);
        // Every scenario with trajectory files is imported (no provider errors in these runs).
        assert_eq!(corpus.rollouts.len(), scenarios, "{run}");
        assert_eq!(
            corpus.files.iter().map(|f| f.errors).sum::<u64>(),
            0,
            "{run}: {:?}",
            messages(&corpus)
        );
        let ok = corpus.rollouts.iter().filter(|r| r.success).count();
        assert_eq!(ok, successes, "{run}");
        assert_eq!(ok, summary_successes(&dir, 1.0), "{run}");
        for tau in [0.9, 0.5] {
            let (c, _) = ingest_with(&files, &with_tau(tau, false), 1 << 16);
            let ok = c.rollouts.iter().filter(|r| r.success).count();
            assert_eq!(ok, summary_successes(&dir, tau), "{run} at τ = {tau}");
        }
        assert_eq!(
            has_message(&corpus, &["SyntaxError", "harness bug"]),
            flagged,
            "{run}"
        );
        assert!(
            has_passed_check(&corpus, &["self-check", "matches"]),
            "{run}"
        );
        assert!(!has_message(&corpus, &["self-check"]), "{run}");
        assert!(has_message(&corpus, &["have no trajectory files"]), "{run}");
        // Every rollout reads back in the viewer.
        for i in 0..corpus.rollouts.len() {
            let src = corpus.rollouts[i].source;
            let bytes = &files[src.file as usize].1[src.offset as usize..][..src.len as usize];
            let line = summary.rollout_line(&corpus, i, bytes).unwrap();
            let steps = parse_steps(&line).unwrap();
            let r = &corpus.rollouts[i];
            assert_eq!(steps.len().max(1), r.horizon as usize);
        }
        let model = corpus.condition_names(0).1.to_string();
        assert!(run.starts_with(&format!("agent_{model}_user_")), "{model}");
    }
}

/// The fallback rule agrees with the execution context: each scenario's conversation.json alone
/// gives the same calls, the same verdicts and so the same FED.
#[test]
fn released_conversations_agree_with_their_contexts() {
    let Some(root) = shared("released_conversations_agree_with_their_contexts") else {
        return;
    };
    for (run, ..) in RUNS {
        let dir = root.join(run);
        let files = walk(&root, &dir);
        let without = |kind: &str| -> Vec<(String, Vec<u8>)> {
            files
                .iter()
                .filter(|(n, _)| !n.ends_with(kind))
                .cloned()
                .collect()
        };
        let (full, _) = ingest_with(
            &without("conversation.json"),
            &ImportOptions::default(),
            1 << 16,
        );
        let (fallback, _) = ingest_with(
            &without("execution_context.json"),
            &ImportOptions::default(),
            1 << 16,
        );
        // conversation.json exists only for scenarios that did not raise.
        let crashed: Vec<String> = views(&full)
            .into_iter()
            .filter(|v| {
                !fallback
                    .rollouts
                    .iter()
                    .any(|r| fallback.task_name(r.task) == v.task)
            })
            .map(|v| v.task)
            .collect();
        let keep = |s: Vec<(String, u32, u32, bool)>| -> Vec<_> {
            s.into_iter().filter(|t| !crashed.contains(&t.0)).collect()
        };
        assert_eq!(
            keep(sorted_shapes(&full)),
            sorted_shapes(&fallback),
            "{run}"
        );
    }
}
