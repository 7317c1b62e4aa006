//! Which fields of a transcript record give its success, task, model, method and dataset: a
//! mapping detected from common field names (in the documented order below), shown per file,
//! and changed per file (`--field success=evaluation.utility`, a mapping JSON file, or the
//! app's file options).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::formats::schema_check::kind;

/// Where each field comes from, when set by the user (a dotted path into the record, e.g.
/// `eval_result.overall_reward`; a number in a path indexes an array). Unset fields are
/// detected.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FieldMap {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub success: Option<String>,
    /// A numeric outcome succeeds at or above this (default 1.0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
}

/// The fields a mapping names, in the order they are shown.
pub const FIELDS: [&str; 6] = ["success", "threshold", "task", "model", "method", "dataset"];

/// Outcome fields, in the order they are looked for: booleans first, then the benchmark's
/// reward, then correctness flags.
pub const SUCCESS_FIELDS: [&str; 11] = [
    "success",
    "pass",
    "passed",
    "resolved",
    "reward",
    "score",
    "eval_result.overall_reward",
    "is_correct",
    "correct",
    "meta.is_correct",
    "evaluation.utility",
];
/// Task id fields; else the file name.
pub const TASK_FIELDS: [&str; 8] = [
    "task_id",
    "instance_id",
    "id",
    "meta.id",
    "meta.task_id",
    "task",
    "task_name",
    "name",
];
/// Model fields; else a `<model>_<task>` file name, else the folder's name.
pub const MODEL_FIELDS: [&str; 5] = [
    "model",
    "model_name",
    "model_path",
    "meta.model",
    "pipeline_name",
];
/// Method fields; else `default`.
pub const METHOD_FIELDS: [&str; 3] = ["agent", "method", "harness"];
/// Dataset fields; else `transcripts`.
pub const DATASET_FIELDS: [&str; 4] = ["dataset", "benchmark", "benchmark_name", "suite_name"];

/// The dataset of records that name none.
pub const DEFAULT_DATASET: &str = "transcripts";
/// The method of records that name none.
pub const DEFAULT_METHOD: &str = "default";

impl FieldMap {
    /// Sets one field from `name=value` (the CLI's `--field`).
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, value) = assignment
            .split_once('=')
            .ok_or_else(|| format!("expected FIELD=PATH, got {assignment:?}"))?;
        let (name, value) = (name.trim(), value.trim());
        if value.is_empty() {
            return Err(format!("--field {name}= needs a path"));
        }
        self.set_field(name, Some(value))
    }

    /// Sets field `name` to `value`, or back to detected with `None` (the app's inputs).
    pub fn set_field(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        if name == "threshold" {
            self.threshold = match value {
                None => None,
                Some(v) => Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|t| t.is_finite())
                        .ok_or_else(|| format!("threshold must be a number, got {v:?}"))?,
                ),
            };
            return Ok(());
        }
        *self.path_mut(name)? = value.map(str::to_string);
        Ok(())
    }

    /// Field `name` as written (empty when detected).
    pub fn get(&self, name: &str) -> String {
        match name {
            "threshold" => self.threshold.map(|t| t.to_string()),
            _ => self.path(name).cloned(),
        }
        .unwrap_or_default()
    }

    fn path(&self, name: &str) -> Option<&String> {
        match name {
            "success" => self.success.as_ref(),
            "task" => self.task.as_ref(),
            "model" => self.model.as_ref(),
            "method" => self.method.as_ref(),
            "dataset" => self.dataset.as_ref(),
            _ => None,
        }
    }

    fn path_mut(&mut self, name: &str) -> Result<&mut Option<String>, String> {
        Ok(match name {
            "success" => &mut self.success,
            "task" => &mut self.task,
            "model" => &mut self.model,
            "method" => &mut self.method,
            "dataset" => &mut self.dataset,
            other => {
                return Err(format!(
                    "unknown field {other:?}: expected one of {}",
                    FIELDS.join(", ")
                ))
            }
        })
    }

    /// Reads a mapping JSON file (`{"success": "evaluation.utility", "threshold": 0.5, …}`).
    pub fn parse(text: &str) -> Result<FieldMap, String> {
        serde_json::from_str(text).map_err(|e| format!("not a field mapping: {e}"))
    }

    pub fn threshold(&self) -> f64 {
        self.threshold.unwrap_or(1.0)
    }
}

/// The value at a dotted path; `Some(Value::Null)` when the last key is present with `null`.
pub(crate) fn lookup<'v>(record: &'v Value, path: &str) -> Option<&'v Value> {
    let mut v = record;
    for key in path.split('.') {
        v = match v {
            Value::Object(map) => map.get(key)?,
            Value::Array(items) => items.get(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

/// A record's outcome.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// Decided, by the field at this path.
    Decided { success: bool, field: String },
    /// The outcome field is present but `null`: the record is not scored.
    Null { field: String },
}

/// Reads the outcome: the mapped field, else the first of [`SUCCESS_FIELDS`] present.
pub(crate) fn outcome(record: &Value, fields: &FieldMap) -> Result<Outcome, String> {
    let threshold = fields.threshold();
    let candidates: Vec<&str> = match &fields.success {
        Some(p) => vec![p.as_str()],
        None => SUCCESS_FIELDS.to_vec(),
    };
    for field in candidates {
        let Some(v) = lookup(record, field) else {
            continue;
        };
        let success = match v {
            Value::Null => {
                return Ok(Outcome::Null {
                    field: field.to_string(),
                })
            }
            Value::Bool(b) => *b,
            Value::Number(n) => match n.as_f64() {
                Some(x) if x.is_finite() => x >= threshold - super::super::SUCCESS_EPS,
                _ => return Err(format!("the outcome field {field} is not a finite number")),
            },
            other => {
                return Err(format!(
                    "the outcome field {field} must be a boolean or a number, found {}",
                    kind(other)
                ))
            }
        };
        return Ok(Outcome::Decided {
            success,
            field: field.to_string(),
        });
    }
    Err(match &fields.success {
        Some(p) => format!("the record has no field {p} (the success field set for this file)"),
        None => format!(
            "no outcome field: looked for {}; name the field that holds the outcome (--field \
             success=PATH, or the file's options in the app)",
            SUCCESS_FIELDS.join(", ")
        ),
    })
}

/// A name-like field: the mapped path, else the first of `candidates` holding a non-empty
/// string or a number. `Err` when a mapped path is missing.
pub(crate) fn name_field(
    record: &Value,
    mapped: Option<&str>,
    candidates: &[&str],
) -> Result<Option<(String, String)>, String> {
    let text = |v: &Value| match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    if let Some(path) = mapped {
        return match lookup(record, path).and_then(text) {
            Some(v) => Ok(Some((v, path.to_string()))),
            None => Err(format!(
                "the record has no text or number at {path} (the field set for this file)"
            )),
        };
    }
    Ok(candidates
        .iter()
        .find_map(|p| Some((text(lookup(record, p)?)?, p.to_string()))))
}

/// What was used for each field of a file's records, for the file list and the report: per
/// field, up to four sources in the order met.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Detected(Vec<(&'static str, Vec<String>)>);

impl Detected {
    /// Notes that `field` came from `source`; whether that is new.
    pub fn note(&mut self, field: &'static str, source: &str) -> bool {
        let i = match self.0.iter().position(|(f, _)| *f == field) {
            Some(i) => i,
            None => {
                self.0.push((field, Vec::new()));
                self.0.len() - 1
            }
        };
        let sources = &mut self.0[i].1;
        let new = sources.len() < 4 && !sources.iter().any(|s| s == source);
        if new {
            sources.push(source.to_string());
        }
        new
    }

    /// `field → source` with several sources joined by ` | `.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.0
            .iter()
            .map(|(k, v)| (k.to_string(), v.join(" | ")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outcomes_in_order() {
        let f = FieldMap::default();
        let o = |v: Value| outcome(&v, &f);
        assert_eq!(
            o(json!({"pass": true, "reward": 0})),
            Ok(Outcome::Decided {
                success: true,
                field: "pass".into()
            })
        );
        assert_eq!(
            o(json!({"eval_result": {"overall_reward": 0.9999999}, "meta": {"is_correct": false}})),
            Ok(Outcome::Decided {
                success: true,
                field: "eval_result.overall_reward".into()
            })
        );
        assert_eq!(
            o(json!({"reward": null})),
            Ok(Outcome::Null {
                field: "reward".into()
            })
        );
        let e = o(json!({"messages": []})).unwrap_err();
        assert!(e.contains("evaluation.utility"), "{e}");
        assert!(o(json!({"success": "yes"}))
            .unwrap_err()
            .contains("a string"));
        let mut half = FieldMap::default();
        half.set("success=score").unwrap();
        half.set("threshold=0.5").unwrap();
        assert_eq!(
            outcome(&json!({"pass": false, "score": 0.5}), &half),
            Ok(Outcome::Decided {
                success: true,
                field: "score".into()
            })
        );
        assert!(half.set("colour=x").is_err());
        assert!(half.set("threshold=x").is_err());
    }

    #[test]
    fn paths_and_names() {
        let r = json!({"meta": {"id": 13}, "a": [{"b": "x"}], "task_name": "airline"});
        assert_eq!(lookup(&r, "a.0.b"), Some(&json!("x")));
        assert_eq!(
            name_field(&r, None, &TASK_FIELDS).unwrap(),
            Some(("13".into(), "meta.id".into()))
        );
        assert!(name_field(&r, Some("nope"), &TASK_FIELDS).is_err());
    }
}
