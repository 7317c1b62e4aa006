//! The session behind [`crate::ingest::Ingest`]: per-file state, the dispatch of lines and
//! documents to the format readers, the end of the input (what needs several files), and the
//! closing diagnostics of each file.
//!
//! It knows no format: the [`FormatReader`]s of [`crate::formats::readers`] do the reading, and
//! write through a [`Sink`] lent to them for the call.

use crate::formats::sink::{FileMeta, Output, Sink};
use crate::formats::summary::Readback;
use crate::formats::{readers, FileImport, Format, FormatReader, ImportOptions, ImportSummary};
use crate::label::Labeller;
use crate::rollout::{Corpus, Diagnostic, Source};

use super::framing::strip_bom;
use super::sniff::{classify_scanned, tried};
use crate::formats::scan::skip_ws;

/// What the session alone keeps per file.
#[derive(Clone, Copy, Debug)]
struct Flags {
    /// False when the first line matched no format and canonical JSONL is the fallback.
    recognised: bool,
    /// Diagnostics are written when the file's rollouts are final (at its end, or when the input
    /// ends for formats that need another file).
    deferred: bool,
}

/// The engine; see the module documentation.
pub(crate) struct Session {
    files: Vec<FileMeta>,
    flags: Vec<Flags>,
    readers: Vec<Box<dyn FormatReader>>,
    pub(crate) summary: ImportSummary,
    output: Output,
    resolved: bool,
    /// The labellers made so far, by their settings: files with the same settings share one,
    /// so a run folder of thousands of files compiles the rule table once, not once a file.
    labellers: Vec<(crate::label::LabelSettings, std::sync::Arc<Labeller>)>,
}

impl Session {
    pub(crate) fn new() -> Self {
        Session {
            files: Vec::new(),
            flags: Vec::new(),
            readers: readers(),
            summary: ImportSummary::default(),
            output: Output::default(),
            resolved: false,
            labellers: Vec::new(),
        }
    }

    /// The format readers, in registry order (detection asks them).
    pub(crate) fn readers(&self) -> &[Box<dyn FormatReader>] {
        &self.readers
    }

    /// Keeps the canonical line of every rollout added, for `convert`.
    pub(crate) fn keep_converted(&mut self) {
        self.output.keep();
    }

    /// Takes the converted lines produced so far.
    pub(crate) fn drain_converted(&mut self) -> Vec<String> {
        self.output.drain()
    }

    /// How many converted lines have been produced (a mark for [`Session::forget_file`]).
    pub(crate) fn converted_len(&self) -> usize {
        self.output.len()
    }

    pub(crate) fn begin_file(&mut self, name: &str, options: ImportOptions) {
        self.summary.files.push(FileImport {
            name: name.to_string(),
            ..FileImport::default()
        });
        self.summary.readback.push(Readback {
            schema_checks: options.schema_checks,
            ..Readback::default()
        });
        let labeller = self.labeller(&options.labels);
        self.files.push(FileMeta {
            name: name.to_string(),
            labeller,
            options,
            resolved: false,
        });
        self.flags.push(Flags {
            recognised: true,
            deferred: false,
        });
        self.resolved = false;
    }

    /// The labeller of these settings, made once per distinct settings. Options are checked
    /// where they are made (CLI, app settings); rules that still do not compile label nothing
    /// rather than failing the file.
    fn labeller(&mut self, settings: &crate::label::LabelSettings) -> std::sync::Arc<Labeller> {
        if let Some((_, l)) = self.labellers.iter().find(|(s, _)| s == settings) {
            return l.clone();
        }
        let made =
            std::sync::Arc::new(Labeller::new(settings).unwrap_or_else(|_| Labeller::none()));
        self.labellers.push((settings.clone(), made.clone()));
        made
    }

    pub(crate) fn options(&self, file: usize) -> &ImportOptions {
        &self.files[file].options
    }

    pub(crate) fn format(&self, file: usize) -> Option<Format> {
        self.summary.files.get(file).and_then(|f| f.format)
    }

    /// The reader of a format (every format has one: the registry lists them all).
    fn reader_of(&self, format: Format) -> Option<usize> {
        self.readers
            .iter()
            .position(|r| r.formats().contains(&format))
    }

    pub(crate) fn set_format(&mut self, file: usize, format: Format, recognised: bool) {
        self.flags[file].recognised = recognised;
        self.summary.files[file].format = recognised.then_some(format);
        self.summary.readback[file].format = Some(format);
        if let Some(r) = self.reader_of(format) {
            if self.readers[r].needs_other_files(format) {
                self.flags[file].deferred = true;
            }
        }
    }

    /// Lends the sink and reader `r` to `f`.
    fn with_reader(
        &mut self,
        corpus: &mut Corpus,
        r: usize,
        f: impl FnOnce(&mut dyn FormatReader, &mut Sink<'_>),
    ) {
        let mut sink = Sink {
            corpus,
            summary: &mut self.summary,
            output: &mut self.output,
            files: &self.files,
        };
        f(self.readers[r].as_mut(), &mut sink);
    }

    /// One non-blank line of a line-based file, at `source`, with its context-free reading if it
    /// was done ahead ([`crate::formats::canonical::prepare_line`]).
    pub(crate) fn line(
        &mut self,
        corpus: &mut Corpus,
        format: Format,
        source: Source,
        bytes: &[u8],
        prepared: Option<crate::formats::canonical::Prepared>,
    ) {
        let Some(r) = self.reader_of(format) else {
            return;
        };
        self.with_reader(corpus, r, |reader, sink| {
            reader.prepared_line(sink, format, source, bytes, prepared)
        });
    }

    /// A whole JSON document, at the end of its file.
    /// `prepared`: its classification and reading computed ahead from the same bytes
    /// ([`super::whole`]).
    pub(crate) fn document(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        bytes: &[u8],
        prepared: Option<super::whole::PreparedDocument>,
    ) {
        let (classified, reading) = match prepared {
            Some(p) => (p.classified, p.reading),
            None => (classify_scanned(bytes, &self.readers), None),
        };
        let (format, scanned) = match classified {
            Ok(f) => f,
            Err(message) => {
                self.flags[file].recognised = false;
                corpus.files[file].errors += 1;
                let name = corpus.files[file].name.clone();
                corpus.push_diagnostic(Diagnostic {
                    file: name,
                    line: None,
                    message,
                });
                return;
            }
        };
        self.set_format(file, format, true);
        let bom = bytes.len() - strip_bom(bytes).len();
        let open = skip_ws(bytes, bom);
        let Some(r) = self.reader_of(format) else {
            return;
        };
        self.with_reader(corpus, r, |reader, sink| {
            reader.prepared_document(sink, file, format, bytes, open, scanned.as_ref(), reading)
        });
    }

    /// The format a reader streams chunk by chunk, recognised from a file's first bytes.
    pub(crate) fn recognise_stream(&self, probe: &[u8]) -> Option<Format> {
        self.readers.iter().find_map(|r| r.recognise_stream(probe))
    }

    /// A chunk of a streamed file.
    pub(crate) fn chunk(&mut self, corpus: &mut Corpus, file: usize, format: Format, bytes: &[u8]) {
        if let Some(r) = self.reader_of(format) {
            self.with_reader(corpus, r, |reader, sink| {
                reader.chunk(sink, file, format, bytes)
            });
        }
    }

    /// The end of a streamed file, or of a file read line by line.
    pub(crate) fn end_stream(&mut self, corpus: &mut Corpus, file: usize, format: Format) {
        if let Some(r) = self.reader_of(format) {
            self.with_reader(corpus, r, |reader, sink| reader.end(sink, file, format));
        }
    }

    /// A zip archive: the first reader that reads it does. `Err` (what the zip is) when none
    /// does; nothing was added then.
    pub(crate) fn archive(
        &mut self,
        corpus: &mut Corpus,
        file: usize,
        src: &mut dyn crate::formats::RandomAccess,
    ) -> Result<(), String> {
        const GENERIC: &str = "a zip archive";
        let mut kind = GENERIC.to_string();
        for r in 0..self.readers.len() {
            let Some(&format) = self.readers[r].formats().last() else {
                continue;
            };
            let mut result = Err(String::new());
            self.with_reader(corpus, r, |reader, sink| {
                result = reader.archive(sink, file, src)
            });
            match result {
                Ok(()) => {
                    self.set_format(file, format, true);
                    return Ok(());
                }
                // The first reader that can tell what the zip is says so; later readers that
                // read no zips keep their generic answer out of it.
                Err(e) if !e.is_empty() && kind == GENERIC => kind = e,
                Err(_) => {}
            }
        }
        Err(kind)
    }

    /// Forgets a file that repeats the earlier file `original`: whatever it left waiting for
    /// another file, and the per-rollout side tables from rollout index `rollouts` and converted
    /// line `converted` on. Its format is cleared so no later pairing picks it up.
    pub(crate) fn forget_file(
        &mut self,
        file: usize,
        original: usize,
        rollouts: usize,
        converted: usize,
    ) {
        for reader in &mut self.readers {
            reader.forget(file);
        }
        self.flags[file].deferred = false;
        self.files[file].resolved = true;
        self.summary.first_failure_sources.truncate(rollouts);
        let _ = self.summary.line_tools.split_off(&rollouts);
        self.output.truncate(converted);
        let name = std::mem::take(&mut self.summary.files[file].name);
        self.summary.files[file] = FileImport {
            name,
            repeats: Some(self.files[original].name.clone()),
            ..FileImport::default()
        };
        self.summary.readback[file].format = None;
    }

    /// The end of one file: its diagnostics, unless its rollouts wait for another file.
    pub(crate) fn end_file(&mut self, corpus: &mut Corpus, file: usize) {
        if !self.flags[file].deferred {
            self.notes(corpus, file);
        }
    }

    /// The end of the input: each reader resolves what needs several files (BFCL results with
    /// their score files, tau2 simulation files with their `results.json`), then the
    /// diagnostics of those files are written. Idempotent.
    pub(crate) fn resolve(&mut self, corpus: &mut Corpus) {
        if self.resolved {
            return;
        }
        self.resolved = true;
        for r in 0..self.readers.len() {
            self.with_reader(corpus, r, |reader, sink| reader.resolve(sink));
        }
        for file in 0..self.files.len() {
            if self.flags[file].deferred {
                self.flags[file].deferred = false;
                self.notes(corpus, file);
            }
            self.files[file].resolved = true;
        }
    }

    /// The file's closing diagnostics: exclusions, skips, missing outputs, and "nothing read".
    fn notes(&mut self, corpus: &mut Corpus, file: usize) {
        let info = self.summary.files[file].clone();
        let mut warn = |message: String| {
            let name = corpus.files[file].name.clone();
            corpus.push_diagnostic(Diagnostic {
                file: name,
                line: None,
                message,
            });
        };
        for (reason, n) in &info.excluded {
            warn(format!(
                "{n} rollouts excluded by termination reason {reason:?}"
            ));
        }
        if info.skipped_inference_errors > 0 {
            warn(format!(
                "{} inference-error lines excluded as asked (a `traceback` and no trajectory: \
                 the model call failed before any step); the leaderboard counts them as failed \
                 tests",
                info.skipped_inference_errors
            ));
        }
        if info.inference_errors > 0 {
            warn(format!(
                "{} inference errors (a `traceback` and no trajectory) scored as rollouts that \
                 failed before any step: one terminal no-tool action, not executable, not \
                 successful, as the leaderboard counts them; the option to exclude inference \
                 errors leaves them out",
                info.inference_errors
            ));
        }
        if info.without_tool_outputs > 0 {
            warn(format!(
                "{} rollouts have no inference_log, so no tool outputs: their steps are read \
                 from `result` and count as executed, which makes TER, PEC and AUC-PEC upper \
                 bounds for them",
                info.without_tool_outputs
            ));
        }
        let explained = !info.excluded.is_empty()
            || info.skipped_inference_errors > 0
            || info.excluded_samples > 0
            || info.outside_protocol > 0
            || info.read_instead.is_some();
        let holds_none = info.format.is_some_and(|format| {
            self.reader_of(format)
                .is_some_and(|r| !self.readers[r].holds_rollouts(format))
        });
        let f = &corpus.files[file];
        if f.rollouts == 0 && !explained && !holds_none {
            let message = if !self.flags[file].recognised {
                format!(
                    "no rollout was read: the file matches no known format; {}",
                    tried()
                )
            } else if f.errors == 0 {
                "the file holds no rollouts (it is empty or has only blank lines)".to_string()
            } else {
                return;
            };
            let name = f.name.clone();
            corpus.push_diagnostic(Diagnostic {
                file: name,
                line: None,
                message,
            });
        }
    }
}
