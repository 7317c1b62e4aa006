//! What a filter can pick, for a corpus: the `meta.*` fields its rollouts carry with their
//! distinct values, and the datasets, conditions, outcomes and first-failure labels present —
//! each with the number of rollouts that have it. The app builds its pickers from this
//! ([`FilterChoices::of`]); it is plain data, so the page deserialises it without linking the
//! filter's regular-expression engine.
//!
//! Bounds (a metadata field can hold an id per rollout): a field lists at most
//! [`MAX_VALUES`] values, the most frequent first, and counts the others in
//! [`MetaField::others`]; values longer than [`MAX_VALUE_CHARS`] characters are not listed
//! (free text, not a category) but counted there too; at most [`MAX_FIELDS`] fields are listed.
//! A field whose one value every rollout carries is left out: `=` on it keeps everything and
//! `!=` nothing, so it picks no subset.
//!
//! ```
//! use prefix_exec::filter::{all_meta_values, choices::FilterChoices};
//! let text = concat!(
//!     r#"{"dataset":"d","task_id":"t1","model":"m","method":"x","success":true,"steps":[],"meta":{"category":"a"}}"#, "\n",
//!     r#"{"dataset":"d","task_id":"t2","model":"m","method":"x","success":true,"steps":[],"meta":{"category":"b"}}"#, "\n",
//! );
//! let corpus = prefix_exec::ingest::read_files([("r.jsonl", text.as_bytes())]);
//! let meta: Vec<_> = text.lines().map(all_meta_values).collect();
//! let choices = FilterChoices::of(&corpus, &meta);
//! assert_eq!(choices.meta[0].key, "category");
//! assert_eq!(choices.meta[0].values, [("a".to_string(), 1), ("b".to_string(), 1)]);
//! ```

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{MetaValues, LABELS, OUTCOMES};
use crate::rollout::Corpus;

/// Values listed per metadata field (the rest are counted).
pub const MAX_VALUES: usize = 50;
/// Longer values are not listed (they are free text).
pub const MAX_VALUE_CHARS: usize = 120;
/// Metadata fields listed (the most widely carried first).
pub const MAX_FIELDS: usize = 40;

/// A name or value and the number of rollouts that have it.
pub type Counted = (String, usize);

/// The pickable values of a corpus; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FilterChoices {
    /// Rollouts of the corpus.
    pub rollouts: usize,
    /// Dataset names, in corpus order.
    pub datasets: Vec<Counted>,
    /// Conditions as the filter spells them (`MODEL · METHOD`), in corpus order.
    pub conditions: Vec<Counted>,
    /// Outcomes (the filter's names) that at least one rollout has, in the grammar's order.
    pub outcomes: Vec<Counted>,
    /// First-failure labels present (`none`: fully executable), in the grammar's order.
    pub labels: Vec<Counted>,
    /// Metadata fields, the most widely carried first (then by key).
    pub meta: Vec<MetaField>,
}

/// A metadata field (`meta.KEY`) the rollouts carry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MetaField {
    /// The dotted key (`category`, `a.b`).
    pub key: String,
    /// Rollouts that carry the key.
    pub rollouts: usize,
    /// Its values, the most frequent first (then in text order), at most [`MAX_VALUES`].
    pub values: Vec<Counted>,
    /// Distinct values not listed (beyond [`MAX_VALUES`], or too long).
    pub others: usize,
}

impl FilterChoices {
    /// The choices of `corpus`, with `meta[i]` the metadata of rollout `i` (every key:
    /// [`super::all_meta_values`]); a shorter `meta` lists no metadata for the rest.
    pub fn of(corpus: &Corpus, meta: &[MetaValues]) -> FilterChoices {
        let mut datasets: Vec<Counted> = Vec::new();
        let mut conditions: Vec<Counted> = Vec::new();
        let mut by_dataset: HashMap<String, usize> = HashMap::new();
        let mut by_condition: HashMap<String, usize> = HashMap::new();
        let mut outcomes = [0usize; OUTCOMES.len()];
        let mut labels = [0usize; LABELS.len()];
        for r in &corpus.rollouts {
            let (d, m, me) = corpus.condition_names(r.condition);
            count_in_order(&mut datasets, &mut by_dataset, d);
            count_in_order(&mut conditions, &mut by_condition, &format!("{m} · {me}"));
            let failed = !r.fully_executable();
            let has = [
                !failed,
                failed,
                failed && r.success,
                failed && !r.success,
                r.success,
                !r.success,
                r.no_tool,
                r.crashed,
            ];
            for (n, h) in outcomes.iter_mut().zip(has) {
                *n += usize::from(h);
            }
            let label = match &r.first_failure {
                None => "none",
                Some(f) if f.environment => "environment",
                Some(f) => f.label.map_or("unlabeled", |l| l.as_str()),
            };
            if let Some(i) = LABELS.iter().position(|l| *l == label) {
                labels[i] += 1;
            }
        }
        let present = |names: &[&str], counts: &[usize]| -> Vec<Counted> {
            names
                .iter()
                .zip(counts)
                .filter(|(_, &n)| n > 0)
                .map(|(s, &n)| (s.to_string(), n))
                .collect()
        };
        FilterChoices {
            rollouts: corpus.rollouts.len(),
            datasets,
            conditions,
            outcomes: present(&OUTCOMES, &outcomes),
            labels: present(&LABELS, &labels),
            meta: meta_fields(
                &meta[..meta.len().min(corpus.rollouts.len())],
                corpus.rollouts.len(),
            ),
        }
    }
}

impl FilterChoices {
    /// The pickers' fields, in display order, each with its values: `dataset`, `condition`,
    /// `outcome`, `label`, then every `meta.KEY`. A field with no value is left out.
    pub fn fields(&self) -> Vec<(String, &[Counted])> {
        let mut out: Vec<(String, &[Counted])> = vec![
            ("dataset".to_string(), &self.datasets),
            ("condition".to_string(), &self.conditions),
            ("outcome".to_string(), &self.outcomes),
            ("label".to_string(), &self.labels),
        ];
        out.extend(
            self.meta
                .iter()
                .map(|f| (format!("meta.{}", f.key), f.values.as_slice())),
        );
        out.retain(|(_, v)| !v.is_empty());
        out
    }
}

fn count_in_order(list: &mut Vec<Counted>, index: &mut HashMap<String, usize>, name: &str) {
    match index.get(name) {
        Some(&i) => list[i].1 += 1,
        None => {
            index.insert(name.to_string(), list.len());
            list.push((name.to_string(), 1));
        }
    }
}

/// The metadata fields of the rollouts `meta`, bounded as the module documentation says.
fn meta_fields(meta: &[MetaValues], rollouts: usize) -> Vec<MetaField> {
    // Key → (rollouts carrying it, value → rollouts having it).
    let mut fields: BTreeMap<&str, (usize, HashMap<&str, usize>)> = BTreeMap::new();
    for values in meta {
        for (key, vs) in values {
            let (n, counts) = fields.entry(key.as_str()).or_default();
            *n += 1;
            for (i, v) in vs.iter().enumerate() {
                // An array naming a value twice counts its rollout once.
                if !vs[..i].contains(v) {
                    *counts.entry(v.as_str()).or_insert(0) += 1;
                }
            }
        }
    }
    let mut out: Vec<MetaField> = fields
        .into_iter()
        .filter(|(_, (n, counts))| !(counts.len() == 1 && *n == rollouts))
        .map(|(key, (rollouts, counts))| {
            let mut values: Vec<(&str, usize)> = counts.into_iter().collect();
            values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let distinct = values.len();
            let listed: Vec<Counted> = values
                .into_iter()
                .filter(|(v, _)| v.chars().count() <= MAX_VALUE_CHARS)
                .take(MAX_VALUES)
                .map(|(v, n)| (v.to_string(), n))
                .collect();
            MetaField {
                key: key.to_string(),
                rollouts,
                others: distinct - listed.len(),
                values: listed,
            }
        })
        .collect();
    out.sort_by(|a, b| b.rollouts.cmp(&a.rollouts).then_with(|| a.key.cmp(&b.key)));
    out.truncate(MAX_FIELDS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::all_meta_values;

    fn corpus_and_meta(lines: &[&str]) -> (Corpus, Vec<MetaValues>) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let corpus = crate::ingest::read_files([("r.jsonl", text.as_bytes())]);
        let meta = lines.iter().map(|l| all_meta_values(l)).collect();
        (corpus, meta)
    }

    fn line(task: &str, model: &str, ok: bool, steps: &str, meta: &str) -> String {
        format!(
            r#"{{"dataset":"d","task_id":"{task}","model":"{model}","method":"x","success":{ok},"steps":[{steps}],"meta":{meta}}}"#
        )
    }

    #[test]
    fn lists_names_outcomes_and_labels_present() {
        let lines = [
            line("t1", "a", true, r#"{"ok":true}"#, "{}"),
            line("t2", "a", false, r#"{"ok":false,"label":"schema"}"#, "{}"),
            line("t1", "b", true, r#"{"ok":false,"label":"state"}"#, "{}"),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (corpus, meta) = corpus_and_meta(&lines);
        let c = FilterChoices::of(&corpus, &meta);
        let owned = |v: &[(&str, usize)]| -> Vec<Counted> {
            v.iter().map(|(s, n)| (s.to_string(), *n)).collect()
        };
        assert_eq!(c.rollouts, 3);
        assert_eq!(c.datasets, owned(&[("d", 3)]));
        assert_eq!(c.conditions, owned(&[("a · x", 2), ("b · x", 1)]));
        assert_eq!(
            c.outcomes,
            owned(&[
                ("executable", 1),
                ("failed_prefix", 2),
                ("recovered", 1),
                ("unrecovered", 1),
                ("success", 2),
                ("failure", 1),
            ])
        );
        assert_eq!(c.labels, owned(&[("schema", 1), ("state", 1), ("none", 1)]));
        assert!(c.meta.is_empty());
        let fields: Vec<String> = c.fields().into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, ["dataset", "condition", "outcome", "label"]);
        // Every listed value is one the filter reads back and keeps that many rollouts of.
        for (name, n) in c.outcomes.iter().chain(&c.labels) {
            let field = if c.labels.iter().any(|(l, _)| l == name) {
                "label"
            } else {
                "outcome"
            };
            let f = crate::filter::Filter::parse(&format!("{field}={name}")).unwrap();
            assert_eq!(
                f.keeps(&corpus).iter().filter(|k| **k).count(),
                *n,
                "{name}"
            );
        }
    }

    #[test]
    fn lists_meta_fields_with_counts_and_bounds() {
        let mut lines = Vec::new();
        for i in 0..60 {
            let category = if i % 3 == 0 { "simple" } else { "multiple" };
            let long = "x".repeat(MAX_VALUE_CHARS + 1);
            let meta = format!(
                r#"{{"category":"{category}","id":"s{i}","same":1,"tags":["a","a","b{}"],"nested":{{"k":{}}},"text":"{}"}}"#,
                i % 2,
                i % 2 == 0,
                if i == 0 { long.as_str() } else { "short" }
            );
            lines.push(line(&format!("t{i}"), "a", true, "", &meta));
        }
        // One rollout without metadata: `same` is then not carried by every rollout.
        lines.push(line("t60", "a", true, "", "{}"));
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (corpus, meta) = corpus_and_meta(&lines);
        let c = FilterChoices::of(&corpus, &meta);
        let keys: Vec<&str> = c.meta.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(
            keys,
            ["category", "id", "nested.k", "same", "tags", "text"],
            "by rollouts carrying them, then by key"
        );
        let field = |k: &str| c.meta.iter().find(|f| f.key == k).unwrap();
        assert_eq!(
            field("category").values,
            [("multiple".to_string(), 40), ("simple".to_string(), 20)]
        );
        assert_eq!(field("category").rollouts, 60);
        assert_eq!(field("id").values.len(), MAX_VALUES);
        assert_eq!(field("id").others, 10);
        assert_eq!(field("nested.k").values.len(), 2);
        assert_eq!(field("same").values, [("1".to_string(), 60)]);
        // An array counts a rollout once per distinct element.
        assert_eq!(
            field("tags").values,
            [
                ("a".to_string(), 60),
                ("b0".to_string(), 30),
                ("b1".to_string(), 30)
            ]
        );
        assert_eq!(field("text").values, [("short".to_string(), 59)]);
        assert_eq!(
            field("text").others,
            1,
            "the long value is counted, not listed"
        );
        // A listed value keeps as many rollouts as it says.
        let f = crate::filter::Filter::parse("meta.category=simple")
            .unwrap()
            .with_meta(meta.clone());
        assert_eq!(f.keeps(&corpus).iter().filter(|k| **k).count(), 20);
    }

    #[test]
    fn a_value_every_rollout_shares_is_no_choice() {
        let lines = [
            line("t1", "a", true, "", r#"{"format":"canonical","k":"1"}"#),
            line("t2", "a", true, "", r#"{"format":"canonical","k":"2"}"#),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (corpus, meta) = corpus_and_meta(&lines);
        let c = FilterChoices::of(&corpus, &meta);
        assert_eq!(c.meta.len(), 1);
        assert_eq!(c.meta[0].key, "k");
        // Fewer metadata entries than rollouts: the rest have none, so a value splits them.
        let c = FilterChoices::of(&corpus, &meta[..1]);
        let keys: Vec<&str> = c.meta.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["format", "k"]);
    }
}
