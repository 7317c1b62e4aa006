//! `.eval` archives: zip files read by random access, one entry at a time.
//!
//! A zip's table of contents (the central directory) is at its end, so the archive is read
//! through [`RandomAccess`]: the CLI reads a file by offset, the browser's worker slices its
//! `File` (`FileReaderSync`), and a buffered archive (bytes pushed to `Ingest`) is a slice. The
//! [`zip`] crate reads the central directory; each entry's local record is read by offset and
//! decompressed here (stored, DEFLATE, or zstd — Inspect's default from 0.3.206 — with the
//! pure-Rust `ruzstd`), each capped at [`MAX_ENTRY_BYTES`] so a zip bomb is refused with a
//! message instead of exhausting memory, and checked against its CRC-32.

use std::io::{self, Read, Seek, SeekFrom};

use zip::CompressionMethod;

/// The most bytes one entry may decompress to (the same cap as a canonical line's).
pub const MAX_ENTRY_BYTES: u64 = 256 * 1024 * 1024;

/// A file read by offset.
pub trait RandomAccess {
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// Reads `buf.len()` bytes at `offset` (fewer only at the end of the file).
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// The same file read from several threads at once, where it can be (a native file, bytes
    /// in memory): a zip's members are then inflated in parallel. A browser `File` cannot.
    fn concurrent(&self) -> Option<&dyn ReadAtShared> {
        None
    }
}

/// A file read by offset through a shared reference, so several threads may read it at once.
pub trait ReadAtShared: Sync {
    /// Reads `buf.len()` bytes at `offset` (fewer only at the end of the file).
    fn read_at_shared(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
}

impl ReadAtShared for &[u8] {
    fn read_at_shared(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

#[cfg(unix)]
impl ReadAtShared for std::fs::File {
    fn read_at_shared(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let mut n = 0;
        while n < buf.len() {
            match FileExt::read_at(self, &mut buf[n..], offset + n as u64) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

impl<T: RandomAccess + ?Sized> RandomAccess for &mut T {
    fn size(&self) -> u64 {
        (**self).size()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read_at(offset, buf)
    }
    fn concurrent(&self) -> Option<&dyn ReadAtShared> {
        (**self).concurrent()
    }
}

impl RandomAccess for &[u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.read_at_shared(offset, buf)
    }
    fn concurrent(&self) -> Option<&dyn ReadAtShared> {
        Some(self)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl RandomAccess for std::fs::File {
    fn size(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.seek(SeekFrom::Start(offset))?;
        let mut n = 0;
        while n < buf.len() {
            match self.read(&mut buf[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    }
    #[cfg(unix)]
    fn concurrent(&self) -> Option<&dyn ReadAtShared> {
        Some(self)
    }
}

/// A [`RandomAccess`] that reports how far reading has come: after each read, `on_read` gets
/// the bytes read so far (clamped to the file's size). Entries are read one after the other,
/// in blocks, so a multi-GB archive reports progress while its samples are read, not only once
/// it is done (the browser's worker and the CLI show it as bytes read).
pub struct Progressing<'a> {
    pub inner: &'a mut dyn RandomAccess,
    read: u64,
    on_read: &'a mut dyn FnMut(u64),
}

impl<'a> Progressing<'a> {
    pub fn new(inner: &'a mut dyn RandomAccess, on_read: &'a mut dyn FnMut(u64)) -> Self {
        Progressing {
            inner,
            read: 0,
            on_read,
        }
    }
}

impl RandomAccess for Progressing<'_> {
    fn size(&self) -> u64 {
        self.inner.size()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read_at(offset, buf)?;
        self.read = (self.read + n as u64).min(self.inner.size());
        (self.on_read)(self.read);
        Ok(n)
    }
    fn concurrent(&self) -> Option<&dyn ReadAtShared> {
        self.inner.concurrent()
    }
}

/// The file under an archive, shared by the zip reader and the local-header check.
type Shared<'a> = std::rc::Rc<std::cell::RefCell<&'a mut dyn RandomAccess>>;

/// `Read + Seek` over a [`RandomAccess`], reading ahead in blocks (a browser slice read costs a
/// call into JavaScript, so small reads are batched).
struct Seekable<'a> {
    src: Shared<'a>,
    pos: u64,
    block: Vec<u8>,
    block_at: u64,
    /// The size of the next block read: doubled while the reads go on where the last block
    /// ended (a table of contents read through), back to [`BLOCK`] after a jump.
    next_block: usize,
    /// The archive's tail has been read through once ([`MAX_TAIL`]).
    tail_read: bool,
}

const BLOCK: usize = 256 * 1024;
/// A browser's read costs about a millisecond whatever its size up to megabytes
/// (`FileReaderSync`): the 10.7 MB table of contents of the leaderboard `.zip` took 42 reads
/// of 256 KiB and 0.2 s, then 6 growing ones; it is one read now ([`MAX_TAIL`]). Blocks grow
/// to this size where a table of contents is further from the end.
const MAX_BLOCK: usize = 8 << 20;
/// A jump to at most this far from the archive's end reads through to the end at once: the
/// zip reader jumps to its end record, then to the table of contents, then reads the table
/// through (one read of 10.7 MB took 30-40 ms in Chromium where six growing ones took 50-80).
const MAX_TAIL: usize = 32 << 20;

impl<'a> Seekable<'a> {
    fn new(src: Shared<'a>) -> Self {
        Seekable {
            src,
            pos: 0,
            block: Vec::new(),
            block_at: 0,
            next_block: BLOCK,
            tail_read: false,
        }
    }
}

impl Read for Seekable<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut src = self.src.borrow_mut();
        let size = src.size();
        if self.pos >= size || out.is_empty() {
            return Ok(0);
        }
        let in_block =
            self.pos >= self.block_at && self.pos < self.block_at + self.block.len() as u64;
        if !in_block {
            if out.len() >= BLOCK {
                let n = src.read_at(self.pos, out)?;
                self.pos += n as u64;
                return Ok(n);
            }
            let onward =
                self.pos == self.block_at + self.block.len() as u64 && !self.block.is_empty();
            let to_end = usize::try_from(size - self.pos).unwrap_or(usize::MAX);
            self.next_block = if onward {
                (self.next_block * 2).min(MAX_BLOCK)
            } else if to_end <= MAX_TAIL && !self.tail_read {
                // The table of contents runs to the end of the archive (its end record and
                // comment follow it): read through in one read. Once only: a damaged or
                // hostile archive whose end records point ever further back then costs a
                // block a jump, not the whole tail again at each one.
                self.tail_read = to_end > BLOCK;
                to_end
            } else {
                BLOCK
            };
            self.block.resize(self.next_block, 0);
            let n = src.read_at(self.pos, &mut self.block)?;
            self.block.truncate(n);
            self.block_at = self.pos;
            if n == 0 {
                return Ok(0);
            }
        }
        let at = (self.pos - self.block_at) as usize;
        let n = out.len().min(self.block.len() - at);
        out[..n].copy_from_slice(&self.block[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Seekable<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let size = self.src.borrow().size() as i128;
        let target = match to {
            SeekFrom::Start(n) => n as i128,
            SeekFrom::End(d) => size + d as i128,
            SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if target < 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start",
            ));
        }
        self.pos = target as u64;
        Ok(self.pos)
    }
}

/// The local extra field's length guessed before reading it (timestamps, Unix ids: tens of
/// bytes); a record is read in one piece unless its local header is longer.
const EXTRA_GUESS: u64 = 64;

/// One entry of the archive, as the central directory describes it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Entry {
    pub name: String,
    /// Offset of the entry's local header (its record: the local header, then the data).
    pub header_start: u64,
    pub compressed_size: u64,
    pub size: u64,
    /// The compression method and CRC-32 the table of contents gives (the local header must
    /// agree).
    method: Method,
    crc: u32,
    /// The local header's length if it repeats the central one's name and has an extra field
    /// of at most [`EXTRA_GUESS`] bytes (it usually does; [`read_record`] reads on when not).
    header_guess: u64,
}

impl Entry {
    /// The record's length as the table of contents suggests it (see `header_guess`): what
    /// to read of the file for this entry, and a measure of how far reading has come. The
    /// exact length is the record [`read_record`] returns.
    pub(crate) fn record_guess(&self) -> u64 {
        self.header_guess.saturating_add(self.compressed_size)
    }
}

/// An open archive.
pub(crate) struct Archive<'a> {
    src: Shared<'a>,
    pub entries: Vec<Entry>,
    /// The most bytes one entry may decompress to.
    pub cap: u64,
    /// The central directory names an entry more than once; `entries` holds the last entry of
    /// each name (what Python's `zipfile`, and so Inspect, reads).
    pub duplicate_names: bool,
}

impl<'a> Archive<'a> {
    /// Reads the central directory.
    pub(crate) fn open(src: &'a mut dyn RandomAccess) -> Result<Archive<'a>, String> {
        let src: Shared<'a> = std::rc::Rc::new(std::cell::RefCell::new(src));
        let zip = zip::ZipArchive::new(Seekable::new(src.clone())).map_err(|e| {
            format!("not a readable zip archive ({e}); is it truncated or damaged?")
        })?;
        // The table of contents alone: no local header is read until its entry is (a browser
        // reads a `File` slice per read, and an archive of a folder has thousands of entries).
        let mut entries = Vec::with_capacity(zip.len());
        for index in 0..zip.len() {
            let Ok(f) = zip.by_index_data(index) else {
                continue;
            };
            let name_len = f.name_raw().len() as u64;
            entries.push(Entry {
                name: f.name().map(|n| n.into_owned()).unwrap_or_default(),
                header_start: f.header_start(),
                compressed_size: f.compressed_size(),
                size: f.size(),
                method: Method::of(f.compression()),
                crc: f.crc32(),
                header_guess: 30 + name_len + EXTRA_GUESS,
            });
        }
        Ok(Archive {
            duplicate_names: zip.has_duplicate_names(),
            src,
            entries,
            cap: MAX_ENTRY_BYTES,
        })
    }

    pub(crate) fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.name == name)
    }

    /// The decompressed bytes of an entry.
    pub(crate) fn read(&mut self, entry: &Entry) -> Result<Vec<u8>, String> {
        self.read_located(entry).map(|(bytes, _)| bytes)
    }

    /// The decompressed bytes of an entry, and its record's length in the file (what a viewer
    /// re-reads from [`Entry::header_start`], [`entry_from_local`]).
    pub(crate) fn read_located(&mut self, entry: &Entry) -> Result<(Vec<u8>, u64), String> {
        let record = read_record(&mut |at, buf| self.src.borrow_mut().read_at(at, buf), entry)?;
        let bytes = inflate_record(entry, &record, self.cap)?;
        Ok((bytes, record.len() as u64))
    }

    /// The archive's file, for reading entries from several threads at once
    /// ([`RandomAccess::concurrent`]); `None` where it cannot be shared.
    pub(crate) fn with_concurrent<R>(&self, f: impl FnOnce(Option<&dyn ReadAtShared>) -> R) -> R {
        let src = self.src.borrow();
        f(src.concurrent())
    }
}

/// An entry's local record (local header and compressed data) as it lies in the file: read as
/// the table of contents suggests ([`Entry::record_guess`]), then on if the local header is
/// longer.
pub(crate) fn read_record(
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<usize>,
    entry: &Entry,
) -> Result<Vec<u8>, String> {
    let limit = MAX_ENTRY_BYTES + (1 << 20);
    let fits = |n: u64| usize::try_from(n).ok().filter(|&n| n as u64 <= limit);
    let too_big = || too_large(entry.size.max(entry.compressed_size), MAX_ENTRY_BYTES);
    let guess = fits(entry.record_guess()).ok_or_else(too_big)?;
    let mut record = vec![0u8; guess];
    let mut read = |at: u64, buf: &mut [u8]| {
        read_at(at, buf).map_err(|e| format!("cannot read the entry ({e})"))
    };
    let n = read(entry.header_start, &mut record)?;
    record.truncate(n);
    let u16_at = |r: &[u8], i: usize| u64::from(u16::from_le_bytes([r[i], r[i + 1]]));
    // A record that does not start with a local header is refused when it is inflated.
    let len = if record.len() >= 30 && record.starts_with(b"PK\x03\x04") {
        fits(30 + u16_at(&record, 26) + u16_at(&record, 28) + entry.compressed_size)
            .ok_or_else(too_big)?
    } else {
        guess
    };
    if len > record.len() && n == guess {
        let have = record.len();
        record.resize(len, 0);
        let more = read(entry.header_start + have as u64, &mut record[have..])?;
        record.truncate(have + more);
    }
    if record.len() < len {
        return Err(format!(
            "the entry is cut short: {} of its {len} bytes are in the file (a truncated \
             archive?)",
            record.len()
        ));
    }
    record.truncate(len);
    Ok(record)
}

/// The decompressed bytes of an entry from its local record ([`read_record`]), capped at
/// `cap` and at the size the table of contents declares, checked against its CRC-32. Touches
/// nothing but its arguments, so entries inflate on any thread.
pub(crate) fn inflate_record(entry: &Entry, record: &[u8], cap: u64) -> Result<Vec<u8>, String> {
    let data = if record.len() >= 30 {
        30 + usize::from(u16::from_le_bytes([record[26], record[27]]))
            + usize::from(u16::from_le_bytes([record[28], record[29]]))
    } else {
        record.len()
    };
    let body = record.get(data..).unwrap_or_default();
    let bytes = decompress(body, entry.method, entry.crc, Some(entry.size), cap)?;
    // The viewer re-reads an entry from its local record alone (`entry_from_local`), so the
    // local header must say what the table of contents says: an entry whose local method or
    // CRC-32 disagrees is refused here too, or it would be scored and then fail to show.
    let u16_at = |i: usize| u16::from_le_bytes([record[i], record[i + 1]]);
    if record.len() < 30
        || !record.starts_with(b"PK\x03\x04")
        || Method::from_u16(u16_at(8)) != entry.method
        || (u16_at(6) & 8 == 0
            && u32::from_le_bytes([record[14], record[15], record[16], record[17]]) != entry.crc)
    {
        return Err(
            "the entry's local header disagrees with the archive's table of contents \
             (compression method or CRC-32): the archive is damaged"
                .to_string(),
        );
    }
    Ok(bytes)
}

fn too_large(n: u64, cap: u64) -> String {
    format!(
        "the entry decompresses to more than {} bytes{}, over the {} MiB limit (a zip bomb?); \
         skipped",
        n.min(cap),
        if n > cap {
            format!(" ({n} declared)")
        } else {
            String::new()
        },
        cap >> 20
    )
}

/// The compression methods Inspect writes.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Method {
    Stored,
    Deflate,
    Zstd,
    Other(u16),
}

impl Method {
    fn of(m: CompressionMethod) -> Method {
        if m == CompressionMethod::Stored {
            Method::Stored
        } else if m == CompressionMethod::Deflated {
            Method::Deflate
        } else if m == CompressionMethod::ZSTD {
            Method::Zstd
        } else {
            Method::Other(0)
        }
    }

    fn from_u16(v: u16) -> Method {
        match v {
            0 => Method::Stored,
            8 => Method::Deflate,
            93 => Method::Zstd,
            v => Method::Other(v),
        }
    }
}

/// Decompresses raw entry data, capped and CRC-checked.
fn decompress(
    raw: impl Read,
    method: Method,
    crc: u32,
    declared: Option<u64>,
    cap: u64,
) -> Result<Vec<u8>, String> {
    // An entry may not inflate past the size the central directory declares for it: an honest
    // entry is allocated once, at that size, and a lying one (a zip bomb) stops there.
    let limit = declared.map_or(cap, |d| d.min(cap));
    if declared.is_some_and(|d| d > cap) {
        return Err(too_large(declared.unwrap_or(0), cap));
    }
    let capacity = usize::try_from(limit.min(1 << 30)).unwrap_or(0);
    let mut out = Vec::with_capacity(if declared.is_some() { capacity } else { 0 });
    let over = match method {
        Method::Stored => read_capped(raw, limit, &mut out),
        Method::Deflate => read_capped(flate2::read::DeflateDecoder::new(raw), limit, &mut out),
        Method::Zstd => zstd_all(raw, limit, &mut out),
        Method::Other(_) => {
            return Err(
                "the entry uses a zip compression method that Inspect logs do not use \
                 (they are stored, DEFLATE or zstd); skipped"
                    .to_string(),
            )
        }
    }
    .map_err(|e| format!("cannot decompress the entry ({e}); is the archive damaged?"))?;
    if over {
        return Err(match declared {
            Some(d) if d < cap => format!(
                "the entry inflates past the {d} bytes its header declares (a zip bomb, or a \
                 damaged archive); skipped"
            ),
            _ => too_large(cap + 1, cap),
        });
    }
    let mut check = flate2::Crc::new();
    check.update(&out);
    if check.sum() != crc {
        return Err(format!(
            "the entry's CRC-32 does not match its data ({} bytes decompressed, {} declared): \
             the archive is damaged or truncated",
            out.len(),
            declared.map_or("none".to_string(), |d| d.to_string())
        ));
    }
    Ok(out)
}

/// Appends what `r` yields to `out` until it ends; `true` (and stops) when `out` would pass
/// `limit` bytes. The buffer grows by doubling but never past the limit, so a zip bomb costs at
/// most `limit` bytes.
fn read_capped(mut r: impl Read, limit: u64, out: &mut Vec<u8>) -> io::Result<bool> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(false),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if out.len() + n > limit {
            return Ok(true);
        }
        if out.capacity() < out.len() + n {
            let want = (out.capacity() * 2).max(out.len() + n).min(limit);
            out.reserve_exact(want - out.len());
        }
        out.extend_from_slice(&buf[..n]);
    }
}

/// Decodes every zstd frame of `raw` into `out`; `true` when past `limit` bytes.
fn zstd_all(raw: impl Read, limit: u64, out: &mut Vec<u8>) -> io::Result<bool> {
    let mut input = io::BufReader::new(raw);
    let start = out.len();
    loop {
        if io::BufRead::fill_buf(&mut input)?.is_empty() {
            return Ok(false);
        }
        let decoder = ruzstd::decoding::StreamingDecoder::new(&mut input)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        // The limit counts every frame's bytes together.
        if read_capped(decoder, start as u64 + limit, out)? {
            return Ok(true);
        }
    }
}

/// An entry's decompressed bytes from its local record (local header + data), as a viewer
/// re-reads it from the file at [`Entry::header_start`].
pub(crate) fn entry_from_local(record: &[u8]) -> Result<Vec<u8>, String> {
    let bad = || "the archive entry could not be re-read (the file changed?)".to_string();
    if record.len() < 30 || !record.starts_with(b"PK\x03\x04") {
        return Err(bad());
    }
    let u16_at = |i: usize| u16::from_le_bytes([record[i], record[i + 1]]);
    let u32_at =
        |i: usize| u32::from_le_bytes([record[i], record[i + 1], record[i + 2], record[i + 3]]);
    let method = Method::from_u16(u16_at(8));
    let flags = u16_at(6);
    let data = 30 + usize::from(u16_at(26)) + usize::from(u16_at(28));
    let body = record.get(data..).ok_or_else(bad)?;
    // With a data descriptor (flag bit 3) the local header's CRC is zero: skip the check then.
    let crc = u32_at(14);
    match decompress(body, method, crc, None, MAX_ENTRY_BYTES) {
        Err(e) if flags & 8 != 0 && e.contains("CRC-32") => {
            let mut out = Vec::new();
            let over = match method {
                Method::Deflate => read_capped(
                    flate2::read::DeflateDecoder::new(body),
                    MAX_ENTRY_BYTES,
                    &mut out,
                ),
                Method::Zstd => zstd_all(body, MAX_ENTRY_BYTES, &mut out),
                _ => read_capped(body, MAX_ENTRY_BYTES, &mut out),
            };
            match over {
                Ok(false) => Ok(out),
                Ok(true) => Err(too_large(MAX_ENTRY_BYTES + 1, MAX_ENTRY_BYTES)),
                Err(e) => Err(e.to_string()),
            }
        }
        other => other,
    }
}

/// Builds a zip archive of `entries` with every entry compressed by zip method `method` (0
/// stored, 8 DEFLATE, 93 zstd), for tests and fuzzing (a `.eval` made by hand). `declared`
/// overrides the uncompressed size written in the headers (a lying zip bomb).
#[doc(hidden)]
pub fn build_zip(entries: &[(&str, &[u8])], method: u16, declared: Option<u32>) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let body = match method {
            8 => {
                let mut e =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                let _ = e.write_all(data);
                e.finish().unwrap_or_default()
            }
            93 => ruzstd::encoding::compress_to_vec(
                *data,
                ruzstd::encoding::CompressionLevel::Fastest,
            ),
            _ => data.to_vec(),
        };
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let size = declared.unwrap_or(data.len() as u32);
        let offset = out.len() as u32;
        let mut fields = Vec::new();
        fields.extend_from_slice(&20u16.to_le_bytes()); // version needed
        fields.extend_from_slice(&0u16.to_le_bytes()); // flags
        fields.extend_from_slice(&method.to_le_bytes());
        fields.extend_from_slice(&[0, 0, 0x21, 0]); // time, date (1980-01-01)
        fields.extend_from_slice(&crc.sum().to_le_bytes());
        fields.extend_from_slice(&(body.len() as u32).to_le_bytes());
        fields.extend_from_slice(&size.to_le_bytes());
        fields.extend_from_slice(&(name.len() as u16).to_le_bytes());
        fields.extend_from_slice(&0u16.to_le_bytes()); // extra length
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&fields);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&body);
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&20u16.to_le_bytes()); // version made by
        central.extend_from_slice(&fields);
        central.extend_from_slice(&[0; 6]); // comment length, disk, internal attributes
        central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let at = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0; 4]); // disk numbers
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes in memory, counting the reads and the bytes read.
    struct Counted<'a> {
        bytes: &'a [u8],
        read: u64,
        calls: usize,
    }

    impl<'a> Counted<'a> {
        fn new(bytes: &'a [u8]) -> Self {
            Counted {
                bytes,
                read: 0,
                calls: 0,
            }
        }
    }

    impl RandomAccess for Counted<'_> {
        fn size(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.bytes.read_at_shared(offset, buf)?;
            self.read += n as u64;
            self.calls += 1;
            Ok(n)
        }
    }

    #[test]
    fn the_tail_is_read_through_once_then_jumps_cost_a_block() {
        let bytes: Vec<u8> = (0..(8u32 << 20)).map(|i| i as u8).collect();
        let mut file = Counted::new(&bytes);
        {
            let mut s = Seekable::new(std::rc::Rc::new(std::cell::RefCell::new(&mut file)));
            let mut byte = [0u8; 1];
            // Twenty jumps, each 300 KiB further back than any before it, a byte read at each.
            for k in 1..=20u64 {
                let at = bytes.len() as u64 - k * 300 * 1024;
                s.seek(SeekFrom::Start(at)).unwrap();
                s.read_exact(&mut byte).unwrap();
                assert_eq!(byte[0], at as u8, "the byte at {at}");
            }
        }
        // The first jump reads the 300 KiB to the end; each later one a block, not the
        // growing tail again (which would be 63 MB).
        let bound = 300 * 1024 + 19 * BLOCK as u64;
        assert!(
            file.read <= bound,
            "{} bytes read, at most {bound}",
            file.read
        );
    }

    #[test]
    fn a_table_of_contents_is_read_in_one_read() {
        let names: Vec<String> = (0..10_000)
            .map(|i| format!("runs/condition-{i:05}/execution_context.json"))
            .collect();
        let entries: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"{}"[..])).collect();
        let zip = build_zip(&entries, 0, None);
        let mut file = Counted::new(&zip);
        let archive = Archive::open(&mut file).unwrap();
        assert_eq!(archive.entries.len(), 10_000);
        drop(archive);
        // The end record's search (a read), then the table through to the end (one more).
        assert!(
            file.calls <= 2,
            "{} reads to open a zip of 10,000 members",
            file.calls
        );
    }
}
