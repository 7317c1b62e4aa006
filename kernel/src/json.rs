//! The structural scan of whole JSON documents at its innermost: where a value ends, found by
//! tracking strings (with escapes) and bracket depth only. Every document the readers take
//! whole runs through [`value_end`] once (prefix-exec's `formats::scan` builds the members and
//! elements of a document on it); in the browser that is most of what a pool worker does
//! besides inflating, hence its place in this crate (opt-level 3 in the worker, see the crate
//! documentation).

use std::fmt;

/// Why the scan stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanError {
    /// The buffer ended inside a value: the file is truncated.
    Truncated,
    /// A byte that cannot appear here.
    Unexpected {
        at: usize,
        found: u8,
        expected: &'static str,
    },
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanError::Truncated => {
                f.write_str("the file ends in the middle of a JSON value (is it truncated?)")
            }
            ScanError::Unexpected {
                found, expected, ..
            } => write!(
                f,
                "found {:?} where {expected} was expected",
                *found as char
            ),
        }
    }
}

/// Index of the first byte at or after `i` that is not JSON whitespace.
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    // An indented document's whitespace comes in runs of spaces: eight at a time first.
    while b.get(i..i + 8).is_some_and(|w| w == b"        ") {
        i += 8;
    }
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The first byte at or after `i` that opens or closes a string, an object or an array (`"`,
/// `{`, `}`, `[`, `]`): all that a container's scan looks at outside strings. Eight bytes at a
/// time (the bytes between those — indentation, colons, commas, numbers, literals — are most of
/// an indented document outside its strings), then the byte itself.
fn next_structural(b: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Non-zero iff some byte of `w` equals `c` (the classic zero-byte test on `w ^ c…c`).
    let has = |w: u64, c: u8| {
        let x = w ^ (ONES * u64::from(c));
        x.wrapping_sub(ONES) & !x & HIGH
    };
    while let Some(Ok(word)) = b.get(i..i + 8).map(<[u8; 8]>::try_from) {
        let w = u64::from_le_bytes(word);
        // `[` and `]` are `{` and `}` with bit 5 clear, and no other byte sets to them.
        let folded = w | (ONES * 0x20);
        if (has(w, b'"') | has(folded, b'{') | has(folded, b'}')) != 0 {
            break;
        }
        i += 8;
    }
    let rest = b.get(i..)?;
    rest.iter()
        .position(|&c| matches!(c, b'"' | b'{' | b'}' | b'[' | b']'))
        .map(|k| i + k)
}

/// The end (exclusive) of the JSON value starting at `i` (which must not be whitespace).
pub fn value_end(b: &[u8], i: usize) -> Result<usize, ScanError> {
    let Some(&first) = b.get(i) else {
        return Err(ScanError::Truncated);
    };
    match first {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while let Some(k) = next_structural(b, j) {
                match b[k] {
                    b'"' => {
                        j = string_end(b, k)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(k + 1);
                        }
                    }
                }
                j = k + 1;
            }
            Err(ScanError::Truncated)
        }
        b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            Ok(j)
        }
        found => Err(ScanError::Unexpected {
            at: i,
            found,
            expected: "a JSON value",
        }),
    }
}

/// The end (exclusive) of the string whose opening quote is at `i`.
pub fn string_end(b: &[u8], i: usize) -> Result<usize, ScanError> {
    let mut j = i + 1;
    // Jumps from quote or backslash to the next (memchr's vectorised search): most of a log's
    // bytes are inside strings, and this scan runs over every document read.
    while let Some(k) = b
        .get(j..)
        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
    {
        j += k;
        if b[j] == b'"' {
            return Ok(j + 1);
        }
        j += 2;
    }
    Err(ScanError::Truncated)
}
