//! Archives and compressed files as containers: a `.zip`, `.tar`, `.tar.gz`/`.tgz`,
//! `.tar.zst`, or a single `.gz`/`.zst` file is not a format but a folder in one file. Its
//! members go through the same path as a folder's files — each member a file of the ingest
//! named `<archive>/<member path>`, so run grouping, names, repeats, crash policy and notices
//! are the folder's — and nothing is written to disk.
//!
//! - Recognised by their bytes ([`Container::of`]), never by their names. A zip that is an
//!   Inspect `.eval` log (a `header.json`, `_journal/start.json` or `samples/` entry) stays one:
//!   [`Ingest::read_container`] declines it and the caller reads it as a log.
//! - Which members are read is the folder rule: `.json` and `.jsonl` names (hidden ones, a
//!   component starting with `.` or `__MACOSX`, left out); members whose bytes are an Inspect
//!   log or an archive are read too, an archive inside an archive one level deep. Every other
//!   member (code, notebooks, CSV, text, images) is counted and skipped in one note.
//! - tar streams are decompressed as a stream: the archive is never whole in memory, and a
//!   member is pushed to the ingest chunk by chunk. Zip members are read by random access (the
//!   CLI's file, the browser's `File` slices), one at a time.
//! - Hostile input: a member or stream inflating past [`MAX_RATIO`]× its compressed size (past
//!   [`RATIO_FROM`] bytes) or past [`MAX_MEMBER_BYTES`] is cut with an error naming it; a
//!   truncated archive keeps the members before the cut and says where it broke; a corrupt zip
//!   member is rejected alone; links, devices and folders in a tar are ignored; `..` and
//!   absolute member paths only name files (nothing is extracted).

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

use super::{path_order, Ingest, PreparedFile, ZIP_MAGIC};
use crate::formats::inspect::archive::{
    inflate_record, read_record, Archive, Entry, MAX_ENTRY_BYTES,
};
use crate::formats::{ImportOptions, RandomAccess};
use crate::rollout::Diagnostic;

mod stream;
pub use stream::{open_decoder, stream_limit, StreamSteps, READ};

pub const GZIP_MAGIC: &[u8] = b"\x1f\x8b";
pub const ZSTD_MAGIC: &[u8] = b"\x28\xb5\x2f\xfd";
/// Bytes enough to tell every kind (a tar header's `ustar` magic is at 257).
pub const HEAD: usize = 512;
/// A decompressed member or stream may grow to this many times the compressed bytes read…
pub const MAX_RATIO: u64 = 200;
/// …once it is past this size (small members of repeated text compress better than that).
pub const RATIO_FROM: u64 = 64 << 20;
/// The most bytes one member (or a single compressed file) may decompress to.
pub const MAX_MEMBER_BYTES: u64 = 8 << 30;
/// The most bytes an archive inside an archive (or an Inspect log inside one) may hold: it is
/// buffered to be read by random access.
pub const MAX_NESTED_BYTES: u64 = 1 << 30;

/// What kind of container a file's first bytes say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    Zip,
    Gzip,
    Zstd,
    Tar,
}

impl Container {
    /// From a file's first [`HEAD`] bytes (fewer for a short file).
    pub fn of(head: &[u8]) -> Option<Container> {
        if head.starts_with(ZIP_MAGIC) {
            Some(Container::Zip)
        } else if head.starts_with(GZIP_MAGIC) {
            Some(Container::Gzip)
        } else if head.starts_with(ZSTD_MAGIC) {
            Some(Container::Zstd)
        } else if head.get(257..262) == Some(b"ustar") {
            Some(Container::Tar)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Container::Zip => "zip archive",
            Container::Gzip => "gzip file",
            Container::Zstd => "zstd file",
            Container::Tar => "tar archive",
        }
    }
}

/// How far reading an archive has come, for a progress line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ArchiveProgress {
    /// Members read (run data) so far.
    pub members: u64,
    /// Bytes of the archive read.
    pub read: u64,
    /// Bytes decompressed.
    pub decompressed: u64,
}

/// A [`RandomAccess`] read front to back, [`Sequential::BLOCK`] bytes at a time: decoders
/// and the tar framing ask for a few KiB (a tar header is 512 bytes), and each read of a
/// browser file is a round trip to the browser's process of about a millisecond whatever its
/// size — a `.tar.gz` of 57 MB cost 2.3 s of such reads in 32 KiB pieces; reading the 113 MB
/// leaderboard `.zip` whole took 0.27-0.35 s in 1 MiB reads, 0.16-0.24 s in 4 MiB ones.
pub struct Sequential<S> {
    src: S,
    /// Where the next read of `src` starts.
    pos: u64,
    /// Bytes read ahead, `buf[at..]` not yet handed out.
    buf: Vec<u8>,
    at: usize,
    /// Bytes handed out so far (what the decoder above has consumed).
    read: Rc<Cell<u64>>,
}

impl<S: RandomAccess> Sequential<S> {
    const BLOCK: usize = 4 << 20;

    pub fn new(src: S, read: Rc<Cell<u64>>) -> Sequential<S> {
        Sequential {
            src,
            pos: 0,
            buf: Vec::new(),
            at: 0,
            read,
        }
    }

    fn handed(&mut self, n: usize) -> usize {
        self.read.set(self.read.get() + n as u64);
        n
    }
}

impl<S: RandomAccess> Read for Sequential<S> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.buf.len() {
            if out.len() >= Self::BLOCK {
                // A large read goes straight to the caller.
                let n = self.src.read_at(self.pos, out)?;
                self.pos += n as u64;
                return Ok(self.handed(n));
            }
            self.buf.resize(Self::BLOCK, 0);
            let n = self.src.read_at(self.pos, &mut self.buf)?;
            self.buf.truncate(n);
            self.pos += n as u64;
            self.at = 0;
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(self.handed(n))
    }
}

/// A decompressed stream that stops with an error past its limit ([`stream_limit`]): what
/// reading members back decodes through, so it gives the bytes reading pushed.
struct Guarded<R> {
    inner: R,
    out: u64,
    limit: u64,
}

impl<R: Read> Read for Guarded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out += n as u64;
        if self.out > self.limit {
            return Err(bomb(format!(
                "it decompresses to more than {} MiB (a decompression bomb?)",
                self.limit >> 20
            )));
        }
        Ok(n)
    }
}

fn bomb(message: String) -> io::Error {
    io::Error::other(message)
}

/// Reads to fill `buf` (fewer bytes only at the end).
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Whether a zip is an Inspect `.eval` log rather than a container.
fn is_inspect_log(zip: &Archive<'_>) -> bool {
    zip.entries.iter().any(|e| {
        e.name == "header.json" || e.name == "_journal/start.json" || e.name.starts_with("samples/")
    })
}

/// A member path as a file name: no empty, `.` or `..` components, no leading `/`.
pub(super) fn clean(path: &str) -> String {
    crate::formats::path::components(path)
        .filter(|c| *c != "." && *c != "..")
        .collect::<Vec<_>>()
        .join("/")
}

/// Hidden members (`.DS_Store`, `.git/…`, macOS's `__MACOSX/` forks) are never run data.
fn hidden(path: &str) -> bool {
    path.split('/')
        .any(|c| c.starts_with('.') || c == "__MACOSX")
}

/// The folder rule: `.json` and `.jsonl` names are read.
fn run_data_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".json") || lower.ends_with(".jsonl")
}

/// Names that may hold an archive or an Inspect log, so their bytes are looked at.
fn maybe_container_name(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".zip", ".eval", ".tar", ".tgz", ".gz", ".zst", ".tzst"]
        .iter()
        .any(|x| lower.ends_with(x))
}

/// The name of a single compressed file's content: `runs.jsonl.gz` → `runs.jsonl`.
pub(super) fn without_compression_suffix(name: &str) -> String {
    for x in [".gz", ".zst", ".gzip", ".zstd"] {
        if name.len() > x.len() && name.to_ascii_lowercase().ends_with(x) {
            return name[..name.len() - x.len()].to_string();
        }
    }
    name.to_string()
}

/// A zip member to read: its name as a file of the ingest, its entry, and whether the table of
/// contents already says it is a decompression bomb.
struct ZipMember {
    member: String,
    entry: Entry,
    bomb: bool,
}

/// A zip's members to read, in the order a folder's files are read ([`path_order`]); what is not read is
/// decided from the table of contents alone (`skipped` counts what is not run data).
fn zip_plan(name: &str, zip: &Archive<'_>, skipped: &mut u64) -> Vec<ZipMember> {
    // The entries' places sorted, not the entries: a zip of a folder has tens of thousands,
    // and the browser sorts them before its pool can start (stable: duplicate names keep the
    // table's order).
    let mut order: Vec<usize> = (0..zip.entries.len()).collect();
    order.sort_by(|&a, &b| path_order(&zip.entries[a].name, &zip.entries[b].name));
    let mut members = Vec::new();
    for entry in order.into_iter().map(|k| &zip.entries[k]) {
        if entry.name.ends_with('/') {
            continue;
        }
        let path = clean(&entry.name);
        if path.is_empty()
            || hidden(&path)
            || !(run_data_name(&path) || maybe_container_name(&path))
        {
            *skipped += u64::from(!path.is_empty());
            continue;
        }
        let bomb = entry.size > RATIO_FROM && entry.size > MAX_RATIO * entry.compressed_size.max(1);
        members.push(ZipMember {
            member: format!("{name}/{path}"),
            entry: entry.clone(),
            bomb,
        });
    }
    members
}

/// A zip container being read member by member ([`Ingest::begin_zip`]): the caller may
/// inflate the members [`ZipSteps::ahead`] names elsewhere, with [`inflate_member`], and hands
/// each to [`Ingest::zip_step`] in turn; [`Ingest::end_zip`] ends it. The corpus is the one
/// [`Ingest::read_container`] gives.
pub struct ZipSteps {
    name: String,
    options: ImportOptions,
    members: Vec<ZipMember>,
    next: usize,
    skipped: u64,
    progress: ArchiveProgress,
    outer: Option<String>,
}

/// Where one zip member lies in the archive and how it inflates: all a worker needs to inflate
/// it alone ([`inflate_member`]). `offset..offset + len` is the record as the table of contents
/// suggests it (a longer local header is read on).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemberRecord {
    /// The byte range of its local record in the archive.
    pub offset: u64,
    pub len: u64,
    entry: Entry,
}

impl ZipSteps {
    /// Members to push in all.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Member `k`'s record when it may be inflated ahead, elsewhere: it is to be read (the
    /// table of contents does not refuse it) and small ([`WHOLE_MEMBER_BYTES`] at most).
    pub fn ahead(&self, k: usize) -> Option<MemberRecord> {
        let m = self.members.get(k)?;
        (!m.bomb && m.entry.size <= WHOLE_MEMBER_BYTES).then(|| MemberRecord {
            offset: m.entry.header_start,
            len: m.entry.record_guess(),
            entry: m.entry.clone(),
        })
    }
}

/// A member's bytes, its record read through `read_at` (offset, buffer → bytes read) from the
/// archive: capped and CRC-checked as [`Ingest::zip_step`] would, on any thread or worker.
pub fn inflate_member(
    record: &MemberRecord,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<usize>,
) -> Result<Vec<u8>, String> {
    inflate_entry(&record.entry, read_at)
}

/// An entry's bytes, its record read through `read_at`: every path that inflates a member.
pub(super) fn inflate_entry(
    entry: &Entry,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<usize>,
) -> Result<Vec<u8>, String> {
    let record = read_record(read_at, entry)?;
    inflate_record(entry, &record, MAX_ENTRY_BYTES)
}

/// Zip members inflated ahead of the one being pushed (each at most [`WHOLE_MEMBER_BYTES`]).
const ZIP_AHEAD: usize = 32;

/// Members up to this size are read whole and handed to the [`MemberSink`] (the CLI prepares
/// them on its thread pool, as it does a folder's small files); larger ones are streamed into
/// the ingest.
pub const WHOLE_MEMBER_BYTES: u64 = 1 << 20;

/// Where a container's small members go. Every member reaches the ingest in the archive's
/// order: before anything else is pushed (a streamed member, an archive inside), `flush` must
/// have pushed every member handed over so far.
pub trait MemberSink {
    /// A member read whole, to be read as file `name` with `options`.
    fn whole(&mut self, ingest: &mut Ingest, name: String, options: &ImportOptions, bytes: Vec<u8>);
    /// Pushes what is pending, in order.
    fn flush(&mut self, ingest: &mut Ingest);
}

/// Each member pushed as it comes (the browser's worker; tests).
pub struct InOrder;

impl MemberSink for InOrder {
    fn whole(
        &mut self,
        ingest: &mut Ingest,
        name: String,
        options: &ImportOptions,
        bytes: Vec<u8>,
    ) {
        let id = ingest.begin_file_with(&name, options.clone());
        for chunk in bytes.chunks(1 << 20) {
            ingest.push(id, chunk);
        }
        ingest.end_file(id);
    }

    fn flush(&mut self, _: &mut Ingest) {}
}

/// A zip member inflated elsewhere ([`inflate_member`]): its bytes, and what was computed from
/// them there for the ingest ([`crate::ingest::whole::prepare_encoded`]), if anything.
pub struct Inflated {
    pub bytes: Vec<u8>,
    pub prepared: Option<Vec<u8>>,
}

/// One member pushed with its compact preparation, when it is read whole as a file (a nested
/// archive or a member too big to read whole does not use it).
struct WithEncoded(Option<Vec<u8>>);

impl MemberSink for WithEncoded {
    fn whole(
        &mut self,
        ingest: &mut Ingest,
        name: String,
        options: &ImportOptions,
        bytes: Vec<u8>,
    ) {
        let prepared = PreparedFile::with_encoded(bytes, self.0.take().as_deref());
        ingest.push_whole_file(&name, options.clone(), prepared);
    }

    fn flush(&mut self, _: &mut Ingest) {}
}

/// What one container read: for its note and the progress line.
struct Reading<'s> {
    skipped: u64,
    progress: ArchiveProgress,
    sink: &'s mut dyn MemberSink,
}

impl Ingest {
    /// Reads `src`, named `name`, as a container if its bytes say it is one (see the module
    /// documentation): every member a file of the ingest read with `options`. Returns false,
    /// reading nothing, when it is not a container or is a zip that is an Inspect log (read it
    /// as a file then). `on_progress` is called after each member.
    pub fn read_container(
        &mut self,
        name: &str,
        options: &ImportOptions,
        src: &mut dyn RandomAccess,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) -> bool {
        self.read_container_into(name, options, src, &mut InOrder, on_progress)
    }

    /// [`Ingest::read_container`], its small members handed to `sink`.
    pub fn read_container_into(
        &mut self,
        name: &str,
        options: &ImportOptions,
        src: &mut dyn RandomAccess,
        sink: &mut dyn MemberSink,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) -> bool {
        let mut head = [0u8; HEAD];
        let n = src.read_at(0, &mut head).unwrap_or(0);
        let Some(kind) = Container::of(&head[..n]) else {
            return false;
        };
        let mut reading = Reading {
            skipped: 0,
            progress: ArchiveProgress::default(),
            sink,
        };
        let outer = self.archive.replace(name.to_string());
        let read = match kind {
            Container::Zip => self.zip(name, options, src, 0, &mut reading, on_progress),
            _ => {
                let compressed = src.size();
                let consumed = Rc::new(Cell::new(0));
                let mut seq = Sequential::new(src, consumed.clone());
                self.stream(
                    name,
                    options,
                    kind,
                    &mut seq,
                    &consumed,
                    compressed,
                    0,
                    &mut reading,
                    on_progress,
                );
                true
            }
        };
        reading.sink.flush(self);
        self.end_container(name, outer, if read { reading.skipped } else { 0 });
        read
    }

    /// The container's reading is over: the outer archive (if any) again, and the note of its
    /// members that are not run data.
    fn end_container(&mut self, name: &str, outer: Option<String>, skipped: u64) {
        self.archive = outer;
        if skipped > 0 {
            self.corpus.notes.push(format!(
                "{name}: {skipped} members that are not run data (code, notebooks, CSV, text, \
                 images, …) skipped"
            ));
        }
    }

    /// Begins reading a zip container member by member, for a caller that inflates members
    /// elsewhere (the browser's pool workers; [`ZipSteps`]). `None`, reading nothing, when
    /// `src` is not a zip container (another kind, or an Inspect log: read it as usual then).
    pub fn begin_zip(
        &mut self,
        name: &str,
        options: &ImportOptions,
        src: &mut dyn RandomAccess,
    ) -> Option<ZipSteps> {
        let mut head = [0u8; HEAD];
        let n = src.read_at(0, &mut head).unwrap_or(0);
        if Container::of(&head[..n]) != Some(Container::Zip) {
            return None;
        }
        let mut skipped = 0;
        let members = match Archive::open(src) {
            Ok(zip) if is_inspect_log(&zip) => return None,
            Ok(zip) => zip_plan(name, &zip, &mut skipped),
            Err(e) => {
                self.archive_problem(name, format!("this zip archive cannot be read: {e}"));
                Vec::new()
            }
        };
        let outer = self.archive.replace(name.to_string());
        Some(ZipSteps {
            name: name.to_string(),
            options: options.clone(),
            members,
            next: 0,
            skipped,
            progress: ArchiveProgress::default(),
            outer,
        })
    }

    /// Pushes the next member of `steps`: `inflated` its bytes as [`inflate_member`] gave them,
    /// or `None` to read and inflate it here from `src`.
    pub fn zip_step(
        &mut self,
        steps: &mut ZipSteps,
        src: &mut dyn RandomAccess,
        inflated: Option<Result<Inflated, String>>,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        let Some(m) = steps.members.get(steps.next) else {
            return;
        };
        steps.next += 1;
        let mut sink = WithEncoded(None);
        let bytes = (!m.bomb).then(|| match inflated {
            Some(inflated) => inflated.map(|i| {
                sink.0 = i.prepared;
                i.bytes
            }),
            None => inflate_entry(&m.entry, &mut |at, buf| src.read_at(at, buf)),
        });
        let mut reading = Reading {
            skipped: steps.skipped,
            progress: steps.progress,
            sink: &mut sink,
        };
        self.zip_member(m, bytes, &steps.options, 0, &mut reading, on_progress);
        steps.skipped = reading.skipped;
        steps.progress = reading.progress;
    }

    /// Ends reading `steps` (pushing what was not pushed yet, read here from `src`).
    pub fn end_zip(&mut self, mut steps: ZipSteps, src: &mut dyn RandomAccess) {
        while steps.next < steps.members.len() {
            self.zip_step(&mut steps, src, None, &mut |_| {});
        }
        self.end_container(&steps.name, steps.outer, steps.skipped);
    }

    /// A problem of the archive or a member, said after the members before it were pushed (so
    /// the diagnostics' order does not depend on the sink).
    fn problem(&mut self, reading: &mut Reading<'_>, file: &str, message: String) {
        reading.sink.flush(self);
        self.archive_problem(file, message);
    }

    fn archive_problem(&mut self, file: &str, message: String) {
        self.corpus.push_diagnostic(Diagnostic {
            file: file.to_string(),
            line: None,
            message,
        });
    }

    /// A zip container; false when it is an Inspect log (nothing read).
    fn zip(
        &mut self,
        name: &str,
        options: &ImportOptions,
        src: &mut dyn RandomAccess,
        depth: u32,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) -> bool {
        let mut zip = match Archive::open(src) {
            Ok(z) => z,
            Err(e) => {
                self.problem(
                    reading,
                    name,
                    format!("this zip archive cannot be read: {e}"),
                );
                return true;
            }
        };
        if is_inspect_log(&zip) {
            return false;
        }
        zip.cap = MAX_ENTRY_BYTES;
        let members = zip_plan(name, &zip, &mut reading.skipped);
        // Members are independent: natively their records are read and inflated on the
        // thread pool, a window ahead of this thread, which pushes each in the archive's order
        // (so the corpus is the one-thread corpus); large members are inflated here, in turn.
        // A file that cannot be read from several threads (a browser `File`) is read in turn.
        let mut at = 0;
        let parallel = zip.with_concurrent(|shared| {
            let Some(shared) = shared else {
                return false;
            };
            let inflate = |m: &ZipMember| {
                inflate_entry(&m.entry, &mut |at, buf| shared.read_at_shared(at, buf))
            };
            let small = |m: &ZipMember| !m.bomb && m.entry.size <= WHOLE_MEMBER_BYTES;
            crate::parallel::map_each_ahead(
                &members,
                ZIP_AHEAD,
                |m| small(m).then(|| inflate(m)),
                |ahead| {
                    let m = &members[at];
                    at += 1;
                    let bytes = (!m.bomb).then(|| ahead.unwrap_or_else(|| inflate(m)));
                    self.zip_member(m, bytes, options, depth, reading, on_progress);
                    true
                },
            );
            true
        });
        if !parallel {
            for m in &members {
                let bytes = (!m.bomb).then(|| zip.read(&m.entry));
                self.zip_member(m, bytes, options, depth, reading, on_progress);
            }
        }
        true
    }

    /// One member of a zip, its bytes inflated (`None`: refused from the table of contents).
    fn zip_member(
        &mut self,
        m: &ZipMember,
        bytes: Option<Result<Vec<u8>, String>>,
        options: &ImportOptions,
        depth: u32,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        match bytes {
            None => self.problem(
                reading,
                &m.member,
                format!(
                    "this archive member was not read: it decompresses to {} MiB, more than \
                     {MAX_RATIO} times its compressed size (a decompression bomb?)",
                    m.entry.size >> 20
                ),
            ),
            Some(Ok(bytes)) => {
                reading.progress.decompressed += bytes.len() as u64;
                self.member_bytes(&m.member, options, bytes, depth, reading, on_progress);
            }
            Some(Err(e)) => self.problem(
                reading,
                &m.member,
                format!("this archive member was not read: {e}"),
            ),
        }
        if depth == 0 {
            reading.progress.read += m.entry.record_guess();
        }
        on_progress(reading.progress);
    }

    /// A member held in memory: an archive or Inspect log inside the archive, or a file.
    fn member_bytes(
        &mut self,
        member: &str,
        options: &ImportOptions,
        bytes: Vec<u8>,
        depth: u32,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        let kind = Container::of(&bytes[..bytes.len().min(HEAD)]);
        if let Some(kind) = kind {
            reading.sink.flush(self);
            if kind == Container::Zip {
                let mut zip_src: &[u8] = &bytes;
                if let Ok(z) = Archive::open(&mut zip_src) {
                    if is_inspect_log(&z) {
                        let id = self.begin_file_with(member, options.clone());
                        self.read_archive(id, &mut &bytes[..]);
                        reading.progress.members += 1;
                        return;
                    }
                }
            }
            if depth >= 1 {
                self.problem(
                    reading,
                    member,
                    format!(
                        "a {} inside an archive inside an archive: not read (one level of \
                         archives inside archives is read)",
                        kind.name()
                    ),
                );
                return;
            }
            let mut inner: &[u8] = &bytes;
            match kind {
                Container::Zip => {
                    self.zip(member, options, &mut inner, depth + 1, reading, on_progress);
                }
                _ => {
                    let consumed = Rc::new(Cell::new(0));
                    let mut seq = Sequential::new(&mut inner, consumed.clone());
                    self.stream(
                        member,
                        options,
                        kind,
                        &mut seq,
                        &consumed,
                        bytes.len() as u64,
                        depth + 1,
                        reading,
                        on_progress,
                    );
                }
            }
            return;
        }
        if !run_data_name(member) {
            reading.skipped += 1;
            return;
        }
        reading.progress.members += 1;
        if bytes.len() as u64 <= WHOLE_MEMBER_BYTES {
            reading.sink.whole(self, member.to_string(), options, bytes);
            return;
        }
        reading.sink.flush(self);
        let id = self.begin_file_with(member, options.clone());
        for chunk in bytes.chunks(1 << 20) {
            self.push(id, chunk);
        }
        self.end_file(id);
    }
}

/// A member's path inside archive `archive`: its name without `<archive>/`, or without
/// `runs.zip/` for the members of a compressed archive `runs.zip.gz` (named by its content).
pub(super) fn member_path<'m>(archive: &str, member: &'m str) -> Option<&'m str> {
    let under = |prefix: &str| member.strip_prefix(prefix)?.strip_prefix('/');
    under(archive).or_else(|| under(&without_compression_suffix(archive)))
}

/// A gzip, zstd or tar stream of `compressed` bytes opened for reading: what its first bytes
/// say it holds (tar for a tar stream), and its decompressed bytes from the start, within the
/// limit reading applies ([`stream_limit`]).
pub(super) fn open_stream<'a>(
    kind: Container,
    src: impl Read + 'a,
    compressed: u64,
) -> Result<(Option<Container>, Box<dyn Read + 'a>), String> {
    // Boxed before the decoders see it: one copy of the gzip and zstd decoders in the
    // binary, not one per reader type (the worker's wasm is size-budgeted).
    let decoded = open_decoder(kind, Box::new(src))?;
    let mut guarded = Guarded {
        inner: decoded,
        out: 0,
        limit: stream_limit(compressed),
    };
    let mut head = vec![0u8; HEAD];
    let n = read_full(&mut guarded, &mut head).map_err(|e| e.to_string())?;
    head.truncate(n);
    let inner = if kind == Container::Tar {
        Some(Container::Tar)
    } else {
        Container::of(&head)
    };
    Ok((inner, Box::new(io::Cursor::new(head).chain(guarded))))
}
