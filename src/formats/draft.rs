//! The common shape every importer produces: a [`Draft`] rollout with its steps, rendered into
//! one canonical JSONL line.
//!
//! Importers never build a [`crate::rollout::ParsedRollout`] themselves: the core reads
//! the rendered line back with the canonical parser. So `prefix-exec convert` and `prefix-exec
//! score` on the original file give the same numbers by construction — there is one reading of
//! a rollout, the canonical one.

use serde::Serialize;
use serde_json::{Map, Value};

use super::schema_check::ToolSet;
use super::ImportOptions;
use crate::rollout::Cost;

/// The environment's verdict on one call, as the log records it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Verdict {
    Accepted,
    /// Rejected, with the environment's message when there is one.
    Rejected(Option<String>),
    /// The log kept no outcome for the call (no tool output was saved): nothing says it failed.
    Unrecorded,
}

impl Verdict {
    /// The canonical `ok` field: absent when nothing was recorded.
    fn ok(&self) -> Option<bool> {
        match self {
            Verdict::Accepted => Some(true),
            Verdict::Rejected(_) => Some(false),
            Verdict::Unrecorded => None,
        }
    }
}

/// One tool call.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawStep {
    pub tool: Option<String>,
    /// `None` when the log has no arguments for the call (then only exposure is checked).
    pub args: Option<Value>,
    pub verdict: Verdict,
    /// The call as the harness printed it (BFCL's decoded `name(arg=…)`), kept for readers.
    pub call: Option<String>,
    /// The name the agent used when it differs from `tool` (ToolSandbox's scrambled names).
    pub agent_tool: Option<String>,
    /// Which rule rejected the call, where a reader decides by rules (transcripts:
    /// `flag:is_error`, `text:error-prefix`, `unanswered`, `arguments`).
    pub reject_source: Option<String>,
    /// The label the log itself implies (a transcript call whose arguments are not JSON:
    /// `schema`).
    pub label: Option<&'static str>,
}

/// A rollout before rendering.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Draft {
    pub dataset: String,
    pub task_id: String,
    pub model: String,
    pub method: String,
    pub success: bool,
    pub steps: Vec<RawStep>,
    /// For a rollout without tool calls: whether finishing without tools was allowed.
    pub no_tool_ok: bool,
    pub cost: Cost,
    /// The rollout crashed (an infrastructure or provider error), with the error's text: the
    /// canonical `crash` field. Set only where the file's crash policy counts crashes.
    pub crash: Option<String>,
    /// The run the rollout belongs to: the run folder, or the file that holds the run (the
    /// canonical `run`). Runs of one condition are scored apart unless merged.
    pub run: Option<String>,
    /// Format-specific facts kept in the line's `meta` (trial, reward, termination reason, …).
    pub meta: Map<String, Value>,
}

impl Draft {
    /// Reads a model named by a local path as the model it names (the original kept in
    /// `meta.model_path`, see [`super::names`]), then applies the per-file overrides of
    /// dataset, model and method.
    pub(crate) fn apply(&mut self, options: &ImportOptions) {
        if let Some(readable) = super::names::readable_model(&self.model) {
            let original = std::mem::replace(&mut self.model, readable);
            self.meta.insert("model_path".into(), original.into());
        }
        for (field, value) in [
            (&mut self.dataset, &options.dataset),
            (&mut self.model, &options.model),
            (&mut self.method, &options.method),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.trim().is_empty()) {
                *field = v.to_string();
            }
        }
    }

    /// The canonical JSONL line (without a line break). With `tools`, each step is first checked
    /// against the tool definitions; a failing check rejects the step with label `schema` and
    /// `"check": "schema"`, keeping the environment's own message as `environment_error`.
    pub(crate) fn render(&self, tools: Option<&ToolSet>) -> String {
        let steps = self
            .steps
            .iter()
            .map(|s| {
                let schema = match (tools, s.tool.as_deref()) {
                    (Some(t), Some(name)) => t.check(name, s.args.as_ref()).err(),
                    _ => None,
                };
                let env_error = match &s.verdict {
                    Verdict::Rejected(e) => e.as_deref(),
                    _ => None,
                };
                match schema {
                    Some(message) => StepOut {
                        tool: s.tool.as_deref(),
                        agent_tool: s.agent_tool.as_deref(),
                        args: s.args.as_ref(),
                        call: s.call.as_deref(),
                        ok: Some(false),
                        error: Some(message),
                        label: Some("schema"),
                        check: Some("schema"),
                        reject_source: None,
                        environment_error: env_error,
                        environment_ok: s.verdict.ok(),
                    },
                    None => StepOut {
                        tool: s.tool.as_deref(),
                        agent_tool: s.agent_tool.as_deref(),
                        args: s.args.as_ref(),
                        call: s.call.as_deref(),
                        ok: s.verdict.ok(),
                        error: env_error.map(str::to_string),
                        label: s.label,
                        check: None,
                        reject_source: s.reject_source.as_deref(),
                        environment_error: None,
                        environment_ok: None,
                    },
                }
            })
            .collect();
        let cost = (self.cost != Cost::default()).then_some(CostOut {
            tokens: self.cost.tokens,
            latency_s: self.cost.latency_s,
            usd: self.cost.usd,
        });
        let line = LineOut {
            dataset: &self.dataset,
            task_id: &self.task_id,
            model: &self.model,
            method: &self.method,
            success: self.success,
            steps,
            no_tool_ok: self.steps.is_empty().then_some(self.no_tool_ok),
            crash: self.crash.as_deref(),
            run: self.run.as_deref(),
            cost,
            meta: &self.meta,
        };
        // Serialising plain strings, numbers and JSON values cannot fail.
        serde_json::to_string(&line).unwrap_or_default()
    }
}

#[derive(Serialize)]
struct LineOut<'a> {
    dataset: &'a str,
    task_id: &'a str,
    model: &'a str,
    method: &'a str,
    success: bool,
    steps: Vec<StepOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    no_tool_ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    crash: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cost: Option<CostOut>,
    meta: &'a Map<String, Value>,
}

#[derive(Serialize)]
struct StepOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    check: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reject_source: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    environment_ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    environment_error: Option<&'a str>,
}

#[derive(Serialize)]
struct CostOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usd: Option<f64>,
}

/// A canonical line as the schema check saw it: each step that fails the check of `tools` (or
/// of the line's own `tools` field) is marked as [`Draft::render`] marks it. Lines that do not
/// parse are returned unchanged (they were not rollouts).
pub(crate) fn annotate_canonical(line: &str, tools: Option<&std::sync::Arc<ToolSet>>) -> String {
    let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(line) else {
        return line.to_string();
    };
    let own = map
        .get("tools")
        .filter(|t| !t.is_null())
        .and_then(|t| ToolSet::from_json(t).ok());
    let Some(tools) = own.as_ref().or(tools.map(|t| t.as_ref())) else {
        return line.to_string();
    };
    if let Some(Value::Array(steps)) = map.get_mut("steps") {
        for step in steps.iter_mut() {
            let Value::Object(step) = step else { continue };
            let Some(name) = step.get("tool").and_then(Value::as_str) else {
                continue;
            };
            if let Err(message) = tools.check(name, step.get("args")) {
                if let Some(ok) = step.remove("ok") {
                    step.insert("environment_ok".into(), ok);
                }
                if let Some(e) = step.remove("error") {
                    step.insert("environment_error".into(), e);
                }
                step.insert("ok".into(), false.into());
                step.insert("error".into(), message.into());
                step.insert("label".into(), "schema".into());
                step.insert("check".into(), "schema".into());
            }
        }
    }
    Value::Object(map).to_string()
}

/// The last non-blank line of a text, without trailing whitespace: a traceback's exception.
pub(crate) fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim_end()
}

/// A finite, non-negative number, or `None` (cost fields must be both to be kept).
pub(crate) fn cost_value(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite() && *x >= 0.0)
}

/// Sums every number in a value that is a number or nested arrays of numbers (BFCL logs token
/// counts and latencies per turn and per step); `None` when there is no number at all.
pub(crate) fn sum_numbers(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::Array(items) => items
            .iter()
            .filter_map(sum_numbers)
            .fold(None, |acc, x| Some(acc.unwrap_or(0.0) + x)),
        _ => None,
    }
}

/// The verdict on a call that no tool message answers: rejected, saying which id was missing.
pub(crate) fn unanswered(field: &str, id: Option<&str>) -> Verdict {
    Verdict::Rejected(Some(format!(
        "no tool message answers this call ({field} {:?})",
        id.unwrap_or("")
    )))
}

/// A message naming the tools whose schemas could not be compiled.
pub(crate) fn unusable_message(set: &ToolSet) -> String {
    let names: Vec<String> = set
        .unusable
        .iter()
        .map(|(n, e)| format!("{n} ({e})"))
        .collect();
    format!(
        "the parameter schemas of {} tools are not valid JSON Schema, so their arguments are not \
         checked: {}",
        names.len(),
        names.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::canonical::parse_line;
    use serde_json::json;

    fn draft(steps: Vec<RawStep>) -> Draft {
        Draft {
            dataset: "d".into(),
            task_id: "t".into(),
            model: "m".into(),
            method: "x".into(),
            success: true,
            steps,
            no_tool_ok: false,
            cost: Cost {
                tokens: Some(12.0),
                latency_s: None,
                usd: Some(0.25),
            },
            crash: None,
            run: None,
            meta: Map::new(),
        }
    }

    fn step(tool: &str, args: Value, verdict: Verdict) -> RawStep {
        RawStep {
            tool: Some(tool.into()),
            args: Some(args),
            verdict,
            call: None,
            agent_tool: None,
            reject_source: None,
            label: None,
        }
    }

    #[test]
    fn rendered_lines_read_back() {
        let d = draft(vec![
            step("a", json!({}), Verdict::Accepted),
            step(
                "b",
                json!({"x": 1}),
                Verdict::Rejected(Some("Error: no".into())),
            ),
            step("c", json!({}), Verdict::Unrecorded),
        ]);
        let r = parse_line(d.render(None).as_bytes()).unwrap();
        assert_eq!((r.horizon, r.fed, r.success), (3, 2, true));
        let f = r.failure.unwrap();
        assert_eq!(
            (f.error.as_deref(), f.tool.as_deref()),
            (Some("Error: no"), Some("b"))
        );
        assert_eq!(r.cost.tokens, Some(12.0));
        assert_eq!(r.cost.usd, Some(0.25));
        let mut none = draft(vec![]);
        none.no_tool_ok = true;
        let r = parse_line(none.render(None).as_bytes()).unwrap();
        assert_eq!((r.horizon, r.fed), (1, 2));
    }

    #[test]
    fn schema_checks_win() {
        let tools = ToolSet::from_json(&json!([{"name": "a", "parameters": {
            "type": "object", "required": ["q"]}}]))
        .unwrap();
        let d = draft(vec![
            step("a", json!({"q": 1}), Verdict::Accepted),
            step(
                "a",
                json!({}),
                Verdict::Rejected(Some("env says no".into())),
            ),
        ]);
        let line = d.render(Some(&tools));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["steps"][1]["label"], "schema");
        assert_eq!(v["steps"][1]["check"], "schema");
        assert_eq!(v["steps"][1]["environment_error"], "env says no");
        let r = parse_line(line.as_bytes()).unwrap();
        assert_eq!(r.fed, 2);
        assert_eq!(
            r.failure.unwrap().label,
            Some(crate::rollout::Label::Schema)
        );
    }

    #[test]
    fn sums() {
        assert_eq!(sum_numbers(&json!([[1, 2], [3, [4.5]]])), Some(10.5));
        assert_eq!(sum_numbers(&json!(7)), Some(7.0));
        assert_eq!(sum_numbers(&json!([])), None);
        assert_eq!(sum_numbers(&json!("x")), None);
    }
}
