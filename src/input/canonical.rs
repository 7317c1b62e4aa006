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
//! Tool definitions, for the tool-schema prefix checks ([`crate::import::schema_check`]):
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

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::import::{FailureSource, ToolSet};
use crate::rollout::{Cost, Label};

/// Longest error text kept per rollout; the full text stays in the file.
pub const MAX_ERROR_CHARS: usize = 500;

/// A rollout line, validated but not yet interned.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedRollout {
    pub dataset: String,
    pub task_id: String,
    pub model: String,
    pub method: String,
    pub success: bool,
    pub horizon: u32,
    pub fed: u32,
    pub failure: Option<ParsedFailure>,
    pub cost: Cost,
    /// The agent made no tool call (`steps` empty): one terminal no-tool action, `T = 1`.
    pub no_tool: bool,
}

/// The first failing step of a parsed rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedFailure {
    pub label: Option<Label>,
    pub error: Option<String>,
    pub tool: Option<String>,
}

/// Why a line was not accepted. Messages say what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineExtra {
    /// Where the first failure came from (`None` when every step executed).
    pub failure_source: Option<FailureSource>,
    /// `meta.termination_reason`.
    pub termination_reason: Option<String>,
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
    // Only lines that mention tools need their members located; most lines skip this.
    let mut line_tools: Option<Arc<ToolSet>> = None;
    let mut unusable = Vec::new();
    let mut has_tools = false;
    if contains(bytes, b"\"tools\"") && std::str::from_utf8(bytes).is_ok() {
        let open = crate::import::scan_skip_ws(bytes, 0);
        if bytes.get(open) == Some(&b'{') {
            let (members, _) = crate::import::scan_members(bytes, open);
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
    let (mut parsed, mut extra) = parse_wire(bytes)?;
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
    let open = crate::import::scan_skip_ws(bytes, 0);
    let (members, _) = crate::import::scan_members(bytes, open);
    let Some(steps) = members.iter().find(|m| m.key == "steps") else {
        return Ok(());
    };
    let mut first: Option<(u32, ParsedFailure, FailureSource)> = None;
    for (i, span) in crate::import::scan_elements(bytes, steps.start).enumerate() {
        let span = span.map_err(|e| LineError::Json(format!("steps: {e}")))?;
        let step: CheckedStep = serde_json::from_slice(&bytes[span.start..span.end])
            .map_err(|e| LineError::Json(format!("steps[{i}]: {e}")))?;
        let depth = i as u32 + 1;
        let schema = step
            .tool
            .as_deref()
            .and_then(|t| tools.check(t, step.args.as_ref()).err());
        if let Some(message) = schema {
            let failure = ParsedFailure {
                label: Some(Label::Schema),
                error: Some(truncate_chars(message, MAX_ERROR_CHARS)),
                tool: step.tool,
            };
            first = Some((depth, failure, FailureSource::SchemaCheck));
            break;
        }
        if is_rejected(step.ok, step.error.as_ref()) {
            let source = failure_source(step.check.as_deref());
            let failure = ParsedFailure {
                label: step.label.map(|l| l.0),
                error: step.error.and_then(|e| e.text),
                tool: step.tool,
            };
            first = Some((depth, failure, source));
            break;
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

/// A step as the schema check reads it: the verdict fields and the call itself.
#[derive(Deserialize)]
struct CheckedStep {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    args: Option<serde_json::Value>,
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    label: Option<WireLabel>,
    #[serde(default)]
    check: Option<String>,
}

fn failure_source(check: Option<&str>) -> FailureSource {
    if check == Some("schema") {
        FailureSource::SchemaCheck
    } else {
        FailureSource::Environment
    }
}

fn is_rejected(ok: Option<bool>, error: Option<&WireError>) -> bool {
    match ok {
        Some(ok) => !ok,
        None => error.is_some_and(|e| e.present),
    }
}

fn parse_wire(bytes: &[u8]) -> Result<(ParsedRollout, LineExtra), LineError> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(LineError::InvalidUtf8 {
            at_byte: e.valid_up_to(),
        });
    }
    // serde would read a JSON array into the struct positionally; say plainly what a line must be.
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(_) => {
            return Err(LineError::Json(
                "expected a JSON object (one rollout per line)".to_string(),
            ))
        }
        None => return Err(LineError::Json("empty line".to_string())),
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let wire: WireRollout = serde_path_to_error::deserialize(&mut de).map_err(json_error)?;
    de.end().map_err(|e| LineError::Json(e.to_string()))?;
    wire.validate()
}

fn json_error(e: serde_path_to_error::Error<serde_json::Error>) -> LineError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    let message = inner.to_string();
    // serde names a missing field itself; a path of "." adds nothing.
    if path == "." || path.is_empty() || inner.is_syntax() || inner.is_eof() {
        LineError::Json(message)
    } else {
        LineError::Json(format!("{path}: {message}"))
    }
}

#[derive(Deserialize)]
struct WireRollout {
    dataset: String,
    task_id: WireTaskId,
    model: String,
    method: String,
    success: WireSuccess,
    steps: WireSteps,
    #[serde(default)]
    no_tool_ok: Option<bool>,
    #[serde(default)]
    label: Option<WireLabel>,
    #[serde(default)]
    cost: Option<Object<WireCost>>,
    #[serde(default)]
    meta: Option<WireMeta>,
}

impl WireRollout {
    fn validate(self) -> Result<(ParsedRollout, LineExtra), LineError> {
        for (name, value) in [
            ("dataset", &self.dataset),
            ("model", &self.model),
            ("method", &self.method),
        ] {
            if value.trim().is_empty() {
                return Err(invalid(name, "must not be empty"));
            }
        }
        if self.task_id.0.trim().is_empty() {
            return Err(invalid("task_id", "must not be empty"));
        }
        let cost = self.cost.map(|c| c.0).unwrap_or_default().validate()?;
        let steps = self.steps;
        let no_tool = steps.count == 0;
        let failure_source = match (&steps.first_failure, no_tool) {
            (Some(_), false) => Some(failure_source(steps.first_check.as_deref())),
            _ => None,
        };
        let (horizon, fed, failure) = if no_tool {
            // A rollout that stopped before any tool call is one terminal no-tool action (T = 1),
            // executable only where the benchmark allows finishing without tools.
            if self.no_tool_ok.unwrap_or(false) {
                (1, 2, None)
            } else {
                let failure = ParsedFailure {
                    label: self.label.map(|l| l.0),
                    error: None,
                    tool: None,
                };
                (1, 1, Some(failure))
            }
        } else {
            match steps.first_failure {
                Some((depth, failure)) => (steps.count, depth, Some(failure)),
                None => (steps.count, steps.count + 1, None),
            }
        };
        let failure_source = if no_tool {
            // A no-tool rollout's single action is judged by the log, not by a tool schema.
            failure.as_ref().map(|_| FailureSource::Environment)
        } else {
            failure_source
        };
        let extra = LineExtra {
            failure_source,
            termination_reason: self.meta.and_then(|m| m.termination_reason),
            ..LineExtra::default()
        };
        let parsed = ParsedRollout {
            dataset: self.dataset,
            task_id: self.task_id.0,
            model: self.model,
            method: self.method,
            success: self.success.0,
            horizon,
            fed,
            failure,
            cost,
            no_tool,
        };
        Ok((parsed, extra))
    }
}

/// `meta`: any JSON value; only a string `termination_reason` of an object is read, anything
/// else is ignored (meta is free-form).
struct WireMeta {
    termination_reason: Option<String>,
}

impl<'de> Deserialize<'de> for WireMeta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WireMeta;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireMeta, A::Error> {
                let mut termination_reason = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "termination_reason" {
                        let v = map.next_value::<serde_json::Value>()?;
                        termination_reason = v.as_str().map(str::to_string);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(WireMeta { termination_reason })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WireMeta, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(WireMeta {
                    termination_reason: None,
                })
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<WireMeta, E> {
                Ok(WireMeta {
                    termination_reason: None,
                })
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<WireMeta, E> {
                self.visit_bool(false)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<WireMeta, E> {
                self.visit_bool(false)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<WireMeta, E> {
                self.visit_bool(false)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<WireMeta, E> {
                self.visit_bool(false)
            }
            fn visit_unit<E: de::Error>(self) -> Result<WireMeta, E> {
                self.visit_bool(false)
            }
        }
        d.deserialize_any(V)
    }
}

fn invalid(field: &str, problem: &str) -> LineError {
    LineError::Invalid {
        field: field.to_string(),
        problem: problem.to_string(),
    }
}

/// A task id: a string, or an integer standing for its decimal text.
struct WireTaskId(String);

impl<'de> Deserialize<'de> for WireTaskId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = WireTaskId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<WireTaskId, E> {
                Ok(WireTaskId(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<WireTaskId, E> {
                Ok(WireTaskId(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<WireTaskId, E> {
                Ok(WireTaskId(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<WireTaskId, E> {
                Ok(WireTaskId(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Final success: `true`/`false`, or the integers 1/0.
struct WireSuccess(bool);

impl<'de> Deserialize<'de> for WireSuccess {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = WireSuccess;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false, 1 or 0")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<WireSuccess, E> {
                Ok(WireSuccess(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<WireSuccess, E> {
                match v {
                    0 => Ok(WireSuccess(false)),
                    1 => Ok(WireSuccess(true)),
                    _ => Err(E::invalid_value(de::Unexpected::Unsigned(v), &self)),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<WireSuccess, E> {
                Err(E::invalid_value(de::Unexpected::Signed(v), &self))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<WireSuccess, E> {
                Err(E::invalid_value(de::Unexpected::Float(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// A first-failure label name.
struct WireLabel(Label);

impl<'de> Deserialize<'de> for WireLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Label::parse(&name).map(WireLabel).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown label {name:?}; expected one of schema, dependency, precondition, \
                 state, information (or leave it out)"
            ))
        })
    }
}

/// A struct that must be written as a JSON object. serde's derived structs also accept an array
/// of their fields in order, which would read `[1]` as `{"tokens": 1}`; a log line is never meant
/// that way, so an array is refused.
struct Object<T>(T);

impl<'de, T: Deserialize<'de> + Expecting> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Expecting> Visitor<'de> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData)).map(Object)
    }
}

/// What a message says was expected instead.
trait Expecting {
    const EXPECTING: &'static str;
}

impl Expecting for WireCost {
    const EXPECTING: &'static str = "an object {tokens, latency_s, usd}";
}

impl Expecting for WireStep {
    const EXPECTING: &'static str = "a step object {tool, args, ok, error, label}";
}

#[derive(Default, Deserialize)]
struct WireCost {
    #[serde(default)]
    tokens: Option<f64>,
    #[serde(default)]
    latency_s: Option<f64>,
    #[serde(default)]
    usd: Option<f64>,
}

impl WireCost {
    fn validate(self) -> Result<Cost, LineError> {
        for (name, value) in [
            ("cost.tokens", self.tokens),
            ("cost.latency_s", self.latency_s),
            ("cost.usd", self.usd),
        ] {
            if let Some(v) = value {
                if !v.is_finite() || v < 0.0 {
                    return Err(LineError::Invalid {
                        field: name.to_string(),
                        problem: format!("must be a non-negative number, found {v}"),
                    });
                }
            }
        }
        Ok(Cost {
            tokens: self.tokens,
            latency_s: self.latency_s,
            usd: self.usd,
        })
    }
}

/// The steps array, folded while it streams: its length, its first failure and that step's
/// `check` marker.
struct WireSteps {
    count: u32,
    first_failure: Option<(u32, ParsedFailure)>,
    first_check: Option<String>,
}

impl<'de> Deserialize<'de> for WireSteps {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WireSteps;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of steps")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WireSteps, A::Error> {
                let mut steps = WireSteps {
                    count: 0,
                    first_failure: None,
                    first_check: None,
                };
                while let Some(Object(step)) = seq.next_element::<Object<WireStep>>()? {
                    steps.count = steps
                        .count
                        .checked_add(1)
                        .ok_or_else(|| de::Error::custom("more than 2^32 steps"))?;
                    if steps.first_failure.is_none() && step.rejected() {
                        steps.first_check = step.check;
                        let failure = ParsedFailure {
                            label: step.label.map(|l| l.0),
                            error: step.error.and_then(|e| e.text),
                            tool: step.tool,
                        };
                        steps.first_failure = Some((steps.count, failure));
                    }
                }
                Ok(steps)
            }
        }
        d.deserialize_seq(V)
    }
}

#[derive(Deserialize)]
struct WireStep {
    #[serde(default)]
    tool: Option<String>,
    /// Not scored, but named so that a repeated `args` is refused like any repeated key (the
    /// rollout browser shows the arguments, and two would be ambiguous).
    #[serde(default)]
    #[allow(dead_code)]
    args: Option<de::IgnoredAny>,
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    label: Option<WireLabel>,
    #[serde(default)]
    check: Option<String>,
}

impl WireStep {
    fn rejected(&self) -> bool {
        is_rejected(self.ok, self.error.as_ref())
    }
}

/// A step's `error` field: any JSON value. It signals a rejection unless it is `null`, `false`
/// or empty; its text is kept (strings as they are, other values as compact JSON).
struct WireError {
    present: bool,
    text: Option<String>,
}

impl<'de> Deserialize<'de> for WireError {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(WireError {
            present: error_signals_rejection(&value),
            text: error_text(value).map(|t| truncate_chars(t, MAX_ERROR_CHARS)),
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> ParsedRollout {
        parse_line(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn err(line: &str) -> String {
        match parse_line(line.as_bytes()) {
            Ok(r) => panic!("accepted {line}: {r:?}"),
            Err(e) => e.to_string(),
        }
    }

    const HEAD: &str = r#""dataset":"d","task_id":"t","model":"m","method":"x""#;

    #[test]
    fn the_issue_example_parses() {
        let r = ok(
            r#"{"dataset": "bfcl-v3", "task_id": "multi_turn_base_12", "model": "gpt-4.1", "method": "Dual-Loop",
 "success": true,
 "steps": [{"tool": "cd", "args": {"folder": "docs"}, "ok": true},
           {"tool": "mv", "args": {"source": "a"}, "ok": false, "error": "No such file", "label": "precondition"}],
 "no_tool_ok": false,
 "cost": {"tokens": 5312, "latency_s": 12.4},
 "meta": {"category": "multi_turn_base"}}"#,
        );
        assert_eq!((r.horizon, r.fed, r.success), (2, 2, true));
        let f = r.failure.unwrap();
        assert_eq!(f.label, Some(Label::Precondition));
        assert_eq!(f.error.as_deref(), Some("No such file"));
        assert_eq!(f.tool.as_deref(), Some("mv"));
        assert_eq!(r.cost.tokens, Some(5312.0));
        assert_eq!(r.cost.latency_s, Some(12.4));
        assert_eq!(r.cost.usd, None);
    }

    #[test]
    fn rejection_rules() {
        let fed = |steps: &str| ok(&format!(r#"{{{HEAD},"success":0,"steps":{steps}}}"#)).fed;
        assert_eq!(fed(r#"[{"ok":true},{"ok":true}]"#), 3);
        assert_eq!(fed(r#"[{"ok":false},{"ok":true}]"#), 1);
        assert_eq!(fed(r#"[{},{"error":"boom"}]"#), 2);
        for quiet in [r#"null"#, r#"false"#, r#""""#, r#"[]"#, r#"{}"#] {
            assert_eq!(fed(&format!(r#"[{{"error":{quiet}}}]"#)), 2, "{quiet}");
        }
        for loud in [r#"true"#, r#"1"#, r#""x""#, r#"{"code":3}"#, r#"["x"]"#] {
            assert_eq!(fed(&format!(r#"[{{"error":{loud}}}]"#)), 1, "{loud}");
        }
        // An explicit ok wins over an error field.
        assert_eq!(fed(r#"[{"ok":true,"error":"warning"}]"#), 2);
        assert_eq!(fed(r#"[{"ok":null,"error":"e"}]"#), 1);
    }

    #[test]
    fn no_tool_rollouts() {
        let r = ok(&format!(
            r#"{{{HEAD},"success":true,"steps":[],"no_tool_ok":true}}"#
        ));
        assert_eq!((r.horizon, r.fed, r.failure), (1, 2, None));
        let r = ok(&format!(
            r#"{{{HEAD},"success":false,"steps":[],"label":"information"}}"#
        ));
        assert_eq!((r.horizon, r.fed), (1, 1));
        assert_eq!(r.failure.unwrap().label, Some(Label::Information));
    }

    #[test]
    fn integer_task_ids_and_success() {
        let r =
            ok(r#"{"dataset":"d","task_id":42,"model":"m","method":"x","success":1,"steps":[]}"#);
        assert_eq!(r.task_id, "42");
        assert!(r.success);
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        assert!(
            err(r#"{"task_id":"t","model":"m","method":"x","success":true,"steps":[]}"#)
                .contains("missing field `dataset`")
        );
        assert!(err(&format!(r#"{{{HEAD},"success":2,"steps":[]}}"#)).contains("success"));
        assert!(err(&format!(r#"{{{HEAD},"success":0.5,"steps":[]}}"#)).contains("success"));
        assert!(err(&format!(r#"{{{HEAD},"success":-1,"steps":[]}}"#)).contains("success"));
        assert!(err(&format!(r#"{{{HEAD},"success":true,"steps":{{}}}}"#)).contains("steps"));
        let e = err(&format!(
            r#"{{{HEAD},"success":true,"steps":[{{"ok":true}},{{"ok":false,"label":"oops"}}]}}"#
        ));
        assert!(
            e.contains("steps[1].label") && e.contains("unknown label"),
            "{e}"
        );
        let e = err(&format!(
            r#"{{{HEAD},"success":true,"steps":[],"cost":{{"tokens":-3}}}}"#
        ));
        assert!(e.contains("cost.tokens"), "{e}");
        assert!(err(
            r#"{"dataset":"d","task_id":1.5,"model":"m","method":"x","success":true,"steps":[]}"#
        )
        .contains("task_id"));
        assert!(err(
            r#"{"dataset":"","task_id":"t","model":"m","method":"x","success":true,"steps":[]}"#
        )
        .contains("dataset"));
        assert!(err("[1,2]").contains("expected a JSON object"));
        assert!(err("{\"dataset\": ").contains("EOF"));
        assert!(matches!(
            parse_line(b"{\"dataset\":\"\xff\"}"),
            Err(LineError::InvalidUtf8 { at_byte: 12 })
        ));
    }

    #[test]
    fn long_error_texts_are_truncated() {
        let long = "é".repeat(MAX_ERROR_CHARS + 10);
        let r = ok(&format!(
            r#"{{{HEAD},"success":true,"steps":[{{"error":"{long}"}}]}}"#
        ));
        let text = r.failure.unwrap().error.unwrap();
        assert_eq!(text.chars().count(), MAX_ERROR_CHARS + 1);
        assert!(text.ends_with('…'));
    }

    #[test]
    fn tools_lines_and_schema_checks() {
        let mut ctx = LineContext::new(true);
        let tools = r#"{"tools": [{"name": "cd", "parameters": {"type": "object", "required": ["folder"]}}]}"#;
        match parse_line_ext(tools.as_bytes(), &mut ctx).unwrap() {
            CanonicalLine::Tools(Some(set)) => ctx.tools = Some(set),
            other => panic!("{other:?}"),
        }
        let line =
            format!(r#"{{{HEAD},"success":true,"steps":[{{"tool":"cd","args":{{}},"ok":true}}]}}"#);
        let CanonicalLine::Rollout(r, extra) = parse_line_ext(line.as_bytes(), &mut ctx).unwrap()
        else {
            panic!("not a rollout")
        };
        assert_eq!(
            (r.fed, extra.failure_source),
            (1, Some(FailureSource::SchemaCheck))
        );
        assert_eq!(r.failure.unwrap().label, Some(Label::Schema));
        // The plain parser is unchanged: the step executed.
        assert_eq!(parse_line(line.as_bytes()).unwrap().fed, 2);
        // Checks off: even malformed definitions are not read.
        let mut off = LineContext::new(false);
        let bad =
            format!(r#"{{{HEAD},"success":true,"tools":7,"steps":[{{"tool":"cd","ok":true}}]}}"#);
        assert!(matches!(
            parse_line_ext(bad.as_bytes(), &mut off),
            Ok(CanonicalLine::Rollout(..))
        ));
        let e = parse_line_ext(bad.as_bytes(), &mut ctx)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("tools:"), "{e}");
        assert!(matches!(
            parse_line_ext(br#"{"tools": 7}"#, &mut off),
            Ok(CanonicalLine::Tools(None))
        ));
        // meta.termination_reason is read; meta of any other shape is ignored.
        let m = format!(
            r#"{{{HEAD},"success":true,"steps":[],"meta":{{"termination_reason":"timeout","x":[1]}}}}"#
        );
        let CanonicalLine::Rollout(_, extra) = parse_line_ext(m.as_bytes(), &mut off).unwrap()
        else {
            panic!()
        };
        assert_eq!(extra.termination_reason.as_deref(), Some("timeout"));
        let m = format!(r#"{{{HEAD},"success":true,"steps":[],"meta":[1,{{"a":2}}]}}"#);
        assert!(parse_line(m.as_bytes()).is_ok());
    }
}
