//! Filters that re-score, through the CLI: `--common-tasks` on real released runs
//! (`../shared/data/released-runs`, never committed; skipped when absent) gives the report of
//! the common tasks' rollouts scored alone, number for number; a filter's report states it;
//! an empty filter changes no byte; a filter keeping nothing fails with a message.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

/// Two BFCL models, tau-bench and tau2 (every task common), and two ToolSandbox runs whose
/// scenarios differ (55 and 3).
const FILES: &[&str] = &[
    "toolsandbox/agent_anthropic",
    "toolsandbox/agent_deepseek-ai",
    "tau-bench/gpt-4o-airline.json",
    "tau2-bench/claude-sonnet-4-5_aide-platform_2025-10-31/trajectories/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json",
    "bfcl/gpt-oss-20b-vllm/result/BFCL_v4_multi_turn_base_result.json",
    "bfcl/gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json",
    "bfcl/gorilla-pr1308-glyphh-ada-1.1/result/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_result.json",
    "bfcl/gorilla-pr1308-glyphh-ada-1.1/score/glyphh-ada-1.1/multi_turn/BFCL_v4_multi_turn_base_score.json",
];

fn run(dir: &Path, args: &[&str]) -> Output {
    cli_bin::command()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// What the two reports must agree on: every number (conditions, pairs, ranks), not the
/// inputs (other files) nor the notes and settings that state the filter.
fn numbers(r: &Value) -> Value {
    serde_json::json!({
        "conditions": r["conditions"],
        "paired": r["paired"],
        "ranks": r["ranks"],
        "rank_divergence": r["rank_divergence"],
        "k_max": r["settings"]["k_max"],
        "identity_violations": r["identity_violations"],
    })
}

#[test]
fn common_tasks_equal_scoring_the_common_tasks_alone() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let flags = ["--bootstrap", "300", "--seed", "5", "--json", "-", "-q"];
    let filtered = json(&run(
        shared,
        &[&["score"], FILES, &flags, &["--common-tasks"]].concat(),
    ));
    assert_eq!(filtered["settings"]["filter"], "common");

    // The plain reading: the canonical lines of the same input, the common tasks' kept.
    let out = run(shared, &[&["convert"], FILES, &["-o", "-", "-q"]].concat());
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut conditions: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    let mut ran: BTreeMap<(String, String), BTreeSet<(String, String)>> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.get("tools").is_none()) {
        let d = l["dataset"].as_str().unwrap().to_string();
        let c = (l["model"].to_string(), l["method"].to_string());
        conditions.entry(d.clone()).or_default().insert(c.clone());
        ran.entry((d, l["task_id"].to_string()))
            .or_default()
            .insert(c);
    }
    let common = |l: &Value| {
        let d = l["dataset"].as_str().unwrap().to_string();
        ran[&(d.clone(), l["task_id"].to_string())].len() == conditions[&d].len()
    };
    let kept: Vec<&str> = text
        .lines()
        .zip(&lines)
        .filter(|(_, l)| l.get("tools").is_some() || common(l))
        .map(|(t, _)| t)
        .collect();
    // The ToolSandbox runs ran different scenarios: the filter has something to do.
    assert!(kept.len() < lines.len());
    let dir = std::env::temp_dir().join(format!("prefix-exec-filter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("common.jsonl"), kept.join("\n") + "\n").unwrap();
    let alone = json(&run(
        &dir,
        &[&["score", "common.jsonl"][..], &flags].concat(),
    ));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(alone["settings"].get("filter").is_none());
    assert_eq!(numbers(&filtered), numbers(&alone));
    let note = filtered["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n.as_str().unwrap().starts_with("filter common: "))
        .expect("a note says what the filter kept");
    let kept_rollouts = kept
        .iter()
        .filter(|l| !l.starts_with(r#"{"tools""#))
        .count();
    assert!(
        note.as_str()
            .unwrap()
            .contains(&format!("{kept_rollouts} of {} rollouts kept", lines.len())),
        "{note}"
    );
}

#[test]
fn meta_clauses_equal_scoring_those_rollouts_alone() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let out = run(shared, &[&["convert"], FILES, &["-o", "-", "-q"]].concat());
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let flags = ["--bootstrap", "200", "--seed", "3", "--json", "-", "-q"];
    let dir = std::env::temp_dir().join(format!("prefix-exec-filter-meta-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // (filter, which lines a plain reading of `meta` keeps)
    type Keep = fn(&Value) -> bool;
    let cases: [(&str, Keep); 2] = [
        ("meta.format=bfcl,tau2", |m| {
            m["format"] == "bfcl" || m["format"] == "tau2"
        }),
        ("meta.format!~^bfcl$; outcome!=executable", |m| {
            m["format"] != "bfcl"
        }),
    ];
    for (expr, keep) in cases {
        let filtered = json(&run(
            shared,
            &[&["score"], FILES, &flags, &["--filter", expr]].concat(),
        ));
        assert_eq!(filtered["settings"]["filter"], expr);
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                if v.get("steps").is_none() {
                    return true; // a tools line
                }
                let outcome_ok = !expr.contains("outcome!=executable") || {
                    // Not fully executable: some step rejected, or a disallowed no-tool rollout.
                    let steps = v["steps"].as_array().unwrap();
                    let rejected = steps.iter().any(|s| {
                        s["ok"] == false
                            || (s["ok"].is_null()
                                && !matches!(&s["error"], Value::Null | Value::Bool(false))
                                && s["error"] != ""
                                && s["error"] != serde_json::json!([])
                                && s["error"] != serde_json::json!({}))
                    });
                    rejected
                        || (steps.is_empty() && (v["no_tool_ok"] != true || !v["crash"].is_null()))
                };
                keep(&v["meta"]) && outcome_ok
            })
            .collect();
        std::fs::write(dir.join("kept.jsonl"), kept.join("\n") + "\n").unwrap();
        let alone = json(&run(&dir, &[&["score", "kept.jsonl"][..], &flags].concat()));
        assert!(!alone["conditions"].as_array().unwrap().is_empty());
        assert_eq!(numbers(&filtered), numbers(&alone), "{expr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_empty_filter_changes_no_byte() {
    let dir = golden();
    let args = ["score", "small.jsonl", "--bootstrap", "200", "--seed", "1"];
    let plain = run(&dir, &[&args[..], &["--json", "-"]].concat());
    let empty = run(
        &dir,
        &[&args[..], &["--json", "-", "--filter", " ; "]].concat(),
    );
    assert!(plain.status.success() && empty.status.success());
    assert_eq!(plain.stdout, empty.stdout);
    assert_eq!(plain.stderr, empty.stderr);
}

#[test]
fn a_filter_is_stated_and_rescoring() {
    let dir = golden();
    let all = json(&run(
        &dir,
        &["score", "small.jsonl", "--bootstrap", "0", "--json", "-"],
    ));
    let model = all["conditions"][0]["model"].as_str().unwrap().to_string();
    let expr = format!("model={model}; outcome!=crashed");
    let out = run(
        &dir,
        &[
            "score",
            "small.jsonl",
            "--bootstrap",
            "0",
            "--json",
            "-",
            "--filter",
            &expr,
        ],
    );
    let r = json(&out);
    assert_eq!(r["settings"]["filter"], expr);
    assert!(r["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["model"] == model.as_str()));
    // The table (on stderr with --json -) says it.
    let table = String::from_utf8_lossy(&out.stderr);
    assert!(
        table.contains(&format!("Restricted to the rollouts of filter {expr}")),
        "{table}"
    );
}

#[test]
fn filter_errors_and_empty_results_fail_with_a_message() {
    let dir = golden();
    let out = run(&dir, &["score", "small.jsonl", "--filter", "colour=red"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown field \"colour\""));
    let out = run(
        &dir,
        &[
            "score",
            "small.jsonl",
            "--bootstrap",
            "0",
            "--filter",
            "model=nobody",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("keeps no rollout"));
}

#[test]
fn exports_state_the_filter_and_unfiltered_exports_are_unchanged() {
    use prefix_exec::filter::Filter;
    use prefix_exec::report::{build_report, table, Settings};
    let input = std::fs::read(golden().join("small.jsonl")).unwrap();
    let corpus = prefix_exec::ingest::read_files([("small.jsonl", &input[..])]);
    let plain = Settings {
        bootstrap: 0,
        ..Settings::default()
    };
    let unfiltered = build_report(&corpus, &plain);
    let empty = build_report(
        &corpus,
        &Settings {
            filter: Some(Filter::parse("").unwrap()),
            ..plain.clone()
        },
    );
    assert_eq!(unfiltered.to_json(), empty.to_json());
    let csv = table::render_csv(&unfiltered);
    assert!(!csv.contains("filter"));
    let filtered = build_report(
        &corpus,
        &Settings {
            filter: Some(Filter::parse("trial=1; common").unwrap()),
            ..plain
        },
    );
    let csv = table::render_csv(&filtered);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",filter"));
    assert!(lines.all(|l| l.ends_with(",trial=1; common")), "{csv}");
    let latex = table::render_latex(&filtered, 2, true);
    assert!(latex.contains("% Restricted to the rollouts of filter trial=1; common.\n"));
    assert!(table::footnote(&filtered).contains("filter trial=1; common"));
}

/// The app's filter pickers list the metadata fields real runs carry: BFCL's category, tau2's
/// termination reason, ToolSandbox's categories — read from the canonical lines `convert`
/// writes, as the app's worker reads them.
#[test]
fn released_runs_list_their_meta_fields() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let out = run(shared, &[&["convert"], FILES, &["-o", "-", "-q"]].concat());
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let corpus = prefix_exec::ingest::read_files([("all.jsonl", text.as_bytes())]);
    let meta: Vec<_> = text
        .lines()
        .filter(|l| !l.starts_with(r#"{"tools""#))
        .map(prefix_exec::filter::all_meta_values)
        .collect();
    assert_eq!(meta.len(), corpus.rollouts.len());
    let choices = prefix_exec::filter::choices::FilterChoices::of(&corpus, &meta);
    let keys: BTreeSet<&str> = choices.meta.iter().map(|f| f.key.as_str()).collect();
    for key in ["format", "termination_reason"] {
        assert!(keys.contains(key), "{key} missing from {keys:?}");
    }
    assert!(
        keys.iter().any(|k| k.contains("categor")),
        "no category field in {keys:?}"
    );
    // Each listed value, as a filter, keeps the rollouts it counts.
    for field in &choices.meta {
        let (value, n) = &field.values[0];
        let clause = prefix_exec::filter::equals_clause(&format!("meta.{}", field.key), &[value]);
        let f = prefix_exec::filter::Filter::parse(&clause)
            .unwrap()
            .with_meta(meta.clone());
        assert_eq!(
            f.keeps(&corpus).iter().filter(|k| **k).count(),
            *n,
            "{clause}"
        );
    }
}

/// `site --filter … --common-tasks` publishes the filtered report: its manifest's report is
/// number for number `score` with the same filter (the meta values read from the site's own
/// data), states the filter, and the data keeps every rollout; a filter keeping nothing writes
/// no site.
#[test]
fn site_publishes_the_filtered_report() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("prefix-exec-filter-site-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let app = dir.join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(
        app.join("index.html"),
        "<html><head></head><body></body></html>",
    )
    .unwrap();
    std::fs::write(app.join("worker-loader.js"), "").unwrap();
    let filter = "meta.termination_reason!=max_turns; model!~^glyphh";
    let flags = ["--bootstrap", "300", "--seed", "5", "-q"];
    let site = dir.join("site");
    let out = run(
        shared,
        &[
            &["site"],
            FILES,
            &flags,
            &[
                "--filter",
                filter,
                "--common-tasks",
                "--app",
                app.to_str().unwrap(),
            ],
            &["-o", site.to_str().unwrap()],
        ]
        .concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(site.join("report.json")).unwrap()).unwrap();
    let published = &manifest["precomputed"];
    let canonical = "meta.termination_reason!=max_turns; model!~^glyphh; common";
    assert_eq!(published["settings"]["filter"], canonical);
    let scored = json(&run(
        shared,
        &[
            &["score"],
            FILES,
            &flags,
            &["--filter", filter, "--common-tasks", "--json", "-"],
        ]
        .concat(),
    ));
    assert_eq!(numbers(published), numbers(&scored));
    assert_eq!(published["settings"], scored["settings"]);
    // The data holds every rollout; the filter kept fewer.
    let data = std::fs::read_to_string(site.join("data/rollouts.jsonl")).unwrap();
    let all = data
        .lines()
        .filter(|l| !l.starts_with(r#"{"tools""#))
        .count() as u64;
    assert_eq!(manifest["data"][0]["rollouts"], all);
    let kept: u64 = published["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["n"].as_u64().or(c["rollouts"].as_u64()).unwrap_or(0))
        .sum();
    assert!(kept > 0 && kept < all, "kept {kept} of {all}");

    let out = run(
        shared,
        &[
            &["site"],
            FILES,
            &flags,
            &[
                "--filter",
                "task=no-such-task",
                "--app",
                app.to_str().unwrap(),
            ],
            &["-o", dir.join("empty").to_str().unwrap()],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("keeps no rollout"));
    assert!(!dir.join("empty/report.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
