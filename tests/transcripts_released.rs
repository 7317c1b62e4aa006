//! Message transcripts as released (`../shared/data/released-runs/generic`, never committed):
//! Toolathlon trajectories, AgentDojo-style runs and an SGLang export of a tau2 run score as they
//! are, as a folder and file by file. Rollouts, tool calls, rejected calls and successes are
//! compared with counts derived here by a plain reading of the JSON (serde_json values walked by
//! hand, not the reader under test). Skipped (passing) when the shared folder is absent.

mod import_support;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use prefix_exec::cli::{convert_inputs, score_inputs, Input};
use serde_json::Value;

const GENERIC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/data/released-runs/generic"
);

fn generic(test: &str) -> Option<PathBuf> {
    let p = Path::new(GENERIC);
    if p.is_dir() {
        Some(p.to_path_buf())
    } else {
        println!("{test}: skipped: shared data not found at {GENERIC}");
        None
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    import_support::paths_under(dir, &["json", "jsonl"])
}

/// Counts of a set of rollouts.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    rollouts: u64,
    calls: u64,
    rejected: u64,
    successes: u64,
}

/// Whether a reply says its call failed, read plainly: an `error` field holding text; else its
/// content, JSON-decoded where it is a serialised MCP block or list of blocks: a block flagged
/// `"error": true`, or the first text block starting with one of the documented prefixes.
fn reply_failed(m: &Value) -> bool {
    if m.get("error")
        .is_some_and(|e| e.as_str().is_some_and(|s| !s.is_empty()))
    {
        return true;
    }
    let content = m["content"].as_str().unwrap_or("");
    let blocks: Vec<Value> = match serde_json::from_str::<Value>(content) {
        Ok(Value::Array(items)) if items.iter().all(|b| b.get("type").is_some()) => items,
        Ok(v @ Value::Object(_)) if v.get("type").is_some() => vec![v],
        _ => Vec::new(),
    };
    if blocks
        .iter()
        .any(|b| b["error"] == true || b["isError"] == true)
    {
        return true;
    }
    let text = match blocks.iter().find(|b| b["type"] == "text") {
        Some(b) => b["text"].as_str().unwrap_or(""),
        None if blocks.is_empty() => content,
        None => "",
    };
    let text = text.trim_start();
    [
        "Error",
        "error:",
        "Traceback (most recent call last)",
        "Security violation",
        "Unknown tool",
    ]
    .iter()
    .any(|p| text.starts_with(p))
        || (text.starts_with("Tool ") && text.split(' ').nth(2) == Some("not"))
}

/// The plain reading: records of a file, each one's outcome, its agent calls, and the calls
/// that failed: arguments that are not JSON, no reply with the call's id (where replies name
/// ids), or a reply that says so ([`reply_failed`]).
fn plain(path: &Path, outcome: &dyn Fn(&Value) -> bool) -> Counts {
    let text = std::fs::read_to_string(path).unwrap();
    let records: Vec<Value> = if path.extension().is_some_and(|x| x == "jsonl") {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    } else {
        vec![serde_json::from_str(&text).unwrap()]
    };
    let mut c = Counts::default();
    for r in &records {
        c.rollouts += 1;
        c.successes += u64::from(outcome(r));
        let messages = r["messages"].as_array().unwrap();
        let replies: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
        let by_id = replies.iter().any(|m| m.get("tool_call_id").is_some());
        let calls: Vec<&Value> = messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
            .collect();
        c.calls += calls.len() as u64;
        for (i, call) in calls.iter().enumerate() {
            let args = call
                .get("function")
                .and_then(|f| f.get("arguments"))
                .or_else(|| call.get("arguments"))
                .or_else(|| call.get("args"));
            let bad_args = args
                .and_then(Value::as_str)
                .is_some_and(|s| !s.trim().is_empty() && serde_json::from_str::<Value>(s).is_err());
            let reply = if by_id {
                replies
                    .iter()
                    .find(|m| m["tool_call_id"] == call["id"])
                    .copied()
            } else {
                replies.get(i).copied()
            };
            if bad_args || reply.is_none_or(reply_failed) {
                c.rejected += 1;
            }
        }
    }
    c
}

/// Converts with `flags`; counts of the canonical lines.
fn converted(inputs: Vec<Input>, flags: &[&str]) -> (Counts, Vec<Value>) {
    let flags: Vec<OsString> = flags.iter().map(OsString::from).collect();
    let (text, _) = convert_inputs(&flags, inputs).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut c = Counts::default();
    for l in &lines {
        c.rollouts += 1;
        c.successes += u64::from(l["success"] == true);
        let steps = l["steps"].as_array().unwrap();
        c.calls += steps.len() as u64;
        c.rejected += steps.iter().filter(|s| s["ok"] == false).count() as u64;
    }
    (c, lines)
}

fn sum(counts: impl Iterator<Item = Counts>) -> Counts {
    counts.fold(Counts::default(), |a, b| Counts {
        rollouts: a.rollouts + b.rollouts,
        calls: a.calls + b.calls,
        rejected: a.rejected + b.rejected,
        successes: a.successes + b.successes,
    })
}

fn as_folder_and_files(dir: &Path, outcome: &dyn Fn(&Value) -> bool) -> (Counts, Vec<Value>) {
    let files = files_under(dir);
    let want = sum(files.iter().map(|f| plain(f, outcome)));
    let (folder, lines) = converted(vec![Input::Path(dir.to_path_buf())], &[]);
    assert_eq!(folder, want, "{} as a folder", dir.display());
    let one_by_one = sum(files
        .iter()
        .map(|f| converted(vec![Input::Path(f.clone())], &[]).0));
    assert_eq!(one_by_one, want, "{} file by file", dir.display());
    (want, lines)
}

#[test]
fn toolathlon_trajectories() {
    let Some(g) = generic("toolathlon_trajectories") else {
        return;
    };
    let dir = g.join("WaitHZ+toolathlon-traj-website/trajs");
    let (counts, lines) = as_folder_and_files(&dir, &|r| r["pass"] == true);
    // The figures of the shared README.
    assert_eq!(
        (counts.rollouts, counts.calls, counts.successes),
        (20, 654, 10)
    );
    let mut per_model: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for l in &lines {
        let e = per_model
            .entry(l["model"].as_str().unwrap().to_string())
            .or_default();
        e.0 += 1;
        e.1 += u64::from(l["success"] == true);
        assert_eq!(l["dataset"], "transcripts");
    }
    assert_eq!(
        per_model.into_iter().collect::<Vec<_>>(),
        [
            ("claude-4.5-sonnet".to_string(), (10, 5)),
            ("deepseek-v3.2-exp".to_string(), (10, 5))
        ]
    );
    // Two conditions, paired on their ten shared tasks.
    let scored = score_inputs(
        &["--bootstrap".into(), "200".into()],
        vec![Input::Path(dir.clone())],
    )
    .unwrap();
    let r = &scored.report;
    let models: Vec<&str> = r.conditions.iter().map(|c| c.model.as_str()).collect();
    assert_eq!(models, ["claude-4.5-sonnet", "deepseek-v3.2-exp"]);
    assert!(
        r.paired.iter().any(|p| p.n_shared == Some(10)),
        "no paired comparison on the 10 shared tasks: {:?}",
        r.paired.len()
    );
}

#[test]
fn agentdojo_runs() {
    let Some(g) = generic("agentdojo_runs") else {
        return;
    };
    let dir = g.join("Liu-Ruotian+agentdojo-luna-trajectories");
    let (counts, lines) = as_folder_and_files(&dir, &|r| r["evaluation"]["utility"] == true);
    assert_eq!(
        (
            counts.rollouts,
            counts.calls,
            counts.rejected,
            counts.successes
        ),
        (15, 118, 16, 8)
    );
    assert!(lines.iter().all(|l| l["model"] == "gpt-5.6-luna"));
    // The run that died on the API (a top-level `error`, no call) is a counted crash.
    let crashed: Vec<&Value> = lines.iter().filter(|l| l.get("crash").is_some()).collect();
    assert_eq!(crashed.len(), 1);
    assert!(crashed[0]["crash"].as_str().unwrap().contains("503"));
    let (excluded, _) = converted(vec![Input::Path(dir)], &["--crashed", "exclude"]);
    assert_eq!(excluded.rollouts, 14);
}

#[test]
fn sglang_export_of_a_tau2_run() {
    let Some(g) = generic("sglang_export_of_a_tau2_run") else {
        return;
    };
    let file = g.join("jibf+agent_hard_benchmark/tau2-bench/data/simulations/output-rs0.jsonl");
    let (counts, lines) = as_folder_and_files(file.parent().unwrap(), &|r| {
        r["eval_result"]["overall_reward"].as_f64().unwrap() >= 1.0
    });
    assert_eq!(
        (
            counts.rollouts,
            counts.calls,
            counts.rejected,
            counts.successes
        ),
        (50, 327, 8, 16)
    );
    assert!(lines.iter().all(|l| l["model"] == "openai/gpt-4o-20240806"));
    let tasks: std::collections::BTreeSet<&str> = lines
        .iter()
        .map(|l| l["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(tasks.len(), 50, "meta.id names each task");
    // `meta.is_correct` follows db_match: two rollouts differ from the reward.
    let (by_flag, _) = converted(
        vec![Input::Path(file)],
        &["--field", "success=meta.is_correct"],
    );
    assert_eq!(by_flag.successes, 18);
}
