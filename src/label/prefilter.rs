//! Words a pattern's every match must contain, so that a text holding none of them is answered
//! "no match" without running the pattern.
//!
//! `regex-lite` runs a pattern on its backtracking-free VM, one state set per byte of the text
//! (about 20 MB/s in the browser), and has no literal optimisations. A label decision runs up to
//! every rule's patterns on the failure's error text, so labelling was a sizeable share of reading
//! a big ToolSandbox leaderboard in the browser. Most rules' patterns name words (`not found`,
//! `timed out`, `PermissionError`): a text that contains none of a pattern's required words
//! cannot match it, and finding a word is a byte scan.
//!
//! [`required`] reads a pattern in `regex-lite`'s syntax and gives a set of lowercase ASCII
//! words such that every text the pattern matches, case-insensitively, contains one of them
//! (ASCII case ignored: `regex-lite`'s case folding is ASCII only). It is conservative: a
//! construct it does not know makes it give no set at all, and a part it cannot see into (a
//! `.`, a `\w`, a negated class, a non-ASCII letter) stands for "any text", so the set may say
//! less than the pattern does but never more. The property tests below check the one-way
//! promise against `regex-lite` itself: whenever the pattern matches, a required word is there.

use std::collections::BTreeSet;

/// Most words kept in one set; past it the set says too little to be worth its scans.
const MAX_WORDS: usize = 48;
/// The shortest word worth a scan: shorter ones occur in nearly every text.
const MIN_USEFUL: usize = 3;

type Words = BTreeSet<Vec<u8>>;

/// What is known of a part of a pattern.
#[derive(Clone, Debug)]
struct Info {
    /// Every text the part can match, when they are few (lowercase; `""` for an empty match).
    exact: Option<Words>,
    /// Words one of which every match of the part contains.
    required: Option<Words>,
}

impl Info {
    fn any() -> Info {
        Info {
            exact: None,
            required: None,
        }
    }

    fn empty() -> Info {
        Info {
            exact: Some(Words::from([Vec::new()])),
            required: None,
        }
    }

    /// The best requirement this part gives: its own, or its exact texts when none is empty.
    fn requirement(&self) -> Option<Words> {
        let exact = self
            .exact
            .as_ref()
            .filter(|e| !e.contains(&Vec::new()))
            .cloned();
        better(self.required.clone(), exact)
    }
}

/// How selective a set of words is: its shortest word, then fewer words.
fn score(words: &Words) -> (usize, std::cmp::Reverse<usize>) {
    let shortest = words.iter().map(Vec::len).min().unwrap_or(0);
    (shortest, std::cmp::Reverse(words.len()))
}

fn better(a: Option<Words>, b: Option<Words>) -> Option<Words> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if score(&b) > score(&a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Words one of which every case-insensitive match of `pattern` contains (lowercase ASCII), or
/// `None` when the pattern gives no useful set (or uses a construct this reading does not know).
pub fn required(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let words = all_required(pattern)?;
    (score(&words).0 >= MIN_USEFUL).then(|| words.into_iter().collect())
}

/// [`required`] before the usefulness cut (the promise holds for any set this gives).
fn all_required(pattern: &str) -> Option<Words> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut parser = Parser { chars, at: 0 };
    let info = parser.alternation()?;
    if parser.at != parser.chars.len() {
        return None;
    }
    info.requirement()
}

/// Whether `text` contains one of `words` (lowercase ASCII), ASCII case ignored.
pub fn admits(text: &str, words: &[Vec<u8>]) -> bool {
    contains_any(text, words)
}

/// Whether one of `literals` (lowercase ASCII) occurs in `text`, ASCII case ignored.
pub fn contains_any(text: &str, literals: &[Vec<u8>]) -> bool {
    literals.iter().any(|l| contains(text.as_bytes(), l))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let upper = first.to_ascii_uppercase();
    let mut from = 0;
    while from + needle.len() <= hay.len() {
        let Some(at) = memchr::memchr2(first, upper, &hay[from..=hay.len() - needle.len()]) else {
            return false;
        };
        let at = from + at;
        if hay[at + 1..at + needle.len()].eq_ignore_ascii_case(rest) {
            return true;
        }
        from = at + 1;
    }
    false
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    /// `a|b|…` up to the end or a `)`.
    fn alternation(&mut self) -> Option<Info> {
        let mut branches = vec![self.concatenation()?];
        while self.peek() == Some('|') {
            self.at += 1;
            branches.push(self.concatenation()?);
        }
        if branches.len() == 1 {
            return branches.pop();
        }
        let exact = branches
            .iter()
            .map(|b| b.exact.clone())
            .try_fold(Words::new(), |mut all, e| {
                all.extend(e?);
                Some(all)
            })
            .filter(|all| all.len() <= MAX_WORDS);
        let required = branches
            .iter()
            .map(Info::requirement)
            .try_fold(Words::new(), |mut all, r| {
                all.extend(r?);
                Some(all)
            })
            .filter(|all| all.len() <= MAX_WORDS);
        Some(Info { exact, required })
    }

    /// A sequence of repeated atoms, up to `|`, `)` or the end.
    fn concatenation(&mut self) -> Option<Info> {
        // `run`: the exact texts of the items since the last one without exact texts.
        let mut run = Some(Words::from([Vec::new()]));
        let mut whole_exact = true;
        let mut best: Option<Words> = None;
        let commit = |run: &Option<Words>, best: &mut Option<Words>| {
            let r = run.clone().filter(|r| !r.contains(&Vec::new()));
            *best = better(best.take(), r);
        };
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            let item = self.repetition(atom)?;
            best = better(best, item.required.clone());
            match (&run, &item.exact) {
                (Some(r), Some(e)) if r.len() * e.len() <= MAX_WORDS => {
                    run = Some(
                        r.iter()
                            .flat_map(|a| {
                                e.iter().map(move |b| {
                                    let mut ab = a.clone();
                                    ab.extend_from_slice(b);
                                    ab
                                })
                            })
                            .collect(),
                    );
                }
                (_, Some(e)) => {
                    commit(&run, &mut best);
                    whole_exact = false;
                    run = Some(e.clone());
                }
                (_, None) => {
                    commit(&run, &mut best);
                    whole_exact = false;
                    run = Some(Words::from([Vec::new()]));
                }
            }
        }
        commit(&run, &mut best);
        Some(Info {
            exact: if whole_exact { run } else { None },
            required: best,
        })
    }

    /// A quantifier after `atom`, if any.
    fn repetition(&mut self, atom: Info) -> Option<Info> {
        let (min, max) = match self.peek() {
            Some('?') => (0, Some(1)),
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('{') => {
                self.at += 1;
                let min = self.number()?;
                let max = if self.peek() == Some(',') {
                    self.at += 1;
                    if self.peek() == Some('}') {
                        None
                    } else {
                        Some(self.number()?)
                    }
                } else {
                    Some(min)
                };
                if self.peek() != Some('}') {
                    return None;
                }
                (min, max)
            }
            _ => return Some(atom),
        };
        self.at += 1;
        // A lazy quantifier finds other matches, not other texts that match.
        if self.peek() == Some('?') {
            self.at += 1;
        }
        if matches!(self.peek(), Some('?' | '*' | '+' | '{')) {
            return None;
        }
        Some(match (min, max) {
            (0, Some(1)) => Info {
                exact: atom.exact.map(|mut e| {
                    e.insert(Vec::new());
                    e
                }),
                required: None,
            },
            (0, _) => Info::any(),
            (1, Some(1)) => atom,
            _ => Info {
                exact: None,
                required: atom.requirement(),
            },
        })
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        if self.at == start || self.at - start > 6 {
            return None;
        }
        self.chars[start..self.at]
            .iter()
            .collect::<String>()
            .parse()
            .ok()
    }

    fn atom(&mut self) -> Option<Info> {
        let c = self.peek()?;
        self.at += 1;
        match c {
            '(' => {
                if self.peek() == Some('?') {
                    // Only a non-capturing group: flags could turn case folding off.
                    if self.chars.get(self.at + 1) != Some(&':') {
                        return None;
                    }
                    self.at += 2;
                }
                let inner = self.alternation()?;
                if self.peek() != Some(')') {
                    return None;
                }
                self.at += 1;
                Some(inner)
            }
            '[' => self.class(),
            '\\' => self.escape(),
            '.' => Some(Info::any()),
            '^' | '$' => Some(Info::empty()),
            // Meta characters out of place, or ones only a flag gives a meaning to.
            ')' | ']' | '{' | '}' | '?' | '*' | '+' | '#' | '&' | '~' => None,
            c => Some(literal(c)),
        }
    }

    fn escape(&mut self) -> Option<Info> {
        let c = self.peek()?;
        self.at += 1;
        match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => Some(Info::any()),
            // `\b{start}` and friends are not read here.
            'b' | 'B' | '<' | '>' | 'A' | 'z' if self.peek() != Some('{') => Some(Info::empty()),
            'a' | 'f' | 't' | 'n' | 'r' | 'v' => Some(Info::any()),
            c if c.is_ascii_punctuation() && c != '<' && c != '>' => Some(literal(c)),
            _ => None,
        }
    }

    /// `[…]`: its characters when they are few ASCII ones, else "any character".
    fn class(&mut self) -> Option<Info> {
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let mut members: BTreeSet<char> = BTreeSet::new();
        let mut opaque = negated;
        let mut first = true;
        loop {
            let c = self.peek()?;
            self.at += 1;
            let c = match c {
                ']' if !first => break,
                '[' | '&' | '~' => return None,
                '\\' => {
                    let e = self.peek()?;
                    self.at += 1;
                    match e {
                        'd' | 'D' | 's' | 'S' | 'w' | 'W' | 'a' | 'f' | 't' | 'n' | 'r' | 'v' => {
                            opaque = true;
                            first = false;
                            continue;
                        }
                        e if e.is_ascii_punctuation() && e != '<' && e != '>' => e,
                        _ => return None,
                    }
                }
                c => c,
            };
            first = false;
            // A range `c-d` (a `-` before `]` is itself).
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|&n| n != ']') {
                self.at += 1;
                let end = self.peek()?;
                self.at += 1;
                if end == '\\' || end == '[' || !c.is_ascii() || !end.is_ascii() || end < c {
                    return None;
                }
                for x in c..=end {
                    members.insert(x.to_ascii_lowercase());
                }
            } else if c.is_ascii() {
                members.insert(c.to_ascii_lowercase());
            } else {
                opaque = true;
            }
        }
        if opaque || members.len() > 12 {
            return Some(Info::any());
        }
        Some(Info {
            exact: Some(members.into_iter().map(|m| vec![m as u8]).collect()),
            required: None,
        })
    }
}

/// One character: itself when ASCII (lowercase), else "any character" (no folding is assumed).
fn literal(c: char) -> Info {
    if c.is_ascii() {
        Info {
            exact: Some(Words::from([vec![c.to_ascii_lowercase() as u8]])),
            required: None,
        }
    } else {
        Info::any()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn words(pattern: &str) -> Option<Vec<String>> {
        required(pattern).map(|w| {
            w.into_iter()
                .map(|w| String::from_utf8(w).unwrap())
                .collect()
        })
    }

    #[test]
    fn words_of_patterns() {
        assert_eq!(
            words("timed out|time-?out error|APITimeoutError"),
            Some(vec![
                "apitimeouterror".into(),
                "time-out error".into(),
                "timed out".into(),
                "timeout error".into()
            ])
        );
        assert_eq!(
            words(r"(http|status)\D{0,4}\b50[0-4]\b|bad gateway"),
            Some(vec!["bad gateway".into(), "http".into(), "status".into()])
        );
        assert_eq!(
            words(r"\balready\b|duplicate"),
            Some(vec!["already".into(), "duplicate".into()])
        );
        // The longer words win: `50x` is also required, but `http`/`status` are longer.
        assert_eq!(
            words(r"\b50[0-4] (service|bad)"),
            Some(vec![
                "500 bad".into(),
                "500 service".into(),
                "501 bad".into(),
                "501 service".into(),
                "502 bad".into(),
                "502 service".into(),
                "503 bad".into(),
                "503 service".into(),
                "504 bad".into(),
                "504 service".into()
            ])
        );
        assert_eq!(
            words(r"missing \d+ required (positional )?arguments?"),
            Some(vec![
                " required argument".into(),
                " required arguments".into(),
                " required positional argument".into(),
                " required positional arguments".into()
            ])
        );
        assert_eq!(
            words(r"rate[ _-]?limit"),
            Some(vec![
                "rate limit".into(),
                "rate-limit".into(),
                "rate_limit".into(),
                "ratelimit".into()
            ])
        );
        assert_eq!(
            words(r"unauthori[sz]ed"),
            Some(vec!["unauthorised".into(), "unauthorized".into()])
        );
        // Nothing required, or too little to be worth a scan.
        for p in ["a.b", "^x", r"\w+", "ab|.", "x?", "[^a]bc", "\u{e9}t\u{e9}"] {
            assert_eq!(words(p), None, "{p}");
        }
        // Constructs not read here.
        for p in [
            "(?i)abc",
            "(?-i)abc",
            r"\x41bcd",
            r"abc\b{start}",
            r"\pL",
            "[[:alpha:]]abc",
        ] {
            assert_eq!(words(p), None, "{p}");
        }
        // A non-ASCII letter stands for any text: no folding is assumed for it.
        assert_eq!(words("caf\u{e9}"), Some(vec!["caf".into()]));
        assert_eq!(
            words("(?:abc|abd)e"),
            Some(vec!["abce".into(), "abde".into()])
        );
    }

    /// Every built-in pattern that has words keeps them where the texts of the built-in tests
    /// match it (the property tests below check random patterns).
    #[test]
    fn builtin_patterns_have_words() {
        let with_words = crate::label::builtin::RULES
            .iter()
            .filter_map(|r| r.error)
            .filter(|p| required(p).is_some())
            .count();
        assert!(with_words >= 25, "{with_words}");
    }

    fn compile(p: &str) -> Option<regex_lite::Regex> {
        regex_lite::RegexBuilder::new(p)
            .case_insensitive(true)
            .build()
            .ok()
    }

    /// Random patterns over a small alphabet, in the syntax the table uses.
    fn pattern() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            8 => "[abAB -]{1,3}",
            1 => Just(".".to_string()),
            1 => Just(r"\b".to_string()),
            1 => Just(r"\d".to_string()),
            1 => Just(r"\w".to_string()),
            1 => Just(r"\s".to_string()),
            1 => Just("^".to_string()),
            1 => Just("$".to_string()),
            1 => Just("[ab]".to_string()),
            1 => Just("[a-c1]".to_string()),
            1 => Just("[^a]".to_string()),
            1 => Just(r"\.".to_string()),
            1 => Just("\u{e9}".to_string()),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
                prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.join("|")),
                inner.clone().prop_map(|p| format!("({p})")),
                inner.clone().prop_map(|p| format!("(?:{p})?")),
                inner.clone().prop_map(|p| format!("({p})*")),
                inner.clone().prop_map(|p| format!("({p})+")),
                inner.clone().prop_map(|p| format!("({p}){{1,3}}")),
                inner.prop_map(|p| format!("({p}){{0,2}}")),
            ]
        })
    }

    /// Texts the pattern's language (its assertions dropped, so a superset) produces, in random
    /// case, beside random texts over the patterns' alphabet.
    fn loosen(p: &str) -> String {
        let mut loose = String::new();
        let mut chars = p.chars().peekable();
        let mut prev = ' ';
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&'b') => {
                    chars.next();
                    continue;
                }
                // ASCII classes, as regex-lite's (the generator's are Unicode).
                '\\' if matches!(chars.peek(), Some('d' | 'w' | 's')) => {
                    loose.push_str(match chars.next() {
                        Some('d') => "[0-9]",
                        Some('w') => "[0-9A-Za-z_]",
                        _ => "[ \t]",
                    });
                    continue;
                }
                '^' if prev != '[' => {}
                '$' => {}
                c => loose.push(c),
            }
            if c == '\\' {
                if let Some(n) = chars.next() {
                    loose.push(n);
                }
            }
            prev = c;
        }
        loose
    }

    fn texts(p: &str) -> BoxedStrategy<Vec<String>> {
        let loose = loosen(p);
        let random = "[abcAB1 .\u{e9}-]{0,12}".boxed();
        let produced = match proptest::string::string_regex(&loose) {
            Ok(s) => s.boxed(),
            Err(_) => random.clone(),
        };
        let cased = (produced, prop::collection::vec(any::<bool>(), 16)).prop_map(|(t, up)| {
            t.chars()
                .enumerate()
                .map(|(i, c)| {
                    if up[i % 16] {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect::<String>()
        });
        prop::collection::vec(prop_oneof![cased, random], 1..24).boxed()
    }

    fn check(p: &str, texts: &[String]) -> Result<usize, TestCaseError> {
        let re = compile(p).expect("compiles");
        let Some(words) = all_required(p) else {
            return Ok(0);
        };
        let words: Vec<Vec<u8>> = words.into_iter().collect();
        let mut matched = 0;
        for text in texts {
            if re.is_match(text) {
                matched += 1;
                prop_assert!(
                    admits(text, &words),
                    "{p:?} matches {text:?} without {words:?}"
                );
            }
        }
        Ok(matched)
    }

    fn builtin_patterns() -> Vec<&'static str> {
        crate::label::builtin::RULES
            .iter()
            .flat_map(|r| [r.error, r.tool, r.except_tool, r.termination])
            .flatten()
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000))]
        /// The one-way promise: whenever a random pattern matches a text, one of its words is in it.
        #[test]
        fn a_match_contains_a_word((p, texts) in pattern()
            .prop_filter("compiles", |p| compile(p).is_some())
            .prop_flat_map(|p| { let t = texts(&p); (Just(p), t) })) {
            check(&p, &texts)?;
        }

        /// The built-in table's patterns keep the promise on texts their own language produces.
        #[test]
        fn builtin_patterns_keep_the_promise((p, texts) in prop::sample::select(builtin_patterns())
            .prop_flat_map(|p| (Just(p), texts(p)))) {
            check(p, &texts)?;
        }
    }

    /// Texts that match through the parts this reading cannot see into.
    #[test]
    fn matches_through_opaque_parts() {
        let cases = [
            (r"ab\dcd", "AB1cd"),
            (r"ab\wcd", "ab_cd"),
            (r"ab\scd", "ab\tcd"),
            ("ab.cd", "abxcd"),
            ("[^a]bcd", "xBCD"),
            ("x(ab)?cd", "xcd"),
            ("(ab)*cde", "cde"),
            ("ab{2}c", "abbc"),
            ("ab{0}cd", "acd"),
            ("ab+c", "abbbc"),
            ("(ab|cd)+ef", "abcdef"),
            ("a\u{e9}bc", "a\u{e9}bc"),
            ("a[x\u{e9}]bc", "a\u{e9}bc"),
            ("[a-c]{3}", "cab"),
            ("^$|abc", ""),
            ("caf\u{e9}", "CAF\u{e9}"),
        ];
        for (p, text) in cases {
            assert!(compile(p).unwrap().is_match(text), "{p:?} on {text:?}");
            check(p, &[text.to_string()]).unwrap();
        }
    }

    /// The texts the properties draw do match their patterns often (the promise is tested, not
    /// vacuous).
    #[test]
    fn the_properties_see_matches() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let mut matched = 0;
        for p in builtin_patterns() {
            let t = texts(p).new_tree(&mut runner).unwrap().current();
            matched += check(p, &t).unwrap();
        }
        assert!(matched > 100, "{matched}");
    }
}
