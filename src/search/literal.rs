//! Plain-word patterns (`low battery|cellular`, `PermissionError`) matched without the regex
//! engine, in the browser: `regex-lite` runs every pattern on its backtracking-free VM, about
//! 20 MB/s there, where finding a word is a byte scan. `regex-lite`'s case-insensitive matching
//! is ASCII-only, so a pattern made of ASCII literals joined by `|` matches a text exactly when
//! one of its literals occurs in it, ASCII case ignored: the same answer, which the test below
//! checks against `regex-lite` itself. (Natively `regex` finds literals fast on its own, and its
//! Unicode case folding — `k` matches the Kelvin sign — would make this answer differ.)

/// The literals of `pattern` when it is nothing but ASCII literals joined by `|` and matched
/// case-insensitively (no `(?-i)`), lowercased; `None` for any other pattern.
pub fn literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    // Characters that are themselves in a pattern outside a class (no escapes, no metas).
    let plain = |c: char| c.is_ascii_alphanumeric() || " _-:,;'\"!@%&~=<>/`".contains(c);
    let alternatives: Vec<&str> = pattern.split('|').collect();
    if alternatives
        .iter()
        .any(|a| a.is_empty() || !a.chars().all(plain))
    {
        return None;
    }
    Some(
        alternatives
            .iter()
            .map(|a| a.to_ascii_lowercase().into_bytes())
            .collect(),
    )
}

/// Whether `pattern` is plain words (as [`literals`]) whose characters stand in JSON bytes as
/// themselves wherever a string holds them: none that JSON escapes or may escape (`"`, `/`).
#[cfg(not(target_arch = "wasm32"))]
pub fn raw_safe(pattern: &str) -> bool {
    literals(pattern).is_some() && !pattern.contains(['"', '/'])
}

pub use crate::label::prefilter::contains_any;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_alternations() {
        assert_eq!(
            literals("Low Battery|cellular"),
            Some(vec![b"low battery".to_vec(), b"cellular".to_vec()])
        );
        for p in [
            "^send",
            "a.b",
            "x|",
            "(?-i)X",
            "a\\b",
            "caf\u{e9}",
            "a+",
            "[ab]",
            "a$",
        ] {
            assert_eq!(literals(p), None, "{p}");
        }
    }

    /// The same answers as `regex-lite`, the browser's engine, case-insensitive.
    #[test]
    fn the_answers_of_regex_lite() {
        let texts = [
            "",
            "Low battery: the phone is off",
            "LOW BATTERY",
            "low  battery",
            "cellular",
            "Cellulär",
            "celLULAR service",
            "x\u{212a}elvin",
            "kelvin",
            "PermissionError: wifi is off",
            "permissionerro",
            "ééé low battery",
            "\"quoted\" = <tag> `code` /path/",
        ];
        let patterns = [
            "low battery|cellular",
            "PermissionError",
            "kelvin",
            "é",
            "\"quoted\" = <tag>",
            "/path/|`code`",
            "e",
            "zz|yy|battery:",
        ];
        for p in patterns {
            let Some(lits) = literals(p) else {
                assert_eq!(p, "é");
                continue;
            };
            let re = regex_lite::RegexBuilder::new(p)
                .case_insensitive(true)
                .build()
                .unwrap();
            for t in texts {
                assert_eq!(contains_any(t, &lits), re.is_match(t), "{p} in {t:?}");
            }
        }
    }
}
