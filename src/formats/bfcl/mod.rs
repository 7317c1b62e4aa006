//! BFCL multi-turn (v3/v4): a `…_result.json` file (JSON Lines, one test per line) together with
//! the matching `…_score.json` of the same run.
//!
//! The rules (also in `docs/formats.md`):
//! - one rollout per result line; task id `id`; dataset `bfcl/<category>`, the category being the
//!   id without its trailing `_<number>` (`multi_turn_base`, `multi_turn_miss_func`,
//!   `multi_turn_miss_param`, `multi_turn_long_context`); model from the score file's
//!   `model_name`, else the result file's folder; method `fc`;
//! - steps from `inference_log`: for each turn, each `step_<i>` in numeric order, the calls the
//!   harness decoded (`model_response_decoded` of the `handler_log` entry), matched by position
//!   to the `role: "tool"` entries of that step;
//! - a step is rejected iff its tool output starts with `Error during execution`, or parses (as
//!   JSON, or as a Python literal — BFCL logs `str()` of the executor's return value) to an object
//!   with an `error` key, or to a list whose first element has one; `None` and other plain values
//!   are accepted; a decoded call without a tool output is rejected;
//! - success comes from the score file: its first line is a summary (`accuracy`, `correct_count`,
//!   `total_count`) and the others list *failures only*, so a result id absent from them
//!   succeeded. Without the score file success is unknown and the result file is refused with a
//!   message asking for it;
//! - result lines with a `traceback` are inference errors (the model call crashed, there is no
//!   trajectory): a rollout that failed before any step — one terminal no-tool action, not
//!   executable, not successful — so N and final success are the leaderboard's; the import
//!   option `exclude_inference_errors` leaves them out instead (counted and reported);
//! - a result line without `inference_log` (some leaderboard submissions keep only the decoded
//!   calls) has no tool outputs: its steps come from `result` and carry no verdict, so they count
//!   as executed; the file diagnostic says how many such rollouts there are, because TER and PEC
//!   are then upper bounds;
//! - tokens = Σ `input_token_count` + Σ `output_token_count`, latency = Σ `latency` (BFCL nests
//!   them per turn and per step);
//! - a rollout without any call is one terminal no-tool action, executable iff it succeeded.

mod reader;

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::draft::{cost_value, sum_numbers, Draft, RawStep, Verdict};
use super::pyrepr;
use super::tau_bench::arguments;
use super::{read_object, Id};
use crate::rollout::Cost;
pub(crate) use reader::Bfcl;

/// One result line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ResultLine {
    Test(Test),
    /// An inference error: no trajectory to score.
    InferenceError {
        id: String,
        /// [`fingerprint`] of its `result` (the error text).
        fingerprint: Option<u64>,
        /// The error: `result` when it is text, else the traceback's last line.
        error: String,
    },
}

/// One test's trajectory, before its success is known.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Test {
    pub id: String,
    pub category: String,
    pub steps: Vec<RawStep>,
    pub cost: Cost,
    /// False when the line had no `inference_log` (no tool outputs).
    pub has_outputs: bool,
    /// An inference error: no trajectory, never successful.
    pub inference_error: bool,
    /// The inference error's text.
    pub error: Option<String>,
    /// [`fingerprint`] of the line's `result`, which a failed test's score entry repeats.
    pub fingerprint: Option<u64>,
}

impl Test {
    /// The rollout of an inference error: no step at all.
    pub fn inference_error(id: String, fingerprint: Option<u64>, error: String) -> Test {
        Test {
            category: category_of(&id),
            id,
            steps: Vec::new(),
            cost: Cost::default(),
            has_outputs: true,
            inference_error: true,
            error: Some(error),
            fingerprint,
        }
    }
}

/// A content hash of a JSON value (compact text, 64-bit FNV-1a): a score entry's
/// `model_result_raw` (or an inference error's `model_result`) equals its result line's
/// `result`, which tells which result file a score file belongs to when names do not.
pub(crate) fn fingerprint(v: &Value) -> u64 {
    crate::stats::resample::fnv1a64(v.to_string().as_bytes())
}

#[derive(Deserialize)]
struct WireResult {
    id: Id,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    inference_log: Option<Vec<Value>>,
    #[serde(default)]
    traceback: Option<Value>,
    #[serde(default)]
    input_token_count: Option<Value>,
    #[serde(default)]
    output_token_count: Option<Value>,
    #[serde(default)]
    latency: Option<Value>,
}

/// Reads one result line.
pub(crate) fn read_result_line(bytes: &[u8]) -> Result<ResultLine, String> {
    let wire: WireResult = read_object(bytes, "a BFCL result {id, result, inference_log}")?;
    let id = wire.id.0;
    let fp = wire.result.as_ref().map(fingerprint);
    if let Some(traceback) = &wire.traceback {
        let error = match (&wire.result, traceback) {
            (Some(Value::String(r)), _) if !r.trim().is_empty() => r.clone(),
            (_, Value::String(t)) => super::draft::last_line(t).trim_start().to_string(),
            _ => "an inference error (`traceback`)".to_string(),
        };
        return Ok(ResultLine::InferenceError {
            id,
            fingerprint: fp,
            error,
        });
    }
    let (steps, has_outputs) = match (&wire.inference_log, &wire.result) {
        (Some(log), _) => (steps_from_log(log)?, true),
        (None, Some(result)) => (steps_from_result(result)?, false),
        (None, None) => {
            return Err("neither `inference_log` nor `result`: nothing to score".to_string())
        }
    };
    let tokens = match (
        wire.input_token_count.as_ref().and_then(sum_numbers),
        wire.output_token_count.as_ref().and_then(sum_numbers),
    ) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    Ok(ResultLine::Test(Test {
        category: category_of(&id),
        id,
        steps,
        cost: Cost {
            tokens: cost_value(tokens),
            latency_s: cost_value(wire.latency.as_ref().and_then(sum_numbers)),
            usd: None,
        },
        has_outputs,
        inference_error: false,
        error: None,
        fingerprint: fp,
    }))
}

/// `multi_turn_base_12` → `multi_turn_base`.
pub(crate) fn category_of(id: &str) -> String {
    match id.rsplit_once('_') {
        Some((head, n))
            if !head.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            head.to_string()
        }
        _ => id.to_string(),
    }
}

/// The inference log: a list of turns (objects with `step_<i>` keys) interleaved with state
/// snapshots (lists), which are skipped.
fn steps_from_log(log: &[Value]) -> Result<Vec<RawStep>, String> {
    let mut out = Vec::new();
    for (t, turn) in log.iter().enumerate() {
        let Value::Object(turn) = turn else {
            continue;
        };
        let mut keyed: Vec<(u64, &Value)> = turn
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("step_")?.parse().ok()?, v)))
            .collect();
        keyed.sort_by_key(|(i, _)| *i);
        for (i, entries) in keyed {
            let Value::Array(entries) = entries else {
                return Err(format!(
                    "inference_log[{t}].step_{i}: expected a list of log entries, found {}",
                    super::schema_check::kind(entries)
                ));
            };
            out.extend(step_calls(entries));
        }
    }
    Ok(out)
}

/// The calls of one step, each with the tool output at the same position.
fn step_calls(entries: &[Value]) -> Vec<RawStep> {
    let role = |e: &Value| {
        e.get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut decoded: Vec<String> = Vec::new();
    let mut raw_args: Vec<Value> = Vec::new();
    let mut outputs: Vec<&Value> = Vec::new();
    for e in entries {
        match role(e).as_str() {
            "handler_log" => {
                if let Some(calls) = e.get("model_response_decoded").and_then(Value::as_array) {
                    decoded.extend(calls.iter().map(|c| match c {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    }));
                }
            }
            "assistant" => {
                // Function-calling models log `[{"name": "<json args>"}, …]`: the arguments.
                if let Some(calls) = e.get("content").and_then(Value::as_array) {
                    raw_args.extend(calls.iter().filter_map(|c| {
                        let (_, args) = c.as_object()?.iter().next()?;
                        Some(arguments(args))
                    }));
                }
            }
            "tool" => outputs.push(e.get("content").unwrap_or(&Value::Null)),
            _ => {}
        }
    }
    let args_align = raw_args.len() == decoded.len();
    decoded
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            let tool = call.split('(').next().unwrap_or("").trim().to_string();
            let verdict = match outputs.get(i) {
                None => Verdict::Rejected(Some(
                    "no tool output was logged for this decoded call".to_string(),
                )),
                Some(out) => output_verdict(out),
            };
            RawStep {
                tool: (!tool.is_empty()).then_some(tool),
                args: if args_align {
                    raw_args.get(i).cloned()
                } else {
                    None
                },
                verdict,
                call: Some(call),
                agent_tool: None,
                reject_source: None,
                label: None,
            }
        })
        .collect()
}

/// The rejection rule for one tool output.
pub(crate) fn output_verdict(out: &Value) -> Verdict {
    let rejected = match out {
        Value::String(s) => {
            s.starts_with("Error during execution")
                || match serde_json::from_str::<Value>(s) {
                    Ok(v) => json_has_error(&v),
                    Err(_) => pyrepr::parse(s).is_some_and(|p| match &p {
                        pyrepr::Py::List(items) => {
                            items.first().is_some_and(|f| f.has_key("error"))
                        }
                        other => other.has_key("error"),
                    }),
                }
        }
        other => json_has_error(other),
    };
    if rejected {
        Verdict::Rejected(Some(match out {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }))
    } else {
        Verdict::Accepted
    }
}

fn json_has_error(v: &Value) -> bool {
    match v {
        Value::Object(o) => o.contains_key("error"),
        Value::Array(items) => items
            .first()
            .and_then(Value::as_object)
            .is_some_and(|o| o.contains_key("error")),
        _ => false,
    }
}

/// Steps from `result` (turns → steps → calls `{name: "<json args>"}`), without outputs.
fn steps_from_result(result: &Value) -> Result<Vec<RawStep>, String> {
    let Value::Array(turns) = result else {
        return Err(format!(
            "`result` is {}, not the list of turns of a multi-turn test (and there is no \
             inference_log)",
            super::schema_check::kind(result)
        ));
    };
    let mut out = Vec::new();
    for step in turns.iter().filter_map(Value::as_array).flatten() {
        for call in step.as_array().into_iter().flatten() {
            let Some((name, args)) = call.as_object().and_then(|o| o.iter().next()) else {
                continue;
            };
            out.push(RawStep {
                tool: Some(name.clone()),
                args: Some(arguments(args)),
                verdict: Verdict::Unrecorded,
                call: None,
                agent_tool: None,
                reject_source: None,
                label: None,
            });
        }
    }
    Ok(out)
}

/// The score file's first line.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
pub struct ScoreSummary {
    pub accuracy: f64,
    pub correct_count: u64,
    pub total_count: u64,
}

/// A failure line of the score file.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ScoreFailure {
    pub id: String,
    pub model_name: Option<String>,
    pub category: Option<String>,
    /// [`fingerprint`]s of `model_result_raw` and of `model_result` (an inference error's
    /// entry carries the latter).
    pub fingerprints: [Option<u64>; 2],
}

#[derive(Deserialize)]
struct WireFailure {
    id: Id,
    #[serde(default)]
    model_name: Option<String>,
    #[serde(default)]
    test_category: Option<String>,
    #[serde(default)]
    model_result_raw: Option<Value>,
    #[serde(default)]
    model_result: Option<Value>,
}

pub(crate) fn read_score_summary(bytes: &[u8]) -> Result<ScoreSummary, String> {
    read_object(bytes, "an object").map_err(|e| {
        format!(
            "the first line of a BFCL score file must be its summary {{\"accuracy\", \
             \"correct_count\", \"total_count\"}}: {e}"
        )
    })
}

pub(crate) fn read_score_failure(bytes: &[u8]) -> Result<ScoreFailure, String> {
    let w: WireFailure = read_object(bytes, "a BFCL score entry {id, …}")?;
    Ok(ScoreFailure {
        id: w.id.0,
        model_name: w.model_name.filter(|m| !m.trim().is_empty()),
        category: w.test_category.filter(|c| !c.trim().is_empty()),
        fingerprints: [
            w.model_result_raw.as_ref().map(fingerprint),
            w.model_result.as_ref().map(fingerprint),
        ],
    })
}

/// The model named by a BFCL file's folder: the folder right below BFCL's `result/` or
/// `score/` (`result/<model>/multi_turn/…`, `score/<model>/multi_turn/…`) — never a folder
/// above them (a repository's top folder names no model); without those folders, the nearest
/// folder that is not one of BFCL's own layout folders.
pub(crate) fn model_from_path(name: &str) -> Option<String> {
    const LAYOUT: [&str; 8] = [
        "result",
        "results",
        "score",
        "scores",
        "multi_turn",
        "non_live",
        "live",
        ".",
    ];
    let mut parts: Vec<&str> = super::path::components(name).collect();
    parts.pop();
    if let Some(top) = parts.iter().rposition(|p| LAYOUT[..4].contains(p)) {
        return parts
            .get(top + 1)
            .filter(|p| !LAYOUT.contains(p))
            .map(|p| p.to_string());
    }
    parts
        .into_iter()
        .rev()
        .find(|p| !LAYOUT.contains(p))
        .map(str::to_string)
}

/// The category named by a BFCL file name: `BFCL_v4_multi_turn_base_score.json` →
/// `multi_turn_base` (used only when the file's lines do not say).
pub(crate) fn category_from_name(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next()?;
    let stem = base
        .strip_suffix("_score.json")
        .or_else(|| base.strip_suffix("_result.json"))?;
    let rest = stem.strip_prefix("BFCL_v")?;
    let (_, category) = rest.split_once('_')?;
    (!category.is_empty()).then(|| category.to_string())
}

/// Builds the rollout of a test once its success and names are known.
pub(crate) fn draft(test: Test, success: bool, model: String) -> Draft {
    let mut meta = Map::new();
    meta.insert("format".into(), "bfcl".into());
    // Whatever the score file says, a crashed inference did not solve its task.
    let success = success && !test.inference_error;
    if test.inference_error {
        meta.insert(
            "inference_error".into(),
            "the model call failed before any step (`traceback`)".into(),
        );
        // Said as a termination reason too, so the labeller files it with the other failures
        // that end a run before any tool call was judged (environment, not one of the five).
        meta.insert("termination_reason".into(), "inference_error".into());
    }
    let crash = test.inference_error.then(|| {
        test.error
            .clone()
            .unwrap_or_else(|| "an inference error (`traceback`)".to_string())
    });
    if !test.has_outputs {
        meta.insert(
            "tool_outputs".into(),
            "missing: no inference_log, steps taken from result without verdicts".into(),
        );
    }
    Draft {
        dataset: format!("bfcl/{}", test.category),
        task_id: test.id,
        model,
        method: "fc".to_string(),
        success,
        no_tool_ok: success,
        steps: test.steps,
        cost: test.cost,
        crash,
        run: None,
        meta,
    }
}

/// What a score file says, accumulated line by line.
#[derive(Clone, Debug, Default)]
pub(crate) struct ScoreFile {
    pub summary: Option<ScoreSummary>,
    pub failed: HashSet<String>,
    pub model: Option<String>,
    pub category: Option<String>,
    /// Failed id → [`fingerprint`]s of the results it repeats (`model_result_raw`,
    /// `model_result`).
    pub fingerprints: std::collections::HashMap<String, [Option<u64>; 2]>,
}

#[cfg(test)]
mod tests;
