//! A search index: every rollout's texts ([`super::rollout_texts`], all fields) read once and
//! kept, so that each search after the first matches kept texts instead of re-reading and
//! re-parsing every rollout's source (in the browser that re-reading is what a search costs:
//! 15–40 s on a 15-run leaderboard, against a few seconds of matching).
//!
//! Texts are kept once however many rollouts hold them (a prompt, a tool's name, a recurring
//! error: runs of one benchmark share most of theirs), and each search matches a text at most
//! once (a per-search memo by text). Hits are the same, in the same order, with the same
//! snippets, as [`super::search`] re-reading the same bytes: the unit tests and the released
//! runs' test compare the two page by page.

use std::collections::HashMap;

use super::{
    Field, Pager, RolloutHit, RolloutTexts, SearchError, SearchPage, SearchQuery, Searcher,
};
use crate::rollout::Corpus;

/// One text of one rollout.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The 1-based step; 0 for a message.
    step: u32,
    field: Field,
    /// The text's id in [`SearchIndex::texts`].
    text: u32,
}

/// Why a rollout cannot be searched, as a search re-reading it would say.
#[derive(Clone, Debug)]
enum Problem {
    /// Its bytes could not be read: no field can be searched.
    Unreadable(String),
    /// Its steps could not be read: its messages can be searched, its steps' fields not.
    Steps(String),
}

/// Every rollout's texts, in corpus order.
#[derive(Clone, Debug)]
pub struct SearchIndex {
    texts: Vec<Box<str>>,
    entries: Vec<Entry>,
    /// Rollout `i`'s entries are `entries[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    /// The rollouts that cannot be searched (ascending rollout index).
    problems: Vec<(u32, Problem)>,
    /// Bytes of all the entries' texts, before texts held many times are kept once.
    text_bytes: usize,
    /// Bytes of the texts kept.
    unique_bytes: usize,
}

/// Builds a [`SearchIndex`] from each rollout's texts, in corpus order.
#[derive(Debug)]
pub struct SearchIndexBuilder {
    index: SearchIndex,
    /// Text hash → its id. A text whose hash is already another text's is kept again (a
    /// collision only costs its bytes).
    ids: HashMap<u64, u32>,
}

impl Default for SearchIndexBuilder {
    fn default() -> Self {
        SearchIndexBuilder::new()
    }
}

impl SearchIndexBuilder {
    pub fn new() -> SearchIndexBuilder {
        SearchIndexBuilder {
            index: SearchIndex {
                texts: Vec::new(),
                entries: Vec::new(),
                starts: vec![0],
                problems: Vec::new(),
                text_bytes: 0,
                unique_bytes: 0,
            },
            ids: HashMap::new(),
        }
    }

    /// Rollouts added so far.
    pub fn rollouts(&self) -> usize {
        self.index.starts.len() - 1
    }

    /// Bytes of the texts kept so far (what the index holds in memory, but for its tables).
    pub fn unique_bytes(&self) -> usize {
        self.index.unique_bytes
    }

    /// The next rollout (in corpus order): its texts of every field, or why its bytes could
    /// not be read.
    pub fn add(&mut self, read: Result<RolloutTexts, String>) {
        let at = self.rollouts() as u32;
        match read {
            Err(e) => self.index.problems.push((at, Problem::Unreadable(e))),
            Ok(RolloutTexts { steps, messages }) => {
                match steps {
                    Ok(steps) => {
                        for (step, field, text) in steps {
                            let text = self.intern(text);
                            let step = step as u32;
                            self.index.entries.push(Entry { step, field, text });
                        }
                    }
                    Err(e) => self.index.problems.push((at, Problem::Steps(e))),
                }
                for text in messages {
                    let text = self.intern(text);
                    let field = Field::Message;
                    self.index.entries.push(Entry {
                        step: 0,
                        field,
                        text,
                    });
                }
            }
        }
        self.index.starts.push(self.index.entries.len() as u32);
    }

    fn intern(&mut self, text: String) -> u32 {
        self.index.text_bytes += text.len();
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let texts = &mut self.index.texts;
        if let Some(&id) = self.ids.get(&hash) {
            if *texts[id as usize] == *text {
                return id;
            }
        }
        let id = texts.len() as u32;
        self.index.unique_bytes += text.len();
        texts.push(text.into_boxed_str());
        self.ids.entry(hash).or_insert(id);
        id
    }

    pub fn finish(self) -> SearchIndex {
        self.index
    }
}

impl SearchIndex {
    /// Rollouts indexed.
    pub fn rollouts(&self) -> usize {
        self.starts.len() - 1
    }

    /// (texts, bytes of all texts, bytes kept once each): what keeping the index costs.
    pub fn size(&self) -> (usize, usize, usize) {
        (self.entries.len(), self.text_bytes, self.unique_bytes)
    }

    /// The page of `query` over `corpus`, the corpus this index was built from: the page
    /// [`super::search`] gives re-reading the same bytes.
    pub fn search(&self, corpus: &Corpus, query: &SearchQuery) -> Result<SearchPage, SearchError> {
        if self.rollouts() != corpus.rollouts.len() {
            return Err(SearchError::StaleIndex);
        }
        let searcher = Searcher::new(query)?;
        let candidates = searcher.candidates(corpus)?;
        let steps_wanted = [Field::Tool, Field::Args, Field::Error]
            .iter()
            .any(|&f| query.field.includes(f));
        // Per text: 0 not matched yet, 1 no match, 2 a match.
        let mut memo = vec![0u8; self.texts.len()];
        let mut pager = Pager::new(query, candidates.len());
        for &(index, trial) in &candidates {
            let problem = self
                .problems
                .binary_search_by_key(&(index as u32), |(i, _)| *i)
                .ok()
                .map(|k| &self.problems[k].1);
            match problem {
                Some(Problem::Unreadable(e)) => {
                    pager.unreadable(index, e.clone());
                    continue;
                }
                Some(Problem::Steps(e)) if steps_wanted => {
                    pager.unreadable(index, e.clone());
                    continue;
                }
                _ => {}
            }
            let entries =
                &self.entries[self.starts[index] as usize..self.starts[index + 1] as usize];
            let hits = entries.iter().filter(|e| {
                if !query.field.includes(e.field) {
                    return false;
                }
                let seen = &mut memo[e.text as usize];
                if *seen == 0 {
                    *seen = 1 + searcher.is_match(&self.texts[e.text as usize]) as u8;
                }
                *seen == 2
            });
            pager.add_lazy(corpus, index, trial, hits, |e| {
                let hit = searcher
                    .find(&self.texts[e.text as usize])
                    .expect("a text that matched matches");
                RolloutHit {
                    step: (e.step > 0).then_some(e.step as usize),
                    field: e.field,
                    ..hit
                }
            });
        }
        Ok(pager.finish())
    }
}
