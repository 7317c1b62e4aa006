//! A `.json` Inspect log read as its chunks arrive: the top-level members are handed over one at
//! a time and the `samples` array element by element, so only one sample (or one header member)
//! is ever buffered, however large the log.
//!
//! Like [`crate::formats::scan`], this only tracks strings and bracket depth; serde validates each
//! member and sample afterwards. It is resumable: a value cut by a chunk boundary is scanned on
//! from where the previous chunk ended, never from its start again.

/// What the scanner hands over.
#[derive(Debug, PartialEq)]
pub(crate) enum Item<'a> {
    /// A complete top-level member other than `samples`.
    Member { key: &'a str, bytes: &'a [u8] },
    /// The `samples` array begins (the members before it have all been handed over).
    SamplesBegin,
    /// One element of `samples`: its bytes (handed over, so the caller can free them before
    /// doing more work), byte offset in the file and 1-based line.
    Sample {
        bytes: Vec<u8>,
        offset: u64,
        line: u64,
    },
    /// An element of `samples` larger than the limit: skipped without being buffered.
    TooLarge { offset: u64, line: u64, bytes: u64 },
    /// The file is not what a JSON log looks like here: the scan stops.
    Error { line: u64, message: String },
}

#[derive(Debug)]
enum State {
    Start,
    /// Expecting a member name (or `}` when `first`).
    Key {
        first: bool,
    },
    Colon(String),
    BeforeValue(String),
    Value(String, Scan),
    AfterMember,
    /// In `samples`, expecting an element (or `]` when `first`).
    Element {
        first: bool,
    },
    Sample(Scan),
    AfterElement,
    Done,
    Failed,
}

/// Progress through one JSON value.
#[derive(Debug, Default)]
struct Scan {
    depth: usize,
    in_string: bool,
    escape: bool,
    /// The value is a scalar (it ends before the first delimiter).
    scalar: bool,
    started: bool,
    /// Skipping: the value passed the size limit; its bytes are dropped as they are scanned.
    skipping: bool,
    /// Bytes of the value dropped while skipping.
    dropped: u64,
    /// The value's file offset and line, kept when its bytes start being dropped.
    origin: Option<(u64, u64)>,
}

impl Scan {
    /// Scans `b[from..]`; `Some(end)` when the value ends at `end` (exclusive).
    fn run(&mut self, b: &[u8], from: usize, eof: bool) -> Option<usize> {
        let mut i = from;
        if !self.started {
            self.started = true;
            self.scalar = !matches!(b.get(i), Some(b'{' | b'[' | b'"'));
        }
        if self.scalar {
            while i < b.len() {
                if matches!(b[i], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    return Some(i);
                }
                i += 1;
            }
            return eof.then_some(i);
        }
        while i < b.len() {
            let c = b[i];
            i += 1;
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if c == b'\\' {
                    self.escape = true;
                } else if c == b'"' {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Some(i);
                    }
                }
                continue;
            }
            match c {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// The incremental reader; see the module documentation.
#[derive(Debug)]
pub(crate) struct JsonLog {
    buf: Vec<u8>,
    /// Scan position in `buf`.
    pos: usize,
    /// Where the value in progress starts in `buf` (everything before it can be dropped).
    mark: usize,
    /// File offset of `buf[0]`.
    base: u64,
    /// Line number at `buf[0]`.
    base_line: u64,
    state: State,
    max_value: usize,
}

/// Members of the log the conversion needs; others are scanned past without being kept.
const KEPT: [&str; 6] = ["version", "status", "eval", "plan", "results", "error"];

impl JsonLog {
    pub(crate) fn new(max_value: usize) -> Self {
        JsonLog {
            buf: Vec::new(),
            pos: 0,
            mark: 0,
            base: 0,
            base_line: 1,
            state: State::Start,
            max_value,
        }
    }

    /// Feeds the next chunk; items found are handed to `f`.
    pub(crate) fn push(&mut self, chunk: &[u8], f: &mut dyn FnMut(Item<'_>)) {
        self.buf.extend_from_slice(chunk);
        self.run(false, f);
        self.compact();
    }

    /// Ends the file: a log cut short is reported.
    pub(crate) fn finish(&mut self, f: &mut dyn FnMut(Item<'_>)) {
        self.run(true, f);
        let line = self.line_at(self.pos.min(self.buf.len()));
        let message = match &self.state {
            State::Done | State::Failed => None,
            State::Start => Some("the file is empty".to_string()),
            State::Element { .. } | State::Sample(_) | State::AfterElement => Some(
                "the log ends inside its `samples` array (is it truncated?); the complete \
                 samples before the cut were read"
                    .to_string(),
            ),
            _ => Some("the log ends in the middle of a JSON value (is it truncated?)".to_string()),
        };
        if let Some(message) = message {
            f(Item::Error { line, message });
        }
        self.state = State::Done;
        self.buf = Vec::new();
    }

    /// Bytes buffered now (for memory tests).
    #[cfg(test)]
    pub(crate) fn buffered(&self) -> usize {
        self.buf.capacity()
    }

    fn line_at(&self, at: usize) -> u64 {
        self.base_line + self.buf[..at].iter().filter(|&&c| c == b'\n').count() as u64
    }

    /// Drops the bytes before the value in progress.
    fn compact(&mut self) {
        let cut = match self.state {
            State::Value(..) | State::Sample(_) => self.mark,
            _ => self.pos,
        };
        if cut == 0 {
            return;
        }
        self.base_line += self.buf[..cut].iter().filter(|&&c| c == b'\n').count() as u64;
        self.base += cut as u64;
        self.buf.drain(..cut);
        self.pos -= cut;
        self.mark -= cut.min(self.mark);
        // Keep the buffer from holding on to a past large value's capacity.
        if self.buf.capacity() > 4 * self.buf.len().max(1 << 20) {
            self.buf.shrink_to(self.buf.len().max(1 << 20));
        }
    }

    fn skip_ws(&mut self) -> Option<u8> {
        while let Some(&c) = self.buf.get(self.pos) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                return Some(c);
            }
        }
        None
    }

    fn fail(&mut self, f: &mut dyn FnMut(Item<'_>), message: String) {
        let line = self.line_at(self.pos.min(self.buf.len()));
        self.state = State::Failed;
        f(Item::Error { line, message });
    }

    fn run(&mut self, eof: bool, f: &mut dyn FnMut(Item<'_>)) {
        loop {
            match std::mem::replace(&mut self.state, State::Failed) {
                State::Start => {
                    if self.base == 0 && self.pos == 0 {
                        if self.buf.len() < 3 && !eof && b"\xEF\xBB\xBF".starts_with(&self.buf) {
                            self.state = State::Start;
                            return;
                        }
                        if self.buf.starts_with(b"\xEF\xBB\xBF") {
                            self.pos = 3;
                        }
                    }
                    match self.skip_ws() {
                        None => {
                            self.state = State::Start;
                            return;
                        }
                        Some(b'{') => {
                            self.pos += 1;
                            self.state = State::Key { first: true };
                        }
                        Some(_) => {
                            return self.fail(f, "an Inspect log is a JSON object".to_string())
                        }
                    }
                }
                State::Key { first } => match self.skip_ws() {
                    None => {
                        self.state = State::Key { first };
                        return;
                    }
                    Some(b'}') if first => {
                        self.pos += 1;
                        self.state = State::Done;
                    }
                    Some(b'"') => {
                        // Member names are short: scan the whole name from its quote.
                        let mut scan = Scan::default();
                        match scan.run(&self.buf, self.pos, false) {
                            Some(end) => {
                                let key =
                                    serde_json::from_slice::<String>(&self.buf[self.pos..end])
                                        .unwrap_or_default();
                                self.pos = end;
                                self.state = State::Colon(key);
                            }
                            None if eof || self.buf.len() - self.pos > 1 << 20 => {
                                return self.fail(f, "a member name never ends".to_string())
                            }
                            None => {
                                self.state = State::Key { first };
                                return;
                            }
                        }
                    }
                    Some(c) => {
                        return self.fail(
                            f,
                            format!("found {:?} where a member name was expected", c as char),
                        )
                    }
                },
                State::Colon(key) => match self.skip_ws() {
                    None => {
                        self.state = State::Colon(key);
                        return;
                    }
                    Some(b':') => {
                        self.pos += 1;
                        self.state = State::BeforeValue(key);
                    }
                    Some(c) => {
                        return self
                            .fail(f, format!("found {:?} where ':' was expected", c as char))
                    }
                },
                State::BeforeValue(key) => match self.skip_ws() {
                    None => {
                        self.state = State::BeforeValue(key);
                        return;
                    }
                    Some(b'[') if key == "samples" => {
                        self.pos += 1;
                        f(Item::SamplesBegin);
                        self.state = State::Element { first: true };
                    }
                    Some(_) => {
                        self.mark = self.pos;
                        self.state = State::Value(key, Scan::default());
                    }
                },
                State::Value(key, mut scan) => {
                    // Members the conversion does not read (`stats`, `reductions`, …) are never
                    // kept: skipped as they are scanned.
                    scan.skipping |= !KEPT.contains(&key.as_str());
                    match self.scan_value(&mut scan, eof) {
                        Some(end) => {
                            if !scan.skipping {
                                f(Item::Member {
                                    key: &key,
                                    bytes: &self.buf[self.mark..end],
                                });
                            } else if KEPT.contains(&key.as_str()) {
                                let line = self.line_at(self.mark);
                                f(Item::Error {
                                    line,
                                    message: format!(
                                        "the log's `{key}` is larger than {} MiB: not read",
                                        self.max_value >> 20
                                    ),
                                });
                            }
                            self.pos = end;
                            self.state = State::AfterMember;
                        }
                        None => {
                            self.state = State::Value(key, scan);
                            return;
                        }
                    }
                }
                State::AfterMember => match self.skip_ws() {
                    None => {
                        self.state = State::AfterMember;
                        return;
                    }
                    Some(b',') => {
                        self.pos += 1;
                        self.state = State::Key { first: false };
                    }
                    Some(b'}') => {
                        self.pos += 1;
                        self.state = State::Done;
                    }
                    Some(c) => {
                        return self.fail(
                            f,
                            format!("found {:?} where ',' or '}}' was expected", c as char),
                        )
                    }
                },
                State::Element { first } => match self.skip_ws() {
                    None => {
                        self.state = State::Element { first };
                        return;
                    }
                    Some(b']') if first => {
                        self.pos += 1;
                        self.state = State::AfterMember;
                    }
                    Some(_) => {
                        self.mark = self.pos;
                        self.state = State::Sample(Scan::default());
                    }
                },
                State::Sample(mut scan) => match self.scan_value(&mut scan, eof) {
                    Some(end) => {
                        let (offset, line) = scan
                            .origin
                            .unwrap_or((self.base + self.mark as u64, self.line_at(self.mark)));
                        if scan.skipping {
                            f(Item::TooLarge {
                                offset,
                                line,
                                bytes: scan.dropped + (end - self.mark) as u64,
                            });
                        } else {
                            // Hand the element's bytes over without copying them: the buffer
                            // keeps what follows the element.
                            let tail = self.buf.split_off(end);
                            let mut bytes = std::mem::replace(&mut self.buf, tail);
                            self.base_line += bytes.iter().filter(|&&c| c == b'\n').count() as u64;
                            self.base += end as u64;
                            bytes.drain(..self.mark);
                            self.mark = 0;
                            self.pos = 0;
                            self.state = State::AfterElement;
                            f(Item::Sample {
                                bytes,
                                offset,
                                line,
                            });
                            continue;
                        }
                        self.pos = end;
                        self.state = State::AfterElement;
                    }
                    None => {
                        self.state = State::Sample(scan);
                        return;
                    }
                },
                State::AfterElement => match self.skip_ws() {
                    None => {
                        self.state = State::AfterElement;
                        return;
                    }
                    Some(b',') => {
                        self.pos += 1;
                        self.state = State::Element { first: false };
                    }
                    Some(b']') => {
                        self.pos += 1;
                        self.state = State::AfterMember;
                    }
                    Some(c) => {
                        return self.fail(
                            f,
                            format!(
                                "found {:?} where ',' or ']' was expected in `samples`",
                                c as char
                            ),
                        )
                    }
                },
                State::Done => {
                    self.state = State::Done;
                    // Anything but whitespace after the log is reported once.
                    match self.skip_ws() {
                        None => return,
                        Some(_) => {
                            return self.fail(
                                f,
                                "unexpected data after the end of the log; ignored".to_string(),
                            )
                        }
                    }
                }
                State::Failed => {
                    self.pos = self.buf.len();
                    return;
                }
            }
        }
    }

    /// Scans the value in progress (from `self.mark`) with `scan`, dropping its bytes once it
    /// is known to be over the limit.
    fn scan_value(&mut self, scan: &mut Scan, eof: bool) -> Option<usize> {
        let from = self.pos.max(self.mark);
        let end = scan.run(&self.buf, from, eof);
        match end {
            Some(end) => Some(end),
            None => {
                self.pos = self.buf.len();
                if !scan.skipping && self.buf.len() - self.mark > self.max_value {
                    scan.skipping = true;
                }
                if scan.skipping {
                    if scan.origin.is_none() {
                        scan.origin = Some((self.base + self.mark as u64, self.line_at(self.mark)));
                    }
                    let dropped = self.buf.len() - self.mark;
                    scan.dropped += dropped as u64;
                    self.base_line += self.buf[..].iter().filter(|&&c| c == b'\n').count() as u64;
                    self.base += self.buf.len() as u64;
                    self.buf.clear();
                    self.pos = 0;
                    self.mark = 0;
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum Got {
        Member(String, String),
        Begin,
        Sample(String, u64, u64),
        TooLarge(u64, u64),
        Error(u64, String),
    }

    fn read(text: &[u8], chunk: usize, max: usize) -> Vec<Got> {
        let mut log = JsonLog::new(max);
        let mut got = Vec::new();
        let mut f = |i: Item<'_>| {
            got.push(match i {
                Item::Member { key, bytes } => {
                    Got::Member(key.to_string(), String::from_utf8_lossy(bytes).into())
                }
                Item::SamplesBegin => Got::Begin,
                Item::Sample {
                    bytes,
                    offset,
                    line,
                } => Got::Sample(String::from_utf8_lossy(&bytes).into(), offset, line),
                Item::TooLarge { offset, bytes, .. } => Got::TooLarge(offset, bytes),
                Item::Error { line, message } => Got::Error(line, message),
            })
        };
        for c in text.chunks(chunk.max(1)) {
            log.push(c, &mut f);
        }
        log.finish(&mut f);
        got
    }

    const LOG: &str = "{\n \"version\": 2,\n \"status\": \"success\",\n \"eval\": {\"task\": \"t]\\\"\"},\n \"stats\": {\"x\": [1, {\"y\": \"}\"}]},\n \"samples\": [\n  {\"id\": 1, \"s\": \"a,]\"},\n  {\"id\": \"b\"}\n ],\n \"reductions\": []\n}\n";

    #[test]
    fn members_and_samples_whatever_the_chunking() {
        let want = read(LOG.as_bytes(), LOG.len(), 1 << 20);
        assert_eq!(
            want,
            vec![
                Got::Member("version".into(), "2".into()),
                Got::Member("status".into(), "\"success\"".into()),
                Got::Member("eval".into(), "{\"task\": \"t]\\\"\"}".into()),
                Got::Begin,
                Got::Sample(
                    "{\"id\": 1, \"s\": \"a,]\"}".into(),
                    LOG.find("{\"id\": 1").unwrap() as u64,
                    7
                ),
                Got::Sample(
                    "{\"id\": \"b\"}".into(),
                    LOG.find("{\"id\": \"b").unwrap() as u64,
                    8
                ),
            ]
        );
        let at = want.iter().find_map(|g| match g {
            Got::Sample(s, o, _) if s.contains("\"b\"") => Some(*o as usize),
            _ => None,
        });
        assert_eq!(&LOG[at.unwrap()..at.unwrap() + 11], "{\"id\": \"b\"}");
        for chunk in 1..40 {
            assert_eq!(read(LOG.as_bytes(), chunk, 1 << 20), want, "chunk {chunk}");
        }
    }

    #[test]
    fn truncation_and_garbage() {
        let cut = &LOG[..LOG.find("{\"id\": \"b").unwrap() + 4];
        let got = read(cut.as_bytes(), 7, 1 << 20);
        assert!(matches!(got.last(), Some(Got::Error(_, m)) if m.contains("truncated")));
        assert_eq!(
            got.iter().filter(|g| matches!(g, Got::Sample(..))).count(),
            1
        );
        let got = read(b"[1, 2]", 3, 1 << 20);
        assert!(matches!(&got[..], [Got::Error(1, m)] if m.contains("JSON object")));
        let got = read(b"{\"samples\": [{}] x", 3, 1 << 20);
        assert!(matches!(got.last(), Some(Got::Error(_, m)) if m.contains("',' or '}'")));
        let got = read(b"{} trailing", 3, 1 << 20);
        assert!(matches!(got.last(), Some(Got::Error(_, m)) if m.contains("after the end")));
        assert!(matches!(&read(b"", 3, 10)[..], [Got::Error(_, m)] if m.contains("empty")));
    }

    #[test]
    fn an_oversized_sample_is_skipped_unbuffered() {
        let big = format!(
            "{{\"samples\": [{{\"x\": \"{}\"}}, {{\"id\": 2}}]}}",
            "y".repeat(5000)
        );
        let mut log = JsonLog::new(1000);
        let mut got = Vec::new();
        let mut peak = 0;
        for c in big.as_bytes().chunks(100) {
            log.push(c, &mut |i| {
                got.push(match i {
                    Item::Sample { bytes, .. } => String::from_utf8_lossy(&bytes).into(),
                    Item::TooLarge { bytes, offset, .. } => {
                        format!("too large {bytes} at {offset}")
                    }
                    _ => String::new(),
                })
            });
            peak = peak.max(log.buffered());
        }
        log.finish(&mut |_| {});
        assert!(peak < 1 << 20, "{peak}");
        assert_eq!(
            got.into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>(),
            vec!["too large 5009 at 13".to_string(), "{\"id\": 2}".into()]
        );
    }
}
