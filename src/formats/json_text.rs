//! An optional JSON value carried as its text, for a serde form that is not self-describing
//! (postcard, between the browser's workers), which cannot carry a `serde_json::Value`.
//!
//! The text reads back to the same `Value`: strings and integers exactly, and floats too, since
//! serde_json prints the shortest text that reads back to the same `f64` and is built with
//! `float_roundtrip`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub(crate) fn serialize<S: Serializer>(value: &Option<Value>, s: S) -> Result<S::Ok, S::Error> {
    value.as_ref().map(Value::to_string).serialize(s)
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    text.map(|t| serde_json::from_str(&t).map_err(serde::de::Error::custom))
        .transpose()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        v: Option<serde_json::Value>,
    }

    #[test]
    fn values_read_back_the_same_through_postcard() {
        let values = [
            None,
            Some(json!(null)),
            Some(
                json!({"a": [1, -2, 18446744073709551615u64, 0.1, 1e300, 2.5e-308, 1.0],
                        "b\u{e9}\n\"": {"": true}}),
            ),
            Some(json!(0.30000000000000004)),
            Some(json!("\u{1f600}\\u0000")),
        ];
        for v in values {
            let h = Holder { v };
            let bytes = postcard::to_allocvec(&h).unwrap();
            assert_eq!(postcard::from_bytes::<Holder>(&bytes).unwrap(), h);
        }
    }
}
