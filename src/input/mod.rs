//! Input: byte chunks in, a [`Corpus`] of rollouts and diagnostics out.
//!
//! [`Ingest`] accepts any number of files, each as a sequence of byte chunks, and never fails as
//! a whole: a bad line becomes a [`Diagnostic`] naming the file and line, and every valid line is
//! still scored.
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

use crate::rollout::{Corpus, Diagnostic, FirstFailure, InputFile, Rollout, Source};
use canonical::{parse_line, ParsedRollout};
use lines::{Line, LineSplitter};

/// Handle of a file being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId(u32);

/// Incremental reader of rollout files; see the module documentation.
#[derive(Debug, Default)]
pub struct Ingest {
    corpus: Corpus,
    splitters: Vec<Option<LineSplitter>>,
}

impl Ingest {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a file; its chunks are then given to [`Ingest::push`].
    pub fn begin_file(&mut self, name: &str) -> FileId {
        let id = FileId(self.corpus.files.len() as u32);
        self.corpus.files.push(InputFile {
            name: name.to_string(),
            ..InputFile::default()
        });
        self.splitters.push(Some(LineSplitter::new()));
        id
    }

    /// Feeds the next chunk of a file.
    pub fn push(&mut self, file: FileId, chunk: &[u8]) {
        let Some(splitter) = self.splitters[file.0 as usize].as_mut() else {
            return;
        };
        let corpus = &mut self.corpus;
        splitter.push(chunk, &mut |line| accept_line(corpus, file, line));
        corpus.files[file.0 as usize].bytes = splitter.bytes();
    }

    /// Ends a file: a last line without a line break is read now.
    pub fn end_file(&mut self, file: FileId) {
        let Some(mut splitter) = self.splitters[file.0 as usize].take() else {
            return;
        };
        let corpus = &mut self.corpus;
        splitter.finish(&mut |line| accept_line(corpus, file, line));
        let info = &mut corpus.files[file.0 as usize];
        info.bytes = splitter.bytes();
        info.lines = splitter.lines();
        if info.rollouts == 0 && info.errors == 0 {
            let name = info.name.clone();
            corpus.push_diagnostic(Diagnostic {
                file: name,
                line: None,
                message: "the file holds no rollouts (it is empty or has only blank lines)"
                    .to_string(),
            });
        }
    }

    /// Bytes read so far from a file.
    pub fn bytes_read(&self, file: FileId) -> u64 {
        self.corpus.files[file.0 as usize].bytes
    }

    /// Rollouts read so far, over all files.
    pub fn rollouts_read(&self) -> usize {
        self.corpus.rollouts.len()
    }

    /// Ends the input; files not ended yet are ended now.
    pub fn finish(mut self) -> Corpus {
        for i in 0..self.splitters.len() {
            self.end_file(FileId(i as u32));
        }
        self.corpus
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

fn accept_line(corpus: &mut Corpus, file: FileId, line: Line<'_>) {
    let (number, offset, bytes) = match line {
        Line::Text {
            number,
            offset,
            bytes,
        } => (number, offset, bytes),
        Line::TooLong {
            number, offset: _, ..
        } => {
            return reject(
                corpus,
                file,
                number,
                format!(
                    "line longer than {} MiB; skipped",
                    lines::MAX_LINE_BYTES >> 20
                ),
            )
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    match parse_line(bytes) {
        Ok(parsed) => {
            let source = Source {
                file: file.0,
                line: number,
                offset,
                len: bytes.len() as u64,
            };
            add_rollout(corpus, parsed, source);
            corpus.files[file.0 as usize].rollouts += 1;
        }
        Err(e) => reject(corpus, file, number, e.to_string()),
    }
}

fn reject(corpus: &mut Corpus, file: FileId, line: u64, message: String) {
    let info = &mut corpus.files[file.0 as usize];
    info.errors += 1;
    let name = info.name.clone();
    corpus.push_diagnostic(Diagnostic {
        file: name,
        line: Some(line),
        message,
    });
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
        cost: parsed.cost,
        no_tool: parsed.no_tool,
        source,
    });
}
