//! `formats::json_schema` (the project's validator for the JSON-Schema subset tool definitions
//! use) against the general `jsonschema` crate it replaced (a dev-dependency only): the same
//! verdict and the same set of located messages — hence the same `schema` first-failure labels
//! and texts — on
//! - every tool schema in the released runs (`../shared/data/released-runs`, skipped with a
//!   message when absent), with argument values generated from each schema's own property names,
//!   types and enum values;
//! - generated schemas within the subset, with generated values.
//!
//! A schema the subset refuses (an unsupported keyword) must be one `jsonschema` would have read
//! differently from "check nothing": such refusals are counted and printed, and none may occur
//! on the released runs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use prefix_exec::formats::json_schema::Schema;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/released-runs");

/// Sorted `path|message` lines from the subset validator.
fn ours(schema: &Schema, v: &Value) -> Vec<String> {
    let mut m: Vec<String> = schema
        .errors(v)
        .into_iter()
        .map(|e| format!("{}|{}", e.path, e.message))
        .collect();
    m.sort();
    m
}

/// Sorted `path|message` lines from `jsonschema`.
fn theirs(v8r: &jsonschema::Validator, v: &Value) -> Vec<String> {
    let mut m: Vec<String> = v8r
        .iter_errors(v)
        .map(|e| format!("{}|{}", e.instance_path(), e))
        .collect();
    m.sort();
    m
}

/// Every `parameters` / `params` / `input_schema` object in a JSON document.
fn tool_schemas(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            for key in ["parameters", "params", "input_schema"] {
                if let Some(s @ Value::Object(m)) = map.get(key) {
                    if m.contains_key("type") || m.contains_key("properties") {
                        out.insert(s.to_string());
                    }
                }
            }
            map.values().for_each(|x| tool_schemas(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| tool_schemas(x, out)),
        _ => {}
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "json" || x == "jsonl") {
            files.push(p);
        }
    }
}

/// A value shaped by `schema`: its own property names, types and enum values, each possibly
/// replaced by something else, so both valid and invalid arguments come out.
fn value_for(schema: &Value, depth: u32) -> BoxedStrategy<Value> {
    let anything = any_value(2);
    if depth > 3 {
        return anything;
    }
    let mut options: Vec<BoxedStrategy<Value>> = vec![anything];
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.is_empty() {
            options.push(proptest::sample::select(e.clone()).boxed());
        }
    }
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "string" => options.push(".{0,6}".prop_map(Value::from).boxed()),
        "integer" => options.push((-5i64..100).prop_map(Value::from).boxed()),
        "number" => options.push((-5.0f64..100.0).prop_map(|f| json!(f)).boxed()),
        "boolean" => options.push(any::<bool>().prop_map(Value::from).boxed()),
        "array" => {
            let item = schema.get("items").cloned().unwrap_or(json!({}));
            options.push(
                proptest::collection::vec(value_for(&item, depth + 1), 0..3)
                    .prop_map(Value::Array)
                    .boxed(),
            );
        }
        _ => {}
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
            .iter()
            .map(|(k, s)| {
                let k = k.clone();
                proptest::option::weighted(0.7, value_for(s, depth + 1))
                    .prop_map(move |v| v.map(|v| (k.clone(), v)))
                    .boxed()
            })
            .collect();
        let extra = proptest::option::weighted(0.2, ("[a-z]{1,3}", any_value(1)));
        options.push(
            (fields, extra)
                .prop_map(|(fields, extra)| {
                    let mut m: Map<String, Value> = fields.into_iter().flatten().collect();
                    if let Some((k, v)) = extra {
                        m.entry(k).or_insert(v);
                    }
                    Value::Object(m)
                })
                .boxed(),
        );
    }
    proptest::strategy::Union::new(options).boxed()
}

fn any_value(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..4).prop_map(Value::from),
        prop_oneof![Just(-1.5), Just(0.0), Just(2.0), Just(2.5), Just(1e20)].prop_map(|f| json!(f)),
        "[ab~/]{0,3}".prop_map(Value::from),
    ];
    leaf.prop_recursive(depth, 12, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            proptest::collection::btree_map("[abxy]", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

fn compare_on(schema: &Value, runner: &mut TestRunner) -> Result<(), String> {
    let mine = Schema::compile(schema);
    let general = jsonschema::validator_for(schema);
    let (mine, general) = match (mine, general) {
        (Ok(m), Ok(g)) => (m, g),
        (Err(_), Err(_)) => return Ok(()),
        (Ok(_), Err(e)) => return Err(format!("{schema}: jsonschema refuses it ({e}), we do not")),
        (Err(e), Ok(_)) => return Err(format!("{schema}: refused here only: {e}")),
    };
    let strategy = value_for(schema, 0);
    runner
        .run(&strategy, |v| {
            prop_assert_eq!(ours(&mine, &v), theirs(&general, &v), "{} on {}", schema, v);
            prop_assert_eq!(mine.is_valid(&v), general.is_valid(&v));
            Ok(())
        })
        .map_err(|e| e.to_string())
}

#[test]
fn released_tool_schemas_agree_with_jsonschema() {
    let root = Path::new(SHARED);
    if !root.is_dir() {
        println!("released_tool_schemas_agree_with_jsonschema: skipped: no {SHARED}");
        return;
    }
    let mut files = Vec::new();
    walk(root, &mut files);
    files.sort();
    let mut schemas = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            tool_schemas(&v, &mut schemas);
        } else {
            for line in text.lines() {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    tool_schemas(&v, &mut schemas);
                }
            }
        }
    }
    println!(
        "released runs: {} distinct tool schemas in {} files",
        schemas.len(),
        files.len()
    );
    assert!(
        !schemas.is_empty(),
        "expected tool schemas in the released runs"
    );
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    let mut refused = 0;
    for s in &schemas {
        let schema: Value = serde_json::from_str(s).unwrap();
        // A schema both refuse is not JSON Schema (BFCL's own `"type": "dict"` notation, in its
        // single-turn files); any other refusal is a gap in the subset.
        if Schema::compile(&schema).is_err() {
            assert!(
                jsonschema::validator_for(&schema).is_err(),
                "released schema refused here only: {s}"
            );
            refused += 1;
            continue;
        }
        compare_on(&schema, &mut runner).unwrap();
    }
    assert!(refused < schemas.len(), "every released schema was refused");
}

/// Schemas within the subset (some malformed), for the generated comparison.
fn subset_schema() -> impl Strategy<Value = Value> {
    let types = prop_oneof![
        Just(json!("string")),
        Just(json!("integer")),
        Just(json!("number")),
        Just(json!("boolean")),
        Just(json!("null")),
        Just(json!("array")),
        Just(json!("object")),
        Just(json!(["integer", "null"])),
        Just(json!(["string", "number"])),
        Just(json!(["number"])),
    ];
    let leaf = (
        proptest::option::of(types),
        proptest::option::of(proptest::collection::vec(any_value(1), 1..6)),
        proptest::option::of(prop_oneof![
            Just(json!(1)),
            Just(json!(2.5)),
            Just(json!(-1))
        ]),
        proptest::option::of(prop_oneof![Just(json!(3)), Just(json!(2.0))]),
        proptest::option::of(0u64..3),
        proptest::option::of(0u64..3),
        any::<bool>(),
    )
        .prop_map(|(t, e, min, max, minl, maxi, excl)| {
            let mut m = Map::new();
            if let Some(t) = t {
                m.insert("type".into(), t);
            }
            if let Some(e) = e {
                m.insert("enum".into(), Value::Array(e));
            }
            let (lo, hi) = if excl {
                ("exclusiveMinimum", "exclusiveMaximum")
            } else {
                ("minimum", "maximum")
            };
            if let Some(v) = min {
                m.insert(lo.into(), v);
            }
            if let Some(v) = max {
                m.insert(hi.into(), v);
            }
            if let Some(n) = minl {
                m.insert("minLength".into(), json!(n));
                m.insert("minItems".into(), json!(n));
            }
            if let Some(n) = maxi {
                m.insert("maxItems".into(), json!(n));
                m.insert("maxProperties".into(), json!(n + 1));
            }
            m.insert("description".into(), json!("d"));
            Value::Object(m)
        });
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            (
                proptest::collection::btree_map("[abxy]", inner.clone(), 0..3),
                proptest::collection::vec("[abxy]", 0..3),
                prop_oneof![
                    Just(None),
                    Just(Some(json!(false))),
                    Just(Some(json!(true))),
                    inner.clone().prop_map(Some)
                ],
            )
                .prop_map(|(props, req, add)| {
                    let req: BTreeSet<String> = req.into_iter().collect();
                    let mut m = Map::new();
                    m.insert("type".into(), json!("object"));
                    m.insert(
                        "properties".into(),
                        Value::Object(props.into_iter().collect()),
                    );
                    m.insert("required".into(), json!(req));
                    if let Some(a) = add {
                        m.insert("additionalProperties".into(), a);
                    }
                    Value::Object(m)
                }),
            inner
                .clone()
                .prop_map(|i| json!({"type": "array", "items": i})),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"anyOf": v})),
            proptest::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"oneOf": v})),
            proptest::collection::vec(inner, 1..3).prop_map(|v| json!({"allOf": v})),
            Just(json!(false)),
            Just(json!({"const": {"a": [1, 2.0]}})),
        ]
    })
}

#[test]
fn generated_schemas_agree_with_jsonschema() {
    let mut outer = TestRunner::new(Config {
        cases: 300,
        ..Config::default()
    });
    outer
        .run(&subset_schema(), |schema| {
            let mut inner = TestRunner::new(Config {
                cases: 24,
                ..Config::default()
            });
            compare_on(&schema, &mut inner).map_err(TestCaseError::fail)?;
            Ok(())
        })
        .unwrap();
}

#[test]
fn refusals_are_keywords_jsonschema_asserts() {
    // Each refused schema is one where `jsonschema` rejects a value the subset would let
    // through if it ignored the keyword: refusing is the only honest answer.
    for (schema, value) in [
        (json!({"pattern": "^a"}), json!("b")),
        (json!({"not": {"type": "string"}}), json!("b")),
        (json!({"uniqueItems": true}), json!([1, 1])),
        (json!({"multipleOf": 2}), json!(3)),
        (
            json!({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}),
            json!(1),
        ),
        (json!({"items": [{"type": "string"}]}), json!([1])),
        (json!({"propertyNames": {"maxLength": 1}}), json!({"ab": 1})),
        (json!({"dependentRequired": {"a": ["b"]}}), json!({"a": 1})),
    ] {
        assert!(Schema::compile(&schema).is_err(), "{schema}");
        if let Ok(v) = jsonschema::validator_for(&schema) {
            assert!(!v.is_valid(&value), "{schema} {value}");
        }
    }
}
