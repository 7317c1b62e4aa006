//! First-failure labelling: which of the paper's five labels (schema, dependency, precondition,
//! state, information) a rejected step gets when its log carries none, or `environment` for a
//! fault that was not the agent's.
//!
//! A [`Labeller`] holds rules — the built-in table ([`builtin::RULES`]) and, taking precedence,
//! the user's own (a JSON array of [`RuleSpec`], `--label-rules FILE` in the CLI). A rule matches
//! on the failing step's error text, tool, arguments (compact JSON), dataset, whether the rollout
//! made no tool call at all, and the step's [`Reference`] context; every pattern is a
//! case-insensitive regular expression in `regex-lite` syntax (ASCII classes and case folding:
//! the worker links no Unicode tables, a budget of issue #15). Among the matching rules of one set, `environment` wins
//! (the environment failed, so the agent's action was never judged), then the paper's tie-break
//! order schema → dependency → precondition → state → information, then table order. No match
//! means `unlabeled`: nothing is guessed.
//!
//! Labels only describe first failures: no metric reads them.
//!
//! ```
//! use prefix_exec::label::{Facts, Labeller, Reference};
//! let labeller = Labeller::builtin();
//! let facts = Facts {
//!     error: Some("Error: payment amount does not add up, total price is 305, but paid 255"),
//!     tool: Some("book_reservation"),
//!     ..Facts::default()
//! };
//! let rule = labeller.decide(&facts).unwrap();
//! assert_eq!(rule.verdict.as_str(), "precondition");
//! ```

pub mod builtin;
mod context;
pub mod prefilter;

use std::fmt;

use regex_lite::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

pub use context::{StepContext, MAX_SEEN_VALUES};

use crate::rollout::{Label, ParsedFailure, ParsedRollout};
pub use crate::rollout::{LabelSource, Reference};

/// What a rule assigns: one of the paper's five labels, or `environment` — a fault of the
/// environment (service unavailable, timeout, rate limit), shown apart from the five.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    Environment,
    Label(Label),
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Environment => "environment",
            Verdict::Label(l) => l.as_str(),
        }
    }

    pub fn parse(name: &str) -> Option<Verdict> {
        if name == "environment" {
            Some(Verdict::Environment)
        } else {
            Label::parse(name).map(Verdict::Label)
        }
    }

    /// Rank among matching rules: environment first, then the paper's tie-break order.
    fn rank(self) -> usize {
        match self {
            Verdict::Environment => 0,
            Verdict::Label(l) => 1 + l as usize,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is known about a first failure, as the rules read it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Facts<'a> {
    pub dataset: &'a str,
    pub tool: Option<&'a str>,
    /// The step's arguments as compact JSON.
    pub args: Option<&'a str>,
    pub error: Option<&'a str>,
    /// The rollout made no tool call (one terminal no-tool action that was not allowed).
    pub no_tool: bool,
    /// The rollout's termination reason (`meta.termination_reason`), when the log gives one.
    pub termination: Option<&'a str>,
    pub reference: Reference,
}

/// A rule as written (in the built-in table or a user's JSON file).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// A short unique name; provenance is recorded as `rule:<id>`.
    pub id: String,
    /// `schema`, `dependency`, `precondition`, `state`, `information` or `environment`.
    pub label: String,
    /// Regular expression (case-insensitive) the error text must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Regular expression the tool name must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The rule does not apply to tools matching this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub except_tool: Option<String>,
    /// Regular expression the arguments (compact JSON) must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
    /// Regular expression the dataset name must match (the benchmark).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Regular expression the rollout's termination reason must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination: Option<String>,
    /// `true`: only a rollout without tool calls; `false`: only a failing step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_tool: Option<bool>,
    /// The step's reference context must be this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// One line saying why the label fits (shown on hover in the app).
    pub rationale: String,
}

/// A compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    pub spec: RuleSpec,
    pub verdict: Verdict,
    /// Whether the rule came from the user's file.
    pub user: bool,
    error: Option<Pattern>,
    tool: Option<Pattern>,
    except_tool: Option<Pattern>,
    args: Option<Pattern>,
    dataset: Option<Pattern>,
    termination: Option<Pattern>,
}

/// A compiled pattern with the words every match of it contains ([`prefilter::required`]): a
/// text without them is answered without running the regex.
#[derive(Clone, Debug)]
struct Pattern {
    regex: Regex,
    words: Option<Vec<Vec<u8>>>,
}

impl Pattern {
    fn is_match(&self, text: &str) -> bool {
        self.words
            .as_ref()
            .is_none_or(|w| prefilter::admits(text, w))
            && self.regex.is_match(text)
    }
}

/// Longest pattern accepted, and the compiled size limit: user patterns stay cheap.
const MAX_PATTERN_CHARS: usize = 2_000;
const REGEX_SIZE_LIMIT: usize = 1 << 20;

impl Rule {
    /// Compiles a rule; the message names the rule and the field to fix.
    pub fn compile(spec: RuleSpec, user: bool) -> Result<Rule, String> {
        let name = if spec.id.trim().is_empty() {
            return Err("a label rule needs a non-empty \"id\"".to_string());
        } else {
            spec.id.clone()
        };
        let verdict = Verdict::parse(&spec.label).ok_or_else(|| {
            format!(
                "rule {name:?}: unknown label {:?}; expected schema, dependency, precondition, \
                 state, information or environment",
                spec.label
            )
        })?;
        let pattern = |field: &str, p: &Option<String>| -> Result<Option<Pattern>, String> {
            let Some(p) = p else { return Ok(None) };
            if p.chars().count() > MAX_PATTERN_CHARS {
                return Err(format!(
                    "rule {name:?}: {field} pattern longer than {MAX_PATTERN_CHARS} characters"
                ));
            }
            RegexBuilder::new(p)
                .case_insensitive(true)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .map(|regex| {
                    Some(Pattern {
                        regex,
                        words: prefilter::required(p),
                    })
                })
                .map_err(|e| format!("rule {name:?}: {field} pattern: {e}"))
        };
        Ok(Rule {
            error: pattern("error", &spec.error)?,
            tool: pattern("tool", &spec.tool)?,
            except_tool: pattern("except_tool", &spec.except_tool)?,
            args: pattern("args", &spec.args)?,
            dataset: pattern("dataset", &spec.dataset)?,
            termination: pattern("termination", &spec.termination)?,
            verdict,
            user,
            spec,
        })
    }

    /// The provenance written for a label this rule gave: `rule:<id>`.
    pub fn source(&self) -> String {
        format!("rule:{}", self.spec.id)
    }

    /// Whether every condition of the rule holds for `f`. A pattern on a field the failure does
    /// not have (no error text, no tool) does not match.
    pub fn matches(&self, f: &Facts<'_>) -> bool {
        let field = |re: &Option<Pattern>, value: Option<&str>| match re {
            None => true,
            Some(re) => value.is_some_and(|v| re.is_match(v)),
        };
        self.spec.no_tool.is_none_or(|want| want == f.no_tool)
            && self.spec.reference.is_none_or(|want| want == f.reference)
            && field(&self.error, f.error)
            && field(&self.tool, f.tool)
            && !self
                .except_tool
                .as_ref()
                .is_some_and(|re| f.tool.is_some_and(|t| re.is_match(t)))
            && field(&self.args, f.args)
            && field(&self.dataset, Some(f.dataset))
            && field(&self.termination, f.termination)
    }
}

/// Which rules label first failures: the user's (if any) and, unless switched off, the built-in
/// table. Serialisable, so the browser's worker receives it with a file's import options.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct LabelSettings {
    /// Use the built-in table.
    pub builtin: bool,
    /// The user's rules; they take precedence over the built-in ones.
    pub rules: Vec<RuleSpec>,
}

impl Default for LabelSettings {
    fn default() -> Self {
        LabelSettings {
            builtin: true,
            rules: Vec::new(),
        }
    }
}

impl LabelSettings {
    /// No rule at all: first failures keep only the labels their logs (or the schema check) give.
    pub fn off() -> Self {
        LabelSettings {
            builtin: false,
            rules: Vec::new(),
        }
    }

    /// Whether any rule is in force.
    pub fn active(&self) -> bool {
        self.builtin || !self.rules.is_empty()
    }

    /// Reads a user rule file: a JSON array of rules, or an object `{"rules": [...]}`.
    pub fn parse_user_rules(json: &str) -> Result<Vec<RuleSpec>, String> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| format!("label rules: {e} (expected a JSON array of rules)"))?;
        let list = match value {
            serde_json::Value::Object(mut o) if o.contains_key("rules") => o.remove("rules"),
            v @ serde_json::Value::Array(_) => Some(v),
            _ => None,
        }
        .ok_or("label rules: expected a JSON array of rules (or {\"rules\": [...]})")?;
        let rules: Vec<RuleSpec> = serde_path_to_error::deserialize(list)
            .map_err(|e| format!("label rules: {}: {}", e.path(), e.inner()))?;
        // Compile once to report the first bad rule now rather than when a file is read.
        Labeller::new(&LabelSettings {
            builtin: false,
            rules: rules.clone(),
        })?;
        Ok(rules)
    }
}

/// The compiled rules; see the module documentation.
#[derive(Clone, Debug)]
pub struct Labeller {
    user: Vec<Rule>,
    builtin: Vec<Rule>,
    /// Each set's rules by verdict rank, table order within a rank ([`by_rank`]): the order in
    /// which [`Labeller::decide`] tries them, so that the first match decides.
    user_order: Vec<usize>,
    builtin_order: Vec<usize>,
    /// Decisions made so far, by the facts they were made on: logs repeat their error texts,
    /// and a decision runs every rule's patterns.
    decided: Decided,
}

/// A bounded memo of [`Labeller::decide`]: the facts, written out, → the index of the deciding
/// rule in [`Labeller::rules`] order (`None`: unlabeled). A decision is a pure function of the
/// facts, so a remembered one is the one the rules give. Facts longer than
/// [`Decided::MAX_KEY`] bytes are not remembered, and nothing more once [`Decided::MAX_ENTRIES`]
/// are (memory stays bounded whatever the input).
#[derive(Debug, Default)]
struct Decided(std::sync::Mutex<std::collections::HashMap<Vec<u8>, Option<usize>>>);

impl Decided {
    const MAX_ENTRIES: usize = 4096;
    const MAX_KEY: usize = 4096;

    /// The facts as one key: each field with its length, so no two facts share a key.
    fn key(f: &Facts<'_>) -> Option<Vec<u8>> {
        let fields = [Some(f.dataset), f.tool, f.args, f.error, f.termination];
        let len: usize = fields
            .iter()
            .map(|v| v.map_or(0, str::len) + 9)
            .sum::<usize>()
            + 2;
        if len > Self::MAX_KEY {
            return None;
        }
        let mut key = Vec::with_capacity(len);
        for v in fields {
            match v {
                Some(v) => {
                    key.push(1);
                    key.extend_from_slice(&(v.len() as u64).to_le_bytes());
                    key.extend_from_slice(v.as_bytes());
                }
                None => key.push(0),
            }
        }
        key.push(u8::from(f.no_tool));
        key.push(f.reference as u8);
        Some(key)
    }
}

impl Clone for Decided {
    /// A clone starts with no decisions (they are the same rules' anyway).
    fn clone(&self) -> Self {
        Decided::default()
    }
}

impl Labeller {
    /// Compiles the settings' rules; fails on the first bad user rule or a repeated id.
    pub fn new(settings: &LabelSettings) -> Result<Labeller, String> {
        let user = settings
            .rules
            .iter()
            .map(|s| Rule::compile(s.clone(), true))
            .collect::<Result<Vec<_>, _>>()?;
        let mut ids = std::collections::HashSet::new();
        for r in &user {
            if !ids.insert(r.spec.id.as_str()) {
                return Err(format!("label rules: the id {:?} is used twice", r.spec.id));
            }
        }
        let builtin = if settings.builtin {
            builtin::compiled().to_vec()
        } else {
            Vec::new()
        };
        Ok(Labeller::of(user, builtin))
    }

    fn of(user: Vec<Rule>, builtin: Vec<Rule>) -> Labeller {
        Labeller {
            user_order: by_rank(&user),
            builtin_order: by_rank(&builtin),
            user,
            builtin,
            decided: Decided::default(),
        }
    }

    /// The built-in table alone.
    pub fn builtin() -> Labeller {
        Labeller::of(Vec::new(), builtin::compiled().to_vec())
    }

    /// No rules: [`Labeller::decide`] always answers `None`.
    pub fn none() -> Labeller {
        Labeller::of(Vec::new(), Vec::new())
    }

    pub fn is_empty(&self) -> bool {
        self.user.is_empty() && self.builtin.is_empty()
    }

    /// Every rule, user rules first.
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.user.iter().chain(&self.builtin)
    }

    /// The rule with this id (user rules shadow built-in ones of the same id).
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules().find(|r| r.spec.id == id)
    }

    /// Labels a parsed first failure that has no label of its own (a given label, or the
    /// schema check's, is kept) and records where its label came from.
    pub fn apply(
        &self,
        dataset: &str,
        no_tool: bool,
        termination: Option<&str>,
        failure: &mut ParsedFailure,
    ) {
        if failure.label.is_some() || failure.environment {
            failure.source.get_or_insert(LabelSource::Given);
            return;
        }
        let facts = Facts {
            dataset,
            tool: failure.tool.as_deref(),
            args: failure.args.as_deref(),
            error: failure.error.as_deref(),
            no_tool,
            termination,
            reference: failure.reference,
        };
        if let Some(rule) = self.decide(&facts) {
            match rule.verdict {
                Verdict::Environment => failure.environment = true,
                Verdict::Label(l) => failure.label = Some(l),
            }
            failure.source = Some(LabelSource::Rule(rule.spec.id.clone()));
        }
    }

    /// The rationale of the rule a provenance name (`rule:<id>`) points to.
    pub fn rationale(&self, source: &str) -> Option<&str> {
        let id = source.strip_prefix("rule:")?;
        self.rule(id).map(|r| r.spec.rationale.as_str())
    }

    /// The rule that labels a failure: among the matching user rules, else among the matching
    /// built-in ones, the one whose verdict ranks first (environment, then the paper's
    /// tie-break), the earliest in its table on a tie. `None`: unlabeled.
    pub fn decide(&self, f: &Facts<'_>) -> Option<&Rule> {
        if self.is_empty() {
            return None;
        }
        let Some(key) = Decided::key(f) else {
            return self.decide_now(f);
        };
        let memo = |m: &mut std::collections::HashMap<Vec<u8>, Option<usize>>| {
            m.get(&key).map(|&i| i.and_then(|i| self.rules().nth(i)))
        };
        // A poisoned lock (a panic elsewhere while it was held) only loses the memo.
        if let Some(rule) = self.decided.0.lock().ok().as_deref_mut().and_then(memo) {
            return rule;
        }
        let rule = self.decide_now(f);
        if let Ok(mut m) = self.decided.0.lock() {
            if m.len() < Decided::MAX_ENTRIES {
                let index = rule.map(|r| {
                    self.rules()
                        .position(|x| std::ptr::eq(x, r))
                        .expect("a rule of this labeller")
                });
                m.insert(key, index);
            }
        }
        rule
    }

    /// [`Labeller::decide`], running the rules.
    fn decide_now(&self, f: &Facts<'_>) -> Option<&Rule> {
        pick(&self.user, &self.user_order, f)
            .or_else(|| pick(&self.builtin, &self.builtin_order, f))
    }
}

/// The indices of `rules` by verdict rank, table order within a rank (a stable sort).
fn by_rank(rules: &[Rule]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rules.len()).collect();
    order.sort_by_key(|&i| rules[i].verdict.rank());
    order
}

/// The first rule in `order` that matches: the matching rule of the first verdict rank, the
/// earliest in its table on a tie — without running the patterns of the rules after it, which
/// cannot win (every decision would otherwise run every rule's patterns).
fn pick<'r>(rules: &'r [Rule], order: &[usize], f: &Facts<'_>) -> Option<&'r Rule> {
    order.iter().map(|&i| &rules[i]).find(|r| r.matches(f))
}

/// A first failure a label rule labelled, to be written into the converted line: `convert`
/// output carries the step's `label` and its `label_source` (labels the log gave, or the schema
/// check's, are in the line already).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleMark(Option<(u32, bool, &'static str, String)>);

impl RuleMark {
    /// The mark of a labelled rollout (empty unless a rule gave its label).
    pub fn of(parsed: &ParsedRollout) -> RuleMark {
        let Some(f) = &parsed.failure else {
            return RuleMark(None);
        };
        let Some(source @ LabelSource::Rule(_)) = &f.source else {
            return RuleMark(None);
        };
        let verdict = match (f.label, f.environment) {
            (Some(l), _) => Verdict::Label(l),
            (None, true) => Verdict::Environment,
            (None, false) => return RuleMark(None),
        };
        RuleMark(Some((
            parsed.fed,
            parsed.no_tool,
            verdict.as_str(),
            source.name(),
        )))
    }

    /// The canonical line with the label written in: on the failing step, or at rollout level
    /// for a rollout without tool calls. A line that does not read back is returned unchanged.
    pub fn annotate(&self, line: String) -> String {
        let Some((fed, no_tool, label, source)) = &self.0 else {
            return line;
        };
        let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(&line) else {
            return line;
        };
        let target = if *no_tool {
            Some(&mut map)
        } else {
            map.get_mut("steps")
                .and_then(|s| s.as_array_mut())
                .and_then(|s| s.get_mut(*fed as usize - 1))
                .and_then(|s| s.as_object_mut())
        };
        let Some(target) = target else {
            return line;
        };
        target.insert("label".into(), (*label).into());
        target.insert("label_source".into(), source.clone().into());
        serde_json::Value::Object(map).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, label: &str, error: &str) -> RuleSpec {
        RuleSpec {
            id: id.into(),
            label: label.into(),
            error: Some(error.into()),
            tool: None,
            except_tool: None,
            args: None,
            dataset: None,
            termination: None,
            no_tool: None,
            reference: None,
            rationale: "r".into(),
        }
    }

    fn err(e: &str) -> Facts<'_> {
        Facts {
            error: Some(e),
            ..Facts::default()
        }
    }

    #[test]
    fn the_tie_break_decides_between_matching_rules() {
        let settings = LabelSettings {
            builtin: false,
            rules: vec![
                spec("info", "information", "x"),
                spec("state", "state", "x"),
                spec("dep", "dependency", "x"),
                spec("env", "environment", "timeout"),
            ],
        };
        let l = Labeller::new(&settings).unwrap();
        assert_eq!(l.decide(&err("x")).unwrap().spec.id, "dep");
        assert_eq!(l.decide(&err("x timeout")).unwrap().spec.id, "env");
        assert!(l.decide(&err("nothing")).is_none());
    }

    #[test]
    fn user_rules_take_precedence_over_builtin_ones() {
        let settings = LabelSettings {
            builtin: true,
            rules: vec![spec("mine", "information", "payment amount")],
        };
        let l = Labeller::new(&settings).unwrap();
        let f = err("Error: payment amount does not add up, total price is 1, but paid 2");
        let r = l.decide(&f).unwrap();
        assert_eq!((r.spec.id.as_str(), r.user), ("mine", true));
        // Without the user rule, the built-in table answers.
        assert_eq!(
            Labeller::builtin().decide(&f).unwrap().verdict.as_str(),
            "precondition"
        );
    }

    #[test]
    fn patterns_are_case_insensitive_and_absent_fields_do_not_match() {
        let mut s = spec("t", "schema", "syntax");
        s.tool = Some("^ls$".into());
        let r = Rule::compile(s, true).unwrap();
        let mut f = err("Invalid SYNTAX");
        assert!(!r.matches(&f));
        f.tool = Some("LS");
        assert!(r.matches(&f));
        f.error = None;
        assert!(!r.matches(&f));
    }

    #[test]
    fn bad_user_rules_are_refused_with_the_rule_named() {
        let e = LabelSettings::parse_user_rules(
            r#"[{"id":"a","label":"weird","error":"x","rationale":"r"}]"#,
        )
        .unwrap_err();
        assert!(e.contains("\"a\"") && e.contains("unknown label"), "{e}");
        let e = LabelSettings::parse_user_rules(
            r#"[{"id":"a","label":"state","error":"(","rationale":"r"}]"#,
        )
        .unwrap_err();
        assert!(e.contains("error pattern"), "{e}");
        // regex-lite has no Unicode tables: a Unicode class is refused, never matched wrongly.
        let e = LabelSettings::parse_user_rules(
            r#"[{"id":"a","label":"state","error":"\\p{Greek}","rationale":"r"}]"#,
        )
        .unwrap_err();
        assert!(
            e.contains("Unicode character classes are not supported"),
            "{e}"
        );
        let e = LabelSettings::parse_user_rules(
            r#"{"rules":[{"id":"a","label":"state","rationale":"r"},{"id":"a","label":"state","rationale":"r"}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("used twice"), "{e}");
        let e = LabelSettings::parse_user_rules(
            r#"[{"id":"a","label":"state","colour":1,"rationale":"r"}]"#,
        )
        .unwrap_err();
        assert!(e.contains("colour") || e.contains("unknown field"), "{e}");
        let ok = LabelSettings::parse_user_rules(
            r#"[{"id":"a","label":"state","error":"x","reference":"seen","rationale":"r"}]"#,
        )
        .unwrap();
        assert_eq!(ok[0].reference, Some(Reference::Seen));
    }

    #[test]
    fn sources_round_trip() {
        for s in [
            LabelSource::Given,
            LabelSource::SchemaCheck,
            LabelSource::Rule("tau.x".into()),
        ] {
            assert_eq!(LabelSource::parse(&s.name()), Some(s));
        }
        assert_eq!(LabelSource::parse("rule:"), None);
    }
}
