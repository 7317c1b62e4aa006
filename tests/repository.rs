//! A whole results repository read as it is (#27): `tests/fixtures/repo/` has the shape of a
//! "Download ZIP" of released runs (a `<repo>-<commit>/` top folder starting with `agent_`, a
//! ToolSandbox model with two runs, BFCL single-turn files, a BFCL result whose score file was
//! never committed beside another model's of that name, a tau2 run named by a Hugging Face
//! cache path, code and notebooks). Through the binary, as a user runs it.

#[path = "support/cli_bin.rs"]
mod cli_bin;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/repo");

fn score(extra: &[&str]) -> (Value, String) {
    let out: Output = cli_bin::command()
        .args(["score", REPO, "--bootstrap", "200", "--json", "-", "-q"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

fn rows(r: &Value) -> Vec<(String, String, String, u64)> {
    r["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap().to_string();
            (
                s("dataset"),
                s("model"),
                s("method"),
                c["n"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_repository_reads_right() {
    let (r, stderr) = score(&[]);
    let run = |t: &str| format!("default (run {t})");
    assert_eq!(
        rows(&r),
        [
            // Another model's score file of the same name is not this result file's: left out.
            (
                "bfcl/multi_turn_base".into(),
                "tiny-model-FC".into(),
                "fc".into(),
                5
            ),
            // The Hugging Face cache path reads as the model it names.
            (
                "tau2/telecom".into(),
                "Qwen/Qwen3-32B".into(),
                "llm_agent".into(),
                5
            ),
            // Two runs of one model: two conditions, told apart by their timestamps; the
            // model from the innermost agent_ folder, not the repository's top folder.
            (
                "toolsandbox".into(),
                "acme/tiny-1".into(),
                run("2025-01-02 03:04:05"),
                7
            ),
            (
                "toolsandbox".into(),
                "acme/tiny-1".into(),
                run("2025-01-02 23:04:05"),
                7
            ),
        ]
    );
    let qwen = &r["conditions"][1];
    assert!(qwen["model_path"]
        .as_str()
        .unwrap()
        .contains("models--Qwen--Qwen3-32B/snapshots/"));
    // The runs differ: the later one scored 0 on every scenario.
    assert!(
        r["conditions"][2]["final_success"]["value"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(r["conditions"][3]["final_success"]["value"], 0.0);
    // No single-turn dataset; one note for them, one for the runs.
    assert!(!rows(&r)
        .iter()
        .any(|c| !c.0.starts_with("bfcl/multi_turn") && c.0.starts_with("bfcl/")));
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.starts_with(
            "BFCL single-turn categories skipped (irrelevance, simple: 4 files, 3 tests)"
        )),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.starts_with(
            "toolsandbox: acme/tiny-1 · default came from 2 runs, scored as 2 conditions"
        )),
        "{notes:?}"
    );
    // The result file without its score file is named, and nothing of it is scored.
    let problems = r["problems"].as_array().unwrap();
    let missing = problems
        .iter()
        .find(|p| {
            p["example"]["message"]
                .as_str()
                .unwrap()
                .starts_with("a BFCL result file needs its score file")
        })
        .expect("the missing score file is a problem");
    assert!(missing["example"]["file"]
        .as_str()
        .unwrap()
        .ends_with("result/other-model/BFCL_v3_multi_turn_base_result.json"));
    // Problems: one line per kind on stderr, counted in the report; code, notebooks, CSV and
    // text are one notice.
    let kinds: u64 = problems.iter().map(|p| p["count"].as_u64().unwrap()).sum();
    assert_eq!(kinds, r["diagnostics_total"].as_u64().unwrap());
    assert!(stderr.contains(
        "6 files in the given folders are not .json, .jsonl, Inspect .eval or archive files and were \
         skipped"
    ));
    let problem_lines = stderr
        .lines()
        .filter(|l| l.starts_with(REPO) || l.starts_with("problems") || l.contains(" problems of "))
        .count();
    assert_eq!(problem_lines, problems.len() + 1, "{stderr}");
    assert!(
        stderr.contains("[2 problems of this kind; --verbose lists them]"),
        "{stderr}"
    );
}

#[test]
fn runs_merge_only_when_asked() {
    let (r, _) = score(&["--merge-runs"]);
    let sandbox: Vec<_> = rows(&r)
        .into_iter()
        .filter(|c| c.0 == "toolsandbox")
        .collect();
    assert_eq!(
        sandbox,
        [(
            "toolsandbox".into(),
            "acme/tiny-1".into(),
            "default".into(),
            14
        )]
    );
    assert!(r["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .contains("2 runs merged into one condition")));
}

#[test]
fn verbose_lists_every_problem() {
    let (r, stderr) = score(&["--verbose"]);
    let listed = stderr.lines().filter(|l| l.starts_with(REPO)).count() as u64;
    // Every problem, then every self-check that passed (each run's summary agrees with its
    // rows: not a problem, and not counted as one).
    let checks = r["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{stderr}");
    let total = r["diagnostics_total"].as_u64().unwrap();
    assert_eq!(listed, total + checks.len() as u64, "{stderr}");
    for c in checks {
        let line = format!(
            "{}: {}",
            c["file"].as_str().unwrap(),
            c["message"].as_str().unwrap()
        );
        assert!(stderr.lines().any(|l| l == line), "{line} not in {stderr}");
    }
}

#[test]
fn the_fixture_is_what_its_script_writes() {
    // The committed tree is regenerated by tests/fixtures/repo/make.py; a stale copy would test
    // something else. Spot-check its shape.
    let top = Path::new(REPO).join("agent_hard_benchmark-face722e");
    for rel in [
        "ToolSandbox/data/agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_03_04_05/result_summary.json",
        "ToolSandbox/data/agent_acme/tiny-1_user_openai/gpt-4o_01_02_2025_23_04_05/result_summary.json",
        "gorilla/berkeley-function-call-leaderboard/result/other-model/BFCL_v3_multi_turn_base_result.json",
        "gorilla/berkeley-function-call-leaderboard/score/tiny-model/BFCL_v3_simple_score.json",
        "analysis/plots.ipynb",
    ] {
        assert!(top.join(rel).is_file(), "{rel}");
    }
    assert!(!top
        .join("gorilla/berkeley-function-call-leaderboard/score/other-model")
        .exists());
}

/// The canonical `run`: rollouts of one condition from different runs are conditions of their
/// own (a rollout naming no run is a run of its own too), unless every file says to merge.
#[test]
fn canonical_runs_split_and_merge() {
    use prefix_exec::formats::ImportOptions;
    use prefix_exec::ingest::{read_files, read_files_with};
    let line = |task: &str, run: Option<&str>, ok: bool| {
        let run = run.map_or(String::new(), |r| format!(r#","run":"{r}""#));
        format!(
            r#"{{"dataset":"d","task_id":"{task}","model":"m","method":"x","success":{ok},"steps":[{{"tool":"t","ok":{ok}}}]{run}}}"#
        )
    };
    let a = [
        line("1", Some("runs/a/x.jsonl"), true),
        line("2", Some("runs/a/x.jsonl"), true),
    ]
    .join("\n");
    let b = [
        line("1", Some("runs/b/x.jsonl"), false),
        line("2", None, false),
    ]
    .join("\n");
    let files = [("a.jsonl", a.as_bytes()), ("b.jsonl", b.as_bytes())];
    let corpus = read_files(files);
    let mut names: Vec<(String, usize)> = (0..corpus.conditions.len() as u32)
        .map(|c| {
            let n = corpus.rollouts.iter().filter(|r| r.condition == c).count();
            (corpus.condition_names(c).2.to_string(), n)
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ("x (run a)".to_string(), 2),
            ("x (run b)".to_string(), 1),
            ("x (run unnamed)".to_string(), 1)
        ]
    );
    assert_eq!(corpus.notes.len(), 1, "{:?}", corpus.notes);
    let merged = read_files_with(
        files,
        &ImportOptions {
            merge_runs: true,
            ..ImportOptions::default()
        },
    );
    assert_eq!(merged.conditions.len(), 1);
    assert_eq!(merged.condition_names(0).2, "x");
    assert_eq!(merged.rollouts.len(), 4);
    // One condition, one run: nothing changes, nothing is said.
    let one = read_files([("a.jsonl", a.as_bytes())]);
    assert_eq!(one.condition_names(0).2, "x");
    assert!(one.notes.is_empty());
}
