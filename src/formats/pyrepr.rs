//! Just enough of Python's literal syntax to read what harnesses log with `str()`/`repr()`.
//!
//! Two formats need it. BFCL's executors return Python objects and the harness logs them with
//! `str()`, so a failed call often reads `{'error': 'No such file'}` rather than JSON; the rule
//! "an object with an `error` key is a rejection" applies to those outputs through
//! [`Py::has_key`]. ToolSandbox logs a call's parameters as the `repr` of what `json.loads`
//! gave, which [`Py::to_json`] turns back into JSON.
//!
//! The parser reads dicts, lists, tuples and sets of strings (quoted, triple-quoted, prefixed,
//! with `repr`'s escapes), numbers, `None`/`True`/`False`, other names, calls such as
//! `mpf('0.3')` and `<Directory: …>` placeholders. Anything it cannot read is `None`, and the
//! caller then treats the text as a plain value.

use serde_json::{Map, Value};

/// A parsed Python value. Names other than the three constants, calls and `<…>` placeholders
/// are [`Py::Other`]: their shape is known, their value is not.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Py {
    Dict(Vec<(Py, Py)>),
    /// A list or a tuple.
    List(Vec<Py>),
    Set(Vec<Py>),
    Str(String),
    /// A number as written (`-3`, `1e-05`, `0x1F`, `1_000`).
    Number(String),
    Bool(bool),
    None,
    Other,
}

impl Py {
    /// A dict with the string key `key`.
    pub(crate) fn has_key(&self, key: &str) -> bool {
        matches!(self, Py::Dict(items) if items.iter().any(|(k, _)| matches!(k, Py::Str(s) if s == key)))
    }

    /// The JSON value `json.loads` would have given, when the literal is one: string keys only,
    /// no sets, no other names, and numbers JSON can hold (not `inf`/`nan`). A repeated key keeps
    /// its last value, as in Python.
    pub(crate) fn to_json(&self) -> Option<Value> {
        Some(match self {
            Py::Dict(items) => {
                let mut map = Map::new();
                for (k, v) in items {
                    let Py::Str(k) = k else { return None };
                    map.insert(k.clone(), v.to_json()?);
                }
                Value::Object(map)
            }
            Py::List(items) => Value::Array(items.iter().map(Py::to_json).collect::<Option<_>>()?),
            Py::Str(s) => Value::String(s.clone()),
            Py::Number(t) => number_to_json(t)?,
            Py::Bool(b) => Value::Bool(*b),
            Py::None => Value::Null,
            Py::Set(_) | Py::Other => return None,
        })
    }
}

fn number_to_json(t: &str) -> Option<Value> {
    if let Ok(n) = t.parse::<i64>() {
        return Some(n.into());
    }
    if let Ok(n) = t.parse::<u64>() {
        return Some(n.into());
    }
    // Python's float repr is valid Rust float syntax, except `inf`/`nan`, which JSON lacks
    // (and which Rust would parse, so they are refused here).
    if !t.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let f: f64 = t.parse().ok()?;
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// Nesting deeper than this is not read (logged literals are shallow; this bounds recursion).
const MAX_DEPTH: usize = 64;

/// Parses a whole string as one Python literal.
pub(crate) fn parse(text: &str) -> Option<Py> {
    let mut p = Parser { text, i: 0 };
    let v = p.value(0)?;
    p.ws();
    (p.i == text.len()).then_some(v)
}

/// The string literal `text` starts with, ignoring what follows it.
pub(crate) fn leading_string(text: &str) -> Option<String> {
    Parser { text, i: 0 }.string()
}

struct Parser<'a> {
    text: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.i).copied()
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

    /// Advances over bytes `keep` accepts; true when there was at least one.
    fn take_while(&mut self, keep: impl Fn(u8) -> bool) -> bool {
        let start = self.i;
        while self.peek().is_some_and(&keep) {
            self.i += 1;
        }
        self.i > start
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

    /// `{k: v, …}`, or a set `{a, b}`.
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
            (true, false) => Some(Py::Set(set)),
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

    /// A quoted string, optionally triple-quoted, with its escapes decoded as `repr` writes
    /// them. A line break inside a single-quoted string is not Python, so it is refused.
    fn string(&mut self) -> Option<String> {
        let q = self.peek().filter(|c| matches!(c, b'\'' | b'"'))?;
        let triple = self.bytes()[self.i..].starts_with(&[q, q, q]);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let c = self.text[self.i..].chars().next()?;
            if c as u32 == u32::from(q)
                && (!triple || self.bytes()[self.i..].starts_with(&[q, q, q]))
            {
                self.i += if triple { 3 } else { 1 };
                return Some(out);
            }
            if c == '\n' && !triple {
                return None;
            }
            if c != '\\' {
                out.push(c);
                self.i += c.len_utf8();
                continue;
            }
            let e = *self.bytes().get(self.i + 1)?;
            self.i += 2;
            let hex = |p: &mut Self, n: usize| -> Option<char> {
                let h = p.text.get(p.i..p.i + n)?;
                let v = u32::from_str_radix(h, 16).ok()?;
                p.i += n;
                char::from_u32(v)
            };
            match e {
                b'n' => out.push('\n'),
                b't' => out.push('\t'),
                b'r' => out.push('\r'),
                b'0' => out.push('\0'),
                b'a' => out.push('\x07'),
                b'b' => out.push('\x08'),
                b'f' => out.push('\x0c'),
                b'v' => out.push('\x0b'),
                b'x' => out.push(hex(self, 2)?),
                b'u' => out.push(hex(self, 4)?),
                b'U' => out.push(hex(self, 8)?),
                b'\\' | b'\'' | b'"' => out.push(e as char),
                _ => {
                    // Python keeps an unknown escape as written.
                    out.push('\\');
                    self.i -= 1;
                }
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
        self.take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_'))
            .then(|| Py::Number(self.text[start..self.i].to_string()))
    }

    /// A name (`None`, `True`, `inf`, `datetime.date`), a string with a prefix (`b'x'`), or a
    /// call `name(args…)` with positional or keyword arguments.
    fn name(&mut self, depth: usize) -> Option<Py> {
        let start = self.i;
        self.take_while(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
        let name = &self.text[start..self.i];
        if name.len() <= 2
            && name.bytes().all(|c| b"rRbBuUfF".contains(&c))
            && matches!(self.peek(), Some(b'\'' | b'"'))
        {
            return self.string().map(Py::Str);
        }
        if self.peek() != Some(b'(') {
            return Some(match name {
                "None" => Py::None,
                "True" => Py::Bool(true),
                "False" => Py::Bool(false),
                _ => Py::Other,
            });
        }
        self.i += 1;
        if self.eat(b')') {
            return Some(Py::Other);
        }
        loop {
            self.ws();
            // A keyword argument: `name=value`.
            let save = self.i;
            if !(self.take_while(|c| c.is_ascii_alphanumeric() || c == b'_') && self.eat(b'=')) {
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
        assert_eq!(parse("None"), Some(Py::None));
        assert_eq!(parse("(1,)"), Some(Py::List(vec![Py::Number("1".into())])));
        assert!(
            parse("{'root': <Directory: a, Contents: {'b': <<File: b>>}>}")
                .unwrap()
                .has_key("root")
        );
        assert_eq!(
            parse("{1, 2}"),
            Some(Py::Set(vec![
                Py::Number("1".into()),
                Py::Number("2".into())
            ]))
        );
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
