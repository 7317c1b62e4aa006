//! The wire types of a canonical line: serde mirrors of the JSON that validate into a
//! [`ParsedRollout`], folding the steps as they stream past.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::MAX_CONTEXT_ARGS_BYTES;
use super::{
    error_signals_rejection, error_text, truncate_chars, LineError, LineExtra, ParsedFailure,
    ParsedRollout, MAX_ERROR_CHARS,
};
use crate::formats::FailureSource;
use crate::label::{StepContext, Verdict};
use crate::rollout::{Cost, LabelSource};

/// A step as the schema check reads it: the verdict fields and the call itself.
#[derive(Deserialize)]
pub(super) struct CheckedStep {
    #[serde(default)]
    pub(super) tool: Option<String>,
    #[serde(default)]
    pub(super) args: Option<serde_json::Value>,
    #[serde(default)]
    pub(super) ok: Option<bool>,
    #[serde(default)]
    pub(super) error: Option<WireError>,
    #[serde(default)]
    pub(super) label: Option<WireLabel>,
    #[serde(default)]
    pub(super) label_source: Option<String>,
    #[serde(default)]
    pub(super) check: Option<String>,
}

/// The failure of a rejected step, with the label context of the accepted steps before it.
pub(super) fn failure_of_step(
    label: Option<WireLabel>,
    label_source: Option<&str>,
    error: Option<WireError>,
    tool: Option<String>,
    args: Option<&serde_json::Value>,
    context: &StepContext,
) -> ParsedFailure {
    let error = error.and_then(|e| e.text);
    let verdict = label.map(|l| l.0);
    ParsedFailure {
        label: match verdict {
            Some(Verdict::Label(l)) => Some(l),
            _ => None,
        },
        environment: verdict == Some(Verdict::Environment),
        // A label written by an earlier `convert` keeps the provenance it recorded.
        source: verdict.map(|_| {
            label_source
                .and_then(LabelSource::parse)
                .unwrap_or(LabelSource::Given)
        }),
        reference: context.reference(args, error.as_deref()),
        args: args.map(|a| truncate_chars(a.to_string(), MAX_ERROR_CHARS)),
        error,
        tool,
    }
}

pub(super) fn failure_source(check: Option<&str>) -> FailureSource {
    if check == Some("schema") {
        FailureSource::SchemaCheck
    } else {
        FailureSource::Environment
    }
}

pub(super) fn is_rejected(ok: Option<bool>, error: Option<&WireError>) -> bool {
    match ok {
        Some(ok) => !ok,
        None => error.is_some_and(|e| e.present),
    }
}

pub(super) fn parse_wire(bytes: &[u8]) -> Result<(ParsedRollout, LineExtra), LineError> {
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
    // Read without tracking the path first (an allocation per key); only a failure is read
    // again with it, for the message (as `formats::object::read_object`).
    let mut de = serde_json::Deserializer::from_slice(bytes);
    if let Ok(wire) = WireRollout::deserialize(&mut de) {
        if de.end().is_ok() {
            return wire.validate();
        }
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
    label_source: Option<String>,
    /// The rollout crashed (an infrastructure or provider error), with the error's text.
    #[serde(default)]
    crash: Option<String>,
    /// The run the rollout belongs to (a run folder, a file holding a run).
    #[serde(default)]
    run: Option<String>,
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
        let crash = self.crash.map(|c| truncate_chars(c, MAX_ERROR_CHARS));
        if crash.is_some() && self.success.0 {
            return Err(invalid(
                "crash",
                "a rollout that crashed cannot be successful: set success to false or remove crash",
            ));
        }
        let steps = self.steps;
        let no_tool = steps.count == 0;
        let failure_source = match (&steps.first_failure, no_tool) {
            (Some(_), false) => Some(failure_source(steps.first_check.as_deref())),
            _ => None,
        };
        let (horizon, fed, failure) = if no_tool {
            // A rollout that stopped before any tool call is one terminal no-tool action (T = 1),
            // executable only where the benchmark allows finishing without tools.
            if let Some(text) = &crash {
                // Crashed before the agent acted: the environment's fault, whatever no_tool_ok says.
                let failure = ParsedFailure {
                    label: None,
                    environment: true,
                    source: Some(LabelSource::Crash),
                    error: Some(text.clone()),
                    tool: None,
                    args: None,
                    reference: Default::default(),
                };
                (1, 1, Some(failure))
            } else if self.no_tool_ok.unwrap_or(false) {
                (1, 2, None)
            } else {
                let failure = failure_of_step(
                    self.label,
                    self.label_source.as_deref(),
                    None,
                    None,
                    None,
                    &StepContext::new(),
                );
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
        let mut failure = failure;
        if let (Some(f), Some(FailureSource::SchemaCheck)) = (failure.as_mut(), failure_source) {
            if f.label.is_some() {
                f.source = Some(LabelSource::SchemaCheck);
            }
        }
        let extra = LineExtra {
            failure_source,
            termination_reason: self
                .meta
                .as_ref()
                .and_then(|m| m.termination_reason.clone()),
            model_path: self.meta.as_ref().and_then(|m| m.model_path.clone()),
            success_rule: self.meta.and_then(|m| m.success_rule),
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
            crashed: crash.is_some(),
            run: self.run.filter(|r| !r.trim().is_empty()),
        };
        Ok((parsed, extra))
    }
}

/// `meta`: any JSON value; only the strings `termination_reason`, `success_rule` and
/// `model_path` of an object are read, anything else is ignored (meta is free-form).
#[derive(Default)]
struct WireMeta {
    termination_reason: Option<String>,
    success_rule: Option<String>,
    model_path: Option<String>,
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
                let mut success_rule = None;
                let mut model_path = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "termination_reason" {
                        let v = map.next_value::<serde_json::Value>()?;
                        termination_reason = v.as_str().map(str::to_string);
                    } else if key == "success_rule" {
                        let v = map.next_value::<serde_json::Value>()?;
                        success_rule = v.as_str().map(str::to_string);
                    } else if key == "model_path" {
                        let v = map.next_value::<serde_json::Value>()?;
                        model_path = v.as_str().map(str::to_string);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(WireMeta {
                    termination_reason,
                    success_rule,
                    model_path,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WireMeta, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(WireMeta::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<WireMeta, E> {
                Ok(WireMeta::default())
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

/// A first-failure label name: one of the paper's five, or `environment` (a fault that was not
/// the agent's).
pub(super) struct WireLabel(pub(super) Verdict);

impl<'de> Deserialize<'de> for WireLabel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Verdict::parse(&name).map(WireLabel).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown label {name:?}; expected one of schema, dependency, precondition, \
                 state, information, environment (or leave it out)"
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

impl Expecting for WireStep<'_> {
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
                // The label context of the accepted steps so far (bounded: StepContext).
                let mut context = StepContext::new();
                while let Some(Object(step)) = seq.next_element::<Object<WireStep<'de>>>()? {
                    steps.count = steps
                        .count
                        .checked_add(1)
                        .ok_or_else(|| de::Error::custom("more than 2^32 steps"))?;
                    if steps.first_failure.is_some() {
                        continue;
                    }
                    // Arguments that do not read as values (a huge number) give no context.
                    let args = step
                        .args
                        .filter(|a| a.get().len() <= MAX_CONTEXT_ARGS_BYTES)
                        .and_then(|a| serde_json::from_str::<serde_json::Value>(a.get()).ok());
                    if step.rejected() {
                        steps.first_check = step.check;
                        let failure = failure_of_step(
                            step.label,
                            step.label_source.as_deref(),
                            step.error,
                            step.tool,
                            args.as_ref(),
                            &context,
                        );
                        steps.first_failure = Some((steps.count, failure));
                    } else if let Some(args) = &args {
                        context.observe(args);
                    }
                }
                Ok(steps)
            }
        }
        d.deserialize_seq(V)
    }
}

#[derive(Deserialize)]
struct WireStep<'a> {
    #[serde(default)]
    tool: Option<String>,
    /// Not scored; read for the label rules' context, borrowed raw: only the steps up to the
    /// first failure are read into values (short ones, see [`MAX_CONTEXT_ARGS_BYTES`]), and a
    /// number no double holds (`1e400`) is legal here and must not fail the line. Named, too,
    /// so that a repeated `args` is refused like any repeated key (the rollout browser shows
    /// the arguments, and two would be ambiguous).
    #[serde(default, borrow)]
    args: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    label: Option<WireLabel>,
    /// Where `label` came from, as an earlier `convert` recorded it.
    #[serde(default)]
    label_source: Option<String>,
    #[serde(default)]
    check: Option<String>,
}

impl WireStep<'_> {
    fn rejected(&self) -> bool {
        is_rejected(self.ok, self.error.as_ref())
    }
}

/// A step's `error` field: any JSON value. It signals a rejection unless it is `null`, `false`
/// or empty; its text is kept (strings as they are, other values as compact JSON).
pub(super) struct WireError {
    pub(super) present: bool,
    pub(super) text: Option<String>,
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
