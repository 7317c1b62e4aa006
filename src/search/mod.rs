//! Search across every loaded rollout: a regular expression (case-insensitive unless it says
//! `(?-i)`) over the steps' tool names, call arguments, the reply text of rejected calls, and —
//! through the bytes at each rollout's [`Source`](crate::rollout::Source) — the messages.
//!
//! The corpus keeps no steps ([`crate::rollout`]), so a search re-reads every candidate rollout
//! as the rollout viewer does: the bytes at its source, turned into its canonical line by
//! [`ImportSummary::rollout_line`] and into steps by [`crate::browse::parse_steps`]. Where the
//! bytes come from is the caller's: a [`ByteSource`] (the CLI's files, the browser worker's
//! `File` slices). [`search`] reads the rollouts one by one; [`Searcher::search_rollout`] is the
//! per-rollout step, for callers that spread rollouts over threads (the CLI does, with
//! [`crate::parallel::map`], in fixed chunks merged in order: the same hits at any thread count).
//!
//! Fields, one hit per (rollout, step, field) that matches, its first match marked:
//!
//! - `tool`: the step's tool name (and the name the agent called it by, where they differ);
//! - `args`: the step's arguments as compact JSON;
//! - `error`: the whole reply text of a rejected call (a step that did not execute);
//! - `message`: the text of the messages in the rollout's source bytes: every JSON object holding
//!   `content` (a string, or a list of parts with `text`) beside `role`, `sender`, `from` or
//!   `author` (chat, Anthropic, tau-bench, Inspect transcripts, ToolSandbox's message table);
//!   its hits have no step (`step` is `null`; the viewer opens the rollout at its start).
//!
//! Results are ordered by condition (dataset, model, method names), task (natural order), trial,
//! then step and field; only the requested page is kept, the total is counted. A rollout that
//! cannot be re-read is counted and its first problems are listed ([`SearchPage::unreadable`]);
//! a pattern that does not compile is a [`SearchError`] naming what is wrong.
//!
//! ```
//! use prefix_exec::search::{search, Field, SearchQuery};
//! let line = r#"{"dataset":"d","task_id":"t","model":"m","method":"x","success":false,"steps":[{"tool":"cd","args":{"dir":"tmp"},"ok":false,"error":"No such Folder"}]}"#;
//! let mut ingest = prefix_exec::ingest::Ingest::new();
//! let file = ingest.begin_file_with("r.jsonl", Default::default());
//! ingest.push(file, line.as_bytes());
//! let (corpus, summary) = ingest.finish_with_summary();
//! let query = SearchQuery { pattern: "such f".into(), ..SearchQuery::default() };
//! // The bytes at a rollout's source: here, the only line.
//! let mut source = |_: &prefix_exec::rollout::Corpus, _: usize| Ok(line.as_bytes().to_vec());
//! let page = search(&corpus, &summary, &query, &mut source).unwrap();
//! assert_eq!(page.total, 1);
//! assert_eq!((page.hits[0].field, page.hits[0].step, page.hits[0].text.as_str()), (Field::Error, Some(1), "No such Folder"));
//! assert_eq!(page.hits[0].mark, [3, 9]); // "such F", in characters
//! ```

use serde::{Deserialize, Serialize};

// The pattern engine: `regex` natively, where its optimised matcher keeps a whole leaderboard's
// search fast; `regex-lite` in the browser's worker, where `regex` would add about 800 KB to the
// wasm (README "Size"). The syntax is the same but for Unicode classes (`\p{…}`, a parse error
// in the browser), and case-insensitive matching and `\w`, `\d`, `\s` are ASCII-only there:
// for ASCII patterns (tool names, error texts of real runs) the hits are the same
// (docs/search.md).
#[cfg(not(target_arch = "wasm32"))]
use regex as pattern;
#[cfg(target_arch = "wasm32")]
use regex_lite as pattern;

use crate::formats::ImportSummary;
use crate::rollout::Corpus;

mod index;
mod literal;
mod messages;
pub use index::{SearchIndex, SearchIndexBuilder};

/// What a search looks at.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Tool,
    Args,
    Error,
    Message,
    /// Every field above.
    #[default]
    All,
}

impl Field {
    /// The names the CLI and the JSON use.
    pub const NAMES: [(&'static str, Field); 5] = [
        ("tool", Field::Tool),
        ("args", Field::Args),
        ("error", Field::Error),
        ("message", Field::Message),
        ("all", Field::All),
    ];

    pub fn name(self) -> &'static str {
        Field::NAMES
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("all", |(n, _)| n)
    }

    pub fn parse(name: &str) -> Option<Field> {
        Field::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    }

    fn includes(self, other: Field) -> bool {
        self == Field::All || self == other
    }
}

/// A search request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchQuery {
    /// A regular expression (the `regex` crate's syntax), case-insensitive unless it turns
    /// that off (`(?-i)`).
    pub pattern: String,
    pub field: Field,
    /// Only these conditions, each as (dataset, model, method); empty: every condition.
    #[serde(default)]
    pub conditions: Vec<(String, String, String)>,
    /// The page: hits `offset..offset + limit` of all the hits, in result order.
    #[serde(default)]
    pub offset: usize,
    pub limit: usize,
}

impl Default for SearchQuery {
    fn default() -> Self {
        SearchQuery {
            pattern: String::new(),
            field: Field::All,
            conditions: Vec::new(),
            offset: 0,
            limit: 100,
        }
    }
}

/// One hit: a field of one step (or a message) of one rollout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    pub dataset: String,
    pub model: String,
    pub method: String,
    pub task_id: String,
    /// The rollout's 1-based position among its (condition, task)'s rollouts, in input order
    /// (the filter's `trial`).
    pub trial: u32,
    /// The 1-based step; `None` for a message.
    pub step: Option<usize>,
    pub field: Field,
    /// A snippet of the field's text around the first match (the whole text when short; a cut
    /// side marked with `…`).
    pub text: String,
    /// The first match in `text`, as [start, end) in characters.
    pub mark: [usize; 2],
    /// Matches in the field's whole text.
    pub matches: usize,
    /// The rollout's index in the corpus: what opens it in a viewer.
    pub rollout: usize,
}

/// A page of hits, the number of hits in all and what could not be searched.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchPage {
    pub total: usize,
    pub offset: usize,
    pub hits: Vec<Hit>,
    /// Rollouts searched (after the condition filter).
    pub rollouts: usize,
    /// Rollouts that could not be re-read, in all.
    pub unreadable_total: usize,
    /// The first of them ([`MAX_UNREADABLE`]): (rollout index, what went wrong).
    pub unreadable: Vec<(usize, String)>,
}

impl SearchPage {
    /// The page as JSON (what the Python API reads).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a search page always serialises")
    }
}

/// How many unreadable rollouts are listed with their reason.
pub const MAX_UNREADABLE: usize = 20;

/// Characters kept on each side of a match in a hit's snippet.
pub const SNIPPET_CONTEXT: usize = 60;

/// A pattern that cannot be searched for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// The pattern is empty (it would match everything).
    EmptyPattern,
    /// The pattern is not a valid regular expression: the parser's message.
    BadPattern(String),
    /// A condition asked for is not in the corpus.
    UnknownCondition(String),
    /// A search index built from other rollouts than the corpus searched.
    StaleIndex,
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::EmptyPattern => f.write_str("the search pattern is empty"),
            SearchError::BadPattern(e) => write!(
                f,
                "the search pattern is not a valid regular expression: {e}"
            ),
            SearchError::UnknownCondition(c) => write!(f, "no condition {c} was loaded"),
            SearchError::StaleIndex => {
                f.write_str("the search index is of other files than those loaded: search again")
            }
        }
    }
}

impl std::error::Error for SearchError {}

/// Where a rollout's bytes come from: the bytes at `corpus.rollouts[index].source` in the input
/// file `corpus.files[source.file]` (for an archive's member, inside that member).
pub trait ByteSource {
    fn read(&mut self, corpus: &Corpus, index: usize) -> Result<Vec<u8>, String>;
}

impl<F: FnMut(&Corpus, usize) -> Result<Vec<u8>, String>> ByteSource for F {
    fn read(&mut self, corpus: &Corpus, index: usize) -> Result<Vec<u8>, String> {
        self(corpus, index)
    }
}

/// A compiled query.
#[derive(Clone, Debug)]
pub struct Searcher {
    regex: pattern::Regex,
    /// In the browser, a pattern of plain words: matched by a byte scan ([`literal`]).
    literals: Option<Vec<Vec<u8>>>,
    /// Natively, for a pattern of plain words: the pattern over a rollout's raw bytes, which
    /// must match them for any of its messages to match ([`Searcher::messages_may_match`]).
    #[cfg(not(target_arch = "wasm32"))]
    raw: Option<regex::bytes::Regex>,
    field: Field,
    query: SearchQuery,
}

/// One field text of a rollout that matched, before paging: its snippet is cut only if it is
/// on the page ([`Pager::add`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matched {
    pub step: Option<usize>,
    pub field: Field,
    pub text: String,
}

/// A hit's snippet, its first match marked, and its number of matches.
#[derive(Clone, Debug)]
pub struct RolloutHit {
    pub step: Option<usize>,
    pub field: Field,
    pub text: String,
    pub mark: [usize; 2],
    pub matches: usize,
}

impl Searcher {
    /// Compiles the query's pattern.
    pub fn new(query: &SearchQuery) -> Result<Searcher, SearchError> {
        if query.pattern.is_empty() {
            return Err(SearchError::EmptyPattern);
        }
        let regex = pattern::RegexBuilder::new(&query.pattern)
            .case_insensitive(true)
            .size_limit(8 << 20)
            .build()
            .map_err(|e| SearchError::BadPattern(e.to_string()))?;
        Ok(Searcher {
            regex,
            literals: if cfg!(target_arch = "wasm32") {
                literal::literals(&query.pattern)
            } else {
                None
            },
            #[cfg(not(target_arch = "wasm32"))]
            raw: literal::raw_safe(&query.pattern)
                .then(|| {
                    regex::bytes::RegexBuilder::new(&query.pattern)
                        .case_insensitive(true)
                        .build()
                        .ok()
                })
                .flatten(),
            field: query.field,
            query: query.clone(),
        })
    }

    /// Whether any message in `bytes` can match, before they are parsed: for a pattern of
    /// plain words (no `"`, `\`, `/`, control characters), a message's text holds a match only
    /// if the raw JSON does — every character of such a match stands in the bytes as itself —
    /// unless a `\u` escape, which can spell any character, is there.
    fn messages_may_match(&self, _bytes: &[u8]) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(raw) = &self.raw {
            return memchr::memmem::find(_bytes, b"\\u").is_some() || raw.is_match(_bytes);
        }
        true
    }

    /// The rollouts to search (corpus indices) with their trial numbers, in result order:
    /// condition names, task (natural order), input order.
    pub fn candidates(&self, corpus: &Corpus) -> Result<Vec<(usize, u32)>, SearchError> {
        let mut wanted = vec![self.query.conditions.is_empty(); corpus.conditions.len()];
        for (d, m, me) in &self.query.conditions {
            let found = (0..corpus.conditions.len())
                .find(|&c| {
                    corpus.condition_names(c as u32) == (d.as_str(), m.as_str(), me.as_str())
                })
                .ok_or_else(|| SearchError::UnknownCondition(format!("{d}: {m} · {me}")))?;
            wanted[found] = true;
        }
        let trials = crate::filter::trial_numbers(corpus);
        let mut out: Vec<(usize, u32)> = (0..corpus.rollouts.len())
            .filter(|&i| wanted[corpus.rollouts[i].condition as usize])
            .map(|i| (i, trials[i]))
            .collect();
        out.sort_by(|&(a, _), &(b, _)| {
            let (ra, rb) = (&corpus.rollouts[a], &corpus.rollouts[b]);
            corpus
                .condition_names(ra.condition)
                .cmp(&corpus.condition_names(rb.condition))
                .then_with(|| {
                    crate::browse::natural_cmp(corpus.task_name(ra.task), corpus.task_name(rb.task))
                })
                .then(a.cmp(&b))
        });
        Ok(out)
    }

    /// The texts of one rollout that match, given the bytes at its source, in step then field
    /// order (messages last).
    pub fn search_rollout(
        &self,
        corpus: &Corpus,
        summary: &ImportSummary,
        index: usize,
        bytes: &[u8],
    ) -> Result<Vec<Matched>, String> {
        let messages = self.field.includes(Field::Message) && self.messages_may_match(bytes);
        let texts = texts_of(corpus, summary, index, bytes, self.field, messages);
        let steps = texts.steps?;
        let steps = steps.into_iter().map(|(s, field, text)| Matched {
            step: Some(s),
            field,
            text,
        });
        let messages = texts.messages.into_iter().map(|text| Matched {
            step: None,
            field: Field::Message,
            text,
        });
        Ok(steps
            .chain(messages)
            .filter(|m| self.is_match(&m.text))
            .collect())
    }

    /// The hit of a matched text: its snippet and matches.
    pub fn hit(&self, m: Matched) -> RolloutHit {
        let found = self.find(&m.text).expect("a text that matched matches");
        RolloutHit {
            step: m.step,
            field: m.field,
            ..found
        }
    }

    /// Whether `text` holds a match.
    fn is_match(&self, text: &str) -> bool {
        match &self.literals {
            Some(literals) => literal::contains_any(text, literals),
            None => self.regex.is_match(text),
        }
    }

    /// The first match in `text` as a snippet, with the number of matches.
    fn find(&self, text: &str) -> Option<RolloutHit> {
        let first = self.regex.find(text)?;
        let matches = self.regex.find_iter(text).count();
        let (text, mark) = snippet(text, first.start(), first.end());
        Some(RolloutHit {
            step: None,
            field: Field::All,
            text,
            mark,
            matches,
        })
    }
}

/// The texts a search looks at in one rollout, in result order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutTexts {
    /// (1-based step, field, text) of each step's tool names, arguments and — for a call that
    /// did not execute — reply, step by step; why the steps could not be read, if they could
    /// not (the rollout is then unreadable to a search of those fields).
    pub steps: Result<Vec<(usize, Field, String)>, String>,
    /// The messages' texts, in document order.
    pub messages: Vec<String>,
}

/// The texts of `field` in rollout `index`, from the bytes at its source: its steps as the
/// rollout viewer reads them ([`ImportSummary::rollout_line`], [`crate::browse::parse_steps`])
/// and its messages ([`Field::Message`]). Fields not asked for are not read (empty).
pub fn rollout_texts(
    corpus: &Corpus,
    summary: &ImportSummary,
    index: usize,
    bytes: &[u8],
    field: Field,
) -> RolloutTexts {
    texts_of(
        corpus,
        summary,
        index,
        bytes,
        field,
        field.includes(Field::Message),
    )
}

/// [`rollout_texts`], the messages read only when `messages` says so.
fn texts_of(
    corpus: &Corpus,
    summary: &ImportSummary,
    index: usize,
    bytes: &[u8],
    field: Field,
    messages: bool,
) -> RolloutTexts {
    let steps = if [Field::Tool, Field::Args, Field::Error]
        .iter()
        .any(|&f| field.includes(f))
    {
        summary
            .rollout_line(corpus, index, bytes)
            .and_then(|line| crate::browse::parse_steps(&line))
            .map(|steps| {
                let mut out = Vec::new();
                for s in steps {
                    if field.includes(Field::Tool) {
                        // The agent's name for the tool too, where it differs: one text.
                        let names = match (&s.tool, &s.agent_tool) {
                            (Some(t), Some(a)) if t != a => Some(format!("{t} ({a})")),
                            (Some(t), _) => Some(t.clone()),
                            (None, a) => a.clone(),
                        };
                        out.extend(names.map(|n| (s.depth, Field::Tool, n)));
                    }
                    if field.includes(Field::Args) {
                        out.extend(s.args.map(|a| (s.depth, Field::Args, a)));
                    }
                    if field.includes(Field::Error) && !s.executable {
                        out.extend(s.error.map(|e| (s.depth, Field::Error, e)));
                    }
                }
                out
            })
    } else {
        Ok(Vec::new())
    };
    let messages = if messages {
        messages::message_texts(bytes)
    } else {
        Vec::new()
    };
    RolloutTexts { steps, messages }
}

/// `text` cut to [`SNIPPET_CONTEXT`] characters each side of bytes `start..end`, with the
/// match's [start, end) in characters of the snippet.
fn snippet(text: &str, start: usize, end: usize) -> (String, [usize; 2]) {
    let before: Vec<char> = text[..start].chars().collect();
    let matched = text[start..end].chars().count();
    let after = &text[end..];
    let mut out = String::new();
    let from = before.len().saturating_sub(SNIPPET_CONTEXT);
    if from > 0 {
        out.push('…');
    }
    out.extend(&before[from..]);
    let mark_start = out.chars().count();
    out.push_str(&text[start..end]);
    let mut tail = after.chars();
    out.extend(tail.by_ref().take(SNIPPET_CONTEXT));
    if tail.next().is_some() {
        out.push('…');
    }
    (out, [mark_start, mark_start + matched])
}

/// The page of `query` over every rollout of `corpus` (or of its conditions), reading each
/// rollout's bytes from `source`, one after the other.
pub fn search(
    corpus: &Corpus,
    summary: &ImportSummary,
    query: &SearchQuery,
    source: &mut dyn ByteSource,
) -> Result<SearchPage, SearchError> {
    let searcher = Searcher::new(query)?;
    let candidates = searcher.candidates(corpus)?;
    let mut page = Pager::new(query, candidates.len());
    for &(index, trial) in &candidates {
        let result = source
            .read(corpus, index)
            .and_then(|bytes| searcher.search_rollout(corpus, summary, index, &bytes));
        page.add(corpus, &searcher, index, trial, result);
    }
    Ok(page.finish())
}

/// Builds a [`SearchPage`] from each candidate's hits, in result order, keeping only the page.
pub struct Pager {
    page: SearchPage,
    limit: usize,
}

impl Pager {
    pub fn new(query: &SearchQuery, rollouts: usize) -> Pager {
        Pager {
            page: SearchPage {
                offset: query.offset,
                rollouts,
                ..SearchPage::default()
            },
            limit: query.limit,
        }
    }

    /// A candidate's matched texts (or why it could not be read), in result order.
    pub fn add(
        &mut self,
        corpus: &Corpus,
        searcher: &Searcher,
        index: usize,
        trial: u32,
        result: Result<Vec<Matched>, String>,
    ) {
        match result {
            Ok(hits) => self.add_lazy(corpus, index, trial, hits, |m| searcher.hit(m)),
            Err(e) => self.unreadable(index, e),
        }
    }

    /// A candidate that could not be read, and why.
    pub fn unreadable(&mut self, index: usize, why: String) {
        self.page.unreadable_total += 1;
        if self.page.unreadable.len() < MAX_UNREADABLE {
            self.page.unreadable.push((index, why));
        }
    }

    /// A candidate's hits, in result order, each made into a [`RolloutHit`] (its snippet cut)
    /// only when it is on the page: a pattern that matches everywhere costs a count elsewhere.
    pub fn add_lazy<T>(
        &mut self,
        corpus: &Corpus,
        index: usize,
        trial: u32,
        hits: impl IntoIterator<Item = T>,
        mut make: impl FnMut(T) -> RolloutHit,
    ) {
        let r = &corpus.rollouts[index];
        for h in hits {
            let n = self.page.total;
            self.page.total += 1;
            if n < self.page.offset || n - self.page.offset >= self.limit {
                continue;
            }
            let h = make(h);
            let (dataset, model, method) = corpus.condition_names(r.condition);
            self.page.hits.push(Hit {
                dataset: dataset.to_string(),
                model: model.to_string(),
                method: method.to_string(),
                task_id: corpus.task_name(r.task).to_string(),
                trial,
                step: h.step,
                field: h.field,
                text: h.text,
                mark: h.mark,
                matches: h.matches,
                rollout: index,
            });
        }
    }

    pub fn finish(self) -> SearchPage {
        self.page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINES: &str = concat!(
        r#"{"dataset":"d","task_id":"t2","model":"m","method":"x","success":false,"steps":[{"tool":"cd","args":{"dir":"Tmp"},"ok":true},{"tool":"rm","args":{"path":"a/tmp.txt"},"ok":false,"error":"No such file: tmp.txt"}],"meta":{"messages":[{"role":"user","content":"please clean TMP"}]}}"#,
        "\n",
        r#"{"dataset":"d","task_id":"t10","model":"m","method":"x","success":true,"steps":[{"tool":"ls","ok":true,"error":"tmp listed"}]}"#,
        "\n",
        r#"{"dataset":"d","task_id":"t1","model":"n","method":"x","success":true,"steps":[{"tool":"tmpfs","ok":true}]}"#,
        "\n",
    );

    fn read() -> (Corpus, ImportSummary) {
        let mut ingest = crate::ingest::Ingest::new();
        let file = ingest.begin_file_with("r.jsonl", Default::default());
        ingest.push(file, LINES.as_bytes());
        ingest.finish_with_summary()
    }

    fn run(pattern: &str, field: Field) -> Result<SearchPage, SearchError> {
        let (corpus, summary) = read();
        let lines: Vec<&str> = LINES.lines().collect();
        let mut source = |c: &Corpus, i: usize| {
            Ok(lines[c.rollouts[i].source.line as usize - 1]
                .as_bytes()
                .to_vec())
        };
        let query = SearchQuery {
            pattern: pattern.into(),
            field,
            limit: usize::MAX,
            ..SearchQuery::default()
        };
        search(&corpus, &summary, &query, &mut source)
    }

    fn found(page: &SearchPage) -> Vec<(String, Option<usize>, &'static str)> {
        page.hits
            .iter()
            .map(|h| (h.task_id.clone(), h.step, h.field.name()))
            .collect()
    }

    #[test]
    fn each_field_case_insensitive_in_result_order() {
        let s = |t: &str| t.to_string();
        let all = run("tmp", Field::All).unwrap();
        assert_eq!(
            found(&all),
            [
                // Condition m · x before n · x; steps then fields, messages last. t10's error
                // is an executed step's, not a rejected call's reply.
                (s("t2"), Some(1), "args"),
                (s("t2"), Some(2), "args"),
                (s("t2"), Some(2), "error"),
                (s("t2"), None, "message"),
                (s("t1"), Some(1), "tool"),
            ]
        );
        assert_eq!(
            found(&run("tmp", Field::Tool).unwrap()),
            [(s("t1"), Some(1), "tool")]
        );
        assert_eq!(
            found(&run("TMP", Field::Args).unwrap()),
            [(s("t2"), Some(1), "args"), (s("t2"), Some(2), "args")]
        );
        // The error of an executed step is not a rejected call's reply.
        assert_eq!(found(&run("listed", Field::Error).unwrap()), []);
        assert_eq!(
            found(&run("such", Field::Error).unwrap()),
            [(s("t2"), Some(2), "error")]
        );
        assert_eq!(
            found(&run("clean", Field::Message).unwrap()),
            [(s("t2"), None, "message")]
        );
        // (?-i) turns case-insensitivity off.
        assert_eq!(
            found(&run("(?-i)TMP", Field::All).unwrap()),
            [(s("t2"), None, "message")]
        );
        let h = &run("such", Field::Error).unwrap().hits[0];
        assert_eq!(
            (h.text.as_str(), h.mark, h.matches, h.trial),
            ("No such file: tmp.txt", [3, 7], 1, 1)
        );
        assert_eq!(run("t", Field::Error).unwrap().hits[0].matches, 3);
    }

    #[test]
    fn bad_patterns_say_so_and_lose_nothing() {
        assert_eq!(run("", Field::All).unwrap_err(), SearchError::EmptyPattern);
        let e = run("(tmp", Field::All).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the search pattern is not a valid regular expression: "),
            "{e}"
        );
        assert!(e.to_string().contains("unclosed group"), "{e}");
        // Unreadable rollouts are counted and listed, the others still searched.
        let (corpus, summary) = read();
        let lines: Vec<&str> = LINES.lines().collect();
        let mut source = |c: &Corpus, i: usize| {
            if i == 0 {
                Err("the file is gone".to_string())
            } else {
                Ok(lines[c.rollouts[i].source.line as usize - 1]
                    .as_bytes()
                    .to_vec())
            }
        };
        let query = SearchQuery {
            pattern: "tmp".into(),
            ..SearchQuery::default()
        };
        let page = search(&corpus, &summary, &query, &mut source).unwrap();
        assert_eq!(
            (page.total, page.rollouts, page.unreadable_total),
            (1, 3, 1)
        );
        assert_eq!(page.unreadable, [(0, "the file is gone".to_string())]);
    }

    #[test]
    fn pages_and_conditions() {
        let (corpus, summary) = read();
        let lines: Vec<&str> = LINES.lines().collect();
        let mut source = |c: &Corpus, i: usize| {
            Ok(lines[c.rollouts[i].source.line as usize - 1]
                .as_bytes()
                .to_vec())
        };
        let mut query = SearchQuery {
            pattern: "tmp".into(),
            offset: 1,
            limit: 2,
            ..SearchQuery::default()
        };
        let page = search(&corpus, &summary, &query, &mut source).unwrap();
        assert_eq!(page.total, 5);
        assert_eq!(page.hits.len(), 2);
        assert_eq!(
            (page.hits[0].step, page.hits[1].field),
            (Some(2), Field::Error)
        );
        query.conditions = vec![("d".into(), "n".into(), "x".into())];
        query.offset = 0;
        let page = search(&corpus, &summary, &query, &mut source).unwrap();
        assert_eq!((page.total, page.rollouts), (1, 1));
        query.conditions = vec![("d".into(), "nobody".into(), "x".into())];
        let e = search(&corpus, &summary, &query, &mut source).unwrap_err();
        assert_eq!(e.to_string(), "no condition d: nobody · x was loaded");
    }

    /// The index of `LINES` (rollout 0 unreadable with `broken`, rollout 2's steps unreadable).
    fn index_of(corpus: &Corpus, summary: &ImportSummary, broken: bool) -> SearchIndex {
        let lines: Vec<&str> = LINES.lines().collect();
        let mut b = SearchIndexBuilder::new();
        for i in 0..corpus.rollouts.len() {
            b.add(match (broken, i) {
                (true, 0) => Err("the file is gone".to_string()),
                (true, 2) => Ok(RolloutTexts {
                    steps: Err("no steps".to_string()),
                    messages: vec!["a tmp message".into()],
                }),
                _ => {
                    let line = lines[corpus.rollouts[i].source.line as usize - 1];
                    Ok(rollout_texts(
                        corpus,
                        summary,
                        i,
                        line.as_bytes(),
                        Field::All,
                    ))
                }
            });
        }
        b.finish()
    }

    #[test]
    fn the_index_gives_the_pages_a_reading_gives() {
        let (corpus, summary) = read();
        let lines: Vec<&str> = LINES.lines().collect();
        for broken in [false, true] {
            let index = index_of(&corpus, &summary, broken);
            assert_eq!(index.rollouts(), 3);
            let mut source = |c: &Corpus, i: usize| match (broken, i) {
                (true, 0) => Err("the file is gone".to_string()),
                _ => Ok(lines[c.rollouts[i].source.line as usize - 1]
                    .as_bytes()
                    .to_vec()),
            };
            for pattern in [
                "tmp",
                "(?-i)TMP",
                "t",
                "such",
                "^ls$",
                "nothing here",
                "(tmp",
            ] {
                for (_, field) in Field::NAMES {
                    for (offset, limit) in [(0, usize::MAX), (1, 2), (4, 1), (9, 3)] {
                        let query = SearchQuery {
                            pattern: pattern.into(),
                            field,
                            offset,
                            limit,
                            ..SearchQuery::default()
                        };
                        // What a reading finds where rollout 0 cannot be read and rollout
                        // 2's steps cannot be parsed (its messages can).
                        let read = Searcher::new(&query).and_then(|searcher| {
                            let candidates = searcher.candidates(&corpus)?;
                            let mut pager = Pager::new(&query, candidates.len());
                            for &(i, trial) in &candidates {
                                let hits = match (broken, i) {
                                    (true, 0) => Err("the file is gone".to_string()),
                                    (true, 2) if field != Field::Message => {
                                        Err("no steps".to_string())
                                    }
                                    (true, 2) => Ok(Some(Matched {
                                        step: None,
                                        field: Field::Message,
                                        text: "a tmp message".into(),
                                    })
                                    .filter(|m| searcher.is_match(&m.text))
                                    .into_iter()
                                    .collect()),
                                    _ => source(&corpus, i).and_then(|b| {
                                        searcher.search_rollout(&corpus, &summary, i, &b)
                                    }),
                                };
                                pager.add(&corpus, &searcher, i, trial, hits);
                            }
                            Ok(pager.finish())
                        });
                        if !broken {
                            assert_eq!(read, search(&corpus, &summary, &query, &mut source));
                        }
                        assert_eq!(
                            index.search(&corpus, &query),
                            read,
                            "{pattern} in {field:?}, {offset}+{limit}, broken {broken}"
                        );
                    }
                }
            }
        }
        // Texts held twice are kept once: "tmp listed" is one text; the step field texts of
        // the three rollouts and the one message.
        let index = index_of(&corpus, &summary, false);
        // An index of other rollouts says so (the browser's worker must not panic).
        let query = SearchQuery {
            pattern: "tmp".into(),
            ..SearchQuery::default()
        };
        let other = SearchIndexBuilder::new().finish();
        assert_eq!(other.search(&corpus, &query), Err(SearchError::StaleIndex));
        let (texts, bytes, kept) = index.size();
        assert_eq!(texts, 8);
        assert!(kept <= bytes);
    }

    /// The raw-bytes check natively skips parsing only messages that cannot match: an escape
    /// that spells the word is still found.
    #[test]
    fn messages_spelled_with_escapes_are_found() {
        let line = r#"{"dataset":"d","task_id":"t","model":"m","method":"x","success":true,"steps":[],"no_tool_ok":true,"meta":{"messages":[{"role":"user","content":"a Perm\u0069ssionError here"},{"role":"user","content":"x\/y low\tbattery"}]}}"#;
        let mut ingest = crate::ingest::Ingest::new();
        let file = ingest.begin_file_with("r.jsonl", Default::default());
        ingest.push(file, line.as_bytes());
        let (corpus, summary) = ingest.finish_with_summary();
        let mut source = |_: &Corpus, _: usize| Ok(line.as_bytes().to_vec());
        let count = |pattern: &str, source: &mut dyn ByteSource| {
            let query = SearchQuery {
                pattern: pattern.into(),
                field: Field::Message,
                ..SearchQuery::default()
            };
            search(&corpus, &summary, &query, source).unwrap().total
        };
        assert_eq!(count("permissionerror", &mut source), 1);
        assert_eq!(count("x/y", &mut source), 1);
        assert_eq!(count("nothing", &mut source), 0);
        let plain = line.replace("\\u0069", "i");
        let mut source = |_: &Corpus, _: usize| Ok(plain.as_bytes().to_vec());
        assert_eq!(count("PERMISSIONERROR", &mut source), 1);
        assert_eq!(count("nothing|else", &mut source), 0);
    }

    #[test]
    fn snippets_cut_long_texts_around_the_match() {
        let text = format!("{}needle{}", "a".repeat(100), "é".repeat(100));
        let (s, mark) = snippet(&text, 100, 106);
        assert!(s.starts_with('…') && s.ends_with('…'));
        let chars: Vec<char> = s.chars().collect();
        assert_eq!(chars[mark[0]..mark[1]].iter().collect::<String>(), "needle");
        assert_eq!(chars.len(), 1 + SNIPPET_CONTEXT + 6 + SNIPPET_CONTEXT + 1);
    }
}
