//! Filters that re-score: a subset of the corpus's rollouts, scored as if it were the whole
//! input. A [`Filter`] keeps the rollouts every one of its clauses accepts; [`Filter::apply`]
//! gives a new [`Corpus`] (and [`ImportSummary`]) holding only those, so every number of the
//! report — tables, curves, ranks, paired comparisons, intervals — is computed on the subset by
//! the unchanged scorer. Conditions left without a rollout disappear; a dataset's tasks (the
//! bootstrap's population) are the tasks its kept rollouts ran.
//!
//! The text grammar (the CLI's `--filter`, the Python `filter=`, later the app's URL hash;
//! [`Filter::parse`] reads it, `Display` writes it back in one canonical spelling, which is what
//! the report states in `settings.filter`):
//!
//! ```text
//! filter := clause (";" clause)*
//! clause := "common" | field op values
//! field  := dataset | model | method | condition | task | trial | outcome | label | meta.KEY
//! op     := "=" (one of the values) | "!=" (none of them)
//!         | "~" (a regular expression, case-insensitive) | "!~" (does not match it)
//! values := value ("," value)*   (with ~ and !~: the whole rest of the clause is one pattern)
//! value  := text, or "text" with \" and \\ (needed for , ; " and outer spaces)
//! ```
//!
//! - `condition` values are `MODEL · METHOD` (the report's own spelling, a middle dot between
//!   spaces); `task` is the task id; `~` works on these and on `dataset`, `model`, `method`.
//! - `trial` is a rollout's 1-based position among the rollouts of its (condition, task), in
//!   input order: `trial=1`, `trial=1-3`, `trial=1,3`.
//! - `outcome`: `executable` (FED = T + 1), `failed_prefix` (FED ≤ T), `recovered` (FED ≤ T and
//!   successful), `unrecovered` (FED ≤ T and failed), `success`, `failure`, `no_tool`, `crashed`.
//! - `label` (the first failure's): `schema`, `dependency`, `precondition`, `state`,
//!   `information`, `environment`, `unlabeled`, or `none` (no failure: fully executable).
//! - `common` (the CLI's `--common-tasks`) keeps, per dataset, the tasks that every condition
//!   of the dataset ran — the common cohort. It is applied after every other clause: the
//!   conditions that count are those the other clauses left.
//! - Clauses combine with AND; values of one clause with OR.
//!
//! - `meta.KEY` (`=`, `!=`, `~`, `!~`) is a rollout's metadata (`meta` of its canonical line:
//!   BFCL's category, tau2's termination reason, ToolSandbox's categories; a dotted key walks
//!   into objects, an array matches when any element does). The corpus keeps no metadata, so
//!   the caller re-reads the rollouts and hands the values over ([`Filter::with_meta`]; the
//!   CLI does this only when a `meta.*` clause is given).
//!
//! ```
//! use prefix_exec::filter::Filter;
//! let f = Filter::parse("model = gpt-4.1, gpt-5; task ~ ^multi_turn; trial=1; common").unwrap();
//! assert_eq!(f.to_string(), "model=gpt-4.1,gpt-5; task~^multi_turn; trial=1; common");
//! assert!(Filter::parse("colour=red").unwrap_err().to_string().contains("unknown field"));
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use crate::formats::ImportSummary;
use crate::rollout::{Corpus, Rollout};

// The patterns' engine is `regex-lite`, natively and in the browser's worker alike: a filter
// decides which rollouts a report scores, so the CLI and the app must keep the same ones (the
// report is byte-identical in both). `regex` would add about 800 KB to the worker's wasm (a size
// budget, README "Size"), and filter patterns run over short names, ids and metadata values,
// where its speed does not show. Its syntax is `regex`'s but for Unicode classes (`\p{…}`, a
// parse error), and case-insensitive matching and `\w`, `\d`, `\s` are ASCII-only
// (docs/search.md).
use regex_lite as pattern;

pub mod choices;

/// A parsed filter: clauses combined with AND. The empty filter keeps everything.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    clauses: Vec<Clause>,
    /// The metadata values of the corpus's rollouts for the `meta.*` keys the clauses name
    /// ([`Filter::with_meta`]), by rollout index; `None` until given.
    meta: Option<std::sync::Arc<Vec<MetaValues>>>,
}

/// A rollout's metadata values, by the dotted key a filter names (`termination_reason`,
/// `category`): a scalar as its text (strings as they are, numbers and booleans as JSON), an
/// array as the texts of its scalar elements; a key the rollout lacks is absent.
pub type MetaValues = BTreeMap<String, Vec<String>>;

/// Two filters are equal when they read the same (patterns compare by their text).
impl PartialEq for Filter {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

#[derive(Clone, Debug)]
enum Clause {
    /// The common cohort of each dataset.
    Common,
    Test {
        field: Field,
        negate: bool,
        test: Test,
    },
    /// A metadata field (`meta.KEY`): a value of the key equals one of the values, or matches
    /// the pattern.
    Meta {
        key: String,
        negate: bool,
        test: Test,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Dataset,
    Model,
    Method,
    Condition,
    Task,
    Trial,
    Outcome,
    Label,
}

impl Field {
    const ALL: [(&'static str, Field); 8] = [
        ("dataset", Field::Dataset),
        ("model", Field::Model),
        ("method", Field::Method),
        ("condition", Field::Condition),
        ("task", Field::Task),
        ("trial", Field::Trial),
        ("outcome", Field::Outcome),
        ("label", Field::Label),
    ];

    fn name(self) -> &'static str {
        Field::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("", |(n, _)| n)
    }

    /// Whether the field is a name (text): `=` compares it exactly, `~` matches a pattern.
    fn is_text(self) -> bool {
        matches!(
            self,
            Field::Dataset | Field::Model | Field::Method | Field::Condition | Field::Task
        )
    }
}

/// Outcomes a rollout can be asked for (several hold at once: `recovered` is also
/// `failed_prefix` and `success`).
const OUTCOMES: [&str; 8] = [
    "executable",
    "failed_prefix",
    "recovered",
    "unrecovered",
    "success",
    "failure",
    "no_tool",
    "crashed",
];

/// First-failure labels a rollout can be asked for.
const LABELS: [&str; 8] = [
    "schema",
    "dependency",
    "precondition",
    "state",
    "information",
    "environment",
    "unlabeled",
    "none",
];

#[derive(Clone, Debug)]
enum Test {
    /// One of these texts (exact, case-sensitive), outcomes or labels.
    Values(Vec<String>),
    /// Matches the pattern; the source as written is kept to state the filter.
    Pattern(pattern::Regex, String),
    /// Trial numbers, as inclusive ranges.
    Trials(Vec<(u32, u32)>),
}

/// A filter that cannot be read: which clause, and what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError {
    pub clause: String,
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "filter clause {:?}: {}", self.clause, self.message)
    }
}

impl std::error::Error for FilterError {}

/// What [`Filter::apply`] gives: the kept rollouts as a corpus of their own.
#[derive(Clone, Debug)]
pub struct Filtered {
    pub corpus: Corpus,
    pub summary: Option<ImportSummary>,
    /// For each rollout of [`Filtered::corpus`], its index in the corpus filtered (so a view of
    /// the subset opens the original rollout).
    pub original: Vec<usize>,
    /// Rollouts of the corpus filtered.
    pub of: usize,
}

impl Filter {
    /// The filter keeping the common cohort only (`--common-tasks`).
    pub fn common_tasks() -> Filter {
        Filter {
            clauses: vec![Clause::Common],
            meta: None,
        }
    }

    /// Reads the text grammar of the module documentation; blank text is the empty filter.
    pub fn parse(text: &str) -> Result<Filter, FilterError> {
        let mut clauses = Vec::new();
        for part in split_outside_quotes(text, ';') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            clauses.push(parse_clause(part).map_err(|message| FilterError {
                clause: part.to_string(),
                message,
            })?);
        }
        Ok(Filter {
            clauses,
            meta: None,
        })
    }

    /// This filter and `other`: the rollouts both keep.
    pub fn and(mut self, other: Filter) -> Filter {
        for c in other.clauses {
            // One `common` is enough: it is applied once, after the other clauses.
            if !(matches!(c, Clause::Common) && self.common()) {
                self.clauses.push(c);
            }
        }
        self
    }

    /// The metadata keys the filter's `meta.*` clauses name (empty: no metadata needed).
    pub fn meta_keys(&self) -> BTreeSet<String> {
        self.clauses
            .iter()
            .filter_map(|c| match c {
                Clause::Meta { key, .. } => Some(key.clone()),
                _ => None,
            })
            .collect()
    }

    /// The filter with the metadata values of the corpus it will be applied to, one entry per
    /// rollout in corpus order ([`meta_values`] reads them from a rollout's canonical line).
    /// The corpus keeps no metadata, so a caller whose filter names `meta.*` keys re-reads the
    /// rollouts (the CLI does) and hands the values here; without them a `meta.*` clause finds
    /// no value (`=` keeps nothing, `!=` everything).
    pub fn with_meta(mut self, meta: Vec<MetaValues>) -> Filter {
        self.meta = Some(std::sync::Arc::new(meta));
        self
    }

    /// Whether the filter restricts anything (the empty filter keeps the report unchanged).
    pub fn is_active(&self) -> bool {
        !self.clauses.is_empty()
    }

    /// Whether the filter keeps only the common cohort.
    pub fn common(&self) -> bool {
        self.clauses.iter().any(|c| matches!(c, Clause::Common))
    }

    /// For each rollout of `corpus`, whether the filter keeps it.
    pub fn keeps(&self, corpus: &Corpus) -> Vec<bool> {
        let trials = if self.uses(Field::Trial) {
            trial_numbers(corpus)
        } else {
            Vec::new()
        };
        let mut keep: Vec<bool> = corpus
            .rollouts
            .iter()
            .enumerate()
            .map(|(i, r)| {
                self.clauses.iter().all(|c| match c {
                    Clause::Common => true,
                    Clause::Meta { key, negate, test } => {
                        let values = self
                            .meta
                            .as_ref()
                            .and_then(|m| m.get(i))
                            .and_then(|m| m.get(key));
                        let hit = values.is_some_and(|vs| {
                            vs.iter().any(|v| match test {
                                Test::Values(want) => want.contains(v),
                                Test::Pattern(re, _) => re.is_match(v),
                                Test::Trials(_) => false,
                            })
                        });
                        hit != *negate
                    }
                    Clause::Test {
                        field,
                        negate,
                        test,
                    } => {
                        let trial = trials.get(i).copied().unwrap_or(0);
                        test_rollout(corpus, r, trial, *field, test) != *negate
                    }
                })
            })
            .collect();
        if self.common() {
            keep_common_tasks(corpus, &mut keep);
        }
        keep
    }

    /// The kept rollouts as a corpus of their own (and the import summary restricted to them):
    /// what the report of the subset is built from. The corpus's notes gain one saying what
    /// the filter kept.
    pub fn apply(&self, corpus: &Corpus, summary: Option<&ImportSummary>) -> Filtered {
        let keep = self.keeps(corpus);
        let (mut sub, original) = corpus.retain_rollouts(&keep);
        let kept_datasets: BTreeSet<&str> = sub
            .conditions
            .iter()
            .map(|c| sub.datasets.get(c.dataset))
            .collect();
        let kept_datasets: BTreeSet<String> =
            kept_datasets.into_iter().map(str::to_string).collect();
        sub.success_rules.retain(|d, _| kept_datasets.contains(d));
        sub.notes.push(format!(
            "filter {self}: {} of {} rollouts kept ({} conditions)",
            sub.rollouts.len(),
            corpus.rollouts.len(),
            sub.conditions.len()
        ));
        Filtered {
            summary: summary.map(|s| s.restricted(&original)),
            corpus: sub,
            original,
            of: corpus.rollouts.len(),
        }
    }

    fn uses(&self, field: Field) -> bool {
        self.clauses
            .iter()
            .any(|c| matches!(c, Clause::Test { field: f, .. } if *f == field))
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.clauses.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            match c {
                Clause::Common => f.write_str("common")?,
                Clause::Meta { key, negate, test } => {
                    let bang = if *negate { "!" } else { "" };
                    match test {
                        Test::Values(values) => {
                            let values: Vec<String> =
                                values.iter().map(|v| quote(v, true)).collect();
                            write!(f, "meta.{key}{bang}={}", values.join(","))?
                        }
                        Test::Pattern(_, source) => {
                            write!(f, "meta.{key}{bang}~{}", quote(source, false))?
                        }
                        Test::Trials(_) => {}
                    }
                }
                Clause::Test {
                    field,
                    negate,
                    test,
                } => {
                    let bang = if *negate { "!" } else { "" };
                    match test {
                        Test::Values(values) => {
                            let values: Vec<String> =
                                values.iter().map(|v| quote(v, true)).collect();
                            write!(f, "{}{bang}={}", field.name(), values.join(","))?
                        }
                        Test::Pattern(_, source) => {
                            write!(f, "{}{bang}~{}", field.name(), quote(source, false))?
                        }
                        Test::Trials(ranges) => {
                            let ranges: Vec<String> = ranges
                                .iter()
                                .map(|&(a, b)| {
                                    if a == b {
                                        a.to_string()
                                    } else {
                                        format!("{a}-{b}")
                                    }
                                })
                                .collect();
                            write!(f, "{}{bang}={}", field.name(), ranges.join(","))?
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// A value as the grammar reads it back: quoted when it holds what would cut it (`,` only
/// between values), a quote, or outer spaces.
fn quote(v: &str, comma: bool) -> String {
    let special =
        v.is_empty() || v.contains([';', '"', '\\']) || (comma && v.contains(',')) || v.trim() != v;
    if !special {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `text` cut at `sep` outside double quotes (a backslash escapes the next character inside).
fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if quoted && c == '\\' {
            escaped = true;
        } else if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            parts.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&text[start..]);
    parts
}

/// One value: trimmed, unquoted when quoted.
fn unquote(v: &str) -> Result<String, String> {
    let v = v.trim();
    let Some(inner) = v.strip_prefix('"') else {
        if v.contains('"') {
            return Err(format!(
                "a quote inside the value {v:?}: quote the whole value"
            ));
        }
        return Ok(v.to_string());
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) => out.push(n),
                None => return Err("a value ends in a backslash".to_string()),
            },
            '"' => {
                if !chars.as_str().trim().is_empty() {
                    return Err(format!("text after the closing quote of {v:?}"));
                }
                return Ok(out);
            }
            c => out.push(c),
        }
    }
    Err(format!("the quote of {v:?} is not closed"))
}

fn parse_clause(part: &str) -> Result<Clause, String> {
    if part == "common" || part == "common_tasks" {
        return Ok(Clause::Common);
    }
    let end = part
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(part.len());
    let name = &part[..end];
    if name.is_empty() {
        return Err(
            "expected a field name (dataset, model, method, condition, task, trial, \
                    outcome, label) or \"common\""
                .to_string(),
        );
    }
    let rest = part[end..].trim_start();
    let (negate, pattern, value) = if let Some(v) = rest.strip_prefix("!=") {
        (true, false, v)
    } else if let Some(v) = rest.strip_prefix("!~") {
        (true, true, v)
    } else if let Some(v) = rest.strip_prefix('=') {
        (false, false, v)
    } else if let Some(v) = rest.strip_prefix('~') {
        (false, true, v)
    } else {
        return Err(format!(
            "expected =, !=, ~ or !~ after {name:?} (e.g. {name}=value)"
        ));
    };
    if let Some(key) = name.strip_prefix("meta.") {
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(format!(
                "{name:?} names no metadata key: write meta.KEY (e.g. meta.category)"
            ));
        }
        let test = if pattern {
            let source = unquote(value)?;
            Test::Pattern(compile(&source)?, source)
        } else {
            Test::Values(values_of(name, value)?)
        };
        return Ok(Clause::Meta {
            key: key.to_string(),
            negate,
            test,
        });
    }
    let field = Field::ALL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .ok_or_else(|| {
            format!(
                "unknown field {name:?}; the fields are dataset, model, method, condition, \
                 task, trial, outcome, label (and \"common\")"
            )
        })?;
    if pattern {
        if !field.is_text() {
            return Err(format!(
                "{name} takes = or != with values, not a pattern (~ is for dataset, model, \
                 method, condition and task)"
            ));
        }
        let source = unquote(value)?;
        return Ok(Clause::Test {
            field,
            negate,
            test: Test::Pattern(compile(&source)?, source),
        });
    }
    let values = values_of(name, value)?;
    let test = match field {
        Field::Trial => Test::Trials(
            values
                .iter()
                .map(|v| parse_trials(v))
                .collect::<Result<_, _>>()?,
        ),
        Field::Outcome | Field::Label => {
            let allowed: &[&str] = if field == Field::Outcome {
                &OUTCOMES
            } else {
                &LABELS
            };
            if let Some(bad) = values.iter().find(|v| !allowed.contains(&v.as_str())) {
                return Err(format!(
                    "unknown {name} {bad:?}; expected one of {}",
                    allowed.join(", ")
                ));
            }
            Test::Values(values)
        }
        _ => Test::Values(values),
    };
    Ok(Clause::Test {
        field,
        negate,
        test,
    })
}

/// A pattern of a `~` clause: case-insensitive, bounded in size.
fn compile(source: &str) -> Result<pattern::Regex, String> {
    pattern::RegexBuilder::new(source)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("not a valid regular expression: {e}"))
}

/// The comma-separated values of a `=` clause, none empty.
fn values_of(name: &str, value: &str) -> Result<Vec<String>, String> {
    let values = split_outside_quotes(value, ',')
        .into_iter()
        .map(unquote)
        .collect::<Result<Vec<String>, String>>()?;
    if values.iter().any(String::is_empty) {
        return Err(format!(
            "an empty value after {name}: give at least one, separated by commas"
        ));
    }
    Ok(values)
}

/// The values of `keys` in a rollout's canonical line's `meta` ([`MetaValues`]); a dotted key
/// walks into objects (`a.b` is `meta.a.b`). A line that is not JSON gives no values.
pub fn meta_values(line: &str, keys: &BTreeSet<String>) -> MetaValues {
    let mut out = MetaValues::new();
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return out;
    };
    let Some(meta) = v.get("meta") else {
        return out;
    };
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => Some(v.to_string()),
        _ => None,
    };
    for key in keys {
        let Some(value) = key.split('.').try_fold(meta, |v, k| v.get(k)) else {
            continue;
        };
        let values: Vec<String> = match value {
            serde_json::Value::Array(items) => items.iter().filter_map(text).collect(),
            v => text(v).into_iter().collect(),
        };
        if !values.is_empty() {
            out.insert(key.clone(), values);
        }
    }
    out
}

/// Every metadata value of a rollout's canonical line, by dotted key ([`meta_values`] of all
/// the keys it has): objects are walked into (`a.b`); scalars and arrays of scalars give
/// values; what is neither (an array of objects, `null`) gives none. What the app keeps per
/// rollout to list the fields ([`choices::FilterChoices`]) and to answer any `meta.*` clause.
pub fn all_meta_values(line: &str) -> MetaValues {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut MetaValues) {
        let text = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => Some(v.to_string()),
            _ => None,
        };
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            serde_json::Value::Array(items) => {
                let values: Vec<String> = items.iter().filter_map(text).collect();
                if !values.is_empty() && !prefix.is_empty() {
                    out.insert(prefix.to_string(), values);
                }
            }
            v => {
                if let (Some(t), false) = (text(v), prefix.is_empty()) {
                    out.insert(prefix.to_string(), vec![t]);
                }
            }
        }
    }
    let mut out = MetaValues::new();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
        if let Some(meta) = v.get("meta").filter(|m| m.is_object()) {
            walk("", meta, &mut out);
        }
    }
    out
}

/// The clauses of a filter's text, each trimmed, the empty ones left out (cut at `;` outside
/// quotes, as [`Filter::parse`] cuts them). Needs no pattern compiled: the app's page, which
/// does not link the regular-expression engine, edits a filter's text with it.
pub fn split_clauses(text: &str) -> Vec<String> {
    split_outside_quotes(text, ';')
        .into_iter()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// The clause `field=values` in the grammar's spelling (values quoted where they must be):
/// what a picker writes into a filter.
pub fn equals_clause(field: &str, values: &[&str]) -> String {
    let values: Vec<String> = values.iter().map(|v| quote(v, true)).collect();
    format!("{field}={}", values.join(","))
}

/// The filter's text with the `common` clause (the common cohort) added or taken out; the
/// other clauses as written.
pub fn with_common(text: &str, on: bool) -> String {
    let mut clauses: Vec<String> = split_clauses(text)
        .into_iter()
        .filter(|c| c != "common" && c != "common_tasks")
        .collect();
    if on {
        clauses.push("common".to_string());
    }
    clauses.join("; ")
}

/// Whether the filter's text has the `common` clause.
pub fn has_common(text: &str) -> bool {
    split_clauses(text)
        .iter()
        .any(|c| c == "common" || c == "common_tasks")
}

/// The filter's text with `clause` added (AND), unless it is already there.
pub fn add_clause(text: &str, clause: &str) -> String {
    let mut clauses = split_clauses(text);
    if !clauses.iter().any(|c| c == clause) {
        clauses.push(clause.to_string());
    }
    clauses.join("; ")
}

fn parse_trials(v: &str) -> Result<(u32, u32), String> {
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("a trial is a number from 1, or a range like 1-3; got {v:?}"))
    };
    match v.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (number(a)?, number(b)?);
            if a > b {
                return Err(format!("the range {v:?} runs backwards"));
            }
            Ok((a, b))
        }
        None => number(v).map(|n| (n, n)),
    }
}

/// Each rollout's 1-based trial number: its position among its (condition, task)'s rollouts.
pub(crate) fn trial_numbers(corpus: &Corpus) -> Vec<u32> {
    let mut seen: HashMap<(u32, u32), u32> = HashMap::new();
    corpus
        .rollouts
        .iter()
        .map(|r| {
            let n = seen.entry((r.condition, r.task)).or_insert(0);
            *n += 1;
            *n
        })
        .collect()
}

fn test_rollout(corpus: &Corpus, r: &Rollout, trial: u32, field: Field, test: &Test) -> bool {
    let (dataset, model, method) = corpus.condition_names(r.condition);
    let text = |t: &str| match test {
        Test::Values(values) => values.iter().any(|v| v == t),
        Test::Pattern(re, _) => re.is_match(t),
        Test::Trials(_) => false,
    };
    match field {
        Field::Dataset => text(dataset),
        Field::Model => text(model),
        Field::Method => text(method),
        Field::Condition => text(&format!("{model} · {method}")),
        Field::Task => text(corpus.task_name(r.task)),
        Field::Trial => match test {
            Test::Trials(ranges) => ranges.iter().any(|&(a, b)| (a..=b).contains(&trial)),
            _ => false,
        },
        Field::Outcome => {
            let Test::Values(values) = test else {
                return false;
            };
            let failed = !r.fully_executable();
            values.iter().any(|v| match v.as_str() {
                "executable" => !failed,
                "failed_prefix" => failed,
                "recovered" => failed && r.success,
                "unrecovered" => failed && !r.success,
                "success" => r.success,
                "failure" => !r.success,
                "no_tool" => r.no_tool,
                "crashed" => r.crashed,
                _ => false,
            })
        }
        Field::Label => {
            let label = match &r.first_failure {
                None => "none",
                Some(f) if f.environment => "environment",
                Some(f) => f.label.map_or("unlabeled", |l| l.as_str()),
            };
            text(label)
        }
    }
}

/// Keeps, per dataset, only the tasks every condition of the dataset (among the kept rollouts)
/// ran.
fn keep_common_tasks(corpus: &Corpus, keep: &mut [bool]) {
    // Dataset → its conditions; (dataset, task) → the conditions that ran it.
    let mut conditions: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut ran: HashMap<u32, BTreeSet<u32>> = HashMap::new();
    for (r, _) in corpus.rollouts.iter().zip(keep.iter()).filter(|(_, &k)| k) {
        let dataset = corpus.conditions[r.condition as usize].dataset;
        conditions.entry(dataset).or_default().insert(r.condition);
        ran.entry(r.task).or_default().insert(r.condition);
    }
    for (r, k) in corpus.rollouts.iter().zip(keep.iter_mut()) {
        if *k {
            let dataset = corpus.conditions[r.condition as usize].dataset;
            *k = ran.get(&r.task).map(BTreeSet::len) == conditions.get(&dataset).map(BTreeSet::len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Corpus {
        let line = |t: &str, m: &str, ok: bool, steps: &str| {
            format!(
                r#"{{"dataset":"d","task_id":"{t}","model":"{m}","method":"x","success":{ok},"steps":[{steps}]}}"#
            ) + "\n"
        };
        let text: String = [
            line("t1", "a", true, r#"{"ok":true}"#),
            line("t1", "a", false, r#"{"ok":false,"label":"schema"}"#),
            line("t2", "a", true, r#"{"ok":false}"#),
            line("t3", "a", false, ""),
            line("t1", "b", true, r#"{"ok":true}"#),
            line("t2", "b", false, r#"{"ok":false,"label":"state"}"#),
        ]
        .concat();
        crate::ingest::read_files([("r.jsonl", text.as_bytes())])
    }

    fn kept(filter: &str) -> Vec<bool> {
        Filter::parse(filter).unwrap().keeps(&corpus())
    }

    #[test]
    fn grammar_reads_and_writes_back() {
        for (text, canonical) in [
            ("", ""),
            ("  ;  ", ""),
            ("model=a", "model=a"),
            ("model = a , b ;task~^t[12]$", "model=a,b; task~^t[12]$"),
            (
                r#"method="x, y";dataset!="a\"b""#,
                r#"method="x, y"; dataset!="a\"b""#,
            ),
            ("task~a,b", "task~a,b"),
            (r#"task~"a;b""#, r#"task~"a;b""#),
            ("trial=1,2-3", "trial=1,2-3"),
            (
                "outcome!=executable,no_tool; label=schema",
                "outcome!=executable,no_tool; label=schema",
            ),
            ("common; common_tasks", "common; common"),
            ("condition=\"a · x\"", "condition=a · x"),
            ("meta.category = x,y", "meta.category=x,y"),
            ("meta.a.b !~ ^t", "meta.a.b!~^t"),
        ] {
            let f = Filter::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(f.to_string(), canonical, "{text}");
            assert_eq!(Filter::parse(&f.to_string()).unwrap(), f, "{text}");
            assert_eq!(f.is_active(), !canonical.is_empty());
        }
    }

    #[test]
    fn grammar_errors_say_what_to_change() {
        for (text, needle) in [
            ("colour=red", "unknown field \"colour\""),
            ("model", "expected =, !=, ~ or !~"),
            ("=a", "expected a field name"),
            ("model=", "an empty value"),
            ("model=a,,b", "an empty value"),
            ("trial=0", "a trial is a number from 1"),
            ("trial=3-1", "runs backwards"),
            ("trial~1", "not a pattern"),
            (
                "outcome=great",
                "unknown outcome \"great\"; expected one of executable",
            ),
            ("label=Schema", "unknown label"),
            ("task~(", "not a valid regular expression"),
            ("model=\"a", "is not closed"),
            ("model=a\"b", "quote the whole value"),
            ("meta.=x", "names no metadata key"),
            ("meta.a..b=x", "names no metadata key"),
            ("meta.a~(", "not a valid regular expression"),
        ] {
            let e = Filter::parse(text).unwrap_err();
            assert!(e.to_string().contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn clauses_select_rollouts() {
        let t = true;
        let f = false;
        assert_eq!(kept(""), [t, t, t, t, t, t]);
        assert_eq!(kept("model=b"), [f, f, f, f, t, t]);
        assert_eq!(kept("model!=b"), [t, t, t, t, f, f]);
        assert_eq!(kept("condition=a · x"), [t, t, t, t, f, f]);
        assert_eq!(kept("task~T[23]"), [f, f, t, t, f, t]);
        assert_eq!(kept("task!~^t1$"), [f, f, t, t, f, t]);
        assert_eq!(kept("trial=2"), [f, t, f, f, f, f]);
        assert_eq!(kept("trial=1"), [t, f, t, t, t, t]);
        assert_eq!(kept("outcome=executable"), [t, f, f, f, t, f]);
        assert_eq!(kept("outcome=recovered"), [f, f, t, f, f, f]);
        assert_eq!(kept("outcome=unrecovered"), [f, t, f, t, f, t]);
        assert_eq!(kept("outcome=no_tool"), [f, f, f, t, f, f]);
        assert_eq!(kept("label=schema,state"), [f, t, f, f, f, t]);
        // t3's failed no-tool action: labelled by the built-in rules, not unlabeled.
        assert_eq!(kept("label=unlabeled"), [f, f, t, f, f, f]);
        assert_eq!(
            kept("label!=none,schema,state,unlabeled"),
            [f, f, f, t, f, f]
        );
        assert_eq!(kept("label=none"), [t, f, f, f, t, f]);
        // Common cohort: t3 ran only under a.
        assert_eq!(kept("common"), [t, t, t, f, t, t]);
        // Applied after the other clauses: among a's first trials and b, still t1 and t2.
        assert_eq!(kept("trial=1; common"), [t, f, t, f, t, t]);
        // With b's t2 gone (outcome), only t1 is common.
        assert_eq!(kept("outcome!=unrecovered; common"), [t, f, f, f, t, f]);
    }

    #[test]
    fn apply_gives_a_corpus_of_the_kept_rollouts() {
        let c = corpus();
        let f = Filter::parse("model=b").unwrap().apply(&c, None);
        assert_eq!(f.corpus.rollouts.len(), 2);
        assert_eq!(f.corpus.conditions.len(), 1);
        assert_eq!(f.original, [4, 5]);
        assert_eq!(f.of, 6);
        assert_eq!(f.corpus.condition_names(0), ("d", "b", "x"));
        assert!(f.corpus.rollouts.iter().all(|r| r.condition == 0));
        assert_eq!(
            f.corpus.notes.last().unwrap(),
            "filter model=b: 2 of 6 rollouts kept (1 conditions)"
        );
    }

    #[test]
    fn all_meta_values_walks_every_key() {
        let m = all_meta_values(
            r#"{"meta":{"category":"base","n":3,"tags":["a",1,{"x":1}],"x":{"y":true,"z":null},"e":[]}}"#,
        );
        let keys: Vec<&str> = m.keys().map(String::as_str).collect();
        assert_eq!(keys, ["category", "n", "tags", "x.y"]);
        assert_eq!(m["tags"], ["a", "1"]);
        // The same values as the keys' own reading.
        let named: BTreeSet<String> = m.keys().cloned().collect();
        let line = r#"{"meta":{"category":"base","n":3,"tags":["a",1,{"x":1}],"x":{"y":true}}}"#;
        assert_eq!(meta_values(line, &named), all_meta_values(line));
        assert!(all_meta_values("not json").is_empty());
        assert!(all_meta_values(r#"{"meta":"text"}"#).is_empty());
    }

    #[test]
    fn clauses_are_split_and_written_for_pickers() {
        assert_eq!(
            split_clauses(r#" model=a ;; task~"x;y"; common "#),
            ["model=a", r#"task~"x;y""#, "common"]
        );
        assert_eq!(with_common("model=a", true), "model=a; common");
        assert_eq!(with_common("common; model=a;", false), "model=a");
        assert_eq!(with_common("", true), "common");
        assert!(has_common("x=1 ; common") && !has_common("task~common"));
        assert_eq!(
            add_clause("model=a", "label=schema"),
            "model=a; label=schema"
        );
        assert_eq!(
            add_clause("model=a; label=schema", "label=schema"),
            "model=a; label=schema"
        );
        assert_eq!(add_clause("", "model=a"), "model=a");
        let c = equals_clause("meta.category", &["a,b", "c"]);
        assert_eq!(c, r#"meta.category="a,b",c"#);
        assert_eq!(Filter::parse(&c).unwrap().to_string(), c);
    }

    #[test]
    fn meta_clauses_use_the_values_given() {
        let c = corpus();
        let keys: BTreeSet<String> = ["category".to_string(), "x.y".to_string()].into();
        let lines = [
            r#"{"meta":{"category":"base"}}"#,
            r#"{"meta":{"category":["a","base"]}}"#,
            r#"{"meta":{"category":3,"x":{"y":true}}}"#,
            r#"{"steps":[]}"#,
            "not json",
            r#"{"meta":{"category":null}}"#,
        ];
        let meta: Vec<MetaValues> = lines.iter().map(|l| meta_values(l, &keys)).collect();
        assert_eq!(meta[1]["category"], ["a", "base"]);
        assert_eq!(meta[2]["category"], ["3"]);
        assert_eq!(meta[2]["x.y"], ["true"]);
        assert!(meta[3].is_empty() && meta[4].is_empty() && meta[5].is_empty());
        let kept = |text: &str| {
            let f = Filter::parse(text).unwrap();
            assert_eq!(f.meta_keys().len(), 1);
            f.with_meta(meta.clone()).keeps(&c)
        };
        let (t, f) = (true, false);
        assert_eq!(kept("meta.category=base"), [t, t, f, f, f, f]);
        assert_eq!(kept("meta.category!=base"), [f, f, t, t, t, t]);
        assert_eq!(kept("meta.category~^BA"), [t, t, f, f, f, f]);
        assert_eq!(kept("meta.x.y=true"), [f, f, t, f, f, f]);
        // Without the values, nothing has any.
        let f = Filter::parse("meta.category=base").unwrap();
        assert_eq!(f.keeps(&c), [false; 6]);
    }
}
