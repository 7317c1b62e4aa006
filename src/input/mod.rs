//! Input: byte chunks in, a [`Corpus`] of rollouts and diagnostics out.
//!
//! [`Ingest`] accepts any number of files, each as a sequence of byte chunks, and never fails as
//! a whole: a bad line becomes a [`Diagnostic`](crate::rollout::Diagnostic) naming the file and line, and every valid line is
//! still scored.
//!
//! Each file's format is recognised from its first line ([`crate::import::detect`]): canonical
//! JSONL and BFCL files are read line by line as the chunks arrive (memory grows with the number
//! of rollouts, not with the file size); the JSON documents of tau-bench and tau2 are buffered
//! until the file ends and converted then; BFCL result/score pairs and tau2 directory-form runs,
//! which need several files, are resolved when the input ends ([`Ingest::finish`]).
//!
//! ```
//! use prefix_exec::input::Ingest;
//! let mut ingest = Ingest::new();
//! let f = ingest.begin_file("runs.jsonl");
//! ingest.push(f, br#"{"dataset":"d","task_id":1,"model":"m","method":"a","success":true,"#);
//! ingest.push(f, b"\"steps\":[]}\nnot json\n");
//! ingest.end_file(f);
//! let corpus = ingest.finish();
//! assert_eq!(corpus.rollouts.len(), 1);
//! assert_eq!(corpus.diagnostics[0].line, Some(2));
//! ```

pub mod canonical;
pub mod lines;

use crate::import::detect::{sniff, Sniff};
use crate::import::session::Session;
use crate::import::{Format, ImportOptions, ImportSummary};
use crate::rollout::{Corpus, FirstFailure, InputFile, Rollout, Source};
use canonical::ParsedRollout;
use lines::{Line, LineSplitter};

/// Handle of a file being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId(u32);

impl FileId {
    /// The file's index in [`Corpus::files`] (and in [`ImportSummary::files`]).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a file's bytes are being read.
#[derive(Debug)]
enum Reader {
    /// The format is not known yet: the first bytes are held until the first line is complete.
    Detecting(Vec<u8>),
    /// Line by line.
    Lines {
        splitter: LineSplitter,
        format: Format,
    },
    /// A whole JSON document, buffered until the file ends.
    Document(Vec<u8>),
    Ended,
    /// A binary file: reported once, its bytes counted and dropped.
    Skipped,
}

/// Incremental reader of rollout files; see the module documentation.
pub struct Ingest {
    corpus: Corpus,
    readers: Vec<Reader>,
    session: Session,
}

impl Default for Ingest {
    fn default() -> Self {
        Ingest {
            corpus: Corpus::default(),
            readers: Vec::new(),
            session: Session::new(),
        }
    }
}

impl std::fmt::Debug for Ingest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ingest")
            .field("files", &self.corpus.files)
            .field("rollouts", &self.corpus.rollouts.len())
            .finish()
    }
}

impl Ingest {
    pub fn new() -> Self {
        Self::default()
    }

    /// An ingest that also keeps the canonical line of every rollout it adds, in the order they
    /// enter the corpus, for [`Ingest::drain_converted`] (`prefix-exec convert`).
    pub fn converting() -> Self {
        let mut ingest = Self::default();
        ingest.session.keep_converted();
        ingest
    }

    /// Starts a file with the default [`ImportOptions`]; its chunks are then given to
    /// [`Ingest::push`].
    pub fn begin_file(&mut self, name: &str) -> FileId {
        self.begin_file_with(name, ImportOptions::default())
    }

    /// Starts a file with its own import options (name overrides, exclusions, schema checks).
    /// The name should keep its folders where known: BFCL and tau2 runs are partly identified
    /// by them.
    pub fn begin_file_with(&mut self, name: &str, options: ImportOptions) -> FileId {
        let id = FileId(self.corpus.files.len() as u32);
        self.corpus.files.push(InputFile {
            name: name.to_string(),
            ..InputFile::default()
        });
        self.readers.push(Reader::Detecting(Vec::new()));
        self.session.begin_file(name, options);
        id
    }

    /// Feeds the next chunk of a file.
    pub fn push(&mut self, file: FileId, chunk: &[u8]) {
        let i = file.index();
        let Some(reader) = self.readers.get_mut(i) else {
            return;
        };
        match reader {
            Reader::Detecting(head) => {
                head.extend_from_slice(chunk);
                self.corpus.files[i].bytes = head.len() as u64;
                // A binary file gets one message, not one per "line", and is not buffered.
                if let Some(kind) = binary_kind(head) {
                    let name = self.corpus.files[i].name.clone();
                    self.corpus.files[i].errors += 1;
                    self.corpus.push_diagnostic(crate::rollout::Diagnostic {
                        file: name,
                        line: None,
                        message: format!(
                            "this is {kind}, not rollout data; expected JSON Lines or a \
                             benchmark's JSON results (see docs/format.md); the file was skipped"
                        ),
                    });
                    self.readers[i] = Reader::Skipped;
                    return;
                }
                // The first line can only complete with a line break in this chunk.
                if chunk.contains(&b'\n') {
                    self.detect(file, false);
                }
            }
            Reader::Lines { splitter, format } => {
                let format = *format;
                let (corpus, session) = (&mut self.corpus, &mut self.session);
                splitter.push(chunk, &mut |line| {
                    accept_line(corpus, session, file, format, line)
                });
                corpus.files[i].bytes = splitter.bytes();
            }
            Reader::Document(bytes) => {
                bytes.extend_from_slice(chunk);
                self.corpus.files[i].bytes = bytes.len() as u64;
            }
            Reader::Ended => {}
            Reader::Skipped => self.corpus.files[i].bytes += chunk.len() as u64,
        }
    }

    /// Decides how to read a file from its first bytes, once they suffice (or at its end).
    fn detect(&mut self, file: FileId, eof: bool) {
        let i = file.index();
        let Reader::Detecting(head) = &mut self.readers[i] else {
            return;
        };
        match sniff(head, eof) {
            Sniff::NeedMore => {}
            Sniff::Document => {
                let bytes = std::mem::take(head);
                self.readers[i] = Reader::Document(bytes);
            }
            Sniff::Lines { format, recognised } => {
                let head = std::mem::take(head);
                self.session.set_format(i, format, recognised);
                self.readers[i] = Reader::Lines {
                    splitter: LineSplitter::new(),
                    format,
                };
                self.push(file, &head);
            }
        }
    }

    /// Ends a file: a last line without a line break is read now, and a buffered document is
    /// converted.
    pub fn end_file(&mut self, file: FileId) {
        let i = file.index();
        if i >= self.readers.len() {
            return;
        }
        if matches!(self.readers[i], Reader::Detecting(_)) {
            self.detect(file, true);
        }
        match std::mem::replace(&mut self.readers[i], Reader::Ended) {
            Reader::Lines {
                mut splitter,
                format,
            } => {
                let (corpus, session) = (&mut self.corpus, &mut self.session);
                splitter.finish(&mut |line| accept_line(corpus, session, file, format, line));
                let info = &mut corpus.files[i];
                info.bytes = splitter.bytes();
                info.lines = splitter.lines();
            }
            Reader::Document(bytes) => {
                let info = &mut self.corpus.files[i];
                info.bytes = bytes.len() as u64;
                info.lines = count_lines(&bytes);
                self.session.document(&mut self.corpus, i, &bytes);
            }
            Reader::Detecting(_) | Reader::Ended => return,
            Reader::Skipped => {
                self.readers[i] = Reader::Ended;
                return;
            }
        }
        self.session.end_file(&mut self.corpus, i);
    }

    /// Bytes read so far from a file.
    pub fn bytes_read(&self, file: FileId) -> u64 {
        self.corpus.files[file.index()].bytes
    }

    /// Rollouts read so far, over all files.
    pub fn rollouts_read(&self) -> usize {
        self.corpus.rollouts.len()
    }

    /// The format detected for a file so far (`None` while undecided or unrecognised).
    pub fn file_format(&self, file: FileId) -> Option<Format> {
        self.session.format(file.index())
    }

    /// Ends every file not ended yet and resolves what needs several files (BFCL result/score
    /// pairs, tau2 directory-form runs). Idempotent; [`Ingest::finish`] calls it.
    pub fn end_all(&mut self) {
        for i in 0..self.readers.len() {
            self.end_file(FileId(i as u32));
        }
        self.session.resolve(&mut self.corpus);
    }

    /// With [`Ingest::converting`]: the canonical lines of the rollouts added since the last
    /// call, in corpus order (a `{"tools": …}` line precedes rollouts checked against it).
    pub fn drain_converted(&mut self) -> Vec<String> {
        self.session.drain_converted()
    }

    /// Ends the input; files not ended yet are ended now.
    pub fn finish(self) -> Corpus {
        self.finish_with_summary().0
    }

    /// Ends the input and returns the corpus with what the importers found.
    pub fn finish_with_summary(mut self) -> (Corpus, ImportSummary) {
        self.end_all();
        (self.corpus, self.session.summary)
    }
}

/// Reads whole in-memory files; a convenience for tests and small inputs.
pub fn read_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Corpus {
    let mut ingest = Ingest::new();
    for (name, bytes) in files {
        let f = ingest.begin_file(name);
        ingest.push(f, bytes);
        ingest.end_file(f);
    }
    ingest.finish()
}

/// Lines of a buffered document, counted as [`LineSplitter`] counts them.
fn count_lines(bytes: &[u8]) -> u64 {
    let breaks = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    let body = crate::import::detect::strip_bom(bytes);
    breaks + u64::from(!body.is_empty() && !body.ends_with(b"\n"))
}

fn accept_line(
    corpus: &mut Corpus,
    session: &mut Session,
    file: FileId,
    format: Format,
    line: Line<'_>,
) {
    let (number, offset, bytes) = match line {
        Line::Text {
            number,
            offset,
            bytes,
        } => (number, offset, bytes),
        Line::TooLong {
            number, offset: _, ..
        } => {
            let info = &mut corpus.files[file.index()];
            info.errors += 1;
            let name = info.name.clone();
            corpus.push_diagnostic(crate::rollout::Diagnostic {
                file: name,
                line: Some(number),
                message: format!(
                    "line longer than {} MiB; skipped",
                    lines::MAX_LINE_BYTES >> 20
                ),
            });
            return;
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    session.line(corpus, file.index(), format, number, offset, bytes);
}

/// Interns a parsed rollout into the corpus.
pub fn add_rollout(corpus: &mut Corpus, parsed: ParsedRollout, source: Source) {
    let condition = corpus.condition_id(&parsed.dataset, &parsed.model, &parsed.method);
    let dataset = corpus.conditions[condition as usize].dataset;
    let task = corpus.task_id(dataset, &parsed.task_id);
    let first_failure = parsed.failure.map(|f| FirstFailure {
        label: f.label,
        error: f.error.map(|e| corpus.texts.intern(&e)),
        tool: f.tool.map(|t| corpus.texts.intern(&t)),
    });
    corpus.rollouts.push(Rollout {
        condition,
        task,
        horizon: parsed.horizon,
        fed: crate::rollout::Fed(parsed.fed),
        success: parsed.success,
        first_failure,
        cost: parsed.cost.into(),
        no_tool: parsed.no_tool,
        source,
    });
}

/// What a binary file looks like, from its first bytes: a known magic number, a NUL byte, or
/// bytes that are not UTF-8. `None` for text (or too few bytes to tell).
fn binary_kind(head: &[u8]) -> Option<&'static str> {
    const MAGIC: [(&[u8], &str); 6] = [
        (b"\x89PNG", "a PNG image"),
        (b"%PDF", "a PDF document"),
        (b"PK\x03\x04", "a zip archive"),
        (b"\x1f\x8b", "a gzip file (decompress it first)"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
    ];
    if let Some((_, kind)) = MAGIC.iter().find(|(m, _)| head.starts_with(m)) {
        return Some(kind);
    }
    let probe = &head[..head.len().min(4096)];
    if probe.contains(&0) {
        return Some("a binary file");
    }
    // Mostly undecodable bytes; one stray invalid byte in a text file is a line error instead.
    let text = String::from_utf8_lossy(probe);
    let replaced = text.matches('\u{FFFD}').count();
    (probe.len() >= 16 && replaced * 10 > text.chars().count())
        .then_some("a binary file (it is not UTF-8 text)")
}
