//! Lines read ahead elsewhere: the browser's parallel parse.
//!
//! Natively, [`super::ParallelParse`] splits a chunk across rayon's threads inside
//! [`Ingest::push`](super::Ingest::push). The browser's Web Workers share no memory, so there the
//! split is by slices of the file: a pool worker reads a slice and computes the context-free
//! reading ([`prepare_line`]: JSON parse and validation) of every canonical line that begins and
//! ends inside it ([`prepare_slice`]), and sends the readings back in a compact binary form
//! ([`PreparedLines::encode`]). The worker holding the ingest reads the same bytes itself and
//! pushes them with those readings ([`Ingest::push_prepared`](super::Ingest::push_prepared)).
//!
//! A reading is used only for the line at the same file offset with the same length; every
//! other line (one cut by a slice boundary, one mentioning `tools`, one whose reading never
//! came) is read in its turn as usual. A reading is a pure function of the line's bytes, and
//! everything order-dependent (tools in force, line numbers, diagnostics and their cap, repeats)
//! still happens in line order in the ingest, so the corpus is the one plain
//! [`Ingest::push`](super::Ingest::push) builds, whatever the slices and whichever readings
//! arrive (`tests/parallel_parse.rs`).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::framing::strip_cr;
use crate::formats::canonical::{prepare_line, Prepared};

/// One line's reading and where the line lies in its file.
#[derive(Debug, Serialize, Deserialize)]
struct PreparedLine {
    /// The file offset of the line's first byte (as [`super::framing::Line::Text`] has it).
    offset: u64,
    /// The line's length without its line break (and without a `\r` before it).
    len: u32,
    prepared: Prepared,
}

/// The readings of a slice's lines, in file order; see the module documentation.
#[derive(Debug, Default)]
pub struct PreparedLines {
    lines: VecDeque<PreparedLine>,
}

/// Why a [`PreparedLines`] could not be read back (a bug, or bytes that are not an encoding).
#[derive(Debug)]
pub struct DecodeError(postcard::Error);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "prepared lines: {}", self.0)
    }
}

impl PreparedLines {
    /// Readings not taken yet.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The compact form sent between workers (postcard: lengths and integers as varints).
    pub fn encode(&self) -> Vec<u8> {
        // Serialising plain data into a growing vector cannot fail.
        postcard::to_allocvec(&self.lines).unwrap_or_default()
    }

    /// Reads [`PreparedLines::encode`]'s bytes back.
    pub fn decode(bytes: &[u8]) -> Result<PreparedLines, DecodeError> {
        postcard::from_bytes(bytes)
            .map(|lines| PreparedLines { lines })
            .map_err(DecodeError)
    }

    /// The reading of the line at `offset` of `len` bytes, if it is the next one held; readings
    /// of lines before it (which the ingest read otherwise) are dropped.
    pub(super) fn take(&mut self, offset: u64, len: usize) -> Option<Prepared> {
        while let Some(next) = self.lines.front() {
            if next.offset < offset {
                self.lines.pop_front();
                continue;
            }
            if next.offset == offset && next.len as usize == len {
                return self.lines.pop_front().map(|line| line.prepared);
            }
            return None;
        }
        None
    }
}

/// The readings of the lines of a file slice: `slice` holds the file's bytes from offset
/// `start`, and every line that begins after a line break inside the slice and ends with one
/// inside it is read, except blank lines and lines mentioning `tools` (their reading depends on
/// the file's tools in force). To cover the lines beginning in `a..b`, pass the bytes of
/// `a - 1..b` (the line break before `a` tells whether a line begins at `a`).
pub fn prepare_slice(slice: &[u8], start: u64) -> PreparedLines {
    let mut lines = VecDeque::new();
    let Some(first) = slice.iter().position(|&b| b == b'\n') else {
        return PreparedLines { lines };
    };
    let mut at = first + 1;
    while let Some(end) = slice[at..].iter().position(|&b| b == b'\n') {
        let line = strip_cr(&slice[at..at + end]);
        if !line.iter().all(u8::is_ascii_whitespace) {
            if let (Some(prepared), Ok(len)) = (prepare_line(line), u32::try_from(line.len())) {
                lines.push_back(PreparedLine {
                    offset: start + at as u64,
                    len,
                    prepared,
                });
            }
        }
        at += end + 1;
    }
    PreparedLines { lines }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = r#"{"dataset":"d","task_id":"t","model":"m","method":"a","success":true,"steps":[{"tool":"x","ok":false,"error":"boom","label":"state"}],"cost":{"tokens":12.5}}"#;

    #[test]
    fn a_slice_reads_the_lines_it_holds_whole() {
        let file = format!("{ROLLOUT}\n{ROLLOUT}\r\n\n  \nnot json\n{{\"tools\":null}}\n{ROLLOUT}");
        let bytes = file.as_bytes();
        let second = ROLLOUT.len() as u64 + 1;
        // From the start of the file: the first line has no line break before it, the last
        // none after it.
        let mut lines = prepare_slice(bytes, 0);
        assert_eq!(lines.len(), 2, "the second rollout and `not json`");
        let got = lines.take(second, ROLLOUT.len()).expect("second line");
        assert_eq!(got, prepare_line(ROLLOUT.as_bytes()).unwrap());
        let bad = second + ROLLOUT.len() as u64 + 2 + 1 + 3;
        assert!(lines.take(bad, 8).unwrap().is_err());
        assert!(lines.is_empty());
    }

    #[test]
    fn readings_survive_the_encoding_and_are_taken_only_where_they_match() {
        let file = format!("x\n{ROLLOUT}\n[1]\n{ROLLOUT}\n");
        let mut lines =
            PreparedLines::decode(&prepare_slice(file.as_bytes(), 40).encode()).unwrap();
        assert_eq!(lines.len(), 3);
        // The wrong length, then a line past the first reading: nothing, and the first dropped.
        assert!(lines.take(42, ROLLOUT.len() + 1).is_none());
        assert_eq!(lines.len(), 3);
        assert!(lines.take(43, 1).is_none());
        assert_eq!(lines.len(), 2);
        let at = 42 + ROLLOUT.len() as u64 + 1;
        assert!(lines.take(at, 3).unwrap().is_err());
        let at = at + 4;
        assert_eq!(
            lines.take(at, ROLLOUT.len()).unwrap(),
            prepare_line(ROLLOUT.as_bytes()).unwrap()
        );
        assert!(PreparedLines::decode(b"\xff\xff\xff").is_err());
    }
}
