//! The OpenAI chat-message shape that tau-bench trajectories and ToolSandbox's
//! `conversation.json` share: messages with `tool_calls`, answered by `role: "tool"` messages
//! naming their `tool_call_id`.

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
pub(crate) struct WireMessage {
    pub(crate) role: String,
    #[serde(default)]
    pub(crate) content: Option<Value>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    pub(crate) tool_call_id: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct WireToolCall {
    #[serde(default)]
    pub(crate) id: Option<String>,
    pub(crate) function: WireFunction,
}

#[derive(Deserialize)]
pub(crate) struct WireFunction {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
}
