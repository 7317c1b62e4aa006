//! Ingest: byte chunks in, a [`Corpus`] of rollouts and diagnostics out.
//!
//! The pipeline, one way: bytes → [`framing`] (lines, BOM, chunk boundaries) → [`sniff`]
//! (binary or text; which format, asking each `crate::formats::FormatReader`) → the format's
//! reader (through the `session`, which keeps per-file state and resolves what needs several
//! files) → [`Corpus::add_rollout`].
//!
//! [`Ingest`] accepts any number of files, each as a sequence of byte chunks, and never fails as
//! a whole: a bad line becomes a [`Diagnostic`](crate::rollout::Diagnostic) naming the file and line, and every valid line is
//! still scored.
//!
//! Each file's format is recognised from its first line ([`sniff`]): canonical
//! JSONL and BFCL files are read line by line as the chunks arrive (memory grows with the number
//! of rollouts, not with the file size); the JSON documents of tau-bench and tau2 are buffered
//! until the file ends and converted then; BFCL result/score pairs and tau2 directory-form runs,
//! which need several files, are resolved when the input ends ([`Ingest::finish`]).
//!
//! Natively, a large pushed chunk of canonical JSONL is parsed on several threads
//! ([`ParallelParse`]) with the same result as on one.
//!
//! ```
//! use prefix_exec::ingest::Ingest;
//! let mut ingest = Ingest::new();
//! let f = ingest.begin_file("runs.jsonl");
//! ingest.push(f, br#"{"dataset":"d","task_id":1,"model":"m","method":"a","success":true,"#);
//! ingest.push(f, b"\"steps\":[]}\nnot json\n");
//! ingest.end_file(f);
//! let corpus = ingest.finish();
//! assert_eq!(corpus.rollouts.len(), 1);
//! assert_eq!(corpus.diagnostics[0].line, Some(2));
//! ```

pub mod archive;
pub mod framing;
pub mod members;
mod order;
pub mod prepared;
pub(crate) mod session;
pub mod sniff;
pub mod whole;

pub use order::path_order;

use crate::formats::{Format, ImportOptions, ImportSummary};
use crate::rollout::{Corpus, InputFile, Rollout};
use framing::{count_lines, Line, LineSplitter};
use prepared::PreparedLines;
use session::Session;
use sniff::{binary_kind, sniff, Sniff, PROBE};
pub use whole::PreparedFile;

/// The first bytes of a zip archive's first entry (an Inspect `.eval` log is a zip).
pub const ZIP_MAGIC: &[u8] = b"PK\x03\x04";
use xxhash_rust::xxh3::Xxh3;

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
    /// Streamed to its format's reader chunk by chunk (an Inspect `.json` log).
    Stream(Format),
    /// A zip archive pushed in chunks, buffered until the file ends, then read by random access
    /// from memory ([`Ingest::read_archive`] reads one from its file instead).
    Archive(Vec<u8>),
    Ended,
    /// A binary file: reported once, its bytes counted and dropped.
    Skipped,
}

/// Incremental reader of rollout files; see the module documentation.
pub struct Ingest {
    corpus: Corpus,
    readers: Vec<Reader>,
    /// Per file: what the corpus held when it began, and the hash of its bytes.
    marks: Vec<FileMark>,
    session: Session,
    parallel: ParallelParse,
    /// The files that ended (and were counted), by the hash of their bytes: a repeat is looked up among them only, not
    /// among every earlier file (a folder of 30,000 files would compare each with all).
    by_digest: std::collections::HashMap<u128, Vec<u32>>,
    /// The archive being read: files begun meanwhile are its members.
    archive: Option<String>,
}

/// When a pushed chunk of canonical JSONL is parsed on several threads.
///
/// The chunk's complete lines are cut into groups of whole lines, and each line's context-free
/// reading ([`crate::formats::canonical::prepare_line`]: JSON parse and validation) is computed
/// on [`crate::parallel::map`]'s threads; then every line is taken in line order exactly as the
/// single-threaded path takes it (tools in force, exclusions, line numbers, diagnostics and their
/// cap, repeats, [`Corpus::add_rollout`]), before `push` returns. The corpus is therefore the same
/// by construction, whatever the groups and the number of threads; only chunks large enough for
/// the threads to pay are split. Memory stays bounded by the chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParallelParse {
    /// Chunks shorter than this are read line by line on the calling thread.
    pub min_chunk: usize,
    /// Bytes of lines per group (a group ends at the first line boundary past it); `None`: the
    /// chunk is cut into a few groups per thread.
    pub group: Option<usize>,
    /// Split even when there is one thread (for tests: the path is then exercised everywhere).
    pub forced: bool,
}

impl ParallelParse {
    /// Chunks from this size on are split across threads (the CLI reads 1 MiB chunks).
    pub const MIN_CHUNK: usize = 256 * 1024;

    /// Off: every line is read on the calling thread.
    pub const OFF: ParallelParse = ParallelParse {
        min_chunk: usize::MAX,
        group: None,
        forced: false,
    };

    fn applies(&self, chunk: usize) -> bool {
        // `threads` is asked last: it starts rayon's pool, which the CLI sizes first.
        chunk >= self.min_chunk && (self.forced || crate::parallel::threads() > 1)
    }
}

impl Default for ParallelParse {
    fn default() -> Self {
        ParallelParse {
            min_chunk: Self::MIN_CHUNK,
            group: None,
            forced: false,
        }
    }
}

/// Where the corpus stood when a file began, so a repeated file can be taken back out.
struct FileMark {
    rollouts: usize,
    diagnostics: usize,
    diagnostics_total: u64,
    converted: usize,
    hasher: Box<Xxh3>,
    /// The digest of a document prepared whole ([`PreparedFile`]), hashed where it was
    /// prepared; `hasher` holds nothing then.
    digest: Option<u128>,
}

impl Default for Ingest {
    fn default() -> Self {
        Ingest {
            corpus: Corpus::default(),
            readers: Vec::new(),
            marks: Vec::new(),
            session: Session::new(),
            parallel: ParallelParse::default(),
            by_digest: std::collections::HashMap::new(),
            archive: None,
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

    /// Sets when canonical JSONL chunks are parsed on several threads (the result does not
    /// depend on it; see [`ParallelParse`]).
    pub fn set_parallel_parse(&mut self, parallel: ParallelParse) {
        self.parallel = parallel;
    }

    /// Starts a file with the default [`ImportOptions`]; its chunks are then given to
    /// [`Ingest::push`].
    pub fn begin_file(&mut self, name: &str) -> FileId {
        self.begin_file_with(name, ImportOptions::default())
    }

    /// Files begun so far (an archive's members each count): the next file's index.
    pub fn file_count(&self) -> usize {
        self.corpus.files.len()
    }

    /// Starts a file with its own import options (name overrides, exclusions, schema checks).
    /// The name should keep its folders where known: BFCL and tau2 runs are partly identified
    /// by them.
    pub fn begin_file_with(&mut self, name: &str, options: ImportOptions) -> FileId {
        let id = FileId(self.corpus.files.len() as u32);
        self.corpus.files.push(InputFile {
            name: name.to_string(),
            archive: self.archive.clone(),
            ..InputFile::default()
        });
        self.readers.push(Reader::Detecting(Vec::new()));
        self.marks.push(FileMark {
            rollouts: self.corpus.rollouts.len(),
            diagnostics: self.corpus.diagnostics.len(),
            diagnostics_total: self.corpus.diagnostics_total,
            converted: self.session.converted_len(),
            hasher: Box::new(Xxh3::new()),
            digest: None,
        });
        self.session.begin_file(name, options);
        id
    }

    /// Feeds the next chunk of a file.
    pub fn push(&mut self, file: FileId, chunk: &[u8]) {
        self.push_with(file, chunk, None);
    }

    /// [`Ingest::push`] with readings of the chunk's canonical lines computed elsewhere (the
    /// browser's pool workers; see [`prepared`]). Readings of lines not in the chunk, or for a
    /// file that is not canonical JSONL, are ignored; the result is the same as `push`'s.
    /// Returns how many readings were used.
    pub fn push_prepared(&mut self, file: FileId, chunk: &[u8], lines: &mut PreparedLines) -> u64 {
        let mut used = 0;
        self.push_with(file, chunk, Some((lines, &mut used)));
        used
    }

    /// Reads a whole file prepared ahead ([`PreparedFile::new`], on any thread): the same as
    /// pushing its bytes and ending the file, without doing again what was prepared (see
    /// [`whole`]). Nothing may have been pushed for the file; if something was, its bytes are
    /// pushed and the file ended as usual.
    pub fn push_prepared_file(&mut self, file: FileId, prepared: PreparedFile) {
        let PreparedFile {
            bytes,
            hash,
            document,
        } = prepared;
        let i = file.index();
        if !matches!(self.readers.get(i), Some(Reader::Detecting(h)) if h.is_empty()) {
            self.push(file, &bytes);
            self.end_file(file);
            return;
        }
        // `push`'s first chunk, without copying the bytes into the buffer, nor hashing them
        // again: nothing was hashed for the file yet (a document's digest is final: nothing
        // more is pushed for it).
        match hash {
            whole::Hash::Digest(digest) => self.marks[i].digest = Some(digest),
            whole::Hash::Hasher(hasher) => self.marks[i].hasher = hasher,
        }
        self.corpus.files[i].bytes = bytes.len() as u64;
        if document.is_some() {
            // Prepared as a document: the bytes are text and no streamed format's, and the
            // sniff of the whole file says "document", which is where detection ends for
            // them (a first line read whole sniffs the same with or without the file's end;
            // one that is not waits for the end). The first line is not parsed again.
            self.readers[i] = Reader::Document(bytes);
        } else {
            self.readers[i] = Reader::Detecting(bytes);
            if self.head_len(i) >= PROBE && !self.skip_if_binary(file) {
                self.detect(file, false);
            }
        }
        self.end_file_with(file, document);
    }

    /// Starts file `name` with `options` and reads it whole from `prepared`
    /// ([`Ingest::begin_file_with`], then [`Ingest::push_prepared_file`]): an archive member
    /// or a folder's file prepared elsewhere.
    pub fn push_whole_file(&mut self, name: &str, options: ImportOptions, prepared: PreparedFile) {
        let id = self.begin_file_with(name, options);
        self.push_prepared_file(id, prepared);
    }

    fn head_len(&self, i: usize) -> usize {
        match &self.readers[i] {
            Reader::Detecting(head) => head.len(),
            _ => 0,
        }
    }

    /// Whether the file is being read as canonical JSONL, line by line (so readings computed
    /// elsewhere apply to it): known once its first line is complete.
    pub fn reads_canonical_lines(&self, file: FileId) -> bool {
        matches!(
            self.readers.get(file.index()),
            Some(Reader::Lines {
                format: Format::Canonical,
                ..
            })
        )
    }

    fn push_with(
        &mut self,
        file: FileId,
        chunk: &[u8],
        prepared: Option<(&mut PreparedLines, &mut u64)>,
    ) {
        let i = file.index();
        let Some(reader) = self.readers.get_mut(i) else {
            return;
        };
        if !matches!(reader, Reader::Ended) {
            self.marks[i].hasher.update(chunk);
        }
        match reader {
            Reader::Detecting(head) => {
                let before = head.len();
                head.extend_from_slice(chunk);
                self.corpus.files[i].bytes = head.len() as u64;
                // Both decisions wait for the first PROBE bytes (or the file's end), so they
                // are taken on the same bytes however the file is cut into chunks.
                if head.len() < PROBE {
                    return;
                }
                let crossed = before < PROBE;
                if crossed && self.skip_if_binary(file) {
                    return;
                }
                // The first line completes with a line break in this chunk, or was already
                // complete when the probe filled up.
                if crossed || chunk.contains(&b'\n') {
                    self.detect(file, false);
                }
            }
            Reader::Lines { splitter, format } => {
                let format = *format;
                let (corpus, session) = (&mut self.corpus, &mut self.session);
                if let (Format::Canonical, Some((lines, used))) = (format, prepared) {
                    splitter.push(chunk, &mut |line| {
                        let prepared = match line {
                            Line::Text { offset, bytes, .. } => lines.take(offset, bytes.len()),
                            Line::TooLong { .. } => None,
                        };
                        *used += u64::from(prepared.is_some());
                        accept_line(corpus, session, file, format, line, prepared)
                    });
                } else if format == Format::Canonical && self.parallel.applies(chunk.len()) {
                    let group = self.parallel.group;
                    accept_lines_parallel(corpus, session, file, splitter, chunk, group);
                } else {
                    splitter.push(chunk, &mut |line| {
                        accept_line(corpus, session, file, format, line, None)
                    });
                }
                corpus.files[i].bytes = splitter.bytes();
            }
            Reader::Document(bytes) | Reader::Archive(bytes) => {
                bytes.extend_from_slice(chunk);
                self.corpus.files[i].bytes = bytes.len() as u64;
            }
            Reader::Stream(format) => {
                let format = *format;
                self.corpus.files[i].bytes += chunk.len() as u64;
                self.session.chunk(&mut self.corpus, i, format, chunk);
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
        // A streamed format is told by the probe alone, like every detection.
        if let Some(format) = self
            .session
            .recognise_stream(&head[..head.len().min(PROBE)])
        {
            let head = std::mem::take(head);
            self.session.set_format(i, format, true);
            self.readers[i] = Reader::Stream(format);
            self.corpus.files[i].bytes = 0;
            self.push(file, &head);
            return;
        }
        match sniff(head, eof, self.session.readers()) {
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

    /// Skips the file with one message if its first bytes are not text. A binary file gets one
    /// message, not one per "line", and is not buffered.
    fn skip_if_binary(&mut self, file: FileId) -> bool {
        let i = file.index();
        let Reader::Detecting(head) = &self.readers[i] else {
            return false;
        };
        if head.starts_with(ZIP_MAGIC) {
            // Possibly an Inspect `.eval` log: decided from its table of contents, at its end.
            if let Reader::Detecting(bytes) = std::mem::replace(&mut self.readers[i], Reader::Ended)
            {
                self.readers[i] = Reader::Archive(bytes);
            }
            return true;
        }
        let Some(kind) = binary_kind(&head[..head.len().min(PROBE)]) else {
            return false;
        };
        self.not_rollout_data(i, kind);
        self.readers[i] = Reader::Skipped;
        true
    }

    /// Says a file is `kind`, not rollout data, and counts it as an error.
    fn not_rollout_data(&mut self, i: usize, kind: &str) {
        let name = self.corpus.files[i].name.clone();
        self.corpus.files[i].errors += 1;
        self.corpus.push_diagnostic(crate::rollout::Diagnostic {
            file: name,
            line: None,
            message: format!(
                "this is {kind}, not rollout data; expected JSON Lines, a benchmark's JSON \
                 results or an Inspect log (see docs/format.md); the file was skipped"
            ),
        });
    }

    /// Reads a zip archive (an Inspect `.eval` log) of file `file` by random access, without
    /// buffering it: its table of contents, then one entry at a time. The CLI and the browser's
    /// worker use it for files starting with [`ZIP_MAGIC`]; nothing may have been pushed for
    /// the file. Ends the file.
    pub fn read_archive(&mut self, file: FileId, src: &mut dyn crate::formats::RandomAccess) {
        let i = file.index();
        if !matches!(self.readers.get(i), Some(Reader::Detecting(h)) if h.is_empty()) {
            return;
        }
        let size = src.size();
        self.corpus.files[i].bytes = size;
        // Repeats are told by the archive's tail (its table of contents, holding every entry's
        // CRC) and its size, without reading it all.
        let mut tail = vec![0u8; size.min(1 << 16) as usize];
        let n = src
            .read_at(size - tail.len() as u64, &mut tail)
            .unwrap_or(0);
        self.marks[i].hasher.update(&tail[..n]);
        self.marks[i].hasher.update(&size.to_le_bytes());
        self.readers[i] = Reader::Ended;
        if let Err(kind) = self.session.archive(&mut self.corpus, i, src) {
            self.not_rollout_data(i, &kind);
            return;
        }
        if let Some(original) = self.repeated(i) {
            self.take_back(i, original);
            return;
        }
        self.session.end_file(&mut self.corpus, i);
    }

    /// Ends a file: a last line without a line break is read now, and a buffered document is
    /// converted.
    pub fn end_file(&mut self, file: FileId) {
        self.end_file_with(file, None);
    }

    /// [`Ingest::end_file`], with the file's document prepared ahead from its bytes.
    fn end_file_with(&mut self, file: FileId, document: Option<whole::PreparedDocument>) {
        let i = file.index();
        if i >= self.readers.len() {
            return;
        }
        if let Reader::Detecting(head) = &self.readers[i] {
            // A file shorter than the probe has not been looked at yet.
            if head.len() < PROBE && self.skip_if_binary(file) {
                if !matches!(self.readers[i], Reader::Archive(_)) {
                    self.readers[i] = Reader::Ended;
                    return;
                }
            } else {
                self.detect(file, true);
            }
        }
        if matches!(self.readers[i], Reader::Ended) {
            return;
        }
        if let Some(original) = self.repeated(i) {
            self.take_back(i, original);
            return;
        }
        match std::mem::replace(&mut self.readers[i], Reader::Ended) {
            Reader::Lines {
                mut splitter,
                format,
            } => {
                let (corpus, session) = (&mut self.corpus, &mut self.session);
                splitter.finish(&mut |line| accept_line(corpus, session, file, format, line, None));
                let info = &mut corpus.files[i];
                info.bytes = splitter.bytes();
                info.lines = splitter.lines();
                // A reader may hold a line until it knows whether more follow.
                self.session.end_stream(&mut self.corpus, i, format);
            }
            Reader::Document(bytes) => {
                let info = &mut self.corpus.files[i];
                info.bytes = bytes.len() as u64;
                info.lines = match &document {
                    Some(d) => d.lines,
                    None => count_lines(&bytes),
                };
                self.session.document(&mut self.corpus, i, &bytes, document);
            }
            Reader::Stream(format) => self.session.end_stream(&mut self.corpus, i, format),
            Reader::Archive(bytes) => {
                self.corpus.files[i].bytes = bytes.len() as u64;
                if let Err(kind) = self.session.archive(&mut self.corpus, i, &mut &bytes[..]) {
                    self.not_rollout_data(i, &kind);
                    return;
                }
            }
            Reader::Detecting(_) | Reader::Ended => return,
            Reader::Skipped => {
                self.readers[i] = Reader::Ended;
                return;
            }
        }
        self.session.end_file(&mut self.corpus, i);
    }

    /// The earlier, counted file with the same bytes and options as file `i`, which has just
    /// ended. Files are told apart by a 128-bit hash of their bytes and their length; an empty
    /// file repeats nothing.
    fn repeated(&mut self, i: usize) -> Option<usize> {
        let mark = &self.marks[i];
        let digest = mark.digest.unwrap_or_else(|| mark.hasher.digest128());
        let bytes = self.corpus.files[i].bytes;
        // The earliest such file: the files holding this digest, in any order (files may end
        // out of order), the smallest index before `i` that matches.
        let found = (bytes > 0)
            .then(|| {
                self.by_digest
                    .get(&digest)?
                    .iter()
                    .map(|&j| j as usize)
                    .filter(|&j| {
                        j < i
                            && self.corpus.files[j].bytes == bytes
                            && self.session.options(j) == self.session.options(i)
                    })
                    .min()
            })
            .flatten();
        if found.is_none() {
            self.by_digest.entry(digest).or_default().push(i as u32);
        }
        found
    }

    /// Takes a repeated file's rollouts and diagnostics back out of the corpus and says so.
    /// Files are read one after another, so what the file added is what followed its mark; if
    /// another file's rollouts are interleaved (files fed in parallel), nothing is taken back
    /// and the message says the file was counted twice.
    fn take_back(&mut self, i: usize, original: usize) {
        let mark = &self.marks[i];
        let own = |r: &Rollout| r.source.file as usize == i;
        let name = self.corpus.files[i].name.clone();
        let original_name = self.corpus.files[original].name.clone();
        let separable = self.corpus.rollouts[mark.rollouts..].iter().all(own)
            && self.corpus.diagnostics[mark.diagnostics..]
                .iter()
                .all(|d| d.file == name);
        let message = if separable {
            self.corpus.rollouts.truncate(mark.rollouts);
            self.corpus.diagnostics.truncate(mark.diagnostics);
            self.corpus.diagnostics_total = mark.diagnostics_total;
            let (rollouts, converted) = (mark.rollouts, mark.converted);
            self.session.forget_file(i, original, rollouts, converted);
            let info = &mut self.corpus.files[i];
            info.rollouts = 0;
            info.errors = 0;
            info.repeats = Some(original as u32);
            if original_name == name {
                "given twice: already loaded, not counted again".to_string()
            } else {
                format!(
                    "the same bytes as {original_name}, which is already loaded: not counted \
                     again"
                )
            }
        } else {
            format!(
                "the same bytes as {original_name}: its rollouts are counted twice (read files \
                 one after another to have repeats left out)"
            )
        };
        self.readers[i] = Reader::Ended;
        self.corpus.push_diagnostic(crate::rollout::Diagnostic {
            file: name,
            line: None,
            message,
        });
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
        // A condition's runs merge only when every file feeding it asks for it.
        let mut keep_apart = vec![false; self.corpus.conditions.len()];
        for r in &self.corpus.rollouts {
            if !self.session.options(r.source.file as usize).merge_runs {
                keep_apart[r.condition as usize] = true;
            }
        }
        self.corpus.split_runs(
            |c| !keep_apart[c as usize],
            crate::formats::runs::run_labels,
        );
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
    read_files_with(files, &ImportOptions::default())
}

/// [`read_files`] with the same import options for every file.
pub fn read_files_with<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    options: &ImportOptions,
) -> Corpus {
    let mut ingest = Ingest::new();
    for (name, bytes) in files {
        let f = ingest.begin_file_with(name, options.clone());
        ingest.push(f, bytes);
        ingest.end_file(f);
    }
    ingest.finish()
}

/// A line of a chunk read in parallel: its bytes are `range` of the chunk, or of the copies of
/// lines that are not in the chunk (`copied`).
enum Pending {
    Text {
        number: u64,
        offset: u64,
        copied: bool,
        range: std::ops::Range<usize>,
    },
    TooLong {
        number: u64,
        offset: u64,
        len: u64,
    },
}

impl Pending {
    fn line<'a>(&self, chunk: &'a [u8], copies: &'a [u8]) -> Line<'a> {
        match self {
            Pending::Text {
                number,
                offset,
                copied,
                range,
            } => Line::Text {
                number: *number,
                offset: *offset,
                bytes: &(if *copied { copies } else { chunk })[range.clone()],
            },
            &Pending::TooLong {
                number,
                offset,
                len,
            } => Line::TooLong {
                number,
                offset,
                len,
            },
        }
    }
}

/// The lines completed by `chunk`, their context-free readings computed on several threads, then
/// each taken in line order by [`accept_line`]; see [`ParallelParse`].
fn accept_lines_parallel(
    corpus: &mut Corpus,
    session: &mut Session,
    file: FileId,
    splitter: &mut LineSplitter,
    chunk: &[u8],
    group: Option<usize>,
) {
    // Lines are read where they lie in the chunk, not copied: memory stays what the single-
    // threaded path takes. The line begun in an earlier chunk (held by the splitter, possibly
    // long) comes first and is taken at once, on this thread; a line outside the chunk after a
    // pending one (none in practice) is copied.
    let chunk_at = chunk.as_ptr() as usize;
    let mut copies = Vec::new();
    let mut lines = Vec::new();
    splitter.push(chunk, &mut |line| {
        if let Line::Text {
            number,
            offset,
            bytes,
        } = line
        {
            let at = (bytes.as_ptr() as usize).wrapping_sub(chunk_at);
            if at <= chunk.len() && bytes.len() <= chunk.len() - at {
                lines.push(Pending::Text {
                    number,
                    offset,
                    copied: false,
                    range: at..at + bytes.len(),
                });
                return;
            }
            if !lines.is_empty() {
                let start = copies.len();
                copies.extend_from_slice(bytes);
                lines.push(Pending::Text {
                    number,
                    offset,
                    copied: true,
                    range: start..copies.len(),
                });
                return;
            }
        }
        match line {
            Line::TooLong {
                number,
                offset,
                len,
            } if !lines.is_empty() => lines.push(Pending::TooLong {
                number,
                offset,
                len,
            }),
            line => accept_line(corpus, session, file, Format::Canonical, line, None),
        }
    });
    // Groups of whole lines, of about `group` bytes each: a few per thread, so a slow group
    // does not leave the other threads idle.
    let group = group
        .unwrap_or(chunk.len() / (4 * crate::parallel::threads()).max(1))
        .max(1);
    let mut groups = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (k, line) in lines.iter().enumerate() {
        if let Pending::Text { range, .. } = line {
            bytes += range.len() + 1;
        }
        if bytes >= group {
            groups.push(start..k + 1);
            (start, bytes) = (k + 1, 0);
        }
    }
    if start < lines.len() {
        groups.push(start..lines.len());
    }
    // The pool prepares the groups while this thread takes their lines in order as soon as
    // each group is ready.
    let mut at = 0;
    let prepare = |g: &std::ops::Range<usize>| {
        lines[g.clone()]
            .iter()
            .map(|line| match line.line(chunk, &copies) {
                Line::Text { bytes, .. } if !bytes.iter().all(u8::is_ascii_whitespace) => {
                    crate::formats::canonical::prepare_line(bytes)
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    crate::parallel::map_each(&groups, prepare, |prepared| {
        for prepared in prepared {
            let line = lines[at].line(chunk, &copies);
            accept_line(corpus, session, file, Format::Canonical, line, prepared);
            at += 1;
        }
    });
}

fn accept_line(
    corpus: &mut Corpus,
    session: &mut Session,
    file: FileId,
    format: Format,
    line: Line<'_>,
    prepared: Option<crate::formats::canonical::Prepared>,
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
                    framing::MAX_LINE_BYTES >> 20
                ),
            });
            return;
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let source = crate::rollout::Source {
        file: file.0,
        line: number,
        offset,
        len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
    };
    session.line(corpus, format, source, bytes, prepared);
}
