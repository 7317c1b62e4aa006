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
    /// Only the rollouts of this failure cluster (across conditions unless it names one);
    /// the condition fields are then not used.
    #[serde(default)]
    pub cluster: Option<ClusterPick>,
    /// The rollout opened in the list: the page says where it is and its neighbours.
    #[serde(default)]
    pub focus: Option<RolloutKey>,
    /// Replace `offset` by the page holding `focus` (a deep link, a search hit, previous/next).
    #[serde(default)]
    pub seek: bool,
}

/// A rollout named by what a person can read and a link can keep across reloads: its
/// condition, task and trial (1-based, per condition and task, in input order: the filter's
/// `trial`). Corpus indices are not stable across loads; this is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutKey {
    pub dataset: String,
    pub model: String,
    pub method: String,
    pub task_id: String,
    pub trial: u32,
}

/// A failure cluster (or one condition's part of it) whose rollouts to list: a cell of the
/// clusters table ([`crate::clusters::cluster_rollouts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterPick {
    pub dataset: String,
    pub label: String,
    pub tool: Option<String>,
    pub pattern: String,
    /// (model, method); `None`: every condition of the dataset (the cluster's total).
    pub condition: Option<(String, String)>,
}

/// The rollout (and step) a URL opens, beside its condition (the hash's `cond`): its task,
/// trial and 1-based step as the hash's `rtask`, `trial` and `step`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutLink {
    pub task_id: String,
    pub trial: u32,
    pub step: Option<usize>,
}

impl RolloutLink {
    /// The hash's pairs for this link (not yet percent-encoded).
    pub fn params(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![
            ("rtask", self.task_id.clone()),
            ("trial", self.trial.to_string()),
        ];
        if let Some(step) = self.step {
            out.push(("step", step.to_string()));
        }
        out
    }

    /// The link in decoded hash pairs: `None` without a task; a missing or unreadable trial is
    /// the first, and a missing or unreadable step opens the rollout at its start.
    pub fn from_params<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Self> {
        let (mut task, mut trial, mut step) = (None, None, None);
        for (k, v) in pairs {
            match k {
                "rtask" if !v.is_empty() => task = Some(v.to_string()),
                "trial" => trial = v.parse::<u32>().ok().filter(|&t| t >= 1),
                "step" => step = v.parse::<usize>().ok().filter(|&s| s >= 1),
                _ => {}
            }
        }
        Some(RolloutLink {
            task_id: task?,
            trial: trial.unwrap_or(1),
            step,
        })
    }
}

/// Where the focused rollout is in the whole list (not only the page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Focus {
    /// Its corpus index, to ask for its steps.
    pub index: usize,
    /// 0-based position in the list.
    pub position: usize,
    pub prev: Option<RolloutKey>,
    pub next: Option<RolloutKey>,
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
    /// Condition, task and trial: what a link to the rollout holds.
    #[serde(default)]
    pub key: RolloutKey,
}

/// A page of rows and the number of rows matching in all.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RolloutPage {
    pub total: usize,
    pub offset: usize,
    pub rows: Vec<RolloutRow>,
    /// The query's `focus`, when it is in the list.
    #[serde(default)]
    pub focus: Option<Focus>,
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

/// Lists a condition's rollouts (or a failure cluster's, [`RolloutQuery::cluster`]), ordered by
/// condition, then task id (natural order, [`natural_cmp`]), then input position.
pub fn list_rollouts(corpus: &Corpus, q: &RolloutQuery) -> RolloutPage {
    let only = q.cluster.as_ref().map(|c| {
        let key = crate::clusters::ClusterKey {
            label: c.label.clone(),
            tool: c.tool.clone(),
            pattern: c.pattern.clone(),
        };
        let condition = c
            .condition
            .as_ref()
            .map(|(m, me)| (m.as_str(), me.as_str()));
        crate::clusters::cluster_rollouts(corpus, &c.dataset, &key, condition)
    });
    list_rollouts_within(corpus, q, only.as_deref())
}

/// [`list_rollouts`] over the rollouts `only` (corpus indices) instead of the query's
/// condition, when given.
pub fn list_rollouts_within(
    corpus: &Corpus,
    q: &RolloutQuery,
    only: Option<&[usize]>,
) -> RolloutPage {
    let needle = q.search.to_lowercase();
    let in_condition = |r: &crate::rollout::Rollout| {
        let (d, m, me) = corpus.condition_names(r.condition);
        d == q.dataset && m == q.model && me == q.method
    };
    let candidates: Vec<usize> = match only {
        Some(only) => only.to_vec(),
        None => (0..corpus.rollouts.len())
            .filter(|&i| in_condition(&corpus.rollouts[i]))
            .collect(),
    };
    let mut matching: Vec<usize> = candidates
        .into_iter()
        .filter(|&i| i < corpus.rollouts.len())
        .filter(|&i| {
            let r = &corpus.rollouts[i];
            let failed = !r.fully_executable();
            match q.outcome {
                Outcome::All => true,
                Outcome::FullyExecutable => !failed,
                Outcome::Recovered => failed && r.success,
                Outcome::FailedPrefixFailed => failed && !r.success,
                Outcome::NoTool => r.no_tool,
            }
        })
        .filter(|&i| {
            needle.is_empty()
                || corpus
                    .task_name(corpus.rollouts[i].task)
                    .to_lowercase()
                    .contains(&needle)
        })
        .collect();
    matching.sort_by(|&a, &b| {
        let (ra, rb) = (&corpus.rollouts[a], &corpus.rollouts[b]);
        corpus
            .condition_names(ra.condition)
            .cmp(&corpus.condition_names(rb.condition))
            .then_with(|| natural_cmp(corpus.task_name(ra.task), corpus.task_name(rb.task)))
            .then((ra.source.file, ra.source.line).cmp(&(rb.source.file, rb.source.line)))
    });
    // Trials only when a row or the focus needs them: one pass over the corpus.
    let trials = crate::filter::trial_numbers(corpus);
    let key_of = |i: usize| {
        let r = &corpus.rollouts[i];
        let (dataset, model, method) = corpus.condition_names(r.condition);
        RolloutKey {
            dataset: dataset.to_string(),
            model: model.to_string(),
            method: method.to_string(),
            task_id: corpus.task_name(r.task).to_string(),
            trial: trials[i],
        }
    };
    let limit = q.limit.max(1);
    let focus = q.focus.as_ref().and_then(|want| {
        let position = matching.iter().position(|&i| key_of(i) == *want)?;
        Some(Focus {
            index: matching[position],
            position,
            prev: position.checked_sub(1).map(|p| key_of(matching[p])),
            next: matching.get(position + 1).map(|&i| key_of(i)),
        })
    });
    let offset = match (&focus, q.seek) {
        (Some(f), true) => f.position / limit * limit,
        _ => q.offset,
    };
    let total = matching.len();
    let rows = matching
        .into_iter()
        .skip(offset)
        .take(limit)
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
                key: key_of(i),
            }
        })
        .collect();
    RolloutPage {
        total,
        offset,
        rows,
        focus,
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
    fn rollout_links_round_trip() {
        use super::RolloutLink;
        let check = |link: RolloutLink| {
            let params = link.params();
            let pairs = params.iter().map(|(k, v)| (*k, v.as_str()));
            assert_eq!(RolloutLink::from_params(pairs), Some(link));
        };
        check(RolloutLink {
            task_id: "multi_turn_base_7 & co=1".into(),
            trial: 2,
            step: Some(3),
        });
        check(RolloutLink {
            task_id: "t".into(),
            trial: 1,
            step: None,
        });
        assert_eq!(RolloutLink::from_params([("trial", "2")]), None);
        assert_eq!(
            RolloutLink::from_params([("rtask", "t"), ("trial", "x"), ("step", "0")]),
            Some(RolloutLink {
                task_id: "t".into(),
                trial: 1,
                step: None
            })
        );
    }

    #[test]
    fn focus_seeks_its_page_and_names_its_neighbours() {
        use super::{list_rollouts, ClusterPick, RolloutKey, RolloutQuery};
        let line = |t: &str, m: &str, ok: bool| {
            format!(
                r#"{{"dataset":"d","task_id":"{t}","model":"{m}","method":"x","success":false,"steps":[{{"tool":"cd","ok":{ok},"error":"no such dir 7"}}]}}"#
            ) + "\n"
        };
        // t3 twice (trials 1 and 2), in natural order after t2 and before t10.
        let text: String = [
            line("t10", "a", false),
            line("t2", "a", true),
            line("t3", "a", false),
            line("t3", "a", false),
            line("t1", "b", false),
        ]
        .concat();
        let corpus = crate::ingest::read_files([("r.jsonl", text.as_bytes())]);
        let key = |m: &str, t: &str, trial| RolloutKey {
            dataset: "d".into(),
            model: m.into(),
            method: "x".into(),
            task_id: t.into(),
            trial,
        };
        let mut q = RolloutQuery {
            dataset: "d".into(),
            model: "a".into(),
            method: "x".into(),
            limit: 2,
            focus: Some(key("a", "t3", 2)),
            seek: true,
            ..RolloutQuery::default()
        };
        let page = list_rollouts(&corpus, &q);
        let order: Vec<(String, u32)> = page
            .rows
            .iter()
            .map(|r| (r.key.task_id.clone(), r.key.trial))
            .collect();
        // The second page (t3 trial 2 is the third of four: t2, t3/1, t3/2, t10).
        assert_eq!(page.offset, 2);
        assert_eq!(order, [("t3".to_string(), 2), ("t10".to_string(), 1)]);
        let f = page.focus.unwrap();
        assert_eq!((f.index, f.position), (3, 2));
        assert_eq!(f.prev, Some(key("a", "t3", 1)));
        assert_eq!(f.next, Some(key("a", "t10", 1)));
        // Without seek the offset asked for stays, and the focus is still found.
        q.seek = false;
        q.offset = 0;
        let page = list_rollouts(&corpus, &q);
        assert_eq!((page.offset, page.focus.map(|f| f.position)), (0, Some(2)));
        // A key not in the list: no focus, the page asked for.
        q.focus = Some(key("a", "t3", 3));
        q.seek = true;
        assert_eq!(list_rollouts(&corpus, &q).focus, None);
        // A cluster's total spans conditions, in condition order.
        q.cluster = Some(ClusterPick {
            dataset: "d".into(),
            label: "unlabeled".into(),
            tool: Some("cd".into()),
            pattern: "no such dir <num>".into(),
            condition: None,
        });
        q.limit = 10;
        q.focus = None;
        let page = list_rollouts(&corpus, &q);
        let rows: Vec<(String, String)> = page
            .rows
            .iter()
            .map(|r| (r.key.model.clone(), r.task_id.clone()))
            .collect();
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            rows,
            [s("a", "t3"), s("a", "t3"), s("a", "t10"), s("b", "t1")]
        );
        q.cluster.as_mut().unwrap().condition = Some(("b".into(), "x".into()));
        assert_eq!(list_rollouts(&corpus, &q).total, 1);
    }

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
