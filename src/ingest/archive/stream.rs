//! A gzip, zstd or tar stream read as its decompressed bytes arrive, in pieces of any size:
//! from the decoders here (the CLI, the browser without a native decoder) or from elsewhere
//! (the browser's own `DecompressionStream`), with the same corpus either way.
//!
//! - The tar framing is read header by header on the bytes at hand: the extent of a header
//!   and of the pax or GNU records before it is measured here, then the `tar` crate reads
//!   that header (its checksum, paths, pax sizes) from those bytes alone, so a stream cut
//!   into pieces anywhere reads as the whole stream does.
//! - The size limit is decided by the compressed size as a whole ([`stream_limit`]), not by
//!   how far a decoder has read into its input at some moment, so every decoder cuts a bomb
//!   at the same decompressed byte.

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

use super::{
    clean, hidden, maybe_container_name, run_data_name, without_compression_suffix,
    ArchiveProgress, Container, MemberSink, Reading, Sequential, HEAD, MAX_MEMBER_BYTES,
    MAX_NESTED_BYTES, MAX_RATIO, RATIO_FROM, WHOLE_MEMBER_BYTES,
};
use crate::formats::{ImportOptions, RandomAccess};
use crate::ingest::{FileId, Ingest};

/// A tar block.
const BLOCK: usize = 512;
/// The most bytes one header with the pax and GNU long-name records before it may take.
const MAX_TAR_HEADERS: usize = 16 << 20;
/// The decoders' output is asked for in reads of this size; one read's output is what a
/// decoder may lose when it fails (see `Ingest::stream_from`).
pub const READ: usize = 1 << 20;

/// The most bytes a stream of `compressed` bytes may decompress to: [`MAX_RATIO`] times its
/// size, but always [`RATIO_FROM`] bytes and never more than [`MAX_MEMBER_BYTES`].
pub fn stream_limit(compressed: u64) -> u64 {
    MAX_RATIO
        .saturating_mul(compressed)
        .clamp(RATIO_FROM, MAX_MEMBER_BYTES)
}

fn over_limit(limit: u64, compressed: u64) -> String {
    if limit >= MAX_MEMBER_BYTES {
        format!(
            "it decompresses to more than {} MiB, the limit (a decompression bomb?)",
            limit >> 20
        )
    } else {
        format!(
            "it decompresses to more than {MAX_RATIO} times its compressed size (past {} MiB \
             from {} KiB: a decompression bomb?)",
            limit >> 20,
            compressed >> 10
        )
    }
}

/// A gzip or zstd decoder over `src` (a tar stream as it is).
pub fn open_decoder<'a>(
    kind: Container,
    src: Box<dyn Read + 'a>,
) -> Result<Box<dyn Read + 'a>, String> {
    Ok(match kind {
        Container::Gzip => Box::new(flate2::read::MultiGzDecoder::new(src)),
        Container::Zstd => {
            Box::new(ruzstd::decoding::StreamingDecoder::new(src).map_err(|e| e.to_string())?)
        }
        Container::Tar | Container::Zip => src,
    })
}

/// A stream being read: its decompressed bytes so far, and what they turned out to hold.
pub(super) struct Feed {
    name: String,
    options: ImportOptions,
    kind: Container,
    depth: u32,
    compressed: u64,
    limit: u64,
    out: u64,
    head: Vec<u8>,
    inner: Inner,
}

enum Inner {
    /// Its first [`HEAD`] bytes are not in yet.
    Head,
    Tar(Tar),
    /// An archive or Inspect log, compressed (`runs.zip.gz`): buffered, then read as a member
    /// (true: past [`MAX_NESTED_BYTES`], not read).
    Nested(Vec<u8>, bool),
    /// One compressed file (`runs.jsonl.gz`), streamed into the ingest.
    File(FileId),
    Ended,
}

impl Feed {
    pub(super) fn new(
        name: &str,
        options: &ImportOptions,
        kind: Container,
        depth: u32,
        compressed: u64,
    ) -> Feed {
        Feed {
            name: name.to_string(),
            options: options.clone(),
            kind,
            depth,
            compressed,
            limit: stream_limit(compressed),
            out: 0,
            head: Vec::new(),
            inner: Inner::Head,
        }
    }

    /// Nothing more it is given would be read (the tar archive ended, a limit was passed).
    fn done(&self) -> bool {
        match &self.inner {
            Inner::Ended | Inner::Nested(_, true) => true,
            Inner::Tar(t) => matches!(t.part, Part::Ended),
            _ => false,
        }
    }
}

/// A tar stream's framing: where the bytes at hand fall.
struct Tar {
    /// Bytes of a header not complete yet.
    buf: Vec<u8>,
    part: Part,
    /// The last regular file's path, to say where a damaged archive broke.
    last: Option<String>,
}

enum Part {
    Header,
    Data {
        into: Into,
        left: u64,
        pad: u64,
    },
    Pad(u64),
    /// Its end-of-archive block, or the damage that ends it: what follows is not read.
    Ended,
}

/// Where a member's bytes go.
enum Into {
    Skip,
    Whole(String, Vec<u8>),
    Pump(String, FileId),
    Nested(String, Vec<u8>, bool),
}

/// What the next header, measured in the bytes at hand, is.
enum Extent {
    /// More bytes are needed to tell.
    Need,
    /// The end-of-archive block.
    End,
    /// The header and the records before it take this many bytes.
    Header(usize),
    TooLong,
}

fn padded(size: u64) -> Option<u64> {
    size.checked_add(BLOCK as u64 - 1)
        .map(|s| s & !(BLOCK as u64 - 1))
}

/// How many bytes of `data` the `tar` crate reads for the next entry's header: GNU long
/// names and links and pax records (the crate folds them into the header after them), and a
/// GNU sparse header's extension blocks. A header the crate will refuse ends the extent, so
/// the crate says why.
fn extent(data: &[u8]) -> Extent {
    let mut pos = 0usize;
    loop {
        let Some(block) = data.get(pos..pos + BLOCK) else {
            return if pos > MAX_TAR_HEADERS {
                Extent::TooLong
            } else {
                Extent::Need
            };
        };
        if block.iter().all(|b| *b == 0) {
            return if pos == 0 {
                Extent::End
            } else {
                Extent::Header(pos + BLOCK)
            };
        }
        let header = tar::Header::from_byte_slice(block);
        let kind = header.entry_type();
        let recognised = header.as_gnu().is_some() || header.as_ustar().is_some();
        if recognised
            && (kind.is_gnu_longname() || kind.is_gnu_longlink() || kind.is_pax_local_extensions())
        {
            let Some(next) = header
                .entry_size()
                .ok()
                .and_then(padded)
                .and_then(|s| usize::try_from(s).ok())
                .and_then(|s| (pos + BLOCK).checked_add(s))
            else {
                return Extent::Header(pos + BLOCK);
            };
            if next > MAX_TAR_HEADERS {
                return Extent::TooLong;
            }
            pos = next;
            continue;
        }
        pos += BLOCK;
        let extended = kind.is_gnu_sparse() && header.as_gnu().is_some_and(|g| g.is_extended());
        if extended {
            // Each extension block says in its byte 504 whether another follows.
            loop {
                let Some(ext) = data.get(pos..pos + BLOCK) else {
                    return Extent::Need;
                };
                pos += BLOCK;
                if ext[504] == 0 {
                    break;
                }
            }
        }
        return Extent::Header(pos);
    }
}

/// An entry's header as the `tar` crate reads it from `bytes` (its extent).
struct Header {
    path: String,
    is_file: bool,
    /// Its data's bytes in the stream.
    size: u64,
}

fn read_header(bytes: &[u8]) -> io::Result<Header> {
    let mut archive = tar::Archive::new(bytes);
    let mut entries = archive.entries()?;
    let entry = match entries.next() {
        Some(entry) => entry?,
        None => return Err(io::Error::other("the archive ended inside a header")),
    };
    let header = entry.header();
    let size = if header.entry_type().is_gnu_sparse() {
        header.entry_size()?
    } else {
        entry.size()
    };
    Ok(Header {
        path: String::from_utf8_lossy(&entry.path_bytes()).into_owned(),
        is_file: header.entry_type().is_file(),
        size,
    })
}

/// A stream whose decompressed bytes the caller hands over ([`Ingest::begin_stream`]).
pub struct StreamSteps {
    feed: Feed,
    skipped: u64,
    progress: ArchiveProgress,
    outer: Option<String>,
}

impl StreamSteps {
    /// Nothing more it is given would be read: stop decompressing.
    pub fn done(&self) -> bool {
        self.feed.done()
    }
}

impl Ingest {
    /// Begins reading a stream of kind `kind` (gzip, zstd or tar: what
    /// [`Container::of`] said of its first bytes), `compressed` bytes long, named `name`, for
    /// a caller that decompresses it elsewhere and hands its bytes to
    /// [`Ingest::stream_step`] in order; [`Ingest::end_stream`] ends it. The corpus is the
    /// one [`Ingest::read_container`] gives.
    pub fn begin_stream(
        &mut self,
        name: &str,
        options: &ImportOptions,
        kind: Container,
        compressed: u64,
    ) -> StreamSteps {
        let outer = self.archive.replace(name.to_string());
        StreamSteps {
            feed: Feed::new(name, options, kind, 0, compressed),
            skipped: 0,
            progress: ArchiveProgress::default(),
            outer,
        }
    }

    /// The next decompressed bytes of `steps`; `read` is how many compressed bytes were read.
    /// Small members go to `sink` (which must be flushed by the end: [`Ingest::end_stream`]
    /// does).
    pub fn stream_step(
        &mut self,
        steps: &mut StreamSteps,
        bytes: &[u8],
        read: u64,
        sink: &mut dyn MemberSink,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        self.with_steps(steps, sink, |ingest, feed, reading| {
            ingest.stream_feed(feed, bytes, read, reading, on_progress)
        });
    }

    /// Decompresses the stream `steps` reads from `src` here, from its start, passing over its
    /// first `skip` decompressed bytes (those handed over already): what a caller whose own
    /// decoder failed does, so that the stream reads as it does here whatever that decoder
    /// managed. Returns the decoder's error, if any, for [`Ingest::end_stream`].
    ///
    /// Exact when the caller held back the last [`READ`] bytes its decoder gave until the
    /// decoder ended well: a decoder here that fails loses at most the output of its last
    /// read, so it always gets past what was handed over.
    pub fn stream_from(
        &mut self,
        steps: &mut StreamSteps,
        src: &mut dyn RandomAccess,
        skip: u64,
        sink: &mut dyn MemberSink,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) -> Option<String> {
        let consumed = Rc::new(Cell::new(0));
        let mut seq = Sequential::new(src, consumed.clone());
        self.with_steps(steps, sink, |ingest, feed, reading| {
            ingest.stream_decode(feed, &mut seq, &consumed, skip, reading, on_progress)
        })
    }

    /// Ends reading `steps` (`sink` flushed); `error` is why its decoder stopped, if it failed.
    pub fn end_stream(
        &mut self,
        mut steps: StreamSteps,
        error: Option<String>,
        sink: &mut dyn MemberSink,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        let read = steps.progress.read;
        self.with_steps(&mut steps, sink, |ingest, feed, reading| {
            ingest.stream_finish(feed, error, read, reading, on_progress);
            reading.sink.flush(ingest);
        });
        let name = steps.feed.name.clone();
        self.end_container(&name, steps.outer, steps.skipped);
    }

    fn with_steps<T>(
        &mut self,
        steps: &mut StreamSteps,
        sink: &mut dyn MemberSink,
        f: impl FnOnce(&mut Ingest, &mut Feed, &mut Reading<'_>) -> T,
    ) -> T {
        let mut reading = Reading {
            skipped: steps.skipped,
            progress: steps.progress,
            sink,
        };
        let out = f(self, &mut steps.feed, &mut reading);
        steps.skipped = reading.skipped;
        steps.progress = reading.progress;
        out
    }

    /// A gzip, zstd or tar stream (`kind`) read front to back from `src`, `compressed` bytes
    /// in all; `consumed` counts the compressed bytes read from it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn stream(
        &mut self,
        name: &str,
        options: &ImportOptions,
        kind: Container,
        src: &mut dyn Read,
        consumed: &Rc<Cell<u64>>,
        compressed: u64,
        depth: u32,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        let mut feed = Feed::new(name, options, kind, depth, compressed);
        let error = self.stream_decode(&mut feed, src, consumed, 0, reading, on_progress);
        self.stream_finish(&mut feed, error, consumed.get(), reading, on_progress);
    }

    /// Decodes `src` into `feed`, its first `skip` decompressed bytes passed over; the
    /// decoder's error, if it fails. The one loop every stream read here goes through.
    fn stream_decode(
        &mut self,
        feed: &mut Feed,
        src: &mut dyn Read,
        consumed: &Rc<Cell<u64>>,
        mut skip: u64,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) -> Option<String> {
        let mut decoder = match open_decoder(feed.kind, Box::new(src)) {
            Ok(d) => d,
            Err(e) => return Some(e),
        };
        let mut buf = vec![0u8; READ];
        loop {
            if feed.done() {
                return None;
            }
            match decoder.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => {
                    let past = (skip.min(n as u64)) as usize;
                    skip -= past as u64;
                    if past < n {
                        self.stream_feed(feed, &buf[past..n], consumed.get(), reading, on_progress);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Some(e.to_string()),
            }
        }
    }

    /// The next decompressed bytes of a stream, within its limit.
    fn stream_feed(
        &mut self,
        feed: &mut Feed,
        bytes: &[u8],
        read: u64,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        if matches!(feed.inner, Inner::Ended) {
            return;
        }
        reading.progress.read = read;
        let room = feed.limit - feed.out;
        let over = bytes.len() as u64 > room;
        let bytes = if over { &bytes[..room as usize] } else { bytes };
        feed.out += bytes.len() as u64;
        let mut bytes = bytes;
        if let Inner::Head = feed.inner {
            let n = (HEAD - feed.head.len()).min(bytes.len());
            feed.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if feed.head.len() == HEAD {
                self.stream_decide(feed, reading, on_progress);
            }
        }
        self.stream_take(feed, bytes, reading, on_progress);
        if over {
            let e = over_limit(feed.limit, feed.compressed);
            self.stream_finish(feed, Some(e), read, reading, on_progress);
        }
    }

    /// What the stream holds, told by its first bytes; those bytes then go there.
    fn stream_decide(
        &mut self,
        feed: &mut Feed,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        let holds = if feed.kind == Container::Tar {
            Some(Container::Tar)
        } else {
            Container::of(&feed.head)
        };
        feed.inner = match holds {
            Some(Container::Tar) => Inner::Tar(Tar {
                buf: Vec::new(),
                part: Part::Header,
                last: None,
            }),
            Some(_) => Inner::Nested(Vec::new(), false),
            None => {
                reading.sink.flush(self);
                let member = without_compression_suffix(&feed.name);
                Inner::File(self.begin_file_with(&member, feed.options.clone()))
            }
        };
        let head = std::mem::take(&mut feed.head);
        self.stream_take(feed, &head, reading, on_progress);
    }

    fn stream_take(
        &mut self,
        feed: &mut Feed,
        bytes: &[u8],
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        if bytes.is_empty() {
            return;
        }
        let Feed {
            name,
            options,
            depth,
            inner,
            ..
        } = feed;
        match inner {
            Inner::Tar(t) => self.tar_take(t, name, options, *depth, bytes, reading, on_progress),
            Inner::Nested(held, over) => {
                if *over || held.len() + bytes.len() > MAX_NESTED_BYTES as usize {
                    *over = true;
                    held.clear();
                } else {
                    held.extend_from_slice(bytes);
                }
            }
            Inner::File(id) => {
                reading.progress.decompressed += bytes.len() as u64;
                self.push(*id, bytes);
                on_progress(reading.progress);
            }
            Inner::Head | Inner::Ended => {}
        }
    }

    /// The stream ended (`error`: why its decoder stopped, or its limit).
    fn stream_finish(
        &mut self,
        feed: &mut Feed,
        error: Option<String>,
        read: u64,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        reading.progress.read = reading.progress.read.max(read);
        if let Inner::Head = feed.inner {
            if let Some(e) = error {
                feed.inner = Inner::Ended;
                let message = format!("this {} cannot be read: {e}", feed.kind.name());
                self.problem(reading, &feed.name, message);
                return;
            }
            self.stream_decide(feed, reading, on_progress);
        }
        let name = feed.name.clone();
        match std::mem::replace(&mut feed.inner, Inner::Ended) {
            Inner::Tar(t) => {
                let options = feed.options.clone();
                self.tar_end(t, &name, &options, error, reading, on_progress)
            }
            Inner::Nested(_, true) => self.problem(
                reading,
                &name,
                format!(
                    "it holds an archive of more than {} MiB: not read",
                    MAX_NESTED_BYTES >> 20
                ),
            ),
            Inner::Nested(bytes, false) => match error {
                Some(e) => self.problem(reading, &name, format!("not read: {e}")),
                None => {
                    let member = without_compression_suffix(&name);
                    let options = feed.options.clone();
                    self.member_bytes(&member, &options, bytes, feed.depth, reading, on_progress);
                }
            },
            Inner::File(id) => {
                if let Some(e) = error {
                    let message = format!(
                        "the {} is cut short or damaged after {} decompressed bytes ({e}); what \
                         came before was read",
                        feed.kind.name(),
                        self.bytes_read(id)
                    );
                    self.problem(reading, &name, message);
                }
                self.end_file(id);
                reading.progress.members += 1;
                on_progress(reading.progress);
            }
            Inner::Head | Inner::Ended => {}
        }
    }

    /// A tar stream's next bytes.
    #[allow(clippy::too_many_arguments)]
    fn tar_take(
        &mut self,
        t: &mut Tar,
        name: &str,
        options: &ImportOptions,
        depth: u32,
        bytes: &[u8],
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        // A header cut by the end of the last bytes is completed from the next in small
        // pieces (not by copying them all behind it); the rest is read where it lies.
        let mut rest = bytes;
        while !t.buf.is_empty() && !rest.is_empty() {
            let n = rest.len().min(64 << 10);
            let mut buf = std::mem::take(&mut t.buf);
            buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            let used = self.tar_drive(t, name, options, depth, &buf, reading, on_progress);
            if matches!(t.part, Part::Ended) {
                return;
            }
            buf.drain(..used);
            t.buf = buf;
        }
        if t.buf.is_empty() && !rest.is_empty() {
            let n = self.tar_drive(t, name, options, depth, rest, reading, on_progress);
            if !matches!(t.part, Part::Ended) {
                t.buf.extend_from_slice(&rest[n..]);
            }
        }
    }

    /// Reads what it can of `data`; returns how many bytes it took (the rest is an incomplete
    /// header, kept for the next bytes).
    #[allow(clippy::too_many_arguments)]
    fn tar_drive(
        &mut self,
        t: &mut Tar,
        name: &str,
        options: &ImportOptions,
        depth: u32,
        data: &[u8],
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) -> usize {
        let mut at = 0;
        loop {
            match &mut t.part {
                Part::Ended => return data.len(),
                Part::Header => {
                    let len = match extent(&data[at..]) {
                        Extent::Need => return at,
                        Extent::End => {
                            t.part = Part::Ended;
                            return data.len();
                        }
                        Extent::TooLong => {
                            let e = format!(
                                "a member's header records take more than {} MiB",
                                MAX_TAR_HEADERS >> 20
                            );
                            self.tar_broken(t, name, &e, reading);
                            return data.len();
                        }
                        Extent::Header(len) => len,
                    };
                    match read_header(&data[at..at + len]) {
                        Ok(header) => {
                            at += len;
                            self.tar_member(t, name, options, header, reading);
                            if let Part::Data { left: 0, .. } = t.part {
                                self.tar_member_end(t, options, depth, reading, on_progress);
                            }
                        }
                        Err(e) => {
                            self.tar_broken(t, name, &e.to_string(), reading);
                            return data.len();
                        }
                    }
                }
                Part::Data { into, left, .. } => {
                    let n = (*left).min((data.len() - at) as u64) as usize;
                    let chunk = &data[at..at + n];
                    at += n;
                    *left -= n as u64;
                    match into {
                        Into::Skip => {}
                        Into::Whole(_, bytes) => bytes.extend_from_slice(chunk),
                        Into::Nested(_, bytes, over) => {
                            if *over || bytes.len() + n > MAX_NESTED_BYTES as usize {
                                *over = true;
                                bytes.clear();
                            } else {
                                bytes.extend_from_slice(chunk);
                            }
                        }
                        Into::Pump(_, id) => {
                            if n > 0 {
                                let id = *id;
                                reading.progress.decompressed += n as u64;
                                self.push(id, chunk);
                                on_progress(reading.progress);
                            }
                        }
                    }
                    if matches!(t.part, Part::Data { left: 0, .. }) {
                        self.tar_member_end(t, options, depth, reading, on_progress);
                    } else {
                        return at;
                    }
                }
                Part::Pad(left) => {
                    let n = (*left).min((data.len() - at) as u64) as usize;
                    at += n;
                    *left -= n as u64;
                    if *left > 0 {
                        return at;
                    }
                    t.part = Part::Header;
                }
            }
        }
    }

    /// A member's header is read: where its bytes go.
    fn tar_member(
        &mut self,
        t: &mut Tar,
        name: &str,
        options: &ImportOptions,
        header: Header,
        reading: &mut Reading,
    ) {
        let pad = padded(header.size).map_or(0, |p| p - header.size);
        let into = if !header.is_file {
            // Links, devices, folders and FIFOs name nothing to read.
            Into::Skip
        } else {
            let path = clean(&header.path);
            t.last = Some(path.clone());
            let member = format!("{name}/{path}");
            if path.is_empty() || hidden(&path) {
                reading.skipped += u64::from(!path.is_empty());
                Into::Skip
            } else if run_data_name(&path) && header.size <= WHOLE_MEMBER_BYTES {
                Into::Whole(member, Vec::with_capacity(header.size as usize))
            } else if run_data_name(&path) {
                reading.sink.flush(self);
                let id = self.begin_file_with(&member, options.clone());
                Into::Pump(member, id)
            } else if maybe_container_name(&path) {
                Into::Nested(member, Vec::new(), false)
            } else {
                reading.skipped += 1;
                Into::Skip
            }
        };
        t.part = Part::Data {
            into,
            left: header.size,
            pad,
        };
    }

    /// A member's bytes are all in.
    fn tar_member_end(
        &mut self,
        t: &mut Tar,
        options: &ImportOptions,
        depth: u32,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        let Part::Data { into, pad, .. } = std::mem::replace(&mut t.part, Part::Header) else {
            return;
        };
        if pad > 0 {
            t.part = Part::Pad(pad);
        }
        match into {
            Into::Skip => return,
            Into::Whole(member, bytes) => {
                reading.progress.members += 1;
                reading.progress.decompressed += bytes.len() as u64;
                reading.sink.whole(self, member, options, bytes);
            }
            Into::Pump(_, id) => {
                self.end_file(id);
                reading.progress.members += 1;
            }
            Into::Nested(member, _, true) => self.problem(
                reading,
                &member,
                format!(
                    "an archive member of more than {} MiB: not read",
                    MAX_NESTED_BYTES >> 20
                ),
            ),
            Into::Nested(member, bytes, false) => {
                reading.progress.decompressed += bytes.len() as u64;
                self.member_bytes(&member, options, bytes, depth, reading, on_progress);
            }
        }
        on_progress(reading.progress);
    }

    /// The tar framing is damaged (or cut) where a header was due: the members before were
    /// read, nothing after is.
    fn tar_broken(&mut self, t: &mut Tar, name: &str, e: &str, reading: &mut Reading) {
        t.part = Part::Ended;
        t.buf = Vec::new();
        let after = t.last.as_deref().map_or_else(
            || "before its first member".to_string(),
            |m| format!("after member {m}"),
        );
        self.problem(
            reading,
            name,
            format!(
                "the tar archive is cut short or damaged {after} ({e}); the members before were \
                 read"
            ),
        );
    }

    /// The tar stream ended (`error`: why its decoder stopped, or its limit).
    fn tar_end(
        &mut self,
        mut t: Tar,
        name: &str,
        options: &ImportOptions,
        error: Option<String>,
        reading: &mut Reading,
        on_progress: &mut dyn FnMut(ArchiveProgress),
    ) {
        let cut = || {
            error
                .clone()
                .unwrap_or_else(|| "unexpected end of file".to_string())
        };
        match std::mem::replace(&mut t.part, Part::Ended) {
            Part::Ended => {}
            Part::Header => {
                if t.buf.is_empty() && error.is_none() {
                    // A stream that ends where a header would start ends the archive.
                    return;
                }
                let e = match &error {
                    Some(e) => e.clone(),
                    None => match read_header(&t.buf) {
                        Err(e) => e.to_string(),
                        Ok(_) => "the archive ended inside a header".to_string(),
                    },
                };
                t.part = Part::Header;
                self.tar_broken(&mut t, name, &e, reading);
            }
            Part::Pad(_) => {
                t.part = Part::Header;
                self.tar_broken(&mut t, name, &cut(), reading);
            }
            Part::Data { into, .. } => {
                let member = match into {
                    Into::Skip => {
                        t.part = Part::Header;
                        self.tar_broken(&mut t, name, &cut(), reading);
                        return;
                    }
                    Into::Whole(member, bytes) => {
                        // What came before the cut is read, as a streamed member's is.
                        reading.progress.members += 1;
                        reading.progress.decompressed += bytes.len() as u64;
                        reading.sink.whole(self, member.clone(), options, bytes);
                        member
                    }
                    Into::Pump(member, id) => {
                        self.end_file(id);
                        reading.progress.members += 1;
                        member
                    }
                    Into::Nested(member, ..) => member,
                };
                on_progress(reading.progress);
                self.problem(
                    reading,
                    &member,
                    format!(
                        "this archive member was cut ({}); the archive's later members were not \
                         read",
                        cut()
                    ),
                );
            }
        }
    }
}
