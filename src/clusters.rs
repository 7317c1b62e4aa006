//! Failure clusters: every rollout that is not fully executable, grouped by what its first
//! rejected call looked like — (dataset, label, tool, normalised message) — and counted per
//! condition. The report carries them as `failure_clusters` ([`FailureCluster`], re-exported by [`crate::report`]).
//!
//! Each failed rollout is in exactly one cluster, so a condition's counts over the clusters of
//! its dataset add up to its RR-Eligible (its failures):
//!
//! - a rollout that **crashed** (canonical `crash`) is in a crash cluster: label `environment`,
//!   no tool, pattern `crash: ` + the normalised error (or `crash` when none was given);
//! - a **no-tool** rollout that was not allowed to finish without tools: its label, no tool,
//!   pattern `no call`;
//! - any other: its first failure's label (`schema` … `information`, `environment`,
//!   `unlabeled`), the failing call's tool (none when the log names none) and its normalised
//!   message ([`normalise_message`]; `(no message)` when the log gave none).
//!
//! No step is re-read: the corpus already keeps each first failure's interned error text (cut
//! at [`crate::formats::canonical::MAX_ERROR_CHARS`]) and tool. Each distinct text is normalised once.
//! A dataset keeps at most [`MAX_CLUSTERS`] clusters (the largest, ties in name order); the
//! rest are merged, per label, into one cluster whose pattern is [`OTHER_PATTERN`], so counts
//! still add up. The order is deterministic: datasets by name, then clusters by total
//! (descending), label, tool and pattern; a cluster's conditions by (model, method).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::rollout::{Corpus, Rollout, TextId};

/// One failure cluster of a dataset ([`crate::clusters`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureCluster {
    pub dataset: String,
    /// `schema` … `information`, `environment` or `unlabeled`.
    pub label: String,
    /// The failing call's tool; `null` for crashes, no-tool rollouts and calls the log names
    /// no tool for.
    pub tool: Option<String>,
    /// The normalised message ([`crate::clusters::normalise_message`]), `crash: …`, `no call`,
    /// `(no message)` or `(other patterns)`.
    pub pattern: String,
    /// Rollouts in the cluster, over its conditions.
    pub total: u64,
    /// Conditions with rollouts in the cluster, by (model, method).
    pub conditions: Vec<ClusterCondition>,
}

/// A condition's rollouts in a failure cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterCondition {
    pub model: String,
    pub method: String,
    pub n: u64,
}

/// Clusters kept per dataset before the rest are merged.
pub const MAX_CLUSTERS: usize = 500;

/// The pattern of the merged cluster of a label's smaller clusters.
pub const OTHER_PATTERN: &str = "(other patterns)";

/// A quoted part of at least this many words is a quoted message, normalised in place; a
/// shorter one is a value (`<str>`).
pub const QUOTED_MESSAGE_WORDS: usize = 3;

/// The longest pattern kept, in characters (a long message is cut with `…`).
pub const MAX_PATTERN_CHARS: usize = 200;

/// What puts a rollout in a cluster, within its dataset.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterKey {
    pub label: String,
    pub tool: Option<String>,
    pub pattern: String,
}

/// A message with the parts that vary between occurrences of one failure set aside, so that
/// `KeyError: 'user_17'` and `KeyError: 'user_942'` read the same:
///
/// - a quoted value (`'…'`, `"…"` or `` `…` ``, opened after a space, punctuation or the start)
///   of one or two words becomes `<str>`; a quoted part of [`QUOTED_MESSAGE_WORDS`] words or
///   more is a message quoted (BFCL's `{"error": "…"}`) and is normalised inside its quotes;
/// - a word holding `/` or `\` becomes `<path>`;
/// - a run of 8 or more hex digits (dashes allowed: UUIDs) holding a digit becomes `<hex>`;
/// - a number (`42`, `-3.5`, `1e-3`), or digits joined by `-`, `:` or `.` (a date, a time, a
///   version: `2024-05-12`, `10:30`) becomes `<num>`;
/// - a word mixing letters and digits (`user_42`, `a1b2`, `id7`) or holding `@` becomes `<id>`;
/// - whitespace runs become one space; the result is cut at [`MAX_PATTERN_CHARS`].
///
/// A word is a run of letters, digits and `_ - . / \ : @ # + =`; trailing `. , : ;` stay outside it.
///
/// ```
/// use prefix_exec::clusters::normalise_message;
/// assert_eq!(normalise_message("KeyError: 'user_17'"), "KeyError: <str>");
/// assert_eq!(normalise_message("no file /tmp/a.txt (errno 2)"), "no file <path> (errno <num>)");
/// assert_eq!(normalise_message("order 3fa85f64-5717-4562-b3fc-2c963f66afa6 not found"), "order <hex> not found");
/// assert_eq!(normalise_message("seat 12B taken,  try   again."), "seat <id> taken, try again.");
/// ```
pub fn normalise_message(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_PATTERN_CHARS + 8));
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut pending_space = false;
    let push = |out: &mut String, s: &str, pending_space: &mut bool| {
        if *pending_space && !out.is_empty() {
            out.push(' ');
        }
        *pending_space = false;
        out.push_str(s);
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            pending_space = true;
            i += 1;
            continue;
        }
        let opens_quote =
            matches!(c, '\'' | '"' | '`') && (i == 0 || !chars[i - 1].is_alphanumeric());
        if opens_quote {
            if let Some(len) = chars[i + 1..].iter().position(|&d| d == c) {
                let inner: String = chars[i + 1..i + 1 + len].iter().collect();
                if inner.split_whitespace().count() >= QUOTED_MESSAGE_WORDS {
                    // A quoted sentence is a message (BFCL's `{"error": "…"}`), not a value:
                    // normalised itself, inside its quotes.
                    let mut quoted = String::with_capacity(inner.len() + 2);
                    quoted.push(c);
                    quoted.push_str(&normalise_message(&inner));
                    quoted.push(c);
                    push(&mut out, &quoted, &mut pending_space);
                } else {
                    push(&mut out, "<str>", &mut pending_space);
                }
                i += len + 2;
                continue;
            }
        }
        if is_word_char(c) {
            let start = i;
            while i < chars.len() && is_word_char(chars[i]) {
                i += 1;
            }
            // Sentence punctuation after a word is not part of it.
            let mut end = i;
            while end > start && matches!(chars[end - 1], '.' | ',' | ':' | ';') {
                end -= 1;
            }
            let word: String = chars[start..end].iter().collect();
            let tail: String = chars[end..i].iter().collect();
            push(&mut out, classify(&word), &mut pending_space);
            out.push_str(&tail);
            continue;
        }
        let mut buf = [0u8; 4];
        push(&mut out, c.encode_utf8(&mut buf), &mut pending_space);
        i += 1;
    }
    if out.chars().count() > MAX_PATTERN_CHARS {
        out = out.chars().take(MAX_PATTERN_CHARS).collect();
        out.push('…');
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            '_' | '-' | '.' | '/' | '\\' | ':' | '@' | '#' | '+' | '='
        )
}

/// A word as it reads in a pattern: itself, or the placeholder of what varies.
fn classify(word: &str) -> &str {
    if word.is_empty() {
        return word;
    }
    if word.contains(['/', '\\']) && word.chars().count() > 1 {
        return "<path>";
    }
    if word.chars().next().is_some_and(|c| c.is_ascii_digit())
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | '.'))
    {
        return "<num>";
    }
    let hex_digits = word.chars().filter(char::is_ascii_hexdigit).count();
    if hex_digits >= 8
        && word.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && word.chars().any(|c| c.is_ascii_digit())
    {
        return "<hex>";
    }
    if is_number(word) {
        return "<num>";
    }
    let digits = word.chars().any(|c| c.is_ascii_digit());
    let letters = word.chars().any(char::is_alphabetic);
    if (digits && letters) || (word.contains('@') && word.len() > 1) {
        return "<id>";
    }
    word
}

fn is_number(word: &str) -> bool {
    let w = word.strip_prefix(['-', '+']).unwrap_or(word);
    !w.is_empty()
        && w.chars().next().is_some_and(|c| c.is_ascii_digit())
        && w.parse::<f64>().is_ok()
        || (w
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
            && w.chars().any(|c| c.is_ascii_digit()))
}

/// The cluster of a rollout, or `None` when it is fully executable. `memo` keeps each distinct
/// error text's normalisation.
pub fn cluster_key(
    corpus: &Corpus,
    r: &Rollout,
    memo: &mut HashMap<TextId, String>,
) -> Option<ClusterKey> {
    if r.fully_executable() {
        return None;
    }
    let failure = r.first_failure.as_ref();
    let mut message = |fallback: &str| match failure.and_then(|f| f.error) {
        Some(id) => memo
            .entry(id)
            .or_insert_with(|| normalise_message(corpus.texts.get(id)))
            .clone(),
        None => fallback.to_string(),
    };
    let label = match failure {
        Some(f) if f.environment => "environment",
        Some(f) => f.label.map_or("unlabeled", |l| l.as_str()),
        None => "unlabeled",
    };
    if r.crashed {
        let text = message("");
        return Some(ClusterKey {
            label: "environment".to_string(),
            tool: None,
            pattern: if text.is_empty() {
                "crash".to_string()
            } else {
                format!("crash: {text}")
            },
        });
    }
    if r.no_tool {
        return Some(ClusterKey {
            label: label.to_string(),
            tool: None,
            pattern: "no call".to_string(),
        });
    }
    let mut pattern = message("(no message)");
    if pattern.is_empty() {
        pattern = "(no message)".to_string();
    }
    Some(ClusterKey {
        label: label.to_string(),
        tool: failure
            .and_then(|f| f.tool)
            .map(|t| corpus.texts.get(t).to_string()),
        pattern,
    })
}

/// The clusters of a corpus, as the report lists them (see the module documentation).
pub fn failure_clusters(corpus: &Corpus) -> Vec<FailureCluster> {
    // dataset name → key → (model, method) → n
    type ByCondition = BTreeMap<(String, String), u64>;
    type Counts = BTreeMap<ClusterKey, ByCondition>;
    let mut by_dataset: BTreeMap<String, Counts> = BTreeMap::new();
    let mut memo = HashMap::new();
    for r in &corpus.rollouts {
        let Some(key) = cluster_key(corpus, r, &mut memo) else {
            continue;
        };
        let (dataset, model, method) = corpus.condition_names(r.condition);
        *by_dataset
            .entry(dataset.to_string())
            .or_default()
            .entry(key)
            .or_default()
            .entry((model.to_string(), method.to_string()))
            .or_insert(0) += 1;
    }
    let mut out = Vec::new();
    for (dataset, counts) in by_dataset {
        let mut clusters: Vec<(ClusterKey, ByCondition, u64)> = counts
            .into_iter()
            .map(|(k, c)| {
                let total = c.values().sum();
                (k, c, total)
            })
            .collect();
        let order = |a: &(ClusterKey, _, u64), b: &(ClusterKey, _, u64)| {
            b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0))
        };
        clusters.sort_by(order);
        if clusters.len() > MAX_CLUSTERS {
            let mut other: BTreeMap<String, ByCondition> = BTreeMap::new();
            for (key, conditions, _) in clusters.drain(MAX_CLUSTERS..) {
                let merged = other.entry(key.label).or_default();
                for (c, n) in conditions {
                    *merged.entry(c).or_insert(0) += n;
                }
            }
            for (label, conditions) in other {
                let total = conditions.values().sum();
                let key = ClusterKey {
                    label,
                    tool: None,
                    pattern: OTHER_PATTERN.to_string(),
                };
                // A kept cluster with that key (not possible from real messages, which never
                // normalise to the marker) would be merged with it.
                match clusters.iter_mut().find(|(k, _, _)| *k == key) {
                    Some((_, c, t)) => {
                        for (cond, n) in conditions {
                            *c.entry(cond).or_insert(0) += n;
                        }
                        *t += total;
                    }
                    None => clusters.push((key, conditions, total)),
                }
            }
            clusters.sort_by(order);
        }
        for (key, conditions, total) in clusters {
            out.push(FailureCluster {
                dataset: dataset.clone(),
                label: key.label,
                tool: key.tool,
                pattern: key.pattern,
                total,
                conditions: conditions
                    .into_iter()
                    .map(|((model, method), n)| ClusterCondition { model, method, n })
                    .collect(),
            });
        }
    }
    out
}

/// The rollouts (corpus indices, in input order) of one cluster of `dataset`, optionally of one
/// condition (model, method): what a cell of the clusters table opens.
pub fn cluster_rollouts(
    corpus: &Corpus,
    dataset: &str,
    key: &ClusterKey,
    condition: Option<(&str, &str)>,
) -> Vec<usize> {
    let mut memo = HashMap::new();
    let mut merged_away: Option<std::collections::BTreeSet<ClusterKey>> = None;
    let mut out = Vec::new();
    for (i, r) in corpus.rollouts.iter().enumerate() {
        let (d, model, method) = corpus.condition_names(r.condition);
        if d != dataset || condition.is_some_and(|c| c != (model, method)) {
            continue;
        }
        let Some(k) = cluster_key(corpus, r, &mut memo) else {
            continue;
        };
        let hit = if key.pattern == OTHER_PATTERN && key.tool.is_none() {
            // The merged cluster: the rollouts of this label's clusters not kept on their own.
            let kept = merged_away.get_or_insert_with(|| {
                failure_clusters(corpus)
                    .into_iter()
                    .filter(|c| c.dataset == dataset && c.pattern != OTHER_PATTERN)
                    .map(|c| ClusterKey {
                        label: c.label,
                        tool: c.tool,
                        pattern: c.pattern,
                    })
                    .collect()
            });
            k.label == key.label && !kept.contains(&k)
        } else {
            k == *key
        };
        if hit {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        for (text, pattern) in [
            ("", ""),
            ("No such file", "No such file"),
            ("KeyError: 'user_17'", "KeyError: <str>"),
            ("KeyError: \"a b\"", "KeyError: <str>"),
            (
                r#"{"error": "cd: folder 'tmp9' not found in 3 places"}"#,
                r#"{<str>: "cd: folder <str> not found in <num> places"}"#,
            ),
            (
                "flight HAT001 not available on date 2024-05-12",
                "flight <id> not available on date <num>",
            ),
            ("at 10:30:00 on 12.05.2024", "at <num> on <num>"),
            ("unknown `tool_x` called", "unknown <str> called"),
            ("doesn't exist", "doesn't exist"),
            ("unclosed 'quote here", "unclosed 'quote here"),
            (
                "cannot cd to /home/u/x: denied",
                "cannot cd to <path>: denied",
            ),
            ("C:\\Users\\x missing", "<path> missing"),
            (
                "value 42 out of range [0, 10]",
                "value <num> out of range [<num>, <num>]",
            ),
            ("balance -3.50 too low", "balance <num> too low"),
            ("took 1e-3 s", "took <num> s"),
            ("1,000 items", "<num>,<num> items"),
            ("v1.2.3 and 1_000", "<id> and <num>"),
            ("id 20240512-ab12cd34ef", "id <hex>"),
            ("sha deadbeef00 unknown", "sha <hex> unknown"),
            ("uuid 3FA85F64-5717-4562-B3FC-2C963F66AFA6.", "uuid <hex>."),
            ("deadbeef is a word", "deadbeef is a word"),
            ("user_42 not found", "<id> not found"),
            ("mail a@b.com bounced", "mail <id> bounced"),
            ("run 3, call 17", "run <num>, call <num>"),
            ("  lots   of\n\tspace  ", "lots of space"),
            (
                "HTTP 503: Service Unavailable",
                "HTTP <num>: Service Unavailable",
            ),
            ("id=7", "<id>"),
            ("é 5 ü", "é <num> ü"),
        ] {
            assert_eq!(normalise_message(text), pattern, "{text:?}");
        }
        // Two messages of one failure read the same.
        assert_eq!(
            normalise_message("ValueError: invalid value for 'city_9' [run 3, call 17]"),
            normalise_message("ValueError: invalid value for 'town_1' [run 11, call 2]"),
        );
        // Bounded.
        let long = "word ".repeat(500);
        assert_eq!(
            normalise_message(&long).chars().count(),
            MAX_PATTERN_CHARS + 1
        );
    }

    fn corpus() -> Corpus {
        let line = |t: &str, m: &str, rest: &str| {
            format!(r#"{{"dataset":"d","task_id":"{t}","model":"{m}","method":"x",{rest}}}"#) + "\n"
        };
        let text: String = [
            line("t1", "a", r#""success":true,"steps":[{"ok":true}]"#),
            line("t2", "a", r#""success":false,"steps":[{"tool":"cd","error":"no dir 'x1'","label":"dependency"}]"#),
            line("t3", "a", r#""success":true,"steps":[{"tool":"cd","error":"no dir 'y'","label":"dependency"}]"#),
            line("t4", "a", r#""success":false,"steps":[]"#),
            line("t5", "a", r#""success":false,"steps":[],"crash":"HTTP 503""#),
            line("t1", "b", r#""success":false,"steps":[{"tool":"cd","error":"no dir 'z'","label":"dependency"}]"#),
            line("t2", "b", r#""success":false,"steps":[{"ok":true},{"tool":"ls","ok":false}]"#),
            line("t3", "b", r#""success":true,"steps":[],"no_tool_ok":true"#),
        ]
        .concat();
        let options = crate::formats::ImportOptions {
            labels: crate::label::LabelSettings::off(),
            ..Default::default()
        };
        crate::ingest::read_files_with([("r.jsonl", text.as_bytes())], &options)
    }

    #[test]
    fn every_failure_in_exactly_one_cluster() {
        let c = corpus();
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        let clusters = failure_clusters(&c);
        let summary: Vec<(String, Option<String>, String, u64)> = clusters
            .iter()
            .map(|k| (k.label.clone(), k.tool.clone(), k.pattern.clone(), k.total))
            .collect();
        let s = |x: &str| x.to_string();
        assert_eq!(
            summary,
            [
                (s("dependency"), Some(s("cd")), s("no dir <str>"), 3),
                (s("environment"), None, s("crash: HTTP <num>"), 1),
                (s("unlabeled"), None, s("no call"), 1),
                (s("unlabeled"), Some(s("ls")), s("(no message)"), 1),
            ]
        );
        assert_eq!(
            clusters[0].conditions,
            [
                ClusterCondition {
                    model: s("a"),
                    method: s("x"),
                    n: 2
                },
                ClusterCondition {
                    model: s("b"),
                    method: s("x"),
                    n: 1
                },
            ]
        );
        // Per condition, the clusters add up to its failures (RR-Eligible).
        let report = crate::report::build_report(
            &c,
            &crate::report::Settings {
                bootstrap: 0,
                ..Default::default()
            },
        );
        for cond in &report.conditions {
            let n: u64 = report
                .failure_clusters
                .iter()
                .flat_map(|k| &k.conditions)
                .filter(|k| k.model == cond.model && k.method == cond.method)
                .map(|k| k.n)
                .sum();
            assert_eq!(n, cond.rr_eligible, "{}", cond.model);
        }
        assert_eq!(report.failure_clusters, clusters);
        // A cell opens its rollouts.
        let key = ClusterKey {
            label: s("dependency"),
            tool: Some(s("cd")),
            pattern: s("no dir <str>"),
        };
        assert_eq!(cluster_rollouts(&c, "d", &key, None), [1, 2, 5]);
        assert_eq!(cluster_rollouts(&c, "d", &key, Some(("b", "x"))), [5]);
    }

    #[test]
    fn past_the_cap_the_rest_merge_per_label_and_still_add_up() {
        let mut text = String::new();
        for i in 0..(MAX_CLUSTERS + 30) {
            // Distinct words (no digits): distinct patterns.
            let word: String = format!("{i:04}")
                .chars()
                .map(|d| (b'a' + d as u8 - b'0') as char)
                .collect();
            text.push_str(&format!(
                r#"{{"dataset":"d","task_id":"t{i}","model":"m","method":"x","success":false,"steps":[{{"tool":"f","error":"bad {word}","label":"schema"}}]}}"#
            ));
            text.push('\n');
        }
        let c = crate::ingest::read_files([("r.jsonl", text.as_bytes())]);
        let clusters = failure_clusters(&c);
        assert_eq!(clusters.len(), MAX_CLUSTERS + 1);
        let other = clusters
            .iter()
            .find(|k| k.pattern == OTHER_PATTERN)
            .unwrap();
        assert_eq!(other.total, 30);
        assert_eq!(
            clusters.iter().map(|k| k.total).sum::<u64>(),
            MAX_CLUSTERS as u64 + 30
        );
        let key = ClusterKey {
            label: other.label.clone(),
            tool: None,
            pattern: OTHER_PATTERN.to_string(),
        };
        assert_eq!(cluster_rollouts(&c, "d", &key, None).len(), 30);
    }
}
