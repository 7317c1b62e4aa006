//! Helpers of the importer tests: reading fixtures through [`Ingest`] in chosen chunk sizes, and
//! a compact view of each rollout to compare against hand-derived expectations.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use prefix_exec::formats::{ImportOptions, ImportSummary};
use prefix_exec::ingest::Ingest;
use prefix_exec::rollout::{Corpus, Label};

/// The committed fixtures.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
}

/// A fixture's path (for its name) and bytes.
pub fn fixture(rel: &str) -> (String, Vec<u8>) {
    let path = fixtures().join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path.to_string_lossy().into_owned(), bytes)
}

/// The BFCL fixture run: a result file and its score file.
pub const BFCL_RUN: [&str; 2] = [
    "bfcl/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json",
    "bfcl/score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json",
];

/// The paths of every file under `dir` whose extension is one of `extensions`, sorted.
pub fn paths_under(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|x| extensions.iter().any(|e| x == *e))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every `.json` file under `dir`, named by its path relative to `base`, in a fixed order.
pub fn walk(base: &Path, dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = paths_under(dir, &["json"])
        .into_iter()
        .map(|p| {
            let name = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// Reads files (name, bytes) with the same options, in chunks of `chunk` bytes.
pub fn ingest_with(
    files: &[(String, Vec<u8>)],
    options: &ImportOptions,
    chunk: usize,
) -> (Corpus, ImportSummary) {
    let mut ingest = Ingest::new();
    for (name, bytes) in files {
        let f = ingest.begin_file_with(name, options.clone());
        for c in bytes.chunks(chunk.max(1)) {
            ingest.push(f, c);
        }
        ingest.end_file(f);
    }
    ingest.finish_with_summary()
}

/// Reads fixtures (by relative path) with default options in one chunk each.
pub fn ingest(rels: &[&str]) -> (Corpus, ImportSummary) {
    let files: Vec<_> = rels.iter().map(|r| fixture(r)).collect();
    ingest_with(&files, &ImportOptions::default(), usize::MAX)
}

/// One rollout as the tests compare it.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub dataset: String,
    pub model: String,
    pub method: String,
    pub task: String,
    pub horizon: u32,
    pub fed: u32,
    pub success: bool,
    pub label: Option<Label>,
    pub error: Option<String>,
    pub tool: Option<String>,
}

pub fn views(corpus: &Corpus) -> Vec<View> {
    corpus
        .rollouts
        .iter()
        .map(|r| {
            let (d, m, me) = corpus.condition_names(r.condition);
            let f = r.first_failure.as_ref();
            View {
                dataset: d.to_string(),
                model: m.to_string(),
                method: me.to_string(),
                task: corpus.task_name(r.task).to_string(),
                horizon: r.horizon,
                fed: r.fed.0,
                success: r.success,
                label: f.and_then(|f| f.label),
                error: f
                    .and_then(|f| f.error)
                    .map(|t| corpus.texts.get(t).to_string()),
                tool: f
                    .and_then(|f| f.tool)
                    .map(|t| corpus.texts.get(t).to_string()),
            }
        })
        .collect()
}

/// (task, T, FED, success) of each rollout, the shape most expectations are written in.
pub fn shapes(corpus: &Corpus) -> Vec<(String, u32, u32, bool)> {
    views(corpus)
        .into_iter()
        .map(|v| (v.task, v.horizon, v.fed, v.success))
        .collect()
}

/// Builds the expected shapes from literals.
pub fn want(rows: &[(&str, u32, u32, bool)]) -> Vec<(String, u32, u32, bool)> {
    rows.iter()
        .map(|&(t, h, f, s)| (t.to_string(), h, f, s))
        .collect()
}

/// All diagnostic messages, as "line: message" (line 0 for file-level ones).
pub fn messages(corpus: &Corpus) -> Vec<String> {
    corpus
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.line.unwrap_or(0), d.message))
        .collect()
}

/// Whether some diagnostic contains every one of `parts`.
pub fn has_message(corpus: &Corpus, parts: &[&str]) -> bool {
    corpus
        .diagnostics
        .iter()
        .any(|d| parts.iter().all(|p| d.message.contains(p)))
}

/// Whether a self-check that passed says all of `parts` (a passed check is no diagnostic).
pub fn has_passed_check(corpus: &Corpus, parts: &[&str]) -> bool {
    corpus
        .checks
        .iter()
        .any(|d| parts.iter().all(|p| d.message.contains(p)))
}

/// Every committed fixture file, for the whole-drop tests.
pub const ALL_FIXTURES: [&str; 11] = [
    "tau-bench/tiny-model-retail.json",
    "tau2/telecom-results.json",
    "tau2/simulations-array.json",
    "tau2/dir-run/results.json",
    "tau2/dir-run/simulations/sim-a.json",
    "tau2/dir-run/simulations/sim-b.json",
    "bfcl/result/tiny-model/multi_turn/BFCL_v4_multi_turn_base_result.json",
    "bfcl/score/tiny-model/multi_turn/BFCL_v4_multi_turn_base_score.json",
    "bfcl/no-log/result/other-model/multi_turn/BFCL_v4_multi_turn_miss_func_result.json",
    "bfcl/no-log/score/other-model/multi_turn/BFCL_v4_multi_turn_miss_func_score.json",
    "canonical/tools.jsonl",
];
