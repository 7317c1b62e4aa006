//! Leaderboard review on real released runs (`../shared/data/released-runs`, never committed):
//! tau-bench and tau2-bench airline runs of two agents, and the BFCL multi-turn base runs of two
//! models whose result and score files have identical names, scored together by the CLI: every
//! condition with its N, the cross-condition pair of the two BFCL models on their shared tasks,
//! `--compare` on names with `/`, and the leaderboard table. Skipped when the folder is absent.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::path::Path;

use serde_json::Value;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

const FILES: &[&str] = &[
    "tau-bench/gpt-4o-airline.json",
    "tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json",
    "bfcl/gpt-oss-20b-vllm/result/BFCL_v4_multi_turn_base_result.json",
    "bfcl/gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json",
    "bfcl/gorilla-pr1308-glyphh-ada-1.1/result/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_result.json",
    "bfcl/gorilla-pr1308-glyphh-ada-1.1/score/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_score.json",
];

/// gpt-oss-20b base: the official cohort counts its 4 inference errors as failed rollouts.
const GPT_OSS_N: u64 = 200;

fn score(extra: &[&str]) -> Option<(Value, String)> {
    if !Path::new(SHARED).is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return None;
    }
    let out = cli_bin::command()
        .current_dir(SHARED)
        .arg("score")
        .args(FILES)
        .args(["--bootstrap", "300", "--json", "-", "-q"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    Some((serde_json::from_slice(&out.stdout).unwrap(), stderr))
}

fn condition<'a>(r: &'a Value, model: &str) -> &'a Value {
    r["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["model"] == model)
        .unwrap_or_else(|| panic!("no condition of {model}"))
}

#[test]
fn every_condition_pairs_and_leaderboard_table() {
    let Some((r, stderr)) = score(&[]) else {
        return;
    };
    let n = |m: &str| condition(&r, m)["n"].as_u64().unwrap();
    assert_eq!(r["conditions"].as_array().unwrap().len(), 4);
    assert_eq!(n("gpt-4o"), 200);
    assert_eq!(n("claude-sonnet-4-5"), 50);
    assert_eq!(n("glyphh-ada-1.1"), 200);
    assert_eq!(n("openai_gpt-oss-20b"), GPT_OSS_N);
    assert_eq!(condition(&r, "glyphh-ada-1.1")["successes"], 121);
    assert_eq!(condition(&r, "openai_gpt-oss-20b")["successes"], 103);
    // The two BFCL models: compared as models under method fc and as conditions; every BFCL
    // task is shared when inference errors count, else gpt-oss lacks 4.
    let cross: Vec<&Value> = r["paired"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["compare"] == "conditions")
        .collect();
    assert_eq!(cross.len(), 1, "{cross:?}");
    let p = cross[0];
    assert_eq!(p["dataset"], "bfcl/multi_turn_base");
    assert_eq!(p["a"]["model"], "glyphh-ada-1.1");
    assert_eq!(p["b"]["model"], "openai_gpt-oss-20b");
    assert_eq!(p["n_shared"], GPT_OSS_N);
    assert_eq!(p["only_a"], 200 - GPT_OSS_N);
    assert_eq!(p["only_b"], 0);
    assert!(p["final_success"]["ci"].is_array());
    // Leaderboard table: one block per dataset (every model has a single method).
    let text = stderr;
    for block in [
        "bfcl/multi_turn_base  (N ",
        "tau-bench/airline  (N = 200",
        "tau2/airline  (N = 50",
    ] {
        assert!(text.contains(block), "{block}: {text}");
    }
    assert!(text.contains("glyphh-ada-1.1 / fc"), "{text}");
}

#[test]
fn compare_any_two_named_conditions() {
    // tau2 and tau-bench are different datasets: named alike, they would pair; here the pair is
    // asked across the two BFCL conditions in the other order.
    let Some((r, _)) = score(&[
        "--compare",
        "openai_gpt-oss-20b",
        "fc",
        "glyphh-ada-1.1",
        "fc",
    ]) else {
        return;
    };
    let cross: Vec<&Value> = r["paired"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["compare"] == "conditions")
        .collect();
    assert_eq!(cross.len(), 1, "the asked pair replaces the automatic one");
    assert_eq!(cross[0]["a"]["model"], "openai_gpt-oss-20b");
    assert_eq!(cross[0]["only_b"], 200 - GPT_OSS_N);
    assert_eq!(
        r["settings"]["compare"][0][0],
        serde_json::json!({"model": "openai_gpt-oss-20b", "method": "fc"})
    );
}

mod import_support;

/// Two BFCL runs picked as plain files whose names collide (no folders): each score file pairs
/// with the result file whose results its failures repeat.
#[test]
fn bfcl_runs_with_the_same_names_pair_by_content() {
    use prefix_exec::formats::ImportOptions;
    let result = |calls: [&str; 3]| -> Vec<u8> {
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                format!(r#"{{"id": "multi_turn_base_{i}", "result": [[[{{"{c}": "{{}}"}}]]]}}"#)
                    + "\n"
            })
            .collect::<String>()
            .into_bytes()
    };
    let score = |model: &str, failed: &[(usize, &str)]| -> Vec<u8> {
        let mut s = format!(
            r#"{{"accuracy": 0.5, "correct_count": {}, "total_count": 3}}"#,
            3 - failed.len()
        ) + "\n";
        for (i, c) in failed {
            s += &format!(
                r#"{{"id": "multi_turn_base_{i}", "model_name": "{model}", "test_category": "multi_turn_base", "model_result_raw": [[[{{"{c}": "{{}}"}}]]]}}"#
            );
            s.push('\n');
        }
        s.into_bytes()
    };
    const R: &str = "BFCL_v4_multi_turn_base_result.json";
    const S: &str = "BFCL_v4_multi_turn_base_score.json";
    // Run x fails test 1, run y fails tests 0 and 2; score files come first, in the other order.
    let files = vec![
        (S.to_string(), score("y-model", &[(0, "cd"), (2, "rm")])),
        (S.to_string(), score("x-model", &[(1, "mv")])),
        (R.to_string(), result(["ls", "mv", "pwd"])),
        (R.to_string(), result(["cd", "ls", "rm"])),
    ];
    let (corpus, summary) = import_support::ingest_with(&files, &ImportOptions::default(), 64);
    assert_eq!(corpus.rollouts.len(), 6, "{:?}", corpus.diagnostics);
    // Only the note that these lines carry no tool outputs; nothing about pairing.
    assert!(
        corpus
            .diagnostics
            .iter()
            .all(|d| d.message.contains("no inference_log")),
        "{:?}",
        corpus.diagnostics
    );
    let mut got: Vec<(String, String, bool)> = corpus
        .rollouts
        .iter()
        .map(|r| {
            let (_, model, _) = corpus.condition_names(r.condition);
            (
                model.to_string(),
                corpus.task_name(r.task).to_string(),
                r.success,
            )
        })
        .collect();
    got.sort();
    let want: Vec<(String, String, bool)> = [
        ("x-model", 0, true),
        ("x-model", 1, false),
        ("x-model", 2, true),
        ("y-model", 0, false),
        ("y-model", 1, true),
        ("y-model", 2, false),
    ]
    .iter()
    .map(|(m, i, ok)| (m.to_string(), format!("multi_turn_base_{i}"), *ok))
    .collect();
    assert_eq!(got, want);
    assert!(summary.files.iter().all(|f| f.paired_with.is_some()));

    // A result whose failures no score file repeats, and a score file repeating no result: both
    // are errors on the file they concern.
    let files = vec![
        (S.to_string(), score("x-model", &[(1, "mv")])),
        (S.to_string(), score("w-model", &[(1, "zz")])),
        (R.to_string(), result(["ls", "mv", "pwd"])),
        (R.to_string(), result(["cd", "ls", "rm"])),
    ];
    let (corpus, summary) = import_support::ingest_with(&files, &ImportOptions::default(), 64);
    assert_eq!(corpus.rollouts.len(), 3);
    assert_eq!(summary.files[0].paired_with.as_deref(), Some(R));
    let problems: Vec<&str> = corpus
        .diagnostics
        .iter()
        .filter(|d| !d.message.contains("no inference_log"))
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(problems.len(), 2, "{:?}", corpus.diagnostics);
    assert!(problems.iter().any(|m| m.contains("needs its score file")));
    assert!(problems
        .iter()
        .any(|m| m.contains("cannot be scored alone")));
}

/// The real runs under their bare file names (a plain multi-file pick): paired by content,
/// every condition with its N.
#[test]
fn real_bfcl_runs_picked_without_folders() {
    use prefix_exec::formats::ImportOptions;
    if !Path::new(SHARED).is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let files: Vec<(String, Vec<u8>)> = FILES[2..]
        .iter()
        .map(|rel| {
            let p = Path::new(SHARED).join(rel);
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    assert_eq!(files[0].0, files[2].0, "the names collide");
    let (corpus, _) = import_support::ingest_with(&files, &ImportOptions::default(), 1 << 16);
    let report = prefix_exec::report::build_report(
        &corpus,
        &prefix_exec::report::Settings {
            bootstrap: 0,
            ..Default::default()
        },
    );
    let rows: Vec<(String, u64, u64)> = report
        .conditions
        .iter()
        .map(|c| (c.model.clone(), c.n, c.successes))
        .collect();
    assert_eq!(
        rows,
        [
            ("glyphh-ada-1.1".to_string(), 200, 121),
            ("openai_gpt-oss-20b".to_string(), 200, 103)
        ]
    );
}

/// The whole shared folder given as one path, as a researcher points the CLI at a leaderboard:
/// every condition has the N its benchmark reports, crashed episodes are counted in their own
/// domain, each ToolSandbox run is a condition of its own, nothing falls to "unknown-model".
#[test]
fn the_whole_folder_as_one_path() {
    if !Path::new(SHARED).is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    // The folder as given, with extra flags: the report JSON.
    let score_folder = |extra: &[&str]| -> Value {
        let out = cli_bin::command()
            .current_dir(Path::new(SHARED).parent().unwrap())
            .args([
                "score",
                "released-runs",
                "--bootstrap",
                "0",
                "--json",
                "-",
                "-q",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let r = score_folder(&[]);
    let conditions = r["conditions"].as_array().unwrap();
    let get = |dataset: &str, model: &str| {
        conditions
            .iter()
            .find(|c| c["dataset"] == dataset && c["model"] == model)
            .map(|c| (c["n"].as_u64().unwrap(), c["crashed"].as_u64().unwrap()))
            .unwrap_or_else(|| panic!("no condition {dataset} / {model}"))
    };
    for (dataset, model, n, crashed) in [
        ("tau-bench/retail", "claude-4-sonnet-thinking-off", 115, 20),
        ("tau-bench/retail", "o4-mini-high", 115, 0),
        ("tau-bench/airline", "Qwen3-8B", 50, 3),
        (
            "tau-bench/airline",
            "Qwen3-235B-A22B-Thinking-2507-FP8",
            50,
            4,
        ),
        ("tau-bench/airline", "gpt-4.1", 50, 0),
        ("toolsandbox", "openai/gpt-4.1", 1032, 0),
        ("bfcl/multi_turn_base", "openai_gpt-oss-20b", 200, 4),
        // Message transcripts (generic/): Toolathlon, the SGLang export of a tau2 run.
        ("transcripts", "claude-4.5-sonnet", 10, 0),
        ("transcripts", "deepseek-v3.2-exp", 10, 0),
        ("tau2-bench", "openai/gpt-4o-20240806", 50, 0),
    ] {
        assert_eq!(get(dataset, model), (n, crashed), "{dataset} / {model}");
    }
    assert!(!conditions.iter().any(|c| c["dataset"] == "tau-bench"));
    assert!(!conditions.iter().any(|c| c["model"] == "unknown-model"));
    let sandbox = conditions
        .iter()
        .filter(|c| c["dataset"] == "toolsandbox")
        .count();
    assert_eq!(sandbox, 4);
    // --crashed exclude leaves the 27 crashed tau-bench episodes, 4 BFCL inference errors and
    // the AgentDojo run that died on the API out.
    let r2 = score_folder(&["--crashed", "exclude"]);
    let total = |r: &Value| -> u64 {
        r["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["n"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(total(&r) - total(&r2), 27 + 4 + 1);
}
