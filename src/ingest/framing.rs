//! Splitting a byte stream, delivered in arbitrary chunks, into lines.
//!
//! Browsers hand a `File` over as a stream of chunks, and native readers as buffers; neither
//! respects line boundaries. [`LineSplitter`] carries the partial line between chunks, strips a
//! leading UTF-8 byte-order mark and a trailing `\r`, and reports each line with its 1-based
//! number and the byte offset of its first byte in the file, so the line can be re-read later.

/// Lines longer than this are reported as too long and skipped rather than buffered, so one
/// runaway line cannot exhaust memory.
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// The UTF-8 byte-order mark.
pub(crate) const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The bytes after a UTF-8 byte-order mark, if any.
pub(crate) fn strip_bom(b: &[u8]) -> &[u8] {
    b.strip_prefix(&BOM[..]).unwrap_or(b)
}

/// Lines of a buffered document, counted as [`LineSplitter`] counts them.
pub(crate) fn count_lines(bytes: &[u8]) -> u64 {
    let breaks = memchr::memchr_iter(b'\n', bytes).count() as u64;
    let body = strip_bom(bytes);
    breaks + u64::from(!body.is_empty() && !body.ends_with(b"\n"))
}

/// One line (without its line break).
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    Text {
        number: u64,
        offset: u64,
        bytes: &'a [u8],
    },
    /// The line exceeded [`MAX_LINE_BYTES`]; its bytes were dropped.
    TooLong { number: u64, offset: u64, len: u64 },
}

/// Incremental line splitter; see the module documentation.
#[derive(Debug, Default)]
pub struct LineSplitter {
    buf: Vec<u8>,
    /// File offset of `buf[0]` (or of the skipped line's start).
    buf_offset: u64,
    /// Bytes of the file consumed so far.
    consumed: u64,
    /// Lines completed so far.
    lines: u64,
    /// Whether the start of the file was checked for a BOM.
    bom_checked: bool,
    /// Bytes dropped from the current over-long line, when skipping one.
    skipping: Option<u64>,
}

impl LineSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes consumed so far.
    pub fn bytes(&self) -> u64 {
        self.consumed
    }

    /// Lines completed so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Feeds one chunk; `emit` is called once per completed line.
    pub fn push(&mut self, mut chunk: &[u8], emit: &mut dyn FnMut(Line<'_>)) {
        if !self.bom_checked {
            // The BOM may itself be split across chunks: wait for three bytes.
            if self.buf.len() + chunk.len() < 3
                && self.consumed == 0
                && b"\xEF\xBB\xBF".starts_with(&[&self.buf[..], chunk].concat())
            {
                self.buf.extend_from_slice(chunk);
                return;
            }
            self.bom_checked = true;
            if self.buf.is_empty() {
                // The usual case: the first chunk holds the whole BOM, or none. Reading it in
                // place spares a copy of the chunk (which may be a whole 50 MB first line).
                if chunk.starts_with(b"\xEF\xBB\xBF") {
                    self.consumed = 3;
                    self.buf_offset = 3;
                    chunk = &chunk[3..];
                }
                return self.push_checked(chunk, emit);
            }
            let mut head = std::mem::take(&mut self.buf);
            head.extend_from_slice(chunk);
            if head.starts_with(b"\xEF\xBB\xBF") {
                self.consumed = 3;
                self.buf_offset = 3;
                head.drain(..3);
            }
            return self.push_checked(&head, emit);
        }
        while !chunk.is_empty() {
            let taken = self.push_part(chunk, emit);
            chunk = &chunk[taken..];
        }
    }

    fn push_checked(&mut self, mut chunk: &[u8], emit: &mut dyn FnMut(Line<'_>)) {
        while !chunk.is_empty() {
            let taken = self.push_part(chunk, emit);
            chunk = &chunk[taken..];
        }
    }

    /// Consumes up to and including the next line break; returns the bytes taken.
    fn push_part(&mut self, chunk: &[u8], emit: &mut dyn FnMut(Line<'_>)) -> usize {
        match chunk.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                self.consumed += (pos + 1) as u64;
                if let Some(dropped) = self.skipping.take() {
                    self.lines += 1;
                    emit(Line::TooLong {
                        number: self.lines,
                        offset: self.buf_offset,
                        len: dropped + pos as u64,
                    });
                } else if self.buf.is_empty() {
                    self.lines += 1;
                    emit(Line::Text {
                        number: self.lines,
                        offset: self.buf_offset,
                        bytes: strip_cr(&chunk[..pos]),
                    });
                } else {
                    self.buf.extend_from_slice(&chunk[..pos]);
                    self.lines += 1;
                    let line = std::mem::take(&mut self.buf);
                    emit(Line::Text {
                        number: self.lines,
                        offset: self.buf_offset,
                        bytes: strip_cr(&line),
                    });
                    self.buf = line;
                    self.buf.clear();
                }
                self.buf_offset = self.consumed;
                pos + 1
            }
            None => {
                self.consumed += chunk.len() as u64;
                match &mut self.skipping {
                    Some(dropped) => *dropped += chunk.len() as u64,
                    None if self.buf.len() + chunk.len() > MAX_LINE_BYTES => {
                        self.skipping = Some((self.buf.len() + chunk.len()) as u64);
                        self.buf = Vec::new();
                    }
                    None => self.buf.extend_from_slice(chunk),
                }
                chunk.len()
            }
        }
    }

    /// Ends the stream: a last line without a line break is emitted.
    pub fn finish(&mut self, emit: &mut dyn FnMut(Line<'_>)) {
        if !self.bom_checked {
            self.bom_checked = true;
            let head = std::mem::take(&mut self.buf);
            if head.starts_with(b"\xEF\xBB\xBF") {
                self.buf_offset = 3;
                self.buf.extend_from_slice(&head[3..]);
            } else {
                self.buf = head;
            }
            self.consumed = self.buf_offset + self.buf.len() as u64;
        }
        if let Some(dropped) = self.skipping.take() {
            self.lines += 1;
            emit(Line::TooLong {
                number: self.lines,
                offset: self.buf_offset,
                len: dropped,
            });
        } else if !self.buf.is_empty() {
            self.lines += 1;
            let line = std::mem::take(&mut self.buf);
            emit(Line::Text {
                number: self.lines,
                offset: self.buf_offset,
                bytes: strip_cr(&line),
            });
        }
    }
}

pub(crate) fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits `input` delivered in chunks of `size` bytes; returns (number, offset, text).
    fn split(input: &[u8], size: usize) -> Vec<(u64, u64, String)> {
        let mut out = Vec::new();
        let mut s = LineSplitter::new();
        let mut emit = |l: Line<'_>| match l {
            Line::Text {
                number,
                offset,
                bytes,
            } => out.push((number, offset, String::from_utf8_lossy(bytes).into_owned())),
            Line::TooLong { .. } => panic!("unexpected long line"),
        };
        for c in input.chunks(size.max(1)) {
            s.push(c, &mut emit);
        }
        s.finish(&mut emit);
        out
    }

    #[test]
    fn lines_are_the_same_whatever_the_chunking() {
        let input = b"\xEF\xBB\xBFab\r\n\ncd\nlast";
        let expected = vec![
            (1, 3, "ab".to_string()),
            (2, 7, String::new()),
            (3, 8, "cd".to_string()),
            (4, 11, "last".to_string()),
        ];
        for size in 1..=input.len() {
            assert_eq!(split(input, size), expected, "chunk size {size}");
        }
    }

    #[test]
    fn offsets_address_the_line_bytes() {
        let input = b"{\"a\":1}\n{\"b\":22}\n";
        for (_, offset, text) in split(input, 5) {
            let start = offset as usize;
            assert_eq!(&input[start..start + text.len()], text.as_bytes());
        }
    }

    #[test]
    fn empty_and_bom_only_inputs_have_no_lines() {
        assert!(split(b"", 4).is_empty());
        assert!(split(b"\xEF\xBB\xBF", 1).is_empty());
        assert!(split(b"\xEF\xBB", 1).len() == 1, "a partial BOM is data");
    }
}
