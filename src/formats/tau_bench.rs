//! tau-bench (v1) results: one JSON array of `{task_id, trial, reward, info, traj}`, as
//! `run.py` writes them and as the repository's `historical_trajectories/` ship them.
//!
//! The rules (also in `docs/formats.md`):
//! - one rollout per element; task id = `task_id` as text; repeated trials of a task are repeated
//!   rollouts of it (the file's pass^k comes from them, see [`crate::score::ConditionMetrics::pass_hat`]);
//! - steps = every `tool_calls` entry of `role: "assistant"` messages, in order, each matched to
//!   the first not-yet-used later `role: "tool"` message with the same `tool_call_id` (the
//!   historical files reuse ids within one trajectory, so "first unused after the call" is what
//!   pairs them as the run did);
//! - a step is rejected iff that message's content starts with `Error` (tau-bench's environment
//!   answers a failed call with `Error: …`) or `Unknown action` (a tool that does not exist), or
//!   no tool message answers the call; the content is kept as the step's error;
//! - success iff `reward ≥ 1 − 1e-6` (rewards are 0/1 up to float noise);
//! - dataset `tau-bench/<domain>`, the domain read from the system prompt's policy heading
//!   (`# Airline Agent Policy`, `# Retail agent policy`); model from the file name (tau-bench
//!   names result files after the model: `gpt-4o-airline.json`,
//!   `tool-calling-gpt-4o-0.0_range_0--1_…json`); method `tool-calling`; all three can be set per
//!   file;
//! - a trajectory without any tool call is one terminal no-tool action, executable iff the
//!   task's ground truth lists no action (`info.task.actions` empty) or the episode succeeded —
//!   the benchmark's own verdict is the evidence that finishing without tools was allowed.

use crate::formats::chat::WireMessage;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::canonical::emit;
use super::chat::chat_pairing;
use super::draft::{last_line, unanswered, Draft, RawStep, Verdict};
use super::sink::{for_each_element, Sink};
use super::{read_object, Format, FormatReader, Id, Keys, LineShape, SUCCESS_EPS};
use crate::rollout::Cost;

/// The tau-bench reader: a whole document per file, nothing across files.
pub(crate) struct TauBench;

/// The dataset of episodes whose domain is unknown; known domains are `tau-bench/<domain>`.
const DATASET: &str = "tau-bench";

impl FormatReader for TauBench {
    fn formats(&self) -> &'static [Format] {
        &[Format::TauBench]
    }

    /// A results array written on one line.
    fn recognise_line(&self, keys: &Keys<'_>) -> Option<LineShape> {
        keys.contains("traj").then_some(LineShape::Document)
    }

    fn recognise_array(&self, first: &Keys<'_>) -> Option<Format> {
        first.contains("traj").then_some(Format::TauBench)
    }

    fn document(&mut self, out: &mut Sink<'_>, file: usize, _: Format, bytes: &[u8], open: usize) {
        let defaults = Defaults::for_file(out.name(file));
        // Crashed episodes have no system prompt to tell their domain: they wait for the file's
        // other episodes (or its name) to tell it, so they stay in the file's dataset.
        let mut crashed = Vec::new();
        let mut dataset: Option<String> = None;
        let end = for_each_element(
            out,
            file,
            bytes,
            open,
            |out, i, source, element| match convert(element, &defaults) {
                Ok(d) if d.crash.is_some() => crashed.push((d, source)),
                Ok(mut d) => {
                    if dataset.is_none() && d.dataset != DATASET {
                        dataset = Some(d.dataset.clone());
                    }
                    d.apply(out.options(file));
                    d.run = Some(out.name(file).to_string());
                    emit(out, file, &d, None, source);
                }
                Err(e) => out.reject(file, Some(source.line), format!("element {i}: {e}")),
            },
        );
        out.trailing(file, bytes, end);
        if crashed.is_empty() {
            return;
        }
        let options = out.options(file);
        if !options.crashed.counts(true) {
            *out.import(file)
                .excluded
                .entry("crashed before any step".to_string())
                .or_default() += crashed.len() as u64;
            return;
        }
        let dataset = dataset
            .or_else(|| domain_from_file_name(out.name(file)).map(|d| format!("{DATASET}/{d}")));
        for (mut d, source) in crashed {
            if let Some(name) = &dataset {
                d.dataset = name.clone();
                d.meta.remove("domain");
            }
            d.apply(out.options(file));
            d.run = Some(out.name(file).to_string());
            emit(out, file, &d, None, source);
        }
    }

    fn reread(&self, _: Format, bytes: &[u8], _success: bool) -> Result<Draft, String> {
        convert(bytes, &Defaults::for_file(""))
    }
}

/// Per-file defaults that do not depend on the element.
#[derive(Clone, Debug)]
pub(crate) struct Defaults {
    pub model: String,
}

impl Defaults {
    pub(crate) fn for_file(name: &str) -> Defaults {
        Defaults {
            model: model_from_file_name(name),
        }
    }
}

#[derive(Deserialize)]
struct WireResult {
    task_id: Id,
    #[serde(default)]
    trial: Option<i64>,
    reward: f64,
    #[serde(default)]
    info: Option<Value>,
    traj: Vec<WireMessage>,
}

/// Converts one array element. `Err` is a message for the element's diagnostic.
pub(crate) fn convert(bytes: &[u8], defaults: &Defaults) -> Result<Draft, String> {
    let wire: WireResult = read_object(
        bytes,
        "a tau-bench result {task_id, trial, reward, info, traj}",
    )?;
    if !wire.reward.is_finite() {
        return Err(format!(
            "reward must be a finite number, found {}",
            wire.reward
        ));
    }
    let success = wire.reward >= 1.0 - SUCCESS_EPS;
    let domain = wire
        .traj
        .iter()
        .find(|m| m.role == "system")
        .and_then(|m| m.content.as_ref()?.as_str())
        .and_then(domain_from_policy);
    let dataset = match &domain {
        Some(d) => format!("{DATASET}/{d}"),
        None => DATASET.to_string(),
    };
    // An episode that crashed before the agent acted: no trajectory, and `info` holds the
    // error (`{error, traceback}`) instead of the task.
    let info_text = |key: &str| {
        wire.info
            .as_ref()
            .and_then(|i| i.get(key)?.as_str())
            .map(str::trim)
            .filter(|t| !t.is_empty())
    };
    let crash = (wire.traj.is_empty() && !success)
        .then(|| {
            info_text("error")
                .map(str::to_string)
                .or_else(|| info_text("traceback").map(|t| last_line(t).trim_start().to_string()))
        })
        .flatten();
    let no_action_task = wire
        .info
        .as_ref()
        .and_then(|i| i.get("task")?.get("actions")?.as_array().map(Vec::is_empty))
        .unwrap_or(false);

    let steps = steps(&wire.traj);
    let mut meta = Map::new();
    meta.insert("format".into(), "tau-bench".into());
    if let Some(t) = wire.trial {
        meta.insert("trial".into(), t.into());
    }
    meta.insert("reward".into(), wire.reward.into());
    if domain.is_none() {
        meta.insert(
            "domain".into(),
            "unknown (no policy heading in the system prompt)".into(),
        );
    }
    Ok(Draft {
        dataset,
        task_id: wire.task_id.0,
        model: defaults.model.clone(),
        method: "tool-calling".to_string(),
        success,
        no_tool_ok: success || no_action_task,
        steps,
        cost: Cost::default(),
        crash,
        run: None,
        meta,
    })
}

fn steps(traj: &[WireMessage]) -> Vec<RawStep> {
    let answers = chat_pairing(traj);
    let mut out = Vec::new();
    for (m, answers) in traj.iter().zip(answers) {
        for (call, answer) in m.tool_calls.iter().flatten().zip(answers) {
            let verdict = match answer.map(|j| &traj[j]) {
                None => unanswered("tool_call_id", call.id.as_deref()),
                Some(reply) => {
                    let text = reply.content.as_ref().and_then(Value::as_str).unwrap_or("");
                    if text.starts_with("Error") || text.starts_with("Unknown action") {
                        Verdict::Rejected(Some(text.to_string()))
                    } else {
                        Verdict::Accepted
                    }
                }
            };
            out.push(RawStep {
                tool: Some(call.function.name.clone()),
                args: call.function.arguments.as_ref().map(arguments),
                verdict,
                call: None,
                agent_tool: None,
                reject_source: None,
                label: None,
            });
        }
    }
    out
}

/// OpenAI-style arguments are a JSON string; a string that is not JSON is kept as it is (and
/// fails a schema check that expects an object, as it should).
pub(crate) fn arguments(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
        other => other.clone(),
    }
}

/// The domain a tau-bench result file's name states (`tool-calling-retail-…json`).
fn domain_from_file_name(name: &str) -> Option<&'static str> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    base.split(['-', '_', '.'])
        .find_map(|part| ["airline", "retail"].into_iter().find(|d| *d == part))
}

/// `# Airline Agent Policy` → `airline`.
fn domain_from_policy(prompt: &str) -> Option<String> {
    let heading = prompt.lines().find(|l| l.trim_start().starts_with('#'))?;
    let title = heading
        .trim_start()
        .trim_start_matches('#')
        .trim()
        .to_lowercase();
    let domain = title.strip_suffix("agent policy")?.trim();
    (!domain.is_empty() && !domain.contains(char::is_whitespace)).then(|| domain.to_string())
}

/// The model named by a tau-bench result file: its stem without directories, without tau-bench's
/// run suffix (`-0.0_range_0--1_user-…`), agent strategy prefix and domain.
pub(crate) fn model_from_file_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut stem = base.strip_suffix(".json").unwrap_or(base).to_string();
    if let Some(cut) = stem.find("_range_") {
        stem.truncate(cut);
        // `<strategy>-<model>-<temperature>`: drop the temperature.
        if let Some((head, temp)) = stem.rsplit_once('-') {
            if temp.parse::<f64>().is_ok() {
                stem = head.to_string();
            }
        }
    }
    for prefix in ["tool-calling-", "act-", "react-", "few-shot-"] {
        if let Some(rest) = stem.strip_prefix(prefix) {
            stem = rest.to_string();
        }
    }
    for domain in ["airline", "retail"] {
        for sep in ['-', '_'] {
            if let Some(rest) = stem.strip_suffix(&format!("{sep}{domain}")) {
                stem = rest.to_string();
            }
            if let Some(rest) = stem.strip_prefix(&format!("{domain}{sep}")) {
                stem = rest.to_string();
            }
        }
    }
    if stem.trim().is_empty() {
        "unknown-model".to_string()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::canonical::parse_line;

    #[test]
    fn names() {
        assert_eq!(model_from_file_name("runs/gpt-4o-airline.json"), "gpt-4o");
        assert_eq!(
            model_from_file_name("tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_0906.json"),
            "gpt-4o"
        );
        assert_eq!(
            model_from_file_name("claude-3-5-sonnet-retail.json"),
            "claude-3-5-sonnet"
        );
        assert_eq!(model_from_file_name("airline.json"), "airline");
        assert_eq!(
            domain_from_policy("# Airline Agent Policy\n\nx").as_deref(),
            Some("airline")
        );
        assert_eq!(
            domain_from_policy("# Retail agent policy\n").as_deref(),
            Some("retail")
        );
        assert_eq!(domain_from_policy("You are helpful."), None);
    }

    #[test]
    fn one_element() {
        let e = br##"{"task_id": 3, "trial": 1, "reward": 0.9999999, "info": {"task": {"actions": []}},
          "traj": [
            {"role": "system", "content": "# Retail agent policy\n..."},
            {"role": "assistant", "content": null, "tool_calls": [
              {"id": "c1", "type": "function", "function": {"name": "find", "arguments": "{\"q\":1}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "find", "content": "[]"},
            {"role": "assistant", "content": null, "tool_calls": [
              {"id": "c1", "function": {"name": "buy", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "buy", "content": "Error: out of stock"},
            {"role": "assistant", "tool_calls": [{"id": "c9", "function": {"name": "x", "arguments": "{"}}]},
            {"role": "assistant", "tool_calls": [{"id": "c2", "function": {"name": "y"}}]},
            {"role": "tool", "tool_call_id": "c2", "content": "Unknown action y"}
          ]}"##;
        let d = convert(e, &Defaults::for_file("m-retail.json")).unwrap();
        assert_eq!(
            (d.dataset.as_str(), d.task_id.as_str(), d.model.as_str()),
            ("tau-bench/retail", "3", "m")
        );
        assert!(d.success);
        let verdicts: Vec<bool> = d
            .steps
            .iter()
            .map(|s| s.verdict == Verdict::Accepted)
            .collect();
        assert_eq!(verdicts, [true, false, false, false]);
        assert_eq!(
            d.steps[1].verdict,
            Verdict::Rejected(Some("Error: out of stock".into()))
        );
        assert_eq!(d.steps[2].args, Some(Value::String("{".into())));
        let r = parse_line(d.render(None).as_bytes()).unwrap();
        assert_eq!((r.horizon, r.fed), (4, 2));
    }

    #[test]
    fn bad_elements_say_where() {
        let d = Defaults::for_file("m.json");
        let e = convert(br#"{"trial": 0, "reward": 1, "traj": []}"#, &d).unwrap_err();
        assert!(e.contains("task_id"), "{e}");
        let e = convert(br#"{"task_id": 1, "reward": "1", "traj": []}"#, &d).unwrap_err();
        assert!(e.contains("reward"), "{e}");
        let e = convert(br#"{"task_id": 1, "reward": 1, "traj": [{"role": 3}]}"#, &d).unwrap_err();
        assert!(e.contains("traj[0].role"), "{e}");
    }
}
