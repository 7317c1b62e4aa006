//! The rollout model: what the scorer keeps of each rollout.
//!
//! A rollout is one run of one agent on one task. Scoring needs only a handful of numbers from
//! it — its horizon `T`, its first-error depth `FED`, its final success `Y`, the label of its
//! first failure and its cost — so that is all a [`Rollout`] holds. Its steps stay in the input
//! file; [`Source`] records where, so a viewer can re-read one rollout's steps on demand. Memory
//! therefore grows with the number of rollouts, not with the size of the input.
//!
//! Names (datasets, models, methods, task ids, error texts) are interned once in a [`Corpus`];
//! rollouts refer to them by small integer ids.

use std::collections::HashMap;
use std::fmt;

/// A primary first-failure label (paper §2.4), in the paper's tie-break order: when several
/// apply, the earliest wins. Labels are diagnostic only; no metric depends on them.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Label {
    Schema,
    Dependency,
    Precondition,
    State,
    Information,
}

impl Label {
    /// All labels in tie-break order.
    pub const ALL: [Label; 5] = [
        Label::Schema,
        Label::Dependency,
        Label::Precondition,
        Label::State,
        Label::Information,
    ];

    /// The label's name as written in rollout files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Schema => "schema",
            Label::Dependency => "dependency",
            Label::Precondition => "precondition",
            Label::State => "state",
            Label::Information => "information",
        }
    }

    /// Parses a label name; `None` for anything not in [`Label::ALL`].
    pub fn parse(name: &str) -> Option<Label> {
        Label::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// First-error depth, eq. (1): the 1-based index of the first non-executable prefix, or `T + 1`
/// when every prefix is executable. Always in `1..=T+1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fed(pub u32);

/// The mean-able cost fields of a rollout; each is optional and, when present, finite and ≥ 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cost {
    pub tokens: Option<f64>,
    pub latency_s: Option<f64>,
    pub usd: Option<f64>,
}

/// Reads one cost field.
pub type CostField = fn(&Cost) -> Option<f64>;

impl Cost {
    /// The cost field names in report order, with an accessor for each.
    pub const FIELDS: [(&'static str, CostField); 3] = [
        ("tokens", |c| c.tokens),
        ("latency_s", |c| c.latency_s),
        ("usd", |c| c.usd),
    ];
}

/// A rollout's cost as stored: the three fields of [`Cost`] with NaN for "absent" (valid costs
/// are finite), half the size of three `Option<f64>` — it is kept for every rollout.
#[derive(Clone, Copy, Debug)]
pub struct PackedCost([f64; 3]);

/// Equal when every field is equal or absent in both (NaN ≠ NaN would make absent ≠ absent).
impl PartialEq for PackedCost {
    fn eq(&self, other: &Self) -> bool {
        (0..3).all(|i| self.get(i) == other.get(i))
    }
}

impl PackedCost {
    pub fn tokens(&self) -> Option<f64> {
        self.get(0)
    }
    pub fn latency_s(&self) -> Option<f64> {
        self.get(1)
    }
    pub fn usd(&self) -> Option<f64> {
        self.get(2)
    }
    /// Field `i` in [`Cost::FIELDS`] order.
    pub fn get(&self, i: usize) -> Option<f64> {
        let v = self.0[i];
        (!v.is_nan()).then_some(v)
    }
}

impl From<Cost> for PackedCost {
    fn from(c: Cost) -> Self {
        let f = |v: Option<f64>| v.unwrap_or(f64::NAN);
        PackedCost([f(c.tokens), f(c.latency_s), f(c.usd)])
    }
}

/// Where a rollout's line lives, so its steps can be re-read: file index, 1-based line number,
/// byte offset of the line's first byte and its length in bytes (without the line break).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    pub file: u32,
    pub line: u64,
    pub offset: u64,
    pub len: u32,
}

/// What is known about the first invalid action of a rollout with `FED ≤ T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstFailure {
    /// `None` counts as "unlabeled" (or as "environment" when `environment` is set).
    pub label: Option<Label>,
    /// A label rule judged the failure the environment's, not the agent's ([`crate::label`]);
    /// then `label` is `None`. Counted apart from the paper's five labels.
    pub environment: bool,
    /// Interned provenance of the label or the environment verdict: `given`, `schema check` or
    /// `rule:<id>`; `None` when unlabeled.
    pub label_source: Option<TextId>,
    /// Interned error text, when the log gave one.
    pub error: Option<TextId>,
    /// Interned tool name of the failing step, when given.
    pub tool: Option<TextId>,
}

/// Index of a condition in [`Corpus::conditions`].
pub type ConditionId = u32;
/// Index of a task id in [`Corpus::tasks`].
pub type TaskId = u32;
/// Index of a text in [`Corpus::texts`].
pub type TextId = u32;

/// A rollout line, validated but not yet interned. (Serialised, in the browser, from the pool
/// worker that parsed it to the worker that holds the corpus: `ingest::prepared`.)
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ParsedRollout {
    pub dataset: String,
    pub task_id: String,
    pub model: String,
    pub method: String,
    pub success: bool,
    pub horizon: u32,
    pub fed: u32,
    pub failure: Option<ParsedFailure>,
    pub cost: Cost,
    /// The agent made no tool call (`steps` empty): one terminal no-tool action, `T = 1`.
    pub no_tool: bool,
    /// The rollout crashed (canonical `crash`): an infrastructure or provider error ended it.
    #[serde(default)]
    pub crashed: bool,
    /// The run the rollout came from (canonical `run`): rollouts of one condition from two runs
    /// are scored as two conditions unless the runs are merged ([`Corpus::split_runs`]).
    #[serde(default)]
    pub run: Option<String>,
}

/// The first failing step of a parsed rollout.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ParsedFailure {
    pub label: Option<Label>,
    /// Labelled `environment`: a fault that was not the agent's (then `label` is `None`).
    pub environment: bool,
    /// Where the label (or the environment verdict) came from; `None` while unlabeled.
    pub source: Option<LabelSource>,
    pub error: Option<String>,
    pub tool: Option<String>,
    /// The failing step's arguments as compact JSON (cut like the error text), for the label
    /// rules ([`crate::label`]).
    pub args: Option<String>,
    /// Whether the step refers to a value an earlier accepted step used.
    pub reference: Reference,
}

/// Whether the failing step refers to a value (an id-like string or path among its arguments)
/// that an earlier, accepted step of the rollout also used — see [`crate::label::StepContext`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// The step has no id-like argument (or no recorded arguments): nothing to tell.
    #[default]
    None,
    /// An id-like argument value appeared in an earlier step's arguments.
    Seen,
    /// The step has id-like arguments, none used by an earlier step.
    Unseen,
}

/// Where a first failure's label came from.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum LabelSource {
    /// The log's own `label`.
    Given,
    /// The tool-schema check rejected the step.
    SchemaCheck,
    /// A labelling rule (its id).
    Rule(String),
    /// The rollout crashed before the agent acted (canonical `crash`): the environment's fault.
    Crash,
}

impl LabelSource {
    /// `given`, `schema check` or `rule:<id>`.
    pub fn name(&self) -> String {
        match self {
            LabelSource::Given => "given".to_string(),
            LabelSource::SchemaCheck => "schema check".to_string(),
            LabelSource::Rule(id) => format!("rule:{id}"),
            LabelSource::Crash => "crash".to_string(),
        }
    }

    /// Reads [`LabelSource::name`] back.
    pub fn parse(name: &str) -> Option<LabelSource> {
        match name {
            "given" => Some(LabelSource::Given),
            "schema check" => Some(LabelSource::SchemaCheck),
            "crash" => Some(LabelSource::Crash),
            _ => name
                .strip_prefix("rule:")
                .filter(|id| !id.is_empty())
                .map(|id| LabelSource::Rule(id.to_string())),
        }
    }
}

/// One scored rollout.
#[derive(Clone, Debug, PartialEq)]
pub struct Rollout {
    pub condition: ConditionId,
    pub task: TaskId,
    /// `T ≥ 1`: the number of tool actions, or 1 for a no-tool rollout.
    pub horizon: u32,
    pub fed: Fed,
    pub success: bool,
    /// Present iff `FED ≤ T`.
    pub first_failure: Option<FirstFailure>,
    pub cost: PackedCost,
    /// No tool call at all: the rollout is one terminal no-tool action (`T = 1`).
    pub no_tool: bool,
    /// Ended by a crash (an infrastructure or provider error), counted per condition.
    pub crashed: bool,
    /// Interned run key ([`ParsedRollout::run`]), when the input names one.
    pub run: Option<TextId>,
    pub source: Source,
}

impl Rollout {
    /// Every prefix executed: `FED = T + 1` (eq. 8's event).
    pub fn fully_executable(&self) -> bool {
        self.fed.0 > self.horizon
    }
}

/// The condition key: dataset × model × method, as interned name ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Condition {
    pub dataset: u32,
    pub model: u32,
    pub method: u32,
}

/// A string interner: each distinct string stored once, addressed by a dense `u32`.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    names: Vec<Box<str>>,
    index: HashMap<Box<str>, u32>,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.index.get(s) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("more than 2^32 distinct names");
        self.names.push(s.into());
        self.index.insert(s.into(), id);
        id
    }

    pub fn get(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    pub fn lookup(&self, s: &str) -> Option<u32> {
        self.index.get(s).copied()
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// One input file as seen by the parser.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputFile {
    pub name: String,
    pub bytes: u64,
    /// Lines seen (including blank ones).
    pub lines: u64,
    /// Rollouts read from this file.
    pub rollouts: u64,
    /// Lines rejected with a diagnostic.
    pub errors: u64,
    /// The earlier file with the same bytes (and the same import options): this one was not
    /// counted again.
    pub repeats: Option<u32>,
    /// The archive this file is a member of (its name as given: the file the user dropped or
    /// named), when it is one ([`crate::ingest::archive`]).
    pub archive: Option<String>,
}

/// A problem with one line (or one file, when `line` is `None`) of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: Option<u64>,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// How many diagnostics are kept verbatim; the rest are only counted.
pub const MAX_DIAGNOSTICS: usize = 1000;

/// One kind of problem: every diagnostic whose message reads the same once the parts that
/// vary (numbers, paths, quoted names) are set aside ([`problem_kind`]), counted over all the
/// diagnostics (not only the first [`MAX_DIAGNOSTICS`]), with the first as its example.
#[derive(Clone, Debug, PartialEq)]
pub struct ProblemKind {
    pub kind: String,
    pub count: u64,
    pub example: Diagnostic,
}

/// The kind of a diagnostic's message: numbers become `N`, paths and quoted or backquoted
/// parts `…`, so that `missing field `dataset` at line 3 column 1` and the same at line 7 are
/// one kind. A person reads the count and the first example, not thousands of lines.
///
/// ```
/// use prefix_exec::rollout::problem_kind;
/// assert_eq!(
///     problem_kind("expected value at line 3 column 1"),
///     problem_kind("expected value at line 17 column 1")
/// );
/// assert_eq!(problem_kind("the same bytes as a/b.json, already loaded"), "the same bytes as …, already loaded");
/// ```
pub fn problem_kind(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(200));
    let mut quote: Option<char> = None;
    for word in message.split(' ') {
        let word = match quote {
            // Inside a quoted part: only what follows its closing quote is kept.
            Some(q) => match word.find(q) {
                Some(end) => {
                    quote = None;
                    &word[end + 1..]
                }
                None => continue,
            },
            None => word,
        };
        if !out.is_empty() {
            out.push(' ');
        }
        if let Some(q) = word.chars().next().filter(|c| matches!(c, '`' | '"')) {
            out.push('…');
            let rest = &word[1..];
            match rest.find(q) {
                Some(end) => out.push_str(&rest[end + 1..]),
                None => quote = Some(q),
            }
            continue;
        }
        if word.contains(['/', '\\']) {
            out.push('…');
            // Keep what punctuates the sentence after the path.
            let tail = word.len() - word.trim_end_matches([',', ':', ';', ')']).len();
            out.push_str(&word[word.len() - tail..]);
            continue;
        }
        let mut digits = false;
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !digits {
                    out.push('N');
                }
                digits = true;
            } else {
                digits = false;
                out.push(c);
            }
        }
    }
    out
}

/// Everything read from the input: interned names, conditions, rollouts and diagnostics.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub datasets: Interner,
    pub models: Interner,
    pub methods: Interner,
    /// Task ids, interned per dataset: the key is `dataset id` + `\u{0}` + task id text, so the
    /// same task text in two datasets gives two tasks.
    pub tasks: Interner,
    pub texts: Interner,
    pub conditions: Vec<Condition>,
    condition_index: HashMap<Condition, ConditionId>,
    pub rollouts: Vec<Rollout>,
    pub files: Vec<InputFile>,
    /// The first [`MAX_DIAGNOSTICS`] diagnostics, in input order.
    pub diagnostics: Vec<Diagnostic>,
    /// All diagnostics, including those not kept.
    pub diagnostics_total: u64,
    /// Label rules ([`crate::label`]) were in force for some input file: the report then lists
    /// where each condition's first-failure labels came from.
    pub label_rules: bool,
    /// The rationale of each label rule that labelled a first failure, by provenance name
    /// (`rule:<id>`): what the rollout browser shows on hover. One entry per rule used.
    pub label_rationales: std::collections::BTreeMap<String, String>,
    /// How success was decided, by dataset, where the rollouts say so (`meta.success_rule`,
    /// e.g. ToolSandbox's similarity threshold): the report states it under the table.
    pub success_rules: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    /// What reading the input decided that the report states once (runs scored apart, files
    /// skipped as outside the protocol): the report's notes begin with these.
    pub notes: Vec<String>,
    /// The local path a model's name was read from (`meta.model_path`), by model name.
    pub model_paths: std::collections::BTreeMap<String, String>,
    /// Every diagnostic by kind, in order of first appearance.
    pub problems: Vec<ProblemKind>,
    problem_index: HashMap<String, usize>,
    /// The input's own figures that reading confirmed (a log's aggregate success rate, a run
    /// summary's mean similarity, recomputed from its rows and found equal): not problems, so
    /// neither diagnostics nor counted among them. A check that fails is a diagnostic.
    pub checks: Vec<Diagnostic>,
}

impl Corpus {
    /// The id of a condition, adding it when new.
    pub fn condition_id(&mut self, dataset: &str, model: &str, method: &str) -> ConditionId {
        let key = Condition {
            dataset: self.datasets.intern(dataset),
            model: self.models.intern(model),
            method: self.methods.intern(method),
        };
        if let Some(&id) = self.condition_index.get(&key) {
            return id;
        }
        let id = self.conditions.len() as ConditionId;
        self.conditions.push(key);
        self.condition_index.insert(key, id);
        id
    }

    /// The id of a task of a dataset, adding it when new.
    pub fn task_id(&mut self, dataset: u32, task: &str) -> TaskId {
        let mut key = String::with_capacity(task.len() + 12);
        key.push_str(&dataset.to_string());
        key.push('\u{0}');
        key.push_str(task);
        self.tasks.intern(&key)
    }

    /// The task id text of an interned task (without its dataset prefix).
    pub fn task_name(&self, task: TaskId) -> &str {
        let key = self.tasks.get(task);
        key.split_once('\u{0}').map_or(key, |(_, t)| t)
    }

    /// Names of a condition: (dataset, model, method).
    pub fn condition_names(&self, id: ConditionId) -> (&str, &str, &str) {
        let c = self.conditions[id as usize];
        (
            self.datasets.get(c.dataset),
            self.models.get(c.model),
            self.methods.get(c.method),
        )
    }

    /// Interns a validated rollout (from any format's reader) into the corpus.
    pub fn add_rollout(&mut self, parsed: ParsedRollout, source: Source) {
        let condition = self.condition_id(&parsed.dataset, &parsed.model, &parsed.method);
        let dataset = self.conditions[condition as usize].dataset;
        let task = self.task_id(dataset, &parsed.task_id);
        let first_failure = parsed.failure.map(|f| FirstFailure {
            label: f.label,
            environment: f.environment,
            label_source: f.source.map(|s| self.texts.intern(&s.name())),
            error: f.error.map(|e| self.texts.intern(&e)),
            tool: f.tool.map(|t| self.texts.intern(&t)),
        });
        self.rollouts.push(Rollout {
            condition,
            task,
            horizon: parsed.horizon,
            fed: Fed(parsed.fed),
            success: parsed.success,
            first_failure,
            cost: parsed.cost.into(),
            no_tool: parsed.no_tool,
            crashed: parsed.crashed,
            run: parsed.run.map(|r| self.texts.intern(&r)),
            source,
        });
    }

    /// Scores each run of a condition as a condition of its own: rollouts of one (dataset,
    /// model, method) that name different runs ([`Rollout::run`]; a rollout naming none is a
    /// run of its own too) move to conditions whose method carries the run's label, e.g.
    /// `default (run 2025-08-15 23:27:18)`, and a note names them. Two runs of one model are
    /// not two trials of one condition — a broken run and its rerun differ completely — unless
    /// `merged(condition)` says so (the user's `merge_runs`). `label` turns the runs' keys
    /// into the short labels that tell them apart. Idempotent.
    pub fn split_runs(
        &mut self,
        merged: impl Fn(ConditionId) -> bool,
        label: impl Fn(&[&str]) -> Vec<String>,
    ) {
        use std::collections::{BTreeMap, BTreeSet};
        // Condition → its runs in order of appearance (None: rollouts that name no run).
        let mut runs: BTreeMap<ConditionId, Vec<Option<TextId>>> = BTreeMap::new();
        let mut seen: BTreeSet<(ConditionId, Option<TextId>)> = BTreeSet::new();
        for r in &self.rollouts {
            if seen.insert((r.condition, r.run)) {
                runs.entry(r.condition).or_default().push(r.run);
            }
        }
        let mut moved: BTreeMap<(ConditionId, Option<TextId>), ConditionId> = BTreeMap::new();
        let mut merged_notes = Vec::new();
        for (condition, list) in runs {
            if list.len() < 2 {
                continue;
            }
            let (dataset, model, method) = self.condition_names(condition);
            let (dataset, model, method) =
                (dataset.to_string(), model.to_string(), method.to_string());
            if merged(condition) {
                merged_notes.push(format!(
                    "{dataset}: {model} · {method}: {} runs merged into one condition (their \
                     rollouts are trials of one condition)",
                    list.len()
                ));
                continue;
            }
            let keys: Vec<&str> = list
                .iter()
                .map(|r| r.map_or("", |t| self.texts.get(t)))
                .collect();
            let labels = label(&keys);
            let mut names = Vec::with_capacity(list.len());
            for (i, (run, l)) in list.iter().zip(&labels).enumerate() {
                let name = format!("{method} (run {l})");
                if i == 0 {
                    // The first run keeps the condition's id (so no condition is left empty).
                    self.rename_method(condition, &name);
                } else {
                    let id = self.condition_id(&dataset, &model, &name);
                    moved.insert((condition, *run), id);
                }
                names.push(name);
            }
            self.notes.push(format!(
                "{dataset}: {model} · {method} came from {} runs, scored as {} conditions ({}); \
                 merge runs (--merge-runs) to score them as trials of one condition",
                list.len(),
                list.len(),
                names.join(", ")
            ));
        }
        for note in merged_notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        if moved.is_empty() {
            return;
        }
        for r in &mut self.rollouts {
            if let Some(&id) = moved.get(&(r.condition, r.run)) {
                r.condition = id;
            }
        }
    }

    /// A copy holding only the rollouts with `keep[i]` set, in order, and the conditions
    /// that still have one (renumbered in their order, names and everything else kept), with
    /// each kept rollout's index in `self`: what a filter's report is built from
    /// ([`crate::filter`]).
    pub fn retain_rollouts(&self, keep: &[bool]) -> (Corpus, Vec<usize>) {
        let original: Vec<usize> = (0..self.rollouts.len())
            .filter(|&i| keep.get(i).copied().unwrap_or(false))
            .collect();
        let mut used = vec![false; self.conditions.len()];
        for &i in &original {
            used[self.rollouts[i].condition as usize] = true;
        }
        let mut renumber = vec![ConditionId::MAX; self.conditions.len()];
        let mut conditions = Vec::new();
        let mut condition_index = HashMap::new();
        for (id, c) in self.conditions.iter().enumerate() {
            if used[id] {
                renumber[id] = conditions.len() as ConditionId;
                condition_index.insert(*c, conditions.len() as ConditionId);
                conditions.push(*c);
            }
        }
        let rollouts = original
            .iter()
            .map(|&i| {
                let mut r = self.rollouts[i].clone();
                r.condition = renumber[r.condition as usize];
                r
            })
            .collect();
        let sub = Corpus {
            conditions,
            condition_index,
            rollouts,
            ..self.clone_without_rollouts()
        };
        (sub, original)
    }

    /// Everything but the rollouts and conditions (left empty).
    fn clone_without_rollouts(&self) -> Corpus {
        Corpus {
            datasets: self.datasets.clone(),
            models: self.models.clone(),
            methods: self.methods.clone(),
            tasks: self.tasks.clone(),
            texts: self.texts.clone(),
            conditions: Vec::new(),
            condition_index: HashMap::new(),
            rollouts: Vec::new(),
            files: self.files.clone(),
            diagnostics: self.diagnostics.clone(),
            diagnostics_total: self.diagnostics_total,
            label_rules: self.label_rules,
            label_rationales: self.label_rationales.clone(),
            success_rules: self.success_rules.clone(),
            notes: self.notes.clone(),
            model_paths: self.model_paths.clone(),
            problems: self.problems.clone(),
            problem_index: self.problem_index.clone(),
            checks: self.checks.clone(),
        }
    }

    /// Gives a condition another method name, keeping its id.
    fn rename_method(&mut self, id: ConditionId, method: &str) {
        let old = self.conditions[id as usize];
        let new = Condition {
            method: self.methods.intern(method),
            ..old
        };
        self.condition_index.remove(&old);
        self.condition_index.insert(new, id);
        self.conditions[id as usize] = new;
    }

    /// Records a diagnostic, keeping at most [`MAX_DIAGNOSTICS`] verbatim.
    pub fn push_diagnostic(&mut self, d: Diagnostic) {
        self.diagnostics_total += 1;
        let kind = problem_kind(&d.message);
        match self.problem_index.get(&kind) {
            Some(&i) => self.problems[i].count += 1,
            None => {
                self.problem_index.insert(kind.clone(), self.problems.len());
                self.problems.push(ProblemKind {
                    kind,
                    count: 1,
                    example: d.clone(),
                });
            }
        }
        if self.diagnostics.len() < MAX_DIAGNOSTICS {
            self.diagnostics.push(d);
        }
    }
}
