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
//! - unknown fields (`meta`, `args`, …) are ignored here and stay readable in the file.
//!
//! The wire types below mirror the JSON; [`parse_line`] validates them into a [`ParsedRollout`].
//! Steps are folded as they stream past (the visitor keeps only the first failure), so a
//! rollout with 100,000 steps costs no more memory than one with three.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

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

/// Parses one non-blank line of canonical JSONL.
pub fn parse_line(bytes: &[u8]) -> Result<ParsedRollout, LineError> {
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
    cost: Option<WireCost>,
}

impl WireRollout {
    fn validate(self) -> Result<ParsedRollout, LineError> {
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
        let cost = self.cost.unwrap_or_default().validate()?;
        let steps = self.steps;
        let no_tool = steps.count == 0;
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
        Ok(ParsedRollout {
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
        })
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

/// The steps array, folded while it streams: its length and its first failure.
struct WireSteps {
    count: u32,
    first_failure: Option<(u32, ParsedFailure)>,
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
                };
                while let Some(step) = seq.next_element::<WireStep>()? {
                    steps.count = steps
                        .count
                        .checked_add(1)
                        .ok_or_else(|| de::Error::custom("more than 2^32 steps"))?;
                    if steps.first_failure.is_none() && step.rejected() {
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
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    label: Option<WireLabel>,
}

impl WireStep {
    fn rejected(&self) -> bool {
        match self.ok {
            Some(ok) => !ok,
            None => self.error.as_ref().is_some_and(|e| e.present),
        }
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
        let present = match &value {
            serde_json::Value::Null | serde_json::Value::Bool(false) => false,
            serde_json::Value::String(s) => !s.is_empty(),
            serde_json::Value::Array(a) => !a.is_empty(),
            serde_json::Value::Object(o) => !o.is_empty(),
            serde_json::Value::Bool(true) | serde_json::Value::Number(_) => true,
        };
        let text = match value {
            _ if !present => None,
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Bool(true) => None,
            other => Some(other.to_string()),
        };
        Ok(WireError {
            present,
            text: text.map(|t| truncate_chars(t, MAX_ERROR_CHARS)),
        })
    }
}

fn truncate_chars(mut s: String, max: usize) -> String {
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
}
