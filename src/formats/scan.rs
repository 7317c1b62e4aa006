//! A structural scanner for whole JSON documents: it finds where the members of the top-level
//! object and the elements of an array begin and end, without building a value tree.
//!
//! Why not just `serde_json::from_slice` the document? Two reasons. A released run is often
//! truncated (an interrupted download, a partial copy): a whole-document parse then fails and
//! keeps nothing, whereas scanning element by element keeps every complete rollout before the
//! cut. And each element is then parsed on its own, so a wrong type in one rollout costs that
//! rollout only, with its byte range and line number for the diagnostic and for re-reading.
//!
//! The scanner trusts serde to validate each element afterwards: it only tracks strings (with
//! escapes) and bracket depth. It is iterative, so deep nesting cannot overflow the stack.

// The loops every document read runs through, compiled for speed in the browser's worker (the
// kernel crate's opt-level; this crate's is for size there).
pub(crate) use prefix_exec_kernel::json::{skip_ws, string_end, value_end, ScanError};

/// A byte range `start..end` of the scanned buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
}

/// Iterates over the elements of the array whose `[` is at `open`; each item is the element's
/// span or the error that ended the scan (after which the iterator is exhausted).
pub(crate) struct Elements<'a> {
    b: &'a [u8],
    at: usize,
    first: bool,
    done: bool,
    closed: bool,
}

pub(crate) fn elements(b: &[u8], open: usize) -> Elements<'_> {
    Elements {
        b,
        at: open + 1,
        first: true,
        done: false,
        closed: false,
    }
}

impl Elements<'_> {
    /// Just after the closing `]`, once the array was read to its end without error.
    pub(crate) fn closed_at(&self) -> Option<usize> {
        self.closed.then_some(self.at)
    }

    fn fail(&mut self, e: ScanError) -> Option<Result<Span, ScanError>> {
        self.done = true;
        Some(Err(e))
    }
}

impl<'a> Elements<'a> {
    /// Where the next element starts, or the iterator's last item (`Some(None)`: the end).
    fn start(&mut self) -> Result<usize, Option<Result<Span, ScanError>>> {
        if self.done {
            return Err(None);
        }
        let b = self.b;
        let mut i = skip_ws(b, self.at);
        match b.get(i) {
            None => return Err(self.fail(ScanError::Truncated)),
            Some(b']') => {
                self.done = true;
                self.closed = true;
                self.at = i + 1;
                return Err(None);
            }
            Some(b',') if !self.first => i = skip_ws(b, i + 1),
            Some(&found) if !self.first => {
                return Err(self.fail(ScanError::Unexpected {
                    at: i,
                    found,
                    expected: "',' or ']'",
                }))
            }
            Some(_) => {}
        }
        self.first = false;
        Ok(i)
    }

    /// The next element, as [`Iterator::next`] gives it, read by `read` where it can: `read`
    /// gets the bytes from the element's start to the buffer's end and returns what it read and
    /// the length of the one JSON value it read there (valid JSON, so `value_end` would end
    /// the element there too), or `None` to have the element scanned as usual (its value is
    /// then `None`). The elements are the iterator's either way.
    pub(crate) fn next_read<T>(
        &mut self,
        read: impl FnOnce(&'a [u8]) -> Option<(T, usize)>,
    ) -> Option<Result<(Span, Option<T>), ScanError>> {
        let i = match self.start() {
            Ok(i) => i,
            Err(last) => return last.map(|r| r.map(|span| (span, None))),
        };
        let b: &'a [u8] = self.b;
        if let Some((value, len)) = read(&b[i..]) {
            let end = i + len;
            self.at = end;
            return Some(Ok((Span { start: i, end }, Some(value))));
        }
        self.value_at(i).map(|r| r.map(|span| (span, None)))
    }

    fn value_at(&mut self, i: usize) -> Option<Result<Span, ScanError>> {
        match value_end(self.b, i) {
            Ok(end) => {
                self.at = end;
                Some(Ok(Span { start: i, end }))
            }
            Err(e) => self.fail(e),
        }
    }
}

impl Iterator for Elements<'_> {
    type Item = Result<Span, ScanError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.start() {
            Ok(i) => self.value_at(i),
            Err(last) => last,
        }
    }
}

/// One member of an object: its key and where its value starts. `value` is `Err` when the
/// buffer ends inside the value (the value may still be an array worth scanning for its
/// complete elements).
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub key: String,
    pub start: usize,
    pub value: Result<Span, ScanError>,
}

/// The members of the object whose `{` is at `open`, in order, up to the first problem; the
/// problem, if any, comes second.
pub(crate) fn members(b: &[u8], open: usize) -> (Vec<Member>, Option<ScanError>) {
    let scanned = scan_object(b, open, None);
    (scanned.members, scanned.problem)
}

/// A document's top-level object as [`members`] reads it, kept so that a reader does not scan
/// the document again after it was classified.
#[derive(Clone, Debug)]
pub(crate) struct Scanned {
    /// Where the object's `{` is.
    pub open: usize,
    pub members: Vec<Member>,
    pub problem: Option<ScanError>,
    /// What [`value_end`] gives for the object (just after its `}`), when the scan tells it
    /// without scanning again: the object was read to its end without a problem and no member's
    /// bare value (a number or literal) holds a quote or a bracket (`value_end` would read
    /// those differently). `None`: ask `value_end`.
    pub end: Option<usize>,
}

/// Where the value of the object's first member named `key` starts (the `start` [`members`]
/// gives it), found without reading that value or anything after it; `None` where `members`
/// would not list such a member.
pub(crate) fn member_start(b: &[u8], open: usize, key: &str) -> Option<usize> {
    let scanned = scan_members(b, open, Some(key), true);
    let last = scanned.members.last()?;
    (last.key == key).then_some(last.start)
}

/// The object whose `{` is at `open`, as [`members`] reads it, stopping after the member named
/// `stop` when there is one (nothing after it is read then: no problem and no `end`).
pub(crate) fn scan_object(b: &[u8], open: usize, stop: Option<&str>) -> Scanned {
    scan_members(b, open, stop, false)
}

/// [`scan_object`]; `before_value`: stop at the member named `stop` before reading its value
/// (its `value` is then a placeholder).
fn scan_members(b: &[u8], open: usize, stop: Option<&str>, before_value: bool) -> Scanned {
    let mut out = Vec::new();
    // Whether the object's end as found here is `value_end`'s.
    let mut plain = true;
    let done = |members, problem: Option<ScanError>, end: Option<usize>, plain: bool| Scanned {
        open,
        members,
        end: end.filter(|_| plain && problem.is_none()),
        problem,
    };
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b'}') {
        return done(out, None, Some(i + 1), plain);
    }
    loop {
        match b.get(i) {
            None => return done(out, Some(ScanError::Truncated), None, plain),
            Some(b'"') => {}
            Some(&found) => {
                let problem = ScanError::Unexpected {
                    at: i,
                    found,
                    expected: "a member name in double quotes",
                };
                return done(out, Some(problem), None, plain);
            }
        }
        let key_end = match string_end(b, i) {
            Ok(e) => e,
            Err(e) => return done(out, Some(e), None, plain),
        };
        let key = serde_json::from_slice::<String>(&b[i..key_end])
            .unwrap_or_else(|_| String::from_utf8_lossy(&b[i + 1..key_end - 1]).into_owned());
        i = skip_ws(b, key_end);
        match b.get(i) {
            Some(b':') => {}
            None => return done(out, Some(ScanError::Truncated), None, plain),
            Some(&found) => {
                let problem = ScanError::Unexpected {
                    at: i,
                    found,
                    expected: "':'",
                };
                return done(out, Some(problem), None, plain);
            }
        }
        let start = skip_ws(b, i + 1);
        if before_value && stop.is_some_and(|k| k == key) {
            let value = Err(ScanError::Truncated);
            out.push(Member { key, start, value });
            return done(out, None, None, plain);
        }
        let value = value_end(b, start).map(|end| Span { start, end });
        if let Ok(span) = &value {
            if !matches!(b[span.start], b'"' | b'{' | b'[') {
                plain &= !b[span.start..span.end]
                    .iter()
                    .any(|c| matches!(c, b'"' | b'{' | b'['));
            }
        }
        let next = value.as_ref().ok().map(|s| s.end);
        let err = value.as_ref().err().cloned();
        let stopped = stop.is_some_and(|k| k == key);
        out.push(Member { key, start, value });
        let Some(next) = next else {
            return done(out, err, None, plain);
        };
        if stopped {
            return done(out, None, None, plain);
        }
        i = skip_ws(b, next);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return done(out, None, Some(i + 1), plain),
            None => return done(out, Some(ScanError::Truncated), None, plain),
            Some(&found) => {
                let problem = ScanError::Unexpected {
                    at: i,
                    found,
                    expected: "',' or '}'",
                };
                return done(out, Some(problem), None, plain);
            }
        }
    }
}

/// Turns byte offsets into 1-based line numbers; offsets must be asked in increasing order
/// for the counting to stay linear.
pub(crate) struct LineCounter<'a> {
    b: &'a [u8],
    pos: usize,
    line: u64,
}

impl<'a> LineCounter<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        LineCounter { b, pos: 0, line: 1 }
    }

    pub(crate) fn line_at(&mut self, offset: usize) -> u64 {
        let offset = offset.min(self.b.len());
        if offset < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        self.line += memchr::memchr_iter(b'\n', &self.b[self.pos..offset]).count() as u64;
        self.pos = offset;
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scans as they were before they skipped eight bytes at a time: one byte at a time.
    fn skip_ws_bytewise(b: &[u8], mut i: usize) -> usize {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    }

    fn value_end_bytewise(b: &[u8], i: usize) -> Result<usize, ScanError> {
        match b.get(i) {
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                let mut j = i;
                while j < b.len() {
                    match b[j] {
                        b'"' => {
                            j = string_end(b, j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                Err(ScanError::Truncated)
            }
            _ => value_end(b, i),
        }
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// Word-at-a-time scans end where byte-at-a-time ones do, on any bytes: JSON's
        /// structural bytes and whitespace in runs of any length against the eight-byte words,
        /// the bytes one bit from a bracket (`;`, `_`, `y`, `}`'s neighbours), and any byte.
        #[test]
        fn word_scans_equal_byte_scans(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![
                        "{", "}", "[", "]", "\"", "\\", " ", "        ", "\n", "\t", ":", ",",
                        "1", "null", "a", "[[", "]]", ";", "_", "y", "{\"k\": ", "\u{e9}",
                    ]).prop_map(|s| s.as_bytes().to_vec()),
                    proptest::num::u8::ANY.prop_map(|c| vec![c]),
                ],
                0..80,
            ),
            start in 0usize..16,
        ) {
            let b: Vec<u8> = parts.concat();
            for i in [start.min(b.len()), skip_ws_bytewise(&b, 0)] {
                proptest::prop_assert_eq!(skip_ws(&b, i), skip_ws_bytewise(&b, i));
                if i < b.len() {
                    proptest::prop_assert_eq!(value_end(&b, i), value_end_bytewise(&b, i));
                }
            }
        }
    }

    fn spans(text: &str) -> Vec<Result<String, ScanError>> {
        let b = text.as_bytes();
        let open = skip_ws(b, 0);
        elements(b, open)
            .map(|r| r.map(|s| text[s.start..s.end].to_string()))
            .collect()
    }

    #[test]
    fn elements_of_an_array() {
        let got = spans(r#" [ {"a": "x]}\"{"}, [1, [2]], "s", 3.5e2 , null ] "#);
        let want = [r#"{"a": "x]}\"{"}"#, "[1, [2]]", r#""s""#, "3.5e2", "null"];
        assert_eq!(got, want.map(|s| Ok(s.to_string())).to_vec());
        assert!(spans("[]").is_empty());
        assert!(spans(" [ \n ] ").is_empty());
    }

    /// Elements read where they start are the elements scanned: the same spans and errors,
    /// whether the reader reads an element or declines it.
    #[test]
    fn elements_read_where_they_start_are_the_scanned_ones() {
        let read = |b: &[u8]| {
            if b.first() != Some(&b'{') {
                return None;
            }
            let mut it = serde_json::Deserializer::from_slice(b).into_iter::<serde_json::Value>();
            let v = it.next()?.ok()?;
            Some((v, it.byte_offset()))
        };
        let cases = [
            r#"[{"a": "x]}\"{"}, [1, [2]], "s", 3.5e2 , null, {"b": {"c": [1, {}]}} ]"#,
            r#"[{"a":1}, {"b":2}, {"c": [3"#,
            r#"[{"a":1} {"b":2}]"#,
            r#"[{"a":1,}, {"b":2}]"#,
            r#"[{"a": tru}, {"b":2}]"#,
            r#"[ ]"#,
            r#"[{"a":1}"#,
        ];
        for text in cases {
            let b = text.as_bytes();
            let want: Vec<_> = elements(b, 0).collect();
            let mut it = elements(b, 0);
            let mut got = Vec::new();
            while let Some(r) = it.next_read(read) {
                got.push(r.map(|(span, v)| {
                    if let Some(v) = v {
                        let whole: serde_json::Value =
                            serde_json::from_slice(&b[span.start..span.end]).unwrap();
                        assert_eq!(v, whole, "{text}");
                    }
                    span
                }));
            }
            assert_eq!(got, want, "{text}");
            let mut scanned = elements(b, 0);
            scanned.by_ref().for_each(drop);
            assert_eq!(it.closed_at(), scanned.closed_at(), "{text}");
        }
    }

    #[test]
    fn a_truncated_array_keeps_its_complete_elements() {
        let got = spans(r#"[{"a":1}, {"b":2}, {"c": [3"#);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], Ok(r#"{"a":1}"#.to_string()));
        assert_eq!(got[1], Ok(r#"{"b":2}"#.to_string()));
        assert_eq!(got[2], Err(ScanError::Truncated));
        assert_eq!(spans(r#"[{"a":1}"#)[1], Err(ScanError::Truncated));
        assert!(matches!(
            spans(r#"[1 2]"#)[1],
            Err(ScanError::Unexpected { found: b'2', .. })
        ));
    }

    #[test]
    fn members_of_an_object() {
        let text = r#"{"info": {"x": [1]}, "a\"b": "}", "simulations": [{"id": 1}, {"id"#;
        let (m, err) = members(text.as_bytes(), 0);
        assert_eq!(err, Some(ScanError::Truncated));
        let keys: Vec<&str> = m.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["info", "a\"b", "simulations"]);
        let info = m[0].value.as_ref().unwrap();
        assert_eq!(&text[info.start..info.end], r#"{"x": [1]}"#);
        assert_eq!(m[2].value, Err(ScanError::Truncated));
        // The truncated array still yields its complete element.
        let sims: Vec<_> = elements(text.as_bytes(), m[2].start).collect();
        assert!(sims[0].is_ok() && sims[1].is_err());
        let (m, err) = members(b"{}", 0);
        assert!(m.is_empty() && err.is_none());
    }

    /// The object's scan says where it ends only where `value_end` says the same, and reads the
    /// members `members` reads; stopping at a member reads the members up to it.
    #[test]
    fn a_scanned_object_ends_where_value_end_says() {
        let cases = [
            r#"{}"#,
            r#" { } "#,
            r#"{"a": 1, "b": [1, {"c": "}"}], "d": "x\"]", "e": null}"#,
            r#"{"a": n"}"#,
            r#"{"a": n"}, "b": "}"}"#,
            r#"{"a": 1[, "b": 2}"#,
            r#"{"a": 1{}"#,
            r#"{"a": tru"e"}"#,
            r#"{"a": 1]"#,
            r#"{"a": 1 "b": 2}"#,
            r#"{"a": [1, 2}"#,
            r#"{"a": {"b": 1}"#,
            r#"{"a" 1}"#,
            r#"{1: 2}"#,
            r#"{"a": 1,}"#,
            r#"{"a": "#,
            r#"{"a": -}"#,
            r#"{"a": ]}"#,
        ];
        for text in cases {
            let b = text.as_bytes();
            let open = skip_ws(b, 0);
            let scanned = scan_object(b, open, None);
            if let Some(end) = scanned.end {
                assert_eq!(value_end(b, open), Ok(end), "{text}");
            }
            let (m, problem) = members(b, open);
            assert_eq!(scanned.problem, problem, "{text}");
            let keys = |m: &[Member]| m.iter().map(|m| m.key.clone()).collect::<Vec<_>>();
            assert_eq!(keys(&scanned.members), keys(&m), "{text}");
            let stopped = scan_object(b, open, Some("b"));
            let upto = m
                .iter()
                .position(|m| m.key == "b")
                .map_or(m.len(), |i| i + 1);
            assert_eq!(keys(&stopped.members), keys(&m[..upto]), "{text}");
            let b_start = m.iter().find(|m| m.key == "b").map(|m| m.start);
            assert_eq!(member_start(b, open, "b"), b_start, "{text}");
        }
        let plain = br#"{"a": 1, "b": [1, {"c": "}"}], "d": "x\"]", "e": null}"#;
        assert_eq!(scan_object(plain, 0, None).end, Some(plain.len()));
        assert_eq!(scan_object(br#"{"a": n"}"#, 0, None).end, None);
    }

    #[test]
    fn line_numbers() {
        let b = b"a\nb\n\nc";
        let mut lc = LineCounter::new(b);
        assert_eq!(lc.line_at(0), 1);
        assert_eq!(lc.line_at(2), 2);
        assert_eq!(lc.line_at(5), 4);
        assert_eq!(lc.line_at(1), 1);
    }
}
