//! ToolSandbox runs (apple/ToolSandbox): a run folder
//! `agent_<model>_user_<user>_<timestamp>/` holding `result_summary.json` and, per scenario,
//! `trajectories/<scenario>/execution_context.json` (always written) and `conversation.json`
//! (written only when the scenario did not raise).
//!
//! The rules (also in `docs/formats.md`; the file layouts are described in the project's
//! ToolSandbox format notes):
//! - one rollout per scenario with trajectory files: dataset `toolsandbox`, task id = the
//!   scenario `name`, model = the agent of the run folder name (a model with `/` spans folders),
//!   method `default` unless set; `meta` keeps categories, similarity, milestone/minefield
//!   similarity, turn count, how it ended (`termination_reason`: `end_conversation`,
//!   `max_turns` or `crash`) and the exception type;
//! - steps = the AGENT→EXECUTION_ENVIRONMENT rows of `_dbs.SANDBOX` (headguard rows, whose
//!   sender is null, and the user simulator's few-shot rows, visible to USER only, dropped),
//!   named by the execution-facing tool of the generated code line (scrambled names resolved;
//!   the agent-facing name kept as `agent_tool`), arguments read from the code's Python literal;
//!   each paired by `openai_tool_call_id` with the first later EXECUTION_ENVIRONMENT→AGENT row
//!   (parallel replies come back permuted); rejected iff that row's `tool_call_exception` is
//!   non-null, whose text is the step's error;
//! - a crash (`traceback` set): unanswered calls are rejected; `KeyError` / `JSONDecodeError`
//!   (an unknown tool or invalid JSON arguments, raised in the agent before the call reached the
//!   sandbox) add one final rejected call named from the traceback; provider errors
//!   (`BadRequestError`, `InternalServerError`, `APITimeoutError`) are excluded unless kept,
//!   and counted either way;
//! - a scenario that ran out of turns (its last row still has `conversation_active`) drops the
//!   calls that never got a reply: they were cut off, not executed;
//! - success = no traceback and `similarity ≥ τ` (τ = 1.0 unless set: ToolSandbox defines no
//!   threshold, so the report says which one was used);
//! - a scenario without any agent call is one terminal no-tool action, executable iff it
//!   succeeded;
//! - `conversation.json` alone is read by the fallback rule: calls in `tool_calls` order, paired
//!   with `role: "tool"` messages by `tool_call_id`, failed iff the content looks like an
//!   exception (`ExcType: …`, a SyntaxError block, or the harness's "incomplete code" message).
//!
//! Run-level checks: scenarios of the summary without trajectory files are counted (never
//! silently dropped); a run where more than 90 % of the calls fail with `SyntaxError` (a known
//! harness bug with `-` in tool-call ids) is flagged; the summary's mean similarity
//! (`ALL_CATEGORIES`) is recomputed from its rows.
//!
//! Everything here is pure: bytes in, drafts and messages out. Each execution context is reduced
//! to its calls as soon as it is read ([`read_execution_context`]), row by row, so a 50 MB
//! execution context costs its bytes plus the calls, never a JSON tree. A `conversation.json`,
//! usually answered by its scenario's execution context (the next file of a run folder), is
//! kept unread until it is needed, within a budget (`reader::Read`).

use crate::formats::chat::WireMessage;
use std::collections::{BTreeMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::chat::chat_pairing;
use super::draft::{last_line, Draft, RawStep, Verdict};
use super::object::read_object_prefix;
use super::pairing::pair_messages;
use super::pyrepr::{self, Py};
use super::read_object;
use super::scan::{
    elements, member_start, members, skip_ws, value_end, LineCounter, ScanError, Scanned,
};
use crate::rollout::Cost;

mod reader;
#[cfg(test)]
mod tests;

pub(crate) use reader::ToolSandbox;

/// The dataset name of every ToolSandbox rollout.
pub const DATASET: &str = "toolsandbox";
/// The method when none is set.
pub const DEFAULT_METHOD: &str = "default";
/// The default success threshold on `similarity`.
pub const DEFAULT_TAU: f64 = 1.0;
/// Exception types of provider / infrastructure failures (not the agent's doing).
pub const PROVIDER_ERRORS: [&str; 3] =
    ["BadRequestError", "InternalServerError", "APITimeoutError"];
/// Share of calls failing with `SyntaxError` above which a run is flagged.
pub const SYNTAX_ERROR_SHARE: f64 = 0.9;
/// Largest difference tolerated between the summary's mean similarity and the recomputed one
/// (both are sums of the same doubles; only the summation order may differ).
pub const SELF_CHECK_TOLERANCE: f64 = 1e-9;

/// How ToolSandbox scenarios are scored.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Success threshold on `similarity`, in [0, 1].
    pub tau: f64,
    /// Keep scenarios that failed with a provider error (as failures) instead of excluding them.
    pub keep_provider_errors: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tau: DEFAULT_TAU,
            keep_provider_errors: false,
        }
    }
}

// Thresholds compare by their bits, so options are `Eq` (they are compared to tell whether a
// file's settings changed; a NaN never passes `validate`).
impl PartialEq for Options {
    fn eq(&self, other: &Self) -> bool {
        self.tau.to_bits() == other.tau.to_bits()
            && self.keep_provider_errors == other.keep_provider_errors
    }
}

impl Eq for Options {}

impl Options {
    /// The success rule these options give, as the report states it.
    pub fn success_rule(&self) -> String {
        format!(
            "no traceback and similarity ≥ {} (ToolSandbox defines no threshold)",
            self.tau
        )
    }

    /// Checks the threshold; the message says what to change.
    pub fn validate(&self) -> Result<(), String> {
        if (0.0..=1.0).contains(&self.tau) {
            Ok(())
        } else {
            Err(format!(
                "the ToolSandbox similarity threshold must be between 0 and 1, got {}",
                self.tau
            ))
        }
    }
}

// ---- paths ----------------------------------------------------------------------------------

/// What a run folder's name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunName {
    pub agent: String,
    pub user: String,
    pub timestamp: String,
}

fn components(path: &str) -> Vec<&str> {
    super::path::components(path).collect()
}

/// The folder part of a file name (`""` for a bare name).
pub(crate) fn parent(path: &str) -> &str {
    match path.rfind(['/', '\\']) {
        Some(i) => &path[..i],
        None => "",
    }
}

/// Parses a run folder path: the components from the one starting with `agent_` down to the
/// run folder, joined with `/`, must read `agent_<agent>_user_<user>_<mm_dd_yyyy_HH_MM_SS>`.
/// The innermost such component wins: folders above the layout (a repository zip's
/// `agent_hard_benchmark-<commit>/`) may start with `agent_` too.
pub(crate) fn run_name(dir: &str) -> Option<RunName> {
    let parts = components(dir);
    (0..parts.len())
        .rev()
        .filter(|&i| parts[i].starts_with("agent_"))
        .find_map(|i| parse_run_folder(parts[i..].join("/").strip_prefix("agent_")?))
}

/// The run's name when its folder was copied out of its `agent_<provider>/` folder (so the path
/// reads `<model>_user_<user>_<timestamp>` with no `agent_`): the innermost component holding
/// `_user_` starts it. The agent is then the model without its provider (`o3-high`).
pub(crate) fn run_name_without_agent_folder(dir: &str) -> Option<RunName> {
    let parts = components(dir);
    (0..parts.len())
        .rev()
        .filter(|&i| parts[i].get(1..).is_some_and(|p| p.contains("_user_")))
        .find_map(|i| parse_run_folder(&parts[i..].join("/")))
}

/// The model of a run folder whose path does not say it: the folder's own name (the last
/// component of `dir`), else `fallback` (the summary file's stem). Never a name shared by
/// every such run, so two unnamed runs never merge into one condition.
pub(crate) fn model_from_folder(dir: &str, fallback: &str) -> String {
    components(dir)
        .last()
        .map_or_else(|| fallback.to_string(), |c| c.to_string())
}

fn parse_run_folder(rest: &str) -> Option<RunName> {
    // `_` + 19 characters `dd_dd_dddd_dd_dd_dd`.
    if rest.len() < 20 || !rest.is_char_boundary(rest.len() - 20) {
        return None;
    }
    let (head, stamp) = rest.split_at(rest.len() - 20);
    let stamp = stamp.strip_prefix('_')?;
    let shape = stamp.bytes().enumerate().all(|(i, c)| match i {
        2 | 5 | 10 | 13 | 16 => c == b'_',
        _ => c.is_ascii_digit(),
    });
    if !shape {
        return None;
    }
    // `(.+?)_user_(.+)`: the first `_user_` after at least one character.
    let cut = head.get(1..)?.find("_user_")? + 1;
    let (agent, user) = (&head[..cut], &head[cut + "_user_".len()..]);
    // provider/org/model at the most: more folders are above the layout, not a name.
    if agent.matches('/').count() > 2 {
        return None;
    }
    (!user.is_empty()).then(|| RunName {
        agent: agent.to_string(),
        user: user.to_string(),
        timestamp: stamp.to_string(),
    })
}

/// Which trajectory file a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TrajectoryKind {
    ExecutionContext,
    Conversation,
}

/// Where a trajectory file sits: `<run>/trajectories/<scenario>/<file>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TrajectoryPath {
    /// The run folder (may be empty when the drop starts at `trajectories/`).
    pub run_dir: String,
    /// `None` when the name does not hold the scenario's folder.
    pub scenario: Option<String>,
}

/// The run folder and scenario of a trajectory file name.
pub(crate) fn trajectory_path(name: &str) -> TrajectoryPath {
    let parts = components(name);
    let n = parts.len();
    if n >= 3 && parts[n - 3] == "trajectories" {
        TrajectoryPath {
            run_dir: parts[..n - 3].join("/"),
            scenario: Some(parts[n - 2].to_string()),
        }
    } else if n >= 2 {
        // `<scenario>/execution_context.json` without the `trajectories` folder.
        TrajectoryPath {
            run_dir: String::new(),
            scenario: Some(parts[n - 2].to_string()),
        }
    } else {
        TrajectoryPath {
            run_dir: String::new(),
            scenario: None,
        }
    }
}

/// The run folder of a `result_summary.json`, normalised like [`trajectory_path`]'s.
pub(crate) fn summary_dir(name: &str) -> String {
    components(parent(name)).join("/")
}

// ---- result_summary.json --------------------------------------------------------------------

/// One row of `per_scenario_results`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ScenarioRow {
    pub name: String,
    pub categories: Vec<String>,
    pub traceback: Option<String>,
    pub exception_type: Option<String>,
    pub similarity: f64,
    pub milestone_similarity: Option<f64>,
    pub minefield_similarity: Option<f64>,
    pub turn_count: Option<f64>,
}

impl ScenarioRow {
    /// The benchmark's verdict at threshold `tau`.
    pub(crate) fn success(&self, tau: f64) -> bool {
        self.traceback.is_none() && self.similarity >= tau
    }

    /// The provider error this scenario failed with, if any.
    pub(crate) fn provider_error(&self) -> Option<&str> {
        let t = self.exception_type.as_deref()?;
        (self.traceback.is_some() && PROVIDER_ERRORS.contains(&t)).then_some(t)
    }
}

#[derive(Deserialize)]
struct WireRow {
    name: String,
    #[serde(default)]
    categories: Option<Vec<String>>,
    #[serde(default)]
    traceback: Option<String>,
    #[serde(default)]
    exception_type: Option<String>,
    similarity: f64,
    #[serde(default)]
    milestone_similarity: Option<f64>,
    #[serde(default)]
    minefield_similarity: Option<f64>,
    #[serde(default)]
    turn_count: Option<f64>,
}

#[derive(Deserialize)]
struct WireAggregate {
    #[serde(default)]
    similarity: Option<f64>,
}

/// A problem located in a file: the 1-based line where known.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Located {
    pub line: Option<u64>,
    pub message: String,
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// What `result_summary.json` holds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RunSummary {
    /// Rows that could be read, in file order.
    pub rows: Vec<ScenarioRow>,
    /// Rows (or parts of the file) that could not be read.
    pub problems: Vec<Located>,
    /// `category_aggregated_results.ALL_CATEGORIES.similarity`.
    pub all_categories_similarity: Option<f64>,
    pub git_sha: Option<String>,
}

/// Whether a JSON document's top-level keys are those of a `result_summary.json`.
pub(crate) fn is_summary(keys: &[&str]) -> bool {
    keys.contains(&"per_scenario_results")
}

/// Whether a JSON document's top-level keys are those of an `execution_context.json`.
pub(crate) fn is_execution_context(keys: &[&str]) -> bool {
    keys.contains(&"_dbs")
}

/// Whether the first element of a JSON array looks like an OpenAI message of a
/// `conversation.json` (`role` + `content`, no task fields).
pub(crate) fn is_conversation_message(keys: &[&str]) -> bool {
    keys.contains(&"role") && !keys.contains(&"task_id") && !keys.contains(&"traj")
}

/// Reads `result_summary.json`: each row on its own, so a bad row costs that row only.
/// Fails only when the file is not an object with a `per_scenario_results` array.
#[cfg(test)]
pub(crate) fn read_summary(bytes: &[u8]) -> Result<RunSummary, Located> {
    read_summary_scanned(bytes, None)
}

/// [`read_summary`] given the file's top-level object as classification scanned it.
pub(crate) fn read_summary_scanned(
    bytes: &[u8],
    scanned: Option<&Scanned>,
) -> Result<RunSummary, Located> {
    let open = open_brace(bytes).ok_or_else(|| Located {
        line: None,
        message: "expected a ToolSandbox result_summary.json (a JSON object)".into(),
    })?;
    let mut lc = LineCounter::new(bytes);
    let (members, problem) = match scanned.filter(|s| s.open == open) {
        Some(s) => (s.members.clone(), s.problem.clone()),
        None => members(bytes, open),
    };
    let mut out = RunSummary::default();
    let Some(rows) = members.iter().find(|m| m.key == "per_scenario_results") else {
        return Err(cut_or_missing(
            &mut lc,
            bytes,
            problem,
            "per_scenario_results",
        ));
    };
    if bytes.get(rows.start) != Some(&b'[') {
        return Err(Located {
            line: Some(lc.line_at(rows.start)),
            message: "per_scenario_results: expected an array of scenario rows".into(),
        });
    }
    let mut names: HashSet<String> = HashSet::new();
    for (i, span) in elements(bytes, rows.start).enumerate() {
        match span {
            Ok(span) => {
                let line = lc.line_at(span.start);
                match read_object::<WireRow>(&bytes[span.start..span.end], "a scenario row") {
                    Ok(w) => {
                        if !w.similarity.is_finite() {
                            out.problems.push(Located {
                                line: Some(line),
                                message: format!(
                                    "per_scenario_results[{i}].similarity: not a finite number"
                                ),
                            });
                            continue;
                        }
                        if !names.insert(w.name.clone()) {
                            out.problems.push(Located {
                                line: Some(line),
                                message: format!(
                                    "per_scenario_results[{i}]: scenario {:?} is listed twice; \
                                     the first row is used",
                                    w.name
                                ),
                            });
                            continue;
                        }
                        out.rows.push(ScenarioRow {
                            name: w.name,
                            categories: w.categories.unwrap_or_default(),
                            traceback: w.traceback,
                            exception_type: w.exception_type,
                            similarity: w.similarity,
                            milestone_similarity: w.milestone_similarity,
                            minefield_similarity: w.minefield_similarity,
                            turn_count: w.turn_count,
                        });
                    }
                    Err(e) => out.problems.push(Located {
                        line: Some(line),
                        message: format!("per_scenario_results[{i}]: {e}"),
                    }),
                }
            }
            Err(e) => out.problems.push(Located {
                line: Some(lc.line_at(bytes.len())),
                message: format!(
                    "per_scenario_results: {e}; the {} complete rows before it were read",
                    i
                ),
            }),
        }
    }
    if let Some(agg) = members
        .iter()
        .find(|m| m.key == "category_aggregated_results")
    {
        if let Ok(span) = &agg.value {
            let v: Result<BTreeMap<String, WireAggregate>, _> =
                serde_json::from_slice(&bytes[span.start..span.end]);
            match v {
                Ok(map) => {
                    out.all_categories_similarity = map
                        .get("ALL_CATEGORIES")
                        .and_then(|a| a.similarity)
                        .filter(|s| s.is_finite())
                }
                Err(e) => out.problems.push(Located {
                    line: Some(lc.line_at(span.start)),
                    message: format!("category_aggregated_results: {e}"),
                }),
            }
        }
    }
    if let Some(sha) = members.iter().find(|m| m.key == "git_sha") {
        if let Ok(span) = &sha.value {
            out.git_sha = serde_json::from_slice::<Option<String>>(&bytes[span.start..span.end])
                .ok()
                .flatten();
        }
    }
    if let (Some(p), true) = (
        problem,
        members
            .iter()
            .all(|m| m.key != "per_scenario_results" || m.value.is_ok()),
    ) {
        out.problems.push(Located {
            line: Some(lc.line_at(bytes.len())),
            message: p.to_string(),
        });
    }
    Ok(out)
}

fn open_brace(bytes: &[u8]) -> Option<usize> {
    let body = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(bytes);
    let bom = bytes.len() - body.len();
    let i = skip_ws(bytes, bom);
    (bytes.get(i) == Some(&b'{')).then_some(i)
}

// ---- trajectories ---------------------------------------------------------------------------

/// The reply an agent call got.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Reply {
    Executed,
    /// The call raised: `tool_call_exception`.
    Raised(String),
    /// No EXECUTION_ENVIRONMENT row answers it.
    Missing,
}

/// One agent tool call.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Call {
    /// The execution-facing name (from the code line), when it could be read.
    pub tool: Option<String>,
    /// The name the agent used (`openai_function_name`; scrambled in `TOOL_NAME_SCRAMBLED`).
    pub agent_tool: Option<String>,
    pub id: Option<String>,
    /// Sent between workers as its JSON text: the binary form between them cannot carry a
    /// `Value` (it is not self-describing), and the text reads back to the same `Value`.
    #[serde(with = "crate::formats::json_text")]
    pub args: Option<Value>,
    pub reply: Reply,
}

/// One scenario's calls, as read from its trajectory file.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Trajectory {
    pub calls: Vec<Call>,
    /// The last dialogue row still had `conversation_active == true`: the run limit ended it.
    pub ended_active: bool,
    /// Whether the file tells how the scenario ended (`conversation.json` does only when its
    /// last calls are unanswered).
    pub ending_known: bool,
    /// Read from `conversation.json` (the fallback rule), not the execution context.
    pub fallback: bool,
}

impl Trajectory {
    /// Calls that raised a `SyntaxError` (the generated code did not compile).
    pub(crate) fn syntax_errors(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| matches!(&c.reply, Reply::Raised(e) if is_syntax_error(e)))
            .count()
    }
}

fn is_syntax_error(exception: &str) -> bool {
    exception
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim_start().starts_with("SyntaxError"))
}

#[derive(Deserialize)]
struct WireSandboxRow {
    #[serde(default)]
    sender: Option<String>,
    #[serde(default)]
    recipient: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    openai_tool_call_id: Option<String>,
    #[serde(default)]
    openai_function_name: Option<String>,
    #[serde(default)]
    conversation_active: Option<bool>,
    #[serde(default)]
    tool_call_exception: Option<String>,
    #[serde(default)]
    visible_to: Option<Vec<Option<String>>>,
}

/// A kept SANDBOX row, reduced to what the rule reads.
struct Row {
    kind: RowKind,
    id: Option<String>,
    agent_name: Option<String>,
    content: Option<String>,
    exception: Option<String>,
}

#[derive(PartialEq)]
enum RowKind {
    Call,
    Reply,
    Other,
}

/// Reads `execution_context.json`: the rows of `_dbs.SANDBOX`, one at a time (nothing else of
/// the file is parsed). Any unreadable row fails the whole file: a missing call or reply would
/// change the prefix silently.
pub(crate) fn read_execution_context(bytes: &[u8]) -> Result<Trajectory, Located> {
    read_execution_context_scanned(bytes, None)
}

/// [`read_execution_context`] given the file's top-level object as classification scanned it
/// (the same reading, without scanning the file again).
pub(crate) fn read_execution_context_scanned(
    bytes: &[u8],
    scanned: Option<&Scanned>,
) -> Result<Trajectory, Located> {
    let mut lc = LineCounter::new(bytes);
    let open = open_brace(bytes).ok_or_else(|| Located {
        line: None,
        message: "expected a ToolSandbox execution_context.json (a JSON object)".into(),
    })?;
    let scanned = scanned.filter(|s| s.open == open);
    // A cut or malformed file is refused whole, even past the rows read: the scenario's end
    // (how it ended) may be what is missing.
    let end = match scanned.and_then(|s| s.end) {
        Some(end) => end,
        None => value_end(bytes, open).map_err(|e| Located {
            line: Some(lc.line_at(match e {
                ScanError::Unexpected { at, .. } => at,
                ScanError::Truncated => bytes.len(),
            })),
            message: e.to_string(),
        })?,
    };
    let rest = skip_ws(bytes, end);
    if rest < bytes.len() {
        return Err(Located {
            line: Some(lc.line_at(rest)),
            message: "unexpected data after the end of the JSON object".into(),
        });
    }
    let mut lc = LineCounter::new(bytes);
    let own;
    let (top, problem) = match scanned {
        Some(s) => (&s.members, s.problem.clone()),
        None => {
            own = members(bytes, open);
            (&own.0, own.1)
        }
    };
    let Some(dbs) = top.iter().find(|m| m.key == "_dbs") else {
        return Err(cut_or_missing(&mut lc, bytes, problem, "_dbs"));
    };
    if bytes.get(dbs.start) != Some(&b'{') {
        return Err(Located {
            line: Some(lc.line_at(dbs.start)),
            message: "_dbs: expected an object of databases".into(),
        });
    }
    // Nothing of `_dbs` after SANDBOX's start is read here (the file's scan checked its
    // brackets; the rows are read next).
    let Some(sandbox) = member_start(bytes, dbs.start, "SANDBOX") else {
        let p = members(bytes, dbs.start).1.or(problem);
        return Err(cut_or_missing(&mut lc, bytes, p, "_dbs.SANDBOX"));
    };
    if bytes.get(sandbox) != Some(&b'[') {
        return Err(Located {
            line: Some(lc.line_at(sandbox)),
            message: "_dbs.SANDBOX: expected an array of rows".into(),
        });
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut ended_active = false;
    // Each row is read where it starts, which also tells where it ends (no scan before the
    // read); a row that does not read is scanned and read again for its error.
    let mut it = elements(bytes, sandbox);
    for i in 0.. {
        let Some(next) = it.next_read(read_object_prefix::<WireSandboxRow>) else {
            break;
        };
        let (span, read) = next.map_err(|e| Located {
            line: Some(lc.line_at(bytes.len())),
            message: format!("_dbs.SANDBOX: {e}; the scenario's rows are incomplete"),
        })?;
        let line = lc.line_at(span.start);
        let w: WireSandboxRow = match read {
            Some(w) => w,
            None => {
                read_object(&bytes[span.start..span.end], "a SANDBOX row").map_err(|e| Located {
                    line: Some(line),
                    message: format!("_dbs.SANDBOX[{i}]: {e}"),
                })?
            }
        };
        // Headguard rows (every field null) and the user simulator's few-shot dialogue.
        let Some(sender) = w.sender.as_deref() else {
            continue;
        };
        if w.visible_to.as_deref() == Some(&[Some("USER".to_string())][..]) {
            continue;
        }
        ended_active = w.conversation_active == Some(true);
        let kind = match (sender, w.recipient.as_deref()) {
            ("AGENT", Some("EXECUTION_ENVIRONMENT")) => RowKind::Call,
            ("EXECUTION_ENVIRONMENT", Some("AGENT")) => RowKind::Reply,
            _ => RowKind::Other,
        };
        if kind == RowKind::Other {
            continue;
        }
        rows.push(Row {
            content: (kind == RowKind::Call).then_some(w.content).flatten(),
            kind,
            id: w.openai_tool_call_id,
            agent_name: w.openai_function_name,
            exception: w.tool_call_exception,
        });
    }
    let answers = pair_messages(
        &rows,
        |r| match r.kind {
            RowKind::Call => vec![r.id.as_deref()],
            _ => Vec::new(),
        },
        |r| (r.kind == RowKind::Reply).then_some(r.id.as_deref()),
    );
    let mut calls = Vec::new();
    for (r, answers) in rows.iter().zip(answers) {
        if r.kind != RowKind::Call {
            continue;
        }
        let code = r
            .content
            .as_deref()
            .and_then(|c| parse_code(c, r.id.as_deref()));
        let reply = match answers.first().copied().flatten() {
            None => Reply::Missing,
            Some(j) => match &rows[j].exception {
                None => Reply::Executed,
                Some(e) => Reply::Raised(e.clone()),
            },
        };
        let (tool, args) = match code {
            Some((name, literal)) => (Some(name.to_string()), py_literal_to_json(literal)),
            None => (None, None),
        };
        calls.push(Call {
            tool: tool.or_else(|| r.agent_name.clone()),
            agent_tool: r.agent_name.clone(),
            id: r.id.clone(),
            args,
            reply,
        });
    }
    Ok(Trajectory {
        calls,
        ended_active,
        ending_known: true,
        fallback: false,
    })
}

fn cut_or_missing(
    lc: &mut LineCounter<'_>,
    bytes: &[u8],
    problem: Option<ScanError>,
    field: &str,
) -> Located {
    match problem {
        Some(p) => Located {
            line: Some(lc.line_at(bytes.len())),
            message: format!("{p}; `{field}` was not found before it"),
        },
        None => Located {
            line: None,
            message: format!("missing field `{field}`"),
        },
    }
}

/// The execution-facing tool name and the parameters literal of a generated code cell:
/// `<id>_parameters = <literal>\n<id>_response = <name>(**<id>_parameters)\n…`.
pub(crate) fn parse_code<'a>(code: &'a str, id: Option<&str>) -> Option<(&'a str, &'a str)> {
    let (first, rest) = code.split_once('\n')?;
    let second = rest.split('\n').next().unwrap_or(rest);
    let try_id = |id: &str| -> Option<(&'a str, &'a str)> {
        let literal = first.strip_prefix(id)?.strip_prefix("_parameters = ")?;
        let call = second.strip_prefix(id)?.strip_prefix("_response = ")?;
        let end = call.find(|c: char| c == '(' || c.is_whitespace())?;
        let name = &call[..end];
        (!name.is_empty() && call[end..].starts_with('(')).then_some((name, literal))
    };
    if let Some(found) = id.and_then(try_id) {
        return Some(found);
    }
    // `^(.+?)_parameters = `: the shortest id for which both lines agree.
    first
        .match_indices("_parameters = ")
        .filter(|(i, _)| *i > 0)
        .find_map(|(i, _)| try_id(&first[..i]))
}

/// Reads `conversation.json` (the fallback when no execution context was dropped): message by
/// message, failing on the first unreadable one.
pub(crate) fn read_conversation(bytes: &[u8]) -> Result<Trajectory, Located> {
    let mut lc = LineCounter::new(bytes);
    let body = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(bytes);
    let open = skip_ws(bytes, bytes.len() - body.len());
    if bytes.get(open) != Some(&b'[') {
        return Err(Located {
            line: None,
            message: "expected a ToolSandbox conversation.json (a JSON array of messages)".into(),
        });
    }
    let mut messages: Vec<WireMessage> = Vec::new();
    let mut it = elements(bytes, open);
    for (i, span) in it.by_ref().enumerate() {
        let span = span.map_err(|e| Located {
            line: Some(lc.line_at(bytes.len())),
            message: format!("{e}; the conversation is incomplete"),
        })?;
        let line = lc.line_at(span.start);
        let mut m: WireMessage =
            read_object(&bytes[span.start..span.end], "a message").map_err(|e| Located {
                line: Some(line),
                message: format!("[{i}]: {e}"),
            })?;
        if m.role == "system"
            || m.role == "user"
            || (m.role == "assistant" && m.tool_calls.is_none())
        {
            m.content = None;
        }
        messages.push(m);
    }
    if let Some(end) = it.closed_at() {
        let rest = skip_ws(bytes, end);
        if rest < bytes.len() {
            return Err(Located {
                line: Some(lc.line_at(rest)),
                message: "unexpected data after the end of the JSON array".into(),
            });
        }
    }
    Ok(conversation_calls(&messages))
}

fn conversation_calls(messages: &[WireMessage]) -> Trajectory {
    let answers = chat_pairing(messages);
    let mut calls = Vec::new();
    let mut last_unanswered = false;
    for (i, (m, answers)) in messages.iter().zip(answers).enumerate() {
        let is_last = i + 1 == messages.len();
        for (c, answer) in m.tool_calls.iter().flatten().zip(answers) {
            let reply = match answer {
                None => {
                    last_unanswered |= is_last;
                    Reply::Missing
                }
                Some(j) => {
                    let text = match &messages[j].content {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    if looks_like_exception(&text) {
                        Reply::Raised(text)
                    } else {
                        Reply::Executed
                    }
                }
            };
            let args = c.function.arguments.as_ref().and_then(|a| match a {
                Value::String(s) => serde_json::from_str(s).ok(),
                Value::Object(_) => Some(a.clone()),
                _ => None,
            });
            calls.push(Call {
                // conversation.json has only the agent-facing name.
                tool: Some(c.function.name.clone()),
                agent_tool: Some(c.function.name.clone()),
                id: c.id.clone(),
                args,
                reply,
            });
        }
    }
    Trajectory {
        calls,
        // Calls of the last message left unanswered: the run limit cut the scenario there.
        ended_active: last_unanswered,
        ending_known: last_unanswered,
        fallback: true,
    }
}

/// The spec's heuristic for a failed tool message of `conversation.json` (which has no
/// exception field): `^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b|  File
/// "<input>"|Error: The given code was incomplete)`.
pub(crate) fn looks_like_exception(text: &str) -> bool {
    if text.starts_with("  File \"<input>\"")
        || text.starts_with("Error: The given code was incomplete")
    {
        return true;
    }
    let bytes = text.as_bytes();
    if !bytes
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return false;
    }
    // `[\w.]*` is greedy with backtracking: some prefix of the dotted word must end in one of
    // the suffixes followed by a word boundary.
    let end = text
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
        .map_or(text.len(), |(i, _)| i);
    let word = &text[..end];
    ["Error", "Exception", "Exit", "Interrupt", "Warning"]
        .iter()
        .any(|suffix| {
            word.match_indices(suffix).any(|(i, _)| {
                let after = i + suffix.len();
                // A word boundary: the next character is not a word character (`.` is not one).
                let boundary = text[after..]
                    .chars()
                    .next()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                i > 0 && boundary
            })
        })
}

// ---- one scenario ---------------------------------------------------------------------------

/// How a scenario ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    EndConversation,
    MaxTurns,
    Crash,
}

impl Ending {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Ending::EndConversation => "end_conversation",
            Ending::MaxTurns => "max_turns",
            Ending::Crash => "crash",
        }
    }
}

/// Why a scenario did not become a rollout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// Failed with a provider error (its type), excluded by default.
    ProviderError(String),
}

/// The run facts every scenario of a run shares.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunFacts {
    pub name: Option<RunName>,
    pub git_sha: Option<String>,
    /// The model when `name` is `None` (see [`model_from_folder`]).
    pub fallback_model: Option<String>,
}

/// One scenario as a draft rollout. `traj` is `None` for a scenario whose trajectory files are
/// missing (not a rollout: the caller counts it instead).
pub(crate) fn scenario_draft(
    row: &ScenarioRow,
    traj: &Trajectory,
    run: &RunFacts,
    options: &Options,
) -> Result<Draft, Skip> {
    let crash = row.traceback.is_some();
    if let Some(t) = row.provider_error() {
        if !options.keep_provider_errors {
            return Err(Skip::ProviderError(t.to_string()));
        }
    }
    let ending = if crash {
        Ending::Crash
    } else if traj.ended_active {
        Ending::MaxTurns
    } else {
        Ending::EndConversation
    };
    let exception = row.exception_type.as_deref().unwrap_or("an exception");
    let mut steps = Vec::with_capacity(traj.calls.len() + 1);
    for c in &traj.calls {
        let verdict = match &c.reply {
            Reply::Executed => Verdict::Accepted,
            Reply::Raised(e) => Verdict::Rejected(Some(e.clone())),
            Reply::Missing => match ending {
                // Cut off by the run limit: never executed, so not a step.
                Ending::MaxTurns => continue,
                Ending::Crash => Verdict::Rejected(Some(format!(
                    "no reply: the scenario crashed ({exception}) before this call was answered"
                ))),
                Ending::EndConversation => Verdict::Rejected(Some(format!(
                    "no EXECUTION_ENVIRONMENT row answers this call (openai_tool_call_id {:?})",
                    c.id.as_deref().unwrap_or("")
                ))),
            },
        };
        steps.push(RawStep {
            tool: c.tool.clone(),
            args: c.args.clone(),
            verdict,
            call: None,
            agent_tool: c.agent_tool.clone().filter(|a| Some(a) != c.tool.as_ref()),
            reject_source: None,
            label: None,
        });
    }
    if crash
        && matches!(
            row.exception_type.as_deref(),
            Some("KeyError" | "JSONDecodeError")
        )
    {
        let tb = row.traceback.as_deref().unwrap_or("");
        steps.push(RawStep {
            tool: agent_side_tool_name(tb),
            args: None,
            verdict: Verdict::Rejected(Some(last_line(tb).to_string())),
            call: None,
            agent_tool: None,
            reject_source: None,
            label: None,
        });
    }
    let success = row.success(options.tau);
    // A kept provider error is a crash: the provider failed, not the agent.
    let provider_crash = row.provider_error().map(|t| {
        let tb = row.traceback.as_deref().unwrap_or("");
        let last = last_line(tb);
        if last.is_empty() {
            t.to_string()
        } else {
            last.to_string()
        }
    });
    let mut meta = Map::new();
    meta.insert("format".into(), "toolsandbox".into());
    meta.insert(
        "categories".into(),
        Value::Array(row.categories.iter().cloned().map(Value::from).collect()),
    );
    meta.insert("similarity".into(), number(row.similarity));
    for (key, v) in [
        ("milestone_similarity", row.milestone_similarity),
        ("minefield_similarity", row.minefield_similarity),
        ("turn_count", row.turn_count),
    ] {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            meta.insert(key.into(), number(v));
        }
    }
    let reason = if crash || traj.ending_known {
        ending.as_str()
    } else {
        // conversation.json does not say whether the user ended the dialogue or the run limit
        // did (unless calls were left unanswered).
        "unknown"
    };
    meta.insert("termination_reason".into(), reason.into());
    if let Some(t) = &row.exception_type {
        meta.insert("exception_type".into(), t.clone().into());
    }
    meta.insert("similarity_threshold".into(), number(options.tau));
    meta.insert("success_rule".into(), options.success_rule().into());
    if traj.fallback {
        meta.insert("read_from".into(), "conversation.json".into());
    }
    if let Some(n) = &run.name {
        meta.insert("user_model".into(), n.user.clone().into());
        meta.insert("run".into(), n.timestamp.clone().into());
    }
    if let Some(sha) = &run.git_sha {
        meta.insert("git_sha".into(), sha.clone().into());
    }
    Ok(Draft {
        dataset: DATASET.to_string(),
        task_id: row.name.clone(),
        model: run
            .name
            .as_ref()
            .map(|n| n.agent.clone())
            .or_else(|| run.fallback_model.clone())
            .unwrap_or_else(|| "unknown-model".to_string()),
        method: DEFAULT_METHOD.to_string(),
        success,
        no_tool_ok: success,
        steps,
        cost: Cost::default(),
        crash: provider_crash,
        run: None,
        meta,
    })
}

fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The tool an agent-side crash names: `agent_facing_tool_name='X' is not a known allowed tool`
/// (an unknown name), or `KeyError: 'X'` raised in `get_execution_facing_tool_name` (an unknown
/// scrambled name). `None` for invalid JSON arguments, whose traceback names no tool.
pub(crate) fn agent_side_tool_name(traceback: &str) -> Option<String> {
    let message = last_line(traceback).strip_prefix("KeyError: ")?;
    let message = py_string(message.trim())?;
    const MARK: &str = "agent_facing_tool_name=";
    if let Some(at) = message.find(MARK) {
        return pyrepr::leading_string(&message[at + MARK.len()..]);
    }
    traceback
        .contains("get_execution_facing_tool_name")
        .then_some(message)
}

/// A whole Python string literal.
fn py_string(text: &str) -> Option<String> {
    match pyrepr::parse(text)? {
        Py::Str(s) => Some(s),
        _ => None,
    }
}

/// Converts the Python literal of a call's parameters (the `repr` of what `json.loads` gave:
/// dicts, lists, strings, numbers, booleans and `None`) to JSON; `None` when it is anything
/// else.
pub(crate) fn py_literal_to_json(text: &str) -> Option<Value> {
    pyrepr::parse(text)?.to_json()
}

// ---- one run --------------------------------------------------------------------------------

/// What one run's import found, beside its rollouts.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunReport {
    /// Scenarios of the summary (rows that could be read).
    pub scenarios: usize,
    /// Scenarios imported as rollouts.
    pub imported: usize,
    /// Of those, successful at τ.
    pub successes: usize,
    /// Scenarios read from `conversation.json` alone.
    pub from_conversation: usize,
    /// Scenarios excluded for a provider error, by exception type.
    pub provider_errors: BTreeMap<String, u64>,
    /// Provider-error scenarios kept as failures.
    pub provider_errors_kept: u64,
    /// Scenarios of the summary without trajectory files.
    pub missing: Vec<String>,
    /// Agent calls imported, and those that failed with `SyntaxError`.
    pub calls: usize,
    pub syntax_errors: usize,
    /// Mean `similarity` recomputed from the rows, and the summary's own.
    pub mean_similarity: Option<f64>,
    pub summary_mean_similarity: Option<f64>,
}

impl RunReport {
    /// A run's report before any scenario is joined: the summary's own figures.
    pub(crate) fn new(summary: &RunSummary) -> RunReport {
        RunReport {
            scenarios: summary.rows.len(),
            summary_mean_similarity: summary.all_categories_similarity,
            mean_similarity: (!summary.rows.is_empty()).then(|| {
                summary.rows.iter().map(|r| r.similarity).sum::<f64>() / summary.rows.len() as f64
            }),
            ..RunReport::default()
        }
    }

    /// The run looks broken by the harness's SyntaxError bug.
    pub(crate) fn syntax_flagged(&self) -> bool {
        self.calls > 0 && self.syntax_errors as f64 > SYNTAX_ERROR_SHARE * self.calls as f64
    }

    /// The self-check when it agrees: the summary's mean similarity recomputed from its rows
    /// (a confirmation, not a problem: [`crate::rollout::Corpus::checks`]).
    pub(crate) fn passed_check(&self) -> Option<String> {
        let (ours, theirs) = (self.mean_similarity?, self.summary_mean_similarity?);
        similarity_agrees(ours, theirs).then(|| {
            format!(
                "self-check: the mean similarity of the {} scenario rows, {ours:.6}, matches \
                 the summary's ALL_CATEGORIES similarity",
                self.scenarios
            )
        })
    }

    /// The run's problems for the report: exclusions, missing trajectories, the SyntaxError
    /// flag and a self-check that failed or could not be made.
    pub(crate) fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (t, n) in &self.provider_errors {
            out.push(format!(
                "{n} scenarios excluded: they failed with the provider error {t} (not the \
                 agent's doing; keep them as failures with the ToolSandbox provider-error option)"
            ));
        }
        if self.provider_errors_kept > 0 {
            out.push(format!(
                "{} scenarios that failed with a provider error are kept as failures",
                self.provider_errors_kept
            ));
        }
        if !self.missing.is_empty() {
            let shown: Vec<&str> = self.missing.iter().take(5).map(String::as_str).collect();
            out.push(format!(
                "{} of the {} scenarios listed in result_summary.json have no trajectory files \
                 (trajectories/<scenario>/execution_context.json) in the input and are not \
                 scored: {}{}",
                self.missing.len(),
                self.scenarios,
                shown.join(", "),
                if self.missing.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            ));
        }
        if self.from_conversation > 0 {
            out.push(format!(
                "{} scenarios were read from conversation.json alone (no execution_context.json): \
                 failed calls are recognised by their text and scrambled tool names stay \
                 agent-facing",
                self.from_conversation
            ));
        }
        if self.syntax_flagged() {
            out.push(format!(
                "warning: {} of {} tool calls of this run failed with SyntaxError — the known \
                 ToolSandbox harness bug (tool-call ids containing `-` make the generated Python \
                 invalid); its scores say little about the agent",
                self.syntax_errors, self.calls
            ));
        }
        match (self.mean_similarity, self.summary_mean_similarity) {
            (Some(ours), Some(theirs)) if !similarity_agrees(ours, theirs) => {
                out.push(format!(
                    "self-check failed: the mean similarity of the {} scenario rows is \
                     {ours:.6} but the summary's ALL_CATEGORIES similarity is {theirs:.6}: \
                     the rows and the aggregate disagree (an edited or mixed file?)",
                    self.scenarios
                ));
            }
            (Some(_), None) => out.push(
                "self-check skipped: the summary has no category_aggregated_results.\
                 ALL_CATEGORIES.similarity"
                    .to_string(),
            ),
            _ => {}
        }
        out
    }
}

/// The run's rows and its summary agree on the mean similarity.
fn similarity_agrees(ours: f64, theirs: f64) -> bool {
    (ours - theirs).abs() <= SELF_CHECK_TOLERANCE
}

/// One trajectory file of a run, read (or not).
#[cfg(test)]
pub(crate) struct TrajectoryFile {
    pub scenario: String,
    pub kind: TrajectoryKind,
    pub read: Result<Trajectory, Located>,
}

/// A scenario's outcome in a run import.
#[cfg(test)]
pub(crate) enum Outcome {
    /// A rollout, and which trajectory file it was read from (index into the files given).
    Rollout(Box<Draft>, usize),
    /// Its trajectory file could not be read (file index, the problem).
    // The unit tests match the variant; the reader reports the problem from `Joined`.
    #[allow(dead_code)]
    Unreadable(usize, Located),
    /// Not a rollout (file index, why).
    Skipped(Skip, usize),
}

/// What re-reading a scenario's rollout needs besides its trajectory file: its summary row, the
/// run's facts and the options it was read with.
#[derive(Clone, Debug)]
pub(crate) struct RereadFacts {
    pub row: ScenarioRow,
    pub run: RunFacts,
    pub options: Options,
    pub kind: TrajectoryKind,
}

/// Re-reads one scenario's rollout from its trajectory file's bytes, for a viewer.
pub(crate) fn reread(bytes: &[u8], facts: &RereadFacts) -> Result<Draft, String> {
    let traj = match facts.kind {
        TrajectoryKind::ExecutionContext => read_execution_context(bytes),
        TrajectoryKind::Conversation => read_conversation(bytes),
    }
    .map_err(|e| e.to_string())?;
    scenario_draft(&facts.row, &traj, &facts.run, &facts.options)
        .map_err(|_| "excluded (a provider error)".to_string())
}

/// What one scenario's summary row and trajectory file give.
pub(crate) enum Joined {
    Rollout(Box<Draft>),
    /// The trajectory file could not be read.
    Unreadable(Located),
    Skipped(Skip),
}

/// Joins one scenario's summary row with its trajectory file (as read), counting it in the
/// run's report. Shared by [`join_run`] and the reader, which joins each scenario as soon as
/// its files are in.
pub(crate) fn join_scenario(
    row: &ScenarioRow,
    read: &Result<Trajectory, Located>,
    run: &RunFacts,
    options: &Options,
    report: &mut RunReport,
) -> Joined {
    let traj = match read {
        Ok(t) => t,
        Err(e) => return Joined::Unreadable(e.clone()),
    };
    match scenario_draft(row, traj, run, options) {
        Ok(d) => {
            report.imported += 1;
            report.successes += usize::from(d.success);
            report.from_conversation += usize::from(traj.fallback);
            report.calls += traj.calls.len();
            report.syntax_errors += traj.syntax_errors();
            if row.provider_error().is_some() {
                report.provider_errors_kept += 1;
            }
            Joined::Rollout(Box::new(d))
        }
        Err(Skip::ProviderError(t)) => {
            *report.provider_errors.entry(t.clone()).or_default() += 1;
            Joined::Skipped(Skip::ProviderError(t))
        }
    }
}

/// Joins a run's summary with its trajectory files: one outcome per summary row that has a
/// trajectory file, in summary order, and the run report. Files naming a scenario the summary
/// does not list are returned by index in the last element.
#[cfg(test)]
pub(crate) fn join_run(
    summary: &RunSummary,
    files: &[TrajectoryFile],
    run: &RunFacts,
    options: &Options,
) -> (Vec<(String, Outcome)>, RunReport, Vec<usize>) {
    let mut by_scenario: std::collections::HashMap<&str, (Option<usize>, Option<usize>)> =
        std::collections::HashMap::new();
    let mut strays = Vec::new();
    let listed: HashSet<&str> = summary.rows.iter().map(|r| r.name.as_str()).collect();
    for (i, f) in files.iter().enumerate() {
        if !listed.contains(f.scenario.as_str()) {
            strays.push(i);
            continue;
        }
        let slot = by_scenario.entry(f.scenario.as_str()).or_default();
        let place = match f.kind {
            TrajectoryKind::ExecutionContext => &mut slot.0,
            TrajectoryKind::Conversation => &mut slot.1,
        };
        if place.is_none() {
            *place = Some(i);
        } else {
            strays.push(i);
        }
    }
    let mut report = RunReport::new(summary);
    let mut out = Vec::new();
    for row in &summary.rows {
        let Some(&(ctx, conv)) = by_scenario.get(row.name.as_str()) else {
            report.missing.push(row.name.clone());
            continue;
        };
        // The execution context is the evidence; conversation.json only when it is alone.
        let Some(file) = ctx.or(conv) else { continue };
        let outcome = match join_scenario(row, &files[file].read, run, options, &mut report) {
            Joined::Rollout(d) => Outcome::Rollout(d, file),
            Joined::Unreadable(e) => Outcome::Unreadable(file, e),
            Joined::Skipped(s) => Outcome::Skipped(s, file),
        };
        out.push((row.name.clone(), outcome));
    }
    (out, report, strays)
}

/// A whole run in one call (the unit tests): the summary's bytes and the trajectory
/// files by their relative names (`trajectories/<scenario>/execution_context.json`, …).
#[cfg(test)]
type RunImport = (Vec<(String, Outcome)>, RunReport, Vec<String>);

#[cfg(test)]
pub(crate) fn convert_run(
    summary_name: &str,
    summary: &[u8],
    files: &[(&str, &[u8])],
    options: &Options,
) -> Result<RunImport, Located> {
    let s = read_summary(summary)?;
    let mut notes: Vec<String> = s.problems.iter().map(|p| p.to_string()).collect();
    let read: Vec<TrajectoryFile> = files
        .iter()
        .filter_map(|(name, bytes)| {
            let scenario = trajectory_path(name).scenario?;
            let kind = match name.rsplit(['/', '\\']).next() {
                Some("conversation.json") => TrajectoryKind::Conversation,
                _ => TrajectoryKind::ExecutionContext,
            };
            let read = match kind {
                TrajectoryKind::ExecutionContext => read_execution_context(bytes),
                TrajectoryKind::Conversation => read_conversation(bytes),
            };
            Some(TrajectoryFile {
                scenario,
                kind,
                read,
            })
        })
        .collect();
    let facts = RunFacts {
        name: run_name(&summary_dir(summary_name)),
        git_sha: s.git_sha.clone(),
        fallback_model: None,
    };
    let (outcomes, report, strays) = join_run(&s, &read, &facts, options);
    notes.extend(report.messages());
    notes.extend(report.passed_check());
    for i in strays {
        notes.push(format!(
            "trajectory of scenario {:?}: not in result_summary.json (or given twice)",
            read[i].scenario
        ));
    }
    Ok((outcomes, report, notes))
}
