//! Just enough of Python's literal syntax to read BFCL tool outputs.
//!
//! BFCL's executors return Python objects and the harness logs them with `str()`, so a failed
//! call often reads `{'error': 'No such file'}` rather than JSON. To apply the rule "an object
//! with an `error` key is a rejection" to those outputs too, this module parses Python reprs of
//! dicts, lists, tuples and sets of strings, numbers, `None`/`True`/`False`, names, calls such as
//! `mpf('0.3')` and `<Directory: …>` placeholders. Only the shape and string keys are kept.
//! Anything it cannot read is `None`, and the caller then treats the output as a plain value.

/// A parsed Python value, reduced to what the rejection rule looks at.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Py {
    Dict(Vec<(Py, Py)>),
    List(Vec<Py>),
    Str(String),
    Other,
}

impl Py {
    /// A dict with the string key `key`.
    pub(crate) fn has_key(&self, key: &str) -> bool {
        matches!(self, Py::Dict(items) if items.iter().any(|(k, _)| *k == Py::Str(key.to_string())))
    }
}

/// Nesting deeper than this is not read (tool outputs are shallow; this bounds recursion).
const MAX_DEPTH: usize = 64;

/// Parses a whole string as one Python literal.
pub(crate) fn parse(text: &str) -> Option<Py> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Py> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'{' => {
                self.i += 1;
                self.dict(depth)
            }
            b'[' => {
                self.i += 1;
                self.seq(b']', depth).map(Py::List)
            }
            b'(' => {
                self.i += 1;
                self.seq(b')', depth).map(Py::List)
            }
            b'\'' | b'"' => self.string().map(Py::Str),
            b'<' => self.placeholder(),
            b'-' | b'+' | b'.' | b'0'..=b'9' => self.number(),
            c if c.is_ascii_alphabetic() || c == b'_' => self.name(depth),
            _ => None,
        }
    }

    /// `{k: v, …}`, or a set `{a, b}` (kept as a list).
    fn dict(&mut self, depth: usize) -> Option<Py> {
        let mut items = Vec::new();
        let mut set = Vec::new();
        if self.eat(b'}') {
            return Some(Py::Dict(items));
        }
        loop {
            let k = self.value(depth + 1)?;
            if self.eat(b':') {
                let v = self.value(depth + 1)?;
                items.push((k, v));
            } else {
                set.push(k);
            }
            if self.eat(b',') {
                if self.eat(b'}') {
                    break;
                }
                continue;
            }
            if self.eat(b'}') {
                break;
            }
            return None;
        }
        match (items.is_empty(), set.is_empty()) {
            (_, true) => Some(Py::Dict(items)),
            (true, false) => Some(Py::List(set)),
            (false, false) => None,
        }
    }

    /// Items up to `close`, allowing a trailing comma.
    fn seq(&mut self, close: u8, depth: usize) -> Option<Vec<Py>> {
        let mut items = Vec::new();
        if self.eat(close) {
            return Some(items);
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat(b',') {
                if self.eat(close) {
                    return Some(items);
                }
                continue;
            }
            return self.eat(close).then_some(items);
        }
    }

    /// A quoted string, optionally triple-quoted; common escapes are decoded.
    fn string(&mut self) -> Option<String> {
        let q = self.peek()?;
        let triple = self.s[self.i..].starts_with(&[q, q, q]);
        self.i += if triple { 3 } else { 1 };
        let mut out = Vec::new();
        loop {
            let c = self.peek()?;
            if c == q && (!triple || self.s[self.i..].starts_with(&[q, q, q])) {
                self.i += if triple { 3 } else { 1 };
                return Some(String::from_utf8_lossy(&out).into_owned());
            }
            if c == b'\\' {
                let e = *self.s.get(self.i + 1)?;
                out.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    other => other,
                });
                self.i += 2;
            } else {
                out.push(c);
                self.i += 1;
            }
        }
    }

    /// `<…>` as `repr()` prints objects without a literal form; nested `<…>` are balanced.
    fn placeholder(&mut self) -> Option<Py> {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'<' => depth += 1,
                b'>' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(Py::Other);
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn number(&mut self) -> Option<Py> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_') {
                self.i += 1;
            } else {
                break;
            }
        }
        (self.i > start).then_some(Py::Other)
    }

    /// A name (`None`, `True`, `inf`, `datetime.date`), a string with a prefix (`b'x'`), or a
    /// call `name(args…)` with positional or keyword arguments.
    fn name(&mut self, depth: usize) -> Option<Py> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
                self.i += 1;
            } else {
                break;
            }
        }
        let name = &self.s[start..self.i];
        if name.len() <= 2
            && name.iter().all(|c| b"rRbBuUfF".contains(c))
            && matches!(self.peek(), Some(b'\'' | b'"'))
        {
            return self.string().map(Py::Str);
        }
        if self.peek() == Some(b'(') {
            self.i += 1;
            if self.eat(b')') {
                return Some(Py::Other);
            }
            loop {
                self.ws();
                // A keyword argument: `name=value`.
                let save = self.i;
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric() || c == b'_' {
                        self.i += 1;
                    } else {
                        break;
                    }
                }
                if !(self.i > save && self.eat(b'=')) {
                    self.i = save;
                }
                self.value(depth + 1)?;
                if self.eat(b',') {
                    if self.eat(b')') {
                        break;
                    }
                    continue;
                }
                if self.eat(b')') {
                    break;
                }
                return None;
            }
        }
        Some(Py::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bfcl_outputs() {
        assert!(parse("{'error': 'No such file'}").unwrap().has_key("error"));
        assert!(parse(r#"{"error": "x", 'b': [1, 2.5e-3, None, True]}"#)
            .unwrap()
            .has_key("error"));
        let list = parse("[{'id': 1, 'error': \"it's\"}, {'id': 2}]").unwrap();
        match list {
            Py::List(items) => assert!(items[0].has_key("error") && !items[1].has_key("error")),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse("{'result': mpf('0.30102999566398114')}").map(|p| p.has_key("result")),
            Some(true)
        );
        assert_eq!(
            parse("['RMS', 'SBK']"),
            Some(Py::List(vec![Py::Str("RMS".into()), Py::Str("SBK".into())]))
        );
        assert_eq!(parse("None"), Some(Py::Other));
        assert_eq!(parse("(1,)"), Some(Py::List(vec![Py::Other])));
        assert!(
            parse("{'root': <Directory: a, Contents: {'b': <<File: b>>}>}")
                .unwrap()
                .has_key("root")
        );
        assert_eq!(parse("{1, 2}"), Some(Py::List(vec![Py::Other, Py::Other])));
        assert_eq!(parse("f(x=1, 'y')"), Some(Py::Other));
        assert_eq!(parse("b'bytes'"), Some(Py::Str("bytes".into())));
        assert_eq!(parse("'''tri'ple'''"), Some(Py::Str("tri'ple".into())));
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        for bad in [
            "",
            "{",
            "{'a' 1}",
            "[1 2]",
            "'open",
            "Error during execution: x",
            "{'a': 1, 2}",
            "<a",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        let deep = "[".repeat(10_000);
        assert_eq!(parse(&deep), None);
    }
}
