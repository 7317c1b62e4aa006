//! A small JSON-Schema validator for tool parameter schemas: the subset tool definitions use.
//!
//! The tool-schema prefix checks ([`super::schema_check`]) used the general `jsonschema` crate,
//! which with its regular-expression engines, URI and format machinery made up most of the
//! browser worker's code. Tool definitions use a handful of keywords (on the released runs:
//! `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, plus the
//! annotations `description`, `default`, `format`), so this module implements those and a few
//! neighbours, with the same verdicts and the same message texts as `jsonschema` 0.61 under its
//! default draft (2020-12). `tests/schema_subset.rs` compares the two on the released runs' tool
//! schemas and on generated schemas and values.
//!
//! **Supported** (asserted): `type` (a name or a list of names; `integer` accepts numbers with a
//! zero fraction), `enum`, `const` (numbers compare by value, so `1` equals `1.0`),
//! `properties`, `required`, `additionalProperties` (a boolean or a schema), `items` (a single
//! schema), `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (numeric forms),
//! `minLength`, `maxLength` (in characters), `minItems`, `maxItems`, `minProperties`,
//! `maxProperties`, `allOf`, `anyOf`, `oneOf`; the boolean schemas `true` and `false`.
//!
//! **Ignored**, as `jsonschema` ignores them under draft 2020-12 and 2019-09: the annotations
//! `title`, `description`, `default`, `examples`, `$comment`, `deprecated`, `readOnly`,
//! `writeOnly`, `format` (an annotation in those drafts), `$defs` / `definitions` (only `$ref`
//! reads them, and `$ref` is refused), and keys that are not JSON-Schema keywords at all (such as
//! `x-…` extensions or `strict`).
//!
//! Two wordings follow `jsonschema` 0.61 where it differs from the plain reading, so that
//! reports keep their texts: a closed object (`additionalProperties: false`) without
//! `properties` is reported once, as `False schema does not allow <first property's value>` at
//! the object; and in a closed object with `properties` and a single `required` name, that name is
//! reported as missing even when present if `properties` does not list it (such an object fails
//! either way).
//!
//! **Refused**: every other JSON-Schema keyword (`$ref`, `pattern`, `not`, `if`/`then`/`else`,
//! `patternProperties`, `propertyNames`, `uniqueItems`, `multipleOf`, `prefixItems`, `contains`,
//! `dependentRequired`, …), `items` as an array, `format` under draft-07 / draft-06 (where it is
//! asserted), a `$schema` other than 2020-12, 2019-09, draft-07 or draft-06, and malformed values
//! of supported keywords. [`Schema::compile`] then fails with the reason, so the tool is reported
//! as unusable (its arguments are not checked, and a warning says why): a schema is never
//! accepted while silently checking less than it says.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// Keywords read for their value's sake, never asserted.
const ANNOTATIONS: [&str; 11] = [
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$defs",
    "definitions",
    "$schema",
];

/// JSON-Schema keywords (any draft) that this subset does not implement.
const UNSUPPORTED: [&str; 30] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$vocabulary",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "patternProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "multipleOf",
    "pattern",
    "contentEncoding",
    "contentMediaType",
];

/// The drafts whose semantics for the supported keywords this module follows; `true` where
/// `format` is an annotation (ignored), `false` where it is asserted (refused).
const DRAFTS: [(&str, bool); 4] = [
    ("https://json-schema.org/draft/2020-12/schema", true),
    ("https://json-schema.org/draft/2019-09/schema", true),
    ("http://json-schema.org/draft-07/schema", false),
    ("http://json-schema.org/draft-06/schema", false),
];

/// The seven JSON types, in the order `jsonschema` lists them in messages.
const TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// A compiled schema.
#[derive(Clone, Debug)]
pub struct Schema {
    root: Node,
}

#[derive(Clone, Debug)]
enum Node {
    Bool(bool),
    Keywords(Box<Keywords>),
}

#[derive(Clone, Debug, Default)]
struct Keywords {
    /// A bit set over [`TYPES`]; `single` when the schema named one type (message wording).
    types: Option<(u8, bool)>,
    enum_: Option<Vec<Value>>,
    const_: Option<Value>,
    properties: BTreeMap<String, Node>,
    /// Whether the schema has a `properties` keyword (even an empty one): `jsonschema` words
    /// `additionalProperties: false` differently with and without it.
    has_properties: bool,
    required: Vec<String>,
    additional: Option<Node>,
    items: Option<Node>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    all_of: Vec<Node>,
    any_of: Vec<Node>,
    one_of: Vec<Node>,
}

/// One failed assertion: the instance location (a JSON pointer) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    pub path: String,
    pub message: String,
}

impl Schema {
    /// Compiles `schema`; `Err` says which keyword is unsupported or malformed, and where.
    pub fn compile(schema: &Value) -> Result<Schema, String> {
        let mut format_is_annotation = true;
        if let Some(uri) = schema.get("$schema") {
            let uri = uri
                .as_str()
                .ok_or_else(|| "\"$schema\" must be a string".to_string())?;
            let bare = uri.trim_end_matches('#');
            match DRAFTS.iter().find(|(d, _)| *d == bare) {
                Some((_, annotation)) => format_is_annotation = *annotation,
                None => return Err(format!("unsupported \"$schema\" {uri:?}")),
            }
        }
        Ok(Schema {
            root: compile_node(schema, "", format_is_annotation)?,
        })
    }

    /// Every failed assertion for `instance` (empty when it is valid).
    pub fn errors(&self, instance: &Value) -> Vec<SchemaError> {
        let mut out = Vec::new();
        self.root.collect(instance, &mut String::new(), &mut out);
        out
    }

    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.root.is_valid(instance)
    }
}

fn compile_node(v: &Value, at: &str, format_is_annotation: bool) -> Result<Node, String> {
    let map = match v {
        Value::Bool(b) => return Ok(Node::Bool(*b)),
        Value::Object(map) => map,
        other => {
            return Err(format!(
                "{}: a schema must be an object or a boolean, found {other}",
                loc(at)
            ))
        }
    };
    let mut k = Keywords::default();
    for (key, value) in map {
        let here = format!("{at}/{}", escape(key));
        let bad = |what: &str| format!("{}: \"{key}\" must be {what}", loc(at));
        let sub = |v: &Value| compile_node(v, &here, format_is_annotation);
        let subs = |v: &Value| -> Result<Vec<Node>, String> {
            match v {
                Value::Array(a) if !a.is_empty() => a
                    .iter()
                    .enumerate()
                    .map(|(i, s)| compile_node(s, &format!("{here}/{i}"), format_is_annotation))
                    .collect(),
                _ => Err(bad("a non-empty array of schemas")),
            }
        };
        let count = |v: &Value| v.as_u64().ok_or_else(|| bad("a non-negative integer"));
        let number = |v: &Value| match v {
            Value::Number(n) => Ok(n.clone()),
            _ => Err(bad("a number")),
        };
        match key.as_str() {
            "type" => k.types = Some(compile_types(value).ok_or_else(|| bad(TYPE_SHAPE))?),
            "enum" => match value {
                Value::Array(a) => k.enum_ = Some(a.clone()),
                _ => return Err(bad("an array")),
            },
            "const" => k.const_ = Some(value.clone()),
            "properties" => {
                let Value::Object(props) = value else {
                    return Err(bad("an object of schemas"));
                };
                k.has_properties = true;
                for (name, s) in props {
                    let node =
                        compile_node(s, &format!("{here}/{}", escape(name)), format_is_annotation)?;
                    k.properties.insert(name.clone(), node);
                }
            }
            "required" => {
                let names = value
                    .as_array()
                    .and_then(|a| a.iter().map(|n| n.as_str().map(String::from)).collect())
                    .ok_or_else(|| bad("an array of strings"))?;
                let names: Vec<String> = names;
                let mut seen = std::collections::BTreeSet::new();
                if let Some(dup) = names.iter().find(|n| !seen.insert(n.as_str())) {
                    return Err(format!("{}: \"required\" names {dup:?} twice", loc(at)));
                }
                k.required = names;
            }
            "additionalProperties" => k.additional = Some(sub(value)?),
            "items" => {
                if value.is_array() {
                    return Err(format!(
                        "{}: unsupported keyword \"items\" as an array (tuple validation)",
                        loc(at)
                    ));
                }
                k.items = Some(sub(value)?);
            }
            "minimum" => k.minimum = Some(number(value)?),
            "maximum" => k.maximum = Some(number(value)?),
            "exclusiveMinimum" => k.exclusive_minimum = Some(number(value)?),
            "exclusiveMaximum" => k.exclusive_maximum = Some(number(value)?),
            "minLength" => k.min_length = Some(count(value)?),
            "maxLength" => k.max_length = Some(count(value)?),
            "minItems" => k.min_items = Some(count(value)?),
            "maxItems" => k.max_items = Some(count(value)?),
            "minProperties" => k.min_properties = Some(count(value)?),
            "maxProperties" => k.max_properties = Some(count(value)?),
            "allOf" => k.all_of = subs(value)?,
            "anyOf" => k.any_of = subs(value)?,
            "oneOf" => k.one_of = subs(value)?,
            "format" if format_is_annotation => {}
            "format" => {
                return Err(format!(
                    "{}: unsupported keyword \"format\" (asserted by this draft)",
                    loc(at)
                ))
            }
            other if ANNOTATIONS.contains(&other) => {}
            other if UNSUPPORTED.contains(&other) => {
                return Err(format!("{}: unsupported keyword {other:?}", loc(at)))
            }
            // Not a JSON-Schema keyword: ignored, as every validator does.
            _ => {}
        }
    }
    Ok(Node::Keywords(Box::new(k)))
}

const TYPE_SHAPE: &str = "a type name or a non-empty array of distinct type names (null, \
                          boolean, integer, number, string, array, object)";

fn compile_types(v: &Value) -> Option<(u8, bool)> {
    let bit = |name: &Value| {
        let i = TYPES.iter().position(|t| Some(*t) == name.as_str())?;
        Some(1u8 << i)
    };
    match v {
        Value::String(_) => Some((bit(v)?, true)),
        Value::Array(names) if !names.is_empty() => {
            let mut set = 0u8;
            for n in names {
                let b = bit(n)?;
                if set & b != 0 {
                    return None;
                }
                set |= b;
            }
            Some((set, names.len() == 1))
        }
        _ => None,
    }
}

fn loc(at: &str) -> String {
    if at.is_empty() {
        "schema".to_string()
    } else {
        format!("schema at {at}")
    }
}

/// A JSON-pointer token (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether `v` has type `t` (an index into [`TYPES`]).
fn has_type(v: &Value, t: usize) -> bool {
    match (TYPES[t], v) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

impl Node {
    fn is_valid(&self, v: &Value) -> bool {
        let mut out = Vec::new();
        self.collect(v, &mut String::new(), &mut out);
        out.is_empty()
    }

    fn collect(&self, v: &Value, path: &mut String, out: &mut Vec<SchemaError>) {
        let push = |out: &mut Vec<SchemaError>, path: &str, message: String| {
            out.push(SchemaError {
                path: path.to_string(),
                message,
            })
        };
        let k = match self {
            Node::Bool(true) => return,
            Node::Bool(false) => {
                return push(out, path, format!("False schema does not allow {v}"))
            }
            Node::Keywords(k) => k,
        };
        if let Some((set, single)) = k.types {
            if !(0..TYPES.len()).any(|t| set & (1 << t) != 0 && has_type(v, t)) {
                let names: Vec<&str> = (0..TYPES.len())
                    .filter(|t| set & (1 << t) != 0)
                    .map(|t| TYPES[t])
                    .collect();
                let message = if single {
                    format!("{v} is not of type \"{}\"", names[0])
                } else {
                    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                    format!("{v} is not of types {}", quoted.join(", "))
                };
                push(out, path, message);
            }
        }
        if let Some(options) = &k.enum_ {
            if !options.iter().any(|o| equal(o, v)) {
                push(out, path, enum_message(v, options));
            }
        }
        if let Some(c) = &k.const_ {
            if !equal(c, v) {
                push(out, path, format!("{c} was expected"));
            }
        }
        match v {
            Value::Object(map) => k.collect_object(map, v, path, out),
            Value::Array(items) => {
                let n = items.len() as u64;
                if k.min_items.is_some_and(|m| n < m) {
                    let m = k.min_items.unwrap_or(0);
                    push(
                        out,
                        path,
                        format!("{v} has less than {m} item{}", plural(m)),
                    );
                }
                if k.max_items.is_some_and(|m| n > m) {
                    let m = k.max_items.unwrap_or(0);
                    push(
                        out,
                        path,
                        format!("{v} has more than {m} item{}", plural(m)),
                    );
                }
                if let Some(schema) = &k.items {
                    for (i, item) in items.iter().enumerate() {
                        let len = path.len();
                        let _ = write!(path, "/{i}");
                        schema.collect(item, path, out);
                        path.truncate(len);
                    }
                }
            }
            Value::String(s) => {
                let n = s.chars().count() as u64;
                if let Some(m) = k.min_length.filter(|m| n < *m) {
                    push(
                        out,
                        path,
                        format!("{v} is shorter than {m} character{}", plural(m)),
                    );
                }
                if let Some(m) = k.max_length.filter(|m| n > *m) {
                    push(
                        out,
                        path,
                        format!("{v} is longer than {m} character{}", plural(m)),
                    );
                }
            }
            Value::Number(n) => {
                let checks = [
                    (
                        &k.minimum,
                        Ordering::Less,
                        false,
                        "is less than the minimum of",
                    ),
                    (
                        &k.maximum,
                        Ordering::Greater,
                        false,
                        "is greater than the maximum of",
                    ),
                    (
                        &k.exclusive_minimum,
                        Ordering::Less,
                        true,
                        "is less than or equal to the minimum of",
                    ),
                    (
                        &k.exclusive_maximum,
                        Ordering::Greater,
                        true,
                        "is greater than or equal to the maximum of",
                    ),
                ];
                for (limit, fails, or_equal, words) in checks {
                    if let Some(limit) = limit {
                        let c = compare(n, limit);
                        if c == fails || (or_equal && c == Ordering::Equal) {
                            push(out, path, format!("{v} {words} {limit}"));
                        }
                    }
                }
            }
            _ => {}
        }
        for s in &k.all_of {
            s.collect(v, path, out);
        }
        if !k.any_of.is_empty() && !k.any_of.iter().any(|s| s.is_valid(v)) {
            push(
                out,
                path,
                format!("{v} is not valid under any of the schemas listed in the 'anyOf' keyword"),
            );
        }
        if !k.one_of.is_empty() {
            match k.one_of.iter().filter(|s| s.is_valid(v)).count() {
                1 => {}
                0 => push(
                    out,
                    path,
                    format!(
                        "{v} is not valid under any of the schemas listed in the 'oneOf' keyword"
                    ),
                ),
                _ => push(
                    out,
                    path,
                    format!(
                        "{v} is valid under more than one of the schemas listed in the 'oneOf' \
                         keyword"
                    ),
                ),
            }
        }
    }
}

impl Keywords {
    fn collect_object(
        &self,
        map: &Map<String, Value>,
        v: &Value,
        path: &mut String,
        out: &mut Vec<SchemaError>,
    ) {
        let n = map.len() as u64;
        let mut push = |path: &str, message: String| {
            out.push(SchemaError {
                path: path.to_string(),
                message,
            })
        };
        if let Some(m) = self.min_properties.filter(|m| n < *m) {
            let s = if m == 1 { "y" } else { "ies" };
            push(path, format!("{v} has less than {m} propert{s}"));
        }
        if let Some(m) = self.max_properties.filter(|m| n > *m) {
            let s = if m == 1 { "y" } else { "ies" };
            push(path, format!("{v} has more than {m} propert{s}"));
        }
        let closed = matches!(self.additional, Some(Node::Bool(false)));
        if closed && !self.has_properties {
            // jsonschema 0.61 reports a closed object without `properties` by its first
            // property's value, at the object's own location.
            if let Some(first) = map.values().next() {
                push(path, format!("False schema does not allow {first}"));
            }
        }
        for name in &self.required {
            // jsonschema 0.61 also reports the single required name of a closed object when
            // `properties` does not list it: such a property, present or not, fails the schema.
            let unlisted = closed
                && self.has_properties
                && self.required.len() == 1
                && !self.properties.contains_key(name);
            if unlisted || !map.contains_key(name) {
                push(
                    path,
                    format!("{} is a required property", Value::from(name.as_str())),
                );
            }
        }
        let mut unexpected = Vec::new();
        for (key, value) in map {
            let schema = match self.properties.get(key) {
                Some(s) => s,
                None => match &self.additional {
                    None => continue,
                    Some(Node::Bool(false)) if !self.has_properties => continue,
                    Some(Node::Bool(false)) => {
                        unexpected.push(key.as_str());
                        continue;
                    }
                    Some(s) => s,
                },
            };
            let len = path.len();
            path.push('/');
            path.push_str(&escape(key));
            schema.collect(value, path, out);
            path.truncate(len);
        }
        if !unexpected.is_empty() {
            let list: Vec<String> = unexpected.iter().map(|k| format!("'{k}'")).collect();
            let verb = if unexpected.len() == 1 { "was" } else { "were" };
            out.push(SchemaError {
                path: path.clone(),
                message: format!(
                    "Additional properties are not allowed ({} {verb} unexpected)",
                    list.join(", ")
                ),
            });
        }
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `jsonschema`'s enum message: up to three options, else two and a count of the others.
fn enum_message(v: &Value, options: &[Value]) -> String {
    let mut s = format!("{v} is not one of ");
    let total = options.len();
    if total <= 3 {
        for (i, o) in options.iter().enumerate() {
            let sep = match i {
                0 => "",
                i if i == total - 1 => " or ",
                _ => ", ",
            };
            let _ = write!(s, "{sep}{o}");
        }
    } else {
        for (i, o) in options.iter().take(2).enumerate() {
            let _ = write!(s, "{}{o}", if i == 0 { "" } else { ", " });
        }
        let _ = write!(s, " or {} other candidates", total - 2);
    }
    s
}

/// JSON-Schema equality: numbers by value (`1` equals `1.0`), objects regardless of key order.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| equal(a, b)))
        }
        _ => a == b,
    }
}

/// Exact comparison of two JSON numbers, integers against floats included.
fn compare(a: &Number, b: &Number) -> Ordering {
    match (int_of(a), int_of(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => compare_int_float(x, b.as_f64().unwrap_or(f64::NAN)),
        (None, Some(y)) => compare_int_float(y, a.as_f64().unwrap_or(f64::NAN)).reverse(),
        (None, None) => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

fn int_of(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// `i` against `f` without rounding `i` to a float.
fn compare_int_float(i: i128, f: f64) -> Ordering {
    // Every f64 of magnitude at least 2^100 is beyond any i64/u64.
    const BIG: f64 = 1.0e30;
    if f.is_nan() {
        return Ordering::Equal;
    }
    if f >= BIG {
        return Ordering::Less;
    }
    if f <= -BIG {
        return Ordering::Greater;
    }
    let floor = f.floor();
    // |floor| < 1e30 < 2^127, so the conversion is exact.
    let fi = floor as i128;
    match i.cmp(&fi) {
        Ordering::Equal if f > floor => Ordering::Less,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: Value, v: Value) -> Vec<String> {
        let s = Schema::compile(&schema).unwrap();
        let mut m: Vec<String> = s
            .errors(&v)
            .into_iter()
            .map(|e| format!("{}|{}", e.path, e.message))
            .collect();
        m.sort();
        m
    }

    #[test]
    fn hand_checked_messages() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string"},
            "n": {"type": ["integer", "null"], "minimum": 1.5}},
            "required": ["a", "b"], "additionalProperties": false});
        assert_eq!(
            messages(s.clone(), json!({"a": 1, "n": 1, "x": 0, "y": 0})),
            vec![
                "/a|1 is not of type \"string\"",
                "/n|1 is less than the minimum of 1.5",
                "|\"b\" is a required property",
                "|Additional properties are not allowed ('x', 'y' were unexpected)",
            ]
        );
        assert_eq!(
            messages(s, json!({"a": "", "b": 0, "n": "z"})),
            vec![
                "/n|\"z\" is not of types \"null\", \"integer\"",
                "|Additional properties are not allowed ('b' was unexpected)",
            ]
        );
        assert_eq!(
            messages(json!({"enum": [1, "a", null, true]}), json!(2)),
            vec!["|2 is not one of 1, \"a\" or 2 other candidates"]
        );
        assert_eq!(
            messages(json!({"enum": ["a", "b"]}), json!("c")),
            vec!["|\"c\" is not one of \"a\" or \"b\""]
        );
        assert!(messages(json!({"enum": [1]}), json!(1.0)).is_empty());
        assert!(messages(json!({"type": "integer"}), json!(3.0)).is_empty());
        assert_eq!(
            messages(json!({"items": {"maxLength": 1}}), json!(["ab", "c"])),
            vec!["/0|\"ab\" is longer than 1 character"]
        );
        assert_eq!(
            messages(json!({"exclusiveMaximum": 3}), json!(3.0)),
            vec!["|3.0 is greater than or equal to the maximum of 3"]
        );
    }

    #[test]
    fn exact_number_comparison() {
        let n = |v: Value| v.as_number().unwrap().clone();
        assert_eq!(compare(&n(json!(1)), &n(json!(1.0))), Ordering::Equal);
        assert_eq!(compare(&n(json!(1)), &n(json!(1.5))), Ordering::Less);
        assert_eq!(compare(&n(json!(-2)), &n(json!(-1.5))), Ordering::Less);
        assert_eq!(
            compare(
                &n(json!(9007199254740993u64)),
                &n(json!(9007199254740992.0))
            ),
            Ordering::Greater
        );
        assert_eq!(
            compare(&n(json!(u64::MAX)), &n(json!(-1))),
            Ordering::Greater
        );
        assert_eq!(
            compare(&n(json!(1e300)), &n(json!(u64::MAX))),
            Ordering::Greater
        );
    }

    #[test]
    fn unsupported_and_malformed_are_refused() {
        for bad in [
            json!({"pattern": "^a"}),
            json!({"properties": {"a": {"$ref": "#/$defs/x"}}}),
            json!({"items": [{"type": "string"}]}),
            json!({"type": "strin"}),
            json!({"type": []}),
            json!({"required": ["a", "a"]}),
            json!({"minLength": -1}),
            json!({"$schema": "http://json-schema.org/draft-04/schema#"}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "format": "uri"}),
            json!(3),
        ] {
            assert!(Schema::compile(&bad).is_err(), "{bad}");
        }
        for fine in [
            json!({"format": "uri", "description": "d", "x-extra": 1, "strict": true}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}),
            json!({"$defs": {"x": {"pattern": "a"}}}),
            json!(true),
        ] {
            assert!(Schema::compile(&fine).is_ok(), "{fine}");
        }
        let e = Schema::compile(&json!({"properties": {"a": {"pattern": "x"}}})).unwrap_err();
        assert_eq!(
            e,
            "schema at /properties/a: unsupported keyword \"pattern\""
        );
    }
}
