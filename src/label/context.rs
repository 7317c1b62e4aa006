//! The context a rollout's fold carries for the labeller: the argument values of the steps
//! before the first failure, bounded in memory.
//!
//! Canonical lines hold each call's arguments but neither the tools' outputs nor the user's
//! turns, so "an earlier step returned or created this id" is seen only through the arguments of
//! earlier, accepted calls (a `touch(file_name="a.txt")` creates `a.txt`; a `get_order(id=…)`
//! that succeeded used an id that existed then). When the failing call refers to such a value,
//! its reference is [`Reference::Seen`].

use std::collections::BTreeSet;

use serde_json::Value;

use super::Reference;

/// At most this many distinct values are remembered per rollout (the first ones seen); later
/// values are not, so a huge rollout costs no more than this.
pub const MAX_SEEN_VALUES: usize = 4_096;
/// Values longer than this are not references (free text, file contents).
const MAX_VALUE_CHARS: usize = 200;
/// Nesting deeper than this is not searched for values.
const MAX_DEPTH: usize = 8;

/// Argument values of earlier accepted steps; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct StepContext {
    seen: BTreeSet<String>,
}

impl StepContext {
    pub fn new() -> Self {
        StepContext::default()
    }

    /// Remembers the values of an accepted step's arguments.
    pub fn observe(&mut self, args: &Value) {
        let mut values = Vec::new();
        collect(args, 0, &mut values);
        for v in values {
            if self.seen.len() >= MAX_SEEN_VALUES {
                break;
            }
            self.seen.insert(v);
        }
    }

    /// The reference context of a failing step with these arguments and error text. The values
    /// it refers to are, in this order of preference: the argument values the error text
    /// quotes; the values of arguments whose name the error text names (`payment_id` for
    /// "payment method not found"); its id-like argument values (with a digit, `/`, `_` or `.`,
    /// or a number of four digits or more).
    pub fn reference(&self, args: Option<&Value>, error: Option<&str>) -> Reference {
        let Some(args) = args else {
            return Reference::None;
        };
        let mut values = Vec::new();
        collect(args, 0, &mut values);
        let error_lower = error.map(str::to_lowercase).unwrap_or_default();
        let quoted: Vec<&String> = match error {
            Some(e) => values
                .iter()
                .filter(|v| v.len() >= 2 && e.contains(v.as_str()))
                .collect(),
            None => Vec::new(),
        };
        let mut named = Vec::new();
        if let Value::Object(map) = args {
            for (key, value) in map {
                if key_named(key, &error_lower) {
                    collect(value, 1, &mut named);
                }
            }
        }
        let refs: Vec<&String> = if !quoted.is_empty() {
            quoted
        } else if !named.is_empty() {
            named.iter().collect()
        } else {
            values.iter().filter(|v| id_like(v)).collect()
        };
        if refs.is_empty() {
            Reference::None
        } else if refs.iter().any(|v| self.seen.contains(v.as_str())) {
            Reference::Seen
        } else {
            Reference::Unseen
        }
    }
}

/// String values and integers (as decimal text) of a JSON value, depth-first.
fn collect(v: &Value, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::String(s) if !s.is_empty() && s.chars().count() <= MAX_VALUE_CHARS => {
            out.push(s.clone());
        }
        Value::Number(n) if n.is_u64() || n.is_i64() => out.push(n.to_string()),
        Value::Array(items) => items.iter().for_each(|i| collect(i, depth + 1, out)),
        Value::Object(map) => map.values().for_each(|i| collect(i, depth + 1, out)),
        _ => {}
    }
}

/// Whether an argument name names something the (lower-case) error text mentions: one of its
/// words, other than the generic ones, occurs in it.
fn key_named(key: &str, error_lower: &str) -> bool {
    key.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            w.len() >= 3 && !matches!(*w, "ids" | "name" | "names" | "number" | "new" | "old")
        })
        .any(|w| error_lower.contains(w))
}

/// Looks like an identifier or a path rather than a word or a small number.
fn id_like(v: &str) -> bool {
    if v.chars().count() < 3 || v.chars().any(char::is_whitespace) {
        return false;
    }
    if v.bytes().all(|b| b.is_ascii_digit()) {
        return v.len() >= 4;
    }
    v.bytes()
        .any(|b| b.is_ascii_digit() || matches!(b, b'/' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_an_earlier_step_used_is_seen() {
        let mut c = StepContext::new();
        c.observe(&json!({"file_name": "notes.txt"}));
        let r = c.reference(
            Some(&json!({"file_name": "notes.txt"})),
            Some("cat: 'notes.txt': No such file or directory"),
        );
        assert_eq!(r, Reference::Seen);
        let r = c.reference(
            Some(&json!({"file_name": "other.txt"})),
            Some("cat: 'other.txt': No such file or directory"),
        );
        assert_eq!(r, Reference::Unseen);
    }

    #[test]
    fn quoted_words_count_as_references_even_when_not_id_like() {
        let mut c = StepContext::new();
        c.observe(&json!({"dir_name": "tmp"}));
        let r = c.reference(
            Some(&json!({"folder": "tmp"})),
            Some("cd: 'tmp': No such file"),
        );
        assert_eq!(r, Reference::Seen);
        // Not quoted and not id-like: nothing to refer to.
        let r = c.reference(Some(&json!({"cabin": "economy"})), Some("Error: not found"));
        assert_eq!(r, Reference::None);
    }

    #[test]
    fn the_quoted_value_decides_over_other_arguments() {
        let mut c = StepContext::new();
        c.observe(&json!({"order_id": "#W123"}));
        let args = json!({"order_id": "#W123", "new_item_ids": [1434748144u64]});
        let r = c.reference(Some(&args), Some("Error: New item 1434748144 not found"));
        assert_eq!(r, Reference::Unseen);
        let r = c.reference(Some(&args), Some("Error: not found"));
        assert_eq!(r, Reference::Seen);
    }

    #[test]
    fn the_argument_the_error_names_decides() {
        let mut c = StepContext::new();
        c.observe(&json!({"reservation_id": "ABC123"}));
        let args = json!({"reservation_id": "ABC123", "payment_id": "credit_card_9"});
        let r = c.reference(Some(&args), Some("Error: payment method not found"));
        assert_eq!(r, Reference::Unseen);
        let r = c.reference(Some(&args), Some("Error: reservation not found"));
        assert_eq!(r, Reference::Seen);
    }

    #[test]
    fn no_arguments_or_no_id_like_value_tells_nothing() {
        let c = StepContext::new();
        assert_eq!(c.reference(None, Some("x")), Reference::None);
        assert_eq!(c.reference(Some(&json!({"n": 3})), None), Reference::None);
        assert_eq!(
            c.reference(Some(&json!({"id": "ZFA04Y1"})), None),
            Reference::Unseen
        );
    }

    #[test]
    fn memory_is_bounded() {
        let mut c = StepContext::new();
        for i in 0..(MAX_SEEN_VALUES + 100) {
            c.observe(&json!({ "id": format!("id_{i}") }));
        }
        assert_eq!(c.seen.len(), MAX_SEEN_VALUES);
        // Deep nesting is not searched past MAX_DEPTH.
        let mut v = json!("deep_value_1");
        for _ in 0..20 {
            v = json!([v]);
        }
        let mut d = StepContext::new();
        d.observe(&v);
        assert!(d.seen.is_empty());
    }
}
