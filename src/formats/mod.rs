//! Formats: one module per file format a benchmark writes, each read into canonical rollouts.
//!
//! Researchers hold the files their benchmark wrote, not canonical JSONL. Each format is one
//! module here (a file, or a small folder when it has several parts) implementing
//! `FormatReader`; `readers` lists them, and the ingest pipeline ([`crate::ingest`]) asks
//! them in that order to recognise a file, then hands them its lines or its document. So the
//! CLI (`prefix-exec score` and `prefix-exec convert`) and the browser app share one reading:
//!
//! | format | shape | module |
//! |---|---|---|
//! | canonical JSONL | one rollout per line, optional `{"tools": […]}` lines | [`canonical`] |
//! | tau-bench (v1) | JSON array of `{task_id, trial, reward, info, traj}` | [`tau_bench`] |
//! | tau2-bench / τ³-bench | `Results` object, array of simulations, or directory form | [`tau2`] |
//! | BFCL multi-turn | `…_result.json` lines + the run's `…_score.json` | [`bfcl`] |
//! | Inspect AI logs | `.json` log (streamed sample by sample) or `.eval` zip (random access) | [`inspect`] |
//!
//! Files are recognised by content (`crate::ingest::sniff`, asking each reader); canonical
//! JSONL and BFCL files stream line by line, the JSON documents (tau-bench, tau2) are buffered
//! per file and converted when the file ends, and what needs several files — pairing a BFCL
//! result with its score file, a tau2 `results.json` with its simulation files — is resolved
//! when the input ends (`FormatReader::resolve`). Every importer renders each rollout as a
//! canonical line (`draft`) that the canonical parser then reads (`canonical::emit`), so
//! converting and scoring cannot disagree. The exact per-format rules are in each module's
//! documentation and in `docs/formats.md`.
//!
//! Below the formats, shared by them: `draft` (the common rollout shape), `scan` (spans of
//! a JSON document without parsing it), `pyrepr` (Python reprs in BFCL logs),
//! [`schema_check`] (tool-schema prefix checks, with [`json_schema`], a JSON-Schema subset), `object` (ids, one located JSON object).
//! `sink` is what a reader writes to; [`summary`] what the importers found beside the corpus.
//!
//! Nothing is dropped silently: excluded rollouts (by termination reason), skipped inference
//! errors and rollouts without tool outputs are counted per file, both in a file diagnostic and
//! in the [`ImportSummary`].
//!
//! ```
//! use prefix_exec::formats::ImportOptions;
//! use prefix_exec::ingest::Ingest;
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
//! assert_eq!(summary.files[0].format, Some(prefix_exec::formats::Format::TauBench));
//! ```

pub mod bfcl;
pub mod canonical;
pub(crate) mod chat;
pub(crate) mod draft;
pub mod inspect;
pub mod json_schema;
pub(crate) mod json_text;
pub mod names;
pub(crate) mod object;
pub(crate) mod pairing;
pub(crate) mod path;
pub(crate) mod pyrepr;
pub mod runs;
pub(crate) mod scan;
pub mod schema_check;
pub(crate) mod sink;
pub mod summary;
pub mod tau2;
pub mod tau_bench;
pub mod toolsandbox;
pub mod transcript;

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use inspect::RandomAccess;
pub(crate) use object::{read_object, Id};
pub use schema_check::ToolSet;
pub use summary::{FileImport, ImportSummary, SourceCounts};

use crate::rollout::Source;
use sink::Sink;

/// The keys of a JSON object a reader is shown to recognise a file by.
pub(crate) type Keys<'a> = BTreeSet<&'a str>;

/// How a file's first line says it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LineShape {
    /// Line by line, in this format.
    Lines(Format),
    /// The line starts (or is) a whole JSON document of the reader's: buffer the file.
    Document,
}

/// A format's reader: how its files are recognised, read, and resolved across files.
///
/// One value per ingest session, made by [`readers`]; it keeps the per-file state of its files
/// (by file index) between calls. Recognition sees the first bytes only, so it must not depend
/// on how the file is cut into chunks. Everything a reader produces goes through the [`Sink`]:
/// rollouts (`canonical::emit` a [`draft::Draft`], or [`Sink::add`] a parsed canonical line),
/// diagnostics, per-file counts and the converted output.
pub(crate) trait FormatReader {
    /// The file kinds this reader reads.
    fn formats(&self) -> &'static [Format];

    /// Recognises a file from the keys of its first line, when that line is a JSON object.
    fn recognise_line(&self, _keys: &Keys<'_>) -> Option<LineShape> {
        None
    }

    /// Recognises a JSON array document from the keys of its first element.
    fn recognise_array(&self, _first: &Keys<'_>) -> Option<Format> {
        None
    }

    /// Recognises a JSON object document from its top-level members (`doc` is the whole text).
    fn recognise_object(&self, _doc: &[u8], _members: &[scan::Member]) -> Option<Format> {
        None
    }

    /// Whether files of `format` wait for other files of the drop (their diagnostics are written
    /// when the input ends, after [`FormatReader::resolve`]).
    fn needs_other_files(&self, _format: Format) -> bool {
        false
    }

    /// Whether files of `format` hold rollouts (a file holding none is not "empty").
    fn holds_rollouts(&self, _format: Format) -> bool {
        true
    }

    /// One non-blank line of a file read line by line, at `source`.
    fn line(&mut self, _out: &mut Sink<'_>, _format: Format, _source: Source, _bytes: &[u8]) {}

    /// [`FormatReader::line`] with the line's context-free reading done ahead, on another
    /// thread ([`canonical::prepare_line`]; the ingest prepares canonical lines only). A
    /// reader that prepares nothing reads the line as usual.
    fn prepared_line(
        &mut self,
        out: &mut Sink<'_>,
        format: Format,
        source: Source,
        bytes: &[u8],
        _prepared: Option<canonical::Prepared>,
    ) {
        self.line(out, format, source, bytes);
    }

    /// A whole document of file `file`, at its end; its first value starts at byte `open`.
    fn document(
        &mut self,
        _out: &mut Sink<'_>,
        _file: usize,
        _format: Format,
        _bytes: &[u8],
        _open: usize,
    ) {
    }

    /// The context-free part of reading a whole document of `format`: what follows from its
    /// bytes alone (and its top-level object as classification scanned it), computed ahead —
    /// natively on rayon's pool, for a file read whole ([`crate::ingest::PreparedFile`]) — and
    /// handed back to [`FormatReader::prepared_document`]. `None`: the reader has no such part.
    fn prepare_document(
        &self,
        _format: Format,
        _bytes: &[u8],
        _scanned: Option<&scan::Scanned>,
    ) -> Option<PreparedDocument> {
        None
    }

    /// [`FormatReader::prepare_document`]'s reading in a compact form sent between workers
    /// (the browser's pool workers prepare an archive's members for the worker holding the
    /// ingest), computed and encoded in one step so that a part of the reading the form leaves
    /// out is not computed; `None`: this reading has no such form, and the document is read
    /// where it is ingested.
    fn prepare_encoded(
        &self,
        _format: Format,
        _bytes: &[u8],
        _scanned: Option<&scan::Scanned>,
    ) -> Option<Vec<u8>> {
        None
    }

    /// [`FormatReader::prepare_encoded`]'s bytes read back, for the document `bytes` they were
    /// computed from; `None` when they do not decode (the document is read as usual then).
    fn decode_prepared(
        &self,
        _format: Format,
        _encoded: &[u8],
        _bytes: &[u8],
    ) -> Option<PreparedDocument> {
        None
    }

    /// [`FormatReader::document`] given the document's top-level object as classification
    /// scanned it (when it is an object) and what [`FormatReader::prepare_document`] computed
    /// ahead from the same bytes (if it was). The result must be `document`'s.
    #[allow(clippy::too_many_arguments)]
    fn prepared_document(
        &mut self,
        out: &mut Sink<'_>,
        file: usize,
        format: Format,
        bytes: &[u8],
        open: usize,
        _scanned: Option<&scan::Scanned>,
        _prepared: Option<PreparedDocument>,
    ) {
        self.document(out, file, format, bytes, open);
    }

    /// At the end of the input: what needs several files. Called again after more files;
    /// files resolved already are marked ([`Sink::resolved`]).
    fn resolve(&mut self, _out: &mut Sink<'_>) {}

    /// Forgets what file `file` (a repeat of an earlier file) left waiting for another file.
    fn forget(&mut self, _file: usize) {}

    /// Recognises a file that is streamed to the reader chunk by chunk (neither line by line
    /// nor buffered whole), from its first bytes (at most the sniffing probe: the decision must
    /// not depend on chunking).
    fn recognise_stream(&self, _probe: &[u8]) -> Option<Format> {
        None
    }

    /// The next chunk of a streamed file (see [`FormatReader::recognise_stream`]).
    fn chunk(&mut self, _out: &mut Sink<'_>, _file: usize, _format: Format, _bytes: &[u8]) {}

    /// The end of a streamed file, or of a file read line by line.
    fn end(&mut self, _out: &mut Sink<'_>, _file: usize, _format: Format) {}

    /// A zip archive, read by random access. `Err` (saying what the zip is) when this reader
    /// does not read it; nothing was added then.
    fn archive(
        &mut self,
        _out: &mut Sink<'_>,
        _file: usize,
        _src: &mut dyn RandomAccess,
    ) -> Result<(), String> {
        Err("a zip archive".to_string())
    }

    /// One rollout re-read from the bytes at its `Source`, for a viewer (names and success are
    /// then set from the corpus).
    fn reread(&self, format: Format, bytes: &[u8], success: bool) -> Result<draft::Draft, String>;

    /// [`FormatReader::reread`] with what the reader kept for the file when it was read
    /// ([`Sink::set_reread_context`]): a rollout whose outcome comes from another file (a
    /// ToolSandbox scenario's summary row) needs it.
    fn reread_with(
        &self,
        format: Format,
        bytes: &[u8],
        success: bool,
        _context: Option<&RereadContext>,
    ) -> Result<draft::Draft, String> {
        self.reread(format, bytes, success)
    }
}

/// What [`FormatReader::prepare_document`] computed ahead; each reader downcasts its own.
pub(crate) type PreparedDocument = Box<dyn std::any::Any + Send>;

/// What a reader keeps per file for re-reading its rollout later (see
/// [`FormatReader::reread_with`]); each reader downcasts its own.
pub(crate) type RereadContext = dyn std::any::Any + Send + Sync;

/// Every format's reader, in the order they are asked to recognise a file (and to resolve).
/// Adding a format is one line here.
pub(crate) fn readers() -> Vec<Box<dyn FormatReader>> {
    vec![
        Box::new(bfcl::Bfcl::default()),
        // Before canonical JSONL and the benchmark formats: a transcript's first line may carry
        // `success` (a canonical key); `transcript::is_record` declines the records of the
        // formats that also keep messages.
        Box::new(transcript::Transcript::default()),
        Box::new(canonical::Canonical::default()),
        Box::new(tau_bench::TauBench),
        Box::new(tau2::Tau2::default()),
        Box::new(inspect::Inspect::default()),
        Box::new(toolsandbox::ToolSandbox::default()),
    ]
}

/// Rewards within this distance of 1 count as success (rewards are 0/1 up to float noise).
pub const SUCCESS_EPS: f64 = 1e-6;

/// Per-file import settings: overrides of the names a format implies, exclusions, checks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The rules that label first failures without a label of their own.
    pub labels: crate::label::LabelSettings,
    /// Inspect AI logs: the scorer, success value and threshold, errored samples.
    pub inspect: inspect::InspectOptions,
    /// ToolSandbox: the success threshold on `similarity` and what to do with provider errors
    /// (read from the options of the run's `result_summary.json`).
    pub toolsandbox: toolsandbox::Options,
    /// Leave out BFCL inference errors (result lines with a `traceback` and no trajectory)
    /// instead of scoring them as rollouts that failed before any step (the leaderboard's
    /// cohort); excluded lines are counted and reported. Read under
    /// [`CrashPolicy::Benchmark`] only.
    pub exclude_inference_errors: bool,
    /// Episodes, samples or tests that crashed (an infrastructure or provider error, not the
    /// agent's doing): counted as each benchmark's leaderboard counts them, counted, or excluded,
    /// for every format.
    pub crashed: CrashPolicy,
    /// Message transcripts: the field mapping and the rules for rejected calls.
    pub transcript: transcript::Options,
    /// Score the runs of one condition (two run folders, two files each holding a run of one
    /// model and method) as trials of one condition instead of a condition each
    /// ([`crate::rollout::Corpus::split_runs`]). A condition's runs merge when every file that
    /// feeds it says so.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merge_runs: bool,
}

/// What to do with rollouts that crashed: the tau-bench episodes with an empty trajectory and
/// an `info.error`, BFCL inference errors, Inspect samples with `error` set, ToolSandbox
/// scenarios that failed with a provider error. A crash that is counted is a failed rollout
/// marked `crash` (canonical JSONL): before any step it is one terminal no-tool action, not
/// executable, not successful, its first failure labelled `environment` with the error as its
/// text; each condition reports how many of its rollouts crashed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrashPolicy {
    /// As each benchmark's own leaderboard counts them: tau-bench and BFCL count them as failed
    /// rollouts; Inspect and ToolSandbox leave them out (their per-format options can keep
    /// them).
    #[default]
    Benchmark,
    /// Every format counts them as failed rollouts.
    Count,
    /// Every format leaves them out (counted and reported per file).
    Exclude,
}

impl CrashPolicy {
    /// Every policy, in the order the CLI and the app list them.
    pub const ALL: [CrashPolicy; 3] = [
        CrashPolicy::Benchmark,
        CrashPolicy::Count,
        CrashPolicy::Exclude,
    ];

    /// Whether a format's crashed rollouts are counted; `benchmark` is what that format's
    /// leaderboard (with the file's per-format option) does.
    pub fn counts(self, benchmark: bool) -> bool {
        match self {
            CrashPolicy::Benchmark => benchmark,
            CrashPolicy::Count => true,
            CrashPolicy::Exclude => false,
        }
    }

    /// The name the CLI (`--crashed`) and the app use.
    pub fn name(self) -> &'static str {
        match self {
            CrashPolicy::Benchmark => "benchmark",
            CrashPolicy::Count => "count",
            CrashPolicy::Exclude => "exclude",
        }
    }

    /// Reads [`CrashPolicy::name`] back.
    pub fn parse(name: &str) -> Option<CrashPolicy> {
        CrashPolicy::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            dataset: None,
            model: None,
            method: None,
            exclude_termination: Vec::new(),
            schema_checks: true,
            labels: crate::label::LabelSettings::default(),
            inspect: inspect::InspectOptions::default(),
            toolsandbox: toolsandbox::Options::default(),
            exclude_inference_errors: false,
            crashed: CrashPolicy::Benchmark,
            transcript: transcript::Options::default(),
            merge_runs: false,
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
    /// BFCL's test data (questions, possible answers): no run, skipped with one note.
    BfclTestData,
    InspectJson,
    InspectEval,
    ToolSandboxSummary,
    ToolSandboxContext,
    ToolSandboxConversation,
    Transcript,
}

impl Format {
    /// Every format, in the order detection failures list them.
    pub const ALL: [Format; 15] = [
        Format::Canonical,
        Format::TauBench,
        Format::Tau2Results,
        Format::Tau2Simulations,
        Format::Tau2RunMetadata,
        Format::Tau2Simulation,
        Format::BfclResult,
        Format::BfclScore,
        Format::BfclTestData,
        Format::InspectJson,
        Format::InspectEval,
        Format::ToolSandboxSummary,
        Format::ToolSandboxContext,
        Format::ToolSandboxConversation,
        Format::Transcript,
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
            Format::BfclTestData => "BFCL test data",
            Format::InspectJson => "Inspect log (.json)",
            Format::InspectEval => "Inspect log (.eval)",
            Format::ToolSandboxSummary => "ToolSandbox result_summary.json",
            Format::ToolSandboxContext => "ToolSandbox execution_context.json",
            Format::ToolSandboxConversation => "ToolSandbox conversation.json",
            Format::Transcript => "message transcript",
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
            Format::BfclTestData => "BFCL test data (JSON lines {id, question} or {id, ground_truth}: the benchmark's questions and answers, not a run)",
            Format::InspectJson => "Inspect AI log (a JSON object {version, status, eval, …, samples})",
            Format::InspectEval => "Inspect AI .eval archive (a zip with header.json and samples/)",
            Format::ToolSandboxSummary => "ToolSandbox result_summary.json ({per_scenario_results, category_aggregated_results})",
            Format::ToolSandboxContext => "ToolSandbox trajectories/<scenario>/execution_context.json ({_dbs: {SANDBOX: […]}})",
            Format::ToolSandboxConversation => "ToolSandbox trajectories/<scenario>/conversation.json (a JSON array of OpenAI messages)",
            Format::Transcript => "message transcript (an object with messages, conversation, items or input, and an outcome field; one per file, a JSON array of them, or JSONL)",
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
