//! Tool-schema prefix checks: the paper's "schema" failures, read from the logs alone.
//!
//! An action is executable only if the tool is exposed and its arguments fit the tool's
//! schema (the spec's first two conditions). Environments enforce these loosely — many accept
//! an extra argument or a string where an integer was declared — so when a log carries the tool
//! definitions, each step is checked against them *before* the environment's verdict is taken.
//! A failing check rejects the step with the label `schema`, which wins the label tie-break.
//!
//! Validation uses [`super::json_schema`], the project's validator for the JSON-Schema subset tool
//! definitions use (it refuses, rather than ignores, keywords outside that subset; its messages
//! are those of the `jsonschema` crate it replaced, which `tests/schema_subset.rs` checks). The
//! reported message is the smallest of all messages, so it does not depend on the order in which
//! keywords are checked.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use super::json_schema::Schema;

/// The tools exposed to the agent, with their compiled parameter schemas.
pub struct ToolSet {
    tools: BTreeMap<String, Option<Schema>>,
    /// Tools whose parameter schema could not be compiled (their arguments are not checked).
    pub unusable: Vec<(String, String)>,
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("unusable", &self.unusable)
            .finish()
    }
}

/// Why a value could not be read as a list of tool definitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolsError(pub String);

impl fmt::Display for ToolsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ToolSet {
    /// Reads tool definitions in any of the shapes logs use:
    /// - an array of OpenAI function specs, `{"type": "function", "function": {"name",
    ///   "parameters"}}`, or of flat `{"name", "parameters"}` objects (`input_schema`, as
    ///   Anthropic names it, is accepted for `parameters`);
    /// - an object from tool name to a definition with `params` or `parameters` (tau2's
    ///   `environment_info.tool_defs`).
    ///
    /// A definition without a parameter schema exposes the tool and accepts any arguments.
    pub fn from_json(value: &Value) -> Result<ToolSet, ToolsError> {
        let mut set = ToolSet {
            tools: BTreeMap::new(),
            unusable: Vec::new(),
        };
        match value {
            Value::Array(specs) => {
                for (i, spec) in specs.iter().enumerate() {
                    let f = spec.get("function").unwrap_or(spec);
                    let name = f.get("name").and_then(Value::as_str).ok_or_else(|| {
                        ToolsError(format!(
                            "tools[{i}]: a tool definition needs a \"name\" (OpenAI style: \
                             {{\"type\": \"function\", \"function\": {{\"name\": …, \
                             \"parameters\": {{…}}}}}})"
                        ))
                    })?;
                    set.add(name, params_of(f));
                }
            }
            Value::Object(map) => {
                for (name, def) in map {
                    let name = def.get("name").and_then(Value::as_str).unwrap_or(name);
                    set.add(name, params_of(def));
                }
            }
            other => {
                return Err(ToolsError(format!(
                    "tools must be an array of function specs or an object of tool definitions, \
                     found {}",
                    kind(other)
                )))
            }
        }
        Ok(set)
    }

    fn add(&mut self, name: &str, params: Option<&Value>) {
        let validator = params.and_then(|schema| match Schema::compile(schema) {
            Ok(v) => Some(v),
            Err(e) => {
                self.unusable.push((name.to_string(), e));
                None
            }
        });
        self.tools.insert(name.to_string(), validator);
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Checks one call: `Err` holds the reason the call is not executable. `args: None` means
    /// the log did not record the arguments; then only exposure is checked.
    pub fn check(&self, tool: &str, args: Option<&Value>) -> Result<(), String> {
        let Some(validator) = self.tools.get(tool) else {
            return Err(format!(
                "schema: tool {tool:?} is not among the {} tools exposed",
                self.tools.len()
            ));
        };
        let (Some(validator), Some(args)) = (validator, args) else {
            return Ok(());
        };
        let smallest = validator
            .errors(args)
            .into_iter()
            .map(|e| {
                if e.path.is_empty() {
                    e.message
                } else {
                    format!("{}: {}", e.path, e.message)
                }
            })
            .min();
        match smallest {
            None => Ok(()),
            Some(m) => Err(format!(
                "schema: arguments of {tool:?} do not fit its schema: {m}"
            )),
        }
    }
}

fn params_of(def: &Value) -> Option<&Value> {
    ["parameters", "params", "input_schema"]
        .into_iter()
        .find_map(|k| def.get(k).filter(|v| !v.is_null()))
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::from_json(&json!([
            {"type": "function", "function": {"name": "cd", "parameters": {
                "type": "object",
                "properties": {"folder": {"type": "string"}},
                "required": ["folder"],
                "additionalProperties": false}}},
            {"name": "set_mode", "parameters": {
                "type": "object",
                "properties": {"mode": {"enum": ["a", "b"]}, "n": {"type": "integer"}}}},
            {"name": "free"}
        ]))
        .unwrap()
    }

    #[test]
    fn exposure_required_types_enum_additional() {
        let t = tools();
        assert_eq!(t.len(), 3);
        assert!(t.check("cd", Some(&json!({"folder": "x"}))).is_ok());
        assert!(t.check("free", Some(&json!({"anything": [1]}))).is_ok());
        assert!(t.check("cd", None).is_ok());
        let e = t.check("rm", Some(&json!({}))).unwrap_err();
        assert!(e.contains("not among the 3 tools"), "{e}");
        let e = t.check("cd", Some(&json!({}))).unwrap_err();
        assert!(e.contains("folder") && e.starts_with("schema:"), "{e}");
        let e = t.check("cd", Some(&json!({"folder": 3}))).unwrap_err();
        assert!(e.contains("/folder"), "{e}");
        assert!(t
            .check("cd", Some(&json!({"folder": "x", "extra": 1})))
            .is_err());
        assert!(t.check("set_mode", Some(&json!({"mode": "c"}))).is_err());
        assert!(t.check("set_mode", Some(&json!({"n": "1"}))).is_err());
        assert!(t
            .check("set_mode", Some(&json!({"mode": "a", "n": 1})))
            .is_ok());
        assert!(t.check("cd", Some(&json!("not an object"))).is_err());
    }

    #[test]
    fn tau2_tool_defs_and_bad_shapes() {
        let t = ToolSet::from_json(&json!({
            "get_user": {"name": "get_user", "doc": "…", "params": {
                "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
            "think": {"name": "think", "params": null}
        }))
        .unwrap();
        assert!(t.check("get_user", Some(&json!({"id": "u1"}))).is_ok());
        assert!(t.check("get_user", Some(&json!({}))).is_err());
        assert!(t.check("think", Some(&json!({"x": 1}))).is_ok());
        assert!(ToolSet::from_json(&json!("cd")).is_err());
        assert!(ToolSet::from_json(&json!([{"parameters": {}}]))
            .unwrap_err()
            .0
            .contains("name"));
        let t = ToolSet::from_json(&json!([{"name": "x", "parameters": {"type": 7}}])).unwrap();
        assert_eq!(t.unusable.len(), 1);
        assert!(t.check("x", Some(&json!({}))).is_ok());
    }

    #[test]
    fn the_message_is_deterministic() {
        let t = tools();
        let args = json!({"folder": 1, "a": 1, "b": 2, "c": 3});
        let first = t.check("cd", Some(&args)).unwrap_err();
        for _ in 0..20 {
            assert_eq!(tools().check("cd", Some(&args)).unwrap_err(), first);
        }
    }
}
