//! BFCL as a [`FormatReader`]: result and score files are read line by line, and each result
//! file is paired with its run's score file when the input ends (the score file says which
//! tests failed).

use std::collections::{BTreeMap, HashSet};

use super::{
    category_from_name, category_of, draft, model_from_path, read_result_line, read_score_failure,
    read_score_summary, ResultLine, ScoreFile, Test,
};
use crate::formats::canonical::emit;
use crate::formats::draft::Draft;
use crate::formats::sink::Sink;
use crate::formats::{Format, FormatReader, Keys, LineShape};
use crate::rollout::Source;

/// The BFCL reader: per file, the tests of a result file (waiting for the score file) and what
/// a score file says.
#[derive(Default)]
pub(crate) struct Bfcl {
    tests: BTreeMap<usize, Vec<(Test, Source)>>,
    scores: BTreeMap<usize, ScoreFile>,
    score_lines: BTreeMap<usize, u64>,
    /// Files of single-turn categories, with their category: skipped (see [`single_turn`]).
    single_turn: BTreeMap<usize, String>,
}

/// BFCL's single-turn categories (`simple`, `irrelevance`, `parallel`, `live_*`, …) are one
/// call per test with no environment replies: the paper's protocol is defined on multi-turn
/// trajectories, so their files are skipped, all of them named in one report note.
fn single_turn(category: &str) -> bool {
    !category.starts_with("multi_turn")
}

/// The category of a line from its `id` alone (a line whose `result` cannot be read still has
/// one).
fn line_category(bytes: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: crate::formats::Id,
    }
    serde_json::from_slice::<IdOnly>(bytes)
        .ok()
        .map(|l| category_of(&l.id.0))
}

impl FormatReader for Bfcl {
    fn formats(&self) -> &'static [Format] {
        &[Format::BfclResult, Format::BfclScore, Format::BfclTestData]
    }

    fn recognise_line(&self, keys: &Keys<'_>) -> Option<LineShape> {
        let has = |k: &str| keys.contains(k);
        if has("accuracy") && has("correct_count") && has("total_count") {
            Some(LineShape::Lines(Format::BfclScore))
        } else if has("id")
            && (has("question") || has("ground_truth"))
            && !has("result")
            && !has("dataset")
        {
            Some(LineShape::Lines(Format::BfclTestData))
        } else if has("id")
            && (has("inference_log") || has("result") || has("traceback"))
            && !has("dataset")
        {
            Some(LineShape::Lines(Format::BfclResult))
        } else {
            None
        }
    }

    fn needs_other_files(&self, _: Format) -> bool {
        true
    }

    fn holds_rollouts(&self, format: Format) -> bool {
        format == Format::BfclResult
    }

    fn line(&mut self, out: &mut Sink<'_>, format: Format, source: Source, bytes: &[u8]) {
        let file = source.file as usize;
        if format == Format::BfclTestData {
            return;
        }
        if !self.single_turn.contains_key(&file) {
            // The file's name says its category; else its first test (a score file's first
            // line is its summary: its first failure then).
            let named = category_from_name(out.name(file));
            let first = self.tests.get(&file).is_none_or(Vec::is_empty)
                && self.scores.get(&file).is_none_or(|s| s.failed.is_empty());
            let category = named.or_else(|| first.then(|| line_category(bytes)).flatten());
            if let Some(c) = category.filter(|c| single_turn(c)) {
                self.tests.remove(&file);
                self.scores.remove(&file);
                self.single_turn.insert(file, c);
            }
        }
        if self.single_turn.contains_key(&file) {
            if format == Format::BfclResult {
                out.import(file).outside_protocol += 1;
            }
            return;
        }
        if format == Format::BfclResult {
            match read_result_line(bytes) {
                Ok(ResultLine::Test(t)) => self.tests.entry(file).or_default().push((t, source)),
                Ok(ResultLine::InferenceError {
                    id,
                    fingerprint,
                    error,
                }) => {
                    let options = out.options(file);
                    if !options.crashed.counts(!options.exclude_inference_errors) {
                        out.import(file).skipped_inference_errors += 1
                    } else {
                        out.import(file).inference_errors += 1;
                        self.tests
                            .entry(file)
                            .or_default()
                            .push((Test::inference_error(id, fingerprint, error), source));
                    }
                }
                Err(e) => out.reject(file, Some(source.line), e),
            }
            return;
        }
        let lines = self.score_lines.entry(file).or_default();
        *lines += 1;
        let score = self.scores.entry(file).or_default();
        if *lines == 1 {
            match read_score_summary(bytes) {
                Ok(s) => score.summary = Some(s),
                Err(e) => out.reject(file, Some(source.line), e),
            }
            return;
        }
        match read_score_failure(bytes) {
            Ok(fail) => {
                if score.model.is_none() {
                    score.model = fail.model_name;
                }
                if score.category.is_none() {
                    score.category = fail.category.or_else(|| Some(category_of(&fail.id)));
                }
                score
                    .fingerprints
                    .insert(fail.id.clone(), fail.fingerprints);
                score.failed.insert(fail.id);
            }
            Err(e) => out.reject(file, Some(source.line), e),
        }
    }

    /// Pairs each result file with its run's score file and scores its tests.
    fn resolve(&mut self, out: &mut Sink<'_>) {
        self.note_single_turn(out);
        let data = (0..out.file_count())
            .filter(|&i| out.format(i) == Some(Format::BfclTestData) && !out.resolved(i))
            .count();
        if data > 0 {
            out.note(format!(
                "{data} BFCL test data files (the benchmark's questions or possible answers, \
                 not a run) skipped"
            ));
        }
        let scores: Vec<usize> = (0..out.file_count())
            .filter(|&i| {
                out.format(i) == Some(Format::BfclScore) && !self.single_turn.contains_key(&i)
            })
            .collect();
        // Score files resolved earlier stay available for pairing, without a second message.
        let mut used: HashSet<usize> = scores
            .iter()
            .copied()
            .filter(|&s| out.resolved(s))
            .collect();
        for file in 0..out.file_count() {
            if out.format(file) != Some(Format::BfclResult)
                || out.resolved(file)
                || self.single_turn.contains_key(&file)
            {
                continue;
            }
            let tests = self.tests.remove(&file).unwrap_or_default();
            let name = out.name(file).to_string();
            let category = tests
                .first()
                .map(|(t, _)| t.category.clone())
                .or_else(|| category_from_name(&name));
            let folder_model = model_from_path(&name);
            let score_category = |s: usize| {
                self.scores
                    .get(&s)
                    .and_then(|sc| sc.category.clone())
                    .or_else(|| category_from_name(out.name(s)))
            };
            let score_model = |s: usize| {
                self.scores
                    .get(&s)
                    .and_then(|sc| sc.model.clone())
                    .or_else(|| model_from_path(out.name(s)))
            };
            let wanted = out.options(file).model.clone().or(folder_model.clone());
            // The same model, by name or folder: a result file never takes another model's
            // score file, even when that is the only one of its category in the drop.
            let same_model = |s: usize| {
                wanted.is_some()
                    && (score_model(s) == wanted || model_from_path(out.name(s)) == folder_model)
            };
            // Both sides name a model, and different ones.
            let other_model = |s: usize| {
                wanted.is_some()
                    && (score_model(s).is_some() || model_from_path(out.name(s)).is_some())
                    && !same_model(s)
            };
            let mut candidates: Vec<usize> = scores
                .iter()
                .copied()
                .filter(|&s| score_category(s).is_none() || score_category(s) == category)
                .filter(|&s| !other_model(s))
                .collect();
            let by_category = candidates.clone();
            // The score file where BFCL writes this result file's (`result/` ↔ `score/`, the
            // same folders and name otherwise) is its own.
            let twin = counterpart(&name);
            if let Some(s) = candidates
                .iter()
                .copied()
                .find(|&s| twin.is_some() && counterpart(out.name(s)) == twin)
            {
                candidates = vec![s];
            }
            if candidates.len() > 1 {
                candidates.retain(|&s| same_model(s));
            }
            // Names and folders did not decide (a plain multi-file pick of runs whose files have
            // the same names): the score file whose failures repeat this file's results.
            if candidates.len() != 1 {
                let by_content: Vec<usize> = by_category
                    .iter()
                    .copied()
                    .filter(|s| {
                        self.scores
                            .get(s)
                            .is_some_and(|sc| repeats_results(sc, &tests))
                    })
                    .collect();
                if by_content.len() == 1 {
                    candidates = by_content;
                }
            }
            let n = tests.len() as u64;
            let score = match candidates.as_slice() {
                [s] => *s,
                [] => {
                    // Nothing of the file is scored, its inference errors included.
                    out.import(file).inference_errors = 0;
                    out.reject_many(
                        file,
                        n,
                        format!(
                            "a BFCL result file needs its score file to tell which tests \
                             succeeded (the score file lists the failures): add the run's \
                             `{}` (BFCL writes it under score/<model>/) to the same drop",
                            name.rsplit(['/', '\\'])
                                .next()
                                .unwrap_or(&name)
                                .replace("_result.json", "_score.json")
                        ),
                    );
                    continue;
                }
                many => {
                    let names: Vec<&str> = many.iter().map(|&s| out.name(s)).collect();
                    out.reject_many(
                        file,
                        n,
                        format!(
                            "several BFCL score files could belong to this result file ({}); \
                             drop one run at a time, or set the model of the result file to the \
                             score file's model name",
                            names.join(", ")
                        ),
                    );
                    continue;
                }
            };
            used.insert(score);
            let sc = self.scores.get(&score).cloned().unwrap_or_default();
            out.import(file).paired_with = Some(out.name(score).to_string());
            out.import(score).paired_with = Some(name.clone());
            let model = sc
                .model
                .clone()
                .or(folder_model)
                .or_else(|| model_from_path(out.name(score)))
                .unwrap_or_else(|| "unknown-model".to_string());
            let mut successes = 0u64;
            let mut ids: HashSet<String> = HashSet::new();
            let options = out.options(file).clone();
            for (test, source) in tests {
                if !test.has_outputs {
                    out.import(file).without_tool_outputs += 1;
                }
                let success = !sc.failed.contains(&test.id);
                successes += u64::from(success);
                ids.insert(test.id.clone());
                let mut d = draft(test, success, model.clone());
                d.apply(&options);
                d.run = Some(name.clone());
                emit(out, file, &d, None, source);
            }
            if let Some(summary) = sc.summary {
                let skipped = out.import(file).skipped_inference_errors;
                let imported = out.import(file).rollouts;
                if imported + skipped != summary.total_count || successes != summary.correct_count {
                    out.warn(
                        file,
                        None,
                        format!(
                            "the score file {} counts {} tests, {} correct; this result file \
                             gives {imported} rollouts + {skipped} inference errors, {successes} \
                             successful: are they from the same run?",
                            out.name(score),
                            summary.total_count,
                            summary.correct_count
                        ),
                    );
                }
            }
            let unknown = sc.failed.iter().filter(|id| !ids.contains(*id)).count();
            let skipped = out.import(file).skipped_inference_errors as usize;
            if unknown > skipped {
                out.warn(
                    file,
                    None,
                    format!(
                        "{} failures of the score file have no line in this result file",
                        unknown - skipped
                    ),
                );
            }
        }
        for s in scores {
            if !used.contains(&s) {
                out.reject(
                    s,
                    None,
                    "a BFCL score file lists only the failed tests, so it cannot be scored \
                     alone: add the run's result file (BFCL writes it under result/<model>/) to \
                     the same drop"
                        .to_string(),
                );
            }
        }
    }

    fn forget(&mut self, file: usize) {
        self.tests.remove(&file);
        self.scores.remove(&file);
        self.single_turn.remove(&file);
    }

    fn reread(&self, _: Format, bytes: &[u8], success: bool) -> Result<Draft, String> {
        match read_result_line(bytes)? {
            ResultLine::Test(t) => Ok(draft(t, success, String::new())),
            ResultLine::InferenceError {
                id,
                fingerprint,
                error,
            } => Ok(draft(
                Test::inference_error(id, fingerprint, error),
                false,
                String::new(),
            )),
        }
    }
}

/// Where a BFCL file sits with its kind set aside: its path with the last `result`/`score`
/// folder and the name's `_result`/`_score` ending made the same, so a result file and its
/// score file have one counterpart (`m/*/BFCL_v4_multi_turn_base`).
fn counterpart(name: &str) -> Option<String> {
    let mut parts: Vec<&str> = crate::formats::path::components(name).collect();
    let file = parts.pop()?;
    let stem = file
        .strip_suffix("_result.json")
        .or_else(|| file.strip_suffix("_score.json"))?;
    let at = parts
        .iter()
        .rposition(|p| matches!(*p, "result" | "results" | "score" | "scores"))?;
    parts[at] = "*";
    parts.push(stem);
    Some(parts.join("/"))
}

impl Bfcl {
    /// One note for every single-turn file of the input (not one per file or line).
    fn note_single_turn(&self, out: &mut Sink<'_>) {
        let files: Vec<usize> = self
            .single_turn
            .keys()
            .copied()
            .filter(|&f| !out.resolved(f))
            .collect();
        if files.is_empty() {
            return;
        }
        let categories: std::collections::BTreeSet<&str> =
            files.iter().map(|f| self.single_turn[f].as_str()).collect();
        let tests: u64 = files.iter().map(|&f| out.import(f).outside_protocol).sum();
        let categories: Vec<&str> = categories.into_iter().collect();
        out.note(format!(
            "BFCL single-turn categories skipped ({}: {} files, {tests} tests): the paper's \
             protocol is defined on multi-turn trajectories (a single-turn test is one call \
             with no environment reply)",
            categories.join(", "),
            files.len()
        ));
    }
}

/// Whether a BFCL score file's failures are this result file's: every failure names a test of
/// the file and repeats its `result` exactly (by [`super::fingerprint`]), and at least one does.
fn repeats_results(sc: &ScoreFile, tests: &[(Test, Source)]) -> bool {
    let results: std::collections::HashMap<&str, Option<u64>> = tests
        .iter()
        .map(|(t, _)| (t.id.as_str(), t.fingerprint))
        .collect();
    let mut compared = 0usize;
    for id in &sc.failed {
        let Some(result) = results.get(id.as_str()) else {
            return false;
        };
        let repeated = sc.fingerprints.get(id).copied().unwrap_or_default();
        match (result, repeated) {
            (_, [None, None]) | (None, _) => {}
            (Some(r), [a, b]) if a == Some(*r) || b == Some(*r) => compared += 1,
            _ => return false,
        }
    }
    compared > 0
}
