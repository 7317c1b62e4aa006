//! tau2-bench / τ³-bench results: a `Results` object `{info, tasks, simulations}`, a bare JSON
//! array of simulations, or the directory form (a `results.json` holding `info`, `tasks` and a
//! `simulation_index`, each simulation in its own `simulations/<id>.json`), when those files are
//! dropped together.
//!
//! The rules (also in `docs/formats.md`):
//! - one rollout per simulation; task id `task_id`; dataset `tau2/<info.environment_info.
//!   domain_name>`, model `info.agent_info.llm`, method `info.agent_info.implementation` (each
//!   can be set per file — leaderboard conversions sometimes mislabel the model);
//! - steps = the tool calls of `role: "assistant"` messages whose `requestor` is not `"user"`
//!   (telecom lets the simulated user call tools on their phone: those are not agent actions),
//!   each matched by `id` to the first not-yet-used later `role: "tool"` message;
//! - a step is rejected iff that message has `error: true`; where the field is absent (some
//!   converted leaderboard submissions drop it), iff its content starts with `Error`; a call that
//!   no tool message answers is rejected;
//! - success iff `reward_info.reward ≥ 1 − 1e-6`;
//! - cost: tokens = Σ over assistant messages of `usage.prompt_tokens + usage.completion_tokens`
//!   (where present), `latency_s` = `duration`, `usd` = `agent_cost` — the agent's side only,
//!   since the user simulator's cost is the benchmark's, not the method's;
//! - `termination_reason` is kept in `meta`, and rollouts can be excluded by it (e.g.
//!   `infrastructure_error`); every exclusion is counted in a file diagnostic;
//! - a simulation without any agent tool call is one terminal no-tool action, executable iff its
//!   task's evaluation criteria list no agent action or the episode succeeded;
//! - when `info.environment_info.tool_defs` holds the tool schemas, every step is first checked
//!   against them ([`super::schema_check`]).

use std::collections::HashSet;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

mod reader;

pub(crate) use reader::Tau2;

use super::draft::{cost_value, unanswered, unusable_message, Draft, RawStep, Verdict};
use super::pairing::pair_chat;
use super::schema_check::ToolSet;
use super::tau_bench::arguments;
use super::{read_object, Id, ImportOptions, SUCCESS_EPS};
use crate::rollout::Cost;

/// What a run's `info` and `tasks` tell about all its simulations.
#[derive(Debug, Default)]
pub(crate) struct RunContext {
    pub dataset: Option<String>,
    pub model: Option<String>,
    pub method: Option<String>,
    pub tools: Option<Arc<ToolSet>>,
    /// Problems reading `info.environment_info.tool_defs`, for a diagnostic.
    pub tools_problem: Option<String>,
    /// Tasks whose evaluation criteria list no agent action.
    pub no_action_tasks: HashSet<String>,
    /// Tasks that could not be read (their no-tool rule falls back to success).
    pub unreadable_tasks: u64,
    /// Simulation ids of a directory-form `results.json`.
    pub index: Option<HashSet<String>>,
}

#[derive(Deserialize, Default)]
struct WireInfo {
    #[serde(default)]
    agent_info: Option<WireAgentInfo>,
    #[serde(default)]
    environment_info: Option<WireEnvironmentInfo>,
}

#[derive(Deserialize, Default)]
struct WireAgentInfo {
    #[serde(default)]
    implementation: Option<String>,
    #[serde(default)]
    llm: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireEnvironmentInfo {
    #[serde(default)]
    domain_name: Option<String>,
    #[serde(default)]
    tool_defs: Option<Value>,
}

#[derive(Deserialize)]
struct WireTask {
    id: Id,
    #[serde(default)]
    evaluation_criteria: Option<WireCriteria>,
}

#[derive(Deserialize)]
struct WireCriteria {
    #[serde(default)]
    actions: Option<Vec<WireAction>>,
}

#[derive(Deserialize)]
struct WireAction {
    #[serde(default)]
    requestor: Option<String>,
}

#[derive(Deserialize)]
struct WireIndexEntry {
    id: Id,
}

impl RunContext {
    /// Reads `info` (the bytes of its value).
    pub(crate) fn from_info(info: &[u8], schema_checks: bool) -> Result<RunContext, String> {
        let wire: WireInfo = read_object(info, "an object").map_err(|e| format!("info: {e}"))?;
        let agent = wire.agent_info.unwrap_or_default();
        let env = wire.environment_info.unwrap_or_default();
        let mut ctx = RunContext {
            dataset: env
                .domain_name
                .filter(|d| !d.trim().is_empty())
                .map(|d| format!("tau2/{d}")),
            model: agent.llm.filter(|m| !m.trim().is_empty()),
            method: agent.implementation.filter(|m| !m.trim().is_empty()),
            ..RunContext::default()
        };
        if schema_checks {
            if let Some(defs) = env.tool_defs.filter(|d| !d.is_null()) {
                match ToolSet::from_json(&defs) {
                    Ok(set) => {
                        if !set.unusable.is_empty() {
                            ctx.tools_problem = Some(unusable_message(&set));
                        }
                        ctx.tools = Some(Arc::new(set));
                    }
                    Err(e) => {
                        ctx.tools_problem = Some(format!("info.environment_info.tool_defs: {e}"))
                    }
                }
            }
        }
        Ok(ctx)
    }

    /// Reads one element of `tasks`.
    pub(crate) fn add_task(&mut self, bytes: &[u8]) {
        match serde_json::from_slice::<WireTask>(bytes) {
            Ok(task) => {
                if let Some(actions) = task.evaluation_criteria.and_then(|c| c.actions) {
                    if actions
                        .iter()
                        .all(|a| a.requestor.as_deref() == Some("user"))
                    {
                        self.no_action_tasks.insert(task.id.0);
                    }
                }
            }
            Err(_) => self.unreadable_tasks += 1,
        }
    }

    /// Reads one element of a directory-form `simulation_index`.
    pub(crate) fn add_index_entry(&mut self, bytes: &[u8]) {
        if let Ok(e) = serde_json::from_slice::<WireIndexEntry>(bytes) {
            self.index.get_or_insert_with(HashSet::new).insert(e.id.0);
        }
    }
}

#[derive(Deserialize)]
struct WireSimulation {
    #[serde(default)]
    id: Option<Id>,
    task_id: Id,
    #[serde(default)]
    trial: Option<i64>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    termination_reason: Option<String>,
    #[serde(default)]
    agent_cost: Option<f64>,
    #[serde(default)]
    reward_info: Option<WireReward>,
    #[serde(default)]
    messages: Option<Vec<WireMessage>>,
    #[serde(default)]
    ticks: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct WireReward {
    reward: Option<f64>,
}

#[derive(Deserialize)]
struct WireMessage {
    role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    error: Option<bool>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    requestor: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<f64>,
    #[serde(default)]
    completion_tokens: Option<f64>,
}

/// One simulation, read without its run's context.
#[derive(Clone, Debug)]
pub(crate) struct Simulation {
    pub id: Option<String>,
    pub task_id: String,
    pub termination_reason: Option<String>,
    pub success: bool,
    pub steps: Vec<RawStep>,
    pub cost: Cost,
    pub meta: Map<String, Value>,
}

/// Reads one simulation object.
pub(crate) fn read_simulation(bytes: &[u8]) -> Result<Simulation, String> {
    let wire: WireSimulation =
        read_object(bytes, "a tau2 simulation {task_id, messages, reward_info}")?;
    let reward = wire.reward_info.and_then(|r| r.reward).ok_or(
        "reward_info.reward is missing: the simulation was not evaluated, so its success is \
         unknown",
    )?;
    if !reward.is_finite() {
        return Err(format!(
            "reward_info.reward must be a finite number, found {reward}"
        ));
    }
    let Some(messages) = wire.messages else {
        return Err(if wire.ticks.is_some() {
            "a full-duplex (voice) simulation keeps ticks instead of messages; only half-duplex \
             simulations with messages are supported"
                .to_string()
        } else {
            "missing field `messages`".to_string()
        });
    };
    let tokens = messages
        .iter()
        .filter(|m| m.role == "assistant")
        .filter_map(|m| m.usage.as_ref())
        .map(|u| u.prompt_tokens.unwrap_or(0.0) + u.completion_tokens.unwrap_or(0.0))
        .fold(None, |acc: Option<f64>, x| Some(acc.unwrap_or(0.0) + x));
    let mut meta = Map::new();
    meta.insert("format".into(), "tau2".into());
    if let Some(id) = &wire.id {
        meta.insert("simulation_id".into(), id.0.clone().into());
    }
    if let Some(t) = wire.trial {
        meta.insert("trial".into(), t.into());
    }
    meta.insert("reward".into(), reward.into());
    if let Some(r) = &wire.termination_reason {
        meta.insert("termination_reason".into(), r.clone().into());
    }
    Ok(Simulation {
        id: wire.id.map(|i| i.0),
        task_id: wire.task_id.0,
        termination_reason: wire.termination_reason,
        success: reward >= 1.0 - SUCCESS_EPS,
        steps: steps(&messages),
        cost: Cost {
            tokens: cost_value(tokens),
            latency_s: cost_value(wire.duration),
            usd: cost_value(wire.agent_cost),
        },
        meta,
    })
}

fn steps(messages: &[WireMessage]) -> Vec<RawStep> {
    // tau2's tool messages name the call they answer by `id`.
    let answers = pair_chat(
        messages,
        |m| m.role.as_str(),
        |m| {
            m.tool_calls
                .iter()
                .flatten()
                .map(|c| c.id.as_deref())
                .collect()
        },
        |m| m.id.as_deref(),
    );
    let mut out = Vec::new();
    for (m, answers) in messages.iter().zip(answers) {
        for (call, answer) in m.tool_calls.iter().flatten().zip(answers) {
            if call.requestor.as_deref() == Some("user") {
                continue;
            }
            let verdict = match answer.map(|j| &messages[j]) {
                None => unanswered("id", call.id.as_deref()),
                Some(reply) => {
                    let text = reply.content.as_ref().and_then(Value::as_str);
                    let rejected = match reply.error {
                        Some(e) => e,
                        None => text.is_some_and(|t| t.starts_with("Error")),
                    };
                    if rejected {
                        Verdict::Rejected(text.map(str::to_string))
                    } else {
                        Verdict::Accepted
                    }
                }
            };
            out.push(RawStep {
                tool: Some(call.name.clone()),
                args: call.arguments.as_ref().map(arguments),
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

/// Why a simulation did not become a rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// Excluded by its termination reason (counted per reason).
    Excluded(String),
}

/// Turns a simulation into a draft with its run's context and the file's options.
pub(crate) fn draft(
    sim: Simulation,
    ctx: &RunContext,
    options: &ImportOptions,
) -> Result<Draft, Skip> {
    if let Some(reason) = &sim.termination_reason {
        if options.exclude_termination.iter().any(|r| r == reason) {
            return Err(Skip::Excluded(reason.clone()));
        }
    }
    let no_action = ctx.no_action_tasks.contains(&sim.task_id);
    let mut d = Draft {
        dataset: ctx.dataset.clone().unwrap_or_else(|| "tau2".to_string()),
        task_id: sim.task_id,
        model: ctx
            .model
            .clone()
            .unwrap_or_else(|| "unknown-model".to_string()),
        method: ctx
            .method
            .clone()
            .unwrap_or_else(|| "unknown-method".to_string()),
        success: sim.success,
        no_tool_ok: sim.success || no_action,
        steps: sim.steps,
        cost: sim.cost,
        crash: None,
        run: None,
        meta: sim.meta,
    };
    d.apply(options);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::canonical::parse_line;

    const SIM: &str = r#"{"id": "s1", "task_id": "7", "trial": 0, "duration": 12.5,
      "termination_reason": "user_stop", "agent_cost": 0.02,
      "reward_info": {"reward": 1.0},
      "messages": [
        {"role": "assistant", "content": "Hi", "tool_calls": null, "usage": null},
        {"role": "assistant", "content": null, "usage": {"prompt_tokens": 100, "completion_tokens": 5},
         "tool_calls": [{"id": "a", "name": "get", "arguments": {"x": 1}, "requestor": "assistant"}]},
        {"role": "tool", "id": "a", "content": "Error: shadowed by the flag", "error": false, "requestor": "assistant"},
        {"role": "user", "content": null, "tool_calls": [{"id": "u", "name": "toggle", "arguments": {}, "requestor": "user"}]},
        {"role": "tool", "id": "u", "content": "Error: user side", "error": true, "requestor": "user"},
        {"role": "assistant", "content": null, "usage": {"prompt_tokens": 200, "completion_tokens": 7},
         "tool_calls": [{"id": "b", "name": "set", "arguments": {}},
                        {"id": "c", "name": "put", "arguments": {}}]},
        {"role": "tool", "id": "b", "content": "Error: no field"},
        {"role": "tool", "id": "c", "content": "done", "error": true}
      ]}"#;

    #[test]
    fn one_simulation() {
        let sim = read_simulation(SIM.as_bytes()).unwrap();
        assert_eq!(sim.task_id, "7");
        assert!(sim.success);
        let v: Vec<&Verdict> = sim.steps.iter().map(|s| &s.verdict).collect();
        assert_eq!(
            v,
            [
                &Verdict::Accepted,
                &Verdict::Rejected(Some("Error: no field".into())),
                &Verdict::Rejected(Some("done".into()))
            ]
        );
        assert_eq!(sim.cost.tokens, Some(312.0));
        assert_eq!(sim.cost.latency_s, Some(12.5));
        assert_eq!(sim.cost.usd, Some(0.02));
        let ctx = RunContext {
            dataset: Some("tau2/telecom".into()),
            model: Some("gpt-4o".into()),
            method: Some("llm_agent".into()),
            ..RunContext::default()
        };
        let d = draft(sim.clone(), &ctx, &ImportOptions::default()).unwrap();
        let r = parse_line(d.render(None).as_bytes()).unwrap();
        assert_eq!((r.horizon, r.fed, r.success), (3, 2, true));
        let opts = ImportOptions {
            exclude_termination: vec!["user_stop".into()],
            model: Some("other".into()),
            ..ImportOptions::default()
        };
        assert_eq!(
            draft(sim.clone(), &ctx, &opts),
            Err(Skip::Excluded("user_stop".into()))
        );
        let opts = ImportOptions {
            model: Some("other".into()),
            ..ImportOptions::default()
        };
        assert_eq!(draft(sim, &ctx, &opts).unwrap().model, "other");
    }

    #[test]
    fn context_and_bad_simulations() {
        let ctx = RunContext::from_info(
            br#"{"agent_info": {"implementation": "llm_agent", "llm": "m"},
                 "environment_info": {"domain_name": "airline", "tool_defs": {
                   "get": {"name": "get", "params": {"type": "object", "required": ["x"]}}}}}"#,
            true,
        )
        .unwrap();
        assert_eq!(ctx.dataset.as_deref(), Some("tau2/airline"));
        assert_eq!(ctx.tools.as_ref().map(|t| t.len()), Some(1));
        assert!(RunContext::from_info(br#"{"agent_info": 3}"#, true)
            .unwrap_err()
            .contains("agent_info"));
        let e = read_simulation(br#"{"task_id": "1", "messages": []}"#).unwrap_err();
        assert!(e.contains("reward_info"), "{e}");
        let e = read_simulation(br#"{"task_id": "1", "reward_info": {"reward": 1}, "ticks": []}"#)
            .unwrap_err();
        assert!(e.contains("full-duplex"), "{e}");
        let e = read_simulation(br#"{"reward_info": {"reward": 1}, "messages": []}"#).unwrap_err();
        assert!(e.contains("task_id"), "{e}");
        let mut ctx = RunContext::default();
        ctx.add_task(
            br#"{"id": "1", "evaluation_criteria": {"actions": [{"requestor": "user"}]}}"#,
        );
        ctx.add_task(br#"{"id": 2, "evaluation_criteria": {"actions": [{"name": "x"}]}}"#);
        ctx.add_task(br#"{"id": 3, "evaluation_criteria": null}"#);
        ctx.add_task(br#"{"nope": 1}"#);
        assert!(ctx.no_action_tasks.contains("1") && ctx.no_action_tasks.len() == 1);
        assert_eq!(ctx.unreadable_tasks, 1);
    }
}
