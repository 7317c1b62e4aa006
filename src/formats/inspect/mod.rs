//! Inspect AI eval logs: `.json` logs and `.eval` archives (UK AISI's evaluation framework).
//!
//! Both containers are read one sample at a time, so a log of several GB never sits in memory
//! whole: a `.json` log streams through [`stream::JsonLog`] (top-level members, then the
//! `samples` array element by element); a `.eval` archive is a zip read by random access
//! ([`archive`]: the central directory, `header.json` — or `_journal/start.json` for a run that
//! did not finish — then each `samples/<id>_epoch_<n>.json` entry, decompressed alone).
//!
//! Conversion ([`convert`]; the rule in `docs/formats.md`):
//! - one rollout per sample × epoch: dataset = `eval.task` (with `eval.dataset.name` when it
//!   differs), model = `eval.model`, method = `eval.solver`, else the plan's last solver (the
//!   agent loop), task id = `sample.id` as text, `meta.trial` = `meta.epoch` = the epoch;
//! - steps = the assistant messages' `tool_calls` in order, each paired with the first later
//!   tool message with its `tool_call_id`; rejected iff the call has a `parse_error` or the
//!   message an `error` (legacy `tool_error`), the error kept as `"<type>: <message>"`; a call
//!   no message answers is looked up in the sample's tool events (ran → executed; error →
//!   rejected; absent → rejected as `unanswered`); tool events of calls missing from `messages`
//!   after its last call (react's final `submit()`) are steps too;
//! - a sample without tool calls is one terminal no-tool action, executable iff it succeeded;
//! - success from the primary scorer's per-epoch value ([`convert::success_of`]); samples whose
//!   value is NaN, a dict or list, unknown, or missing are not scored: excluded and counted;
//! - samples with `error` set are excluded and counted (or kept as failures, by option); a
//!   sample that hit a limit is kept and `meta.limit` says which;
//! - cost: tokens = input + cache read + cache write + output of the agent model's
//!   `model_usage`, latency = `working_time` (else `total_time`), usd = `total_cost`.
//!
//! At the end of a file a self-check compares the recomputed success rate with the header's
//! `results.scores[].metrics` (accuracy or mean) for the primary scorer, as a diagnostic.

pub mod archive;
pub(crate) mod convert;
pub(crate) mod stream;
pub(crate) mod wire;

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

pub use archive::{Progressing, RandomAccess, MAX_ENTRY_BYTES};
use convert::{Converted, RunInfo, Skip};

use super::draft::Draft;
use super::sink::Sink;
use super::{Format, FormatReader};
use crate::rollout::Source;

/// Per-file options of an Inspect log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InspectOptions {
    /// The scorer whose value decides success (default: the header's first result score).
    pub scorer: Option<String>,
    /// The string (or `true`/`false`) value that means success; others mean failure. Some
    /// scorers invert C/I (e.g. a sabotage scorer's `I` = "safe").
    pub success_value: Option<String>,
    /// Numeric values succeed when at least this (default 1.0).
    pub threshold: Option<f64>,
    /// Keep samples that errored (`sample.error`) as failures instead of excluding them.
    pub keep_errored: bool,
    /// The most bytes one sample may take (default [`MAX_ENTRY_BYTES`]); lowered by tests of
    /// the limit.
    #[doc(hidden)]
    #[serde(skip)]
    pub max_sample: Option<u64>,
}

/// Where a sample's rollout came from.
pub(crate) struct Place {
    pub line: u64,
    pub offset: u64,
    pub len: u64,
}

/// What the reader hands on: to the ingest session's [`crate::formats::sink::Sink`] (through
/// [`ToSink`]), or to a test.
pub(crate) trait Out {
    /// A rollout to add.
    fn rollout(&mut self, draft: Draft, place: Place);
    /// A diagnostic; `error` counts it as a rejected element of the file.
    fn note(&mut self, line: Option<u64>, message: String, error: bool);
    /// A self-check that agreed (not a diagnostic: [`crate::rollout::Corpus::checks`]).
    fn passed(&mut self, message: String);
}

/// Per-file counts.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    pub samples: u64,
    pub rollouts: u64,
    pub errored_excluded: u64,
    pub errored_kept: u64,
    pub not_scored: BTreeMap<String, u64>,
    pub limits: BTreeMap<String, u64>,
    pub orphans: u64,
    pub ran_per_events: u64,
    pub unanswered: u64,
    pub trailing_event_calls: u64,
    pub other_event_calls: u64,
    pub usage_without_agent_model: u64,
    pub scored: u64,
    pub successes: u64,
    pub repeated: u64,
    seen: HashSet<(String, i64)>,
}

/// The reading of one Inspect file.
pub(crate) struct LogReader {
    pub run: RunInfo,
    pub options: InspectOptions,
    pub overrides: super::ImportOptions,
    pub tally: Tally,
    /// `.json`: the scanner, and the header members read so far.
    json: Option<stream::JsonLog>,
    members: serde_json::Map<String, serde_json::Value>,
    header_read: bool,
    /// The most bytes one sample may take (decompressed, or as a `.json` element).
    pub(crate) max_sample: u64,
}

impl LogReader {
    pub(crate) fn new(overrides: &super::ImportOptions) -> LogReader {
        LogReader {
            run: RunInfo::unknown(),
            options: super::inspect::InspectOptions {
                // The one crash policy decides; the file's own option is what "as the
                // benchmark" means for Inspect (errored samples are left out unless kept).
                keep_errored: overrides.crashed.counts(overrides.inspect.keep_errored),
                ..overrides.inspect.clone()
            },
            overrides: overrides.clone(),
            tally: Tally::default(),
            json: None,
            members: serde_json::Map::new(),
            header_read: false,
            max_sample: overrides.inspect.max_sample.unwrap_or(MAX_ENTRY_BYTES),
        }
    }

    /// Feeds a chunk of a `.json` log.
    pub(crate) fn push_json(&mut self, chunk: &[u8], sink: &mut dyn Out) {
        let mut json = self
            .json
            .take()
            .unwrap_or_else(|| stream::JsonLog::new(self.max_sample as usize));
        json.push(chunk, &mut |item| self.json_item(item, sink));
        self.json = Some(json);
    }

    /// Ends a `.json` log.
    pub(crate) fn finish_json(&mut self, sink: &mut dyn Out) {
        let mut json = self
            .json
            .take()
            .unwrap_or_else(|| stream::JsonLog::new(self.max_sample as usize));
        json.finish(&mut |item| self.json_item(item, sink));
        if !self.header_read {
            self.header_from_members(sink);
        }
        self.finish(sink);
    }

    fn json_item(&mut self, item: stream::Item<'_>, sink: &mut dyn Out) {
        match item {
            stream::Item::Member { key, bytes } => {
                let parsed = serde_json::from_slice::<serde_json::Value>(bytes).or_else(|e| {
                    convert::finite_json(bytes)
                        .ok_or(e)
                        .and_then(|c| serde_json::from_slice(&c))
                });
                match parsed {
                    Ok(v) => {
                        self.members.insert(key.to_string(), v);
                    }
                    Err(e) => sink.note(
                        None,
                        format!("the log's `{key}` is not valid JSON: {e}"),
                        true,
                    ),
                }
            }
            stream::Item::SamplesBegin => self.header_from_members(sink),
            stream::Item::Sample {
                bytes,
                offset,
                line,
            } => {
                if !self.header_read {
                    self.header_from_members(sink);
                }
                let place = Place {
                    line,
                    offset,
                    len: bytes.len() as u64,
                };
                self.sample(bytes, place, sink);
            }
            stream::Item::TooLarge { line, bytes, .. } => sink.note(
                Some(line),
                format!(
                    "a sample of {} MiB, more than the {} MiB limit: skipped",
                    bytes >> 20,
                    self.max_sample >> 20
                ),
                true,
            ),
            stream::Item::Error { line, message } => sink.note(Some(line), message, true),
        }
    }

    fn header_from_members(&mut self, sink: &mut dyn Out) {
        self.header_read = true;
        let members = std::mem::take(&mut self.members);
        if !members.contains_key("eval") {
            sink.note(
                None,
                "the log has no `eval` before its samples: its task, model and solver are \
                 unknown (set dataset, model and method for the file)"
                    .to_string(),
                false,
            );
        }
        match serde_json::from_value::<wire::Header>(serde_json::Value::Object(members)) {
            Ok(h) => self.set_header(&h, sink),
            Err(e) => sink.note(
                None,
                format!("the log's header could not be read ({e}); names are unknown"),
                true,
            ),
        }
    }

    /// Takes the run's names and scorer from a header.
    pub(crate) fn set_header(&mut self, h: &wire::Header, sink: &mut dyn Out) {
        self.header_read = true;
        self.run = RunInfo::from_header(h);
        if let Some(v) = self.run.version.filter(|v| *v > 2) {
            sink.note(
                None,
                format!(
                    "log format version {v} is newer than the version 2 this reader knows; read \
                     as version 2 (unknown fields are ignored)"
                ),
                false,
            );
        }
        if let Some(status) = self.run.status.as_deref().filter(|s| *s != "success") {
            sink.note(
                None,
                format!(
                    "the eval's status is {status:?}: the samples it holds are read (an \
                     unfinished eval may lack some)"
                ),
                false,
            );
        }
        if self.run.scorer.is_none() && self.options.scorer.is_none() {
            sink.note(
                None,
                "the header names no scorer: a sample's only score decides its success".to_string(),
                false,
            );
        }
    }

    /// Converts one sample and hands its rollout over. The sample's bytes are freed before the
    /// rollout is rendered, so a large sample is not held twice.
    pub(crate) fn sample(&mut self, bytes: Vec<u8>, place: Place, sink: &mut dyn Out) {
        self.tally.samples += 1;
        let converted = convert::convert(&bytes, &self.run, &self.options);
        drop(bytes);
        let c = match converted {
            Ok(c) => c,
            Err(e) => {
                sink.note(Some(place.line), format!("sample: {e}"), true);
                return;
            }
        };
        let Converted {
            draft,
            skip,
            key,
            scored,
            limit,
            errored,
            orphans,
            ran_per_events,
            unanswered,
            trailing_event_calls,
            other_event_calls,
            usage_without_agent_model,
        } = c;
        let t = &mut self.tally;
        if !t.seen.insert(key.clone()) {
            t.repeated += 1;
            sink.note(
                Some(place.line),
                format!(
                    "sample {:?} epoch {} appears again: both are read (Inspect keeps the last \
                     when a sample is requeued)",
                    key.0, key.1
                ),
                false,
            );
        }
        t.orphans += orphans;
        t.ran_per_events += ran_per_events;
        t.unanswered += unanswered;
        t.trailing_event_calls += trailing_event_calls;
        t.other_event_calls += other_event_calls;
        t.usage_without_agent_model += u64::from(usage_without_agent_model);
        if let Some(s) = scored {
            t.scored += 1;
            t.successes += u64::from(s);
        }
        match skip {
            None => {
                let mut d = draft;
                if let Some(l) = limit {
                    *t.limits.entry(l).or_default() += 1;
                }
                t.errored_kept += u64::from(errored);
                t.rollouts += 1;
                d.apply(&self.overrides);
                sink.rollout(d, place);
            }
            Some(Skip::Errored) => t.errored_excluded += 1,
            Some(Skip::NotScored(why)) => *t.not_scored.entry(why).or_default() += 1,
        }
    }

    /// The file's closing diagnostics: exclusions, limits, pairing counts and the self-check.
    pub(crate) fn finish(&mut self, sink: &mut dyn Out) {
        let t = self.tally.clone();
        if t.errored_excluded > 0 {
            sink.note(
                None,
                format!(
                    "{} samples errored (`error` set: a sandbox or provider crash) and are \
                     excluded; keep them as failures with the file's \"keep errored samples\" \
                     option",
                    t.errored_excluded
                ),
                false,
            );
        }
        if t.errored_kept > 0 {
            sink.note(
                None,
                format!("{} errored samples kept as failures", t.errored_kept),
                false,
            );
        }
        let not_scored: u64 = t.not_scored.values().sum();
        if not_scored > 0 {
            let reasons: Vec<String> = t
                .not_scored
                .iter()
                .map(|(why, n)| format!("{n} × {why}"))
                .collect();
            sink.note(
                None,
                format!(
                    "{not_scored} samples not scored, excluded: {}",
                    reasons.join("; ")
                ),
                false,
            );
        }
        if !t.limits.is_empty() {
            let limits: Vec<String> = t.limits.iter().map(|(k, n)| format!("{k}: {n}")).collect();
            sink.note(
                None,
                format!(
                    "samples that hit a limit are kept (meta.limit): {}",
                    limits.join(", ")
                ),
                false,
            );
        }
        if t.orphans > 0 {
            sink.note(
                None,
                format!(
                    "{} tool messages answer no call in their sample: ignored",
                    t.orphans
                ),
                false,
            );
        }
        if t.ran_per_events > 0 || t.unanswered > 0 {
            sink.note(
                None,
                format!(
                    "{} calls have no tool message: {} found in the sample's tool events \
                     (their verdict taken from there), {} found nowhere (rejected as \
                     unanswered)",
                    t.ran_per_events + t.unanswered,
                    t.ran_per_events,
                    t.unanswered
                ),
                false,
            );
        }
        if t.trailing_event_calls > 0 {
            sink.note(
                None,
                format!(
                    "{} calls exist only as tool events after a sample's last message call \
                     (e.g. a final submit()): read as steps",
                    t.trailing_event_calls
                ),
                false,
            );
        }
        if t.other_event_calls > 0 {
            sink.note(
                None,
                format!(
                    "{} tool events belong to calls outside the samples' messages (sub-agents): \
                     not steps",
                    t.other_event_calls
                ),
                false,
            );
        }
        if t.usage_without_agent_model > 0 {
            sink.note(
                None,
                format!(
                    "{} samples have model usage but none for {:?}: no token cost for them",
                    t.usage_without_agent_model, self.run.model
                ),
                false,
            );
        }
        match self.self_check() {
            Some(Check::Agrees(message)) => sink.passed(message),
            Some(Check::Problem(message)) => sink.note(None, message, false),
            None => {}
        }
    }

    /// Compares the recomputed success rate with the log's own aggregate for the scorer.
    fn self_check(&self) -> Option<Check> {
        let t = &self.tally;
        let scorer = self.options.scorer.clone().or(self.run.scorer.clone())?;
        let (_, _, metrics) = self
            .run
            .metrics
            .iter()
            .find(|(name, s, _)| *name == scorer || s.as_deref() == Some(&scorer))?;
        let (metric, value) = ["accuracy", "mean"]
            .iter()
            .find_map(|m| metrics.get(*m).map(|v| (*m, *v)))?;
        if t.scored == 0 {
            return Some(Check::Problem(format!(
                "self-check: the log's {scorer} {metric} is {value:.4}, but no sample here was \
                 scored to compare with"
            )));
        }
        let ours = t.successes as f64 / t.scored as f64;
        let agrees = (ours - value).abs() < 1e-6;
        Some(if agrees {
            Check::Agrees(format!(
                "self-check: the recomputed success rate {ours:.4} ({}/{} scored samples) agrees \
                 with the log's {scorer} {metric}",
                t.successes, t.scored
            ))
        } else {
            Check::Problem(format!(
                "self-check: the recomputed success rate {ours:.4} ({}/{} scored samples) \
                 differs from the log's {scorer} {metric} {value:.4} (the log averages the \
                 scorer's values over its samples: partial credit, a custom success value or \
                 threshold, samples not in this file, or epoch reduction make them differ)",
                t.successes, t.scored
            ))
        })
    }
}

/// A self-check's outcome: it agreed, or it is a problem to state (it differs, or there was
/// nothing to compare).
enum Check {
    Agrees(String),
    Problem(String),
}

/// Whether the first bytes of a `.json` file are an Inspect log's: an object whose first
/// member is `version` followed by `status` or `eval`, or one with `eval` and `samples`,
/// `results` or `plan` among the members the probe holds.
pub(crate) fn looks_like_json_log(probe: &[u8]) -> bool {
    let body = probe.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(probe);
    let open = super::scan::skip_ws(body, 0);
    if body.get(open) != Some(&b'{') {
        return false;
    }
    let (members, _) = super::scan::members(body, open);
    let keys: Vec<&str> = members.iter().map(|m| m.key.as_str()).collect();
    let first_two = keys.first() == Some(&"version")
        && keys.get(1).is_some_and(|k| *k == "status" || *k == "eval");
    let has = |k: &str| keys.contains(&k);
    first_two || (has("eval") && (has("samples") || has("results") || has("plan")))
}

/// Reads a `.eval` archive: the header (or the journal's start record), then each sample entry.
/// `Err` when the zip is not an Inspect log (the message says what it is).
pub(crate) fn read_archive(
    reader: &mut LogReader,
    src: &mut dyn RandomAccess,
    sink: &mut dyn Out,
) -> Result<(), String> {
    let mut zip = match archive::Archive::open(src) {
        Ok(mut z) => {
            z.cap = reader.max_sample;
            z
        }
        Err(e) => {
            sink.note(None, format!("the .eval archive: {e}"), true);
            return Ok(());
        }
    };
    let is_log = zip.entries.iter().any(|e| {
        e.name == "header.json" || e.name == "_journal/start.json" || e.name.starts_with("samples/")
    });
    if !is_log {
        return Err("a zip archive that is not an Inspect log (no header.json, \
                    _journal/start.json or samples/ entries)"
            .to_string());
    }
    let header = zip
        .find("header.json")
        .cloned()
        .map(|e| ("header.json", e))
        .or_else(|| {
            zip.find("_journal/start.json")
                .cloned()
                .map(|e| ("_journal/start.json", e))
        });
    match header {
        Some((name, entry)) => {
            let parsed = zip.read(&entry).and_then(|bytes| {
                let clean = convert::finite_json(&bytes);
                super::read_object::<wire::Header>(
                    clean.as_deref().unwrap_or(&bytes),
                    "a log header",
                )
            });
            match parsed {
                Ok(h) => {
                    if name != "header.json" {
                        sink.note(
                            None,
                            "no header.json: the eval did not finish (or crashed); names come \
                             from _journal/start.json and there are no results to check against"
                                .to_string(),
                            false,
                        );
                    }
                    reader.set_header(&h, sink);
                }
                Err(e) => sink.note(None, format!("{name}: {e}; names are unknown"), true),
            }
        }
        None => sink.note(
            None,
            "no header.json nor _journal/start.json: the run's task, model and solver are \
             unknown (set them for the file)"
                .to_string(),
            true,
        ),
    }
    let samples: Vec<(usize, archive::Entry)> = zip
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.name.starts_with("samples/"))
        .map(|(i, e)| (i, e.clone()))
        .collect();
    let mut chunked = 0u64;
    for (i, entry) in samples {
        let rest = &entry.name["samples/".len()..];
        if rest.contains('/') {
            // The newest "chunked" layout (`samples/<id>_epoch_<n>/sample.json` + messages,
            // events… entries): counted once per sample below.
            chunked += u64::from(rest.ends_with("/sample.json"));
            continue;
        }
        if !rest.ends_with(".json") {
            continue;
        }
        match zip.read_located(&entry) {
            Ok((bytes, len)) => {
                let place = Place {
                    line: i as u64 + 1,
                    offset: entry.header_start,
                    len,
                };
                reader.sample(bytes, place, sink)
            }
            Err(e) => sink.note(Some(i as u64 + 1), format!("{}: {e}", entry.name), true),
        }
    }
    if zip.duplicate_names {
        // A requeued sample is written again under the same entry name, and Inspect reads the
        // last entry of a name (the spec's "last entry wins"); the zip reader keeps exactly
        // that one per name, so the earlier attempts are never read.
        sink.note(
            None,
            "some entries were written again later under the same name (requeued samples): \
             only the last of each is read, as Inspect does"
                .to_string(),
            false,
        );
    }
    if chunked > 0 {
        sink.note(
            None,
            format!(
                "{chunked} samples are stored in Inspect's newest chunked layout \
                 (samples/<id>_epoch_<n>/sample.json with separate message and event entries), \
                 which this reader does not read: the format description it follows names \
                 those entries but not their fields, so their steps cannot be read without \
                 guessing; skipped"
            ),
            true,
        );
    }
    reader.finish(sink);
    Ok(())
}

/// The steps of an archived or streamed sample again, for the rollout viewer: `bytes` are the
/// sample's JSON (from a `.json` log) or its zip entry's local record (from a `.eval`).
/// `model` is the rollout's model (its usage is the cost).
pub(crate) fn reread(bytes: &[u8], zipped: bool, model: &str) -> Result<Draft, String> {
    let unzipped;
    let json = if zipped {
        unzipped = archive::entry_from_local(bytes)?;
        &unzipped[..]
    } else {
        bytes
    };
    // Names and success come from the corpus: any header will do for the steps.
    let run = RunInfo {
        model: model.to_string(),
        ..RunInfo::unknown()
    };
    let c = convert::convert(json, &run, &InspectOptions::default())?;
    Ok(c.draft)
}

/// Hands a reader's rollouts and diagnostics to the ingest session's sink, for file `file`.
struct ToSink<'a, 'b> {
    sink: &'a mut Sink<'b>,
    file: usize,
}

impl Out for ToSink<'_, '_> {
    fn rollout(&mut self, mut draft: Draft, place: Place) {
        draft.run = Some(self.sink.name(self.file).to_string());
        let source = Source {
            file: self.file as u32,
            line: place.line,
            offset: place.offset,
            len: u32::try_from(place.len).unwrap_or(u32::MAX),
        };
        // Rendered, then dropped before the line is parsed: a large sample's steps are not
        // held three times over.
        let line = draft.render(None);
        drop(draft);
        super::canonical::emit_line(self.sink, self.file, line, source);
    }

    fn note(&mut self, line: Option<u64>, message: String, error: bool) {
        if error {
            self.sink.reject(self.file, line, message);
        } else {
            self.sink.warn(self.file, line, message);
        }
    }

    fn passed(&mut self, message: String) {
        self.sink.passed(self.file, message);
    }
}

/// The Inspect AI reader of the format registry: `.json` logs are streamed to it chunk by chunk,
/// `.eval` archives handed over for random access.
#[derive(Default)]
pub(crate) struct Inspect {
    /// The `.json` logs being read, by file index.
    logs: BTreeMap<usize, LogReader>,
}

impl Inspect {
    fn done(sink: &mut Sink<'_>, file: usize, reader: &LogReader) {
        let t = &reader.tally;
        sink.import(file).excluded_samples +=
            t.errored_excluded + t.not_scored.values().sum::<u64>();
    }
}

impl FormatReader for Inspect {
    fn formats(&self) -> &'static [Format] {
        &[Format::InspectJson, Format::InspectEval]
    }

    fn recognise_stream(&self, probe: &[u8]) -> Option<Format> {
        looks_like_json_log(probe).then_some(Format::InspectJson)
    }

    fn chunk(&mut self, out: &mut Sink<'_>, file: usize, _format: Format, bytes: &[u8]) {
        let options = out.options(file).clone();
        let reader = self
            .logs
            .entry(file)
            .or_insert_with(|| LogReader::new(&options));
        reader.push_json(bytes, &mut ToSink { sink: out, file });
    }

    fn end(&mut self, out: &mut Sink<'_>, file: usize, _format: Format) {
        let mut reader = self
            .logs
            .remove(&file)
            .unwrap_or_else(|| LogReader::new(out.options(file)));
        reader.finish_json(&mut ToSink { sink: out, file });
        Self::done(out, file, &reader);
    }

    fn archive(
        &mut self,
        out: &mut Sink<'_>,
        file: usize,
        src: &mut dyn RandomAccess,
    ) -> Result<(), String> {
        let mut reader = LogReader::new(out.options(file));
        read_archive(&mut reader, src, &mut ToSink { sink: out, file })?;
        Self::done(out, file, &reader);
        Ok(())
    }

    fn forget(&mut self, file: usize) {
        self.logs.remove(&file);
    }

    fn reread(&self, format: Format, bytes: &[u8], _success: bool) -> Result<Draft, String> {
        reread(bytes, format == Format::InspectEval, "")
    }
}
