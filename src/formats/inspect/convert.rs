//! One Inspect sample × epoch → one [`Draft`] rollout (the rule of `docs/formats.md`, "Inspect
//! AI logs").

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value};

use super::wire::{self, Header, Sample};
use super::InspectOptions;
use crate::formats::draft::{cost_value, Draft, RawStep, Verdict};
use crate::formats::pairing::{pair, Turn};
use crate::rollout::Cost;

/// What the log's header says about the run, for every sample of the file.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunInfo {
    pub dataset: String,
    pub model: String,
    pub method: String,
    /// The primary scorer: the header's first result score, else the first declared scorer.
    pub scorer: Option<String>,
    /// Score name → (metric name → value), from `results.scores`.
    pub metrics: Vec<(String, Option<String>, BTreeMap<String, f64>)>,
    pub status: Option<String>,
    pub version: Option<i64>,
    pub inspect_version: Option<String>,
    /// Whether a header (or the journal's start record) was read at all.
    pub known: bool,
}

impl RunInfo {
    pub(crate) fn from_header(h: &Header) -> RunInfo {
        let eval = h.eval.as_ref();
        let task = eval.and_then(|e| e.task.clone()).filter(|t| !t.is_empty());
        let dataset_name = eval
            .and_then(|e| e.dataset.as_ref())
            .and_then(|d| d.name.clone())
            .filter(|n| !n.is_empty());
        let dataset = match (task, dataset_name) {
            (Some(t), Some(d)) if d != t && !t.ends_with(&format!("/{d}")) => format!("{t} ({d})"),
            (Some(t), _) => t,
            (None, Some(d)) => d,
            (None, None) => "inspect".to_string(),
        };
        let model = eval
            .and_then(|e| e.model.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "unknown-model".to_string());
        // The agent: the eval's solver when it names one, else the plan's last step (the agent
        // loop follows the set-up steps: `system_message`, `use_tools`, … `basic_agent_loop`).
        let method = eval
            .and_then(|e| e.solver.clone())
            .filter(|s| !s.is_empty())
            .or_else(|| {
                h.plan
                    .as_ref()
                    .and_then(|p| p.steps.iter().rev().find_map(|s| s.solver.clone()))
                    .filter(|s| !s.is_empty())
            })
            .unwrap_or_else(|| "unknown-method".to_string());
        let metrics: Vec<_> = h
            .results
            .as_ref()
            .map(|r| {
                r.scores
                    .iter()
                    .map(|s| {
                        let m = s
                            .metrics
                            .iter()
                            .filter_map(|(k, v)| v.value.as_f64().map(|x| (k.clone(), x)))
                            .collect();
                        (s.name.clone().unwrap_or_default(), s.scorer.clone(), m)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let scorer = h
            .results
            .as_ref()
            .and_then(|r| r.scores.first())
            .and_then(|s| s.name.clone().or_else(|| s.scorer.clone()))
            .or_else(|| {
                eval.and_then(|e| e.scorers.as_ref())
                    .and_then(|s| s.first())
                    .and_then(|s| s.name.clone())
            });
        let inspect_version = eval
            .and_then(|e| e.packages.as_ref())
            .and_then(|p| p.get("inspect_ai"))
            .and_then(|v| v.as_str().map(str::to_string));
        RunInfo {
            dataset,
            model,
            method,
            scorer,
            metrics,
            status: h.status.clone(),
            version: h.version,
            inspect_version,
            known: true,
        }
    }

    /// Before any header: names that say so.
    pub(crate) fn unknown() -> RunInfo {
        RunInfo {
            dataset: "inspect".to_string(),
            model: "unknown-model".to_string(),
            method: "unknown-method".to_string(),
            ..RunInfo::default()
        }
    }
}

/// Why a sample gave no rollout.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Skip {
    /// `sample.error` is set (and errored samples are not kept).
    Errored,
    /// The primary score is NaN, a dict or list, an unknown string, or missing.
    NotScored(String),
}

/// What one sample gave.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Converted {
    /// The rollout (steps, names, cost; success false when not scored).
    pub draft: Draft,
    /// Why the sample gives no rollout, if so.
    pub skip: Option<Skip>,
    /// `(id, epoch)` as the sample says.
    pub key: (String, i64),
    /// Success as the scorer's value gives it (for the self-check); `None` when not scored or
    /// errored.
    pub scored: Option<bool>,
    /// The limit the sample hit (`sample.limit.type`).
    pub limit: Option<String>,
    pub errored: bool,
    /// Tool messages that answer no call.
    pub orphans: u64,
    /// Calls without a tool message that the sample's tool events show ran.
    pub ran_per_events: u64,
    /// Calls answered by nothing at all.
    pub unanswered: u64,
    /// Tool events for calls missing from `messages`, after the last call there: taken as steps.
    pub trailing_event_calls: u64,
    /// Tool events for calls missing from `messages` elsewhere (sub-agents): not steps.
    pub other_event_calls: u64,
    /// Cost: the agent model had no `model_usage` entry while others did.
    pub usage_without_agent_model: bool,
}

/// Python writes non-finite floats as `NaN` / `Infinity`, which JSON (and serde_json) lacks; an
/// unscored sample's value is NaN. [`convert`] reads them as `null`.
/// `bytes` with every `NaN`, `Infinity` and `-Infinity` outside strings replaced by `null`;
/// `None` when there is none.
pub(crate) fn finite_json(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    let mut copied = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1
                }
                _ => i += 1,
            }
            continue;
        }
        let token: Option<usize> = match b {
            b'"' => {
                in_string = true;
                None
            }
            b'N' if bytes[i..].starts_with(b"NaN") => Some(3),
            b'I' if bytes[i..].starts_with(b"Infinity") => Some(8),
            b'-' if bytes[i..].starts_with(b"-Infinity") => Some(9),
            _ => None,
        };
        match token {
            Some(n) => {
                let o = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
                o.extend_from_slice(&bytes[copied..i]);
                o.extend_from_slice(b"null");
                i += n;
                copied = i;
            }
            None => i += 1,
        }
    }
    let mut o = out?;
    o.extend_from_slice(&bytes[copied.min(bytes.len())..]);
    Some(o)
}

/// Parses a sample (cleaning non-finite numbers if needed) and converts it.
pub(crate) fn convert(
    bytes: &[u8],
    run: &RunInfo,
    options: &InspectOptions,
) -> Result<Converted, String> {
    match crate::formats::read_object::<Sample>(bytes, "an Inspect sample (EvalSample)") {
        Ok(s) => Ok(convert_sample(s, run, options)),
        Err(e) => {
            let Some(clean) = finite_json(bytes) else {
                return Err(e);
            };
            let s =
                crate::formats::read_object::<Sample>(&clean, "an Inspect sample (EvalSample)")?;
            Ok(convert_sample(s, run, options))
        }
    }
}

/// `"type: message"` of a `ToolCallError` (or of a legacy `tool_error` string).
fn error_text(error: &Value, sample: &Sample<'_>, attachments: &mut Attachments) -> Option<String> {
    match error {
        Value::Null => None,
        Value::String(s) => Some(format!("unknown: {}", attachments.resolve(sample, s))),
        Value::Object(m) => {
            let kind = m.get("type").and_then(Value::as_str).unwrap_or("unknown");
            let message = m
                .get("message")
                .and_then(Value::as_str)
                .map(|s| attachments.resolve(sample, s))
                .unwrap_or_default();
            Some(if message.is_empty() {
                kind.to_string()
            } else {
                format!("{kind}: {message}")
            })
        }
        other => Some(format!("unknown: {other}")),
    }
}

/// `attachment://<hash>` references, resolved through `sample.attachments` (parsed on first use).
#[derive(Default)]
struct Attachments {
    map: Option<HashMap<String, String>>,
}

impl Attachments {
    fn resolve(&mut self, sample: &Sample<'_>, s: &str) -> String {
        let Some(hash) = s.strip_prefix("attachment://") else {
            return s.to_string();
        };
        let map = self.map.get_or_insert_with(|| {
            sample
                .attachments
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or_default()
        });
        map.get(hash).cloned().unwrap_or_else(|| s.to_string())
    }
}

fn id_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The success a score value means, or why it means none.
pub(crate) fn success_of(value: &Value, options: &InspectOptions) -> Result<bool, String> {
    let threshold = options.threshold.unwrap_or(1.0);
    let named = options
        .success_value
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    match value {
        Value::Null => Err("the score is NaN (unscored)".to_string()),
        Value::Bool(b) => Ok(match named {
            Some(n) => n.eq_ignore_ascii_case(if *b { "true" } else { "false" }),
            None => *b,
        }),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() => Ok(x >= threshold),
            _ => Err("the score is not a finite number".to_string()),
        },
        Value::String(s) => {
            let t = s.trim();
            if let Some(n) = named {
                if t == n || (t.len() > 1 && t.eq_ignore_ascii_case(n)) {
                    return Ok(true);
                }
            }
            match t {
                "C" => Ok(named.is_none()),
                "I" | "N" | "P" => Ok(false),
                _ if ["yes", "true"].iter().any(|w| t.eq_ignore_ascii_case(w)) => {
                    Ok(named.is_none())
                }
                _ if ["no", "false"].iter().any(|w| t.eq_ignore_ascii_case(w)) => Ok(false),
                _ => match t.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(x >= threshold),
                    _ => Err(format!("the score {t:?} is not a known value")),
                },
            }
        }
        Value::Array(_) => Err("the score is a list".to_string()),
        Value::Object(_) => Err("the score is a dict".to_string()),
    }
}

pub(crate) fn convert_sample(
    mut s: Sample<'_>,
    run: &RunInfo,
    options: &InspectOptions,
) -> Converted {
    let mut attachments = Attachments::default();
    // The calls are moved out of the sample (their arguments can be large), never copied.
    let calls: Vec<(usize, Vec<wire::ToolCall>)> = s
        .messages
        .iter_mut()
        .enumerate()
        .filter(|(_, m)| m.role.as_deref() == Some("assistant"))
        .map(|(i, m)| (i, m.tool_calls.take().unwrap_or_default()))
        .collect();
    let task_id = id_text(&s.id);
    let epoch = s.epoch.unwrap_or(1);

    // Tool events by call id (the first one per id).
    let mut events: HashMap<String, (usize, &wire::Event)> = HashMap::new();
    for (i, e) in s.events.iter().enumerate() {
        if e.event.as_deref() == Some("tool") {
            if let Some(id) = e.id.as_ref().map(id_text) {
                events.entry(id).or_insert((i, e));
            }
        }
    }

    // Each call's tool message (`pairing`: the first later one of its id), in call order.
    let mut turns = Vec::new();
    let mut owner = Vec::new();
    let mut made = calls.iter().peekable();
    for (i, m) in s.messages.iter().enumerate() {
        while let Some((_, message_calls)) = made.next_if(|(at, _)| *at == i) {
            for call in message_calls {
                turns.push(Turn::Call(call.id.as_deref()));
                owner.push(i);
            }
        }
        if m.role.as_deref() == Some("tool") {
            turns.push(Turn::Reply(m.tool_call_id.as_ref().and_then(Value::as_str)));
            owner.push(i);
        }
    }
    let mut replies = turns
        .iter()
        .zip(pair(&turns))
        .filter(|(t, _)| matches!(t, Turn::Call(_)))
        .map(|(_, a)| a.map(|a| owner[a.reply]))
        .collect::<Vec<_>>()
        .into_iter();
    let tool_messages = s
        .messages
        .iter()
        .filter(|m| m.role.as_deref() == Some("tool"))
        .count() as u64;

    let mut steps = Vec::new();
    let mut call_ids: HashSet<String> = HashSet::new();
    let (mut answered, mut ran_per_events, mut unanswered) = (0u64, 0u64, 0u64);
    let mut last_event = None::<usize>;
    for (_, message_calls) in calls {
        for call in message_calls {
            let id = call.id.as_deref();
            if let Some(id) = id {
                call_ids.insert(id.to_string());
            }
            let event = id.and_then(|id| events.get(id));
            if let Some((at, _)) = event {
                last_event = Some(last_event.map_or(*at, |l: usize| l.max(*at)));
            }
            let reply = replies.next().flatten();
            answered += u64::from(reply.is_some());
            let parse_error = call
                .parse_error
                .as_ref()
                .filter(|p| !p.is_null())
                .map(|p| match p {
                    Value::String(t) => format!("parsing: {t}"),
                    other => format!("parsing: {other}"),
                });
            let verdict = if let Some(p) = parse_error {
                Verdict::Rejected(Some(p))
            } else if let Some(j) = reply {
                let msg = &s.messages[j];
                let error = msg
                    .error
                    .as_ref()
                    .and_then(|e| error_text(e, &s, &mut attachments))
                    .or_else(|| {
                        msg.tool_error
                            .as_ref()
                            .filter(|e| !e.is_null())
                            .map(|e| match e {
                                Value::String(t) => {
                                    format!("unknown: {}", attachments.resolve(&s, t))
                                }
                                other => format!("unknown: {other}"),
                            })
                    });
                match error {
                    Some(e) => Verdict::Rejected(Some(e)),
                    None => Verdict::Accepted,
                }
            } else {
                match event {
                    Some((_, e)) => {
                        ran_per_events += 1;
                        match e
                            .error
                            .as_ref()
                            .and_then(|x| error_text(x, &s, &mut attachments))
                        {
                            Some(err) => Verdict::Rejected(Some(err)),
                            None => Verdict::Accepted,
                        }
                    }
                    None => {
                        unanswered += 1;
                        Verdict::Rejected(Some(format!(
                            "unanswered: no tool message or tool event answers this call \
                             (tool_call_id {:?})",
                            id.unwrap_or("")
                        )))
                    }
                }
            };
            steps.push(RawStep {
                tool: call.function,
                args: call.arguments,
                verdict,
                call: None,
                agent_tool: None,
                reject_source: None,
                label: None,
            });
        }
    }

    // Calls that exist only as tool events: those after the last call the messages have were
    // cut from `messages` (e.g. react's final `submit()`), and are steps; earlier ones belong
    // to sub-agents whose conversations are not in `messages`, and are only counted.
    let (mut trailing, mut other) = (0u64, 0u64);
    let mut from_events: Vec<(usize, Verdict)> = Vec::new();
    for (i, e) in s.events.iter().enumerate() {
        if e.event.as_deref() != Some("tool") {
            continue;
        }
        let Some(id) = e.id.as_ref().map(id_text) else {
            continue;
        };
        if call_ids.contains(&id) || events.get(&id).is_some_and(|(first, _)| *first != i) {
            continue;
        }
        if last_event.is_some_and(|l| i < l) {
            other += 1;
            continue;
        }
        trailing += 1;
        let verdict = match e
            .error
            .as_ref()
            .and_then(|x| error_text(x, &s, &mut attachments))
        {
            Some(err) => Verdict::Rejected(Some(err)),
            None => Verdict::Accepted,
        };
        from_events.push((i, verdict));
    }
    drop(events);
    for (i, verdict) in from_events {
        let e = &mut s.events[i];
        steps.push(RawStep {
            tool: e.function.take(),
            args: e.arguments.take(),
            verdict,
            call: None,
            agent_tool: None,
            reject_source: None,
            label: None,
        });
    }

    // Success from the primary scorer's per-epoch value.
    let scorer = options
        .scorer
        .clone()
        .filter(|s| !s.trim().is_empty())
        .or_else(|| run.scorer.clone());
    let scores: BTreeMap<String, &wire::Score> = match (&s.scores, &s.score) {
        (Some(map), _) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        (None, Some(single)) => [("88F74D2C".to_string(), single)].into_iter().collect(),
        (None, None) => BTreeMap::new(),
    };
    let (scorer, value) = match &scorer {
        Some(name) => (Some(name.clone()), scores.get(name).map(|v| &v.value)),
        None if scores.len() == 1 => {
            let (k, v) = scores
                .iter()
                .next()
                .map(|(k, v)| (k.clone(), &v.value))
                .unzip();
            (k, v)
        }
        None => (None, None),
    };
    let scored: Result<bool, String> = match (&scorer, value) {
        (_, Some(v)) => success_of(v, options),
        (Some(name), None) if scores.is_empty() => Err(format!("no scores (scorer {name:?})")),
        (Some(name), None) => Err(format!(
            "no score from scorer {name:?} (the sample has {})",
            scores.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
        (None, None) if scores.is_empty() => Err("no scores".to_string()),
        (None, None) => Err(format!(
            "several scorers ({}) and none named primary: set the scorer for the file",
            scores.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
    };

    let errored = s.error.as_ref().is_some_and(|e| !e.is_null());
    let limit = s.limit.as_ref().and_then(|l| match l {
        Value::Object(m) => m.get("type").and_then(Value::as_str).map(str::to_string),
        Value::String(t) => Some(t.clone()),
        _ => None,
    });

    // Cost: the agent model's usage.
    let usage = s.model_usage.as_ref();
    let agent_usage = usage.and_then(|u| {
        u.get(&run.model)
            .or_else(|| (u.len() == 1).then(|| u.values().next()).flatten())
    });
    let usage_without_agent_model = usage.is_some_and(|u| !u.is_empty()) && agent_usage.is_none();
    let tokens = agent_usage.and_then(|u| {
        let parts = [
            u.input_tokens,
            u.input_tokens_cache_read,
            u.input_tokens_cache_write,
            u.output_tokens,
        ];
        parts
            .iter()
            .flatten()
            .fold(None, |acc: Option<f64>, x| Some(acc.unwrap_or(0.0) + x))
    });
    let cost = Cost {
        tokens: cost_value(tokens),
        latency_s: cost_value(s.working_time.or(s.total_time)),
        usd: cost_value(agent_usage.and_then(|u| u.total_cost)),
    };

    let orphans = tool_messages - answered;
    let mut meta = Map::new();
    meta.insert("format".into(), "inspect".into());
    meta.insert("sample_id".into(), s.id.clone());
    meta.insert("epoch".into(), epoch.into());
    meta.insert("trial".into(), epoch.into());
    if let Some(name) = &scorer {
        meta.insert("scorer".into(), name.clone().into());
    }
    if let Some(v) = value.filter(|v| !v.is_object() && !v.is_array()) {
        meta.insert("score".into(), v.clone());
    }
    if let Some(l) = &s.limit {
        meta.insert("limit".into(), l.clone());
    }
    let mut crash = None;
    if errored {
        let text = match s.error.as_ref() {
            Some(Value::Object(m)) => m
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            Some(Value::String(t)) => t.clone(),
            _ => String::new(),
        };
        let short: String = text.chars().take(300).collect();
        meta.insert("sample_error".into(), short.clone().into());
        crash = Some(if short.trim().is_empty() {
            "the sample errored (`error` set)".to_string()
        } else {
            short
        });
    }
    for (key, n) in [
        ("orphan_tool_messages", orphans),
        ("answered_by_events", ran_per_events),
        ("calls_from_events", trailing),
    ] {
        if n > 0 {
            meta.insert(key.into(), n.into());
        }
    }

    let (success, skip) = if errored && !options.keep_errored {
        (false, Some(Skip::Errored))
    } else if errored {
        (false, None)
    } else {
        match &scored {
            Ok(success) => (*success, None),
            Err(why) => (false, Some(Skip::NotScored(why.clone()))),
        }
    };
    let draft = Draft {
        dataset: run.dataset.clone(),
        task_id: task_id.clone(),
        model: run.model.clone(),
        method: run.method.clone(),
        success,
        no_tool_ok: success,
        steps,
        cost,
        crash,
        run: None,
        meta,
    };
    Converted {
        draft,
        skip,
        key: (task_id, epoch),
        scored: if errored { None } else { scored.ok() },
        limit,
        errored,
        orphans,
        ran_per_events,
        unanswered,
        trailing_event_calls: trailing,
        other_event_calls: other,
        usage_without_agent_model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn score_kinds() {
        let d = InspectOptions::default();
        let ok = |v: Value| success_of(&v, &d);
        assert_eq!(ok(json!("C")), Ok(true));
        assert_eq!(ok(json!("I")), Ok(false));
        assert_eq!(ok(json!("N")), Ok(false));
        assert_eq!(ok(json!("P")), Ok(false));
        assert_eq!(ok(json!(true)), Ok(true));
        assert_eq!(ok(json!(false)), Ok(false));
        assert_eq!(ok(json!(1)), Ok(true));
        assert_eq!(ok(json!(0.99)), Ok(false));
        assert_eq!(ok(json!(1.5)), Ok(true));
        assert_eq!(ok(json!("yes")), Ok(true));
        assert_eq!(ok(json!("False")), Ok(false));
        assert_eq!(ok(json!("1.0")), Ok(true));
        assert!(ok(Value::Null).unwrap_err().contains("NaN"));
        assert!(ok(json!({"a": 1})).unwrap_err().contains("dict"));
        assert!(ok(json!([1])).unwrap_err().contains("list"));
        assert!(ok(json!("maybe"))
            .unwrap_err()
            .contains("not a known value"));
        let half = InspectOptions {
            threshold: Some(0.5),
            ..InspectOptions::default()
        };
        assert_eq!(success_of(&json!(0.5), &half), Ok(true));
        assert_eq!(success_of(&json!(0.49), &half), Ok(false));
    }
}
