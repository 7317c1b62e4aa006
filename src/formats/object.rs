//! Shared by the formats' wire types: ids written as strings or integers, and reading one JSON
//! object of a format with a located error.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// A task or simulation id: a string, or an integer meaning its decimal text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Id(pub String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Id, E> {
                Ok(Id(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A serde error with the path of the offending field.
/// Reads one JSON object of a format into its wire type `T`: an array is refused (serde would
/// read it into the struct by position, turning `[1, 0, 1.0, {}, []]` into a result), a bad
/// field is named by its path, and nothing may follow the object.
pub(crate) fn read_object<'de, T: Deserialize<'de>>(
    bytes: &'de [u8],
    what: &str,
) -> Result<T, String> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(format!("expected {what} (a JSON object)"));
    }
    // Read without tracking the path first (tracking it costs an allocation per key); only a
    // failure is read again with it, for the message. Tracking the path changes nothing else.
    // The worker's wasm too: the second deserializer of each wire type costs it 89 KB, and
    // sparing the path saves 0.3 s of the 15-run leaderboard archive's 4.5 (#28).
    let mut de = serde_json::Deserializer::from_slice(bytes);
    if let Ok(value) = T::deserialize(&mut de) {
        if de.end().is_ok() {
            return Ok(value);
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(json_error)?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// The JSON object at the start of `bytes` read into `T`, and its length, when it reads without
/// error: what [`read_object`] gives for exactly those bytes (`None`: nothing is said, read
/// the object's bytes with `read_object` for its error).
pub(crate) fn read_object_prefix<'de, T: Deserialize<'de>>(bytes: &'de [u8]) -> Option<(T, usize)> {
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, values.byte_offset()))
}

pub(crate) fn json_error(e: serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = e.path().to_string();
    let inner = e.into_inner();
    if path == "." || path.is_empty() || inner.is_syntax() || inner.is_eof() {
        inner.to_string()
    } else {
        format!("{path}: {inner}")
    }
}
