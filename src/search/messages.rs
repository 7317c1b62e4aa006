//! The message texts of a rollout's source bytes (the search's `message` field): `content` of
//! every JSON object that also names a `role`, `sender`, `from` or `author` (a string, or the
//! `text` of a list of parts), depth-first, an object's keys in sorted order (as
//! `serde_json::Value`'s map holds them; a key given twice counts once, its last value).
//!
//! The document is read into a tree that borrows its strings from the bytes and keeps nothing
//! of numbers, booleans and nulls but their place: a search reads every rollout's source, and
//! building a `serde_json::Value` (a `String` per key and string, a map per object) cost twice
//! the time of the rest of the search. The texts are the same as the `Value` reading's: the
//! test below compares the two on documents of every shape, the released-runs tests on real
//! files.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value, its strings borrowed where they hold no escapes.
enum Node<'a> {
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    Array(Vec<Node<'a>>),
    Str(Cow<'a, str>),
    Null,
    /// A number or a boolean.
    Scalar,
}

/// Borrows the string where the input allows (`Cow<str>`'s own `Deserialize` always copies).
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Node::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Node::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Node::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Node::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Node::Null)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Node::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Node::deserialize(d)
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Node::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Node::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Node::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Node::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(Cow<'de, str>, Node<'de>)> = Vec::new();
                while let Some(Text(key)) = map.next_key()? {
                    entries.push((key, map.next_value()?));
                }
                // `Value`'s map: keys in sorted order, a repeated key's last value.
                entries.reverse();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                entries.dedup_by(|later, first| later.0 == first.0);
                Ok(Node::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl Node<'_> {
    fn get(&self, key: &str) -> Option<&Self> {
        match self {
            Node::Object(entries) => entries
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|i| &entries[i].1),
            _ => None,
        }
    }
}

/// The message texts of `bytes`, in order; none when they are not JSON (a line of a format
/// that is not holds no messages this finds) or nest deeper than 64 levels below a message.
pub fn message_texts(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(node) = serde_json::from_slice::<Node>(bytes) {
        walk(&node, &mut out, 0);
    }
    out
}

fn walk(node: &Node, out: &mut Vec<String>, depth: usize) {
    if depth > 64 {
        return;
    }
    match node {
        Node::Object(entries) => {
            let is_message = ["role", "sender", "from", "author"]
                .iter()
                .any(|k| node.get(k).is_some_and(|v| !matches!(v, Node::Null)));
            if is_message {
                match node.get("content") {
                    Some(Node::Str(s)) if !s.is_empty() => out.push(s.to_string()),
                    Some(Node::Array(parts)) => {
                        for p in parts {
                            match p {
                                Node::Str(s) => out.push(s.to_string()),
                                part @ Node::Object(_) => {
                                    if let Some(Node::Str(s)) = part.get("text") {
                                        out.push(s.to_string());
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            for (k, child) in entries {
                if !(is_message && k == "content") {
                    walk(child, out, depth + 1);
                }
            }
        }
        Node::Array(items) => {
            for child in items {
                walk(child, out, depth + 1);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reading this module replaces: a `serde_json::Value`, walked the same way.
    pub(crate) fn value_texts(bytes: &[u8]) -> Vec<String> {
        fn walk(v: &serde_json::Value, out: &mut Vec<String>, depth: usize) {
            use serde_json::Value;
            if depth > 64 {
                return;
            }
            match v {
                Value::Object(o) => {
                    let is_message = ["role", "sender", "from", "author"]
                        .iter()
                        .any(|k| o.get(*k).is_some_and(|s| !s.is_null()));
                    if is_message {
                        match o.get("content") {
                            Some(Value::String(s)) if !s.is_empty() => out.push(s.clone()),
                            Some(Value::Array(parts)) => {
                                for p in parts {
                                    match p {
                                        Value::String(s) => out.push(s.clone()),
                                        Value::Object(part) => {
                                            if let Some(Value::String(s)) = part.get("text") {
                                                out.push(s.clone());
                                            }
                                        }
                                        _ => {}
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    for (k, child) in o {
                        if !(is_message && k == "content") {
                            walk(child, out, depth + 1);
                        }
                    }
                }
                Value::Array(a) => a.iter().for_each(|c| walk(c, out, depth + 1)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
            walk(&v, &mut out, 0);
        }
        out
    }

    #[test]
    fn the_texts_a_value_reading_finds() {
        let docs = [
            r#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"text","text":"a\nb"},"plain",{"text":7}]}]}"#,
            // Keys out of order, a message inside a message's other key, `content` before
            // `role`, a repeated key (the last counts), a null role, escapes.
            r#"{"z":{"content":"late","from":"x"},"a":{"content":"first","role":"u","meta":{"sender":"s","content":"inner \"q\" \u00e9"}}}"#,
            r#"{"role":null,"content":"not a message","k":[{"author":"a","content":""},{"author":"b","content":"two","content":"again"}]}"#,
            r#"{"role":"user","content":{"role":"x","content":"nested content is not searched"}}"#,
            r#"[1, 2.5, true, null, {"sender":"AGENT","content":"ok"}]"#,
            "not json",
            r#"{"role":"u","content":"truncated"#,
            r#""just a string""#,
        ];
        for d in docs {
            assert_eq!(
                message_texts(d.as_bytes()),
                value_texts(d.as_bytes()),
                "{d}"
            );
        }
        assert_eq!(
            message_texts(docs[1].as_bytes()),
            ["first", "inner \"q\" é", "late"]
        );
        assert_eq!(message_texts(docs[2].as_bytes()), ["again"]);
        // Deep nesting: the same cut-off.
        let deep = format!(
            "{}{{\"role\":\"u\",\"content\":\"deep\"}}{}",
            "[".repeat(70),
            "]".repeat(70)
        );
        assert_eq!(message_texts(deep.as_bytes()), value_texts(deep.as_bytes()));
        let deeper = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(
            message_texts(deeper.as_bytes()),
            value_texts(deeper.as_bytes())
        );
    }

    /// Every JSON document and JSONL line of the released runs (when present): the same texts.
    #[test]
    fn the_texts_a_value_reading_finds_in_the_released_runs() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/released-runs");
        if !root.is_dir() {
            println!("skipped: no released runs at {}", root.display());
            return;
        }
        let mut stack = vec![root];
        let (mut documents, mut texts) = (0, 0);
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let name = path.to_string_lossy().to_string();
                if !(name.ends_with(".json") || name.ends_with(".jsonl")) {
                    continue;
                }
                let bytes = std::fs::read(&path).unwrap();
                let mut docs: Vec<&[u8]> = vec![&bytes];
                if name.ends_with(".jsonl") || message_texts(&bytes).is_empty() {
                    docs.extend(bytes.split(|&b| b == b'\n'));
                }
                for d in docs {
                    let found = message_texts(d);
                    assert_eq!(found, value_texts(d), "{name}");
                    documents += 1;
                    texts += found.len();
                }
            }
        }
        assert!(
            documents > 1000 && texts > 10_000,
            "{documents} documents, {texts} texts"
        );
    }
}
