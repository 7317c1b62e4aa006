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

/// The tool message answering each call of each message ([`super::pairing`]): calls are the
/// assistant messages' `tool_calls`, replies the `role: "tool"` messages by `tool_call_id`.
pub(crate) fn chat_pairing(messages: &[WireMessage]) -> Vec<Vec<Option<usize>>> {
    super::pairing::pair_chat(
        messages,
        |m| m.role.as_str(),
        |m| {
            m.tool_calls
                .iter()
                .flatten()
                .map(|c| c.id.as_deref())
                .collect()
        },
        |m| m.tool_call_id.as_deref(),
    )
}
