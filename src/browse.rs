//! Browsing rollouts: listing one condition's rollouts with a filter, a task-id search and paging,
//! and reading one rollout's steps back from its line.
//!
//! The scorer keeps no steps in memory ([`crate::rollout`]); a viewer re-reads the line at
//! [`crate::rollout::Source`] and [`parse_steps`] turns it into rows to show, with the first
//! invalid step and the steps after it marked.

use serde::{Deserialize, Serialize};

use crate::formats::canonical::{error_signals_rejection, error_text};
use crate::rollout::Corpus;

/// Which rollouts to list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every rollout.
    #[default]
    All,
    /// `FED = T + 1`.
    FullyExecutable,
    /// `FED ≤ T` and successful: recovered.
    Recovered,
    /// `FED ≤ T` and failed.
    FailedPrefixFailed,
    /// No tool call at all (`T = 1` terminal no-tool action).
    NoTool,
}

/// A page request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutQuery {
    pub dataset: String,
    pub model: String,
    pub method: String,
    pub outcome: Outcome,
    /// Case-insensitive substring of the task id; empty matches all.
    pub search: String,
    pub offset: usize,
    pub limit: usize,
}

/// One listed rollout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RolloutRow {
    /// Index in the corpus, to ask for its steps.
    pub index: usize,
    pub task_id: String,
    pub horizon: u32,
    pub fed: u32,
    pub success: bool,
    pub fully_executable: bool,
    pub label: Option<String>,
    /// Where the label came from: `given`, `schema check` or `rule:<id>`.
    #[serde(default)]
    pub label_source: Option<String>,
    /// The rule's one-line rationale, when a label rule gave the label.
    #[serde(default)]
    pub label_rationale: Option<String>,
    pub error: Option<String>,
    pub tool: Option<String>,
    pub file: String,
    pub line: u64,
}

/// A page of rows and the number of rows matching in all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RolloutPage {
    pub total: usize,
    pub offset: usize,
    pub rows: Vec<RolloutRow>,
}

/// Lists a condition's rollouts, ordered by task id then input position.
pub fn list_rollouts(corpus: &Corpus, q: &RolloutQuery) -> RolloutPage {
    let needle = q.search.to_lowercase();
    let mut matching: Vec<usize> = corpus
        .rollouts
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            let (d, m, me) = corpus.condition_names(r.condition);
            d == q.dataset && m == q.model && me == q.method
        })
        .filter(|(_, r)| {
            let failed = !r.fully_executable();
            match q.outcome {
                Outcome::All => true,
                Outcome::FullyExecutable => !failed,
                Outcome::Recovered => failed && r.success,
                Outcome::FailedPrefixFailed => failed && !r.success,
                Outcome::NoTool => r.no_tool,
            }
        })
        .filter(|(_, r)| {
            needle.is_empty() || corpus.task_name(r.task).to_lowercase().contains(&needle)
        })
        .map(|(i, _)| i)
        .collect();
    matching.sort_by(|&a, &b| {
        let (ra, rb) = (&corpus.rollouts[a], &corpus.rollouts[b]);
        corpus
            .task_name(ra.task)
            .cmp(corpus.task_name(rb.task))
            .then((ra.source.file, ra.source.line).cmp(&(rb.source.file, rb.source.line)))
    });
    let total = matching.len();
    let rows = matching
        .into_iter()
        .skip(q.offset)
        .take(q.limit.max(1))
        .map(|i| {
            let r = &corpus.rollouts[i];
            let f = r.first_failure.as_ref();
            RolloutRow {
                index: i,
                task_id: corpus.task_name(r.task).to_string(),
                horizon: r.horizon,
                fed: r.fed.0,
                success: r.success,
                fully_executable: r.fully_executable(),
                label: f.map(|f| match (f.label, f.environment) {
                    (Some(l), _) => l.as_str().to_string(),
                    (None, true) => "environment".to_string(),
                    (None, false) => "unlabeled".to_string(),
                }),
                label_source: f
                    .and_then(|f| f.label_source)
                    .map(|t| corpus.texts.get(t).to_string()),
                label_rationale: f
                    .and_then(|f| f.label_source)
                    .and_then(|t| corpus.label_rationales.get(corpus.texts.get(t)))
                    .cloned(),
                error: f
                    .and_then(|f| f.error)
                    .map(|t| corpus.texts.get(t).to_string()),
                tool: f
                    .and_then(|f| f.tool)
                    .map(|t| corpus.texts.get(t).to_string()),
                file: corpus.files[r.source.file as usize].name.clone(),
                line: r.source.line,
            }
        })
        .collect();
    RolloutPage {
        total,
        offset: q.offset,
        rows,
    }
}

/// One step of a rollout, for display.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepView {
    /// 1-based depth.
    pub depth: usize,
    pub tool: Option<String>,
    /// The name the agent called it by, when it differs (ToolSandbox's scrambled names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_tool: Option<String>,
    /// Arguments as compact JSON.
    pub args: Option<String>,
    pub executable: bool,
    pub error: Option<String>,
    pub label: Option<String>,
    /// This is the first invalid step (depth = FED).
    pub first_error: bool,
    /// Comes after the first invalid step.
    pub after_first_error: bool,
}

/// Parses a canonical rollout line into its steps. Lines of other formats are converted to
/// canonical form before scoring, so this is the one shape to read.
///
/// It reads exactly the fields the scorer reads and skips the rest unparsed, so any line the
/// scorer accepted can be shown: a number no double holds (`1e400`) in `meta` or in `args` is
/// legal JSON the scorer never looks at.
pub fn parse_steps(line: &str) -> Result<Vec<StepView>, String> {
    let view: ViewLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(view.steps.len());
    let mut fed: Option<usize> = None;
    for (i, s) in view.steps.into_iter().enumerate() {
        let error_present = s.error.as_ref().is_some_and(error_signals_rejection);
        // An explicit `ok` wins over `error`, as in scoring.
        let executable = match s.ok {
            Some(ok) => ok,
            None => !error_present,
        };
        let depth = i + 1;
        let first_error = !executable && fed.is_none();
        if first_error {
            fed = Some(depth);
        }
        out.push(StepView {
            depth,
            tool: s.tool,
            agent_tool: s.agent_tool,
            args: s.args.map(|raw| compact(raw.get())),
            executable,
            error: s.error.and_then(error_text),
            label: s.label,
            first_error,
            after_first_error: fed.is_some_and(|f| depth > f),
        });
    }
    Ok(out)
}

/// The part of a rollout line the viewer shows; other fields are skipped unparsed.
#[derive(Deserialize)]
struct ViewLine {
    steps: Vec<ViewStep>,
}

#[derive(Deserialize)]
struct ViewStep {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    agent_tool: Option<String>,
    #[serde(default)]
    args: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    error: Option<serde_json::Value>,
    #[serde(default)]
    label: Option<String>,
}

/// JSON text without insignificant whitespace; text `serde_json::Value` cannot hold is kept as
/// written.
fn compact(raw: &str) -> String {
    serde_json::from_str::<serde_json::Value>(raw)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| raw.trim().to_string())
}
