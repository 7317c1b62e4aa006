//! Importers: the files benchmarks write, read as they are.
//!
//! Researchers hold the files their benchmark wrote, not canonical JSONL. This module turns
//! each supported format into canonical rollouts, inside the core, so the CLI (`prefix-exec
//! score` and `prefix-exec convert`) and the browser app share one reading:
//!
//! | format | shape | module |
//! |---|---|---|
//! | canonical JSONL | one rollout per line, optional `{"tools": […]}` lines | [`crate::input::canonical`] |
//! | tau-bench (v1) | JSON array of `{task_id, trial, reward, info, traj}` | [`tau_bench`] |
//! | tau2-bench / τ³-bench | `Results` object, array of simulations, or directory form | [`tau2`] |
//! | BFCL multi-turn | `…_result.json` lines + the run's `…_score.json` | [`bfcl`] |
//!
//! Files are recognised by content ([`detect`]); canonical JSONL and BFCL files stream line by
//! line, the JSON documents (tau-bench, tau2) are buffered per file and converted when the file
//! ends, and what needs several files — pairing a BFCL result with its score file, a tau2
//! `results.json` with its simulation files — is resolved when the input ends. Every importer
//! renders each rollout as a canonical line that the canonical parser then reads, so converting
//! and scoring cannot disagree. The exact per-format rules are in each module's documentation
//! and in `docs/formats.md`.
//!
//! Nothing is dropped silently: excluded rollouts (by termination reason), skipped inference
//! errors and rollouts without tool outputs are counted per file, both in a file diagnostic and
//! in the [`ImportSummary`].
//!
//! ```
//! use prefix_exec::import::ImportOptions;
//! use prefix_exec::input::Ingest;
//! let tau_bench = br##"[{"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": [
//!   {"role": "system", "content": "# Airline Agent Policy"},
//!   {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "get_user", "arguments": "{}"}}]},
//!   {"role": "tool", "tool_call_id": "c", "content": "Error: user not found"}]}]"##;
//! let mut ingest = Ingest::new();
//! let f = ingest.begin_file_with("gpt-4o-airline.json", ImportOptions::default());
//! ingest.push(f, tau_bench);
//! ingest.end_file(f);
//! let (corpus, summary) = ingest.finish_with_summary();
//! assert_eq!(corpus.condition_names(0), ("tau-bench/airline", "gpt-4o", "tool-calling"));
//! assert_eq!(corpus.rollouts[0].fed.0, 1); // the first call was rejected
//! assert_eq!(summary.files[0].format, Some(prefix_exec::import::Format::TauBench));
//! ```

pub mod bfcl;
pub mod detect;
mod draft;
mod pyrepr;
mod scan;
pub mod schema_check;
pub(crate) mod session;
pub mod tau2;
pub mod tau_bench;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

pub(crate) use scan::{
    elements as scan_elements, members as scan_members, skip_ws as scan_skip_ws,
};
pub use schema_check::ToolSet;

use crate::rollout::{ConditionId, Corpus};

/// Rewards within this distance of 1 count as success (rewards are 0/1 up to float noise).
pub const SUCCESS_EPS: f64 = 1e-6;

/// Per-file import settings: overrides of the names a format implies, exclusions, checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImportOptions {
    /// Replaces the dataset of every rollout of the file.
    pub dataset: Option<String>,
    /// Replaces the model.
    pub model: Option<String>,
    /// Replaces the method.
    pub method: Option<String>,
    /// Rollouts whose termination reason is one of these are excluded (and counted).
    pub exclude_termination: Vec<String>,
    /// Check each step against the tool definitions when the file has them.
    pub schema_checks: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            dataset: None,
            model: None,
            method: None,
            exclude_termination: Vec::new(),
            schema_checks: true,
        }
    }
}

/// A recognised input format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Canonical,
    TauBench,
    Tau2Results,
    Tau2Simulations,
    Tau2RunMetadata,
    Tau2Simulation,
    BfclResult,
    BfclScore,
}

impl Format {
    /// Every format, in the order detection failures list them.
    pub const ALL: [Format; 8] = [
        Format::Canonical,
        Format::TauBench,
        Format::Tau2Results,
        Format::Tau2Simulations,
        Format::Tau2RunMetadata,
        Format::Tau2Simulation,
        Format::BfclResult,
        Format::BfclScore,
    ];

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Canonical => "canonical JSONL",
            Format::TauBench => "tau-bench results",
            Format::Tau2Results => "tau2 Results",
            Format::Tau2Simulations => "tau2 simulations array",
            Format::Tau2RunMetadata => "tau2 results.json (directory form)",
            Format::Tau2Simulation => "tau2 simulation file (directory form)",
            Format::BfclResult => "BFCL result",
            Format::BfclScore => "BFCL score",
        }
    }

    /// The name with the shape that identifies the format.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Canonical => "canonical JSONL (one {dataset, task_id, model, method, success, steps} object per line)",
            Format::TauBench => "tau-bench results (a JSON array of {task_id, trial, reward, info, traj})",
            Format::Tau2Results => "tau2 Results (a JSON object {info, tasks, simulations})",
            Format::Tau2Simulations => "tau2 simulations (a JSON array of {task_id, messages, reward_info})",
            Format::Tau2RunMetadata => "tau2 directory-form results.json ({info, tasks, simulation_index})",
            Format::Tau2Simulation => "tau2 directory-form simulation ({id, task_id, messages, reward_info})",
            Format::BfclResult => "BFCL result (JSON lines {id, result, inference_log})",
            Format::BfclScore => "BFCL score (JSON lines, first {accuracy, correct_count, total_count})",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a rollout's first failure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureSource {
    /// The tool-schema prefix check (tool not exposed, or arguments not fitting its schema).
    SchemaCheck,
    /// The log's own verdict (the environment rejected the call).
    Environment,
}

/// What was imported from one file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileImport {
    pub name: String,
    /// The detected format; `None` when nothing was recognised.
    pub format: Option<Format>,
    /// Rollouts added to the corpus from this file.
    pub rollouts: u64,
    /// Rollouts excluded, by termination reason.
    pub excluded: BTreeMap<String, u64>,
    /// BFCL result lines that were inference errors (`traceback`), skipped.
    pub skipped_inference_errors: u64,
    /// Rollouts whose tool outputs the file does not have (BFCL without `inference_log`): their
    /// steps carry no verdict and count as executed.
    pub without_tool_outputs: u64,
    /// Rollouts whose first failure came from the tool-schema check.
    pub schema_first_failures: u64,
    /// Rollouts whose first failure came from the environment's verdict.
    pub environment_first_failures: u64,
    /// Termination reasons of the imported rollouts (tau2).
    pub termination_reasons: BTreeMap<String, u64>,
    /// Tools whose schemas the steps were checked against (0 when none).
    pub tools: u64,
    /// The file this one was paired with (a BFCL score file, a tau2 results.json).
    pub paired_with: Option<String>,
    /// The earlier file with the same bytes; this one was not read again.
    pub repeats: Option<String>,
}

/// Per-condition counts of first-failure sources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceCounts {
    pub condition: ConditionId,
    pub schema_check: u64,
    pub environment: u64,
}

/// What the importers found, beside the corpus.
#[derive(Clone, Debug, Default)]
pub struct ImportSummary {
    /// One entry per input file, in input order.
    pub files: Vec<FileImport>,
    /// For each rollout of the corpus (same index), where its first failure came from; `None`
    /// for a fully executable rollout.
    pub first_failure_sources: Vec<Option<FailureSource>>,
    readback: Vec<Readback>,
    /// Canonical rollouts checked against a file-level `tools` line: that tool set, by rollout
    /// index (a rollout's own `tools` field is in its line).
    line_tools: BTreeMap<usize, Arc<ToolSet>>,
}

/// What it takes to re-read a rollout of a file.
#[derive(Clone, Debug, Default)]
struct Readback {
    format: Option<Format>,
    tools: Option<Arc<ToolSet>>,
    schema_checks: bool,
}

impl ImportSummary {
    /// First failures by source, per condition (conditions without any first failure omitted).
    pub fn source_counts(&self, corpus: &Corpus) -> Vec<SourceCounts> {
        let mut counts: BTreeMap<ConditionId, SourceCounts> = BTreeMap::new();
        for (r, s) in corpus.rollouts.iter().zip(&self.first_failure_sources) {
            let Some(s) = s else { continue };
            let c = counts.entry(r.condition).or_insert(SourceCounts {
                condition: r.condition,
                ..SourceCounts::default()
            });
            match s {
                FailureSource::SchemaCheck => c.schema_check += 1,
                FailureSource::Environment => c.environment += 1,
            }
        }
        counts.into_values().collect()
    }

    /// The canonical line of rollout `index`, given the bytes at its [`crate::rollout::Source`]
    /// (a canonical line, a tau-bench element, a tau2 simulation or a BFCL result line). A
    /// viewer re-reads those bytes from the file and hands them here, then shows the steps with
    /// [`crate::browse::parse_steps`]; names and success are the corpus's.
    pub fn rollout_line(
        &self,
        corpus: &Corpus,
        index: usize,
        bytes: &[u8],
    ) -> Result<String, String> {
        let r = corpus.rollouts.get(index).ok_or("no such rollout")?;
        let rb = self
            .readback
            .get(r.source.file as usize)
            .ok_or("the rollout's file is unknown")?;
        let (dataset, model, method) = corpus.condition_names(r.condition);
        let head = |d: &mut draft::Draft| {
            d.dataset = dataset.to_string();
            d.model = model.to_string();
            d.method = method.to_string();
            d.task_id = corpus.task_name(r.task).to_string();
            d.success = r.success;
            // Whether finishing without tools was allowed came from the run's context.
            d.no_tool_ok = r.fully_executable();
        };
        let mut d = match rb.format {
            None | Some(Format::Canonical) => {
                let line = std::str::from_utf8(bytes)
                    .map_err(|_| "the line is not valid UTF-8".to_string())?;
                if !rb.schema_checks {
                    return Ok(line.to_string());
                }
                return Ok(draft::annotate_canonical(line, self.line_tools.get(&index)));
            }
            Some(Format::TauBench) => {
                tau_bench::convert(bytes, &tau_bench::Defaults::for_file(""))?
            }
            Some(Format::Tau2Results | Format::Tau2Simulations | Format::Tau2Simulation) => {
                let sim = tau2::read_simulation(bytes)?;
                tau2::draft(sim, &tau2::RunContext::default(), &ImportOptions::default())
                    .map_err(|_| "excluded".to_string())?
            }
            Some(Format::BfclResult) => match bfcl::read_result_line(bytes)? {
                bfcl::ResultLine::Test(t) => bfcl::draft(t, r.success, String::new()),
                bfcl::ResultLine::InferenceError { .. } => {
                    return Err("an inference error has no steps".to_string())
                }
            },
            Some(Format::Tau2RunMetadata | Format::BfclScore) => {
                return Err("this file holds no rollouts".to_string())
            }
        };
        head(&mut d);
        Ok(d.render(rb.tools.as_deref()))
    }
}

/// A task or simulation id: a string, or an integer meaning its decimal text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Id(pub String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A serde error with the path of the offending field.
/// Reads one JSON object of a format into its wire type `T`: an array is refused (serde would
/// read it into the struct by position, turning `[1, 0, 1.0, {}, []]` into a result), a bad
/// field is named by its path, and nothing may follow the object.
pub(crate) fn read_object<'de, T: Deserialize<'de>>(
    bytes: &'de [u8],
    what: &str,
) -> Result<T, String> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(format!("expected {what} (a JSON object)"));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(json_error)?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

pub(crate) fn json_error(e: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let inner = e.into_inner();
    if path == "." || path.is_empty() || inner.is_syntax() || inner.is_eof() {
        inner.to_string()
    } else {
        format!("{path}: {inner}")
    }
}
