//! A transcript's messages as calls and replies, in the three API shapes and their variants,
//! and the steps they make.

use serde_json::Value;

use super::reject::TextRules;
use crate::formats::draft::{RawStep, Verdict};
use crate::formats::pairing::{pair, Turn};

/// The API shape a transcript was written in (the first one its messages show).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    OpenAiChat,
    Responses,
    Anthropic,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::OpenAiChat => "openai-chat",
            Shape::Responses => "responses",
            Shape::Anthropic => "anthropic",
        }
    }
}

/// One call as the message holds it.
struct Call {
    id: Option<String>,
    tool: Option<String>,
    args: Result<Option<Value>, String>,
    /// An agent action (not a user-side call).
    agent: bool,
}

/// One reply.
struct Reply {
    id: Option<String>,
    /// The first text block (or the whole text).
    text: String,
    /// An explicit error flag: which one, and the error's own text when it has one.
    flag: Option<(&'static str, Option<String>)>,
}

enum Event {
    Call(Call),
    Reply(Reply),
}

/// What walking a transcript gave.
pub(crate) struct Walk {
    pub steps: Vec<RawStep>,
    pub shape: Option<Shape>,
    /// Replies paired with their call by position (they name no id).
    pub positional: u64,
    /// User-side calls left out of the steps.
    pub user_calls: u64,
}

/// The steps of a list of messages (or Responses items).
pub(crate) fn walk(messages: &[&Value], rules: &TextRules) -> Walk {
    let mut shape = None;
    let mut events = Vec::new();
    for m in messages {
        read_message(m, &mut events, &mut shape);
    }
    let turns: Vec<Turn<'_>> = events
        .iter()
        .map(|e| match e {
            Event::Call(c) => Turn::Call(c.id.as_deref()),
            Event::Reply(r) => Turn::Reply(r.id.as_deref()),
        })
        .collect();
    let answers = pair(&turns);
    let mut walk = Walk {
        steps: Vec::new(),
        shape,
        positional: 0,
        user_calls: 0,
    };
    for i in 0..events.len() {
        let Event::Call(call) = &events[i] else {
            continue;
        };
        if !call.agent {
            walk.user_calls += 1;
            continue;
        }
        let reply = answers[i].map(|a| {
            walk.positional += u64::from(a.positional);
            match &events[a.reply] {
                Event::Reply(r) => r,
                Event::Call(_) => unreachable!("a call answers no call"),
            }
        });
        let (verdict, label) = verdict(call, reply, rules);
        // The call is not looked at again: its name and arguments move into the step.
        let Event::Call(call) = &mut events[i] else {
            unreachable!("matched above")
        };
        walk.steps.push(RawStep {
            tool: call.tool.take(),
            args: std::mem::replace(&mut call.args, Ok(None)).unwrap_or(None),
            verdict: verdict.0,
            call: None,
            agent_tool: None,
            reject_source: verdict.1,
            label,
        });
    }
    walk
}

/// A call's verdict, the rule that decided it, and the label the log implies: the first that
/// applies of the reply's explicit flag, a text rule on its text, arguments that are not JSON
/// (labelled `schema`), no reply at all.
fn verdict(
    call: &Call,
    reply: Option<&Reply>,
    rules: &TextRules,
) -> ((Verdict, Option<String>), Option<&'static str>) {
    let rejected =
        |text: String, source: &str| (Verdict::Rejected(Some(text)), Some(source.to_string()));
    if let Some(r) = reply {
        if let Some((flag, text)) = &r.flag {
            let text = text.clone().unwrap_or_else(|| r.text.clone());
            return (rejected(text, &format!("flag:{flag}")), None);
        }
        if let Some(rule) = rules.first_match(&r.text) {
            return (rejected(r.text.clone(), &format!("text:{rule}")), None);
        }
    }
    if let Err(e) = &call.args {
        return (rejected(e.clone(), "arguments"), Some("schema"));
    }
    if reply.is_none() {
        let text = format!(
            "unanswered: no reply answers this call (id {:?})",
            call.id.as_deref().unwrap_or("")
        );
        return (rejected(text, "unanswered"), None);
    }
    ((Verdict::Accepted, None), None)
}

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key)?.as_str()
}

fn read_message(m: &Value, events: &mut Vec<Event>, shape: &mut Option<Shape>) {
    let Value::Object(_) = m else { return };
    let mut seen = |s: Shape| {
        shape.get_or_insert(s);
    };
    match str_of(m, "type") {
        Some("function_call") => {
            seen(Shape::Responses);
            events.push(Event::Call(Call {
                id: id_of(m, &["call_id", "id"]),
                tool: str_of(m, "name").map(str::to_string),
                args: arguments(m.get("arguments")),
                agent: true,
            }));
            return;
        }
        Some("function_call_output") => {
            seen(Shape::Responses);
            events.push(Event::Reply(reply(
                m,
                id_of(m, &["call_id"]),
                m.get("output"),
            )));
            return;
        }
        _ => {}
    }
    let role = str_of(m, "role").unwrap_or("");
    if matches!(role, "tool" | "function" | "ipython") {
        seen(Shape::OpenAiChat);
        events.push(Event::Reply(reply(
            m,
            id_of(m, &["tool_call_id", "call_id"]),
            m.get("content"),
        )));
        return;
    }
    if let Some(Value::Array(calls)) = m.get("tool_calls") {
        seen(Shape::OpenAiChat);
        for c in calls {
            let function = c.get("function");
            let (tool, args) = match function {
                Some(f @ Value::Object(_)) => (
                    str_of(f, "name").map(str::to_string),
                    f.get("arguments").or_else(|| f.get("args")),
                ),
                Some(Value::String(name)) => (Some(name.clone()), c.get("args")),
                _ => (
                    str_of(c, "name").map(str::to_string),
                    c.get("arguments").or_else(|| c.get("args")),
                ),
            };
            events.push(Event::Call(Call {
                id: id_of(c, &["id", "call_id"]),
                tool,
                args: arguments(args),
                agent: role != "user" && str_of(c, "requestor") != Some("user"),
            }));
        }
    } else if let Some(f @ Value::Object(_)) = m.get("function_call") {
        // The legacy function-calling shape: one call a message, answered by a `function`
        // message without an id (paired by position). Where `tool_calls` repeat it (tau-bench
        // keeps both), `tool_calls` are read instead.
        seen(Shape::OpenAiChat);
        events.push(Event::Call(Call {
            id: None,
            tool: str_of(f, "name").map(str::to_string),
            args: arguments(f.get("arguments")),
            agent: role != "user",
        }));
    }
    if let Some(Value::Array(blocks)) = m.get("content") {
        for b in blocks {
            match str_of(b, "type") {
                Some("tool_use") => {
                    seen(Shape::Anthropic);
                    events.push(Event::Call(Call {
                        id: id_of(b, &["id"]),
                        tool: str_of(b, "name").map(str::to_string),
                        args: arguments(b.get("input")),
                        agent: role != "user",
                    }));
                }
                Some("tool_result") => {
                    seen(Shape::Anthropic);
                    events.push(Event::Reply(reply(
                        b,
                        id_of(b, &["tool_use_id"]),
                        b.get("content"),
                    )));
                }
                _ => {}
            }
        }
    }
}

fn id_of(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match v.get(*k)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// A call's arguments: an object as it is, a JSON string decoded (an empty string is no
/// arguments), `Err` for a string that is not JSON.
fn arguments(v: Option<&Value>) -> Result<Option<Value>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => {
            Ok(Some(Value::Object(Default::default())))
        }
        Some(Value::String(s)) => serde_json::from_str(s)
            .map(Some)
            .map_err(|e| format!("the arguments are not valid JSON ({e}): {s}")),
        Some(other) => Ok(Some(other.clone())),
    }
}

/// A reply: its text and its explicit error flags (the carrier's own `is_error` / `error` /
/// `isError`, or an MCP content block's).
fn reply(carrier: &Value, id: Option<String>, content: Option<&Value>) -> Reply {
    let mut flag = None;
    if carrier.get("is_error") == Some(&Value::Bool(true)) {
        flag = Some(("is_error", None));
    } else if let Some(e) = carrier.get("error").filter(|e| error_set(e)) {
        flag = Some(("error", error_message(e)));
    } else if carrier.get("isError") == Some(&Value::Bool(true)) {
        flag = Some(("mcp", None));
    }
    let (text, mcp_error) = content_text(content);
    if flag.is_none() && mcp_error {
        flag = Some(("mcp", None));
    }
    Reply { id, text, flag }
}

/// `error` set: not null, not `false`, not an empty string (or empty container).
fn error_set(e: &Value) -> bool {
    match e {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}

fn error_message(e: &Value) -> Option<String> {
    match e {
        Value::String(s) => Some(s.clone()),
        Value::Bool(_) => None,
        other => Some(other.to_string()),
    }
}

/// The reply's text — the first text block where content is a list of blocks (or a JSON
/// string of blocks, as MCP replies are often serialised) — and whether a block is flagged as
/// an error (`"error": true` / `"isError": true`).
fn content_text(content: Option<&Value>) -> (String, bool) {
    match content {
        None | Some(Value::Null) => (String::new(), false),
        Some(Value::String(s)) => {
            let t = s.trim_start();
            if t.starts_with('{') || t.starts_with('[') {
                if let Ok(v) = serde_json::from_str::<Value>(t) {
                    if let Some(found) = blocks_text(&v) {
                        return found;
                    }
                }
            }
            (s.clone(), false)
        }
        Some(v) => blocks_text(v).unwrap_or_else(|| (v.to_string(), false)),
    }
}

/// Text and error flag of content blocks: a block, a list of blocks, or an MCP result
/// `{content: [blocks], isError}`. `None` when `v` is none of these.
fn blocks_text(v: &Value) -> Option<(String, bool)> {
    let is_block = |b: &Value| b.get("type").is_some_and(Value::is_string);
    let flagged = |b: &Value| {
        b.get("error") == Some(&Value::Bool(true)) || b.get("isError") == Some(&Value::Bool(true))
    };
    let list: Vec<&Value> = match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(is_block) => {
            items.iter().collect()
        }
        Value::Object(_) if is_block(v) => vec![v],
        Value::Object(o) if o.get("content").is_some_and(Value::is_array) => {
            let (text, inner) = blocks_text(&o["content"]).unwrap_or_default();
            return Some((text, inner || flagged(v)));
        }
        _ => return None,
    };
    let text = list
        .iter()
        .find(|b| {
            matches!(
                str_of(b, "type"),
                Some("text" | "input_text" | "output_text")
            )
        })
        .and_then(|b| str_of(b, "text").or_else(|| str_of(b, "content")))
        .unwrap_or("")
        .to_string();
    Some((text, list.iter().any(|b| flagged(b))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::transcript::reject::RejectSettings;
    use serde_json::json;

    fn run(messages: Value) -> Walk {
        let rules = TextRules::new(&RejectSettings::default());
        let list: Vec<&Value> = messages.as_array().unwrap().iter().collect();
        walk(&list, &rules)
    }

    fn sources(w: &Walk) -> Vec<Option<&str>> {
        w.steps.iter().map(|s| s.reject_source.as_deref()).collect()
    }

    #[test]
    fn openai_chat_variants() {
        let w = run(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}},
                {"function": "g", "args": {"y": 2}, "id": "b"},
                {"id": "c", "name": "h", "arguments": {}}]},
            {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "content": ""}], "error": "ValueError: no"},
            {"role": "tool", "tool_call_id": "a", "content": "{\"type\":\"text\",\"text\":\"Error: bad\",\"annotations\":null}"},
            {"role": "tool", "tool_call_id": "c", "content": "fine"},
            {"role": "user", "tool_calls": [{"id": "u", "name": "toggle", "arguments": {}}]},
            {"role": "tool", "tool_call_id": "u", "content": "Error: user side"},
            {"role": "assistant", "tool_calls": [{"id": "d", "function": {"name": "k", "arguments": "{oops"}}]},
            {"role": "assistant", "tool_calls": [{"id": "e", "function": {"name": "m", "arguments": ""}}]}
        ]));
        assert_eq!(w.shape, Some(Shape::OpenAiChat));
        assert_eq!(w.user_calls, 1);
        assert_eq!(
            sources(&w),
            [
                Some("text:error-prefix"),
                Some("flag:error"),
                None,
                Some("arguments"),
                Some("unanswered")
            ]
        );
        assert_eq!(w.steps[0].args, Some(json!({"x": 1})));
        assert_eq!(w.steps[1].tool.as_deref(), Some("g"));
        assert_eq!(
            w.steps[1].verdict,
            Verdict::Rejected(Some("ValueError: no".into()))
        );
        assert_eq!(
            w.steps[0].verdict,
            Verdict::Rejected(Some("Error: bad".into()))
        );
        assert_eq!(w.steps[3].label, Some("schema"));
        assert_eq!(w.steps[4].args, Some(json!({})));
    }

    #[test]
    fn a_reply_s_verdict_comes_before_the_arguments() {
        // Arguments that are not JSON, answered by an error: the reply's text rule decides;
        // answered as if executed: the arguments do.
        let w = run(json!([
            {"role": "assistant", "tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": "{oops"}},
                {"id": "b", "function": {"name": "g", "arguments": "{oops"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "Error: cannot parse"},
            {"role": "tool", "tool_call_id": "b", "content": "done"}
        ]));
        assert_eq!(sources(&w), [Some("text:error-prefix"), Some("arguments")]);
        assert_eq!(w.steps[0].label, None);
        assert_eq!(w.steps[1].label, Some("schema"));
    }

    #[test]
    fn legacy_function_calls() {
        let w = run(json!([
            {"role": "assistant", "content": null, "function_call": {"name": "f", "arguments": "{\"a\": 1}"}},
            {"role": "function", "name": "f", "content": "Error: no"},
            {"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "g", "arguments": "{}"}}],
             "function_call": {"name": "g", "arguments": "{}"}},
            {"role": "tool", "tool_call_id": "x", "content": "ok"}
        ]));
        assert_eq!(w.steps.len(), 2);
        assert_eq!(sources(&w), [Some("text:error-prefix"), None]);
        assert_eq!(w.positional, 1);
    }

    #[test]
    fn positional_replies() {
        let w = run(json!([
            {"role": "assistant", "tool_calls": [{"id": "a", "name": "f", "arguments": {}}, {"id": "b", "name": "g", "arguments": {}}]},
            {"role": "tool", "content": "ok"},
            {"role": "tool", "content": "Error: second"}
        ]));
        assert_eq!(w.positional, 2);
        assert_eq!(sources(&w), [None, Some("text:error-prefix")]);
    }

    #[test]
    fn anthropic_and_responses() {
        let w = run(json!([
            {"role": "assistant", "content": [
                {"type": "text", "text": "let me look"},
                {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x"}},
                {"type": "tool_use", "id": "t2", "name": "open", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": "opened"},
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "rate limited"}], "is_error": true}]}
        ]));
        assert_eq!(w.shape, Some(Shape::Anthropic));
        assert_eq!(sources(&w), [Some("flag:is_error"), None]);
        assert_eq!(
            w.steps[0].verdict,
            Verdict::Rejected(Some("rate limited".into()))
        );
        let w = run(json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c2", "output": "{\"content\": [{\"type\": \"text\", \"text\": \"boom\"}], \"isError\": true}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Tool f not found"}
        ]));
        assert_eq!(w.shape, Some(Shape::Responses));
        assert_eq!(sources(&w), [Some("text:unknown-tool"), Some("flag:mcp")]);
    }
}
