//! The canonical rollout format: JSON Lines, one rollout per line.
//!
//! ```json
//! {"dataset": "bfcl-v3", "task_id": "multi_turn_base_12", "model": "gpt-4.1",
//!  "method": "Dual-Loop", "success": true,
//!  "steps": [{"tool": "cd", "args": {"folder": "docs"}, "ok": true},
//!            {"tool": "mv", "ok": false, "error": "No such file", "label": "precondition"}],
//!  "no_tool_ok": false, "cost": {"tokens": 5312, "latency_s": 12.4}, "meta": {}}
//! ```
//!
//! The rules, which `docs/format.md` states for users:
//! - required: `dataset`, `model`, `method` (strings), `task_id` (string, or an integer meaning its
//!   decimal text), `success` (boolean, or 0/1), `steps` (array, may be empty);
//! - a step is rejected when `ok` is `false`; when `ok` is absent or null, it is rejected when
//!   `error` is present and not `null`, `false`, `""`, `[]` or `{}`;
//! - `label` (on a step, or at rollout level for a no-tool rollout) is one of the five labels;
//! - empty `steps` is one terminal no-tool action (`T = 1`), executable iff `no_tool_ok`;
//! - `cost` holds optional non-negative numbers `tokens`, `latency_s`, `usd`;
//! - unknown fields (`args`, …) are ignored here and stay readable in the file;
//! - `meta.termination_reason` (a string), when present, lets a reader exclude the rollout by
//!   termination reason, as for the tau2 files it was converted from;
//! - a step with `"check": "schema"` was rejected by a tool-schema check (it counts as a schema
//!   first failure rather than an environment one).
//!
//! Tool definitions, for the tool-schema prefix checks ([`super::schema_check`]):
//! - a line holding `tools` and neither `dataset` nor `steps`, e.g. `{"tools": [{"type":
//!   "function", "function": {"name": …, "parameters": {…}}}]}`, sets the tools of the rollouts
//!   that follow it in the file (`{"tools": null}` clears them);
//! - a rollout's own `tools` field overrides them for that rollout;
//! - with tools known (and checks on), each step is checked before its `ok`/`error`: a tool that
//!   is not exposed or arguments (`args`) that do not fit the tool's `parameters` reject the step
//!   with label `schema`. A step without `tool` is not checked; without `args`, only exposure is.
//!
//! The wire types below mirror the JSON; [`parse_line`] validates them into a [`ParsedRollout`].
//! Steps are folded as they stream past (the visitor keeps only the first failure), so a
//! rollout with 100,000 steps costs no more memory than one with three; the schema checks parse
//! the steps a second time, one step at a time, only when tools are known.

mod reader;
#[cfg(test)]
mod tests;
mod wire;

use std::fmt;
use std::sync::Arc;

pub(crate) use reader::{emit, emit_line, Canonical};
use wire::{failure_of_step, failure_source, is_rejected, parse_wire, CheckedStep};

use super::scan::{elements, members, skip_ws};
use super::{FailureSource, ToolSet};
use crate::label::StepContext;
use crate::rollout::{Label, LabelSource};
pub use crate::rollout::{ParsedFailure, ParsedRollout};

/// Longest error text kept per rollout; the full text stays in the file.
pub const MAX_ERROR_CHARS: usize = 500;

/// A step's arguments longer than this (file contents, not references) are not read for the
/// label rules' context.
pub const MAX_CONTEXT_ARGS_BYTES: usize = 64 * 1024;

/// Why a line was not accepted. Messages say what to change.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LineError {
    /// The line is not valid UTF-8.
    InvalidUtf8 { at_byte: usize },
    /// JSON syntax, a missing field or a field of the wrong type (serde's message, with the path).
    Json(String),
    /// A field has the right type but a forbidden value.
    Invalid { field: String, problem: String },
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::InvalidUtf8 { at_byte } => write!(
                f,
                "not valid UTF-8 (first bad byte at column {}); save the file as UTF-8",
                at_byte + 1
            ),
            LineError::Json(m) => f.write_str(m),
            LineError::Invalid { field, problem } => write!(f, "{field}: {problem}"),
        }
    }
}

/// Parses one non-blank line of canonical JSONL (a rollout; a `tools` line is an error here).
pub fn parse_line(bytes: &[u8]) -> Result<ParsedRollout, LineError> {
    parse_wire(bytes).map(|(parsed, _)| parsed)
}

/// What a line of canonical JSONL holds, read with [`parse_line_ext`].
// One value per line, consumed at once: boxing the rollout would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum CanonicalLine {
    /// A top-level tools line: the tools of the rollouts that follow (`None` clears them).
    Tools(Option<Arc<ToolSet>>),
    Rollout(ParsedRollout, LineExtra),
}

/// What a rollout line says beyond the [`ParsedRollout`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LineExtra {
    /// Where the first failure came from (`None` when every step executed).
    pub failure_source: Option<FailureSource>,
    /// `meta.termination_reason`.
    pub termination_reason: Option<String>,
    /// `meta.success_rule`: how the reader that wrote the line decided success (ToolSandbox's
    /// similarity threshold), stated under the report's table.
    pub success_rule: Option<String>,
    /// `meta.model_path`: the local path an importer read the model's name from
    /// ([`crate::formats::names`]), shown where the model's name is.
    pub model_path: Option<String>,
    /// The line has its own `tools` field.
    pub has_tools: bool,
    /// Tools of the line whose schemas could not be compiled (name, reason).
    pub unusable_tools: Vec<(String, String)>,
}

/// The state a file's lines share: the tools in force and whether to check steps against them.
#[derive(Clone, Debug)]
pub struct LineContext {
    /// Tools set by the file's last `tools` line.
    pub tools: Option<Arc<ToolSet>>,
    pub schema_checks: bool,
    /// The last per-rollout `tools` value and its compiled set: lines often repeat the same
    /// tools, and compiling schemas per line would dominate reading time.
    cache: Option<(Vec<u8>, Arc<ToolSet>)>,
}

impl Default for LineContext {
    fn default() -> Self {
        LineContext {
            tools: None,
            schema_checks: true,
            cache: None,
        }
    }
}

impl LineContext {
    pub fn new(schema_checks: bool) -> Self {
        LineContext {
            schema_checks,
            ..LineContext::default()
        }
    }
}

/// Parses one non-blank line of canonical JSONL: a rollout, with the tool-schema checks of
/// `ctx`, or a tools line.
pub fn parse_line_ext(bytes: &[u8], ctx: &mut LineContext) -> Result<CanonicalLine, LineError> {
    parse_line_prepared(bytes, ctx, None)
}

/// The part of reading a canonical line that depends on the line alone (its JSON parse and
/// validation), done ahead of the line's turn by [`prepare_line`].
pub type Prepared = Result<(ParsedRollout, LineExtra), LineError>;

/// The context-free reading of a non-blank line, which any thread may compute in any order;
/// `None` for a line that mentions `tools`, whose reading depends on the file's tools in force
/// and is left to its turn. [`parse_line_prepared`] finishes it in line order.
pub fn prepare_line(bytes: &[u8]) -> Option<Prepared> {
    (!contains(bytes, b"\"tools\"")).then(|| parse_wire(bytes))
}

/// [`parse_line_ext`] given the line's [`prepare_line`] result, if it was computed: the result
/// is the same either way (the prepared part is a pure function of the line's bytes).
pub fn parse_line_prepared(
    bytes: &[u8],
    ctx: &mut LineContext,
    prepared: Option<Prepared>,
) -> Result<CanonicalLine, LineError> {
    // Only lines that mention tools need their members located; most lines skip this.
    let mut line_tools: Option<Arc<ToolSet>> = None;
    let mut unusable = Vec::new();
    let mut has_tools = false;
    if prepared.is_none() && contains(bytes, b"\"tools\"") && std::str::from_utf8(bytes).is_ok() {
        let open = skip_ws(bytes, 0);
        if bytes.get(open) == Some(&b'{') {
            let (members, _) = members(bytes, open);
            let find = |k: &str| members.iter().find(|m| m.key == k);
            if let Some(Ok(span)) = find("tools").map(|m| m.value.clone()) {
                let raw = &bytes[span.start..span.end];
                let rollout_line = find("dataset").is_some() || find("steps").is_some();
                if !ctx.schema_checks {
                    // Checks are off: the definitions are not read, so they cannot fail a line.
                    if !rollout_line {
                        return Ok(CanonicalLine::Tools(None));
                    }
                    let (parsed, mut extra) = parse_wire(bytes)?;
                    extra.has_tools = true;
                    return Ok(CanonicalLine::Rollout(parsed, extra));
                }
                let cached = ctx
                    .cache
                    .as_ref()
                    .filter(|(c, _)| c.as_slice() == raw)
                    .map(|(_, set)| Arc::clone(set));
                let set = if raw == b"null" {
                    None
                } else if cached.is_some() {
                    cached
                } else {
                    let value: serde_json::Value = serde_json::from_slice(raw)
                        .map_err(|e| LineError::Json(format!("tools: {e}")))?;
                    let set = ToolSet::from_json(&value).map_err(|e| LineError::Invalid {
                        field: "tools".to_string(),
                        problem: e.0,
                    })?;
                    let set = Arc::new(set);
                    ctx.cache = Some((raw.to_vec(), Arc::clone(&set)));
                    Some(set)
                };
                if !rollout_line {
                    return Ok(CanonicalLine::Tools(set));
                }
                has_tools = true;
                if let Some(s) = &set {
                    unusable.clone_from(&s.unusable);
                }
                line_tools = set;
            }
        }
    }
    let (mut parsed, mut extra) = match prepared {
        Some(prepared) => prepared?,
        None => parse_wire(bytes)?,
    };
    extra.has_tools = has_tools;
    extra.unusable_tools = unusable;
    let tools = if has_tools {
        line_tools
    } else {
        ctx.tools.clone()
    };
    if let (true, Some(tools), false) = (ctx.schema_checks, tools, parsed.no_tool) {
        schema_fold(bytes, &tools, &mut parsed, &mut extra)?;
    }
    Ok(CanonicalLine::Rollout(parsed, extra))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Re-reads the steps of a line with the schema check in front of each step's own verdict.
fn schema_fold(
    bytes: &[u8],
    tools: &ToolSet,
    parsed: &mut ParsedRollout,
    extra: &mut LineExtra,
) -> Result<(), LineError> {
    let open = skip_ws(bytes, 0);
    let (members, _) = members(bytes, open);
    let Some(steps) = members.iter().find(|m| m.key == "steps") else {
        return Ok(());
    };
    let mut first: Option<(u32, ParsedFailure, FailureSource)> = None;
    let mut context = StepContext::new();
    for (i, span) in elements(bytes, steps.start).enumerate() {
        let span = span.map_err(|e| LineError::Json(format!("steps: {e}")))?;
        let step: CheckedStep = serde_json::from_slice(&bytes[span.start..span.end])
            .map_err(|e| LineError::Json(format!("steps[{i}]: {e}")))?;
        let depth = i as u32 + 1;
        let schema = step
            .tool
            .as_deref()
            .and_then(|t| tools.check(t, step.args.as_ref()).err());
        if let Some(message) = schema {
            let error = truncate_chars(message, MAX_ERROR_CHARS);
            let failure = ParsedFailure {
                label: Some(Label::Schema),
                environment: false,
                source: Some(LabelSource::SchemaCheck),
                reference: context.reference(step.args.as_ref(), Some(&error)),
                args: (step.args.as_ref()).map(|a| truncate_chars(a.to_string(), MAX_ERROR_CHARS)),
                error: Some(error),
                tool: step.tool,
            };
            first = Some((depth, failure, FailureSource::SchemaCheck));
            break;
        }
        if is_rejected(step.ok, step.error.as_ref()) {
            let source = failure_source(step.check.as_deref());
            let mut failure = failure_of_step(
                step.label,
                step.label_source.as_deref(),
                step.error,
                step.tool,
                step.args.as_ref(),
                &context,
            );
            if source == FailureSource::SchemaCheck && failure.label.is_some() {
                failure.source = Some(LabelSource::SchemaCheck);
            }
            first = Some((depth, failure, source));
            break;
        }
        if let Some(args) = &step.args {
            context.observe(args);
        }
    }
    match first {
        Some((depth, failure, source)) => {
            parsed.fed = depth;
            parsed.failure = Some(failure);
            extra.failure_source = Some(source);
        }
        None => {
            parsed.fed = parsed.horizon + 1;
            parsed.failure = None;
            extra.failure_source = None;
        }
    }
    Ok(())
}

/// Whether a step's `error` value rejects the step (when `ok` is absent): anything but `null`,
/// `false`, `""`, `[]` or `{}`. The scorer and the step viewer share this rule.
pub fn error_signals_rejection(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Null | serde_json::Value::Bool(false) => false,
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        serde_json::Value::Object(o) => !o.is_empty(),
        serde_json::Value::Bool(true) | serde_json::Value::Number(_) => true,
    }
}

/// The text to show for a rejecting `error` value: strings as they are, other values as compact
/// JSON, nothing for a bare `true` or a non-rejecting value.
pub fn error_text(value: serde_json::Value) -> Option<String> {
    match value {
        v if !error_signals_rejection(&v) => None,
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Bool(true) => None,
        other => Some(other.to_string()),
    }
}

/// Cuts a text to `max` characters, marking the cut with `…`.
pub(crate) fn truncate_chars(mut s: String, max: usize) -> String {
    if let Some((cut, _)) = s.char_indices().nth(max) {
        s.truncate(cut);
        s.push('…');
    }
    s
}
