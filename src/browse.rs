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

/// Natural order of task ids: runs of ASCII digits compare as numbers (`2` < `10`), the rest
/// as text, so `t2` < `t10` and `0, 1, 2, …, 10` list as people count. Ids equal as numbers but
/// written differently (`7` and `007`) fall back to plain text order, so the order is total and
/// agrees with equality.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    while let (Some(&cx), Some(&cy)) = (x.first(), y.first()) {
        if cx.is_ascii_digit() && cy.is_ascii_digit() {
            let dx = x.iter().take_while(|c| c.is_ascii_digit()).count();
            let dy = y.iter().take_while(|c| c.is_ascii_digit()).count();
            // Leading zeros do not change a number; compare lengths, then digits.
            let trim = |d: &[u8]| -> usize { d.iter().take_while(|&&c| c == b'0').count() };
            let (nx, ny) = (&x[trim(&x[..dx])..dx], &y[trim(&y[..dy])..dy]);
            let o = nx.len().cmp(&ny.len()).then_with(|| nx.cmp(ny));
            if o != Ordering::Equal {
                return o;
            }
            x = &x[dx..];
            y = &y[dy..];
        } else {
            if cx != cy {
                // Compare whole characters, not bytes of one: cut at the next digit or end.
                let run = |s: &[u8]| s.iter().position(u8::is_ascii_digit).unwrap_or(s.len());
                let (tx, ty) = (&x[..run(x)], &y[..run(y)]);
                return tx.cmp(ty);
            }
            x = &x[1..];
            y = &y[1..];
        }
    }
    x.len().cmp(&y.len()).then_with(|| a.cmp(b))
}

/// Lists a condition's rollouts, ordered by task id (natural order, [`natural_cmp`]) then input
/// position.
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
        natural_cmp(corpus.task_name(ra.task), corpus.task_name(rb.task))
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

/// Two conditions of a dataset to compare task by task.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairTasksQuery {
    pub dataset: String,
    pub a: crate::report::ConditionRef,
    pub b: crate::report::ConditionRef,
}

/// One condition's rollouts of one task.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSide {
    pub trials: u32,
    pub successes: u32,
    pub fully_executable: u32,
    /// Corpus indices of the rollouts, in input order (to ask for their steps).
    pub rollouts: Vec<usize>,
}

impl TaskSide {
    /// Every trial succeeded.
    pub fn succeeded(&self) -> bool {
        self.trials > 0 && self.successes == self.trials
    }
}

/// A task both conditions ran, where they differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskDiff {
    pub task_id: String,
    pub a: TaskSide,
    pub b: TaskSide,
}

impl TaskDiff {
    /// Whether A's and B's shares of successes, and of fully executable trials, differ
    /// (compared exactly: x/n ≠ y/m ⇔ x·m ≠ y·n).
    pub fn differs(a: &TaskSide, b: &TaskSide) -> (bool, bool) {
        let differ = |x: u32, y: u32| {
            u64::from(x) * u64::from(b.trials) != u64::from(y) * u64::from(a.trials)
        };
        (
            differ(a.successes, b.successes),
            differ(a.fully_executable, b.fully_executable),
        )
    }
}

/// Task-level agreement of two conditions on their shared tasks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairTasks {
    pub shared: u64,
    pub only_a: u64,
    pub only_b: u64,
    /// Shared tasks by success (a task succeeds in a condition when every trial of it did):
    /// both, A only, B only, neither.
    pub cells: [u64; 4],
    /// Shared tasks whose success or full-executability counts differ between A and B, in
    /// natural task order.
    pub differing: Vec<TaskDiff>,
}

/// Compares two conditions task by task: shared tasks, the four success cells, and the tasks
/// where they differ in success or in full executability (trial counts compared as shares).
pub fn pair_tasks(corpus: &Corpus, q: &PairTasksQuery) -> PairTasks {
    use std::collections::BTreeMap;
    let mut sides: [BTreeMap<u32, TaskSide>; 2] = [BTreeMap::new(), BTreeMap::new()];
    for (i, r) in corpus.rollouts.iter().enumerate() {
        let (d, m, me) = corpus.condition_names(r.condition);
        if d != q.dataset {
            continue;
        }
        for (side, c) in [&q.a, &q.b].into_iter().enumerate() {
            if m == c.model && me == c.method {
                let t = sides[side].entry(r.task).or_default();
                t.trials += 1;
                t.successes += u32::from(r.success);
                t.fully_executable += u32::from(r.fully_executable());
                t.rollouts.push(i);
            }
        }
    }
    let [mut a, mut b] = sides;
    let mut out = PairTasks {
        only_b: b.keys().filter(|t| !a.contains_key(t)).count() as u64,
        ..PairTasks::default()
    };
    let mut differing = Vec::new();
    for (task, sa) in std::mem::take(&mut a) {
        let Some(sb) = b.remove(&task) else {
            out.only_a += 1;
            continue;
        };
        out.shared += 1;
        let cell = match (sa.succeeded(), sb.succeeded()) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        };
        out.cells[cell] += 1;
        let (success, executability) = TaskDiff::differs(&sa, &sb);
        if success || executability {
            differing.push(TaskDiff {
                task_id: corpus.task_name(task).to_string(),
                a: sa,
                b: sb,
            });
        }
    }
    differing.sort_by(|x, y| natural_cmp(&x.task_id, &y.task_id));
    out.differing = differing;
    out
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
    /// Which rule rejected the call, where the reader decided by rules (transcripts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reject_source: Option<String>,
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
            reject_source: s.reject_source.filter(|_| !executable),
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
    #[serde(default)]
    reject_source: Option<String>,
}

/// JSON text without insignificant whitespace; text `serde_json::Value` cannot hold is kept as
/// written.
fn compact(raw: &str) -> String {
    serde_json::from_str::<serde_json::Value>(raw)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| raw.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;
    use std::cmp::Ordering::*;

    #[test]
    fn pair_tasks_cells_and_differences() {
        use super::{pair_tasks, PairTasksQuery};
        use crate::report::ConditionRef;
        let line = |t: &str, m: &str, ok: bool, step: bool| {
            format!(
                r#"{{"dataset":"d","task_id":"{t}","model":"{m}","method":"x","success":{ok},"steps":[{{"ok":{step}}}]}}"#
            ) + "\n"
        };
        let text: String = [
            line("10", "a", true, true),
            line("2", "a", true, false),
            line("3", "a", false, true),
            line("4", "a", false, true),
            line("only-a", "a", true, true),
            line("10", "b", true, true),
            line("2", "b", false, false),
            line("3", "b", true, true),
            line("4", "b", false, false),
            line("4", "b", false, true),
            line("only-b", "b", true, true),
        ]
        .concat();
        let corpus = crate::ingest::read_files([("r.jsonl", text.as_bytes())]);
        let p = pair_tasks(
            &corpus,
            &PairTasksQuery {
                dataset: "d".into(),
                a: ConditionRef::new("a", "x"),
                b: ConditionRef::new("b", "x"),
            },
        );
        assert_eq!((p.shared, p.only_a, p.only_b), (4, 1, 1));
        // both: 10; A only: 2; B only: 3; neither: 4.
        assert_eq!(p.cells, [1, 1, 1, 1]);
        // 10 agrees; 4 differs in full executability only (1/1 vs 1/2); natural order.
        let ids: Vec<&str> = p.differing.iter().map(|d| d.task_id.as_str()).collect();
        assert_eq!(ids, ["2", "3", "4"]);
        assert_eq!(p.differing[2].b.trials, 2);
        assert_eq!(p.differing[2].b.fully_executable, 1);
    }

    #[test]
    fn natural_order_of_task_ids() {
        let mut ids = vec![
            "10", "2", "1", "0", "11", "t10", "t2", "t1a", "t1", "a", "", "007", "7",
        ];
        ids.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            ids,
            ["", "0", "1", "2", "007", "7", "10", "11", "a", "t1", "t1a", "t2", "t10"]
        );
        assert_eq!(natural_cmp("multi_turn_base_9", "multi_turn_base_10"), Less);
        assert_eq!(natural_cmp("x", "x"), Equal);
        assert_eq!(natural_cmp("é2", "é10"), Less);
        assert_eq!(
            natural_cmp("99999999999999999999999", "100000000000000000000000"),
            Less
        );
    }

    /// A total order consistent with equality: antisymmetric, and Equal only for equal text.
    #[test]
    fn natural_order_is_total() {
        let ids = [
            "1", "01", "001", "a1", "a01", "a1b", "b", "1a", "1 ", " 1", "ä", "z9z", "z09z",
        ];
        for a in ids {
            for b in ids {
                assert_eq!(natural_cmp(a, b), natural_cmp(b, a).reverse(), "{a} {b}");
                assert_eq!(natural_cmp(a, b) == Equal, a == b, "{a} {b}");
                for c in ids {
                    if natural_cmp(a, b) == Less && natural_cmp(b, c) == Less {
                        assert_eq!(natural_cmp(a, c), Less, "{a} {b} {c}");
                    }
                }
            }
        }
    }
}
