//! What a format's reader writes to: the one way a rollout enters the corpus ([`Sink::add`];
//! importers reach it through `canonical::emit`), diagnostics, the
//! per-file counts of the [`ImportSummary`] and the converted output (`prefix-exec convert`).
//!
//! The ingest session owns these and lends them to a reader for one call; readers never touch
//! the corpus directly, so every rollout is counted and converted the same way.

use std::sync::Arc;

use super::scan::{elements, skip_ws, LineCounter, Span};
use super::{FailureSource, FileImport, Format, ImportOptions, ImportSummary, ToolSet};
use crate::label::{Labeller, RuleMark};
use crate::rollout::{Corpus, Diagnostic, LabelSource, ParsedRollout, Source};

/// What the session knows of a file, as readers see it.
#[derive(Clone, Debug)]
pub(crate) struct FileMeta {
    pub name: String,
    pub options: ImportOptions,
    /// The label rules of the options, compiled.
    pub labeller: Arc<Labeller>,
    /// Resolved already (a later resolution leaves it alone).
    pub resolved: bool,
}

/// The converted output: the canonical line of every rollout added, when converting.
#[derive(Debug, Default)]
pub(crate) struct Output {
    lines: Option<Vec<String>>,
    /// The file whose top-level `tools` line is in force in the output.
    tools_from: Option<usize>,
}

impl Output {
    /// Keeps the canonical line of every rollout added from now on.
    pub fn keep(&mut self) {
        self.lines.get_or_insert_with(Vec::new);
    }

    /// Takes the lines produced so far.
    pub fn drain(&mut self) -> Vec<String> {
        self.lines.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// How many lines have been produced (a mark to truncate back to).
    pub fn len(&self) -> usize {
        self.lines.as_ref().map_or(0, Vec::len)
    }

    pub fn truncate(&mut self, len: usize) {
        if let Some(lines) = &mut self.lines {
            lines.truncate(len);
        }
    }
}

/// Lent to a reader for one call; see the module documentation.
pub(crate) struct Sink<'a> {
    pub corpus: &'a mut Corpus,
    pub summary: &'a mut ImportSummary,
    pub output: &'a mut Output,
    pub files: &'a [FileMeta],
}

impl Sink<'_> {
    /// How many files the session has begun.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    pub fn name(&self, file: usize) -> &str {
        &self.files[file].name
    }

    pub fn options(&self, file: usize) -> &ImportOptions {
        &self.files[file].options
    }

    /// Whether the file was resolved by an earlier resolution (or forgotten as a repeat).
    pub fn resolved(&self, file: usize) -> bool {
        self.files[file].resolved
    }

    /// The file's recognised format.
    pub fn format(&self, file: usize) -> Option<Format> {
        self.summary.files.get(file).and_then(|f| f.format)
    }

    /// The file's counts in the summary.
    pub fn import(&mut self, file: usize) -> &mut FileImport {
        &mut self.summary.files[file]
    }

    /// The tools the file's rollouts are checked against (counted, and kept for re-reading).
    pub fn set_tools(&mut self, file: usize, tools: Option<Arc<ToolSet>>) {
        self.summary.files[file].tools = tools.as_ref().map_or(0, |t| t.len() as u64);
        self.summary.readback[file].tools = tools;
    }

    /// Keeps what re-reading the file's rollout will need ([`super::FormatReader::reread_with`]).
    pub fn set_reread_context(&mut self, file: usize, context: Arc<super::RereadContext>) {
        self.summary.readback[file].context = Some(context);
    }

    /// Records how a dataset's success was decided, when a rollout says so (`meta.success_rule`).
    pub fn success_rule(&mut self, dataset: &str, rule: Option<&str>) {
        if let Some(rule) = rule {
            self.corpus
                .success_rules
                .entry(dataset.to_string())
                .or_default()
                .insert(rule.to_string());
        }
    }

    /// Records the local path a model's name was read from (`meta.model_path`).
    pub fn model_path(&mut self, model: &str, path: Option<String>) {
        if let Some(path) = path {
            if !self.corpus.model_paths.contains_key(model) {
                self.corpus.model_paths.insert(model.to_string(), path);
            }
        }
    }

    /// Labels the first failure of a parsed canonical rollout with the file's label rules,
    /// adds the rollout to the corpus and counts it. The mark writes a rule's label into the
    /// converted line.
    pub fn add(
        &mut self,
        file: usize,
        mut parsed: ParsedRollout,
        failure_source: Option<FailureSource>,
        termination_reason: Option<&str>,
        source: Source,
    ) -> RuleMark {
        let labeller = &self.files[file].labeller;
        if let Some(f) = parsed.failure.as_mut() {
            labeller.apply(&parsed.dataset, parsed.no_tool, termination_reason, f);
        }
        self.corpus.label_rules |= !labeller.is_empty();
        if let Some(LabelSource::Rule(id)) = parsed.failure.as_ref().and_then(|f| f.source.as_ref())
        {
            let name = format!("rule:{id}");
            let why = labeller.rationale(&name).unwrap_or_default().to_string();
            self.corpus.label_rationales.entry(name).or_insert(why);
        }
        let mark = RuleMark::of(&parsed);
        self.corpus.add_rollout(parsed, source);
        self.corpus.files[file].rollouts += 1;
        let info = &mut self.summary.files[file];
        info.rollouts += 1;
        match failure_source {
            Some(FailureSource::SchemaCheck) => info.schema_first_failures += 1,
            Some(FailureSource::Environment) => info.environment_first_failures += 1,
            None => {}
        }
        if let Some(r) = termination_reason {
            *info.termination_reasons.entry(r.to_string()).or_default() += 1;
        }
        self.summary.first_failure_sources.push(failure_source);
        mark
    }

    /// Whether converted lines are kept.
    pub fn converting(&self) -> bool {
        self.output.lines.is_some()
    }

    /// Appends a line of file `file` to the converted output (`tools_line`: a top-level tools
    /// line, in force for the file's rollouts that follow).
    pub fn output(&mut self, file: usize, line: String, tools_line: bool) {
        let output = &mut *self.output;
        let Some(out) = output.lines.as_mut() else {
            return;
        };
        if tools_line {
            output.tools_from = Some(file);
        } else if output.tools_from.is_some_and(|f| f != file) {
            // Tools set by an earlier file must not apply to this file's rollouts.
            out.push(r#"{"tools":null}"#.to_string());
            output.tools_from = None;
        }
        out.push(line);
    }

    /// A rejected line or element: counted as an error of the file.
    pub fn reject(&mut self, file: usize, line: Option<u64>, message: String) {
        self.corpus.files[file].errors += 1;
        self.warn(file, line, message);
    }

    /// A file-level rejection of `count` rollouts (at least one error is counted).
    pub fn reject_many(&mut self, file: usize, count: u64, message: String) {
        self.corpus.files[file].errors += count.max(1);
        self.warn(file, None, message);
    }

    /// A note of the whole input, stated once in the report (not a file's diagnostic).
    pub fn note(&mut self, message: String) {
        if !self.corpus.notes.contains(&message) {
            self.corpus.notes.push(message);
        }
    }

    /// A check of the input's own figures that agreed (see [`Corpus::checks`]).
    pub fn passed(&mut self, file: usize, message: String) {
        let name = self.corpus.files[file].name.clone();
        self.corpus.checks.push(Diagnostic {
            file: name,
            line: None,
            message,
        });
    }

    /// A diagnostic that rejects nothing.
    pub fn warn(&mut self, file: usize, line: Option<u64>, message: String) {
        let name = self.corpus.files[file].name.clone();
        self.corpus.push_diagnostic(Diagnostic {
            file: name,
            line,
            message,
        });
    }

    /// Anything but whitespace after a document is reported (and ignored).
    pub fn trailing(&mut self, file: usize, bytes: &[u8], closed_at: Option<usize>) {
        let Some(at) = closed_at else { return };
        let rest = skip_ws(bytes, at);
        if rest < bytes.len() {
            let line = LineCounter::new(bytes).line_at(rest);
            self.warn(
                file,
                Some(line),
                "unexpected data after the end of the JSON document; ignored".to_string(),
            );
        }
    }
}

/// Where an element of a document lies.
pub(crate) fn source_of(file: usize, lc: &mut LineCounter<'_>, span: Span) -> Source {
    Source {
        file: file as u32,
        line: lc.line_at(span.start),
        offset: span.start as u64,
        len: u32::try_from(span.end - span.start).unwrap_or(u32::MAX),
    }
}

/// Walks the JSON array at `open` of a document: `each` gets every complete element (its index,
/// where it lies, its bytes); a document cut short is reported with how many complete elements
/// came before the cut. Returns where the array closed (for [`Sink::trailing`]).
pub(crate) fn for_each_element(
    out: &mut Sink<'_>,
    file: usize,
    bytes: &[u8],
    open: usize,
    mut each: impl FnMut(&mut Sink<'_>, usize, Source, &[u8]),
) -> Option<usize> {
    let mut lc = LineCounter::new(bytes);
    let mut it = elements(bytes, open);
    let mut read = 0usize;
    for (i, span) in it.by_ref().enumerate() {
        match span {
            Ok(span) => {
                read += 1;
                let source = source_of(file, &mut lc, span);
                each(out, i, source, &bytes[span.start..span.end]);
            }
            Err(e) => {
                let line = lc.line_at(bytes.len());
                let message = format!("{e}; the {read} complete elements before the cut were read");
                out.reject(file, Some(line), message);
            }
        }
    }
    it.closed_at()
}
