//! An archive's members read back after reading — a search of every rollout, the filter's
//! metadata, the rollout viewer stepping through a run — by the names their files were read
//! under, without walking the archive again for each: one member found afresh costs, for the
//! last member of a `.tar.gz`, decompressing all of it, and for a zip, reading its whole table
//! of contents.
//!
//! - A zip's table of contents is read once, its entries looked up by name.
//! - A tar stream (`.tar`, `.tar.gz`, `.tar.zst`) is walked forward from where the last member
//!   asked for ended: members asked for in the order they lie in the stream (the order they
//!   were read in, so the order of the corpus's files) cost one decompression of the stream in
//!   all. A member behind the walk starts it again from the beginning.
//! - An archive inside the archive (one level deep, as reading allows) is held in memory once
//!   and its members read back the same way.
//!
//! A member's bytes are the ones reading pushed for it, under the same limits (tested on every
//! kind of archive against the bytes they were packed from, in and out of order).
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::io::{self, Read};
use std::rc::Rc;

use super::archive::{
    clean, inflate_entry, member_path, open_stream, without_compression_suffix, Container,
    Sequential, HEAD, MAX_NESTED_BYTES,
};
use crate::formats::inspect::archive::{Archive, Entry};
use crate::formats::RandomAccess;

/// The archive's file, shared by the zip reads and the tar walk's decoder.
type Src<'a> = Rc<RefCell<Box<dyn RandomAccess + 'a>>>;

struct Shared<'a>(Src<'a>);

impl RandomAccess for Shared<'_> {
    fn size(&self) -> u64 {
        self.0.borrow().size()
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.0.borrow_mut().read_at(offset, buf)
    }
}

/// An archive held in memory (an archive inside the archive).
struct Owned(Vec<u8>);

impl RandomAccess for Owned {
    fn size(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut bytes: &[u8] = &self.0;
        bytes.read_at(offset, buf)
    }
}

/// The bytes of one member of an archive, found again by the name its file was read under
/// (`<archive>/<member path>`, an archive inside it one level deep, or a single compressed
/// file's name without its ending): what a viewer re-reads a rollout's steps from. Decompresses
/// a tar stream only up to the member; to read many, keep one [`Members`].
pub fn read_member(
    src: &mut dyn RandomAccess,
    archive: &str,
    member: &str,
) -> Result<Vec<u8>, String> {
    Members::open(Box::new(src), archive)?.read(member)
}

/// The members of one archive, read by the names its files were read under
/// (`<archive>/<member path>`).
pub struct Members<'a> {
    archive: String,
    src: Src<'a>,
    kind: Container,
    /// 0 for the archive itself, 1 for an archive inside it (which holds no further archive).
    depth: u32,
    /// A zip's entries, and the first of each member path (as a folder's reading takes it).
    zip: Vec<Entry>,
    zip_index: HashMap<String, usize>,
    /// A gzip or zstd stream holds a tar (and a tar stream is one).
    holds_tar: bool,
    walk: Option<TarWalk<'a>>,
    /// Walks of the tar stream started so far.
    walks: u32,
    /// The archive inside this one last read from: its path here (empty for a compressed
    /// stream's whole content), and its members.
    nested: Option<(String, Box<Members<'static>>)>,
}

impl<'a> Members<'a> {
    /// Opens the archive `archive` (its name as reading gave it) in `src`.
    pub fn open(src: Box<dyn RandomAccess + 'a>, archive: &str) -> Result<Members<'a>, String> {
        Self::open_at(Rc::new(RefCell::new(src)), archive, 0)
    }

    fn open_at(src: Src<'a>, archive: &str, depth: u32) -> Result<Members<'a>, String> {
        let mut head = [0u8; HEAD];
        let n = src
            .borrow_mut()
            .read_at(0, &mut head)
            .map_err(|e| e.to_string())?;
        let kind = Container::of(&head[..n]).ok_or("not an archive")?;
        let mut members = Members {
            archive: archive.to_string(),
            src,
            kind,
            depth,
            zip: Vec::new(),
            zip_index: HashMap::new(),
            holds_tar: false,
            walk: None,
            walks: 0,
            nested: None,
        };
        if kind == Container::Zip {
            let mut shared = Shared(members.src.clone());
            members.zip = Archive::open(&mut shared)?.entries;
            for (i, entry) in members.zip.iter().enumerate() {
                let path = clean(&entry.name);
                if path.is_empty() || entry.name.ends_with('/') {
                    continue;
                }
                members.zip_index.entry(path).or_insert(i);
            }
        } else {
            let walk = TarWalk::start(kind, &members.src)?;
            members.holds_tar = walk.is_some();
            members.walks = 1;
            members.walk = walk;
        }
        Ok(members)
    }

    /// How many times a tar stream (this archive's, not one inside it) was decompressed from
    /// its start so far: 1 while members are asked for in the stream's order.
    pub fn walks(&self) -> u32 {
        self.walks
    }

    /// The bytes of member `member`.
    pub fn read(&mut self, member: &str) -> Result<Vec<u8>, String> {
        if self.kind != Container::Zip
            && !self.holds_tar
            && member == without_compression_suffix(&self.archive)
        {
            // A single compressed file: its one member is all of it.
            return self.decompressed();
        }
        let path = member_path(&self.archive, member).ok_or("not a member of this archive")?;
        self.read_path(path)
    }

    fn read_path(&mut self, path: &str) -> Result<Vec<u8>, String> {
        if let Some((at, nested)) = &mut self.nested {
            let rest = if at.is_empty() {
                Some(path)
            } else {
                path.strip_prefix(at.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                return nested.read_path(rest);
            }
        }
        match self.kind {
            Container::Zip => self.zip_member(path),
            _ if self.holds_tar => self.tar_member(path),
            _ => self.inside_stream(path),
        }
    }

    fn zip_member(&mut self, path: &str) -> Result<Vec<u8>, String> {
        let src = self.src.clone();
        let inflate =
            |entry: &Entry| inflate_entry(entry, &mut |at, buf| src.borrow_mut().read_at(at, buf));
        let entry = |path: &str| self.zip_index.get(path).map(|&i| &self.zip[i]);
        if let Some(entry) = entry(path) {
            return inflate(entry);
        }
        if self.depth == 0 {
            for (i, _) in path.match_indices('/') {
                if let Some(entry) = entry(&path[..i]) {
                    let bytes = inflate(entry)?;
                    return self.nest(&path[..i], bytes, &path[i + 1..]);
                }
            }
        }
        Err(format!("no member {path} in the archive"))
    }

    fn tar_member(&mut self, path: &str) -> Result<Vec<u8>, String> {
        // A member (or the archive holding it) the walk has passed: walk again from the start.
        let behind = |walk: &TarWalk<'_>| {
            walk.passed.contains(path)
                || path
                    .match_indices('/')
                    .any(|(i, _)| walk.passed.contains(&path[..i]))
        };
        if self.walk.as_ref().is_none_or(behind) {
            self.walk = TarWalk::start(self.kind, &self.src)?;
            self.walks += 1;
        }
        let walk = self.walk.as_mut().ok_or("not a tar archive")?;
        match walk.find(path, self.depth) {
            Ok(Found::Member(bytes)) => Ok(bytes),
            Ok(Found::Nested(at, bytes)) => {
                let rest = &path[at.len() + 1..];
                self.nest(&at, bytes, rest)
            }
            Ok(Found::Nothing) => Err(format!("no member {path} in the archive")),
            Err(e) => {
                self.walk = None;
                Err(e)
            }
        }
    }

    /// A gzip or zstd stream that holds an archive other than a tar (a zip, gzip-compressed).
    fn inside_stream(&mut self, path: &str) -> Result<Vec<u8>, String> {
        if self.depth > 0 {
            return Err("not a member of this archive".to_string());
        }
        let bytes = self.decompressed()?;
        self.nest("", bytes, path)
    }

    /// The whole decompressed content of a gzip or zstd stream (not a tar).
    fn decompressed(&self) -> Result<Vec<u8>, String> {
        let compressed = self.src.borrow().size();
        let seq = Sequential::new(Shared(self.src.clone()), Rc::new(Cell::new(0)));
        let (_, mut whole) = open_stream(self.kind, seq, compressed)?;
        let mut bytes = Vec::new();
        (&mut whole)
            .take(MAX_NESTED_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        Ok(bytes)
    }

    /// Holds the archive at `at` (its bytes) and reads `rest` from it.
    fn nest(&mut self, at: &str, bytes: Vec<u8>, rest: &str) -> Result<Vec<u8>, String> {
        let src: Src<'static> = Rc::new(RefCell::new(Box::new(Owned(bytes))));
        let mut nested = Box::new(Members::open_at(src, at, self.depth + 1)?);
        let read = nested.read_path(rest);
        self.nested = Some((at.to_string(), nested));
        read
    }
}

/// What a walk forward found.
enum Found {
    Member(Vec<u8>),
    /// An archive member (its path) whose archive holds the member asked for.
    Nested(String, Vec<u8>),
    /// The stream ended first.
    Nothing,
}

/// The decompressed tar stream and where the walk stands in it.
struct TarWalk<'a> {
    stream: Counted<'a>,
    /// Where the next member's header starts.
    next: u64,
    /// The paths of the files passed so far.
    passed: HashSet<String>,
    ended: bool,
}

/// A reader counting the bytes it has handed out.
struct Counted<'a> {
    inner: Box<dyn Read + 'a>,
    pos: u64,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<'a> TarWalk<'a> {
    /// A walk from the start of the stream; `None` when the stream holds no tar.
    fn start(kind: Container, src: &Src<'a>) -> Result<Option<TarWalk<'a>>, String> {
        let compressed = src.borrow().size();
        let seq = Sequential::new(Shared(src.clone()), Rc::new(Cell::new(0)));
        let (inner, stream) = open_stream(kind, seq, compressed)?;
        Ok((inner == Some(Container::Tar)).then(|| TarWalk {
            stream: Counted {
                inner: stream,
                pos: 0,
            },
            next: 0,
            passed: HashSet::new(),
            ended: false,
        }))
    }

    /// Walks on to the file at `path` (or, at depth 0, to an archive holding it).
    fn find(&mut self, path: &str, depth: u32) -> Result<Found, String> {
        if self.ended {
            return Ok(Found::Nothing);
        }
        // A tar's entries are read afresh from each header on: the `tar` crate reads exactly
        // the bytes of the entries it hands out, so the walk resumes where one ended.
        let gap = self
            .next
            .checked_sub(self.stream.pos)
            .ok_or("the tar archive was read past a member's end")?;
        io::copy(&mut (&mut self.stream).take(gap), &mut io::sink()).map_err(|e| e.to_string())?;
        let base = self.stream.pos;
        let TarWalk {
            stream,
            next,
            passed,
            ended,
        } = self;
        let mut archive = tar::Archive::new(stream as &mut dyn Read);
        for entry in archive.entries().map_err(|e| e.to_string())? {
            let mut entry = entry.map_err(|e| e.to_string())?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let name = clean(&String::from_utf8_lossy(&entry.path_bytes()));
            let end = base + (entry.raw_file_position() + entry.size()).next_multiple_of(512);
            let nested = depth == 0
                && path
                    .strip_prefix(name.as_str())
                    .is_some_and(|r| r.starts_with('/'));
            if name == path || nested {
                let mut bytes = Vec::new();
                let cap = if nested { MAX_NESTED_BYTES } else { u64::MAX };
                (&mut entry)
                    .take(cap)
                    .read_to_end(&mut bytes)
                    .map_err(|e| e.to_string())?;
                *next = end;
                passed.insert(name.clone());
                return Ok(if nested {
                    Found::Nested(name, bytes)
                } else {
                    Found::Member(bytes)
                });
            }
            passed.insert(name);
        }
        *ended = true;
        Ok(Found::Nothing)
    }
}
