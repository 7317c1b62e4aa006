//! Message transcripts: the logs most harnesses write, in the shapes of the model APIs —
//! OpenAI Chat Completions messages, OpenAI Responses items, Anthropic Messages content
//! blocks — with the outcome somewhere beside them.
//!
//! The rules (also in `docs/formats.md`):
//! - **containers**: one record per JSON file (an object with `messages`, `conversation`,
//!   `items` or `input` holding the list), a JSON array of such records, JSONL with one per
//!   line, and folders of such files; `input` is followed by `output` when both are lists;
//! - **steps** = the agent's tool calls in order: assistant `tool_calls` (`{id, function: {name,
//!   arguments}}`, `{function, args, id}`, `{id, name, arguments}`; the legacy `function_call`),
//!   Responses
//!   `function_call` items, Anthropic `tool_use` blocks. A call whose `requestor` is `"user"`,
//!   or made in a `user` message, is a user-side call: paired, not a step;
//! - **replies** (`role: "tool"` messages, `function_call_output` items, `tool_result`
//!   blocks) are paired with calls by [`crate::formats::pairing`]: by id, or by position where
//!   replies name none (said in a note);
//! - **rejected** ([`reject`]): the first that applies decides and is recorded as the step's
//!   `reject_source`: an explicit flag on the reply (`is_error: true`; an `error` that is set;
//!   an MCP block or result with `error`/`isError` true) → `flag:…`; a text rule on the
//!   reply's first text block → `text:<rule>`; arguments that are not JSON → `arguments`
//!   (labelled `schema`); no reply → `unanswered`. Otherwise the call executed;
//! - **success, task, model, method, dataset** by a [`mapping`], detected from common field
//!   names in a documented order and changed per file (`--field`, a mapping file, the app's
//!   file options); the mapping used is recorded with each rollout (`meta.success_rule`, shown
//!   under the report's table) and per file in the file list. A record with no outcome field
//!   is an error naming the fields looked for; one whose outcome is `null` is left out and
//!   counted;
//! - a record with a top-level `error` and no tool call crashed before any step: counted as a
//!   failed no-tool rollout (the record's own outcome says it failed), or excluded, as
//!   `--crashed` says;
//! - a transcript without tool calls is one terminal no-tool action, executable iff the record
//!   succeeded.

pub mod mapping;
mod messages;
pub mod reject;

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::canonical::emit;
use super::draft::{cost_value, last_line, Draft};
use super::scan::{LineCounter, Member, Span};
use super::sink::{for_each_element, source_of, Sink};
use super::{Format, FormatReader, Keys, LineShape, RereadContext};
use crate::rollout::{Cost, Source};
use mapping::{
    name_field, outcome, Detected, FieldMap, Outcome, DATASET_FIELDS, DEFAULT_DATASET,
    DEFAULT_METHOD, METHOD_FIELDS, MODEL_FIELDS, TASK_FIELDS,
};
use reject::{RejectSettings, TextRules};

/// The keys that hold a transcript's messages, in the order they are looked for.
pub const MESSAGE_KEYS: [&str; 4] = ["messages", "conversation", "items", "input"];

/// Per-file options of transcripts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Fields set by the user; the rest are detected.
    pub fields: FieldMap,
    /// The text rules for rejected calls.
    pub reject: RejectSettings,
}

/// Whether an object with these top-level keys is a transcript record (and not a record of a
/// format that also keeps messages: a canonical rollout's `steps`, a tau-bench `traj`, a tau2
/// simulation — `task_id` with `reward_info`, `ticks` or `termination_reason`, or with `id` and
/// no outcome field).
fn is_record(has: impl Fn(&str) -> bool) -> bool {
    let outcome = mapping::SUCCESS_FIELDS
        .iter()
        .any(|f| has(f.split('.').next().unwrap_or(f)));
    let tau2 = has("task_id")
        && (has("reward_info")
            || has("ticks")
            || has("termination_reason")
            || (has("id") && !outcome));
    MESSAGE_KEYS.iter().any(|k| has(k))
        && !has("steps")
        && !has("traj")
        && !has("simulations")
        && !tau2
}

/// The transcript reader: records are independent; it keeps per file what it detected.
#[derive(Default)]
pub(crate) struct Transcript {
    files: HashMap<usize, FileState>,
    /// Compiled text rules, shared by the files with the same settings (a drop has one or a
    /// few settings: a list).
    rules: Vec<(RejectSettings, Arc<TextRules>)>,
}

struct FileState {
    ctx: Arc<FileContext>,
    detected: Detected,
    /// Records read (for the default task names `<file>#<n>`).
    records: usize,
    warned_positional: bool,
    /// The first line of a line-by-line file, until the second line or the file's end.
    first: Option<(Vec<u8>, Source)>,
}

/// What converting a record of a file needs besides the record.
pub(crate) struct FileContext {
    fields: FieldMap,
    rules: Arc<TextRules>,
    /// The file name's stem and its folder's name.
    stem: String,
    folder: Option<String>,
}

impl FileContext {
    fn new(name: &str, options: &Options, rules: Arc<TextRules>) -> FileContext {
        let mut parts = name.rsplit(['/', '\\']);
        let base = parts.next().unwrap_or(name);
        let stem = base
            .strip_suffix(".jsonl")
            .or_else(|| base.strip_suffix(".json"))
            .unwrap_or(base)
            .to_string();
        FileContext {
            fields: options.fields.clone(),
            rules,
            stem,
            folder: parts.next().filter(|f| !f.is_empty()).map(str::to_string),
        }
    }
}

impl Transcript {
    fn state(&mut self, out: &mut Sink<'_>, file: usize) -> &mut FileState {
        if !self.files.contains_key(&file) {
            let options = &out.options(file).transcript;
            let rules = match self.rules.iter().find(|(s, _)| *s == options.reject) {
                Some((_, rules)) => rules.clone(),
                None => {
                    let rules = Arc::new(TextRules::new(&options.reject));
                    self.rules.push((options.reject.clone(), rules.clone()));
                    rules
                }
            };
            let ctx = Arc::new(FileContext::new(out.name(file), options, rules.clone()));
            for problem in &rules.problems {
                out.warn(file, None, problem.clone());
            }
            self.files.insert(
                file,
                FileState {
                    ctx,
                    detected: Detected::default(),
                    records: 0,
                    warned_positional: false,
                    first: None,
                },
            );
        }
        self.files.get_mut(&file).expect("inserted above")
    }

    /// One record of file `file` at `source`; `several` when the file holds more than one.
    fn record(
        &mut self,
        out: &mut Sink<'_>,
        file: usize,
        bytes: &[u8],
        source: Source,
        several: bool,
    ) {
        let state = self.state(out, file);
        state.records += 1;
        let ordinal = several.then_some(state.records);
        let ctx = state.ctx.clone();
        if state.records == 1 {
            // The viewer re-reads a rollout with the mapping and rules its file was read with.
            out.set_reread_context(file, ctx.clone());
        }
        let record: Value = match serde_json::from_slice(bytes) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                out.reject(
                    file,
                    Some(source.line),
                    "expected a JSON object (one transcript)".to_string(),
                );
                return;
            }
            Err(e) => {
                out.reject(file, Some(source.line), format!("not JSON: {e}"));
                return;
            }
        };
        let converted = match convert(&record, &ctx, ordinal) {
            Ok(c) => c,
            Err(e) => {
                out.reject(file, Some(source.line), e);
                return;
            }
        };
        let state = self.files.get_mut(&file).expect("state made above");
        let mut changed = false;
        for (field, used) in &converted.used {
            changed |= state.detected.note(field, used);
        }
        if converted.positional > 0 && !state.warned_positional {
            state.warned_positional = true;
            out.warn(
                file,
                Some(source.line),
                "tool replies name no call id: they are paired with the calls by position"
                    .to_string(),
            );
        }
        if changed {
            out.import(file).mapping = state.detected.to_map();
        }
        let mut draft = match converted.draft {
            Ok(d) => d,
            Err(field) => {
                let reason = format!("outcome field {field} is null");
                *out.import(file).excluded.entry(reason).or_default() += 1;
                return;
            }
        };
        if draft.crash.is_some() && !out.options(file).crashed.counts(true) {
            *out.import(file)
                .excluded
                .entry("crashed before any step".to_string())
                .or_default() += 1;
            return;
        }
        draft.apply(out.options(file));
        emit(out, file, &draft, None, source);
    }
}

/// A converted record.
struct Converted {
    /// The rollout, or the outcome field that is null (the record is not scored).
    draft: Result<Draft, String>,
    /// Field → where it came from.
    used: Vec<(&'static str, String)>,
    positional: u64,
}

/// The list of messages: the first of [`MESSAGE_KEYS`] holding an array (`input` followed by
/// `output`).
fn message_list(record: &Value) -> Option<Vec<&Value>> {
    for key in MESSAGE_KEYS {
        if let Some(Value::Array(items)) = record.get(key) {
            let mut list: Vec<&Value> = items.iter().collect();
            if key == "input" {
                if let Some(Value::Array(more)) = record.get("output") {
                    list.extend(more.iter());
                }
            }
            return Some(list);
        }
    }
    None
}

fn convert(record: &Value, ctx: &FileContext, ordinal: Option<usize>) -> Result<Converted, String> {
    let messages = message_list(record).ok_or_else(|| {
        format!(
            "no list of messages: looked for an array in {}",
            MESSAGE_KEYS.join(", ")
        )
    })?;
    let mut used: Vec<(&'static str, String)> = Vec::new();
    let (success, success_rule) = match outcome(record, &ctx.fields)? {
        Outcome::Null { field } => {
            return Ok(Converted {
                draft: Err(field),
                used,
                positional: 0,
            })
        }
        Outcome::Decided { success, field } => {
            let numeric = mapping::lookup(record, &field).is_some_and(Value::is_number);
            let rule = if numeric {
                format!("{field} ≥ {}", ctx.fields.threshold())
            } else {
                field.clone()
            };
            used.push(("success", rule.clone()));
            (success, rule)
        }
    };

    let task = name_field(record, ctx.fields.task.as_deref(), &TASK_FIELDS)?;
    let model = name_field(record, ctx.fields.model.as_deref(), &MODEL_FIELDS)?;
    // A `<model>_<task>` file name (Toolathlon) names both when the record names neither.
    let split = ctx
        .stem
        .split_once('_')
        .filter(|(m, t)| !m.is_empty() && !t.is_empty());
    let (task_id, task_from) = match (&task, &model, split) {
        (Some((t, from)), _, _) => (t.clone(), from.clone()),
        (None, None, Some((_, t))) => (numbered(t, ordinal), "file name (<model>_<task>)".into()),
        (None, _, _) => (numbered(&ctx.stem, ordinal), "file name".into()),
    };
    let (model, model_from) = match (model, &task, split) {
        (Some((m, from)), _, _) => (m, from),
        (None, None, Some((m, _))) => (m.to_string(), "file name (<model>_<task>)".into()),
        (None, _, _) => match &ctx.folder {
            Some(f) => (f.clone(), "folder name".into()),
            None => (ctx.stem.clone(), "file name".into()),
        },
    };
    let (method, method_from) = name_field(record, ctx.fields.method.as_deref(), &METHOD_FIELDS)?
        .unwrap_or_else(|| (DEFAULT_METHOD.to_string(), "default".into()));
    let (dataset, dataset_from) =
        name_field(record, ctx.fields.dataset.as_deref(), &DATASET_FIELDS)?
            .unwrap_or_else(|| (DEFAULT_DATASET.to_string(), "default".into()));
    used.push(("task", task_from.clone()));
    used.push(("model", model_from.clone()));
    used.push(("method", method_from.clone()));
    used.push(("dataset", dataset_from.clone()));

    let walk = messages::walk(&messages, &ctx.rules);
    let crash = walk
        .steps
        .is_empty()
        .then(|| record.get("error").filter(|e| !e.is_null()))
        .flatten()
        .and_then(|e| match e {
            Value::String(s) => Some(last_line(s).trim_start().to_string()),
            Value::Bool(false) => None,
            other => Some(other.to_string()),
        })
        .filter(|t| !t.is_empty() && !success);

    let mut meta = Map::new();
    meta.insert("format".into(), "transcript".into());
    if let Some(shape) = walk.shape {
        meta.insert("shape".into(), shape.name().into());
    }
    if walk.user_calls > 0 {
        meta.insert("user_calls".into(), walk.user_calls.into());
    }
    meta.insert(
        "success_rule".into(),
        format!(
            "success = {success_rule}; task = {task_from}; model = {model_from}; \
             method = {method_from}"
        )
        .into(),
    );
    let number = |paths: &[&str]| {
        paths
            .iter()
            .find_map(|p| mapping::lookup(record, p).and_then(Value::as_f64))
    };
    let cost = Cost {
        tokens: cost_value(number(&["usage.total_tokens", "meta.usage.total_tokens"])),
        latency_s: cost_value(number(&[
            "duration",
            "duration_seconds",
            "meta.duration_seconds",
        ])),
        usd: cost_value(number(&["cost", "agent_cost", "meta.agent_cost"])),
    };
    Ok(Converted {
        draft: Ok(Draft {
            dataset,
            task_id,
            model,
            method,
            success,
            no_tool_ok: success,
            steps: walk.steps,
            cost,
            crash,
            run: None,
            meta,
        }),
        used,
        positional: walk.positional,
    })
}

/// `name#n` for the n-th record of a file holding several.
fn numbered(name: &str, ordinal: Option<usize>) -> String {
    match ordinal {
        Some(n) => format!("{name}#{n}"),
        None => name.to_string(),
    }
}

impl FormatReader for Transcript {
    fn formats(&self) -> &'static [Format] {
        &[Format::Transcript]
    }

    fn recognise_line(&self, keys: &Keys<'_>) -> Option<LineShape> {
        is_record(|k| keys.contains(k)).then_some(LineShape::Lines(Format::Transcript))
    }

    fn recognise_array(&self, first: &Keys<'_>) -> Option<Format> {
        is_record(|k| first.contains(k)).then_some(Format::Transcript)
    }

    fn recognise_object(&self, doc: &[u8], members: &[Member]) -> Option<Format> {
        let has = |k: &str| members.iter().any(|m| m.key == k);
        let list = members
            .iter()
            .any(|m| MESSAGE_KEYS.contains(&m.key.as_str()) && doc.get(m.start) == Some(&b'['));
        (list && is_record(has)).then_some(Format::Transcript)
    }

    /// A file of one line is one record named after the file, JSONL numbers its records: the
    /// first line waits for the second (or the file's end) to tell which.
    fn line(&mut self, out: &mut Sink<'_>, _: Format, source: Source, bytes: &[u8]) {
        let file = source.file as usize;
        let state = self.state(out, file);
        if state.records == 0 && state.first.is_none() {
            state.first = Some((bytes.to_vec(), source));
            return;
        }
        if let Some((first, at)) = state.first.take() {
            self.record(out, file, &first, at, true);
        }
        self.record(out, file, bytes, source, true);
    }

    fn end(&mut self, out: &mut Sink<'_>, file: usize, _: Format) {
        if let Some((first, at)) = self.files.get_mut(&file).and_then(|s| s.first.take()) {
            self.record(out, file, &first, at, false);
        }
    }

    fn document(&mut self, out: &mut Sink<'_>, file: usize, _: Format, bytes: &[u8], open: usize) {
        if bytes.get(open) == Some(&b'[') {
            let end = for_each_element(out, file, bytes, open, |out, _, source, element| {
                self.record(out, file, element, source, true)
            });
            out.trailing(file, bytes, end);
        } else {
            let mut lc = LineCounter::new(bytes);
            let end = super::scan::value_end(bytes, open).unwrap_or(bytes.len());
            let source = source_of(file, &mut lc, Span { start: open, end });
            self.record(out, file, &bytes[open..end], source, false);
            out.trailing(file, bytes, Some(end));
        }
    }

    fn forget(&mut self, file: usize) {
        self.files.remove(&file);
    }

    /// Without the file's settings: the default mapping and rules.
    fn reread(&self, _: Format, bytes: &[u8], _success: bool) -> Result<Draft, String> {
        let ctx = FileContext::new(
            "",
            &Options::default(),
            Arc::new(TextRules::new(&RejectSettings::default())),
        );
        reread(bytes, &ctx)
    }

    fn reread_with(
        &self,
        format: Format,
        bytes: &[u8],
        success: bool,
        context: Option<&RereadContext>,
    ) -> Result<Draft, String> {
        match context.and_then(|c| c.downcast_ref::<FileContext>()) {
            Some(ctx) => reread(bytes, ctx),
            None => self.reread(format, bytes, success),
        }
    }
}

fn reread(bytes: &[u8], ctx: &FileContext) -> Result<Draft, String> {
    let record: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    convert(&record, ctx, None)?
        .draft
        .map_err(|field| format!("the record's outcome ({field}) is null"))
}
