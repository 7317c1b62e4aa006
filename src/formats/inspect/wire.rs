//! The parts of Inspect AI's log types that the conversion reads (`inspect_ai/log/_log.py`,
//! `model/_chat_message.py`, `tool/_tool_call.py`, `event/_tool.py`).
//!
//! Every field is optional and unknown fields are ignored, so logs of older and newer Inspect
//! versions read as long as the fields used keep their meaning. Fields whose type varied across
//! versions or that the conversion only inspects (`error`, score values, `limit`, tool call
//! arguments) are kept as JSON values and interpreted leniently.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// The members of an `EvalLog` other than `samples` and `reductions` (the `.eval` archive's
/// `header.json`, or the first members of a `.json` log; `_journal/start.json` holds `version`,
/// `eval` and `plan` only).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Header {
    pub version: Option<i64>,
    pub status: Option<String>,
    pub eval: Option<EvalSpec>,
    pub plan: Option<Plan>,
    pub results: Option<Results>,
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct EvalSpec {
    pub task: Option<String>,
    pub dataset: Option<Dataset>,
    pub model: Option<String>,
    pub solver: Option<String>,
    pub scorers: Option<Vec<ScorerSpec>>,
    pub packages: Option<BTreeMap<String, Value>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Dataset {
    pub name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ScorerSpec {
    pub name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Plan {
    pub steps: Vec<PlanStep>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PlanStep {
    pub solver: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Results {
    pub scores: Vec<EvalScore>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct EvalScore {
    pub name: Option<String>,
    pub scorer: Option<String>,
    pub metrics: BTreeMap<String, Metric>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Metric {
    /// A number, or null where the log had NaN.
    pub value: Value,
}

/// One `EvalSample`. Borrowed from the sample's bytes where it can be (`attachments` stays
/// unparsed unless an `attachment://` reference needs it).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Sample<'a> {
    pub id: Value,
    pub epoch: Option<i64>,
    pub messages: Vec<Message>,
    pub scores: Option<BTreeMap<String, Score>>,
    /// The legacy singular score (migrated by Inspect to `scores["88F74D2C"]`).
    pub score: Option<Score>,
    pub events: Vec<Event>,
    pub model_usage: Option<BTreeMap<String, ModelUsage>>,
    pub total_time: Option<f64>,
    pub working_time: Option<f64>,
    pub error: Option<Value>,
    pub limit: Option<Value>,
    #[serde(borrow)]
    pub attachments: Option<&'a RawValue>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Message {
    pub role: Option<String>,
    pub tool_calls: Option<Vec<ToolCall>>,
    /// A string on tool messages (a list on user messages carrying tool content: not read).
    pub tool_call_id: Option<Value>,
    pub error: Option<Value>,
    /// Legacy `ChatMessageTool.tool_error` (a string).
    pub tool_error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ToolCall {
    pub id: Option<String>,
    pub function: Option<String>,
    pub arguments: Option<Value>,
    pub parse_error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Event {
    pub event: Option<String>,
    /// On a tool event: the tool call's id.
    pub id: Option<Value>,
    pub function: Option<String>,
    pub arguments: Option<Value>,
    pub error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Score {
    pub value: Value,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ModelUsage {
    pub input_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    pub input_tokens_cache_write: Option<f64>,
    pub input_tokens_cache_read: Option<f64>,
    pub total_cost: Option<f64>,
}
