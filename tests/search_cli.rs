//! `prefix-exec search` on real released runs (`../shared/data/released-runs`, never committed;
//! skipped when absent): its hits equal a plain reading of the files — the canonical lines
//! `convert` writes, read here with serde_json alone, and for messages the tau-bench file
//! itself —, the released files and their conversion give the same step hits, the hits do
//! not depend on the thread count, and a bad pattern fails with a message.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

const FILES: &[&str] = &[
    "tau-bench/gpt-4o-airline.json",
    "bfcl/gpt-oss-20b-vllm/result/BFCL_v4_multi_turn_base_result.json",
    "bfcl/gpt-oss-20b-vllm/score/BFCL_v4_multi_turn_base_score.json",
    "toolsandbox/agent_anthropic",
];

fn run(dir: &Path, args: &[&str]) -> Output {
    cli_bin::command()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// (dataset, model, method, task, trial, step, field) of each hit, in order.
type Key = (String, String, String, String, u64, Option<u64>, String);

fn hits(dir: &Path, files: &[&str], extra: &[&str]) -> Vec<Key> {
    let out = run(
        dir,
        &[&["search"], files, &["--json", "-q"], extra].concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let s = |k: &str| h[k].as_str().unwrap().to_string();
            (
                s("dataset"),
                s("model"),
                s("method"),
                s("task_id"),
                h["trial"].as_u64().unwrap(),
                h["step"].as_u64(),
                s("field"),
            )
        })
        .collect()
}

/// The steps' hits read plainly from canonical lines: tool (with the agent's name), compact
/// args, and the error of a step that did not execute (`ok: false`, or a rejecting `error`).
fn plain_hits(lines: &str, re: &regex::Regex, field: &str) -> BTreeSet<Key> {
    let mut trials = std::collections::HashMap::new();
    let mut out = BTreeSet::new();
    for line in lines.lines() {
        let l: Value = serde_json::from_str(line).unwrap();
        if l.get("tools").is_some() && l.get("steps").is_none() {
            continue;
        }
        let s = |k: &str| {
            l[k].as_str()
                .map_or_else(|| l[k].to_string(), str::to_string)
        };
        let key = (s("dataset"), s("model"), s("method"), s("task_id"));
        let trial = trials.entry(key.clone()).or_insert(0u64);
        *trial += 1;
        for (i, step) in l["steps"].as_array().unwrap().iter().enumerate() {
            let error = &step["error"];
            let rejecting = match error {
                Value::Null | Value::Bool(false) => false,
                Value::String(s) => !s.is_empty(),
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                _ => true,
            };
            let executable = step["ok"].as_bool().unwrap_or(!rejecting);
            let tool = match (step["tool"].as_str(), step["agent_tool"].as_str()) {
                (Some(t), Some(a)) if t != a => Some(format!("{t} ({a})")),
                (Some(t), _) => Some(t.to_string()),
                (None, a) => a.map(str::to_string),
            };
            let args = step
                .get("args")
                .filter(|a| !a.is_null())
                .map(|a| a.to_string());
            let error_text = match error {
                Value::String(s) if !s.is_empty() => Some(s.clone()),
                Value::Bool(true) | Value::Null | Value::Bool(false) => None,
                v if rejecting => Some(v.to_string()),
                _ => None,
            };
            let texts = [
                ("tool", tool),
                ("args", args),
                ("error", error_text.filter(|_| !executable)),
            ];
            for (name, text) in texts {
                if (field == "all" || field == name) && text.is_some_and(|t| re.is_match(&t)) {
                    out.insert((
                        key.0.clone(),
                        key.1.clone(),
                        key.2.clone(),
                        key.3.clone(),
                        *trial,
                        Some(i as u64 + 1),
                        name.to_string(),
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn hits_equal_a_plain_reading_of_the_files() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let out = run(shared, &[&["convert"], FILES, &["-o", "-", "-q"]].concat());
    assert!(out.status.success());
    let lines = String::from_utf8(out.stdout).unwrap();
    let dir = std::env::temp_dir().join(format!("prefix-exec-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("all.jsonl"), &lines).unwrap();
    for (pattern, field) in [
        ("flight|seat", "all"),
        ("^(cd|ls|mv)$", "tool"),
        ("\"[a-z_]*id\":", "args"),
        ("not (found|enough)|no such", "error"),
        ("(?-i)Error", "error"),
    ] {
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .unwrap();
        let expected = plain_hits(&lines, &re, field);
        let fields = if field == "all" { "all" } else { field };
        // On the canonical file: exactly the plain reading (no messages in canonical lines).
        let canonical = hits(
            &dir,
            &["all.jsonl"],
            &["--query", pattern, "--field", fields],
        );
        let canonical_set: BTreeSet<Key> = canonical.iter().cloned().collect();
        assert_eq!(
            canonical.len(),
            canonical_set.len(),
            "one hit per step and field"
        );
        assert_eq!(canonical_set, expected, "{pattern} in {field}");
        assert!(!expected.is_empty(), "{pattern} finds something");
        // On the released files themselves: the same step hits (re-read from each source).
        let released: BTreeSet<Key> = hits(shared, FILES, &["--query", pattern, "--field", fields])
            .into_iter()
            .filter(|k| k.5.is_some())
            .collect();
        assert_eq!(released, expected, "{pattern} in {field}, released files");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn messages_equal_a_plain_reading_of_the_tau_bench_file() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let file = "tau-bench/gpt-4o-airline.json";
    let raw: Value = serde_json::from_slice(&std::fs::read(shared.join(file)).unwrap()).unwrap();
    let re = regex::RegexBuilder::new("cancel")
        .case_insensitive(true)
        .build()
        .unwrap();
    // Per task: the messages (role + string content) of its trajectory that match.
    let mut expected: Vec<(String, usize)> = Vec::new();
    for r in raw.as_array().unwrap() {
        let n = r["traj"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m.get("role").is_some_and(|r| !r.is_null()))
            .filter_map(|m| m["content"].as_str())
            .filter(|c| re.is_match(c))
            .count();
        if n > 0 {
            expected.push((r["task_id"].to_string(), n));
        }
    }
    let mut found: std::collections::BTreeMap<String, usize> = Default::default();
    for k in hits(
        shared,
        &[file],
        &["--query", "cancel", "--field", "message"],
    ) {
        assert_eq!(k.5, None);
        *found.entry(k.3).or_default() += 1;
    }
    let mut expected_map: std::collections::BTreeMap<String, usize> = Default::default();
    for (t, n) in expected {
        *expected_map.entry(t).or_default() += n;
    }
    assert!(!expected_map.is_empty());
    assert_eq!(found, expected_map);
}

#[test]
fn hits_do_not_depend_on_threads_and_bad_patterns_fail() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    let args = |t: &'static str| -> Vec<&'static str> {
        [
            &["search"],
            FILES,
            &["--json", "-q", "--query", "e", "--threads", t],
        ]
        .concat()
    };
    let one = run(shared, &args("1"));
    let three = run(shared, &args("3"));
    assert!(one.status.success());
    assert_eq!(one.stdout, three.stdout);
    let out = run(
        shared,
        &[&["search"], FILES, &["--query", "(flight"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the search pattern is not a valid regular expression"),
        "{stderr}"
    );
    let out = run(
        shared,
        &[&["search"], FILES, &["--query", "x", "--field", "colour"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_index_gives_the_hits_a_reading_gives_on_every_released_run() {
    let shared = Path::new(SHARED);
    if !shared.is_dir() {
        println!("skipped: shared data not found at {SHARED}");
        return;
    }
    for (pattern, field) in [
        ("e", "all"),
        ("error|not found|invalid", "error"),
        ("^(get|send)_", "tool"),
        ("\"[a-z_]+\":\\s*\\d", "args"),
        ("please|sorry", "message"),
    ] {
        let args = |indexed: bool| -> Vec<&str> {
            let mut a = vec!["search", ".", "--json", "-q", "--query", pattern];
            a.extend(["--field", field, "--limit", "5000"]);
            if indexed {
                a.push("--indexed");
            }
            a
        };
        let read = run(shared, &args(false));
        let indexed = run(shared, &args(true));
        assert!(
            read.status.success(),
            "{}",
            String::from_utf8_lossy(&read.stderr)
        );
        assert!(read.stdout.len() > 1000, "{pattern}: few hits");
        assert!(
            read.stdout == indexed.stdout,
            "{pattern} in {field}: the index's hits differ from a reading's"
        );
        assert_eq!(read.stderr, indexed.stderr, "{pattern} in {field}");
    }
}
