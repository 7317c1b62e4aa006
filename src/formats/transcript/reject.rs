//! When a transcript's tool reply means the call was rejected: the reply's explicit flags, then
//! a table of text rules (documented, editable with `--reject-rules FILE` or in the app,
//! switchable off), then calls no reply answers and arguments that are not JSON. The first
//! that applies decides, and the step records which did (`reject_source`).

use regex_lite::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

/// A text rule as written: the reply's text (leading whitespace dropped) matching `pattern`
/// means the call was rejected.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RejectRule {
    /// A short unique name; the step records `text:<id>`.
    pub id: String,
    /// A regular expression (`regex-lite` syntax, case-sensitive; anchor it with `^` to match
    /// the start).
    pub pattern: String,
}

/// The built-in text rules, in the order they are tried.
pub const BUILTIN: [(&str, &str); 4] = [
    ("error-prefix", r"^(Error|error:)"),
    ("traceback", r"^Traceback \(most recent call last\)"),
    ("security", r"^Security violation"),
    ("unknown-tool", r"^(Tool \S+ not found|Unknown tool)"),
];

/// The built-in rules as [`RejectRule`]s (what the app shows to edit).
pub fn builtin_rules() -> Vec<RejectRule> {
    BUILTIN
        .iter()
        .map(|(id, pattern)| RejectRule {
            id: id.to_string(),
            pattern: pattern.to_string(),
        })
        .collect()
}

/// The text rules a file is read with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct RejectSettings {
    /// Whether text rules apply at all (explicit flags, unanswered calls and bad arguments
    /// always do).
    pub text_rules: bool,
    /// The rules instead of the built-in ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<RejectRule>>,
}

impl Default for RejectSettings {
    fn default() -> Self {
        RejectSettings {
            text_rules: true,
            rules: None,
        }
    }
}

impl RejectSettings {
    /// Reads a rules file: a JSON array of `{id, pattern}`, checked to compile.
    pub fn parse_rules(text: &str) -> Result<Vec<RejectRule>, String> {
        let rules: Vec<RejectRule> =
            serde_json::from_str(text).map_err(|e| format!("not a list of reject rules: {e}"))?;
        let mut seen = std::collections::BTreeSet::new();
        for r in &rules {
            if !seen.insert(r.id.as_str()) {
                return Err(format!("two reject rules are named {:?}", r.id));
            }
            compile(&r.pattern).map_err(|e| format!("reject rule {:?}: {e}", r.id))?;
        }
        Ok(rules)
    }
}

fn compile(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// Compiled text rules.
pub(crate) struct TextRules {
    rules: Vec<(String, Regex)>,
    /// Rules that did not compile (left out), each with the reason: said once per file.
    pub problems: Vec<String>,
}

impl TextRules {
    pub fn new(settings: &RejectSettings) -> TextRules {
        let mut out = TextRules {
            rules: Vec::new(),
            problems: Vec::new(),
        };
        if !settings.text_rules {
            return out;
        }
        for r in settings.rules.clone().unwrap_or_else(builtin_rules) {
            match compile(&r.pattern) {
                Ok(re) => out.rules.push((r.id, re)),
                Err(e) => out.problems.push(format!(
                    "reject rule {:?} is left out: its pattern does not compile ({e})",
                    r.id
                )),
            }
        }
        out
    }

    /// The id of the first rule the text matches.
    pub fn first_match(&self, text: &str) -> Option<&str> {
        let text = text.trim_start();
        self.rules
            .iter()
            .find(|(_, re)| re.is_match(text))
            .map(|(id, _)| id.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table() {
        let r = TextRules::new(&RejectSettings::default());
        assert_eq!(r.first_match("Error running tool x"), Some("error-prefix"));
        assert_eq!(r.first_match("  error: nope"), Some("error-prefix"));
        assert_eq!(r.first_match("errors found: 0"), None);
        assert_eq!(
            r.first_match("Traceback (most recent call last):\n  File"),
            Some("traceback")
        );
        assert_eq!(
            r.first_match("Security violation: denied"),
            Some("security")
        );
        assert_eq!(r.first_match("Tool get_x not found"), Some("unknown-tool"));
        assert_eq!(r.first_match("Unknown tool: y"), Some("unknown-tool"));
        assert_eq!(r.first_match("The Error was fixed"), None);
        let off = TextRules::new(&RejectSettings {
            text_rules: false,
            rules: None,
        });
        assert_eq!(off.first_match("Error"), None);
    }

    #[test]
    fn user_rules() {
        let rules =
            RejectSettings::parse_rules(r#"[{"id": "fail", "pattern": "^FAILED"}]"#).unwrap();
        let r = TextRules::new(&RejectSettings {
            text_rules: true,
            rules: Some(rules),
        });
        assert_eq!(r.first_match("FAILED: x"), Some("fail"));
        assert_eq!(r.first_match("Error: x"), None);
        assert!(RejectSettings::parse_rules(r#"[{"id": "a", "pattern": "("}]"#).is_err());
        assert!(RejectSettings::parse_rules(
            r#"[{"id": "a", "pattern": "x"}, {"id": "a", "pattern": "y"}]"#
        )
        .is_err());
    }
}
